/* SPDX-License-Identifier: MIT */
/* What every change does besides its own work (change.h). */
#include <unistd.h>

#include "change.h"

int change_record_direct(struct report *r, struct history_entry e, uint64_t max_bytes,
                         bool *warned) {
        int k;

        e.via = "direct";
        e.uid = getuid();
        e.pid = getpid();
        k = history_append(&e, max_bytes);
        if (k < 0 && !(warned && *warned)) {
                if (warned)
                        *warned = true;
                report_note(r, "warning: cannot append to the history: %s",
                            history_error(k, (char[512]){}, 512));
        }
        return k;
}
