/* SPDX-License-Identifier: MIT */
/*
 * Drives libamdsmi's compute switch on the tree under AMDSMI_SYSFS_ROOT and prints what it
 * saw as one JSON object (test-sim-partition-set.py checks it). Errors are negative errno
 * numbers, unknown numbers null.
 *
 *   partition-set-probe set BDF MODE [--dry-run] [--force] [--timeout MS] [--repeat]
 *       the change report, the modes and partition counts of every GPU from the same context
 *       afterwards, and the handles taken before the switch (every GPU's partitions, memory
 *       not read yet): amdsmi_partition_check() and amdsmi_partition_get_memory_bytes() of
 *       each afterwards. --repeat switches back to the mode before with a second call.
 *   partition-set-probe kfd BDF [MAX]
 *       amdsmi_gpu_list_kfd_processes()
 *   partition-set-probe misc BDF
 *       a report of a bad size, a bad mode, unknown flags, the stage names
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

struct held {
        struct amdsmi_partition *part;
        char bdf[16];
        unsigned index;
        unsigned kfd_node;
        uint32_t gpu_id;
};

static void print_string(const char *s) {
        putchar('"');
        for (; *s; s++) {
                unsigned char ch = (unsigned char) *s;
                if (ch == '"' || ch == '\\')
                        printf("\\%c", ch);
                else if (ch < 0x20)
                        printf("\\u%04x", ch);
                else
                        putchar(ch);
        }
        putchar('"');
}

static void print_num(uint64_t v) {
        if (v == AMDSMI_NA)
                printf("null");
        else
                printf("%" PRIu64, v);
}

static void print_process(const struct amdsmi_kfd_process *p) {
        printf("{\"pid\": %d, \"comm\": ", p->pid);
        print_string(p->comm);
        printf(", \"bdf\": ");
        print_string(p->bdf);
        printf(", \"vram_bytes\": ");
        print_num(p->vram_bytes);
        printf("}");
}

static void print_change(int r, const struct amdsmi_partition_change *c) {
        const char *stage = amdsmi_change_stage_to_string(c->stage);

        printf("{\"return\": %d, \"error\": %d, \"stage\": ", r, c->error);
        print_string(stage ? stage : "?");
        printf(", \"rollback_error\": %d, \"rolled_back\": %d, \"kfd_lost\": %d, "
               "\"changed\": %d, \"reload_required\": %d, ",
               c->rollback_error, c->rolled_back, c->kfd_lost, c->changed, c->reload_required);
        printf("\"compute_before\": \"%s\", \"compute_after\": \"%s\", ",
               amdsmi_compute_mode_to_string(c->compute_before),
               amdsmi_compute_mode_to_string(c->compute_after));
        printf("\"memory_before\": \"%s\", \"memory_after\": \"%s\", \"memory_pending\": \"%s\", ",
               amdsmi_memory_mode_to_string(c->memory_before),
               amdsmi_memory_mode_to_string(c->memory_after),
               amdsmi_memory_mode_to_string(c->memory_pending));
        printf("\"partitions_before\": %u, \"partitions_after\": %u, \"vfs_before\": %u, "
               "\"vfs_after\": %u, ",
               c->partitions_before, c->partitions_after, c->vfs_before, c->vfs_after);
        printf("\"generation_before\": %" PRIu64 ", \"generation_after\": %" PRIu64
               ", \"elapsed_ms\": %u, \"n_blockers\": %u, \"blockers\": [",
               c->generation_before, c->generation_after, c->elapsed_ms, c->n_blockers);
        for (unsigned i = 0; i < c->n_blockers && i < AMDSMI_CHANGE_MAX_PROCESSES; i++) {
                if (i)
                        printf(", ");
                print_process(&c->blockers[i]);
        }
        printf("], \"message\": ");
        print_string(c->message);
        printf("}");
}

static int parse_mode(const char *s, enum amdsmi_compute_mode *ret) {
        if (amdsmi_compute_mode_from_string(s, ret) == 0)
                return 0;
        *ret = (enum amdsmi_compute_mode) atoi(s); /* raw numbers for bad-mode tests */
        return 0;
}

static void print_gpus(struct amdsmi_ctx *ctx) {
        printf("\"gpus\": {");
        for (size_t i = 0; i < amdsmi_ctx_get_gpu_count(ctx); i++) {
                struct amdsmi_gpu *g = amdsmi_ctx_get_gpu(ctx, i);
                enum amdsmi_compute_mode m;
                int r = amdsmi_gpu_read_compute_mode(g, &m);

                printf("%s\"%s\": {\"mode\": ", i ? ", " : "", amdsmi_gpu_get_bdf(g));
                if (r < 0)
                        printf("%d", r);
                else
                        printf("\"%s\"", amdsmi_compute_mode_to_string(m));
                printf(", \"partitions\": %zu, \"gpu_ids\": [", amdsmi_gpu_get_partition_count(g));
                for (size_t k = 0; k < amdsmi_gpu_get_partition_count(g); k++) {
                        struct amdsmi_partition *p = amdsmi_gpu_get_partition(g, k);
                        printf("%s%" PRIu32, k ? ", " : "", amdsmi_partition_get_kfd_gpu_id(p));
                }
                printf("], \"memory\": [");
                for (size_t k = 0; k < amdsmi_gpu_get_partition_count(g); k++) {
                        struct amdsmi_partition *p = amdsmi_gpu_get_partition(g, k);
                        printf("%s", k ? ", " : "");
                        print_num(amdsmi_partition_get_memory_bytes(p));
                }
                printf("], \"check\": [");
                for (size_t k = 0; k < amdsmi_gpu_get_partition_count(g); k++)
                        printf("%s%d", k ? ", " : "",
                               amdsmi_partition_check(amdsmi_gpu_get_partition(g, k)));
                printf("]}");
        }
        printf("}");
}

static int cmd_set(struct amdsmi_ctx *ctx, struct amdsmi_gpu *gpu, int argc, char **argv) {
        struct amdsmi_partition_change c = { .size = sizeof(c) };
        enum amdsmi_compute_mode mode;
        uint64_t flags = 0;
        unsigned timeout = 0;
        int repeat = 0, r;
        struct held *held = NULL;
        size_t n_held = 0;

        if (argc < 1)
                return -1;
        parse_mode(argv[0], &mode);
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--dry-run") == 0)
                        flags |= AMDSMI_CHANGE_DRY_RUN;
                else if (strcmp(argv[i], "--force") == 0)
                        flags |= AMDSMI_CHANGE_FORCE;
                else if (strcmp(argv[i], "--flags") == 0 && i + 1 < argc)
                        flags |= strtoull(argv[++i], NULL, 0);
                else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
                        timeout = (unsigned) strtoul(argv[++i], NULL, 10);
                else if (strcmp(argv[i], "--repeat") == 0)
                        repeat = 1;
                else
                        return -1;
        }

        /* handles of every partition, memory not read: they must not see the new nodes */
        for (size_t i = 0; i < amdsmi_ctx_get_gpu_count(ctx); i++) {
                struct amdsmi_gpu *g = amdsmi_ctx_get_gpu(ctx, i);
                size_t n = amdsmi_gpu_get_partition_count(g);

                held = realloc(held, (n_held + n) * sizeof(*held));
                if (!held && n_held + n > 0)
                        return -1;
                for (size_t k = 0; k < n; k++) {
                        struct amdsmi_partition *p = amdsmi_gpu_get_partition(g, k);
                        struct held *h = &held[n_held++];

                        h->part = p;
                        snprintf(h->bdf, sizeof(h->bdf), "%s", amdsmi_gpu_get_bdf(g));
                        h->index = amdsmi_partition_get_index(p);
                        h->kfd_node = amdsmi_partition_get_kfd_node(p);
                        h->gpu_id = amdsmi_partition_get_kfd_gpu_id(p);
                }
        }

        r = amdsmi_gpu_set_compute_mode(gpu, mode, flags, timeout, &c);
        printf("{\"change\": ");
        print_change(r, &c);
        if (repeat) {
                struct amdsmi_partition_change c2 = { .size = sizeof(c2) };
                int r2 = amdsmi_gpu_set_compute_mode(gpu, c.compute_before, flags, timeout, &c2);

                printf(", \"back\": ");
                print_change(r2, &c2);
        }
        printf(", \"old\": [");
        for (size_t i = 0; i < n_held; i++) {
                struct held *h = &held[i];

                printf("%s{\"bdf\": \"%s\", \"index\": %u, \"kfd_node\": %u, \"gpu_id\": %" PRIu32
                       ", \"check\": %d, \"memory_bytes\": ",
                       i ? ", " : "", h->bdf, h->index, h->kfd_node, h->gpu_id,
                       amdsmi_partition_check(h->part));
                print_num(amdsmi_partition_get_memory_bytes(h->part));
                printf(", \"still_kfd_node\": %u}", amdsmi_partition_get_kfd_node(h->part));
        }
        printf("], ");
        print_gpus(ctx);
        printf("}\n");
        free(held);
        return 0;
}

static int cmd_kfd(struct amdsmi_gpu *gpu, int argc, char **argv) {
        struct amdsmi_kfd_process procs[64];
        size_t max = argc > 0 ? (size_t) strtoul(argv[0], NULL, 10) : 64;
        int n;

        if (max > 64)
                max = 64;
        n = amdsmi_gpu_list_kfd_processes(gpu, max ? procs : NULL, max);
        printf("{\"count\": %d, \"processes\": [", n);
        for (int i = 0; i < n && (size_t) i < max; i++) {
                if (i)
                        printf(", ");
                print_process(&procs[i]);
        }
        printf("]}\n");
        return 0;
}

static int cmd_misc(struct amdsmi_gpu *gpu) {
        struct amdsmi_partition_change c = { .size = sizeof(c) - 1 };
        int r;

        memset(c.message, 'x', sizeof(c.message) - 1);
        r = amdsmi_gpu_set_compute_mode(gpu, AMDSMI_COMPUTE_CPX, 0, 0, &c);
        printf("{\"bad_size\": %d, \"bad_size_untouched\": %s", r,
               c.message[0] == 'x' && c.error == 0 ? "true" : "false");
        c = (struct amdsmi_partition_change){ .size = sizeof(c) };
        r = amdsmi_gpu_set_compute_mode(gpu, AMDSMI_COMPUTE_UNKNOWN, 0, 0, &c);
        printf(", \"bad_mode\": ");
        print_change(r, &c);
        c = (struct amdsmi_partition_change){ .size = sizeof(c) };
        r = amdsmi_gpu_set_compute_mode(gpu, AMDSMI_COMPUTE_CPX, UINT64_C(1) << 40, 0, &c);
        printf(", \"bad_flags\": ");
        print_change(r, &c);
        printf(", \"stages\": [");
        for (int s = 0; s <= 7; s++) {
                const char *name = amdsmi_change_stage_to_string((enum amdsmi_change_stage) s);
                printf("%s", s ? ", " : "");
                if (name)
                        print_string(name);
                else
                        printf("null");
        }
        printf("]}\n");
        return 0;
}

int main(int argc, char **argv) {
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_gpu *gpu = NULL;
        int r;

        if (argc < 3) {
                fprintf(stderr, "usage: %s set|kfd|misc BDF [ARGS...]\n", argv[0]);
                return 2;
        }
        r = amdsmi_ctx_new(&ctx);
        if (r < 0) {
                fprintf(stderr, "amdsmi_ctx_new: %s\n", strerror(-r));
                return 1;
        }
        r = amdsmi_ctx_enumerate(ctx);
        if (r < 0) {
                fprintf(stderr, "enumerate: %s\n", strerror(-r));
                return 1;
        }
        r = amdsmi_ctx_find_gpu(ctx, argv[2], &gpu);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", argv[2], strerror(-r));
                return 1;
        }
        if (strcmp(argv[1], "set") == 0)
                r = cmd_set(ctx, gpu, argc - 3, argv + 3);
        else if (strcmp(argv[1], "kfd") == 0)
                r = cmd_kfd(gpu, argc - 3, argv + 3);
        else if (strcmp(argv[1], "misc") == 0)
                r = cmd_misc(gpu);
        else
                r = -1;
        if (r < 0) {
                fprintf(stderr, "usage error\n");
                return 2;
        }
        amdsmi_ctx_unref(ctx);
        return 0;
}
