/* SPDX-License-Identifier: MIT */
/* The list document: one object per GPU (documents.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "documents.h"

json_object *doc_gpu_new(size_t index, struct amdsmi_gpu *gpu) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "gpu", json_object_new_uint64(index));
        json_set(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_set(o, "product", json_object_new_string(amdsmi_gpu_get_product(gpu)));
        json_set(o, "role",
                 json_object_new_string(amdsmi_role_to_string(amdsmi_gpu_get_role(gpu))));
        json_set(o, "driver",
                 json_object_new_string(amdsmi_driver_to_string(amdsmi_gpu_get_driver(gpu))));
        return o;
}

json_object *doc_unique_id(const char *s) {
        char buf[24];

        if (!s)
                return NULL;
        if (format_unique_id(s, buf, sizeof(buf)) < 0)
                return json_object_new_string(s);
        return json_object_new_string(buf);
}

json_object *list_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        json_object *o = doc_gpu_new(index, gpu);

        if (!o)
                return NULL;
        json_set(o, "partition_count", gpu_partition_count(q->report, (int) index, gpu));
        gpu_add_partition_modes(q->report, (int) index, gpu, o, true);
        json_set(o, "unique_id",
                 doc_unique_id(amdsmi_gpu_get_string(gpu, AMDSMI_STRING_UNIQUE_ID)));
        return o;
}


struct collect {
        const struct doc_query *q;
        doc_gpu_fn fn;
};

static json_object *collect_one(void *userdata, size_t index, struct amdsmi_gpu *gpu) {
        struct collect *k = userdata;

        return k->fn(k->q, index, gpu);
}

int doc_collect(const struct doc_query *q, doc_gpu_fn fn, json_object **ret) {
        struct collect k = { q, fn };

        return gpu_set_collect(q->set, q->report, collect_one, &k, ret);
}

json_object *list_document(const struct doc_query *q) {
        json_object *gpus;

        report_begin_sample(q->report);
        if (doc_collect(q, list_gpu, &gpus) != 0)
                return NULL;
        return report_document(q->report, gpus);
}
