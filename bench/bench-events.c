/* SPDX-License-Identifier: MIT */
/*
 * bench-events CTL_SOCKET BDF [ROUNDS]: the latency of a KFD event from its injection to the
 * org.amdsmi1.Health.Event signal at a subscriber. bench/run.sh runs amdsmid on a private bus
 * (DBUS_SYSTEM_BUS_ADDRESS) with the simulator's KFD shim; this process subscribes
 * (Manager.SubscribeEvents), then, ROUNDS times, writes "kfd-event BDF thermal_throttle" on a
 * control connection of the simulator kept open (no process start in the figure) and waits
 * for the signal. Prints the median and p99 of the whole path, and the control round trip
 * alone (the simulator's part: request, event queued to amdsmid's fd, answer).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "bench-util.h"

static unsigned got;

static int on_event(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *kind = NULL, *json = NULL;

        if (sd_bus_message_read(m, "ss", &kind, &json) >= 0 && strcmp(kind, "thermal_throttle") == 0)
                got++;
        return 0;
}

/* One request on the control connection; waits for its "ok N" line and body. */
static int ctl_request(int fd, const char *req) {
        char buf[512];
        size_t len = 0;

        if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t) strlen(req))
                return -errno;
        for (;;) {
                ssize_t k = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
                char *nl;

                if (k <= 0)
                        return k == 0 ? -ECONNRESET : -errno;
                len += (size_t) k;
                buf[len] = '\0';
                nl = strchr(buf, '\n');
                if (!nl)
                        continue;
                if (strncmp(buf, "ok ", 3) != 0) {
                        fprintf(stderr, "bench-events: %s", buf);
                        return -EIO;
                }
                if (len - (size_t) (nl + 1 - buf) >= strtoul(buf + 3, NULL, 10))
                        return 0;
        }
}

static void report(const char *label, uint64_t *v, unsigned n) {
        printf("%-52s median %llu us  p99 %llu us  (n=%u)\n", label,
               (unsigned long long) (bench_median_u64(v, n) / 1000),
               (unsigned long long) (bench_percentile_u64(v, n, 99) / 1000), n);
}

int main(int argc, char *argv[]) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        sd_bus *bus = NULL;
        uint64_t *total, *ctl;
        unsigned rounds = argc > 3 ? (unsigned) strtoul(argv[3], NULL, 10) : 500;
        char req[128];
        int fd, r;

        if (argc < 3 || rounds == 0 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "usage: bench-events CTL_SOCKET BDF [ROUNDS]\n");
                return 2;
        }
        total = calloc(rounds, sizeof(*total));
        ctl = calloc(rounds, sizeof(*ctl));
        if (!total || !ctl)
                return 1;
        r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, "org.amdsmi1", NULL, "org.amdsmi1.Health", "Event",
                                        on_event, NULL);
        if (r >= 0)
                r = sd_bus_call_method(bus, "org.amdsmi1", "/org/amdsmi1", "org.amdsmi1.Manager",
                                       "SubscribeEvents", &error, NULL, NULL);
        if (r < 0) {
                fprintf(stderr, "bench-events: cannot subscribe: %s\n",
                        error.message ? error.message : strerror(-r));
                return 1;
        }
        strcpy(sa.sun_path, argv[1]);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                fprintf(stderr, "bench-events: %s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        snprintf(req, sizeof(req), "kfd-event %s thermal_throttle\n", argv[2]);
        /* 20 warm-up events, then the rounds */
        for (unsigned i = 0; i < rounds + 20; i++) {
                unsigned want = got + 1;
                uint64_t t0 = bench_now_ns(CLOCK_MONOTONIC), t1;

                r = ctl_request(fd, req);
                if (r < 0) {
                        fprintf(stderr, "bench-events: kfd-event: %s\n", strerror(-r));
                        return 1;
                }
                t1 = bench_now_ns(CLOCK_MONOTONIC);
                while (got < want) {
                        r = sd_bus_process(bus, NULL);
                        if (r < 0) {
                                fprintf(stderr, "bench-events: bus: %s\n", strerror(-r));
                                return 1;
                        }
                        if (r == 0 && sd_bus_wait(bus, 5000000) == 0 && got < want) {
                                fprintf(stderr, "bench-events: no signal in 5 s\n");
                                return 1;
                        }
                }
                if (i >= 20) {
                        total[i - 20] = bench_now_ns(CLOCK_MONOTONIC) - t0;
                        ctl[i - 20] = t1 - t0;
                }
        }
        report("injection -> Health.Event at the subscriber", total, rounds);
        report("  of which the control round trip (simulator)", ctl, rounds);
        close(fd);
        sd_bus_flush_close_unref(bus);
        free(total);
        free(ctl);
        return 0;
}
