/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amdsmid.h"

bool strv_contains(char *const *l, const char *s) {
        for (; l && *l; l++)
                if (strcmp(*l, s) == 0)
                        return true;
        return false;
}

bool strv_equal(char **a, char **b) {
        size_t n = strv_length(a);

        if (n != strv_length(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (strcmp(a[i], b[i]) != 0)
                        return false;
        return true;
}

int free_and_strdup(char **dst, const char *src) {
        char *c;

        if (!src)
                src = "";
        if (*dst && strcmp(*dst, src) == 0)
                return 0;
        c = strdup(src);
        if (!c)
                return -ENOMEM;
        free(*dst);
        *dst = c;
        return 1;
}

uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static bool is_ascii(const char *s, size_t len) {
        size_t i = 0;

        for (; i + sizeof(uint64_t) <= len; i += sizeof(uint64_t)) {
                uint64_t w;

                memcpy(&w, s + i, sizeof(w));
                if (w & UINT64_C(0x8080808080808080))
                        return false;
        }
        for (; i < len; i++)
                if ((unsigned char) s[i] & 0x80)
                        return false;
        return true;
}

int bus_append_text(sd_bus_message *m, const char *s) {
        size_t len = strlen(s);
        char *space;
        int r;

        if (!is_ascii(s, len))
                return sd_bus_message_append(m, "s", s); /* validated by sd-bus */
        /* ASCII without NUL is valid UTF-8: copied in as it is */
        r = sd_bus_message_append_string_space(m, len, &space);
        if (r < 0)
                return r;
        memcpy(space, s, len);
        return 0;
}

int bus_reply_string(sd_bus_message *call, const char *s) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(call, &reply);
        if (r < 0)
                return r;
        r = bus_append_text(reply, s);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

int bus_read_options(sd_bus_message *m, bus_option_fn fn, void *userdata, sd_bus_error *error) {
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key;

                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                r = fn(m, key, userdata, error);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m); /* v */
                if (r >= 0)
                        r = sd_bus_message_exit_container(m); /* e */
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

int bus_error_errno(sd_bus_error *error, int r, const char *format, ...) {
        va_list ap;
        char *msg = NULL;

        va_start(ap, format);
        if (vasprintf(&msg, format, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (r >= 0)
                r = -EIO;
        /* sd-bus maps errno to its own names only: ours come from the table */
        if (amdsmi_bus_error_name(r))
                (void) sd_bus_error_set(error, amdsmi_bus_error_name(r), msg ? msg : strerror(-r));
        else
                (void) sd_bus_error_set_errnof(error, -r, "%s", msg ? msg : strerror(-r));
        free(msg);
        return r;
}

int bus_reply_json(sd_bus_message *call, json_object *doc) {
        int r;

        if (!doc)
                return -ENOMEM;
        r = bus_reply_string(call, json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
                                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(doc);
        return r;
}
