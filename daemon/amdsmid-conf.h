/* SPDX-License-Identifier: MIT */
/* amdsmid.conf: the desired state of the GPUs (amdsmid.conf(5)), parsed with libinih.
 * An internal library of amdsmid and amdsmi(1) (apply --dry-run). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include <amdsmi/amdsmi.h>

/* The desired state of one GPU: each key is either set or not. */
struct config_gpu {
        char bdf[16];                         /* "" for the [gpu] (every GPU) section */
        enum amdsmi_compute_mode compute;     /* AMDSMI_COMPUTE_UNKNOWN: not set */
        enum amdsmi_memory_mode memory;       /* AMDSMI_MEMORY_UNKNOWN: not set */
        bool power_cap_set;
        uint64_t power_cap_uw;
        bool num_vfs_set;
        unsigned num_vfs;
        unsigned line;                        /* where the section starts (1-based) */
};

struct config {
        char *path;                           /* the file read, or NULL when there was none */
        bool exists;                          /* false: no file (not an error: nothing desired) */
        /* [daemon] */
        unsigned poll_interval_ms;            /* the cheap periodic check (default 2000) */
        uint64_t history_max_bytes;           /* history.jsonl rotates beyond this (1 MiB) */
        /* [gpu] is gpus[0] when present (bdf ""), then [gpu BDF] sections in file order */
        struct config_gpu *gpus;
        size_t n_gpus;
};

/* The configuration file: $CONFIGURATION_DIRECTORY/amdsmid.conf, else
 * SYSCONFDIR/amdsmi/amdsmid.conf. */
int config_path(char *buf, size_t size);

/*
 * Parses @path (NULL: config_path()). A missing file is no error (*ret has exists == false and
 * the defaults). Any error refuses the whole file: -EINVAL (or -ERANGE, -ENOMEM, a read errno)
 * with "FILE:LINE: what is wrong" in @err (may be NULL).
 */
int config_load(const char *path, struct config **ret, char *err, size_t err_size);

/* Parses a configuration held in memory (@name is used in messages). Same rules. */
int config_parse_string(const char *name, const char *text, struct config **ret, char *err,
                        size_t err_size);

struct config *config_free(struct config *c);
static inline void config_freep(struct config **c) {
        config_free(*c);
}

/* What the file desires for @bdf: the [gpu BDF] keys over the [gpu] keys. @return true if
 * any key is set. */
bool config_desired(const struct config *c, const char *bdf, struct config_gpu *ret);

/* The [gpu BDF] sections that name no GPU in @bdfs (for a warning): a new strv (NULL-terminated,
 * strv_free()), or NULL on -ENOMEM. */
char **config_unknown_gpus(const struct config *c, const char *const *bdfs, size_t n);
