/* SPDX-License-Identifier: MIT */
/* The libvirt calls of amdsmid's domain watching (libvirt-watch.h): the running domains and
 * their lifecycle events, on a connection the caller owns (a test opens test:///FILE and
 * drives its events in-process). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/virterror.h>

#include "libvirt-watch.h"

void watch_domains_free(struct watch_domain *doms, size_t n) {
        for (size_t i = 0; doms && i < n; i++)
                free(doms[i].xml);
        free(doms);
}

void watch_last_error(char *buf, size_t size) {
        const char *m = virGetLastErrorMessage();

        snprintf(buf, size, "%s", m && m[0] ? m : "unknown libvirt error");
}

int watch_list_running(virConnectPtr conn, struct watch_domain **ret, char *error,
                       size_t error_size) {
        virDomainPtr *list = NULL;
        struct watch_domain *doms;
        int n;

        n = virConnectListAllDomains(conn, &list, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
        if (n < 0) {
                watch_last_error(error, error_size);
                return -EIO;
        }
        doms = calloc(n > 0 ? (size_t) n : 1, sizeof(*doms));
        if (!doms) {
                for (int i = 0; i < n; i++)
                        virDomainFree(list[i]);
                free(list);
                return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                const char *name = virDomainGetName(list[i]);

                (void) virDomainGetUUIDString(list[i], doms[i].uuid);
                snprintf(doms[i].name, sizeof(doms[i].name), "%s", name ? name : "");
                doms[i].xml = virDomainGetXMLDesc(list[i], 0);
                virDomainFree(list[i]);
        }
        free(list);
        *ret = doms;
        return n;
}

struct subscription {
        watch_stopped_fn fn;
        void *userdata;
};

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail,
                        void *opaque) {
        struct subscription *s = opaque;
        char uuid[VIR_UUID_STRING_BUFLEN];
        const char *name;

        if (event != VIR_DOMAIN_EVENT_STOPPED && event != VIR_DOMAIN_EVENT_UNDEFINED)
                return 0;
        if (virDomainGetUUIDString(dom, uuid) < 0)
                return 0;
        name = virDomainGetName(dom);
        s->fn(uuid, name ? name : "", s->userdata);
        return 0;
}

int watch_subscribe(virConnectPtr conn, watch_stopped_fn fn, void *userdata) {
        struct subscription *s = calloc(1, sizeof(*s));
        int id;

        if (!s)
                return -ENOMEM;
        s->fn = fn;
        s->userdata = userdata;
        id = virConnectDomainEventRegisterAny(conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                              VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), s, free);
        if (id < 0) {
                free(s);
                return -EIO;
        }
        return id;
}

