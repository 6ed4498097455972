/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the text of KFD topology files (see kfd.h, spec amdgpu-sysfs.md §6).
 *
 * Every file is a list of "key value\n" lines with decimal values. A node's properties print
 * the common block for every node, then the GPU-only block for GPU nodes, and last
 * max_engine_clk_ccompute; CPU nodes print simd_count and array_count as 0 and the GPU shape
 * keys as their CPU CRAT entries leave them, 0.
 *
 * GPU shape values the node struct does not carry are those of the GFX 9.4.x/9.5.0 compute
 * dies (gfx_target_version 90402 and 90500): 4 SIMDs per CU, wave64, 8 waves per SIMD, 32
 * scratch slots per CU, 64 GWS entries, no GDS, LDS 64 KiB per CU (160 KiB on 90500), one
 * shader array per engine, 8 SDMA queues per engine (SDMA 4.4.x reserves none) and 24 compute
 * queues of the first MEC left to KFD. cu_per_simd_array is the CU count per shader array
 * rounded up (MI300X: 38 CUs per XCC over 4 arrays = 10).
 *
 * debug_prop is what the driver builds for these dies: the address watch mask bit range (low
 * bit 7, high bit 30 on GFX 9.4.3/9.4.4; 6 and 29 on 9.5.0) plus "dispatch info always valid".
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kfd.h"
#include "text.h"

#define GFX_TARGET_GFX950 90500

#define GPU_SIMD_PER_CU 4
#define GPU_WAVE_FRONT_SIZE 64
#define GPU_MAX_WAVES_PER_SIMD 8
#define GPU_MAX_SLOTS_SCRATCH_CU 32
#define GPU_NUM_GWS 64
#define GPU_GDS_KB 0
#define GPU_LDS_KB 64
#define GPU_LDS_KB_GFX950 160
#define GPU_SIMD_ARRAYS_PER_ENGINE 1
#define GPU_SDMA_QUEUES_PER_ENGINE 8
#define GPU_CP_QUEUES 24

/* debug_prop fields */
#define DBG_WATCH_HI_SHIFT 4
#define DBG_DISPATCH_INFO_ALWAYS_VALID 0x400
#define DBG_WATCH_LO_GFX943 7
#define DBG_WATCH_HI_GFX943 30
#define DBG_WATCH_LO_GFX9 6
#define DBG_WATCH_HI_GFX9 29

/* io link flags: the link is enabled */
#define IOLINK_FLAGS_ENABLED 1

static void prop32(struct sim_text *t, const char *key, uint32_t v) {
        sim_text_add(t, "%s %u\n", key, (unsigned) v);
}

static void prop64(struct sim_text *t, const char *key, uint64_t v) {
        sim_text_add(t, "%s %llu\n", key, (unsigned long long) v);
}

static uint64_t debug_prop(const struct sim_kfd_node *n) {
        if (n->gfx_target_version >= GFX_TARGET_GFX950)
                return DBG_WATCH_LO_GFX9 | DBG_WATCH_HI_GFX9 << DBG_WATCH_HI_SHIFT |
                       DBG_DISPATCH_INFO_ALWAYS_VALID;
        return DBG_WATCH_LO_GFX943 | DBG_WATCH_HI_GFX943 << DBG_WATCH_HI_SHIFT |
               DBG_DISPATCH_INFO_ALWAYS_VALID;
}

static unsigned cu_per_simd_array(const struct sim_kfd_node *n) {
        unsigned cus = n->simd_count / GPU_SIMD_PER_CU;

        if (n->array_count == 0)
                return 0;
        return (cus + n->array_count - 1) / n->array_count;
}

int sim_kfd_properties(const struct sim_kfd_node *n, char *buf, size_t size) {
        bool gpu = n->is_gpu;
        struct sim_text t = { .len = 0 };

        prop32(&t, "cpu_cores_count", n->cpu_cores_count);
        prop32(&t, "simd_count", gpu ? n->simd_count : 0);
        prop32(&t, "mem_banks_count", n->mem_banks_count);
        prop32(&t, "caches_count", n->caches_count);
        prop32(&t, "io_links_count", n->io_links_count);
        prop32(&t, "p2p_links_count", n->p2p_links_count);
        prop32(&t, "cpu_core_id_base", n->cpu_core_id_base);
        prop32(&t, "simd_id_base", n->simd_id_base);
        prop32(&t, "max_waves_per_simd", gpu ? GPU_MAX_WAVES_PER_SIMD : 0);
        prop32(&t, "lds_size_in_kb",
               !gpu ? 0
                    : (n->gfx_target_version >= GFX_TARGET_GFX950 ? GPU_LDS_KB_GFX950
                                                                  : GPU_LDS_KB));
        prop32(&t, "gds_size_in_kb", GPU_GDS_KB);
        prop32(&t, "num_gws", gpu ? GPU_NUM_GWS : 0);
        prop32(&t, "wave_front_size", gpu ? GPU_WAVE_FRONT_SIZE : 0);
        prop32(&t, "array_count", gpu ? n->array_count : 0);
        prop32(&t, "simd_arrays_per_engine", gpu ? GPU_SIMD_ARRAYS_PER_ENGINE : 0);
        prop32(&t, "cu_per_simd_array", gpu ? cu_per_simd_array(n) : 0);
        prop32(&t, "simd_per_cu", gpu ? GPU_SIMD_PER_CU : 0);
        prop32(&t, "max_slots_scratch_cu", gpu ? GPU_MAX_SLOTS_SCRATCH_CU : 0);
        prop32(&t, "gfx_target_version", n->gfx_target_version);
        prop32(&t, "vendor_id", n->vendor_id);
        prop32(&t, "device_id", n->device_id);
        prop32(&t, "location_id", n->location_id);
        prop32(&t, "domain", n->domain);
        prop32(&t, "drm_render_minor", n->drm_render_minor);
        prop64(&t, "hive_id", n->hive_id);
        prop32(&t, "num_sdma_engines", n->num_sdma_engines);
        prop32(&t, "num_sdma_xgmi_engines", n->num_sdma_xgmi_engines);
        prop32(&t, "num_sdma_queues_per_engine", gpu ? GPU_SDMA_QUEUES_PER_ENGINE : 0);
        prop32(&t, "num_cp_queues", gpu ? GPU_CP_QUEUES : 0);
        if (gpu) {
                prop32(&t, "max_engine_clk_fcompute", n->max_engine_clk_fcompute);
                prop64(&t, "local_mem_size", 0);
                prop32(&t, "fw_version", n->fw_version);
                prop32(&t, "capability", n->capability);
                prop32(&t, "capability2", n->capability2);
                prop64(&t, "debug_prop", debug_prop(n));
                prop32(&t, "sdma_fw_version", n->sdma_fw_version);
                prop64(&t, "unique_id", n->unique_id);
                prop32(&t, "num_xcc", n->num_xcc);
        }
        prop32(&t, "max_engine_clk_ccompute", n->max_engine_clk_ccompute);
        return sim_text_finish(&t, buf, size);
}

/* CRC-16 with polynomial 0x8005, processed least significant bit first (reflected form
 * 0xa001), initial value 0, no final XOR ("CRC-16/ARC"). */
static uint16_t crc16(const uint8_t *data, size_t len) {
        uint16_t crc = 0;

        for (size_t i = 0; i < len; i++) {
                crc ^= data[i];
                for (unsigned b = 0; b < 8; b++)
                        crc = (crc & 1) ? (uint16_t) ((crc >> 1) ^ 0xa001) : (uint16_t) (crc >> 1);
        }
        return crc;
}

uint16_t sim_kfd_gpu_id(uint8_t devfn, uint16_t subsystem_vendor, uint16_t subsystem_device,
                        uint32_t domain, uint16_t device_id, uint8_t bus,
                        uint64_t partition_memory_bytes, unsigned first_xcc, unsigned num_xcc) {
        uint32_t words[8] = {
                devfn,
                (uint32_t) subsystem_vendor | (uint32_t) subsystem_device << 16,
                domain,
                device_id,
                bus,
                (uint32_t) partition_memory_bytes,
                (uint32_t) (partition_memory_bytes >> 32),
                (first_xcc & 0xffff) | (uint32_t) num_xcc << 16,
        };
        uint8_t bytes[sizeof(words)];
        uint16_t id;

        /* the eight words in the byte order of a little-endian host */
        for (size_t w = 0; w < 8; w++)
                for (size_t b = 0; b < 4; b++)
                        bytes[4 * w + b] = (words[w] >> (8 * b)) & 0xff;

        id = crc16(bytes, sizeof(bytes));
        return id ? id : 1;
}

int sim_kfd_mem_bank(unsigned heap_type, uint64_t size_in_bytes, unsigned width,
                     unsigned mem_clk_max, char *buf, size_t size) {
        struct sim_text t = { .len = 0 };

        prop32(&t, "heap_type", heap_type);
        prop64(&t, "size_in_bytes", size_in_bytes);
        prop32(&t, "flags", 0);
        prop32(&t, "width", width);
        prop32(&t, "mem_clk_max", mem_clk_max);
        return sim_text_finish(&t, buf, size);
}

int sim_kfd_io_link(unsigned type, unsigned node_from, unsigned node_to, unsigned weight,
                    unsigned min_bandwidth, unsigned max_bandwidth, char *buf, size_t size) {
        struct sim_text t = { .len = 0 };

        prop32(&t, "type", type);
        prop32(&t, "version_major", 0);
        prop32(&t, "version_minor", 0);
        prop32(&t, "node_from", node_from);
        prop32(&t, "node_to", node_to);
        prop32(&t, "weight", weight);
        prop32(&t, "min_latency", 0);
        prop32(&t, "max_latency", 0);
        prop32(&t, "min_bandwidth", min_bandwidth);
        prop32(&t, "max_bandwidth", max_bandwidth);
        prop32(&t, "recommended_transfer_size", 0);
        prop32(&t, "recommended_sdma_engine_id_mask", 0);
        prop32(&t, "flags", IOLINK_FLAGS_ENABLED);
        return sim_text_finish(&t, buf, size);
}
