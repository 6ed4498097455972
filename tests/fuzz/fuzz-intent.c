/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the intent records (daemon/history.c): the input as
 * <state dir>/intent/1796278321123456-4242-0.json, listed by intent_list() on a private
 * STATE_DIRECTORY. Checks: listing never fails on content; the file is either a record (its id,
 * bounded NUL-terminated gpu and change, a non-empty change, a pid >= 1) or named among the
 * skipped paths, never both; and a record written again by intent_begin() lists back with the
 * same values (detail as the same JSON), after intent_end() removed the original.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz-util.h"
#include "history.h"
#include "parse-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ID "1796278321123456-4242-0"

static bool same_str(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_json_text(const char *a, const char *b) {
        json_object *x, *y;
        bool r;

        if (!a || !b)
                return !a && !b;
        x = json_tokener_parse(a);
        y = json_tokener_parse(b);
        r = x && y && json_object_equal(x, y);
        json_object_put(x);
        json_object_put(y);
        return r;
}

/* Values intent_begin() writes as they are: printable ASCII, not cut. */
static bool plain(const char *s) {
        if (!s)
                return true;
        if (strlen(s) >= HISTORY_FIELD_MAX / 2)
                return false;
        for (; *s; s++)
                if (*s < 0x20 || *s > 0x7e)
                        return false;
        return true;
}

static bool json_text(const char *s) {
        json_object *o = s ? json_tokener_parse(s) : NULL;

        json_object_put(o);
        return !s || o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct intent *l = NULL;
        size_t n = 7;
        char **skipped = NULL;
        int r;

        if (size > 2 * 1024 * 1024)
                return 0;
        fuzz_state_directory();
        fuzz_rm_rf(fuzz_path("state"));
        fuzz_write("state/intent/" ID ".json", data, size);

        r = intent_list(&l, &n, &skipped);
        if (r == -ENOMEM)
                return 0;
        if (r != 0 || n + strv_length(skipped) != 1)
                abort(); /* a record, or skipped */
        if (skipped && (!strstr(skipped[0], "/intent/" ID ".json") || l))
                abort();
        if (n == 1) {
                struct intent i = l[0], *l2 = NULL;
                size_t n2 = 0;
                char **skipped2 = NULL;

                if (strcmp(l[0].id, ID) != 0 || !memchr(l[0].gpu, '\0', sizeof(l[0].gpu)) ||
                    !memchr(l[0].change, '\0', sizeof(l[0].change)) || !l[0].change[0] ||
                    l[0].pid < 1)
                        abort();
                if (intent_end(&l[0]) != 0)
                        abort();
                if (plain(i.gpu) && plain(i.change) && plain(i.old_value) &&
                    plain(i.new_value) && json_text(i.detail)) {
                        memset(i.id, 0, sizeof(i.id));
                        r = intent_begin(&i);
                        if (r != 0) {
                                fprintf(stderr, "intent_begin() refuses a listed record: %s\n",
                                        strerror(-r));
                                abort();
                        }
                        if (intent_list(&l2, &n2, &skipped2) != 0 || n2 != 1 || skipped2)
                                abort();
                        if (strcmp(l2[0].gpu, l[0].gpu) != 0 ||
                            strcmp(l2[0].change, l[0].change) != 0 ||
                            !same_str(l2[0].old_value, l[0].old_value) ||
                            !same_str(l2[0].new_value, l[0].new_value) ||
                            !same_json_text(l2[0].detail, l[0].detail))
                                abort(); /* round trip */
                        intent_list_free(l2, n2);
                }
        }
        intent_list_free(l, n);
        strv_free(skipped);
        return 0;
}
