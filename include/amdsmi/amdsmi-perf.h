/* SPDX-License-Identifier: MIT */
/**
 * @file amdsmi-perf.h
 * Performance controls: the DPM performance level (power_dpm_force_performance_level), the
 * gfx and memory clock soft limits (pp_od_clk_voltage), the DPM levels of each clock
 * (pp_dpm_*), and the power-management policies (pm_policy/soc_pstate, pm_policy/xgmi_plpd).
 *
 * On MI300 (SMU 13.0.6) the level takes only auto, manual and perf_determinism; the soft
 * limits are written only in manual or perf_determinism ("s 0|1 MHz", "m 1 MHz", then "c" to
 * commit, "r" to restore the defaults); pp_od_clk_voltage prints no OD_RANGE section there, so
 * the ranges are the first and last levels of pp_dpm_sclk / pp_dpm_mclk, which always show the
 * default levels. After a fatal RAS interrupt every clock file reads "unavailable" (-EIO here).
 * Clocks are in MHz, as the kernel's files give them.
 */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct amdsmi_gpu;

/** The DPM performance levels of power_dpm_force_performance_level. */
enum amdsmi_perf_level {
        AMDSMI_PERF_LEVEL_UNKNOWN = 0,
        AMDSMI_PERF_LEVEL_AUTO,             /**< "auto" */
        AMDSMI_PERF_LEVEL_LOW,              /**< "low" */
        AMDSMI_PERF_LEVEL_HIGH,             /**< "high" */
        AMDSMI_PERF_LEVEL_MANUAL,           /**< "manual" */
        AMDSMI_PERF_LEVEL_PROFILE_STANDARD, /**< "profile_standard" */
        AMDSMI_PERF_LEVEL_PROFILE_MIN_SCLK, /**< "profile_min_sclk" */
        AMDSMI_PERF_LEVEL_PROFILE_MIN_MCLK, /**< "profile_min_mclk" */
        AMDSMI_PERF_LEVEL_PROFILE_PEAK,     /**< "profile_peak" */
        AMDSMI_PERF_LEVEL_PERF_DETERMINISM, /**< "perf_determinism" */
        AMDSMI_PERF_LEVEL_PROFILE_EXIT,     /**< "profile_exit" */
        _AMDSMI_PERF_LEVEL_MAX,
};

/** "auto", "manual", "perf_determinism", ...; "unknown" for out-of-range values.
 * @since 0.2 */
const char *amdsmi_perf_level_to_string(enum amdsmi_perf_level l);

/** The level named @p s (exact, case-insensitive; "determinism" is perf_determinism).
 * @return 0, or -EINVAL for a name that is none. @since 0.2 */
int amdsmi_perf_level_from_string(const char *s, enum amdsmi_perf_level *ret);

/** Whether SMU 13.0.6 (MI300, MI325X, MI350) takes @p l: auto, manual, perf_determinism.
 * @since 0.2 */
bool amdsmi_perf_level_accepted(enum amdsmi_perf_level l);

/**
 * Reads the current level. @return 0, -EOPNOTSUPP without the file (a multi-VF guest, no
 * amdgpu), -EBUSY during a reset, -EBADMSG for a name the library does not know. @since 0.2
 */
int amdsmi_gpu_read_perf_level(struct amdsmi_gpu *gpu, enum amdsmi_perf_level *ret);

/**
 * Writes the level. @return 0, -EINVAL if the GPU refused it (on MI300 anything but auto,
 * manual, perf_determinism), -EOPNOTSUPP without the file or its write bit (a multi-VF guest
 * has no file; the kernel blocks the write there), -EBUSY during a reset. @since 0.2
 */
int amdsmi_gpu_write_perf_level(struct amdsmi_gpu *gpu, enum amdsmi_perf_level l);

/** The clocks with a pp_dpm_* file. */
enum amdsmi_clk_domain {
        AMDSMI_CLK_SCLK = 0, /**< "sclk": gfx */
        AMDSMI_CLK_MCLK,     /**< "mclk": memory (UCLK) */
        AMDSMI_CLK_SOCCLK,   /**< "socclk" */
        AMDSMI_CLK_FCLK,     /**< "fclk": data fabric */
        AMDSMI_CLK_VCLK,     /**< "vclk": video */
        AMDSMI_CLK_DCLK,     /**< "dclk": video decode */
        _AMDSMI_CLK_MAX,
};

/** "sclk", "mclk", ...; "unknown" for out-of-range values. @since 0.2 */
const char *amdsmi_clk_domain_to_string(enum amdsmi_clk_domain d);

/** The domain named @p s ("sclk", "gfx"; "mclk", "uclk", "mem"; ...). @return 0 or -EINVAL.
 * @since 0.2 */
int amdsmi_clk_domain_from_string(const char *s, enum amdsmi_clk_domain *ret);

#define AMDSMI_CLK_LEVELS_MAX 16

/** A pp_dpm_* file: the levels as printed ("N: MHzMhz [*]"), the one marked current, and the
 * deep-sleep line ("S: MHzMhz *") when the clock is below the deep-sleep threshold. */
struct amdsmi_clk_levels {
        unsigned n;
        uint32_t mhz[AMDSMI_CLK_LEVELS_MAX];
        int current;             /**< index of the level marked '*', -1: none (deep sleep) */
        bool deep_sleep;         /**< an "S:" line is marked current */
        uint32_t deep_sleep_mhz; /**< its clock */
};

/**
 * Parses a pp_dpm_* file's text (@p len bytes, NUL not required). @return 0; -ENODATA when
 * empty; -EIO for "unavailable" (after a fatal RAS interrupt); -EBADMSG for anything else that
 * is not the format (no level, numbers out of order, more than AMDSMI_CLK_LEVELS_MAX levels, a
 * truncated line). @p ret is untouched on failure. @since 0.2
 */
int amdsmi_clk_levels_parse(const char *text, size_t len, struct amdsmi_clk_levels *ret);

/** Reads pp_dpm_<domain>. @return as amdsmi_clk_levels_parse(), -EOPNOTSUPP without the
 * file, -EBUSY during a reset. @since 0.2 */
int amdsmi_gpu_read_clk_levels(struct amdsmi_gpu *gpu, enum amdsmi_clk_domain d,
                               struct amdsmi_clk_levels *ret);

/** pp_dpm_sclk / pp_dpm_mclk's extremes, the range a soft limit may take: first and last
 * level. @since 0.2 */
static inline uint32_t amdsmi_clk_levels_min(const struct amdsmi_clk_levels *l) {
        return l->n ? l->mhz[0] : 0;
}
static inline uint32_t amdsmi_clk_levels_max(const struct amdsmi_clk_levels *l) {
        return l->n ? l->mhz[l->n - 1] : 0;
}

/** pp_dpm_*'s current clock: the level marked, or the deep-sleep clock; 0 if none. @since 0.2 */
uint32_t amdsmi_clk_levels_current_mhz(const struct amdsmi_clk_levels *l);

/** What pp_od_clk_voltage shows on SMU 13.0.6: the committed soft limits. */
struct amdsmi_od_clk {
        bool sclk_present; /**< an OD_SCLK section */
        uint32_t sclk_min_mhz, sclk_max_mhz;
        bool mclk_present; /**< an OD_MCLK section (the SMU can set the UCLK max) */
        uint32_t mclk_min_mhz, mclk_max_mhz;
};

/**
 * Parses pp_od_clk_voltage's text. Sections other than OD_SCLK and OD_MCLK (OD_RANGE,
 * OD_VDDC_CURVE of other GPUs) are skipped. @return 0; -ENODATA when empty; -EIO for
 * "unavailable"; -EBADMSG when neither section is complete (both lines 0: and 1:) or a line is
 * garbage. @since 0.2
 */
int amdsmi_od_clk_parse(const char *text, size_t len, struct amdsmi_od_clk *ret);

/** Reads pp_od_clk_voltage. @return as amdsmi_od_clk_parse(), -EOPNOTSUPP without the file,
 * -EBUSY during a reset. @since 0.2 */
int amdsmi_gpu_read_od_clk(struct amdsmi_gpu *gpu, struct amdsmi_od_clk *ret);

/** A change of the soft limits; 0 leaves a limit as it is. */
struct amdsmi_od_request {
        uint32_t sclk_min_mhz, sclk_max_mhz;
        uint32_t mclk_max_mhz;
};

#define AMDSMI_OD_DRY_RUN (UINT64_C(1) << 0) /**< validate only */

/**
 * Validates @p req against the ranges (pp_dpm_sclk / pp_dpm_mclk) and the committed limits
 * (the resulting min must stay below the max), then writes "s 0", "s 1", "m 1" as asked and
 * "c". The level must already be manual or perf_determinism (the kernel refuses the writes
 * otherwise: -EPERM here, so the caller can say so). In perf_determinism only the sclk max (the
 * ceiling) is kept by the commit. @return 0; -ERANGE outside a range; -EINVAL for an inverted
 * range or an empty request; -EOPNOTSUPP for an mclk max the GPU cannot set (no OD_MCLK) or no
 * pp_od_clk_voltage; -EBUSY during a reset; -EIO when the commit was refused. @since 0.2
 */
int amdsmi_gpu_write_od_clk(struct amdsmi_gpu *gpu, const struct amdsmi_od_request *req,
                            uint64_t flags);

/** Writes "r" then "c" (the default limits; in manual or perf_determinism only, -EPERM
 * otherwise). @since 0.2 */
int amdsmi_gpu_restore_od_clk(struct amdsmi_gpu *gpu);

/** The power-management policies of pm_policy/. */
enum amdsmi_pm_policy_kind {
        AMDSMI_PM_POLICY_SOC_PSTATE = 0, /**< "soc_pstate" */
        AMDSMI_PM_POLICY_XGMI_PLPD,      /**< "xgmi_plpd" */
        _AMDSMI_PM_POLICY_MAX,
};

/** "soc_pstate", "xgmi_plpd"; "unknown" otherwise. @since 0.2 */
const char *amdsmi_pm_policy_kind_to_string(enum amdsmi_pm_policy_kind k);
/** @return 0 or -EINVAL. @since 0.2 */
int amdsmi_pm_policy_kind_from_string(const char *s, enum amdsmi_pm_policy_kind *ret);

#define AMDSMI_PM_POLICY_LEVELS_MAX 8

/** A pm_policy file: "<id> : <name>" per level, '*' after the current one. */
struct amdsmi_pm_policy {
        unsigned n;
        struct {
                unsigned id;
                char name[32];
        } levels[AMDSMI_PM_POLICY_LEVELS_MAX];
        int current; /**< index into levels of the one marked '*', -1: none */
};

/**
 * Parses a pm_policy file's text. @return 0; -ENODATA when empty; -EBADMSG for garbage (a line
 * without " : ", an id that is no number or repeated, a name too long, too many levels).
 * @since 0.2
 */
int amdsmi_pm_policy_parse(const char *text, size_t len, struct amdsmi_pm_policy *ret);

/** Reads pm_policy/<kind>. @return as the parser, -EOPNOTSUPP when the SOC does not offer it
 * (no file), -EBUSY during a reset. @since 0.2 */
int amdsmi_gpu_read_pm_policy(struct amdsmi_gpu *gpu, enum amdsmi_pm_policy_kind k,
                              struct amdsmi_pm_policy *ret);

/** Finds the level @p s names in @p p: its id ("2") or its name ("soc_pstate_1", any case).
 * @return its index, or -EINVAL. @since 0.2 */
int amdsmi_pm_policy_find(const struct amdsmi_pm_policy *p, const char *s);

/** Writes level @p id to pm_policy/<kind> after checking that the file lists it.
 * @return 0; -EINVAL for an id not listed; -EOPNOTSUPP without the file; -EBUSY during a
 * reset (the kernel's EPERM). @since 0.2 */
int amdsmi_gpu_write_pm_policy(struct amdsmi_gpu *gpu, enum amdsmi_pm_policy_kind k, unsigned id);

#ifdef __cplusplus
}
#endif
