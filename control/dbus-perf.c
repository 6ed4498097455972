/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's org.amdsmi1.Performance on each GPU object: the performance level and the PM
 * policies as properties (PerformanceLevel emits changes; SocPstate and XgmiPlpd are the
 * current policies' names, "" where the GPU has none), and the changes of set -l/-d/-L/-p/-x
 * and reset -d/-c as methods. Every mutating method is authorised by polkit
 * org.amdsmi1.performance.configure (a dry run needs none), runs as a job (serialised per GPU
 * with the other changes), goes through the same change as the in-process one (perf-ops.h:
 * validate, plan, apply, verify, restore on failure), is recorded in the history, and answers
 * the change's JSON report. flags: bit 0 dry run.
 *
 * Desired state: what amdsmid.conf (and the active profile) desires for a GPU
 * (perf_level, perf_determinism_sclk_mhz, sclk_min_mhz, sclk_max_mhz, mclk_max_mhz,
 * soc_pstate, xgmi_plpd), and what an operator set through these methods, kept in the state
 * file (gpus.<BDF>.performance, control/perf-state.c), are applied at start, after a GPU reset
 * or re-plug, and on reload: apply_desired queues one job per GPU that brings it there, the
 * configuration's keys first and the operator's on top.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "amdsmid-conf.h"
#include "amdsmid.h"
#include "bus-errors.h"
#include "history.h"
#include "perf-ops.h"
#include "perf-state.h"

#define PERF_IFACE AMDSMI_BUS_IFACE_PERFORMANCE
#define PERF_ACTION "org.amdsmi1.performance.configure"

/* The cached properties of a GPU (g->perf). */
struct dgpu_perf {
        char level[24];
        char soc_pstate[32], xgmi_plpd[32];
};

/* What a job changes: one change, or the desired state (a list of them). */
struct perf_job {
        char bdf[16];
        size_t index;
        struct perf_change ch[8];
        size_t n;
        bool desired;  /* applying the desired state: failures are logged, the steps go on */
        bool remember; /* an operator's change: kept in the state file */
};

static struct dgpu_perf *perf_get(struct dgpu *g) {
        if (!g->perf)
                g->perf = calloc(1, sizeof(*g->perf));
        return g->perf;
}

static void perf_free_gpu(struct dgpu *g) {
        free(g->perf);
        g->perf = NULL;
}

/* ---- properties ------------------------------------------------------------------------- */

static int property_string(sd_bus *bus, const char *path, const char *interface,
                           const char *property, sd_bus_message *reply, void *userdata,
                           sd_bus_error *error) {
        struct dgpu *g = userdata;
        const struct dgpu_perf *p = g->perf;
        const char *v = "";

        if (p)
                v = strcmp(property, "PerformanceLevel") == 0 ? p->level
                    : strcmp(property, "SocPstate") == 0      ? p->soc_pstate
                                                              : p->xgmi_plpd;
        return sd_bus_message_append(reply, "s", v);
}

static void set_prop(char *dst, size_t size, const char *v, const char *name, char ***changed) {
        if (strcmp(dst, v) == 0)
                return;
        snprintf(dst, size, "%s", v);
        (void) strv_extend(changed, name);
}

static char **perf_refresh(struct dgpu *g, struct amdsmi_gpu *gpu) {
        struct dgpu_perf *p = perf_get(g);
        struct amdsmi_pm_policy pol;
        enum amdsmi_perf_level l;
        char **changed = NULL;

        if (!p || g->busy > 0)
                return NULL;
        set_prop(p->level, sizeof(p->level),
                 amdsmi_gpu_read_perf_level(gpu, &l) == 0 ? amdsmi_perf_level_to_string(l) : "",
                 "PerformanceLevel", &changed);
        set_prop(p->soc_pstate, sizeof(p->soc_pstate),
                 amdsmi_gpu_read_pm_policy(gpu, AMDSMI_PM_POLICY_SOC_PSTATE, &pol) == 0 &&
                                 pol.current >= 0
                         ? pol.levels[pol.current].name
                         : "",
                 "SocPstate", &changed);
        set_prop(p->xgmi_plpd, sizeof(p->xgmi_plpd),
                 amdsmi_gpu_read_pm_policy(gpu, AMDSMI_PM_POLICY_XGMI_PLPD, &pol) == 0 &&
                                 pol.current >= 0
                         ? pol.levels[pol.current].name
                         : "",
                 "XgmiPlpd", &changed);
        return changed;
}

/* ---- jobs (worker threads: only the job and @ctx) --------------------------------------- */

static int perf_job_run(struct job *j, struct amdsmi_ctx *ctx) {
        struct perf_job *pj = j->userdata;
        struct report report = {
                .command = "set",
                .keep_field_errors = true,
                .dry_run = j->flags & AMDSMI_BUS_FLAG_DRY_RUN,
        };
        struct amdsmi_gpu *gpu = NULL;
        struct perf_outcome out = {}, first = {};
        json_object *entry = NULL, *steps = NULL;
        int r = 0, k;

        if (amdsmi_ctx_find_gpu(ctx, pj->bdf, &gpu) < 0 || !gpu) {
                r = report_fail(&report, -ENODEV, "GPU %s went away", pj->bdf);
                goto finish;
        }
        if (pj->n > 1 || pj->desired)
                steps = json_object_new_array();
        for (size_t i = 0; i < pj->n; i++) {
                json_object *e = perf_change_entry_new(&pj->ch[i], pj->index, pj->bdf,
                                                       amdsmi_gpu_get_product(gpu), report.dry_run);

                if (!e) {
                        r = -ENOMEM;
                        break;
                }
                k = perf_change_gpu(&report, &pj->ch[i], pj->index, gpu, e, &out);
                json_set(e, "result", report_errno_json(k));
                if (i == 0)
                        first = out;
                if (k < 0 && r == 0)
                        r = k;
                if (k < 0 && pj->desired)
                        log_full(LOG_WARNING, pj->bdf, perf_change_name(pj->ch[i].kind),
                                 "desired performance state not applied: %s", out.message);
                if (steps)
                        json_object_array_add(steps, e);
                else
                        entry = e;
                if (k < 0 && !pj->desired)
                        break;
        }
        if (steps) {
                entry = json_object_new_object();
                if (entry) {
                        json_set(entry, "gpu", json_object_new_uint64(pj->index));
                        json_set(entry, "bdf", json_object_new_string(pj->bdf));
                        json_set(entry, "changes", steps);
                } else
                        json_object_put(steps);
        }
        j->reply = entry;
        if (!pj->desired) {
                free(j->old_value);
                free(j->new_value);
                j->old_value = first.old_value[0] ? strdup(first.old_value) : NULL;
                j->new_value = first.new_value[0] ? strdup(first.new_value) : NULL;
        }
        free(j->message);
        j->message = NULL;
        if (r < 0)
                j->message = strdup(report.error_message ? report.error_message : strerror(-r));
        else if (out.message[0])
                j->message = strdup(out.message);

finish:
        if (!j->reply && r < 0)
                j->message = strdup(report.error_message ? report.error_message : strerror(-r));
        report_clear(&report);
        return r;
}

/* On the main thread after the change: the properties show it before the caller hears back;
 * an operator's change is remembered (the state file) to be applied again after a reset. */
static void perf_job_finish(struct job *j) {
        struct perf_job *pj = j->userdata;
        struct dgpu *g = manager_find_gpu(j->d, pj->bdf);
        struct amdsmi_gpu *gpu;

        if (j->r == 0 && pj->remember && !(j->flags & AMDSMI_BUS_FLAG_DRY_RUN)) {
                int r = perf_state_remember(pj->bdf, &pj->ch[0]);

                if (r < 0)
                        log_gpu(LOG_WARNING, pj->bdf,
                                "cannot keep the performance setting in the state file: %s",
                                strerror(-r));
        }
        if (!g)
                return;
        gpu = dgpu_handle(g);
        if (gpu) {
                _cleanup_strv_free_ char **names = perf_refresh(g, gpu);

                dgpu_emit_changed(g, PERF_IFACE, names);
        }
}

static int submit(struct dgpu *g, sd_bus_message *m, const char *name, struct perf_job *pj,
                  uint64_t flags, sd_bus_error *error) {
        const char *bdf = g->bdf;
        struct job *j;
        int r;

        snprintf(pj->bdf, sizeof(pj->bdf), "%s", g->bdf);
        pj->index = g->index;
        j = job_new(g->d, m, name, &bdf, 1, flags);
        if (!j) {
                free(pj);
                return m ? bus_error_errno(error, -ENOMEM, "out of memory") : -ENOMEM;
        }
        j->run = perf_job_run;
        j->finish = perf_job_finish;
        j->userdata = pj;
        j->free_userdata = free;
        if (job_set_change(j, pj->desired ? "perf_desired" : perf_change_name(pj->ch[0].kind), NULL,
                           NULL) < 0) {
                job_free(j);
                return m ? bus_error_errno(error, -ENOMEM, "out of memory") : -ENOMEM;
        }
        if (!m)
                return job_submit(j);
        r = job_authorise_and_submit(j, PERF_ACTION);
        if (r < 0)
                return bus_error_errno(error, r, "cannot queue %s(): %s", name, strerror(-r));
        return 1;
}

/* ---- methods ---------------------------------------------------------------------------- */

static int check_flags(uint64_t flags, const char *method, sd_bus_error *error) {
        if (flags & ~AMDSMI_BUS_FLAG_DRY_RUN)
                return bus_error_errno(error, -EINVAL, "%s(): unknown flags 0x%" PRIx64, method,
                                       flags & ~AMDSMI_BUS_FLAG_DRY_RUN);
        return 0;
}

static struct perf_job *job_of(const struct perf_change *ch) {
        struct perf_job *pj = calloc(1, sizeof(*pj));

        if (!pj)
                return NULL;
        pj->ch[0] = *ch;
        pj->n = 1;
        pj->remember = true;
        return pj;
}

static int submit_change(sd_bus_message *m, struct dgpu *g, const char *name,
                         const struct perf_change *ch, uint64_t flags, sd_bus_error *error) {
        struct perf_job *pj;
        int r = check_flags(flags, name, error);

        if (r < 0)
                return r;
        pj = job_of(ch);
        if (!pj)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        return submit(g, m, name, pj, flags, error);
}

static int method_set_level(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        struct perf_change ch = { .kind = PERF_CHANGE_LEVEL };
        const char *level;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "st", &level, &flags);
        if (r < 0)
                return r;
        if (amdsmi_perf_level_from_string(level, &ch.level) < 0)
                return bus_error_errno(error, -EINVAL,
                                       "invalid performance level '%s' (levels: auto, manual; "
                                       "determinism: SetDeterminism())",
                                       level);
        if (ch.level == AMDSMI_PERF_LEVEL_PERF_DETERMINISM)
                return bus_error_errno(error, -EINVAL,
                                       "perf_determinism needs the gfx clock ceiling: "
                                       "SetDeterminism(sclk_mhz, flags)");
        return submit_change(m, g, "SetPerformanceLevel", &ch, flags, error);
}

static int method_set_determinism(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        struct perf_change ch = { .kind = PERF_CHANGE_DETERMINISM };
        uint32_t mhz;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "ut", &mhz, &flags);
        if (r < 0)
                return r;
        if (mhz == 0)
                return bus_error_errno(error, -EINVAL, "the determinism ceiling is required");
        ch.mhz = mhz;
        return submit_change(m, g, "SetDeterminism", &ch, flags, error);
}

static int method_set_clock_limit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        struct perf_change ch = { .kind = PERF_CHANGE_CLK_LIMIT };
        const char *clock, *bound;
        uint32_t mhz;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "ssut", &clock, &bound, &mhz, &flags);
        if (r < 0)
                return r;
        if (amdsmi_clk_domain_from_string(clock, &ch.clk) < 0 ||
            (ch.clk != AMDSMI_CLK_SCLK && ch.clk != AMDSMI_CLK_MCLK))
                return bus_error_errno(error, -EINVAL, "invalid clock '%s' (clocks: sclk, mclk)",
                                       clock);
        if (strcmp(bound, "min") != 0 && strcmp(bound, "max") != 0)
                return bus_error_errno(error, -EINVAL, "invalid bound '%s' (min or max)", bound);
        ch.max = strcmp(bound, "max") == 0;
        if (mhz == 0)
                return bus_error_errno(error, -EINVAL, "a clock limit of 0 MHz");
        ch.mhz = mhz;
        return submit_change(m, g, "SetClockLimit", &ch, flags, error);
}

static int method_reset_clocks(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct perf_change ch = { .kind = PERF_CHANGE_RESET_CLOCKS };
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "t", &flags);
        if (r < 0)
                return r;
        return submit_change(m, userdata, "ResetClocks", &ch, flags, error);
}

static int method_set_policy(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct perf_change ch = { .kind = PERF_CHANGE_POLICY };
        const char *policy, *value;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "sst", &policy, &value, &flags);
        if (r < 0)
                return r;
        if (amdsmi_pm_policy_kind_from_string(policy, &ch.policy) < 0)
                return bus_error_errno(error, -EINVAL,
                                       "invalid policy '%s' (policies: soc_pstate, xgmi_plpd)",
                                       policy);
        if (!*value || strlen(value) >= sizeof(ch.policy_value))
                return bus_error_errno(error, -EINVAL, "invalid %s value '%s'", policy, value);
        snprintf(ch.policy_value, sizeof(ch.policy_value), "%s", value);
        return submit_change(m, userdata, "SetPolicy", &ch, flags, error);
}

static int method_explain(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        struct amdsmi_gpu *gpu = dgpu_handle(g);
        struct report report = { .keep_field_errors = true };
        struct perf_desired want = {};
        json_object *o, *doc;
        char buf[512];

        if (!gpu)
                return bus_error_errno(error, -ENODEV, "GPU %s went away", g->bdf);
        o = json_object_new_object();
        if (!o)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        json_set(o, "gpu", json_object_new_uint64(g->index));
        json_set(o, "bdf", json_object_new_string(g->bdf));
        json_set(o, "performance", perf_document(&report, g->index, gpu));
        (void) perf_state_load(g->bdf, &want);
        perf_desired_describe(&want, buf, sizeof(buf));
        json_set(o, "operator_set", json_object_new_string(buf));
        doc = report_document(&report, NULL);
        if (doc)
                json_set(doc, "gpus", json_object_new_array());
        if (doc) {
                json_object *gpus;

                if (json_object_object_get_ex(doc, "gpus", &gpus))
                        json_object_array_add(gpus, o);
                else
                        json_object_put(o);
        } else
                json_object_put(o);
        report_clear(&report);
        return bus_reply_json(m, doc);
}

static const sd_bus_vtable perf_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("PerformanceLevel", "s", property_string, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("SocPstate", "s", property_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("XgmiPlpd", "s", property_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("Explain", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json), method_explain,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetPerformanceLevel", SD_BUS_ARGS("s", level, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_level,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetDeterminism", SD_BUS_ARGS("u", sclk_mhz, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_determinism,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(
                "SetClockLimit", SD_BUS_ARGS("s", clock, "s", bound, "u", mhz, "t", flags),
                SD_BUS_RESULT("s", json), method_set_clock_limit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ResetClocks", SD_BUS_ARGS("t", flags), SD_BUS_RESULT("s", json),
                                method_reset_clocks, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetPolicy", SD_BUS_ARGS("s", policy, "s", value, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_policy,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* ---- the desired state ------------------------------------------------------------------ */

static bool desired_equal(const struct perf_desired *a, const struct perf_desired *b) {
        return a->level == b->level && a->determinism_sclk_mhz == b->determinism_sclk_mhz &&
               a->sclk_min_mhz == b->sclk_min_mhz && a->sclk_max_mhz == b->sclk_max_mhz &&
               a->mclk_max_mhz == b->mclk_max_mhz && strcmp(a->soc_pstate, b->soc_pstate) == 0 &&
               strcmp(a->xgmi_plpd, b->xgmi_plpd) == 0;
}

static void perf_apply_desired(struct dgpu *g, const struct config_gpu *want,
                               const struct config_gpu *old) {
        struct perf_desired conf = {}, before = {}, op = {}, all;
        struct perf_job *pj;
        int r;

        if (strcmp(g->role, "vf") == 0 || strcmp(g->role, "vf-guest-multi") == 0)
                return; /* no performance files */
        perf_desired_from_config(want, &conf);
        if (old)
                perf_desired_from_config(old, &before);
        (void) perf_state_load(g->bdf, &op);
        /* a reload that changed none of these keys leaves the GPU alone; at start, after a
         * reset or re-plug (@old NULL) the whole desired state is applied again */
        if (old && desired_equal(&conf, &before))
                return;
        all = conf;
        perf_desired_merge(&all, &op);
        if (perf_desired_empty(&all))
                return;
        if (g->driver && strcmp(g->driver, "gim") == 0) {
                /* gim hosts have no pm files (amdgpu is not loaded) */
                log_gpu(LOG_NOTICE, g->bdf,
                        "a performance state is desired but GPU %u is under gim, which has no "
                        "performance controls in sysfs",
                        g->index);
                return;
        }
        pj = calloc(1, sizeof(*pj));
        if (!pj)
                return;
        pj->desired = true;
        pj->n = perf_desired_steps(&all, pj->ch);
        if (pj->n == 0) {
                free(pj);
                return;
        }
        r = submit(g, NULL, "ApplyDesiredPerformance", pj, 0, NULL);
        if (r < 0)
                log_gpu(LOG_WARNING, g->bdf, "cannot queue the desired performance state: %s",
                        strerror(-r));
}

const struct slice perf_slice = {
        .interface = PERF_IFACE,
        .vtable = perf_vtable,
        .refresh = perf_refresh,
        .apply_desired = perf_apply_desired,
        .free_gpu = perf_free_gpu,
};
