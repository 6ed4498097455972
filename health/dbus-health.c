/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's org.amdsmi1.Health interface on every GPU object (ARCHITECTURE §6; issue 19):
 * the health verdict as properties that emit PropertiesChanged (they change rarely), and the
 * signal Event(s kind, s json) for every KFD event, new CPER record and health change.
 *
 * The event stream (health/dbus-health-events.c) hands what it sees to this file through
 * health_daemon_event() and health_daemon_reset_seen().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "amdsmid.h"
#include "documents.h"
#include "gpu-set.h"
#include "health-json.h"
#include "json-util.h"

/*
 * Sampling: every periodic check (poll_interval_ms, 2 s by default) samples each GPU: the RAS
 * counts of every block (one ras/ listing and about 10 small sysfs reads), the retired pages
 * (one sysfs file) and the CPER ring from a cursor (one debugfs read; only the records after
 * the cursor are handed on, so each new record is an Event once). The bad-page threshold
 * (debugfs) changes only with the driver's parameters: read once a minute, and at every check
 * while it fails. One such sample of the eight GPUs of a plain snapshot of the simulated
 * mi300x-8 takes about 0.75 ms (0.55 ms of it the RAS counts; bench-health, median, threshold
 * read every time): 0.04 % of one core at the 2 s period, cheap enough for every check, so a
 * new UE or fatal CPER record shows within one period.
 */
#define HEALTH_THRESHOLD_REREAD_USEC (60 * 1000000ULL)
/* The CE rate is measured over at least this long once amdsmid has run for it: the sample
 * that starts the window is replaced by a newer one only when that one is this old (one CE a
 * second after the previous sample is no rate of 3600 an hour). */
#define HEALTH_CE_WINDOW_USEC (5 * 60 * 1000000ULL)
/* The XGMI links' status comes from gpu_metrics, which costs the SMU a read: at every 30th
 * periodic check of a GPU (once a minute at the default period; the PCIe files and the error
 * counters at every check). */
#define HEALTH_LINKS_METRICS_EVERY 30

struct dgpu_health {
        /* the last GPU reset amdsmid saw (CLOCK_BOOTTIME µs; 0: none) and its cause */
        uint64_t last_reset_usec;
        char *last_reset_cause;
        /* the event stream of this GPU is followed now (resets are known while it is) */
        bool following;
        uint64_t following_since_usec; /* CLOCK_BOOTTIME µs */

        /* the last sample (in.previous is set only while judging) */
        bool sampled;
        struct health_input in;
        /* the CE rate's window: it starts at @base; @mid becomes the base once old enough */
        bool have_base, have_mid;
        struct health_sample base, mid;
        /* the last sample that could be read: a reload is seen across the unbound time */
        bool have_last_ok;
        struct health_sample last_ok;
        uint64_t threshold_usec; /* the last threshold read (CLOCK_MONOTONIC) */
        struct amdsmi_cper_cursor cper_cursor;
        bool cper_primed; /* the records held at start were read */
        /* what the properties say */
        bool judged;
        struct health_verdict verdict;
        uint64_t ue, ce, de; /* AMDSMI_NA: unknown */

        /* links (CLOCK_BOOTTIME µs): the last read, when gpu_metrics was last read for them,
         * when PCIe replays last grew and by how much within the window, and xgmi_error,
         * which clears when read: amdsmid alone reads it and keeps the total */
        bool links_sampled;
        struct health_links links;
        unsigned links_checks; /* checks since gpu_metrics was read for the links */
        uint64_t replays_usec, replays_in_window;
        uint64_t xgmi_error_usec, xgmi_errors_total;
        bool xgmi_error_counted; /* the GPU has the counter (read at least once) */
        bool xgmi_error_warned;
};

static struct dgpu_health *dgpu_health_get(struct dgpu *g) {
        if (!g->health)
                g->health = calloc(1, sizeof(*g->health));
        return g->health;
}

void health_daemon_event(struct dgpu *g, const char *kind, const char *json) {
        int r;

        if (!g->d->bus || !g->path)
                return;
        r = sd_bus_emit_signal(g->d->bus, g->path, AMDSMI_BUS_IFACE_HEALTH, "Event", "ss", kind,
                               json);
        if (r < 0)
                log_gpu(LOG_DEBUG, g->bdf, "cannot emit Health.Event: %s", strerror(-r));
}

void health_daemon_reset_seen(struct dgpu *g, uint64_t boottime_usec, const char *cause) {
        struct dgpu_health *h = dgpu_health_get(g);

        if (!h)
                return;
        h->last_reset_usec = boottime_usec;
        free(h->last_reset_cause);
        h->last_reset_cause = cause ? strdup(cause) : NULL;
}

void health_daemon_following(struct dgpu *g, bool on, uint64_t boottime_usec) {
        struct dgpu_health *h = dgpu_health_get(g);

        if (!h || h->following == on)
                return;
        h->following = on;
        h->following_since_usec = on ? boottime_usec : 0;
}

/* The totals over the readable blocks (AMDSMI_NA when none is; de also when no block
 * counts deferred errors), as health_ecc_json() sums them. */
static void ras_totals(const struct health_sample *smp, uint64_t *ue, uint64_t *ce, uint64_t *de) {
        bool any = false, any_de = false;

        *ue = *ce = *de = 0;
        for (size_t b = 0; smp->error == 0 && b < _AMDSMI_RAS_BLOCK_MAX; b++) {
                const struct amdsmi_ras_count *k = &smp->ras.blocks[b];

                if (k->error != 0)
                        continue;
                any = true;
                *ue += k->ue;
                *ce += k->ce;
                if (k->de != AMDSMI_NA) {
                        *de += k->de;
                        any_de = true;
                }
        }
        if (!any)
                *ue = *ce = AMDSMI_NA;
        if (!any_de)
                *de = AMDSMI_NA;
}

/* A count that went back since the last sample (the driver was reloaded): said in the log,
 * and the CE rate's window starts again at @now (never a negative delta). */
static bool counts_went_back(struct dgpu *g, const struct health_sample *before,
                             const struct health_sample *now) {
        bool back = false;

        if (before->error != 0 || now->error != 0)
                return false;
        for (size_t b = 0; b < _AMDSMI_RAS_BLOCK_MAX; b++) {
                const struct amdsmi_ras_count *p = &before->ras.blocks[b], *k = &now->ras.blocks[b];
                uint64_t d;

                if (p->error != 0 || k->error != 0)
                        continue;
                if (amdsmi_ras_count_delta(p->ue, k->ue, &d) == 1 ||
                    amdsmi_ras_count_delta(p->ce, k->ce, &d) == 1) {
                        log_gpu(LOG_NOTICE, g->bdf,
                                "RAS counts of block %s went back (UE %" PRIu64 " -> %" PRIu64
                                ", CE %" PRIu64 " -> %" PRIu64 "): the driver was reloaded; "
                                "counting again from the reload",
                                amdsmi_ras_block_to_string((enum amdsmi_ras_block) b), p->ue, k->ue,
                                p->ce, k->ce);
                        back = true;
                }
        }
        return back;
}

/* An Event's JSON reads like a KFD event's (health_event_json()): when, which GPU, the kind
 * and one line of text, then what is particular to the kind. */
static const char *event_text(const char *kind, json_object *o, char *buf, size_t size) {
        json_object *v = NULL, *r = NULL, *t = NULL;

        if (strcmp(kind, "health") == 0) {
                json_object_object_get_ex(o, "state", &v);
                json_object_object_get_ex(o, "reasons", &r);
                if (json_object_is_type(r, json_type_array) && json_object_array_length(r) > 0)
                        json_object_object_get_ex(json_object_array_get_idx(r, 0), "text", &t);
                snprintf(buf, size, "health %s%s%s", json_object_get_string(v) ?: "unknown",
                         t ? ": " : "", t ? json_object_get_string(t) : "");
        } else {
                json_object_object_get_ex(o, "severity", &v);
                json_object_object_get_ex(o, "record_id", &r);
                snprintf(buf, size, "CPER record %s (%s)", json_object_get_string(r) ?: "?",
                         json_object_get_string(v) ?: "unknown severity");
        }
        return buf;
}

static void emit_json(struct dgpu *g, const char *kind, json_object *o) {
        struct timespec now;
        char ts[40], text[256];

        if (!o)
                return;
        clock_gettime(CLOCK_REALTIME, &now);
        format_timestamp(&now, ts, sizeof(ts));
        /* a CPER record keeps its own time; else when amdsmid saw it */
        if (!json_object_is_type(json_object_object_get(o, "timestamp"), json_type_string))
                json_object_object_add(o, "timestamp", json_object_new_string(ts));
        json_object_object_add(o, "gpu", json_object_new_int((int) g->index));
        json_object_object_add(o, "bdf", json_object_new_string(g->bdf));
        json_object_object_add(o, "partition", NULL);
        json_object_object_add(o, "kind", json_object_new_string(kind));
        json_object_object_add(o, "text",
                               json_object_new_string(event_text(kind, o, text, sizeof(text))));
        health_daemon_event(g, kind, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
}

/* Reads the CPER records after the cursor: each new one is an Event("cper") (not the records
 * the ring held when amdsmid started); the fatal ones count for the verdict. */
static void sample_cper(struct dgpu *g, struct dgpu_health *h, struct amdsmi_gpu *gpu) {
        struct amdsmi_cper_batch *batch = NULL;
        int r;

        r = amdsmi_gpu_read_cper(gpu, &h->cper_cursor, &batch);
        if (r < 0) {
                if (r != h->in.cper_error && r != -ENODATA)
                        log_gpu(LOG_DEBUG, g->bdf, "cannot read the CPER ring: %s", strerror(-r));
                h->in.cper_error = r;
                return;
        }
        h->in.cper_error = 0;
        if (batch->reloaded) {
                log_gpu(LOG_NOTICE, g->bdf,
                        "the CPER record counters went back: the driver was reloaded");
                h->in.n_cper_fatal = 0;
        }
        if (batch->lost > 0 && h->cper_primed)
                log_gpu(LOG_WARNING, g->bdf,
                        "%" PRIu64 " CPER records were overwritten in the ring before amdsmid "
                        "read them",
                        batch->lost);
        for (size_t i = 0; i < batch->n_records; i++) {
                const struct amdsmi_cper_record *rec = &batch->records[i];

                if (rec->severity == AMDSMI_CPER_SEVERITY_FATAL) {
                        h->in.n_cper_fatal++;
                        snprintf(h->in.cper_fatal_id, sizeof(h->in.cper_fatal_id), "%s",
                                 rec->record_id);
                }
                if (h->cper_primed) {
                        log_gpu(rec->severity == AMDSMI_CPER_SEVERITY_FATAL ? LOG_WARNING
                                                                            : LOG_NOTICE,
                                g->bdf, "CPER record %s (%s)", rec->record_id,
                                amdsmi_cper_severity_to_string(rec->severity));
                        emit_json(g, "cper", health_cper_record_json(rec));
                }
        }
        h->cper_primed = true;
        amdsmi_cper_batch_free(batch);
}

static void sample_bad_pages(struct dgpu_health *h, struct amdsmi_gpu *gpu) {
        struct amdsmi_bad_page *pages = NULL;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int n;

        h->in.n_bad_pages = h->in.n_pending = h->in.n_unreservable = 0;
        n = amdsmi_gpu_read_bad_pages(gpu, &pages);
        h->in.bad_pages_error = n < 0 ? n : 0;
        for (int i = 0; i < n; i++)
                if (pages[i].status == AMDSMI_BAD_PAGE_STATUS_PENDING)
                        h->in.n_pending++;
                else if (pages[i].status == AMDSMI_BAD_PAGE_STATUS_UNRESERVABLE)
                        h->in.n_unreservable++;
        if (n > 0)
                h->in.n_bad_pages = (size_t) n;
        free(pages);
        if (h->threshold_usec == 0 || h->in.threshold_error != 0 ||
            now - h->threshold_usec >= HEALTH_THRESHOLD_REREAD_USEC) {
                h->in.threshold_error = amdsmi_gpu_read_bad_page_threshold(gpu, &h->in.threshold);
                h->threshold_usec = now;
        }
}

/* The links of @g at this check: replays that grew and xgmi_error's errors are kept with
 * their time; a link that went down or came up changes the verdict through the masks. */
static void sample_links(struct dgpu *g, struct dgpu_health *h, struct amdsmi_gpu *gpu) {
        uint64_t now = now_usec(CLOCK_BOOTTIME), before = h->links.pcie_replays;
        bool metrics = !h->links_sampled || ++h->links_checks >= HEALTH_LINKS_METRICS_EVERY;
        enum amdsmi_xgmi_error xe;
        int r;

        (void) health_links_read(gpu, metrics, &h->links);
        if (metrics)
                h->links_checks = 0;
        if (h->links_sampled && before != AMDSMI_NA && h->links.pcie_replays != AMDSMI_NA &&
            h->links.pcie_replays > before) {
                uint64_t window = 0;
                struct health_thresholds t;

                health_thresholds_from_config(g->d->config, &t);
                window = (uint64_t) t.reset_window_minutes * 60u * 1000000u;
                if (h->replays_usec == 0 || now - h->replays_usec >= window)
                        h->replays_in_window = 0;
                h->replays_in_window += h->links.pcie_replays - before;
                h->replays_usec = now;
                log_gpu(LOG_WARNING, g->bdf, "%" PRIu64 " PCIe replays since the last check",
                        h->links.pcie_replays - before);
        }
        h->links_sampled = true;
        /* xgmi_error clears when read: amdsmid alone reads it, and keeps the total. MI300 and
         * MI350 have no such counter (the kernel answers EINVAL), a GPU without XGMI no file */
        r = amdsmi_gpu_read_xgmi_error(gpu, &xe);
        if (r == 0) {
                h->xgmi_error_counted = true;
                if (xe != AMDSMI_XGMI_ERROR_NONE) {
                        /* "multiple" is at least two */
                        h->xgmi_errors_total += xe == AMDSMI_XGMI_ERROR_ONE ? 1 : 2;
                        h->xgmi_error_usec = now;
                        log_gpu(LOG_WARNING, g->bdf, "XGMI %s since the last check",
                                xe == AMDSMI_XGMI_ERROR_ONE ? "error" : "errors");
                }
        } else if (r != -ENOENT && r != -EINVAL && !h->xgmi_error_warned) {
                log_gpu(LOG_WARNING, g->bdf, "cannot read xgmi_error: %s", strerror(-r));
                h->xgmi_error_warned = true;
        }
}

/* The input of the verdict: the last sample, the CE rate's window, the resets known. */
static void judge_input(struct dgpu *g, struct dgpu_health *h, struct health_input *ret) {
        struct health_thresholds t;
        uint64_t now = now_usec(CLOCK_BOOTTIME), window;

        health_thresholds_from_config(g->d->config, &t);
        window = (uint64_t) t.reset_window_minutes * 60u * 1000000u;
        *ret = h->in;
        ret->previous = h->have_base ? &h->base : NULL;
        /* resets are known when the event stream was followed over the whole window, or saw
         * one since it is followed */
        ret->resets_known = h->following && (now - h->following_since_usec >= window ||
                                             h->last_reset_usec >= h->following_since_usec);
        ret->last_reset_age_usec = h->last_reset_usec > 0 && h->last_reset_usec <= now
                                           ? now - h->last_reset_usec
                                           : UINT64_MAX;
        ret->links = h->links;
        ret->link_errors_known = h->links_sampled;
        ret->last_replays_age_usec =
                h->replays_usec > 0 && h->replays_usec <= now ? now - h->replays_usec : UINT64_MAX;
        ret->replays_in_window = h->replays_in_window;
        ret->last_xgmi_error_age_usec = h->xgmi_error_usec > 0 && h->xgmi_error_usec <= now
                                                ? now - h->xgmi_error_usec
                                                : UINT64_MAX;
        ret->xgmi_errors_total = h->xgmi_errors_total;
        ret->xgmi_errors_counted = h->xgmi_error_counted;
}

/* A reason's text that says a time ("reset 40 s ago", "3 CEs in 120 s"): it changes at every
 * check without anything happening, so it is no change of Reasons. */
static bool text_says_time(const char *code) {
        return strcmp(code, "recent_reset") == 0 || strcmp(code, "ce_rate") == 0;
}

/* Whether the verdicts differ in state or in their reasons' codes and severities; with
 * @notes (what Reasons says) also in the info reasons and in the texts (but for the texts that
 * say a time). */
static bool verdict_differs(const struct health_verdict *a, const struct health_verdict *b,
                            bool notes) {
        size_t i = 0, k = 0;

        if (a->state != b->state)
                return true;
        for (;;) {
                while (!notes && i < a->n_reasons && a->reasons[i].severity == HEALTH_SEVERITY_INFO)
                        i++;
                while (!notes && k < b->n_reasons && b->reasons[k].severity == HEALTH_SEVERITY_INFO)
                        k++;
                if (i == a->n_reasons || k == b->n_reasons)
                        return i != a->n_reasons || k != b->n_reasons;
                if (strcmp(a->reasons[i].code, b->reasons[k].code) != 0 ||
                    a->reasons[i].severity != b->reasons[k].severity)
                        return true;
                if (notes && !text_says_time(a->reasons[i].code) &&
                    strcmp(a->reasons[i].text, b->reasons[k].text) != 0)
                        return true;
                i++;
                k++;
        }
}

/* Samples @g and judges it: the properties that changed are appended to @names, a health
 * change is logged (GPU=, HEALTH=) and signalled. @return 0 or -ENOMEM. */
static int health_update(struct dgpu *g, struct amdsmi_gpu *gpu, char ***names) {
        struct dgpu_health *h = dgpu_health_get(g);
        struct health_sample smp;
        struct health_input in;
        struct health_verdict v;
        uint64_t ue, ce, de;
        int r = 0;

        if (!h)
                return -ENOMEM;
        (void) health_sample_read(gpu, &smp);
        if (h->have_last_ok && counts_went_back(g, &h->last_ok, &smp))
                h->have_base = h->have_mid = false;
        if (smp.error == 0) {
                h->last_ok = smp;
                h->have_last_ok = true;
        }
        h->in.now = smp;
        h->in.previous = NULL;
        if (smp.error == 0) {
                if (!h->have_base) {
                        h->base = smp;
                        h->have_base = true;
                } else if (!h->have_mid) {
                        h->mid = smp;
                        h->have_mid = true;
                } else if (smp.usec - h->mid.usec >= HEALTH_CE_WINDOW_USEC) {
                        h->base = h->mid;
                        h->mid = smp;
                }
        }
        sample_bad_pages(h, gpu);
        sample_cper(g, h, gpu);
        sample_links(g, h, gpu);
        h->sampled = true;

        ras_totals(&smp, &ue, &ce, &de);
        if (ue != h->ue || !h->judged)
                r = r < 0 ? r : strv_extend(names, "UncorrectableErrors");
        if (ce != h->ce || !h->judged)
                r = r < 0 ? r : strv_extend(names, "CorrectableErrors");
        if (de != h->de || !h->judged)
                r = r < 0 ? r : strv_extend(names, "DeferredErrors");
        h->ue = ue;
        h->ce = ce;
        h->de = de;

        judge_input(g, h, &in);
        {
                struct health_thresholds t;

                health_thresholds_from_config(g->d->config, &t);
                health_judge(&t, &in, &v);
        }
        /* a health change (the state, or a finding that is no note): logged and signalled */
        if (h->judged ? verdict_differs(&h->verdict, &v, false) : v.state != HEALTH_OK) {
                const char *is = health_state_to_string(v.state);
                char field[32], why[512] = "";
                size_t n = 0;

                for (size_t i = 0; i < v.n_reasons && n < sizeof(why); i++)
                        if (v.reasons[i].severity != HEALTH_SEVERITY_INFO)
                                n += (size_t) snprintf(why + n, sizeof(why) - n, "%s%s",
                                                       n ? "; " : "", v.reasons[i].text);
                snprintf(field, sizeof(field), "HEALTH=%s", is);
                if (h->judged && h->verdict.state != v.state)
                        log_gpu_field(v.state == HEALTH_CRITICAL  ? LOG_CRIT
                                      : v.state == HEALTH_WARNING ? LOG_WARNING
                                                                  : LOG_NOTICE,
                                      g->bdf, field, "health %s -> %s%s%s",
                                      health_state_to_string(h->verdict.state), is,
                                      why[0] ? ": " : "", why);
                else
                        log_gpu_field(v.state == HEALTH_CRITICAL  ? LOG_CRIT
                                      : v.state == HEALTH_WARNING ? LOG_WARNING
                                                                  : LOG_NOTICE,
                                      g->bdf, field, "health %s%s%s", is, why[0] ? ": " : "", why);
                if (h->judged)
                        emit_json(g, "health", health_verdict_json(&v));
        }
        if (!h->judged || verdict_differs(&h->verdict, &v, true)) {
                if (h->judged && v.state != h->verdict.state)
                        r = r < 0 ? r : strv_extend(names, "State");
                if (h->judged)
                        r = r < 0 ? r : strv_extend(names, "Reasons");
                h->verdict = v;
                h->judged = true;
        }
        return r;
}

static char **health_refresh(struct dgpu *g, struct amdsmi_gpu *gpu) {
        char **names = NULL;

        if (health_update(g, gpu, &names) < 0)
                log_gpu(LOG_WARNING, g->bdf, "health: out of memory");
        /* at the first sample nobody can have read the properties yet */
        return names;
}

/* ---- properties -------------------------------------------------------------------------- */

static int property_state(sd_bus *bus, const char *path, const char *interface,
                          const char *property, sd_bus_message *reply, void *userdata,
                          sd_bus_error *error) {
        struct dgpu *g = userdata;

        return sd_bus_message_append(reply, "s",
                                     g->health && g->health->judged
                                             ? health_state_to_string(g->health->verdict.state)
                                             : "unknown");
}

static int property_reasons(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error) {
        struct dgpu *g = userdata;
        const struct health_verdict *v =
                g->health && g->health->judged ? &g->health->verdict : NULL;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sss)");
        for (size_t i = 0; r >= 0 && v && i < v->n_reasons; i++)
                r = sd_bus_message_append(reply, "(sss)", v->reasons[i].code,
                                          health_severity_to_string(v->reasons[i].severity),
                                          v->reasons[i].text);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int property_count(sd_bus *bus, const char *path, const char *interface,
                          const char *property, sd_bus_message *reply, void *userdata,
                          sd_bus_error *error) {
        struct dgpu *g = userdata;
        const struct dgpu_health *h = g->health;
        uint64_t v = AMDSMI_NA;

        if (h && h->judged)
                v = strcmp(property, "UncorrectableErrors") == 0 ? h->ue
                    : strcmp(property, "CorrectableErrors") == 0 ? h->ce
                                                                 : h->de;
        return sd_bus_message_append(reply, "t", v);
}

/* ---- documents ---------------------------------------------------------------------------- */

struct health_doc {
        struct daemon *d;
        const struct doc_query *q;
        struct health_thresholds t;
};

static json_object *health_doc_gpu(void *userdata, size_t index, struct amdsmi_gpu *gpu) {
        struct health_doc *k = userdata;
        struct dgpu *g = manager_find_gpu(k->d, amdsmi_gpu_get_bdf(gpu));
        _cleanup_strv_free_ char **names = NULL;
        struct health_input in;

        if (!g || !g->present) {
                /* a GPU amdsmid has no object for (yet): what the GPU says alone */
                health_input_read(gpu, &in);
                return health_gpu_with(k->q, index, gpu, &k->t, &in);
        }
        /* a fresh sample: the document says what the properties say from now on; a
         * Prometheus collection takes the periodic check's (no read beyond amdsmid's own) */
        if (!k->q->cached || !g->health) {
                if (health_update(g, gpu, &names) < 0)
                        return NULL;
                dgpu_emit_changed(g, AMDSMI_BUS_IFACE_HEALTH, names);
        }
        judge_input(g, g->health, &in);
        return health_gpu_with(k->q, index, gpu, &k->t, &in);
}

int health_daemon_ras_sample(void *userdata, struct amdsmi_gpu *gpu, struct health_sample *ret) {
        struct dgpu *g = manager_find_gpu(userdata, amdsmi_gpu_get_bdf(gpu));

        if (!g || !g->present || !g->health || !g->health->sampled)
                return -ENOENT;
        *ret = g->health->in.now;
        return 0;
}

int health_daemon_document(struct daemon *d, const struct doc_query *q, json_object **ret) {
        struct health_doc k = { d, q };

        health_thresholds_from_config(d->config, &k.t);
        return gpu_set_collect(q->set, q->report, health_doc_gpu, &k, ret);
}

static void health_free_gpu(struct dgpu *g) {
        if (!g->health)
                return;
        free(g->health->last_reset_cause);
        free(g->health);
        g->health = NULL;
}

static const sd_bus_vtable health_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("State", "s", property_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Reasons", "a(sss)", property_reasons, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("UncorrectableErrors", "t", property_count, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("CorrectableErrors", "t", property_count, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("DeferredErrors", "t", property_count, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_SIGNAL_WITH_ARGS("Event", SD_BUS_ARGS("s", kind, "s", json), 0),
        SD_BUS_VTABLE_END,
};

const struct slice health_slice = {
        .interface = AMDSMI_BUS_IFACE_HEALTH,
        .vtable = health_vtable,
        .refresh = health_refresh,
        .refresh_often = true,
        .free_gpu = health_free_gpu,
        .document_gpus = health_daemon_document,
};
