/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the libvirt domain XML reader (sriov/domain-xml.c): arbitrary bytes through
 * vm_domain_parse(). Checks the documented contract: only the documented errors, each with one
 * "domain XML: " line and the output untouched; an accepted document holds a name and UUID in
 * their forms, unique valid BDFs, caps that are whole watts in range (none without metadata),
 * and never had a NUL byte, a DTD or an entity declaration; a second parse with a short error
 * buffer gives the same answer; libxml2 keeps no error behind.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/xmlerror.h>

#include "domain-xml.h"
#include "parse-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_cap(uint64_t uw) {
        if (uw == UINT64_MAX)
                return;
        if (uw % 1000000 != 0 || uw < 1000000 || uw > (uint64_t) VM_CAP_WATTS_MAX * 1000000)
                abort();
}

static void check_domain(const struct vm_domain *d, const uint8_t *data, size_t size) {
        size_t len = strnlen(d->name, VM_NAME_MAX);

        if (size > VM_XML_MAX_BYTES || memchr(data, '\0', size) ||
            memmem(data, size, "<!DOCTYPE", 9) || memmem(data, size, "<!ENTITY", 8))
                abort();
        if (len == 0 || len >= VM_NAME_MAX)
                abort();
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) d->name[i] < 0x20 || d->name[i] == 0x7f)
                        abort();
        if (strlen(d->uuid) != 36)
                abort();
        for (size_t i = 0; i < 36; i++) {
                char c = d->uuid[i];

                if (i == 8 || i == 13 || i == 18 || i == 23
                            ? c != '-'
                            : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
                        abort();
        }

        if (d->n_hostdevs > VM_HOSTDEVS_MAX || (d->n_hostdevs == 0) != (d->hostdevs == NULL))
                abort();
        for (size_t i = 0; i < d->n_hostdevs; i++) {
                const struct vm_hostdev *h = &d->hostdevs[i];

                if (!pci_bdf_valid(h->bdf))
                        abort();
                for (size_t j = 0; j < i; j++)
                        if (strcmp(d->hostdevs[j].bdf, h->bdf) == 0)
                                abort();
                check_cap(h->cap_uw);
                if (!d->has_metadata && h->cap_uw != UINT64_MAX)
                        abort();
        }
        check_cap(d->cap_uw);
        if (!d->has_metadata && d->cap_uw != UINT64_MAX)
                abort();
}

static void check_error(int r, const char *err, size_t err_size) {
        if (r != -EINVAL && r != -EBADMSG && r != -EFBIG && r != -E2BIG && r != -ENOMEM)
                abort();
        if (strnlen(err, err_size) >= err_size)
                abort(); /* terminated */
        if (strncmp(err, "domain XML: ", err_size - 1 < 12 ? err_size - 1 : 12) != 0)
                abort();
        if (strchr(err, '\n') || strchr(err, '\r'))
                abort(); /* one line */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct vm_domain sentinel, *d = &sentinel, *d2 = &sentinel;
        char err[256], short_err[20];
        int r, r2;

        memset(err, 'x', sizeof(err));
        r = vm_domain_parse((const char *) data, size, &d, err, sizeof(err));
        if (r < 0) {
                check_error(r, err, sizeof(err));
                if (d != &sentinel)
                        abort(); /* untouched on failure */
        } else {
                if (r != 0 || !d || d == &sentinel || err[0] != '\0')
                        abort();
                check_domain(d, data, size);
        }
        if (xmlGetLastError())
                abort();

        /* the same answer again, with an error buffer too short for any message */
        memset(short_err, 'x', sizeof(short_err));
        r2 = vm_domain_parse((const char *) data, size, &d2, short_err, sizeof(short_err));
        if (r2 != r)
                abort();
        if (r < 0) {
                check_error(r2, short_err, sizeof(short_err));
                if (d2 != &sentinel || strncmp(err, short_err, sizeof(short_err) - 1) != 0)
                        abort();
        } else {
                if (strcmp(d->name, d2->name) != 0 || strcmp(d->uuid, d2->uuid) != 0 ||
                    d->n_hostdevs != d2->n_hostdevs || d->has_metadata != d2->has_metadata ||
                    d->cap_uw != d2->cap_uw)
                        abort();
                for (size_t i = 0; i < d->n_hostdevs; i++)
                        if (strcmp(d->hostdevs[i].bdf, d2->hostdevs[i].bdf) != 0 ||
                            d->hostdevs[i].managed != d2->hostdevs[i].managed ||
                            d->hostdevs[i].cap_uw != d2->hostdevs[i].cap_uw)
                                abort();
                vm_domain_free(d);
                vm_domain_free(d2);
        }
        return 0;
}
