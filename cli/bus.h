/* SPDX-License-Identifier: MIT */
/*
 * amdsmi(1) as a client of amdsmid (ARCHITECTURE §4): where a change runs, and calls to the
 * daemon's methods. When org.amdsmi1 has an owner, changes go through it (polkit decides who
 * may); --direct runs them in-process instead, which is refused while amdsmid runs unless
 * --force. With no amdsmid, root changes in-process and says so; anyone else is told that
 * amdsmid is not running.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

struct cli;

enum cli_route {
        CLI_ROUTE_DIRECT,   /* in-process, under the GPU locks */
        CLI_ROUTE_DAEMON,   /* through amdsmid */
};

/*
 * Where a change runs; reports the in-process notice or the refusal (cli_fail()). A dry run
 * never needs root: without amdsmid it runs in-process.
 * @return a route, or a negative errno (already reported).
 */
int cli_change_route(struct cli *c);

/* Whether amdsmid may run, learnt without the bus: false only when its PID file
 * (RUNTIME_DIRECTORY/amdsmid.pid) is missing or names a process that is gone. Reads ask only
 * it (a GetDocument() that finds no amdsmid on the bus falls back to reading in-process),
 * so that a read never loads libsystemd; changes ask the bus. *ret_other_roots (may be NULL)
 * says whether the file names other roots than this process reads (AMDSMI_SYSFS_ROOT,
 * AMDSMI_DEV_ROOT, pid-file.h): reads are then made in-process, since the environment names
 * the GPUs the user means; an older amdsmid's file (its PID alone) names none. */
bool cli_daemon_may_run(bool *ret_other_roots);

/* Whether amdsmid runs (org.amdsmi1 has an owner on the system bus); the bus stays open in
 * @c for the calls that follow. Never starts it. */
bool cli_daemon_running(struct cli *c);

/*
 * Calls @member of @interface on @path (NULL: the GPU object of @bdf) with the arguments of
 * @types (sd-bus message_append syntax), waiting up to @timeout_ms (0: 10 minutes, since a
 * change may wait for other changes of the GPU), and parses the reply, one JSON string, into
 * *ret (NULL for a method without a result). On a D-Bus error: the errno of the error name
 * (org.amdsmi1.Error.* through the one table), its message in *ret_message (malloc'd, may be
 * NULL), and in *ret the document a failed change carries after the message (what was done
 * and read back, as the in-process change reports it), or NULL. The caller frees *ret in
 * both cases.
 * @return 0 or a negative errno.
 */
int cli_bus_call(struct cli *c, const char *path, const char *bdf, const char *interface,
                 const char *member, unsigned timeout_ms, json_object **ret, char **ret_message,
                 const char *types, ...);

/*
 * amdsmid's document of the read verb @verb (Manager.GetDocument) for the selectors @gpus
 * (NULL or empty: every GPU), as cli_bus_call() answers. Through dbus-mini.h (no libsystemd);
 * through sd-bus only for a bus address dbus-mini cannot use. No bus to connect to is
 * -ENOTCONN; no owner of org.amdsmi1 -EHOSTUNREACH or -ENXIO.
 */
int cli_bus_get_document(struct cli *c, const char *verb, char **gpus, unsigned timeout_ms,
                         json_object **ret, char **ret_message);

/*
 * The same document as the text `amdsmi VERB --json` prints (Manager.GetDocumentText), its
 * notes apart (a strv, NULL for none), through dbus-mini.h only: -EOPNOTSUPP for a bus address
 * it cannot use, else as cli_bus_get_document(); -EBADR from an amdsmid without the method.
 * *@ret_text, *@ret_notes and *@ret_message are malloc'd.
 */
int cli_bus_get_document_text(const char *verb, char **gpus, unsigned timeout_ms, char **ret_text,
                              char ***ret_notes, char **ret_message);

/*
 * amdsmid's notes on the index selectors among @gpus (-g as amdsmi takes it) that name other
 * GPUs than before its last enumeration that moved the indexes (Manager.CheckIndexes): for
 * a change, whose -g the CLI resolves itself. *ret_notes: a string array (may be empty),
 * strv_free() it. @return 0, or a negative errno (an older amdsmid: -EBADR).
 */
int cli_bus_check_indexes(struct cli *c, char **gpus, char ***ret_notes);

/* Closes the connection (main() calls it). */
void cli_bus_close(struct cli *c);

/*
 * amdsmid's event stream: subscribes (Manager.SubscribeEvents), then calls @fn(@path, @kind,
 * @json, @userdata) for each org.amdsmi1.Health.Event signal (@path: the GPU's object) until
 * @stop_fd is readable (SIGINT / SIGTERM: returns 0), @fn returns a negative errno (returned),
 * or the bus connection or amdsmid goes away (-ENOTCONN, -ECONNRESET). A refused subscription
 * returns the errno of the D-Bus error with its message in *ret_message (malloc'd).
 */
typedef int (*cli_event_fn)(const char *path, const char *kind, const char *json,
                            void *userdata);
int cli_bus_follow_events(struct cli *c, int stop_fd, cli_event_fn fn, void *userdata,
                          char **ret_message);
