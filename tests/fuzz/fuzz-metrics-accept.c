/* SPDX-License-Identifier: MIT */
/* Fuzz target of a scraper's Accept header as amdsmid's /metrics reads it
 * (fleet/metrics-render.c: metrics_format_from_accept()). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);
        enum metrics_format f;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        f = metrics_format_from_accept(s);
        if (f != METRICS_FORMAT_TEXT && f != METRICS_FORMAT_OPENMETRICS)
                abort();
        /* no OpenMetrics without the media type */
        if (f == METRICS_FORMAT_OPENMETRICS && !strcasestr(s, "application/openmetrics-text"))
                abort();
        free(s);
        return 0;
}
