/* SPDX-License-Identifier: MIT */
/* Live telemetry reads: the amdgpu hwmon directory, busy counters, the gpu_metrics blob. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "private.h"
#include "sysfs.h"

/* gpu_metrics 1.8 is 3872 bytes, 1.9 about 1.2 KiB; room for growth (the kernel now serves it
 * as a binary attribute that may pass a page) */
#define GPU_METRICS_MAX 8192

static int cmp_name(const void *key, const void *elem) {
        return strcmp(key, *(char *const *) elem);
}

/* names: the sorted listing of dir, or NULL if not listed; an attribute not in the listing
 * is absent without an open(). Files stay open for the next sample (sysfs_read_i64_live). */
static void read_sensor(struct amdsmi_gpu *gpu, const char *dir, char **names, const char *attr,
                        struct amdsmi_sensor *s) {
        char path[320];
        int64_t v;
        int r;

        if (names && !bsearch(attr, names, strv_length(names), sizeof(char *), cmp_name)) {
                *s = (struct amdsmi_sensor){ .value = 0, .error = -ENODATA };
                return;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, attr);
        r = sysfs_read_i64_live(gpu->ctx, path, &v);
        if (r == -ENOENT || r == -ENODEV) {
                /* listed but gone: the hwmon directory went away, list it again next time */
                if (names && names == gpu->hwmon_names)
                        gpu->hwmon_listing_stale = true;
                *s = (struct amdsmi_sensor){ .value = 0, .error = -ENODATA };
                return;
        }
        if (r < 0) {
                /* An empty value is what the driver gives when the SMU query failed. */
                log_warning(gpu->ctx, "%s/%s: %s", gpu->ctx->sysfs_root, path,
                            r == -ENOMSG    ? "empty value (SMU query failed)"
                            : r == -EBADMSG ? "not a number"
                                            : strerror(-r));
                *s = (struct amdsmi_sensor){ .value = 0, .error = r };
                return;
        }
        *s = (struct amdsmi_sensor){ .value = v, .error = 0 };
}

static void mark_absent(struct amdsmi_sensor *s) {
        *s = (struct amdsmi_sensor){ .value = 0, .error = -ENODATA };
}

/* Channels N of "<prefix>N_input" present in the hwmon directory, ascending. */
static int list_channels(char **names, const char *prefix, unsigned *out, unsigned max) {
        size_t plen = strlen(prefix);
        unsigned n = 0;

        for (char **p = names; p && *p; p++) {
                unsigned ch;
                char tail[16];

                if (strncmp(*p, prefix, plen) != 0)
                        continue;
                if (sscanf(*p + plen, "%u%15s", &ch, tail) != 2 || strcmp(tail, "_input") != 0)
                        continue;
                if (n < max)
                        out[n++] = ch;
        }
        /* names are sorted as strings: temp10 before temp2; sort numerically */
        for (unsigned i = 1; i < n; i++)
                for (unsigned j = i; j > 0 && out[j - 1] > out[j]; j--) {
                        unsigned t = out[j];
                        out[j] = out[j - 1];
                        out[j - 1] = t;
                }
        return (int) n;
}

static void read_label(struct amdsmi_gpu *gpu, const char *dir, char **names, const char *prefix,
                       unsigned ch, char *buf, size_t size) {
        char path[320], attr[32];

        buf[0] = '\0';
        snprintf(attr, sizeof(attr), "%s%u_label", prefix, ch);
        if (!bsearch(attr, names, strv_length(names), sizeof(char *), cmp_name))
                return;
        snprintf(path, sizeof(path), "%s/%s", dir, attr);
        if (sysfs_read_text_live(gpu->ctx, path, buf, size) < 0)
                buf[0] = '\0';
}

/* The hwmon directory's listing and whether power1_cap is writable: fixed for a driver
 * instance, so read once per GPU object (each enumeration makes new ones) and again only when
 * a listed file went away. */
static int load_hwmon_listing(struct amdsmi_gpu *gpu) {
        char **names = NULL, path[320];
        int n;

        if (gpu->hwmon_names && !gpu->hwmon_listing_stale)
                return 0;
        n = sysfs_list_dir(gpu->ctx, gpu->hwmon_path, NULL, &names);
        if (n < 0)
                return n;
        strv_free(gpu->hwmon_names);
        gpu->hwmon_names = names;
        gpu->hwmon_listing_stale = false;
        snprintf(path, sizeof(path), "%s/power1_cap", gpu->hwmon_path);
        gpu->hwmon_cap_writable = sysfs_is_writable(gpu->ctx, path) > 0;
        return 0;
}

static bool settled(const struct amdsmi_sensor *s) {
        return s->error == 0 || s->error == -ENODATA;
}

/* The first read of a GPU object: every file of the directory. What does not change while
 * the driver is bound (labels, cap ranges and defaults, temperature limits) is remembered in
 * gpu->hwmon_fixed when it read cleanly, and which channel carries sclk, mclk and vddboard in
 * gpu->hwmon_*_attr, so that later reads (read_live()) read only what moves. */
static void read_all(struct amdsmi_gpu *gpu, const char *dir, char **names, struct amdsmi_hwmon *h) {
        unsigned chans[AMDSMI_MAX_TEMPS];
        bool clean = true;
        int n;
        struct {
                const char *attr;
                struct amdsmi_sensor *s;
        } fixed[] = {
                { "power1_input", &h->power_uw },
                { "power1_cap", &h->power_cap_uw },
                { "power1_cap_min", &h->power_cap_min_uw },
                { "power1_cap_max", &h->power_cap_max_uw },
                { "power1_cap_default", &h->power_cap_default_uw },
                { "power2_cap", &h->ppt1_cap_uw },
                { "power2_cap_min", &h->ppt1_cap_min_uw },
                { "power2_cap_max", &h->ppt1_cap_max_uw },
                { "power2_cap_default", &h->ppt1_cap_default_uw },
        };

        for (size_t i = 0; i < ELEMENTSOF(fixed); i++) {
                read_sensor(gpu, dir, names, fixed[i].attr, fixed[i].s);
                if (i != 0 && i != 1 && i != 5)
                        clean = clean && settled(fixed[i].s);
        }
        h->power_cap_writable = gpu->hwmon_cap_writable;
        gpu->hwmon_sclk_attr[0] = gpu->hwmon_mclk_attr[0] = gpu->hwmon_vddboard_attr[0] = '\0';

        /* freqN and inN by label: the driver numbers them per ASIC. */
        n = list_channels(names, "freq", chans, AMDSMI_MAX_TEMPS);
        for (int i = 0; i < n; i++) {
                char label[32], attr[32];
                read_label(gpu, dir, names, "freq", chans[i], label, sizeof(label));
                snprintf(attr, sizeof(attr), "freq%u_input", chans[i]);
                if (strcmp(label, "sclk") == 0) {
                        read_sensor(gpu, dir, names, attr, &h->sclk_hz);
                        snprintf(gpu->hwmon_sclk_attr, sizeof(gpu->hwmon_sclk_attr), "%s", attr);
                } else if (strcmp(label, "mclk") == 0) {
                        read_sensor(gpu, dir, names, attr, &h->mclk_hz);
                        snprintf(gpu->hwmon_mclk_attr, sizeof(gpu->hwmon_mclk_attr), "%s", attr);
                }
        }
        n = list_channels(names, "in", chans, AMDSMI_MAX_TEMPS);
        for (int i = 0; i < n; i++) {
                char label[32], attr[32];
                read_label(gpu, dir, names, "in", chans[i], label, sizeof(label));
                snprintf(attr, sizeof(attr), "in%u_input", chans[i]);
                if (strcmp(label, "vddboard") == 0) {
                        read_sensor(gpu, dir, names, attr, &h->vddboard_mv);
                        snprintf(gpu->hwmon_vddboard_attr, sizeof(gpu->hwmon_vddboard_attr), "%s",
                                 attr);
                }
        }
        n = list_channels(names, "temp", chans, AMDSMI_MAX_TEMPS);
        for (int i = 0; i < n; i++) {
                struct amdsmi_temp_channel *t = &h->temps[h->n_temps++];
                char attr[32];

                t->channel = chans[i];
                read_label(gpu, dir, names, "temp", chans[i], t->label, sizeof(t->label));
                snprintf(attr, sizeof(attr), "temp%u_input", chans[i]);
                read_sensor(gpu, dir, names, attr, &t->input);
                snprintf(attr, sizeof(attr), "temp%u_crit", chans[i]);
                read_sensor(gpu, dir, names, attr, &t->crit);
                snprintf(attr, sizeof(attr), "temp%u_crit_hyst", chans[i]);
                read_sensor(gpu, dir, names, attr, &t->crit_hyst);
                snprintf(attr, sizeof(attr), "temp%u_emergency", chans[i]);
                read_sensor(gpu, dir, names, attr, &t->emergency);
                clean = clean && settled(&t->crit) && settled(&t->crit_hyst) &&
                        settled(&t->emergency);
        }
        /* a limit that failed to read (an SMU hiccup) is read again next time */
        gpu->hwmon_fixed = *h;
        gpu->hwmon_fixed_loaded = clean && !gpu->hwmon_listing_stale;
}

/* Later reads: the fixed part from the first one, the moving values read again. */
static void read_live(struct amdsmi_gpu *gpu, const char *dir, char **names, struct amdsmi_hwmon *h) {
        *h = gpu->hwmon_fixed;
        read_sensor(gpu, dir, names, "power1_input", &h->power_uw);
        read_sensor(gpu, dir, names, "power1_cap", &h->power_cap_uw);
        read_sensor(gpu, dir, names, "power2_cap", &h->ppt1_cap_uw);
        if (gpu->hwmon_sclk_attr[0])
                read_sensor(gpu, dir, names, gpu->hwmon_sclk_attr, &h->sclk_hz);
        if (gpu->hwmon_mclk_attr[0])
                read_sensor(gpu, dir, names, gpu->hwmon_mclk_attr, &h->mclk_hz);
        if (gpu->hwmon_vddboard_attr[0])
                read_sensor(gpu, dir, names, gpu->hwmon_vddboard_attr, &h->vddboard_mv);
        for (unsigned i = 0; i < h->n_temps; i++) {
                char attr[32];

                snprintf(attr, sizeof(attr), "temp%u_input", h->temps[i].channel);
                read_sensor(gpu, dir, names, attr, &h->temps[i].input);
        }
        if (gpu->hwmon_listing_stale)
                gpu->hwmon_fixed_loaded = false;
}

_public_ int amdsmi_gpu_read_hwmon(struct amdsmi_gpu *gpu, struct amdsmi_hwmon *ret_hwmon) {
        struct amdsmi_hwmon h = { 0 };
        const char *dir = gpu->hwmon_path;
        int r;

        mark_absent(&h.power_uw);
        mark_absent(&h.power_cap_uw);
        mark_absent(&h.power_cap_min_uw);
        mark_absent(&h.power_cap_max_uw);
        mark_absent(&h.power_cap_default_uw);
        mark_absent(&h.ppt1_cap_uw);
        mark_absent(&h.ppt1_cap_min_uw);
        mark_absent(&h.ppt1_cap_max_uw);
        mark_absent(&h.ppt1_cap_default_uw);
        mark_absent(&h.sclk_hz);
        mark_absent(&h.mclk_hz);
        mark_absent(&h.vddboard_mv);

        if (dir) {
                bool relisted = !gpu->hwmon_names || gpu->hwmon_listing_stale;

                r = load_hwmon_listing(gpu);
                if (r < 0) {
                        log_warning(gpu->ctx, "%s/%s: %s", gpu->ctx->sysfs_root, dir, strerror(-r));
                        return r;
                }
                h.present = 1;
                if (gpu->hwmon_fixed_loaded && !relisted)
                        read_live(gpu, dir, gpu->hwmon_names, &h);
                else
                        read_all(gpu, dir, gpu->hwmon_names, &h);
        }

        read_sensor(gpu, gpu->syspath, NULL, "gpu_busy_percent", &h.gpu_busy_percent);
        read_sensor(gpu, gpu->syspath, NULL, "mem_busy_percent", &h.mem_busy_percent);
        *ret_hwmon = h;
        return 0;
}

_public_ int amdsmi_gpu_read_metrics(struct amdsmi_gpu *gpu,
                                     struct amdsmi_gpu_metrics *ret_metrics) {
        uint8_t buf[GPU_METRICS_MAX];
        char path[256];
        ssize_t n;
        int r;

        snprintf(path, sizeof(path), "%s/gpu_metrics", gpu->syspath);
        n = sysfs_read_binary_live(gpu->ctx, path, buf, sizeof(buf));
        if (n == -ENOENT)
                return -ENODATA;
        if (n < 0) {
                log_warning(gpu->ctx, "%s/%s: %s", gpu->ctx->sysfs_root, path, strerror((int) -n));
                return (int) n;
        }
        r = amdsmi_gpu_metrics_parse(buf, (size_t) n, ret_metrics);
        if (r < 0)
                log_warning(gpu->ctx, "%s/%s: %s (%zd bytes, revision %u.%u)", gpu->ctx->sysfs_root,
                            path,
                            r == -EOPNOTSUPP ? "unsupported gpu_metrics revision"
                                             : "malformed gpu_metrics table",
                            n, n >= 3 ? buf[2] : 0, n >= 4 ? buf[3] : 0);
        return r;
}

/* A table that cannot be parsed: logged with its path, and the reason for the caller. */
static void report_invalid(struct amdsmi_ctx *ctx, const char *path, int r, const char *why,
                           ssize_t n, char *ret_reason, size_t reason_size) {
        char msg[256];

        snprintf(msg, sizeof(msg), "%s%s", r == -EBADMSG ? "malformed table: " : "", why);
        log_warning(ctx, "%s/%s: %s (%zd bytes)", ctx->sysfs_root, path, msg, n);
        if (ret_reason && reason_size > 0)
                snprintf(ret_reason, reason_size, "%s", msg);
}

_public_ int amdsmi_gpu_read_metrics_ext(struct amdsmi_gpu *gpu,
                                         struct amdsmi_gpu_metrics_ext *ret_metrics,
                                         char *ret_reason, size_t reason_size) {
        uint8_t buf[GPU_METRICS_MAX];
        char path[256], why[160];
        ssize_t n;
        int r;

        if (ret_reason && reason_size > 0)
                ret_reason[0] = '\0';
        if (!gpu || !ret_metrics || ret_metrics->size < sizeof(*ret_metrics))
                return -EINVAL;
        snprintf(path, sizeof(path), "%s/gpu_metrics", gpu->syspath);
        n = sysfs_read_binary_live(gpu->ctx, path, buf, sizeof(buf));
        if (n == -ENOENT)
                return -ENODATA;
        if (n < 0) {
                log_warning(gpu->ctx, "%s/%s: %s", gpu->ctx->sysfs_root, path, strerror((int) -n));
                return (int) n;
        }
        /* every GPU this library knows has SMU 13.0.6 or 13.0.12: the T3 numbering */
        ret_metrics->ids = AMDSMI_METRICS_IDS_T3;
        r = amdsmi_gpu_metrics_parse_ext(buf, (size_t) n, ret_metrics, why, sizeof(why));
        if (r < 0)
                report_invalid(gpu->ctx, path, r, why, n, ret_reason, reason_size);
        return r;
}

_public_ int amdsmi_partition_read_metrics(struct amdsmi_partition *part,
                                           struct amdsmi_partition_metrics *ret_metrics,
                                           char *ret_reason, size_t reason_size) {
        uint8_t buf[GPU_METRICS_MAX];
        char path[256], why[160];
        struct amdsmi_ctx *ctx;
        ssize_t n;
        int r;

        if (ret_reason && reason_size > 0)
                ret_reason[0] = '\0';
        if (!part || !ret_metrics || ret_metrics->size < sizeof(*ret_metrics))
                return -EINVAL;
        r = amdsmi_partition_check(part);
        if (r < 0)
                return r;
        ctx = part->gpu->ctx;
        /* Partition 0 is the PCI function's; the others live on their amdgpu_xcp_K platform
         * device (the kernel adds the xcp kobject under the partition's DRM device), which
         * the partition's render node leads to. */
        if (part->index == 0)
                snprintf(path, sizeof(path), "%s/xcp/xcp_metrics", part->gpu->syspath);
        else if (part->render_minor >= 0)
                snprintf(path, sizeof(path), "class/drm/renderD%d/device/xcp/xcp_metrics",
                         part->render_minor);
        else
                return -ENODATA;
        n = sysfs_read_binary_live(ctx, path, buf, sizeof(buf));
        if (n == -ENOENT)
                return -ENODATA;
        if (n < 0) {
                log_warning(ctx, "%s/%s: %s", ctx->sysfs_root, path, strerror((int) -n));
                return (int) n;
        }
        r = amdsmi_partition_metrics_parse(buf, (size_t) n, ret_metrics, why, sizeof(why));
        if (r < 0)
                report_invalid(ctx, path, r, why, n, ret_reason, reason_size);
        return r;
}
