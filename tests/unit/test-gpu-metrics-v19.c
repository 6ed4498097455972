/* SPDX-License-Identifier: MIT */
/*
 * Bad and unusual input to the attribute-encoded parsers (gpu_metrics 1.9, xcp_metrics 1.1):
 * truncations at every byte, lying counts, instance counts of 0, past the end and huge, unknown
 * type codes and ids, every integer type for a known id, buffers of the wrong size, the
 * caller's structure size. Each failure must give the exact error, leave the output untouched
 * and say in the reason what was wrong and where. The tables are the fixture generator's
 * blobs ($METRICS_BLOBS_DIR, gpu-metrics-v1.9.md layouts) and tables written here with
 * metrics-writer.h; offsets of records are the ones of the spec (§2.1).
 */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <amdsmi/amdsmi.h>

#include "metrics-writer.h"

/* gpu-metrics-v1.9.md §2.1, Linux 6.19 layout: where the encodings of some records are */
#define ENC_HOTSPOT 8  /* TEMPERATURE_HOTSPOT, values at 16 */
#define ENC_MEM 18     /* TEMPERATURE_MEM */
#define ENC_GFXCLK 552 /* CURRENT_GFXCLK x 8, values at 560 */
#define ENC_LAST 1078  /* GFX_BELOW_HOST_LIMIT_TOTAL_ACC x 8, values 1086..1149 */
#define SIZE_619 1150

static void *read_blob(const char *name, size_t *ret_size) {
        const char *dir = getenv("METRICS_BLOBS_DIR");
        char path[4096];
        uint8_t *buf;
        FILE *f;
        long size;

        if (!dir)
                fail_msg("METRICS_BLOBS_DIR is not set (run through meson test)");
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "re");
        if (!f)
                fail_msg("%s: %s", path, strerror(errno));
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        size = ftell(f);
        assert_true(size > 0);
        rewind(f);
        buf = malloc(size); /* exactly the file: a sanitizer catches reads past the end */
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, size, f), (size_t) size);
        fclose(f);
        *ret_size = size;
        return buf;
}

static uint8_t *copy_of(const void *data, size_t size) {
        uint8_t *p = malloc(size ? size : 1);

        assert_non_null(p);
        memcpy(p, data, size);
        return p;
}

static uint64_t get_le(const uint8_t *p, size_t n) {
        uint64_t v = 0;

        for (size_t i = 0; i < n; i++)
                v |= (uint64_t) p[i] << (8 * i);
        return v;
}

/* Rewrites the encoding at @off with new fields; -1 keeps a field. */
static void set_encoding(uint8_t *blob, size_t off, int unit, int type, int id, int inst) {
        uint64_t enc = get_le(blob + off, 8);

        if (unit >= 0)
                enc = (enc & ~UINT64_C(0xff000000)) | (uint64_t) unit << 24;
        if (type >= 0)
                enc = (enc & ~UINT64_C(0x00f00000)) | (uint64_t) type << 20;
        if (id >= 0)
                enc = (enc & ~UINT64_C(0x000ffc00)) | (uint64_t) id << 10;
        if (inst >= 0)
                enc = (enc & ~UINT64_C(0x3ff)) | (uint64_t) inst;
        mw_le(blob + off, enc, 8);
}

static void assert_reason_names(const char *reason, const char *what) {
        assert_true(reason[0] != '\0');
        if (what && !strstr(reason, what))
                fail_msg("reason \"%s\" does not name \"%s\"", reason, what);
}

/* parse_ext must fail with @want, leave the output untouched, and give a reason naming @what */
static void expect_gpu_invalid(const void *buf, size_t len, int want, const char *what) {
        static struct amdsmi_gpu_metrics_ext m, pattern;
        char reason[256];
        int r;

        memset(&pattern, 0xa5, sizeof(pattern));
        pattern.size = sizeof(pattern);
        pattern.ids = AMDSMI_METRICS_IDS_T3;
        m = pattern;
        memset(reason, 0, sizeof(reason));
        r = amdsmi_gpu_metrics_parse_ext(buf, len, &m, reason, sizeof(reason));
        if (r != want)
                fail_msg("%zu bytes: parse_ext returned %d (%s), want %d; reason \"%s\"", len, r,
                         strerror(-r), want, reason);
        assert_memory_equal(&m, &pattern, sizeof(m));
        assert_reason_names(reason, what);
}

static void expect_partition_invalid(const void *buf, size_t len, int want, const char *what) {
        static struct amdsmi_partition_metrics m, pattern;
        char reason[256];
        int r;

        memset(&pattern, 0xa5, sizeof(pattern));
        pattern.size = sizeof(pattern);
        m = pattern;
        memset(reason, 0, sizeof(reason));
        r = amdsmi_partition_metrics_parse(buf, len, &m, reason, sizeof(reason));
        if (r != want)
                fail_msg("%zu bytes: partition parse returned %d (%s), want %d; reason \"%s\"", len,
                         r, strerror(-r), want, reason);
        assert_memory_equal(&m, &pattern, sizeof(m));
        assert_reason_names(reason, what);
}

static void parse_gpu_ok(const void *buf, size_t len, struct amdsmi_gpu_metrics_ext *ret) {
        char reason[256] = "untouched";
        int r;

        memset(ret, 0x5a, sizeof(*ret));
        ret->size = sizeof(*ret);
        ret->ids = AMDSMI_METRICS_IDS_T3;
        r = amdsmi_gpu_metrics_parse_ext(buf, len, ret, reason, sizeof(reason));
        if (r != 0)
                fail_msg("parse_ext: %d (%s): %s", r, strerror(-r), reason);
        assert_string_equal(reason, "");
}

static void test_truncated_everywhere(void **state) {
        static const char *const gpu[] = { "gpu_metrics_v1_9-6.19.bin", "gpu_metrics_v1_9-7.0.bin",
                                           "gpu_metrics_v1_9-7.1.bin" };
        static const char *const part[] = { "xcp_metrics_v1_1-6.19.bin",
                                            "xcp_metrics_v1_1-7.0.bin" };

        for (size_t k = 0; k < sizeof(gpu) / sizeof(gpu[0]); k++) {
                size_t size;
                uint8_t *blob = read_blob(gpu[k], &size);

                for (size_t len = 0; len < size; len++) {
                        uint8_t *cut = copy_of(blob, len); /* exactly len bytes */

                        expect_gpu_invalid(cut, len, -EBADMSG, NULL);
                        free(cut);
                }
                free(blob);
        }
        for (size_t k = 0; k < sizeof(part) / sizeof(part[0]); k++) {
                size_t size;
                uint8_t *blob = read_blob(part[k], &size);

                for (size_t len = 0; len < size; len++) {
                        uint8_t *cut = copy_of(blob, len);

                        expect_partition_invalid(cut, len, -EBADMSG, NULL);
                        free(cut);
                }
                free(blob);
        }
}

/* The old entry point refuses a truncated 1.9 table just as well. */
static void test_truncated_old_api(void **state) {
        static struct amdsmi_gpu_metrics m, pattern;
        size_t size;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);

        memset(&pattern, 0xa5, sizeof(pattern));
        for (size_t len = 0; len < size; len++) {
                uint8_t *cut = copy_of(blob, len);

                m = pattern;
                assert_int_equal(amdsmi_gpu_metrics_parse(cut, len, &m), -EBADMSG);
                assert_memory_equal(&m, &pattern, sizeof(m));
                free(cut);
        }
        free(blob);
}

static void test_attr_count_lies(void **state) {
        static const int32_t lies[] = { 48, 46, 0, 1, -1, INT32_MIN, INT32_MAX, 1000 };
        size_t size;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);

        assert_int_equal(size, SIZE_619);
        assert_int_equal(get_le(blob + 4, 4), 47);
        for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
                uint8_t *b = copy_of(blob, size);

                mw_le(b + 4, (uint32_t) lies[i], 4);
                expect_gpu_invalid(b, size, -EBADMSG, "attr_count");
                free(b);
        }
        free(blob);
}

static void test_instance_count_zero(void **state) {
        size_t size;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);
        uint8_t *b = copy_of(blob, size);

        set_encoding(b, ENC_HOTSPOT, -1, -1, -1, 0);
        expect_gpu_invalid(b, size, -EBADMSG, "8");
        memcpy(b, blob, size);
        set_encoding(b, ENC_GFXCLK, -1, -1, -1, 0);
        expect_gpu_invalid(b, size, -EBADMSG, "552");
        free(b);
        free(blob);
}

static void test_instances_past_end(void **state) {
        size_t size;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);
        uint8_t *b = copy_of(blob, size);

        /* the last record: 9 x U64 where 8 fit */
        set_encoding(b, ENC_LAST, -1, -1, -1, 9);
        expect_gpu_invalid(b, size, -EBADMSG, "1078");
        /* the first record: 1023 x U64 */
        memcpy(b, blob, size);
        set_encoding(b, ENC_HOTSPOT, -1, MW_U64, -1, 1023);
        expect_gpu_invalid(b, size, -EBADMSG, "8");
        /* a U16 record turned U64 runs into the next record: the walk then derails */
        memcpy(b, blob, size);
        set_encoding(b, ENC_GFXCLK, -1, MW_U64, -1, 1023);
        expect_gpu_invalid(b, size, -EBADMSG, "552");
        free(b);
        free(blob);
}

/* An instance count as large as the encoding allows, when the values are really there. */
static void test_huge_instance_count_in_bounds(void **state) {
        static struct mwriter w;
        static uint64_t vals[1023];
        static struct amdsmi_gpu_metrics_ext m;
        size_t len;

        for (unsigned i = 0; i < 1023; i++)
                vals[i] = 1000 + i;

        /* an unknown id with 1023 U64: skipped and counted */
        mw_init(&w);
        mw_scalar(&w, MW_ID_TEMPERATURE_HOTSPOT, MW_U16, MW_TEMP_C, 55);
        mw_attr(&w, 1000, MW_U64, MW_NONE, 1023, vals);
        mw_scalar(&w, MW_ID_TEMPERATURE_MEM, MW_U16, MW_TEMP_C, 66);
        len = mw_finish(&w, 9);
        assert_int_equal(len, 8 + 10 + 8 + 1023 * 8 + 10);
        parse_gpu_ok(w.buf, len, &m);
        assert_int_equal(m.attr_count, 3);
        assert_int_equal(m.unknown_attrs, 1);
        assert_int_equal(m.unknown[0].id, 1000);
        assert_int_equal(m.unknown[0].type, MW_U64);
        assert_int_equal(m.unknown[0].unit, MW_NONE);
        assert_int_equal(m.unknown[0].instances, 1023);
        assert_int_equal(m.base.temp_hotspot_mc, 55000);
        assert_int_equal(m.base.temp_mem_mc, 66000);

        /* a known per-XCC id with 1023 instances: the first 8 kept, the record counted clipped */
        mw_init(&w);
        mw_attr(&w, MW_ID_CURRENT_GFXCLK, MW_U16, MW_CLOCK_MHZ, 1023, vals);
        mw_scalar(&w, MW_ID_TEMPERATURE_MEM, MW_U16, MW_TEMP_C, 66);
        len = mw_finish(&w, 9);
        parse_gpu_ok(w.buf, len, &m);
        assert_int_equal(m.clipped_attrs, 1);
        assert_int_equal(m.unknown_attrs, 0);
        for (unsigned i = 0; i < AMDSMI_METRICS_MAX_XCC; i++)
                assert_int_equal(m.base.gfxclk_hz[i], (1000 + i) * UINT64_C(1000000));
        assert_int_equal(m.base.temp_mem_mc, 66000);
}

static void test_unknown_type_code(void **state) {
        size_t size;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);
        uint8_t *b = copy_of(blob, size);

        for (int type = 8; type <= 15; type++) {
                memcpy(b, blob, size);
                set_encoding(b, ENC_MEM, -1, type, -1, -1);
                expect_gpu_invalid(b, size, -EBADMSG, "18");
                /* also on an unknown id: the type code alone makes the size unknowable */
                memcpy(b, blob, size);
                set_encoding(b, ENC_MEM, -1, type, 999, -1);
                expect_gpu_invalid(b, size, -EBADMSG, "18");
        }
        free(b);
        free(blob);
}

/* The 6.19 blob with extra records inserted after the record that ends at @at. */
static uint8_t *insert_records(const uint8_t *blob, size_t size, size_t at, const uint8_t *recs,
                               size_t recs_len, unsigned n_recs, size_t *ret_size) {
        uint8_t *b = malloc(size + recs_len);

        assert_non_null(b);
        memcpy(b, blob, at);
        memcpy(b + at, recs, recs_len);
        memcpy(b + at + recs_len, blob + at, size - at);
        mw_le(b, size + recs_len, 2);
        mw_le(b + 4, get_le(blob + 4, 4) + n_recs, 4);
        *ret_size = size + recs_len;
        return b;
}

static void assert_same_values(const struct amdsmi_gpu_metrics_ext *exp,
                               const struct amdsmi_gpu_metrics_ext *got) {
        const size_t first = offsetof(struct amdsmi_gpu_metrics_ext, base.temp_edge_mc);
        const size_t end = offsetof(struct amdsmi_gpu_metrics_ext, accumulation_counter_bits);

        assert_memory_equal((const uint8_t *) exp + first, (const uint8_t *) got + first,
                            end - first);
        assert_int_equal(exp->accumulation_counter_bits, got->accumulation_counter_bits);
        assert_int_equal(exp->residency_bits, got->residency_bits);
}

static void test_unknown_ids_skipped(void **state) {
        static struct amdsmi_gpu_metrics_ext clean, m;
        static struct mwriter w;
        static const uint64_t three[3] = { 7, 8, 9 };
        size_t size, len, n;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);
        uint8_t *b;

        parse_gpu_ok(blob, size, &clean);

        /* id 777 (U32 x 3) after the first record, id 1023 (U8 x 5) and id 38 (NUM_PARTITION,
         * which 1.9 does not carry) at the end */
        mw_init(&w);
        mw_attr(&w, 777, MW_U32, MW_PERCENT, 3, three);
        len = w.len - 8;
        b = insert_records(blob, size, ENC_MEM, w.buf + 8, len, 1, &n);
        parse_gpu_ok(b, n, &m);
        assert_same_values(&clean, &m);
        assert_int_equal(m.attr_count, 48);
        assert_int_equal(m.unknown_attrs, 1);
        assert_int_equal(m.unknown[0].id, 777);
        assert_int_equal(m.unknown[0].type, MW_U32);
        assert_int_equal(m.unknown[0].unit, MW_PERCENT);
        assert_int_equal(m.unknown[0].instances, 3);
        free(b);

        mw_init(&w);
        mw_attr(&w, 1023, MW_U8, MW_NONE, 5, NULL);
        mw_scalar(&w, 777, MW_S64, 200, 1);
        len = w.len - 8;
        b = insert_records(blob, size, size, w.buf + 8, len, 2, &n);
        parse_gpu_ok(b, n, &m);
        assert_same_values(&clean, &m);
        assert_int_equal(m.attr_count, 49);
        assert_int_equal(m.unknown_attrs, 2);
        assert_int_equal(m.unknown[0].id, 1023);
        assert_int_equal(m.unknown[0].instances, 5);
        assert_int_equal(m.unknown[1].id, 777);
        assert_int_equal(m.unknown[1].type, MW_S64);
        assert_int_equal(m.unknown[1].unit, 200);
        free(b);
        free(blob);
}

/* More unknown records than the structure keeps: all counted, the first ones listed. */
static void test_many_unknown_ids(void **state) {
        static struct mwriter w;
        static struct amdsmi_gpu_metrics_ext m;
        const unsigned n = AMDSMI_METRICS_MAX_UNKNOWN + 5;
        size_t len;

        mw_init(&w);
        for (unsigned i = 0; i < n; i++)
                mw_scalar(&w, 600 + i, MW_U16, MW_NONE, i);
        mw_scalar(&w, MW_ID_TEMPERATURE_HOTSPOT, MW_U16, MW_TEMP_C, 61);
        len = mw_finish(&w, 9);
        parse_gpu_ok(w.buf, len, &m);
        assert_int_equal(m.attr_count, n + 1);
        assert_int_equal(m.unknown_attrs, n);
        for (unsigned i = 0; i < AMDSMI_METRICS_MAX_UNKNOWN; i++)
                assert_int_equal(m.unknown[i].id, 600 + i);
        assert_int_equal(m.base.temp_hotspot_mc, 61000);
}

/* "Accept every integer type for every id": the accumulation counter as U16, U32 (6.19), U64
 * (7.0) and the others; a temperature in every type; all-ones of any type is unavailable. */
static void test_every_integer_type(void **state) {
        static struct mwriter w;
        static struct amdsmi_gpu_metrics_ext m;
        static const unsigned bits[8] = { 8, 8, 16, 16, 32, 32, 64, 64 };
        size_t len;

        for (unsigned type = MW_U8; type <= MW_S64; type++) {
                mw_init(&w);
                mw_scalar(&w, MW_ID_ACCUMULATION_COUNTER, type, MW_NONE, 100 + type);
                mw_scalar(&w, MW_ID_TEMPERATURE_HOTSPOT, type, MW_TEMP_C, 42);
                mw_scalar(&w, MW_ID_TEMPERATURE_MEM, type, MW_TEMP_C, MW_ALL_ONES);
                len = mw_finish(&w, 9);
                parse_gpu_ok(w.buf, len, &m);
                assert_int_equal(m.unknown_attrs, 0);
                assert_int_equal(m.base.accumulation_counter, 100 + type);
                assert_int_equal(m.accumulation_counter_bits, bits[type]);
                assert_int_equal(m.base.temp_hotspot_mc, 42000);
                assert_true(m.base.temp_mem_mc == AMDSMI_NA);
        }

        /* in the 6.19 blob: ACCUMULATION_COUNTER U32 there, rewritten as U16 (2 of its 4 bytes,
         * the rest then misaligns the walk, so rewrite a whole table instead) */
        mw_init(&w);
        mw_scalar(&w, MW_ID_ACCUMULATION_COUNTER, MW_U16, MW_NONE, 0xfffe);
        mw_scalar(&w, MW_ID_PPT_RESIDENCY_ACC, MW_U16, MW_NONE, 5);
        mw_scalar(&w, MW_ID_PROCHOT_RESIDENCY_ACC, MW_U64, MW_NONE, UINT64_C(0x123456789a));
        len = mw_finish(&w, 9);
        parse_gpu_ok(w.buf, len, &m);
        assert_int_equal(m.base.accumulation_counter, 0xfffe);
        assert_int_equal(m.accumulation_counter_bits, 16);
        assert_int_equal(m.base.ppt_residency_acc, 5);
        assert_int_equal(m.base.prochot_residency_acc, UINT64_C(0x123456789a));
        assert_int_equal(m.residency_bits, 16);
}

static void test_zero_length_and_header_only(void **state) {
        static const uint8_t header_619[8] = { 0x7e, 0x04, 1, 9, 47, 0, 0, 0 };
        static const uint8_t xcp_header[8] = { 0x52, 0x02, 1, 1, 13, 0, 0, 0 };
        uint8_t *b = copy_of(header_619, sizeof(header_619));

        expect_gpu_invalid(b, 0, -EBADMSG, NULL);
        expect_gpu_invalid(b, 4, -EBADMSG, NULL);
        expect_gpu_invalid(b, 8, -EBADMSG, "1150");
        free(b);

        b = copy_of(xcp_header, sizeof(xcp_header));
        expect_partition_invalid(b, 0, -EBADMSG, NULL);
        expect_partition_invalid(b, 8, -EBADMSG, "594");
        free(b);
}

static void test_structure_size_mismatch(void **state) {
        size_t size;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);
        uint8_t *b = copy_of(blob, size);

        /* says one byte more than given */
        mw_le(b, size + 1, 2);
        expect_gpu_invalid(b, size, -EBADMSG, "1151");
        /* says one byte less: the last record runs past it */
        mw_le(b, size - 1, 2);
        expect_gpu_invalid(b, size, -EBADMSG, "1149");
        /* says 0xffff */
        mw_le(b, 0xffff, 2);
        expect_gpu_invalid(b, size, -EBADMSG, "65535");
        free(b);
        free(blob);
}

/* A 1 MiB read whose header says 1150: the table is the first 1150 bytes, the rest is ignored
 * (a binary sysfs attribute may hand out more than the table). */
static void test_one_mib_buffer(void **state) {
        static struct amdsmi_gpu_metrics_ext clean, m;
        size_t size;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);
        uint8_t *big = malloc(1 << 20);

        assert_non_null(big);
        memset(big, 0x11, 1 << 20);
        memcpy(big, blob, size);
        parse_gpu_ok(blob, size, &clean);
        parse_gpu_ok(big, 1 << 20, &m);
        assert_same_values(&clean, &m);
        assert_int_equal(m.base.structure_size, 1150);
        assert_int_equal(m.attr_count, 47);
        /* but a record beyond structure_size is not read: 1150 with one more record after it
         * in the buffer and attr_count 48 is a lie */
        mw_le(big + 4, 48, 4);
        mw_le(big + size, mw_encoding(MW_TEMP_C, MW_U16, 0, 1), 8);
        expect_gpu_invalid(big, 1 << 20, -EBADMSG, "attr_count");
        free(big);
        free(blob);
}

static void test_struct_size(void **state) {
        static struct amdsmi_gpu_metrics_ext m, pattern;
        static struct amdsmi_partition_metrics p, ppattern;
        static const uint32_t small[] = { 0, 8, sizeof(struct amdsmi_gpu_metrics_ext) - 1 };
        static const uint32_t psmall[] = { 0, 8, sizeof(struct amdsmi_partition_metrics) - 1 };
        size_t size, psize;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);
        uint8_t *pblob = read_blob("xcp_metrics_v1_1-7.0.bin", &psize);
        char reason[128];

        for (size_t i = 0; i < sizeof(small) / sizeof(small[0]); i++) {
                memset(&pattern, 0xa5, sizeof(pattern));
                pattern.size = small[i];
                pattern.ids = AMDSMI_METRICS_IDS_T3;
                m = pattern;
                assert_int_equal(
                        amdsmi_gpu_metrics_parse_ext(blob, size, &m, reason, sizeof(reason)),
                        -EINVAL);
                assert_memory_equal(&m, &pattern, sizeof(m));
                assert_reason_names(reason, "size");

                memset(&ppattern, 0xa5, sizeof(ppattern));
                ppattern.size = psmall[i];
                p = ppattern;
                assert_int_equal(
                        amdsmi_partition_metrics_parse(pblob, psize, &p, reason, sizeof(reason)),
                        -EINVAL);
                assert_memory_equal(&p, &ppattern, sizeof(p));
                assert_reason_names(reason, "size");
        }
        free(blob);
        free(pblob);
}

/* A caller built against a newer header: the library fills its own version, never the tail. */
static void test_bigger_caller_struct(void **state) {
        enum {
                TAIL = 256
        };
        size_t size, psize;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-7.1.bin", &size);
        uint8_t *pblob = read_blob("xcp_metrics_v1_1-7.0.bin", &psize);
        uint8_t *buf = malloc(sizeof(struct amdsmi_gpu_metrics_ext) + TAIL);
        uint8_t *pbuf = malloc(sizeof(struct amdsmi_partition_metrics) + TAIL);
        struct amdsmi_gpu_metrics_ext *m = (struct amdsmi_gpu_metrics_ext *) buf;
        struct amdsmi_partition_metrics *p = (struct amdsmi_partition_metrics *) pbuf;
        static struct amdsmi_gpu_metrics_ext clean;

        assert_non_null(buf);
        assert_non_null(pbuf);
        memset(buf, 0x5a, sizeof(*m) + TAIL);
        m->size = sizeof(*m) + TAIL;
        m->ids = AMDSMI_METRICS_IDS_T3;
        assert_int_equal(amdsmi_gpu_metrics_parse_ext(blob, size, m, NULL, 0), 0);
        assert_int_equal(m->size, sizeof(*m) + TAIL);
        assert_int_equal(m->version, AMDSMI_GPU_METRICS_EXT_VERSION);
        for (size_t i = 0; i < TAIL; i++)
                assert_int_equal(buf[sizeof(*m) + i], 0x5a);
        parse_gpu_ok(blob, size, &clean);
        assert_same_values(&clean, m);

        memset(pbuf, 0x5a, sizeof(*p) + TAIL);
        p->size = sizeof(*p) + TAIL;
        assert_int_equal(amdsmi_partition_metrics_parse(pblob, psize, p, NULL, 0), 0);
        assert_int_equal(p->version, AMDSMI_PARTITION_METRICS_VERSION);
        for (size_t i = 0; i < TAIL; i++)
                assert_int_equal(pbuf[sizeof(*p) + i], 0x5a);

        free(buf);
        free(pbuf);
        free(blob);
        free(pblob);
}

/* The worked example of gpu-metrics-v1.9.md §4: 42 °C, CURRENT_GFXCLK as U32 x 8, a 64-bit
 * energy accumulator. */
static void test_spec_example(void **state) {
        static const uint64_t mhz[8] = { 2098, 2100, 2105, 2110, 2115, 2101, 2099, 2102 };
        static struct amdsmi_gpu_metrics_ext m;
        size_t size;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-spec-example.bin", &size);

        assert_int_equal(size, 74);
        parse_gpu_ok(blob, size, &m);
        assert_int_equal(m.base.structure_size, 74);
        assert_int_equal(m.attr_count, 3);
        assert_int_equal(m.unknown_attrs, 0);
        assert_int_equal(m.base.temp_hotspot_mc, 42000);
        for (unsigned i = 0; i < 8; i++)
                assert_int_equal(m.base.gfxclk_hz[i], mhz[i] * 1000000);
        assert_int_equal(m.base.energy_accumulator, UINT64_C(0x123456789));
        /* 2^-16 J per count: 4886718345 * 10^6 / 65536 = 74565404434 uJ (truncated) */
        assert_int_equal(m.base.energy_uj, UINT64_C(74565404434));
        assert_true(m.base.temp_mem_mc == AMDSMI_NA);
        assert_true(m.base.accumulation_counter == AMDSMI_NA);
        assert_int_equal(m.accumulation_counter_bits, 0);
        assert_true(m.base.num_partition == AMDSMI_NA);
        free(blob);
}

/* The reason buffer: optional, always terminated, never overrun. */
static void test_reason_buffer(void **state) {
        static struct amdsmi_gpu_metrics_ext m;
        char reason[8];
        size_t size;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);

        m.size = sizeof(m);
        m.ids = AMDSMI_METRICS_IDS_T3;
        assert_int_equal(amdsmi_gpu_metrics_parse_ext(blob, size - 1, &m, NULL, 0), -EBADMSG);
        memset(reason, 'x', sizeof(reason));
        assert_int_equal(amdsmi_gpu_metrics_parse_ext(blob, size - 1, &m, reason, 1), -EBADMSG);
        assert_int_equal(reason[0], '\0');
        assert_int_equal(reason[1], 'x');
        memset(reason, 'x', sizeof(reason));
        assert_int_equal(amdsmi_gpu_metrics_parse_ext(blob, size - 1, &m, reason, 5), -EBADMSG);
        assert_int_equal(strlen(reason), 4);
        assert_int_equal(reason[5], 'x');
        free(blob);
}

/* Ids from 48 on: T3 numbering (SMU 13.0.6/13.0.12: 48 HBM, 49 AID, 50 XCD) by default, the
 * MID numbering (SMU 15.0.8: 48 HBM, 49 MID, 50 AID, 51 XCD) when the caller asks for it. */
static void test_id_numberings(void **state) {
        static struct mwriter w;
        static struct amdsmi_gpu_metrics_ext m;
        static const uint64_t t48[8] = { 40, 41, 42, 43, 44, 45, 46, 47 };
        static const uint64_t t49[4] = { 50, 51, 52, 53 };
        static const uint64_t t50[8] = { 60, 61, 62, 63, 64, 65, 66, 67 };
        static const uint64_t t51[8] = { 70, 71, 72, 73, 74, 75, 76, 77 };
        char reason[128];
        size_t len;

        mw_init(&w);
        mw_attr(&w, 48, MW_U16, MW_TEMP_C, 8, t48);
        mw_attr(&w, 49, MW_U16, MW_TEMP_C, 4, t49);
        mw_attr(&w, 50, MW_U16, MW_TEMP_C, 8, t50);
        mw_attr(&w, 51, MW_U16, MW_TEMP_C, 8, t51);
        len = mw_finish(&w, 9);

        parse_gpu_ok(w.buf, len, &m);
        for (unsigned i = 0; i < 8; i++) {
                assert_int_equal(m.temp_hbm_stack_mc[i], t48[i] * 1000);
                assert_int_equal(m.temp_xcd_mc[i], t50[i] * 1000);
        }
        for (unsigned i = 0; i < 4; i++) {
                assert_int_equal(m.temp_aid_mc[i], t49[i] * 1000);
                assert_true(m.temp_mid_mc[i] == AMDSMI_NA);
        }
        assert_int_equal(m.unknown_attrs, 1); /* 51 is no T3 id */
        assert_int_equal(m.unknown[0].id, 51);

        memset(&m, 0x5a, sizeof(m));
        m.size = sizeof(m);
        m.ids = AMDSMI_METRICS_IDS_MID;
        assert_int_equal(amdsmi_gpu_metrics_parse_ext(w.buf, len, &m, reason, sizeof(reason)), 0);
        for (unsigned i = 0; i < 8; i++) {
                assert_int_equal(m.temp_hbm_stack_mc[i], t48[i] * 1000);
                assert_int_equal(m.temp_xcd_mc[i], t51[i] * 1000);
        }
        for (unsigned i = 0; i < 4; i++) {
                assert_int_equal(m.temp_mid_mc[i], t49[i] * 1000);
                assert_int_equal(m.temp_aid_mc[i], t50[i] * 1000);
        }
        assert_int_equal(m.unknown_attrs, 0);
        assert_int_equal(m.clipped_attrs, 1); /* 50 is AID (4) there, given 8 */
}

/* One parser per file: a 1.9 gpu_metrics is no xcp_metrics, and the other way round. */
static void test_wrong_file(void **state) {
        size_t size, psize;
        uint8_t *blob = read_blob("gpu_metrics_v1_9-6.19.bin", &size);
        uint8_t *pblob = read_blob("xcp_metrics_v1_1-6.19.bin", &psize);

        expect_partition_invalid(blob, size, -EOPNOTSUPP, NULL);
        expect_gpu_invalid(pblob, psize, -EOPNOTSUPP, NULL);
        /* format revision 2 */
        blob[2] = 2;
        expect_gpu_invalid(blob, size, -EOPNOTSUPP, NULL);
        free(blob);
        free(pblob);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_truncated_everywhere),
                cmocka_unit_test(test_truncated_old_api),
                cmocka_unit_test(test_attr_count_lies),
                cmocka_unit_test(test_instance_count_zero),
                cmocka_unit_test(test_instances_past_end),
                cmocka_unit_test(test_huge_instance_count_in_bounds),
                cmocka_unit_test(test_unknown_type_code),
                cmocka_unit_test(test_unknown_ids_skipped),
                cmocka_unit_test(test_many_unknown_ids),
                cmocka_unit_test(test_every_integer_type),
                cmocka_unit_test(test_zero_length_and_header_only),
                cmocka_unit_test(test_structure_size_mismatch),
                cmocka_unit_test(test_one_mib_buffer),
                cmocka_unit_test(test_struct_size),
                cmocka_unit_test(test_bigger_caller_struct),
                cmocka_unit_test(test_spec_example),
                cmocka_unit_test(test_reason_buffer),
                cmocka_unit_test(test_id_numberings),
                cmocka_unit_test(test_wrong_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
