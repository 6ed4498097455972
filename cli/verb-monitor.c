/* SPDX-License-Identifier: MIT */
/*
 * amdsmi monitor: amd-smi's compact live view, one line per GPU (or per selected partition,
 * -g N.P): power, temperatures, clocks, busy, VRAM and what held the GPU back. The values are
 * metric's document (through amdsmid when it runs), flattened into one row per line. With -w
 * on a terminal the screen is cleared and drawn again each sample; piped, each sample adds
 * its rows under one header (every row starts with the sample's time), so that the output
 * can be logged or parsed.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "documents.h"
#include "health-json.h"
#include "samples.h"

static const struct column_def monitor_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "partition", "PART", "partition", COLUMN_NONE },
        { "bdf", NULL, "bdf", 0 },
        { "state", NULL, "state", 0 },
        { "power_w", "POWER (W)", "power_w", 0 },
        { "cap_w", "CAP (W)", "cap_w", 0 },
        { "temp_junction_c", "HOTSPOT (C)", "temp_junction_c", 0 },
        { "temp_mem_c", "MEM (C)", "temp_mem_c", 0 },
        { "gfx_clock_mhz", "GFX (MHz)", "gfx_clock_mhz", 0 },
        { "mem_clock_mhz", "MEM (MHz)", "mem_clock_mhz", 0 },
        { "gfx_busy_pct", "GFX BUSY (%)", "gfx_busy_pct", 0 }, /* a partition's: its XCCs' mean */
        { "mem_busy_pct", "MEM BUSY (%)", "mem_busy_pct", 0 },
        { "vram_used_bytes", "VRAM USED (MiB)", "vram_used_bytes", COLUMN_MIB },
        { "vram_total_bytes", "VRAM TOTAL (MiB)", "vram_total_bytes", COLUMN_MIB },
        { "throttle", "THROTTLE", "throttle", 0 },
        { "perf_level", NULL, "perf_level", 0 }, /* JSON and CSV: the table stays compact */
};

/* Copies @path of @g (json_path_get()) into @row as @key; a missing value is null. */
static void take(json_object *row, const char *key, json_object *g, const char *path) {
        json_object_object_add(row, key, json_path_get(g, path));
}

/* A partition's busy: its XCCs' mean (gpu_metrics.partitions[].gfx_busy_pct is per XCC). */
static json_object *mean_busy(json_object *part) {
        json_object *a = NULL;
        double sum = 0;
        size_t n = 0;

        if (!json_object_object_get_ex(part, "gfx_busy_pct", &a) || !a)
                return NULL;
        if (!json_object_is_type(a, json_type_array))
                return json_object_get(a);
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *v = json_object_array_get_idx(a, i);

                if (json_object_is_type(v, json_type_int) ||
                    json_object_is_type(v, json_type_double)) {
                        sum += json_object_get_double(v);
                        n++;
                }
        }
        if (n == 0)
                return NULL;
        /* whole percents, as the GPU's busy is */
        return json_object_new_int64((int64_t) (sum / (double) n + 0.5));
}

/* The row of a GPU, or of its partition @part (an element of gpu_metrics.partitions). */
static json_object *monitor_row(json_object *g, json_object *part) {
        json_object *row = json_object_new_object(), *limiters = NULL, *ecc = NULL;
        char text[64];

        if (!row)
                return NULL;
        take(row, "gpu", g, "gpu");
        if (part)
                take(row, "partition", part, "partition");
        else
                json_object_object_add(row, "partition", NULL);
        take(row, "bdf", g, "bdf");
        take(row, "state", g, "state");
        take(row, "power_w", g, "power.power_w");
        take(row, "cap_w", g, "power.cap_w");
        take(row, "temp_junction_c", g, "temperatures.junction_c");
        take(row, "temp_mem_c", g, "temperatures.mem_c");
        take(row, "gfx_clock_mhz", g, "clocks.gfx_clock_mhz");
        take(row, "mem_clock_mhz", g, "clocks.mem_clock_mhz");
        /* a partition's own busy, else the GPU's */
        if (part)
                json_object_object_add(row, "gfx_busy_pct", mean_busy(part));
        else
                take(row, "gfx_busy_pct", g, "usage.gpu_busy_pct");
        take(row, "mem_busy_pct", g, "usage.mem_busy_pct");
        take(row, "vram_used_bytes", g, "memory.vram_used_bytes");
        take(row, "vram_total_bytes", g, "memory.vram_total_bytes");
        json_object_object_get_ex(g, "limiters", &limiters);
        limiters_text(limiters, text, sizeof(text));
        json_object_object_add(row, "throttle", json_object_new_string(text));
        take(row, "perf_level", g, "perf_level");
        /* the RAS totals, when the GPU has them (metric_ecc_gpu()'s "ecc", null without RAS) */
        if (json_object_object_get_ex(g, "ecc", &ecc) && ecc) {
                take(row, "ecc_uncorrectable_total", g, "ecc.uncorrectable_total");
                take(row, "ecc_correctable_total", g, "ecc.correctable_total");
        }
        return row;
}

/* One row per GPU, or per partition a selector names (-g N.P): metric's document carries
 * only the selected partitions. */
static json_object *monitor_rows(const struct cli *c, json_object *gpus) {
        json_object *rows = json_object_new_array();
        bool per_partition = false;

        for (size_t i = 0; i < c->selection.n_items; i++)
                if (c->selection.items[i].partition != SELECT_NO_PARTITION)
                        per_partition = true;
        for (size_t i = 0; rows && i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                json_object *parts = per_partition ? json_path_get(g, "gpu_metrics.partitions")
                                                   : NULL;
                size_t n = json_object_is_type(parts, json_type_array)
                                   ? json_object_array_length(parts)
                                   : 0;

                if (n == 0)
                        json_object_array_add(rows, monitor_row(g, NULL));
                for (size_t k = 0; k < n; k++)
                        json_object_array_add(rows,
                                              monitor_row(g, json_object_array_get_idx(parts, k)));
                json_object_put(parts);
        }
        return rows;
}

static int monitor_sample(struct cli *c) {
        struct columns cols = {};
        json_object *gpus, *rows;
        bool redraw;
        int r;

        /* with the RAS totals of each GPU (amdsmid's GetDocument("metric-ecc") when it runs) */
        r = cli_collect_document(c, "metric-ecc", metric_ecc_gpu, &gpus);
        if (r != 0)
                return r;
        rows = monitor_rows(c, gpus);
        json_object_put(gpus);
        if (!rows)
                return cli_fail(c, -ENOMEM, "out of memory");
        r = columns_add_defs(&cols, monitor_columns, ELEMENTSOF(monitor_columns));
        /* an ECC column when the rows have the totals */
        for (size_t i = 0; r >= 0 && i < json_object_array_length(rows); i++)
                if (json_object_object_get_ex(json_object_array_get_idx(rows, i),
                                              "ecc_uncorrectable_total", NULL)) {
                        r = columns_add(&cols, "ecc_uncorrectable_total", "UE",
                                        "ecc_uncorrectable_total", 0);
                        if (r >= 0)
                                r = columns_add(&cols, "ecc_correctable_total", "CE",
                                                "ecc_correctable_total", 0);
                        break;
                }
        if (r < 0) {
                json_object_put(rows);
                return cli_fail(c, r, "out of memory");
        }
        /* a watch on a terminal draws the screen again; piped, the samples follow each other */
        redraw = c->format == OUTPUT_TABLE && c->interval_ns > 0 && isatty(STDOUT_FILENO);
        if (c->format == OUTPUT_TABLE && c->interval_ns > 0 && !redraw) {
                char stamp[40];

                if (format_timestamp(&c->report.sample_time, stamp, sizeof(stamp)) < 0)
                        stamp[0] = '\0';
                r = columns_add(&cols, NULL, NULL, NULL, 0); /* make room, then shift */
                if (r >= 0) {
                        memmove(cols.v + 1, cols.v, (cols.n - 1) * sizeof(*cols.v));
                        cols.v[0] = (struct column){ .header = strdup("TIME"),
                                                     .path = strdup("time") };
                        if (!cols.v[0].header || !cols.v[0].path)
                                r = -ENOMEM;
                }
                for (size_t i = 0; r >= 0 && i < json_object_array_length(rows); i++)
                        json_object_object_add(json_object_array_get_idx(rows, i), "time",
                                               json_object_new_string(stamp + 11));
                if (r >= 0)
                        r = output_table_rows(stdout, &cols, rows, c->sample == 0);
                columns_free(&cols);
                json_object_put(rows);
                return cli_sample_done(c, NULL, r);
        }
        if (redraw) {
                fputs("\033[H\033[2J", stdout); /* home, clear the screen */
                r = output_table(stdout, &cols, rows, "");
                columns_free(&cols);
                json_object_put(rows);
                return cli_sample_done(c, NULL, r);
        }
        r = cli_emit(c, rows, &cols);
        columns_free(&cols);
        return r;
}

int verb_monitor(struct cli *c) {
        int r;

        /* the THROTTLE column needs two samples: a watch's, or amdsmid's sampler */
        if (c->interval_ns > 0)
                c->samples = &c->own_samples;
        r = cli_open_run(c, monitor_sample);
        c->samples = NULL;
        samples_clear(&c->own_samples);
        return r;
}
