/* SPDX-License-Identifier: MIT */
/*
 * The GPUs a run concerns: the GPUs of a library context's last enumeration, with the
 * selection made over them (select.h). amdsmi(1) resolves -g into it, amdsmid selects one GPU
 * or all; the document builders and the change code of the slices walk it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#include "report.h"
#include "select.h"

struct gpu_set {
        struct amdsmi_ctx *ctx;
        size_t n_gpus;
        struct select_match *matches; /* n_gpus entries */
};

/*
 * Selects every GPU of @ctx's last enumeration, or only @bdf (-ENOENT if it has none), without
 * enumerating. The context stays the caller's.
 */
int gpu_set_attach(struct gpu_set *s, struct amdsmi_ctx *ctx, const char *bdf);
/*
 * Resolves @sel (-g) over @ctx's last enumeration into @s: every GPU when @sel is empty. A
 * selector that names no GPU or partition is reported through @r ("GPU 9 not found (8 GPUs
 * present)"; with GPU_SET_AGAIN, a later sample of a watch: "no AMD GPU at BDF any more").
 * GPU_SET_PIN pins @sel's index selectors to the GPUs they named (selection_pin()).
 * @return 0 or a negative errno (reported).
 */
enum {
        GPU_SET_AGAIN = 1u << 0,
        GPU_SET_PIN = 1u << 1,
};
int gpu_set_resolve(struct gpu_set *s, struct amdsmi_ctx *ctx, struct selection *sel,
                    struct report *r, unsigned flags);

/* Frees the selection (not the context). */
void gpu_set_clear(struct gpu_set *s);

/* The GPUs selected, in enumeration order. */
#define FOREACH_GPU_IN_SET(s, i, gpu)                                                           \
        for (size_t i = 0; i < (s)->n_gpus; i++)                                                \
                for (struct amdsmi_gpu *gpu =                                                   \
                             (s)->matches[i].selected ? amdsmi_ctx_get_gpu((s)->ctx, i) : NULL; \
                     gpu; gpu = NULL)

typedef json_object *(*gpu_set_fn)(void *userdata, size_t index, struct amdsmi_gpu *gpu);

/*
 * The state of a GPU as a read shows it: one per GPU, found once per document, in place of
 * a field error per value. A GPU in reset (its pm files answer EBUSY, or EPERM) or with no
 * driver bound has no values to show.
 */
enum gpu_state {
        GPU_STATE_OK,
        GPU_STATE_RESETTING,
        GPU_STATE_NO_DRIVER,
};

/* Finds the state of @gpu: the driver it is bound to, and one read of a pm file. */
enum gpu_state gpu_state_read(struct amdsmi_gpu *gpu);
/* Between these, gpu_state_read() reads each GPU's state once: for a caller that builds
 * several documents at once (amdsmid's Prometheus collection), one pm read per GPU instead of
 * one per GPU and document. Not nested; single-threaded callers only. */
void gpu_state_batch_begin(void);
void gpu_state_batch_end(void);
/* "ok", "resetting", "no_driver": the "state" key of each GPU's object. */
const char *gpu_state_to_string(enum gpu_state s);
/* The error of a GPU in @s (-EBUSY, -EOPNOTSUPP; 0 for ok) and what it means to the user. */
int gpu_state_errno(enum gpu_state s);
const char *gpu_state_message(enum gpu_state s);

/*
 * Reads a GPU's object with @gpu_fn as gpu_set_collect() does: its state first, then the
 * object with "state"; a GPU not ok reports ONE errors entry (field "state") and none of the
 * values that failed because of it. @return the object, or NULL on -ENOMEM.
 */
json_object *gpu_state_collect(struct report *r, struct amdsmi_ctx *ctx, size_t index,
                               struct amdsmi_gpu *gpu, gpu_set_fn gpu_fn, void *userdata);

/*
 * Whether a change of @gpu must be refused before anything is touched: a GPU in reset or
 * without a driver. @return 0 (go on), or -EBUSY (reset: wait for it to end) or -EOPNOTSUPP
 * (no driver: bind one, or amdsmi reset --reload-driver) with the message for the user, what
 * to do included, in @buf.
 */
int gpu_state_refusal(size_t index, struct amdsmi_gpu *gpu, char *buf, size_t size);

/* One JSON object per selected GPU, built by @gpu_fn (NULL means out of memory), through
 * gpu_state_collect().
 * @return 0 and the array in @ret, or the negative errno of the failure (reported). */
int gpu_set_collect(const struct gpu_set *s, struct report *r, gpu_set_fn gpu_fn,
                    void *userdata, json_object **ret);

/* compute_mode and memory_mode of a GPU's object. With from_topology, the compute mode comes
 * from the KFD topology (never wakes the GPU) and the partition file is read only when that
 * is unknown. */
void gpu_add_partition_modes(struct report *r, int index, struct amdsmi_gpu *gpu,
                             json_object *obj, bool from_topology);
/* The GPU's partition count, or null (with an errors entry) when its KFD topology is broken. */
json_object *gpu_partition_count(struct report *r, int index, struct amdsmi_gpu *gpu);
