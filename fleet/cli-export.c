/* SPDX-License-Identifier: MIT */
/*
 * amdsmi export [--profile NAME] [-g SEL]: the running state of the selected GPUs as
 * amdsmid.conf text, a [profile NAME] section with the keys every selected GPU shares and a
 * [profile NAME gpu BDF] section per GPU for what differs, so that a node's layout becomes a
 * profile for the fleet. What a GPU cannot be asked to do (a power cap where none can be
 * applied, VFs on a GPU without SR-IOV, modes of a GPU without partitions) is left out, so that
 * `amdsmi apply --check --profile NAME` with that text exits 0 on the same machine.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdsmid-conf.h"
#include "cli.h"

#define EXPORT_PROFILE_DEFAULT "exported"

/* The performance keys: the level, and the soft limits it keeps (manual) or the ceiling
 * (determinism); the PM policies by name. */
static void read_running_perf(struct amdsmi_gpu *gpu, struct config_gpu *ret) {
        enum amdsmi_perf_level l;
        struct amdsmi_od_clk od;
        struct amdsmi_pm_policy pol;

        if (amdsmi_gpu_read_perf_level(gpu, &l) == 0 && amdsmi_perf_level_accepted(l)) {
                ret->perf_level = l;
                if (amdsmi_gpu_read_od_clk(gpu, &od) == 0 && od.sclk_present) {
                        if (l == AMDSMI_PERF_LEVEL_PERF_DETERMINISM)
                                ret->perf_determinism_sclk_mhz = od.sclk_max_mhz;
                        else if (l == AMDSMI_PERF_LEVEL_MANUAL) {
                                ret->sclk_min_mhz = od.sclk_min_mhz;
                                ret->sclk_max_mhz = od.sclk_max_mhz;
                                if (od.mclk_present)
                                        ret->mclk_max_mhz = od.mclk_max_mhz;
                        }
                }
        }
        if (amdsmi_gpu_read_pm_policy(gpu, AMDSMI_PM_POLICY_SOC_PSTATE, &pol) == 0 &&
            pol.current >= 0)
                snprintf(ret->soc_pstate, sizeof(ret->soc_pstate), "%s",
                         pol.levels[pol.current].name);
        if (amdsmi_gpu_read_pm_policy(gpu, AMDSMI_PM_POLICY_XGMI_PLPD, &pol) == 0 &&
            pol.current >= 0)
                snprintf(ret->xgmi_plpd, sizeof(ret->xgmi_plpd), "%s",
                         pol.levels[pol.current].name);
}

/* What @gpu holds now, as the keys of a GPU section. */
static void read_running(struct amdsmi_gpu *gpu, struct config_gpu *ret) {
        enum amdsmi_compute_mode cm = AMDSMI_COMPUTE_UNKNOWN;
        enum amdsmi_memory_mode mm = AMDSMI_MEMORY_UNKNOWN;
        struct amdsmi_power_info info = { .size = sizeof(info) };
        _cleanup_free_ struct amdsmi_sriov_info *sriov = calloc(1, sizeof(*sriov));
        int r;

        config_gpu_init(ret, amdsmi_gpu_get_bdf(gpu));
        r = amdsmi_gpu_get_topology_compute_mode(gpu, &cm);
        if (r == -ENODATA)
                r = amdsmi_gpu_read_compute_mode(gpu, &cm);
        if (r >= 0 && cm != AMDSMI_COMPUTE_UNKNOWN)
                ret->compute = cm;
        if (amdsmi_gpu_read_memory_mode(gpu, &mm) >= 0 && mm != AMDSMI_MEMORY_UNKNOWN)
                ret->memory = mm;
        if (amdsmi_gpu_read_power(gpu, AMDSMI_POWER_READ_NO_METRICS, &info) >= 0 &&
            (info.control == AMDSMI_POWER_CONTROL_HWMON ||
             info.control == AMDSMI_POWER_CONTROL_VF) &&
            info.ppt0.cap.error == 0 && info.ppt0.cap.uw != AMDSMI_NA &&
            info.ppt0.cap.uw >= 1000000) {
                ret->power_cap_set = true;
                ret->power_cap_uw = info.ppt0.cap.uw;
        }
        read_running_perf(gpu, ret);
        if (sriov && amdsmi_gpu_is_vf(gpu) <= 0) {
                sriov->size = sizeof(*sriov);
                if (amdsmi_gpu_read_sriov(gpu, sriov) >= 0 && sriov->capable) {
                        ret->num_vfs_set = true;
                        ret->num_vfs = sriov->num_vfs;
                }
        }
}

int verb_export(struct cli *c) {
        const char *name = c->apply.profile ?: EXPORT_PROFILE_DEFAULT;
        _cleanup_free_ struct config_gpu *gpus = NULL;
        _cleanup_free_ char *text = NULL;
        struct config_gpu common;
        size_t n = 0, size = 0;
        bool first = true;
        FILE *f;
        int r;

        r = cli_open(c);
        if (r < 0)
                return r;
        cli_begin_sample(c);
        gpus = calloc(c->set.n_gpus ?: 1, sizeof(*gpus));
        if (!gpus)
                return cli_fail(c, -ENOMEM, "out of memory");
        FOREACH_SELECTED_GPU(c, i, gpu) {
                read_running(gpu, &gpus[n]);
                if (first)
                        common = gpus[n];
                else
                        config_gpu_intersect(&common, &gpus[n]);
                first = false;
                n++;
        }
        if (n == 0)
                return cli_fail(c, -ENODEV, "no GPU selected");

        f = open_memstream(&text, &size);
        if (!f)
                return cli_fail(c, -ENOMEM, "out of memory");
        {
                _cleanup_free_ char *keys = config_gpu_format(&common);

                fprintf(f, "[profile %s]\n%s", name, keys ?: "");
        }
        for (size_t k = 0; k < n; k++) {
                _cleanup_free_ char *keys = NULL;

                config_gpu_subtract(&gpus[k], &common);
                keys = config_gpu_format(&gpus[k]);
                if (keys && keys[0])
                        fprintf(f, "\n[profile %s gpu %s]\n%s", name, gpus[k].bdf, keys);
        }
        if (fclose(f) != 0 || !text)
                return cli_fail(c, -ENOMEM, "out of memory");

        if (c->format == OUTPUT_JSON) {
                json_object *doc = cli_document(c, NULL);

                if (!doc)
                        return cli_fail(c, -ENOMEM, "out of memory");
                json_object_object_del(doc, "gpus");
                json_set(doc, "profile", json_object_new_string(name));
                json_set(doc, "text", json_object_new_string(text));
                r = cli_print_json(c, doc);
                json_object_put(doc);
                c->json_printed = true;
                return r;
        }
        if (c->format == OUTPUT_CSV)
                return cli_fail(c, -EINVAL,
                                "amdsmi export prints amdsmid.conf text or --json, "
                                "not CSV");
        fputs(text, stdout);
        return 0;
}
