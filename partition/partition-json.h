/* SPDX-License-Identifier: MIT */
/*
 * Partition changes, one GPU at a time, as amdsmi(1) and amdsmid run them: plan, refuse an
 * invalid plan with the valid modes, then the memory request, the compute switch or the driver
 * reload through the library, and that GPU's element of the change document's "gpus" (plan,
 * reports, messages, result). Part of core/, written against its report and GPU set: amdsmi
 * (partition set, set -C/-M, reset --reload-driver in-process) and amdsmid
 * (org.amdsmi1.Partition) run the same calls, so that a change reads the same whichever of
 * them made it. Not part of libamdsmi.
 *
 * amdsmid's replies are that element with three more keys (PARTITION_REPLY_*), which the CLI
 * removes before it prints the document.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#include "macro.h"

struct doc_query;

struct gpu_set;
struct report;

/* What a partition change asks for. */
struct partition_change {
        enum amdsmi_compute_mode compute; /* AMDSMI_COMPUTE_UNKNOWN: unchanged */
        enum amdsmi_memory_mode memory;   /* AMDSMI_MEMORY_UNKNOWN: unchanged */
        bool force;
        unsigned timeout_ms;              /* 0: the library's default */
};

/* What a change method of amdsmid answers besides the document's element: the lines the CLI
 * prints on standard error (warnings, and the explanation of a failure), whether a memory
 * request now waits for a driver reload (amdsmi exits 8), and the GPUs a hive-wide operation
 * handled (the CLI reports them as "same_operation_as"). */
#define PARTITION_REPLY_DIAGNOSTICS "diagnostics"
#define PARTITION_REPLY_RELOAD_PENDING "reload_pending"
#define PARTITION_REPLY_COVERED "covered_bdfs"

/* The change names of the history and the intent records. */
#define PARTITION_CHANGE_COMPUTE "compute_mode"
#define PARTITION_CHANGE_MEMORY "memory_mode"
#define PARTITION_CHANGE_MODES "partition_modes" /* both: "SPX/NPS1" -> "CPX/NPS4" */
#define PARTITION_CHANGE_RELOAD "reload_driver"
#define PARTITION_CHANGE_BIND "driver_bind" /* amdsmid binds a GPU a reload left unbound */

struct partition_run;

/* Called after each GPU's change that was attempted (not for dry runs, nor for GPUs an
 * earlier hive-wide operation covered): @bdfs are the GPUs it applied to. */
typedef void (*partition_record_fn)(struct partition_run *run, const char *change,
                                    const char *const *bdfs, size_t n_bdfs,
                                    const char *old_value, const char *new_value, int r,
                                    const char *message);

struct partition_run {
        struct report *report;       /* the run's report (its dry_run) */
        const struct gpu_set *set;   /* the context and selection */
        struct partition_change ch;  /* the modes and flags */
        json_object *gpus;      /* the document's "gpus" */
        int result;             /* the first failure */
        bool reload_pending;    /* a memory request waits for a reload after the command */
        char (*covered)[16];    /* BDFs a hive-wide operation already handled ... */
        int *covered_by;        /* ... for the selected GPU of this index */
        size_t n_covered, max_covered;
        /* amdsmid: the job holds the GPU locks already, and the lines for standard error
         * are collected in @diagnostics instead of printed */
        bool in_daemon;
        json_object *diagnostics;
        /* amdsmi through amdsmid: only the read-only paths may run here (a GPU an earlier
         * hive-wide operation covered); everything else is amdsmid's */
        bool remote;
        char *last_error;       /* the last failure's message (for the history) */
        partition_record_fn record;
        void *userdata;
};

/* Sets @run up for the GPUs of @set (its context enumerated) and the change @ch; @report
 * says what happens. @return 0 or -ENOMEM. */
int partition_run_init(struct partition_run *run, struct report *report, const struct gpu_set *set,
                       const struct partition_change *ch);
void partition_run_done(struct partition_run *run);

/* Records a failure: the first one decides the exit status. @return @r. */
int partition_run_fail(struct partition_run *run, int r);
/* report_fail() that amdsmid collects too. @return @r. */
int partition_fail(struct partition_run *run, int r, const char *format, ...)
        _printf_(3, 4);
/* A line for standard error ("amdsmi: " is added), collected in amdsmid. */
void partition_diag(struct partition_run *run, const char *format, ...)
        _printf_(2, 3);

int partition_covered_by(struct partition_run *run, const char *bdf);
void partition_cover(struct partition_run *run, const char *bdf, int by);

/* A GPU's object of `amdsmi partition --json`: its modes, what it may switch to, its engine
 * shares and its (selected) partitions. NULL on -ENOMEM. */
json_object *partition_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu);

/* A GPU's element of the change document, with "result" null and no plan yet. */
json_object *partition_entry_new(size_t index, struct amdsmi_gpu *gpu);
void partition_entry_result(json_object *entry, int r);

/* The change of one GPU: set the modes of run->c (compute and/or memory), or reload the
 * driver of its hive. @return 0 or a negative errno (reported, in run->result). */
int partition_set_one(struct partition_run *run, size_t index, struct amdsmi_gpu *gpu,
                      json_object *entry);
int partition_reset_one(struct partition_run *run, size_t index, struct amdsmi_gpu *gpu,
                        json_object *entry);

/* One line saying what a GPU's change did (its last message, or the first for a reload),
 * malloc'd; NULL without messages. */
char *partition_entry_summary(json_object *entry, bool reload);

/* "SPX" for a mode, NULL for unknown. */
const char *partition_compute_name(enum amdsmi_compute_mode m);
const char *partition_memory_name(enum amdsmi_memory_mode m);
/* A mode set as a JSON array of names, in enum order. */
json_object *partition_compute_array(uint32_t mask);
json_object *partition_memory_array(uint32_t mask);
