/* SPDX-License-Identifier: MIT */
/*
 * The plan of amdsmid.conf and its active profile (amdsmi apply --dry-run / --check, amdsmid's
 * GetDocument("apply"), its SyncState property and the NFD label): per GPU and key, what the
 * GPU holds now, what is desired, and what amdsmid does about it. One builder for both front
 * ends; each key of struct config_gpu has one row kind in its table (profile-plan.c), so keys
 * added later join the plan, the sync state and amdsmi_gpu_config_in_sync{key} in one place.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

struct config;
struct gpu_set;
struct power_sources;
struct state_store;

/* Where the plan takes what it does not read from the GPU. The CLI passes the state file;
 * amdsmid its own model (the power sources it keeps, its cached partition modes). */
struct profile_plan_env {
        /* The recorded power sources of @bdf and the applied record (AMDSMI_NA: none).
         * NULL: from @state. @return 0, or < 0: none recorded. */
        int (*power_sources)(void *userdata, const char *bdf, struct power_sources *ret,
                             uint64_t *ret_applied_uw, uint64_t *ret_applied_usec);
        /* The partition modes of @gpu now (AMDSMI_*_UNKNOWN where unknown). NULL, or < 0:
         * read from the GPU. */
        int (*partition_modes)(void *userdata, struct amdsmi_gpu *gpu,
                               enum amdsmi_compute_mode *ret_compute,
                               enum amdsmi_memory_mode *ret_memory,
                               enum amdsmi_memory_mode *ret_pending);
        void *userdata;
        const struct state_store *state; /* may be NULL */
};

/* Whether the machine matches the desired state (the NFD label's and SyncState's values). */
enum profile_sync_state {
        PROFILE_SYNC_SUCCESS,         /* every key in sync */
        PROFILE_SYNC_PENDING,         /* a key out of sync that amdsmid or the admin can bring */
        PROFILE_SYNC_RELOAD_REQUIRED, /* only memory modes waiting for a driver reload differ */
        PROFILE_SYNC_FAILED,          /* a key invalid for its GPU, or the file was refused */
        _PROFILE_SYNC_MAX,
};

/* "success", "pending", "reload-required", "failed" */
const char *profile_sync_state_to_string(enum profile_sync_state s);

struct profile_plan {
        json_object *rows;             /* one object per (GPU, key): gpu, bdf, setting, now,
                                          desired, unit, action, message, in_sync */
        int worst;                     /* the errno the change would have had (0: none) */
        enum profile_sync_state state; /* over every row */
};

/* The plan of @conf for the selected GPUs of @set. @return 0 or -ENOMEM (p cleared). */
int profile_plan_build(struct profile_plan *p, const struct config *conf, struct gpu_set *set,
                       const struct profile_plan_env *env);
void profile_plan_clear(struct profile_plan *p);

/* Adds the keys of the "apply" document to @doc (an amdsmi/1 envelope): config (@config_path),
 * config_exists, profile, profile_source, in_sync, sync_state, settings (the rows) and
 * exit_code. @conf_error (NULL: none): why the file on disk is refused (the plan is then that of
 * the configuration in force, and sync_state "failed"); added as "config_error". */
void profile_plan_document(json_object *doc, const struct profile_plan *p,
                           const struct config *conf, const char *config_path,
                           const char *conf_error);

/* The exit status `amdsmi apply --check` has for @p: 0 in sync, 1 drifted. */
int profile_plan_check_status(const struct profile_plan *p);
