/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the KFD process reader (process/process-read.c): one file of a process entry
 * (class/kfd/kfd/proc/<this process>/: vram_, sdma_, stats_, counters_, pasid, a queue's
 * gpuid) through a sysfs tree (fuzz-sysfs.h) and the public API. The first input byte picks
 * the file, the rest is its content. Checks: the read never fails and always lists this
 * process (it runs); a number file reads as the number its text says, or as unknown; the
 * node is the GPU's; it is in use exactly when it has VRAM or a queue.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NODE_ID "48879"

enum {
        F_VRAM,
        F_SDMA,
        F_EVICTED,
        F_CU,
        F_FAULTS,
        F_PASID,
        F_QUEUE,
        _F_MAX
};

static const char *const names[_F_MAX] = {
        [F_VRAM] = "vram_" NODE_ID,
        [F_SDMA] = "sdma_" NODE_ID,
        [F_EVICTED] = "stats_" NODE_ID "/evicted_ms",
        [F_CU] = "stats_" NODE_ID "/cu_occupancy",
        [F_FAULTS] = "counters_" NODE_ID "/faults",
        [F_PASID] = "pasid",
        [F_QUEUE] = "queues/0/gpuid",
};

/* The entry as the kernel writes it, the fuzzed file aside. */
static void write_entry(const char *dir, size_t which, const uint8_t *data, size_t size) {
        static const char *const base[_F_MAX] = {
                [F_VRAM] = "1048576\n", [F_SDMA] = "10\n",     [F_EVICTED] = "0\n", [F_CU] = "4\n",
                [F_FAULTS] = "2\n",     [F_PASID] = "32769\n", [F_QUEUE] = NODE_ID,
        };
        char rel[256];

        for (size_t i = 0; i < _F_MAX; i++) {
                FUZZ_PRINT(rel, "%s/%s", dir, names[i]);
                if (i == which)
                        fuzz_sysfs_set(rel, data, size);
                else
                        fuzz_sysfs_set(rel, base[i], strlen(base[i]));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct amdsmi_process_list *l = NULL;
        const struct amdsmi_process_node *n;
        struct amdsmi_gpu *gpu;
        struct amdsmi_ctx *ctx;
        char dir[128];
        uint64_t v, expect;
        size_t which;
        int r;

        if (!fuzz_sysfs_pick(&data, &size, _F_MAX, &which))
                return 0;
        snprintf(dir, sizeof(dir), "class/kfd/kfd/proc/%d", (int) getpid());
        write_entry(dir, which, data, size);
        ctx = fuzz_sysfs_ctx(&gpu);
        if (!gpu)
                abort();
        r = amdsmi_ctx_read_processes(ctx, 0, &l);
        if (r == -ENOMEM) {
                amdsmi_ctx_unref(ctx);
                return 0;
        }
        if (r < 0 || l->n_processes != 1 || l->processes[0].pid != (int32_t) getpid())
                abort(); /* one file never hides a running process */
        r = fuzz_sysfs_u64(data, size, 10, &v);
        expect = r < 0 ? AMDSMI_NA : v;
        /* every file names the one node, but a queue may name another one */
        if (l->processes[0].n_nodes !=
            (which == F_QUEUE && r == 0 && v != 48879 && v <= UINT32_MAX ? 2u : 1u))
                abort();
        n = &l->processes[0].nodes[0]; /* the GPU's node comes first */
        if (n->kfd_gpu_id != 48879 || n->gpu_index != 0 || n->partition != 0)
                abort();
        if (n->in_use != (n->queues > 0 || (n->vram_bytes != AMDSMI_NA && n->vram_bytes > 0)))
                abort();

        switch (which) {
        case F_VRAM:
                if (n->vram_bytes != expect)
                        abort();
                break;
        case F_SDMA:
                if (n->sdma_usec != expect)
                        abort();
                break;
        case F_EVICTED:
                if (n->evicted_ms != expect)
                        abort();
                break;
        case F_CU:
                if (n->cu_occupancy != expect)
                        abort();
                break;
        case F_FAULTS:
                if (n->faults != expect)
                        abort();
                break;
        case F_PASID:
                if (l->processes[0].pasid != (expect < UINT32_MAX ? expect : UINT32_MAX))
                        abort();
                break;
        case F_QUEUE:
                /* a queue counts for the node its gpuid names, here only this one */
                if (n->queues != (r == 0 && v == 48879 ? 1u : 0u))
                        abort();
                break;
        }
        amdsmi_process_list_free(l);
        amdsmi_ctx_unref(ctx);
        return 0;
}
