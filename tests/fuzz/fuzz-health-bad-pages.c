/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of ras/gpu_vram_bad_pages (health/health-ras.c): any bytes. Checks: a success is
 * one page per 28-byte record, each printing back to its record (hex digits in either case),
 * with the byte address pfn << 12 and the status of its flag; a failure is -EBADMSG naming a
 * record within the input, and leaves no array.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "health-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct amdsmi_bad_page *pages = NULL;
        size_t bad = SIZE_MAX;
        int r;

        r = bad_pages_parse((const char *) data, size, &pages, &bad);
        if (r < 0) {
                if (r != -EBADMSG || pages || bad > size / BAD_PAGE_RECORD_SIZE)
                        abort();
                return 0;
        }
        if ((size_t) r != size / BAD_PAGE_RECORD_SIZE || size % BAD_PAGE_RECORD_SIZE != 0 ||
            (r == 0) != (pages == NULL))
                abort();
        for (int i = 0; i < r; i++) {
                const struct amdsmi_bad_page *p = &pages[i];
                char back[BAD_PAGE_RECORD_SIZE + 1];

                snprintf(back, sizeof(back), "0x%08x : 0x%08x : %c\n", (unsigned) p->pfn,
                         (unsigned) p->size, p->flag);
                if (strncasecmp(back, (const char *) data + (size_t) i * BAD_PAGE_RECORD_SIZE,
                                BAD_PAGE_RECORD_SIZE) != 0)
                        abort();
                if (p->address != p->pfn << 12 || p->pfn > UINT32_MAX)
                        abort();
                if ((p->status == AMDSMI_BAD_PAGE_STATUS_RESERVED) != (p->flag == 'R') ||
                    (p->status == AMDSMI_BAD_PAGE_STATUS_PENDING) != (p->flag == 'P') ||
                    (p->status == AMDSMI_BAD_PAGE_STATUS_UNRESERVABLE) != (p->flag == 'F'))
                        abort();
        }
        free(pages);
        return 0;
}
