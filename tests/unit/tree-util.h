/* SPDX-License-Identifier: MIT */
/* Tiny helpers to build throw-away sysfs-like trees for unit tests. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline char *tree_path(const char *root, const char *rel) {
        char *path;

        if (asprintf(&path, "%s/%s", root, rel) < 0)
                abort();
        return path;
}

static inline void tree_mkdirs(const char *root, const char *rel) {
        char *path = tree_path(root, rel);

        for (char *p = path + strlen(root) + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        (void) mkdir(path, 0755);
                        *p = '/';
                }
        (void) mkdir(path, 0755);
        free(path);
}

/* Writes len bytes (or strlen if len < 0) to root/rel, creating parent directories. */
static inline void tree_file(const char *root, const char *rel, const char *content, ssize_t len,
                             mode_t mode) {
        char dir[PATH_MAX];
        char *slash, *path;
        int fd;

        snprintf(dir, sizeof(dir), "%s", rel);
        slash = strrchr(dir, '/');
        if (slash) {
                *slash = '\0';
                tree_mkdirs(root, dir);
        }
        path = tree_path(root, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                perror(path);
                abort();
        }
        if (len < 0)
                len = (ssize_t) strlen(content);
        if (write(fd, content, (size_t) len) != len)
                abort();
        close(fd);
        chmod(path, mode);
        free(path);
}

static inline void tree_link(const char *root, const char *rel, const char *target) {
        char dir[PATH_MAX];
        char *slash, *path;

        snprintf(dir, sizeof(dir), "%s", rel);
        slash = strrchr(dir, '/');
        if (slash) {
                *slash = '\0';
                tree_mkdirs(root, dir);
        }
        path = tree_path(root, rel);
        if (symlink(target, path) < 0 && errno != EEXIST)
                abort();
        free(path);
}

static inline void tree_rm(const char *root) {
        char *cmd;

        if (asprintf(&cmd, "rm -rf '%s'", root) < 0)
                abort();
        if (system(cmd) != 0)
                fprintf(stderr, "cannot remove %s\n", root);
        free(cmd);
}

/* The trees not freed yet: a failed cmocka assertion jumps over the test's tree_free(), so
 * whatever is still here at exit is removed then. */
static char *tree_live[16];

static inline void tree_rm_live(void) {
        for (size_t i = 0; i < sizeof(tree_live) / sizeof(tree_live[0]); i++)
                if (tree_live[i]) {
                        tree_rm(tree_live[i]);
                        free(tree_live[i]);
                        tree_live[i] = NULL;
                }
}

/* A new empty directory in $TMPDIR (default /tmp), removed by tree_free() or at exit. */
static inline char *tree_new(void) {
        static bool registered;
        const char *base = getenv("TMPDIR");
        char *tmpl, *d;
        size_t i;

        if (asprintf(&tmpl, "%s/amdsmi-test-XXXXXX", base && *base ? base : "/tmp") < 0)
                abort();
        d = mkdtemp(tmpl);
        if (!d)
                abort();
        if (!registered) {
                if (atexit(tree_rm_live) != 0)
                        abort();
                registered = true;
        }
        for (i = 0; i < sizeof(tree_live) / sizeof(tree_live[0]); i++)
                if (!tree_live[i]) {
                        tree_live[i] = strdup(d);
                        break;
                }
        if (i == sizeof(tree_live) / sizeof(tree_live[0]) || !tree_live[i])
                abort();
        return d;
}

static inline void tree_free(char *root) {
        if (!root)
                return;
        for (size_t i = 0; i < sizeof(tree_live) / sizeof(tree_live[0]); i++)
                if (tree_live[i] && strcmp(tree_live[i], root) == 0) {
                        free(tree_live[i]);
                        tree_live[i] = NULL;
                        break;
                }
        tree_rm(root);
        free(root);
}
