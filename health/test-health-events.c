/* SPDX-License-Identifier: MIT */
/*
 * KFD SMI events (spec health-and-control §7.1): every kind's line as the kernel's
 * KFD_EVENT_FMT_* formats print it, the old reset format, unknown ids, malformed lines; the
 * reader on a pipe standing in for the event fd (lines cut across reads, more lines than asked
 * for, an undecodable line kept as text, the node going away); and the subscription's errors
 * on a tree without a KFD device.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "health-private.h"
#include "private.h"
#include "tree-util.h"

#define DEV "devices/pci0000:00/0000:c1:00.0/"

static struct amdsmi_event parse_ok(const char *line) {
        struct amdsmi_event ev;

        memset(&ev, 0x5a, sizeof(ev));
        assert_int_equal(amdsmi_event_parse(line, strlen(line), &ev), 0);
        return ev;
}

static void test_parse_kinds(void **state) {
        struct amdsmi_event ev;

        ev = parse_ok("3 5 job hang on ring:gfx_0.0.0\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_GPU_PRE_RESET);
        assert_int_equal(ev.id, 3);
        assert_int_equal(ev.u.reset.seq, 5);
        assert_string_equal(ev.u.reset.cause, "job hang on ring:gfx_0.0.0");
        assert_string_equal(ev.text, "3 5 job hang on ring:gfx_0.0.0");
        assert_int_equal(ev.partition, -1);
        ev = parse_ok("4 1f RAS error");
        assert_int_equal(ev.kind, AMDSMI_EVENT_GPU_POST_RESET);
        assert_int_equal(ev.u.reset.seq, 0x1f);
        assert_string_equal(ev.u.reset.cause, "RAS error");
        ev = parse_ok("4 1f\n"); /* old kernels: the sequence number only */
        assert_int_equal(ev.u.reset.seq, 0x1f);
        assert_string_equal(ev.u.reset.cause, "");

        ev = parse_ok("2 2000:1f\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_THERMAL_THROTTLE);
        assert_true(ev.u.throttle.mask == 0x2000);
        assert_true(ev.u.throttle.counter == 0x1f);
        ev = parse_ok("2 ffffffffffffffff:0\n");
        assert_true(ev.u.throttle.mask == UINT64_MAX);

        ev = parse_ok("1 4d2:python3 train\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_VMFAULT);
        assert_int_equal(ev.u.vmfault.pid, 1234);
        assert_string_equal(ev.u.vmfault.task, "python3 train");

        ev = parse_ok("c 4d2 python3\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_PROCESS_START);
        assert_int_equal(ev.u.process.pid, 1234);
        assert_string_equal(ev.u.process.comm, "python3");
        ev = parse_ok("d 4d2 a:b c\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_PROCESS_END);
        assert_string_equal(ev.u.process.comm, "a:b c");

        ev = parse_ok("7 123456789 -1234 @7f00(1a2b) W\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_PAGE_FAULT_START);
        assert_true(ev.u.page_fault.ns == 123456789);
        assert_int_equal(ev.u.page_fault.pid, 1234);
        assert_true(ev.u.page_fault.address == 0x7f00);
        assert_int_equal(ev.u.page_fault.node, 0x1a2b);
        assert_int_equal(ev.u.page_fault.kind, 'W');
        ev = parse_ok("8 123456790 -1234 @7f00(1a2b) M\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_PAGE_FAULT_END);
        assert_int_equal(ev.u.page_fault.kind, 'M');

        ev = parse_ok("5 100 -42 @1000(200) 0->1a2b 0:1a2b 1\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_MIGRATE_START);
        assert_true(ev.u.migrate.ns == 100);
        assert_int_equal(ev.u.migrate.pid, 42);
        assert_true(ev.u.migrate.address == 0x1000);
        assert_true(ev.u.migrate.pages == 0x200);
        assert_int_equal(ev.u.migrate.from, 0);
        assert_int_equal(ev.u.migrate.to, 0x1a2b);
        assert_int_equal(ev.u.migrate.prefetch_loc, 0);
        assert_int_equal(ev.u.migrate.preferred_loc, 0x1a2b);
        assert_int_equal(ev.u.migrate.trigger, 1);
        ev = parse_ok("6 200 -42 @1000(200) 1a2b->0 3 -5\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_MIGRATE_END);
        assert_int_equal(ev.u.migrate.from, 0x1a2b);
        assert_int_equal(ev.u.migrate.trigger, 3);
        assert_int_equal(ev.u.migrate.result, -5);

        ev = parse_ok("9 300 -42 1a2b 2\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_QUEUE_EVICTION);
        assert_int_equal(ev.u.queue.node, 0x1a2b);
        assert_int_equal(ev.u.queue.trigger, 2);
        ev = parse_ok("a 400 -42 1a2b R\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_QUEUE_RESTORE);
        assert_int_equal(ev.u.queue.rescheduled, 'R');
        ev = parse_ok("a 400 -42 1a2b\n");
        assert_int_equal(ev.u.queue.rescheduled, 0);

        ev = parse_ok("b 500 -42 @1000(10) 1a2b 0\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_UNMAP_FROM_GPU);
        assert_true(ev.u.unmap.pages == 0x10);
        assert_int_equal(ev.u.unmap.node, 0x1a2b);
        assert_int_equal(ev.u.unmap.trigger, 0);

        /* an id this library does not know: kept with its id and text */
        ev = parse_ok("e 1 2 3\n");
        assert_int_equal(ev.kind, AMDSMI_EVENT_UNKNOWN);
        assert_int_equal(ev.id, 14);
        assert_string_equal(ev.text, "e 1 2 3");
        ev = parse_ok("40");
        assert_int_equal(ev.kind, AMDSMI_EVENT_UNKNOWN);
        assert_int_equal(ev.id, 64);
}

static void test_parse_bad(void **state) {
        static const char *const bad[] = {
                "",
                "\n",
                "zz 1",
                " 3 5", /* leading space */
                "3",    /* no payload */
                "3 ",   /* no sequence number */
                "3 zz RAS error",
                "2 2000", /* no counter */
                "2 2000:",
                "2 2000:1f extra",
                "2 10000000000000000:1", /* overflow */
                "1 4d2",                 /* no task */
                "c 4d2",
                "7 1 -2 @3(4) X", /* not R/W */
                "8 1 -2 @3(4) W", /* not M/U */
                "7 1 2 @3(4) R",  /* pid without its '-' */
                "7 1 -2 @3(4)",
                "5 100 -42 @1000(200) 0->1a2b 0:1a2b",
                "5 100 -42 @1000(200) 0-1a2b 0:1a2b 1",
                "6 200 -42 @1000(200) 1a2b->0 3",
                "9 300 -42 1a2b",
                "9 300 -42 1a2b x",
                "a 400 -42 1a2b X",
                "a 400 -42 1a2b R R",
                "b 500 -42 @1000(10) 1a2b",
                "b 500 -42 @1000 1a2b 0",
                "5 9223372036854775808 -42 @1000(200) 0->1a2b 0:1a2b 1", /* ns beyond %lld */
                "9 300 -2147483648 1a2b 2",                              /* pid beyond %d */
                "9 300 -42 1a2b 2147483648",                             /* trigger beyond %d */
                "100000000 1",                                           /* id beyond 32 bits */
                "3 5 two\nlines",
        };
        struct amdsmi_event ev = { .id = 99 };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = amdsmi_event_parse(bad[i], strlen(bad[i]), &ev);

                if (r != -EBADMSG)
                        fail_msg("\"%s\": %d", bad[i], r);
                assert_int_equal(ev.id, 99); /* untouched */
        }
        assert_int_equal(amdsmi_event_parse("3 5\0x", 5, &ev), -EBADMSG);
        assert_int_equal(amdsmi_event_parse(NULL, 0, &ev), -EBADMSG);
        assert_int_equal(ev.id, 99);
}

static void test_strings(void **state) {
        enum amdsmi_event_kind k = AMDSMI_EVENT_UNKNOWN;

        for (unsigned i = 1; i < _AMDSMI_EVENT_KIND_MAX; i++) {
                const char *s = amdsmi_event_kind_to_string((enum amdsmi_event_kind) i);

                assert_string_not_equal(s, "unknown");
                assert_int_equal(amdsmi_event_kind_from_string(s, &k), 0);
                assert_int_equal(k, i);
        }
        assert_string_equal(amdsmi_event_kind_to_string(AMDSMI_EVENT_VMFAULT), "vm_fault");
        assert_string_equal(amdsmi_event_kind_to_string(_AMDSMI_EVENT_KIND_MAX), "unknown");
        k = AMDSMI_EVENT_VMFAULT;
        assert_int_equal(amdsmi_event_kind_from_string("unknown", &k), -EINVAL);
        assert_int_equal(amdsmi_event_kind_from_string("VM_FAULT", &k), -EINVAL);
        assert_int_equal(k, AMDSMI_EVENT_VMFAULT);
        assert_true(AMDSMI_EVENT_MASK(AMDSMI_EVENT_VMFAULT) == 1);
        assert_true(AMDSMI_EVENT_MASK(AMDSMI_EVENT_PROCESS_END) == 1u << 12);
        assert_true(AMDSMI_EVENT_MASK_HEALTH == 0xf);
}

static void put(int fd, const char *s) {
        assert_int_equal(write(fd, s, strlen(s)), (ssize_t) strlen(s));
}

static void test_reader(void **state) {
        struct amdsmi_events *events = NULL;
        struct amdsmi_event ev[8];
        int p[2];

        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(events_new_from_fd(p[0], 0x1a2b, 3, &events), 0);
        assert_int_equal(amdsmi_events_get_fd(events), p[0]);
        assert_int_equal(amdsmi_events_get_kfd_gpu_id(events), 0x1a2b);

        /* nothing yet: 0, not blocking */
        assert_int_equal(amdsmi_events_read(events, ev, 8), 0);

        /* two lines and the start of a third */
        put(p[1], "3 5 RAS error\n2 1:2\n7 1 -");
        assert_int_equal(amdsmi_events_read(events, ev, 8), 2);
        assert_int_equal(ev[0].kind, AMDSMI_EVENT_GPU_PRE_RESET);
        assert_string_equal(ev[0].u.reset.cause, "RAS error");
        assert_int_equal(ev[0].kfd_gpu_id, 0x1a2b);
        assert_int_equal(ev[0].partition, 3);
        assert_int_equal(ev[1].kind, AMDSMI_EVENT_THERMAL_THROTTLE);
        assert_int_equal(amdsmi_events_read(events, ev, 8), 0);
        /* its end */
        put(p[1], "2 @3(4) R\n");
        assert_int_equal(amdsmi_events_read(events, ev, 8), 1);
        assert_int_equal(ev[0].kind, AMDSMI_EVENT_PAGE_FAULT_START);
        assert_int_equal(ev[0].u.page_fault.pid, 2);
        assert_int_equal(ev[0].partition, 3);

        /* more lines than asked for: the rest stays queued, in order */
        put(p[1], "c 1 a\nc 2 b\nd 1 a\n");
        assert_int_equal(amdsmi_events_read(events, ev, 1), 1);
        assert_int_equal(ev[0].u.process.pid, 1);
        assert_int_equal(amdsmi_events_read(events, ev, 1), 1);
        assert_int_equal(ev[0].u.process.pid, 2);
        assert_int_equal(amdsmi_events_read(events, ev, 8), 1);
        assert_int_equal(ev[0].kind, AMDSMI_EVENT_PROCESS_END);

        /* a line that cannot be decoded is kept, as text */
        put(p[1], "2 zz\n\n");
        assert_int_equal(amdsmi_events_read(events, ev, 8), 2);
        assert_int_equal(ev[0].kind, AMDSMI_EVENT_UNKNOWN);
        assert_int_equal(ev[0].id, 2);
        assert_string_equal(ev[0].text, "2 zz");
        assert_int_equal(ev[0].kfd_gpu_id, 0x1a2b);
        assert_int_equal(ev[1].kind, AMDSMI_EVENT_UNKNOWN);
        assert_int_equal(ev[1].id, 0);

        /* a "line" longer than any event: cut, returned, the reader goes on */
        {
                char big[5000];

                memset(big, 'x', sizeof(big) - 1);
                big[sizeof(big) - 1] = '\0';
                put(p[1], big);
                put(p[1], "\n4 9\n");
                assert_int_equal(amdsmi_events_read(events, ev, 8), 3);
                assert_int_equal(ev[0].kind, AMDSMI_EVENT_UNKNOWN);
                assert_int_equal(strlen(ev[0].text), AMDSMI_EVENT_TEXT_MAX - 1);
                assert_int_equal(ev[1].kind, AMDSMI_EVENT_UNKNOWN);
                assert_int_equal(ev[2].kind, AMDSMI_EVENT_GPU_POST_RESET);
                assert_int_equal(ev[2].u.reset.seq, 9);
        }

        /* the node went away */
        close(p[1]);
        assert_int_equal(amdsmi_events_read(events, ev, 8), -ENODEV);
        assert_null(amdsmi_events_close(events));
        assert_null(amdsmi_events_close(NULL));
}

static void test_subscribe_errors(void **state) {
        char *root = tree_new(), *dev;
        struct amdsmi_events *events = NULL;
        struct amdsmi_partition *part;
        struct amdsmi_ctx *ctx = NULL;
        struct amdsmi_gpu *gpu;

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
        dev = tree_path(root, "dev");
        assert_int_equal(mkdir(dev, 0755), 0);

        /* no device root: a snapshot tree never reaches a device */
        assert_int_equal(amdsmi_ctx_new_with_roots(root, NULL, &ctx), 0);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        gpu = amdsmi_ctx_get_gpu(ctx, 0);
        part = amdsmi_gpu_get_partition(gpu, 0);
        assert_non_null(part);
        assert_int_equal(amdsmi_partition_get_kfd_gpu_id(part), 6699);
        assert_int_equal(amdsmi_partition_open_events(part, AMDSMI_EVENT_MASK_HEALTH, &events),
                         -ENODEV);
        assert_int_equal(amdsmi_partition_open_events(part, 0, &events), -EINVAL);
        amdsmi_ctx_unref(ctx);

        ctx = NULL;
        assert_int_equal(amdsmi_ctx_new_with_roots(root, dev, &ctx), 0);
        assert_int_equal(amdsmi_ctx_enumerate(ctx), 1);
        part = amdsmi_gpu_get_partition(amdsmi_ctx_get_gpu(ctx, 0), 0);
        /* no kfd node */
        assert_int_equal(amdsmi_partition_open_events(part, AMDSMI_EVENT_MASK_HEALTH, &events),
                         -ENOENT);
        /* a kfd that answers no KFD ioctl (a file): not supported */
        tree_file(root, "dev/kfd", "", 0, 0666);
        assert_int_equal(amdsmi_partition_open_events(part, AMDSMI_EVENT_MASK_HEALTH, &events),
                         -EOPNOTSUPP);
        assert_null(events);
        /* the topology changed: the partition is stale */
        tree_file(root, "class/kfd/kfd/topology/generation_id", "2\n", -1, 0444);
        assert_int_equal(amdsmi_partition_open_events(part, AMDSMI_EVENT_MASK_HEALTH, &events),
                         -ESTALE);
        amdsmi_ctx_unref(ctx);
        free(dev);
        tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_kinds),      cmocka_unit_test(test_parse_bad),
                cmocka_unit_test(test_strings),          cmocka_unit_test(test_reader),
                cmocka_unit_test(test_subscribe_errors),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
