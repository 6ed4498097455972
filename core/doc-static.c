/* SPDX-License-Identifier: MIT */
/* The static document: identity, bus, memory, modes, firmware, partitions (documents.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "documents.h"
#include "perf-ops.h"

static json_object *int_or_null(int v) {
        return v >= 0 ? json_object_new_int(v) : NULL;
}

static json_object *gpu_string(struct amdsmi_gpu *gpu, enum amdsmi_gpu_string which) {
        return json_string_or_null(amdsmi_gpu_get_string(gpu, which));
}

static json_object *static_pcie(const struct doc_query *q, int index, struct amdsmi_gpu *gpu) {
        struct amdsmi_pcie_link link;
        json_object *o;
        int r;

        r = amdsmi_gpu_read_pcie_link(gpu, &link);
        if (r < 0) {
                if (r != -ENODATA)
                        report_field_error(q->report, index, "pcie", r);
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

static json_object *static_memory(const struct doc_query *q, int index, struct amdsmi_gpu *gpu) {
        struct amdsmi_memory_info info;
        json_object *o;
        int r;

        r = amdsmi_gpu_read_memory_info(gpu, &info);
        if (r < 0) {
                if (r != -ENODATA)
                        report_field_error(q->report, index, "memory", r);
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

static json_object *static_firmware(const struct doc_query *q, int index, struct amdsmi_gpu *gpu) {
        const struct amdsmi_firmware *fw = NULL;
        char hex[24], dotted[24];
        json_object *a;
        int r;

        r = amdsmi_gpu_get_firmware(gpu, &fw);
        if (r < 0) {
                if (r != -ENODATA)
                        report_field_error(q->report, index, "firmware", r);
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
                json_set(e, "version_hex",
                         format_firmware_hex(fw[i].version, hex, sizeof(hex)) == 0
                                 ? json_object_new_string(hex)
                                 : NULL);
                json_set(e, "version_dotted",
                         format_firmware_dotted(fw[i].name, fw[i].version, dotted,
                                                sizeof(dotted)) == 0
                                 ? json_object_new_string(dotted)
                                 : NULL);
                json_set(e, "source", json_object_new_string(fw[i].from_ioctl ? "ioctl" : "sysfs"));
                json_object_array_add(a, e);
        }
        return a;
}

json_object *doc_partitions(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu,
                            json_object *(*entry)(struct amdsmi_partition *p, unsigned pi)) {
        size_t n = amdsmi_gpu_get_partition_count(gpu);
        json_object *a;

        if (amdsmi_gpu_get_partitions_error(gpu) < 0)
                return NULL; /* unknown, reported with partition_count */
        a = json_object_new_array();
        for (size_t k = 0; a && k < n; k++) {
                struct amdsmi_partition *p = amdsmi_gpu_get_partition(gpu, k);
                json_object *e;
                unsigned pi;

                if (!p)
                        continue;
                pi = amdsmi_partition_get_index(p);
                if (!select_match_partition(&q->set->matches[index], pi))
                        continue;
                e = entry(p, pi);
                if (!e)
                        break;
                json_object_array_add(a, e);
        }
        return a;
}

static json_object *static_partition(struct amdsmi_partition *p, unsigned pi) {
        json_object *e = json_object_new_object();
        char gfx[16];
        uint64_t uid;
        int r;

        if (!e)
                return NULL;
        json_set(e, "partition", json_object_new_uint64(pi));
        json_set(e, "kfd_node", json_object_new_uint64(amdsmi_partition_get_kfd_node(p)));
        json_set(e, "kfd_gpu_id", json_object_new_uint64(amdsmi_partition_get_kfd_gpu_id(p)));
        json_set(e, "render_minor", int_or_null(amdsmi_partition_get_render_minor(p)));
        json_set(e, "compute_units", json_object_new_uint64(amdsmi_partition_get_compute_units(p)));
        json_set(e, "simd_count", json_object_new_uint64(amdsmi_partition_get_simd_count(p)));
        json_set(e, "xcc_count", json_object_new_uint64(amdsmi_partition_get_xcc_count(p)));
        json_set(e, "memory_bytes", json_u64_or_null(amdsmi_partition_get_memory_bytes(p)));
        json_set(e, "gfx_target_version",
                 json_object_new_uint64(amdsmi_partition_get_gfx_target_version(p)));
        r = format_gfx_target(amdsmi_partition_get_gfx_target_version(p), gfx, sizeof(gfx));
        json_set(e, "gfx_target", r == 0 ? json_object_new_string(gfx) : NULL);
        uid = amdsmi_partition_get_unique_id(p);
        json_set(e, "unique_id", uid ? json_hex(uid, 16) : NULL);
        return e;
}

json_object *static_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
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
        /* deprecated for driver; "none" without a driver, as driver says it */
        driver_name = amdsmi_gpu_get_driver_name(gpu);
        json_set(o, "driver_name",
                 json_object_new_string(driver_name && *driver_name ? driver_name : "none"));
        json_set(o, "physfn_bdf", json_string_or_null(amdsmi_gpu_get_physfn_bdf(gpu)));
        json_set(o, "numa_node", int_or_null(amdsmi_gpu_get_numa_node(gpu)));
        json_set(o, "card_minor", int_or_null(amdsmi_gpu_get_card_minor(gpu)));
        json_set(o, "render_minor", int_or_null(amdsmi_gpu_get_render_minor(gpu)));
        hive = amdsmi_gpu_get_hive_id(gpu);
        json_set(o, "hive_id", hive ? json_hex(hive, 16) : NULL);
        json_set(o, "unique_id",
                 doc_unique_id(amdsmi_gpu_get_string(gpu, AMDSMI_STRING_UNIQUE_ID)));
        json_set(o, "serial_number", gpu_string(gpu, AMDSMI_STRING_SERIAL));

        json_set(fru, "product_name", gpu_string(gpu, AMDSMI_STRING_PRODUCT_NAME));
        json_set(fru, "product_number", gpu_string(gpu, AMDSMI_STRING_PRODUCT_NUMBER));
        json_set(fru, "manufacturer", gpu_string(gpu, AMDSMI_STRING_MANUFACTURER));
        json_set(fru, "fru_id", gpu_string(gpu, AMDSMI_STRING_FRU_ID));
        json_set(o, "fru", fru);
        json_set(vbios, "version", gpu_string(gpu, AMDSMI_STRING_VBIOS_VERSION));
        json_set(vbios, "build", gpu_string(gpu, AMDSMI_STRING_VBIOS_BUILD));
        json_set(o, "vbios", vbios);

        json_set(o, "pcie", static_pcie(q, idx, gpu));
        json_set(o, "memory", static_memory(q, idx, gpu));
        gpu_add_partition_modes(q->report, idx, gpu, o, false);
        if (!q->no_device_nodes)
                json_set(o, "firmware", static_firmware(q, idx, gpu));
        json_set(o, "performance", perf_document(q->report, index, gpu));
        json_set(o, "partition_count", gpu_partition_count(q->report, (int) index, gpu));
        json_set(o, "partitions", doc_partitions(q, index, gpu, static_partition));
        return o;
}

/* CSV: one "fw_<name>" column per firmware name seen, in the order first seen. */
