/* SPDX-License-Identifier: MIT */
/*
 * Parser of the binary gpu_metrics table, revisions 1.3 to 1.8 (fixed layouts), of
 * xcp_metrics 1.0, and the public entry points of every revision (1.9 and xcp_metrics 1.1,
 * attribute-encoded, are in gpu-metrics-attr.c).
 *
 * Each revision is a table of field descriptors: where a value sits in the raw table, how wide
 * it is, how many consecutive elements it has, where it goes in struct amdsmi_gpu_metrics and
 * how it is converted to the library's units. Revisions 1.6+ add eight per-partition
 * xcp_stats entries, described by a second table relative to the start of one entry.
 *
 * The raw table is little-endian and read with memcpy() only; nothing is cast to a packed
 * struct. A value that is all-ones for its width (the firmware's "not provided"), and every
 * field a revision does not have, is AMDSMI_NA.
 */

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpu-metrics.h"
#include "private.h"

struct field {
        uint16_t src;   /* byte offset in the table, or in one xcp_stats entry */
        uint16_t dst;   /* byte offset of the first uint64_t in the output struct */
        uint8_t width;  /* 2, 4 or 8 bytes */
        uint8_t count;  /* consecutive elements */
        uint8_t conv;   /* enum conv */
};

struct layout {
        uint8_t content_revision;
        uint16_t size;
        const struct field *fields;
        size_t n_fields;
        uint16_t xcp_offset;
        uint16_t xcp_size;      /* 0: no xcp_stats */
        const struct field *xcp_fields;
        size_t n_xcp_fields;
};

static_assert(sizeof(struct amdsmi_gpu_metrics) <= UINT16_MAX, "dst offsets must fit 16 bits");

#define M(member) offsetof(struct amdsmi_gpu_metrics, member)
#define X(member) offsetof(struct amdsmi_xcp_metrics, member)
#define F(off, w, n, dst_, cv) \
        { .src = (off), .dst = (dst_), .width = (w), .count = (n), .conv = (cv) }
#define U16(off, member, cv) F(off, 2, 1, M(member), cv)
#define U32(off, member, cv) F(off, 4, 1, M(member), cv)
#define U64(off, member, cv) F(off, 8, 1, M(member), cv)
#define A16(off, n, member, cv) F(off, 2, n, M(member), cv)
#define A64(off, n, member, cv) F(off, 8, n, M(member), cv)
#define ENERGY(off) U64(off, energy_accumulator, CONV_NONE), U64(off, energy_uj, CONV_ENERGY_UJ)

/* v1.3, 120 bytes (older products; kept for completeness). */
static const struct field fields_v1_3[] = {
        U16(4, temp_edge_mc, CONV_X1000),
        U16(6, temp_hotspot_mc, CONV_X1000),
        U16(8, temp_mem_mc, CONV_X1000),
        U16(10, temp_vrgfx_mc, CONV_X1000),
        U16(12, temp_vrsoc_mc, CONV_X1000),
        U16(14, temp_vrmem_mc, CONV_X1000),
        U16(16, gfx_activity_pct, CONV_NONE),
        U16(18, umc_activity_pct, CONV_NONE),
        U16(20, mm_activity_pct, CONV_NONE),
        U16(22, socket_power_uw, CONV_X1E6),
        ENERGY(24),
        U64(32, system_clock_counter_ns, CONV_NONE),
        U16(40, avg_gfxclk_hz, CONV_X1E6),
        U16(42, avg_socclk_hz, CONV_X1E6),
        U16(44, avg_uclk_hz, CONV_X1E6),
        U16(46, avg_vclk0_hz, CONV_X1E6),
        U16(48, avg_dclk0_hz, CONV_X1E6),
        U16(50, avg_vclk1_hz, CONV_X1E6),
        U16(52, avg_dclk1_hz, CONV_X1E6),
        U16(54, gfxclk_hz[0], CONV_X1E6),
        U16(56, socclk_hz[0], CONV_X1E6),
        U16(58, uclk_hz, CONV_X1E6),
        U16(60, vclk0_hz[0], CONV_X1E6),
        U16(62, dclk0_hz[0], CONV_X1E6),
        U16(64, vclk1_hz, CONV_X1E6),
        U16(66, dclk1_hz, CONV_X1E6),
        U32(68, throttle_status, CONV_NONE),
        U16(72, fan_speed_rpm, CONV_NONE),
        U16(74, pcie_link_width, CONV_NONE),
        U16(76, pcie_link_speed_mts, CONV_X100),
        U32(80, gfx_activity_acc, CONV_NONE),
        U32(84, mem_activity_acc, CONV_NONE),
        A16(88, AMDSMI_METRICS_MAX_HBM, temp_hbm_mc, CONV_X1000),
        U64(96, firmware_timestamp_ns, CONV_X10),
        U16(104, voltage_soc_mv, CONV_NONE),
        U16(106, voltage_gfx_mv, CONV_NONE),
        U16(108, voltage_mem_mv, CONV_NONE),
        U64(112, indep_throttle_status, CONV_NONE),
};

/* The first six fields after the header, identical from v1.4 on. */
#define COMMON_HEAD                                             \
        U16(4, temp_hotspot_mc, CONV_X1000),                    \
        U16(6, temp_mem_mc, CONV_X1000),                        \
        U16(8, temp_vrsoc_mc, CONV_X1000),                      \
        U16(10, socket_power_uw, CONV_X1E6),                    \
        U16(12, gfx_activity_pct, CONV_NONE),                   \
        U16(14, umc_activity_pct, CONV_NONE)

/* current_gfxclk[8], current_socclk[4], current_vclk0[4], current_dclk0[4], current_uclk */
#define CLOCKS(off)                                             \
        A16((off), 8, gfxclk_hz, CONV_X1E6),                    \
        A16((off) + 16, 4, socclk_hz, CONV_X1E6),               \
        A16((off) + 24, 4, vclk0_hz, CONV_X1E6),                \
        A16((off) + 32, 4, dclk0_hz, CONV_X1E6),                \
        U16((off) + 40, uclk_hz, CONV_X1E6)

/* pcie_bandwidth_acc, pcie_bandwidth_inst, pcie_l0_to_recov_count_acc, pcie_replay_count_acc,
 * pcie_replay_rover_count_acc: five consecutive u64 */
#define PCIE_COUNTERS(off)                                      \
        U64((off), pcie_bandwidth_acc, CONV_NONE),              \
        U64((off) + 8, pcie_bandwidth_inst, CONV_NONE),         \
        U64((off) + 16, pcie_l0_to_recov_count_acc, CONV_NONE), \
        U64((off) + 24, pcie_replay_count_acc, CONV_NONE),      \
        U64((off) + 32, pcie_replay_rover_count_acc, CONV_NONE)

/* pcie_link_width, pcie_link_speed, xgmi_link_width, xgmi_link_speed: four consecutive u16 */
#define LINKS(off)                                              \
        U16((off), pcie_link_width, CONV_NONE),                 \
        U16((off) + 2, pcie_link_speed_mts, CONV_X100),         \
        U16((off) + 4, xgmi_link_width, CONV_NONE),             \
        U16((off) + 6, xgmi_link_speed_gbps, CONV_NONE)

#define XGMI_DATA(off)                                                          \
        A64((off), AMDSMI_METRICS_MAX_XGMI, xgmi_read_data_kb, CONV_NONE),      \
        A64((off) + 64, AMDSMI_METRICS_MAX_XGMI, xgmi_write_data_kb, CONV_NONE)

/* accumulation_counter and the five *_residency_acc: six consecutive u32 */
#define RESIDENCY(off)                                          \
        U32((off), accumulation_counter, CONV_NONE),            \
        U32((off) + 4, prochot_residency_acc, CONV_NONE),       \
        U32((off) + 8, ppt_residency_acc, CONV_NONE),           \
        U32((off) + 12, socket_thm_residency_acc, CONV_NONE),   \
        U32((off) + 16, vr_thm_residency_acc, CONV_NONE),       \
        U32((off) + 20, hbm_thm_residency_acc, CONV_NONE)

/* v1.4, 288 bytes */
static const struct field fields_v1_4[] = {
        COMMON_HEAD,
        A16(16, AMDSMI_METRICS_MAX_VCN, vcn_activity_pct, CONV_NONE),
        ENERGY(24),
        U64(32, system_clock_counter_ns, CONV_NONE),
        U32(40, throttle_status, CONV_NONE),
        U32(44, gfxclk_lock_status, CONV_NONE),
        LINKS(48),
        U32(56, gfx_activity_acc, CONV_NONE),
        U32(60, mem_activity_acc, CONV_NONE),
        PCIE_COUNTERS(64),
        XGMI_DATA(104),
        U64(232, firmware_timestamp_ns, CONV_X10),
        CLOCKS(240),
};

/* v1.5, 360 bytes: v1.4 plus jpeg_activity[32] and the two PCIe NAK counters */
static const struct field fields_v1_5[] = {
        COMMON_HEAD,
        A16(16, AMDSMI_METRICS_MAX_VCN, vcn_activity_pct, CONV_NONE),
        A16(24, 32, jpeg_activity_pct, CONV_NONE),
        ENERGY(88),
        U64(96, system_clock_counter_ns, CONV_NONE),
        U32(104, throttle_status, CONV_NONE),
        U32(108, gfxclk_lock_status, CONV_NONE),
        LINKS(112),
        U32(120, gfx_activity_acc, CONV_NONE),
        U32(124, mem_activity_acc, CONV_NONE),
        PCIE_COUNTERS(128),
        U32(168, pcie_nak_sent_count_acc, CONV_NONE),
        U32(172, pcie_nak_rcvd_count_acc, CONV_NONE),
        XGMI_DATA(176),
        U64(304, firmware_timestamp_ns, CONV_X10),
        CLOCKS(312),
};

/* v1.6, 1664 bytes: residency counters, partitions */
static const struct field fields_v1_6[] = {
        COMMON_HEAD,
        ENERGY(16),
        U64(24, system_clock_counter_ns, CONV_NONE),
        RESIDENCY(32),
        U32(56, gfxclk_lock_status, CONV_NONE),
        LINKS(60),
        U32(68, gfx_activity_acc, CONV_NONE),
        U32(72, mem_activity_acc, CONV_NONE),
        PCIE_COUNTERS(80),
        U32(120, pcie_nak_sent_count_acc, CONV_NONE),
        U32(124, pcie_nak_rcvd_count_acc, CONV_NONE),
        XGMI_DATA(128),
        U64(256, firmware_timestamp_ns, CONV_X10),
        CLOCKS(264),
        U16(306, num_partition, CONV_NONE),
        U32(1656, pcie_lc_perf_other_end_recovery, CONV_NONE),
};

/* v1.7 and v1.8 differ only in the size of xcp_stats, so in where the last field sits */
#define FIELDS_V1_7(lc_perf_off)                                                        \
        COMMON_HEAD,                                                                    \
        U64(16, mem_max_bandwidth_bps, CONV_X1E9),                                      \
        ENERGY(24),                                                                     \
        U64(32, system_clock_counter_ns, CONV_NONE),                                    \
        RESIDENCY(40),                                                                  \
        U32(64, gfxclk_lock_status, CONV_NONE),                                         \
        LINKS(68),                                                                      \
        U32(76, gfx_activity_acc, CONV_NONE),                                           \
        U32(80, mem_activity_acc, CONV_NONE),                                           \
        PCIE_COUNTERS(88),                                                              \
        U32(128, pcie_nak_sent_count_acc, CONV_NONE),                                   \
        U32(132, pcie_nak_rcvd_count_acc, CONV_NONE),                                   \
        XGMI_DATA(136),                                                                 \
        A16(264, AMDSMI_METRICS_MAX_XGMI, xgmi_link_status, CONV_NONE),                 \
        U64(288, firmware_timestamp_ns, CONV_X10),                                      \
        CLOCKS(296),                                                                    \
        U16(338, num_partition, CONV_NONE),                                             \
        U32((lc_perf_off), pcie_lc_perf_other_end_recovery, CONV_NONE)

static const struct field fields_v1_7[] = { FIELDS_V1_7(2200) };
static const struct field fields_v1_8[] = { FIELDS_V1_7(3864) };

/* amdgpu_xcp_metrics (v1.6, 168 bytes) and _v1_1 (v1.7, 232 bytes) */
#define XCP_V1_0                                                                \
        F(0, 4, AMDSMI_METRICS_MAX_XCC, X(gfx_busy_inst_pct), CONV_NONE),       \
        F(32, 2, 32, X(jpeg_busy_pct), CONV_NONE),                              \
        F(96, 2, AMDSMI_METRICS_MAX_VCN, X(vcn_busy_pct), CONV_NONE),           \
        F(104, 8, AMDSMI_METRICS_MAX_XCC, X(gfx_busy_acc), CONV_NONE)

static const struct field xcp_fields_v1_0[] = { XCP_V1_0 };
static const struct field xcp_fields_v1_1[] = {
        XCP_V1_0,
        F(168, 8, AMDSMI_METRICS_MAX_XCC, X(gfx_below_host_limit_acc), CONV_NONE),
};

/* amdgpu_xcp_metrics_v1_2 (v1.8, 440 bytes) */
static const struct field xcp_fields_v1_2[] = {
        F(0, 4, AMDSMI_METRICS_MAX_XCC, X(gfx_busy_inst_pct), CONV_NONE),
        F(32, 2, AMDSMI_METRICS_MAX_JPEG, X(jpeg_busy_pct), CONV_NONE),
        F(112, 2, AMDSMI_METRICS_MAX_VCN, X(vcn_busy_pct), CONV_NONE),
        F(120, 8, AMDSMI_METRICS_MAX_XCC, X(gfx_busy_acc), CONV_NONE),
        F(184, 8, AMDSMI_METRICS_MAX_XCC, X(gfx_below_host_limit_ppt_acc), CONV_NONE),
        F(248, 8, AMDSMI_METRICS_MAX_XCC, X(gfx_below_host_limit_thm_acc), CONV_NONE),
        F(312, 8, AMDSMI_METRICS_MAX_XCC, X(gfx_low_utilization_acc), CONV_NONE),
        F(376, 8, AMDSMI_METRICS_MAX_XCC, X(gfx_below_host_limit_total_acc), CONV_NONE),
};

#define LAYOUT(rev, sz, f) \
        { .content_revision = (rev), .size = (sz), .fields = (f), .n_fields = ELEMENTSOF(f) }
#define LAYOUT_XCP(rev, sz, f, xoff, xsz, xf)                                           \
        { .content_revision = (rev), .size = (sz), .fields = (f), .n_fields = ELEMENTSOF(f), \
          .xcp_offset = (xoff), .xcp_size = (xsz), .xcp_fields = (xf),                  \
          .n_xcp_fields = ELEMENTSOF(xf) }

/* format_revision 1 */
static const struct layout layouts_v1[] = {
        LAYOUT(3, 120, fields_v1_3),
        LAYOUT(4, 288, fields_v1_4),
        LAYOUT(5, 360, fields_v1_5),
        LAYOUT_XCP(6, 1664, fields_v1_6, 312, 168, xcp_fields_v1_0),
        LAYOUT_XCP(7, 2208, fields_v1_7, 344, 232, xcp_fields_v1_1),
        LAYOUT_XCP(8, 3872, fields_v1_8, 344, 440, xcp_fields_v1_2),
};

/* Width-specific loops: the per-element work is a load and a compare, no dispatch. */
static void read_u16(const uint8_t *s, uint64_t *d, unsigned n) {
        for (unsigned k = 0; k < n; k++) {
                uint16_t v;

                memcpy(&v, s + 2 * k, sizeof(v));
                v = le16toh(v);
                d[k] = v == UINT16_MAX ? AMDSMI_NA : v;
        }
}

static void read_u32(const uint8_t *s, uint64_t *d, unsigned n) {
        for (unsigned k = 0; k < n; k++) {
                uint32_t v;

                memcpy(&v, s + 4 * k, sizeof(v));
                v = le32toh(v);
                d[k] = v == UINT32_MAX ? AMDSMI_NA : v;
        }
}

static void read_u64(const uint8_t *s, uint64_t *d, unsigned n) {
        /* all-ones is AMDSMI_NA already */
        for (unsigned k = 0; k < n; k++) {
                uint64_t v;

                memcpy(&v, s + 8 * k, sizeof(v));
                d[k] = le64toh(v);
        }
}

uint64_t metrics_convert(uint64_t v, enum conv conv) {
        static const uint64_t factor[] = {
                [CONV_X10] = 10,
                [CONV_X100] = 100,
                [CONV_X1000] = 1000,
                [CONV_X1E6] = UINT64_C(1000000),
                [CONV_X1E9] = UINT64_C(1000000000),
        };
        unsigned __int128 uj;
        uint64_t r;

        if (v == AMDSMI_NA)
                return AMDSMI_NA;

        if (conv == CONV_ENERGY_UJ) {
                uj = (unsigned __int128) v * 1000000 / 65536;
                return uj >= AMDSMI_NA ? AMDSMI_NA : (uint64_t) uj;
        }

        /* A value too large to represent in the target unit is as good as absent. (No
         * product of these factors, all multiples of 10, can be all-ones.) */
        if (__builtin_mul_overflow(v, factor[conv], &r))
                return AMDSMI_NA;
        return r;
}

static void apply_fields(const uint8_t *src, void *dst, const struct field *fields, size_t n) {
        for (const struct field *f = fields; f < fields + n; f++) {
                const uint8_t *s = src + f->src;
                uint64_t *d = (uint64_t *) ((uint8_t *) dst + f->dst);

                switch (f->width) {
                case 2:
                        read_u16(s, d, f->count);
                        break;
                case 4:
                        read_u32(s, d, f->count);
                        break;
                default:
                        read_u64(s, d, f->count);
                }

                if (f->conv != CONV_NONE)
                        for (unsigned k = 0; k < f->count; k++)
                                d[k] = metrics_convert(d[k], f->conv);
        }
}

static const struct layout *find_layout(uint8_t format_revision, uint8_t content_revision) {
        if (format_revision != 1)
                return NULL;

        for (size_t i = 0; i < ELEMENTSOF(layouts_v1); i++)
                if (layouts_v1[i].content_revision == content_revision)
                        return layouts_v1 + i;
        return NULL;
}

int metrics_invalid(char *reason, size_t reason_size, const char *fmt, ...) {
        va_list ap;

        if (reason && reason_size > 0) {
                va_start(ap, fmt);
                vsnprintf(reason, reason_size, fmt, ap);
                va_end(ap);
        }
        return -EBADMSG;
}

/* A versioned structure whose caller's @size is below this library's first version. */
static int check_struct_size(const char *name, uint32_t size, size_t need, char *reason,
                             size_t reason_size) {
        if (size >= need)
                return 0;
        if (reason && reason_size > 0)
                snprintf(reason, reason_size, "struct %s: size %u, at least %zu needed", name, size,
                         need);
        return -EINVAL;
}

static void reason_clear(char *reason, size_t reason_size) {
        if (reason && reason_size > 0)
                reason[0] = '\0';
}

/* The fixed layouts into @m; nothing written on failure. */
static int parse_fixed(const uint8_t *p, size_t len, const struct layout *l,
                       struct amdsmi_gpu_metrics *m, char *reason, size_t reason_size) {
        uint16_t size;

        memcpy(&size, p, sizeof(size));
        size = le16toh(size);
        if (size != l->size)
                return metrics_invalid(reason, reason_size,
                                       "gpu_metrics 1.%u: structure_size %u, the layout has %u",
                                       l->content_revision, size, l->size);
        if (size > len)
                return metrics_invalid(reason, reason_size,
                                       "gpu_metrics 1.%u: structure_size %u exceeds the %zu "
                                       "bytes read",
                                       l->content_revision, size, len);

        /* The table is valid and nothing below can fail, so the output is written in place:
         * a local copy of the 7.5 KiB struct would cost a third of the parse. Everything not
         * in this revision's table stays AMDSMI_NA (all-ones). */
        memset(m, 0xff, sizeof(*m));
        m->structure_size = size;
        m->format_revision = p[2];
        m->content_revision = p[3];

        apply_fields(p, m, l->fields, l->n_fields);
        if (l->xcp_size > 0)
                for (size_t i = 0; i < AMDSMI_METRICS_MAX_XCP; i++)
                        apply_fields(p + l->xcp_offset + i * l->xcp_size, &m->xcp[i],
                                     l->xcp_fields, l->n_xcp_fields);
        return 0;
}

/* What a table's header asks for: a fixed layout (*ret_layout), the attribute-encoded 1.9
 * (NULL), or an error. */
static int dispatch(const uint8_t *p, size_t len, const struct layout **ret_layout, char *reason,
                    size_t reason_size) {
        if (len < 4)
                return metrics_invalid(reason, reason_size,
                                       "gpu_metrics: %zu bytes, shorter than the header", len);
        /* 1.9 and every later 1.x: attribute-encoded, self-describing */
        if (p[2] == 1 && p[3] >= 9) {
                *ret_layout = NULL;
                return 0;
        }
        *ret_layout = find_layout(p[2], p[3]);
        if (!*ret_layout) {
                if (reason && reason_size > 0)
                        snprintf(reason, reason_size, "gpu_metrics: unsupported revision %u.%u",
                                 p[2], p[3]);
                return -EOPNOTSUPP;
        }
        return 0;
}

_public_ int amdsmi_gpu_metrics_parse(const void *buf, size_t len,
                                      struct amdsmi_gpu_metrics *ret_metrics) {
        const struct layout *l;
        int r;

        if (!buf || !ret_metrics)
                return -EINVAL;
        r = dispatch(buf, len, &l, NULL, 0);
        if (r < 0)
                return r;
        if (l)
                return parse_fixed(buf, len, l, ret_metrics, NULL, 0);

        /* 1.9: what fits the old structure, for callers built before 1.9 existed */
        struct amdsmi_gpu_metrics_ext ext = { .size = sizeof(ext) };

        r = metrics_attr_parse_gpu(buf, len, &ext, NULL, 0);
        if (r < 0)
                return r;
        *ret_metrics = ext.base;
        return 0;
}

/* 1.6 to 1.8: the partitions' per-XCC entries laid end to end, in partition order. */
static void xcc_from_partitions(struct amdsmi_gpu_metrics_ext *m) {
        const struct amdsmi_gpu_metrics *b = &m->base;
        unsigned parts = b->num_partition == AMDSMI_NA || b->num_partition > AMDSMI_METRICS_MAX_XCP
                                 ? AMDSMI_METRICS_MAX_XCP
                                 : (unsigned) b->num_partition;
        unsigned k = 0;

        for (unsigned p = 0; p < parts; p++) {
                const struct amdsmi_xcp_metrics *x = &b->xcp[p];

                for (unsigned j = 0; j < AMDSMI_METRICS_MAX_XCC && k < AMDSMI_METRICS_MAX_XCC; j++) {
                        if (x->gfx_busy_inst_pct[j] == AMDSMI_NA && x->gfx_busy_acc[j] == AMDSMI_NA)
                                continue;
                        m->xcc_gfx_busy_inst_pct[k] = x->gfx_busy_inst_pct[j];
                        m->xcc_gfx_busy_acc[k] = x->gfx_busy_acc[j];
                        m->xcc_below_host_limit_ppt_acc[k] = x->gfx_below_host_limit_ppt_acc[j];
                        m->xcc_below_host_limit_thm_acc[k] = x->gfx_below_host_limit_thm_acc[j];
                        m->xcc_low_utilization_acc[k] = x->gfx_low_utilization_acc[j];
                        m->xcc_below_host_limit_total_acc[k] =
                                b->content_revision == 7 ? x->gfx_below_host_limit_acc[j]
                                                         : x->gfx_below_host_limit_total_acc[j];
                        k++;
                }
        }
}

_public_ int amdsmi_gpu_metrics_parse_ext(const void *buf, size_t len,
                                          struct amdsmi_gpu_metrics_ext *ret_metrics,
                                          char *ret_reason, size_t reason_size) {
        struct amdsmi_gpu_metrics_ext *m = ret_metrics;
        const struct layout *l;
        int r;

        reason_clear(ret_reason, reason_size);
        if (!buf || !m)
                return -EINVAL;
        r = check_struct_size("amdsmi_gpu_metrics_ext", m->size, sizeof(*m), ret_reason,
                              reason_size);
        if (r < 0)
                return r;
        if (m->ids != AMDSMI_METRICS_IDS_T3 && m->ids != AMDSMI_METRICS_IDS_MID) {
                if (ret_reason && reason_size > 0)
                        snprintf(ret_reason, reason_size,
                                 "struct amdsmi_gpu_metrics_ext: unknown ids %u", m->ids);
                return -EINVAL;
        }
        r = dispatch(buf, len, &l, ret_reason, reason_size);
        if (r < 0)
                return r;
        if (!l)
                return metrics_attr_parse_gpu(buf, len, m, ret_reason, reason_size);

        r = parse_fixed(buf, len, l, &m->base, ret_reason, reason_size);
        if (r < 0)
                return r;
        memset((uint8_t *) m + offsetof(struct amdsmi_gpu_metrics_ext, xcc_gfx_busy_inst_pct), 0xff,
               offsetof(struct amdsmi_gpu_metrics_ext, accumulation_counter_bits) -
                       offsetof(struct amdsmi_gpu_metrics_ext, xcc_gfx_busy_inst_pct));
        m->version = AMDSMI_GPU_METRICS_EXT_VERSION;
        m->reserved0 = 0;
        if (l->xcp_size > 0)
                xcc_from_partitions(m);
        /* 1.6 to 1.8 carry accumulation_counter and the residency counters as u32 */
        m->accumulation_counter_bits = l->content_revision >= 6 ? 32 : 0;
        m->residency_bits = l->content_revision >= 6 ? 32 : 0;
        memset(m->reserved, 0, sizeof(m->reserved));
        m->attr_count = 0;
        m->unknown_attrs = 0;
        memset(m->unknown, 0, sizeof(m->unknown));
        m->clipped_attrs = 0;
        return 0;
}

/* xcp_metrics 1.0 (amdgpu_partition_metrics_v1_0, 488 bytes) */
#define PM(member) offsetof(struct amdsmi_partition_metrics, member)
#define PX(member) offsetof(struct amdsmi_partition_metrics, xcp.member)
static const struct field partition_fields_v1_0[] = {
        F(4, 2, AMDSMI_METRICS_MAX_XCC, PM(gfxclk_hz), CONV_X1E6),
        F(20, 2, 4, PM(socclk_hz), CONV_X1E6),
        F(28, 2, 4, PM(vclk0_hz), CONV_X1E6),
        F(36, 2, 4, PM(dclk0_hz), CONV_X1E6),
        F(44, 2, 1, PM(uclk_hz), CONV_X1E6),
        F(48, 4, AMDSMI_METRICS_MAX_XCC, PX(gfx_busy_inst_pct), CONV_NONE),
        F(80, 2, AMDSMI_METRICS_MAX_JPEG, PX(jpeg_busy_pct), CONV_NONE),
        F(160, 2, AMDSMI_METRICS_MAX_VCN, PX(vcn_busy_pct), CONV_NONE),
        F(168, 8, AMDSMI_METRICS_MAX_XCC, PX(gfx_busy_acc), CONV_NONE),
        F(232, 8, AMDSMI_METRICS_MAX_XCC, PX(gfx_below_host_limit_ppt_acc), CONV_NONE),
        F(296, 8, AMDSMI_METRICS_MAX_XCC, PX(gfx_below_host_limit_thm_acc), CONV_NONE),
        F(360, 8, AMDSMI_METRICS_MAX_XCC, PX(gfx_low_utilization_acc), CONV_NONE),
        F(424, 8, AMDSMI_METRICS_MAX_XCC, PX(gfx_below_host_limit_total_acc), CONV_NONE),
};
#define PARTITION_V1_0_SIZE 488

_public_ int amdsmi_partition_metrics_parse(const void *buf, size_t len,
                                            struct amdsmi_partition_metrics *ret_metrics,
                                            char *ret_reason, size_t reason_size) {
        struct amdsmi_partition_metrics *pm = ret_metrics;
        const uint8_t *p = buf;
        uint16_t size;
        int r;

        reason_clear(ret_reason, reason_size);
        if (!buf || !pm)
                return -EINVAL;
        r = check_struct_size("amdsmi_partition_metrics", pm->size, sizeof(*pm), ret_reason,
                              reason_size);
        if (r < 0)
                return r;
        if (len < 4)
                return metrics_invalid(ret_reason, reason_size,
                                       "xcp_metrics: %zu bytes, shorter than the header", len);
        if (p[2] == 1 && p[3] == 1)
                return metrics_attr_parse_partition(p, len, pm, ret_reason, reason_size);
        if (p[2] != 1 || p[3] != 0) {
                if (ret_reason && reason_size > 0)
                        snprintf(ret_reason, reason_size, "xcp_metrics: unsupported revision %u.%u",
                                 p[2], p[3]);
                return -EOPNOTSUPP;
        }

        memcpy(&size, p, sizeof(size));
        size = le16toh(size);
        if (size != PARTITION_V1_0_SIZE)
                return metrics_invalid(ret_reason, reason_size,
                                       "xcp_metrics 1.0: structure_size %u, the layout has %u",
                                       size, PARTITION_V1_0_SIZE);
        if (size > len)
                return metrics_invalid(ret_reason, reason_size,
                                       "xcp_metrics 1.0: structure_size %u exceeds the %zu bytes "
                                       "read",
                                       size, len);
        memset((uint8_t *) pm + offsetof(struct amdsmi_partition_metrics, version), 0xff,
               sizeof(*pm) - offsetof(struct amdsmi_partition_metrics, version));
        pm->version = AMDSMI_PARTITION_METRICS_VERSION;
        pm->structure_size = size;
        pm->format_revision = p[2];
        pm->content_revision = p[3];
        pm->reserved = 0;
        apply_fields(p, pm, partition_fields_v1_0, ELEMENTSOF(partition_fields_v1_0));
        /* not in 1.0: no xcp.gfx_below_host_limit_acc (1.7 gpu_metrics only) */
        pm->accumulation_counter_bits = 0;
        memset(pm->reserved2, 0, sizeof(pm->reserved2));
        pm->attr_count = 0;
        pm->unknown_attrs = 0;
        memset(pm->unknown, 0, sizeof(pm->unknown));
        pm->clipped_attrs = 0;
        return 0;
}
