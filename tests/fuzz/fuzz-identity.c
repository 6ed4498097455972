/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the identity and firmware sysfs text (lib/gpu.c: the PCI IDs, NUMA node and
 * FRU/VBIOS strings; lib/firmware.c: fw_version/), through a sysfs tree (fuzz-sysfs.h) and the
 * public API. The first input byte picks the file, the rest is its content. Checks the result
 * against what the bytes say: a string is the text (one newline removed) when it has no NUL,
 * fits a page and is not empty, else absent; an ID is the hex number when it is one within its
 * width, else 0; the NUMA node is the number when within -1..65535, else -1; a firmware entry
 * exists exactly when its file holds a hex number, with that version; the firmware list is
 * sorted by unique name; discovery keeps only AMD functions.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum kind { STRING, ID16, ID8, NUMA, FIRMWARE, DISCOVERY };

static const struct {
        const char *rel;
        enum kind kind;
        int which; /* STRING: enum amdsmi_gpu_string; ID16: 0 subsystem vendor, 1 device */
        const char *fw; /* FIRMWARE: the name */
} files[] = {
        { FUZZ_DEV "unique_id", STRING, AMDSMI_STRING_UNIQUE_ID, NULL },
        { FUZZ_DEV "serial_number", STRING, AMDSMI_STRING_SERIAL, NULL },
        { FUZZ_DEV "product_name", STRING, AMDSMI_STRING_PRODUCT_NAME, NULL },
        { FUZZ_DEV "product_number", STRING, AMDSMI_STRING_PRODUCT_NUMBER, NULL },
        { FUZZ_DEV "manufacturer", STRING, AMDSMI_STRING_MANUFACTURER, NULL },
        { FUZZ_DEV "fru_id", STRING, AMDSMI_STRING_FRU_ID, NULL },
        { FUZZ_DEV "vbios_version", STRING, AMDSMI_STRING_VBIOS_VERSION, NULL },
        { FUZZ_DEV "vbios_build", STRING, AMDSMI_STRING_VBIOS_BUILD, NULL },
        { FUZZ_DEV "subsystem_vendor", ID16, 0, NULL },
        { FUZZ_DEV "subsystem_device", ID16, 1, NULL },
        { FUZZ_DEV "revision", ID8, 0, NULL },
        { FUZZ_DEV "numa_node", NUMA, 0, NULL },
        { FUZZ_DEV "fw_version/mec_fw_version", FIRMWARE, 0, "mec" },
        { FUZZ_DEV "fw_version/ta_ras_fw_version", FIRMWARE, 0, "ta_ras" },
        { FUZZ_DEV "vendor", DISCOVERY, 0, NULL },
        { FUZZ_DEV "device", DISCOVERY, 0, NULL },
        { FUZZ_DEV "class", DISCOVERY, 0, NULL },
};

static void check_firmware(struct amdsmi_gpu *gpu, const char *name, const uint8_t *data,
                           size_t size) {
        const struct amdsmi_firmware *fw = NULL;
        uint64_t want = 0;
        int n = amdsmi_gpu_get_firmware(gpu, &fw), found = -1;
        bool valid = fuzz_sysfs_u64(data, size, 16, &want) == 0;

        if (n == -ENOMEM)
                return;
        if (n < 2 || !fw) /* sos and smc are never touched */
                abort();
        for (int i = 0; i < n; i++) {
                if (!fw[i].name || (i > 0 && strcmp(fw[i - 1].name, fw[i].name) >= 0))
                        abort(); /* sorted, unique */
                if (strcmp(fw[i].name, name) == 0)
                        found = i;
        }
        if (valid != (found >= 0))
                abort(); /* an entry exactly when the file holds a number */
        if (found >= 0 && (fw[found].version != want || fw[found].from_ioctl))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct amdsmi_gpu *gpu;
        struct amdsmi_ctx *ctx;
        size_t which;

        if (!fuzz_sysfs_pick(&data, &size, sizeof(files) / sizeof(files[0]), &which))
                return 0;
        fuzz_sysfs_set(files[which].rel, data, size);
        ctx = fuzz_sysfs_ctx(&gpu);

        if (files[which].kind == DISCOVERY) {
                /* found or not, but only as an AMD function */
                if (gpu && amdsmi_gpu_get_vendor_id(gpu) != 0x1002)
                        abort();
        } else if (!gpu) {
                abort(); /* identity text never hides the function */
        }

        switch (gpu ? files[which].kind : DISCOVERY) {
        case STRING: {
                char text[FUZZ_SYSFS_TEXT_MAX + 1];
                const char *s = amdsmi_gpu_get_string(gpu, (enum amdsmi_gpu_string) files[which].which);
                bool present = fuzz_sysfs_text(data, size, text, sizeof(text)) == 0 && text[0];

                if (present ? !s || strcmp(s, text) != 0 : s != NULL)
                        abort();
                break;
        }
        case ID16:
        case ID8: {
                uint64_t want = 0, max = files[which].kind == ID16 ? UINT16_MAX : UINT8_MAX;
                uint64_t got = files[which].kind == ID8 ? amdsmi_gpu_get_revision(gpu)
                               : files[which].which == 0 ? amdsmi_gpu_get_subsystem_vendor_id(gpu)
                                                         : amdsmi_gpu_get_subsystem_device_id(gpu);

                if (fuzz_sysfs_u64(data, size, 16, &want) < 0 || want > max)
                        want = 0;
                if (got != want)
                        abort();
                break;
        }
        case NUMA: {
                int64_t want = -1;

                if (fuzz_sysfs_i64(data, size, &want) < 0 || want < -1 || want >= 65536)
                        want = -1;
                if (amdsmi_gpu_get_numa_node(gpu) != want)
                        abort();
                break;
        }
        case FIRMWARE:
                check_firmware(gpu, files[which].fw, data, size);
                break;
        case DISCOVERY:
                break;
        }

        amdsmi_ctx_unref(ctx);
        fuzz_sysfs_reset(files[which].rel);
        return 0;
}
