/* SPDX-License-Identifier: MIT */
/*
 * The APML platform limit written by a BMC agent: one file per GPU,
 * <runtime dir>/apml/<BDF> (runtime dir: $RUNTIME_DIRECTORY or /run/amdsmi, lib/util/runtime-dir.h),
 * e.g. /run/amdsmi/apml/0000:c1:00.0.
 *
 * Format: text, at most 4096 bytes. Blank lines and lines starting with '#' (after optional
 * blanks) are comments. At most one value line: the limit, either a bare integer in
 * microwatts as hwmon writes it ("700000000") or a number with a unit as power_parse_watts()
 * accepts it ("700W", "700 W", "700000mW", "0.7kW"); a number that is not an integer needs a
 * unit ("700.5" is malformed). Leading and trailing blanks (spaces, tabs) of a line are
 * ignored, and so is one '\r' ending it (CRLF line ends are accepted). No value line (an
 * empty file) means "no platform limit". Anything else — two values, a negative number, an
 * unknown unit, 0 or less than 1 W, more than 4294.967295 W (the largest cap hwmon accepts),
 * a comment after the value on its line, a file too long, NUL bytes — is malformed: it is
 * ignored as a source (never guessed) and reported.
 *
 * The file's mtime is when the limit was set. When both a file and a limit given through a
 * privileged call exist, the one set last wins (apml_merge()).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "power-arbitration.h"

#define APML_FILE_MAX 4096

enum apml_file_state {
        APML_FILE_ABSENT,    /* no file */
        APML_FILE_EMPTY,     /* a file without a value: no limit */
        APML_FILE_VALID,     /* uw and mtime_usec are set */
        APML_FILE_MALFORMED, /* error holds why */
        APML_FILE_UNREADABLE /* error holds the errno's text */
};

struct apml_file {
        enum apml_file_state state;
        char path[256];
        uint64_t uw;
        uint64_t mtime_usec;
        char error[160]; /* "line 2: second value '700W'" ... */
};

const char *apml_file_state_to_string(enum apml_file_state s); /* "absent", "empty", ... */

/* The directory, "<runtime dir>/apml". @return 0 or -ENAMETOOLONG. */
int apml_dir(char *buf, size_t size);

/* Parses the contents of a file (pure; @len bytes, not NUL-terminated). On success
 * *ret_uw is the limit or POWER_UW_UNKNOWN for "no value line". @return 0 or -EINVAL with
 * a message in @err (@err_size bytes). */
int apml_parse(const char *data, size_t len, uint64_t *ret_uw, char *err, size_t err_size);

/* Reads <apml dir>/<bdf> into *ret (always filled when 0 is returned: state says what was
 * found; a symbolic link, a directory or a FIFO is "unreadable"). @return 0, or -EINVAL for a
 * bdf that is not a PCI address, dddd:bb:dd.f in lower-case hex with the function 0-7 (no file
 * is opened then, *ret is untouched). */
int apml_read(const char *bdf, struct apml_file *ret);

/* Puts the file's limit into s->apml when it is valid and newer than (or there is no) limit
 * set by a call; setter "apml file <path>". @return 1 when the file's limit was used, else 0. */
int apml_merge(struct power_sources *s, const struct apml_file *f);
