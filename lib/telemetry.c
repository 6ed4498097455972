/* SPDX-License-Identifier: MIT */
/* Live telemetry reads: the amdgpu hwmon directory, busy counters, the gpu_metrics blob. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "private.h"
#include "sysfs.h"

#define GPU_METRICS_MAX 4096

static int cmp_name(const void *key, const void *elem) {
        return strcmp(key, *(char *const *) elem);
}

/* names: the sorted listing of dir, or NULL if not listed; an attribute not in the listing
 * is absent without an open(). */
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
        r = sysfs_read_i64(gpu->ctx, path, &v);
        if (r == -ENOENT) {
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
        if (sysfs_read_text(gpu->ctx, path, buf, size) < 0)
                buf[0] = '\0';
}

_public_ int amdsmi_gpu_read_hwmon(struct amdsmi_gpu *gpu, struct amdsmi_hwmon *ret_hwmon) {
        _cleanup_strv_free_ char **names = NULL;
        struct amdsmi_hwmon h = { 0 };
        const char *dir = gpu->hwmon_path;
        char path[320];
        unsigned chans[AMDSMI_MAX_TEMPS];
        int n, r;

        struct {
                const char *attr;
                struct amdsmi_sensor *s;
        } fixed[] = {
                { "power1_input", &h.power_uw },
                { "power1_cap", &h.power_cap_uw },
                { "power1_cap_min", &h.power_cap_min_uw },
                { "power1_cap_max", &h.power_cap_max_uw },
                { "power1_cap_default", &h.power_cap_default_uw },
                { "power2_cap", &h.ppt1_cap_uw },
                { "power2_cap_min", &h.ppt1_cap_min_uw },
                { "power2_cap_max", &h.ppt1_cap_max_uw },
                { "power2_cap_default", &h.ppt1_cap_default_uw },
        };

        for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                mark_absent(fixed[i].s);
        mark_absent(&h.sclk_hz);
        mark_absent(&h.mclk_hz);
        mark_absent(&h.vddboard_mv);

        if (dir) {
                n = sysfs_list_dir(gpu->ctx, dir, NULL, &names);
                if (n < 0) {
                        log_warning(gpu->ctx, "%s/%s: %s", gpu->ctx->sysfs_root, dir, strerror(-n));
                        return n;
                }
                h.present = 1;
                for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                        read_sensor(gpu, dir, names, fixed[i].attr, fixed[i].s);
                snprintf(path, sizeof(path), "%s/power1_cap", dir);
                r = sysfs_is_writable(gpu->ctx, path);
                h.power_cap_writable = r > 0;

                /* freqN and inN by label: the driver numbers them per ASIC. */
                n = list_channels(names, "freq", chans, AMDSMI_MAX_TEMPS);
                for (int i = 0; i < n; i++) {
                        char label[32], attr[32];
                        read_label(gpu, dir, names, "freq", chans[i], label, sizeof(label));
                        snprintf(attr, sizeof(attr), "freq%u_input", chans[i]);
                        if (strcmp(label, "sclk") == 0)
                                read_sensor(gpu, dir, names, attr, &h.sclk_hz);
                        else if (strcmp(label, "mclk") == 0)
                                read_sensor(gpu, dir, names, attr, &h.mclk_hz);
                }
                n = list_channels(names, "in", chans, AMDSMI_MAX_TEMPS);
                for (int i = 0; i < n; i++) {
                        char label[32], attr[32];
                        read_label(gpu, dir, names, "in", chans[i], label, sizeof(label));
                        snprintf(attr, sizeof(attr), "in%u_input", chans[i]);
                        if (strcmp(label, "vddboard") == 0)
                                read_sensor(gpu, dir, names, attr, &h.vddboard_mv);
                }
                n = list_channels(names, "temp", chans, AMDSMI_MAX_TEMPS);
                for (int i = 0; i < n; i++) {
                        struct amdsmi_temp_channel *t = &h.temps[h.n_temps++];
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
                }
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
        n = sysfs_read_binary(gpu->ctx, path, buf, sizeof(buf));
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
