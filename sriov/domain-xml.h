/* SPDX-License-Identifier: MIT */
/*
 * The libvirt domain XML that amdsmi-libvirt-hook reads on stdin, turned into a plain struct:
 * the domain's name and UUID, its PCI hostdevs (the VFs it is given) and our metadata element
 * (per-VM and per-VF power caps):
 *
 *   <metadata>
 *     <amdsmi:gpu xmlns:amdsmi="urn:amdsmi:libvirt:1" power-cap-watts="500">
 *       <amdsmi:vf address="0000:05:02.0" power-cap-watts="300"/>
 *     </amdsmi:gpu>
 *   </metadata>
 *
 * The input is untrusted: no DTD, no entity, no network, at most VM_XML_MAX_BYTES, and every
 * value is checked. Never prints; a failure comes with one line of text saying what was wrong.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VM_XML_MAX_BYTES (4u << 20) /* larger input: -EFBIG */
#define VM_METADATA_NS "urn:amdsmi:libvirt:1"
#define VM_NAME_MAX 256
#define VM_HOSTDEVS_MAX 256 /* more PCI hostdevs: -E2BIG */
#define VM_CAP_WATTS_MAX 100000u

struct vm_hostdev {
        char bdf[16];    /* "0000:05:02.0", lower-case, from <source><address .../> */
        bool managed;    /* managed='yes' (libvirt binds it); absent or 'no': false */
        uint64_t cap_uw; /* <amdsmi:vf address=BDF power-cap-watts=W/> for this BDF, in
                          * microwatts; UINT64_MAX if absent */
};

struct vm_domain {
        char name[VM_NAME_MAX];
        char uuid[37];               /* lower-case canonical 8-4-4-4-12 */
        struct vm_hostdev *hostdevs; /* PCI subsystem hostdevs only, in document order */
        size_t n_hostdevs;
        bool has_metadata; /* an <amdsmi:gpu> element in VM_METADATA_NS was found */
        uint64_t cap_uw;   /* <amdsmi:gpu power-cap-watts=W>, in microwatts;
                            * UINT64_MAX if absent */
};

/* Parses @len bytes of domain XML. On failure returns a negative errno and writes one line
 * (no trailing newline) naming what was wrong into @error (size @error_size), e.g.
 * "domain XML: line 12: <hostdev> 2: <address> lacks bus". Never prints.
 *
 * -EFBIG: more than VM_XML_MAX_BYTES; -EBADMSG: empty, a NUL byte, or not well-formed XML;
 * -EINVAL: a DTD or entity declaration, or a document that is not a valid domain for us;
 * -E2BIG: more than VM_HOSTDEVS_MAX PCI hostdevs; -ENOMEM. Namespace errors alone (an
 * undeclared prefix, a URI that is not one), which libvirt accepts, leave the element without
 * a namespace: it is never ours, and inside ours it is refused as unknown.
 * *@ret is written only on success; @error is "" on success (when @error_size > 0). */
int vm_domain_parse(const char *xml, size_t len, struct vm_domain **ret, char *error,
                    size_t error_size);
struct vm_domain *vm_domain_free(struct vm_domain *d); /* NULL-safe, returns NULL */

static inline void vm_domain_freep(struct vm_domain **d) {
        vm_domain_free(*d);
}
#define _cleanup_vm_domain_free_ __attribute__((cleanup(vm_domain_freep)))
