/* SPDX-License-Identifier: MIT */
/* Strict number parsing: the whole string must be consumed (strip a newline first). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of the hexadecimal digit @c (either case), or -1. */
int unhexchar(char c);

/* Parses an unsigned decimal/hex number (base 0: auto, 10, 16). No sign, no leading space.
 * Returns 0, -EINVAL (empty or garbage) or -ERANGE. */
int parse_u64(const char *s, int base, uint64_t *ret);
int parse_u32(const char *s, int base, uint32_t *ret);
/* Signed decimal. */
int parse_i64(const char *s, int64_t *ret);
int parse_int(const char *s, int *ret);

/* $JOURNAL_STREAM as systemd sets it: "DEVICE:INODE", two unsigned decimal numbers and
 * nothing else. Returns 0, -EINVAL or -ERANGE; the outputs are untouched on failure. */
int parse_journal_stream(const char *s, uint64_t *ret_dev, uint64_t *ret_ino);

/* Removes one trailing newline in place; returns the new length. */
size_t strip_newline(char *s, size_t len);

/* A PCI address as the kernel names devices: "dddd:bb:dd.f", a domain of 4 to 7 lower-case
 * hex digits (VMD domains have 5; 7 is the most a 16-byte BDF buffer holds), bus and device
 * of 2, the function 0-7. Nothing else can name a file (no '/',
 * no "..") or a GPU. NULL is not valid. */
bool pci_bdf_valid(const char *s);

/* Case-insensitive exact string compare. */
int streq_ci(const char *a, const char *b);

/* Frees a NULL-terminated string array. */
void strv_free(char **l);
/* Number of entries of a NULL-terminated string array. */
size_t strv_length(char **l);
/* Appends a copy of @s to the NULL-terminated array *@l (NULL: a new one). 0 or -ENOMEM. */
int strv_extend(char ***l, const char *s);
