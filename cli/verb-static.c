/* SPDX-License-Identifier: MIT */
/* amdsmi static: identity, bus, memory sizes, modes, firmware and partitions of each GPU. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "documents.h"

/* Per GPU; the partition columns list one value per selected partition, joined with ';'. */
static const struct column_def static_columns[] = {
        { "gpu", NULL, "gpu", 0 },
        { "bdf", NULL, "bdf", 0 },
        { "product", "PRODUCT", "product", 0 },
        { "vendor_id", "VENDOR ID", "vendor_id", 0 },
        { "device_id", "DEVICE ID", "device_id", 0 },
        { "subsystem_vendor_id", "SUBSYSTEM VENDOR ID", "subsystem_vendor_id", 0 },
        { "subsystem_device_id", "SUBSYSTEM DEVICE ID", "subsystem_device_id", 0 },
        { "revision", "REVISION", "revision", 0 },
        { "class", "CLASS", "class", 0 },
        { "is_vf", "VF", "is_vf", 0 },
        { "role", "ROLE", "role", 0 },
        { "driver", "DRIVER", "driver", 0 },
        { "driver_name", NULL, "driver_name", 0 }, /* deprecated: the table shows DRIVER */
        { "physfn_bdf", "PF BDF", "physfn_bdf", 0 },
        { "numa_node", "NUMA NODE", "numa_node", 0 },
        { "card_minor", "CARD MINOR", "card_minor", 0 },
        { "render_minor", "RENDER MINOR", "render_minor", 0 },
        { "hive_id", "XGMI HIVE ID", "hive_id", 0 },
        { "unique_id", "UNIQUE ID", "unique_id", 0 },
        { "serial_number", "SERIAL NUMBER", "serial_number", 0 },
        { "fru_product_name", "FRU PRODUCT NAME", "fru.product_name", 0 },
        { "fru_product_number", "FRU PRODUCT NUMBER", "fru.product_number", 0 },
        { "fru_manufacturer", "FRU MANUFACTURER", "fru.manufacturer", 0 },
        { "fru_id", "FRU ID", "fru.fru_id", 0 },
        { "vbios_version", "VBIOS VERSION", "vbios.version", 0 },
        { "vbios_build", "VBIOS BUILD", "vbios.build", 0 },
        { "pcie_current_speed_gts", "PCIE SPEED (GT/s)", "pcie.current_speed_gts", 0 },
        { "pcie_current_width", "PCIE WIDTH", "pcie.current_width", 0 },
        { "pcie_max_speed_gts", "PCIE MAX SPEED (GT/s)", "pcie.max_speed_gts", 0 },
        { "pcie_max_width", "PCIE MAX WIDTH", "pcie.max_width", 0 },
        { "vram_total_bytes", "VRAM TOTAL (MiB)", "memory.vram_total_bytes", COLUMN_MIB },
        { "vis_vram_total_bytes", "VISIBLE VRAM (MiB)", "memory.vis_vram_total_bytes", COLUMN_MIB },
        { "gtt_total_bytes", "GTT TOTAL (MiB)", "memory.gtt_total_bytes", COLUMN_MIB },
        { "compute_mode", "COMPUTE MODE", "compute_mode", 0 },
        { "memory_mode", "MEMORY MODE", "memory_mode", 0 },
        { "perf_level", "PERF LEVEL", "performance.level", 0 },
        { "sclk_min_mhz", "SCLK MIN (MHz)", "performance.sclk.soft_min_mhz", 0 },
        { "sclk_max_mhz", "SCLK MAX (MHz)", "performance.sclk.soft_max_mhz", 0 },
        { "sclk_range_min_mhz", NULL, "performance.sclk.range_min_mhz", 0 },
        { "sclk_range_max_mhz", NULL, "performance.sclk.range_max_mhz", 0 },
        { "mclk_max_mhz", "MCLK MAX (MHz)", "performance.mclk.soft_max_mhz", 0 },
        { "mclk_range_max_mhz", NULL, "performance.mclk.range_max_mhz", 0 },
        { "soc_pstate", "SOC PSTATE", "performance.soc_pstate.current", 0 },
        { "xgmi_plpd", "XGMI PLPD", "performance.xgmi_plpd.current", 0 },
        { "partition_count", "PARTITIONS", "partition_count", 0 },
        { "partition_index", NULL, "partitions[].partition", 0 },
        { "partition_kfd_node", NULL, "partitions[].kfd_node", 0 },
        { "partition_kfd_gpu_id", NULL, "partitions[].kfd_gpu_id", 0 },
        { "partition_render_minor", NULL, "partitions[].render_minor", 0 },
        { "partition_compute_units", NULL, "partitions[].compute_units", 0 },
        { "partition_simd_count", NULL, "partitions[].simd_count", 0 },
        { "partition_xcc_count", NULL, "partitions[].xcc_count", 0 },
        { "partition_memory_bytes", NULL, "partitions[].memory_bytes", 0 },
        { "partition_gfx_target_version", NULL, "partitions[].gfx_target_version", 0 },
        { "partition_gfx_target", NULL, "partitions[].gfx_target", 0 },
        { "partition_unique_id", NULL, "partitions[].unique_id", 0 },
};

static const struct column_def partition_columns[] = {
        { NULL, "PARTITION", "partition", 0 },
        { NULL, "KFD NODE", "kfd_node", 0 },
        { NULL, "KFD GPU ID", "kfd_gpu_id", 0 },
        { NULL, "RENDER MINOR", "render_minor", 0 },
        { NULL, "CUS", "compute_units", 0 },
        { NULL, "SIMDS", "simd_count", 0 },
        { NULL, "XCCS", "xcc_count", 0 },
        { NULL, "MEMORY (MiB)", "memory_bytes", COLUMN_MIB },
        { NULL, "GFX TARGET", "gfx_target", 0 },
        { NULL, "UNIQUE ID", "unique_id", 0 },
};

static const struct column_def firmware_columns[] = {
        { NULL, "FIRMWARE", "name", 0 },
        { NULL, "VERSION", "version_hex", 0 },
        { NULL, "DECODED", "version_dotted", 0 },
        { NULL, "SOURCE", "source", 0 },
};

static int add_firmware_columns(struct columns *cols, json_object *gpus) {
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *fw = json_path_get(json_object_array_get_idx(gpus, i), "firmware");
                size_t n = fw ? json_object_array_length(fw) : 0;

                for (size_t k = 0; k < n; k++) {
                        json_object *e = json_object_array_get_idx(fw, k), *name;
                        char key[64], col[80], path[160];
                        const char *s;
                        int r;

                        if (!json_object_object_get_ex(e, "name", &name) || !name)
                                continue;
                        s = json_object_get_string(name);
                        if (!*s || strpbrk(s, "[]=.") || strlen(s) >= sizeof(key))
                                continue;
                        sanitize_key(s, key, sizeof(key));
                        snprintf(col, sizeof(col), "fw_%s", key);
                        if (columns_has(cols, col))
                                continue;
                        snprintf(path, sizeof(path), "firmware[name=%s].version_hex", s);
                        r = columns_add(cols, col, NULL, path, 0);
                        if (r < 0) {
                                json_object_put(fw);
                                return r;
                        }
                }
                json_object_put(fw);
        }
        return 0;
}

static int print_static_tables(struct columns *cols, json_object *gpus) {
        struct columns part = {}, fw = {};
        int r;

        r = columns_add_defs(&part, partition_columns, ELEMENTSOF(partition_columns));
        if (r >= 0)
                r = columns_add_defs(&fw, firmware_columns, ELEMENTSOF(firmware_columns));

        for (size_t i = 0; r >= 0 && i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *v;

                if (i > 0)
                        fputc('\n', stdout);
                json_object_object_get_ex(g, "gpu", &v);
                printf("GPU %s", json_object_get_string(v));
                json_object_object_get_ex(g, "bdf", &v);
                printf("  %s\n", json_object_get_string(v));
                /* a GPU in reset or without a driver: its state in place of the values */
                if (output_state_marker(g)) {
                        printf("  %s\n", output_state_marker(g));
                        continue;
                }
                r = output_kv(stdout, cols, g, "  ");
                if (r < 0)
                        break;

                v = json_path_get(g, "firmware");
                if (v && json_object_array_length(v) > 0) {
                        fputc('\n', stdout);
                        r = output_table(stdout, &fw, v, "  ");
                }
                json_object_put(v);

                v = json_path_get(g, "partitions");
                if (r >= 0 && v && json_object_array_length(v) > 0) {
                        fputc('\n', stdout);
                        r = output_table(stdout, &part, v, "  ");
                }
                json_object_put(v);
        }
        columns_free(&part);
        columns_free(&fw);
        return r;
}

static int static_sample(struct cli *c) {
        struct columns cols = {};
        json_object *gpus;
        int r;

        r = cli_print_daemon_text(c, "static");
        if (r != 0)
                return r < 0 ? r : 0;
        r = cli_collect_document(c, "static", static_gpu, &gpus);
        if (r != 0)
                return r;

        r = columns_add_defs(&cols, static_columns, ELEMENTSOF(static_columns));
        if (r >= 0 && c->format == OUTPUT_CSV)
                r = add_firmware_columns(&cols, gpus);
        if (r >= 0 && c->format == OUTPUT_TABLE) {
                r = print_static_tables(&cols, gpus);
                json_object_put(gpus);
                gpus = NULL;
        }
        if (r < 0) {
                json_object_put(gpus);
                columns_free(&cols);
                return cli_fail(c, r, "cannot format the output: %s", strerror(-r));
        }
        if (gpus)
                r = cli_emit(c, gpus, &cols);
        columns_free(&cols);
        return r;
}

int verb_static(struct cli *c) {
        return cli_open_run(c, static_sample);
}
