/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's /metrics endpoint (amdsmid(8) METRICS): libmicrohttpd inside amdsmid's sd-event
 * loop, with no thread of its own.
 *
 * The listening sockets come from systemd (amdsmid-metrics.socket, FileDescriptorName=metrics;
 * or anything that passes them the same way, such as systemd-socket-activate). Each gets an
 * MHD daemon in MHD_USE_EPOLL mode without an internal thread: MHD's epoll fd is an sd-event io
 * source, MHD_run() runs on its readiness, and MHD_get_timeout() sets a timer (the connection
 * timeouts). Both sources run after the D-Bus connection's when both are ready.
 *
 *   GET /metrics, HEAD  200, Prometheus text 0.0.4, or OpenMetrics 1.0 when Accept asks for it
 *   GET /               200, a short text/plain page naming /metrics
 *   any other path      404
 *   any other method    405, Allow: GET, HEAD
 *   header fields too large: what MHD answers (431, or 414 for the request line)
 *
 * Bounds: HTTP_CONNECTION_LIMIT connections, HTTP_PER_IP_LIMIT of them from one address, each
 * closed after HTTP_CONNECTION_TIMEOUT_S without progress (slowloris) and reading its request
 * into at most HTTP_MEMORY_LIMIT bytes. A bad request is logged at debug level only: a scanner
 * must not flood the journal.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <microhttpd.h>
#include <systemd/sd-daemon.h>

#include "amdsmid.h"
#include "daemon-metrics.h"

#define HTTP_FD_NAME "metrics"
#define HTTP_CONNECTION_LIMIT 128
#define HTTP_PER_IP_LIMIT 64 /* loopback: every local client is one address */
#define HTTP_CONNECTION_TIMEOUT_S 10
#define HTTP_MEMORY_LIMIT (16 * 1024) /* a request's line and header fields, per connection */
/* after the D-Bus connection (SD_EVENT_PRIORITY_NORMAL) when both are ready */
#define HTTP_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 10)

static const char root_page[] =
        "amdsmid: the Prometheus metrics of this machine's AMD GPUs are at /metrics\n"
        "(text format 0.0.4; OpenMetrics 1.0 when Accept asks for it). See amdsmid(8).\n";
static const char not_found_page[] = "not found: the metrics are at /metrics\n";
static const char method_page[] = "method not allowed: GET or HEAD\n";
static const char error_page[] = "the metrics cannot be rendered (out of memory)\n";

struct http_listener {
        struct daemon *d;
        struct MHD_Daemon *mhd;
        int fd;
        sd_event_source *io;
        sd_event_source *timer;
};

struct http_metrics {
        struct http_listener *listeners;
        size_t n_listeners;
        struct MHD_Response *root, *not_found, *method, *error;
        /* the response of each format's current rendering, shared by every connection */
        struct MHD_Response *metrics[2];
        uint64_t generation[2];
};

static void mhd_log(void *cls, const char *fmt, va_list ap) {
        char msg[512];
        size_t n;

        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        n = strlen(msg);
        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
                msg[--n] = '\0';
        log_debug("metrics endpoint: %s", msg);
}

static struct MHD_Response *text_response(const char *text) {
        struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *) text,
                                                                 MHD_RESPMEM_PERSISTENT);

        if (r && MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                         "text/plain; charset=utf-8") != MHD_YES) {
                MHD_destroy_response(r);
                return NULL;
        }
        return r;
}

/* The response of @f's current rendering (made once per rendering). NULL on -ENOMEM. */
static struct MHD_Response *metrics_response(struct daemon *d, enum metrics_format f) {
        struct http_metrics *h = d->http;
        struct MHD_Response *r;
        const char *text;
        uint64_t generation;
        size_t size;

        if (daemon_metrics_get(d, f, &text, &size, &generation) < 0)
                return NULL;
        if (h->metrics[f] && h->generation[f] == generation)
                return h->metrics[f];
        r = MHD_create_response_from_buffer(size, (void *) text, MHD_RESPMEM_MUST_COPY);
        if (!r)
                return NULL;
        if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, metrics_content_type(f)) !=
            MHD_YES) {
                MHD_destroy_response(r);
                return NULL;
        }
        /* connections still sending the old one keep it until they are done */
        if (h->metrics[f])
                MHD_destroy_response(h->metrics[f]);
        h->metrics[f] = r;
        h->generation[f] = generation;
        return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
        struct http_listener *l = cls;
        struct daemon *d = l->d;
        struct http_metrics *h = d->http;
        struct MHD_Response *resp;
        unsigned status;

        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
                log_debug("metrics endpoint: %s %s: 405 (GET or HEAD only)", method, url);
                /* answered before its body is read: MHD closes the connection after it */
                return MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, h->method);
        }
        /* A response queued in the first call, before MHD has read the whole request, makes
         * it close the connection: the scraper's kept-alive connection would be lost at
         * every scrape. The first call only marks the request; the answer comes in the
         * second, once the request (a GET has no body) is read. */
        if (!*con_cls) {
                *con_cls = (void *) h;
                return MHD_YES;
        }
        if (strcmp(url, "/metrics") == 0) {
                const char *accept =
                        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

                resp = metrics_response(d, metrics_format_from_accept(accept));
                status = MHD_HTTP_OK;
                if (!resp) {
                        log_warning("metrics endpoint: cannot render the metrics: out of memory");
                        resp = h->error;
                        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
                }
        } else if (strcmp(url, "/") == 0) {
                resp = h->root;
                status = MHD_HTTP_OK;
        } else {
                log_debug("metrics endpoint: %s %.200s: 404", method, url);
                resp = h->not_found;
                status = MHD_HTTP_NOT_FOUND;
        }
        return MHD_queue_response(c, status, resp);
}

/* The timer follows MHD's: the earliest connection timeout, or none. */
static void listener_rearm(struct http_listener *l) {
        MHD_UNSIGNED_LONG_LONG ms;

        if (MHD_get_timeout(l->mhd, &ms) != MHD_YES) {
                (void) sd_event_source_set_enabled(l->timer, SD_EVENT_OFF);
                return;
        }
        (void) sd_event_source_set_time(l->timer, now_usec(CLOCK_MONOTONIC) + ms * 1000);
        (void) sd_event_source_set_enabled(l->timer, SD_EVENT_ONESHOT);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct http_listener *l = userdata;

        (void) MHD_run(l->mhd);
        listener_rearm(l);
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct http_listener *l = userdata;

        (void) MHD_run(l->mhd);
        listener_rearm(l);
        return 0;
}

static int listener_start(struct daemon *d, struct http_listener *l, int fd) {
        const union MHD_DaemonInfo *info;
        int flags, r;

        l->d = d;
        l->fd = fd;
        /* MHD accepts until EAGAIN: the socket must not block */
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;
        l->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, l,
                                  MHD_OPTION_LISTEN_SOCKET, (MHD_socket) fd,
                                  MHD_OPTION_CONNECTION_LIMIT, (unsigned) HTTP_CONNECTION_LIMIT,
                                  MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned) HTTP_PER_IP_LIMIT,
                                  MHD_OPTION_CONNECTION_TIMEOUT,
                                  (unsigned) HTTP_CONNECTION_TIMEOUT_S,
                                  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) HTTP_MEMORY_LIMIT,
                                  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
        if (!l->mhd)
                return -EINVAL;
        info = MHD_get_daemon_info(l->mhd, MHD_DAEMON_INFO_EPOLL_FD);
        if (!info)
                return -EINVAL;
        r = sd_event_add_io(d->event, &l->io, info->epoll_fd, EPOLLIN, on_io, l);
        if (r >= 0)
                r = sd_event_source_set_priority(l->io, HTTP_PRIORITY);
        if (r >= 0)
                r = sd_event_add_time(d->event, &l->timer, CLOCK_MONOTONIC, 0, 1000, on_timer, l);
        if (r >= 0)
                r = sd_event_source_set_priority(l->timer, HTTP_PRIORITY);
        if (r < 0)
                return r;
        listener_rearm(l);
        return 0;
}

static void listener_stop(struct http_listener *l) {
        l->io = sd_event_source_disable_unref(l->io);
        l->timer = sd_event_source_disable_unref(l->timer);
        if (l->mhd)
                MHD_stop_daemon(l->mhd); /* closes the listening socket too */
        l->mhd = NULL;
}

int http_metrics_start(struct daemon *d) {
        _cleanup_strv_free_ char **names = NULL;
        struct http_metrics *h;
        unsigned n_metrics = 0;
        int n, r;

        n = sd_listen_fds_with_names(true, &names);
        if (n < 0) {
                log_warning("metrics endpoint: cannot read the sockets systemd passed: %s",
                            strerror(-n));
                return n;
        }
        for (int i = 0; i < n; i++)
                if (names && names[i] && strcmp(names[i], HTTP_FD_NAME) == 0)
                        n_metrics++;
                else
                        log_warning("metrics endpoint: ignoring socket %d named \"%s\" (amdsmid "
                                    "takes sockets named " HTTP_FD_NAME ")",
                                    SD_LISTEN_FDS_START + i, names && names[i] ? names[i] : "");
        if (n_metrics == 0) {
                log_debug("metrics endpoint: no socket named " HTTP_FD_NAME " passed "
                          "(amdsmid-metrics.socket): no /metrics");
                return 0;
        }

        h = d->http = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->listeners = calloc(n_metrics, sizeof(*h->listeners));
        h->root = text_response(root_page);
        h->not_found = text_response(not_found_page);
        h->method = text_response(method_page);
        h->error = text_response(error_page);
        if (!h->listeners || !h->root || !h->not_found || !h->method || !h->error ||
            MHD_add_response_header(h->method, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") != MHD_YES) {
                http_metrics_stop(d);
                log_error("metrics endpoint: out of memory");
                return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i;

                if (!names || !names[i] || strcmp(names[i], HTTP_FD_NAME) != 0)
                        continue;
                r = sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1);
                if (r <= 0) {
                        log_warning("metrics endpoint: socket %d is not a listening stream "
                                    "socket: ignored",
                                    fd);
                        continue;
                }
                r = listener_start(d, &h->listeners[h->n_listeners], fd);
                if (r < 0) {
                        log_warning("metrics endpoint: cannot serve socket %d: %s", fd,
                                    strerror(-r));
                        listener_stop(&h->listeners[h->n_listeners]);
                        continue;
                }
                h->n_listeners++;
        }
        log_info("metrics endpoint: serving /metrics on %zu socket%s", h->n_listeners,
                 h->n_listeners == 1 ? "" : "s");
        return 0;
}

void http_metrics_stop(struct daemon *d) {
        struct http_metrics *h = d->http;

        if (!h)
                return;
        for (size_t i = 0; i < h->n_listeners; i++)
                listener_stop(&h->listeners[i]);
        free(h->listeners);
        for (size_t f = 0; f < ELEMENTSOF(h->metrics); f++)
                if (h->metrics[f])
                        MHD_destroy_response(h->metrics[f]);
        if (h->root)
                MHD_destroy_response(h->root);
        if (h->not_found)
                MHD_destroy_response(h->not_found);
        if (h->method)
                MHD_destroy_response(h->method);
        if (h->error)
                MHD_destroy_response(h->error);
        free(h);
        d->http = NULL;
}
