/* SPDX-License-Identifier: MIT */
/*
 * amdsmi metric: power, temperatures, clocks and busy counters from hwmon, and the gpu_metrics
 * table (activity, energy, throttling and residency counters, PCIe, XGMI, per-partition busy).
 * Never reads the compute partition mode: that can wake the GPU.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "documents.h"
#include "health-json.h"
#include "parse-util.h"
#include "bus-errors.h"
#include "samples.h"
#include "time-util.h"

/* --throttle: the first of the two samples the limiters need, this much earlier */
#define THROTTLE_PRIME_MS 100


static const struct column_def metric_head_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", NULL, "bdf", 0 },
        { "power_w", "POWER (W)", "power.power_w", 0 },
        { "cap_w", "CAP (W)", "power.cap_w", 0 },
        { "cap_min_w", NULL, "power.cap_min_w", 0 },
        { "cap_max_w", NULL, "power.cap_max_w", 0 },
        { "cap_default_w", NULL, "power.cap_default_w", 0 },
        { "cap_writable", NULL, "power.cap_writable", 0 },
        { "ppt1_cap_w", NULL, "power.ppt1.cap_w", 0 },
        { "ppt1_cap_min_w", NULL, "power.ppt1.cap_min_w", 0 },
        { "ppt1_cap_max_w", NULL, "power.ppt1.cap_max_w", 0 },
        { "ppt1_cap_default_w", NULL, "power.ppt1.cap_default_w", 0 },
        { "board_voltage_mv", NULL, "voltages.board_mv", 0 },
};

/* Temperature columns come between the head and the tail; these always exist in CSV. */
static const char *const csv_temperature_keys[] = { "edge_c", "junction_c", "mem_c" };

/* ... and these in tables (every Instinct GPU's hwmon has them): a GPU without hwmon, as on a
 * gim host, shows N/A there instead of a table without them. */
static const struct column_def table_temperature_columns[] = {
        { "temp_junction_c", "JUNCTION (°C)", "temperatures.junction_c", 0 },
        { "temp_mem_c", "MEM (°C)", "temperatures.mem_c", 0 },
};

static const struct column_def metric_tail_columns[] = {
        { "gfx_clock_mhz", "GFX (MHz)", "clocks.gfx_clock_mhz", 0 },
        { "mem_clock_mhz", "MEM (MHz)", "clocks.mem_clock_mhz", 0 },
        { "gpu_busy_pct", "GPU BUSY (%)", "usage.gpu_busy_pct", 0 },
        { "mem_busy_pct", "MEM BUSY (%)", "usage.mem_busy_pct", 0 },
        { "perf_level", "PERF LEVEL", "perf_level", 0 },
        { "throttle", "THROTTLE", "throttle_text", 0 },
        { "vram_used_bytes", "VRAM USED (MiB)", "memory.vram_used_bytes", COLUMN_MIB },
        { "vram_total_bytes", NULL, "memory.vram_total_bytes", 0 },
        { "socket_power_w", NULL, "gpu_metrics.socket_power_w", 0 },
        { "energy_j", "ENERGY (J)", "gpu_metrics.energy_j", COLUMN_WHOLE },
        { "energy_accumulator", NULL, "gpu_metrics.energy_accumulator", 0 },
        { "gfx_activity_pct", NULL, "gpu_metrics.activity.gfx_pct", 0 },
        { "umc_activity_pct", NULL, "gpu_metrics.activity.umc_pct", 0 },
        { "mm_activity_pct", NULL, "gpu_metrics.activity.mm_pct", 0 },
        { "vcn_activity_pct", NULL, "gpu_metrics.activity.vcn_pct", 0 },
        { "jpeg_activity_pct", NULL, "gpu_metrics.activity.jpeg_pct", 0 },
        { "gfx_activity_acc", NULL, "gpu_metrics.activity.gfx_acc", 0 },
        { "mem_activity_acc", NULL, "gpu_metrics.activity.mem_acc", 0 },
        { "metrics_temp_hotspot_c", NULL, "gpu_metrics.temperatures.hotspot_c", 0 },
        { "metrics_temp_mem_c", NULL, "gpu_metrics.temperatures.mem_c", 0 },
        { "metrics_temp_vrsoc_c", NULL, "gpu_metrics.temperatures.vrsoc_c", 0 },
        { "metrics_temp_hbm_c", NULL, "gpu_metrics.temperatures.hbm_c", 0 },
        { "throttle_status", NULL, "gpu_metrics.throttle.status", 0 },
        { "indep_throttle_status", NULL, "gpu_metrics.throttle.indep_status", 0 },
        { "gfxclk_lock_status", NULL, "gpu_metrics.throttle.gfxclk_lock_status", 0 },
        { "accumulation_counter", NULL, "gpu_metrics.throttle.accumulation_counter", 0 },
        { "prochot_residency_acc", NULL, "gpu_metrics.throttle.prochot_residency_acc", 0 },
        { "ppt_residency_acc", NULL, "gpu_metrics.throttle.ppt_residency_acc", 0 },
        { "socket_thm_residency_acc", NULL, "gpu_metrics.throttle.socket_thm_residency_acc", 0 },
        { "vr_thm_residency_acc", NULL, "gpu_metrics.throttle.vr_thm_residency_acc", 0 },
        { "hbm_thm_residency_acc", NULL, "gpu_metrics.throttle.hbm_thm_residency_acc", 0 },
        { "metrics_gfx_clock_mhz", NULL, "gpu_metrics.clocks.gfx_clock_mhz", 0 },
        { "metrics_soc_clock_mhz", NULL, "gpu_metrics.clocks.soc_clock_mhz", 0 },
        { "metrics_mem_clock_mhz", NULL, "gpu_metrics.clocks.mem_clock_mhz", 0 },
        { "pcie_width", NULL, "gpu_metrics.pcie.width", 0 },
        { "pcie_speed_gts", NULL, "gpu_metrics.pcie.speed_gts", 0 },
        { "pcie_bandwidth_acc_gb_per_s", NULL, "gpu_metrics.pcie.bandwidth_acc_gb_per_s", 0 },
        { "pcie_bandwidth_gb_per_s_acc", NULL, "gpu_metrics.pcie.bandwidth_gb_per_s_acc", 0 },
        { "pcie_bandwidth_inst_gb_per_s", NULL, "gpu_metrics.pcie.bandwidth_inst_gb_per_s", 0 },
        { "pcie_l0_to_recov_count_acc", NULL, "gpu_metrics.pcie.l0_to_recov_count_acc", 0 },
        { "pcie_replay_count_acc", NULL, "gpu_metrics.pcie.replay_count_acc", 0 },
        { "pcie_replay_rover_count_acc", NULL, "gpu_metrics.pcie.replay_rover_count_acc", 0 },
        { "pcie_nak_sent_count_acc", NULL, "gpu_metrics.pcie.nak_sent_count_acc", 0 },
        { "pcie_nak_rcvd_count_acc", NULL, "gpu_metrics.pcie.nak_rcvd_count_acc", 0 },
        { "xgmi_width", NULL, "gpu_metrics.xgmi.width", 0 },
        { "xgmi_speed_gbps", NULL, "gpu_metrics.xgmi.speed_gbps", 0 },
        { "xgmi_links", NULL, "gpu_metrics.xgmi.links", 0 },
        { "xgmi_read_data_kb", NULL, "gpu_metrics.xgmi.read_data_kb", 0 },
        { "xgmi_write_data_kb", NULL, "gpu_metrics.xgmi.write_data_kb", 0 },
        { "xgmi_link_status", NULL, "gpu_metrics.xgmi.link_status", 0 },
        { "xgmi_link_state", NULL, "gpu_metrics.xgmi.link_state", 0 },
        { "limiters_status", NULL, "limiters.status", 0 },
        { "limiters_interval_s", NULL, "limiters.interval_s", 0 },
        { "limiter_power_pct", NULL, "limiters.power_pct", 0 },
        { "limiter_socket_thermal_pct", NULL, "limiters.socket_thermal_pct", 0 },
        { "limiter_hbm_thermal_pct", NULL, "limiters.hbm_thermal_pct", 0 },
        { "limiter_vr_thermal_pct", NULL, "limiters.vr_thermal_pct", 0 },
        { "limiter_prochot_pct", NULL, "limiters.prochot_pct", 0 },
        { "limiter_power_source", NULL, "limiters.power_limit.source", 0 },
        { "limiter_power_key", NULL, "limiters.power_limit.key", 0 },
};

static const struct column_def xcp_table_columns[] = {
        { NULL, "GPU", "gpu", 0 },
        { NULL, "PARTITION", "partition", 0 },
        { NULL, "GFX BUSY (%)", "gfx_busy_pct", 0 },
};

/* ---- field selection (-p -t -c ..., --fields) ---------------------------------------------- */

/* The keys of each group of fields (amd-smi's -p, -t, ...): subtrees of the GPU objects. */
static const struct {
        unsigned group;
        const char *path;
} group_paths[] = {
        { METRIC_GROUP_POWER, "power" },
        { METRIC_GROUP_POWER, "voltages" },
        { METRIC_GROUP_POWER, "gpu_metrics.socket_power_w" },
        { METRIC_GROUP_POWER, "gpu_metrics.energy_j" },
        { METRIC_GROUP_POWER, "gpu_metrics.energy_accumulator" },
        { METRIC_GROUP_POWER, "gpu_metrics.voltages" },
        { METRIC_GROUP_TEMPERATURE, "temperatures" },
        { METRIC_GROUP_TEMPERATURE, "temperature_limits" },
        { METRIC_GROUP_TEMPERATURE, "gpu_metrics.temperatures" },
        { METRIC_GROUP_CLOCK, "clocks" },
        { METRIC_GROUP_CLOCK, "gpu_metrics.clocks" },
        { METRIC_GROUP_USAGE, "usage" },
        { METRIC_GROUP_USAGE, "gpu_metrics.activity" },
        { METRIC_GROUP_USAGE, "gpu_metrics.partitions" },
        { METRIC_GROUP_MEMORY, "memory" },
        { METRIC_GROUP_MEMORY, "gpu_metrics.mem_max_bandwidth_bytes_per_s" },
        { METRIC_GROUP_PCIE, "gpu_metrics.pcie" },
        { METRIC_GROUP_XGMI, "gpu_metrics.xgmi" },
        { METRIC_GROUP_THROTTLE, "throttle_text" },
        { METRIC_GROUP_THROTTLE, "gpu_metrics.throttle" },
        { METRIC_GROUP_THROTTLE, "limiters" },
        { METRIC_GROUP_ECC, "ecc" },
        { METRIC_GROUP_PERF_LEVEL, "perf_level" },
};

/* The top-level keys of metric's GPU objects: a --fields key must start with one. */
static const char *const metric_keys[] = {
        "gpu", "bdf", "state", "product", "power", "voltages", "temperatures", "temperature_limits",
        "clocks", "usage", "memory", "gpu_metrics", "limiters", "perf_level",
};

int metric_add_fields(struct metric_options *m, const char *list, const char **ret_bad) {
        _cleanup_strv_free_ char **l = NULL;
        static char bad[128];
        const char *p = list;

        for (;;) {
                size_t n = strcspn(p, ",");
                char field[128];
                bool known = false;
                int r;

                if (n == 0 || n >= sizeof(field)) {
                        snprintf(bad, sizeof(bad), "%.*s", (int) (n < sizeof(bad) ? n : 100), p);
                        *ret_bad = bad;
                        return -EINVAL;
                }
                memcpy(field, p, n);
                field[n] = '\0';
                for (size_t i = 0; i < ELEMENTSOF(metric_keys); i++) {
                        size_t k = strlen(metric_keys[i]);

                        if (strncmp(field, metric_keys[i], k) == 0 &&
                            (field[k] == '\0' || field[k] == '.'))
                                known = true;
                }
                /* dotted names only: no empty component, no array index */
                if (!known || strstr(field, "..") || field[n - 1] == '.' || strpbrk(field, "[] ")) {
                        snprintf(bad, sizeof(bad), "%s", field);
                        *ret_bad = bad;
                        return -EINVAL;
                }
                r = strv_extend(&l, field);
                if (r < 0)
                        return r;
                if (p[n] == '\0')
                        break;
                p += n + 1;
        }
        for (char **f = l; *f; f++) {
                int r = strv_extend(&m->fields, *f);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* Whether fields are selected at all (else every field shows, as before). */
static bool selecting(const struct cli *c) {
        return c->metric.groups != 0 || c->metric.fields;
}

/* Whether @path (a column's, or a key's) is under one of @prefix's subtrees or names it. */
static bool under(const char *path, const char *prefix) {
        size_t k = strlen(prefix);

        return strncmp(path, prefix, k) == 0 &&
               (path[k] == '\0' || path[k] == '.' || path[k] == '[');
}

/* Whether the column or key @path is selected. */
static bool path_selected(const struct cli *c, const char *path) {
        if (strcmp(path, "gpu") == 0 || strcmp(path, "bdf") == 0 || strcmp(path, "state") == 0)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(group_paths); i++)
                if ((c->metric.groups & group_paths[i].group) && under(path, group_paths[i].path))
                        return true;
        for (char **f = c->metric.fields; f && *f; f++)
                if (under(path, *f))
                        return true;
        return false;
}

/* The table header of a column only CSV shows by default: its CSV name in capitals, the
 * unit suffix as the other headers write it ("cap_min_w": "CAP MIN (W)"). */
static void header_of(const char *name, char *buf, size_t size) {
        static const struct {
                const char *suffix, *unit;
        } units[] = {
                { "_w", "W" },     { "_mw", "mW" },       { "_mv", "mV" },    { "_c", "C" },
                { "_mhz", "MHz" }, { "_pct", "%" },       { "_j", "J" },      { "_bytes", "B" },
                { "_gts", "GT/s" }, { "_gbps", "Gb/s" },  { "_kb", "KiB" },   { "_s", "s" },
        };
        size_t len = strlen(name), i;
        const char *unit = NULL;

        for (size_t k = 0; k < ELEMENTSOF(units); k++) {
                size_t n = strlen(units[k].suffix);

                if (len > n && strcmp(name + len - n, units[k].suffix) == 0) {
                        unit = units[k].unit;
                        len -= n;
                        break;
                }
        }
        for (i = 0; i < len && i + 1 < size; i++)
                buf[i] = name[i] == '_' ? ' ' : (char) toupper((unsigned char) name[i]);
        buf[i] = '\0';
        if (unit)
                snprintf(buf + i, size - i, " (%s)", unit);
}

/* @cols reduced to the selected fields (a table shows every selected column, with a header
 * made from its name where it had none), then a column for each --fields key that no column
 * shows (its path as name). @return 0 or -ENOMEM. */
static int select_columns(const struct cli *c, struct columns *cols) {
        struct columns keep = {};
        int r = 0;

        for (size_t i = 0; r >= 0 && i < cols->n; i++) {
                const struct column *col = &cols->v[i];
                char header[96];

                if (!col->path || !path_selected(c, col->path))
                        continue;
                if (c->format == OUTPUT_TABLE && !col->header && col->name)
                        header_of(col->name, header, sizeof(header));
                r = columns_add(&keep, col->name, col->header ? col->header : header, col->path,
                                col->flags);
        }
        for (char **f = c->metric.fields; r >= 0 && f && *f; f++) {
                bool shown = false;
                char name[128], header[128];

                for (size_t i = 0; i < keep.n; i++)
                        if (keep.v[i].path && under(keep.v[i].path, *f))
                                shown = true;
                if (shown)
                        continue;
                snprintf(name, sizeof(name), "%s", *f);
                for (char *p = name; *p; p++)
                        if (*p == '.')
                                *p = '_';
                header_of(name, header, sizeof(header));
                r = columns_add(&keep, name, header, *f, 0);
        }
        columns_free(cols);
        *cols = keep;
        return r;
}

/* Copies the key @path of @src (dotted) into @dst, making the objects on the way. */
static void copy_path(json_object *src, json_object *dst, const char *path) {
        const char *dot = strchr(path, '.');
        char key[128];
        json_object *child, *sub;

        if (!json_object_is_type(src, json_type_object))
                return;
        snprintf(key, sizeof(key), "%.*s", (int) (dot ? (size_t) (dot - path) : strlen(path)),
                 path);
        if (!json_object_object_get_ex(src, key, &child))
                return;
        if (!dot) {
                json_object_object_add(dst, key, json_object_get(child));
                return;
        }
        if (!json_object_object_get_ex(dst, key, &sub)) {
                sub = json_object_new_object();
                if (!sub)
                        return;
                json_object_object_add(dst, key, sub);
        }
        copy_path(child, sub, dot + 1);
}

/* The selected keys, groups first, as the document's "fields" says them. */
static json_object *fields_json(const struct cli *c) {
        json_object *a = json_object_new_array();

        for (size_t k = 0; a && k < ELEMENTSOF(group_paths); k++)
                if (c->metric.groups & group_paths[k].group &&
                    strcmp(group_paths[k].path, "throttle_text") != 0)
                        json_object_array_add(a, json_object_new_string(group_paths[k].path));
        for (char **f = c->metric.fields; a && f && *f; f++)
                json_object_array_add(a, json_object_new_string(*f));
        return a;
}

/* The document of a selection (schema: metric_selected_document): the envelope, "fields",
 * then "gpus" (taken) and "errors". */
static int print_selected_json(struct cli *c, json_object *gpus) {
        json_object *doc = cli_document(c, gpus), *out;
        int r;

        if (!doc)
                return cli_fail(c, -ENOMEM, "out of memory");
        out = json_object_new_object();
        if (!out) {
                json_object_put(doc);
                return cli_fail(c, -ENOMEM, "out of memory");
        }
        json_object_object_foreach(doc, key, val) {
                if (strcmp(key, "gpus") == 0)
                        json_object_object_add(out, "fields", fields_json(c));
                json_object_object_add(out, key, json_object_get(val));
        }
        json_object_put(doc);
        r = cli_print_json(c, out);
        json_object_put(out);
        return r;
}

/* JSON: each GPU object reduced to gpu, bdf and the selected keys. */
static void select_json(const struct cli *c, json_object *gpus) {
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                json_object *o = json_object_new_object();

                if (!o)
                        return;
                copy_path(g, o, "gpu");
                copy_path(g, o, "bdf");
                copy_path(g, o, "state");
                for (size_t k = 0; k < ELEMENTSOF(group_paths); k++)
                        if (c->metric.groups & group_paths[k].group)
                                copy_path(g, o, group_paths[k].path);
                for (char **f = c->metric.fields; f && *f; f++)
                        copy_path(g, o, *f);
                json_object_array_put_idx(gpus, i, o);
        }
}

static int add_temperature_columns(struct cli *c, struct columns *cols, json_object *gpus) {
        int r;

        if (c->format == OUTPUT_CSV)
                for (size_t i = 0; i < ELEMENTSOF(csv_temperature_keys); i++) {
                        char name[80], path[96];

                        snprintf(name, sizeof(name), "temp_%s", csv_temperature_keys[i]);
                        snprintf(path, sizeof(path), "temperatures.%s", csv_temperature_keys[i]);
                        r = columns_add(cols, name, NULL, path, 0);
                        if (r < 0)
                                return r;
                }
        else {
                r = columns_add_defs(cols, table_temperature_columns,
                                     ELEMENTSOF(table_temperature_columns));
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *temps =
                        json_path_get(json_object_array_get_idx(gpus, i), "temperatures");

                if (!temps)
                        continue;
                json_object_object_foreach(temps, key, val) {
                        char name[80], header[80], path[96];
                        size_t len = strlen(key), k;

                        (void) val;
                        snprintf(name, sizeof(name), "temp_%s", key);
                        if (columns_has(cols, name))
                                continue;
                        /* header: the label in capitals without "_c" */
                        for (k = 0; k + 2 < len && k + 1 < sizeof(header); k++)
                                header[k] =
                                        (char) (key[k] >= 'a' && key[k] <= 'z' ? key[k] - 'a' + 'A'
                                                                               : key[k]);
                        snprintf(header + k, sizeof(header) - k, " (°C)");
                        snprintf(path, sizeof(path), "temperatures.%s", key);
                        r = columns_add(cols, name, header, path, 0);
                        if (r < 0) {
                                json_object_put(temps);
                                return r;
                        }
                }
                json_object_put(temps);
        }

        /* tables: the fixed CSV-only columns get no header, so nothing to do */
        return 0;
}

/*
 * CSV: one row per GPU, so the per-partition busy counters of gpu_metrics become eight columns
 * partition<P>_gfx_busy_pct (the partition's XCCs joined with ';'), empty for partitions not
 * selected or not present.
 */
static int add_partition_columns(struct columns *cols) {
        for (unsigned i = 0; i < AMDSMI_METRICS_MAX_XCP; i++) {
                char name[64], path[96];
                int r;

                snprintf(name, sizeof(name), "partition%u_gfx_busy_pct", i);
                snprintf(path, sizeof(path), "gpu_metrics.partitions[partition=%u].gfx_busy_pct",
                         i);
                r = columns_add(cols, name, NULL, path, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Tables: a second table of per-partition busy counters where gpu_metrics has them. */
static int print_partition_table(json_object *gpus) {
        struct columns cols = {};
        json_object *rows = json_object_new_array();
        int r;

        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *gpu, *parts;
                size_t n;

                parts = json_path_get(g, "gpu_metrics.partitions");
                n = parts ? json_object_array_length(parts) : 0;
                json_object_object_get_ex(g, "gpu", &gpu);
                for (size_t k = 0; k < n; k++) {
                        json_object *p = json_object_array_get_idx(parts, k), *row, *v;

                        row = json_object_new_object();
                        if (!row)
                                break;
                        json_set(row, "gpu", json_object_get(gpu));
                        json_object_object_get_ex(p, "partition", &v);
                        json_set(row, "partition", json_object_get(v));
                        json_object_object_get_ex(p, "gfx_busy_pct", &v);
                        json_set(row, "gfx_busy_pct", json_object_get(v));
                        json_object_array_add(rows, row);
                }
                json_object_put(parts);
        }

        r = 0;
        if (json_object_array_length(rows) > 0) {
                r = columns_add_defs(&cols, xcp_table_columns, ELEMENTSOF(xcp_table_columns));
                if (r >= 0) {
                        fputc('\n', stdout);
                        r = output_table(stdout, &cols, rows, "");
                }
        }
        columns_free(&cols);
        json_object_put(rows);
        return r;
}

/* --throttle: a first sample of every selected GPU 100 ms before the one shown. */
static void prime_samples(struct cli *c) {
        FOREACH_SELECTED_GPU(c, i, gpu) {
                struct sample_pair *p = samples_get(c->samples, amdsmi_gpu_get_bdf(gpu));

                if (p)
                        (void) sample_pair_update(p, gpu, 0); /* the real sample reports */
        }
        sleep_ms(THROTTLE_PRIME_MS);
        cli_begin_sample(c);
}

/* The THROTTLE cell of every GPU (tables and CSV; not part of the JSON document). */
static void add_throttle_text(json_object *gpus) {
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *l = NULL;
                char text[64];

                json_object_object_get_ex(g, "limiters", &l);
                limiters_text(l, text, sizeof(text));
                json_object_object_add(g, "throttle_text", json_object_new_string(text));
        }
}

/* The columns of -e (the health slice's totals), after the selection. */
static const struct column_def ecc_columns[] = {
        { "ecc_uncorrectable_total", "UE", "ecc.uncorrectable_total", 0 },
        { "ecc_correctable_total", "CE", "ecc.correctable_total", 0 },
        { "ecc_deferred_total", "DE", "ecc.deferred_total", 0 },
};

static int metric_sample(struct cli *c) {
        /* -e: each GPU's RAS totals ("ecc") after its metrics, from amdsmid when it runs */
        bool ecc = c->metric.groups & METRIC_GROUP_ECC;
        const char *verb = ecc ? "metric-ecc" : "metric";
        struct columns cols = {};
        json_object *gpus;
        int r;

        if (!selecting(c)) {
                r = cli_print_daemon_text(c, verb);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        /* amdsmid's sampler has the samples of the limiters */
        if (c->metric.throttle && c->sample == 0 && !c->read_daemon)
                prime_samples(c);
        r = cli_collect_document(c, verb, ecc ? metric_ecc_gpu : metric_gpu, &gpus);
        if (r != 0)
                return r;
        if (c->format != OUTPUT_JSON)
                add_throttle_text(gpus);

        r = columns_add_defs(&cols, metric_head_columns, ELEMENTSOF(metric_head_columns));
        if (r >= 0)
                r = add_temperature_columns(c, &cols, gpus);
        if (r >= 0)
                r = columns_add_defs(&cols, metric_tail_columns, ELEMENTSOF(metric_tail_columns));
        if (r >= 0)
                r = add_partition_columns(&cols);
        if (r >= 0 && selecting(c)) {
                if (c->format == OUTPUT_JSON) {
                        select_json(c, gpus);
                        columns_free(&cols);
                        return print_selected_json(c, gpus);
                }
                r = select_columns(c, &cols);
                if (r >= 0 && c->metric.groups & METRIC_GROUP_ECC)
                        r = columns_add_defs(&cols, ecc_columns, ELEMENTSOF(ecc_columns));
        }
        if (r >= 0 && c->format == OUTPUT_TABLE) {
                /* both tables come from the same sample */
                json_object_get(gpus);
                r = cli_emit(c, gpus, &cols);
                if (r >= 0 && (!selecting(c) || path_selected(c, "gpu_metrics.partitions"))) {
                        r = print_partition_table(gpus);
                        if (r < 0)
                                r = cli_fail(c, r, "cannot format the output: %s", strerror(-r));
                }
                json_object_put(gpus);
                columns_free(&cols);
                return r;
        }
        if (r < 0) {
                json_object_put(gpus);
                columns_free(&cols);
                return cli_fail(c, r, "out of memory");
        }
        r = cli_emit(c, gpus, &cols);
        columns_free(&cols);
        return r;
}

int verb_metric(struct cli *c) {
        int r;

        if (c->metric.prometheus)
                return fleet_cli_prometheus(c);
        /* the limiters need two samples: those of a watch, or --throttle's */
        if (c->interval_ns > 0 || c->metric.throttle)
                c->samples = &c->own_samples;
        r = cli_open_run(c, metric_sample);
        c->samples = NULL;
        samples_clear(&c->own_samples);
        return r;
}
