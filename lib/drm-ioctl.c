/* SPDX-License-Identifier: MIT */
/*
 * The one place where libamdsmi issues ioctls: the amdgpu DRM INFO query on a render node.
 * Nodes are opened through devfs_open(), so a context without a device root (a snapshot
 * tree) never reaches a device, and each query is exactly one ioctl (via libdrm).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
