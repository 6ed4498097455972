/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the state file, <state dir>/state.json: the power records of power-state.c
 * and the VM reservations of sriov/vm-state.c ("vms"), through their public functions only,
 * on a private STATE_DIRECTORY. The input is the file as found on disk. Checks:
 *  - opening never fails on content; a file that cannot be read at all reads as empty, is
 *    never written over, and dropping its damage keeps its bytes aside, unchanged;
 *  - damaged records are named, skipped by readers and written back verbatim: the GPUs they
 *    concern refuse state_set_power() (-EUCLEAN), the others accept what they loaded, and
 *    after a commit a reader sees the same GPUs, sources and damage;
 *  - dropping the damage leaves every source that read, and a state that reads cleanly;
 *  - every "vms" entry either reads as a reservation (canonical UUID, bounded VFs with
 *    canonical BDFs) that survives a round trip through vm_reservation_to_json(), or is
 *    refused with a reason; vm_state_read() returns no more reservations than entries.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz-util.h"
#include "parse-util.h"
#include "power-state.h"
#include "vm-state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_source(const struct power_source *a, const struct power_source *b) {
        if (a->present != b->present)
                return false;
        if (!a->present)
                return true;
        return a->uw == b->uw && a->set_usec == b->set_usec && strcmp(a->key, b->key) == 0 &&
               strcmp(a->vf_bdf, b->vf_bdf) == 0 && strcmp(a->setter, b->setter) == 0;
}

static bool same_sources(const struct power_sources *a, const struct power_sources *b) {
        if (!same_source(&a->host, &b->host) || !same_source(&a->apml, &b->apml) ||
            a->n_vms != b->n_vms)
                return false;
        for (size_t i = 0; i < a->n_vms; i++)
                if (!a->vms[i].present || !same_source(&a->vms[i], &b->vms[i]))
                        return false;
        return true;
}

static void check_source(const struct power_source *src) {
        if (!src->present)
                return;
        if (power_validate(src->uw) != 0)
                abort(); /* only valid caps load */
        if (!memchr(src->key, '\0', sizeof(src->key)) ||
            !memchr(src->vf_bdf, '\0', sizeof(src->vf_bdf)) ||
            !memchr(src->setter, '\0', sizeof(src->setter)))
                abort();
        if (src->vf_bdf[0] && !pci_bdf_valid(src->vf_bdf))
                abort();
}

static bool same_reservation(const struct vm_reservation *a, const struct vm_reservation *b) {
        if (strcmp(a->uuid, b->uuid) != 0 || strcmp(a->name, b->name) != 0 ||
            a->created_usec != b->created_usec || a->cap_uw != b->cap_uw || a->n_vfs != b->n_vfs)
                return false;
        for (size_t i = 0; i < a->n_vfs; i++) {
                const struct vm_vf *x = &a->vfs[i], *y = &b->vfs[i];

                if (strcmp(x->bdf, y->bdf) != 0 || strcmp(x->pf, y->pf) != 0 ||
                    x->bind != y->bind || x->bound != y->bound ||
                    strcmp(x->driver_before, y->driver_before) != 0 || x->cap_uw != y->cap_uw)
                        return false;
        }
        return true;
}

/* The "vms" section: each entry reads as a reservation or is refused with a reason. */
static size_t check_vms(struct state_store *s) {
        json_object *vms = state_get_section(s, "vms");
        size_t n = 0;

        if (!vms || !json_object_is_type(vms, json_type_object))
                return 0;
        json_object_object_foreach(vms, uuid, o) {
                struct vm_reservation v, back;
                char err[256] = "", canonical[VM_UUID_LEN + 1];
                json_object *j;
                int r;

                n++;
                r = vm_reservation_from_json(uuid, o, &v, err, sizeof(err));
                if (r < 0) {
                        if (r != -EINVAL && r != -ENOMEM)
                                abort();
                        if (r == -EINVAL && err[0] == '\0')
                                abort(); /* a reason */
                        continue;
                }
                if (r != 0 || !vm_uuid_normalize(uuid, canonical) || strcmp(canonical, v.uuid) != 0)
                        abort();
                if (v.n_vfs > VM_VFS_MAX || !memchr(v.name, '\0', sizeof(v.name)))
                        abort();
                for (size_t i = 0; i < v.n_vfs; i++)
                        if (!pci_bdf_valid(v.vfs[i].bdf) || !pci_bdf_valid(v.vfs[i].pf) ||
                            !memchr(v.vfs[i].driver_before, '\0', sizeof(v.vfs[i].driver_before)))
                                abort();
                if (!vm_power_key(&v)[0])
                        abort();
                /* round trip */
                j = vm_reservation_to_json(&v);
                if (!j)
                        abort();
                err[0] = '\0';
                if (vm_reservation_from_json(v.uuid, j, &back, err, sizeof(err)) != 0) {
                        fprintf(stderr, "a reservation does not read back: %s\n", err);
                        abort();
                }
                if (!same_reservation(&v, &back))
                        abort();
                json_object_put(j);
        }
        return n;
}

/* Number of names in the state dir starting with "state.json.corrupt-". */
static unsigned count_corrupt(void) {
        DIR *d = opendir(fuzz_path("state"));
        struct dirent *de;
        unsigned n = 0;

        if (!d)
                abort();
        while ((de = readdir(d)))
                n += strncmp(de->d_name, "state.json.corrupt-", 19) == 0;
        closedir(d);
        return n;
}

static bool same_damage(const struct state_store *a, const struct state_store *b) {
        if (state_damage_count(a) != state_damage_count(b))
                return false;
        for (size_t i = 0; i < state_damage_count(a); i++) {
                const struct state_damage *x = state_damage_get(a, i), *y = state_damage_get(b, i);

                if (strcmp(x->where, y->where) != 0 || strcmp(x->problem, y->problem) != 0 ||
                    strcmp(x->bdf, y->bdf) != 0)
                        return false;
        }
        return true;
}

/* Every listed GPU's sources again, compared with @loaded; @exact: the same GPUs are listed
 * (else a GPU left with nothing may go). */
static void check_same_gpus(struct state_store *s, char **gpus, int n,
                            const struct power_sources *loaded, bool exact) {
        char **gpus2 = NULL;
        int n2 = state_list_gpus(s, &gpus2);

        if (n2 < 0 || (exact ? n2 != n : n2 > n))
                abort();
        for (int i = 0; i < n; i++) {
                struct power_sources again;

                if ((exact && strcmp(gpus[i], gpus2[i]) != 0) ||
                    state_get_power(s, gpus[i], &again) != 0 || !same_sources(&loaded[i], &again))
                        abort(); /* round trip */
        }
        for (int i = 0; i < n2; i++) {
                bool found = false;

                for (int k = 0; k < n && !found; k++)
                        found = strcmp(gpus[k], gpus2[i]) == 0;
                if (!found)
                        abort();
        }
        strv_free(gpus2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct state_store *s = NULL, *before = NULL;
        char **gpus = NULL;
        struct power_sources *loaded = NULL;
        bool file_damaged, newer;
        size_t n_vms, n_damage;
        int n, r;

        if (size > 256 * 1024)
                return 0;
        fuzz_state_directory();
        fuzz_rm_rf(fuzz_path("state"));
        fuzz_write("state/state.json", data, size);

        /* a reader: never an error for content, never a change */
        r = state_open(STATE_READ, 0, &before);
        if (r == -ENOMEM)
                return 0;
        if (r != 0)
                abort();
        check_vms(before);
        if (state_damage_count(before) > 0 && !state_warning(before))
                abort(); /* damage is always said */

        r = state_open(STATE_WRITE, 0, &s);
        if (r == -ENOMEM) {
                state_close(before);
                return 0;
        }
        if (r != 0 || !same_damage(before, s))
                abort();
        newer = state_can_commit(s) == -EPROTONOSUPPORT;
        file_damaged = state_can_commit(s) == -EUCLEAN;
        n_damage = state_damage_count(s);
        if (file_damaged && (n_damage != 1 || state_damage_get(s, 0)->where[0] != '\0'))
                abort(); /* the file as a whole, once */
        n = state_list_gpus(s, &gpus);
        if (n < 0)
                abort();
        if ((file_damaged || newer) && n != 0)
                abort(); /* a damaged or newer file reads as empty */
        loaded = calloc((size_t) n + 1, sizeof(*loaded));
        if (!loaded)
                abort();
        for (int i = 0; i < n; i++) {
                if (!pci_bdf_valid(gpus[i]) || (i > 0 && strcmp(gpus[i - 1], gpus[i]) >= 0))
                        abort(); /* canonical, sorted, unique */
                if (state_get_power(s, gpus[i], &loaded[i]) != 0)
                        abort();
                check_source(&loaded[i].host);
                check_source(&loaded[i].apml);
                if (loaded[i].n_vms > POWER_VM_MAX)
                        abort();
                for (size_t k = 0; k < loaded[i].n_vms; k++) {
                        check_source(&loaded[i].vms[k]);
                        if (!loaded[i].vms[k].key[0] ||
                            (k > 0 && strcmp(loaded[i].vms[k - 1].key, loaded[i].vms[k].key) >= 0))
                                abort(); /* keys sorted and unique */
                }
                /* what loaded is what the setter accepts, unless damage concerns the GPU */
                r = state_set_power(s, gpus[i], &loaded[i]);
                if (r != (state_damage_find(s, gpus[i]) ? -EUCLEAN : 0))
                        abort();
        }
        n_vms = check_vms(s);
        r = state_commit(s);
        if (newer ? r != -EPROTONOSUPPORT : file_damaged ? r != -EUCLEAN : r != 0)
                abort();
        state_close(s);

        if (!newer && !file_damaged) {
                struct vm_reservation *list = NULL;
                char warning[512];

                if (count_corrupt() != 0)
                        abort();
                r = state_open(STATE_READ, 0, &s);
                if (r != 0 || !same_damage(before, s) || (n_damage == 0 && state_warning(s)))
                        abort(); /* what was written reads back, damage and all */
                check_same_gpus(s, gpus, n, loaded, true);
                if (check_vms(s) != n_vms)
                        abort();
                state_close(s);

                r = vm_state_read(&list, warning, sizeof(warning));
                if (r < 0 && r != -ENOMEM)
                        abort();
                if (r > 0 && (size_t) r > n_vms)
                        abort();
                free(list);
        }

        /* dropping the damage: every source that read stays, and the state reads cleanly */
        if (!newer) {
                json_object *dropped = NULL;

                r = state_open(STATE_WRITE, 0, &s);
                if (r != 0)
                        abort();
                r = state_drop_damaged(s, NULL, &dropped);
                if (r < 0 || (size_t) r != n_damage ||
                    json_object_array_length(dropped) != n_damage)
                        abort();
                json_object_put(dropped);
                if (state_damage_count(s) != 0 || state_commit(s) != 0)
                        abort();
                state_close(s);
                if (count_corrupt() != (file_damaged ? 1u : 0u))
                        abort(); /* a damaged file kept aside, once */
                r = state_open(STATE_READ, 0, &s);
                if (r != 0 || state_warning(s) || state_damage_count(s) != 0)
                        abort();
                check_same_gpus(s, gpus, n, loaded, false);
                state_close(s);
        }
        state_close(before);
        strv_free(gpus);
        free(loaded);
        return 0;
}
