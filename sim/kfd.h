/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the text of KFD topology files (spec amdgpu-sysfs.md §6), pure functions.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One KFD node: a CPU node (gpu_id 0, simd_count 0) or one compute partition of a GPU. */
struct sim_kfd_node {
        bool is_gpu;
        /* CPU nodes */
        unsigned cpu_cores_count, cpu_core_id_base;
        /* GPU nodes */
        unsigned simd_count;            /* CUs x 4 */
        unsigned num_xcc;
        unsigned array_count;           /* per-XCC arrays x num_xcc */
        unsigned simd_id_base;
        uint32_t gfx_target_version;    /* 90402, 90500 */
        uint16_t vendor_id, device_id;
        uint32_t location_id;           /* (bus << 8) | devfn, | partition when > 1 partition */
        uint32_t domain;
        unsigned drm_render_minor;
        uint64_t hive_id;
        unsigned num_sdma_engines, num_sdma_xgmi_engines;
        unsigned max_engine_clk_fcompute;  /* MHz */
        uint32_t fw_version, sdma_fw_version;
        uint32_t capability, capability2;
        uint64_t unique_id;
        unsigned max_engine_clk_ccompute;  /* MHz, every node */
        unsigned mem_banks_count, caches_count, io_links_count, p2p_links_count;
};

/* The node's "properties" file, keys in the kernel's order (§6.2). @return length or
 * -ENOSPC. */
int sim_kfd_properties(const struct sim_kfd_node *n, char *buf, size_t size);

/* The gpu_id: CRC16 over the §6.2 inputs, never 0 (callers bump it on collision). */
uint16_t sim_kfd_gpu_id(uint8_t devfn, uint16_t subsystem_vendor, uint16_t subsystem_device,
                        uint32_t domain, uint16_t device_id, uint8_t bus,
                        uint64_t partition_memory_bytes, unsigned first_xcc, unsigned num_xcc);

/* mem_banks/<i>/properties: heap_type, size_in_bytes, flags, width, mem_clk_max. */
int sim_kfd_mem_bank(unsigned heap_type, uint64_t size_in_bytes, unsigned width,
                     unsigned mem_clk_max, char *buf, size_t size);

/* io_links/<i>/properties (and p2p_links): type, version, node_from, node_to, weight,
 * latencies, bandwidths, flags. type 2 = PCIe, 11 = XGMI. */
int sim_kfd_io_link(unsigned type, unsigned node_from, unsigned node_to, unsigned weight,
                    unsigned min_bandwidth, unsigned max_bandwidth, char *buf, size_t size);
