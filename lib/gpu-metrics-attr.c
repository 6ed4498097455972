/* SPDX-License-Identifier: MIT */
/*
 * Parser of the attribute-encoded tables of current drivers: gpu_metrics 1.9 and
 * xcp_metrics 1.1 (Linux 6.19+, AMD's amdgpu DKMS 6.16+).
 *
 * After the 4-byte header comes a C int attr_count and attr_count records, packed, each an
 * 8-byte little-endian encoding followed by its values:
 *
 *     bits  0..9   instance count (values that follow)
 *     bits 10..19  attribute id
 *     bits 20..23  type: 0 U8, 1 S8, 2 U16, 3 S16, 4 U32, 5 S32, 6 U64, 7 S64
 *     bits 24..31  unit (ignored: the table below knows each attribute's unit)
 *
 * The whole table is checked before any value is stored, so a bad table leaves the output
 * untouched: every record must fit in structure_size (itself within the bytes read), have a
 * known type code and at least one instance, and attr_count records must end exactly at
 * structure_size. A record whose id this library does not know is skipped by its encoded
 * size and counted. Every integer type is taken for every id (the same id has come with
 * different types across kernels). A value that is all-ones for its type, or negative, is
 * AMDSMI_NA.
 */

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpu-metrics.h"
#include "private.h"

#define HEADER_SIZE 8           /* metrics_table_header + int attr_count */
#define ENC_INST(e) ((unsigned) ((e) & 0x3ff))
#define ENC_ID(e) ((unsigned) (((e) >> 10) & 0x3ff))
#define ENC_TYPE(e) ((unsigned) (((e) >> 20) & 0xf))
#define ENC_UNIT(e) ((unsigned) (((e) >> 24) & 0xff))
#define N_TYPES 8

static const uint8_t type_size[N_TYPES] = { 1, 1, 2, 2, 4, 4, 8, 8 };
static const char *const type_name[N_TYPES] = { "U8", "S8", "U16", "S16", "U32", "S32", "U64", "S64" };

#define NO_DST UINT16_MAX

enum kind {
        KIND_VALUE,
        KIND_ACC_COUNTER,       /* also records the counter's width */
        KIND_RESIDENCY,         /* also records the narrowest residency counter's width */
};

/* Where one attribute id goes: an offset of the first uint64_t in struct
 * amdsmi_gpu_metrics_ext (gpu, and gpu2 for a second form of the same value) and in struct
 * amdsmi_partition_metrics (part), NO_DST where that table has no place for it. */
struct attr_def {
        uint16_t gpu, gpu2, part;
        uint8_t capacity;       /* elements at each destination */
        uint8_t conv, conv2;
        uint8_t kind;
};

_Static_assert(sizeof(struct amdsmi_gpu_metrics_ext) < NO_DST, "offsets must fit 16 bits");
_Static_assert(sizeof(struct amdsmi_partition_metrics) < NO_DST, "offsets must fit 16 bits");

#define G(member) offsetof(struct amdsmi_gpu_metrics_ext, member)
#define B(member) offsetof(struct amdsmi_gpu_metrics_ext, base.member)
#define P(member) offsetof(struct amdsmi_partition_metrics, member)
#define CAP(member) (sizeof(((struct amdsmi_gpu_metrics_ext *) NULL)->member) / sizeof(uint64_t))

#define GPU(dst, n, cv) { .gpu = (dst), .gpu2 = NO_DST, .part = NO_DST, .capacity = (n), .conv = (cv) }
#define GPU_K(dst, cv, k) \
        { .gpu = (dst), .gpu2 = NO_DST, .part = NO_DST, .capacity = 1, .conv = (cv), .kind = (k) }
#define BOTH(dst, pdst, n, cv) { .gpu = (dst), .gpu2 = NO_DST, .part = (pdst), .capacity = (n), .conv = (cv) }

/*
 * enum amdgpu_metrics_attr_id. Ids 0..47 are the definition of gpu_metrics 1.9 (Linux 6.19,
 * "drm/amdgpu/pm: Add definition for gpu_metrics v1.9"); the partition file takes the ids of
 * its own attributes (33..37, 40..47; 9 and 32 from Linux 7.0, "Add acc counter & fw
 * timestamp to xcp metrics"). ACCUMULATION_COUNTER is U32 in 6.19 and U64 from 7.0 ("Use U64
 * for accumulation counter"): any integer type is taken for every id. Ids from 48 on were
 * renumbered between builds, see ids_t3[] and ids_mid[].
 */
static const struct attr_def ids_common[] = {
        [0] = GPU(B(temp_hotspot_mc), 1, CONV_X1000),           /* TEMPERATURE_HOTSPOT */
        [1] = GPU(B(temp_mem_mc), 1, CONV_X1000),               /* TEMPERATURE_MEM */
        [2] = GPU(B(temp_vrsoc_mc), 1, CONV_X1000),             /* TEMPERATURE_VRSOC */
        [3] = GPU(B(socket_power_uw), 1, CONV_X1E6),            /* CURR_SOCKET_POWER */
        [4] = GPU(B(gfx_activity_pct), 1, CONV_NONE),           /* AVERAGE_GFX_ACTIVITY */
        [5] = GPU(B(umc_activity_pct), 1, CONV_NONE),           /* AVERAGE_UMC_ACTIVITY */
        [6] = GPU(B(mem_max_bandwidth_bps), 1, CONV_X1E9),      /* MEM_MAX_BANDWIDTH */
        [7] = { .gpu = B(energy_accumulator), .gpu2 = B(energy_uj), .part = NO_DST, /* ENERGY_ACC */
                .capacity = 1, .conv = CONV_NONE, .conv2 = CONV_ENERGY_UJ },
        [8] = GPU(B(system_clock_counter_ns), 1, CONV_NONE),    /* SYSTEM_CLOCK_COUNTER */
        [9] = { .gpu = B(accumulation_counter), .gpu2 = NO_DST, /* ACCUMULATION_COUNTER */
                .part = P(accumulation_counter), .capacity = 1, .kind = KIND_ACC_COUNTER },
        [10] = GPU_K(B(prochot_residency_acc), CONV_NONE, KIND_RESIDENCY),
        [11] = GPU_K(B(ppt_residency_acc), CONV_NONE, KIND_RESIDENCY),
        [12] = GPU_K(B(socket_thm_residency_acc), CONV_NONE, KIND_RESIDENCY),
        [13] = GPU_K(B(vr_thm_residency_acc), CONV_NONE, KIND_RESIDENCY),
        [14] = GPU_K(B(hbm_thm_residency_acc), CONV_NONE, KIND_RESIDENCY),
        [15] = GPU(B(gfxclk_lock_status), 1, CONV_NONE),        /* GFXCLK_LOCK_STATUS */
        [16] = GPU(B(pcie_link_width), 1, CONV_NONE),           /* PCIE_LINK_WIDTH */
        [17] = GPU(B(pcie_link_speed_mts), 1, CONV_X100),       /* PCIE_LINK_SPEED, 0.1 GT/s */
        [18] = GPU(B(xgmi_link_width), 1, CONV_NONE),           /* XGMI_LINK_WIDTH */
        [19] = GPU(B(xgmi_link_speed_gbps), 1, CONV_NONE),      /* XGMI_LINK_SPEED */
        [20] = GPU(B(gfx_activity_acc), 1, CONV_NONE),          /* GFX_ACTIVITY_ACC */
        [21] = GPU(B(mem_activity_acc), 1, CONV_NONE),          /* MEM_ACTIVITY_ACC */
        [22] = GPU(B(pcie_bandwidth_acc), 1, CONV_NONE),        /* PCIE_BANDWIDTH_ACC */
        [23] = GPU(B(pcie_bandwidth_inst), 1, CONV_NONE),       /* PCIE_BANDWIDTH_INST */
        [24] = GPU(B(pcie_l0_to_recov_count_acc), 1, CONV_NONE),
        [25] = GPU(B(pcie_replay_count_acc), 1, CONV_NONE),
        [26] = GPU(B(pcie_replay_rover_count_acc), 1, CONV_NONE),
        [27] = GPU(B(pcie_nak_sent_count_acc), 1, CONV_NONE),
        [28] = GPU(B(pcie_nak_rcvd_count_acc), 1, CONV_NONE),
        [29] = GPU(B(xgmi_read_data_kb), AMDSMI_METRICS_MAX_XGMI, CONV_NONE),
        [30] = GPU(B(xgmi_write_data_kb), AMDSMI_METRICS_MAX_XGMI, CONV_NONE),
        [31] = GPU(B(xgmi_link_status), AMDSMI_METRICS_MAX_XGMI, CONV_NONE),
        [32] = BOTH(B(firmware_timestamp_ns), P(firmware_timestamp_ns), 1, CONV_X10),
        [33] = BOTH(B(gfxclk_hz), P(gfxclk_hz), AMDSMI_METRICS_MAX_XCC, CONV_X1E6),
        [34] = BOTH(B(socclk_hz), P(socclk_hz), 4, CONV_X1E6),
        [35] = BOTH(B(vclk0_hz), P(vclk0_hz), 4, CONV_X1E6),
        [36] = BOTH(B(dclk0_hz), P(dclk0_hz), 4, CONV_X1E6),
        [37] = BOTH(B(uclk_hz), P(uclk_hz), 1, CONV_X1E6),
        [38] = GPU(B(num_partition), 1, CONV_NONE),             /* NUM_PARTITION (not emitted) */
        [39] = GPU(B(pcie_lc_perf_other_end_recovery), 1, CONV_NONE),
        [40] = BOTH(G(xcc_gfx_busy_inst_pct), P(xcp.gfx_busy_inst_pct), AMDSMI_METRICS_MAX_XCC,
                    CONV_NONE),                                 /* GFX_BUSY_INST */
        [41] = BOTH(G(jpeg_busy_pct), P(xcp.jpeg_busy_pct), AMDSMI_METRICS_MAX_JPEG, CONV_NONE),
        [42] = BOTH(G(vcn_busy_pct), P(xcp.vcn_busy_pct), AMDSMI_METRICS_MAX_VCN, CONV_NONE),
        [43] = BOTH(G(xcc_gfx_busy_acc), P(xcp.gfx_busy_acc), AMDSMI_METRICS_MAX_XCC, CONV_NONE),
        [44] = BOTH(G(xcc_below_host_limit_ppt_acc), P(xcp.gfx_below_host_limit_ppt_acc),
                    AMDSMI_METRICS_MAX_XCC, CONV_NONE),
        [45] = BOTH(G(xcc_below_host_limit_thm_acc), P(xcp.gfx_below_host_limit_thm_acc),
                    AMDSMI_METRICS_MAX_XCC, CONV_NONE),
        [46] = BOTH(G(xcc_low_utilization_acc), P(xcp.gfx_low_utilization_acc),
                    AMDSMI_METRICS_MAX_XCC, CONV_NONE),
        [47] = BOTH(G(xcc_below_host_limit_total_acc), P(xcp.gfx_below_host_limit_total_acc),
                    AMDSMI_METRICS_MAX_XCC, CONV_NONE),
        /* 48 is TEMPERATURE_HBM in both numberings */
        [48] = GPU(G(temp_hbm_stack_mc), CAP(temp_hbm_stack_mc), CONV_X1000),
};

/* SMU 13.0.6 / 13.0.12 (MI300X, MI300A, MI325X, MI350X, MI355X): "drm/amd/pm: Add
 * aid/xcd/hbm temperatures" (amd-drm-next-7.1): 48 HBM, 49 AID, 50 XCD. */
static const struct attr_def ids_t3[] = {
        GPU(G(temp_aid_mc), CAP(temp_aid_mc), CONV_X1000),      /* 49 TEMPERATURE_AID */
        GPU(G(temp_xcd_mc), CAP(temp_xcd_mc), CONV_X1000),      /* 50 TEMPERATURE_XCD */
};

/* SMU 15.0.8 only: "drm/amd/pm: add get_gpu_metrics support for 15.0.8" inserts
 * TEMPERATURE_MID before AID: 48 HBM, 49 MID, 50 AID, 51 XCD. */
static const struct attr_def ids_mid[] = {
        GPU(G(temp_mid_mc), CAP(temp_mid_mc), CONV_X1000),      /* 49 TEMPERATURE_MID */
        GPU(G(temp_aid_mc), CAP(temp_aid_mc), CONV_X1000),      /* 50 TEMPERATURE_AID */
        GPU(G(temp_xcd_mc), CAP(temp_xcd_mc), CONV_X1000),      /* 51 TEMPERATURE_XCD */
};

static const struct attr_def *lookup(unsigned id, enum amdsmi_metrics_ids ids) {
        const struct attr_def *d = NULL;

        if (id < ELEMENTSOF(ids_common))
                d = ids_common + id;
        else if (ids == AMDSMI_METRICS_IDS_MID && id - ELEMENTSOF(ids_common) < ELEMENTSOF(ids_mid))
                d = ids_mid + (id - ELEMENTSOF(ids_common));
        else if (ids != AMDSMI_METRICS_IDS_MID &&
                 id - ELEMENTSOF(ids_common) < ELEMENTSOF(ids_t3))
                d = ids_t3 + (id - ELEMENTSOF(ids_common));
        return d && d->capacity > 0 ? d : NULL;
}

static uint64_t load(const uint8_t *s, unsigned type) {
        switch (type) {
        case 0:
                return s[0] == UINT8_MAX ? AMDSMI_NA : s[0];
        case 1:
                return (int8_t) s[0] < 0 ? AMDSMI_NA : s[0];
        case 2:
        case 3: {
                uint16_t v;

                memcpy(&v, s, sizeof(v));
                v = le16toh(v);
                if (v == UINT16_MAX || (type == 3 && (int16_t) v < 0))
                        return AMDSMI_NA;
                return v;
        }
        case 4:
        case 5: {
                uint32_t v;

                memcpy(&v, s, sizeof(v));
                v = le32toh(v);
                if (v == UINT32_MAX || (type == 5 && (int32_t) v < 0))
                        return AMDSMI_NA;
                return v;
        }
        default: {
                uint64_t v;

                memcpy(&v, s, sizeof(v));
                v = le64toh(v);
                if (type == 7 && (int64_t) v < 0)
                        return AMDSMI_NA;
                return v; /* all-ones is AMDSMI_NA already */
        }
        }
}

static void store(const uint8_t *s, unsigned type, unsigned n, uint64_t *d, enum conv conv) {
        unsigned w = type_size[type];

        for (unsigned k = 0; k < n; k++) {
                uint64_t v = load(s + k * w, type);

                d[k] = conv == CONV_NONE ? v : metrics_convert(v, conv);
        }
}

struct walk {
        uint32_t attr_count;
        uint32_t unknown_attrs;
        struct amdsmi_metrics_attr *unknown;
        uint32_t clipped_attrs;
        uint8_t acc_bits, residency_bits;
};

/* Checks the whole table (nothing is stored). */
static int validate(const uint8_t *p, size_t len, const char *what, uint32_t *ret_count,
                    char *reason, size_t reason_size) {
        uint16_t size;
        int32_t count;
        size_t off = HEADER_SIZE;

        if (len < HEADER_SIZE)
                return metrics_invalid(reason, reason_size,
                                       "%s: %zu bytes, shorter than the 8-byte header and count",
                                       what, len);
        memcpy(&size, p, sizeof(size));
        size = le16toh(size);
        if (size > len)
                return metrics_invalid(reason, reason_size,
                                       "%s: structure_size %u exceeds the %zu bytes read", what,
                                       size, len);
        if (size < HEADER_SIZE)
                return metrics_invalid(reason, reason_size,
                                       "%s: structure_size %u is shorter than the header", what,
                                       size);
        memcpy(&count, p + 4, sizeof(count));
        count = (int32_t) le32toh((uint32_t) count);
        if (count < 0)
                return metrics_invalid(reason, reason_size, "%s: negative attr_count %d", what,
                                       count);

        for (int32_t i = 0; i < count; i++) {
                unsigned inst, type;
                uint64_t enc;

                if (size - off < 8)
                        return metrics_invalid(reason, reason_size,
                                               "%s: attr_count %d, but structure_size %u ends "
                                               "after %d records (offset %zu)",
                                               what, count, size, i, off);
                memcpy(&enc, p + off, sizeof(enc));
                enc = le64toh(enc);
                inst = ENC_INST(enc);
                type = ENC_TYPE(enc);
                if (type >= N_TYPES)
                        return metrics_invalid(reason, reason_size,
                                               "%s: record %d (id %u) at offset %zu: unknown "
                                               "type code %u",
                                               what, i, ENC_ID(enc), off, type);
                if (inst == 0)
                        return metrics_invalid(reason, reason_size,
                                               "%s: record %d (id %u) at offset %zu: no "
                                               "instance",
                                               what, i, ENC_ID(enc), off);
                off += 8;
                if ((size_t) inst * type_size[type] > size - off)
                        return metrics_invalid(reason, reason_size,
                                               "%s: record %d (id %u) at offset %zu: %u "
                                               "values of %s run past structure_size %u",
                                               what, i, ENC_ID(enc), off - 8, inst,
                                               type_name[type], size);
                off += (size_t) inst * type_size[type];
        }
        if (off != size)
                return metrics_invalid(reason, reason_size,
                                       "%s: attr_count %d ends at offset %zu, structure_size "
                                       "is %u",
                                       what, count, off, size);
        *ret_count = (uint32_t) count;
        return 0;
}

/* Stores every record of a validated table into @out (@part: a partition table). */
static void walk(const uint8_t *p, uint32_t count, enum amdsmi_metrics_ids ids, bool part,
                 void *out, struct walk *w) {
        size_t off = HEADER_SIZE;

        w->attr_count = count;
        for (uint32_t i = 0; i < count; i++) {
                const struct attr_def *d;
                unsigned inst, type, id, n;
                uint16_t dst;
                uint64_t enc;

                memcpy(&enc, p + off, sizeof(enc));
                enc = le64toh(enc);
                inst = ENC_INST(enc);
                type = ENC_TYPE(enc);
                id = ENC_ID(enc);
                off += 8;

                d = lookup(id, ids);
                dst = !d ? NO_DST : part ? d->part : d->gpu;
                if (dst == NO_DST) {
                        if (w->unknown_attrs < AMDSMI_METRICS_MAX_UNKNOWN)
                                w->unknown[w->unknown_attrs] = (struct amdsmi_metrics_attr){
                                        .id = (uint16_t) id,
                                        .type = (uint8_t) type,
                                        .unit = (uint8_t) ENC_UNIT(enc),
                                        .instances = (uint16_t) inst,
                                };
                        w->unknown_attrs++;
                        off += (size_t) inst * type_size[type];
                        continue;
                }

                n = inst;
                if (n > d->capacity) {
                        n = d->capacity;
                        w->clipped_attrs++;
                }
                store(p + off, type, n, (uint64_t *) ((uint8_t *) out + dst), d->conv);
                if (!part && d->gpu2 != NO_DST)
                        store(p + off, type, n, (uint64_t *) ((uint8_t *) out + d->gpu2), d->conv2);
                if (d->kind == KIND_ACC_COUNTER)
                        w->acc_bits = (uint8_t) (8 * type_size[type]);
                else if (d->kind == KIND_RESIDENCY &&
                         (w->residency_bits == 0 || 8 * type_size[type] < w->residency_bits))
                        w->residency_bits = (uint8_t) (8 * type_size[type]);
                off += (size_t) inst * type_size[type];
        }
}

int metrics_attr_parse_gpu(const uint8_t *p, size_t len, struct amdsmi_gpu_metrics_ext *m,
                           char *reason, size_t reason_size) {
        enum amdsmi_metrics_ids ids = m->ids;
        uint32_t count;
        struct walk w = {};
        uint16_t size;
        int r;

        r = validate(p, len, p[3] == 9 ? "gpu_metrics 1.9" : "gpu_metrics 1.9+", &count, reason,
                     reason_size);
        if (r < 0)
                return r;
        memcpy(&size, p, sizeof(size));

        /* everything from base on AMDSMI_NA; the other members are set below */
        memset(&m->base, 0xff, sizeof(*m) - offsetof(struct amdsmi_gpu_metrics_ext, base));
        m->version = AMDSMI_GPU_METRICS_EXT_VERSION;
        m->ids = ids;
        m->reserved0 = 0;
        m->base.structure_size = le16toh(size);
        m->base.format_revision = p[2];
        m->base.content_revision = p[3];
        w.unknown = m->unknown;
        walk(p, count, ids, false, m, &w);
        m->accumulation_counter_bits = w.acc_bits;
        m->residency_bits = w.residency_bits;
        memset(m->reserved, 0, sizeof(m->reserved));
        m->attr_count = w.attr_count;
        m->unknown_attrs = w.unknown_attrs;
        for (uint32_t i = w.unknown_attrs; i < AMDSMI_METRICS_MAX_UNKNOWN; i++)
                m->unknown[i] = (struct amdsmi_metrics_attr){};
        m->clipped_attrs = w.clipped_attrs;
        return 0;
}

int metrics_attr_parse_partition(const uint8_t *p, size_t len, struct amdsmi_partition_metrics *pm,
                                 char *reason, size_t reason_size) {
        uint32_t count;
        struct walk w = {};
        uint16_t size;
        int r;

        r = validate(p, len, "xcp_metrics 1.1", &count, reason, reason_size);
        if (r < 0)
                return r;
        memcpy(&size, p, sizeof(size));

        memset((uint8_t *) pm + offsetof(struct amdsmi_partition_metrics, version), 0xff,
               sizeof(*pm) - offsetof(struct amdsmi_partition_metrics, version));
        pm->version = AMDSMI_PARTITION_METRICS_VERSION;
        pm->structure_size = le16toh(size);
        pm->format_revision = p[2];
        pm->content_revision = p[3];
        pm->reserved = 0;
        w.unknown = pm->unknown;
        walk(p, count, AMDSMI_METRICS_IDS_T3, true, pm, &w);
        pm->accumulation_counter_bits = w.acc_bits;
        memset(pm->reserved2, 0, sizeof(pm->reserved2));
        pm->attr_count = w.attr_count;
        pm->unknown_attrs = w.unknown_attrs;
        for (uint32_t i = w.unknown_attrs; i < AMDSMI_METRICS_MAX_UNKNOWN; i++)
                pm->unknown[i] = (struct amdsmi_metrics_attr){};
        pm->clipped_attrs = w.clipped_attrs;
        return 0;
}
