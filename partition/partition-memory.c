/* SPDX-License-Identifier: MIT */
/*
 * Memory partition (NPS) requests and the driver reload (spec amdgpu-sysfs §3.2, §2.3).
 *
 * A write of current_memory_partition only records a request in the kernel, for the whole
 * XGMI hive, and nothing shows it: current_memory_partition goes on showing the hardware's
 * mode until amdgpu is unbound from every GPU of the hive and bound again. So the request is
 * also recorded here, one small file per GPU under <runtime dir>/partition/, naming the sysfs
 * root it was made for. The reload unbinds and binds the hive's GPUs through
 * bus/pci/drivers/amdgpu/{unbind,bind} and waits until each is back with its KFD nodes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "partition-private.h"
#include "time-util.h"
#include "runtime-dir.h"
#include "safe-open.h"
#include "sysfs.h"

#define RELOAD_TIMEOUT_MS_DEFAULT 120000u
#define POLL_MS 20u
/* A failed bind is tried again, BIND_TRIES writes in all, waiting BIND_BACKOFF_MS, then twice
 * as long each time (100, 200, 400 ms). */
#define BIND_TRIES 4u
#define BIND_BACKOFF_MS 100u
#define RECORD_MAX 4096

/* ---- the pending record ---- */

/* FNV-1a: names records of different sysfs roots apart (the contents say which root). */
static uint64_t root_hash(const char *s) {
        uint64_t h = UINT64_C(0xcbf29ce484222325);

        for (; *s; s++) {
                h ^= (unsigned char) *s;
                h *= UINT64_C(0x100000001b3);
        }
        return h;
}

static int record_dir(char *buf, size_t size) {
        char rt[4096];
        int r, n;

        r = runtime_dir(rt, sizeof(rt));
        if (r < 0)
                return r;
        n = snprintf(buf, size, "%s/partition", rt);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

/* The record of @kind ("nps": a memory request, "unbound": a GPU a reload left without a
 * driver) of one GPU. */
static int record_path_of(struct amdsmi_gpu *gpu, const char *kind, char *buf, size_t size) {
        char dir[4096];
        int r, n;

        r = record_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        n = snprintf(buf, size, "%s/%s-%s-%016llx", dir, kind, gpu->bdf,
                     (unsigned long long) root_hash(gpu->ctx->sysfs_root));
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

static int record_path(struct amdsmi_gpu *gpu, char *buf, size_t size) {
        return record_path_of(gpu, "nps", buf, size);
}

/* Writes the record of @kind of one GPU atomically (a temporary file renamed over it), mode
 * 0644 in a directory readable by everybody whatever the umask. */
static int record_write_of(struct amdsmi_gpu *gpu, const char *kind, const char *text,
                           size_t len) {
        char dir[4096], path[4200];
        int r;

        r = record_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        r = runtime_dir_mkdir(dir);
        if (r < 0)
                return r;
        (void) chmod(dir, 0755);
        r = record_path_of(gpu, kind, path, sizeof(path));
        if (r < 0)
                return r;
        return write_file_atomic(path, text, len, 0644);
}

static void record_remove_of(struct amdsmi_gpu *gpu, const char *kind) {
        char path[4200];

        if (record_path_of(gpu, kind, path, sizeof(path)) < 0)
                return;
        if (unlink(path) < 0 && errno != ENOENT)
                log_debug(gpu->ctx, "%s: cannot remove: %s", path, strerror(errno));
}

static int record_write(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode mode) {
        _cleanup_free_ char *text = NULL;
        int len;

        len = asprintf(&text,
                       "# amdsmi: memory partition request waiting for a driver reload\n"
                       "mode %s\nbdf %s\nroot %s\n",
                       amdsmi_memory_mode_to_string(mode), gpu->bdf, gpu->ctx->sysfs_root);
        if (len < 0) {
                text = NULL;
                return -ENOMEM;
        }
        return record_write_of(gpu, "nps", text, (size_t) len);
}

static void record_remove(struct amdsmi_gpu *gpu) {
        record_remove_of(gpu, "nps");
}

/* Reads the record: 0 with the mode, -ENOENT without one (or one for another root),
 * -EBADMSG for garbage (logged). */
static int record_read(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode *ret) {
        _cleanup_close_ int fd = -EBADF;
        char path[4200], text[RECORD_MAX + 1], *save = NULL;
        enum amdsmi_memory_mode mode = AMDSMI_MEMORY_UNKNOWN;
        const char *root = NULL;
        ssize_t n;
        int r;

        r = record_path(gpu, path, sizeof(path));
        if (r < 0)
                return r;
        /* a FIFO, link or directory there: refused, never waited on (safe-open.h) */
        fd = safe_open(path, O_RDONLY, 0, 0);
        if (fd < 0) {
                char msg[4400];

                if (fd == -ELOOP || fd == -EISDIR || fd == -EBADFD)
                        log_warning(gpu->ctx, "%s", safe_open_message(path, fd, msg, sizeof(msg)));
                return fd;
        }
        n = read(fd, text, RECORD_MAX);
        if (n < 0)
                return -errno;
        text[n] = '\0';
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (line[0] == '#')
                        continue;
                if (strncmp(line, "mode ", 5) == 0) {
                        if (amdsmi_memory_mode_from_string(line + 5, &mode) < 0)
                                mode = AMDSMI_MEMORY_UNKNOWN;
                } else if (strncmp(line, "root ", 5) == 0)
                        root = line + 5;
        }
        if (mode == AMDSMI_MEMORY_UNKNOWN || !root) {
                log_warning(gpu->ctx, "%s: not a memory partition request; ignored", path);
                return -EBADMSG;
        }
        if (strcmp(root, gpu->ctx->sysfs_root) != 0) {
                log_debug(gpu->ctx, "%s: a request for %s, not %s; ignored", path, root,
                          gpu->ctx->sysfs_root);
                return -ENOENT;
        }
        *ret = mode;
        return 0;
}

_public_ int amdsmi_gpu_read_pending_memory_mode(struct amdsmi_gpu *gpu,
                                                 enum amdsmi_memory_mode *ret_mode) {
        enum amdsmi_memory_mode want, cur;
        int r;

        r = record_read(gpu, &want);
        if (r == -ENOENT || r == -EBADMSG) {
                *ret_mode = AMDSMI_MEMORY_UNKNOWN;
                return 0;
        }
        if (r < 0) {
                log_debug(gpu->ctx, "pending memory mode of %s: %s", gpu->bdf, strerror(-r));
                return r;
        }
        r = amdsmi_gpu_read_memory_mode(gpu, &cur);
        if (r == 0 && cur == want) {
                /* reached (a reload happened without us): nothing is pending any more */
                record_remove(gpu);
                *ret_mode = AMDSMI_MEMORY_UNKNOWN;
                return 0;
        }
        if (r < 0)
                log_debug(gpu->ctx, "%s: current memory mode unknown (%s): %s pending as recorded",
                          gpu->bdf, strerror(-r), amdsmi_memory_mode_to_string(want));
        *ret_mode = want;
        return 0;
}

/* ---- hives ---- */

/* Appends s to the string in buf, cut to fit. */
static void append(char *buf, size_t size, const char *s) {
        size_t len = strnlen(buf, size), n = strlen(s);

        if (len + 1 >= size)
                return;
        if (n > size - len - 1)
                n = size - len - 1;
        memcpy(buf + len, s, n);
        buf[len + n] = '\0';
}

/* The pending mode, AMDSMI_MEMORY_UNKNOWN if none or unknown. */
static enum amdsmi_memory_mode pending_of(struct amdsmi_gpu *gpu) {
        enum amdsmi_memory_mode m;

        return amdsmi_gpu_read_pending_memory_mode(gpu, &m) < 0 ? AMDSMI_MEMORY_UNKNOWN : m;
}

/* ---- the request ---- */

static int memory_plan_error(struct amdsmi_gpu *gpu, const struct amdsmi_partition_plan *p,
                             enum amdsmi_memory_mode mode, struct amdsmi_partition_change *c) {
        char avail[64] = "";
        uint32_t mask;

        if (amdsmi_gpu_read_available_memory_modes(gpu, &mask) >= 0)
                (void) amdsmi_memory_mode_mask_to_string(mask, avail, sizeof(avail));
        switch (p->reason) {
        case AMDSMI_PLAN_NOT_SUPPORTED:
                snprintf(c->message, sizeof(c->message), "%s has no memory partition support",
                         gpu->bdf);
                return -EOPNOTSUPP;
        case AMDSMI_PLAN_NOT_SWITCHABLE:
                snprintf(c->message, sizeof(c->message),
                         "%s is an SR-IOV VF: its memory mode is set on the host", gpu->bdf);
                return -EOPNOTSUPP;
        case AMDSMI_PLAN_MEMORY_NOT_CHANGEABLE:
                snprintf(c->message, sizeof(c->message),
                         "the memory mode of %s cannot be changed: it supports %s only", gpu->bdf,
                         avail[0] ? avail : amdsmi_memory_mode_to_string(p->memory_before));
                return -EOPNOTSUPP;
        case AMDSMI_PLAN_MEMORY_NOT_SUPPORTED:
                snprintf(c->message, sizeof(c->message),
                         "%s is not an available memory mode of %s (available: %s)",
                         amdsmi_memory_mode_to_string(mode), gpu->bdf, avail);
                return -EINVAL;
        default:
                /* compute-side reasons do not matter: the reload picks the compute mode */
                return 0;
        }
}

_public_ int amdsmi_gpu_set_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode mode,
                                        uint64_t flags,
                                        struct amdsmi_partition_change *ret_change) {
        struct amdsmi_partition_change *c = ret_change;
        struct amdsmi_partition_plan plan = { .size = sizeof(plan) };
        struct amdsmi_gpu *hive[AMDSMI_PLAN_MAX_HIVE];
        enum amdsmi_memory_mode pending = AMDSMI_MEMORY_UNKNOWN;
        char path[256];
        unsigned n_hive;
        int r;

        r = change_init(c);
        if (r < 0)
                return r;
        if (mode == AMDSMI_MEMORY_UNKNOWN || amdsmi_memory_mode_to_string(mode) == NULL ||
            (flags & ~(AMDSMI_CHANGE_DRY_RUN | AMDSMI_CHANGE_FORCE))) {
                snprintf(c->message, sizeof(c->message), "invalid memory mode or flags");
                return change_finish(c, -EINVAL, AMDSMI_STAGE_PREFLIGHT);
        }
        if (gpu_is_gim_host(gpu)) {
                r = gim_set_memory_mode(gpu, mode, flags, c);
                return change_finish(c, r < 0 ? r : 0, c->stage);
        }

        r = amdsmi_gpu_plan_partition(gpu, AMDSMI_COMPUTE_UNKNOWN, mode, 0, &plan);
        if (r < 0) {
                snprintf(c->message, sizeof(c->message),
                         "cannot read the partition state of %s: %s", gpu->bdf, strerror(-r));
                return change_finish(c, r == -EPERM ? -EBUSY : r, AMDSMI_STAGE_PREFLIGHT);
        }
        c->compute_before = c->compute_after = plan.compute_before;
        c->memory_before = c->memory_after = plan.memory_before;
        c->partitions_before = c->partitions_after = plan.partitions_before;
        (void) kfd_read_generation(gpu->ctx, &c->generation_before);
        c->generation_after = c->generation_before;
        pending = pending_of(gpu);
        c->memory_pending = pending;
        r = memory_plan_error(gpu, &plan, mode, c);
        if (r < 0)
                return change_finish(c, r, AMDSMI_STAGE_PREFLIGHT);

        n_hive = partition_hive_members(gpu, hive, AMDSMI_PLAN_MAX_HIVE);
        if (mode == plan.memory_before) {
                if (pending != AMDSMI_MEMORY_UNKNOWN && pending != mode) {
                        /* The kernel skips a request of the current mode and keeps the one it
                         * has: the record stays true. */
                        snprintf(c->message, sizeof(c->message),
                                 "%s is the current mode; the %s request stays pending in the "
                                 "driver (it cannot be withdrawn): a driver reload applies it",
                                 amdsmi_memory_mode_to_string(mode),
                                 amdsmi_memory_mode_to_string(pending));
                        return change_finish(c, 0, AMDSMI_STAGE_DONE);
                }
                if (!(flags & AMDSMI_CHANGE_DRY_RUN))
                        for (unsigned i = 0; i < n_hive; i++)
                                record_remove(hive[i]);
                c->memory_pending = AMDSMI_MEMORY_UNKNOWN;
                return change_finish(c, 0, AMDSMI_STAGE_DONE);
        }
        if (flags & AMDSMI_CHANGE_DRY_RUN) {
                c->reload_required = 1;
                snprintf(c->message, sizeof(c->message),
                         "dry run: %s would be requested for %u GPU%s, applied by a driver reload",
                         amdsmi_memory_mode_to_string(mode), plan.n_affected_bdfs,
                         plan.n_affected_bdfs == 1 ? "" : "s");
                change_finish(c, 1, AMDSMI_STAGE_DONE);
                return 1;
        }

        snprintf(path, sizeof(path), "%s/current_memory_partition", gpu->syspath);
        r = sysfs_write_string(gpu->ctx, path, amdsmi_memory_mode_to_string(mode));
        if (r < 0) {
                if (r == -EPERM) {
                        r = -EBUSY;
                        snprintf(c->message, sizeof(c->message),
                                 "a reset of %s is in progress: try again", gpu->bdf);
                } else if (r == -EACCES)
                        snprintf(c->message, sizeof(c->message),
                                 "changing the memory mode needs root");
                else
                        snprintf(c->message, sizeof(c->message), "the driver refused %s: %s",
                                 amdsmi_memory_mode_to_string(mode), strerror(-r));
                return change_finish(c, r, AMDSMI_STAGE_WRITE);
        }

        /* The kernel keeps the request for the whole hive: so does the record. */
        for (unsigned i = 0; i < n_hive; i++) {
                r = record_write(hive[i], mode);
                if (r < 0)
                        log_warning(gpu->ctx,
                                    "cannot record the %s request of %s under the runtime "
                                    "directory: %s",
                                    amdsmi_memory_mode_to_string(mode), hive[i]->bdf, strerror(-r));
        }
        c->memory_pending = mode;
        c->reload_required = 1;
        if (plan.n_affected_bdfs > 1) {
                snprintf(c->message, sizeof(c->message),
                         "%s requested for all %u GPUs of the XGMI hive (",
                         amdsmi_memory_mode_to_string(mode), plan.n_affected_bdfs);
                for (unsigned i = 0; i < plan.n_affected_bdfs; i++) {
                        if (i > 0)
                                append(c->message, sizeof(c->message), " ");
                        append(c->message, sizeof(c->message), plan.affected_bdfs[i]);
                }
                append(c->message, sizeof(c->message),
                       "): amdsmi reset --reload-driver applies it");
        } else
                snprintf(c->message, sizeof(c->message),
                         "%s requested: amdsmi reset --reload-driver applies it",
                         amdsmi_memory_mode_to_string(mode));
        change_finish(c, 1, AMDSMI_STAGE_DONE);
        return 1;
}

/* ---- the driver reload ---- */

static int driver_of(struct amdsmi_gpu *gpu, char **ret) {
        char path[256];

        snprintf(path, sizeof(path), "%s/driver", gpu->syspath);
        return sysfs_readlink_basename(gpu->ctx, path, ret);
}

static bool bound_to_amdgpu(struct amdsmi_gpu *gpu) {
        _cleanup_free_ char *drv = NULL;

        return driver_of(gpu, &drv) == 0 && strcmp(drv, "amdgpu") == 0;
}

static bool has_no_driver(struct amdsmi_gpu *gpu) {
        _cleanup_free_ char *drv = NULL;

        return driver_of(gpu, &drv) == -ENOENT;
}

/* ---- the record of a GPU a reload left without a driver ---- */

/* Written before a reload unbinds a GPU from amdgpu (so that a process killed between the
 * unbind and the bind leaves it too), rewritten with the error when the bind failed, removed
 * when amdgpu is bound to it again: it tells amdsmid which driverless GPUs are amdsmi's doing
 * (and so are to be bound again), apart from those an administrator left unbound. */
static int unbound_record_write(struct amdsmi_gpu *gpu, int error) {
        _cleanup_free_ char *text = NULL;
        int len;

        len = asprintf(&text,
                       "# amdsmi: a driver reload unbinds this GPU; removed once it is bound "
                       "again\nbdf %s\nroot %s\nerror %d\n",
                       gpu->bdf, gpu->ctx->sysfs_root, -error);
        if (len < 0) {
                text = NULL;
                return -ENOMEM;
        }
        return record_write_of(gpu, "unbound", text, (size_t) len);
}

static void unbound_record_remove(struct amdsmi_gpu *gpu) {
        record_remove_of(gpu, "unbound");
}

_public_ int amdsmi_gpu_is_left_unbound(struct amdsmi_gpu *gpu) {
        _cleanup_close_ int fd = -EBADF;
        char path[4200], text[RECORD_MAX + 1], want[4200];
        ssize_t n;
        int r;

        r = record_path_of(gpu, "unbound", path, sizeof(path));
        if (r < 0)
                return r;
        /* amdsmid acts on it: a file of root's (or ours) that nobody else can write, never
         * a FIFO, link or directory (safe-open.h) */
        fd = safe_open(path, O_RDONLY, 0, SAFE_OPEN_TRUSTED);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        n = read(fd, text, RECORD_MAX);
        if (n < 0)
                return -errno;
        text[n] = '\0';
        snprintf(want, sizeof(want), "\nroot %s\n", gpu->ctx->sysfs_root);
        if (!strstr(text, want))
                return 0; /* another root's, or garbage */
        if (!has_no_driver(gpu)) {
                /* bound again meanwhile (by hand, or by a driver): nothing left to do */
                unbound_record_remove(gpu);
                return 0;
        }
        return 1;
}

static int xcc_count(struct amdsmi_gpu *gpu) {
        size_t n = amdsmi_gpu_get_partition_count(gpu);
        unsigned xcc = 0;

        for (size_t i = 0; i < n; i++)
                xcc += amdsmi_partition_get_xcc_count(amdsmi_gpu_get_partition(gpu, i));
        return (int) xcc;
}

/* The XCC count of a GPU that had no KFD nodes before the reload (no driver): the one whose
 * mode set is the hardware's, 0 if unknown (then any number of nodes counts). */
static unsigned xcc_from_modes(struct amdsmi_gpu *gpu) {
        static const unsigned counts[] = { 8, 6, 4, 2 };
        uint32_t mask;

        if (amdsmi_gpu_get_supported_compute_modes(gpu, &mask) < 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(counts); i++)
                if (partition_supported_by_xcc(counts[i]) == mask)
                        return counts[i];
        return 0;
}

/* Whether a GPU is back: bound to amdgpu, modes readable, and its KFD nodes (after the
 * caller re-read the topology) as many as its compute mode has partitions. */
static bool gpu_is_back(struct amdsmi_gpu *gpu, unsigned xcc, struct amdsmi_gpu_modes *m) {
        enum amdsmi_compute_mode cm;
        enum amdsmi_memory_mode mm;
        unsigned want, have;

        if (!bound_to_amdgpu(gpu))
                return false;
        if (amdsmi_gpu_read_memory_mode(gpu, &mm) < 0 || amdsmi_gpu_read_compute_mode(gpu, &cm) < 0)
                return false;
        if (xcc == 0)
                xcc = xcc_from_modes(gpu);
        have = (unsigned) gpu->n_partitions;
        want = xcc > 0 ? partition_count(cm, xcc) : cm == AMDSMI_COMPUTE_SPX ? 1 : 0;
        if (have == 0 || (want > 0 && have != want))
                return false;
        m->compute = cm;
        m->memory = mm;
        m->partitions = have;
        return true;
}

/* Re-reads the KFD topology into the context's GPU objects when generation_id moved. */
static void reread_topology(struct amdsmi_ctx *ctx) {
        int r = kfd_refresh(ctx);

        if (r < 0)
                log_debug(ctx, "KFD topology: %s", strerror(-r));
}

static int bind_write(struct amdsmi_gpu *gpu, const char *op) {
        char path[64];
        int r;

        snprintf(path, sizeof(path), "bus/pci/drivers/amdgpu/%s", op);
        r = sysfs_write_string(gpu->ctx, path, gpu->bdf);
        if (r < 0)
                log_debug(gpu->ctx, "%s/%s %s: %s", gpu->ctx->sysfs_root, path, gpu->bdf,
                          strerror(-r));
        return r;
}

/* A failed probe that may succeed when tried again: the device was busy, its firmware did not
 * answer in time. Not ENODEV (the function went away, or amdgpu does not match it), EACCES or
 * EPERM (not root), EINVAL (a malformed address). */
static bool bind_retryable(int r) {
        return r == -EIO || r == -EBUSY || r == -EAGAIN || r == -ETIMEDOUT || r == -EINTR ||
               r == -ENOMEM;
}

/* Binds amdgpu to a GPU, BIND_TRIES times at most, waiting 100, 200, 400 ms between the
 * tries. @return 0 (also when the GPU turns out bound after a failed write) or the last
 * error; the number of writes in *ret_tries. */
static int bind_amdgpu(struct amdsmi_gpu *gpu, unsigned *ret_tries) {
        unsigned delay = BIND_BACKOFF_MS, tries = 0;
        int r;

        for (;;) {
                r = bind_write(gpu, "bind");
                tries++;
                if (r >= 0 || bound_to_amdgpu(gpu)) {
                        r = 0;
                        break;
                }
                if (tries >= BIND_TRIES || !bind_retryable(r))
                        break;
                log_info(gpu->ctx, "binding amdgpu to %s failed (%s): trying again in %u ms",
                         gpu->bdf, strerror(-r), delay);
                sleep_ms(delay);
                delay *= 2;
        }
        if (r == 0)
                unbound_record_remove(gpu);
        *ret_tries = tries;
        return r;
}

/* After a reload: records the GPUs it left without a driver (their bind failed) and says so
 * in the report, naming the first and how to recover. @return how many there are. */
static unsigned driverless_message(struct amdsmi_partition_change *c, struct amdsmi_gpu **hive,
                                   unsigned n, const bool *bind_failed, const unsigned *tries,
                                   const char *prefix) {
        unsigned count = 0, first = 0;
        char what[128], full[8192];
        int r;

        for (unsigned i = 0; i < n; i++) {
                if (!bind_failed[i] || !has_no_driver(hive[i]))
                        continue;
                if (count++ == 0)
                        first = i;
                r = unbound_record_write(hive[i], c->gpus[i].error);
                if (r < 0)
                        log_warning(hive[i]->ctx,
                                    "cannot record that %s was left without a driver: %s",
                                    hive[i]->bdf, strerror(-r));
        }
        if (count == 0)
                return 0;
        if (count == 1)
                snprintf(what, sizeof(what), "%s has no driver now", hive[first]->bdf);
        else
                snprintf(what, sizeof(what), "%u GPUs have no driver now (first: %s)", count,
                         hive[first]->bdf);
        /* composed at full length, then cut to the report's message */
        snprintf(full, sizeof(full),
                 "%s%s: binding amdgpu failed %u time%s (%s); recover with 'amdsmi reset "
                 "--reload-driver -g %s' or 'echo %s > %s/bus/pci/drivers/amdgpu/bind'",
                 prefix, what, tries[first], tries[first] == 1 ? "" : "s",
                 strerror(-c->gpus[first].error), hive[first]->bdf, hive[first]->bdf,
                 hive[first]->ctx->sysfs_root);
        c->message[0] = '\0';
        append(c->message, sizeof(c->message), full);
        return count;
}

/* Waits until every GPU of mask is back (or the deadline); returns how many are not. */
static unsigned wait_back(struct amdsmi_gpu **hive, unsigned n, const unsigned *xcc, bool *todo,
                          struct amdsmi_gpu_modes *modes, uint64_t deadline) {
        unsigned missing;

        for (;;) {
                reread_topology(hive[0]->ctx);
                missing = 0;
                for (unsigned i = 0; i < n; i++) {
                        if (!todo[i])
                                continue;
                        if (gpu_is_back(hive[i], xcc[i], &modes[i]))
                                todo[i] = false;
                        else
                                missing++;
                }
                if (missing == 0 || now_ms() >= deadline)
                        return missing;
                sleep_ms(POLL_MS);
        }
}

/* A GPU that did not come back: its modes are unknown. */
static void gpu_failed(struct amdsmi_gpu_modes *m, int error) {
        m->error = error;
        m->compute = AMDSMI_COMPUTE_UNKNOWN;
        m->memory = AMDSMI_MEMORY_UNKNOWN;
        m->partitions = 0;
}

static void blockers_message(struct amdsmi_partition_change *c) {
        snprintf(c->message, sizeof(c->message),
                 "%u process%s use%s the hive's GPUs through KFD:", c->n_blockers,
                 c->n_blockers == 1 ? "" : "es", c->n_blockers == 1 ? "s" : "");
        for (unsigned i = 0; i < c->n_blockers && i < AMDSMI_CHANGE_MAX_PROCESSES; i++) {
                char one[80];

                snprintf(one, sizeof(one), " %d (%s) on %s", c->blockers[i].pid,
                         c->blockers[i].comm[0] ? c->blockers[i].comm : "?", c->blockers[i].bdf);
                append(c->message, sizeof(c->message), one);
        }
        append(c->message, sizeof(c->message), ": stop them first");
}

_public_ int amdsmi_gpu_reload_driver(struct amdsmi_gpu *gpu, uint64_t flags, unsigned timeout_ms,
                                      struct amdsmi_partition_change *ret_change) {
        struct amdsmi_partition_change *c = ret_change;
        struct amdsmi_gpu *hive[AMDSMI_PLAN_MAX_HIVE];
        struct amdsmi_gpu_modes modes[AMDSMI_PLAN_MAX_HIVE] = {};
        enum amdsmi_memory_mode pending[AMDSMI_PLAN_MAX_HIVE] = {};
        unsigned xcc[AMDSMI_PLAN_MAX_HIVE] = {}, tries[AMDSMI_PLAN_MAX_HIVE] = {};
        unsigned n, unbound = 0, missing, n_bound = 0;
        bool todo[AMDSMI_PLAN_MAX_HIVE] = {}, was_bound[AMDSMI_PLAN_MAX_HIVE] = {};
        bool bind_failed[AMDSMI_PLAN_MAX_HIVE] = {};
        int r, bind_error = 0;
        uint64_t start, deadline;
        unsigned blockers = 0;
        _cleanup_free_ char *drv = NULL;

        r = change_init(c);
        if (r < 0)
                return r;
        if (flags & ~(AMDSMI_CHANGE_DRY_RUN | AMDSMI_CHANGE_FORCE)) {
                snprintf(c->message, sizeof(c->message), "invalid flags");
                return change_finish(c, -EINVAL, AMDSMI_STAGE_PREFLIGHT);
        }
        if (gpu_is_gim_host(gpu)) {
                snprintf(c->message, sizeof(c->message),
                         "%s is a gim host's PF: gim applies partition changes at once, there "
                         "is no amdgpu to reload",
                         gpu->bdf);
                return change_finish(c, -EOPNOTSUPP, AMDSMI_STAGE_PREFLIGHT);
        }
        if (amdsmi_gpu_is_vf(gpu)) {
                snprintf(c->message, sizeof(c->message),
                         "%s is an SR-IOV VF: its memory mode is the host's", gpu->bdf);
                return change_finish(c, -EOPNOTSUPP, AMDSMI_STAGE_PREFLIGHT);
        }
        if (timeout_ms == 0)
                timeout_ms = RELOAD_TIMEOUT_MS_DEFAULT;

        /* A GPU without a driver (a reload that could not bind it again, or an admin's
         * unbind) is only bound; one that another driver holds is not amdgpu's to reload. */
        n = partition_hive_members(gpu, hive, AMDSMI_PLAN_MAX_HIVE);
        for (unsigned i = 0; i < n; i++) {
                free(drv);
                drv = NULL;
                r = driver_of(hive[i], &drv);
                if (r < 0 && r != -ENOENT) {
                        snprintf(c->message, sizeof(c->message),
                                 "cannot tell which driver %s is bound to: %s", hive[i]->bdf,
                                 strerror(-r));
                        return change_finish(c, r, AMDSMI_STAGE_PREFLIGHT);
                }
                if (r == 0 && strcmp(drv, "amdgpu") != 0) {
                        snprintf(c->message, sizeof(c->message),
                                 "%s is bound to %s, not amdgpu: cannot reload its driver "
                                 "(unbind %s first to hand it to amdgpu)",
                                 hive[i]->bdf, drv, drv);
                        return change_finish(c, -EOPNOTSUPP, AMDSMI_STAGE_PREFLIGHT);
                }
                was_bound[i] = r == 0;
                n_bound += was_bound[i];
                xcc[i] = (unsigned) xcc_count(hive[i]);
                pending[i] = pending_of(hive[i]);
                /* the modes now; replaced by what each GPU comes back in */
                snprintf(c->gpus[i].bdf, sizeof(c->gpus[i].bdf), "%s", hive[i]->bdf);
                if (amdsmi_gpu_read_compute_mode(hive[i], &c->gpus[i].compute) < 0)
                        c->gpus[i].compute = AMDSMI_COMPUTE_UNKNOWN;
                if (amdsmi_gpu_read_memory_mode(hive[i], &c->gpus[i].memory) < 0)
                        c->gpus[i].memory = AMDSMI_MEMORY_UNKNOWN;
                c->gpus[i].partitions = (unsigned) amdsmi_gpu_get_partition_count(hive[i]);
                snprintf(modes[i].bdf, sizeof(modes[i].bdf), "%s", hive[i]->bdf);
        }
        c->n_gpus = n;
        (void) amdsmi_gpu_read_compute_mode(gpu, &c->compute_before);
        (void) amdsmi_gpu_read_memory_mode(gpu, &c->memory_before);
        c->partitions_before = (unsigned) amdsmi_gpu_get_partition_count(gpu);
        c->memory_pending = pending[0];
        for (unsigned i = 0; i < n; i++)
                if (hive[i] == gpu)
                        c->memory_pending = pending[i];
        (void) kfd_read_generation(gpu->ctx, &c->generation_before);

        /* Preflight: a reload tears KFD down under its users. */
        for (unsigned i = 0; i < n; i++) {
                r = change_add_blockers(c, hive[i], false);
                if (r < 0) {
                        snprintf(c->message, sizeof(c->message),
                                 "cannot tell which processes use %s through KFD: %s", hive[i]->bdf,
                                 strerror(-r));
                        return change_finish(c, r, AMDSMI_STAGE_PREFLIGHT);
                }
                blockers += (unsigned) r;
        }
        if (blockers > 0) {
                blockers_message(c);
                return change_finish(c, -EBUSY, AMDSMI_STAGE_PREFLIGHT);
        }
        if (flags & AMDSMI_CHANGE_DRY_RUN) {
                if (n_bound == 0)
                        snprintf(c->message, sizeof(c->message),
                                 "dry run: %s has no driver: amdgpu would be bound to it",
                                 gpu->bdf);
                else
                        snprintf(c->message, sizeof(c->message),
                                 "dry run: amdgpu would be unbound from %u GPU%s and bound "
                                 "again%s%s",
                                 n_bound, n_bound == 1 ? "" : "s",
                                 c->memory_pending != AMDSMI_MEMORY_UNKNOWN ? ", applying " : "",
                                 c->memory_pending != AMDSMI_MEMORY_UNKNOWN
                                         ? amdsmi_memory_mode_to_string(c->memory_pending)
                                         : "");
                return change_finish(c, 0, AMDSMI_STAGE_DONE);
        }

        /* Recorded before anything is unbound: a crash between the unbind and the bind must
         * leave GPUs amdsmid knows to bind again. Without the records, nothing is changed. */
        for (unsigned i = 0; i < n; i++) {
                if (!was_bound[i])
                        continue;
                r = unbound_record_write(hive[i], 0);
                if (r < 0) {
                        for (unsigned k = 0; k < i; k++)
                                if (was_bound[k])
                                        unbound_record_remove(hive[k]);
                        snprintf(c->message, sizeof(c->message),
                                 "cannot record the reload of %s in the runtime directory "
                                 "(%s): nothing was changed",
                                 hive[i]->bdf, strerror(-r));
                        return change_finish(c, r, AMDSMI_STAGE_PREFLIGHT);
                }
        }
        start = now_ms();
        deadline = start + timeout_ms;
        for (unbound = 0; unbound < n; unbound++) {
                if (!was_bound[unbound])
                        continue;
                r = bind_write(hive[unbound], "unbind");
                if (r < 0)
                        break;
        }
        if (unbound < n) {
                /* Put the ones already unbound back; the request stays with the driver. */
                int failed = r;
                char prefix[128];

                for (unsigned i = unbound; i < n; i++)
                        if (was_bound[i] && !has_no_driver(hive[i]))
                                unbound_record_remove(hive[i]); /* never unbound */
                c->gpus[unbound].error = failed;
                for (unsigned i = 0; i < unbound; i++) {
                        if (!was_bound[i])
                                continue;
                        r = bind_amdgpu(hive[i], &tries[i]);
                        if (r < 0) {
                                gpu_failed(&c->gpus[i], r);
                                bind_failed[i] = true;
                        } else
                                todo[i] = true;
                }
                missing = wait_back(hive, n, xcc, todo, modes, deadline);
                for (unsigned i = 0; i < n; i++) {
                        if (i >= unbound || !was_bound[i] || c->gpus[i].error < 0)
                                continue;
                        if (todo[i]) {
                                gpu_failed(&c->gpus[i], -ETIMEDOUT);
                                continue;
                        }
                        c->gpus[i].compute = modes[i].compute;
                        c->gpus[i].memory = modes[i].memory;
                        c->gpus[i].partitions = modes[i].partitions;
                }
                snprintf(c->message, sizeof(c->message),
                         "cannot unbind %s from amdgpu (%s): %u GPU%s bound again%s",
                         hive[unbound]->bdf, strerror(-failed), unbound, unbound == 1 ? "" : "s",
                         missing ? ", not all came back" : "");
                snprintf(prefix, sizeof(prefix), "cannot unbind %s from amdgpu (%s); ",
                         hive[unbound]->bdf, strerror(-failed));
                (void) driverless_message(c, hive, n, bind_failed, tries, prefix);
                c->elapsed_ms = (uint32_t) (now_ms() - start);
                (void) kfd_read_generation(gpu->ctx, &c->generation_after);
                return change_finish(c, failed, AMDSMI_STAGE_UNBIND);
        }

        /* Every GPU is unbound: the driver has handed the request to the firmware. */
        for (unsigned i = 0; i < n; i++) {
                r = bind_amdgpu(hive[i], &tries[i]);
                if (r < 0) {
                        gpu_failed(&c->gpus[i], r);
                        bind_failed[i] = true;
                        if (bind_error == 0)
                                bind_error = r;
                } else
                        todo[i] = true;
        }
        missing = wait_back(hive, n, xcc, todo, modes, deadline);
        c->elapsed_ms = (uint32_t) (now_ms() - start);
        (void) kfd_read_generation(gpu->ctx, &c->generation_after);
        for (unsigned i = 0; i < n; i++) {
                if (c->gpus[i].error < 0)
                        continue;
                if (todo[i]) {
                        gpu_failed(&c->gpus[i], -ETIMEDOUT);
                        continue;
                }
                c->gpus[i].compute = modes[i].compute;
                c->gpus[i].memory = modes[i].memory;
                c->gpus[i].partitions = modes[i].partitions;
                if (hive[i] == gpu) {
                        c->compute_after = modes[i].compute;
                        c->memory_after = modes[i].memory;
                        c->partitions_after = modes[i].partitions;
                }
        }
        /* The driver consumed any request at unbind: the records are done either way. */
        for (unsigned i = 0; i < n; i++)
                record_remove(hive[i]);
        c->changed = c->compute_after != c->compute_before || c->memory_after != c->memory_before;
        c->memory_pending = AMDSMI_MEMORY_UNKNOWN;

        if (bind_error < 0) {
                if (driverless_message(c, hive, n, bind_failed, tries, "") == 0)
                        for (unsigned i = 0; i < n; i++)
                                if (bind_failed[i]) {
                                        snprintf(c->message, sizeof(c->message),
                                                 "cannot bind %s to amdgpu again (%s)",
                                                 hive[i]->bdf, strerror(-c->gpus[i].error));
                                        break;
                                }
                return change_finish(c, bind_error, AMDSMI_STAGE_BIND);
        }
        if (missing > 0) {
                for (unsigned i = 0; i < n; i++)
                        if (c->gpus[i].error == -ETIMEDOUT) {
                                snprintf(c->message, sizeof(c->message),
                                         "%u GPU%s not back within %u ms (first: %s): see the "
                                         "kernel log",
                                         missing, missing == 1 ? " is" : "s are", timeout_ms,
                                         hive[i]->bdf);
                                break;
                        }
                return change_finish(c, -ETIMEDOUT, AMDSMI_STAGE_SETTLE);
        }
        for (unsigned i = 0; i < n; i++)
                if (pending[i] != AMDSMI_MEMORY_UNKNOWN && c->gpus[i].memory != pending[i]) {
                        snprintf(c->message, sizeof(c->message),
                                 "the firmware did not apply %s: %s came back in %s (see the "
                                 "kernel log)",
                                 amdsmi_memory_mode_to_string(pending[i]), hive[i]->bdf,
                                 amdsmi_memory_mode_to_string(c->gpus[i].memory));
                        break;
                }
        return change_finish(c, 0, AMDSMI_STAGE_DONE);
}
