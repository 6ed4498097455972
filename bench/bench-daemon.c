/* SPDX-License-Identifier: MIT */
/*
 * amdsmid on the bus: the round trip of a property read and of GetMetrics(), against the
 * same round trip to dbus-daemon itself (org.freedesktop.DBus's Features property) in the
 * same run; the throughput of 8 concurrent clients; and amdsmid's CPU use while a client
 * samples 8 GPUs at 10 Hz. Run by bench/run.sh against amdsmid on a private bus:
 *
 *   DBUS_SYSTEM_BUS_ADDRESS=... bench-daemon AMDSMID_PID [ROUNDS]
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "bench-util.h"

#define BUS_NAME "org.amdsmi1"

/* The p-th quantile of @v in us: v[floor(p * (n - 1))], not bench_percentile()'s rank. */
static double pct_us(uint64_t *v, size_t n, double p) {
        /* v sorted by bench_median_u64() */
        size_t i = (size_t) (p * (double) (n - 1));

        return n ? (double) v[i] / 1000.0 : 0;
}

static int gpu_paths(sd_bus *bus, char ***ret, size_t *ret_n) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        char **paths = NULL;
        size_t n = 0;
        const char *p;
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, "/org/amdsmi1", "org.freedesktop.DBus.ObjectManager",
                               "GetManagedObjects", &error, &reply, NULL);
        if (r < 0) {
                fprintf(stderr, "GetManagedObjects: %s\n", error.message ? error.message : strerror(-r));
                sd_bus_error_free(&error);
                return r;
        }
        r = sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "oa{sa{sv}}")) > 0) {
                r = sd_bus_message_read(reply, "o", &p);
                if (r < 0)
                        break;
                paths = realloc(paths, (n + 1) * sizeof(char *));
                paths[n++] = strdup(p);
                r = sd_bus_message_skip(reply, "a{sa{sv}}");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        sd_bus_message_unref(reply);
        if (r < 0)
                return r;
        *ret = paths;
        *ret_n = n;
        return 0;
}

static int get_property(sd_bus *bus, const char *dest, const char *path, const char *iface,
                        const char *prop, const char *type) {
        sd_bus_message *reply = NULL;
        int r = sd_bus_get_property(bus, dest, path, iface, prop, NULL, &reply, type);

        sd_bus_message_unref(reply);
        return r;
}

static int call_metrics(sd_bus *bus, const char *path) {
        sd_bus_message *reply = NULL;
        int r = sd_bus_call_method(bus, BUS_NAME, path, "org.amdsmi1.Gpu", "GetMetrics", NULL,
                                   &reply, NULL);

        sd_bus_message_unref(reply);
        return r;
}

static int call_manager_metrics(sd_bus *bus) {
        sd_bus_message *reply = NULL;
        int r = sd_bus_call_method(bus, BUS_NAME, "/org/amdsmi1", "org.amdsmi1.Manager",
                                   "GetMetrics", NULL, &reply, NULL);

        sd_bus_message_unref(reply);
        return r;
}

/* GetDocument("ras", {}): `amdsmi ras --json` of every GPU through amdsmid */
static int call_document(sd_bus *bus, const char *verb) {
        sd_bus_message *reply = NULL;
        int r = sd_bus_call_method(bus, BUS_NAME, "/org/amdsmi1", "org.amdsmi1.Manager",
                                   "GetDocument", NULL, &reply, "sa{sv}", verb, 0);

        sd_bus_message_unref(reply);
        return r;
}

struct worker {
        char **paths;
        size_t n_paths;
        uint64_t until;
        unsigned long calls;
        int error;
};

static void *work(void *userdata) {
        struct worker *w = userdata;
        sd_bus *bus = NULL;
        size_t i = 0;

        if (sd_bus_open_system(&bus) < 0) {
                w->error = 1;
                return NULL;
        }
        while (bench_now_ns(CLOCK_MONOTONIC) < w->until) {
                if (get_property(bus, BUS_NAME, w->paths[i++ % w->n_paths], "org.amdsmi1.Gpu",
                                 "Product", "s") < 0) {
                        w->error = 1;
                        break;
                }
                w->calls++;
        }
        sd_bus_flush_close_unref(bus);
        return NULL;
}

/* CPU time of every thread of pid in nanoseconds (schedstat: exact, where /proc/PID/stat
 * counts 10 ms ticks, too coarse for a budget of 1 %). */
static int cpu_ns(pid_t pid, unsigned long long *ret) {
        char path[64];
        unsigned long long total = 0;
        struct dirent *de;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        d = opendir(path);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char file[384];
                unsigned long long ns;
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(file, sizeof(file), "%s/%s/schedstat", path, de->d_name);
                f = fopen(file, "re");
                if (!f)
                        continue; /* a worker thread that ended meanwhile */
                if (fscanf(f, "%llu", &ns) == 1)
                        total += ns;
                fclose(f);
        }
        closedir(d);
        *ret = total;
        return 0;
}

int main(int argc, char *argv[]) {
        sd_bus *bus = NULL;
        char **paths = NULL;
        size_t n_paths = 0;
        unsigned rounds = argc > 2 ? (unsigned) atoi(argv[2]) : 2000;
        pid_t pid = argc > 1 ? (pid_t) atoi(argv[1]) : 0;
        uint64_t *t;
        double ours, peer;
        int r;

        if (pid <= 0 || rounds == 0) {
                fprintf(stderr, "usage: bench-daemon AMDSMID_PID [ROUNDS]\n");
                return 2;
        }
        t = calloc(rounds, sizeof(*t));
        r = sd_bus_open_system(&bus);
        if (r < 0 || !t || gpu_paths(bus, &paths, &n_paths) < 0 || n_paths == 0) {
                fprintf(stderr, "cannot reach amdsmid: %s\n", strerror(r < 0 ? -r : EIO));
                return 1;
        }

        /* 1. property read round trip, and dbus-daemon's own property as the peer */
        for (unsigned i = 0; i < rounds; i++) {
                uint64_t s = bench_now_ns(CLOCK_MONOTONIC);

                if (get_property(bus, BUS_NAME, paths[i % n_paths], "org.amdsmi1.Gpu", "Product",
                                 "s") < 0)
                        return 1;
                t[i] = bench_now_ns(CLOCK_MONOTONIC) - s;
        }
        ours = bench_median_u64(t, rounds) / 1e3;
        printf("property read (Gpu.Product), %u rounds: median %.1f us, p90 %.1f us, p99 %.1f us\n",
               rounds, ours, pct_us(t, rounds, 0.9), pct_us(t, rounds, 0.99));
        for (unsigned i = 0; i < rounds; i++) {
                uint64_t s = bench_now_ns(CLOCK_MONOTONIC);

                if (get_property(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                 "org.freedesktop.DBus", "Features", "as") < 0)
                        return 1;
                t[i] = bench_now_ns(CLOCK_MONOTONIC) - s;
        }
        peer = bench_median_u64(t, rounds) / 1e3;
        printf("peer: dbus-daemon's own property (org.freedesktop.DBus.Features), %u rounds: "
               "median %.1f us\n", rounds, peer);
        printf("ratio: amdsmid property read / dbus-daemon property read = %.2fx "
               "(budget: < 200 us median)\n", peer > 0 ? ours / peer : 0);

        /* 2. GetMetrics round trip: rotating over the GPUs (each document is reused for
         * 50 ms, so this shows a mix of fresh and reused documents, as many clients see) */
        for (unsigned i = 0; i < rounds / 4; i++) {
                uint64_t s = bench_now_ns(CLOCK_MONOTONIC);

                if (call_metrics(bus, paths[i % n_paths]) < 0)
                        return 1;
                t[i] = bench_now_ns(CLOCK_MONOTONIC) - s;
        }
        {
                /* bench_median_u64() sorts: it runs before pct_us() reads the order */
                double med = bench_median_u64(t, rounds / 4) / 1e3;

                printf("GetMetrics(), %u rounds over %zu GPUs: median %.1f us, p90 %.1f us\n",
                       rounds / 4, n_paths, med, pct_us(t, rounds / 4, 0.9));
        }
        /* 2b. one RAS sample of every GPU (all blocks) through amdsmid: GetDocument("ras") */
        {
                unsigned n = rounds / 8 ? rounds / 8 : 1;

                for (unsigned i = 0; i < n; i++) {
                        uint64_t s = bench_now_ns(CLOCK_MONOTONIC);

                        if (call_document(bus, "ras") < 0) {
                                n = i;
                                break;
                        }
                        t[i] = bench_now_ns(CLOCK_MONOTONIC) - s;
                }
                if (n > 0) {
                        double med = bench_median_u64(t, n) / 1e3; /* sorts, before pct_us() */

                        printf("GetDocument(\"ras\") of every GPU, %u rounds: median %.1f us, "
                               "p90 %.1f us\n",
                               n, med, pct_us(t, n, 0.9));
                } else
                        printf("GetDocument(\"ras\"): not served (an amdsmid without health)\n");
        }
        /* after 60 ms of quiet (older than the reuse window: a fresh document each time);
         * every process on the path is cold then, so the same quiet before an amdsmid
         * property read and before dbus-daemon's own property shows what waking costs */
        {
                unsigned n = rounds / 8 < 41 ? rounds / 8 : 41;
                uint64_t *tp = calloc(n, sizeof(uint64_t)), *tq = calloc(n, sizeof(uint64_t));

                for (unsigned i = 0; i < n; i++) {
                        uint64_t s;

                        usleep(60000);
                        s = bench_now_ns(CLOCK_MONOTONIC);
                        if (call_metrics(bus, paths[i % n_paths]) < 0)
                                return 1;
                        t[i] = bench_now_ns(CLOCK_MONOTONIC) - s;
                        usleep(60000);
                        s = bench_now_ns(CLOCK_MONOTONIC);
                        if (get_property(bus, BUS_NAME, paths[i % n_paths], "org.amdsmi1.Gpu",
                                         "Product", "s") < 0)
                                return 1;
                        tp[i] = bench_now_ns(CLOCK_MONOTONIC) - s;
                        usleep(60000);
                        s = bench_now_ns(CLOCK_MONOTONIC);
                        if (get_property(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                         "org.freedesktop.DBus", "Features", "as") < 0)
                                return 1;
                        tq[i] = bench_now_ns(CLOCK_MONOTONIC) - s;
                }
                printf("after 60 ms idle, %u rounds: GetMetrics() fresh document median %.1f us; "
                       "property read %.1f us; peer dbus-daemon's own property %.1f us\n",
                       n, bench_median_u64(t, n) / 1e3, bench_median_u64(tp, n) / 1e3,
                       bench_median_u64(tq, n) / 1e3);
                free(tp);
                free(tq);
        }

        /* 3. throughput: 8 clients, 3 s of property reads */
        {
                struct worker w[8];
                pthread_t th[8];
                unsigned long total = 0;
                uint64_t until = bench_now_ns(CLOCK_MONOTONIC) + 3000000000ULL;

                for (int i = 0; i < 8; i++) {
                        w[i] = (struct worker){ .paths = paths, .n_paths = n_paths, .until = until };
                        pthread_create(&th[i], NULL, work, &w[i]);
                }
                for (int i = 0; i < 8; i++) {
                        pthread_join(th[i], NULL);
                        total += w[i].calls;
                        if (w[i].error)
                                fprintf(stderr, "client %d failed\n", i);
                }
                printf("throughput, 8 concurrent clients reading properties for 3 s: %.0f calls/s\n",
                       (double) total / 3.0);
        }

        /* 4. amdsmid's CPU while one client samples every GPU at 10 Hz for 10 s: with one
         * Manager.GetMetrics() per sample (every GPU in one document), with one
         * Gpu.GetMetrics() per GPU and sample, and with no client at all (the periodic check) */
        for (int mode = 0; mode < 3; mode++) {
                static const char *const what[] = {
                        "one Manager.GetMetrics() per sample",
                        "one Gpu.GetMetrics() per GPU and sample",
                        "idle (no client; the periodic check alone)",
                };
                unsigned long long before, after;
                uint64_t start = bench_now_ns(CLOCK_MONOTONIC), next = start;
                double per_call = 0, *calls = calloc(100 * (n_paths + 1), sizeof(double));
                size_t n_calls = 0;

                if (cpu_ns(pid, &before) < 0) {
                        fprintf(stderr, "cannot read /proc/%d/task\n", (int) pid);
                        return 1;
                }
                for (int tick = 0; tick < 100; tick++) {
                        uint64_t s = bench_now_ns(CLOCK_MONOTONIC);

                        if (mode == 0 && call_manager_metrics(bus) < 0)
                                return 1;
                        for (size_t i = 0; mode == 1 && i < n_paths; i++)
                                if (call_metrics(bus, paths[i]) < 0)
                                        return 1;
                        if (mode < 2)
                                calls[n_calls++] =
                                        (double) (bench_now_ns(CLOCK_MONOTONIC) - s) / 1e3;
                        next += 100000000ULL;
                        while (bench_now_ns(CLOCK_MONOTONIC) < next)
                                usleep((useconds_t) ((next - bench_now_ns(CLOCK_MONOTONIC)) /
                                                     1000));
                }
                (void) cpu_ns(pid, &after);
                if (n_calls)
                        per_call = bench_median(calls, n_calls);
                printf("amdsmid CPU, %zu GPUs sampled at 10 Hz for %.1f s, %s: %.2f %% of one "
                       "core (budget < 1 %%)",
                       n_paths, (double) (bench_now_ns(CLOCK_MONOTONIC) - start) / 1e9, what[mode],
                       100.0 * (double) (after - before) /
                               (double) (bench_now_ns(CLOCK_MONOTONIC) - start));
                if (n_calls)
                        printf("; one sample takes %.0f us (median)", per_call);
                printf("\n");
                free(calls);
        }
        for (size_t i = 0; i < n_paths; i++)
                free(paths[i]);
        free(paths);
        free(t);
        sd_bus_flush_close_unref(bus);
        return 0;
}
