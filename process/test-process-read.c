/* SPDX-License-Identifier: MIT */
/*
 * The KFD process reader on hand-made trees (spec health-and-control §6): every file of an
 * entry and its unit, the queues' gpuid without a newline, a node no GPU has, garbage and
 * empty values, an entry of a process that no longer exists, the details read for nodes in
 * use only, and /proc's comm and cgroup as they come (a stand-in /proc: control characters,
 * a comm longer than any kernel's, a cgroup line too long, a missing cgroup file).
 */
/* clang-format off: cmocka.h needs these first */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "private.h"
#include "procfs.h"
#include "tree-util.h"

#define DEV "devices/pci0000:00/0000:c1:00.0/"
#define TOPO "class/kfd/kfd/topology/"
#define PROC "class/kfd/kfd/proc/"
#define GPU_ID "48879"

static char *gpu_tree(void) {
        char *root = tree_new();

        tree_file(root, DEV "vendor", "0x1002\n", -1, 0444);
        tree_file(root, DEV "device", "0x74a1\n", -1, 0444);
        tree_file(root, DEV "class", "0x120000\n", -1, 0444);
        tree_mkdirs(root, DEV "drm/card1");
        tree_mkdirs(root, DEV "drm/renderD129");
        tree_mkdirs(root, "bus/pci/drivers/amdgpu");
        tree_link(root, "bus/pci/devices/0000:c1:00.0", "../../../devices/pci0000:00/0000:c1:00.0");
        tree_link(root, DEV "driver", "../../../bus/pci/drivers/amdgpu");
        tree_file(root, TOPO "generation_id", "3\n", -1, 0444);
        tree_file(root, TOPO "nodes/0/gpu_id", "0\n", -1, 0444);
        tree_file(root, TOPO "nodes/0/properties", "cpu_cores_count 96\nsimd_count 0\n", -1, 0444);
        tree_file(root, TOPO "nodes/1/gpu_id", GPU_ID "\n", -1, 0444);
        tree_file(root, TOPO "nodes/1/properties",
                  "simd_count 1216\nsimd_per_cu 4\nlocation_id 49408\ndomain 0\n"
                  "drm_render_minor 129\nnum_xcc 8\ngfx_target_version 90402\n",
                  -1, 0444);
        tree_mkdirs(root, PROC);
        return root;
}

/* An entry for @pid: vram on the GPU's node, and on a node no GPU has. */
static void add_entry(const char *root, int pid, const char *vram, int queues) {
        char rel[256];

        snprintf(rel, sizeof(rel), PROC "%d/pasid", pid);
        tree_file(root, rel, "32770\n", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/vram_" GPU_ID, pid);
        tree_file(root, rel, vram, -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/sdma_" GPU_ID, pid);
        tree_file(root, rel, "1500\n", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/stats_" GPU_ID "/evicted_ms", pid);
        tree_file(root, rel, "12\n", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/stats_" GPU_ID "/cu_occupancy", pid);
        tree_file(root, rel, "38\n", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/counters_" GPU_ID "/faults", pid);
        tree_file(root, rel, "5\n", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/counters_" GPU_ID "/page_in", pid);
        tree_file(root, rel, "6\n", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/counters_" GPU_ID "/page_out", pid);
        tree_file(root, rel, "7\n", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/queues", pid);
        tree_mkdirs(root, rel);
        for (int q = 0; q < queues; q++) {
                snprintf(rel, sizeof(rel), PROC "%d/queues/%d/gpuid", pid, q);
                tree_file(root, rel, GPU_ID, -1, 0444); /* no newline, as the kernel */
                snprintf(rel, sizeof(rel), PROC "%d/queues/%d/size", pid, q);
                tree_file(root, rel, "1048576", -1, 0444);
        }
}

static struct amdsmi_ctx *ctx_on(const char *root) {
        struct amdsmi_ctx *ctx = NULL;

        assert_int_equal(amdsmi_ctx_new_with_roots(root, NULL, &ctx), 0);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        return ctx;
}

/* A PID that no process has: a child, reaped. */
static int dead_pid(void) {
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0)
                _exit(0);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        return (int) pid;
}

static void test_entry(void **state) {
        char *root = gpu_tree(), rel[128];
        struct amdsmi_process_list *l = NULL;
        struct amdsmi_ctx *ctx;
        const struct amdsmi_process_node *n;
        int self = (int) getpid();

        add_entry(root, self, "1073741824\n", 2);
        /* a node no GPU of this machine has: listed, unattributed, last */
        snprintf(rel, sizeof(rel), PROC "%d/vram_999", self);
        tree_file(root, rel, "4096\n", -1, 0444);
        ctx = ctx_on(root);
        assert_int_equal(amdsmi_ctx_read_processes(ctx, 0, &l), 0);
        assert_int_equal(l->n_processes, 1);
        assert_int_equal(l->processes[0].pid, self);
        assert_int_equal(l->processes[0].pasid, 32770);
        assert_int_equal(l->processes[0].uid, getuid());
        assert_int_equal(l->processes[0].n_nodes, 2);
        n = &l->processes[0].nodes[0];
        assert_int_equal(n->kfd_gpu_id, 48879);
        assert_int_equal(n->gpu_index, 0);
        assert_int_equal(n->partition, 0);
        assert_true(n->in_use);
        assert_int_equal(n->queues, 2);
        assert_true(n->vram_bytes == 1073741824);
        assert_true(n->sdma_usec == 1500);
        assert_true(n->evicted_ms == 12);
        assert_true(n->cu_occupancy == 38);
        assert_true(n->faults == 5 && n->page_in == 6 && n->page_out == 7);
        n = &l->processes[0].nodes[1];
        assert_int_equal(n->kfd_gpu_id, 999);
        assert_int_equal(n->gpu_index, -1);
        assert_int_equal(n->partition, -1);
        assert_true(n->in_use);
        l = amdsmi_process_list_free(l);

        /* brief: no details */
        assert_int_equal(amdsmi_ctx_read_processes(ctx, AMDSMI_PROCESS_BRIEF, &l), 0);
        assert_true(l->processes[0].nodes[0].vram_bytes == 1073741824);
        assert_true(l->processes[0].nodes[0].sdma_usec == AMDSMI_NA);
        assert_true(l->processes[0].nodes[0].cu_occupancy == AMDSMI_NA);
        l = amdsmi_process_list_free(l);
        assert_int_equal(amdsmi_ctx_read_processes(ctx, 0x80, &l), -EINVAL);

        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_not_in_use(void **state) {
        char *root = gpu_tree();
        struct amdsmi_process_list *l = NULL;
        struct amdsmi_ctx *ctx;
        const struct amdsmi_process_node *n;

        /* a ROCm process that holds the GPU without VRAM or queues: no details read */
        add_entry(root, (int) getpid(), "0\n", 0);
        ctx = ctx_on(root);
        assert_int_equal(amdsmi_ctx_read_processes(ctx, 0, &l), 0);
        assert_int_equal(l->n_processes, 1);
        n = &l->processes[0].nodes[0];
        assert_false(n->in_use);
        assert_true(n->vram_bytes == 0);
        assert_true(n->sdma_usec == AMDSMI_NA);
        assert_true(n->faults == AMDSMI_NA);
        amdsmi_process_list_free(l);
        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

static void test_bad_entries(void **state) {
        char *root = gpu_tree(), rel[128];
        struct amdsmi_process_list *l = NULL;
        struct amdsmi_ctx *ctx;
        int self = (int) getpid(), parent = (int) getppid(), gone = dead_pid();

        /* garbage VRAM and details: unknown values, the process still listed */
        add_entry(root, self, "lots\n", 1);
        snprintf(rel, sizeof(rel), PROC "%d/sdma_" GPU_ID, self);
        tree_file(root, rel, "", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/stats_" GPU_ID "/cu_occupancy", self);
        tree_file(root, rel, "-1\n", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/queues/7/gpuid", self);
        tree_file(root, rel, "x", -1, 0444); /* garbage queue: not counted */
        snprintf(rel, sizeof(rel), PROC "%d/pasid", self);
        tree_file(root, rel, "\n", -1, 0444);
        /* names that are no PIDs, files that are no nodes */
        tree_file(root, PROC "self/vram_" GPU_ID, "1\n", -1, 0444);
        tree_file(root, PROC "0/vram_" GPU_ID, "1\n", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/vram_", parent);
        tree_file(root, rel, "1\n", -1, 0444);
        snprintf(rel, sizeof(rel), PROC "%d/vram_12x", parent);
        tree_file(root, rel, "1\n", -1, 0444);
        /* an entry of a process that has exited: left out */
        add_entry(root, gone, "4096\n", 1);

        ctx = ctx_on(root);
        assert_int_equal(amdsmi_ctx_read_processes(ctx, 0, &l), 0);
        assert_int_equal(l->n_processes, 2);
        /* by PID */
        assert_true(l->processes[0].pid < l->processes[1].pid);
        for (size_t i = 0; i < l->n_processes; i++) {
                const struct amdsmi_process *p = &l->processes[i];

                assert_true(p->pid != gone);
                if (p->pid == parent) {
                        assert_int_equal(p->n_nodes, 0); /* no node it names is one */
                        continue;
                }
                assert_int_equal(p->pid, self);
                assert_int_equal(p->pasid, UINT32_MAX);
                assert_int_equal(p->n_nodes, 1);
                assert_true(p->nodes[0].vram_bytes == AMDSMI_NA);
                assert_int_equal(p->nodes[0].queues, 1);
                assert_true(p->nodes[0].in_use); /* by its queue */
                assert_true(p->nodes[0].sdma_usec == AMDSMI_NA);
                assert_true(p->nodes[0].cu_occupancy == AMDSMI_NA);
                assert_true(p->nodes[0].evicted_ms == 12);
        }
        amdsmi_process_list_free(l);
        amdsmi_ctx_unref(ctx);

        /* no proc/ directory at all (no KFD, or no process yet): an empty list */
        tree_free(root);
        root = gpu_tree();
        {
                char *p = tree_path(root, PROC);

                assert_int_equal(rmdir(p), 0);
                free(p);
        }
        ctx = ctx_on(root);
        assert_int_equal(amdsmi_ctx_read_processes(ctx, 0, &l), 0);
        assert_int_equal(l->n_processes, 0);
        amdsmi_process_list_free(l);
        amdsmi_ctx_unref(ctx);
        tree_free(root);
}

/* /proc as a stand-in tree: what a process's comm and cgroup may hold. */
static void test_procfs(void **state) {
        char *root = gpu_tree(), *proc = tree_new(), rel[64], longname[4097];
        struct amdsmi_process_list *l = NULL;
        struct amdsmi_ctx *ctx;
        int self = (int) getpid();
        const char *id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        char cg[256], big[1200];

        add_entry(root, self, "4096\n", 0);
        procfs_set_root(proc);
        ctx = ctx_on(root);

        /* control characters, as prctl(PR_SET_NAME) lets any process set them */
        snprintf(rel, sizeof(rel), "%d/comm", self);
        tree_file(proc, rel, "\x1b[31mred\x7f\n", -1, 0444);
        snprintf(rel, sizeof(rel), "%d/cgroup", self);
        snprintf(cg, sizeof(cg), "0::/system.slice/docker-%s.scope\n", id);
        tree_file(proc, rel, cg, -1, 0444);
        assert_int_equal(amdsmi_ctx_read_processes(ctx, 0, &l), 0);
        assert_int_equal(l->n_processes, 1);
        assert_string_equal(l->processes[0].comm, "\x1b[31mred\x7f");
        snprintf(cg, sizeof(cg), "/system.slice/docker-%s.scope", id);
        assert_string_equal(l->processes[0].cgroup, cg);
        l = amdsmi_process_list_free(l);

        /* 4 KiB of comm (no kernel's): cut; a v1 hierarchy only, and a line too long: "" */
        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        snprintf(rel, sizeof(rel), "%d/comm", self);
        tree_file(proc, rel, longname, -1, 0444);
        snprintf(rel, sizeof(rel), "%d/cgroup", self);
        tree_file(proc, rel, "12:cpu:/x\n", -1, 0444);
        assert_int_equal(amdsmi_ctx_read_processes(ctx, 0, &l), 0);
        assert_int_equal(strlen(l->processes[0].comm), sizeof(l->processes[0].comm) - 1);
        assert_string_equal(l->processes[0].cgroup, "");
        l = amdsmi_process_list_free(l);
        memset(big, 'b', sizeof(big) - 1);
        big[0] = '0', big[1] = ':', big[2] = ':', big[3] = '/';
        big[sizeof(big) - 1] = '\0';
        tree_file(proc, rel, big, -1, 0444);
        assert_int_equal(amdsmi_ctx_read_processes(ctx, 0, &l), 0);
        assert_string_equal(l->processes[0].cgroup, "");
        l = amdsmi_process_list_free(l);

        /* no comm, no cgroup, but the process runs (hidden from this reader): kept, empty,
         * and counted as not read whole */
        for (int i = 0; i < 2; i++) {
                char *f;

                snprintf(rel, sizeof(rel), "%d/%s", self, i ? "cgroup" : "comm");
                f = tree_path(proc, rel);
                assert_int_equal(unlink(f), 0);
                free(f);
        }
        assert_int_equal(amdsmi_ctx_read_processes(ctx, 0, &l), 0);
        assert_int_equal(l->n_processes, 1);
        assert_int_equal(l->n_denied, 1);
        assert_string_equal(l->processes[0].comm, "");
        l = amdsmi_process_list_free(l);

        procfs_set_root(NULL);
        amdsmi_ctx_unref(ctx);
        tree_free(proc);
        tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_entry),
                cmocka_unit_test(test_not_in_use),
                cmocka_unit_test(test_bad_entries),
                cmocka_unit_test(test_procfs),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
