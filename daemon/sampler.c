/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's telemetry sampler: the last two gpu_metrics samples of every GPU, from which
 * GetMetrics() and Power.Explain() say which limiter held each GPU (samples.h).
 *
 * It runs only while someone consumes samples: each GetMetrics() or Explain() keeps it
 * running for SAMPLER_KEEP_INTERVALS periods of [metrics] interval_ms (default 1 s), then it
 * stops and costs nothing. A consumer finds two samples at most SAMPLER_MAX_WINDOW_USEC
 * apart (the sampler's, or its previous sample and one read now) and is answered at once;
 * only when no sample that recent exists (the first call after a long idle) is the reply
 * held back for SAMPLER_SETTLE_MS, while a first sample and then a second are read.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "amdsmid.h"
#include "amdsmid-conf.h"
#include "samples.h"
#include "bus-errors.h"

#define SAMPLER_KEEP_INTERVALS 5
#define SAMPLER_MAX_WINDOW_USEC (60 * USEC_PER_SEC)
#define SAMPLER_SETTLE_MS 100
#ifndef USEC_PER_SEC
#define USEC_PER_SEC UINT64_C(1000000)
#endif

struct pending {
        struct pending *next;
        struct daemon *d;
        sd_event_source *timer; /* SAMPLER_SETTLE_MS after this request's first samples */
        sd_bus_message *m;
        char bdf[16];           /* the GPU of a per-GPU method; "" for the manager */
        sampler_reply_fn fn;
};

struct samples *sampler_samples(struct daemon *d) {
        if (!d->samples)
                d->samples = calloc(1, sizeof(*d->samples));
        return d->samples;
}

uint64_t sampler_interval_usec(struct daemon *d) {
        unsigned ms = d->config ? d->config->metrics_interval_ms : CONFIG_METRICS_INTERVAL_MS_DEFAULT;

        return (uint64_t) (ms ? ms : CONFIG_METRICS_INTERVAL_MS_DEFAULT) * 1000;
}

static uint64_t max_window(struct daemon *d) {
        uint64_t w = 10 * sampler_interval_usec(d);

        return w > SAMPLER_MAX_WINDOW_USEC ? w : SAMPLER_MAX_WINDOW_USEC;
}

/* Whether the document built now would find two samples of @gpu close enough. */
static bool pair_ready(struct daemon *d, struct amdsmi_gpu *gpu, uint64_t now) {
        struct sample_pair *p = d->samples ? samples_get(d->samples, amdsmi_gpu_get_bdf(gpu)) : NULL;

        if (!p || !p->cur.valid)
                return false;
        if (now - p->cur.usec < sampler_interval_usec(d))
                /* the current sample is shown again: its window is the one it has */
                return p->prev.valid && p->cur.usec - p->prev.usec <= max_window(d);
        /* a new sample is read: the window is the current sample's age */
        return now - p->cur.usec <= max_window(d);
}

static void take(struct daemon *d, struct amdsmi_gpu *gpu, uint64_t max_age) {
        struct sample_pair *p = sampler_samples(d) ? samples_get(d->samples, amdsmi_gpu_get_bdf(gpu))
                                                   : NULL;

        if (p)
                (void) sample_pair_update(p, gpu, max_age);
}

/* The GPUs a request concerns: @bdf, or every GPU (""). */
static struct amdsmi_gpu *request_gpu(struct dgpu *g, const char *sel) {
        if (!g->present || (sel[0] && strcmp(g->bdf, sel) != 0))
                return NULL;
        return dgpu_handle(g);
}

#define FOREACH_REQUEST_GPU(d, sel, gpu)                                                     \
        for (size_t _i = 0; _i < (d)->n_gpus; _i++)                                           \
                for (struct amdsmi_gpu *gpu = request_gpu((d)->gpus[_i], (sel)); gpu; gpu = NULL)

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        uint64_t now = now_usec(CLOCK_MONOTONIC), interval = sampler_interval_usec(d);

        if (d->sampler_always)
                d->sampler_used_usec = now;
        if (now - d->sampler_used_usec > SAMPLER_KEEP_INTERVALS * interval) {
                /* nobody asked for a while: stop until someone does */
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
                return 0;
        }
        /* a sample a request read moments ago counts as this period's */
        FOREACH_REQUEST_GPU(d, "", gpu)
                take(d, gpu, interval / 2);
        (void) sd_event_source_set_time(s, now + interval);
        return 0;
}

void sampler_use(struct daemon *d) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int enabled = SD_EVENT_OFF;

        d->sampler_used_usec = now;
        if (!d->sampler_timer) {
                if (sd_event_add_time(d->event, &d->sampler_timer, CLOCK_MONOTONIC,
                                      now + sampler_interval_usec(d), 10000, on_tick, d) < 0) {
                        log_warning("cannot start the telemetry sampler");
                        return;
                }
                return;
        }
        if (sd_event_source_get_enabled(d->sampler_timer, &enabled) >= 0 && enabled == SD_EVENT_OFF) {
                (void) sd_event_source_set_time(d->sampler_timer, now + sampler_interval_usec(d));
                (void) sd_event_source_set_enabled(d->sampler_timer, SD_EVENT_ON);
        }
}

static void pending_free(struct pending *p) {
        sd_event_source_unref(p->timer);
        sd_bus_message_unref(p->m);
        free(p);
}

static void pending_unlink(struct daemon *d, struct pending *p) {
        for (struct pending **i = &d->sampler_pending; *i; i = &(*i)->next)
                if (*i == p) {
                        *i = p->next;
                        break;
                }
}

static int on_settled(sd_event_source *s, uint64_t usec, void *userdata) {
        struct pending *p = userdata;
        struct daemon *d = p->d;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        void *target = d;
        int r;

        pending_unlink(d, p);
        /* the second sample of every GPU the request concerns (one a later request read
         * moments ago serves), then the reply */
        FOREACH_REQUEST_GPU(d, p->bdf, gpu)
                take(d, gpu, SAMPLER_SETTLE_MS * 1000 / 2);
        if (p->bdf[0]) {
                struct dgpu *g = manager_find_gpu(d, p->bdf);

                target = g && g->present ? g : NULL;
        }
        d->sampler_replaying = true;
        if (!target)
                r = bus_error_errno(&error, -ENODEV, "GPU %s is gone", p->bdf);
        else
                r = p->fn(p->m, target, &error);
        d->sampler_replaying = false;
        if (r < 0 || sd_bus_error_is_set(&error))
                (void) sd_bus_reply_method_error(p->m, &error);
        sd_bus_error_free(&error);
        pending_free(p);
        return 0;
}

int sampler_prepare(struct daemon *d, sd_bus_message *m, const char *bdf, sampler_reply_fn fn) {
        struct pending *p;
        bool ready = true;
        int r;

        sampler_use(d);
        if (d->sampler_replaying)
                return 0; /* a held request: answer with what there is now */
        if (!bdf)
                bdf = "";
        FOREACH_REQUEST_GPU(d, bdf, gpu)
                if (!pair_ready(d, gpu, now_usec(CLOCK_MONOTONIC))) {
                        take(d, gpu, 0);
                        ready = false;
                }
        if (ready)
                return 0;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->d = d;
        p->m = sd_bus_message_ref(m);
        snprintf(p->bdf, sizeof(p->bdf), "%s", bdf);
        p->fn = fn;
        /* counted from now, after the first samples: a relative timer would count from the
         * start of this loop iteration, and slow first reads would eat the settle time */
        r = sd_event_add_time(d->event, &p->timer, CLOCK_MONOTONIC,
                              now_usec(CLOCK_MONOTONIC) + SAMPLER_SETTLE_MS * 1000, 1000,
                              on_settled, p);
        if (r < 0) {
                pending_free(p);
                return 0; /* answer now, with one sample */
        }
        p->next = d->sampler_pending;
        d->sampler_pending = p;
        return 1;
}

void sampler_done(struct daemon *d) {
        while (d->sampler_pending) {
                struct pending *p = d->sampler_pending;

                d->sampler_pending = p->next;
                pending_free(p);
        }
        d->sampler_timer = sd_event_source_unref(d->sampler_timer);
        if (d->samples)
                samples_clear(d->samples);
        free(d->samples);
        d->samples = NULL;
}
