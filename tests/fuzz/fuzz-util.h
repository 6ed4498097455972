/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the fuzz targets that feed their input through files: one private temporary
 * directory per process (made on first use, removed at exit), writing an input to a file in it,
 * and the input as a C string.
 */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_tmp[PATH_MAX];

/* snprintf() into an array, aborting when it does not fit (a path the target cannot use) */
#define FUZZ_PRINT(buf, ...)                                                        \
        do {                                                                        \
                int _n = snprintf((buf), sizeof(buf), __VA_ARGS__);                 \
                if (_n < 0 || (size_t) _n >= sizeof(buf))                           \
                        abort();                                                    \
        } while (0)

static inline int fuzz_rm_one(const char *path, const struct stat *st, int flag, struct FTW *f) {
        (void) st;
        (void) flag;
        (void) f;
        (void) remove(path);
        return 0;
}

/* Removes @path and everything below it. */
static inline void fuzz_rm_rf(const char *path) {
        (void) nftw(path, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void fuzz_tmp_cleanup(void) {
        if (fuzz_tmp[0])
                fuzz_rm_rf(fuzz_tmp);
}

/* The process's temporary directory ("/tmp/amdsmi-fuzz-XXXXXX"), made on the first call. */
static inline const char *fuzz_tmpdir(void) {
        if (!fuzz_tmp[0]) {
                const char *base = getenv("TMPDIR");

                FUZZ_PRINT(fuzz_tmp, "%s/amdsmi-fuzz-XXXXXX",
                         base && base[0] ? base : "/tmp");
                if (!mkdtemp(fuzz_tmp)) {
                        perror("mkdtemp");
                        abort();
                }
                atexit(fuzz_tmp_cleanup);
        }
        return fuzz_tmp;
}

/* "<tmpdir>/<rel>", in a static buffer (one at a time). */
static inline const char *fuzz_path(const char *rel) {
        static char buf[PATH_MAX];

        FUZZ_PRINT(buf, "%s/%s", fuzz_tmpdir(), rel);
        return buf;
}

/* Makes <tmpdir>/<rel> and its parents (0755). */
static inline void fuzz_mkdirs(const char *rel) {
        char path[PATH_MAX];

        FUZZ_PRINT(path, "%s/%s", fuzz_tmpdir(), rel);
        for (char *p = path + strlen(fuzz_tmpdir()) + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        (void) mkdir(path, 0755);
                        *p = '/';
                }
        (void) mkdir(path, 0755);
}

/* Writes @size bytes to <tmpdir>/<rel> (replacing it; parents made). Aborts on failure: the
 * target would test nothing. */
static inline void fuzz_write(const char *rel, const void *data, size_t size) {
        char path[PATH_MAX], dir[PATH_MAX], *slash;
        int fd;

        FUZZ_PRINT(dir, "%s", rel);
        slash = strrchr(dir, '/');
        if (slash) {
                *slash = '\0';
                fuzz_mkdirs(dir);
        }
        FUZZ_PRINT(path, "%s/%s", fuzz_tmpdir(), rel);
        (void) unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                perror(path);
                abort();
        }
        if (size > 0 && write(fd, data, size) != (ssize_t) size) {
                perror(path);
                abort();
        }
        close(fd);
}

/* A NUL-terminated copy of the input (what a parser of C strings sees: up to the first NUL). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                abort();
        if (size > 0)
                memcpy(s, data, size);
        s[size] = '\0';
        return s;
}

/* Runs with stderr sent to /dev/null (the parsers that print their errors, when fuzzing:
 * millions of lines otherwise). FUZZ_VERBOSE=1 keeps it. */
static inline int fuzz_quiet_begin(void) {
        int saved, null;

        if (getenv("FUZZ_VERBOSE"))
                return -1;
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (saved < 0 || null < 0)
                abort();
        dup2(null, STDERR_FILENO);
        close(null);
        return saved;
}

static inline void fuzz_quiet_end(int saved) {
        if (saved < 0)
                return;
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
}

/* STATE_DIRECTORY=<tmpdir>/state, whatever the environment said: the targets of the state
 * directory's files never touch another one (the host's /var/lib/amdsmi above all). */
static inline void fuzz_state_directory(void) {
        static bool done;

        if (done)
                return;
        done = true;
        if (setenv("STATE_DIRECTORY", fuzz_path("state"), 1) < 0)
                abort();
}
