/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: out-of-band changes of the machine state, the things no sysfs write does (spec
 * amdgpu-sysfs.md §9 rule 8): KFD users of a GPU (counted, or by process with their
 * class/kfd/kfd/proc/<pid>/ entries), a GPU reset in progress, the platform (BMC) power limit,
 * an error injected into the next partition switch, how long a switch takes, sensors held at a
 * value, hot-unplug and re-plug, and the state as JSON. The control socket (ctl.c) and the
 * command line's test options call these.
 *
 * Each function takes the fs lock, and returns once the notifier told the kernel of what
 * changed in the tree, so that a client reading the tree after the answer sees the new one.
 * Before the tree exists (the command-line options) there is nothing to lock.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <strings.h>
#include <sys/syscall.h>

#include <json-c/json.h>

#include "fs.h"
#include "tree.h"

#define KFD_PROC "devices/virtual/kfd/kfd/proc"
#define PASID_FIRST 32768 /* amdgpu's PASIDs are allocated from 1 << 15 */

/* What a process does on one KFD node (one compute partition of a GPU), or, with @raw_id, an
 * entry for a gpu_id no node has (bad input for readers). */
struct kfd_use {
        int16_t gpu;  /* GPU index, -1: @raw_id */
        uint8_t part; /* the partition, its KFD node */
        uint32_t raw_id;
        uint64_t vram, sdma, evicted_ms, faults, page_in, page_out;
        unsigned queues, cu_occupancy;
        bool named; /* an add named this node (not only given it with its GPU or "all") */
};

/* A process using GPUs through KFD: a process device (pdd) per KFD node its device cgroup lets
 * it open, each with the files of kfd_procfs_add_sysfs_*() and its queues. */
struct kfd_proc {
        pid_t pid; /* in the requester's PID namespace: its proc/ entry's name */
        int pidfd; /* readable once the process exited */
        unsigned pasid;
        uint64_t gpus; /* 1 << GPU index: the GPUs it holds (a pdd on a node of each) */
        struct kfd_use *uses;
        size_t n_uses;
        char comm[17];
};

/* What replug restores: the GPU as it was at load. */
struct gpu_boot {
        enum sim_compute compute;
        unsigned nps_current, nps_requested;
        bool nps_armed;
        unsigned kfd_users;
        bool in_reset;
        uint32_t cap_w, ppt1_cap_w;
        int64_t platform_limit_w;
        unsigned metrics_rev, metrics_layout;
        struct sim_sensors sensors;
        int driver;
};

struct sim_control {
        struct gpu_boot *boot; /* per GPU index */
        size_t n_boot;
        struct kfd_proc *procs;
        size_t n_procs;
};

const char *const sim_sensor_names[_SIM_SENSOR_MAX] = {
        [SIM_SENSOR_POWER_W] = "power_w",
        [SIM_SENSOR_TEMP_JUNCTION_C] = "temp_junction_c",
        [SIM_SENSOR_TEMP_MEM_C] = "temp_mem_c",
        [SIM_SENSOR_GFX_BUSY_PCT] = "gfx_busy_pct",
        [SIM_SENSOR_MEM_BUSY_PCT] = "mem_busy_pct",
        [SIM_SENSOR_SCLK_MHZ] = "sclk_mhz",
        [SIM_SENSOR_MCLK_MHZ] = "mclk_mhz",
        [SIM_SENSOR_VRAM_USED_BYTES] = "vram_used_bytes",
};

/* ---------------------------------------------------------------------------------------- */
/* errno names */

static const struct {
        const char *name;
        int err;
} errno_names[] = {
        { "EPERM", EPERM },
        { "ENOENT", ENOENT },
        { "ESRCH", ESRCH },
        { "EINTR", EINTR },
        { "EIO", EIO },
        { "ENXIO", ENXIO },
        { "E2BIG", E2BIG },
        { "EAGAIN", EAGAIN },
        { "ENOMEM", ENOMEM },
        { "EACCES", EACCES },
        { "EFAULT", EFAULT },
        { "EBUSY", EBUSY },
        { "EEXIST", EEXIST },
        { "ENODEV", ENODEV },
        { "ENOTDIR", ENOTDIR },
        { "EISDIR", EISDIR },
        { "EINVAL", EINVAL },
        { "ENOSPC", ENOSPC },
        { "EROFS", EROFS },
        { "ERANGE", ERANGE },
        { "ENAMETOOLONG", ENAMETOOLONG },
        { "ELOOP", ELOOP },
        { "ENOMSG", ENOMSG },
        { "ENODATA", ENODATA },
        { "ETIME", ETIME },
        { "ECOMM", ECOMM },
        { "EPROTO", EPROTO },
        { "EBADMSG", EBADMSG },
        { "EOVERFLOW", EOVERFLOW },
        { "EOPNOTSUPP", EOPNOTSUPP },
        { "ENOTSUP", ENOTSUP },
        { "ECONNREFUSED", ECONNREFUSED },
        { "ETIMEDOUT", ETIMEDOUT },
        { "ECANCELED", ECANCELED },
        { "EREMOTEIO", EREMOTEIO },
};

int sim_errno_parse(const char *s, int *ret) {
        char *end;
        long v;

        for (size_t i = 0; i < ELEMENTSOF(errno_names); i++)
                if (strcasecmp(errno_names[i].name, s) == 0) {
                        *ret = errno_names[i].err;
                        return 0;
                }
        errno = 0;
        v = strtol(s, &end, 10);
        /* what the kernel passes from a FUSE reply to user space: 1..511 */
        if (*s && !*end && !errno && v > 0 && v < 512) {
                *ret = (int) v;
                return 0;
        }
        return -EINVAL;
}

const char *sim_errno_name(int err) {
        for (size_t i = 0; i < ELEMENTSOF(errno_names); i++)
                if (errno_names[i].err == err)
                        return errno_names[i].name;
        return NULL;
}

/* ---------------------------------------------------------------------------------------- */

static void lock(struct sim_machine *m) {
        if (m->fs)
                sim_fs_lock(m->fs);
}

static void unlock(struct sim_machine *m) {
        if (m->fs)
                sim_fs_unlock_sync(m->fs);
}

/* The function at @bdf on the bus (or, with @unplugged, off it). */
static struct sim_func *find_func(struct sim_machine *m, const char *bdf, bool unplugged) {
        for (size_t i = 0; i < m->n_funcs; i++)
                if (m->funcs[i]->unplugged == unplugged && sysfs_streq(m->funcs[i]->bdf, bdf))
                        return m->funcs[i];
        return NULL;
}

/* The GPU at @bdf with the lock held, or NULL (unlocked). */
static struct sim_gpu *gpu_locked(struct sim_machine *m, const char *bdf) {
        struct sim_func *f;

        lock(m);
        f = find_func(m, bdf, false);
        if (f && f->gpu)
                return f->gpu;
        unlock(m);
        return NULL;
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
        /* KFD's pre-reset at the start of a recovery, post-reset at its end */
        if (g->attached && g->in_reset != in_reset)
                sim_smi_gpu_reset(g, !in_reset);
        g->in_reset = in_reset;
        unlock(m);
        return 0;
}

int sim_perf_ctl_defaults(struct sim_machine *m, const char *bdf) {
        struct sim_gpu *g = gpu_locked(m, bdf);

        if (!g)
                return -ENODEV;
        sim_perf_defaults(g);
        unlock(m);
        return 0;
}

int sim_perf_ctl_unavailable(struct sim_machine *m, const char *bdf, bool on) {
        struct sim_gpu *g = gpu_locked(m, bdf);

        if (!g)
                return -ENODEV;
        g->perf.unavailable = on;
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

int sim_set_switch_time(struct sim_machine *m, const char *bdf, unsigned ms) {
        struct sim_gpu *g;

        if (ms > 600000)
                return -ERANGE;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        g->switch_ms = ms;
        unlock(m);
        return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Links (health-and-control.md §3) */

int sim_set_xgmi_error(struct sim_machine *m, const char *bdf, unsigned status) {
        struct sim_gpu *g;

        if (status > 2)
                return -ERANGE;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        if (!g->hive_id) {
                unlock(m);
                return -EOPNOTSUPP;
        }
        g->xgmi_error = status;
        unlock(m);
        return 0;
}

/* The gpu_metrics link index at @peer that leads back to @g over sub-link @sub. */
static int peer_link(const struct sim_gpu *peer, const struct sim_gpu *g, unsigned sub) {
        struct sim_gpu *list[SIM_MAX_GPUS];
        size_t n = sim_hive_peers(peer, list);

        for (size_t k = 0; k < n; k++)
                if (list[k] == g)
                        return (int) (k * sim_xgmi_links_per_peer(peer) + sub);
        return -1;
}

int sim_set_xgmi_link(struct sim_machine *m, const char *bdf, unsigned link, bool up) {
        struct sim_gpu *list[SIM_MAX_GPUS], *g, *peer;
        unsigned lpp;
        size_t n;
        int back;

        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        n = sim_hive_peers(g, list);
        lpp = sim_xgmi_links_per_peer(g);
        if (!n) {
                unlock(m);
                return -EOPNOTSUPP;
        }
        if (link >= 8 || link >= n * lpp) {
                unlock(m);
                return -ERANGE;
        }
        /* the traffic until now went over the link as it was */
        if (m->fs)
                sim_telemetry_sync(m);
        peer = list[link / lpp];
        back = peer_link(peer, g, link % lpp);
        if (up)
                g->xgmi_down &= (uint8_t) ~(1u << link);
        else
                g->xgmi_down |= (uint8_t) (1u << link);
        /* one link, two ends */
        if (back >= 0 && back < 8) {
                if (up)
                        peer->xgmi_down &= (uint8_t) ~(1u << back);
                else
                        peer->xgmi_down |= (uint8_t) (1u << back);
        }
        unlock(m);
        return 0;
}

/* The PCI core's speed strings, slowest first. */
static const char *const pcie_speeds[] = {
        "2.5 GT/s PCIe",  "5.0 GT/s PCIe",  "8.0 GT/s PCIe",
        "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe",
};

static int speed_index(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(pcie_speeds); i++) {
                size_t len = strcspn(pcie_speeds[i], " ");

                if (strncmp(s, pcie_speeds[i], len) == 0 && (!s[len] || s[len] == ' '))
                        return (int) i;
        }
        return -1;
}

/* One end of the link retrained: width and speed no higher than what it can do. */
static void retrain(struct sim_func *f, unsigned width, int speed) {
        int max = speed_index(f->link_speed_max);

        f->link_width = MIN(width, f->link_width_max);
        f->link_speed = pcie_speeds[max >= 0 ? MIN(speed, max) : speed];
}

int sim_set_pcie_link(struct sim_machine *m, const char *bdf, unsigned width, const char *speed) {
        struct sim_gpu *g;
        struct sim_func *f, *up;
        int s = speed_index(speed);

        if (s < 0 || (width & (width - 1)) || width == 0 || width > 32)
                return -EINVAL;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        f = g->func;
        if (!f->pcie || width > f->link_width_max || s > speed_index(f->link_speed_max)) {
                unlock(m);
                return -ERANGE;
        }
        retrain(f, width, s);
        /* the port above is the link's other end (a root port or a switch's downstream port) */
        up = f->upstream;
        if (up && up->pcie && (up->kind == SIM_FUNC_ROOT_PORT || up->kind == SIM_FUNC_SWITCH_DOWN))
                retrain(up, width, s);
        unlock(m);
        return 0;
}

int sim_pcie_replay(struct sim_machine *m, const char *bdf, uint64_t replays, uint64_t recoveries) {
        struct sim_gpu *g = gpu_locked(m, bdf);

        if (!g)
                return -ENODEV;
        g->pcie_replays += replays;
        g->pcie_recoveries += recoveries;
        unlock(m);
        return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Sensors */

uint64_t sim_sensor_max(const struct sim_gpu *g, enum sim_sensor s) {
        switch (s) {
        case SIM_SENSOR_POWER_W:
                return 5000;
        case SIM_SENSOR_TEMP_JUNCTION_C:
        case SIM_SENSOR_TEMP_MEM_C:
                return 200;
        case SIM_SENSOR_GFX_BUSY_PCT:
        case SIM_SENSOR_MEM_BUSY_PCT:
                return 100;
        case SIM_SENSOR_SCLK_MHZ:
        case SIM_SENSOR_MCLK_MHZ:
                return 10000;
        case SIM_SENSOR_VRAM_USED_BYTES:
                return g->prod->vram_bytes;
        default:
                return 0;
        }
}

void sim_sensors_apply_pins(struct sim_gpu *g) {
        struct sim_telemetry *t = &g->tel;
        const struct sim_sensors *p = &g->pin;

        if (g->pinned & (1u << SIM_SENSOR_POWER_W))
                t->power_w = p->power_w;
        if (g->pinned & (1u << SIM_SENSOR_TEMP_JUNCTION_C)) {
                t->junction_c = p->junction_c;
                t->vrsoc_c = p->junction_c > 8 ? p->junction_c - 8 : 0;
        }
        if (g->pinned & (1u << SIM_SENSOR_TEMP_MEM_C))
                t->mem_c = p->mem_c;
        if (g->pinned & (1u << SIM_SENSOR_GFX_BUSY_PCT))
                t->gpu_busy = p->gpu_busy_percent;
        if (g->pinned & (1u << SIM_SENSOR_MEM_BUSY_PCT))
                t->mem_busy = p->mem_busy_percent;
        if (g->pinned & (1u << SIM_SENSOR_SCLK_MHZ))
                t->sclk_mhz = p->sclk_mhz;
        if (g->pinned & (1u << SIM_SENSOR_MCLK_MHZ))
                t->mclk_mhz = p->mclk_mhz;
}

int sim_set_sensor(struct sim_machine *m, const char *bdf, enum sim_sensor s, uint64_t value,
                   bool automatic) {
        struct sim_control *ctl = m->control;
        struct sim_gpu *g;

        if (s < 0 || s >= _SIM_SENSOR_MAX)
                return -EINVAL;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        if (!automatic && value > sim_sensor_max(g, s)) {
                unlock(m);
                return -ERANGE;
        }
        if (s == SIM_SENSOR_VRAM_USED_BYTES) {
                /* not living: the value itself, or the one at load */
                if (automatic)
                        value = ctl && g->index < ctl->n_boot
                                        ? ctl->boot[g->index].sensors.vram_used_bytes
                                        : g->sensors.vram_used_bytes;
                g->sensors.vram_used_bytes = value;
                if (m->fs)
                        sim_topology_refresh(m); /* mem_banks/0/used_memory */
                unlock(m);
                return 0;
        }
        if (automatic) {
                g->pinned &= ~(1u << s);
                unlock(m);
                return 0;
        }
        switch (s) {
        case SIM_SENSOR_POWER_W:
                g->pin.power_w = (unsigned) value;
                break;
        case SIM_SENSOR_TEMP_JUNCTION_C:
                g->pin.junction_c = (unsigned) value;
                break;
        case SIM_SENSOR_TEMP_MEM_C:
                g->pin.mem_c = (unsigned) value;
                break;
        case SIM_SENSOR_GFX_BUSY_PCT:
                g->pin.gpu_busy_percent = (unsigned) value;
                break;
        case SIM_SENSOR_MEM_BUSY_PCT:
                g->pin.mem_busy_percent = (unsigned) value;
                break;
        case SIM_SENSOR_SCLK_MHZ:
                g->pin.sclk_mhz = (unsigned) value;
                break;
        default:
                g->pin.mclk_mhz = (unsigned) value;
                break;
        }
        g->pinned |= 1u << s;
        /* from now: bring the telemetry to now first, so that no step goes back before it */
        if (m->fs)
                sim_telemetry_sync(m);
        sim_sensors_apply_pins(g);
        unlock(m);
        return 0;
}

int sim_set_limit(struct sim_machine *m, const char *bdf, enum sim_limiter l, unsigned pct) {
        struct sim_gpu *g;

        if (l < 0 || l >= _SIM_LIMITER_MAX)
                return -EINVAL;
        if (pct > 100)
                return -ERANGE;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        /* the steps until now ran under the old share */
        if (m->fs)
                sim_telemetry_sync(m);
        g->limit_pct[l] = pct;
        unlock(m);
        return 0;
}

int sim_set_accumulation_counter(struct sim_machine *m, const char *bdf, uint64_t value) {
        struct sim_gpu *g = gpu_locked(m, bdf);

        if (!g)
                return -ENODEV;
        if (m->fs)
                sim_telemetry_sync(m);
        g->tel.accumulation_counter = value;
        unlock(m);
        return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* KFD users by process */

static int pidfd_open_(pid_t pid) {
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);

        return fd < 0 ? -errno : fd;
}

static bool proc_exited(const struct kfd_proc *p) {
        struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };

        return poll(&pfd, 1, 0) > 0;
}

/* From /proc/self/fdinfo of a pidfd: the PID in our namespace (-1: exited), and whether @pid
 * names it in some namespace (NSpid). Old kernels without these lines: @pid, true. */
static int pidfd_info(int pidfd, pid_t pid, pid_t *ret_own) {
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], line[256];
        pid_t own = pid;
        bool named = true;

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "Pid:", 4) == 0)
                        own = (pid_t) strtol(line + 4, NULL, 10);
                else if (strncmp(line, "NSpid:", 6) == 0) {
                        char *p = line + 6, *end;

                        named = false;
                        for (;;) {
                                long v = strtol(p, &end, 10);

                                if (end == p)
                                        break;
                                if (v == pid)
                                        named = true;
                                p = end;
                        }
                }
        }
        if (own <= 0)
                return -ESRCH;
        if (!named)
                return -ESRCH; /* the descriptor is of another process */
        *ret_own = own;
        return 0;
}

static struct kfd_proc *proc_find(struct sim_control *ctl, pid_t pid) {
        for (size_t i = 0; i < ctl->n_procs; i++)
                if (ctl->procs[i].pid == pid)
                        return &ctl->procs[i];
        return NULL;
}

static unsigned pasid_alloc(const struct sim_control *ctl) {
        for (unsigned pasid = PASID_FIRST;; pasid++) {
                bool used = false;

                for (size_t i = 0; i < ctl->n_procs && !used; i++)
                        used = ctl->procs[i].pasid == pasid;
                if (!used)
                        return pasid;
        }
}

/* The size in bytes of the compute queues a process makes (ROCr's AQL rings, KFD queue type 0:
 * KFD_QUEUE_TYPE_COMPUTE). */
#define QUEUE_BYTES (1u << 20)
#define QUEUE_TYPE_COMPUTE 0

static struct kfd_use *use_find(const struct kfd_proc *p, int gpu, unsigned part) {
        for (size_t i = 0; i < p->n_uses; i++)
                if (p->uses[i].gpu == gpu && p->uses[i].part == part)
                        return &p->uses[i];
        return NULL;
}

/* The uses of @p in the order of its process devices: KFD node order (kfd_init_apertures()
 * walks the topology), then the raw entries. @f is called for each. */
static void uses_in_order(struct sim_machine *m, const struct kfd_proc *p,
                          void (*f)(struct sim_node *d, const struct kfd_use *u, uint32_t gpu_id,
                                    unsigned *qid),
                          struct sim_node *d, unsigned *qid) {
        for (size_t i = 0; i < m->n_kfd; i++) {
                const struct kfd_use *u = use_find(p, (int) m->kfd[i].gpu->index, m->kfd[i].part);

                if (u)
                        f(d, u, m->kfd[i].gpu_id, qid);
        }
        for (size_t i = 0; i < p->n_uses; i++)
                if (p->uses[i].gpu < 0)
                        f(d, &p->uses[i], p->uses[i].raw_id, qid);
}

/* kfd_procfs_add_sysfs_stats(): stats_<gpu_id>/evicted_ms ("%llu\n") and cu_occupancy ("%d\n";
 * GFX 9.4.3 and 9.5 implement get_cu_occupancy). */
static void build_stats(struct sim_node *d, const struct kfd_use *u, uint32_t gpu_id,
                        unsigned *qid) {
        struct sim_node *s = sim_mkdirf(d, "stats_%" PRIu32, gpu_id);

        sim_text(s, "evicted_ms", 0444, "%" PRIu64, u->evicted_ms);
        sim_text(s, "cu_occupancy", 0444, "%d", (int) u->cu_occupancy);
}

/* kfd_procfs_add_sysfs_files(): vram_<gpu_id> (pdd->vram_usage) and sdma_<gpu_id>, "%llu\n". */
static void build_files(struct sim_node *d, const struct kfd_use *u, uint32_t gpu_id,
                        unsigned *qid) {
        char name[32];

        snprintf(name, sizeof(name), "vram_%" PRIu32, gpu_id);
        sim_text(d, name, 0444, "%" PRIu64, u->vram);
        snprintf(name, sizeof(name), "sdma_%" PRIu32, gpu_id);
        sim_text(d, name, 0444, "%" PRIu64, u->sdma);
}

/* kfd_procfs_add_sysfs_counters(): counters_<gpu_id>/{faults,page_in,page_out}, "%llu\n" (SVM
 * is supported on every GPU simulated). */
static void build_counters(struct sim_node *d, const struct kfd_use *u, uint32_t gpu_id,
                           unsigned *qid) {
        struct sim_node *s = sim_mkdirf(d, "counters_%" PRIu32, gpu_id);

        sim_text(s, "faults", 0444, "%" PRIu64, u->faults);
        sim_text(s, "page_in", 0444, "%" PRIu64, u->page_in);
        sim_text(s, "page_out", 0444, "%" PRIu64, u->page_out);
}

/* kfd_procfs_add_queue(): queues/<qid>/ with gpuid ("%u"), size ("%llu") and type ("%d"), no
 * newline (kfd_procfs_queue_show()); qids are the process's, lowest free first. */
static void build_queues(struct sim_node *d, const struct kfd_use *u, uint32_t gpu_id,
                         unsigned *qid) {
        for (unsigned i = 0; i < u->queues; i++) {
                struct sim_node *q = sim_mkdirf(d, "queues/%u", (*qid)++);
                char buf[32];
                int len;

                len = snprintf(buf, sizeof(buf), "%" PRIu32, gpu_id);
                sim_raw(q, "gpuid", 0444, buf, (size_t) len);
                len = snprintf(buf, sizeof(buf), "%u", QUEUE_BYTES);
                sim_raw(q, "size", 0444, buf, (size_t) len);
                len = snprintf(buf, sizeof(buf), "%d", QUEUE_TYPE_COMPUTE);
                sim_raw(q, "type", 0444, buf, (size_t) len);
        }
}

/* class/kfd/kfd/proc/<pid>/ as KFD creates it: pasid, queues/, then per process device (in
 * topology order) stats_<gpu_id>/, vram_<gpu_id> and sdma_<gpu_id>, counters_<gpu_id>/. */
static void proc_build(struct sim_machine *m, const struct kfd_proc *p) {
        struct sim_node *d = sim_mkdirf(sim_lookup(m->fs, KFD_PROC), "%d", (int) p->pid);
        unsigned qid = 0;

        sim_text(d, "pasid", 0444, "%u", p->pasid);
        sim_mkdir(d, "queues");
        uses_in_order(m, p, build_queues, d, &qid);
        uses_in_order(m, p, build_stats, d, &qid);
        uses_in_order(m, p, build_files, d, &qid);
        uses_in_order(m, p, build_counters, d, &qid);
}

static void proc_unbuild(struct sim_machine *m, const struct kfd_proc *p) {
        char path[64];

        snprintf(path, sizeof(path), KFD_PROC "/%d", (int) p->pid);
        sim_remove(sim_lookup(m->fs, path));
}

static void proc_drop(struct sim_machine *m, size_t i) {
        struct sim_control *ctl = m->control;

        proc_unbuild(m, &ctl->procs[i]);
        (void) close(ctl->procs[i].pidfd);
        free(ctl->procs[i].uses);
        memmove(ctl->procs + i, ctl->procs + i + 1, (ctl->n_procs - i - 1) * sizeof(*ctl->procs));
        ctl->n_procs--;
}

/* KFD drops a process when it exits (its mm goes). */
static void prune_locked(struct sim_machine *m) {
        struct sim_control *ctl = m->control;

        for (size_t i = ctl ? ctl->n_procs : 0; i > 0; i--)
                if (proc_exited(&ctl->procs[i - 1]))
                        proc_drop(m, i - 1);
}

unsigned sim_kfd_users_of(struct sim_gpu *g) {
        struct sim_control *ctl = g->m->control;
        unsigned n = g->kfd_users;

        prune_locked(g->m);
        for (size_t i = 0; ctl && i < ctl->n_procs; i++)
                if (ctl->procs[i].gpus & (1ULL << g->index))
                        n++;
        /* an SMI events client's process holds /dev/kfd: a device of every GPU */
        return n + sim_smi_clients(g->m);
}

uint64_t sim_kfd_vram_used(const struct sim_gpu *g, int part) {
        const struct sim_control *ctl = g->m->control;
        uint64_t sum = 0;

        for (size_t i = 0; ctl && i < ctl->n_procs; i++)
                for (size_t j = 0; j < ctl->procs[i].n_uses; j++) {
                        const struct kfd_use *u = &ctl->procs[i].uses[j];

                        if (u->gpu == (int) g->index && (part < 0 || u->part == (unsigned) part))
                                sum += u->vram;
                }
        return sum;
}

/* Drops the uses of GPU @gpu (@part -1: all of them); the GPU's bit goes with its last one. */
static void uses_drop(struct kfd_proc *p, int gpu, int part) {
        size_t out = 0;
        bool left = false;

        for (size_t i = 0; i < p->n_uses; i++) {
                if (p->uses[i].gpu == gpu && (part < 0 || p->uses[i].part == (unsigned) part))
                        continue;
                left |= p->uses[i].gpu == gpu;
                p->uses[out++] = p->uses[i];
        }
        p->n_uses = out;
        if (!left && gpu >= 0)
                p->gpus &= ~(1ULL << gpu);
}

static bool proc_empty(const struct kfd_proc *p) {
        return p->n_uses == 0;
}

void sim_kfd_users_forget_gpu(struct sim_gpu *g) {
        struct sim_machine *m = g->m;
        struct sim_control *ctl = m->control;
        uint64_t bit = 1ULL << g->index;

        for (size_t i = ctl ? ctl->n_procs : 0; i > 0; i--) {
                struct kfd_proc *p = &ctl->procs[i - 1];

                if (!(p->gpus & bit))
                        continue;
                uses_drop(p, (int) g->index, -1);
                if (proc_empty(p)) {
                        proc_drop(m, i - 1);
                        continue;
                }
                proc_unbuild(m, p);
                proc_build(m, p);
        }
}

/* A GPU reset: KFD evicts the processes' queues on the GPU (health-and-control.md §4.4: they
 * lose them); the processes stay, with their memory. */
void sim_kfd_users_drop_queues(struct sim_gpu *g) {
        struct sim_machine *m = g->m;
        struct sim_control *ctl = m->control;
        uint64_t bit = 1ULL << g->index;

        for (size_t i = 0; ctl && i < ctl->n_procs; i++) {
                struct kfd_proc *p = &ctl->procs[i];
                bool changed = false;

                if (!(p->gpus & bit))
                        continue;
                for (size_t k = 0; k < p->n_uses; k++)
                        if (p->uses[k].gpu == (int) g->index && p->uses[k].queues) {
                                p->uses[k].queues = 0;
                                changed = true;
                        }
                if (changed) {
                        proc_unbuild(m, p);
                        proc_build(m, p);
                }
        }
}

static bool gpu_has_kfd_nodes(const struct sim_gpu *g) {
        for (size_t i = 0; i < g->m->n_kfd; i++)
                if (g->m->kfd[i].gpu == g)
                        return true;
        return false;
}

/* The process of @pid (made, with its pidfd taken from *@fd, if it is new); the lock held.
 * *@created tells whether it is new. */
static int proc_get(struct sim_machine *m, pid_t pid, pid_t own, int *fd, struct kfd_proc **ret,
                    bool *created) {
        struct sim_control *ctl = m->control;
        struct kfd_proc *p = proc_find(ctl, pid), *v;
        char path[64];
        _cleanup_fclose_ FILE *f = NULL;

        *created = false;
        if (p) {
                *ret = p;
                return 0;
        }
        v = realloc(ctl->procs, (ctl->n_procs + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        ctl->procs = v;
        p = &ctl->procs[ctl->n_procs];
        *p = (struct kfd_proc){ .pid = pid, .pidfd = *fd, .pasid = pasid_alloc(ctl) };
        *fd = -1;
        snprintf(path, sizeof(path), "/proc/%d/comm", (int) own);
        f = fopen(path, "re");
        if (!f || !fgets(p->comm, sizeof(p->comm), f))
                snprintf(p->comm, sizeof(p->comm), "?");
        p->comm[strcspn(p->comm, "\n")] = '\0';
        ctl->n_procs++;
        *created = true;
        *ret = p;
        return 0;
}

/* A use of node (@gpu, @part) with @u (NULL: an implicit one, all zero, kept if there is one). */
static int use_set(struct kfd_proc *p, int gpu, unsigned part, uint32_t raw_id,
                   const struct sim_kfd_usage *u) {
        struct kfd_use *x = gpu >= 0 ? use_find(p, gpu, part) : NULL, *v;

        if (!x) {
                v = realloc(p->uses, (p->n_uses + 1) * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                p->uses = v;
                x = &p->uses[p->n_uses++];
                *x = (struct kfd_use){ .gpu = (int16_t) gpu,
                                       .part = (uint8_t) part,
                                       .raw_id = raw_id };
        }
        if (u) {
                x->named = true;
                x->vram = u->vram;
                x->sdma = u->sdma;
                x->evicted_ms = u->evicted_ms;
                x->faults = u->faults;
                x->page_in = u->page_in;
                x->page_out = u->page_out;
                x->queues = u->queues;
                x->cu_occupancy = u->cu_occupancy;
        }
        if (gpu >= 0)
                p->gpus |= 1ULL << gpu;
        return 0;
}

static bool use_named(const struct kfd_use *x) {
        return x && x->named;
}

/* The pidfd of @pid (taken over, or opened) and the PID in our namespace. */
static int pid_resolve(pid_t pid, int *fd, pid_t *own) {
        if (pid <= 0)
                return -EINVAL;
        if (*fd < 0) {
                *fd = pidfd_open_(pid);
                if (*fd < 0)
                        return *fd;
        }
        return pidfd_info(*fd, pid, own);
}

int sim_kfd_user_add(struct sim_machine *m, const char *bdf, int part, pid_t pid, int pidfd,
                     const struct sim_kfd_usage *u, bool all_nodes) {
        _cleanup_close_ int fd = pidfd;
        static const struct sim_kfd_usage none;
        struct sim_control *ctl = m->control;
        struct kfd_proc *p;
        struct sim_gpu *g;
        unsigned target = 0;
        bool created, found = false;
        pid_t own = pid;
        int r;

        if (!u)
                u = &none;
        if (pid <= 0)
                return -EINVAL;
        if (!ctl || !m->fs)
                return -EOPNOTSUPP;
        r = pid_resolve(pid, &fd, &own);
        if (r < 0)
                return r;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        prune_locked(m);
        if (!gpu_has_kfd_nodes(g) || g->index >= 64) {
                unlock(m);
                return -ENODEV;
        }
        /* the node that gets the usage: the partition named, or the GPU's first node */
        for (size_t i = 0; i < m->n_kfd && !found; i++)
                if (m->kfd[i].gpu == g && (part < 0 || m->kfd[i].part == (unsigned) part)) {
                        target = m->kfd[i].part;
                        found = true;
                }
        if (!found) {
                unlock(m);
                return -ENXIO;
        }
        if (u->vram > g->prod->vram_bytes) {
                unlock(m);
                return -ERANGE;
        }
        p = proc_find(ctl, pid);
        if (p && (part < 0 ? (p->gpus & (1ULL << g->index)) && !all_nodes
                           : use_named(use_find(p, (int) g->index, target)))) {
                unlock(m);
                return -EEXIST;
        }
        if (g->sensors.vram_used_bytes + sim_kfd_vram_used(g, -1) + u->vram > g->prod->vram_bytes) {
                unlock(m);
                return -ENOSPC;
        }
        r = proc_get(m, pid, own, &fd, &p, &created);
        if (r < 0) {
                unlock(m);
                return r;
        }
        if (!created)
                proc_unbuild(m, p);
        for (size_t i = 0; i < m->n_kfd && r >= 0; i++) {
                const struct sim_kfd_entry *e = &m->kfd[i];
                bool mine = e->gpu == g && e->part == target;

                if (mine)
                        r = use_set(p, (int) g->index, target, 0, u);
                else if (all_nodes || (part < 0 && e->gpu == g))
                        r = use_set(p, (int) e->gpu->index, e->part, 0, NULL);
        }
        proc_build(m, p);
        unlock(m);
        return r;
}

int sim_kfd_user_add_raw(struct sim_machine *m, uint32_t gpu_id, pid_t pid, int pidfd,
                         const struct sim_kfd_usage *u) {
        _cleanup_close_ int fd = pidfd;
        struct sim_control *ctl = m->control;
        struct kfd_proc *p;
        bool created;
        pid_t own = pid;
        int r;

        if (!ctl || !m->fs)
                return -EOPNOTSUPP;
        r = pid_resolve(pid, &fd, &own);
        if (r < 0)
                return r;
        lock(m);
        prune_locked(m);
        p = proc_find(ctl, pid);
        for (size_t i = 0; p && i < p->n_uses; i++)
                if (p->uses[i].gpu < 0 && p->uses[i].raw_id == gpu_id) {
                        unlock(m);
                        return -EEXIST;
                }
        r = proc_get(m, pid, own, &fd, &p, &created);
        if (r >= 0) {
                if (!created)
                        proc_unbuild(m, p);
                r = use_set(p, -1, 0, gpu_id, u);
                proc_build(m, p);
        }
        unlock(m);
        return r;
}

int sim_kfd_user_remove(struct sim_machine *m, const char *bdf, int part, pid_t pid) {
        struct sim_control *ctl = m->control;
        struct kfd_proc *p;
        struct sim_gpu *g;

        if (!ctl)
                return -ENOENT;
        g = gpu_locked(m, bdf);
        if (!g)
                return -ENODEV;
        prune_locked(m);
        p = proc_find(ctl, pid);
        if (!p || !(p->gpus & (1ULL << g->index)) ||
            (part >= 0 && !use_find(p, (int) g->index, (unsigned) part))) {
                unlock(m);
                return -ENOENT;
        }
        uses_drop(p, (int) g->index, part);
        if (proc_empty(p))
                proc_drop(m, (size_t) (p - ctl->procs));
        else {
                proc_unbuild(m, p);
                proc_build(m, p);
        }
        unlock(m);
        return 0;
}

bool sim_kfd_users_prune(struct sim_machine *m) {
        bool left;

        if (!m->control)
                return false;
        lock(m);
        prune_locked(m);
        /* SMI event clients too: their processes' proc/<pid>/ go with their last stream */
        left = m->control->n_procs > 0 || sim_smi_clients(m) > 0;
        unlock(m);
        return left;
}

int sim_kfd_users_list(struct sim_machine *m, char **ret_text) {
        struct sim_control *ctl = m->control;
        char *text = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        lock(m);
        prune_locked(m);
        for (size_t i = 0; i < m->n_gpus; i++) {
                const struct sim_gpu *g = m->gpus[i];

                if (g->func->unplugged)
                        continue;
                for (size_t j = 0; ctl && j < ctl->n_procs; j++)
                        if (ctl->procs[j].gpus & (1ULL << g->index))
                                fprintf(f, "%s %d %u %s\n", g->func->bdf, (int) ctl->procs[j].pid,
                                        ctl->procs[j].pasid, ctl->procs[j].comm);
                if (g->kfd_users)
                        fprintf(f, "%s - - (%u without a process)\n", g->func->bdf, g->kfd_users);
        }
        unlock(m);
        if (fclose(f) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret_text = text;
        return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Hot-plug */

/* What the PCI core removes with the device: its directory and the links to it. */
static void func_unbuild(struct sim_func *f) {
        struct sim_fs *fs = f->m->fs;
        struct sim_node *group;
        char path[128];

        sim_remove(sim_lookup(fs, f->path));
        snprintf(path, sizeof(path), "bus/pci/devices/%s", f->bdf);
        sim_remove(sim_lookup(fs, path));
        snprintf(path, sizeof(path), "kernel/iommu_groups/%u/devices/%s", f->iommu_group, f->bdf);
        sim_remove(sim_lookup(fs, path));
        /* the group goes with its last device */
        snprintf(path, sizeof(path), "kernel/iommu_groups/%u", f->iommu_group);
        group = sim_lookup(fs, path);
        if (group) {
                bool empty = true;

                for (size_t i = 0; i < f->m->n_funcs; i++) {
                        const struct sim_func *o = f->m->funcs[i];

                        if (o != f && !o->unplugged && o->iommu_group == f->iommu_group)
                                empty = false;
                }
                if (empty)
                        sim_remove(group);
        }
}

int sim_gpu_unplug(struct sim_machine *m, const char *bdf) {
        struct sim_func *f;

        if (!m->fs || !m->control)
                return -EOPNOTSUPP;
        lock(m);
        f = find_func(m, bdf, false);
        if (!f || !f->gpu) {
                unlock(m);
                return -ENODEV;
        }
        if (f->physfn || (f->sriov && f->sriov->num_vfs)) {
                /* VFs come and go with sriov_numvfs, and go before their PF */
                unlock(m);
                return f->physfn ? -EOPNOTSUPP : -EBUSY;
        }
        /* a switch in flight ends first (the driver's remove takes the partition mutex) */
        while (f->gpu->switching)
                sim_fs_wait(m->fs);
        sim_bus_remove(f);
        func_unbuild(f);
        f->unplugged = true;
        unlock(m);
        return 0;
}

int sim_gpu_replug(struct sim_machine *m, const char *bdf) {
        struct sim_control *ctl = m->control;
        const struct gpu_boot *b;
        struct sim_func *f;
        struct sim_gpu *g;
        int r = 0;

        if (!m->fs || !ctl)
                return -EOPNOTSUPP;
        lock(m);
        f = find_func(m, bdf, true);
        if (!f || !f->gpu || f->gpu->index >= ctl->n_boot) {
                r = find_func(m, bdf, false) ? -EEXIST : -ENODEV;
                unlock(m);
                return r;
        }
        g = f->gpu;
        b = &ctl->boot[g->index];
        /* a new device: the state of the description, as at load */
        g->compute = b->compute;
        g->nps_current = b->nps_current;
        g->nps_requested = b->nps_requested;
        g->nps_armed = b->nps_armed;
        g->kfd_users = b->kfd_users;
        g->in_reset = b->in_reset;
        g->cap_w = b->cap_w;
        g->ppt1_cap_w = b->ppt1_cap_w;
        g->platform_limit_w = b->platform_limit_w;
        g->metrics_rev = b->metrics_rev;
        g->metrics_layout = b->metrics_layout;
        memset(g->limit_pct, 0, sizeof(g->limit_pct));
        g->sensors = b->sensors;
        g->switch_error = 0;
        g->switch_error_always = false;
        g->xgmi_error = 0;
        g->xgmi_down = 0;
        g->pcie_replays = g->pcie_recoveries = 0;
        f->link_width = f->link_width_max; /* a new device trains at its best */
        f->link_speed = f->link_speed_max;
        g->switch_ms = 0;
        g->pinned = 0;
        g->kfd_lost = false;
        g->throttling_interval_s = 60;
        snprintf(g->perf_level, sizeof(g->perf_level), "auto");
        g->tel.power_w = g->sensors.power_w;
        g->tel.junction_c = g->sensors.junction_c;
        g->tel.mem_c = g->sensors.mem_c;
        g->tel.sclk_mhz = g->sensors.sclk_mhz;
        g->tel.mclk_mhz = g->sensors.mclk_mhz;
        g->tel.gpu_busy = g->sensors.gpu_busy_percent;
        g->tel.mem_busy = g->sensors.mem_busy_percent;
        free(f->driver_override);
        f->driver_override = NULL;
        f->driver = SIM_DRV_NONE;
        f->enable_cnt = 0;
        f->unplugged = false;
        sim_bus_add_func(f);
        if (b->driver != SIM_DRV_NONE)
                r = sim_bus_probe(f, b->driver);
        if (r >= 0)
                r = sim_fs_error(m->fs);
        unlock(m);
        return r;
}

/* ---------------------------------------------------------------------------------------- */
/* Dump */

static json_object *jstr(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

static json_object *ju64(uint64_t v) {
        return json_object_new_uint64(v);
}

static json_object *nps_name(unsigned nps) {
        char buf[16];

        if (!nps)
                return NULL;
        snprintf(buf, sizeof(buf), "NPS%u", nps);
        return json_object_new_string(buf);
}

static json_object *mode_list(unsigned mask) {
        json_object *a = json_object_new_array();

        for (int mode = 0; a && mode < _SIM_COMPUTE_MAX; mode++)
                if (mask & (1u << mode))
                        json_object_array_add(a, json_object_new_string(sim_compute_names[mode]));
        return a;
}

static json_object *limits(uint32_t cap, const struct sim_limits_w *l) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "cap_w", ju64(cap));
        json_object_object_add(o, "cap_min_w", ju64(l->min));
        json_object_object_add(o, "cap_max_w", ju64(l->max));
        json_object_object_add(o, "cap_default_w", ju64(l->def));
        return o;
}

/* The kernel layout of revision 9 ("6.19", ...), null for the fixed-layout revisions. */
static json_object *layout_name(unsigned rev, unsigned layout) {
        if (rev != 9 || layout <= SIM_LAYOUT_UNSET || layout >= _SIM_LAYOUT_MAX)
                return NULL;
        return jstr(sim_metrics_layout_names[layout]);
}

/* The driver's RAS state: counts of the blocks with RAS, bad pages by status, the CPER ring. */
static json_object *dump_ras(const struct sim_gpu *g) {
        const struct sim_ras *r = &g->ras;
        json_object *o = json_object_new_object(), *counts = json_object_new_object(), *pages,
                    *ring;
        uint32_t blocks = sim_ras_blocks(g);
        uint64_t st[3] = { 0 };

        json_object_object_add(o, "aca", json_object_new_boolean(sim_ras_aca(g)));
        for (int b = 0; b < _SIM_RAS_BLOCK_MAX; b++) {
                json_object *c;

                if (!(blocks & (1u << b)))
                        continue;
                c = json_object_new_object();
                for (int e = 0; e < _SIM_RAS_ERR_MAX; e++)
                        json_object_object_add(c, sim_ras_err_names[e], ju64(r->counts[b][e]));
                json_object_object_add(counts, sim_ras_block_names[b], c);
        }
        json_object_object_add(o, "counts", counts);
        for (size_t i = 0; i < r->n_pages; i++)
                st[r->pages[i].status == 'R' ? 0 : r->pages[i].status == 'P' ? 1 : 2]++;
        pages = json_object_new_object();
        json_object_object_add(pages, "reserved", ju64(st[0]));
        json_object_object_add(pages, "pending", ju64(st[1]));
        json_object_object_add(pages, "unreservable", ju64(st[2]));
        json_object_object_add(o, "bad_pages", pages);
        if (r->ring) {
                ring = json_object_new_object();
                json_object_object_add(ring, "bytes", ju64(r->ring_bytes));
                json_object_object_add(ring, "rptr", ju64(r->rptr));
                json_object_object_add(ring, "wptr", ju64(r->wptr));
                json_object_object_add(ring, "records", ju64(r->n_recs));
                json_object_object_add(o, "cper_ring", ring);
        } else
                json_object_object_add(o, "cper_ring", NULL);
        json_object_object_add(o, "reset_seq", ju64(g->reset_seq));
        return o;
}

static json_object *dump_gpu(struct sim_machine *m, struct sim_gpu *g) {
        const struct sim_telemetry *t = &g->tel;
        struct sim_control *ctl = m->control;
        json_object *o = json_object_new_object(), *power, *users, *procs, *sensors, *pinned,
                    *nodes, *limits_pct, *links, *down;

        json_object_object_add(o, "bdf", jstr(g->func->bdf));
        json_object_object_add(o, "index", ju64(g->index));
        json_object_object_add(o, "product", jstr(g->prod->name));
        json_object_object_add(o, "role", jstr(sim_role_names[g->role]));
        json_object_object_add(o, "present", json_object_new_boolean(!g->func->unplugged));
        json_object_object_add(
                o, "driver", g->func->driver >= 0 ? jstr(sim_driver_names[g->func->driver]) : NULL);
        json_object_object_add(o, "attached", json_object_new_boolean(g->attached));
        json_object_object_add(o, "compute_partition",
                               g->compute >= 0 && g->compute < _SIM_COMPUTE_MAX
                                       ? jstr(sim_compute_names[g->compute])
                                       : jstr("UNKNOWN"));
        json_object_object_add(o, "available_compute_partitions",
                               mode_list(sim_compute_available(g, g->nps_current)));
        json_object_object_add(o, "memory_partition", nps_name(g->nps_current));
        json_object_object_add(o, "memory_partition_requested", nps_name(g->nps_requested));
        json_object_object_add(o, "memory_partition_armed", json_object_new_boolean(g->nps_armed));
        json_object_object_add(o, "switch_time_ms", ju64(g->switch_ms));
        json_object_object_add(o, "switching", json_object_new_boolean(g->switching));
        json_object_object_add(o, "switch_error",
                               !g->switch_error ? NULL
                               : sim_errno_name(g->switch_error)
                                       ? jstr(sim_errno_name(g->switch_error))
                                       : ju64((uint64_t) g->switch_error));
        json_object_object_add(o, "switch_error_always",
                               json_object_new_boolean(g->switch_error_always));
        json_object_object_add(o, "kfd_lost", json_object_new_boolean(g->kfd_lost));
        json_object_object_add(o, "in_reset", json_object_new_boolean(g->in_reset));
        json_object_object_add(o, "reset", sim_reset_dump(g));
        nodes = json_object_new_array();
        for (size_t i = 0; i < m->n_kfd; i++)
                if (m->kfd[i].gpu == g)
                        json_object_array_add(nodes, ju64(m->kfd[i].gpu_id));
        json_object_object_add(o, "kfd_gpu_ids", nodes);

        power = limits(g->cap_w, &g->cap_limits_w);
        json_object_object_add(power, "effective_cap_w", ju64(sim_gpu_effective_cap_w(g)));
        json_object_object_add(power, "platform_limit_w",
                               g->platform_limit_w >= 0 ? ju64((uint64_t) g->platform_limit_w)
                                                        : NULL);
        json_object_object_add(power, "ppt1",
                               g->prod->ppt1 ? limits(g->ppt1_cap_w, &g->ppt1_limits_w) : NULL);
        json_object_object_add(o, "power", power);

        users = json_object_new_object();
        procs = json_object_new_array();
        for (size_t i = 0; ctl && i < ctl->n_procs; i++)
                if (ctl->procs[i].gpus & (1ULL << g->index))
                        json_object_array_add(procs, ju64((uint64_t) ctl->procs[i].pid));
        json_object_object_add(users, "count",
                               ju64(g->kfd_users + json_object_array_length(procs)));
        json_object_object_add(users, "without_process", ju64(g->kfd_users));
        json_object_object_add(users, "pids", procs);
        json_object_object_add(o, "kfd_users", users);

        sensors = json_object_new_object();
        json_object_object_add(sensors, "power_w", ju64(t->power_w));
        json_object_object_add(sensors, "temp_junction_c", ju64(t->junction_c));
        json_object_object_add(sensors, "temp_mem_c", ju64(t->mem_c));
        json_object_object_add(sensors, "gfx_busy_pct", ju64(t->gpu_busy));
        json_object_object_add(sensors, "mem_busy_pct", ju64(t->mem_busy));
        json_object_object_add(sensors, "sclk_mhz", ju64(t->sclk_mhz));
        json_object_object_add(sensors, "mclk_mhz", ju64(t->mclk_mhz));
        json_object_object_add(sensors, "vram_used_bytes", ju64(g->sensors.vram_used_bytes));
        pinned = json_object_new_array();
        for (int s = 0; s < _SIM_SENSOR_MAX; s++)
                if (g->pinned & (1u << s))
                        json_object_array_add(pinned, jstr(sim_sensor_names[s]));
        json_object_object_add(sensors, "held", pinned);
        json_object_object_add(o, "sensors", sensors);

        json_object_object_add(o, "gpu_metrics_revision", ju64(g->metrics_rev));
        json_object_object_add(o, "gpu_metrics_layout",
                               layout_name(g->metrics_rev, g->metrics_layout));
        limits_pct = json_object_new_object();
        for (int l = 0; l < _SIM_LIMITER_MAX; l++)
                json_object_object_add(limits_pct, sim_limiter_names[l], ju64(g->limit_pct[l]));
        json_object_object_add(o, "limiters_pct", limits_pct);
        json_object_object_add(o, "accumulation_counter", ju64(t->accumulation_counter));
        links = json_object_new_object();
        json_object_object_add(links, "pcie_width", ju64(g->func->link_width));
        json_object_object_add(links, "pcie_speed", jstr(g->func->link_speed));
        json_object_object_add(links, "pcie_replays", ju64(g->pcie_replays));
        json_object_object_add(links, "pcie_recoveries", ju64(g->pcie_recoveries));
        json_object_object_add(links, "xgmi_error", ju64(g->xgmi_error));
        down = json_object_new_array();
        for (unsigned l = 0; l < 8; l++)
                if (g->xgmi_down & (1u << l))
                        json_object_array_add(down, ju64(l));
        json_object_object_add(links, "xgmi_links_down", down);
        json_object_object_add(o, "links", links);
        json_object_object_add(o, "ras", dump_ras(g));
        return o;
}

static json_object *dump_faults(struct sim_fs *fs) {
        static const char *const kinds[] = { "errno", "delay", "no-effect" };
        json_object *a = json_object_new_array();

        for (size_t i = 0; fs && i < sim_fs_n_faults(fs); i++) {
                const struct sim_fault *f = sim_fs_fault(fs, i);
                json_object *o = json_object_new_object(), *ops = json_object_new_array();

                json_object_object_add(o, "path", jstr(f->path));
                json_object_object_add(o, "kind", jstr(kinds[f->kind]));
                if (f->kind == SIM_FAULT_ERRNO) {
                        const char *name = sim_errno_name(f->err);

                        json_object_object_add(o, "errno", name ? jstr(name) : ju64(f->err));
                }
                if (f->kind == SIM_FAULT_DELAY)
                        json_object_object_add(o, "ms", ju64(f->ms));
                if (f->ops & SIM_OP_OPEN)
                        json_object_array_add(ops, jstr("open"));
                if (f->ops & SIM_OP_READ)
                        json_object_array_add(ops, jstr("read"));
                if (f->ops & SIM_OP_WRITE)
                        json_object_array_add(ops, jstr("write"));
                json_object_object_add(o, "ops", ops);
                json_object_object_add(o, "once", json_object_new_boolean(f->once));
                if (f->times > 0)
                        json_object_object_add(o, "times", ju64(f->times));
                json_object_object_add(o, "hits", ju64(f->hits));
                json_object_array_add(a, o);
        }
        return a;
}

int sim_state_dump(struct sim_machine *m, char **ret_json) {
        struct sim_control *ctl = m->control;
        json_object *doc, *o, *a;
        char *s;

        lock(m);
        if (ctl)
                prune_locked(m);
        if (m->fs)
                sim_telemetry_sync(m);
        doc = json_object_new_object();
        o = json_object_new_object();
        json_object_object_add(o, "name", jstr(m->name));
        json_object_object_add(o, "description", jstr(m->description));
        json_object_object_add(o, "seed", ju64(m->seed));
        json_object_object_add(o, "frozen", json_object_new_boolean(m->frozen));
        a = json_object_new_object();
        json_object_object_add(a, "gpu_metrics_revision", ju64(m->kernel.gpu_metrics_revision));
        json_object_object_add(
                a, "gpu_metrics_layout",
                layout_name(m->kernel.gpu_metrics_revision, m->kernel.gpu_metrics_layout));
        json_object_object_add(a, "nps_compat",
                               jstr(m->kernel.nps_compat_newer ? "newer" : "older"));
        json_object_object_add(a, "dkms", json_object_new_boolean(m->kernel.dkms));
        json_object_object_add(a, "partition_config",
                               json_object_new_boolean(m->kernel.partition_config));
        json_object_object_add(o, "kernel", a);
        json_object_object_add(doc, "machine", o);

        o = json_object_new_object();
        json_object_object_add(o, "generation_id", ju64(m->kfd_generation));
        json_object_object_add(o, "cpu_nodes", ju64(m->cpu.sockets));
        json_object_object_add(o, "gpu_nodes", ju64(m->n_kfd));
        json_object_object_add(doc, "kfd", o);

        a = json_object_new_array();
        for (size_t i = 0; i < m->n_gpus; i++)
                json_object_array_add(a, dump_gpu(m, m->gpus[i]));
        json_object_object_add(doc, "gpus", a);

        a = json_object_new_array();
        for (size_t i = 0; ctl && i < ctl->n_procs; i++) {
                const struct kfd_proc *p = &ctl->procs[i];
                json_object *gpus = json_object_new_array();

                o = json_object_new_object();
                json_object_object_add(o, "pid", ju64((uint64_t) p->pid));
                json_object_object_add(o, "comm", jstr(p->comm));
                json_object_object_add(o, "pasid", ju64(p->pasid));
                for (size_t j = 0; j < m->n_gpus; j++)
                        if (p->gpus & (1ULL << m->gpus[j]->index)) {
                                json_object *u = json_object_new_object();

                                json_object_object_add(u, "bdf", jstr(m->gpus[j]->func->bdf));
                                uint64_t vram = 0;

                                for (size_t k = 0; k < p->n_uses; k++)
                                        if (p->uses[k].gpu == (int) m->gpus[j]->index)
                                                vram += p->uses[k].vram;
                                json_object_object_add(u, "vram_bytes", ju64(vram));
                                json_object_array_add(gpus, u);
                        }
                json_object_object_add(o, "gpus", gpus);
                json_object_array_add(a, o);
        }
        json_object_object_add(doc, "kfd_processes", a);
        json_object_object_add(doc, "faults", dump_faults(m->fs));
        unlock(m);

        s = strdup(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
                                                               JSON_C_TO_STRING_SPACED |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(doc);
        if (!s)
                return -ENOMEM;
        *ret_json = s;
        return 0;
}

/* ---------------------------------------------------------------------------------------- */

int sim_control_init(struct sim_machine *m) {
        struct sim_control *ctl = calloc(1, sizeof(*ctl));

        if (!ctl)
                return -ENOMEM;
        ctl->boot = calloc(MAX(m->n_gpus, 1u), sizeof(*ctl->boot));
        if (!ctl->boot) {
                free(ctl);
                return -ENOMEM;
        }
        ctl->n_boot = m->n_gpus;
        for (size_t i = 0; i < m->n_gpus; i++) {
                const struct sim_gpu *g = m->gpus[i];

                ctl->boot[g->index] = (struct gpu_boot){
                        .compute = g->compute,
                        .nps_current = g->nps_current,
                        .nps_requested = g->nps_requested,
                        .nps_armed = g->nps_armed,
                        .kfd_users = g->kfd_users,
                        .in_reset = g->in_reset,
                        .cap_w = g->cap_w,
                        .ppt1_cap_w = g->ppt1_cap_w,
                        .platform_limit_w = g->platform_limit_w,
                        .metrics_rev = g->metrics_rev,
                        .metrics_layout = g->metrics_layout,
                        .sensors = g->sensors,
                        .driver = g->func->driver,
                };
        }
        m->control = ctl;
        return 0;
}

void sim_control_free(struct sim_machine *m) {
        struct sim_control *ctl = m->control;

        if (!ctl)
                return;
        for (size_t i = 0; i < ctl->n_procs; i++) {
                (void) close(ctl->procs[i].pidfd);
                free(ctl->procs[i].uses);
        }
        free(ctl->procs);
        free(ctl->boot);
        free(ctl);
        m->control = NULL;
        sim_smi_free(m);
}
