/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the KFD SMI event lines (health/health-events.c): the input as one line for
 * amdsmi_event_parse(), and as what the event fd yields, through the reader on a pipe (read a
 * few events at a time). Checks: a decoded line has a kind in range, its id, and terminated,
 * printable text; the reader returns every line exactly once (as many events as newlines), and
 * each carries the node it was read from.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "health-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_event(const struct amdsmi_event *ev) {
        size_t n = strnlen(ev->text, sizeof(ev->text));

        if (n == sizeof(ev->text) || (unsigned) ev->kind >= _AMDSMI_EVENT_KIND_MAX)
                abort();
        for (size_t i = 0; i < n; i++)
                if (ev->text[i] < 0x20 || ev->text[i] > 0x7e)
                        abort();
        if (ev->kind != AMDSMI_EVENT_UNKNOWN && ev->id != (unsigned) ev->kind)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct amdsmi_events *events = NULL;
        struct amdsmi_event ev[3];
        size_t lines = 0, got = 0;
        int p[2], r;

        if (size > 8192)
                return 0;
        ev[0].id = 12345;
        r = amdsmi_event_parse((const char *) data, size, &ev[0]);
        if (r == 0)
                check_event(&ev[0]);
        else if (r != -EBADMSG || ev[0].id != 12345)
                abort();

        /* the reader: every complete line once (an over-long one cut into pieces of 4 KiB) */
        for (size_t i = 0, run = 0; i < size; i++) {
                run++;
                if (data[i] == '\n') {
                        lines++;
                        run = 0;
                } else if (run == 4096) {
                        lines++;
                        run = 0;
                }
        }
        if (pipe2(p, O_CLOEXEC) < 0)
                abort();
        if (size > 0 && write(p[1], data, size) != (ssize_t) size)
                abort();
        close(p[1]);
        if (events_new_from_fd(p[0], 77, 1, &events) < 0)
                abort();
        for (;;) {
                r = amdsmi_events_read(events, ev, 3);
                if (r == -ENODEV)
                        break;
                if (r <= 0 || r > 3)
                        abort();
                for (int i = 0; i < r; i++) {
                        check_event(&ev[i]);
                        if (ev[i].kfd_gpu_id != 77 || ev[i].partition != 1)
                                abort();
                }
                got += (size_t) r;
        }
        if (got != lines)
                abort();
        amdsmi_events_close(events);
        return 0;
}
