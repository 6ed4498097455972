/* SPDX-License-Identifier: MIT */
/*
 * amdsmid: the org.amdsmi1.Sriov interface of the GPU objects (ARCHITECTURE §6).
 *
 *   TotalVfs u, NumVfs u       sriov_totalvfs and sriov_numvfs of a PF (0 on VFs and GPUs
 *                              without SR-IOV); EMITS_CHANGE
 *   ListVfs() -> s             the PF's object of `amdsmi sriov --json` (its VFs with their
 *                              drivers, IOMMU groups and the processes holding them: amdsmid
 *                              sees every process, so "in use" is complete)
 *   SetNumVfs(u n, t flags)    the VF count (sriov set); gim PFs: NotSupported with gim's
 *                              explanation, or with AMDSMI_BUS_FLAG_PERSIST gim's vf_num in
 *                              /etc/modprobe.d/amdsmi-gim.conf for gim's next load
 *   SetNumVfsWithTimeout(u n, u timeout_ms, t flags)
 *                              the same, waiting up to timeout_ms for the VFs to appear
 *                              (sriov set --timeout; 0: the library's default)
 *   BindVf(s vf, t flags)      one of this PF's VFs to vfio-pci (sriov bind)
 *   ReleaseVf(s vf, t flags)   and back (sriov release)
 *
 * flags: AMDSMI_BUS_FLAG_DRY_RUN (the reply is the plan; no polkit), AMDSMI_BUS_FLAG_FORCE (a
 * count change although VFs are bound or in use; a release although the VF is in use; a gim
 * count outside gim's layouts), AMDSMI_BUS_FLAG_AUTOPROBE_OFF and AMDSMI_BUS_FLAG_PERSIST
 * (SetNumVfs only; not both). Unknown bits: InvalidArgument. Every method is authorised as
 * org.amdsmi1.sriov.configure. Replies are the element of "gpus" that `amdsmi sriov set /
 * bind / release --json` prints for the PF or VF (sriov-json.c builds both), "messages"
 * included; a failure is the D-Bus error of its errno with the lines the CLI prints on
 * stderr. A written gim file that differs from what gim runs with is a success (the reply's
 * "persist" says what was written, its messages that it applies at gim's next load); the CLI
 * exits 8 for it, as in-process.
 *
 * Arguments are checked before anything is touched: a VF given to SetNumVfs, or BindVf and
 * ReleaseVf given a PF, a VF of another PF or a malformed address, are InvalidArgument; an
 * address with no GPU function NotFound; a guest's VF NotSupported.
 *
 * Jobs: a count change holds the PF; --persist every GPU under gim (the file covers them all;
 * the history records the vf_num lists for each, change "gim_vf_num"); bind and release the
 * VF's PF (change "bind_vf" / "release_vf", values "<VF> <driver>"). After each change the
 * objects are rescanned before the reply, so the VF objects have come or gone
 * (InterfacesAdded / InterfacesRemoved) and NumVfs has followed when the caller hears back.
 * A PF's GPU index never changes: VFs are numbered after every PF.
 *
 * amdsmid never changes a VF count on its own: num_vfs of amdsmid.conf is compared at start,
 * re-plug and reload, and a difference is logged (notice) with the command to run.
 *
 * Recovery (intent records of a crash): the count, gim's file and a release are read back and
 * logged as completed or not applied. A bind cut off between driver_override and the probe
 * leaves the VF with driver_override "vfio-pci" and no driver; it is rolled back (the override
 * cleared, as a failed bind does; the VF stays unbound, which host VFs are before a bind)
 * rather than finished: the caller was told it failed, and a VF that goes to vfio-pci at its
 * next probe is a state nobody asked for.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "amdsmid-conf.h"
#include "amdsmid.h"
#include "exit-codes.h"
#include "gim-modprobe.h"
#include "change.h"
#include "history.h"
#include "select.h"
#include "documents.h"
#include "sriov-json.h"

#define SRIOV_ACTION "org.amdsmi1.sriov.configure"
#define RECOVER_LOCK_WAIT_MS 10000

/* What a job changes. */
struct sriov_job {
        char pf[16];
        char vf[16]; /* BindVf, ReleaseVf */
        uint32_t n;  /* SetNumVfs */
        uint32_t timeout_ms;
};

/* ---- properties ------------------------------------------------------------------------- */

static int property_total_vfs(sd_bus *bus, const char *path, const char *interface,
                              const char *property, sd_bus_message *reply, void *userdata,
                              sd_bus_error *error) {
        struct dgpu *g = userdata;

        return sd_bus_message_append(reply, "u", g->total_vfs);
}

static int property_num_vfs(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error) {
        struct dgpu *g = userdata;

        return sd_bus_message_append(reply, "u", g->num_vfs);
}

/* ---- helpers ---------------------------------------------------------------------------- */

static bool is_pf_role(enum amdsmi_role role) {
        return role != AMDSMI_ROLE_VF && !sriov_role_is_guest(role);
}

/* The VFs of @pf in the daemon's enumeration. */
static unsigned enumerated_vfs(struct daemon *d, const char *pf) {
        size_t n = amdsmi_ctx_get_gpu_count(d->ctx);
        unsigned k = 0;

        for (size_t i = 0; i < n; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(d->ctx, i);
                const char *p = gpu ? amdsmi_gpu_get_physfn_bdf(gpu) : NULL;

                if (p && strcmp(p, pf) == 0)
                        k++;
        }
        return k;
}

/* "0000:05:02.0" or "05:02.0", any case, into the kernel's spelling; nothing else. */
static int parse_vf(const char *arg, char ret[16]) {
        struct selector s;

        if (strlen(arg) > 64)
                return -EINVAL;
        if (pci_bdf_valid(arg)) {
                snprintf(ret, 16, "%s", arg);
                return 0;
        }
        if (selector_parse(arg, &s) == 0 && s.kind == SELECTOR_BDF && pci_bdf_valid(s.bdf) &&
            strlen(s.bdf) < 16) {
                snprintf(ret, 16, "%s", s.bdf);
                return 0;
        }
        return -EINVAL;
}

/* The object's GPU as a PF of this host: NotFound when it went, InvalidArgument for a VF,
 * NotSupported for a guest's VF. */
static int check_pf(struct dgpu *g, const char *method, sd_bus_error *error,
                    struct amdsmi_gpu **ret) {
        struct amdsmi_gpu *gpu = dgpu_handle(g);
        enum amdsmi_role role;

        if (!gpu)
                return bus_error_errno(error, -ENODEV, "GPU %s is gone", g->bdf);
        role = amdsmi_gpu_get_role(gpu);
        if (role == AMDSMI_ROLE_VF) {
                const char *pf = amdsmi_gpu_get_physfn_bdf(gpu);
                struct dgpu *p = pf ? manager_find_gpu(g->d, pf) : NULL;

                return bus_error_errno(error, -EINVAL,
                                       "GPU %u (%s) is a VF: %s() is a method of its PF, GPU "
                                       "%d (%s)",
                                       g->index, g->bdf, method, p ? (int) p->index : -1,
                                       pf ? pf : "?");
        }
        if (sriov_role_is_guest(role))
                return bus_error_errno(error, -EOPNOTSUPP,
                                       "GPU %u (%s) is a VF inside a guest (%s): VFs are "
                                       "configured on the host",
                                       g->index, g->bdf, amdsmi_role_to_string(role));
        *ret = gpu;
        return 0;
}

static int check_flags(uint64_t flags, uint64_t allowed, const char *method, sd_bus_error *error) {
        if (flags & ~allowed)
                return bus_error_errno(error, -EINVAL, "%s(): unknown flags 0x%" PRIx64, method,
                                       flags & ~allowed);
        return 0;
}

/* j->message: the error and the lines after it, or the first line of the reply's messages
 * (and the warnings), one line. Takes @notes. */
static void set_message(struct job *j, struct report *report, int r, char *notes) {
        json_object *lines = NULL;
        const char *line = NULL;
        size_t len = notes ? strlen(notes) : 0;

        while (len > 0 && notes[len - 1] == '\n')
                notes[--len] = '\0';
        free(j->message);
        j->message = NULL;
        if (r < 0) {
                if (asprintf(&j->message, "%s%s%s",
                             report->error_message ? report->error_message : strerror(-r), len ? "\n" : "",
                             len ? notes : "") < 0)
                        j->message = NULL;
        } else {
                if (j->reply && json_object_object_get_ex(j->reply, "messages", &lines) &&
                    json_object_array_length(lines) > 0)
                        line = json_object_get_string(json_object_array_get_idx(lines, 0));
                for (char *p = notes; p && *p; p++)
                        if (*p == '\n')
                                *p = ';';
                if ((line || len) && asprintf(&j->message, "%s%s%s", line ? line : "",
                                              line && len ? "; " : "", len ? notes : "") < 0)
                        j->message = NULL;
        }
        free(notes);
}

static char *notes_close(FILE *f, char **buf) {
        if (f && fclose(f) != 0) {
                free(*buf);
                *buf = NULL;
        }
        return *buf;
}

/* ---- jobs (worker threads: only the job and @ctx) --------------------------------------- */

static int run_set(struct job *j, struct amdsmi_ctx *ctx) {
        struct sriov_job *sj = j->userdata;
        struct report report = {
                .command = "sriov set",
                .keep_field_errors = true,
                .dry_run = j->flags & AMDSMI_BUS_FLAG_DRY_RUN,
        };
        struct gpu_set set = {};
        struct sriov_run s = {
                .report = &report,
                .set = &set,
                .ch = { .num_vfs = sj->n,
                        .force = j->flags & AMDSMI_BUS_FLAG_FORCE,
                        .autoprobe_off = j->flags & AMDSMI_BUS_FLAG_AUTOPROBE_OFF,
                        .timeout_ms = sj->timeout_ms },
                .daemon = true,
        };
        bool persist = j->flags & AMDSMI_BUS_FLAG_PERSIST;
        struct sriov_set_target t = {};
        struct amdsmi_gpu *gpu = NULL;
        char *notes = NULL, *old_list = NULL, *new_list = NULL;
        size_t notes_size = 0;
        enum amdsmi_role role;
        int r, result = 0;

        s.notes = open_memstream(&notes, &notes_size);
        if (!s.notes)
                return -ENOMEM;
        r = gpu_set_attach(&set, ctx, sj->pf);
        if (r >= 0)
                r = amdsmi_ctx_find_gpu(ctx, sj->pf, &gpu);
        if (r < 0) {
                r = report_fail(&report, -ENODEV, "GPU %s went away", sj->pf);
                goto finish;
        }
        t.index = (size_t) sriov_index_of_bdf(&set, sj->pf);
        role = amdsmi_gpu_get_role(gpu);
        if (!is_pf_role(role)) {
                r = report_fail(&report, role == AMDSMI_ROLE_VF ? -EINVAL : -EOPNOTSUPP,
                             "GPU %zu (%s) is %s now", t.index, sj->pf,
                             role == AMDSMI_ROLE_VF ? "a VF" : "a VF inside a guest");
                goto finish;
        }
        t.gpu = amdsmi_gpu_ref(gpu);
        r = sriov_read_info(gpu, &t.info);
        if (r < 0) {
                r = report_fail(&report, r, "GPU %zu (%s): cannot read its SR-IOV state: %s", t.index,
                             sj->pf, strerror(-r));
                goto finish;
        }
        if (persist) {
                r = sriov_check_persist(&s, &t);
                if (r < 0)
                        goto finish;
        }
        t.entry = sriov_set_entry_new(&s, &t);
        if (!t.entry) {
                r = -ENOMEM;
                goto finish;
        }
        if (persist) {
                r = sriov_persist_run(&s, &t, 1, &result, &old_list, &new_list);
                json_set(t.entry, "result",
                         report_errno_json(r < 0 && r != -ERELOAD_REQUIRED ? r : 0));
                /* written: a success that waits for gim's next load */
                if (r == -ERELOAD_REQUIRED)
                        r = 0;
                if (new_list && !report.dry_run) {
                        free(j->old_value);
                        free(j->new_value);
                        j->old_value = TAKE_PTR(old_list);
                        j->new_value = TAKE_PTR(new_list);
                }
        } else {
                r = sriov_set_one(&s, &t, &result);
                json_set(t.entry, "result", report_errno_json(r));
                if (r == 0 && !report.dry_run)
                        sriov_set_refresh_vfs(&s, &t, 1);
        }
        j->reply = json_object_get(t.entry);

finish:
        set_message(j, &report, r, notes_close(s.notes, &notes));
        json_object_put(t.entry);
        amdsmi_gpu_unref(t.gpu);
        free(t.info);
        free(old_list);
        free(new_list);
        gpu_set_clear(&set);
        report_clear(&report);
        return r;
}

static int run_vf(struct job *j, struct amdsmi_ctx *ctx, enum sriov_vf_op op) {
        struct sriov_job *sj = j->userdata;
        struct report report = {
                .command = op == SRIOV_VF_BIND ? "sriov bind" : "sriov release",
                .keep_field_errors = true,
                .dry_run = j->flags & AMDSMI_BUS_FLAG_DRY_RUN,
        };
        struct gpu_set set = {};
        struct sriov_run s = {
                .report = &report,
                .set = &set,
                .ch = { .force = j->flags & AMDSMI_BUS_FLAG_FORCE },
                .daemon = true,
        };
        struct amdsmi_vf_bind_report rep = { .size = sizeof(rep) };
        struct amdsmi_gpu *vf = NULL;
        json_object *e = NULL;
        char *notes = NULL;
        size_t notes_size = 0;
        const char *pf;
        int r, result = 0;

        s.notes = open_memstream(&notes, &notes_size);
        if (!s.notes)
                return -ENOMEM;
        r = gpu_set_attach(&set, ctx, NULL);
        if (r >= 0)
                r = amdsmi_ctx_find_gpu(ctx, sj->vf, &vf);
        if (r < 0) {
                r = report_fail(&report, -ENODEV, "VF %s went away", sj->vf);
                goto finish;
        }
        pf = amdsmi_gpu_get_physfn_bdf(vf);
        if (amdsmi_gpu_get_role(vf) != AMDSMI_ROLE_VF || !pf || strcmp(pf, sj->pf) != 0) {
                r = report_fail(&report, -EINVAL, "%s is no VF of %s any more", sj->vf, sj->pf);
                goto finish;
        }
        r = sriov_vf_change(&s, op, vf, sriov_index_of_bdf(&set, sj->vf), sj->pf, &result, &e, &rep);
        if (e && !report.dry_run) {
                char *old_value = NULL, *new_value = NULL;

                if (asprintf(&old_value, "%s %s", sj->vf, sriov_or_none(rep.driver_before)) >= 0 &&
                    asprintf(&new_value, "%s %s", sj->vf, sriov_or_none(rep.driver_after)) >= 0) {
                        free(j->old_value);
                        free(j->new_value);
                        j->old_value = TAKE_PTR(old_value);
                        j->new_value = TAKE_PTR(new_value);
                }
                free(old_value);
                free(new_value);
        }
        j->reply = e;

finish:
        set_message(j, &report, r, notes_close(s.notes, &notes));
        gpu_set_clear(&set);
        report_clear(&report);
        return r;
}

static int run_bind(struct job *j, struct amdsmi_ctx *ctx) {
        return run_vf(j, ctx, SRIOV_VF_BIND);
}

static int run_release(struct job *j, struct amdsmi_ctx *ctx) {
        return run_vf(j, ctx, SRIOV_VF_RELEASE);
}


static int submit(struct dgpu *g, sd_bus_message *m, const char *name, const char *const *bdfs,
                  size_t n_bdfs, uint64_t flags, struct sriov_job *sj,
                  int (*run)(struct job *j, struct amdsmi_ctx *ctx), const char *change,
                  const char *old_value, const char *new_value, sd_bus_error *error) {
        struct job *j = job_new(g->d, m, name, bdfs, n_bdfs, flags);
        int r;

        if (!j) {
                free(sj);
                return bus_error_errno(error, -ENOMEM, "out of memory");
        }
        j->run = run;
        j->userdata = sj;
        j->free_userdata = free;
        if (job_set_change(j, change, old_value, new_value) < 0) {
                job_free(j);
                return bus_error_errno(error, -ENOMEM, "out of memory");
        }
        r = job_authorise_and_submit(j, SRIOV_ACTION);
        if (r < 0)
                return bus_error_errno(error, r, "cannot queue %s(): %s", name, strerror(-r));
        return 1;
}

/* ---- methods ---------------------------------------------------------------------------- */

static int method_list_vfs(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        struct report report = { .command = "sriov", .keep_field_errors = true };
        struct gpu_set set = {};
        struct amdsmi_gpu *gpu = NULL;
        json_object *o;
        int r;

        r = check_pf(g, "ListVfs", error, &gpu);
        if (r < 0)
                return r;
        r = gpu_set_attach(&set, g->d->ctx, NULL);
        if (r < 0)
                return bus_error_errno(error, r, "out of memory");
        o = sriov_pf_state_json(&report, &set, g->index, gpu);
        gpu_set_clear(&set);
        report_clear(&report); /* problems with single values: none for root, else null values */
        if (!o)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        return bus_reply_json(m, o);
}

static int set_num_vfs(sd_bus_message *m, struct dgpu *g, const char *name, uint32_t n,
                       uint32_t timeout_ms, uint64_t flags, sd_bus_error *error) {
        struct daemon *d = g->d;
        _cleanup_free_ const char **bdfs = NULL;
        struct amdsmi_gpu *gpu = NULL;
        struct sriov_job *sj;
        char old_value[16], new_value[16];
        size_t n_bdfs = 0;
        int r;

        r = check_flags(flags,
                        AMDSMI_BUS_FLAGS_ALL | AMDSMI_BUS_FLAG_PERSIST |
                                AMDSMI_BUS_FLAG_AUTOPROBE_OFF,
                        name, error);
        if (r < 0)
                return r;
        if (timeout_ms > AMDSMI_BUS_TIMEOUT_MS_MAX)
                return bus_error_errno(error, -EINVAL,
                                       "timeout %" PRIu32 " ms is above %u ms (0: the default)",
                                       timeout_ms, AMDSMI_BUS_TIMEOUT_MS_MAX);
        if (n > UINT16_MAX)
                return bus_error_errno(error, -ERANGE,
                                       "%" PRIu32 " VFs is out of range: a PF has at most %u", n,
                                       (unsigned) UINT16_MAX);
        if ((flags & AMDSMI_BUS_FLAG_PERSIST) && (flags & AMDSMI_BUS_FLAG_AUTOPROBE_OFF))
                return bus_error_errno(error, -EINVAL,
                                       "autoprobe-off is for the sysfs path (sriov_numvfs), not "
                                       "for persist");
        r = check_pf(g, name, error, &gpu);
        if (r < 0)
                return r;
        {
                const char *domain, *vf;

                /* never under a running domain's feet, FORCE or not: its release frees it */
                r = vm_pf_holder(g->bdf, &domain, &vf);
                if (r == -EUCLEAN && !domain)
                        return bus_error_errno(error, -EUCLEAN,
                                               "the \"vms\" section of the state file cannot "
                                               "be read (%s): the VF count of GPU %u (%s) is "
                                               "not changed until it is repaired or removed "
                                               "(the VFs it held are unknown)",
                                               vf, g->index, g->bdf);
                if (r == -EUCLEAN)
                        return bus_error_errno(error, -EUCLEAN,
                                               "the VM reservation %s in the state file cannot be "
                                               "read (%s) and may hold a VF of GPU %u (%s): the "
                                               "VF count is not changed while it is there; "
                                               "'amdsmi vm release --force %s' drops it",
                                               domain, vf, g->index, g->bdf, domain);
                if (r > 0)
                        return bus_error_errno(error, -EBUSY,
                                               "VF %s of GPU %u (%s) is assigned to domain %s: "
                                               "the VF count changes once no domain holds a VF "
                                               "(see 'amdsmi vm')",
                                               vf, g->index, g->bdf, domain);
        }

        bdfs = calloc(d->n_gpus + 1, sizeof(*bdfs));
        sj = calloc(1, sizeof(*sj));
        if (!bdfs || !sj) {
                free(sj);
                return bus_error_errno(error, -ENOMEM, "out of memory");
        }
        bdfs[n_bdfs++] = g->bdf;
        /* gim's file covers every GPU under gim: the change holds them all */
        for (size_t i = 0; (flags & AMDSMI_BUS_FLAG_PERSIST) && i < d->n_gpus; i++) {
                struct dgpu *o = d->gpus[i];

                if (o != g && o->present && strcmp(o->driver, "gim") == 0 &&
                    strcmp(o->role, "vf") != 0 && strncmp(o->role, "vf-guest", 8) != 0)
                        bdfs[n_bdfs++] = o->bdf;
        }
        snprintf(sj->pf, sizeof(sj->pf), "%s", g->bdf);
        sj->n = n;
        sj->timeout_ms = timeout_ms;
        snprintf(old_value, sizeof(old_value), "%" PRIu32, g->num_vfs);
        snprintf(new_value, sizeof(new_value), "%" PRIu32, n);
        if (flags & AMDSMI_BUS_FLAG_PERSIST)
                /* the vf_num lists before and after replace these when the file is built */
                return submit(g, m, name, bdfs, n_bdfs, flags, sj, run_set, "gim_vf_num", NULL,
                              new_value, error);
        return submit(g, m, name, bdfs, n_bdfs, flags, sj, run_set, "num_vfs", old_value,
                      new_value, error);
}

static int method_set_num_vfs(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint64_t flags;
        uint32_t n;
        int r;

        r = sd_bus_message_read(m, "ut", &n, &flags);
        if (r < 0)
                return r;
        return set_num_vfs(m, userdata, "SetNumVfs", n, 0, flags, error);
}

static int method_set_num_vfs_with_timeout(sd_bus_message *m, void *userdata,
                                           sd_bus_error *error) {
        uint32_t n, timeout_ms;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "uut", &n, &timeout_ms, &flags);
        if (r < 0)
                return r;
        return set_num_vfs(m, userdata, "SetNumVfsWithTimeout", n, timeout_ms, flags, error);
}

static int method_vf(sd_bus_message *m, struct dgpu *g, sd_bus_error *error, enum sriov_vf_op op) {
        const char *method = op == SRIOV_VF_BIND ? "BindVf" : "ReleaseVf";
        struct amdsmi_gpu *gpu = NULL, *vf = NULL;
        struct sriov_job *sj;
        const char *arg, *pf, *driver;
        char bdf[16], old_value[64], new_value[64];
        const char *bdfs[1];
        enum amdsmi_role role;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "st", &arg, &flags);
        if (r < 0)
                return r;
        r = check_flags(flags, AMDSMI_BUS_FLAGS_ALL, method, error);
        if (r < 0)
                return r;
        if (parse_vf(arg, bdf) < 0)
                return bus_error_errno(error, -EINVAL,
                                       "invalid VF address '%.64s%s': expected a PCI address such "
                                       "as 0000:05:02.0 or 05:02.0",
                                       arg, strlen(arg) > 64 ? "..." : "");
        r = check_pf(g, method, error, &gpu);
        if (r < 0)
                return r;
        if (amdsmi_ctx_find_gpu(g->d->ctx, bdf, &vf) < 0)
                return bus_error_errno(error, -ENODEV,
                                       "no AMD GPU function at %s (no such PCI device, or not an "
                                       "AMD GPU)",
                                       bdf);
        role = amdsmi_gpu_get_role(vf);
        if (sriov_role_is_guest(role))
                return bus_error_errno(error, -EOPNOTSUPP,
                                       "%s is a VF inside a guest (%s): VFs are bound to "
                                       "vfio-pci on the host",
                                       bdf, amdsmi_role_to_string(role));
        pf = amdsmi_gpu_get_physfn_bdf(vf);
        if (role != AMDSMI_ROLE_VF || !pf)
                return bus_error_errno(error, -EINVAL,
                                       "%s (GPU %u, %s) is a physical function: %s() takes one "
                                       "of the VFs of %s",
                                       bdf, amdsmi_gpu_get_index(vf), amdsmi_role_to_string(role),
                                       method, g->bdf);
        if (strcmp(pf, g->bdf) != 0)
                return bus_error_errno(error, -EINVAL,
                                       "%s is a VF of %s, not of %s: call %s() on its PF's "
                                       "object",
                                       bdf, pf, g->bdf, method);

        sj = calloc(1, sizeof(*sj));
        if (!sj)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        snprintf(sj->pf, sizeof(sj->pf), "%s", g->bdf);
        snprintf(sj->vf, sizeof(sj->vf), "%s", bdf);
        driver = amdsmi_gpu_get_driver_name(vf);
        snprintf(old_value, sizeof(old_value), "%s %s", bdf, sriov_or_none(driver));
        snprintf(new_value, sizeof(new_value), "%s %s", bdf,
                 op == SRIOV_VF_BIND ? "vfio-pci" : "released");
        bdfs[0] = g->bdf;
        return submit(g, m, method, bdfs, 1, flags, sj,
                      op == SRIOV_VF_BIND ? run_bind : run_release,
                      op == SRIOV_VF_BIND ? "bind_vf" : "release_vf", old_value, new_value, error);
}

static int method_bind_vf(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return method_vf(m, userdata, error, SRIOV_VF_BIND);
}

static int method_release_vf(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return method_vf(m, userdata, error, SRIOV_VF_RELEASE);
}

static const sd_bus_vtable sriov_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("TotalVfs", "u", property_total_vfs, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NumVfs", "u", property_num_vfs, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("ListVfs", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
                                method_list_vfs, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetNumVfsWithTimeout",
                                SD_BUS_ARGS("u", n, "u", timeout_ms, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_num_vfs_with_timeout,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetNumVfs", SD_BUS_ARGS("u", n, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_num_vfs,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("BindVf", SD_BUS_ARGS("s", bdf, "t", flags),
                                SD_BUS_RESULT("s", json), method_bind_vf,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReleaseVf", SD_BUS_ARGS("s", bdf, "t", flags),
                                SD_BUS_RESULT("s", json), method_release_vf,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* ---- the framework's hooks -------------------------------------------------------------- */

/* Cheap on every tick: the SR-IOV files are read again only when the PF's VFs in the
 * enumeration or its driver changed (amdsmi_gpu_read_sriov() looks at every VF and scans /proc
 * for VFIO users). */
static char **sriov_refresh(struct dgpu *g, struct amdsmi_gpu *gpu) {
        _cleanup_free_ struct amdsmi_sriov_info *info = NULL;
        char **changed = NULL;
        uint32_t total = 0, num = 0;
        const char *config = "none";
        unsigned seen = 0;

        /* a change under way shows its result when it ends, not its steps (0 written
         * first); the job refreshes the GPU before it answers */
        if (g->busy > 0)
                return NULL;
        if (is_pf_role(amdsmi_gpu_get_role(gpu))) {
                seen = enumerated_vfs(g->d, g->bdf);
                if (g->sriov_read && seen == g->sriov_seen_vfs && g->sriov_seen_driver == g->driver)
                        return NULL;
                g->sriov_read = true;
                g->sriov_seen_vfs = seen;
                g->sriov_seen_driver = g->driver;
                if (sriov_read_info(gpu, &info) < 0) {
                        log_gpu(LOG_DEBUG, g->bdf, "cannot read its SR-IOV state");
                        return NULL;
                }
                total = info->capable ? info->total_vfs : 0;
                num = info->capable ? info->num_vfs : 0;
                config = amdsmi_vf_config_to_string(info->config);
        }
        g->vf_config = config;
        if (g->total_vfs != total) {
                g->total_vfs = total;
                (void) strv_extend(&changed, "TotalVfs");
        }
        if (g->num_vfs != num) {
                g->num_vfs = num;
                (void) strv_extend(&changed, "NumVfs");
        }
        return changed;
}

/* amdsmid never changes the VF count on its own (a change tears down every VF): it says what
 * differs and what the admin runs. */
static void sriov_apply_desired(struct dgpu *g, const struct config_gpu *want,
                                const struct config_gpu *old) {
        if (!want->num_vfs_set)
                return;
        if (old && old->num_vfs_set && old->num_vfs == want->num_vfs)
                return;
        if (strcmp(g->role, "vf") == 0 || strncmp(g->role, "vf-guest", 8) == 0)
                return; /* [gpu] applies to every GPU; VFs have no VFs */
        if (!g->vf_config || strcmp(g->vf_config, "none") == 0) {
                log_full(LOG_NOTICE, g->bdf, "num_vfs",
                         "%u VFs desired, but GPU %u has no SR-IOV capability", want->num_vfs,
                         g->index);
                return;
        }
        if (g->num_vfs == want->num_vfs) {
                log_full(LOG_DEBUG, g->bdf, "num_vfs", "%u VFs desired and present", want->num_vfs);
                return;
        }
        if (strcmp(g->vf_config, "gim-param") == 0)
                log_full(LOG_NOTICE, g->bdf, "num_vfs",
                         "%u VFs desired, %u present: gim sets the VF count when it loads: "
                         "amdsmi sriov set -g %s --num-vfs %u --persist",
                         want->num_vfs, g->num_vfs, g->bdf, want->num_vfs);
        else
                log_full(LOG_NOTICE, g->bdf, "num_vfs",
                         "%u VFs desired, %u present: amdsmi sriov set -g %s --num-vfs %u",
                         want->num_vfs, g->num_vfs, g->bdf, want->num_vfs);
}

static void recover_num_vfs(struct daemon *d, const struct intent *i) {
        _cleanup_free_ struct amdsmi_sriov_info *info = NULL;
        struct amdsmi_gpu *gpu = NULL;
        const char *want = i->new_value ? i->new_value : "?";
        char now[16];
        int r;

        r = amdsmi_ctx_find_gpu(d->ctx, i->gpu, &gpu);
        if (r >= 0)
                r = sriov_read_info(gpu, &info);
        if (r < 0) {
                log_full(LOG_WARNING, i->gpu, i->change,
                         "the interrupted change of the VF count to %s cannot be checked: %s", want,
                         strerror(-r));
                return;
        }
        snprintf(now, sizeof(now), "%u", info->num_vfs);
        if (strcmp(now, want) == 0)
                log_full(LOG_NOTICE, i->gpu, i->change,
                         "the interrupted change of the VF count to %s completed", want);
        else
                log_full(LOG_WARNING, i->gpu, i->change,
                         "the interrupted change of the VF count to %s was not applied: %s VFs "
                         "present (amdsmid does not change it on its own: amdsmi sriov set -g "
                         "%s --num-vfs %s)",
                         want, now, i->gpu, want);
}

static void recover_gim(const struct intent *i) {
        struct gim_modprobe_scan scan = {};
        int pending = -1, r;

        r = gim_modprobe_scan(NULL, &scan, NULL);
        for (size_t k = 0; r >= 0 && k < scan.n_pending; k++)
                if (strcmp(scan.pending[k].bdf, i->gpu) == 0)
                        pending = (int) scan.pending[k].vf_num;
        gim_modprobe_scan_done(&scan);
        if (r < 0)
                log_full(LOG_WARNING, i->gpu, i->change,
                         "the interrupted write of gim's vf_num cannot be checked: %s",
                         strerror(-r));
        else if (pending >= 0 && i->new_value && atoi(i->new_value) == pending)
                log_full(LOG_NOTICE, i->gpu, i->change,
                         "the interrupted write of gim's vf_num (%s) completed: %s holds it",
                         i->new_value, GIM_MODPROBE_FILE);
        else
                log_full(LOG_WARNING, i->gpu, i->change,
                         "the interrupted write of gim's vf_num (%s) was not applied: %s does "
                         "not hold it",
                         i->new_value ? i->new_value : "?", GIM_MODPROBE_FILE);
}

/* A bind cut off after driver_override: rolled back, the override cleared. */
static void rollback_bind(const struct intent *i, struct amdsmi_gpu *vf, const char *bdf) {
        struct amdsmi_vf_bind_report rep = { .size = sizeof(rep) };
        struct gpu_lock lock = GPU_LOCK_INIT;
        const char *pf = i->gpu;
        char message[512];
        int r;

        r = change_lock(&(struct change_lock){ .bdfs = &pf,
                                               .n = 1,
                                               .wait_ms = RECOVER_LOCK_WAIT_MS },
                        &lock, rep.message, sizeof(rep.message));
        if (r >= 0) {
                /* not on vfio-pci: the release clears the leftover override, nothing else */
                r = amdsmi_vf_release(vf, 0, &rep);
                change_unlock(&lock, 1);
        }
        if (r >= 0)
                snprintf(message, sizeof(message),
                         "the interrupted bind of %s to vfio-pci was rolled back: its "
                         "driver_override \"vfio-pci\" is cleared, and it stays without a driver",
                         bdf);
        else
                snprintf(message, sizeof(message),
                         "the interrupted bind of %s to vfio-pci could not be rolled back (%s): "
                         "it has driver_override \"vfio-pci\" and no driver; amdsmi sriov "
                         "release %s clears it",
                         bdf, rep.message[0] ? rep.message : strerror(-r), bdf);
        /* the recovery's history record is written by amdsmid's recovery, with this line */
        log_full(r >= 0 ? LOG_NOTICE : LOG_WARNING, i->gpu, i->change, "%s", message);
}

static void recover_vf(struct daemon *d, const struct intent *i, bool bind) {
        _cleanup_free_ struct amdsmi_sriov_info *info = NULL;
        const struct amdsmi_vf_info *v = NULL;
        struct amdsmi_gpu *pf = NULL, *vf = NULL;
        const char *value = i->new_value ? i->new_value : i->old_value;
        char bdf[16] = "";
        int r;

        if (value)
                snprintf(bdf, sizeof(bdf), "%.*s", (int) strcspn(value, " "), value);
        if (!pci_bdf_valid(bdf)) {
                log_full(LOG_WARNING, i->gpu, i->change,
                         "the interrupted %s names no VF (\"%s\"): nothing to check", i->change,
                         value ? value : "");
                return;
        }
        r = amdsmi_ctx_find_gpu(d->ctx, i->gpu, &pf);
        if (r >= 0)
                r = sriov_read_info(pf, &info);
        for (unsigned k = 0; r >= 0 && k < info->n_vfs && k < AMDSMI_SRIOV_MAX_VFS; k++)
                if (strcmp(info->vfs[k].bdf, bdf) == 0)
                        v = &info->vfs[k];
        if (r < 0 || !v) {
                log_full(LOG_WARNING, i->gpu, i->change,
                         "the interrupted %s of %s cannot be checked: %s",
                         bind ? "bind" : "release", bdf, r < 0 ? strerror(-r) : "the VF is gone");
                return;
        }
        if (bind && strcmp(v->driver, "vfio-pci") == 0)
                log_full(LOG_NOTICE, i->gpu, i->change,
                         "the interrupted bind of %s to vfio-pci completed", bdf);
        else if (bind && !v->driver[0] && strcmp(v->driver_override, "vfio-pci") == 0 &&
                 amdsmi_ctx_find_gpu(d->ctx, bdf, &vf) >= 0)
                rollback_bind(i, vf, bdf);
        else if (bind)
                log_full(LOG_NOTICE, i->gpu, i->change,
                         "the interrupted bind of %s to vfio-pci was not applied (driver %s)", bdf,
                         sriov_or_none(v->driver));
        else if (strcmp(v->driver, "vfio-pci") != 0)
                log_full(LOG_NOTICE, i->gpu, i->change,
                         "the interrupted release of %s completed (driver %s)", bdf,
                         sriov_or_none(v->driver));
        else
                log_full(LOG_NOTICE, i->gpu, i->change,
                         "the interrupted release of %s was not applied: it is bound to "
                         "vfio-pci",
                         bdf);
}

static int sriov_recover(struct daemon *d, const struct intent *i) {
        if (strcmp(i->change, "num_vfs") == 0)
                recover_num_vfs(d, i);
        else if (strcmp(i->change, "gim_vf_num") == 0)
                recover_gim(i);
        else if (strcmp(i->change, "bind_vf") == 0)
                recover_vf(d, i, true);
        else if (strcmp(i->change, "release_vf") == 0)
                recover_vf(d, i, false);
        else if (strcmp(i->change, "vm_prepare") == 0 || strcmp(i->change, "vm_release") == 0)
                vm_recover(i);
        else
                return 0;
        return 1;
}

int sriov_daemon_document(struct daemon *d, const struct doc_query *q, json_object **ret) {
        return sriov_document_gpus(q->report, q->set, true, ret);
}

const struct slice sriov_slice = {
        .interface = AMDSMI_BUS_IFACE_SRIOV,
        .vtable = sriov_vtable,
        .refresh = sriov_refresh,
        .apply_desired = sriov_apply_desired,
        .recover = sriov_recover,
        .manager_vtable = vm_manager_vtable,
        .document_gpus = sriov_daemon_document,
};
