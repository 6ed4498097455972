/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: living telemetry (spec amdgpu-sysfs.md §4.2, §5, §9 rule 5).
 *
 * Time advances in steps of 100 ms of the simulator's monotonic clock. At each step every
 * GPU's activity takes a bounded random walk, power follows activity below the enforced cap,
 * temperatures follow power, and the counters (energy, activity, residencies, XGMI and PCIe
 * traffic, the gpu_metrics clocks) add what the step did: counters only move forward. The
 * value of step k depends only on the seed, the GPU and k, so a run is reproducible with
 * --seed; with --frozen time stays at step 0 and every value is the description's.
 *
 * The accumulation counter advances SIM_ACC_TICKS_PER_STEP (100) ticks per step, 1 kHz; the
 * activity accumulators add their percentage per tick, the residency counters and the per-XCC
 * below-host-limit accumulators the ticks their limiter held the GPU: all of a step's ticks when
 * a rule says so (power at the cap: PPT; junction or memory within 10 °C of critical: socket or
 * HBM thermal), or exactly the share set through the control socket (sim_set_limit()), which
 * replaces the rule of that limiter.
 */
#include <inttypes.h>

#include "metrics.h"
#include "tree.h"

#define TICK_NS 100000000ULL     /* one step: 100 ms */
#define BOOT_NS 3600000000000ULL /* the driver's clock at step 0: one hour of uptime */
#define MAX_CATCH_UP 100000      /* steps computed at once after a long idle time */
#define TICKS SIM_ACC_TICKS_PER_STEP

const char *const sim_limiter_names[_SIM_LIMITER_MAX] = {
        [SIM_LIMITER_PPT] = "ppt",
        [SIM_LIMITER_SOCKET_THERMAL] = "socket_thermal",
        [SIM_LIMITER_HBM_THERMAL] = "hbm_thermal",
        [SIM_LIMITER_VR_THERMAL] = "vr_thermal",
        [SIM_LIMITER_PROCHOT] = "prochot",
};

static int noise(uint64_t h, int span) {
        return (int) (h % (uint64_t) (2 * span + 1)) - span;
}

static unsigned xcc_busy(const struct sim_gpu *g, unsigned xcc) {
        uint64_t h = sim_hash3(g->m->seed ^ 0x78636300, g->index * 8 + xcc, g->tel.step);

        return (unsigned) CLAMP((int) g->tel.gpu_busy + noise(h, 3), 0, 100);
}

void sim_telemetry_init(struct sim_machine *m) {
        for (size_t i = 0; i < m->n_gpus; i++) {
                struct sim_gpu *g = m->gpus[i];
                struct sim_telemetry *t = &g->tel;
                uint64_t k = i + 1;

                *t = (struct sim_telemetry){
                        .power_w = g->sensors.power_w,
                        .junction_c = g->sensors.junction_c,
                        .mem_c = g->sensors.mem_c,
                        .vrsoc_c = g->sensors.junction_c > 8 ? g->sensors.junction_c - 8 : 0,
                        .sclk_mhz = g->sensors.sclk_mhz,
                        .mclk_mhz = g->sensors.mclk_mhz,
                        .gpu_busy = g->sensors.gpu_busy_percent,
                        .mem_busy = g->sensors.mem_busy_percent,
                        /* an hour of history at the initial power */
                        .energy_acc = (uint64_t) g->sensors.power_w * 3600 * 65536,
                        .accumulation_counter = 36000ULL * TICKS,
                        .gfx_activity_acc = 36000ULL * TICKS * g->sensors.gpu_busy_percent,
                        .mem_activity_acc = 36000ULL * TICKS * g->sensors.mem_busy_percent,
                        .pcie_bandwidth_acc = k << 24,
                        .pcie_bandwidth_inst = 1 + g->sensors.gpu_busy_percent / 4,
                };
                for (int l = 0; l < 8; l++) {
                        t->xgmi_read_acc[l] = g->hive_id ? (k << 32) + (uint64_t) l * 4096 : 0;
                        t->xgmi_write_acc[l] = g->hive_id ? (k << 31) + (uint64_t) l * 4096 : 0;
                }
                for (unsigned x = 0; x < g->prod->xcc; x++)
                        t->gfx_busy_acc[x] = 36000ULL * TICKS * g->sensors.gpu_busy_percent;
        }
}

/* The ticks of one step limiter @l held the GPU: its share if one is set, else the rule's. */
static unsigned held(const struct sim_gpu *g, enum sim_limiter l, bool rule) {
        if (g->limit_pct[l])
                return g->limit_pct[l] * TICKS / 100;
        return rule ? TICKS : 0;
}

static void step(struct sim_machine *m, struct sim_gpu *g) {
        const struct sim_product *p = g->prod;
        struct sim_telemetry *t = &g->tel;
        uint64_t h = sim_hash3(m->seed, g->index, ++t->step);
        unsigned cap = sim_gpu_effective_cap_w(g), idle = p->idle_power_w, lo, target;
        unsigned ppt, thm, hbm, vr;
        int v;
        bool limited;

        t->gpu_busy = (unsigned) CLAMP((int) t->gpu_busy + noise(h, 4), 0, 100);
        t->mem_busy = (unsigned) CLAMP((int) t->mem_busy + noise(h >> 8, 3), 0, 100);

        /* power follows activity, under the enforced cap */
        lo = MIN(idle * 9 / 10, cap);
        target = idle + (cap > idle ? (cap - idle) * t->gpu_busy * 85 / 10000 : 0);
        v = (int) t->power_w + ((int) target - (int) t->power_w) / 4 + noise(h >> 16, 3);
        t->power_w = (unsigned) CLAMP(v, (int) lo, (int) cap);

        /* temperatures follow power */
        target = 35 + 55 * t->power_w / MAX(g->cap_limits_w.max, 1u);
        v = (int) t->junction_c + ((int) target - (int) t->junction_c) / 4 + noise(h >> 24, 1);
        t->junction_c = (unsigned) CLAMP(v, 25, p->junction_crit_c - 1);
        v = (int) t->junction_c - 4 + noise(h >> 28, 1);
        t->mem_c = (unsigned) CLAMP(v, 25, p->mem_crit_c - 1);
        t->vrsoc_c = t->junction_c > 8 ? t->junction_c - 8 : 0;

        /* clocks */
        v = (int) p->sclk.mhz[0] +
            (int) ((p->sclk.mhz[p->sclk.n - 1] - p->sclk.mhz[0]) * t->gpu_busy / 100) +
            noise(h >> 32, 20);
        t->sclk_mhz = (unsigned) CLAMP(v, (int) p->sclk.mhz[0], (int) p->sclk.mhz[p->sclk.n - 1]);
        t->mclk_mhz = p->mclk.mhz[t->mem_busy * p->mclk.n / 101];
        sim_perf_clamp(g); /* within the soft limits of pp_od_clk_voltage */
        if (g->pinned)
                sim_sensors_apply_pins(g); /* sensors set through the control socket */
        limited = t->power_w >= cap;       /* a power held at the cap is at the cap */

        /* counters */
        t->energy_acc += (uint64_t) t->power_w * 65536 / 10; /* W x 0.1 s in 2^-16 J */
        t->accumulation_counter += TICKS;
        t->gfx_activity_acc += (uint64_t) t->gpu_busy * TICKS;
        t->mem_activity_acc += (uint64_t) t->mem_busy * TICKS;
        ppt = held(g, SIM_LIMITER_PPT, limited);
        thm = held(g, SIM_LIMITER_SOCKET_THERMAL,
                   t->junction_c + 10 >= (unsigned) p->junction_crit_c);
        t->socket_thm_residency_acc += thm;
        hbm = held(g, SIM_LIMITER_HBM_THERMAL, t->mem_c + 10 >= (unsigned) p->mem_crit_c);
        t->hbm_thm_residency_acc += hbm;
        vr = held(g, SIM_LIMITER_VR_THERMAL, false);
        t->vr_thm_residency_acc += vr;
        t->prochot_residency_acc += held(g, SIM_LIMITER_PROCHOT, false);
        t->ppt_residency_acc += ppt;
        thm = MAX(thm, MAX(hbm, vr));
        t->pcie_bandwidth_inst = 1 + t->gpu_busy / 4;
        t->pcie_bandwidth_acc += t->pcie_bandwidth_inst;
        if (g->hive_id)
                for (int l = 0; l < 8; l++) {
                        if (g->xgmi_down & (1u << l))
                                continue; /* a link down carries nothing */
                        t->xgmi_read_acc[l] += (uint64_t) t->gpu_busy * 1024 + (h >> l & 0xff);
                        t->xgmi_write_acc[l] +=
                                (uint64_t) t->gpu_busy * 768 + (h >> (l + 8) & 0xff);
                }
        for (unsigned x = 0; x < p->xcc && x < SIM_MAX_XCP * 8; x++) {
                t->gfx_busy_acc[x] += (uint64_t) xcc_busy(g, x) * TICKS;
                t->gfx_below_ppt_acc[x] += ppt;
                t->gfx_below_thm_acc[x] += thm;
                t->gfx_below_host_limit_acc[x] += MAX(ppt, thm);
        }
}

void sim_telemetry_sync(struct sim_machine *m) {
        struct timespec now;
        uint64_t target;

        if (m->frozen)
                return;
        clock_gettime(CLOCK_MONOTONIC, &now);
        target = ((uint64_t) (now.tv_sec - m->start.tv_sec) * 1000000000ULL +
                  (uint64_t) now.tv_nsec - (uint64_t) m->start.tv_nsec) /
                 TICK_NS;
        for (size_t i = 0; i < m->n_gpus; i++) {
                struct sim_gpu *g = m->gpus[i];

                if (target > g->tel.step + MAX_CATCH_UP)
                        g->tel.step = target - MAX_CATCH_UP;
                while (g->tel.step < target)
                        step(m, g);
        }
}

/* ---------------------------------------------------------------------------------------- */

static unsigned hive_peers(const struct sim_gpu *g) {
        unsigned n = 0;

        if (!g->hive_id)
                return 0;
        for (size_t i = 0; i < g->m->n_gpus; i++)
                if (g->m->gpus[i] != g && g->m->gpus[i]->hive_id == g->hive_id)
                        n++;
        return n;
}

static unsigned pcie_speed_tenths(const char *s) {
        unsigned whole = 0, frac = 0;

        if (s)
                sscanf(s, "%u.%u", &whole, &frac);
        return whole * 10 + frac;
}

/* XCC @gx of the GPU into slot @j of @x. */
static void xcc_stats(const struct sim_gpu *g, struct sim_xcp_stats *x, unsigned j, unsigned gx) {
        const struct sim_telemetry *t = &g->tel;

        x->gfx_busy_inst[j] = xcc_busy(g, gx);
        x->gfx_busy_acc[j] = t->gfx_busy_acc[gx];
        x->gfx_below_host_limit_acc[j] = t->gfx_below_host_limit_acc[gx];
        x->gfx_below_host_limit_ppt_acc[j] = t->gfx_below_ppt_acc[gx];
        x->gfx_below_host_limit_thm_acc[j] = t->gfx_below_thm_acc[gx];
        x->gfx_low_utilization_acc[j] = 0;
        x->gfx_below_host_limit_total_acc[j] = t->gfx_below_host_limit_acc[gx];
}

static void fill_metrics(const struct sim_gpu *g, struct sim_metrics *mt) {
        const struct sim_product *p = g->prod;
        const struct sim_telemetry *t = &g->tel;
        unsigned parts = sim_gpu_parts(g), xcc_pp = p->xcc / parts;
        unsigned vcn_pp = MAX(1u, p->vcn / parts), jpeg_pp = vcn_pp * p->jpeg_per_vcn;
        unsigned peers = hive_peers(g), links;
        uint64_t clock_ns = BOOT_NS + t->step * TICK_NS;

        sim_metrics_init(mt);
        mt->temperature_hotspot = t->junction_c;
        mt->temperature_mem = t->mem_c;
        mt->temperature_vrsoc = t->vrsoc_c;
        mt->curr_socket_power = t->power_w;
        mt->average_socket_power = t->power_w;
        mt->average_gfx_activity = t->gpu_busy;
        mt->average_umc_activity = t->mem_busy;
        mt->mem_max_bandwidth = p->mem_max_bandwidth_gbs;
        mt->energy_accumulator = t->energy_acc;
        mt->system_clock_counter = clock_ns;
        mt->firmware_timestamp = clock_ns / 10 + 123456789;
        mt->accumulation_counter = t->accumulation_counter;
        mt->prochot_residency_acc = t->prochot_residency_acc;
        mt->ppt_residency_acc = t->ppt_residency_acc;
        mt->socket_thm_residency_acc = t->socket_thm_residency_acc;
        mt->vr_thm_residency_acc = t->vr_thm_residency_acc;
        mt->hbm_thm_residency_acc = t->hbm_thm_residency_acc;
        mt->throttle_status = t->power_w >= sim_gpu_effective_cap_w(g) ? 1 : 0;
        mt->gfxclk_lock_status = 0;
        mt->pcie_link_width = g->func->link_width;
        mt->pcie_link_speed = pcie_speed_tenths(g->func->link_speed);
        if (peers) {
                mt->xgmi_link_width = 16;
                mt->xgmi_link_speed = 32;
        }
        mt->gfx_activity_acc = t->gfx_activity_acc;
        mt->mem_activity_acc = t->mem_activity_acc;
        mt->pcie_bandwidth_acc = t->pcie_bandwidth_acc;
        mt->pcie_bandwidth_inst = t->pcie_bandwidth_inst;
        /* a replay answers a NAK the GPU received (pcie_replay_count: NAKs sent and received) */
        mt->pcie_l0_to_recov_count_acc = g->pcie_recoveries;
        mt->pcie_replay_count_acc = g->pcie_replays;
        mt->pcie_replay_rover_count_acc = 0;
        mt->pcie_nak_sent_count_acc = 0;
        mt->pcie_nak_rcvd_count_acc = g->pcie_replays;
        /* links: sim_xgmi_links_per_peer() to each peer, in the peers' BDF order; 0 down, 1 up,
         * 2 not available (amdgpu-sysfs.md §5) */
        links = MIN(peers * sim_xgmi_links_per_peer(g), 8u);
        for (unsigned l = 0; l < 8; l++) {
                mt->xgmi_link_status[l] = l >= links ? 2 : g->xgmi_down & (1u << l) ? 0 : 1;
                if (l < links) {
                        mt->xgmi_read_data_acc[l] = t->xgmi_read_acc[l];
                        mt->xgmi_write_data_acc[l] = t->xgmi_write_acc[l];
                }
        }
        for (unsigned x = 0; x < p->xcc && x < 8; x++)
                mt->current_gfxclk[x] = t->sclk_mhz > x ? t->sclk_mhz - x : t->sclk_mhz;
        for (unsigned i = 0; i < 4; i++)
                mt->current_socclk[i] = p->socclk.mhz[g->index % p->socclk.n];
        for (unsigned i = 0; i < p->vcn && i < 4; i++) {
                mt->current_vclk0[i] = p->vclk.mhz[g->index % p->vclk.n];
                mt->current_dclk0[i] = p->dclk.mhz[g->index % p->dclk.n];
                mt->vcn_activity[i] = t->gpu_busy / 3;
        }
        for (unsigned i = 0; i < p->vcn * p->jpeg_per_vcn && i < 32; i++)
                mt->jpeg_activity[i] = t->gpu_busy / 2;
        mt->average_gfxclk_frequency = t->sclk_mhz;
        mt->average_uclk_frequency = t->mclk_mhz;
        mt->current_uclk = t->mclk_mhz;
        mt->num_partition = parts;
        for (unsigned part = 0; part < parts && part < 8; part++) {
                struct sim_xcp_stats *x = &mt->xcp_stats[part];

                for (unsigned j = 0; j < xcc_pp && j < 8; j++)
                        xcc_stats(g, x, j, part * xcc_pp + j);
                for (unsigned j = 0; j < jpeg_pp && j < 40; j++)
                        x->jpeg_busy[j] = t->gpu_busy / 2;
                for (unsigned j = 0; j < vcn_pp && j < 4; j++)
                        x->vcn_busy[j] = t->gpu_busy / 3;
        }
        mt->pcie_lc_perf_other_end_recovery = 0;

        /* v1.9: the same per-XCC values, for the whole GPU */
        for (unsigned gx = 0; gx < p->xcc && gx < 8; gx++)
                xcc_stats(g, &mt->gpu_xcc, gx, gx);
        for (unsigned j = 0; j < p->vcn * p->jpeg_per_vcn && j < 40; j++)
                mt->gpu_xcc.jpeg_busy[j] = t->gpu_busy / 2;
        for (unsigned j = 0; j < p->vcn && j < 4; j++)
                mt->gpu_xcc.vcn_busy[j] = t->gpu_busy / 3;

        /* T3: per HBM stack, AID and XCD, filled on SMU 13.0.12 (MI350X, MI355X: GC 9.5) only;
         * the hottest of each is the sensor the others report (hotspot, memory) */
        if (p->gc[0] == 9 && p->gc[1] >= 5) {
                for (unsigned i = 0; i < 8; i++) {
                        mt->temperature_hbms[i] = t->mem_c > i % 3 ? t->mem_c - i % 3 : 0;
                        mt->temperature_xcds[i] = t->junction_c > i % 4 ? t->junction_c - i % 4 : 0;
                }
                for (unsigned i = 0; i < 4; i++)
                        mt->temperature_aids[i] =
                                t->junction_c > 2 + i % 2 ? t->junction_c - 2 - i % 2 : 0;
        }
}

void sim_telemetry_metrics(const struct sim_gpu *g, struct sim_metrics *mt) {
        fill_metrics(g, mt);
}

static int metrics_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        struct sim_metrics mt;
        int r = sim_gpu_pm_check(g);

        if (r < 0)
                return r;
        sim_telemetry_sync(g->m);
        fill_metrics(g, &mt);
        if (g->metrics_rev == 9)
                return sim_metrics_v19_emit(&mt, g->metrics_layout, buf, SIM_PAGE_SIZE - 1);
        return sim_metrics_emit(&mt, g->metrics_rev, buf, SIM_PAGE_SIZE - 1);
}

const struct sim_attr_ops sim_gpu_metrics_ops = { .show = metrics_show };

static int busy_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        int r = sim_gpu_pm_check(g);

        if (r < 0)
                return r;
        sim_telemetry_sync(g->m);
        return sim_emit(buf, "%u\n", sim_node_arg(n) ? g->tel.mem_busy : g->tel.gpu_busy);
}

const struct sim_attr_ops sim_busy_ops = { .show = busy_show };
