/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: gpu_metrics v1.9 and xcp/xcp_metrics v1.1, the attribute-encoded tables of
 * current kernels (spec gpu-metrics-v1.9.md §1 to §3), written from the spec alone.
 *
 * A table is the 4-byte header (structure_size, format_revision 1, content_revision), an int
 * attr_count, then attr_count records back to back, packed: a u64 encoding
 * (unit << 24 | type << 20 | id << 10 | instances) and the instances' values, little-endian.
 * The records are written in the order of the SMU 13.0.6 class (§2: id 38 NUM_PARTITION is not
 * emitted, 39 follows 37), with that class's types, units and instance counts; values the
 * firmware does not give (SIM_METRICS_NA) are all-ones of their type, as the driver's 0xFF fill
 * leaves them. Counters carried in a narrower type than the simulator keeps (the u32
 * accumulation counter of 6.19, the u32 residency counters) are written modulo 2^width.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "metrics.h"

/* enum amdgpu_metrics_attr_type (§1.4) */
enum {
        T_U8 = 0,
        T_S8 = 1,
        T_U16 = 2,
        T_S16 = 3,
        T_U32 = 4,
        T_S32 = 5,
        T_U64 = 6,
        T_S64 = 7,
};

/* enum amdgpu_metrics_attr_unit (§1.5) */
enum {
        U_NONE = 0,
        U_CLOCK_1 = 1, /* MHz */
        U_TEMP_1 = 2,  /* °C */
        U_POWER_1 = 3, /* W */
        U_TIME_1 = 4,  /* ns */
        U_TIME_2 = 5,  /* 10 ns */
        U_SPEED_1 = 6, /* GT/s */
        U_SPEED_2 = 7, /* 0.1 GT/s */
        U_BW_1 = 8,    /* GB/s */
        U_DATA_1 = 9,  /* KB */
        U_PERCENT = 10,
};

/* enum amdgpu_metrics_attr_id (§2, T3 numbering for 48..50) */
enum {
        ID_TEMPERATURE_HOTSPOT = 0,
        ID_TEMPERATURE_MEM = 1,
        ID_TEMPERATURE_VRSOC = 2,
        ID_CURR_SOCKET_POWER = 3,
        ID_AVERAGE_GFX_ACTIVITY = 4,
        ID_AVERAGE_UMC_ACTIVITY = 5,
        ID_MEM_MAX_BANDWIDTH = 6,
        ID_ENERGY_ACCUMULATOR = 7,
        ID_SYSTEM_CLOCK_COUNTER = 8,
        ID_ACCUMULATION_COUNTER = 9,
        ID_PROCHOT_RESIDENCY_ACC = 10,
        ID_PPT_RESIDENCY_ACC = 11,
        ID_SOCKET_THM_RESIDENCY_ACC = 12,
        ID_VR_THM_RESIDENCY_ACC = 13,
        ID_HBM_THM_RESIDENCY_ACC = 14,
        ID_GFXCLK_LOCK_STATUS = 15,
        ID_PCIE_LINK_WIDTH = 16,
        ID_PCIE_LINK_SPEED = 17,
        ID_XGMI_LINK_WIDTH = 18,
        ID_XGMI_LINK_SPEED = 19,
        ID_GFX_ACTIVITY_ACC = 20,
        ID_MEM_ACTIVITY_ACC = 21,
        ID_PCIE_BANDWIDTH_ACC = 22,
        ID_PCIE_BANDWIDTH_INST = 23,
        ID_PCIE_L0_TO_RECOV_COUNT_ACC = 24,
        ID_PCIE_REPLAY_COUNT_ACC = 25,
        ID_PCIE_REPLAY_ROVER_COUNT_ACC = 26,
        ID_PCIE_NAK_SENT_COUNT_ACC = 27,
        ID_PCIE_NAK_RCVD_COUNT_ACC = 28,
        ID_XGMI_READ_DATA_ACC = 29,
        ID_XGMI_WRITE_DATA_ACC = 30,
        ID_XGMI_LINK_STATUS = 31,
        ID_FIRMWARE_TIMESTAMP = 32,
        ID_CURRENT_GFXCLK = 33,
        ID_CURRENT_SOCCLK = 34,
        ID_CURRENT_VCLK0 = 35,
        ID_CURRENT_DCLK0 = 36,
        ID_CURRENT_UCLK = 37,
        ID_NUM_PARTITION = 38, /* not emitted by 13.0.6 */
        ID_PCIE_LC_PERF_OTHER_END_RECOVERY = 39,
        ID_GFX_BUSY_INST = 40,
        ID_JPEG_BUSY = 41,
        ID_VCN_BUSY = 42,
        ID_GFX_BUSY_ACC = 43,
        ID_GFX_BELOW_HOST_LIMIT_PPT_ACC = 44,
        ID_GFX_BELOW_HOST_LIMIT_THM_ACC = 45,
        ID_GFX_LOW_UTILIZATION_ACC = 46,
        ID_GFX_BELOW_HOST_LIMIT_TOTAL_ACC = 47,
        ID_TEMPERATURE_HBM = 48, /* T3 */
        ID_TEMPERATURE_AID = 49, /* T3 */
        ID_TEMPERATURE_XCD = 50, /* T3 */
};

/* Array bounds of the 13.0.6 class (P3) */
#define NUM_XGMI_LINKS 8
#define MAX_GFX_CLKS 8
#define MAX_CLKS 4
#define MAX_XCC 8
#define MAX_VCN 4
#define MAX_JPEG 40
#define NUM_HBM 8
#define NUM_AID 4
#define NUM_XCD 8

const char *const sim_metrics_layout_names[_SIM_LAYOUT_MAX] = {
        [SIM_LAYOUT_6_19] = "6.19",
        [SIM_LAYOUT_7_0] = "7.0",
        [SIM_LAYOUT_7_1] = "7.1",
};

struct enc {
        uint8_t *buf; /* NULL: count only */
        size_t off, size;
        unsigned attrs;
        bool overflow;
};

static size_t type_size(unsigned type) {
        return (size_t) 1 << (type / 2);
}

static void put_le(struct enc *e, uint64_t v, size_t width) {
        if (e->off + width > e->size) {
                e->overflow = true;
                e->off += width;
                return;
        }
        for (size_t i = 0; i < width; i++)
                e->buf[e->off + i] = (uint8_t) (v >> (8 * i));
        e->off += width;
}

/* One record: the encoding, then @inst values of @type (NA all-ones, else modulo the width). */
static void rec(struct enc *e, unsigned id, unsigned type, unsigned unit, const uint64_t *v,
                unsigned inst) {
        uint64_t encoding =
                (uint64_t) unit << 24 | (uint64_t) type << 20 | (uint64_t) id << 10 | inst;
        size_t width = type_size(type);

        assert(inst >= 1 && inst <= 0x3ff && id <= 0x3ff && type <= T_S64);
        put_le(e, encoding, 8);
        for (unsigned i = 0; i < inst; i++)
                put_le(e, v[i] == SIM_METRICS_NA ? UINT64_MAX : v[i], width);
        e->attrs++;
}

static void scalar(struct enc *e, unsigned id, unsigned type, unsigned unit, uint64_t v) {
        rec(e, id, type, unit, &v, 1);
}

/* structure_size, format_revision, content_revision and attr_count: written by finish() */
static void skip_header(struct enc *e) {
        e->off = 8;
        e->attrs = 0;
        e->overflow = e->size < 8;
}

static int finish(struct enc *e, unsigned content) {
        if (e->overflow)
                return -ENOSPC;
        assert(e->off <= UINT16_MAX);
        e->buf[0] = (uint8_t) e->off; /* structure_size: the blob's length */
        e->buf[1] = (uint8_t) (e->off >> 8);
        e->buf[2] = 1; /* format_revision */
        e->buf[3] = (uint8_t) content;
        for (int i = 0; i < 4; i++)
                e->buf[4 + i] = (uint8_t) (e->attrs >> (8 * i)); /* attr_count, LE int */
        return (int) e->off;
}

/* The per-XCC arrays of the 13.0.6 class (gpu_metrics ids 40..47, xcp_metrics rows 6..13). */
static void xcc_arrays(struct enc *e, const struct sim_xcp_stats *x) {
        rec(e, ID_GFX_BUSY_INST, T_U32, U_PERCENT, x->gfx_busy_inst, MAX_XCC);
        rec(e, ID_JPEG_BUSY, T_U16, U_PERCENT, x->jpeg_busy, MAX_JPEG);
        rec(e, ID_VCN_BUSY, T_U16, U_PERCENT, x->vcn_busy, MAX_VCN);
        rec(e, ID_GFX_BUSY_ACC, T_U64, U_PERCENT, x->gfx_busy_acc, MAX_XCC);
        rec(e, ID_GFX_BELOW_HOST_LIMIT_PPT_ACC, T_U64, U_NONE, x->gfx_below_host_limit_ppt_acc,
            MAX_XCC);
        rec(e, ID_GFX_BELOW_HOST_LIMIT_THM_ACC, T_U64, U_NONE, x->gfx_below_host_limit_thm_acc,
            MAX_XCC);
        rec(e, ID_GFX_LOW_UTILIZATION_ACC, T_U64, U_NONE, x->gfx_low_utilization_acc, MAX_XCC);
        rec(e, ID_GFX_BELOW_HOST_LIMIT_TOTAL_ACC, T_U64, U_NONE, x->gfx_below_host_limit_total_acc,
            MAX_XCC);
}

static void write_v1_9(struct enc *e, const struct sim_metrics *m, enum sim_metrics_layout l) {
        skip_header(e);

        scalar(e, ID_TEMPERATURE_HOTSPOT, T_U16, U_TEMP_1, m->temperature_hotspot);
        scalar(e, ID_TEMPERATURE_MEM, T_U16, U_TEMP_1, m->temperature_mem);
        scalar(e, ID_TEMPERATURE_VRSOC, T_U16, U_TEMP_1, m->temperature_vrsoc);
        scalar(e, ID_CURR_SOCKET_POWER, T_U16, U_POWER_1, m->curr_socket_power);
        scalar(e, ID_AVERAGE_GFX_ACTIVITY, T_U16, U_PERCENT, m->average_gfx_activity);
        scalar(e, ID_AVERAGE_UMC_ACTIVITY, T_U16, U_PERCENT, m->average_umc_activity);
        scalar(e, ID_MEM_MAX_BANDWIDTH, T_U64, U_BW_1, m->mem_max_bandwidth);
        scalar(e, ID_ENERGY_ACCUMULATOR, T_U64, U_NONE, m->energy_accumulator);
        scalar(e, ID_SYSTEM_CLOCK_COUNTER, T_U64, U_TIME_1, m->system_clock_counter);
        /* u32 in 6.19, u64 from Linux 7.0 ("Use U64 for accumulation counter") */
        scalar(e, ID_ACCUMULATION_COUNTER, l == SIM_LAYOUT_6_19 ? T_U32 : T_U64, U_NONE,
               m->accumulation_counter);
        scalar(e, ID_PROCHOT_RESIDENCY_ACC, T_U32, U_NONE, m->prochot_residency_acc);
        scalar(e, ID_PPT_RESIDENCY_ACC, T_U32, U_NONE, m->ppt_residency_acc);
        scalar(e, ID_SOCKET_THM_RESIDENCY_ACC, T_U32, U_NONE, m->socket_thm_residency_acc);
        scalar(e, ID_VR_THM_RESIDENCY_ACC, T_U32, U_NONE, m->vr_thm_residency_acc);
        scalar(e, ID_HBM_THM_RESIDENCY_ACC, T_U32, U_NONE, m->hbm_thm_residency_acc);
        scalar(e, ID_GFXCLK_LOCK_STATUS, T_U32, U_NONE, m->gfxclk_lock_status);
        scalar(e, ID_PCIE_LINK_WIDTH, T_U16, U_NONE, m->pcie_link_width);
        scalar(e, ID_PCIE_LINK_SPEED, T_U16, U_SPEED_2, m->pcie_link_speed);
        scalar(e, ID_XGMI_LINK_WIDTH, T_U16, U_NONE, m->xgmi_link_width);
        scalar(e, ID_XGMI_LINK_SPEED, T_U16, U_SPEED_1, m->xgmi_link_speed);
        scalar(e, ID_GFX_ACTIVITY_ACC, T_U32, U_PERCENT, m->gfx_activity_acc);
        scalar(e, ID_MEM_ACTIVITY_ACC, T_U32, U_PERCENT, m->mem_activity_acc);
        scalar(e, ID_PCIE_BANDWIDTH_ACC, T_U64, U_PERCENT, m->pcie_bandwidth_acc); /* sic */
        scalar(e, ID_PCIE_BANDWIDTH_INST, T_U64, U_BW_1, m->pcie_bandwidth_inst);
        scalar(e, ID_PCIE_L0_TO_RECOV_COUNT_ACC, T_U64, U_NONE, m->pcie_l0_to_recov_count_acc);
        scalar(e, ID_PCIE_REPLAY_COUNT_ACC, T_U64, U_NONE, m->pcie_replay_count_acc);
        scalar(e, ID_PCIE_REPLAY_ROVER_COUNT_ACC, T_U64, U_NONE, m->pcie_replay_rover_count_acc);
        scalar(e, ID_PCIE_NAK_SENT_COUNT_ACC, T_U32, U_NONE, m->pcie_nak_sent_count_acc);
        scalar(e, ID_PCIE_NAK_RCVD_COUNT_ACC, T_U32, U_NONE, m->pcie_nak_rcvd_count_acc);
        rec(e, ID_XGMI_READ_DATA_ACC, T_U64, U_DATA_1, m->xgmi_read_data_acc, NUM_XGMI_LINKS);
        rec(e, ID_XGMI_WRITE_DATA_ACC, T_U64, U_DATA_1, m->xgmi_write_data_acc, NUM_XGMI_LINKS);
        rec(e, ID_XGMI_LINK_STATUS, T_U16, U_NONE, m->xgmi_link_status, NUM_XGMI_LINKS);
        scalar(e, ID_FIRMWARE_TIMESTAMP, T_U64, U_TIME_2, m->firmware_timestamp);
        rec(e, ID_CURRENT_GFXCLK, T_U16, U_CLOCK_1, m->current_gfxclk, MAX_GFX_CLKS);
        rec(e, ID_CURRENT_SOCCLK, T_U16, U_CLOCK_1, m->current_socclk, MAX_CLKS);
        rec(e, ID_CURRENT_VCLK0, T_U16, U_CLOCK_1, m->current_vclk0, MAX_CLKS);
        rec(e, ID_CURRENT_DCLK0, T_U16, U_CLOCK_1, m->current_dclk0, MAX_CLKS);
        scalar(e, ID_CURRENT_UCLK, T_U16, U_CLOCK_1, m->current_uclk);
        /* NUM_PARTITION (38) is not in the class ("GPU metrics no longer always provides
         * num_partition") */
        scalar(e, ID_PCIE_LC_PERF_OTHER_END_RECOVERY, T_U32, U_NONE,
               m->pcie_lc_perf_other_end_recovery);
        xcc_arrays(e, &m->gpu_xcc);
        if (l >= SIM_LAYOUT_7_1) {
                rec(e, ID_TEMPERATURE_HBM, T_U16, U_TEMP_1, m->temperature_hbms, NUM_HBM);
                rec(e, ID_TEMPERATURE_AID, T_U16, U_TEMP_1, m->temperature_aids, NUM_AID);
                rec(e, ID_TEMPERATURE_XCD, T_U16, U_TEMP_1, m->temperature_xcds, NUM_XCD);
        }
}

/* struct smu_v13_0_6_partition_metrics (§3) */
static void write_xcp_v1_1(struct enc *e, const struct sim_metrics *m, const uint64_t gfxclk[8],
                           const struct sim_xcp_stats *x, enum sim_metrics_layout l) {
        skip_header(e);

        rec(e, ID_CURRENT_GFXCLK, T_U16, U_CLOCK_1, gfxclk, MAX_XCC);
        rec(e, ID_CURRENT_SOCCLK, T_U16, U_CLOCK_1, m->current_socclk, MAX_CLKS);
        rec(e, ID_CURRENT_VCLK0, T_U16, U_CLOCK_1, m->current_vclk0, MAX_CLKS);
        rec(e, ID_CURRENT_DCLK0, T_U16, U_CLOCK_1, m->current_dclk0, MAX_CLKS);
        scalar(e, ID_CURRENT_UCLK, T_U16, U_CLOCK_1, m->current_uclk);
        xcc_arrays(e, x);
        if (l >= SIM_LAYOUT_7_0) {
                /* "Add acc counter & fw timestamp to xcp metrics" (Linux 7.0): u64 here */
                scalar(e, ID_ACCUMULATION_COUNTER, T_U64, U_NONE, m->accumulation_counter);
                scalar(e, ID_FIRMWARE_TIMESTAMP, T_U64, U_TIME_2, m->firmware_timestamp);
        }
}

static bool layout_valid(enum sim_metrics_layout l) {
        return l > SIM_LAYOUT_UNSET && l < _SIM_LAYOUT_MAX;
}

size_t sim_metrics_v19_size(enum sim_metrics_layout layout) {
        struct sim_metrics m;
        struct enc e = { .buf = NULL, .size = 0 };

        if (!layout_valid(layout))
                return 0;
        sim_metrics_init(&m);
        write_v1_9(&e, &m, layout);
        return e.off;
}

size_t sim_xcp_metrics_v11_size(enum sim_metrics_layout layout) {
        struct sim_metrics m;
        struct enc e = { .buf = NULL, .size = 0 };

        if (!layout_valid(layout))
                return 0;
        sim_metrics_init(&m);
        write_xcp_v1_1(&e, &m, m.current_gfxclk, &m.gpu_xcc, layout);
        return e.off;
}

int sim_metrics_v19_emit(const struct sim_metrics *m, enum sim_metrics_layout layout, void *buf,
                         size_t size) {
        struct enc e = { .buf = buf, .size = size };

        if (!layout_valid(layout))
                return -EINVAL;
        write_v1_9(&e, m, layout);
        return finish(&e, 9);
}

int sim_xcp_metrics_v11_emit(const struct sim_metrics *m, const uint64_t gfxclk[8],
                             const struct sim_xcp_stats *x, enum sim_metrics_layout layout,
                             void *buf, size_t size) {
        struct enc e = { .buf = buf, .size = size };

        if (!layout_valid(layout))
                return -EINVAL;
        write_xcp_v1_1(&e, m, gfxclk, x, layout);
        return finish(&e, 1);
}
