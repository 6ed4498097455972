/* SPDX-License-Identifier: MIT */
/*
 * amdsmi set -l LEVEL | -d SCLK_MHZ | -L sclk|mclk min|max MHZ | -p POLICY | -x POLICY and
 * amdsmi reset -d | -c: the performance controls, as amd-smi spells them. Through amdsmid's
 * org.amdsmi1.Performance when it runs, else in-process (root, or --direct) with the same
 * change (perf-ops.h): validated against what the GPU reads, planned, applied, verified,
 * undone on failure, recorded in the history.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bus-errors.h"
#include "bus.h"
#include "change.h"
#include "cli.h"
#include "parse-util.h"
#include "perf-ops.h"
#include "perf-state.h"

#define PERF_IFACE AMDSMI_BUS_IFACE_PERFORMANCE

static const struct column_def perf_csv_columns[] = {
        { "gpu", NULL, "gpu", 0 },
        { "bdf", NULL, "bdf", 0 },
        { "dry_run", NULL, "dry_run", 0 },
        { "change", NULL, "change", 0 },
        { "level_before", NULL, "before.level", 0 },
        { "level_after", NULL, "after.level", 0 },
        { "sclk_min_mhz", NULL, "after.sclk.soft_min_mhz", 0 },
        { "sclk_max_mhz", NULL, "after.sclk.soft_max_mhz", 0 },
        { "mclk_max_mhz", NULL, "after.mclk.soft_max_mhz", 0 },
        { "result", NULL, "result", 0 },
};

/* A clock value: 1 to 100000 MHz, "MHz" allowed. */
static int parse_mhz(const char *s, uint32_t *ret) {
        char buf[16];
        size_t n;
        uint32_t v;

        if (!s)
                return -EINVAL;
        n = strlen(s);
        if (n >= 3 && strcasecmp(s + n - 3, "mhz") == 0)
                n -= 3;
        if (n == 0 || n >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, s, n);
        buf[n] = '\0';
        if (parse_u32(buf, 10, &v) < 0 || v == 0 || v > 100000)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_set(struct cli *c, struct perf_change *ch) {
        const struct perf_options *o = &c->perf;

        *ch = (struct perf_change){ .lock = true };
        if (o->level) {
                ch->kind = PERF_CHANGE_LEVEL;
                if (amdsmi_perf_level_from_string(o->level, &ch->level) < 0)
                        return cli_fail(c, -EINVAL,
                                        "invalid performance level '%s' (levels: auto, manual; "
                                        "determinism: -d SCLK_MHZ)",
                                        o->level);
                if (ch->level == AMDSMI_PERF_LEVEL_PERF_DETERMINISM)
                        return cli_fail(c, -EINVAL,
                                        "-l %s needs the gfx clock ceiling: use "
                                        "-d/--perf-determinism SCLK_MHZ",
                                        o->level);
                return 0;
        }
        if (o->determinism) {
                ch->kind = PERF_CHANGE_DETERMINISM;
                if (parse_mhz(o->determinism, &ch->mhz) < 0)
                        return cli_fail(c, -EINVAL,
                                        "invalid determinism clock '%s': expected the gfx clock "
                                        "ceiling in MHz, e.g. -d 1900",
                                        o->determinism);
                return 0;
        }
        if (o->clk_limit) {
                ch->kind = PERF_CHANGE_CLK_LIMIT;
                if (amdsmi_clk_domain_from_string(o->clk, &ch->clk) < 0 ||
                    (ch->clk != AMDSMI_CLK_SCLK && ch->clk != AMDSMI_CLK_MCLK))
                        return cli_fail(c, -EINVAL,
                                        "invalid clock '%s' for -L (clocks: sclk, mclk): "
                                        "-L sclk|mclk min|max MHZ",
                                        o->clk);
                if (!o->bound ||
                    (strcasecmp(o->bound, "min") != 0 && strcasecmp(o->bound, "max") != 0))
                        return cli_fail(c, -EINVAL,
                                        "-L needs min or max after the clock: -L sclk|mclk "
                                        "min|max MHZ");
                ch->max = strcasecmp(o->bound, "max") == 0;
                if (parse_mhz(o->mhz, &ch->mhz) < 0)
                        return cli_fail(c, -EINVAL,
                                        "invalid clock value '%s' for -L: expected MHz, e.g. -L "
                                        "sclk max 1500",
                                        o->mhz ? o->mhz : "");
                return 0;
        }
        ch->kind = PERF_CHANGE_POLICY;
        ch->policy = o->soc_pstate ? AMDSMI_PM_POLICY_SOC_PSTATE : AMDSMI_PM_POLICY_XGMI_PLPD;
        snprintf(ch->policy_value, sizeof(ch->policy_value), "%s",
                 o->soc_pstate ? o->soc_pstate : o->xgmi_plpd);
        if (!ch->policy_value[0] ||
            strlen(o->soc_pstate ? o->soc_pstate : o->xgmi_plpd) >= sizeof(ch->policy_value))
                return cli_fail(c, -EINVAL, "invalid %s policy '%s': its id or name",
                                amdsmi_pm_policy_kind_to_string(ch->policy),
                                o->soc_pstate ? o->soc_pstate : o->xgmi_plpd);
        return 0;
}

static void record_direct(struct cli *c, const struct perf_change *ch, const char *bdf, int r,
                          const struct perf_outcome *out) {
        struct history_entry e = {
                .gpu = bdf,
                .change = perf_change_name(ch->kind),
                .old_value = out->old_value[0] ? out->old_value : NULL,
                .new_value = out->new_value[0] ? out->new_value : NULL,
                .result = r < 0 ? r : 0,
                .message = out->message[0] ? out->message : NULL,
        };

        if (!c->report.dry_run)
                (void) change_journal_record(&c->journal, e);
}

/* One GPU's change through amdsmid; *entry becomes its answer. */
static int change_via_daemon(struct cli *c, const struct perf_change *ch, size_t index,
                             struct amdsmi_gpu *gpu, json_object **entry) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        uint64_t flags = c->report.dry_run ? AMDSMI_BUS_FLAG_DRY_RUN : 0;
        _cleanup_free_ char *msg = NULL;
        json_object *reply = NULL, *lines;
        int r;

#define CALL(member, ...) \
        cli_bus_call(c, NULL, bdf, PERF_IFACE, member, 0, &reply, &msg, __VA_ARGS__)
        switch (ch->kind) {
        case PERF_CHANGE_LEVEL:
                r = CALL("SetPerformanceLevel", "st", amdsmi_perf_level_to_string(ch->level),
                         flags);
                break;
        case PERF_CHANGE_DETERMINISM:
                r = CALL("SetDeterminism", "ut", ch->mhz, flags);
                break;
        case PERF_CHANGE_CLK_LIMIT:
                r = CALL("SetClockLimit", "ssut", amdsmi_clk_domain_to_string(ch->clk),
                         ch->max ? "max" : "min", ch->mhz, flags);
                break;
        case PERF_CHANGE_RESET_CLOCKS:
                r = CALL("ResetClocks", "t", flags);
                break;
        case PERF_CHANGE_RESET_DETERMINISM:
                r = CALL("SetPerformanceLevel", "st", "auto", flags);
                break;
        default:
                r = CALL("SetPolicy", "sst", amdsmi_pm_policy_kind_to_string(ch->policy),
                         ch->policy_value, flags);
                break;
        }
#undef CALL
        if (json_object_is_type(reply, json_type_object)) {
                json_set(reply, "gpu", json_object_new_uint64(index));
                if (c->format == OUTPUT_TABLE &&
                    json_object_object_get_ex(reply, "messages", &lines))
                        for (size_t i = 0; i < json_object_array_length(lines); i++)
                                printf("%s\n",
                                       json_object_get_string(json_object_array_get_idx(lines, i)));
                json_object_put(*entry);
                *entry = reply;
                reply = NULL;
        }
        json_object_put(reply);
        if (r < 0) {
                if (msg)
                        return cli_fail(c, r, "%s", msg);
                return cli_fail(c, r, "GPU %zu (%s): amdsmid did not answer: %s", index, bdf,
                                strerror(-r));
        }
        return 0;
}

static int run_change(struct cli *c, const struct perf_change *ch) {
        json_object *gpus;
        int route, r, result = 0;

        route = cli_change_begin(c, NULL);
        if (route < 0)
                return route;
        gpus = json_object_new_array();
        if (!gpus)
                return cli_fail(c, -ENOMEM, "out of memory");
        FOREACH_SELECTED_GPU(c, i, gpu) {
                const char *bdf = amdsmi_gpu_get_bdf(gpu);
                json_object *e = perf_change_entry_new(ch, i, bdf, amdsmi_gpu_get_product(gpu),
                                                       c->report.dry_run);

                if (!e) {
                        if (result == 0)
                                result = cli_fail(c, -ENOMEM, "out of memory");
                        break;
                }
                if (route == CLI_ROUTE_DAEMON)
                        r = change_via_daemon(c, ch, i, gpu, &e);
                else {
                        struct perf_outcome out;

                        r = perf_change_gpu(&c->report, ch, i, gpu, e, &out);
                        record_direct(c, ch, bdf, r, &out);
                        /* kept as amdsmid keeps it: applied again after a reset (in-process
                         * too) and when amdsmid starts */
                        if (r == 0 && !c->report.dry_run) {
                                int k = perf_state_remember(bdf, ch);

                                if (k < 0)
                                        report_note(&c->report,
                                                    "GPU %zu (%s): the setting is made but not "
                                                    "kept in the state file: %s",
                                                    i, bdf, strerror(-k));
                        }
                }
                if (r < 0 && result == 0)
                        result = r;
                json_set(e, "result", cli_errno_json(r < 0 ? r : 0));
                json_object_array_add(gpus, e);
        }
        r = cli_emit_change(c, gpus, result, perf_csv_columns, ELEMENTSOF(perf_csv_columns));
        json_object_put(gpus);
        return r;
}

int perf_cli_set(struct cli *c) {
        struct perf_change ch;
        int r = parse_set(c, &ch);

        if (r < 0)
                return r;
        return run_change(c, &ch);
}

int perf_cli_reset(struct cli *c) {
        struct perf_change ch = {
                .kind = c->perf.reset_clocks ? PERF_CHANGE_RESET_CLOCKS
                                             : PERF_CHANGE_RESET_DETERMINISM,
                .lock = true,
        };

        return run_change(c, &ch);
}
