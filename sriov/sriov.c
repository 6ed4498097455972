/* SPDX-License-Identifier: MIT */
/*
 * A PF's SR-IOV state as the PCI core shows it (spec amdgpu-sysfs §7.1, virtualization §2.1):
 * the sriov_* files, the VFs behind the virtfnN links, each VF's driver, driver_override and
 * IOMMU group, whether VFIO can take the group, and who holds the group's /dev/vfio node.
 *
 * Choices made here:
 * - The PF's driver is read again at each call (the driver link), not taken from
 *   enumeration: binding a PF to vfio-pci or to gim needs no new enumeration.
 * - How the VF count is set: gim → gim-param (its vf_num module parameter); no driver →
 *   no-driver (the kernel's ENOENT); any other driver → sysfs. No file tells whether a driver
 *   implements sriov_configure: vfio-pci does (with enable_sriov), upstream amdgpu does not,
 *   so for amdgpu "sysfs" means "the write decides" and amdsmi_gpu_set_num_vfs() turns the
 *   kernel's ENOENT into -EOPNOTSUPP with gim's explanation.
 * - gim's vf_num for a PF: gim numbers the GPUs it probes in probe order (PCI order) and takes
 *   vf_num's entry of that number, the last entry for the GPUs after the last one
 *   (gim_shim/gim_drv.c gim_probe, gim_config.c set_array_value). enabled_devices only
 *   filters which GPUs gim probes, so the PF's number is its place in PCI order among the
 *   enabled devices; without enabled_devices ("(null)" or empty: gim takes every GPU it
 *   knows) among the SR-IOV PFs bound to gim now. A PF outside enabled_devices (gim binds it
 *   and skips it), an empty vf_num (gim takes its saved configuration or its default) or an
 *   entry outside 1..31 (gim replaces it with its default) give -1: not known from sysfs.
 * - A guest's VF (role vf-guest-*) is the GPU that guest has, not a host VF: it is read like
 *   a PF and, having no sriov_* files, reads as not capable. Only a host VF (a physfn link,
 *   role vf) is refused with -EINVAL.
 * - A VFIO group is viable when every device in it is bound to vfio-pci, to pci-stub (the
 *   kernel lets it share a group with VFIO, see Documentation/driver-api/vfio.rst) or to no
 *   driver; bridges, which the kernel also allows, are not looked at. A VF without an IOMMU
 *   group is not viable.
 * - in_use: 1 when a process holds <dev root>/vfio/<group>, 0 when none does (or the node does
 *   not exist, or the VF has no group), -ENODATA when the context has no device root (device
 *   nodes are not looked at), -EACCES when no holder was found but some processes' fd
 *   directories could not be read (not root), or the errno of the /proc scan. One scan of
 *   /proc serves all the VFs of a PF.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse-util.h"
#include "procfs.h"
#include "runtime-dir.h"
#include "safe-open.h"
#include "sriov-private.h"
#include "sysfs.h"

/* gim's range of vf_num entries (gim_config.c: 1 <= Nx <= 31) */
#define GIM_VF_NUM_MIN 1
#define GIM_VF_NUM_MAX 31

static const char *const vf_config_names[_AMDSMI_VF_CONFIG_MAX] = {
        [AMDSMI_VF_CONFIG_UNKNOWN] = "unknown",     [AMDSMI_VF_CONFIG_SYSFS] = "sysfs",
        [AMDSMI_VF_CONFIG_GIM_PARAM] = "gim-param", [AMDSMI_VF_CONFIG_NO_DRIVER] = "no-driver",
        [AMDSMI_VF_CONFIG_NONE] = "none",
};

static const char *const stage_names[_AMDSMI_SRIOV_STAGE_MAX] = {
        [AMDSMI_SRIOV_STAGE_DONE] = "done",       [AMDSMI_SRIOV_STAGE_PREFLIGHT] = "preflight",
        [AMDSMI_SRIOV_STAGE_DISABLE] = "disable", [AMDSMI_SRIOV_STAGE_AUTOPROBE] = "autoprobe",
        [AMDSMI_SRIOV_STAGE_ENABLE] = "enable",   [AMDSMI_SRIOV_STAGE_SETTLE] = "settle",
        [AMDSMI_SRIOV_STAGE_VERIFY] = "verify",   [AMDSMI_SRIOV_STAGE_UNBIND] = "unbind",
        [AMDSMI_SRIOV_STAGE_PROBE] = "probe",
};

_public_ const char *amdsmi_vf_config_to_string(enum amdsmi_vf_config c) {
        if ((unsigned) c >= ELEMENTSOF(vf_config_names) || !vf_config_names[c])
                return "unknown";
        return vf_config_names[c];
}

_public_ const char *amdsmi_sriov_stage_to_string(enum amdsmi_sriov_stage s) {
        if ((unsigned) s >= ELEMENTSOF(stage_names) || !stage_names[s])
                return "unknown";
        return stage_names[s];
}

/* ---- small readers ---- */

static int dev_path(const char *bdf, const char *attr, char *buf, size_t size) {
        int n = snprintf(buf, size, "bus/pci/devices/%s%s%s", bdf, attr ? "/" : "",
                         attr ? attr : "");
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

/* The base name of a link below a device (driver, iommu_group) into buf: 0, -ENOENT when
 * there is no link, -EMSGSIZE when it does not fit. */
static int read_link_name(struct amdsmi_ctx *ctx, const char *path, char *buf, size_t size) {
        _cleanup_free_ char *name = NULL;
        int r;

        r = sysfs_readlink_basename(ctx, path, &name);
        if (r < 0)
                return r;
        if (strlen(name) >= size) {
                log_debug(ctx, "%s/%s: link name \"%s\" too long", ctx->sysfs_root, path, name);
                return -EMSGSIZE;
        }
        strcpy(buf, name);
        return 0;
}

/* The driver bound to a device, "" for none. */
static int read_driver(struct amdsmi_ctx *ctx, const char *bdf, char *buf, size_t size) {
        char path[128];
        int r;

        r = dev_path(bdf, "driver", path, sizeof(path));
        if (r < 0)
                return r;
        r = read_link_name(ctx, path, buf, size);
        if (r == -ENOENT) {
                buf[0] = '\0';
                return 0;
        }
        return r;
}

/* A numeric sriov_* file of a PF (base as sysfs_read_u64()), at most max. */
static int read_pf_uint(struct amdsmi_ctx *ctx, const char *bdf, const char *attr, int base,
                        uint64_t max, uint64_t *ret) {
        char path[128];
        uint64_t v;
        int r;

        r = dev_path(bdf, attr, path, sizeof(path));
        if (r < 0)
                return r;
        r = sysfs_read_u64(ctx, path, base, &v);
        if (r < 0)
                return r;
        if (v > max) {
                log_debug(ctx, "%s/%s: %llu out of range", ctx->sysfs_root, path,
                          (unsigned long long) v);
                return -ERANGE;
        }
        *ret = v;
        return 0;
}

/* Numeric PCI order of two addresses ("dddd:bb:dd.f"); 0 when equal. */
static int bdf_compare(const char *a, const char *b) {
        unsigned da, ba, sa, fa, db, bb, sb, fb;

        if (sscanf(a, "%x:%x:%x.%x", &da, &ba, &sa, &fa) != 4 ||
            sscanf(b, "%x:%x:%x.%x", &db, &bb, &sb, &fb) != 4)
                return strcmp(a, b);
        if (da != db)
                return da < db ? -1 : 1;
        if (ba != bb)
                return ba < bb ? -1 : 1;
        if (sa != sb)
                return sa < sb ? -1 : 1;
        if (fa != fb)
                return fa < fb ? -1 : 1;
        return 0;
}

/* ---- VFs ---- */

/* 1 if every device of the IOMMU group is bound to vfio-pci, pci-stub or nothing, 0 if not. */
static int group_viable(struct amdsmi_ctx *ctx, int group) {
        _cleanup_strv_free_ char **devices = NULL;
        char path[128];
        int n;

        snprintf(path, sizeof(path), "kernel/iommu_groups/%d/devices", group);
        n = sysfs_list_dir(ctx, path, NULL, &devices);
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                char link[192], driver[64];
                int r;

                snprintf(link, sizeof(link), "%s/%s/driver", path, devices[i]);
                r = read_link_name(ctx, link, driver, sizeof(driver));
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                if (strcmp(driver, "vfio-pci") != 0 && strcmp(driver, "pci-stub") != 0) {
                        log_debug(ctx, "iommu group %d: %s is bound to %s: not viable for VFIO",
                                  group, devices[i], driver);
                        return 0;
                }
        }
        return 1;
}

/* Everything of a VF but its VFIO users (in_use -ENODATA, no users). */
static int read_vf_sysfs(struct amdsmi_ctx *ctx, const char *bdf, unsigned index,
                         struct amdsmi_vf_info *ret) {
        struct amdsmi_vf_info vf = { .index = index, .iommu_group = -1, .in_use = -ENODATA };
        char path[128], text[64];
        int r;

        if (!pci_bdf_valid(bdf))
                return -EINVAL;
        snprintf(vf.bdf, sizeof(vf.bdf), "%s", bdf);
        r = dev_path(bdf, NULL, path, sizeof(path));
        if (r < 0)
                return r;
        r = sysfs_exists(ctx, path);
        if (r < 0)
                return r == -ENOENT ? -ENODEV : r;

        r = read_driver(ctx, bdf, vf.driver, sizeof(vf.driver));
        if (r < 0)
                return r;

        /* the kernel shows "(null)" for no override; kernels before 3.16 have no file */
        (void) dev_path(bdf, "driver_override", path, sizeof(path));
        r = sysfs_read_text(ctx, path, text, sizeof(text));
        if (r == -ENOENT)
                text[0] = '\0';
        else if (r < 0)
                return r;
        if (strcmp(text, "(null)") == 0)
                text[0] = '\0';
        if (strlen(text) >= sizeof(vf.driver_override)) {
                log_debug(ctx, "%s/%s: \"%s\" too long", ctx->sysfs_root, path, text);
                return -EMSGSIZE;
        }
        strcpy(vf.driver_override, text);

        (void) dev_path(bdf, "iommu_group", path, sizeof(path));
        r = read_link_name(ctx, path, text, sizeof(text));
        if (r >= 0) {
                int group;

                if (parse_int(text, &group) < 0 || group < 0) {
                        log_debug(ctx, "%s/%s: \"%s\" is not an IOMMU group", ctx->sysfs_root, path,
                                  text);
                        return -EBADMSG;
                }
                vf.iommu_group = group;
        } else if (r != -ENOENT)
                return r;

        if (vf.iommu_group >= 0) {
                r = group_viable(ctx, vf.iommu_group);
                if (r < 0)
                        return r;
                vf.vfio_viable = r > 0;
        }

        *ret = vf;
        return 0;
}

/* Fills in_use, n_users and users of n VFs with one scan of /proc (see the top). */
static void read_vfio_users(struct amdsmi_ctx *ctx, struct amdsmi_vf_info *vfs, size_t n) {
        _cleanup_free_ struct procfs_fd_user *users = NULL;
        _cleanup_free_ char **targets = NULL;
        _cleanup_free_ size_t *target_vf = NULL;
        size_t n_targets = 0, n_found = 0;
        unsigned denied = 0;
        int r;

        if (!ctx->dev_root) {
                for (size_t i = 0; i < n; i++)
                        vfs[i].in_use = -ENODATA;
                return;
        }
        targets = calloc(n + 1, sizeof(char *));
        target_vf = calloc(n + 1, sizeof(size_t));
        if (!targets || !target_vf) {
                for (size_t i = 0; i < n; i++)
                        vfs[i].in_use = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < n; i++) {
                char node[PATH_MAX], real[PATH_MAX];

                vfs[i].in_use = 0;
                vfs[i].n_users = 0;
                if (vfs[i].iommu_group < 0)
                        continue;
                snprintf(node, sizeof(node), "%s/vfio/%d", ctx->dev_root, vfs[i].iommu_group);
                /* the kernel names an open file by its resolved path */
                if (!realpath(node, real)) {
                        if (errno == ENOENT || errno == ENOTDIR)
                                continue; /* no node, no holder */
                        snprintf(real, sizeof(real), "%s", node);
                }
                targets[n_targets] = strdup(real);
                if (!targets[n_targets]) {
                        vfs[i].in_use = -ENOMEM;
                        continue;
                }
                target_vf[n_targets++] = i;
        }
        if (n_targets == 0)
                goto finish;

        r = procfs_find_fd_users(ctx, (const char *const *) targets, n_targets, &users, &n_found,
                                 &denied);
        if (r < 0) {
                for (size_t t = 0; t < n_targets; t++)
                        vfs[target_vf[t]].in_use = r;
                goto finish;
        }
        for (size_t u = 0; u < n_found; u++) {
                struct amdsmi_vf_info *vf = &vfs[target_vf[users[u].target]];

                if (vf->n_users < AMDSMI_SRIOV_MAX_USERS) {
                        struct amdsmi_vfio_user *user = &vf->users[vf->n_users];

                        user->pid = users[u].pid;
                        if (procfs_read_comm(ctx, users[u].pid, user->comm, sizeof(user->comm)) < 0)
                                user->comm[0] = '\0'; /* gone meanwhile */
                }
                vf->n_users++;
                vf->in_use = 1;
        }
        if (denied > 0)
                for (size_t t = 0; t < n_targets; t++)
                        if (vfs[target_vf[t]].in_use == 0)
                                vfs[target_vf[t]].in_use = -EACCES;

finish:
        if (targets)
                for (size_t t = 0; t < n_targets; t++)
                        free(targets[t]);
}

int sriov_read_vf(struct amdsmi_ctx *ctx, const char *bdf, unsigned index,
                  struct amdsmi_vf_info *ret) {
        struct amdsmi_vf_info vf;
        int r;

        r = read_vf_sysfs(ctx, bdf, index, &vf);
        if (r < 0)
                return r;
        read_vfio_users(ctx, &vf, 1);
        *ret = vf;
        return 0;
}

/* ---- gim ---- */

/* Whether bdf is one of the ';'-separated addresses (compared as gim does: exactly). */
static bool list_has(const char *list, const char *bdf) {
        size_t len = strlen(bdf);

        for (const char *p = list; p;) {
                const char *end = strchr(p, ';');
                size_t n = end ? (size_t) (end - p) : strlen(p);

                if (n == len && strncmp(p, bdf, len) == 0)
                        return true;
                p = end ? end + 1 : NULL;
        }
        return false;
}

/* The number gim gave the PF at probe (see the top), or -1. */
static int gim_pf_number(struct amdsmi_ctx *ctx, const char *bdf) {
        _cleanup_strv_free_ char **bound = NULL;
        char devices[SYSFS_TEXT_MAX];
        int r, n, number = 0;

        r = sysfs_read_text(ctx, "module/gim/parameters/enabled_devices", devices, sizeof(devices));
        if (r < 0 || strcmp(devices, "(null)") == 0)
                devices[0] = '\0';

        if (devices[0]) {
                char *save = NULL;

                if (!list_has(devices, bdf))
                        return -1; /* gim binds it and skips it */
                /* the listed devices before it in PCI order, each once */
                for (char *tok = strtok_r(devices, ";", &save); tok;
                     tok = strtok_r(NULL, ";", &save)) {
                        bool seen = false;

                        if (!pci_bdf_valid(tok) || bdf_compare(tok, bdf) >= 0)
                                continue;
                        for (const char *p = devices; p < tok;) {
                                if (*p == ';') { /* strtok_r skips empty entries */
                                        p++;
                                        continue;
                                }
                                if (strcmp(p, tok) == 0)
                                        seen = true;
                                p += strlen(p) + 1;
                        }
                        if (!seen)
                                number++;
                }
                return number;
        }

        /* every SR-IOV PF gim holds now */
        n = sysfs_list_dir(ctx, "bus/pci/drivers/gim", NULL, &bound);
        if (n < 0)
                return -1;
        for (int i = 0; i < n; i++) {
                char path[128];

                if (!pci_bdf_valid(bound[i]) || bdf_compare(bound[i], bdf) >= 0)
                        continue;
                if (dev_path(bound[i], "sriov_totalvfs", path, sizeof(path)) < 0 ||
                    sysfs_exists(ctx, path) < 0)
                        continue;
                number++;
        }
        return number;
}

/* gim's vf_num for the PF, -1 when not known. */
static int gim_vf_num(struct amdsmi_ctx *ctx, const char *bdf) {
        char text[SYSFS_TEXT_MAX], *save = NULL;
        const char *entry = NULL;
        int number, i = 0;
        uint32_t v;

        number = gim_pf_number(ctx, bdf);
        if (number < 0)
                return -1;
        if (sysfs_read_text(ctx, "module/gim/parameters/vf_num", text, sizeof(text)) < 0)
                return -1;
        /* the entry of that number, or the last one: gim repeats it for the GPUs after it */
        for (char *tok = strtok_r(text, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                entry = tok;
                if (i++ == number)
                        break;
        }
        if (!entry)
                return -1; /* not given: gim's saved configuration or default */
        if (parse_u32(entry, 10, &v) < 0 || v < GIM_VF_NUM_MIN || v > GIM_VF_NUM_MAX) {
                log_debug(ctx, "%s/module/gim/parameters/vf_num: \"%s\" is not a VF count",
                          ctx->sysfs_root, entry);
                return -1;
        }
        return (int) v;
}

/* ---- the PF ---- */

struct virtfn {
        unsigned n;
        char *name;
};

static int cmp_virtfn(const void *a, const void *b) {
        const struct virtfn *x = a, *y = b;

        return x->n < y->n ? -1 : x->n > y->n;
}

/* The VFs of a PF in virtfn order (at most AMDSMI_SRIOV_MAX_VFS). */
static int read_vfs(struct amdsmi_ctx *ctx, const char *pf, struct amdsmi_sriov_info *info) {
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ struct virtfn *links = NULL;
        char path[128];
        size_t n_links = 0;
        int r, n;

        (void) dev_path(pf, NULL, path, sizeof(path));
        n = sysfs_list_dir(ctx, path, "virtfn", &names);
        if (n < 0)
                return n == -ENOENT ? -ENODEV : n;
        links = calloc((size_t) n + 1, sizeof(*links));
        if (!links)
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                uint32_t v;

                if (parse_u32(names[i] + strlen("virtfn"), 10, &v) < 0)
                        continue;
                links[n_links++] = (struct virtfn){ .n = v, .name = names[i] };
        }
        qsort(links, n_links, sizeof(*links), cmp_virtfn);
        if (n_links > AMDSMI_SRIOV_MAX_VFS)
                log_debug(ctx, "%s/%s: %zu VFs, listing the first %d", ctx->sysfs_root, path,
                          n_links, AMDSMI_SRIOV_MAX_VFS);

        info->n_vfs = 0;
        for (size_t i = 0; i < n_links && info->n_vfs < AMDSMI_SRIOV_MAX_VFS; i++) {
                char link[160], vf[32];

                snprintf(link, sizeof(link), "%s/%s", path, links[i].name);
                r = read_link_name(ctx, link, vf, sizeof(vf));
                if (r == -ENOENT)
                        continue; /* the VFs are being removed */
                if (r < 0)
                        return r;
                if (!pci_bdf_valid(vf)) {
                        log_debug(ctx, "%s/%s: \"%s\" is not a PCI address", ctx->sysfs_root, link,
                                  vf);
                        continue;
                }
                r = read_vf_sysfs(ctx, vf, links[i].n, &info->vfs[info->n_vfs]);
                if (r == -ENODEV)
                        continue; /* gone since the link was read */
                if (r < 0)
                        return r;
                info->n_vfs++;
        }
        read_vfio_users(ctx, info->vfs, info->n_vfs);
        return 0;
}

_public_ int amdsmi_gpu_read_sriov(struct amdsmi_gpu *gpu, struct amdsmi_sriov_info *ret_info) {
        _cleanup_free_ struct amdsmi_sriov_info *info = NULL;
        struct amdsmi_ctx *ctx = gpu->ctx;
        char path[128];
        uint64_t v;
        int r;

        if (ret_info->size < sizeof(struct amdsmi_sriov_info))
                return -EINVAL;
        if (amdsmi_gpu_get_role(gpu) == AMDSMI_ROLE_VF)
                return -EINVAL;

        info = calloc(1, sizeof(*info));
        if (!info)
                return -ENOMEM;
        info->size = ret_info->size;
        info->drivers_autoprobe = -1;
        info->gim_vf_num = -1;
        info->config = AMDSMI_VF_CONFIG_NONE;

        r = dev_path(gpu->bdf, NULL, path, sizeof(path));
        if (r < 0)
                return r;
        r = sysfs_exists(ctx, path);
        if (r < 0)
                return r == -ENOENT ? -ENODEV : r;
        r = read_driver(ctx, gpu->bdf, info->pf_driver, sizeof(info->pf_driver));
        if (r < 0)
                return r;

        r = read_pf_uint(ctx, gpu->bdf, "sriov_totalvfs", 10, UINT16_MAX, &v);
        if (r == -ENOENT)
                goto done; /* no SR-IOV capability (or a guest's VF) */
        if (r < 0)
                return r;
        info->capable = true;
        info->total_vfs = (unsigned) v;
        r = read_pf_uint(ctx, gpu->bdf, "sriov_numvfs", 10, UINT16_MAX, &v);
        if (r < 0)
                return r == -ENOENT ? -ENODEV : r;
        info->num_vfs = (unsigned) v;
        r = read_pf_uint(ctx, gpu->bdf, "sriov_offset", 10, UINT16_MAX, &v);
        if (r < 0)
                return r == -ENOENT ? -ENODEV : r;
        info->offset = (unsigned) v;
        r = read_pf_uint(ctx, gpu->bdf, "sriov_stride", 10, UINT16_MAX, &v);
        if (r < 0)
                return r == -ENOENT ? -ENODEV : r;
        info->stride = (unsigned) v;
        r = read_pf_uint(ctx, gpu->bdf, "sriov_vf_device", 16, UINT16_MAX, &v);
        if (r < 0)
                return r == -ENOENT ? -ENODEV : r;
        info->vf_device = (uint16_t) v;
        if (read_pf_uint(ctx, gpu->bdf, "sriov_drivers_autoprobe", 10, 1, &v) == 0)
                info->drivers_autoprobe = (int) v;

        if (strcmp(info->pf_driver, "gim") == 0) {
                info->config = AMDSMI_VF_CONFIG_GIM_PARAM;
                info->gim_vf_num = gim_vf_num(ctx, gpu->bdf);
        } else if (!info->pf_driver[0])
                info->config = AMDSMI_VF_CONFIG_NO_DRIVER;
        else
                info->config = AMDSMI_VF_CONFIG_SYSFS;

        r = read_vfs(ctx, gpu->bdf, info);
        if (r < 0)
                return r;

done:
        memcpy(ret_info, info, sizeof(*info));
        return 0;
}

/* ---- the driver a VF had before vfio-pci ---- */

static int remember_path(const char *bdf, char *dir, size_t dir_size, char *path,
                         size_t path_size) {
        char rt[PATH_MAX];
        int r, n;

        if (!pci_bdf_valid(bdf))
                return -EINVAL;
        r = runtime_dir(rt, sizeof(rt));
        if (r < 0)
                return r;
        n = snprintf(dir, dir_size, "%s/sriov", rt);
        if (n < 0 || (size_t) n >= dir_size)
                return -ENAMETOOLONG;
        n = snprintf(path, path_size, "%s/%s", dir, bdf);
        if (n < 0 || (size_t) n >= path_size)
                return -ENAMETOOLONG;
        return 0;
}

/* A driver name as the kernel names drivers: no '/', no newline, not "." or "..". */
static bool driver_name_valid(const char *driver) {
        if (strlen(driver) >= 64 || strcmp(driver, ".") == 0 || strcmp(driver, "..") == 0)
                return false;
        for (const char *p = driver; *p; p++)
                if (*p == '/' || *p == '\n' || (unsigned char) *p < ' ')
                        return false;
        return true;
}

int sriov_remember_driver(const char *bdf, const char *driver) {
        _cleanup_free_ char *text = NULL;
        char dir[PATH_MAX], path[PATH_MAX + 32];
        int r, len;

        if (!driver || !driver_name_valid(driver))
                return -EINVAL;
        r = remember_path(bdf, dir, sizeof(dir), path, sizeof(path));
        if (r < 0)
                return r;
        r = runtime_dir_mkdir(dir);
        if (r < 0)
                return r;
        len = asprintf(&text, "%s\n", driver);
        if (len < 0) {
                text = NULL;
                return -ENOMEM;
        }
        return write_file_atomic(path, text, (size_t) len, 0644);
}

/* 0 with the driver ("" for none), -ENOENT when nothing is remembered, -EBADMSG when the file
 * is not one this file wrote, -EMSGSIZE when the name does not fit in size. */
int sriov_recall_driver(const char *bdf, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        char dir[PATH_MAX], path[PATH_MAX + 32], text[128];
        ssize_t n;
        size_t len;
        int r;

        if (size == 0)
                return -EINVAL;
        r = remember_path(bdf, dir, sizeof(dir), path, sizeof(path));
        if (r < 0)
                return r;
        /* a FIFO, link or directory there: -EBADFD, -ELOOP, -EISDIR (safe-open.h) */
        fd = safe_open(path, O_RDONLY, 0, 0);
        if (fd < 0)
                return fd;
        do
                n = read(fd, text, sizeof(text) - 1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        text[n] = '\0';
        len = (size_t) n;
        if (len == 0 || text[len - 1] != '\n')
                return -EBADMSG;
        text[--len] = '\0';
        if (strlen(text) != len || (len > 0 && !driver_name_valid(text)))
                return -EBADMSG;
        if (len >= size)
                return -EMSGSIZE;
        memcpy(buf, text, len + 1);
        return 0;
}

const char *sriov_recall_error(const char *bdf, int r, char *buf, size_t size) {
        char dir[PATH_MAX], path[PATH_MAX + 32];

        if (remember_path(bdf, dir, sizeof(dir), path, sizeof(path)) < 0) {
                (void) snprintf(buf, size, "%s", strerror(-r));
                return buf;
        }
        return safe_open_message(path, r, buf, size);
}

/* 0, also when nothing was remembered. */
int sriov_forget_driver(const char *bdf) {
        char dir[PATH_MAX], path[PATH_MAX + 32];
        int r;

        r = remember_path(bdf, dir, sizeof(dir), path, sizeof(path));
        if (r < 0)
                return r;
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}
