/* SPDX-License-Identifier: MIT */
/*
 * amdsmid.conf (amdsmid.conf(5)), read with libinih.
 *
 * libinih is used through its callbacks: a reader hands it one line at a time and a handler
 * receives each key. The reader does what libinih cannot report by itself, so that no input is
 * ever taken silently in a way the man page does not describe:
 *  - it counts lines (Debian's libinih is built without INI_HANDLER_LINENO), so every message
 *    carries the line it is about; parsing stops at the first error;
 *  - it refuses NUL bytes, lines whose content does not fit libinih's line buffer (which would
 *    otherwise be cut and read as two lines), bytes that are not UTF-8 and control characters
 *    outside comments;
 *  - it removes comments ('#' or ';' up to the end of the line: no value contains either) and
 *    the blanks around the content, so libinih's multi-line values (an indented line continuing
 *    the previous value) and its inline-comment rules never apply;
 *  - it reads section headers itself (libinih skips text after ']', truncates long names and
 *    does not call the handler for a section without keys), and refuses "key: value", which
 *    libinih would accept.
 * The handler then checks each key against the section it belongs to.
 */
#include "amdsmid-conf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include <amdsmi/amdsmi.h>

#include "json-util.h"
#include "macro.h"
#include "parse-util.h"
#include "power-arbitration.h"
#include "safe-open.h"

#ifndef AMDSMID_CONF_PATH
#error "AMDSMID_CONF_PATH (SYSCONFDIR/amdsmi/amdsmid.conf) must be defined by the build"
#endif

/* The most a section header's text can hold: more than any line libinih takes. */
#define SECTION_TEXT_MAX 256

enum section {
        SECTION_NONE,
        SECTION_DAEMON,
        SECTION_GPU,
        SECTION_LIBVIRT,
        SECTION_METRICS,
        SECTION_POWER,
        SECTION_HEALTH,
        SECTION_KUBERNETES,
};

enum key {
        KEY_POLL_INTERVAL_MS,
        KEY_HISTORY_MAX_KIB,
        KEY_DAEMON_PROFILE,
        KEY_COMPUTE_MODE,
        KEY_MEMORY_MODE,
        KEY_POWER_CAP,
        KEY_NUM_VFS,
        KEY_URI,
        KEY_HOOK_TIMEOUT_S,
        KEY_METRICS_INTERVAL_MS,
        KEY_METRICS_IDENTITY,
        KEY_METRICS_TEXTFILE,
        KEY_POWER_ENFORCE,
        KEY_GPU_ENFORCE,
        KEY_HEALTH_CE_RATE,
        KEY_HEALTH_BAD_PAGES_PERCENT,
        KEY_HEALTH_RESET_WINDOW,
        KEY_HEALTH_EVENTS,
        KEY_NFD_FEATURES,
        KEY_PERF_LEVEL,
        KEY_PERF_DETERMINISM_SCLK,
        KEY_SCLK_MIN,
        KEY_SCLK_MAX,
        KEY_MCLK_MAX,
        KEY_SOC_PSTATE,
        KEY_XGMI_PLPD,
        _KEY_MAX,
};

static const struct {
        const char *name;
        enum section section;
} keys[_KEY_MAX] = {
        [KEY_POLL_INTERVAL_MS] = { "poll_interval_ms", SECTION_DAEMON },
        [KEY_HISTORY_MAX_KIB] = { "history_max_kib", SECTION_DAEMON },
        [KEY_DAEMON_PROFILE] = { "profile", SECTION_DAEMON },
        [KEY_COMPUTE_MODE] = { "compute_mode", SECTION_GPU },
        [KEY_MEMORY_MODE] = { "memory_mode", SECTION_GPU },
        [KEY_POWER_CAP] = { "power_cap", SECTION_GPU },
        [KEY_NUM_VFS] = { "num_vfs", SECTION_GPU },
        [KEY_URI] = { "uri", SECTION_LIBVIRT },
        [KEY_HOOK_TIMEOUT_S] = { "hook_timeout_s", SECTION_LIBVIRT },
        [KEY_METRICS_INTERVAL_MS] = { "interval_ms", SECTION_METRICS },
        [KEY_METRICS_IDENTITY] = { "identity", SECTION_METRICS },
        [KEY_METRICS_TEXTFILE] = { "textfile", SECTION_METRICS },
        [KEY_POWER_ENFORCE] = { "enforce", SECTION_POWER },
        [KEY_GPU_ENFORCE] = { "enforce", SECTION_GPU },
        [KEY_HEALTH_CE_RATE] = { "ce_rate_warning_per_hour", SECTION_HEALTH },
        [KEY_HEALTH_BAD_PAGES_PERCENT] = { "bad_pages_warning_percent", SECTION_HEALTH },
        [KEY_HEALTH_RESET_WINDOW] = { "reset_window_minutes", SECTION_HEALTH },
        [KEY_HEALTH_EVENTS] = { "events", SECTION_HEALTH },
        [KEY_NFD_FEATURES] = { "nfd_features", SECTION_KUBERNETES },
        [KEY_PERF_LEVEL] = { "perf_level", SECTION_GPU },
        [KEY_PERF_DETERMINISM_SCLK] = { "perf_determinism_sclk_mhz", SECTION_GPU },
        [KEY_SCLK_MIN] = { "sclk_min_mhz", SECTION_GPU },
        [KEY_SCLK_MAX] = { "sclk_max_mhz", SECTION_GPU },
        [KEY_MCLK_MAX] = { "mclk_max_mhz", SECTION_GPU },
        [KEY_SOC_PSTATE] = { "soc_pstate", SECTION_GPU },
        [KEY_XGMI_PLPD] = { "xgmi_plpd", SECTION_GPU },
};

static const char *const section_keys[] = {
        [SECTION_DAEMON] = "poll_interval_ms, history_max_kib, profile",
        [SECTION_GPU] = "compute_mode, memory_mode, power_cap, num_vfs, enforce, perf_level, "
                        "perf_determinism_sclk_mhz, sclk_min_mhz, sclk_max_mhz, mclk_max_mhz, "
                        "soc_pstate, xgmi_plpd",
        [SECTION_LIBVIRT] = "uri, hook_timeout_s",
        [SECTION_METRICS] = "interval_ms, identity, textfile",
        [SECTION_POWER] = "enforce",
        [SECTION_HEALTH] = "ce_rate_warning_per_hour, bad_pages_warning_percent, "
                           "reset_window_minutes, events",
        [SECTION_KUBERNETES] = "nfd_features",
};

struct parser {
        const char *name;    /* for messages */
        const char *p, *end; /* what is left to read */
        unsigned line;       /* the line handed to libinih last (1-based) */
        int r;               /* the first error, or 0 */
        char *err;
        size_t err_size;

        struct config *c;      /* gpus: the [gpu BDF] sections only, until the end */
        struct config_gpu all; /* [gpu] / [gpu all], when all.line != 0 */
        unsigned daemon_line;  /* [daemon], when != 0 */
        unsigned libvirt_line; /* [libvirt], when != 0 */
        unsigned metrics_line; /* [metrics], when != 0 */
        unsigned power_line;   /* [power], when != 0 */
        unsigned health_line;  /* [health], when != 0 */
        unsigned kubernetes_line; /* [kubernetes], when != 0 */
        unsigned profile_line; /* profile = in [daemon], when != 0 */

        enum section section;                /* the current section */
        char section_text[SECTION_TEXT_MAX]; /* as written, without brackets and blanks */
        struct config_gpu *gpu;              /* the current GPU section (in c->gpus or &all) */
        unsigned key_line[_KEY_MAX]; /* the current section's keys: where given, 0: not yet */
};

_printf_(3, 4) static int parser_error(struct parser *p, int r, const char *fmt, ...) {
        va_list ap;
        int n;

        if (p->r < 0) /* the first error only */
                return p->r;
        p->r = r;
        if (!p->err || p->err_size == 0)
                return r;
        n = snprintf(p->err, p->err_size, "%s:%u: ", p->name, p->line);
        if (n < 0 || (size_t) n >= p->err_size)
                return r;
        va_start(ap, fmt);
        (void) vsnprintf(p->err + n, p->err_size - (size_t) n, fmt, ap);
        va_end(ap);
        return r;
}

_printf_(4, 5) static int file_error(char *err, size_t err_size, int r, const char *fmt, ...) {
        va_list ap;

        if (err && err_size > 0) {
                va_start(ap, fmt);
                (void) vsnprintf(err, err_size, fmt, ap);
                va_end(ap);
        }
        return r;
}

static bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

/* Well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF). Returns the offset of
 * the first bad byte, or n. */
static size_t utf8_check(const char *s, size_t n) {
        const unsigned char *u = (const unsigned char *) s;
        size_t i = 0;

        while (i < n) {
                unsigned char c = u[i];
                size_t len;
                uint32_t cp, min;

                if (c < 0x80) {
                        i++;
                        continue;
                }
                if (c >= 0xc2 && c <= 0xdf)
                        len = 2, cp = c & 0x1f, min = 0x80;
                else if (c >= 0xe0 && c <= 0xef)
                        len = 3, cp = c & 0x0f, min = 0x800;
                else if (c >= 0xf0 && c <= 0xf4)
                        len = 4, cp = c & 0x07, min = 0x10000;
                else
                        return i;
                if (n - i < len)
                        return i;
                for (size_t k = 1; k < len; k++) {
                        if ((u[i + k] & 0xc0) != 0x80)
                                return i;
                        cp = (cp << 6) | (u[i + k] & 0x3f);
                }
                if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return i;
                i += len;
        }
        return n;
}

/* "0000:05:00.0", "0000:C1:00.0" or "05:00.0" (domain 0000) → the kernel's lower-case name. */
static int bdf_normalize(const char *s, char ret[static 16]) {
        char buf[16];
        size_t n = strlen(s), off = 0;

        if (n == 7) { /* bb:dd.f */
                memcpy(buf, "0000:", 5);
                off = 5;
        } else if (n >= sizeof(buf))
                return -EINVAL;
        for (size_t i = 0; i <= n; i++) {
                char c = s[i];

                buf[off + i] = c >= 'A' && c <= 'F' ? (char) (c - 'A' + 'a') : c;
        }
        if (!pci_bdf_valid(buf))
                return -EINVAL;
        memcpy(ret, buf, strlen(buf) + 1);
        return 0;
}

static void gpu_init(struct config_gpu *g, const char *bdf, unsigned line) {
        *g = (struct config_gpu){
                .compute = AMDSMI_COMPUTE_UNKNOWN,
                .memory = AMDSMI_MEMORY_UNKNOWN,
                .line = line,
        };
        snprintf(g->bdf, sizeof(g->bdf), "%s", bdf);
}

bool config_profile_name_valid(const char *s) {
        size_t n = s ? strlen(s) : 0;

        if (n == 0 || n > CONFIG_PROFILE_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                             (c >= '0' && c <= '9');

                if (!alnum && !((c == '.' || c == '_' || c == '-') && i > 0 && i < n - 1))
                        return false;
        }
        return true;
}

#define PROFILE_NAME_RULE \
        "1 to 63 letters, digits, '.', '_' or '-', a letter or digit at both ends"

const struct config_profile *config_find_profile(const struct config *c, const char *name) {
        for (size_t i = 0; c && name && i < c->n_profiles; i++)
                if (streq(c->profiles[i].name, name))
                        return &c->profiles[i];
        return NULL;
}

/* "[profile NAME]" or "[profile NAME gpu BDF]": @arg is what follows "profile". */
static int profile_section_begin(struct parser *p, const char *arg, char *canonical,
                                 size_t size) {
        char name[CONFIG_PROFILE_NAME_MAX + 2], bdf[16];
        struct config_profile *pr;
        const char *rest;
        size_t n;

        while (is_blank(*arg))
                arg++;
        n = strcspn(arg, " \t");
        if (n == 0)
                return parser_error(p, -EINVAL,
                                    "section [%s] names no profile ([profile NAME] or [profile "
                                    "NAME gpu BDF])",
                                    p->section_text);
        if (n >= sizeof(name) || (snprintf(name, sizeof(name), "%.*s", (int) n, arg),
                                  !config_profile_name_valid(name)))
                return parser_error(p, -EINVAL, "bad profile name \"%.*s\" in [%s] (" PROFILE_NAME_RULE ")",
                                    (int) n, arg, p->section_text);
        rest = arg + n;
        while (is_blank(*rest))
                rest++;
        bdf[0] = '\0';
        if (rest[0] != '\0') {
                const char *b;

                if (strncmp(rest, "gpu", 3) != 0 || !is_blank(rest[3]))
                        return parser_error(p, -EINVAL,
                                            "unexpected \"%s\" in [%s] ([profile NAME] or "
                                            "[profile NAME gpu BDF])",
                                            rest, p->section_text);
                b = rest + 3;
                while (is_blank(*b))
                        b++;
                if (bdf_normalize(b, bdf) < 0)
                        return parser_error(p, -EINVAL,
                                            "malformed PCI address \"%s\" in [%s] "
                                            "(DDDD:BB:DD.F or BB:DD.F, e.g. 0000:05:00.0)",
                                            b, p->section_text);
        }

        pr = (struct config_profile *) config_find_profile(p->c, name);
        if (!pr) {
                pr = reallocarray(p->c->profiles, p->c->n_profiles + 1, sizeof(*pr));
                if (!pr)
                        return parser_error(p, -ENOMEM, "out of memory");
                p->c->profiles = pr;
                pr = &pr[p->c->n_profiles++];
                *pr = (struct config_profile){ .line = p->line };
                memcpy(pr->name, name, strlen(name) + 1); /* valid: at most 63 */
        }
        if (bdf[0] == '\0') {
                if (pr->all.line > 0)
                        return parser_error(p, -EINVAL,
                                            "section [%s] given twice (first on line %u)",
                                            p->section_text, pr->all.line);
                gpu_init(&pr->all, "", p->line);
                p->gpu = &pr->all;
                snprintf(canonical, size, "profile %s", name);
        } else {
                struct config_gpu *g;

                for (size_t i = 0; i < pr->n_gpus; i++)
                        if (streq(pr->gpus[i].bdf, bdf))
                                return parser_error(
                                        p, -EINVAL, "section [%s] given twice (first on line %u)",
                                        p->section_text, pr->gpus[i].line);
                g = reallocarray(pr->gpus, pr->n_gpus + 1, sizeof(*g));
                if (!g)
                        return parser_error(p, -ENOMEM, "out of memory");
                pr->gpus = g;
                p->gpu = &g[pr->n_gpus++];
                gpu_init(p->gpu, bdf, p->line);
                snprintf(canonical, size, "profile %s gpu %s", name, bdf);
        }
        return 0;
}

/* A section header, "[...]" with nothing after it (comments and blanks are gone already). Writes
 * the header libinih is given (the canonical spelling) into buf. */
static int section_begin(struct parser *p, const char *s, size_t n, char *buf, size_t size) {
        const char *close = memchr(s, ']', n), *in, *in_end;
        char canonical[128];

        if (!close)
                return parser_error(p, -EINVAL, "missing \"]\" in section header");
        if (close != s + n - 1)
                return parser_error(p, -EINVAL, "unexpected text after \"]\"");

        in = s + 1;
        in_end = close;
        while (in < in_end && is_blank(*in))
                in++;
        while (in_end > in && is_blank(in_end[-1]))
                in_end--;
        /* n is below libinih's line buffer, which is smaller than section_text */
        snprintf(p->section_text, sizeof(p->section_text), "%.*s", (int) (in_end - in), in);

        memset(p->key_line, 0, sizeof(p->key_line));
        p->gpu = NULL;
        p->section = SECTION_NONE;

        if (streq(p->section_text, "daemon")) {
                if (p->daemon_line > 0)
                        return parser_error(p, -EINVAL,
                                            "section [%s] given twice (first on line %u)",
                                            p->section_text, p->daemon_line);
                p->daemon_line = p->line;
                p->section = SECTION_DAEMON;
                snprintf(canonical, sizeof(canonical), "daemon");
        } else if (streq(p->section_text, "libvirt")) {
                if (p->libvirt_line > 0)
                        return parser_error(p, -EINVAL,
                                            "section [%s] given twice (first on line %u)",
                                            p->section_text, p->libvirt_line);
                p->libvirt_line = p->line;
                p->section = SECTION_LIBVIRT;
                snprintf(canonical, sizeof(canonical), "libvirt");
        } else if (streq(p->section_text, "metrics")) {
                if (p->metrics_line > 0)
                        return parser_error(p, -EINVAL,
                                            "section [%s] given twice (first on line %u)",
                                            p->section_text, p->metrics_line);
                p->metrics_line = p->line;
                p->section = SECTION_METRICS;
                snprintf(canonical, sizeof(canonical), "metrics");
        } else if (streq(p->section_text, "power")) {
                if (p->power_line > 0)
                        return parser_error(p, -EINVAL,
                                            "section [%s] given twice (first on line %u)",
                                            p->section_text, p->power_line);
                p->power_line = p->line;
                p->section = SECTION_POWER;
                snprintf(canonical, sizeof(canonical), "power");
        } else if (streq(p->section_text, "health")) {
                if (p->health_line > 0)
                        return parser_error(p, -EINVAL,
                                            "section [%s] given twice (first on line %u)",
                                            p->section_text, p->health_line);
                p->health_line = p->line;
                p->section = SECTION_HEALTH;
                snprintf(canonical, sizeof(canonical), "health");
        } else if (streq(p->section_text, "kubernetes")) {
                if (p->kubernetes_line > 0)
                        return parser_error(p, -EINVAL,
                                            "section [%s] given twice (first on line %u)",
                                            p->section_text, p->kubernetes_line);
                p->kubernetes_line = p->line;
                p->section = SECTION_KUBERNETES;
                snprintf(canonical, sizeof(canonical), "kubernetes");
        } else if (strncmp(p->section_text, "gpu", 3) == 0 &&
                   (p->section_text[3] == '\0' || is_blank(p->section_text[3]))) {
                const char *arg = p->section_text + 3;
                char bdf[16];

                while (is_blank(*arg))
                        arg++;
                if (arg[0] == '\0' || streq(arg, "all")) {
                        if (p->all.line > 0)
                                return parser_error(p, -EINVAL,
                                                    "section [%s] given twice (first on line %u)",
                                                    p->section_text, p->all.line);
                        gpu_init(&p->all, "", p->line);
                        p->gpu = &p->all;
                        snprintf(canonical, sizeof(canonical), "gpu");
                } else {
                        struct config_gpu *g;

                        if (bdf_normalize(arg, bdf) < 0)
                                return parser_error(p, -EINVAL,
                                                    "malformed PCI address \"%s\" in [%s] "
                                                    "(DDDD:BB:DD.F or BB:DD.F, e.g. 0000:05:00.0)",
                                                    arg, p->section_text);
                        for (size_t i = 0; i < p->c->n_gpus; i++)
                                if (streq(p->c->gpus[i].bdf, bdf))
                                        return parser_error(
                                                p, -EINVAL,
                                                "section [%s] given twice (first on line %u)",
                                                p->section_text, p->c->gpus[i].line);
                        g = reallocarray(p->c->gpus, p->c->n_gpus + 1, sizeof(*g));
                        if (!g)
                                return parser_error(p, -ENOMEM, "out of memory");
                        p->c->gpus = g;
                        p->gpu = &g[p->c->n_gpus++];
                        gpu_init(p->gpu, bdf, p->line);
                        snprintf(canonical, sizeof(canonical), "gpu %s", bdf);
                }
                p->section = SECTION_GPU;
        } else if (strncmp(p->section_text, "profile", 7) == 0 &&
                   (p->section_text[7] == '\0' || is_blank(p->section_text[7]))) {
                if (profile_section_begin(p, p->section_text + 7, canonical, sizeof(canonical)) <
                    0)
                        return p->r;
                p->section = SECTION_GPU;
        } else
                return parser_error(p, -EINVAL,
                                    "unknown section [%s] ([daemon], [gpu], [gpu all], [gpu BDF], "
                                    "[health], [kubernetes], [libvirt], [metrics], [power], "
                                    "[profile NAME], "
                                    "[profile NAME gpu BDF])",
                                    p->section_text);

        snprintf(buf, size, "[%s]", canonical);
        return 0;
}

/* "yes" or "no", nothing else (one spelling, as everywhere in this format). */
static int parse_yes_no(struct parser *p, const char *key, const char *value, bool *ret) {
        if (streq(value, "yes"))
                *ret = true;
        else if (streq(value, "no"))
                *ret = false;
        else
                return parser_error(p, -EINVAL, "bad %s \"%s\" (yes or no)", key, value);
        return 0;
}

/* A whole number within [min, max]; the key's name for messages. */
static int parse_number(struct parser *p, const char *key, const char *value, uint64_t min,
                        uint64_t max, uint64_t *ret) {
        uint64_t v;
        int r;

        if (value[strspn(value, "0123456789")] != '\0')
                return parser_error(p, -EINVAL,
                                    "bad %s \"%s\" (a whole number, %" PRIu64 "..%" PRIu64 ")", key,
                                    value, min, max);
        r = parse_u64(value, 10, &v);
        if (r == -ERANGE || (r == 0 && (v < min || v > max)))
                return parser_error(p, -ERANGE, "%s %s out of range (%" PRIu64 "..%" PRIu64 ")",
                                    key, value, min, max);
        if (r < 0)
                return parser_error(p, r, "bad %s \"%s\"", key, value);
        *ret = v;
        return 0;
}

static int set_key(struct parser *p, enum key k, const char *value) {
        const char *key = keys[k].name;
        uint64_t v;
        int r;

        switch (k) {
        case KEY_POLL_INTERVAL_MS:
                r = parse_number(p, key, value, CONFIG_POLL_INTERVAL_MS_MIN,
                                 CONFIG_POLL_INTERVAL_MS_MAX, &v);
                if (r < 0)
                        return r;
                p->c->poll_interval_ms = (unsigned) v;
                return 0;

        case KEY_HISTORY_MAX_KIB:
                r = parse_number(p, key, value, CONFIG_HISTORY_MAX_KIB_MIN,
                                 CONFIG_HISTORY_MAX_KIB_MAX, &v);
                if (r < 0)
                        return r;
                p->c->history_max_bytes = v * 1024;
                return 0;

        case KEY_DAEMON_PROFILE:
                if (!config_profile_name_valid(value))
                        return parser_error(p, -EINVAL,
                                            "bad profile \"%s\" (" PROFILE_NAME_RULE ")", value);
                snprintf(p->c->daemon_profile, sizeof(p->c->daemon_profile), "%s", value);
                p->profile_line = p->line;
                return 0;

        case KEY_COMPUTE_MODE: {
                enum amdsmi_compute_mode m;

                if (amdsmi_compute_mode_from_string(value, &m) < 0 || m == AMDSMI_COMPUTE_UNKNOWN)
                        return parser_error(p, -EINVAL,
                                            "bad compute_mode \"%s\" (SPX, DPX, TPX, QPX, CPX)",
                                            value);
                p->gpu->compute = m;
                return 0;
        }

        case KEY_MEMORY_MODE: {
                enum amdsmi_memory_mode m;

                if (amdsmi_memory_mode_from_string(value, &m) < 0 || m == AMDSMI_MEMORY_UNKNOWN)
                        return parser_error(
                                p, -EINVAL,
                                "bad memory_mode \"%s\" (NPS1, NPS2, NPS3, NPS4, NPS6, NPS8)",
                                value);
                p->gpu->memory = m;
                return 0;
        }

        case KEY_POWER_CAP:
                r = power_parse_watts(value, &v);
                if (r == -ERANGE)
                        return parser_error(p, -ERANGE,
                                            "power_cap %s above 4294.967295 W (the most "
                                            "power1_cap takes)",
                                            value);
                if (r < 0)
                        return parser_error(p, -EINVAL,
                                            "bad power_cap \"%s\" (watts: 550, 550W, 550000mW, "
                                            "0.55kW)",
                                            value);
                if (v < POWER_FLOOR_UW)
                        return parser_error(p, -ERANGE, "power_cap %s below 1 W", value);
                if (v > POWER_WRITE_MAX_UW)
                        return parser_error(p, -ERANGE,
                                            "power_cap %s above 4294.967295 W (the most "
                                            "power1_cap takes)",
                                            value);
                p->gpu->power_cap_set = true;
                p->gpu->power_cap_uw = v;
                return 0;

        case KEY_NUM_VFS:
                r = parse_number(p, key, value, 0, CONFIG_NUM_VFS_MAX, &v);
                if (r < 0)
                        return r;
                p->gpu->num_vfs_set = true;
                p->gpu->num_vfs = (unsigned) v;
                return 0;

        case KEY_PERF_LEVEL: {
                enum amdsmi_perf_level l;

                if (amdsmi_perf_level_from_string(value, &l) < 0 || !amdsmi_perf_level_accepted(l))
                        return parser_error(p, -EINVAL,
                                            "bad perf_level \"%s\" (auto, manual, determinism)",
                                            value);
                p->gpu->perf_level = l;
                return 0;
        }

        case KEY_PERF_DETERMINISM_SCLK:
        case KEY_SCLK_MIN:
        case KEY_SCLK_MAX:
        case KEY_MCLK_MAX:
                r = parse_number(p, key, value, 1, CONFIG_CLOCK_MAX_MHZ, &v);
                if (r < 0)
                        return r;
                *(k == KEY_PERF_DETERMINISM_SCLK ? &p->gpu->perf_determinism_sclk_mhz
                  : k == KEY_SCLK_MIN            ? &p->gpu->sclk_min_mhz
                  : k == KEY_SCLK_MAX            ? &p->gpu->sclk_max_mhz
                                                 : &p->gpu->mclk_max_mhz) = (uint32_t) v;
                return 0;

        case KEY_SOC_PSTATE:
        case KEY_XGMI_PLPD: {
                char *dst = k == KEY_SOC_PSTATE ? p->gpu->soc_pstate : p->gpu->xgmi_plpd;
                size_t n = strlen(value);

                if (n == 0 || n >= sizeof(p->gpu->soc_pstate) ||
                    value[strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-")] != '\0')
                        return parser_error(p, -EINVAL,
                                            "bad %s \"%s\" (a policy's id or name as "
                                            "pm_policy/%s lists it, e.g. 0 or %s)",
                                            key, value, key,
                                            k == KEY_SOC_PSTATE ? "soc_pstate_default"
                                                                : "plpd_default");
                memcpy(dst, value, n + 1);
                return 0;
        }

        case KEY_URI:
                if (streq(value, "none")) { /* amdsmid does not watch domains */
                        p->c->libvirt_uri[0] = '\0';
                        return 0;
                }
                /* a libvirt connection URI: "driver[+transport]:..." of printable ASCII */
                for (const char *c = value; *c; c++)
                        if (*c <= ' ' || *c > '~')
                                return parser_error(p, -EINVAL,
                                                    "bad uri \"%s\" (a libvirt connection URI "
                                                    "such as qemu:///system, or none)",
                                                    value);
                if (!strchr(value, ':') || strlen(value) >= sizeof(p->c->libvirt_uri))
                        return parser_error(p, -EINVAL,
                                            "bad uri \"%s\" (a libvirt connection URI such as "
                                            "qemu:///system, or none)",
                                            value);
                snprintf(p->c->libvirt_uri, sizeof(p->c->libvirt_uri), "%s", value);
                return 0;

        case KEY_HOOK_TIMEOUT_S:
                r = parse_number(p, key, value, CONFIG_HOOK_TIMEOUT_S_MIN,
                                 CONFIG_HOOK_TIMEOUT_S_MAX, &v);
                if (r < 0)
                        return r;
                p->c->hook_timeout_s = (unsigned) v;
                return 0;

        case KEY_METRICS_INTERVAL_MS:
                r = parse_number(p, key, value, CONFIG_METRICS_INTERVAL_MS_MIN,
                                 CONFIG_METRICS_INTERVAL_MS_MAX, &v);
                if (r < 0)
                        return r;
                p->c->metrics_interval_ms = (unsigned) v;
                return 0;

        case KEY_METRICS_IDENTITY:
                return parse_yes_no(p, key, value, &p->c->metrics_identity);

        case KEY_METRICS_TEXTFILE: {
                /* an absolute path of a file (not a directory), no "." or ".." part: where
                 * node_exporter's textfile collector reads *.prom files */
                const char *base = strrchr(value, '/');

                if (value[0] != '/' || strlen(value) >= CONFIG_METRICS_TEXTFILE_MAX ||
                    !base || base[1] == '\0' || strstr(value, "/./") || strstr(value, "/../") ||
                    streq(base, "/.") || streq(base, "/..") || strlen(base) <= strlen("/.prom") ||
                    !streq(value + strlen(value) - strlen(".prom"), ".prom"))
                        return parser_error(p, -EINVAL,
                                            "bad textfile \"%s\" (an absolute file name ending "
                                            "in .prom, the files node_exporter reads, such as "
                                            "/var/lib/prometheus/node-exporter/amdsmi.prom)",
                                            value);
                free(p->c->metrics_textfile);
                p->c->metrics_textfile = strdup(value);
                if (!p->c->metrics_textfile)
                        return parser_error(p, -ENOMEM, "out of memory");
                return 0;
        }

        case KEY_POWER_ENFORCE:
                return parse_yes_no(p, key, value, &p->c->power_enforce);

        case KEY_GPU_ENFORCE:
                r = parse_yes_no(p, key, value, &p->gpu->enforce);
                if (r < 0)
                        return r;
                p->gpu->enforce_set = true;
                return 0;

        case KEY_HEALTH_CE_RATE:
                r = parse_number(p, key, value, 1, CONFIG_HEALTH_CE_RATE_MAX, &v);
                if (r < 0)
                        return r;
                p->c->health.ce_rate_warning_per_hour = v;
                return 0;

        case KEY_HEALTH_BAD_PAGES_PERCENT:
                r = parse_number(p, key, value, 1, 100, &v);
                if (r < 0)
                        return r;
                p->c->health.bad_pages_warning_percent = (unsigned) v;
                return 0;

        case KEY_HEALTH_RESET_WINDOW:
                r = parse_number(p, key, value, 0, CONFIG_HEALTH_RESET_WINDOW_MAX, &v);
                if (r < 0)
                        return r;
                p->c->health.reset_window_minutes = (unsigned) v;
                return 0;

        case KEY_HEALTH_EVENTS:
                if (streq(value, "auto"))
                        p->c->health.events = CONFIG_HEALTH_EVENTS_AUTO;
                else if (streq(value, "yes"))
                        p->c->health.events = CONFIG_HEALTH_EVENTS_YES;
                else if (streq(value, "no"))
                        p->c->health.events = CONFIG_HEALTH_EVENTS_NO;
                else
                        return parser_error(p, -EINVAL, "bad events \"%s\" (auto, yes or no)",
                                            value);
                return 0;

        case KEY_NFD_FEATURES: {
                /* no, or an absolute path of a file, no "." or ".." part, whose name does not
                 * start with '.' (nfd-worker skips those: amdsmid's temporary files) */
                const char *base = strrchr(value, '/');

                if (streq(value, "no")) {
                        free(p->c->nfd_features);
                        p->c->nfd_features = NULL;
                        p->c->nfd = CONFIG_NFD_NO;
                        return 0;
                }
                if (value[0] != '/' || strlen(value) >= CONFIG_NFD_FEATURES_MAX || !base ||
                    base[1] == '\0' || base[1] == '.' || strstr(value, "/./") ||
                    strstr(value, "/../"))
                        return parser_error(p, -EINVAL,
                                            "bad nfd_features \"%s\" (no, or an absolute file "
                                            "name not starting with '.', such as "
                                            CONFIG_NFD_FEATURES_DEFAULT ")",
                                            value);
                free(p->c->nfd_features);
                p->c->nfd_features = strdup(value);
                if (!p->c->nfd_features)
                        return parser_error(p, -ENOMEM, "out of memory");
                p->c->nfd = CONFIG_NFD_PATH;
                return 0;
        }

        case _KEY_MAX:
                break;
        }
        return parser_error(p, -EINVAL, "internal error: key %d", (int) k);
}

/* libinih's handler: one "name = value" of the current line (both trimmed by libinih). */
static int handler(void *user, const char *section, const char *name, const char *value) {
        struct parser *p = user;
        enum key k = _KEY_MAX;

        if (p->r < 0)
                return 0;
        if (p->section == SECTION_NONE) {
                parser_error(p, -EINVAL, "key \"%s\" outside a section", name);
                return 0;
        }
        for (enum key i = 0; i < _KEY_MAX; i++)
                if (keys[i].section == p->section && streq(keys[i].name, name)) {
                        k = i;
                        break;
                }
        if (k == _KEY_MAX) {
                parser_error(p, -EINVAL, "unknown key \"%s\" in [%s] (%s)", name, p->section_text,
                             section_keys[p->section]);
                return 0;
        }
        if (p->key_line[k] > 0) {
                parser_error(p, -EINVAL, "key \"%s\" given twice in [%s] (first on line %u)", name,
                             p->section_text, p->key_line[k]);
                return 0;
        }
        p->key_line[k] = p->line;
        if (!value || value[0] == '\0') {
                parser_error(p, -EINVAL, "key \"%s\" has an empty value", name);
                return 0;
        }
        return set_key(p, k, value) >= 0;
}

/* libinih's reader: the next line, stripped of its comment and blanks, after the checks above.
 * NULL at the end or after an error (parsing stops there). */
static char *reader(char *buf, int num, void *stream) {
        struct parser *p = stream;
        const char *s, *nl, *eq;
        size_t len, n, bad;

        if (p->r < 0 || p->p >= p->end)
                return NULL;
        if (num < 4) {
                parser_error(p, -EINVAL, "libinih's line buffer is too small (%d bytes)", num);
                return NULL;
        }

        s = p->p;
        nl = memchr(s, '\n', (size_t) (p->end - s));
        len = nl ? (size_t) (nl - s) : (size_t) (p->end - s);
        p->p = nl ? nl + 1 : p->end;
        p->line++;

        if (memchr(s, '\0', len)) {
                parser_error(p, -EINVAL, "NUL byte");
                return NULL;
        }
        if (len > 0 && s[len - 1] == '\r') /* CRLF */
                len--;
        if (p->line == 1 && len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) { /* UTF-8 BOM */
                s += 3;
                len -= 3;
        }

        /* the comment, then the blanks around what is left */
        for (n = 0; n < len && s[n] != '#' && s[n] != ';'; n++)
                ;
        while (n > 0 && is_blank(s[n - 1]))
                n--;
        while (n > 0 && is_blank(s[0])) {
                s++;
                n--;
        }

        /* libinih's buffer holds num - 3 bytes of a line (its CR, LF and NUL) */
        if (n > (size_t) num - 3) {
                parser_error(p, -EINVAL, "line too long (%zu bytes before its comment, at most %d)",
                             n, num - 3);
                return NULL;
        }
        bad = utf8_check(s, n);
        if (bad < n) {
                parser_error(p, -EINVAL,
                             "not UTF-8 (byte 0x%02x; only comments may hold such bytes)",
                             (unsigned char) s[bad]);
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                if (((unsigned char) s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f) {
                        parser_error(p, -EINVAL, "control character 0x%02x", (unsigned char) s[i]);
                        return NULL;
                }

        if (n == 0) {
                buf[0] = '\0';
                return buf;
        }
        if (s[0] == '[') {
                if (section_begin(p, s, n, buf, (size_t) num) < 0)
                        return NULL;
                return buf;
        }

        eq = memchr(s, '=', n);
        if (!eq || eq == s || memchr(s, ':', (size_t) (eq - s))) {
                /* libinih also takes "key: value"; this format has one spelling */
                parser_error(p, -EINVAL, "expected \"key = value\" or \"[section]\"");
                return NULL;
        }
        memcpy(buf, s, n);
        buf[n] = '\0';
        return buf;
}

int config_path(char *buf, size_t size) {
        const char *env = getenv("CONFIGURATION_DIRECTORY");
        int n;

        if (env && env[0] == '/') {
                /* systemd lists several directories separated by ':'; the first is ours */
                n = snprintf(buf, size, "%.*s/amdsmid.conf", (int) strcspn(env, ":"), env);
        } else
                n = snprintf(buf, size, "%s", AMDSMID_CONF_PATH);
        if (n < 0)
                return -EINVAL;
        if ((size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

static struct config *config_new(void) {
        struct config *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->poll_interval_ms = CONFIG_POLL_INTERVAL_MS_DEFAULT;
        c->history_max_bytes = (uint64_t) CONFIG_HISTORY_MAX_KIB_DEFAULT * 1024;
        snprintf(c->libvirt_uri, sizeof(c->libvirt_uri), "%s", CONFIG_LIBVIRT_URI_DEFAULT);
        c->hook_timeout_s = CONFIG_HOOK_TIMEOUT_S_DEFAULT;
        c->metrics_interval_ms = CONFIG_METRICS_INTERVAL_MS_DEFAULT;
        c->metrics_identity = true;
        c->health.ce_rate_warning_per_hour = CONFIG_HEALTH_CE_RATE_DEFAULT;
        c->health.bad_pages_warning_percent = CONFIG_HEALTH_BAD_PAGES_PERCENT_DEFAULT;
        c->health.reset_window_minutes = CONFIG_HEALTH_RESET_WINDOW_DEFAULT;
        c->health.events = CONFIG_HEALTH_EVENTS_AUTO;
        return c;
}

int config_parse_buffer(const char *name, const void *data, size_t size, struct config **ret,
                        char *err, size_t err_size) {
        _cleanup_(config_freep) struct config *c = NULL;
        struct parser p = {
                .name = name ?: "amdsmid.conf",
                .p = data,
                .end = (const char *) data + size,
                .err = err,
                .err_size = err_size,
        };
        int r;

        if (!data && size > 0)
                return -EINVAL;
        if (err && err_size > 0)
                err[0] = '\0';

        c = config_new();
        if (!c)
                return file_error(err, err_size, -ENOMEM, "%s: out of memory", p.name);
        c->path = strdup(p.name);
        if (!c->path)
                return file_error(err, err_size, -ENOMEM, "%s: out of memory", p.name);
        c->exists = true;
        p.c = c;
        if (size == 0)
                p.p = p.end = "";

        r = ini_parse_stream(reader, &p, handler, &p);
        if (p.r < 0)
                return p.r;
        if (r == -2)
                return file_error(err, err_size, -ENOMEM, "%s: out of memory", p.name);
        if (r != 0) {
                /* libinih found something the reader let through: still an error */
                p.line = r > 0 ? (unsigned) r : p.line;
                return parser_error(&p, -EINVAL, "syntax error");
        }

        /* [gpu] goes first */
        if (p.all.line > 0) {
                struct config_gpu *g = reallocarray(c->gpus, c->n_gpus + 1, sizeof(*g));

                if (!g)
                        return file_error(err, err_size, -ENOMEM, "%s: out of memory", p.name);
                memmove(g + 1, g, c->n_gpus * sizeof(*g));
                g[0] = p.all;
                c->gpus = g;
                c->n_gpus++;
        }

        if (c->daemon_profile[0] != '\0') {
                if (!config_find_profile(c, c->daemon_profile)) {
                        p.line = p.profile_line;
                        return parser_error(&p, -EINVAL,
                                            "profile \"%s\" has no [profile %s] section",
                                            c->daemon_profile, c->daemon_profile);
                }
                snprintf(c->profile, sizeof(c->profile), "%s", c->daemon_profile);
                c->profile_source = CONFIG_PROFILE_CONFIG;
        }

        *ret = TAKE_PTR(c);
        return 0;
}

int config_parse_string(const char *name, const char *text, struct config **ret, char *err,
                        size_t err_size) {
        if (!text)
                return -EINVAL;
        return config_parse_buffer(name, text, strlen(text), ret, err, err_size);
}

/* Reads @fd to its end into @buf (@max + 1 bytes). @return 0 with *@ret_size, -EFBIG past
 * @max bytes, or the negative errno of read(). */
static int read_bounded(int fd, char *buf, size_t max, size_t *ret_size) {
        size_t size = 0;

        for (;;) {
                ssize_t k = read(fd, buf + size, max + 1 - size);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                size += (size_t) k;
                if (size > max)
                        return -EFBIG;
        }
        *ret_size = size;
        return 0;
}

/* The file @path (NULL: the default) alone, without a selector. */
static int load_file(const char *path, struct config **ret, char *err, size_t err_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        char def[4096];
        struct stat st;
        size_t size = 0;
        int r;

        if (err && err_size > 0)
                err[0] = '\0';
        if (!path) {
                r = config_path(def, sizeof(def));
                if (r < 0)
                        return file_error(err, err_size, r,
                                          "$CONFIGURATION_DIRECTORY/amdsmid.conf: %s",
                                          strerror(-r));
                path = def;
        }

        /* A FIFO, link, directory or device there is refused, never waited on (safe-open.h) */
        fd = safe_open(path, O_RDONLY, 0, SAFE_OPEN_BLOCK);
        if (fd < 0) {
                struct config *c;
                char msg[4200];

                if (fd == -ELOOP || fd == -EISDIR || fd == -EBADFD)
                        return file_error(err, err_size, fd, "%s",
                                          safe_open_message(path, fd, msg, sizeof(msg)));
                if (fd != -ENOENT)
                        return file_error(err, err_size, fd, "%s: cannot open: %s", path,
                                          strerror(-fd));
                c = config_new(); /* no file: nothing is desired */
                if (!c)
                        return file_error(err, err_size, -ENOMEM, "%s: out of memory", path);
                *ret = c;
                return 0;
        }
        if (fstat(fd, &st) < 0)
                return file_error(err, err_size, -errno, "%s: cannot read: %s", path,
                                  strerror(errno));

        data = malloc(CONFIG_FILE_MAX + 1);
        if (!data)
                return file_error(err, err_size, -ENOMEM, "%s: out of memory", path);
        r = read_bounded(fd, data, CONFIG_FILE_MAX, &size);
        if (r == -EFBIG)
                return file_error(err, err_size, r, "%s: file too large (more than %d bytes)",
                                  path, CONFIG_FILE_MAX);
        if (r < 0)
                return file_error(err, err_size, r, "%s: cannot read: %s", path, strerror(-r));

        return config_parse_buffer(path, data, size, ret, err, err_size);
}

int config_load_with_selector(const char *path, const char *selector, struct config **ret,
                              char *err, size_t err_size) {
        _cleanup_(config_freep) struct config *c = NULL;
        char name[CONFIG_PROFILE_NAME_MAX + 1];
        struct config_selector_stamp stamp;
        int r;

        r = load_file(path, &c, err, err_size);
        if (r < 0)
                return r;
        if (!selector) {
                *ret = TAKE_PTR(c);
                return 0;
        }
        c->selector_path = strdup(selector);
        if (!c->selector_path)
                return file_error(err, err_size, -ENOMEM, "%s: out of memory", selector);
        r = config_selector_read(selector, name, &stamp, err, err_size);
        c->selector = stamp;
        if (r == -ENOENT) {
                if (err && err_size > 0)
                        err[0] = '\0';
                *ret = TAKE_PTR(c);
                return 0;
        }
        if (r < 0)
                return r;
        if (!config_find_profile(c, name)) {
                char conf[4096];

                if (c->path)
                        snprintf(conf, sizeof(conf), "%s", c->path);
                else if (!path || snprintf(conf, sizeof(conf), "%s", path) < 0)
                        (void) config_path(conf, sizeof(conf));
                return file_error(err, err_size, -EINVAL,
                                  "%s: selects the profile \"%s\", which %s%s has no [profile %s] "
                                  "section for",
                                  selector, name, conf, c->exists ? "" : " (no such file)", name);
        }
        snprintf(c->profile, sizeof(c->profile), "%s", name);
        c->profile_source = CONFIG_PROFILE_SELECTOR;
        *ret = TAKE_PTR(c);
        return 0;
}

int config_load(const char *path, struct config **ret, char *err, size_t err_size) {
        char sel[4096];

        if (path)
                return config_load_with_selector(path, NULL, ret, err, err_size);
        if (config_selector_path(sel, sizeof(sel)) < 0)
                return file_error(err, err_size, -ENAMETOOLONG,
                                  "$CONFIGURATION_DIRECTORY/profile: %s", strerror(ENAMETOOLONG));
        return config_load_with_selector(NULL, sel, ret, err, err_size);
}

struct config *config_free(struct config *c) {
        if (!c)
                return NULL;
        free(c->path);
        free(c->metrics_textfile);
        free(c->nfd_features);
        free(c->gpus);
        for (size_t i = 0; i < c->n_profiles; i++)
                free(c->profiles[i].gpus);
        free(c->profiles);
        free(c->selector_path);
        free(c);
        return NULL;
}

const char *config_profile_source_to_string(enum config_profile_source s) {
        switch (s) {
        case CONFIG_PROFILE_SELECTOR:
                return "selector";
        case CONFIG_PROFILE_CONFIG:
                return "config";
        case CONFIG_PROFILE_OPTION:
                return "option";
        case CONFIG_PROFILE_NONE:
                break;
        }
        return NULL;
}

int config_select_profile(struct config *c, const char *name, enum config_profile_source source,
                          char *err, size_t err_size) {
        if (!c)
                return -EINVAL;
        if (!name || name[0] == '\0') {
                c->profile[0] = '\0';
                c->profile_source = CONFIG_PROFILE_NONE;
                return 0;
        }
        if (!config_profile_name_valid(name))
                return file_error(err, err_size, -EINVAL,
                                  "bad profile name \"%s\" (" PROFILE_NAME_RULE ")", name);
        if (!config_find_profile(c, name))
                return file_error(err, err_size, -EINVAL,
                                  "%s has no [profile %s] section%s", c->path ?: "amdsmid.conf",
                                  name, c->exists ? "" : " (no such file)");
        snprintf(c->profile, sizeof(c->profile), "%s", name);
        c->profile_source = source;
        return 0;
}

/* ---- the selector file ------------------------------------------------------------------ */

int config_selector_path(char *buf, size_t size) {
        const char *env = getenv("CONFIGURATION_DIRECTORY");
        const char *slash = strrchr(AMDSMID_CONF_PATH, '/');
        int n;

        if (env && env[0] == '/')
                n = snprintf(buf, size, "%.*s/profile", (int) strcspn(env, ":"), env);
        else /* next to amdsmid.conf: SYSCONFDIR/amdsmi/profile */
                n = snprintf(buf, size, "%.*s/profile",
                             (int) (slash ? slash - AMDSMID_CONF_PATH : 0), AMDSMID_CONF_PATH);
        if (n < 0)
                return -EINVAL;
        if ((size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

int config_selector_parse(const char *name, const void *data, size_t size,
                          char ret[static CONFIG_PROFILE_NAME_MAX + 1], char *err,
                          size_t err_size) {
        const char *s = data, *end = (const char *) data + size;
        char word[CONFIG_PROFILE_NAME_MAX + 1] = "";
        unsigned line = 0, word_line = 0;

        name = name ?: "profile";
        if (!data && size > 0)
                return -EINVAL;
        if (size > 0 && memchr(data, '\0', size))
                return file_error(err, err_size, -EINVAL, "%s: NUL byte (one profile name)",
                                  name);
        while (s < end) {
                const char *nl = memchr(s, '\n', (size_t) (end - s));
                const char *e = nl ?: end, *b = s;
                size_t n;

                line++;
                s = nl ? nl + 1 : end;
                if (e > b && e[-1] == '\r')
                        e--;
                while (b < e && (is_blank(*b)))
                        b++;
                while (e > b && is_blank(e[-1]))
                        e--;
                if (b == e || *b == '#')
                        continue;
                n = (size_t) (e - b);
                if (word_line > 0)
                        return file_error(err, err_size, -EINVAL,
                                          "%s:%u: a second profile name (the first on line %u; "
                                          "the file holds one)",
                                          name, line, word_line);
                if (n > CONFIG_PROFILE_NAME_MAX || memchr(b, ' ', n) || memchr(b, '\t', n)) {
                        if (memchr(b, ' ', n) || memchr(b, '\t', n))
                                return file_error(err, err_size, -EINVAL,
                                                  "%s:%u: more than one word (one profile name)",
                                                  name, line);
                        return file_error(err, err_size, -EINVAL,
                                          "%s:%u: profile name longer than %d characters", name,
                                          line, CONFIG_PROFILE_NAME_MAX);
                }
                memcpy(word, b, n);
                word[n] = '\0';
                if (!config_profile_name_valid(word)) {
                        size_t bad = utf8_check(word, n);

                        if (bad < n)
                                return file_error(err, err_size, -EINVAL,
                                                  "%s:%u: bad profile name (byte 0x%02x; "
                                                  PROFILE_NAME_RULE ")",
                                                  name, line, (unsigned char) word[bad]);
                        for (size_t i = 0; i < n; i++)
                                if ((unsigned char) word[i] < 0x20 || word[i] == 0x7f)
                                        return file_error(err, err_size, -EINVAL,
                                                          "%s:%u: control character 0x%02x", name,
                                                          line, (unsigned char) word[i]);
                        return file_error(err, err_size, -EINVAL,
                                          "%s:%u: bad profile name \"%s\" (" PROFILE_NAME_RULE
                                          ")",
                                          name, line, word);
                }
                word_line = line;
        }
        if (word_line == 0)
                return file_error(err, err_size, -EINVAL,
                                  "%s: no profile name (one word; remove the file to select none)",
                                  name);
        memcpy(ret, word, sizeof(word));
        return 0;
}

static void stamp_from_stat(const struct stat *st, struct config_selector_stamp *ret) {
        *ret = (struct config_selector_stamp){
                .exists = true,
                .dev = (uint64_t) st->st_dev,
                .ino = (uint64_t) st->st_ino,
                .size = (uint64_t) st->st_size,
                .mtime_sec = (int64_t) st->st_mtim.tv_sec,
                .mtime_nsec = (int64_t) st->st_mtim.tv_nsec,
        };
}

void config_selector_stat(const char *path, struct config_selector_stamp *ret) {
        struct stat st;

        if (!path || lstat(path, &st) < 0) {
                *ret = (struct config_selector_stamp){};
                return;
        }
        stamp_from_stat(&st, ret);
}

bool config_selector_stamp_equal(const struct config_selector_stamp *a,
                                 const struct config_selector_stamp *b) {
        if (a->exists != b->exists)
                return false;
        return !a->exists || (a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
                              a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec);
}

int config_selector_read(const char *path, char ret[static CONFIG_PROFILE_NAME_MAX + 1],
                         struct config_selector_stamp *ret_stamp, char *err, size_t err_size) {
        _cleanup_close_ int fd = -EBADF;
        char data[CONFIG_SELECTOR_MAX + 1];
        struct stat st;
        size_t size = 0;
        int r;

        if (ret_stamp)
                *ret_stamp = (struct config_selector_stamp){};
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                if (r == -ENOENT)
                        return r;
                if (r == -ELOOP)
                        return file_error(err, err_size, r,
                                          "%s: refused: a symbolic link (the selector must be a "
                                          "regular file)",
                                          path);
                return file_error(err, err_size, r, "%s: cannot open: %s", path, strerror(-r));
        }
        if (fstat(fd, &st) < 0)
                return file_error(err, err_size, -errno, "%s: cannot read: %s", path,
                                  strerror(errno));
        if (ret_stamp)
                stamp_from_stat(&st, ret_stamp);
        if (!S_ISREG(st.st_mode))
                return file_error(err, err_size, S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD,
                                  "%s: refused: not a regular file", path);
        if (st.st_uid != 0 && st.st_uid != geteuid())
                return file_error(err, err_size, -EPERM,
                                  "%s: refused: owned by uid %u (root must own the selector)",
                                  path, (unsigned) st.st_uid);
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return file_error(err, err_size, -EPERM,
                                  "%s: refused: writable by %s (mode %04o; chmod go-w)", path,
                                  (st.st_mode & S_IWOTH) ? "others" : "its group",
                                  (unsigned) (st.st_mode & 07777));
        if (st.st_size > CONFIG_SELECTOR_MAX)
                return file_error(err, err_size, -EFBIG,
                                  "%s: refused: larger than %d bytes (one profile name)", path,
                                  CONFIG_SELECTOR_MAX);
        r = read_bounded(fd, data, CONFIG_SELECTOR_MAX, &size);
        if (r == -EFBIG)
                return file_error(err, err_size, r,
                                  "%s: refused: larger than %d bytes (one profile name)", path,
                                  CONFIG_SELECTOR_MAX);
        if (r < 0)
                return file_error(err, err_size, r, "%s: cannot read: %s", path, strerror(-r));
        return config_selector_parse(path, data, size, ret, err, err_size);
}

static const struct config_gpu *find_gpu(const struct config *c, const char *bdf) {
        for (size_t i = 0; i < c->n_gpus; i++)
                if (c->gpus[i].bdf[0] != '\0' && streq(c->gpus[i].bdf, bdf))
                        return &c->gpus[i];
        return NULL;
}

static const struct config_gpu *find_all(const struct config *c) {
        return c->n_gpus > 0 && c->gpus[0].bdf[0] == '\0' ? &c->gpus[0] : NULL;
}

static const struct config_gpu *find_in(const struct config_gpu *l, size_t n, const char *bdf) {
        for (size_t i = 0; i < n; i++)
                if (l[i].bdf[0] != '\0' && streq(l[i].bdf, bdf))
                        return &l[i];
        return NULL;
}

/* Lays the keys @g sets over @d (one place that knows the keys). */
static void gpu_merge(struct config_gpu *d, const struct config_gpu *g) {
        d->line = g->line;
        if (g->compute != AMDSMI_COMPUTE_UNKNOWN)
                d->compute = g->compute;
        if (g->memory != AMDSMI_MEMORY_UNKNOWN)
                d->memory = g->memory;
        if (g->power_cap_set) {
                d->power_cap_set = true;
                d->power_cap_uw = g->power_cap_uw;
        }
        if (g->num_vfs_set) {
                d->num_vfs_set = true;
                d->num_vfs = g->num_vfs;
        }
        if (g->enforce_set) {
                d->enforce_set = true;
                d->enforce = g->enforce;
        }
        if (g->perf_level != AMDSMI_PERF_LEVEL_UNKNOWN)
                d->perf_level = g->perf_level;
        if (g->perf_determinism_sclk_mhz)
                d->perf_determinism_sclk_mhz = g->perf_determinism_sclk_mhz;
        if (g->sclk_min_mhz)
                d->sclk_min_mhz = g->sclk_min_mhz;
        if (g->sclk_max_mhz)
                d->sclk_max_mhz = g->sclk_max_mhz;
        if (g->mclk_max_mhz)
                d->mclk_max_mhz = g->mclk_max_mhz;
        if (g->soc_pstate[0])
                snprintf(d->soc_pstate, sizeof(d->soc_pstate), "%s", g->soc_pstate);
        if (g->xgmi_plpd[0])
                snprintf(d->xgmi_plpd, sizeof(d->xgmi_plpd), "%s", g->xgmi_plpd);
}

bool config_desired(const struct config *c, const char *bdf, struct config_gpu *ret) {
        const struct config_gpu *layers[4] = {};
        const struct config_profile *pr;
        struct config_gpu d;
        char norm[16];

        if (!bdf || bdf_normalize(bdf, norm) < 0)
                snprintf(norm, sizeof(norm), "%s", bdf ?: "");
        gpu_init(&d, norm, 0);
        d.enforce = c && c->power_enforce;

        /* from the least specific to the most: [gpu], [gpu BDF], [profile P], [profile P gpu BDF] */
        if (c) {
                layers[0] = find_all(c);
                layers[1] = norm[0] != '\0' ? find_gpu(c, norm) : NULL;
                pr = c->profile[0] != '\0' ? config_find_profile(c, c->profile) : NULL;
                if (pr) {
                        layers[2] = pr->all.line > 0 ? &pr->all : NULL;
                        layers[3] = norm[0] != '\0' ? find_in(pr->gpus, pr->n_gpus, norm) : NULL;
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(layers); i++)
                if (layers[i])
                        gpu_merge(&d, layers[i]);

        *ret = d;
        return d.compute != AMDSMI_COMPUTE_UNKNOWN || d.memory != AMDSMI_MEMORY_UNKNOWN ||
               d.power_cap_set || d.num_vfs_set || d.perf_level != AMDSMI_PERF_LEVEL_UNKNOWN ||
               d.perf_determinism_sclk_mhz || d.sclk_min_mhz || d.sclk_max_mhz ||
               d.mclk_max_mhz || d.soc_pstate[0] || d.xgmi_plpd[0];
}

void config_gpu_init(struct config_gpu *g, const char *bdf) {
        gpu_init(g, bdf ?: "", 0);
}

/* For each key, whether @a and @b set it to the same value; @unset_a: unsets it in @a where
 * @same (subtract) or where not (intersect). The one other place that knows the keys. */
static void gpu_filter(struct config_gpu *a, const struct config_gpu *b, bool unset_same) {
        bool same;

        same = a->compute != AMDSMI_COMPUTE_UNKNOWN && a->compute == b->compute;
        if (same == unset_same)
                a->compute = AMDSMI_COMPUTE_UNKNOWN;
        same = a->memory != AMDSMI_MEMORY_UNKNOWN && a->memory == b->memory;
        if (same == unset_same)
                a->memory = AMDSMI_MEMORY_UNKNOWN;
        same = a->power_cap_set && b->power_cap_set && a->power_cap_uw == b->power_cap_uw;
        if (same == unset_same)
                a->power_cap_set = false;
        same = a->num_vfs_set && b->num_vfs_set && a->num_vfs == b->num_vfs;
        if (same == unset_same)
                a->num_vfs_set = false;
        same = a->enforce_set && b->enforce_set && a->enforce == b->enforce;
        if (same == unset_same)
                a->enforce_set = false;
        same = a->perf_level != AMDSMI_PERF_LEVEL_UNKNOWN && a->perf_level == b->perf_level;
        if (same == unset_same)
                a->perf_level = AMDSMI_PERF_LEVEL_UNKNOWN;
#define FILTER_U32(f)                                 \
        same = a->f && a->f == b->f;                  \
        if (same == unset_same)                       \
                a->f = 0
        FILTER_U32(perf_determinism_sclk_mhz);
        FILTER_U32(sclk_min_mhz);
        FILTER_U32(sclk_max_mhz);
        FILTER_U32(mclk_max_mhz);
#undef FILTER_U32
        same = a->soc_pstate[0] && streq(a->soc_pstate, b->soc_pstate);
        if (same == unset_same)
                a->soc_pstate[0] = '\0';
        same = a->xgmi_plpd[0] && streq(a->xgmi_plpd, b->xgmi_plpd);
        if (same == unset_same)
                a->xgmi_plpd[0] = '\0';
}

void config_gpu_intersect(struct config_gpu *common, const struct config_gpu *g) {
        gpu_filter(common, g, false);
}

void config_gpu_subtract(struct config_gpu *g, const struct config_gpu *common) {
        gpu_filter(g, common, true);
}

char *config_gpu_format(const struct config_gpu *g) {
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);
        char w[40];

        if (!f)
                return NULL;
        if (g->compute != AMDSMI_COMPUTE_UNKNOWN)
                fprintf(f, "compute_mode = %s\n", amdsmi_compute_mode_to_string(g->compute));
        if (g->memory != AMDSMI_MEMORY_UNKNOWN)
                fprintf(f, "memory_mode = %s\n", amdsmi_memory_mode_to_string(g->memory));
        if (g->power_cap_set) {
                if (format_scaled_u64(g->power_cap_uw, 6, w, sizeof(w)) < 0)
                        snprintf(w, sizeof(w), "%" PRIu64 "uW", g->power_cap_uw);
                fprintf(f, "power_cap = %sW\n", w);
        }
        if (g->num_vfs_set)
                fprintf(f, "num_vfs = %u\n", g->num_vfs);
        if (g->enforce_set)
                fprintf(f, "enforce = %s\n", g->enforce ? "yes" : "no");
        if (g->perf_level != AMDSMI_PERF_LEVEL_UNKNOWN)
                fprintf(f, "perf_level = %s\n",
                        g->perf_level == AMDSMI_PERF_LEVEL_PERF_DETERMINISM
                                ? "determinism"
                                : amdsmi_perf_level_to_string(g->perf_level));
        if (g->perf_determinism_sclk_mhz)
                fprintf(f, "perf_determinism_sclk_mhz = %" PRIu32 "\n",
                        g->perf_determinism_sclk_mhz);
        if (g->sclk_min_mhz)
                fprintf(f, "sclk_min_mhz = %" PRIu32 "\n", g->sclk_min_mhz);
        if (g->sclk_max_mhz)
                fprintf(f, "sclk_max_mhz = %" PRIu32 "\n", g->sclk_max_mhz);
        if (g->mclk_max_mhz)
                fprintf(f, "mclk_max_mhz = %" PRIu32 "\n", g->mclk_max_mhz);
        if (g->soc_pstate[0])
                fprintf(f, "soc_pstate = %s\n", g->soc_pstate);
        if (g->xgmi_plpd[0])
                fprintf(f, "xgmi_plpd = %s\n", g->xgmi_plpd);
        if (fclose(f) != 0) {
                free(s);
                return NULL;
        }
        return s;
}

char **config_unknown_gpus(const struct config *c, const char *const *bdfs, size_t n) {
        _cleanup_strv_free_ char **l = NULL;
        size_t k = 0;

        l = calloc((c ? c->n_gpus : 0) + 1, sizeof(char *));
        if (!l)
                return NULL;
        for (size_t i = 0; c && i < c->n_gpus; i++) {
                const char *bdf = c->gpus[i].bdf;
                bool found = false;

                if (bdf[0] == '\0')
                        continue;
                for (size_t j = 0; j < n && !found; j++) {
                        char norm[16];

                        if (!bdfs[j])
                                continue;
                        found = bdf_normalize(bdfs[j], norm) >= 0 ? streq(norm, bdf)
                                                                  : streq(bdfs[j], bdf);
                }
                if (found)
                        continue;
                l[k] = strdup(bdf);
                if (!l[k])
                        return NULL;
                k++;
        }
        return TAKE_PTR(l);
}

int config_refusal_errno(int r) {
        if (r == -ENOMEM || r == -EACCES || r == -EPERM)
                return r;
        return -EINVAL;
}
