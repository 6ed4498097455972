/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "select.h"
#include "parse-util.h"

static bool is_dec(char c) {
        return c >= '0' && c <= '9';
}

/* Parses [s, end) as a non-empty run of decimal digits that fits in 32 bits. */
static int parse_dec_u32(const char *s, const char *end, uint32_t *ret) {
        uint64_t v = 0;

        if (s == end)
                return -EINVAL;
        for (const char *p = s; p < end; p++) {
                if (!is_dec(*p))
                        return -EINVAL;
                v = v * 10 + (uint64_t) (*p - '0');
                if (v > UINT32_MAX)
                        return -EINVAL;
        }
        *ret = (uint32_t) v;
        return 0;
}

/* Parses [s, end) as 1 to @max_digits hex digits. */
static int parse_hex(const char *s, const char *end, size_t max_digits, uint32_t *ret) {
        uint32_t v = 0;

        if (s == end || (size_t) (end - s) > max_digits)
                return -EINVAL;
        for (const char *p = s; p < end; p++) {
                int d = unhexchar(*p);

                if (d < 0)
                        return -EINVAL;
                v = v * 16 + (uint32_t) d;
        }
        *ret = v;
        return 0;
}

static int parse_bdf(const char *s, char *ret, size_t len) {
        const char *colon1, *colon2, *dot;
        uint32_t domain = 0, bus, dev, fn;

        colon1 = strchr(s, ':');
        colon2 = colon1 ? strchr(colon1 + 1, ':') : NULL;
        if (colon2 && strchr(colon2 + 1, ':'))
                return -EINVAL;
        dot = strchr(s, '.');
        if (!colon1 || !dot || strchr(dot + 1, '.'))
                return -EINVAL;

        if (colon2) {
                if (parse_hex(s, colon1, 8, &domain) < 0)
                        return -EINVAL;
                s = colon1 + 1;
                colon1 = colon2;
        }
        if (dot < colon1)
                return -EINVAL;
        if (parse_hex(s, colon1, 2, &bus) < 0 || parse_hex(colon1 + 1, dot, 2, &dev) < 0 ||
            parse_hex(dot + 1, dot + 1 + strlen(dot + 1), 1, &fn) < 0)
                return -EINVAL;
        if (dev > 0x1f || fn > 7)
                return -EINVAL;

        snprintf(ret, len, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
        return 0;
}

/* @id without its "0x", if it has one. */
static const char *unique_id_digits(const char *id) {
        return id[0] == '0' && (id[1] == 'x' || id[1] == 'X') ? id + 2 : id;
}

/* 16 hex digits, "0x" allowed: a unique id, written lower-case into @ret (17 bytes). */
static int parse_unique_id(const char *s, char *ret) {
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
                s += 2;
        if (strlen(s) != 16)
                return -EINVAL;
        for (size_t i = 0; i < 16; i++) {
                int d = unhexchar(s[i]);

                if (d < 0)
                        return -EINVAL;
                ret[i] = "0123456789abcdef"[d];
        }
        ret[16] = '\0';
        return 0;
}

int selector_parse(const char *s, struct selector *ret) {
        struct selector sel = { .partition = SELECT_NO_PARTITION };
        const char *dot;

        if (!s || !*s)
                return -EINVAL;

        if (strcasecmp(s, "all") == 0) {
                sel.kind = SELECTOR_ALL;
        } else if (parse_unique_id(s, sel.unique_id) == 0) {
                sel.kind = SELECTOR_UNIQUE_ID;
        } else if (strchr(s, ':')) {
                sel.kind = SELECTOR_BDF;
                if (parse_bdf(s, sel.bdf, sizeof(sel.bdf)) < 0)
                        return -EINVAL;
        } else {
                sel.kind = SELECTOR_INDEX;
                dot = strchr(s, '.');
                if (!dot) {
                        if (parse_dec_u32(s, s + strlen(s), &sel.index) < 0)
                                return -EINVAL;
                } else {
                        if (parse_dec_u32(s, dot, &sel.index) < 0 ||
                            parse_dec_u32(dot + 1, dot + 1 + strlen(dot + 1), &sel.partition) < 0)
                                return -EINVAL;
                        /* SELECT_NO_PARTITION is UINT32_MAX: never a partition. */
                        if (sel.partition == SELECT_NO_PARTITION)
                                return -EINVAL;
                }
        }

        *ret = sel;
        return 0;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

int selection_add(struct selection *sel, const char *arg) {
        struct selector *items = NULL;
        size_t n = 0, max;
        const char *p;
        int r;

        if (!arg)
                return -EINVAL;

        max = 1;
        for (p = arg; *p; p++)
                if (*p == ',')
                        max++;
        items = calloc(max, sizeof(*items));
        if (!items)
                return -ENOMEM;

        p = arg;
        for (;;) {
                const char *start, *end, *comma;
                char buf[64];

                comma = strchr(p, ',');
                end = comma ? comma : p + strlen(p);
                start = p;
                while (start < end && is_blank(*start))
                        start++;
                while (end > start && is_blank(end[-1]))
                        end--;
                if (start == end || (size_t) (end - start) >= sizeof(buf)) {
                        r = -EINVAL;
                        goto fail;
                }
                memcpy(buf, start, (size_t) (end - start));
                buf[end - start] = '\0';
                r = selector_parse(buf, &items[n]);
                if (r < 0)
                        goto fail;
                n++;
                if (!comma)
                        break;
                p = comma + 1;
        }

        {
                struct selector *grown =
                        realloc(sel->items, (sel->n_items + n) * sizeof(*sel->items));
                if (!grown) {
                        r = -ENOMEM;
                        goto fail;
                }
                memcpy(grown + sel->n_items, items, n * sizeof(*items));
                sel->items = grown;
                sel->n_items += n;
        }
        free(items);
        return 0;

fail:
        free(items);
        return r;
}

void selection_clear(struct selection *sel) {
        free(sel->items);
        sel->items = NULL;
        sel->n_items = 0;
}

static void match_all(struct select_match *m) {
        m->selected = true;
        m->all_partitions = true;
        m->partitions = 0;
}

int selection_resolve(const struct selection *sel, const struct select_target *gpus, size_t n,
                      struct select_match *ret, size_t *ret_failed) {
        struct select_match *m;
        size_t i, k;

        if (n == 0 && sel->n_items == 0)
                return 0;
        m = calloc(n ? n : 1, sizeof(*m));
        if (!m)
                return -ENOMEM;

        if (sel->n_items == 0)
                for (i = 0; i < n; i++)
                        match_all(&m[i]);

        for (k = 0; k < sel->n_items; k++) {
                const struct selector *s = &sel->items[k];

                switch (s->kind) {
                case SELECTOR_ALL:
                        for (i = 0; i < n; i++)
                                match_all(&m[i]);
                        break;

                case SELECTOR_BDF:
                        for (i = 0; i < n; i++)
                                if (gpus[i].bdf && strcasecmp(gpus[i].bdf, s->bdf) == 0)
                                        break;
                        if (i == n)
                                goto not_found;
                        goto matched;

                case SELECTOR_UNIQUE_ID: {
                        bool found = false;

                        for (i = 0; i < n; i++)
                                if (gpus[i].unique_id &&
                                    strcasecmp(unique_id_digits(gpus[i].unique_id),
                                               s->unique_id) == 0) {
                                        match_all(&m[i]);
                                        found = true;
                                }
                        if (!found)
                                goto not_found;
                        break;
                }

                case SELECTOR_INDEX:
                        if (s->index >= n)
                                goto not_found;
                        i = s->index;
                matched:
                        if (s->partition == SELECT_NO_PARTITION) {
                                match_all(&m[i]);
                                break;
                        }
                        if (s->partition >= gpus[i].n_partitions || s->partition >= 64)
                                goto not_found;
                        m[i].selected = true;
                        if (!m[i].all_partitions)
                                m[i].partitions |= UINT64_C(1) << s->partition;
                        break;
                }
        }

        memcpy(ret, m, n * sizeof(*m));
        free(m);
        return 0;

not_found:
        free(m);
        if (ret_failed)
                *ret_failed = k;
        return -ENOENT;
}

void selection_pin(struct selection *sel, const struct select_target *gpus, size_t n) {
        for (size_t k = 0; k < sel->n_items; k++) {
                struct selector *s = &sel->items[k];

                if (s->kind != SELECTOR_INDEX || s->index >= n || !gpus[s->index].bdf)
                        continue;
                s->kind = SELECTOR_BDF;
                snprintf(s->bdf, sizeof(s->bdf), "%s", gpus[s->index].bdf);
        }
}

int selector_format(const struct selector *s, char *buf, size_t len) {
        switch (s->kind) {
        case SELECTOR_ALL:
                snprintf(buf, len, "all");
                return 0;
        case SELECTOR_BDF:
                if (s->partition != SELECT_NO_PARTITION)
                        return -EOPNOTSUPP;
                snprintf(buf, len, "%s", s->bdf);
                return 0;
        case SELECTOR_UNIQUE_ID:
                snprintf(buf, len, "0x%s", s->unique_id);
                return 0;
        case SELECTOR_INDEX:
                if (s->partition == SELECT_NO_PARTITION)
                        snprintf(buf, len, "%u", s->index);
                else
                        snprintf(buf, len, "%u.%u", s->index, s->partition);
                return 0;
        }
        return -EINVAL;
}

void selector_describe(const struct selector *s, char *buf, size_t len) {
        switch (s->kind) {
        case SELECTOR_ALL:
                snprintf(buf, len, "all");
                break;
        case SELECTOR_BDF:
                if (s->partition == SELECT_NO_PARTITION)
                        snprintf(buf, len, "GPU %s", s->bdf);
                else
                        snprintf(buf, len, "GPU %s partition %u", s->bdf, s->partition);
                break;
        case SELECTOR_UNIQUE_ID:
                snprintf(buf, len, "GPU with unique id 0x%s", s->unique_id);
                break;
        case SELECTOR_INDEX:
                if (s->partition == SELECT_NO_PARTITION)
                        snprintf(buf, len, "GPU %u", s->index);
                else
                        snprintf(buf, len, "GPU %u partition %u", s->index, s->partition);
                break;
        }
}

bool select_match_partition(const struct select_match *m, unsigned index) {
        if (!m->selected)
                return false;
        if (m->all_partitions)
                return true;
        return index < 64 && (m->partitions & (UINT64_C(1) << index));
}

#define NSEC_PER_SEC UINT64_C(1000000000)
#define INTERVAL_MAX_SEC UINT64_C(31536000)

int parse_interval(const char *s, uint64_t *ret_ns) {
        uint64_t sec = 0, ns = 0, scale = NSEC_PER_SEC / 10;
        const char *p = s;

        if (!s || !is_dec(*p))
                return -EINVAL;
        for (; is_dec(*p); p++) {
                sec = sec * 10 + (uint64_t) (*p - '0');
                if (sec > INTERVAL_MAX_SEC)
                        return -EINVAL;
        }
        if (*p == '.') {
                p++;
                if (!is_dec(*p))
                        return -EINVAL;
                for (; is_dec(*p); p++) {
                        ns += (uint64_t) (*p - '0') * scale;
                        scale /= 10;
                }
        }
        if (*p != '\0')
                return -EINVAL;
        if (sec == 0 && ns == 0)
                return -EINVAL;
        if (sec == INTERVAL_MAX_SEC && ns > 0)
                return -EINVAL;
        *ret_ns = sec * NSEC_PER_SEC + ns;
        return 0;
}

int parse_count(const char *s, uint64_t *ret) {
        uint64_t v = 0;

        if (!s || !*s)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (!is_dec(*p))
                        return -EINVAL;
                if (v > (UINT64_MAX - 9) / 10)
                        return -EINVAL;
                v = v * 10 + (uint64_t) (*p - '0');
        }
        if (v == 0)
                return -EINVAL;
        *ret = v;
        return 0;
}
