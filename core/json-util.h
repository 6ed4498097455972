/* SPDX-License-Identifier: MIT */
/*
 * JSON values of amdsmi's documents (exact decimals, hex identifiers, nulls for unknown values)
 * and the head of every amdsmi/1 document, for both front ends. Pure: json-c and libc only.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#define OUTPUT_SCHEMA "amdsmi/1"

/* A u64 field with no value (the library's AMDSMI_NA). */
#define OUTPUT_NA UINT64_MAX

/*
 * Writes @v / 10^@pow10 as an exact decimal: no exponent, no trailing zeros after the point,
 * no point for whole numbers ("139.5", "41", "-0.25", "0.000001"). @pow10 <= 18.
 * @return 0, or -ENOBUFS if @len is too small (32 bytes always suffice).
 */
int format_scaled_u64(uint64_t v, unsigned pow10, char *buf, size_t len);
int format_scaled_i64(int64_t v, unsigned pow10, char *buf, size_t len);

/*
 * JSON numbers for a value in library units scaled by 10^-@pow10: an integer when the result
 * is whole, else a double serialised exactly as format_scaled_*() writes it.
 * json_scaled_u64() returns NULL (JSON null) for OUTPUT_NA.
 */
json_object *json_scaled_i64(int64_t v, unsigned pow10);
json_object *json_scaled_u64(uint64_t v, unsigned pow10);

/* An integer, or NULL (JSON null) for OUTPUT_NA. */
json_object *json_u64_or_null(uint64_t v);
/* A string, or NULL (JSON null) for NULL. */
json_object *json_string_or_null(const char *s);
/* "0x%0*x" as a string: PCI IDs, 64-bit identifiers. */
json_object *json_hex(uint64_t v, int digits);

/* RFC 3339 UTC with milliseconds: "2025-01-31T08:15:02.123Z". @len >= 32. */
int format_timestamp(const struct timespec *ts, char *buf, size_t len);

/* Parses what format_timestamp() writes. @return 0 or -EINVAL. */
int parse_timestamp(const char *s, struct timespec *ret);

/* {"schema", "timestamp", "hostname", "command"}: the head of every document. */
json_object *document_new(const char *command, const struct timespec *ts, const char *hostname);

/*
 * An entry of "errors": {"gpu": @gpu or null if < 0, "field": @field or null, "errno":
 * "EINVAL" or null if @r is 0, "message": @message}.
 */
json_object *error_entry_new(int gpu, const char *field, int r, const char *message);

/* Sets @key of @obj to @v (NULL for JSON null). */
static inline void json_set(json_object *obj, const char *key, json_object *v) {
        json_object_object_add(obj, key, v);
}

/*
 * @doc as amdsmi(1) prints a document (without the final newline): pretty (two spaces, empty
 * arrays as "[]") or, @compact, on one line (watch mode: NDJSON). Owned by @doc, valid until it
 * changes; NULL when out of memory. amdsmid renders GetDocumentText() with it, so that both
 * print the same bytes.
 */
const char *json_document_text(json_object *doc, bool compact);

/* Turns a label into a JSON key part: lower case, [a-z0-9_] only. */
void sanitize_key(const char *in, char *out, size_t len);
