/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "pid-file.h"

/* @path through realpath(), else as given without its trailing slashes. */
static int resolve_root(const char *path, char ret[static PATH_MAX]) {
        size_t len;

        if (realpath(path, ret))
                return 0;
        len = strlen(path);
        while (len > 1 && path[len - 1] == '/')
                len--;
        if (len >= PATH_MAX)
                return -ENAMETOOLONG;
        memcpy(ret, path, len);
        ret[len] = '\0';
        return 0;
}

int pid_file_resolve_roots(const char *sysfs_root, const char *dev_root,
                           char ret_sysfs[static PATH_MAX], char ret_dev[static PATH_MAX]) {
        char s[PATH_MAX], d[PATH_MAX] = "";
        int r;

        if (!sysfs_root || !sysfs_root[0])
                return -EINVAL;
        r = resolve_root(sysfs_root, s);
        if (r >= 0 && dev_root && dev_root[0])
                r = resolve_root(dev_root, d);
        if (r < 0)
                return r;
        memcpy(ret_sysfs, s, sizeof(s));
        memcpy(ret_dev, d, sizeof(d));
        return 0;
}

static bool root_valid(const char *s, bool may_be_empty) {
        if (!s || !s[0])
                return may_be_empty;
        return s[0] == '/' && !strchr(s, '\n') && strlen(s) < PATH_MAX;
}

int pid_file_format(uint32_t pid, const char *sysfs_root, const char *dev_root, char *buf,
                    size_t size) {
        int n;

        if (pid == 0 || pid > INT32_MAX || !root_valid(sysfs_root, false) ||
            !root_valid(dev_root, true))
                return -EINVAL;
        n = snprintf(buf, size, "%u\nsysfs_root=%s\ndev_root=%s\n", pid, sysfs_root,
                     dev_root ? dev_root : "");
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return n;
}

/* The decimal PID of @len bytes at @s: 1 .. INT32_MAX, no sign, no blank. */
static int parse_pid(const char *s, size_t len, uint32_t *ret) {
        char buf[16];
        uint32_t pid;

        if (len == 0 || len >= sizeof(buf))
                return -EINVAL;
        for (size_t i = 0; i < len; i++) /* @s need not end in a NUL byte */
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
        memcpy(buf, s, len);
        buf[len] = '\0';
        if (parse_u32(buf, 10, &pid) < 0 || pid == 0 || pid > INT32_MAX)
                return -EINVAL;
        *ret = pid;
        return 0;
}

int pid_file_parse(const char *data, size_t size, struct pid_file *ret) {
        struct pid_file f = {};
        bool have_sysfs = false, have_dev = false;
        const char *p, *end = data + size, *nl;

        if (size > PID_FILE_MAX || memchr(data, '\0', size))
                return -EINVAL;
        nl = memchr(data, '\n', size);
        if (parse_pid(data, nl ? (size_t) (nl - data) : size, &f.pid) < 0)
                return -EINVAL;
        for (p = nl ? nl + 1 : end; p < end; p = nl + 1) {
                const char *eq, *value;
                size_t key_len, len;
                char *dst;

                nl = memchr(p, '\n', (size_t) (end - p));
                if (!nl)
                        return -EINVAL; /* an unterminated line: not written by amdsmid */
                eq = memchr(p, '=', (size_t) (nl - p));
                if (!eq)
                        return -EINVAL;
                key_len = (size_t) (eq - p);
                if (key_len == 0)
                        return -EINVAL;
                /* @data need not end in a NUL byte: no str*() on it */
                for (size_t i = 0; i < key_len; i++)
                        if ((p[i] < 'a' || p[i] > 'z') && p[i] != '_')
                                return -EINVAL;
                value = eq + 1;
                len = (size_t) (nl - value);
                if (key_len == strlen("sysfs_root") && memcmp(p, "sysfs_root", key_len) == 0) {
                        if (have_sysfs || len == 0)
                                return -EINVAL;
                        have_sysfs = true;
                        dst = f.sysfs_root;
                } else if (key_len == strlen("dev_root") && memcmp(p, "dev_root", key_len) == 0) {
                        if (have_dev)
                                return -EINVAL;
                        have_dev = true;
                        dst = f.dev_root;
                } else
                        continue; /* a later amdsmid's */
                if (len >= PATH_MAX || (len > 0 && value[0] != '/'))
                        return -EINVAL;
                memcpy(dst, value, len);
                dst[len] = '\0';
        }
        if (have_sysfs != have_dev)
                return -EINVAL;
        f.has_roots = have_sysfs;
        *ret = f;
        return 0;
}
