/* SPDX-License-Identifier: MIT */
/*
 * A small writer of attribute-encoded tables (gpu_metrics 1.9, xcp_metrics 1.1), for the tests
 * that build unusual or damaged tables in C. Written from gpu-metrics-v1.9.md only (§1): a
 * packed header (u16 structure_size, u8 format, u8 content, int attr_count), then records of
 * an 8-byte LE encoding (unit << 24 | type << 20 | id << 10 | instances) followed by the
 * values. Nothing here comes from lib/ (ARCHITECTURE §7).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
        MW_U8,
        MW_S8,
        MW_U16,
        MW_S16,
        MW_U32,
        MW_S32,
        MW_U64,
        MW_S64
};
enum {
        MW_NONE = 0,
        MW_CLOCK_MHZ = 1,
        MW_TEMP_C = 2,
        MW_POWER_W = 3,
        MW_TIME_NS = 4,
        MW_TIME_10NS = 5,
        MW_PERCENT = 10,
};

/* attribute ids of gpu-metrics-v1.9.md §2 that the tests use */
enum {
        MW_ID_TEMPERATURE_HOTSPOT = 0,
        MW_ID_TEMPERATURE_MEM = 1,
        MW_ID_ENERGY_ACCUMULATOR = 7,
        MW_ID_SYSTEM_CLOCK_COUNTER = 8,
        MW_ID_ACCUMULATION_COUNTER = 9,
        MW_ID_PROCHOT_RESIDENCY_ACC = 10,
        MW_ID_PPT_RESIDENCY_ACC = 11,
        MW_ID_SOCKET_THM_RESIDENCY_ACC = 12,
        MW_ID_VR_THM_RESIDENCY_ACC = 13,
        MW_ID_HBM_THM_RESIDENCY_ACC = 14,
        MW_ID_FIRMWARE_TIMESTAMP = 32,
        MW_ID_CURRENT_GFXCLK = 33,
        MW_ID_GFX_BELOW_HOST_LIMIT_PPT_ACC = 44,
        MW_ID_GFX_BELOW_HOST_LIMIT_THM_ACC = 45,
        MW_ID_GFX_LOW_UTILIZATION_ACC = 46,
        MW_ID_GFX_BELOW_HOST_LIMIT_TOTAL_ACC = 47,
};

#define MW_ALL_ONES UINT64_MAX /* a value the writer stores as all-0xFF bytes */

struct mwriter {
        uint8_t buf[1 << 17];
        size_t len;
        int32_t count;
};

static inline size_t mw_type_size(unsigned type) {
        static const uint8_t size[8] = { 1, 1, 2, 2, 4, 4, 8, 8 };

        return type < 8 ? size[type] : 0;
}

static inline uint64_t mw_encoding(unsigned unit, unsigned type, unsigned id, unsigned inst) {
        return (uint64_t) unit << 24 | (uint64_t) type << 20 | (uint64_t) id << 10 | inst;
}

static inline void mw_le(uint8_t *p, uint64_t v, size_t n) {
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

static inline void mw_init(struct mwriter *w) {
        memset(w->buf, 0, sizeof(w->buf));
        w->len = 8;
        w->count = 0;
}

/* One record; @vals holds @inst values (MW_ALL_ONES: all-0xFF), or NULL for all-0xFF. */
static inline void mw_attr(struct mwriter *w, unsigned id, unsigned type, unsigned unit,
                           unsigned inst, const uint64_t *vals) {
        size_t width = mw_type_size(type);

        mw_le(w->buf + w->len, mw_encoding(unit, type, id, inst), 8);
        w->len += 8;
        for (unsigned i = 0; i < inst; i++) {
                uint64_t v = vals ? vals[i] : MW_ALL_ONES;

                if (v == MW_ALL_ONES)
                        memset(w->buf + w->len, 0xff, width);
                else
                        mw_le(w->buf + w->len, v, width);
                w->len += width;
        }
        w->count++;
}

static inline void mw_scalar(struct mwriter *w, unsigned id, unsigned type, unsigned unit,
                             uint64_t v) {
        mw_attr(w, id, type, unit, 1, &v);
}

/* Writes the header (structure_size = the bytes written) and returns the table's length. */
static inline size_t mw_finish(struct mwriter *w, uint8_t content_revision) {
        mw_le(w->buf, w->len, 2);
        w->buf[2] = 1;
        w->buf[3] = content_revision;
        mw_le(w->buf + 4, (uint32_t) w->count, 4);
        return w->len;
}
