/* SPDX-License-Identifier: MIT */
/* amdsmi list: one row per GPU. */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "bus-errors.h"
#include "cli.h"
#include "documents.h"

static const struct column_def list_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", "BDF", "bdf", 0 },
        { "product", "PRODUCT", "product", 0 },
        { "role", "ROLE", "role", 0 },
        { "driver", "DRIVER", "driver", 0 },
        { "partition_count", "PARTITIONS", "partition_count", 0 },
        { "compute_mode", "COMPUTE", "compute_mode", 0 },
        { "memory_mode", "MEMORY", "memory_mode", 0 },
        { "unique_id", "UNIQUE ID", "unique_id", 0 },
};

static int list_sample(struct cli *c) {
        struct columns cols = {};
        json_object *gpus;
        int r;

        r = cli_print_daemon_text(c, "list");
        if (r != 0)
                return r < 0 ? r : 0;
        r = cli_collect_document(c, "list", list_gpu, &gpus);
        if (r != 0)
                return r;

        r = columns_add_defs(&cols, list_columns, ELEMENTSOF(list_columns));
        if (r < 0) {
                json_object_put(gpus);
                columns_free(&cols);
                return cli_fail(c, r, "out of memory");
        }
        r = cli_emit(c, gpus, &cols);
        columns_free(&cols);
        return r;
}

int verb_list(struct cli *c) {
        return cli_open_run(c, list_sample);
}
