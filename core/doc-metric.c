/* SPDX-License-Identifier: MIT */
/* The metric document: hwmon, gpu_metrics, partitions, limiters (documents.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "documents.h"
#include "perf-ops.h"

/* Library units → output units, as powers of ten. */
#define MICRO 6 /* µW → W, µJ → J, Hz → MHz */
#define MILLI 3 /* m°C → °C, MT/s → GT/s */

/* A sensor in output units, or null; a failure other than "not provided" is reported. */
static json_object *sensor(const struct doc_query *q, int gpu, const char *field, const struct amdsmi_sensor *s,
                           unsigned pow10) {
        if (s->error == 0)
                return json_scaled_i64(s->value, pow10);
        if (s->error != -ENODATA)
                report_field_error(q->report, gpu, field, s->error);
        return NULL;
}

static json_object *metric_power(const struct doc_query *q, int idx, const struct amdsmi_hwmon *h) {
        json_object *o = json_object_new_object(), *ppt1;

        if (!o)
                return NULL;
        json_set(o, "power_w", sensor(q, idx, "power.power_w", &h->power_uw, MICRO));
        json_set(o, "cap_w", sensor(q, idx, "power.cap_w", &h->power_cap_uw, MICRO));
        json_set(o, "cap_min_w", sensor(q, idx, "power.cap_min_w", &h->power_cap_min_uw, MICRO));
        json_set(o, "cap_max_w", sensor(q, idx, "power.cap_max_w", &h->power_cap_max_uw, MICRO));
        json_set(o, "cap_default_w",
                 sensor(q, idx, "power.cap_default_w", &h->power_cap_default_uw, MICRO));
        json_set(o, "cap_writable",
                 h->present && h->power_cap_uw.error != -ENODATA
                         ? json_object_new_boolean(h->power_cap_writable)
                         : NULL);

        if (h->ppt1_cap_uw.error == -ENODATA && h->ppt1_cap_min_uw.error == -ENODATA &&
            h->ppt1_cap_max_uw.error == -ENODATA && h->ppt1_cap_default_uw.error == -ENODATA) {
                json_set(o, "ppt1", NULL);
                return o;
        }
        ppt1 = json_object_new_object();
        if (ppt1) {
                json_set(ppt1, "cap_w", sensor(q, idx, "power.ppt1.cap_w", &h->ppt1_cap_uw, MICRO));
                json_set(ppt1, "cap_min_w",
                         sensor(q, idx, "power.ppt1.cap_min_w", &h->ppt1_cap_min_uw, MICRO));
                json_set(ppt1, "cap_max_w",
                         sensor(q, idx, "power.ppt1.cap_max_w", &h->ppt1_cap_max_uw, MICRO));
                json_set(
                        ppt1, "cap_default_w",
                        sensor(q, idx, "power.ppt1.cap_default_w", &h->ppt1_cap_default_uw, MICRO));
        }
        json_set(o, "ppt1", ppt1);
        return o;
}

/* The JSON key part of a temperature channel: its sanitised label, else "temp<N>". */
static void temp_key(const struct amdsmi_temp_channel *t, json_object *taken, char *buf,
                     size_t len) {
        char key[48], probe[64];

        sanitize_key(t->label, key, sizeof(key));
        snprintf(probe, sizeof(probe), "%s_c", key);
        if (!key[0] || json_object_object_get_ex(taken, probe, NULL))
                snprintf(key, sizeof(key), "temp%u", t->channel);
        snprintf(buf, len, "%s", key);
}

static void metric_temperatures(const struct doc_query *q, int idx, const struct amdsmi_hwmon *h,
                                json_object *gpu) {
        json_object *temps = json_object_new_object(), *limits = json_object_new_object();
        unsigned n = h->n_temps < AMDSMI_MAX_TEMPS ? h->n_temps : AMDSMI_MAX_TEMPS;

        for (unsigned i = 0; temps && limits && i < n; i++) {
                const struct amdsmi_temp_channel *t = &h->temps[i];
                char key[48], name[64], field[128];
                json_object *l;

                temp_key(t, temps, key, sizeof(key));
                snprintf(name, sizeof(name), "%s_c", key);
                snprintf(field, sizeof(field), "temperatures.%s", name);
                json_set(temps, name, sensor(q, idx, field, &t->input, MILLI));

                l = json_object_new_object();
                if (!l)
                        continue;
                snprintf(field, sizeof(field), "temperature_limits.%s.crit_c", key);
                json_set(l, "crit_c", sensor(q, idx, field, &t->crit, MILLI));
                snprintf(field, sizeof(field), "temperature_limits.%s.crit_hyst_c", key);
                json_set(l, "crit_hyst_c", sensor(q, idx, field, &t->crit_hyst, MILLI));
                snprintf(field, sizeof(field), "temperature_limits.%s.emergency_c", key);
                json_set(l, "emergency_c", sensor(q, idx, field, &t->emergency, MILLI));
                json_set(limits, key, l);
        }
        json_set(gpu, "temperatures", temps);
        json_set(gpu, "temperature_limits", limits);
}

static void metric_hwmon(const struct doc_query *q, int idx, struct amdsmi_gpu *gpu, json_object *o) {
        struct amdsmi_hwmon h;
        json_object *v;
        int r;

        r = amdsmi_gpu_read_hwmon(gpu, &h);
        if (r < 0) {
                if (r != -ENODATA)
                        report_field_error(q->report, idx, "hwmon", r);
                /* every sensor "not provided": the shape stays, the values are null */
                struct amdsmi_sensor *const all[] = {
                        &h.power_uw,
                        &h.power_cap_uw,
                        &h.power_cap_min_uw,
                        &h.power_cap_max_uw,
                        &h.power_cap_default_uw,
                        &h.ppt1_cap_uw,
                        &h.ppt1_cap_min_uw,
                        &h.ppt1_cap_max_uw,
                        &h.ppt1_cap_default_uw,
                        &h.sclk_hz,
                        &h.mclk_hz,
                        &h.vddboard_mv,
                        &h.gpu_busy_percent,
                        &h.mem_busy_percent,
                };

                memset(&h, 0, sizeof(h));
                for (size_t i = 0; i < ELEMENTSOF(all); i++)
                        all[i]->error = -ENODATA;
        }

        json_set(o, "power", metric_power(q, idx, &h));
        v = json_object_new_object();
        if (v)
                json_set(v, "board_mv", sensor(q, idx, "voltages.board_mv", &h.vddboard_mv, 0));
        json_set(o, "voltages", v);
        metric_temperatures(q, idx, &h, o);
        v = json_object_new_object();
        if (v) {
                json_set(v, "gfx_clock_mhz",
                         sensor(q, idx, "clocks.gfx_clock_mhz", &h.sclk_hz, MICRO));
                json_set(v, "mem_clock_mhz",
                         sensor(q, idx, "clocks.mem_clock_mhz", &h.mclk_hz, MICRO));
        }
        json_set(o, "clocks", v);
        v = json_object_new_object();
        if (v) {
                json_set(v, "gpu_busy_pct",
                         sensor(q, idx, "usage.gpu_busy_pct", &h.gpu_busy_percent, 0));
                json_set(v, "mem_busy_pct",
                         sensor(q, idx, "usage.mem_busy_pct", &h.mem_busy_percent, 0));
        }
        json_set(o, "usage", v);
}

static json_object *metric_memory(const struct doc_query *q, int idx, struct amdsmi_gpu *gpu) {
        struct amdsmi_memory_info info;
        json_object *o;
        int r;

        r = amdsmi_gpu_read_memory_info(gpu, &info);
        if (r < 0) {
                if (r != -ENODATA)
                        report_field_error(q->report, idx, "memory", r);
                info = (struct amdsmi_memory_info){
                        .vram_total = AMDSMI_NA,
                        .vram_used = AMDSMI_NA,
                        .vis_vram_total = AMDSMI_NA,
                        .gtt_total = AMDSMI_NA,
                };
        }
        o = json_object_new_object();
        if (!o)
                return NULL;
        json_set(o, "vram_used_bytes", json_u64_or_null(info.vram_used));
        json_set(o, "vram_total_bytes", json_u64_or_null(info.vram_total));
        return o;
}

/*
 * An array of counters in output units: trailing unavailable slots dropped, inner ones null;
 * null if no slot has a value.
 */
static json_object *u64_array(const uint64_t *v, size_t n, unsigned pow10) {
        json_object *a;

        while (n > 0 && v[n - 1] == AMDSMI_NA)
                n--;
        if (n == 0)
                return NULL;
        a = json_object_new_array();
        for (size_t i = 0; a && i < n; i++)
                json_object_array_add(a, json_scaled_u64(v[i], pow10));
        return a;
}

#define U64_ARRAY(field, pow10) u64_array((field), ELEMENTSOF(field), (pow10))

/* The number of slots up to the last one with a value (0: none has one). */
static size_t used_slots(const uint64_t *v, size_t n) {
        while (n > 0 && v[n - 1] == AMDSMI_NA)
                n--;
        return n;
}

/* Exactly @n counters (unavailable ones null); null if no slot has a value. */
static json_object *u64_array_n(const uint64_t *v, size_t n) {
        json_object *a;

        if (used_slots(v, n) == 0)
                return NULL;
        a = json_object_new_array();
        for (size_t i = 0; a && i < n; i++)
                json_object_array_add(a, json_u64_or_null(v[i]));
        return a;
}

static bool all_na(const uint64_t *const *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (*v[i] != AMDSMI_NA)
                        return false;
        return true;
}

static json_object *metrics_pcie(const struct amdsmi_gpu_metrics *m) {
        const uint64_t *const fields[] = {
                &m->pcie_link_width,
                &m->pcie_link_speed_mts,
                &m->pcie_bandwidth_acc,
                &m->pcie_bandwidth_inst,
                &m->pcie_l0_to_recov_count_acc,
                &m->pcie_replay_count_acc,
                &m->pcie_replay_rover_count_acc,
                &m->pcie_nak_sent_count_acc,
                &m->pcie_nak_rcvd_count_acc,
                &m->pcie_lc_perf_other_end_recovery,
        };
        json_object *o;

        if (all_na(fields, ELEMENTSOF(fields)))
                return NULL;
        o = json_object_new_object();
        if (!o)
                return NULL;
        json_set(o, "width", json_u64_or_null(m->pcie_link_width));
        json_set(o, "speed_gts", json_scaled_u64(m->pcie_link_speed_mts, MILLI));
        json_set(o, "bandwidth_acc_gb_per_s", json_u64_or_null(m->pcie_bandwidth_acc));
        json_set(o, "bandwidth_gb_per_s_acc", json_u64_or_null(m->pcie_bandwidth_acc));
        json_set(o, "bandwidth_inst_gb_per_s", json_u64_or_null(m->pcie_bandwidth_inst));
        json_set(o, "l0_to_recov_count_acc", json_u64_or_null(m->pcie_l0_to_recov_count_acc));
        json_set(o, "replay_count_acc", json_u64_or_null(m->pcie_replay_count_acc));
        json_set(o, "replay_rover_count_acc", json_u64_or_null(m->pcie_replay_rover_count_acc));
        json_set(o, "nak_sent_count_acc", json_u64_or_null(m->pcie_nak_sent_count_acc));
        json_set(o, "nak_rcvd_count_acc", json_u64_or_null(m->pcie_nak_rcvd_count_acc));
        json_set(o, "lc_perf_other_end_recovery",
                 json_u64_or_null(m->pcie_lc_perf_other_end_recovery));
        return o;
}

/*
 * Every per-link array has one length, that of the links any of them reports (trailing links
 * without a value dropped), and link_state decodes link_status (decode.h).
 */
static json_object *metrics_xgmi(const struct amdsmi_gpu_metrics *m) {
        const size_t used[] = {
                used_slots(m->xgmi_read_data_kb, ELEMENTSOF(m->xgmi_read_data_kb)),
                used_slots(m->xgmi_write_data_kb, ELEMENTSOF(m->xgmi_write_data_kb)),
                used_slots(m->xgmi_link_status, ELEMENTSOF(m->xgmi_link_status)),
        };
        json_object *o, *rd, *wr, *st, *state = NULL;
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(used); i++)
                n = used[i] > n ? used[i] : n;
        rd = u64_array_n(m->xgmi_read_data_kb, n);
        wr = u64_array_n(m->xgmi_write_data_kb, n);
        st = u64_array_n(m->xgmi_link_status, n);
        if (m->xgmi_link_width == AMDSMI_NA && m->xgmi_link_speed_gbps == AMDSMI_NA && !rd && !wr &&
            !st)
                return NULL;
        if (st) {
                state = json_object_new_array();
                for (size_t i = 0; state && i < n; i++) {
                        const char *w = xgmi_link_status_to_string(m->xgmi_link_status[i]);

                        json_object_array_add(state, w ? json_object_new_string(w) : NULL);
                }
        }
        o = json_object_new_object();
        if (!o) {
                json_object_put(rd);
                json_object_put(wr);
                json_object_put(st);
                json_object_put(state);
                return NULL;
        }
        json_set(o, "width", json_u64_or_null(m->xgmi_link_width));
        json_set(o, "speed_gbps", json_u64_or_null(m->xgmi_link_speed_gbps));
        json_set(o, "links", n ? json_object_new_uint64(n) : NULL);
        json_set(o, "read_data_kb", rd);
        json_set(o, "write_data_kb", wr);
        json_set(o, "link_status", st);
        json_set(o, "link_state", state);
        return o;
}

/* One partition's busy values and accumulators (gpu_metrics.partitions[]). */
static json_object *xcp_entry(size_t partition, const struct amdsmi_xcp_metrics *x) {
        json_object *e = json_object_new_object();

        if (!e)
                return NULL;
        json_set(e, "partition", json_object_new_uint64(partition));
        json_set(e, "gfx_busy_pct", U64_ARRAY(x->gfx_busy_inst_pct, 0));
        json_set(e, "jpeg_busy_pct", U64_ARRAY(x->jpeg_busy_pct, 0));
        json_set(e, "vcn_busy_pct", U64_ARRAY(x->vcn_busy_pct, 0));
        json_set(e, "gfx_busy_acc", U64_ARRAY(x->gfx_busy_acc, 0));
        json_set(e, "gfx_below_host_limit_acc", U64_ARRAY(x->gfx_below_host_limit_acc, 0));
        json_set(e, "gfx_below_host_limit_ppt_acc", U64_ARRAY(x->gfx_below_host_limit_ppt_acc, 0));
        json_set(e, "gfx_below_host_limit_thm_acc", U64_ARRAY(x->gfx_below_host_limit_thm_acc, 0));
        json_set(e, "gfx_low_utilization_acc", U64_ARRAY(x->gfx_low_utilization_acc, 0));
        json_set(e, "gfx_below_host_limit_total_acc",
                 U64_ARRAY(x->gfx_below_host_limit_total_acc, 0));
        return e;
}

static json_object *metrics_partitions(const struct doc_query *q, size_t index,
                                       const struct amdsmi_gpu_metrics *m) {
        json_object *a;
        size_t n;

        if (m->num_partition == AMDSMI_NA)
                return NULL;
        n = m->num_partition < AMDSMI_METRICS_MAX_XCP ? m->num_partition : AMDSMI_METRICS_MAX_XCP;
        a = json_object_new_array();
        for (size_t i = 0; a && i < n; i++) {
                const struct amdsmi_xcp_metrics *x = &m->xcp[i];
                json_object *e;

                if (!select_match_partition(&q->set->matches[index], (unsigned) i))
                        continue;
                e = xcp_entry(i, x);
                if (!e)
                        break;
                json_object_array_add(a, e);
        }
        return a;
}

/* 1.9: each selected partition's xcp_metrics file (the table itself has no partitions). */
static json_object *partitions_from_files(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        size_t n = amdsmi_gpu_get_partition_count(gpu);
        json_object *a = NULL;

        for (size_t i = 0; i < n; i++) {
                struct amdsmi_partition *part = amdsmi_gpu_get_partition(gpu, i);
                struct amdsmi_partition_metrics pm = { .size = sizeof(pm) };
                char field[64], why[160];
                json_object *e;
                int r;

                if (!part || !select_match_partition(&q->set->matches[index], (unsigned) i))
                        continue;
                r = amdsmi_partition_read_metrics(part, &pm, why, sizeof(why));
                if (r == -ENODATA)
                        continue;
                if (r < 0) {
                        snprintf(field, sizeof(field), "partitions[%zu].xcp_metrics", i);
                        report_field_error_msg(q->report, (int) index, field, r, why[0] ? why : NULL);
                        continue;
                }
                if (!a)
                        a = json_object_new_array();
                e = xcp_entry(i, &pm.xcp);
                if (!a || !e) {
                        json_object_put(e);
                        break;
                }
                json_set(e, "source", json_object_new_string("xcp_metrics"));
                json_set(e, "xcp_metrics_revision", json_object_new_uint64(pm.content_revision));
                json_set(e, "gfx_clock_mhz", U64_ARRAY(pm.gfxclk_hz, MICRO));
                json_set(e, "soc_clock_mhz", U64_ARRAY(pm.socclk_hz, MICRO));
                json_set(e, "vclk0_mhz", U64_ARRAY(pm.vclk0_hz, MICRO));
                json_set(e, "dclk0_mhz", U64_ARRAY(pm.dclk0_hz, MICRO));
                json_set(e, "mem_clock_mhz", json_scaled_u64(pm.uclk_hz, MICRO));
                json_set(e, "accumulation_counter", json_u64_or_null(pm.accumulation_counter));
                json_set(e, "firmware_timestamp_ns", json_u64_or_null(pm.firmware_timestamp_ns));
                json_object_array_add(a, e);
        }
        return a;
}

/* How an attribute-encoded table was read: records, and the ones skipped or clipped. */
static json_object *metrics_attributes(const struct amdsmi_gpu_metrics_ext *m) {
        static const char *const types[] = { "U8", "S8", "U16", "S16", "U32", "S32", "U64", "S64" };
        json_object *o, *u;

        if (m->base.content_revision < 9)
                return NULL;
        o = json_object_new_object();
        u = json_object_new_array();
        if (!o || !u) {
                json_object_put(o);
                json_object_put(u);
                return NULL;
        }
        for (uint32_t i = 0; i < m->unknown_attrs && i < AMDSMI_METRICS_MAX_UNKNOWN; i++) {
                json_object *e = json_object_new_object();

                if (!e)
                        break;
                json_set(e, "id", json_object_new_uint64(m->unknown[i].id));
                json_set(e, "type", json_object_new_string(m->unknown[i].type < 8
                                                                   ? types[m->unknown[i].type]
                                                                   : "?"));
                json_set(e, "unit", json_object_new_uint64(m->unknown[i].unit));
                json_set(e, "instances", json_object_new_uint64(m->unknown[i].instances));
                json_object_array_add(u, e);
        }
        json_set(o, "count", json_object_new_uint64(m->attr_count));
        json_set(o, "unknown_count", json_object_new_uint64(m->unknown_attrs));
        json_set(o, "unknown", u);
        json_set(o, "clipped_count", json_object_new_uint64(m->clipped_attrs));
        return o;
}

/* The sample of @gpu this document shows: the pair's current one (read now, or younger than
 * q->samples_max_age_usec), or one read now into @local. NULL when there is none. */
static const struct amdsmi_gpu_metrics_ext *take_sample(const struct doc_query *q, size_t index,
                                                         struct amdsmi_gpu *gpu,
                                                         struct amdsmi_gpu_metrics_ext *local,
                                                         struct sample_pair **ret_pair) {
        struct sample_pair *p = NULL;
        char why[160] = "";
        int r;

        *ret_pair = NULL;
        if (q->samples) {
                p = samples_get(q->samples, amdsmi_gpu_get_bdf(gpu));
                if (!p)
                        return NULL;
                r = sample_pair_update(p, gpu, q->samples_max_age_usec);
                snprintf(why, sizeof(why), "%s", p->reason);
        } else {
                local->size = sizeof(*local);
                r = amdsmi_gpu_read_metrics_ext(gpu, local, why, sizeof(why));
        }
        if (r < 0) {
                if (r != -ENODATA)
                        report_field_error_msg(q->report, (int) index, "gpu_metrics", r, why[0] ? why : NULL);
                return NULL;
        }
        *ret_pair = p;
        return p ? &p->cur.m : local;
}

static json_object *metric_gpu_metrics(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu,
                                       const struct amdsmi_gpu_metrics_ext *mx) {
        const struct amdsmi_gpu_metrics *mp = &mx->base;
        json_object *o, *v;

        o = json_object_new_object();
        if (!o)
                return NULL;
        json_set(o, "format_revision", json_object_new_uint64(mp->format_revision));
        json_set(o, "content_revision", json_object_new_uint64(mp->content_revision));

        v = json_object_new_object();
        if (v) {
                json_set(v, "edge_c", json_scaled_u64(mp->temp_edge_mc, MILLI));
                json_set(v, "hotspot_c", json_scaled_u64(mp->temp_hotspot_mc, MILLI));
                json_set(v, "mem_c", json_scaled_u64(mp->temp_mem_mc, MILLI));
                json_set(v, "vrgfx_c", json_scaled_u64(mp->temp_vrgfx_mc, MILLI));
                json_set(v, "vrsoc_c", json_scaled_u64(mp->temp_vrsoc_mc, MILLI));
                json_set(v, "vrmem_c", json_scaled_u64(mp->temp_vrmem_mc, MILLI));
                /* the four HBM stacks of 1.3, or each stack of newer kernels (1.9) */
                json_set(v, "hbm_c", mp->temp_hbm_mc[0] != AMDSMI_NA || mp->temp_hbm_mc[1] != AMDSMI_NA
                                             ? U64_ARRAY(mp->temp_hbm_mc, MILLI)
                                             : U64_ARRAY(mx->temp_hbm_stack_mc, MILLI));
                json_set(v, "aid_c", U64_ARRAY(mx->temp_aid_mc, MILLI));
                json_set(v, "xcd_c", U64_ARRAY(mx->temp_xcd_mc, MILLI));
                json_set(v, "mid_c", U64_ARRAY(mx->temp_mid_mc, MILLI));
        }
        json_set(o, "temperatures", v);

        json_set(o, "socket_power_w", json_scaled_u64(mp->socket_power_uw, MICRO));
        json_set(o, "energy_j", json_scaled_u64(mp->energy_uj, MICRO));
        json_set(o, "energy_accumulator", json_u64_or_null(mp->energy_accumulator));

        v = json_object_new_object();
        if (v) {
                json_set(v, "gfx_pct", json_u64_or_null(mp->gfx_activity_pct));
                json_set(v, "umc_pct", json_u64_or_null(mp->umc_activity_pct));
                json_set(v, "mm_pct", json_u64_or_null(mp->mm_activity_pct));
                /* per engine: 1.4 and 1.5 in the table, 1.9 for the whole GPU */
                json_set(v, "vcn_pct", mp->content_revision >= 9 ? U64_ARRAY(mx->vcn_busy_pct, 0)
                                                               : U64_ARRAY(mp->vcn_activity_pct, 0));
                json_set(v, "jpeg_pct", mp->content_revision >= 9 ? U64_ARRAY(mx->jpeg_busy_pct, 0)
                                                                : U64_ARRAY(mp->jpeg_activity_pct, 0));
                json_set(v, "gfx_acc", json_u64_or_null(mp->gfx_activity_acc));
                json_set(v, "mem_acc", json_u64_or_null(mp->mem_activity_acc));
                json_set(v, "xcc_gfx_busy_pct", U64_ARRAY(mx->xcc_gfx_busy_inst_pct, 0));
                json_set(v, "xcc_gfx_busy_acc", U64_ARRAY(mx->xcc_gfx_busy_acc, 0));
        }
        json_set(o, "activity", v);
        json_set(o, "mem_max_bandwidth_bytes_per_s", json_u64_or_null(mp->mem_max_bandwidth_bps));
        json_set(o, "system_clock_counter_ns", json_u64_or_null(mp->system_clock_counter_ns));
        json_set(o, "firmware_timestamp_ns", json_u64_or_null(mp->firmware_timestamp_ns));

        v = json_object_new_object();
        if (v) {
                json_set(v, "status", json_u64_or_null(mp->throttle_status));
                json_set(v, "indep_status", json_u64_or_null(mp->indep_throttle_status));
                json_set(v, "gfxclk_lock_status", json_u64_or_null(mp->gfxclk_lock_status));
                json_set(v, "accumulation_counter", json_u64_or_null(mp->accumulation_counter));
                json_set(v, "prochot_residency_acc", json_u64_or_null(mp->prochot_residency_acc));
                json_set(v, "ppt_residency_acc", json_u64_or_null(mp->ppt_residency_acc));
                json_set(v, "socket_thm_residency_acc",
                         json_u64_or_null(mp->socket_thm_residency_acc));
                json_set(v, "vr_thm_residency_acc", json_u64_or_null(mp->vr_thm_residency_acc));
                json_set(v, "hbm_thm_residency_acc", json_u64_or_null(mp->hbm_thm_residency_acc));
                json_set(v, "accumulation_counter_bits",
                         mx->accumulation_counter_bits
                                 ? json_object_new_uint64(mx->accumulation_counter_bits)
                                 : NULL);
                json_set(v, "xcc_below_host_limit_ppt_acc",
                         U64_ARRAY(mx->xcc_below_host_limit_ppt_acc, 0));
                json_set(v, "xcc_below_host_limit_thm_acc",
                         U64_ARRAY(mx->xcc_below_host_limit_thm_acc, 0));
                json_set(v, "xcc_below_host_limit_total_acc",
                         U64_ARRAY(mx->xcc_below_host_limit_total_acc, 0));
                json_set(v, "xcc_low_utilization_acc", U64_ARRAY(mx->xcc_low_utilization_acc, 0));
        }
        json_set(o, "throttle", v);
        v = json_object_new_object();
        if (v) {
                json_set(v, "gfx_clock_mhz", U64_ARRAY(mp->gfxclk_hz, MICRO));
                json_set(v, "soc_clock_mhz", U64_ARRAY(mp->socclk_hz, MICRO));
                json_set(v, "vclk0_mhz", U64_ARRAY(mp->vclk0_hz, MICRO));
                json_set(v, "dclk0_mhz", U64_ARRAY(mp->dclk0_hz, MICRO));
                json_set(v, "mem_clock_mhz", json_scaled_u64(mp->uclk_hz, MICRO));
                json_set(v, "avg_gfx_clock_mhz", json_scaled_u64(mp->avg_gfxclk_hz, MICRO));
                json_set(v, "avg_soc_clock_mhz", json_scaled_u64(mp->avg_socclk_hz, MICRO));
                json_set(v, "avg_mem_clock_mhz", json_scaled_u64(mp->avg_uclk_hz, MICRO));
        }
        json_set(o, "clocks", v);

        json_set(o, "fan_speed_rpm", json_u64_or_null(mp->fan_speed_rpm));
        v = json_object_new_object();
        if (v) {
                json_set(v, "soc_mv", json_u64_or_null(mp->voltage_soc_mv));
                json_set(v, "gfx_mv", json_u64_or_null(mp->voltage_gfx_mv));
                json_set(v, "mem_mv", json_u64_or_null(mp->voltage_mem_mv));
        }
        json_set(o, "voltages", v);

        json_set(o, "pcie", metrics_pcie(mp));
        json_set(o, "xgmi", metrics_xgmi(mp));
        json_set(o, "partitions", mp->content_revision >= 9 ? partitions_from_files(q, index, gpu)
                                                          : metrics_partitions(q, index, mp));
        json_set(o, "attributes", metrics_attributes(mx));
        return o;
}

/* Whether @index is the first gim PF of the selection: the note about gim is said once. */
static bool first_gim(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        if (amdsmi_gpu_get_driver(gpu) != AMDSMI_DRIVER_GIM)
                return false;
        FOREACH_GPU_IN_SET(q->set, i, other) {
                if (i < index && amdsmi_gpu_get_driver(other) == AMDSMI_DRIVER_GIM)
                        return false;
        }
        return true;
}

json_object *metric_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        json_object *o = json_object_new_object();
        int idx = (int) index;

        if (!o)
                return NULL;
        if (first_gim(q, index, gpu))
                report_note(q->report,
                            "gim host: gim exposes no hwmon and no gpu_metrics to the host, so "
                            "power, temperatures, clocks and activity are N/A; it exposes the "
                            "partition modes in sysfs and the rest only through its SMI ioctl "
                            "(/dev/gim-smi0), which amdsmi does not use");
        json_set(o, "gpu", json_object_new_uint64(index));
        json_set(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_set(o, "product", json_object_new_string(amdsmi_gpu_get_product(gpu)));
        struct amdsmi_gpu_metrics_ext *local = NULL;
        const struct amdsmi_gpu_metrics_ext *mx;
        struct sample_pair *pair = NULL;
        struct power_limit limit = {};
        json_object *lim;

        metric_hwmon(q, idx, gpu, o);
        /* the DPM performance level (control/perf-ops.h); null where the GPU has none */
        json_set(o, "perf_level", perf_level_json(gpu));
        json_set(o, "memory", metric_memory(q, idx, gpu));
        if (!q->samples)
                local = malloc(sizeof(*local));
        mx = q->samples || local ? take_sample(q, index, gpu, local, &pair) : NULL;
        json_set(o, "gpu_metrics", mx ? metric_gpu_metrics(q, index, gpu, mx) : NULL);
        free(local);

        /* the power limiter's source only when there is a share to explain */
        if (pair && pair->prev.valid && q->power_limit &&
            q->power_limit(q->power_limit_userdata, gpu, &limit) < 0)
                limit = (struct power_limit){};
        lim = limiters_json(pair, &limit);
        json_set(o, "limiters", lim);
        return o;
}

/* Temperature columns: the fixed CSV ones, then every other label seen, in order seen. */

json_object *metric_document(const struct doc_query *q) {
        json_object *gpus;

        report_begin_sample(q->report);
        if (doc_collect(q, metric_gpu, &gpus) != 0)
                return NULL;
        return report_document(q->report, gpus);
}
