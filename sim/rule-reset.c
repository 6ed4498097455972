/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: GPU reset (spec health-and-control.md §4, §7.1; virtualization.md §1.2).
 *
 * debugfs dri/<BDF>/amdgpu_gpu_recover (0444; debugfs is root-only): a read runs
 * amdgpu_device_gpu_recover() with a full reset and blocks until it is done, then returns
 * reset_res as "%lld\n" (0: success, else a negative errno). On gim hosts the PF's sysfs
 * reset_gpu (0400, rule-sriov.c) runs the same recovery and answers
 * "dev(<BDF>) reset completed\n", or fails the read with the reset's errno (UNVERIFIED).
 *
 * The recovery takes the whole XGMI hive (amdgpu_device_gpu_recover() builds its device list
 * from the hive's), the GPU alone without one; gim's reset_gpu the adapter alone (what it does
 * to the rest of a hive: UNVERIFIED). For each GPU of it, in BDF order: KFD's
 * GPU_PRE_RESET event (the reset's seqno, cause "user trigger"), the GPU in reset (pm, hwmon
 * and RAS count files busy as with `ctl reset BDF begin`), the KFD processes' queues on it
 * evicted; then kernel.reset_ms ms (or an injected hang); then the effects, each configurable
 * per machine (kernel.reset_*) and by `ctl reset-config`:
 *   - the power caps (PPT0, PPT1) back to their defaults (reset_keeps_cap false, the default:
 *     the SMU starts from its tables; UNVERIFIED), and the performance state back to auto
 *     (reset_keeps_perf false; sim_reset_perf_defaults());
 *   - compute and memory partition modes, VFs and the processes themselves persist;
 *   - KFD nodes persist (reset_kfd_down_ms 0), or are gone for that many ms after the
 *     recovery and come back as new nodes (generation_id moves twice);
 * and KFD's GPU_POST_RESET event. A reset that fails (ctl reset-fail) returns its reset_res
 * without the effects; a wedged GPU stays in reset (until `ctl reset BDF end`). A second
 * reset of a GPU whose hive is resetting waits for the first (the reset domain's queue).
 */
#include <inttypes.h>
#include <pthread.h>

#include <json-c/json.h>

#include "tree.h"

/* A driver that resets the GPU holds it: amdgpu, or gim on a host. */
static bool driven(const struct sim_gpu *g) {
        return g->attached || g->func->driver == SIM_DRV_GIM;
}

/* The GPUs a reset of @g takes: its hive (bound, plugged in), in BDF order, @g alone without
 * a hive. */
static size_t hive_of(struct sim_gpu *g, struct sim_gpu **out) {
        struct sim_machine *m = g->m;
        size_t n = 0;

        if (!g->hive_id || g->func->driver == SIM_DRV_GIM) {
                out[0] = g; /* gim's reset_gpu: the adapter (UNVERIFIED for a hive) */
                return 1;
        }
        for (size_t i = 0; i < m->n_gpus && n < SIM_MAX_GPUS; i++) {
                struct sim_gpu *o = m->gpus[i];

                if (o == g || (!o->func->unplugged && driven(o) && sim_same_hive(o, g)))
                        out[n++] = o;
        }
        return n;
}

void sim_reset_perf_defaults(struct sim_gpu *g) {
        /* the SMU starts again from its defaults: power_dpm_force_performance_level auto,
         * the soft clock limits of pp_od_clk_voltage and the pm_policy levels */
        sim_perf_defaults(g);
}

/* The KFD nodes of a GPU come back after kernel.reset_kfd_down_ms (a thread of its own,
 * taking the lock as the control socket does). */
struct kfd_back {
        struct sim_gpu *g;
        uint64_t token;
        unsigned ms;
};

static void *kfd_back_thread(void *arg) {
        struct kfd_back *b = arg;
        struct sim_gpu *g = b->g;
        struct sim_machine *m = g->m;
        struct timespec ts = { .tv_sec = b->ms / 1000, .tv_nsec = (long) (b->ms % 1000) * 1000000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
        sim_fs_lock(m->fs);
        /* not if the driver went meanwhile, or a later reset took the nodes again */
        if (g->attached && !g->func->unplugged && g->reset.kfd_back_token == b->token &&
            !g->kfd_lost) {
                bool present = false;

                for (size_t i = 0; i < m->n_kfd; i++)
                        present |= m->kfd[i].gpu == g;
                if (!present) {
                        sim_topology_add_gpu(g);
                        sim_topology_refresh(m);
                }
        }
        sim_fs_unlock_sync(m->fs);
        free(b);
        return NULL;
}

static void kfd_back_later(struct sim_gpu *g, unsigned ms) {
        struct kfd_back *b = malloc(sizeof(*b));
        pthread_attr_t attr;
        pthread_t t;

        if (!b)
                return;
        *b = (struct kfd_back){ g, ++g->reset.kfd_back_token, ms };
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, kfd_back_thread, b) != 0) {
                free(b);
                sim_topology_add_gpu(g); /* at once, then */
        }
        pthread_attr_destroy(&attr);
}

static bool hive_resetting(struct sim_gpu **hive, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (hive[i]->reset.running)
                        return true;
        return false;
}

long long sim_reset_run(struct sim_gpu *g, int *read_err) {
        struct sim_machine *m = g->m;
        struct sim_gpu *hive[SIM_MAX_GPUS];
        const struct sim_kernel *k = &m->kernel;
        size_t n = hive_of(g, hive);
        int fail = g->reset.fail, hang = g->reset.hang_ms;
        bool fail_read = g->reset.fail_read, wedged = g->reset.fail_wedged, kfd_down;

        *read_err = 0;
        while (hive_resetting(hive, n)) {
                sim_fs_wait(m->fs);
                n = hive_of(g, hive);
        }
        if (!driven(g)) {
                *read_err = ENODEV;
                return 0;
        }
        if (fail && !g->reset.fail_always)
                g->reset.fail = 0;
        g->reset.hang_ms = 0;
        if (fail && fail_read) {
                *read_err = fail; /* the read itself fails: nothing was reset */
                return 0;
        }

        kfd_down = k->reset_kfd_down_ms > 0;
        for (size_t i = 0; i < n; i++) {
                struct sim_gpu *h = hive[i];

                h->reset.running = true;
                h->reset.released = false;
                h->reset.count++;
                sim_smi_gpu_reset(h, false);
                h->in_reset = true;
                sim_kfd_users_drop_queues(h);
                if (kfd_down && !fail && h->attached) {
                        sim_topology_remove_gpu(h);
                        h->reset.kfd_back_token++; /* a pending comeback is void */
                }
        }
        if (kfd_down && !fail)
                sim_topology_refresh(m);

        if (hang < 0) {
                while (!g->reset.released && driven(g))
                        sim_fs_wait(m->fs);
        } else if (hang > 0)
                sim_fs_sleep(m->fs, (unsigned) hang);
        else if (k->reset_ms > 0)
                sim_fs_sleep(m->fs, k->reset_ms);

        n = hive_of(g, hive); /* (a GPU may have gone meanwhile) */
        for (size_t i = 0; i < n; i++) {
                struct sim_gpu *h = hive[i];

                if (!h->reset.running)
                        continue; /* joined the hive meanwhile: not part of this reset */
                h->reset.running = false;
                if (fail) {
                        if (!wedged) {
                                h->in_reset = false;
                                sim_smi_gpu_reset(h, true);
                        }
                        continue;
                }
                if (!k->reset_keeps_cap) {
                        h->cap_w = h->cap_limits_w.def;
                        if (h->prod->ppt1)
                                h->ppt1_cap_w = h->ppt1_limits_w.def;
                }
                if (!k->reset_keeps_perf)
                        sim_reset_perf_defaults(h);
                h->in_reset = false;
                if (kfd_down && h->attached)
                        kfd_back_later(h, k->reset_kfd_down_ms);
                sim_smi_gpu_reset(h, true);
        }
        sim_fs_wake(m->fs); /* resets of the hive waiting for this one */
        return fail ? -(long long) fail : 0;
}

static int recover_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);
        int err;
        long long res = sim_reset_run(g, &err);

        if (err)
                return -err;
        return sim_emit(buf, "%lld\n", res);
}

static const struct sim_attr_ops recover_ops = { .show = recover_show };

void sim_reset_build_debugfs(struct sim_gpu *g, struct sim_node *dir) {
        sim_attr(dir, "amdgpu_gpu_recover", 0444, &recover_ops, g, 0);
}

json_object *sim_reset_dump(const struct sim_gpu *g) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "count", json_object_new_uint64(g->reset.count));
        json_object_object_add(o, "running", json_object_new_boolean(g->reset.running));
        json_object_object_add(o, "fail",
                               g->reset.fail ? json_object_new_int(g->reset.fail) : NULL);
        json_object_object_add(o, "fail_read", json_object_new_boolean(g->reset.fail_read));
        json_object_object_add(o, "fail_wedged", json_object_new_boolean(g->reset.fail_wedged));
        json_object_object_add(o, "fail_always", json_object_new_boolean(g->reset.fail_always));
        json_object_object_add(o, "hang_ms", json_object_new_int(g->reset.hang_ms));
        return o;
}

/* ---------------------------------------------------------------------------------------- */
/* Out-of-band controls (the control socket) */

static struct sim_gpu *gpu_locked(struct sim_machine *m, const char *bdf) {
        if (m->fs)
                sim_fs_lock(m->fs);
        for (size_t i = 0; i < m->n_gpus; i++) {
                struct sim_gpu *g = m->gpus[i];

                if (!g->func->unplugged && streq(g->func->bdf, bdf))
                        return g;
        }
        if (m->fs)
                sim_fs_unlock(m->fs);
        return NULL;
}

static void unlock(struct sim_machine *m) {
        if (m->fs)
                sim_fs_unlock_sync(m->fs);
}

int sim_reset_set_fail(struct sim_machine *m, const char *bdf, int err, bool read, bool wedged,
                       bool always) {
        struct sim_gpu *g;

        if (err < 0 || err > 4095)
                return -EINVAL;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        g->reset.fail = err;
        g->reset.fail_read = err && read;
        g->reset.fail_wedged = err && wedged;
        g->reset.fail_always = err && always;
        unlock(m);
        return 0;
}

int sim_reset_set_hang(struct sim_machine *m, const char *bdf, int ms) {
        struct sim_gpu *g;

        if (ms < -1 || ms > 600000)
                return -ERANGE;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        g->reset.hang_ms = ms;
        unlock(m);
        return 0;
}

int sim_reset_release(struct sim_machine *m, const char *bdf) {
        struct sim_gpu *g = gpu_locked(m, bdf);
        int r = 0;

        if (!g)
                return -ENODEV;
        if (!g->reset.running)
                r = -ESRCH;
        else {
                g->reset.released = true;
                if (m->fs)
                        sim_fs_wake(m->fs);
        }
        unlock(m);
        return r;
}

int sim_reset_config(struct sim_machine *m, const char *key, uint64_t value) {
        struct sim_kernel *k = &m->kernel;
        int r = 0;

        if (m->fs)
                sim_fs_lock(m->fs);
        if (streq(key, "time_ms") && value <= 600000)
                k->reset_ms = (uint32_t) value;
        else if (streq(key, "kfd_down_ms") && value <= 600000)
                k->reset_kfd_down_ms = (uint32_t) value;
        else if (streq(key, "keeps_cap") && value <= 1)
                k->reset_keeps_cap = value;
        else if (streq(key, "keeps_perf") && value <= 1)
                k->reset_keeps_perf = value;
        else if (streq(key, "time_ms") || streq(key, "kfd_down_ms") || streq(key, "keeps_cap") ||
                 streq(key, "keeps_perf"))
                r = -ERANGE;
        else
                r = -EINVAL;
        unlock(m);
        return r;
}
