/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: RAS of amdgpu (spec health-and-control.md §1, §2): the files of <dev>/ras/, the
 * bad-page table, and the debugfs directory of the GPU's primary DRM minor with the CPER ring.
 *
 * <dev>/ras/ (bare metal and guests; amdgpu's RAS context):
 *   features      "feature mask: 0x%x\n": bit b = block b has RAS, bits 31:29 the socket id
 *   version       "table version: 0x%x\n": the RAS EEPROM table's (0x21000, v2.1: SYNTHETIC
 *                 for every product)
 *   schema        "schema: 0x%x\n": amdgpu_get_ras_schema() parses as
 *                 poison ? POISON : (0 | SINGLE_CORRECTABLE | MULTI_UNCORRECTABLE | PARITY),
 *                 so a GPU with poison mode (every MI300/MI350) shows 0x8 only
 *   event_state   "current seqno: %llu\n" and one line each of "Fatal Error", "Poison
 *                 Creation", "Poison Consumption": ": count:%llu, last_seqno:%llu\n"
 *   aca_<block>   (ACA: the kernel setting ras_aca, guests never) "ue: N\nce: N\nde: N\n"
 *   <block>_err_count (no ACA) "ue: N\nce: N\n", umc adds "de: N\n"
 *   gpu_vram_bad_pages (bad_page_threshold != 0, not on an APU) 28-byte records
 *                 "0x%08x : 0x%08x : %1s\n", read as amdgpu_ras_sysfs_badpages_read() does
 * A GPU in reset (the control socket's reset, --in-reset) answers the count files with
 * "Query currently inaccessible\n" (amdgpu_ras_intr_triggered()).
 *
 * debugfs (kernel/debug, 0700 root as debugfs is mounted): dri/<BDF>/ (newer kernels name the
 * device's directory by its unique name) with dri/<primary minor> a link to it:
 *   amdgpu_ring_cper          (ACA, or guests) the legacy ring file: u32 rptr, u32 wptr, u32
 *                             driver wptr (dword indices), then from offset 12 the dwords from
 *                             rptr towards wptr; offset and size must be multiples of 4
 *                             (EINVAL); st_size is the ring's size + 12
 *   ras/bad_page_cnt_threshold the threshold, "%u\n"
 *
 * Records in the ring are whole CPER records (amdgpu_cper.c): a 128-byte header, 72-byte
 * section descriptors, and a 176-byte crash-dump section (fatal) or a 272-byte non-standard
 * error section (runtime, bad-page threshold). When a write does not fit, rptr moves to the
 * header of the oldest record left whole: the ring never holds a piece of a record.
 */
#include <inttypes.h>

#include "tree.h"

const char *const sim_ras_block_names[_SIM_RAS_BLOCK_MAX] = {
        "umc", "sdma", "gfx", "mmhub", "athub", "pcie_bif", "hdp", "xgmi_wafl", "df",
        "smn", "sem",  "mp0", "mp1",   "fuse",  "mca",      "vcn", "jpeg",
};
const char *const sim_ras_err_names[_SIM_RAS_ERR_MAX] = { "ue", "ce", "de" };
const char *const sim_cper_kind_names[_SIM_CPER_KIND_MAX] = { "fatal", "corrected", "uncorrected",
                                                              "bad-page-threshold" };

#define RAS_TABLE_VERSION 0x21000
#define RAS_SCHEMA_POISON 0x8
#define BADPAGE_RECORD 28 /* sizeof("0xabcdabcd : 0x12345678 : R\n") - 1 */
#define GPU_PAGE_SIZE 0x1000
#define SOCKET_SHIFT 29

enum {
        EV_FATAL,
        EV_POISON_CREATION,
        EV_POISON_CONSUMPTION
};

static bool guest(const struct sim_gpu *g) {
        return g->role == SIM_ROLE_GUEST_1VF || g->role == SIM_ROLE_GUEST_MULTIVF;
}

uint32_t sim_ras_blocks(const struct sim_gpu *g) {
        uint32_t mask = g->m->kernel.ras_blocks;

        if (!g->m->kernel.ras_enable)
                return 0; /* amdgpu.ras_enable=0: ras_enabled 0 */

        if (!mask) {
                if (g->prod->apu) /* connected_to_cpu || is_app_apu: GFX, SDMA, MMHUB */
                        mask = 1u << SIM_RAS_GFX | 1u << SIM_RAS_SDMA | 1u << SIM_RAS_MMHUB;
                else
                        mask = 1u << SIM_RAS_UMC | 1u << SIM_RAS_GFX | 1u << SIM_RAS_SDMA |
                               1u << SIM_RAS_MMHUB | 1u << SIM_RAS_XGMI_WAFL | 1u << SIM_RAS_VCN |
                               1u << SIM_RAS_JPEG;
        }
        if (!g->hive_id) /* xgmi.num_physical_nodes == 0 */
                mask &= ~(1u << SIM_RAS_XGMI_WAFL);
        if (guest(g)) /* the host's telemetry blocks (UNVERIFIED which) */
                mask &= 1u << SIM_RAS_UMC | 1u << SIM_RAS_SDMA | 1u << SIM_RAS_GFX;
        return mask;
}

bool sim_ras_aca(const struct sim_gpu *g) {
        return g->m->kernel.ras_aca && !guest(g);
}

static bool has_bad_pages(const struct sim_gpu *g) {
        return g->m->kernel.bad_page_threshold != 0 && !g->prod->apu && g->m->kernel.ras_enable;
}

static bool has_cper(const struct sim_gpu *g) {
        return sim_ras_aca(g) || guest(g);
}

static unsigned socket_id(const struct sim_gpu *g) {
        return g->index & 7;
}

/* ---------------------------------------------------------------------------------------- */
/* Presets */

void sim_ras_preset_done(struct sim_ras_preset *p) {
        free(p->pages);
        free(p->cper);
        *p = (struct sim_ras_preset){ 0 };
}

int sim_ras_preset_copy(const struct sim_ras_preset *src, struct sim_ras_preset *dst) {
        *dst = *src;
        dst->pages = NULL;
        dst->cper = NULL;
        if (src->n_pages && !(dst->pages = malloc(src->n_pages * sizeof(*dst->pages))))
                return -ENOMEM;
        if (src->n_cper && !(dst->cper = malloc(src->n_cper))) {
                free(dst->pages);
                dst->pages = NULL;
                return -ENOMEM;
        }
        if (src->n_pages)
                memcpy(dst->pages, src->pages, src->n_pages * sizeof(*dst->pages));
        if (src->n_cper)
                memcpy(dst->cper, src->cper, src->n_cper);
        return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* CPER records (amd_cper.h layout, packed, little endian) */

#define HDR_LEN 128
#define SEC_DESC_LEN 72
#define FATAL_SEC_LEN 176
#define NONSTD_SEC_LEN 272

#define CPER_HDR_REV_1 0x100
#define CPER_SEC_MINOR_REV_1 0x01
#define CPER_SEC_MAJOR_REV_22 0x22
#define CPER_CTX_TYPE_CRASH 1
#define CPER_SEV_NON_FATAL_UNCORRECTED 0
#define CPER_SEV_FATAL 1
#define CPER_SEV_NON_FATAL_CORRECTED 2

struct guid {
        uint32_t a;
        uint16_t b, c;
        uint8_t d[8];
};

static const struct guid GUID_MCE = {
        0xE8F56FFE, 0x919C, 0x4cc5, { 0xBA, 0x88, 0x65, 0xAB, 0xE1, 0x49, 0x13, 0xBB }
};
static const struct guid GUID_CMC = {
        0x2DCE8BB1, 0xBDD7, 0x450e, { 0xB9, 0xAD, 0x9C, 0xF4, 0xEB, 0xD4, 0xF8, 0x90 }
};
static const struct guid GUID_CRASHDUMP = {
        0x32AC0C78, 0x2623, 0x48F6, { 0xB0, 0xD0, 0x73, 0x65, 0x72, 0x5F, 0xD6, 0xAE }
};
static const struct guid GUID_NONSTD = {
        0x32AC0C78, 0x2623, 0x48F6, { 0x81, 0xA2, 0xAC, 0x69, 0x17, 0x80, 0x55, 0x1D }
};

static void put16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
}

static void put32(uint8_t *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v) {
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

static void put_guid(uint8_t *p, const struct guid *g) {
        put32(p, g->a);
        put16(p + 4, g->b);
        put16(p + 6, g->c);
        memcpy(p + 8, g->d, 8);
}

/* A text field of @size bytes, as snprintf(field, size, ...) leaves it (zero filled). */
_printf_(3, 4) static void put_text(uint8_t *p, size_t size, const char *fmt, ...) {
        char buf[64];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, MIN(size, sizeof(buf)), fmt, ap);
        va_end(ap);
        memcpy(p, buf, strnlen(buf, size));
}

int sim_cper_record(const struct sim_gpu *g, enum sim_cper_kind kind, uint32_t id, time_t now,
                    uint8_t *buf, size_t size) {
        bool fatal = kind == SIM_CPER_FATAL;
        uint32_t sec_len = fatal ? FATAL_SEC_LEN : NONSTD_SEC_LEN;
        uint32_t len = HDR_LEN + SEC_DESC_LEN + sec_len;
        uint32_t sev = kind == SIM_CPER_CORRECTED     ? CPER_SEV_NON_FATAL_CORRECTED
                       : kind == SIM_CPER_UNCORRECTED ? CPER_SEV_NON_FATAL_UNCORRECTED
                                                      : CPER_SEV_FATAL;
        uint8_t *d = buf + HDR_LEN, *s = buf + HDR_LEN + SEC_DESC_LEN;
        char record_id[16];
        struct tm tm;

        if (size < len)
                return -ENOSPC;
        memset(buf, 0, len);
        gmtime_r(&now, &tm);

        /* struct cper_hdr */
        memcpy(buf, "CPER", 4);
        put16(buf + 4, CPER_HDR_REV_1);
        put32(buf + 6, 0xFFFFFFFF);
        put16(buf + 10, 1); /* sec_cnt */
        put32(buf + 12, sev);
        put32(buf + 16, 0x3); /* valid bits: platform_id, timestamp */
        put32(buf + 20, len);
        buf[24] = (uint8_t) tm.tm_sec;
        buf[25] = (uint8_t) tm.tm_min;
        buf[26] = (uint8_t) tm.tm_hour;
        buf[27] = 0; /* flag */
        buf[28] = (uint8_t) tm.tm_mday;
        buf[29] = (uint8_t) (tm.tm_mon + 1);
        buf[30] = (uint8_t) ((1900 + tm.tm_year) % 100);
        buf[31] = (uint8_t) ((1900 + tm.tm_year) / 100);
        put_text(buf + 32, 16, "0x%04X:0x%04X", g->func->vendor, g->func->device);
        /* 48: partition_id, zero */
        put_text(buf + 64, 16, "%s", "amdgpu");
        put_guid(buf + 80, kind == SIM_CPER_CORRECTED ? &GUID_CMC : &GUID_MCE);
        /* record_id: snprintf(9) then memcpy(8) */
        memset(record_id, 0, sizeof(record_id));
        snprintf(record_id, 9, "%u:%X", socket_id(g), id);
        memcpy(buf + 96, record_id, 8);
        /* 104: flags, 108: persistence_info, 116: reserved */

        /* struct cper_sec_desc */
        put32(d, HDR_LEN + SEC_DESC_LEN); /* sec_offset */
        put32(d + 4, sec_len);
        d[8] = CPER_SEC_MINOR_REV_1;
        d[9] = CPER_SEC_MAJOR_REV_22;
        d[10] = 0x2; /* valid: fru_text */
        put32(d + 12, 0x1 /* primary */ | (kind == SIM_CPER_BAD_PAGE_THRESHOLD ? 0x8 : 0) |
                              (kind == SIM_CPER_UNCORRECTED ? 0x10 /* latent_err */ : 0));
        put_guid(d + 16, fatal ? &GUID_CRASHDUMP : &GUID_NONSTD);
        /* 32: fru_id */
        put32(d + 48, sev);
        put_text(d + 52, 20, "OAM%u", socket_id(g));

        if (fatal) {
                /* struct cper_sec_crashdump_fatal: hdr (128 bytes, zero), then the body */
                uint8_t *b = s + 128;

                put16(b, CPER_CTX_TYPE_CRASH);
                put16(b + 2, 32); /* sizeof(struct cper_sec_crashdump_reg_data) */
                /* SYNTHETIC registers of an ACA UE bank: STATUS, ADDR, IPID, SYND */
                put32(b + 16, 0x00000137);
                put32(b + 20, 0xBA000000);
                put32(b + 24, 0x1000u * (id & 0xff));
                put32(b + 28, 0);
                put32(b + 32, 0x00000000);
                put32(b + 36, 0x00960000);
                return (int) len;
        }
        /* struct cper_sec_nonstd_err: hdr (valid: err_info_cnt 1, err_context_cnt 1) */
        put64(s, 1u << 2 | 1u << 8);
        /* info at 64: error_type, valid bits, ms_chk bits */
        put_guid(s + 64, &GUID_NONSTD);
        if (kind == SIM_CPER_BAD_PAGE_THRESHOLD) {
                put64(s + 80, 0x1);                      /* ms_chk */
                put64(s + 88, 1u | 1u << 16 | 1u << 18); /* err_type_valid, err_type 1, pcc */
        } else
                put64(s + 88, 0x1); /* err_type_valid */
        /* ctx at 128: reg_ctx_type, reg_arr_size, msr_addr, mm_reg_addr, reg_dump[32] */
        put16(s + 128, CPER_CTX_TYPE_CRASH);
        put16(s + 130, 128);
        {
                uint8_t *r = s + 144;

                if (kind == SIM_CPER_BAD_PAGE_THRESHOLD) {
                        /* the kernel's hardcoded dump */
                        put32(r + 0 * 4, 0x1);
                        put32(r + 2 * 4, 0x137);
                        put32(r + 3 * 4, 0xB0000000);
                        put32(r + 8 * 4, 0x2);
                        put32(r + 9 * 4, 0x1ff);
                        put32(r + 11 * 4, 0x96);
                } else {
                        /* SYNTHETIC: CTL, STATUS (CE or deferred), ADDR, IPID */
                        put32(r + 0 * 4, 0x1);
                        put32(r + 2 * 4, 0x137);
                        put32(r + 3 * 4, kind == SIM_CPER_CORRECTED ? 0x9C000000 : 0xBC000000);
                        put32(r + 4 * 4, 0x1000u * (id & 0xff));
                        put32(r + 11 * 4, 0x96);
                }
        }
        return (int) len;
}

/* ---------------------------------------------------------------------------------------- */
/* The CPER ring */

static uint32_t ring_dw(const struct sim_ras *r) {
        return r->ring_bytes / 4;
}

static uint32_t ring_used_dw(const struct sim_ras *r) {
        return (r->wptr + ring_dw(r) - r->rptr) % ring_dw(r);
}

static void ring_reset(struct sim_ras *r) {
        r->rptr = r->wptr = 0;
        r->n_recs = 0;
        if (r->ring)
                memset(r->ring, 0, r->ring_bytes);
}

/* amdgpu_cper_ring_write(): the record at wptr; when it reaches rptr, the oldest records go. */
static int ring_write(struct sim_ras *r, const uint8_t *rec, uint32_t len) {
        uint32_t n = ring_dw(r), len_dw = len / 4, used;

        if (!r->ring || len % 4 || len >= r->ring_bytes - 4)
                return -EMSGSIZE;
        if (r->n_recs == r->cap_recs) {
                size_t cap = r->cap_recs ? r->cap_recs * 2 : 64;
                struct sim_ras_rec *v = realloc(r->recs, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                r->recs = v;
                r->cap_recs = cap;
        }
        used = ring_used_dw(r);
        for (uint32_t i = 0; i < len; i++)
                r->ring[((size_t) r->wptr * 4 + i) % r->ring_bytes] = rec[i];
        r->recs[r->n_recs++] = (struct sim_ras_rec){ r->wptr, len_dw };
        r->wptr = (r->wptr + len_dw) % n;
        used += len_dw;
        /* rptr == wptr is an empty ring: a full one moves rptr on, record by record */
        while (used >= n && r->n_recs > 1) {
                used -= r->recs[0].len_dw;
                memmove(r->recs, r->recs + 1, (r->n_recs - 1) * sizeof(*r->recs));
                r->n_recs--;
        }
        r->rptr = r->n_recs ? r->recs[0].start_dw : r->wptr;
        return 0;
}

static int append_cper(struct sim_gpu *g, enum sim_cper_kind kind) {
        uint8_t rec[HDR_LEN + SEC_DESC_LEN + NONSTD_SEC_LEN];
        int len;

        if (!g->ras.ring)
                return -EOPNOTSUPP;
        len = sim_cper_record(g, kind, ++g->ras.cper_id, time(NULL), rec, sizeof(rec));
        if (len < 0)
                return len;
        return ring_write(&g->ras, rec, (uint32_t) len);
}

/* ---------------------------------------------------------------------------------------- */
/* Files */

static int count_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        int b = (int) sim_node_arg(n);
        const uint64_t *v = g->ras.counts[b];

        if (g->in_reset)
                return sim_emit(buf, "Query currently inaccessible\n");
        if (sim_ras_aca(g) || b == SIM_RAS_UMC)
                return sim_emit(buf, "ue: %" PRIu64 "\nce: %" PRIu64 "\nde: %" PRIu64 "\n",
                                v[SIM_RAS_UE], v[SIM_RAS_CE], v[SIM_RAS_DE]);
        return sim_emit(buf, "ue: %" PRIu64 "\nce: %" PRIu64 "\n", v[SIM_RAS_UE], v[SIM_RAS_CE]);
}

static const struct sim_attr_ops count_ops = { .show = count_show };

enum {
        RAS_FEATURES,
        RAS_VERSION,
        RAS_SCHEMA,
        RAS_EVENT_STATE,
        RAS_THRESHOLD
};

static int info_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        const struct sim_ras *r = &g->ras;

        switch ((int) sim_node_arg(n)) {
        case RAS_FEATURES:
                return sim_emit(buf, "feature mask: 0x%x\n",
                                sim_ras_blocks(g) | socket_id(g) << SOCKET_SHIFT);
        case RAS_VERSION:
                return sim_emit(buf, "table version: 0x%x\n", RAS_TABLE_VERSION);
        case RAS_SCHEMA:
                return sim_emit(buf, "schema: 0x%x\n", RAS_SCHEMA_POISON);
        case RAS_EVENT_STATE:
                return sim_emit(buf,
                                "current seqno: %" PRIu64 "\n"
                                "Fatal Error: count:%" PRIu64 ", last_seqno:%" PRIu64 "\n"
                                "Poison Creation: count:%" PRIu64 ", last_seqno:%" PRIu64 "\n"
                                "Poison Consumption: count:%" PRIu64 ", last_seqno:%" PRIu64 "\n",
                                r->seqno, r->ev_count[EV_FATAL], r->ev_last[EV_FATAL],
                                r->ev_count[EV_POISON_CREATION], r->ev_last[EV_POISON_CREATION],
                                r->ev_count[EV_POISON_CONSUMPTION],
                                r->ev_last[EV_POISON_CONSUMPTION]);
        default:
                return sim_emit(buf, "%u\n", g->m->kernel.bad_page_threshold);
        }
}

static const struct sim_attr_ops info_ops = { .show = info_show };

static const char *status_str(char s) {
        return s == 'R' ? "R" : s == 'P' ? "P" : "F";
}

/* amdgpu_ras_sysfs_badpages_read(): records start = ceil(off / 28) up to, not including,
 * end = (off + count - 1) / 28; count is at most a page (kernfs). */
static int badpages_read(struct sim_node *n, const struct sim_caller *c, char *buf, size_t size,
                         uint64_t off) {
        struct sim_gpu *g = sim_node_obj(n);
        uint64_t count = MIN(size, (size_t) SIM_PAGE_SIZE), start, end;
        size_t len = 0;

        if (count == 0)
                return 0;
        start = (off + BADPAGE_RECORD - 1) / BADPAGE_RECORD;
        end = (off + count - 1) / BADPAGE_RECORD;
        for (; start < end && start < g->ras.n_pages; start++) {
                const struct sim_bad_page *p = &g->ras.pages[start];
                char rec[BADPAGE_RECORD + 1];

                snprintf(rec, sizeof(rec), "0x%08x : 0x%08x : %1s\n", p->pfn, GPU_PAGE_SIZE,
                         status_str(p->status));
                memcpy(buf + len, rec, BADPAGE_RECORD);
                len += BADPAGE_RECORD;
        }
        return (int) len;
}

static uint64_t badpages_size(struct sim_node *n) {
        return 0; /* a bin attribute of size 0 */
}

static const struct sim_attr_ops badpages_ops = { .read = badpages_read, .size = badpages_size };

/* amdgpu_debugfs_ring_read() of the CPER ring. */
static int ring_read(struct sim_node *n, const struct sim_caller *c, char *buf, size_t size,
                     uint64_t off) {
        struct sim_gpu *g = sim_node_obj(n);
        const struct sim_ras *r = &g->ras;
        uint32_t early[3] = { r->rptr, r->wptr, r->wptr }, avail, start, read_dw, p;
        size_t len = 0, room = MIN(size, (size_t) SIM_PAGE_SIZE);

        if (off & 3 || size & 3)
                return -EINVAL;
        if (!r->ring)
                return 0;
        for (uint64_t i = off / 4; off < 12 && i < 3 && room; i++) {
                memcpy(buf + len, &early[i], 4);
                len += 4;
                room -= 4;
                off += 4;
        }
        avail = ring_used_dw(r);
        start = off > 12 ? (uint32_t) MIN((off - 12) / 4, (uint64_t) UINT32_MAX) : 0;
        if (start >= avail)
                return (int) len;
        read_dw = MIN(avail - start, (uint32_t) (room / 4));
        p = (r->rptr + start) % ring_dw(r);
        for (; read_dw; read_dw--) {
                memcpy(buf + len, r->ring + (size_t) p * 4, 4);
                len += 4;
                p = (p + 1) % ring_dw(r);
        }
        return (int) len;
}

static uint64_t ring_size(struct sim_node *n) {
        struct sim_gpu *g = sim_node_obj(n);

        return (uint64_t) g->ras.ring_bytes + 12;
}

static const struct sim_attr_ops ring_ops = { .read = ring_read, .size = ring_size };

/* ---------------------------------------------------------------------------------------- */

static void build_sysfs(struct sim_gpu *g) {
        struct sim_node *d = sim_gpu_own(g, sim_mkdirf(sim_lookup(g->m->fs, g->func->path), "ras"));
        uint32_t blocks = sim_ras_blocks(g);
        bool aca = sim_ras_aca(g);

        sim_attr(d, "features", 0444, &info_ops, g, RAS_FEATURES);
        sim_attr(d, "version", 0444, &info_ops, g, RAS_VERSION);
        sim_attr(d, "schema", 0444, &info_ops, g, RAS_SCHEMA);
        sim_attr(d, "event_state", 0444, &info_ops, g, RAS_EVENT_STATE);
        for (int b = 0; b < _SIM_RAS_BLOCK_MAX; b++) {
                char name[40];

                if (!(blocks & (1u << b)))
                        continue;
                if (aca)
                        snprintf(name, sizeof(name), "aca_%s", sim_ras_block_names[b]);
                else
                        snprintf(name, sizeof(name), "%s_err_count", sim_ras_block_names[b]);
                sim_attr(d, name, 0444, &count_ops, g, b);
        }
        if (has_bad_pages(g))
                sim_attr(d, "gpu_vram_bad_pages", 0444, &badpages_ops, g, 0);
}

static void build_debugfs(struct sim_gpu *g) {
        struct sim_fs *fs = g->m->fs;
        struct sim_node *root = sim_fs_root(fs), *dbg, *d;
        char path[128], link[64];

        if (g->card[0] < 0)
                return;
        dbg = sim_mkdir(root, "kernel/debug");
        sim_set_mode(dbg, 0700);
        snprintf(path, sizeof(path), "kernel/debug/dri/%s", g->func->bdf);
        d = sim_gpu_own(g, sim_mkdir(root, path));
        snprintf(link, sizeof(link), "kernel/debug/dri/%d", g->card[0]);
        sim_gpu_own(g, sim_link(fs, link, path));
        sim_reset_build_debugfs(g, d);
        if (has_cper(g))
                sim_attr(d, "amdgpu_ring_cper", 0444, &ring_ops, g, 0);
        if (has_bad_pages(g))
                sim_attr(sim_mkdir(d, "ras"), "bad_page_cnt_threshold", 0444, &info_ops, g,
                         RAS_THRESHOLD);
}

static void event(struct sim_ras *r, int ev) {
        r->ev_count[ev]++;
        r->ev_last[ev] = ++r->seqno;
}

void sim_ras_attach(struct sim_gpu *g) {
        struct sim_ras *r = &g->ras;

        /* gim keeps RAS; amdgpu.ras_enable=0: no RAS context, so no ras/ and no debugfs */
        if (g->role == SIM_ROLE_HOST_PF || !g->m->kernel.ras_enable)
                return;
        if (!r->ring && has_cper(g)) {
                r->ring_bytes = g->m->kernel.cper_ring_bytes;
                r->ring = calloc(1, r->ring_bytes);
        }
        /* counts and the ring live in the driver: a load starts them anew */
        memset(r->counts, 0, sizeof(r->counts));
        r->seqno = 0;
        memset(r->ev_count, 0, sizeof(r->ev_count));
        memset(r->ev_last, 0, sizeof(r->ev_last));
        ring_reset(r);
        r->cper_id = 0;
        if (!r->loaded) {
                const struct sim_ras_preset *p = &g->ras_preset;

                memcpy(r->counts, p->counts, sizeof(r->counts));
                free(r->pages);
                r->pages = NULL;
                r->n_pages = 0;
                if (p->n_pages && (r->pages = malloc(p->n_pages * sizeof(*r->pages)))) {
                        memcpy(r->pages, p->pages, p->n_pages * sizeof(*r->pages));
                        r->n_pages = p->n_pages;
                }
                for (size_t i = 0; i < p->n_cper; i++) {
                        (void) append_cper(g, (enum sim_cper_kind) p->cper[i]);
                        if (p->cper[i] == SIM_CPER_FATAL ||
                            p->cper[i] == SIM_CPER_BAD_PAGE_THRESHOLD)
                                event(r, EV_FATAL);
                        else if (p->cper[i] == SIM_CPER_UNCORRECTED)
                                event(r, EV_POISON_CREATION);
                }
                r->loaded = true;
        }
        build_sysfs(g);
        build_debugfs(g);
}

void sim_ras_free(struct sim_gpu *g) {
        free(g->ras.pages);
        free(g->ras.ring);
        free(g->ras.recs);
        g->ras = (struct sim_ras){ 0 };
        sim_ras_preset_done(&g->ras_preset);
}

/* ---------------------------------------------------------------------------------------- */
/* Out-of-band */

static void lock(struct sim_machine *m) {
        if (m->fs)
                sim_fs_lock(m->fs);
}

static void unlock(struct sim_machine *m) {
        if (m->fs)
                sim_fs_unlock_sync(m->fs);
}

/* The GPU at @bdf bound to amdgpu, with the lock held; NULL (unlocked) if none. */
static struct sim_gpu *gpu_locked(struct sim_machine *m, const char *bdf) {
        lock(m);
        for (size_t i = 0; i < m->n_gpus; i++) {
                struct sim_gpu *g = m->gpus[i];

                if (!g->func->unplugged && g->attached && streq(g->func->bdf, bdf))
                        return g;
        }
        unlock(m);
        return NULL;
}

int sim_ras_inject(struct sim_machine *m, const char *bdf, enum sim_ras_block b, enum sim_ras_err e,
                   uint64_t n) {
        struct sim_gpu *g;
        int r = 0;

        if (b < 0 || b >= _SIM_RAS_BLOCK_MAX || e < 0 || e >= _SIM_RAS_ERR_MAX)
                return -EINVAL;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        if (!(sim_ras_blocks(g) & (1u << b)))
                r = -EOPNOTSUPP;
        else {
                uint64_t *v = &g->ras.counts[b][e];

                *v = *v + n < *v ? UINT64_MAX : *v + n;
                if (e == SIM_RAS_DE && n)
                        event(&g->ras, EV_POISON_CREATION);
        }
        unlock(m);
        return r;
}

int sim_ras_retire_page(struct sim_machine *m, const char *bdf, uint32_t pfn, char status) {
        struct sim_gpu *g;
        struct sim_ras *r;
        size_t i;
        int e = 0;

        if (status != 'R' && status != 'P' && status != 'F')
                return -EINVAL;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        r = &g->ras;
        if (!has_bad_pages(g)) {
                unlock(m);
                return -EOPNOTSUPP;
        }
        if ((uint64_t) pfn >= g->prod->vram_bytes / GPU_PAGE_SIZE) {
                unlock(m);
                return -ERANGE;
        }
        for (i = 0; i < r->n_pages; i++)
                if (r->pages[i].pfn == pfn)
                        break;
        if (i < r->n_pages)
                r->pages[i].status = status; /* pending reserved at last, say */
        else {
                struct sim_bad_page *v = realloc(r->pages, (r->n_pages + 1) * sizeof(*v));

                if (!v)
                        e = -ENOMEM;
                else {
                        r->pages = v;
                        r->pages[r->n_pages++] = (struct sim_bad_page){ pfn, status };
                        /* over the threshold: RMA, the bad-page-threshold record */
                        if (r->n_pages == (size_t) g->m->kernel.bad_page_threshold + 1 && r->ring) {
                                (void) append_cper(g, SIM_CPER_BAD_PAGE_THRESHOLD);
                                event(r, EV_FATAL);
                        }
                }
        }
        unlock(m);
        return e;
}

/* The block a record's counts go to: umc, else the first with RAS (an APU: gfx). */
static int record_block(const struct sim_gpu *g) {
        uint32_t blocks = sim_ras_blocks(g);

        if (blocks & (1u << SIM_RAS_UMC))
                return SIM_RAS_UMC;
        for (int b = 0; b < _SIM_RAS_BLOCK_MAX; b++)
                if (blocks & (1u << b))
                        return b;
        return -1;
}

int sim_ras_cper(struct sim_machine *m, const char *bdf, enum sim_cper_kind kind) {
        struct sim_gpu *g;
        int e, b;

        if (kind < 0 || kind >= _SIM_CPER_KIND_MAX)
                return -EINVAL;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        e = append_cper(g, kind);
        b = record_block(g);
        if (e >= 0) {
                /* the driver counts what it reports: a fatal record is a UE, an uncorrected
                 * one a deferred (poison) error, a corrected one a CE */
                if (kind == SIM_CPER_FATAL || kind == SIM_CPER_BAD_PAGE_THRESHOLD)
                        event(&g->ras, EV_FATAL);
                if (kind == SIM_CPER_UNCORRECTED)
                        event(&g->ras, EV_POISON_CREATION);
                if (b >= 0 && kind != SIM_CPER_BAD_PAGE_THRESHOLD) {
                        int err = kind == SIM_CPER_FATAL       ? SIM_RAS_UE
                                  : kind == SIM_CPER_CORRECTED ? SIM_RAS_CE
                                                               : SIM_RAS_DE;

                        g->ras.counts[b][err]++;
                }
        }
        unlock(m);
        return e;
}
