/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's Prometheus endpoint (fleet/): what a rendering and a scrape cost, against the JSON
 * path (Manager.GetMetrics()) in the same run. Run by bench/run.sh on the simulated 8 x MI300X
 * in CPX (64 partitions), amdsmid under systemd-socket-activate on a private bus:
 *
 *   bench-metrics render DIR [ROUNDS]
 *        metrics_render() of the documents DIR/{list,static,metric,ras,power,partition,health,
 *        sriov,apply}.json (what `amdsmi VERB --json` printed: the documents amdsmid renders
 *        from), ROUNDS times per format: median, p90, bytes; and, as the peer, the metric
 *        document serialised as JSON (what GetMetrics sends)
 *   DBUS_SYSTEM_BUS_ADDRESS=... bench-metrics scrape PORT [ROUNDS [FRESH_ROUNDS [INTERVAL_MS]]]
 *        GET /metrics on 127.0.0.1:PORT with this file's HTTP/1.1 client, as Prometheus asks
 *        (text, and OpenMetrics with Prometheus' Accept; the connection kept when the server
 *        keeps it), alternated with Manager.GetMetrics(); back to back (within [metrics]
 *        interval_ms the rendering is cached), then FRESH_ROUNDS times each after
 *        INTERVAL_MS + 10 % of quiet (a new collection). Times are from the connect (or the
 *        request's first byte on a kept connection) to the last byte of the reply; nothing
 *        subtracted.
 *   bench-metrics scrapers PORT CLIENTS HZ SECONDS
 *        CLIENTS threads, each with its own connection, each scraping at HZ for SECONDS
 *        (their phases spread over the period): scrapes, failures, latency, bytes
 *   DBUS_SYSTEM_BUS_ADDRESS=... bench-metrics dbus-client HZ SECONDS
 *        one client calling Manager.GetMetrics() at HZ for SECONDS (the sampler's consumer)
 *
 * amdsmid's CPU and its sysfs reads during `scrapers` are measured by run.sh (/proc of its
 * child, strace), not here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "bench-util.h"
#include "metrics.h"

#define BUS_NAME "org.amdsmi1"
/* what Prometheus 2.42 sends */
#define PROMETHEUS_ACCEPT                                                          \
        "application/openmetrics-text;version=1.0.0,application/openmetrics-text;" \
        "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

static void sleep_until(uint64_t t) {
        for (uint64_t n = bench_now_ns(CLOCK_MONOTONIC); n < t; n = bench_now_ns(CLOCK_MONOTONIC)) {
                struct timespec ts = { .tv_sec = (time_t) ((t - n) / 1000000000ULL),
                                       .tv_nsec = (long) ((t - n) % 1000000000ULL) };

                nanosleep(&ts, NULL);
        }
}

/* A series of measurements: sorted in place by series_median() and series_pct(). */
struct series {
        uint64_t *v;
        size_t n, size;
};

static void series_add(struct series *s, uint64_t v) {
        if (s->n == s->size) {
                uint64_t *nv;

                s->size = s->size ? 2 * s->size : 64;
                nv = realloc(s->v, s->size * sizeof(*s->v));
                if (!nv) {
                        fprintf(stderr, "out of memory\n");
                        exit(1);
                }
                s->v = nv;
        }
        s->v[s->n++] = v;
}

/* The p-th quantile: the value nearest to rank p * (n - 1), not bench_percentile()'s rank. */
static double series_pct(struct series *s, double p) {
        if (s->n == 0)
                return 0;
        qsort(s->v, s->n, sizeof(*s->v), bench_cmp_u64);
        return (double) s->v[(size_t) (p * (double) (s->n - 1) + 0.5)];
}

static double series_median(struct series *s) {
        return (double) bench_median_u64(s->v, s->n);
}

/* ---- render ------------------------------------------------------------------------------ */

static const char *const verbs[] = {
        "list", "static", "metric", "ras", "power", "partition", "health", "sriov", "apply",
};
#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))

static size_t count_series(const char *text) {
        size_t n = 0;

        for (const char *l = text; *l;) {
                const char *e = strchr(l, '\n');

                if (*l != '#' && *l != '\n')
                        n++;
                if (!e)
                        break;
                l = e + 1;
        }
        return n;
}

static size_t gpus_and_partitions(json_object *partition, size_t *ret_partitions) {
        json_object *gpus, *g, *parts;
        size_t n = 0, p = 0;

        if (partition && json_object_object_get_ex(partition, "gpus", &gpus)) {
                n = json_object_array_length(gpus);
                for (size_t i = 0; i < n; i++) {
                        g = json_object_array_get_idx(gpus, i);
                        if (json_object_object_get_ex(g, "partitions", &parts) &&
                            json_object_is_type(parts, json_type_array))
                                p += json_object_array_length(parts);
                }
        }
        *ret_partitions = p;
        return n;
}

static int bench_render(const char *dir, unsigned rounds) {
        json_object *docs[N_VERBS] = {};
        struct series t[2] = {}, json_t = {};
        size_t size[2] = {}, n_series[2] = {}, json_size = 0, n_gpus, n_parts;
        uint64_t first[2] = {};
        struct metrics_input in;
        int r = 0;

        for (size_t i = 0; i < N_VERBS; i++) {
                char path[4096];

                snprintf(path, sizeof(path), "%s/%s.json", dir, verbs[i]);
                docs[i] = json_object_from_file(path);
                if (!docs[i])
                        printf("(no %s document: %s; its families are left out)\n", verbs[i],
                               json_util_get_last_err());
        }
        if (!docs[2] || !docs[5]) {
                fprintf(stderr, "the metric and partition documents are needed under %s\n", dir);
                r = 1;
                goto out;
        }
        n_gpus = gpus_and_partitions(docs[5], &n_parts);

        in = (struct metrics_input){
                .list = docs[0],
                .static_doc = docs[1],
                .metric = docs[2],
                .ras = docs[3],
                .power = docs[4],
                .partition = docs[5],
                .health = docs[6],
                .sriov = docs[7],
                .apply = docs[8],
                .identity = true,
                .up = true,
                .scrape_duration_s = 0.001,
        };

        for (int f = 0; f < 2; f++) {
                for (unsigned i = 0; i <= rounds; i++) {
                        char *text = NULL;
                        uint64_t s = bench_now_ns(CLOCK_MONOTONIC), e;

                        if (metrics_render(&in, (enum metrics_format) f, &text, &size[f]) < 0) {
                                fprintf(stderr, "metrics_render: out of memory\n");
                                r = 1;
                                goto out;
                        }
                        e = bench_now_ns(CLOCK_MONOTONIC);
                        if (i == 0) {
                                /* the first one apart: caches and allocator cold */
                                first[f] = e - s;
                                n_series[f] = count_series(text);
                        } else {
                                series_add(&t[f], e - s);
                        }
                        free(text);
                }
        }
        for (unsigned i = 0; i < rounds; i++) {
                uint64_t s = bench_now_ns(CLOCK_MONOTONIC);
                const char *j = json_object_to_json_string_ext(docs[2], JSON_C_TO_STRING_PLAIN);

                json_size = strlen(j);
                series_add(&json_t, bench_now_ns(CLOCK_MONOTONIC) - s);
        }

        printf("documents: %s (`amdsmi VERB --json`), %zu GPUs, %zu partitions\n", dir, n_gpus,
               n_parts);
        for (int f = 0; f < 2; f++)
                printf("metrics_render(), %s, %u rounds: median %.1f us, p90 %.1f us (first %.1f "
                       "us); %zu bytes, %zu samples\n",
                       f == METRICS_FORMAT_TEXT ? "text 0.0.4" : "OpenMetrics 1.0", rounds,
                       series_median(&t[f]) / 1e3, series_pct(&t[f], 0.9) / 1e3,
                       (double) first[f] / 1e3, size[f], n_series[f]);
        printf("peer: the metric document as plain JSON (json_object_to_json_string_ext, what "
               "GetMetrics sends), %u rounds: median %.1f us, %zu bytes\n",
               rounds, series_median(&json_t) / 1e3, json_size);
        printf("budget: render <= 1 ms median: text %s, OpenMetrics %s\n",
               series_median(&t[0]) <= 1e6 ? "met" : "NOT met",
               series_median(&t[1]) <= 1e6 ? "met" : "NOT met");
out:
        for (size_t i = 0; i < N_VERBS; i++)
                json_object_put(docs[i]);
        free(t[0].v);
        free(t[1].v);
        free(json_t.v);
        return r;
}

/* ---- HTTP client ------------------------------------------------------------------------- */

struct http {
        int port;
        int fd;          /* the connection the server kept, or -1 */
        unsigned reused; /* requests sent on a connection kept from the one before */
        char *buf;
        size_t size;
};

static int http_connect(int port) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
        struct timeval tv = { .tv_sec = 10 };
        int one = 1, fd;

        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fd, (struct sockaddr *) &a, sizeof(a)) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        return fd;
}

static void http_close(struct http *h) {
        if (h->fd >= 0)
                close(h->fd);
        h->fd = -1;
}

/* GET /metrics as Prometheus asks (HTTP/1.1, no Connection header: it would keep the
 * connection): on the connection of the previous request if the server kept it, else on a new
 * one. The body's length in *ret_body (its bytes at h->buf + *ret_offset). @return 0, or a
 * negative errno, or -EPROTO for a reply other than 200. */
static int http_get(struct http *h, const char *accept, size_t *ret_body, size_t *ret_offset) {
        char req[512];
        size_t have = 0, head = 0, body = SIZE_MAX;
        bool close_after = false;
        int n, r;

        if (h->fd >= 0) {
                h->reused++;
        } else {
                h->fd = http_connect(h->port);
                if (h->fd < 0)
                        return h->fd;
        }
        n = snprintf(req, sizeof(req),
                     "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: bench-metrics\r\n"
                     "%s%s%s\r\n",
                     h->port, accept ? "Accept: " : "", accept ? accept : "", accept ? "\r\n" : "");
        if (send(h->fd, req, (size_t) n, MSG_NOSIGNAL) != n) {
                r = -errno;
                http_close(h);
                return r ? r : -EIO;
        }
        for (;;) {
                ssize_t k;

                if (head && have >= head + body)
                        break;
                if (have == h->size) {
                        char *nb = realloc(h->buf, h->size ? 2 * h->size : 256 * 1024);

                        if (!nb)
                                return -ENOMEM;
                        h->size = h->size ? 2 * h->size : 256 * 1024;
                        h->buf = nb;
                }
                k = recv(h->fd, h->buf + have, h->size - have, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = k < 0 ? -errno : 0;
                        http_close(h);
                        if (head && body == SIZE_MAX && r == 0)
                                break; /* no Content-Length: the body ends with the connection */
                        return r ? r : -ECONNRESET;
                }
                have += (size_t) k;
                if (!head) {
                        char *end = memmem(h->buf, have, "\r\n\r\n", 4);

                        if (!end)
                                continue;
                        head = (size_t) (end - h->buf) + 4;
                        if (have < 12 || memcmp(h->buf + 9, "200", 3) != 0) {
                                http_close(h);
                                return -EPROTO;
                        }
                        for (char *l = h->buf; l < end; l++) {
                                if (*l != '\n')
                                        continue;
                                if (strncasecmp(l + 1, "Content-Length:", 15) == 0)
                                        body = (size_t) strtoull(l + 16, NULL, 10);
                                else if (strncasecmp(l + 1, "Connection: close", 17) == 0)
                                        close_after = true;
                        }
                }
        }
        if (body == SIZE_MAX)
                body = have - head;
        if (close_after)
                http_close(h);
        *ret_body = body;
        *ret_offset = head;
        return 0;
}

/* FNV-1a of a body: tells a new rendering from the cached one */
static uint64_t hash(const char *p, size_t n) {
        uint64_t h = 14695981039346656037ULL;

        for (size_t i = 0; i < n; i++)
                h = (h ^ (unsigned char) p[i]) * 1099511628211ULL;
        return h;
}

/* ---- scrape ------------------------------------------------------------------------------ */

static int get_metrics(sd_bus *bus, size_t *ret_size, uint64_t *ret_hash) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *json;
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, "/org/amdsmi1", "org.amdsmi1.Manager", "GetMetrics",
                               &error, &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &json);
        if (r >= 0) {
                *ret_size = strlen(json);
                if (ret_hash)
                        *ret_hash = hash(json, *ret_size);
        } else
                fprintf(stderr, "GetMetrics: %s\n", error.message ? error.message : strerror(-r));
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        return r;
}

enum {
        WAY_TEXT,
        WAY_OM,
        WAY_DBUS,
        N_WAYS
};

static const char *const way_name[N_WAYS] = {
        "HTTP GET /metrics, text 0.0.4",
        "HTTP GET /metrics, OpenMetrics (Prometheus' Accept)",
        "D-Bus Manager.GetMetrics() (JSON)",
};

struct way {
        struct series t, bytes;
        struct series collect; /* amdsmi_scrape_duration_seconds of new renderings, in ns */
        size_t changed;        /* replies that differ from the previous one of this way */
        uint64_t last;
};

/* amdsmid's own figure in a rendering: its collection and the format's last rendering */
static void scrape_duration(const char *body, size_t size, struct series *s) {
        static const char key[] = "\namdsmi_scrape_duration_seconds ";
        const char *p = memmem(body, size, key, sizeof(key) - 1);

        if (p)
                series_add(s, (uint64_t) (strtod(p + sizeof(key) - 1, NULL) * 1e9));
}

static int one(struct http *h, sd_bus *bus, int way, struct way *w) {
        size_t size = 0, off = 0;
        uint64_t s = bench_now_ns(CLOCK_MONOTONIC), e, hh = 0;
        int r;

        if (way == WAY_DBUS)
                r = get_metrics(bus, &size, &hh);
        else
                r = http_get(h, way == WAY_OM ? PROMETHEUS_ACCEPT : NULL, &size, &off);
        e = bench_now_ns(CLOCK_MONOTONIC);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", way_name[way], strerror(-r));
                return r;
        }
        series_add(&w->t, e - s);
        series_add(&w->bytes, size);
        if (way != WAY_DBUS)
                hh = hash(h->buf + off, size);
        if (w->last && hh != w->last) {
                w->changed++;
                if (way != WAY_DBUS)
                        scrape_duration(h->buf + off, size, &w->collect);
        }
        w->last = hh;
        return 0;
}

static void print_ways(struct way *w, size_t rounds, const char *what) {
        for (int i = 0; i < N_WAYS; i++)
                printf("%s, %s, %zu rounds: median %.1f us, p90 %.1f us; %.0f bytes (%zu new "
                       "%s)\n",
                       way_name[i], what, rounds, series_median(&w[i].t) / 1e3,
                       series_pct(&w[i].t, 0.9) / 1e3, series_median(&w[i].bytes), w[i].changed,
                       i == WAY_DBUS ? "documents" : "renderings");
        for (int i = 0; i < N_WAYS; i++)
                if (w[i].collect.n)
                        printf("  %s: amdsmi_scrape_duration_seconds of the new renderings "
                               "(amdsmid's collection and rendering): median %.1f us\n",
                               way_name[i], series_median(&w[i].collect) / 1e3);
}

static void print_ratio(struct way *w, const char *what) {
        double http = series_median(&w[WAY_TEXT].t), dbus = series_median(&w[WAY_DBUS].t);
        double hb = series_median(&w[WAY_TEXT].bytes), db = series_median(&w[WAY_DBUS].bytes);

        if (dbus > 0 && db > 0)
                printf("ratio, %s: HTTP /metrics (text) / D-Bus GetMetrics: time %.2fx (%.1f us / "
                       "%.1f us), bytes %.2fx (%.0f / %.0f)\n",
                       what, http / dbus, http / 1e3, dbus / 1e3, hb / db, hb, db);
}

static int bench_scrape(int port, unsigned rounds, unsigned fresh, unsigned interval_ms) {
        struct http h = { .port = port, .fd = -1 };
        struct way cached[N_WAYS] = {}, later[N_WAYS] = {};
        unsigned scrapes = 0;
        sd_bus *bus = NULL;
        double m;
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "cannot connect to the bus: %s\n", strerror(-r));
                return 1;
        }
        /* a first scrape and call: the bus connection made, the sampler started */
        for (int i = 0; i < N_WAYS; i++) {
                struct way warm = {};

                if (one(&h, bus, i, &warm) < 0)
                        return 1;
                free(warm.t.v);
                free(warm.bytes.v);
        }
        /* back to back, alternated: each round one of every way */
        for (unsigned i = 0; i < rounds; i++)
                for (int k = 0; k < N_WAYS; k++)
                        if (one(&h, bus, k, &cached[k]) < 0)
                                return 1;
        print_ways(cached, rounds, "back to back (mostly the cached rendering)");
        print_ratio(cached, "back to back");
        /* each after more than interval_ms of quiet: a new collection and rendering */
        for (int k = 0; k < N_WAYS; k++)
                later[k].last = cached[k].last;
        for (unsigned i = 0; i < fresh; i++)
                for (int k = 0; k < N_WAYS; k++) {
                        usleep(interval_ms * 1100);
                        if (one(&h, bus, k, &later[k]) < 0)
                                return 1;
                }
        if (fresh) {
                print_ways(later, fresh, "each after interval_ms + 10 % of quiet");
                print_ratio(later, "after quiet");
        }
        scrapes = 2 * (rounds + fresh + 1);
        printf("HTTP connections: %u of %u scrapes reused the previous one (the server %s)\n",
               h.reused, scrapes,
               h.reused ? "keeps connections" : "closes every connection: a new one per scrape");
        m = series_median(&cached[WAY_TEXT].t);
        printf("budget: one scrape end to end <= 3 ms median: back to back %s (%.1f us)",
               m <= 3e6 ? "met" : "NOT met", m / 1e3);
        if (fresh) {
                m = series_median(&later[WAY_TEXT].t);
                printf(", after quiet %s (%.1f us)", m <= 3e6 ? "met" : "NOT met", m / 1e3);
        }
        printf("\n");
        for (int i = 0; i < N_WAYS; i++) {
                free(cached[i].t.v);
                free(cached[i].bytes.v);
                free(later[i].t.v);
                free(later[i].bytes.v);
                free(cached[i].collect.v);
                free(later[i].collect.v);
        }
        http_close(&h);
        free(h.buf);
        sd_bus_flush_close_unref(bus);
        return 0;
}

/* ---- scrapers ---------------------------------------------------------------------------- */

struct scraper {
        int port;
        uint64_t start, period, until;
        struct series t, bytes, renderings; /* renderings: the hash of each body */
        unsigned failures;
};

static void *scraper_run(void *userdata) {
        struct scraper *s = userdata;
        struct http h = { .port = s->port, .fd = -1 };

        for (uint64_t next = s->start; next < s->until; next += s->period) {
                size_t size, off;
                uint64_t t0;

                sleep_until(next);
                t0 = bench_now_ns(CLOCK_MONOTONIC);
                if (http_get(&h, NULL, &size, &off) < 0) {
                        s->failures++;
                        continue;
                }
                series_add(&s->t, bench_now_ns(CLOCK_MONOTONIC) - t0);
                series_add(&s->bytes, size);
                series_add(&s->renderings, hash(h.buf + off, size));
        }
        http_close(&h);
        free(h.buf);
        return NULL;
}

static int bench_scrapers(int port, unsigned clients, double hz, double seconds) {
        struct scraper *s = calloc(clients, sizeof(*s));
        pthread_t *th = calloc(clients, sizeof(*th));
        struct series all = {}, bytes = {}, renderings = {};
        size_t distinct = 0;
        uint64_t period = (uint64_t) (1e9 / hz),
                 start = bench_now_ns(CLOCK_MONOTONIC) + 100000000ULL;
        unsigned failures = 0;

        if (!s || !th)
                return 1;
        for (unsigned i = 0; i < clients; i++) {
                s[i] = (struct scraper){
                        .port = port,
                        .start = start + period * i / clients,
                        .period = period,
                        .until = start + (uint64_t) (seconds * 1e9),
                };
                if (pthread_create(&th[i], NULL, scraper_run, &s[i]) != 0) {
                        fprintf(stderr, "cannot start scraper %u\n", i);
                        return 1;
                }
        }
        for (unsigned i = 0; i < clients; i++) {
                pthread_join(th[i], NULL);
                for (size_t k = 0; k < s[i].t.n; k++) {
                        series_add(&all, s[i].t.v[k]);
                        series_add(&bytes, s[i].bytes.v[k]);
                        series_add(&renderings, s[i].renderings.v[k]);
                }
                failures += s[i].failures;
                free(s[i].t.v);
                free(s[i].bytes.v);
                free(s[i].renderings.v);
        }
        /* each collection renders anew (amdsmi_scrape_duration_seconds changes with it) */
        qsort(renderings.v, renderings.n, sizeof(*renderings.v), bench_cmp_u64);
        for (size_t k = 0; k < renderings.n; k++)
                distinct += k == 0 || renderings.v[k] != renderings.v[k - 1];
        printf("%u scrapers at %.3g Hz for %.0f s (phases spread over the period): %zu scrapes, "
               "%u failed; latency median %.1f us, p90 %.1f us, max %.1f us; %.0f bytes; %zu "
               "distinct renderings (collections)\n",
               clients, hz, seconds, all.n, failures, series_median(&all) / 1e3,
               series_pct(&all, 0.9) / 1e3, series_pct(&all, 1.0) / 1e3, series_median(&bytes),
               distinct);
        free(renderings.v);
        free(all.v);
        free(bytes.v);
        free(s);
        free(th);
        return failures ? 1 : 0;
}

static int bench_dbus_client(double hz, double seconds) {
        struct series t = {};
        sd_bus *bus = NULL;
        uint64_t period = (uint64_t) (1e9 / hz), start = bench_now_ns(CLOCK_MONOTONIC),
                 until = start + (uint64_t) (seconds * 1e9);
        size_t size = 0;
        unsigned failures = 0;
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "cannot connect to the bus: %s\n", strerror(-r));
                return 1;
        }
        for (uint64_t next = start; next < until; next += period) {
                uint64_t t0;

                sleep_until(next);
                t0 = bench_now_ns(CLOCK_MONOTONIC);
                if (get_metrics(bus, &size, NULL) < 0)
                        failures++;
                else
                        series_add(&t, bench_now_ns(CLOCK_MONOTONIC) - t0);
        }
        printf("one D-Bus client, Manager.GetMetrics() at %.3g Hz for %.0f s: %zu calls, %u "
               "failed; median %.1f us; %zu bytes\n",
               hz, seconds, t.n, failures, series_median(&t) / 1e3, size);
        free(t.v);
        sd_bus_flush_close_unref(bus);
        return failures ? 1 : 0;
}

static int usage(void) {
        fprintf(stderr, "usage: bench-metrics render DIR [ROUNDS]\n"
                        "       bench-metrics scrape PORT [ROUNDS [FRESH_ROUNDS [INTERVAL_MS]]]\n"
                        "       bench-metrics scrapers PORT CLIENTS HZ SECONDS\n"
                        "       bench-metrics dbus-client HZ SECONDS\n");
        return 2;
}

int main(int argc, char *argv[]) {
        if (argc >= 3 && strcmp(argv[1], "render") == 0) {
                int rounds = argc > 3 ? atoi(argv[3]) : 1000;

                return bench_render(argv[2], rounds > 0 ? (unsigned) rounds : 1);
        }
        if (argc >= 3 && strcmp(argv[1], "scrape") == 0) {
                int port = atoi(argv[2]), rounds = argc > 3 ? atoi(argv[3]) : 500,
                    fresh = argc > 4 ? atoi(argv[4]) : 10,
                    interval = argc > 5 ? atoi(argv[5]) : 1000;

                if (port <= 0 || port > 65535 || rounds < 1 || fresh < 0 || interval < 1)
                        return usage();
                return bench_scrape(port, (unsigned) rounds, (unsigned) fresh, (unsigned) interval);
        }
        if (argc == 6 && strcmp(argv[1], "scrapers") == 0) {
                int port = atoi(argv[2]), clients = atoi(argv[3]);
                double hz = atof(argv[4]), seconds = atof(argv[5]);

                if (port <= 0 || port > 65535 || clients < 1 || hz <= 0 || seconds <= 0)
                        return usage();
                return bench_scrapers(port, (unsigned) clients, hz, seconds);
        }
        if (argc == 4 && strcmp(argv[1], "dbus-client") == 0) {
                double hz = atof(argv[2]), seconds = atof(argv[3]);

                if (hz <= 0 || seconds <= 0)
                        return usage();
                return bench_dbus_client(hz, seconds);
        }
        return usage();
}
