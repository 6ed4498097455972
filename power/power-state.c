/* SPDX-License-Identifier: MIT */
/*
 * The power records of the state file (see power-state.h): gpus.<BDF>.power, checked for the
 * store's loader (state_record_power, listed in power/meson.build) and read and rewritten
 * field by field on the store's record API (core/state.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "macro.h"
#include "parse-util.h"
#include "power-state.h"

static inline void json_object_putp(json_object **p) {
        json_object_put(*p);
}
#define _cleanup_json_ _cleanup_(json_object_putp)

/* ---- checking and reading the power records --------------------------------------------- */

/* A member "where.key" that must be an unsigned integer. *ret_found false when absent. */
static int get_uint(struct state_error *e, const char *where, const json_object *obj,
                    const char *key, bool required, uint64_t *ret, bool *ret_found) {
        char at[512];
        json_object *v;

        (void) snprintf(at, sizeof(at), "%s.%s", where, key);
        if (!json_object_object_get_ex(obj, key, &v)) {
                if (required)
                        return state_fail(e, at, "missing");
                if (ret_found)
                        *ret_found = false;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return state_fail(e, at, "not an integer (%s)", state_json_type(v));
        if (json_object_get_int64(v) < 0)
                return state_fail(e, at, "negative (%" PRId64 ")", json_object_get_int64(v));
        *ret = json_object_get_uint64(v);
        if (ret_found)
                *ret_found = true;
        return 0;
}

/* A member that must be a string shorter than max bytes (NUL included); "" when absent. */
static int get_string(struct state_error *e, const char *where, const json_object *obj,
                      const char *key, bool required, size_t max, const char **ret) {
        char at[512];
        json_object *v;
        const char *s;

        (void) snprintf(at, sizeof(at), "%s.%s", where, key);
        if (!json_object_object_get_ex(obj, key, &v)) {
                if (required)
                        return state_fail(e, at, "missing");
                *ret = "";
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return state_fail(e, at, "not a string (%s)", state_json_type(v));
        s = json_object_get_string(v);
        if ((size_t) json_object_get_string_len(v) != strlen(s))
                return state_fail(e, at, "contains a NUL character");
        if (strlen(s) >= max)
                return state_fail(e, at, "longer than %zu bytes", max - 1);
        *ret = s;
        return 0;
}

static int check_uw(struct state_error *e, const char *where, uint64_t uw) {
        char at[512];
        int r;

        (void) snprintf(at, sizeof(at), "%s.uw", where);
        r = power_validate(uw);
        if (r == -ERANGE)
                return state_fail(e, at, "%" PRIu64 " µW is more than %" PRIu64 " µW", uw,
                                  POWER_WRITE_MAX_UW);
        if (r < 0)
                return state_fail(e, at, "%" PRIu64 " µW is less than 1 W", uw);
        return 0;
}

/* One source object (host, apml or a VM) into ps. */
static int parse_source(struct state_error *e, const char *where, const json_object *obj,
                        enum power_source_kind kind, struct power_sources *ps) {
        const char *key = NULL, *vf_bdf = NULL, *setter;
        uint64_t uw, set_usec;
        char at[512];
        int r;

        if (!json_object_is_type(obj, json_type_object))
                return state_fail(e, where, "not an object (%s)", state_json_type(obj));

        if (kind == POWER_SOURCE_VM) {
                r = get_string(e, where, obj, "key", true, POWER_KEY_MAX, &key);
                if (r < 0)
                        return r;
                (void) snprintf(at, sizeof(at), "%s.key", where);
                if (key[0] == '\0')
                        return state_fail(e, at, "empty");
                if (power_sources_find_vm(ps, key))
                        return state_fail(e, at, "'%s' appears twice", key);
                r = get_string(e, where, obj, "vf_bdf", false, POWER_BDF_MAX, &vf_bdf);
                if (r < 0)
                        return r;
                (void) snprintf(at, sizeof(at), "%s.vf_bdf", where);
                if (vf_bdf[0] != '\0' && !pci_bdf_valid(vf_bdf))
                        return state_fail(e, at, "'%s' is not a PCI address (dddd:bb:dd.f)",
                                          vf_bdf);
        }
        r = get_uint(e, where, obj, "uw", true, &uw, NULL);
        if (r < 0)
                return r;
        r = check_uw(e, where, uw);
        if (r < 0)
                return r;
        r = get_string(e, where, obj, "setter", false, POWER_SETTER_MAX, &setter);
        if (r < 0)
                return r;
        r = get_uint(e, where, obj, "set_usec", true, &set_usec, NULL);
        if (r < 0)
                return r;

        r = power_sources_set(ps, kind, key, vf_bdf, uw, setter, set_usec);
        if (r == -ENOSPC)
                return state_fail(e, where, "more than %d VMs", POWER_VM_MAX);
        if (r < 0)
                return state_fail(e, where, "refused: %s", strerror(-r));
        return 0;
}

/* A "power" object: its readable sources into ps (may be NULL) and its applied record; every
 * record that does not read is skipped, and collected into @c when given. -EINVAL only when
 * the object itself is not an object (collected too). */
static int parse_power(struct state_error *e, const char *where, json_object *power,
                       struct power_sources *ret_ps, uint64_t *ret_applied_uw,
                       uint64_t *ret_applied_usec, struct state_check *c) {
        static const struct {
                const char *name;
                enum power_source_kind kind;
        } singles[] = { { "host", POWER_SOURCE_HOST }, { "apml", POWER_SOURCE_APML } };
        struct power_sources ps;
        uint64_t applied_uw = POWER_UW_UNKNOWN, applied_usec = 0;
        char at[512];
        json_object *v;
        int r;

        if (!json_object_is_type(power, json_type_object))
                return state_fail(e, where, "not an object (%s)", state_json_type(power));

        power_sources_init(&ps);
        for (size_t i = 0; i < ELEMENTSOF(singles); i++) {
                if (!json_object_object_get_ex(power, singles[i].name, &v))
                        continue;
                (void) snprintf(at, sizeof(at), "%s.%s", where, singles[i].name);
                if (parse_source(e, at, v, singles[i].kind, &ps) < 0) {
                        r = state_check_damaged(c, e, at, power, singles[i].name, -1);
                        if (r < 0 && c)
                                return r;
                }
        }
        if (json_object_object_get_ex(power, "vms", &v)) {
                size_t n;

                (void) snprintf(at, sizeof(at), "%s.vms", where);
                if (!json_object_is_type(v, json_type_array)) {
                        (void) state_fail(e, at, "not an array (%s)", state_json_type(v));
                        r = state_check_damaged(c, e, at, power, "vms", -1);
                        if (r < 0 && c)
                                return r;
                        n = 0;
                } else
                        n = json_object_array_length(v);
                for (size_t i = 0; i < n; i++) {
                        json_object *vm = json_object_array_get_idx(v, i);

                        (void) snprintf(at, sizeof(at), "%s.vms[%zu]", where, i);
                        if (ps.n_vms >= POWER_VM_MAX)
                                (void) state_fail(e, at, "more than %d VMs", POWER_VM_MAX);
                        else if (parse_source(e, at, vm, POWER_SOURCE_VM, &ps) >= 0)
                                continue;
                        r = state_check_damaged(c, e, at, v, NULL, (int) i);
                        if (r < 0 && c)
                                return r;
                }
        }
        if (json_object_object_get_ex(power, "applied", &v)) {
                (void) snprintf(at, sizeof(at), "%s.applied", where);
                if (!json_object_is_type(v, json_type_object))
                        r = state_fail(e, at, "not an object (%s)", state_json_type(v));
                else if ((r = get_uint(e, at, v, "uw", true, &applied_uw, NULL)) >= 0 &&
                         (r = check_uw(e, at, applied_uw)) >= 0)
                        r = get_uint(e, at, v, "usec", true, &applied_usec, NULL);
                if (r < 0) {
                        applied_uw = POWER_UW_UNKNOWN;
                        applied_usec = 0;
                        r = state_check_damaged(c, e, at, power, "applied", -1);
                        if (r < 0 && c)
                                return r;
                }
        }

        if (ret_ps)
                *ret_ps = ps;
        if (ret_applied_uw)
                *ret_applied_uw = applied_uw;
        if (ret_applied_usec)
                *ret_applied_usec = applied_usec;
        return 0;
}

static int check_power(struct state_check *c, struct state_error *e, const char *where,
                       json_object *power) {
        return parse_power(e, where, power, NULL, NULL, NULL, c);
}

const struct state_record state_record_power = {
        .name = "power",
        .check = check_power,
};

/* ---- reading and changing the power records ---------------------------------------------- */

static json_object *find_power(const struct state_store *s, const char *bdf) {
        return state_get_gpu_record(s, bdf, "power");
}

static bool power_has_record(const json_object *power) {
        return json_object_object_get_ex(power, "host", NULL) ||
               json_object_object_get_ex(power, "apml", NULL) ||
               json_object_object_get_ex(power, "vms", NULL) ||
               json_object_object_get_ex(power, "applied", NULL);
}

int state_get_power(const struct state_store *s, const char *bdf, struct power_sources *ret) {
        struct state_error e;
        json_object *power;
        int r;

        if (!s || !ret || !pci_bdf_valid(bdf))
                return -EINVAL;
        power = find_power(s, bdf);
        if (!power) {
                power_sources_init(ret);
                return 0;
        }
        /* the records that read (damaged ones were named when loaded) */
        r = parse_power(&e, "power", power, ret, NULL, NULL, NULL);
        if (r < 0)
                power_sources_init(ret);
        return 0;
}

int state_get_applied(const struct state_store *s, const char *bdf, uint64_t *ret_uw,
                      uint64_t *ret_usec) {
        uint64_t uw, usec;
        struct state_error e;
        json_object *power;

        if (!s || !pci_bdf_valid(bdf))
                return -EINVAL;
        power = find_power(s, bdf);
        if (!power)
                return -ENOENT;
        if (parse_power(&e, "power", power, NULL, &uw, &usec, NULL) < 0)
                return -ENOENT;
        if (uw == POWER_UW_UNKNOWN)
                return -ENOENT;
        if (ret_uw)
                *ret_uw = uw;
        if (ret_usec)
                *ret_usec = usec;
        return 0;
}

static int set_member(json_object *obj, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(obj, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

/* Writes a source's fields into obj, keeping every other member. */
static int fill_entry(json_object *obj, const struct power_source *p, bool vm) {
        int r;

        if (vm) {
                r = set_member(obj, "key", json_object_new_string(p->key));
                if (r < 0)
                        return r;
                if (p->vf_bdf[0]) {
                        r = set_member(obj, "vf_bdf", json_object_new_string(p->vf_bdf));
                        if (r < 0)
                                return r;
                } else
                        json_object_object_del(obj, "vf_bdf");
        }
        r = set_member(obj, "uw", json_object_new_uint64(p->uw));
        if (r < 0)
                return r;
        r = set_member(obj, "setter", json_object_new_string(p->setter));
        if (r < 0)
                return r;
        return set_member(obj, "set_usec", json_object_new_uint64(p->set_usec));
}

/* host / apml in power: replaced field by field, or removed when p is NULL. */
static int update_single(json_object *power, const char *name, const struct power_source *p) {
        json_object *old;
        _cleanup_json_ json_object *obj = NULL;
        int r;

        if (!p) {
                json_object_object_del(power, name);
                return 0;
        }
        if (json_object_object_get_ex(power, name, &old))
                obj = json_object_get(old);
        else {
                obj = json_object_new_object();
                if (!obj)
                        return -ENOMEM;
        }
        r = fill_entry(obj, p, false);
        if (r < 0)
                return r;
        return set_member(power, name, TAKE_PTR(obj));
}

static json_object *find_vm_entry(const json_object *vms, const char *key) {
        size_t n;

        if (!vms)
                return NULL;
        n = json_object_array_length(vms);
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(vms, i), *k;

                if (json_object_object_get_ex(o, "key", &k) &&
                    strcmp(json_object_get_string(k), key) == 0)
                        return o;
        }
        return NULL;
}

static int update_vms(json_object *power, const struct power_sources *ps) {
        _cleanup_json_ json_object *arr = NULL;
        json_object *old = NULL;
        int r;

        if (ps->n_vms == 0) {
                json_object_object_del(power, "vms");
                return 0;
        }
        (void) json_object_object_get_ex(power, "vms", &old);
        arr = json_object_new_array_ext((int) ps->n_vms);
        if (!arr)
                return -ENOMEM;
        for (size_t i = 0; i < ps->n_vms; i++) {
                json_object *prev = find_vm_entry(old, ps->vms[i].key);
                _cleanup_json_ json_object *obj =
                        prev ? json_object_get(prev) : json_object_new_object();

                if (!obj)
                        return -ENOMEM;
                r = fill_entry(obj, &ps->vms[i], true);
                if (r < 0)
                        return r;
                if (json_object_array_add(arr, obj) < 0)
                        return -ENOMEM;
                obj = NULL;
        }
        return set_member(power, "vms", TAKE_PTR(arr));
}

/* Checks a caller's sources as the loader would and rebuilds them sorted. */
static int check_sources(const struct power_sources *src, struct power_sources *ret) {
        const struct power_source *singles[2] = { &src->host, &src->apml };
        static const enum power_source_kind kinds[2] = { POWER_SOURCE_HOST, POWER_SOURCE_APML };
        struct power_sources v;
        int r;

        if (src->n_vms > POWER_VM_MAX)
                return -EINVAL;
        power_sources_init(&v);
        for (size_t i = 0; i < 2; i++) {
                const struct power_source *p = singles[i];

                if (!p->present)
                        continue;
                if (strnlen(p->setter, sizeof(p->setter)) == sizeof(p->setter))
                        return -EINVAL;
                r = power_sources_set(&v, kinds[i], NULL, NULL, p->uw, p->setter, p->set_usec);
                if (r < 0)
                        return -EINVAL;
        }
        for (size_t i = 0; i < src->n_vms; i++) {
                const struct power_source *p = &src->vms[i];

                if (strnlen(p->key, sizeof(p->key)) == sizeof(p->key) ||
                    strnlen(p->vf_bdf, sizeof(p->vf_bdf)) == sizeof(p->vf_bdf) ||
                    strnlen(p->setter, sizeof(p->setter)) == sizeof(p->setter))
                        return -EINVAL;
                if (p->vf_bdf[0] && !pci_bdf_valid(p->vf_bdf))
                        return -EINVAL;
                r = power_sources_set(&v, POWER_SOURCE_VM, p->key, p->vf_bdf, p->uw, p->setter,
                                      p->set_usec);
                if (r <= 0) /* 0: a key twice */
                        return -EINVAL;
        }
        *ret = v;
        return 0;
}

/* A private copy of the power object of @bdf (a new one when absent): changes are made on the
 * copy, which replaces the original only when complete. */
static int edit_begin(const struct state_store *s, const char *bdf, json_object **ret_power) {
        json_object *power = find_power(s, bdf), *copy = NULL;

        if (power) {
                if (json_object_deep_copy(power, &copy, NULL) < 0)
                        return -ENOMEM;
        } else {
                copy = json_object_new_object();
                if (!copy)
                        return -ENOMEM;
        }
        *ret_power = copy;
        return 0;
}

/* Puts the edited power object in place, dropping it when it holds nothing any more. */
static int edit_end(struct state_store *s, const char *bdf, json_object *power) {
        _cleanup_json_ json_object *p = power;

        return state_set_gpu_record(s, bdf, "power",
                                    json_object_object_length(p) > 0 ? TAKE_PTR(p) : NULL);
}

int state_set_power(struct state_store *s, const char *bdf, const struct power_sources *src) {
        struct power_sources v;
        _cleanup_json_ json_object *power = NULL;
        int r;

        if (!s || !src || !pci_bdf_valid(bdf))
                return -EINVAL;
        if (state_damage_find(s, bdf))
                return -EUCLEAN;
        r = check_sources(src, &v);
        if (r < 0)
                return r;

        r = edit_begin(s, bdf, &power);
        if (r < 0)
                return r;
        r = update_single(power, "host", v.host.present ? &v.host : NULL);
        if (r < 0)
                return r;
        r = update_single(power, "apml", v.apml.present ? &v.apml : NULL);
        if (r < 0)
                return r;
        r = update_vms(power, &v);
        if (r < 0)
                return r;
        return edit_end(s, bdf, TAKE_PTR(power));
}

int state_set_applied(struct state_store *s, const char *bdf, uint64_t uw, uint64_t usec) {
        json_object *old;
        _cleanup_json_ json_object *power = NULL;
        int r;

        if (!s || !pci_bdf_valid(bdf))
                return -EINVAL;
        if (uw != POWER_UW_UNKNOWN && power_validate(uw) < 0)
                return -EINVAL;
        if (state_damage_find(s, bdf))
                return -EUCLEAN;

        r = edit_begin(s, bdf, &power);
        if (r < 0)
                return r;
        if (uw == POWER_UW_UNKNOWN)
                json_object_object_del(power, "applied");
        else {
                _cleanup_json_ json_object *applied = NULL;

                if (json_object_object_get_ex(power, "applied", &old))
                        applied = json_object_get(old);
                else {
                        applied = json_object_new_object();
                        if (!applied)
                                return -ENOMEM;
                }
                r = set_member(applied, "uw", json_object_new_uint64(uw));
                if (r < 0)
                        return r;
                r = set_member(applied, "usec", json_object_new_uint64(usec));
                if (r < 0)
                        return r;
                r = set_member(power, "applied", TAKE_PTR(applied));
                if (r < 0)
                        return r;
        }
        return edit_end(s, bdf, TAKE_PTR(power));
}

/* A power object that holds a source or an applied cap (not only keys of others). */
static bool power_listed(const json_object *power) {
        return json_object_is_type(power, json_type_object) && power_has_record(power);
}

int state_list_gpus(const struct state_store *s, char ***ret) {
        return state_list_gpu_records(s, "power", power_listed, ret);
}
