/* SPDX-License-Identifier: MIT */
/*
 * A minimal D-Bus client for exactly one call, org.amdsmi1.Manager.GetDocument(s, a{sv}) -> s
 * or GetDocumentText(s, a{sv}) -> (s, as), without libsystemd: loading libsystemd and sd-bus's connect, auth, Hello and NameHasOwner
 * cost most of a read through amdsmid. It connects to the system bus (a unix socket), says
 * AUTH EXTERNAL, pipelines Hello and the call (NO_AUTO_START), and reads the reply. Every
 * length, offset, alignment and signature of the incoming bytes is checked: a malformed or
 * truncated message is -EBADMSG.
 */
#pragma once

#include <stddef.h>

/* The largest message read (a bigger one is -EBADMSG). */
#define DBUS_MINI_MESSAGE_MAX (64U * 1024 * 1024)

/*
 * Connects to the system bus of $DBUS_SYSTEM_BUS_ADDRESS (the first unix: entry, path= or
 * abstract=; default unix:path=/run/dbus/system_bus_socket).
 * @return 0 (and the socket in *ret_fd), -EOPNOTSUPP for an address this client cannot use
 * (the caller uses sd-bus then), or another negative errno (connect()'s).
 */
int dbus_mini_connect(int *ret_fd);

/*
 * On the connected, not yet authenticated socket @fd: authenticates, calls @method
 * ("GetDocument", or with @ret_notes "GetDocumentText") (@verb, {"gpus": <@gpus>}) (no "gpus"
 * when @gpus is NULL or empty) and waits up to @timeout_ms (0: no limit) for its reply.
 * @return 0: a method return, its string in *ret_text (and with @ret_notes, the strings of its
 * second argument, a strv, in *ret_notes); 1: an error, its name in
 * *ret_error_name, its first string argument (if any) in *ret_text_message, and its second
 * (a failed change's document; if any) in *ret_text; or a negative errno: -EBADMSG for a
 * malformed message, -ECONNRESET when the bus hangs up, -ETIMEDOUT, -EACCES when the bus
 * refuses the authentication. The strings are malloc'd; unset ones are NULL.
 */
int dbus_mini_get_document_fd(int fd, const char *method, const char *verb, char **gpus,
                              unsigned timeout_ms, char **ret_text, char ***ret_notes,
                              char **ret_error_name, char **ret_message);

/* The errno of the D-Bus error @name: amdsmid's table (bus-errors.c), ServiceUnknown
 * -EHOSTUNREACH, NameHasNoOwner -ENXIO, UnknownMethod (and UnknownObject, UnknownInterface)
 * -EBADR, AccessDenied -EACCES, NoReply and Timeout -ETIMEDOUT; any other -EIO. */
int dbus_mini_error_errno(const char *name);

/*
 * dbus_mini_connect() and dbus_mini_get_document_fd(), with an error reply turned into its
 * errno (dbus_mini_error_errno()) and its message (for an unknown name: "NAME: message").
 * @return 0 with the string in *ret_text (and the notes in *ret_notes); a negative errno, with *ret_message (malloc'd, may
 * be NULL) and *ret_text (the error's document, may be NULL) for an error reply; -EOPNOTSUPP
 * when the bus address is not one for this client; -ENOTCONN when the bus cannot be reached.
 */
int dbus_mini_get_document(const char *method, const char *verb, char **gpus,
                           unsigned timeout_ms, char **ret_text, char ***ret_notes,
                           char **ret_message);
