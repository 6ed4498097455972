/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the host's /proc files (lib/procfs.c): arbitrary text as /proc/modules,
 * /proc/interrupts and /proc/cmdline, through the pure parsers and through the readers on a
 * private /proc tree. Checks what the doctor relies on: the interrupt verdict agrees with its
 * counts, a module found in the text is a whole first field of a line, the command line read
 * holds no newline.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *text = (const char *) data;
        unsigned ir = 0, plain = 0;
        char *cmdline = NULL;
        int r;

        r = procfs_interrupts_remapping(text, size, &ir, &plain);
        if ((r == 1) != (ir > 0) || (r == 0) != (ir == 0 && plain > 0) ||
            (r == -ENODATA) != (ir == 0 && plain == 0))
                abort();
        for (const char *m = "vfio_pci\0vfio-pci\0amdgpu\0gim\0x\0"; *m; m += strlen(m) + 1) {
                r = procfs_modules_has(text, size, m);
                if (r != 0 && r != 1)
                        abort();
                /* a line that starts with the name and a blank has it */
                if (r == 0 && size > strlen(m) && memcmp(text, m, strlen(m)) == 0 &&
                    text[strlen(m)] == ' ')
                        abort();
        }
        if (procfs_modules_has(text, size, "") != 0)
                abort();

        /* the readers, on a /proc of the input */
        fuzz_write("proc/modules", data, size);
        fuzz_write("proc/interrupts", data, size);
        fuzz_write("proc/cmdline", data, size);
        procfs_set_root(fuzz_path("proc"));
        r = procfs_module_loaded(NULL, "vfio_pci");
        if (r != procfs_modules_has(text, size, "vfio_pci"))
                abort();
        r = procfs_interrupt_remapping(NULL, &ir, &plain);
        if (r != procfs_interrupts_remapping(text, size, NULL, NULL))
                abort();
        r = procfs_read_cmdline(NULL, &cmdline);
        if (r == 0 && strchr(cmdline, '\n'))
                abort();
        if (r != 0 && r != -EFBIG)
                abort();
        free(cmdline);
        procfs_set_root(NULL);
        return 0;
}
