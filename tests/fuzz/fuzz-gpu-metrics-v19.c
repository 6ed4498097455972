/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the versioned telemetry parsers: gpu_metrics of every revision through
 * amdsmi_gpu_metrics_parse_ext() (both id numberings) and amdsmi_gpu_metrics_parse(),
 * xcp_metrics through amdsmi_partition_metrics_parse(), and, when the input holds two tables
 * back to back (the first one's structure_size says where the second starts) and both parse,
 * amdsmi_limiters_compute() on them. Seeds: tests/fuzz/gpu-metrics-v19 (mkfixtures.py
 * --fuzz-corpus). See meson.build for the libFuzzer build.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PPM 1000000

/* The contract of a failed parse: one of the documented errors, a reason for -EBADMSG, and
 * nothing written but what the caller gave. */
static void check_failure(int r, const void *out, const void *pattern, size_t n,
                          const char *reason) {
        if (r != -EBADMSG && r != -EOPNOTSUPP)
                abort();
        if (memcmp(out, pattern, n) != 0)
                abort();
        if (r == -EBADMSG && reason[0] == '\0')
                abort();
}

static int parse_gpu(const uint8_t *data, size_t size, uint32_t ids,
                     struct amdsmi_gpu_metrics_ext *m) {
        static struct amdsmi_gpu_metrics_ext pattern;
        char reason[256];
        int r;

        memset(&pattern, 0xa5, sizeof(pattern));
        pattern.size = sizeof(pattern);
        pattern.ids = ids;
        *m = pattern;
        memset(reason, 0, sizeof(reason));
        r = amdsmi_gpu_metrics_parse_ext(data, size, m, reason, sizeof(reason));
        if (r < 0) {
                check_failure(r, m, &pattern, sizeof(*m), reason);
                return r;
        }
        if (r != 0 || reason[0] != '\0' || size < 4 || m->size != sizeof(*m) ||
            m->version != AMDSMI_GPU_METRICS_EXT_VERSION || m->base.structure_size > size ||
            m->base.format_revision != data[2] || m->base.content_revision != data[3])
                abort();
        if (m->unknown_attrs > m->attr_count || m->clipped_attrs > m->attr_count ||
            (m->base.content_revision >= 9 && m->attr_count > (m->base.structure_size - 8u) / 9u))
                abort();
        if (m->accumulation_counter_bits % 8 != 0 || m->accumulation_counter_bits > 64 ||
            m->residency_bits % 8 != 0 || m->residency_bits > 64)
                abort();
        return 0;
}

static int limiters(const struct amdsmi_gpu_metrics_ext *a,
                    const struct amdsmi_gpu_metrics_ext *b) {
        static struct amdsmi_limiters l, pattern;
        const uint64_t *ppm = &l.ppt_ppm;
        int r;

        memset(&pattern, 0x5a, sizeof(pattern));
        pattern.size = sizeof(pattern);
        l = pattern;
        r = amdsmi_limiters_compute(a, b, &l);
        if (r < 0) {
                if (r != -ENODATA && r != -EAGAIN && r != -ESTALE)
                        abort();
                if (memcmp(&l, &pattern, sizeof(l)) != 0)
                        abort();
                return r;
        }
        if (r != 0 || l.version != AMDSMI_LIMITERS_VERSION || l.ticks == 0)
                abort();
        /* every share is within the interval, or unknown */
        for (size_t i = 0; i < (sizeof(l) - offsetof(struct amdsmi_limiters, ppt_ppm)) / 8; i++)
                if (ppm[i] != AMDSMI_NA && ppm[i] > PPM)
                        abort();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static struct amdsmi_gpu_metrics_ext t3, mid, second;
        static struct amdsmi_gpu_metrics old, old_pattern;
        static struct amdsmi_partition_metrics pm, pm_pattern;
        char reason[256];
        size_t first;
        int r, r_mid;

        /* gpu_metrics: the id numbering changes where ids from 48 on go, never the verdict */
        r = parse_gpu(data, size, AMDSMI_METRICS_IDS_T3, &t3);
        r_mid = parse_gpu(data, size, AMDSMI_METRICS_IDS_MID, &mid);
        if (r != r_mid)
                abort();
        if (r == 0 && memcmp(&t3.base, &mid.base, sizeof(t3.base)) != 0)
                abort();

        /* the old entry point: the same verdict and the same base part */
        memset(&old_pattern, 0xa5, sizeof(old_pattern));
        old = old_pattern;
        r_mid = amdsmi_gpu_metrics_parse(data, size, &old);
        if (r_mid != r)
                abort();
        if (r < 0 && memcmp(&old, &old_pattern, sizeof(old)) != 0)
                abort();
        if (r == 0 &&
            (old.structure_size != t3.base.structure_size ||
             memcmp(&old.temp_edge_mc, &t3.base.temp_edge_mc,
                    sizeof(old) - offsetof(struct amdsmi_gpu_metrics, temp_edge_mc)) != 0))
                abort();

        /* xcp_metrics */
        memset(&pm_pattern, 0xa5, sizeof(pm_pattern));
        pm_pattern.size = sizeof(pm_pattern);
        pm = pm_pattern;
        memset(reason, 0, sizeof(reason));
        r_mid = amdsmi_partition_metrics_parse(data, size, &pm, reason, sizeof(reason));
        if (r_mid < 0)
                check_failure(r_mid, &pm, &pm_pattern, sizeof(pm), reason);
        else if (r_mid != 0 || pm.version != AMDSMI_PARTITION_METRICS_VERSION ||
                 pm.structure_size > size || pm.unknown_attrs > pm.attr_count)
                abort();

        if (r < 0)
                return 0;

        /* a second table after the first: the limiters between the two, both ways round, and
         * a sample against itself (the counter did not move, or there is none) */
        r = limiters(&t3, &t3);
        if (r != -EAGAIN && r != -ENODATA)
                abort();
        first = t3.base.structure_size;
        if (first == 0 || first >= size)
                return 0;
        if (parse_gpu(data + first, size - first, AMDSMI_METRICS_IDS_T3, &second) < 0)
                return 0;
        (void) limiters(&t3, &second);
        (void) limiters(&second, &t3);
        return 0;
}
