/* SPDX-License-Identifier: MIT */
/*
 * The KFD processes (health-and-control.md §6): class/kfd/kfd/proc/<pid>/ with pasid,
 * vram_<gpu_id>, sdma_<gpu_id>, stats_<gpu_id>/{evicted_ms,cu_occupancy},
 * counters_<gpu_id>/{faults,page_in,page_out} and queues/<qid>/gpuid, joined with /proc's
 * owner, comm and cgroup (lib/procfs.c).
 *
 * Each entry's files are read relative to its directory, opened once (a thousand processes
 * make a thousand entries). The details (SDMA, stats, counters) are read for the nodes a
 * process uses only: a ROCm process holds every node it can see, and reading six files for
 * each of 64 partitions it does not use would be most of the work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse-util.h"
#include "private.h"
#include "procfs.h"
#include "sysfs.h"

#define KFD_PROC "class/kfd/kfd/proc"
/* most nodes one entry may name: beyond this, a tree is not a kernel's */
#define MAX_NODES 1024

static int cmp_node(const void *a, const void *b) {
        const struct amdsmi_process_node *x = a, *y = b;

        /* known GPUs first, by index and partition; unknown ones by gpu_id */
        if ((x->gpu_index < 0) != (y->gpu_index < 0))
                return x->gpu_index < 0 ? 1 : -1;
        if (x->gpu_index != y->gpu_index)
                return x->gpu_index < y->gpu_index ? -1 : 1;
        if (x->partition != y->partition)
                return x->partition < y->partition ? -1 : 1;
        return x->kfd_gpu_id < y->kfd_gpu_id ? -1 : (x->kfd_gpu_id > y->kfd_gpu_id);
}

static int cmp_process(const void *a, const void *b) {
        const struct amdsmi_process *x = a, *y = b;

        return x->pid < y->pid ? -1 : (x->pid > y->pid);
}

static void map_node(struct amdsmi_ctx *ctx, struct amdsmi_process_node *n) {
        n->gpu_index = n->partition = -1;
        for (size_t i = 0; i < ctx->n_gpus; i++) {
                struct amdsmi_gpu *gpu = ctx->gpus[i];

                for (size_t p = 0; p < gpu->n_partitions; p++)
                        if (gpu->partitions[p].kfd_gpu_id == n->kfd_gpu_id) {
                                n->gpu_index = (int32_t) gpu->index;
                                n->partition = (int32_t) gpu->partitions[p].index;
                                return;
                        }
        }
}

static struct amdsmi_process_node *find_node(struct amdsmi_process *p, uint32_t gpu_id) {
        for (size_t i = 0; i < p->n_nodes; i++)
                if (p->nodes[i].kfd_gpu_id == gpu_id)
                        return &p->nodes[i];
        return NULL;
}

static int add_node(struct amdsmi_ctx *ctx, struct amdsmi_process *p, uint32_t gpu_id,
                    size_t *allocated, struct amdsmi_process_node **ret) {
        struct amdsmi_process_node *n = find_node(p, gpu_id);

        if (!n) {
                if (p->n_nodes >= MAX_NODES)
                        return -E2BIG;
                if (p->n_nodes == *allocated) {
                        size_t na = *allocated * 2 + 4;
                        struct amdsmi_process_node *nn = reallocarray(p->nodes, na, sizeof(*nn));

                        if (!nn)
                                return -ENOMEM;
                        p->nodes = nn;
                        *allocated = na;
                }
                n = &p->nodes[p->n_nodes++];
                *n = (struct amdsmi_process_node){
                        .kfd_gpu_id = gpu_id,
                        .vram_bytes = AMDSMI_NA,
                        .sdma_usec = AMDSMI_NA,
                        .evicted_ms = AMDSMI_NA,
                        .cu_occupancy = AMDSMI_NA,
                        .faults = AMDSMI_NA,
                        .page_in = AMDSMI_NA,
                        .page_out = AMDSMI_NA,
                };
                map_node(ctx, n);
        }
        *ret = n;
        return 0;
}

static bool gone(int r) {
        return r == -ENOENT || r == -ESRCH || r == -ENODEV;
}

static bool denied(int r) {
        return r == -EPERM || r == -EACCES;
}

/* One value of a node, PREFIX<gpu_id>SUFFIX: AMDSMI_NA unless read. Sets *denied on
 * EPERM/EACCES. */
static uint64_t value_at(struct amdsmi_ctx *ctx, int dfd, const char *prefix, uint32_t gpu_id,
                         const char *suffix, bool *was_denied) {
        char name[64];
        uint64_t v;
        int r;

        snprintf(name, sizeof(name), "%s%u%s", prefix, gpu_id, suffix);
        r = sysfs_read_u64_at(ctx, dfd, name, 10, &v);
        if (denied(r))
                *was_denied = true;
        return r < 0 ? AMDSMI_NA : v;
}

/* The queues of an entry: each queues/<qid>/gpuid counts for its node. */
static int read_queues(struct amdsmi_ctx *ctx, int dfd, struct amdsmi_process *p, size_t *allocated,
                       bool *was_denied) {
        _cleanup_strv_free_ char **qids = NULL;
        int n, r;

        n = sysfs_list_dir_at(ctx, dfd, "queues", NULL, &qids);
        if (n == -ENOENT)
                return 0;
        if (denied(n)) {
                *was_denied = true;
                return 0;
        }
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                struct amdsmi_process_node *node;
                char name[300];
                uint64_t id;

                snprintf(name, sizeof(name), "queues/%s/gpuid", qids[i]);
                r = sysfs_read_u64_at(ctx, dfd, name, 10, &id);
                if (denied(r))
                        *was_denied = true;
                if (r < 0 || id > UINT32_MAX)
                        continue; /* a queue destroyed meanwhile, or garbage */
                r = add_node(ctx, p, (uint32_t) id, allocated, &node);
                if (r < 0)
                        return r;
                node->queues++;
        }
        return 0;
}

/* Reads the entry @name into *p: 1, 0 if the process is gone, or a negative errno. */
static int read_entry(struct amdsmi_ctx *ctx, const char *name, int32_t pid, unsigned flags,
                      struct amdsmi_process *p, bool *was_denied) {
        _cleanup_strv_free_ char **files = NULL;
        _cleanup_close_ int dfd = -EBADF;
        struct procfs_process info;
        size_t allocated = 0;
        char dir[128];
        uint64_t v;
        int n, r;

        *p = (struct amdsmi_process){ .pid = pid, .pasid = UINT32_MAX, .uid = UINT32_MAX };
        snprintf(dir, sizeof(dir), KFD_PROC "/%s", name);
        dfd = sysfs_open_dir(ctx, dir);
        if (gone(dfd))
                return 0;
        if (dfd < 0)
                return dfd;
        n = sysfs_list_dir_at(ctx, dfd, ".", "vram_", &files);
        if (gone(n))
                return 0;
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                struct amdsmi_process_node *node;
                uint32_t id;

                if (parse_u32(files[i] + 5, 10, &id) < 0)
                        continue; /* not a kernel's name */
                r = add_node(ctx, p, id, &allocated, &node);
                if (r < 0)
                        return r;
                r = sysfs_read_u64_at(ctx, dfd, files[i], 10, &node->vram_bytes);
                if (gone(r) && sysfs_exists(ctx, dir) == -ENOENT)
                        return 0; /* it exited meanwhile */
                if (denied(r))
                        *was_denied = true;
                if (r < 0)
                        node->vram_bytes = AMDSMI_NA;
        }
        r = read_queues(ctx, dfd, p, &allocated, was_denied);
        if (r < 0)
                return r;
        r = sysfs_read_u64_at(ctx, dfd, "pasid", 10, &v);
        if (r == 0 && v < UINT32_MAX)
                p->pasid = (uint32_t) v;
        else if (denied(r))
                *was_denied = true;

        for (size_t i = 0; i < p->n_nodes; i++) {
                struct amdsmi_process_node *node = &p->nodes[i];
                uint32_t id = node->kfd_gpu_id;

                node->in_use =
                        node->queues > 0 || (node->vram_bytes != AMDSMI_NA && node->vram_bytes > 0);
                if (!node->in_use || (flags & AMDSMI_PROCESS_BRIEF))
                        continue;
                node->sdma_usec = value_at(ctx, dfd, "sdma_", id, "", was_denied);
                node->evicted_ms = value_at(ctx, dfd, "stats_", id, "/evicted_ms", was_denied);
                node->cu_occupancy = value_at(ctx, dfd, "stats_", id, "/cu_occupancy", was_denied);
                node->faults = value_at(ctx, dfd, "counters_", id, "/faults", was_denied);
                node->page_in = value_at(ctx, dfd, "counters_", id, "/page_in", was_denied);
                node->page_out = value_at(ctx, dfd, "counters_", id, "/page_out", was_denied);
        }
        if (p->n_nodes > 1)
                qsort(p->nodes, p->n_nodes, sizeof(*p->nodes), cmp_node);

        r = procfs_read_process(ctx, (pid_t) pid, &info);
        if (r == -ESRCH || r == -ENOENT) {
                /* exited (KFD drops the entry as the process goes: a moment later), or hidden
                 * from this reader by /proc (hidepid) */
                if (procfs_process_gone((pid_t) pid) || sysfs_exists(ctx, dir) == -ENOENT)
                        return 0;
                *was_denied = true;
        } else if (denied(r))
                *was_denied = true;
        else if (r == 0) {
                p->uid = info.uid;
                memcpy(p->comm, info.comm, sizeof(p->comm));
                memcpy(p->cgroup, info.cgroup, sizeof(p->cgroup));
        }
        return 1;
}

static void process_clear(struct amdsmi_process *p) {
        free(p->nodes);
        p->nodes = NULL;
        p->n_nodes = 0;
}

_public_ struct amdsmi_process_list *amdsmi_process_list_free(struct amdsmi_process_list *list) {
        if (!list)
                return NULL;
        for (size_t i = 0; i < list->n_processes; i++)
                process_clear(&list->processes[i]);
        free(list->processes);
        free(list);
        return NULL;
}

static void freep_list(struct amdsmi_process_list **l) {
        amdsmi_process_list_free(*l);
}

_public_ int amdsmi_ctx_read_processes(struct amdsmi_ctx *ctx, unsigned flags,
                                       struct amdsmi_process_list **ret_list) {
        __attribute__((cleanup(freep_list))) struct amdsmi_process_list *list = NULL;
        _cleanup_strv_free_ char **names = NULL;
        int n, r;

        if (flags & ~(unsigned) AMDSMI_PROCESS_BRIEF)
                return -EINVAL;
        /* the entries name the gpu_ids of now: map the partitions again if they changed */
        r = kfd_refresh(ctx);
        if (r < 0)
                return r;
        list = calloc(1, sizeof(*list));
        if (!list)
                return -ENOMEM;
        n = sysfs_list_dir(ctx, KFD_PROC, NULL, &names);
        if (n == -ENOENT)
                n = 0; /* no KFD, or no process yet */
        else if (n < 0)
                return n;
        if (n > 0) {
                list->processes = calloc((size_t) n, sizeof(*list->processes));
                if (!list->processes)
                        return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                struct amdsmi_process *p = &list->processes[list->n_processes];
                bool was_denied = false;
                int pid;

                if (parse_int(names[i], &pid) < 0 || pid <= 0)
                        continue;
                r = read_entry(ctx, names[i], pid, flags, p, &was_denied);
                if (r <= 0) {
                        process_clear(p);
                        if (r == -ENOMEM)
                                return r;
                        if (denied(r))
                                list->n_denied++;
                        else if (r < 0)
                                log_debug(ctx, "%s/" KFD_PROC "/%s: %s", ctx->sysfs_root, names[i],
                                          strerror(-r));
                        continue; /* gone, or unreadable: the others still count */
                }
                list->n_processes++;
                if (was_denied)
                        list->n_denied++;
        }
        if (list->n_processes > 1)
                qsort(list->processes, list->n_processes, sizeof(*list->processes), cmp_process);
        *ret_list = TAKE_PTR(list);
        return 0;
}
