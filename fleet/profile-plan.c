/* SPDX-License-Identifier: MIT */
/*
 * The plan of amdsmid.conf and its active profile, for amdsmi apply --dry-run / --check and
 * amdsmid's GetDocument("apply") and SyncState: per GPU and key, what the GPU holds now, what
 * is desired and what amdsmid does with it: nothing (already so: in sync), apply (amdsmid
 * applies it), reload-required (a memory mode: recorded, effective after amdsmi reset
 * --reload-driver), overridden (a power cap: a runtime host source wins until cleared), manual
 * (a VF count: amdsmid never changes it on its own), or invalid (the GPU would refuse it).
 * enforce (where [power] says yes or a GPU section gives it) is apply when the device holds an
 * outside writer's cap that amdsmid would undo, else none.
 *
 * The keys are one table (plan_keys): a key added to struct config_gpu adds a row kind there.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdsmid-conf.h"
#include "exit-codes.h"
#include "gpu-set.h"
#include "json-util.h"
#include "macro.h"
#include "power-ops.h"
#include "power-state.h"
#include "profile-plan.h"

/* The recorded power sources of @bdf: the environment's, else the state file's. */
static int recorded_sources(const struct profile_plan_env *env, const char *bdf,
                            struct power_sources *ret, uint64_t *ret_applied_uw,
                            uint64_t *ret_applied_usec) {
        uint64_t uw = AMDSMI_NA, usec = AMDSMI_NA;
        int r;

        power_sources_init(ret);
        if (env && env->power_sources)
                r = env->power_sources(env->userdata, bdf, ret, &uw, &usec);
        else if (env && env->state) {
                r = state_get_power(env->state, bdf, ret);
                if (state_get_applied(env->state, bdf, &uw, &usec) < 0)
                        uw = usec = AMDSMI_NA;
        } else
                r = -ENODATA;
        if (ret_applied_uw)
                *ret_applied_uw = uw;
        if (ret_applied_usec)
                *ret_applied_usec = usec;
        return r;
}

static void worse(struct profile_plan *p, int r) {
        /* an invalid value decides over a pending reload */
        if (r == 0 || p->worst == -ERANGE || p->worst == -EOPNOTSUPP)
                return;
        if (p->worst == 0 || r == -ERANGE || r == -EOPNOTSUPP)
                p->worst = r;
}

static json_object *row(struct profile_plan *p, size_t index, const char *bdf, const char *setting,
                        json_object *now, json_object *desired, const char *action, const char *fmt,
                        ...) _printf_(8, 9);

static json_object *row(struct profile_plan *p, size_t index, const char *bdf, const char *setting,
                        json_object *now, json_object *desired, const char *action, const char *fmt,
                        ...) {
        json_object *o = json_object_new_object();
        char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        json_set(o, "gpu", json_object_new_uint64(index));
        json_set(o, "bdf", json_object_new_string(bdf));
        json_set(o, "setting", json_object_new_string(setting));
        json_set(o, "now", now);
        json_set(o, "desired", desired);
        json_set(o, "unit", strcmp(setting, "power_cap") == 0 ? json_object_new_string("W") : NULL);
        json_set(o, "action", json_object_new_string(action));
        json_set(o, "message", msg && msg[0] ? json_object_new_string(msg) : NULL);
        json_set(o, "in_sync", json_object_new_boolean(strcmp(action, "none") == 0));
        free(msg);
        json_object_array_add(p->rows, o);
        return o;
}

/* W as every document writes them: exact, whole numbers without a point ("600", "450.5") */
static json_object *watts(uint64_t uw) {
        return json_scaled_u64(uw, 6);
}

/* The same number in a message; "?" if unknown. */
static const char *watts_text(uint64_t uw, char *buf, size_t len) {
        if (uw == AMDSMI_NA || format_scaled_u64(uw, 6, buf, len) < 0)
                snprintf(buf, len, "?");
        return buf;
}

static void plan_partition(struct profile_plan *p, size_t i, struct amdsmi_gpu *gpu,
                           const struct config_gpu *want, const struct profile_plan_env *env) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        enum amdsmi_compute_mode cm = AMDSMI_COMPUTE_UNKNOWN;
        enum amdsmi_memory_mode mm = AMDSMI_MEMORY_UNKNOWN, pending = AMDSMI_MEMORY_UNKNOWN;
        struct amdsmi_partition_plan pl = { .size = sizeof(pl) };
        int r;

        if (want->memory == AMDSMI_MEMORY_UNKNOWN && want->compute == AMDSMI_COMPUTE_UNKNOWN)
                return;
        if (!env || !env->partition_modes ||
            env->partition_modes(env->userdata, gpu, &cm, &mm, &pending) < 0) {
                r = amdsmi_gpu_get_topology_compute_mode(gpu, &cm);
                if (r == -ENODATA)
                        r = amdsmi_gpu_read_compute_mode(gpu, &cm);
                if (r < 0)
                        cm = AMDSMI_COMPUTE_UNKNOWN;
                if (amdsmi_gpu_read_memory_mode(gpu, &mm) < 0)
                        mm = AMDSMI_MEMORY_UNKNOWN;
                if (amdsmi_gpu_read_pending_memory_mode(gpu, &pending) < 0)
                        pending = AMDSMI_MEMORY_UNKNOWN;
        }

        if (want->memory != AMDSMI_MEMORY_UNKNOWN) {
                json_object *now =
                        mm == AMDSMI_MEMORY_UNKNOWN
                                ? NULL
                                : json_object_new_string(amdsmi_memory_mode_to_string(mm));
                json_object *des =
                        json_object_new_string(amdsmi_memory_mode_to_string(want->memory));

                if (mm == AMDSMI_MEMORY_UNKNOWN) {
                        row(p, i, bdf, "memory_mode", now, des, "invalid",
                            "the GPU has no memory partition modes");
                        worse(p, -EOPNOTSUPP);
                } else if (mm == want->memory)
                        row(p, i, bdf, "memory_mode", now, des, "none", "%s", "");
                else if (pending == want->memory)
                        row(p, i, bdf, "memory_mode", now, des, "reload-required",
                            "requested already: takes effect with amdsmi reset -g %s "
                            "--reload-driver",
                            bdf);
                else {
                        r = amdsmi_gpu_plan_partition(gpu, AMDSMI_COMPUTE_UNKNOWN, want->memory, 0,
                                                      &pl);
                        if (r < 0 || pl.reason != AMDSMI_PLAN_OK) {
                                row(p, i, bdf, "memory_mode", now, des, "invalid",
                                    "the GPU refuses it: %s",
                                    r < 0 ? strerror(-r) : amdsmi_plan_reason_to_string(pl.reason));
                                worse(p, r < 0 ? r : -ERANGE);
                        } else {
                                row(p, i, bdf, "memory_mode", now, des, "reload-required",
                                    "amdsmid records the request; it takes effect with "
                                    "amdsmi reset -g %s --reload-driver",
                                    bdf);
                                worse(p, -AMDSMI_ERELOAD_REQUIRED);
                        }
                }
        }
        if (want->compute != AMDSMI_COMPUTE_UNKNOWN) {
                json_object *now =
                        cm == AMDSMI_COMPUTE_UNKNOWN
                                ? NULL
                                : json_object_new_string(amdsmi_compute_mode_to_string(cm));
                json_object *des =
                        json_object_new_string(amdsmi_compute_mode_to_string(want->compute));

                if (cm == want->compute) {
                        row(p, i, bdf, "compute_mode", now, des, "none", "%s", "");
                        return;
                }
                r = amdsmi_gpu_plan_partition(gpu, want->compute, AMDSMI_MEMORY_UNKNOWN, 0, &pl);
                if (r < 0 || pl.reason != AMDSMI_PLAN_OK) {
                        row(p, i, bdf, "compute_mode", now, des, "invalid",
                            "the GPU refuses it: %s",
                            r < 0 ? strerror(-r) : amdsmi_plan_reason_to_string(pl.reason));
                        worse(p, r < 0 ? r : -ERANGE);
                } else
                        row(p, i, bdf, "compute_mode", now, des, "apply",
                            "amdsmid switches it when no process uses the GPU");
        }
}

static void plan_power(struct profile_plan *p, size_t i, struct amdsmi_gpu *gpu,
                       const struct config_gpu *want, const struct profile_plan_env *env) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        struct amdsmi_power_info info = { .size = sizeof(info) };
        _cleanup_free_ struct power_sources *src = malloc(sizeof(*src));
        json_object *now, *des;
        char lo[32], hi[32];

        if (!want->power_cap_set)
                return;
        (void) amdsmi_gpu_read_power(gpu, AMDSMI_POWER_READ_NO_METRICS, &info);
        now = info.ppt0.cap.error == 0 ? watts(info.ppt0.cap.uw) : NULL;
        des = watts(want->power_cap_uw);
        if (info.control != AMDSMI_POWER_CONTROL_HWMON && info.control != AMDSMI_POWER_CONTROL_VF) {
                row(p, i, bdf, "power_cap", now, des, "invalid", "%s",
                    amdsmi_power_control_explain(info.control));
                worse(p, -EOPNOTSUPP);
                return;
        }
        if (info.floor_uw != AMDSMI_NA && info.ceiling_uw != AMDSMI_NA &&
            (want->power_cap_uw < info.floor_uw || want->power_cap_uw > info.ceiling_uw)) {
                row(p, i, bdf, "power_cap", now, des, "invalid", "outside the GPU's range %s-%s W",
                    watts_text(info.floor_uw, lo, sizeof(lo)),
                    watts_text(info.ceiling_uw, hi, sizeof(hi)));
                worse(p, -ERANGE);
                return;
        }
        /* a host source amdsmid keeps from this very key (origin "config") overrides nothing */
        if (src && recorded_sources(env, bdf, src, NULL, NULL) == 0 && src->host.present &&
            strcmp(power_source_origin(POWER_SOURCE_HOST, src->host.setter), "config") != 0) {
                /* one of the same value holds what is desired: in sync (amdsmi export of a
                 * cap set at run time checks in sync) */
                if (src->host.uw / 1000000 == want->power_cap_uw / 1000000 &&
                    info.ppt0.cap.error == 0 &&
                    info.ppt0.cap.uw / 1000000 == want->power_cap_uw / 1000000) {
                        row(p, i, bdf, "power_cap", now, des, "none",
                            "held by the host cap of the same value set at run time");
                        return;
                }
                row(p, i, bdf, "power_cap", now, des, "overridden",
                    "a host cap of %s W set at run time wins until amdsmi power clear --host",
                    watts_text(src->host.uw, lo, sizeof(lo)));
                return;
        }
        if (info.ppt0.cap.error == 0 && info.ppt0.cap.uw / 1000000 == want->power_cap_uw / 1000000)
                row(p, i, bdf, "power_cap", now, des, "none", "%s", "");
        else
                row(p, i, bdf, "power_cap", now, des, "apply",
                    "the host source; the lowest of the host, VM and APML sources is applied");
}

static void plan_sriov(struct profile_plan *p, size_t i, struct amdsmi_gpu *gpu,
                       const struct config_gpu *want, const struct profile_plan_env *env) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        _cleanup_free_ struct amdsmi_sriov_info *info = NULL;
        json_object *now, *des;

        if (!want->num_vfs_set || amdsmi_gpu_is_vf(gpu) > 0)
                return;
        info = calloc(1, sizeof(*info));
        if (!info)
                return;
        info->size = sizeof(*info);
        des = json_object_new_uint64(want->num_vfs);
        if (amdsmi_gpu_read_sriov(gpu, info) < 0 || !info->capable) {
                row(p, i, bdf, "num_vfs", NULL, des, "invalid", "the GPU has no SR-IOV");
                worse(p, -EOPNOTSUPP);
                return;
        }
        now = json_object_new_uint64(info->num_vfs);
        if (info->num_vfs == want->num_vfs)
                row(p, i, bdf, "num_vfs", now, des, "none", "%s", "");
        else if (want->num_vfs > info->total_vfs) {
                row(p, i, bdf, "num_vfs", now, des, "invalid", "more than its %u VFs",
                    info->total_vfs);
                worse(p, -ERANGE);
        } else if (info->config == AMDSMI_VF_CONFIG_GIM_PARAM)
                row(p, i, bdf, "num_vfs", now, des, "manual",
                    "gim's vf_num sets it: amdsmi sriov set -g %s --num-vfs %u --persist, then "
                    "reload gim",
                    bdf, want->num_vfs);
        else
                row(p, i, bdf, "num_vfs", now, des, "manual",
                    "amdsmid never changes a VF count on its own: amdsmi sriov set -g %s "
                    "--num-vfs %u",
                    bdf, want->num_vfs);
}

/* amdsmid.conf's enforce, shown where the file says it for the GPU (a [gpu] section, or
 * [power] enforce = yes): what amdsmid does about an outside writer of power1_cap, and whether
 * the device holds one's cap now. */
static void plan_enforce(struct profile_plan *p, size_t i, struct amdsmi_gpu *gpu,
                         const struct config_gpu *want, const struct profile_plan_env *env) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        _cleanup_free_ struct power_view *v = NULL;
        json_object *des = json_object_new_string(want->enforce ? "yes" : "no");

        if (!want->enforce) {
                row(p, i, bdf, "enforce", NULL, des, "none",
                    "an outside writer's cap above the arbitrated one is reported and left alone");
                return;
        }
        v = malloc(sizeof(*v));
        if (!v) {
                json_object_put(des);
                return;
        }
        if (!env || env->power_sources) {
                struct power_sources *src = malloc(sizeof(*src));
                uint64_t applied_uw = AMDSMI_NA, applied_usec = AMDSMI_NA;

                power_view_read_device(gpu, AMDSMI_POWER_READ_NO_METRICS, v);
                if (src && recorded_sources(env, bdf, src, &applied_uw, &applied_usec) < 0)
                        power_sources_init(src);
                power_view_set_sources(v, bdf, src, applied_uw, applied_usec);
                free(src);
        } else
                power_view_load(gpu, env->state, AMDSMI_POWER_READ_NO_METRICS, v);
        if (v->info_error == 0 && !power_control_can_apply(v->info.control))
                row(p, i, bdf, "enforce", NULL, des, "none", "nothing is applied here: %s",
                    amdsmi_power_control_explain(v->info.control));
        else if (v->expl_error == 0 && v->expl.observed == POWER_OBSERVED_OUTSIDE_WRITER &&
                 !(v->info.ppt0.def.error == 0 &&
                   v->info.ppt0.def.uw / 1000000 == v->expl.observed_uw / 1000000))
                row(p, i, bdf, "enforce", NULL, des, "apply",
                    "the device holds %.0f W, above the arbitrated %.0f W (an outside writer): "
                    "amdsmid writes the arbitrated cap again, at most every %d s",
                    (double) v->expl.observed_uw / 1e6, (double) v->expl.effective_uw / 1e6,
                    CONFIG_ENFORCE_BACKOFF_S);
        else
                row(p, i, bdf, "enforce", NULL, des, "none",
                    "amdsmid writes the arbitrated cap again over an outside writer's higher "
                    "one, at most every %d s",
                    CONFIG_ENFORCE_BACKOFF_S);
}

/* The performance keys (control/): the level, the determinism ceiling and soft limits as
 * pp_od_clk_voltage shows them, the PM policies by id or name; amdsmid applies them. */
static void plan_perf(struct profile_plan *p, size_t i, struct amdsmi_gpu *gpu,
                      const struct config_gpu *want, const struct profile_plan_env *env) {
        static const struct {
                const char *name;
                size_t off;
        } clocks[] = {
                { "perf_determinism_sclk_mhz",
                  offsetof(struct config_gpu, perf_determinism_sclk_mhz) },
                { "sclk_min_mhz", offsetof(struct config_gpu, sclk_min_mhz) },
                { "sclk_max_mhz", offsetof(struct config_gpu, sclk_max_mhz) },
                { "mclk_max_mhz", offsetof(struct config_gpu, mclk_max_mhz) },
        };
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        enum amdsmi_perf_level lvl = AMDSMI_PERF_LEVEL_UNKNOWN;
        struct amdsmi_od_clk od = {};
        bool has_level = amdsmi_gpu_read_perf_level(gpu, &lvl) == 0;
        bool has_od = amdsmi_gpu_read_od_clk(gpu, &od) == 0;

        if (want->perf_level != AMDSMI_PERF_LEVEL_UNKNOWN) {
                const char *des = want->perf_level == AMDSMI_PERF_LEVEL_PERF_DETERMINISM
                                          ? "determinism"
                                          : amdsmi_perf_level_to_string(want->perf_level);
                const char *now = lvl == AMDSMI_PERF_LEVEL_PERF_DETERMINISM
                                          ? "determinism"
                                          : amdsmi_perf_level_to_string(lvl);

                if (!has_level) {
                        row(p, i, bdf, "perf_level", NULL, json_object_new_string(des), "invalid",
                            "the GPU has no performance level");
                        worse(p, -EOPNOTSUPP);
                } else
                        row(p, i, bdf, "perf_level", json_object_new_string(now),
                            json_object_new_string(des), lvl == want->perf_level ? "none" : "apply",
                            "%s", "");
        }
        for (size_t k = 0; k < ELEMENTSOF(clocks); k++) {
                uint32_t des =
                        *(const uint32_t *) (const void *) ((const char *) want + clocks[k].off);
                bool mclk = k == 3;
                uint32_t now = k == 1 ? od.sclk_min_mhz : mclk ? od.mclk_max_mhz : od.sclk_max_mhz;

                if (!des)
                        continue;
                if (!has_od || (mclk && !od.mclk_present)) {
                        row(p, i, bdf, clocks[k].name, NULL, json_object_new_uint64(des), "invalid",
                            "the GPU cannot set it (pp_od_clk_voltage)");
                        worse(p, -EOPNOTSUPP);
                        continue;
                }
                row(p, i, bdf, clocks[k].name, json_object_new_uint64(now),
                    json_object_new_uint64(des), now == des ? "none" : "apply", "%s", "");
        }
        for (int k = 0; k < _AMDSMI_PM_POLICY_MAX; k++) {
                const char *des =
                        k == AMDSMI_PM_POLICY_SOC_PSTATE ? want->soc_pstate : want->xgmi_plpd;
                const char *name = amdsmi_pm_policy_kind_to_string((enum amdsmi_pm_policy_kind) k);
                struct amdsmi_pm_policy pol;
                int idx;

                if (!des[0])
                        continue;
                if (amdsmi_gpu_read_pm_policy(gpu, (enum amdsmi_pm_policy_kind) k, &pol) < 0) {
                        row(p, i, bdf, name, NULL, json_object_new_string(des), "invalid",
                            "the GPU does not offer it");
                        worse(p, -EOPNOTSUPP);
                        continue;
                }
                idx = amdsmi_pm_policy_find(&pol, des);
                if (idx < 0) {
                        row(p, i, bdf, name,
                            pol.current >= 0 ? json_object_new_string(pol.levels[pol.current].name)
                                             : NULL,
                            json_object_new_string(des), "invalid", "no such policy");
                        worse(p, -ERANGE);
                        continue;
                }
                row(p, i, bdf, name,
                    pol.current >= 0 ? json_object_new_string(pol.levels[pol.current].name) : NULL,
                    json_object_new_string(des), idx == pol.current ? "none" : "apply", "%s", "");
        }
}

typedef void (*plan_key_fn)(struct profile_plan *p, size_t i, struct amdsmi_gpu *gpu,
                            const struct config_gpu *want, const struct profile_plan_env *env);

/* The keys, in the order of their rows (the partition modes together: memory, then compute). */
static const plan_key_fn plan_keys[] = { plan_partition, plan_power, plan_enforce, plan_sriov,
                                          plan_perf };

const char *profile_sync_state_to_string(enum profile_sync_state s) {
        static const char *const names[_PROFILE_SYNC_MAX] = {
                [PROFILE_SYNC_SUCCESS] = "success",
                [PROFILE_SYNC_PENDING] = "pending",
                [PROFILE_SYNC_RELOAD_REQUIRED] = "reload-required",
                [PROFILE_SYNC_FAILED] = "failed",
        };

        return s < _PROFILE_SYNC_MAX ? names[s] : NULL;
}

/* The sync state of the rows: failed over pending over reload-required over success. */
static enum profile_sync_state rows_state(json_object *rows) {
        bool reload = false, pending = false;

        for (size_t k = 0; k < json_object_array_length(rows); k++) {
                json_object *o = json_object_array_get_idx(rows, k);
                json_object *a = NULL;
                const char *action = json_object_object_get_ex(o, "action", &a)
                                             ? json_object_get_string(a)
                                             : NULL;

                if (!action || strcmp(action, "none") == 0)
                        continue;
                if (strcmp(action, "invalid") == 0)
                        return PROFILE_SYNC_FAILED;
                if (strcmp(action, "reload-required") == 0)
                        reload = true;
                else
                        pending = true;
        }
        return pending  ? PROFILE_SYNC_PENDING
               : reload ? PROFILE_SYNC_RELOAD_REQUIRED
                        : PROFILE_SYNC_SUCCESS;
}

int profile_plan_build(struct profile_plan *p, const struct config *conf, struct gpu_set *set,
                       const struct profile_plan_env *env) {
        *p = (struct profile_plan){ .rows = json_object_new_array() };
        if (!p->rows)
                return -ENOMEM;
        FOREACH_GPU_IN_SET(set, i, gpu) {
                struct config_gpu want;
                bool any = config_desired(conf, amdsmi_gpu_get_bdf(gpu), &want);
                bool enforce = want.enforce_set || (conf && conf->power_enforce);

                if (!any && !enforce)
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(plan_keys); k++) {
                        if (plan_keys[k] == plan_enforce && !enforce)
                                continue;
                        plan_keys[k](p, i, gpu, &want, env);
                }
        }
        p->state = rows_state(p->rows);
        return 0;
}

void profile_plan_clear(struct profile_plan *p) {
        json_object_put(p->rows);
        *p = (struct profile_plan){};
}

void profile_plan_document(json_object *doc, const struct profile_plan *p,
                           const struct config *conf, const char *config_path,
                           const char *conf_error) {
        enum profile_sync_state state = conf_error ? PROFILE_SYNC_FAILED : p->state;
        const char *source = conf ? config_profile_source_to_string(conf->profile_source) : NULL;

        json_set(doc, "config", config_path ? json_object_new_string(config_path) : NULL);
        json_set(doc, "config_exists", json_object_new_boolean(conf && conf->exists));
        if (conf_error)
                json_set(doc, "config_error", json_object_new_string(conf_error));
        json_set(doc, "profile",
                 conf && conf->profile[0] ? json_object_new_string(conf->profile) : NULL);
        json_set(doc, "profile_source", source ? json_object_new_string(source) : NULL);
        json_set(doc, "in_sync", json_object_new_boolean(state == PROFILE_SYNC_SUCCESS));
        json_set(doc, "sync_state", json_object_new_string(profile_sync_state_to_string(state)));
        json_set(doc, "settings", json_object_get(p->rows));
        json_set(doc, "exit_code", json_object_new_int(exit_code_from_errno(p->worst)));
}

int profile_plan_check_status(const struct profile_plan *p) {
        return p->state == PROFILE_SYNC_SUCCESS ? 0 : 1;
}
