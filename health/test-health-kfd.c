/* SPDX-License-Identifier: MIT */
/*
 * The KFD SMI-event subscription through its real ioctl path, with tests/mock/mock-kfd.c
 * preloaded in place of the KFD: the version check, the gpu_id of the partition's node, the
 * mask written to the event fd, events read back with their node, a new mask, and the close.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <poll.h>

#include "private.h"
#include "tree-util.h"

#define DEV "devices/pci0000:00/0000:c1:00.0/"

static int (*peer_fn)(void);
static char *root, *dev;

static int setup(void **state) {
        char real[PATH_MAX];
        void *sym = dlsym(RTLD_DEFAULT, "mock_kfd_peer");

        if (!sym) {
                fprintf(stderr, "libmock-kfd.so is not preloaded\n");
                return -1;
        }
        memcpy(&peer_fn, &sym, sizeof(peer_fn));
        root = tree_new();
        tree_file(root, DEV "vendor", "0x1002\n", -1, 0444);
        tree_file(root, DEV "device", "0x74a1\n", -1, 0444);
        tree_file(root, DEV "class", "0x120000\n", -1, 0444);
        tree_mkdirs(root, "bus/pci/drivers/amdgpu");
        tree_link(root, "bus/pci/devices/0000:c1:00.0", "../../../devices/pci0000:00/0000:c1:00.0");
        tree_link(root, DEV "driver", "../../../bus/pci/drivers/amdgpu");
        tree_file(root, "class/kfd/kfd/topology/generation_id", "1\n", -1, 0444);
        tree_file(root, "class/kfd/kfd/topology/nodes/1/gpu_id", "6699\n", -1, 0444);
        tree_file(root, "class/kfd/kfd/topology/nodes/1/properties",
                  "simd_count 304\nsimd_per_cu 4\nlocation_id 49408\ndomain 0\nnum_xcc 2\n", -1,
                  0444);
        tree_file(root, "dev/kfd", "", 0, 0666);
        dev = tree_path(root, "dev");
        if (!realpath(dev, real))
                return -1;
        setenv("MOCK_DEV_ROOT", real, 1);
        setenv("MOCK_KFD_GPU_ID", "6699", 1);
        unsetenv("MOCK_KFD_MINOR");
        return 0;
}

static int teardown(void **state) {
        free(dev);
        tree_free(root);
        return 0;
}

static struct amdsmi_partition *partition(struct amdsmi_ctx **ret_ctx) {
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_partition *part;

        assert_int_equal(amdsmi_ctx_new_with_roots(root, dev, &ctx), 0);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        part = amdsmi_gpu_get_partition(amdsmi_ctx_get_gpu(ctx, 0), 0);
        assert_non_null(part);
        *ret_ctx = ctx;
        return part;
}

static void test_subscribe(void **state) {
        struct amdsmi_events *events = NULL;
        struct amdsmi_partition *part;
        struct amdsmi_event ev[4];
        struct amdsmi_ctx *ctx;
        struct pollfd pfd;
        uint64_t mask = 0;
        char c;

        part = partition(&ctx);
        assert_int_equal(amdsmi_partition_open_events(part, AMDSMI_EVENT_MASK_HEALTH, &events), 0);
        assert_int_equal(amdsmi_events_get_kfd_gpu_id(events), 6699);
        /* the mask went to the event fd, as 8 bytes */
        assert_int_equal(read(peer_fn(), &mask, sizeof(mask)), (ssize_t) sizeof(mask));
        assert_true(mask == AMDSMI_EVENT_MASK_HEALTH);

        /* nothing yet */
        assert_int_equal(amdsmi_events_read(events, ev, 4), 0);
        assert_int_equal(write(peer_fn(), "3 5 RAS error\n4 5 RAS", 21), 21);
        pfd = (struct pollfd){ .fd = amdsmi_events_get_fd(events), .events = POLLIN };
        assert_int_equal(poll(&pfd, 1, 5000), 1);
        assert_int_equal(amdsmi_events_read(events, ev, 4), 1);
        assert_int_equal(ev[0].kind, AMDSMI_EVENT_GPU_PRE_RESET);
        assert_int_equal(ev[0].kfd_gpu_id, 6699);
        assert_int_equal(ev[0].partition, 0);
        assert_string_equal(ev[0].u.reset.cause, "RAS error");
        assert_int_equal(write(peer_fn(), " error\n", 7), 7);
        assert_int_equal(poll(&pfd, 1, 5000), 1);
        assert_int_equal(amdsmi_events_read(events, ev, 4), 1);
        assert_int_equal(ev[0].kind, AMDSMI_EVENT_GPU_POST_RESET);

        /* a new mask */
        assert_int_equal(
                amdsmi_events_set_mask(events, AMDSMI_EVENT_MASK(AMDSMI_EVENT_PROCESS_START)), 0);
        assert_int_equal(read(peer_fn(), &mask, sizeof(mask)), (ssize_t) sizeof(mask));
        assert_true(mask == 1u << 11);
        assert_int_equal(amdsmi_events_set_mask(events, 0), -EINVAL);

        /* closed: the event fd is gone (the peer sees the end) */
        assert_null(amdsmi_events_close(events));
        assert_int_equal(read(peer_fn(), &c, 1), 0);
        amdsmi_ctx_unref(ctx);
}

static void test_refusals(void **state) {
        struct amdsmi_events *events = NULL;
        struct amdsmi_partition *part;
        struct amdsmi_ctx *ctx;

        part = partition(&ctx);
        /* a KFD older than 1.3 has no SMI events */
        setenv("MOCK_KFD_MINOR", "2", 1);
        assert_int_equal(amdsmi_partition_open_events(part, AMDSMI_EVENT_MASK_HEALTH, &events),
                         -EOPNOTSUPP);
        setenv("MOCK_KFD_MINOR", "3", 1);
        assert_int_equal(amdsmi_partition_open_events(part, AMDSMI_EVENT_MASK_HEALTH, &events), 0);
        events = amdsmi_events_close(events);
        unsetenv("MOCK_KFD_MINOR");
        /* the KFD does not know the node's gpu_id: the topology changed under the handle */
        setenv("MOCK_KFD_GPU_ID", "1234", 1);
        assert_int_equal(amdsmi_partition_open_events(part, AMDSMI_EVENT_MASK_HEALTH, &events),
                         -ESTALE);
        assert_null(events);
        setenv("MOCK_KFD_GPU_ID", "6699", 1);
        amdsmi_ctx_unref(ctx);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_subscribe),
                cmocka_unit_test(test_refusals),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
