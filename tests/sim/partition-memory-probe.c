/* SPDX-License-Identifier: MIT */
/*
 * Drives libamdsmi's memory-mode request, pending record, driver reload and gim-host partition
 * changes on the tree under AMDSMI_SYSFS_ROOT and prints one JSON object (checked by
 * test-sim-partition-memory.py and test-sim-partition-gim.py). Errors are negative errno
 * numbers; library warnings go to stderr as "warning: ...".
 *
 *   partition-memory-probe set-memory BDF NPSn [--dry-run] [--force]
 *   partition-memory-probe set-compute BDF MODE [--dry-run] [--force]
 *   partition-memory-probe reload BDF [--dry-run] [--timeout MS]
 *   partition-memory-probe left-unbound BDF     {"left_unbound": 1, 0 or -errno}
 *   partition-memory-probe pending            (every GPU)
 *   partition-memory-probe modes BDF
 *   partition-memory-probe plan BDF COMPUTE|- NPSn|-
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

static void log_fn(struct amdsmi_ctx *ctx, int priority, const char *format, va_list args,
                   void *userdata) {
        (void) ctx;
        (void) userdata;
        fprintf(stderr, "%s: ", priority <= AMDSMI_LOG_WARNING ? "warning" : "debug");
        vfprintf(stderr, format, args);
        fputc('\n', stderr);
}

/* A JSON string (the library's messages are ASCII; escape quotes and backslashes). */
static void print_str(const char *s) {
        putchar('"');
        for (; s && *s; s++) {
                if (*s == '"' || *s == '\\')
                        putchar('\\');
                if ((unsigned char) *s < 0x20)
                        printf("\\u%04x", (unsigned char) *s);
                else
                        putchar(*s);
        }
        putchar('"');
}

static void print_compute(enum amdsmi_compute_mode m) {
        const char *s = amdsmi_compute_mode_to_string(m);

        if (m == AMDSMI_COMPUTE_UNKNOWN || !s)
                printf("null");
        else
                print_str(s);
}

static void print_memory(enum amdsmi_memory_mode m) {
        const char *s = amdsmi_memory_mode_to_string(m);

        if (m == AMDSMI_MEMORY_UNKNOWN || !s)
                printf("null");
        else
                print_str(s);
}

static void print_notes(uint32_t notes) {
        printf("[");
        for (unsigned n = 0, first = 1; n < 32; n++)
                if (notes & (1u << n)) {
                        printf("%s", first ? "" : ", ");
                        print_str(amdsmi_plan_reason_to_string((enum amdsmi_plan_reason) n));
                        first = 0;
                }
        printf("]");
}

static void print_change(int r, const struct amdsmi_partition_change *c) {
        const char *stage = amdsmi_change_stage_to_string(c->stage);

        printf("{\"r\": %d, \"error\": %d, \"stage\": ", r, c->error);
        if (stage)
                print_str(stage);
        else
                printf("%d", (int) c->stage);
        printf(", \"changed\": %d, \"reload_required\": %d", c->changed, c->reload_required);
        printf(", \"compute_before\": ");
        print_compute(c->compute_before);
        printf(", \"compute_after\": ");
        print_compute(c->compute_after);
        printf(", \"memory_before\": ");
        print_memory(c->memory_before);
        printf(", \"memory_after\": ");
        print_memory(c->memory_after);
        printf(", \"memory_pending\": ");
        print_memory(c->memory_pending);
        printf(", \"partitions\": [%u, %u], \"vfs\": [%u, %u], \"n_blockers\": %u, "
               "\"blockers\": [",
               c->partitions_before, c->partitions_after, c->vfs_before, c->vfs_after,
               c->n_blockers);
        for (unsigned i = 0; i < c->n_blockers && i < AMDSMI_CHANGE_MAX_PROCESSES; i++) {
                printf("%s{\"pid\": %d, \"comm\": ", i ? ", " : "", c->blockers[i].pid);
                print_str(c->blockers[i].comm);
                printf(", \"bdf\": ");
                print_str(c->blockers[i].bdf);
                printf("}");
        }
        printf("], \"gpus\": [");
        for (unsigned i = 0; i < c->n_gpus && i < AMDSMI_PLAN_MAX_HIVE; i++) {
                const struct amdsmi_gpu_modes *g = &c->gpus[i];

                printf("%s{\"bdf\": ", i ? ", " : "");
                print_str(g->bdf);
                printf(", \"error\": %d, \"compute\": ", g->error);
                print_compute(g->compute);
                printf(", \"memory\": ");
                print_memory(g->memory);
                printf(", \"partitions\": %u}", g->partitions);
        }
        printf("], \"message\": ");
        print_str(c->message);
        printf("}\n");
}

static int parse_flags(int argc, char **argv, int from, uint64_t *flags, unsigned *timeout) {
        for (int i = from; i < argc; i++) {
                if (strcmp(argv[i], "--dry-run") == 0)
                        *flags |= AMDSMI_CHANGE_DRY_RUN;
                else if (strcmp(argv[i], "--force") == 0)
                        *flags |= AMDSMI_CHANGE_FORCE;
                else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
                        *timeout = (unsigned) strtoul(argv[++i], NULL, 10);
                else {
                        fprintf(stderr, "unknown option %s\n", argv[i]);
                        return -1;
                }
        }
        return 0;
}

static void print_mask_or_error(int r, uint32_t mask, int compute) {
        char buf[64];

        if (r < 0) {
                printf("%d", r);
                return;
        }
        if (compute)
                (void) amdsmi_compute_mode_mask_to_string(mask, buf, sizeof(buf));
        else
                (void) amdsmi_memory_mode_mask_to_string(mask, buf, sizeof(buf));
        print_str(buf);
}

static void print_modes(struct amdsmi_gpu *gpu) {
        enum amdsmi_compute_mode cm;
        enum amdsmi_memory_mode mm;
        uint32_t mask = 0;
        int r;

        printf("{\"compute\": ");
        r = amdsmi_gpu_read_compute_mode(gpu, &cm);
        if (r < 0)
                printf("%d", r);
        else
                print_compute(cm);
        printf(", \"memory\": ");
        r = amdsmi_gpu_read_memory_mode(gpu, &mm);
        if (r < 0)
                printf("%d", r);
        else
                print_memory(mm);
        printf(", \"supported\": ");
        r = amdsmi_gpu_get_supported_compute_modes(gpu, &mask);
        print_mask_or_error(r, mask, 1);
        printf(", \"available_compute\": ");
        r = amdsmi_gpu_read_available_compute_modes(gpu, &mask);
        print_mask_or_error(r, mask, 1);
        printf(", \"available_memory\": ");
        r = amdsmi_gpu_read_available_memory_modes(gpu, &mask);
        print_mask_or_error(r, mask, 0);
        printf(", \"memory_changeable\": %d", r);
        printf(", \"pending\": ");
        r = amdsmi_gpu_read_pending_memory_mode(gpu, &mm);
        if (r < 0)
                printf("%d", r);
        else
                print_memory(mm);
        printf("}\n");
}

static int print_plan(struct amdsmi_gpu *gpu, const char *cs, const char *ms) {
        struct amdsmi_partition_plan p = { .size = sizeof(p) };
        enum amdsmi_compute_mode c = AMDSMI_COMPUTE_UNKNOWN;
        enum amdsmi_memory_mode m = AMDSMI_MEMORY_UNKNOWN;
        char buf[64];
        int r;

        if ((strcmp(cs, "-") != 0 && amdsmi_compute_mode_from_string(cs, &c) < 0) ||
            (strcmp(ms, "-") != 0 && amdsmi_memory_mode_from_string(ms, &m) < 0)) {
                fprintf(stderr, "bad mode\n");
                return EXIT_FAILURE;
        }
        r = amdsmi_gpu_plan_partition(gpu, c, m, 0, &p);
        if (r < 0) {
                printf("{\"r\": %d}\n", r);
                return EXIT_SUCCESS;
        }
        printf("{\"r\": 0, \"reason\": ");
        print_str(amdsmi_plan_reason_to_string(p.reason));
        printf(", \"notes\": ");
        print_notes(p.notes);
        (void) amdsmi_compute_mode_mask_to_string(p.valid_compute, buf, sizeof(buf));
        printf(", \"valid_compute\": ");
        print_str(buf);
        printf(", \"compute\": [");
        print_compute(p.compute_before);
        printf(", ");
        print_compute(p.compute_after);
        printf("], \"memory\": [");
        print_memory(p.memory_before);
        printf(", ");
        print_memory(p.memory_after);
        printf("], \"partitions\": [%u, %u], \"vfs\": [%u, %u], \"affected\": [",
               p.partitions_before, p.partitions_after, p.vfs_before, p.vfs_after);
        for (unsigned i = 0; i < p.n_affected_bdfs; i++) {
                printf("%s", i ? ", " : "");
                print_str(p.affected_bdfs[i]);
        }
        printf("]}\n");
        return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
        struct amdsmi_partition_change c = { .size = sizeof(c) };
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_gpu *gpu = NULL;
        const char *cmd;
        uint64_t flags = 0;
        unsigned timeout = 0;
        int r, n, ret = EXIT_SUCCESS;

        if (argc < 2) {
                fprintf(stderr, "usage: partition-memory-probe COMMAND [BDF] [ARGS]\n");
                return 2;
        }
        cmd = argv[1];
        r = amdsmi_ctx_new(&ctx);
        if (r < 0) {
                fprintf(stderr, "amdsmi_ctx_new: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        amdsmi_ctx_set_log_fn(ctx, log_fn, NULL);
        n = amdsmi_ctx_enumerate(ctx);
        if (n < 0) {
                fprintf(stderr, "enumerate: %s\n", strerror(-n));
                amdsmi_ctx_unref(ctx);
                return EXIT_FAILURE;
        }

        if (strcmp(cmd, "pending") == 0) {
                printf("{");
                for (int i = 0; i < n; i++) {
                        struct amdsmi_gpu *g = amdsmi_ctx_get_gpu(ctx, (size_t) i);
                        enum amdsmi_memory_mode m;

                        printf("%s", i ? ", " : "");
                        print_str(amdsmi_gpu_get_bdf(g));
                        printf(": ");
                        r = amdsmi_gpu_read_pending_memory_mode(g, &m);
                        if (r < 0)
                                printf("%d", r);
                        else
                                print_memory(m);
                }
                printf("}\n");
                goto out;
        }

        if (argc < 3 || amdsmi_ctx_find_gpu(ctx, argv[2], &gpu) < 0) {
                fprintf(stderr, "no GPU %s\n", argc < 3 ? "(none given)" : argv[2]);
                ret = 2;
                goto out;
        }
        if (strcmp(cmd, "modes") == 0)
                print_modes(gpu);
        else if (strcmp(cmd, "plan") == 0 && argc == 5)
                ret = print_plan(gpu, argv[3], argv[4]);
        else if (strcmp(cmd, "set-memory") == 0 && argc >= 4) {
                enum amdsmi_memory_mode m;

                if (amdsmi_memory_mode_from_string(argv[3], &m) < 0 ||
                    parse_flags(argc, argv, 4, &flags, &timeout) < 0) {
                        ret = 2;
                        goto out;
                }
                r = amdsmi_gpu_set_memory_mode(gpu, m, flags, &c);
                print_change(r, &c);
        } else if (strcmp(cmd, "set-compute") == 0 && argc >= 4) {
                enum amdsmi_compute_mode m;

                if (amdsmi_compute_mode_from_string(argv[3], &m) < 0 ||
                    parse_flags(argc, argv, 4, &flags, &timeout) < 0) {
                        ret = 2;
                        goto out;
                }
                r = amdsmi_gpu_set_compute_mode(gpu, m, flags, timeout, &c);
                print_change(r, &c);
        } else if (strcmp(cmd, "reload") == 0) {
                if (parse_flags(argc, argv, 3, &flags, &timeout) < 0) {
                        ret = 2;
                        goto out;
                }
                r = amdsmi_gpu_reload_driver(gpu, flags, timeout, &c);
                print_change(r, &c);
        } else if (strcmp(cmd, "left-unbound") == 0) {
                r = amdsmi_gpu_is_left_unbound(gpu);
                printf("{\"left_unbound\": %d}\n", r);
        } else {
                fprintf(stderr, "unknown command or arguments: %s\n", cmd);
                ret = 2;
        }
out:
        amdsmi_ctx_unref(ctx);
        return ret;
}
