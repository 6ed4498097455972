/* SPDX-License-Identifier: MIT */
/*
 * Firmware versions of a GPU. sysfs first: <pci>/fw_version/<name>_fw_version, one
 * "0x%08x\n" each. Then the amdgpu INFO ioctl on the render node, only for the kinds this
 * kernel's sysfs does not show (PSP TOC, CAP, MES, MES KIQ, and IMU on kernels without
 * imu_fw_version). Loaded on first use and cached in the gpu.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <amdgpu_drm.h>

#include "private.h"
#include "sysfs.h"

/* Newer than some installed libdrm headers; the numbers are the kernel's uapi. */
#ifndef AMDGPU_INFO_FW_CAP
#define AMDGPU_INFO_FW_CAP 0x16
#endif
#ifndef AMDGPU_INFO_FW_MES_KIQ
#define AMDGPU_INFO_FW_MES_KIQ 0x19
#endif
#ifndef AMDGPU_INFO_FW_MES
#define AMDGPU_INFO_FW_MES 0x1a
#endif
#ifndef AMDGPU_INFO_FW_IMU
#define AMDGPU_INFO_FW_IMU 0x1b
#endif

#define FW_SUFFIX "_fw_version"

/* Kinds asked through the ioctl when sysfs has no file of the same name. */
static const struct {
        const char *name;
        uint32_t fw_type;
} ioctl_kinds[] = {
        { "cap", AMDGPU_INFO_FW_CAP },     { "imu", AMDGPU_INFO_FW_IMU },
        { "mes", AMDGPU_INFO_FW_MES },     { "mes_kiq", AMDGPU_INFO_FW_MES_KIQ },
        { "psp_toc", AMDGPU_INFO_FW_TOC },
};

struct fw_list {
        struct amdsmi_firmware *fw;
        char **names; /* NULL-terminated, owns the strings fw[].name points to */
        size_t n;
        size_t allocated;
};

static void fw_list_done(struct fw_list *l) {
        free(l->fw);
        strv_free(l->names);
        *l = (struct fw_list){};
}

static bool fw_list_has(const struct fw_list *l, const char *name) {
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->fw[i].name, name) == 0)
                        return true;
        return false;
}

static int fw_list_add(struct fw_list *l, const char *name, size_t name_len, uint64_t version,
                       int from_ioctl) {
        char *s;

        if (l->n + 1 >= l->allocated) {
                size_t na = l->allocated * 2 + 8;
                struct amdsmi_firmware *nf;
                char **nn;

                nf = realloc(l->fw, na * sizeof(*nf));
                if (!nf)
                        return -ENOMEM;
                l->fw = nf;
                nn = realloc(l->names, na * sizeof(*nn));
                if (!nn)
                        return -ENOMEM;
                l->names = nn;
                l->allocated = na;
        }
        s = strndup(name, name_len);
        if (!s)
                return -ENOMEM;
        l->names[l->n] = s;
        l->names[l->n + 1] = NULL;
        l->fw[l->n] = (struct amdsmi_firmware){
                .name = s,
                .version = version,
                .from_ioctl = from_ioctl,
        };
        l->n++;
        return 0;
}

static int cmp_fw(const void *a, const void *b) {
        const struct amdsmi_firmware *x = a, *y = b;

        return strcmp(x->name, y->name);
}

static int load_sysfs(struct amdsmi_gpu *gpu, struct fw_list *l) {
        struct amdsmi_ctx *ctx = gpu->ctx;
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ char *dir = NULL;
        int n, r;

        if (asprintf(&dir, "%s/fw_version", gpu->syspath) < 0)
                return -ENOMEM;
        n = sysfs_list_dir(ctx, dir, NULL, &names);
        if (n == -ENOMEM)
                return n;
        if (n < 0) {
                /* Absent on kernels or functions without it (VFs, old drivers): no entries. */
                log_debug(ctx, "%s: no firmware versions in %s/%s: %s", gpu->bdf, ctx->sysfs_root,
                          dir, strerror(-n));
                return 0;
        }

        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL;
                size_t len = strlen(names[i]);
                uint64_t v;

                if (len <= strlen(FW_SUFFIX) ||
                    strcmp(names[i] + len - strlen(FW_SUFFIX), FW_SUFFIX) != 0)
                        continue;
                if (asprintf(&path, "%s/%s", dir, names[i]) < 0)
                        return -ENOMEM;
                r = sysfs_read_u64(ctx, path, 16, &v);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (r == -ENOENT)
                                log_debug(ctx, "%s/%s vanished, skipped", ctx->sysfs_root, path);
                        else
                                log_warning(ctx, "%s/%s: unusable firmware version, skipped: %s",
                                            ctx->sysfs_root, path, strerror(-r));
                        continue;
                }
                r = fw_list_add(l, names[i], len - strlen(FW_SUFFIX), v, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int load_ioctl(struct amdsmi_gpu *gpu, struct fw_list *l) {
        struct amdsmi_ctx *ctx = gpu->ctx;
        _cleanup_close_ int fd = -1;
        bool wanted = false;
        int r;

        gpu_load_drm(gpu);
        if (gpu->render_minor < 0 || !ctx->dev_root)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(ioctl_kinds); i++)
                if (!fw_list_has(l, ioctl_kinds[i].name))
                        wanted = true;
        if (!wanted)
                return 0;

        fd = drm_open_render(ctx, gpu->render_minor);
        if (fd < 0) {
                log_debug(ctx, "%s: render node renderD%d unusable, firmware from sysfs only: %s",
                          gpu->bdf, gpu->render_minor, strerror(-fd));
                return 0;
        }

        for (size_t i = 0; i < ELEMENTSOF(ioctl_kinds); i++) {
                const char *name = ioctl_kinds[i].name;
                uint32_t ver, feature;

                if (fw_list_has(l, name))
                        continue;
                r = drm_query_firmware_fd(ctx, fd, ioctl_kinds[i].fw_type, &ver, &feature);
                if (r < 0) {
                        /* -EINVAL: this kernel or ASIC has no such firmware. */
                        log_debug(ctx, "%s: firmware %s not available: %s", gpu->bdf, name,
                                  strerror(-r));
                        continue;
                }
                log_debug(ctx, "%s: firmware %s 0x%08x (feature %u) from renderD%d", gpu->bdf, name,
                          ver, feature, gpu->render_minor);
                r = fw_list_add(l, name, strlen(name), ver, 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int load_firmware(struct amdsmi_gpu *gpu) {
        struct fw_list l = {};
        int r;

        r = load_sysfs(gpu, &l);
        if (r >= 0)
                r = load_ioctl(gpu, &l);
        if (r < 0) {
                fw_list_done(&l);
                return r;
        }
        if (l.n > 0)
                qsort(l.fw, l.n, sizeof(*l.fw), cmp_fw);

        gpu_free_firmware(gpu);
        gpu->fw = l.fw;
        gpu->fw_names = l.names;
        gpu->n_fw = l.n;
        gpu->fw_loaded = true;
        return 0;
}

_public_ int amdsmi_gpu_get_firmware(struct amdsmi_gpu *gpu,
                                     const struct amdsmi_firmware **ret_fw) {
        int r;

        if (!gpu || !ret_fw)
                return -EINVAL;
        if (!gpu->fw_loaded) {
                r = load_firmware(gpu);
                if (r < 0)
                        return r;
        }
        *ret_fw = gpu->fw;
        return (int) gpu->n_fw;
}

void gpu_free_firmware(struct amdsmi_gpu *gpu) {
        free(gpu->fw);
        strv_free(gpu->fw_names);
        gpu->fw = NULL;
        gpu->fw_names = NULL;
        gpu->n_fw = 0;
        gpu->fw_loaded = false;
}
