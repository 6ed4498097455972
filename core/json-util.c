/* SPDX-License-Identifier: MIT */
/* JSON values and the head of every amdsmi/1 document (json-util.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit-codes.h"
#include "json-util.h"
#include "macro.h"

static const uint64_t pow10_table[] = {
        UINT64_C(1),
        UINT64_C(10),
        UINT64_C(100),
        UINT64_C(1000),
        UINT64_C(10000),
        UINT64_C(100000),
        UINT64_C(1000000),
        UINT64_C(10000000),
        UINT64_C(100000000),
        UINT64_C(1000000000),
        UINT64_C(10000000000),
        UINT64_C(100000000000),
        UINT64_C(1000000000000),
        UINT64_C(10000000000000),
        UINT64_C(100000000000000),
        UINT64_C(1000000000000000),
        UINT64_C(10000000000000000),
        UINT64_C(100000000000000000),
        UINT64_C(1000000000000000000),
};

static int format_scaled(bool negative, uint64_t mag, unsigned pow10, char *buf, size_t len) {
        char frac[24];
        uint64_t div, whole, rest;
        int n;

        if (pow10 >= sizeof(pow10_table) / sizeof(pow10_table[0]))
                return -EINVAL;
        div = pow10_table[pow10];
        whole = mag / div;
        rest = mag % div;

        if (rest == 0) {
                n = snprintf(buf, len, "%s%" PRIu64, negative ? "-" : "", whole);
        } else {
                size_t k;

                snprintf(frac, sizeof(frac), "%0*" PRIu64, (int) pow10, rest);
                k = strlen(frac);
                while (k > 0 && frac[k - 1] == '0')
                        frac[--k] = '\0';
                n = snprintf(buf, len, "%s%" PRIu64 ".%s", negative ? "-" : "", whole, frac);
        }
        if (n < 0 || (size_t) n >= len)
                return -ENOBUFS;
        return 0;
}

int format_scaled_u64(uint64_t v, unsigned pow10, char *buf, size_t len) {
        return format_scaled(false, v, pow10, buf, len);
}

int format_scaled_i64(int64_t v, unsigned pow10, char *buf, size_t len) {
        uint64_t mag = v < 0 ? (uint64_t) 0 - (uint64_t) v : (uint64_t) v;

        return format_scaled(v < 0, mag, pow10, buf, len);
}

static json_object *json_scaled(bool negative, uint64_t mag, unsigned pow10) {
        char buf[48];
        uint64_t div;

        if (pow10 >= sizeof(pow10_table) / sizeof(pow10_table[0]))
                return NULL;
        div = pow10_table[pow10];
        if (mag % div == 0) {
                uint64_t whole = mag / div;

                if (!negative)
                        return json_object_new_uint64(whole);
                return json_object_new_int64(whole > (uint64_t) INT64_MAX ? INT64_MIN
                                                                          : -(int64_t) whole);
        }
        if (format_scaled(negative, mag, pow10, buf, sizeof(buf)) < 0)
                return NULL;
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

json_object *json_scaled_i64(int64_t v, unsigned pow10) {
        uint64_t mag = v < 0 ? (uint64_t) 0 - (uint64_t) v : (uint64_t) v;

        return json_scaled(v < 0, mag, pow10);
}

json_object *json_scaled_u64(uint64_t v, unsigned pow10) {
        if (v == OUTPUT_NA)
                return NULL;
        return json_scaled(false, v, pow10);
}

json_object *json_u64_or_null(uint64_t v) {
        if (v == OUTPUT_NA)
                return NULL;
        return json_object_new_uint64(v);
}

json_object *json_string_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

json_object *json_hex(uint64_t v, int digits) {
        char buf[32];

        snprintf(buf, sizeof(buf), "0x%0*" PRIx64, digits, v);
        return json_object_new_string(buf);
}

int format_timestamp(const struct timespec *ts, char *buf, size_t len) {
        struct tm tm;
        int n;

        /* by hand, not strftime(): that re-reads the time zone file at every call, and a
         * daemon stamps every document */
        if (!gmtime_r(&ts->tv_sec, &tm))
                return -EINVAL;
        n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (long) (ts->tv_nsec / 1000000));
        if (n < 0 || (size_t) n >= len)
                return -ENOBUFS;
        return 0;
}

int parse_timestamp(const char *s, struct timespec *ret) {
        struct tm tm = {};
        int ms, n = 0;
        time_t t;

        if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon,
                         &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &n) != 7 ||
            n != 24 || s[n] != '\0' || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
            tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || ms < 0)
                return -EINVAL;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        t = timegm(&tm);
        if (t == (time_t) -1)
                return -EINVAL;
        *ret = (struct timespec){ .tv_sec = t, .tv_nsec = (long) ms * 1000000L };
        return 0;
}

json_object *document_new(const char *command, const struct timespec *ts, const char *hostname) {
        json_object *doc = json_object_new_object();
        char stamp[40];

        if (!doc)
                return NULL;
        if (format_timestamp(ts, stamp, sizeof(stamp)) < 0)
                stamp[0] = '\0';
        json_object_object_add(doc, "schema", json_object_new_string(OUTPUT_SCHEMA));
        json_object_object_add(doc, "timestamp", json_object_new_string(stamp));
        json_object_object_add(doc, "hostname", json_object_new_string(hostname ? hostname : ""));
        json_object_object_add(doc, "command", json_string_or_null(command));
        return doc;
}

json_object *error_entry_new(int gpu, const char *field, int r, const char *message) {
        json_object *e = json_object_new_object();
        char buf[32];

        if (!e)
                return NULL;
        json_object_object_add(e, "gpu", gpu >= 0 ? json_object_new_int(gpu) : NULL);
        json_object_object_add(e, "field", json_string_or_null(field));
        json_object_object_add(e, "errno",
                               r != 0 ? json_object_new_string(errno_name(r, buf, sizeof(buf)))
                                      : NULL);
        json_object_object_add(e, "message", json_object_new_string(message ? message : ""));
        return e;
}

static int empty_array_to_json_string(json_object *v, struct printbuf *pb, int level, int flags) {
        return printbuf_strappend(pb, "[]");
}

/* json-c prints an empty array as "[\n  ]" when pretty; make it "[]". */
static void pretty_empty_arrays(json_object *v) {
        if (json_object_is_type(v, json_type_array)) {
                size_t n = json_object_array_length(v);

                if (n == 0)
                        json_object_set_serializer(v, empty_array_to_json_string, NULL, NULL);
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        json_type t = json_object_get_type(e);

                        /* only containers hold arrays (the topology's matrices hold
                         * thousands of numbers) */
                        if (t == json_type_array || t == json_type_object)
                                pretty_empty_arrays(e);
                }
        } else if (json_object_is_type(v, json_type_object)) {
                json_object_object_foreach(v, key, child) {
                        (void) key;
                        pretty_empty_arrays(child);
                }
        }
}

const char *json_document_text(json_object *doc, bool compact) {
        int flags = JSON_C_TO_STRING_NOSLASHESCAPE;

        if (!compact)
                pretty_empty_arrays(doc);
        flags |= compact ? JSON_C_TO_STRING_PLAIN
                         : JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED;
        return json_object_to_json_string_ext(doc, flags);
}

void sanitize_key(const char *in, char *out, size_t len) {
        size_t n = 0;

        if (len == 0)
                return;
        for (; in && *in && n + 1 < len; in++) {
                char ch = *in;

                if (ch >= 'A' && ch <= 'Z')
                        ch = (char) (ch - 'A' + 'a');
                if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
                        ch = '_';
                out[n++] = ch;
        }
        out[n] = '\0';
}
