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

        r = cli_collect_gpus(c, list_gpu, &gpus);
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

/* Whether amdsmid's Describe() document has the shape this code reads: an object whose "gpus"
 * is an array of objects and whose "errors", if any, is an array (json-c asserts the type of
 * what it edits or indexes; a confused daemon must not abort the CLI). */
static bool describe_usable(json_object *doc, json_object **ret_gpus) {
        json_object *gpus, *errors;

        if (!json_object_is_type(doc, json_type_object) ||
            !json_object_object_get_ex(doc, "gpus", &gpus) ||
            !json_object_is_type(gpus, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(gpus); i++)
                if (!json_object_is_type(json_object_array_get_idx(gpus, i), json_type_object))
                        return false;
        if (json_object_object_get_ex(doc, "errors", &errors) &&
            !json_object_is_type(errors, json_type_array))
                return false;
        *ret_gpus = gpus;
        return true;
}

/* With amdsmid running and no -g: its Describe() document, the same one (amdsmid builds it
 * with list_document()) from its cache, without reading the GPUs again. @return 1 when it
 * answered, 0 to read in-process, or a negative errno (reported). */
static int list_from_daemon(struct cli *c) {
        _cleanup_free_ char *message = NULL;
        struct columns cols = {};
        json_object *doc = NULL, *gpus, *errors;
        int r;

        if (c->direct || c->selection.n_items > 0 || !cli_daemon_running(c))
                return 0;
        r = cli_bus_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, "Describe", 0, &doc,
                         &message, NULL);
        if (r < 0 || !doc || !describe_usable(doc, &gpus)) {
                json_object_put(doc);
                return 0; /* an older or confused amdsmid: read in-process */
        }
        /* what only amdsmid adds */
        json_object_object_del(doc, "daemon");
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object_object_del(json_object_array_get_idx(gpus, i), "object_path");
                json_object_object_del(json_object_array_get_idx(gpus, i), "changing");
        }
        if (c->format == OUTPUT_JSON) {
                r = cli_print_json(c, doc);
                json_object_put(doc);
                return r < 0 ? r : 1;
        }
        if (json_object_object_get_ex(doc, "errors", &errors))
                for (size_t i = 0; i < json_object_array_length(errors); i++) {
                        json_object *m;

                        if (json_object_object_get_ex(json_object_array_get_idx(errors, i),
                                                      "message", &m))
                                fprintf(stderr, "amdsmi: %s\n", json_object_get_string(m));
                }
        r = columns_add_defs(&cols, list_columns, ELEMENTSOF(list_columns));
        if (r >= 0)
                r = cli_emit(c, json_object_get(gpus), &cols);
        columns_free(&cols);
        json_object_put(doc);
        return r < 0 ? r : 1;
}

int verb_list(struct cli *c) {
        int r = list_from_daemon(c);

        if (r != 0)
                return r < 0 ? r : 0;
        return cli_open_run(c, list_sample);
}
