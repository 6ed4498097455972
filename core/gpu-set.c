/* SPDX-License-Identifier: MIT */
/* The GPUs a run concerns (gpu-set.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu-set.h"
#include "macro.h"

int gpu_set_attach(struct gpu_set *s, struct amdsmi_ctx *ctx, const char *bdf) {
        size_t n = amdsmi_ctx_get_gpu_count(ctx);
        struct select_match *matches;
        bool found = false;

        matches = calloc(n ? n : 1, sizeof(*matches));
        if (!matches)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(ctx, i);

                if (!gpu || (bdf && strcmp(amdsmi_gpu_get_bdf(gpu), bdf) != 0))
                        continue;
                matches[i] = (struct select_match){ .selected = true, .all_partitions = true };
                found = true;
        }
        if (bdf && !found) {
                free(matches);
                return -ENOENT;
        }
        free(s->matches);
        s->matches = matches;
        s->n_gpus = n;
        s->ctx = ctx;
        return 0;
}

int gpu_set_resolve(struct gpu_set *s, struct amdsmi_ctx *ctx, struct selection *sel,
                    struct report *r, unsigned flags) {
        struct select_target *targets = NULL;
        struct select_match *matches = NULL;
        bool need_partitions = false;
        size_t n, failed = 0;
        int k;

        n = amdsmi_ctx_get_gpu_count(ctx);
        targets = calloc(n ? n : 1, sizeof(*targets));
        matches = calloc(n ? n : 1, sizeof(*matches));
        if (!targets || !matches) {
                free(targets);
                free(matches);
                return report_fail(r, -ENOMEM, "out of memory");
        }
        /* Partition counts come from the KFD topology walk: only pay for it when a selector
         * names a partition (metric must stay cheap). */
        for (size_t i = 0; i < sel->n_items; i++)
                if (sel->items[i].partition != SELECT_NO_PARTITION)
                        need_partitions = true;
        for (size_t i = 0; i < n; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(ctx, i);

                targets[i].bdf = gpu ? amdsmi_gpu_get_bdf(gpu) : NULL;
                targets[i].unique_id =
                        gpu ? amdsmi_gpu_get_string(gpu, AMDSMI_STRING_UNIQUE_ID) : NULL;
                targets[i].n_partitions =
                        gpu && need_partitions ? amdsmi_gpu_get_partition_count(gpu) : 0;
        }

        k = selection_resolve(sel, targets, n, matches, &failed);
        if (k == -ENOENT) {
                const struct selector *f = &sel->items[failed];
                size_t at = n;

                if (f->kind == SELECTOR_BDF)
                        for (at = 0; at < n; at++)
                                if (targets[at].bdf && strcasecmp(targets[at].bdf, f->bdf) == 0)
                                        break;
                if (f->kind == SELECTOR_UNIQUE_ID)
                        report_fail(r, k, "no AMD GPU with unique id 0x%s%s", f->unique_id,
                                    flags & GPU_SET_AGAIN ? " any more" : "");
                else if (f->kind == SELECTOR_BDF && at < n)
                        report_fail(r, k, "GPU %s has no partition %u (it has %zu)", f->bdf,
                                    f->partition, targets[at].n_partitions);
                else if (f->kind == SELECTOR_BDF)
                        report_fail(r, k, "no AMD GPU at %s%s", f->bdf,
                                    flags & GPU_SET_AGAIN ? " any more" : "");
                else if (f->index >= n)
                        report_fail(r, k, "GPU %u not found (%zu GPU%s present)", f->index, n,
                                    n == 1 ? "" : "s");
                else
                        report_fail(r, k, "GPU %u has no partition %u (it has %zu)", f->index,
                                    f->partition, targets[f->index].n_partitions);
        } else if (k < 0) {
                report_fail(r, k, "cannot resolve the GPU selection: %s", strerror(-k));
        } else if (flags & GPU_SET_PIN) {
                /* a watch follows the GPUs it started with, whatever their index becomes */
                selection_pin(sel, targets, n);
        }
        free(targets);
        if (k < 0) {
                free(matches);
                return k;
        }
        free(s->matches);
        s->matches = matches;
        s->n_gpus = n;
        s->ctx = ctx;
        return 0;
}

void gpu_set_clear(struct gpu_set *s) {
        free(s->matches);
        *s = (struct gpu_set){};
}

/* gpu_state_batch_begin(): the states found since (a GPU past the last slot is read anew). */
static struct {
        bool on;
        size_t n;
        struct amdsmi_gpu *gpu[256];
        enum gpu_state state[256];
} batch;

void gpu_state_batch_begin(void) {
        batch.on = true;
        batch.n = 0;
}

void gpu_state_batch_end(void) {
        batch.on = false;
        batch.n = 0;
}

static enum gpu_state state_read(struct amdsmi_gpu *gpu) {
        /* a host's VF waits unbound for vfio-pci and a VM: that is its normal state */
        if (amdsmi_gpu_get_driver(gpu) == AMDSMI_DRIVER_NONE)
                return amdsmi_gpu_get_role(gpu) == AMDSMI_ROLE_VF ? GPU_STATE_OK
                                                                  : GPU_STATE_NO_DRIVER;
        /* other failures (and a GPU without pm files) are the values' own to report */
        return amdsmi_gpu_check_ready(gpu) == -EBUSY ? GPU_STATE_RESETTING : GPU_STATE_OK;
}

enum gpu_state gpu_state_read(struct amdsmi_gpu *gpu) {
        enum gpu_state st;

        if (!batch.on)
                return state_read(gpu);
        for (size_t i = 0; i < batch.n; i++)
                if (batch.gpu[i] == gpu)
                        return batch.state[i];
        st = state_read(gpu);
        if (batch.n < ELEMENTSOF(batch.gpu)) {
                batch.gpu[batch.n] = gpu;
                batch.state[batch.n++] = st;
        }
        return st;
}

const char *gpu_state_to_string(enum gpu_state s) {
        switch (s) {
        case GPU_STATE_RESETTING:
                return "resetting";
        case GPU_STATE_NO_DRIVER:
                return "no_driver";
        default:
                return "ok";
        }
}

int gpu_state_errno(enum gpu_state s) {
        switch (s) {
        case GPU_STATE_RESETTING:
                return -EBUSY;
        case GPU_STATE_NO_DRIVER:
                return -EOPNOTSUPP;
        default:
                return 0;
        }
}

const char *gpu_state_message(enum gpu_state s) {
        switch (s) {
        case GPU_STATE_RESETTING:
                return "a GPU reset is in progress (or the GPU is suspended): the driver "
                       "answers no value until it ends";
        case GPU_STATE_NO_DRIVER:
                return "no driver is bound to this GPU: bind one, or run 'amdsmi reset "
                       "--reload-driver'";
        default:
                return "ok";
        }
}

/* The keys of a GPU's object that say which GPU it is (from PCI and discovery): kept when
 * the GPU has no values. */
static bool is_identity_key(const char *key) {
        static const char *const keys[] = {
                "gpu",
                "bdf",
                "product",
                "role",
                "driver",
                "driver_name",
                "vendor_id",
                "device_id",
                "subsystem_vendor_id",
                "subsystem_device_id",
                "revision",
                "class",
                "is_vf",
                "physfn_bdf",
                "numa_node",
                "control",
        };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (strcmp(key, keys[i]) == 0)
                        return true;
        return false;
}

/* A GPU without values: every other value at the top of its object is null (what a cache
 * such as the KFD topology still knows is not shown as current). */
static void null_values(json_object *o) {
        json_object_object_foreach(o, key, v) {
                if (!v || is_identity_key(key) || json_object_is_type(v, json_type_object) ||
                    json_object_is_type(v, json_type_array))
                        continue;
                json_object_object_add(o, key, NULL);
        }
}

json_object *gpu_state_collect(struct report *r, struct amdsmi_ctx *ctx, size_t index,
                               struct amdsmi_gpu *gpu, gpu_set_fn gpu_fn, void *userdata) {
        enum gpu_state st = gpu_state_read(gpu);
        bool muted = r->mute_field_errors;
        int priority = amdsmi_ctx_get_log_priority(ctx);
        json_object *o;

        /* the values that fail because of the state are null, without a line each (the
         * library's warnings too, unless its debug log is on) */
        r->mute_field_errors = muted || st != GPU_STATE_OK;
        if (st != GPU_STATE_OK && priority <= AMDSMI_LOG_WARNING)
                amdsmi_ctx_set_log_priority(ctx, AMDSMI_LOG_ERR);
        o = gpu_fn(userdata, index, gpu);
        amdsmi_ctx_set_log_priority(ctx, priority);
        r->mute_field_errors = muted;
        if (!o)
                return NULL;
        if (st != GPU_STATE_OK)
                null_values(o);
        json_set(o, "state", json_object_new_string(gpu_state_to_string(st)));
        if (st != GPU_STATE_OK)
                report_field_error_msg(r, (int) index, "state", gpu_state_errno(st),
                                       gpu_state_message(st));
        return o;
}

int gpu_state_refusal(size_t index, struct amdsmi_gpu *gpu, char *buf, size_t size) {
        switch (gpu_state_read(gpu)) {
        case GPU_STATE_RESETTING:
                snprintf(buf, size,
                         "GPU %zu (%s): busy: a GPU reset is in progress (or the GPU is "
                         "suspended); nothing was changed: wait for the reset to end and try "
                         "again",
                         index, amdsmi_gpu_get_bdf(gpu));
                return -EBUSY;
        case GPU_STATE_NO_DRIVER:
                snprintf(buf, size,
                         "GPU %zu (%s): no driver is bound; nothing was changed: bind amdgpu "
                         "to it, or run 'amdsmi reset -g %zu --reload-driver'",
                         index, amdsmi_gpu_get_bdf(gpu), index);
                return -EOPNOTSUPP;
        default:
                return 0;
        }
}

int gpu_set_collect(const struct gpu_set *s, struct report *r, gpu_set_fn gpu_fn,
                    void *userdata, json_object **ret) {
        json_object *gpus = json_object_new_array();

        if (!gpus)
                return report_fail(r, -ENOMEM, "out of memory");
        FOREACH_GPU_IN_SET(s, i, gpu) {
                json_object *o = gpu_state_collect(r, s->ctx, i, gpu, gpu_fn, userdata);

                if (!o) {
                        json_object_put(gpus);
                        return report_fail(r, -ENOMEM, "out of memory");
                }
                json_object_array_add(gpus, o);
        }
        *ret = gpus;
        return 0;
}

void gpu_add_partition_modes(struct report *r, int index, struct amdsmi_gpu *gpu,
                             json_object *obj, bool from_topology) {
        enum amdsmi_compute_mode cm;
        enum amdsmi_memory_mode mm;
        int k = -ENODATA;

        if (from_topology)
                k = amdsmi_gpu_get_topology_compute_mode(gpu, &cm);
        if (k == -ENODATA)
                k = amdsmi_gpu_read_compute_mode(gpu, &cm);
        if (k < 0 && k != -ENODATA)
                report_field_error(r, index, "compute_mode", k);
        json_set(obj, "compute_mode",
                 k < 0 ? NULL : json_object_new_string(amdsmi_compute_mode_to_string(cm)));

        k = amdsmi_gpu_read_memory_mode(gpu, &mm);
        if (k < 0 && k != -ENODATA)
                report_field_error(r, index, "memory_mode", k);
        json_set(obj, "memory_mode",
                 k < 0 ? NULL : json_object_new_string(amdsmi_memory_mode_to_string(mm)));
}

json_object *gpu_partition_count(struct report *r, int index, struct amdsmi_gpu *gpu) {
        int k = amdsmi_gpu_get_partitions_error(gpu);

        if (k < 0) {
                report_field_error(r, index, "partition_count", k);
                return NULL;
        }
        return json_object_new_uint64(amdsmi_gpu_get_partition_count(gpu));
}
