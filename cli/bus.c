/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "bus-errors.h"
#include "bus.h"
#include "cli.h"
#include "dbus-mini.h"
#include "parse-util.h"
#include "pid-file.h"
#include "runtime-dir.h"
#include "safe-open.h"
#include "sd-bus-dl.h"

static bool streq_ptr(const char *a, const char *b) {
        return a && b && strcmp(a, b) == 0;
}

#define DEFAULT_CALL_TIMEOUT_MS (10U * 60 * 1000)
/* SubscribeEvents and UnsubscribeEvents answer at once */
#define READ_TIMEOUT_MS 30000U

static int bus_open(struct cli *c) {
        sd_bus *bus = NULL;
        int r;

        if (c->bus)
                return 0;
        if (c->bus_failed)
                return -ENOTCONN;
        /* libsystemd is loaded now, not at every start (sd-bus-dl.h) */
        r = sd_bus_dl_load();
        if (r < 0) {
                c->bus_failed = true;
                return r;
        }
        (void) sym_sd_bus_error_add_map(amdsmi_bus_errors);
        r = sym_sd_bus_open_system(&bus);
        if (r < 0) {
                c->bus_failed = true;
                return r;
        }
        c->bus = bus;
        return 0;
}

/* The roots this process reads, as libamdsmi chooses them from the environment, resolved as
 * amdsmid's PID file has them. */
static int own_roots(char sysfs[static PATH_MAX], char dev[static PATH_MAX]) {
        struct amdsmi_ctx *ctx = NULL;
        int r;

        /* no sysfs access: the roots only */
        r = amdsmi_ctx_new(&ctx);
        if (r < 0)
                return r;
        r = pid_file_resolve_roots(amdsmi_ctx_get_sysfs_root(ctx), amdsmi_ctx_get_dev_root(ctx),
                                   sysfs, dev);
        amdsmi_ctx_unref(ctx);
        return r;
}

/* Whether amdsmid reads other roots than this process would (the roots of @f, the
 * environment's here); said with AMDSMI_DEBUG=1, since the environment decides in silence. */
static bool other_roots(const struct pid_file *f) {
        char sysfs[PATH_MAX], dev[PATH_MAX];
        const char *debug = getenv("AMDSMI_DEBUG");

        if (!f->has_roots || own_roots(sysfs, dev) < 0)
                return false; /* an older amdsmid, or cannot tell: ask it, as before */
        if (streq_ptr(f->sysfs_root, sysfs) && streq_ptr(f->dev_root, dev))
                return false;
        if (streq_ptr(debug, "1"))
                fprintf(stderr,
                        "amdsmi: amdsmid reads %s (devices %s), this command %s (devices %s): "
                        "reading in-process\n",
                        f->sysfs_root, f->dev_root[0] ? f->dev_root : "none", sysfs,
                        dev[0] ? dev : "none");
        return true;
}

bool cli_daemon_may_run(bool *ret_other_roots) {
        char dir[PATH_MAX], path[PATH_MAX + sizeof(AMDSMID_PID_FILE) + 1];
        _cleanup_free_ char *buf = NULL;
        struct pid_file f;
        size_t n = 0;
        int fd;

        if (ret_other_roots)
                *ret_other_roots = false;
        if (runtime_dir(dir, sizeof(dir)) < 0 ||
            (size_t) snprintf(path, sizeof(path), "%s/%s", dir, AMDSMID_PID_FILE) >=
                    sizeof(path))
                return true; /* cannot tell: ask the bus */
        /* root's regular file (another user's could make reads ask a fake daemon... which
         * the bus would then refuse; still, trust only root's) */
        fd = safe_open(path, O_RDONLY, 0, SAFE_OPEN_TRUSTED);
        if (fd == -ENOENT)
                return false;
        if (fd < 0)
                return true;
        /* one byte more than the largest valid file: a longer one is refused */
        buf = malloc(PID_FILE_MAX + 1);
        while (buf && n <= PID_FILE_MAX) {
                ssize_t k = read(fd, buf + n, PID_FILE_MAX + 1 - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        if (k < 0)
                                n = 0;
                        break;
                }
                n += (size_t) k;
        }
        close(fd);
        /* unreadable or garbage: ask the bus, as when it cannot tell */
        if (!buf || n == 0 || pid_file_parse(buf, n, &f) < 0)
                return true;
        /* a PID that is gone: amdsmid was killed (a stale file); EPERM: alive, not ours */
        if (kill((pid_t) f.pid, 0) < 0 && errno == ESRCH)
                return false;
        if (ret_other_roots)
                *ret_other_roots = other_roots(&f);
        return true;
}

bool cli_daemon_running(struct cli *c) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int has = 0, r;

        if (c->daemon_checked)
                return c->daemon_running;
        c->daemon_checked = true;
        if (bus_open(c) < 0)
                return false;
        r = sym_sd_bus_call_method(c->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                               "org.freedesktop.DBus", "NameHasOwner", &error, &reply, "s",
                               AMDSMI_BUS_NAME);
        if (r >= 0)
                r = sym_sd_bus_message_read(reply, "b", &has);
        c->daemon_running = r >= 0 && has;
        return c->daemon_running;
}

int cli_change_route(struct cli *c) {
        bool running = cli_daemon_running(c);

        if (c->direct) {
                if (running && !c->force)
                        return cli_fail(c, -EBUSY,
                                        "amdsmid is running: --direct would bypass it "
                                        "(its locks, its desired state); add --force to do "
                                        "it anyway");
                if (!c->report.dry_run && geteuid() != 0)
                        return cli_fail(c, -EACCES, "--direct changes need root");
                return CLI_ROUTE_DIRECT;
        }
        if (running) {
                bool other = false;

                /* a change resolves -g on this command's tree but runs on amdsmid's GPUs: with
                 * a tree that is not amdsmid's, it would change GPUs the user did not name */
                (void) cli_daemon_may_run(&other);
                if (other)
                        return cli_fail(c, -EBUSY,
                                        "amdsmid runs on other GPUs than this command reads "
                                        "(AMDSMI_SYSFS_ROOT=%s, AMDSMI_DEV_ROOT=%s): a change "
                                        "through it would "
                                        "change amdsmid's GPUs, not these; unset "
                                        "AMDSMI_SYSFS_ROOT and AMDSMI_DEV_ROOT to change "
                                        "amdsmid's GPUs, or give this command a runtime and "
                                        "state directory of its own (RUNTIME_DIRECTORY, "
                                        "STATE_DIRECTORY) to change the tree in-process",
                                        getenv("AMDSMI_SYSFS_ROOT") ?: "(unset)",
                                        getenv("AMDSMI_DEV_ROOT") ?: "(unset)");
                return CLI_ROUTE_DAEMON;
        }
        if (c->report.dry_run)
                return CLI_ROUTE_DIRECT;
        if (geteuid() != 0)
                return cli_fail(c, -EACCES,
                                "amdsmid is not running; changes in-process need root");
        fprintf(stderr, "amdsmi: amdsmid is not running: changing in-process\n");
        return CLI_ROUTE_DIRECT;
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        sd_bus_message **reply = userdata;

        *reply = sym_sd_bus_message_ref(m);
        return 0;
}

/* The one JSON string argument at the current position of @m, parsed; NULL if none. */
static json_object *read_document(sd_bus_message *m) {
        enum json_tokener_error jerr;
        const char *text = NULL;

        if (sym_sd_bus_message_read(m, "s", &text) <= 0 || !text)
                return NULL;
        return json_tokener_parse_verbose(text, &jerr);
}

/* A new call of @member of @interface on @path (NULL: the GPU object of @bdf). */
static int bus_new_call(struct cli *c, const char *path, const char *bdf, const char *interface,
                        const char *member, sd_bus_message **ret) {
        _cleanup_free_ char *gpu_path = NULL;
        int r;

        r = bus_open(c);
        if (r < 0)
                return r;
        if (!path) {
                r = sym_sd_bus_path_encode(AMDSMI_BUS_GPU_PREFIX, bdf, &gpu_path);
                if (r < 0)
                        return r;
                path = gpu_path;
        }
        r = sym_sd_bus_message_new_method_call(c->bus, ret, AMDSMI_BUS_NAME, path, interface,
                                           member);
        if (r < 0)
                return r;
        /* polkit may ask the admin for a password (an agent on the terminal) */
        (void) sym_sd_bus_message_set_allow_interactive_authorization(*ret, true);
        (void) sym_sd_bus_message_set_auto_start(*ret, false);
        return 0;
}

/* Sends @m and waits for the reply: cli_bus_call()'s results. */
static int bus_send(struct cli *c, sd_bus_message *m, unsigned timeout_ms, json_object **ret,
                    char **ret_message) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sym_sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        int r;

        /* asynchronously, since sym_sd_bus_call() keeps only the name and message of an error,
         * and a failed change carries its document after the message */
        r = sym_sd_bus_call_async(c->bus, &slot, m, on_reply, &reply,
                              (uint64_t) (timeout_ms ? timeout_ms : DEFAULT_CALL_TIMEOUT_MS) *
                                      1000);
        if (r < 0)
                return r;
        while (!reply) {
                r = sym_sd_bus_process(c->bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                r = sym_sd_bus_wait(c->bus, UINT64_MAX);
                if (r < 0 && r != -EINTR)
                        return r;
        }
        if (sym_sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sym_sd_bus_message_get_error(reply);

                r = e ? sym_sd_bus_error_get_errno(e) : 0;
                if (ret_message && e && e->message)
                        *ret_message = strdup(e->message);
                if (sym_sd_bus_message_rewind(reply, true) >= 0 && sym_sd_bus_message_skip(reply, "s") >= 0)
                        *ret = read_document(reply);
                return r > 0 ? -r : -EIO;
        }
        if (!streq_ptr(sym_sd_bus_message_get_signature(reply, true), "s"))
                return 0; /* a method without a result */
        *ret = read_document(reply);
        return *ret ? 0 : -EBADMSG;
}

int cli_bus_call(struct cli *c, const char *path, const char *bdf, const char *interface,
                 const char *member, unsigned timeout_ms, json_object **ret, char **ret_message,
                 const char *types, ...) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        *ret = NULL;
        if (ret_message)
                *ret_message = NULL;
        r = bus_new_call(c, path, bdf, interface, member, &m);
        if (r < 0)
                return r;
        if (types && types[0]) {
                va_start(ap, types);
                r = sym_sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                if (r < 0)
                        return r;
        }
        return bus_send(c, m, timeout_ms, ret, ret_message);
}

/* GetDocument through dbus-mini.c (no libsystemd); -EOPNOTSUPP for a bus address that only
 * sd-bus can use. */
static int get_document_mini(const char *verb, char **gpus, unsigned timeout_ms,
                             json_object **ret, char **ret_message) {
        _cleanup_free_ char *text = NULL, *message = NULL;
        enum json_tokener_error jerr;
        int r;

        r = dbus_mini_get_document("GetDocument", verb, gpus,
                                   timeout_ms ? timeout_ms : DEFAULT_CALL_TIMEOUT_MS, &text, NULL,
                                   &message);
        if (r == -EOPNOTSUPP)
                return r;
        if (text)
                *ret = json_tokener_parse_verbose(text, &jerr);
        if (ret_message)
                *ret_message = TAKE_PTR(message);
        if (r == 0 && !*ret)
                return -EBADMSG;
        return r;
}

int cli_bus_get_document(struct cli *c, const char *verb, char **gpus, unsigned timeout_ms,
                         json_object **ret, char **ret_message) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        *ret = NULL;
        if (ret_message)
                *ret_message = NULL;
        r = get_document_mini(verb, gpus, timeout_ms, ret, ret_message);
        if (r != -EOPNOTSUPP)
                return r;
        /* no bus to reach (sd-bus cannot connect, or no libsystemd): as no amdsmid */
        if (bus_open(c) < 0)
                return -ENOTCONN;
        r = bus_new_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, "GetDocument", &m);
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "s", verb);
        if (r >= 0)
                r = sym_sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && gpus && gpus[0]) {
                r = sym_sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0)
                        r = sym_sd_bus_message_append(m, "s", "gpus");
                if (r >= 0)
                        r = sym_sd_bus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = sym_sd_bus_message_append_strv(m, gpus);
                if (r >= 0)
                        r = sym_sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sym_sd_bus_message_close_container(m);
        }
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return bus_send(c, m, timeout_ms, ret, ret_message);
}

int cli_bus_get_document_text(const char *verb, char **gpus, unsigned timeout_ms, char **ret_text,
                              char ***ret_notes, char **ret_message) {
        *ret_text = NULL;
        *ret_notes = NULL;
        *ret_message = NULL;
        return dbus_mini_get_document("GetDocumentText", verb, gpus,
                                      timeout_ms ? timeout_ms : DEFAULT_CALL_TIMEOUT_MS, ret_text,
                                      ret_notes, ret_message);
}

int cli_bus_check_indexes(struct cli *c, char **gpus, char ***ret_notes) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        char **notes = NULL;
        int r;

        r = bus_new_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, "CheckIndexes", &m);
        if (r >= 0)
                r = sym_sd_bus_message_append_strv(m, gpus);
        if (r >= 0)
                r = sym_sd_bus_call(c->bus, m, UINT64_C(30) * 1000 * 1000, &error, &reply);
        if (r >= 0)
                r = sym_sd_bus_message_read_strv(reply, &notes);
        if (r < 0)
                return r;
        *ret_notes = notes;
        return 0;
}

void cli_bus_close(struct cli *c) {
        if (c->bus)
                c->bus = sym_sd_bus_flush_close_unref(c->bus);
}

/* ---- the event stream ---------------------------------------------------------------- */

struct follow_events {
        cli_event_fn fn;
        void *userdata;
        int r;
        bool gone;
};

static int on_health_event(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct follow_events *f = userdata;
        const char *kind = NULL, *json = NULL;

        if (f->r < 0 || sym_sd_bus_message_read(m, "ss", &kind, &json) < 0)
                return 0;
        f->r = f->fn(sym_sd_bus_message_get_path(m) ?: "", kind, json, f->userdata);
        return 0;
}

/* amdsmid left the bus (NameOwnerChanged to ""): the stream ended. */
static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct follow_events *f = userdata;
        const char *name = NULL, *old = NULL, *new = NULL;

        if (sym_sd_bus_message_read(m, "sss", &name, &old, &new) >= 0 &&
            streq_ptr(name, AMDSMI_BUS_NAME) && new && !new[0])
                f->gone = true;
        return 0;
}

int cli_bus_follow_events(struct cli *c, int stop_fd, cli_event_fn fn, void *userdata,
                          char **ret_message) {
        _cleanup_(sym_sd_bus_slot_unrefp) sd_bus_slot *event_slot = NULL, *owner = NULL;
        struct follow_events f = { .fn = fn, .userdata = userdata };
        json_object *doc = NULL;
        int r;

        *ret_message = NULL;
        r = bus_open(c);
        if (r < 0)
                return r;
        /* the matches first: no event between the subscription and them is lost */
        r = sym_sd_bus_match_signal(c->bus, &event_slot, AMDSMI_BUS_NAME, NULL,
                                    AMDSMI_BUS_IFACE_HEALTH, "Event", on_health_event, &f);
        if (r >= 0)
                r = sym_sd_bus_match_signal(c->bus, &owner, "org.freedesktop.DBus",
                                            "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                            "NameOwnerChanged", on_owner_changed, &f);
        if (r < 0)
                return r;
        r = cli_bus_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, "SubscribeEvents",
                         READ_TIMEOUT_MS, &doc, ret_message, NULL);
        json_object_put(doc);
        if (r < 0)
                return r;
        for (;;) {
                struct pollfd p[2];
                int events;

                r = sym_sd_bus_process(c->bus, NULL);
                if (r < 0)
                        return r == -ECONNRESET || r == -ENOTCONN ? -ENOTCONN : r;
                if (f.r < 0)
                        return f.r;
                if (f.gone)
                        return -ECONNRESET;
                if (r > 0)
                        continue;
                events = sym_sd_bus_get_events(c->bus);
                if (events < 0)
                        return events;
                p[0] = (struct pollfd){ .fd = stop_fd, .events = POLLIN };
                p[1] = (struct pollfd){ .fd = sym_sd_bus_get_fd(c->bus), .events = (short) events };
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[0].revents)
                        break;
        }
        /* leaving the bus would end the subscription as well */
        r = cli_bus_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, "UnsubscribeEvents",
                         READ_TIMEOUT_MS, &doc, NULL, NULL);
        json_object_put(doc);
        return 0;
}
