/* SPDX-License-Identifier: MIT */
/*
 * The power slice's part of amdsmi(1):
 *
 *   amdsmi power [-g SEL] [-w S]                  draw, caps, range, sources, which one binds
 *   amdsmi power set -g SEL --host W | --vm NAME W [--vf BDF] | --apml W  [--dry-run]
 *   amdsmi power clear -g SEL --host | --vm NAME | --apml                 [--dry-run]
 *   amdsmi power apply -g SEL                                             [--dry-run]
 *   amdsmi set -g SEL -o W            (the host source, as amd-smi's set --power-cap)
 *   amdsmi reset -g SEL --power-cap   (clears the host source)
 *
 * The model (ARCHITECTURE §5 "Power"): each GPU has up to three kinds of source — host, one
 * per VM, apml (a privileged call, or the BMC agent's file under <runtime dir>/apml/) — kept in
 * the state file (power/power-state.h). The cap applied to PPT0 is their minimum, clamped to
 * the GPU's range (power/power-arbitration.h); no source means the default cap. Every read
 * compares the device's cap with that model: lower is an external limiter, higher an outside
 * writer. The model and the change procedure are power/power-ops.h, shared with amdsmid.
 *
 * Where a change runs (ARCHITECTURE §4, cli_change_begin()): through amdsmid when it runs
 * (org.amdsmi1.Power: SetSource, SetVmSource, SetSources, ClearSource, ClearSources, Apply,
 * one call per GPU; its answer is the GPU's object of the change document), else in-process
 * (root), recorded in the history with via "direct". Reads ask amdsmid's Explain() when it
 * runs, and read in-process with --direct or without it: the same document either way.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-errors.h"
#include "cli.h"
#include "exit-codes.h"
#include "change.h"
#include "history.h"
#include "parse-util.h"
#include "power-ops.h"

/* ---- amdsmi power ----------------------------------------------------------------------- */

static void report_state_warning(struct cli *c, const char *w) {
        if (!w || !w[0])
                return;
        if (c->format == OUTPUT_JSON) {
                json_object *e = error_entry_new(-1, "state", -EBADMSG, w);

                if (e) {
                        if (!c->report.errors)
                                c->report.errors = json_object_new_array();
                        if (c->report.errors)
                                json_object_array_add(c->report.errors, e);
                        else
                                json_object_put(e);
                }
        } else
                fprintf(stderr, "amdsmi: warning: %s\n", w);
}

static const struct column_def power_table_columns[] = {
        { NULL, "GPU", "gpu", 0 },
        { NULL, "BDF", "bdf", 0 },
        { NULL, "DRAW (W)", "draw_w", 0 },
        { NULL, "CAP (W)", "cap_w", 0 },
        { NULL, "RANGE (W)", "range_text", 0 },
        { NULL, "DEFAULT (W)", "cap_default_w", 0 },
        { NULL, "PPT1 (W)", "ppt1.cap_w", COLUMN_NONE },
        { NULL, "SOURCE", "effective_source", 0 },
        { NULL, "SOURCES (W, * binds)", "sources_text", 0 },
};

static const struct column_def power_csv_columns[] = {
        { "gpu", NULL, "gpu", 0 },
        { "bdf", NULL, "bdf", 0 },
        { "product", NULL, "product", 0 },
        { "role", NULL, "role", 0 },
        { "control", NULL, "control", 0 },
        { "draw_w", NULL, "draw_w", 0 },
        { "socket_power_w", NULL, "socket_power_w", 0 },
        { "cap_w", NULL, "cap_w", 0 },
        { "cap_min_w", NULL, "cap_min_w", 0 },
        { "cap_max_w", NULL, "cap_max_w", 0 },
        { "cap_default_w", NULL, "cap_default_w", 0 },
        { "cap_settable_min_w", NULL, "cap_settable_min_w", 0 },
        { "cap_settable_max_w", NULL, "cap_settable_max_w", 0 },
        { "ppt1_cap_w", NULL, "ppt1.cap_w", 0 },
        { "ppt1_cap_min_w", NULL, "ppt1.cap_min_w", 0 },
        { "ppt1_cap_max_w", NULL, "ppt1.cap_max_w", 0 },
        { "ppt1_cap_default_w", NULL, "ppt1.cap_default_w", 0 },
        { "effective_w", NULL, "effective_w", 0 },
        { "effective_source", NULL, "effective_source", 0 },
        { "cap_held_by", NULL, "cap_held_by", 0 },
        { "modelled_cap_w", NULL, "modelled_cap_w", 0 },
        { "binding", NULL, "binding", 0 },
        { "binding_vm", NULL, "binding_vm", 0 },
        { "clamp", NULL, "clamp", 0 },
        { "observed", NULL, "observed", 0 },
        { "host_cap_w", NULL, "sources[source=host].cap_w", 0 },
        { "apml_cap_w", NULL, "sources[source=apml].cap_w", 0 },
        { "sources", NULL, "sources_text", 0 },
        { "applied_w", NULL, "applied_w", 0 },
        { "notes", NULL, "notes", 0 },
};

/* The sources of the state file, opened once per sample when a GPU is read in-process. */
struct local_state {
        bool opened;
        struct state_store *st;
};

static struct state_store *local_state(struct cli *c, struct local_state *ls) {
        int r;

        if (ls->opened)
                return ls->st;
        ls->opened = true;
        r = state_open(STATE_READ, POWER_LOCK_WAIT_MS, &ls->st);
        if (r < 0) {
                char dir[256] = "";

                (void) state_dir(dir, sizeof(dir));
                cli_field_error(c, -1, "state", r);
                fprintf(stderr, "amdsmi: cannot read the power sources in %s: %s\n", dir,
                        strerror(-r));
                ls->st = NULL;
        }
        report_state_warning(c, ls->st ? state_warning(ls->st) : NULL);
        return ls->st;
}

int power_cli_limit(void *userdata, struct amdsmi_gpu *gpu, struct power_limit *ret) {
        _cleanup_free_ struct power_view *v = malloc(sizeof(*v));
        struct state_store *st = NULL;

        if (!v)
                return -ENOMEM;
        if (state_open(STATE_READ, POWER_LOCK_WAIT_MS, &st) < 0)
                st = NULL; /* the sources are unknown: the device's cap still says something */
        power_view_load(gpu, st, AMDSMI_POWER_READ_NO_METRICS, v);
        state_close(st);
        power_view_limit(v, ret);
        return 0;
}

/* In a watch, the gpu_metrics sample of @gpu that the limiters of this round need. */
static const struct sample_pair *power_sample_pair(struct cli *c, struct amdsmi_gpu *gpu) {
        struct sample_pair *p;

        if (!c->samples)
                return NULL;
        p = samples_get(c->samples, amdsmi_gpu_get_bdf(gpu));
        if (!p)
                return NULL;
        (void) sample_pair_update(p, gpu, 0); /* a failed read: the limiters stay unknown */
        return p;
}

struct power_read {
        struct cli *c;
        struct power_view *v;
        struct local_state *ls;
};

static json_object *power_read_gpu(void *userdata, size_t i, struct amdsmi_gpu *gpu) {
        struct power_read *k = userdata;
        json_object *o;

        power_view_load(gpu, local_state(k->c, k->ls), 0, k->v);
        o = power_gpu_object(&k->c->report, i, gpu, k->v);
        if (o)
                power_gpu_object_add_limiters(o, k->v, power_sample_pair(k->c, gpu));
        return o;
}

/* The GPUs' objects read in-process: the device, the state file's sources. */
static int power_read_gpus(struct cli *c, json_object **ret) {
        _cleanup_free_ struct power_view *v = malloc(sizeof(*v));
        struct local_state ls = {};
        json_object *gpus = json_object_new_array();
        int r = 0;

        if (!gpus || !v) {
                json_object_put(gpus);
                return cli_fail(c, -ENOMEM, "out of memory");
        }
        FOREACH_SELECTED_GPU(c, i, gpu) {
                struct power_read k = { c, v, &ls };
                json_object *o =
                        gpu_state_collect(&c->report, c->set.ctx, i, gpu, power_read_gpu, &k);

                if (!o) {
                        r = cli_fail(c, -ENOMEM, "out of memory");
                        break;
                }
                json_object_array_add(gpus, o);
        }
        state_close(ls.st);
        if (r < 0) {
                json_object_put(gpus);
                return r;
        }
        *ret = gpus;
        return 0;
}

int power_cli_collect(struct cli *c, json_object **ret) {
        int r = cli_read_document(c, "power", ret);

        return r == 0 ? power_read_gpus(c, ret) : r < 0 ? r : 0;
}

static int power_sample(struct cli *c) {
        json_object *gpus = NULL;
        struct columns cols = {};
        int r;

        r = cli_print_daemon_text(c, "power");
        if (r != 0)
                return r < 0 ? r : 0;
        /* amdsmid's model of the sources, else the device and the state file */
        r = cli_read_document(c, "power", &gpus);
        if (r == 0)
                r = power_read_gpus(c, &gpus);
        if (r < 0)
                return r;
        /* table and CSV helpers, not part of the JSON document */
        if (c->format != OUTPUT_JSON)
                for (size_t i = 0; i < json_object_array_length(gpus); i++)
                        power_gpu_object_add_text(json_object_array_get_idx(gpus, i));

        if (c->format == OUTPUT_TABLE) {
                json_object *tmp = json_object_get(gpus);

                r = columns_add_defs(&cols, power_table_columns, ELEMENTSOF(power_table_columns));
                if (r >= 0 && c->sample > 0)
                        fputc('\n', stdout); /* a watch: one table per sample */
                if (r >= 0)
                        r = output_table(stdout, &cols, gpus, "");
                for (size_t i = 0; r >= 0 && i < json_object_array_length(tmp); i++) {
                        json_object *g = json_object_array_get_idx(tmp, i), *notes, *n;

                        /* a GPU in reset or without a driver: its state says it all */
                        if (!json_object_object_get_ex(g, "notes", &notes) || !notes ||
                            output_state_marker(g))
                                continue;
                        for (size_t k = 0; k < json_object_array_length(notes); k++) {
                                json_object_object_get_ex(g, "gpu", &n);
                                printf("GPU %s: %s\n", json_object_get_string(n),
                                       json_object_get_string(json_object_array_get_idx(notes, k)));
                        }
                }
                json_object_put(tmp);
                columns_free(&cols);
                json_object_put(gpus);
                return r < 0 ? cli_fail(c, r, "cannot format the output: %s", strerror(-r)) : 0;
        }
        if (c->format == OUTPUT_CSV) {
                r = columns_add_defs(&cols, power_csv_columns, ELEMENTSOF(power_csv_columns));
                if (r < 0) {
                        json_object_put(gpus);
                        return cli_fail(c, r, "out of memory");
                }
        }
        r = cli_emit(c, gpus, &cols);
        columns_free(&cols);
        return r;
}

int verb_power(struct cli *c) {
        int r;

        /* in a watch read in-process, consecutive gpu_metrics samples give the limiters */
        if (c->interval_ns > 0)
                c->samples = &c->own_samples;
        r = cli_open_run(c, power_sample);
        c->samples = NULL;
        samples_clear(&c->own_samples);
        return r;
}

/* ---- changes ---------------------------------------------------------------------------- */

/* One value of --host / --vm / --apml / -o: -EINVAL (reported) for nonsense, 0 and < 1 W;
 * -ERANGE above what power1_cap takes. */
static int parse_value(struct cli *c, const char *option, const char *s, uint64_t *ret_uw) {
        uint64_t uw;
        int r;

        r = power_parse_watts(s, &uw);
        if (r == -ERANGE)
                return cli_fail(c, -ERANGE, "%s %s: too large (power1_cap takes at most "
                                            "4294.967295 W)", option, s);
        if (r < 0)
                return cli_fail(c, -EINVAL,
                                "invalid power value '%s' for %s: expected watts, e.g. 600, "
                                "600W, 450.5W, 600000mW or 0.6kW",
                                s, option);
        r = power_validate(uw);
        if (r == -ERANGE)
                return cli_fail(c, r, "%s %s: too large (power1_cap takes at most 4294.967295 W)",
                                option, s);
        if (r < 0)
                return cli_fail(c, r,
                                "%s %s: a cap is at least 1 W (writing 0 only re-applies the "
                                "current limit; to remove a source use 'amdsmi power clear')",
                                option, s);
        *ret_uw = uw;
        return 0;
}

/* Checks the sources given on the command line against the verb. */
static int parse_change(struct cli *c, enum power_change_kind kind, struct power_change *ret) {
        struct power_change ch = { .kind = kind,
                                   .host_option = c->power.cap ? "-o" : "--host" };
        int r;

        if (kind == POWER_CHANGE_APPLY) {
                *ret = ch;
                return 0;
        }
        if (!c->power.host && !c->power.apml && !c->power.vm && !c->power.damaged)
                return cli_fail(c, -EINVAL,
                                kind == POWER_CHANGE_SET
                                        ? "nothing to set: give --host W, --vm NAME W or --apml W"
                                        : "nothing to clear: give --host, --vm NAME, --apml or "
                                          "--damaged");
        if (c->power.vm && !power_vm_name_ok(c->power.vm_name))
                return cli_fail(c, -EINVAL,
                                "invalid VM name '%s': 1 to %d characters, no control characters",
                                c->power.vm_name, POWER_KEY_MAX - 1);
        if (c->power.vf_bdf && !c->power.vm)
                return cli_fail(c, -EINVAL, "--vf names the VF of a VM: give --vm NAME too");
        if (c->power.vf_bdf && !pci_bdf_valid(c->power.vf_bdf))
                return cli_fail(c, -EINVAL,
                                "invalid VF address '%s': expected a PCI address such as "
                                "0000:c1:02.0",
                                c->power.vf_bdf);

        if (kind == POWER_CHANGE_CLEAR) {
                const char *extra = c->power.host && c->power.host_value ? c->power.host_value
                                    : c->power.apml && c->power.apml_value ? c->power.apml_value
                                    : c->power.vm && c->power.vm_value     ? c->power.vm_value
                                                               : NULL;

                if (extra)
                        return cli_fail(c, -EINVAL,
                                        "'power clear' takes no value ('%s'): the option alone "
                                        "removes the source",
                                        extra);
        } else {
                if (c->power.host && !c->power.host_value)
                        return cli_fail(c, -EINVAL, "--host needs a value, e.g. --host 600W");
                if (c->power.apml && !c->power.apml_value)
                        return cli_fail(c, -EINVAL, "--apml needs a value, e.g. --apml 700W");
                if (c->power.vm && !c->power.vm_value)
                        return cli_fail(c, -EINVAL,
                                        "--vm needs a name and a value, e.g. --vm web1 450W");
                if (c->power.host && (r = parse_value(c, ch.host_option, c->power.host_value, &ch.host_uw)) < 0)
                        return r;
                if (c->power.apml && (r = parse_value(c, "--apml", c->power.apml_value, &ch.apml_uw)) < 0)
                        return r;
                if (c->power.vm && (r = parse_value(c, "--vm", c->power.vm_value, &ch.vm_uw)) < 0)
                        return r;
        }
        ch.host = c->power.host;
        ch.apml = c->power.apml;
        ch.vm = c->power.vm;
        ch.vm_name = c->power.vm_name;
        ch.vf_bdf = c->power.vf_bdf;
        ch.damaged = c->power.damaged;
        *ret = ch;
        return 0;
}

static const struct column_def change_csv_columns[] = {
        { "gpu", NULL, "gpu", 0 },
        { "bdf", NULL, "bdf", 0 },
        { "dry_run", NULL, "dry_run", 0 },
        { "control", NULL, "control", 0 },
        { "changes", NULL, "changes[].source", 0 },
        { "cap_before_w", NULL, "before.modelled_cap_w", 0 },
        { "cap_after_w", NULL, "after.modelled_cap_w", 0 },
        { "binding", NULL, "after.binding", 0 },
        { "applied_w", NULL, "apply.applied_w", 0 },
        { "readback_w", NULL, "apply.readback_w", 0 },
        { "truncated", NULL, "apply.truncated", 0 },
        { "limited", NULL, "apply.limited", 0 },
        { "result", NULL, "result", 0 },
};

/* In-process changes go to the history too (amdsmid records its own). */
static void record_direct(struct cli *c, const struct power_change *ch, const char *bdf, int r,
                          const struct power_outcome *out) {
        struct history_entry e = {
                .gpu = bdf,
                .change = ch->kind == POWER_CHANGE_APPLY ? "power_apply" : "power_source",
                .old_value = out->old_value[0] ? out->old_value : NULL,
                .new_value = out->new_value[0] ? out->new_value : NULL,
                .result = r < 0 ? r : 0,
                .message = out->message[0] ? out->message : NULL,
        };

        if (!c->report.dry_run)
                (void) change_journal_record(&c->journal, e);
}

/* amdsmid names the host value as 'power set' does ("--host 800 W is out of range"); for
 * 'set -o' the in-process change says "-o 800 W": the same words through amdsmid. */
static void name_host_option(const struct power_change *ch, char *msg) {
        static const char from[] = "): --host ", to[] = "): -o ";
        char *p;

        if (!msg || !ch->host_option || strcmp(ch->host_option, "-o") != 0)
                return;
        p = strstr(msg, from);
        if (!p)
                return;
        /* shorter: in place */
        memcpy(p, to, sizeof(to) - 1);
        memmove(p + sizeof(to) - 1, p + sizeof(from) - 1, strlen(p + sizeof(from) - 1) + 1);
}

/* The change of one GPU through amdsmid; *entry becomes its answer. */
static int change_via_daemon(struct cli *c, const struct power_change *ch, size_t index,
                             struct amdsmi_gpu *gpu, json_object **entry) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu), *vm = ch->vm_name ? ch->vm_name : "";
        uint64_t flags = c->report.dry_run ? AMDSMI_BUS_FLAG_DRY_RUN : 0;
        unsigned n = (unsigned) ch->host + (unsigned) ch->vm + (unsigned) ch->apml +
                     (unsigned) ch->damaged;
        struct item {
                const char *kind, *key, *vf;
                uint64_t uw;
        } it[4];
        _cleanup_free_ char *msg = NULL;
        json_object *reply = NULL, *lines;
        size_t k = 0;
        int r;

        if (ch->host)
                it[k++] = (struct item){ "host", "", "", ch->host_uw };
        if (ch->vm)
                it[k++] = (struct item){ "vm", vm, ch->vf_bdf ? ch->vf_bdf : "", ch->vm_uw };
        if (ch->apml)
                it[k++] = (struct item){ "apml", "", "", ch->apml_uw };
        if (ch->damaged)
                it[k++] = (struct item){ "damaged", "", "", 0 };

#define CALL(member, ...)                                                                   \
        cli_bus_call(c, NULL, bdf, AMDSMI_BUS_IFACE_POWER, member, 0, &reply, &msg,         \
                     __VA_ARGS__)
        if (ch->kind == POWER_CHANGE_APPLY)
                r = CALL("Apply", "t", flags);
        else if (ch->kind == POWER_CHANGE_SET && n == 1 && ch->vm && ch->vf_bdf)
                r = CALL("SetVmSource", "sstt", vm, ch->vf_bdf, ch->vm_uw, flags);
        else if (ch->kind == POWER_CHANGE_SET && n == 1)
                r = CALL("SetSource", "sstt", it[0].kind, it[0].key, it[0].uw, flags);
        else if (ch->kind == POWER_CHANGE_SET && n == 2)
                r = CALL("SetSources", "a(ssst)t", 2, it[0].kind, it[0].key, it[0].vf, it[0].uw,
                         it[1].kind, it[1].key, it[1].vf, it[1].uw, flags);
        else if (ch->kind == POWER_CHANGE_SET)
                r = CALL("SetSources", "a(ssst)t", 3, it[0].kind, it[0].key, it[0].vf, it[0].uw,
                         it[1].kind, it[1].key, it[1].vf, it[1].uw, it[2].kind, it[2].key,
                         it[2].vf, it[2].uw, flags);
        else if (n == 1)
                r = CALL("ClearSource", "sst", it[0].kind, it[0].key, flags);
        else if (n == 2)
                r = CALL("ClearSources", "a(ss)t", 2, it[0].kind, it[0].key, it[1].kind,
                         it[1].key, flags);
        else if (n == 3)
                r = CALL("ClearSources", "a(ss)t", 3, it[0].kind, it[0].key, it[1].kind,
                         it[1].key, it[2].kind, it[2].key, flags);
        else
                r = CALL("ClearSources", "a(ss)t", 4, it[0].kind, it[0].key, it[1].kind,
                         it[1].key, it[2].kind, it[2].key, it[3].kind, it[3].key, flags);
#undef CALL
        name_host_option(ch, msg);
        if (r < 0 && json_object_is_type(reply, json_type_object)) {
                /* amdsmid's report of the failed change: what it did and read back, the
                 * lines the in-process change prints before its error */
                json_set(reply, "gpu", json_object_new_uint64(index));
                if (c->format == OUTPUT_TABLE && json_object_object_get_ex(reply, "messages", &lines))
                        for (size_t i = 0; i < json_object_array_length(lines); i++)
                                printf("%s\n", json_object_get_string(
                                                       json_object_array_get_idx(lines, i)));
                json_object_put(*entry);
                *entry = reply;
                return cli_fail(c, r, "%s", msg ? msg : strerror(-r));
        }
        if (r < 0) {
                _cleanup_free_ struct power_view *v = malloc(sizeof(*v));
                struct state_store *st = NULL;

                json_object_put(reply);
                if (msg)
                        cli_fail(c, r, "%s", msg);
                else
                        cli_fail(c, r, "GPU %zu (%s): amdsmid did not answer: %s", index, bdf,
                                 strerror(-r));
                /* a failure without amdsmid's report (a denial): the GPU as it is now */
                if (v) {
                        (void) state_open(STATE_READ, POWER_LOCK_WAIT_MS, &st);
                        power_view_load(gpu, st, AMDSMI_POWER_READ_NO_METRICS, v);
                        power_change_entry_set_view(*entry, v);
                        state_close(st);
                }
                return r;
        }
        if (!json_object_is_type(reply, json_type_object)) {
                json_object_put(reply);
                return cli_fail(c, -EBADMSG, "GPU %zu (%s): amdsmid's answer is not an object",
                                index, bdf);
        }
        json_set(reply, "gpu", json_object_new_uint64(index));
        if (c->format == OUTPUT_TABLE && json_object_object_get_ex(reply, "messages", &lines))
                for (size_t i = 0; i < json_object_array_length(lines); i++)
                        printf("%s\n", json_object_get_string(json_object_array_get_idx(lines, i)));
        json_object_put(*entry);
        *entry = reply;
        return 0;
}

static int run_change(struct cli *c, enum power_change_kind kind) {
        struct power_change ch;
        char setter[POWER_SETTER_MAX];
        json_object *gpus;
        int route, r, result = 0;

        r = parse_change(c, kind, &ch);
        if (r < 0)
                return r;
        route = cli_change_begin(c, "a power cap belongs to the whole GPU");
        if (route < 0)
                return route;
        snprintf(setter, sizeof(setter), "amdsmi (uid %u, pid %ld)", (unsigned) getuid(),
                 (long) getpid());
        ch.setter = setter;
        ch.lock = true;
        gpus = json_object_new_array();
        if (!gpus)
                return cli_fail(c, -ENOMEM, "out of memory");

        FOREACH_SELECTED_GPU(c, i, gpu) {
                const char *bdf = amdsmi_gpu_get_bdf(gpu);
                json_object *e = power_change_entry_new(&ch, i, bdf, amdsmi_gpu_get_product(gpu),
                                                        c->report.dry_run);

                if (!e) {
                        if (result == 0)
                                result = cli_fail(c, -ENOMEM, "out of memory");
                        break;
                }
                if (route == CLI_ROUTE_DAEMON)
                        r = change_via_daemon(c, &ch, i, gpu, &e);
                else {
                        struct power_outcome out;

                        r = power_change_gpu(&c->report, &ch, i, gpu, e, &out);
                        report_state_warning(c, out.warning);
                        record_direct(c, &ch, bdf, r, &out);
                }
                if (r < 0 && result == 0)
                        result = r;
                json_set(e, "result", cli_errno_json(r < 0 ? r : 0));
                json_object_array_add(gpus, e);
        }
        r = cli_emit_change(c, gpus, result, change_csv_columns, ELEMENTSOF(change_csv_columns));
        json_object_put(gpus);
        return r;
}

int verb_power_set(struct cli *c) {
        return run_change(c, POWER_CHANGE_SET);
}

int verb_power_clear(struct cli *c) {
        return run_change(c, POWER_CHANGE_CLEAR);
}

int verb_power_apply(struct cli *c) {
        return run_change(c, POWER_CHANGE_APPLY);
}

int power_cli_set_cap(struct cli *c) {
        if (!c->power.cap_value)
                return cli_fail(c, -EINVAL, "-o/--power-cap needs a value in watts, e.g. -o 600");
        c->power.host = true;
        c->power.host_value = c->power.cap_value;
        return run_change(c, POWER_CHANGE_SET);
}

int power_cli_reset_cap(struct cli *c) {
        if (c->power.cap_value)
                return cli_fail(c, -EINVAL,
                                "reset --power-cap takes no value ('%s'): it removes the host's "
                                "cap",
                                c->power.cap_value);
        c->power.host = true;
        return run_change(c, POWER_CHANGE_CLEAR);
}
