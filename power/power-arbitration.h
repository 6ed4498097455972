/* SPDX-License-Identifier: MIT */
/*
 * The pure core of power-cap arbitration (ARCHITECTURE §5 "Power", "Power details"; spec
 * amdgpu-sysfs §4.3): per GPU up to three kinds of source limit PPT0 (power1_cap) — host (the
 * admin, 0..1), vm (0..POWER_VM_MAX, keyed by VM name or UUID, optionally with the VF's BDF)
 * and apml (the BMC's platform limit, 0..1). The effective cap is the minimum over the present
 * sources, clamped to [max(cap_min, 1 W), cap_max]; with no source it is the default cap.
 *
 * No sysfs, no files, no clock, no printing, no allocation: the library, amdsmid and the CLI's
 * --direct path feed it what they read and persist. Values are microwatts; times are µs since
 * the epoch (CLOCK_REALTIME), supplied by the caller.
 *
 * Tie order (documented, deterministic): when several sources ask for the same minimum, the
 * first one in the order host < vm < apml binds, and among VMs the one whose key sorts first
 * (strcmp, byte order). Sources are always listed in that same order.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "Unknown", the same value as the public AMDSMI_NA. */
#define POWER_UW_UNKNOWN UINT64_MAX
#define POWER_UW_PER_W UINT64_C(1000000)
/* The smallest cap ever accepted: the kernel treats 0 as "re-apply the current limit". */
#define POWER_FLOOR_UW POWER_UW_PER_W
/* The largest value kstrtou32() accepts in power1_cap (4294.967295 W). */
#define POWER_WRITE_MAX_UW UINT64_C(4294967295)

#define POWER_VM_MAX 64
#define POWER_KEY_MAX 128    /* VM name or UUID, NUL included */
#define POWER_BDF_MAX 16     /* "0000:c1:00.0", NUL included */
#define POWER_SETTER_MAX 256 /* "uid 0 (amdsmi)", "libvirt hook", "apml file /run/..." */
#define POWER_SOURCES_MAX (2 + POWER_VM_MAX)

enum power_source_kind {
        POWER_SOURCE_HOST,
        POWER_SOURCE_VM,
        POWER_SOURCE_APML,
        _POWER_SOURCE_SETTABLE_MAX,
        /* Only as the binding of an explanation: */
        POWER_SOURCE_DEFAULT = _POWER_SOURCE_SETTABLE_MAX, /* no source: the default cap */
        POWER_SOURCE_NONE,                                 /* no source, default unknown */
        _POWER_SOURCE_KIND_MAX,
};

enum power_clamp {
        POWER_CLAMP_NONE,
        POWER_CLAMP_LOW,  /* raised to max(cap_min, 1 W) */
        POWER_CLAMP_HIGH, /* lowered to cap_max */
        _POWER_CLAMP_MAX,
};

enum power_observed {
        POWER_OBSERVED_UNKNOWN,        /* not compared (a value unknown) */
        POWER_OBSERVED_CONSISTENT,     /* equal in whole watts (the kernel truncates µW to W) */
        POWER_OBSERVED_EXTERNAL,       /* lower: an external limiter (BMC...); never roll back */
        POWER_OBSERVED_OUTSIDE_WRITER, /* higher: someone else wrote power1_cap */
        _POWER_OBSERVED_MAX,
};

struct power_source {
        bool present; /* host/apml: set; VMs in the array are always present */
        uint64_t uw;
        char key[POWER_KEY_MAX];       /* vm: VM name or UUID; "" for host and apml */
        char vf_bdf[POWER_BDF_MAX];    /* vm: the VF's BDF, "" if not known */
        char setter[POWER_SETTER_MAX]; /* who set it */
        uint64_t set_usec;             /* when, µs since the epoch (CLOCK_REALTIME) */
};

/* One GPU's sources. Zero-initialised (power_sources_init()) means "no source". */
struct power_sources {
        struct power_source host;
        struct power_source apml;
        struct power_source vms[POWER_VM_MAX]; /* sorted by key (strcmp), no duplicates */
        size_t n_vms;
};

/* The hardware range of power1_cap, each POWER_UW_UNKNOWN when unknown. */
struct power_range {
        uint64_t cap_min_uw;
        uint64_t cap_max_uw;
        uint64_t default_uw;
};

struct power_explain_source {
        enum power_source_kind kind; /* host, vm or apml */
        uint64_t uw;
        char key[POWER_KEY_MAX];
        char vf_bdf[POWER_BDF_MAX];
        char setter[POWER_SETTER_MAX];
        uint64_t set_usec;
        bool binds; /* exactly one source binds when any is present */
};

struct power_explanation {
        uint64_t effective_uw; /* POWER_UW_UNKNOWN only with binding POWER_SOURCE_NONE */
        uint64_t requested_uw; /* minimum of the sources before clamping, or UNKNOWN */
        enum power_source_kind binding;
        char binding_key[POWER_KEY_MAX]; /* the VM's key when binding is vm, else "" */
        enum power_clamp clamp;
        uint64_t floor_uw;   /* max(cap_min, 1 W) */
        uint64_t ceiling_uw; /* cap_max, or UNKNOWN (no upper clamp) */
        size_t n_sources;
        struct power_explain_source sources[POWER_SOURCES_MAX]; /* host, vms by key, apml */
        /* Filled by power_explanation_observe(); UNKNOWN after power_arbitrate(). */
        uint64_t observed_uw;
        enum power_observed observed;
};

const char *power_source_kind_to_string(enum power_source_kind k);
/* Accepts "host", "vm", "apml" only (the settable kinds). */
int power_source_kind_from_string(const char *s, enum power_source_kind *ret);
const char *power_clamp_to_string(enum power_clamp c);
/* "unknown", "consistent", "external", "outside-writer" */
const char *power_observed_to_string(enum power_observed o);

/* 0, or -EDOM for 0 and anything below 1 W, -ERANGE above POWER_WRITE_MAX_UW: both out of
 * range (org.amdsmi1.Error.OutOfRange, exit status 7) on every path. */
int power_validate(uint64_t uw);
/* Whether the kernel will truncate uw (it is not a whole number of watts). */
bool power_truncates(uint64_t uw);

void power_sources_init(struct power_sources *s);
/* Sets or replaces a source: host/apml by kind (key must be NULL or ""), vm by key (required,
 * vf_bdf optional, replaced too). setter may be NULL. Returns 1 when added, 0 when replaced;
 * -EINVAL (bad kind, value, key), -ERANGE (value), -ENAMETOOLONG (key, BDF or setter too long),
 * -ENOSPC (POWER_VM_MAX VMs already). Nothing changes on failure. */
int power_sources_set(struct power_sources *s, enum power_source_kind kind, const char *key,
                      const char *vf_bdf, uint64_t uw, const char *setter, uint64_t set_usec);
/* Removes one source (vm by key). Returns 1 when removed, 0 when it was not there, -EINVAL. */
int power_sources_clear(struct power_sources *s, enum power_source_kind kind, const char *key);
/* Removes every vm source; returns how many were removed. */
size_t power_sources_clear_vms(struct power_sources *s);
const struct power_source *power_sources_find_vm(const struct power_sources *s, const char *key);

/* Computes the effective cap and its explanation. -EINVAL when the range is inconsistent
 * (max(cap_min, 1 W) > cap_max); ret untouched on failure. The default cap is not clamped. */
int power_arbitrate(const struct power_sources *s, const struct power_range *range,
                    struct power_explanation *ret);

/* Compares the modelled effective cap with the device's read-back, in whole watts. -ENODATA
 * when either is unknown. */
int power_compare_observed(uint64_t modelled_uw, uint64_t observed_uw, enum power_observed *ret);
/* Records the read-back in an explanation (observed UNKNOWN when it cannot be compared). */
void power_explanation_observe(struct power_explanation *e, uint64_t observed_uw);

/* Parses a power value: "600", "600W", "600w", "450.5W", "600000mW", "0.6kW", with at most one
 * space before the unit ("600 W"). Units: W/w (default), mW/mw (milli: lower-case m only, "MW"
 * is refused), kW/kw/KW/Kw. Decimal digits only, a '.' needs digits on both sides; no sign, no
 * leading or trailing whitespace, no exponent, no locale. Fractional digits beyond µW
 * resolution must be zeros (no silent precision loss), otherwise -EINVAL. The result is
 * syntax only: "0" parses to 0 (power_validate() refuses it). Overflow (>= UINT64_MAX µW)
 * → -ERANGE; anything else bad → -EINVAL. ret_uw is written only on success. */
int power_parse_watts(const char *s, uint64_t *ret_uw);
