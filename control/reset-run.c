/* SPDX-License-Identifier: MIT */
/*
 * GPU resets for both front ends (reset-run.h): plan, preflight, reset, wait, verify,
 * re-apply, and the change document's element with the time of each stage.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "change.h"
#include "json-util.h"
#include "perf-ops.h"
#include "perf-state.h"
#include "power-ops.h"
#include "report.h"
#include "reset-run.h"
#include "time-util.h"
#include "vm-state.h"

#define HIVE_MAX AMDSMI_PLAN_MAX_HIVE

static const char *compute_name(enum amdsmi_compute_mode m) {
        return m == AMDSMI_COMPUTE_UNKNOWN ? NULL : amdsmi_compute_mode_to_string(m);
}

static const char *memory_name(enum amdsmi_memory_mode m) {
        return m == AMDSMI_MEMORY_UNKNOWN ? NULL : amdsmi_memory_mode_to_string(m);
}

/* ---- pure parts ------------------------------------------------------------------------- */

int reset_preflight_verdict(unsigned n_kfd_processes, unsigned n_vfs_in_use, bool force, char *msg,
                            size_t size) {
        msg[0] = '\0';
        if (n_vfs_in_use > 0) {
                snprintf(msg, size,
                         "%u VF%s of the GPUs to reset %s in use by a VM: stop the VM%s first "
                         "(--force does not override this)",
                         n_vfs_in_use, n_vfs_in_use == 1 ? "" : "s",
                         n_vfs_in_use == 1 ? "is" : "are", n_vfs_in_use == 1 ? "" : "s");
                return -EBUSY;
        }
        if (n_kfd_processes > 0 && !force) {
                snprintf(msg, size,
                         "%u process%s use%s the GPUs to reset through KFD and would lose "
                         "%s queues: stop %s first, or give --force",
                         n_kfd_processes, n_kfd_processes == 1 ? "" : "es",
                         n_kfd_processes == 1 ? "s" : "", n_kfd_processes == 1 ? "its" : "their",
                         n_kfd_processes == 1 ? "it" : "them");
                return -EBUSY;
        }
        return 0;
}

static json_object *cap_json(uint64_t uw) {
        return uw == AMDSMI_NA ? NULL : json_scaled_u64(uw, 6);
}

static void add_difference(json_object *a, const char *bdf, const char *field, json_object *before,
                           json_object *after) {
        json_object *d = json_object_new_object();

        json_set(d, "bdf", json_object_new_string(bdf));
        json_set(d, "field", json_object_new_string(field));
        json_set(d, "before", before);
        json_set(d, "after", after);
        json_object_array_add(a, d);
}

json_object *reset_differences(const struct reset_snapshot *before,
                               const struct reset_snapshot *after, size_t n) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++) {
                const struct reset_snapshot *b = &before[i], *x = &after[i];

                if (b->compute != x->compute)
                        add_difference(a, b->bdf, "compute_mode",
                                       json_string_or_null(compute_name(b->compute)),
                                       json_string_or_null(compute_name(x->compute)));
                if (b->memory != x->memory)
                        add_difference(a, b->bdf, "memory_mode",
                                       json_string_or_null(memory_name(b->memory)),
                                       json_string_or_null(memory_name(x->memory)));
                if (b->cap_uw != x->cap_uw)
                        add_difference(a, b->bdf, "power_cap_w", cap_json(b->cap_uw),
                                       cap_json(x->cap_uw));
                if (b->vf_count != x->vf_count)
                        add_difference(a, b->bdf, "vf_count",
                                       b->vf_count < 0 ? NULL : json_object_new_int(b->vf_count),
                                       x->vf_count < 0 ? NULL : json_object_new_int(x->vf_count));
        }
        return a;
}

const char *reset_recovery_advice(const struct amdsmi_reset_report *rep) {
        bool answers = true, nodes = true;

        for (unsigned i = 0; i < rep->n_gpus; i++) {
                answers &= rep->gpus[i].answers != 0;
                nodes &= rep->gpus[i].kfd_nodes_after >= rep->gpus[i].kfd_nodes_before;
        }
        if (rep->hung)
                return "the reset is still running in the kernel: wait for it (dmesg shows "
                       "its end), then check with 'amdsmi list' and run 'amdsmi reset -G' "
                       "again if the GPU does not answer; if it never ends, reboot";
        if (rep->stage == AMDSMI_RESET_STAGE_WAIT && answers)
                return "the driver answers but not every KFD node is back: wait and check "
                       "with 'amdsmi list', else reload the driver ('amdsmi reset "
                       "--reload-driver') or reboot";
        if (rep->stage == AMDSMI_RESET_STAGE_WAIT)
                return "the GPUs do not answer yet: wait and check with 'amdsmi list'; if "
                       "they stay busy, run 'amdsmi reset -G' again, reload the driver "
                       "('amdsmi reset --reload-driver') or reboot";
        if (answers && nodes)
                return "the GPUs answer with their KFD nodes: see the kernel log (dmesg) for "
                       "why the recovery failed, and run 'amdsmi reset -G' again";
        return "the GPUs are not usable: run 'amdsmi reset -G' again; if it fails again, "
               "reload the driver ('amdsmi reset --reload-driver') or reboot";
}

/* ---- reading ---------------------------------------------------------------------------- */

/* What the reset is compared on; @vf_count: the VF count read already, or VF_COUNT_READ. */
#define VF_COUNT_READ (-2)
static void snapshot(struct amdsmi_gpu *gpu, struct reset_snapshot *s, int vf_count) {
        struct amdsmi_power_info p = { .size = sizeof(p) };
        struct amdsmi_sriov_info sv = { .size = sizeof(sv) };

        memset(s, 0, sizeof(*s));
        snprintf(s->bdf, sizeof(s->bdf), "%s", amdsmi_gpu_get_bdf(gpu));
        if (amdsmi_gpu_read_compute_mode(gpu, &s->compute) < 0)
                s->compute = AMDSMI_COMPUTE_UNKNOWN;
        if (amdsmi_gpu_read_memory_mode(gpu, &s->memory) < 0)
                s->memory = AMDSMI_MEMORY_UNKNOWN;
        s->cap_uw = AMDSMI_NA;
        if (amdsmi_gpu_read_power(gpu, AMDSMI_POWER_READ_NO_METRICS, &p) == 0 &&
            p.ppt0.cap.error == 0)
                s->cap_uw = p.ppt0.cap.uw;
        s->vf_count = vf_count;
        if (vf_count == VF_COUNT_READ) {
                s->vf_count = -1;
                if (amdsmi_gpu_is_vf(gpu) <= 0 && amdsmi_gpu_read_sriov(gpu, &sv) == 0 &&
                    sv.capable)
                        s->vf_count = (int) sv.num_vfs;
        }
        s->kfd_nodes = (int) amdsmi_gpu_get_partition_count(gpu);
}

static json_object *snapshot_json(const struct reset_snapshot *s) {
        json_object *o = json_object_new_object();

        json_set(o, "bdf", json_object_new_string(s->bdf));
        json_set(o, "compute_mode", json_string_or_null(compute_name(s->compute)));
        json_set(o, "memory_mode", json_string_or_null(memory_name(s->memory)));
        json_set(o, "power_cap_w", cap_json(s->cap_uw));
        json_set(o, "vf_count", s->vf_count < 0 ? NULL : json_object_new_int(s->vf_count));
        json_set(o, "kfd_nodes", s->kfd_nodes < 0 ? NULL : json_object_new_int(s->kfd_nodes));
        return o;
}

static bool in_hive(struct amdsmi_gpu **hive, size_t n, struct amdsmi_gpu *g) {
        for (size_t i = 0; i < n; i++)
                if (hive[i] == g)
                        return true;
        return false;
}

/* The KFD processes on the hive's GPUs (this process left out: it lets go of its own
 * descriptors), into @out. @return how many, or a negative errno. */
static int kfd_processes(struct amdsmi_ctx *ctx, struct amdsmi_gpu **hive, size_t n,
                         json_object *out) {
        struct amdsmi_process_list *l = NULL;
        unsigned count = 0;
        int r;

        r = amdsmi_ctx_read_processes(ctx, AMDSMI_PROCESS_BRIEF, &l);
        if (r < 0)
                return r;
        for (size_t i = 0; i < l->n_processes; i++) {
                const struct amdsmi_process *p = &l->processes[i];

                if (p->pid == getpid())
                        continue;
                for (size_t k = 0; k < p->n_nodes; k++) {
                        struct amdsmi_gpu *g;
                        json_object *o;
                        char comm[sizeof(p->comm)];

                        if (p->nodes[k].gpu_index < 0)
                                continue;
                        g = amdsmi_ctx_get_gpu(ctx, (size_t) p->nodes[k].gpu_index);
                        if (!g || !in_hive(hive, n, g))
                                continue;
                        snprintf(comm, sizeof(comm), "%s", p->comm);
                        for (char *c = comm; *c; c++)
                                if ((unsigned char) *c < 0x20 || (unsigned char) *c == 0x7f)
                                        *c = '?';
                        o = json_object_new_object();
                        json_set(o, "pid", json_object_new_int(p->pid));
                        json_set(o, "comm", json_object_new_string(comm));
                        json_set(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(g)));
                        json_object_array_add(out, o);
                        count++;
                        break;
                }
        }
        amdsmi_process_list_free(l);
        return (int) count;
}

static void add_vf_in_use(json_object *out, const char *vf, const char *pf, const char *by) {
        json_object *o = json_object_new_object();

        json_set(o, "vf", json_object_new_string(vf));
        json_set(o, "pf", json_object_new_string(pf));
        json_set(o, "by", json_object_new_string(by));
        json_object_array_add(out, o);
}

/* The VFs of the PF @pf in the context's enumeration. */
static int ctx_vf_count(struct amdsmi_ctx *ctx, const char *pf) {
        size_t n = amdsmi_ctx_get_gpu_count(ctx);
        int count = 0;

        for (size_t i = 0; i < n; i++) {
                const char *p = amdsmi_gpu_get_physfn_bdf(amdsmi_ctx_get_gpu(ctx, i));

                count += p && strcmp(p, pf) == 0;
        }
        return count;
}

/* VFs of the hive's GPUs in use by VMs: a process holds the VF's vfio group, or a VM
 * reservation of the state file names it; each GPU's VF count into @vf_count (-1: a VF).
 * @return how many. */
static unsigned vfs_in_use(struct amdsmi_ctx *ctx, struct amdsmi_gpu **hive, size_t n,
                           json_object *out, int *vf_count) {
        struct vm_reservation *vms = NULL;
        char warning[256];
        unsigned count = 0;
        int n_vms = -1;

        for (size_t i = 0; i < n; i++) {
                struct amdsmi_sriov_info sv = { .size = sizeof(sv) };
                const char *pf = amdsmi_gpu_get_bdf(hive[i]);

                vf_count[i] = -1;
                if (amdsmi_gpu_is_vf(hive[i]) > 0)
                        continue;
                /* the enumeration's VFs of the PF: only a PF with VFs is read in full (its
                 * VFs' drivers and VFIO users) */
                vf_count[i] = ctx_vf_count(ctx, pf);
                if (vf_count[i] == 0 || amdsmi_gpu_read_sriov(hive[i], &sv) < 0)
                        continue;
                vf_count[i] = (int) sv.num_vfs;
                if (n_vms < 0) {
                        n_vms = vm_state_read(&vms, warning, sizeof(warning));
                        if (n_vms < 0)
                                n_vms = 0;
                }
                for (unsigned v = 0; v < sv.n_vfs; v++) {
                        const struct amdsmi_vf_info *vf = &sv.vfs[v];
                        const char *vm = NULL;

                        for (int k = 0; k < n_vms && !vm; k++)
                                for (size_t f = 0; f < vms[k].n_vfs; f++)
                                        if (strcmp(vms[k].vfs[f].bdf, vf->bdf) == 0) {
                                                vm = vms[k].name[0] ? vms[k].name : vms[k].uuid;
                                                break;
                                        }
                        if (vm) {
                                char by[VM_NAME_MAX + 8];

                                snprintf(by, sizeof(by), "VM %s", vm);
                                add_vf_in_use(out, vf->bdf, pf, by);
                                count++;
                        } else if (vf->in_use == 1) {
                                add_vf_in_use(out, vf->bdf, pf, "a process holds its vfio group");
                                count++;
                        }
                }
        }
        free(vms);
        return count;
}

static json_object *masks_json(struct amdsmi_gpu *gpu) {
        struct amdsmi_reset_masks m;
        static const struct {
                uint32_t bit;
                const char *name;
        } types[] = {
                { AMDSMI_RESET_TYPE_SOFT, "soft" },
                { AMDSMI_RESET_TYPE_QUEUE, "queue" },
                { AMDSMI_RESET_TYPE_PIPE, "pipe" },
                { AMDSMI_RESET_TYPE_FULL, "full" },
        };
        json_object *o;

        if (amdsmi_gpu_read_reset_masks(gpu, &m) < 0 || m.present == 0)
                return NULL;
        o = json_object_new_object();
        for (int r = 0; r < _AMDSMI_RESET_RING_MAX; r++) {
                json_object *a;

                if (!(m.present & (1u << r)))
                        continue;
                a = json_object_new_array();
                for (size_t t = 0; t < ELEMENTSOF(types); t++)
                        if (m.mask[r] & types[t].bit)
                                json_object_array_add(a, json_object_new_string(types[t].name));
                json_set(o, amdsmi_reset_ring_to_string((enum amdsmi_reset_ring) r), a);
        }
        return o;
}

size_t reset_entry_bdfs(json_object *entry, const char **bdfs, size_t max) {
        json_object *a = NULL;
        size_t n = 0;

        if (!json_object_object_get_ex(entry, "gpus_reset", &a) ||
            !json_object_is_type(a, json_type_array))
                return 0;
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                if (n < max)
                        bdfs[n] = json_object_get_string(json_object_array_get_idx(a, i));
                n++;
        }
        return n;
}

/* ---- the run ---------------------------------------------------------------------------- */

/* The default re-application: the arbitrated power cap of the state file, as `power apply`
 * (the locks are held). */
static int reapply_power(struct report *rep, struct amdsmi_gpu *gpu, json_object *entry) {
        struct power_change ch = { .kind = POWER_CHANGE_APPLY, .setter = "reset", .lock = false };
        struct report quiet = { .command = rep->command }; /* its lines are the power slice's */
        struct power_outcome out = {};
        json_object *pe;
        int r;

        if (amdsmi_gpu_get_driver(gpu) != AMDSMI_DRIVER_AMDGPU)
                return -EOPNOTSUPP; /* gim hosts: no sysfs power path */
        pe = power_change_entry_new(&ch, amdsmi_gpu_get_index(gpu), amdsmi_gpu_get_bdf(gpu),
                                    amdsmi_gpu_get_product(gpu), false);
        if (!pe)
                return -ENOMEM;
        r = power_change_gpu(&quiet, &ch, amdsmi_gpu_get_index(gpu), gpu, pe, &out);
        json_object_put(pe);
        if (r < 0)
                report_say(rep, entry, "%s: the power cap could not be applied again: %s",
                           amdsmi_gpu_get_bdf(gpu),
                           quiet.error_message ? quiet.error_message : strerror(-r));
        else if (out.applied)
                report_say(rep, entry, "%s: power cap %" PRIu64 " W applied again",
                           amdsmi_gpu_get_bdf(gpu), out.applied_uw / 1000000);
        report_clear(&quiet);
        return r;
}

/* In-process: the performance settings kept for the GPU in the state file (what an operator
 * set), which the reset returned to the SMU's defaults (the locks are held). */
static int reapply_perf(struct report *rep, struct amdsmi_gpu *gpu, const struct perf_desired *d,
                        json_object *entry) {
        struct perf_change ch[PERF_DESIRED_STEPS_MAX];
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        size_t n = perf_desired_steps(d, ch);
        char what[160];
        int r = 0;

        if (amdsmi_gpu_get_driver(gpu) != AMDSMI_DRIVER_AMDGPU)
                return -EOPNOTSUPP; /* gim hosts: no performance files */
        for (size_t i = 0; i < n; i++) {
                struct report quiet = { .command = rep->command };
                struct perf_outcome out = {};
                json_object *pe = perf_change_entry_new(&ch[i], amdsmi_gpu_get_index(gpu), bdf,
                                                        amdsmi_gpu_get_product(gpu), false);
                int k;

                if (!pe)
                        return -ENOMEM;
                ch[i].lock = false;
                k = perf_change_gpu(&quiet, &ch[i], amdsmi_gpu_get_index(gpu), gpu, pe, &out);
                json_object_put(pe);
                if (k < 0) {
                        report_say(rep, entry, "%s: %s could not be applied again: %s", bdf,
                                   perf_change_name(ch[i].kind),
                                   quiet.error_message ? quiet.error_message : strerror(-k));
                        if (r == 0)
                                r = k;
                }
                report_clear(&quiet);
        }
        if (r == 0) {
                perf_desired_describe(d, what, sizeof(what));
                report_say(rep, entry, "%s: performance settings applied again (%s)", bdf, what);
        }
        return r;
}

struct run {
        struct report *rep;
        struct amdsmi_ctx *ctx;
        struct amdsmi_gpu *gpu;
        const struct reset_options *o;
        json_object *entry;
        struct amdsmi_gpu *hive[HIVE_MAX];
        size_t n;
        uint64_t t0;
};

static json_object *state_json(const struct amdsmi_reset_report *lr) {
        json_object *a = json_object_new_array();

        for (unsigned i = 0; i < lr->n_gpus; i++) {
                const struct amdsmi_reset_gpu *g = &lr->gpus[i];
                json_object *o = json_object_new_object();

                json_set(o, "bdf", json_object_new_string(g->bdf));
                json_set(o, "answers", json_object_new_boolean(g->answers));
                json_set(o, "kfd_nodes_before", json_object_new_int((int) g->kfd_nodes_before));
                json_set(o, "kfd_nodes_present", json_object_new_int((int) g->kfd_nodes_after));
                json_object_array_add(a, o);
        }
        return a;
}

static void set_stage(json_object *stages, const char *name, uint64_t ms) {
        json_set(stages, name, json_object_new_uint64(ms));
}

/* Under the locks: preflight, reset, wait, verify, re-apply. */
static int run_locked(void *userdata) {
        struct run *x = userdata;
        struct report *rep = x->rep;
        json_object *e = x->entry, *kfd = json_object_new_array(), *vfs = json_object_new_array(),
                    *pre = json_object_new_object(), *stages = json_object_new_object(),
                    *before = json_object_new_array(), *reapplied;
        struct reset_snapshot snap_before[HIVE_MAX], snap_after[HIVE_MAX];
        struct amdsmi_reset_report lr = { .size = sizeof(lr) };
        uint64_t t_pre, t_verify, t_reapply, t_end;
        char msg[512];
        unsigned n_vfs;
        int n_kfd, r, reapply_error = 0, vf_count[HIVE_MAX];

        json_set(e, "stages_ms", stages);
        /* preflight */
        n_kfd = kfd_processes(x->ctx, x->hive, x->n, kfd);
        n_vfs = vfs_in_use(x->ctx, x->hive, x->n, vfs, vf_count);
        json_set(pre, "kfd_processes", kfd);
        json_set(pre, "vfs_in_use", vfs);
        json_set(pre, "forced", json_object_new_boolean(x->o->force));
        json_set(e, "preflight", pre);
        for (size_t i = 0; i < x->n; i++) {
                snapshot(x->hive[i], &snap_before[i], vf_count[i]);
                json_object_array_add(before, snapshot_json(&snap_before[i]));
        }
        json_set(e, "before", before);
        if (n_kfd < 0) {
                set_stage(stages, "preflight", now_ms() - x->t0);
                return report_fail(rep, n_kfd,
                                   "GPU %s: cannot tell which processes use it through KFD: %s",
                                   amdsmi_gpu_get_bdf(x->gpu), strerror(-n_kfd));
        }
        r = reset_preflight_verdict((unsigned) n_kfd, n_vfs, x->o->force, msg, sizeof(msg));
        for (size_t i = 0; i < json_object_array_length(kfd); i++) {
                json_object *p = json_object_array_get_idx(kfd, i), *v;
                const char *comm = "", *bdf = "";
                int pid = 0;

                if (json_object_object_get_ex(p, "pid", &v))
                        pid = json_object_get_int(v);
                if (json_object_object_get_ex(p, "comm", &v))
                        comm = json_object_get_string(v);
                if (json_object_object_get_ex(p, "bdf", &v))
                        bdf = json_object_get_string(v);
                report_say(rep, e, "%s: process %d (%s) uses it through KFD%s", bdf, pid, comm,
                           x->o->force ? ": it loses its queues" : "");
        }
        for (size_t i = 0; i < json_object_array_length(vfs); i++) {
                json_object *p = json_object_array_get_idx(vfs, i), *v;
                const char *vf = "", *by = "";

                if (json_object_object_get_ex(p, "vf", &v))
                        vf = json_object_get_string(v);
                if (json_object_object_get_ex(p, "by", &v))
                        by = json_object_get_string(v);
                report_say(rep, e, "VF %s is in use (%s)", vf, by);
        }
        t_pre = now_ms();
        set_stage(stages, "preflight", t_pre - x->t0);
        if (r < 0)
                return report_fail(rep, r, "GPU %s: %s", amdsmi_gpu_get_bdf(x->gpu), msg);
        if (rep->dry_run) {
                report_say(rep, e, "dry run: %zu GPU%s would be reset through %s%s", x->n,
                           x->n == 1 ? "" : "s",
                           json_object_get_string(json_object_object_get(e, "mechanism")),
                           x->n > 1 ? " (the whole XGMI hive)" : "");
                set_stage(stages, "total", now_ms() - x->t0);
                return 0;
        }

        /* reset and wait */
        r = amdsmi_gpu_reset(x->gpu, 0, x->o->timeout_ms, &lr);
        t_verify = now_ms();
        set_stage(stages, "reset", lr.reset_ms);
        set_stage(stages, "wait", lr.wait_ms);
        json_set(e, "reset_res", lr.reset_done ? json_object_new_int64(lr.reset_res) : NULL);
        json_set(e, "hung", json_object_new_boolean(lr.hung));
        json_set(e, "state", state_json(&lr));
        json_set(e, "kernel_generation_before", json_object_new_uint64(lr.generation_before));
        json_set(e, "kernel_generation_after", json_object_new_uint64(lr.generation_after));
        if (r < 0) {
                const char *advice = reset_recovery_advice(&lr);

                json_set(e, "recovery", json_object_new_string(advice));
                set_stage(stages, "total", t_verify - x->t0);
                report_say(rep, e, "recovery: %s", advice);
                if (r == -EACCES)
                        return report_fail(rep, r, "GPU %s: %s", amdsmi_gpu_get_bdf(x->gpu),
                                           lr.message[0] ? lr.message : strerror(-r));
                return report_fail(rep, r, "GPU %s: reset %s: %s", amdsmi_gpu_get_bdf(x->gpu),
                                   amdsmi_reset_stage_to_string(lr.stage),
                                   lr.message[0] ? lr.message : strerror(-r));
        }
        report_say(rep, e, "%zu GPU%s reset through %s in %u ms, back after %u ms more", x->n,
                   x->n == 1 ? "" : "s", amdsmi_reset_mechanism_to_string(lr.mechanism),
                   lr.reset_ms, lr.wait_ms);

        /* verify */
        {
                json_object *after = json_object_new_array(), *diff;

                for (size_t i = 0; i < x->n; i++) {
                        /* a PF without VFs before has none after: a reset makes none */
                        snapshot(x->hive[i], &snap_after[i],
                                 snap_before[i].vf_count > 0 ? VF_COUNT_READ
                                                             : snap_before[i].vf_count);
                        json_object_array_add(after, snapshot_json(&snap_after[i]));
                }
                json_set(e, "after", after);
                diff = reset_differences(snap_before, snap_after, x->n);
                for (size_t i = 0; diff && i < json_object_array_length(diff); i++) {
                        json_object *d = json_object_array_get_idx(diff, i);

                        report_say(rep, e, "%s: %s %s -> %s (after the reset)",
                                   json_object_get_string(json_object_object_get(d, "bdf")),
                                   json_object_get_string(json_object_object_get(d, "field")),
                                   json_object_to_json_string(json_object_object_get(d, "before")),
                                   json_object_to_json_string(json_object_object_get(d, "after")));
                }
                json_set(e, "differences", diff);
        }
        t_reapply = now_ms();
        set_stage(stages, "verify", t_reapply - t_verify);
        /* (made here: the stages before return early) */
        reapplied = json_object_new_array();

        /* re-apply the desired state: amdsmid's for every GPU; in-process, the power cap
         * where the reset moved it and the performance settings the state file keeps */
        for (size_t i = 0; i < x->n; i++) {
                struct perf_desired pd = {};
                bool cap = snap_before[i].cap_uw != snap_after[i].cap_uw, perf;
                json_object *o;
                int k = 0;

                perf = !x->o->reapply &&
                       perf_state_load(amdsmi_gpu_get_bdf(x->hive[i]), &pd) == 0 &&
                       !perf_desired_empty(&pd);
                if (!x->o->reapply && !cap && !perf)
                        continue;
                o = json_object_new_object();
                if (x->o->reapply)
                        k = x->o->reapply(x->o->userdata, rep, x->hive[i], e);
                else if (cap)
                        k = reapply_power(rep, x->hive[i], e);
                if (k == -EOPNOTSUPP)
                        k = 0;
                if (perf) {
                        int kp = reapply_perf(rep, x->hive[i], &pd, e);

                        if (kp < 0 && kp != -EOPNOTSUPP && k == 0)
                                k = kp;
                }
                json_set(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(x->hive[i])));
                json_set(o, "result", report_errno_json(k));
                json_object_array_add(reapplied, o);
                if (k < 0 && reapply_error == 0)
                        reapply_error = k;
        }
        json_set(e, "reapplied", reapplied);
        t_end = now_ms();
        set_stage(stages, "reapply", t_end - t_reapply);
        set_stage(stages, "total", t_end - x->t0);
        {
                int64_t overhead = (int64_t) (t_end - x->t0) - lr.reset_ms - lr.wait_ms;

                json_set(e, "overhead_ms", json_object_new_int64(overhead < 0 ? 0 : overhead));
        }
        if (reapply_error < 0)
                return report_fail(rep, reapply_error,
                                   "GPU %s: the reset succeeded, but the desired state could "
                                   "not be applied again (see the messages)",
                                   amdsmi_gpu_get_bdf(x->gpu));
        return 0;
}

static int lock_failed(void *userdata, int r, const char *message) {
        struct run *x = userdata;

        report_say(x->rep, x->entry, "%s", message);
        return report_fail(x->rep, r, "%s: a change of the hive is in flight", message);
}

int reset_gpu_run(struct report *rep, struct amdsmi_ctx *ctx, size_t index, struct amdsmi_gpu *gpu,
                  const struct reset_options *o, json_object **ret_entry) {
        struct run x = { .rep = rep, .ctx = ctx, .gpu = gpu, .o = o, .t0 = now_ms() };
        enum amdsmi_reset_mechanism mech;
        const char *bdfs[HIVE_MAX];
        json_object *e = json_object_new_object(), *list = json_object_new_array();
        int r;

        *ret_entry = e;
        if (!e || !list) {
                json_object_put(list);
                return report_fail(rep, -ENOMEM, "out of memory");
        }
        json_set(e, "gpu", json_object_new_uint64(index));
        json_set(e, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_set(e, "messages", json_object_new_array());
        x.entry = e;
        r = amdsmi_gpu_get_reset_mechanism(gpu, &mech);
        json_set(e, "mechanism", json_object_new_string(amdsmi_reset_mechanism_to_string(mech)));
        x.n = amdsmi_gpu_get_reset_hive(gpu, x.hive, HIVE_MAX);
        if (x.n > HIVE_MAX)
                x.n = HIVE_MAX;
        json_set(e, "hive_wide", json_object_new_boolean(x.n > 1));
        for (size_t i = 0; i < x.n; i++) {
                bdfs[i] = amdsmi_gpu_get_bdf(x.hive[i]);
                json_object_array_add(list, json_object_new_string(bdfs[i]));
        }
        json_set(e, "gpus_reset", list);
        json_set(e, "reset_masks", masks_json(gpu));
        /* what the stages fill in: null or empty until they run */
        json_set(e, "preflight", NULL);
        json_set(e, "before", json_object_new_array());
        json_set(e, "after", NULL);
        json_set(e, "differences", json_object_new_array());
        json_set(e, "reapplied", json_object_new_array());
        json_set(e, "reset_res", NULL);
        json_set(e, "hung", json_object_new_boolean(false));
        json_set(e, "state", NULL);
        json_set(e, "recovery", NULL);
        json_set(e, "result", NULL);
        if (r < 0) {
                r = report_fail(rep, r,
                                amdsmi_gpu_is_vf(gpu) > 0
                                        ? "GPU %s is an SR-IOV VF: a VF is reset by its host"
                                        : "GPU %s: neither amdgpu nor gim drives it: nothing "
                                          "here resets it",
                                amdsmi_gpu_get_bdf(gpu));
                json_set(e, "result", report_errno_json(r));
                return r;
        }
        if (x.n > 1)
                report_say(rep, e, "the reset takes the whole XGMI hive: %zu GPUs", x.n);
        r = change_run(
                &(struct change_lock){ .bdfs = bdfs, .n = x.n, .held = rep->dry_run || !o->lock },
                &(const struct change_ops){ .apply = run_locked, .lock_failed = lock_failed }, &x);
        json_set(e, "result", report_errno_json(r));
        return r;
}
