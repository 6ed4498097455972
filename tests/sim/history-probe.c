/* SPDX-License-Identifier: MIT */
/*
 * Appends one entry to the history through daemon/history.c, as amdsmid and amdsmi --direct
 * do (test-sim-history.py reads it back with amdsmi history):
 *
 *   history-probe TIME_USEC VIA UID GPU CHANGE OLD NEW ERRNO MESSAGE [MAX_BYTES]
 *
 * "-" stands for NULL (JSON null); TIME_USEC 0 is now; ERRNO is 0 or a positive errno.
 * Exit status 0, or the errno of history_append().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

static const char *arg(const char *s) {
        return strcmp(s, "-") == 0 ? NULL : s;
}

int main(int argc, char **argv) {
        struct history_entry e;
        int r;

        if (argc != 10 && argc != 11) {
                fprintf(stderr, "usage: history-probe TIME_USEC VIA UID GPU CHANGE OLD NEW ERRNO "
                                "MESSAGE [MAX_BYTES]\n");
                return 2;
        }
        e = (struct history_entry){
                .time_usec = strtoull(argv[1], NULL, 10),
                .via = arg(argv[2]),
                .uid = (uid_t) strtoul(argv[3], NULL, 10),
                .pid = 4242,
                .sender = arg(argv[2]) && strcmp(argv[2], "amdsmid") == 0 ? ":1.42" : NULL,
                .gpu = arg(argv[4]),
                .change = arg(argv[5]),
                .old_value = arg(argv[6]),
                .new_value = arg(argv[7]),
                .result = -atoi(argv[8]),
                .message = arg(argv[9]),
        };
        r = history_append(&e, argc == 11 ? strtoull(argv[10], NULL, 10) : 0);
        if (r < 0) {
                fprintf(stderr, "history-probe: %s\n", strerror(-r));
                return -r;
        }
        return 0;
}
