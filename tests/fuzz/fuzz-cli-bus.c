/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the CLI's reading of amdsmid's replies (cli/bus.c cli_bus_call(): the JSON
 * document of a reply, the error name, message and document of a failed change). A server
 * thread answers on a private D-Bus connection (a socketpair, no bus daemon) with the input:
 * its first byte picks the shape of the reply (a document; an error with a message and a
 * document; no result; a result of another type; a GetDocument() document that `amdsmi list`
 * prints), the second an error name of amdsmid's table (or the output format), the rest up to a NUL byte is the text. Checks: a reply document is returned exactly
 * when it is JSON (and equals it); an error returns its errno (the table's first for its
 * name), its message, and its document when that is JSON; a reply without a document is not
 * an error and returns none.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "bus-errors.h"
#include "bus.h"
#include "cli.h"
#include "fuzz-util.h"
#include "output.h"
#include "sd-bus-dl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum shape { DOCUMENT, ERROR, NO_RESULT, OTHER_TYPE, LIST, _SHAPE_MAX };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static enum shape shape;
static int reply_errno;
static const char *reply_error_name;
static const char *reply_text;
static bool text_sent; /* whether the text went out as it is (valid UTF-8), else "" */

static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus *bus = sd_bus_message_get_bus(m);
        int r = 0;

        (void) userdata;
        (void) ret_error;
        if (!sd_bus_message_is_method_call(m, NULL, NULL))
                return 0;
        pthread_mutex_lock(&lock);
        text_sent = true;
        switch (shape) {
        case DOCUMENT:
        case LIST:
                r = sd_bus_message_new_method_return(m, &reply);
                if (r >= 0 && sd_bus_message_append(reply, "s", reply_text) < 0) {
                        text_sent = false;
                        reply = sd_bus_message_unref(reply);
                        r = sd_bus_message_new_method_return(m, &reply);
                        if (r >= 0)
                                r = sd_bus_message_append(reply, "s", "");
                }
                break;
        case ERROR: {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;

                (void) sd_bus_error_setf(&e, reply_error_name, "failed: %d", reply_errno);
                r = sd_bus_message_new_method_error(m, &reply, &e);
                if (r >= 0 && sd_bus_message_append(reply, "s", reply_text) < 0) {
                        text_sent = false;
                        reply = sd_bus_message_unref(reply);
                        r = sd_bus_message_new_method_error(m, &reply, &e);
                        if (r >= 0)
                                r = sd_bus_message_append(reply, "s", "");
                }
                break;
        }
        case NO_RESULT:
                r = sd_bus_message_new_method_return(m, &reply);
                break;
        default:
                r = sd_bus_message_new_method_return(m, &reply);
                if (r >= 0)
                        r = sd_bus_message_append(reply, "u", 42u);
                break;
        }
        pthread_mutex_unlock(&lock);
        if (r < 0 || sd_bus_send(bus, reply, NULL) < 0)
                abort();
        return 1;
}

static void *server(void *userdata) {
        sd_bus *bus = userdata;

        for (;;) {
                int r = sd_bus_process(bus, NULL);

                if (r < 0)
                        break; /* the client went away */
                if (r > 0)
                        continue;
                r = sd_bus_wait(bus, UINT64_MAX);
                if (r < 0 && r != -EINTR) /* libFuzzer's SIGALRM may land here */
                        break;
        }
        sd_bus_flush_close_unref(bus);
        return NULL;
}

static struct cli *client;

/* json_object_equal(), but NaN (which json-c parses) equals NaN */
static bool same_json(json_object *a, json_object *b) {
        return json_object_equal(a, b) ||
               strcmp(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN),
                      json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN)) == 0;
}

/* amdsmid answers with the names of the one table (bus-errors.c); the client maps a name to
 * the errno of its first entry */
static size_t n_errors;

static int first_errno(const char *name) {
        for (size_t i = 0; i < n_errors; i++)
                if (strcmp(amdsmi_bus_errors[i].name, name) == 0)
                        return amdsmi_bus_errors[i].code;
        abort();
}

static void setup(void) {
        sd_bus *srv = NULL, *cl = NULL;
        sd_id128_t id;
        char pid[32];
        pthread_t t;
        int fds[2];

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0 ||
            sd_id128_randomize(&id) < 0 || sd_bus_new(&srv) < 0 ||
            sd_bus_set_fd(srv, fds[0], fds[0]) < 0 || sd_bus_set_server(srv, 1, id) < 0 ||
            sd_bus_set_anonymous(srv, 1) < 0 ||
            sd_bus_add_filter(srv, NULL, on_message, NULL) < 0 || sd_bus_start(srv) < 0)
                abort();
        if (sd_bus_new(&cl) < 0 || sd_bus_set_fd(cl, fds[1], fds[1]) < 0 ||
            sd_bus_set_anonymous(cl, 1) < 0 || sd_bus_start(cl) < 0)
                abort();
        if (pthread_create(&t, NULL, server, srv) != 0)
                abort();
        pthread_detach(t);
        (void) amdsmi_bus_errors_register();
        while (amdsmi_bus_errors[n_errors].name)
                n_errors++;
        if (n_errors == 0)
                abort();
        client = calloc(1, sizeof(*client));
        if (!client)
                abort();
        if (sd_bus_dl_load() < 0)
                abort();
        client->bus = cl; /* as if bus_open() had connected to the system bus */
        /* an address that cli/dbus-mini.c leaves to sd-bus: GetDocument() goes through the
         * connection above (dbus-mini has its own target, fuzz-dbus-mini), never to the
         * host's bus */
        if (setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:runtime=yes", 1) < 0)
                abort();
        /* `amdsmi list` reads in-process when amdsmid's document is unusable: an empty tree,
         * never the host's */
        fuzz_mkdirs("sys/bus/pci/devices");
        if (setenv("AMDSMI_SYSFS_ROOT", fuzz_path("sys"), 1) < 0 ||
            setenv("AMDSMI_DEV_ROOT", fuzz_path("sys"), 1) < 0)
                abort();
        /* amdsmid's PID file, naming a live process (this one): reads ask the "daemon" */
        fuzz_mkdirs("run");
        snprintf(pid, sizeof(pid), "%d\n", (int) getpid());
        fuzz_write("run/amdsmid.pid", pid, strlen(pid));
        if (setenv("RUNTIME_DIRECTORY", fuzz_path("run"), 1) < 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        json_object *doc = (json_object *) &lock, *want;
        char *message = (char *) &lock, *text;
        int r;

        if (size < 2 || size > 65536)
                return 0;
        if (!client)
                setup();
        text = fuzz_strndup(data + 2, size - 2);
        pthread_mutex_lock(&lock);
        shape = (enum shape) (data[0] % _SHAPE_MAX);
        reply_error_name = amdsmi_bus_errors[data[1] % n_errors].name;
        reply_errno = first_errno(reply_error_name);
        reply_text = text;
        pthread_mutex_unlock(&lock);

        if (shape == LIST) {
                json_object *d = json_tokener_parse(text), *g;
                bool listable = d && json_object_object_get_ex(d, "gpus", &g) &&
                                json_object_is_type(g, json_type_array);

                json_object_put(d);
                if (listable) {
                        /* `amdsmi list` with amdsmid running: its Describe() document
                         * printed as a table, JSON or CSV */
                        int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);

                        if (saved < 0 || null < 0 || dup2(null, STDOUT_FILENO) < 0)
                                abort();
                        close(null);
                        client->format = (enum output_format) (data[1] % 3);
                        client->daemon_checked = client->daemon_running = true;
                        client->report.print = NULL; /* quiet */
                        client->report.keep_field_errors = client->format == OUTPUT_JSON;
                        r = verb_list(client);
                        fflush(stdout);
                        dup2(saved, STDOUT_FILENO);
                        close(saved);
                        if (r > 0)
                                abort();
                        /* what a fall back to reading in-process (a document it cannot
                         * use) left, as main() frees it */
                        amdsmi_ctx_unref(client->set.ctx);
                        gpu_set_clear(&client->set);
                        report_clear(&client->report);
                        free(text);
                        return 0;
                }
        }
        if (data[0] & 0x80)
                r = cli_bus_call(client, NULL, "0000:05:00.0", AMDSMI_BUS_IFACE_POWER, "Explain",
                                 0, &doc, &message, NULL);
        else
                r = cli_bus_call(client, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER,
                                 "GetHistory", 0, &doc, &message, "u", (uint32_t) 7);

        pthread_mutex_lock(&lock);
        want = text_sent ? json_tokener_parse(text) : NULL;
        switch (shape) {
        case DOCUMENT:
        case LIST:
                if (want ? r != 0 || !doc || !same_json(doc, want)
                         : r != -EBADMSG || doc)
                        abort(); /* the document exactly when it is JSON */
                if (message)
                        abort();
                break;
        case ERROR: {
                char expect[32];

                snprintf(expect, sizeof(expect), "failed: %d", reply_errno);
                if (r != -reply_errno || !message || strcmp(message, expect) != 0)
                        abort(); /* the errno and message of the error */
                if (want ? !doc || !same_json(doc, want) : doc != NULL)
                        abort(); /* and its document when it carries one */
                break;
        }
        default:
                if (r != 0 || doc || message)
                        abort(); /* a method without a result */
                break;
        }
        pthread_mutex_unlock(&lock);
        json_object_put(want);
        if (doc != (json_object *) &lock)
                json_object_put(doc);
        if (message != (char *) &lock)
                free(message);
        free(text);
        return 0;
}
