/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's KFD event stream (issue 19): the SMI event fds of every partition of every GPU,
 * each event re-emitted as org.amdsmi1.Health.Event(kind, json) on its GPU's object (json:
 * health_event_json(), the object `amdsmi events --json` prints).
 *
 * Holding an SMI event fd makes amdsmid a KFD user of every GPU (the kernel's process has a
 * device of each), and a KFD user blocks partition switches and driver reloads. So the fds are
 * held only while someone wants them: [health] events = auto (the default) while at least one
 * client is subscribed (Manager.SubscribeEvents(), counted per client with sd_bus_track: a
 * client that leaves the bus unsubscribes), yes always, no never. They are closed before a
 * change of amdsmid's own that rebuilds the KFD topology (the jobs with kfd_exclusive: compute
 * and memory partition changes, driver reloads) and opened again when it ends, with an Event
 * of kind "stream" ({"state": "paused" | "resumed", "reason": ...}) on each GPU followed, so
 * that clients know events may have been missed meanwhile.
 *
 * The set of fds follows the enumeration: health_events_sync() after each rescan closes the
 * fds of partitions that went away and opens those of new ones.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "amdsmid.h"
#include "amdsmid-conf.h"
#include "health-json.h"
#include "json-util.h"

/* Every kind the library knows, of every process (amdsmid is root: the kernel's suser). */
#define FOLLOW_MASK                                                                            \
        (((UINT64_C(1) << (_AMDSMI_EVENT_KIND_MAX - 1)) - 1) | AMDSMI_EVENT_MASK_ALL_PROCESSES)
#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* One followed KFD node (a partition of a GPU). */
struct follow {
        struct daemon *d;
        char bdf[16];
        uint32_t kfd_gpu_id;
        unsigned partition;
        struct amdsmi_events *events;
        sd_event_source *source;
};

struct health_events {
        sd_bus_track *track;            /* the subscribers (counted: recursive) */
        unsigned paused;                /* kfd_exclusive jobs running */
        char pause_reason[128];
        struct follow **f;
        size_t n;
        /* GPUs whose fds could not be opened: said once until they can */
        char **open_failed;
};

static struct health_events *events_get(struct daemon *d) {
        if (!d->health_events)
                d->health_events = calloc(1, sizeof(struct health_events));
        return d->health_events;
}

static enum config_health_events events_mode(struct daemon *d) {
        return d->config ? d->config->health.events : CONFIG_HEALTH_EVENTS_AUTO;
}

static const char *events_mode_name(enum config_health_events m) {
        return m == CONFIG_HEALTH_EVENTS_YES ? "yes" : m == CONFIG_HEALTH_EVENTS_NO ? "no" : "auto";
}

unsigned health_events_subscribers(struct daemon *d) {
        struct health_events *e = d->health_events;

        return e && e->track ? sd_bus_track_count(e->track) : 0;
}

/* Whether the fds are wanted now. */
static bool events_wanted(struct daemon *d) {
        struct health_events *e = d->health_events;

        if (d->exiting || (e && e->paused > 0))
                return false;
        switch (events_mode(d)) {
        case CONFIG_HEALTH_EVENTS_YES:
                return true;
        case CONFIG_HEALTH_EVENTS_NO:
                return false;
        default:
                return health_events_subscribers(d) > 0;
        }
}

static bool gpu_followed(struct health_events *e, const char *bdf) {
        for (size_t i = 0; i < e->n; i++)
                if (strcmp(e->f[i]->bdf, bdf) == 0)
                        return true;
        return false;
}

static void follow_free(struct follow *f) {
        if (!f)
                return;
        sd_event_source_disable_unref(f->source);
        amdsmi_events_close(f->events);
        free(f);
}

/* Emits Event("stream", {...}) on @g's object. */
static void emit_stream(struct dgpu *g, const char *state, const char *reason) {
        json_object *o = json_object_new_object();
        struct timespec now;
        char ts[40], text[192];

        if (!o)
                return;
        clock_gettime(CLOCK_REALTIME, &now);
        format_timestamp(&now, ts, sizeof(ts));
        snprintf(text, sizeof(text), "events %s: %s%s", state, reason,
                 strcmp(state, "paused") == 0 ? " (events until resumed are missed)" : "");
        json_object_object_add(o, "timestamp", json_object_new_string(ts));
        json_object_object_add(o, "gpu", json_object_new_uint64(g->index));
        json_object_object_add(o, "bdf", json_object_new_string(g->bdf));
        json_object_object_add(o, "partition", NULL);
        json_object_object_add(o, "kind", json_object_new_string("stream"));
        json_object_object_add(o, "state", json_object_new_string(state));
        json_object_object_add(o, "reason", json_object_new_string(reason));
        json_object_object_add(o, "text", json_object_new_string(text));
        health_daemon_event(g, "stream", json_object_to_json_string_ext(o, JSON_FLAGS));
        json_object_put(o);
}

/* The GPU @bdf is followed (@on) or not any more: the verdict's reset window. */
static void set_following(struct daemon *d, const char *bdf, bool on) {
        struct dgpu *g = manager_find_gpu(d, bdf);

        if (g)
                health_daemon_following(g, on, now_usec(CLOCK_BOOTTIME));
}

static void follow_drop(struct daemon *d, size_t i) {
        struct health_events *e = d->health_events;
        char bdf[16];

        snprintf(bdf, sizeof(bdf), "%s", e->f[i]->bdf);
        follow_free(e->f[i]);
        memmove(e->f + i, e->f + i + 1, (e->n - i - 1) * sizeof(*e->f));
        e->n--;
        if (!gpu_followed(e, bdf))
                set_following(d, bdf, false);
}

static void on_event(struct follow *f, const struct amdsmi_event *ev) {
        struct dgpu *g = manager_find_gpu(f->d, f->bdf);
        json_object *o;

        if (!g)
                return;
        if (ev->kind == AMDSMI_EVENT_GPU_POST_RESET)
                health_daemon_reset_seen(g, now_usec(CLOCK_BOOTTIME),
                                         ev->u.reset.cause[0] ? ev->u.reset.cause : NULL);
        o = health_event_json((int) g->index, g->bdf, ev);
        if (!o) {
                log_gpu(LOG_WARNING, g->bdf, "out of memory: a KFD event is lost");
                return;
        }
        health_daemon_event(g, amdsmi_event_kind_to_string(ev->kind),
                            json_object_to_json_string_ext(o, JSON_FLAGS));
        json_object_put(o);
}

static int on_events_fd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct follow *f = userdata;
        struct daemon *d = f->d;
        struct amdsmi_event ev[16];
        int m;

        while ((m = amdsmi_events_read(f->events, ev, ELEMENTSOF(ev))) > 0)
                for (int i = 0; i < m; i++) {
                        if (ev[i].partition < 0)
                                ev[i].partition = (int) f->partition;
                        on_event(f, &ev[i]);
                }
        if (m == 0)
                return 0;
        /* the node went away (a partition switch or unbind outside amdsmid), or the fd
         * broke: let it go; the rescan follows the nodes there are now */
        log_gpu(m == -ENODEV ? LOG_INFO : LOG_WARNING, f->bdf,
                "KFD events of partition %u (gpu_id %u): %s; following again after a rescan",
                f->partition, (unsigned) f->kfd_gpu_id,
                m == -ENODEV ? "the node went away" : strerror(-m));
        for (size_t i = 0; i < d->health_events->n; i++)
                if (d->health_events->f[i] == f) {
                        follow_drop(d, i);
                        break;
                }
        manager_schedule_rescan(d);
        return 0;
}

static bool strv_remove(char **l, const char *s) {
        for (size_t i = 0; l && l[i]; i++)
                if (strcmp(l[i], s) == 0) {
                        free(l[i]);
                        memmove(l + i, l + i + 1, (strv_length(l + i + 1) + 1) * sizeof(char *));
                        return true;
                }
        return false;
}

/* Opens the fds of @g's partitions not followed yet. */
static void follow_gpu(struct daemon *d, struct dgpu *g) {
        struct health_events *e = d->health_events;
        struct amdsmi_gpu *gpu = dgpu_handle(g);
        size_t np;
        bool was = gpu_followed(e, g->bdf), failed = false;

        if (!gpu || strcmp(g->role, "vf") == 0)
                return;
        np = amdsmi_gpu_get_partition_count(gpu);
        for (size_t p = 0; p < np; p++) {
                struct amdsmi_partition *part = amdsmi_gpu_get_partition(gpu, p);
                struct follow *f, **v;
                bool have = false;
                int r;

                if (!part)
                        continue;
                for (size_t i = 0; i < e->n && !have; i++)
                        have = strcmp(e->f[i]->bdf, g->bdf) == 0 &&
                               e->f[i]->kfd_gpu_id == amdsmi_partition_get_kfd_gpu_id(part);
                if (have)
                        continue;
                f = calloc(1, sizeof(*f));
                v = reallocarray(e->f, e->n + 1, sizeof(*v));
                if (!f || !v) {
                        free(f);
                        if (v)
                                e->f = v;
                        log_gpu(LOG_WARNING, g->bdf, "out of memory: its KFD events are not "
                                "followed");
                        return;
                }
                e->f = v;
                f->d = d;
                snprintf(f->bdf, sizeof(f->bdf), "%s", g->bdf);
                f->partition = (unsigned) p;
                f->kfd_gpu_id = amdsmi_partition_get_kfd_gpu_id(part);
                r = amdsmi_partition_open_events(part, FOLLOW_MASK, &f->events);
                if (r >= 0)
                        r = sd_event_add_io(d->event, &f->source,
                                            amdsmi_events_get_fd(f->events), EPOLLIN,
                                            on_events_fd, f);
                if (r < 0) {
                        if (!strv_contains(e->open_failed, g->bdf)) {
                                log_gpu(LOG_WARNING, g->bdf,
                                        "cannot follow the KFD events of GPU %u partition %zu: "
                                        "%s",
                                        g->index, p,
                                        r == -EACCES ? "permission denied (/dev/kfd)"
                                        : r == -EOPNOTSUPP
                                                ? "the KFD has no SMI events (older than 1.3)"
                                        : r == -ENOENT ? "no kfd device node"
                                                       : strerror(-r));
                                (void) strv_extend(&e->open_failed, g->bdf);
                        }
                        failed = true;
                        follow_free(f);
                        continue;
                }
                e->f[e->n++] = f;
        }
        if (!failed)
                (void) strv_remove(e->open_failed, g->bdf);
        if (!was && gpu_followed(e, g->bdf)) {
                log_gpu(LOG_DEBUG, g->bdf, "following the KFD events of GPU %u", g->index);
                set_following(d, g->bdf, true);
        }
}

/* Whether partition @kfd_gpu_id of @bdf is one of the GPU's now. */
static bool follow_current(struct daemon *d, const struct follow *f) {
        struct dgpu *g = manager_find_gpu(d, f->bdf);
        struct amdsmi_gpu *gpu = g ? dgpu_handle(g) : NULL;
        size_t np = gpu ? amdsmi_gpu_get_partition_count(gpu) : 0;

        for (size_t p = 0; p < np; p++) {
                struct amdsmi_partition *part = amdsmi_gpu_get_partition(gpu, p);

                if (part && amdsmi_partition_get_kfd_gpu_id(part) == f->kfd_gpu_id &&
                    p == f->partition)
                        return true;
        }
        return false;
}

static void close_all(struct daemon *d) {
        struct health_events *e = d->health_events;

        while (e && e->n > 0)
                follow_drop(d, e->n - 1);
}

void health_events_sync(struct daemon *d) {
        struct health_events *e = events_get(d);

        if (!e)
                return;
        if (!events_wanted(d)) {
                if (e->n > 0)
                        log_debug("closing the KFD event fds (%zu)", e->n);
                close_all(d);
                return;
        }
        for (size_t i = e->n; i > 0; i--)
                if (!follow_current(d, e->f[i - 1]))
                        follow_drop(d, i - 1);
        for (size_t i = 0; i < d->n_gpus; i++)
                follow_gpu(d, d->gpus[i]);
}

/* ---- pause around amdsmid's own KFD changes --------------------------------------------- */

void health_events_pause(struct daemon *d, const char *reason) {
        struct health_events *e = events_get(d);
        _cleanup_strv_free_ char **bdfs = NULL;

        if (!e)
                return;
        if (e->paused++ > 0)
                return;
        snprintf(e->pause_reason, sizeof(e->pause_reason), "%s", reason);
        for (size_t i = 0; i < e->n; i++)
                if (!strv_contains(bdfs, e->f[i]->bdf))
                        (void) strv_extend(&bdfs, e->f[i]->bdf);
        if (!bdfs)
                return;
        log_info("closing the KFD event fds for %s (amdsmid would be a KFD user of its own "
                 "change)", reason);
        close_all(d);
        for (char **b = bdfs; *b; b++) {
                struct dgpu *g = manager_find_gpu(d, *b);

                if (g)
                        emit_stream(g, "paused", reason);
        }
}

void health_events_resume(struct daemon *d) {
        struct health_events *e = d->health_events;
        char reason[sizeof(e->pause_reason) + 16];

        if (!e || e->paused == 0 || --e->paused > 0)
                return;
        snprintf(reason, sizeof(reason), "%s ended", e->pause_reason);
        health_events_sync(d);
        for (size_t i = 0; i < d->n_gpus; i++)
                if (gpu_followed(e, d->gpus[i]->bdf))
                        emit_stream(d->gpus[i], "resumed", reason);
}

/* ---- SubscribeEvents(), UnsubscribeEvents() --------------------------------------------- */

static int on_track_empty(sd_bus_track *t, void *userdata) {
        struct daemon *d = userdata;
        struct health_events *e = d->health_events;

        /* sd-bus calls this for as long as the empty tracker lives (as systemd's Subscribe
         * does, it goes: the next subscriber makes a new one) */
        if (sd_bus_track_count(t) > 0)
                return 0; /* someone subscribed again before this ran */
        log_debug("no event subscriber left");
        if (e && e->track == t)
                e->track = sd_bus_track_unref(e->track);
        health_events_sync(d);
        return 0;
}

static int method_subscribe(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        struct health_events *e = events_get(d);
        int r;

        if (!e)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        if (events_mode(d) == CONFIG_HEALTH_EVENTS_NO)
                return bus_error_errno(error, -EOPNOTSUPP,
                                       "amdsmid does not follow the KFD events: [health] events "
                                       "= no in amdsmid.conf (auto or yes enables them)");
        if (!e->track) {
                r = sd_bus_track_new(sd_bus_message_get_bus(m), &e->track, on_track_empty, d);
                if (r < 0)
                        return bus_error_errno(error, r, "cannot track subscribers: %s",
                                               strerror(-r));
                (void) sd_bus_track_set_recursive(e->track, true);
        }
        r = sd_bus_track_add_sender(e->track, m);
        if (r < 0)
                return bus_error_errno(error, r, "cannot track %s: %s",
                                       sd_bus_message_get_sender(m) ?: "the caller",
                                       strerror(-r));
        log_debug("%s subscribed to the events (%u subscribers)",
                  sd_bus_message_get_sender(m) ?: "?", sd_bus_track_count(e->track));
        health_events_sync(d);
        return sd_bus_reply_method_return(m, NULL);
}

static int method_unsubscribe(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        struct health_events *e = d->health_events;
        int r;

        r = e && e->track ? sd_bus_track_remove_sender(e->track, m) : 0;
        if (r < 0)
                return bus_error_errno(error, r, "cannot untrack the caller: %s", strerror(-r));
        if (r == 0)
                return bus_error_errno(error, -ENOENT,
                                       "%s is not subscribed to the events (SubscribeEvents)",
                                       sd_bus_message_get_sender(m) ?: "the caller");
        /* the last one gone: on_track_empty() closes the fds */
        return sd_bus_reply_method_return(m, NULL);
}

/* "auto", "yes" or "no", the subscribers and whether the fds are held, for tests and
 * operators: {"mode", "subscribers", "following": [BDF...], "fds", "paused"}. */
static int method_events_status(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        struct health_events *e = d->health_events;
        json_object *o = json_object_new_object(), *a = json_object_new_array();

        if (!o || !a) {
                json_object_put(o);
                json_object_put(a);
                return bus_error_errno(error, -ENOMEM, "out of memory");
        }
        /* in the order of the enumeration, each GPU once */
        for (size_t i = 0; e && i < d->n_gpus; i++)
                if (gpu_followed(e, d->gpus[i]->bdf))
                        json_object_array_add(a, json_object_new_string(d->gpus[i]->bdf));
        json_object_object_add(o, "mode", json_object_new_string(events_mode_name(events_mode(d))));
        json_object_object_add(o, "subscribers", json_object_new_uint64(health_events_subscribers(d)));
        json_object_object_add(o, "following", a);
        json_object_object_add(o, "fds", json_object_new_uint64(e ? e->n : 0));
        json_object_object_add(o, "paused", json_object_new_boolean(e && e->paused > 0));
        return bus_reply_json(m, o);
}

const sd_bus_vtable health_events_manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("SubscribeEvents", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
                                method_subscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("UnsubscribeEvents", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
                                method_unsubscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetEventStream", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
                                method_events_status, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

void health_events_done(struct daemon *d) {
        struct health_events *e = d->health_events;

        if (!e)
                return;
        close_all(d);
        sd_bus_track_unref(e->track);
        strv_free(e->open_failed);
        free(e->f);
        free(e);
        d->health_events = NULL;
}
