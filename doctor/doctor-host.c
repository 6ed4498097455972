/* SPDX-License-Identifier: MIT */
/*
 * The doctor slice's library part (amdsmi-host.h): the host's facts. The files of /proc come
 * through lib/procfs.c, sysfs through lib/sysfs.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "private.h"
#include "procfs.h"
#include "sysfs.h"

_public_ int amdsmi_host_read(struct amdsmi_ctx *ctx, struct amdsmi_host_info *ret_info) {
        struct amdsmi_host_info info = { .size = sizeof(info) };
        _cleanup_strv_free_ char **units = NULL;
        char *cmdline = NULL;
        int r;

        if (!ctx || !ret_info || ret_info->size < sizeof(info))
                return -EINVAL;

        info.cmdline_error = procfs_read_cmdline(ctx, &cmdline);
        if (info.cmdline_error == 0) {
                snprintf(info.cmdline, sizeof(info.cmdline), "%s", cmdline);
                free(cmdline);
        }

        r = sysfs_list_dir(ctx, "class/iommu", NULL, &units);
        if (r < 0)
                info.iommu_error = r;
        else {
                info.n_iommu_units = (unsigned) r;
                for (size_t i = 0; i < (size_t) r && i < AMDSMI_HOST_IOMMU_UNITS_MAX; i++)
                        snprintf(info.iommu_units[i], sizeof(info.iommu_units[i]), "%s", units[i]);
        }

        info.interrupt_remapping =
                procfs_interrupt_remapping(ctx, &info.irq_remapped, &info.irq_plain);

        r = sysfs_exists(ctx, "bus/pci/drivers/vfio-pci");
        info.vfio_pci_driver = r == 0 ? 1 : r == -ENOENT ? 0 : r;
        info.vfio_pci_module = procfs_module_loaded(ctx, "vfio_pci");
        info.modules_error = info.vfio_pci_module < 0 ? info.vfio_pci_module : 0;

        memcpy(ret_info, &info, sizeof(info));
        return 0;
}

_public_ int amdsmi_host_module_loaded(struct amdsmi_ctx *ctx, const char *module) {
        if (!ctx || !module || !*module)
                return -EINVAL;
        return procfs_module_loaded(ctx, module);
}

static bool is_bdf(const char *s) {
        unsigned d, b, dev, fn;
        char tail;

        return s && strlen(s) == 12 &&
               sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &dev, &fn, &tail) == 4;
}

_public_ int amdsmi_pci_read_iommu_group(struct amdsmi_ctx *ctx, const char *bdf,
                                         struct amdsmi_iommu_group *ret_group) {
        struct amdsmi_iommu_group g = { .group = -1 };
        _cleanup_strv_free_ char **devices = NULL;
        _cleanup_free_ char *name = NULL;
        char path[128];
        unsigned long n;
        char *end;
        int r;

        if (!ctx || !ret_group || !is_bdf(bdf))
                return -EINVAL;
        snprintf(path, sizeof(path), "bus/pci/devices/%s/iommu_group", bdf);
        r = sysfs_readlink_basename(ctx, path, &name);
        if (r < 0)
                return r;
        errno = 0;
        n = strtoul(name, &end, 10);
        if (!*name || *end || errno || n > INT32_MAX) {
                log_debug(ctx, "%s: \"%s\" is not an IOMMU group", path, name);
                return -EBADMSG;
        }
        g.group = (int) n;
        snprintf(path, sizeof(path), "kernel/iommu_groups/%lu/devices", n);
        r = sysfs_list_dir(ctx, path, NULL, &devices);
        if (r < 0)
                return r;
        g.n_devices = (unsigned) r;
        for (size_t i = 0; i < (size_t) r && i < AMDSMI_IOMMU_GROUP_DEVICES_MAX; i++)
                snprintf(g.devices[i], sizeof(g.devices[i]), "%s", devices[i]);
        *ret_group = g;
        return 0;
}

_public_ int amdsmi_host_read_module_param(struct amdsmi_ctx *ctx, const char *module,
                                           const char *param, char *buf, size_t size) {
        char path[256];

        if (!ctx || !module || !param || !buf || size == 0 || strchr(module, '/') ||
            strchr(param, '/') || !*module || !*param)
                return -EINVAL;
        snprintf(path, sizeof(path), "module/%s/parameters/%s", module, param);
        return sysfs_read_text(ctx, path, buf, size);
}
