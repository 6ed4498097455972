/* SPDX-License-Identifier: MIT */
/*
 * Replay driver for the fuzz targets when they are built without libFuzzer: feeds every regular
 * file given on the command line, or found directly inside a directory given on the command
 * line, to LLVMFuzzerTestOneInput(). Each input sits in a buffer of exactly its size, so a
 * sanitizer build catches reads past the end. Fails if there was no input at all.
 *
 * The targets write their files below $TMPDIR (fuzz-util.h) and remove them at exit, which a
 * target that crashes (abort(), a sanitizer report) never reaches. So the inputs run in a child
 * with TMPDIR set to a private directory, which the parent removes however the child ended;
 * then the parent ends the same way (the same exit status, or the same signal).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz-util.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feeds one file (@name relative to @dir_fd) to the target; @dir is only for messages. */
static int run_file(int dir_fd, const char *dir, const char *name) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ uint8_t *buf = NULL;
        struct stat st;
        size_t size = 0;

        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                fprintf(stderr, "%s%s: %s\n", dir, name, strerror(errno));
                return -errno;
        }

        /* one spare byte keeps malloc(0) from returning NULL; the input size stays exact */
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        while (size < (size_t) st.st_size) {
                ssize_t n = read(fd, buf + size, (size_t) st.st_size - size);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        fprintf(stderr, "%s%s: short read\n", dir, name);
                        return n < 0 ? -errno : -EIO;
                }
                size += (size_t) n;
        }

        printf("%s%s (%zu bytes)\n", dir, name, size);
        fflush(stdout);
        LLVMFuzzerTestOneInput(buf, size);
        return 0;
}

/* Every regular file directly inside @path. */
static int run_dir(const char *path, unsigned *count) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *prefix = NULL;
        struct dirent *de;
        int r = 0;

        d = opendir(path);
        if (!d) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -errno;
        }
        if (asprintf(&prefix, "%s/", path) < 0)
                return -ENOMEM;

        while ((de = readdir(d))) {
                struct stat st;

                if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (run_file(dirfd(d), prefix, de->d_name) < 0)
                        r = -EIO;
                else
                        (*count)++;
        }
        return r;
}

static int run_all(int argc, char *argv[]) {
        unsigned count = 0;
        int r = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        r = -errno;
                } else if (S_ISDIR(st.st_mode)) {
                        if (run_dir(argv[i], &count) < 0)
                                r = -EIO;
                } else if (run_file(AT_FDCWD, "", argv[i]) < 0)
                        r = -EIO;
                else
                        count++;
        }

        printf("%u inputs\n", count);
        if (count == 0) {
                fprintf(stderr, "no inputs\n");
                return EXIT_FAILURE;
        }
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char *argv[]) {
        const char *base = getenv("TMPDIR");
        char dir[PATH_MAX];
        int status;
        pid_t pid;

        FUZZ_PRINT(dir, "%s/amdsmi-fuzz-main-XXXXXX", base && base[0] ? base : "/tmp");
        if (!mkdtemp(dir)) {
                fprintf(stderr, "mkdtemp %s: %s\n", dir, strerror(errno));
                return EXIT_FAILURE;
        }
        fflush(stdout);
        pid = fork();
        if (pid < 0) {
                fprintf(stderr, "fork: %s\n", strerror(errno));
                fuzz_rm_rf(dir);
                return EXIT_FAILURE;
        }
        if (pid == 0) {
                if (setenv("TMPDIR", dir, 1) < 0)
                        _exit(EXIT_FAILURE);
                exit(run_all(argc, argv)); /* atexit: the target's own clean-up, LSan */
        }

        /* meson's timeout signals the whole process group: outlive the child to clean up */
        (void) signal(SIGTERM, SIG_IGN);
        (void) signal(SIGINT, SIG_IGN);
        (void) signal(SIGHUP, SIG_IGN);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        fprintf(stderr, "waitpid: %s\n", strerror(errno));
                        fuzz_rm_rf(dir);
                        return EXIT_FAILURE;
                }
        fuzz_rm_rf(dir);

        if (WIFSIGNALED(status)) {
                (void) signal(WTERMSIG(status), SIG_DFL);
                (void) raise(WTERMSIG(status));
                return 128 + WTERMSIG(status);
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FAILURE;
}
