/* SPDX-License-Identifier: MIT */
/* amdsmid.conf: the desired state of the GPUs (amdsmid.conf(5)), parsed with libinih.
 * An internal library of amdsmid and amdsmi(1) (apply --dry-run). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include <amdsmi/amdsmi.h>

/* [daemon] ranges and defaults, and the other limits of amdsmid.conf(5). */
#define CONFIG_POLL_INTERVAL_MS_MIN 100
#define CONFIG_POLL_INTERVAL_MS_MAX 600000
#define CONFIG_POLL_INTERVAL_MS_DEFAULT 2000
#define CONFIG_HISTORY_MAX_KIB_MIN 16
#define CONFIG_HISTORY_MAX_KIB_MAX 1048576
#define CONFIG_HISTORY_MAX_KIB_DEFAULT 1024
#define CONFIG_NUM_VFS_MAX 65535
/* the highest clock a soft limit or determinism ceiling may name (MHz) */
#define CONFIG_CLOCK_MAX_MHZ 100000
#define CONFIG_LIBVIRT_URI_DEFAULT "qemu:///system"
#define CONFIG_HOOK_TIMEOUT_S_MIN 1
#define CONFIG_HOOK_TIMEOUT_S_MAX 600
#define CONFIG_HOOK_TIMEOUT_S_DEFAULT 20
#define CONFIG_METRICS_INTERVAL_MS_MIN 100
#define CONFIG_METRICS_INTERVAL_MS_MAX 60000
#define CONFIG_METRICS_INTERVAL_MS_DEFAULT 1000
#define CONFIG_METRICS_TEXTFILE_MAX 4096 /* bytes of [metrics] textfile, with its NUL */
/* [kubernetes] nfd_features: the file of Node Feature Discovery's local source that amdsmid
 * writes by default, when its directory exists (nfd-worker's features.d) */
#define CONFIG_NFD_FEATURES_DIR_DEFAULT "/etc/kubernetes/node-feature-discovery/features.d"
#define CONFIG_NFD_FEATURES_DEFAULT CONFIG_NFD_FEATURES_DIR_DEFAULT "/amdsmi"
#define CONFIG_NFD_FEATURES_MAX 4096 /* bytes of [kubernetes] nfd_features, with its NUL */
#define CONFIG_FILE_MAX (1024 * 1024) /* bytes; a larger file is refused (-EFBIG) */
/* [health] (the verdict's thresholds, health/health-json.h) */
#define CONFIG_HEALTH_CE_RATE_DEFAULT 100 /* correctable errors per hour */
#define CONFIG_HEALTH_CE_RATE_MAX 1000000000u
#define CONFIG_HEALTH_BAD_PAGES_PERCENT_DEFAULT 90
#define CONFIG_HEALTH_RESET_WINDOW_DEFAULT 60 /* minutes */
#define CONFIG_HEALTH_RESET_WINDOW_MAX 10080  /* a week */
/* enforce = yes: the least time between two enforcements of one GPU's cap (amdsmid.conf(5)) */
#define CONFIG_ENFORCE_BACKOFF_S 10
/* A profile's name: a Kubernetes label value (1..63 of [A-Za-z0-9._-], a letter or digit at
 * both ends), since the NFD labels publish it. */
#define CONFIG_PROFILE_NAME_MAX 63
/* The selector file (what Kubernetes or Ansible writes): at most this many bytes. */
#define CONFIG_SELECTOR_MAX 4096

/* The desired state of one GPU: each key is either set or not. */
struct config_gpu {
        char bdf[16];                         /* "" for the [gpu] (every GPU) section */
        enum amdsmi_compute_mode compute;     /* AMDSMI_COMPUTE_UNKNOWN: not set */
        enum amdsmi_memory_mode memory;       /* AMDSMI_MEMORY_UNKNOWN: not set */
        bool power_cap_set;
        uint64_t power_cap_uw;
        bool num_vfs_set;
        unsigned num_vfs;
        /* performance (control/): the level (determinism with its ceiling), the soft limits
         * and the PM policies (an id or a name as pm_policy/ prints it) */
        enum amdsmi_perf_level perf_level;    /* AMDSMI_PERF_LEVEL_UNKNOWN: not set */
        uint32_t perf_determinism_sclk_mhz;   /* 0: not set (likewise below) */
        uint32_t sclk_min_mhz, sclk_max_mhz, mclk_max_mhz;
        char soc_pstate[32], xgmi_plpd[32];   /* "": not set */
        bool enforce_set;                     /* enforce given in this section */
        bool enforce;                         /* config_desired(): in force ([power]'s default) */
        unsigned line;                        /* where the section starts (1-based) */
};

/* Where the active profile comes from. */
enum config_profile_source {
        CONFIG_PROFILE_NONE,     /* no profile is active */
        CONFIG_PROFILE_SELECTOR, /* the selector file ($CONFIGURATION_DIRECTORY/profile) */
        CONFIG_PROFILE_CONFIG,   /* profile = NAME in [daemon] */
        CONFIG_PROFILE_OPTION,   /* named by the caller (amdsmi apply --profile) */
};

/* "selector", "config", "option", or NULL for none. */
const char *config_profile_source_to_string(enum config_profile_source s);

/* [profile NAME] and its [profile NAME gpu BDF] sections. */
struct config_profile {
        char name[CONFIG_PROFILE_NAME_MAX + 1];
        unsigned line;          /* its first section's line */
        struct config_gpu all;  /* [profile NAME] when all.line != 0 (bdf "") */
        struct config_gpu *gpus; /* [profile NAME gpu BDF] in file order */
        size_t n_gpus;
};

/* What identifies the selector file's version: amdsmid compares it at its periodic check. */
struct config_selector_stamp {
        bool exists;
        uint64_t dev, ino, size;
        int64_t mtime_sec, mtime_nsec;
};

struct config {
        char *path;                           /* the file read, or NULL when there was none */
        bool exists;                          /* false: no file (not an error: nothing desired) */
        /* [daemon] */
        unsigned poll_interval_ms;            /* the cheap periodic check (default 2000) */
        uint64_t history_max_bytes;           /* history.jsonl rotates beyond this (1 MiB) */
        char daemon_profile[CONFIG_PROFILE_NAME_MAX + 1]; /* profile = NAME ("" none) */
        /* [power] */
        bool power_enforce;                   /* enforce: outside writers are undone (no) */
        /* [libvirt] */
        char libvirt_uri[256];                /* where amdsmid sees the domains (qemu:///system) */
        unsigned hook_timeout_s;              /* amdsmi-libvirt-hook's deadline (20 s) */
        /* [metrics] */
        unsigned metrics_interval_ms;         /* the sampler's period while consumed (1000) */
        bool metrics_identity;                /* serial and unique_id on amdsmi_gpu_info (yes) */
        char *metrics_textfile;               /* written every interval; NULL: none */
        /* [kubernetes] */
        enum config_nfd {
                CONFIG_NFD_AUTO, /* CONFIG_NFD_FEATURES_DEFAULT when its directory exists */
                CONFIG_NFD_PATH, /* nfd_features = PATH */
                CONFIG_NFD_NO,   /* nfd_features = no */
        } nfd;
        char *nfd_features;                   /* CONFIG_NFD_PATH: the file; else NULL */
        /* [health] */
        struct {
                uint64_t ce_rate_warning_per_hour;  /* warning above (100) */
                unsigned bad_pages_warning_percent; /* of the retirement threshold (90) */
                unsigned reset_window_minutes;      /* a reset this recent warns (60) */
                enum config_health_events {
                        CONFIG_HEALTH_EVENTS_AUTO, /* the KFD event fd while subscribed */
                        CONFIG_HEALTH_EVENTS_YES,  /* always */
                        CONFIG_HEALTH_EVENTS_NO,   /* never */
                } events;
        } health;
        /* [gpu] is gpus[0] when present (bdf ""), then [gpu BDF] sections in file order */
        struct config_gpu *gpus;
        size_t n_gpus;
        /* [profile NAME] / [profile NAME gpu BDF], one entry per NAME in order of appearance */
        struct config_profile *profiles;
        size_t n_profiles;
        /* the active profile ("" none; config_desired() lays its keys over the [gpu] ones) */
        char profile[CONFIG_PROFILE_NAME_MAX + 1];
        enum config_profile_source profile_source;
        char *selector_path;                  /* the selector file looked at (NULL: none) */
        struct config_selector_stamp selector; /* and its version when read */
};

/* The configuration file: $CONFIGURATION_DIRECTORY/amdsmid.conf (its first entry when systemd
 * lists several, ':'-separated; only an absolute path counts), else
 * SYSCONFDIR/amdsmi/amdsmid.conf. -ENAMETOOLONG if it does not fit in @buf. */
int config_path(char *buf, size_t size);

/*
 * Parses @path (NULL: config_path()). A missing file is no error (*ret has exists == false,
 * path == NULL and the defaults). Any error refuses the whole file, *ret stays untouched:
 *   -EINVAL  a syntax or value error: "FILE:LINE: what is wrong" in @err;
 *   -ERANGE  a number or power cap out of its range: "FILE:LINE: ..." too;
 *   -EFBIG   the file is larger than CONFIG_FILE_MAX; -EISDIR; -ENOMEM;
 *   a negative errno from open() or read(): "FILE: cannot open: ..." in @err.
 * @err (may be NULL) is "" on success. Parsing stops at the first error.
 */
int config_load(const char *path, struct config **ret, char *err, size_t err_size);

/* The errno a refused configuration is reported with, to D-Bus callers (Reload) and by
 * amdsmi apply: -EINVAL (a file with an error: InvalidArgument, exit status 2, whatever the
 * error inside, the message says which) unless the file could not be read for lack of memory
 * or permission. */
int config_refusal_errno(int r);

/* Parses a configuration held in memory (@name, the path for messages and c->path; NULL:
 * "amdsmid.conf"). Same rules; a NUL byte ends @text. */
int config_parse_string(const char *name, const char *text, struct config **ret, char *err,
                        size_t err_size);
/* The same for @size bytes at @data, which may hold NUL bytes (refused, as in a file). */
int config_parse_buffer(const char *name, const void *data, size_t size, struct config **ret,
                        char *err, size_t err_size);

struct config *config_free(struct config *c);
static inline void config_freep(struct config **c) {
        config_free(*c);
}

/* Whether @s is a valid profile name (CONFIG_PROFILE_NAME_MAX). */
bool config_profile_name_valid(const char *s);

/* The selector file: $CONFIGURATION_DIRECTORY/profile (its first entry, as config_path()), else
 * SYSCONFDIR/amdsmi/profile. -ENAMETOOLONG if it does not fit in @buf. */
int config_selector_path(char *buf, size_t size);

/* Parses a selector file's text (@name for messages): one profile name, blanks around it, blank
 * lines and '#' comment lines allowed. @return 0 and the name in @ret, or -EINVAL with
 * "NAME: what is wrong" in @err. */
int config_selector_parse(const char *name, const void *data, size_t size,
                          char ret[static CONFIG_PROFILE_NAME_MAX + 1], char *err, size_t err_size);

/*
 * Reads the selector file @path: opened with O_NOFOLLOW|O_NONBLOCK, refused unless a regular
 * file owned by root (or by the caller's effective uid), not writable by group or others and at
 * most CONFIG_SELECTOR_MAX bytes. @return 0 with the name in @ret and its version in @ret_stamp
 * (may be NULL); -ENOENT when there is no file (@ret_stamp says so); else a negative errno
 * (-ELOOP, -EBADFD, -EPERM, -EFBIG, -EINVAL, ...) with "PATH: why" in @err.
 */
int config_selector_read(const char *path, char ret[static CONFIG_PROFILE_NAME_MAX + 1],
                         struct config_selector_stamp *ret_stamp, char *err, size_t err_size);

/* The version of the selector file @path now (exists == false when there is none, or it cannot
 * be looked at). */
void config_selector_stat(const char *path, struct config_selector_stamp *ret);
bool config_selector_stamp_equal(const struct config_selector_stamp *a,
                                 const struct config_selector_stamp *b);

/* The profile @name of @c (NULL: none). */
const struct config_profile *config_find_profile(const struct config *c, const char *name);

/* Makes @name (NULL or "": none) the active profile of @c, from @source. -EINVAL with
 * "FILE: ..." in @err when @c has no section of that name; @c is unchanged then. */
int config_select_profile(struct config *c, const char *name, enum config_profile_source source,
                          char *err, size_t err_size);

/* config_load() with the selector file @selector (NULL: none is looked at; config_load() looks
 * at config_selector_path() when it reads the default configuration file). A refused selector
 * refuses the whole configuration, and so does a selected profile without a section. */
int config_load_with_selector(const char *path, const char *selector, struct config **ret,
                              char *err, size_t err_size);

/* An empty GPU section for @bdf ("": every GPU): no key set. */
void config_gpu_init(struct config_gpu *g, const char *bdf);
/* Unsets in @common every key that @g does not set to the same value (what GPUs share). */
void config_gpu_intersect(struct config_gpu *common, const struct config_gpu *g);
/* Unsets in @g every key that @common sets to the same value (what a GPU has of its own). */
void config_gpu_subtract(struct config_gpu *g, const struct config_gpu *common);

/* The keys of @g as amdsmid.conf lines ("compute_mode = CPX\n"...), enforce included when
 * enforce_set: a new string, NULL on -ENOMEM. */
char *config_gpu_format(const struct config_gpu *g);

/* What the file desires for @bdf: the active profile's [profile P gpu BDF] keys over its
 * [profile P] keys, over the [gpu BDF] keys, over the [gpu] keys. @bdf may be upper-case
 * or short (05:00.0) like a section name. *ret is always written: ret->bdf is @bdf (normalised),
 * ret->line the line of the most specific of those sections there is, else 0. @c may be NULL (nothing set).
 * ret->enforce is the enforce in force for the GPU ([gpu BDF] over [gpu] over [power]; no when
 * none says), ret->enforce_set whether a GPU section gave it.
 * @return true if any key of the desired state is set (enforce, a policy, does not count). */
bool config_desired(const struct config *c, const char *bdf, struct config_gpu *ret);

/* The [gpu BDF] sections that name no GPU in @bdfs (for a warning), in file order and
 * normalised: a new strv (NULL-terminated, possibly empty; strv_free()), or NULL on -ENOMEM. */
char **config_unknown_gpus(const struct config *c, const char *const *bdfs, size_t n);
