/* SPDX-License-Identifier: MIT */
/*
 * Manager.ListProcesses() -> s: the process document of every GPU, as GetDocument("process")
 * answers it (amdsmi process --json). Other users' processes when the caller is root or polkit
 * allows it org.amdsmi1.process.list (active local sessions by default), else the caller's own
 * only, with a note saying so.
 */
#include "config.h"

#include <errno.h>

#include "amdsmid.h"
#include "select.h"

static int method_list_processes(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(selection_clear) struct selection sel = {};
        json_object *doc = NULL, *notes = NULL;
        int r;

        r = document_build_for(userdata, m, document_find_verb("process"), &sel,
                               method_list_processes, &doc, &notes, error);
        if (r != 0)
                return r;
        if (notes)
                json_object_object_add(doc, "notes", notes);
        return bus_reply_json(m, doc);
}

const sd_bus_vtable process_manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("ListProcesses", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
                                method_list_processes, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};
