/* SPDX-License-Identifier: MIT */
/**
 * @file amdsmi-process.h
 * The processes that use GPUs through KFD, as `class/kfd/kfd/proc/<pid>/` shows them, with what
 * /proc says of each (its name, owner and cgroup).
 *
 * KFD makes one entry per process and, in it, files per KFD node (one compute partition of a
 * GPU, named by its gpu_id) the process holds: its VRAM, SDMA time, queue eviction time, CU
 * occupancy and fault counters, and one directory per user queue. A ROCm process holds every
 * node it can see, whether it runs work there or not: a node is "in use" when the process has
 * VRAM or queues on it.
 *
 * Readers see what the kernel lets them: each file fails with EPERM when the reader's device
 * cgroup denies that GPU, and /proc may hide other users' processes (hidepid). Such values are
 * AMDSMI_NA and the list counts the processes concerned (n_denied). A process that exits while
 * it is read is left out, never an error.
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

struct amdsmi_ctx;

/** What a process holds on one KFD node (compute partition). Unknown values are AMDSMI_NA. */
struct amdsmi_process_node {
        uint32_t kfd_gpu_id; /**< the node's gpu_id, as the entry's file names give it */
        int32_t gpu_index;   /**< the context's GPU with that node, -1 if none has it */
        int32_t partition;   /**< the partition's index on that GPU, -1 if none */
        bool in_use;         /**< VRAM or queues on this node */
        uint32_t queues;     /**< its user queues on this node (queues/<qid>/gpuid) */
        uint64_t vram_bytes; /**< vram_<gpu_id> */
        /* read for nodes in use only (AMDSMI_NA on the others) */
        uint64_t sdma_usec;    /**< sdma_<gpu_id>: SDMA activity, microseconds */
        uint64_t evicted_ms;   /**< stats_<gpu_id>/evicted_ms: time its queues were evicted */
        uint64_t cu_occupancy; /**< stats_<gpu_id>/cu_occupancy: compute units its waves fill */
        uint64_t faults;       /**< counters_<gpu_id>/faults: GPU page (retry) faults */
        uint64_t page_in;      /**< counters_<gpu_id>/page_in: pages migrated to VRAM */
        uint64_t page_out;     /**< counters_<gpu_id>/page_out: pages migrated out of VRAM */
};

/** One process using KFD. */
struct amdsmi_process {
        int32_t pid;      /**< as class/kfd/kfd/proc/ names it */
        uint32_t pasid;   /**< its address space id, UINT32_MAX if unknown */
        uint32_t uid;     /**< owner of /proc/PID (its effective uid), UINT32_MAX unknown */
        char comm[64];    /**< /proc/PID/comm as the kernel gives it, which may hold any
                               byte but NUL (escape it before showing it); "" unknown */
        char cgroup[512]; /**< its cgroup v2 path ("/system.slice/x.service"), "" unknown
                               or too long */
        size_t n_nodes;
        struct amdsmi_process_node *nodes; /**< by GPU index and partition; unknown nodes last */
};

/** What amdsmi_ctx_read_processes() returns: free it with amdsmi_process_list_free(). */
struct amdsmi_process_list {
        size_t n_processes;
        struct amdsmi_process *processes; /**< by PID */
        unsigned n_denied; /**< processes with a value the reader may not read (EPERM, EACCES) */
};

/** Flags of amdsmi_ctx_read_processes(). */
enum amdsmi_process_flags {
        /** Only what tells who holds which node (VRAM and queues, name): not the SDMA time,
         * the stats and the counters. For callers that name blockers. */
        AMDSMI_PROCESS_BRIEF = 1 << 0,
};

/**
 * Reads every KFD process entry. The KFD topology is read again first if it changed, so that
 * nodes map to the partitions of now.
 * @param flags AMDSMI_PROCESS_* flags, or 0
 * @return 0 with a new list (empty when KFD has no processes or no proc/ directory), or a
 * negative errno when the proc/ directory itself cannot be read.
 * @since 0.2
 */
int amdsmi_ctx_read_processes(struct amdsmi_ctx *ctx, unsigned flags,
                              struct amdsmi_process_list **ret_list) AMDSMI_WARN_UNUSED
        AMDSMI_NONNULL(1, 3);

/** Frees a list; accepts NULL; returns NULL. @since 0.2 */
struct amdsmi_process_list *amdsmi_process_list_free(struct amdsmi_process_list *list);

#ifdef __cplusplus
}
#endif
