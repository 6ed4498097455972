/* SPDX-License-Identifier: MIT */
/*
 * The BMC agent's platform-limit files, <runtime dir>/apml/<BDF> (see power-apml.h): a strict
 * parser that never guesses, a reader that names what it found, and the merge with a limit
 * given through a privileged call (the later one wins).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "parse-util.h"
#include "power-apml.h"
#include "runtime-dir.h"
#include "safe-open.h"

static const char *const file_state_table[] = {
        [APML_FILE_ABSENT] = "absent",
        [APML_FILE_EMPTY] = "empty",
        [APML_FILE_VALID] = "valid",
        [APML_FILE_MALFORMED] = "malformed",
        [APML_FILE_UNREADABLE] = "unreadable",
};

const char *apml_file_state_to_string(enum apml_file_state s) {
        if ((unsigned) s >= ELEMENTSOF(file_state_table))
                return NULL;
        return file_state_table[s];
}

int apml_dir(char *buf, size_t size) {
        char dir[4096];
        int r, n;

        r = runtime_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        n = snprintf(buf, size, "%s/apml", dir);
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

_printf_(3, 4) static int fail(char *err, size_t err_size, const char *fmt, ...) {
        va_list ap;

        if (err && err_size > 0) {
                va_start(ap, fmt);
                (void) vsnprintf(err, err_size, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static bool all_digits(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

/* One value line (blanks stripped) into µW. */
static int parse_value(const char *v, unsigned line, uint64_t *ret, char *err, size_t err_size) {
        uint64_t uw;
        size_t len = strlen(v);
        int r;

        if (all_digits(v)) {
                /* A bare integer: microwatts, as hwmon takes them. */
                r = parse_u64(v, 10, &uw);
                if (r == -ERANGE)
                        return fail(err, err_size, "line %u: '%.40s' is too large", line, v);
                if (r < 0)
                        return fail(err, err_size, "line %u: '%.40s' is not a number", line, v);
        } else {
                if (v[0] == '-')
                        return fail(err, err_size, "line %u: '%.40s' is negative", line, v);
                r = power_parse_watts(v, &uw);
                /* A number without a unit that is not an integer ("700.5"): W or µW? Refused. */
                if (r == 0 && v[len - 1] >= '0' && v[len - 1] <= '9')
                        return fail(err, err_size,
                                    "line %u: '%.40s' has no unit (a number without one is an "
                                    "integer in µW)",
                                    line, v);
                if (r == -ERANGE)
                        return fail(err, err_size, "line %u: '%.40s' is too large", line, v);
                if (r < 0)
                        return fail(err, err_size,
                                    "line %u: '%.40s' is not a power value (µW, or a number with "
                                    "W, mW or kW)",
                                    line, v);
        }
        r = power_validate(uw);
        if (r == -ERANGE)
                return fail(err, err_size, "line %u: '%.40s' is more than 4294.967295 W", line, v);
        if (r < 0)
                return fail(err, err_size, "line %u: '%.40s' is less than 1 W", line, v);
        *ret = uw;
        return 0;
}

int apml_parse(const char *data, size_t len, uint64_t *ret_uw, char *err, size_t err_size) {
        uint64_t uw = POWER_UW_UNKNOWN;
        char line[APML_FILE_MAX + 1];
        unsigned lineno = 0;
        const char *p, *end;
        int r;

        if (!data && len > 0)
                return fail(err, err_size, "no data");
        if (len > APML_FILE_MAX)
                return fail(err, err_size, "longer than %d bytes", APML_FILE_MAX);
        if (len > 0 && memchr(data, '\0', len))
                return fail(err, err_size, "a NUL byte at byte %zu",
                            (size_t) ((const char *) memchr(data, '\0', len) - data));

        for (p = data, end = data + len; p < end;) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *e = nl ? nl : end;
                char *s;
                size_t n;

                lineno++;
                /* One trailing '\r' is dropped: files written on a BMC may end lines in CRLF. */
                if (e > p && e[-1] == '\r')
                        e--;
                while (p < e && is_blank(*p))
                        p++;
                while (e > p && is_blank(e[-1]))
                        e--;
                n = (size_t) (e - p);
                memcpy(line, p, n);
                line[n] = '\0';
                s = line;
                p = nl ? nl + 1 : end;

                if (n == 0 || s[0] == '#')
                        continue;
                if (uw != POWER_UW_UNKNOWN)
                        return fail(err, err_size, "line %u: second value '%.40s'", lineno, s);
                r = parse_value(s, lineno, &uw, err, err_size);
                if (r < 0)
                        return r;
        }

        if (ret_uw)
                *ret_uw = uw;
        return 0;
}

int apml_read(const char *bdf, struct apml_file *ret) {
        struct apml_file f = {
                .state = APML_FILE_ABSENT,
                .uw = POWER_UW_UNKNOWN,
        };
        char dir[4096], data[APML_FILE_MAX + 1];
        _cleanup_close_ int fd = -1;
        struct stat st;
        size_t len = 0;
        int r, n;

        if (!ret || !pci_bdf_valid(bdf))
                return -EINVAL;

        r = apml_dir(dir, sizeof(dir));
        n = r < 0 ? -1 : snprintf(f.path, sizeof(f.path), "%s/%s", dir, bdf);
        if (n < 0 || (size_t) n >= sizeof(f.path)) {
                f.state = APML_FILE_UNREADABLE;
                (void) snprintf(f.error, sizeof(f.error), "%s", strerror(ENAMETOOLONG));
                *ret = f;
                return 0;
        }

        /* safe_open(): a FIFO put there must not hang the reader, a link is not followed;
         * the BMC agent may run as another user: the type is checked, not the owner. */
        fd = safe_open(f.path, O_RDONLY, 0, 0);
        if (fd < 0) {
                if (fd != -ENOENT) {
                        f.state = APML_FILE_UNREADABLE;
                        if (fd == -ELOOP || fd == -EISDIR || fd == -EBADFD)
                                (void) snprintf(f.error, sizeof(f.error),
                                                "%s, not a regular file: refused",
                                                lstat(f.path, &st) == 0 ? file_type_name(st.st_mode)
                                                                        : "not a regular file");
                        else
                                (void) snprintf(f.error, sizeof(f.error), "%s", strerror(-fd));
                }
                *ret = f;
                return 0;
        }
        if (fstat(fd, &st) < 0) {
                f.state = APML_FILE_UNREADABLE;
                (void) snprintf(f.error, sizeof(f.error), "%s", strerror(errno));
                *ret = f;
                return 0;
        }
        f.mtime_usec = (uint64_t) st.st_mtim.tv_sec * UINT64_C(1000000) +
                       (uint64_t) st.st_mtim.tv_nsec / 1000u;

        /* One byte more than allowed tells "too long". */
        while (len < sizeof(data)) {
                ssize_t k = read(fd, data + len, sizeof(data) - len);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        f.state = APML_FILE_UNREADABLE;
                        (void) snprintf(f.error, sizeof(f.error), "%s", strerror(errno));
                        *ret = f;
                        return 0;
                }
                if (k == 0)
                        break;
                len += (size_t) k;
        }

        if (apml_parse(data, len, &f.uw, f.error, sizeof(f.error)) < 0) {
                f.state = APML_FILE_MALFORMED;
                f.uw = POWER_UW_UNKNOWN;
        } else
                f.state = f.uw == POWER_UW_UNKNOWN ? APML_FILE_EMPTY : APML_FILE_VALID;
        *ret = f;
        return 0;
}

int apml_merge(struct power_sources *s, const struct apml_file *f) {
        char setter[POWER_SETTER_MAX];

        if (!s || !f || f->state != APML_FILE_VALID)
                return 0;
        if (s->apml.present && f->mtime_usec < s->apml.set_usec)
                return 0; /* a later call wins */
        /* A path too long for the setter (246 bytes and more) is cut. */
        (void) snprintf(setter, sizeof(setter), "apml file %.*s",
                        (int) (sizeof(setter) - sizeof("apml file ")), f->path);
        if (power_sources_set(s, POWER_SOURCE_APML, NULL, NULL, f->uw, setter, f->mtime_usec) < 0)
                return 0;
        return 1;
}
