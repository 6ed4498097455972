/* SPDX-License-Identifier: MIT */
/*
 * Manager.Doctor() -> s: the "doctor" document of every GPU (doctor.h), as
 * `amdsmi doctor --json` prints it; GetDocument("doctor", {"gpus": ...}) selects GPUs. Reads
 * only, for any caller: amdsmid reads as root, so the bad-page threshold (debugfs) is there
 * for everyone.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "amdsmid.h"

int doctor_daemon_plan(void *userdata, struct gpu_set *set, struct profile_plan *ret) {
        return fleet_daemon_plan(userdata, set, ret);
}

static int method_doctor(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        json_object *doc = NULL;
        int r;

        r = document_build_all(d, "doctor", &doc);
        if (r < 0)
                return bus_error_errno(error, r, "cannot examine the host: %s", strerror(-r));
        return bus_reply_json(m, doc);
}

const sd_bus_vtable doctor_manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("Doctor", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json), method_doctor,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};
