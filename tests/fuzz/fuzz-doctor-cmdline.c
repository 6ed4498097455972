/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the doctor's reading of the kernel command line (doctor/doctor-checks.c):
 * arbitrary text as /proc/cmdline through doctor_cmdline_get() and the checks that read it.
 * Checks that a value found is a bounded string, that has() agrees with get(), and that the
 * checks always end with a status, a summary and an evidence object.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct amdsmi_host_info h = { .size = sizeof(h), .interrupt_remapping = 0 };
        struct doctor_check c;
        size_t n = size < sizeof(h.cmdline) - 1 ? size : sizeof(h.cmdline) - 1;
        char v[16];

        memcpy(h.cmdline, data, n);
        h.cmdline[n] = '\0';
        for (const char *p = "iommu\0amd_iommu\0intremap\0iommu.passthrough\0"; *p;
             p += strlen(p) + 1) {
                int got = doctor_cmdline_get(h.cmdline, p, v, sizeof(v));

                if (got != 0 && got != 1)
                        abort();
                if (got && strnlen(v, sizeof(v)) == sizeof(v))
                        abort();
                if (got != doctor_cmdline_has(h.cmdline, p, NULL))
                        abort();
        }
        for (int units = 0; units < 2; units++) {
                h.n_iommu_units = (unsigned) units;
                h.iommu_error = units ? 0 : -ENOENT;
                doctor_check_init(&c, "iommu", -1, NULL);
                doctor_check_iommu(&h, &c);
                if (c.status >= _DOCTOR_STATUS_MAX || !c.summary[0] || !c.evidence)
                        abort();
                doctor_check_clear(&c);
                doctor_check_init(&c, "interrupt_remapping", -1, NULL);
                doctor_check_interrupt_remapping(&h, &c);
                if (c.status != DOCTOR_FAIL || !c.summary[0])
                        abort();
                doctor_check_clear(&c);
        }
        return 0;
}
