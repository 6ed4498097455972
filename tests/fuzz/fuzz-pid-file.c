/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of amdsmid's PID file as amdsmi(1) parses it (pid_file_parse() of lib/util,
 * cli/bus.c cli_daemon_may_run()): a file anyone with root's runtime directory could leave
 * there. Checks the contract: only -EINVAL on failure, the output untouched then; on success
 * a PID in 1 .. INT32_MAX, no NUL byte in the input, roots that are absolute (dev_root may be
 * empty) and NUL-terminated, and what pid_file_format() writes for them parses back the same.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pid-file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static struct pid_file f;
        static struct pid_file g;
        static char back[PID_FILE_MAX];
        int r, n;

        memset(&f, 0x5a, sizeof(f));
        r = pid_file_parse((const char *) data, size, &f);
        if (r < 0) {
                if (r != -EINVAL || f.pid != 0x5a5a5a5a)
                        abort(); /* another errno, or the output touched */
                return 0;
        }
        if (f.pid == 0 || f.pid > INT32_MAX || size > PID_FILE_MAX ||
            (size > 0 && memchr(data, '\0', size)))
                abort();
        if (!f.has_roots)
                return 0;
        if (!memchr(f.sysfs_root, '\0', sizeof(f.sysfs_root)) ||
            !memchr(f.dev_root, '\0', sizeof(f.dev_root)))
                abort();
        if (f.sysfs_root[0] != '/' || (f.dev_root[0] && f.dev_root[0] != '/'))
                abort();
        n = pid_file_format(f.pid, f.sysfs_root, f.dev_root, back, sizeof(back));
        if (n < 0)
                abort(); /* what was parsed can be written */
        /* the text amdsmid writes parses back to the same */
        if (pid_file_parse(back, (size_t) n, &g) < 0 || g.pid != f.pid || !g.has_roots ||
            strcmp(g.sysfs_root, f.sysfs_root) != 0 || strcmp(g.dev_root, f.dev_root) != 0)
                abort();
        return 0;
}
