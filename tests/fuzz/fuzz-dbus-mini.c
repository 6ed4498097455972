/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the CLI's minimal D-Bus client (cli/dbus-mini.c): the input is what the bus
 * sends after a valid "OK <guid>" auth line, on a socketpair whose other end this target
 * holds; then the stream ends. The first byte picks the mode (its high bit: the call carries
 * -g selectors):
 *  0: the rest of the input is the stream, as it is: no crash, no over-read; a returned
 *     document or error message is a NUL-terminated string of the input;
 *  1: the rest after the second byte (up to a NUL) is a document, which this target marshals
 *     as the reply to the call after Hello's reply and a NameAcquired signal (the second
 *     byte's low bit: big endian): the client must return exactly it;
 *  2: as 1, but an error reply (name, the text as message, "{}" as document): the client
 *     must return the name, the message and the document.
 * The first byte's bit 0x40: the call is GetDocumentText, whose reply (mode 1) is the text and
 * the notes ["a note", text]; the client must return both.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dbus-mini.h"
#include "fuzz-util.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define AUTH_OK "OK 0123456789abcdef0123456789abcdef\r\n"
#define INPUT_MAX 65536U

struct out {
        uint8_t *p;
        size_t n, cap, base; /* base: the start of the current message */
        bool be;
};

static void o_bytes(struct out *o, const void *d, size_t n) {
        if (o->n + n > o->cap)
                abort();
        memcpy(o->p + o->n, d, n);
        o->n += n;
}

static void o_align(struct out *o, size_t a) {
        while ((o->n - o->base) % a)
                o->p[o->n++] = 0;
}

static void o_u8(struct out *o, uint8_t v) {
        o_bytes(o, &v, 1);
}

static size_t o_u32(struct out *o, uint32_t v) {
        uint8_t b[4];

        for (unsigned i = 0; i < 4; i++)
                b[o->be ? 3 - i : i] = (uint8_t) (v >> (8 * i));
        o_align(o, 4);
        o_bytes(o, b, 4);
        return o->n - 4;
}

static void o_patch(struct out *o, size_t at, size_t v) {
        for (unsigned i = 0; i < 4; i++)
                o->p[at + (o->be ? 3 - i : i)] = (uint8_t) (v >> (8 * i));
}

static void o_string(struct out *o, const char *s) {
        o_u32(o, (uint32_t) strlen(s));
        o_bytes(o, s, strlen(s) + 1);
}

static void o_sig(struct out *o, const char *s) {
        o_u8(o, (uint8_t) strlen(s));
        o_bytes(o, s, strlen(s) + 1);
}

static void o_field_str(struct out *o, uint8_t code, const char *type, const char *v) {
        o_align(o, 8);
        o_u8(o, code);
        o_sig(o, type);
        if (type[0] == 'g')
                o_sig(o, v);
        else
                o_string(o, v);
}

/* A message of @type whose body is the strings @s1 and @s2 (either may be NULL), or with
 * @notes, @s1 and the array of strings ["a note", @s1]. */
static void o_message(struct out *o, uint8_t type, uint32_t serial, uint32_t reply_serial,
                      const char *error_name, const char *s1, const char *s2, bool notes) {
        size_t body_at, fields_at, fields_start, body_start;

        o->base = o->n;
        o_u8(o, o->be ? 'B' : 'l');
        o_u8(o, type);
        o_u8(o, 0);
        o_u8(o, 1);
        body_at = o_u32(o, 0);
        o_u32(o, serial);
        fields_at = o_u32(o, 0);
        fields_start = o->n;
        if (type == 4) {
                o_field_str(o, 1, "o", "/org/freedesktop/DBus");
                o_field_str(o, 2, "s", "org.freedesktop.DBus");
                o_field_str(o, 3, "s", "NameAcquired");
        } else {
                o_align(o, 8);
                o_u8(o, 5);
                o_sig(o, "u");
                o_u32(o, reply_serial);
        }
        if (error_name)
                o_field_str(o, 4, "s", error_name);
        o_field_str(o, 6, "s", ":1.42");
        o_field_str(o, 7, "s", "org.freedesktop.DBus");
        if (s1)
                o_field_str(o, 8, "g", notes ? "sas" : s2 ? "ss" : "s");
        o_patch(o, fields_at, o->n - fields_start);
        o_align(o, 8);
        body_start = o->n;
        if (s1)
                o_string(o, s1);
        if (s2)
                o_string(o, s2);
        if (s1 && notes) {
                size_t array_at = o_u32(o, 0), array_start = o->n;

                o_string(o, "a note");
                o_string(o, s1);
                o_patch(o, array_at, o->n - array_start);
        }
        o_patch(o, body_at, o->n - body_start);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = NULL, *name = NULL, *message = NULL, *s = NULL;
        _cleanup_strv_free_ char **notes = NULL;
        char *gpus[] = { (char *) "0", (char *) "0000:05:00.0", NULL };
        struct out o = {};
        int fds[2], r, mode;
        bool with_notes;

        if (size < 1 || size > INPUT_MAX)
                return 0;
        mode = (data[0] & 0x3f) % 3;
        with_notes = data[0] & 0x40;
        o.cap = size + 4096;
        o.p = malloc(o.cap);
        if (!o.p)
                abort();
        o_bytes(&o, AUTH_OK, strlen(AUTH_OK));
        if (mode == 0) {
                o_bytes(&o, data + 1, size - 1);
        } else {
                s = size >= 2 ? fuzz_strndup(data + 2, size - 2) : fuzz_strndup(data, 0);
                o.be = size >= 2 && (data[1] & 1);
                o_message(&o, 2, 1, 1, NULL, ":1.42", NULL, false);
                o_message(&o, 4, 2, 0, NULL, ":1.42", NULL, false);
                if (mode == 1)
                        o_message(&o, 2, 3, 2, NULL, s, NULL, with_notes);
                else
                        o_message(&o, 3, 3, 2, "org.amdsmi1.Error.Busy", s, "{}", false);
        }

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
                abort();
        /* room for the whole input in the socket, and for the client's writes */
        (void) setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &(int){ 4 * INPUT_MAX }, sizeof(int));
        (void) setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &(int){ 4 * INPUT_MAX }, sizeof(int));
        if (write(fds[0], o.p, o.n) != (ssize_t) o.n)
                abort();
        if (shutdown(fds[0], SHUT_WR) < 0)
                abort();
        r = dbus_mini_get_document_fd(fds[1], with_notes ? "GetDocumentText" : "GetDocument",
                                      "metric", data[0] & 0x80 ? gpus : NULL, 10000, &text,
                                      with_notes ? &notes : NULL, &name, &message);
        close(fds[0]);
        close(fds[1]);

        switch (mode) {
        case 0:
                if (r == 0 && (!text || name || message))
                        abort();
                if (r == 1 && !name)
                        abort();
                if (r > 1 || (r < 0 && (text || name || message || notes)))
                        abort();
                for (char **n = notes; n && *n; n++)
                        if (!memmem(o.p, o.n, *n, strlen(*n) + 1))
                                abort();
                /* what is returned was in the input, NUL-terminated */
                if (text && !memmem(o.p, o.n, text, strlen(text) + 1))
                        abort();
                if (name && !memmem(o.p, o.n, name, strlen(name) + 1))
                        abort();
                if (message && !memmem(o.p, o.n, message, strlen(message) + 1))
                        abort();
                if (r < 0 && r != -EBADMSG && r != -ECONNRESET && r != -EACCES)
                        abort();
                break;
        case 1:
                if (r != 0 || !text || strcmp(text, s) != 0 || name || message)
                        abort();
                if (with_notes && (!notes || !notes[0] || strcmp(notes[0], "a note") != 0 ||
                                   !notes[1] || strcmp(notes[1], s) != 0 || notes[2]))
                        abort();
                break;
        default:
                if (r != 1 || !name || strcmp(name, "org.amdsmi1.Error.Busy") != 0 || !message ||
                    strcmp(message, s) != 0 || !text || strcmp(text, "{}") != 0)
                        abort();
                if (dbus_mini_error_errno(name) != -EBUSY)
                        abort();
                break;
        }
        free(o.p);
        return 0;
}
