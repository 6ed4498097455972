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
 * writer.
 *
 * A change, per GPU: wait for the GPU's change lock, lock the state file, validate the values
 * against the GPU's range, change the sources, arbitrate, apply (one write, one read-back),
 * record the applied cap, commit the state. A failed apply changes no source. gim hosts record
 * the sources and answer "not supported" for applying them; guests that cannot apply a cap
 * are refused before anything is recorded. Until amdsmid exists changes run in-process
 * (root).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "exit-codes.h"
#include "gpu-lock.h"
#include "power-apml.h"
#include "power-arbitration.h"
#include "power-state.h"
#include "time-util.h"
#include "parse-util.h"

#define LOCK_WAIT_MS 10000 /* GPU lock and state lock: power changes take milliseconds */

/* ---- formatting ------------------------------------------------------------------------- */

static json_object *json_w(uint64_t uw) {
        return json_scaled_u64(uw, 6);
}

static json_object *value_w(const struct amdsmi_power_value *v) {
        return v->error < 0 ? NULL : json_w(v->uw);
}

/* "600 W", "600.5 W", "unknown" */
static const char *fmt_w(uint64_t uw, char *buf, size_t len) {
        char n[24];

        if (uw == AMDSMI_NA || format_scaled_u64(uw, 6, n, sizeof(n)) < 0)
                snprintf(buf, len, "unknown");
        else
                snprintf(buf, len, "%s W", n);
        return buf;
}

static json_object *json_time(uint64_t usec) {
        struct timespec ts;
        char buf[40];

        if (usec == 0 || usec == AMDSMI_NA)
                return NULL;
        ts.tv_sec = (time_t) (usec / 1000000u);
        ts.tv_nsec = (long) (usec % 1000000u) * 1000;
        if (format_timestamp(&ts, buf, sizeof(buf)) < 0)
                return NULL;
        return json_object_new_string(buf);
}

/* ---- the model of one GPU ---------------------------------------------------------------- */

struct power_view {
        struct amdsmi_power_info info;
        int info_error;
        struct power_sources sources; /* the state's, with the APML file merged */
        struct apml_file apml;
        bool apml_used;
        struct power_explanation expl;
        int expl_error; /* < 0: the GPU's range is inconsistent */
        uint64_t applied_uw, applied_usec;
};

static void view_compute(struct power_view *v) {
        const struct amdsmi_power_limit *l = &v->info.ppt0;
        struct power_range range = {
                .cap_min_uw = l->min.error < 0 ? POWER_UW_UNKNOWN : l->min.uw,
                .cap_max_uw = l->max.error < 0 ? POWER_UW_UNKNOWN : l->max.uw,
                .default_uw = l->def.error < 0 ? POWER_UW_UNKNOWN : l->def.uw,
        };

        /* a cap_max of 0 (gim-style "unsupported") says nothing about the range */
        if (range.cap_max_uw == 0)
                range.cap_max_uw = POWER_UW_UNKNOWN;
        v->expl_error = power_arbitrate(&v->sources, &range, &v->expl);
        if (v->expl_error == 0)
                power_explanation_observe(&v->expl,
                                          l->cap.error < 0 ? POWER_UW_UNKNOWN : l->cap.uw);
}

/* Reads the device, the recorded sources and the APML file of one GPU. */
static void view_load(struct amdsmi_gpu *gpu, const struct state_store *st, uint64_t read_flags,
                      struct power_view *v) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);

        *v = (struct power_view){ .applied_uw = AMDSMI_NA, .applied_usec = AMDSMI_NA };
        v->info.size = sizeof(v->info);
        v->info_error = amdsmi_gpu_read_power(gpu, read_flags, &v->info);
        if (v->info_error < 0)
                v->info = (struct amdsmi_power_info){
                        .size = sizeof(v->info),
                        .control = AMDSMI_POWER_CONTROL_UNKNOWN,
                        .draw = { AMDSMI_NA, v->info_error },
                        .socket_power = { AMDSMI_NA, v->info_error },
                        .ppt0 = { { AMDSMI_NA, v->info_error }, { AMDSMI_NA, v->info_error },
                                  { AMDSMI_NA, v->info_error }, { AMDSMI_NA, v->info_error } },
                        .floor_uw = AMDSMI_NA,
                        .ceiling_uw = AMDSMI_NA,
                };
        power_sources_init(&v->sources);
        if (st) {
                (void) state_get_power(st, bdf, &v->sources);
                if (state_get_applied(st, bdf, &v->applied_uw, &v->applied_usec) < 0)
                        v->applied_uw = v->applied_usec = AMDSMI_NA;
        }
        (void) apml_read(bdf, &v->apml);
        v->apml_used = apml_merge(&v->sources, &v->apml) > 0;
        view_compute(v);
}

static bool can_apply(enum amdsmi_power_control c) {
        return c == AMDSMI_POWER_CONTROL_HWMON || c == AMDSMI_POWER_CONTROL_VF;
}

/* host, vm, apml, default; external / outside-writer when the device disagrees; NULL: none */
static const char *effective_source(const struct power_view *v) {
        if (v->expl_error < 0)
                return NULL;
        if (v->expl.observed == POWER_OBSERVED_EXTERNAL)
                return "external";
        if (v->expl.observed == POWER_OBSERVED_OUTSIDE_WRITER)
                return "outside-writer";
        if (v->expl.binding == POWER_SOURCE_NONE)
                return NULL;
        return power_source_kind_to_string(v->expl.binding);
}

static bool same_watts(uint64_t a, uint64_t b) {
        return a != AMDSMI_NA && b != AMDSMI_NA && a / POWER_UW_PER_W == b / POWER_UW_PER_W;
}

/* Sentences for an operator about what the model shows (JSON "notes", lines under tables). */
static json_object *view_notes(const struct power_view *v) {
        json_object *a = json_object_new_array();
        const struct power_explanation *e = &v->expl;
        char b1[48], b2[48], *s = NULL;

        if (!a)
                return NULL;
#define NOTE(...)                                                                   \
        do {                                                                        \
                if (asprintf(&s, __VA_ARGS__) >= 0) {                               \
                        json_object_array_add(a, json_object_new_string(s));        \
                        free(s);                                                    \
                }                                                                   \
        } while (0)

        if (!can_apply(v->info.control) && amdsmi_power_control_explain(v->info.control))
                NOTE("%s", amdsmi_power_control_explain(v->info.control));
        if (v->expl_error < 0)
                NOTE("the GPU reports an inconsistent range (minimum above maximum): nothing is "
                     "arbitrated");
        if (v->expl_error == 0 && e->observed == POWER_OBSERVED_EXTERNAL)
                NOTE("the device holds %s, below the modelled %s: an external limiter (the "
                     "BMC's platform limit, a node power budget, or the VM in a one-VF "
                     "guest) binds; amdsmi does not override it",
                     fmt_w(e->observed_uw, b1, sizeof(b1)), fmt_w(e->effective_uw, b2, sizeof(b2)));
        if (v->expl_error == 0 && e->observed == POWER_OBSERVED_OUTSIDE_WRITER)
                NOTE("the device holds %s, above the modelled %s: something other than amdsmi "
                     "wrote power1_cap",
                     fmt_w(e->observed_uw, b1, sizeof(b1)), fmt_w(e->effective_uw, b2, sizeof(b2)));
        if (v->expl_error == 0 && can_apply(v->info.control) && v->applied_uw != AMDSMI_NA &&
            e->effective_uw != POWER_UW_UNKNOWN && !same_watts(v->applied_uw, e->effective_uw))
                NOTE("the sources changed since amdsmi applied %s: 'amdsmi power apply' applies "
                     "%s",
                     fmt_w(v->applied_uw, b1, sizeof(b1)), fmt_w(e->effective_uw, b2, sizeof(b2)));
        if (v->expl_error == 0 && e->clamp == POWER_CLAMP_LOW)
                NOTE("the sources ask for %s, below the lowest cap the GPU takes: raised to %s",
                     fmt_w(e->requested_uw, b1, sizeof(b1)), fmt_w(e->effective_uw, b2, sizeof(b2)));
        if (v->expl_error == 0 && e->clamp == POWER_CLAMP_HIGH)
                NOTE("the sources ask for %s, above the GPU's maximum: lowered to %s",
                     fmt_w(e->requested_uw, b1, sizeof(b1)), fmt_w(e->effective_uw, b2, sizeof(b2)));
        if (v->apml.state == APML_FILE_MALFORMED || v->apml.state == APML_FILE_UNREADABLE)
                NOTE("APML file %s ignored: %s", v->apml.path, v->apml.error);
#undef NOTE
        return a;
}

static json_object *limit_object(const struct amdsmi_power_limit *l) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "cap_w", value_w(&l->cap));
        json_set(o, "cap_min_w", value_w(&l->min));
        json_set(o, "cap_max_w", value_w(&l->max));
        json_set(o, "cap_default_w", value_w(&l->def));
        return o;
}

static json_object *sources_array(const struct power_explanation *e) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < e->n_sources; i++) {
                const struct power_explain_source *s = &e->sources[i];
                json_object *o = json_object_new_object();

                if (!o)
                        break;
                json_set(o, "source", json_object_new_string(power_source_kind_to_string(s->kind)));
                json_set(o, "vm", s->kind == POWER_SOURCE_VM ? json_object_new_string(s->key) : NULL);
                json_set(o, "vf_bdf", s->vf_bdf[0] ? json_object_new_string(s->vf_bdf) : NULL);
                json_set(o, "cap_w", json_w(s->uw));
                json_set(o, "set_by", s->setter[0] ? json_object_new_string(s->setter) : NULL);
                json_set(o, "set_at", json_time(s->set_usec));
                json_set(o, "binds", json_object_new_boolean(s->binds));
                json_object_array_add(a, o);
        }
        return a;
}

static json_object *apml_file_object(const struct power_view *v) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "path", json_string_or_null(v->apml.path[0] ? v->apml.path : NULL));
        json_set(o, "state", json_object_new_string(apml_file_state_to_string(v->apml.state)));
        json_set(o, "cap_w", v->apml.state == APML_FILE_VALID ? json_w(v->apml.uw) : NULL);
        json_set(o, "set_at", v->apml.state == APML_FILE_VALID ? json_time(v->apml.mtime_usec)
                                                               : NULL);
        json_set(o, "error", v->apml.error[0] ? json_object_new_string(v->apml.error) : NULL);
        json_set(o, "used", json_object_new_boolean(v->apml_used));
        return o;
}

/* The per-GPU power object of `amdsmi power` (also "before"/"after" of a change). */
static void view_fill(json_object *o, const struct power_view *v) {
        const struct power_explanation *e = &v->expl;
        bool ok = v->expl_error == 0;
        uint64_t effective;

        json_set(o, "control",
                 json_object_new_string(amdsmi_power_control_to_string(v->info.control)));
        json_set(o, "draw_w", value_w(&v->info.draw));
        json_set(o, "socket_power_w", value_w(&v->info.socket_power));
        json_set(o, "cap_w", value_w(&v->info.ppt0.cap));
        json_set(o, "cap_min_w", value_w(&v->info.ppt0.min));
        json_set(o, "cap_max_w", value_w(&v->info.ppt0.max));
        json_set(o, "cap_default_w", value_w(&v->info.ppt0.def));
        json_set(o, "ppt1", v->info.ppt1_present ? limit_object(&v->info.ppt1) : NULL);

        /* What holds: the device's cap where it has one, else (gim) the model. */
        effective = v->info.ppt0.cap.error == 0 ? v->info.ppt0.cap.uw
                    : ok                        ? e->effective_uw
                                                : AMDSMI_NA;
        json_set(o, "effective_w", json_w(effective));
        json_set(o, "effective_source", json_string_or_null(effective_source(v)));
        json_set(o, "modelled_cap_w", ok ? json_w(e->effective_uw) : NULL);
        json_set(o, "binding",
                 ok && e->binding != POWER_SOURCE_NONE
                         ? json_object_new_string(power_source_kind_to_string(e->binding))
                         : NULL);
        json_set(o, "binding_vm",
                 ok && e->binding == POWER_SOURCE_VM ? json_object_new_string(e->binding_key)
                                                     : NULL);
        json_set(o, "clamp", ok ? json_object_new_string(power_clamp_to_string(e->clamp)) : NULL);
        json_set(o, "observed",
                 ok ? json_object_new_string(power_observed_to_string(e->observed)) : NULL);
        json_set(o, "applied_w", json_w(v->applied_uw));
        json_set(o, "applied_at", json_time(v->applied_usec));
        json_set(o, "sources", ok ? sources_array(e) : json_object_new_array());
        json_set(o, "apml_file", apml_file_object(v));
        json_set(o, "notes", view_notes(v));
}

/* ---- amdsmi power ----------------------------------------------------------------------- */

static void report_state_warning(struct cli *c, const struct state_store *st) {
        const char *w = st ? state_warning(st) : NULL;

        if (!w)
                return;
        if (c->format == OUTPUT_JSON) {
                json_object *e = error_entry_new(-1, "state", -EBADMSG, w);

                if (e) {
                        if (!c->errors)
                                c->errors = json_object_new_array();
                        if (c->errors)
                                json_object_array_add(c->errors, e);
                        else
                                json_object_put(e);
                }
        } else
                fprintf(stderr, "amdsmi: warning: %s\n", w);
}

/* "host 600*, vm:web1 650, apml 700 (file)"; "-" when none */
static json_object *sources_text(json_object *sources) {
        char buf[512];
        size_t n = 0;

        buf[0] = '\0';
        for (size_t i = 0; sources && i < json_object_array_length(sources) && n < sizeof(buf); i++) {
                json_object *s = json_object_array_get_idx(sources, i), *f;
                const char *kind = "", *vm = NULL, *setter = "";
                char w[32] = "?";
                bool binds = false;

                if (json_object_object_get_ex(s, "source", &f))
                        kind = json_object_get_string(f);
                if (json_object_object_get_ex(s, "vm", &f) && f)
                        vm = json_object_get_string(f);
                if (json_object_object_get_ex(s, "cap_w", &f) && f)
                        snprintf(w, sizeof(w), "%s", json_object_get_string(f));
                if (json_object_object_get_ex(s, "binds", &f))
                        binds = json_object_get_boolean(f);
                if (json_object_object_get_ex(s, "set_by", &f) && f)
                        setter = json_object_get_string(f);
                n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s%s%s%s %s%s%s", n ? ", " : "",
                                       kind, vm ? ":" : "", vm ? vm : "", w, binds ? "*" : "",
                                       strncmp(setter, "apml file", 9) == 0 ? " (file)" : "");
        }
        return json_object_new_string(n ? buf : "-");
}

static json_object *power_gpu(struct cli *c, size_t index, struct amdsmi_gpu *gpu,
                              const struct state_store *st) {
        json_object *o = json_object_new_object(), *sources = NULL, *range;
        struct power_view v;
        char lo[32], hi[32];

        if (!o)
                return NULL;
        view_load(gpu, st, 0, &v);
        if (v.info_error < 0)
                cli_field_error(c, (int) index, "power", v.info_error);
        json_set(o, "gpu", json_object_new_uint64(index));
        json_set(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_set(o, "product", json_object_new_string(amdsmi_gpu_get_product(gpu)));
        json_set(o, "role",
                 json_object_new_string(amdsmi_role_to_string(amdsmi_gpu_get_role(gpu))));
        view_fill(o, &v);

        if (c->format != OUTPUT_JSON) {
                /* table and CSV helpers, not part of the JSON document */
                json_object_object_get_ex(o, "sources", &sources);
                json_set(o, "sources_text", sources_text(sources));
                if (v.info.floor_uw != AMDSMI_NA && v.info.ceiling_uw != AMDSMI_NA &&
                    format_scaled_u64(v.info.floor_uw, 6, lo, sizeof(lo)) == 0 &&
                    format_scaled_u64(v.info.ceiling_uw, 6, hi, sizeof(hi)) == 0) {
                        char buf[80];

                        snprintf(buf, sizeof(buf), "%s-%s", lo, hi);
                        range = json_object_new_string(buf);
                } else
                        range = NULL;
                json_set(o, "range_text", range);
        }
        return o;
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
        { "ppt1_cap_w", NULL, "ppt1.cap_w", 0 },
        { "ppt1_cap_min_w", NULL, "ppt1.cap_min_w", 0 },
        { "ppt1_cap_max_w", NULL, "ppt1.cap_max_w", 0 },
        { "ppt1_cap_default_w", NULL, "ppt1.cap_default_w", 0 },
        { "effective_w", NULL, "effective_w", 0 },
        { "effective_source", NULL, "effective_source", 0 },
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

static int power_sample(struct cli *c) {
        struct state_store *st = NULL;
        json_object *gpus = json_object_new_array();
        struct columns cols = {};
        int r;

        if (!gpus)
                return cli_fail(c, -ENOMEM, "out of memory");
        cli_begin_sample(c);
        r = state_open(STATE_READ, LOCK_WAIT_MS, &st);
        if (r < 0) {
                char dir[256] = "";

                (void) state_dir(dir, sizeof(dir));
                cli_field_error(c, -1, "state", r);
                fprintf(stderr, "amdsmi: cannot read the power sources in %s: %s\n", dir,
                        strerror(-r));
                st = NULL;
        }
        report_state_warning(c, st);
        FOREACH_SELECTED_GPU(c, i, gpu) {
                json_object *o = power_gpu(c, i, gpu, st);

                if (!o) {
                        r = cli_fail(c, -ENOMEM, "out of memory");
                        break;
                }
                json_object_array_add(gpus, o);
        }
        state_close(st);
        if (r < 0 && r != -ENOMEM)
                r = 0;
        if (r < 0) {
                json_object_put(gpus);
                return r;
        }

        if (c->format == OUTPUT_TABLE) {
                json_object *tmp = json_object_get(gpus);

                r = columns_add_defs(&cols, power_table_columns, ELEMENTSOF(power_table_columns));
                if (r >= 0)
                        r = output_table(stdout, &cols, gpus, "");
                for (size_t i = 0; r >= 0 && i < json_object_array_length(tmp); i++) {
                        json_object *g = json_object_array_get_idx(tmp, i), *notes, *n;

                        if (!json_object_object_get_ex(g, "notes", &notes) || !notes)
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
        int r = cli_open(c);

        if (r < 0)
                return r;
        return cli_run(c, power_sample);
}

/* ---- changes ---------------------------------------------------------------------------- */

enum change_kind {
        CHANGE_SET,
        CHANGE_CLEAR,
        CHANGE_APPLY,
};

struct power_change {
        enum change_kind kind;
        bool host, apml, vm;
        uint64_t host_uw, apml_uw, vm_uw;
        const char *vm_name, *vf_bdf;
        const char *host_option; /* "--host", or "-o" for amdsmi set */
};

struct power_run {
        struct cli *c;
        const struct power_change *ch;
        json_object *gpus;
        int result; /* the first failure */
};

static int run_fail(struct power_run *run, int r) {
        if (run->result == 0)
                run->result = r;
        return r;
}

static bool vm_name_ok(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= POWER_KEY_MAX)
                return false;
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

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
static int parse_change(struct cli *c, enum change_kind kind, struct power_change *ret) {
        struct power_change ch = { .kind = kind,
                                   .host_option = c->power_cap ? "-o" : "--host" };
        int r;

        if (kind == CHANGE_APPLY) {
                *ret = ch;
                return 0;
        }
        if (!c->host && !c->apml && !c->vm)
                return cli_fail(c, -EINVAL,
                                kind == CHANGE_SET
                                        ? "nothing to set: give --host W, --vm NAME W or --apml W"
                                        : "nothing to clear: give --host, --vm NAME or --apml");
        if (c->vm && !vm_name_ok(c->vm_name))
                return cli_fail(c, -EINVAL,
                                "invalid VM name '%s': 1 to %d characters, no control characters",
                                c->vm_name, POWER_KEY_MAX - 1);
        if (c->vf_bdf && !c->vm)
                return cli_fail(c, -EINVAL, "--vf names the VF of a VM: give --vm NAME too");
        if (c->vf_bdf && !pci_bdf_valid(c->vf_bdf))
                return cli_fail(c, -EINVAL,
                                "invalid VF address '%s': expected a PCI address such as "
                                "0000:c1:02.0",
                                c->vf_bdf);

        if (kind == CHANGE_CLEAR) {
                const char *extra = c->host && c->host_value ? c->host_value
                                    : c->apml && c->apml_value ? c->apml_value
                                    : c->vm && c->vm_value     ? c->vm_value
                                                               : NULL;

                if (extra)
                        return cli_fail(c, -EINVAL,
                                        "'power clear' takes no value ('%s'): the option alone "
                                        "removes the source",
                                        extra);
        } else {
                if (c->host && !c->host_value)
                        return cli_fail(c, -EINVAL, "--host needs a value, e.g. --host 600W");
                if (c->apml && !c->apml_value)
                        return cli_fail(c, -EINVAL, "--apml needs a value, e.g. --apml 700W");
                if (c->vm && !c->vm_value)
                        return cli_fail(c, -EINVAL,
                                        "--vm needs a name and a value, e.g. --vm web1 450W");
                if (c->host && (r = parse_value(c, ch.host_option, c->host_value, &ch.host_uw)) < 0)
                        return r;
                if (c->apml && (r = parse_value(c, "--apml", c->apml_value, &ch.apml_uw)) < 0)
                        return r;
                if (c->vm && (r = parse_value(c, "--vm", c->vm_value, &ch.vm_uw)) < 0)
                        return r;
        }
        ch.host = c->host;
        ch.apml = c->apml;
        ch.vm = c->vm;
        ch.vm_name = c->vm_name;
        ch.vf_bdf = c->vf_bdf;
        *ret = ch;
        return 0;
}

static void setter_string(char *buf, size_t len) {
        snprintf(buf, len, "amdsmi (uid %u, pid %ld)", (unsigned) getuid(), (long) getpid());
}

static json_object *change_list(const struct power_change *ch) {
        json_object *a = json_object_new_array();
        const char *action = ch->kind == CHANGE_SET ? "set" : "clear";

        struct {
                bool on;
                const char *source, *vm;
                uint64_t uw;
        } items[] = {
                { ch->host, "host", NULL, ch->host_uw },
                { ch->vm, "vm", ch->vm_name, ch->vm_uw },
                { ch->apml, "apml", NULL, ch->apml_uw },
        };

        for (size_t i = 0; a && i < ELEMENTSOF(items); i++) {
                json_object *o;

                if (!items[i].on || ch->kind == CHANGE_APPLY)
                        continue;
                o = json_object_new_object();
                if (!o)
                        break;
                json_set(o, "action", json_object_new_string(action));
                json_set(o, "source", json_object_new_string(items[i].source));
                json_set(o, "vm", json_string_or_null(items[i].vm));
                json_set(o, "vf_bdf",
                         items[i].vm && ch->vf_bdf ? json_object_new_string(ch->vf_bdf) : NULL);
                json_set(o, "cap_w", ch->kind == CHANGE_SET ? json_w(items[i].uw) : NULL);
                json_object_array_add(a, o);
        }
        return a;
}

static json_object *result_object(const struct amdsmi_power_cap_result *res) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "requested_w", json_w(res->requested_uw));
        json_set(o, "applied_w", json_w(res->applied_uw));
        json_set(o, "truncated", json_object_new_boolean(res->truncated));
        json_set(o, "written", json_object_new_boolean(res->written));
        json_set(o, "readback_w", json_w(res->readback_uw));
        json_set(o, "limited", json_object_new_boolean(res->limited));
        return o;
}

/* Values against the GPU's range: -ERANGE (reported) outside [max(cap_min, 1 W), cap_max]. */
static int check_range(struct power_run *run, size_t index, struct amdsmi_gpu *gpu,
                       const struct power_view *v, const char *option, const char *name,
                       uint64_t uw) {
        char w[48], lo[48], hi[48];

        if (v->info.floor_uw == AMDSMI_NA || v->info.ceiling_uw == AMDSMI_NA)
                return 0; /* unknown range (gim): nothing to check against */
        if (uw >= v->info.floor_uw && uw <= v->info.ceiling_uw)
                return 0;
        return cli_fail(run->c, -ERANGE,
                        "GPU %zu (%s): %s%s%s %s is out of range: valid %s to %s", index,
                        amdsmi_gpu_get_bdf(gpu), option, name ? " " : "", name ? name : "",
                        fmt_w(uw, w, sizeof(w)), fmt_w(v->info.floor_uw, lo, sizeof(lo)),
                        fmt_w(v->info.ceiling_uw, hi, sizeof(hi)));
}

/* --vf names one of this GPU's VFs when the GPU has VFs to compare with (a PF with SR-IOV
 * enabled); elsewhere (no VFs yet, a guest) it cannot be checked and is recorded as given.
 * -EINVAL (reported) for a VF of another GPU. */
static int check_vf(struct power_run *run, size_t index, struct amdsmi_gpu *gpu) {
        _cleanup_free_ struct amdsmi_sriov_info *si = calloc(1, sizeof(*si));
        const char *vf = run->ch->vf_bdf;

        if (!si)
                return cli_fail(run->c, -ENOMEM, "out of memory");
        si->size = sizeof(*si);
        if (amdsmi_gpu_read_sriov(gpu, si) < 0 || !si->capable || si->n_vfs == 0)
                return 0;
        for (unsigned i = 0; i < si->n_vfs; i++)
                if (strcmp(si->vfs[i].bdf, vf) == 0)
                        return 0;
        return cli_fail(run->c, -EINVAL, "GPU %zu (%s): %s is not one of its VFs (%s to %s)",
                        index, amdsmi_gpu_get_bdf(gpu), vf, si->vfs[0].bdf,
                        si->vfs[si->n_vfs - 1].bdf);
}

/* Changes the recorded sources. -ENOENT (reported) to clear a VM that has no source. */
static int edit_sources(struct power_run *run, size_t index, json_object *entry,
                        struct power_sources *s) {
        const struct power_change *ch = run->ch;
        char setter[POWER_SETTER_MAX];
        uint64_t now = now_realtime_us();
        int r = 0;

        setter_string(setter, sizeof(setter));
        if (ch->kind == CHANGE_SET) {
                if (ch->host)
                        r = power_sources_set(s, POWER_SOURCE_HOST, NULL, NULL, ch->host_uw,
                                              setter, now);
                if (r >= 0 && ch->vm)
                        r = power_sources_set(s, POWER_SOURCE_VM, ch->vm_name, ch->vf_bdf,
                                              ch->vm_uw, setter, now);
                if (r >= 0 && ch->apml)
                        r = power_sources_set(s, POWER_SOURCE_APML, NULL, NULL, ch->apml_uw,
                                              setter, now);
                if (r == -ENOSPC)
                        return cli_fail(run->c, -ERANGE,
                                        "GPU %zu: already %d VM sources, the most a GPU keeps "
                                        "(clear one first)",
                                        index, POWER_VM_MAX);
                if (r < 0)
                        return cli_fail(run->c, r, "GPU %zu: cannot record the source: %s",
                                        index, strerror(-r));
                return 0;
        }
        if (ch->kind != CHANGE_CLEAR)
                return 0;
        if (ch->host && power_sources_clear(s, POWER_SOURCE_HOST, NULL) == 0)
                cli_say(run->c, entry, "GPU %zu: no host source (nothing to clear)", index);
        if (ch->apml && power_sources_clear(s, POWER_SOURCE_APML, NULL) == 0)
                cli_say(run->c, entry, "GPU %zu: no APML source set by a call (nothing to clear)",
                    index);
        if (ch->vm && power_sources_clear(s, POWER_SOURCE_VM, ch->vm_name) == 0) {
                char names[256] = "";
                size_t n = 0;

                for (size_t i = 0; i < s->n_vms && n < sizeof(names); i++)
                        n += (size_t) snprintf(names + n, sizeof(names) - n, "%s%s",
                                               i ? ", " : "", s->vms[i].key);
                return cli_fail(run->c, -ENOENT, "GPU %zu: no source of VM '%s' (VMs: %s)", index,
                                ch->vm_name, n ? names : "none");
        }
        return 0;
}

static void say_result(struct power_run *run, json_object *entry, size_t index,
                       const struct power_view *before, const struct power_view *after,
                       const struct amdsmi_power_cap_result *res, bool applied) {
        char b1[48], b2[48], b3[48];
        const struct power_explanation *e = &after->expl;
        const char *src = e->binding == POWER_SOURCE_NONE
                                  ? "none"
                                  : power_source_kind_to_string(e->binding);

        cli_say(run->c, entry, "GPU %zu: effective cap %s -> %s (binds: %s%s%s%s)", index,
            fmt_w(before->expl_error == 0 ? before->expl.effective_uw : AMDSMI_NA, b1, sizeof(b1)),
            fmt_w(e->effective_uw, b2, sizeof(b2)), src,
            e->binding == POWER_SOURCE_VM ? " " : "",
            e->binding == POWER_SOURCE_VM ? e->binding_key : "",
            e->clamp == POWER_CLAMP_NONE ? "" : e->clamp == POWER_CLAMP_LOW ? ", raised to the minimum" : ", lowered to the maximum");
        if (!applied)
                return;
        if (res->truncated)
                cli_say(run->c, entry,
                    "GPU %zu: warning: %s is applied as %s (the driver keeps whole watts)", index,
                    fmt_w(res->requested_uw, b1, sizeof(b1)), fmt_w(res->applied_uw, b2, sizeof(b2)));
        if (!res->written)
                cli_say(run->c, entry, "GPU %zu: would write %s to power1_cap", index,
                    fmt_w(res->requested_uw, b1, sizeof(b1)));
        else if (res->limited)
                cli_say(run->c, entry,
                    "GPU %zu: applied %s; the device holds %s: an external limiter (the BMC's "
                    "platform limit, ...) is lower",
                    index, fmt_w(res->applied_uw, b1, sizeof(b1)),
                    fmt_w(res->readback_uw, b3, sizeof(b3)));
        else
                cli_say(run->c, entry, "GPU %zu: applied %s, read back %s", index,
                    fmt_w(res->applied_uw, b1, sizeof(b1)), fmt_w(res->readback_uw, b3, sizeof(b3)));
}

/* Maps a failed apply to one message. */
static int apply_error(struct power_run *run, size_t index, struct amdsmi_gpu *gpu, int r,
                       const struct power_view *v, const struct amdsmi_power_cap_result *res) {
        char w[48], lo[48], hi[48];
        const char *bdf = amdsmi_gpu_get_bdf(gpu);

        switch (r) {
        case -EOPNOTSUPP:
                return cli_fail(run->c, r, "GPU %zu (%s): %s", index, bdf,
                                amdsmi_power_control_explain(v->info.control)
                                        ?: "the power cap cannot be applied");
        case -ERANGE:
                if (res->write_error == -EINVAL)
                        return cli_fail(run->c, r,
                                        "GPU %zu (%s): the driver refused %s (EINVAL: outside "
                                        "the range it enforces now, or the firmware rejected it)",
                                        index, bdf, fmt_w(res->requested_uw, w, sizeof(w)));
                return cli_fail(run->c, r, "GPU %zu (%s): %s is out of range: valid %s to %s",
                                index, bdf, fmt_w(res->requested_uw, w, sizeof(w)),
                                fmt_w(res->floor_uw, lo, sizeof(lo)),
                                fmt_w(res->ceiling_uw, hi, sizeof(hi)));
        case -EBUSY:
                return cli_fail(run->c, r,
                                "GPU %zu (%s): busy (a reset in progress or the device "
                                "suspended): try again",
                                index, bdf);
        case -EIO:
                if (res->written && res->readback_uw != AMDSMI_NA)
                        return cli_fail(run->c, r,
                                        "GPU %zu (%s): wrote %s but the device reads back %s",
                                        index, bdf, fmt_w(res->applied_uw, w, sizeof(w)),
                                        fmt_w(res->readback_uw, hi, sizeof(hi)));
                __attribute__((fallthrough));
        default:
                return cli_fail(run->c, r, "GPU %zu (%s): applying %s failed: %s", index, bdf,
                                fmt_w(res->requested_uw, w, sizeof(w)), strerror(-r));
        }
}

static int change_one(struct power_run *run, size_t index, struct amdsmi_gpu *gpu,
                      json_object *entry) {
        struct cli *c = run->c;
        const struct power_change *ch = run->ch;
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        struct gpu_lock lock = GPU_LOCK_INIT;
        struct state_store *st = NULL;
        struct power_view before, after;
        struct amdsmi_power_cap_result res = { .size = sizeof(res) };
        bool gim, applied = false;
        pid_t holder = 0;
        int r;

        if (!c->dry_run) {
                r = gpu_lock_acquire_wait(&lock, bdf, LOCK_WAIT_MS, &holder);
                if (r == -EBUSY)
                        return cli_fail(c, r, "GPU %zu (%s) is being changed by PID %ld", index,
                                        bdf, (long) holder);
                if (r < 0)
                        return cli_fail(c, r, "cannot take the change lock of GPU %s: %s", bdf,
                                        strerror(-r));
        }
        r = state_open(c->dry_run ? STATE_READ : STATE_WRITE, LOCK_WAIT_MS, &st);
        if (r < 0) {
                char dir[256] = "";

                (void) state_dir(dir, sizeof(dir));
                gpu_lock_release(&lock);
                return cli_fail(c, r, "cannot open the state in %s: %s", dir,
                                r == -EBUSY ? "locked by another process" : strerror(-r));
        }
        report_state_warning(c, st);
        /* a state that cannot be saved (a newer amdsmi's): refuse before touching the GPU */
        r = c->dry_run ? 0 : state_can_commit(st);
        if (r < 0) {
                r = cli_fail(c, r == -EPROTONOSUPPORT ? -EPROTONOSUPPORT : r,
                             "GPU %zu (%s): the power sources cannot be saved to %s: %s", index,
                             bdf, state_path(st),
                             r == -EPROTONOSUPPORT ? "it was written by a newer amdsmi"
                                                   : "a damaged copy could not be kept aside");
                state_close(st);
                gpu_lock_release(&lock);
                return r;
        }

        view_load(gpu, st, AMDSMI_POWER_READ_NO_METRICS, &before);
        json_set(entry, "control",
                 json_object_new_string(amdsmi_power_control_to_string(before.info.control)));
        gim = before.info.control == AMDSMI_POWER_CONTROL_GIM;

        /* Guests that cannot apply a cap record nothing: there is nothing to arbitrate. */
        if (!can_apply(before.info.control) && !gim) {
                r = cli_fail(c, -EOPNOTSUPP, "GPU %zu (%s): %s", index, bdf,
                             amdsmi_power_control_explain(before.info.control)
                                     ?: "the power cap cannot be applied");
                goto out;
        }
        if (ch->kind == CHANGE_SET && ch->vm && ch->vf_bdf && (r = check_vf(run, index, gpu)) < 0)
                goto out;
        if (ch->kind == CHANGE_SET &&
            ((ch->host && (r = check_range(run, index, gpu, &before, ch->host_option, NULL,
                                           ch->host_uw)) < 0) ||
             (ch->vm && (r = check_range(run, index, gpu, &before, "--vm", ch->vm_name,
                                         ch->vm_uw)) < 0) ||
             (ch->apml && (r = check_range(run, index, gpu, &before, "--apml", NULL,
                                           ch->apml_uw)) < 0)))
                goto out;

        after = before;
        {
                /* edit what is recorded (without the file's APML limit), then merge again */
                struct power_sources recorded;

                power_sources_init(&recorded);
                (void) state_get_power(st, bdf, &recorded);
                r = edit_sources(run, index, entry, &recorded);
                if (r < 0)
                        goto out;
                after.sources = recorded;
                after.apml_used = apml_merge(&after.sources, &after.apml) > 0;
                view_compute(&after);
                if (after.expl_error < 0) {
                        r = cli_fail(c, -EIO,
                                     "GPU %zu (%s): the GPU reports an inconsistent power range",
                                     index, bdf);
                        goto out;
                }
                if (!c->dry_run) {
                        r = state_set_power(st, bdf, &recorded);
                        if (r < 0) {
                                r = cli_fail(c, r, "GPU %zu: cannot record the sources: %s",
                                             index, strerror(-r));
                                goto out;
                        }
                }
        }

        if (!gim && after.expl.effective_uw == POWER_UW_UNKNOWN) {
                cli_say(run->c, entry,
                    "GPU %zu: no source and the default cap is unknown: the cap stays as it is",
                    index);
        } else if (!gim) {
                r = amdsmi_gpu_set_power_cap(gpu, after.expl.effective_uw,
                                             c->dry_run ? AMDSMI_POWER_SET_DRY_RUN : 0, &res);
                json_set(entry, "apply", result_object(&res));
                if (r < 0) {
                        r = apply_error(run, index, gpu, r, &after, &res);
                        goto out; /* nothing committed: the sources stay as they were */
                }
                applied = true;
                if (!c->dry_run)
                        (void) state_set_applied(st, bdf, res.applied_uw, now_realtime_us());
        }

        if (!c->dry_run) {
                r = state_commit(st);
                if (r < 0) {
                        r = cli_fail(c, r,
                                     "GPU %zu (%s): %s, but the sources could not be saved to "
                                     "%s: %s",
                                     index, bdf, applied ? "the cap was applied" : "nothing applied",
                                     state_path(st),
                                     r == -EPROTONOSUPPORT ? "written by a newer amdsmi"
                                                           : strerror(-r));
                        goto out;
                }
        }

        /* read back what holds now, for the document */
        if (applied && !c->dry_run) {
                after.applied_uw = res.applied_uw;
                after.info.ppt0.cap = (struct amdsmi_power_value){ res.readback_uw, 0 };
                view_compute(&after);
        }
        say_result(run, entry, index, &before, &after, &res, applied);
        if (gim)
                r = cli_fail(c, -EOPNOTSUPP, "GPU %zu (%s): %s%s", index, bdf,
                             c->dry_run ? "" : "sources recorded; ",
                             amdsmi_power_control_explain(AMDSMI_POWER_CONTROL_GIM));
        else
                r = 0;

out:
        {
                json_object *b = json_object_new_object(), *a = json_object_new_object();

                if (b)
                        view_fill(b, &before);
                if (a)
                        view_fill(a, r < 0 && !gim ? &before : &after);
                json_set(entry, "before", b);
                json_set(entry, "after", a);
        }
        state_close(st);
        gpu_lock_release(&lock);
        return r;
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

static int run_change(struct cli *c, enum change_kind kind) {
        struct power_change ch;
        struct power_run run = { .c = c, .ch = &ch };
        int r;

        r = parse_change(c, kind, &ch);
        if (r < 0)
                return r;
        r = cli_check_change_selection(c, "a power cap belongs to the whole GPU");
        if (r < 0)
                return r;
        r = cli_authorise_change(c);
        if (r < 0)
                return r;
        r = cli_open(c);
        if (r < 0)
                return r;
        cli_begin_sample(c);
        run.gpus = json_object_new_array();
        if (!run.gpus)
                return cli_fail(c, -ENOMEM, "out of memory");

        FOREACH_SELECTED_GPU(c, i, gpu) {
                json_object *e = json_object_new_object();

                if (!e) {
                        run_fail(&run, cli_fail(c, -ENOMEM, "out of memory"));
                        break;
                }
                json_set(e, "gpu", json_object_new_uint64(i));
                json_set(e, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
                json_set(e, "product", json_object_new_string(amdsmi_gpu_get_product(gpu)));
                json_set(e, "dry_run", json_object_new_boolean(c->dry_run));
                json_set(e, "changes", change_list(&ch));
                json_set(e, "apply", NULL);
                json_set(e, "messages", json_object_new_array());
                r = change_one(&run, i, gpu, e);
                if (r < 0)
                        run_fail(&run, r);
                json_set(e, "result", cli_errno_json(r < 0 ? r : 0));
                json_object_array_add(run.gpus, e);
        }
        r = cli_emit_change(c, run.gpus, run.result, change_csv_columns,
                            ELEMENTSOF(change_csv_columns));
        json_object_put(run.gpus);
        return r;
}

int verb_power_set(struct cli *c) {
        return run_change(c, CHANGE_SET);
}

int verb_power_clear(struct cli *c) {
        return run_change(c, CHANGE_CLEAR);
}

int verb_power_apply(struct cli *c) {
        return run_change(c, CHANGE_APPLY);
}

int power_cli_set_cap(struct cli *c) {
        if (!c->power_cap_value)
                return cli_fail(c, -EINVAL, "-o/--power-cap needs a value in watts, e.g. -o 600");
        c->host = true;
        c->host_value = c->power_cap_value;
        return run_change(c, CHANGE_SET);
}

int power_cli_reset_cap(struct cli *c) {
        if (c->power_cap_value)
                return cli_fail(c, -EINVAL,
                                "reset --power-cap takes no value ('%s'): it removes the host's "
                                "cap",
                                c->power_cap_value);
        c->host = true;
        return run_change(c, CHANGE_CLEAR);
}
