/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the Prometheus renderer (fleet/metrics-render.c, metrics-families.c) over
 * documents it did not make: amdsmi metric --prometheus renders what amdsmid answers. The
 * input is a JSON object whose keys list, static, metric, ras, power, partition, health,
 * sriov and apply hold the documents. Whatever they hold, every line rendered is a comment
 * or "name{labels} value" with a family name of ours, in both formats.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_object *member(json_object *o, const char *key) {
        json_object *v = NULL;

        if (o && json_object_is_type(o, json_type_object))
                json_object_object_get_ex(o, key, &v);
        return v;
}

static void check(const char *text, size_t size, enum metrics_format f) {
        const char *p = text, *end = text + size;

        if (strlen(text) != size || (size > 0 && text[size - 1] != '\n'))
                abort();
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));

                if (!nl)
                        abort();
                if (*p == '#') {
                        if (strncmp(p, "# HELP amdsmi_", 14) != 0 &&
                            strncmp(p, "# TYPE amdsmi_", 14) != 0 &&
                            strncmp(p, "# UNIT amdsmi_", 14) != 0 &&
                            !(f == METRICS_FORMAT_OPENMETRICS && strncmp(p, "# EOF\n", 6) == 0 &&
                              nl + 1 == end))
                                abort();
                } else {
                        const char *q = p;

                        if (strncmp(p, "amdsmi_", 7) != 0)
                                abort();
                        while (q < nl && ((*q >= 'a' && *q <= 'z') || *q == '_' ||
                                          (*q >= '0' && *q <= '9')))
                                q++;
                        if (*q == '{') {
                                /* labels: a quoted value never holds a raw newline or quote */
                                for (q++; q < nl && *q != '}'; q++)
                                        if (*q == '"')
                                                for (q++; *q != '"'; q++) {
                                                        if (q >= nl)
                                                                abort();
                                                        if (*q == '\\')
                                                                q++;
                                                }
                                if (q >= nl)
                                        abort();
                                q++;
                        }
                        if (*q != ' ' || q + 1 >= nl)
                                abort();
                }
                p = nl + 1;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        json_tokener *tok = json_tokener_new_ex(64);
        json_object *o;

        if (!tok)
                return 0;
        o = json_tokener_parse_ex(tok, (const char *) data, (int) (size > 1 << 20 ? 1 << 20 : size));
        json_tokener_free(tok);
        for (int f = METRICS_FORMAT_TEXT; f <= METRICS_FORMAT_OPENMETRICS; f++) {
                struct metrics_input in = {
                        .list = member(o, "list"),
                        .static_doc = member(o, "static"),
                        .metric = member(o, "metric"),
                        .ras = member(o, "ras"),
                        .power = member(o, "power"),
                        .partition = member(o, "partition"),
                        .health = member(o, "health"),
                        .sriov = member(o, "sriov"),
                        .apply = member(o, "apply"),
                        .identity = size % 2,
                        .up = true,
                        .scrape_duration_s = 0.001,
                };
                char *text = NULL;
                size_t n = 0;

                if (metrics_render(&in, (enum metrics_format) f, &text, &n) < 0)
                        continue;
                check(text, n, (enum metrics_format) f);
                free(text);
        }
        json_object_put(o);
        return 0;
}
