/* SPDX-License-Identifier: MIT */
/*
 * The pure part of partition planning: mode tables, the kernel's compatibility rules and the
 * plan, over a snapshot of a GPU's state. No sysfs access, so unit tests drive it directly.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <amdsmi/amdsmi.h>

/* A GPU's partition state, as partition.c reads it. */
struct partition_state {
        unsigned xcc;       /* XCCs of the whole GPU */
        bool gc950;         /* GC 9.5.0 (MI350/MI355) */
        bool apu;           /* MI300A: NPS4 means 3 memory partitions */
        bool vf;            /* an SR-IOV VF: cannot switch */
        bool gim;           /* a gim host: a memory change keeps the compute mode (no reload) */
        uint32_t supported; /* hardware compute set; 0 = no partition support */
        uint32_t available; /* available_compute_partition (current memory mode) */
        bool available_known;
        uint32_t memory_available; /* available_memory_partition, or the current mode */
        bool memory_changeable;
        enum amdsmi_compute_mode compute;
        enum amdsmi_memory_mode memory;
        uint64_t vram_bytes;                           /* AMDSMI_NA if unknown */
        unsigned n_partitions;                         /* KFD nodes now */
        int render_minors[AMDSMI_PLAN_MAX_PARTITIONS]; /* of partitions 0..n-1 (KFD) */
        char bdf[16];
        char hive_bdfs[AMDSMI_PLAN_MAX_HIVE][16]; /* other GPUs of the hive */
        unsigned n_hive;
};

/* Hardware compute set by XCC count (spec §2.2). */
uint32_t partition_supported_by_xcc(unsigned xcc);
/* Partitions of a mode with xcc XCCs (SPX 1, DPX 2, TPX 3, QPX 4, CPX xcc); 0 if unknown. */
unsigned partition_count(enum amdsmi_compute_mode mode, unsigned xcc);
/* Memory partitions of an NPS mode (NPS4 on an APU is 3). */
unsigned partition_memory_count(enum amdsmi_memory_mode memory, bool apu);
/* Compute modes valid under an NPS mode by one kernel rule (§2.3), before the hardware set. */
uint32_t partition_compatible(enum amdsmi_partition_rules rules, unsigned xcc, bool gc950, bool apu,
                              enum amdsmi_memory_mode memory);
/* The driver's boot-time (AUTO) compute mode for an NPS mode, or AMDSMI_COMPUTE_UNKNOWN. */
enum amdsmi_compute_mode partition_auto_mode(enum amdsmi_memory_mode memory, unsigned xcc,
                                             bool apu);
/* Which rule the running kernel follows, judged from available_compute_partition. */
enum amdsmi_partition_rules partition_detect_rules(const struct partition_state *s);
/* The plan (see amdsmi_gpu_plan_partition()); fills a whole struct amdsmi_partition_plan. */
int partition_plan(const struct partition_state *s, enum amdsmi_compute_mode compute,
                   enum amdsmi_memory_mode memory, uint64_t flags,
                   struct amdsmi_partition_plan *ret);
/* Parses a kernel ", " list of modes. -EBADMSG for anything else (empty, unknown token). */
int partition_parse_compute_list(const char *text, uint32_t *ret_mask);
int partition_parse_memory_list(const char *text, uint32_t *ret_mask);
