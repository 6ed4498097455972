/* SPDX-License-Identifier: MIT */
/* The last two gpu_metrics samples of each GPU and the limiters between them (samples.h). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json-util.h"
#include "samples.h"
#include "time-util.h"

#define PPM_PER_TENTH_PCT 1000 /* 1000 ppm = 0.1 % */

struct sample_pair *samples_get(struct samples *s, const char *bdf) {
        struct sample_pair *p;

        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->pairs[i].bdf, bdf) == 0)
                        return s->pairs + i;
        p = realloc(s->pairs, (s->n + 1) * sizeof(*p));
        if (!p)
                return NULL;
        s->pairs = p;
        p = s->pairs + s->n++;
        *p = (struct sample_pair){};
        snprintf(p->bdf, sizeof(p->bdf), "%s", bdf);
        return p;
}

void samples_clear(struct samples *s) {
        free(s->pairs);
        *s = (struct samples){};
}

/* Adds the new pair's share of each limiter to the seconds counted so far. */
static void throttle_add(struct sample_pair *p) {
        struct amdsmi_limiters l = { .size = sizeof(l) };
        double interval_s;

        if (!p->prev.valid || amdsmi_limiters_compute(&p->prev.m, &p->cur.m, &l) < 0)
                return;
        interval_s = l.interval_ns != AMDSMI_NA ? (double) l.interval_ns / 1e9
                                                : (double) (p->cur.usec - p->prev.usec) / 1e6;
        const uint64_t ppm[] = { l.ppt_ppm, l.socket_thermal_ppm, l.hbm_thermal_ppm,
                                 l.vr_thermal_ppm, l.prochot_ppm };
        for (size_t i = 0; i < sizeof(ppm) / sizeof(ppm[0]); i++)
                if (ppm[i] != AMDSMI_NA)
                        p->throttle_s[i] += interval_s * (double) ppm[i] / 1e6;
        p->throttle_known = true;
}

int sample_pair_update(struct sample_pair *p, struct amdsmi_gpu *gpu, uint64_t max_age_usec) {
        uint64_t now = now_monotonic_us();
        struct sample next = { .m.size = sizeof(next.m) };
        int r;

        if (p->cur.valid && max_age_usec > 0 && now - p->cur.usec < max_age_usec)
                return 0;
        r = amdsmi_gpu_read_metrics_ext(gpu, &next.m, p->reason, sizeof(p->reason));
        p->error = r;
        if (r < 0)
                return r;
        next.valid = true;
        next.usec = now;
        p->prev = p->cur;
        p->cur = next;
        throttle_add(p);
        return 0;
}

/* ppm as a percentage with one decimal (rounded), null when unknown */
static json_object *pct(uint64_t ppm) {
        if (ppm == AMDSMI_NA)
                return NULL;
        return json_scaled_u64((ppm + PPM_PER_TENTH_PCT / 2) / PPM_PER_TENTH_PCT, 1);
}

static const char *const shares[] = {
        "power_pct", "socket_thermal_pct", "hbm_thermal_pct", "vr_thermal_pct", "prochot_pct",
};

/* {power, socket_thermal, ...}: the seconds counted so far (ms), null before a first pair */
static json_object *throttle_seconds(const struct sample_pair *p) {
        static const char *const names[] = {
                "power", "socket_thermal", "hbm_thermal", "vr_thermal", "prochot",
        };
        json_object *o;

        if (!p || !p->throttle_known || !(o = json_object_new_object()))
                return NULL;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                json_object_object_add(o, names[i],
                                       json_scaled_u64((uint64_t) (p->throttle_s[i] * 1000 + 0.5), 3));
        return o;
}

json_object *limiters_json(const struct sample_pair *p, const struct power_limit *limit) {
        struct amdsmi_limiters l = { .size = sizeof(l) };
        const char *status;
        json_object *o, *xcc, *pl;
        int r = -ENODATA;

        o = json_object_new_object();
        if (!o)
                return NULL;
        if (!p || !p->cur.valid || !p->prev.valid)
                status = "one_sample";
        else {
                r = amdsmi_limiters_compute(&p->prev.m, &p->cur.m, &l);
                status = r == 0 ? "measured"
                         : r == -ENODATA ? "not_available"
                         : r == -EAGAIN  ? "too_close"
                         : r == -ESTALE  ? "restarted"
                                         : "one_sample";
        }
        json_object_object_add(o, "status", json_object_new_string(status));
        if (r < 0) {
                json_object_object_add(o, "interval_s", NULL);
                json_object_object_add(o, "ticks", NULL);
                for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++)
                        json_object_object_add(o, shares[i], NULL);
                json_object_object_add(o, "power_limit", NULL);
                json_object_object_add(o, "xcc", json_object_new_array());
                json_object_object_add(o, "throttle_seconds_total", throttle_seconds(p));
                return o;
        }

        /* the driver's clock where the table has it, else when we read the samples */
        json_object_object_add(o, "interval_s",
                               l.interval_ns != AMDSMI_NA
                                       ? json_scaled_u64(l.interval_ns / 1000000, 3)
                                       : json_scaled_u64((p->cur.usec - p->prev.usec) / 1000, 3));
        json_object_object_add(o, "ticks", json_object_new_uint64(l.ticks));
        json_object_object_add(o, "power_pct", pct(l.ppt_ppm));
        json_object_object_add(o, "socket_thermal_pct", pct(l.socket_thermal_ppm));
        json_object_object_add(o, "hbm_thermal_pct", pct(l.hbm_thermal_ppm));
        json_object_object_add(o, "vr_thermal_pct", pct(l.vr_thermal_ppm));
        json_object_object_add(o, "prochot_pct", pct(l.prochot_ppm));

        pl = NULL;
        if (limit && limit->source[0]) {
                pl = json_object_new_object();
                if (pl) {
                        json_object_object_add(pl, "source", json_object_new_string(limit->source));
                        json_object_object_add(pl, "key", limit->key[0]
                                                                  ? json_object_new_string(limit->key)
                                                                  : NULL);
                        json_object_object_add(pl, "cap_w", json_scaled_u64(limit->cap_uw, 6));
                }
        }
        json_object_object_add(o, "power_limit", pl);

        xcc = json_object_new_array();
        for (unsigned x = 0; xcc && x < AMDSMI_METRICS_MAX_XCC; x++) {
                json_object *e;

                if (l.xcc_below_host_limit_ppt_ppm[x] == AMDSMI_NA &&
                    l.xcc_below_host_limit_thm_ppm[x] == AMDSMI_NA &&
                    l.xcc_below_host_limit_total_ppm[x] == AMDSMI_NA &&
                    l.xcc_low_utilization_ppm[x] == AMDSMI_NA)
                        continue;
                e = json_object_new_object();
                if (!e)
                        break;
                json_object_object_add(e, "xcc", json_object_new_uint64(x));
                json_object_object_add(e, "below_host_limit_ppt_pct",
                                       pct(l.xcc_below_host_limit_ppt_ppm[x]));
                json_object_object_add(e, "below_host_limit_thm_pct",
                                       pct(l.xcc_below_host_limit_thm_ppm[x]));
                json_object_object_add(e, "below_host_limit_total_pct",
                                       pct(l.xcc_below_host_limit_total_ppm[x]));
                json_object_object_add(e, "low_utilization_pct",
                                       pct(l.xcc_low_utilization_ppm[x]));
                json_object_array_add(xcc, e);
        }
        json_object_object_add(o, "xcc", xcc);
        json_object_object_add(o, "throttle_seconds_total", throttle_seconds(p));
        return o;
}

/* a share in tenths of a percent, -1 when unknown */
static int64_t tenths(json_object *o, const char *key) {
        json_object *v;

        if (!o || !json_object_object_get_ex(o, key, &v) || !v)
                return -1;
        return (int64_t) (json_object_get_double(v) * 10 + 0.5);
}

static const char *const short_names[] = { "power", "thermal", "hbm", "vr", "prochot" };

void limiters_text(json_object *limiters, char *buf, size_t size) {
        int64_t best = -1;
        size_t which = 0;
        bool known = false;

        for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++) {
                int64_t t = tenths(limiters, shares[i]);

                if (t < 0)
                        continue;
                known = true;
                if (t > best) {
                        best = t;
                        which = i;
                }
        }
        if (!known)
                snprintf(buf, size, "-");
        else if (best < 10)
                snprintf(buf, size, "none");
        else
                snprintf(buf, size, "%s %" PRId64 "%%", short_names[which], (best + 5) / 10);
}

void limiters_power_sentence(json_object *limiters, char *buf, size_t size) {
        json_object *pl = NULL, *v;
        int64_t t = tenths(limiters, "power_pct");
        char interval[32] = "?", cap[32] = "";
        const char *source = NULL, *key = NULL;
        size_t n;

        buf[0] = '\0';
        if (t < 10)
                return;
        if (json_object_object_get_ex(limiters, "interval_s", &v) && v)
                snprintf(interval, sizeof(interval), "%.1f s", json_object_get_double(v));
        if (json_object_object_get_ex(limiters, "power_limit", &pl) && pl) {
                if (json_object_object_get_ex(pl, "source", &v) && v)
                        source = json_object_get_string(v);
                if (json_object_object_get_ex(pl, "key", &v) && v)
                        key = json_object_get_string(v);
                if (json_object_object_get_ex(pl, "cap_w", &v) && v)
                        snprintf(cap, sizeof(cap), "the %s W cap", json_object_get_string(v));
        }
        n = (size_t) snprintf(buf, size, "the power limiter held the GPU %" PRId64 ".%" PRId64
                              " %% of the last %s",
                              t / 10, t % 10, interval);
        if (n >= size || !source)
                return;
        if (strcmp(source, "external") == 0)
                snprintf(buf + n, size - n, " at %s, held below our cap by an external limiter",
                         cap[0] ? cap : "a cap");
        else if (strcmp(source, "default") == 0)
                snprintf(buf + n, size - n, " at %s (the default: no source set)",
                         cap[0] ? cap : "the cap");
        else
                snprintf(buf + n, size - n, " at %s set by %s%s%s", cap[0] ? cap : "the cap", source,
                         key ? " " : "", key ? key : "");
}
