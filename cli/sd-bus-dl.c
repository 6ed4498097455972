/* SPDX-License-Identifier: MIT */
/* sd-bus loaded on first use (sd-bus-dl.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

#include "sd-bus-dl.h"

#define SD_BUS_DL_DEFINE(f) typeof(f) *sym_##f;
SD_BUS_DL_SYMBOLS(SD_BUS_DL_DEFINE)
#undef SD_BUS_DL_DEFINE

int sd_bus_dl_load(void) {
        static int result = 1; /* 1: not tried yet */
        void *dl;

        if (result <= 0)
                return result;
        /* never unloaded: the pointers stay valid until exit */
        dl = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!dl)
                return (result = -EOPNOTSUPP);
#define LOAD(f)                                        \
        *(void **) &sym_##f = dlsym(dl, #f);           \
        if (!sym_##f)                                  \
                return (result = -EOPNOTSUPP);
        SD_BUS_DL_SYMBOLS(LOAD)
#undef LOAD
        return (result = 0);
}
