/* SPDX-License-Identifier: MIT */
/* domain-xml.c: libvirt-shaped domains (two VFs, managed or not, our metadata with and without
 * per-VF caps, any prefix, the UUID forms), every refusal with its errno and message, hostile
 * documents (billion laughs, an external entity, UTF-7, 5 MB), and that nothing is printed. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <libxml/xmlerror.h>

#include "domain-xml.h"
#include "macro.h"

#define UUID "6f1d2c3e-8a4b-4c5d-9e0f-1a2b3c4d5e6f"

/* A domain as virsh dumpxml prints it for a VM with two VFs of an MI300X, a USB device and an
 * mdev; @metadata goes inside <metadata>, @more_devices at the end of <devices>. */
static char *domain_xml(const char *metadata, const char *more_devices) {
        char *s = NULL;

        assert_true(asprintf(&s,
                             "<domain type='kvm' id='7'>\n"
                             "  <name>train-07</name>\n"
                             "  <uuid>" UUID "</uuid>\n"
                             "  <metadata>\n"
                             "    <libosinfo:libosinfo "
                             "xmlns:libosinfo=\"http://libosinfo.org/xmlns/libvirt/domain/1.0\">\n"
                             "      <libosinfo:os id=\"http://ubuntu.com/ubuntu/22.04\"/>\n"
                             "    </libosinfo:libosinfo>\n"
                             "%s"
                             "  </metadata>\n"
                             "  <memory unit='KiB'>67108864</memory>\n"
                             "  <vcpu placement='static'>16</vcpu>\n"
                             "  <os>\n"
                             "    <type arch='x86_64' machine='pc-q35-7.2'>hvm</type>\n"
                             "  </os>\n"
                             "  <devices>\n"
                             "    <emulator>/usr/bin/qemu-system-x86_64</emulator>\n"
                             "    <disk type='file' device='disk'>\n"
                             "      <driver name='qemu' type='qcow2'/>\n"
                             "      <source file='/var/lib/libvirt/images/train-07.qcow2'/>\n"
                             "      <target dev='vda' bus='virtio'/>\n"
                             "      <address type='pci' domain='0x0000' bus='0x04' "
                             "slot='0x00' function='0x0'/>\n"
                             "    </disk>\n"
                             "    <hostdev mode='subsystem' type='pci' managed='yes'>\n"
                             "      <driver name='vfio'/>\n"
                             "      <source>\n"
                             "        <address domain='0x0000' bus='0x05' slot='0x02' "
                             "function='0x0'/>\n"
                             "      </source>\n"
                             "      <alias name='hostdev0'/>\n"
                             "      <address type='pci' domain='0x0000' bus='0x07' "
                             "slot='0x00' function='0x0'/>\n"
                             "    </hostdev>\n"
                             "    <hostdev mode='subsystem' type='usb' managed='yes'>\n"
                             "      <source>\n"
                             "        <vendor id='0x046d'/>\n"
                             "        <product id='0xc52b'/>\n"
                             "      </source>\n"
                             "    </hostdev>\n"
                             "    <hostdev mode='subsystem' type='pci' managed='no'>\n"
                             "      <driver name='vfio'/>\n"
                             "      <source>\n"
                             "        <address domain='0x0000' bus='0xC1' slot='0x02' "
                             "function='0x1'/>\n"
                             "      </source>\n"
                             "      <address type='pci' domain='0x0000' bus='0x08' "
                             "slot='0x00' function='0x0'/>\n"
                             "    </hostdev>\n"
                             "    <hostdev mode='subsystem' type='mdev' model='vfio-pci'>\n"
                             "      <source>\n"
                             "        <address uuid='c2177883-f1bb-47f0-914d-32a22e3a8804'/>\n"
                             "      </source>\n"
                             "    </hostdev>\n"
                             "    <hostdev mode='capabilities' type='net'>\n"
                             "      <source><interface>eth0</interface></source>\n"
                             "    </hostdev>\n"
                             "%s"
                             "  </devices>\n"
                             "</domain>\n",
                             metadata, more_devices) > 0);
        return s;
}

/* A minimal domain: @inner inside <domain>. */
static char *small_xml(const char *inner) {
        char *s = NULL;

        assert_true(asprintf(&s, "<domain type='kvm'>%s</domain>", inner) > 0);
        return s;
}

static char *domain_with_devices(const char *devices) {
        char *s = NULL;

        assert_true(asprintf(&s,
                             "<domain type='kvm'>\n"
                             "  <name>vm</name>\n"
                             "  <uuid>" UUID "</uuid>\n"
                             "  <devices>\n%s  </devices>\n"
                             "</domain>\n",
                             devices) > 0);
        return s;
}

static char *pci_hostdev(const char *managed, const char *address) {
        char *s = NULL;

        assert_true(asprintf(&s,
                             "    <hostdev mode='subsystem' type='pci'%s>\n"
                             "      <source>\n"
                             "        %s\n"
                             "      </source>\n"
                             "    </hostdev>\n",
                             managed, address) > 0);
        return s;
}

static char *domain_with_address(const char *address) {
        _cleanup_free_ char *h = pci_hostdev("", address);

        return domain_with_devices(h);
}

static int parse_n(const char *xml, size_t len, struct vm_domain **ret, char *err, size_t size) {
        return vm_domain_parse(xml, len, ret, err, size);
}

static int parse(const char *xml, struct vm_domain **ret, char *err) {
        return parse_n(xml, strlen(xml), ret, err, 256);
}

/* Fails with @errno_expected and an error line containing @needle; *ret untouched. */
static void expect_fail_n(const char *xml, size_t len, int errno_expected, const char *needle) {
        struct vm_domain sentinel, *d = &sentinel;
        char err[256];
        int r;

        memset(err, 'x', sizeof(err));
        r = parse_n(xml, len, &d, err, sizeof(err));
        if (r != errno_expected || !strstr(err, needle) || strncmp(err, "domain XML: ", 12) != 0)
                print_error("expected %d '%s', got %d '%s'\n", errno_expected, needle, r, err);
        assert_int_equal(r, errno_expected);
        assert_ptr_equal(d, &sentinel);
        assert_non_null(strstr(err, needle));
        assert_true(strncmp(err, "domain XML: ", 12) == 0);
        assert_null(strchr(err, '\n'));
        assert_true(strlen(err) < sizeof(err));
}

static void expect_fail(const char *xml, int errno_expected, const char *needle) {
        expect_fail_n(xml, strlen(xml), errno_expected, needle);
}

/* Parses @xml, which must succeed. */
static struct vm_domain *expect_ok(const char *xml) {
        struct vm_domain *d = NULL;
        char err[256] = "x";
        int r = parse(xml, &d, err);

        if (r != 0)
                print_error("parse failed: %d %s\n", r, err);
        assert_int_equal(r, 0);
        assert_non_null(d);
        assert_string_equal(err, "");
        return d;
}

/* Metadata around @inner: <PREFIX:gpu xmlns:PREFIX=NS ATTRS>inner</PREFIX:gpu> */
static char *gpu_metadata(const char *attrs, const char *inner) {
        char *s = NULL;

        assert_true(asprintf(&s,
                             "    <amdsmi:gpu xmlns:amdsmi=\"" VM_METADATA_NS "\"%s>%s"
                             "</amdsmi:gpu>\n",
                             attrs, inner) > 0);
        return s;
}

static void expect_metadata_fail(const char *attrs, const char *inner, const char *needle) {
        _cleanup_free_ char *m = gpu_metadata(attrs, inner);
        _cleanup_free_ char *x = domain_xml(m, "");

        expect_fail(x, -EINVAL, needle);
}

/* ---- valid domains --------------------------------------------------------------------------- */

static void test_two_vfs(void **state) {
        _cleanup_free_ char *m = gpu_metadata(
                " power-cap-watts='500'",
                "\n      <amdsmi:vf address='0000:c1:02.1' power-cap-watts='300'/>\n    ");
        _cleanup_free_ char *x = domain_xml(m, "");
        _cleanup_vm_domain_free_ struct vm_domain *d = expect_ok(x);

        assert_string_equal(d->name, "train-07");
        assert_string_equal(d->uuid, UUID);
        assert_int_equal(d->n_hostdevs, 2);
        assert_string_equal(d->hostdevs[0].bdf, "0000:05:02.0");
        assert_true(d->hostdevs[0].managed);
        assert_true(d->hostdevs[0].cap_uw == UINT64_MAX);
        /* bus='0xC1' in the XML: the BDF is lower-case */
        assert_string_equal(d->hostdevs[1].bdf, "0000:c1:02.1");
        assert_false(d->hostdevs[1].managed);
        assert_true(d->hostdevs[1].cap_uw == 300000000);
        assert_true(d->has_metadata);
        assert_true(d->cap_uw == 500000000);
}

static void test_no_metadata(void **state) {
        _cleanup_free_ char *x = domain_xml("", "");
        _cleanup_vm_domain_free_ struct vm_domain *d = expect_ok(x);

        assert_int_equal(d->n_hostdevs, 2);
        assert_false(d->has_metadata);
        assert_true(d->cap_uw == UINT64_MAX);
        assert_true(d->hostdevs[0].cap_uw == UINT64_MAX);
        assert_true(d->hostdevs[1].cap_uw == UINT64_MAX);
        assert_null(vm_domain_free(NULL));
}

static void test_metadata_without_vf_caps(void **state) {
        _cleanup_free_ char *m1 = gpu_metadata(" power-cap-watts='750'", "");
        _cleanup_free_ char *x1 = domain_xml(m1, "");
        _cleanup_vm_domain_free_ struct vm_domain *d1 = expect_ok(x1);
        _cleanup_free_ char *m2 = gpu_metadata("", "");
        _cleanup_free_ char *x2 = domain_xml(m2, "");
        _cleanup_vm_domain_free_ struct vm_domain *d2 = expect_ok(x2);

        assert_true(d1->has_metadata);
        assert_true(d1->cap_uw == 750000000);
        assert_true(d1->hostdevs[0].cap_uw == UINT64_MAX);
        assert_true(d1->hostdevs[1].cap_uw == UINT64_MAX);

        /* the element alone: metadata, no cap */
        assert_true(d2->has_metadata);
        assert_true(d2->cap_uw == UINT64_MAX);
}

static void test_metadata_prefix(void **state) {
        /* any prefix, or the default namespace: matched by URI; short and upper-case BDFs */
        const char *m1 = "<gpuctl:gpu xmlns:gpuctl='" VM_METADATA_NS "' power-cap-watts='600'>"
                         "<gpuctl:vf address='05:02.0' power-cap-watts='250'/>"
                         "<gpuctl:vf address='0000:C1:02.1' power-cap-watts='100000'/>"
                         "<other:note xmlns:other='urn:example:other'>ignored <b/></other:note>"
                         "<!-- a comment --></gpuctl:gpu>\n";
        const char *m2 = "<gpu xmlns='" VM_METADATA_NS "'><vf address='c1:02.1' "
                         "power-cap-watts='1'/></gpu>\n";
        _cleanup_free_ char *x1 = domain_xml(m1, "");
        _cleanup_free_ char *x2 = domain_xml(m2, "");
        _cleanup_vm_domain_free_ struct vm_domain *d1 = expect_ok(x1);
        _cleanup_vm_domain_free_ struct vm_domain *d2 = expect_ok(x2);

        assert_true(d1->has_metadata);
        assert_true(d1->cap_uw == 600000000);
        assert_true(d1->hostdevs[0].cap_uw == 250000000);
        assert_true(d1->hostdevs[1].cap_uw == UINT64_C(100000000000));

        assert_true(d2->has_metadata);
        assert_true(d2->cap_uw == UINT64_MAX);
        assert_true(d2->hostdevs[0].cap_uw == UINT64_MAX);
        assert_true(d2->hostdevs[1].cap_uw == 1000000);
}

static void test_wrong_namespace(void **state) {
        /* prefix "amdsmi" but another URI, and our names without a namespace: not ours, ignored
         * whatever they hold */
        const char *m = "<amdsmi:gpu xmlns:amdsmi='urn:amdsmi:libvirt:2' power-cap-watts='x'>"
                        "<amdsmi:vf address='zz' bogus='1'/></amdsmi:gpu>\n"
                        "<gpu power-cap-watts='300'/>\n"
                        "<x:gpu xmlns:x='urn:amdsmi:libvirt:1 ' power-cap-watts='300'/>\n";
        _cleanup_free_ char *x = domain_xml(m, "");
        _cleanup_vm_domain_free_ struct vm_domain *d = expect_ok(x);

        assert_false(d->has_metadata);
        assert_true(d->cap_uw == UINT64_MAX);
        assert_int_equal(d->n_hostdevs, 2);
        assert_true(d->hostdevs[0].cap_uw == UINT64_MAX);
        assert_true(d->hostdevs[1].cap_uw == UINT64_MAX);
}

static void test_usb_only(void **state) {
        const char *x = "<domain type='kvm'><name>usb</name><uuid>" UUID "</uuid><devices>"
                        "<hostdev mode='subsystem' type='usb' managed='yes'><source>"
                        "<vendor id='0x046d'/><product id='0xc52b'/></source></hostdev>"
                        "<hostdev mode='subsystem' type='scsi'><source protocol='iscsi' "
                        "name='iqn.2014-08.com.example:iscsi-nopool/1'/></hostdev>"
                        "<interface type='network'><source network='default'/></interface>"
                        "</devices></domain>";
        _cleanup_vm_domain_free_ struct vm_domain *d = expect_ok(x);

        assert_string_equal(d->name, "usb");
        assert_int_equal(d->n_hostdevs, 0);
        assert_null(d->hostdevs);
        assert_false(d->has_metadata);
}

static void test_uuid_forms(void **state) {
        static const char *const ok[] = {
                "6F1D2C3E-8A4B-4C5D-9E0F-1A2B3C4D5E6F",
                "6f1d2c3e8a4b4c5d9e0f1a2b3c4d5e6f",
                "6F1D2C3E8A4B4C5D9E0F1A2B3C4D5E6F",
                "\n    6f1d2c3e-8a4b-4c5d-9e0f-1a2b3c4d5e6f\n  ",
        };
        static const char *const bad[] = {
                "",
                "6f1d2c3e-8a4b-4c5d-9e0f-1a2b3c4d5e6",
                "6f1d2c3e-8a4b-4c5d-9e0f-1a2b3c4d5e6f0",
                "6f1d2c3e-8a4b-4c5d-9e0f-1a2b3c4d5e6g",
                "6f1d2c3e8-a4b-4c5d-9e0f-1a2b3c4d5e6f",
                "6f1d2c3e-8a4b-4c5d-9e0f1a2b3c4d5e6f",
                "6f1d2c3e8a4b4c5d9e0f1a2b3c4d5e6",
                "6f1d2c3e 8a4b 4c5d 9e0f 1a2b3c4d5e6f",
                "{6f1d2c3e-8a4b-4c5d-9e0f-1a2b3c4d5e6f}",
        };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                _cleanup_free_ char *inner = NULL, *x = NULL;
                _cleanup_vm_domain_free_ struct vm_domain *d = NULL;

                assert_true(asprintf(&inner, "<name>u</name><uuid>%s</uuid>", ok[i]) > 0);
                x = small_xml(inner);
                d = expect_ok(x);
                assert_string_equal(d->uuid, UUID);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *inner = NULL, *x = NULL;

                assert_true(asprintf(&inner, "<name>u</name>\n<uuid>%s</uuid>", bad[i]) > 0);
                x = small_xml(inner);
                expect_fail(x, -EINVAL, "line 2: <uuid> '");
                expect_fail(x, -EINVAL, "' is not a UUID");
        }
}

static void test_attribute_references(void **state) {
        /* character references and predefined entities are plain text once parsed */
        const char *x = "<domain><name>a &amp; b &#x263A;</name><uuid>" UUID "</uuid><devices>"
                        "<hostdev mode='subsystem' type='pci' managed='y&#101;s'><source>"
                        "<address domain='0x0000' bus='0x0&#53;' slot='&#48;x02' "
                        "function='0'/></source></hostdev></devices><metadata>"
                        "<a:gpu xmlns:a='urn:amdsmi&#58;libvirt:1'><a:vf address='05&#58;02.0' "
                        "power-cap-watts='3&#48;0'/></a:gpu></metadata></domain>";
        _cleanup_vm_domain_free_ struct vm_domain *d = expect_ok(x);

        assert_string_equal(d->name, "a & b \xe2\x98\xba");
        assert_int_equal(d->n_hostdevs, 1);
        assert_string_equal(d->hostdevs[0].bdf, "0000:05:02.0");
        assert_true(d->hostdevs[0].managed);
        assert_true(d->hostdevs[0].cap_uw == 300000000);
}

static void test_address_numbers(void **state) {
        static const struct {
                const char *address;
                const char *bdf;
        } ok[] = {
                { "<address domain='0x0000' bus='0x05' slot='0x02' function='0x0'/>",
                  "0000:05:02.0" },
                { "<address domain='0' bus='5' slot='31' function='7'/>", "0000:05:1f.7" },
                { "<address domain='0x10000' bus='0xff' slot='0x1f' function='0x7'/>",
                  "10000:ff:1f.7" },
                { "<address type='pci' domain='0xfffffff' bus='0x0' slot='0x0' function='0'/>",
                  "fffffff:00:00.0" },
                /* base 0 as libvirt's strtoul(): a leading 0 is octal */
                { "<address domain='0' bus='010' slot='0X1A' function='0'/>", "0000:08:1a.0" },
        };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                _cleanup_free_ char *x = domain_with_address(ok[i].address);
                _cleanup_vm_domain_free_ struct vm_domain *d = expect_ok(x);

                assert_int_equal(d->n_hostdevs, 1);
                assert_string_equal(d->hostdevs[0].bdf, ok[i].bdf);
                assert_false(d->hostdevs[0].managed);
        }
}

/* ---- refusals -------------------------------------------------------------------------------- */

static void test_root_name(void **state) {
        _cleanup_free_ char *long_name = malloc(VM_NAME_MAX + 1);
        _cleanup_free_ char *x = NULL, *y = NULL;
        _cleanup_vm_domain_free_ struct vm_domain *d = NULL;

        expect_fail("<node><domain/></node>", -EINVAL,
                    "line 1: the root element is <node>, "
                    "not <domain>");
        expect_fail("<domain xmlns='urn:x'><name>a</name><uuid>" UUID "</uuid></domain>", -EINVAL,
                    "the root element is <domain> in namespace urn:x, not <domain>");
        expect_fail("<domain><uuid>" UUID "</uuid></domain>", -EINVAL, "<domain> has no <name>");
        expect_fail("<domain><name>a</name></domain>", -EINVAL, "<domain> has no <uuid>");
        expect_fail("<domain><name>a</name>\n<name>b</name><uuid>" UUID "</uuid></domain>", -EINVAL,
                    "line 2: more than one <name>");
        expect_fail("<domain><name>a</name><uuid>" UUID "</uuid>\n<uuid>" UUID "</uuid></domain>",
                    -EINVAL, "line 2: more than one <uuid>");
        expect_fail("<domain><name></name><uuid>" UUID "</uuid></domain>", -EINVAL,
                    "line 1: <name> is empty");
        expect_fail("<domain><name>a&#9;b</name><uuid>" UUID "</uuid></domain>", -EINVAL,
                    "<name> contains a control character");
        expect_fail("<domain><name>a\nb</name><uuid>" UUID "</uuid></domain>", -EINVAL,
                    "<name> contains a control character");
        expect_fail("<domain><name>a&#x85;b</name><uuid>" UUID "</uuid></domain>", -EINVAL,
                    "<name> contains a control character");
        expect_fail("<domain><name>a&#x7f;b</name><uuid>" UUID "</uuid></domain>", -EINVAL,
                    "<name> contains a control character");
        /* a name in another namespace is not the name */
        expect_fail("<domain><x:name xmlns:x='urn:x'>a</x:name><uuid>" UUID "</uuid></domain>",
                    -EINVAL, "<domain> has no <name>");

        /* 255 bytes: fine; 256: too long */
        memset(long_name, 'n', VM_NAME_MAX);
        long_name[VM_NAME_MAX - 1] = '\0';
        assert_true(asprintf(&x, "<domain><name>%s</name><uuid>" UUID "</uuid></domain>",
                             long_name) > 0);
        d = expect_ok(x);
        assert_string_equal(d->name, long_name);
        long_name[VM_NAME_MAX - 1] = 'n';
        long_name[VM_NAME_MAX] = '\0';
        assert_true(asprintf(&y, "<domain><name>%s</name><uuid>" UUID "</uuid></domain>",
                             long_name) > 0);
        expect_fail(y, -EINVAL, "<name> is longer than 255 bytes");
}

static void test_hostdev_refusals(void **state) {
        static const struct {
                const char *address;
                const char *message;
        } bad[] = {
                { "<address bus='0x05' slot='0x02' function='0x0'/>",
                  "line 7: <hostdev> 1: <address> lacks domain" },
                { "<address domain='0x0000' slot='0x02' function='0x0'/>",
                  "<hostdev> 1: <address> lacks bus" },
                { "<address domain='0x0000' bus='0x05' function='0x0'/>",
                  "<hostdev> 1: <address> lacks slot" },
                { "<address domain='0x0000' bus='0x05' slot='0x02'/>",
                  "<hostdev> 1: <address> lacks function" },
                { "<address domain='0x0000' bus='0x5g' slot='0x02' function='0'/>",
                  "<hostdev> 1: <address> bus='0x5g' is not a number" },
                { "<address domain='0x0000' bus='' slot='0x02' function='0'/>",
                  "<hostdev> 1: <address> bus='' is not a number" },
                { "<address domain='0x0000' bus='-1' slot='0x02' function='0'/>",
                  "<hostdev> 1: <address> bus='-1' is not a number" },
                { "<address domain='0x0000' bus=' 5' slot='0x02' function='0'/>",
                  "<hostdev> 1: <address> bus=' 5' is not a number" },
                { "<address domain='0x0000' bus='0x' slot='0x02' function='0'/>",
                  "<hostdev> 1: <address> bus='0x' is not a number" },
                { "<address domain='0x0000' bus='0x05' slot='2.0' function='0'/>",
                  "<hostdev> 1: <address> slot='2.0' is not a number" },
                { "<address domain='0x0000' bus='0x100' slot='0x02' function='0'/>",
                  "<hostdev> 1: <address> bus='0x100' is out of range (at most 0xff)" },
                { "<address domain='0x0000' bus='0x05' slot='0x20' function='0'/>",
                  "<hostdev> 1: <address> slot='0x20' is out of range (at most 0x1f)" },
                { "<address domain='0x0000' bus='0x05' slot='0x02' function='8'/>",
                  "<hostdev> 1: <address> function='8' is out of range (at most 0x7)" },
                { "<address domain='0x10000000' bus='0x05' slot='0x02' function='0'/>",
                  "<hostdev> 1: <address> domain='0x10000000' is out of range (at most "
                  "0xfffffff)" },
                { "<address domain='0x100000000' bus='0x05' slot='0x02' function='0'/>",
                  "<hostdev> 1: <address> domain='0x100000000' is out of range" },
                { "<address domain='99999999999999999999999' bus='0' slot='0' function='0'/>",
                  "domain='99999999999999999999999' is out of range" },
                { "<address uuid='c2177883-f1bb-47f0-914d-32a22e3a8804'/>",
                  "<hostdev> 1: <address> lacks domain" },
                { "<vendor id='0x046d'/>", "line 6: <hostdev> 1: <source> lacks <address>" },
                { "<address domain='0' bus='5' slot='2' function='0'/><address domain='0' "
                  "bus='5' slot='2' function='1'/>",
                  "<hostdev> 1: <source> has more than one <address>" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *x = domain_with_address(bad[i].address);

                expect_fail(x, -EINVAL, bad[i].message);
        }
}

static void test_hostdev_structure(void **state) {
        const char *a = "<address domain='0x0000' bus='0x05' slot='0x02' function='0x0'/>";
        const char *b = "<address domain='0x0000' bus='0x05' slot='0x02' function='0x1'/>";
        _cleanup_free_ char *h1 = pci_hostdev(" managed='yes'", a);
        _cleanup_free_ char *h2 = pci_hostdev(" managed='no'", b);
        _cleanup_free_ char *h_maybe = pci_hostdev(" managed='Yes'", b);
        _cleanup_free_ char *h_dup = pci_hostdev("", a);
        _cleanup_free_ char *devs = NULL, *x = NULL;
        _cleanup_vm_domain_free_ struct vm_domain *d = NULL;

        assert_true(asprintf(&devs, "%s%s", h1, h_maybe) > 0);
        x = domain_with_devices(devs);
        expect_fail(x, -EINVAL, "line 10: <hostdev> 2: managed='Yes' is neither 'yes' nor 'no'");
        free(x);
        free(devs);

        assert_true(asprintf(&devs, "%s%s%s", h1, h2, h_dup) > 0);
        x = domain_with_devices(devs);
        expect_fail(x, -EINVAL, "<hostdev> 3: 0000:05:02.0 is also <hostdev> 1");
        free(x);
        free(devs);
        devs = NULL;

        /* a hostdev without <source>, and with two */
        x = domain_with_devices("<hostdev mode='subsystem' type='pci'><driver name='vfio'/>"
                                "</hostdev>");
        expect_fail(x, -EINVAL, "<hostdev> 1 lacks <source>");
        free(x);
        x = domain_with_devices("<hostdev mode='subsystem' type='pci'><source/><source/>"
                                "</hostdev>");
        expect_fail(x, -EINVAL, "<hostdev> 1 has more than one <source>");
        free(x);

        /* the guest-side <address> of a hostdev is not its source */
        x = domain_with_devices("<hostdev mode='subsystem' type='pci'><address type='pci' "
                                "domain='0' bus='7' slot='0' function='0'/></hostdev>");
        expect_fail(x, -EINVAL, "<hostdev> 1 lacks <source>");
        free(x);

        /* two <devices>: both are read, in order; the hostdev number counts PCI ones only */
        assert_true(asprintf(&x,
                             "<domain><name>two</name><uuid>" UUID "</uuid>"
                             "<devices>%s</devices><devices>"
                             "<hostdev mode='subsystem' type='usb'/>%s</devices></domain>",
                             h1, h2) > 0);
        d = expect_ok(x);
        assert_int_equal(d->n_hostdevs, 2);
        assert_string_equal(d->hostdevs[0].bdf, "0000:05:02.0");
        assert_true(d->hostdevs[0].managed);
        assert_string_equal(d->hostdevs[1].bdf, "0000:05:02.1");
        assert_false(d->hostdevs[1].managed);
        free(x);
        x = domain_with_devices("<hostdev mode='subsystem' type='usb'/>"
                                "<hostdev mode='subsystem' type='pci'><source/></hostdev>");
        expect_fail(x, -EINVAL, "<hostdev> 1: <source> lacks <address>");
}

/* 256 PCI hostdevs are fine, the 257th is -E2BIG */
static void test_hostdev_limit(void **state) {
        for (size_t n = VM_HOSTDEVS_MAX; n <= VM_HOSTDEVS_MAX + 1; n++) {
                size_t size = n * 200 + 1;
                _cleanup_free_ char *devs = calloc(1, size), *x = NULL;
                size_t len = 0;

                assert_non_null(devs);
                for (size_t i = 0; i < n; i++)
                        len += (size_t) snprintf(
                                devs + len, size - len,
                                "<hostdev mode='subsystem' type='pci'><source><address "
                                "domain='0x%04zx' bus='0x%02zx' slot='0x02' function='0x0'/>"
                                "</source></hostdev>\n",
                                i / 256, i % 256);
                x = domain_with_devices(devs);
                if (n == VM_HOSTDEVS_MAX) {
                        _cleanup_vm_domain_free_ struct vm_domain *d = expect_ok(x);

                        assert_int_equal(d->n_hostdevs, VM_HOSTDEVS_MAX);
                        assert_string_equal(d->hostdevs[255].bdf, "0000:ff:02.0");
                } else
                        expect_fail(x, -E2BIG, "more than 256 PCI <hostdev> elements");
        }
}

static void test_metadata_refusals(void **state) {
        static const char *const bad_watts[] = {
                "0",    "-5",   "1.5",   "abc",    "",    " 300",
                "300 ", "+300", "0x100", "100001", "1e3", "99999999999999999999999",
        };
        const char *vf1 = "<amdsmi:vf address='0000:05:02.0' power-cap-watts='300'/>";

        for (size_t i = 0; i < ELEMENTSOF(bad_watts); i++) {
                _cleanup_free_ char *attr = NULL, *vf = NULL, *msg = NULL;

                assert_true(asprintf(&attr, " power-cap-watts='%s'", bad_watts[i]) > 0);
                assert_true(asprintf(&msg,
                                     "<amdsmi:gpu> power-cap-watts='%s' is not a whole number "
                                     "of watts from 1 to 100000",
                                     bad_watts[i]) > 0);
                expect_metadata_fail(attr, "", msg);
                assert_true(asprintf(&vf, "<amdsmi:vf address='05:02.0' power-cap-watts='%s'/>",
                                     bad_watts[i]) > 0);
                expect_metadata_fail("", vf, "<amdsmi:vf> power-cap-watts='");
        }

        expect_metadata_fail(" power-cap-wats='300'", "",
                             "<amdsmi:gpu> has an unknown attribute power-cap-wats");
        expect_metadata_fail(" amdsmi:power-cap-watts='300'", "",
                             "<amdsmi:gpu> has an unknown attribute amdsmi:power-cap-watts");
        expect_metadata_fail("", "<amdsmi:vfs/>", "<amdsmi:vfs> is unknown inside <amdsmi:gpu>");
        expect_metadata_fail("", "<vf address='05:02.0' power-cap-watts='300'/>",
                             "<vf> inside <amdsmi:gpu> is in no namespace (" VM_METADATA_NS
                             " is the one of <amdsmi:gpu>)");
        expect_metadata_fail("", "<amdsmi:vf power-cap-watts='300'/>", "<amdsmi:vf> lacks address");
        expect_metadata_fail("", "<amdsmi:vf address='05:02.0'/>",
                             "<amdsmi:vf> lacks power-cap-watts");
        expect_metadata_fail("", "<amdsmi:vf address='05:02.0' power-cap-watts='3' index='0'/>",
                             "<amdsmi:vf> has an unknown attribute index");
        expect_metadata_fail("",
                             "<amdsmi:vf address='05:02.0' power-cap-watts='3'><amdsmi:x/>"
                             "</amdsmi:vf>",
                             "<amdsmi:x> is unknown inside <amdsmi:vf>");
        expect_metadata_fail("", "<amdsmi:vf address='0000:05:03.0' power-cap-watts='300'/>",
                             "<amdsmi:vf> address='0000:05:03.0' names no <hostdev> of the "
                             "domain");
        expect_metadata_fail("", "<amdsmi:vf address='0001:05:02.0' power-cap-watts='300'/>",
                             "names no <hostdev> of the domain");
        static const char *const bad_bdf[] = {
                "05:02",         "5:02.0",       "0000:05:02.8",
                "0000:05:20.0",  "000:05:02.0",  "00000000:05:02.0",
                "0000:05:02.0 ", "0000-05-02.0", "",
                "0000:05:02.00", "x:05:02.0",    "0000:0g:02.0",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad_bdf); i++) {
                _cleanup_free_ char *vf = NULL, *msg = NULL;

                assert_true(asprintf(&vf, "<amdsmi:vf address='%s' power-cap-watts='300'/>",
                                     bad_bdf[i]) > 0);
                assert_true(asprintf(&msg, "<amdsmi:vf> address='%s' is not a PCI address",
                                     bad_bdf[i]) > 0);
                expect_metadata_fail("", vf, msg);
        }
        {
                _cleanup_free_ char *two = NULL;

                assert_true(asprintf(&two, "%s<amdsmi:vf address='05:02.0' power-cap-watts='9'/>",
                                     vf1) > 0);
                expect_metadata_fail("", two, "<amdsmi:vf>: 0000:05:02.0 is named twice");
        }
        {
                /* a second <amdsmi:gpu>, in the same <metadata> or another one, any prefix */
                _cleanup_free_ char *m = gpu_metadata("", "");
                _cleanup_free_ char *two = NULL, *x = NULL, *y = NULL;

                assert_true(asprintf(&two, "%s<g:gpu xmlns:g='" VM_METADATA_NS "'/>\n", m) > 0);
                x = domain_xml(two, "");
                expect_fail(x, -EINVAL, "line 9: a second <g:gpu> (the first is on line 8)");
                assert_true(asprintf(&y,
                                     "<domain><name>a</name><uuid>" UUID "</uuid>"
                                     "<metadata>%s</metadata><metadata>%s</metadata></domain>",
                                     m, m) > 0);
                expect_fail(y, -EINVAL, "a second <amdsmi:gpu>");
        }
        {
                const char *m = "<amdsmi:power xmlns:amdsmi='" VM_METADATA_NS "'/>";
                _cleanup_free_ char *x = domain_xml(m, "");

                expect_fail(x, -EINVAL,
                            "<amdsmi:power> is unknown in " VM_METADATA_NS
                            " (the element is <gpu>)");
        }
        {
                /* a vf naming a USB device's place cannot exist: only PCI hostdevs count */
                const char *x = "<domain><name>a</name><uuid>" UUID "</uuid><devices>"
                                "<hostdev mode='subsystem' type='usb'><source><address bus='5' "
                                "device='2'/></source></hostdev></devices><metadata>"
                                "<a:gpu xmlns:a='" VM_METADATA_NS "'><a:vf address='05:02.0' "
                                "power-cap-watts='3'/></a:gpu></metadata></domain>";

                expect_fail(x, -EINVAL, "names no <hostdev> of the domain");
        }
}

/* ---- malformed and hostile input ----------------------------------------------------------- */

static void test_malformed(void **state) {
        static const char nul[] = "<domain>\n<name>a\0b</name></domain>";
        static const struct {
                const char *xml;
                const char *message;
        } bad[] = {
                { "<domain><name>a</name>", "line 1: " },
                { "<domain><name>a</nam></domain>", "line 1: Opening and ending tag mismatch" },
                { "hello", "line 1: the document does not start with '<'" },
                { "<domain/><domain/>", "line 1: Extra content at the end of the document" },
                { "<domain><name>&foo;</name></domain>", "Entity 'foo' not defined" },
                { "<domain><name>\xff</name></domain>", "line 1: " },
                { "<domain a='1' a='2'/>", "Attribute a redefined" },
                { "<domain xmlns:g='urn:x' xmlns:g='urn:y'/>", "Attribute xmlns:g redefined" },
                { "\xef\xbb\xbf", "empty document" },
                { "\xef\xbb\xbf  \n\t ", "empty document" },
                { "\xef\xbb\xbfhi", "does not start with '<'" },
                /* UTF-16 needs NUL bytes; EBCDIC ("<?xm" is 4c 6f a7 94) starts with 'L' */
                { "\x4c\x6f\xa7\x94\x93\x40", "does not start with '<'" },
                { "<?xml version='1.0'?>", "line 1: " },
        };

        expect_fail_n("", 0, -EBADMSG, "domain XML: empty document");
        expect_fail(" \n\t\r\n", -EBADMSG, "domain XML: empty document");
        expect_fail_n(nul, sizeof(nul) - 1, -EBADMSG, "domain XML: line 2: a NUL byte");
        expect_fail_n("\0", 1, -EBADMSG, "line 1: a NUL byte");
        /* a document in UTF-16 */
        expect_fail_n("\xff\xfe<\0d\0/\0>\0", 10, -EBADMSG, "a NUL byte");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                expect_fail(bad[i].xml, -EBADMSG, bad[i].message);
}

/* Namespace errors do not make a document malformed (libvirt accepts them too): the element
 * has no namespace, so it is never ours; inside ours it is refused. */
static void test_namespace_errors(void **state) {
        const char *m = "<other:data xmlns:other='urn:example:other'><y:z/></other:data>\n"
                        "<amdsmi:gpu power-cap-watts='5'/>\n";
        _cleanup_free_ char *x = domain_xml(m, "");
        _cleanup_vm_domain_free_ struct vm_domain *d = expect_ok(x);

        assert_false(d->has_metadata);
        assert_true(d->cap_uw == UINT64_MAX);
        assert_int_equal(d->n_hostdevs, 2);

        expect_metadata_fail("",
                             "\n<amdsmi:vf address='05:02.0' power-cap-watts='5'/>"
                             "<y:vf address='c1:02.1' power-cap-watts='5'/>",
                             "line 9: <y:vf> inside <amdsmi:gpu> is in no namespace");
        expect_metadata_fail("", "<amdsmi:vf address='05:02.0' y:power-cap-watts='5'/>",
                             "<amdsmi:vf> has an unknown attribute y:power-cap-watts");
        expect_fail("<x:domain><name>a</name><uuid>" UUID "</uuid></x:domain>", -EINVAL,
                    "line 1: the root element is <x:domain>, not <domain>");
}

static void test_billion_laughs(void **state) {
        const char *x = "<?xml version='1.0'?>\n"
                        "<!DOCTYPE domain [\n"
                        " <!ENTITY lol 'lol'>\n"
                        " <!ENTITY lol1 '&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;'>\n"
                        " <!ENTITY lol2 '&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;'>\n"
                        " <!ENTITY lol3 '&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;'>\n"
                        " <!ENTITY lol4 '&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;'>\n"
                        " <!ENTITY lol5 '&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;'>\n"
                        " <!ENTITY lol6 '&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;'>\n"
                        " <!ENTITY lol7 '&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;'>\n"
                        " <!ENTITY lol8 '&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;'>\n"
                        " <!ENTITY lol9 '&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;'>\n"
                        "]>\n"
                        "<domain><name>&lol9;</name><uuid>" UUID "</uuid></domain>\n";

        expect_fail(x, -EINVAL, "domain XML: DTDs and entities are not accepted");
}

static void test_external_entity(void **state) {
        const char *xxe = "<?xml version='1.0'?>\n"
                          "<!DOCTYPE domain [ <!ENTITY xxe SYSTEM 'file:///etc/passwd'> ]>\n"
                          "<domain><name>&xxe;</name><uuid>" UUID "</uuid></domain>\n";
        const char *ext_dtd = "<!DOCTYPE domain SYSTEM 'file:///etc/passwd'>\n"
                              "<domain><name>a</name><uuid>" UUID "</uuid></domain>\n";
        const char *entity_only = "<domain><name>a</name><uuid>" UUID "</uuid>"
                                  "<!-- <!ENTITY x 'y'> --></domain>";
        /* "<!DOCTYPE" spelled in UTF-7: read as UTF-8, it is text before the root element */
        const char *utf7 = "<?xml version='1.0' encoding='UTF-7'?>\n"
                           "+ADw-+ACE-DOCTYPE domain +AFs-+ADw-+ACE-ENTITY x SYSTEM "
                           "+ACI-file:///etc/passwd+ACI-+AD4-+AF0-+AD4-\n"
                           "+ADw-domain+AD4-+ADw-name+AD4-+ACY-x+ADs-+ADw-/name+AD4-"
                           "+ADw-/domain+AD4-\n";
        /* XInclude is not processed: the name stays empty */
        const char *xinclude = "<domain xmlns:xi='http://www.w3.org/2001/XInclude'><name>"
                               "<xi:include href='file:///etc/passwd' parse='text'/></name>"
                               "<uuid>" UUID "</uuid></domain>";

        expect_fail(xxe, -EINVAL, "domain XML: DTDs and entities are not accepted");
        expect_fail(ext_dtd, -EINVAL, "domain XML: DTDs and entities are not accepted");
        expect_fail(entity_only, -EINVAL, "domain XML: DTDs and entities are not accepted");
        expect_fail(utf7, -EBADMSG, "line 2: ");
        expect_fail(xinclude, -EINVAL, "<name> is empty");
}

static void test_size(void **state) {
        const char *head = "<domain><name>big</name><uuid>" UUID "</uuid><!--";
        const char *tail = "--></domain>";
        size_t len = 5u << 20;
        _cleanup_free_ char *x = malloc(len + 1);

        assert_non_null(x);
        /* exactly VM_XML_MAX_BYTES: parsed */
        memset(x, ' ', len);
        memcpy(x, head, strlen(head));
        memcpy(x + VM_XML_MAX_BYTES - strlen(tail), tail, strlen(tail));
        {
                struct vm_domain *d = NULL;
                char err[256];

                assert_int_equal(parse_n(x, VM_XML_MAX_BYTES, &d, err, sizeof(err)), 0);
                assert_string_equal(d->name, "big");
                vm_domain_free(d);
        }
        /* one byte more, and 5 MB: refused before parsing */
        x[VM_XML_MAX_BYTES] = ' ';
        expect_fail_n(x, VM_XML_MAX_BYTES + 1, -EFBIG, "domain XML: larger than 4194304 bytes");
        memcpy(x + len - strlen(tail), tail, strlen(tail));
        expect_fail_n(x, len, -EFBIG, "(5242880 bytes)");
}

/* ---- the contract ---------------------------------------------------------------------------- */

static void test_error_buffer(void **state) {
        struct vm_domain sentinel, *d = &sentinel;
        const char *x = "<domain><name>a</name></domain>";
        char err[8];

        /* a short buffer: cut, terminated */
        memset(err, 'x', sizeof(err));
        assert_int_equal(parse_n(x, strlen(x), &d, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "domain ");
        memset(err, 'x', sizeof(err));
        assert_int_equal(parse_n(x, strlen(x), &d, err, 1), -EINVAL);
        assert_int_equal(err[0], '\0');
        assert_int_equal(err[1], 'x');
        /* no buffer at all */
        assert_int_equal(parse_n(x, strlen(x), &d, NULL, 0), -EINVAL);
        assert_int_equal(parse_n("", 0, &d, NULL, 0), -EBADMSG);
        assert_ptr_equal(d, &sentinel);

        /* success clears it */
        {
                char ok_err[64] = "stale";
                const char *y = "<domain><name>a</name><uuid>" UUID "</uuid></domain>";

                assert_int_equal(parse_n(y, strlen(y), &d, ok_err, sizeof(ok_err)), 0);
                assert_string_equal(ok_err, "");
                assert_ptr_not_equal(d, &sentinel);
                d = vm_domain_free(d);
                assert_null(d);
        }
}

static void test_quoting(void **state) {
        /* values of the document in a message: control characters replaced, long ones cut */
        expect_fail("<domain><name>a</name><uuid>&#10;x&#9;y</uuid></domain>", -EINVAL,
                    "<uuid> '?x?y' is not a UUID");
        expect_fail("<domain><name>a</name><uuid>0123456789012345678901234567890123456789"
                    "0123456789</uuid></domain>",
                    -EINVAL, "<uuid> '0123456789012345678901234567890123456789...' is not");
        /* a cut never splits a UTF-8 sequence: 39 ASCII bytes, then a 3-byte character */
        expect_fail("<domain><name>a</name><uuid>012345678901234567890123456789012345678"
                    "\xe2\x98\xbaxyz</uuid></domain>",
                    -EINVAL, "<uuid> '012345678901234567890123456789012345678...' is not");
}

/* Valid UTF-8 throughout (a cut message never ends inside a character). */
static bool utf8_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        while (*p) {
                size_t n = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 ? 2 : 0;

                if (n == 0)
                        return false;
                for (size_t i = 1; i < n; i++)
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                p += n;
        }
        return true;
}

static void test_line_numbers(void **state) {
        size_t blank = 70000;
        _cleanup_free_ char *x = malloc(blank + 512), *y = malloc(blank + 512);
        _cleanup_free_ char *long_tag = NULL;
        struct vm_domain *d = NULL;
        char err[256];
        int n;

        /* past 65535 lines */
        assert_non_null(x);
        assert_non_null(y);
        n = sprintf(x, "<domain><name>a</name><uuid>" UUID "</uuid>");
        memset(x + n, '\n', blank);
        strcpy(x + n + blank, "<devices><hostdev mode='subsystem' type='pci'><source>\n"
                              "<address bus='1'/></source></hostdev></devices></domain>");
        expect_fail(x, -EINVAL, "domain XML: line 70002: <hostdev> 1: <address> lacks domain");
        n = sprintf(y, "<domain><name>a</name>");
        memset(y + n, '\n', blank);
        strcpy(y + n + blank, "<bad></domain>");
        expect_fail(y, -EBADMSG, "domain XML: line 70001: Opening and ending tag mismatch: bad");

        /* libxml2's message cut to the buffer, at a character boundary: a tag of 300 "é" */
        long_tag = malloc(64 + 300 * 2);
        assert_non_null(long_tag);
        n = sprintf(long_tag, "<domain><name>a</name><bad");
        for (size_t i = 0; i < 300; i++)
                n += sprintf(long_tag + n, "\xc3\xa9");
        strcpy(long_tag + n, "></domain>");
        for (size_t size = 1; size <= sizeof(err); size++) {
                memset(err, 'x', sizeof(err));
                assert_int_equal(vm_domain_parse(long_tag, strlen(long_tag), &d, err, size),
                                 -EBADMSG);
                assert_true(strlen(err) < size);
                assert_true(utf8_valid(err));
        }
        assert_null(d);
        assert_non_null(strstr(err, "Opening and ending tag mismatch: bad\xc3\xa9"));
        /* 256 bytes hold the start of the message and about 110 characters of the tag */
        assert_true(strlen(err) > 200);
}

/* Nothing goes to stdout or stderr, whatever the input, and libxml2 keeps no error. */
static void test_silent(void **state) {
        static const char *const inputs[] = {
                "<domain><name>a</nam></domain>",
                "<?xml version='1.0' encoding='bogus-encoding'?><domain/>",
                "<?xml version='1.0' encoding='ISO-8859-1'?><domain><name>\xe9</name></domain>",
                "<?xml version='1.0' encoding='UTF-16'?><domain/>",
                "<domain xmlns:a='relative/uri'><name>&#0;</name></domain>",
                "<domain><name>\xc3\x28</name></domain>",
                "<domain><name>\xed\xa0\x80</name></domain>",
                "<domain>\xf4\x90\x80\x80</domain>",
                "<domain><![CDATA[x]]]]><name/></domain>",
                "<domain xmlns:x='urn:x' xmlns:x='urn:y'/>",
                "<domain><name>a</name><uuid>" UUID "</uuid><devices><hostdev mode='subsystem' "
                "type='pci'/></devices></domain>",
        };
        char tmpl[] = "/tmp/test-domain-xml.XXXXXX";
        int fd = mkstemp(tmpl), saved_out, saved_err;
        size_t accepted = SIZE_MAX, kept_error = SIZE_MAX;
        struct stat st;

        assert_true(fd >= 0);
        assert_int_equal(unlink(tmpl), 0);
        fflush(stdout);
        fflush(stderr);
        saved_out = dup(STDOUT_FILENO);
        saved_err = dup(STDERR_FILENO);
        assert_true(saved_out >= 0 && saved_err >= 0);
        assert_true(dup2(fd, STDOUT_FILENO) >= 0);
        assert_true(dup2(fd, STDERR_FILENO) >= 0);

        /* no assertion while the output goes to the file: its message would go there too */
        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                struct vm_domain *d = NULL;
                char err[256];
                int r = parse(inputs[i], &d, err);

                vm_domain_free(d);
                if (r == 0 && accepted == SIZE_MAX)
                        accepted = i;
                if (xmlGetLastError() && kept_error == SIZE_MAX)
                        kept_error = i;
        }

        fflush(stdout);
        fflush(stderr);
        assert_true(dup2(saved_out, STDOUT_FILENO) >= 0);
        assert_true(dup2(saved_err, STDERR_FILENO) >= 0);
        close(saved_out);
        close(saved_err);
        if (accepted != SIZE_MAX)
                fail_msg("input %zu was accepted", accepted);
        if (kept_error != SIZE_MAX)
                fail_msg("libxml2 kept an error after input %zu", kept_error);
        assert_int_equal(fstat(fd, &st), 0);
        close(fd);
        assert_int_equal(st.st_size, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_two_vfs),
                cmocka_unit_test(test_no_metadata),
                cmocka_unit_test(test_metadata_without_vf_caps),
                cmocka_unit_test(test_metadata_prefix),
                cmocka_unit_test(test_wrong_namespace),
                cmocka_unit_test(test_usb_only),
                cmocka_unit_test(test_uuid_forms),
                cmocka_unit_test(test_attribute_references),
                cmocka_unit_test(test_address_numbers),
                cmocka_unit_test(test_root_name),
                cmocka_unit_test(test_hostdev_refusals),
                cmocka_unit_test(test_hostdev_structure),
                cmocka_unit_test(test_hostdev_limit),
                cmocka_unit_test(test_metadata_refusals),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_namespace_errors),
                cmocka_unit_test(test_billion_laughs),
                cmocka_unit_test(test_external_entity),
                cmocka_unit_test(test_size),
                cmocka_unit_test(test_error_buffer),
                cmocka_unit_test(test_quoting),
                cmocka_unit_test(test_line_numbers),
                cmocka_unit_test(test_silent),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
