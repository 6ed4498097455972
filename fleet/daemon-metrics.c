/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's Prometheus families (amdsmid(8) METRICS): what /metrics and the textfile say.
 *
 * A collection builds the documents the renderer takes (metrics.h: list, static, metric,
 * ras, power, partition, health, sriov and, once amdsmid has it, apply) with the
 * builders GetDocument uses (document_build_all()), as root and without opening a device node:
 * metric and power from the sampler's samples, a GPU under a change left out of the documents
 * that read partition files. A collection younger than [metrics] interval_ms is not repeated:
 * a scrape within that period gets the rendering cached for its format (one text per format),
 * so scrapes never read the GPUs more often than the sampler, whatever their number.
 *
 * The textfile ([metrics] textfile): the text format written every interval_ms, atomically (a
 * temporary file in the same directory, fsync, rename; 0644), for node_exporter's textfile
 * collector. Its failures (a missing directory, a full disk) are logged once per change of
 * state and are never fatal.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "amdsmid-conf.h"
#include "amdsmid.h"
#include "daemon-metrics.h"
#include "gpu-set.h"
#include "runtime-dir.h"

/* The documents of a collection, in struct metrics_input's order. */
static const char *const verbs[] = {
        "list", "static", "metric", "ras", "power", "partition", "health", "sriov", "apply",
};
#define N_VERBS ELEMENTSOF(verbs)
#define N_FORMATS 2

struct daemon_metrics {
        json_object *docs[N_VERBS]; /* of the last collection (NULL: not built) */
        bool up;                    /* every document there is was built */
        bool collected;
        uint64_t collected_usec; /* when it started (CLOCK_MONOTONIC) */
        uint64_t collect_usec;   /* how long it took */
        uint64_t generation;     /* counts collections */
        struct {
                char *text;
                size_t size;
                uint64_t generation;  /* the collection it renders */
                uint64_t render_usec; /* how long its last rendering took */
        } cache[N_FORMATS];

        /* the static document (identity, firmware, link: what changes with a driver reload
         * or a GPU that comes or goes, which daemon_metrics_invalidate() is told of) is
         * built again at most every STATIC_MAX_AGE_USEC */
        json_object *kept_static;
        uint64_t kept_static_usec;

        /* [metrics] textfile */
        sd_event_source *textfile_timer;
        char *textfile;      /* the path in force (a copy of the configuration's) */
        int textfile_state;  /* of the last write: 0 written, < 0 its error */
        bool textfile_tried; /* a write was tried since the path was set */
};

static struct daemon_metrics *metrics(struct daemon *d) {
        if (!d->metrics)
                d->metrics = calloc(1, sizeof(*d->metrics));
        return d->metrics;
}

#define STATIC_MAX_AGE_USEC (UINT64_C(60) * 1000 * 1000)

static void drop_documents(struct daemon_metrics *m) {
        for (size_t i = 0; i < N_VERBS; i++) {
                json_object_put(m->docs[i]);
                m->docs[i] = NULL;
        }
        m->collected = false;
}

static void drop_kept(struct daemon_metrics *m) {
        json_object_put(m->kept_static);
        m->kept_static = NULL;
}

void daemon_metrics_invalidate(struct daemon *d) {
        if (d->metrics)
                drop_kept(d->metrics);
}

/* The document of verbs[@i] for a collection starting at @start. */
static int build(struct daemon *d, struct daemon_metrics *m, size_t i, uint64_t start) {
        bool is_static = strcmp(verbs[i], "static") == 0;
        int r;

        if (is_static && m->kept_static && start - m->kept_static_usec < STATIC_MAX_AGE_USEC) {
                m->docs[i] = json_object_get(m->kept_static);
                return 0;
        }
        r = document_build_all(d, verbs[i], &m->docs[i]);
        if (r >= 0 && is_static) {
                drop_kept(m);
                m->kept_static = json_object_get(m->docs[i]);
                m->kept_static_usec = start;
        }
        return r;
}

static void collect(struct daemon *d, struct daemon_metrics *m) {
        uint64_t start = now_usec(CLOCK_MONOTONIC);

        drop_documents(m);
        m->up = true;
        gpu_state_batch_begin(); /* one readiness read per GPU, not one per document */
        for (size_t i = 0; i < N_VERBS; i++) {
                int r = build(d, m, i, start);

                if (r == -EINVAL && strcmp(verbs[i], "apply") == 0)
                        continue; /* no such verb in this amdsmid: its families are left out */
                if (r < 0) {
                        log_debug("metrics: the %s document cannot be built: %s", verbs[i],
                                  strerror(-r));
                        m->docs[i] = NULL;
                        m->up = false;
                }
        }
        gpu_state_batch_end();
        m->collected = true;
        m->collected_usec = start;
        m->collect_usec = now_usec(CLOCK_MONOTONIC) - start;
        m->generation++;
}

int daemon_metrics_get(struct daemon *d, enum metrics_format f, const char **ret, size_t *ret_size,
                       uint64_t *ret_generation) {
        struct daemon_metrics *m = metrics(d);
        uint64_t now = now_usec(CLOCK_MONOTONIC), start, interval, slack;
        struct metrics_input in;
        char *text = NULL;
        size_t size = 0;
        int r;

        if (!m)
                return -ENOMEM;
        if ((unsigned) f >= N_FORMATS)
                return -EINVAL;
        /* a tenth of the interval early (at most 100 ms): a scraper at exactly the interval
         * (Prometheus' scrape_interval = interval_ms) would otherwise get the previous
         * rendering about every other scrape, as its scrapes jitter around the boundary */
        interval = sampler_interval_usec(d);
        slack = interval / 10 < 100000 ? interval / 10 : 100000;
        if (!m->collected || now - m->collected_usec + slack >= interval)
                collect(d, m);
        else
                sampler_use(d); /* a scrape is a consumer of the samples, also when cached */
        if (m->cache[f].text && m->cache[f].generation == m->generation)
                goto done;

        in = (struct metrics_input){
                .list = m->docs[0],
                .static_doc = m->docs[1],
                .metric = m->docs[2],
                .ras = m->docs[3],
                .power = m->docs[4],
                .partition = m->docs[5],
                .health = m->docs[6],
                .sriov = m->docs[7],
                .apply = m->docs[8],
                .identity = d->config ? d->config->metrics_identity : true,
                .up = m->up,
                /* the last collection and rendering: this collection, and the rendering of
                 * this format the last time (this one's is not known before it ends) */
                .scrape_duration_s = (double) (m->collect_usec + m->cache[f].render_usec) / 1e6,
        };
        start = now_usec(CLOCK_MONOTONIC);
        r = metrics_render(&in, f, &text, &size);
        if (r < 0)
                return r;
        free(m->cache[f].text);
        m->cache[f].text = text;
        m->cache[f].size = size;
        m->cache[f].generation = m->generation;
        m->cache[f].render_usec = now_usec(CLOCK_MONOTONIC) - start;
done:
        *ret = m->cache[f].text;
        if (ret_size)
                *ret_size = m->cache[f].size;
        if (ret_generation)
                *ret_generation = m->generation * N_FORMATS + (uint64_t) f;
        return 0;
}

/* ---- the textfile ----------------------------------------------------------------------- */

/* Writes @size bytes of @data to @path atomically: a hidden file beside it (node_exporter
 * reads *.prom only), fsync, rename over @path; 0644 whatever the umask, since node_exporter
 * reads it as its user. */
static int write_atomic(const char *path, const char *data, size_t size) {
        _cleanup_close_ int dfd = -EBADF;
        _cleanup_free_ char *dir = NULL;
        const char *base = strrchr(path, '/');

        if (!base || base[1] == '\0')
                return -EINVAL;
        dir = base == path ? strdup("/") : strndup(path, (size_t) (base - path));
        if (!dir)
                return -ENOMEM;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        return write_file_atomic_at(dfd, base + 1, data, size, 0644, NULL);
}

static void textfile_write(struct daemon *d, struct daemon_metrics *m) {
        const char *text;
        size_t size;
        int r;

        r = daemon_metrics_get(d, METRICS_FORMAT_TEXT, &text, &size, NULL);
        if (r >= 0)
                r = write_atomic(m->textfile, text, size);
        /* once per change of state: a directory that is missing for days logs one line */
        if (m->textfile_tried && r == m->textfile_state)
                return;
        if (r == -ENOENT)
                log_warning("cannot write the metrics textfile %s: its directory does not exist "
                            "(tried again every interval, said again once it works)",
                            m->textfile);
        else if (r < 0)
                log_warning("cannot write the metrics textfile %s: %s (tried again every "
                            "interval, said again once it works)",
                            m->textfile, strerror(-r));
        else if (m->textfile_tried)
                log_info("the metrics textfile %s is written again", m->textfile);
        else
                log_debug("metrics textfile %s written", m->textfile);
        m->textfile_tried = true;
        m->textfile_state = r;
}

static int on_textfile(sd_event_source *s, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        struct daemon_metrics *m = d->metrics;

        if (m && m->textfile)
                textfile_write(d, m);
        return sd_event_source_set_time(s, now_usec(CLOCK_MONOTONIC) + sampler_interval_usec(d));
}

void daemon_metrics_config(struct daemon *d) {
        struct daemon_metrics *m = metrics(d);
        const char *want = d->config ? d->config->metrics_textfile : NULL;

        if (!m) {
                log_warning("metrics: out of memory");
                return;
        }
        /* identity or the interval may have changed: the next scrape collects again */
        drop_documents(m);
        drop_kept(m);
        for (size_t f = 0; f < N_FORMATS; f++) {
                free(m->cache[f].text);
                m->cache[f].text = NULL;
        }

        if (!want || !m->textfile || strcmp(want, m->textfile) != 0) {
                free(m->textfile);
                m->textfile = want ? strdup(want) : NULL;
                m->textfile_tried = false;
                m->textfile_state = 0;
                if (want && !m->textfile)
                        log_warning("metrics: out of memory: no textfile");
                else if (want)
                        log_info("writing the metrics textfile %s every %u ms", want,
                                 d->config->metrics_interval_ms);
        }
        /* the textfile consumes the samples for good: the sampler never stops meanwhile */
        d->sampler_always = m->textfile != NULL;
        if (!m->textfile) {
                m->textfile_timer = sd_event_source_disable_unref(m->textfile_timer);
                return;
        }
        sampler_use(d);
        if (!m->textfile_timer) {
                if (sd_event_add_time(d->event, &m->textfile_timer, CLOCK_MONOTONIC, 0, 10000,
                                      on_textfile, d) < 0 ||
                    sd_event_source_set_enabled(m->textfile_timer, SD_EVENT_ON) < 0)
                        log_warning("cannot start writing the metrics textfile %s", m->textfile);
                return;
        }
        /* at once with the new configuration, then every interval */
        (void) sd_event_source_set_time(m->textfile_timer, 0);
        (void) sd_event_source_set_enabled(m->textfile_timer, SD_EVENT_ON);
}

void daemon_metrics_done(struct daemon *d) {
        struct daemon_metrics *m = d->metrics;

        if (!m)
                return;
        drop_documents(m);
        drop_kept(m);
        for (size_t f = 0; f < N_FORMATS; f++)
                free(m->cache[f].text);
        sd_event_source_disable_unref(m->textfile_timer);
        free(m->textfile);
        free(m);
        d->metrics = NULL;
}
