/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the gpu_metrics table, format 1, content revisions 3..8 (spec amdgpu-sysfs.md
 * §5.4).
 *
 * Each layout family is one function that walks the fields in the spec's order with the C
 * types the spec gives. The writer aligns every field to its own width (natural alignment, no
 * packing, as gcc lays out the driver's structs on x86-64) and every struct to 8 bytes, so the
 * offsets come out of the field order alone; the offsets the spec states explicitly are
 * asserted on the way. The whole table is first filled with 0xFF as the driver does, so padding
 * and holes stay all-ones, and SIM_METRICS_NA is written as all-ones of the field's width.
 */

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "metrics.h"

#define HBM_INSTANCES 4
#define XGMI_LINKS 8
#define GFX_CLKS 8
#define CLKS 4
#define VCNS 4
#define JPEG_ENGINES 32
#define JPEG_ENGINES_V1 40
#define XCCS 8
#define XCPS 8

struct writer {
        uint8_t *buf;
        size_t off;
        size_t size;
};

/* Skips to the next multiple of @align; the skipped bytes keep the 0xFF fill. */
static void align_to(struct writer *w, size_t align) {
        w->off = (w->off + align - 1) / align * align;
        assert(w->off <= w->size);
}

/* An explicit padding member of @width bytes (the driver leaves it all-ones). */
static void pad(struct writer *w, size_t width) {
        align_to(w, width);
        w->off += width;
        assert(w->off <= w->size);
}

static void put(struct writer *w, size_t width, uint64_t v) {
        uint64_t all_ones = width == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;

        align_to(w, width);
        assert(w->off + width <= w->size);

        if (v == SIM_METRICS_NA)
                v = all_ones;
        /* A value wider than its field is a bug of the caller; it is written truncated. */
        assert(v <= all_ones);

        switch (width) {
        case 2: {
                uint16_t le = htole16((uint16_t) v);

                memcpy(w->buf + w->off, &le, sizeof(le));
                break;
        }
        case 4: {
                uint32_t le = htole32((uint32_t) v);

                memcpy(w->buf + w->off, &le, sizeof(le));
                break;
        }
        case 8: {
                uint64_t le = htole64(v);

                memcpy(w->buf + w->off, &le, sizeof(le));
                break;
        }
        default:
                assert(!"bad field width");
        }
        w->off += width;
}

static void put16(struct writer *w, uint64_t v) {
        put(w, 2, v);
}

static void put32(struct writer *w, uint64_t v) {
        put(w, 4, v);
}

/* A counter the table carries as u32: the driver's u32 wraps, so the value modulo 2^32. */
static void put32_counter(struct writer *w, uint64_t v) {
        put(w, 4, v == SIM_METRICS_NA ? v : v & UINT32_MAX);
}

static void put64(struct writer *w, uint64_t v) {
        put(w, 8, v);
}

static void put16_array(struct writer *w, const uint64_t *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                put16(w, v[i]);
}

static void put32_array(struct writer *w, const uint64_t *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                put32(w, v[i]);
}

static void put64_array(struct writer *w, const uint64_t *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                put64(w, v[i]);
}

/* Where the spec names an offset, the next field (of @width bytes) must land there. */
static void at(const struct writer *w, size_t width, size_t off) {
        assert((w->off + width - 1) / width * width == off);
        (void) w;
        (void) width;
        (void) off;
}

/* struct metrics_table_header */
static void put_header(struct writer *w, unsigned rev) {
        put16(w, w->size);                /* structure_size */
        w->buf[w->off++] = 1;             /* format_revision */
        w->buf[w->off++] = (uint8_t) rev; /* content_revision */
}

/* The struct's tail padding: its size is a multiple of its largest member, u64. */
static void end_struct(struct writer *w) {
        align_to(w, 8);
}

/* gpu_metrics_v1_3 */
static void write_v1_3(struct writer *w, const struct sim_metrics *m) {
        put_header(w, 3);

        put16(w, m->temperature_edge);
        put16(w, m->temperature_hotspot);
        put16(w, m->temperature_mem);
        put16(w, m->temperature_vrgfx);
        put16(w, m->temperature_vrsoc);
        put16(w, m->temperature_vrmem);

        put16(w, m->average_gfx_activity);
        put16(w, m->average_umc_activity);
        put16(w, m->average_mm_activity);

        put16(w, m->average_socket_power);
        at(w, 8, 24);
        put64(w, m->energy_accumulator);

        put64(w, m->system_clock_counter);

        put16(w, m->average_gfxclk_frequency);
        put16(w, m->average_socclk_frequency);
        put16(w, m->average_uclk_frequency);
        put16(w, m->average_vclk0_frequency);
        put16(w, m->average_dclk0_frequency);
        put16(w, m->average_vclk1_frequency);
        put16(w, m->average_dclk1_frequency);

        /* v1.3 has one current clock of each kind: the first instance */
        put16(w, m->current_gfxclk[0]);
        put16(w, m->current_socclk[0]);
        put16(w, m->current_uclk);
        put16(w, m->current_vclk0[0]);
        put16(w, m->current_dclk0[0]);
        put16(w, m->current_vclk1);
        put16(w, m->current_dclk1);

        put32(w, m->throttle_status);

        put16(w, m->current_fan_speed);

        put16(w, m->pcie_link_width);
        put16(w, m->pcie_link_speed);

        pad(w, 2); /* padding */

        put32_counter(w, m->gfx_activity_acc);
        put32_counter(w, m->mem_activity_acc);

        put16_array(w, m->temperature_hbm, HBM_INSTANCES);

        at(w, 8, 96);
        put64(w, m->firmware_timestamp);

        put16(w, m->voltage_soc);
        put16(w, m->voltage_gfx);
        put16(w, m->voltage_mem);

        pad(w, 2); /* padding1 */

        at(w, 8, 112);
        put64(w, m->indep_throttle_status);

        end_struct(w);
}

/* gpu_metrics_v1_4 and gpu_metrics_v1_5 (v1.5 inserts jpeg_activity and the PCIe NAK counts) */
static void write_v1_4(struct writer *w, const struct sim_metrics *m, unsigned rev) {
        bool v1_5 = rev >= 5;

        put_header(w, rev);

        put16(w, m->temperature_hotspot);
        put16(w, m->temperature_mem);
        put16(w, m->temperature_vrsoc);

        put16(w, m->curr_socket_power);

        put16(w, m->average_gfx_activity);
        put16(w, m->average_umc_activity);
        put16_array(w, m->vcn_activity, VCNS);
        if (v1_5)
                put16_array(w, m->jpeg_activity, JPEG_ENGINES);

        at(w, 8, v1_5 ? 88 : 24);
        put64(w, m->energy_accumulator);

        put64(w, m->system_clock_counter);

        put32(w, m->throttle_status);

        put32(w, m->gfxclk_lock_status);

        put16(w, m->pcie_link_width);
        put16(w, m->pcie_link_speed);
        put16(w, m->xgmi_link_width);
        put16(w, m->xgmi_link_speed);

        put32_counter(w, m->gfx_activity_acc);
        put32_counter(w, m->mem_activity_acc);

        put64(w, m->pcie_bandwidth_acc);
        put64(w, m->pcie_bandwidth_inst);
        put64(w, m->pcie_l0_to_recov_count_acc);
        put64(w, m->pcie_replay_count_acc);
        put64(w, m->pcie_replay_rover_count_acc);
        if (v1_5) {
                put32(w, m->pcie_nak_sent_count_acc);
                put32(w, m->pcie_nak_rcvd_count_acc);
        }

        put64_array(w, m->xgmi_read_data_acc, XGMI_LINKS);
        put64_array(w, m->xgmi_write_data_acc, XGMI_LINKS);

        at(w, 8, v1_5 ? 304 : 232);
        put64(w, m->firmware_timestamp);

        at(w, 2, v1_5 ? 312 : 240);
        put16_array(w, m->current_gfxclk, GFX_CLKS);
        put16_array(w, m->current_socclk, CLKS);
        put16_array(w, m->current_vclk0, CLKS);
        put16_array(w, m->current_dclk0, CLKS);
        put16(w, m->current_uclk);

        pad(w, 2); /* padding */

        end_struct(w);
}

/*
 * One xcp_stats entry: amdgpu_xcp_metrics (v1.6), amdgpu_xcp_metrics_v1_1 (v1.7) or
 * amdgpu_xcp_metrics_v1_2 (v1.8), selected by the table's content revision.
 */
static void write_xcp_stats(struct writer *w, const struct sim_xcp_stats *x, unsigned rev) {
        size_t start;

        align_to(w, 8);
        start = w->off;

        put32_array(w, x->gfx_busy_inst, XCCS);
        put16_array(w, x->jpeg_busy, rev >= 8 ? JPEG_ENGINES_V1 : JPEG_ENGINES);
        put16_array(w, x->vcn_busy, VCNS);

        at(w, 8, start + (rev >= 8 ? 120 : 104));
        put64_array(w, x->gfx_busy_acc, XCCS);

        if (rev == 7) {
                at(w, 8, start + 168);
                put64_array(w, x->gfx_below_host_limit_acc, XCCS);
        } else if (rev >= 8) {
                put64_array(w, x->gfx_below_host_limit_ppt_acc, XCCS);
                put64_array(w, x->gfx_below_host_limit_thm_acc, XCCS);
                put64_array(w, x->gfx_low_utilization_acc, XCCS);
                put64_array(w, x->gfx_below_host_limit_total_acc, XCCS);
        }

        end_struct(w);
        at(w, 1, start + (rev >= 8 ? 440 : rev == 7 ? 232 : 168)); /* the entry's size */
        (void) start;
}

/*
 * gpu_metrics_v1_6, v1_7 and v1_8 (v1.7 inserts mem_max_bandwidth and xgmi_link_status and
 * grows xcp_stats; v1.8 grows xcp_stats again)
 */
static void write_v1_6(struct writer *w, const struct sim_metrics *m, unsigned rev) {
        bool v1_7 = rev >= 7;

        put_header(w, rev);

        put16(w, m->temperature_hotspot);
        put16(w, m->temperature_mem);
        put16(w, m->temperature_vrsoc);

        put16(w, m->curr_socket_power);

        put16(w, m->average_gfx_activity);
        put16(w, m->average_umc_activity);

        if (v1_7) {
                at(w, 8, 16);
                put64(w, m->mem_max_bandwidth);
        }

        at(w, 8, v1_7 ? 24 : 16);
        put64(w, m->energy_accumulator);

        put64(w, m->system_clock_counter);

        at(w, 4, v1_7 ? 40 : 32);
        put32_counter(w, m->accumulation_counter);
        put32_counter(w, m->prochot_residency_acc);
        put32_counter(w, m->ppt_residency_acc);
        put32_counter(w, m->socket_thm_residency_acc);
        put32_counter(w, m->vr_thm_residency_acc);
        put32_counter(w, m->hbm_thm_residency_acc);

        put32(w, m->gfxclk_lock_status);

        put16(w, m->pcie_link_width);
        put16(w, m->pcie_link_speed);
        put16(w, m->xgmi_link_width);
        put16(w, m->xgmi_link_speed);

        put32_counter(w, m->gfx_activity_acc);
        put32_counter(w, m->mem_activity_acc);

        put64(w, m->pcie_bandwidth_acc);
        put64(w, m->pcie_bandwidth_inst);
        put64(w, m->pcie_l0_to_recov_count_acc);
        put64(w, m->pcie_replay_count_acc);
        put64(w, m->pcie_replay_rover_count_acc);
        put32(w, m->pcie_nak_sent_count_acc);
        put32(w, m->pcie_nak_rcvd_count_acc);

        put64_array(w, m->xgmi_read_data_acc, XGMI_LINKS);
        put64_array(w, m->xgmi_write_data_acc, XGMI_LINKS);

        if (v1_7) {
                at(w, 2, 264);
                put16_array(w, m->xgmi_link_status, XGMI_LINKS);
                pad(w, 2); /* padding */
        }

        at(w, 8, v1_7 ? 288 : 256);
        put64(w, m->firmware_timestamp);

        at(w, 2, v1_7 ? 296 : 264);
        put16_array(w, m->current_gfxclk, GFX_CLKS);
        put16_array(w, m->current_socclk, CLKS);
        put16_array(w, m->current_vclk0, CLKS);
        put16_array(w, m->current_dclk0, CLKS);
        put16(w, m->current_uclk);

        at(w, 2, v1_7 ? 338 : 306);
        put16(w, m->num_partition);

        align_to(w, 8);
        at(w, 8, v1_7 ? 344 : 312);
        for (size_t i = 0; i < XCPS; i++)
                write_xcp_stats(w, &m->xcp_stats[i], rev);

        at(w, 4, rev >= 8 ? 3864 : v1_7 ? 2200 : 1656);
        put32(w, m->pcie_lc_perf_other_end_recovery);

        end_struct(w);
}

void sim_metrics_init(struct sim_metrics *m) {
        /* Every member is a uint64_t, and SIM_METRICS_NA is all-ones of 64 bits. */
        memset(m, 0xff, sizeof(*m));
}

size_t sim_metrics_size(unsigned rev) {
        switch (rev) {
        case 3:
                return 120;
        case 4:
                return 288;
        case 5:
                return 360;
        case 6:
                return 1664;
        case 7:
                return 2208;
        case 8:
                return 3872;
        default:
                return 0;
        }
}

int sim_metrics_emit(const struct sim_metrics *m, unsigned rev, void *buf, size_t size) {
        size_t n = sim_metrics_size(rev);
        struct writer w = { .buf = buf, .off = 0, .size = n };

        if (n == 0)
                return -EINVAL;
        if (size < n)
                return -ENOSPC;

        /* The driver fills the table with 0xFF before it writes the fields. */
        memset(buf, 0xff, n);

        switch (rev) {
        case 3:
                write_v1_3(&w, m);
                break;
        case 4:
        case 5:
                write_v1_4(&w, m, rev);
                break;
        default:
                write_v1_6(&w, m, rev);
                break;
        }

        assert(w.off == n);
        return (int) n;
}
