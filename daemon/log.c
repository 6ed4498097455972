/* SPDX-License-Identifier: MIT */
/*
 * The daemon's log: structured journal entries when stderr is connected to the journal
 * (systemd sets JOURNAL_STREAM), plain lines with a priority prefix on stderr otherwise.
 * Every change carries the fields GPU= and CHANGE=, so `journalctl GPU=0000:05:00.0` finds them;
 * a health change GPU= and HEALTH= (log_gpu_field()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "amdsmid.h"
#include "parse-util.h"

static bool use_journal;
static int max_priority = LOG_INFO;

void log_setup(void) {
        const char *e = getenv("JOURNAL_STREAM");
        uint64_t dev, ino;
        struct stat st;

        if (getenv("AMDSMI_DEBUG") && strcmp(getenv("AMDSMI_DEBUG"), "1") == 0)
                max_priority = LOG_DEBUG;
        if (!e || parse_journal_stream(e, &dev, &ino) < 0)
                return;
        if (fstat(STDERR_FILENO, &st) < 0)
                return;
        use_journal = (uint64_t) st.st_dev == dev && (uint64_t) st.st_ino == ino;
}

/* log_capture_begin(): where messages of NOTICE and above also go (the main thread only). */
static char *capture_buf;
static size_t capture_size;

void log_capture_begin(char *buf, size_t size) {
        capture_buf = size > 0 ? buf : NULL;
        capture_size = size;
        if (capture_buf)
                capture_buf[0] = '\0';
}

void log_capture_end(void) {
        capture_buf = NULL;
        capture_size = 0;
}

static void log_fieldv(int priority, const char *gpu, const char *change, const char *field,
                       const char *format, va_list ap) _printf_(5, 0);

void log_full(int priority, const char *gpu, const char *change, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        log_fieldv(priority, gpu, change, NULL, format, ap);
        va_end(ap);
}

void log_gpu_field(int priority, const char *gpu, const char *field, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        log_fieldv(priority, gpu, NULL, field, format, ap);
        va_end(ap);
}

static void log_fieldv(int priority, const char *gpu, const char *change, const char *field,
                       const char *format, va_list ap) {
        char msg[2048];
        int saved = errno;

        if (priority > max_priority && !(capture_buf && priority <= LOG_NOTICE))
                return;
        (void) vsnprintf(msg, sizeof(msg), format, ap);
        if (capture_buf && priority <= LOG_NOTICE) {
                size_t n = strlen(capture_buf);

                (void) snprintf(capture_buf + n, capture_size - n, "%s%s", n ? "; " : "", msg);
        }
        if (priority > max_priority) {
                errno = saved;
                return;
        }

        if (use_journal) {
                char m[2100], p[16], g[32], c[64];
                struct iovec iov[6];
                int n = 0;

                snprintf(m, sizeof(m), "MESSAGE=%s%s%s", gpu ? gpu : "", gpu ? ": " : "", msg);
                snprintf(p, sizeof(p), "PRIORITY=%d", priority);
                iov[n++] = (struct iovec){ m, strlen(m) };
                iov[n++] = (struct iovec){ p, strlen(p) };
                iov[n++] = (struct iovec){ (char *) "SYSLOG_IDENTIFIER=amdsmid", 25 };
                if (gpu) {
                        snprintf(g, sizeof(g), "GPU=%s", gpu);
                        iov[n++] = (struct iovec){ g, strlen(g) };
                }
                if (change) {
                        snprintf(c, sizeof(c), "CHANGE=%s", change);
                        iov[n++] = (struct iovec){ c, strlen(c) };
                }
                if (field)
                        iov[n++] = (struct iovec){ (char *) field, strlen(field) };
                (void) sd_journal_sendv(iov, n);
        } else {
                static const char *const level[] = {
                        [LOG_EMERG] = "emerg", [LOG_ALERT] = "alert", [LOG_CRIT] = "crit",
                        [LOG_ERR] = "error", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
                        [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
                };

                fprintf(stderr, "amdsmid: %s: %s%s%s\n", level[priority & 7], gpu ? gpu : "",
                        gpu ? ": " : "", msg);
        }
        errno = saved;
}
