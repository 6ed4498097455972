/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: amdgpu's hwmon (spec amdgpu-sysfs.md §4.2) and power caps (§4.3, §9 rule 4).
 *
 * power1_cap takes microwatts (kstrtou32: EINVAL for a non-number, ERANGE above u32), keeps
 * whole watts (truncation), checks [cap_min, cap_max] (EINVAL), and 0 re-applies the current
 * limit. The device enforces and reports min(cap, platform limit): a limit set out of band (the
 * BMC's) shows up in power1_cap, since the SMU is asked on every read.
 */
#include <inttypes.h>

#include "parse.h"
#include "tree.h"

const char *const sim_hwmon_names[_SIM_HW_MAX] = {
        [SIM_HW_NAME] = "name",
        [SIM_HW_POWER1_INPUT] = "power1_input",
        [SIM_HW_POWER1_CAP] = "power1_cap",
        [SIM_HW_POWER1_CAP_MAX] = "power1_cap_max",
        [SIM_HW_POWER1_CAP_MIN] = "power1_cap_min",
        [SIM_HW_POWER1_CAP_DEFAULT] = "power1_cap_default",
        [SIM_HW_POWER1_LABEL] = "power1_label",
        [SIM_HW_POWER2_CAP] = "power2_cap",
        [SIM_HW_POWER2_CAP_MAX] = "power2_cap_max",
        [SIM_HW_POWER2_CAP_MIN] = "power2_cap_min",
        [SIM_HW_POWER2_CAP_DEFAULT] = "power2_cap_default",
        [SIM_HW_POWER2_LABEL] = "power2_label",
        [SIM_HW_TEMP2_INPUT] = "temp2_input",
        [SIM_HW_TEMP2_LABEL] = "temp2_label",
        [SIM_HW_TEMP2_CRIT] = "temp2_crit",
        [SIM_HW_TEMP2_CRIT_HYST] = "temp2_crit_hyst",
        [SIM_HW_TEMP2_EMERGENCY] = "temp2_emergency",
        [SIM_HW_TEMP3_INPUT] = "temp3_input",
        [SIM_HW_TEMP3_LABEL] = "temp3_label",
        [SIM_HW_TEMP3_CRIT] = "temp3_crit",
        [SIM_HW_TEMP3_CRIT_HYST] = "temp3_crit_hyst",
        [SIM_HW_TEMP3_EMERGENCY] = "temp3_emergency",
        [SIM_HW_FREQ1_INPUT] = "freq1_input",
        [SIM_HW_FREQ1_LABEL] = "freq1_label",
        [SIM_HW_FREQ2_INPUT] = "freq2_input",
        [SIM_HW_FREQ2_LABEL] = "freq2_label",
};

#define UW(w) ((uint64_t) (w) *1000000)

static int hwmon_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        const struct sim_product *p = g->prod;
        int attr = (int) sim_node_arg(n), r;

        switch (attr) {
        case SIM_HW_NAME:
                return sim_emit(buf, "amdgpu\n");
        case SIM_HW_POWER1_LABEL:
                return sim_emit(buf, "PPT\n");
        case SIM_HW_POWER2_LABEL:
                return sim_emit(buf, "PPT1\n");
        case SIM_HW_TEMP2_LABEL:
                return sim_emit(buf, "junction\n");
        case SIM_HW_TEMP3_LABEL:
                return sim_emit(buf, "mem\n");
        case SIM_HW_FREQ1_LABEL:
                return sim_emit(buf, "sclk\n");
        case SIM_HW_FREQ2_LABEL:
                return sim_emit(buf, "mclk\n");
        default:
                break;
        }
        /* everything else asks the SMU */
        r = sim_gpu_pm_check(g);
        if (r < 0)
                return r;
        sim_telemetry_sync(g->m);
        switch (attr) {
        case SIM_HW_POWER1_INPUT:
                return sim_emit(buf, "%" PRIu64 "\n", UW(g->tel.power_w));
        case SIM_HW_POWER1_CAP:
                return sim_emit(buf, "%" PRIu64 "\n", UW(sim_gpu_effective_cap_w(g)));
        case SIM_HW_POWER1_CAP_MAX:
                return sim_emit(buf, "%" PRIu64 "\n", UW(g->cap_limits_w.max));
        case SIM_HW_POWER1_CAP_MIN:
                return sim_emit(buf, "%" PRIu64 "\n", UW(g->cap_limits_w.min));
        case SIM_HW_POWER1_CAP_DEFAULT:
                return sim_emit(buf, "%" PRIu64 "\n", UW(g->cap_limits_w.def));
        case SIM_HW_POWER2_CAP:
                return sim_emit(buf, "%" PRIu64 "\n", UW(g->ppt1_cap_w));
        case SIM_HW_POWER2_CAP_MAX:
                return sim_emit(buf, "%" PRIu64 "\n", UW(g->ppt1_limits_w.max));
        case SIM_HW_POWER2_CAP_MIN:
                return sim_emit(buf, "%" PRIu64 "\n", UW(g->ppt1_limits_w.min));
        case SIM_HW_POWER2_CAP_DEFAULT:
                return sim_emit(buf, "%" PRIu64 "\n", UW(g->ppt1_limits_w.def));
        case SIM_HW_TEMP2_INPUT:
                return sim_emit(buf, "%u\n", g->tel.junction_c * 1000);
        case SIM_HW_TEMP2_CRIT:
                return sim_emit(buf, "%d\n", p->junction_crit_c * 1000);
        case SIM_HW_TEMP2_CRIT_HYST:
                return sim_emit(buf, "%d\n", p->junction_crit_hyst_c * 1000);
        case SIM_HW_TEMP2_EMERGENCY:
                return sim_emit(buf, "%d\n", p->junction_emergency_c * 1000);
        case SIM_HW_TEMP3_INPUT:
                return sim_emit(buf, "%u\n", g->tel.mem_c * 1000);
        case SIM_HW_TEMP3_CRIT:
                return sim_emit(buf, "%d\n", p->mem_crit_c * 1000);
        case SIM_HW_TEMP3_CRIT_HYST:
                return sim_emit(buf, "%d\n", p->mem_crit_hyst_c * 1000);
        case SIM_HW_TEMP3_EMERGENCY:
                return sim_emit(buf, "%d\n", p->mem_emergency_c * 1000);
        case SIM_HW_FREQ1_INPUT:
                return sim_emit(buf, "%" PRIu64 "\n", (uint64_t) g->tel.sclk_mhz * 1000000);
        case SIM_HW_FREQ2_INPUT:
                return sim_emit(buf, "%" PRIu64 "\n", (uint64_t) g->tel.mclk_mhz * 1000000);
        }
        return -EIO;
}

/* amdgpu_hwmon_set_power_cap() and smu_set_power_limit(). */
static int set_cap(const char *buf, const struct sim_limits_w *l, uint32_t *cap) {
        uint32_t uw, w;
        int r = kstrtou32(buf, 10, &uw);

        if (r < 0)
                return r;
        w = uw / 1000000;
        if (w < l->min || w > l->max)
                return -EINVAL; /* "New power limit (%d) is out of range [%d,%d]" */
        if (w == 0)
                w = *cap; /* re-applies the current limit */
        *cap = w;
        return 0;
}

static int hwmon_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                       size_t len) {
        struct sim_gpu *g = sim_node_obj(n);
        int r = sim_gpu_pm_check(g);

        if (r < 0)
                return r;
        switch (sim_node_arg(n)) {
        case SIM_HW_POWER1_CAP:
                return set_cap(buf, &g->cap_limits_w, &g->cap_w);
        case SIM_HW_POWER2_CAP:
                return set_cap(buf, &g->ppt1_limits_w, &g->ppt1_cap_w);
        }
        return -EIO;
}

const struct sim_attr_ops sim_hwmon_ops = { .show = hwmon_show, .store = hwmon_store };
