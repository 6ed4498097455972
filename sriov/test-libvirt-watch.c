/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's libvirt watcher end to end, in one process: its worker thread on test:///default
 * (whose state, unlike test:///FILE's, all connections of a process share), the domains it
 * finds posted to an sd-event loop, and a domain the test stops on its own connection
 * reported there as gone. The daemon's handlers are stand-ins that record what they get.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libvirt/virterror.h>
#include <systemd/sd-event.h>

#include "amdsmid.h"
#include "libvirt-watch.h"

#define TEST_UUID "6695eb01-f6a4-8304-79aa-97f2502e193f" /* the domain of test:///default */

static struct {
        int reconciled;
        size_t n_running;
        char running[4][64];
        int gone;
        char gone_uuid[64];
        char gone_name[64];
        char last_log[512];
} seen;

void log_full(int priority, const char *gpu, const char *change, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        vsnprintf(seen.last_log, sizeof(seen.last_log), format, ap);
        va_end(ap);
}

void vm_reconcile(struct daemon *d, const struct watch_domain *doms, size_t n) {
        seen.reconciled++;
        seen.n_running = n;
        for (size_t i = 0; i < n && i < 4; i++)
                snprintf(seen.running[i], sizeof(seen.running[i]), "%s %s", doms[i].uuid,
                         doms[i].name);
}

void vm_domain_gone(struct daemon *d, const char *uuid, const char *name) {
        seen.gone++;
        snprintf(seen.gone_uuid, sizeof(seen.gone_uuid), "%s", uuid);
        snprintf(seen.gone_name, sizeof(seen.gone_name), "%s", name);
}

static void run_until(sd_event *e, int *counter, int want) {
        for (int i = 0; i < 100 && *counter < want; i++)
                assert_true(sd_event_run(e, 100000) >= 0);
}

static void quiet(void *userdata, virErrorPtr error) {
}

static void test_watch(void **state) {
        struct daemon d = {};
        virConnectPtr conn;
        virDomainPtr dom;
        const char *uri, *error;
        bool connected;

        assert_int_equal(sd_event_new(&d.event), 0);
        assert_int_equal(libvirt_watch_start(&d, "test:///default"), 0);
        run_until(d.event, &seen.reconciled, 1);
        assert_int_equal(seen.reconciled, 1);
        assert_int_equal(seen.n_running, 1);
        assert_string_equal(seen.running[0], TEST_UUID " test");
        libvirt_watch_status(&uri, &connected, &error);
        assert_string_equal(uri, "test:///default");
        assert_true(connected);
        assert_null(error);

        /* the domain stops (another connection of this process): reported as gone */
        virSetErrorFunc(NULL, quiet);
        conn = virConnectOpen("test:///default");
        assert_non_null(conn);
        dom = virDomainLookupByName(conn, "test");
        assert_non_null(dom);
        assert_int_equal(virDomainDestroy(dom), 0);
        run_until(d.event, &seen.gone, 1);
        assert_int_equal(seen.gone, 1);
        assert_string_equal(seen.gone_uuid, TEST_UUID);
        assert_string_equal(seen.gone_name, "test");
        /* started again: nothing more is reported */
        assert_int_equal(virDomainCreate(dom), 0);
        for (int i = 0; i < 5; i++)
                assert_true(sd_event_run(d.event, 100000) >= 0);
        assert_int_equal(seen.gone, 1);
        virDomainFree(dom);
        virConnectClose(conn);

        libvirt_watch_stop();
        sd_event_unref(d.event);
}

/* A URI that cannot be opened: reported once as lost, the status says why. */
static void test_unreachable(void **state) {
        struct daemon d = {};
        const char *uri, *error;
        bool connected = true;

        assert_int_equal(sd_event_new(&d.event), 0);
        seen.last_log[0] = '\0';
        assert_int_equal(libvirt_watch_start(&d, "test:///nonexistent/amdsmi-node.xml"), 0);
        for (int i = 0; i < 100; i++) {
                assert_true(sd_event_run(d.event, 100000) >= 0);
                libvirt_watch_status(&uri, &connected, &error);
                if (error)
                        break;
        }
        assert_false(connected);
        assert_non_null(error);
        assert_non_null(strstr(seen.last_log, "cannot see the libvirt domains of "
                                              "test:///nonexistent/amdsmi-node.xml"));
        libvirt_watch_stop();
        sd_event_unref(d.event);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_watch),
                cmocka_unit_test(test_unreachable),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
