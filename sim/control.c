/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: out-of-band changes of the machine state, the things no sysfs write does: KFD
 * users of a GPU, a GPU reset in progress, the platform (BMC) power limit, an error injected
 * into the next partition switch. The command line's test options use them now; the control
 * socket will call the same functions.
 */
#include "fs.h"
#include "machine.h"

static struct sim_gpu *gpu_locked(struct sim_machine *m, const char *bdf) {
        struct sim_gpu *g = sim_machine_gpu(m, bdf);

        if (g && m->fs)
                sim_fs_lock(m->fs);
        return g;
}

static void unlock(struct sim_machine *m) {
        if (m->fs)
                sim_fs_unlock(m->fs);
}

int sim_set_platform_limit(struct sim_machine *m, const char *bdf, int64_t watts) {
        struct sim_gpu *g;

        if (watts == 0 || watts > 4294)
                return -ERANGE;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        g->platform_limit_w = watts < 0 ? -1 : watts;
        unlock(m);
        return 0;
}

int sim_set_kfd_users(struct sim_machine *m, const char *bdf, unsigned users) {
        struct sim_gpu *g = gpu_locked(m, bdf);

        if (!g)
                return -ENODEV;
        g->kfd_users = users;
        unlock(m);
        return 0;
}

int sim_set_in_reset(struct sim_machine *m, const char *bdf, bool in_reset) {
        struct sim_gpu *g = gpu_locked(m, bdf);

        if (!g)
                return -ENODEV;
        g->in_reset = in_reset;
        unlock(m);
        return 0;
}

int sim_inject_switch_error(struct sim_machine *m, const char *bdf, int err, bool always) {
        struct sim_gpu *g;

        if (err < 0 || err > 4095)
                return -EINVAL;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        g->switch_error = err;
        g->switch_error_always = always;
        unlock(m);
        return 0;
}
