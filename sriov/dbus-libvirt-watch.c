/* SPDX-License-Identifier: MIT */
/* amdsmid's view of the libvirt domains: one worker thread, see libvirt-watch.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <syslog.h>
#include <unistd.h>

#include <libvirt/virterror.h>
#include <systemd/sd-event.h>

#include "amdsmid.h"
#include "libvirt-watch.h"

#define RETRY_SECONDS 30
#define TICK_MS 500

enum msg_kind {
        MSG_CONNECTED,
        MSG_STOPPED,
        MSG_LOST,
};

struct watch_msg {
        enum msg_kind kind;
        char uuid[37];
        char name[256];
        struct watch_domain *doms;
        size_t n_doms;
        char error[256];
};

/* ---- the worker thread --------------------------------------------------------------------- */

static struct {
        bool started;
        pthread_t thread;
        int pipe[2];
        sd_event_source *source;
        struct daemon *d;
        char uri[256];
        volatile bool stop;
        volatile bool closed;
        pthread_mutex_t lock; /* the status below */
        bool connected;
        char error[256];
} w = { .pipe = { -1, -1 }, .lock = PTHREAD_MUTEX_INITIALIZER };

static void post(struct watch_msg *m) {
        if (write(w.pipe[1], &m, sizeof(m)) != (ssize_t) sizeof(m)) {
                watch_domains_free(m->doms, m->n_doms);
                free(m);
        }
}

static void post_stopped(const char *uuid, const char *name, void *userdata) {
        struct watch_msg *m = calloc(1, sizeof(*m));

        if (!m)
                return;
        m->kind = MSG_STOPPED;
        snprintf(m->uuid, sizeof(m->uuid), "%s", uuid);
        snprintf(m->name, sizeof(m->name), "%s", name);
        post(m);
}

static void post_lost(const char *error) {
        struct watch_msg *m = calloc(1, sizeof(*m));

        if (!m)
                return;
        m->kind = MSG_LOST;
        snprintf(m->error, sizeof(m->error), "%s", error);
        post(m);
}

static void on_close(virConnectPtr conn, int reason, void *opaque) {
        w.closed = true;
}

static void on_tick(int timer, void *opaque) {
        /* wakes virEventRunDefaultImpl() so that the loop sees w.stop and w.closed */
}

static void quiet(void *userdata, virErrorPtr error) {
        /* libvirt prints its errors on stderr by default: they are logged by amdsmid */
}

static void sleep_unless_stopped(unsigned seconds) {
        for (unsigned i = 0; i < seconds * 1000 / TICK_MS && !w.stop; i++)
                usleep(TICK_MS * 1000);
}

static void *worker(void *userdata) {
        int timer;

        virSetErrorFunc(NULL, quiet);
        if (virEventRegisterDefaultImpl() < 0) {
                post_lost("libvirt's event loop cannot start");
                return NULL;
        }
        timer = virEventAddTimeout(TICK_MS, on_tick, NULL, NULL);
        while (!w.stop) {
                struct watch_msg *m;
                char error[256];
                virConnectPtr conn;
                int id, n;

                conn = virConnectOpenReadOnly(w.uri);
                if (!conn) {
                        watch_last_error(error, sizeof(error));
                        post_lost(error);
                        sleep_unless_stopped(RETRY_SECONDS);
                        continue;
                }
                w.closed = false;
                (void) virConnectRegisterCloseCallback(conn, on_close, NULL, NULL);
                id = watch_subscribe(conn, post_stopped, NULL);
                m = calloc(1, sizeof(*m));
                n = m ? watch_list_running(conn, &m->doms, error, sizeof(error)) : -ENOMEM;
                if (id < 0 || n < 0) {
                        if (id < 0)
                                watch_last_error(error, sizeof(error));
                        free(m);
                        post_lost(n == -ENOMEM ? "out of memory" : error);
                } else {
                        m->kind = MSG_CONNECTED;
                        m->n_doms = (size_t) n;
                        post(m);
                        while (!w.stop && !w.closed)
                                if (virEventRunDefaultImpl() < 0)
                                        break;
                        if (!w.stop)
                                post_lost("the connection to libvirt closed");
                }
                if (id >= 0)
                        (void) virConnectDomainEventDeregisterAny(conn, id);
                (void) virConnectUnregisterCloseCallback(conn, on_close);
                virConnectClose(conn);
                if (!w.stop)
                        sleep_unless_stopped(id < 0 || n < 0 ? RETRY_SECONDS : 5);
        }
        if (timer >= 0)
                virEventRemoveTimeout(timer);
        return NULL;
}

static void set_status(bool connected, const char *error) {
        pthread_mutex_lock(&w.lock);
        w.connected = connected;
        snprintf(w.error, sizeof(w.error), "%s", error ? error : "");
        pthread_mutex_unlock(&w.lock);
}

static int on_message(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct watch_msg *m;
        bool was_connected;

        if (read(fd, &m, sizeof(m)) != (ssize_t) sizeof(m))
                return 0;
        pthread_mutex_lock(&w.lock);
        was_connected = w.connected || !w.error[0];
        pthread_mutex_unlock(&w.lock);
        switch (m->kind) {
        case MSG_CONNECTED:
                set_status(true, NULL);
                log_info("watching the libvirt domains of %s: %zu running", w.uri, m->n_doms);
                vm_reconcile(w.d, m->doms, m->n_doms);
                break;
        case MSG_STOPPED:
                vm_domain_gone(w.d, m->uuid, m->name);
                break;
        case MSG_LOST:
                if (was_connected)
                        log_warning("cannot see the libvirt domains of %s: %s; VFs are released "
                                    "by amdsmi-libvirt-hook only, retrying every %d s",
                                    w.uri, m->error, RETRY_SECONDS);
                set_status(false, m->error);
                break;
        }
        watch_domains_free(m->doms, m->n_doms);
        free(m);
        return 0;
}

int libvirt_watch_start(struct daemon *d, const char *uri) {
        int r;

        if (!uri || !uri[0] || w.started)
                return 0;
        snprintf(w.uri, sizeof(w.uri), "%s", uri);
        w.d = d;
        w.stop = w.closed = false;
        set_status(false, NULL);
        if (pipe2(w.pipe, O_CLOEXEC) < 0)
                return -errno;
        r = sd_event_add_io(d->event, &w.source, w.pipe[0], EPOLLIN, on_message, NULL);
        if (r < 0)
                return r;
        r = pthread_create(&w.thread, NULL, worker, NULL);
        if (r != 0)
                return -r;
        w.started = true;
        return 0;
}

void libvirt_watch_stop(void) {
        if (!w.started)
                return;
        w.stop = true;
        {
                /* a connection attempt may hang (a remote URI): the process ends anyway */
                struct timespec until;

                clock_gettime(CLOCK_REALTIME, &until);
                until.tv_sec += 3;
                if (pthread_timedjoin_np(w.thread, NULL, &until) != 0) {
                        log_warning("the libvirt watcher did not stop in 3 s: left behind");
                        w.started = false;
                        return;
                }
        }
        w.started = false;
        w.source = sd_event_source_disable_unref(w.source);
        for (int i = 0; i < 2; i++)
                if (w.pipe[i] >= 0) {
                        struct watch_msg *m;

                        /* what the thread posted last and nobody read */
                        if (i == 0) {
                                (void) fcntl(w.pipe[0], F_SETFL, O_NONBLOCK);
                                while (read(w.pipe[0], &m, sizeof(m)) == (ssize_t) sizeof(m)) {
                                        watch_domains_free(m->doms, m->n_doms);
                                        free(m);
                                }
                        }
                        close(w.pipe[i]);
                        w.pipe[i] = -1;
                }
}

void libvirt_watch_status(const char **ret_uri, bool *ret_connected, const char **ret_error) {
        static char error[256];

        pthread_mutex_lock(&w.lock);
        *ret_connected = w.connected;
        snprintf(error, sizeof(error), "%s", w.error);
        pthread_mutex_unlock(&w.lock);
        *ret_uri = w.started ? w.uri : NULL;
        *ret_error = error[0] ? error : NULL;
}
