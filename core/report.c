/* SPDX-License-Identifier: MIT */
/* The report of a run (report.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exit-codes.h"
#include "report.h"

void report_clear(struct report *r) {
        free(r->error_message);
        r->error_message = NULL;
        json_object_put(r->errors);
        r->errors = NULL;
        json_object_put(r->notes);
        r->notes = NULL;
}

void report_set_hostname(struct report *r) {
        if (gethostname(r->hostname, sizeof(r->hostname) - 1) < 0)
                r->hostname[0] = '\0';
}

void report_begin_sample(struct report *r) {
        clock_gettime(CLOCK_REALTIME, &r->sample_time);
}

int report_fail(struct report *r, int err, const char *format, ...) {
        va_list ap;
        char *msg = NULL;

        va_start(ap, format);
        if (vasprintf(&msg, format, ap) < 0)
                msg = NULL;
        va_end(ap);

        if (r->print)
                r->print(r, REPORT_FAILURE, msg ? msg : strerror(err < 0 ? -err : err));
        if (!r->error_message)
                r->error_message = msg;
        else
                free(msg);
        return err;
}

static const char *field_error_message(int err) {
        switch (err) {
        case -ENOMSG:
                return "empty value (the SMU query failed)";
        case -EBADMSG:
                return "malformed value";
        default:
                return strerror(err < 0 ? -err : err);
        }
}

void report_add_error(struct report *r, json_object *e) {
        if (!e)
                return;
        if (!r->errors)
                r->errors = json_object_new_array();
        if (!r->errors) {
                json_object_put(e);
                return;
        }
        json_object_array_add(r->errors, e);
}

void report_field_error(struct report *r, int gpu, const char *field, int err) {
        report_field_error_msg(r, gpu, field, err, NULL);
}

void report_field_error_msg(struct report *r, int gpu, const char *field, int err,
                            const char *msg) {
        char *line = NULL;

        if (r->mute_field_errors)
                return;
        if (!msg)
                msg = field_error_message(err);
        if (r->keep_field_errors) {
                report_add_error(r, error_entry_new(gpu, field, err, msg));
                return;
        }
        if (!r->print)
                return;
        if ((gpu >= 0 ? asprintf(&line, "GPU %d: %s: %s", gpu, field, msg)
                      : asprintf(&line, "%s: %s", field, msg)) < 0)
                return;
        r->print(r, REPORT_FIELD_ERROR, line);
        free(line);
}

void report_replay_error(struct report *r, json_object *entry) {
        json_object *gpu = NULL, *field = NULL, *message = NULL;
        char *line = NULL;

        if (!json_object_is_type(entry, json_type_object))
                return;
        if (r->keep_field_errors) {
                report_add_error(r, json_object_get(entry));
                return;
        }
        if (!r->print)
                return;
        json_object_object_get_ex(entry, "gpu", &gpu);
        json_object_object_get_ex(entry, "field", &field);
        json_object_object_get_ex(entry, "message", &message);
        if (!json_object_is_type(field, json_type_string))
                line = strdup(json_object_get_string(message) ?: "");
        else if (json_object_is_type(gpu, json_type_int)) {
                if (asprintf(&line, "GPU %d: %s: %s", json_object_get_int(gpu),
                             json_object_get_string(field),
                             json_object_get_string(message) ?: "") < 0)
                        line = NULL;
        } else if (asprintf(&line, "%s: %s", json_object_get_string(field),
                            json_object_get_string(message) ?: "") < 0)
                line = NULL;
        if (line)
                r->print(r, REPORT_FIELD_ERROR, line);
        free(line);
}

void report_say(struct report *r, json_object *entry, const char *format, ...) {
        json_object *lines = NULL;
        char *msg = NULL;
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&msg, format, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (!msg)
                return;
        if (r->print)
                r->print(r, REPORT_SAY, msg);
        if (entry && json_object_object_get_ex(entry, "messages", &lines))
                json_object_array_add(lines, json_object_new_string(msg));
        free(msg);
}

/* Whether @msg was printed before in this run; remembers it otherwise (FNV-1a of the text). */
static bool note_said_before(struct report *r, const char *msg) {
        uint64_t h = UINT64_C(0xcbf29ce484222325);

        for (const char *p = msg; *p; p++)
                h = (h ^ (unsigned char) *p) * UINT64_C(0x100000001b3);
        for (size_t i = 0; i < r->n_notes_said; i++)
                if (r->notes_said[i] == h)
                        return true;
        if (r->n_notes_said < REPORT_NOTES_SAID_MAX)
                r->notes_said[r->n_notes_said++] = h;
        return false;
}

void report_note(struct report *r, const char *format, ...) {
        char *msg = NULL;
        va_list ap;

        if (!r->print && !r->keep_notes)
                return;
        va_start(ap, format);
        if (vasprintf(&msg, format, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (!msg)
                return;
        if (r->print && !(r->notes_once && note_said_before(r, msg)))
                r->print(r, REPORT_NOTE, msg);
        if (r->keep_notes) {
                if (!r->notes)
                        r->notes = json_object_new_array();
                if (r->notes)
                        json_object_array_add(r->notes, json_object_new_string(msg));
        }
        free(msg);
}

void report_text(struct report *r, const char *text) {
        if (r->print && text)
                r->print(r, REPORT_TEXT, text);
}

json_object *report_errno_json(int err) {
        char buf[32];

        return err == 0 ? NULL : json_object_new_string(errno_name(err, buf, sizeof(buf)));
}

static json_object *take_errors(struct report *r) {
        json_object *e = r->errors;

        r->errors = NULL;
        return e ? e : json_object_new_array();
}

json_object *report_document(struct report *r, json_object *gpus) {
        json_object *doc = document_new(r->command, &r->sample_time, r->hostname);

        if (!doc) {
                json_object_put(gpus);
                return NULL;
        }
        json_set(doc, "gpus", gpus ? gpus : json_object_new_array());
        json_set(doc, "errors", take_errors(r));
        return doc;
}

json_object *report_change_document(struct report *r, json_object *gpus, int err) {
        json_object *doc = report_document(r, gpus), *res = json_object_new_object();

        if (!doc || !res) {
                json_object_put(doc);
                json_object_put(res);
                return NULL;
        }
        json_set(doc, "dry_run", json_object_new_boolean(r->dry_run));
        json_set(res, "exit_code", json_object_new_int(exit_code_from_errno(err)));
        json_set(res, "errno", report_errno_json(err));
        json_set(res, "message", err == 0 ? NULL : json_string_or_null(r->error_message));
        json_set(doc, "result", res);
        return doc;
}

json_object *report_error_document(struct report *r, int err) {
        json_object *doc, *e;
        char buf[32];

        if (r->sample_time.tv_sec == 0)
                report_begin_sample(r);
        doc = document_new(r->command, &r->sample_time, r->hostname);
        e = json_object_new_object();
        if (!doc || !e) {
                json_object_put(doc);
                json_object_put(e);
                return NULL;
        }
        json_set(e, "errno", json_object_new_string(errno_name(err, buf, sizeof(buf))));
        json_set(e, "message",
                 json_object_new_string(r->error_message ? r->error_message
                                                         : strerror(err < 0 ? -err : err)));
        json_set(e, "exit_code", json_object_new_int(exit_code_from_errno(err)));
        json_set(doc, "error", e);
        json_set(doc, "errors", take_errors(r));
        return doc;
}
