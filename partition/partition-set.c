/* SPDX-License-Identifier: MIT */
/*
 * The compute-partition switch on bare metal (spec amdgpu-sysfs §2.1, §6.3), the KFD users
 * that block it, and the change reports every change function fills.
 *
 * A switch: read the state, validate the mode with the plan (the kernel's order: hardware
 * set, same mode, memory mode), list the KFD users (the kernel's EBUSY, but with names), write
 * current_compute_partition, read the mode back, wait until the KFD topology has settled
 * (generation_id stable, one node per new partition; the context's mapping is redone, so old
 * partition handles turn stale), and read the mode once more. A failure after the write
 * restores the previous mode the same way. A write that fails with EIO may have switched the
 * hardware while KFD failed to come back (its nodes stay gone until a driver reload): the
 * mode is read after every failed write to decide whether anything has to be restored, and
 * without KFD the restore is verified by the mode alone.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parse-util.h"
#include "partition-private.h"
#include "sysfs.h"
#include "time-util.h"

#define DEFAULT_TIMEOUT_MS 30000U
#define SETTLE_POLL_MS 25U
#define RELOAD_HINT "only a driver reload (amdsmi reset --reload-driver) brings KFD back"

int change_init(struct amdsmi_partition_change *c) {
        uint32_t size = c->size;

        if (size < sizeof(*c))
                return -EINVAL;
        memset(c, 0, sizeof(*c));
        c->size = size;
        c->compute_before = c->compute_after = AMDSMI_COMPUTE_UNKNOWN;
        c->memory_before = c->memory_after = c->memory_pending = AMDSMI_MEMORY_UNKNOWN;
        return 0;
}

int change_finish(struct amdsmi_partition_change *c, int r, enum amdsmi_change_stage stage) {
        c->error = r < 0 ? r : 0;
        c->stage = r < 0 ? stage : AMDSMI_STAGE_DONE;
        return r;
}

_public_ const char *amdsmi_change_stage_to_string(enum amdsmi_change_stage stage) {
        switch (stage) {
        case AMDSMI_STAGE_DONE:
                return "done";
        case AMDSMI_STAGE_PREFLIGHT:
                return "preflight";
        case AMDSMI_STAGE_WRITE:
                return "write";
        case AMDSMI_STAGE_SETTLE:
                return "settle";
        case AMDSMI_STAGE_VERIFY:
                return "verify";
        case AMDSMI_STAGE_UNBIND:
                return "unbind";
        case AMDSMI_STAGE_BIND:
                return "bind";
        }
        return NULL;
}

/* Sets the report's message (printf style), cut to its size. */
_printf_(2, 3) static void change_message(struct amdsmi_partition_change *c, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(c->message, sizeof(c->message), fmt, ap);
        va_end(ap);
}

/* Appends to the report's message; false (and nothing appended) when it does not fit. */
_printf_(2, 3) static bool change_message_append(struct amdsmi_partition_change *c, const char *fmt,
                                                 ...) {
        size_t len = strlen(c->message);
        char buf[sizeof(c->message)];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (n < 0 || len + (size_t) n >= sizeof(c->message))
                return false;
        memcpy(c->message + len, buf, (size_t) n + 1);
        return true;
}

/* The KFD users of gpu (amdsmi_ctx_read_processes(): a process with an entry for one of its
 * partitions holds it, in use or not), sorted by PID, in a new array, without this process
 * unless @include_self. Returns their number. */
static int list_users(struct amdsmi_gpu *gpu, bool include_self, struct amdsmi_kfd_process **ret) {
        struct amdsmi_process_list *list = NULL;
        _cleanup_free_ struct amdsmi_kfd_process *procs = NULL;
        pid_t self = getpid();
        size_t n_procs = 0;
        int r;

        *ret = NULL;
        r = amdsmi_ctx_read_processes(gpu->ctx, AMDSMI_PROCESS_BRIEF, &list);
        if (r < 0)
                return r;
        /* read after the refresh the reader did: the partitions of now */
        r = gpu->partitions_error;
        if (r < 0 || gpu->n_partitions == 0 || list->n_processes == 0)
                goto finish;
        procs = calloc(list->n_processes, sizeof(*procs));
        if (!procs) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < list->n_processes; i++) {
                const struct amdsmi_process *p = &list->processes[i];
                struct amdsmi_kfd_process *k = &procs[n_procs];
                bool uses = false, vram_known = true;
                uint64_t vram = 0;

                if (!include_self && p->pid == (int32_t) self)
                        continue;
                for (size_t j = 0; j < p->n_nodes; j++) {
                        if (p->nodes[j].gpu_index != (int32_t) gpu->index)
                                continue;
                        uses = true;
                        if (p->nodes[j].vram_bytes == AMDSMI_NA)
                                vram_known = false;
                        else
                                vram += p->nodes[j].vram_bytes;
                }
                if (!uses)
                        continue;
                *k = (struct amdsmi_kfd_process){
                        .pid = p->pid,
                        .vram_bytes = vram_known ? vram : AMDSMI_NA,
                };
                snprintf(k->bdf, sizeof(k->bdf), "%s", gpu->bdf);
                /* the kernel's comm fits (15 bytes); a longer one is cut. Any process may
                 * name itself with control characters (prctl): they become '?', since the
                 * name goes into messages printed on terminals */
                memcpy(k->comm, p->comm, sizeof(k->comm) - 1);
                k->comm[sizeof(k->comm) - 1] = '\0';
                for (char *c = k->comm; *c; c++)
                        if ((unsigned char) *c < 0x20 || (unsigned char) *c == 0x7f)
                                *c = '?';
                n_procs++;
        }
        r = 0;
finish:
        amdsmi_process_list_free(list);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(procs);
        return (int) n_procs;
}

_public_ int amdsmi_gpu_list_kfd_processes(struct amdsmi_gpu *gpu, struct amdsmi_kfd_process *ret,
                                           size_t max) {
        _cleanup_free_ struct amdsmi_kfd_process *procs = NULL;
        int n;

        if (max > 0 && !ret)
                return -EINVAL;
        n = list_users(gpu, true, &procs);
        if (n < 0)
                return n;
        for (size_t i = 0; i < (size_t) n && i < max; i++)
                ret[i] = procs[i];
        return n;
}

int change_add_blockers(struct amdsmi_partition_change *c, struct amdsmi_gpu *gpu,
                        bool include_self) {
        _cleanup_free_ struct amdsmi_kfd_process *procs = NULL;
        int n;

        n = list_users(gpu, include_self, &procs);
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                if (c->n_blockers < AMDSMI_CHANGE_MAX_PROCESSES)
                        c->blockers[c->n_blockers] = procs[i];
                c->n_blockers++;
        }
        return n;
}

/* "3 processes use GPU 0000:05:00.0 through KFD: 4242 (python3), 4243, ..." for the n
 * blockers of gpu (the report's first ones). */
static void message_blockers(struct amdsmi_partition_change *c, struct amdsmi_gpu *gpu,
                             unsigned n) {
        unsigned stored = n < AMDSMI_CHANGE_MAX_PROCESSES ? n : AMDSMI_CHANGE_MAX_PROCESSES;

        change_message(c, "%u process%s use%s GPU %s through KFD:", n, n == 1 ? "" : "es",
                       n == 1 ? "s" : "", gpu->bdf);
        for (unsigned i = 0; i < stored; i++) {
                const struct amdsmi_kfd_process *p = &c->blockers[i];
                char item[64];
                bool last = i + 1 == n;

                if (p->comm[0])
                        snprintf(item, sizeof(item), "%s %d (%s)", i ? "," : "", p->pid, p->comm);
                else
                        snprintf(item, sizeof(item), "%s %d", i ? "," : "", p->pid);
                /* the last one needs no room for ", ..." after it */
                if (strlen(c->message) + strlen(item) + (last ? 0 : 5) >= sizeof(c->message))
                        break;
                (void) change_message_append(c, "%s", item);
                if (last)
                        return;
        }
        (void) change_message_append(c, ", ...");
}

/* The GPU went away (hot-unplug, or the driver unbound): current_compute_partition, which
 * existed when the change began, vanished with the driver's files or the PCI function. */
static bool gpu_gone(struct amdsmi_gpu *gpu) {
        char path[256];

        snprintf(path, sizeof(path), "%s/current_compute_partition", gpu->syspath);
        return sysfs_exists(gpu->ctx, path) == -ENOENT;
}

/* The PCI function is gone: its bus/pci/devices link vanished. */
static bool device_gone(struct amdsmi_gpu *gpu) {
        return sysfs_exists(gpu->ctx, gpu->syspath) == -ENOENT;
}

/* One store of current_compute_partition. Returns the driver's errno as it is. */
static int write_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode mode) {
        char path[256];

        snprintf(path, sizeof(path), "%s/current_compute_partition", gpu->syspath);
        return sysfs_write_string(gpu->ctx, path, amdsmi_compute_mode_to_string(mode));
}

/* Reads the mode during a change, after it was read once: the file is gone only when the
 * GPU went away (-ENODEV). */
static int read_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode *ret) {
        int r = amdsmi_gpu_read_compute_mode(gpu, ret);

        if (r == -ENODATA || r == -ENOENT || r == -ENODEV)
                return -ENODEV;
        return r;
}

/* Waits until the KFD topology has settled with @want nodes of gpu: the context's mapping
 * redone, and generation_id unchanged from before that mapping to after it. The kernel's
 * store returns after KFD re-init, so this normally holds at once, without sleeping. */
static int settle(struct amdsmi_gpu *gpu, unsigned want, uint64_t deadline) {
        struct amdsmi_ctx *ctx = gpu->ctx;

        for (;;) {
                int r = kfd_refresh(ctx);

                if (r == 0 && ctx->kfd_present && gpu->partitions_error == 0 &&
                    gpu->n_partitions == want) {
                        uint64_t gen = 0;

                        if (kfd_read_generation(ctx, &gen) == 0 && gen == ctx->kfd_generation)
                                return 0;
                }
                if (gpu_gone(gpu))
                        return -ENODEV;
                if (now_ms() >= deadline)
                        return -ETIMEDOUT;
                sleep_ms(SETTLE_POLL_MS);
        }
}

/* The GPU's KFD nodes now (the mapping redone if the topology moved). */
static unsigned current_partitions(struct amdsmi_gpu *gpu) {
        (void) kfd_refresh(gpu->ctx);
        return (unsigned) gpu->n_partitions;
}

/* What the GPU is in at the end: the report's *_after fields. */
static void fill_after(struct amdsmi_partition_change *c, struct amdsmi_gpu *gpu, uint64_t start) {
        enum amdsmi_compute_mode cm;
        enum amdsmi_memory_mode mm;
        uint64_t gen;

        c->compute_after = read_mode(gpu, &cm) == 0 ? cm : AMDSMI_COMPUTE_UNKNOWN;
        c->memory_after = amdsmi_gpu_read_memory_mode(gpu, &mm) == 0 ? mm : AMDSMI_MEMORY_UNKNOWN;
        c->partitions_after = gpu_gone(gpu) ? 0 : current_partitions(gpu);
        c->generation_after = kfd_read_generation(gpu->ctx, &gen) == 0 ? gen : 0;
        if (start > 0) {
                uint64_t ms = now_ms() - start;

                c->elapsed_ms = ms > UINT32_MAX ? UINT32_MAX : (uint32_t) ms;
        }
}

/* After a verified switch: the mode just read back, the topology just mapped (the settle
 * step re-read it at a stable generation) and the memory mode, which a compute switch never
 * changes; no file is read again. */
static void fill_after_switched(struct amdsmi_partition_change *c, struct amdsmi_gpu *gpu,
                                enum amdsmi_compute_mode seen, uint64_t start) {
        uint64_t ms = now_ms() - start;

        c->compute_after = seen;
        c->memory_after = c->memory_before;
        c->partitions_after = (unsigned) gpu->n_partitions;
        c->generation_after = gpu->ctx->kfd_generation;
        c->elapsed_ms = ms > UINT32_MAX ? UINT32_MAX : (uint32_t) ms;
}

/* Nothing was written: the state after is the state before. */
static int finish_unchanged(struct amdsmi_partition_change *c, int r,
                            enum amdsmi_change_stage stage) {
        c->compute_after = c->compute_before;
        c->memory_after = c->memory_before;
        c->partitions_after = c->partitions_before;
        c->generation_after = c->generation_before;
        return change_finish(c, r, stage);
}

/* A read of the state failed before anything was written. */
static int preflight_read_error(struct amdsmi_partition_change *c, struct amdsmi_gpu *gpu,
                                const char *what, int r) {
        if ((r == -ENODATA || r == -ENOENT || r == -ENODEV) && device_gone(gpu)) {
                change_message(c, "GPU %s is gone", gpu->bdf);
                return change_finish(c, -ENODEV, AMDSMI_STAGE_PREFLIGHT);
        }
        if (r == -EBUSY)
                change_message(c, "a reset of GPU %s is in progress; try again when it has ended",
                               gpu->bdf);
        else
                change_message(c, "cannot read the %s of GPU %s: %s", what, gpu->bdf, strerror(-r));
        return change_finish(c, r, AMDSMI_STAGE_PREFLIGHT);
}

/* The plan's verdict as an error and message; 0 for a valid plan. */
static int plan_error(struct amdsmi_partition_change *c, struct amdsmi_gpu *gpu,
                      enum amdsmi_compute_mode mode, const struct amdsmi_partition_plan *plan) {
        const char *name = amdsmi_compute_mode_to_string(mode);
        char set[64];

        switch (plan->reason) {
        case AMDSMI_PLAN_OK:
                return 0;
        case AMDSMI_PLAN_NOT_SUPPORTED:
                change_message(c, "GPU %s has no compute partition support", gpu->bdf);
                return -EOPNOTSUPP;
        case AMDSMI_PLAN_NOT_SWITCHABLE:
                change_message(c,
                               "GPU %s is an SR-IOV VF: its compute partition is set on the host",
                               gpu->bdf);
                return -EOPNOTSUPP;
        case AMDSMI_PLAN_COMPUTE_NOT_SUPPORTED:
                if (amdsmi_compute_mode_mask_to_string(plan->supported_compute, set, sizeof(set)) <
                    0)
                        set[0] = '\0';
                change_message(c, "%s is not in the hardware's set of GPU %s (%s)", name, gpu->bdf,
                               set);
                return -EINVAL;
        case AMDSMI_PLAN_INCOMPATIBLE:
                if (amdsmi_compute_mode_mask_to_string(plan->valid_compute, set, sizeof(set)) < 0 ||
                    !set[0])
                        snprintf(set, sizeof(set), "none");
                change_message(c, "%s is not available under %s (available: %s)", name,
                               amdsmi_memory_mode_to_string(plan->memory_before), set);
                return -EINVAL;
        default:
                change_message(c, "%s cannot be set on GPU %s: %s", name, gpu->bdf,
                               amdsmi_plan_reason_to_string(plan->reason));
                return -EINVAL;
        }
}

/* A write that the driver refused with nothing changed: its errno in the domain's terms. */
static int refused_write(struct amdsmi_partition_change *c, struct amdsmi_gpu *gpu,
                         enum amdsmi_compute_mode mode, int w) {
        const char *name = amdsmi_compute_mode_to_string(mode);
        int n;

        switch (w) {
        case -EPERM: /* the driver's reset lock, not a permission */
                change_message(c, "a reset of GPU %s is in progress; try again when it has ended",
                               gpu->bdf);
                return -EBUSY;
        case -EACCES:
                change_message(c, "changing the compute partition of GPU %s needs root", gpu->bdf);
                return -EACCES;
        case -EBUSY:
                /* a KFD user that came after the preflight, or one we cannot see; this
                 * process too, if the driver still counts it (see change_add_blockers()) */
                c->n_blockers = 0;
                n = change_add_blockers(c, gpu, false);
                if (n > 0)
                        message_blockers(c, gpu, (unsigned) n);
                else
                        change_message(c,
                                       "the driver refused %s on GPU %s as busy: KFD users not "
                                       "listed in class/kfd/kfd/proc, or another switch",
                                       name, gpu->bdf);
                return -EBUSY;
        case -EINVAL:
                change_message(c, "the driver refused %s on GPU %s (invalid argument)", name,
                               gpu->bdf);
                return -EINVAL;
        default:
                change_message(c, "writing %s to GPU %s failed: %s; nothing changed", name,
                               gpu->bdf, strerror(-w));
                return w;
        }
}

/* Puts the GPU in @mode (written already when @written): read back, settle, read back. With
 * KFD down the mode alone tells. Returns 0 or the error and its stage. */
static int reach_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode mode, unsigned want,
                      bool kfd_down, unsigned timeout_ms, enum amdsmi_change_stage *ret_stage,
                      enum amdsmi_compute_mode *ret_seen) {
        enum amdsmi_compute_mode seen = AMDSMI_COMPUTE_UNKNOWN;
        int r;

        *ret_seen = AMDSMI_COMPUTE_UNKNOWN;
        /* the kernel switches within the store: a read after it shows the outcome (it waits
         * on the partition mutex while a switch runs) */
        *ret_stage = AMDSMI_STAGE_VERIFY;
        r = read_mode(gpu, &seen);
        if (r < 0)
                return r;
        *ret_seen = seen;
        if (seen != mode)
                return -EIO;
        if (!kfd_down) {
                *ret_stage = AMDSMI_STAGE_SETTLE;
                r = settle(gpu, want, now_ms() + timeout_ms);
                if (r < 0)
                        return r;
                *ret_stage = AMDSMI_STAGE_VERIFY;
                r = read_mode(gpu, &seen);
                if (r < 0)
                        return r;
                *ret_seen = seen;
                if (seen != mode)
                        return -EIO;
        }
        *ret_stage = AMDSMI_STAGE_DONE;
        return 0;
}

static const char *errname(int r) {
        switch (r) {
        case -EIO:
                return "EIO";
        case -ETIMEDOUT:
                return "ETIMEDOUT";
        case -EBUSY:
                return "EBUSY";
        case -ENODEV:
                return "ENODEV";
        case -EINVAL:
                return "EINVAL";
        case -EACCES:
                return "EACCES";
        default:
                return strerror(-r);
        }
}

/* Restores @before after a failed switch; fills rolled_back / rollback_error and appends to
 * the message. */
static void roll_back(struct amdsmi_partition_change *c, struct amdsmi_gpu *gpu,
                      enum amdsmi_compute_mode before, unsigned timeout_ms) {
        const char *name = amdsmi_compute_mode_to_string(before);
        enum amdsmi_change_stage stage;
        enum amdsmi_compute_mode seen = AMDSMI_COMPUTE_UNKNOWN;
        int r;

        r = write_compute_mode(gpu, before);
        if (r == -EPERM)
                r = -EBUSY;
        else if ((r == -ENOENT || r == -ENODEV) && gpu_gone(gpu))
                r = -ENODEV;
        if (r == 0)
                r = reach_mode(gpu, before, c->partitions_before, c->kfd_lost, timeout_ms, &stage,
                               &seen);
        if (r == 0) {
                c->rolled_back = 1;
                (void) change_message_append(c, "; %s restored", name);
                return;
        }
        c->rollback_error = r;
        if (r == -EIO && seen != AMDSMI_COMPUTE_UNKNOWN)
                (void) change_message_append(c, "; restoring %s failed too: it reports %s", name,
                                             amdsmi_compute_mode_to_string(seen));
        else
                (void) change_message_append(c, "; restoring %s failed too: %s", name, errname(r));
}

_public_ int amdsmi_gpu_set_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode mode,
                                         uint64_t flags, unsigned timeout_ms,
                                         struct amdsmi_partition_change *ret_change) {
        struct amdsmi_partition_change *c = ret_change;
        struct amdsmi_partition_plan plan = { .size = sizeof(plan) };
        enum amdsmi_change_stage stage;
        enum amdsmi_compute_mode before, seen = AMDSMI_COMPUTE_UNKNOWN;
        enum amdsmi_memory_mode memory;
        const char *name;
        uint64_t gen, start;
        int r, w, n;

        r = change_init(c);
        if (r < 0)
                return r;
        if (mode < AMDSMI_COMPUTE_SPX || mode > AMDSMI_COMPUTE_CPX) {
                change_message(c, "not a compute partition mode: %d", (int) mode);
                return change_finish(c, -EINVAL, AMDSMI_STAGE_PREFLIGHT);
        }
        if (flags & ~(AMDSMI_CHANGE_DRY_RUN | AMDSMI_CHANGE_FORCE)) {
                change_message(c, "unknown flags 0x%llx", (unsigned long long) flags);
                return change_finish(c, -EINVAL, AMDSMI_STAGE_PREFLIGHT);
        }
        if (gpu_is_gim_host(gpu)) {
                r = gim_set_compute_mode(gpu, mode, flags, c);
                return change_finish(
                        c, r, c->stage != AMDSMI_STAGE_DONE ? c->stage : AMDSMI_STAGE_PREFLIGHT);
        }
        name = amdsmi_compute_mode_to_string(mode);
        if (amdsmi_gpu_is_vf(gpu) > 0) {
                change_message(c,
                               "GPU %s is an SR-IOV VF: its compute partition is set on the host",
                               gpu->bdf);
                return change_finish(c, -EOPNOTSUPP, AMDSMI_STAGE_PREFLIGHT);
        }
        if (amdsmi_gpu_get_driver(gpu) != AMDSMI_DRIVER_AMDGPU) {
                change_message(c, "GPU %s is not bound to amdgpu (driver: %s)", gpu->bdf,
                               amdsmi_driver_to_string(amdsmi_gpu_get_driver(gpu)));
                return change_finish(c, -EOPNOTSUPP, AMDSMI_STAGE_PREFLIGHT);
        }
        if (timeout_ms == 0)
                timeout_ms = DEFAULT_TIMEOUT_MS;

        /* The state before. */
        r = amdsmi_gpu_read_compute_mode(gpu, &before);
        if (r == -ENODATA && !device_gone(gpu)) {
                change_message(c, "GPU %s has no compute partition support", gpu->bdf);
                return change_finish(c, -EOPNOTSUPP, AMDSMI_STAGE_PREFLIGHT);
        }
        if (r < 0)
                return preflight_read_error(c, gpu, "compute partition mode", r);
        c->compute_before = before;
        r = amdsmi_gpu_read_memory_mode(gpu, &memory);
        if (r < 0 && r != -ENODATA)
                return preflight_read_error(c, gpu, "memory partition mode", r);
        c->memory_before = r < 0 ? AMDSMI_MEMORY_UNKNOWN : memory;
        c->partitions_before = current_partitions(gpu); /* maps the topology if it moved */
        c->generation_before = gpu->ctx->kfd_present ? gpu->ctx->kfd_generation : 0;
        (void) gen;

        /* Valid for the hardware and the memory mode? */
        r = amdsmi_gpu_plan_partition(gpu, mode, AMDSMI_MEMORY_UNKNOWN, 0, &plan);
        if (r < 0)
                return finish_unchanged(c, preflight_read_error(c, gpu, "partition state", r),
                                        AMDSMI_STAGE_PREFLIGHT);
        if (plan.reason == AMDSMI_PLAN_NOT_SUPPORTED && c->partitions_before == 0) {
                /* KFD is down (a failed switch): without nodes the XCC count, and with it
                 * the hardware set, is unknown; the driver's available set still tells */
                uint32_t avail;

                r = amdsmi_gpu_read_available_compute_modes(gpu, &avail);
                if (r < 0 && r != -ENODATA)
                        return finish_unchanged(
                                c, preflight_read_error(c, gpu, "available compute modes", r),
                                AMDSMI_STAGE_PREFLIGHT);
                if (r == 0 && avail != 0) {
                        plan.reason = (avail & AMDSMI_COMPUTE_MODE_BIT(mode))
                                              ? AMDSMI_PLAN_OK
                                              : AMDSMI_PLAN_INCOMPATIBLE;
                        plan.valid_compute = avail;
                        plan.memory_before = c->memory_before;
                        if (mode == before)
                                plan.notes |= 1u << AMDSMI_PLAN_NO_CHANGE;
                }
        }
        r = plan_error(c, gpu, mode, &plan);
        if (r < 0)
                return finish_unchanged(c, r, AMDSMI_STAGE_PREFLIGHT);
        if (plan.notes & (1u << AMDSMI_PLAN_NO_CHANGE))
                return finish_unchanged(c, 0, AMDSMI_STAGE_DONE);

        /* Who would make the driver answer EBUSY. */
        n = change_add_blockers(c, gpu, false);
        if (n < 0) {
                change_message(c, "cannot list the KFD processes of GPU %s: %s", gpu->bdf,
                               strerror(-n));
                return finish_unchanged(c, n, AMDSMI_STAGE_PREFLIGHT);
        }
        if (n > 0) {
                message_blockers(c, gpu, (unsigned) n);
                return finish_unchanged(c, -EBUSY, AMDSMI_STAGE_PREFLIGHT);
        }
        if (flags & AMDSMI_CHANGE_DRY_RUN)
                return finish_unchanged(c, 0, AMDSMI_STAGE_DONE);

        /* The switch. */
        log_debug(gpu->ctx, "%s: switching compute partition %s -> %s", gpu->bdf,
                  amdsmi_compute_mode_to_string(before), name);
        start = now_ms();
        w = write_compute_mode(gpu, mode);
        if (w < 0) {
                if ((w == -ENOENT || w == -ENODEV) && gpu_gone(gpu)) {
                        change_message(c, "GPU %s went away while switching to %s", gpu->bdf, name);
                        fill_after(c, gpu, start);
                        return change_finish(c, -ENODEV, AMDSMI_STAGE_WRITE);
                }
                /* What did the failed write leave? The driver reads the hardware back. */
                r = read_mode(gpu, &seen);
                if (r == -ENODEV) {
                        change_message(c, "GPU %s went away while switching to %s", gpu->bdf, name);
                        fill_after(c, gpu, start);
                        return change_finish(c, -ENODEV, AMDSMI_STAGE_WRITE);
                }
                if (r == 0 && seen == before) {
                        r = refused_write(c, gpu, mode, w);
                        /* KFD may have failed all the same */
                        if (c->partitions_before > 0 && current_partitions(gpu) == 0) {
                                c->kfd_lost = 1;
                                (void) change_message_append(c, "; KFD is down: " RELOAD_HINT);
                        }
                        fill_after(c, gpu, start);
                        return change_finish(c, r, AMDSMI_STAGE_WRITE);
                }
                /* The switch failed half way (EIO: KFD re-init failed after the hardware
                 * switched). */
                r = w;
                stage = AMDSMI_STAGE_WRITE;
                c->changed = r == 0 || seen != before;
                if (w == -EIO && seen == mode)
                        change_message(c,
                                       "the driver failed the switch of GPU %s to %s (EIO, KFD "
                                       "re-init)",
                                       gpu->bdf, name);
                else
                        change_message(c, "writing %s to GPU %s failed: %s", name, gpu->bdf,
                                       errname(w));
        } else {
                r = reach_mode(gpu, mode, plan.partitions_after, c->partitions_before == 0,
                               timeout_ms, &stage, &seen);
                c->changed = seen != before || r == 0;
                if (r == 0) {
                        if (c->partitions_before == 0) {
                                c->kfd_lost = 1; /* KFD was down already: still no nodes */
                                fill_after(c, gpu, start);
                        } else
                                fill_after_switched(c, gpu, seen, start);
                        return change_finish(c, 0, AMDSMI_STAGE_DONE);
                }
                if (r == -ENODEV) {
                        change_message(c, "GPU %s went away while switching to %s", gpu->bdf, name);
                        fill_after(c, gpu, start);
                        return change_finish(c, -ENODEV, stage);
                }
                if (r == -EIO && seen != AMDSMI_COMPUTE_UNKNOWN)
                        change_message(c,
                                       "GPU %s ignored the write: the device still reports %s "
                                       "after %s was written",
                                       gpu->bdf, amdsmi_compute_mode_to_string(seen), name);
                else if (r == -ETIMEDOUT)
                        change_message(c,
                                       "the KFD topology of GPU %s did not settle with %u "
                                       "partitions within %u ms",
                                       gpu->bdf, plan.partitions_after, timeout_ms);
                else
                        change_message(c, "switching GPU %s to %s failed at %s: %s", gpu->bdf, name,
                                       amdsmi_change_stage_to_string(stage), errname(r));
        }

        /* A failure after the write: restore the previous mode, unless the GPU is in it. */
        if (c->partitions_before > 0 && current_partitions(gpu) == 0)
                c->kfd_lost = 1;
        if (read_mode(gpu, &seen) == 0 && seen == before) {
                if (stage != AMDSMI_STAGE_VERIFY || r != -EIO) /* else the message says so */
                        (void) change_message_append(c, "; still %s",
                                                     amdsmi_compute_mode_to_string(before));
        } else
                roll_back(c, gpu, before, timeout_ms);
        if (c->kfd_lost)
                (void) change_message_append(c, "; no KFD nodes: " RELOAD_HINT);
        fill_after(c, gpu, start);
        return change_finish(c, r, stage);
}
