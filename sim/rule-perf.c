/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the performance controls of SMU 13.0.6 (spec health-and-control.md §5):
 * pp_od_clk_voltage and pm_policy/.
 *
 * pp_od_clk_voltage (smu_v13_0_6_print_clk_levels, smu_v13_0_6_usr_edit_dpm_table) shows the
 * committed gfx soft limits (OD_SCLK 0: min, 1: max) and, when the SMU can set the UCLK max,
 * OD_MCLK; it has no OD_RANGE section. Its writes are taken only in the manual and
 * perf_determinism levels (else EINVAL): "s 0|1 MHz" edits the gfx min or max (EINVAL outside
 * the DPM table), "m 1 MHz" the UCLK max (the UCLK min cannot be changed: EINVAL), "r" puts the
 * defaults back at once, "c" commits (min >= max: EINVAL; in determinism the default min/max are
 * restored and the edited max becomes the ceiling of EnableDeterminism). Leaving
 * perf_determinism restores the gfx defaults (DisableDeterminism); auto restores every default.
 *
 * pm_policy/ (amdgpu_pm_policy_attr_group): "<n> : <name>" per level the SOC supports, '*'
 * after the current one; a write is a single integer level (EINVAL for one not offered), EPERM
 * while the GPU is in reset. soc_pstate where the product has it; xgmi_plpd also needs an XGMI
 * hive (machine JSON: product keys "soc_pstate", "xgmi_plpd", "od_mclk").
 */
#include <inttypes.h>

#include "parse.h"
#include "tree.h"

enum perf_attr {
        PERF_OD,
        PERF_SOC_PSTATE,
        PERF_XGMI_PLPD,
};

/* The levels of each policy (PP_POLICY_MAX_LEVELS), NULL where SMU 13.0.6 offers none. */
static const char *const soc_pstate_names[] = { "soc_pstate_default", "soc_pstate_0",
                                                "soc_pstate_1", "soc_pstate_2" };
static const char *const xgmi_plpd_names[] = { "plpd_disallow", "plpd_default", "plpd_optimized" };
#define SOC_PSTATE_DEFAULT 0
#define XGMI_PLPD_DEFAULT 1

static unsigned sclk_lo(const struct sim_gpu *g) {
        return g->prod->sclk.mhz[0];
}

static unsigned sclk_hi(const struct sim_gpu *g) {
        return g->prod->sclk.mhz[g->prod->sclk.n - 1];
}

static unsigned mclk_hi(const struct sim_gpu *g) {
        return g->prod->mclk.mhz[g->prod->mclk.n - 1];
}

static void gfx_defaults(struct sim_gpu *g) {
        g->perf.sclk_min = g->perf.custom_sclk_min = sclk_lo(g);
        g->perf.sclk_max = g->perf.custom_sclk_max = sclk_hi(g);
}

void sim_perf_defaults(struct sim_gpu *g) {
        gfx_defaults(g);
        g->perf.mclk_max = g->perf.custom_mclk_max = mclk_hi(g);
        g->perf.soc_pstate = SOC_PSTATE_DEFAULT;
        g->perf.xgmi_plpd = XGMI_PLPD_DEFAULT;
        snprintf(g->perf_level, sizeof(g->perf_level), "auto");
}

void sim_perf_level_changed(struct sim_gpu *g, const char *from, const char *to) {
        if (streq(from, "perf_determinism") && !streq(to, "perf_determinism"))
                gfx_defaults(g); /* DisableDeterminism */
        if (streq(to, "auto")) {
                gfx_defaults(g);
                g->perf.mclk_max = g->perf.custom_mclk_max = mclk_hi(g);
        }
}

void sim_perf_clamp(struct sim_gpu *g) {
        struct sim_telemetry *t = &g->tel;
        const struct sim_levels *l = &g->prod->mclk;

        if (g->perf.sclk_max == 0)
                return; /* not built yet */
        if (t->sclk_mhz > g->perf.sclk_max)
                t->sclk_mhz = g->perf.sclk_max;
        if (t->sclk_mhz < g->perf.sclk_min)
                t->sclk_mhz = g->perf.sclk_min;
        if (t->mclk_mhz > g->perf.mclk_max) {
                unsigned v = l->mhz[0];

                for (unsigned i = 0; i < l->n; i++)
                        if (l->mhz[i] <= g->perf.mclk_max)
                                v = l->mhz[i];
                t->mclk_mhz = v;
        }
}

static bool od_writable_level(const struct sim_gpu *g) {
        return streq(g->perf_level, "manual") || streq(g->perf_level, "perf_determinism");
}

static int show_policy(char *buf, const char *const *names, size_t n, unsigned cur) {
        size_t len = 0;

        for (size_t i = 0; i < n; i++)
                bprintf(buf, SIM_PAGE_SIZE, &len, "%zu : %s%s\n", i, names[i], i == cur ? "*" : "");
        return (int) len;
}

static int perf_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        int r = sim_gpu_pm_check(g);
        size_t len = 0;

        if (r < 0)
                return r;
        switch ((int) sim_node_arg(n)) {
        case PERF_OD:
                if (g->perf.unavailable)
                        return sim_emit(buf, "unavailable\n");
                bprintf(buf, SIM_PAGE_SIZE, &len, "OD_SCLK:\n0: %uMhz\n1: %uMhz\n",
                        g->perf.sclk_min, g->perf.sclk_max);
                if (g->prod->od_mclk)
                        bprintf(buf, SIM_PAGE_SIZE, &len, "OD_MCLK:\n0: %uMhz\n1: %uMhz\n",
                                g->prod->mclk.mhz[0], g->perf.mclk_max);
                return (int) len;
        case PERF_SOC_PSTATE:
                return show_policy(buf, soc_pstate_names, ELEMENTSOF(soc_pstate_names),
                                   g->perf.soc_pstate);
        default:
                return show_policy(buf, xgmi_plpd_names, ELEMENTSOF(xgmi_plpd_names),
                                   g->perf.xgmi_plpd);
        }
}

/* "s 0 1200", "m 1 1100", "r", "c" (amdgpu_get_od_args: the command, then up to a few
 * integers; one command per write). */
static int od_store(struct sim_gpu *g, const char *buf) {
        long a[3];
        int na = 0;
        char cmd;
        const char *p = buf;

        while (*p == ' ')
                p++;
        cmd = *p;
        if (!cmd)
                return -EINVAL;
        p++;
        if (*p && *p != ' ' && *p != '\n')
                return -EINVAL;
        for (;;) {
                char *end;

                while (*p == ' ')
                        p++;
                if (!*p || *p == '\n')
                        break;
                if (na == (int) ELEMENTSOF(a))
                        return -EINVAL;
                errno = 0;
                a[na] = strtol(p, &end, 10);
                if (end == p || errno || (*end && *end != ' ' && *end != '\n'))
                        return -EINVAL;
                na++;
                p = end;
        }
        if (!od_writable_level(g))
                return -EINVAL;
        switch (cmd) {
        case 's':
                if (na != 2 || (a[0] != 0 && a[0] != 1))
                        return -EINVAL;
                if (a[0] == 0) {
                        if (a[1] < (long) sclk_lo(g) || a[1] > (long) sclk_hi(g))
                                return -EINVAL; /* "Minimum clk %d MHz is out of range" */
                        g->perf.custom_sclk_min = (unsigned) a[1];
                } else {
                        if (a[1] > (long) sclk_hi(g) || a[1] < (long) sclk_lo(g))
                                return -EINVAL; /* "Maximum clk %d MHz is out of range" */
                        g->perf.custom_sclk_max = (unsigned) a[1];
                }
                return 0;
        case 'm':
                if (!g->prod->od_mclk || na != 2 || a[0] != 1)
                        return -EINVAL; /* the UCLK min cannot be changed */
                if (a[1] < (long) g->prod->mclk.mhz[0] || a[1] > (long) mclk_hi(g))
                        return -EINVAL;
                g->perf.custom_mclk_max = (unsigned) a[1];
                return 0;
        case 'r':
                if (na)
                        return -EINVAL;
                gfx_defaults(g);
                g->perf.mclk_max = g->perf.custom_mclk_max = mclk_hi(g);
                return 0;
        case 'c':
                if (na)
                        return -EINVAL;
                if (streq(g->perf_level, "perf_determinism")) {
                        /* default min/max, then EnableDeterminism(custom max) */
                        g->perf.sclk_min = sclk_lo(g);
                        g->perf.sclk_max = g->perf.custom_sclk_max;
                        g->perf.custom_sclk_min = g->perf.sclk_min;
                        sim_perf_clamp(g);
                        return 0;
                }
                if (g->perf.custom_sclk_min >= g->perf.custom_sclk_max)
                        return -EINVAL;
                g->perf.sclk_min = g->perf.custom_sclk_min;
                g->perf.sclk_max = g->perf.custom_sclk_max;
                g->perf.mclk_max = g->perf.custom_mclk_max;
                sim_perf_clamp(g); /* the SMU holds the clocks within the new range at once */
                return 0;
        default:
                return -EINVAL;
        }
}

static int perf_store(struct sim_node *n, const struct sim_caller *c, const char *buf, size_t len) {
        struct sim_gpu *g = sim_node_obj(n);
        int attr = (int) sim_node_arg(n), r;
        long v;

        if (attr == PERF_OD) {
                r = sim_gpu_pm_check(g);
                if (r < 0)
                        return r;
                return od_store(g, buf);
        }
        /* amdgpu_set_pm_policy_attr(): EPERM while the device is in reset or suspended */
        if (g->in_reset)
                return -EPERM;
        r = kstrtol(buf, 0, &v);
        if (r < 0)
                return r;
        if (attr == PERF_SOC_PSTATE) {
                if (v < 0 || v >= (long) ELEMENTSOF(soc_pstate_names))
                        return -EINVAL;
                g->perf.soc_pstate = (unsigned) v;
        } else {
                if (v < 0 || v >= (long) ELEMENTSOF(xgmi_plpd_names))
                        return -EINVAL;
                g->perf.xgmi_plpd = (unsigned) v;
        }
        return 0;
}

static const struct sim_attr_ops perf_ops = { .show = perf_show, .store = perf_store };

void sim_perf_build(struct sim_gpu *g, struct sim_node *d) {
        struct sim_node *pol;

        /* a probe starts from the SMU's defaults (a driver reload, a re-plug) */
        sim_perf_defaults(g);
        if (g->role == SIM_ROLE_GUEST_MULTIVF)
                return;
        sim_gpu_own(g, sim_attr(d, "pp_od_clk_voltage", 0644, &perf_ops, g, PERF_OD));
        if (g->role != SIM_ROLE_BAREMETAL || (!g->prod->soc_pstate && !g->prod->xgmi_plpd))
                return;
        if (!g->prod->soc_pstate && !(g->prod->xgmi_plpd && g->hive_id))
                return;
        pol = sim_gpu_own(g, sim_mkdir(d, "pm_policy"));
        if (g->prod->soc_pstate)
                sim_attr(pol, "soc_pstate", 0644, &perf_ops, g, PERF_SOC_PSTATE);
        if (g->prod->xgmi_plpd && g->hive_id)
                sim_attr(pol, "xgmi_plpd", 0644, &perf_ops, g, PERF_XGMI_PLPD);
}
