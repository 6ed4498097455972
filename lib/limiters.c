/* SPDX-License-Identifier: MIT */
/*
 * Why a GPU was slow: the share of an interval each limiter held it, from two gpu_metrics
 * samples (1.6+). The firmware counts in ticks of accumulation_counter; each *_residency_acc
 * counts the ticks its limiter was active, and the per-XCC gfx_below_host_limit_*_acc count
 * the ticks that XCC's clock stayed below the host's limit. A share is Δresidency / Δticks.
 *
 * The u32 counters wrap; a counter that went backwards wrapped once at its width. A GPU
 * whose clocks went backwards restarted its counters (a reset, a driver reload): nothing can
 * be said about that interval.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "private.h"

#define PPM 1000000u

static uint64_t delta(uint64_t prev, uint64_t cur, unsigned bits) {
        uint64_t mask = bits == 0 || bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;

        return (cur - prev) & mask;
}

/* @prev..@cur of a counter of @bits as a share of @ticks, in ppm, at most the whole interval;
 * AMDSMI_NA if either sample lacks it. */
static uint64_t share(uint64_t prev, uint64_t cur, unsigned bits, uint64_t ticks) {
        unsigned __int128 v;

        if (prev == AMDSMI_NA || cur == AMDSMI_NA)
                return AMDSMI_NA;
        /* a 64-bit counter never wraps in practice: going backwards means it restarted */
        if (bits >= 64 && cur < prev)
                return AMDSMI_NA;
        v = (unsigned __int128) delta(prev, cur, bits) * PPM / ticks;
        return v > PPM ? PPM : (uint64_t) v;
}

static bool went_back(uint64_t prev, uint64_t cur) {
        return prev != AMDSMI_NA && cur != AMDSMI_NA && cur < prev;
}

_public_ int amdsmi_limiters_compute(const struct amdsmi_gpu_metrics_ext *prev,
                                     const struct amdsmi_gpu_metrics_ext *cur,
                                     struct amdsmi_limiters *ret_limiters) {
        const struct amdsmi_gpu_metrics *a, *b;
        struct amdsmi_limiters *l = ret_limiters;
        unsigned acc_bits, res_bits;
        uint64_t ticks;

        if (!prev || !cur || !l || prev->size < sizeof(*prev) || cur->size < sizeof(*cur) ||
            l->size < sizeof(*l))
                return -EINVAL;
        a = &prev->base;
        b = &cur->base;
        if (a->accumulation_counter == AMDSMI_NA || b->accumulation_counter == AMDSMI_NA)
                return -ENODATA;
        /* the driver clock and the firmware clock only go forward between two samples of a
         * GPU that kept running; a counter width that changed means another driver */
        if (went_back(a->system_clock_counter_ns, b->system_clock_counter_ns) ||
            went_back(a->firmware_timestamp_ns, b->firmware_timestamp_ns) ||
            prev->accumulation_counter_bits != cur->accumulation_counter_bits)
                return -ESTALE;

        acc_bits = cur->accumulation_counter_bits ? cur->accumulation_counter_bits : 32;
        res_bits = cur->residency_bits ? cur->residency_bits : 32;
        if (prev->residency_bits && prev->residency_bits < res_bits)
                res_bits = prev->residency_bits;
        if (acc_bits >= 64 && b->accumulation_counter < a->accumulation_counter)
                return -ESTALE;
        ticks = delta(a->accumulation_counter, b->accumulation_counter, acc_bits);
        if (ticks == 0)
                return -EAGAIN;

        memset((uint8_t *) l + offsetof(struct amdsmi_limiters, version), 0xff,
               sizeof(*l) - offsetof(struct amdsmi_limiters, version));
        l->version = AMDSMI_LIMITERS_VERSION;
        l->ticks = ticks;
        l->interval_ns = a->system_clock_counter_ns != AMDSMI_NA &&
                                         b->system_clock_counter_ns != AMDSMI_NA
                                 ? b->system_clock_counter_ns - a->system_clock_counter_ns
                                 : AMDSMI_NA;
        l->ppt_ppm = share(a->ppt_residency_acc, b->ppt_residency_acc, res_bits, ticks);
        l->socket_thermal_ppm =
                share(a->socket_thm_residency_acc, b->socket_thm_residency_acc, res_bits, ticks);
        l->hbm_thermal_ppm = share(a->hbm_thm_residency_acc, b->hbm_thm_residency_acc, res_bits, ticks);
        l->vr_thermal_ppm = share(a->vr_thm_residency_acc, b->vr_thm_residency_acc, res_bits, ticks);
        l->prochot_ppm = share(a->prochot_residency_acc, b->prochot_residency_acc, res_bits, ticks);
        for (unsigned x = 0; x < AMDSMI_METRICS_MAX_XCC; x++) {
                l->xcc_below_host_limit_ppt_ppm[x] = share(prev->xcc_below_host_limit_ppt_acc[x],
                                                           cur->xcc_below_host_limit_ppt_acc[x], 64,
                                                           ticks);
                l->xcc_below_host_limit_thm_ppm[x] = share(prev->xcc_below_host_limit_thm_acc[x],
                                                           cur->xcc_below_host_limit_thm_acc[x], 64,
                                                           ticks);
                l->xcc_below_host_limit_total_ppm[x] =
                        share(prev->xcc_below_host_limit_total_acc[x],
                              cur->xcc_below_host_limit_total_acc[x], 64, ticks);
                l->xcc_low_utilization_ppm[x] = share(prev->xcc_low_utilization_acc[x],
                                                      cur->xcc_low_utilization_acc[x], 64, ticks);
        }
        return 0;
}
