/* SPDX-License-Identifier: MIT */
/* Output formatting of amdsmi(1): JSON numbers and nulls, CSV, tables, paths, exit codes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exit-codes.h"
#include "output.h"

/* Captures what @fn prints into a FILE. */
struct capture {
        FILE *f;
        char *buf;
        size_t len;
};

static void capture_begin(struct capture *c) {
        c->buf = NULL;
        c->len = 0;
        c->f = open_memstream(&c->buf, &c->len);
        assert_non_null(c->f);
}

static const char *capture_end(struct capture *c) {
        assert_int_equal(fclose(c->f), 0);
        return c->buf;
}

/* Serialises a value on one line. */
static const char *plain(json_object *v) {
        return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void check_scaled_u64(uint64_t v, unsigned pow10, const char *want) {
        char buf[32];

        assert_int_equal(format_scaled_u64(v, pow10, buf, sizeof(buf)), 0);
        assert_string_equal(buf, want);
}

static void check_scaled_i64(int64_t v, unsigned pow10, const char *want) {
        char buf[32];

        assert_int_equal(format_scaled_i64(v, pow10, buf, sizeof(buf)), 0);
        assert_string_equal(buf, want);
}

static void test_format_scaled(void **state) {
        char small[4];

        check_scaled_u64(139000000, 6, "139");
        check_scaled_u64(139500000, 6, "139.5");
        check_scaled_u64(749999999, 6, "749.999999");
        check_scaled_u64(1, 6, "0.000001");
        check_scaled_u64(0, 6, "0");
        check_scaled_u64(41000, 3, "41");
        check_scaled_u64(41250, 3, "41.25");
        check_scaled_u64(2500, 3, "2.5");
        check_scaled_u64(32000, 3, "32");
        check_scaled_u64(UINT64_MAX - 1, 0, "18446744073709551614");
        check_scaled_u64(UINT64_MAX - 1, 18, "18.446744073709551614");
        check_scaled_i64(-5500, 3, "-5.5");
        check_scaled_i64(-5000, 3, "-5");
        check_scaled_i64(-1, 3, "-0.001");
        check_scaled_i64(INT64_MIN, 0, "-9223372036854775808");
        check_scaled_i64(INT64_MIN, 6, "-9223372036854.775808");

        assert_int_equal(format_scaled_u64(123456, 0, small, sizeof(small)), -ENOBUFS);
        assert_int_equal(format_scaled_u64(1, 19, small, sizeof(small)), -EINVAL);
}

static void test_json_numbers(void **state) {
        json_object *v;

        /* whole values stay integers */
        v = json_scaled_i64(41000, 3);
        assert_true(json_object_is_type(v, json_type_int));
        assert_string_equal(plain(v), "41");
        json_object_put(v);

        v = json_scaled_u64(750000000, 6);
        assert_true(json_object_is_type(v, json_type_int));
        assert_string_equal(plain(v), "750");
        json_object_put(v);

        /* fractions are exact decimals, never 0.10000000000000001 */
        v = json_scaled_i64(100, 3);
        assert_true(json_object_is_type(v, json_type_double));
        assert_string_equal(plain(v), "0.1");
        json_object_put(v);

        v = json_scaled_i64(-5500, 3);
        assert_string_equal(plain(v), "-5.5");
        json_object_put(v);

        v = json_scaled_u64(123456789, 6);
        assert_string_equal(plain(v), "123.456789");
        assert_true(json_object_get_double(v) > 123.456 && json_object_get_double(v) < 123.457);
        json_object_put(v);

        v = json_scaled_i64(0, 6);
        assert_string_equal(plain(v), "0");
        json_object_put(v);

        /* the largest counters keep every digit */
        v = json_scaled_u64(UINT64_MAX - 1, 0);
        assert_string_equal(plain(v), "18446744073709551614");
        json_object_put(v);

        /* unavailable is null, never "N/A" */
        assert_null(json_scaled_u64(OUTPUT_NA, 6));
        assert_null(json_u64_or_null(OUTPUT_NA));
        assert_null(json_string_or_null(NULL));
        v = json_u64_or_null(0);
        assert_string_equal(plain(v), "0");
        json_object_put(v);

        v = json_hex(0x1002, 4);
        assert_string_equal(json_object_get_string(v), "0x1002");
        json_object_put(v);
        v = json_hex(0x74a1, 4);
        assert_string_equal(json_object_get_string(v), "0x74a1");
        json_object_put(v);
        v = json_hex(0, 2);
        assert_string_equal(json_object_get_string(v), "0x00");
        json_object_put(v);
}

static void test_json_document(void **state) {
        struct timespec ts = { .tv_sec = 1738311302, .tv_nsec = 123999999 };
        struct capture cap;
        json_object *doc, *gpu, *gpus, *errors;

        doc = document_new("metric", &ts, "node1");
        gpus = json_object_new_array();
        gpu = json_object_new_object();
        json_object_object_add(gpu, "gpu", json_object_new_int(0));
        json_object_object_add(gpu, "power_w", json_scaled_i64(139500000, 6));
        json_object_object_add(gpu, "cap_w", json_scaled_u64(OUTPUT_NA, 6));
        json_object_object_add(gpu, "temp_c", json_scaled_i64(41000, 3));
        json_object_array_add(gpus, gpu);
        json_object_object_add(doc, "gpus", gpus);
        errors = json_object_new_array();
        json_object_array_add(errors, error_entry_new(0, "power.cap_w", -EINVAL, "bad"));
        json_object_array_add(errors, error_entry_new(-1, NULL, 0, "library message"));
        json_object_object_add(doc, "errors", errors);

        capture_begin(&cap);
        assert_int_equal(output_json(cap.f, doc, true), 0);
        assert_string_equal(capture_end(&cap),
                            "{\"schema\":\"amdsmi/1\",\"timestamp\":\"2025-01-31T08:15:02.123Z\","
                            "\"hostname\":\"node1\",\"command\":\"metric\",\"gpus\":[{\"gpu\":0,"
                            "\"power_w\":139.5,\"cap_w\":null,\"temp_c\":41}],\"errors\":["
                            "{\"gpu\":0,\"field\":\"power.cap_w\",\"errno\":\"EINVAL\","
                            "\"message\":\"bad\"},{\"gpu\":null,\"field\":null,\"errno\":null,"
                            "\"message\":\"library message\"}]}\n");
        free(cap.buf);

        /* pretty: same content over several lines, still one object */
        capture_begin(&cap);
        assert_int_equal(output_json(cap.f, doc, false), 0);
        capture_end(&cap);
        assert_non_null(strstr(cap.buf, "\n  \"schema\": \"amdsmi/1\""));
        assert_non_null(strstr(cap.buf, "\"cap_w\": null"));
        assert_null(strstr(cap.buf, "\\/"));
        free(cap.buf);

        /* an empty array stays "[]" when pretty, and the document stays printable */
        json_object_object_add(doc, "errors", json_object_new_array());
        capture_begin(&cap);
        assert_int_equal(output_json(cap.f, doc, false), 0);
        capture_end(&cap);
        assert_non_null(strstr(cap.buf, "\"errors\": []\n}"));
        assert_int_equal(cap.buf[0], '{');
        assert_string_equal(cap.buf + strlen(cap.buf) - 2, "}\n");
        free(cap.buf);

        json_object_put(doc);
}

static void test_timestamp(void **state) {
        struct timespec ts = { .tv_sec = 0, .tv_nsec = 0 };
        char buf[40];

        assert_int_equal(format_timestamp(&ts, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
        ts = (struct timespec){ .tv_sec = 1738311302, .tv_nsec = 999999999 };
        assert_int_equal(format_timestamp(&ts, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "2025-01-31T08:15:02.999Z");
        assert_int_equal(format_timestamp(&ts, buf, 10), -ENOBUFS);
}

static void test_parse_timestamp(void **state) {
        static const char *const bad[] = {
                "", "2025-01-31", "2025-01-31T08:15:02Z", "2025-01-31T08:15:02.1Z",
                "2025-01-31T08:15:02.123", "2025-01-31T08:15:02.123Zx", "2025-13-31T08:15:02.123Z",
                "2025-00-31T08:15:02.123Z", "2025-01-31T24:15:02.123Z", "2025-01-31T08:60:02.123Z",
                "2025-01-31 08:15:02.123Z", "x025-01-31T08:15:02.123Z",
        };
        struct timespec ts = {}, back;
        char buf[40];

        assert_int_equal(parse_timestamp("2025-01-31T08:15:02.999Z", &ts), 0);
        assert_int_equal(ts.tv_sec, 1738311302);
        assert_int_equal(ts.tv_nsec, 999000000);
        /* what format_timestamp() writes comes back */
        back = (struct timespec){ .tv_sec = 1764825205, .tv_nsec = 557123456 };
        assert_int_equal(format_timestamp(&back, buf, sizeof(buf)), 0);
        assert_int_equal(parse_timestamp(buf, &ts), 0);
        assert_int_equal(ts.tv_sec, back.tv_sec);
        assert_int_equal(ts.tv_nsec, 557000000);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ts = (struct timespec){ .tv_sec = 7 };
                assert_int_equal(parse_timestamp(bad[i], &ts), -EINVAL);
                assert_int_equal(ts.tv_sec, 7);
        }
        assert_int_equal(parse_timestamp(NULL, &ts), -EINVAL);
}

static void test_csv_quote(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "", "" },
                { "plain", "plain" },
                { "MI300X", "MI300X" },
                { "a,b", "\"a,b\"" },
                { "say \"hi\"", "\"say \"\"hi\"\"\"" },
                { "\"", "\"\"\"\"" },
                { "two\nlines", "\"two\nlines\"" },
                { "cr\r", "\"cr\r\"" },
                { " lead", "\" lead\"" },
                { "trail ", "\"trail \"" },
                { "in side", "in side" },
                { "1;2;3", "1;2;3" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *q = csv_quote(cases[i].in);

                assert_non_null(q);
                assert_string_equal(q, cases[i].out);
                free(q);
        }
        {
                char *q = csv_quote(NULL);

                assert_string_equal(q, "");
                free(q);
        }
}

static json_object *parse(const char *s) {
        json_object *v = json_tokener_parse(s);

        assert_non_null(v);
        return v;
}

static void check_cell(json_object *v, enum output_format fmt, unsigned flags, const char *want) {
        char *c = output_cell(v, fmt, flags);

        if (!want) {
                assert_null(c);
                return;
        }
        assert_non_null(c);
        assert_string_equal(c, want);
        free(c);
}

static void test_cells(void **state) {
        json_object *v;

        check_cell(NULL, OUTPUT_CSV, 0, NULL);

        v = parse("[1, null, 3]");
        check_cell(v, OUTPUT_CSV, 0, "1;;3");
        check_cell(v, OUTPUT_TABLE, 0, "1,N/A,3");
        json_object_put(v);

        v = parse("[]");
        check_cell(v, OUTPUT_CSV, 0, "");
        check_cell(v, OUTPUT_TABLE, 0, "-");
        json_object_put(v);

        v = parse("[\"a\", \"b\"]");
        check_cell(v, OUTPUT_CSV, 0, "a;b");
        json_object_put(v);

        v = json_object_new_boolean(1);
        check_cell(v, OUTPUT_CSV, 0, "true");
        check_cell(v, OUTPUT_TABLE, 0, "yes");
        json_object_put(v);

        v = json_object_new_int(4098);
        check_cell(v, OUTPUT_CSV, COLUMN_HEX, "4098");
        check_cell(v, OUTPUT_TABLE, COLUMN_HEX, "0x1002");
        json_object_put(v);

        v = json_object_new_uint64(UINT64_C(206141652992));
        check_cell(v, OUTPUT_CSV, COLUMN_MIB, "206141652992");
        check_cell(v, OUTPUT_TABLE, COLUMN_MIB, "196592");
        json_object_put(v);

        v = json_scaled_i64(41500, 3);
        check_cell(v, OUTPUT_CSV, 0, "41.5");
        check_cell(v, OUTPUT_TABLE, 0, "41.5");
        check_cell(v, OUTPUT_CSV, COLUMN_WHOLE, "41.5");
        check_cell(v, OUTPUT_TABLE, COLUMN_WHOLE, "41");
        json_object_put(v);

        v = json_scaled_i64(-500, 3);
        check_cell(v, OUTPUT_TABLE, COLUMN_WHOLE, "0");
        json_object_put(v);

        v = parse("{\"a\": 1, \"b\": \"x/y\"}");
        check_cell(v, OUTPUT_CSV, 0, "{\"a\":1,\"b\":\"x/y\"}");
        json_object_put(v);
}

static void check_path(json_object *root, const char *path, const char *want) {
        json_object *v = json_path_get(root, path);

        if (!want) {
                if (v)
                        fail_msg("%s: got %s", path, plain(v));
                return;
        }
        if (!v)
                fail_msg("%s: nothing", path);
        assert_string_equal(plain(v), want);
        json_object_put(v);
}

static void test_paths(void **state) {
        json_object *root =
                parse("{\"gpu\": 0, \"power\": {\"power_w\": 139, \"cap_w\": null, \"ppt1\": null},"
                      " \"firmware\": [{\"name\": \"mec\", \"version\": 155},"
                      "                {\"name\": \"sos\", \"version\": 7}],"
                      " \"partitions\": [{\"partition\": 0, \"busy\": [1, 2]},"
                      "                  {\"partition\": 3, \"busy\": null}]}");

        check_path(root, "gpu", "0");
        check_path(root, "power.power_w", "139");
        check_path(root, "power.cap_w", NULL);
        check_path(root, "power.ppt1.cap_w", NULL);
        check_path(root, "power.nothing", NULL);
        check_path(root, "gpu.deeper", NULL);
        {
                json_object *self = json_path_get(root, "");

                assert_ptr_equal(self, root);
                json_object_put(self);
        }
        check_path(root, "firmware[].name", "[\"mec\",\"sos\"]");
        check_path(root, "firmware[name=sos].version", "7");
        check_path(root, "firmware[name=smc].version", NULL);
        check_path(root, "partitions[partition=3].partition", "3");
        check_path(root, "partitions[partition=0].busy", "[1,2]");
        check_path(root, "partitions[partition=3].busy", NULL);
        check_path(root, "partitions[].busy", "[[1,2],null]");
        check_path(root, "power[]", NULL);
        check_path(root, "firmware[name", NULL);
        check_path(NULL, "gpu", NULL);
        json_object_put(root);
}

static void add_columns(struct columns *cols) {
        assert_int_equal(columns_add(cols, "gpu", "GPU", "gpu", 0), 0);
        assert_int_equal(columns_add(cols, "product", "PRODUCT", "product", 0), 0);
        assert_int_equal(columns_add(cols, "power_w", "POWER (W)", "power.power_w", 0), 0);
        assert_int_equal(columns_add(cols, "temp_mem_c", "MEM (°C)", "temperatures.mem_c", 0), 0);
        assert_int_equal(columns_add(cols, "clocks_mhz", NULL, "clocks", 0), 0);
        assert_int_equal(columns_add(cols, NULL, "NOTE", "note", 0), 0);
}

static json_object *sample_rows(void) {
        return parse("[{\"gpu\": 0, \"product\": \"MI300X\", \"power\": {\"power_w\": 139.5},"
                     "  \"temperatures\": {\"mem_c\": 38}, \"clocks\": [2100, null, 1900],"
                     "  \"note\": \"x\"},"
                     " {\"gpu\": 1, \"product\": \"AMD GPU, \\\"rev\\\" 2\", \"power\": null,"
                     "  \"temperatures\": {}, \"clocks\": null, \"note\": \"longer note\"}]");
}

static void test_csv(void **state) {
        struct columns cols = {};
        struct capture cap;
        json_object *rows = sample_rows();

        add_columns(&cols);
        assert_true(columns_has(&cols, "power_w"));
        assert_false(columns_has(&cols, "NOTE"));
        assert_false(columns_has(&cols, "nothing"));

        capture_begin(&cap);
        assert_int_equal(output_csv_header(cap.f, &cols), 0);
        assert_int_equal(output_csv_rows(cap.f, &cols, rows), 0);
        assert_string_equal(capture_end(&cap), "gpu,product,power_w,temp_mem_c,clocks_mhz\n"
                                               "0,MI300X,139.5,38,2100;;1900\n"
                                               "1,\"AMD GPU, \"\"rev\"\" 2\",,,\n");
        free(cap.buf);

        columns_free(&cols);
        assert_int_equal(cols.n, 0);
        json_object_put(rows);
}

static void test_table(void **state) {
        struct columns cols = {};
        struct capture cap;
        json_object *rows = sample_rows();

        add_columns(&cols);
        capture_begin(&cap);
        assert_int_equal(output_table(cap.f, &cols, rows, ""), 0);
        /* numbers right-aligned, text left-aligned, N/A for null, no trailing blanks */
        assert_string_equal(capture_end(&cap),
                            "GPU  PRODUCT           POWER (W)  MEM (°C)  NOTE\n"
                            "  0  MI300X                139.5        38  x\n"
                            "  1  AMD GPU, \"rev\" 2        N/A       N/A  longer note\n");
        free(cap.buf);

        capture_begin(&cap);
        assert_int_equal(output_kv(cap.f, &cols, json_object_array_get_idx(rows, 1), "  "), 0);
        assert_string_equal(capture_end(&cap), "  GPU        1\n"
                                               "  PRODUCT    AMD GPU, \"rev\" 2\n"
                                               "  POWER (W)  N/A\n"
                                               "  MEM (°C)   N/A\n"
                                               "  NOTE       longer note\n");
        free(cap.buf);

        /* no rows: the header alone */
        capture_begin(&cap);
        {
                json_object *empty = json_object_new_array();

                assert_int_equal(output_table(cap.f, &cols, empty, "> "), 0);
                json_object_put(empty);
        }
        assert_string_equal(capture_end(&cap), "> GPU  PRODUCT  POWER (W)  MEM (°C)  NOTE\n");
        free(cap.buf);
        columns_free(&cols);

        /* COLUMN_NONE: null is "none" there, "-"; the CSV cell stays empty */
        assert_int_equal(columns_add(&cols, "power_w", "POWER (W)", "power.power_w", COLUMN_NONE),
                         0);
        capture_begin(&cap);
        assert_int_equal(output_table(cap.f, &cols, rows, ""), 0);
        assert_string_equal(capture_end(&cap), "POWER (W)\n"
                                               "    139.5\n"
                                               "        -\n");
        free(cap.buf);
        capture_begin(&cap);
        assert_int_equal(output_csv_rows(cap.f, &cols, rows), 0);
        assert_string_equal(capture_end(&cap), "139.5\n\n");
        free(cap.buf);

        columns_free(&cols);
        json_object_put(rows);
}

static void test_nested_table(void **state) {
        static const struct column_def parent_defs[] = { { "gpu", "GPU", "gpu", 0 },
                                                         { "name", "NAME", "name", 0 } };
        static const struct column_def child_defs[] = { { "part", "PART", "part", 0 },
                                                        { "xcc", "XCC", "xcc", 0 } };
        struct columns pcols = {}, ccols = {};
        json_object *parents = json_object_new_array(), *children = json_object_new_array();
        const size_t counts[] = { 2, 0, 1 };
        const char *const names[] = { "a", "bbbbbb", "c" };
        struct capture cap;

        assert_int_equal(columns_add_defs(&pcols, parent_defs, 2), 0);
        assert_int_equal(columns_add_defs(&ccols, child_defs, 2), 0);
        for (int i = 0; i < 3; i++) {
                json_object *o = json_object_new_object();

                json_object_object_add(o, "gpu", json_object_new_int(i));
                json_object_object_add(o, "name", json_object_new_string(names[i]));
                json_object_array_add(parents, o);
        }
        for (int i = 0; i < 3; i++) {
                json_object *o = json_object_new_object();

                json_object_object_add(o, "part", json_object_new_int(i));
                json_object_object_add(o, "xcc", json_object_new_int(i == 2 ? 100 : 1));
                json_object_array_add(children, o);
        }
        /* each parent's children below it, with their header; a parent without none; the
         * columns align over all parents and over all children */
        capture_begin(&cap);
        assert_int_equal(output_nested_table(cap.f, &pcols, parents, &ccols, children, counts,
                                             "    "),
                         0);
        assert_string_equal(capture_end(&cap), "GPU  NAME\n"
                                               "  0  a\n"
                                               "    PART  XCC\n"
                                               "       0    1\n"
                                               "       1    1\n"
                                               "  1  bbbbbb\n"
                                               "  2  c\n"
                                               "    PART  XCC\n"
                                               "       2  100\n");
        free(cap.buf);
        columns_free(&pcols);
        columns_free(&ccols);
        json_object_put(parents);
        json_object_put(children);
}

static void test_column_defs(void **state) {
        static const struct column_def defs[] = {
                { "a", "A", "a", 0 },
                { "b", NULL, "b", COLUMN_HEX },
        };
        struct columns cols = {};

        assert_int_equal(columns_add_defs(&cols, defs, 2), 0);
        assert_int_equal(cols.n, 2);
        assert_string_equal(cols.v[1].name, "b");
        assert_null(cols.v[1].header);
        assert_int_equal(cols.v[1].flags, COLUMN_HEX);
        columns_free(&cols);
}

static void test_exit_codes(void **state) {
        static const struct {
                int err, code;
        } table[] = {
                { 0, EXIT_OK },
                { EINVAL, EXIT_USAGE },
                { ENOENT, EXIT_NOT_FOUND },
                { ENODEV, EXIT_NOT_FOUND },
                { ENXIO, EXIT_NOT_FOUND },
                { ESTALE, EXIT_NOT_FOUND },
                { EOPNOTSUPP, EXIT_NOT_SUPPORTED },
                { ENOTSUP, EXIT_NOT_SUPPORTED },
                { ENOSYS, EXIT_NOT_SUPPORTED },
                { ENODATA, EXIT_NOT_SUPPORTED },
                { ENOTTY, EXIT_NOT_SUPPORTED },
                { EBUSY, EXIT_BUSY },
                { EAGAIN, EXIT_BUSY },
                { ETIMEDOUT, EXIT_BUSY },
                { EACCES, EXIT_PERMISSION },
                { EPERM, EXIT_PERMISSION },
                { ERANGE, EXIT_OUT_OF_RANGE },
                { EDOM, EXIT_OUT_OF_RANGE },
                { EOVERFLOW, EXIT_OUT_OF_RANGE },
                { ERELOAD_REQUIRED, EXIT_RELOAD_REQUIRED },
                { EIO, EXIT_DEVICE_ERROR },
                { ETIME, EXIT_DEVICE_ERROR },
                { EBADMSG, EXIT_DEVICE_ERROR },
                { ENOMSG, EXIT_DEVICE_ERROR },
                { EPROTO, EXIT_DEVICE_ERROR },
                { EREMOTEIO, EXIT_DEVICE_ERROR },
                { ENOMEM, EXIT_GENERIC },
                { EPIPE, EXIT_GENERIC },
                { ENOSPC, EXIT_GENERIC },
                { 4000, EXIT_GENERIC },
        };

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                assert_int_equal(exit_code_from_errno(-table[i].err), table[i].code);
                /* the sign does not matter */
                assert_int_equal(exit_code_from_errno(table[i].err), table[i].code);
        }
        /* the documented numbers are fixed: scripts rely on them */
        assert_int_equal(EXIT_GENERIC, 1);
        assert_int_equal(EXIT_USAGE, 2);
        assert_int_equal(EXIT_NOT_FOUND, 3);
        assert_int_equal(EXIT_NOT_SUPPORTED, 4);
        assert_int_equal(EXIT_BUSY, 5);
        assert_int_equal(EXIT_PERMISSION, 6);
        assert_int_equal(EXIT_OUT_OF_RANGE, 7);
        assert_int_equal(EXIT_RELOAD_REQUIRED, 8);
        assert_int_equal(EXIT_DEVICE_ERROR, 9);
}

static void test_errno_names(void **state) {
        char buf[16];

        assert_string_equal(errno_name(-ENOENT, buf, sizeof(buf)), "ENOENT");
        assert_string_equal(errno_name(EINVAL, buf, sizeof(buf)), "EINVAL");
        assert_string_equal(errno_name(-ENODATA, buf, sizeof(buf)), "ENODATA");
        assert_string_equal(errno_name(-4000, buf, sizeof(buf)), "E4000");
}

static void test_error_entry(void **state) {
        json_object *e;

        e = error_entry_new(3, "temperatures.junction_c", -EIO, "Input/output error");
        assert_string_equal(plain(e), "{\"gpu\":3,\"field\":\"temperatures.junction_c\","
                                      "\"errno\":\"EIO\",\"message\":\"Input/output error\"}");
        json_object_put(e);
        e = error_entry_new(-1, NULL, 0, NULL);
        assert_string_equal(plain(e), "{\"gpu\":null,\"field\":null,\"errno\":null,"
                                      "\"message\":\"\"}");
        json_object_put(e);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_format_scaled), cmocka_unit_test(test_json_numbers),
                cmocka_unit_test(test_json_document), cmocka_unit_test(test_timestamp),
                cmocka_unit_test(test_parse_timestamp),
                cmocka_unit_test(test_csv_quote),     cmocka_unit_test(test_cells),
                cmocka_unit_test(test_paths),         cmocka_unit_test(test_csv),
                cmocka_unit_test(test_table),         cmocka_unit_test(test_nested_table),
                cmocka_unit_test(test_column_defs),
                cmocka_unit_test(test_exit_codes),    cmocka_unit_test(test_errno_names),
                cmocka_unit_test(test_error_entry),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
