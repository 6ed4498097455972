/* SPDX-License-Identifier: MIT */
/* The Prometheus renderer (metrics-render.c, metrics-families.c) fed hand-made documents: the
 * lines of each family, what is left out, escaping, both formats, and the Accept header. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"

static json_object *doc(const char *text) {
        json_object *o = json_tokener_parse(text);

        assert_non_null(o);
        return o;
}

static char *render(const struct metrics_input *in, enum metrics_format f) {
        char *text = NULL;
        size_t size = 0;

        assert_int_equal(metrics_render(in, f, &text, &size), 0);
        assert_non_null(text);
        assert_int_equal(strlen(text), size);
        return text;
}

/* @line is a whole line of @text */
static bool has_line(const char *text, const char *line) {
        size_t n = strlen(line);

        for (const char *p = text; (p = strstr(p, line)); p++)
                if ((p == text || p[-1] == '\n') && p[n] == '\n')
                        return true;
        return false;
}

#define assert_line(text, line)                                                    \
        do {                                                                       \
                if (!has_line((text), (line)))                                     \
                        fail_msg("missing line: %s\n--- in:\n%s", (line), (text)); \
        } while (0)

#define assert_no(text, s)                                                    \
        do {                                                                  \
                if (strstr((text), (s)))                                      \
                        fail_msg("unexpected: %s\n--- in:\n%s", (s), (text)); \
        } while (0)

static const char *METRIC =
        "{\"gpus\": [{\"gpu\": 0, \"bdf\": \"0000:05:00.0\","
        " \"perf_level\": \"manual\", \"power\": {\"power_w\": 139.5},"
        " \"temperatures\": {\"junction_c\": 41, \"mem_c\": null},"
        " \"clocks\": {\"gfx_clock_mhz\": 500},"
        " \"usage\": {\"gpu_busy_pct\": 7, \"mem_busy_pct\": null},"
        " \"memory\": {\"vram_used_bytes\": 314572800, \"vram_total_bytes\": 206158430208},"
        " \"limiters\": {\"throttle_seconds_total\": {\"power\": 1.5, \"socket_thermal\": 0,"
        "   \"hbm_thermal\": null, \"vr_thermal\": 0, \"prochot\": 0}},"
        " \"gpu_metrics\": {\"energy_j\": 500441.25, \"socket_power_w\": 140,"
        "   \"temperatures\": {\"hotspot_c\": 41, \"mem_c\": 37, \"hbm_c\": [50, null, 52],"
        "     \"vrsoc_c\": 33},"
        "   \"clocks\": {\"gfx_clock_mhz\": [510, 509], \"mem_clock_mhz\": 900,"
        "     \"avg_gfx_clock_mhz\": 505},"
        "   \"activity\": {\"vcn_pct\": 3, \"jpeg_pct\": null},"
        "   \"pcie\": {\"replay_count_acc\": 2},"
        "   \"xgmi\": {\"read_data_kb\": [1, null, 3], \"write_data_kb\": [4]},"
        "   \"partitions\": [{\"partition\": 0, \"gfx_busy_pct\": [10, 20, null]},"
        "                    {\"partition\": 1, \"gfx_busy_pct\": [null]}]}},"
        " {\"gpu\": 1, \"bdf\": null, \"memory\": {\"vram_used_bytes\": 1}},"
        " {\"gpu\": 2, \"bdf\": \"0000:26:00.0\", \"power\": {\"power_w\": null},"
        "  \"gpu_metrics\": null, \"memory\": {\"vram_used_bytes\": \"7\"}}]}";

/* metric: every family's lines, nulls and non-numbers left out, no other GPU invented */
static void test_metric(void **state) {
        struct metrics_input in = { .metric = doc(METRIC), .up = true, .scrape_duration_s = 0.25 };
        char *t = render(&in, METRICS_FORMAT_TEXT);

        assert_line(t, "# TYPE amdsmi_up gauge");
        assert_line(t, "amdsmi_up 1");
        assert_line(t, "amdsmi_scrape_duration_seconds 0.25");
        /* the level as an info family; none for a GPU without one */
        assert_line(t,
                    "amdsmi_gpu_performance_level_info{gpu=\"0000:05:00.0\",level=\"manual\"} 1");
        assert_no(t, "amdsmi_gpu_performance_level_info{gpu=\"0000:26:00.0\"");
        assert_line(t, "amdsmi_gpu_power_watts{gpu=\"0000:05:00.0\",sensor=\"socket\"} 139.5");
        assert_line(t, "# TYPE amdsmi_gpu_energy_joules_total counter");
        assert_line(t, "amdsmi_gpu_energy_joules_total{gpu=\"0000:05:00.0\"} 500441.25");
        /* hwmon's junction, not gpu_metrics' hotspot again; gpu_metrics' mem where hwmon has
         * none; an array's elements with their index, its nulls left out */
        assert_line(t,
                    "amdsmi_gpu_temperature_celsius{gpu=\"0000:05:00.0\",sensor=\"junction\"} 41");
        assert_line(t, "amdsmi_gpu_temperature_celsius{gpu=\"0000:05:00.0\",sensor=\"mem\"} 37");
        assert_line(t, "amdsmi_gpu_temperature_celsius{gpu=\"0000:05:00.0\",sensor=\"vrsoc\"} 33");
        assert_line(
                t,
                "amdsmi_gpu_temperature_celsius{gpu=\"0000:05:00.0\",sensor=\"hbm\",index=\"0\"} 50");
        assert_line(
                t,
                "amdsmi_gpu_temperature_celsius{gpu=\"0000:05:00.0\",sensor=\"hbm\",index=\"2\"} 52");
        assert_no(t, "sensor=\"hbm\",index=\"1\"");
        assert_no(t, "hotspot");
        /* MHz to Hz, per instance; the averages are not clocks of their own */
        assert_line(
                t,
                "amdsmi_gpu_clock_hertz{gpu=\"0000:05:00.0\",clock=\"gfx\",index=\"1\"} 509000000");
        assert_line(
                t,
                "amdsmi_gpu_clock_hertz{gpu=\"0000:05:00.0\",clock=\"mem\",index=\"0\"} 900000000");
        assert_no(t, "avg");
        /* percent to ratio */
        assert_line(t, "amdsmi_gpu_busy_ratio{gpu=\"0000:05:00.0\",engine=\"gfx\"} 0.07");
        assert_line(t, "amdsmi_gpu_busy_ratio{gpu=\"0000:05:00.0\",engine=\"vcn\"} 0.03");
        assert_no(t, "engine=\"memory\"");
        assert_no(t, "engine=\"jpeg\"");
        /* the mean over the partition's XCCs that have a value; none: no series */
        assert_line(t,
                    "amdsmi_partition_gfx_busy_ratio{gpu=\"0000:05:00.0\",partition=\"0\"} 0.15");
        assert_no(t, "partition=\"1\"");
        assert_line(t, "amdsmi_gpu_vram_used_bytes{gpu=\"0000:05:00.0\"} 314572800");
        assert_line(t, "amdsmi_gpu_vram_size_bytes{gpu=\"0000:05:00.0\"} 206158430208");
        assert_line(t,
                    "amdsmi_gpu_throttle_seconds_total{gpu=\"0000:05:00.0\",reason=\"power\"} 1.5");
        assert_no(t, "reason=\"hbm_thermal\"");
        assert_line(t, "amdsmi_gpu_pcie_replays_total{gpu=\"0000:05:00.0\"} 2");
        /* KB to bytes */
        assert_line(t, "amdsmi_gpu_xgmi_read_bytes_total{gpu=\"0000:05:00.0\",link=\"2\"} 3072");
        assert_no(t, "link=\"1\"");
        assert_line(t, "amdsmi_gpu_xgmi_write_bytes_total{gpu=\"0000:05:00.0\",link=\"0\"} 4096");
        /* a GPU without an address, a string for a number: nothing */
        assert_no(t, "gpu=\"\"");
        assert_no(t, "} 7\n");
        assert_no(t, "0000:26:00.0");
        /* families without samples have no HELP either; no timestamps, no EOF in text */
        assert_no(t, "amdsmi_gpu_info");
        assert_no(t, "amdsmi_gpu_health");
        assert_no(t, "# EOF");
        free(t);
        json_object_put(in.metric);
}

static const char *LIST = "{\"gpus\": [{\"bdf\": \"0000:05:00.0\", \"product\": \"MI300X\","
                          " \"unique_id\": \"0x04c5df5a181c0db9\", \"driver\": \"amdgpu\"}]}";
static const char *STATIC = "{\"gpus\": [{\"bdf\": \"0000:05:00.0\", \"serial_number\": "
                            "\"69\\\"22\\\\51\\n\", \"vbios\": {\"version\": \"113-M3\"},"
                            " \"hive_id\": null}]}";

/* identity: labels escaped, null labels left out (never empty), identity = no */
static void test_info(void **state) {
        struct metrics_input in = { .list = doc(LIST),
                                    .static_doc = doc(STATIC),
                                    .identity = true };
        char *t = render(&in, METRICS_FORMAT_TEXT);

        assert_line(t, "amdsmi_gpu_info{gpu=\"0000:05:00.0\",product=\"MI300X\","
                       "serial=\"69\\\"22\\\\51\\n\",unique_id=\"0x04c5df5a181c0db9\","
                       "vbios=\"113-M3\",driver=\"amdgpu\"} 1");
        assert_no(t, "hive");
        free(t);
        in.identity = false;
        t = render(&in, METRICS_FORMAT_TEXT);
        assert_line(t, "amdsmi_gpu_info{gpu=\"0000:05:00.0\",product=\"MI300X\","
                       "vbios=\"113-M3\",driver=\"amdgpu\"} 1");
        assert_no(t, "serial=");
        assert_no(t, "unique_id=");
        free(t);
        json_object_put(in.list);
        json_object_put(in.static_doc);
}

static const char *POWER =
        "[{\"bdf\": \"0000:05:00.0\", \"cap_w\": 450, \"modelled_cap_w\": 450,"
        " \"cap_settable_min_w\": 1, \"cap_max_w\": 750, \"cap_default_w\": 750, \"ppt1\": null,"
        " \"cap_held_by\": \"vm\", \"sources\": ["
        "  {\"source\": \"host\", \"cap_w\": 600, \"binds\": false},"
        "  {\"source\": \"vm\", \"vm\": \"a\", \"cap_w\": 500, \"binds\": false},"
        "  {\"source\": \"vm\", \"vm\": \"b\", \"cap_w\": 450, \"binds\": true}]},"
        " {\"bdf\": \"0000:26:00.0\", \"cap_w\": 700, \"cap_held_by\": \"external\","
        "  \"sources\": [], \"ppt1\": {\"cap_w\": 800}}]";

/* power: every limit, the vm source the lowest of its VMs, which source binds */
static void test_power(void **state) {
        struct metrics_input in = { .power = doc(POWER) };
        char *t = render(&in, METRICS_FORMAT_TEXT);

        assert_line(t, "amdsmi_gpu_power_cap_watts{gpu=\"0000:05:00.0\",limit=\"current\"} 450");
        assert_line(t, "amdsmi_gpu_power_cap_watts{gpu=\"0000:05:00.0\",limit=\"min\"} 1");
        assert_line(t, "amdsmi_gpu_power_cap_watts{gpu=\"0000:05:00.0\",limit=\"host\"} 600");
        assert_line(t, "amdsmi_gpu_power_cap_watts{gpu=\"0000:05:00.0\",limit=\"vm\"} 450");
        assert_no(t, "limit=\"apml\"");
        assert_line(t, "amdsmi_gpu_power_cap_watts{gpu=\"0000:26:00.0\",limit=\"ppt1\"} 800");
        assert_line(
                t,
                "amdsmi_gpu_power_cap_source_info{gpu=\"0000:05:00.0\",source=\"host\",binds=\"false\"} 1");
        assert_line(
                t,
                "amdsmi_gpu_power_cap_source_info{gpu=\"0000:05:00.0\",source=\"vm\",binds=\"true\"} 1");
        assert_line(
                t,
                "amdsmi_gpu_power_cap_source_info{gpu=\"0000:26:00.0\",source=\"external\",binds=\"true\"} 1");
        free(t);
        json_object_put(in.power);
}

/* health, RAS, partitions, SR-IOV, the desired state */
static void test_state(void **state) {
        struct metrics_input in = {
                .health = doc("[{\"bdf\": \"0000:05:00.0\", \"health\": {\"state\": \"warning\"}},"
                              " {\"bdf\": \"0000:26:00.0\", \"health\": null}]"),
                .ras = doc("[{\"bdf\": \"0000:05:00.0\", \"ras\": {\"blocks\": ["
                           " {\"block\": \"umc\", \"ue\": 1, \"ce\": 20, \"de\": null}]}}]"),
                .partition = doc("[{\"bdf\": \"0000:05:00.0\", \"compute_mode\": \"CPX\","
                                 " \"memory_mode\": \"NPS1\", \"memory_pending\": \"NPS4\"},"
                                 " {\"bdf\": \"0000:26:00.0\", \"compute_mode\": null,"
                                 " \"memory_mode\": null}]"),
                .sriov = doc("[{\"bdf\": \"0000:05:00.0\", \"num_vfs\": 8},"
                             " {\"bdf\": \"0000:26:00.0\", \"num_vfs\": null}]"),
                .apply = doc("{\"settings\": ["
                             " {\"bdf\": \"0000:05:00.0\", \"setting\": \"compute_mode\","
                             "  \"action\": \"apply\"},"
                             " {\"bdf\": \"0000:05:00.0\", \"setting\": \"power_cap\","
                             "  \"action\": \"overridden\", \"in_sync\": true},"
                             " {\"bdf\": \"0000:26:00.0\", \"setting\": \"num_vfs\","
                             "  \"action\": \"none\"}]}"),
        };
        char *t = render(&in, METRICS_FORMAT_TEXT);

        assert_line(t, "amdsmi_gpu_health{gpu=\"0000:05:00.0\",state=\"warning\"} 1");
        assert_line(t, "amdsmi_gpu_health{gpu=\"0000:05:00.0\",state=\"ok\"} 0");
        assert_no(t, "amdsmi_gpu_health{gpu=\"0000:26:00.0\"");
        assert_line(
                t,
                "amdsmi_gpu_ecc_errors_total{gpu=\"0000:05:00.0\",block=\"umc\",severity=\"uncorrectable\"} 1");
        assert_line(
                t,
                "amdsmi_gpu_ecc_errors_total{gpu=\"0000:05:00.0\",block=\"umc\",severity=\"correctable\"} 20");
        assert_no(t, "deferred");
        assert_line(t, "amdsmi_gpu_partition_info{gpu=\"0000:05:00.0\",compute_mode=\"CPX\","
                       "memory_mode=\"NPS1\",memory_pending=\"NPS4\"} 1");
        assert_no(t, "amdsmi_gpu_partition_info{gpu=\"0000:26:00.0\"");
        assert_line(t, "amdsmi_gpu_sriov_vfs{gpu=\"0000:05:00.0\"} 8");
        assert_no(t, "amdsmi_gpu_sriov_vfs{gpu=\"0000:26:00.0\"");
        /* in_sync where the row says it, else the action */
        assert_line(t, "amdsmi_gpu_config_in_sync{gpu=\"0000:05:00.0\",key=\"compute_mode\"} 0");
        assert_line(t, "amdsmi_gpu_config_in_sync{gpu=\"0000:05:00.0\",key=\"power_cap\"} 1");
        assert_line(t, "amdsmi_gpu_config_in_sync{gpu=\"0000:26:00.0\",key=\"num_vfs\"} 1");
        free(t);
        json_object_put(in.health);
        json_object_put(in.ras);
        json_object_put(in.partition);
        json_object_put(in.sriov);
        json_object_put(in.apply);
}

/* OpenMetrics: family names without _total / _info, info and UNIT lines, # EOF last */
static void test_openmetrics(void **state) {
        struct metrics_input in = {
                .metric = doc(METRIC), .list = doc(LIST), .up = true, .scrape_duration_s = -1
        };
        char *t = render(&in, METRICS_FORMAT_OPENMETRICS);
        size_t n = strlen(t);

        assert_line(t, "# TYPE amdsmi_gpu_energy_joules counter");
        assert_line(t, "# UNIT amdsmi_gpu_energy_joules joules");
        assert_line(t, "amdsmi_gpu_energy_joules_total{gpu=\"0000:05:00.0\"} 500441.25");
        assert_line(t, "# TYPE amdsmi_gpu info");
        assert_line(
                t,
                "# HELP amdsmi_gpu Identity of the GPU (serial and unique_id unless [metrics] identity = no).");
        assert_line(t, "# TYPE amdsmi_gpu_pcie_replays counter");
        assert_no(t, "# UNIT amdsmi_gpu_pcie_replays");
        assert_line(t, "# UNIT amdsmi_gpu_busy_ratio ratio");
        assert_no(t, "amdsmi_scrape_duration_seconds");
        assert_true(n > 6 && strcmp(t + n - 6, "# EOF\n") == 0);
        free(t);
        json_object_put(in.metric);
        json_object_put(in.list);
}

/* a host's VFs: no series of their own, whatever document lists them */
static void test_host_vfs(void **state) {
        struct metrics_input in = {
                .list = doc("[{\"bdf\": \"0000:05:00.0\", \"role\": \"host-pf\"},"
                            " {\"bdf\": \"0000:05:02.0\", \"role\": \"vf\"}]"),
                .metric =
                        doc("[{\"bdf\": \"0000:05:00.0\", \"memory\": {\"vram_total_bytes\": 2}},"
                            " {\"bdf\": \"0000:05:02.0\", \"memory\": {\"vram_total_bytes\": 1}}]"),
                .health = doc("[{\"bdf\": \"0000:05:02.0\", \"role\": \"vf\","
                              " \"health\": {\"state\": \"ok\"}}]"),
                .scrape_duration_s = -1,
        };
        char *t = render(&in, METRICS_FORMAT_TEXT);

        assert_line(t, "amdsmi_gpu_info{gpu=\"0000:05:00.0\"} 1");
        assert_line(t, "amdsmi_gpu_vram_size_bytes{gpu=\"0000:05:00.0\"} 2");
        assert_no(t, "0000:05:02.0");
        free(t);
        json_object_put(in.list);
        json_object_put(in.metric);
        json_object_put(in.health);
}

/* nothing at all: amdsmi_up 0 and nothing else */
static void test_empty(void **state) {
        struct metrics_input in = { .metric = doc("{\"gpus\": 5}"),
                                    .power = doc("\"x\""),
                                    .scrape_duration_s = -1 };
        char *t = render(&in, METRICS_FORMAT_TEXT);

        assert_string_equal(t,
                            "# HELP amdsmi_up Whether amdsmi could read the GPUs (1) or not (0).\n"
                            "# TYPE amdsmi_up gauge\n"
                            "amdsmi_up 0\n");
        free(t);
        json_object_put(in.metric);
        json_object_put(in.power);
}

static void test_accept(void **state) {
        static const struct {
                const char *accept;
                enum metrics_format f;
        } cases[] = {
                { NULL, METRICS_FORMAT_TEXT },
                { "", METRICS_FORMAT_TEXT },
                { "*/*", METRICS_FORMAT_TEXT },
                { "text/plain", METRICS_FORMAT_TEXT },
                /* Prometheus 2.42's own */
                { "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                  "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
                  METRICS_FORMAT_OPENMETRICS },
                { "application/openmetrics-text", METRICS_FORMAT_OPENMETRICS },
                { "Application/OpenMetrics-Text ; Version=\"1.0.0\" ; q=0.9 , text/plain;q=0.3",
                  METRICS_FORMAT_OPENMETRICS },
                /* a version we do not write, a lower or equal q, q=0, a malformed q */
                { "application/openmetrics-text;version=2.0.0", METRICS_FORMAT_TEXT },
                { "application/openmetrics-text;q=0.4,text/plain;q=0.5", METRICS_FORMAT_TEXT },
                { "application/openmetrics-text;q=0.5,*/*;q=0.5", METRICS_FORMAT_TEXT },
                { "application/openmetrics-text;q=0", METRICS_FORMAT_TEXT },
                { "application/openmetrics-text;q=abc", METRICS_FORMAT_TEXT },
                { "application/openmetrics-text;q=1.5", METRICS_FORMAT_TEXT },
                { ",,;;=,application/openmetrics-text;;", METRICS_FORMAT_OPENMETRICS },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (metrics_format_from_accept(cases[i].accept) != cases[i].f)
                        fail_msg("Accept: %s", cases[i].accept ? cases[i].accept : "(none)");
        assert_string_equal(metrics_content_type(METRICS_FORMAT_TEXT),
                            "text/plain; version=0.0.4; charset=utf-8");
        assert_non_null(strstr(metrics_content_type(METRICS_FORMAT_OPENMETRICS),
                               "application/openmetrics-text; version=1.0.0"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_metric),      cmocka_unit_test(test_info),
                cmocka_unit_test(test_power),       cmocka_unit_test(test_state),
                cmocka_unit_test(test_openmetrics), cmocka_unit_test(test_empty),
                cmocka_unit_test(test_host_vfs),    cmocka_unit_test(test_accept),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
