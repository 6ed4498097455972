/* SPDX-License-Identifier: MIT */
/*
 * amdsmi doctor [-g SEL] [--json|--csv]: the host preflight (doctor.h). Through amdsmid when it
 * runs (its GetDocument("doctor"), what Manager.Doctor answers), else, or with --direct,
 * in-process. Exits as `amdsmi health` does: 0 every check ok (or not applicable), 1 a
 * warning, 2 a failure, 3 the doctor could not run (usage errors too).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus.h"
#include "cli.h"
#include "doctor.h"
#include "documents.h"
#include "json-util.h"
#include "macro.h"

static const struct column_def doctor_columns[] = {
        { "id", "CHECK", "id", 0 },
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", "DEVICE", "bdf", 0 },
        { "status", "STATUS", "status", 0 },
        { "summary", "SUMMARY", "summary", 0 },
        { "fix", "FIX", "fix", 0 },
};

static const char *str(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v) || !v)
                return NULL;
        return json_object_get_string(v);
}

static int print_table(json_object *doc) {
        json_object *checks = json_object_object_get(doc, "checks");
        json_object *sum = json_object_object_get(doc, "summary");
        size_t n = checks ? json_object_array_length(checks) : 0;

        printf("%-14s  %-19s  %-3s  %-12s  %s\n", "STATUS", "CHECK", "GPU", "DEVICE", "SUMMARY");
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(checks, i);
                const char *gpu = str(o, "gpu"), *bdf = str(o, "bdf"), *fix = str(o, "fix");

                printf("%-14s  %-19s  %-3s  %-12s  %s\n", str(o, "status") ?: "?",
                       str(o, "id") ?: "?", gpu ?: "-", bdf ?: "-", str(o, "summary") ?: "");
                if (fix)
                        printf("%-14s  fix: %s\n", "", fix);
        }
        printf("%s ok, %s warn, %s fail, %s not applicable\n", str(sum, "ok") ?: "0",
               str(sum, "warn") ?: "0", str(sum, "fail") ?: "0", str(sum, "not_applicable") ?: "0");
        return ferror(stdout) ? -EIO : 0;
}

static int print_csv(json_object *doc) {
        struct columns cols = {};
        int r;

        r = columns_add_defs(&cols, doctor_columns, ELEMENTSOF(doctor_columns));
        if (r >= 0)
                r = output_csv_header(stdout, &cols);
        if (r >= 0)
                r = output_csv_rows(stdout, &cols, json_object_object_get(doc, "checks"));
        columns_free(&cols);
        return r;
}

static int doctor_sample(struct cli *c) {
        json_object *doc = NULL, *a, *e;
        int r;

        r = cli_read_daemon_document(c, "doctor", &doc);
        if (r < 0)
                return cli_fail(c, r, "%s", strerror(-r));
        if (r > 0) {
                /* amdsmid's notes and errors, as the in-process reading reports them */
                a = json_object_object_get(doc, "notes");
                for (size_t i = 0; a && i < json_object_array_length(a); i++)
                        report_note(&c->report, "%s",
                                    json_object_get_string(json_object_array_get_idx(a, i)));
                json_object_object_del(doc, "notes");
        } else {
                struct doc_query q;

                cli_doc_query(c, &q);
                /* its PID file first: a read loads no libsystemd when amdsmid is not there */
                q.doctor_daemon = cli_daemon_may_run(NULL) && cli_daemon_running(c) ? 1 : 0;
                /* debugfs (the bad-page threshold) is root's: said as unknown, and why */
                q.unprivileged = geteuid() != 0;
                if (q.unprivileged)
                        report_note(&c->report,
                                    "not root: the bad-page thresholds (debugfs) are not "
                                    "read; run as root, or through amdsmid (polkit: "
                                    "org.amdsmi1.health.read-privileged)");
                doc = doctor_document(&q);
                if (!doc)
                        return c->report.error_message ? -ENOMEM
                                                       : cli_fail(c, -ENOMEM, "out of memory");
        }
        e = json_object_object_get(doc, "exit_code");
        c->exit_status = e ? json_object_get_int(e) : 3;
        switch (c->format) {
        case OUTPUT_JSON:
                r = cli_print_json(c, doc);
                break;
        case OUTPUT_CSV:
                r = print_csv(doc);
                break;
        default:
                r = print_table(doc);
                break;
        }
        json_object_put(doc);
        return cli_sample_done(c, NULL, r);
}

int verb_doctor(struct cli *c) {
        return cli_open_run(c, doctor_sample);
}
