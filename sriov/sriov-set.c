/* SPDX-License-Identifier: MIT */
/*
 * A PF's VF count through the PCI core's sriov_numvfs (spec virtualization §2.2, amdgpu-sysfs
 * §7.1, §7.3).
 *
 * Preflight, in the kernel's order where it has one: the GPU must be a PF with the SR-IOV
 * capability; a count above sriov_totalvfs is ERANGE; the current count is a no-op; a PF under
 * gim or without a driver cannot be configured through sysfs (the kernel's ENOENT), so nothing
 * is written and the report says what sets the count instead (gim's vf_num module parameter);
 * VFs bound to vfio-pci or held through VFIO block the change unless forced, since a new count
 * tears every VF down. A dry run stops here with what the change would return.
 *
 * The change: 0 first when VFs exist and the new count is not 0 (the kernel refuses a second
 * enable with EBUSY), read back as 0; sriov_drivers_autoprobe 0 when asked; the new count;
 * then a wait (polling) for the VFs' virtfnN links and their bus/pci/devices entries, and the
 * count read back. Every errno of a write is turned into what it means for this file: ENOENT
 * is a driver without sriov_configure (upstream amdgpu, vfio-pci without enable_sriov), ENOMEM
 * a PF whose VF BARs or bus numbers the firmware did not reserve, EPERM/EACCES a caller
 * without privilege.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "sriov-private.h"
#include "sysfs.h"
#include "time-util.h"

#define DEFAULT_TIMEOUT_MS 10000U
#define SETTLE_POLL_MS 5U
#define VFIO_PCI "vfio-pci"
#define KNOWN_FLAGS (AMDSMI_SRIOV_DRY_RUN | AMDSMI_SRIOV_FORCE | AMDSMI_SRIOV_AUTOPROBE_OFF)

_printf_(2, 3) static void message(struct amdsmi_sriov_change *c, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(c->message, sizeof(c->message), fmt, ap);
        va_end(ap);
}

/* Appends to the message; false (and nothing appended) when it does not fit. */
_printf_(2, 3) static bool message_append(struct amdsmi_sriov_change *c, const char *fmt, ...) {
        size_t len = strlen(c->message);
        char buf[sizeof(c->message)];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (n < 0 || len + (size_t) n >= sizeof(c->message))
                return false;
        memcpy(c->message + len, buf, (size_t) n + 1);
        return true;
}

static int finish(struct amdsmi_sriov_change *c, int r, enum amdsmi_sriov_stage stage,
                  uint64_t start) {
        c->error = r < 0 ? r : 0;
        c->stage = r < 0 ? stage : AMDSMI_SRIOV_STAGE_DONE;
        if (start)
                c->elapsed_ms = (unsigned) (now_ms() - start);
        if (r >= 0)
                c->message[0] = '\0';
        return r;
}

static const char *errno_name(int r) {
        switch (r) {
        case -EBUSY:
                return "EBUSY";
        case -ENOMEM:
                return "ENOMEM";
        case -EINVAL:
                return "EINVAL";
        case -ENOENT:
                return "ENOENT";
        case -ERANGE:
                return "ERANGE";
        case -EIO:
                return "EIO";
        case -ENODEV:
                return "ENODEV";
        case -ETIMEDOUT:
                return "ETIMEDOUT";
        default:
                return strerror(-r);
        }
}

static void pf_path(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size) {
        snprintf(buf, size, "bus/pci/devices/%s/%s", gpu->bdf, attr);
}

static int read_numvfs(struct amdsmi_gpu *gpu, unsigned *ret) {
        char path[128];
        uint64_t v;
        int r;

        pf_path(gpu, "sriov_numvfs", path, sizeof(path));
        r = sysfs_read_u64(gpu->ctx, path, 10, &v);
        if (r < 0)
                return r;
        if (v > UINT16_MAX)
                return -EBADMSG;
        *ret = (unsigned) v;
        return 0;
}

static int write_numvfs(struct amdsmi_gpu *gpu, unsigned n) {
        char path[128], value[16];

        pf_path(gpu, "sriov_numvfs", path, sizeof(path));
        snprintf(value, sizeof(value), "%u", n);
        log_debug(gpu->ctx, "%s: writing %s to sriov_numvfs", gpu->bdf, value);
        return sysfs_write_string(gpu->ctx, path, value);
}

/* The VFs that block a new count: bound to vfio-pci, or their VFIO group held. */
static unsigned add_blockers(struct amdsmi_sriov_change *c, const struct amdsmi_sriov_info *info) {
        for (unsigned i = 0; i < info->n_vfs && i < AMDSMI_SRIOV_MAX_VFS; i++) {
                const struct amdsmi_vf_info *vf = &info->vfs[i];
                bool vfio = strcmp(vf->driver, VFIO_PCI) == 0, in_use = vf->in_use > 0;
                struct amdsmi_vf_blocker *b;

                if (!vfio && !in_use)
                        continue;
                if (c->n_blockers < AMDSMI_SRIOV_MAX_VFS) {
                        b = &c->blockers[c->n_blockers];
                        snprintf(b->bdf, sizeof(b->bdf), "%s", vf->bdf);
                        b->vfio = vfio;
                        b->in_use = in_use;
                        if (in_use && vf->n_users > 0) {
                                b->pid = vf->users[0].pid;
                                snprintf(b->comm, sizeof(b->comm), "%s", vf->users[0].comm);
                        }
                }
                c->n_blockers++;
        }
        return c->n_blockers;
}

/* "2 VFs of 0000:05:00.0 are bound to vfio-pci or in use: 0000:05:02.0 (vfio-pci),
 * 0000:05:02.1 (vfio-pci, in use by 4242 (qemu)); release them (amdsmi sriov release) or
 * force" */
static void message_blockers(struct amdsmi_sriov_change *c, struct amdsmi_gpu *gpu) {
        static const char tail[] = "; release them (amdsmi sriov release) or force the change";
        unsigned stored =
                c->n_blockers < AMDSMI_SRIOV_MAX_VFS ? c->n_blockers : AMDSMI_SRIOV_MAX_VFS;
        unsigned shown = 0;

        message(c, "%u VF%s of %s %s bound to vfio-pci or in use:", c->n_blockers,
                c->n_blockers == 1 ? "" : "s", gpu->bdf, c->n_blockers == 1 ? "is" : "are");
        for (unsigned i = 0; i < stored; i++) {
                const struct amdsmi_vf_blocker *b = &c->blockers[i];
                char item[128], use[64] = "";

                if (b->in_use && b->pid > 0)
                        snprintf(use, sizeof(use), "in use by %d%s%s%s", (int) b->pid,
                                 b->comm[0] ? " (" : "", b->comm, b->comm[0] ? ")" : "");
                else if (b->in_use)
                        snprintf(use, sizeof(use), "in use");
                snprintf(item, sizeof(item), "%s %s (%s%s%s)", i ? "," : "", b->bdf,
                         b->vfio ? VFIO_PCI : "", b->vfio && use[0] ? ", " : "", use);
                /* leave room for ", ..." and the advice */
                if (strlen(c->message) + strlen(item) + 5 + sizeof(tail) >= sizeof(c->message))
                        break;
                (void) message_append(c, "%s", item);
                shown++;
        }
        if (shown < c->n_blockers)
                (void) message_append(c, ", ...");
        (void) message_append(c, "%s", tail);
}

static void message_gim(struct amdsmi_sriov_change *c, struct amdsmi_gpu *gpu,
                        const struct amdsmi_sriov_info *info, unsigned n) {
        char now[16] = "unknown";

        if (info->gim_vf_num >= 0)
                snprintf(now, sizeof(now), "%d", info->gim_vf_num);
        message(c,
                "gim sets the VF count with its vf_num module parameter (now %s for this GPU): "
                "`amdsmi sriov set -g %s --num-vfs %u --persist` writes "
                "/etc/modprobe.d/amdsmi-gim.conf for the next load of gim; the count also sets "
                "the partition mode (MI300X: 1 VF = SPX/NPS1, 8 VFs = CPX/NPS4; MI350X: 1, 2 or "
                "8)",
                now, gpu->bdf, n);
}

static void message_no_driver(struct amdsmi_sriov_change *c, struct amdsmi_gpu *gpu) {
        message(c,
                "no driver is bound to PF %s, and only its driver can enable VFs: bind gim (its "
                "vf_num parameter sets the count) or a driver with sriov_configure such as "
                "vfio-pci loaded with enable_sriov=1",
                gpu->bdf);
}

/* The message and errno of a failed write of sriov_numvfs (@n) or of autoprobe. */
static int write_error(struct amdsmi_sriov_change *c, struct amdsmi_gpu *gpu,
                       const struct amdsmi_sriov_info *info, unsigned n, int r) {
        switch (r) {
        case -ENOENT:
                if (!info->pf_driver[0]) {
                        message_no_driver(c, gpu);
                } else if (strcmp(info->pf_driver, "amdgpu") == 0) {
                        message(c,
                                "amdgpu cannot enable VFs through sysfs (no sriov_configure): "
                                "MI300-class hosts use gim (PF %s)",
                                gpu->bdf);
                } else if (strcmp(info->pf_driver, "gim") == 0) {
                        message_gim(c, gpu, info, n);
                } else if (strcmp(info->pf_driver, VFIO_PCI) == 0) {
                        message(c,
                                "vfio-pci enables VFs only when loaded with enable_sriov=1 "
                                "(module/vfio_pci/parameters/enable_sriov; PF %s)",
                                gpu->bdf);
                } else {
                        message(c,
                                "driver %s cannot configure the VFs of %s through sysfs (no "
                                "sriov_configure)",
                                info->pf_driver, gpu->bdf);
                }
                return -EOPNOTSUPP;
        case -EPERM:
        case -EACCES:
                message(c, "writing %s/bus/pci/devices/%s/sriov_numvfs needs root",
                        gpu->ctx->sysfs_root, gpu->bdf);
                return -EACCES;
        case -ENOMEM:
                message(c,
                        "the kernel could not place %u VFs of %s (ENOMEM): not enough MMIO space "
                        "or bus numbers for the VF BARs (check the firmware's SR-IOV and above-4G "
                        "decoding settings, or pci=realloc)",
                        n, gpu->bdf);
                return -ENOMEM;
        case -EBUSY:
                message(c,
                        "the kernel refused to change the VF count of %s to %u (EBUSY): VFs are "
                        "enabled already, or the PF driver will not disable VFs assigned to VMs",
                        gpu->bdf, n);
                return -EBUSY;
        case -EINVAL:
                message(c, "the kernel or the PF driver %s rejected %u VFs for %s (EINVAL)",
                        info->pf_driver[0] ? info->pf_driver : "(none)", n, gpu->bdf);
                return -EINVAL;
        case -ERANGE:
                message(c, "%s takes at most %u VFs (sriov_totalvfs), not %u (ERANGE)", gpu->bdf,
                        info->total_vfs, n);
                return -ERANGE;
        case -ENODEV:
                message(c, "PF %s went away", gpu->bdf);
                return -ENODEV;
        default:
                message(c, "writing %u to %s/sriov_numvfs failed: %s", n, gpu->bdf, errno_name(r));
                return r;
        }
}

/* Whether VF @i of the PF is there: its virtfnN link and its bus/pci/devices entry. 1, 0, or a
 * negative errno. */
static int vf_present(struct amdsmi_gpu *gpu, unsigned i) {
        _cleanup_free_ char *vf = NULL;
        char path[128];
        int r;

        snprintf(path, sizeof(path), "bus/pci/devices/%s/virtfn%u", gpu->bdf, i);
        r = sysfs_readlink_basename(gpu->ctx, path, &vf);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (!pci_bdf_valid(vf))
                return 0;
        snprintf(path, sizeof(path), "bus/pci/devices/%s", vf);
        r = sysfs_exists(gpu->ctx, path);
        if (r == -ENOENT)
                return 0;
        return r < 0 ? r : 1;
}

/* Waits until VFs 0..n-1 are there and virtfn<n> is not. */
static int settle(struct amdsmi_gpu *gpu, unsigned n, uint64_t deadline) {
        unsigned ready = 0;
        int r;

        for (;;) {
                while (ready < n) {
                        r = vf_present(gpu, ready);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                break;
                        ready++;
                }
                if (ready == n) {
                        r = vf_present(gpu, n);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                return 0;
                }
                if (now_ms() >= deadline)
                        return -ETIMEDOUT;
                sleep_ms(SETTLE_POLL_MS);
        }
}

/* After a failure past the first write: the count the PF has now. */
static void fill_after(struct amdsmi_sriov_change *c, struct amdsmi_gpu *gpu) {
        unsigned now;

        if (read_numvfs(gpu, &now) == 0)
                c->vfs_after = now;
}

/* "; 0 was written first: PF ... now has N VFs" after a failure that followed the write of 0. */
static void message_after_zero(struct amdsmi_sriov_change *c, struct amdsmi_gpu *gpu) {
        unsigned now;

        if (!c->wrote_zero)
                return;
        if (read_numvfs(gpu, &now) == 0) {
                c->vfs_after = now;
                (void) message_append(c, "; 0 was written first, so PF %s now has %u VF%s",
                                      gpu->bdf, now, now == 1 ? "" : "s");
        } else
                (void) message_append(c, "; 0 was written first, so PF %s now has 0 VFs", gpu->bdf);
}

static int write_autoprobe_off(struct amdsmi_gpu *gpu) {
        char path[128];

        pf_path(gpu, "sriov_drivers_autoprobe", path, sizeof(path));
        return sysfs_write_string(gpu->ctx, path, "0");
}

/* The VFs of before are gone (any count change passes through 0): what amdsmi_vf_bind_vfio()
 * remembered of them must not be given to the new VFs at the same addresses. */
static void forget_drivers(struct amdsmi_gpu *gpu, const struct amdsmi_sriov_info *info) {
        for (size_t i = 0; i < info->n_vfs; i++) {
                int r = sriov_forget_driver(info->vfs[i].bdf);

                if (r < 0)
                        log_debug(gpu->ctx, "%s: forgetting its driver: %s", info->vfs[i].bdf,
                                  strerror(-r));
        }
}

_public_ int amdsmi_gpu_set_num_vfs(struct amdsmi_gpu *gpu, unsigned n, uint64_t flags,
                                    unsigned timeout_ms, struct amdsmi_sriov_change *ret_change) {
        struct amdsmi_sriov_change *c = ret_change;
        _cleanup_free_ struct amdsmi_sriov_info *info = NULL;
        size_t size = c->size;
        uint64_t start, deadline;
        unsigned now;
        int r;

        if (size < sizeof(*c))
                return -EINVAL;
        memset(c, 0, sizeof(*c));
        c->size = size;

        if (flags & ~KNOWN_FLAGS) {
                message(c, "unknown flags 0x%llx", (unsigned long long) (flags & ~KNOWN_FLAGS));
                return finish(c, -EINVAL, AMDSMI_SRIOV_STAGE_PREFLIGHT, 0);
        }
        if (n > UINT16_MAX) {
                message(c, "%u VFs: the PCI core takes at most 65535", n);
                return finish(c, -EINVAL, AMDSMI_SRIOV_STAGE_PREFLIGHT, 0);
        }
        if (amdsmi_gpu_is_vf(gpu) > 0) {
                const char *pf = amdsmi_gpu_get_physfn_bdf(gpu);

                if (pf)
                        message(c, "GPU %s is a VF: the VF count is set on its PF %s", gpu->bdf,
                                pf);
                else
                        message(c, "GPU %s is a VF: the VF count is set on the host", gpu->bdf);
                return finish(c, -EINVAL, AMDSMI_SRIOV_STAGE_PREFLIGHT, 0);
        }
        if (timeout_ms == 0)
                timeout_ms = DEFAULT_TIMEOUT_MS;

        /* The state before. */
        info = calloc(1, sizeof(*info));
        if (!info)
                return -ENOMEM;
        info->size = sizeof(*info);
        r = amdsmi_gpu_read_sriov(gpu, info);
        if (r < 0) {
                if (r == -ENODEV)
                        message(c, "PF %s went away", gpu->bdf);
                else
                        message(c, "cannot read the SR-IOV state of %s: %s", gpu->bdf,
                                errno_name(r));
                return finish(c, r, AMDSMI_SRIOV_STAGE_PREFLIGHT, 0);
        }
        c->config = info->config;
        c->total_vfs = info->total_vfs;
        c->vfs_before = c->vfs_after = info->num_vfs;
        if (!info->capable || info->config == AMDSMI_VF_CONFIG_NONE) {
                message(c, "GPU %s has no SR-IOV capability (no sriov_totalvfs)", gpu->bdf);
                return finish(c, -EOPNOTSUPP, AMDSMI_SRIOV_STAGE_PREFLIGHT, 0);
        }

        /* The kernel's order: the range, then the no-op, then the driver. */
        if (n > info->total_vfs) {
                message(c, "%s takes at most %u VFs (sriov_totalvfs), not %u", gpu->bdf,
                        info->total_vfs, n);
                return finish(c, -ERANGE, AMDSMI_SRIOV_STAGE_PREFLIGHT, 0);
        }
        if (n == info->num_vfs)
                return finish(c, 0, AMDSMI_SRIOV_STAGE_DONE, 0);
        (void) add_blockers(c, info);
        if (info->config == AMDSMI_VF_CONFIG_GIM_PARAM || strcmp(info->pf_driver, "gim") == 0) {
                message_gim(c, gpu, info, n);
                return finish(c, -EOPNOTSUPP, AMDSMI_SRIOV_STAGE_PREFLIGHT, 0);
        }
        if (info->config == AMDSMI_VF_CONFIG_NO_DRIVER || !info->pf_driver[0]) {
                message_no_driver(c, gpu);
                return finish(c, -EOPNOTSUPP, AMDSMI_SRIOV_STAGE_PREFLIGHT, 0);
        }
        if (c->n_blockers > 0 && !(flags & AMDSMI_SRIOV_FORCE)) {
                message_blockers(c, gpu);
                return finish(c, -EBUSY, AMDSMI_SRIOV_STAGE_PREFLIGHT, 0);
        }
        if (flags & AMDSMI_SRIOV_DRY_RUN)
                return finish(c, 0, AMDSMI_SRIOV_STAGE_DONE, 0);

        log_debug(gpu->ctx, "%s: VF count %u -> %u", gpu->bdf, info->num_vfs, n);
        start = now_ms();
        deadline = start + timeout_ms;

        /* 0 first: the kernel enables VFs only from 0. */
        if (info->num_vfs > 0 && n > 0) {
                r = write_numvfs(gpu, 0);
                if (r < 0) {
                        r = write_error(c, gpu, info, 0, r);
                        fill_after(c, gpu);
                        return finish(c, r, AMDSMI_SRIOV_STAGE_DISABLE, start);
                }
                c->wrote_zero = c->changed = true;
                forget_drivers(gpu, info);
                r = read_numvfs(gpu, &now);
                if (r < 0) {
                        message(c, "cannot read %s/sriov_numvfs after writing 0: %s", gpu->bdf,
                                errno_name(r));
                        return finish(c, r, AMDSMI_SRIOV_STAGE_DISABLE, start);
                }
                c->vfs_after = now;
                if (now != 0) {
                        message(c, "0 was written to %s/sriov_numvfs, but it reads %u", gpu->bdf,
                                now);
                        return finish(c, -EIO, AMDSMI_SRIOV_STAGE_DISABLE, start);
                }
        }

        if ((flags & AMDSMI_SRIOV_AUTOPROBE_OFF) && n > 0 && info->drivers_autoprobe != 0) {
                r = write_autoprobe_off(gpu);
                if (r < 0) {
                        if (r == -EPERM || r == -EACCES) {
                                message(c,
                                        "writing %s/bus/pci/devices/%s/sriov_drivers_autoprobe "
                                        "needs root",
                                        gpu->ctx->sysfs_root, gpu->bdf);
                                r = -EACCES;
                        } else
                                message(c, "writing 0 to %s/sriov_drivers_autoprobe failed: %s",
                                        gpu->bdf, errno_name(r));
                        message_after_zero(c, gpu);
                        return finish(c, r, AMDSMI_SRIOV_STAGE_AUTOPROBE, start);
                }
                c->autoprobe_off = true;
        }

        r = write_numvfs(gpu, n);
        if (r < 0) {
                r = write_error(c, gpu, info, n, r);
                if (c->wrote_zero)
                        message_after_zero(c, gpu);
                else
                        fill_after(c, gpu);
                return finish(c, r, AMDSMI_SRIOV_STAGE_ENABLE, start);
        }
        c->changed = true;
        forget_drivers(gpu, info);

        r = settle(gpu, n, deadline);
        if (r < 0) {
                fill_after(c, gpu);
                if (r == -ETIMEDOUT)
                        message(c,
                                "%u VFs of %s were enabled, but their functions did not all "
                                "appear (virtfnN, bus/pci/devices) within %u ms",
                                n, gpu->bdf, timeout_ms);
                else
                        message(c, "waiting for the VFs of %s failed: %s", gpu->bdf, errno_name(r));
                return finish(c, r, AMDSMI_SRIOV_STAGE_SETTLE, start);
        }

        r = read_numvfs(gpu, &now);
        if (r < 0) {
                message(c, "cannot read %s/sriov_numvfs back: %s", gpu->bdf, errno_name(r));
                return finish(c, r, AMDSMI_SRIOV_STAGE_VERIFY, start);
        }
        c->vfs_after = now;
        if (now != n) {
                message(c, "%u was written to %s/sriov_numvfs, but it reads %u", n, gpu->bdf, now);
                return finish(c, -EIO, AMDSMI_SRIOV_STAGE_VERIFY, start);
        }
        return finish(c, 0, AMDSMI_SRIOV_STAGE_DONE, start);
}
