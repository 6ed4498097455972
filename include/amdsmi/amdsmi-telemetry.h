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

/*
 * ---- Since 0.2 (version node AMDSMI_1.1) ----------------------------------------------------
 *
 * The attribute-encoded tables of current drivers (gpu_metrics 1.9, xcp_metrics 1.1) carry
 * more than struct amdsmi_gpu_metrics can hold, and that struct is caller-allocated, so it
 * cannot grow. The structures below are versioned: the caller sets @c size to the sizeof() of
 * its own build, the library fills what fits (a newer library never writes past @c size, an
 * older one leaves the tail untouched) and says in @c version what it filled.
 */

#define AMDSMI_METRICS_MAX_HBM_STACK 8 /**< per-stack HBM temperatures of newer kernels */
#define AMDSMI_METRICS_MAX_AID 4
#define AMDSMI_METRICS_MAX_MID 4
#define AMDSMI_METRICS_MAX_UNKNOWN 16

/**
 * The numbering of the attribute ids from 48 on, which changed between driver builds: the
 * SMU 13.0.6 / 13.0.12 parts (every GPU this library knows: MI300X, MI300A, MI325X, MI350X,
 * MI355X) use AMDSMI_METRICS_IDS_T3.
 */
enum amdsmi_metrics_ids {
        AMDSMI_METRICS_IDS_T3 = 0,  /**< 48 TEMPERATURE_HBM, 49 _AID, 50 _XCD */
        AMDSMI_METRICS_IDS_MID = 1, /**< SMU 15.0.8: 48 _HBM, 49 _MID, 50 _AID, 51 _XCD */
};

/** The version of struct amdsmi_gpu_metrics_ext this library fills. */
#define AMDSMI_GPU_METRICS_EXT_VERSION 1

/** One attribute record the parser did not use: an id it does not know (skipped by its
 * encoded size, never an error). */
struct amdsmi_metrics_attr {
        uint16_t id;            /**< attribute id (0..1023) */
        uint8_t type;           /**< type code (0 U8 .. 7 S64) */
        uint8_t unit;           /**< unit code as encoded */
        uint16_t instances;     /**< instance count */
};

/**
 * A parsed gpu_metrics table of any supported revision (1.3 to 1.9), versioned.
 *
 * @c base holds everything amdsmi_gpu_metrics_parse() gives. For 1.9, whose per-XCC arrays
 * describe the whole GPU rather than one partition, @c base.num_partition and @c base.xcp are
 * AMDSMI_NA (read each partition's xcp_metrics instead), and the arrays go to the @c xcc_
 * members. For 1.6 to 1.8 the @c xcc_ members are the partitions' entries laid end to end
 * (partition 0's XCCs first). Every member the table lacks is AMDSMI_NA.
 */
struct amdsmi_gpu_metrics_ext {
        uint32_t size;          /**< in: sizeof(struct amdsmi_gpu_metrics_ext) of the caller */
        uint32_t version;       /**< out: AMDSMI_GPU_METRICS_EXT_VERSION of the library */
        uint32_t ids;           /**< in: enum amdsmi_metrics_ids (parse only; a read sets it
                                     from the GPU) */
        uint32_t reserved0;
        struct amdsmi_gpu_metrics base;

        /* per XCC of the whole GPU */
        uint64_t xcc_gfx_busy_inst_pct[AMDSMI_METRICS_MAX_XCC];
        uint64_t xcc_gfx_busy_acc[AMDSMI_METRICS_MAX_XCC];
        uint64_t xcc_below_host_limit_ppt_acc[AMDSMI_METRICS_MAX_XCC];
        uint64_t xcc_below_host_limit_thm_acc[AMDSMI_METRICS_MAX_XCC];
        uint64_t xcc_low_utilization_acc[AMDSMI_METRICS_MAX_XCC];
        uint64_t xcc_below_host_limit_total_acc[AMDSMI_METRICS_MAX_XCC]; /**< 1.7: the one
                                                                             accumulator */
        /* whole-GPU media engines (1.9) */
        uint64_t jpeg_busy_pct[AMDSMI_METRICS_MAX_JPEG];
        uint64_t vcn_busy_pct[AMDSMI_METRICS_MAX_VCN];

        /* temperatures of newer kernels, millidegrees C */
        uint64_t temp_hbm_stack_mc[AMDSMI_METRICS_MAX_HBM_STACK];
        uint64_t temp_aid_mc[AMDSMI_METRICS_MAX_AID];
        uint64_t temp_xcd_mc[AMDSMI_METRICS_MAX_XCC];
        uint64_t temp_mid_mc[AMDSMI_METRICS_MAX_MID];

        /* counter widths in bits (0: not in the table), for wrap-around */
        uint8_t accumulation_counter_bits;
        uint8_t residency_bits;  /**< the narrowest of the five *_residency_acc */
        uint8_t reserved[2];

        /* attribute-encoded tables (1.9) */
        uint32_t attr_count;     /**< records in the table; 0 for fixed layouts */
        uint32_t unknown_attrs;  /**< records skipped (the first ones in @c unknown) */
        struct amdsmi_metrics_attr unknown[AMDSMI_METRICS_MAX_UNKNOWN];
        uint32_t clipped_attrs;  /**< known records with more instances than the member holds
                                      (the extra instances are dropped) */
};

/**
 * Parses a raw gpu_metrics table of revision 1.3 to 1.9 into @p ret_metrics, whose @c size the
 * caller has set.
 *
 * Revision 1.9 is attribute-encoded: every record is checked against the header's
 * structure_size and the bytes given before its values are read. An unknown attribute id (ids
 * from 48 on as @c ids says) is skipped by its encoded size and counted; every integer type is
 * taken for every known id. An unknown type code, an instance count of 0 or one that runs past
 * structure_size, an attr_count that does not end exactly at structure_size, or a
 * structure_size beyond the buffer make the whole table invalid. Bytes after structure_size
 * are ignored.
 *
 * @param ret_reason optional buffer for a one-line reason when the table is invalid (offset
 * and what is wrong); "" on success.
 * @return 0; -EINVAL for a @c size smaller than the version-1 structure; -EBADMSG for an
 * invalid table; -EOPNOTSUPP for a revision this library does not know. @p ret_metrics is
 * untouched on failure (@c size aside).
 * @since 0.2
 */
int amdsmi_gpu_metrics_parse_ext(const void *buf, size_t len,
                                 struct amdsmi_gpu_metrics_ext *ret_metrics, char *ret_reason,
                                 size_t reason_size);

/**
 * Reads <pci>/gpu_metrics now and parses it with amdsmi_gpu_metrics_parse_ext().
 * @return as amdsmi_gpu_metrics_parse_ext(); -ENODATA if the GPU has no gpu_metrics file; or
 * the read's negative errno.
 * @since 0.2
 */
int amdsmi_gpu_read_metrics_ext(struct amdsmi_gpu *gpu, struct amdsmi_gpu_metrics_ext *ret_metrics,
                                char *ret_reason, size_t reason_size);

/** The version of struct amdsmi_partition_metrics this library fills. */
#define AMDSMI_PARTITION_METRICS_VERSION 1

/**
 * One compute partition's xcp_metrics table (revision 1.0, fixed layout; 1.1,
 * attribute-encoded), versioned as struct amdsmi_gpu_metrics_ext. The per-XCC arrays are the
 * XCCs of this partition. Every member the table lacks is AMDSMI_NA.
 */
struct amdsmi_partition_metrics {
        uint32_t size;          /**< in: sizeof(struct amdsmi_partition_metrics) of the caller */
        uint32_t version;       /**< out: AMDSMI_PARTITION_METRICS_VERSION of the library */
        uint16_t structure_size;
        uint8_t format_revision;
        uint8_t content_revision;
        uint32_t reserved;

        uint64_t gfxclk_hz[AMDSMI_METRICS_MAX_XCC];
        uint64_t socclk_hz[4];
        uint64_t vclk0_hz[4];
        uint64_t dclk0_hz[4];
        uint64_t uclk_hz;
        struct amdsmi_xcp_metrics xcp;   /**< busy values and accumulators of its XCCs */
        uint64_t accumulation_counter;   /**< 1.1 of newer kernels */
        uint64_t firmware_timestamp_ns;  /**< 1.1 of newer kernels */
        uint8_t accumulation_counter_bits;
        uint8_t reserved2[3];

        uint32_t attr_count;
        uint32_t unknown_attrs;
        struct amdsmi_metrics_attr unknown[AMDSMI_METRICS_MAX_UNKNOWN];
        uint32_t clipped_attrs;
};

/**
 * Parses a raw xcp_metrics table (format 1, content 0 or 1), with the checks of
 * amdsmi_gpu_metrics_parse_ext().
 * @since 0.2
 */
int amdsmi_partition_metrics_parse(const void *buf, size_t len,
                                   struct amdsmi_partition_metrics *ret_metrics, char *ret_reason,
                                   size_t reason_size);

/**
 * Reads a compute partition's xcp_metrics now (<pci>/xcp/xcp_metrics for partition 0, the
 * partition's amdgpu_xcp platform device for the others, found through its render node) and
 * parses it.
 * @return as amdsmi_partition_metrics_parse(); -ENODATA if the partition has no xcp_metrics
 * (older kernels, or no render node); -ESTALE for a handle of an older enumeration.
 * @since 0.2
 */
int amdsmi_partition_read_metrics(struct amdsmi_partition *part,
                                  struct amdsmi_partition_metrics *ret_metrics, char *ret_reason,
                                  size_t reason_size);

/** The version of struct amdsmi_limiters this library fills. */
#define AMDSMI_LIMITERS_VERSION 1

/**
 * Why a GPU was slow between two gpu_metrics samples: the share of the interval each limiter
 * held it, in parts per million (1000000 = the whole interval), from the residency counters and
 * the accumulation counter (1.6+), with counter wrap-around handled. AMDSMI_NA where a table
 * lacks the counters.
 */
struct amdsmi_limiters {
        uint32_t size;          /**< in: sizeof(struct amdsmi_limiters) of the caller */
        uint32_t version;       /**< out: AMDSMI_LIMITERS_VERSION */
        uint64_t ticks;         /**< accumulation counter ticks between the samples */
        uint64_t interval_ns;   /**< system clock between the samples, AMDSMI_NA if unknown */

        uint64_t ppt_ppm;               /**< package power tracking (the power cap) */
        uint64_t socket_thermal_ppm;
        uint64_t hbm_thermal_ppm;
        uint64_t vr_thermal_ppm;
        uint64_t prochot_ppm;

        /* per XCC of the GPU: clock below the host's limit because of ... */
        uint64_t xcc_below_host_limit_ppt_ppm[AMDSMI_METRICS_MAX_XCC];
        uint64_t xcc_below_host_limit_thm_ppm[AMDSMI_METRICS_MAX_XCC];
        uint64_t xcc_below_host_limit_total_ppm[AMDSMI_METRICS_MAX_XCC];
        uint64_t xcc_low_utilization_ppm[AMDSMI_METRICS_MAX_XCC];
};

/**
 * Computes the limiters between two samples of one GPU, @p prev taken before @p cur.
 * A counter that went backwards wrapped once (at its width); a share above the whole interval
 * is clamped to it.
 * @return 0; -ENODATA if either sample lacks the accumulation counter; -EAGAIN if the counter
 * did not move (samples too close together); -ESTALE if the GPU restarted its counters
 * between the samples (its clock went backwards); -EINVAL for a @c size too small.
 * @since 0.2
 */
int amdsmi_limiters_compute(const struct amdsmi_gpu_metrics_ext *prev,
                            const struct amdsmi_gpu_metrics_ext *cur,
                            struct amdsmi_limiters *ret_limiters);

#ifdef __cplusplus
}
#endif
