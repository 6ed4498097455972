/* SPDX-License-Identifier: MIT */
/*
 * Every Prometheus family amdsmi exports, in one table (amdsmid(8) METRICS lists them in this
 * order): name, type, unit, labels, the document it comes from, help, and how its samples are
 * read from that document. Families of later features join this table.
 */
#include <stdio.h>
#include <string.h>

#include "metrics-private.h"

#define L(...) ((const char *const[]){ __VA_ARGS__, NULL })

static json_object *idx(json_object *a, size_t i) {
        return a && json_object_is_type(a, json_type_array) && i < json_object_array_length(a)
                       ? json_object_array_get_idx(a, i)
                       : NULL;
}

static size_t len(json_object *a) {
        return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static const char *bdf_of(json_object *g) {
        return metrics_get_string(g, "bdf");
}

/* ---- amdsmi itself ---------------------------------------------------------------------- */

static void r_up(struct metrics_emit *e, const struct metrics_input *in) {
        metrics_sample_d(e, L(NULL), in->up ? 1 : 0);
}

static void r_scrape_duration(struct metrics_emit *e, const struct metrics_input *in) {
        if (in->scrape_duration_s >= 0)
                metrics_sample_d(e, L(NULL), in->scrape_duration_s);
}

/* ---- identity --------------------------------------------------------------------------- */

static void r_gpu_info(struct metrics_emit *e, const struct metrics_input *in) {
        json_object *doc = in->list ? in->list : in->static_doc;

        FOREACH_METRICS_GPU(e, doc, g) {
                const char *bdf = bdf_of(g);
                json_object *s = in->static_doc ? metrics_gpu_by_bdf(in->static_doc, bdf) : NULL;
                json_object *l = in->list ? metrics_gpu_by_bdf(in->list, bdf) : NULL;
                const char *product = metrics_get_string(l ? l : s, "product");
                const char *uid = metrics_get_string(l ? l : s, "unique_id");
                const char *serial = metrics_get_string(s, "serial_number");
                const char *vbios = metrics_get_string(metrics_get(s, "vbios"), "version");
                const char *driver = metrics_get_string(l ? l : s, "driver");
                const char *hive = metrics_get_string(s, "hive_id");

                if (!bdf)
                        continue;
                if (!in->identity)
                        serial = uid = NULL;
                metrics_sample_d(e,
                                 L("gpu", bdf, "product", product, "serial", serial, "unique_id",
                                   uid, "vbios", vbios, "driver", driver, "hive", hive),
                                 1);
        }
}

/* ---- power ------------------------------------------------------------------------------ */

static void r_power(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->metric, g) {
                json_object *v = metrics_get(metrics_get(g, "power"), "power_w");

                /* the socket's power: hwmon's, else gpu_metrics' (the same sensor) */
                if (!v)
                        v = metrics_get(metrics_get(g, "gpu_metrics"), "socket_power_w");
                metrics_sample(e, L("gpu", bdf_of(g), "sensor", "socket"), v, 1);
        }
}

static void r_energy(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->metric, g)
        metrics_sample(e, L("gpu", bdf_of(g)),
                       metrics_get(metrics_get(g, "gpu_metrics"), "energy_j"), 1);
}

static void r_power_cap(struct metrics_emit *e, const struct metrics_input *in) {
        static const char *const keys[][2] = {
                { "current", "cap_w" },          { "arbitrated", "modelled_cap_w" },
                { "min", "cap_settable_min_w" }, { "max", "cap_max_w" },
                { "default", "cap_default_w" },
        };
        static const char *const sources[] = { "host", "vm", "apml" };

        FOREACH_METRICS_GPU(e, in->power, g) {
                const char *bdf = bdf_of(g);
                json_object *srcs = metrics_get(g, "sources");

                for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
                        metrics_sample(e, L("gpu", bdf, "limit", keys[k][0]),
                                       metrics_get(g, keys[k][1]), 1);
                /* each source's cap; the vm source is the lowest over its VMs */
                for (size_t s = 0; s < sizeof(sources) / sizeof(sources[0]); s++) {
                        json_object *low = NULL;

                        for (size_t i = 0; i < len(srcs); i++) {
                                json_object *x = idx(srcs, i), *cap = metrics_get(x, "cap_w");
                                const char *name = metrics_get_string(x, "source");

                                if (!name || strcmp(name, sources[s]) != 0 || !cap)
                                        continue;
                                if (!low ||
                                    json_object_get_double(cap) < json_object_get_double(low))
                                        low = cap;
                        }
                        metrics_sample(e, L("gpu", bdf, "limit", sources[s]), low, 1);
                }
                metrics_sample(e, L("gpu", bdf, "limit", "ppt1"),
                               metrics_get(metrics_get(g, "ppt1"), "cap_w"), 1);
        }
}

static void r_power_source(struct metrics_emit *e, const struct metrics_input *in) {
        static const char *const sources[] = { "host", "vm", "apml" };

        FOREACH_METRICS_GPU(e, in->power, g) {
                const char *bdf = bdf_of(g), *held = metrics_get_string(g, "cap_held_by");
                json_object *srcs = metrics_get(g, "sources");
                bool held_listed = false;

                for (size_t s = 0; s < sizeof(sources) / sizeof(sources[0]); s++) {
                        bool present = false, binds = false;

                        for (size_t i = 0; i < len(srcs); i++) {
                                json_object *x = idx(srcs, i), *b = metrics_get(x, "binds");
                                const char *name = metrics_get_string(x, "source");

                                if (!name || strcmp(name, sources[s]) != 0)
                                        continue;
                                present = true;
                                binds = binds || (b && json_object_get_boolean(b));
                        }
                        if (!present)
                                continue;
                        if (held && strcmp(held, sources[s]) == 0)
                                held_listed = true;
                        metrics_sample_d(e,
                                         L("gpu", bdf, "source", sources[s], "binds",
                                           binds ? "true" : "false"),
                                         1);
                }
                /* what holds the cap when no source does: default, external, outside-writer */
                if (held && !held_listed)
                        metrics_sample_d(e, L("gpu", bdf, "source", held, "binds", "true"), 1);
        }
}

/* ---- temperatures, clocks, activity ----------------------------------------------------- */

/* "hbm_c" -> "hbm" in @buf; NULL unless @key ends in @suffix. */
static const char *strip(const char *key, const char *suffix, char *buf, size_t size) {
        size_t n = strlen(key), m = strlen(suffix);

        if (n <= m || n - m >= size || strcmp(key + n - m, suffix) != 0)
                return NULL;
        memcpy(buf, key, n - m);
        buf[n - m] = 0;
        return buf;
}

/* A scalar under @labels, or an array's elements with an "index" label each. */
static void scalar_or_array(struct metrics_emit *e, const char *bdf, const char *label,
                            const char *name, json_object *v, double scale) {
        char ix[24];

        if (!v)
                return;
        if (!json_object_is_type(v, json_type_array)) {
                metrics_sample(e, L("gpu", bdf, label, name), v, scale);
                return;
        }
        for (size_t i = 0; i < len(v); i++) {
                snprintf(ix, sizeof(ix), "%zu", i);
                metrics_sample(e, L("gpu", bdf, label, name, "index", ix), idx(v, i), scale);
        }
}

static void r_temperature(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->metric, g) {
                const char *bdf = bdf_of(g);
                json_object *hw = metrics_get(g, "temperatures");
                json_object *gm = metrics_get(metrics_get(g, "gpu_metrics"), "temperatures");
                char name[32];

                /* hwmon's sensors: edge, junction, mem */
                if (hw && json_object_is_type(hw, json_type_object)) {
                        json_object_object_foreach(hw, k, v) {
                                if (strip(k, "_c", name, sizeof(name)))
                                        metrics_sample(e, L("gpu", bdf, "sensor", name), v, 1);
                        }
                }
                /* gpu_metrics' others (its hotspot is hwmon's junction, its edge and mem
                 * hwmon's own) */
                if (gm && json_object_is_type(gm, json_type_object)) {
                        json_object_object_foreach(gm, k2, v2) {
                                if (!strip(k2, "_c", name, sizeof(name)))
                                        continue;
                                if (strcmp(name, "hotspot") == 0 && metrics_get(hw, "junction_c"))
                                        continue;
                                if ((strcmp(name, "edge") == 0 || strcmp(name, "mem") == 0) &&
                                    metrics_get(hw, k2))
                                        continue;
                                if (strcmp(name, "hotspot") == 0)
                                        strcpy(name, "junction");
                                scalar_or_array(e, bdf, "sensor", name, v2, 1);
                        }
                }
        }
}

static void r_clock(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->metric, g) {
                const char *bdf = bdf_of(g);
                json_object *gm = metrics_get(metrics_get(g, "gpu_metrics"), "clocks");
                json_object *hw = metrics_get(g, "clocks");
                char name[32], name2[32];

                if (gm && json_object_is_type(gm, json_type_object)) {
                        /* gfx_clock_mhz[8], soc_clock_mhz[4], vclk0_mhz[4], mem_clock_mhz;
                         * not the avg_* clocks (averages of the same) */
                        json_object_object_foreach(gm, k, v) {
                                const char *n;

                                if (strncmp(k, "avg_", 4) == 0 ||
                                    !strip(k, "_mhz", name, sizeof(name)))
                                        continue;
                                n = strip(name, "_clock", name2, sizeof(name2)) ? name2 : name;
                                if (json_object_is_type(v, json_type_array))
                                        scalar_or_array(e, bdf, "clock", n, v, 1e6);
                                else
                                        metrics_sample(e, L("gpu", bdf, "clock", n, "index", "0"),
                                                       v, 1e6);
                        }
                        continue;
                }
                /* no gpu_metrics: the current DPM levels */
                if (hw && json_object_is_type(hw, json_type_object)) {
                        json_object_object_foreach(hw, k, v) {
                                if (strip(k, "_clock_mhz", name, sizeof(name)))
                                        metrics_sample(e,
                                                       L("gpu", bdf, "clock", name, "index", "0"),
                                                       v, 1e6);
                        }
                }
        }
}

static void r_busy(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->metric, g) {
                const char *bdf = bdf_of(g);
                json_object *u = metrics_get(g, "usage");
                json_object *a = metrics_get(metrics_get(g, "gpu_metrics"), "activity");

                metrics_sample(e, L("gpu", bdf, "engine", "gfx"),
                               metrics_get(u, "gpu_busy_pct") ? metrics_get(u, "gpu_busy_pct")
                                                              : metrics_get(a, "gfx_pct"),
                               0.01);
                metrics_sample(e, L("gpu", bdf, "engine", "memory"),
                               metrics_get(u, "mem_busy_pct") ? metrics_get(u, "mem_busy_pct")
                                                              : metrics_get(a, "umc_pct"),
                               0.01);
                metrics_sample(e, L("gpu", bdf, "engine", "mm"), metrics_get(a, "mm_pct"), 0.01);
                metrics_sample(e, L("gpu", bdf, "engine", "vcn"), metrics_get(a, "vcn_pct"), 0.01);
                metrics_sample(e, L("gpu", bdf, "engine", "jpeg"), metrics_get(a, "jpeg_pct"),
                               0.01);
        }
}

static void r_partition_busy(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->metric, g) {
                const char *bdf = bdf_of(g);
                json_object *parts = metrics_get(metrics_get(g, "gpu_metrics"), "partitions");

                for (size_t p = 0; p < len(parts); p++) {
                        json_object *part = idx(parts, p),
                                    *busy = metrics_get(part, "gfx_busy_pct");
                        json_object *n = metrics_get(part, "partition");
                        double sum = 0;
                        size_t count = 0;
                        char pn[24];

                        /* the mean over the partition's XCCs */
                        for (size_t x = 0; x < len(busy); x++) {
                                json_object *v = idx(busy, x);

                                if (v && (json_object_is_type(v, json_type_int) ||
                                          json_object_is_type(v, json_type_double))) {
                                        sum += json_object_get_double(v);
                                        count++;
                                }
                        }
                        if (!n || !json_object_is_type(n, json_type_int) || count == 0)
                                continue;
                        snprintf(pn, sizeof(pn), "%d", json_object_get_int(n));
                        metrics_sample_d(e, L("gpu", bdf, "partition", pn),
                                         sum / (double) count / 100);
                }
        }
}

static void r_vram_used(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->metric, g)
        metrics_sample(e, L("gpu", bdf_of(g)),
                       metrics_get(metrics_get(g, "memory"), "vram_used_bytes"), 1);
}

static void r_vram_size(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->metric, g)
        metrics_sample(e, L("gpu", bdf_of(g)),
                       metrics_get(metrics_get(g, "memory"), "vram_total_bytes"), 1);
}

static void r_throttle(struct metrics_emit *e, const struct metrics_input *in) {
        static const char *const reasons[] = {
                "power", "socket_thermal", "hbm_thermal", "vr_thermal", "prochot",
        };

        FOREACH_METRICS_GPU(e, in->metric, g) {
                json_object *t = metrics_get(metrics_get(g, "limiters"), "throttle_seconds_total");

                for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
                        metrics_sample(e, L("gpu", bdf_of(g), "reason", reasons[i]),
                                       metrics_get(t, reasons[i]), 1);
        }
}

static void r_pcie_replays(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->metric, g)
        metrics_sample(
                e, L("gpu", bdf_of(g)),
                metrics_get(metrics_get(metrics_get(g, "gpu_metrics"), "pcie"), "replay_count_acc"),
                1);
}

static void xgmi(struct metrics_emit *e, const struct metrics_input *in, const char *key) {
        FOREACH_METRICS_GPU(e, in->metric, g) {
                json_object *a =
                        metrics_get(metrics_get(metrics_get(g, "gpu_metrics"), "xgmi"), key);
                char link[24];

                for (size_t i = 0; i < len(a); i++) {
                        snprintf(link, sizeof(link), "%zu", i);
                        metrics_sample(e, L("gpu", bdf_of(g), "link", link), idx(a, i), 1024);
                }
        }
}

static void r_xgmi_read(struct metrics_emit *e, const struct metrics_input *in) {
        xgmi(e, in, "read_data_kb");
}

static void r_xgmi_write(struct metrics_emit *e, const struct metrics_input *in) {
        xgmi(e, in, "write_data_kb");
}

/* ---- links (the health document's "links": what the verdict looked at) ------------------- */

static json_object *links_of(json_object *g) {
        return metrics_get(g, "links");
}

static void r_xgmi_link_up(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->health, g) {
                json_object *a = metrics_get(links_of(g), "xgmi_link_state");
                char link[24];

                for (size_t i = 0; i < len(a); i++) {
                        const char *st = json_object_get_string(idx(a, i));

                        if (!st || strcmp(st, "n/a") == 0)
                                continue; /* no link in that slot */
                        snprintf(link, sizeof(link), "%zu", i);
                        metrics_sample_d(e, L("gpu", bdf_of(g), "link", link),
                                         strcmp(st, "up") == 0 ? 1 : 0);
                }
        }
}

static void r_xgmi_errors(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->health, g)
        metrics_sample(e, L("gpu", bdf_of(g)), metrics_get(links_of(g), "xgmi_errors_total"), 1);
}

static void r_pcie_width(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->health, g)
        metrics_sample(e, L("gpu", bdf_of(g)), metrics_get(links_of(g), "pcie_width"), 1);
}

static void r_pcie_max_width(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->health, g)
        metrics_sample(e, L("gpu", bdf_of(g)), metrics_get(links_of(g), "pcie_max_width"), 1);
}

static void r_pcie_speed(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->health, g)
        metrics_sample(e, L("gpu", bdf_of(g)), metrics_get(links_of(g), "pcie_speed_gts"), 1e9);
}

/* ---- health ----------------------------------------------------------------------------- */

static void r_ecc(struct metrics_emit *e, const struct metrics_input *in) {
        static const char *const sev[][2] = {
                { "ue", "uncorrectable" },
                { "ce", "correctable" },
                { "de", "deferred" },
        };

        FOREACH_METRICS_GPU(e, in->ras, g) {
                json_object *blocks = metrics_get(metrics_get(g, "ras"), "blocks");

                for (size_t b = 0; b < len(blocks); b++) {
                        json_object *x = idx(blocks, b);
                        const char *block = metrics_get_string(x, "block");

                        if (!block)
                                continue;
                        for (size_t s = 0; s < sizeof(sev) / sizeof(sev[0]); s++)
                                metrics_sample(
                                        e,
                                        L("gpu", bdf_of(g), "block", block, "severity", sev[s][1]),
                                        metrics_get(x, sev[s][0]), 1);
                }
        }
}

static void r_health(struct metrics_emit *e, const struct metrics_input *in) {
        static const char *const states[] = { "ok", "warning", "critical", "unknown" };

        FOREACH_METRICS_GPU(e, in->health, g) {
                const char *state = metrics_get_string(metrics_get(g, "health"), "state");

                if (!state)
                        continue;
                /* a state set: 1 for the GPU's state, 0 for the others */
                for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++)
                        metrics_sample_d(e, L("gpu", bdf_of(g), "state", states[s]),
                                         strcmp(state, states[s]) == 0);
        }
}

/* ---- configuration ---------------------------------------------------------------------- */

static void r_partition_info(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->partition, g) {
                const char *compute = metrics_get_string(g, "compute_mode");
                const char *memory = metrics_get_string(g, "memory_mode");

                if (!compute && !memory)
                        continue;
                metrics_sample_d(e,
                                 L("gpu", bdf_of(g), "compute_mode", compute, "memory_mode", memory,
                                   "memory_pending", metrics_get_string(g, "memory_pending")),
                                 1);
        }
}

static void r_perf_level(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->metric, g) {
                const char *level = metrics_get_string(g, "perf_level");

                if (level)
                        metrics_sample_d(e, L("gpu", bdf_of(g), "level", level), 1);
        }
}

static void r_sriov_vfs(struct metrics_emit *e, const struct metrics_input *in) {
        FOREACH_METRICS_GPU(e, in->sriov, g)
        metrics_sample(e, L("gpu", bdf_of(g)), metrics_get(g, "num_vfs"), 1);
}

static void r_config_in_sync(struct metrics_emit *e, const struct metrics_input *in) {
        json_object *rows = metrics_get(in->apply, "settings");

        for (size_t i = 0; i < len(rows); i++) {
                json_object *row = idx(rows, i), *sync = metrics_get(row, "in_sync");
                const char *action = metrics_get_string(row, "action");
                bool ok;

                if (sync && json_object_is_type(sync, json_type_boolean))
                        ok = json_object_get_boolean(sync);
                else if (action)
                        ok = strcmp(action, "none") == 0;
                else
                        continue;
                if (!metrics_get_string(row, "bdf") || !metrics_get_string(row, "setting"))
                        continue;
                metrics_sample_d(e,
                                 L("gpu", metrics_get_string(row, "bdf"), "key",
                                   metrics_get_string(row, "setting")),
                                 ok);
        }
}

const struct metrics_family metrics_families[] = {
        { "amdsmi_up", METRICS_GAUGE, NULL, "", "",
          "Whether amdsmi could read the GPUs (1) or not (0).", r_up },
        { "amdsmi_scrape_duration_seconds", METRICS_GAUGE, "seconds", "", "",
          "How long amdsmi took to read the GPUs and render these metrics.", r_scrape_duration },
        { "amdsmi_gpu_info", METRICS_INFO, NULL, "product, serial, unique_id, vbios, driver, hive",
          "list, static",
          "Identity of the GPU (serial and unique_id unless [metrics] identity = no).",
          r_gpu_info },
        { "amdsmi_gpu_power_watts", METRICS_GAUGE, "watts", "sensor", "metric power.power_w",
          "Power drawn by the GPU socket.", r_power },
        { "amdsmi_gpu_energy_joules_total", METRICS_COUNTER, "joules", "",
          "metric gpu_metrics.energy_j", "Energy used by the GPU socket (firmware accumulator).",
          r_energy },
        { "amdsmi_gpu_power_cap_watts", METRICS_GAUGE, "watts", "limit", "power",
          "Power caps: current (the device holds), arbitrated (the lowest source), host, vm, "
          "apml, min, max, default, ppt1.",
          r_power_cap },
        { "amdsmi_gpu_power_cap_source_info", METRICS_INFO, NULL, "source, binds",
          "power sources, cap_held_by",
          "Power cap sources present, and whether each binds (holds the cap).", r_power_source },
        { "amdsmi_gpu_temperature_celsius", METRICS_GAUGE, "celsius", "sensor, index",
          "metric temperatures, gpu_metrics.temperatures", "Temperature of a GPU sensor.",
          r_temperature },
        { "amdsmi_gpu_clock_hertz", METRICS_GAUGE, "hertz", "clock, index",
          "metric gpu_metrics.clocks", "Current clock of a GPU clock domain instance.", r_clock },
        { "amdsmi_gpu_busy_ratio", METRICS_GAUGE, "ratio", "engine",
          "metric usage, gpu_metrics.activity", "Share of time an engine of the GPU was busy.",
          r_busy },
        { "amdsmi_partition_gfx_busy_ratio", METRICS_GAUGE, "ratio", "partition",
          "metric gpu_metrics.partitions", "Share of time the compute partition's XCCs were busy.",
          r_partition_busy },
        { "amdsmi_gpu_vram_used_bytes", METRICS_GAUGE, "bytes", "", "metric memory", "VRAM in use.",
          r_vram_used },
        { "amdsmi_gpu_vram_size_bytes", METRICS_GAUGE, "bytes", "", "metric memory", "VRAM size.",
          r_vram_size },
        { "amdsmi_gpu_throttle_seconds_total", METRICS_COUNTER, "seconds", "reason",
          "metric limiters.throttle_seconds_total",
          "Time a limiter held the GPU below its clocks, since amdsmid began sampling it.",
          r_throttle },
        { "amdsmi_gpu_pcie_replays_total", METRICS_COUNTER, NULL, "",
          "metric gpu_metrics.pcie.replay_count_acc", "PCIe replays (firmware accumulator).",
          r_pcie_replays },
        { "amdsmi_gpu_xgmi_read_bytes_total", METRICS_COUNTER, "bytes", "link",
          "metric gpu_metrics.xgmi.read_data_kb", "Data read over an XGMI link.", r_xgmi_read },
        { "amdsmi_gpu_xgmi_write_bytes_total", METRICS_COUNTER, "bytes", "link",
          "metric gpu_metrics.xgmi.write_data_kb", "Data written over an XGMI link.",
          r_xgmi_write },
        { "amdsmi_gpu_xgmi_link_up", METRICS_GAUGE, NULL, "link", "health links.xgmi_link_state",
          "Whether an XGMI link is up (1) or down (0); slots without a link are left out.",
          r_xgmi_link_up },
        { "amdsmi_gpu_xgmi_errors_total", METRICS_COUNTER, NULL, "",
          "health links.xgmi_errors_total",
          "XGMI errors amdsmid counted from xgmi_error (which clears when read) since it "
          "started.",
          r_xgmi_errors },
        { "amdsmi_gpu_pcie_link_width", METRICS_GAUGE, NULL, "", "health links.pcie_width",
          "PCIe lanes the link runs at.", r_pcie_width },
        { "amdsmi_gpu_pcie_link_max_width", METRICS_GAUGE, NULL, "", "health links.pcie_max_width",
          "PCIe lanes the link can run at.", r_pcie_max_width },
        { "amdsmi_gpu_pcie_link_speed_transfers_per_second", METRICS_GAUGE, NULL, "",
          "health links.pcie_speed_gts",
          "PCIe link speed now (power management lowers it on an idle link).", r_pcie_speed },
        { "amdsmi_gpu_ecc_errors_total", METRICS_COUNTER, NULL, "block, severity", "ras ras.blocks",
          "ECC errors counted by the driver per RAS block.", r_ecc },
        { "amdsmi_gpu_health", METRICS_GAUGE, NULL, "state", "health health.state",
          "Health verdict: 1 for the GPU's state (ok, warning, critical, unknown), 0 for the "
          "others.",
          r_health },
        { "amdsmi_gpu_partition_info", METRICS_INFO, NULL,
          "compute_mode, memory_mode, memory_pending", "partition",
          "Partition modes of the GPU (memory_pending: the mode a driver reload applies).",
          r_partition_info },
        { "amdsmi_gpu_performance_level_info", METRICS_INFO, NULL, "level", "metric perf_level",
          "Performance level of the GPU (auto, manual, perf_determinism, ...).", r_perf_level },
        { "amdsmi_gpu_sriov_vfs", METRICS_GAUGE, NULL, "", "sriov num_vfs",
          "SR-IOV virtual functions enabled.", r_sriov_vfs },
        { "amdsmi_gpu_config_in_sync", METRICS_GAUGE, NULL, "key", "apply settings",
          "Whether a key of the active amdsmid.conf profile matches the GPU (1) or not (0).",
          r_config_in_sync },
};

const size_t metrics_n_families = sizeof(metrics_families) / sizeof(metrics_families[0]);
