/* SPDX-License-Identifier: MIT */
/*
 * Performance controls (spec health-and-control.md §5): the DPM performance level, the
 * pp_dpm_* levels, pp_od_clk_voltage's soft limits and the pm_policy/ files, their parsers and
 * their writes.
 *
 * The parsers take text from the kernel and never trust it: empty files, "unavailable" (all
 * clock files after a fatal RAS interrupt), truncated or garbage lines end in an error, never
 * in a partial result. SMU 13.0.6 prints no OD_RANGE in pp_od_clk_voltage
 * (smu_v13_0_6_print_clk_levels has no such case), so the ranges of the soft limits are
 * pp_dpm_sclk's and pp_dpm_mclk's first and last levels (they always show the defaults).
 * pm files fail with EPERM while the device is in reset or runtime-suspended: -EBUSY here.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse-util.h"
#include "private.h"
#include "sysfs.h"

static const char *const level_names[_AMDSMI_PERF_LEVEL_MAX] = {
        [AMDSMI_PERF_LEVEL_UNKNOWN] = "unknown",
        [AMDSMI_PERF_LEVEL_AUTO] = "auto",
        [AMDSMI_PERF_LEVEL_LOW] = "low",
        [AMDSMI_PERF_LEVEL_HIGH] = "high",
        [AMDSMI_PERF_LEVEL_MANUAL] = "manual",
        [AMDSMI_PERF_LEVEL_PROFILE_STANDARD] = "profile_standard",
        [AMDSMI_PERF_LEVEL_PROFILE_MIN_SCLK] = "profile_min_sclk",
        [AMDSMI_PERF_LEVEL_PROFILE_MIN_MCLK] = "profile_min_mclk",
        [AMDSMI_PERF_LEVEL_PROFILE_PEAK] = "profile_peak",
        [AMDSMI_PERF_LEVEL_PERF_DETERMINISM] = "perf_determinism",
        [AMDSMI_PERF_LEVEL_PROFILE_EXIT] = "profile_exit",
};

static const char *const clk_names[_AMDSMI_CLK_MAX] = {
        [AMDSMI_CLK_SCLK] = "sclk", [AMDSMI_CLK_MCLK] = "mclk", [AMDSMI_CLK_SOCCLK] = "socclk",
        [AMDSMI_CLK_FCLK] = "fclk", [AMDSMI_CLK_VCLK] = "vclk", [AMDSMI_CLK_DCLK] = "dclk",
};

static const char *const policy_names[_AMDSMI_PM_POLICY_MAX] = {
        [AMDSMI_PM_POLICY_SOC_PSTATE] = "soc_pstate",
        [AMDSMI_PM_POLICY_XGMI_PLPD] = "xgmi_plpd",
};

_public_ const char *amdsmi_perf_level_to_string(enum amdsmi_perf_level l) {
        if ((unsigned) l >= _AMDSMI_PERF_LEVEL_MAX)
                return "unknown";
        return level_names[l];
}

_public_ int amdsmi_perf_level_from_string(const char *s, enum amdsmi_perf_level *ret) {
        if (!s || !ret)
                return -EINVAL;
        if (streq_ci(s, "determinism")) {
                *ret = AMDSMI_PERF_LEVEL_PERF_DETERMINISM;
                return 0;
        }
        for (unsigned i = AMDSMI_PERF_LEVEL_AUTO; i < _AMDSMI_PERF_LEVEL_MAX; i++)
                if (streq_ci(s, level_names[i])) {
                        *ret = (enum amdsmi_perf_level) i;
                        return 0;
                }
        return -EINVAL;
}

_public_ bool amdsmi_perf_level_accepted(enum amdsmi_perf_level l) {
        return l == AMDSMI_PERF_LEVEL_AUTO || l == AMDSMI_PERF_LEVEL_MANUAL ||
               l == AMDSMI_PERF_LEVEL_PERF_DETERMINISM;
}

_public_ const char *amdsmi_clk_domain_to_string(enum amdsmi_clk_domain d) {
        if ((unsigned) d >= _AMDSMI_CLK_MAX)
                return "unknown";
        return clk_names[d];
}

_public_ int amdsmi_clk_domain_from_string(const char *s, enum amdsmi_clk_domain *ret) {
        if (!s || !ret)
                return -EINVAL;
        if (streq_ci(s, "gfx") || streq_ci(s, "gfxclk")) {
                *ret = AMDSMI_CLK_SCLK;
                return 0;
        }
        if (streq_ci(s, "uclk") || streq_ci(s, "mem") || streq_ci(s, "memclk")) {
                *ret = AMDSMI_CLK_MCLK;
                return 0;
        }
        for (unsigned i = 0; i < _AMDSMI_CLK_MAX; i++)
                if (streq_ci(s, clk_names[i])) {
                        *ret = (enum amdsmi_clk_domain) i;
                        return 0;
                }
        return -EINVAL;
}

_public_ const char *amdsmi_pm_policy_kind_to_string(enum amdsmi_pm_policy_kind k) {
        if ((unsigned) k >= _AMDSMI_PM_POLICY_MAX)
                return "unknown";
        return policy_names[k];
}

_public_ int amdsmi_pm_policy_kind_from_string(const char *s, enum amdsmi_pm_policy_kind *ret) {
        if (!s || !ret)
                return -EINVAL;
        for (unsigned i = 0; i < _AMDSMI_PM_POLICY_MAX; i++)
                if (streq_ci(s, policy_names[i])) {
                        *ret = (enum amdsmi_pm_policy_kind) i;
                        return 0;
                }
        return -EINVAL;
}

/* ---------------------------------------------------------------------------------------- */
/* Parsers: a line cursor over @text..@end */

struct cursor {
        const char *p, *end;
};

/* The next line (without its newline) in [*ret_s, *ret_s + *ret_n); false at the end. A last
 * line without a newline counts as truncated: *ret_truncated. */
static bool next_line(struct cursor *c, const char **ret_s, size_t *ret_n, bool *ret_truncated) {
        const char *nl;

        if (c->p >= c->end)
                return false;
        nl = memchr(c->p, '\n', (size_t) (c->end - c->p));
        *ret_s = c->p;
        if (nl) {
                *ret_n = (size_t) (nl - c->p);
                c->p = nl + 1;
                *ret_truncated = false;
        } else {
                *ret_n = (size_t) (c->end - c->p);
                c->p = c->end;
                *ret_truncated = true;
        }
        return true;
}

/* Leading/trailing blanks off; a NUL inside a line is garbage. */
static bool trim(const char **s, size_t *n) {
        while (*n && (**s == ' ' || **s == '\t')) {
                (*s)++;
                (*n)--;
        }
        while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
                (*n)--;
        return memchr(*s, '\0', *n) == NULL;
}

/* A decimal number of at most 9 digits at *s (so it fits any clock). */
static bool take_uint(const char **s, size_t *n, uint32_t *ret) {
        uint32_t v = 0;
        size_t k = 0;

        while (k < *n && isdigit((unsigned char) (*s)[k])) {
                if (k == 9)
                        return false;
                v = v * 10 + (uint32_t) ((*s)[k] - '0');
                k++;
        }
        if (k == 0)
                return false;
        *s += k;
        *n -= k;
        *ret = v;
        return true;
}

static bool take_str(const char **s, size_t *n, const char *lit) {
        size_t l = strlen(lit);

        if (*n < l || strncasecmp(*s, lit, l) != 0)
                return false;
        *s += l;
        *n -= l;
        return true;
}

static void skip_blanks(const char **s, size_t *n) {
        while (*n && (**s == ' ' || **s == '\t')) {
                (*s)++;
                (*n)--;
        }
}

/* Whole text is "unavailable" (and blanks): the clock files after a fatal RAS interrupt. */
static bool is_unavailable(const char *text, size_t len) {
        const char *s = text;
        size_t n = len;

        while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\0'))
                n--;
        return trim(&s, &n) && n == strlen("unavailable") && strncmp(s, "unavailable", n) == 0;
}

static bool is_blank(const char *text, size_t len) {
        for (size_t i = 0; i < len; i++)
                if (!isspace((unsigned char) text[i]))
                        return false;
        return true;
}

/* "<mhz>Mhz" / "<mhz>MHz" at *s, optionally followed by blanks and a '*'. */
static bool take_mhz(const char **s, size_t *n, uint32_t *mhz, bool *star) {
        if (!take_uint(s, n, mhz) || !take_str(s, n, "mhz"))
                return false;
        skip_blanks(s, n);
        *star = false;
        if (*n && **s == '*') {
                *star = true;
                (*s)++;
                (*n)--;
        }
        skip_blanks(s, n);
        return *n == 0;
}

_public_ int amdsmi_clk_levels_parse(const char *text, size_t len, struct amdsmi_clk_levels *ret) {
        struct amdsmi_clk_levels l = { .current = -1 };
        struct cursor c = { text, text + len };
        const char *s;
        size_t n;
        bool trunc;

        if (!text || !ret)
                return -EINVAL;
        if (is_blank(text, len))
                return -ENODATA;
        if (is_unavailable(text, len))
                return -EIO;
        while (next_line(&c, &s, &n, &trunc)) {
                uint32_t idx, mhz;
                bool star, ds = false;

                if (!trim(&s, &n))
                        return -EBADMSG;
                if (n == 0) {
                        if (trunc)
                                break;
                        continue;
                }
                if (trunc)
                        return -EBADMSG; /* cut in the middle of a line */
                if (n && (*s == 'S' || *s == 's')) {
                        ds = true;
                        s++;
                        n--;
                } else if (!take_uint(&s, &n, &idx) || idx != l.n)
                        return -EBADMSG;
                if (!n || *s != ':')
                        return -EBADMSG;
                s++;
                n--;
                skip_blanks(&s, &n);
                if (!take_mhz(&s, &n, &mhz, &star))
                        return -EBADMSG;
                if (ds) {
                        if (l.deep_sleep || l.n > 0)
                                return -EBADMSG; /* the S: line comes first, once */
                        l.deep_sleep = star;
                        l.deep_sleep_mhz = mhz;
                        continue;
                }
                if (l.n == AMDSMI_CLK_LEVELS_MAX)
                        return -EBADMSG;
                if (star) {
                        if (l.current >= 0 || l.deep_sleep)
                                return -EBADMSG; /* two current levels */
                        l.current = (int) l.n;
                }
                l.mhz[l.n++] = mhz;
        }
        if (l.n == 0)
                return -EBADMSG;
        /* fine-grained gfx prints min, the current clock, max: ascending anyway */
        for (unsigned i = 1; i < l.n; i++)
                if (l.mhz[i] < l.mhz[i - 1])
                        return -EBADMSG;
        *ret = l;
        return 0;
}

_public_ uint32_t amdsmi_clk_levels_current_mhz(const struct amdsmi_clk_levels *l) {
        if (!l)
                return 0;
        if (l->deep_sleep)
                return l->deep_sleep_mhz;
        if (l->current >= 0 && (unsigned) l->current < l->n)
                return l->mhz[l->current];
        return 0;
}

_public_ int amdsmi_od_clk_parse(const char *text, size_t len, struct amdsmi_od_clk *ret) {
        struct amdsmi_od_clk od = {};
        struct cursor c = { text, text + len };
        enum {
                NONE,
                SCLK,
                MCLK,
                OTHER
        } sec = NONE;
        unsigned seen_s = 0, seen_m = 0; /* bit 0: line 0, bit 1: line 1 */
        const char *s;
        size_t n;
        bool trunc;

        if (!text || !ret)
                return -EINVAL;
        if (is_blank(text, len))
                return -ENODATA;
        if (is_unavailable(text, len))
                return -EIO;
        while (next_line(&c, &s, &n, &trunc)) {
                uint32_t idx, mhz;
                bool star;

                if (!trim(&s, &n))
                        return -EBADMSG;
                if (n == 0)
                        continue;
                if (trunc)
                        return -EBADMSG;
                if (n > 3 && strncmp(s, "OD_", 3) == 0 && s[n - 1] == ':') {
                        if (n == strlen("OD_SCLK:") && strncmp(s, "OD_SCLK:", n) == 0) {
                                if (seen_s)
                                        return -EBADMSG;
                                sec = SCLK;
                        } else if (n == strlen("OD_MCLK:") && strncmp(s, "OD_MCLK:", n) == 0) {
                                if (seen_m)
                                        return -EBADMSG;
                                sec = MCLK;
                        } else
                                sec = OTHER; /* OD_RANGE, OD_VDDC_CURVE: not SMU 13.0.6's */
                        continue;
                }
                if (sec == OTHER)
                        continue;
                if (sec == NONE || !take_uint(&s, &n, &idx) || idx > 1 || !n || *s != ':')
                        return -EBADMSG;
                s++;
                n--;
                skip_blanks(&s, &n);
                if (!take_mhz(&s, &n, &mhz, &star) || star)
                        return -EBADMSG;
                if (sec == SCLK) {
                        if (seen_s & (1u << idx))
                                return -EBADMSG;
                        seen_s |= 1u << idx;
                        *(idx ? &od.sclk_max_mhz : &od.sclk_min_mhz) = mhz;
                } else {
                        if (seen_m & (1u << idx))
                                return -EBADMSG;
                        seen_m |= 1u << idx;
                        *(idx ? &od.mclk_max_mhz : &od.mclk_min_mhz) = mhz;
                }
        }
        if ((seen_s && seen_s != 3) || (seen_m && seen_m != 3) || (!seen_s && !seen_m))
                return -EBADMSG;
        od.sclk_present = seen_s == 3;
        od.mclk_present = seen_m == 3;
        *ret = od;
        return 0;
}

_public_ int amdsmi_pm_policy_parse(const char *text, size_t len, struct amdsmi_pm_policy *ret) {
        struct amdsmi_pm_policy p = { .current = -1 };
        struct cursor c = { text, text + len };
        const char *s;
        size_t n;
        bool trunc;

        if (!text || !ret)
                return -EINVAL;
        if (is_blank(text, len))
                return -ENODATA;
        while (next_line(&c, &s, &n, &trunc)) {
                uint32_t id;
                size_t k;

                if (!trim(&s, &n))
                        return -EBADMSG;
                if (n == 0)
                        continue;
                if (trunc)
                        return -EBADMSG;
                if (!take_uint(&s, &n, &id))
                        return -EBADMSG;
                skip_blanks(&s, &n);
                if (!n || *s != ':')
                        return -EBADMSG;
                s++;
                n--;
                skip_blanks(&s, &n);
                if (n && s[n - 1] == '*') {
                        if (p.current >= 0)
                                return -EBADMSG;
                        p.current = (int) p.n;
                        n--;
                        while (n && s[n - 1] == ' ')
                                n--;
                }
                if (n == 0 || n >= sizeof(p.levels[0].name) || p.n == AMDSMI_PM_POLICY_LEVELS_MAX)
                        return -EBADMSG;
                for (k = 0; k < n; k++)
                        if (!isalnum((unsigned char) s[k]) && s[k] != '_' && s[k] != '-')
                                return -EBADMSG;
                /* a name is never a bare number (the kernel's are soc_pstate_0, plpd_default):
                 * find() reads a number as an id */
                for (k = 0; k < n && isdigit((unsigned char) s[k]); k++)
                        ;
                if (k == n)
                        return -EBADMSG;
                for (unsigned i = 0; i < p.n; i++)
                        if (p.levels[i].id == id)
                                return -EBADMSG;
                p.levels[p.n].id = id;
                memcpy(p.levels[p.n].name, s, n);
                p.levels[p.n].name[n] = '\0';
                p.n++;
        }
        if (p.n == 0)
                return -EBADMSG;
        *ret = p;
        return 0;
}

_public_ int amdsmi_pm_policy_find(const struct amdsmi_pm_policy *p, const char *s) {
        uint32_t id;

        if (!p || !s || !*s)
                return -EINVAL;
        if (parse_u32(s, 10, &id) == 0) {
                for (unsigned i = 0; i < p->n; i++)
                        if (p->levels[i].id == id)
                                return (int) i;
                return -EINVAL;
        }
        for (unsigned i = 0; i < p->n; i++)
                if (streq_ci(p->levels[i].name, s))
                        return (int) i;
        return -EINVAL;
}

/* ---------------------------------------------------------------------------------------- */
/* Reads and writes */

static int pm_errno(int r) {
        return r == -EPERM ? -EBUSY : r == -ENOENT ? -EOPNOTSUPP : r;
}

static void gpu_file(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size) {
        snprintf(buf, size, "%s/%s", gpu->syspath, attr);
}

/* The file's whole text (a page at most); its length. */
static int read_file(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size) {
        char path[320];
        int r;

        gpu_file(gpu, attr, path, sizeof(path));
        r = sysfs_read_text(gpu->ctx, path, buf, size);
        if (r == -ENOMSG)
                r = 0, buf[0] = '\0';
        if (r < 0)
                return pm_errno(r);
        return (int) strlen(buf);
}

/* A file of lines for the parsers: the text with the last newline sysfs_read_text() dropped
 * given back; a file too long for @buf is garbage (-EBADMSG). @return its length. */
static int read_lines(struct amdsmi_gpu *gpu, const char *attr, char *buf, size_t size) {
        int r = read_file(gpu, attr, buf, size);

        if (r < 0)
                return r == -EMSGSIZE ? -EBADMSG : r;
        if (r > 0 && (size_t) r + 1 < size) {
                buf[r++] = '\n';
                buf[r] = '\0';
        }
        return r;
}

static int write_file(struct amdsmi_gpu *gpu, const char *attr, const char *value) {
        char path[320];
        int r;

        gpu_file(gpu, attr, path, sizeof(path));
        r = sysfs_write_string(gpu->ctx, path, value);
        if (r == -EACCES)
                return -EOPNOTSUPP;
        if (r < 0 && r != -EINVAL)
                log_debug(gpu->ctx, "%s/%s: writing '%s': %s", gpu->ctx->sysfs_root, path, value,
                          strerror(-r));
        return pm_errno(r);
}

_public_ int amdsmi_gpu_read_perf_level(struct amdsmi_gpu *gpu, enum amdsmi_perf_level *ret) {
        char buf[64];
        enum amdsmi_perf_level l;
        int r;

        if (!gpu || !ret)
                return -EINVAL;
        r = read_file(gpu, "power_dpm_force_performance_level", buf, sizeof(buf));
        if (r < 0)
                return r == -EMSGSIZE ? -EBADMSG : r;
        if (r == 0)
                return -ENODATA;
        if (amdsmi_perf_level_from_string(buf, &l) < 0 || streq_ci(buf, "determinism"))
                return -EBADMSG;
        *ret = l;
        return 0;
}

_public_ int amdsmi_gpu_write_perf_level(struct amdsmi_gpu *gpu, enum amdsmi_perf_level l) {
        if (!gpu || l <= AMDSMI_PERF_LEVEL_UNKNOWN || l >= _AMDSMI_PERF_LEVEL_MAX)
                return -EINVAL;
        return write_file(gpu, "power_dpm_force_performance_level", level_names[l]);
}

_public_ int amdsmi_gpu_read_clk_levels(struct amdsmi_gpu *gpu, enum amdsmi_clk_domain d,
                                        struct amdsmi_clk_levels *ret) {
        char buf[SYSFS_TEXT_MAX], attr[32];
        int r;

        if (!gpu || !ret || (unsigned) d >= _AMDSMI_CLK_MAX)
                return -EINVAL;
        snprintf(attr, sizeof(attr), "pp_dpm_%s", clk_names[d]);
        r = read_lines(gpu, attr, buf, sizeof(buf));
        if (r < 0)
                return r;
        return amdsmi_clk_levels_parse(buf, (size_t) r, ret);
}

_public_ int amdsmi_gpu_read_od_clk(struct amdsmi_gpu *gpu, struct amdsmi_od_clk *ret) {
        char buf[SYSFS_TEXT_MAX];
        int r;

        if (!gpu || !ret)
                return -EINVAL;
        r = read_lines(gpu, "pp_od_clk_voltage", buf, sizeof(buf));
        if (r < 0)
                return r;
        return amdsmi_od_clk_parse(buf, (size_t) r, ret);
}

_public_ int amdsmi_gpu_read_pm_policy(struct amdsmi_gpu *gpu, enum amdsmi_pm_policy_kind k,
                                       struct amdsmi_pm_policy *ret) {
        char buf[SYSFS_TEXT_MAX], attr[48];
        int r;

        if (!gpu || !ret || (unsigned) k >= _AMDSMI_PM_POLICY_MAX)
                return -EINVAL;
        snprintf(attr, sizeof(attr), "pm_policy/%s", policy_names[k]);
        r = read_lines(gpu, attr, buf, sizeof(buf));
        if (r < 0)
                return r;
        return amdsmi_pm_policy_parse(buf, (size_t) r, ret);
}

_public_ int amdsmi_gpu_write_pm_policy(struct amdsmi_gpu *gpu, enum amdsmi_pm_policy_kind k,
                                        unsigned id) {
        struct amdsmi_pm_policy p;
        char attr[48], value[16];
        bool listed = false;
        int r;

        r = amdsmi_gpu_read_pm_policy(gpu, k, &p);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < p.n; i++)
                listed |= p.levels[i].id == id;
        if (!listed)
                return -EINVAL;
        snprintf(attr, sizeof(attr), "pm_policy/%s", policy_names[k]);
        snprintf(value, sizeof(value), "%u", id);
        return write_file(gpu, attr, value);
}

/* The od writes: EINVAL from the kernel for a level that takes none is -EPERM here. */
static int od_write(struct amdsmi_gpu *gpu, const char *cmd) {
        return write_file(gpu, "pp_od_clk_voltage", cmd);
}

static bool od_level(struct amdsmi_gpu *gpu, enum amdsmi_perf_level *ret) {
        enum amdsmi_perf_level l;

        if (amdsmi_gpu_read_perf_level(gpu, &l) < 0)
                return false;
        *ret = l;
        return l == AMDSMI_PERF_LEVEL_MANUAL || l == AMDSMI_PERF_LEVEL_PERF_DETERMINISM;
}

_public_ int amdsmi_gpu_write_od_clk(struct amdsmi_gpu *gpu, const struct amdsmi_od_request *req,
                                     uint64_t flags) {
        struct amdsmi_clk_levels sclk, mclk;
        struct amdsmi_od_clk od;
        enum amdsmi_perf_level level = AMDSMI_PERF_LEVEL_UNKNOWN;
        uint32_t new_min, new_max;
        char cmd[32];
        int r;

        if (!gpu || !req || (!req->sclk_min_mhz && !req->sclk_max_mhz && !req->mclk_max_mhz))
                return -EINVAL;
        r = amdsmi_gpu_read_od_clk(gpu, &od);
        if (r < 0)
                return r;
        if (req->sclk_min_mhz || req->sclk_max_mhz) {
                r = amdsmi_gpu_read_clk_levels(gpu, AMDSMI_CLK_SCLK, &sclk);
                if (r < 0)
                        return r;
                if ((req->sclk_min_mhz && (req->sclk_min_mhz < amdsmi_clk_levels_min(&sclk) ||
                                           req->sclk_min_mhz > amdsmi_clk_levels_max(&sclk))) ||
                    (req->sclk_max_mhz && (req->sclk_max_mhz < amdsmi_clk_levels_min(&sclk) ||
                                           req->sclk_max_mhz > amdsmi_clk_levels_max(&sclk))))
                        return -ERANGE;
        }
        if (req->mclk_max_mhz) {
                if (!od.mclk_present)
                        return -EOPNOTSUPP;
                r = amdsmi_gpu_read_clk_levels(gpu, AMDSMI_CLK_MCLK, &mclk);
                if (r < 0)
                        return r;
                if (req->mclk_max_mhz < amdsmi_clk_levels_min(&mclk) ||
                    req->mclk_max_mhz > amdsmi_clk_levels_max(&mclk))
                        return -ERANGE;
        }
        if (!od_level(gpu, &level))
                return -EPERM;
        new_min = req->sclk_min_mhz ? req->sclk_min_mhz : od.sclk_min_mhz;
        new_max = req->sclk_max_mhz ? req->sclk_max_mhz : od.sclk_max_mhz;
        /* determinism keeps the ceiling only; manual needs min < max */
        if (level == AMDSMI_PERF_LEVEL_MANUAL && (req->sclk_min_mhz || req->sclk_max_mhz) &&
            new_min >= new_max)
                return -EINVAL;
        if (flags & AMDSMI_OD_DRY_RUN)
                return 0;
        if (req->sclk_min_mhz) {
                snprintf(cmd, sizeof(cmd), "s 0 %" PRIu32 "\n", req->sclk_min_mhz);
                if ((r = od_write(gpu, cmd)) < 0)
                        return r;
        }
        if (req->sclk_max_mhz) {
                snprintf(cmd, sizeof(cmd), "s 1 %" PRIu32 "\n", req->sclk_max_mhz);
                if ((r = od_write(gpu, cmd)) < 0)
                        return r;
        }
        if (req->mclk_max_mhz) {
                snprintf(cmd, sizeof(cmd), "m 1 %" PRIu32 "\n", req->mclk_max_mhz);
                if ((r = od_write(gpu, cmd)) < 0)
                        return r;
        }
        r = od_write(gpu, "c\n");
        return r == -EINVAL ? -EIO : r;
}

_public_ int amdsmi_gpu_restore_od_clk(struct amdsmi_gpu *gpu) {
        enum amdsmi_perf_level level;
        int r;

        if (!gpu)
                return -EINVAL;
        if (!od_level(gpu, &level))
                return -EPERM;
        r = od_write(gpu, "r\n");
        if (r < 0)
                return r;
        r = od_write(gpu, "c\n");
        return r == -EINVAL ? -EIO : r;
}
