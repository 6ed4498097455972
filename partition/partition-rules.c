/* SPDX-License-Identifier: MIT */
/*
 * Partition mode tables and the plan of a change (spec amdgpu-sysfs §2.2, §2.3, §2.4, §3).
 * Pure functions over struct partition_state.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "partition-rules.h"
#include "private.h"

#define CBIT(m) AMDSMI_COMPUTE_MODE_BIT(m)
#define MBIT(m) AMDSMI_MEMORY_MODE_BIT(m)
#define PAGE_SIZE_BYTES UINT64_C(4096)

uint32_t partition_supported_by_xcc(unsigned xcc) {
        switch (xcc) {
        case 8:
                return CBIT(AMDSMI_COMPUTE_SPX) | CBIT(AMDSMI_COMPUTE_DPX) |
                       CBIT(AMDSMI_COMPUTE_QPX) | CBIT(AMDSMI_COMPUTE_CPX);
        case 6:
                return CBIT(AMDSMI_COMPUTE_SPX) | CBIT(AMDSMI_COMPUTE_TPX) |
                       CBIT(AMDSMI_COMPUTE_CPX);
        case 4:
                return CBIT(AMDSMI_COMPUTE_SPX) | CBIT(AMDSMI_COMPUTE_DPX) |
                       CBIT(AMDSMI_COMPUTE_CPX);
        case 2:
        case 1:
                return CBIT(AMDSMI_COMPUTE_SPX) | CBIT(AMDSMI_COMPUTE_CPX);
        default:
                return 0;
        }
}

unsigned partition_count(enum amdsmi_compute_mode mode, unsigned xcc) {
        switch (mode) {
        case AMDSMI_COMPUTE_SPX:
                return 1;
        case AMDSMI_COMPUTE_DPX:
                return 2;
        case AMDSMI_COMPUTE_TPX:
                return 3;
        case AMDSMI_COMPUTE_QPX:
                return 4;
        case AMDSMI_COMPUTE_CPX:
                return xcc;
        default:
                return 0;
        }
}

unsigned partition_memory_count(enum amdsmi_memory_mode memory, bool apu) {
        if (memory == AMDSMI_MEMORY_NPS4 && apu)
                return 3;
        return (unsigned) memory; /* NPSn: n; UNKNOWN: 0 */
}

/* The extra XCC rule both generations share (also the write's own checks, §2.1). */
static bool xcc_rule(enum amdsmi_compute_mode mode, unsigned xcc) {
        switch (mode) {
        case AMDSMI_COMPUTE_SPX:
                return xcc > 0;
        case AMDSMI_COMPUTE_DPX:
                return xcc % 4 == 0 && xcc > 0;
        case AMDSMI_COMPUTE_TPX:
                return xcc % 3 == 0 && xcc > 0;
        case AMDSMI_COMPUTE_QPX:
                return xcc / 4 >= 2;
        case AMDSMI_COMPUTE_CPX:
                return xcc > 1;
        default:
                return false;
        }
}

/* Newer kernels ("Use compatible NPS mode info"): a set of NPS modes per compute mode. */
static uint32_t nps_set(enum amdsmi_compute_mode mode, bool gc950) {
        switch (mode) {
        case AMDSMI_COMPUTE_SPX:
                return MBIT(AMDSMI_MEMORY_NPS1);
        case AMDSMI_COMPUTE_DPX:
                return MBIT(AMDSMI_MEMORY_NPS1) | MBIT(AMDSMI_MEMORY_NPS2);
        case AMDSMI_COMPUTE_TPX:
                return MBIT(AMDSMI_MEMORY_NPS1) | MBIT(AMDSMI_MEMORY_NPS4);
        case AMDSMI_COMPUTE_QPX:
        case AMDSMI_COMPUTE_CPX:
                return MBIT(AMDSMI_MEMORY_NPS1) | MBIT(AMDSMI_MEMORY_NPS4) |
                       (gc950 ? MBIT(AMDSMI_MEMORY_NPS2) : 0);
        default:
                return 0;
        }
}

/* Older kernels: the number of memory partitions decides. */
static bool nps_count_ok(enum amdsmi_compute_mode mode, unsigned xcc, unsigned nmp) {
        switch (mode) {
        case AMDSMI_COMPUTE_SPX:
                return nmp == 1;
        case AMDSMI_COMPUTE_DPX:
                return nmp <= 2;
        case AMDSMI_COMPUTE_TPX:
                return nmp == 1 || nmp == 3;
        case AMDSMI_COMPUTE_QPX:
                return nmp == 1 || nmp == 4;
        case AMDSMI_COMPUTE_CPX:
                return xcc % nmp == 0;
        default:
                return false;
        }
}

uint32_t partition_compatible(enum amdsmi_partition_rules rules, unsigned xcc, bool gc950, bool apu,
                              enum amdsmi_memory_mode memory) {
        unsigned nmp = partition_memory_count(memory, apu);
        uint32_t mask = 0;

        if (nmp == 0)
                return 0;
        for (int m = AMDSMI_COMPUTE_SPX; m <= AMDSMI_COMPUTE_CPX; m++) {
                enum amdsmi_compute_mode mode = (enum amdsmi_compute_mode) m;
                bool ok;

                if (!xcc_rule(mode, xcc))
                        continue;
                if (rules == AMDSMI_RULES_NPS_COUNT)
                        ok = nps_count_ok(mode, xcc, nmp);
                else
                        ok = nps_set(mode, gc950) & MBIT(memory);
                if (ok)
                        mask |= CBIT(mode);
        }
        return mask;
}

enum amdsmi_compute_mode partition_auto_mode(enum amdsmi_memory_mode memory, unsigned xcc,
                                             bool apu) {
        unsigned nmp = partition_memory_count(memory, apu);

        if (nmp == 1)
                return AMDSMI_COMPUTE_SPX;
        if (nmp != 0 && nmp == xcc)
                return AMDSMI_COMPUTE_CPX;
        if (nmp != 0 && nmp == xcc / 2)
                return apu ? AMDSMI_COMPUTE_TPX : AMDSMI_COMPUTE_CPX;
        if (nmp == 2 && !apu)
                return AMDSMI_COMPUTE_DPX;
        return AMDSMI_COMPUTE_UNKNOWN;
}

enum amdsmi_partition_rules partition_detect_rules(const struct partition_state *s) {
        uint32_t sets, count;

        if (!s->available_known)
                return AMDSMI_RULES_NPS_SETS;
        sets = partition_compatible(AMDSMI_RULES_NPS_SETS, s->xcc, s->gc950, s->apu, s->memory) &
               s->supported;
        count = partition_compatible(AMDSMI_RULES_NPS_COUNT, s->xcc, s->gc950, s->apu, s->memory) &
                s->supported;
        if (s->available == count && s->available != sets)
                return AMDSMI_RULES_NPS_COUNT;
        return AMDSMI_RULES_NPS_SETS;
}

static bool memory_mode_valid(enum amdsmi_memory_mode m) {
        switch (m) {
        case AMDSMI_MEMORY_UNKNOWN:
        case AMDSMI_MEMORY_NPS1:
        case AMDSMI_MEMORY_NPS2:
        case AMDSMI_MEMORY_NPS3:
        case AMDSMI_MEMORY_NPS4:
        case AMDSMI_MEMORY_NPS6:
        case AMDSMI_MEMORY_NPS8:
                return true;
        }
        return false;
}

#define NOTE(n) (1u << (unsigned) (n))

int partition_plan(const struct partition_state *s, enum amdsmi_compute_mode compute,
                   enum amdsmi_memory_mode memory, uint64_t flags,
                   struct amdsmi_partition_plan *ret) {
        const uint64_t known_flags =
                AMDSMI_PLAN_FLAG_RULES_NPS_SETS | AMDSMI_PLAN_FLAG_RULES_NPS_COUNT;
        struct amdsmi_partition_plan p = {
                .size = sizeof(struct amdsmi_partition_plan),
                .memory_per_partition_after = AMDSMI_NA,
        };
        unsigned nmp;

        if (flags & ~known_flags)
                return -EINVAL;
        if ((flags & known_flags) == known_flags)
                return -EINVAL;
        if (compute < AMDSMI_COMPUTE_UNKNOWN || compute > AMDSMI_COMPUTE_CPX)
                return -EINVAL;
        if (!memory_mode_valid(memory))
                return -EINVAL;

        p.compute_before = s->compute;
        p.memory_before = s->memory;
        p.compute_after = compute == AMDSMI_COMPUTE_UNKNOWN ? s->compute : compute;
        p.memory_after = memory == AMDSMI_MEMORY_UNKNOWN ? s->memory : memory;
        /* Keeping the compute mode across a memory change on bare metal: the driver picks it
         * at the reload (the AUTO rule), so that is what the GPU comes back in. */
        if (compute == AMDSMI_COMPUTE_UNKNOWN && p.memory_after != s->memory && !s->gim &&
            partition_auto_mode(p.memory_after, s->xcc, s->apu) != AMDSMI_COMPUTE_UNKNOWN)
                p.compute_after = partition_auto_mode(p.memory_after, s->xcc, s->apu);
        p.supported_compute = s->supported;
        p.partitions_before = s->n_partitions;
        if (flags & AMDSMI_PLAN_FLAG_RULES_NPS_SETS)
                p.rules = AMDSMI_RULES_NPS_SETS;
        else if (flags & AMDSMI_PLAN_FLAG_RULES_NPS_COUNT)
                p.rules = AMDSMI_RULES_NPS_COUNT;
        else
                p.rules = partition_detect_rules(s);
        memcpy(p.affected_bdfs[0], s->bdf, sizeof(p.affected_bdfs[0]));
        p.n_affected_bdfs = 1;

        /* Which compute modes the memory mode after the change allows. */
        if (p.memory_after == s->memory && s->available_known && !(flags & known_flags))
                p.valid_compute = s->available;
        else
                p.valid_compute =
                        partition_compatible(p.rules, s->xcc, s->gc950, s->apu, p.memory_after) &
                        s->supported;

        /* The effect, also shown for an invalid plan, unless the hardware lacks the mode. */
        if (s->supported & CBIT(p.compute_after))
                p.partitions_after = partition_count(p.compute_after, s->xcc);
        if (p.partitions_after > 0)
                p.xcc_per_partition_after = s->xcc / p.partitions_after;
        for (unsigned i = p.partitions_after;
             p.partitions_after > 0 && i < s->n_partitions && i < AMDSMI_PLAN_MAX_PARTITIONS; i++)
                if (s->render_minors[i] >= 0)
                        p.invalidated_render_minors[p.n_invalidated_render_minors++] =
                                s->render_minors[i];
        nmp = partition_memory_count(p.memory_after, s->apu);
        if (s->vram_bytes != AMDSMI_NA && nmp > 0 && p.partitions_after >= nmp &&
            p.partitions_after % nmp == 0) {
                uint64_t per_mem = s->vram_bytes / nmp;
                uint64_t v = per_mem / (p.partitions_after / nmp);

                p.memory_per_partition_after = v - v % PAGE_SIZE_BYTES;
        }

        if (p.memory_after != s->memory) {
                p.notes |= NOTE(AMDSMI_PLAN_RELOAD_REQUIRED);
                for (unsigned i = 0; i < s->n_hive && p.n_affected_bdfs < AMDSMI_PLAN_MAX_HIVE; i++)
                        memcpy(p.affected_bdfs[p.n_affected_bdfs++], s->hive_bdfs[i],
                               sizeof(p.affected_bdfs[0]));
                if (s->n_hive > 0)
                        p.notes |= NOTE(AMDSMI_PLAN_HIVE_WIDE);
                if (partition_auto_mode(p.memory_after, s->xcc, s->apu) != p.compute_after)
                        p.notes |= NOTE(AMDSMI_PLAN_COMPUTE_AFTER_RELOAD);
        }
        if (p.compute_after == s->compute && p.memory_after == s->memory)
                p.notes |= NOTE(AMDSMI_PLAN_NO_CHANGE);

        /* The first reason that blocks it, in the kernel's order of checks. */
        if (s->supported == 0 || s->compute == AMDSMI_COMPUTE_UNKNOWN)
                p.reason = AMDSMI_PLAN_NOT_SUPPORTED;
        else if (s->vf)
                p.reason = AMDSMI_PLAN_NOT_SWITCHABLE;
        else if (!(s->supported & CBIT(p.compute_after)))
                p.reason = AMDSMI_PLAN_COMPUTE_NOT_SUPPORTED;
        else if (p.memory_after != s->memory && !s->memory_changeable)
                p.reason = AMDSMI_PLAN_MEMORY_NOT_CHANGEABLE;
        else if (p.memory_after != s->memory && !(s->memory_available & MBIT(p.memory_after)))
                p.reason = AMDSMI_PLAN_MEMORY_NOT_SUPPORTED;
        else if (!(p.valid_compute & CBIT(p.compute_after)) &&
                 !(p.notes & NOTE(AMDSMI_PLAN_NO_CHANGE)))
                p.reason = AMDSMI_PLAN_INCOMPATIBLE;
        else
                p.reason = AMDSMI_PLAN_OK;

        *ret = p;
        return 0;
}

/* Splits "A, B, C" strictly: one ", " between tokens, no empty token. */
static int parse_list(const char *text, uint32_t *ret_mask, bool compute) {
        uint32_t mask = 0;
        const char *p = text;

        if (!text || !*text)
                return -EBADMSG;
        for (;;) {
                const char *end = strstr(p, ", ");
                size_t len = end ? (size_t) (end - p) : strlen(p);
                char tok[16];

                if (len == 0 || len >= sizeof(tok))
                        return -EBADMSG;
                memcpy(tok, p, len);
                tok[len] = '\0';
                if (compute) {
                        enum amdsmi_compute_mode m;

                        if (amdsmi_compute_mode_from_string(tok, &m) < 0 ||
                            m == AMDSMI_COMPUTE_UNKNOWN)
                                return -EBADMSG;
                        mask |= CBIT(m);
                } else {
                        enum amdsmi_memory_mode m;

                        if (amdsmi_memory_mode_from_string(tok, &m) < 0 ||
                            m == AMDSMI_MEMORY_UNKNOWN)
                                return -EBADMSG;
                        mask |= MBIT(m);
                }
                if (!end)
                        break;
                p = end + 2;
        }
        *ret_mask = mask;
        return 0;
}

int partition_parse_compute_list(const char *text, uint32_t *ret_mask) {
        if (text && strcmp(text, "Not supported") == 0) {
                *ret_mask = 0;
                return 0;
        }
        return parse_list(text, ret_mask, true);
}

int partition_parse_memory_list(const char *text, uint32_t *ret_mask) {
        return parse_list(text, ret_mask, false);
}

static int mask_to_string(uint32_t mask, char *buf, size_t size, bool compute) {
        size_t len = 0;
        int total = 0;

        if (size > 0)
                buf[0] = '\0';
        for (unsigned m = 0; m < 32; m++) {
                const char *name;
                int n;

                if (!(mask & (1u << m)))
                        continue;
                if (compute ? m > AMDSMI_COMPUTE_CPX
                            : (m == 0 || !memory_mode_valid((enum amdsmi_memory_mode) m)))
                        return -EINVAL;
                name = compute ? amdsmi_compute_mode_to_string((enum amdsmi_compute_mode) m)
                               : amdsmi_memory_mode_to_string((enum amdsmi_memory_mode) m);
                n = snprintf(buf ? buf + len : NULL, len < size ? size - len : 0, "%s%s",
                             total ? ", " : "", name);
                total += n;
                len = (size_t) total < size ? (size_t) total : size;
        }
        return total;
}

_public_ int amdsmi_compute_mode_mask_to_string(uint32_t mask, char *buf, size_t size) {
        return mask_to_string(mask, buf, size, true);
}

_public_ int amdsmi_memory_mode_mask_to_string(uint32_t mask, char *buf, size_t size) {
        return mask_to_string(mask, buf, size, false);
}

_public_ const char *amdsmi_plan_reason_to_string(enum amdsmi_plan_reason reason) {
        switch (reason) {
        case AMDSMI_PLAN_OK:
                return "ok";
        case AMDSMI_PLAN_NOT_SUPPORTED:
                return "not-supported";
        case AMDSMI_PLAN_NOT_SWITCHABLE:
                return "not-switchable";
        case AMDSMI_PLAN_COMPUTE_NOT_SUPPORTED:
                return "compute-not-supported";
        case AMDSMI_PLAN_MEMORY_NOT_SUPPORTED:
                return "memory-not-supported";
        case AMDSMI_PLAN_MEMORY_NOT_CHANGEABLE:
                return "memory-not-changeable";
        case AMDSMI_PLAN_INCOMPATIBLE:
                return "incompatible";
        case AMDSMI_PLAN_NO_PATH:
                return "no-path";
        case AMDSMI_PLAN_NO_CHANGE:
                return "no-change";
        case AMDSMI_PLAN_RELOAD_REQUIRED:
                return "reload-required";
        case AMDSMI_PLAN_DESTROYS_VFS:
                return "destroys-vfs";
        case AMDSMI_PLAN_MEMORY_FIRST:
                return "memory-first";
        case AMDSMI_PLAN_HIVE_WIDE:
                return "hive-wide";
        case AMDSMI_PLAN_COMPUTE_AFTER_RELOAD:
                return "compute-after-reload";
        }
        return NULL;
}

_public_ const char *amdsmi_partition_rules_to_string(enum amdsmi_partition_rules rules) {
        switch (rules) {
        case AMDSMI_RULES_AUTO:
                return "auto";
        case AMDSMI_RULES_NPS_SETS:
                return "nps-sets";
        case AMDSMI_RULES_NPS_COUNT:
                return "nps-count";
        }
        return NULL;
}
