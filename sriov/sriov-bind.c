/* SPDX-License-Identifier: MIT */
/*
 * A host VF to vfio-pci and back (spec virtualization §2.4, amdgpu-sysfs §7.1).
 *
 * Bind, in libvirt's race-free order: driver_override "vfio-pci" first (no other driver can
 * take the VF from then on), then the current driver's unbind, then the VF's address to
 * bus/pci/drivers_probe, and the driver link read back. The driver the VF had ("" for none)
 * is remembered under the runtime directory before anything is written. If vfio-pci does not
 * take the VF, the override is cleared and the VF is bound to its old driver again.
 *
 * Release: driver_override cleared, vfio-pci unbound, and the remembered driver bound again
 * through its own bind file. Nothing else probes the VF: a drivers_probe would hand it straight
 * back to vfio-pci wherever vfio-pci.ids (or new_id) lists the VF's ID, as on gim hosts, and
 * host VFs have no other driver; so a VF that had none before stays unbound. A VF not on
 * vfio-pci is left as it is, except that a stale "vfio-pci" override is cleared (it would take
 * the VF to vfio-pci at its next probe, the opposite of a release).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "sriov-private.h"
#include "sysfs.h"

#define VFIO_PCI "vfio-pci"
#define KNOWN_FLAGS (AMDSMI_SRIOV_DRY_RUN | AMDSMI_SRIOV_FORCE)

_printf_(2, 3) static void message(struct amdsmi_vf_bind_report *rep, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(rep->message, sizeof(rep->message), fmt, ap);
        va_end(ap);
}

_printf_(2, 3) static void message_append(struct amdsmi_vf_bind_report *rep, const char *fmt, ...) {
        size_t len = strlen(rep->message);
        char buf[sizeof(rep->message)];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (n < 0 || len + (size_t) n >= sizeof(rep->message))
                return;
        memcpy(rep->message + len, buf, (size_t) n + 1);
}

static int finish(struct amdsmi_vf_bind_report *rep, int r, enum amdsmi_sriov_stage stage) {
        rep->error = r < 0 ? r : 0;
        rep->stage = r < 0 ? stage : AMDSMI_SRIOV_STAGE_DONE;
        if (r >= 0)
                rep->message[0] = '\0';
        return r;
}

static const char *errno_name(int r) {
        switch (r) {
        case -EBUSY:
                return "EBUSY";
        case -ENODEV:
                return "ENODEV";
        case -ENOENT:
                return "ENOENT";
        case -EINVAL:
                return "EINVAL";
        case -EIO:
                return "EIO";
        default:
                return strerror(-r);
        }
}

static bool driver_name_valid(const char *name) {
        if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return false;
        return strchr(name, '/') == NULL && strlen(name) < 32;
}

/* The bound driver and driver_override of @bdf ("" for none; the kernel shows "(null)"). */
static int read_binding(struct amdsmi_ctx *ctx, const char *bdf, char driver[32],
                        char override[32]) {
        _cleanup_free_ char *drv = NULL;
        char path[128], buf[64];
        int r;

        snprintf(path, sizeof(path), "bus/pci/devices/%s", bdf);
        r = sysfs_exists(ctx, path);
        if (r == -ENOENT)
                return -ENODEV;
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "bus/pci/devices/%s/driver", bdf);
        r = sysfs_readlink_basename(ctx, path, &drv);
        if (r < 0 && r != -ENOENT)
                return r;
        snprintf(path, sizeof(path), "bus/pci/devices/%s/driver_override", bdf);
        r = sysfs_read_text(ctx, path, buf, sizeof(buf));
        if (r < 0 && r != -ENOENT)
                return r;
        snprintf(driver, 32, "%.31s", drv ? drv : "");
        snprintf(override, 32, "%.31s", r < 0 || strcmp(buf, "(null)") == 0 ? "" : buf);
        return 0;
}

static void fill_after(struct amdsmi_ctx *ctx, const char *bdf, struct amdsmi_vf_bind_report *rep) {
        char driver[32], override[32];

        if (read_binding(ctx, bdf, driver, override) < 0)
                return;
        memcpy(rep->driver_after, driver, sizeof(driver));
        memcpy(rep->override_after, override, sizeof(override));
}

/* Writes @value to @path; the errno as the caller should see it, with the message set. */
static int write_attr(struct amdsmi_ctx *ctx, struct amdsmi_vf_bind_report *rep, const char *path,
                      const char *value) {
        int r;

        log_debug(ctx, "writing \"%s\" to %s/%s", value[0] == '\n' ? "\\n" : value, ctx->sysfs_root,
                  path);
        r = sysfs_write_string(ctx, path, value);
        if (r == -EPERM || r == -EACCES) {
                message(rep, "writing %s/%s needs root", ctx->sysfs_root, path);
                return -EACCES;
        }
        if (r < 0)
                message(rep, "writing %s to %s/%s failed: %s", value[0] == '\n' ? "\\n" : value,
                        ctx->sysfs_root, path, errno_name(r));
        return r;
}

static int bind_driver(struct amdsmi_ctx *ctx, struct amdsmi_vf_bind_report *rep, const char *bdf,
                       const char *driver) {
        char path[128];

        if (!driver_name_valid(driver)) {
                message(rep, "not a driver name: \"%s\"", driver);
                return -EINVAL;
        }
        snprintf(path, sizeof(path), "bus/pci/drivers/%s/bind", driver);
        return write_attr(ctx, rep, path, bdf);
}

/* Common checks; reads the VF into @info and the report's "before" (and "after", the same). */
static int prepare(struct amdsmi_gpu *vf, uint64_t flags, struct amdsmi_vf_bind_report *rep,
                   const char *what, struct amdsmi_vf_info *info) {
        size_t size = rep->size;
        int r;

        if (size < sizeof(*rep))
                return -EINVAL;
        memset(rep, 0, sizeof(*rep));
        rep->size = size;
        if (flags & ~KNOWN_FLAGS) {
                message(rep, "unknown flags 0x%llx", (unsigned long long) (flags & ~KNOWN_FLAGS));
                return finish(rep, -EINVAL, AMDSMI_SRIOV_STAGE_PREFLIGHT);
        }
        if (amdsmi_gpu_get_role(vf) != AMDSMI_ROLE_VF || !pci_bdf_valid(vf->bdf)) {
                message(rep, "GPU %s is not a VF of this host (no physfn): only VFs are %s",
                        vf->bdf, what);
                return finish(rep, -EINVAL, AMDSMI_SRIOV_STAGE_PREFLIGHT);
        }
        r = sriov_read_vf(vf->ctx, vf->bdf, 0, info);
        if (r < 0) {
                if (r == -ENODEV)
                        message(rep, "VF %s went away", vf->bdf);
                else
                        message(rep, "cannot read VF %s: %s", vf->bdf, errno_name(r));
                return finish(rep, r, AMDSMI_SRIOV_STAGE_PREFLIGHT);
        }
        snprintf(rep->driver_before, sizeof(rep->driver_before), "%s", info->driver);
        snprintf(rep->override_before, sizeof(rep->override_before), "%s", info->driver_override);
        memcpy(rep->driver_after, rep->driver_before, sizeof(rep->driver_after));
        memcpy(rep->override_after, rep->override_before, sizeof(rep->override_after));
        return 0;
}

/* "VF ... is in use: its VFIO group 42 is held by 4242 (qemu), 4243" */
static void message_in_use(struct amdsmi_vf_bind_report *rep, const char *bdf,
                           const struct amdsmi_vf_info *info) {
        unsigned stored =
                info->n_users < AMDSMI_SRIOV_MAX_USERS ? info->n_users : AMDSMI_SRIOV_MAX_USERS;

        message(rep, "VF %s is in use: its VFIO group %d is held by", bdf, info->iommu_group);
        if (stored == 0)
                message_append(rep, " a process");
        for (unsigned i = 0; i < stored; i++) {
                const struct amdsmi_vfio_user *u = &info->users[i];

                if (u->comm[0])
                        message_append(rep, "%s %d (%s)", i ? "," : "", (int) u->pid, u->comm);
                else
                        message_append(rep, "%s %d", i ? "," : "", (int) u->pid);
        }
        if (info->n_users > stored)
                message_append(rep, ", ...");
}

/* After a failed bind: the override cleared, the old driver bound again, nothing remembered. */
static void restore(struct amdsmi_ctx *ctx, struct amdsmi_vf_bind_report *rep, const char *bdf) {
        /* the report's message keeps what went wrong; these writes add to it */
        struct amdsmi_vf_bind_report scratch = { .size = sizeof(scratch) };
        char path[128], driver[32], override[32];
        const char *prev = rep->driver_before;
        int r;

        snprintf(path, sizeof(path), "bus/pci/devices/%s/driver_override", bdf);
        r = write_attr(ctx, &scratch, path, "\n");
        if (r < 0)
                message_append(rep, "; clearing driver_override failed too: %s", errno_name(r));
        if (prev[0] && read_binding(ctx, bdf, driver, override) == 0 && !driver[0]) {
                r = bind_driver(ctx, &scratch, bdf, prev);
                if (r < 0)
                        message_append(rep, "; binding %s again failed too: %s", prev,
                                       errno_name(r));
                else
                        message_append(rep, "; %s is bound again", prev);
        }
        r = sriov_forget_driver(bdf);
        if (r < 0 && r != -ENOENT)
                log_debug(ctx, "%s: forgetting its driver: %s", bdf, strerror(-r));
        fill_after(ctx, bdf, rep);
}

_public_ int amdsmi_vf_bind_vfio(struct amdsmi_gpu *vf, uint64_t flags,
                                 struct amdsmi_vf_bind_report *ret_report) {
        struct amdsmi_vf_bind_report *rep = ret_report;
        struct amdsmi_ctx *ctx = vf->ctx;
        struct amdsmi_vf_info info = {};
        char path[128], driver[32], override[32];
        int r;

        r = prepare(vf, flags, rep, "bound to vfio-pci", &info);
        if (r < 0)
                return r;
        if (strcmp(info.driver, VFIO_PCI) == 0)
                return finish(rep, 0, AMDSMI_SRIOV_STAGE_DONE);
        if (info.in_use > 0) {
                message_in_use(rep, vf->bdf, &info);
                return finish(rep, -EBUSY, AMDSMI_SRIOV_STAGE_PREFLIGHT);
        }
        r = sysfs_exists(ctx, "bus/pci/drivers/" VFIO_PCI);
        if (r < 0) {
                if (r == -ENOENT) {
                        message(rep, "vfio-pci is not loaded (no bus/pci/drivers/vfio-pci): "
                                     "modprobe vfio-pci");
                        r = -EOPNOTSUPP;
                } else
                        message(rep, "cannot look at bus/pci/drivers/vfio-pci: %s", errno_name(r));
                return finish(rep, r, AMDSMI_SRIOV_STAGE_PREFLIGHT);
        }
        if (flags & AMDSMI_SRIOV_DRY_RUN)
                return finish(rep, 0, AMDSMI_SRIOV_STAGE_DONE);

        r = sriov_remember_driver(vf->bdf, info.driver);
        if (r < 0) {
                message(rep, "cannot remember the driver of VF %s under the runtime directory: %s",
                        vf->bdf, errno_name(r));
                if (r == -EPERM || r == -EACCES)
                        r = -EACCES;
                return finish(rep, r, AMDSMI_SRIOV_STAGE_PREFLIGHT);
        }

        /* From here on no driver but vfio-pci can take the VF. */
        snprintf(path, sizeof(path), "bus/pci/devices/%s/driver_override", vf->bdf);
        r = write_attr(ctx, rep, path, VFIO_PCI);
        if (r < 0) {
                (void) sriov_forget_driver(vf->bdf);
                fill_after(ctx, vf->bdf, rep);
                return finish(rep, r, AMDSMI_SRIOV_STAGE_UNBIND);
        }
        rep->changed = true;
        if (info.driver[0]) {
                snprintf(path, sizeof(path), "bus/pci/devices/%s/driver/unbind", vf->bdf);
                r = write_attr(ctx, rep, path, vf->bdf);
                if (r < 0 && r != -ENODEV && r != -ENOENT) { /* else: unbound meanwhile */
                        restore(ctx, rep, vf->bdf);
                        return finish(rep, r, AMDSMI_SRIOV_STAGE_UNBIND);
                }
        }
        r = write_attr(ctx, rep, "bus/pci/drivers_probe", vf->bdf);
        if (r < 0) {
                restore(ctx, rep, vf->bdf);
                return finish(rep, r, AMDSMI_SRIOV_STAGE_PROBE);
        }
        r = read_binding(ctx, vf->bdf, driver, override);
        if (r < 0) {
                message(rep, "cannot read the driver of VF %s back: %s", vf->bdf,
                        r == -ENODEV ? "it went away" : errno_name(r));
                return finish(rep, r, AMDSMI_SRIOV_STAGE_PROBE);
        }
        memcpy(rep->driver_after, driver, sizeof(driver));
        memcpy(rep->override_after, override, sizeof(override));
        if (strcmp(driver, VFIO_PCI) != 0) {
                message(rep, "vfio-pci did not take VF %s (driver now: %s)", vf->bdf,
                        driver[0] ? driver : "none");
                restore(ctx, rep, vf->bdf);
                return finish(rep, -EIO, AMDSMI_SRIOV_STAGE_PROBE);
        }
        return finish(rep, 0, AMDSMI_SRIOV_STAGE_DONE);
}

_public_ int amdsmi_vf_release(struct amdsmi_gpu *vf, uint64_t flags,
                               struct amdsmi_vf_bind_report *ret_report) {
        struct amdsmi_vf_bind_report *rep = ret_report;
        struct amdsmi_ctx *ctx = vf->ctx;
        struct amdsmi_vf_info info = {};
        char path[128], prev[64] = "";
        bool dry = flags & AMDSMI_SRIOV_DRY_RUN;
        int r;

        r = prepare(vf, flags, rep, "released from vfio-pci", &info);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "bus/pci/devices/%s/driver_override", vf->bdf);

        if (strcmp(info.driver, VFIO_PCI) != 0) {
                /* Not on vfio-pci: only a stale override would take it there. */
                if (dry)
                        return finish(rep, 0, AMDSMI_SRIOV_STAGE_DONE);
                if (strcmp(info.driver_override, VFIO_PCI) == 0) {
                        r = write_attr(ctx, rep, path, "\n");
                        if (r < 0)
                                return finish(rep, r, AMDSMI_SRIOV_STAGE_UNBIND);
                        rep->changed = true;
                        fill_after(ctx, vf->bdf, rep);
                }
                r = sriov_forget_driver(vf->bdf);
                if (r < 0 && r != -ENOENT)
                        log_debug(ctx, "%s: forgetting its driver: %s", vf->bdf, strerror(-r));
                return finish(rep, 0, AMDSMI_SRIOV_STAGE_DONE);
        }
        if (info.in_use > 0 && !(flags & AMDSMI_SRIOV_FORCE)) {
                message_in_use(rep, vf->bdf, &info);
                message_append(rep, ": stop the VM first, or force the release");
                return finish(rep, -EBUSY, AMDSMI_SRIOV_STAGE_PREFLIGHT);
        }
        if (dry)
                return finish(rep, 0, AMDSMI_SRIOV_STAGE_DONE);

        r = sriov_recall_driver(vf->bdf, prev, sizeof(prev));
        if (r < 0) {
                if (r == -ELOOP || r == -EISDIR || r == -EBADFD)
                        log_warning(ctx, "%s: its driver before vfio-pci is not known: %s", vf->bdf,
                                    sriov_recall_error(vf->bdf, r, (char[PATH_MAX + 128]){},
                                                       PATH_MAX + 128));
                else if (r != -ENOENT)
                        log_debug(ctx, "%s: recalling its driver: %s", vf->bdf, strerror(-r));
                prev[0] = '\0';
        }
        if (strcmp(prev, VFIO_PCI) == 0)
                prev[0] = '\0';

        if (info.driver_override[0]) {
                r = write_attr(ctx, rep, path, "\n");
                if (r < 0)
                        return finish(rep, r, AMDSMI_SRIOV_STAGE_UNBIND);
                rep->changed = true;
        }
        r = write_attr(ctx, rep, "bus/pci/drivers/" VFIO_PCI "/unbind", vf->bdf);
        if (r < 0 && r != -ENODEV) { /* ENODEV: not bound to vfio-pci any more */
                fill_after(ctx, vf->bdf, rep);
                return finish(rep, r, AMDSMI_SRIOV_STAGE_UNBIND);
        }
        rep->changed = true;
        if (prev[0]) {
                r = bind_driver(ctx, rep, vf->bdf, prev);
                if (r < 0) {
                        message_append(rep, " (VF %s is released, but not bound to %s again)",
                                       vf->bdf, prev);
                        fill_after(ctx, vf->bdf, rep);
                        return finish(rep, r, AMDSMI_SRIOV_STAGE_PROBE);
                }
        }
        r = sriov_forget_driver(vf->bdf);
        if (r < 0 && r != -ENOENT)
                log_debug(ctx, "%s: forgetting its driver: %s", vf->bdf, strerror(-r));
        fill_after(ctx, vf->bdf, rep);
        return finish(rep, 0, AMDSMI_SRIOV_STAGE_DONE);
}
