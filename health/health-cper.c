/* SPDX-License-Identifier: MIT */
/*
 * CPER records (spec health-and-control §2) from the debugfs ring amdgpu_ring_cper: a 12-byte
 * header (rptr, wptr, driver wptr, in dwords and masked by the ring size: they wrap, so they
 * cannot say what is new) and then the ring's bytes. Kernels that read "from rptr to wptr" give
 * the records oldest first; older ones dump the ring in buffer order, so records are put in the
 * order of their per-device counter (record id "<socket>:<counter in hex>") when every record
 * has one.
 *
 * Records are found as amd-smi finds them: at any byte offset, "CPER", signature_end
 * 0xFFFFFFFF and a record_length that covers the header and its section descriptors and lies
 * within the bytes read. A signature whose record is damaged (a huge or short length, cut by
 * the end) is skipped and counted, and the scan goes on after its signature.
 *
 * Record layout (UEFI CPER, packed, little endian): header 128 bytes, then sec_cnt section
 * descriptors of 72 bytes, then the sections.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "health-private.h"
#include "parse-util.h"
#include "private.h"
#include "sysfs.h"

#define CPER_HDR_LEN 128
#define CPER_SEC_DESC_LEN 72
#define CPER_RING_HEADER 12
/* The file is the ring (a few hundred KiB at most in the kernels read) plus 12 bytes. */
#define CPER_FILE_MAX (16 * 1024 * 1024)

/* GUIDs as they lie in memory (guid_t: u32, u16, u16 little endian, then 8 bytes). */
/* clang-format off */
#define GUID_BYTES(a, b, c, d0, d1, d2, d3, d4, d5, d6, d7)                                    \
        {                                                                                      \
                (a) & 0xff, ((a) >> 8) & 0xff, ((a) >> 16) & 0xff, ((a) >> 24) & 0xff,         \
                (b) & 0xff, ((b) >> 8) & 0xff, (c) & 0xff, ((c) >> 8) & 0xff,                  \
                d0, d1, d2, d3, d4, d5, d6, d7                                                 \
        }
/* clang-format on */

static const uint8_t guid_mce[16] =
        GUID_BYTES(0xE8F56FFEu, 0x919C, 0x4cc5, 0xBA, 0x88, 0x65, 0xAB, 0xE1, 0x49, 0x13, 0xBB);
static const uint8_t guid_cmc[16] =
        GUID_BYTES(0x2DCE8BB1u, 0xBDD7, 0x450e, 0xB9, 0xAD, 0x9C, 0xF4, 0xEB, 0xD4, 0xF8, 0x90);
static const uint8_t guid_boot[16] =
        GUID_BYTES(0x3D61A466u, 0xAB40, 0x409a, 0xA6, 0x98, 0xF3, 0x62, 0xD4, 0x64, 0xB3, 0x8F);
static const uint8_t guid_crashdump[16] =
        GUID_BYTES(0x32AC0C78u, 0x2623, 0x48F6, 0xB0, 0xD0, 0x73, 0x65, 0x72, 0x5F, 0xD6, 0xAE);
static const uint8_t guid_nonstandard[16] =
        GUID_BYTES(0x32AC0C78u, 0x2623, 0x48F6, 0x81, 0xA2, 0xAC, 0x69, 0x17, 0x80, 0x55, 0x1D);

static const char *const severity_names[_AMDSMI_CPER_SEVERITY_MAX] = {
        [AMDSMI_CPER_SEVERITY_NON_FATAL_UNCORRECTED] = "non_fatal_uncorrected",
        [AMDSMI_CPER_SEVERITY_FATAL] = "fatal",
        [AMDSMI_CPER_SEVERITY_NON_FATAL_CORRECTED] = "non_fatal_corrected",
};

static const char *const notify_names[_AMDSMI_CPER_NOTIFY_MAX] = {
        [AMDSMI_CPER_NOTIFY_OTHER] = "other",
        [AMDSMI_CPER_NOTIFY_MCE] = "mce",
        [AMDSMI_CPER_NOTIFY_CMC] = "cmc",
        [AMDSMI_CPER_NOTIFY_BOOT] = "boot",
};

static const char *const section_names[_AMDSMI_CPER_SECTION_MAX] = {
        [AMDSMI_CPER_SECTION_OTHER] = "other",
        [AMDSMI_CPER_SECTION_CRASHDUMP] = "crashdump",
        [AMDSMI_CPER_SECTION_NONSTANDARD] = "nonstandard",
};

_public_ const char *amdsmi_cper_severity_to_string(uint32_t severity) {
        if (severity >= _AMDSMI_CPER_SEVERITY_MAX)
                return "unknown";
        return severity_names[severity];
}

_public_ const char *amdsmi_cper_notify_to_string(enum amdsmi_cper_notify notify) {
        if ((unsigned) notify >= _AMDSMI_CPER_NOTIFY_MAX)
                return "unknown";
        return notify_names[notify];
}

_public_ const char *amdsmi_cper_section_type_to_string(enum amdsmi_cper_section_type type) {
        if ((unsigned) type >= _AMDSMI_CPER_SECTION_MAX)
                return "unknown";
        return section_names[type];
}

static uint16_t le16(const uint8_t *p) {
        return (uint16_t) (p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
               (uint32_t) p[3] << 24;
}

static void guid_text(const uint8_t *g, char out[37]) {
        snprintf(out, 37, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", le32(g), le16(g + 4),
                 le16(g + 6), g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

/* A fixed-size text field: up to its first NUL, anything not printable ASCII as '?'. */
static void field_text(const uint8_t *p, size_t n, char *out) {
        size_t i;

        for (i = 0; i < n && p[i]; i++)
                out[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char) p[i] : '?';
        out[i] = '\0';
}

static int64_t record_time(const uint8_t *t) {
        /* seconds, minutes, hours, flag, day, month, year (2 digits), century */
        struct tm tm = {
                .tm_sec = t[0],
                .tm_min = t[1],
                .tm_hour = t[2],
                .tm_mday = t[4],
                .tm_mon = t[5] - 1,
                .tm_year = t[7] * 100 + t[6] - 1900,
        };

        if (t[0] > 60 || t[1] > 59 || t[2] > 23 || t[4] < 1 || t[4] > 31 || t[5] < 1 || t[5] > 12 ||
            t[6] > 99 || t[7] < 19 || t[7] > 99)
                return -1;
        return (int64_t) timegm(&tm);
}

/* "<socket decimal>:<counter hex>" in 8 bytes. */
static uint64_t record_sequence(const char *id) {
        const char *colon = strchr(id, ':');
        uint64_t v = 0;

        if (!colon || colon == id || !colon[1])
                return AMDSMI_NA;
        for (const char *p = id; p < colon; p++)
                if (*p < '0' || *p > '9')
                        return AMDSMI_NA;
        for (const char *p = colon + 1; *p; p++) {
                int d = unhexchar(*p);
                if (d < 0)
                        return AMDSMI_NA;
                v = v << 4 | (uint64_t) d;
        }
        return v;
}

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
        uint64_t h = 1469598103934665603ULL;

        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * 1099511628211ULL;
        return h ? h : 1;
}

/* A record found in the bytes, before it is copied out. */
struct found {
        size_t offset;
        uint32_t length;
        uint64_t sequence;
        uint64_t hash;
        int64_t timestamp;
};

/* Whether a whole record starts at p (n bytes left); 0 no signature, 1 a record, -1 damaged. */
static int record_at(const uint8_t *p, size_t n, uint32_t *ret_length) {
        uint32_t length;
        uint16_t sec_cnt;

        if (n < 4 || memcmp(p, "CPER", 4) != 0)
                return 0;
        if (n < CPER_HDR_LEN || le32(p + 6) != 0xFFFFFFFFu)
                return -1;
        sec_cnt = le16(p + 10);
        length = le32(p + 20);
        if (length < CPER_HDR_LEN + (uint64_t) sec_cnt * CPER_SEC_DESC_LEN || length > n)
                return -1;
        *ret_length = length;
        return 1;
}

static void decode_record(const uint8_t *p, uint32_t length, struct amdsmi_cper_record *rec,
                          struct amdsmi_cper_section *sections) {
        uint16_t sec_cnt = le16(p + 10);

        rec->revision = le16(p + 4);
        rec->severity = le32(p + 12);
        rec->valid_bits = le32(p + 16);
        rec->length = length;
        rec->timestamp = (rec->valid_bits & 2) ? record_time(p + 24) : -1;
        field_text(p + 32, 16, rec->platform_id);
        field_text(p + 64, 16, rec->creator_id);
        field_text(p + 96, 8, rec->record_id);
        rec->sequence = record_sequence(rec->record_id);
        guid_text(p + 80, rec->notify_guid);
        rec->notify = memcmp(p + 80, guid_mce, 16) == 0    ? AMDSMI_CPER_NOTIFY_MCE
                      : memcmp(p + 80, guid_cmc, 16) == 0  ? AMDSMI_CPER_NOTIFY_CMC
                      : memcmp(p + 80, guid_boot, 16) == 0 ? AMDSMI_CPER_NOTIFY_BOOT
                                                           : AMDSMI_CPER_NOTIFY_OTHER;
        rec->sections = sections;
        rec->n_sections = 0;
        for (unsigned i = 0; i < sec_cnt; i++) {
                const uint8_t *d = p + CPER_HDR_LEN + (size_t) i * CPER_SEC_DESC_LEN;
                struct amdsmi_cper_section *s = &sections[rec->n_sections];
                uint32_t off = le32(d), len = le32(d + 4);

                if ((uint64_t) off + len > length)
                        continue; /* points outside the record: not decoded */
                s->offset = off;
                s->length = len;
                s->flags = le32(d + 12);
                guid_text(d + 16, s->type_guid);
                s->type = memcmp(d + 16, guid_crashdump, 16) == 0 ? AMDSMI_CPER_SECTION_CRASHDUMP
                          : memcmp(d + 16, guid_nonstandard, 16) == 0
                                  ? AMDSMI_CPER_SECTION_NONSTANDARD
                                  : AMDSMI_CPER_SECTION_OTHER;
                s->severity = le32(d + 48);
                field_text(d + 52, 20, s->fru_text);
                rec->n_sections++;
        }
}

_public_ struct amdsmi_cper_batch *amdsmi_cper_batch_free(struct amdsmi_cper_batch *batch) {
        if (!batch)
                return NULL;
        for (size_t i = 0; i < batch->n_records; i++) {
                free(batch->records[i].sections);
                free((void *) batch->records[i].raw);
        }
        free(batch->records);
        free(batch);
        return NULL;
}

static int cmp_sequence(const void *a, const void *b) {
        const struct found *x = a, *y = b;

        if (x->sequence != y->sequence)
                return x->sequence < y->sequence ? -1 : 1;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

_public_ int amdsmi_cper_decode(const void *data, size_t size, int ring_header,
                                struct amdsmi_cper_cursor *cursor,
                                struct amdsmi_cper_batch **ret_batch) {
        _cleanup_free_ struct found *found = NULL;
        struct amdsmi_cper_batch *batch;
        const uint8_t *p = data;
        size_t n = 0, allocated = 0, first = 0;
        uint64_t skipped = 0, lost = 0;
        bool all_sequenced = true;
        int reloaded = 0;

        if (!p)
                size = 0;
        if (ring_header) {
                /* rptr, wptr, driver wptr: masked dword offsets, not what is new (see above) */
                if (size < CPER_RING_HEADER) {
                        skipped += size > 0;
                        size = 0;
                } else {
                        p += CPER_RING_HEADER;
                        size -= CPER_RING_HEADER;
                }
        }
        for (size_t off = 0; off + 4 <= size;) {
                uint32_t length = 0;
                int r = record_at(p + off, size - off, &length);

                if (r == 0) {
                        off++;
                        continue;
                }
                if (r < 0) {
                        skipped++;
                        off += 4;
                        continue;
                }
                if (n == allocated) {
                        size_t na = allocated ? allocated * 2 : 16;
                        struct found *nf = realloc(found, na * sizeof(*found));
                        if (!nf)
                                return -ENOMEM;
                        found = nf;
                        allocated = na;
                }
                {
                        char id[9];

                        field_text(p + off + 96, 8, id);
                        found[n] = (struct found){
                                .offset = off,
                                .length = length,
                                .sequence = record_sequence(id),
                                .hash = hash_bytes(p + off, length),
                                .timestamp =
                                        (le32(p + off + 16) & 2) ? record_time(p + off + 24) : -1,
                        };
                }
                if (found[n].sequence == AMDSMI_NA)
                        all_sequenced = false;
                n++;
                off += length;
        }
        if (all_sequenced && n > 1)
                qsort(found, n, sizeof(*found), cmp_sequence);

        /* What follows the cursor. */
        if (cursor && cursor->last_hash != 0 && n > 0) {
                size_t k;

                /* from the end: of identical records, the last one was returned */
                for (k = n; k > 0; k--)
                        if (found[k - 1].hash == cursor->last_hash)
                                break;
                if (k > 0) {
                        first = k;
                } else {
                        /* The last record returned was overwritten: everything older went with
                         * it, so a record numbered at or below it is from a new driver. */
                        for (k = 0; k < n; k++)
                                if (found[k].sequence != AMDSMI_NA &&
                                    found[k].sequence <= cursor->last_sequence)
                                        reloaded = 1;
                        if (!reloaded && found[0].sequence != AMDSMI_NA &&
                            cursor->last_timestamp > 0 && found[0].timestamp >= 0 &&
                            found[0].timestamp < cursor->last_timestamp)
                                reloaded = 1; /* numbered above, yet older: a new count */
                        if (!reloaded && found[0].sequence != AMDSMI_NA &&
                            cursor->last_sequence != AMDSMI_NA)
                                lost = found[0].sequence - cursor->last_sequence - 1;
                        first = 0;
                }
        }

        batch = calloc(1, sizeof(*batch));
        if (!batch)
                return -ENOMEM;
        batch->skipped = skipped;
        batch->lost = lost;
        batch->reloaded = reloaded;
        if (n > first) {
                batch->records = calloc(n - first, sizeof(*batch->records));
                if (!batch->records) {
                        free(batch);
                        return -ENOMEM;
                }
        }
        for (size_t i = first; i < n; i++) {
                const uint8_t *r = p + found[i].offset;
                struct amdsmi_cper_record *rec = &batch->records[batch->n_records];
                uint16_t sec_cnt = le16(r + 10);
                struct amdsmi_cper_section *sections = NULL;
                uint8_t *raw;

                raw = malloc(found[i].length);
                if (sec_cnt > 0)
                        sections = calloc(sec_cnt, sizeof(*sections));
                if (!raw || (sec_cnt > 0 && !sections)) {
                        free(raw);
                        free(sections);
                        amdsmi_cper_batch_free(batch);
                        return -ENOMEM;
                }
                memcpy(raw, r, found[i].length);
                decode_record(raw, found[i].length, rec, sections);
                rec->raw = raw;
                batch->n_records++;
        }
        if (cursor && n > 0) {
                cursor->last_sequence = found[n - 1].sequence;
                cursor->last_hash = found[n - 1].hash;
                cursor->last_timestamp = found[n - 1].timestamp;
        }
        *ret_batch = batch;
        return 0;
}

_public_ int amdsmi_gpu_read_cper(struct amdsmi_gpu *gpu, struct amdsmi_cper_cursor *cursor,
                                  struct amdsmi_cper_batch **ret_batch) {
        _cleanup_free_ char *buf = NULL;
        struct amdsmi_cper_batch *batch = NULL;
        char path[256];
        size_t size;
        int r;

        r = health_debugfs_path(gpu, "amdgpu_ring_cper", path, sizeof(path));
        if (r < 0)
                return r;
        r = sysfs_read_all(gpu->ctx, path, CPER_FILE_MAX, &buf, &size);
        if (r == -ENOENT) {
                log_debug(gpu->ctx, "%s/%s: absent: no CPER ring (older kernel, or CPER off)",
                          gpu->ctx->sysfs_root, path);
                return -ENODATA;
        }
        if (r == -EPERM)
                r = -EACCES;
        if (r < 0)
                return r;
        r = amdsmi_cper_decode(buf, size, 1, cursor, &batch);
        if (r < 0)
                return r;
        if (batch->skipped > 0)
                log_debug(gpu->ctx, "%s/%s: %llu damaged CPER record(s) skipped",
                          gpu->ctx->sysfs_root, path, (unsigned long long) batch->skipped);
        if (batch->lost > 0)
                log_debug(gpu->ctx, "%s/%s: %llu CPER record(s) overwritten before being read",
                          gpu->ctx->sysfs_root, path, (unsigned long long) batch->lost);
        *ret_batch = batch;
        return 0;
}
