/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "documents.h"
#include "exit-codes.h"
#include "parse-util.h"

_Static_assert(OUTPUT_NA == AMDSMI_NA, "OUTPUT_NA must be the library's AMDSMI_NA");

static void print_line(struct report *r, enum report_line kind, const char *text) {
        struct cli *c = cli_of_report(r);

        switch (kind) {
        case REPORT_FAILURE:
        case REPORT_FIELD_ERROR:
        case REPORT_NOTE:
                fprintf(stderr, "amdsmi: %s\n", text);
                break;
        case REPORT_SAY:
                if (c->format == OUTPUT_TABLE)
                        printf("%s\n", text);
                break;
        case REPORT_TEXT:
                if (c->format == OUTPUT_TABLE)
                        fputs(text, stdout);
                break;
        }
}

void cli_report_init(struct cli *c) {
        c->report.print = print_line;
        c->report.keep_field_errors = c->format == OUTPUT_JSON;
        c->journal = CHANGE_JOURNAL_INIT(&c->report);
}

static int selection_strv(const struct selection *sel, char ***ret);

/* A change through amdsmid: what amdsmid says of the -g N that name other GPUs than before it
 * last saw GPUs come or go (as a read through it notes), before -g is resolved here, so that
 * an index that names nothing now is explained too. Only a note: an amdsmid without
 * CheckIndexes (or any failure) says nothing. */
static void note_moved_indexes(struct cli *c) {
        _cleanup_strv_free_ char **gpus = NULL, **notes = NULL;
        bool any = false;

        for (size_t i = 0; i < c->selection.n_items; i++)
                any = any || c->selection.items[i].kind == SELECTOR_INDEX;
        if (!any || selection_strv(&c->selection, &gpus) < 0 ||
            cli_bus_check_indexes(c, gpus, &notes) < 0)
                return;
        for (char **n = notes; n && *n; n++)
                report_note(&c->report, "%s", *n);
}

int cli_change_begin(struct cli *c, const char *why) {
        int r, route;

        if (why) {
                r = cli_check_change_selection(c, why);
                if (r < 0)
                        return r;
        }
        route = cli_change_route(c);
        if (route < 0)
                return route;
        if (route == CLI_ROUTE_DAEMON)
                note_moved_indexes(c);
        r = cli_open(c);
        if (r < 0)
                return r;
        cli_begin_sample(c);
        return route;
}

int cli_open_run(struct cli *c, int (*sample)(struct cli *c)) {
        bool other_roots;
        int r;

        /* with amdsmid running, the verb's sample asks it (cli_read_document()): nothing is
         * read here, not even the enumeration. Its PID file decides, not the bus (no
         * NameHasOwner round trip, no libsystemd): a GetDocument() that finds no owner of
         * the name falls back to reading in-process. One that names other roots than
         * AMDSMI_SYSFS_ROOT / AMDSMI_DEV_ROOT here: amdsmid reads other GPUs, read here. */
        c->read_daemon = !c->direct && cli_daemon_may_run(&other_roots) && !other_roots;
        if (!c->read_daemon) {
                r = cli_open(c);
                if (r < 0)
                        return r;
        }
        return cli_run(c, sample);
}

/* The -g selectors as GetDocument takes them; -EOPNOTSUPP when one cannot be spelled. */
static int selection_strv(const struct selection *sel, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;

        for (size_t i = 0; i < sel->n_items; i++) {
                char buf[SELECT_BDF_MAX + 16];
                int r = selector_format(&sel->items[i], buf, sizeof(buf));

                if (r < 0)
                        return r;
                r = strv_extend(&l, buf);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* A watch follows the GPUs it started with: the index selectors become the PCI addresses of
 * amdsmid's answer (as selection_pin() does over an enumeration). */
static void pin_from_document(struct cli *c, json_object *gpus) {
        struct select_target *targets = NULL;
        size_t n = 0;

        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *k;

                if (json_object_object_get_ex(g, "gpu", &k) &&
                    json_object_is_type(k, json_type_int) && json_object_get_int(k) >= 0 &&
                    (size_t) json_object_get_int(k) + 1 > n)
                        n = (size_t) json_object_get_int(k) + 1;
        }
        if (n == 0 || n > 4096)
                return;
        targets = calloc(n, sizeof(*targets));
        if (!targets)
                return;
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *k, *bdf;

                if (json_object_object_get_ex(g, "gpu", &k) &&
                    json_object_is_type(k, json_type_int) && json_object_get_int(k) >= 0 &&
                    json_object_object_get_ex(g, "bdf", &bdf) &&
                    json_object_is_type(bdf, json_type_string))
                        targets[json_object_get_int(k)].bdf = json_object_get_string(bdf);
        }
        /* a selector whose GPU the answer does not show stays as it is */
        for (size_t i = 0; i < c->selection.n_items; i++) {
                struct selector *s = &c->selection.items[i];

                if (s->kind == SELECTOR_INDEX && s->index < n && targets[s->index].bdf &&
                    s->partition == SELECT_NO_PARTITION) {
                        snprintf(s->bdf, sizeof(s->bdf), "%s", targets[s->index].bdf);
                        s->kind = SELECTOR_BDF;
                }
        }
        free(targets);
}

/* Whether @doc has the shape read here: an object whose "gpus" is an array of objects and
 * whose "errors" and "notes", if any, are arrays (json-c asserts the type of what it indexes;
 * a confused daemon must not abort the CLI). */
static bool document_usable(json_object *doc) {
        json_object *gpus, *a;

        if (!json_object_is_type(doc, json_type_object) ||
            !json_object_object_get_ex(doc, "gpus", &gpus) ||
            !json_object_is_type(gpus, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(gpus); i++)
                if (!json_object_is_type(json_object_array_get_idx(gpus, i), json_type_object))
                        return false;
        if (json_object_object_get_ex(doc, "errors", &a) && a &&
            !json_object_is_type(a, json_type_array))
                return false;
        if (json_object_object_get_ex(doc, "notes", &a) && a &&
            !json_object_is_type(a, json_type_array))
                return false;
        return true;
}

/* amdsmid answers from its cache at once; a hung daemon is not waited for long. */
#define READ_CALL_TIMEOUT_MS 30000

/* An answer of a GetDocument call that means "read here": an amdsmid without the method, or
 * one that went away. */
static bool read_here(int r) {
        switch (r) {
        case -EBADR:
        case -EHOSTUNREACH:
        case -ENXIO:
        case -ENOTCONN:
        case -ECONNRESET:
        case -EPIPE:
                return true;
        default:
                return false;
        }
}

int cli_print_daemon_text(struct cli *c, const char *verb) {
        _cleanup_strv_free_ char **gpus = NULL, **notes = NULL;
        _cleanup_free_ char *text = NULL, *message = NULL;
        int r;

        /* a watch pins its GPUs from the parsed document (and prints one line per sample) */
        if (!c->read_daemon || c->format != OUTPUT_JSON || c->interval_ns > 0)
                return 0;
        r = selection_strv(&c->selection, &gpus);
        if (r == -ENOMEM)
                return cli_fail(c, r, "out of memory");
        if (r < 0)
                return 0;
        r = cli_bus_get_document_text(verb, gpus, READ_CALL_TIMEOUT_MS, &text, &notes, &message);
        /* -EOPNOTSUPP (a bus address for sd-bus only), -EBADR (an older amdsmid): GetDocument */
        if (r == -EOPNOTSUPP || r == -EBADR)
                return 0;
        if (read_here(r)) {
                c->read_daemon = false;
                r = cli_open(c);
                return r < 0 ? r : 0;
        }
        if (r < 0)
                return cli_fail(c, r, "%s", message ? message : strerror(-r));
        for (char **n = notes; n && *n; n++)
                report_note(&c->report, "%s", *n);
        fputs(text, stdout);
        fputc('\n', stdout);
        return 1;
}

int cli_read_daemon_document(struct cli *c, const char *verb, json_object **ret) {
        _cleanup_strv_free_ char **gpus = NULL;
        _cleanup_free_ char *message = NULL;
        json_object *doc = NULL;
        int r;

        *ret = NULL;
        if (!c->read_daemon)
                return 0;
        r = selection_strv(&c->selection, &gpus);
        if (r == -ENOMEM)
                return r;
        if (r >= 0) {
                r = cli_bus_get_document(c, verb, gpus, READ_CALL_TIMEOUT_MS, &doc, &message);
                if (r >= 0 && document_usable(doc)) {
                        *ret = doc;
                        return 1;
                }
                json_object_put(doc);
                if (r == -ENOMEM)
                        return r;
        }
        /* an amdsmid without the verb, or one that went: read here */
        c->read_daemon = false;
        if (c->set.ctx)
                return 0;
        r = cli_open(c);
        return r < 0 ? r : 0;
}

int cli_read_document(struct cli *c, const char *verb, json_object **ret) {
        _cleanup_strv_free_ char **gpus = NULL;
        _cleanup_free_ char *message = NULL;
        json_object *doc = NULL, *a;
        int r;

        if (!c->read_daemon)
                return 0;
        r = selection_strv(&c->selection, &gpus);
        if (r == -ENOMEM)
                return cli_fail(c, r, "out of memory");
        if (r < 0)
                goto in_process;
        r = cli_bus_get_document(c, verb, gpus, READ_CALL_TIMEOUT_MS, &doc, &message);
        if (r < 0) {
                json_object_put(doc);
                /* an amdsmid without GetDocument, or one that went away: read here */
                if (read_here(r))
                        goto in_process;
                return cli_fail(c, r, "%s", message ? message : strerror(-r));
        }
        if (!document_usable(doc)) {
                json_object_put(doc);
                goto in_process;
        }
        if (json_object_object_get_ex(doc, "errors", &a) && a)
                for (size_t i = 0; i < json_object_array_length(a); i++)
                        report_replay_error(&c->report, json_object_array_get_idx(a, i));
        if (json_object_object_get_ex(doc, "notes", &a) && a)
                for (size_t i = 0; i < json_object_array_length(a); i++)
                        report_note(&c->report, "%s",
                                    json_object_get_string(json_object_array_get_idx(a, i)));
        /* the time amdsmid read the values */
        if (json_object_object_get_ex(doc, "timestamp", &a))
                (void) parse_timestamp(json_object_get_string(a), &c->report.sample_time);
        json_object_object_get_ex(doc, "gpus", &a);
        if (c->interval_ns > 0)
                pin_from_document(c, a);
        *ret = json_object_get(a);
        json_object_put(doc);
        return 1;

in_process:
        c->read_daemon = false;
        r = cli_open(c);
        return r < 0 ? r : 0;
}

int cli_collect_document(struct cli *c, const char *verb, doc_gpu_fn gpu_fn, json_object **ret) {
        int r = cli_read_document(c, verb, ret);

        if (r != 0)
                return r < 0 ? r : 0;
        return cli_collect_gpus(c, gpu_fn, ret);
}

int cli_sample_done(struct cli *c, json_object *gpus, int r) {
        json_object_put(gpus);
        /* in tables and CSV the collected errors were already printed on stderr */
        json_object_put(c->report.errors);
        c->report.errors = NULL;
        if (r < 0)
                return cli_fail(c, r, "cannot format the output: %s", strerror(-r));
        return 0;
}

int cli_check_change_selection(struct cli *c, const char *why) {
        if (c->selection.n_items == 0)
                return cli_fail(c, -EINVAL,
                                "-g missing: changes need an explicit GPU selection (-g 0, "
                                "-g all)");
        for (size_t i = 0; i < c->selection.n_items; i++) {
                const struct selector *s = &c->selection.items[i];

                if (s->kind == SELECTOR_INDEX && s->partition != SELECT_NO_PARTITION)
                        return cli_fail(c, -EINVAL, "-g %u.%u selects a partition: %s (-g %u)",
                                        s->index, s->partition, why, s->index);
        }
        return 0;
}

int cli_emit_change(struct cli *c, json_object *gpus, int r, const struct column_def *csv,
                    size_t n_csv) {
        json_object *doc;

        if (c->format == OUTPUT_CSV) {
                struct columns cols = {};
                int k;

                k = columns_add_defs(&cols, csv, n_csv);
                if (k >= 0)
                        k = output_csv_header(stdout, &cols);
                if (k >= 0)
                        k = output_csv_rows(stdout, &cols, gpus);
                columns_free(&cols);
                if (k < 0)
                        return cli_fail(c, k, "cannot format the output: %s", strerror(-k));
        }
        if (c->format != OUTPUT_JSON)
                return r;

        doc = report_change_document(&c->report, json_object_get(gpus), r);
        if (!doc)
                return cli_fail(c, -ENOMEM, "out of memory");
        (void) cli_print_json(c, doc);
        json_object_put(doc);
        c->json_printed = true;
        return r;
}

_printf_(3, 0) static void log_handler(struct amdsmi_ctx *ctx, int priority, const char *format,
                                       va_list args, void *userdata) {
        struct cli *c = userdata;
        char *msg = NULL;

        if (priority > AMDSMI_LOG_WARNING || c->format != OUTPUT_JSON) {
                fputs("amdsmi: ", stderr);
                vfprintf(stderr, format, args);
                fputc('\n', stderr);
                return;
        }
        if (vasprintf(&msg, format, args) < 0)
                return;
        report_add_error(&c->report, error_entry_new(-1, NULL, 0, msg));
        free(msg);
}

static int resolve(struct cli *c) {
        return gpu_set_resolve(&c->set, c->set.ctx, &c->selection, &c->report,
                               (c->sample > 0 ? GPU_SET_AGAIN : 0) |
                                       (c->interval_ns > 0 ? GPU_SET_PIN : 0));
}

static int enumerate(struct cli *c) {
        const char *root = amdsmi_ctx_get_sysfs_root(c->set.ctx);
        int r;

        r = amdsmi_ctx_enumerate(c->set.ctx);
        if (r == 0 || r == -ENOENT)
                return cli_fail(c, r == 0 ? -ENODEV : r, "no AMD GPU found under %s", root);
        if (r < 0)
                return cli_fail(c, r, "cannot enumerate the GPUs under %s: %s", root, strerror(-r));
        return resolve(c);
}

int cli_open(struct cli *c) {
        int r;

        r = amdsmi_ctx_new(&c->set.ctx);
        if (r < 0)
                return cli_fail(c, r, "cannot create the library context: %s", strerror(-r));
        amdsmi_ctx_set_log_fn(c->set.ctx, log_handler, c);
        if (amdsmi_ctx_get_log_priority(c->set.ctx) < AMDSMI_LOG_WARNING)
                amdsmi_ctx_set_log_priority(c->set.ctx, AMDSMI_LOG_WARNING);

        return enumerate(c);
}

const struct output_watch *cli_output_watch(struct cli *c, struct output_watch *w, char *buf) {
        if (c->interval_ns == 0)
                return NULL;
        if (format_timestamp(&c->report.sample_time, buf, 40) < 0)
                buf[0] = '\0';
        *w = (struct output_watch){ .stamp = buf, .header = c->sample == 0 };
        return w;
}

int cli_print_json(struct cli *c, json_object *doc) {
        if (!doc)
                return cli_fail(c, -ENOMEM, "out of memory");
        return output_json(stdout, doc, c->interval_ns > 0);
}

int cli_print_document(struct cli *c, json_object *gpus) {
        json_object *doc = cli_document(c, gpus);
        int r = cli_print_json(c, doc);

        json_object_put(doc);
        return r;
}

int cli_emit(struct cli *c, json_object *gpus, const struct columns *cols) {
        struct columns with_time = {};
        int r = 0;

        switch (c->format) {
        case OUTPUT_JSON:
                return cli_print_document(c, gpus);

        case OUTPUT_CSV:
                if (c->interval_ns > 0) {
                        char stamp[40];

                        r = columns_add(&with_time, "timestamp", NULL, "timestamp", 0);
                        for (size_t i = 0; r >= 0 && i < cols->n; i++)
                                r = columns_add(&with_time, cols->v[i].name, cols->v[i].header,
                                                cols->v[i].path, cols->v[i].flags);
                        format_timestamp(&c->report.sample_time, stamp, sizeof(stamp));
                        for (size_t i = 0; r >= 0 && i < json_object_array_length(gpus); i++)
                                json_set(json_object_array_get_idx(gpus, i), "timestamp",
                                         json_object_new_string(stamp));
                        cols = &with_time;
                }
                if (r >= 0 && c->sample == 0)
                        r = output_csv_header(stdout, cols);
                if (r >= 0)
                        r = output_csv_rows(stdout, cols, gpus);
                break;

        case OUTPUT_TABLE:
                if (c->sample > 0)
                        fputc('\n', stdout);
                r = output_table(stdout, cols, gpus, "");
                break;
        }

        columns_free(&with_time);
        return cli_sample_done(c, gpus, r);
}

static void timespec_add_ns(struct timespec *t, uint64_t ns) {
        uint64_t nsec = (uint64_t) t->tv_nsec + ns % 1000000000u;

        t->tv_sec += (time_t) (ns / 1000000000u + nsec / 1000000000u);
        t->tv_nsec = (long) (nsec % 1000000000u);
}

static int timespec_cmp(const struct timespec *a, const struct timespec *b) {
        if (a->tv_sec != b->tv_sec)
                return a->tv_sec < b->tv_sec ? -1 : 1;
        if (a->tv_nsec != b->tv_nsec)
                return a->tv_nsec < b->tv_nsec ? -1 : 1;
        return 0;
}

static int flush_stdout(struct cli *c) {
        int r;

        errno = 0;
        if (fflush(stdout) == 0 && !ferror(stdout))
                return 0;
        r = errno > 0 ? -errno : -EPIPE;
        return cli_fail(c, r, "cannot write to standard output: %s", strerror(-r));
}

/* Enumerates again when a partition switch rebuilt the KFD topology. */
static int refresh_topology(struct cli *c) {
        if (!c->set.ctx)
                return 0; /* amdsmid answers (cli_read_document()) */
        if (amdsmi_ctx_check_topology(c->set.ctx) != -ESTALE)
                return 0;
        return enumerate(c);
}

int cli_run(struct cli *c, int (*sample)(struct cli *c)) {
        struct timespec next;
        sigset_t mask, old;
        int r;

        if (c->interval_ns == 0) {
                cli_begin_sample(c);
                r = sample(c);
                if (r < 0)
                        return r;
                return flush_stdout(c);
        }

        /* Blocked, SIGINT and SIGTERM wait in sigtimedwait() between samples: no race. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, &old) < 0)
                return cli_fail(c, -errno, "cannot block signals: %s", strerror(errno));

        clock_gettime(CLOCK_MONOTONIC, &next);
        for (c->sample = 0;; c->sample++) {
                struct timespec now, timeout;

                if (c->sample > 0) {
                        r = refresh_topology(c);
                        if (r < 0)
                                break;
                }
                cli_begin_sample(c);
                r = sample(c);
                if (r < 0)
                        break;
                r = flush_stdout(c);
                if (r < 0)
                        break;
                if (c->count > 0 && c->sample + 1 >= c->count)
                        break;

                timespec_add_ns(&next, c->interval_ns);
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (timespec_cmp(&now, &next) >= 0) {
                        /* late: sample again now and keep the period from here */
                        next = now;
                        timeout = (struct timespec){};
                } else {
                        timeout.tv_sec = next.tv_sec - now.tv_sec;
                        timeout.tv_nsec = next.tv_nsec - now.tv_nsec;
                        if (timeout.tv_nsec < 0) {
                                timeout.tv_sec--;
                                timeout.tv_nsec += 1000000000L;
                        }
                }

                for (;;) {
                        int sig = sigtimedwait(&mask, NULL, &timeout);

                        if (sig == SIGINT || sig == SIGTERM) {
                                r = 0;
                                goto finish;
                        }
                        if (sig < 0 && errno == EINTR) {
                                /* another signal's handler ran; wait out the rest */
                                clock_gettime(CLOCK_MONOTONIC, &now);
                                if (timespec_cmp(&now, &next) >= 0)
                                        break;
                                timeout.tv_sec = next.tv_sec - now.tv_sec;
                                timeout.tv_nsec = next.tv_nsec - now.tv_nsec;
                                if (timeout.tv_nsec < 0) {
                                        timeout.tv_sec--;
                                        timeout.tv_nsec += 1000000000L;
                                }
                                continue;
                        }
                        break; /* EAGAIN: the interval is over */
                }
        }

finish:
        sigprocmask(SIG_SETMASK, &old, NULL);
        return r;
}

void cli_doc_query(struct cli *c, struct doc_query *q) {
        *q = (struct doc_query){
                .report = &c->report,
                .set = &c->set,
                .samples = c->samples,
                .samples_max_age_usec = c->samples_max_age_usec,
                .power_limit = c->power_limit,
                .power_limit_userdata = c,
        };
}

int cli_collect_gpus(struct cli *c, doc_gpu_fn gpu_fn, json_object **ret) {
        struct doc_query q;

        cli_doc_query(c, &q);
        return doc_collect(&q, gpu_fn, ret);
}
