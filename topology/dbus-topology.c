/* SPDX-License-Identifier: MIT */
/*
 * Manager.GetTopology() -> s: the "topology" document of every GPU (topology-json.h), as
 * `amdsmi topology --json` prints it; GetDocument("topology", {"gpus": ...}) selects GPUs and
 * partitions. Reading it touches only the KFD topology and the PCI and XGMI files, never a
 * partition or pm file, and never xgmi_error (its read clears it).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "amdsmid.h"

static int method_get_topology(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        json_object *doc = NULL;
        int r;

        r = document_build_all(d, "topology", &doc);
        if (r < 0)
                return bus_error_errno(error, r, "cannot read the topology: %s", strerror(-r));
        return bus_reply_json(m, doc);
}

const sd_bus_vtable topology_manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("GetTopology", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
                                method_get_topology, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};
