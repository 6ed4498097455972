/* SPDX-License-Identifier: MIT */
/*
 * Prints the partition read API and a few plans of every GPU under AMDSMI_SYSFS_ROOT as one
 * JSON object (test-sim-partition-lib.py checks it). Unknown numbers are null, errors are
 * negative errno numbers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

static void print_num(uint64_t v) {
        if (v == AMDSMI_NA)
                printf("null");
        else
                printf("%" PRIu64, v);
}

static void print_share(const char *name, const struct amdsmi_engine_share *s) {
        printf("\"%s\": [", name);
        print_num(s->num_inst);
        printf(", ");
        print_num(s->num_shared);
        printf("]");
}

static void print_plan(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode c,
                       enum amdsmi_memory_mode m) {
        struct amdsmi_partition_plan p = { .size = sizeof(p) };
        char buf[64];
        int r;

        printf("\"%s/%s\": ", amdsmi_compute_mode_to_string(c), amdsmi_memory_mode_to_string(m));
        r = amdsmi_gpu_plan_partition(gpu, c, m, 0, &p);
        if (r < 0) {
                printf("%d", r);
                return;
        }
        printf("{\"reason\": \"%s\", \"notes\": [", amdsmi_plan_reason_to_string(p.reason));
        for (unsigned n = 0, first = 1; n < 32; n++)
                if (p.notes & (1u << n)) {
                        printf("%s\"%s\"", first ? "" : ", ",
                               amdsmi_plan_reason_to_string((enum amdsmi_plan_reason) n));
                        first = 0;
                }
        (void) amdsmi_compute_mode_mask_to_string(p.valid_compute, buf, sizeof(buf));
        printf("], \"rules\": \"%s\", \"valid_compute\": \"%s\", \"partitions\": [%u, %u], "
               "\"memory_per_partition\": ",
               amdsmi_partition_rules_to_string(p.rules), buf, p.partitions_before,
               p.partitions_after);
        print_num(p.memory_per_partition_after);
        printf(", \"invalidated_render_minors\": [");
        for (unsigned i = 0; i < p.n_invalidated_render_minors; i++)
                printf("%s%d", i ? ", " : "", p.invalidated_render_minors[i]);
        printf("], \"affected\": [");
        for (unsigned i = 0; i < p.n_affected_bdfs; i++)
                printf("%s\"%s\"", i ? ", " : "", p.affected_bdfs[i]);
        printf("]}");
}

int main(void) {
        struct amdsmi_ctx *ctx = NULL;
        int r, n;

        r = amdsmi_ctx_new(&ctx);
        if (r < 0) {
                fprintf(stderr, "amdsmi_ctx_new: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        n = amdsmi_ctx_enumerate(ctx);
        if (n < 0) {
                fprintf(stderr, "enumerate: %s\n", strerror(-n));
                return EXIT_FAILURE;
        }
        printf("{\"gpus\": [");
        for (int i = 0; i < n; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(ctx, (size_t) i);
                struct amdsmi_engine_shares sh;
                uint32_t mask;
                char buf[64];

                printf("%s{\"bdf\": \"%s\", \"supported\": ", i ? ", " : "",
                       amdsmi_gpu_get_bdf(gpu));
                r = amdsmi_gpu_get_supported_compute_modes(gpu, &mask);
                if (r < 0)
                        printf("%d", r);
                else {
                        (void) amdsmi_compute_mode_mask_to_string(mask, buf, sizeof(buf));
                        printf("\"%s\"", buf);
                }
                printf(", \"available_compute\": ");
                r = amdsmi_gpu_read_available_compute_modes(gpu, &mask);
                if (r < 0)
                        printf("%d", r);
                else {
                        (void) amdsmi_compute_mode_mask_to_string(mask, buf, sizeof(buf));
                        printf("\"%s\"", buf);
                }
                printf(", \"available_memory\": ");
                r = amdsmi_gpu_read_available_memory_modes(gpu, &mask);
                if (r < 0)
                        printf("%d", r);
                else {
                        (void) amdsmi_memory_mode_mask_to_string(mask, buf, sizeof(buf));
                        printf("\"%s\", \"memory_changeable\": %s", buf, r ? "true" : "false");
                }
                printf(", \"shares\": ");
                r = amdsmi_gpu_read_engine_shares(gpu, &sh);
                if (r < 0)
                        printf("%d", r);
                else {
                        printf("{\"mode\": \"%s\", ", amdsmi_compute_mode_to_string(sh.mode));
                        print_share("xcc", &sh.xcc);
                        printf(", ");
                        print_share("dma", &sh.dma);
                        printf(", ");
                        print_share("dec", &sh.dec);
                        printf(", ");
                        print_share("jpeg", &sh.jpeg);
                        printf("}");
                }
                printf(", \"plans\": {");
                print_plan(gpu, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_UNKNOWN);
                printf(", ");
                print_plan(gpu, AMDSMI_COMPUTE_SPX, AMDSMI_MEMORY_UNKNOWN);
                printf(", ");
                print_plan(gpu, AMDSMI_COMPUTE_TPX, AMDSMI_MEMORY_UNKNOWN);
                printf(", ");
                print_plan(gpu, AMDSMI_COMPUTE_DPX, AMDSMI_MEMORY_NPS2);
                printf(", ");
                print_plan(gpu, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS2);
                printf(", ");
                print_plan(gpu, AMDSMI_COMPUTE_CPX, AMDSMI_MEMORY_NPS4);
                printf("}}");
        }
        printf("]}\n");
        amdsmi_ctx_unref(ctx);
        return EXIT_SUCCESS;
}
