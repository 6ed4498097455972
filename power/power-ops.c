/* SPDX-License-Identifier: MIT */
/*
 * The power model of one GPU and its change procedure, for amdsmi(1) and amdsmid
 * (power-ops.h). A change, per GPU: the GPU's change lock (in-process only), the state file's
 * exclusive lock, the values checked against the GPU's range, the sources changed, the
 * arbitrated cap written once and read back once, the applied cap recorded, the state
 * committed. A failed apply changes no source. gim hosts record the sources and answer "not
 * supported" for applying them; guests that cannot apply a cap are refused before anything is
 * recorded.
 */
#include "power-ops.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "change.h"
#include "gpu-set.h"
#include "parse-util.h"
#include "report.h"
#include "samples.h"
#include "time-util.h"

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

/* "600W", "none": the history's compact form */
static const char *fmt_compact(uint64_t uw, char *buf, size_t len) {
        char n[24];

        if (uw == AMDSMI_NA || format_scaled_u64(uw, 6, n, sizeof(n)) < 0)
                snprintf(buf, len, "none");
        else
                snprintf(buf, len, "%sW", n);
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

const char *power_source_origin(enum power_source_kind kind, const char *setter) {
        if (!setter)
                setter = "";
        if (kind == POWER_SOURCE_HOST &&
            strncmp(setter, POWER_SETTER_CONFIG, strlen(POWER_SETTER_CONFIG)) == 0)
                return "config";
        if (kind == POWER_SOURCE_APML && strncmp(setter, "apml file ", 10) == 0)
                return "file";
        return "runtime";
}

static bool host_from_config(const struct power_source *h) {
        return h->present && strcmp(power_source_origin(POWER_SOURCE_HOST, h->setter), "config") == 0;
}

/* ---- the view ----------------------------------------------------------------------------- */

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

void power_view_read_device(struct amdsmi_gpu *gpu, uint64_t read_flags, struct power_view *v) {
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
        v->apml = (struct apml_file){ .state = APML_FILE_ABSENT };
        v->expl_error = -ENODATA;
}

void power_view_set_sources(struct power_view *v, const char *bdf,
                            const struct power_sources *recorded, uint64_t applied_uw,
                            uint64_t applied_usec) {
        if (recorded)
                v->sources = *recorded;
        else
                power_sources_init(&v->sources);
        v->applied_uw = applied_uw;
        v->applied_usec = applied_usec;
        v->apml = (struct apml_file){ .state = APML_FILE_ABSENT };
        (void) apml_read(bdf, &v->apml);
        v->apml_used = apml_merge(&v->sources, &v->apml) > 0;
        view_compute(v);
}

void power_view_load(struct amdsmi_gpu *gpu, const struct state_store *st, uint64_t read_flags,
                     struct power_view *v) {
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        struct power_sources *recorded = malloc(sizeof(*recorded));
        uint64_t applied_uw = AMDSMI_NA, applied_usec = AMDSMI_NA;

        power_view_read_device(gpu, read_flags, v);
        if (recorded)
                power_sources_init(recorded);
        if (st) {
                if (recorded)
                        (void) state_get_power(st, bdf, recorded);
                if (state_get_applied(st, bdf, &applied_uw, &applied_usec) < 0)
                        applied_uw = applied_usec = AMDSMI_NA;
        }
        power_view_set_sources(v, bdf, recorded, applied_uw, applied_usec);
        v->damaged[0] = '\0';
        if (st && state_damage_find(st, bdf)) {
                const struct state_damage *d = state_damage_find(st, bdf);

                snprintf(v->damaged, sizeof(v->damaged), "%.255s (%.370s)",
                         d->where[0] ? d->where : state_path(st), d->problem);
        }
        free(recorded);
}

bool power_control_can_apply(enum amdsmi_power_control c) {
        return c == AMDSMI_POWER_CONTROL_HWMON || c == AMDSMI_POWER_CONTROL_VF;
}

const char *power_view_effective_source(const struct power_view *v) {
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

void power_view_limit(const struct power_view *v, struct power_limit *ret) {
        const char *src = power_view_effective_source(v);

        *ret = (struct power_limit){ .cap_uw = AMDSMI_NA };
        if (!src)
                return;
        snprintf(ret->source, sizeof(ret->source), "%s", src);
        if (v->expl.binding == POWER_SOURCE_VM && strcmp(src, "vm") == 0)
                snprintf(ret->key, sizeof(ret->key), "%s", v->expl.binding_key);
        if (v->info_error == 0 && v->info.ppt0.cap.error == 0)
                ret->cap_uw = v->info.ppt0.cap.uw;
        else if (v->expl.effective_uw != POWER_UW_UNKNOWN)
                ret->cap_uw = v->expl.effective_uw;
}

void power_gpu_object_add_limiters(json_object *o, const struct power_view *v,
                                   const struct sample_pair *pair) {
        struct power_limit limit;
        json_object *l, *notes = NULL;
        char sentence[512];

        power_view_limit(v, &limit);
        l = limiters_json(pair, &limit);
        if (!l)
                return;
        limiters_power_sentence(l, sentence, sizeof(sentence));
        json_object_object_add(o, "limiters", l);
        if (!sentence[0])
                return;
        if (!json_object_object_get_ex(o, "notes", &notes) || !notes) {
                notes = json_object_new_array();
                if (!notes)
                        return;
                json_object_object_add(o, "notes", notes);
        }
        json_object_array_add(notes, json_object_new_string(sentence));
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

        if (!power_control_can_apply(v->info.control) &&
            amdsmi_power_control_explain(v->info.control))
                NOTE("%s", amdsmi_power_control_explain(v->info.control));
        if (v->expl_error < 0)
                NOTE("the GPU reports an inconsistent range (minimum above maximum): nothing is "
                     "arbitrated");
        if (v->damaged[0])
                NOTE("the state's record %s is damaged: the modelled cap leaves it out, and the "
                     "cap is not changed until 'amdsmi power clear --damaged' drops it",
                     v->damaged);
        if (v->expl_error == 0 && e->observed == POWER_OBSERVED_EXTERNAL && v->damaged[0])
                NOTE("the device holds %s, below the modelled %s, which leaves out the damaged "
                     "record",
                     fmt_w(e->observed_uw, b1, sizeof(b1)), fmt_w(e->effective_uw, b2, sizeof(b2)));
        else if (v->expl_error == 0 && e->observed == POWER_OBSERVED_EXTERNAL)
                NOTE("the device holds %s, below the modelled %s: an external limiter (the "
                     "BMC's platform limit, a node power budget, or the VM in a one-VF "
                     "guest) binds; amdsmi does not override it",
                     fmt_w(e->observed_uw, b1, sizeof(b1)), fmt_w(e->effective_uw, b2, sizeof(b2)));
        if (v->expl_error == 0 && e->observed == POWER_OBSERVED_OUTSIDE_WRITER)
                NOTE("the device holds %s, above the modelled %s: something other than amdsmi "
                     "wrote power1_cap",
                     fmt_w(e->observed_uw, b1, sizeof(b1)), fmt_w(e->effective_uw, b2, sizeof(b2)));
        if (v->expl_error == 0 && power_control_can_apply(v->info.control) && !v->damaged[0] &&
            v->applied_uw != AMDSMI_NA && e->effective_uw != POWER_UW_UNKNOWN &&
            !same_watts(v->applied_uw, e->effective_uw))
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
                json_set(o, "origin",
                         json_object_new_string(power_source_origin(s->kind, s->setter)));
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

/* The power state of a GPU (`amdsmi power`, and "before"/"after" of a change). */
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
        /* what a write accepts: [max(cap_min, 1 W), min(cap_max, 4294.967295 W)], the
         * library's range, which the table's RANGE shows too */
        json_set(o, "cap_settable_min_w", json_w(v->info.floor_uw));
        json_set(o, "cap_settable_max_w", json_w(v->info.ceiling_uw));
        json_set(o, "ppt1", v->info.ppt1_present ? limit_object(&v->info.ppt1) : NULL);

        /* What holds: the device's cap where it has one, else (gim) the model. */
        effective = v->info.ppt0.cap.error == 0 ? v->info.ppt0.cap.uw
                    : ok                        ? e->effective_uw
                                                : AMDSMI_NA;
        json_set(o, "effective_w", json_w(effective));
        json_set(o, "effective_source", json_string_or_null(power_view_effective_source(v)));
        json_set(o, "modelled_cap_w", ok ? json_w(e->effective_uw) : NULL);
        /* binding is the source that binds the model; an external limiter or an outside writer
         * can hold the device below or above it: cap_held_by says which holds it now */
        json_set(o, "cap_held_by", json_string_or_null(power_view_effective_source(v)));
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

json_object *power_gpu_object(struct report *rep, size_t index, struct amdsmi_gpu *gpu,
                              const struct power_view *v) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (v->info_error < 0)
                report_field_error(rep, (int) index, "power", v->info_error);
        json_set(o, "gpu", json_object_new_uint64(index));
        json_set(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_set(o, "product", json_object_new_string(amdsmi_gpu_get_product(gpu)));
        json_set(o, "role",
                 json_object_new_string(amdsmi_role_to_string(amdsmi_gpu_get_role(gpu))));
        view_fill(o, v);
        return o;
}

/* "host 600*, vm:web1 650, apml 700 (file)"; "-" when none */
static json_object *sources_text(json_object *sources) {
        char buf[512];
        size_t n = 0;

        buf[0] = '\0';
        for (size_t i = 0; sources && i < json_object_array_length(sources) && n < sizeof(buf); i++) {
                json_object *s = json_object_array_get_idx(sources, i), *f;
                const char *kind = "", *vm = NULL, *origin = "";
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
                if (json_object_object_get_ex(s, "origin", &f) && f)
                        origin = json_object_get_string(f);
                n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s%s%s%s %s%s%s", n ? ", " : "",
                                       kind, vm ? ":" : "", vm ? vm : "", w, binds ? "*" : "",
                                       strcmp(origin, "file") == 0     ? " (file)"
                                       : strcmp(origin, "config") == 0 ? " (config)"
                                                                       : "");
        }
        return json_object_new_string(n ? buf : "-");
}

/* A "..._w" number of a document back in µW (exact: json-c keeps a parsed number's text). */
static int json_uw(json_object *o, const char *key, uint64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !v ||
            !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
                return -ENODATA;
        return power_parse_watts(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), ret);
}

void power_gpu_object_add_text(json_object *o) {
        json_object *sources = NULL, *range = NULL;
        uint64_t lo, hi;
        char a[32], b[32], buf[80];

        json_object_object_get_ex(o, "sources", &sources);
        json_set(o, "sources_text", sources_text(sources));
        /* the settable range of the document, so that the table shows what the JSON says */
        if (json_uw(o, "cap_settable_min_w", &lo) == 0 &&
            json_uw(o, "cap_settable_max_w", &hi) == 0 &&
            format_scaled_u64(lo, 6, a, sizeof(a)) == 0 &&
            format_scaled_u64(hi, 6, b, sizeof(b)) == 0) {
                snprintf(buf, sizeof(buf), "%s-%s", a, b);
                range = json_object_new_string(buf);
        }
        json_set(o, "range_text", range);
}

/* ---- changes ---------------------------------------------------------------------------- */

bool power_vm_name_ok(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= POWER_KEY_MAX)
                return false;
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

json_object *power_change_list(const struct power_change *ch) {
        json_object *a = json_object_new_array();
        const char *action = ch->kind == POWER_CHANGE_SET ? "set" : "clear";

        struct {
                bool on;
                const char *source, *vm;
                uint64_t uw;
        } items[] = {
                { ch->host, "host", NULL, ch->host_uw },
                { ch->vm, "vm", ch->vm_name, ch->vm_uw },
                { ch->apml, "apml", NULL, ch->apml_uw },
                { ch->damaged, "damaged", NULL, 0 },
        };

        for (size_t i = 0; a && i < ELEMENTSOF(items); i++) {
                json_object *o;

                if (!items[i].on || ch->kind == POWER_CHANGE_APPLY)
                        continue;
                o = json_object_new_object();
                if (!o)
                        break;
                json_set(o, "action", json_object_new_string(action));
                json_set(o, "source", json_object_new_string(items[i].source));
                json_set(o, "vm", json_string_or_null(items[i].vm));
                json_set(o, "vf_bdf",
                         items[i].vm && ch->vf_bdf ? json_object_new_string(ch->vf_bdf) : NULL);
                json_set(o, "cap_w", ch->kind == POWER_CHANGE_SET ? json_w(items[i].uw) : NULL);
                json_object_array_add(a, o);
        }
        return a;
}

json_object *power_change_entry_new(const struct power_change *ch, size_t index, const char *bdf,
                                    const char *product, bool dry_run) {
        json_object *e = json_object_new_object();

        if (!e)
                return NULL;
        json_set(e, "gpu", json_object_new_uint64(index));
        json_set(e, "bdf", json_object_new_string(bdf));
        json_set(e, "product", json_object_new_string(product ? product : ""));
        json_set(e, "dry_run", json_object_new_boolean(dry_run));
        json_set(e, "changes", power_change_list(ch));
        json_set(e, "control", NULL);
        json_set(e, "apply", NULL);
        json_set(e, "before", NULL);
        json_set(e, "after", NULL);
        json_set(e, "messages", json_object_new_array());
        json_set(e, "result", NULL);
        return e;
}

void power_change_entry_set_view(json_object *entry, const struct power_view *v) {
        json_object *b = json_object_new_object(), *a = json_object_new_object();

        json_set(entry, "control",
                 json_object_new_string(amdsmi_power_control_to_string(v->info.control)));
        if (b)
                view_fill(b, v);
        if (a)
                view_fill(a, v);
        json_set(entry, "before", b);
        json_set(entry, "after", a);
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

struct power_run {
        struct report *rep;
        const struct power_change *ch;
        struct power_outcome *out;
        json_object *entry;
};

/* report_fail(), keeping the first failure of this GPU in full for the outcome */
_printf_(3, 4) static int run_fail(struct power_run *run, int r, const char *format, ...) {
        char *msg = NULL;
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&msg, format, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (!run->out->message[0] || run->out->message[0] == '+')
                snprintf(run->out->message, sizeof(run->out->message), "%s",
                         msg ? msg : strerror(-r));
        report_fail(run->rep, r, "%s", msg ? msg : strerror(-r));
        free(msg);
        return r;
}

/* report_say(), keeping the last line for the outcome ('+' marks a line, not a failure) */
_printf_(2, 3) static void run_say(struct power_run *run, const char *format, ...) {
        char *msg = NULL;
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&msg, format, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (!msg)
                return;
        report_say(run->rep, run->entry, "%s", msg);
        if (!run->out->message[0] || run->out->message[0] == '+')
                snprintf(run->out->message, sizeof(run->out->message), "+%s", msg);
        free(msg);
}

/* Values against the GPU's range: -ERANGE (reported) outside [max(cap_min, 1 W), cap_max]. */
static bool in_range(const struct power_view *v, uint64_t uw) {
        if (v->info.floor_uw == AMDSMI_NA || v->info.ceiling_uw == AMDSMI_NA)
                return true; /* unknown range (gim): nothing to check against */
        return uw >= v->info.floor_uw && uw <= v->info.ceiling_uw;
}

static int check_range(struct power_run *run, size_t index, struct amdsmi_gpu *gpu,
                       const struct power_view *v, const char *option, const char *name,
                       uint64_t uw) {
        char w[48], lo[48], hi[48];

        if (in_range(v, uw))
                return 0;
        return run_fail(run, -ERANGE, "GPU %zu (%s): %s%s%s %s is out of range: valid %s to %s",
                        index, amdsmi_gpu_get_bdf(gpu), option, name ? " " : "", name ? name : "",
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
                return run_fail(run, -ENOMEM, "out of memory");
        si->size = sizeof(*si);
        if (amdsmi_gpu_read_sriov(gpu, si) < 0 || !si->capable || si->n_vfs == 0)
                return 0;
        for (unsigned i = 0; i < si->n_vfs; i++)
                if (strcmp(si->vfs[i].bdf, vf) == 0)
                        return 0;
        return run_fail(run, -EINVAL, "GPU %zu (%s): %s is not one of its VFs (%s to %s)", index,
                        amdsmi_gpu_get_bdf(gpu), vf, si->vfs[0].bdf, si->vfs[si->n_vfs - 1].bdf);
}

/* Changes the recorded sources. -ENOENT (reported) to clear a VM that has no source. */
static int edit_sources(struct power_run *run, size_t index, struct power_sources *s) {
        const struct power_change *ch = run->ch;
        const char *setter = ch->setter ? ch->setter : "amdsmi";
        uint64_t now = now_realtime_us();
        int r = 0;

        if (ch->kind == POWER_CHANGE_SET) {
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
                        return run_fail(run, -ERANGE,
                                        "GPU %zu: already %d VM sources, the most a GPU keeps "
                                        "(clear one first)",
                                        index, POWER_VM_MAX);
                if (r < 0)
                        return run_fail(run, r, "GPU %zu: cannot record the source: %s", index,
                                        strerror(-r));
                return 0;
        }
        if (ch->kind != POWER_CHANGE_CLEAR)
                return 0;
        if (ch->host && power_sources_clear(s, POWER_SOURCE_HOST, NULL) == 0)
                run_say(run, "GPU %zu: no host source (nothing to clear)", index);
        if (ch->apml && power_sources_clear(s, POWER_SOURCE_APML, NULL) == 0)
                run_say(run, "GPU %zu: no APML source set by a call (nothing to clear)", index);
        if (ch->vm && power_sources_clear(s, POWER_SOURCE_VM, ch->vm_name) == 0) {
                char names[256] = "";
                size_t n = 0;

                for (size_t i = 0; i < s->n_vms && n < sizeof(names); i++)
                        n += (size_t) snprintf(names + n, sizeof(names) - n, "%s%s",
                                               i ? ", " : "", s->vms[i].key);
                return run_fail(run, -ENOENT, "GPU %zu: no source of VM '%s' (VMs: %s)", index,
                                ch->vm_name, n ? names : "none");
        }
        return 0;
}

/* amdsmid: a host source that no call set follows amdsmid.conf's power_cap. */
static void sync_config(struct power_run *run, size_t index, const struct power_view *v,
                        struct power_sources *s) {
        const struct power_change *ch = run->ch;
        bool from_config = host_from_config(&s->host);
        char w[48], lo[48], hi[48];

        if (!ch->sync_config || (s->host.present && !from_config))
                return; /* a host source set by a call overrides the configuration */
        if (!ch->config_set) {
                if (from_config) {
                        (void) power_sources_clear(s, POWER_SOURCE_HOST, NULL);
                        run_say(run, "GPU %zu: host cap %s of amdsmid.conf removed (no power_cap "
                                "any more)", index, fmt_w(s->host.uw, w, sizeof(w)));
                }
                return;
        }
        if (!in_range(v, ch->config_uw)) {
                snprintf(run->out->config_warning, sizeof(run->out->config_warning),
                         "amdsmid.conf's power_cap %s is out of range (valid %s to %s): not "
                         "applied", fmt_w(ch->config_uw, w, sizeof(w)),
                         fmt_w(v->info.floor_uw, lo, sizeof(lo)),
                         fmt_w(v->info.ceiling_uw, hi, sizeof(hi)));
                run_say(run, "GPU %zu: %s", index, run->out->config_warning);
                if (from_config)
                        (void) power_sources_clear(s, POWER_SOURCE_HOST, NULL);
                return;
        }
        if (from_config && s->host.uw == ch->config_uw)
                return;
        if (power_sources_set(s, POWER_SOURCE_HOST, NULL, NULL, ch->config_uw,
                              ch->config_setter ? ch->config_setter : POWER_SETTER_CONFIG,
                              now_realtime_us()) >= 0)
                run_say(run, "GPU %zu: host cap %s from amdsmid.conf", index,
                        fmt_w(ch->config_uw, w, sizeof(w)));
}

static void say_result(struct power_run *run, size_t index, const struct power_view *before,
                       const struct power_view *after, const struct amdsmi_power_cap_result *res,
                       bool applied) {
        char b1[48], b2[48], b3[48];
        const struct power_explanation *e = &after->expl;
        const char *src = e->binding == POWER_SOURCE_NONE
                                  ? "none"
                                  : power_source_kind_to_string(e->binding);

        run_say(run, "GPU %zu: effective cap %s -> %s (binds: %s%s%s%s)", index,
                fmt_w(before->expl_error == 0 ? before->expl.effective_uw : AMDSMI_NA, b1, sizeof(b1)),
                fmt_w(e->effective_uw, b2, sizeof(b2)), src,
                e->binding == POWER_SOURCE_VM ? " " : "",
                e->binding == POWER_SOURCE_VM ? e->binding_key : "",
                e->clamp == POWER_CLAMP_NONE ? "" : e->clamp == POWER_CLAMP_LOW ? ", raised to the minimum" : ", lowered to the maximum");
        if (!applied)
                return;
        if (res->truncated)
                run_say(run,
                        "GPU %zu: warning: %s is applied as %s (the driver keeps whole watts)", index,
                        fmt_w(res->requested_uw, b1, sizeof(b1)), fmt_w(res->applied_uw, b2, sizeof(b2)));
        if (!res->written)
                run_say(run, "GPU %zu: would write %s to power1_cap", index,
                        fmt_w(res->requested_uw, b1, sizeof(b1)));
        else if (res->limited)
                run_say(run,
                        "GPU %zu: applied %s; the device holds %s: an external limiter (the BMC's "
                        "platform limit, ...) is lower",
                        index, fmt_w(res->applied_uw, b1, sizeof(b1)),
                        fmt_w(res->readback_uw, b3, sizeof(b3)));
        else
                run_say(run, "GPU %zu: applied %s, read back %s", index,
                        fmt_w(res->applied_uw, b1, sizeof(b1)), fmt_w(res->readback_uw, b3, sizeof(b3)));
}

/* Maps a failed apply to one message. */
static int apply_error(struct power_run *run, size_t index, struct amdsmi_gpu *gpu, int r,
                       const struct power_view *v, const struct amdsmi_power_cap_result *res) {
        char w[48], lo[48], hi[48];
        const char *bdf = amdsmi_gpu_get_bdf(gpu);

        switch (r) {
        case -EOPNOTSUPP:
                return run_fail(run, r, "GPU %zu (%s): %s", index, bdf,
                                amdsmi_power_control_explain(v->info.control)
                                        ?: "the power cap cannot be applied");
        case -ERANGE:
                if (res->write_error == -EINVAL)
                        return run_fail(run, r,
                                        "GPU %zu (%s): the driver refused %s (EINVAL: outside "
                                        "the range it enforces now, or the firmware rejected it)",
                                        index, bdf, fmt_w(res->requested_uw, w, sizeof(w)));
                return run_fail(run, r, "GPU %zu (%s): %s is out of range: valid %s to %s", index,
                                bdf, fmt_w(res->requested_uw, w, sizeof(w)),
                                fmt_w(res->floor_uw, lo, sizeof(lo)),
                                fmt_w(res->ceiling_uw, hi, sizeof(hi)));
        case -EBUSY:
                return run_fail(run, r,
                                "GPU %zu (%s): busy (a reset in progress or the device "
                                "suspended): try again",
                                index, bdf);
        case -EIO:
                if (res->written && res->readback_uw != AMDSMI_NA)
                        return run_fail(run, r,
                                        "GPU %zu (%s): wrote %s but the device reads back %s",
                                        index, bdf, fmt_w(res->applied_uw, w, sizeof(w)),
                                        fmt_w(res->readback_uw, hi, sizeof(hi)));
                __attribute__((fallthrough));
        default:
                return run_fail(run, r, "GPU %zu (%s): applying %s failed: %s", index, bdf,
                                fmt_w(res->requested_uw, w, sizeof(w)), strerror(-r));
        }
}

/* "host=600W, vm:web1=none; cap 600W" for the history: the sources the change names (and the
 * host when amdsmid.conf's cap moved with it), then the cap. */
static void describe(char *buf, size_t size, const struct power_change *ch,
                     const struct power_sources *s, bool host, uint64_t cap_uw) {
        const struct power_source *vm = ch->vm ? power_sources_find_vm(s, ch->vm_name) : NULL;
        char w[32];
        size_t n = 0;

        buf[0] = '\0';
#define ADD(...)                                                                              \
        do {                                                                                  \
                if (n < size)                                                                 \
                        n += (size_t) snprintf(buf + n, size - n, __VA_ARGS__);               \
        } while (0)
        if (host)
                ADD("host=%s", fmt_compact(s->host.present ? s->host.uw : AMDSMI_NA, w, sizeof(w)));
        if (ch->vm)
                ADD("%svm:%s=%s", n ? ", " : "", ch->vm_name,
                    fmt_compact(vm ? vm->uw : AMDSMI_NA, w, sizeof(w)));
        if (ch->apml)
                ADD("%sapml=%s", n ? ", " : "",
                    fmt_compact(s->apml.present ? s->apml.uw : AMDSMI_NA, w, sizeof(w)));
        ADD("%scap %s", n ? "; " : "", fmt_compact(cap_uw, w, sizeof(w)));
#undef ADD
}

/* A damaged record of the state concerns the GPU: its cap is not recomputed without it. */
static int refuse_damaged(struct power_run *run, size_t index, const char *bdf,
                          const struct state_store *st) {
        const struct state_damage *d = state_damage_find(st, bdf);
        size_t n = 0;

        for (size_t i = 0; i < state_damage_count(st); i++)
                if (state_damage_get(st, i) == d || !state_damage_get(st, i)->bdf[0] ||
                    strcmp(state_damage_get(st, i)->bdf, bdf) == 0)
                        n++;
        if (!d)
                return run_fail(run, -EUCLEAN, "GPU %zu (%s): %s is damaged", index, bdf,
                                state_path(st));
        if (!d->where[0])
                return run_fail(run, -EUCLEAN,
                                "GPU %zu (%s): %s cannot be read (%s): nothing was changed, since "
                                "a source it records could be lower; 'amdsmi power clear -g %zu "
                                "--damaged' keeps the file aside and starts afresh",
                                index, bdf, state_path(st), d->problem, index);
        return run_fail(run, -EUCLEAN,
                        "GPU %zu (%s): the record %s of %s is damaged (%s)%s: nothing was "
                        "changed, since the cap must not be recomputed without it; 'amdsmi power "
                        "clear -g %zu --damaged' shows and drops it",
                        index, bdf, d->where, state_path(st), d->problem,
                        n > 1 ? ", and more" : "", index);
}

/* power clear --damaged: the GPU's damaged records leave the state (shown, and kept in the
 * document's "dropped" list and the history). */
static int drop_damaged(struct power_run *run, size_t index, const char *bdf,
                        struct state_store *st, json_object *entry) {
        json_object *dropped = NULL;
        int r, n;

        n = state_drop_damaged(st, bdf, &dropped);
        if (n < 0)
                return run_fail(run, n, "GPU %zu (%s): cannot drop the damaged records of %s: %s",
                                index, bdf, state_path(st), strerror(-n));
        json_set(entry, "dropped", dropped);
        if (n == 0) {
                run_say(run, "GPU %zu: no damaged record in %s (nothing to drop)", index,
                        state_path(st));
                return 0;
        }
        for (size_t i = 0; i < (size_t) n; i++) {
                json_object *o = json_object_array_get_idx(dropped, i), *v;
                const char *rec = json_object_get_string(json_object_object_get(o, "record"));
                const char *problem = json_object_get_string(json_object_object_get(o, "problem"));
                const char *kept = NULL;

                if (json_object_object_get_ex(o, "kept_as", &v) && v)
                        kept = json_object_get_string(v);
                v = json_object_object_get(o, "value");
                run_say(run, "GPU %zu: %s the damaged record %s (%s)%s%s%s%s", index,
                        run->rep->dry_run ? "would drop" : "dropped", rec, problem,
                        v ? ": " : "", v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN)
                                       : "",
                        kept ? ", kept as " : "", kept ? kept : "");
        }
        r = 0;
        return r;
}

/* The heavy parts of a change, off the stack (amdsmid runs changes on worker threads). */
struct change_work {
        struct power_view before, after;
        struct power_sources recorded, previous;
};

/* One GPU's change for change_run(). */
struct power_apply {
        struct power_run run;
        size_t index;
        struct amdsmi_gpu *gpu;
};

/* The change of one GPU, under its change lock (power_change_gpu()). */
static int change_locked(void *userdata) {
        const struct power_apply *pa = userdata;
        struct power_run run = pa->run;
        struct report *rep = run.rep;
        const struct power_change *ch = run.ch;
        struct power_outcome *out = run.out;
        json_object *entry = run.entry;
        size_t index = pa->index;
        struct amdsmi_gpu *gpu = pa->gpu;
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        struct state_store *st = NULL;
        struct amdsmi_power_cap_result res = { .size = sizeof(res) };
        _cleanup_free_ struct change_work *w = calloc(1, sizeof(*w));
        bool gim = false, applied = false, loaded = false, host_touched;
        int r;

        if (!w)
                return run_fail(&run, -ENOMEM, "out of memory");
        host_touched = ch->host;
        r = state_open(rep->dry_run ? STATE_READ : STATE_WRITE, POWER_LOCK_WAIT_MS, &st);
        if (r < 0) {
                char dir[256] = "";

                (void) state_dir(dir, sizeof(dir));
                return run_fail(&run, r, "cannot open the state in %s: %s", dir,
                                state_open_error(r, (char[PATH_MAX + 128]){}, PATH_MAX + 128));
        }
        if (state_warning(st))
                snprintf(out->warning, sizeof(out->warning), "%s", state_warning(st));
        /* a state that cannot be saved (a newer amdsmi's, a damaged file not yet dropped):
         * refuse before touching the GPU */
        r = rep->dry_run || ch->damaged ? 0 : state_can_commit(st);
        if (r == -EUCLEAN) {
                r = refuse_damaged(&run, index, bdf, st);
                state_close(st);
                return r;
        }
        if (r < 0) {
                /* a newer amdsmi's file (exit 1), or one that is not a regular file: the
                 * state cannot be read (StateDamaged, exit 10) */
                r = run_fail(&run, r == -EPROTONOSUPPORT ? -EPROTONOSUPPORT : -EUCLEAN,
                             "GPU %zu (%s): the power sources cannot be saved to %s: %s", index,
                             bdf, state_path(st),
                             r == -EPROTONOSUPPORT ? "it was written by a newer amdsmi"
                             : state_warning(st)   ? state_warning(st)
                                                   : strerror(-r));
                state_close(st);
                return r;
        }

        if (ch->damaged) {
                r = drop_damaged(&run, index, bdf, st, entry);
                if (r < 0) {
                        state_close(st);
                                return r;
                }
        } else if (state_damage_find(st, bdf)) {
                r = refuse_damaged(&run, index, bdf, st);
                state_close(st);
                return r;
        }

        power_view_load(gpu, st, AMDSMI_POWER_READ_NO_METRICS, &w->before);
        loaded = true;
        /* the sources before the change, for the history, whatever fails from here on */
        power_sources_init(&w->previous);
        (void) state_get_power(st, bdf, &w->previous);
        w->recorded = w->previous;
        json_set(entry, "control",
                 json_object_new_string(amdsmi_power_control_to_string(w->before.info.control)));
        gim = w->before.info.control == AMDSMI_POWER_CONTROL_GIM;

        /* Guests that cannot apply a cap record nothing: there is nothing to arbitrate. */
        if (!power_control_can_apply(w->before.info.control) && !gim) {
                r = run_fail(&run, -EOPNOTSUPP, "GPU %zu (%s): %s", index, bdf,
                             amdsmi_power_control_explain(w->before.info.control)
                                     ?: "the power cap cannot be applied");
                goto out;
        }
        if (ch->kind == POWER_CHANGE_SET && ch->vm && ch->vf_bdf &&
            (r = check_vf(&run, index, gpu)) < 0)
                goto out;
        if (ch->kind == POWER_CHANGE_SET &&
            ((ch->host && (r = check_range(&run, index, gpu, &w->before,
                                           ch->host_option ? ch->host_option : "--host", NULL,
                                           ch->host_uw)) < 0) ||
             (ch->vm && (r = check_range(&run, index, gpu, &w->before, "--vm", ch->vm_name,
                                         ch->vm_uw)) < 0) ||
             (ch->apml && (r = check_range(&run, index, gpu, &w->before, "--apml", NULL,
                                           ch->apml_uw)) < 0)))
                goto out;

        w->after = w->before;
        /* edit what is recorded (without the file's APML limit), then merge again */
        r = edit_sources(&run, index, &w->recorded);
        if (r < 0)
                goto out;
        sync_config(&run, index, &w->before, &w->recorded);
        if (w->recorded.host.present != w->previous.host.present ||
            w->recorded.host.uw != w->previous.host.uw)
                host_touched = true;
        power_view_set_sources(&w->after, bdf, &w->recorded, w->before.applied_uw,
                               w->before.applied_usec);
        if (w->after.expl_error < 0) {
                r = run_fail(&run, -EIO, "GPU %zu (%s): the GPU reports an inconsistent power range",
                             index, bdf);
                goto out;
        }
        if (!rep->dry_run) {
                r = state_set_power(st, bdf, &w->recorded);
                if (r < 0) {
                        r = run_fail(&run, r, "GPU %zu: cannot record the sources: %s", index,
                                     strerror(-r));
                        goto out;
                }
        }

        if (!gim && w->after.expl.effective_uw == POWER_UW_UNKNOWN) {
                run_say(&run, "GPU %zu: no source and the default cap is unknown: the cap stays "
                        "as it is", index);
        } else if (!gim) {
                r = amdsmi_gpu_set_power_cap(gpu, w->after.expl.effective_uw,
                                             rep->dry_run ? AMDSMI_POWER_SET_DRY_RUN : 0, &res);
                json_set(entry, "apply", result_object(&res));
                if (r < 0) {
                        r = apply_error(&run, index, gpu, r, &w->after, &res);
                        goto out; /* nothing committed: the sources stay as they were */
                }
                applied = true;
                if (!rep->dry_run)
                        (void) state_set_applied(st, bdf, res.applied_uw, now_realtime_us());
        }

        if (!rep->dry_run) {
                r = state_commit(st);
                if (r < 0) {
                        /* device and file must not disagree: the cap goes back to what it was */
                        char was[48] = "";
                        int k = 0;

                        if (applied && w->before.info.ppt0.cap.error == 0) {
                                struct amdsmi_power_cap_result back = { .size = sizeof(back) };

                                k = amdsmi_gpu_set_power_cap(gpu, w->before.info.ppt0.cap.uw, 0,
                                                             &back);
                                fmt_w(w->before.info.ppt0.cap.uw, was, sizeof(was));
                        } else if (applied)
                                k = -ENODATA;
                        r = run_fail(&run, r,
                                     "GPU %zu (%s): the sources could not be saved to %s (%s): %s%s%s%s",
                                     index, bdf, state_path(st),
                                     r == -EPROTONOSUPPORT ? "written by a newer amdsmi"
                                                           : strerror(-r),
                                     !applied ? "nothing was applied"
                                     : k == 0 ? "the cap is back at "
                                              : "the cap could not be restored: ",
                                     applied && k == 0 ? was : "",
                                     applied && k < 0 ? strerror(-k) : "",
                                     applied && k < 0 ? " (it holds the new value; the file "
                                                        "the old sources)"
                                                      : "");
                        applied = false;
                        goto out;
                }
        }

        /* read back what holds now, for the document */
        if (applied && !rep->dry_run) {
                w->after.applied_uw = res.applied_uw;
                w->after.applied_usec = now_realtime_us();
                w->after.info.ppt0.cap = (struct amdsmi_power_value){ res.readback_uw, 0 };
                view_compute(&w->after);
                out->applied = true;
                out->limited = res.limited;
                out->applied_uw = res.applied_uw;
                out->readback_uw = res.readback_uw;
        }
        if (gim) {
                /* one line that says what happened: nothing was applied, so no "cap X -> Y" */
                char eff[48];

                fmt_w(w->after.expl.effective_uw, eff, sizeof(eff));
                r = run_fail(&run, -EOPNOTSUPP, "GPU %zu (%s): the cap of %s (binds: %s) %s; %s",
                             index, bdf, eff,
                             w->after.expl.binding == POWER_SOURCE_NONE
                                     ? "none"
                                     : power_source_kind_to_string(w->after.expl.binding),
                             rep->dry_run ? "would not be applied, the sources only recorded"
                                          : "is not applied, sources recorded",
                             amdsmi_power_control_explain(AMDSMI_POWER_CONTROL_GIM));
        } else {
                say_result(&run, index, &w->before, &w->after, &res, applied);
                r = 0;
        }

out:
        if (loaded) {
                const struct power_view *a = r < 0 && !gim ? &w->before : &w->after;
                json_object *bo = json_object_new_object(), *ao = json_object_new_object();
                uint64_t cap_before = w->before.info.ppt0.cap.error == 0
                                              ? w->before.info.ppt0.cap.uw
                                              : w->before.expl_error == 0 ? w->before.expl.effective_uw
                                                                          : AMDSMI_NA;
                uint64_t cap_after = out->applied ? out->applied_uw
                                     : a->expl_error == 0 ? a->expl.effective_uw
                                                          : AMDSMI_NA;
                struct power_sources prev = w->previous, now = w->recorded;

                if (bo)
                        view_fill(bo, &w->before);
                if (ao)
                        view_fill(ao, a);
                json_set(entry, "before", bo);
                json_set(entry, "after", ao);
                if (r < 0 && !gim) {
                        /* nothing changed (the state in memory may hold the edit: not read
                         * back from it) */
                        now = prev;
                        cap_after = cap_before;
                }
                describe(out->old_value, sizeof(out->old_value), ch, &prev, host_touched,
                         cap_before);
                describe(out->new_value, sizeof(out->new_value), ch, &now, host_touched,
                         cap_after);
        }
        state_close(st);
        return r;
}

static int lock_failed(void *userdata, int r, const char *message) {
        struct power_apply *a = userdata;

        return run_fail(&a->run, r, "%s", message);
}

int power_change_gpu(struct report *rep, const struct power_change *ch, size_t index,
                     struct amdsmi_gpu *gpu, json_object *entry, struct power_outcome *out) {
        struct power_apply a = {
                .run = { .rep = rep, .ch = ch, .out = out, .entry = entry },
                .index = index,
                .gpu = gpu,
        };
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        char who[64], why[256];
        int r;

        *out = (struct power_outcome){ .applied_uw = AMDSMI_NA, .readback_uw = AMDSMI_NA };
        snprintf(who, sizeof(who), "GPU %zu (%s)", index, bdf);
        /* a GPU in reset or without a driver: refused before the sources are touched */
        r = gpu_state_refusal(index, gpu, why, sizeof(why));
        if (r < 0)
                return run_fail(&a.run, r, "%s", why);
        /* amdsmid's jobs hold the lock already; a dry run changes nothing */
        r = change_run(&(struct change_lock){ .bdfs = &bdf,
                                              .n = 1,
                                              .wait_ms = POWER_LOCK_WAIT_MS,
                                              .who = who,
                                              .held = rep->dry_run || !ch->lock },
                       &(const struct change_ops){ .apply = change_locked,
                                                   .lock_failed = lock_failed },
                       &a);
        /* the outcome's message: the failure, or the last line said */
        if (out->message[0] == '+')
                memmove(out->message, out->message + 1, strlen(out->message));
        return r;
}
