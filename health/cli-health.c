/* SPDX-License-Identifier: MIT */
/*
 * The health slice's part of amdsmi(1):
 *
 *   amdsmi ras [-g SEL]                       RAS counts per GPU and block
 *   amdsmi ras --cper [--follow] [--cper-dir DIR]   CPER records (root: debugfs)
 *   amdsmi bad-pages [-g SEL]                 retired VRAM pages and the threshold
 *   amdsmi health [-g SEL]                    the verdict with its reasons; exit status
 *                                             0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN
 *   amdsmi events [-g SEL] [--kind K,K]       the KFD SMI events until Ctrl-C: amdsmid's
 *                                             Health.Event signals when it runs (subscribed),
 *                                             else (or --direct) read in-process
 *
 * The documents are health-json.c's (core/), so that amdsmid serves the same ones. These verbs
 * read in-process for now (amdsmid's GetDocument for them comes with its Health interface).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "amdsmid-conf.h"
#include "bus.h"
#include "cli.h"
#include "documents.h"
#include "health-json.h"
#include "json-util.h"
#include "macro.h"
#include "parse-util.h"
#include "safe-open.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* @path of @root, borrowed: @root keeps it (json_path_get() returns a new reference, and
 * every path here is a plain dotted one, which it never builds anew). */
static json_object *at(json_object *root, const char *path) {
        json_object *v = json_path_get(root, path);

        json_object_put(v);
        return v;
}

/* Rows for a table or CSV: for each GPU object of @gpus, one row per element of its array at
 * @path (the GPU's scalars copied into each, the element as "e"), or one row with "e" null
 * when it has none (@empty_row). */
static json_object *child_rows(json_object *gpus, const char *path, bool empty_row) {
        json_object *rows = json_object_new_array();

        for (size_t i = 0; rows && i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                json_object *a = at(g, path);
                size_t n = a && json_object_is_type(a, json_type_array)
                                   ? json_object_array_length(a)
                                   : 0;

                for (size_t k = 0; k < n || (k == 0 && n == 0 && empty_row); k++) {
                        json_object *row = json_object_new_object();

                        if (!row)
                                break;
                        json_object_object_foreach(
                                g, key, val) if (!json_object_is_type(val, json_type_object) &&
                                                 !json_object_is_type(val, json_type_array))
                                json_set(row, key, json_object_get(val));
                        json_set(row, "g", json_object_get(g));
                        json_set(row, "e",
                                 n ? json_object_get(json_object_array_get_idx(a, k)) : NULL);
                        json_object_array_add(rows, row);
                }
        }
        return rows;
}

/* A table or CSV of @rows with @defs; takes @rows. */
static int print_rows(struct cli *c, json_object *rows, const struct column_def *defs, size_t n) {
        struct columns cols = {};
        int r;

        r = columns_add_defs(&cols, defs, n);
        if (r >= 0) {
                if (c->format == OUTPUT_CSV) {
                        r = output_csv_header(stdout, &cols);
                        if (r >= 0)
                                r = output_csv_rows(stdout, &cols, rows);
                } else
                        r = output_table(stdout, &cols, rows, "");
        }
        columns_free(&cols);
        json_object_put(rows);
        return r;
}

static bool strv_has(char **l, const char *s) {
        for (; l && *l; l++)
                if (strcmp(*l, s) == 0)
                        return true;
        return false;
}

/* SIGINT and SIGTERM end a stream (exit 0): their handler writes to a pipe that the stream
 * polls. A handler, not a blocked mask and a signalfd: a library or an LD_PRELOAD shim may have
 * threads of its own that do not block them. */
static int signal_pipe[2] = { -1, -1 };

static void on_signal(int sig) {
        int saved = errno;
        char c = (char) sig;

        (void) !write(signal_pipe[1], &c, 1);
        errno = saved;
}

/* @return the descriptor to poll (POLLIN: the stream should end), or a negative errno
 * (reported). */
static int signals_fd(struct cli *c) {
        struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

        if (signal_pipe[0] < 0 && pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return cli_fail(c, -errno, "cannot watch signals: %s", strerror(errno));
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
                return cli_fail(c, -errno, "cannot watch signals: %s", strerror(errno));
        return signal_pipe[0];
}

static int print_line(json_object *o) {
        int r = output_json(stdout, o, true);

        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        return r;
}

/* ---- amdsmi ras ------------------------------------------------------------------------- */

static const struct column_def ras_columns[] = {
        { "gpu", "GPU", "gpu", 0 },         { "bdf", "BDF", "bdf", 0 },
        { "block", "BLOCK", "e.block", 0 }, { "source", "SOURCE", "e.source", 0 },
        { "ue", "UE", "e.ue", 0 },          { "ce", "CE", "e.ce", 0 },
        { "de", "DE", "e.de", 0 },
};

static int ras_sample(struct cli *c) {
        json_object *gpus;
        int r;

        r = cli_print_daemon_text(c, "ras");
        if (r != 0)
                return r < 0 ? r : 0;
        r = cli_collect_document(c, "ras", ras_gpu, &gpus);
        if (r != 0)
                return r;
        if (c->format == OUTPUT_JSON)
                return cli_print_document(c, gpus);
        r = print_rows(c, child_rows(gpus, "ras.blocks", true), ras_columns,
                       ELEMENTSOF(ras_columns));
        if (r >= 0 && c->format == OUTPUT_TABLE)
                for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                        json_object *g = json_object_array_get_idx(gpus, i);
                        json_object *ecc = at(g, "ecc");

                        if (ecc)
                                printf("GPU %s: %s uncorrectable, %s correctable, %s deferred "
                                       "since the driver loaded\n",
                                       json_object_get_string(at(g, "gpu")),
                                       json_object_get_string(
                                               at(ecc, "uncorrectable_total")),
                                       json_object_get_string(
                                               at(ecc, "correctable_total")),
                                       at(ecc, "deferred_total")
                                               ? json_object_get_string(
                                                         at(ecc, "deferred_total"))
                                               : "n/a");
                }
        return cli_sample_done(c, gpus, r);
}

/* ---- amdsmi ras --cper ------------------------------------------------------------------ */

static const struct column_def cper_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", "BDF", "bdf", 0 },
        { "record_id", "RECORD", "e.record_id", 0 },
        { "severity", "SEVERITY", "e.severity", 0 },
        { "timestamp", "TIMESTAMP", "e.timestamp", 0 },
        { "notify", "NOTIFY", "e.notify", 0 },
        { "sections", "SECTIONS", "e.sections[].type", 0 },
        { "size", "SIZE (B)", "e.size", 0 },
};

/* A file name for @rec of GPU @bdf: the GPU, the record id and its time, so that the records
 * of several GPUs and runs do not collide ("0000-c1-00.0_0-1f_20261204T091500Z.cper"). */
static void cper_file_name(const char *bdf, const struct amdsmi_cper_record *rec, char *buf,
                           size_t size) {
        char b[32], id[16], ts[32] = "notime";
        struct tm tm;

        snprintf(b, sizeof(b), "%s", bdf);
        for (char *p = b; *p; p++)
                if (*p == ':')
                        *p = '-';
        snprintf(id, sizeof(id), "%s", rec->record_id);
        for (char *p = id; *p; p++)
                if (*p == ':' || *p == '/' || *p < '!' || *p > '~')
                        *p = '-';
        if (rec->timestamp >= 0) {
                time_t t = (time_t) rec->timestamp;

                if (gmtime_r(&t, &tm))
                        strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
        }
        snprintf(buf, size, "%s_%s_%s", b, id, ts);
}

/* Whether the file @fd holds exactly @rec's bytes (a rerun writing the same record). */
static bool same_bytes(int fd, const struct amdsmi_cper_record *rec) {
        struct stat st;
        uint8_t buf[4096];
        size_t off = 0;

        if (fstat(fd, &st) < 0 || (uint64_t) st.st_size != rec->length)
                return false;
        while (off < rec->length) {
                ssize_t n = pread(fd, buf, sizeof(buf), (off_t) off);

                if (n <= 0 || memcmp(buf, rec->raw + off, (size_t) n) != 0)
                        return false;
                off += (size_t) n;
        }
        return true;
}

/* Writes @rec into @dirfd as "<name>.cper": never over another file (O_EXCL, no symbolic
 * links followed); a file with the same name and other bytes keeps its name, this record
 * takes "<name>.1.cper", ...; one with the same bytes is this record already (a rerun).
 * @return 1 (written), 0 (there already) or a negative errno (reported). */
static int write_cper_file(struct cli *c, int dirfd, const char *dir, const char *bdf,
                           const struct amdsmi_cper_record *rec) {
        char base[96], name[128];

        cper_file_name(bdf, rec, base, sizeof(base));
        for (unsigned k = 0; k < 1000; k++) {
                int fd, r;
                size_t off = 0;

                if (k == 0)
                        snprintf(name, sizeof(name), "%s.cper", base);
                else
                        snprintf(name, sizeof(name), "%s.%u.cper", base, k);
                /* 0600: the records come from root-only debugfs (crash dumps) */
                fd = safe_openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL, 0600, 0);
                if (fd == -EEXIST) {
                        _cleanup_close_ int old = safe_openat(dirfd, name, O_RDONLY, 0, 0);

                        if (old >= 0 && same_bytes(old, rec))
                                return 0;
                        continue;
                }
                if (fd < 0)
                        return cli_fail(c, fd, "cannot create %s/%s: %s", dir, name, strerror(-fd));
                while (off < rec->length) {
                        ssize_t n = write(fd, rec->raw + off, rec->length - off);

                        if (n < 0) {
                                r = -errno;
                                close(fd);
                                unlinkat(dirfd, name, 0);
                                return cli_fail(c, r, "cannot write %s/%s: %s", dir, name,
                                                strerror(-r));
                        }
                        off += (size_t) n;
                }
                if (close(fd) < 0) {
                        r = -errno;
                        unlinkat(dirfd, name, 0);
                        return cli_fail(c, r, "cannot write %s/%s: %s", dir, name, strerror(-r));
                }
                return 1;
        }
        return cli_fail(c, -EEXIST, "%s: too many files named %s.*.cper", dir, base);
}

/* --cper-dir: made if missing, refused if it is a symbolic link or another user's. */
static int open_cper_dir(struct cli *c, const char *dir) {
        int r, fd;

        r = safe_mkdir(dir, 0755);
        if (r == -EPERM)
                return cli_fail(c, r,
                                "--cper-dir %s is owned by another user, or too open: refused "
                                "(give a directory of your own)",
                                dir);
        if (r == -ELOOP || r == -ENOTDIR)
                return cli_fail(c, -EINVAL, "--cper-dir %s is %s, not a directory: refused", dir,
                                r == -ELOOP ? "a symbolic link" : "no directory");
        if (r < 0)
                return cli_fail(c, r, "--cper-dir %s: %s", dir, strerror(-r));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return cli_fail(c, -errno, "--cper-dir %s: %s", dir, strerror(errno));
        return fd;
}

/* Writes the records of @batch of GPU @index to --cper-dir. @return 0 or a negative errno
 * (reported). */
static int write_batch(struct cli *c, int dirfd, size_t index, struct amdsmi_gpu *gpu,
                       const struct amdsmi_cper_batch *batch, bool quiet) {
        unsigned written = 0, there = 0;

        for (size_t i = 0; i < batch->n_records; i++) {
                int r = write_cper_file(c, dirfd, c->health.cper_dir, amdsmi_gpu_get_bdf(gpu),
                                        &batch->records[i]);

                if (r < 0)
                        return r;
                if (r > 0)
                        written++;
                else
                        there++;
        }
        if (!quiet)
                fprintf(stderr, "amdsmi: GPU %zu: %u CPER record%s written to %s%s\n", index,
                        written, written == 1 ? "" : "s", c->health.cper_dir,
                        there ? " (others were there already)" : "");
        return 0;
}

static const char *cper_message(int r) {
        if (r == -EACCES || r == -EPERM)
                return HEALTH_NEEDS_ROOT;
        if (r == -ENODATA)
                return "no CPER ring (an older kernel, or CPER not enabled)";
        return NULL;
}

/* --cper-dir without --follow: every record held, once more than the document read them. */
static int cper_write_all(struct cli *c) {
        _cleanup_close_ int dirfd = -EBADF;

        dirfd = open_cper_dir(c, c->health.cper_dir);
        if (dirfd < 0)
                return dirfd;
        FOREACH_SELECTED_GPU(c, i, gpu) {
                struct amdsmi_cper_batch *batch = NULL;
                int r = amdsmi_gpu_read_cper(gpu, NULL, &batch);

                if (r < 0)
                        continue; /* the document said why */
                r = write_batch(c, dirfd, i, gpu, batch, c->format == OUTPUT_JSON);
                amdsmi_cper_batch_free(batch);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int cper_sample(struct cli *c) {
        json_object *gpus;
        int r;

        /* --cper-dir writes what it reads: read here (verb_ras() opened the GPUs) */
        if (!c->health.cper_dir) {
                r = cli_print_daemon_text(c, "ras-cper");
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        r = cli_collect_document(c, "ras-cper", cper_gpu, &gpus);
        if (r != 0)
                return r;
        if (c->health.cper_dir) {
                r = cper_write_all(c);
                if (r < 0) {
                        json_object_put(gpus);
                        return r;
                }
        }
        if (c->format == OUTPUT_JSON)
                return cli_print_document(c, gpus);
        r = print_rows(c, child_rows(gpus, "cper.records", false), cper_columns,
                       ELEMENTSOF(cper_columns));
        return cli_sample_done(c, gpus, r);
}

struct cper_follower {
        size_t index;
        struct amdsmi_gpu *gpu;
        struct amdsmi_cper_cursor cursor;
        int error; /* the last read's, said once */
};

/* Prints the records of @f that follow its cursor: NDJSON lines, or table / CSV rows. */
static int follow_one(struct cli *c, struct cper_follower *f, int dirfd, const struct columns *cols,
                      bool *header) {
        struct amdsmi_cper_batch *batch = NULL;
        json_object *rows;
        int r;

        r = amdsmi_gpu_read_cper(f->gpu, &f->cursor, &batch);
        if (r < 0) {
                if (r != f->error)
                        fprintf(stderr, "amdsmi: GPU %zu: cper: %s\n", f->index,
                                cper_message(r) ? cper_message(r) : strerror(-r));
                f->error = r;
                return 0;
        }
        f->error = 0;
        if (batch->lost > 0)
                fprintf(stderr,
                        "amdsmi: GPU %zu: %" PRIu64 " CPER records were overwritten before they "
                        "could be read\n",
                        f->index, batch->lost);
        if (batch->reloaded)
                fprintf(stderr,
                        "amdsmi: GPU %zu: the driver was reloaded: its CPER records "
                        "start again\n",
                        f->index);
        if (dirfd >= 0) {
                r = write_batch(c, dirfd, f->index, f->gpu, batch, true);
                if (r < 0) {
                        amdsmi_cper_batch_free(batch);
                        return r;
                }
        }
        rows = json_object_new_array();
        for (size_t i = 0; rows && i < batch->n_records; i++) {
                json_object *o = json_object_new_object();

                if (!o)
                        break;
                json_set(o, "gpu", json_object_new_uint64(f->index));
                json_set(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(f->gpu)));
                json_set(o, "e", health_cper_record_json(&batch->records[i]));
                json_object_array_add(rows, o);
        }
        amdsmi_cper_batch_free(batch);
        if (!rows)
                return -ENOMEM;
        r = 0;
        if (c->format == OUTPUT_JSON)
                for (size_t i = 0; r >= 0 && i < json_object_array_length(rows); i++) {
                        json_object *o = json_object_array_get_idx(rows, i);
                        json_object *line = json_object_new_object();

                        json_set(line, "gpu", json_object_get(at(o, "gpu")));
                        json_set(line, "bdf", json_object_get(at(o, "bdf")));
                        json_set(line, "record", json_object_get(at(o, "e")));
                        r = print_line(line);
                        json_object_put(line);
                }
        else if (json_object_array_length(rows) > 0) {
                if (c->format == OUTPUT_CSV) {
                        if (*header)
                                r = output_csv_header(stdout, cols);
                        if (r >= 0)
                                r = output_csv_rows(stdout, cols, rows);
                } else
                        r = output_table_rows(stdout, cols, rows, *header);
                *header = false;
                if (r >= 0 && fflush(stdout) != 0)
                        r = -errno;
        }
        json_object_put(rows);
        return r;
}

/* ras --cper --follow: the records held, then every new one, polled every second with the
 * library's cursor (never one twice), until SIGINT / SIGTERM (exit 0). */
static int cper_follow(struct cli *c) {
        _cleanup_close_ int dirfd = -EBADF;
        _cleanup_free_ struct cper_follower *f = NULL;
        struct columns cols = {};
        size_t n = 0;
        bool header = true, first = true;
        int r, sfd;

        if (c->health.cper_dir) {
                dirfd = open_cper_dir(c, c->health.cper_dir);
                if (dirfd < 0)
                        return dirfd;
        }
        f = calloc(c->set.n_gpus ? c->set.n_gpus : 1, sizeof(*f));
        if (!f)
                return cli_fail(c, -ENOMEM, "out of memory");
        FOREACH_SELECTED_GPU(c, i, gpu)
        f[n++] = (struct cper_follower){ .index = i, .gpu = gpu };
        r = columns_add_defs(&cols, cper_columns, ELEMENTSOF(cper_columns));
        if (r < 0)
                return cli_fail(c, r, "out of memory");
        sfd = signals_fd(c);
        if (sfd < 0) {
                columns_free(&cols);
                return sfd;
        }
        for (;;) {
                struct pollfd p = { .fd = sfd, .events = POLLIN };

                for (size_t k = 0; k < n && r >= 0; k++)
                        r = follow_one(c, &f[k], dirfd, &cols, &header);
                if (r < 0) {
                        cli_fail(c, r, "cannot print: %s", strerror(-r));
                        break;
                }
                if (first) {
                        /* nothing to follow on any GPU (no root, no ring): no stream */
                        size_t failed = 0;

                        for (size_t k = 0; k < n; k++)
                                if (f[k].error == -EACCES || f[k].error == -EPERM ||
                                    f[k].error == -ENODATA)
                                        failed++;
                        if (failed == n) {
                                r = cli_fail(c, f[0].error,
                                             "no CPER ring of the selected GPUs can be followed: "
                                             "%s",
                                             cper_message(f[0].error));
                                break;
                        }
                        first = false;
                }
                r = poll(&p, 1, 1000);
                if (r < 0 && errno != EINTR) {
                        r = cli_fail(c, -errno, "poll: %s", strerror(errno));
                        break;
                }
                if (r > 0) {
                        r = 0; /* SIGINT or SIGTERM: the end of the stream, not a failure */
                        break;
                }
                r = 0;
        }
        columns_free(&cols);
        return r;
}

int verb_ras(struct cli *c) {
        int r;

        if (c->health.follow && !c->health.cper)
                return cli_fail(c, -EINVAL, "--follow needs --cper: amdsmi ras --cper --follow");
        if (c->health.cper_dir && !c->health.cper)
                return cli_fail(c, -EINVAL,
                                "--cper-dir needs --cper: amdsmi ras --cper --cper-dir DIR");
        if (c->health.follow && c->interval_ns > 0)
                return cli_fail(c, -EINVAL, "--follow and --watch are mutually exclusive");
        /* --follow and --cper-dir read the ring here; the rest asks amdsmid when it runs */
        if (!c->health.follow && !c->health.cper_dir)
                return cli_open_run(c, c->health.cper ? cper_sample : ras_sample);
        r = cli_open(c);
        if (r < 0)
                return r;
        if (c->health.follow)
                return cper_follow(c);
        return cli_run(c, cper_sample);
}

/* ---- amdsmi bad-pages ------------------------------------------------------------------- */

static const struct column_def bad_page_columns[] = {
        { "gpu", "GPU", "gpu", 0 },          { "bdf", "BDF", "bdf", 0 },
        { "pfn", "PFN", "e.pfn", 0 },        { "address", "ADDRESS", "e.address", 0 },
        { "size", "SIZE (B)", "e.size", 0 }, { "status", "STATUS", "e.status", 0 },
};

static int bad_pages_sample(struct cli *c) {
        json_object *gpus;
        int r;

        r = cli_print_daemon_text(c, "bad-pages");
        if (r != 0)
                return r < 0 ? r : 0;
        r = cli_collect_document(c, "bad-pages", bad_pages_gpu, &gpus);
        if (r != 0)
                return r;
        if (c->format == OUTPUT_JSON)
                return cli_print_document(c, gpus);
        r = print_rows(c, child_rows(gpus, "bad_pages.pages", false), bad_page_columns,
                       ELEMENTSOF(bad_page_columns));
        if (r >= 0 && c->format == OUTPUT_TABLE)
                for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                        json_object *g = json_object_array_get_idx(gpus, i);
                        json_object *bp = at(g, "bad_pages");
                        json_object *t;

                        if (!bp)
                                continue;
                        t = at(bp, "threshold");
                        printf("GPU %s: %s retired page%s (%s pending, %s unreservable), "
                               "threshold %s\n",
                               json_object_get_string(at(g, "gpu")),
                               json_object_get_string(at(bp, "count")),
                               json_object_get_int64(at(bp, "count")) == 1 ? "" : "s",
                               json_object_get_string(at(bp, "pending")),
                               json_object_get_string(at(bp, "unreservable")),
                               t ? json_object_get_string(t)
                                 : json_object_get_string(at(bp, "threshold_error")));
                }
        return cli_sample_done(c, gpus, r);
}

int verb_bad_pages(struct cli *c) {
        return cli_open_run(c, bad_pages_sample);
}

/* ---- amdsmi health ---------------------------------------------------------------------- */

static const struct column_def health_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", "BDF", "bdf", 0 },
        { "state", "HEALTH", "health.state", 0 },
        { "uncorrectable_total", "UE", "ecc.uncorrectable_total", 0 },
        { "correctable_total", "CE", "ecc.correctable_total", 0 },
        { "reasons", "REASONS", "health.reasons[].code", 0 },
};

static struct health_thresholds cli_thresholds;

static json_object *health_gpu_cli(const struct doc_query *q, size_t index,
                                   struct amdsmi_gpu *gpu) {
        struct health_input in;

        health_input_read(gpu, &in);
        return health_gpu_with(q, index, gpu, &cli_thresholds, &in);
}

static enum health_state state_of(json_object *g) {
        const char *s = json_object_get_string(at(g, "health.state"));

        if (!s)
                return HEALTH_UNKNOWN;
        if (strcmp(s, "ok") == 0)
                return HEALTH_OK;
        if (strcmp(s, "warning") == 0)
                return HEALTH_WARNING;
        if (strcmp(s, "critical") == 0)
                return HEALTH_CRITICAL;
        return HEALTH_UNKNOWN;
}

static int health_sample(struct cli *c) {
        enum health_state worst = HEALTH_OK;
        json_object *gpus;
        int r;

        /* through amdsmid: its thresholds, CE-rate window and known resets (the exit status
         * needs the document: no GetDocumentText) */
        r = cli_collect_document(c, "health", health_gpu_cli, &gpus);
        if (r != 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(gpus); i++)
                worst = health_state_worst(worst, state_of(json_object_array_get_idx(gpus, i)));
        if (json_object_array_length(gpus) == 0)
                worst = HEALTH_UNKNOWN;
        c->exit_status = health_exit_status(worst);
        if (c->format == OUTPUT_JSON)
                return cli_print_document(c, gpus);
        if (c->format == OUTPUT_CSV) {
                r = print_rows(c, json_object_get(gpus), health_columns,
                               ELEMENTSOF(health_columns));
                return cli_sample_done(c, gpus, r);
        }
        r = print_rows(c, json_object_get(gpus), health_columns, ELEMENTSOF(health_columns) - 1);
        /* below the table: each GPU's findings, then the notes (what was not evaluated),
         * each said once for all GPUs it concerns */
        for (int pass = 0; pass < 2 && r >= 0; pass++) {
                _cleanup_strv_free_ char **said = NULL;

                for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                        json_object *g = json_object_array_get_idx(gpus, i);
                        json_object *reasons = at(g, "health.reasons");

                        for (size_t k = 0; reasons && k < json_object_array_length(reasons); k++) {
                                json_object *e = json_object_array_get_idx(reasons, k);
                                const char *sev =
                                        json_object_get_string(at(e, "severity"));
                                const char *text = json_object_get_string(at(e, "text"));
                                bool info = sev && strcmp(sev, "info") == 0;

                                if (pass == 0 && !info)
                                        printf("GPU %s: %s: %s\n",
                                               json_object_get_string(at(g, "gpu")), sev,
                                               text);
                                else if (pass == 1 && info && text && !strv_has(said, text)) {
                                        printf("note: %s\n", text);
                                        if (strv_extend(&said, text) < 0)
                                                r = -ENOMEM;
                                }
                        }
                }
        }
        return cli_sample_done(c, gpus, r);
}

/* the thresholds of amdsmid.conf [health]; a file that cannot be read leaves the defaults,
 * and says so */
static void load_thresholds(void) {
        _cleanup_(config_freep) struct config *conf = NULL;
        char err[512];
        int r;

        r = config_load(NULL, &conf, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "amdsmi: %s: using the default health thresholds\n", err);
        health_thresholds_from_config(r < 0 ? NULL : conf, &cli_thresholds);
}

int verb_health(struct cli *c) {
        load_thresholds();
        return cli_open_run(c, health_sample);
}

int health_cli_collect(struct cli *c, json_object **ret) {
        load_thresholds();
        return cli_collect_document(c, "health", health_gpu_cli, ret);
}

int ras_cli_collect(struct cli *c, json_object **ret) {
        return cli_collect_document(c, "ras", ras_gpu, ret);
}

/* ---- amdsmi events ---------------------------------------------------------------------- */

static const struct column_def event_columns[] = {
        { "timestamp", "TIME", "timestamp", 0 },
        { "gpu", "GPU", "gpu", 0 },
        { "partition", "PARTITION", "partition", 0 },
        { "kind", "KIND", "kind", 0 },
        { "text", "EVENT", "text", 0 },
};

/* Every kind the library knows. */
#define EVENT_MASK_ALL_KINDS ((UINT64_C(1) << (_AMDSMI_EVENT_KIND_MAX - 1)) - 1)

struct event_source {
        size_t index;
        struct amdsmi_gpu *gpu;
        struct amdsmi_events *events;
        unsigned partition;
};

/* Prints @rows (event objects) as the format wants; takes @rows. */
static int print_event_rows(struct cli *c, struct columns *cols, json_object *rows,
                            bool *header) {
        int r = 0;

        if (!rows)
                r = -ENOMEM;
        else if (c->format == OUTPUT_JSON)
                for (size_t l = 0; r >= 0 && l < json_object_array_length(rows); l++)
                        r = output_json(stdout, json_object_array_get_idx(rows, l), true);
        else if (c->format == OUTPUT_CSV) {
                if (*header)
                        r = output_csv_header(stdout, cols);
                *header = false;
                if (r >= 0)
                        r = output_csv_rows(stdout, cols, rows);
        } else if (json_object_array_length(rows) > 0) {
                r = output_table_rows(stdout, cols, rows, *header);
                *header = false;
        }
        json_object_put(rows);
        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        return r;
}

/* ---- amdsmi events through amdsmid -------------------------------------------------------- */

/* A GPU of the selection as amdsmid enumerates it, and its partitions selected. */
struct event_gpu {
        char bdf[16];
        char path[64]; /* its object: /org/amdsmi1/gpu/<sd_bus_path_encode(bdf)> */
        bool all;
        uint64_t partitions;
};

/* sd_bus_path_encode() of a BDF under the GPU prefix: every byte but [A-Za-z0-9] as _xx, and
 * a digit too when it comes first. */
static void gpu_object_path(const char *bdf, char *buf, size_t size) {
        size_t n = (size_t) snprintf(buf, size, "/org/amdsmi1/gpu/");

        for (const char *p = bdf; *p && n + 4 < size; p++)
                if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                    (p > bdf && *p >= '0' && *p <= '9'))
                        buf[n++] = *p;
                else
                        n += (size_t) snprintf(buf + n, size - n, "_%02x", (unsigned char) *p);
        buf[n] = '\0';
}

struct event_follow {
        struct cli *c;
        struct columns *cols;
        bool header;
        uint64_t mask;      /* --kind, 0: every kind */
        struct event_gpu *gpus;
        size_t n_gpus;
};

static json_object *get_key(json_object *o, const char *key) {
        json_object *v = NULL;

        return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* Whether a selector names GPU @g of the list document. */
static bool selector_names(const struct selector *s, json_object *g) {
        const char *bdf = json_object_get_string(get_key(g, "bdf"));
        const char *uid = json_object_get_string(get_key(g, "unique_id"));

        switch (s->kind) {
        case SELECTOR_ALL:
                return true;
        case SELECTOR_INDEX:
                return json_object_is_type(get_key(g, "gpu"), json_type_int) &&
                       (uint32_t) json_object_get_int64(get_key(g, "gpu")) == s->index;
        case SELECTOR_BDF:
                return bdf && strcmp(bdf, s->bdf) == 0;
        case SELECTOR_UNIQUE_ID:
                if (uid && strncmp(uid, "0x", 2) == 0)
                        uid += 2;
                return uid && strcasecmp(uid, s->unique_id) == 0;
        }
        return false;
}

static int on_daemon_event(const char *path, const char *kind, const char *text,
                           void *userdata) {
        struct event_follow *f = userdata;
        enum json_tokener_error jerr;
        json_object *o = json_tokener_parse_verbose(text, &jerr), *rows, *p;
        const char *bdf = json_object_get_string(get_key(o, "bdf"));
        enum amdsmi_event_kind k;
        bool show = false;

        if (!o || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return 0; /* not one of ours */
        }
        /* the GPU: the object's bdf, else the object path the signal came from */
        p = get_key(o, "partition");
        for (size_t i = 0; i < f->n_gpus && !show; i++)
                if (bdf ? strcmp(f->gpus[i].bdf, bdf) == 0 : strcmp(f->gpus[i].path, path) == 0)
                        show = f->gpus[i].all || !json_object_is_type(p, json_type_int) ||
                               (json_object_get_int(p) >= 0 && json_object_get_int(p) < 64 &&
                                (f->gpus[i].partitions & (UINT64_C(1) << json_object_get_int(p))));
        /* --kind keeps the kinds of the KFD it names, and what says the stream paused */
        if (show && f->mask && strcmp(kind, "health") == 0)
                show = f->mask & CLI_EVENT_HEALTH;
        else if (show && f->mask && strcmp(kind, "cper") == 0)
                show = f->mask & CLI_EVENT_CPER;
        else if (show && f->mask && strcmp(kind, "stream") != 0)
                show = amdsmi_event_kind_from_string(kind, &k) >= 0 &&
                       (f->mask & AMDSMI_EVENT_MASK(k));
        if (!show) {
                json_object_put(o);
                return 0;
        }
        rows = json_object_new_array();
        if (rows)
                json_object_array_add(rows, o);
        else
                json_object_put(o);
        return print_event_rows(f->c, f->cols, rows, &f->header);
}

static int events_through_daemon(struct cli *c, uint64_t mask) {
        _cleanup_free_ struct event_gpu *gpus = NULL;
        _cleanup_free_ char *message = NULL;
        struct columns cols = {};
        struct event_follow f = { .c = c, .cols = &cols, .header = true, .mask = mask };
        json_object *list = NULL;
        size_t n;
        int r, sfd;

        /* the GPUs selected, as amdsmid enumerates them (the other read verbs' rules) */
        c->read_daemon = true;
        r = cli_read_document(c, "list", &list);
        if (r <= 0)
                return r; /* 0: amdsmid has gone: read here (c->read_daemon is false) */
        n = json_object_array_length(list);
        gpus = calloc(n ? n : 1, sizeof(*gpus));
        if (!gpus) {
                json_object_put(list);
                return cli_fail(c, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
                json_object *g = json_object_array_get_idx(list, i);
                struct event_gpu *e = &gpus[f.n_gpus];

                if (!json_object_get_string(get_key(g, "bdf")))
                        continue;
                snprintf(e->bdf, sizeof(e->bdf), "%s", json_object_get_string(get_key(g, "bdf")));
                gpu_object_path(e->bdf, e->path, sizeof(e->path));
                e->all = c->selection.n_items == 0;
                for (size_t k = 0; k < c->selection.n_items; k++) {
                        const struct selector *s = &c->selection.items[k];

                        if (!selector_names(s, g))
                                continue;
                        if (s->partition == SELECT_NO_PARTITION || s->partition >= 64)
                                e->all = true;
                        else
                                e->partitions |= UINT64_C(1) << s->partition;
                }
                f.n_gpus++;
        }
        json_object_put(list);
        f.gpus = gpus;
        if (f.n_gpus == 0)
                return cli_fail(c, -ENODEV, "no GPU among the selection: no events");
        r = columns_add_defs(&cols, event_columns, ELEMENTSOF(event_columns));
        if (r < 0)
                return cli_fail(c, r, "out of memory");
        sfd = signals_fd(c);
        if (sfd < 0) {
                columns_free(&cols);
                return sfd;
        }
        r = cli_bus_follow_events(c, sfd, on_daemon_event, &f, &message);
        columns_free(&cols);
        if (r == -ECONNRESET || r == -ENOTCONN)
                return cli_fail(c, -ENOTCONN, "amdsmid left the bus: the event stream ended");
        if (r == -EOPNOTSUPP || (r < 0 && message))
                return cli_fail(c, r, "amdsmid refused the event stream: %s",
                                message ? message : strerror(-r));
        if (r < 0)
                return cli_fail(c, r, "cannot print: %s", strerror(-r));
        return 0;
}

/* ---- amdsmi events, in-process ----------------------------------------------------------- */

int verb_events(struct cli *c) {
        _cleanup_free_ struct event_source *src = NULL;
        _cleanup_free_ struct pollfd *pfd = NULL;
        int sfd;
        struct columns cols = {};
        uint64_t mask = c->health.kinds ? c->health.kinds & EVENT_MASK_ALL_KINDS
                                        : EVENT_MASK_ALL_KINDS;
        size_t n = 0, max = 0;
        bool header = true, other_roots = false;
        int r;

        /* through amdsmid when it runs on these GPUs (its stream: no KFD user here) */
        if (!c->direct && cli_daemon_may_run(&other_roots) && !other_roots &&
            cli_daemon_running(c)) {
                r = events_through_daemon(c, c->health.kinds);
                if (r != 0 || c->read_daemon)
                        return r;
        }
        /* health changes and CPER records are amdsmid's (its Health.Event), not the KFD's */
        if (c->health.kinds && mask == 0)
                return cli_fail(c, -EINVAL, "--kind health and cper are amdsmid's events: "
                                            "without amdsmid (or with --direct) there are none");
        if (!c->set.ctx) { /* a fallback above opened it already */
                r = cli_open(c);
                if (r < 0)
                        return r;
        }
        FOREACH_SELECTED_GPU(c, i, gpu)
        max += amdsmi_gpu_get_partition_count(gpu);
        src = calloc(max ? max : 1, sizeof(*src));
        pfd = calloc(max + 1, sizeof(*pfd));
        if (!src || !pfd)
                return cli_fail(c, -ENOMEM, "out of memory");
        FOREACH_SELECTED_GPU(c, i, gpu) {
                size_t np = amdsmi_gpu_get_partition_count(gpu);

                if (np == 0)
                        fprintf(stderr, "amdsmi: GPU %zu: no KFD node: no events\n", i);
                for (size_t p = 0; p < np; p++) {
                        struct amdsmi_partition *part = amdsmi_gpu_get_partition(gpu, p);

                        if (!part || !select_match_partition(&c->set.matches[i], (unsigned) p))
                                continue;
                        r = amdsmi_partition_open_events(
                                part, mask | AMDSMI_EVENT_MASK_ALL_PROCESSES, &src[n].events);
                        if (r < 0) {
                                r = cli_fail(c, r,
                                             "GPU %zu.%zu: cannot subscribe to its KFD events: %s",
                                             i, p,
                                             r == -EACCES ? "permission denied (/dev/kfd)"
                                             : r == -EOPNOTSUPP
                                                     ? "the KFD has no SMI events (older than 1.3)"
                                                     : strerror(-r));
                                goto finish;
                        }
                        src[n].index = i;
                        src[n].gpu = gpu;
                        src[n].partition = (unsigned) p;
                        n++;
                }
        }
        if (n == 0) {
                r = cli_fail(c, -ENODEV, "no KFD node among the selected GPUs: no events");
                goto finish;
        }
        r = columns_add_defs(&cols, event_columns, ELEMENTSOF(event_columns));
        if (r < 0) {
                r = cli_fail(c, r, "out of memory");
                goto finish;
        }
        sfd = signals_fd(c);
        if (sfd < 0) {
                r = sfd;
                goto finish;
        }
        pfd[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
        for (size_t k = 0; k < n; k++)
                pfd[k + 1] = (struct pollfd){ .fd = amdsmi_events_get_fd(src[k].events),
                                              .events = POLLIN };
        for (;;) {
                r = poll(pfd, n + 1, -1);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        r = cli_fail(c, -errno, "poll: %s", strerror(errno));
                        break;
                }
                if (pfd[0].revents) {
                        r = 0; /* SIGINT or SIGTERM: the end of the stream */
                        break;
                }
                for (size_t k = 0; k < n; k++) {
                        struct amdsmi_event ev[16];
                        int m;

                        if (!pfd[k + 1].revents)
                                continue;
                        while ((m = amdsmi_events_read(src[k].events, ev, ELEMENTSOF(ev))) > 0) {
                                json_object *rows = json_object_new_array();

                                for (int e = 0; rows && e < m; e++) {
                                        if (ev[e].partition < 0)
                                                ev[e].partition = (int) src[k].partition;
                                        if (ev[e].kind != AMDSMI_EVENT_UNKNOWN &&
                                            !(mask & AMDSMI_EVENT_MASK(ev[e].kind)))
                                                continue;
                                        json_object_array_add(
                                                rows,
                                                health_event_json((int) src[k].index,
                                                                  amdsmi_gpu_get_bdf(src[k].gpu),
                                                                  &ev[e]));
                                }
                                r = print_event_rows(c, &cols, rows, &header);
                                if (r < 0) {
                                        r = cli_fail(c, r, "cannot print: %s", strerror(-r));
                                        goto finish;
                                }
                        }
                        if (m == -ENODEV) {
                                r = cli_fail(c, m, "GPU %zu.%u: its KFD node went away",
                                             src[k].index, src[k].partition);
                                goto finish;
                        }
                        if (m < 0) {
                                r = cli_fail(c, m, "GPU %zu.%u: cannot read its events: %s",
                                             src[k].index, src[k].partition, strerror(-m));
                                goto finish;
                        }
                }
        }
finish:
        for (size_t k = 0; k < n; k++)
                amdsmi_events_close(src[k].events);
        columns_free(&cols);
        return r;
}
