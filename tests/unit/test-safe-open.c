/* SPDX-License-Identifier: MIT */
/*
 * lib/util/safe-open.c: what is at a path amdsmi opens is a regular file or refused, by type
 * (a FIFO never blocks the opener, a link is never followed), by owner and mode for trusted
 * files and lock files (an older amdsmi's 0644 lock tightened), and directories made with the
 * right mode (an older 0755 lock directory tightened); and the messages that name it.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime-dir.h"
#include "safe-open.h"

static char tmpdir[128];

static int setup(void **state) {
        const char *base = getenv("TMPDIR");

        snprintf(tmpdir, sizeof(tmpdir), "%s/test-safe-open.XXXXXX",
                 base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir))
                return -1;
        umask(022);
        return 0;
}

static int teardown(void **state) {
        char cmd[160];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

static const char *in_dir(const char *name) {
        static char buf[4][512];
        static unsigned i;

        i = (i + 1) % 4;
        snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
        return buf[i];
}

static void make_file(const char *path, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, "x\n", 2), 2);
        assert_int_equal(close(fd), 0);
        assert_int_equal(chmod(path, mode), 0);
}

static void make_socket(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);
}

static void test_type_names(void **state) {
        assert_string_equal(file_type_name(S_IFREG | 0644), "a regular file");
        assert_string_equal(file_type_name(S_IFDIR), "a directory");
        assert_string_equal(file_type_name(S_IFIFO), "a FIFO");
        assert_string_equal(file_type_name(S_IFSOCK), "a socket");
        assert_string_equal(file_type_name(S_IFCHR), "a character device");
        assert_string_equal(file_type_name(S_IFBLK), "a block device");
        assert_string_equal(file_type_name(S_IFLNK), "a symbolic link");
        assert_string_equal(file_type_name(0), "an unknown kind of file");
}

/* Every kind of file, for reading and for writing: regular opens, the rest is refused with the
 * errno of the convention and nothing blocks (alarm: a hang fails the test). */
static void test_refuse_by_type(void **state) {
        static const int flags[] = { O_RDONLY, O_WRONLY, O_RDWR, O_RDWR | O_CREAT,
                                     O_WRONLY | O_APPEND };
        char msg[1024];
        int fd;

        make_file(in_dir("reg"), 0644);
        assert_int_equal(mkfifo(in_dir("fifo"), 0644), 0);
        assert_int_equal(mkdir(in_dir("dir"), 0755), 0);
        assert_int_equal(symlink("reg", in_dir("link-reg")), 0);
        assert_int_equal(symlink("fifo", in_dir("link-fifo")), 0);
        assert_int_equal(symlink("nowhere", in_dir("link-dangling")), 0);
        make_socket(in_dir("sock"));

        alarm(10);
        for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
                fd = safe_open(in_dir("reg"), flags[i], 0644, SAFE_OPEN_BLOCK);
                assert_true(fd >= 0);
                assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
                assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
                close(fd);
                assert_int_equal(safe_open(in_dir("fifo"), flags[i], 0644, 0), -EBADFD);
                assert_int_equal(safe_open(in_dir("sock"), flags[i], 0644, 0), -EBADFD);
                assert_int_equal(safe_open(in_dir("dir"), flags[i], 0644, 0), -EISDIR);
                assert_int_equal(safe_open(in_dir("link-reg"), flags[i], 0644, 0), -ELOOP);
                assert_int_equal(safe_open(in_dir("link-fifo"), flags[i], 0644, 0), -ELOOP);
        }
        assert_int_equal(safe_open("/dev/null", O_RDONLY, 0, 0), -EBADFD);
        /* O_CREAT never creates through a dangling link */
        assert_int_equal(safe_open(in_dir("link-dangling"), O_RDWR | O_CREAT, 0600, 0), -ELOOP);
        assert_int_equal(access(in_dir("nowhere"), F_OK), -1);
        assert_int_equal(safe_open(in_dir("absent"), O_RDONLY, 0, 0), -ENOENT);
        assert_int_equal(safe_open("", O_RDONLY, 0, 0), -EINVAL);
        /* without SAFE_OPEN_BLOCK the descriptor stays non-blocking */
        fd = safe_open(in_dir("reg"), O_RDONLY, 0, 0);
        assert_true(fd >= 0);
        assert_int_not_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
        assert_int_equal(fd_verify_regular(fd, 0), 0);
        close(fd);
        alarm(0);

        /* the messages name the path and what is there */
        snprintf(msg, sizeof(msg), "%s is a FIFO, not a regular file: refused", in_dir("fifo"));
        assert_string_equal(safe_open_message(in_dir("fifo"), -EBADFD, (char[1024]){}, 1024), msg);
        snprintf(msg, sizeof(msg), "%s is a socket, not a regular file: refused", in_dir("sock"));
        assert_string_equal(safe_open_message(in_dir("sock"), -EBADFD, (char[1024]){}, 1024), msg);
        snprintf(msg, sizeof(msg), "%s is a directory, not a regular file: refused", in_dir("dir"));
        assert_string_equal(safe_open_message(in_dir("dir"), -EISDIR, (char[1024]){}, 1024), msg);
        snprintf(msg, sizeof(msg), "%s is a symbolic link, not a regular file: refused",
                 in_dir("link-reg"));
        assert_string_equal(safe_open_message(in_dir("link-reg"), -ELOOP, (char[1024]){}, 1024),
                            msg);
        snprintf(msg, sizeof(msg), "%s: %s", in_dir("absent"), strerror(ENOENT));
        assert_string_equal(safe_open_message(in_dir("absent"), -ENOENT, (char[1024]){}, 1024),
                            msg);
        snprintf(msg, sizeof(msg), "%s is a FIFO, not a directory", in_dir("fifo"));
        assert_string_equal(safe_open_message(in_dir("fifo"), -ENOTDIR, (char[1024]){}, 1024), msg);
}

/* Trusted files: writable by group or others is refused; ours loose are tightened on request;
 * lock files are made 0600 whatever the umask and an old 0644 one becomes 0600. */
static void test_trusted_and_locks(void **state) {
        struct stat st;
        char msg[1024];
        int fd;

        make_file(in_dir("t-ok"), 0644);
        fd = safe_open(in_dir("t-ok"), O_RDONLY, 0, SAFE_OPEN_TRUSTED);
        assert_true(fd >= 0);
        close(fd);
        make_file(in_dir("t-gw"), 0664);
        assert_int_equal(safe_open(in_dir("t-gw"), O_RDONLY, 0, SAFE_OPEN_TRUSTED), -EPERM);
        snprintf(msg, sizeof(msg), "%s is writable by its group (mode 0664): refused",
                 in_dir("t-gw"));
        assert_string_equal(safe_open_message(in_dir("t-gw"), -EPERM, (char[1024]){}, 1024), msg);
        make_file(in_dir("t-ow"), 0666);
        assert_int_equal(safe_open(in_dir("t-ow"), O_RDONLY, 0, SAFE_OPEN_TRUSTED), -EPERM);
        /* tightened instead */
        fd = safe_open(in_dir("t-ow"), O_RDWR, 0600, SAFE_OPEN_TRUSTED | SAFE_OPEN_TIGHTEN);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(stat(in_dir("t-ow"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);

        /* lock files */
        umask(0);
        fd = lock_file_open(in_dir("new.lock"));
        umask(022);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(stat(in_dir("new.lock"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        make_file(in_dir("old.lock"), 0644);
        fd = lock_file_open(in_dir("old.lock"));
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(stat(in_dir("old.lock"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(mkfifo(in_dir("fifo.lock"), 0600), 0);
        alarm(10);
        assert_int_equal(lock_file_open(in_dir("fifo.lock")), -EBADFD);
        alarm(0);
        assert_int_equal(symlink("old.lock", in_dir("link.lock")), 0);
        assert_int_equal(lock_file_open(in_dir("link.lock")), -ELOOP);
        if (geteuid() == 0) {
                /* another user's file: never trusted, never tightened */
                make_file(in_dir("nobody.lock"), 0644);
                assert_int_equal(chown(in_dir("nobody.lock"), 65534, 65534), 0);
                assert_int_equal(lock_file_open(in_dir("nobody.lock")), -EPERM);
                assert_int_equal(stat(in_dir("nobody.lock"), &st), 0);
                assert_int_equal(st.st_mode & 07777, 0644);
                snprintf(msg, sizeof(msg), "%s is owned by uid 65534, not by root: refused",
                         in_dir("nobody.lock"));
                assert_string_equal(
                        safe_open_message(in_dir("nobody.lock"), -EPERM, (char[1024]){}, 1024),
                        msg);
        }
}

static void test_mkdir(void **state) {
        struct stat st;

        /* made with the mode whatever the umask; parents 0755 */
        umask(077);
        assert_int_equal(safe_mkdir(in_dir("a/b/run"), 0755), 0);
        umask(022);
        assert_int_equal(stat(in_dir("a/b/run"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0755);
        assert_int_equal(safe_mkdir(in_dir("a/b/run/lock"), 0700), 0);
        assert_int_equal(stat(in_dir("a/b/run/lock"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        /* an older amdsmi's 0755 lock directory is tightened; existing and right: untouched */
        assert_int_equal(chmod(in_dir("a/b/run/lock"), 0755), 0);
        assert_int_equal(safe_mkdir(in_dir("a/b/run/lock/"), 0700), 0);
        assert_int_equal(stat(in_dir("a/b/run/lock"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_int_equal(safe_mkdir(in_dir("a/b/run"), 0755), 0);
        /* not a directory, or a link to one */
        make_file(in_dir("m-file"), 0644);
        assert_int_equal(safe_mkdir(in_dir("m-file"), 0755), -ENOTDIR);
        assert_int_equal(mkfifo(in_dir("m-fifo"), 0644), 0);
        alarm(10);
        assert_int_equal(safe_mkdir(in_dir("m-fifo"), 0755), -ENOTDIR);
        alarm(0);
        assert_int_equal(symlink("a", in_dir("m-link")), 0);
        assert_int_equal(safe_mkdir(in_dir("m-link"), 0755), -ELOOP);
        assert_int_equal(safe_mkdir("", 0755), -EINVAL);
        if (geteuid() == 0) {
                assert_int_equal(mkdir(in_dir("theirs"), 0755), 0);
                assert_int_equal(chown(in_dir("theirs"), 65534, 65534), 0);
                assert_int_equal(safe_mkdir(in_dir("theirs"), 0700), -EPERM);
                assert_int_equal(stat(in_dir("theirs"), &st), 0);
                assert_int_equal(st.st_mode & 07777, 0755);
        }
}

/* write_file_atomic_at(): the content and mode whatever the umask, nothing hidden left, a
 * symbolic link at the name replaced (never followed), a directory at it refused. */
static void test_write_atomic_at(void **state) {
        int dfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char buf[64] = "", tmp[256] = "";
        struct stat st;
        DIR *d;
        struct dirent *e;
        int fd;

        assert_true(dfd >= 0);
        umask(077);
        assert_int_equal(write_file_atomic_at(dfd, "a.prom", "one\n", 4, 0644, tmp), 0);
        assert_int_equal(stat(in_dir("a.prom"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_int_equal(write_file_atomic_at(dfd, "a.prom", "two\n", 4, 0644, NULL), 0);
        fd = open(in_dir("a.prom"), O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(read(fd, buf, sizeof(buf)), 4);
        close(fd);
        assert_string_equal(buf, "two\n");
        /* a link at the name: replaced, its target untouched */
        make_file(in_dir("target"), 0600);
        assert_int_equal(symlink(in_dir("target"), in_dir("link")), 0);
        assert_int_equal(write_file_atomic_at(dfd, "link", "new\n", 4, 0644, NULL), 0);
        assert_int_equal(lstat(in_dir("link"), &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(stat(in_dir("target"), &st), 0);
        assert_int_equal(st.st_size, 2);
        /* a directory at the name: refused, no temporary file left */
        assert_int_equal(mkdir(in_dir("adir"), 0755), 0);
        assert_true(write_file_atomic_at(dfd, "adir", "x", 1, 0644, NULL) < 0);
        d = opendir(tmpdir);
        assert_non_null(d);
        while ((e = readdir(d)))
                assert_false(e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 &&
                             strcmp(e->d_name, "..") != 0);
        closedir(d);
        umask(022);
        close(dfd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_type_names),
                cmocka_unit_test(test_refuse_by_type),
                cmocka_unit_test(test_trusted_and_locks),
                cmocka_unit_test(test_mkdir),
                cmocka_unit_test(test_write_atomic_at),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
