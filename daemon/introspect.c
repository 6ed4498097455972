/* SPDX-License-Identifier: MIT */
/*
 * amdsmid --bus-introspect=INTERFACE|all: the introspection XML of the daemon's interfaces,
 * produced by sd-bus from the very vtables the daemon serves (a private connection over a
 * socketpair, no bus and no GPU needed). systemd/dbus/<interface>.xml are checked-in copies,
 * and a test diffs the two.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "amdsmid.h"

static const char *const interfaces[] = {
        AMDSMI_BUS_IFACE_MANAGER, AMDSMI_BUS_IFACE_GPU, AMDSMI_BUS_IFACE_PARTITION,
        AMDSMI_BUS_IFACE_POWER, AMDSMI_BUS_IFACE_SRIOV, AMDSMI_BUS_IFACE_HEALTH,
        AMDSMI_BUS_IFACE_PERFORMANCE,
};

struct server {
        sd_bus *bus;
        volatile bool stop;
};

static void *serve(void *userdata) {
        struct server *s = userdata;

        while (!s->stop) {
                int r = sd_bus_process(s->bus, NULL);

                if (r < 0)
                        break;
                if (r == 0)
                        (void) sd_bus_wait(s->bus, 100000);
        }
        return NULL;
}

static int introspect_path(sd_bus *client, const char *path, char **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *xml;
        int r;

        r = sd_bus_call_method(client, NULL, path, "org.freedesktop.DBus.Introspectable",
                               "Introspect", &error, &reply, NULL);
        if (r < 0) {
                fprintf(stderr, "amdsmid: cannot introspect %s: %s\n", path,
                        error.message ? error.message : strerror(-r));
                return r;
        }
        r = sd_bus_message_read(reply, "s", &xml);
        if (r < 0)
                return r;
        *ret = strdup(xml);
        return *ret ? 0 : -ENOMEM;
}

/* The <interface name="@name"> element of @xml, printed with its indentation. */
static int print_interface(const char *xml, const char *name) {
        char open[128];
        const char *start, *end;

        snprintf(open, sizeof(open), "<interface name=\"%s\">", name);
        start = strstr(xml, open);
        if (!start)
                return -ENOENT;
        end = strstr(start, "</interface>");
        if (!end)
                return -EBADMSG;
        end += strlen("</interface>");
        printf(" %.*s\n", (int) (end - start), start);
        return 0;
}

int introspect_main(const char *what) {
        struct daemon d = {};
        struct dgpu *g = NULL;
        struct server server = {};
        sd_bus *client = NULL;
        pthread_t thread;
        bool started = false;
        char *manager_xml = NULL, *gpu_xml = NULL;
        sd_id128_t id = SD_ID128_MAKE(6a, 6d, 64, 73, 6d, 69, 64, 00, 69, 6e, 74, 72, 6f, 73, 70,
                                      65);
        int fds[2] = { -1, -1 }, r;
        bool all = strcmp(what, "all") == 0, known = all;

        for (size_t i = 0; i < ELEMENTSOF(interfaces); i++)
                if (strcmp(what, interfaces[i]) == 0)
                        known = true;
        if (!known) {
                fprintf(stderr, "amdsmid: unknown interface \"%s\" (all, %s, %s, %s, %s, %s)\n",
                        what, interfaces[0], interfaces[1], interfaces[2], interfaces[3],
                        interfaces[4]);
                return -EINVAL;
        }

        /* one GPU object to introspect, at a made-up path */
        g = calloc(1, sizeof(*g));
        d.gpus = &g;
        if (!g)
                return -ENOMEM;
        g->d = &d;
        d.n_gpus = 1;
        r = amdsmi_bus_gpu_path("0000:00:00.0", &g->path);
        if (r < 0)
                goto out;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) {
                r = -errno;
                goto out;
        }
        r = sd_bus_new(&server.bus);
        if (r >= 0)
                r = sd_bus_set_fd(server.bus, fds[0], fds[0]);
        if (r >= 0)
                fds[0] = -1;
        if (r >= 0)
                r = sd_bus_set_server(server.bus, 1, id);
        if (r >= 0)
                r = sd_bus_set_anonymous(server.bus, true);
        if (r >= 0)
                r = manager_register(&d, server.bus);
        if (r >= 0)
                r = sd_bus_start(server.bus);
        if (r >= 0)
                r = sd_bus_new(&client);
        if (r >= 0)
                r = sd_bus_set_fd(client, fds[1], fds[1]);
        if (r >= 0)
                fds[1] = -1;
        if (r >= 0)
                r = sd_bus_set_anonymous(client, true);
        if (r >= 0)
                r = sd_bus_start(client);
        if (r < 0)
                goto out;
        r = -pthread_create(&thread, NULL, serve, &server);
        if (r < 0)
                goto out;
        started = true;

        r = introspect_path(client, AMDSMI_BUS_PATH, &manager_xml);
        if (r >= 0)
                r = introspect_path(client, g->path, &gpu_xml);
        if (r < 0)
                goto out;

        printf("<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
               "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n"
               "<node>\n");
        for (size_t i = 0; i < ELEMENTSOF(interfaces) && r >= 0; i++) {
                if (!all && strcmp(what, interfaces[i]) != 0)
                        continue;
                r = print_interface(i == 0 ? manager_xml : gpu_xml, interfaces[i]);
                if (r < 0)
                        fprintf(stderr, "amdsmid: %s is missing from the introspection data\n",
                                interfaces[i]);
        }
        printf("</node>\n");
        if (fflush(stdout) != 0 && r >= 0)
                r = -errno;
out:
        if (started) {
                server.stop = true;
                sd_bus_close(client);
                pthread_join(thread, NULL);
        }
        if (r < 0 && r != -ENOENT)
                fprintf(stderr, "amdsmid: --bus-introspect: %s\n", strerror(-r));
        sd_bus_flush_close_unref(client);
        sd_bus_flush_close_unref(server.bus);
        if (fds[0] >= 0)
                close(fds[0]);
        if (fds[1] >= 0)
                close(fds[1]);
        free(manager_xml);
        free(gpu_xml);
        if (g)
                free(g->path);
        free(g);
        return r;
}
