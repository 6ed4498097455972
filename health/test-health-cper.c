/* SPDX-License-Identifier: MIT */
/*
 * CPER records (spec health-and-control §2) built byte by byte here, as amdgpu writes them
 * (UEFI header of 128 bytes, 72-byte section descriptors), in a ring file as debugfs reads it
 * (12-byte pointer header, then the bytes): decoding, a follower's cursor across appends, a
 * ring that overwrote records, a driver reload, records in buffer order, and damage of every
 * kind (a huge or short length, a cut record, a bad signature end, a section outside its
 * record).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <time.h>

#include "health-private.h"
#include "private.h"
#include "tree-util.h"

#define DEV "devices/pci0000:00/0000:c1:00.0/"
#define REC_LEN (128 + 72 + 64) /* header, one descriptor, a 64-byte section */

static const uint8_t guid_mce[16] = { 0xfe, 0x6f, 0xf5, 0xe8, 0x9c, 0x91, 0xc5, 0x4c,
                                      0xba, 0x88, 0x65, 0xab, 0xe1, 0x49, 0x13, 0xbb };
static const uint8_t guid_cmc[16] = { 0xb1, 0x8b, 0xce, 0x2d, 0xd7, 0xbd, 0x0e, 0x45,
                                      0xb9, 0xad, 0x9c, 0xf4, 0xeb, 0xd4, 0xf8, 0x90 };
static const uint8_t guid_boot[16] = { 0x66, 0xa4, 0x61, 0x3d, 0x40, 0xab, 0x9a, 0x40,
                                       0xa6, 0x98, 0xf3, 0x62, 0xd4, 0x64, 0xb3, 0x8f };
static const uint8_t guid_crashdump[16] = { 0x78, 0x0c, 0xac, 0x32, 0x23, 0x26, 0xf6, 0x48,
                                            0xb0, 0xd0, 0x73, 0x65, 0x72, 0x5f, 0xd6, 0xae };
static const uint8_t guid_nonstd[16] = { 0x78, 0x0c, 0xac, 0x32, 0x23, 0x26, 0xf6, 0x48,
                                         0x81, 0xa2, 0xac, 0x69, 0x17, 0x80, 0x55, 0x1d };
static const uint8_t guid_other[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static void put16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
}

static void put32(uint8_t *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

/* One record of REC_LEN bytes at p: counter n on socket 0, written 2025-03-04 05:06:07 UTC
 * plus n seconds. */
static void record(uint8_t *p, unsigned n, uint32_t severity, const uint8_t *notify,
                   const uint8_t *section_type) {
        char id[16];

        memset(p, 0, REC_LEN);
        memcpy(p, "CPER", 4);
        put16(p + 4, 0x100);
        put32(p + 6, 0xFFFFFFFF);
        put16(p + 10, 1);
        put32(p + 12, severity);
        put32(p + 16, 3); /* platform id, timestamp */
        put32(p + 20, REC_LEN);
        p[24] = (uint8_t) (7 + n); /* seconds */
        p[25] = 6;
        p[26] = 5;
        p[28] = 4;
        p[29] = 3;
        p[30] = 25;
        p[31] = 20;
        memcpy(p + 32, "0x1002:0x74A1", 13);
        memcpy(p + 64, "amdgpu", 6);
        memcpy(p + 80, notify, 16);
        snprintf(id, sizeof(id), "0:%X", n);
        memcpy(p + 96, id, strlen(id));
        /* the section descriptor */
        put32(p + 128, 128 + 72);
        put32(p + 132, 64);
        p[136] = 1;
        p[137] = 22;
        p[138] = 2;
        put32(p + 140, 1);
        memcpy(p + 144, section_type, 16);
        put32(p + 176, severity);
        memcpy(p + 180, "OAM0", 4);
        memset(p + 200, 0xA5, 64);
}

/* A ring file: the 12-byte header and n records numbered from first (odd: fatal, even:
 * corrected; the same number is the same bytes in every ring). */
static size_t ring(uint8_t *buf, unsigned first, unsigned n) {
        memset(buf, 0, 12);
        put32(buf + 4, (uint32_t) (n * REC_LEN / 4));
        for (unsigned i = 0; i < n; i++)
                record(buf + 12 + i * REC_LEN, first + i,
                       (first + i) % 2 ? AMDSMI_CPER_SEVERITY_FATAL
                                       : AMDSMI_CPER_SEVERITY_NON_FATAL_CORRECTED,
                       (first + i) % 2 ? guid_mce : guid_cmc,
                       (first + i) % 2 ? guid_crashdump : guid_nonstd);
        return 12 + n * REC_LEN;
}

static struct amdsmi_cper_batch *decode(const uint8_t *buf, size_t size, int header,
                                        struct amdsmi_cper_cursor *cursor) {
        struct amdsmi_cper_batch *batch = NULL;

        assert_int_equal(amdsmi_cper_decode(buf, size, header, cursor, &batch), 0);
        assert_non_null(batch);
        return batch;
}

static void test_decode(void **state) {
        uint8_t buf[12 + 4 * REC_LEN];
        struct amdsmi_cper_batch *b;
        const struct amdsmi_cper_record *r;
        struct tm tm = {
                .tm_year = 125, .tm_mon = 2, .tm_mday = 4, .tm_hour = 5, .tm_min = 6, .tm_sec = 8
        };

        ring(buf, 1, 3);
        record(buf + 12 + 2 * REC_LEN, 3, AMDSMI_CPER_SEVERITY_NON_FATAL_UNCORRECTED, guid_boot,
               guid_other);
        b = decode(buf, 12 + 3 * REC_LEN, 1, NULL);
        assert_int_equal(b->n_records, 3);
        assert_int_equal(b->skipped, 0);
        assert_int_equal(b->lost, 0);
        assert_int_equal(b->reloaded, 0);

        r = &b->records[0];
        assert_int_equal(r->revision, 0x100);
        assert_int_equal(r->severity, AMDSMI_CPER_SEVERITY_FATAL);
        assert_string_equal(amdsmi_cper_severity_to_string(r->severity), "fatal");
        assert_true(r->timestamp == (int64_t) timegm(&tm));
        assert_string_equal(r->platform_id, "0x1002:0x74A1");
        assert_string_equal(r->creator_id, "amdgpu");
        assert_string_equal(r->record_id, "0:1");
        assert_int_equal(r->sequence, 1);
        assert_int_equal(r->notify, AMDSMI_CPER_NOTIFY_MCE);
        assert_string_equal(r->notify_guid, "e8f56ffe-919c-4cc5-ba88-65abe14913bb");
        assert_int_equal(r->n_sections, 1);
        assert_int_equal(r->sections[0].type, AMDSMI_CPER_SECTION_CRASHDUMP);
        assert_string_equal(r->sections[0].type_guid, "32ac0c78-2623-48f6-b0d0-7365725fd6ae");
        assert_string_equal(r->sections[0].fru_text, "OAM0");
        assert_int_equal(r->sections[0].offset, 200);
        assert_int_equal(r->sections[0].length, 64);
        assert_int_equal(r->sections[0].flags, 1);
        assert_int_equal(r->length, REC_LEN);
        assert_memory_equal(r->raw, buf + 12, REC_LEN); /* a .cper file's bytes */

        r = &b->records[1];
        assert_int_equal(r->notify, AMDSMI_CPER_NOTIFY_CMC);
        assert_int_equal(r->sections[0].type, AMDSMI_CPER_SECTION_NONSTANDARD);
        assert_string_equal(amdsmi_cper_severity_to_string(r->severity), "non_fatal_corrected");
        r = &b->records[2];
        assert_int_equal(r->notify, AMDSMI_CPER_NOTIFY_BOOT);
        assert_int_equal(r->sections[0].type, AMDSMI_CPER_SECTION_OTHER);
        assert_string_equal(r->sections[0].type_guid, "04030201-0605-0807-090a-0b0c0d0e0f10");
        assert_string_equal(amdsmi_cper_severity_to_string(r->severity), "non_fatal_uncorrected");
        assert_string_equal(amdsmi_cper_severity_to_string(10), "unknown");
        amdsmi_cper_batch_free(b);

        /* an unknown notification type keeps its GUID; an invalid timestamp is -1 */
        record(buf, 0x1f, 2, guid_other, guid_nonstd);
        put32(buf + 16, 1);
        b = decode(buf, REC_LEN, 0, NULL);
        assert_int_equal(b->n_records, 1);
        assert_int_equal(b->records[0].notify, AMDSMI_CPER_NOTIFY_OTHER);
        assert_string_equal(b->records[0].notify_guid, "04030201-0605-0807-090a-0b0c0d0e0f10");
        assert_true(b->records[0].timestamp == -1);
        assert_string_equal(b->records[0].record_id, "0:1F");
        assert_int_equal(b->records[0].sequence, 0x1f);
        amdsmi_cper_batch_free(b);

        /* an empty ring, and no bytes at all */
        b = decode(buf, 0, 0, NULL);
        assert_int_equal(b->n_records, 0);
        amdsmi_cper_batch_free(b);
        memset(buf, 0, 12);
        b = decode(buf, 12, 1, NULL);
        assert_int_equal(b->n_records, 0);
        assert_int_equal(b->skipped, 0);
        amdsmi_cper_batch_free(b);
        assert_null(amdsmi_cper_batch_free(NULL));
        assert_string_equal(amdsmi_cper_notify_to_string(AMDSMI_CPER_NOTIFY_CMC), "cmc");
        assert_string_equal(amdsmi_cper_section_type_to_string(AMDSMI_CPER_SECTION_CRASHDUMP),
                            "crashdump");
}

static void test_follow(void **state) {
        uint8_t buf[12 + 8 * REC_LEN];
        struct amdsmi_cper_cursor cursor = AMDSMI_CPER_CURSOR_INIT;
        struct amdsmi_cper_batch *b;
        size_t n;

        n = ring(buf, 1, 3);
        b = decode(buf, n, 1, &cursor);
        assert_int_equal(b->n_records, 3);
        amdsmi_cper_batch_free(b);

        /* nothing new: nothing repeated */
        b = decode(buf, n, 1, &cursor);
        assert_int_equal(b->n_records, 0);
        assert_int_equal(b->lost, 0);
        amdsmi_cper_batch_free(b);

        /* one appended */
        n = ring(buf, 1, 4);
        b = decode(buf, n, 1, &cursor);
        assert_int_equal(b->n_records, 1);
        assert_int_equal(b->records[0].sequence, 4);
        amdsmi_cper_batch_free(b);

        /* the ring wrapped: 5 and 6 were overwritten with 4 before this read */
        n = ring(buf, 7, 3);
        b = decode(buf, n, 1, &cursor);
        assert_int_equal(b->n_records, 3);
        assert_int_equal(b->records[0].sequence, 7);
        assert_int_equal(b->lost, 2);
        assert_int_equal(b->reloaded, 0);
        amdsmi_cper_batch_free(b);

        /* wrapped, and what is left still holds the cursor's record: no loss, no repeat */
        n = ring(buf, 8, 4);
        b = decode(buf, n, 1, &cursor);
        assert_int_equal(b->n_records, 2);
        assert_int_equal(b->records[0].sequence, 10);
        assert_int_equal(b->lost, 0);
        amdsmi_cper_batch_free(b);

        /* the driver was reloaded: the counters start again */
        n = ring(buf, 1, 2);
        b = decode(buf, n, 1, &cursor);
        assert_int_equal(b->reloaded, 1);
        assert_int_equal(b->lost, 0);
        assert_int_equal(b->n_records, 2);
        assert_int_equal(b->records[0].sequence, 1);
        amdsmi_cper_batch_free(b);
        b = decode(buf, n, 1, &cursor);
        assert_int_equal(b->n_records, 0);
        assert_int_equal(b->reloaded, 0);
        amdsmi_cper_batch_free(b);
}

static void test_buffer_order(void **state) {
        uint8_t buf[12 + 5 * REC_LEN], tmp[5 * REC_LEN];
        struct amdsmi_cper_batch *b;
        size_t n = ring(buf, 2, 5);

        /* an older kernel's dump in buffer order: 5 6 | 2 3 4 */
        memcpy(tmp, buf + 12 + 3 * REC_LEN, 2 * REC_LEN);
        memcpy(tmp + 2 * REC_LEN, buf + 12, 3 * REC_LEN);
        memcpy(buf + 12, tmp, sizeof(tmp));
        b = decode(buf, n, 1, NULL);
        assert_int_equal(b->n_records, 5);
        for (unsigned i = 0; i < 5; i++)
                assert_int_equal(b->records[i].sequence, 2 + i);
        amdsmi_cper_batch_free(b);
}

static void test_damage(void **state) {
        uint8_t buf[12 + 6 * REC_LEN + 64];
        struct amdsmi_cper_batch *b;
        size_t n;

        /* a huge length, a short one, a bad signature end: skipped, counted; the rest read */
        n = ring(buf, 1, 5);
        put32(buf + 12 + 20, 0xFFFFFFF0);
        put32(buf + 12 + REC_LEN + 20, 100);
        put32(buf + 12 + 2 * REC_LEN + 6, 0);
        b = decode(buf, n, 1, NULL);
        assert_int_equal(b->skipped, 3);
        assert_int_equal(b->n_records, 2);
        assert_int_equal(b->records[0].sequence, 4);
        assert_int_equal(b->records[1].sequence, 5);
        amdsmi_cper_batch_free(b);

        /* the last record cut by the end of the file (a ring that wraps mid-record) */
        n = ring(buf, 1, 3);
        b = decode(buf, n - 10, 1, NULL);
        assert_int_equal(b->n_records, 2);
        assert_int_equal(b->skipped, 1);
        amdsmi_cper_batch_free(b);
        /* cut inside the header */
        b = decode(buf, 12 + 2 * REC_LEN + 60, 1, NULL);
        assert_int_equal(b->n_records, 2);
        assert_int_equal(b->skipped, 1);
        amdsmi_cper_batch_free(b);
        /* garbage around records: not a record, not counted */
        memset(buf, 'C', 12 + 40);
        record(buf + 12 + 40, 9, 1, guid_mce, guid_crashdump);
        memcpy(buf + 12 + 40 + REC_LEN, "CPE", 3);
        b = decode(buf, 12 + 40 + REC_LEN + 3, 1, NULL);
        assert_int_equal(b->n_records, 1);
        assert_int_equal(b->records[0].sequence, 9);
        amdsmi_cper_batch_free(b);
        /* a ring header cut short */
        b = decode(buf, 5, 1, NULL);
        assert_int_equal(b->n_records, 0);
        assert_int_equal(b->skipped, 1);
        amdsmi_cper_batch_free(b);

        /* more section descriptors than the length covers: the record is damaged */
        record(buf, 1, 1, guid_mce, guid_crashdump);
        put16(buf + 10, 3);
        b = decode(buf, REC_LEN, 0, NULL);
        assert_int_equal(b->n_records, 0);
        assert_int_equal(b->skipped, 1);
        amdsmi_cper_batch_free(b);
        /* a section outside its record: the record is kept, the section not decoded */
        record(buf, 1, 1, guid_mce, guid_crashdump);
        put32(buf + 132, 65);
        b = decode(buf, REC_LEN, 0, NULL);
        assert_int_equal(b->n_records, 1);
        assert_int_equal(b->records[0].n_sections, 0);
        amdsmi_cper_batch_free(b);
        /* a record id that is not "<socket>:<hex>": kept, without a sequence */
        record(buf, 1, 1, guid_mce, guid_crashdump);
        memcpy(buf + 96, "x:\x01\xff", 4);
        b = decode(buf, REC_LEN, 0, NULL);
        assert_int_equal(b->n_records, 1);
        assert_true(b->records[0].sequence == AMDSMI_NA);
        assert_string_equal(b->records[0].record_id, "x:??");
        amdsmi_cper_batch_free(b);
}

static char *gpu_tree(void) {
        char *root = tree_new();

        tree_file(root, DEV "vendor", "0x1002\n", -1, 0444);
        tree_file(root, DEV "device", "0x74a1\n", -1, 0444);
        tree_file(root, DEV "class", "0x120000\n", -1, 0444);
        tree_mkdirs(root, DEV "drm/card1");
        tree_mkdirs(root, "bus/pci/drivers/amdgpu");
        tree_link(root, "bus/pci/devices/0000:c1:00.0", "../../../devices/pci0000:00/0000:c1:00.0");
        tree_link(root, DEV "driver", "../../../bus/pci/drivers/amdgpu");
        return root;
}

static void test_read_file(void **state) {
        struct amdsmi_cper_cursor cursor = AMDSMI_CPER_CURSOR_INIT;
        struct amdsmi_cper_batch *b = NULL;
        uint8_t buf[12 + 3 * REC_LEN];
        struct amdsmi_ctx *ctx = NULL;
        char *root = gpu_tree();
        struct amdsmi_gpu *gpu;
        char *path;
        size_t n;

        assert_int_equal(amdsmi_ctx_new_with_roots(root, NULL, &ctx), 0);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        gpu = amdsmi_ctx_get_gpu(ctx, 0);

        /* no debugfs: not provided */
        assert_int_equal(amdsmi_gpu_read_cper(gpu, &cursor, &b), -ENODATA);
        assert_null(b);
        /* the directory without the ring: an older kernel, CPER off */
        tree_mkdirs(root, "kernel/debug/dri/1");
        assert_int_equal(amdsmi_gpu_read_cper(gpu, &cursor, &b), -ENODATA);

        n = ring(buf, 1, 2);
        tree_file(root, "kernel/debug/dri/1/amdgpu_ring_cper", (const char *) buf, (ssize_t) n,
                  0444);
        assert_int_equal(amdsmi_gpu_read_cper(gpu, &cursor, &b), 0);
        assert_int_equal(b->n_records, 2);
        assert_int_equal(b->records[1].sequence, 2);
        b = amdsmi_cper_batch_free(b);
        n = ring(buf, 1, 3);
        tree_file(root, "kernel/debug/dri/1/amdgpu_ring_cper", (const char *) buf, (ssize_t) n,
                  0444);
        assert_int_equal(amdsmi_gpu_read_cper(gpu, &cursor, &b), 0);
        assert_int_equal(b->n_records, 1);
        assert_int_equal(b->records[0].sequence, 3);
        b = amdsmi_cper_batch_free(b);

        /* a directory where the ring should be: an error of the read, not a crash */
        path = tree_path(root, "kernel/debug/dri/1/amdgpu_ring_cper");
        assert_int_equal(unlink(path), 0);
        assert_int_equal(mkdir(path, 0755), 0);
        assert_int_equal(amdsmi_gpu_read_cper(gpu, &cursor, &b), -EISDIR);
        assert_null(b);
        free(path);
        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_decode),       cmocka_unit_test(test_follow),
                cmocka_unit_test(test_buffer_order), cmocka_unit_test(test_damage),
                cmocka_unit_test(test_read_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
