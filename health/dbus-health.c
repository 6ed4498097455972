/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's org.amdsmi1.Health interface on every GPU object (ARCHITECTURE §6; issue 19):
 * the health verdict as properties that emit PropertiesChanged (they change rarely), and the
 * signal Event(s kind, s json) for every KFD event, new CPER record and health change.
 *
 * The event stream (health/dbus-health-events.c) hands what it sees to this file through
 * health_daemon_event() and health_daemon_reset_seen().
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "amdsmid.h"
#include "health-json.h"

struct dgpu_health {
        /* the last GPU reset amdsmid saw (CLOCK_BOOTTIME µs; 0: none) and its cause */
        uint64_t last_reset_usec;
        char *last_reset_cause;
        /* the event stream of this GPU is followed now (resets are known while it is) */
        bool following;
        uint64_t following_since_usec; /* CLOCK_BOOTTIME µs */
};

static struct dgpu_health *dgpu_health_get(struct dgpu *g) {
        if (!g->health)
                g->health = calloc(1, sizeof(*g->health));
        return g->health;
}

void health_daemon_event(struct dgpu *g, const char *kind, const char *json) {
        int r;

        if (!g->d->bus || !g->path)
                return;
        r = sd_bus_emit_signal(g->d->bus, g->path, AMDSMI_BUS_IFACE_HEALTH, "Event", "ss", kind,
                               json);
        if (r < 0)
                log_gpu(LOG_DEBUG, g->bdf, "cannot emit Health.Event: %s", strerror(-r));
}

void health_daemon_reset_seen(struct dgpu *g, uint64_t boottime_usec, const char *cause) {
        struct dgpu_health *h = dgpu_health_get(g);

        if (!h)
                return;
        h->last_reset_usec = boottime_usec;
        free(h->last_reset_cause);
        h->last_reset_cause = cause ? strdup(cause) : NULL;
}

void health_daemon_following(struct dgpu *g, bool on, uint64_t boottime_usec) {
        struct dgpu_health *h = dgpu_health_get(g);

        if (!h || h->following == on)
                return;
        h->following = on;
        h->following_since_usec = on ? boottime_usec : 0;
}

static void health_free_gpu(struct dgpu *g) {
        if (!g->health)
                return;
        free(g->health->last_reset_cause);
        free(g->health);
        g->health = NULL;
}

static const sd_bus_vtable health_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_SIGNAL_WITH_ARGS("Event", SD_BUS_ARGS("s", kind, "s", json), 0),
        SD_BUS_VTABLE_END,
};

const struct slice health_slice = {
        .interface = AMDSMI_BUS_IFACE_HEALTH,
        .vtable = health_vtable,
        .free_gpu = health_free_gpu,
};
