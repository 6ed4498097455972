/* SPDX-License-Identifier: MIT */
/*
 * A small asynchronous polkit check (systemd's bus-polkit.c is not public API). Root callers
 * are allowed at once (libvirt hooks, amdsmi run as root); for everyone else the daemon asks
 * org.freedesktop.PolicyKit1 with CheckAuthorization and answers the call when polkit does.
 * No polkit on the bus means denied.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "amdsmid.h"

struct polkit_query {
        struct daemon *d;
        sd_bus_message *call;
        sd_bus_slot *slot;
        char *action;
        polkit_fn fn;
        void *userdata;
        void (*free_userdata)(void *);
        struct polkit_query *prev, *next;
};

struct polkit_registry {
        struct polkit_query *queries;
};

static void query_free(struct polkit_query *q) {
        struct polkit_registry *reg = q->d->polkit;

        if (q->prev)
                q->prev->next = q->next;
        else if (reg && reg->queries == q)
                reg->queries = q->next;
        if (q->next)
                q->next->prev = q->prev;
        sd_bus_slot_unref(q->slot);
        sd_bus_message_unref(q->call);
        if (q->free_userdata)
                q->free_userdata(q->userdata);
        free(q->action);
        free(q);
}

static void query_done(struct polkit_query *q, int r, const char *why) {
        q->fn(q->call, r, why, q->userdata);
        query_free(q);
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct polkit_query *q = userdata;
        const sd_bus_error *e;
        int authorized = 0, challenge = 0, r;

        e = sd_bus_message_get_error(reply);
        if (e) {
                if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                           SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
                        query_done(q, 0, "polkit is not running: only root may do this");
                        return 0;
                }
                log_warning("polkit failed to check %s: %s", q->action, e->message);
                query_done(q, 0, "polkit could not check the authorisation");
                return 0;
        }
        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r >= 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r < 0) {
                log_warning("polkit's answer for %s is malformed: %s", q->action, strerror(-r));
                query_done(q, 0, "polkit's answer was malformed");
                return 0;
        }
        if (authorized)
                query_done(q, 1, NULL);
        else if (challenge)
                query_done(q, 0, "authentication is required (allow interactive authorisation)");
        else
                query_done(q, 0, "not authorised by polkit");
        return 0;
}

int polkit_check(struct daemon *d, sd_bus_message *call, const char *action, polkit_fn fn,
                 void *userdata, void (*free_userdata)(void *)) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        struct polkit_query *q;
        const char *sender;
        uid_t uid;
        int r;

        r = sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT, &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return r;
        if (uid == 0) {
                fn(call, 1, NULL, userdata);
                if (free_userdata)
                        free_userdata(userdata);
                return 0;
        }
        sender = sd_bus_message_get_sender(call);
        if (!sender)
                return -EBADMSG;

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->d = d;
        q->call = sd_bus_message_ref(call);
        q->fn = fn;
        q->action = strdup(action);
        if (!q->action) {
                sd_bus_message_unref(q->call);
                free(q);
                return -ENOMEM;
        }
        r = sd_bus_message_new_method_call(d->bus, &m, "org.freedesktop.PolicyKit1",
                                           "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority",
                                           "CheckAuthorization");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sa{sv})s", "system-bus-name", 1, "name", "s",
                                          sender, action);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{ss}us", 0,
                                          (uint32_t) (sd_bus_message_get_allow_interactive_authorization(call) > 0),
                                          "");
        if (r >= 0)
                r = sd_bus_call_async(d->bus, &q->slot, m, on_reply, q, 0);
        if (r < 0) {
                sd_bus_message_unref(q->call);
                free(q->action);
                free(q);
                return r;
        }
        /* only now does the query own the caller's data */
        q->userdata = userdata;
        q->free_userdata = free_userdata;
        q->next = d->polkit->queries;
        if (q->next)
                q->next->prev = q;
        d->polkit->queries = q;
        return 0;
}

int polkit_init(struct daemon *d) {
        d->polkit = calloc(1, sizeof(*d->polkit));
        return d->polkit ? 0 : -ENOMEM;
}

void polkit_done(struct daemon *d) {
        if (!d->polkit)
                return;
        while (d->polkit->queries)
                query_free(d->polkit->queries);
        free(d->polkit);
        d->polkit = NULL;
}
