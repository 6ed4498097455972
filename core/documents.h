/* SPDX-License-Identifier: MIT */
/*
 * The documents of the read verbs, for both front ends: one JSON object per GPU for
 * `amdsmi list`, `amdsmi static` and `amdsmi metric`, and the whole list and metric documents
 * amdsmid answers Describe() and GetMetrics() with. Each value is read once; a value that
 * cannot be read is null, with the reason reported through the query's report.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#include "gpu-set.h"
#include "report.h"
#include "samples.h"

/* What a document is built from besides the GPUs themselves. */
struct health_sample;
struct config;
struct profile_plan;

struct doc_query {
        struct report *report;
        const struct gpu_set *set;
        /* metric: the samples kept across documents (a watch, --throttle, amdsmid's sampler),
         * from which the limiters are measured; NULL: one sample, no limiters */
        struct samples *samples;
        uint64_t samples_max_age_usec; /* a current sample this young is shown again */
        /* metric: what the power limiter ran against (the power slice's; NULL: unknown) */
        int (*power_limit)(void *userdata, struct amdsmi_gpu *gpu, struct power_limit *ret);
        void *power_limit_userdata;
        /* health: the caller may not read root-only data (CPER records, the bad-page
         * threshold): amdsmid reads them as root, and says them as needing root (-EACCES) to
         * a caller polkit did not allow org.amdsmi1.health.read-privileged */
        bool unprivileged;
        /* static: no firmware versions (their ioctls open the render node); for a reader that
         * must never open a device node (amdsmid's /metrics) */
        bool no_device_nodes;
        /* amdsmid's Prometheus collection: what amdsmid sampled at its last periodic check,
         * where it keeps it (health), rather than a fresh read */
        bool cached;
        /* ras: the RAS sample of @gpu kept by the caller (amdsmid's periodic check), with
         * @cached; @return 0, or < 0: read it now. NULL: always read. */
        int (*ras_sample)(void *userdata, struct amdsmi_gpu *gpu, struct health_sample *ret);
        void *ras_sample_userdata;
        /* process: the KFD processes, read once per document (process_read()); with
         * @processes_own_only, only those of @processes_uid are shown (amdsmid's caller that
         * polkit did not allow org.amdsmi1.process.list) */
        const struct amdsmi_process_list *processes;
        bool processes_own_only;
        uint32_t processes_uid;
        /* doctor: whether amdsmid runs: 1 (it builds this document, or org.amdsmi1 has an
         * owner), 0 (no owner), -1 (unknown: no system bus) */
        int doctor_daemon;
        /* doctor: amdsmid's configuration in force and its plan of the desired state (its
         * model of the GPUs: what GetDocument("apply") answers), @return 0, 1 (the file on
         * disk is refused: sync state "failed") or < 0. NULL: amdsmid.conf is read here and
         * planned as `amdsmi apply --check` does in-process. */
        const struct config *doctor_config;
        int (*doctor_plan)(void *userdata, struct gpu_set *set, struct profile_plan *ret);
        void *doctor_userdata;
};

typedef json_object *(*doc_gpu_fn)(const struct doc_query *q, size_t index,
                                   struct amdsmi_gpu *gpu);

/* A new GPU object that starts as the list document's does: gpu, bdf, product, role, driver
 * (NULL on -ENOMEM). */
json_object *doc_gpu_new(size_t index, struct amdsmi_gpu *gpu);

/* A unique_id as every document spells it (format_unique_id(): "0x" and 16 hex digits); a
 * value that is no hex number as it is; NULL (JSON null) for NULL. */
json_object *doc_unique_id(const char *s);

/* A GPU's object of each read document (NULL on -ENOMEM). */
json_object *list_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu);
json_object *static_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu);
json_object *metric_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu);

/*
 * The "partitions" array of @gpu: one object per partition the selection of @index keeps,
 * each made by @entry (NULL entries are left out). @return NULL (JSON null) when the
 * partitions cannot be read (reported with "partition_count", gpu_partition_count()) or on
 * -ENOMEM.
 */
json_object *doc_partitions(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu,
                            json_object *(*entry)(struct amdsmi_partition *p, unsigned pi));

/* One object per selected GPU. @return 0 and the array in @ret, or a negative errno
 * (reported). */
int doc_collect(const struct doc_query *q, doc_gpu_fn fn, json_object **ret);

/* The list and metric documents of the selected GPUs, as --json prints them (one sample;
 * NULL on -ENOMEM). */
json_object *list_document(const struct doc_query *q);
json_object *metric_document(const struct doc_query *q);
