/* SPDX-License-Identifier: MIT */
/*
 * The state file (see state.h): the lock, a strict loader that keeps a damaged file aside,
 * the atomic commit. The whole document stays in memory as json-c objects, so every key this
 * code does not know is written back as it was read; the slices' records are checked on load
 * by the checkers the build lists (state-records.h) and rewritten by their owners.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "macro.h"
#include "parse-util.h"
#include "runtime-dir.h"
#include "safe-open.h"
#include "state-records.h"
#include "state.h"
#include "time-util.h"

#define STATE_FILE "state.json"
#define STATE_TMP ".state.json.tmp"
#define STATE_LOCK "state.lock"
/* Far beyond what 64 VMs on a few dozen GPUs take; anything larger is not ours. */
#define STATE_SIZE_MAX (16u * 1024u * 1024u)
#define LOCK_POLL_MS 5u

/* A damaged record, and how to drop it: member @key of object @parent, or element @index of
 * array @parent (borrowed from root); parent NULL for the whole file. */
struct damage {
        struct state_damage pub;
        json_object *parent;
        char *key;
        int index;
};

struct state_store {
        enum state_mode mode;
        int lock_fd; /* -1: read without the lock */
        bool newer;  /* the file is of a newer version: never written */
        bool file_damaged; /* the file as a whole cannot be read: never written over */
        int keep_error; /* not a regular file: never read, replaced or renamed (the errno) */
        json_object *root;
        struct damage *damage;
        size_t n_damage;
        char *warning;
        char dir[PATH_MAX];
        char path[PATH_MAX];
};

static inline void json_object_putp(json_object **p) {
        json_object_put(*p);
}
#define _cleanup_json_ _cleanup_(json_object_putp)

/* The slices' records of a GPU, as the build lists them (see state.h). */
/* clang-format off */
#define X(name) extern const struct state_record state_record_##name;
STATE_RECORDS
#undef X

static const struct state_record *const records[] = {
#define X(name) &state_record_##name,
        STATE_RECORDS
#undef X
        NULL
};
/* clang-format on */

/* ---- checking records ------------------------------------------------------------------- */

int state_fail(struct state_error *e, const char *where, const char *fmt, ...) {
        char what[384];
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        if (where && where[0])
                (void) snprintf(e->msg, sizeof(e->msg), "%s: %s", where, what);
        else
                (void) snprintf(e->msg, sizeof(e->msg), "%s", what);
        return -EINVAL;
}

const char *state_json_type(const json_object *o) {
        return o ? json_type_to_name(json_object_get_type(o)) : "null";
}

/* Where damage goes while loading: NULL while reading records again (they were checked). */
struct state_check {
        struct state_store *s;
        const char *bdf; /* the GPU the records belong to, NULL: every GPU */
};

static int damage_add(struct state_check *c, const char *where, const char *problem,
                      json_object *parent, const char *key, int index) {
        struct damage *n, *d;

        if (!c)
                return 0;
        n = reallocarray(c->s->damage, c->s->n_damage + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        c->s->damage = n;
        d = &n[c->s->n_damage];
        *d = (struct damage){ .parent = parent, .index = index };
        (void) snprintf(d->pub.where, sizeof(d->pub.where), "%s", where);
        (void) snprintf(d->pub.problem, sizeof(d->pub.problem), "%s", problem);
        (void) snprintf(d->pub.bdf, sizeof(d->pub.bdf), "%s", c->bdf ? c->bdf : "");
        if (key) {
                d->key = strdup(key);
                if (!d->key)
                        return -ENOMEM;
        }
        if (parent)
                d->pub.value = key ? json_object_object_get(parent, key)
                                   : json_object_array_get_idx(parent, (size_t) index);
        c->s->n_damage++;
        return 0;
}

/* A record that fails its check: collected (the message without the record's own path, which
 * is in where), or the error when not collecting. */
int state_check_damaged(struct state_check *c, const struct state_error *e, const char *where,
                        json_object *parent, const char *key, int index) {
        size_t n = strlen(where);
        const char *problem = e->msg;

        if (!c)
                return -EINVAL;
        if (strncmp(problem, where, n) == 0) {
                problem += n;
                problem += strspn(problem, ".:");
                problem += strspn(problem, " ");
        }
        return damage_add(c, where, problem[0] ? problem : e->msg, parent, key, index);
}

/* The records of one GPU's object, each by its slice's checker; a record damaged as a whole
 * is collected as such. 0 or -ENOMEM. */
static int check_records(struct state_error *e, struct state_check *one, const char *bdf,
                         json_object *gpu) {
        for (size_t i = 0; records[i]; i++) {
                char at[512];
                json_object *v;
                int r;

                if (!json_object_object_get_ex(gpu, records[i]->name, &v))
                        continue;
                (void) snprintf(at, sizeof(at), "gpus.%s.%s", bdf, records[i]->name);
                r = records[i]->check(one, e, at, v);
                if (r == -EINVAL)
                        r = state_check_damaged(one, e, at, gpu, records[i]->name, -1);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Checks a whole document record by record, collecting the damaged ones into @s. 1 when it is
 * of a newer version (not looked into), 0 when it can be read (maybe with damaged records),
 * -EINVAL with e->msg when the file as a whole cannot be (no version), -ENOMEM. */
static int check_document(struct state_error *e, struct state_store *s, json_object *root,
                          int64_t *ret_version) {
        struct state_check all = { .s = s };
        json_object *v, *gpus;
        int64_t version;
        int r;

        if (!json_object_is_type(root, json_type_object))
                return state_fail(e, NULL, "the top level is not an object (%s)",
                                  state_json_type(root));
        if (!json_object_object_get_ex(root, "version", &v))
                return state_fail(e, "version", "missing");
        if (!json_object_is_type(v, json_type_int))
                return state_fail(e, "version", "not an integer (%s)", state_json_type(v));
        version = json_object_get_int64(v);
        *ret_version = version;
        if (version <= 0)
                return state_fail(e, "version", "%" PRId64 " is not a version", version);
        if (version > STATE_VERSION)
                return 1;

        if (!json_object_object_get_ex(root, "gpus", &gpus))
                return 0;
        if (!json_object_is_type(gpus, json_type_object)) {
                (void) state_fail(e, "gpus", "not an object (%s)", state_json_type(gpus));
                return state_check_damaged(&all, e, "gpus", root, "gpus", -1);
        }
        json_object_object_foreach(gpus, bdf, gpu) {
                struct state_check one = { .s = s, .bdf = bdf };
                char at[512];

                (void) snprintf(at, sizeof(at), "gpus.%s", bdf);
                if (!pci_bdf_valid(bdf)) {
                        /* whose record this is cannot be told: it concerns every GPU */
                        (void) state_fail(
                                e, at, "'%s' is not a PCI address (dddd:bb:dd.f, lower case)", bdf);
                        r = state_check_damaged(&all, e, at, gpus, bdf, -1);
                } else if (!json_object_is_type(gpu, json_type_object)) {
                        (void) state_fail(e, at, "not an object (%s)", state_json_type(gpu));
                        r = state_check_damaged(&one, e, at, gpus, bdf, -1);
                } else
                        r = check_records(e, &one, bdf, gpu);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- opening and loading ----------------------------------------------------------------- */

static json_object *new_document(void) {
        _cleanup_json_ json_object *root = json_object_new_object();

        if (!root)
                return NULL;
        if (json_object_object_add(root, "version", json_object_new_int(STATE_VERSION)) < 0)
                return NULL;
        return TAKE_PTR(root);
}

/* The whole file: -ENOENT, -EFBIG (larger than STATE_SIZE_MAX), -ENOMEM or the errno. */
static int read_all(const char *path, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;

        /* Never hangs on a FIFO, never follows a link: -ELOOP, -EISDIR, -EBADFD (safe-open.h) */
        fd = safe_open(path, O_RDONLY, 0, SAFE_OPEN_BLOCK);
        if (fd < 0)
                return fd;
        for (;;) {
                ssize_t n;

                if (len == size) {
                        size_t nsize = size ? size * 2 : 16384;
                        char *p;

                        if (size > STATE_SIZE_MAX)
                                return -EFBIG;
                        p = realloc(buf, nsize + 1);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        size = nsize;
                }
                n = read(fd, buf + len, size - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        if (len > STATE_SIZE_MAX)
                return -EFBIG;
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

/* The offset of the first integer literal outside strings that does not fit 64 bits, or
 * SIZE_MAX. json-c would keep such a number clamped, so a record holding one could not be
 * written back as it was read: the file is then unreadable as a whole (never written over). */
static size_t too_large_integer(const char *text, size_t len) {
        bool in_string = false;

        for (size_t i = 0; i < len; i++) {
                char c = text[i];
                size_t end = i;
                bool integer = true;

                if (in_string) {
                        if (c == '\\')
                                i++;
                        else if (c == '"')
                                in_string = false;
                        continue;
                }
                if (c == '"') {
                        in_string = true;
                        continue;
                }
                if (c != '-' && (c < '0' || c > '9'))
                        continue;
                while (end < len && strchr("+-0123456789.eE", text[end])) {
                        integer = integer && !strchr(".eE", text[end]);
                        end++;
                }
                if (integer) {
                        char buf[64];
                        size_t n = end - i;

                        if (n >= sizeof(buf))
                                return i;
                        memcpy(buf, text + i, n);
                        buf[n] = '\0';
                        errno = 0;
                        if (buf[0] == '-')
                                (void) strtoll(buf, NULL, 10);
                        else
                                (void) strtoull(buf, NULL, 10);
                        if (errno == ERANGE)
                                return i;
                }
                i = end - 1;
        }
        return SIZE_MAX;
}

/* Parses JSON text strictly (RFC 8259, UTF-8): NULL with the reason in e. */
static json_object *parse_json(struct state_error *e, const char *text, size_t len) {
        json_tokener *tok;
        json_object *root;
        enum json_tokener_error err;
        size_t end;

        if (len == 0) {
                (void) state_fail(e, NULL, "empty file, not JSON");
                return NULL;
        }
        if (memchr(text, '\0', len)) {
                (void) state_fail(e, NULL, "a NUL byte at byte %zu, not JSON",
                                  (size_t) ((const char *) memchr(text, '\0', len) - text));
                return NULL;
        }
        if (len > INT_MAX) {
                (void) state_fail(e, NULL, "too large");
                return NULL;
        }
        if (too_large_integer(text, len) != SIZE_MAX) {
                (void) state_fail(e, NULL,
                                  "an integer beyond 64 bits at byte %zu, which could not be "
                                  "written back as it is",
                                  too_large_integer(text, len));
                return NULL;
        }
        tok = json_tokener_new();
        if (!tok) {
                (void) state_fail(e, NULL, "out of memory");
                return NULL;
        }
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
                                            JSON_TOKENER_VALIDATE_UTF8);
        root = json_tokener_parse_ex(tok, text, (int) len);
        err = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (root && err == json_tokener_success) {
                size_t trail = end + strspn(text + end, " \t\r\n");

                if (trail == len)
                        return root;
                json_object_put(root);
                (void) state_fail(e, NULL, "not valid JSON: text after the document at byte %zu",
                                  trail);
                return NULL;
        }
        json_object_put(root);
        if (err == json_tokener_continue || err == json_tokener_success)
                (void) state_fail(e, NULL, "not valid JSON: the text ends too early");
        else
                (void) state_fail(e, NULL, "not valid JSON at byte %zu: %s", end,
                                  json_tokener_error_desc(err));
        return NULL;
}

/* The damaged file kept aside: renamed to state.json.corrupt-<UTC time>[-N]; the name in
 * @ret_aside. */
static int keep_aside(struct state_store *s, char *ret_aside, size_t size) {
        char ts[32], aside[PATH_MAX + 64];
        struct tm tm;
        time_t t = time(NULL);
        unsigned n;

        if (!gmtime_r(&t, &tm) || strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm) == 0)
                (void) snprintf(ts, sizeof(ts), "%lld", (long long) t);
        (void) snprintf(aside, sizeof(aside), "%s.corrupt-%s", s->path, ts);
        /* Only the holder of the exclusive lock renames: checking first is race free. */
        for (n = 1; n < 10000; n++) {
                struct stat st;

                if (lstat(aside, &st) < 0 && errno == ENOENT)
                        break;
                (void) snprintf(aside, sizeof(aside), "%s.corrupt-%s-%u", s->path, ts, n);
        }
        if (n >= 10000)
                return -EEXIST;
        if (rename(s->path, aside) < 0)
                return -errno;
        (void) snprintf(ret_aside, size, "%s", aside);
        return 0;
}

static int set_warning(struct state_store *s, const char *fmt, ...) _printf_(2, 3);
static int set_warning(struct state_store *s, const char *fmt, ...) {
        va_list ap;
        int r;

        free(s->warning);
        va_start(ap, fmt);
        r = vasprintf(&s->warning, fmt, ap);
        va_end(ap);
        if (r < 0) {
                s->warning = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* The warning for damaged records: the first one named, and how many there are. */
static int warn_damage(struct state_store *s) {
        const struct state_damage *d;

        if (s->n_damage == 0)
                return 0;
        d = &s->damage[0].pub;
        return set_warning(s, "%s: the record %s is damaged (%s)%s%.0zu%s: %s", s->path, d->where,
                           d->problem, s->n_damage > 1 ? ", and " : "",
                           s->n_damage > 1 ? s->n_damage - 1 : 0,
                           s->n_damage > 1 ? " more" : "",
                           "kept as it is; the other records are read, and the power of a GPU "
                           "with a damaged record is not changed until 'amdsmi power clear "
                           "--damaged' drops it");
}

/* Not a regular file (a FIFO, a link, a directory...): never read, never renamed aside nor
 * replaced; readers see an empty state and the reason, writers cannot commit (keep_error). */
static int refuse_not_regular(struct state_store *s, int r) {
        char msg[PATH_MAX + 128];

        s->root = new_document();
        if (!s->root)
                return -ENOMEM;
        s->keep_error = r;
        if (asprintf(&s->warning, "%s; reading an empty state, nothing is saved over it",
                     safe_open_message(s->path, r, msg, sizeof(msg))) < 0) {
                s->warning = NULL;
                return -ENOMEM;
        }
        return 0;
}

static int state_load(struct state_store *s) {
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *root = NULL;
        struct state_error e = {};
        int64_t version = 0;
        size_t len = 0;
        int r;

        r = read_all(s->path, &text, &len);
        if (r == -ENOENT) {
                s->root = new_document();
                return s->root ? 0 : -ENOMEM;
        }
        if (r == -EFBIG)
                (void) state_fail(&e, NULL, "larger than %u bytes", STATE_SIZE_MAX);
        else if (r == -ELOOP || r == -EISDIR || r == -EBADFD)
                return refuse_not_regular(s, r);
        else if (r < 0)
                return r;
        else {
                root = parse_json(&e, text, len);
                if (root) {
                        r = check_document(&e, s, root, &version);
                        if (r == 0) {
                                s->root = TAKE_PTR(root);
                                return warn_damage(s);
                        }
                        if (r > 0) {
                                s->newer = true;
                                s->root = new_document();
                                if (!s->root)
                                        return -ENOMEM;
                                return set_warning(s,
                                                   "%s is of version %" PRId64
                                                   ", newer than this amdsmi knows (%d): left "
                                                   "untouched, reading an empty state, nothing "
                                                   "will be written",
                                                   s->path, version, STATE_VERSION);
                        }
                        if (r != -EINVAL)
                                return r;
                }
        }

        /* The file as a whole cannot be read: every record in it is damaged. It stays as it
         * is (never written over) until state_drop_damaged() keeps it aside. */
        for (size_t i = 0; i < s->n_damage; i++)
                free(s->damage[i].key);
        s->n_damage = 0;
        s->file_damaged = true;
        s->root = new_document();
        if (!s->root)
                return -ENOMEM;
        {
                struct state_check all = { .s = s };

                r = damage_add(&all, "", e.msg, NULL, NULL, -1);
                if (r < 0)
                        return r;
        }
        return set_warning(s, "%s is damaged (%s): left as it is, reading an empty state; "
                              "power changes are refused until 'amdsmi power clear --damaged' "
                              "keeps it aside",
                           s->path, e.msg);
}

static int lock_wait(int fd, int op, unsigned timeout_ms) {
        uint64_t deadline = now_ms() + timeout_ms;

        for (;;) {
                uint64_t now;

                if (flock(fd, op | LOCK_NB) == 0)
                        return 0;
                if (errno != EWOULDBLOCK && errno != EINTR)
                        return -errno;
                now = now_ms();
                if (now >= deadline)
                        return -EBUSY;
                sleep_ms(deadline - now < LOCK_POLL_MS ? (unsigned) (deadline - now)
                                                       : LOCK_POLL_MS);
        }
}

void state_close(struct state_store *s) {
        if (!s)
                return;
        if (s->lock_fd >= 0)
                (void) close(s->lock_fd); /* releases the flock */
        json_object_put(s->root);
        free(s->warning);
        for (size_t i = 0; i < s->n_damage; i++)
                free(s->damage[i].key);
        free(s->damage);
        free(s);
}

static inline void state_closep(struct state_store **s) {
        state_close(*s);
}

static bool lock_private(int fd) {
        struct stat st;

        return fstat(fd, &st) == 0 && (st.st_mode & 077) == 0;
}

int state_open(enum state_mode mode, unsigned timeout_ms, struct state_store **ret) {
        _cleanup_(state_closep) struct state_store *s = NULL;
        char lock[PATH_MAX];
        int r, n;

        if (!ret || (mode != STATE_READ && mode != STATE_WRITE))
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->mode = mode;
        s->lock_fd = -1;

        r = state_dir(s->dir, sizeof(s->dir));
        if (r < 0)
                return r;
        n = snprintf(s->path, sizeof(s->path), "%s/" STATE_FILE, s->dir);
        if (n < 0 || (size_t) n >= sizeof(s->path))
                return -ENAMETOOLONG;
        n = snprintf(lock, sizeof(lock), "%s/" STATE_LOCK, s->dir);
        if (n < 0 || (size_t) n >= sizeof(lock))
                return -ENAMETOOLONG;

        if (mode == STATE_WRITE) {
                r = runtime_dir_mkdir(s->dir);
                if (r < 0)
                        return r;
                /* 0600: a lock others can open is a lock others can hold */
                s->lock_fd = lock_file_open(lock);
                if (s->lock_fd < 0)
                        return s->lock_fd;
        } else {
                /* Unprivileged, no state yet, or a lock file others could open (an older
                 * amdsmi's 0644 one, which anyone could hold): read without the lock (the
                 * file is only ever replaced by rename, never rewritten in place). */
                s->lock_fd = safe_open(lock, O_RDONLY, 0, SAFE_OPEN_TRUSTED);
                if (s->lock_fd >= 0 && !lock_private(s->lock_fd)) {
                        (void) close(s->lock_fd);
                        s->lock_fd = -1;
                }
        }

        if (s->lock_fd >= 0) {
                r = lock_wait(s->lock_fd, mode == STATE_WRITE ? LOCK_EX : LOCK_SH, timeout_ms);
                if (r < 0)
                        return r;
        }

        r = state_load(s);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(s);
        return 0;
}

const char *state_warning(const struct state_store *s) {
        return s ? s->warning : NULL;
}

const char *state_path(const struct state_store *s) {
        return s ? s->path : NULL;
}

/* ---- the records of the GPUs ------------------------------------------------------------- */

json_object *state_get_gpu_record(const struct state_store *s, const char *bdf, const char *name) {
        json_object *gpus, *gpu, *v;

        if (!s || !name || !pci_bdf_valid(bdf) ||
            !json_object_object_get_ex(s->root, "gpus", &gpus) ||
            !json_object_object_get_ex(gpus, bdf, &gpu) ||
            !json_object_object_get_ex(gpu, name, &v))
                return NULL;
        return v;
}

static int set_member(json_object *obj, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(obj, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int state_set_gpu_record(struct state_store *s, const char *bdf, const char *name,
                         json_object *value) {
        _cleanup_json_ json_object *v = value;
        _cleanup_json_ json_object *newgpu = NULL;
        json_object *gpus, *gpu = NULL;

        if (!s || !name || !pci_bdf_valid(bdf))
                return -EINVAL;
        if (state_damage_find(s, bdf))
                return -EUCLEAN;

        if (!json_object_object_get_ex(s->root, "gpus", &gpus)) {
                gpus = json_object_new_object();
                if (set_member(s->root, "gpus", gpus) < 0)
                        return -ENOMEM;
        }
        (void) json_object_object_get_ex(gpus, bdf, &gpu);
        if (!v) {
                if (gpu) {
                        json_object_object_del(gpu, name);
                        if (json_object_object_length(gpu) == 0)
                                json_object_object_del(gpus, bdf);
                }
                return 0;
        }
        if (!gpu) {
                newgpu = json_object_new_object();
                if (!newgpu)
                        return -ENOMEM;
                gpu = newgpu;
        }
        if (set_member(gpu, name, TAKE_PTR(v)) < 0)
                return -ENOMEM;
        if (newgpu)
                return set_member(gpus, bdf, TAKE_PTR(newgpu));
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int state_list_gpu_records(const struct state_store *s, const char *name,
                           bool (*keep)(const json_object *record), char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        json_object *gpus;
        size_t n = 0;

        if (!s || !name || !ret)
                return -EINVAL;
        if (!json_object_object_get_ex(s->root, "gpus", &gpus) ||
            !json_object_is_type(gpus, json_type_object))
                gpus = NULL; /* none, or damaged (named as such) */
        l = calloc((gpus ? (size_t) json_object_object_length(gpus) : 0) + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        if (gpus) {
                json_object_object_foreach(gpus, bdf, gpu) {
                        json_object *record;

                        if (!pci_bdf_valid(bdf) || /* a damaged record, not a GPU */
                            !json_object_object_get_ex(gpu, name, &record) ||
                            (keep && !keep(record)))
                                continue;
                        l[n] = strdup(bdf);
                        if (!l[n])
                                return -ENOMEM;
                        n++;
                }
        }
        qsort(l, n, sizeof(char *), cmp_str);
        *ret = TAKE_PTR(l);
        return (int) n;
}

/* ---- commit ------------------------------------------------------------------------------ */

static int write_all(int fd, const char *p, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -EIO;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

static int write_temp(const char *tmp, const char *text) {
        _cleanup_close_ int fd = -1;
        int r;

        fd = safe_open(tmp, O_CREAT | O_TRUNC | O_WRONLY, 0644, SAFE_OPEN_BLOCK);
        if (fd < 0)
                return fd;
        r = write_all(fd, text, strlen(text));
        if (r < 0)
                return r;
        r = write_all(fd, "\n", 1);
        if (r < 0)
                return r;
        if (fsync(fd) < 0)
                return -errno;
        r = close(TAKE_FD(fd));
        if (r < 0 && errno != EINTR)
                return -errno;
        return 0;
}

int state_can_commit(const struct state_store *s) {
        if (!s)
                return -EINVAL;
        if (s->mode != STATE_WRITE)
                return -EBADF;
        if (s->newer)
                return -EPROTONOSUPPORT;
        if (s->keep_error < 0)
                return s->keep_error;
        if (s->file_damaged)
                return -EUCLEAN;
        return 0;
}

/* ---- damaged records --------------------------------------------------------------------- */

int state_unreadable(const struct state_store *s) {
        if (!s)
                return -EINVAL;
        if (s->newer)
                return -EPROTONOSUPPORT;
        if (s->keep_error < 0)
                return s->keep_error;
        return s->file_damaged ? -EUCLEAN : 0;
}

size_t state_damage_count(const struct state_store *s) {
        return s ? s->n_damage : 0;
}

const struct state_damage *state_damage_get(const struct state_store *s, size_t i) {
        return s && i < s->n_damage ? &s->damage[i].pub : NULL;
}

static bool concerns(const struct damage *d, const char *bdf) {
        return !bdf || d->pub.bdf[0] == '\0' || strcmp(d->pub.bdf, bdf) == 0;
}

const struct state_damage *state_damage_find(const struct state_store *s, const char *bdf) {
        for (size_t i = 0; s && i < s->n_damage; i++)
                if (concerns(&s->damage[i], bdf))
                        return &s->damage[i].pub;
        return NULL;
}

static json_object *dropped_json(const struct damage *d, const char *kept_as) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (json_object_object_add(o, "record", json_object_new_string(d->pub.where[0]
                                                                              ? d->pub.where
                                                                              : "(the file)")) < 0 ||
            json_object_object_add(o, "gpu_bdf", d->pub.bdf[0] ? json_object_new_string(d->pub.bdf)
                                                               : NULL) < 0 ||
            json_object_object_add(o, "problem", json_object_new_string(d->pub.problem)) < 0 ||
            json_object_object_add(o, "value", json_object_get(d->pub.value)) < 0 ||
            json_object_object_add(o, "kept_as", kept_as ? json_object_new_string(kept_as)
                                                         : NULL) < 0)
                return NULL;
        return TAKE_PTR(o);
}

int state_drop_damaged(struct state_store *s, const char *bdf, json_object **ret_dropped) {
        _cleanup_json_ json_object *list = json_object_new_array();
        char aside[PATH_MAX + 64] = "";
        size_t kept = 0;
        int r, n;

        if (!s || !list)
                return -ENOMEM;
        if (bdf && !pci_bdf_valid(bdf))
                return -EINVAL;
        if (s->mode == STATE_WRITE && s->file_damaged && !s->newer) {
                r = keep_aside(s, aside, sizeof(aside));
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < s->n_damage; i++) {
                json_object *o;

                if (!concerns(&s->damage[i], bdf))
                        continue;
                o = dropped_json(&s->damage[i], aside[0] ? aside : NULL);
                if (!o || json_object_array_add(list, o) < 0) {
                        json_object_put(o);
                        return -ENOMEM;
                }
        }
        n = (int) json_object_array_length(list);
        if (s->mode != STATE_WRITE) { /* a dry run: what would be dropped */
                if (ret_dropped)
                        *ret_dropped = TAKE_PTR(list);
                return n;
        }
        /* later elements of an array first, so that the earlier indexes stay right */
        for (size_t i = s->n_damage; i > 0; i--) {
                struct damage *d = &s->damage[i - 1];

                if (!concerns(d, bdf) || !d->parent)
                        continue;
                if (d->key)
                        json_object_object_del(d->parent, d->key);
                else
                        (void) json_object_array_del_idx(d->parent, (size_t) d->index, 1);
        }
        for (size_t i = 0; i < s->n_damage; i++) {
                if (concerns(&s->damage[i], bdf)) {
                        free(s->damage[i].key);
                        continue;
                }
                s->damage[kept++] = s->damage[i];
        }
        s->n_damage = kept;
        if (s->file_damaged)
                s->file_damaged = false; /* kept aside: an empty state from here on */
        if (ret_dropped)
                *ret_dropped = TAKE_PTR(list);
        return n;
}

json_object *state_get_section(const struct state_store *s, const char *name) {
        json_object *v = NULL;

        if (!s || !s->root || strcmp(name, "version") == 0 || strcmp(name, "gpus") == 0)
                return NULL;
        return json_object_object_get_ex(s->root, name, &v) ? v : NULL;
}

int state_set_section(struct state_store *s, const char *name, json_object *value) {
        if (!s || !s->root || strcmp(name, "version") == 0 || strcmp(name, "gpus") == 0) {
                json_object_put(value);
                return -EINVAL;
        }
        if (!value) {
                json_object_object_del(s->root, name);
                return 0;
        }
        return json_object_object_add(s->root, name, value) < 0 ? -ENOMEM : 0;
}

int state_commit(struct state_store *s) {
        char tmp[PATH_MAX];
        const char *text;
        _cleanup_close_ int dfd = -1;
        int r, n;

        if (!s)
                return -EINVAL;
        r = state_can_commit(s); /* a damaged file that could not be kept aside stays */
        if (r < 0)
                return r;

        n = snprintf(tmp, sizeof(tmp), "%s/" STATE_TMP, s->dir);
        if (n < 0 || (size_t) n >= sizeof(tmp))
                return -ENAMETOOLONG;
        text = json_object_to_json_string_ext(s->root, JSON_C_TO_STRING_PRETTY |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text)
                return -ENOMEM;

        r = write_temp(tmp, text);
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        if (rename(tmp, s->path) < 0) {
                r = -errno;
                (void) unlink(tmp);
                return r;
        }
        /* The rename itself must survive a crash. */
        dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        if (fsync(dfd) < 0)
                return -errno;
        return 0;
}

const char *state_open_error(int r, char *buf, size_t size) {
        char dir[PATH_MAX], lock[PATH_MAX + 16];
        struct stat st;

        if (r == -EBUSY)
                (void) snprintf(buf, size, "locked by another process");
        else if ((r == -ELOOP || r == -EISDIR || r == -EBADFD || r == -ENOTDIR || r == -EPERM) &&
                 state_dir(dir, sizeof(dir)) >= 0) {
                /* the state file that is not one (state_commit()'s refusal) */
                (void) snprintf(lock, sizeof(lock), "%s/" STATE_FILE, dir);
                if (r != -EPERM && r != -ENOTDIR && lstat(lock, &st) == 0 && !S_ISREG(st.st_mode))
                        return safe_open_message(lock, r, buf, size);
                (void) snprintf(lock, sizeof(lock), "%s/" STATE_LOCK, dir);
                /* the directory (not one, not ours), else the lock file */
                if (lstat(dir, &st) == 0 &&
                    (!S_ISDIR(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0)))
                        return safe_open_message(dir, S_ISDIR(st.st_mode) ? -EPERM : -ENOTDIR, buf,
                                                 size);
                return safe_open_message(lock, r, buf, size);
        } else
                (void) snprintf(buf, size, "%s", strerror(-r));
        return buf;
}
