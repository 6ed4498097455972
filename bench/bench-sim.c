/* SPDX-License-Identifier: MIT */
/*
 * The cost of reading one small attribute through amdsmi-sim, against an empty FUSE handler
 * in the same run (ARCHITECTURE §8: at most 1.5x).
 *
 *   bench-sim AMDSMI_SIM [READS]        (root, /dev/fuse)
 *
 * The empty handler is a libfuse low-level file system in this process that has one file
 * and answers open, read and release with nothing but the reply, with the same cache
 * timeouts, direct_io and thread limits as the simulator. Each read is openat() of one name
 * in an open directory (so both sides do one cached lookup), one read() of a page, close().
 * The two sides alternate in batches; the medians of the batches are printed.
 */
#define FUSE_USE_VERSION 314

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

#define BATCHES 21
#define TIMEOUT 86400.0

static const char content[] = "SPX\n";

static void empty_init(void *userdata, struct fuse_conn_info *conn) {
        if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
                conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
}

static void fill(fuse_ino_t ino, struct stat *st) {
        memset(st, 0, sizeof(*st));
        st->st_ino = ino;
        st->st_mode = ino == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0444;
        st->st_nlink = ino == FUSE_ROOT_ID ? 2 : 1;
        st->st_size = 4096;
}

static void empty_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
        struct fuse_entry_param e = { .attr_timeout = TIMEOUT, .entry_timeout = TIMEOUT };

        if (parent != FUSE_ROOT_ID || strcmp(name, "attr") != 0) {
                fuse_reply_err(req, ENOENT);
                return;
        }
        e.ino = 2;
        fill(2, &e.attr);
        fuse_reply_entry(req, &e);
}

static void empty_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        struct stat st;

        fill(ino, &st);
        fuse_reply_attr(req, &st, TIMEOUT);
}

static void empty_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        fi->direct_io = 1;
        fuse_reply_open(req, fi);
}

static void empty_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi) {
        size_t len = sizeof(content) - 1;

        if (off >= (off_t) len)
                fuse_reply_buf(req, NULL, 0);
        else
                fuse_reply_buf(req, content + off,
                               len - (size_t) off < size ? len - (size_t) off : size);
}

static void empty_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        fuse_reply_err(req, 0);
}

static void empty_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        fuse_reply_open(req, fi);
}

static const struct fuse_lowlevel_ops empty_ops = {
        .init = empty_init,
        .lookup = empty_lookup,
        .getattr = empty_getattr,
        .open = empty_open,
        .read = empty_read,
        .release = empty_release,
        .opendir = empty_opendir,
};

static void *empty_loop(void *se) {
        struct fuse_loop_config *cfg = fuse_loop_cfg_create();

        fuse_loop_cfg_set_max_threads(cfg, 8);
        fuse_loop_cfg_set_idle_threads(cfg, 4);
        fuse_session_loop_mt(se, cfg);
        fuse_loop_cfg_destroy(cfg);
        return NULL;
}

/* The mean cost of @n reads of @name in directory @dfd, in ns. */
static double read_batch(int dfd, const char *name, long n) {
        char buf[4096];
        uint64_t t0 = bench_now_ns(CLOCK_MONOTONIC);

        for (long i = 0; i < n; i++) {
                int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);

                if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0) {
                        perror(name);
                        exit(1);
                }
                close(fd);
        }
        return (double) (bench_now_ns(CLOCK_MONOTONIC) - t0) / (double) n;
}

struct target {
        const char *label, *dir, *name;
        int dfd;
        double t[BATCHES], median;
};

/* Unmounts both handlers (the simulator's unless it never mounted) and removes the
 * directories, also when a step failed; @return @rc. */
static int finish(int rc, struct fuse_session *se, pthread_t thread, const char *tmp,
                  const char *empty_dir, const char *sim_dir) {
        int status;
        pid_t pid = fork();

        if (pid == 0) {
                execlp("fusermount3", "fusermount3", "-u", "-q", sim_dir, (char *) NULL);
                _exit(127);
        }
        if (pid > 0)
                (void) waitpid(pid, &status, 0);
        (void) umount2(empty_dir, MNT_DETACH);
        pthread_join(thread, NULL);
        fuse_session_unmount(se);
        fuse_session_destroy(se);
        (void) rmdir(empty_dir);
        (void) rmdir(sim_dir);
        (void) rmdir(tmp);
        return rc;
}

int main(int argc, char **argv) {
        char tmpl[] = "/tmp/bench-sim.XXXXXX", empty_dir[64], sim_dir[64], hwmon[512] = "";
        char *fargv[] = { argv[0], (char *) "-o", (char *) "default_permissions,fsname=empty",
                          NULL };
        struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
        const char *gpu = "bus/pci/devices/0000:05:00.0";
        long reads = argc > 2 ? strtol(argv[2], NULL, 10) : 20000;
        struct fuse_session *se;
        pthread_t thread;
        pid_t pid;
        int status;

        if (argc < 2) {
                fprintf(stderr, "usage: bench-sim AMDSMI_SIM [READS]\n");
                return 2;
        }
        if (!mkdtemp(tmpl)) {
                perror("mkdtemp");
                return 1;
        }
        snprintf(empty_dir, sizeof(empty_dir), "%s/empty", tmpl);
        snprintf(sim_dir, sizeof(sim_dir), "%s/sim", tmpl);
        mkdir(empty_dir, 0755);
        mkdir(sim_dir, 0755);

        se = fuse_session_new(&args, &empty_ops, sizeof(empty_ops), NULL);
        if (!se || fuse_session_mount(se, empty_dir) != 0) {
                fprintf(stderr, "cannot mount the empty handler (root and /dev/fuse needed)\n");
                if (se)
                        fuse_session_destroy(se);
                (void) rmdir(empty_dir);
                (void) rmdir(sim_dir);
                (void) rmdir(tmpl);
                return 1;
        }
        pthread_create(&thread, NULL, empty_loop, se);

        pid = fork();
        if (pid == 0) {
                execl(argv[1], argv[1], "mount", sim_dir, "--seed", "1", (char *) NULL);
                _exit(127);
        }
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "amdsmi-sim mount failed\n");
                return finish(1, se, thread, tmpl, empty_dir, sim_dir);
        }

        {
                char path[256];
                int hfd;

                snprintf(path, sizeof(path), "%s/%s/hwmon", sim_dir, gpu);
                hfd = open(path, O_RDONLY | O_DIRECTORY);
                if (hfd >= 0) {
                        FILE *p;
                        char cmd[300];

                        close(hfd);
                        snprintf(cmd, sizeof(cmd), "ls %s", path);
                        p = popen(cmd, "r");
                        if (p && fgets(hwmon, sizeof(hwmon), p))
                                hwmon[strcspn(hwmon, "\n")] = '\0';
                        if (p)
                                pclose(p);
                }
        }
        {
                char dirs[3][512];
                struct target targets[] = {
                        { "empty FUSE handler             ", dirs[0], "attr", -1, { 0 } },
                        { "amdsmi-sim current_compute_partition",
                          dirs[1],
                          "current_compute_partition",
                          -1,
                          { 0 } },
                        { "amdsmi-sim vendor (fixed text)  ", dirs[1], "vendor", -1, { 0 } },
                        { "amdsmi-sim hwmon power1_input   ", dirs[2], "power1_input", -1, { 0 } },
                        { "amdsmi-sim gpu_metrics (2208 B) ", dirs[1], "gpu_metrics", -1, { 0 } },
                };
                size_t n = sizeof(targets) / sizeof(targets[0]);
                long per = reads / BATCHES;

                snprintf(dirs[0], sizeof(dirs[0]), "%s", empty_dir);
                snprintf(dirs[1], sizeof(dirs[1]), "%s/%s", sim_dir, gpu);
                snprintf(dirs[2], sizeof(dirs[2]), "%s/%s/hwmon/%s", sim_dir, gpu, hwmon);
                for (size_t i = 0; i < n; i++) {
                        targets[i].dfd = open(targets[i].dir, O_RDONLY | O_DIRECTORY);
                        if (targets[i].dfd < 0) {
                                perror(targets[i].dir);
                                while (i > 0)
                                        close(targets[--i].dfd);
                                return finish(1, se, thread, tmpl, empty_dir, sim_dir);
                        }
                        read_batch(targets[i].dfd, targets[i].name, 500); /* warm caches */
                }
                for (int b = 0; b < BATCHES; b++)
                        for (size_t i = 0; i < n; i++)
                                targets[i].t[b] = read_batch(targets[i].dfd, targets[i].name, per);
                for (size_t i = 0; i < n; i++) {
                        targets[i].median = bench_median(targets[i].t, BATCHES);
                        close(targets[i].dfd);
                }
                printf("open+read+close of one attribute, median of %d batches of %ld:\n", BATCHES,
                       per);
                for (size_t i = 0; i < n; i++)
                        printf("  %-38s %7.2f us   ratio %.2f\n", targets[i].label,
                               targets[i].median / 1000, targets[i].median / targets[0].median);
        }

        return finish(0, se, thread, tmpl, empty_dir, sim_dir);
}
