/* SPDX-License-Identifier: MIT */
/*
 * The report of a run: what amdsmi says about one command, for both front ends.
 *
 * A run (a read document, or a change) reports through one struct report: the amdsmi/1
 * envelope (schema, timestamp, hostname, command), the "errors" of fields it could not read,
 * the "messages" of a change, and its outcome (errno, exit code, message). Nothing here knows
 * who asked: amdsmi(1) sets a printer that shows each line as it comes (stderr, or stdout for
 * a change's lines in a table), amdsmid sets none and answers with the documents.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#include "json-util.h"
#include "macro.h"

enum report_line {
        REPORT_FAILURE,     /* the run's fatal error */
        REPORT_FIELD_ERROR, /* a value that could not be read ("GPU 0: power: why") */
        REPORT_SAY,         /* a line about a change (stdout in a table) */
        REPORT_NOTE,        /* a note beside a change's output (stderr) */
        REPORT_TEXT,        /* verbatim text a table shows (a file a dry run would write) */
};

/* The distinct notes a run remembers having printed (notes_once); more are printed again. */
#define REPORT_NOTES_SAID_MAX 32

struct report {
        const char *command;           /* the envelope's "command" */
        char hostname[256];            /* "" until report_set_hostname() */
        struct timespec sample_time;   /* CLOCK_REALTIME at the start of the sample */
        bool keep_field_errors;        /* field errors become "errors" entries; else lines */
        bool dry_run;                  /* a change document's "dry_run" */
        bool keep_notes;               /* notes go to "notes" too (amdsmid: for its client) */
        bool mute_field_errors;        /* field errors are dropped (a GPU in reset says it once) */
        bool notes_once;               /* a note printed once is not printed again in this run
                                          (the samples of a watch), kept by report_clear() */
        uint64_t notes_said[REPORT_NOTES_SAID_MAX]; /* with notes_once: hashes of their texts */
        size_t n_notes_said;
        json_object *notes;            /* the notes of the run, with keep_notes */
        json_object *errors;           /* "errors" of the next document */
        char *error_message;           /* the first fatal error's message */
        /* the front end's printer of each line as it is reported (NULL: none) */
        void (*print)(struct report *r, enum report_line kind, const char *text);
};

/* Frees what the report holds (errors, message) and keeps its settings. */
void report_clear(struct report *r);

/* The host name of the envelope (gethostname()). */
void report_set_hostname(struct report *r);

/* Starts a sample: takes the time stamp. */
void report_begin_sample(struct report *r);

/*
 * A fatal error: printed (REPORT_FAILURE) and kept as the outcome's message if it is the first.
 * @return @err.
 */
int report_fail(struct report *r, int err, const char *format, ...) _printf_(3, 4);

/*
 * A problem with one field of one GPU (@gpu < 0: not tied to a GPU): an "errors" entry when
 * the report keeps them, else a line. The value itself becomes null.
 */
void report_field_error(struct report *r, int gpu, const char *field, int err);
/* The same with the reason the library gave (NULL: the errno's message). */
void report_field_error_msg(struct report *r, int gpu, const char *field, int err,
                            const char *msg);
/* Appends an entry to "errors" (taken; NULL is ignored). */
void report_add_error(struct report *r, json_object *entry);

/*
 * An "errors" entry of a document another run built (amdsmid's answer to a read): kept when
 * the report keeps field errors, else printed as the line report_field_error_msg() prints
 * ("GPU 0: power: why"; an entry without a field, a library message, as its message alone).
 * @entry is borrowed.
 */
void report_replay_error(struct report *r, json_object *entry);

/* A line about a change: printed (REPORT_SAY) and appended to the "messages" array of
 * @entry (a GPU's object in the change document; may be NULL). */
void report_say(struct report *r, json_object *entry, const char *format, ...) _printf_(3, 4);

/* A note beside the output (REPORT_NOTE), for a front end that prints one (with notes_once,
 * only the first time the run says it); kept in "notes" with keep_notes. */
void report_note(struct report *r, const char *format, ...) _printf_(2, 3);

/* Verbatim text for a front end that shows tables (REPORT_TEXT). */
void report_text(struct report *r, const char *text);

/* The errno's symbolic name as a JSON string ("EBUSY"), or NULL (JSON null) for 0. */
json_object *report_errno_json(int err);

/* A document: the envelope, "gpus" (taken) and the collected "errors" (taken). */
json_object *report_document(struct report *r, json_object *gpus);

/* A change document: report_document() with "dry_run" and the outcome of @err as "result"
 * (exit code, errno, message). Takes @gpus. */
json_object *report_change_document(struct report *r, json_object *gpus, int err);

/* The JSON error document of a fatal @err. */
json_object *report_error_document(struct report *r, int err);
