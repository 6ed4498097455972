/* SPDX-License-Identifier: MIT */
/*
 * The performance record of the state file and the desired performance state (perf-state.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "amdsmid-conf.h"
#include "json-util.h"
#include "parse-util.h"
#include "perf-state.h"
#include "state.h"

#define LOCK_WAIT_MS 5000

void perf_desired_from_config(const struct config_gpu *c, struct perf_desired *ret) {
        *ret = (struct perf_desired){
                .level = c->perf_level,
                .determinism_sclk_mhz = c->perf_determinism_sclk_mhz,
                .sclk_min_mhz = c->sclk_min_mhz,
                .sclk_max_mhz = c->sclk_max_mhz,
                .mclk_max_mhz = c->mclk_max_mhz,
        };
        snprintf(ret->soc_pstate, sizeof(ret->soc_pstate), "%s", c->soc_pstate);
        snprintf(ret->xgmi_plpd, sizeof(ret->xgmi_plpd), "%s", c->xgmi_plpd);
}

static void drop_limits(struct perf_desired *d) {
        d->sclk_min_mhz = d->sclk_max_mhz = d->mclk_max_mhz = 0;
}

void perf_desired_merge(struct perf_desired *base, const struct perf_desired *top) {
        if (top->level != AMDSMI_PERF_LEVEL_UNKNOWN) {
                base->level = top->level;
                if (top->level != AMDSMI_PERF_LEVEL_MANUAL)
                        drop_limits(base);
                if (top->level != AMDSMI_PERF_LEVEL_PERF_DETERMINISM)
                        base->determinism_sclk_mhz = 0;
        }
        if (top->determinism_sclk_mhz)
                base->determinism_sclk_mhz = top->determinism_sclk_mhz;
        if (top->sclk_min_mhz)
                base->sclk_min_mhz = top->sclk_min_mhz;
        if (top->sclk_max_mhz)
                base->sclk_max_mhz = top->sclk_max_mhz;
        if (top->mclk_max_mhz)
                base->mclk_max_mhz = top->mclk_max_mhz;
        if (top->soc_pstate[0])
                snprintf(base->soc_pstate, sizeof(base->soc_pstate), "%s", top->soc_pstate);
        if (top->xgmi_plpd[0])
                snprintf(base->xgmi_plpd, sizeof(base->xgmi_plpd), "%s", top->xgmi_plpd);
}

void perf_desired_describe(const struct perf_desired *d, char *buf, size_t size) {
        size_t len = 0;

#define ADD(...)                                                                 \
        do {                                                                     \
                int n_ = snprintf(buf + len, size - len, "%s", len ? ", " : ""); \
                if (n_ > 0 && (size_t) n_ < size - len)                          \
                        len += (size_t) n_;                                      \
                n_ = snprintf(buf + len, size - len, __VA_ARGS__);               \
                if (n_ > 0 && (size_t) n_ < size - len)                          \
                        len += (size_t) n_;                                      \
        } while (0)
        buf[0] = '\0';
        if (d->level != AMDSMI_PERF_LEVEL_UNKNOWN)
                ADD("level %s", amdsmi_perf_level_to_string(d->level));
        if (d->determinism_sclk_mhz)
                ADD("determinism ceiling %" PRIu32 " MHz", d->determinism_sclk_mhz);
        if (d->sclk_min_mhz)
                ADD("sclk min %" PRIu32 " MHz", d->sclk_min_mhz);
        if (d->sclk_max_mhz)
                ADD("sclk max %" PRIu32 " MHz", d->sclk_max_mhz);
        if (d->mclk_max_mhz)
                ADD("mclk max %" PRIu32 " MHz", d->mclk_max_mhz);
        if (d->soc_pstate[0])
                ADD("soc_pstate %s", d->soc_pstate);
        if (d->xgmi_plpd[0])
                ADD("xgmi_plpd %s", d->xgmi_plpd);
#undef ADD
        if (!len)
                snprintf(buf, size, "none");
}

void perf_desired_apply_change(struct perf_desired *d, const struct perf_change *ch) {
        switch (ch->kind) {
        case PERF_CHANGE_LEVEL:
                d->level = ch->level;
                if (ch->level != AMDSMI_PERF_LEVEL_MANUAL)
                        drop_limits(d);
                d->determinism_sclk_mhz = 0;
                break;
        case PERF_CHANGE_DETERMINISM:
                d->level = AMDSMI_PERF_LEVEL_PERF_DETERMINISM;
                d->determinism_sclk_mhz = ch->mhz;
                drop_limits(d);
                break;
        case PERF_CHANGE_CLK_LIMIT:
                if (d->level != AMDSMI_PERF_LEVEL_MANUAL)
                        drop_limits(d);
                d->level = AMDSMI_PERF_LEVEL_MANUAL;
                d->determinism_sclk_mhz = 0;
                if (ch->clk == AMDSMI_CLK_MCLK)
                        d->mclk_max_mhz = ch->mhz;
                else if (ch->max)
                        d->sclk_max_mhz = ch->mhz;
                else
                        d->sclk_min_mhz = ch->mhz;
                break;
        case PERF_CHANGE_RESET_CLOCKS:
        case PERF_CHANGE_RESET_DETERMINISM:
                d->level = AMDSMI_PERF_LEVEL_AUTO;
                d->determinism_sclk_mhz = 0;
                drop_limits(d);
                break;
        case PERF_CHANGE_POLICY:
                snprintf(ch->policy == AMDSMI_PM_POLICY_SOC_PSTATE ? d->soc_pstate : d->xgmi_plpd,
                         sizeof(d->soc_pstate), "%s", ch->policy_value);
                break;
        default:
                break;
        }
}

/* ---- the record ------------------------------------------------------------------------- */

static const char *const u32_keys[] = { "determinism_sclk_mhz", "sclk_min_mhz", "sclk_max_mhz",
                                        "mclk_max_mhz" };
static const char *const str_keys[] = { "level", "soc_pstate", "xgmi_plpd" };

static int parse_record(struct state_error *e, const char *where, json_object *o,
                        struct perf_desired *ret) {
        struct perf_desired d = {};
        json_object *v;
        char at[256];

        if (!json_object_is_type(o, json_type_object))
                return state_fail(e, where, "not an object (%s)", state_json_type(o));
        if (!json_object_object_get_ex(o, "version", &v) || !json_object_is_type(v, json_type_int))
                return state_fail(e, where, "no version");
        if (json_object_get_int64(v) != PERF_STATE_VERSION)
                return state_fail(e, where, "version %" PRId64 " (this amdsmi knows %d)",
                                  json_object_get_int64(v), PERF_STATE_VERSION);
        for (size_t i = 0; i < ELEMENTSOF(u32_keys); i++) {
                int64_t n;

                snprintf(at, sizeof(at), "%s.%s", where, u32_keys[i]);
                if (!json_object_object_get_ex(o, u32_keys[i], &v))
                        continue;
                if (!json_object_is_type(v, json_type_int))
                        return state_fail(e, at, "not an integer (%s)", state_json_type(v));
                n = json_object_get_int64(v);
                if (n < 0 || n > CONFIG_CLOCK_MAX_MHZ)
                        return state_fail(e, at, "%" PRId64 " is not a clock in MHz", n);
                *(i == 0   ? &d.determinism_sclk_mhz
                  : i == 1 ? &d.sclk_min_mhz
                  : i == 2 ? &d.sclk_max_mhz
                           : &d.mclk_max_mhz) = (uint32_t) n;
        }
        for (size_t i = 0; i < ELEMENTSOF(str_keys); i++) {
                const char *s;

                snprintf(at, sizeof(at), "%s.%s", where, str_keys[i]);
                if (!json_object_object_get_ex(o, str_keys[i], &v))
                        continue;
                if (!json_object_is_type(v, json_type_string))
                        return state_fail(e, at, "not a string (%s)", state_json_type(v));
                s = json_object_get_string(v);
                if (strlen(s) >= sizeof(d.soc_pstate) ||
                    s[strspn(s,
                             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")])
                        return state_fail(e, at, "not a level or policy name");
                if (i == 0) {
                        if (*s && (amdsmi_perf_level_from_string(s, &d.level) < 0 ||
                                   !amdsmi_perf_level_accepted(d.level)))
                                return state_fail(e, at, "unknown level \"%s\"", s);
                } else
                        snprintf(i == 1 ? d.soc_pstate : d.xgmi_plpd, sizeof(d.soc_pstate), "%s",
                                 s);
        }
        if (ret)
                *ret = d;
        return 0;
}

static int check_performance(struct state_check *c, struct state_error *e, const char *where,
                             json_object *value) {
        return parse_record(e, where, value, NULL);
}

const struct state_record state_record_performance = {
        .name = "performance",
        .check = check_performance,
};

int perf_state_load(const char *bdf, struct perf_desired *ret) {
        struct state_store *s = NULL;
        struct state_error e;
        json_object *o;
        int r;

        *ret = (struct perf_desired){};
        r = state_open(STATE_READ, LOCK_WAIT_MS, &s);
        if (r < 0)
                return r;
        o = state_get_gpu_record(s, bdf, "performance");
        if (o && parse_record(&e, "performance", o, ret) < 0)
                *ret = (struct perf_desired){};
        state_close(s);
        return 0;
}

static json_object *record_json(const struct perf_desired *d) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "version", json_object_new_int(PERF_STATE_VERSION));
        json_set(o, "level",
                 json_object_new_string(d->level == AMDSMI_PERF_LEVEL_UNKNOWN
                                                ? ""
                                                : amdsmi_perf_level_to_string(d->level)));
        json_set(o, "determinism_sclk_mhz", json_object_new_uint64(d->determinism_sclk_mhz));
        json_set(o, "sclk_min_mhz", json_object_new_uint64(d->sclk_min_mhz));
        json_set(o, "sclk_max_mhz", json_object_new_uint64(d->sclk_max_mhz));
        json_set(o, "mclk_max_mhz", json_object_new_uint64(d->mclk_max_mhz));
        json_set(o, "soc_pstate", json_object_new_string(d->soc_pstate));
        json_set(o, "xgmi_plpd", json_object_new_string(d->xgmi_plpd));
        return o;
}

int perf_state_remember(const char *bdf, const struct perf_change *ch) {
        struct perf_desired d = {};
        struct state_store *s = NULL;
        struct state_error e;
        json_object *o;
        int r;

        r = state_open(STATE_WRITE, LOCK_WAIT_MS, &s);
        if (r < 0)
                return r;
        o = state_get_gpu_record(s, bdf, "performance");
        if (o && parse_record(&e, "performance", o, &d) < 0)
                d = (struct perf_desired){};
        perf_desired_apply_change(&d, ch);
        o = record_json(&d);
        if (!o) {
                state_close(s);
                return -ENOMEM;
        }
        r = state_set_gpu_record(s, bdf, "performance", o);
        if (r >= 0)
                r = state_commit(s);
        state_close(s);
        return r;
}

size_t perf_desired_steps(const struct perf_desired *d,
                          struct perf_change ret[PERF_DESIRED_STEPS_MAX]) {
        struct perf_change ch = {};
        size_t n = 0;

        if (d->level == AMDSMI_PERF_LEVEL_PERF_DETERMINISM && d->determinism_sclk_mhz)
                ret[n++] = (struct perf_change){ .kind = PERF_CHANGE_DETERMINISM,
                                                 .mhz = d->determinism_sclk_mhz };
        else if (d->level == AMDSMI_PERF_LEVEL_AUTO || d->level == AMDSMI_PERF_LEVEL_MANUAL)
                ret[n++] = (struct perf_change){ .kind = PERF_CHANGE_LEVEL, .level = d->level };
        if (d->level != AMDSMI_PERF_LEVEL_PERF_DETERMINISM && d->level != AMDSMI_PERF_LEVEL_AUTO) {
                /* the max first: a min above the default max is then not inverted */
                if (d->sclk_max_mhz)
                        ret[n++] = (struct perf_change){ .kind = PERF_CHANGE_CLK_LIMIT,
                                                         .clk = AMDSMI_CLK_SCLK,
                                                         .max = true,
                                                         .mhz = d->sclk_max_mhz };
                if (d->sclk_min_mhz)
                        ret[n++] = (struct perf_change){ .kind = PERF_CHANGE_CLK_LIMIT,
                                                         .clk = AMDSMI_CLK_SCLK,
                                                         .mhz = d->sclk_min_mhz };
                if (d->mclk_max_mhz)
                        ret[n++] = (struct perf_change){ .kind = PERF_CHANGE_CLK_LIMIT,
                                                         .clk = AMDSMI_CLK_MCLK,
                                                         .max = true,
                                                         .mhz = d->mclk_max_mhz };
        }
        if (d->soc_pstate[0]) {
                ch = (struct perf_change){ .kind = PERF_CHANGE_POLICY,
                                           .policy = AMDSMI_PM_POLICY_SOC_PSTATE };
                snprintf(ch.policy_value, sizeof(ch.policy_value), "%s", d->soc_pstate);
                ret[n++] = ch;
        }
        if (d->xgmi_plpd[0]) {
                ch = (struct perf_change){ .kind = PERF_CHANGE_POLICY,
                                           .policy = AMDSMI_PM_POLICY_XGMI_PLPD };
                snprintf(ch.policy_value, sizeof(ch.policy_value), "%s", d->xgmi_plpd);
                ret[n++] = ch;
        }
        return n;
}
