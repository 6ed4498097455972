/* SPDX-License-Identifier: MIT */
/*
 * amdsmi metric: power, temperatures, clocks and busy counters from hwmon, and the gpu_metrics
 * table (activity, energy, throttling and residency counters, PCIe, XGMI, per-partition busy).
 * Never reads the compute partition mode: that can wake the GPU.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "documents.h"
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

static const struct column_def metric_tail_columns[] = {
        { "gfx_clock_mhz", "GFX (MHz)", "clocks.gfx_clock_mhz", 0 },
        { "mem_clock_mhz", "MEM (MHz)", "clocks.mem_clock_mhz", 0 },
        { "gpu_busy_pct", "GPU BUSY (%)", "usage.gpu_busy_pct", 0 },
        { "mem_busy_pct", "MEM BUSY (%)", "usage.mem_busy_pct", 0 },
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

static int metric_sample(struct cli *c) {
        struct columns cols = {};
        json_object *gpus;
        int r;

        /* amdsmid's sampler has the samples of the limiters */
        if (c->metric.throttle && c->sample == 0 && !c->read_daemon)
                prime_samples(c);
        r = cli_collect_document(c, "metric", metric_gpu, &gpus);
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
        if (r >= 0 && c->format == OUTPUT_TABLE) {
                /* both tables come from the same sample */
                json_object_get(gpus);
                r = cli_emit(c, gpus, &cols);
                if (r >= 0) {
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

        /* the limiters need two samples: those of a watch, or --throttle's */
        if (c->interval_ns > 0 || c->metric.throttle)
                c->samples = &c->own_samples;
        r = cli_open_run(c, metric_sample);
        c->samples = NULL;
        samples_clear(&c->own_samples);
        return r;
}
