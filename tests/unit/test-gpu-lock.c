/* SPDX-License-Identifier: MIT */
/* The per-GPU change lock (lib/util/gpu-lock.c): exclusion, the holder's PID, BDF order,
 * stale files, RUNTIME_DIRECTORY. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gpu-lock.h"

static char tmpdir[128];

static int setup(void **state) {
        const char *base = getenv("TMPDIR");

        snprintf(tmpdir, sizeof(tmpdir), "%s/test-gpu-lock.XXXXXX",
                 base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir))
                return -1;
        setenv("RUNTIME_DIRECTORY", tmpdir, 1);
        return 0;
}

static int teardown(void **state) {
        char cmd[160];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

/* Runs @fn in a child; @return its exit status. */
static int in_child(int (*fn)(void)) {
        int status;
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0)
                _exit(fn());
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static pid_t parent_pid;

static int child_try_lock(void) {
        struct gpu_lock l = GPU_LOCK_INIT;
        pid_t holder = 0;
        int r = gpu_lock_acquire(&l, "0000:05:00.0", &holder);

        if (r != -EBUSY)
                return 10;
        if (holder != parent_pid)
                return 11;
        return 0;
}

static int child_lock_ok(void) {
        struct gpu_lock l = GPU_LOCK_INIT;
        int r = gpu_lock_acquire(&l, "0000:05:00.0", NULL);

        if (r != 0)
                return 20;
        gpu_lock_release(&l);
        return 0;
}

static void test_exclusion(void **state) {
        struct gpu_lock l = GPU_LOCK_INIT, l2 = GPU_LOCK_INIT;
        char path[256], expected[300];
        pid_t holder = 0;

        parent_pid = getpid();
        assert_int_equal(gpu_lock_acquire(&l, "0000:05:00.0", NULL), 0);
        assert_true(l.fd >= 0);
        assert_int_equal(gpu_lock_path("0000:05:00.0", path, sizeof(path)), 0);
        snprintf(expected, sizeof(expected), "%s/lock/0000:05:00.0", tmpdir);
        assert_string_equal(path, expected);

        /* another open file description in this process: busy too (flock semantics) */
        assert_int_equal(gpu_lock_acquire(&l2, "0000:05:00.0", &holder), -EBUSY);
        assert_int_equal(holder, getpid());
        assert_int_equal(l2.fd, -1);

        /* another process: busy, and told who holds it */
        assert_int_equal(in_child(child_try_lock), 0);

        /* another GPU is independent */
        assert_int_equal(gpu_lock_acquire(&l2, "0000:26:00.0", NULL), 0);
        gpu_lock_release(&l2);

        gpu_lock_release(&l);
        assert_int_equal(l.fd, -1);
        gpu_lock_release(&l); /* no-op */
        assert_int_equal(in_child(child_lock_ok), 0);
}

static int child_lock_and_die(void) {
        struct gpu_lock l = GPU_LOCK_INIT;

        if (gpu_lock_acquire(&l, "0000:05:00.0", NULL) != 0)
                return 30;
        _exit(0); /* dies holding it: the file stays, with our PID */
}

static void test_stale_file(void **state) {
        struct gpu_lock l = GPU_LOCK_INIT;
        char path[256], buf[32] = "";
        int fd;

        assert_int_equal(in_child(child_lock_and_die), 0);
        assert_int_equal(gpu_lock_path("0000:05:00.0", path, sizeof(path)), 0);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_true(read(fd, buf, sizeof(buf) - 1) > 0); /* the dead holder's PID */
        close(fd);
        assert_int_equal(gpu_lock_acquire(&l, "0000:05:00.0", NULL), 0);
        gpu_lock_release(&l);
}

static void test_many_bdf_order(void **state) {
        struct gpu_lock locks[3] = { GPU_LOCK_INIT, GPU_LOCK_INIT, GPU_LOCK_INIT };
        struct gpu_lock other = GPU_LOCK_INIT, again[3] = { GPU_LOCK_INIT, GPU_LOCK_INIT,
                                                            GPU_LOCK_INIT };
        const char *bdfs[] = { "0000:26:00.0", "0000:05:00.0", "0000:26:00.0" };
        char busy[16] = "";
        pid_t holder = 0;

        /* duplicates once, sorted */
        assert_int_equal(gpu_locks_acquire(locks, bdfs, 3, busy, &holder), 0);
        assert_string_equal(locks[0].bdf, "0000:05:00.0");
        assert_string_equal(locks[1].bdf, "0000:26:00.0");
        assert_int_equal(locks[2].fd, -1);
        gpu_locks_release(locks, 3);

        /* all or none: one held elsewhere releases the ones taken */
        assert_int_equal(gpu_lock_acquire(&other, "0000:26:00.0", NULL), 0);
        assert_int_equal(gpu_locks_acquire(again, bdfs, 3, busy, &holder), -EBUSY);
        assert_string_equal(busy, "0000:26:00.0");
        assert_int_equal(holder, getpid());
        assert_int_equal(again[0].fd, -1);
        assert_int_equal(again[1].fd, -1);
        gpu_lock_release(&other);
        assert_int_equal(gpu_lock_acquire(&other, "0000:05:00.0", NULL), 0);
        gpu_lock_release(&other);
}

static void test_bad_bdf(void **state) {
        struct gpu_lock l = GPU_LOCK_INIT;

        assert_int_equal(gpu_lock_acquire(&l, "../etc", NULL), -EINVAL);
        assert_int_equal(gpu_lock_acquire(&l, "", NULL), -EINVAL);
        assert_int_equal(gpu_lock_acquire(&l, "0000:05:00.0/x", NULL), -EINVAL);
}

static void test_runtime_directory(void **state) {
        char path[256], sub[300];
        struct gpu_lock l = GPU_LOCK_INIT;
        struct stat st;

        /* systemd lists several directories: the first counts; missing parents are made */
        snprintf(sub, sizeof(sub), "%s/a/b:%s/other", tmpdir, tmpdir);
        setenv("RUNTIME_DIRECTORY", sub, 1);
        assert_int_equal(gpu_lock_acquire(&l, "0000:05:00.0", NULL), 0);
        snprintf(path, sizeof(path), "%s/a/b/lock/0000:05:00.0", tmpdir);
        assert_int_equal(stat(path, &st), 0);
        gpu_lock_release(&l);

        /* a relative value is not systemd's: /run/amdsmi (only the path is checked) */
        setenv("RUNTIME_DIRECTORY", "relative", 1);
        assert_int_equal(gpu_lock_path("0000:05:00.0", path, sizeof(path)), 0);
        assert_string_equal(path, "/run/amdsmi/lock/0000:05:00.0");
        unsetenv("RUNTIME_DIRECTORY");
        assert_int_equal(gpu_lock_path("0000:05:00.0", path, sizeof(path)), 0);
        assert_string_equal(path, "/run/amdsmi/lock/0000:05:00.0");
        setenv("RUNTIME_DIRECTORY", tmpdir, 1);
}

/* Nobody else can open a lock: the directory is 0700 and the file 0600 whatever the umask,
 * and an older amdsmi's 0755 directory and 0644 file are tightened; a FIFO or a link in the
 * lock's place is refused, never waited on. */
static void test_modes(void **state) {
        struct gpu_lock l = GPU_LOCK_INIT;
        char path[256], dir[256];
        struct stat st;

        snprintf(dir, sizeof(dir), "%s/lock", tmpdir);
        assert_int_equal(gpu_lock_path("0000:07:00.0", path, sizeof(path)), 0);
        umask(0);
        assert_int_equal(gpu_lock_acquire(&l, "0000:07:00.0", NULL), 0);
        umask(022);
        gpu_lock_release(&l);
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);

        assert_int_equal(chmod(dir, 0755), 0);
        assert_int_equal(chmod(path, 0644), 0);
        assert_int_equal(gpu_lock_acquire(&l, "0000:07:00.0", NULL), 0);
        gpu_lock_release(&l);
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);

        assert_int_equal(unlink(path), 0);
        assert_int_equal(mkfifo(path, 0600), 0);
        alarm(10);
        assert_int_equal(gpu_lock_acquire(&l, "0000:07:00.0", NULL), -EBADFD);
        alarm(0);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(symlink("0000:05:00.0", path), 0);
        assert_int_equal(gpu_lock_acquire(&l, "0000:07:00.0", NULL), -ELOOP);
        assert_int_equal(unlink(path), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_exclusion),
                cmocka_unit_test(test_stale_file),
                cmocka_unit_test(test_many_bdf_order),
                cmocka_unit_test(test_bad_bdf),
                cmocka_unit_test(test_runtime_directory),
                cmocka_unit_test(test_modes),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
