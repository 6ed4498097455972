/* SPDX-License-Identifier: MIT */
/* amdsmid's VM reservations in the state file (see vm-state.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "power-arbitration.h"
#include "power-ops.h"
#include "state.h"
#include "vm-state.h"

#define SECTION "vms"
#define STATE_WAIT_MS 10000
#define NO_CAP UINT64_MAX

bool vm_uuid_normalize(const char *s, char ret[VM_UUID_LEN + 1]) {
        char hex[33];
        size_t n = 0;

        for (const char *p = s; *p; p++) {
                if (*p == '-') {
                        size_t at = (size_t) (p - s);
                        /* dashes only where the canonical form has them */
                        if (strlen(s) != VM_UUID_LEN || (at != 8 && at != 13 && at != 18 && at != 23))
                                return false;
                        continue;
                }
                if (!isxdigit((unsigned char) *p) || n >= 32)
                        return false;
                hex[n++] = (char) tolower((unsigned char) *p);
        }
        if (n != 32)
                return false;
        hex[32] = '\0';
        snprintf(ret, VM_UUID_LEN + 1, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12,
                 hex + 16, hex + 20);
        return true;
}

const char *vm_power_key(const struct vm_reservation *v) {
        return strlen(v->name) < POWER_KEY_MAX && power_vm_name_ok(v->name) ? v->name : v->uuid;
}

uint64_t vm_cap_for_pf(const struct vm_reservation *v, const char *pf) {
        uint64_t cap = NO_CAP;

        for (size_t i = 0; i < v->n_vfs; i++)
                if (strcmp(v->vfs[i].pf, pf) == 0 && v->vfs[i].cap_uw < cap)
                        cap = v->vfs[i].cap_uw;
        if (cap == NO_CAP)
                cap = v->cap_uw;
        return cap;
}

static void set(json_object *o, const char *key, json_object *v) {
        json_object_object_add(o, key, v);
}

json_object *vm_reservation_to_json(const struct vm_reservation *v) {
        json_object *o = json_object_new_object(), *vfs = json_object_new_array();

        if (!o || !vfs) {
                json_object_put(o);
                json_object_put(vfs);
                return NULL;
        }
        set(o, "name", json_object_new_string(v->name));
        set(o, "created_usec", json_object_new_uint64(v->created_usec));
        if (v->cap_uw != NO_CAP)
                set(o, "cap_uw", json_object_new_uint64(v->cap_uw));
        for (size_t i = 0; i < v->n_vfs; i++) {
                const struct vm_vf *f = &v->vfs[i];
                json_object *e = json_object_new_object();

                if (!e)
                        break;
                set(e, "bdf", json_object_new_string(f->bdf));
                set(e, "pf", json_object_new_string(f->pf));
                set(e, "bind", json_object_new_boolean(f->bind));
                set(e, "bound", json_object_new_boolean(f->bound));
                set(e, "driver_before", json_object_new_string(f->driver_before));
                if (f->cap_uw != NO_CAP)
                        set(e, "cap_uw", json_object_new_uint64(f->cap_uw));
                json_object_array_add(vfs, e);
        }
        set(o, "vfs", vfs);
        return o;
}

static bool is_bdf(const char *s) {
        unsigned d, b, dev, f;
        char tail;

        return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1u%c", &d, &b, &dev, &f, &tail) == 4 &&
               dev <= 0x1f && f <= 7 && strspn(s, "0123456789abcdef:.") == 12;
}

static int get_string(json_object *o, const char *key, bool required, char *buf, size_t size,
                      char *err, size_t err_size) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v)) {
                if (!required) {
                        buf[0] = '\0';
                        return 0;
                }
                snprintf(err, err_size, "%s: missing", key);
                return -EINVAL;
        }
        if (!json_object_is_type(v, json_type_string) ||
            (size_t) json_object_get_string_len(v) >= size) {
                snprintf(err, err_size, "%s: not a string of at most %zu bytes", key, size - 1);
                return -EINVAL;
        }
        snprintf(buf, size, "%s", json_object_get_string(v));
        return 0;
}

static int get_cap(json_object *o, const char *key, uint64_t *ret, char *err, size_t err_size) {
        json_object *v;

        *ret = NO_CAP;
        if (!json_object_object_get_ex(o, key, &v))
                return 0;
        if (!json_object_is_type(v, json_type_int) || power_validate(json_object_get_uint64(v)) < 0) {
                snprintf(err, err_size, "%s: not a power cap in µW", key);
                return -EINVAL;
        }
        *ret = json_object_get_uint64(v);
        return 0;
}

static bool get_bool(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_boolean) &&
               json_object_get_boolean(v);
}

int vm_reservation_from_json(const char *uuid, json_object *o, struct vm_reservation *ret,
                             char *err, size_t err_size) {
        struct vm_reservation v = { .cap_uw = NO_CAP };
        json_object *vfs, *t;
        int r;

        if (!vm_uuid_normalize(uuid, v.uuid) || strcmp(v.uuid, uuid) != 0) {
                snprintf(err, err_size, "\"%s\" is not a UUID", uuid);
                return -EINVAL;
        }
        if (!json_object_is_type(o, json_type_object)) {
                snprintf(err, err_size, "not an object");
                return -EINVAL;
        }
        r = get_string(o, "name", true, v.name, sizeof(v.name), err, err_size);
        if (r < 0)
                return r;
        if (json_object_object_get_ex(o, "created_usec", &t) && json_object_is_type(t, json_type_int))
                v.created_usec = json_object_get_uint64(t);
        r = get_cap(o, "cap_uw", &v.cap_uw, err, err_size);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(o, "vfs", &vfs) || !json_object_is_type(vfs, json_type_array) ||
            json_object_array_length(vfs) == 0 || json_object_array_length(vfs) > VM_VFS_MAX) {
                snprintf(err, err_size, "vfs: not an array of 1 to %d VFs", VM_VFS_MAX);
                return -EINVAL;
        }
        for (size_t i = 0; i < json_object_array_length(vfs); i++) {
                json_object *e = json_object_array_get_idx(vfs, i);
                struct vm_vf *f = &v.vfs[v.n_vfs++];

                if (!json_object_is_type(e, json_type_object)) {
                        snprintf(err, err_size, "vfs[%zu]: not an object", i);
                        return -EINVAL;
                }
                if ((r = get_string(e, "bdf", true, f->bdf, sizeof(f->bdf), err, err_size)) < 0 ||
                    (r = get_string(e, "pf", true, f->pf, sizeof(f->pf), err, err_size)) < 0 ||
                    (r = get_string(e, "driver_before", false, f->driver_before,
                                    sizeof(f->driver_before), err, err_size)) < 0 ||
                    (r = get_cap(e, "cap_uw", &f->cap_uw, err, err_size)) < 0)
                        return r;
                if (!is_bdf(f->bdf) || !is_bdf(f->pf)) {
                        snprintf(err, err_size, "vfs[%zu]: bdf and pf must be PCI addresses", i);
                        return -EINVAL;
                }
                f->bind = get_bool(e, "bind");
                f->bound = get_bool(e, "bound");
        }
        *ret = v;
        return 0;
}

static json_object *cap_w(uint64_t uw) {
        return uw == NO_CAP ? NULL : json_object_new_uint64(uw / UINT64_C(1000000));
}

json_object *vm_reservation_json(const struct vm_reservation *v, vm_lookup_fn lookup,
                                 void *userdata) {
        json_object *o = json_object_new_object(), *vfs = json_object_new_array(),
                    *power = json_object_new_array();
        char pfs[VM_VFS_MAX][16];
        size_t n_pfs = 0;

        if (!o || !vfs || !power) {
                json_object_put(o);
                json_object_put(vfs);
                json_object_put(power);
                return NULL;
        }
        set(o, "name", json_object_new_string(v->name));
        set(o, "uuid", json_object_new_string(v->uuid));
        set(o, "cap_w", cap_w(v->cap_uw));
        for (size_t i = 0; i < v->n_vfs; i++) {
                const struct vm_vf *f = &v->vfs[i];
                unsigned gi = 0, pi = 0;
                const char *drv = NULL, *pdrv = NULL;
                bool have_g = lookup(f->bdf, userdata, &gi, &drv) >= 0,
                     have_p = lookup(f->pf, userdata, &pi, &pdrv) >= 0;
                json_object *e = json_object_new_object();
                bool seen = false;

                if (!e)
                        break;
                set(e, "bdf", json_object_new_string(f->bdf));
                set(e, "gpu", have_g ? json_object_new_uint64(gi) : NULL);
                set(e, "pf_bdf", json_object_new_string(f->pf));
                set(e, "pf_gpu", have_p ? json_object_new_uint64(pi) : NULL);
                /* an unbound VF's driver is "none", as in every verb; null: the VF is gone */
                set(e, "driver",
                    have_g ? json_object_new_string(drv && drv[0] ? drv : "none") : NULL);
                set(e, "bound_by_amdsmid", json_object_new_boolean(f->bound));
                set(e, "driver_before",
                    f->bound ? json_object_new_string(f->driver_before[0] ? f->driver_before
                                                                          : "none")
                             : NULL);
                set(e, "cap_w", cap_w(f->cap_uw));
                json_object_array_add(vfs, e);
                for (size_t k = 0; k < n_pfs; k++)
                        seen = seen || strcmp(pfs[k], f->pf) == 0;
                if (!seen)
                        snprintf(pfs[n_pfs++], sizeof(pfs[0]), "%s", f->pf);
        }
        for (size_t k = 0; k < n_pfs; k++) {
                uint64_t uw = vm_cap_for_pf(v, pfs[k]);
                json_object *e;

                if (uw == NO_CAP)
                        continue;
                e = json_object_new_object();
                if (!e)
                        break;
                set(e, "pf_bdf", json_object_new_string(pfs[k]));
                set(e, "source", json_object_new_string("vm"));
                set(e, "key", json_object_new_string(vm_power_key(v)));
                set(e, "cap_w", cap_w(uw));
                json_object_array_add(power, e);
        }
        set(o, "vfs", vfs);
        set(o, "power", power);
        return o;
}

void vm_damaged_free(struct vm_damaged *l, size_t n) {
        for (size_t i = 0; l && i < n; i++)
                free(l[i].text);
        free(l);
}

static int add_damaged(struct vm_damaged **l, size_t *n, const char *uuid, json_object *o,
                       const char *problem) {
        struct vm_damaged *nl = reallocarray(*l, *n + 1, sizeof(**l));
        const char *text;

        if (!nl)
                return -ENOMEM;
        *l = nl;
        nl[*n] = (struct vm_damaged){};
        snprintf(nl[*n].uuid, sizeof(nl[*n].uuid), "%s", uuid);
        snprintf(nl[*n].problem, sizeof(nl[*n].problem), "%s", problem);
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        nl[*n].text = strdup(text ? text : "null");
        if (!nl[*n].text)
                return -ENOMEM;
        (*n)++;
        return 0;
}

int vm_state_read_full(struct vm_reservation **ret, struct vm_damaged **ret_damaged,
                       size_t *ret_n_damaged, char *warning, size_t warning_size) {
        struct state_store *st = NULL;
        struct vm_reservation *list = NULL;
        struct vm_damaged *damaged = NULL;
        size_t n = 0, n_damaged = 0;
        json_object *vms;
        int r = 0;

        warning[0] = '\0';
        r = state_open(STATE_READ, STATE_WAIT_MS, &st);
        if (r < 0)
                return r;
        vms = state_get_section(st, SECTION);
        if (state_unreadable(st) < 0) {
                /* the reservations it holds are unknown: as if the section were damaged */
                snprintf(warning, warning_size, "%s", state_warning(st) ?: state_path(st));
                r = add_damaged(&damaged, &n_damaged, "", NULL,
                                state_warning(st) ?: "the state file cannot be read");
        } else if (vms && !json_object_is_type(vms, json_type_object)) {
                snprintf(warning, warning_size,
                         "%s: \"vms\" is damaged (not an object): no reservation is read, and "
                         "none is recorded until it is repaired or removed",
                         state_path(st));
                r = add_damaged(&damaged, &n_damaged, "", vms, "\"vms\" is not an object");
        } else if (vms) {
                json_object_object_foreach(vms, uuid, o) {
                        struct vm_reservation *nl;
                        char err[256];

                        nl = realloc(list, (n + 1) * sizeof(*list));
                        if (!nl) {
                                r = -ENOMEM;
                                break;
                        }
                        list = nl;
                        if (vm_reservation_from_json(uuid, o, &list[n], err, sizeof(err)) < 0) {
                                if (!warning[0])
                                        snprintf(warning, warning_size,
                                                 "%s: the reservation \"vms.%s\" is damaged "
                                                 "(%s): kept as it is, not read",
                                                 state_path(st), uuid, err);
                                r = add_damaged(&damaged, &n_damaged, uuid, o, err);
                                if (r < 0)
                                        break;
                                continue;
                        }
                        n++;
                }
        }
        state_close(st);
        if (r < 0) {
                free(list);
                vm_damaged_free(damaged, n_damaged);
                return r;
        }
        *ret = list;
        if (ret_damaged) {
                *ret_damaged = damaged;
                *ret_n_damaged = n_damaged;
        } else
                vm_damaged_free(damaged, n_damaged);
        return (int) n;
}

int vm_state_read(struct vm_reservation **ret, char *warning, size_t warning_size) {
        return vm_state_read_full(ret, NULL, NULL, warning, warning_size);
}

/* Whether @text holds anything that looks like a PCI address (dddd:bb:dd.f). */
static bool names_a_bdf(const char *text) {
        for (const char *p = text; *p; p++) {
                char bdf[13];

                if (strlen(p) < 12)
                        break;
                memcpy(bdf, p, 12);
                bdf[12] = '\0';
                if (is_bdf(bdf))
                        return true;
        }
        return false;
}

const struct vm_damaged *vm_damaged_naming(const struct vm_damaged *l, size_t n,
                                           const char *vf, const char *pf) {
        for (size_t i = 0; i < n; i++)
                if (!l[i].uuid[0] || (vf && strstr(l[i].text, vf)) ||
                    (pf && strstr(l[i].text, pf)) || !names_a_bdf(l[i].text))
                        return &l[i];
        return NULL;
}

static int put(const char *uuid, const struct vm_reservation *v) {
        struct state_store *st = NULL;
        json_object *vms, *copy;
        int r;

        r = state_open(STATE_WRITE, STATE_WAIT_MS, &st);
        if (r < 0)
                return r;
        vms = state_get_section(st, SECTION);
        if (vms && !json_object_is_type(vms, json_type_object)) {
                /* damaged: never replaced by a change (it is read as no reservation) */
                state_close(st);
                return -EUCLEAN;
        }
        if (!vms) {
                vms = json_object_new_object();
                if (!vms || state_set_section(st, SECTION, vms) < 0) {
                        state_close(st);
                        return -ENOMEM;
                }
        }
        if (v) {
                copy = vm_reservation_to_json(v);
                if (!copy || json_object_object_add(vms, uuid, copy) < 0) {
                        state_close(st);
                        return -ENOMEM;
                }
        } else
                json_object_object_del(vms, uuid);
        if (json_object_object_length(vms) == 0)
                (void) state_set_section(st, SECTION, NULL);
        r = state_commit(st);
        state_close(st);
        return r;
}

int vm_state_put(const struct vm_reservation *v) {
        return put(v->uuid, v);
}

int vm_state_drop(const char *uuid) {
        return put(uuid, NULL);
}
