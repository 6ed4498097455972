/* SPDX-License-Identifier: MIT */
/*
 * GPU reset (lib part): the mechanism of a GPU, the GPUs a reset takes, the reset masks, and
 * the reset with a deadline (spec health-and-control.md §4; include/amdsmi/amdsmi-reset.h).
 *
 * The read that resets blocks in the kernel until the recovery is done (amdgpu's
 * gpu_recover_get() waits for the reset work), uninterruptibly. It runs in a detached process
 * that owns only the fd and a pipe: a read that has not returned at the deadline is left to
 * finish in the background, and the caller is told at once and can exit.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "private.h"
#include "sysfs.h"
#include "time-util.h"

#define RESET_TIMEOUT_MS_DEFAULT 60000
#define POLL_MS 20

static const char *const mechanism_names[] = {
        [AMDSMI_RESET_MECHANISM_NONE] = "none",
        [AMDSMI_RESET_MECHANISM_AMDGPU_RECOVER] = "amdgpu-debugfs-recover",
        [AMDSMI_RESET_MECHANISM_GIM_RESET_GPU] = "gim-reset-gpu",
};

static const char *const ring_names[_AMDSMI_RESET_RING_MAX] = {
        [AMDSMI_RESET_RING_GFX] = "gfx",   [AMDSMI_RESET_RING_COMPUTE] = "compute",
        [AMDSMI_RESET_RING_SDMA] = "sdma", [AMDSMI_RESET_RING_VCN] = "vcn",
        [AMDSMI_RESET_RING_JPEG] = "jpeg",
};

static const char *const stage_names[] = {
        [AMDSMI_RESET_STAGE_DONE] = "done",
        [AMDSMI_RESET_STAGE_PREFLIGHT] = "preflight",
        [AMDSMI_RESET_STAGE_RESET] = "reset",
        [AMDSMI_RESET_STAGE_WAIT] = "wait",
};

_public_ const char *amdsmi_reset_mechanism_to_string(enum amdsmi_reset_mechanism m) {
        if ((unsigned) m >= ELEMENTSOF(mechanism_names))
                return NULL;
        return mechanism_names[m];
}

_public_ const char *amdsmi_reset_ring_to_string(enum amdsmi_reset_ring ring) {
        if ((unsigned) ring >= _AMDSMI_RESET_RING_MAX)
                return NULL;
        return ring_names[ring];
}

_public_ const char *amdsmi_reset_stage_to_string(enum amdsmi_reset_stage stage) {
        if ((unsigned) stage >= ELEMENTSOF(stage_names))
                return NULL;
        return stage_names[stage];
}

_public_ int amdsmi_gpu_get_reset_mechanism(struct amdsmi_gpu *gpu,
                                            enum amdsmi_reset_mechanism *ret) {
        *ret = AMDSMI_RESET_MECHANISM_NONE;
        if (amdsmi_gpu_is_vf(gpu) > 0)
                return -EOPNOTSUPP; /* its host resets it (an FLR from gim) */
        switch (amdsmi_gpu_get_driver(gpu)) {
        case AMDSMI_DRIVER_AMDGPU:
                *ret = AMDSMI_RESET_MECHANISM_AMDGPU_RECOVER;
                return 0;
        case AMDSMI_DRIVER_GIM:
                *ret = AMDSMI_RESET_MECHANISM_GIM_RESET_GPU;
                return 0;
        default:
                return -EOPNOTSUPP;
        }
}

/* amdgpu_device_gpu_recover() (amdgpu_device.c) puts every device of the XGMI hive on its
 * reset list when the GPU is not a VF and the hive has more than one node: one recovery
 * resets them all. */
_public_ unsigned amdsmi_gpu_get_reset_hive(struct amdsmi_gpu *gpu, struct amdsmi_gpu **ret,
                                            unsigned max) {
        uint64_t id = amdsmi_gpu_get_hive_id(gpu);
        struct amdsmi_ctx *ctx = gpu->ctx;
        unsigned n = 0;

        if (id == 0) {
                if (max > 0)
                        ret[0] = gpu;
                return 1;
        }
        for (size_t i = 0; i < ctx->n_gpus; i++)
                if (ctx->gpus[i] == gpu || amdsmi_gpu_get_hive_id(ctx->gpus[i]) == id) {
                        if (n < max)
                                ret[n] = ctx->gpus[i];
                        n++;
                }
        return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Reset masks */

_public_ int amdsmi_reset_mask_parse(const char *text, uint32_t *ret_mask) {
        static const struct {
                const char *name;
                uint32_t bit;
        } tokens[] = {
                { "soft", AMDSMI_RESET_TYPE_SOFT },   { "soft_recovery", AMDSMI_RESET_TYPE_SOFT },
                { "queue", AMDSMI_RESET_TYPE_QUEUE }, { "pipe", AMDSMI_RESET_TYPE_PIPE },
                { "full", AMDSMI_RESET_TYPE_FULL },
        };
        uint32_t mask = 0;
        const char *p = text;

        for (;;) {
                size_t len = 0;
                bool found = false;

                while (*p == ' ')
                        p++;
                if (*p == '\0' || (*p == '\n' && p[1] == '\0'))
                        break;
                while (p[len] && p[len] != ' ' && p[len] != '\n') {
                        if ((unsigned char) p[len] < 0x20 || (unsigned char) p[len] >= 0x7f)
                                return -EBADMSG;
                        len++;
                }
                if (len == 0)
                        return -EBADMSG; /* a newline with text after it */
                for (size_t i = 0; i < ELEMENTSOF(tokens); i++)
                        if (strlen(tokens[i].name) == len && memcmp(tokens[i].name, p, len) == 0) {
                                if (mask & tokens[i].bit)
                                        return -EBADMSG; /* repeated */
                                mask |= tokens[i].bit;
                                found = true;
                                break;
                        }
                if (!found)
                        return -EBADMSG;
                p += len;
        }
        *ret_mask = mask;
        return 0;
}

_public_ int amdsmi_gpu_read_reset_masks(struct amdsmi_gpu *gpu, struct amdsmi_reset_masks *ret) {
        struct amdsmi_reset_masks m = { 0 };

        for (int i = 0; i < _AMDSMI_RESET_RING_MAX; i++) {
                char path[256], buf[128];
                int r;

                snprintf(path, sizeof(path), "%s/%s_reset_mask", gpu->syspath, ring_names[i]);
                r = sysfs_read_text(gpu->ctx, path, buf, sizeof(buf));
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                r = amdsmi_reset_mask_parse(buf, &m.mask[i]);
                if (r < 0) {
                        log_debug(gpu->ctx, "%s/%s: \"%s\" is not a reset mask",
                                  gpu->ctx->sysfs_root, path, buf);
                        return r;
                }
                m.present |= 1u << i;
        }
        *ret = m;
        return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The read that resets */

/* The reader: a grandchild of the caller (a double fork, so that nobody has to reap it), which
 * keeps only the trigger's fd and the pipe's write end: a read that blocks past the deadline
 * holds neither the caller nor its output (a process cannot exit while one of its threads is
 * in an uninterruptible read). It writes the read's errno (int) and then the text. Only
 * async-signal-safe calls after fork. */
__attribute__((noreturn)) static void reader(int fd, int out) {
        char buf[128];
        size_t len = 0;
        int err = 0;

        /* the trigger on 0, the pipe on 1, nothing else (the caller's output above all) */
        if (out == 0 && (out = dup(out)) < 0)
                _exit(1);
        if (fd == 1 && (fd = dup(fd)) < 0)
                _exit(1);
        if ((fd != 0 && dup2(fd, 0) < 0) || (out != 1 && dup2(out, 1) < 0))
                _exit(1);
        fd = 0;
        out = 1;
        if (close_range(2, ~0U, 0) < 0)
                for (int i = 2; i < 1024; i++)
                        (void) close(i);
        for (;;) {
                ssize_t n = read(fd, buf + len, sizeof(buf) - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        err = errno;
                        break;
                }
                if (n == 0 || (len += (size_t) n) >= sizeof(buf))
                        break;
        }
        (void) !write(out, &err, sizeof(err));
        if (len > 0)
                (void) !write(out, buf, len);
        _exit(0);
}

/* Reads @path in a detached process, waiting until @deadline (CLOCK_MONOTONIC ms). @return 0
 * with the text in @buf, the read's negative errno, or -ETIMEDOUT (the read goes on). */
static int read_with_deadline(struct amdsmi_ctx *ctx, const char *path, uint64_t deadline,
                              char *buf, size_t size) {
        _cleanup_close_ int fd = -1, rd = -1;
        int p[2], status, err = 0, r;
        size_t len = 0;
        pid_t child;

        fd = sysfs_open_read(ctx, path);
        if (fd < 0)
                return fd;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        rd = p[0];
        child = fork();
        if (child < 0) {
                r = -errno;
                close(p[1]);
                return r;
        }
        if (child == 0) {
                pid_t grandchild = fork();

                if (grandchild == 0)
                        reader(fd, p[1]);
                _exit(grandchild < 0 ? 1 : 0);
        }
        close(p[1]);
        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
                ;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -EAGAIN; /* could not fork the reader */

        for (;;) {
                struct pollfd pfd = { .fd = rd, .events = POLLIN };
                uint64_t now = now_ms();
                ssize_t n;

                if (now >= deadline)
                        return -ETIMEDOUT;
                r = poll(&pfd, 1, deadline - now > INT32_MAX ? INT32_MAX : (int) (deadline - now));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        continue;
                n = read(rd, buf + len, size - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len >= size - 1)
                        break;
        }
        buf[len] = '\0';
        if (len < sizeof(err))
                return -EPIPE; /* the reader died before it could say */
        memcpy(&err, buf, sizeof(err));
        memmove(buf, buf + sizeof(err), len - sizeof(err) + 1);
        return -err;
}

/* The file whose read resets @gpu, relative to the sysfs root. */
static int trigger_path(struct amdsmi_gpu *gpu, enum amdsmi_reset_mechanism mech, char *buf,
                        size_t size) {
        char dir[64];
        int r, minor;

        if (mech == AMDSMI_RESET_MECHANISM_GIM_RESET_GPU) {
                snprintf(buf, size, "%s/reset_gpu", gpu->syspath);
                return sysfs_exists(gpu->ctx, buf) == -ENOENT ? -EOPNOTSUPP : 0;
        }
        /* dri/<PCI address> on kernels that name the directory by device (dri/<minor> a
         * link to it), else dri/<card minor> */
        snprintf(dir, sizeof(dir), "kernel/debug/dri/%s", gpu->bdf);
        r = sysfs_exists(gpu->ctx, dir);
        if (r < 0 && r != -EACCES && r != -EPERM) {
                minor = amdsmi_gpu_get_card_minor(gpu);
                if (minor < 0)
                        return -ENODATA;
                snprintf(dir, sizeof(dir), "kernel/debug/dri/%d", minor);
                r = sysfs_exists(gpu->ctx, dir);
        }
        if (r == -EACCES || r == -EPERM)
                return -EACCES;
        if (r < 0)
                return -ENODATA;
        snprintf(buf, size, "%s/amdgpu_gpu_recover", dir);
        return 0;
}

/* "%lld\n" of gpu_recover_get(). */
static int parse_reset_res(const char *text, int64_t *ret) {
        long long v;
        char *end;

        errno = 0;
        v = strtoll(text, &end, 10);
        if (end == text || errno || (*end && !(*end == '\n' && end[1] == '\0')))
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* Whether a GPU is back: its driver answers and its KFD nodes are as many as before. */
static bool gpu_back(struct amdsmi_gpu *gpu, struct amdsmi_reset_gpu *g, bool gim) {
        int r;

        if (gim) {
                g->answers = 1;
                g->kfd_nodes_after = 0;
                return true;
        }
        r = amdsmi_gpu_check_ready(gpu);
        g->answers = r == 0 || r == -ENODATA;
        g->kfd_nodes_after = (unsigned) gpu->n_partitions;
        return g->answers && g->kfd_nodes_after >= g->kfd_nodes_before;
}

static int finish(struct amdsmi_reset_report *rep, int r, enum amdsmi_reset_stage stage) {
        rep->error = r;
        rep->stage = stage;
        if (r == 0)
                rep->message[0] = '\0';
        return r;
}

_public_ int amdsmi_gpu_reset(struct amdsmi_gpu *gpu, uint64_t flags, unsigned timeout_ms,
                              struct amdsmi_reset_report *ret_report) {
        struct amdsmi_reset_report *rep = ret_report;
        struct amdsmi_gpu *hive[AMDSMI_PLAN_MAX_HIVE];
        enum amdsmi_reset_mechanism mech;
        char path[256], text[128] = "";
        uint64_t start, deadline, returned;
        unsigned n, missing = 0;
        bool gim;
        int r;

        if (rep->size < sizeof(struct amdsmi_reset_report))
                return -EINVAL;
        *rep = (struct amdsmi_reset_report){ .size = rep->size };
        if (flags & ~AMDSMI_RESET_DRY_RUN) {
                snprintf(rep->message, sizeof(rep->message), "invalid flags");
                return finish(rep, -EINVAL, AMDSMI_RESET_STAGE_PREFLIGHT);
        }
        r = amdsmi_gpu_get_reset_mechanism(gpu, &mech);
        rep->mechanism = mech;
        if (r < 0) {
                if (amdsmi_gpu_is_vf(gpu) > 0)
                        snprintf(rep->message, sizeof(rep->message),
                                 "%s is an SR-IOV VF: a VF is reset by its host", gpu->bdf);
                else
                        snprintf(rep->message, sizeof(rep->message),
                                 "%s is driven by neither amdgpu nor gim (driver %s): nothing "
                                 "here resets it",
                                 gpu->bdf, amdsmi_gpu_get_driver_name(gpu));
                return finish(rep, r, AMDSMI_RESET_STAGE_PREFLIGHT);
        }
        gim = mech == AMDSMI_RESET_MECHANISM_GIM_RESET_GPU;
        n = amdsmi_gpu_get_reset_hive(gpu, hive, AMDSMI_PLAN_MAX_HIVE);
        if (n > AMDSMI_PLAN_MAX_HIVE)
                n = AMDSMI_PLAN_MAX_HIVE;
        rep->hive_wide = n > 1;
        rep->n_gpus = n;
        kfd_ensure_loaded(gpu->ctx);
        for (unsigned i = 0; i < n; i++) {
                snprintf(rep->gpus[i].bdf, sizeof(rep->gpus[i].bdf), "%s", hive[i]->bdf);
                rep->gpus[i].kfd_nodes_before = (unsigned) hive[i]->n_partitions;
                rep->gpus[i].answers = 1;
        }
        (void) kfd_read_generation(gpu->ctx, &rep->generation_before);
        r = trigger_path(gpu, mech, path, sizeof(path));
        if (r < 0) {
                if (r == -EACCES)
                        snprintf(rep->message, sizeof(rep->message),
                                 "a GPU reset needs root (%s is readable by root only)",
                                 gim ? "reset_gpu" : "debugfs");
                else if (r == -ENODATA)
                        snprintf(rep->message, sizeof(rep->message),
                                 "no debugfs directory of %s: mount debugfs "
                                 "(mount -t debugfs none /sys/kernel/debug)",
                                 gpu->bdf);
                else
                        snprintf(rep->message, sizeof(rep->message), "%s has no reset file of %s",
                                 gpu->bdf, amdsmi_reset_mechanism_to_string(mech));
                return finish(rep, r, AMDSMI_RESET_STAGE_PREFLIGHT);
        }
        if (flags & AMDSMI_RESET_DRY_RUN) {
                snprintf(rep->message, sizeof(rep->message),
                         "dry run: %u GPU%s would be reset through %s", n, n == 1 ? "" : "s",
                         amdsmi_reset_mechanism_to_string(mech));
                return finish(rep, 0, AMDSMI_RESET_STAGE_DONE);
        }

        if (timeout_ms == 0)
                timeout_ms = RESET_TIMEOUT_MS_DEFAULT;
        start = now_ms();
        deadline = start + timeout_ms;
        r = read_with_deadline(gpu->ctx, path, deadline, text, sizeof(text));
        returned = now_ms();
        rep->reset_ms = (uint32_t) (returned - start);
        if (r == -ETIMEDOUT) {
                rep->hung = 1;
                for (unsigned i = 0; i < n; i++) {
                        (void) gpu_back(hive[i], &rep->gpus[i], gim);
                        rep->gpus[i].back = 0;
                }
                snprintf(rep->message, sizeof(rep->message),
                         "the reset did not end within %u ms (it goes on in the kernel)",
                         timeout_ms);
                return finish(rep, r, AMDSMI_RESET_STAGE_RESET);
        }
        if (r < 0) {
                snprintf(rep->message, sizeof(rep->message), "reading %.120s failed: %s", path,
                         strerror(-r));
                for (unsigned i = 0; i < n; i++)
                        (void) gpu_back(hive[i], &rep->gpus[i], gim);
                return finish(rep, r == -EPERM ? -EACCES : r, AMDSMI_RESET_STAGE_RESET);
        }
        rep->reset_done = 1;
        if (!gim) {
                r = parse_reset_res(text, &rep->reset_res);
                if (r < 0) {
                        snprintf(rep->message, sizeof(rep->message),
                                 "%.120s: \"%.40s\" is not a reset result", path, text);
                        return finish(rep, -EBADMSG, AMDSMI_RESET_STAGE_RESET);
                }
                if (rep->reset_res != 0) {
                        for (unsigned i = 0; i < n; i++)
                                (void) gpu_back(hive[i], &rep->gpus[i], gim);
                        snprintf(rep->message, sizeof(rep->message),
                                 "the kernel's GPU recovery failed: reset_res %" PRId64 " (%s)",
                                 rep->reset_res,
                                 rep->reset_res < 0 && rep->reset_res > -4096
                                         ? strerror((int) -rep->reset_res)
                                         : "unknown");
                        return finish(rep, -EIO, AMDSMI_RESET_STAGE_RESET);
                }
        }

        /* Wait for the driver to answer and for the KFD nodes to be there again. */
        for (;;) {
                int kr = kfd_refresh(gpu->ctx);

                if (kr < 0)
                        log_debug(gpu->ctx, "KFD topology: %s", strerror(-kr));
                missing = 0;
                for (unsigned i = 0; i < n; i++) {
                        rep->gpus[i].back = gpu_back(hive[i], &rep->gpus[i], gim);
                        missing += !rep->gpus[i].back;
                }
                if (missing == 0 || now_ms() >= deadline)
                        break;
                sleep_ms(POLL_MS);
        }
        rep->wait_ms = (uint32_t) (now_ms() - returned);
        (void) kfd_read_generation(gpu->ctx, &rep->generation_after);
        if (missing > 0) {
                for (unsigned i = 0; i < n; i++)
                        if (!rep->gpus[i].back) {
                                snprintf(rep->message, sizeof(rep->message),
                                         "%u GPU%s not back within %u ms (first: %s: %s, %u of "
                                         "%u KFD nodes)",
                                         missing, missing == 1 ? " is" : "s are", timeout_ms,
                                         rep->gpus[i].bdf,
                                         rep->gpus[i].answers ? "answers" : "does not answer",
                                         rep->gpus[i].kfd_nodes_after,
                                         rep->gpus[i].kfd_nodes_before);
                                break;
                        }
                return finish(rep, -ETIMEDOUT, AMDSMI_RESET_STAGE_WAIT);
        }
        return finish(rep, 0, AMDSMI_RESET_STAGE_DONE);
}
