/* SPDX-License-Identifier: MIT */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * One sensor reading. @c error is 0 when @c value is valid, -ENODATA when the driver does not
 * provide the file (not an error: "not available"), or the negative errno of the failed read
 * or parse (-EBADMSG for garbage, -ENOMSG for an empty value as the driver gives on an SMU
 * failure).
 */
struct amdsmi_sensor {
        int64_t value;
        int error;
};

#define AMDSMI_MAX_TEMPS 8

/** A labelled hwmon temperature channel (tempN_*), in millidegrees C. */
struct amdsmi_temp_channel {
        unsigned channel;   /**< N of tempN */
        char label[32];     /**< tempN_label, e.g. "junction", "mem"; "" if none */
        struct amdsmi_sensor input, crit, crit_hyst, emergency;
};

/** A snapshot of the GPU's amdgpu hwmon directory and busy counters. */
struct amdsmi_hwmon {
        int present;                 /**< 0 if the GPU has no amdgpu hwmon (all sensors -ENODATA) */
        struct amdsmi_sensor power_uw;           /**< power1_input */
        struct amdsmi_sensor power_cap_uw;       /**< power1_cap (PPT0) */
        struct amdsmi_sensor power_cap_min_uw;
        struct amdsmi_sensor power_cap_max_uw;
        struct amdsmi_sensor power_cap_default_uw;
        int power_cap_writable;                  /**< power1_cap has a write bit */
        struct amdsmi_sensor ppt1_cap_uw;        /**< power2_cap (PPT1) where present */
        struct amdsmi_sensor ppt1_cap_min_uw;
        struct amdsmi_sensor ppt1_cap_max_uw;
        struct amdsmi_sensor ppt1_cap_default_uw;
        struct amdsmi_sensor sclk_hz;            /**< freq1_input (label sclk) */
        struct amdsmi_sensor mclk_hz;            /**< freq2_input (label mclk) */
        struct amdsmi_sensor vddboard_mv;        /**< in2_input (label vddboard) */
        struct amdsmi_sensor gpu_busy_percent;   /**< <pci>/gpu_busy_percent */
        struct amdsmi_sensor mem_busy_percent;   /**< <pci>/mem_busy_percent */
        unsigned n_temps;
        struct amdsmi_temp_channel temps[AMDSMI_MAX_TEMPS]; /**< in channel order */
};

/**
 * Reads hwmon and the busy counters now. Each absent file is -ENODATA in its sensor; each
 * failed file is logged with its path and errno.
 * @return 0 (the snapshot may hold per-sensor errors) or a negative errno for a failure of the
 * whole read.
 * @since 0.1
 */
int amdsmi_gpu_read_hwmon(struct amdsmi_gpu *gpu, struct amdsmi_hwmon *ret_hwmon);

#define AMDSMI_METRICS_MAX_XCC 8
#define AMDSMI_METRICS_MAX_XCP 8
#define AMDSMI_METRICS_MAX_JPEG 40
#define AMDSMI_METRICS_MAX_VCN 4
#define AMDSMI_METRICS_MAX_XGMI 8
#define AMDSMI_METRICS_MAX_HBM 4

/** Per-partition block of gpu_metrics v1.6+ (xcp_stats). AMDSMI_NA where unavailable. */
struct amdsmi_xcp_metrics {
        uint64_t gfx_busy_inst_pct[AMDSMI_METRICS_MAX_XCC]; /**< per XCC of the partition */
        uint64_t jpeg_busy_pct[AMDSMI_METRICS_MAX_JPEG];
        uint64_t vcn_busy_pct[AMDSMI_METRICS_MAX_VCN];
        uint64_t gfx_busy_acc[AMDSMI_METRICS_MAX_XCC];
        uint64_t gfx_below_host_limit_acc[AMDSMI_METRICS_MAX_XCC];     /**< v1.7 */
        uint64_t gfx_below_host_limit_ppt_acc[AMDSMI_METRICS_MAX_XCC]; /**< v1.8 */
        uint64_t gfx_below_host_limit_thm_acc[AMDSMI_METRICS_MAX_XCC]; /**< v1.8 */
        uint64_t gfx_low_utilization_acc[AMDSMI_METRICS_MAX_XCC];      /**< v1.8 */
        uint64_t gfx_below_host_limit_total_acc[AMDSMI_METRICS_MAX_XCC]; /**< v1.8 */
};

/**
 * A parsed gpu_metrics table (revisions 1.3 to 1.8), converted to the library's units. Every
 * field the table lacks or the firmware leaves all-ones is AMDSMI_NA, and so is a value whose
 * conversion does not fit 64 bits.
 */
struct amdsmi_gpu_metrics {
        uint16_t structure_size;
        uint8_t format_revision;
        uint8_t content_revision;

        /* temperatures, millidegrees C */
        uint64_t temp_edge_mc;        /**< v1.3 */
        uint64_t temp_hotspot_mc;
        uint64_t temp_mem_mc;
        uint64_t temp_vrgfx_mc;       /**< v1.3 */
        uint64_t temp_vrsoc_mc;
        uint64_t temp_vrmem_mc;       /**< v1.3 */
        uint64_t temp_hbm_mc[AMDSMI_METRICS_MAX_HBM]; /**< v1.3 */

        /* power and energy */
        uint64_t socket_power_uw;     /**< curr_socket_power (1.4+), average_socket_power (1.3) */
        uint64_t energy_uj;           /**< energy_accumulator converted (2^-16 J units) */
        uint64_t energy_accumulator;  /**< raw counter */

        /* activity, percent */
        uint64_t gfx_activity_pct;
        uint64_t umc_activity_pct;
        uint64_t mm_activity_pct;     /**< v1.3 */
        uint64_t vcn_activity_pct[AMDSMI_METRICS_MAX_VCN];   /**< v1.4, v1.5 */
        uint64_t jpeg_activity_pct[32];                     /**< v1.5 */
        uint64_t gfx_activity_acc;
        uint64_t mem_activity_acc;
        uint64_t mem_max_bandwidth_bps; /**< v1.7+, bytes per second */

        /* time */
        uint64_t system_clock_counter_ns;
        uint64_t firmware_timestamp_ns; /**< converted from 10 ns units */

        /* throttling and residency */
        uint64_t throttle_status;       /**< v1.3, v1.4, v1.5 */
        uint64_t indep_throttle_status; /**< v1.3 */
        uint64_t gfxclk_lock_status;
        uint64_t accumulation_counter;  /**< v1.6+ */
        uint64_t prochot_residency_acc;
        uint64_t ppt_residency_acc;
        uint64_t socket_thm_residency_acc;
        uint64_t vr_thm_residency_acc;
        uint64_t hbm_thm_residency_acc;

        /* clocks, Hz */
        uint64_t gfxclk_hz[AMDSMI_METRICS_MAX_XCC];  /**< current_gfxclk[] (1.3: one value) */
        uint64_t socclk_hz[4];
        uint64_t vclk0_hz[4];
        uint64_t dclk0_hz[4];
        uint64_t uclk_hz;
        uint64_t avg_gfxclk_hz;       /**< v1.3 average_* */
        uint64_t avg_socclk_hz;
        uint64_t avg_uclk_hz;
        uint64_t avg_vclk0_hz;        /**< v1.3 */
        uint64_t avg_dclk0_hz;        /**< v1.3 */
        uint64_t avg_vclk1_hz;        /**< v1.3 */
        uint64_t avg_dclk1_hz;        /**< v1.3 */
        uint64_t vclk1_hz;            /**< v1.3 current_vclk1 */
        uint64_t dclk1_hz;            /**< v1.3 current_dclk1 */

        /* v1.3 only */
        uint64_t fan_speed_rpm;
        uint64_t voltage_soc_mv;
        uint64_t voltage_gfx_mv;
        uint64_t voltage_mem_mv;

        /* PCIe */
        uint64_t pcie_link_width;
        uint64_t pcie_link_speed_mts;  /**< converted from 0.1 GT/s */
        uint64_t pcie_bandwidth_acc;   /**< GB/s, accumulated */
        uint64_t pcie_bandwidth_inst;  /**< GB/s */
        uint64_t pcie_l0_to_recov_count_acc;
        uint64_t pcie_replay_count_acc;
        uint64_t pcie_replay_rover_count_acc;
        uint64_t pcie_nak_sent_count_acc;  /**< v1.5+ */
        uint64_t pcie_nak_rcvd_count_acc;  /**< v1.5+ */
        uint64_t pcie_lc_perf_other_end_recovery; /**< v1.6+ */

        /* XGMI */
        uint64_t xgmi_link_width;
        uint64_t xgmi_link_speed_gbps;
        uint64_t xgmi_read_data_kb[AMDSMI_METRICS_MAX_XGMI];
        uint64_t xgmi_write_data_kb[AMDSMI_METRICS_MAX_XGMI];
        uint64_t xgmi_link_status[AMDSMI_METRICS_MAX_XGMI]; /**< v1.7+: 0 down, 1 up, 2 n/a */

        /* partitions, v1.6+ */
        uint64_t num_partition;        /**< AMDSMI_NA before v1.6 */
        struct amdsmi_xcp_metrics xcp[AMDSMI_METRICS_MAX_XCP];
};

/**
 * Parses a raw gpu_metrics table. The header's structure_size must equal the revision's size
 * and must not exceed @p len.
 * @return 0; -EBADMSG if the buffer is shorter than the header, shorter than structure_size,
 * or structure_size does not match the revision's layout; -EOPNOTSUPP for a revision this
 * library does not know (never guessed at). @p ret_metrics is untouched on failure.
 * @since 0.1
 */
int amdsmi_gpu_metrics_parse(const void *buf, size_t len, struct amdsmi_gpu_metrics *ret_metrics);

/**
 * Reads <pci>/gpu_metrics now and parses it.
 * @return 0; -ENODATA if the GPU has no gpu_metrics file; parse errors as above; or the
 * read's negative errno.
 * @since 0.1
 */
int amdsmi_gpu_read_metrics(struct amdsmi_gpu *gpu, struct amdsmi_gpu_metrics *ret_metrics);

#ifdef __cplusplus
}
#endif
