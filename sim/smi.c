/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: KFD SMI events (spec health-and-control.md §7.1) without a kernel device.
 *
 * The LD_PRELOAD shim (kfd-shim.c) answers AMDKFD_IOC_SMI_EVENTS on $AMDSMI_DEV_ROOT/kfd by
 * asking the control socket (`kfd-smi-open GPU_ID`) for a stream: the simulator makes a
 * socket pair, keeps one end (the client's mask comes in there, 8 bytes per write, the last
 * one counts) and hands the other over (SCM_RIGHTS): the anon fd the caller polls and reads.
 * It keeps a reference of the client's end too: the bytes not read yet there are the kernel's
 * kfifo (1024 bytes), so an event that does not fit is dropped as kfd_smi_event_add() drops
 * it. Both ends are non-blocking: a read of an empty stream fails with EAGAIN, as the
 * kernel's read does.
 *
 * Lines are the kernel's: "%x " event id and the payload, at most 96 bytes
 * (KFD_SMI_EVENT_MSG_SIZE). kfd_smi_ev_enabled(): an event of a process (pid != 0) goes to
 * that process's clients, and to a superuser's whose mask has KFD_SMI_EVENT_ALL_PROCESS.
 *
 * A client goes when its process no longer holds its end (looked up in /proc/PID/fd at each
 * event and count, and by the control thread's periodic prune), when its GPU goes (unbind,
 * unplug) or when the simulator ends. While it lives, its process holds /dev/kfd, which makes
 * it a KFD user of every GPU (the kernel's process has a device of each, kfd_init_apertures()):
 * partition switches fail with EBUSY, and the process shows in class/kfd/kfd/proc/<pid>/ with
 * pasid, queues/ and vram_<gpu_id> / sdma_<gpu_id> (0) of every KFD node, as KFD makes it at
 * open (unless `kfd-users add` made that directory already). The directory goes with the
 * process's last client. (The kernel keeps a process's KFD data until the process exits;
 * here it goes with the streams, the model the KFD-user rule above follows.)
 *
 * Everything here runs with the fs lock held.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "fs.h"
#include "tree.h"

#define KFIFO_SIZE 1024 /* MAX_KFIFO_SIZE */
#define MSG_SIZE 96     /* KFD_SMI_EVENT_MSG_SIZE */
#define EVENT_ALL_PROCESS 64

const char *const sim_smi_event_names[SIM_SMI_EVENT_MAX + 1] = {
        [1] = "vmfault",          [2] = "thermal_throttle", [3] = "gpu_pre_reset",
        [4] = "gpu_post_reset",   [5] = "migrate_start",    [6] = "migrate_end",
        [7] = "page_fault_start", [8] = "page_fault_end",   [9] = "queue_eviction",
        [10] = "queue_restore",   [11] = "unmap_from_gpu",  [12] = "process_start",
        [13] = "process_end",
};

struct smi_client {
        int fd;   /* ours: masks in, events out */
        int peer; /* the client's end, kept */
        ino_t ino;
        pid_t pid;
        bool suser;
        struct sim_gpu *gpu;
        unsigned part;
        uint64_t mask;
        uint8_t mbuf[8];
        size_t mlen;
        /* the descriptor reaches the process after sim_smi_open() returns: until it was seen
         * there once, a client younger than HANDOVER_NS is not taken for gone */
        uint64_t born_ns;
        bool seen;
};

#define HANDOVER_NS (5 * 1000000000ULL)

struct sim_smi {
        struct smi_client *c;
        size_t n, cap;
        uint64_t throttle_count;
        /* the processes whose class/kfd/kfd/proc/<pid>/ this file made */
        pid_t *procs;
        size_t n_procs;
};

#define KFD_PROC "devices/virtual/kfd/kfd/proc"
#define SMI_PASID_FIRST 49152 /* apart from control.c's kfd-users (32768 on) */

static bool pid_has_client(const struct sim_smi *s, pid_t pid) {
        for (size_t i = 0; i < s->n; i++)
                if (s->c[i].pid == pid)
                        return true;
        return false;
}

/* class/kfd/kfd/proc/<pid>/ of a process that opened /dev/kfd: every node's files. */
static void proc_build(struct sim_machine *m, pid_t pid) {
        struct sim_smi *s = m->smi;
        struct sim_node *root, *d;
        char name[32];
        pid_t *v;

        if (!m->fs)
                return;
        root = sim_lookup(m->fs, KFD_PROC);
        snprintf(name, sizeof(name), KFD_PROC "/%d", (int) pid);
        if (!root || sim_lookup(m->fs, name))
                return; /* kfd-users add made it: theirs */
        v = realloc(s->procs, (s->n_procs + 1) * sizeof(*v));
        if (!v)
                return;
        s->procs = v;
        d = sim_mkdirf(root, "%d", (int) pid);
        if (!d)
                return;
        s->procs[s->n_procs++] = pid;
        sim_text(d, "pasid", 0444, "%u", SMI_PASID_FIRST + (unsigned) s->n_procs);
        sim_mkdir(d, "queues");
        for (size_t i = 0; i < m->n_kfd; i++) {
                if (!m->kfd[i].gpu->attached)
                        continue;
                snprintf(name, sizeof(name), "vram_%u", m->kfd[i].gpu_id);
                sim_text(d, name, 0444, "0");
                snprintf(name, sizeof(name), "sdma_%u", m->kfd[i].gpu_id);
                sim_text(d, name, 0444, "0");
        }
}

/* The directories of processes with no client left go. */
static void procs_prune(struct sim_machine *m) {
        struct sim_smi *s = m->smi;

        for (size_t i = s ? s->n_procs : 0; i > 0; i--) {
                char path[64];

                if (pid_has_client(s, s->procs[i - 1]))
                        continue;
                if (m->fs) {
                        snprintf(path, sizeof(path), KFD_PROC "/%d", (int) s->procs[i - 1]);
                        sim_remove(sim_lookup(m->fs, path));
                }
                s->procs[i - 1] = s->procs[--s->n_procs];
        }
}

static void client_drop(struct sim_smi *s, size_t i) {
        (void) close(s->c[i].fd);
        (void) close(s->c[i].peer);
        s->c[i] = s->c[--s->n];
}

static uint64_t boottime_ns(void);

static bool holds_end(const struct smi_client *c);

/* Whether the process still holds the client's end (or has not received it yet). */
static bool client_alive(struct smi_client *c) {
        if (holds_end(c)) {
                c->seen = true;
                return true;
        }
        return !c->seen && boottime_ns() - c->born_ns < HANDOVER_NS;
}

static bool holds_end(const struct smi_client *c) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[64], want[64];
        struct dirent *de;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int) c->pid);
        snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long) c->ino);
        d = opendir(path);
        if (!d)
                return false;
        while ((de = readdir(d))) {
                char link[64];
                ssize_t k;

                if (de->d_name[0] == '.')
                        continue;
                k = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
                if (k <= 0)
                        continue;
                link[k] = '\0';
                if (streq(link, want))
                        return true;
        }
        return false;
}

static void prune(struct sim_machine *m) {
        struct sim_smi *s = m->smi;

        for (size_t i = s ? s->n : 0; i > 0; i--)
                if (!client_alive(&s->c[i - 1]))
                        client_drop(s, i - 1);
        procs_prune(m);
}

/* The masks written since: the last whole one counts (kfd_smi_ev_write()). */
static void drain_mask(struct smi_client *c) {
        uint8_t buf[256];
        ssize_t k;

        while ((k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
                for (ssize_t i = 0; i < k; i++) {
                        c->mbuf[c->mlen++] = buf[i];
                        if (c->mlen == sizeof(c->mbuf)) {
                                memcpy(&c->mask, c->mbuf, sizeof(c->mask));
                                c->mlen = 0;
                        }
                }
}

static bool enabled(const struct smi_client *c, unsigned event, pid_t pid) {
        uint64_t all = 1ULL << (EVENT_ALL_PROCESS - 1);

        if (pid && c->pid != pid && !(c->suser && (c->mask & all)))
                return false;
        return c->mask & (1ULL << (event - 1));
}

int sim_smi_open(struct sim_machine *m, uint32_t gpu_id, pid_t pid, bool suser, int *ret_fd) {
        struct sim_smi *s;
        struct smi_client c = { .fd = -1, .peer = -1, .pid = pid, .suser = suser };
        int sv[2], r = -EINVAL;
        struct stat st;

        if (m->fs)
                sim_fs_lock(m->fs);
        if (!m->smi)
                m->smi = calloc(1, sizeof(*m->smi));
        s = m->smi;
        if (!s) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < m->n_kfd; i++)
                if (m->kfd[i].gpu_id == gpu_id && m->kfd[i].gpu->attached) {
                        c.gpu = m->kfd[i].gpu;
                        c.part = m->kfd[i].part;
                }
        if (!c.gpu || gpu_id == 0)
                goto out; /* kfd_process_device_data_by_id(): -EINVAL */
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 8;
                struct smi_client *v = realloc(s->c, cap * sizeof(*v));

                if (!v) {
                        r = -ENOMEM;
                        goto out;
                }
                s->c = v;
                s->cap = cap;
        }
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) {
                r = -errno;
                goto out;
        }
        c.fd = sv[0];
        c.peer = sv[1];
        if (fstat(c.peer, &st) < 0 || (*ret_fd = fcntl(c.peer, F_DUPFD_CLOEXEC, 3)) < 0) {
                r = -errno;
                (void) close(sv[0]);
                (void) close(sv[1]);
                goto out;
        }
        c.ino = st.st_ino;
        c.born_ns = boottime_ns();
        s->c[s->n++] = c;
        proc_build(m, pid);
        r = 0;
out:
        if (m->fs)
                sim_fs_unlock_sync(m->fs); /* class/kfd/kfd/proc/<pid>/ may be new */
        return r;
}

void sim_smi_event(struct sim_gpu *g, int part, unsigned event, pid_t pid, const char *fmt, ...) {
        struct sim_smi *s = g->m->smi;
        char line[MSG_SIZE];
        va_list ap;
        int len;

        if (!s || !s->n || event < 1 || event > 64)
                return;
        len = snprintf(line, sizeof(line), "%x ", event);
        va_start(ap, fmt);
        vsnprintf(line + len, sizeof(line) - (size_t) len, fmt, ap);
        va_end(ap);
        len = (int) strlen(line);
        for (size_t i = s->n; i > 0; i--) {
                struct smi_client *c = &s->c[i - 1];
                int queued = 0;

                if (c->gpu != g || (part >= 0 && c->part != (unsigned) part))
                        continue;
                if (!client_alive(c)) {
                        client_drop(s, i - 1);
                        procs_prune(g->m);
                        continue;
                }
                drain_mask(c);
                if (!enabled(c, event, pid))
                        continue;
                if (ioctl(c->peer, FIONREAD, &queued) < 0 || queued + len > KFIFO_SIZE)
                        continue; /* "no space left": dropped */
                (void) send(c->fd, line, (size_t) len, MSG_DONTWAIT | MSG_NOSIGNAL);
        }
}

unsigned sim_smi_clients(struct sim_machine *m) {
        prune(m);
        return m->smi ? (unsigned) m->smi->n : 0;
}

void sim_smi_forget_gpu(struct sim_gpu *g) {
        struct sim_smi *s = g->m->smi;

        for (size_t i = s ? s->n : 0; i > 0; i--)
                if (s->c[i - 1].gpu == g)
                        client_drop(s, i - 1);
        procs_prune(g->m);
}

void sim_smi_free(struct sim_machine *m) {
        struct sim_smi *s = m->smi;

        if (!s)
                return;
        while (s->n)
                client_drop(s, s->n - 1);
        free(s->procs);
        free(s->c);
        free(s);
        m->smi = NULL;
}

static uint64_t boottime_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* The event's own line (KFD_EVENT_FMT_*), of process @pid on node @node. */
static void raise_default(struct sim_gpu *g, int part, unsigned event, pid_t pid, uint32_t node) {
        long long ns = (long long) boottime_ns();
        unsigned long addr = 0x7f0000000UL, pages = 0x200;
        int p = (int) pid;

        switch (event) {
        case 1:
                sim_smi_event(g, part, event, 0, "%x:%s\n", (unsigned) pid, "amdsmi-sim");
                break;
        case 2:
                sim_smi_event(g, part, event, 0, "%llx:%llx\n", 0x1ULL,
                              (unsigned long long) ++g->m->smi->throttle_count);
                break;
        case 3:
        case 4: /* the seqno was counted once for the GPU (sim_kfd_event()); post-reset has
                 * no reset context, so no cause: "4 N \n" */
                sim_smi_event(g, part, event, 0, "%x %s\n", g->reset_seq,
                              event == 3 ? "user trigger" : "");
                break;
        case 5:
                sim_smi_event(g, part, event, pid, "%lld -%d @%lx(%lx) %x->%x %x:%x %d\n", ns, p,
                              addr, pages, 0u, node, 0u, node, 0);
                break;
        case 6:
                sim_smi_event(g, part, event, pid, "%lld -%d @%lx(%lx) %x->%x %d %d\n", ns, p, addr,
                              pages, 0u, node, 0, 0);
                break;
        case 7:
        case 8:
                sim_smi_event(g, part, event, pid, "%lld -%d @%lx(%x) %c\n", ns, p, addr, node,
                              event == 7 ? 'W' : 'M');
                break;
        case 9:
                sim_smi_event(g, part, event, pid, "%lld -%d %x %d\n", ns, p, node, 0);
                break;
        case 10:
                sim_smi_event(g, part, event, pid, "%lld -%d %x %c\n", ns, p, node, 'R');
                break;
        case 11:
                sim_smi_event(g, part, event, pid, "%lld -%d @%lx(%lx) %x %d\n", ns, p, addr, pages,
                              node, 0);
                break;
        default:
                sim_smi_event(g, part, event, pid, "%x %s\n", (unsigned) pid, "amdsmi-sim");
                break;
        }
}

int sim_kfd_event(struct sim_machine *m, const char *bdf, int part, unsigned event, pid_t pid,
                  const char *payload) {
        struct sim_gpu *g = NULL;
        int r = 0;

        if (event < 1 || event > SIM_SMI_EVENT_MAX)
                return -EINVAL;
        if (m->fs)
                sim_fs_lock(m->fs);
        for (size_t i = 0; i < m->n_gpus && !g; i++)
                if (!m->gpus[i]->func->unplugged && m->gpus[i]->attached &&
                    streq(m->gpus[i]->func->bdf, bdf))
                        g = m->gpus[i];
        if (!g)
                r = -ENODEV;
        else if (part >= (int) sim_gpu_parts(g))
                r = -ERANGE;
        else if (!m->smi && !(m->smi = calloc(1, sizeof(*m->smi))))
                r = -ENOMEM;
        else if (payload)
                sim_smi_event(g, part, event, pid, "%s\n", payload);
        else {
                if (event == 3)
                        g->reset_seq++;
                for (size_t i = 0; i < m->n_kfd; i++) {
                        const struct sim_kfd_entry *e = &m->kfd[i];

                        if (e->gpu == g && (part < 0 || e->part == (unsigned) part))
                                raise_default(g, (int) e->part, event, pid, e->gpu_id);
                }
        }
        if (m->fs)
                sim_fs_unlock_sync(m->fs);
        return r;
}

void sim_smi_gpu_reset(struct sim_gpu *g, bool post) {
        struct sim_machine *m = g->m;

        if (!post)
                g->reset_seq++;
        for (size_t i = 0; i < m->n_kfd; i++)
                if (m->kfd[i].gpu == g)
                        sim_smi_event(g, (int) m->kfd[i].part, post ? 4 : 3, 0, "%x %s\n",
                                      g->reset_seq, post ? "" : "user trigger");
}
