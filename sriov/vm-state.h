/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's VM reservations: which running libvirt domain holds which VFs, and what amdsmid
 * did for it (the VFs it bound to vfio-pci, the power caps it set), so that the release undoes
 * exactly that, also after a restart. They live in the "vms" section of the state file
 * (the store, core/state.h, keeps the sections it does not own):
 *
 *   "vms": { "<uuid>": { "name": "web1", "created_usec": 1764...,
 *                        "cap_uw": 450000000,                 (optional: the domain's cap)
 *                        "vfs": [ { "bdf": "0000:05:02.0", "pf": "0000:05:00.0",
 *                                   "bind": true,             (managed='no': amdsmid binds)
 *                                   "bound": true,            (amdsmid bound it: restore)
 *                                   "driver_before": "",      (what it had; "" none)
 *                                   "cap_uw": 300000000 } ] } }  (optional, per VF)
 *
 * A reservation that does not read back as this shape is damaged: it is named in a warning
 * (never a reason to refuse starting), kept in the file as it is, and the VFs and PFs it
 * names are not touched while it is there (ReleaseVm of its UUID drops it). The VM power
 * sources stay in the power section, where `amdsmi power clear --vm` reaches them.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define VM_VFS_MAX 64
#define VM_NAME_MAX 256
#define VM_UUID_LEN 36

struct vm_vf {
        char bdf[16];
        char pf[16];
        bool bind;              /* the domain's hostdev is managed='no': amdsmid binds it */
        bool bound;             /* amdsmid bound it to vfio-pci: the release restores it */
        char driver_before[64]; /* its driver before ("" none) */
        uint64_t cap_uw;        /* its own cap (metadata per VF), UINT64_MAX: none */
};

struct vm_reservation {
        char uuid[VM_UUID_LEN + 1]; /* lower-case 8-4-4-4-12 */
        char name[VM_NAME_MAX];
        uint64_t created_usec;
        uint64_t cap_uw; /* the domain's cap, UINT64_MAX: none */
        size_t n_vfs;
        struct vm_vf vfs[VM_VFS_MAX];
};

/* Whether @s is a UUID in any form libvirt accepts (8-4-4-4-12 or 32 hex digits, any case);
 * the canonical lower-case form in @ret (37 bytes) when it is. */
bool vm_uuid_normalize(const char *s, char ret[VM_UUID_LEN + 1]);

/* The key of the domain's vm power source: its name when it is a valid key, else its UUID. */
const char *vm_power_key(const struct vm_reservation *v);

/* The cap of the vm source on @pf: the smallest per-VF cap of the domain's VFs on @pf, else
 * the domain's cap, else UINT64_MAX (no source). */
uint64_t vm_cap_for_pf(const struct vm_reservation *v, const char *pf);

json_object *vm_reservation_to_json(const struct vm_reservation *v);

/* How a reservation is shown (ListVms, `amdsmi vm --json`): name, uuid, cap_w, vfs (bdf, gpu,
 * pf_bdf, pf_gpu, driver, bound_by_amdsmid, driver_before, cap_w), power (pf_bdf, source,
 * key, cap_w). @lookup gives a GPU's index and driver (-ENODEV: unknown; null then). */
typedef int (*vm_lookup_fn)(const char *bdf, void *userdata, unsigned *ret_index,
                            const char **ret_driver);
json_object *vm_reservation_json(const struct vm_reservation *v, vm_lookup_fn lookup,
                                 void *userdata);
/* @o: the value of "vms"."<uuid>". -EINVAL with the reason in @err. */
int vm_reservation_from_json(const char *uuid, json_object *o, struct vm_reservation *ret,
                             char *err, size_t err_size);

/* All reservations of the state file (shared lock). Bad entries are skipped and named in
 * @warning ("" when none). @return the count (array in *ret, free()) or a negative errno. */
int vm_state_read(struct vm_reservation **ret, char *warning, size_t warning_size);

/* A reservation that does not read (kept in the file as it is, never rewritten by a put of
 * another domain). What it holds is unknown: the VF count of a PF it may name, and the VFs it
 * may name, are not changed while it is there (ReleaseVm of its UUID drops it). */
struct vm_damaged {
        char uuid[64];     /* its key; "" when the whole "vms" section is damaged */
        char problem[256];
        char *text;        /* the record as JSON text, to look for the addresses it names */
};
/* vm_state_read() and the damaged reservations (*ret_damaged, vm_damaged_free()). */
int vm_state_read_full(struct vm_reservation **ret, struct vm_damaged **ret_damaged,
                       size_t *ret_n_damaged, char *warning, size_t warning_size);
void vm_damaged_free(struct vm_damaged *l, size_t n);
/* The first damaged reservation that may hold the VF @vf of the PF @pf (either may be NULL):
 * its text names one of them or no PCI address at all, or the whole section is damaged; or
 * NULL. */
const struct vm_damaged *vm_damaged_naming(const struct vm_damaged *l, size_t n,
                                           const char *vf, const char *pf);
/* Records @v (replacing the reservation of its UUID) or, with @drop, removes the reservation
 * of @uuid; exclusive lock, atomic. @return 0 or a negative errno. */
int vm_state_put(const struct vm_reservation *v);
int vm_state_drop(const char *uuid);
