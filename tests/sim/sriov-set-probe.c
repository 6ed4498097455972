/* SPDX-License-Identifier: MIT */
/*
 * Drives libamdsmi's SR-IOV changes on the tree under AMDSMI_SYSFS_ROOT and prints what it saw
 * as one JSON object (test-sim-sriov-set.py checks it). Errors are negative errno numbers.
 *
 *   sriov-set-probe set PF N [--dry-run] [--force] [--autoprobe-off] [--flags X] [--timeout MS]
 *       amdsmi_gpu_set_num_vfs(): "return", "report" (every field of the change report), and
 *       "after": the PF's amdsmi_gpu_read_sriov() from a new context
 *   sriov-set-probe bind VF [--dry-run] [--force] [--flags X]
 *   sriov-set-probe release VF [--dry-run] [--force] [--flags X]
 *       amdsmi_vf_bind_vfio() / amdsmi_vf_release(): "return" and "report"
 *   sriov-set-probe read PF
 *       amdsmi_gpu_read_sriov(): "return" and "info"
 *   sriov-set-probe misc GPU
 *       a set report of a bad size (untouched), a bind report of a bad size, the stage names
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

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

static const char *bool_str(bool b) {
        return b ? "true" : "false";
}

static void print_change(const struct amdsmi_sriov_change *c) {
        printf("{\"stage\": ");
        print_string(amdsmi_sriov_stage_to_string(c->stage));
        printf(", \"error\": %d, \"config\": ", c->error);
        print_string(amdsmi_vf_config_to_string(c->config));
        printf(", \"total_vfs\": %u, \"vfs_before\": %u, \"vfs_after\": %u, \"changed\": %s, "
               "\"wrote_zero\": %s, \"autoprobe_off\": %s, \"elapsed_ms\": %u, "
               "\"n_blockers\": %u, \"blockers\": [",
               c->total_vfs, c->vfs_before, c->vfs_after, bool_str(c->changed),
               bool_str(c->wrote_zero), bool_str(c->autoprobe_off), c->elapsed_ms, c->n_blockers);
        for (unsigned i = 0; i < c->n_blockers && i < AMDSMI_SRIOV_MAX_VFS; i++) {
                const struct amdsmi_vf_blocker *b = &c->blockers[i];

                printf("%s{\"bdf\": ", i ? ", " : "");
                print_string(b->bdf);
                printf(", \"vfio\": %s, \"in_use\": %s, \"pid\": %d, \"comm\": ", bool_str(b->vfio),
                       bool_str(b->in_use), (int) b->pid);
                print_string(b->comm);
                printf("}");
        }
        printf("], \"message\": ");
        print_string(c->message);
        printf("}");
}

static void print_bind(const struct amdsmi_vf_bind_report *b) {
        printf("{\"stage\": ");
        print_string(amdsmi_sriov_stage_to_string(b->stage));
        printf(", \"error\": %d, \"driver_before\": ", b->error);
        print_string(b->driver_before);
        printf(", \"driver_after\": ");
        print_string(b->driver_after);
        printf(", \"override_before\": ");
        print_string(b->override_before);
        printf(", \"override_after\": ");
        print_string(b->override_after);
        printf(", \"changed\": %s, \"message\": ", bool_str(b->changed));
        print_string(b->message);
        printf("}");
}

static void print_info(const struct amdsmi_sriov_info *info) {
        printf("{\"capable\": %s, \"total_vfs\": %u, \"num_vfs\": %u, \"drivers_autoprobe\": %d, "
               "\"pf_driver\": ",
               bool_str(info->capable), info->total_vfs, info->num_vfs, info->drivers_autoprobe);
        print_string(info->pf_driver);
        printf(", \"config\": ");
        print_string(amdsmi_vf_config_to_string(info->config));
        printf(", \"gim_vf_num\": %d, \"vfs\": [", info->gim_vf_num);
        for (unsigned i = 0; i < info->n_vfs && i < AMDSMI_SRIOV_MAX_VFS; i++) {
                const struct amdsmi_vf_info *vf = &info->vfs[i];

                printf("%s{\"bdf\": ", i ? ", " : "");
                print_string(vf->bdf);
                printf(", \"index\": %u, \"driver\": ", vf->index);
                print_string(vf->driver);
                printf(", \"driver_override\": ");
                print_string(vf->driver_override);
                printf(", \"iommu_group\": %d, \"in_use\": %d}", vf->iommu_group, vf->in_use);
        }
        printf("]}");
}

/* A new context's view of the GPU at bdf: "return" and "info". */
static void print_read(const char *bdf) {
        struct amdsmi_sriov_info *info = calloc(1, sizeof(*info));
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_gpu *gpu = NULL;
        int r;

        if (!info) {
                printf("{\"return\": %d}", -ENOMEM);
                return;
        }
        info->size = sizeof(*info);
        r = amdsmi_ctx_new(&ctx);
        if (r >= 0)
                r = amdsmi_ctx_enumerate(ctx);
        if (r >= 0)
                r = amdsmi_ctx_find_gpu(ctx, bdf, &gpu);
        if (r >= 0)
                r = amdsmi_gpu_read_sriov(gpu, info);
        printf("{\"return\": %d, \"info\": ", r);
        if (r >= 0)
                print_info(info);
        else
                printf("null");
        printf("}");
        amdsmi_ctx_unref(ctx);
        free(info);
}

/* Common options; -1 on a usage error. */
static int parse_flags(int argc, char **argv, uint64_t *flags, unsigned *timeout) {
        for (int i = 0; i < argc; i++) {
                if (strcmp(argv[i], "--dry-run") == 0)
                        *flags |= AMDSMI_SRIOV_DRY_RUN;
                else if (strcmp(argv[i], "--force") == 0)
                        *flags |= AMDSMI_SRIOV_FORCE;
                else if (strcmp(argv[i], "--autoprobe-off") == 0)
                        *flags |= AMDSMI_SRIOV_AUTOPROBE_OFF;
                else if (strcmp(argv[i], "--flags") == 0 && i + 1 < argc)
                        *flags |= strtoull(argv[++i], NULL, 0);
                else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc && timeout)
                        *timeout = (unsigned) strtoul(argv[++i], NULL, 10);
                else
                        return -1;
        }
        return 0;
}

static int cmd_set(struct amdsmi_gpu *gpu, int argc, char **argv) {
        struct amdsmi_sriov_change *c = calloc(1, sizeof(*c));
        uint64_t flags = 0;
        unsigned timeout = 0, n;
        int r;

        if (!c || argc < 1)
                return -1;
        n = (unsigned) strtoul(argv[0], NULL, 0);
        if (parse_flags(argc - 1, argv + 1, &flags, &timeout) < 0)
                return -1;
        c->size = sizeof(*c);
        r = amdsmi_gpu_set_num_vfs(gpu, n, flags, timeout, c);
        printf("{\"return\": %d, \"report\": ", r);
        print_change(c);
        printf(", \"after\": ");
        print_read(amdsmi_gpu_get_bdf(gpu));
        printf("}\n");
        free(c);
        return 0;
}

static int cmd_bind(struct amdsmi_gpu *gpu, bool bind, int argc, char **argv) {
        struct amdsmi_vf_bind_report b = { .size = sizeof(b) };
        uint64_t flags = 0;
        int r;

        if (parse_flags(argc, argv, &flags, NULL) < 0)
                return -1;
        r = bind ? amdsmi_vf_bind_vfio(gpu, flags, &b) : amdsmi_vf_release(gpu, flags, &b);
        printf("{\"return\": %d, \"report\": ", r);
        print_bind(&b);
        printf("}\n");
        return 0;
}

static int cmd_misc(struct amdsmi_gpu *gpu) {
        struct amdsmi_sriov_change *c = calloc(1, sizeof(*c));
        struct amdsmi_vf_bind_report b;
        int r;

        if (!c)
                return -1;
        c->size = sizeof(*c) - 1;
        memset(c->message, 'x', sizeof(c->message) - 1);
        r = amdsmi_gpu_set_num_vfs(gpu, 1, 0, 0, c);
        printf("{\"set_bad_size\": %d, \"set_bad_size_untouched\": %s", r,
               bool_str(c->message[0] == 'x' && c->error == 0));
        memset(&b, 0, sizeof(b));
        b.size = sizeof(b) - 1;
        memset(b.message, 'x', sizeof(b.message) - 1);
        r = amdsmi_vf_bind_vfio(gpu, 0, &b);
        printf(", \"bind_bad_size\": %d, \"bind_bad_size_untouched\": %s", r,
               bool_str(b.message[0] == 'x' && b.error == 0));
        r = amdsmi_vf_release(gpu, 0, &b);
        printf(", \"release_bad_size\": %d, \"stages\": [", r);
        for (int s = 0; s <= _AMDSMI_SRIOV_STAGE_MAX; s++) {
                printf("%s", s ? ", " : "");
                print_string(amdsmi_sriov_stage_to_string((enum amdsmi_sriov_stage) s));
        }
        printf("]}\n");
        free(c);
        return 0;
}

int main(int argc, char **argv) {
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_gpu *gpu = NULL;
        int r;

        if (argc < 3) {
                fprintf(stderr, "usage: %s set|bind|release|read|misc BDF [ARGS...]\n", argv[0]);
                return 2;
        }
        if (strcmp(argv[1], "read") == 0) {
                print_read(argv[2]);
                printf("\n");
                return 0;
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
                r = cmd_set(gpu, argc - 3, argv + 3);
        else if (strcmp(argv[1], "bind") == 0)
                r = cmd_bind(gpu, true, argc - 3, argv + 3);
        else if (strcmp(argv[1], "release") == 0)
                r = cmd_bind(gpu, false, argc - 3, argv + 3);
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
