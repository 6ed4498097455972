/* SPDX-License-Identifier: MIT */
/*
 * The one place where libamdsmi issues ioctls: the amdgpu DRM INFO query on a render node, and
 * the KFD's version and SMI-events requests on /dev/kfd.
 * Nodes are opened through devfs_open(), so a context without a device root (a snapshot
 * tree) never reaches a device, and each query is exactly one ioctl (via libdrm).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/kfd_ioctl.h>

#include <amdgpu_drm.h>
#include <xf86drm.h>

#include "private.h"
#include "sysfs.h"

int drm_open_render(struct amdsmi_ctx *ctx, int render_minor) {
        char path[32];

        if (render_minor < 0)
                return -ENOENT;
        snprintf(path, sizeof(path), "dri/renderD%d", render_minor);
        return devfs_open(ctx, path, O_RDWR | O_CLOEXEC);
}

int drm_query_firmware_fd(struct amdsmi_ctx *ctx, int fd, uint32_t fw_type, uint32_t *ret_version,
                          uint32_t *ret_feature) {
        struct drm_amdgpu_info_firmware fw = {};
        struct drm_amdgpu_info req = {
                .return_pointer = (uint64_t) (uintptr_t) &fw,
                .return_size = sizeof(fw),
                .query = AMDGPU_INFO_FW_VERSION,
                .query_fw.fw_type = fw_type,
        };
        int r;

        if (fd < 0)
                return -EBADF;
        /* drmCommandWrite() retries EINTR/EAGAIN and returns a negative errno. */
        r = drmCommandWrite(fd, DRM_AMDGPU_INFO, &req, sizeof(req));
        if (r < 0) {
                log_debug(ctx, "amdgpu INFO firmware query, type %u: %s", fw_type, strerror(-r));
                return r;
        }
        if (ret_version)
                *ret_version = fw.ver;
        if (ret_feature)
                *ret_feature = fw.feature;
        return 0;
}

int drm_query_firmware(struct amdsmi_ctx *ctx, int render_minor, uint32_t fw_type,
                       uint32_t *ret_version, uint32_t *ret_feature) {
        _cleanup_close_ int fd = -1;

        fd = drm_open_render(ctx, render_minor);
        if (fd < 0)
                return fd;
        return drm_query_firmware_fd(ctx, fd, fw_type, ret_version, ret_feature);
}

/* ---- KFD (/dev/kfd): the SMI event fd --------------------------------------------------
 * The ioctl numbers and structs are the kernel's uapi <linux/kfd_ioctl.h>; the kfd node is
 * opened below the device root like the render nodes above. */

int kfd_open(struct amdsmi_ctx *ctx) {
        return devfs_open(ctx, "kfd", O_RDWR | O_CLOEXEC);
}

int kfd_get_version(struct amdsmi_ctx *ctx, int fd, uint32_t *ret_major, uint32_t *ret_minor) {
        struct kfd_ioctl_get_version_args args = {};

        if (ioctl(fd, AMDKFD_IOC_GET_VERSION, &args) < 0) {
                int r = -errno;
                log_debug(ctx, "kfd GET_VERSION: %s", strerror(-r));
                return r;
        }
        *ret_major = args.major_version;
        *ret_minor = args.minor_version;
        return 0;
}

int kfd_smi_events_fd(struct amdsmi_ctx *ctx, int fd, uint32_t gpu_id) {
        struct kfd_ioctl_smi_events_args args = { .gpuid = gpu_id };

        if (ioctl(fd, AMDKFD_IOC_SMI_EVENTS, &args) < 0) {
                int r = -errno;
                log_debug(ctx, "kfd SMI_EVENTS for gpu_id %" PRIu32 ": %s", gpu_id, strerror(-r));
                return r;
        }
        if ((int) args.anon_fd < 0)
                return -EBADF;
        return (int) args.anon_fd;
}
