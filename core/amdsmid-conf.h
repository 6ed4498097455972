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
#define CONFIG_LIBVIRT_URI_DEFAULT "qemu:///system"
#define CONFIG_HOOK_TIMEOUT_S_MIN 1
#define CONFIG_HOOK_TIMEOUT_S_MAX 600
#define CONFIG_HOOK_TIMEOUT_S_DEFAULT 20
#define CONFIG_METRICS_INTERVAL_MS_MIN 100
#define CONFIG_METRICS_INTERVAL_MS_MAX 60000
#define CONFIG_METRICS_INTERVAL_MS_DEFAULT 1000
#define CONFIG_METRICS_TEXTFILE_MAX 4096 /* bytes of [metrics] textfile, with its NUL */
#define CONFIG_FILE_MAX (1024 * 1024) /* bytes; a larger file is refused (-EFBIG) */
/* [health] (the verdict's thresholds, health/health-json.h) */
#define CONFIG_HEALTH_CE_RATE_DEFAULT 100 /* correctable errors per hour */
#define CONFIG_HEALTH_CE_RATE_MAX 1000000000u
#define CONFIG_HEALTH_BAD_PAGES_PERCENT_DEFAULT 90
#define CONFIG_HEALTH_RESET_WINDOW_DEFAULT 60 /* minutes */
#define CONFIG_HEALTH_RESET_WINDOW_MAX 10080  /* a week */
/* enforce = yes: the least time between two enforcements of one GPU's cap (amdsmid.conf(5)) */
#define CONFIG_ENFORCE_BACKOFF_S 10

/* The desired state of one GPU: each key is either set or not. */
struct config_gpu {
        char bdf[16];                         /* "" for the [gpu] (every GPU) section */
        enum amdsmi_compute_mode compute;     /* AMDSMI_COMPUTE_UNKNOWN: not set */
        enum amdsmi_memory_mode memory;       /* AMDSMI_MEMORY_UNKNOWN: not set */
        bool power_cap_set;
        uint64_t power_cap_uw;
        bool num_vfs_set;
        unsigned num_vfs;
        bool enforce_set;                     /* enforce given in this section */
        bool enforce;                         /* config_desired(): in force ([power]'s default) */
        unsigned line;                        /* where the section starts (1-based) */
};

struct config {
        char *path;                           /* the file read, or NULL when there was none */
        bool exists;                          /* false: no file (not an error: nothing desired) */
        /* [daemon] */
        unsigned poll_interval_ms;            /* the cheap periodic check (default 2000) */
        uint64_t history_max_bytes;           /* history.jsonl rotates beyond this (1 MiB) */
        /* [power] */
        bool power_enforce;                   /* enforce: outside writers are undone (no) */
        /* [libvirt] */
        char libvirt_uri[256];                /* where amdsmid sees the domains (qemu:///system) */
        unsigned hook_timeout_s;              /* amdsmi-libvirt-hook's deadline (20 s) */
        /* [metrics] */
        unsigned metrics_interval_ms;         /* the sampler's period while consumed (1000) */
        bool metrics_identity;                /* serial and unique_id on amdsmi_gpu_info (yes) */
        char *metrics_textfile;               /* written every interval; NULL: none */
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

/* What the file desires for @bdf: the [gpu BDF] keys over the [gpu] keys. @bdf may be upper-case
 * or short (05:00.0) like a section name. *ret is always written: ret->bdf is @bdf (normalised),
 * ret->line the [gpu BDF] section's line, else [gpu]'s, else 0. @c may be NULL (nothing set).
 * ret->enforce is the enforce in force for the GPU ([gpu BDF] over [gpu] over [power]; no when
 * none says), ret->enforce_set whether a GPU section gave it.
 * @return true if any key of the desired state is set (enforce, a policy, does not count). */
bool config_desired(const struct config *c, const char *bdf, struct config_gpu *ret);

/* The [gpu BDF] sections that name no GPU in @bdfs (for a warning), in file order and
 * normalised: a new strv (NULL-terminated, possibly empty; strv_free()), or NULL on -ENOMEM. */
char **config_unknown_gpus(const struct config *c, const char *const *bdfs, size_t n);
