/* SPDX-License-Identifier: MIT */
/*
 * The state file (see power-state.h): the lock, a strict loader that keeps a damaged file aside,
 * the atomic commit. The whole document stays in memory as json-c objects, so every key this
 * code does not know is written back as it was read; the power sections are checked on load
 * and rewritten field by field.
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
#include "power-state.h"
#include "runtime-dir.h"
#include "safe-open.h"
#include "time-util.h"
#include "parse-util.h"

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

/* ---- checking and reading the power sections ------------------------------------------- */

/* Why a document is corrupt: "gpus.0000:c1:00.0.power.host.uw: not an integer (a string)". */
struct verr {
        char msg[512];
};

_printf_(3, 4) static int fail(struct verr *e, const char *where, const char *fmt, ...) {
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

static const char *type_name(const json_object *o) {
        return o ? json_type_to_name(json_object_get_type(o)) : "null";
}

/* A member "where.key" that must be an unsigned integer. *ret_found false when absent. */
static int get_uint(struct verr *e, const char *where, const json_object *obj, const char *key,
                    bool required, uint64_t *ret, bool *ret_found) {
        char at[512];
        json_object *v;

        (void) snprintf(at, sizeof(at), "%s.%s", where, key);
        if (!json_object_object_get_ex(obj, key, &v)) {
                if (required)
                        return fail(e, at, "missing");
                if (ret_found)
                        *ret_found = false;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return fail(e, at, "not an integer (%s)", type_name(v));
        if (json_object_get_int64(v) < 0)
                return fail(e, at, "negative (%" PRId64 ")", json_object_get_int64(v));
        *ret = json_object_get_uint64(v);
        if (ret_found)
                *ret_found = true;
        return 0;
}

/* A member that must be a string shorter than max bytes (NUL included); "" when absent. */
static int get_string(struct verr *e, const char *where, const json_object *obj, const char *key,
                      bool required, size_t max, const char **ret) {
        char at[512];
        json_object *v;
        const char *s;

        (void) snprintf(at, sizeof(at), "%s.%s", where, key);
        if (!json_object_object_get_ex(obj, key, &v)) {
                if (required)
                        return fail(e, at, "missing");
                *ret = "";
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return fail(e, at, "not a string (%s)", type_name(v));
        s = json_object_get_string(v);
        if ((size_t) json_object_get_string_len(v) != strlen(s))
                return fail(e, at, "contains a NUL character");
        if (strlen(s) >= max)
                return fail(e, at, "longer than %zu bytes", max - 1);
        *ret = s;
        return 0;
}

static int check_uw(struct verr *e, const char *where, uint64_t uw) {
        char at[512];
        int r;

        (void) snprintf(at, sizeof(at), "%s.uw", where);
        r = power_validate(uw);
        if (r == -ERANGE)
                return fail(e, at, "%" PRIu64 " µW is more than %" PRIu64 " µW", uw,
                            POWER_WRITE_MAX_UW);
        if (r < 0)
                return fail(e, at, "%" PRIu64 " µW is less than 1 W", uw);
        return 0;
}

/* One source object (host, apml or a VM) into ps. */
static int parse_source(struct verr *e, const char *where, const json_object *obj,
                        enum power_source_kind kind, struct power_sources *ps) {
        const char *key = NULL, *vf_bdf = NULL, *setter;
        uint64_t uw, set_usec;
        char at[512];
        int r;

        if (!json_object_is_type(obj, json_type_object))
                return fail(e, where, "not an object (%s)", type_name(obj));

        if (kind == POWER_SOURCE_VM) {
                r = get_string(e, where, obj, "key", true, POWER_KEY_MAX, &key);
                if (r < 0)
                        return r;
                (void) snprintf(at, sizeof(at), "%s.key", where);
                if (key[0] == '\0')
                        return fail(e, at, "empty");
                if (power_sources_find_vm(ps, key))
                        return fail(e, at, "'%s' appears twice", key);
                r = get_string(e, where, obj, "vf_bdf", false, POWER_BDF_MAX, &vf_bdf);
                if (r < 0)
                        return r;
                (void) snprintf(at, sizeof(at), "%s.vf_bdf", where);
                if (vf_bdf[0] != '\0' && !pci_bdf_valid(vf_bdf))
                        return fail(e, at, "'%s' is not a PCI address (dddd:bb:dd.f)", vf_bdf);
        }
        r = get_uint(e, where, obj, "uw", true, &uw, NULL);
        if (r < 0)
                return r;
        r = check_uw(e, where, uw);
        if (r < 0)
                return r;
        r = get_string(e, where, obj, "setter", false, POWER_SETTER_MAX, &setter);
        if (r < 0)
                return r;
        r = get_uint(e, where, obj, "set_usec", true, &set_usec, NULL);
        if (r < 0)
                return r;

        r = power_sources_set(ps, kind, key, vf_bdf, uw, setter, set_usec);
        if (r == -ENOSPC)
                return fail(e, where, "more than %d VMs", POWER_VM_MAX);
        if (r < 0)
                return fail(e, where, "refused: %s", strerror(-r));
        return 0;
}

/* Where damage goes while loading: NULL while reading records again (they were checked). */
struct collect {
        struct state_store *s;
        const char *bdf; /* the GPU the records belong to, NULL: every GPU */
};

static int damage_add(struct collect *c, const char *where, const char *problem,
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
static int record_damaged(struct collect *c, struct verr *e, const char *where,
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

/* A "power" object: its readable sources into ps (may be NULL) and its applied record; every
 * record that does not read is skipped, and collected into @c when given. -EINVAL only when
 * the object itself is not an object (collected too). */
static int parse_power(struct verr *e, const char *where, json_object *power,
                       struct power_sources *ret_ps, uint64_t *ret_applied_uw,
                       uint64_t *ret_applied_usec, struct collect *c) {
        static const struct {
                const char *name;
                enum power_source_kind kind;
        } singles[] = { { "host", POWER_SOURCE_HOST }, { "apml", POWER_SOURCE_APML } };
        struct power_sources ps;
        uint64_t applied_uw = POWER_UW_UNKNOWN, applied_usec = 0;
        char at[512];
        json_object *v;
        int r;

        if (!json_object_is_type(power, json_type_object))
                return fail(e, where, "not an object (%s)", type_name(power));

        power_sources_init(&ps);
        for (size_t i = 0; i < ELEMENTSOF(singles); i++) {
                if (!json_object_object_get_ex(power, singles[i].name, &v))
                        continue;
                (void) snprintf(at, sizeof(at), "%s.%s", where, singles[i].name);
                if (parse_source(e, at, v, singles[i].kind, &ps) < 0) {
                        r = record_damaged(c, e, at, power, singles[i].name, -1);
                        if (r < 0 && c)
                                return r;
                }
        }
        if (json_object_object_get_ex(power, "vms", &v)) {
                size_t n;

                (void) snprintf(at, sizeof(at), "%s.vms", where);
                if (!json_object_is_type(v, json_type_array)) {
                        (void) fail(e, at, "not an array (%s)", type_name(v));
                        r = record_damaged(c, e, at, power, "vms", -1);
                        if (r < 0 && c)
                                return r;
                        n = 0;
                } else
                        n = json_object_array_length(v);
                for (size_t i = 0; i < n; i++) {
                        json_object *vm = json_object_array_get_idx(v, i);

                        (void) snprintf(at, sizeof(at), "%s.vms[%zu]", where, i);
                        if (ps.n_vms >= POWER_VM_MAX)
                                (void) fail(e, at, "more than %d VMs", POWER_VM_MAX);
                        else if (parse_source(e, at, vm, POWER_SOURCE_VM, &ps) >= 0)
                                continue;
                        r = record_damaged(c, e, at, v, NULL, (int) i);
                        if (r < 0 && c)
                                return r;
                }
        }
        if (json_object_object_get_ex(power, "applied", &v)) {
                (void) snprintf(at, sizeof(at), "%s.applied", where);
                if (!json_object_is_type(v, json_type_object))
                        r = fail(e, at, "not an object (%s)", type_name(v));
                else if ((r = get_uint(e, at, v, "uw", true, &applied_uw, NULL)) >= 0 &&
                         (r = check_uw(e, at, applied_uw)) >= 0)
                        r = get_uint(e, at, v, "usec", true, &applied_usec, NULL);
                if (r < 0) {
                        applied_uw = POWER_UW_UNKNOWN;
                        applied_usec = 0;
                        r = record_damaged(c, e, at, power, "applied", -1);
                        if (r < 0 && c)
                                return r;
                }
        }

        if (ret_ps)
                *ret_ps = ps;
        if (ret_applied_uw)
                *ret_applied_uw = applied_uw;
        if (ret_applied_usec)
                *ret_applied_usec = applied_usec;
        return 0;
}

/* Checks a whole document record by record, collecting the damaged ones into @s. 1 when it is
 * of a newer version (not looked into), 0 when it can be read (maybe with damaged records),
 * -EINVAL with e->msg when the file as a whole cannot be (no version), -ENOMEM. */
static int check_document(struct verr *e, struct state_store *s, json_object *root,
                          int64_t *ret_version) {
        struct collect all = { .s = s };
        json_object *v, *gpus;
        int64_t version;
        int r;

        if (!json_object_is_type(root, json_type_object))
                return fail(e, NULL, "the top level is not an object (%s)", type_name(root));
        if (!json_object_object_get_ex(root, "version", &v))
                return fail(e, "version", "missing");
        if (!json_object_is_type(v, json_type_int))
                return fail(e, "version", "not an integer (%s)", type_name(v));
        version = json_object_get_int64(v);
        *ret_version = version;
        if (version <= 0)
                return fail(e, "version", "%" PRId64 " is not a version", version);
        if (version > STATE_VERSION)
                return 1;

        if (!json_object_object_get_ex(root, "gpus", &gpus))
                return 0;
        if (!json_object_is_type(gpus, json_type_object)) {
                (void) fail(e, "gpus", "not an object (%s)", type_name(gpus));
                return record_damaged(&all, e, "gpus", root, "gpus", -1);
        }
        json_object_object_foreach(gpus, bdf, gpu) {
                struct collect one = { .s = s, .bdf = bdf };
                char at[512];
                json_object *power;

                (void) snprintf(at, sizeof(at), "gpus.%s", bdf);
                if (!pci_bdf_valid(bdf)) {
                        /* whose record this is cannot be told: it concerns every GPU */
                        (void) fail(e, at, "'%s' is not a PCI address (dddd:bb:dd.f, lower case)",
                                    bdf);
                        r = record_damaged(&all, e, at, gpus, bdf, -1);
                } else if (!json_object_is_type(gpu, json_type_object)) {
                        (void) fail(e, at, "not an object (%s)", type_name(gpu));
                        r = record_damaged(&one, e, at, gpus, bdf, -1);
                } else if (json_object_object_get_ex(gpu, "power", &power)) {
                        (void) snprintf(at, sizeof(at), "gpus.%s.power", bdf);
                        r = parse_power(e, at, power, NULL, NULL, NULL, &one);
                        if (r == -EINVAL)
                                r = record_damaged(&one, e, at, gpu, "power", -1);
                } else
                        r = 0;
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
static json_object *parse_json(struct verr *e, const char *text, size_t len) {
        json_tokener *tok;
        json_object *root;
        enum json_tokener_error err;
        size_t end;

        if (len == 0) {
                (void) fail(e, NULL, "empty file, not JSON");
                return NULL;
        }
        if (memchr(text, '\0', len)) {
                (void) fail(e, NULL, "a NUL byte at byte %zu, not JSON",
                            (size_t) ((const char *) memchr(text, '\0', len) - text));
                return NULL;
        }
        if (len > INT_MAX) {
                (void) fail(e, NULL, "too large");
                return NULL;
        }
        if (too_large_integer(text, len) != SIZE_MAX) {
                (void) fail(e, NULL, "an integer beyond 64 bits at byte %zu, which could not be "
                            "written back as it is", too_large_integer(text, len));
                return NULL;
        }
        tok = json_tokener_new();
        if (!tok) {
                (void) fail(e, NULL, "out of memory");
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
                (void) fail(e, NULL, "not valid JSON: text after the document at byte %zu", trail);
                return NULL;
        }
        json_object_put(root);
        if (err == json_tokener_continue || err == json_tokener_success)
                (void) fail(e, NULL, "not valid JSON: the text ends too early");
        else
                (void) fail(e, NULL, "not valid JSON at byte %zu: %s", end,
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
        struct verr e = {};
        int64_t version = 0;
        size_t len = 0;
        int r;

        r = read_all(s->path, &text, &len);
        if (r == -ENOENT) {
                s->root = new_document();
                return s->root ? 0 : -ENOMEM;
        }
        if (r == -EFBIG)
                (void) fail(&e, NULL, "larger than %u bytes", STATE_SIZE_MAX);
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
                struct collect all = { .s = s };

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

/* ---- reading and changing records -------------------------------------------------------- */

static json_object *find_gpu(const struct state_store *s, const char *bdf) {
        json_object *gpus, *gpu;

        if (!json_object_object_get_ex(s->root, "gpus", &gpus) ||
            !json_object_object_get_ex(gpus, bdf, &gpu))
                return NULL;
        return gpu;
}

static json_object *find_power(const struct state_store *s, const char *bdf) {
        json_object *gpu = find_gpu(s, bdf), *power;

        if (!gpu || !json_object_object_get_ex(gpu, "power", &power))
                return NULL;
        return power;
}

static bool power_has_record(const json_object *power) {
        return json_object_object_get_ex(power, "host", NULL) ||
               json_object_object_get_ex(power, "apml", NULL) ||
               json_object_object_get_ex(power, "vms", NULL) ||
               json_object_object_get_ex(power, "applied", NULL);
}

int state_get_power(const struct state_store *s, const char *bdf, struct power_sources *ret) {
        struct verr e;
        json_object *power;
        int r;

        if (!s || !ret || !pci_bdf_valid(bdf))
                return -EINVAL;
        power = find_power(s, bdf);
        if (!power) {
                power_sources_init(ret);
                return 0;
        }
        /* the records that read (damaged ones were named when loaded) */
        r = parse_power(&e, "power", power, ret, NULL, NULL, NULL);
        if (r < 0)
                power_sources_init(ret);
        return 0;
}

int state_get_applied(const struct state_store *s, const char *bdf, uint64_t *ret_uw,
                      uint64_t *ret_usec) {
        uint64_t uw, usec;
        struct verr e;
        json_object *power;

        if (!s || !pci_bdf_valid(bdf))
                return -EINVAL;
        power = find_power(s, bdf);
        if (!power)
                return -ENOENT;
        if (parse_power(&e, "power", power, NULL, &uw, &usec, NULL) < 0)
                return -ENOENT;
        if (uw == POWER_UW_UNKNOWN)
                return -ENOENT;
        if (ret_uw)
                *ret_uw = uw;
        if (ret_usec)
                *ret_usec = usec;
        return 0;
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

/* Writes a source's fields into obj, keeping every other member. */
static int fill_entry(json_object *obj, const struct power_source *p, bool vm) {
        int r;

        if (vm) {
                r = set_member(obj, "key", json_object_new_string(p->key));
                if (r < 0)
                        return r;
                if (p->vf_bdf[0]) {
                        r = set_member(obj, "vf_bdf", json_object_new_string(p->vf_bdf));
                        if (r < 0)
                                return r;
                } else
                        json_object_object_del(obj, "vf_bdf");
        }
        r = set_member(obj, "uw", json_object_new_uint64(p->uw));
        if (r < 0)
                return r;
        r = set_member(obj, "setter", json_object_new_string(p->setter));
        if (r < 0)
                return r;
        return set_member(obj, "set_usec", json_object_new_uint64(p->set_usec));
}

/* host / apml in power: replaced field by field, or removed when p is NULL. */
static int update_single(json_object *power, const char *name, const struct power_source *p) {
        json_object *old;
        _cleanup_json_ json_object *obj = NULL;
        int r;

        if (!p) {
                json_object_object_del(power, name);
                return 0;
        }
        if (json_object_object_get_ex(power, name, &old))
                obj = json_object_get(old);
        else {
                obj = json_object_new_object();
                if (!obj)
                        return -ENOMEM;
        }
        r = fill_entry(obj, p, false);
        if (r < 0)
                return r;
        return set_member(power, name, TAKE_PTR(obj));
}

static json_object *find_vm_entry(const json_object *vms, const char *key) {
        size_t n;

        if (!vms)
                return NULL;
        n = json_object_array_length(vms);
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(vms, i), *k;

                if (json_object_object_get_ex(o, "key", &k) &&
                    strcmp(json_object_get_string(k), key) == 0)
                        return o;
        }
        return NULL;
}

static int update_vms(json_object *power, const struct power_sources *ps) {
        _cleanup_json_ json_object *arr = NULL;
        json_object *old = NULL;
        int r;

        if (ps->n_vms == 0) {
                json_object_object_del(power, "vms");
                return 0;
        }
        (void) json_object_object_get_ex(power, "vms", &old);
        arr = json_object_new_array_ext((int) ps->n_vms);
        if (!arr)
                return -ENOMEM;
        for (size_t i = 0; i < ps->n_vms; i++) {
                json_object *prev = find_vm_entry(old, ps->vms[i].key);
                _cleanup_json_ json_object *obj =
                        prev ? json_object_get(prev) : json_object_new_object();

                if (!obj)
                        return -ENOMEM;
                r = fill_entry(obj, &ps->vms[i], true);
                if (r < 0)
                        return r;
                if (json_object_array_add(arr, obj) < 0)
                        return -ENOMEM;
                obj = NULL;
        }
        return set_member(power, "vms", TAKE_PTR(arr));
}

/* Checks a caller's sources as the loader would and rebuilds them sorted. */
static int check_sources(const struct power_sources *src, struct power_sources *ret) {
        const struct power_source *singles[2] = { &src->host, &src->apml };
        static const enum power_source_kind kinds[2] = { POWER_SOURCE_HOST, POWER_SOURCE_APML };
        struct power_sources v;
        int r;

        if (src->n_vms > POWER_VM_MAX)
                return -EINVAL;
        power_sources_init(&v);
        for (size_t i = 0; i < 2; i++) {
                const struct power_source *p = singles[i];

                if (!p->present)
                        continue;
                if (strnlen(p->setter, sizeof(p->setter)) == sizeof(p->setter))
                        return -EINVAL;
                r = power_sources_set(&v, kinds[i], NULL, NULL, p->uw, p->setter, p->set_usec);
                if (r < 0)
                        return -EINVAL;
        }
        for (size_t i = 0; i < src->n_vms; i++) {
                const struct power_source *p = &src->vms[i];

                if (strnlen(p->key, sizeof(p->key)) == sizeof(p->key) ||
                    strnlen(p->vf_bdf, sizeof(p->vf_bdf)) == sizeof(p->vf_bdf) ||
                    strnlen(p->setter, sizeof(p->setter)) == sizeof(p->setter))
                        return -EINVAL;
                if (p->vf_bdf[0] && !pci_bdf_valid(p->vf_bdf))
                        return -EINVAL;
                r = power_sources_set(&v, POWER_SOURCE_VM, p->key, p->vf_bdf, p->uw, p->setter,
                                      p->set_usec);
                if (r <= 0) /* 0: a key twice */
                        return -EINVAL;
        }
        *ret = v;
        return 0;
}

/* The GPU's object and a private copy of its power object (new ones when absent): changes are
 * made on the copy, which replaces the original only when complete. */
static int edit_begin(struct state_store *s, const char *bdf, json_object **ret_gpus,
                      json_object **ret_gpu, json_object **ret_power) {
        json_object *gpus, *gpu = NULL, *power = NULL, *copy = NULL;

        if (!json_object_object_get_ex(s->root, "gpus", &gpus)) {
                gpus = json_object_new_object();
                if (set_member(s->root, "gpus", gpus) < 0)
                        return -ENOMEM;
        }
        (void) json_object_object_get_ex(gpus, bdf, &gpu);
        if (gpu && json_object_object_get_ex(gpu, "power", &power)) {
                if (json_object_deep_copy(power, &copy, NULL) < 0)
                        return -ENOMEM;
        } else {
                copy = json_object_new_object();
                if (!copy)
                        return -ENOMEM;
        }
        *ret_gpus = gpus;
        *ret_gpu = gpu;
        *ret_power = copy;
        return 0;
}

/* Puts the edited power object in place, dropping what holds nothing any more. */
static int edit_end(json_object *gpus, json_object *gpu, const char *bdf, json_object *power) {
        _cleanup_json_ json_object *p = power;
        _cleanup_json_ json_object *newgpu = NULL;

        if (json_object_object_length(p) == 0) {
                if (gpu) {
                        json_object_object_del(gpu, "power");
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
        if (set_member(gpu, "power", TAKE_PTR(p)) < 0)
                return -ENOMEM;
        if (newgpu)
                return set_member(gpus, bdf, TAKE_PTR(newgpu));
        return 0;
}

int state_set_power(struct state_store *s, const char *bdf, const struct power_sources *src) {
        struct power_sources v;
        json_object *gpus, *gpu;
        _cleanup_json_ json_object *power = NULL;
        int r;

        if (!s || !src || !pci_bdf_valid(bdf))
                return -EINVAL;
        if (state_damage_find(s, bdf))
                return -EUCLEAN;
        r = check_sources(src, &v);
        if (r < 0)
                return r;

        r = edit_begin(s, bdf, &gpus, &gpu, &power);
        if (r < 0)
                return r;
        r = update_single(power, "host", v.host.present ? &v.host : NULL);
        if (r < 0)
                return r;
        r = update_single(power, "apml", v.apml.present ? &v.apml : NULL);
        if (r < 0)
                return r;
        r = update_vms(power, &v);
        if (r < 0)
                return r;
        return edit_end(gpus, gpu, bdf, TAKE_PTR(power));
}

int state_set_applied(struct state_store *s, const char *bdf, uint64_t uw, uint64_t usec) {
        json_object *gpus, *gpu, *old;
        _cleanup_json_ json_object *power = NULL;
        int r;

        if (!s || !pci_bdf_valid(bdf))
                return -EINVAL;
        if (uw != POWER_UW_UNKNOWN && power_validate(uw) < 0)
                return -EINVAL;
        if (state_damage_find(s, bdf))
                return -EUCLEAN;

        r = edit_begin(s, bdf, &gpus, &gpu, &power);
        if (r < 0)
                return r;
        if (uw == POWER_UW_UNKNOWN)
                json_object_object_del(power, "applied");
        else {
                _cleanup_json_ json_object *applied = NULL;

                if (json_object_object_get_ex(power, "applied", &old))
                        applied = json_object_get(old);
                else {
                        applied = json_object_new_object();
                        if (!applied)
                                return -ENOMEM;
                }
                r = set_member(applied, "uw", json_object_new_uint64(uw));
                if (r < 0)
                        return r;
                r = set_member(applied, "usec", json_object_new_uint64(usec));
                if (r < 0)
                        return r;
                r = set_member(power, "applied", TAKE_PTR(applied));
                if (r < 0)
                        return r;
        }
        return edit_end(gpus, gpu, bdf, TAKE_PTR(power));
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int state_list_gpus(const struct state_store *s, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        json_object *gpus;
        size_t n = 0;

        if (!s || !ret)
                return -EINVAL;
        if (!json_object_object_get_ex(s->root, "gpus", &gpus) ||
            !json_object_is_type(gpus, json_type_object))
                gpus = NULL; /* none, or damaged (named as such) */
        l = calloc((gpus ? (size_t) json_object_object_length(gpus) : 0) + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        if (gpus) {
                json_object_object_foreach(gpus, bdf, gpu) {
                        json_object *power;

                        if (!pci_bdf_valid(bdf) || /* a damaged record, not a GPU */
                            !json_object_object_get_ex(gpu, "power", &power) ||
                            !json_object_is_type(power, json_type_object) ||
                            !power_has_record(power))
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
