/* SPDX-License-Identifier: MIT */
/* amdsmi static: identity, bus, memory sizes, modes, firmware and partitions of each GPU. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

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
        { "driver_name", "DRIVER NAME", "driver_name", 0 },
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
        { NULL, "GFX TARGET", "gfx_target_version", 0 },
        { NULL, "UNIQUE ID", "unique_id", 0 },
};

static const struct column_def firmware_columns[] = {
        { NULL, "FIRMWARE", "name", 0 },
        { NULL, "VERSION", "version", COLUMN_HEX },
        { NULL, "SOURCE", "source", 0 },
};

static json_object *int_or_null(int v) {
        return v >= 0 ? json_object_new_int(v) : NULL;
}

static json_object *gpu_string(struct amdsmi_gpu *gpu, enum amdsmi_gpu_string which) {
        return json_string_or_null(amdsmi_gpu_get_string(gpu, which));
}

static json_object *static_pcie(struct cli *c, int index, struct amdsmi_gpu *gpu) {
        struct amdsmi_pcie_link link;
        json_object *o;
        int r;

        r = amdsmi_gpu_read_pcie_link(gpu, &link);
        if (r < 0) {
                if (r != -ENODATA)
                        cli_field_error(c, index, "pcie", r);
                return NULL;
        }
        o = json_object_new_object();
        if (!o)
                return NULL;
        json_set(o, "current_speed_gts", json_scaled_u64(link.current_speed_mts, 3));
        json_set(o, "current_width", json_u64_or_null(link.current_width));
        json_set(o, "max_speed_gts", json_scaled_u64(link.max_speed_mts, 3));
        json_set(o, "max_width", json_u64_or_null(link.max_width));
        return o;
}

static json_object *static_memory(struct cli *c, int index, struct amdsmi_gpu *gpu) {
        struct amdsmi_memory_info info;
        json_object *o;
        int r;

        r = amdsmi_gpu_read_memory_info(gpu, &info);
        if (r < 0) {
                if (r != -ENODATA)
                        cli_field_error(c, index, "memory", r);
                return NULL;
        }
        o = json_object_new_object();
        if (!o)
                return NULL;
        json_set(o, "vram_total_bytes", json_u64_or_null(info.vram_total));
        json_set(o, "vis_vram_total_bytes", json_u64_or_null(info.vis_vram_total));
        json_set(o, "gtt_total_bytes", json_u64_or_null(info.gtt_total));
        return o;
}

static json_object *static_firmware(struct cli *c, int index, struct amdsmi_gpu *gpu) {
        const struct amdsmi_firmware *fw = NULL;
        json_object *a;
        int r;

        r = amdsmi_gpu_get_firmware(gpu, &fw);
        if (r < 0) {
                if (r != -ENODATA)
                        cli_field_error(c, index, "firmware", r);
                return NULL;
        }
        a = json_object_new_array();
        if (!a)
                return NULL;
        for (int i = 0; i < r; i++) {
                json_object *e = json_object_new_object();

                if (!e)
                        break;
                json_set(e, "name", json_string_or_null(fw[i].name));
                json_set(e, "version", json_u64_or_null(fw[i].version));
                json_set(e, "source", json_object_new_string(fw[i].from_ioctl ? "ioctl" : "sysfs"));
                json_object_array_add(a, e);
        }
        return a;
}

static json_object *static_partitions(struct cli *c, size_t index, struct amdsmi_gpu *gpu) {
        size_t n = amdsmi_gpu_get_partition_count(gpu);
        json_object *a;

        if (amdsmi_gpu_get_partitions_error(gpu) < 0)
                return NULL; /* unknown, reported with partition_count */
        a = json_object_new_array();
        if (!a)
                return NULL;
        for (size_t k = 0; k < n; k++) {
                struct amdsmi_partition *p = amdsmi_gpu_get_partition(gpu, k);
                unsigned pi;
                uint64_t uid;
                json_object *e;

                if (!p)
                        continue;
                pi = amdsmi_partition_get_index(p);
                if (!select_match_partition(&c->matches[index], pi))
                        continue;
                e = json_object_new_object();
                if (!e)
                        break;
                json_set(e, "partition", json_object_new_uint64(pi));
                json_set(e, "kfd_node", json_object_new_uint64(amdsmi_partition_get_kfd_node(p)));
                json_set(e, "kfd_gpu_id",
                         json_object_new_uint64(amdsmi_partition_get_kfd_gpu_id(p)));
                json_set(e, "render_minor", int_or_null(amdsmi_partition_get_render_minor(p)));
                json_set(e, "compute_units",
                         json_object_new_uint64(amdsmi_partition_get_compute_units(p)));
                json_set(e, "simd_count",
                         json_object_new_uint64(amdsmi_partition_get_simd_count(p)));
                json_set(e, "xcc_count", json_object_new_uint64(amdsmi_partition_get_xcc_count(p)));
                json_set(e, "memory_bytes", json_u64_or_null(amdsmi_partition_get_memory_bytes(p)));
                json_set(e, "gfx_target_version",
                         json_object_new_uint64(amdsmi_partition_get_gfx_target_version(p)));
                uid = amdsmi_partition_get_unique_id(p);
                json_set(e, "unique_id", uid ? json_hex(uid, 16) : NULL);
                json_object_array_add(a, e);
        }
        return a;
}

static json_object *static_gpu(struct cli *c, size_t index, struct amdsmi_gpu *gpu) {
        json_object *o = json_object_new_object(), *fru, *vbios;
        const char *driver_name;
        uint64_t hive;
        int idx = (int) index;

        fru = json_object_new_object();
        vbios = json_object_new_object();
        if (!o || !fru || !vbios) {
                json_object_put(o);
                json_object_put(fru);
                json_object_put(vbios);
                return NULL;
        }

        json_set(o, "gpu", json_object_new_uint64(index));
        json_set(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_set(o, "product", json_object_new_string(amdsmi_gpu_get_product(gpu)));
        json_set(o, "vendor_id", json_hex(amdsmi_gpu_get_vendor_id(gpu), 4));
        json_set(o, "device_id", json_hex(amdsmi_gpu_get_device_id(gpu), 4));
        json_set(o, "subsystem_vendor_id", json_hex(amdsmi_gpu_get_subsystem_vendor_id(gpu), 4));
        json_set(o, "subsystem_device_id", json_hex(amdsmi_gpu_get_subsystem_device_id(gpu), 4));
        json_set(o, "revision", json_hex(amdsmi_gpu_get_revision(gpu), 2));
        json_set(o, "class", json_hex(amdsmi_gpu_get_class(gpu), 6));
        json_set(o, "is_vf", json_object_new_boolean(amdsmi_gpu_is_vf(gpu) > 0));
        json_set(o, "role",
                 json_object_new_string(amdsmi_role_to_string(amdsmi_gpu_get_role(gpu))));
        json_set(o, "driver",
                 json_object_new_string(amdsmi_driver_to_string(amdsmi_gpu_get_driver(gpu))));
        driver_name = amdsmi_gpu_get_driver_name(gpu);
        json_set(o, "driver_name", json_string_or_null(driver_name));
        json_set(o, "physfn_bdf", json_string_or_null(amdsmi_gpu_get_physfn_bdf(gpu)));
        json_set(o, "numa_node", int_or_null(amdsmi_gpu_get_numa_node(gpu)));
        json_set(o, "card_minor", int_or_null(amdsmi_gpu_get_card_minor(gpu)));
        json_set(o, "render_minor", int_or_null(amdsmi_gpu_get_render_minor(gpu)));
        hive = amdsmi_gpu_get_hive_id(gpu);
        json_set(o, "hive_id", hive ? json_hex(hive, 16) : NULL);
        json_set(o, "unique_id", gpu_string(gpu, AMDSMI_STRING_UNIQUE_ID));
        json_set(o, "serial_number", gpu_string(gpu, AMDSMI_STRING_SERIAL));

        json_set(fru, "product_name", gpu_string(gpu, AMDSMI_STRING_PRODUCT_NAME));
        json_set(fru, "product_number", gpu_string(gpu, AMDSMI_STRING_PRODUCT_NUMBER));
        json_set(fru, "manufacturer", gpu_string(gpu, AMDSMI_STRING_MANUFACTURER));
        json_set(fru, "fru_id", gpu_string(gpu, AMDSMI_STRING_FRU_ID));
        json_set(o, "fru", fru);
        json_set(vbios, "version", gpu_string(gpu, AMDSMI_STRING_VBIOS_VERSION));
        json_set(vbios, "build", gpu_string(gpu, AMDSMI_STRING_VBIOS_BUILD));
        json_set(o, "vbios", vbios);

        json_set(o, "pcie", static_pcie(c, idx, gpu));
        json_set(o, "memory", static_memory(c, idx, gpu));
        cli_add_partition_modes(c, idx, gpu, o, false);
        json_set(o, "firmware", static_firmware(c, idx, gpu));
        json_set(o, "partition_count", cli_partition_count(c, (int) index, gpu));
        json_set(o, "partitions", static_partitions(c, index, gpu));
        return o;
}

/* CSV: one "fw_<name>" column per firmware name seen, in the order first seen. */
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
                        snprintf(path, sizeof(path), "firmware[name=%s].version", s);
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

        r = cli_collect_gpus(c, static_gpu, &gpus);
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
        int r = cli_open(c);

        if (r < 0)
                return r;
        return cli_run(c, static_sample);
}
