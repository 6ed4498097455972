/* SPDX-License-Identifier: MIT */
/*
 * sd-bus for amdsmi(1), loaded when the CLI first talks to amdsmid (dlopen, as systemd loads
 * its optional libraries), not at every start: libsystemd brings libgcrypt, liblzma, libzstd,
 * liblz4 and libcap with it, most of a read's start-up time, and a read without amdsmid or a
 * --direct change never uses the bus. Only cli/bus.c calls sd-bus, through these pointers.
 */
#pragma once

#include <systemd/sd-bus.h>

/*
 * Loads libsystemd.so.0 and its sd-bus calls (once; later calls return the first result).
 * @return 0, or -EOPNOTSUPP when the library or one of its calls is missing.
 */
int sd_bus_dl_load(void);

/* Every call of sd-bus the CLI makes: X(name) for each. */
#define SD_BUS_DL_SYMBOLS(X) \
        X(sd_bus_open_system) \
        X(sd_bus_flush_close_unref) \
        X(sd_bus_error_add_map) \
        X(sd_bus_error_free) \
        X(sd_bus_error_get_errno) \
        X(sd_bus_path_encode) \
        X(sd_bus_call) \
        X(sd_bus_call_method) \
        X(sd_bus_call_async) \
        X(sd_bus_process) \
        X(sd_bus_wait) \
        X(sd_bus_slot_unref) \
        X(sd_bus_message_new_method_call) \
        X(sd_bus_message_set_allow_interactive_authorization) \
        X(sd_bus_message_set_auto_start) \
        X(sd_bus_message_append) \
        X(sd_bus_message_appendv) \
        X(sd_bus_message_append_strv) \
        X(sd_bus_message_open_container) \
        X(sd_bus_message_close_container) \
        X(sd_bus_message_read) \
        X(sd_bus_message_read_strv) \
        X(sd_bus_message_skip) \
        X(sd_bus_message_rewind) \
        X(sd_bus_message_ref) \
        X(sd_bus_message_unref) \
        X(sd_bus_message_is_method_error) \
        X(sd_bus_message_get_error) \
        X(sd_bus_message_get_signature) \
        X(sd_bus_message_get_path) \
        X(sd_bus_match_signal) \
        X(sd_bus_get_fd) \
        X(sd_bus_get_events) \
        X(sd_bus_get_timeout)

#define SD_BUS_DL_DECLARE(f) extern typeof(f) *sym_##f;
SD_BUS_DL_SYMBOLS(SD_BUS_DL_DECLARE)
#undef SD_BUS_DL_DECLARE

/* The cleanup helpers of sd-bus.h call libsystemd directly: these go through the pointers. */
static inline void sym_sd_bus_message_unrefp(sd_bus_message **m) {
        if (*m)
                sym_sd_bus_message_unref(*m);
}
static inline void sym_sd_bus_slot_unrefp(sd_bus_slot **s) {
        if (*s)
                sym_sd_bus_slot_unref(*s);
}
static inline void sym_sd_bus_error_freep(sd_bus_error *e) {
        sym_sd_bus_error_free(e);
}
