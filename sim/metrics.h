/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the gpu_metrics table as the driver emits it (spec amdgpu-sysfs.md §5.4),
 * written from the spec alone (the simulator shares no code with libamdsmi).
 *
 * struct sim_metrics holds one member per field name of the spec, in the driver's units
 * (°C, W, MHz, 15.259 µJ energy units, 10 ns firmware timestamps, ...). Every member is a
 * uint64_t so that "unavailable" is one value for every field: SIM_METRICS_NA, which the
 * emitter writes as all-ones of the field's own width. Fields a revision does not have are
 * ignored for that revision.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SIM_METRICS_NA UINT64_MAX
#define SIM_METRICS_MAX_SIZE 4096

struct sim_xcp_stats {
        uint64_t gfx_busy_inst[8];
        uint64_t jpeg_busy[40]; /* 32 used before v1.8 */
        uint64_t vcn_busy[4];
        uint64_t gfx_busy_acc[8];
        uint64_t gfx_below_host_limit_acc[8];       /* v1.7 */
        uint64_t gfx_below_host_limit_ppt_acc[8];   /* v1.8 */
        uint64_t gfx_below_host_limit_thm_acc[8];   /* v1.8 */
        uint64_t gfx_low_utilization_acc[8];        /* v1.8 */
        uint64_t gfx_below_host_limit_total_acc[8]; /* v1.8 */
};

struct sim_metrics {
        /* v1.3 */
        uint64_t temperature_edge, temperature_vrgfx, temperature_vrmem;
        uint64_t temperature_hbm[4];
        uint64_t average_mm_activity, average_socket_power;
        uint64_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency;
        uint64_t average_vclk0_frequency, average_dclk0_frequency;
        uint64_t average_vclk1_frequency, average_dclk1_frequency;
        uint64_t current_vclk1, current_dclk1;
        uint64_t current_fan_speed, voltage_soc, voltage_gfx, voltage_mem;
        uint64_t throttle_status, indep_throttle_status;
        /* v1.3 .. v1.8 */
        uint64_t temperature_hotspot, temperature_mem, temperature_vrsoc;
        uint64_t curr_socket_power;
        uint64_t average_gfx_activity, average_umc_activity;
        uint64_t vcn_activity[4];  /* v1.4, v1.5 */
        uint64_t jpeg_activity[32]; /* v1.5 */
        uint64_t mem_max_bandwidth; /* v1.7+ */
        uint64_t energy_accumulator, system_clock_counter;
        uint64_t accumulation_counter, prochot_residency_acc, ppt_residency_acc;
        uint64_t socket_thm_residency_acc, vr_thm_residency_acc, hbm_thm_residency_acc;
        uint64_t gfxclk_lock_status;
        uint64_t pcie_link_width, pcie_link_speed, xgmi_link_width, xgmi_link_speed;
        uint64_t gfx_activity_acc, mem_activity_acc;
        uint64_t pcie_bandwidth_acc, pcie_bandwidth_inst, pcie_l0_to_recov_count_acc;
        uint64_t pcie_replay_count_acc, pcie_replay_rover_count_acc;
        uint64_t pcie_nak_sent_count_acc, pcie_nak_rcvd_count_acc;
        uint64_t xgmi_read_data_acc[8], xgmi_write_data_acc[8];
        uint64_t xgmi_link_status[8]; /* v1.7+ */
        uint64_t firmware_timestamp;
        uint64_t current_gfxclk[8], current_socclk[4], current_vclk0[4], current_dclk0[4];
        uint64_t current_uclk;
        uint64_t num_partition; /* v1.6+ */
        struct sim_xcp_stats xcp_stats[8];
        uint64_t pcie_lc_perf_other_end_recovery; /* v1.6+ */
        /* v1.9: the per-XCC arrays of the whole GPU (not per partition): XCC i of the GPU at
         * [i], JPEG and VCN engines of the whole GPU */
        struct sim_xcp_stats gpu_xcc;
        /* v1.9, Linux 7.1 (T3): per HBM stack, AID and XCD (13.0.12 fills them) */
        uint64_t temperature_hbms[8], temperature_aids[4], temperature_xcds[8];
};

/* Sets every member to SIM_METRICS_NA (what the driver's 0xFF fill leaves). */
void sim_metrics_init(struct sim_metrics *m);

/* The table size of format 1 content revision @rev (3..8), 0 if unknown. */
size_t sim_metrics_size(unsigned rev);

/*
 * Writes the little-endian table of format 1, content revision @rev, header included
 * (structure_size, format_revision 1, content_revision @rev), padding all-ones.
 * @return the number of bytes written, -EINVAL for an unknown revision, -ENOSPC if @size is
 * too small.
 */
int sim_metrics_emit(const struct sim_metrics *m, unsigned rev, void *buf, size_t size);

/*
 * gpu_metrics v1.9 and xcp_metrics v1.1 (metrics-v19.c, spec gpu-metrics-v1.9.md): the
 * attribute-encoded tables of format 1, in the record set of the SMU 13.0.6/13.0.12 class, as
 * the kernel of each layout emits them.
 */
enum sim_metrics_layout {
        SIM_LAYOUT_UNSET,
        SIM_LAYOUT_6_19, /* ACCUMULATION_COUNTER u32: 47 attributes, 1150 bytes */
        SIM_LAYOUT_7_0,  /* ACCUMULATION_COUNTER u64: 1154 bytes; xcp v1.1 grows to 15 */
        SIM_LAYOUT_7_1,  /* + TEMPERATURE_HBM/AID/XCD (ids 48, 49, 50): 50, 1218 bytes */
        _SIM_LAYOUT_MAX,
};
/* "6.19", "7.0", "7.1" (NULL for SIM_LAYOUT_UNSET) */
extern const char *const sim_metrics_layout_names[_SIM_LAYOUT_MAX];

/* The sizes of the layout's tables, 0 for an unknown layout. */
size_t sim_metrics_v19_size(enum sim_metrics_layout layout);
size_t sim_xcp_metrics_v11_size(enum sim_metrics_layout layout);

/*
 * Writes gpu_metrics v1.9 (format 1, content 9) of @layout: header, attr_count and the records
 * in the spec's order, packed, little-endian, SIM_METRICS_NA as all-ones of the value's type,
 * counters carried as u32 taken modulo 2^32.
 * @return the number of bytes written (== structure_size), -EINVAL for an unknown layout,
 * -ENOSPC if @size is too small.
 */
int sim_metrics_v19_emit(const struct sim_metrics *m, enum sim_metrics_layout layout, void *buf,
                         size_t size);

/*
 * Writes xcp_metrics v1.1 (format 1, content 1) of one partition: @gfxclk its XCCs' clocks,
 * @x its busy and accumulator arrays, the shared clocks, the accumulation counter and the
 * firmware timestamp (7.0 and later) from @m.
 */
int sim_xcp_metrics_v11_emit(const struct sim_metrics *m, const uint64_t gfxclk[8],
                             const struct sim_xcp_stats *x, enum sim_metrics_layout layout,
                             void *buf, size_t size);
