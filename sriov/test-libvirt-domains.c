/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's libvirt calls (libvirt-domains.c) against libvirt's test driver, in-process (that
 * driver's events reach only the connection that caused them): the running domains with
 * their XML and amdsmi metadata, and the lifecycle events of a domain that stops or goes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "libvirt-watch.h"

#define UUID_WEB "c7a5fdbd-cdaf-9455-926a-d65c16db1809"
#define UUID_DB "6695eb01-f6a4-8304-79aa-97f2502e193f"
#define UUID_OFF "0b1a2c3d-4e5f-4061-8293-a4b5c6d7e8f9"

static const char node_xml[] =
        "<node>\n"
        "  <domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>\n"
        "    <name>web1</name><uuid>" UUID_WEB "</uuid>\n"
        "    <metadata><amdsmi:gpu xmlns:amdsmi='urn:amdsmi:libvirt:1' power-cap-watts='450'/>"
        "</metadata>\n"
        "    <memory>1048576</memory><os><type>hvm</type></os>\n"
        "    <devices><hostdev mode='subsystem' type='pci' managed='yes'><source>"
        "<address domain='0x0000' bus='0x05' slot='0x02' function='0x0'/></source></hostdev>"
        "</devices>\n"
        "  </domain>\n"
        "  <domain type='test'>\n"
        "    <name>db2</name><uuid>" UUID_DB "</uuid>\n"
        "    <memory>1048576</memory><os><type>hvm</type></os>\n"
        "  </domain>\n"
        "  <domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>\n"
        "    <name>off</name><uuid>" UUID_OFF "</uuid>\n"
        "    <memory>1048576</memory><os><type>hvm</type></os>\n"
        "    <test:runstate>5</test:runstate>\n"
        "  </domain>\n"
        "</node>\n";

struct seen {
        char uuid[8][40];
        char name[8][64];
        int n;
};

static void on_stopped(const char *uuid, const char *name, void *userdata) {
        struct seen *s = userdata;

        if (s->n < 8) {
                snprintf(s->uuid[s->n], sizeof(s->uuid[0]), "%s", uuid);
                snprintf(s->name[s->n], sizeof(s->name[0]), "%s", name);
                s->n++;
        }
}

static void quiet(void *userdata, virErrorPtr error) {
}

static virConnectPtr open_node(char *path, size_t size) {
        char uri[512];
        FILE *f;
        int fd;

        snprintf(path, size, "/tmp/amdsmi-libvirt-test-XXXXXX");
        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        fputs(node_xml, f);
        fclose(f);
        snprintf(uri, sizeof(uri), "test://%s", path);
        return virConnectOpen(uri);
}

static void test_running_and_events(void **state) {
        struct watch_domain *doms = NULL;
        struct seen seen = {};
        char path[64], error[256] = "";
        virConnectPtr conn;
        virDomainPtr dom;
        int n, id;

        virSetErrorFunc(NULL, quiet);
        assert_int_equal(virEventRegisterDefaultImpl(), 0);
        conn = open_node(path, sizeof(path));
        assert_non_null(conn);

        /* the running ones, not the one shut off, with their live XML */
        n = watch_list_running(conn, &doms, error, sizeof(error));
        assert_int_equal(n, 2);
        {
                int web = strcmp(doms[0].name, "web1") == 0 ? 0 : 1;

                assert_string_equal(doms[web].name, "web1");
                assert_string_equal(doms[web].uuid, UUID_WEB);
                assert_non_null(doms[web].xml);
                assert_non_null(strstr(doms[web].xml, "urn:amdsmi:libvirt:1"));
                assert_non_null(strstr(doms[web].xml, "bus='0x05'"));
                assert_string_equal(doms[1 - web].name, "db2");
        }
        watch_domains_free(doms, (size_t) n);

        /* a domain that stops, one that is undefined: each reported once; starting reports
         * nothing */
        id = watch_subscribe(conn, on_stopped, &seen);
        assert_true(id >= 0);
        dom = virDomainLookupByName(conn, "web1");
        assert_non_null(dom);
        assert_int_equal(virDomainDestroy(dom), 0);
        assert_int_equal(virDomainCreate(dom), 0);
        virDomainFree(dom);
        dom = virDomainLookupByName(conn, "off");
        assert_non_null(dom);
        assert_int_equal(virDomainUndefine(dom), 0);
        virDomainFree(dom);
        for (int i = 0; i < 20 && seen.n < 2; i++)
                assert_int_equal(virEventRunDefaultImpl(), 0);
        assert_int_equal(seen.n, 2);
        assert_string_equal(seen.uuid[0], UUID_WEB);
        assert_string_equal(seen.name[0], "web1");
        assert_string_equal(seen.uuid[1], UUID_OFF);

        assert_int_equal(virConnectDomainEventDeregisterAny(conn, id), 0);
        virConnectClose(conn);
        unlink(path);

        /* a connection that cannot be opened: libvirt's message */
        conn = virConnectOpenReadOnly("test:///nonexistent/amdsmi.xml");
        assert_null(conn);
        assert_non_null(virGetLastErrorMessage());
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_running_and_events),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
