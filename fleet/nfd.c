/* SPDX-License-Identifier: MIT */
/*
 * The feature file of amdsmid's Node Feature Discovery labels (nfd.h, amdsmid(8) KUBERNETES).
 *
 * nfd-worker's local source reads each "NAME=VALUE" line of the files in features.d whose
 * names do not start with '.', and "# +expiry-time=TIME" (Go's time.RFC3339) applies to the
 * lines after it: once TIME has passed, those labels are dropped. So the directive comes first,
 * and every value is a valid Kubernetes label value, since nfd-master refuses the others.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nfd.h"

static bool is_alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_label_char(char c) {
        return is_alnum(c) || c == '-' || c == '_' || c == '.';
}

int nfd_label_value_valid(const char *s) {
        size_t n = s ? strlen(s) : 0;

        if (n == 0 || n > NFD_LABEL_MAX || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!is_label_char(s[i]))
                        return false;
        return true;
}

size_t nfd_label_value(const char *s, char buf[static NFD_LABEL_MAX + 1]) {
        size_t n = 0;

        /* from the first letter or digit, every other character made '_', at most 63 */
        while (s && *s && !is_alnum(*s))
                s++;
        for (; s && *s && n < NFD_LABEL_MAX; s++)
                buf[n++] = is_label_char(*s) ? *s : '_';
        while (n > 0 && !is_alnum(buf[n - 1]))
                n--;
        buf[n] = '\0';
        return n;
}

static bool empty(const char *s) {
        return !s || !s[0];
}

/* The product of @g as a label value: a guest's "MI300X VF" is an MI300X. */
static size_t product_value(const struct nfd_gpu *g, char buf[static NFD_LABEL_MAX + 1]) {
        char name[256];
        size_t n;

        snprintf(name, sizeof(name), "%s", g->product ?: "unknown");
        n = strlen(name);
        if (n > 3 && strcmp(name + n - 3, " VF") == 0)
                name[n - 3] = '\0';
        if (nfd_label_value(name, buf) == 0)
                snprintf(buf, NFD_LABEL_MAX + 1, "unknown");
        return strlen(buf);
}

/* "cpx_nps4", "cpx" (memory mode unknown), or "" (nothing known), with @memory for the GPU's
 * memory mode. */
static void layout(const struct nfd_gpu *g, const char *memory, char buf[static 32]) {
        size_t n = 0;

        buf[0] = '\0';
        if (empty(g->compute_mode))
                return;
        for (const char *s = g->compute_mode; *s && n < 15; s++)
                buf[n++] = (char) (*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
        if (!empty(memory)) {
                buf[n++] = '_';
                for (const char *s = memory; *s && n < 30; s++)
                        buf[n++] = (char) (*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
        }
        buf[n] = '\0';
}

static bool counted(const struct nfd_gpu *g) {
        return !g->role || strcmp(g->role, "vf") != 0;
}

static void label(FILE *f, const char *name, const char *value) {
        char v[NFD_LABEL_MAX + 1];

        if (nfd_label_value(value, v) > 0)
                fprintf(f, NFD_LABEL_PREFIX "%s=%s\n", name, v);
}

/* The value over every counted GPU of what @fn writes: the one value, "mixed" when they differ
 * or a GPU has none, NULL when no GPU has one. */
static const char *common(const struct nfd_input *in,
                          void (*fn)(const struct nfd_gpu *g, char buf[static 64]),
                          char ret[static 64]) {
        bool any = false, missing = false, mixed = false;
        char v[64];

        for (size_t i = 0; i < in->n_gpus; i++) {
                if (!counted(&in->gpus[i]))
                        continue;
                fn(&in->gpus[i], v);
                if (!v[0]) {
                        missing = true;
                        continue;
                }
                if (!any)
                        snprintf(ret, 64, "%s", v);
                else if (strcmp(ret, v) != 0)
                        mixed = true;
                any = true;
        }
        if (!any)
                return NULL;
        if (mixed || missing)
                return "mixed";
        return ret;
}

static void gpu_product(const struct nfd_gpu *g, char buf[static 64]) {
        (void) product_value(g, buf);
}

static void gpu_role(const struct nfd_gpu *g, char buf[static 64]) {
        snprintf(buf, 64, "%s", g->role ?: "");
}

static void gpu_layout(const struct nfd_gpu *g, char buf[static 64]) {
        layout(g, g->memory_mode, buf);
}

static void gpu_layout_pending(const struct nfd_gpu *g, char buf[static 64]) {
        layout(g, empty(g->pending_memory) ? g->memory_mode : g->pending_memory, buf);
}

static bool any_pending(const struct nfd_input *in) {
        for (size_t i = 0; i < in->n_gpus; i++) {
                const struct nfd_gpu *g = &in->gpus[i];

                if (counted(g) && !empty(g->pending_memory) &&
                    (empty(g->memory_mode) || strcasecmp(g->pending_memory, g->memory_mode) != 0))
                        return true;
        }
        return false;
}

/* count.PRODUCT=N for each product, in the order the GPUs come. */
static void product_counts(FILE *f, const struct nfd_input *in) {
        for (size_t i = 0; i < in->n_gpus; i++) {
                char p[NFD_LABEL_MAX + 1], q[NFD_LABEL_MAX + 1];
                unsigned n = 0;
                bool seen = false;

                if (!counted(&in->gpus[i]))
                        continue;
                (void) product_value(&in->gpus[i], p);
                for (size_t j = 0; j < in->n_gpus && !seen; j++) {
                        if (!counted(&in->gpus[j]))
                                continue;
                        (void) product_value(&in->gpus[j], q);
                        if (strcmp(p, q) != 0)
                                continue;
                        if (j < i)
                                seen = true;
                        else
                                n++;
                }
                /* a name longer than a label name may be is left out */
                if (!seen && strlen("amdsmi-gpu.count.") + strlen(p) <= NFD_LABEL_MAX)
                        fprintf(f, NFD_LABEL_PREFIX "count.%s=%u\n", p, n);
        }
}

int nfd_render(const struct nfd_input *in, time_t now, unsigned expiry_s, char **ret) {
        char *text = NULL, when[64], buf[64], num[32];
        size_t size = 0, n_gpus = 0, partitions = 0;
        time_t expiry = now + (time_t) expiry_s;
        const char *v;
        struct tm tm;
        FILE *f;

        if (expiry < now || !gmtime_r(&expiry, &tm) ||
            strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                return -EINVAL;
        for (size_t i = 0; i < in->n_gpus; i++)
                if (counted(&in->gpus[i])) {
                        n_gpus++;
                        partitions += in->gpus[i].partitions;
                }

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "# +expiry-time=%s\n", when);
        fprintf(f, "# amdsmid's GPU labels (amdsmid(8) KUBERNETES), rewritten while it runs\n");
        label(f, "present", n_gpus > 0 ? "true" : "false");
        snprintf(num, sizeof(num), "%zu", n_gpus);
        label(f, "count", num);
        if (n_gpus > 0) {
                v = common(in, gpu_product, buf);
                label(f, "product", v);
                if (v && strcmp(v, "mixed") == 0)
                        product_counts(f, in);
                label(f, "role", common(in, gpu_role, buf));
                snprintf(num, sizeof(num), "%zu", partitions);
                label(f, "partitions", num);
                label(f, "partition-layout", common(in, gpu_layout, buf));
                if (any_pending(in))
                        label(f, "partition-layout-pending", common(in, gpu_layout_pending, buf));
        }
        /* a profile name that is no label value as it is would name another profile */
        if (!empty(in->profile) && nfd_label_value_valid(in->profile))
                label(f, "profile", in->profile);
        if (!empty(in->sync_state))
                label(f, "sync-state", in->sync_state);
        if (fclose(f) != 0 || !text) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return 0;
}
