/* SPDX-License-Identifier: MIT */
/*
 * amdsmi apply [--dry-run] and amdsmi reload: the desired state of amdsmid.conf.
 *
 * The dry run reads the file and the GPUs itself (no root, no amdsmid needed) and shows per
 * GPU and setting what amdsmid does with it: nothing (already so), apply (amdsmid applies
 * it), reload-required (a memory mode: recorded, effective after amdsmi reset
 * --reload-driver), overridden (a power cap: a runtime host source wins until cleared),
 * manual (a VF count: amdsmid never changes it on its own), or invalid (the GPU would refuse
 * it). enforce (where [power] says yes or a GPU section gives it) is apply when the device holds
 * an outside writer's cap that amdsmid would undo, else none. Without --dry-run, amdsmid applies
 * the whole file now (ApplyDesired); reload makes it re-read the file and apply what changed
 * (Reload, as SIGHUP).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdsmid-conf.h"
#include "bus-errors.h"
#include "cli.h"
#include "exit-codes.h"
#include "power-ops.h"
#include "power-state.h"

static const struct column_def apply_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", "BDF", "bdf", 0 },
        { "setting", "SETTING", "setting", 0 },
        { "now", "NOW", "now", 0 },
        { "desired", "DESIRED", "desired", 0 },
        { "unit", "UNIT", "unit", 0 },
        { "action", "ACTION", "action", 0 },
        { "message", "WHY", "message", 0 },
};

struct plan {
        json_object *rows;  /* flat: one per (GPU, setting) */
        int worst;          /* the errno the change would have had */
};

static void worse(struct plan *p, int r) {
        /* an invalid value decides over a pending reload */
        if (r == 0 || p->worst == -ERANGE || p->worst == -EOPNOTSUPP)
                return;
        if (p->worst == 0 || r == -ERANGE || r == -EOPNOTSUPP)
                p->worst = r;
}

static json_object *row(struct plan *p, size_t index, const char *bdf, const char *setting,
                        json_object *now, json_object *desired, const char *action,
                        const char *fmt, ...) _printf_(8, 9);

static json_object *row(struct plan *p, size_t index, const char *bdf, const char *setting,
                        json_object *now, json_object *desired, const char *action,
                        const char *fmt, ...) {
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

static void plan_partition(struct plan *p, size_t i, struct amdsmi_gpu *gpu,
                           const struct config_gpu *want) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        enum amdsmi_compute_mode cm = AMDSMI_COMPUTE_UNKNOWN;
        enum amdsmi_memory_mode mm = AMDSMI_MEMORY_UNKNOWN, pending = AMDSMI_MEMORY_UNKNOWN;
        struct amdsmi_partition_plan pl = { .size = sizeof(pl) };
        int r;

        r = amdsmi_gpu_get_topology_compute_mode(gpu, &cm);
        if (r == -ENODATA)
                r = amdsmi_gpu_read_compute_mode(gpu, &cm);
        if (r < 0)
                cm = AMDSMI_COMPUTE_UNKNOWN;
        if (amdsmi_gpu_read_memory_mode(gpu, &mm) < 0)
                mm = AMDSMI_MEMORY_UNKNOWN;
        if (amdsmi_gpu_read_pending_memory_mode(gpu, &pending) < 0)
                pending = AMDSMI_MEMORY_UNKNOWN;

        if (want->memory != AMDSMI_MEMORY_UNKNOWN) {
                json_object *now = mm == AMDSMI_MEMORY_UNKNOWN
                                           ? NULL
                                           : json_object_new_string(amdsmi_memory_mode_to_string(mm));
                json_object *des = json_object_new_string(amdsmi_memory_mode_to_string(want->memory));

                if (mm == AMDSMI_MEMORY_UNKNOWN) {
                        row(p, i, bdf, "memory_mode", now, des, "invalid",
                            "the GPU has no memory partition modes");
                        worse(p, -EOPNOTSUPP);
                } else if (mm == want->memory)
                        row(p, i, bdf, "memory_mode", now, des, "none", "%s", "");
                else if (pending == want->memory)
                        row(p, i, bdf, "memory_mode", now, des, "reload-required",
                            "requested already: takes effect with amdsmi reset -g %s "
                            "--reload-driver", bdf);
                else {
                        r = amdsmi_gpu_plan_partition(gpu, AMDSMI_COMPUTE_UNKNOWN, want->memory,
                                                      0, &pl);
                        if (r < 0 || pl.reason != AMDSMI_PLAN_OK) {
                                row(p, i, bdf, "memory_mode", now, des, "invalid",
                                    "the GPU refuses it: %s",
                                    r < 0 ? strerror(-r)
                                          : amdsmi_plan_reason_to_string(pl.reason));
                                worse(p, r < 0 ? r : -ERANGE);
                        } else {
                                row(p, i, bdf, "memory_mode", now, des, "reload-required",
                                    "amdsmid records the request; it takes effect with "
                                    "amdsmi reset -g %s --reload-driver", bdf);
                                worse(p, -AMDSMI_ERELOAD_REQUIRED);
                        }
                }
        }
        if (want->compute != AMDSMI_COMPUTE_UNKNOWN) {
                json_object *now = cm == AMDSMI_COMPUTE_UNKNOWN
                                           ? NULL
                                           : json_object_new_string(amdsmi_compute_mode_to_string(cm));
                json_object *des = json_object_new_string(amdsmi_compute_mode_to_string(want->compute));

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

static void plan_power(struct plan *p, size_t i, struct amdsmi_gpu *gpu,
                       const struct config_gpu *want, struct state_store *state) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        struct amdsmi_power_info info = { .size = sizeof(info) };
        struct power_sources src;
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
        if (state && state_get_power(state, bdf, &src) == 0 && src.host.present &&
            strcmp(power_source_origin(POWER_SOURCE_HOST, src.host.setter), "config") != 0) {
                row(p, i, bdf, "power_cap", now, des, "overridden",
                    "a host cap of %s W set at run time wins until amdsmi power clear --host",
                    watts_text(src.host.uw, lo, sizeof(lo)));
                return;
        }
        if (info.ppt0.cap.error == 0 && info.ppt0.cap.uw / 1000000 == want->power_cap_uw / 1000000)
                row(p, i, bdf, "power_cap", now, des, "none", "%s", "");
        else
                row(p, i, bdf, "power_cap", now, des, "apply",
                    "the host source; the lowest of the host, VM and APML sources is applied");
}

static void plan_sriov(struct plan *p, size_t i, struct amdsmi_gpu *gpu,
                       const struct config_gpu *want) {
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
                    "reload gim", bdf, want->num_vfs);
        else
                row(p, i, bdf, "num_vfs", now, des, "manual",
                    "amdsmid never changes a VF count on its own: amdsmi sriov set -g %s "
                    "--num-vfs %u", bdf, want->num_vfs);
}

/* amdsmid.conf's enforce, shown where the file says it for the GPU (a [gpu] section, or
 * [power] enforce = yes): what amdsmid does about an outside writer of power1_cap, and whether
 * the device holds one's cap now. */
static void plan_enforce(struct plan *p, size_t i, struct amdsmi_gpu *gpu,
                         const struct config_gpu *want, const struct state_store *state) {
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
        power_view_load(gpu, state, AMDSMI_POWER_READ_NO_METRICS, v);
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

static int apply_dry_run(struct cli *c) {
        _cleanup_(config_freep) struct config *conf = NULL;
        struct state_store *state = NULL;
        struct plan p = {};
        struct columns cols = {};
        char err[512] = "", path[4096];
        json_object *doc;
        int r;

        r = config_load(NULL, &conf, err, sizeof(err));
        if (r < 0)
                return cli_fail(c, config_refusal_errno(r), "%s", err[0] ? err : strerror(-r));
        if (config_path(path, sizeof(path)) < 0)
                snprintf(path, sizeof(path), "amdsmid.conf");
        r = cli_open(c);
        if (r < 0)
                return r;
        cli_begin_sample(c);
        p.rows = json_object_new_array();
        if (!p.rows)
                return cli_fail(c, -ENOMEM, "out of memory");
        if (state_open(STATE_READ, 1000, &state) < 0)
                state = NULL;
        FOREACH_SELECTED_GPU(c, i, gpu) {
                struct config_gpu want;
                bool any = config_desired(conf, amdsmi_gpu_get_bdf(gpu), &want);

                if (!any && !want.enforce_set && !conf->power_enforce)
                        continue;
                plan_partition(&p, i, gpu, &want);
                plan_power(&p, i, gpu, &want, state);
                if (want.enforce_set || conf->power_enforce)
                        plan_enforce(&p, i, gpu, &want, state);
                plan_sriov(&p, i, gpu, &want);
        }
        state_close(state);
        if (!conf->exists && c->format == OUTPUT_TABLE)
                fprintf(stderr, "amdsmi: no %s: nothing is desired\n", path);

        if (c->format == OUTPUT_JSON) {
                doc = cli_document(c, json_object_get(p.rows));
                json_object_object_del(doc, "gpus");
                json_set(doc, "dry_run", json_object_new_boolean(true));
                json_set(doc, "config", json_object_new_string(path));
                json_set(doc, "config_exists", json_object_new_boolean(conf->exists));
                json_set(doc, "settings", json_object_get(p.rows));
                json_set(doc, "exit_code", json_object_new_int(exit_code_from_errno(p.worst)));
                r = cli_print_json(c, doc);
                json_object_put(doc);
                c->json_printed = true;
        } else {
                r = columns_add_defs(&cols, apply_columns, ELEMENTSOF(apply_columns));
                if (r >= 0)
                        r = cli_emit(c, json_object_get(p.rows), &cols);
                columns_free(&cols);
        }
        json_object_put(p.rows);
        if (r < 0)
                return r;
        if (p.worst < 0 && !c->report.error_message) {
                /* the exit status the change would have had; the rows said why */
                c->report.error_message = strdup("the plan has settings that cannot be applied now");
                c->json_printed = true;
        }
        return p.worst;
}

static int call_manager(struct cli *c, const char *member, const char *types, uint64_t flags) {
        _cleanup_free_ char *message = NULL;
        json_object *reply = NULL;
        int r;

        if (!cli_daemon_running(c))
                return cli_fail(c, -ESRCH, "amdsmid is not running: it applies amdsmid.conf "
                                           "when it starts (systemctl start amdsmid)");
        r = cli_bus_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, member, 0, &reply,
                         &message, types, flags);
        json_object_put(reply);
        if (r < 0)
                return cli_fail(c, r, "%s: %s", member, message ? message : strerror(-r));
        return 0;
}

/* What amdsmid was asked, said once: a line, or with --json a document (apply_document). */
static int say_done(struct cli *c, const char *what) {
        json_object *doc;
        int r;

        if (c->format != OUTPUT_JSON) {
                printf("%s\n", what);
                return 0;
        }
        cli_begin_sample(c);
        doc = cli_document(c, NULL);
        if (!doc)
                return cli_fail(c, -ENOMEM, "out of memory");
        json_object_object_del(doc, "gpus");
        json_set(doc, "message", json_object_new_string(what));
        json_set(doc, "exit_code", json_object_new_int(0));
        r = cli_print_json(c, doc);
        json_object_put(doc);
        c->json_printed = true;
        return r;
}

int verb_apply(struct cli *c) {
        int r;

        if (c->report.dry_run)
                return apply_dry_run(c);
        /* amdsmid applies the whole file: a selection would be ignored, so it is refused */
        if (c->selection.n_items > 0)
                return cli_fail(c, -EINVAL, "amdsmi apply applies the whole amdsmid.conf: -g "
                                            "selects GPUs only with --dry-run");
        r = call_manager(c, "ApplyDesired", "t", 0);
        if (r < 0)
                return r;
        return say_done(c, "amdsmid applies amdsmid.conf now: see amdsmi history and its journal");
}

int verb_reload(struct cli *c) {
        int r;

        if (c->selection.n_items > 0)
                return cli_fail(c, -EINVAL, "amdsmi reload re-reads the whole amdsmid.conf: it "
                                            "takes no -g");
        r = call_manager(c, "Reload", NULL, 0);
        if (r < 0)
                return r;
        return say_done(c, "amdsmid re-read amdsmid.conf and applies what changed");
}
