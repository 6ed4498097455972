/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bus-errors.h"
#include "dbus-mini.h"
#include "macro.h"
#include "parse-util.h"

#define DEFAULT_ADDRESS "unix:path=/run/dbus/system_bus_socket"
#define AUTH_LINE_MAX 512U

enum {
        MSG_CALL = 1,
        MSG_RETURN = 2,
        MSG_ERROR = 3,
        MSG_SIGNAL = 4
};
enum {
        FIELD_PATH = 1,
        FIELD_INTERFACE = 2,
        FIELD_MEMBER = 3,
        FIELD_ERROR_NAME = 4,
        FIELD_REPLY_SERIAL = 5,
        FIELD_DESTINATION = 6,
        FIELD_SIGNATURE = 8,
};
#define FLAG_NO_AUTO_START 0x2
#define SERIAL_HELLO 1U
#define SERIAL_CALL 2U

static size_t align_to(size_t n, size_t a) {
        return (n + a - 1) & ~(a - 1);
}

/* The address */

/* The value @v (@n bytes, %-escaped) into @out (@size bytes): its length, or -EOPNOTSUPP. */
static int unescape(const char *v, size_t n, char *out, size_t size) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                char ch = v[i];

                if (ch == '%') {
                        int hi, lo;

                        if (i + 2 >= n)
                                return -EOPNOTSUPP;
                        hi = unhexchar(v[i + 1]);
                        lo = unhexchar(v[i + 2]);
                        if (hi < 0 || lo < 0)
                                return -EOPNOTSUPP;
                        ch = (char) (hi << 4 | lo);
                        i += 2;
                }
                if (ch == '\0' || k + 1 >= size)
                        return -EOPNOTSUPP;
                out[k++] = ch;
        }
        out[k] = '\0';
        return (int) k;
}

/* The socket address of the first unix: entry of @address. */
static int parse_address(const char *address, struct sockaddr_un *ret, socklen_t *ret_len) {
        for (const char *e = address; *e;) {
                size_t n = strcspn(e, ";");
                const char *next = e[n] ? e + n + 1 : e + n;

                if (n > 5 && strncmp(e, "unix:", 5) == 0) {
                        struct sockaddr_un sa = { .sun_family = AF_UNIX };

                        for (const char *k = e + 5; k < e + n;) {
                                size_t m = strcspn(k, ",;");
                                int r;

                                if (m > 5 && strncmp(k, "path=", 5) == 0) {
                                        r = unescape(k + 5, m - 5, sa.sun_path,
                                                     sizeof(sa.sun_path));
                                        if (r <= 0)
                                                return -EOPNOTSUPP;
                                        *ret = sa;
                                        *ret_len = (socklen_t) (offsetof(struct sockaddr_un,
                                                                         sun_path) +
                                                                (size_t) r + 1);
                                        return 0;
                                }
                                if (m > 9 && strncmp(k, "abstract=", 9) == 0) {
                                        r = unescape(k + 9, m - 9, sa.sun_path + 1,
                                                     sizeof(sa.sun_path) - 1);
                                        if (r <= 0)
                                                return -EOPNOTSUPP;
                                        *ret = sa;
                                        *ret_len = (socklen_t) (offsetof(struct sockaddr_un,
                                                                         sun_path) +
                                                                1 + (size_t) r);
                                        return 0;
                                }
                                k += m;
                                if (*k == ',')
                                        k++;
                        }
                        /* unix:runtime=, tmpdir=...: sd-bus knows them */
                        return -EOPNOTSUPP;
                }
                e = next;
        }
        return -EOPNOTSUPP;
}

int dbus_mini_connect(int *ret_fd) {
        const char *address = secure_getenv("DBUS_SYSTEM_BUS_ADDRESS");
        struct sockaddr_un sa;
        socklen_t len;
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = parse_address(address && *address ? address : DEFAULT_ADDRESS, &sa, &len);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *) &sa, len) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Outgoing messages: little endian, aligned relative to the start of the buffer, where every
 * message starts at a multiple of 8. */

struct wbuf {
        uint8_t *p;
        size_t n, cap;
        bool oom;
};

static void w_bytes(struct wbuf *b, const void *d, size_t n) {
        if (b->oom || n == 0)
                return;
        if (n > b->cap - b->n) {
                size_t cap = b->cap * 2 > b->n + n + 256 ? b->cap * 2 : b->n + n + 256;
                uint8_t *q = realloc(b->p, cap);

                if (!q) {
                        b->oom = true;
                        return;
                }
                b->p = q;
                b->cap = cap;
        }
        memcpy(b->p + b->n, d, n);
        b->n += n;
}

static void w_align(struct wbuf *b, size_t a) {
        static const uint8_t zero[8];

        w_bytes(b, zero, align_to(b->n, a) - b->n);
}

static void w_u8(struct wbuf *b, uint8_t v) {
        w_bytes(b, &v, 1);
}

static size_t w_u32(struct wbuf *b, uint32_t v) {
        uint8_t le[4] = { (uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16),
                          (uint8_t) (v >> 24) };

        w_align(b, 4);
        w_bytes(b, le, 4);
        return b->n - 4;
}

static void w_patch_u32(struct wbuf *b, size_t at, size_t v) {
        if (b->oom)
                return;
        if (v > UINT32_MAX) {
                b->oom = true;
                return;
        }
        for (unsigned i = 0; i < 4; i++)
                b->p[at + i] = (uint8_t) (v >> (8 * i));
}

static void w_string(struct wbuf *b, const char *s) {
        size_t n = strlen(s);

        if (n > UINT32_MAX) {
                b->oom = true;
                return;
        }
        w_u32(b, (uint32_t) n);
        w_bytes(b, s, n + 1);
}

static void w_signature(struct wbuf *b, const char *s) {
        size_t n = strlen(s);

        w_u8(b, (uint8_t) n);
        w_bytes(b, s, n + 1);
}

/* A header field (a struct (yv): aligned to 8) holding a string, object path or signature. */
static void w_field(struct wbuf *b, uint8_t code, const char *type, const char *value) {
        w_align(b, 8);
        w_u8(b, code);
        w_signature(b, type);
        if (type[0] == 'g')
                w_signature(b, value);
        else
                w_string(b, value);
}

/* A method call; @verb non-NULL: GetDocument's body (s verb, a{sv} {"gpus": <as @gpus>}). */
static void w_call(struct wbuf *b, uint8_t flags, uint32_t serial, const char *destination,
                   const char *path, const char *interface, const char *member, const char *verb,
                   char **gpus) {
        size_t body_len_at, fields_len_at, fields_start, body_start;

        w_align(b, 8);
        w_u8(b, 'l');
        w_u8(b, MSG_CALL);
        w_u8(b, flags);
        w_u8(b, 1);
        body_len_at = w_u32(b, 0);
        w_u32(b, serial);
        fields_len_at = w_u32(b, 0);
        fields_start = b->n;
        w_field(b, FIELD_PATH, "o", path);
        w_field(b, FIELD_DESTINATION, "s", destination);
        w_field(b, FIELD_INTERFACE, "s", interface);
        w_field(b, FIELD_MEMBER, "s", member);
        if (verb)
                w_field(b, FIELD_SIGNATURE, "g", "sa{sv}");
        w_patch_u32(b, fields_len_at, b->n - fields_start);
        w_align(b, 8);
        body_start = b->n;
        if (verb) {
                size_t dict_len_at, dict_start;

                w_string(b, verb);
                dict_len_at = w_u32(b, 0);
                w_align(b, 8); /* the first dict entry's alignment, even with none */
                dict_start = b->n;
                if (gpus && gpus[0]) {
                        size_t as_len_at, as_start;

                        w_align(b, 8);
                        w_string(b, "gpus");
                        w_signature(b, "as");
                        as_len_at = w_u32(b, 0);
                        as_start = b->n;
                        for (char **g = gpus; *g; g++)
                                w_string(b, *g);
                        w_patch_u32(b, as_len_at, b->n - as_start);
                }
                w_patch_u32(b, dict_len_at, b->n - dict_start);
        }
        w_patch_u32(b, body_len_at, b->n - body_start);
}

/* Incoming bytes */

struct conn {
        int fd;
        uint8_t *buf;
        size_t len, cap;
        int64_t deadline_ms; /* CLOCK_MONOTONIC; -1: none */
};

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int send_all(struct conn *c, const void *p, size_t n) {
        while (n > 0) {
                ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EPIPE ? -ECONNRESET : -errno;
                }
                p = (const uint8_t *) p + k;
                n -= (size_t) k;
        }
        return 0;
}

/* Reads until @need bytes are buffered. @return 0, -ECONNRESET at the end of the stream,
 * -ETIMEDOUT, or another negative errno. */
static int fill(struct conn *c, size_t need) {
        while (c->len < need) {
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                int timeout = -1;
                ssize_t n;

                if (need > c->cap) {
                        size_t cap = c->cap * 2 > need ? c->cap * 2 : need;
                        uint8_t *q;

                        if (cap < 4096)
                                cap = 4096;
                        q = realloc(c->buf, cap);
                        if (!q)
                                return -ENOMEM;
                        c->buf = q;
                        c->cap = cap;
                }
                if (c->deadline_ms >= 0) {
                        int64_t left = c->deadline_ms - now_ms();

                        if (left <= 0)
                                return -ETIMEDOUT;
                        timeout = left > INT32_MAX ? INT32_MAX : (int) left;
                }
                n = poll(&p, 1, timeout);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -ETIMEDOUT;
                n = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -ECONNRESET;
                c->len += (size_t) n;
        }
        return 0;
}

static void consume(struct conn *c, size_t n) {
        memmove(c->buf, c->buf + n, c->len - n);
        c->len -= n;
}

/* The server's answer to AUTH: "OK <guid>\r\n" is 0, "REJECTED ..." -EACCES. */
static int read_auth_reply(struct conn *c) {
        uint8_t *end;
        int r;

        for (;;) {
                end = c->len >= 2 ? memmem(c->buf, c->len, "\r\n", 2) : NULL;
                if (end)
                        break;
                if (c->len >= AUTH_LINE_MAX)
                        return -EBADMSG;
                r = fill(c, c->len + 1);
                if (r < 0)
                        return r;
        }
        if (end - c->buf >= 3 && memcmp(c->buf, "OK ", 3) == 0)
                r = 0;
        else if (end - c->buf >= 8 && memcmp(c->buf, "REJECTED", 8) == 0)
                r = -EACCES;
        else
                r = -EBADMSG;
        consume(c, (size_t) (end - c->buf) + 2);
        return r;
}

struct msg {
        uint8_t type;
        bool big_endian;
        bool has_reply_serial;
        uint32_t reply_serial;
        const char *error_name;
        const char *signature;
        const uint8_t *body;
        size_t body_len;
};

static uint32_t get_u32(const uint8_t *p, bool big_endian) {
        if (big_endian)
                return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
        return (uint32_t) p[3] << 24 | (uint32_t) p[2] << 16 | (uint32_t) p[1] << 8 | p[0];
}

/* The string (type s or o) at *@off (aligned to 4 first) of @p[0..@end): a NUL-terminated
 * string without an embedded NUL. */
static int get_string(const uint8_t *p, size_t end, bool big_endian, size_t *off,
                      const char **ret) {
        size_t o = align_to(*off, 4);
        uint32_t n;

        if (o > end || end - o < 4)
                return -EBADMSG;
        n = get_u32(p + o, big_endian);
        o += 4;
        if (n >= end - o || p[o + n] != '\0' || memchr(p + o, '\0', n))
                return -EBADMSG;
        *ret = (const char *) p + o;
        *off = o + n + 1;
        return 0;
}

/* The signature (type g) at *@off of @p[0..@end). */
static int get_signature(const uint8_t *p, size_t end, size_t *off, const char **ret) {
        size_t o = *off, n;

        if (o >= end)
                return -EBADMSG;
        n = p[o++];
        if (n >= end - o || p[o + n] != '\0' || memchr(p + o, '\0', n))
                return -EBADMSG;
        *ret = (const char *) p + o;
        *off = o + n + 1;
        return 0;
}

/* The header fields of @m, @p[16..@end): structs (yv) of a basic type each. */
static int parse_fields(struct msg *m, const uint8_t *p, size_t end) {
        size_t off = 16;

        while (off < end) {
                const char *type, *s;
                uint8_t code;
                size_t size;
                int r;

                off = align_to(off, 8);
                if (off >= end)
                        return -EBADMSG;
                code = p[off++];
                r = get_signature(p, end, &off, &type);
                if (r < 0)
                        return r;
                if (strlen(type) != 1 || (code == FIELD_SIGNATURE && type[0] != 'g'))
                        return -EBADMSG;
                switch (type[0]) {
                case 's':
                case 'o':
                        r = get_string(p, end, m->big_endian, &off, &s);
                        if (r < 0)
                                return r;
                        if (code == FIELD_ERROR_NAME && type[0] == 's')
                                m->error_name = s;
                        else if (code == FIELD_ERROR_NAME)
                                return -EBADMSG;
                        continue;
                case 'g':
                        r = get_signature(p, end, &off, &s);
                        if (r < 0)
                                return r;
                        if (code == FIELD_SIGNATURE)
                                m->signature = s;
                        continue;
                case 'y':
                        size = 1;
                        break;
                case 'n':
                case 'q':
                        size = 2;
                        break;
                case 'b':
                case 'i':
                case 'u':
                case 'h':
                        size = 4;
                        break;
                case 'x':
                case 't':
                case 'd':
                        size = 8;
                        break;
                default:
                        return -EBADMSG;
                }
                off = align_to(off, size);
                if (off > end || end - off < size)
                        return -EBADMSG;
                if (code == FIELD_REPLY_SERIAL) {
                        if (type[0] != 'u')
                                return -EBADMSG;
                        m->reply_serial = get_u32(p + off, m->big_endian);
                        m->has_reply_serial = true;
                }
                off += size;
        }
        return 0;
}

/* Reads the next message into the front of @c's buffer: *@ret_size bytes, which @m points
 * into. @return 0, -ECONNRESET at the end of the stream between two messages, -EBADMSG for a
 * malformed or truncated one, or another negative errno. */
static int read_message(struct conn *c, struct msg *m, size_t *ret_size) {
        uint32_t body_len, fields_len;
        uint64_t header_end, total;
        const uint8_t *p;
        int r;

        r = fill(c, 16);
        if (r == -ECONNRESET && c->len > 0)
                return -EBADMSG;
        if (r < 0)
                return r;
        p = c->buf;
        *m = (struct msg){ .type = p[1], .big_endian = p[0] == 'B' };
        if ((p[0] != 'l' && p[0] != 'B') || p[3] != 1 || m->type == 0)
                return -EBADMSG;
        body_len = get_u32(p + 4, m->big_endian);
        fields_len = get_u32(p + 12, m->big_endian);
        header_end = align_to((uint64_t) 16 + fields_len, 8);
        total = header_end + body_len;
        if (total > DBUS_MINI_MESSAGE_MAX)
                return -EBADMSG;
        r = fill(c, (size_t) total);
        if (r == -ECONNRESET)
                return -EBADMSG;
        if (r < 0)
                return r;
        p = c->buf;
        r = parse_fields(m, p, (size_t) 16 + fields_len);
        if (r < 0)
                return r;
        if (!m->signature)
                m->signature = "";
        if (body_len > 0 && !m->signature[0])
                return -EBADMSG;
        m->body = p + header_end;
        m->body_len = body_len;
        *ret_size = (size_t) total;
        return 0;
}

static int strdup_to(const char *s, char **ret) {
        char *d = strdup(s);

        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
}

/* The strings of the array (type as) at *@off of @p[0..@end), appended to *@ret. */
static int get_string_array(const uint8_t *p, size_t end, bool big_endian, size_t *off,
                            char ***ret) {
        size_t o = align_to(*off, 4), array_end;
        uint32_t n;
        int r;

        if (o > end || end - o < 4)
                return -EBADMSG;
        n = get_u32(p + o, big_endian);
        o += 4;
        if (n > end - o)
                return -EBADMSG;
        array_end = o + n;
        while (o < array_end) {
                const char *s;

                r = get_string(p, array_end, big_endian, &o, &s);
                if (r < 0)
                        return r;
                r = strv_extend(ret, s);
                if (r < 0)
                        return r;
        }
        *off = o;
        return 0;
}

/* The reply @m to the call: its string (and with @ret_notes, GetDocumentText's notes), or its
 * error name, message and document. */
static int handle_reply(struct conn *c, const struct msg *m, char **ret_text, char ***ret_notes,
                        char **ret_error_name, char **ret_message) {
        _cleanup_free_ char *name = NULL, *message = NULL, *text = NULL;
        _cleanup_strv_free_ char **notes = NULL;
        const char *s;
        size_t off = 0;
        int r;

        if (m->type == MSG_RETURN) {
                if (strcmp(m->signature, ret_notes ? "sas" : "s") != 0)
                        return -EBADMSG;
                r = get_string(m->body, m->body_len, m->big_endian, &off, &s);
                if (r < 0)
                        return r;
                if (ret_notes) {
                        r = get_string_array(m->body, m->body_len, m->big_endian, &off, &notes);
                        if (r < 0)
                                return r;
                }
                if (off != m->body_len)
                        return -EBADMSG;
                /* the document can be tens of kilobytes: moved to the front of the buffer it
                 * was read into and handed over, not copied into fresh pages */
                memmove(c->buf, s, strlen(s) + 1);
                *ret_text = (char *) TAKE_PTR(c->buf);
                c->len = c->cap = 0;
                if (ret_notes)
                        *ret_notes = TAKE_PTR(notes);
                return 0;
        }
        if (!m->error_name)
                return -EBADMSG;
        r = strdup_to(m->error_name, &name);
        if (r < 0)
                return r;
        if (m->signature[0] == 's') {
                r = get_string(m->body, m->body_len, m->big_endian, &off, &s);
                if (r < 0)
                        return r;
                r = strdup_to(s, &message);
                if (r < 0)
                        return r;
        }
        if (m->signature[0] == 's' && m->signature[1] == 's') {
                r = get_string(m->body, m->body_len, m->big_endian, &off, &s);
                if (r < 0)
                        return r;
                r = strdup_to(s, &text);
                if (r < 0)
                        return r;
        }
        *ret_error_name = TAKE_PTR(name);
        *ret_message = TAKE_PTR(message);
        *ret_text = TAKE_PTR(text);
        return 1;
}

int dbus_mini_get_document_fd(int fd, const char *method, const char *verb, char **gpus,
                              unsigned timeout_ms, char **ret_text, char ***ret_notes,
                              char **ret_error_name, char **ret_message) {
        struct conn c = { .fd = fd, .deadline_ms = timeout_ms ? now_ms() + timeout_ms : -1 };
        struct wbuf b = {}, calls = {};
        char auth[64];
        int r, n;

        *ret_text = *ret_error_name = *ret_message = NULL;
        if (ret_notes)
                *ret_notes = NULL;
        /* the credentials byte, then AUTH EXTERNAL with the hex digits of the decimal uid */
        n = snprintf(auth, sizeof(auth), "%u", (unsigned) geteuid());
        if (n < 0 || (size_t) n * 2 + 20 > sizeof(auth))
                return -EINVAL;
        w_bytes(&b, "\0AUTH EXTERNAL ", 15);
        for (int i = 0; i < n; i++) {
                char hex[3];

                snprintf(hex, sizeof(hex), "%02x", (unsigned char) auth[i]);
                w_bytes(&b, hex, 2);
        }
        w_bytes(&b, "\r\n", 2);
        r = b.oom ? -ENOMEM : send_all(&c, b.p, b.n);
        if (r >= 0)
                r = read_auth_reply(&c);
        if (r < 0)
                goto finish;

        /* BEGIN, then Hello and the call without waiting for Hello's reply, in one write (the
         * messages are aligned relative to their own start: built apart, then appended) */
        w_call(&calls, 0, SERIAL_HELLO, "org.freedesktop.DBus", "/org/freedesktop/DBus",
               "org.freedesktop.DBus", "Hello", NULL, NULL);
        w_call(&calls, FLAG_NO_AUTO_START, SERIAL_CALL, AMDSMI_BUS_NAME, AMDSMI_BUS_PATH,
               AMDSMI_BUS_IFACE_MANAGER, method, verb, gpus);
        b.n = 0;
        w_bytes(&b, "BEGIN\r\n", 7);
        if (!calls.oom)
                w_bytes(&b, calls.p, calls.n);
        b.oom = b.oom || calls.oom;
        r = b.oom ? -ENOMEM : send_all(&c, b.p, b.n);
        if (r < 0)
                goto finish;

        /* the reply to the call; Hello's reply, NameAcquired and any other message pass by */
        for (;;) {
                struct msg m;
                size_t size;

                r = read_message(&c, &m, &size);
                if (r < 0)
                        break;
                if ((m.type == MSG_RETURN || m.type == MSG_ERROR) && m.has_reply_serial &&
                    m.reply_serial == SERIAL_CALL) {
                        r = handle_reply(&c, &m, ret_text, ret_notes, ret_error_name, ret_message);
                        break;
                }
                consume(&c, size);
        }
finish:
        free(b.p);
        free(calls.p);
        free(c.buf);
        return r;
}

int dbus_mini_error_errno(const char *name) {
        static const struct {
                const char *name;
                int r;
        } bus_names[] = {
                { "org.freedesktop.DBus.Error.ServiceUnknown", -EHOSTUNREACH },
                { "org.freedesktop.DBus.Error.NameHasNoOwner", -ENXIO },
                { "org.freedesktop.DBus.Error.UnknownMethod", -EBADR },
                { "org.freedesktop.DBus.Error.UnknownObject", -EBADR },
                { "org.freedesktop.DBus.Error.UnknownInterface", -EBADR },
                { "org.freedesktop.DBus.Error.AccessDenied", -EACCES },
                { "org.freedesktop.DBus.Error.NoReply", -ETIMEDOUT },
                { "org.freedesktop.DBus.Error.Timeout", -ETIMEDOUT },
        };

        if (!name)
                return -EIO;
        for (const sd_bus_error_map *m = amdsmi_bus_errors; m->name; m++)
                if (strcmp(m->name, name) == 0)
                        return -m->code;
        for (size_t i = 0; i < ELEMENTSOF(bus_names); i++)
                if (strcmp(bus_names[i].name, name) == 0)
                        return bus_names[i].r;
        return -EIO;
}

int dbus_mini_get_document(const char *method, const char *verb, char **gpus, unsigned timeout_ms,
                           char **ret_text, char ***ret_notes, char **ret_message) {
        _cleanup_free_ char *text = NULL, *name = NULL, *message = NULL;
        _cleanup_strv_free_ char **notes = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = dbus_mini_connect(&fd);
        if (r == -EOPNOTSUPP || r == -ENOMEM)
                return r;
        if (r < 0)
                return -ENOTCONN; /* no bus: as sd-bus's failed connect */
        r = dbus_mini_get_document_fd(fd, method, verb, gpus, timeout_ms, &text,
                                      ret_notes ? &notes : NULL, &name, &message);
        if (r == -EACCES)
                return -ENOTCONN; /* the bus refused us */
        if (r < 0)
                return r;
        if (r == 0) {
                *ret_text = TAKE_PTR(text);
                if (ret_notes)
                        *ret_notes = TAKE_PTR(notes);
                return 0;
        }
        r = dbus_mini_error_errno(name);
        if (r == -EIO && strcmp(name, AMDSMI_BUS_ERROR_DEVICE_ERROR) != 0) {
                /* a name of no table: keep it in the message */
                char *m = NULL;

                if (asprintf(&m, "%s%s%s", name, message ? ": " : "", message ? message : "") < 0)
                        return -ENOMEM;
                free(message);
                message = m;
        }
        *ret_message = TAKE_PTR(message);
        *ret_text = TAKE_PTR(text);
        return r;
}
