/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's Node Feature Discovery labels (amdsmid(8) KUBERNETES): the feature file of
 * nfd-worker's local source ([kubernetes] nfd_features of amdsmid.conf; by default
 * CONFIG_NFD_FEATURES_DEFAULT when its directory exists), with nfd.c's text.
 *
 * When: after the start and every reload, when a change ends and at the periodic check
 * (fleet_daemon_sync_update()), written only when a label changed or the last writing is
 * NFD_REWRITE_S old, and by a timer of its own every NFD_REWRITE_S whatever the periodic
 * check's interval; every writing lets the labels expire NFD_EXPIRY_S later, so they lapse
 * when amdsmid dies. A clean stop removes the file (and so does a configuration that moves or
 * disables it): the labels go with amdsmid.
 *
 * How: the directory is opened O_DIRECTORY|O_NOFOLLOW and must be a directory owned by root
 * (or amdsmid's user) and writable by neither group nor others, or nothing is written there;
 * the text goes to a new ".amdsmi.XXXXXX" beside the file (nfd-worker skips names starting
 * with '.'), O_CREAT|O_EXCL|O_NOFOLLOW, 0644, fsync, renameat over the file. Failures are
 * logged once per change of state and are never fatal; a missing default directory (no NFD on
 * this node) is no failure.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "amdsmid-conf.h"
#include "amdsmid.h"
#include "daemon-nfd.h"
#include "nfd.h"
#include "runtime-dir.h"
#include "safe-open.h"

/* nfd.state of a default directory that does not exist (no NFD on this node) */
#define NO_DIRECTORY 1

static struct {
        char *path;            /* the file in force (NULL: none) */
        bool named;            /* by [kubernetes] nfd_features (else the default) */
        char *labels;          /* the text last written, after its expiry line */
        uint64_t written_usec; /* when (CLOCK_MONOTONIC), 0: not yet */
        bool ours;             /* the file at path was written by this amdsmid */
        int state;             /* the last attempt: 0 written, NO_DIRECTORY, < 0 its error */
        bool tried;            /* an attempt was made since the path was set */
        sd_event_source *timer;
} nfd;

/* "D" and "B" of @path "D/B" in @dir and @base. */
static int split(const char *path, char *dir, size_t dir_size, const char **ret_base) {
        const char *b = strrchr(path, '/');

        if (!b || b[1] == '\0')
                return -EINVAL;
        if ((size_t) snprintf(dir, dir_size, "%.*s", b == path ? 1 : (int) (b - path), path) >=
            dir_size)
                return -ENAMETOOLONG;
        *ret_base = b + 1;
        return 0;
}

/* The directory of the file, opened and checked. @why (for a refusal): what is wrong. */
static int open_dir(const char *dir, char *why, size_t why_size) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                int r = -errno;

                if ((r == -ELOOP || r == -ENOTDIR) && lstat(dir, &st) == 0) {
                        snprintf(why, why_size, "%s is %s, not a directory (refused)", dir,
                                 S_ISLNK(st.st_mode) ? "a symbolic link"
                                                     : file_type_name(st.st_mode));
                        return -ELOOP;
                }
                snprintf(why, why_size, "%s: %s", dir, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0) {
                snprintf(why, why_size, "%s: %s", dir, strerror(errno));
                return -errno;
        }
        if (!S_ISDIR(st.st_mode)) {
                snprintf(why, why_size, "%s is not a directory", dir);
                return -ENOTDIR;
        }
        if (st.st_uid != 0 && st.st_uid != geteuid()) {
                snprintf(why, why_size, "%s is owned by uid %u, not by root (refused)", dir,
                         (unsigned) st.st_uid);
                return -EPERM;
        }
        if (st.st_mode & (S_IWGRP | S_IWOTH)) {
                snprintf(why, why_size, "%s is writable by %s (mode %04o, refused)", dir,
                         st.st_mode & S_IWOTH ? "others" : "its group",
                         (unsigned) (st.st_mode & 07777));
                return -EPERM;
        }
        return TAKE_FD(fd);
}

/* @text to @base in @dfd: a hidden temporary file (nfd-worker skips dot files), fsync,
 * renameat; 0644 whatever the umask, since nfd-worker reads it as its user. */
static int write_at(int dfd, const char *base, const char *text, char *why, size_t why_size) {
        char tmp[256] = "";
        int r = write_file_atomic_at(dfd, base, text, strlen(text), 0644, tmp);

        if (r < 0 && tmp[0])
                snprintf(why, why_size, "cannot create %s: %s", tmp, strerror(-r));
        else if (r < 0)
                snprintf(why, why_size, "%s", strerror(-r));
        return r;
}

/* What amdsmid knows, as nfd_render() takes it. */
static int render(struct daemon *d, char **ret) {
        struct nfd_gpu *g = calloc(d->n_gpus + 1, sizeof(*g));
        struct nfd_input in = {
                .gpus = g,
                .profile = d->config ? d->config->profile : NULL,
                .sync_state = fleet_daemon_sync_state(d),
        };
        int r;

        if (!g)
                return -ENOMEM;
        for (size_t i = 0; i < d->n_gpus; i++) {
                struct dgpu *dg = d->gpus[i];
                struct amdsmi_gpu *gpu = dgpu_handle(dg);

                if (!dg->present)
                        continue;
                g[in.n_gpus++] = (struct nfd_gpu){
                        .product = dg->product,
                        .role = dg->role,
                        .compute_mode = dg->compute_mode,
                        .memory_mode = dg->memory_mode,
                        .pending_memory = dg->pending_memory_mode,
                        .partitions = gpu ? (unsigned) amdsmi_gpu_get_partition_count(gpu) : 0,
                };
        }
        r = nfd_render(&in, time(NULL), NFD_EXPIRY_S, ret);
        free(g);
        return r;
}

static void log_state(int r, const char *why) {
        if (nfd.tried && r == nfd.state)
                return;
        if (r == NO_DIRECTORY)
                log_full(nfd.tried && nfd.state == 0 ? LOG_INFO : LOG_DEBUG, NULL, NULL,
                         "no NFD labels: %s", why);
        else if (r < 0)
                log_warning("cannot write the NFD feature file %s: %s (tried again, said again "
                            "once it works)",
                            nfd.path, why);
        else if (nfd.tried && nfd.state < 0)
                log_info("the NFD feature file %s is written again", nfd.path);
        else
                log_info("writing the NFD feature file %s (labels %s*)", nfd.path,
                         NFD_LABEL_PREFIX);
}

void daemon_nfd_update(struct daemon *d) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int dfd = -EBADF;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        char dir[PATH_MAX], why[PATH_MAX + 128] = "";
        const char *base, *labels;
        int r;

        if (!nfd.path)
                return;
        r = render(d, &text);
        if (r < 0) {
                log_warning("cannot build the NFD labels: %s", strerror(-r));
                return;
        }
        labels = strchr(text, '\n');
        labels = labels ? labels + 1 : text;
        /* the same labels, written less than NFD_REWRITE_S ago: nothing to do */
        if (nfd.tried && nfd.state == 0 && nfd.labels && strcmp(nfd.labels, labels) == 0 &&
            now - nfd.written_usec < (uint64_t) NFD_REWRITE_S * 1000000)
                return;

        r = split(nfd.path, dir, sizeof(dir), &base);
        if (r < 0)
                snprintf(why, sizeof(why), "%s", strerror(-r));
        else {
                dfd = open_dir(dir, why, sizeof(why));
                r = dfd < 0 ? dfd : 0;
        }
        if (r == -ENOENT && !nfd.named) {
                /* no NFD here: nothing is wrong */
                snprintf(why, sizeof(why), "%s does not exist", dir);
                r = NO_DIRECTORY;
        } else if (r == 0)
                r = write_at(dfd, base, text, why, sizeof(why));
        log_state(r, why);
        nfd.tried = true;
        nfd.state = r;
        if (r != 0)
                return;
        nfd.ours = true;
        nfd.written_usec = now;
        /* the next writing NFD_REWRITE_S after this one, whatever the periodic check does */
        if (nfd.timer)
                (void) sd_event_source_set_time(nfd.timer,
                                                now + (uint64_t) NFD_REWRITE_S * 1000000);
        free(nfd.labels);
        nfd.labels = strdup(labels); /* NULL: written again next time */
}

/* Removes the file this amdsmid wrote at nfd.path, if it did. */
static void remove_file(void) {
        _cleanup_close_ int dfd = -EBADF;
        char dir[PATH_MAX], why[PATH_MAX + 128];
        const char *base;

        if (!nfd.path || !nfd.ours)
                return;
        nfd.ours = false;
        if (split(nfd.path, dir, sizeof(dir), &base) < 0)
                return;
        dfd = open_dir(dir, why, sizeof(why));
        if (dfd < 0)
                return;
        if (unlinkat(dfd, base, 0) < 0 && errno != ENOENT)
                log_warning("cannot remove the NFD feature file %s: %s", nfd.path, strerror(errno));
        else
                log_info("NFD feature file %s removed", nfd.path);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        uint64_t written = nfd.written_usec;

        daemon_nfd_update(userdata);
        /* written: the timer is set already; else try again in NFD_REWRITE_S */
        if (nfd.written_usec != written)
                return 0;
        return sd_event_source_set_time(s, now_usec(CLOCK_MONOTONIC) +
                                                   (uint64_t) NFD_REWRITE_S * 1000000);
}

void daemon_nfd_config(struct daemon *d) {
        const struct config *c = d->config;
        const char *want = !c || c->nfd == CONFIG_NFD_AUTO ? CONFIG_NFD_FEATURES_DEFAULT
                           : c->nfd == CONFIG_NFD_PATH     ? c->nfd_features
                                                           : NULL;

        if (want && nfd.path && strcmp(want, nfd.path) == 0) {
                nfd.named = c && c->nfd == CONFIG_NFD_PATH;
                return;
        }
        /* moved or disabled: the old file goes, or nfd-worker would read both */
        remove_file();
        free(nfd.path);
        free(nfd.labels);
        nfd.labels = NULL;
        nfd.path = want ? strdup(want) : NULL;
        nfd.named = c && c->nfd == CONFIG_NFD_PATH;
        nfd.tried = false;
        nfd.state = 0;
        if (!want) {
                log_debug("NFD labels disabled ([kubernetes] nfd_features = no)");
                nfd.timer = sd_event_source_disable_unref(nfd.timer);
                return;
        }
        if (!nfd.path) {
                log_warning("NFD labels: out of memory");
                return;
        }
        if (!nfd.timer && (sd_event_add_time_relative(d->event, &nfd.timer, CLOCK_MONOTONIC,
                                                      (uint64_t) NFD_REWRITE_S * 1000000, 1000000,
                                                      on_timer, d) < 0 ||
                           sd_event_source_set_enabled(nfd.timer, SD_EVENT_ON) < 0))
                log_warning("NFD labels: no timer (written at the periodic check only)");
        /* the first writing follows with fleet_daemon_reloaded() */
}

void daemon_nfd_done(struct daemon *d) {
        remove_file();
        nfd.timer = sd_event_source_disable_unref(nfd.timer);
        free(nfd.path);
        nfd.path = NULL;
        free(nfd.labels);
        nfd.labels = NULL;
}
