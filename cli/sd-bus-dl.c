/* SPDX-License-Identifier: MIT */
/* sd-bus loaded on first use (sd-bus-dl.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

#include "sd-bus-dl.h"

#define SD_BUS_DL(f) typeof(f) *sym_##f
SD_BUS_DL(sd_bus_open_system);
SD_BUS_DL(sd_bus_flush_close_unref);
SD_BUS_DL(sd_bus_error_add_map);
SD_BUS_DL(sd_bus_error_free);
SD_BUS_DL(sd_bus_error_get_errno);
SD_BUS_DL(sd_bus_path_encode);
SD_BUS_DL(sd_bus_call_method);
SD_BUS_DL(sd_bus_call_async);
SD_BUS_DL(sd_bus_process);
SD_BUS_DL(sd_bus_wait);
SD_BUS_DL(sd_bus_slot_unref);
SD_BUS_DL(sd_bus_message_new_method_call);
SD_BUS_DL(sd_bus_message_set_allow_interactive_authorization);
SD_BUS_DL(sd_bus_message_set_auto_start);
SD_BUS_DL(sd_bus_message_append);
SD_BUS_DL(sd_bus_message_appendv);
SD_BUS_DL(sd_bus_message_append_strv);
SD_BUS_DL(sd_bus_message_open_container);
SD_BUS_DL(sd_bus_message_close_container);
SD_BUS_DL(sd_bus_message_read);
SD_BUS_DL(sd_bus_message_skip);
SD_BUS_DL(sd_bus_message_rewind);
SD_BUS_DL(sd_bus_message_ref);
SD_BUS_DL(sd_bus_message_unref);
SD_BUS_DL(sd_bus_message_is_method_error);
SD_BUS_DL(sd_bus_message_get_error);
SD_BUS_DL(sd_bus_message_get_signature);
#undef SD_BUS_DL

int sd_bus_dl_load(void) {
        static int result = 1; /* 1: not tried yet */
        void *dl;

        if (result <= 0)
                return result;
        /* never unloaded: the pointers stay valid until exit */
        dl = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!dl)
                return (result = -EOPNOTSUPP);
#define LOAD(f)                                       \
        do {                                          \
                *(void **) &sym_##f = dlsym(dl, #f);  \
                if (!sym_##f)                         \
                        return (result = -EOPNOTSUPP); \
        } while (0)
        LOAD(sd_bus_open_system);
        LOAD(sd_bus_flush_close_unref);
        LOAD(sd_bus_error_add_map);
        LOAD(sd_bus_error_free);
        LOAD(sd_bus_error_get_errno);
        LOAD(sd_bus_path_encode);
        LOAD(sd_bus_call_method);
        LOAD(sd_bus_call_async);
        LOAD(sd_bus_process);
        LOAD(sd_bus_wait);
        LOAD(sd_bus_slot_unref);
        LOAD(sd_bus_message_new_method_call);
        LOAD(sd_bus_message_set_allow_interactive_authorization);
        LOAD(sd_bus_message_set_auto_start);
        LOAD(sd_bus_message_append);
        LOAD(sd_bus_message_appendv);
        LOAD(sd_bus_message_append_strv);
        LOAD(sd_bus_message_open_container);
        LOAD(sd_bus_message_close_container);
        LOAD(sd_bus_message_read);
        LOAD(sd_bus_message_skip);
        LOAD(sd_bus_message_rewind);
        LOAD(sd_bus_message_ref);
        LOAD(sd_bus_message_unref);
        LOAD(sd_bus_message_is_method_error);
        LOAD(sd_bus_message_get_error);
        LOAD(sd_bus_message_get_signature);
#undef LOAD
        return (result = 0);
}
