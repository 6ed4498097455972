/* SPDX-License-Identifier: MIT */
/*
 * history.jsonl and the intent records (formats and locking: history.h).
 *
 * No "config.h" here: daemon/config.h (amdsmid.conf) would be found first, and nothing of the
 * build's configuration is needed (the state directory comes from lib/util).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "history.h"
#include "macro.h"
#include "parse-util.h"
#include "runtime-dir.h"
#include "safe-open.h"
#include "time-util.h"

#define HISTORY_FILE "history.jsonl"
#define HISTORY_OLD_FILE "history.jsonl.1"
#define INTENT_DIR "intent"
#define INTENT_SUFFIX ".json"
/* A line longer than this is not ours (7 strings of HISTORY_FIELD_MAX bytes escaped as
 * \u00XX take 43 KiB): malformed, and not kept in memory while reading backwards. */
#define HISTORY_LINE_MAX (64u * 1024u)
#define HISTORY_CHUNK (64u * 1024u)
#define INTENT_FILE_MAX (1024u * 1024u)
/* 9999-12-31T23:59:59.999999Z: later times are not ours (and would not be 4-digit years). */
#define TIME_USEC_MAX UINT64_C(253402300799999999)
/* Attempts to lock the file at the name when rotations keep replacing it. */
#define OPEN_ATTEMPTS 1000u

static inline void history_json_putp(json_object **p) {
        json_object_put(*p);
}
#define _cleanup_json_ _cleanup_(history_json_putp)

static inline void json_tokener_freep(json_tokener **p) {
        if (*p)
                json_tokener_free(*p);
}

/* ---- formatting ------------------------------------------------------------------------- */

static void format_time(uint64_t usec, char *buf, size_t size) {
        time_t t = (time_t) (usec / 1000000u);
        struct tm tm;
        size_t n;

        if (!gmtime_r(&t, &tm) || (n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
                (void) snprintf(buf, size, "%s", "1970-01-01T00:00:00.000Z");
                return;
        }
        (void) snprintf(buf + n, size - n, ".%03uZ", (unsigned) (usec / 1000u % 1000u));
}

/* The length of the valid UTF-8 sequence at @s (1 to 4), 0 if there is none. Never reads past
 * a NUL. */
static size_t utf8_seq(const unsigned char *s) {
        unsigned c = s[0];

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                return (s[1] & 0xc0) == 0x80 ? 2 : 0;
        if (c >= 0xe0 && c <= 0xef) {
                if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
                        return 0;
                if ((c == 0xe0 && s[1] < 0xa0) || /* overlong */
                    (c == 0xed && s[1] >= 0xa0))  /* UTF-16 surrogates */
                        return 0;
                return 3;
        }
        if (c >= 0xf0 && c <= 0xf4) {
                if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
                        return 0;
                if ((c == 0xf0 && s[1] < 0x90) || /* overlong */
                    (c == 0xf4 && s[1] >= 0x90))  /* beyond U+10FFFF */
                        return 0;
                return 4;
        }
        return 0;
}

/* A copy of @s that is valid UTF-8 (U+FFFD for each invalid byte) and at most
 * HISTORY_FIELD_MAX bytes: a longer one is cut at a character boundary and ends in
 * HISTORY_TRUNCATED. NULL on -ENOMEM. */
static char *field_dup(const char *s) {
        static const char replacement[] = "\xef\xbf\xbd";
        const size_t mark = strlen(HISTORY_TRUNCATED);
        const unsigned char *p = (const unsigned char *) s;
        char buf[HISTORY_FIELD_MAX + 1];
        size_t o = 0, keep = 0; /* keep: the last boundary that leaves room for the marker */

        while (*p) {
                size_t n = utf8_seq(p);
                const char *src = n > 0 ? (const char *) p : replacement;
                size_t len = n > 0 ? n : sizeof(replacement) - 1;

                if (o + len > HISTORY_FIELD_MAX) {
                        memcpy(buf + keep, HISTORY_TRUNCATED, mark);
                        o = keep + mark;
                        break;
                }
                memcpy(buf + o, src, len);
                o += len;
                if (o + mark <= HISTORY_FIELD_MAX)
                        keep = o;
                p += n > 0 ? n : 1;
        }
        buf[o] = '\0';
        return strdup(buf);
}

/* Adds @key: a capped copy of @s, or null. @return 0 or -ENOMEM. */
static int add_field(json_object *obj, const char *key, const char *s) {
        _cleanup_free_ char *v = NULL;
        json_object *j = NULL;

        if (s) {
                v = field_dup(s);
                if (!v)
                        return -ENOMEM;
                j = json_object_new_string(v);
                if (!j)
                        return -ENOMEM;
        }
        if (json_object_object_add(obj, key, j) < 0) {
                json_object_put(j);
                return -ENOMEM;
        }
        return 0;
}

/* Adds @key: @v (taken; NULL is JSON null). @return 0 or -ENOMEM. */
static int add_value(json_object *obj, const char *key, json_object *v) {
        if (json_object_object_add(obj, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

/* "ok", the errno's name, or "E<number>". */
static void errno_text(int error, char *buf, size_t size) {
        const char *name = error == 0 ? "ok" : strerrorname_np(-error);

        if (name)
                (void) snprintf(buf, size, "%s", name);
        else
                (void) snprintf(buf, size, "E%d", -error);
}

static json_object *result_json(int error) {
        char buf[32];

        errno_text(error, buf, sizeof(buf));
        return json_object_new_string(buf);
}

static json_object *time_json(uint64_t usec) {
        char stamp[64];

        format_time(usec, stamp, sizeof(stamp));
        return json_object_new_string(stamp);
}

/* Parses @len bytes as one JSON value with @tok (NULL: a tokener of its own), whitespace
 * around it allowed; NULL if they are not exactly that (or hold a NUL). */
static json_object *parse_exact_with(json_tokener *tok, const char *text, size_t len) {
        json_tokener *own = NULL;
        json_object *o;
        size_t end;

        if (len > INT_MAX || memchr(text, '\0', len))
                return NULL;
        if (!tok) {
                tok = own = json_tokener_new();
                if (!tok)
                        return NULL;
        } else
                json_tokener_reset(tok);
        o = json_tokener_parse_ex(tok, text, (int) len);
        if (o && json_tokener_get_error(tok) == json_tokener_success) {
                end = json_tokener_get_parse_end(tok);
                for (; end < len; end++)
                        if (!strchr(" \t\r\n", text[end]))
                                break;
                if (end < len) {
                        json_object_put(o);
                        o = NULL;
                }
        } else {
                json_object_put(o);
                o = NULL;
        }
        if (own)
                json_tokener_free(own);
        return o;
}

static json_object *parse_exact(const char *text, size_t len) {
        return parse_exact_with(NULL, text, len);
}

/* ---- paths and locking ------------------------------------------------------------------ */

static int state_path(const char *name, char *buf, size_t size) {
        char dir[PATH_MAX];
        int r, n;

        r = state_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        n = snprintf(buf, size, "%s/%s", dir, name);
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

int history_path(char *buf, size_t size) {
        return state_path(HISTORY_FILE, buf, size);
}

int intent_dir(char *buf, size_t size) {
        return state_path(INTENT_DIR, buf, size);
}

const char *history_error(int r, char *buf, size_t size) {
        static const char *const names[] = { HISTORY_FILE, HISTORY_OLD_FILE };
        char path[PATH_MAX];

        if (r == -ELOOP || r == -EISDIR || r == -EBADFD || r == -EPERM)
                for (size_t k = 0; k < ELEMENTSOF(names); k++) {
                        struct stat st;

                        if (state_path(names[k], path, sizeof(path)) < 0 || lstat(path, &st) < 0 ||
                            (r != -EPERM && S_ISREG(st.st_mode)))
                                continue;
                        return safe_open_message(path, r, buf, size);
                }
        (void) snprintf(buf, size, "%s", strerror(-r));
        return buf;
}

static int flock_retry(int fd, int op) {
        while (flock(fd, op) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

/*
 * Opens @path (read-write for appending, creating it 0640; else read-only) and locks it
 * (LOCK_EX / LOCK_SH), then makes sure that the file locked is still the one at @path: a
 * writer that rotated the file meanwhile renamed it. @return 0, or the errno of open() (also
 * -ENOENT when reading an absent file), -EAGAIN if the name never held still.
 */
static int open_locked(const char *path, bool append, int *ret_fd) {
        for (unsigned attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
                _cleanup_close_ int fd = -EBADF;
                struct stat locked, named;
                int r;

                /* safe_open(): a FIFO, link or directory there is refused (-EBADFD, -ELOOP,
                 * -EISDIR), never waited on nor followed; one we append to is ours. */
                if (append) {
                        fd = safe_open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL, 0640,
                                       SAFE_OPEN_BLOCK);
                        if (fd >= 0)
                                (void) fchmod(fd, 0640); /* whatever the umask took */
                        else if (fd == -EEXIST)
                                fd = safe_open(path, O_RDWR | O_APPEND, 0,
                                               SAFE_OPEN_BLOCK | SAFE_OPEN_TRUSTED);
                        if (fd == -ENOENT)
                                continue; /* rotated away between the two opens */
                } else
                        fd = safe_open(path, O_RDONLY, 0, SAFE_OPEN_BLOCK);
                if (fd < 0)
                        return fd;

                r = flock_retry(fd, append ? LOCK_EX : LOCK_SH);
                if (r < 0)
                        return r;
                if (fstat(fd, &locked) < 0)
                        return -errno;
                if (stat(path, &named) < 0) {
                        if (errno == ENOENT)
                                continue;
                        return -errno;
                }
                if (locked.st_dev != named.st_dev || locked.st_ino != named.st_ino)
                        continue;
                *ret_fd = TAKE_FD(fd);
                return 0;
        }
        return -EAGAIN;
}

static int fsync_dir(const char *dir) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (fsync(fd) < 0)
                return -errno;
        return 0;
}

/* ---- appending -------------------------------------------------------------------------- */

static int entry_json(const struct history_entry *e, uint64_t usec, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        int r = 0;

        if (!o)
                return -ENOMEM;
        r = add_value(o, "time", time_json(usec));
        if (r >= 0)
                r = add_value(o, "time_usec", json_object_new_uint64(usec));
        if (r >= 0)
                r = add_field(o, "via", e->via);
        if (r >= 0)
                r = add_value(o, "uid", json_object_new_int64((int64_t) e->uid));
        if (r >= 0)
                r = add_value(o, "pid", e->pid > 0 ? json_object_new_int64(e->pid) : NULL);
        if (r >= 0)
                r = add_field(o, "sender", e->sender);
        if (r >= 0)
                r = add_field(o, "gpu", e->gpu);
        if (r >= 0)
                r = add_field(o, "change", e->change);
        if (r >= 0)
                r = add_field(o, "old", e->old_value);
        if (r >= 0)
                r = add_field(o, "new", e->new_value);
        if (r >= 0)
                r = add_value(o, "result", result_json(e->result));
        if (r >= 0)
                r = add_value(o, "errno", json_object_new_int(e->result));
        if (r >= 0)
                r = add_field(o, "message", e->message);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

/* Whether the file's last byte is a newline (or the file is empty). */
static int ends_with_newline(int fd, off_t size, bool *ret) {
        char last;
        ssize_t n;

        if (size == 0) {
                *ret = true;
                return 0;
        }
        n = pread(fd, &last, 1, size - 1);
        if (n < 0)
                return -errno;
        *ret = n == 1 && last == '\n';
        return 0;
}

int history_append(const struct history_entry *e, uint64_t max_bytes) {
        char dir[PATH_MAX], path[PATH_MAX], old[PATH_MAX];
        _cleanup_json_ json_object *o = NULL;
        _cleanup_free_ char *line = NULL;
        const char *text;
        size_t len;
        int r;

        if (!e || !e->change || e->result > 0)
                return -EINVAL;
        if (max_bytes == 0)
                max_bytes = HISTORY_MAX_BYTES_DEFAULT;

        r = entry_json(e, e->time_usec > 0 ? e->time_usec : now_realtime_us(), &o);
        if (r < 0)
                return r;
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text)
                return -ENOMEM;
        /* room for a newline in front, after a line a crash cut short */
        if (asprintf(&line, "\n%s\n", text) < 0)
                return -ENOMEM;
        len = strlen(line) - 1;

        r = state_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        r = runtime_dir_mkdir(dir);
        if (r < 0)
                return r;
        if (snprintf(path, sizeof(path), "%s/" HISTORY_FILE, dir) >= (int) sizeof(path) ||
            snprintf(old, sizeof(old), "%s/" HISTORY_OLD_FILE, dir) >= (int) sizeof(old))
                return -ENAMETOOLONG;

        for (unsigned attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
                _cleanup_close_ int fd = -EBADF;
                const char *p = line + 1;
                size_t n = len;
                struct stat st;
                bool newline = true;
                ssize_t k;

                r = open_locked(path, true, &fd);
                if (r < 0)
                        return r;
                if (fstat(fd, &st) < 0)
                        return -errno;
                r = ends_with_newline(fd, st.st_size, &newline);
                if (r < 0)
                        return r;
                if (!newline) {
                        p = line;
                        n++;
                }
                if (st.st_size > 0 && (uint64_t) st.st_size + n > max_bytes) {
                        /* Rotate under the lock; writers waiting for it find that the file
                         * they locked is no longer history.jsonl and open the new one. */
                        if (rename(path, old) < 0)
                                return -errno;
                        continue;
                }

                k = write(fd, p, n);
                if (k < 0)
                        return -errno;
                if ((size_t) k != n)
                        return -ENOSPC; /* a short write to a regular file: the disk is full */
                if (fdatasync(fd) < 0)
                        return -errno;
                return 0;
        }
        return -EAGAIN;
}

/* ---- reading ---------------------------------------------------------------------------- */

struct scan {
        unsigned want;      /* entries wanted, 0: all */
        json_object *found; /* newest first */
        json_tokener *tok;
        unsigned skipped;
        uint64_t budget; /* bytes still to be read */
};

static bool scan_done(const struct scan *s) {
        return s->want > 0 && json_object_array_length(s->found) >= s->want;
}

static json_object *string_or_null(json_object *in, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(in, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_new_string_len(json_object_get_string(v), json_object_get_string_len(v));
}

/* An integer member within [min, max], or false. */
static bool get_int(json_object *in, const char *key, int64_t min, int64_t max, int64_t *ret) {
        json_object *v;
        int64_t i;

        if (!json_object_object_get_ex(in, key, &v) || !json_object_is_type(v, json_type_int))
                return false;
        i = json_object_get_int64(v);
        if (i < min || i > max)
                return false;
        *ret = i;
        return true;
}

/* Whether @in already is what normalize() would make of it (a line history_append() wrote):
 * then it is kept as it is, which halves the work of reading. */
static bool is_canonical(json_object *in, int64_t usec) {
        static const struct {
                const char *key;
                json_type type;
                bool nullable;
        } keys[] = {
                { "time", json_type_string, false },   { "time_usec", json_type_int, false },
                { "via", json_type_string, true },     { "uid", json_type_int, true },
                { "pid", json_type_int, true },        { "sender", json_type_string, true },
                { "gpu", json_type_string, true },     { "change", json_type_string, false },
                { "old", json_type_string, true },     { "new", json_type_string, true },
                { "result", json_type_string, false }, { "errno", json_type_int, false },
                { "message", json_type_string, true },
        };
        char stamp[64], result[32];
        int64_t v;
        size_t k = 0;

        json_object_object_foreach(in, key, val) {
                if (k >= ELEMENTSOF(keys) || strcmp(key, keys[k].key) != 0)
                        return false;
                if (val ? !json_object_is_type(val, keys[k].type) : !keys[k].nullable)
                        return false;
                k++;
        }
        if (k != ELEMENTSOF(keys))
                return false;
        if (json_object_object_get(in, "uid") && !get_int(in, "uid", 0, UINT32_MAX, &v))
                return false;
        if (json_object_object_get(in, "pid") && !get_int(in, "pid", 1, INT32_MAX, &v))
                return false;
        if (!get_int(in, "errno", -4095, 0, &v))
                return false;
        errno_text((int) v, result, sizeof(result));
        if (strcmp(json_object_get_string(json_object_object_get(in, "result")), result) != 0)
                return false;
        format_time((uint64_t) usec, stamp, sizeof(stamp));
        return strcmp(json_object_get_string(json_object_object_get(in, "time")), stamp) == 0;
}

/* The entry of a history line with the keys of history_read(), in order.
 * @return 1 and the entry, 0 if the line is malformed, or -ENOMEM. */
static int normalize(json_object *in, json_object **ret) {
        _cleanup_json_ json_object *o = NULL;
        json_object *change;
        int64_t usec, uid, pid, error;
        bool has_errno;
        int r;

        if (!json_object_is_type(in, json_type_object) ||
            !get_int(in, "time_usec", 0, (int64_t) TIME_USEC_MAX, &usec) ||
            !json_object_object_get_ex(in, "change", &change) ||
            !json_object_is_type(change, json_type_string))
                return 0;
        if (is_canonical(in, usec)) {
                *ret = json_object_get(in);
                return 1;
        }

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        r = add_value(o, "time", time_json((uint64_t) usec));
        if (r >= 0)
                r = add_value(o, "time_usec", json_object_new_int64(usec));
        if (r >= 0)
                r = add_value(o, "via", string_or_null(in, "via"));
        if (r >= 0)
                r = add_value(o, "uid",
                              get_int(in, "uid", 0, UINT32_MAX, &uid) ? json_object_new_int64(uid)
                                                                      : NULL);
        if (r >= 0)
                r = add_value(o, "pid",
                              get_int(in, "pid", 1, INT32_MAX, &pid) ? json_object_new_int64(pid)
                                                                     : NULL);
        if (r >= 0)
                r = add_value(o, "sender", string_or_null(in, "sender"));
        if (r >= 0)
                r = add_value(o, "gpu", string_or_null(in, "gpu"));
        if (r >= 0)
                r = add_value(o, "change", string_or_null(in, "change"));
        if (r >= 0)
                r = add_value(o, "old", string_or_null(in, "old"));
        if (r >= 0)
                r = add_value(o, "new", string_or_null(in, "new"));
        has_errno = get_int(in, "errno", -4095, 0, &error);
        if (r >= 0)
                r = add_value(o, "result",
                              has_errno ? result_json((int) error) : string_or_null(in, "result"));
        if (r >= 0)
                r = add_value(o, "errno", has_errno ? json_object_new_int((int) error) : NULL);
        if (r >= 0)
                r = add_value(o, "message", string_or_null(in, "message"));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 1;
}

static int scan_line(struct scan *s, const char *line, size_t len) {
        _cleanup_json_ json_object *in = NULL;
        json_object *entry = NULL;
        int r;

        if (len == 0)
                return 0; /* an empty line is no record */
        in = parse_exact_with(s->tok, line, len);
        if (!in) {
                s->skipped++;
                return 0;
        }
        r = normalize(in, &entry);
        if (r < 0)
                return r;
        if (r == 0) {
                s->skipped++;
                return 0;
        }
        if (json_object_array_add(s->found, entry) < 0) {
                json_object_put(entry);
                return -ENOMEM;
        }
        return 0;
}

static int pread_full(int fd, char *buf, size_t n, off_t pos) {
        while (n > 0) {
                ssize_t k = pread(fd, buf, n, pos);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EIO; /* shrank under the lock: not our file */
                buf += k;
                n -= (size_t) k;
                pos += k;
        }
        return 0;
}

/*
 * Reads @fd backwards in chunks, newest line first, until enough entries are found, the
 * budget is spent or the file's start is reached. Only the chunk and the part of one line
 * that continues into it are in memory; a line longer than HISTORY_LINE_MAX is skipped
 * (counted once) without being kept. A line cut at the budget's edge is not counted.
 */
static int scan_file(struct scan *s, int fd) {
        _cleanup_free_ char *buf = NULL;
        size_t carry = 0;      /* buf[0, carry): the start of the file's unread part, no newline */
        bool dropping = false; /* the line being collected is too long: skip its bytes */
        struct stat st;
        off_t pos;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        pos = st.st_size;
        /* a chunk and what is carried (never more than HISTORY_LINE_MAX) */
        buf = malloc(HISTORY_CHUNK + HISTORY_LINE_MAX + 1);
        if (!buf)
                return -ENOMEM;

        while (!scan_done(s)) {
                size_t n, end;

                if (pos == 0) {
                        if (dropping)
                                return 0;
                        return scan_line(s, buf, carry); /* the file's first line */
                }
                if (s->budget == 0)
                        return 0;
                n = HISTORY_CHUNK;
                if ((uint64_t) pos < n)
                        n = (size_t) pos;
                if (s->budget < n)
                        n = (size_t) s->budget;
                pos -= (off_t) n;
                s->budget -= n;

                memmove(buf + n, buf, carry);
                r = pread_full(fd, buf, n, pos);
                if (r < 0)
                        return r;
                carry += n;

                /* lines end in the new chunk only: the carried bytes hold no newline */
                end = carry;
                for (size_t i = n; i-- > 0;) {
                        if (buf[i] != '\n')
                                continue;
                        if (dropping)
                                dropping = false;
                        else {
                                r = scan_line(s, buf + i + 1, end - i - 1);
                                if (r < 0)
                                        return r;
                                if (scan_done(s))
                                        return 0;
                        }
                        end = i;
                }
                carry = end;
                if (carry > HISTORY_LINE_MAX) {
                        if (!dropping)
                                s->skipped++;
                        dropping = true;
                        carry = 0;
                }
        }
        return 0;
}

int history_read(unsigned max, json_object **ret, unsigned *ret_skipped) {
        char path[PATH_MAX], old[PATH_MAX];
        _cleanup_close_ int fd = -EBADF, fd_old = -EBADF;
        _cleanup_json_ json_object *found = NULL, *out = NULL;
        _cleanup_(json_tokener_freep) json_tokener *tok = NULL;
        struct scan s = { .want = max, .budget = HISTORY_READ_BYTES_MAX };
        size_t n;
        int r;

        r = state_path(HISTORY_FILE, path, sizeof(path));
        if (r >= 0)
                r = state_path(HISTORY_OLD_FILE, old, sizeof(old));
        if (r < 0)
                return r;
        found = s.found = json_object_new_array();
        if (!found)
                return -ENOMEM;
        tok = s.tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;

        /* LOCK_SH on history.jsonl: no rotation while both generations are read */
        r = open_locked(path, false, &fd);
        if (r < 0 && r != -ENOENT)
                return r;
        if (fd >= 0) {
                r = scan_file(&s, fd);
                if (r < 0)
                        return r;
        }
        if (!scan_done(&s) && s.budget > 0) {
                fd_old = safe_open(old, O_RDONLY, 0, SAFE_OPEN_BLOCK);
                if (fd_old < 0 && fd_old != -ENOENT)
                        return fd_old;
                if (fd_old >= 0) {
                        r = scan_file(&s, fd_old);
                        if (r < 0)
                                return r;
                }
        }

        n = json_object_array_length(found);
        out = json_object_new_array_ext((int) n);
        if (!out)
                return -ENOMEM;
        for (size_t i = n; i-- > 0;)
                if (json_object_array_add(out,
                                          json_object_get(json_object_array_get_idx(found, i))) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(out);
        if (ret_skipped)
                *ret_skipped = s.skipped;
        return 0;
}

/* ---- intent records --------------------------------------------------------------------- */

static unsigned intent_seq;

static int write_full(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static bool intent_id_valid(const char *id, size_t size) {
        size_t len = strnlen(id, size);

        return len > 0 && len < size && id[0] != '.' && !strchr(id, '/');
}

/* Splits "<usec>-<pid>-<n>". */
static bool intent_id_parse(const char *id, uint64_t *ret_usec, uint32_t *ret_pid,
                            uint32_t *ret_n) {
        char buf[sizeof(((struct intent *) NULL)->id)];
        char *pid, *n;

        if (strlen(id) >= sizeof(buf))
                return false;
        strcpy(buf, id);
        pid = strchr(buf, '-');
        if (!pid)
                return false;
        *pid++ = '\0';
        n = strchr(pid, '-');
        if (!n)
                return false;
        *n++ = '\0';
        return parse_u64(buf, 10, ret_usec) >= 0 && parse_u32(pid, 10, ret_pid) >= 0 &&
               parse_u32(n, 10, ret_n) >= 0;
}

int intent_begin(struct intent *i) {
        _cleanup_json_ json_object *o = NULL, *detail = NULL;
        _cleanup_free_ char *text = NULL;
        char dir[PATH_MAX], tmp[PATH_MAX], path[PATH_MAX], id[sizeof(i->id)];
        _cleanup_close_ int fd = -EBADF;
        uint64_t usec;
        pid_t pid;
        int r, n;

        if (!i || !memchr(i->gpu, '\0', sizeof(i->gpu)) ||
            !memchr(i->change, '\0', sizeof(i->change)) || i->change[0] == '\0')
                return -EINVAL;
        if (i->detail) {
                detail = parse_exact(i->detail, strlen(i->detail));
                if (!detail)
                        return -EINVAL;
        }

        usec = now_realtime_us();
        pid = getpid();
        n = snprintf(id, sizeof(id), "%" PRIu64 "-%d-%u", usec, (int) pid,
                     __atomic_fetch_add(&intent_seq, 1u, __ATOMIC_RELAXED));
        if (n < 0 || (size_t) n >= sizeof(id))
                return -ENAMETOOLONG;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        r = add_value(o, "id", json_object_new_string(id));
        if (r >= 0)
                r = add_value(o, "time", time_json(usec));
        if (r >= 0)
                r = add_value(o, "time_usec", json_object_new_uint64(usec));
        if (r >= 0)
                r = add_value(o, "pid", json_object_new_int64(pid));
        if (r >= 0)
                r = add_field(o, "gpu", i->gpu);
        if (r >= 0)
                r = add_field(o, "change", i->change);
        if (r >= 0)
                r = add_field(o, "old", i->old_value);
        if (r >= 0)
                r = add_field(o, "new", i->new_value);
        if (r >= 0)
                r = add_value(o, "detail", TAKE_PTR(detail));
        if (r < 0)
                return r;
        if (asprintf(&text, "%s\n",
                     json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
                return -ENOMEM;

        r = intent_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        r = runtime_dir_mkdir(dir);
        if (r < 0)
                return r;
        if (snprintf(tmp, sizeof(tmp), "%s/.%s%s.tmp", dir, id, INTENT_SUFFIX) >=
                    (int) sizeof(tmp) ||
            snprintf(path, sizeof(path), "%s/%s%s", dir, id, INTENT_SUFFIX) >= (int) sizeof(path))
                return -ENAMETOOLONG;

        fd = safe_open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0640, SAFE_OPEN_BLOCK);
        if (fd < 0)
                return fd;
        (void) fchmod(fd, 0640);
        r = write_full(fd, text, strlen(text));
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        r = fsync_dir(dir);
        if (r < 0) {
                /* not durable: better no record than one the caller does not know of */
                (void) unlink(path);
                return r;
        }

        memcpy(i->id, id, sizeof(id));
        i->time_usec = usec;
        i->pid = pid;
        return 0;
}

int intent_end(const struct intent *i) {
        char dir[PATH_MAX], path[PATH_MAX];
        int r;

        if (!i || !intent_id_valid(i->id, sizeof(i->id)))
                return -EINVAL;
        r = intent_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        if (snprintf(path, sizeof(path), "%s/%s%s", dir, i->id, INTENT_SUFFIX) >=
            (int) sizeof(path))
                return -ENAMETOOLONG;
        if (unlink(path) < 0)
                return errno == ENOENT ? 0 : -errno;
        (void) fsync_dir(dir); /* at worst, a finished change is looked at again */
        return 0;
}

static void intent_clear(struct intent *i) {
        free(i->old_value);
        free(i->new_value);
        free(i->detail);
        *i = (struct intent){};
}

/* A string member that fits @size bytes with its NUL (may be empty unless @nonempty). */
static bool copy_member(json_object *o, const char *key, char *buf, size_t size, bool nonempty) {
        json_object *v;
        const char *s;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return false;
        s = json_object_get_string(v);
        if (strlen(s) >= size || (nonempty && s[0] == '\0'))
                return false;
        strcpy(buf, s);
        return true;
}

/* A member that is a string (copied) or null / absent (NULL). @return 1, 0 if mistyped, or
 * -ENOMEM. */
static int dup_member(json_object *o, const char *key, char **ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !v) {
                *ret = NULL;
                return 1;
        }
        if (!json_object_is_type(v, json_type_string))
                return 0;
        *ret = strdup(json_object_get_string(v));
        return *ret ? 1 : -ENOMEM;
}

/* Reads the record @name of @dfd. @return 1 and the intent, 0 if malformed, or -ENOMEM. */
static int intent_load(int dfd, const char *name, struct intent *ret) {
        _cleanup_json_ json_object *o = NULL;
        _cleanup_free_ char *data = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct intent i = {};
        json_object *v;
        size_t len = strlen(name), got = 0;
        uint64_t seq_usec;
        uint32_t seq_pid, seq_n;
        int64_t usec, pid;
        struct stat st;
        int r;

        if (len <= strlen(INTENT_SUFFIX) || len - strlen(INTENT_SUFFIX) >= sizeof(i.id) ||
            strcmp(name + len - strlen(INTENT_SUFFIX), INTENT_SUFFIX) != 0)
                return 0;
        memcpy(i.id, name, len - strlen(INTENT_SUFFIX));
        if (!intent_id_parse(i.id, &seq_usec, &seq_pid, &seq_n))
                return 0;

        fd = safe_openat(dfd, name, O_RDONLY, 0, 0); /* a FIFO, link...: skipped */
        if (fd < 0)
                return 0;
        if (fstat(fd, &st) < 0 || st.st_size > INTENT_FILE_MAX)
                return 0;
        data = malloc((size_t) st.st_size + 1);
        if (!data)
                return -ENOMEM;
        while (got < (size_t) st.st_size) {
                ssize_t k = read(fd, data + got, (size_t) st.st_size - got);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return 0;
                got += (size_t) k;
        }
        o = parse_exact(data, got);
        if (!o || !json_object_is_type(o, json_type_object))
                return 0;
        if (!json_object_object_get_ex(o, "id", &v) || !json_object_is_type(v, json_type_string) ||
            strcmp(json_object_get_string(v), i.id) != 0)
                return 0;
        if (!get_int(o, "time_usec", 0, (int64_t) TIME_USEC_MAX, &usec) ||
            !get_int(o, "pid", 1, INT32_MAX, &pid) ||
            !copy_member(o, "gpu", i.gpu, sizeof(i.gpu), false) ||
            !copy_member(o, "change", i.change, sizeof(i.change), true))
                return 0;
        i.time_usec = (uint64_t) usec;
        i.pid = (pid_t) pid;

        r = dup_member(o, "old", &i.old_value);
        if (r > 0)
                r = dup_member(o, "new", &i.new_value);
        if (r > 0 && json_object_object_get_ex(o, "detail", &v) && v) {
                i.detail = strdup(json_object_to_json_string_ext(
                        v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                if (!i.detail)
                        r = -ENOMEM;
        }
        if (r <= 0) {
                intent_clear(&i);
                return r;
        }
        *ret = i;
        return 1;
}

static int intent_cmp(const void *a, const void *b) {
        const struct intent *x = a, *y = b;
        uint64_t xu = 0, yu = 0;
        uint32_t xp = 0, yp = 0, xn = 0, yn = 0;

        if (x->time_usec != y->time_usec)
                return x->time_usec < y->time_usec ? -1 : 1;
        (void) intent_id_parse(x->id, &xu, &xp, &xn);
        (void) intent_id_parse(y->id, &yu, &yp, &yn);
        if (xp != yp)
                return xp < yp ? -1 : 1;
        if (xn != yn)
                return xn < yn ? -1 : 1;
        return strcmp(x->id, y->id);
}

int intent_list(struct intent **ret, size_t *ret_n, char ***ret_skipped) {
        _cleanup_strv_free_ char **skipped = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct intent *l = NULL;
        size_t n = 0;
        char dir[PATH_MAX];
        struct dirent *de;
        int r, fd;

        r = intent_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        /* the directory itself: never through a symbolic link */
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        (void) close(fd);
                if (errno == ELOOP || errno == ENOTDIR)
                        return -ENOTDIR;
                if (errno != ENOENT)
                        return -errno;
                *ret = NULL;
                *ret_n = 0;
                if (ret_skipped)
                        *ret_skipped = NULL;
                return 0;
        }

        for (;;) {
                struct intent i;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        r = -errno;
                        break;
                }
                if (de->d_name[0] == '.') /* ".", "..", temporary files of intent_begin() */
                        continue;
                r = intent_load(dirfd(d), de->d_name, &i);
                if (r < 0)
                        break;
                if (r == 0) {
                        _cleanup_free_ char *full = NULL;

                        if (asprintf(&full, "%s/%s", dir, de->d_name) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        r = strv_extend(&skipped, full);
                        if (r < 0)
                                break;
                        continue;
                }
                struct intent *nl = reallocarray(l, n + 1, sizeof(*l));
                if (!nl) {
                        intent_clear(&i);
                        r = -ENOMEM;
                        break;
                }
                l = nl;
                l[n++] = i;
        }
        if (r < 0) {
                intent_list_free(l, n);
                return r;
        }

        if (n > 1)
                qsort(l, n, sizeof(*l), intent_cmp);
        *ret = l;
        *ret_n = n;
        if (ret_skipped)
                *ret_skipped = TAKE_PTR(skipped);
        return 0;
}

void intent_list_free(struct intent *l, size_t n) {
        for (size_t i = 0; l && i < n; i++)
                intent_clear(&l[i]);
        free(l);
}
