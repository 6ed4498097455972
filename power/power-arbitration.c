/* SPDX-License-Identifier: MIT */
/*
 * Power-cap arbitration: minimum of the host, vm and apml sources, clamped to the hardware
 * range, explained; the read-back comparison; value parsing. Pure functions (see the header).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "power-arbitration.h"

static const char *const source_kind_table[_POWER_SOURCE_KIND_MAX] = {
        [POWER_SOURCE_HOST] = "host", [POWER_SOURCE_VM] = "vm",
        [POWER_SOURCE_APML] = "apml", [POWER_SOURCE_DEFAULT] = "default",
        [POWER_SOURCE_NONE] = "none",
};

static const char *const clamp_table[_POWER_CLAMP_MAX] = {
        [POWER_CLAMP_NONE] = "none",
        [POWER_CLAMP_LOW] = "low",
        [POWER_CLAMP_HIGH] = "high",
};

static const char *const observed_table[_POWER_OBSERVED_MAX] = {
        [POWER_OBSERVED_UNKNOWN] = "unknown",
        [POWER_OBSERVED_CONSISTENT] = "consistent",
        [POWER_OBSERVED_EXTERNAL] = "external",
        [POWER_OBSERVED_OUTSIDE_WRITER] = "outside-writer",
};

const char *power_source_kind_to_string(enum power_source_kind k) {
        if ((unsigned) k >= _POWER_SOURCE_KIND_MAX)
                return NULL;
        return source_kind_table[k];
}

int power_source_kind_from_string(const char *s, enum power_source_kind *ret) {
        if (!s)
                return -EINVAL;
        for (unsigned k = 0; k < _POWER_SOURCE_SETTABLE_MAX; k++)
                if (strcmp(s, source_kind_table[k]) == 0) {
                        *ret = (enum power_source_kind) k;
                        return 0;
                }
        return -EINVAL;
}

const char *power_clamp_to_string(enum power_clamp c) {
        if ((unsigned) c >= _POWER_CLAMP_MAX)
                return NULL;
        return clamp_table[c];
}

const char *power_observed_to_string(enum power_observed o) {
        if ((unsigned) o >= _POWER_OBSERVED_MAX)
                return NULL;
        return observed_table[o];
}

int power_validate(uint64_t uw) {
        if (uw < POWER_FLOOR_UW)
                return -EDOM; /* out of range too (OutOfRange, exit 7), told apart by its words */
        if (uw > POWER_WRITE_MAX_UW)
                return -ERANGE;
        return 0;
}

bool power_truncates(uint64_t uw) {
        return uw % POWER_UW_PER_W != 0;
}

void power_sources_init(struct power_sources *s) {
        *s = (struct power_sources){};
}

/* Copies src into dst[size] when it fits; NULL is "". */
static int copy_string(char *dst, size_t size, const char *src) {
        size_t n;

        if (!src)
                src = "";
        n = strlen(src);
        if (n >= size)
                return -ENAMETOOLONG;
        memcpy(dst, src, n + 1);
        return 0;
}

static int fill_source(struct power_source *dst, const char *key, const char *vf_bdf, uint64_t uw,
                       const char *setter, uint64_t set_usec) {
        struct power_source n = {
                .present = true,
                .uw = uw,
                .set_usec = set_usec,
        };
        int r;

        r = copy_string(n.key, sizeof(n.key), key);
        if (r < 0)
                return r;
        r = copy_string(n.vf_bdf, sizeof(n.vf_bdf), vf_bdf);
        if (r < 0)
                return r;
        r = copy_string(n.setter, sizeof(n.setter), setter);
        if (r < 0)
                return r;

        *dst = n;
        return 0;
}

/* Index of the VM with this key, or (-1 - insertion point) when absent. */
static ptrdiff_t vm_search(const struct power_sources *s, const char *key) {
        size_t lo = 0, hi = s->n_vms;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(s->vms[mid].key, key);

                if (c == 0)
                        return (ptrdiff_t) mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1 - (ptrdiff_t) lo;
}

static bool key_empty(const char *key) {
        return !key || key[0] == '\0';
}

int power_sources_set(struct power_sources *s, enum power_source_kind kind, const char *key,
                      const char *vf_bdf, uint64_t uw, const char *setter, uint64_t set_usec) {
        struct power_source n;
        ptrdiff_t i;
        size_t at;
        int r;

        if (!s)
                return -EINVAL;
        r = power_validate(uw);
        if (r < 0)
                return r;

        switch (kind) {
        case POWER_SOURCE_HOST:
        case POWER_SOURCE_APML: {
                struct power_source *p = kind == POWER_SOURCE_HOST ? &s->host : &s->apml;
                bool added;

                if (!key_empty(key) || !key_empty(vf_bdf))
                        return -EINVAL;
                added = !p->present;
                r = fill_source(p, NULL, NULL, uw, setter, set_usec);
                if (r < 0)
                        return r;
                return added;
        }
        case POWER_SOURCE_VM:
                if (key_empty(key))
                        return -EINVAL;
                r = fill_source(&n, key, vf_bdf, uw, setter, set_usec);
                if (r < 0)
                        return r;
                i = vm_search(s, key);
                if (i >= 0) {
                        s->vms[i] = n;
                        return 0;
                }
                if (s->n_vms >= POWER_VM_MAX)
                        return -ENOSPC;
                at = (size_t) (-1 - i);
                memmove(&s->vms[at + 1], &s->vms[at], (s->n_vms - at) * sizeof(s->vms[0]));
                s->vms[at] = n;
                s->n_vms++;
                return 1;
        default:
                return -EINVAL;
        }
}

int power_sources_clear(struct power_sources *s, enum power_source_kind kind, const char *key) {
        struct power_source *p;
        ptrdiff_t i;

        if (!s)
                return -EINVAL;

        switch (kind) {
        case POWER_SOURCE_HOST:
        case POWER_SOURCE_APML:
                if (!key_empty(key))
                        return -EINVAL;
                p = kind == POWER_SOURCE_HOST ? &s->host : &s->apml;
                if (!p->present)
                        return 0;
                *p = (struct power_source){};
                return 1;
        case POWER_SOURCE_VM:
                if (key_empty(key))
                        return -EINVAL;
                i = vm_search(s, key);
                if (i < 0)
                        return 0;
                memmove(&s->vms[i], &s->vms[i + 1],
                        (s->n_vms - (size_t) i - 1) * sizeof(s->vms[0]));
                s->n_vms--;
                s->vms[s->n_vms] = (struct power_source){};
                return 1;
        default:
                return -EINVAL;
        }
}

size_t power_sources_clear_vms(struct power_sources *s) {
        size_t n = s->n_vms;

        for (size_t i = 0; i < n; i++)
                s->vms[i] = (struct power_source){};
        s->n_vms = 0;
        return n;
}

const struct power_source *power_sources_find_vm(const struct power_sources *s, const char *key) {
        ptrdiff_t i;

        if (!s || key_empty(key))
                return NULL;
        i = vm_search(s, key);
        return i >= 0 ? &s->vms[i] : NULL;
}

static void explain_add(struct power_explanation *e, enum power_source_kind kind,
                        const struct power_source *p) {
        struct power_explain_source *x = &e->sources[e->n_sources++];

        x->kind = kind;
        x->uw = p->uw;
        memcpy(x->key, p->key, sizeof(x->key));
        memcpy(x->vf_bdf, p->vf_bdf, sizeof(x->vf_bdf));
        memcpy(x->setter, p->setter, sizeof(x->setter));
        x->set_usec = p->set_usec;
        x->binds = false;
}

int power_arbitrate(const struct power_sources *s, const struct power_range *range,
                    struct power_explanation *ret) {
        struct power_explanation e = {
                .effective_uw = POWER_UW_UNKNOWN,
                .requested_uw = POWER_UW_UNKNOWN,
                .binding = POWER_SOURCE_NONE,
                .clamp = POWER_CLAMP_NONE,
                .observed_uw = POWER_UW_UNKNOWN,
                .observed = POWER_OBSERVED_UNKNOWN,
        };
        struct power_explain_source *bind = NULL;

        if (!s || !range || !ret || s->n_vms > POWER_VM_MAX)
                return -EINVAL;

        e.floor_uw = POWER_FLOOR_UW;
        if (range->cap_min_uw != POWER_UW_UNKNOWN && range->cap_min_uw > e.floor_uw)
                e.floor_uw = range->cap_min_uw;
        e.ceiling_uw = range->cap_max_uw;
        if (e.ceiling_uw != POWER_UW_UNKNOWN && e.floor_uw > e.ceiling_uw)
                return -EINVAL;

        /* Listed in tie order: host, VMs by key, apml. */
        if (s->host.present)
                explain_add(&e, POWER_SOURCE_HOST, &s->host);
        for (size_t i = 0; i < s->n_vms; i++)
                explain_add(&e, POWER_SOURCE_VM, &s->vms[i]);
        if (s->apml.present)
                explain_add(&e, POWER_SOURCE_APML, &s->apml);

        /* Strictly lower replaces, so the first in tie order wins. */
        for (size_t i = 0; i < e.n_sources; i++)
                if (!bind || e.sources[i].uw < bind->uw)
                        bind = &e.sources[i];

        if (!bind) {
                if (range->default_uw != POWER_UW_UNKNOWN) {
                        e.effective_uw = range->default_uw;
                        e.binding = POWER_SOURCE_DEFAULT;
                }
                *ret = e;
                return 0;
        }

        bind->binds = true;
        e.binding = bind->kind;
        memcpy(e.binding_key, bind->key, sizeof(e.binding_key));
        e.requested_uw = bind->uw;
        if (bind->uw < e.floor_uw) {
                e.effective_uw = e.floor_uw;
                e.clamp = POWER_CLAMP_LOW;
        } else if (e.ceiling_uw != POWER_UW_UNKNOWN && bind->uw > e.ceiling_uw) {
                e.effective_uw = e.ceiling_uw;
                e.clamp = POWER_CLAMP_HIGH;
        } else
                e.effective_uw = bind->uw;

        *ret = e;
        return 0;
}

int power_compare_observed(uint64_t modelled_uw, uint64_t observed_uw, enum power_observed *ret) {
        uint64_t m, o;

        if (modelled_uw == POWER_UW_UNKNOWN || observed_uw == POWER_UW_UNKNOWN)
                return -ENODATA;

        /* The kernel keeps whole watts: 450.5 W applied reads back as 450 W. */
        m = modelled_uw / POWER_UW_PER_W;
        o = observed_uw / POWER_UW_PER_W;
        if (o < m)
                *ret = POWER_OBSERVED_EXTERNAL;
        else if (o > m)
                *ret = POWER_OBSERVED_OUTSIDE_WRITER;
        else
                *ret = POWER_OBSERVED_CONSISTENT;
        return 0;
}

void power_explanation_observe(struct power_explanation *e, uint64_t observed_uw) {
        enum power_observed o;

        if (power_compare_observed(e->effective_uw, observed_uw, &o) < 0)
                o = POWER_OBSERVED_UNKNOWN;
        e->observed_uw = observed_uw;
        e->observed = o;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

int power_parse_watts(const char *s, uint64_t *ret_uw) {
        /* Decimal exponent of each unit relative to µW. */
        static const struct {
                const char *name;
                unsigned exp;
        } units[] = {
                { "", 6 },   { "W", 6 },  { "w", 6 },  { "mW", 3 }, { "mw", 3 },
                { "kW", 9 }, { "kw", 9 }, { "KW", 9 }, { "Kw", 9 },
        };
        const char *p, *int_start, *int_end, *frac_start = NULL, *frac_end = NULL;
        uint64_t v = 0, frac = 0;
        unsigned exp = 0;
        bool found = false;

        if (!s || !ret_uw)
                return -EINVAL;

        p = int_start = s;
        while (is_digit(*p))
                p++;
        int_end = p;
        if (int_end == int_start)
                return -EINVAL; /* empty, sign, '.5', whitespace, garbage */

        if (*p == '.') {
                frac_start = ++p;
                while (is_digit(*p))
                        p++;
                frac_end = p;
                if (frac_end == frac_start)
                        return -EINVAL; /* "5." */
        }

        /* One optional space, then a unit (required after the space). */
        if (*p == ' ') {
                p++;
                if (*p == '\0')
                        return -EINVAL;
        }
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                if (strcmp(p, units[i].name) == 0) {
                        exp = units[i].exp;
                        found = true;
                        break;
                }
        if (!found)
                return -EINVAL;

        /* Fraction: the first exp digits count, later ones must be zeros. */
        if (frac_start) {
                unsigned n = 0;

                for (const char *q = frac_start; q < frac_end; q++, n++) {
                        if (n < exp)
                                frac = frac * 10 + (uint64_t) (*q - '0');
                        else if (*q != '0')
                                return -EINVAL; /* below 1 µW: precision loss */
                }
                for (; n < exp; n++)
                        frac *= 10;
        }

        /* Integer part, scaled. Check syntax completely before reporting overflow. */
        for (const char *q = int_start; q < int_end; q++)
                if (__builtin_mul_overflow(v, 10, &v) ||
                    __builtin_add_overflow(v, (uint64_t) (*q - '0'), &v))
                        return -ERANGE;
        for (unsigned i = 0; i < exp; i++)
                if (__builtin_mul_overflow(v, 10, &v))
                        return -ERANGE;
        if (__builtin_add_overflow(v, frac, &v) || v == POWER_UW_UNKNOWN)
                return -ERANGE;

        *ret_uw = v;
        return 0;
}
