/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's view of the libvirt domains (amdsmid.conf [libvirt] uri, default qemu:///system),
 * so that VM reservations follow the domains also when no hook runs: a domain that died
 * while amdsmid was down, or whose release hook never came.
 *
 * All libvirt calls happen on one worker thread with libvirt's default event loop, never on
 * the path of a hook's D-Bus call (a hook runs while libvirt waits for it). The thread posts
 * what it learns to the daemon's sd-event loop through a pipe:
 *
 *   connected  the domains running now (name, UUID, XML): amdsmid reconciles its
 *              reservations with them (sriov/dbus-vm.c)
 *   stopped    a domain stopped or was undefined (lifecycle event): its reservation goes
 *   lost       no connection (libvirtd not running, the URI refused): amdsmid says it cannot
 *              see domains and tries again every 30 s
 *
 * The connection is read-only: amdsmid only watches.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <libvirt/libvirt.h>

struct daemon;

struct watch_domain {
        char uuid[37];
        char name[256];
        char *xml; /* the live XML (malloc'd), NULL if it could not be read */
};

void watch_domains_free(struct watch_domain *doms, size_t n);

/* libvirt's last error message of this thread, or "unknown libvirt error". */
void watch_last_error(char *buf, size_t size);

/* The running domains of @conn, with their XML. @return the count (array in *ret) or a
 * negative errno; libvirt's message in @error. */
int watch_list_running(virConnectPtr conn, struct watch_domain **ret, char *error,
                       size_t error_size);

/* Lifecycle events of @conn: @fn(uuid, name, userdata) for each domain that stops or is
 * undefined. @return the callback ID (for virConnectDomainEventDeregisterAny) or a negative
 * errno. The event loop (virEventRegisterDefaultImpl) must exist. */
typedef void (*watch_stopped_fn)(const char *uuid, const char *name, void *userdata);
int watch_subscribe(virConnectPtr conn, watch_stopped_fn fn, void *userdata);

/* amdsmid: starts the worker thread on @uri (a no-op returning 0 when @uri is NULL or ""),
 * and stops it. */
int libvirt_watch_start(struct daemon *d, const char *uri);
void libvirt_watch_stop(void);
/* For ListVms: the URI, whether it is connected, and why not (NULL when connected). */
void libvirt_watch_status(const char **ret_uri, bool *ret_connected, const char **ret_error);
