/* SPDX-License-Identifier: MIT */
/*
 * amdsmid: VMs on org.amdsmi1.Manager (ARCHITECTURE §6), for amdsmi-libvirt-hook:
 *
 *   PrepareVm(s name, s uuid, as vfs, a{sv} opts) -> s
 *       reserves the VFs for the domain (refused while another domain holds one: Busy, naming
 *       it; every VF must be a host VF amdsmid knows), binds to vfio-pci those the domain's
 *       XML leaves to the host (managed='no'), and sets the domain's vm power source on each
 *       GPU it has VFs of (the arbitrated cap applied, on gim hosts recorded and explained).
 *       All or nothing: a failure undoes what the call did. opts:
 *         "unmanaged"     as     the VFs amdsmid binds (a subset of vfs)
 *         "power_cap_uw"  t      the domain's cap
 *         "vf_power_caps" a{st}  per VF (a VF's cap wins over the domain's on its GPU; several
 *                                VFs on one GPU: the smallest)
 *         "reconnect"     b      libvirtd reconnects to a running domain: record the
 *                                reservation if it is missing, change nothing
 *         "dry_run"       b      the plan; nothing changes, no authorisation
 *   ReleaseVm(s uuid) -> s
 *       undoes it: the power source cleared, the VFs amdsmid bound given back to the driver
 *       they had, the reservation dropped (also when a step fails: the error says which, and
 *       the hook, which must not fail a stopping domain, logs it). No reservation: a success
 *       that says so.
 *   ListVms() -> s
 *       the reservations (`amdsmi vm --json`).
 *
 * PrepareVm and ReleaseVm are authorised as org.amdsmi1.vm.provision and run as one job
 * holding the PFs of the VFs. Reservations are kept in the state file (vm-state.h), so a
 * restart of amdsmid releases what a release hook asks for after it. While a domain holds a
 * VF, the VF count of its PF is not changed (SetNumVfs answers Busy naming the domain).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "amdsmid.h"
#include "report.h"
#include "exit-codes.h"
#include "amdsmid-conf.h"
#include "history.h"
#include "domain-xml.h"
#include "libvirt-watch.h"
#include "power-ops.h"
#include "vm-state.h"

#define VM_ACTION "org.amdsmi1.vm.provision"
#define NO_CAP UINT64_MAX

/* The reservations, as in the state file (loaded at first use), and the UUIDs whose release
 * is queued (so that a lifecycle event after the hook's release queues no second one). */
static struct {
        struct vm_reservation *v;
        size_t n;
        struct vm_damaged *damaged; /* reservations that do not read: kept, not touched */
        size_t n_damaged;
        bool loaded;
        char releasing[16][VM_UUID_LEN + 1];
} vms;

static bool releasing(const char *uuid) {
        for (size_t i = 0; i < ELEMENTSOF(vms.releasing); i++)
                if (strcmp(vms.releasing[i], uuid) == 0)
                        return true;
        return false;
}

static void set_releasing(const char *uuid, bool on) {
        for (size_t i = 0; i < ELEMENTSOF(vms.releasing); i++) {
                if (on && vms.releasing[i][0] == '\0') {
                        snprintf(vms.releasing[i], sizeof(vms.releasing[i]), "%s", uuid);
                        return;
                }
                if (!on && strcmp(vms.releasing[i], uuid) == 0)
                        vms.releasing[i][0] = '\0';
        }
}

static void vms_load(void) {
        char warning[512];
        int r;

        if (vms.loaded)
                return;
        r = vm_state_read_full(&vms.v, &vms.damaged, &vms.n_damaged, warning, sizeof(warning));
        if (r < 0) {
                log_warning("cannot read the VM reservations: %s", strerror(-r));
                return; /* again at the next call */
        }
        vms.n = (size_t) r;
        vms.loaded = true;
        if (warning[0])
                log_warning("%s", warning);
}

static struct vm_reservation *vm_find(const char *uuid) {
        vms_load();
        for (size_t i = 0; i < vms.n; i++)
                if (strcmp(vms.v[i].uuid, uuid) == 0)
                        return &vms.v[i];
        return NULL;
}

static int vms_replace(const struct vm_reservation *v) {
        struct vm_reservation *slot = vm_find(v->uuid), *n;

        if (slot) {
                *slot = *v;
                return 0;
        }
        n = realloc(vms.v, (vms.n + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        vms.v = n;
        vms.v[vms.n++] = *v;
        return 0;
}

static void vms_remove(const char *uuid) {
        struct vm_reservation *slot = vm_find(uuid);

        if (!slot)
                return;
        *slot = vms.v[--vms.n];
}

/* The reservation other than @except_uuid's that holds @bdf (a VF), or NULL. */
static const struct vm_reservation *vf_holder(const char *bdf, const char *except_uuid) {
        vms_load();
        for (size_t i = 0; i < vms.n; i++) {
                if (except_uuid && strcmp(vms.v[i].uuid, except_uuid) == 0)
                        continue;
                for (size_t k = 0; k < vms.v[i].n_vfs; k++)
                        if (strcmp(vms.v[i].vfs[k].bdf, bdf) == 0)
                                return &vms.v[i];
        }
        return NULL;
}

int vm_pf_holder(const char *pf, const char **ret_name, const char **ret_vf) {
        const struct vm_damaged *dmg;

        vms_load();
        for (size_t i = 0; i < vms.n; i++)
                for (size_t k = 0; k < vms.v[i].n_vfs; k++)
                        if (strcmp(vms.v[i].vfs[k].pf, pf) == 0) {
                                *ret_name = vms.v[i].name;
                                *ret_vf = vms.v[i].vfs[k].bdf;
                                return 1;
                        }
        /* a reservation that cannot be read may hold any VF (its VF addresses may name no
         * PF): the VF count waits until it is dropped */
        (void) pf;
        dmg = vms.n_damaged > 0 ? &vms.damaged[0] : NULL;
        if (dmg) {
                *ret_name = dmg->uuid[0] ? dmg->uuid : NULL; /* NULL: the whole section */
                *ret_vf = dmg->problem;
                return -EUCLEAN;
        }
        return 0;
}

/* The damaged reservation of @uuid: its index in vms.damaged, -ENOENT, or -EUCLEAN when the
 * whole section is damaged. */
static int find_damaged(const char *uuid) {
        for (size_t i = 0; i < vms.n_damaged; i++) {
                char canonical[VM_UUID_LEN + 1];

                if (!vms.damaged[i].uuid[0])
                        return -EUCLEAN;
                if (vm_uuid_normalize(vms.damaged[i].uuid, canonical) &&
                    strcmp(canonical, uuid) == 0)
                        return (int) i;
        }
        return -ENOENT;
}

/* ---- documents ------------------------------------------------------------------------------ */

static int lookup_dgpu(const char *bdf, void *userdata, unsigned *ret_index,
                       const char **ret_driver) {
        struct dgpu *g = manager_find_gpu(userdata, bdf);

        if (!g)
                return -ENODEV;
        *ret_index = g->index;
        *ret_driver = g->driver;
        return 0;
}

static json_object *vm_json(struct daemon *d, const struct vm_reservation *v) {
        return vm_reservation_json(v, lookup_dgpu, d);
}

static void say(json_object *doc, const char *fmt, ...) _printf_(2, 3);
static void say(json_object *doc, const char *fmt, ...) {
        json_object *lines;
        char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (msg && json_object_object_get_ex(doc, "messages", &lines))
                json_object_array_add(lines, json_object_new_string(msg));
        free(msg);
}

/* ---- jobs --------------------------------------------------------------------------------- */

struct vm_job {
        struct vm_reservation v;     /* PrepareVm: the new reservation; ReleaseVm: the old */
        struct vm_reservation prev;  /* PrepareVm: the reservation it replaces, if any */
        bool have_prev;
        bool release;
        bool drop_damaged;           /* ReleaseVm of a reservation that cannot be read */
        char key[64];                /* ... its key in the state file, as written there */
        char setter[POWER_SETTER_MAX];
        char pfs[VM_VFS_MAX][16];    /* the PFs of the VFs, each once */
        size_t n_pfs;
};

static void collect_pfs(struct vm_job *vj) {
        vj->n_pfs = 0;
        for (size_t i = 0; i < vj->v.n_vfs; i++) {
                bool seen = false;

                for (size_t k = 0; k < vj->n_pfs; k++)
                        seen = seen || strcmp(vj->pfs[k], vj->v.vfs[i].pf) == 0;
                if (!seen)
                        snprintf(vj->pfs[vj->n_pfs++], sizeof(vj->pfs[0]), "%s", vj->v.vfs[i].pf);
        }
}

static const char *first_vf_on(const struct vm_reservation *v, const char *pf) {
        for (size_t i = 0; i < v->n_vfs; i++)
                if (strcmp(v->vfs[i].pf, pf) == 0)
                        return v->vfs[i].bdf;
        return NULL;
}

/* Gives back a VF amdsmid bound; "" on success, else why not in @why. */
static int give_back(struct amdsmi_ctx *ctx, const char *bdf, char *why, size_t size) {
        struct amdsmi_vf_bind_report rep = { .size = sizeof(rep) };
        struct amdsmi_gpu *vf = NULL;
        int r;

        r = amdsmi_ctx_find_gpu(ctx, bdf, &vf);
        if (r < 0) {
                snprintf(why, size, "VF %s is gone", bdf);
                return r;
        }
        r = amdsmi_vf_release(vf, 0, &rep);
        if (r < 0)
                snprintf(why, size, "cannot give VF %s back to %s: %s", bdf,
                         rep.driver_before[0] ? rep.driver_before : "its driver",
                         rep.message[0] ? rep.message : strerror(-r));
        return r;
}

/* The power of the domain on every PF: set (@clear false) or cleared. */
static int power_all(struct job *j, struct amdsmi_ctx *ctx, struct vm_job *vj,
                     const struct vm_reservation *v, bool clear, json_object *doc,
                     json_object *entries, size_t *ret_done) {
        bool dry = j->flags & AMDSMI_BUS_FLAG_DRY_RUN;

        *ret_done = 0;
        for (size_t k = 0; k < vj->n_pfs; k++, (*ret_done)++) {
                uint64_t uw = vm_cap_for_pf(v, vj->pfs[k]);
                struct power_outcome out;
                json_object *entry = NULL, *control;
                int r;

                if (uw == NO_CAP)
                        continue;
                r = power_vm_run(ctx, vj->pfs[k], vm_power_key(v), first_vf_on(v, vj->pfs[k]),
                                 clear ? AMDSMI_NA : uw, dry, vj->setter, &entry, &out);
                if (entry)
                        json_object_array_add(entries, entry);
                if (r == -ENOENT && clear)
                        continue; /* no source any more: cleared by hand */
                if (r == -EOPNOTSUPP && entry && json_object_object_get_ex(entry, "control", &control) &&
                    control && strcmp(json_object_get_string(control), "gim") == 0) {
                        /* recorded and explained; gim has no sysfs power path */
                        say(doc, "GPU %s: the vm source %s is %s; gim applies no cap "
                                 "through sysfs",
                            vj->pfs[k], vm_power_key(v), clear ? "removed" : "recorded");
                        continue;
                }
                if (r < 0) {
                        (void) asprintf(&j->message, "%s", out.message[0] ? out.message : strerror(-r));
                        return r;
                }
        }
        return 0;
}

static json_object *job_doc(struct job *j, const struct vm_reservation *v, const char *what) {
        json_object *doc = json_object_new_object();

        if (!doc)
                return NULL;
        json_set(doc, "operation", json_object_new_string(what));
        json_set(doc, "name", json_object_new_string(v->name));
        json_set(doc, "uuid", json_object_new_string(v->uuid));
        json_set(doc, "dry_run", json_object_new_boolean(j->flags & AMDSMI_BUS_FLAG_DRY_RUN));
        json_set(doc, "messages", json_object_new_array());
        json_set(doc, "power", json_object_new_array());
        return doc;
}

static int run_prepare(struct job *j, struct amdsmi_ctx *ctx) {
        struct vm_job *vj = j->userdata;
        struct vm_reservation *v = &vj->v;
        bool dry = j->flags & AMDSMI_BUS_FLAG_DRY_RUN;
        json_object *doc = job_doc(j, v, "prepare"), *entries = NULL;
        size_t n_bound = 0, powered = 0;
        int r = 0;

        if (!doc)
                return -ENOMEM;
        j->reply = doc;
        json_object_object_get_ex(doc, "power", &entries);

        /* 1. the VFs the host binds (managed='no') */
        for (size_t i = 0; i < v->n_vfs; i++) {
                struct vm_vf *f = &v->vfs[i];
                struct amdsmi_vf_bind_report rep = { .size = sizeof(rep) };
                struct amdsmi_gpu *vf = NULL;
                const char *drv;

                if (!f->bind || f->bound)
                        continue; /* libvirt binds it, or amdsmid did already */
                r = amdsmi_ctx_find_gpu(ctx, f->bdf, &vf);
                if (r < 0) {
                        (void) asprintf(&j->message, "VF %s is gone", f->bdf);
                        r = -ENODEV;
                        goto undo;
                }
                drv = amdsmi_gpu_get_driver_name(vf);
                if (drv && strcmp(drv, "vfio-pci") == 0) {
                        say(doc, "VF %s: on vfio-pci already", f->bdf);
                        continue;
                }
                r = amdsmi_vf_bind_vfio(vf, dry ? AMDSMI_SRIOV_DRY_RUN : 0, &rep);
                if (r < 0) {
                        (void) asprintf(&j->message, "cannot bind VF %s to vfio-pci: %s", f->bdf,
                                        rep.message[0] ? rep.message : strerror(-r));
                        goto undo;
                }
                if (dry) {
                        say(doc, "VF %s: would bind %s -> vfio-pci", f->bdf,
                            rep.driver_before[0] ? rep.driver_before : "none");
                        continue;
                }
                f->bound = true;
                snprintf(f->driver_before, sizeof(f->driver_before), "%s", rep.driver_before);
                n_bound = i + 1;
                say(doc, "VF %s: %s -> vfio-pci", f->bdf,
                    rep.driver_before[0] ? rep.driver_before : "none");
        }

        /* 2. the domain's power */
        r = power_all(j, ctx, vj, v, false, doc, entries, &powered);
        if (r < 0)
                goto undo;

        /* 3. the reservation */
        if (!dry) {
                r = vm_state_put(v);
                if (r < 0) {
                        (void) asprintf(
                                &j->message, "cannot record the reservation: %s",
                                state_open_error(r, (char[PATH_MAX + 128]){}, PATH_MAX + 128));
                        goto undo;
                }
        }
        say(doc, "%s %s (%s): %zu VF%s %s", dry ? "would reserve for" : "reserved for", v->name,
            v->uuid, v->n_vfs, v->n_vfs == 1 ? "" : "s", dry ? "" : "held");
        json_set(doc, "vm", vm_json(j->d, v));
        json_set(doc, "result", NULL);
        return 0;

undo:
        /* nothing left half done: the power set by this call, the VFs it bound */
        if (!dry) {
                struct vm_job partial = *vj;

                partial.n_pfs = powered;
                (void) power_all(j, ctx, &partial, v, true, doc, entries, &powered);
                for (size_t i = 0; i < n_bound; i++) {
                        char why[512];

                        if (v->vfs[i].bound && give_back(ctx, v->vfs[i].bdf, why, sizeof(why)) < 0)
                                say(doc, "%s", why);
                }
        }
        json_set(doc, "result", report_errno_json(r));
        return r;
}

static int run_release(struct job *j, struct amdsmi_ctx *ctx) {
        struct vm_job *vj = j->userdata;
        struct vm_reservation *v = &vj->v;
        bool dry = j->flags & AMDSMI_BUS_FLAG_DRY_RUN;
        json_object *doc = job_doc(j, v, "release"), *entries = NULL;
        size_t powered;
        int r, first = 0;

        if (!doc)
                return -ENOMEM;
        j->reply = doc;
        json_object_object_get_ex(doc, "power", &entries);
        r = power_all(j, ctx, vj, v, true, doc, entries, &powered);
        if (r < 0) {
                say(doc, "%s", j->message ? j->message : strerror(-r));
                first = r;
        }
        for (size_t i = 0; i < v->n_vfs; i++) {
                char why[512];

                if (!v->vfs[i].bound)
                        continue;
                if (dry) {
                        say(doc, "VF %s: would go back to %s", v->vfs[i].bdf,
                            v->vfs[i].driver_before[0] ? v->vfs[i].driver_before : "no driver");
                        continue;
                }
                r = give_back(ctx, v->vfs[i].bdf, why, sizeof(why));
                if (r < 0) {
                        say(doc, "%s", why);
                        if (first == 0) {
                                free(j->message);
                                j->message = strdup(why);
                                first = r;
                        }
                } else
                        say(doc, "VF %s: vfio-pci -> %s", v->vfs[i].bdf,
                            v->vfs[i].driver_before[0] ? v->vfs[i].driver_before : "none");
        }
        if (!dry) {
                r = vm_state_drop(v->uuid);
                if (r < 0 && first == 0) {
                        free(j->message);
                        (void) asprintf(&j->message, "cannot drop the reservation: %s",
                                        strerror(-r));
                        first = r;
                }
        }
        say(doc, "%s %s (%s)", dry ? "would release" : "released", v->name, v->uuid);
        /* what was released: the VFs, those amdsmid gave back, the caps (the hook's line) */
        json_set(doc, "vm", vm_json(j->d, v));
        json_set(doc, "result", first < 0 ? report_errno_json(first) : NULL);
        return first;
}

/* ReleaseVm of a damaged reservation: it leaves the state file; nothing it held is touched,
 * since what it held is unknown. */
static int run_drop_damaged(struct job *j, struct amdsmi_ctx *ctx) {
        struct vm_job *vj = j->userdata;
        json_object *doc = json_object_new_object();
        int r;

        (void) ctx;
        if (!doc)
                return -ENOMEM;
        j->reply = doc;
        json_set(doc, "operation", json_object_new_string("release"));
        json_set(doc, "uuid", json_object_new_string(vj->v.uuid));
        json_set(doc, "released", json_object_new_boolean(false));
        json_set(doc, "messages", json_object_new_array());
        if (j->flags & AMDSMI_BUS_FLAG_DRY_RUN) {
                say(doc, "would drop the damaged reservation of %s", vj->v.uuid);
                return 0;
        }
        r = vm_state_drop(vj->key);
        if (r < 0) {
                (void) asprintf(&j->message, "cannot drop the damaged reservation of %s: %s",
                                vj->v.uuid, strerror(-r));
                return r;
        }
        json_set(doc, "released", json_object_new_boolean(true));
        say(doc, "the damaged reservation of %s was dropped; what it held is unknown and was "
            "not released (check the VFs with 'amdsmi sriov')", vj->v.uuid);
        j->message = strdup("a damaged reservation, which could not be read, was dropped");
        return 0;
}

static void release_internal(struct daemon *d, const struct vm_reservation *v, const char *why);

/* Whether the caller of @j has left the bus (no reply can reach it). */
static bool caller_gone(struct job *j) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *sender = j->call ? sd_bus_message_get_sender(j->call) : NULL;
        int has = 1;

        if (!sender)
                return false;
        if (sd_bus_call_method(sd_bus_message_get_bus(j->call), "org.freedesktop.DBus",
                               "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                               NULL, &reply, "s", sender) < 0 ||
            sd_bus_message_read(reply, "b", &has) < 0)
                return false; /* unknown: the answer is sent as usual */
        return !has;
}

static void finish(struct job *j) {
        struct vm_job *vj = j->userdata;

        if (j->flags & AMDSMI_BUS_FLAG_DRY_RUN)
                return;
        if (vj->drop_damaged) {
                int i = find_damaged(vj->v.uuid);

                if (j->r >= 0 && i >= 0) {
                        free(vms.damaged[i].text);
                        vms.damaged[i] = vms.damaged[--vms.n_damaged];
                }
                return;
        }
        if (vj->release) {
                vms_remove(vj->v.uuid); /* gone from the file too, whatever else failed */
                set_releasing(vj->v.uuid, false);
        }
        else if (j->r >= 0 && vms_replace(&vj->v) < 0)
                log_warning("out of memory: the reservation of %s is in the state file only",
                            vj->v.name);
        for (size_t k = 0; k < vj->n_pfs; k++)
                power_vm_done(j->d, vj->pfs[k]);
        /* a prepare whose caller left before the answer (the hook's deadline passed, and it
         * failed the domain's start): nobody knows it was done, so it is undone */
        if (!vj->release && j->r >= 0 && caller_gone(j)) {
                const struct vm_reservation *v = vm_find(vj->v.uuid);

                if (v)
                        release_internal(j->d, v, "was prepared after its caller gave up");
        }
}

static int submit(struct daemon *d, sd_bus_message *m, const char *name, struct vm_job *vj,
                  uint64_t flags, const char *change, const char *new_value,
                  sd_bus_error *error) {
        const char *bdfs[VM_VFS_MAX];
        struct job *j;
        int r;

        collect_pfs(vj);
        for (size_t k = 0; k < vj->n_pfs; k++)
                bdfs[k] = vj->pfs[k];
        j = job_new(d, m, name, bdfs, vj->n_pfs, flags);
        if (!j) {
                free(vj);
                return bus_error_errno(error, -ENOMEM, "out of memory");
        }
        /* the setter names the domain by UUID: a name may not fit */
        snprintf(vj->setter, sizeof(vj->setter), "uid %d via amdsmid (pid %d), domain %.36s",
                 (int) j->uid, (int) j->pid, vj->v.uuid);
        j->run = vj->drop_damaged ? run_drop_damaged : vj->release ? run_release : run_prepare;
        j->finish = finish;
        j->userdata = vj;
        j->free_userdata = free;
        if (job_set_change(j, change, NULL, new_value) < 0) {
                job_free(j);
                return bus_error_errno(error, -ENOMEM, "out of memory");
        }
        if (!m) /* amdsmid's own (the domains libvirt shows): nobody to ask */
                return job_submit(j) < 0 ? -ENOMEM : 1;
        r = job_authorise_and_submit(j, VM_ACTION);
        if (r < 0)
                return bus_error_errno(error, r, "cannot queue %s(): %s", name, strerror(-r));
        return 1;
}

/* ---- methods ---------------------------------------------------------------------------- */

static bool name_ok(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= VM_NAME_MAX)
                return false;
        for (const char *p = s; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

static int read_cap(sd_bus_message *m, const char *what, uint64_t *ret, sd_bus_error *error) {
        uint64_t uw;
        int r;

        r = sd_bus_message_read(m, "t", &uw);
        if (r < 0)
                return r;
        if (power_validate(uw) < 0 || uw < POWER_FLOOR_UW)
                return bus_error_errno(error, -ERANGE, "%s %" PRIu64 " µW is not a power cap",
                                       what, uw);
        *ret = uw;
        return 0;
}

/* The VF @bdf as the reservation takes it: a host VF amdsmid knows, held by no other domain. */
static int add_vf(struct daemon *d, struct vm_reservation *v, const char *bdf,
                  sd_bus_error *error) {
        struct amdsmi_gpu *gpu = NULL;
        const struct vm_reservation *h;
        const char *pf;
        int r;

        if (v->n_vfs >= VM_VFS_MAX)
                return bus_error_errno(error, -E2BIG, "more than %d VFs", VM_VFS_MAX);
        r = amdsmi_ctx_find_gpu(d->ctx, bdf, &gpu);
        if (r == -EINVAL)
                return bus_error_errno(error, -EINVAL, "\"%s\" is not a PCI address", bdf);
        if (r < 0)
                return bus_error_errno(error, -ENODEV, "%s is no AMD GPU function amdsmid knows",
                                       bdf);
        bdf = amdsmi_gpu_get_bdf(gpu);
        pf = amdsmi_gpu_get_physfn_bdf(gpu);
        if (amdsmi_gpu_get_role(gpu) != AMDSMI_ROLE_VF || !pf)
                return bus_error_errno(error, -EINVAL,
                                       "%s is not a VF of this host (it is a %s GPU): only "
                                       "VFs are provisioned for domains",
                                       bdf, amdsmi_role_to_string(amdsmi_gpu_get_role(gpu)));
        for (size_t i = 0; i < v->n_vfs; i++)
                if (strcmp(v->vfs[i].bdf, bdf) == 0)
                        return bus_error_errno(error, -EINVAL, "VF %s is given twice", bdf);
        h = vf_holder(bdf, v->uuid);
        if (h)
                return bus_error_errno(error, -EBUSY,
                                       "VF %s is held by domain %s (%s): it is released when "
                                       "that domain stops, or with 'amdsmi vm release --force %s'",
                                       bdf, h->name, h->uuid, h->name);
        {
                const struct vm_damaged *dmg = vm_damaged_naming(vms.damaged, vms.n_damaged,
                                                                 bdf, pf);

                if (dmg)
                        return bus_error_errno(error, -EUCLEAN,
                                               "VF %s may be held by %s%s, which cannot be "
                                               "read (%s): %s%s%s",
                                               bdf, dmg->uuid[0] ? "the reservation " : "",
                                               dmg->uuid[0] ? dmg->uuid
                                                            : "the \"vms\" section of the "
                                                              "state file",
                                               dmg->problem,
                                               dmg->uuid[0] ? "'amdsmi vm release --force "
                                                            : "repair or remove it in the "
                                                              "state file",
                                               dmg->uuid[0] ? dmg->uuid : "",
                                               dmg->uuid[0] ? "' drops it" : "");
        }
        v->vfs[v->n_vfs++] = (struct vm_vf){ .cap_uw = NO_CAP };
        snprintf(v->vfs[v->n_vfs - 1].bdf, sizeof(v->vfs[0].bdf), "%s", bdf);
        snprintf(v->vfs[v->n_vfs - 1].pf, sizeof(v->vfs[0].pf), "%s", pf);
        return 0;
}

static struct vm_vf *find_vf(struct vm_reservation *v, struct daemon *d, const char *bdf) {
        struct amdsmi_gpu *gpu = NULL;

        if (amdsmi_ctx_find_gpu(d->ctx, bdf, &gpu) < 0)
                return NULL;
        for (size_t i = 0; i < v->n_vfs; i++)
                if (strcmp(v->vfs[i].bdf, amdsmi_gpu_get_bdf(gpu)) == 0)
                        return &v->vfs[i];
        return NULL;
}

struct prepare_options {
        struct daemon *d;
        struct vm_reservation *v;
        bool reconnect, dry;
};

/* PrepareVm's options. */
static int read_prepare_option(sd_bus_message *m, const char *key, void *userdata,
                               sd_bus_error *error) {
        struct prepare_options *o = userdata;
        int r;

        if (strcmp(key, "unmanaged") == 0) {
                _cleanup_strv_free_ char **l = NULL;
                struct vm_vf *f;

                r = sd_bus_message_enter_container(m, 'v', "as");
                if (r < 0)
                        return bus_error_errno(error, -EINVAL, "option %s: not as", key);
                r = sd_bus_message_read_strv(m, &l);
                if (r < 0)
                        return r;
                for (char **p = l; p && *p; p++) {
                        f = find_vf(o->v, o->d, *p);
                        if (!f)
                                return bus_error_errno(error, -EINVAL,
                                                       "unmanaged VF %s is not one of the "
                                                       "domain's VFs",
                                                       *p);
                        f->bind = true;
                }
        } else if (strcmp(key, "power_cap_uw") == 0) {
                r = sd_bus_message_enter_container(m, 'v', "t");
                if (r < 0)
                        return bus_error_errno(error, -EINVAL, "option %s: not t", key);
                r = read_cap(m, "power_cap_uw", &o->v->cap_uw, error);
                if (r < 0)
                        return r;
        } else if (strcmp(key, "vf_power_caps") == 0) {
                r = sd_bus_message_enter_container(m, 'v', "a{st}");
                if (r < 0)
                        return bus_error_errno(error, -EINVAL, "option %s: not a{st}", key);
                r = sd_bus_message_enter_container(m, 'a', "{st}");
                if (r < 0)
                        return r;
                while ((r = sd_bus_message_enter_container(m, 'e', "st")) > 0) {
                        const char *bdf;
                        struct vm_vf *f;

                        r = sd_bus_message_read(m, "s", &bdf);
                        if (r < 0)
                                return r;
                        f = find_vf(o->v, o->d, bdf);
                        if (!f)
                                return bus_error_errno(error, -EINVAL,
                                                       "vf_power_caps: %s is not one of "
                                                       "the domain's VFs",
                                                       bdf);
                        r = read_cap(m, "vf_power_caps", &f->cap_uw, error);
                        if (r < 0)
                                return r;
                        r = sd_bus_message_exit_container(m);
                        if (r < 0)
                                return r;
                }
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        } else if (strcmp(key, "reconnect") == 0 || strcmp(key, "dry_run") == 0) {
                int b;

                r = sd_bus_message_enter_container(m, 'v', "b");
                if (r < 0)
                        return bus_error_errno(error, -EINVAL, "option %s: not b", key);
                r = sd_bus_message_read(m, "b", &b);
                if (r < 0)
                        return r;
                if (key[0] == 'r')
                        o->reconnect = b;
                else
                        o->dry = b;
        } else
                return bus_error_errno(error, -EINVAL,
                                       "unknown option \"%s\" (unmanaged, power_cap_uw, "
                                       "vf_power_caps, reconnect, dry_run)",
                                       key);
        return 0;
}

static int method_prepare_vm(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        _cleanup_strv_free_ char **vfs = NULL;
        _cleanup_free_ struct vm_job *vj = calloc(1, sizeof(*vj));
        struct vm_reservation *v, *prev;
        const char *name, *uuid;
        struct prepare_options opts;
        bool reconnect, dry;
        char new_value[512];
        int r;

        if (!vj)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        v = &vj->v;
        *v = (struct vm_reservation){ .cap_uw = NO_CAP, .created_usec = now_usec(CLOCK_REALTIME) };
        opts = (struct prepare_options){ .d = d, .v = v };
        r = sd_bus_message_read(m, "ss", &name, &uuid);
        if (r < 0)
                return r;
        if (!name_ok(name))
                return bus_error_errno(error, -EINVAL,
                                       "bad domain name (1 to %d bytes, no control characters)",
                                       VM_NAME_MAX - 1);
        if (!vm_uuid_normalize(uuid, v->uuid))
                return bus_error_errno(error, -EINVAL, "\"%s\" is not a UUID", uuid);
        snprintf(v->name, sizeof(v->name), "%s", name);
        r = sd_bus_message_read_strv(m, &vfs);
        if (r < 0)
                return r;
        if (!vfs || !vfs[0])
                return bus_error_errno(error, -EINVAL, "no VF given");
        for (char **p = vfs; *p; p++) {
                r = add_vf(d, v, *p, error);
                if (r < 0)
                        return r;
        }

        r = bus_read_options(m, read_prepare_option, &opts, error);
        if (r < 0)
                return r;
        reconnect = opts.reconnect;
        dry = opts.dry;

        prev = vm_find(v->uuid);
        if (reconnect) {
                /* libvirtd reconnects to a running domain: never a change (a failure here kills
                 * the domain): what is recorded stays, what is missing is recorded as given */
                json_object *doc;

                if (!prev) {
                        r = dry ? 0 : vm_state_put(v);
                        if (r < 0)
                                return bus_error_errno(error, r,
                                                       "cannot record the reservation: %s",
                                                       state_open_error(r, (char[PATH_MAX + 128]){},
                                                                        PATH_MAX + 128));
                        if (!dry && vms_replace(v) < 0)
                                return bus_error_errno(error, -ENOMEM, "out of memory");
                        log_info("domain %s (%s) reconnected: reservation of %zu VF%s recorded",
                                 v->name, v->uuid, v->n_vfs, v->n_vfs == 1 ? "" : "s");
                }
                doc = vm_json(d, prev ? prev : v);
                if (doc)
                        json_set(doc, "operation", json_object_new_string("reconnect"));
                return bus_reply_json(m, doc);
        }
        if (prev) {
                /* a release that never came (amdsmid was down): what amdsmid bound then stays
                 * known, so that this reservation's release gives it back */
                vj->prev = *prev;
                vj->have_prev = true;
                for (size_t i = 0; i < v->n_vfs; i++)
                        for (size_t k = 0; k < prev->n_vfs; k++)
                                if (strcmp(v->vfs[i].bdf, prev->vfs[k].bdf) == 0 &&
                                    prev->vfs[k].bound) {
                                        v->vfs[i].bound = true;
                                        snprintf(v->vfs[i].driver_before,
                                                 sizeof(v->vfs[i].driver_before), "%s",
                                                 prev->vfs[k].driver_before);
                                }
        }
        {
                int n = snprintf(new_value, sizeof(new_value), "%s %s:", v->name, v->uuid);

                for (size_t i = 0; i < v->n_vfs && n > 0 && (size_t) n < sizeof(new_value); i++)
                        n += snprintf(new_value + n, sizeof(new_value) - (size_t) n, " %s%s",
                                      v->vfs[i].bdf, v->vfs[i].bind ? "(bind)" : "");
                if (v->cap_uw != NO_CAP && n > 0 && (size_t) n < sizeof(new_value))
                        snprintf(new_value + n, sizeof(new_value) - (size_t) n, "; cap %" PRIu64 "W",
                                 v->cap_uw / POWER_UW_PER_W);
        }
        return submit(d, m, "PrepareVm", TAKE_PTR(vj), dry ? AMDSMI_BUS_FLAG_DRY_RUN : 0,
                      "vm_prepare", new_value, error);
}

static int method_release_vm(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        struct vm_reservation *prev;
        struct vm_job *vj;
        char canonical[VM_UUID_LEN + 1], value[512];
        const char *uuid;
        int r;

        r = sd_bus_message_read(m, "s", &uuid);
        if (r < 0)
                return r;
        if (!vm_uuid_normalize(uuid, canonical))
                return bus_error_errno(error, -EINVAL, "\"%s\" is not a UUID", uuid);
        prev = vm_find(canonical);
        if (!prev) {
                json_object *doc;
                int k = find_damaged(canonical);

                if (k == -EUCLEAN)
                        return bus_error_errno(error, -EUCLEAN,
                                               "the \"vms\" section of the state file is damaged "
                                               "(not an object): repair or remove it");
                if (k >= 0) {
                        vj = calloc(1, sizeof(*vj));
                        if (!vj)
                                return bus_error_errno(error, -ENOMEM, "out of memory");
                        snprintf(vj->v.uuid, sizeof(vj->v.uuid), "%s", canonical);
                        snprintf(vj->key, sizeof(vj->key), "%s", vms.damaged[k].uuid);
                        vj->drop_damaged = true;
                        snprintf(value, sizeof(value), "damaged %s", canonical);
                        return submit(d, m, "ReleaseVm", vj, 0, "vm_release", value, error);
                }
                doc = json_object_new_object();
                if (!doc)
                        return -ENOMEM;
                json_set(doc, "operation", json_object_new_string("release"));
                json_set(doc, "uuid", json_object_new_string(canonical));
                json_set(doc, "released", json_object_new_boolean(false));
                json_set(doc, "messages", json_object_new_array());
                say(doc, "no reservation of domain %s: nothing to release", canonical);
                return bus_reply_json(m, doc);
        }
        vj = calloc(1, sizeof(*vj));
        if (!vj)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        vj->v = *prev;
        vj->release = true;
        snprintf(value, sizeof(value), "%s %s", prev->name, prev->uuid);
        set_releasing(prev->uuid, true);
        return submit(d, m, "ReleaseVm", vj, 0, "vm_release", value, error);
}

static int method_list_vms(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        json_object *doc, *list;
        struct timespec ts;

        vms_load();
        clock_gettime(CLOCK_REALTIME, &ts);
        doc = document_new("vm", &ts, d->hostname);
        list = json_object_new_array();
        if (!doc || !list) {
                json_object_put(doc);
                json_object_put(list);
                return bus_error_errno(error, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < vms.n; i++)
                json_object_array_add(list, vm_json(d, &vms.v[i]));
        json_set(doc, "vms", list);
        if (vms.n_damaged > 0) {
                json_object *dl = json_object_new_array();

                for (size_t i = 0; dl && i < vms.n_damaged; i++) {
                        json_object *o = json_object_new_object();

                        if (!o)
                                break;
                        json_set(o, "uuid", vms.damaged[i].uuid[0]
                                                    ? json_object_new_string(vms.damaged[i].uuid)
                                                    : NULL);
                        json_set(o, "problem", json_object_new_string(vms.damaged[i].problem));
                        json_object_array_add(dl, o);
                }
                json_set(doc, "damaged", dl);
        }
        {
                const char *uri, *why;
                bool connected;
                json_object *lv = json_object_new_object();

                libvirt_watch_status(&uri, &connected, &why);
                if (lv) {
                        json_set(lv, "uri", uri ? json_object_new_string(uri) : NULL);
                        json_set(lv, "connected", json_object_new_boolean(connected));
                        json_set(lv, "error", why ? json_object_new_string(why) : NULL);
                        json_set(doc, "libvirt", lv);
                }
        }
        json_set(doc, "errors", json_object_new_array());
        return bus_reply_json(m, doc);
}

/* ---- following libvirt (dbus-libvirt-watch.c) ----------------------------------------------- */

static void release_internal(struct daemon *d, const struct vm_reservation *v, const char *why) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        struct vm_job *vj;
        char value[512];
        int r;

        if (releasing(v->uuid))
                return;
        vj = calloc(1, sizeof(*vj));
        if (!vj)
                return;
        log_info("domain %s (%s) %s: releasing its %zu VF%s", v->name, v->uuid, why, v->n_vfs,
                 v->n_vfs == 1 ? "" : "s");
        vj->v = *v;
        vj->release = true;
        snprintf(value, sizeof(value), "%s %s", v->name, v->uuid);
        set_releasing(v->uuid, true);
        r = submit(d, NULL, "ReleaseVm", vj, 0, "vm_release", value, &error);
        if (r < 0) {
                set_releasing(v->uuid, false);
                log_warning("cannot release the VFs of domain %s: %s", v->name,
                            error.message ? error.message : strerror(-r));
        }
}

/* A running domain amdsmid has no reservation of: recorded from its XML (its VFs are bound
 * already, by libvirt or before), its power cap set. */
static void adopt(struct daemon *d, const struct watch_domain *w) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        struct vm_domain *dom = NULL;
        struct vm_job *vj;
        char err[512], value[512];
        int r;

        if (!w->xml || vm_domain_parse(w->xml, strlen(w->xml), &dom, err, sizeof(err)) < 0)
                return;
        vj = calloc(1, sizeof(*vj));
        if (!vj) {
                vm_domain_free(dom);
                return;
        }
        vj->v = (struct vm_reservation){ .cap_uw = dom->cap_uw,
                                         .created_usec = now_usec(CLOCK_REALTIME) };
        snprintf(vj->v.uuid, sizeof(vj->v.uuid), "%s", dom->uuid);
        snprintf(vj->v.name, sizeof(vj->v.name), "%s", dom->name);
        for (size_t i = 0; i < dom->n_hostdevs && vj->v.n_vfs < VM_VFS_MAX; i++) {
                struct amdsmi_gpu *gpu = NULL;
                const char *pf;
                struct vm_vf *f;

                if (amdsmi_ctx_find_gpu(d->ctx, dom->hostdevs[i].bdf, &gpu) < 0 ||
                    amdsmi_gpu_get_role(gpu) != AMDSMI_ROLE_VF ||
                    !(pf = amdsmi_gpu_get_physfn_bdf(gpu)) ||
                    vf_holder(amdsmi_gpu_get_bdf(gpu), NULL) ||
                    vm_damaged_naming(vms.damaged, vms.n_damaged, amdsmi_gpu_get_bdf(gpu),
                                      pf))
                        continue;
                f = &vj->v.vfs[vj->v.n_vfs++];
                *f = (struct vm_vf){ .cap_uw = dom->hostdevs[i].cap_uw };
                snprintf(f->bdf, sizeof(f->bdf), "%s", amdsmi_gpu_get_bdf(gpu));
                snprintf(f->pf, sizeof(f->pf), "%s", pf);
        }
        vm_domain_free(dom);
        if (vj->v.n_vfs == 0) {
                free(vj);
                return;
        }
        log_info("domain %s (%s) runs with %zu VF%s amdsmid had no reservation of: recorded",
                 vj->v.name, vj->v.uuid, vj->v.n_vfs, vj->v.n_vfs == 1 ? "" : "s");
        snprintf(value, sizeof(value), "%s %s: adopted from libvirt", vj->v.name, vj->v.uuid);
        r = submit(d, NULL, "PrepareVm", vj, 0, "vm_prepare", value, &error);
        if (r < 0)
                log_warning("cannot record the VFs of domain %s: %s", w->name,
                            error.message ? error.message : strerror(-r));
}

void vm_reconcile(struct daemon *d, const struct watch_domain *doms, size_t n) {
        vms_load();
        /* reservations of domains that do not run (they stopped while nobody released) */
        for (size_t i = vms.n; i-- > 0;) {
                bool running = false;

                for (size_t k = 0; k < n && !running; k++)
                        running = strcmp(vms.v[i].uuid, doms[k].uuid) == 0;
                if (!running)
                        release_internal(d, &vms.v[i], "is not running");
        }
        /* running domains with AMD VFs amdsmid does not know */
        for (size_t k = 0; k < n; k++)
                if (!vm_find(doms[k].uuid))
                        adopt(d, &doms[k]);
}

void vm_domain_gone(struct daemon *d, const char *uuid, const char *name) {
        const struct vm_reservation *v = vm_find(uuid);

        if (v)
                release_internal(d, v, "stopped");
}

const sd_bus_vtable vm_manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("PrepareVm",
                                SD_BUS_ARGS("s", name, "s", uuid, "as", vfs, "a{sv}", opts),
                                SD_BUS_RESULT("s", json), method_prepare_vm,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReleaseVm", SD_BUS_ARGS("s", uuid), SD_BUS_RESULT("s", json),
                                method_release_vm, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListVms", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
                                method_list_vms, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

void vm_recover(const struct intent *i) {
        /* the reservation is written last, so a cut-off prepare left none: what it bound is
         * remembered by the library (amdsmi sriov release gives it back); a cut-off release
         * left its reservation, which the next ReleaseVm completes */
        log_warning("an interrupted %s (%s) was found: %s", i->change, i->new_value ? i->new_value : "",
                    strcmp(i->change, "vm_prepare") == 0
                            ? "its domain did not start; VFs it bound stay on vfio-pci until "
                              "'amdsmi sriov release'"
                            : "the reservation stays until the next release of that domain or "
                              "'amdsmi vm release --force'");
}
