/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the control socket (protocol and commands: ctl.h). The server is one thread that
 * polls the listening socket and its clients and runs each request with the C functions of
 * control.c, which take the fs lock; the client is `amdsmi-sim ctl`.
 */
#include <ctype.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "ctl.h"
#include "fs.h"
#include "machine.h"

#define REQUEST_MAX 4096
#define MAX_WORDS 16
#define MAX_CLIENTS 16
#define PRUNE_MS 200 /* how often exited KFD users are looked for, while there are some */

enum {
        EXIT_CONNECT = 1,
        EXIT_USAGE = 2,
        EXIT_REFUSED = 3,
};

struct client {
        int fd;
        int pidfd;      /* came with the request being read, -1 */
        pid_t peer_pid; /* SO_PEERCRED: in our PID namespace */
        uid_t peer_uid;
        size_t len;
        char buf[REQUEST_MAX + 1];
};

struct sim_ctl {
        struct sim_machine *m;
        char *socket_path, *mount_file, *mountpoint;
        int listen_fd, stop_fd;
        pthread_t thread;
        bool running;
        struct client clients[MAX_CLIENTS];
        size_t n_clients;
};

/* One request being run. */
struct request {
        struct sim_ctl *ctl;
        struct sim_machine *m;
        int pidfd;
        int out_fd; /* handed over with the response (SCM_RIGHTS), -1 */
        pid_t peer_pid;
        uid_t peer_uid;
        FILE *out;
        char msg[512];
};

_printf_(3, 4) static int fail(struct request *r, int err, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
        va_end(ap);
        return err;
}

/* ---------------------------------------------------------------------------------------- */
/* Arguments */

/* "DDDD:BB:DD.F" or "BB:DD.F", lower case. */
static int parse_bdf(struct request *r, const char *s, char *bdf, size_t size) {
        unsigned dom = 0, bus, dev, fn;
        char tail;

        if (sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 &&
            (dom = 0, sscanf(s, "%x:%x.%x%c", &bus, &dev, &fn, &tail) != 3))
                return fail(r, -EINVAL, "\"%s\" is not a PCI address (DDDD:BB:DD.F)", s);
        if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7 || strchr(s, '-') ||
            strchr(s, '+') || strchr(s, ' '))
                return fail(r, -EINVAL, "\"%s\" is not a PCI address (DDDD:BB:DD.F)", s);
        snprintf(bdf, size, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
        return 0;
}

static int parse_u64(struct request *r, const char *what, const char *s, uint64_t max,
                     uint64_t *ret) {
        unsigned long long v;
        char *end;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (!isdigit((unsigned char) *s) || *end || errno)
                return fail(r, -EINVAL, "%s: \"%s\" is not a number", what, s);
        if (v > max)
                return fail(r, -ERANGE, "%s: %s is out of range (0..%" PRIu64 ")", what, s, max);
        *ret = v;
        return 0;
}

/* The GPUs on the bus, for messages: "0000:05:00.0, 0000:26:00.0". */
static void gpu_list(struct sim_machine *m, char *buf, size_t size) {
        size_t len = 0;

        buf[0] = '\0';
        if (m->fs)
                sim_fs_lock(m->fs);
        for (size_t i = 0; i < m->n_gpus; i++)
                if (!m->gpus[i]->func->unplugged)
                        bprintf(buf, size, &len, "%s%s", len ? ", " : "", m->gpus[i]->func->bdf);
        if (m->fs)
                sim_fs_unlock(m->fs);
        if (len >= size && size > 4)
                strcpy(buf + size - 4, "...");
}

static bool gpu_present(struct sim_machine *m, const char *bdf) {
        bool found = false;

        if (m->fs)
                sim_fs_lock(m->fs);
        for (size_t i = 0; i < m->n_gpus && !found; i++)
                found = !m->gpus[i]->func->unplugged && streq(m->gpus[i]->func->bdf, bdf);
        if (m->fs)
                sim_fs_unlock(m->fs);
        return found;
}

/* What a control function's errno means for a GPU address. */
static int gpu_error(struct request *r, int err, const char *bdf) {
        char gpus[256];

        if (err == -ENODEV) {
                gpu_list(r->m, gpus, sizeof(gpus));
                return fail(r, err, "no GPU at %s in machine %s (GPUs: %s)", bdf, r->m->name,
                            gpus[0] ? gpus : "none");
        }
        return fail(r, err, "%s: %s", bdf, strerror(-err));
}

static bool parse_once(const char *s, bool *once) {
        if (streq(s, "once"))
                *once = true;
        else if (streq(s, "always"))
                *once = false;
        else
                return false;
        return true;
}

static bool parse_op(const char *s, unsigned *ops) {
        if (streq(s, "open"))
                *ops |= SIM_OP_OPEN;
        else if (streq(s, "read"))
                *ops |= SIM_OP_READ;
        else if (streq(s, "write"))
                *ops |= SIM_OP_WRITE;
        else
                return false;
        return true;
}

/* A path of the request: below the root, or absolute under the mount point. */
static const char *tree_path(struct request *r, const char *path) {
        const char *mp = r->ctl->mountpoint;
        size_t len = mp ? strlen(mp) : 0;

        if (len > 1 && strncmp(path, mp, len) == 0 && (path[len] == '/' || !path[len]))
                path += len;
        while (*path == '/')
                path++;
        return path;
}

/* ---------------------------------------------------------------------------------------- */
/* Commands */

static int parse_bdf_part(struct request *r, const char *s, char *bdf, size_t size, int *part) {
        char copy[32];
        const char *colon = strrchr(s, ':');
        char *dot;

        *part = -1;
        snprintf(copy, sizeof(copy), "%s", s);
        dot = strrchr(copy, '.');
        if (colon && dot && strchr(colon, '.') != strrchr(colon, '.')) {
                uint64_t p;
                int e = parse_u64(r, "partition", dot + 1, 7, &p);

                if (e < 0)
                        return e;
                *dot = '\0';
                *part = (int) p;
        }
        return parse_bdf(r, copy, bdf, size);
}

/* The words after PID of kfd-users add: [VRAM_BYTES] and key=N words, or "all". */
static int parse_usage(struct request *r, char **a, int n, struct sim_kfd_usage *u, bool *all) {
        static const char *const keys[] = { "queues", "sdma",    "cu_occupancy", "evicted_ms",
                                            "faults", "page_in", "page_out" };
        uint64_t v;
        int e;

        for (int i = 0; i < n; i++) {
                const char *eq = strchr(a[i], '=');
                size_t k;

                if (all && streq(a[i], "all")) {
                        *all = true;
                        continue;
                }
                if (!eq) {
                        if (i != 0)
                                return fail(r, -EINVAL,
                                            "\"%s\": VRAM_BYTES comes first, then KEY=N words",
                                            a[i]);
                        if ((e = parse_u64(r, "VRAM_BYTES", a[i], UINT64_MAX, &u->vram)) < 0)
                                return e;
                        continue;
                }
                for (k = 0; k < ELEMENTSOF(keys); k++)
                        if (strlen(keys[k]) == (size_t) (eq - a[i]) &&
                            strncmp(keys[k], a[i], (size_t) (eq - a[i])) == 0)
                                break;
                if (k == ELEMENTSOF(keys))
                        return fail(r, -EINVAL,
                                    "unknown \"%.*s\" (queues, sdma, cu_occupancy, evicted_ms, "
                                    "faults, page_in, page_out)",
                                    (int) (eq - a[i]), a[i]);
                if ((e = parse_u64(r, keys[k], eq + 1,
                                   k == 0   ? 1024
                                   : k == 2 ? INT_MAX
                                            : UINT64_MAX,
                                   &v)) < 0)
                        return e;
                switch (k) {
                case 0:
                        u->queues = (unsigned) v;
                        break;
                case 1:
                        u->sdma = v;
                        break;
                case 2:
                        u->cu_occupancy = (unsigned) v;
                        break;
                case 3:
                        u->evicted_ms = v;
                        break;
                case 4:
                        u->faults = v;
                        break;
                case 5:
                        u->page_in = v;
                        break;
                default:
                        u->page_out = v;
                        break;
                }
        }
        return 0;
}

static int cmd_kfd_add(struct request *r, char **a, int n) {
        struct sim_kfd_usage u = { 0 };
        bool all = false;
        char bdf[16];
        uint64_t pid;
        int part, e;

        if ((e = parse_bdf_part(r, a[0], bdf, sizeof(bdf), &part)) < 0 ||
            (e = parse_u64(r, "PID", a[1], INT_MAX, &pid)) < 0 ||
            (e = parse_usage(r, a + 2, n - 2, &u, &all)) < 0)
                return e;
        if (pid == 0)
                return fail(r, -EINVAL, "PID: 0 is not a process");
        e = sim_kfd_user_add(r->m, bdf, part, (pid_t) pid, r->pidfd, &u, all);
        r->pidfd = -1; /* taken over */
        switch (e) {
        case 0:
                return 0;
        case -ESRCH:
                return fail(r, e, "no process with PID %" PRIu64, pid);
        case -EEXIST:
                return fail(r, e, "PID %" PRIu64 " is a KFD user of %s already", pid, a[0]);
        case -ENXIO:
                return fail(r, e, "%s has no KFD node of partition %d", bdf, part);
        case -ERANGE:
                return fail(r, e, "VRAM_BYTES: %" PRIu64 " is more than the GPU's VRAM", u.vram);
        case -ENOSPC:
                return fail(r, e, "VRAM_BYTES: %" PRIu64 " is more than the VRAM left on %s",
                            u.vram, bdf);
        case -ENODEV:
                if (gpu_present(r->m, bdf))
                        return fail(r, e,
                                    "%s has no KFD nodes (not bound to amdgpu, or its KFD "
                                    "failed)",
                                    bdf);
                return gpu_error(r, e, bdf);
        default:
                return gpu_error(r, e, bdf);
        }
}

static int cmd_kfd_add_raw(struct request *r, char **a, int n) {
        struct sim_kfd_usage u = { 0 };
        uint64_t pid, gpu_id;
        int e;

        if ((e = parse_u64(r, "PID", a[0], INT_MAX, &pid)) < 0 ||
            (e = parse_u64(r, "GPU_ID", a[1], UINT32_MAX, &gpu_id)) < 0 ||
            (e = parse_usage(r, a + 2, n - 2, &u, NULL)) < 0)
                return e;
        if (pid == 0)
                return fail(r, -EINVAL, "PID: 0 is not a process");
        e = sim_kfd_user_add_raw(r->m, (uint32_t) gpu_id, (pid_t) pid, r->pidfd, &u);
        r->pidfd = -1;
        if (e == -ESRCH)
                return fail(r, e, "no process with PID %" PRIu64, pid);
        if (e == -EEXIST)
                return fail(r, e, "PID %" PRIu64 " has an entry for gpu_id %" PRIu64 " already",
                            pid, gpu_id);
        return e < 0 ? fail(r, e, "%s", strerror(-e)) : 0;
}

static int cmd_kfd_remove(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t pid;
        int part, e;

        if ((e = parse_bdf_part(r, a[0], bdf, sizeof(bdf), &part)) < 0 ||
            (e = parse_u64(r, "PID", a[1], INT_MAX, &pid)) < 0)
                return e;
        e = sim_kfd_user_remove(r->m, bdf, part, (pid_t) pid);
        if (e == -ENOENT)
                return fail(r, e, "PID %" PRIu64 " is not a KFD user of %s", pid, a[0]);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_kfd_list(struct request *r, char **a, int n) {
        _cleanup_free_ char *text = NULL;
        int e = sim_kfd_users_list(r->m, &text);

        if (e < 0)
                return fail(r, e, "%s", strerror(-e));
        fputs(text, r->out);
        return 0;
}

static int add_fault(struct request *r, const char *path_arg, struct sim_fault *f) {
        struct sim_fs *fs = r->m->fs;
        const char *path = tree_path(r, path_arg);
        _cleanup_free_ char *resolved = NULL;
        int e;

        if (!fs)
                return fail(r, -EOPNOTSUPP, "no tree is served");
        sim_fs_lock(fs);
        e = sim_fs_resolve(fs, path, &resolved);
        if (e >= 0) {
                f->path = resolved;
                e = sim_fs_fault_add(fs, f);
        }
        sim_fs_unlock(fs);
        if (e == -ENOENT || e == -ENOTDIR)
                return fail(r, -ENOENT, "no such path in the tree: %s", path_arg);
        if (e < 0)
                return fail(r, e, "%s: %s", path_arg, strerror(-e));
        return 0;
}

/* "times=N" (1 to 1000000): the fault goes after firing N times. */
static int parse_times(struct request *r, const char *s, struct sim_fault *f) {
        uint64_t v;
        int e;

        if (strncmp(s, "times=", 6) != 0)
                return 0;
        e = parse_u64(r, "times", s + 6, 1000000, &v);
        if (e < 0)
                return e;
        if (v == 0)
                return fail(r, -ERANGE, "times: 0 (use clear-faults)");
        f->times = (unsigned) v;
        f->once = false;
        return 1;
}

/* [once|always|times=N] and operation words from @a. */
static int fault_words(struct request *r, char **a, int n, struct sim_fault *f, unsigned dflt,
                       unsigned allowed) {
        for (int i = 0; i < n; i++) {
                int e = parse_times(r, a[i], f);

                if (e < 0)
                        return e;
                if (e > 0)
                        continue;
                if (parse_once(a[i], &f->once)) {
                        f->times = 0;
                        continue;
                }
                if (!parse_op(a[i], &f->ops))
                        return fail(r, -EINVAL, "\"%s\": expected once, always, times=N%s", a[i],
                                    allowed == SIM_OP_WRITE ? "" : ", open, read or write");
        }
        if (!f->ops)
                f->ops = dflt;
        if (f->ops & ~allowed)
                return fail(r, -EINVAL, "only writes can be without effect");
        return 0;
}

static int cmd_inject(struct request *r, char **a, int n) {
        struct sim_fault f = { .kind = SIM_FAULT_ERRNO };
        int e;

        if (sim_errno_parse(a[1], &f.err) < 0)
                return fail(r, -EINVAL, "\"%s\" is not an errno (EIO, EBUSY, ... or 1..511)", a[1]);
        e = fault_words(r, a + 2, n - 2, &f, SIM_OP_READ | SIM_OP_WRITE,
                        SIM_OP_OPEN | SIM_OP_READ | SIM_OP_WRITE);
        return e < 0 ? e : add_fault(r, a[0], &f);
}

static int cmd_delay(struct request *r, char **a, int n) {
        struct sim_fault f = { .kind = SIM_FAULT_DELAY };
        uint64_t ms;
        int e;

        if ((e = parse_u64(r, "MS", a[1], 600000, &ms)) < 0)
                return e;
        if (ms == 0)
                return fail(r, -ERANGE, "MS: a delay of 0 ms (use clear-faults)");
        f.ms = (unsigned) ms;
        e = fault_words(r, a + 2, n - 2, &f, SIM_OP_READ | SIM_OP_WRITE,
                        SIM_OP_OPEN | SIM_OP_READ | SIM_OP_WRITE);
        return e < 0 ? e : add_fault(r, a[0], &f);
}

static int cmd_no_effect(struct request *r, char **a, int n) {
        struct sim_fault f = { .kind = SIM_FAULT_NO_EFFECT };
        int e = fault_words(r, a + 1, n - 1, &f, SIM_OP_WRITE, SIM_OP_WRITE);

        return e < 0 ? e : add_fault(r, a[0], &f);
}

static int cmd_clear_faults(struct request *r, char **a, int n) {
        struct sim_fs *fs = r->m->fs;
        _cleanup_free_ char *resolved = NULL;
        int e = 0;

        if (!fs)
                return 0;
        sim_fs_lock(fs);
        if (n == 0)
                sim_fs_fault_clear(fs, NULL);
        else {
                /* the path as given when it is gone from the tree meanwhile */
                e = sim_fs_resolve(fs, tree_path(r, a[0]), &resolved);
                if (e < 0 && !(resolved = strdup(tree_path(r, a[0]))))
                        e = -ENOMEM;
                else
                        e = 0;
                if (e == 0 && sim_fs_fault_clear(fs, resolved) == 0)
                        e = -ENOENT;
        }
        sim_fs_unlock(fs);
        if (e == -ENOENT)
                return fail(r, e, "no faults on %s", a[0]);
        return e < 0 ? fail(r, e, "%s", strerror(-e)) : 0;
}

static int cmd_switch_time(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t ms;
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0 ||
            (e = parse_u64(r, "MS", a[1], 600000, &ms)) < 0)
                return e;
        e = sim_set_switch_time(r->m, bdf, (unsigned) ms);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_switch_error(struct request *r, char **a, int n) {
        bool once = true;
        char bdf[16];
        int err = 0, e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        if (!streq(a[1], "none") && sim_errno_parse(a[1], &err) < 0)
                return fail(r, -EINVAL,
                            "\"%s\" is not an errno (EIO, EBUSY, ... or 1..511) "
                            "or none",
                            a[1]);
        if (n > 2 && !parse_once(a[2], &once))
                return fail(r, -EINVAL, "\"%s\": expected once or always", a[2]);
        e = sim_inject_switch_error(r->m, bdf, err, !once);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

/* The index of @s in @names[0..@n), or a failure naming @what and listing the names. */
static int lookup_name(struct request *r, const char *what, const char *s, const char *const *names,
                       int n) {
        char list[256];
        size_t len = 0;

        for (int i = 0; i < n; i++)
                if (streq(s, names[i]))
                        return i;
        for (int i = 0; i < n; i++)
                bprintf(list, sizeof(list), &len, "%s%s", i ? ", " : "", names[i]);
        return fail(r, -EINVAL, "unknown %s \"%s\" (%s)", what, s, list);
}

static int cmd_sensor(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t v = 0;
        int s, e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        s = lookup_name(r, "sensor", a[1], sim_sensor_names, _SIM_SENSOR_MAX);
        if (s < 0)
                return s;
        if (!streq(a[2], "auto") && (e = parse_u64(r, a[1], a[2], UINT64_MAX, &v)) < 0)
                return e;
        e = sim_set_sensor(r->m, bdf, (enum sim_sensor) s, v, streq(a[2], "auto"));
        if (e == -ERANGE)
                return fail(r, e, "%s: %s is out of range for this GPU", a[1], a[2]);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_limit(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t pct;
        int l, e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        l = lookup_name(r, "limiter", a[1], sim_limiter_names, _SIM_LIMITER_MAX);
        if (l < 0)
                return l;
        if ((e = parse_u64(r, "PERCENT", a[2], 100, &pct)) < 0)
                return e;
        e = sim_set_limit(r->m, bdf, (enum sim_limiter) l, (unsigned) pct);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_counter(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t v;
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        if (!streq(a[1], "accumulation"))
                return fail(r, -EINVAL, "unknown counter \"%s\" (accumulation)", a[1]);
        if ((e = parse_u64(r, "VALUE", a[2], UINT64_MAX, &v)) < 0)
                return e;
        e = sim_set_accumulation_counter(r->m, bdf, v);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_platform_limit(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t w = 0;
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        if (!streq(a[1], "none") && (e = parse_u64(r, "WATTS", a[1], 4294, &w)) < 0)
                return e;
        if (!streq(a[1], "none") && w == 0)
                return fail(r, -ERANGE, "WATTS: 0 W is no limit (use none)");
        e = sim_set_platform_limit(r->m, bdf, streq(a[1], "none") ? -1 : (int64_t) w);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_pm_defaults(struct request *r, char **a, int n) {
        char bdf[16];
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        e = sim_perf_ctl_defaults(r->m, bdf);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_clocks_unavailable(struct request *r, char **a, int n) {
        char bdf[16];
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        if (!streq(a[1], "on") && !streq(a[1], "off"))
                return fail(r, -EINVAL, "expected on or off, not \"%s\"", a[1]);
        e = sim_perf_ctl_unavailable(r->m, bdf, streq(a[1], "on"));
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_xgmi_error(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t v;
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0 ||
            (e = parse_u64(r, "STATUS", a[1], 2, &v)) < 0)
                return e;
        e = sim_set_xgmi_error(r->m, bdf, (unsigned) v);
        if (e == -EOPNOTSUPP)
                return fail(r, e, "%s is in no XGMI hive", bdf);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_xgmi_link(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t link;
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0 ||
            (e = parse_u64(r, "LINK", a[1], 7, &link)) < 0)
                return e;
        if (!streq(a[2], "up") && !streq(a[2], "down"))
                return fail(r, -EINVAL, "\"%s\": expected up or down", a[2]);
        e = sim_set_xgmi_link(r->m, bdf, (unsigned) link, streq(a[2], "up"));
        if (e == -EOPNOTSUPP)
                return fail(r, e, "%s is in no XGMI hive", bdf);
        if (e == -ERANGE)
                return fail(r, e, "%s has no XGMI link %" PRIu64, bdf, link);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_pcie_link(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t width;
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0 ||
            (e = parse_u64(r, "WIDTH", a[1], 32, &width)) < 0)
                return e;
        e = sim_set_pcie_link(r->m, bdf, (unsigned) width, a[2]);
        if (e == -EINVAL)
                return fail(r, e,
                            "expected a width of 1, 2, 4, 8, 16 or 32 lanes and a speed of 2.5, "
                            "5.0, 8.0, 16.0, 32.0 or 64.0 (GT/s)");
        if (e == -ERANGE)
                return fail(r, e, "%s: x%" PRIu64 " at %s GT/s is beyond the device's link", bdf,
                            width, a[2]);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_pcie_replay(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t replays, recov = 0;
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0 ||
            (e = parse_u64(r, "N", a[1], UINT32_MAX, &replays)) < 0)
                return e;
        if (n > 2) {
                if (strncmp(a[2], "recov=", 6) != 0)
                        return fail(r, -EINVAL, "\"%s\": expected recov=M", a[2]);
                if ((e = parse_u64(r, "recov", a[2] + 6, UINT32_MAX, &recov)) < 0)
                        return e;
        }
        e = sim_pcie_replay(r->m, bdf, replays, recov);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_reset(struct request *r, char **a, int n) {
        char bdf[16];
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        if (!streq(a[1], "begin") && !streq(a[1], "end"))
                return fail(r, -EINVAL, "\"%s\": expected begin or end", a[1]);
        e = sim_set_in_reset(r->m, bdf, streq(a[1], "begin"));
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

/* reset-fail BDF ERRNO|none [read] [wedged] [once|always] */
static int cmd_reset_fail(struct request *r, char **a, int n) {
        bool once = true, read = false, wedged = false;
        char bdf[16];
        int err = 0, e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        if (!streq(a[1], "none") && sim_errno_parse(a[1], &err) < 0)
                return fail(r, -EINVAL,
                            "\"%s\" is not an errno (ETIMEDOUT, EIO, ... or 1..511) or none", a[1]);
        for (int i = 2; i < n; i++) {
                if (streq(a[i], "read"))
                        read = true;
                else if (streq(a[i], "wedged"))
                        wedged = true;
                else if (!parse_once(a[i], &once))
                        return fail(r, -EINVAL, "\"%s\": expected read, wedged, once or always",
                                    a[i]);
        }
        e = sim_reset_set_fail(r->m, bdf, err, read, wedged, !once);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

/* reset-hang BDF MS|forever|none */
static int cmd_reset_hang(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t ms = 0;
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        if (!streq(a[1], "forever") && !streq(a[1], "none") &&
            (e = parse_u64(r, "MS", a[1], 600000, &ms)) < 0)
                return e;
        e = sim_reset_set_hang(r->m, bdf, streq(a[1], "forever") ? -1 : (int) ms);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_reset_release(struct request *r, char **a, int n) {
        char bdf[16];
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        e = sim_reset_release(r->m, bdf);
        if (e == -ESRCH)
                return fail(r, e, "%s: no reset of it is running", bdf);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

/* reset-config KEY VALUE */
static int cmd_reset_config(struct request *r, char **a, int n) {
        uint64_t v;
        int e;

        if ((e = parse_u64(r, a[0], a[1], 600000, &v)) < 0)
                return e;
        e = sim_reset_config(r->m, a[0], v);
        if (e == -EINVAL)
                return fail(r, e,
                            "unknown key \"%s\" (time_ms, kfd_down_ms, keeps_cap, keeps_perf)",
                            a[0]);
        if (e == -ERANGE)
                return fail(r, e, "%s: %s is out of range (ms: 0..600000, keeps_*: 0 or 1)", a[0],
                            a[1]);
        return e;
}

static int cmd_unplug(struct request *r, char **a, int n) {
        char bdf[16];
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        e = sim_gpu_unplug(r->m, bdf);
        if (e == -EBUSY)
                return fail(r, e, "%s has VFs enabled: write 0 to its sriov_numvfs first", bdf);
        if (e == -EOPNOTSUPP)
                return fail(r, e, "%s is a VF: VFs come and go with their PF's sriov_numvfs", bdf);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_replug(struct request *r, char **a, int n) {
        char bdf[16];
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        e = sim_gpu_replug(r->m, bdf);
        if (e == -EEXIST)
                return fail(r, e, "%s is plugged in", bdf);
        if (e == -ENODEV)
                return fail(r, e, "no unplugged GPU at %s", bdf);
        return e < 0 ? gpu_error(r, e, bdf) : 0;
}

static int cmd_dump(struct request *r, char **a, int n) {
        _cleanup_free_ char *json = NULL;
        int e = sim_state_dump(r->m, &json);

        if (e < 0)
                return fail(r, e, "%s", strerror(-e));
        fprintf(r->out, "%s\n", json);
        return 0;
}

/* "BDF" or "BDF.P" (a partition, 0..7). */
static int ras_gpu_error(struct request *r, int e, const char *bdf) {
        if (e == -ENODEV && gpu_present(r->m, bdf))
                return fail(r, e, "%s is not bound to amdgpu", bdf);
        return gpu_error(r, e, bdf);
}

static int cmd_ras_inject(struct request *r, char **a, int n) {
        char bdf[16];
        uint64_t count = 1;
        int b, t, e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        b = lookup_name(r, "RAS block", a[1], sim_ras_block_names, _SIM_RAS_BLOCK_MAX);
        if (b < 0)
                return b;
        for (t = 0; t < _SIM_RAS_ERR_MAX; t++)
                if (streq(a[2], sim_ras_err_names[t]))
                        break;
        if (t == _SIM_RAS_ERR_MAX)
                return fail(r, -EINVAL, "\"%s\": expected ue, ce or de", a[2]);
        if (n > 3 && (e = parse_u64(r, "N", a[3], UINT32_MAX, &count)) < 0)
                return e;
        e = sim_ras_inject(r->m, bdf, (enum sim_ras_block) b, (enum sim_ras_err) t, count);
        if (e == -EOPNOTSUPP)
                return fail(r, e, "%s has no RAS on %s", bdf, a[1]);
        return e < 0 ? ras_gpu_error(r, e, bdf) : 0;
}

static int cmd_retire_page(struct request *r, char **a, int n) {
        char bdf[16], *end;
        unsigned long long pfn;
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        errno = 0;
        pfn = strtoull(a[1], &end, 0);
        if (!isdigit((unsigned char) a[1][0]) || *end || errno || pfn > UINT32_MAX)
                return fail(r, -EINVAL, "PFN: \"%s\" is not a page frame number (0x...)", a[1]);
        if (!streq(a[2], "R") && !streq(a[2], "P") && !streq(a[2], "F"))
                return fail(r, -EINVAL,
                            "\"%s\": expected R (reserved), P (pending) or F "
                            "(cannot be reserved)",
                            a[2]);
        e = sim_ras_retire_page(r->m, bdf, (uint32_t) pfn, a[2][0]);
        if (e == -ERANGE)
                return fail(r, e, "PFN 0x%llx is beyond the GPU's VRAM", pfn);
        if (e == -EOPNOTSUPP)
                return fail(r, e, "%s has no bad-page table (an APU, or bad_page_threshold 0)",
                            bdf);
        return e < 0 ? ras_gpu_error(r, e, bdf) : 0;
}

static int cmd_cper(struct request *r, char **a, int n) {
        enum sim_cper_kind kind;
        char bdf[16];
        int e;

        if ((e = parse_bdf(r, a[0], bdf, sizeof(bdf))) < 0)
                return e;
        if (streq(a[1], "fatal"))
                kind = SIM_CPER_FATAL;
        else if (streq(a[1], "corrected"))
                kind = SIM_CPER_CORRECTED;
        else if (streq(a[1], "uncorrected"))
                kind = SIM_CPER_UNCORRECTED;
        else
                return fail(r, -EINVAL, "\"%s\": expected fatal, corrected or uncorrected", a[1]);
        if (n > 2) {
                if (!streq(a[2], "--bad-page-threshold"))
                        return fail(r, -EINVAL, "\"%s\": expected --bad-page-threshold", a[2]);
                if (kind != SIM_CPER_FATAL)
                        return fail(r, -EINVAL, "the bad-page-threshold record is fatal");
                kind = SIM_CPER_BAD_PAGE_THRESHOLD;
        }
        e = sim_ras_cper(r->m, bdf, kind);
        if (e == -EOPNOTSUPP)
                return fail(r, e, "%s has no CPER ring (a kernel without ACA)", bdf);
        return e < 0 ? ras_gpu_error(r, e, bdf) : 0;
}

static int cmd_kfd_event(struct request *r, char **a, int n) {
        _cleanup_free_ char *payload = NULL;
        char bdf[16], names[512];
        size_t len = 0;
        uint64_t pid = 0, num;
        int part, ev = 0, e, first = 2;

        if ((e = parse_bdf_part(r, a[0], bdf, sizeof(bdf), &part)) < 0)
                return e;
        for (int i = 1; i <= SIM_SMI_EVENT_MAX; i++)
                if (streq(a[1], sim_smi_event_names[i]))
                        ev = i;
        if (!ev && isdigit((unsigned char) a[1][0]) &&
            parse_u64(r, "KIND", a[1], SIM_SMI_EVENT_MAX, &num) == 0)
                ev = (int) num;
        if (ev <= 0) {
                for (int i = 1; i <= SIM_SMI_EVENT_MAX; i++)
                        bprintf(names, sizeof(names), &len, "%s%s", i > 1 ? ", " : "",
                                sim_smi_event_names[i]);
                return fail(r, -EINVAL, "unknown KFD event \"%s\" (%s, or 1..%d)", a[1], names,
                            SIM_SMI_EVENT_MAX);
        }
        if (n > 2 && strncmp(a[2], "pid=", 4) == 0) {
                if ((e = parse_u64(r, "pid", a[2] + 4, INT_MAX, &pid)) < 0)
                        return e;
                first = 3;
        }
        for (int i = first; i < n; i++) {
                char *p = strdupf("%s%s%s", payload ? payload : "", payload ? " " : "", a[i]);

                if (!p)
                        return fail(r, -ENOMEM, "out of memory");
                free(payload);
                payload = p;
        }
        e = sim_kfd_event(r->m, bdf, part, (unsigned) ev, (pid_t) pid, payload);
        if (e == -ERANGE)
                return fail(r, e, "%s has no partition %d", bdf, part);
        return e < 0 ? ras_gpu_error(r, e, bdf) : 0;
}

/* The shim's AMDKFD_IOC_SMI_EVENTS: a stream of the node's events, handed over. */
static int cmd_kfd_smi_open(struct request *r, char **a, int n) {
        uint64_t gpu_id;
        int e;

        if ((e = parse_u64(r, "GPU_ID", a[0], UINT32_MAX, &gpu_id)) < 0)
                return e;
        e = sim_smi_open(r->m, (uint32_t) gpu_id, r->peer_pid, r->peer_uid == 0, &r->out_fd);
        if (e == -EINVAL)
                return fail(r, e, "no KFD node with gpu_id %" PRIu64, gpu_id);
        return e < 0 ? fail(r, e, "%s", strerror(-e)) : 0;
}

static int cmd_help(struct request *r, char **a, int n);

static const struct command {
        const char *name, *sub, *args;
        int min, max; /* words after the name (and sub) */
        int (*run)(struct request *r, char **a, int n);
} commands[] = {
        { "kfd-users", "add",
          "BDF[.P] PID [VRAM_BYTES] [queues=N] [sdma=N] [cu_occupancy=N] [evicted_ms=N] "
          "[faults=N] [page_in=N] [page_out=N] [all]",
          2, 11, cmd_kfd_add },
        { "kfd-users", "add-raw", "PID GPU_ID [VRAM_BYTES] [KEY=N]...", 2, 10, cmd_kfd_add_raw },
        { "kfd-users", "remove", "BDF[.P] PID", 2, 2, cmd_kfd_remove },
        { "kfd-users", "list", "", 0, 0, cmd_kfd_list },
        { "inject", NULL, "PATH ERRNO [once|always|times=N] [open|read|write]...", 2, 6,
          cmd_inject },
        { "delay", NULL, "PATH MS [once|always|times=N] [open|read|write]...", 2, 6, cmd_delay },
        { "no-effect", NULL, "PATH [once|always|times=N]", 1, 2, cmd_no_effect },
        { "clear-faults", NULL, "[PATH]", 0, 1, cmd_clear_faults },
        { "switch-time", NULL, "BDF MS", 2, 2, cmd_switch_time },
        { "switch-error", NULL, "BDF ERRNO|none [once|always]", 2, 3, cmd_switch_error },
        { "sensor", NULL, "BDF NAME VALUE|auto", 3, 3, cmd_sensor },
        { "platform-limit", NULL, "BDF WATTS|none", 2, 2, cmd_platform_limit },
        { "limit", NULL, "BDF ppt|socket_thermal|hbm_thermal|vr_thermal|prochot PERCENT", 3, 3,
          cmd_limit },
        { "counter", NULL, "BDF accumulation VALUE", 3, 3, cmd_counter },
        { "reset", NULL, "BDF begin|end", 2, 2, cmd_reset },
        { "reset-fail", NULL, "BDF ERRNO|none [read] [wedged] [once|always]", 2, 5,
          cmd_reset_fail },
        { "reset-hang", NULL, "BDF MS|forever|none", 2, 2, cmd_reset_hang },
        { "reset-release", NULL, "BDF", 1, 1, cmd_reset_release },
        { "reset-config", NULL, "time_ms|kfd_down_ms|keeps_cap|keeps_perf VALUE", 2, 2,
          cmd_reset_config },
        { "xgmi-error", NULL, "BDF 0|1|2", 2, 2, cmd_xgmi_error },
        { "pm-defaults", NULL, "BDF", 1, 1, cmd_pm_defaults },
        { "clocks-unavailable", NULL, "BDF on|off", 2, 2, cmd_clocks_unavailable },
        { "xgmi-link", NULL, "BDF LINK up|down", 3, 3, cmd_xgmi_link },
        { "pcie-link", NULL, "BDF WIDTH SPEED", 3, 3, cmd_pcie_link },
        { "pcie-replay", NULL, "BDF N [recov=M]", 2, 3, cmd_pcie_replay },
        { "ras-inject", NULL, "BDF BLOCK ue|ce|de [N]", 3, 4, cmd_ras_inject },
        { "retire-page", NULL, "BDF PFN R|P|F", 3, 3, cmd_retire_page },
        { "cper", NULL, "BDF fatal|corrected|uncorrected [--bad-page-threshold]", 2, 3, cmd_cper },
        { "kfd-event", NULL, "BDF[.P] KIND [pid=PID] [PAYLOAD...]", 2, MAX_WORDS - 1,
          cmd_kfd_event },
        { "kfd-smi-open", NULL, "GPU_ID", 1, 1, cmd_kfd_smi_open },
        { "unplug", NULL, "BDF", 1, 1, cmd_unplug },
        { "replug", NULL, "BDF", 1, 1, cmd_replug },
        { "dump", NULL, "", 0, 0, cmd_dump },
        { "help", NULL, "", 0, 0, cmd_help },
};

static void print_commands(FILE *f) {
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                fprintf(f, "  %s%s%s%s%s\n", commands[i].name, commands[i].sub ? " " : "",
                        commands[i].sub ? commands[i].sub : "", commands[i].args[0] ? " " : "",
                        commands[i].args);
}

static int cmd_help(struct request *r, char **a, int n) {
        print_commands(r->out);
        return 0;
}

/* The command of @words, and where its arguments start; a usage message if none fits. */
static const struct command *find_command(char **w, int n, int *ret_first, char *msg, size_t size) {
        bool known = false;

        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                const struct command *c = &commands[i];
                int first = c->sub ? 2 : 1;

                if (!streq(c->name, w[0]))
                        continue;
                known = true;
                if (c->sub && (n < 2 || !streq(c->sub, w[1])))
                        continue;
                if (n - first < c->min || n - first > c->max) {
                        snprintf(msg, size, "usage: %s%s%s%s%s", c->name, c->sub ? " " : "",
                                 c->sub ? c->sub : "", c->args[0] ? " " : "", c->args);
                        return NULL;
                }
                *ret_first = first;
                return c;
        }
        if (known)
                snprintf(msg, size, "usage: %s add|add-raw|remove|list ...", w[0]);
        else
                snprintf(msg, size, "unknown command \"%.64s\" (try help)", w[0]);
        return NULL;
}

/* Splits @line (modified) into words; -E2BIG for too many. */
static int split_words(char *line, char **w) {
        int n = 0;

        for (char *s = strtok(line, " \t"); s; s = strtok(NULL, " \t")) {
                if (n == MAX_WORDS)
                        return -E2BIG;
                w[n++] = s;
        }
        return n;
}

/* Runs one request line; the response goes to @out. */
static void run_request(struct sim_ctl *ctl, struct client *cl, char *line, int pidfd, FILE *resp,
                        int *ret_fd) {
        struct request r = { .ctl = ctl,
                             .m = ctl->m,
                             .pidfd = pidfd,
                             .out_fd = -1,
                             .peer_pid = cl ? cl->peer_pid : 0,
                             .peer_uid = cl ? cl->peer_uid : (uid_t) -1 };
        const struct command *c;
        _cleanup_free_ char *body = NULL;
        size_t body_len = 0;
        char *w[MAX_WORDS];
        int n, first, e;

        n = split_words(line, w);
        if (n == 0)
                e = fail(&r, -EINVAL, "empty request");
        else if (n < 0)
                e = fail(&r, -E2BIG, "more than %d words", MAX_WORDS);
        else if (!(c = find_command(w, n, &first, r.msg, sizeof(r.msg))))
                e = -EINVAL;
        else if (!(r.out = open_memstream(&body, &body_len)))
                e = fail(&r, -ENOMEM, "out of memory");
        else {
                e = c->run(&r, w + first, n - first);
                if (fclose(r.out) != 0 && e >= 0)
                        e = fail(&r, -ENOMEM, "out of memory");
        }
        if (r.pidfd >= 0)
                (void) close(r.pidfd);
        if (e < 0 && r.out_fd >= 0) {
                (void) close(r.out_fd);
                r.out_fd = -1;
        }
        *ret_fd = r.out_fd;
        if (e < 0) {
                const char *name = sim_errno_name(-e);

                fprintf(resp, "error %s %d %s\n", name ? name : "E?", -e,
                        r.msg[0] ? r.msg : strerror(-e));
        } else {
                fprintf(resp, "ok %zu\n", body_len);
                if (body_len)
                        fwrite(body, 1, body_len, resp);
        }
}

/* ---------------------------------------------------------------------------------------- */
/* Server */

static void client_close(struct sim_ctl *ctl, size_t i) {
        struct client *c = &ctl->clients[i];

        (void) close(c->fd);
        if (c->pidfd >= 0)
                (void) close(c->pidfd);
        ctl->clients[i] = ctl->clients[--ctl->n_clients];
}

static void send_all(int fd, const char *buf, size_t len) {
        while (len > 0) {
                ssize_t k = send(fd, buf, len, MSG_NOSIGNAL);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return;
                buf += k;
                len -= (size_t) k;
        }
}

/* The response, @fd (if >= 0) going along with its first byte. */
static void send_with_fd(int sock, const char *buf, size_t len, int fd) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } cm;
        struct iovec iov = { (void *) buf, len };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t k;

        if (fd < 0 || len == 0) {
                send_all(sock, buf, len);
                return;
        }
        memset(&cm, 0, sizeof(cm));
        mh.msg_control = &cm;
        mh.msg_controllen = sizeof(cm);
        CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
        CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
        CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), &fd, sizeof(int));
        do
                k = sendmsg(sock, &mh, MSG_NOSIGNAL);
        while (k < 0 && errno == EINTR);
        if (k > 0 && (size_t) k < len)
                send_all(sock, buf + k, len - (size_t) k);
}

static void respond(struct sim_ctl *ctl, struct client *c, char *line) {
        _cleanup_free_ char *resp = NULL;
        _cleanup_close_ int out_fd = -1;
        size_t len = 0;
        FILE *f = open_memstream(&resp, &len);
        int pidfd = c->pidfd;

        c->pidfd = -1;
        if (!f) {
                static const char msg[] = "error ENOMEM 12 out of memory\n";

                if (pidfd >= 0)
                        (void) close(pidfd);
                send_all(c->fd, msg, sizeof(msg) - 1);
                return;
        }
        run_request(ctl, c, line, pidfd, f, &out_fd);
        if (fclose(f) == 0)
                send_with_fd(c->fd, resp, len, out_fd);
}

/* Reads what a client sent; runs each complete request. false: close it. */
static bool client_read(struct sim_ctl *ctl, struct client *c) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 4)];
        } cm;
        struct iovec iov = { c->buf + c->len, REQUEST_MAX - c->len };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &cm, .msg_controllen = sizeof(cm)
        };
        ssize_t k;
        char *nl;

        if (c->len >= REQUEST_MAX)
                return false;
        k = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (k < 0)
                return errno == EINTR || errno == EAGAIN;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h))
                if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
                        size_t nfd = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        int fds[4];

                        memcpy(fds, CMSG_DATA(h), MIN(nfd, (size_t) 4) * sizeof(int));
                        for (size_t i = 0; i < nfd && i < 4; i++) {
                                if (c->pidfd >= 0)
                                        (void) close(c->pidfd);
                                c->pidfd = fds[i];
                        }
                }
        if (k == 0)
                return false;
        c->len += (size_t) k;
        c->buf[c->len] = '\0';
        while ((nl = memchr(c->buf, '\n', c->len))) {
                size_t used = (size_t) (nl - c->buf) + 1;
                bool text = true;

                *nl = '\0';
                for (char *p = c->buf; *p; p++)
                        if (!isprint((unsigned char) *p) && *p != '\t')
                                text = false;
                if (!text || strlen(c->buf) != used - 1) {
                        static const char msg[] = "error EINVAL 22 the request is not text\n";

                        send_all(c->fd, msg, sizeof(msg) - 1);
                        return false;
                }
                respond(ctl, c, c->buf);
                memmove(c->buf, c->buf + used, c->len - used);
                c->len -= used;
                c->buf[c->len] = '\0';
        }
        if (c->len >= REQUEST_MAX) {
                static const char msg[] = "error E2BIG 7 the request is longer than 4096 bytes\n";

                send_all(c->fd, msg, sizeof(msg) - 1);
                return false;
        }
        return true;
}

static void *ctl_thread(void *userdata) {
        struct sim_ctl *ctl = userdata;
        bool users = false;

        for (;;) {
                struct pollfd pfd[2 + MAX_CLIENTS];
                size_t n = 0;
                int k;

                pfd[n++] = (struct pollfd){ .fd = ctl->stop_fd, .events = POLLIN };
                pfd[n++] = (struct pollfd){ .fd = ctl->listen_fd, .events = POLLIN };
                for (size_t i = 0; i < ctl->n_clients; i++)
                        pfd[n++] = (struct pollfd){ .fd = ctl->clients[i].fd, .events = POLLIN };
                k = poll(pfd, n, users ? PRUNE_MS : -1);
                if (k < 0 && errno != EINTR)
                        break;
                if (pfd[0].revents)
                        break;
                if (k > 0 && (pfd[1].revents & POLLIN)) {
                        int fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_CLOEXEC);

                        if (fd >= 0 && ctl->n_clients == MAX_CLIENTS) {
                                static const char msg[] = "error EBUSY 16 too many connections\n";

                                send_all(fd, msg, sizeof(msg) - 1);
                                (void) close(fd);
                        } else if (fd >= 0) {
                                struct timeval tv = { .tv_sec = 10 };

                                struct ucred cred = { .pid = 0, .uid = (uid_t) -1 };
                                socklen_t cl = sizeof(cred);

                                (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
                                (void) getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl);
                                ctl->clients[ctl->n_clients++] =
                                        (struct client){ .fd = fd,
                                                         .pidfd = -1,
                                                         .peer_pid = cred.pid,
                                                         .peer_uid = cred.uid };
                        }
                }
                /* the clients polled are the first n - 2; new ones wait for the next round */
                for (size_t i = n - 2; k > 0 && i > 0; i--)
                        if (pfd[i + 1].revents && !client_read(ctl, &ctl->clients[i - 1]))
                                client_close(ctl, i - 1);
                /* KFD drops a process as it exits */
                users = sim_kfd_users_prune(ctl->m);
        }
        while (ctl->n_clients > 0)
                client_close(ctl, ctl->n_clients - 1);
        return NULL;
}

/* /run/amdsmi-sim (root), $TMPDIR/amdsmi-sim-UID: made 0700, ours. */
static int private_dir(char **ret) {
        const char *tmp = getenv("TMPDIR");
        _cleanup_free_ char *dir = NULL;
        struct stat st;

        if (geteuid() == 0 && access("/run", W_OK) == 0)
                dir = strdup("/run/amdsmi-sim");
        else
                dir = strdupf("%s/amdsmi-sim-%u", tmp && *tmp == '/' ? tmp : "/tmp",
                              (unsigned) geteuid());
        if (!dir)
                return -ENOMEM;
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        if (lstat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0077))
                return -EPERM; /* someone else's: not ours to use */
        *ret = TAKE_PTR(dir);
        return 0;
}

/* Where mount points are registered, in the order the client looks. */
static int mounts_dirs(char *dirs[2]) {
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        char *own = NULL;

        dirs[0] = dirs[1] = NULL;
        if (xdg && *xdg == '/')
                dirs[0] = strdupf("%s/amdsmi-sim/mounts", xdg);
        if (private_dir(&own) >= 0) {
                dirs[dirs[0] ? 1 : 0] = strdupf("%s/mounts", own);
                free(own);
        }
        return dirs[0] ? 0 : -ENOENT;
}

/* systemd-escape --path */
static char *escape_path(const char *path) {
        size_t len = 0, size = strlen(path) * 4 + 2;
        char *out = malloc(size);

        if (!out)
                return NULL;
        while (*path == '/')
                path++;
        if (!*path)
                return strcpy(out, "-");
        for (const char *p = path; *p; p++) {
                if (*p == '/' && (p[1] == '/' || !p[1]))
                        continue;
                if (*p == '/')
                        out[len++] = '-';
                else if (isalnum((unsigned char) *p) || *p == '_' || (*p == '.' && p != path))
                        out[len++] = *p;
                else
                        len += (size_t) snprintf(out + len, size - len, "\\x%02x",
                                                 (unsigned char) *p);
        }
        out[len] = '\0';
        return out;
}

static int mkdir_parents(char *path) {
        for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                if (mkdir(path, 0700) < 0 && errno != EEXIST) {
                        *s = '/';
                        return -errno;
                }
                *s = '/';
        }
        return 0;
}

static int register_mount(struct sim_ctl *ctl) {
        _cleanup_free_ char *esc = escape_path(ctl->mountpoint), *tmp = NULL;
        char *dirs[2];
        _cleanup_fclose_ FILE *f = NULL;
        int r;

        if (!esc)
                return -ENOMEM;
        r = mounts_dirs(dirs);
        if (r < 0)
                return r;
        ctl->mount_file = strdupf("%s/%s", dirs[0], esc);
        free(dirs[0]);
        free(dirs[1]);
        if (!ctl->mount_file)
                return -ENOMEM;
        r = mkdir_parents(ctl->mount_file);
        if (r < 0)
                return r;
        tmp = strdupf("%s.%d", ctl->mount_file, (int) getpid());
        if (!tmp)
                return -ENOMEM;
        f = fopen(tmp, "wxe");
        if (!f)
                return -errno;
        fprintf(f, "%s\n", ctl->socket_path);
        if (fflush(f) != 0 || rename(tmp, ctl->mount_file) < 0) {
                r = -errno;
                (void) unlink(tmp);
                return r;
        }
        return 0;
}

/* A socket file left by a simulator that is gone is removed; one that answers is not. */
static int take_socket_path(const struct sockaddr_un *sa) {
        struct stat st;
        int fd, r;

        if (lstat(sa->sun_path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISSOCK(st.st_mode))
                return -EEXIST;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        r = connect(fd, (const struct sockaddr *) sa, sizeof(*sa));
        (void) close(fd);
        if (r == 0)
                return -EADDRINUSE;
        return unlink(sa->sun_path) < 0 ? -errno : 0;
}

int sim_ctl_new(struct sim_machine *m, const struct sim_ctl_config *cfg, struct sim_ctl **ret) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct sim_ctl *ctl = calloc(1, sizeof(*ctl));
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        mode_t mask;
        int r;

        if (!ctl)
                return -ENOMEM;
        ctl->m = m;
        ctl->listen_fd = ctl->stop_fd = -1;
        if (cfg->socket_path)
                ctl->socket_path = strdup(cfg->socket_path);
        else if (xdg && *xdg == '/')
                ctl->socket_path = strdupf("%s/amdsmi-sim-%d.sock", xdg, (int) getpid());
        else {
                char *dir;

                r = private_dir(&dir);
                if (r < 0) {
                        fprintf(stderr,
                                "amdsmi-sim: no private directory for the control "
                                "socket: %s (use --ctl PATH)\n",
                                strerror(-r));
                        free(ctl);
                        return r;
                }
                ctl->socket_path = strdupf("%s/amdsmi-sim-%d.sock", dir, (int) getpid());
                free(dir);
        }
        ctl->mountpoint = cfg->mountpoint ? strdup(cfg->mountpoint) : NULL;
        if (!ctl->socket_path || (cfg->mountpoint && !ctl->mountpoint)) {
                sim_ctl_free(ctl);
                return -ENOMEM;
        }
        if (strlen(ctl->socket_path) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "amdsmi-sim: control socket path too long: %s\n", ctl->socket_path);
                sim_ctl_free(ctl);
                return -ENAMETOOLONG;
        }
        strcpy(sa.sun_path, ctl->socket_path);
        r = take_socket_path(&sa);
        if (r < 0) {
                fprintf(stderr, "amdsmi-sim: control socket %s: %s\n", ctl->socket_path,
                        r == -EADDRINUSE ? "another simulator listens there"
                        : r == -EEXIST   ? "exists and is not a socket"
                                         : strerror(-r));
                free(TAKE_PTR(ctl->socket_path)); /* not ours to remove */
                sim_ctl_free(ctl);
                return r;
        }
        ctl->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ctl->stop_fd = eventfd(0, EFD_CLOEXEC);
        if (ctl->listen_fd < 0 || ctl->stop_fd < 0) {
                r = -errno;
                sim_ctl_free(ctl);
                return r;
        }
        mask = umask(0177);
        r = bind(ctl->listen_fd, (struct sockaddr *) &sa, sizeof(sa));
        umask(mask);
        if (r < 0 || listen(ctl->listen_fd, 16) < 0) {
                r = -errno;
                fprintf(stderr, "amdsmi-sim: control socket %s: %s\n", ctl->socket_path,
                        strerror(-r));
                if (r == -EADDRINUSE)
                        free(TAKE_PTR(ctl->socket_path));
                sim_ctl_free(ctl);
                return r;
        }
        if (cfg->register_mount && ctl->mountpoint) {
                r = register_mount(ctl);
                if (r < 0) {
                        fprintf(stderr, "amdsmi-sim: cannot register the mount point %s: %s\n",
                                ctl->mountpoint, strerror(-r));
                        free(TAKE_PTR(ctl->mount_file));
                        sim_ctl_free(ctl);
                        return r;
                }
        }
        *ret = ctl;
        return 0;
}

const char *sim_ctl_socket(const struct sim_ctl *c) {
        return c->socket_path;
}

int sim_ctl_start(struct sim_ctl *c) {
        sigset_t all, old;
        int r;

        /* signals are the main thread's */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        r = -pthread_create(&c->thread, NULL, ctl_thread, c);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        c->running = r == 0;
        return r;
}

struct sim_ctl *sim_ctl_free(struct sim_ctl *c) {
        if (!c)
                return NULL;
        if (c->running) {
                uint64_t one = 1;

                (void) !write(c->stop_fd, &one, sizeof(one));
                pthread_join(c->thread, NULL);
        }
        if (c->listen_fd >= 0)
                (void) close(c->listen_fd);
        if (c->stop_fd >= 0)
                (void) close(c->stop_fd);
        if (c->socket_path)
                (void) unlink(c->socket_path);
        if (c->mount_file)
                (void) unlink(c->mount_file);
        free(c->socket_path);
        free(c->mount_file);
        free(c->mountpoint);
        free(c);
        return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Client */

static void client_help(void) {
        printf("Usage: amdsmi-sim ctl [--socket PATH | --mount DIR] COMMAND [ARG...]\n"
               "\n"
               "Controls a running simulator through its control socket: --socket PATH, the\n"
               "socket of the simulator mounted at DIR, or $AMDSMI_SIM_CTL (set inside\n"
               "amdsmi-sim run).\n"
               "\n"
               "Commands:\n");
        print_commands(stdout);
        printf("\n"
               "Exit status: 0 done, 1 cannot connect, 2 usage error, 3 the simulator refused\n");
}

_printf_(2, 3) static int client_fail(int status, const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "amdsmi-sim ctl: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        if (status == EXIT_USAGE)
                fprintf(stderr, "Try 'amdsmi-sim ctl --help'.\n");
        return status;
}

static int find_mount_socket(const char *dir, char **ret) {
        _cleanup_free_ char *real = realpath(dir, NULL), *esc = NULL;
        char *dirs[2];
        int r = -ENOENT;

        if (!real)
                return -errno;
        esc = escape_path(real);
        if (!esc)
                return -ENOMEM;
        if (mounts_dirs(dirs) < 0)
                return -ENOENT;
        for (int i = 0; i < 2 && r < 0; i++) {
                _cleanup_free_ char *path = dirs[i] ? strdupf("%s/%s", dirs[i], esc) : NULL;
                _cleanup_fclose_ FILE *f = path ? fopen(path, "re") : NULL;
                char line[PATH_MAX];

                if (f && fgets(line, sizeof(line), f)) {
                        line[strcspn(line, "\n")] = '\0';
                        *ret = strdup(line);
                        r = *ret ? 0 : -ENOMEM;
                }
        }
        free(dirs[0]);
        free(dirs[1]);
        return r;
}

/* Reads the response (the server closes after it: we shut our side down) and prints it;
 * returns the exit status. */
static int client_response(int fd, const char *socket_path) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0, body;
        char *nl, *end;

        for (;;) {
                ssize_t k;

                if (len + 1 >= cap) {
                        char *b = cap > (64u << 20) ? NULL : realloc(buf, cap = cap * 2 + 65536);

                        if (!b)
                                return client_fail(EXIT_CONNECT, "the answer is too long");
                        buf = b;
                }
                k = read(fd, buf + len, cap - len - 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return client_fail(EXIT_CONNECT, "reading from %s: %s", socket_path,
                                           strerror(errno));
                if (k == 0)
                        break;
                len += (size_t) k;
        }
        buf[len] = '\0';
        nl = memchr(buf, '\n', len);
        if (nl && strncmp(buf, "ok ", 3) == 0) {
                errno = 0;
                body = strtoul(buf + 3, &end, 10);
                if (end == nl && !errno && len - (size_t) (nl + 1 - buf) == body) {
                        fwrite(nl + 1, 1, body, stdout);
                        return fflush(stdout) == 0 ? 0 : EXIT_CONNECT;
                }
        } else if (nl && strncmp(buf, "error ", 6) == 0) {
                char name[32];
                int num, off = 0;

                *nl = '\0';
                if (sscanf(buf + 6, "%31s %d %n", name, &num, &off) >= 2 && off > 0)
                        return client_fail(EXIT_REFUSED, "%s (%s)", buf + 6 + off, name);
        }
        return client_fail(EXIT_CONNECT, "no answer from %s", socket_path);
}

int sim_ctl_main(int argc, char **argv) {
        static const struct option longopts[] = {
                { "socket", required_argument, NULL, 's' },
                { "mount", required_argument, NULL, 'M' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_free_ char *registered = NULL, *line = NULL;
        _cleanup_close_ int fd = -1, pidfd = -1;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *socket_path = NULL, *mount = NULL;
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } cm;
        struct iovec iov;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        const struct command *cmd;
        char msg[256];
        size_t len = 0;
        int c, first;

        optind = 1;
        while ((c = getopt_long(argc, argv, "+s:h", longopts, NULL)) >= 0)
                switch (c) {
                case 's':
                        socket_path = optarg;
                        break;
                case 'M':
                        mount = optarg;
                        break;
                case 'h':
                        client_help();
                        return 0;
                default:
                        return client_fail(EXIT_USAGE, "unknown option");
                }
        argc -= optind;
        argv += optind;
        if (socket_path && mount)
                return client_fail(EXIT_USAGE, "--socket and --mount: one of them");
        if (argc == 0)
                return client_fail(EXIT_USAGE, "a command is needed (try help)");
        for (int i = 0; i < argc; i++) {
                if (!argv[i][0])
                        return client_fail(EXIT_USAGE, "an empty argument");
                for (const char *p = argv[i]; *p; p++)
                        if (!isgraph((unsigned char) *p))
                                return client_fail(EXIT_USAGE,
                                                   "\"%s\": arguments are printable ASCII "
                                                   "without spaces",
                                                   argv[i]);
        }
        cmd = find_command(argv, argc, &first, msg, sizeof(msg));
        if (!cmd)
                return client_fail(EXIT_USAGE, "%s", msg);

        if (mount) {
                int r = find_mount_socket(mount, &registered);

                if (r < 0)
                        return client_fail(EXIT_CONNECT, "no simulator is registered at %s: %s",
                                           mount, strerror(-r));
                socket_path = registered;
        }
        if (!socket_path)
                socket_path = getenv("AMDSMI_SIM_CTL");
        if (!socket_path || !*socket_path)
                return client_fail(EXIT_USAGE, "which simulator? --socket PATH, --mount DIR or "
                                               "AMDSMI_SIM_CTL");
        if (strlen(socket_path) >= sizeof(sa.sun_path))
                return client_fail(EXIT_USAGE, "socket path too long: %s", socket_path);
        strcpy(sa.sun_path, socket_path);

        /* the process of kfd-users add, named in our PID namespace: a pidfd goes along */
        if (cmd->run == cmd_kfd_add || cmd->run == cmd_kfd_add_raw) {
                char *end;
                long pid = strtol(argv[first + (cmd->run == cmd_kfd_add)], &end, 10);

                if (!*end && pid > 0 && pid <= INT_MAX) {
                        pidfd = (int) syscall(SYS_pidfd_open, (pid_t) pid, 0);
                        if (pidfd < 0 && errno == ESRCH)
                                return client_fail(EXIT_REFUSED, "no process with PID %ld (ESRCH)",
                                                   pid);
                }
        }

        for (int i = 0; i < argc; i++)
                len += strlen(argv[i]) + 1;
        if (len > REQUEST_MAX)
                return client_fail(EXIT_USAGE, "the request is longer than %d bytes", REQUEST_MAX);
        line = malloc(len + 1);
        if (!line)
                return client_fail(EXIT_CONNECT, "out of memory");
        len = 0;
        for (int i = 0; i < argc; i++) {
                size_t n = strlen(argv[i]);

                memcpy(line + len, argv[i], n);
                len += n;
                line[len++] = i + 1 < argc ? ' ' : '\n';
        }
        line[len] = '\0';

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return client_fail(EXIT_CONNECT, "cannot connect to %s: %s", socket_path,
                                   strerror(errno));
        iov = (struct iovec){ line, len };
        if (pidfd >= 0) {
                memset(&cm, 0, sizeof(cm));
                mh.msg_control = &cm;
                mh.msg_controllen = sizeof(cm);
                CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
                CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
                CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), &pidfd, sizeof(int));
        }
        if (sendmsg(fd, &mh, MSG_NOSIGNAL) != (ssize_t) len)
                return client_fail(EXIT_CONNECT, "cannot send to %s: %s", socket_path,
                                   strerror(errno));
        (void) shutdown(fd, SHUT_WR);
        return client_response(fd, socket_path);
}
