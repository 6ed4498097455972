/* SPDX-License-Identifier: MIT */
/*
 * The error tables the man pages promise against the ones the code uses: amdsmid(8)'s
 * "Errors" table (D-Bus error name -> errno) against lib/util/bus-errors.c, and amdsmi(1)'s
 * "EXIT STATUS" table (status -> errno) against cli/exit-codes.c. Both directions: every
 * errno a page names maps to that name or status, and every errno the code maps is named on
 * the page. The pages are read from $SRCDIR/man.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bus-errors.h"
#include "exit-codes.h"

#define ROWS_MAX 32
#define ERRNOS_MAX 16
#define ERRNO_LAST 200

struct row {
        char key[64];
        int errnos[ERRNOS_MAX];
        size_t n_errnos;
};

struct table {
        struct row rows[ROWS_MAX];
        size_t n_rows;
};

/* "ENOENT" -> 2, also ERESTART; 0 when unknown. */
static int errno_from_name(const char *name) {
        for (int e = 1; e < ERRNO_LAST; e++) {
                const char *n = strerrorname_np(e);

                if (n && strcmp(n, name) == 0)
                        return e;
        }
        return 0;
}

static void trim(char *s) {
        size_t n = strlen(s);

        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
                s[--n] = '\0';
}

/* Parses "EIO, ETIME, EBADMSG" (or "-", "any other") into r->errnos. */
static void add_errnos(struct row *r, const char *text) {
        char buf[512], *save = NULL;

        snprintf(buf, sizeof(buf), "%s", text);
        for (char *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
                int e;

                if (w[0] != 'E')
                        continue; /* "-", "any", "other" */
                e = errno_from_name(w);
                if (e == 0)
                        fail_msg("the man page names an errno this system does not know: %s", w);
                assert_true(r->n_errnos < ERRNOS_MAX);
                r->errnos[r->n_errnos++] = e;
        }
}

/*
 * Reads the scdoc table that follows the line @heading in @page: a header row whose columns
 * are "[[ *a*", ":< *b*", ... (or "|[ *a*", ":[ *b*"), then rows "|  key" with one ":  value"
 * line per further column (continuation lines start with three spaces). The column titled
 * *errno* gives each row's errnos.
 */
static void read_table(const char *page, const char *heading, struct table *t) {
        char path[4096], line[1024];
        const char *srcdir = getenv("SRCDIR");
        int column = 0, errno_column = -1;
        bool in_section = false, in_table = false;
        FILE *f;

        assert_non_null(srcdir);
        snprintf(path, sizeof(path), "%s/man/%s", srcdir, page);
        f = fopen(path, "re");
        if (!f)
                fail_msg("cannot open %s: %s", path, strerror(errno));
        memset(t, 0, sizeof(*t));
        while (fgets(line, sizeof(line), f)) {
                trim(line);
                if (!in_section) {
                        in_section = strcmp(line, heading) == 0;
                        continue;
                }
                if (!in_table) {
                        if (strncmp(line, "[[ ", 3) == 0 || strncmp(line, "|[ ", 3) == 0) {
                                in_table = true;
                                column = 0;
                        }
                        continue;
                }
                if (line[0] == '\0')
                        break; /* the table ends */
                if (line[0] == ':' && t->n_rows == 0) {
                        /* the header's further columns */
                        column++;
                        if (strstr(line, "*errno*"))
                                errno_column = column;
                        continue;
                }
                if (strncmp(line, "|  ", 3) == 0) {
                        assert_true(t->n_rows < ROWS_MAX);
                        snprintf(t->rows[t->n_rows].key, sizeof(t->rows[0].key), "%.63s",
                                 line + 3);
                        t->n_rows++;
                        column = 0;
                        continue;
                }
                if (line[0] == ':') {
                        column++;
                        if (column == errno_column)
                                add_errnos(&t->rows[t->n_rows - 1], line + 1);
                        continue;
                }
                if (strncmp(line, "   ", 3) == 0 && column == errno_column && t->n_rows > 0)
                        add_errnos(&t->rows[t->n_rows - 1], line);
        }
        fclose(f);
        if (errno_column < 0 || t->n_rows == 0)
                fail_msg("%s: no table with an *errno* column after '%s'", page, heading);
}

static const struct row *find_errno(const struct table *t, int e) {
        for (size_t i = 0; i < t->n_rows; i++)
                for (size_t k = 0; k < t->rows[i].n_errnos; k++)
                        if (t->rows[i].errnos[k] == e)
                                return &t->rows[i];
        return NULL;
}

/* The name amdsmid answers with for errno @e (its bus_error_errno() takes it from here). */
static const char *bus_name_of(int e, char *buf, size_t size) {
        snprintf(buf, size, "%s", amdsmi_bus_error_name(-e) ?: "(none: System.Error.*)");
        return buf;
}

static void test_bus_errors_match_amdsmid_8(void **state) {
        struct table t;
        size_t n_code = 0;

        (void) state;
        assert_int_equal(amdsmi_bus_errors_register(), 0);
        read_table("amdsmid.8.scd", "## Errors", &t);

        /* every promise of the page */
        for (size_t i = 0; i < t.n_rows; i++) {
                char want[128], got[128];

                snprintf(want, sizeof(want), "org.amdsmi1.Error.%s", t.rows[i].key);
                if (t.rows[i].n_errnos == 0)
                        fail_msg("amdsmid(8): %s lists no errno", t.rows[i].key);
                for (size_t k = 0; k < t.rows[i].n_errnos; k++) {
                        int e = t.rows[i].errnos[k];

                        bus_name_of(e, got, sizeof(got));
                        if (strcmp(want, got) != 0)
                                fail_msg("amdsmid(8) promises %s for %s; the code answers %s", want,
                                         strerrorname_np(e), got);
                        /* and back: a client reading the name gets an errno of that row */
                        {
                                sd_bus_error error = SD_BUS_ERROR_NULL;
                                int back;

                                (void) sd_bus_error_set(&error, want, "x");
                                back = sd_bus_error_get_errno(&error);
                                sd_bus_error_free(&error);
                                if (find_errno(&t, back) != &t.rows[i])
                                        fail_msg("%s reads back as %s, not an errno of its row",
                                                 want, strerrorname_np(back));
                        }
                }
        }
        /* everything the code maps is on the page */
        for (const sd_bus_error_map *m = amdsmi_bus_errors; m->name; m++) {
                const struct row *r;

                if (!m->name || strncmp(m->name, "org.amdsmi1.Error.", 18) != 0)
                        continue;
                n_code++;
                r = find_errno(&t, m->code);
                if (!r)
                        fail_msg("the code maps %s to %s; amdsmid(8) does not say so",
                                 strerrorname_np(m->code), m->name);
                if (strcmp(r->key, m->name + 18) != 0)
                        fail_msg("the code maps %s to %s; amdsmid(8) says %s",
                                 strerrorname_np(m->code), m->name, r->key);
        }
        assert_true(n_code >= t.n_rows);
        /* the names ARCHITECTURE fixes, StateDamaged among them */
        assert_non_null(find_errno(&t, EUCLEAN));
}

static void test_exit_codes_match_amdsmi_1(void **state) {
        struct table t;

        (void) state;
        read_table("amdsmi.1.scd", "# EXIT STATUS", &t);
        assert_true(t.n_rows >= 11);
        for (size_t i = 0; i < t.n_rows; i++) {
                int status = atoi(t.rows[i].key);

                for (size_t k = 0; k < t.rows[i].n_errnos; k++) {
                        int e = t.rows[i].errnos[k];

                        if (exit_code_from_errno(-e) != status)
                                fail_msg("amdsmi(1) promises exit status %d for %s; the code "
                                         "gives %d",
                                         status, strerrorname_np(e), exit_code_from_errno(-e));
                }
        }
        for (int e = 1; e < ERRNO_LAST; e++) {
                int status = exit_code_from_errno(-e);
                const struct row *r;

                if (status == EXIT_GENERIC)
                        continue; /* "any other" */
                r = find_errno(&t, e);
                if (!r || atoi(r->key) != status)
                        fail_msg("the code gives exit status %d for %s; amdsmi(1) %s", status,
                                 strerrorname_np(e), r ? r->key : "does not list it");
        }
        assert_int_equal(exit_code_from_errno(-EUCLEAN), EXIT_STATE_DAMAGED);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bus_errors_match_amdsmid_8),
                cmocka_unit_test(test_exit_codes_match_amdsmi_1),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
