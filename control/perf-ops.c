/* SPDX-License-Identifier: MIT */
/*
 * The performance document and changes (perf-ops.h), for amdsmi(1) and amdsmid.
 *
 * A change reads the GPU first (level, soft limits, DPM ranges, policies), validates what is
 * asked against it and refuses before any write, naming the valid values; plans the writes
 * (the level switched to manual when the kernel needs it for soft limits: SMU 13.0.6 takes
 * pp_od_clk_voltage writes in manual or perf_determinism only); applies them under the GPU's
 * change lock; reads everything back; and when the result is not what was asked, puts the
 * previous level, limits and policy back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "change.h"
#include "json-util.h"
#include "perf-ops.h"

/* What a GPU reads now; each member with the errno of its read (0: valid). */
struct snap {
        int level_err;
        enum amdsmi_perf_level level;
        int od_err;
        struct amdsmi_od_clk od;
        int sclk_err, mclk_err;
        struct amdsmi_clk_levels sclk, mclk;
        int pol_err[_AMDSMI_PM_POLICY_MAX];
        struct amdsmi_pm_policy pol[_AMDSMI_PM_POLICY_MAX];
};

static void snap_read(struct amdsmi_gpu *gpu, struct snap *s) {
        *s = (struct snap){};
        s->level_err = amdsmi_gpu_read_perf_level(gpu, &s->level);
        s->od_err = amdsmi_gpu_read_od_clk(gpu, &s->od);
        s->sclk_err = amdsmi_gpu_read_clk_levels(gpu, AMDSMI_CLK_SCLK, &s->sclk);
        s->mclk_err = amdsmi_gpu_read_clk_levels(gpu, AMDSMI_CLK_MCLK, &s->mclk);
        for (int k = 0; k < _AMDSMI_PM_POLICY_MAX; k++)
                s->pol_err[k] =
                        amdsmi_gpu_read_pm_policy(gpu, (enum amdsmi_pm_policy_kind) k, &s->pol[k]);
}

static const char *const change_names[_PERF_CHANGE_MAX] = {
        [PERF_CHANGE_LEVEL] = "perf_level",
        [PERF_CHANGE_DETERMINISM] = "perf_determinism",
        [PERF_CHANGE_CLK_LIMIT] = "clock_limit",
        [PERF_CHANGE_RESET_CLOCKS] = "reset_clocks",
        [PERF_CHANGE_RESET_DETERMINISM] = "reset_determinism",
        [PERF_CHANGE_POLICY] = "pm_policy",
};

const char *perf_change_name(enum perf_change_kind k) {
        return (unsigned) k < _PERF_CHANGE_MAX ? change_names[k] : "performance";
}

bool perf_desired_empty(const struct perf_desired *d) {
        return d->level == AMDSMI_PERF_LEVEL_UNKNOWN && !d->determinism_sclk_mhz &&
               !d->sclk_min_mhz && !d->sclk_max_mhz && !d->mclk_max_mhz && !d->soc_pstate[0] &&
               !d->xgmi_plpd[0];
}

/* ---------------------------------------------------------------------------------------- */
/* The document */

static json_object *clock_json(const struct amdsmi_clk_levels *l, int lerr, bool od_present,
                               uint32_t soft_min, uint32_t soft_max) {
        json_object *o = json_object_new_object(), *lv;

        if (!o)
                return NULL;
        json_set(o, "soft_min_mhz", od_present ? json_object_new_uint64(soft_min) : NULL);
        json_set(o, "soft_max_mhz", od_present ? json_object_new_uint64(soft_max) : NULL);
        json_set(o, "range_min_mhz",
                 lerr == 0 ? json_object_new_uint64(amdsmi_clk_levels_min(l)) : NULL);
        json_set(o, "range_max_mhz",
                 lerr == 0 ? json_object_new_uint64(amdsmi_clk_levels_max(l)) : NULL);
        json_set(o, "current_mhz",
                 lerr == 0 && amdsmi_clk_levels_current_mhz(l)
                         ? json_object_new_uint64(amdsmi_clk_levels_current_mhz(l))
                         : NULL);
        json_set(o, "deep_sleep", lerr == 0 ? json_object_new_boolean(l->deep_sleep) : NULL);
        if (lerr == 0 && (lv = json_object_new_array())) {
                for (unsigned i = 0; i < l->n; i++)
                        json_object_array_add(lv, json_object_new_uint64(l->mhz[i]));
                json_set(o, "levels_mhz", lv);
        } else
                json_set(o, "levels_mhz", NULL);
        return o;
}

static json_object *policy_json(const struct amdsmi_pm_policy *p, int err) {
        json_object *o, *a;

        if (err < 0)
                return NULL;
        o = json_object_new_object();
        a = json_object_new_array();
        if (!o || !a) {
                json_object_put(o);
                json_object_put(a);
                return NULL;
        }
        for (unsigned i = 0; i < p->n; i++) {
                json_object *e = json_object_new_object();

                if (!e)
                        continue;
                json_set(e, "id", json_object_new_uint64(p->levels[i].id));
                json_set(e, "name", json_object_new_string(p->levels[i].name));
                json_object_array_add(a, e);
        }
        json_set(o, "current_id",
                 p->current >= 0 ? json_object_new_uint64(p->levels[p->current].id) : NULL);
        json_set(o, "current",
                 p->current >= 0 ? json_object_new_string(p->levels[p->current].name) : NULL);
        json_set(o, "policies", a);
        return o;
}

static json_object *snap_json(const struct snap *s) {
        json_object *o = json_object_new_object(), *acc;

        if (!o)
                return NULL;
        json_set(o, "level",
                 s->level_err == 0 ? json_object_new_string(amdsmi_perf_level_to_string(s->level))
                                   : NULL);
        acc = s->level_err == -EOPNOTSUPP ? NULL : json_object_new_array();
        if (acc)
                for (int l = 1; l < _AMDSMI_PERF_LEVEL_MAX; l++)
                        if (amdsmi_perf_level_accepted((enum amdsmi_perf_level) l))
                                json_object_array_add(
                                        acc, json_object_new_string(amdsmi_perf_level_to_string(
                                                     (enum amdsmi_perf_level) l)));
        json_set(o, "levels_accepted", acc);
        json_set(o, "sclk",
                 clock_json(&s->sclk, s->sclk_err, s->od_err == 0 && s->od.sclk_present,
                            s->od.sclk_min_mhz, s->od.sclk_max_mhz));
        json_set(o, "mclk",
                 clock_json(&s->mclk, s->mclk_err, s->od_err == 0 && s->od.mclk_present,
                            s->od.mclk_min_mhz, s->od.mclk_max_mhz));
        json_set(o, "soc_pstate",
                 policy_json(&s->pol[AMDSMI_PM_POLICY_SOC_PSTATE],
                             s->pol_err[AMDSMI_PM_POLICY_SOC_PSTATE]));
        json_set(o, "xgmi_plpd",
                 policy_json(&s->pol[AMDSMI_PM_POLICY_XGMI_PLPD],
                             s->pol_err[AMDSMI_PM_POLICY_XGMI_PLPD]));
        return o;
}

static void snap_errors(struct report *rep, size_t index, const struct snap *s) {
        static const struct {
                const char *field;
                size_t off;
        } f[] = {
                { "performance.level", offsetof(struct snap, level_err) },
                { "performance.soft_limits", offsetof(struct snap, od_err) },
                { "performance.sclk", offsetof(struct snap, sclk_err) },
                { "performance.mclk", offsetof(struct snap, mclk_err) },
                { "performance.soc_pstate", offsetof(struct snap, pol_err[0]) },
                { "performance.xgmi_plpd", offsetof(struct snap, pol_err[1]) },
        };

        for (size_t i = 0; i < ELEMENTSOF(f); i++) {
                int err = *(const int *) (const void *) ((const char *) s + f[i].off);

                /* a file the GPU does not have is null, not an error */
                if (err < 0 && err != -EOPNOTSUPP)
                        report_field_error_msg(rep, (int) index, f[i].field, err,
                                               err == -EIO ? "unavailable (after a fatal RAS "
                                                             "interrupt)"
                                                           : NULL);
        }
}

json_object *perf_document(struct report *rep, size_t index, struct amdsmi_gpu *gpu) {
        struct snap s;

        snap_read(gpu, &s);
        if (rep)
                snap_errors(rep, index, &s);
        return snap_json(&s);
}

json_object *perf_level_json(struct amdsmi_gpu *gpu) {
        enum amdsmi_perf_level l;

        if (amdsmi_gpu_read_perf_level(gpu, &l) < 0)
                return NULL;
        return json_object_new_string(amdsmi_perf_level_to_string(l));
}

json_object *perf_change_entry_new(const struct perf_change *ch, size_t index, const char *bdf,
                                   const char *product, bool dry_run) {
        json_object *e = json_object_new_object();

        if (!e)
                return NULL;
        json_set(e, "gpu", json_object_new_uint64(index));
        json_set(e, "bdf", json_object_new_string(bdf));
        json_set(e, "product", json_string_or_null(product));
        json_set(e, "change", json_object_new_string(perf_change_name(ch->kind)));
        json_set(e, "dry_run", json_object_new_boolean(dry_run));
        json_set(e, "plan", json_object_new_array());
        json_set(e, "before", NULL);
        json_set(e, "after", NULL);
        json_set(e, "messages", json_object_new_array());
        return e;
}

/* ---------------------------------------------------------------------------------------- */
/* A change */

struct run {
        struct report *rep;
        const struct perf_change *ch;
        size_t index;
        struct amdsmi_gpu *gpu;
        json_object *entry, *plan;
        struct perf_outcome *out;
        char who[64];
        struct snap before;
        /* the plan */
        enum amdsmi_perf_level set_level; /* UNKNOWN: the level stays */
        struct amdsmi_od_request od;      /* soft limits to write, then 'c' */
        bool od_write, od_restore;        /* od: write @od; 'r' and 'c' first */
        int policy_index;                 /* POLICY: the level's index in before.pol[] */
        bool level_after_od;              /* RESET_CLOCKS: auto after r/c */
};

_printf_(3, 4) static int fail(struct run *x, int r, const char *fmt, ...) {
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        snprintf(x->out->message, sizeof(x->out->message), "%s", msg);
        return report_fail(x->rep, r, "%s: %s", x->who, msg);
}

static void plan_line(struct run *x, const char *fmt, ...) _printf_(2, 3);
static void plan_line(struct run *x, const char *fmt, ...) {
        char msg[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (x->plan)
                json_object_array_add(x->plan, json_object_new_string(msg));
        report_say(x->rep, x->entry, "%s: %s%s", x->who, x->rep->dry_run ? "would " : "", msg);
}

static const char *level_name(enum amdsmi_perf_level l) {
        return amdsmi_perf_level_to_string(l);
}

static void policy_list(const struct amdsmi_pm_policy *p, char *buf, size_t size) {
        size_t len = 0;

        buf[0] = '\0';
        for (unsigned i = 0; i < p->n && len < size; i++) {
                int n = snprintf(buf + len, size - len, "%s%u (%s)", i ? ", " : "", p->levels[i].id,
                                 p->levels[i].name);

                if (n < 0)
                        break;
                len += (size_t) n;
        }
}

/* Whether the GPU can be changed at all: the level file is there and reads. */
static int check_gpu(struct run *x) {
        const struct snap *s = &x->before;

        if (s->level_err == -EOPNOTSUPP)
                return fail(x, -EOPNOTSUPP,
                            "no performance controls (power_dpm_force_performance_level is "
                            "absent: a multi-VF guest, or amdgpu is not bound)");
        if (s->level_err == -EBUSY)
                return fail(x, -EBUSY, "the GPU is in reset or suspended: try again later");
        if (s->level_err < 0)
                return fail(x, s->level_err, "cannot read the performance level: %s",
                            strerror(-s->level_err));
        return 0;
}

static int need_ranges(struct run *x, bool mclk) {
        const struct snap *s = &x->before;
        int err = mclk ? s->mclk_err : s->sclk_err;

        if (s->od_err == -EOPNOTSUPP)
                return fail(x, -EOPNOTSUPP, "no clock limits (pp_od_clk_voltage is absent)");
        if (s->od_err < 0)
                return fail(x, s->od_err == -EIO ? -EIO : s->od_err,
                            "cannot read pp_od_clk_voltage: %s",
                            s->od_err == -EIO ? "unavailable (after a fatal RAS interrupt)"
                                              : strerror(-s->od_err));
        if (err < 0)
                return fail(x, err, "cannot read pp_dpm_%s (the clock's range): %s",
                            mclk ? "mclk" : "sclk",
                            err == -EIO ? "unavailable (after a fatal RAS interrupt)"
                                        : strerror(-err));
        return 0;
}

static int validate(struct run *x) {
        const struct perf_change *ch = x->ch;
        const struct snap *s = &x->before;
        int r;

        x->set_level = AMDSMI_PERF_LEVEL_UNKNOWN;
        if (ch->kind != PERF_CHANGE_POLICY && (r = check_gpu(x)) < 0)
                return r;
        switch (ch->kind) {
        case PERF_CHANGE_LEVEL:
                if (!amdsmi_perf_level_accepted(ch->level))
                        return fail(x, -EINVAL,
                                    "performance level '%s' is not accepted: this GPU takes "
                                    "auto, manual, perf_determinism",
                                    level_name(ch->level));
                x->set_level = ch->level;
                return 0;
        case PERF_CHANGE_DETERMINISM: {
                uint32_t lo, hi;

                if ((r = need_ranges(x, false)) < 0)
                        return r;
                lo = amdsmi_clk_levels_min(&s->sclk);
                hi = amdsmi_clk_levels_max(&s->sclk);
                if (ch->mhz < lo || ch->mhz > hi)
                        return fail(x, -ERANGE,
                                    "determinism ceiling %" PRIu32 " MHz is outside the gfx "
                                    "clock's range %" PRIu32 "-%" PRIu32 " MHz",
                                    ch->mhz, lo, hi);
                x->set_level = AMDSMI_PERF_LEVEL_PERF_DETERMINISM;
                x->od = (struct amdsmi_od_request){ .sclk_max_mhz = ch->mhz };
                x->od_write = true;
                return 0;
        }
        case PERF_CHANGE_CLK_LIMIT: {
                bool mclk = ch->clk == AMDSMI_CLK_MCLK;
                const struct amdsmi_clk_levels *l = mclk ? &s->mclk : &s->sclk;
                uint32_t lo, hi, cur_min, cur_max;

                if (mclk && !ch->max)
                        return fail(x, -EOPNOTSUPP,
                                    "the memory clock's minimum cannot be changed on this GPU "
                                    "(the SMU sets the UCLK max only): use mclk max");
                if ((r = need_ranges(x, mclk)) < 0)
                        return r;
                if (mclk && !s->od.mclk_present)
                        return fail(x, -EOPNOTSUPP,
                                    "this GPU cannot set its memory clock max (no OD_MCLK in "
                                    "pp_od_clk_voltage)");
                lo = amdsmi_clk_levels_min(l);
                hi = amdsmi_clk_levels_max(l);
                if (ch->mhz < lo || ch->mhz > hi)
                        return fail(x, -ERANGE,
                                    "%s %s %" PRIu32 " MHz is outside the range %" PRIu32
                                    "-%" PRIu32 " MHz",
                                    mclk ? "mclk" : "sclk", ch->max ? "max" : "min", ch->mhz, lo,
                                    hi);
                /* the limits that hold once the level is manual: leaving auto or determinism
                 * for manual starts from the defaults */
                if (s->level == AMDSMI_PERF_LEVEL_MANUAL) {
                        cur_min = mclk ? s->od.mclk_min_mhz : s->od.sclk_min_mhz;
                        cur_max = mclk ? s->od.mclk_max_mhz : s->od.sclk_max_mhz;
                } else {
                        cur_min = lo;
                        cur_max = hi;
                }
                if (mclk && ch->mhz < s->od.mclk_min_mhz)
                        return fail(x, -EINVAL,
                                    "mclk max %" PRIu32 " MHz is below the memory clock's "
                                    "minimum %" PRIu32 " MHz",
                                    ch->mhz, s->od.mclk_min_mhz);
                if (!mclk && !ch->max && ch->mhz >= cur_max)
                        return fail(x, -EINVAL,
                                    "sclk min %" PRIu32 " MHz is not below the sclk max %" PRIu32
                                    " MHz (an inverted range): lower the min or raise the max "
                                    "first",
                                    ch->mhz, cur_max);
                if (!mclk && ch->max && ch->mhz <= cur_min)
                        return fail(x, -EINVAL,
                                    "sclk max %" PRIu32 " MHz is not above the sclk min %" PRIu32
                                    " MHz (an inverted range): raise the max or lower the min "
                                    "first",
                                    ch->mhz, cur_min);
                if (s->level != AMDSMI_PERF_LEVEL_MANUAL)
                        x->set_level = AMDSMI_PERF_LEVEL_MANUAL;
                x->od = mclk      ? (struct amdsmi_od_request){ .mclk_max_mhz = ch->mhz }
                        : ch->max ? (struct amdsmi_od_request){ .sclk_max_mhz = ch->mhz }
                                  : (struct amdsmi_od_request){ .sclk_min_mhz = ch->mhz };
                x->od_write = true;
                return 0;
        }
        case PERF_CHANGE_RESET_CLOCKS:
                if (s->level == AMDSMI_PERF_LEVEL_MANUAL ||
                    s->level == AMDSMI_PERF_LEVEL_PERF_DETERMINISM)
                        x->od_restore = s->od_err != -EOPNOTSUPP;
                x->set_level = AMDSMI_PERF_LEVEL_AUTO;
                x->level_after_od = true;
                return 0;
        case PERF_CHANGE_RESET_DETERMINISM:
                x->set_level = AMDSMI_PERF_LEVEL_AUTO;
                return 0;
        case PERF_CHANGE_POLICY: {
                const struct amdsmi_pm_policy *p = &s->pol[ch->policy];
                int err = s->pol_err[ch->policy];
                const char *name = amdsmi_pm_policy_kind_to_string(ch->policy);
                char list[256];

                if (err == -EOPNOTSUPP)
                        return fail(x, -EOPNOTSUPP,
                                    "no %s policy (pm_policy/%s is absent: the SOC does not "
                                    "offer it%s, or this is not bare metal)",
                                    name, name,
                                    ch->policy == AMDSMI_PM_POLICY_XGMI_PLPD ? " or the GPU is "
                                                                               "in no XGMI hive"
                                                                             : "");
                if (err == -EBUSY)
                        return fail(x, -EBUSY, "the GPU is in reset or suspended: try again later");
                if (err < 0)
                        return fail(x, err, "cannot read pm_policy/%s: %s", name, strerror(-err));
                x->policy_index = amdsmi_pm_policy_find(p, ch->policy_value);
                if (x->policy_index < 0) {
                        policy_list(p, list, sizeof(list));
                        return fail(x, -EINVAL, "unknown %s policy '%s' (valid: %s)", name,
                                    ch->policy_value, list);
                }
                return 0;
        }
        default:
                return -EINVAL;
        }
}

static void plan(struct run *x) {
        const struct snap *s = &x->before;
        char cmds[96];
        size_t len = 0;

        if (x->od_restore)
                plan_line(x, "restore the default clock limits (pp_od_clk_voltage: r, c)");
        if (x->set_level != AMDSMI_PERF_LEVEL_UNKNOWN && !x->level_after_od)
                plan_line(x, "set the performance level %s -> %s%s", level_name(s->level),
                          level_name(x->set_level),
                          x->ch->kind == PERF_CHANGE_CLK_LIMIT ? " (the kernel takes clock "
                                                                 "limits in manual only)"
                                                               : "");
        if (x->od_write) {
                cmds[0] = '\0';
                if (x->od.sclk_min_mhz)
                        len += (size_t) snprintf(cmds + len, sizeof(cmds) - len,
                                                 "s 0 %" PRIu32 ", ", x->od.sclk_min_mhz);
                if (x->od.sclk_max_mhz && len < sizeof(cmds))
                        len += (size_t) snprintf(cmds + len, sizeof(cmds) - len,
                                                 "s 1 %" PRIu32 ", ", x->od.sclk_max_mhz);
                if (x->od.mclk_max_mhz && len < sizeof(cmds))
                        len += (size_t) snprintf(cmds + len, sizeof(cmds) - len,
                                                 "m 1 %" PRIu32 ", ", x->od.mclk_max_mhz);
                plan_line(x, "write pp_od_clk_voltage: %sc", cmds);
        }
        if (x->set_level != AMDSMI_PERF_LEVEL_UNKNOWN && x->level_after_od)
                plan_line(x, "set the performance level %s -> %s", level_name(s->level),
                          level_name(x->set_level));
        if (x->ch->kind == PERF_CHANGE_POLICY) {
                const struct amdsmi_pm_policy *p = &s->pol[x->ch->policy];

                plan_line(x, "set %s %s -> %u (%s)", amdsmi_pm_policy_kind_to_string(x->ch->policy),
                          p->current >= 0 ? p->levels[p->current].name : "none",
                          p->levels[x->policy_index].id, p->levels[x->policy_index].name);
        }
}

/* The values the history shows. */
static void describe(const struct run *x, const struct snap *s, char *buf, size_t size) {
        const struct perf_change *ch = x->ch;

        switch (ch->kind) {
        case PERF_CHANGE_CLK_LIMIT:
                if (ch->clk == AMDSMI_CLK_MCLK)
                        snprintf(buf, size, "%s, mclk max %" PRIu32 " MHz", level_name(s->level),
                                 s->od.mclk_max_mhz);
                else
                        snprintf(buf, size, "%s, sclk %" PRIu32 "-%" PRIu32 " MHz",
                                 level_name(s->level), s->od.sclk_min_mhz, s->od.sclk_max_mhz);
                return;
        case PERF_CHANGE_DETERMINISM:
        case PERF_CHANGE_RESET_CLOCKS:
        case PERF_CHANGE_RESET_DETERMINISM:
                snprintf(buf, size, "%s, sclk %" PRIu32 "-%" PRIu32 " MHz", level_name(s->level),
                         s->od.sclk_min_mhz, s->od.sclk_max_mhz);
                return;
        case PERF_CHANGE_POLICY: {
                const struct amdsmi_pm_policy *p = &s->pol[ch->policy];

                if (p->current >= 0)
                        snprintf(buf, size, "%u (%s)", p->levels[p->current].id,
                                 p->levels[p->current].name);
                else
                        snprintf(buf, size, "none");
                return;
        }
        default:
                snprintf(buf, size, "%s", level_name(s->level));
        }
}

static int apply_steps(struct run *x) {
        int r;

        if (x->od_restore && (r = amdsmi_gpu_restore_od_clk(x->gpu)) < 0)
                return r;
        if (x->set_level != AMDSMI_PERF_LEVEL_UNKNOWN && !x->level_after_od &&
            (r = amdsmi_gpu_write_perf_level(x->gpu, x->set_level)) < 0)
                return r;
        if (x->od_write && (r = amdsmi_gpu_write_od_clk(x->gpu, &x->od, 0)) < 0)
                return r;
        if (x->set_level != AMDSMI_PERF_LEVEL_UNKNOWN && x->level_after_od &&
            (r = amdsmi_gpu_write_perf_level(x->gpu, x->set_level)) < 0)
                return r;
        if (x->ch->kind == PERF_CHANGE_POLICY &&
            (r = amdsmi_gpu_write_pm_policy(
                     x->gpu, x->ch->policy,
                     x->before.pol[x->ch->policy].levels[x->policy_index].id)) < 0)
                return r;
        return 0;
}

/* Whether what reads back is what was asked; the mismatch in @why. */
static bool verified(const struct run *x, const struct snap *a, char *why, size_t size) {
        const struct perf_change *ch = x->ch;

        if (x->set_level != AMDSMI_PERF_LEVEL_UNKNOWN &&
            (a->level_err < 0 || a->level != x->set_level)) {
                snprintf(why, size, "the level reads %s, not %s",
                         a->level_err < 0 ? "nothing" : level_name(a->level),
                         level_name(x->set_level));
                return false;
        }
        if (x->od_write || ch->kind == PERF_CHANGE_RESET_CLOCKS) {
                if (a->od_err < 0 && a->od_err != -EOPNOTSUPP) {
                        snprintf(why, size, "pp_od_clk_voltage does not read back: %s",
                                 strerror(-a->od_err));
                        return false;
                }
        }
        if ((x->od.sclk_min_mhz && a->od.sclk_min_mhz != x->od.sclk_min_mhz) ||
            (x->od.sclk_max_mhz && a->od.sclk_max_mhz != x->od.sclk_max_mhz) ||
            (x->od.mclk_max_mhz && a->od.mclk_max_mhz != x->od.mclk_max_mhz)) {
                snprintf(why, size,
                         "the soft limits read sclk %" PRIu32 "-%" PRIu32 " MHz, mclk max %" PRIu32
                         " MHz",
                         a->od.sclk_min_mhz, a->od.sclk_max_mhz, a->od.mclk_max_mhz);
                return false;
        }
        if (ch->kind == PERF_CHANGE_RESET_CLOCKS && a->od_err == 0 && a->sclk_err == 0 &&
            (a->od.sclk_min_mhz != amdsmi_clk_levels_min(&a->sclk) ||
             a->od.sclk_max_mhz != amdsmi_clk_levels_max(&a->sclk))) {
                snprintf(why, size,
                         "the gfx limits read %" PRIu32 "-%" PRIu32 " MHz, not the defaults",
                         a->od.sclk_min_mhz, a->od.sclk_max_mhz);
                return false;
        }
        if (ch->kind == PERF_CHANGE_POLICY) {
                const struct amdsmi_pm_policy *p = &a->pol[ch->policy];
                unsigned want = x->before.pol[ch->policy].levels[x->policy_index].id;

                if (a->pol_err[ch->policy] < 0 || p->current < 0 ||
                    p->levels[p->current].id != want) {
                        snprintf(why, size, "pm_policy/%s does not read back level %u",
                                 amdsmi_pm_policy_kind_to_string(ch->policy), want);
                        return false;
                }
        }
        return true;
}

/* Puts back the level, soft limits and policy of @x->before. @return 0 or the first error. */
static int restore(struct run *x) {
        const struct snap *b = &x->before;
        struct snap now;
        int r = 0, k;

        snap_read(x->gpu, &now);
        if (x->ch->kind == PERF_CHANGE_POLICY) {
                const struct amdsmi_pm_policy *p = &b->pol[x->ch->policy];

                if (p->current >= 0)
                        r = amdsmi_gpu_write_pm_policy(x->gpu, x->ch->policy,
                                                       p->levels[p->current].id);
                return r;
        }
        if (b->level_err < 0)
                return b->level_err;
        if (now.level_err < 0 || now.level != b->level)
                r = amdsmi_gpu_write_perf_level(x->gpu, b->level);
        if (b->od_err == 0 && b->level == AMDSMI_PERF_LEVEL_MANUAL) {
                struct amdsmi_od_request req = {
                        .sclk_min_mhz = b->od.sclk_min_mhz,
                        .sclk_max_mhz = b->od.sclk_max_mhz,
                        .mclk_max_mhz = b->od.mclk_present ? b->od.mclk_max_mhz : 0,
                };

                k = amdsmi_gpu_write_od_clk(x->gpu, &req, 0);
                if (r == 0)
                        r = k;
        } else if (b->od_err == 0 && b->level == AMDSMI_PERF_LEVEL_PERF_DETERMINISM) {
                struct amdsmi_od_request req = { .sclk_max_mhz = b->od.sclk_max_mhz };

                k = amdsmi_gpu_write_od_clk(x->gpu, &req, 0);
                if (r == 0)
                        r = k;
        }
        return r;
}

static const char *write_error(int r) {
        switch (r) {
        case -EINVAL:
                return "the kernel refused the value (EINVAL)";
        case -EPERM:
                return "the kernel takes clock limits in manual or perf_determinism only";
        case -EBUSY:
                return "the GPU is in reset or suspended";
        case -EOPNOTSUPP:
                return "the file is absent or read-only here";
        case -EIO:
                return "the commit was refused";
        default:
                return strerror(-r);
        }
}

static int change_locked(void *userdata) {
        struct run *x = userdata;
        struct snap after;
        char why[256];
        int r, k;

        /* read again under the lock: another change may have run */
        snap_read(x->gpu, &x->before);
        r = validate(x);
        if (r < 0)
                return r;
        describe(x, &x->before, x->out->old_value, sizeof(x->out->old_value));
        json_set(x->entry, "before", snap_json(&x->before));
        plan(x);
        if (x->rep->dry_run) {
                snprintf(x->out->new_value, sizeof(x->out->new_value), "%s", x->out->old_value);
                return 0;
        }
        r = apply_steps(x);
        snap_read(x->gpu, &after);
        if (r == 0 && !verified(x, &after, why, sizeof(why)))
                r = -EIO;
        else if (r < 0)
                snprintf(why, sizeof(why), "%s", write_error(r));
        if (r < 0) {
                k = restore(x);
                snap_read(x->gpu, &after);
                json_set(x->entry, "after", snap_json(&after));
                describe(x, &after, x->out->new_value, sizeof(x->out->new_value));
                if (k < 0)
                        return fail(x, r,
                                    "%s; restoring the previous state failed too (%s): the GPU "
                                    "reads %s; 'amdsmi reset -g %zu -c' puts the defaults back",
                                    why, strerror(-k), x->out->new_value, x->index);
                return fail(x, r, "%s; the previous state (%s) was put back", why,
                            x->out->old_value);
        }
        json_set(x->entry, "after", snap_json(&after));
        describe(x, &after, x->out->new_value, sizeof(x->out->new_value));
        snprintf(x->out->message, sizeof(x->out->message), "%s -> %s", x->out->old_value,
                 x->out->new_value);
        report_say(x->rep, x->entry, "%s: %s", x->who, x->out->message);
        return 0;
}

static int lock_failed(void *userdata, int r, const char *message) {
        struct run *x = userdata;

        snprintf(x->out->message, sizeof(x->out->message), "%s", message);
        return report_fail(x->rep, r, "%s", message);
}

int perf_change_gpu(struct report *rep, const struct perf_change *ch, size_t index,
                    struct amdsmi_gpu *gpu, json_object *entry, struct perf_outcome *out) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        struct run x = {
                .rep = rep,
                .ch = ch,
                .index = index,
                .gpu = gpu,
                .entry = entry,
                .out = out,
        };
        int r;

        *out = (struct perf_outcome){};
        snprintf(x.who, sizeof(x.who), "GPU %zu (%s)", index, bdf);
        x.plan = json_object_new_array();
        if (x.plan)
                json_set(entry, "plan", json_object_get(x.plan));
        r = change_run(
                &(struct change_lock){ .bdfs = &bdf,
                                       .n = 1,
                                       .wait_ms = PERF_LOCK_WAIT_MS,
                                       .who = x.who,
                                       .held = rep->dry_run || !ch->lock },
                &(const struct change_ops){ .apply = change_locked, .lock_failed = lock_failed },
                &x);
        json_object_put(x.plan);
        return r;
}
