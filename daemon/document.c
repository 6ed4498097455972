/* SPDX-License-Identifier: MIT */
/*
 * Manager.GetDocument(s verb, a{sv} options) -> s: the document of one of amdsmi(1)'s read
 * verbs, so that `amdsmi VERB` asks amdsmid instead of reading the GPUs again (ARCHITECTURE §4:
 * every gpu_metrics read costs the SMU time, a partition file may wake the GPU).
 *
 *   verb     list, static, metric, metric-ecc (`amdsmi metric -e`), partition, power,
 *            sriov, ras, ras-cper (`amdsmi ras --cper`), bad-pages, health or apply
 *            (`amdsmi apply --check`: the plan of amdsmid.conf, fleet/dbus-profile.c),
 *            topology (the GPU and partition pairs, topology/topology-json.c)
 *   options  "gpus" (as): the -g selectors as amdsmi(1) takes them ("0", "0.3",
 *            "0000:c1:00.0", "all"); none: every GPU
 *
 * The answer is the amdsmi/1 document `amdsmi VERB --json --direct` prints, built by the same
 * code (core/'s documents, the slices' through struct slice.document_gpus) over amdsmid's
 * context: metric and power from the sampler's samples (so the limiters are known at once),
 * power from amdsmid's model of the sources. What amdsmi prints on stderr beside a table goes
 * into "notes" (amdsmi prints them and leaves the key out). A GPU under a change is not read
 * (its partition files wait until the change ends): it gets an "errors" entry instead, except
 * in metric and power, which read no partition file.
 *
 * Manager.GetDocumentText(s verb, a{sv} options) -> (s text, as notes): the same document as
 * the text `amdsmi VERB --json` prints (json_document_text(), without the final newline), its
 * notes apart: amdsmi writes the text out as it is, without parsing and printing 30 KiB of
 * JSON again (most of the time of a read through amdsmid).
 *
 * Errors: InvalidArgument for an unknown verb, option or option type, or a malformed
 * selector; NotFound, with the message amdsmi prints, for a selector that names no GPU.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "amdsmid.h"
#include "daemon-metrics.h"
#include "doctor.h"
#include "documents.h"
#include "gpu-set.h"
#include "health-json.h"
#include "json-util.h"
#include "process-json.h"
#include "report.h"
#include "select.h"
#include "topology-json.h"

/* GetDocument's options: "gpus" (as), the -g selectors. */
static int read_option(sd_bus_message *m, const char *key, void *userdata, sd_bus_error *error) {
        struct selection *sel = userdata;
        int r;

        if (strcmp(key, "gpus") != 0)
                return bus_error_errno(error, -EINVAL, "%s: unknown option '%s' (options: gpus)",
                                       sd_bus_message_get_member(m), key);
        if (sd_bus_message_verify_type(m, 'v', "as") <= 0 ||
            sd_bus_message_enter_container(m, 'v', "as") < 0)
                return bus_error_errno(error, -EINVAL,
                                       "%s: option 'gpus' must be an array of strings (as)",
                                       sd_bus_message_get_member(m));
        r = sd_bus_message_enter_container(m, 'a', "s");
        if (r < 0)
                return r;
        for (;;) {
                const char *s;

                r = sd_bus_message_read(m, "s", &s);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = selection_add(sel, s);
                if (r == -ENOMEM)
                        return bus_error_errno(error, r, "out of memory");
                if (r < 0)
                        return bus_error_errno(error, -EINVAL,
                                               "invalid GPU selection '%s': expected N, N.P, a "
                                               "PCI address, a unique id or all, separated by "
                                               "commas",
                                               s);
        }
        return sd_bus_message_exit_container(m); /* a */
}

/* list, static, partition, sriov: a GPU under a change is left out with an "errors" entry. */
static void skip_changing(struct daemon *d, struct gpu_set *set, struct report *rep) {
        FOREACH_GPU_IN_SET(set, i, gpu) {
                struct dgpu *g = manager_find_gpu(d, amdsmi_gpu_get_bdf(gpu));

                if (!g || g->busy == 0)
                        continue;
                set->matches[i].selected = false;
                report_field_error_msg(rep, (int) i, "gpu", -EBUSY,
                                       "a change of this GPU is under way (amdsmid); its "
                                       "values follow when it ends");
        }
}

/* How long after a GPU came or went a -g N that names another GPU than before is noted. */
#define INDEX_NOTE_USEC (UINT64_C(3600) * 1000000)

/* -g N of a new call that names another GPU than N did before the last enumeration that
 * moved the indexes (a GPU came or went, in the last hour): a note, since a script or an
 * operator may still mean the old one. */
void note_moved_indexes(struct daemon *d, const struct selection *sel, struct report *rep) {
        size_t n_before = strv_length(d->index_before), n = amdsmi_ctx_get_gpu_count(d->ctx);
        char when[40] = "";

        if (n_before == 0 || now_usec(CLOCK_MONOTONIC) - d->index_changed_usec > INDEX_NOTE_USEC)
                return;
        (void) format_timestamp(&d->index_changed_at, when, sizeof(when));
        for (size_t k = 0; k < sel->n_items; k++) {
                const struct selector *s = &sel->items[k];
                struct amdsmi_gpu *gpu;

                if (s->kind != SELECTOR_INDEX || s->index >= n_before)
                        continue;
                gpu = s->index < n ? amdsmi_ctx_get_gpu(d->ctx, s->index) : NULL;
                if (gpu && strcmp(amdsmi_gpu_get_bdf(gpu), d->index_before[s->index]) == 0)
                        continue;
                if (gpu)
                        report_note(rep,
                                    "GPU %u is %s since %s; before, it was %s (GPUs came or "
                                    "went: -g with a PCI address or unique id always "
                                    "names the same GPU)",
                                    s->index, amdsmi_gpu_get_bdf(gpu), when,
                                    d->index_before[s->index]);
                else
                        report_note(rep,
                                    "GPU %u was %s until %s; it is gone (-g with a PCI "
                                    "address or unique id always names the same GPU)",
                                    s->index, d->index_before[s->index], when);
        }
}

enum {
        DOC_SAMPLES = 1u << 0, /* the sampler's samples must be fresh first (limiters) */
        DOC_SKIP_CHANGING = 1u << 1,
        DOC_PRIVILEGED = 1u << 2, /* has root-only parts (HEALTH_READ_PRIVILEGED_ACTION) */
        DOC_APPLY = 1u << 3,      /* no "gpus": the plan of amdsmid.conf (fleet/dbus-profile.c) */
        DOC_PROCESSES = 1u << 4,  /* the KFD processes (PROCESS_LIST_ACTION for others') */
};

struct doc_verb {
        const char *verb;
        unsigned flags;
        doc_gpu_fn gpu_fn;         /* core/'s documents */
        const struct slice *slice; /* else the slice's document_gpus */
        const char *command;       /* the document's "command" (NULL: @verb) */
        /* else the whole document, not one object per GPU (topology: the pairs of GPUs) */
        json_object *(*document)(const struct doc_query *q);
};

static const struct doc_verb doc_verbs[] = {
        { "list", DOC_SKIP_CHANGING, list_gpu, NULL },
        { "static", DOC_SKIP_CHANGING, static_gpu, NULL },
        { "metric", DOC_SAMPLES, metric_gpu, NULL },
        { "metric-ecc", DOC_SAMPLES, metric_ecc_gpu, NULL, "metric" }, /* amdsmi metric -e */
        { "partition", DOC_SKIP_CHANGING, NULL, &partition_slice },
        { "power", DOC_SAMPLES, NULL, &power_slice },
        { "sriov", DOC_SKIP_CHANGING, NULL, &sriov_slice },
        { "ras", 0, ras_gpu, NULL },
        { "ras-cper", DOC_PRIVILEGED, cper_gpu, NULL, "ras" }, /* amdsmi ras --cper */
        { "bad-pages", DOC_PRIVILEGED, bad_pages_gpu, NULL },
        { "health", 0, NULL, &health_slice },
        { "apply", DOC_APPLY, NULL, NULL }, /* amdsmi apply --check */
        { "process", DOC_PROCESSES, process_gpu, NULL },
        { "topology", 0, NULL, NULL, NULL, topology_document },
        { "doctor", DOC_PRIVILEGED, NULL, NULL, NULL, doctor_document }, /* Manager.Doctor */
};

/*
 * The root-only parts of a document (CPER records, the bad-page threshold): amdsmid reads them
 * as root; a caller other than root gets them when polkit allows it
 * HEALTH_READ_PRIVILEGED_ACTION, else the rest of the document with those parts said as
 * needing root, as amdsmi(1) says them without root. polkit answers later: the answer waits
 * here for the call's replay (main thread only).
 */
#define HEALTH_READ_PRIVILEGED_ACTION "org.amdsmi1.health.read-privileged"
/* Other users' processes (the process document): without it, the caller's own */
#define PROCESS_LIST_ACTION "org.amdsmi1.process.list"

struct privileged_answer {
        sd_bus_message *call;
        bool allowed;
        struct privileged_answer *next;
};

static struct privileged_answer *privileged_answers;

/* The answer for @m, removed (-ENOENT: none yet). @return 1 allowed, 0 not. */
static int privileged_answer_take(sd_bus_message *m) {
        for (struct privileged_answer **a = &privileged_answers; *a; a = &(*a)->next)
                if ((*a)->call == m) {
                        struct privileged_answer *x = *a;
                        int r = x->allowed;

                        *a = x->next;
                        sd_bus_message_unref(x->call);
                        free(x);
                        return r;
                }
        return -ENOENT;
}

struct privileged_query {
        struct daemon *d;
        sampler_reply_fn again;
        const char *action;
};

static void privileged_done(sd_bus_message *call, int r, const char *why, void *userdata) {
        struct privileged_query *pq = userdata;
        struct privileged_answer *a = calloc(1, sizeof(*a));
        sd_bus_error error = SD_BUS_ERROR_NULL;

        if (!a) {
                (void) sd_bus_reply_method_errno(call, ENOMEM, NULL);
                return;
        }
        if (r < 0)
                log_debug("polkit check of %s: %s", pq->action, strerror(-r));
        a->call = sd_bus_message_ref(call);
        a->allowed = r == 1;
        a->next = privileged_answers;
        privileged_answers = a;
        r = pq->again(call, pq->d, &error);
        if (r < 0 || sd_bus_error_is_set(&error))
                (void) sd_bus_reply_method_error(call, &error);
        sd_bus_error_free(&error);
        (void) privileged_answer_take(call); /* when the replay failed before taking it */
}

/* 1: @m's caller (its uid into *@ret_uid) is root or polkit allows it @action, 0: not, 2:
 * polkit is asked (@again follows with @m), or a negative errno. */
static int privileged_allowed(struct daemon *d, sd_bus_message *m, const char *action,
                              sampler_reply_fn again, uid_t *ret_uid) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        struct privileged_query *pq;
        uid_t uid;
        int r;

        r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT, &creds);
        if (r >= 0)
                r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return r;
        *ret_uid = uid;
        r = privileged_answer_take(m);
        if (r >= 0)
                return r;
        if (uid == 0)
                return 1;
        pq = malloc(sizeof(*pq));
        if (!pq)
                return -ENOMEM;
        *pq = (struct privileged_query){ d, again, action };
        r = polkit_check(d, m, action, privileged_done, pq, free);
        if (r < 0) {
                free(pq);
                return r;
        }
        return 2;
}

static const struct doc_verb *find_verb(const char *verb) {
        for (size_t i = 0; i < ELEMENTSOF(doc_verbs); i++)
                if (strcmp(doc_verbs[i].verb, verb) == 0)
                        return &doc_verbs[i];
        return NULL;
}

/* `amdsmi list` of every GPU: Describe()'s cached document without what only amdsmid adds
 * (a GPU under change keeps its entry of the last document). */
static bool all_gpus_ok(struct daemon *d) {
        for (size_t i = 0; i < amdsmi_ctx_get_gpu_count(d->ctx); i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(d->ctx, i);

                if (gpu && gpu_state_read(gpu) != GPU_STATE_OK)
                        return false;
        }
        return true;
}

static int list_from_describe(struct daemon *d, json_object **ret, sd_bus_error *error) {
        json_object *doc, *gpus;
        const char *s;
        int r;

        r = manager_describe(d, &s);
        if (r < 0)
                return bus_error_errno(error, r, "cannot describe the GPUs: %s", strerror(-r));
        doc = json_tokener_parse(s);
        if (!doc)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        json_object_object_del(doc, "daemon");
        if (json_object_object_get_ex(doc, "gpus", &gpus))
                for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                        json_object_object_del(json_object_array_get_idx(gpus, i), "object_path");
                        json_object_object_del(json_object_array_get_idx(gpus, i), "changing");
                }
        *ret = doc;
        return 0;
}

/*
 * The document of @v for the GPUs of @sel (empty: every GPU), its notes apart, once the
 * sampler's samples and the caller's privileges are settled: @samples, take them from the
 * sampler (DOC_SAMPLES); @unprivileged, the root-only parts said as needing root;
 * @collection, for the Prometheus families: nothing read through a device node, and what
 * amdsmid keeps from its periodic check rather than a fresh read (struct doc_query).
 * @return 0 with *@ret_doc and *@ret_notes (an array, or NULL: none), or a negative errno with
 * @error set.
 */
static int build_verb(struct daemon *d, const struct doc_verb *v, struct selection *sel,
                      bool unprivileged, uid_t uid, bool collection, json_object **ret_doc,
                      json_object **ret_notes, sd_bus_error *error) {
        struct amdsmi_process_list *processes = NULL;
        struct report rep = { .keep_field_errors = true, .keep_notes = true };
        struct gpu_set set = {};
        struct doc_query q = { .report = &rep,
                               .set = &set,
                               .unprivileged = unprivileged,
                               .no_device_nodes = collection,
                               .cached = collection,
                               .ras_sample = health_daemon_ras_sample,
                               .ras_sample_userdata = d,
                               .doctor_daemon = 1,
                               .doctor_config = d->config,
                               .doctor_plan = doctor_daemon_plan,
                               .doctor_userdata = d };
        json_object *gpus = NULL;
        int r;

        if (v->flags & DOC_SAMPLES) {
                sampler_use(d);
                q.samples = sampler_samples(d);
                q.samples_max_age_usec = sampler_interval_usec(d);
                q.power_limit = power_daemon_limit;
                q.power_limit_userdata = d;
        }
        rep.command = v->command ?: v->verb;
        snprintf(rep.hostname, sizeof(rep.hostname), "%s", d->hostname);
        report_begin_sample(&rep);
        note_moved_indexes(d, sel, &rep);
        r = gpu_set_resolve(&set, d->ctx, sel, &rep, 0);
        if (r < 0) {
                /* with the note of a GPU that went: why -g N names nothing now */
                json_object *note = rep.notes ? json_object_array_get_idx(rep.notes, 0) : NULL;

                r = bus_error_errno(error, r, "%s%s%s", rep.error_message ?: strerror(-r),
                                    note ? "; " : "", note ? json_object_get_string(note) : "");
                goto finish;
        }
        if (v->flags & DOC_SKIP_CHANGING)
                skip_changing(d, &set, &rep);
        if (v->flags & DOC_APPLY) {
                *ret_doc = report_document(&rep, NULL);
                r = *ret_doc ? fleet_daemon_apply_document(d, &set, *ret_doc) : -ENOMEM;
                if (r < 0) {
                        json_object_put(*ret_doc);
                        *ret_doc = NULL;
                        r = bus_error_errno(error, r, "out of memory");
                        goto finish;
                }
                *ret_notes = TAKE_PTR(rep.notes);
                r = 0;
                goto finish;
        }
        if (v->flags & DOC_PROCESSES) {
                r = process_read(&rep, d->ctx, &processes);
                if (r < 0) {
                        r = bus_error_errno(error, r, "%s", rep.error_message ?: strerror(-r));
                        goto finish;
                }
                q.processes = processes;
                q.processes_own_only = unprivileged;
                q.processes_uid = (uint32_t) uid;
                if (unprivileged)
                        report_note(&rep, "showing only your own processes: polkit did not "
                                          "allow " PROCESS_LIST_ACTION);
        }
        if (v->document) {
                if (unprivileged && (v->flags & DOC_PRIVILEGED))
                        report_note(
                                &rep,
                                "the root-only parts (the bad-page thresholds) are "
                                "not given: polkit did not allow " HEALTH_READ_PRIVILEGED_ACTION);
                *ret_doc = v->document(&q);
                if (!*ret_doc) {
                        r = bus_error_errno(error, -ENOMEM, "%s",
                                            rep.error_message ?: "out of memory");
                        goto finish;
                }
                *ret_notes = TAKE_PTR(rep.notes);
                r = 0;
                goto finish;
        }
        if (v->gpu_fn)
                r = doc_collect(&q, v->gpu_fn, &gpus);
        else
                r = v->slice->document_gpus(d, &q, &gpus);
        if (r < 0) {
                r = bus_error_errno(error, r, "%s", rep.error_message ?: strerror(-r));
                goto finish;
        }
        *ret_doc = report_document(&rep, gpus);
        if (!*ret_doc) {
                r = bus_error_errno(error, -ENOMEM, "out of memory");
                goto finish;
        }
        *ret_notes = TAKE_PTR(rep.notes);
        r = 0;
finish:
        amdsmi_process_list_free(processes);
        gpu_set_clear(&set);
        report_clear(&rep);
        return r;
}

int document_build_all(struct daemon *d, const char *verb, json_object **ret) {
        _cleanup_(selection_clear) struct selection sel = {};
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const struct doc_verb *v = find_verb(verb);
        json_object *doc = NULL, *notes = NULL;
        int r;

        if (!v)
                return -EINVAL;
        if (strcmp(v->verb, "list") == 0 && all_gpus_ok(d))
                r = list_from_describe(d, &doc, &error);
        else
                r = build_verb(d, v, &sel, false, 0, true, &doc, &notes, &error);
        sd_bus_error_free(&error);
        if (r < 0)
                return r;
        if (notes)
                json_object_object_add(doc, "notes", notes);
        *ret = doc;
        return 0;
}

/*
 * The document the call @m asks for (GetDocument's and GetDocumentText's arguments), its notes
 * apart. @return 0 with *@ret_doc and *@ret_notes (an array, or NULL: none); 1 when the sampler
 * calls @again with @m once its samples are fresh; a negative errno with @error set.
 */
static int build_document(struct daemon *d, sd_bus_message *m, sampler_reply_fn again,
                          json_object **ret_doc, json_object **ret_notes, sd_bus_error *error) {
        _cleanup_(selection_clear) struct selection sel = {};
        const struct doc_verb *v;
        const char *verb;
        int r;

        /* the sampler may call again with the same message, once the samples are there */
        r = sd_bus_message_rewind(m, true);
        if (r >= 0)
                r = sd_bus_message_read(m, "s", &verb);
        if (r < 0)
                return r;
        v = find_verb(verb);
        if (!v)
                return bus_error_errno(error, -EINVAL,
                                       "%s: unknown verb '%s' (verbs: list, static, metric, "
                                       "partition, power, sriov, metric-ecc, ras, ras-cper, "
                                       "bad-pages, health, apply, process, topology)",
                                       sd_bus_message_get_member(m), verb);
        r = bus_read_options(m, read_option, &sel, error);
        if (r < 0)
                return r;
        return document_build_for(d, m, v, &sel, again, ret_doc, ret_notes, error);
}

int document_build_for(struct daemon *d, sd_bus_message *m, const struct doc_verb *v,
                       struct selection *sel, sampler_reply_fn again, json_object **ret_doc,
                       json_object **ret_notes, sd_bus_error *error) {
        bool unprivileged = false;
        uid_t uid = 0;
        int r;

        /* Describe() is rebuilt on events: a GPU that went into reset or lost its driver
         * since is read afresh (one pm read per GPU tells) */
        if (strcmp(v->verb, "list") == 0 && sel->n_items == 0 && all_gpus_ok(d)) {
                *ret_notes = NULL;
                return list_from_describe(d, ret_doc, error);
        }
        if (v->flags & DOC_SAMPLES) {
                r = sampler_prepare(d, m, NULL, again);
                if (r != 0)
                        return r < 0 ? bus_error_errno(error, r, "out of memory") : 1;
        }

        if (v->flags & (DOC_PRIVILEGED | DOC_PROCESSES)) {
                r = privileged_allowed(d, m,
                                       v->flags & DOC_PROCESSES ? PROCESS_LIST_ACTION
                                                                : HEALTH_READ_PRIVILEGED_ACTION,
                                       again, &uid);
                if (r < 0)
                        return bus_error_errno(error, r, "cannot check the caller: %s",
                                               strerror(-r));
                if (r == 2)
                        return 1;
                unprivileged = r == 0;
        }
        return build_verb(d, v, sel, unprivileged, uid, false, ret_doc, ret_notes, error);
}

const struct doc_verb *document_find_verb(const char *verb) {
        return find_verb(verb);
}

static int method_get_document(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        json_object *doc = NULL, *notes = NULL;
        int r;

        r = build_document(userdata, m, method_get_document, &doc, &notes, error);
        if (r != 0)
                return r;
        if (notes)
                json_object_object_add(doc, "notes", notes);
        return bus_reply_json(m, doc);
}

/* GetDocumentText: (s text, as notes), the text as `amdsmi VERB --json` prints it (without the
 * final newline), so that amdsmi writes it out without parsing and printing it again. */
/* Whether @m asks GetDocumentText for "metric" of every GPU (no options): the document
 * served again for METRICS_MAX_AGE_USEC. */
static bool is_metric_of_all(sd_bus_message *m) {
        const char *verb;
        bool all;

        if (sd_bus_message_rewind(m, true) < 0 || sd_bus_message_read(m, "s", &verb) < 0 ||
            strcmp(verb, "metric") != 0 || sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return false;
        all = sd_bus_message_at_end(m, false) > 0;
        (void) sd_bus_message_rewind(m, true);
        return all;
}

static int reply_text(sd_bus_message *m, const char *text, char **notes) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = bus_append_text(reply, text);
        if (r >= 0)
                r = sd_bus_message_append_strv(reply, notes);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}

/*
 * GetDocumentText("prometheus" or "openmetrics", no options): what /metrics answers, the
 * rendering amdsmid keeps (fleet/daemon-metrics.c), for amdsmi metric --prometheus. @return 1
 * when @m asks for it (answered), 0 when it does not, or a negative errno with @error set.
 */
static int prometheus_text(struct daemon *d, sd_bus_message *m, sd_bus_error *error) {
        enum metrics_format f;
        const char *verb, *text = NULL;
        int r;

        if (sd_bus_message_rewind(m, true) < 0 || sd_bus_message_read(m, "s", &verb) < 0)
                return 0;
        if (strcmp(verb, "prometheus") == 0)
                f = METRICS_FORMAT_TEXT;
        else if (strcmp(verb, "openmetrics") == 0)
                f = METRICS_FORMAT_OPENMETRICS;
        else {
                (void) sd_bus_message_rewind(m, true);
                return 0;
        }
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r >= 0 && sd_bus_message_at_end(m, false) <= 0)
                return bus_error_errno(error, -EINVAL,
                                       "GetDocumentText: %s takes no options: it is every GPU's, "
                                       "as /metrics answers",
                                       verb);
        r = daemon_metrics_get(d, f, &text, NULL, NULL);
        if (r < 0)
                return bus_error_errno(error, r, "cannot render the metrics: %s", strerror(-r));
        r = reply_text(m, text, NULL);
        return r < 0 ? r : 1;
}

static int method_get_document_text(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        _cleanup_strv_free_ char **note_list = NULL;
        json_object *doc = NULL, *notes = NULL;
        const char *text;
        bool cache = is_metric_of_all(m);
        int r;

        r = prometheus_text(d, m, error);
        if (r != 0)
                return r < 0 ? r : 1;

        if (cache && d->metric_text &&
            now_usec(CLOCK_MONOTONIC) - d->metric_text_usec < METRICS_MAX_AGE_USEC) {
                sampler_use(d);
                return reply_text(m, d->metric_text, d->metric_text_notes);
        }
        r = build_document(d, m, method_get_document_text, &doc, &notes, error);
        if (r != 0)
                return r;
        text = json_document_text(doc, false);
        r = text ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && notes && i < json_object_array_length(notes); i++)
                r = strv_extend(&note_list,
                                json_object_get_string(json_object_array_get_idx(notes, i)));
        if (r >= 0 && cache) {
                /* kept for the next calls; when out of memory, only not kept */
                char *copy = strdup(text);
                char **copy_notes = NULL;
                bool ok = copy != NULL;

                for (char **n = note_list; ok && n && *n; n++)
                        ok = strv_extend(&copy_notes, *n) >= 0;
                free(d->metric_text);
                strv_free(d->metric_text_notes);
                d->metric_text = ok ? copy : NULL;
                d->metric_text_notes = ok ? copy_notes : NULL;
                d->metric_text_usec = now_usec(CLOCK_MONOTONIC);
                if (!ok) {
                        free(copy);
                        strv_free(copy_notes);
                }
        }
        if (r >= 0)
                r = reply_text(m, text, note_list);
        json_object_put(doc);
        json_object_put(notes);
        return r;
}

const sd_bus_vtable document_manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("GetDocument", SD_BUS_ARGS("s", verb, "a{sv}", options),
                                SD_BUS_RESULT("s", json), method_get_document,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetDocumentText", SD_BUS_ARGS("s", verb, "a{sv}", options),
                                SD_BUS_RESULT("s", text, "as", notes), method_get_document_text,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};
