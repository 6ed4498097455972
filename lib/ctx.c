/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "private.h"
#include "sysfs.h"

_public_ const char *amdsmi_version(void) {
        return PACKAGE_VERSION;
}

_printf_(3, 0) static void log_stderr(struct amdsmi_ctx *ctx, int priority, const char *format,
                                      va_list args, void *userdata) {
        fprintf(stderr, "libamdsmi: ");
        vfprintf(stderr, format, args);
        fputc('\n', stderr);
}

void amdsmi_log(struct amdsmi_ctx *ctx, int priority, const char *fmt, ...) {
        va_list ap;

        if (!ctx->log_fn || priority > ctx->log_priority)
                return;
        va_start(ap, fmt);
        ctx->log_fn(ctx, priority, fmt, ap, ctx->log_userdata);
        va_end(ap);
}

_public_ int amdsmi_ctx_new_with_roots(const char *sysfs_root, const char *dev_root,
                                       struct amdsmi_ctx **ret_ctx) {
        struct amdsmi_ctx *ctx;
        const char *debug = getenv("AMDSMI_DEBUG");

        if (sysfs_root && !*sysfs_root)
                return -EINVAL;
        ctx = calloc(1, sizeof(*ctx));
        if (!ctx)
                return -ENOMEM;
        ctx->n_ref = 1;
        ctx->root_fd = -1;
        ctx->log_priority = AMDSMI_LOG_WARNING;
        ctx->sysfs_root = strdup(sysfs_root ? sysfs_root : sysfs_default_root);
        ctx->dev_root = dev_root ? strdup(dev_root) : NULL;
        if (!ctx->sysfs_root || (dev_root && !ctx->dev_root)) {
                amdsmi_ctx_unref(ctx);
                return -ENOMEM;
        }
        /* "dir/" and "dir" are the same root */
        for (char *root = ctx->sysfs_root, *end = root + strlen(root) - 1;
             end > root && *end == '/'; end--)
                *end = '\0';
        if (debug && strcmp(debug, "1") == 0) {
                ctx->log_fn = log_stderr;
                ctx->log_priority = AMDSMI_LOG_DEBUG;
        }
        *ret_ctx = ctx;
        return 0;
}

_public_ int amdsmi_ctx_new(struct amdsmi_ctx **ret_ctx) {
        const char *sysfs_root = getenv("AMDSMI_SYSFS_ROOT");
        const char *dev_root = getenv("AMDSMI_DEV_ROOT");

        if (sysfs_root && !*sysfs_root)
                sysfs_root = NULL;
        if (dev_root && !*dev_root)
                dev_root = NULL;
        /* A snapshot tree never mixes with the real device nodes of this machine. */
        if (!dev_root && (!sysfs_root || sysfs_root_is_default(sysfs_root)))
                dev_root = devfs_default_root;
        return amdsmi_ctx_new_with_roots(sysfs_root, dev_root, ret_ctx);
}

_public_ struct amdsmi_ctx *amdsmi_ctx_ref(struct amdsmi_ctx *ctx) {
        if (ctx)
                ctx->n_ref++;
        return ctx;
}

static void ctx_clear_gpus(struct amdsmi_ctx *ctx) {
        for (size_t i = 0; i < ctx->n_gpus; i++) {
                /* the old partitions of a GPU that goes now go with it */
                if (ctx->gpus[i]->n_ref == 1)
                        kfd_free_retired(ctx, ctx->gpus[i]);
                amdsmi_gpu_unref(ctx->gpus[i]);
        }
        free(ctx->gpus);
        ctx->gpus = NULL;
        ctx->n_gpus = 0;
}

_public_ struct amdsmi_ctx *amdsmi_ctx_unref(struct amdsmi_ctx *ctx) {
        if (!ctx || --ctx->n_ref > 0)
                return NULL;
        ctx_clear_gpus(ctx);
        kfd_free_retired(ctx, NULL);
        sysfs_forget_kept(ctx);
        if (ctx->root_fd >= 0)
                close(ctx->root_fd);
        free(ctx->sysfs_root);
        free(ctx->dev_root);
        free(ctx);
        return NULL;
}

_public_ void amdsmi_ctx_set_log_fn(struct amdsmi_ctx *ctx, amdsmi_log_fn fn, void *userdata) {
        ctx->log_fn = fn;
        ctx->log_userdata = userdata;
}

_public_ void amdsmi_ctx_set_log_priority(struct amdsmi_ctx *ctx, int priority) {
        ctx->log_priority = priority;
}

_public_ int amdsmi_ctx_get_log_priority(struct amdsmi_ctx *ctx) {
        return ctx->log_priority;
}

_public_ const char *amdsmi_ctx_get_sysfs_root(struct amdsmi_ctx *ctx) {
        return ctx->sysfs_root;
}

_public_ const char *amdsmi_ctx_get_dev_root(struct amdsmi_ctx *ctx) {
        return ctx->dev_root;
}

/* Only AMD functions that are GPUs: display (0x03), processing accelerator (0x12) class, or a
 * device ID we know. Audio, USB and other AMD functions are left alone. The IDs read here are
 * handed to the GPU so that nothing is read twice. */
static int is_amd_gpu(struct amdsmi_ctx *ctx, const char *bdf, uint64_t ids[static 3]) {
        static const char *const files[] = { "vendor", "device", "class" };
        char path[128];
        int r;

        for (int i = 0; i < 3; i++) {
                snprintf(path, sizeof(path), "bus/pci/devices/%s/%s", bdf, files[i]);
                r = sysfs_read_u64(ctx, path, 16, &ids[i]);
                if (r < 0)
                        return r;
                if (i == 0 && ids[0] != 0x1002)
                        return 0;
        }
        if (ids[0] > UINT16_MAX || ids[1] > UINT16_MAX || ids[2] > 0xffffff)
                return -EBADMSG;
        if (product_from_device_id((uint16_t) ids[1]))
                return 1;
        return (ids[2] >> 16) == 0x03 || (ids[2] >> 16) == 0x12;
}

/* Physical functions first, then virtual functions, each in BDF order (a stable partition of
 * the BDF-sorted list), so that creating or removing VFs never renumbers the physical GPUs an
 * operator selects with -g N. The VF device ID tells them apart without another read. */
static int order_gpus(struct amdsmi_gpu **gpus, size_t n) {
        _cleanup_free_ struct amdsmi_gpu **tmp = NULL;
        size_t k = 0;

        if (n == 0)
                return 0;
        tmp = calloc(n, sizeof(*tmp));
        if (!tmp)
                return -ENOMEM;
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++)
                        if (device_is_vf(gpus[i]->device) == (pass == 1))
                                tmp[k++] = gpus[i];
        for (size_t i = 0; i < n; i++) {
                gpus[i] = tmp[i];
                gpus[i]->index = (unsigned) i;
        }
        return 0;
}

static uint64_t hash_listing(char **names) {
        uint64_t h = 1469598103934665603ULL;

        for (char **p = names; p && *p; p++)
                for (const char *c = *p;; c++) {
                        h = (h ^ (uint8_t) *c) * 1099511628211ULL;
                        if (!*c)
                                break;
                }
        return h;
}

static bool same_string(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_gpus(struct amdsmi_gpu **a, size_t n_a, struct amdsmi_gpu **b, size_t n_b) {
        if (n_a != n_b)
                return false;
        for (size_t i = 0; i < n_a; i++)
                if (strcmp(a[i]->bdf, b[i]->bdf) != 0 || a[i]->driver != b[i]->driver ||
                    !same_string(a[i]->hwmon_path, b[i]->hwmon_path))
                        return false;
        return true;
}

_public_ int amdsmi_ctx_enumerate(struct amdsmi_ctx *ctx) {
        _cleanup_strv_free_ char **names = NULL;
        struct amdsmi_gpu **gpus = NULL;
        size_t n = 0;
        int count, r;

        count = sysfs_list_dir(ctx, "bus/pci/devices", NULL, &names);
        if (count < 0) {
                log_warning(ctx, "cannot list %s/bus/pci/devices: %s", ctx->sysfs_root,
                            strerror(-count));
                return count;
        }
        if (count > 0) {
                gpus = calloc((size_t) count, sizeof(*gpus));
                if (!gpus)
                        return -ENOMEM;
        }
        for (int i = 0; i < count; i++) {
                struct amdsmi_gpu *gpu;
                uint64_t ids[3];

                r = is_amd_gpu(ctx, names[i], ids);
                if (r < 0) {
                        log_warning(ctx, "skipping PCI function %s: cannot read its IDs: %s",
                                    names[i], strerror(-r));
                        continue;
                }
                if (r == 0)
                        continue;
                gpu = gpu_new(ctx, names[i]);
                if (!gpu) {
                        r = -ENOMEM;
                        goto fail;
                }
                gpu->vendor = (uint16_t) ids[0];
                gpu->device = (uint16_t) ids[1];
                gpu->pci_class = (uint32_t) ids[2];
                r = gpu_probe(gpu);
                if (r < 0) {
                        log_warning(ctx, "skipping GPU %s: %s", names[i], strerror(-r));
                        amdsmi_gpu_unref(gpu);
                        continue;
                }
                gpus[n++] = gpu;
        }
        r = order_gpus(gpus, n);
        if (r < 0)
                goto fail;

        /* Telemetry files stay open across enumerations that find the same GPUs with the
         * same hwmon directories (amdsmid enumerates every few seconds); after any other
         * change they are all closed: a GPU that went away may come back with other hwmon
         * numbers, and a plain directory tree never fails a read of a file it replaced. */
        if (!same_gpus(ctx->gpus, ctx->n_gpus, gpus, n))
                sysfs_forget_kept(ctx);
        ctx_clear_gpus(ctx);
        ctx->gpus = gpus;
        ctx->n_gpus = n;
        ctx->pci_listing_hash = hash_listing(names);

        /* KFD nodes are mapped lazily (kfd_ensure_loaded()): telemetry never needs them. */
        ctx->kfd_loaded = false;
        r = kfd_read_generation(ctx, &ctx->kfd_generation);
        ctx->kfd_present = r >= 0;
        if (r < 0 && r != -ENOENT)
                log_warning(ctx, "KFD topology unreadable, partitions unknown: %s", strerror(-r));
        return (int) n;

fail:
        for (size_t i = 0; i < n; i++)
                amdsmi_gpu_unref(gpus[i]);
        free(gpus);
        return r;
}

_public_ int amdsmi_ctx_check_topology(struct amdsmi_ctx *ctx) {
        uint64_t gen;
        int r;

        r = kfd_read_generation(ctx, &gen);
        if (r == -ENOENT && !ctx->kfd_present)
                return 0;
        if (r < 0)
                return r == -ENOENT ? -ESTALE : r;
        if (!ctx->kfd_present || gen != ctx->kfd_generation)
                return -ESTALE;
        return 0;
}

_public_ int amdsmi_ctx_check_devices(struct amdsmi_ctx *ctx) {
        _cleanup_strv_free_ char **names = NULL;
        int r;

        r = sysfs_list_dir(ctx, "bus/pci/devices", NULL, &names);
        if (r < 0)
                return r;
        if (hash_listing(names) != ctx->pci_listing_hash)
                return -ESTALE;
        for (size_t i = 0; i < ctx->n_gpus; i++) {
                struct amdsmi_gpu *gpu = ctx->gpus[i];
                _cleanup_free_ char *driver = NULL;
                char path[256];

                snprintf(path, sizeof(path), "%s/driver", gpu->syspath);
                r = sysfs_readlink_basename(ctx, path, &driver);
                if (r < 0 && r != -ENOENT)
                        return r;
                if (!same_string(driver, gpu->driver_name))
                        return -ESTALE;
                /* a driver unbound and bound again between two checks: new hwmon files */
                if (gpu->hwmon_path && sysfs_exists(ctx, gpu->hwmon_path) < 0)
                        return -ESTALE;
        }
        return amdsmi_ctx_check_topology(ctx);
}

_public_ size_t amdsmi_ctx_get_gpu_count(struct amdsmi_ctx *ctx) {
        return ctx->n_gpus;
}

_public_ struct amdsmi_gpu *amdsmi_ctx_get_gpu(struct amdsmi_ctx *ctx, size_t index) {
        return index < ctx->n_gpus ? ctx->gpus[index] : NULL;
}
