/* SPDX-License-Identifier: MIT */
/*
 * What reading the KFD processes costs in-process, against its floor: the same files read
 * with nothing else done. On a tree with the process entries of live processes (bench/run.sh
 * makes 1000 across the 64 partitions of 8 × MI300X in CPX):
 *
 *   floor      every directory the reader lists and every file it reads, listed and read
 *              with opendir/readdir and open/read/close, relative to each entry's
 *              directory as the reader does, and /proc/PID's owner, comm and cgroup
 *   library    amdsmi_ctx_read_processes() (the KFD topology already read)
 *   document   the process document of every GPU (process_gpu()), from one read
 *
 * Medians over ROUNDS passes; the library's and the document's ratio to the floor.
 *
 *   AMDSMI_SYSFS_ROOT=TREE bench-process [ROUNDS]      (default 20)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bench-util.h"
#include "documents.h"
#include "process-json.h"
#include "select.h"

static size_t read_at(int dfd, const char *name) {
        char buf[4096];
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return 0;
        n = pread(fd, buf, sizeof(buf), 0);
        close(fd);
        return n > 0 ? (size_t) n : 0;
}

/* Lists @name of @dfd: the entries into @names (NULL: only listed), their count. */
static size_t list_at(int dfd, const char *name, char names[][64], size_t max) {
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirent *de;
        size_t n = 0;
        DIR *d;

        if (fd < 0)
                return 0;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return 0;
        }
        while ((de = readdir(d)))
                if (de->d_name[0] != '.') {
                        if (strlen(de->d_name) >= 64)
                                continue; /* no PID, node or queue name is that long */
                        if (names && n < max)
                                memcpy(names[n], de->d_name, strlen(de->d_name) + 1);
                        n++;
                }
        closedir(d);
        return n;
}

/* The floor: the reader's directory listings and reads, nothing else. @return bytes read. */
static size_t floor_pass(const char *root) {
        static char pids[8192][64], files[256][64], queues[64][64];
        char path[4096];
        size_t n, total = 0;
        int pdir;

        snprintf(path, sizeof(path), "%s/class/kfd/kfd/proc", root);
        pdir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pdir < 0)
                return 0;
        n = list_at(pdir, ".", pids, 8192);
        for (size_t i = 0; i < n && i < 8192; i++) {
                int dfd = openat(pdir, pids[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC), pfd;
                size_t nf, nq;
                struct stat st;

                if (dfd < 0)
                        continue;
                nf = list_at(dfd, ".", files, 256);
                for (size_t k = 0; k < nf && k < 256; k++) {
                        char name[128];

                        if (strncmp(files[k], "vram_", 5) != 0)
                                continue;
                        total += read_at(dfd, files[k]);
                        /* the details of a node in use: every node of these entries is */
                        snprintf(name, sizeof(name), "sdma_%s", files[k] + 5);
                        total += read_at(dfd, name);
                        snprintf(name, sizeof(name), "stats_%s/evicted_ms", files[k] + 5);
                        total += read_at(dfd, name);
                        snprintf(name, sizeof(name), "stats_%s/cu_occupancy", files[k] + 5);
                        total += read_at(dfd, name);
                        snprintf(name, sizeof(name), "counters_%s/faults", files[k] + 5);
                        total += read_at(dfd, name);
                        snprintf(name, sizeof(name), "counters_%s/page_in", files[k] + 5);
                        total += read_at(dfd, name);
                        snprintf(name, sizeof(name), "counters_%s/page_out", files[k] + 5);
                        total += read_at(dfd, name);
                }
                nq = list_at(dfd, "queues", queues, 64);
                for (size_t q = 0; q < nq && q < 64; q++) {
                        char name[128];

                        snprintf(name, sizeof(name), "queues/%s/gpuid", queues[q]);
                        total += read_at(dfd, name);
                }
                total += read_at(dfd, "pasid");
                close(dfd);
                snprintf(path, sizeof(path), "/proc/%s", pids[i]);
                pfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (pfd >= 0) {
                        if (fstat(pfd, &st) == 0)
                                total += 1;
                        total += read_at(pfd, "comm");
                        total += read_at(pfd, "cgroup");
                        close(pfd);
                }
        }
        close(pdir);
        return total;
}

static size_t document_pass(struct amdsmi_ctx *ctx) {
        struct report rep = { .command = "process", .keep_field_errors = true };
        struct amdsmi_process_list *list = NULL;
        struct selection sel = {};
        struct gpu_set set = {};
        struct doc_query q = { .report = &rep, .set = &set };
        json_object *gpus = NULL;
        size_t len = 0;

        if (gpu_set_resolve(&set, ctx, &sel, &rep, 0) < 0 || process_read(&rep, ctx, &list) < 0)
                return 0;
        q.processes = list;
        if (doc_collect(&q, process_gpu, &gpus) == 0) {
                len = strlen(json_object_to_json_string_ext(gpus, JSON_C_TO_STRING_PLAIN));
                json_object_put(gpus);
        }
        amdsmi_process_list_free(list);
        gpu_set_clear(&set);
        report_clear(&rep);
        return len;
}

int main(int argc, char **argv) {
        int rounds = argc > 1 ? atoi(argv[1]) : 20;
        const char *root = getenv("AMDSMI_SYSFS_ROOT");
        double *f, *l, *d;
        struct amdsmi_ctx *ctx = NULL;
        size_t n_proc = 0, n_nodes = 0, bytes = 0, doc = 0;
        int gpus;

        if (!root || rounds < 1) {
                fprintf(stderr, "usage: AMDSMI_SYSFS_ROOT=TREE bench-process [ROUNDS]\n");
                return 2;
        }
        if (amdsmi_ctx_new(&ctx) < 0 || (gpus = amdsmi_ctx_enumerate(ctx)) < 0) {
                fprintf(stderr, "no GPUs under %s\n", root);
                return 1;
        }
        f = calloc((size_t) rounds, sizeof(double));
        l = calloc((size_t) rounds, sizeof(double));
        d = calloc((size_t) rounds, sizeof(double));
        if (!f || !l || !d)
                return 1;
        for (int i = 0; i < rounds; i++) {
                struct amdsmi_process_list *list = NULL;
                double t0 = bench_now_us(CLOCK_MONOTONIC);

                bytes = floor_pass(root);
                f[i] = bench_now_us(CLOCK_MONOTONIC) - t0;
                t0 = bench_now_us(CLOCK_MONOTONIC);
                if (amdsmi_ctx_read_processes(ctx, 0, &list) < 0) {
                        fprintf(stderr, "cannot read the processes\n");
                        return 1;
                }
                l[i] = bench_now_us(CLOCK_MONOTONIC) - t0;
                n_proc = list->n_processes;
                n_nodes = 0;
                for (size_t k = 0; k < list->n_processes; k++)
                        n_nodes += list->processes[k].n_nodes;
                amdsmi_process_list_free(list);
                t0 = bench_now_us(CLOCK_MONOTONIC);
                doc = document_pass(ctx);
                d[i] = bench_now_us(CLOCK_MONOTONIC) - t0;
        }
        {
                double fm = bench_median(f, (size_t) rounds), lm = bench_median(l, (size_t) rounds),
                       dm = bench_median(d, (size_t) rounds);

                printf("%zu processes, %zu nodes held, %d GPUs:\n", n_proc, n_nodes, gpus);
                printf("  floor (the reader's listings and reads alone, %zu bytes): median %.0f us\n",
                       bytes, fm);
                printf("  amdsmi_ctx_read_processes(): median %.0f us (%.2fx the floor)\n", lm,
                       lm / fm);
                printf("  the process document of every GPU (%zu bytes of JSON): median %.0f us "
                       "(%.2fx the floor)\n",
                       doc, dm, dm / fm);
        }
        free(f);
        free(l);
        free(d);
        amdsmi_ctx_unref(ctx);
        return 0;
}
