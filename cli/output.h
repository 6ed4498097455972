/* SPDX-License-Identifier: MIT */
/*
 * Output of amdsmi(1): the verbs fill one JSON document per invocation (per sample in watch
 * mode) and describe their table and CSV views as column lists over it, so each value is
 * produced once and the three formats cannot disagree.
 *
 *   JSON   the document itself, {"schema": "amdsmi/1", ...}; unavailable values are null.
 *   CSV    a header line, then one row per element of an array of the document (per GPU);
 *          a column is a path into the row object; arrays are joined with ';', unavailable
 *          values are empty cells, fields are quoted as in RFC 4180; lines end in "\n".
 *   table  aligned columns (or "HEADER  value" blocks), "N/A" for unavailable values.
 *
 * Paths: "a.b.c" walks objects; "a[]" maps the rest of the path over the array a (the cell
 * becomes a list); "a[key=value]" picks the first element of a whose key renders as value.
 * This file is pure (json-c and libc only) and unit-tested.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <json-c/json.h>

#include "json-util.h"

enum output_format {
        OUTPUT_TABLE,
        OUTPUT_JSON,
        OUTPUT_CSV,
};

/* Looks up @path in @root. @return a new reference, or NULL if absent or null. */
json_object *json_path_get(json_object *root, const char *path);

/*
 * Renders a value as a cell. @return a malloc'd string, or NULL for null/absent (the caller
 * shows "N/A" in a table and an empty cell in CSV). Display flags apply to tables only.
 */
char *output_cell(json_object *v, enum output_format format, unsigned flags);

/* Quotes a CSV field if it holds ',', '"', CR, LF or leading/trailing space. malloc'd. */
char *csv_quote(const char *s);

enum {
        COLUMN_HEX = 1u << 0,   /* table: integers as 0x%x */
        COLUMN_MIB = 1u << 1,   /* table: bytes shown in MiB (rounded down) */
        COLUMN_WHOLE = 1u << 2, /* table: numbers without their fraction (truncated) */
        COLUMN_NONE = 1u << 3,  /* table: null means "none" here and shows as "-", not N/A */
};

struct column {
        char *name;   /* CSV column name (unique, snake_case with unit); NULL: table only */
        char *header; /* table header with unit, e.g. "POWER (W)"; NULL: CSV only */
        char *path;   /* path into the row object */
        unsigned flags;
};

struct columns {
        struct column *v;
        size_t n;
};

/* Appends a column (the strings are copied). @return 0 or -ENOMEM. */
int columns_add(struct columns *c, const char *name, const char *header, const char *path,
                unsigned flags);
/* A constant column description, for tables of columns in the verbs. */
struct column_def {
        const char *name;
        const char *header;
        const char *path;
        unsigned flags;
};

/* Appends @n columns. @return 0 or -ENOMEM. */
int columns_add_defs(struct columns *c, const struct column_def *defs, size_t n);
/* @return whether a column of that CSV name exists. */
bool columns_has(const struct columns *c, const char *name);
void columns_free(struct columns *c);

/* "RESET" or "NO DRIVER" for a GPU's object whose "state" is "resetting" or "no_driver",
 * else NULL. A table shows it once in place of the values (the GPU's identity stays). */
const char *output_state_marker(json_object *row);

/* A table: one header line, one line per element of @rows; every line starts with @indent. */
int output_table(FILE *f, const struct columns *cols, json_object *rows, const char *indent);
/* The same, with the header line only if @header (rows that follow earlier ones: a column is
 * as wide as its header or its widest cell of these rows). */
int output_table_rows(FILE *f, const struct columns *cols, json_object *rows, bool header);

/*
 * Parents and their children: one line per element of @prows (@pcols, with a header), each
 * followed by its @counts[i] rows of @crows (in order) as a table of @ccols indented by
 * @indent, with the children's header above each group. Columns align over all parents and
 * over all children. @return 0 or a negative errno.
 */
int output_nested_table(FILE *f, const struct columns *pcols, json_object *prows,
                        const struct columns *ccols, json_object *crows, const size_t *counts,
                        const char *indent);
/*
 * Parents and their children (the array @child_key of each parent object in @parents), from
 * rows @row_fn builds: in a table (@table), one line per parent with its children indented
 * below it (output_nested_table()); in CSV, one row per child with its parent's columns, and
 * one row with empty child cells for a parent without children. @return 0 or a negative errno.
 */
typedef json_object *(*output_row_fn)(json_object *parent, json_object *child, bool table);
/* In a watch (@w non-NULL), CSV rows start with a "timestamp" column (@w->stamp), the header
 * comes only with @w->header, and a table after the first is set off by a blank line. */
struct output_watch {
        const char *stamp;
        bool header;
};
int output_parents_children(FILE *f, json_object *parents, const char *child_key,
                            const struct column_def *pdefs, size_t n_pdefs,
                            const struct column_def *cdefs, size_t n_cdefs,
                            output_row_fn row_fn, bool table, const struct output_watch *w);

/* "HEADER  value" lines for one object, headers padded to one width. */
int output_kv(FILE *f, const struct columns *cols, json_object *row, const char *indent);
/* The CSV header line, and one CSV line per element of @rows. */
int output_csv_header(FILE *f, const struct columns *cols);
int output_csv_rows(FILE *f, const struct columns *cols, json_object *rows);

/* Prints a document followed by a newline: pretty (2-space indent), or on one line. */
int output_json(FILE *f, json_object *doc, bool compact);
