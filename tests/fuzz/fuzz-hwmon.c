/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the hwmon names and values (lib/gpu.c finds the amdgpu hwmon directory by its
 * name file, lib/telemetry.c reads the sensors and labels), through a sysfs tree (fuzz-sysfs.h)
 * and amdsmi_gpu_read_hwmon(). The first input byte picks the file, the rest is its content.
 * Checks the result against what the bytes say: a sensor holds the number exactly when the file
 * is one (a newline allowed) and otherwise the error the API documents (-ENOMSG empty,
 * -ERANGE, -EBADMSG); a label is the text when it fits, else empty; the hwmon directory is
 * found exactly when its name reads "amdgpu"; temperature channels stay bounded and ordered.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum kind { NAME, SENSOR, TEMP_INPUT, TEMP_LABEL, FREQ_LABEL };

static const struct {
        const char *rel;
        enum kind kind;
        size_t offset; /* SENSOR: of the struct amdsmi_sensor in struct amdsmi_hwmon */
} files[] = {
        { FUZZ_HWMON "name", NAME, 0 },
        { FUZZ_HWMON "power1_input", SENSOR, offsetof(struct amdsmi_hwmon, power_uw) },
        { FUZZ_HWMON "power1_cap", SENSOR, offsetof(struct amdsmi_hwmon, power_cap_uw) },
        { FUZZ_HWMON "power1_cap_min", SENSOR, offsetof(struct amdsmi_hwmon, power_cap_min_uw) },
        { FUZZ_HWMON "power1_cap_max", SENSOR, offsetof(struct amdsmi_hwmon, power_cap_max_uw) },
        { FUZZ_HWMON "power1_cap_default", SENSOR,
          offsetof(struct amdsmi_hwmon, power_cap_default_uw) },
        { FUZZ_HWMON "power2_cap", SENSOR, offsetof(struct amdsmi_hwmon, ppt1_cap_uw) },
        { FUZZ_HWMON "freq1_input", SENSOR, offsetof(struct amdsmi_hwmon, sclk_hz) },
        { FUZZ_HWMON "freq2_input", SENSOR, offsetof(struct amdsmi_hwmon, mclk_hz) },
        { FUZZ_HWMON "in0_input", SENSOR, offsetof(struct amdsmi_hwmon, vddboard_mv) },
        { FUZZ_DEV "gpu_busy_percent", SENSOR, offsetof(struct amdsmi_hwmon, gpu_busy_percent) },
        { FUZZ_DEV "mem_busy_percent", SENSOR, offsetof(struct amdsmi_hwmon, mem_busy_percent) },
        { FUZZ_HWMON "temp2_input", TEMP_INPUT, 0 },
        { FUZZ_HWMON "temp2_label", TEMP_LABEL, 0 },
        { FUZZ_HWMON "freq1_label", FREQ_LABEL, 0 },
        { FUZZ_DEV "hwmon/hwmon2/name", NAME, 0 },
};

static void check_sensor(const struct amdsmi_sensor *s, const uint8_t *data, size_t size) {
        int64_t want = 0;
        int r = fuzz_sysfs_i64(data, size, &want);

        if (s->error != r || (r == 0 && s->value != want)) {
                fprintf(stderr, "sensor: error %d value %lld, expected error %d value %lld\n",
                        s->error, (long long) s->value, r, (long long) want);
                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct amdsmi_hwmon h;
        struct amdsmi_gpu *gpu;
        struct amdsmi_ctx *ctx;
        size_t which;
        int r;

        if (!fuzz_sysfs_pick(&data, &size, sizeof(files) / sizeof(files[0]), &which))
                return 0;
        fuzz_sysfs_set(files[which].rel, data, size);
        ctx = fuzz_sysfs_ctx(&gpu);
        if (!gpu)
                abort(); /* the PCI function is found whatever hwmon holds */

        /* twice: the first read reads everything, the second only what moves */
        for (int pass = 0; pass < 2; pass++) {
                memset(&h, 0x5a, sizeof(h));
                r = amdsmi_gpu_read_hwmon(gpu, &h);
                if (r == -ENOMEM)
                        break;
                if (r != 0)
                        abort();
                if (h.n_temps > AMDSMI_MAX_TEMPS)
                        abort();
                for (unsigned i = 0; i < h.n_temps; i++)
                        if (!memchr(h.temps[i].label, '\0', sizeof(h.temps[i].label)) ||
                            (i > 0 && h.temps[i - 1].channel >= h.temps[i].channel))
                                abort();
                if (strcmp(files[which].rel, FUZZ_HWMON "name") == 0) {
                        char text[64];
                        bool amdgpu = fuzz_sysfs_text(data, size, text, sizeof(text)) == 0 &&
                                      strcmp(text, "amdgpu") == 0;

                        if (h.present != amdgpu)
                                abort(); /* found by its name, exactly */
                        continue;
                }
                if (!h.present)
                        abort();
                switch (files[which].kind) {
                case NAME: {
                        /* another hwmon directory's name: hwmon2 sorts first, so it is the
                         * one used when it says amdgpu (then without our files) */
                        char text[64];
                        bool amdgpu = fuzz_sysfs_text(data, size, text, sizeof(text)) == 0 &&
                                      strcmp(text, "amdgpu") == 0;

                        if (amdgpu ? h.power_uw.error != -ENODATA
                                   : h.power_uw.error != 0 || h.power_uw.value != 139000000)
                                abort();
                        break;
                }
                case SENSOR:
                        check_sensor((const struct amdsmi_sensor *) ((const char *) &h +
                                                                     files[which].offset),
                                     data, size);
                        break;
                case TEMP_INPUT:
                        if (h.n_temps != 2 || h.temps[0].channel != 2)
                                abort();
                        check_sensor(&h.temps[0].input, data, size);
                        break;
                case TEMP_LABEL: {
                        char text[sizeof(h.temps[0].label)];

                        if (h.n_temps != 2 || h.temps[0].channel != 2)
                                abort();
                        if (fuzz_sysfs_text(data, size, text, sizeof(text)) < 0)
                                text[0] = '\0';
                        if (strcmp(h.temps[0].label, text) != 0)
                                abort();
                        break;
                }
                case FREQ_LABEL: {
                        char text[32];
                        bool sclk = fuzz_sysfs_text(data, size, text, sizeof(text)) == 0 &&
                                    strcmp(text, "sclk") == 0;

                        /* freq1 carries sclk only when labelled so; freq2 keeps mclk (a
                         * later channel of the same label wins) */
                        if (sclk ? h.sclk_hz.error != 0 || h.sclk_hz.value != 132000000
                                 : h.sclk_hz.error != -ENODATA)
                                abort();
                        if (h.mclk_hz.error != 0 || h.mclk_hz.value != 900000000)
                                abort();
                        break;
                }
                }
        }
        amdsmi_ctx_unref(ctx);
        fuzz_sysfs_reset(files[which].rel);
        return 0;
}
