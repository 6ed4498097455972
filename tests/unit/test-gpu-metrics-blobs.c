/* SPDX-License-Identifier: MIT */
/*
 * Parses the fixture generator's standalone gpu_metrics blobs ($METRICS_BLOBS_DIR/
 * gpu_metrics_v1_N.bin) and compares every output field with the raw values of the JSON beside
 * each blob (gpu_metrics_v1_N.json, "fields": spec field name -> value, list, or null for
 * all-ones), converted here to the library's units. The comparison goes both ways: every JSON
 * field must be known here, and every output field no JSON field names must be AMDSMI_NA.
 *
 * The attribute-encoded blobs (gpu_metrics_v1_9-*.bin, xcp_metrics_v1_1-*.bin, JSON "fields"
 * keyed by the spec's attribute names) go the same way through amdsmi_gpu_metrics_parse_ext()
 * and amdsmi_partition_metrics_parse(); the old amdsmi_gpu_metrics_parse() must give the same
 * @c base for a 1.9 table, so old binaries keep working.
 */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#define ENERGY_UJ 0 /* factor value that selects the 2^-16 J -> uJ conversion */

struct mapping {
        const char *name;       /* the spec's field name, as in the JSON */
        size_t offset;          /* of the first uint64_t in the output struct */
        size_t capacity;        /* elements there */
        uint64_t factor;        /* raw -> library unit, or ENERGY_UJ */
};

#define MEMBER_N(type, member) (sizeof(((type *) NULL)->member) / sizeof(uint64_t))
#define G(name, member, factor)                                                 \
        { name, offsetof(struct amdsmi_gpu_metrics, member),                    \
          MEMBER_N(struct amdsmi_gpu_metrics, member), factor }
#define XCP(name, member)                                                       \
        { name, offsetof(struct amdsmi_xcp_metrics, member),                    \
          MEMBER_N(struct amdsmi_xcp_metrics, member), 1 }

static const struct mapping gpu_fields[] = {
        G("temperature_edge", temp_edge_mc, 1000),
        G("temperature_hotspot", temp_hotspot_mc, 1000),
        G("temperature_mem", temp_mem_mc, 1000),
        G("temperature_vrgfx", temp_vrgfx_mc, 1000),
        G("temperature_vrsoc", temp_vrsoc_mc, 1000),
        G("temperature_vrmem", temp_vrmem_mc, 1000),
        G("temperature_hbm", temp_hbm_mc, 1000),
        G("average_socket_power", socket_power_uw, 1000000),
        G("curr_socket_power", socket_power_uw, 1000000),
        G("energy_accumulator", energy_accumulator, 1),
        G("energy_accumulator", energy_uj, ENERGY_UJ),
        G("average_gfx_activity", gfx_activity_pct, 1),
        G("average_umc_activity", umc_activity_pct, 1),
        G("average_mm_activity", mm_activity_pct, 1),
        G("vcn_activity", vcn_activity_pct, 1),
        G("jpeg_activity", jpeg_activity_pct, 1),
        G("gfx_activity_acc", gfx_activity_acc, 1),
        G("mem_activity_acc", mem_activity_acc, 1),
        G("mem_max_bandwidth", mem_max_bandwidth_bps, UINT64_C(1000000000)),
        G("system_clock_counter", system_clock_counter_ns, 1),
        G("firmware_timestamp", firmware_timestamp_ns, 10),
        G("throttle_status", throttle_status, 1),
        G("indep_throttle_status", indep_throttle_status, 1),
        G("gfxclk_lock_status", gfxclk_lock_status, 1),
        G("accumulation_counter", accumulation_counter, 1),
        G("prochot_residency_acc", prochot_residency_acc, 1),
        G("ppt_residency_acc", ppt_residency_acc, 1),
        G("socket_thm_residency_acc", socket_thm_residency_acc, 1),
        G("vr_thm_residency_acc", vr_thm_residency_acc, 1),
        G("hbm_thm_residency_acc", hbm_thm_residency_acc, 1),
        G("current_gfxclk", gfxclk_hz, 1000000),
        G("current_socclk", socclk_hz, 1000000),
        G("current_vclk0", vclk0_hz, 1000000),
        G("current_dclk0", dclk0_hz, 1000000),
        G("current_uclk", uclk_hz, 1000000),
        G("current_vclk1", vclk1_hz, 1000000),
        G("current_dclk1", dclk1_hz, 1000000),
        G("average_gfxclk_frequency", avg_gfxclk_hz, 1000000),
        G("average_socclk_frequency", avg_socclk_hz, 1000000),
        G("average_uclk_frequency", avg_uclk_hz, 1000000),
        G("average_vclk0_frequency", avg_vclk0_hz, 1000000),
        G("average_dclk0_frequency", avg_dclk0_hz, 1000000),
        G("average_vclk1_frequency", avg_vclk1_hz, 1000000),
        G("average_dclk1_frequency", avg_dclk1_hz, 1000000),
        G("current_fan_speed", fan_speed_rpm, 1),
        G("voltage_soc", voltage_soc_mv, 1),
        G("voltage_gfx", voltage_gfx_mv, 1),
        G("voltage_mem", voltage_mem_mv, 1),
        G("pcie_link_width", pcie_link_width, 1),
        G("pcie_link_speed", pcie_link_speed_mts, 100),
        G("pcie_bandwidth_acc", pcie_bandwidth_acc, 1),
        G("pcie_bandwidth_inst", pcie_bandwidth_inst, 1),
        G("pcie_l0_to_recov_count_acc", pcie_l0_to_recov_count_acc, 1),
        G("pcie_replay_count_acc", pcie_replay_count_acc, 1),
        G("pcie_replay_rover_count_acc", pcie_replay_rover_count_acc, 1),
        G("pcie_nak_sent_count_acc", pcie_nak_sent_count_acc, 1),
        G("pcie_nak_rcvd_count_acc", pcie_nak_rcvd_count_acc, 1),
        G("pcie_lc_perf_other_end_recovery", pcie_lc_perf_other_end_recovery, 1),
        G("xgmi_link_width", xgmi_link_width, 1),
        G("xgmi_link_speed", xgmi_link_speed_gbps, 1),
        G("xgmi_read_data_acc", xgmi_read_data_kb, 1),
        G("xgmi_write_data_acc", xgmi_write_data_kb, 1),
        G("xgmi_link_status", xgmi_link_status, 1),
        G("num_partition", num_partition, 1),
};

static const struct mapping xcp_fields[] = {
        XCP("gfx_busy_inst", gfx_busy_inst_pct),
        XCP("jpeg_busy", jpeg_busy_pct),
        XCP("vcn_busy", vcn_busy_pct),
        XCP("gfx_busy_acc", gfx_busy_acc),
        XCP("gfx_below_host_limit_acc", gfx_below_host_limit_acc),
        XCP("gfx_below_host_limit_ppt_acc", gfx_below_host_limit_ppt_acc),
        XCP("gfx_below_host_limit_thm_acc", gfx_below_host_limit_thm_acc),
        XCP("gfx_low_utilization_acc", gfx_low_utilization_acc),
        XCP("gfx_below_host_limit_total_acc", gfx_below_host_limit_total_acc),
};

/* gpu_metrics 1.9 attribute name -> struct amdsmi_gpu_metrics_ext (the comment of that struct:
 * per-XCC arrays to the xcc_ members, JPEG/VCN to jpeg_busy_pct/vcn_busy_pct, the newer
 * kernels' HBM/AID/XCD temperatures to temp_*; base.xcp and base.num_partition stay NA). */
#define X(name, member, factor)                                                 \
        { name, offsetof(struct amdsmi_gpu_metrics_ext, member),                \
          MEMBER_N(struct amdsmi_gpu_metrics_ext, member), factor }

static const struct mapping attr_gpu_fields[] = {
        X("TEMPERATURE_HOTSPOT", base.temp_hotspot_mc, 1000),
        X("TEMPERATURE_MEM", base.temp_mem_mc, 1000),
        X("TEMPERATURE_VRSOC", base.temp_vrsoc_mc, 1000),
        X("CURR_SOCKET_POWER", base.socket_power_uw, 1000000),
        X("AVERAGE_GFX_ACTIVITY", base.gfx_activity_pct, 1),
        X("AVERAGE_UMC_ACTIVITY", base.umc_activity_pct, 1),
        X("MEM_MAX_BANDWIDTH", base.mem_max_bandwidth_bps, UINT64_C(1000000000)),
        X("ENERGY_ACCUMULATOR", base.energy_accumulator, 1),
        X("ENERGY_ACCUMULATOR", base.energy_uj, ENERGY_UJ),
        X("SYSTEM_CLOCK_COUNTER", base.system_clock_counter_ns, 1),
        X("ACCUMULATION_COUNTER", base.accumulation_counter, 1),
        X("PROCHOT_RESIDENCY_ACC", base.prochot_residency_acc, 1),
        X("PPT_RESIDENCY_ACC", base.ppt_residency_acc, 1),
        X("SOCKET_THM_RESIDENCY_ACC", base.socket_thm_residency_acc, 1),
        X("VR_THM_RESIDENCY_ACC", base.vr_thm_residency_acc, 1),
        X("HBM_THM_RESIDENCY_ACC", base.hbm_thm_residency_acc, 1),
        X("GFXCLK_LOCK_STATUS", base.gfxclk_lock_status, 1),
        X("PCIE_LINK_WIDTH", base.pcie_link_width, 1),
        X("PCIE_LINK_SPEED", base.pcie_link_speed_mts, 100),
        X("XGMI_LINK_WIDTH", base.xgmi_link_width, 1),
        X("XGMI_LINK_SPEED", base.xgmi_link_speed_gbps, 1),
        X("GFX_ACTIVITY_ACC", base.gfx_activity_acc, 1),
        X("MEM_ACTIVITY_ACC", base.mem_activity_acc, 1),
        X("PCIE_BANDWIDTH_ACC", base.pcie_bandwidth_acc, 1),
        X("PCIE_BANDWIDTH_INST", base.pcie_bandwidth_inst, 1),
        X("PCIE_L0_TO_RECOV_COUNT_ACC", base.pcie_l0_to_recov_count_acc, 1),
        X("PCIE_REPLAY_COUNT_ACC", base.pcie_replay_count_acc, 1),
        X("PCIE_REPLAY_ROVER_COUNT_ACC", base.pcie_replay_rover_count_acc, 1),
        X("PCIE_NAK_SENT_COUNT_ACC", base.pcie_nak_sent_count_acc, 1),
        X("PCIE_NAK_RCVD_COUNT_ACC", base.pcie_nak_rcvd_count_acc, 1),
        X("XGMI_READ_DATA_ACC", base.xgmi_read_data_kb, 1),
        X("XGMI_WRITE_DATA_ACC", base.xgmi_write_data_kb, 1),
        X("XGMI_LINK_STATUS", base.xgmi_link_status, 1),
        X("FIRMWARE_TIMESTAMP", base.firmware_timestamp_ns, 10),
        X("CURRENT_GFXCLK", base.gfxclk_hz, 1000000),
        X("CURRENT_SOCCLK", base.socclk_hz, 1000000),
        X("CURRENT_VCLK0", base.vclk0_hz, 1000000),
        X("CURRENT_DCLK0", base.dclk0_hz, 1000000),
        X("CURRENT_UCLK", base.uclk_hz, 1000000),
        X("PCIE_LC_PERF_OTHER_END_RECOVERY", base.pcie_lc_perf_other_end_recovery, 1),
        X("GFX_BUSY_INST", xcc_gfx_busy_inst_pct, 1),
        X("JPEG_BUSY", jpeg_busy_pct, 1),
        X("VCN_BUSY", vcn_busy_pct, 1),
        X("GFX_BUSY_ACC", xcc_gfx_busy_acc, 1),
        X("GFX_BELOW_HOST_LIMIT_PPT_ACC", xcc_below_host_limit_ppt_acc, 1),
        X("GFX_BELOW_HOST_LIMIT_THM_ACC", xcc_below_host_limit_thm_acc, 1),
        X("GFX_LOW_UTILIZATION_ACC", xcc_low_utilization_acc, 1),
        X("GFX_BELOW_HOST_LIMIT_TOTAL_ACC", xcc_below_host_limit_total_acc, 1),
        X("TEMPERATURE_HBM", temp_hbm_stack_mc, 1000),
        X("TEMPERATURE_AID", temp_aid_mc, 1000),
        X("TEMPERATURE_XCD", temp_xcd_mc, 1000),
};

/* xcp_metrics 1.1 attribute name -> struct amdsmi_partition_metrics */
#define P(name, member, factor)                                                 \
        { name, offsetof(struct amdsmi_partition_metrics, member),              \
          MEMBER_N(struct amdsmi_partition_metrics, member), factor }

static const struct mapping attr_partition_fields[] = {
        P("CURRENT_GFXCLK", gfxclk_hz, 1000000),
        P("CURRENT_SOCCLK", socclk_hz, 1000000),
        P("CURRENT_VCLK0", vclk0_hz, 1000000),
        P("CURRENT_DCLK0", dclk0_hz, 1000000),
        P("CURRENT_UCLK", uclk_hz, 1000000),
        P("GFX_BUSY_INST", xcp.gfx_busy_inst_pct, 1),
        P("JPEG_BUSY", xcp.jpeg_busy_pct, 1),
        P("VCN_BUSY", xcp.vcn_busy_pct, 1),
        P("GFX_BUSY_ACC", xcp.gfx_busy_acc, 1),
        P("GFX_BELOW_HOST_LIMIT_PPT_ACC", xcp.gfx_below_host_limit_ppt_acc, 1),
        P("GFX_BELOW_HOST_LIMIT_THM_ACC", xcp.gfx_below_host_limit_thm_acc, 1),
        P("GFX_LOW_UTILIZATION_ACC", xcp.gfx_low_utilization_acc, 1),
        P("GFX_BELOW_HOST_LIMIT_TOTAL_ACC", xcp.gfx_below_host_limit_total_acc, 1),
        P("ACCUMULATION_COUNTER", accumulation_counter, 1),
        P("FIRMWARE_TIMESTAMP", firmware_timestamp_ns, 10),
};

static const char *const header_fields[] = {
        "structure_size", "format_revision", "content_revision",
};

static uint64_t convert(uint64_t raw, uint64_t factor) {
        unsigned __int128 wide;
        uint64_t r;

        if (factor == ENERGY_UJ) {
                wide = ((unsigned __int128) raw * 1000000) >> 16;
                return wide >= AMDSMI_NA ? AMDSMI_NA : (uint64_t) wide;
        }
        if (__builtin_mul_overflow(raw, factor, &r))
                return AMDSMI_NA;
        return r;
}

static uint64_t json_raw(struct json_object *v, const char *name) {
        if (!v)
                return AMDSMI_NA; /* null: all-ones in the blob */
        if (!json_object_is_type(v, json_type_int))
                fail_msg("%s: not an integer or null", name);
        return json_object_get_uint64(v);
}

static bool is_known(const char *key, const struct mapping *map, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(map[i].name, key) == 0)
                        return true;
        return false;
}

/* Writes the converted values of every mapped field of @obj into @dst; returns how many raw
 * values were null (all-ones). */
static unsigned fill_expected(struct json_object *obj, const struct mapping *map, size_t n,
                              void *dst) {
        unsigned n_null = 0;

        for (size_t i = 0; i < n; i++) {
                struct json_object *v;
                uint64_t *d = (uint64_t *) ((uint8_t *) dst + map[i].offset);

                if (!json_object_object_get_ex(obj, map[i].name, &v))
                        continue;

                if (json_object_is_type(v, json_type_array)) {
                        size_t len = json_object_array_length(v);

                        if (len > map[i].capacity)
                                fail_msg("%s: %zu elements, the library keeps %zu",
                                         map[i].name, len, map[i].capacity);
                        for (size_t k = 0; k < len; k++) {
                                uint64_t raw = json_raw(json_object_array_get_idx(v, k),
                                                        map[i].name);

                                n_null += raw == AMDSMI_NA;
                                d[k] = raw == AMDSMI_NA ? AMDSMI_NA :
                                                          convert(raw, map[i].factor);
                        }
                } else {
                        uint64_t raw = json_raw(v, map[i].name);

                        n_null += raw == AMDSMI_NA;
                        d[0] = raw == AMDSMI_NA ? AMDSMI_NA : convert(raw, map[i].factor);
                }
        }
        return n_null;
}

static void check_keys_known(struct json_object *fields) {
        json_object_object_foreach(fields, key, val) {
                bool header = false;

                (void) val;
                for (size_t i = 0; i < sizeof(header_fields) / sizeof(header_fields[0]); i++)
                        header = header || strcmp(key, header_fields[i]) == 0;
                if (!header && strcmp(key, "xcp_stats") != 0 &&
                    !is_known(key, gpu_fields, sizeof(gpu_fields) / sizeof(gpu_fields[0])))
                        fail_msg("JSON field %s is not known to this test", key);
        }
}

static void *read_file(const char *path, size_t *ret_size) {
        FILE *f;
        uint8_t *buf;
        long size;

        f = fopen(path, "re");
        if (!f)
                fail_msg("%s: %s", path, strerror(errno));
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        size = ftell(f);
        assert_true(size > 0);
        rewind(f);
        buf = malloc(size); /* exactly the file: a sanitizer catches reads past the end */
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, size, f), (size_t) size);
        fclose(f);
        *ret_size = size;
        return buf;
}

static void assert_metrics_equal(const struct amdsmi_gpu_metrics *exp,
                                 const struct amdsmi_gpu_metrics *got) {
        const size_t first = offsetof(struct amdsmi_gpu_metrics, temp_edge_mc);
        const uint64_t *e = (const uint64_t *) ((const uint8_t *) exp + first);
        const uint64_t *g = (const uint64_t *) ((const uint8_t *) got + first);
        unsigned bad = 0;

        assert_int_equal(got->structure_size, exp->structure_size);
        assert_int_equal(got->format_revision, exp->format_revision);
        assert_int_equal(got->content_revision, exp->content_revision);
        for (size_t i = 0; i < (sizeof(*exp) - first) / sizeof(uint64_t); i++)
                if (e[i] != g[i]) {
                        print_error("struct offset %zu: expected %" PRIu64 ", got %" PRIu64 "\n",
                                    first + i * 8, e[i], g[i]);
                        bad++;
                }
        assert_int_equal(bad, 0);
}

static void check_blob(unsigned content_revision) {
        static struct amdsmi_gpu_metrics exp, got;
        struct json_object *desc, *fields, *xcp, *v;
        const char *dir = getenv("METRICS_BLOBS_DIR");
        char path[4096];
        unsigned n_null;
        size_t size;
        void *blob;

        if (!dir)
                fail_msg("METRICS_BLOBS_DIR is not set (run through meson test)");

        snprintf(path, sizeof(path), "%s/gpu_metrics_v1_%u.bin", dir, content_revision);
        blob = read_file(path, &size);
        snprintf(path, sizeof(path), "%s/gpu_metrics_v1_%u.json", dir, content_revision);
        desc = json_object_from_file(path);
        if (!desc)
                fail_msg("%s: %s", path, json_util_get_last_err());
        assert_true(json_object_object_get_ex(desc, "fields", &fields));
        assert_true(json_object_object_get_ex(desc, "size", &v));
        assert_int_equal(json_object_get_uint64(v), size);

        memset(&exp, 0xff, sizeof(exp));
        assert_true(json_object_object_get_ex(fields, "structure_size", &v));
        exp.structure_size = json_object_get_int(v);
        assert_true(json_object_object_get_ex(fields, "format_revision", &v));
        exp.format_revision = json_object_get_int(v);
        assert_true(json_object_object_get_ex(fields, "content_revision", &v));
        exp.content_revision = json_object_get_int(v);
        assert_int_equal(exp.format_revision, 1);
        assert_int_equal(exp.content_revision, content_revision);

        check_keys_known(fields);
        n_null = fill_expected(fields, gpu_fields, sizeof(gpu_fields) / sizeof(gpu_fields[0]),
                               &exp);
        if (json_object_object_get_ex(fields, "xcp_stats", &xcp)) {
                assert_int_equal(json_object_array_length(xcp), AMDSMI_METRICS_MAX_XCP);
                for (size_t i = 0; i < AMDSMI_METRICS_MAX_XCP; i++) {
                        struct json_object *entry = json_object_array_get_idx(xcp, i);

                        json_object_object_foreach(entry, key, val) {
                                (void) val;
                                if (!is_known(key, xcp_fields,
                                              sizeof(xcp_fields) / sizeof(xcp_fields[0])))
                                        fail_msg("JSON xcp_stats field %s is not known", key);
                        }
                        n_null += fill_expected(entry, xcp_fields,
                                                sizeof(xcp_fields) / sizeof(xcp_fields[0]),
                                                &exp.xcp[i]);
                }
        }

        memset(&got, 0, sizeof(got));
        assert_int_equal(amdsmi_gpu_metrics_parse(blob, size, &got), 0);
        assert_metrics_equal(&exp, &got);

        /* the blob must exercise the all-ones path too */
        assert_true(n_null > 0);

        json_object_put(desc);
        free(blob);
}

static void test_blob_v1_3(void **state) {
        check_blob(3);
}

static void test_blob_v1_4(void **state) {
        check_blob(4);
}

static void test_blob_v1_5(void **state) {
        check_blob(5);
}

static void test_blob_v1_6(void **state) {
        check_blob(6);
}

static void test_blob_v1_7(void **state) {
        check_blob(7);
}

static void test_blob_v1_8(void **state) {
        check_blob(8);
}

/* Compares the uint64_t members of [first, end) of two structures; prints every difference. */
static void assert_u64_range_equal(const void *exp, const void *got, size_t first, size_t end) {
        const uint64_t *e = (const uint64_t *) ((const uint8_t *) exp + first);
        const uint64_t *g = (const uint64_t *) ((const uint8_t *) got + first);
        unsigned bad = 0;

        for (size_t i = 0; i < (end - first) / sizeof(uint64_t); i++)
                if (e[i] != g[i]) {
                        print_error("struct offset %zu: expected %" PRIu64 ", got %" PRIu64 "\n",
                                    first + i * 8, e[i], g[i]);
                        bad++;
                }
        assert_int_equal(bad, 0);
}

static unsigned type_bits(const char *type) {
        return (unsigned) strtoul(type + 1, NULL, 10); /* "U32" -> 32 */
}

struct attr_blob {
        void *data;
        size_t size;
        struct json_object *desc, *fields, *records;
        unsigned acc_bits, residency_bits; /* from the records' types; 0 if absent */
};

static void load_attr_blob(const char *base, const struct mapping *map, size_t n,
                           struct attr_blob *ret) {
        const char *dir = getenv("METRICS_BLOBS_DIR");
        struct json_object *v;
        char path[4096];

        if (!dir)
                fail_msg("METRICS_BLOBS_DIR is not set (run through meson test)");
        snprintf(path, sizeof(path), "%s/%s.bin", dir, base);
        ret->data = read_file(path, &ret->size);
        snprintf(path, sizeof(path), "%s/%s.json", dir, base);
        ret->desc = json_object_from_file(path);
        if (!ret->desc)
                fail_msg("%s: %s", path, json_util_get_last_err());
        assert_true(json_object_object_get_ex(ret->desc, "fields", &ret->fields));
        assert_true(json_object_object_get_ex(ret->desc, "records", &ret->records));
        assert_true(json_object_object_get_ex(ret->desc, "size", &v));
        assert_int_equal(json_object_get_uint64(v), ret->size);

        /* every attribute of the JSON is known here */
        json_object_object_foreach(ret->fields, key, val) {
                (void) val;
                if (strcmp(key, "structure_size") != 0 && strcmp(key, "format_revision") != 0 &&
                    strcmp(key, "content_revision") != 0 && strcmp(key, "attr_count") != 0 &&
                    !is_known(key, map, n))
                        fail_msg("%s: JSON attribute %s is not known to this test", base, key);
        }

        ret->acc_bits = ret->residency_bits = 0;
        for (size_t i = 0; i < json_object_array_length(ret->records); i++) {
                struct json_object *rec = json_object_array_get_idx(ret->records, i), *name, *type;
                const char *nm;
                unsigned bits;

                assert_true(json_object_object_get_ex(rec, "name", &name));
                assert_true(json_object_object_get_ex(rec, "type", &type));
                nm = json_object_get_string(name);
                bits = type_bits(json_object_get_string(type));
                if (strcmp(nm, "ACCUMULATION_COUNTER") == 0)
                        ret->acc_bits = bits;
                if (strstr(nm, "_RESIDENCY_ACC") &&
                    (ret->residency_bits == 0 || bits < ret->residency_bits))
                        ret->residency_bits = bits;
        }
}

static uint64_t json_field_u64(struct json_object *fields, const char *name) {
        struct json_object *v;

        assert_true(json_object_object_get_ex(fields, name, &v));
        return json_object_get_uint64(v);
}

static void check_gpu_attr_blob(const char *base, bool with_nulls) {
        static struct amdsmi_gpu_metrics_ext exp, got;
        static struct amdsmi_gpu_metrics old;
        const size_t n = sizeof(attr_gpu_fields) / sizeof(attr_gpu_fields[0]);
        struct attr_blob b;
        char reason[256] = "untouched";
        unsigned n_null;

        load_attr_blob(base, attr_gpu_fields, n, &b);

        memset(&exp, 0xff, sizeof(exp));
        exp.base.structure_size = json_field_u64(b.fields, "structure_size");
        exp.base.format_revision = json_field_u64(b.fields, "format_revision");
        exp.base.content_revision = json_field_u64(b.fields, "content_revision");
        assert_int_equal(exp.base.format_revision, 1);
        assert_int_equal(exp.base.content_revision, 9);
        n_null = fill_expected(b.fields, attr_gpu_fields, n, &exp);

        memset(&got, 0x5a, sizeof(got));
        got.size = sizeof(got);
        got.ids = AMDSMI_METRICS_IDS_T3;
        assert_int_equal(amdsmi_gpu_metrics_parse_ext(b.data, b.size, &got, reason,
                                                      sizeof(reason)), 0);
        assert_string_equal(reason, "");
        assert_int_equal(got.size, sizeof(got));
        assert_int_equal(got.version, AMDSMI_GPU_METRICS_EXT_VERSION);
        assert_int_equal(got.base.structure_size, exp.base.structure_size);
        assert_int_equal(got.base.format_revision, 1);
        assert_int_equal(got.base.content_revision, 9);
        /* every uint64_t of base, then of the extension up to the counter widths */
        assert_u64_range_equal(&exp, &got, offsetof(struct amdsmi_gpu_metrics_ext,
                                                    base.temp_edge_mc),
                               offsetof(struct amdsmi_gpu_metrics_ext,
                                        accumulation_counter_bits));
        assert_int_equal(got.accumulation_counter_bits, b.acc_bits);
        assert_int_equal(got.residency_bits, b.residency_bits);
        assert_int_equal(got.attr_count, json_field_u64(b.fields, "attr_count"));
        assert_int_equal(got.unknown_attrs, 0);
        assert_int_equal(got.clipped_attrs, 0);
        if (with_nulls)
                assert_true(n_null > 0);

        /* the old entry point gives the same base part */
        memset(&old, 0x5a, sizeof(old));
        assert_int_equal(amdsmi_gpu_metrics_parse(b.data, b.size, &old), 0);
        assert_metrics_equal(&got.base, &old);

        json_object_put(b.desc);
        free(b.data);
}

static void check_partition_attr_blob(const char *base) {
        static struct amdsmi_partition_metrics exp, got;
        const size_t n = sizeof(attr_partition_fields) / sizeof(attr_partition_fields[0]);
        struct attr_blob b;
        char reason[256] = "untouched";
        unsigned n_null;

        load_attr_blob(base, attr_partition_fields, n, &b);

        memset(&exp, 0xff, sizeof(exp));
        n_null = fill_expected(b.fields, attr_partition_fields, n, &exp);

        memset(&got, 0x5a, sizeof(got));
        got.size = sizeof(got);
        assert_int_equal(amdsmi_partition_metrics_parse(b.data, b.size, &got, reason,
                                                        sizeof(reason)), 0);
        assert_string_equal(reason, "");
        assert_int_equal(got.size, sizeof(got));
        assert_int_equal(got.version, AMDSMI_PARTITION_METRICS_VERSION);
        assert_int_equal(got.structure_size, json_field_u64(b.fields, "structure_size"));
        assert_int_equal(got.format_revision, 1);
        assert_int_equal(got.content_revision, 1);
        assert_u64_range_equal(&exp, &got, offsetof(struct amdsmi_partition_metrics, gfxclk_hz),
                               offsetof(struct amdsmi_partition_metrics,
                                        accumulation_counter_bits));
        assert_int_equal(got.accumulation_counter_bits, b.acc_bits);
        assert_int_equal(got.attr_count, json_field_u64(b.fields, "attr_count"));
        assert_int_equal(got.unknown_attrs, 0);
        assert_int_equal(got.clipped_attrs, 0);
        assert_true(n_null > 0);

        json_object_put(b.desc);
        free(b.data);
}

static void test_blob_v1_9_linux_6_19(void **state) {
        check_gpu_attr_blob("gpu_metrics_v1_9-6.19", true);
}

static void test_blob_v1_9_linux_7_0(void **state) {
        check_gpu_attr_blob("gpu_metrics_v1_9-7.0", true);
}

static void test_blob_v1_9_linux_7_1(void **state) {
        check_gpu_attr_blob("gpu_metrics_v1_9-7.1", true);
}

static void test_blob_v1_9_spec_example(void **state) {
        check_gpu_attr_blob("gpu_metrics_v1_9-spec-example", false);
}

static void test_blob_xcp_v1_1_linux_6_19(void **state) {
        check_partition_attr_blob("xcp_metrics_v1_1-6.19");
}

static void test_blob_xcp_v1_1_linux_7_0(void **state) {
        check_partition_attr_blob("xcp_metrics_v1_1-7.0");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_blob_v1_3),
                cmocka_unit_test(test_blob_v1_4),
                cmocka_unit_test(test_blob_v1_5),
                cmocka_unit_test(test_blob_v1_6),
                cmocka_unit_test(test_blob_v1_7),
                cmocka_unit_test(test_blob_v1_8),
                cmocka_unit_test(test_blob_v1_9_linux_6_19),
                cmocka_unit_test(test_blob_v1_9_linux_7_0),
                cmocka_unit_test(test_blob_v1_9_linux_7_1),
                cmocka_unit_test(test_blob_v1_9_spec_example),
                cmocka_unit_test(test_blob_xcp_v1_1_linux_6_19),
                cmocka_unit_test(test_blob_xcp_v1_1_linux_7_0),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
