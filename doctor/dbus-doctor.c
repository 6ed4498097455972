/* SPDX-License-Identifier: MIT */
/*
 * Manager.Doctor() -> s: the "doctor" document of every GPU (doctor.h), as
 * `amdsmi doctor --json` prints it; GetDocument("doctor", {"gpus": ...}) selects GPUs. Reads
 * only, for any caller; the bad-page threshold (debugfs, root-only) as the health document
 * gives it: to root and to callers polkit allows org.amdsmi1.health.read-privileged, else said
 * as unknown (needs root), as an unprivileged in-process run says it.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "amdsmid.h"
#include "select.h"

int doctor_daemon_plan(void *userdata, struct gpu_set *set, struct profile_plan *ret) {
        return fleet_daemon_plan(userdata, set, ret);
}

static int method_doctor(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(selection_clear) struct selection sel = {};
        json_object *doc = NULL, *notes = NULL;
        int r;

        r = document_build_for(userdata, m, document_find_verb("doctor"), &sel, method_doctor, &doc,
                               &notes, error);
        if (r != 0)
                return r;
        if (notes)
                json_object_object_add(doc, "notes", notes);
        return bus_reply_json(m, doc);
}

const sd_bus_vtable doctor_manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("Doctor", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json), method_doctor,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};
