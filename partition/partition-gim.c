/* SPDX-License-Identifier: MIT */
/*
 * Partitions on a gim virtualization host (spec amdgpu-sysfs §7.3). The PF is bound to gim,
 * which has no amdgpu files: the modes are read from gim's PF files (root-only, so a reader
 * that is not root gets -EACCES) and changed by writing an accelerator profile index or an NPS
 * mode. A change applies at once: gim tears every VF of the PF down and enables one per new
 * partition. gim's stores "succeed" also when the firmware refuses, so every write is read
 * back.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "parse-util.h"
#include "partition-private.h"
#include "time-util.h"
#include "sysfs.h"

#define CBIT(m) AMDSMI_COMPUTE_MODE_BIT(m)
#define MBIT(m) AMDSMI_MEMORY_MODE_BIT(m)
#define NOTE(n) (1u << (unsigned) (n))

/* How long the VFs may take to come back after a change (bounded, not a timed promise). */
#define GIM_VF_WAIT_MS 5000u
#define GIM_POLL_MS 20u

struct gim_profile {
        unsigned index;
        enum amdsmi_compute_mode type;
        unsigned partitions;
        uint32_t memory_caps; /* NPS modes the profile works with */
};

#define GIM_MAX_PROFILES 16

struct gim_profiles {
        struct gim_profile p[GIM_MAX_PROFILES];
        unsigned n;
};

static int gim_read(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size) {
        int r = gpu_read_partition_attr(gpu, attr, buf, size);

        if (r == -EACCES)
                log_debug(gpu->ctx, "%s/%s/%s: readable by root only", gpu->ctx->sysfs_root,
                          gpu->syspath, attr);
        return r;
}

static int bad_file(struct amdsmi_gpu *gpu, const char *attr, const char *what) {
        log_warning(gpu->ctx, "%s/%s/%s: unexpected contents (%s)", gpu->ctx->sysfs_root,
                    gpu->syspath, attr, what);
        return -EBADMSG;
}

/* "NPS1 NPS2 " (memory_partition_config, profile memory_caps): one mode per word. */
static int parse_nps_word(const char *w, enum amdsmi_memory_mode *ret) {
        enum amdsmi_memory_mode m;

        if (strncasecmp(w, "NPS", 3) != 0 || amdsmi_memory_mode_from_string(w, &m) < 0 ||
            m == AMDSMI_MEMORY_UNKNOWN)
                return -EBADMSG;
        *ret = m;
        return 0;
}

/* Splits a line into words at blanks, in place. Returns the count (at most max). */
static unsigned split_words(char *line, char **words, unsigned max) {
        char *save = NULL;
        unsigned n = 0;

        for (char *tok = strtok_r(line, " \t", &save); tok && n < max;
             tok = strtok_r(NULL, " \t", &save))
                words[n++] = tok;
        return n;
}

static int read_memory_config(struct amdsmi_gpu *gpu, uint32_t *ret_mask) {
        char buf[256], *words[16];
        uint32_t mask = 0;
        unsigned n;
        int r;

        r = gim_read(gpu, "memory_partition_config", buf, sizeof(buf));
        if (r < 0)
                return r;
        n = split_words(buf, words, ELEMENTSOF(words));
        for (unsigned i = 0; i < n; i++) {
                enum amdsmi_memory_mode m;

                if (parse_nps_word(words[i], &m) < 0)
                        return bad_file(gpu, "memory_partition_config", "not an NPS mode");
                mask |= MBIT(m);
        }
        if (mask == 0)
                return bad_file(gpu, "memory_partition_config", "no NPS mode");
        *ret_mask = mask;
        return 0;
}

/*
 * accelerator_partition_profile_config: a "resource_profiles:" table, then "profiles:" with a
 * header line (profile_index profile_type num_of_partitions [memory_caps] num_of_resources
 * resource_index) and one line per profile. The columns are blank-padded and memory_caps has
 * blanks of its own ("NPS1 NPS4"), so a row is read as: index, type, partitions, then every
 * NPSn word. Without a memory_caps column, the kernel's compatible sets stand in (§2.3).
 */
static int read_profiles(struct amdsmi_gpu *gpu, struct gim_profiles *ret) {
        static const char attr[] = "accelerator_partition_profile_config";
        char buf[SYSFS_TEXT_MAX + 1], *save = NULL;
        struct gim_profiles ps = {};
        bool in_table = false, has_caps = false;
        uint32_t all_nps = 0;
        int r;

        r = gim_read(gpu, attr, buf, sizeof(buf));
        if (r < 0)
                return r;
        for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *words[24];
                unsigned n, i, v;
                struct gim_profile p = {};

                n = split_words(line, words, ELEMENTSOF(words));
                if (n == 0)
                        continue;
                if (strcmp(words[0], "profile_index") == 0) {
                        in_table = true;
                        has_caps = false;
                        for (i = 1; i < n; i++)
                                has_caps = has_caps || strcmp(words[i], "memory_caps") == 0;
                        continue;
                }
                if (words[0][strlen(words[0]) - 1] == ':') { /* "resource_profiles:" */
                        in_table = false;
                        continue;
                }
                if (!in_table)
                        continue;
                if (n < 3 || parse_u32(words[0], 10, &p.index) < 0 ||
                    amdsmi_compute_mode_from_string(words[1], &p.type) < 0 ||
                    p.type == AMDSMI_COMPUTE_UNKNOWN || parse_u32(words[2], 10, &v) < 0 || v == 0 ||
                    v > AMDSMI_PLAN_MAX_PARTITIONS)
                        return bad_file(gpu, attr, "a profile line that does not parse");
                p.partitions = v;
                for (i = 3; has_caps && i < n && strncasecmp(words[i], "NPS", 3) == 0; i++) {
                        enum amdsmi_memory_mode m;

                        if (parse_nps_word(words[i], &m) < 0)
                                return bad_file(gpu, attr, "an unknown NPS mode");
                        p.memory_caps |= MBIT(m);
                }
                if (ps.n >= GIM_MAX_PROFILES)
                        return bad_file(gpu, attr, "too many profiles");
                ps.p[ps.n++] = p;
        }
        if (ps.n == 0)
                return bad_file(gpu, attr, "no profile");
        if (!has_caps) {
                unsigned xcc = 0;

                r = read_memory_config(gpu, &all_nps);
                if (r < 0)
                        return r;
                for (unsigned i = 0; i < ps.n; i++)
                        if (ps.p[i].type == AMDSMI_COMPUTE_CPX)
                                xcc = ps.p[i].partitions;
                for (unsigned i = 0; i < ps.n; i++)
                        for (int m = AMDSMI_MEMORY_NPS1; m <= AMDSMI_MEMORY_NPS8; m++)
                                if ((all_nps & MBIT(m)) &&
                                    (partition_compatible(AMDSMI_RULES_NPS_SETS, xcc ? xcc : 8,
                                                          false, false,
                                                          (enum amdsmi_memory_mode) m) &
                                     CBIT(ps.p[i].type)))
                                        ps.p[i].memory_caps |= MBIT(m);
        }
        *ret = ps;
        return 0;
}

static const struct gim_profile *find_profile(const struct gim_profiles *ps,
                                              enum amdsmi_compute_mode mode) {
        for (unsigned i = 0; i < ps->n; i++)
                if (ps->p[i].type == mode)
                        return &ps->p[i];
        return NULL;
}

/* The profiles valid under an NPS mode. */
static uint32_t profiles_under(const struct gim_profiles *ps, enum amdsmi_memory_mode memory) {
        uint32_t mask = 0;

        for (unsigned i = 0; i < ps->n; i++)
                if (ps->p[i].memory_caps & MBIT(memory))
                        mask |= CBIT(ps->p[i].type);
        return mask;
}

int gim_read_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode *ret) {
        enum amdsmi_compute_mode m;
        char buf[32];
        int r;

        r = gim_read(gpu, "spatial_partition_mode", buf, sizeof(buf));
        if (r < 0)
                return r;
        if (amdsmi_compute_mode_from_string(buf, &m) < 0)
                return bad_file(gpu, "spatial_partition_mode", "not a compute mode");
        *ret = m;
        return 0;
}

int gim_read_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode *ret) {
        static const char key[] = "memory_partition_mode:";
        char buf[SYSFS_TEXT_MAX + 1], word[16];
        enum amdsmi_memory_mode m;
        const char *p;
        size_t len;
        int r;

        r = gim_read(gpu, "memory_partition_mode", buf, sizeof(buf));
        if (r < 0)
                return r;
        /* "memory_partition_mode: NPS1\nnuma_count: 1\nNUMA0 ..." */
        if (strncmp(buf, key, strlen(key)) != 0)
                return bad_file(gpu, "memory_partition_mode", "no memory_partition_mode: line");
        p = buf + strlen(key);
        p += strspn(p, " \t");
        len = strcspn(p, " \t\n");
        if (len == 0 || len >= sizeof(word))
                return bad_file(gpu, "memory_partition_mode", "no mode");
        memcpy(word, p, len);
        word[len] = '\0';
        if (strcmp(word, "UNKNOWN") == 0) {
                *ret = AMDSMI_MEMORY_UNKNOWN;
                return 0;
        }
        if (parse_nps_word(word, &m) < 0)
                return bad_file(gpu, "memory_partition_mode", "not an NPS mode");
        *ret = m;
        return 0;
}

int gim_supported_compute_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask) {
        struct gim_profiles ps;
        uint32_t mask = 0;
        int r;

        r = read_profiles(gpu, &ps);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < ps.n; i++)
                mask |= CBIT(ps.p[i].type);
        *ret_mask = mask;
        return 0;
}

int gim_available_compute_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask) {
        enum amdsmi_memory_mode cur;
        struct gim_profiles ps;
        int r;

        r = gim_read_memory_mode(gpu, &cur);
        if (r < 0)
                return r;
        r = read_profiles(gpu, &ps);
        if (r < 0)
                return r;
        *ret_mask = profiles_under(&ps, cur);
        return 0;
}

int gim_available_memory_modes(struct amdsmi_gpu *gpu, uint32_t *ret_mask) {
        uint32_t mask;
        int r;

        r = read_memory_config(gpu, &mask);
        if (r < 0)
                return r;
        *ret_mask = mask;
        return (mask & (mask - 1)) != 0; /* changeable with more than one mode */
}

int gim_vf_count(struct amdsmi_gpu *gpu, unsigned *ret) {
        char path[256];
        uint64_t v;
        int r;

        snprintf(path, sizeof(path), "%s/sriov_numvfs", gpu->syspath);
        r = sysfs_read_u64(gpu->ctx, path, 10, &v);
        if (r == -ENOENT)
                return -ENODATA;
        if (r < 0)
                return r;
        if (v > 256)
                return -EBADMSG;
        *ret = (unsigned) v;
        return 0;
}

int gim_plan(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode compute,
             enum amdsmi_memory_mode memory, uint64_t flags, struct amdsmi_partition_plan *plan) {
        const struct gim_profile *before, *after;
        struct gim_profiles ps;
        unsigned vfs = 0;
        int r;

        (void) compute;
        (void) memory;
        (void) flags;
        r = read_profiles(gpu, &ps);
        if (r < 0)
                return r;
        r = gim_vf_count(gpu, &vfs);
        if (r < 0 && r != -ENODATA)
                return r;

        /* gim changes apply at once and per GPU: no reload, no hive. */
        plan->notes &= ~(NOTE(AMDSMI_PLAN_RELOAD_REQUIRED) | NOTE(AMDSMI_PLAN_HIVE_WIDE) |
                         NOTE(AMDSMI_PLAN_COMPUTE_AFTER_RELOAD));
        plan->n_affected_bdfs = 1;
        /* gim's profiles say which modes go with which NPS mode */
        plan->valid_compute = profiles_under(&ps, plan->memory_after);
        before = find_profile(&ps, plan->compute_before);
        after = find_profile(&ps, plan->compute_after);
        plan->partitions_before = before ? before->partitions : 0;
        plan->partitions_after = after ? after->partitions : 0;
        plan->vfs_before = vfs;
        plan->vfs_after = plan->partitions_after;
        if (plan->reason == AMDSMI_PLAN_OK || plan->reason == AMDSMI_PLAN_INCOMPATIBLE)
                plan->reason = (plan->notes & NOTE(AMDSMI_PLAN_NO_CHANGE)) ||
                                               (plan->valid_compute & CBIT(plan->compute_after))
                                       ? AMDSMI_PLAN_OK
                                       : AMDSMI_PLAN_INCOMPATIBLE;
        if (plan->notes & NOTE(AMDSMI_PLAN_NO_CHANGE)) {
                plan->vfs_after = vfs;
                return 0;
        }
        plan->notes |= NOTE(AMDSMI_PLAN_DESTROYS_VFS);
        /* Both modes change: each write must leave a valid pair. Compute first when the new
         * compute mode works under the current NPS mode, else memory first when the current
         * compute mode works under the new NPS mode. */
        if (plan->compute_after != plan->compute_before &&
            plan->memory_after != plan->memory_before && after && before &&
            !(after->memory_caps & MBIT(plan->memory_before)) &&
            (before->memory_caps & MBIT(plan->memory_after)))
                plan->notes |= NOTE(AMDSMI_PLAN_MEMORY_FIRST);
        /* Neither order works (e.g. DPX/NPS2 -> QPX/NPS4): say so rather than fail halfway. */
        if (plan->reason == AMDSMI_PLAN_OK && plan->compute_after != plan->compute_before &&
            plan->memory_after != plan->memory_before && after && before &&
            !(after->memory_caps & MBIT(plan->memory_before)) &&
            !(before->memory_caps & MBIT(plan->memory_after)))
                plan->reason = AMDSMI_PLAN_NO_PATH;
        return 0;
}

/* gim re-makes the VFs as part of the store; wait (bounded) until their count settles. */
static unsigned wait_vfs(struct amdsmi_gpu *gpu, unsigned want) {
        uint64_t end = now_ms() + GIM_VF_WAIT_MS;
        unsigned vfs = 0;

        for (;;) {
                if (gim_vf_count(gpu, &vfs) == 0 && vfs == want)
                        return vfs;
                if (now_ms() >= end)
                        return vfs;
                sleep_ms(GIM_POLL_MS);
        }
}

/* The state every gim change starts from; errors are reported as a preflight failure. */
static int gim_before(struct amdsmi_gpu *gpu, struct amdsmi_partition_change *c,
                      struct gim_profiles *ps) {
        const struct gim_profile *p;
        int r;

        r = gim_read_compute_mode(gpu, &c->compute_before);
        if (r >= 0)
                r = gim_read_memory_mode(gpu, &c->memory_before);
        if (r >= 0)
                r = read_profiles(gpu, ps);
        if (r >= 0)
                r = gim_vf_count(gpu, &c->vfs_before);
        if (r < 0) {
                snprintf(c->message, sizeof(c->message), "cannot read gim's partition files: %s",
                         r == -EACCES ? "needs root" : strerror(-r));
                return r;
        }
        c->compute_after = c->compute_before;
        c->memory_after = c->memory_before;
        c->vfs_after = c->vfs_before;
        p = find_profile(ps, c->compute_before);
        c->partitions_before = c->partitions_after = p ? p->partitions : 0;
        return 0;
}

static int gim_check_vfs(struct amdsmi_gpu *gpu, uint64_t flags,
                         struct amdsmi_partition_change *c) {
        if (c->vfs_before == 0 || (flags & AMDSMI_CHANGE_FORCE))
                return 0;
        snprintf(c->message, sizeof(c->message),
                 "%u VF%s of %s exist%s and would be destroyed (gim makes one per partition "
                 "again): stop their VMs, or use --force",
                 c->vfs_before, c->vfs_before == 1 ? "" : "s", gpu->bdf,
                 c->vfs_before == 1 ? "s" : "");
        return -EBUSY;
}

static int gim_write(struct amdsmi_gpu *gpu, const char *attr, const char *value,
                     struct amdsmi_partition_change *c) {
        char path[256];
        int r;

        snprintf(path, sizeof(path), "%s/%s", gpu->syspath, attr);
        r = sysfs_write_string(gpu->ctx, path, value);
        if (r == -EPERM)
                r = -EBUSY;
        if (r < 0)
                snprintf(c->message, sizeof(c->message), "gim refused %s for %s: %s", value, attr,
                         r == -EACCES ? "needs root" : strerror(-r));
        return r;
}

int gim_set_compute_mode(struct amdsmi_gpu *gpu, enum amdsmi_compute_mode mode, uint64_t flags,
                         struct amdsmi_partition_change *c) {
        const struct gim_profile *p;
        struct gim_profiles ps;
        char value[16], buf[64];
        uint64_t start;
        int r;

        r = gim_before(gpu, c, &ps);
        if (r < 0)
                return change_finish(c, r, AMDSMI_STAGE_PREFLIGHT);
        p = find_profile(&ps, mode);
        if (!p) {
                uint32_t all = 0;

                for (unsigned i = 0; i < ps.n; i++)
                        all |= CBIT(ps.p[i].type);
                (void) amdsmi_compute_mode_mask_to_string(all, buf, sizeof(buf));
                snprintf(c->message, sizeof(c->message), "gim has no %s profile on %s (%s)",
                         amdsmi_compute_mode_to_string(mode), gpu->bdf, buf);
                return change_finish(c, -EINVAL, AMDSMI_STAGE_PREFLIGHT);
        }
        if (mode == c->compute_before)
                return change_finish(c, 0, AMDSMI_STAGE_DONE);
        if (!(p->memory_caps & MBIT(c->memory_before))) {
                (void) amdsmi_memory_mode_mask_to_string(p->memory_caps, buf, sizeof(buf));
                snprintf(c->message, sizeof(c->message),
                         "%s is not valid under %s on %s (gim's %s profile needs %s): change the "
                         "memory mode first",
                         amdsmi_compute_mode_to_string(mode),
                         amdsmi_memory_mode_to_string(c->memory_before), gpu->bdf,
                         amdsmi_compute_mode_to_string(mode), buf);
                return change_finish(c, -EINVAL, AMDSMI_STAGE_PREFLIGHT);
        }
        r = gim_check_vfs(gpu, flags, c);
        if (r < 0)
                return change_finish(c, r, AMDSMI_STAGE_PREFLIGHT);
        if (flags & AMDSMI_CHANGE_DRY_RUN) {
                c->partitions_after = p->partitions;
                c->vfs_after = p->partitions;
                return change_finish(c, 0, AMDSMI_STAGE_DONE);
        }

        start = now_ms();
        snprintf(value, sizeof(value), "%u", p->index);
        r = gim_write(gpu, "accelerator_partition_profile", value, c);
        if (r < 0)
                return change_finish(c, r, AMDSMI_STAGE_WRITE);
        r = gim_read_compute_mode(gpu, &c->compute_after);
        if (r < 0) {
                snprintf(c->message, sizeof(c->message), "cannot read the mode back: %s",
                         strerror(-r));
                return change_finish(c, r, AMDSMI_STAGE_VERIFY);
        }
        if (c->compute_after != mode) {
                (void) gim_vf_count(gpu, &c->vfs_after);
                snprintf(c->message, sizeof(c->message),
                         "gim accepted profile %u (%s) but ignored it: %s still reads %s (gim's "
                         "kernel log says why)",
                         p->index, amdsmi_compute_mode_to_string(mode), gpu->bdf,
                         amdsmi_compute_mode_to_string(c->compute_after));
                return change_finish(c, -EIO, AMDSMI_STAGE_VERIFY);
        }
        c->changed = 1;
        c->partitions_after = p->partitions;
        c->vfs_after = wait_vfs(gpu, p->partitions);
        c->elapsed_ms = (uint32_t) (now_ms() - start);
        if (c->vfs_after != p->partitions)
                snprintf(c->message, sizeof(c->message),
                         "%s is in %s, but gim made %u VFs instead of %u", gpu->bdf,
                         amdsmi_compute_mode_to_string(mode), c->vfs_after, p->partitions);
        return change_finish(c, 0, AMDSMI_STAGE_DONE);
}

int gim_set_memory_mode(struct amdsmi_gpu *gpu, enum amdsmi_memory_mode mode, uint64_t flags,
                        struct amdsmi_partition_change *c) {
        const struct gim_profile *p;
        struct gim_profiles ps;
        uint32_t avail;
        char buf[64];
        uint64_t start;
        unsigned parts;
        int r;

        r = gim_before(gpu, c, &ps);
        if (r >= 0)
                r = read_memory_config(gpu, &avail);
        if (r < 0) {
                if (!c->message[0])
                        snprintf(c->message, sizeof(c->message),
                                 "cannot read gim's partition files: %s",
                                 r == -EACCES ? "needs root" : strerror(-r));
                return change_finish(c, r, AMDSMI_STAGE_PREFLIGHT);
        }
        if (!(avail & MBIT(mode))) {
                (void) amdsmi_memory_mode_mask_to_string(avail, buf, sizeof(buf));
                snprintf(c->message, sizeof(c->message), "%s is not available on %s: %s",
                         amdsmi_memory_mode_to_string(mode), gpu->bdf, buf);
                return change_finish(c, (avail & (avail - 1)) ? -EINVAL : -EOPNOTSUPP,
                                     AMDSMI_STAGE_PREFLIGHT);
        }
        if (mode == c->memory_before)
                return change_finish(c, 0, AMDSMI_STAGE_DONE);
        p = find_profile(&ps, c->compute_before);
        if (!p || !(p->memory_caps & MBIT(mode))) {
                (void) amdsmi_compute_mode_mask_to_string(profiles_under(&ps, mode), buf,
                                                          sizeof(buf));
                snprintf(c->message, sizeof(c->message),
                         "%s does not work with %s on %s (under %s: %s): change the compute "
                         "mode first",
                         amdsmi_memory_mode_to_string(mode),
                         amdsmi_compute_mode_to_string(c->compute_before), gpu->bdf,
                         amdsmi_memory_mode_to_string(mode), buf);
                return change_finish(c, -EINVAL, AMDSMI_STAGE_PREFLIGHT);
        }
        parts = p->partitions;
        r = gim_check_vfs(gpu, flags, c);
        if (r < 0)
                return change_finish(c, r, AMDSMI_STAGE_PREFLIGHT);
        if (flags & AMDSMI_CHANGE_DRY_RUN) {
                c->vfs_after = parts;
                return change_finish(c, 0, AMDSMI_STAGE_DONE);
        }

        start = now_ms();
        r = gim_write(gpu, "memory_partition_mode", amdsmi_memory_mode_to_string(mode), c);
        if (r < 0)
                return change_finish(c, r, AMDSMI_STAGE_WRITE);
        r = gim_read_memory_mode(gpu, &c->memory_after);
        if (r < 0) {
                snprintf(c->message, sizeof(c->message), "cannot read the mode back: %s",
                         strerror(-r));
                return change_finish(c, r, AMDSMI_STAGE_VERIFY);
        }
        if (c->memory_after != mode) {
                (void) gim_vf_count(gpu, &c->vfs_after);
                snprintf(c->message, sizeof(c->message),
                         "gim accepted %s but ignored it: %s still reads %s (gim's kernel log "
                         "says why)",
                         amdsmi_memory_mode_to_string(mode), gpu->bdf,
                         amdsmi_memory_mode_to_string(c->memory_after));
                return change_finish(c, -EIO, AMDSMI_STAGE_VERIFY);
        }
        c->changed = 1;
        c->vfs_after = wait_vfs(gpu, parts);
        c->elapsed_ms = (uint32_t) (now_ms() - start);
        if (c->vfs_after != parts)
                snprintf(c->message, sizeof(c->message),
                         "%s is in %s, but gim made %u VFs instead of %u", gpu->bdf,
                         amdsmi_memory_mode_to_string(mode), c->vfs_after, parts);
        return change_finish(c, 0, AMDSMI_STAGE_DONE);
}
