/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of history.jsonl (daemon/history.c): the input as the newest file
 * (history.jsonl), then as the older generation (history.jsonl.1) under a newest file of one
 * known line, read by history_read() on a private STATE_DIRECTORY. Checks the documented
 * result: an array of objects with exactly the 13 keys in order and values of their types and
 * ranges (or null); no more entries and skipped lines than lines; the last entry alone
 * (max 1) equals the last of all; the newest file's entries come last; and an entry with
 * plain values, appended by history_append() to a fresh file, reads back equal.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz-util.h"
#include "history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = { "time", "time_usec", "via",    "uid",    "pid",
                                    "sender", "gpu",     "change", "old",    "new",
                                    "result", "errno",   "message" };
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

static const char known_line[] =
        "{\"time\":\"2026-12-03T06:12:01.123Z\",\"time_usec\":1796278321123456,"
        "\"via\":\"amdsmid\",\"uid\":0,\"pid\":4242,\"sender\":\":1.42\",\"gpu\":\"0000:c1:00.0\","
        "\"change\":\"compute_mode\",\"old\":\"SPX\",\"new\":\"CPX\",\"result\":\"ok\","
        "\"errno\":0,\"message\":\"known\"}\n";

static bool plain(json_object *v) {
        const char *s;

        if (!v)
                return true;
        s = json_object_get_string(v);
        if (strlen(s) > 200)
                return false;
        for (; *s; s++)
                if (*s < 0x20 || *s > 0x7e)
                        return false;
        return true;
}

static int64_t int_or(json_object *o, const char *key, int64_t dflt) {
        json_object *v = json_object_object_get(o, key);

        return v ? json_object_get_int64(v) : dflt;
}

static const char *str_or_null(json_object *o, const char *key) {
        json_object *v = json_object_object_get(o, key);

        return v ? json_object_get_string(v) : NULL;
}

/* Checks the shape of every entry; returns whether the last one is eligible for a round trip. */
static void check_entry(json_object *e) {
        size_t k = 0;

        if (!json_object_is_type(e, json_type_object))
                abort();
        json_object_object_foreach(e, key, val) {
                static const json_type types[N_KEYS] = {
                        json_type_string, json_type_int,    json_type_string, json_type_int,
                        json_type_int,    json_type_string, json_type_string, json_type_string,
                        json_type_string, json_type_string, json_type_string, json_type_int,
                        json_type_string,
                };

                if (k >= N_KEYS || strcmp(key, keys[k]) != 0)
                        abort(); /* exactly these keys, in this order */
                if (val && !json_object_is_type(val, types[k]))
                        abort();
                k++;
        }
        if (k != N_KEYS)
                abort();
        if (!json_object_object_get(e, "time") || !json_object_object_get(e, "time_usec") ||
            !json_object_object_get(e, "change"))
                abort(); /* never null */
        if (int_or(e, "time_usec", 0) < 0 || int_or(e, "uid", 0) < 0 ||
            int_or(e, "uid", 0) > (int64_t) UINT32_MAX || int_or(e, "pid", 1) < 1 ||
            int_or(e, "errno", 0) > 0 || int_or(e, "errno", 0) < -4095)
                abort();
        if (json_object_object_get(e, "errno") && json_object_object_get(e, "result") &&
            (int_or(e, "errno", 0) == 0) != (strcmp(str_or_null(e, "result"), "ok") == 0))
                abort(); /* "ok" exactly when errno is 0 */
}

static size_t count_lines(const uint8_t *data, size_t size) {
        size_t n = size > 0 && data[size - 1] != '\n';

        for (size_t i = 0; i < size; i++)
                n += data[i] == '\n';
        return n;
}

/* Appends @e as history_append() would have written it and checks it reads back equal. */
static void round_trip(json_object *e) {
        const char *fields[] = { "via", "sender", "gpu", "change", "old", "new", "message" };
        struct history_entry he = {};
        json_object *all = NULL, *back;
        unsigned skipped = 0;

        if (!json_object_object_get(e, "uid") || !json_object_object_get(e, "pid") ||
            !json_object_object_get(e, "errno") || int_or(e, "time_usec", 0) == 0)
                return;
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
                if (!plain(json_object_object_get(e, fields[i])))
                        return;
        he.time_usec = (uint64_t) int_or(e, "time_usec", 0);
        he.via = str_or_null(e, "via");
        he.uid = (uid_t) int_or(e, "uid", 0);
        he.pid = (pid_t) int_or(e, "pid", 0);
        he.sender = str_or_null(e, "sender");
        he.gpu = str_or_null(e, "gpu");
        he.change = str_or_null(e, "change");
        he.old_value = str_or_null(e, "old");
        he.new_value = str_or_null(e, "new");
        he.result = (int) int_or(e, "errno", 0);
        he.message = str_or_null(e, "message");

        fuzz_rm_rf(fuzz_path("state"));
        if (history_append(&he, 0) != 0)
                abort();
        if (history_read(0, &all, &skipped) != 0 || skipped != 0 ||
            json_object_array_length(all) != 1)
                abort();
        back = json_object_array_get_idx(all, 0);
        if (!json_object_equal(back, e)) {
                fprintf(stderr, "round trip differs:\n%s\n%s\n", json_object_to_json_string(e),
                        json_object_to_json_string(back));
                abort();
        }
        json_object_put(all);
}

static json_object *read_all(unsigned max, unsigned *ret_skipped) {
        json_object *a = NULL;
        int r = history_read(max, &a, ret_skipped);

        if (r == -ENOMEM)
                return NULL;
        if (r != 0 || !json_object_is_type(a, json_type_array))
                abort();
        return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        json_object *all, *last, *last_entry = NULL;
        unsigned skipped = 0, skipped1 = 0;
        size_t n, lines = count_lines(data, size);

        if (size > 256 * 1024)
                return 0;
        fuzz_state_directory();

        /* the newest file */
        fuzz_rm_rf(fuzz_path("state"));
        fuzz_write("state/history.jsonl", data, size);
        all = read_all(0, &skipped);
        if (!all)
                return 0;
        n = json_object_array_length(all);
        if (n + skipped > lines)
                abort();
        for (size_t i = 0; i < n; i++)
                check_entry(json_object_array_get_idx(all, i));
        last = read_all(1, &skipped1);
        if (last && json_object_array_length(last) != (n > 0))
                abort();
        if (last && n > 0 &&
            !json_object_equal(json_object_array_get_idx(last, 0),
                               json_object_array_get_idx(all, n - 1)))
                abort(); /* the last entry is the same read alone */
        json_object_put(last);
        if (n > 0)
                last_entry = json_object_get(json_object_array_get_idx(all, n - 1));
        json_object_put(all);

        /* the older generation, under a newest file of one line */
        fuzz_rm_rf(fuzz_path("state"));
        fuzz_write("state/history.jsonl.1", data, size);
        fuzz_write("state/history.jsonl", known_line, strlen(known_line));
        all = read_all(0, &skipped);
        if (all) {
                json_object *k;

                n = json_object_array_length(all);
                if (n == 0 || n - 1 + skipped > lines)
                        abort();
                k = json_object_object_get(json_object_array_get_idx(all, n - 1), "message");
                if (!k || strcmp(json_object_get_string(k), "known") != 0)
                        abort(); /* the newest file's entry comes last */
                json_object_put(all);
        }

        if (last_entry) {
                round_trip(last_entry);
                json_object_put(last_entry);
        }
        return 0;
}
