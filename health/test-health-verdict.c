/* SPDX-License-Identifier: MIT */
/* The health verdict (health-verdict.c) fed structs: each rule on both sides of its boundary,
 * and the [health] thresholds of amdsmid.conf. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "amdsmid-conf.h"
#include "health-json.h"

#define HOUR_US (UINT64_C(3600) * 1000000u)

/* A healthy GPU: UMC and GFX readable with no errors, 10 bad pages of 100, CPER readable and
 * empty, resets known and none. */
static void healthy(struct health_input *in) {
        memset(in, 0, sizeof(*in));
        in->now.ras.size = sizeof(in->now.ras);
        for (size_t b = 0; b < _AMDSMI_RAS_BLOCK_MAX; b++)
                in->now.ras.blocks[b].error = -ENOENT;
        in->now.ras.blocks[AMDSMI_RAS_BLOCK_UMC] =
                (struct amdsmi_ras_count){ .source = AMDSMI_RAS_SOURCE_ACA };
        in->now.ras.blocks[AMDSMI_RAS_BLOCK_GFX] =
                (struct amdsmi_ras_count){ .source = AMDSMI_RAS_SOURCE_ACA };
        in->now.usec = 10 * HOUR_US;
        in->n_bad_pages = 10;
        in->threshold = 100;
        in->resets_known = true;
        in->last_reset_age_usec = UINT64_MAX;
        /* 7 XGMI links up (the 8th n/a), PCIe x16 at 32 GT/s, errors followed and none */
        in->links.xgmi_known = 0x7f;
        in->links.pcie_width = in->links.pcie_max_width = 16;
        in->links.pcie_speed_mts = in->links.pcie_max_speed_mts = 32000;
        in->links.pcie_replays = 0;
        in->link_errors_known = true;
        in->last_replays_age_usec = in->last_xgmi_error_age_usec = UINT64_MAX;
}

static const struct health_reason *find(const struct health_verdict *v, const char *code) {
        for (size_t i = 0; i < v->n_reasons; i++)
                if (strcmp(v->reasons[i].code, code) == 0)
                        return &v->reasons[i];
        return NULL;
}

static void test_ok(void **state) {
        struct health_input in;
        struct health_verdict v;

        (void) state;
        healthy(&in);
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        /* one sample: the rate is a note, not a problem */
        assert_non_null(find(&v, "ce_rate_not_evaluated"));
        assert_int_equal(find(&v, "ce_rate_not_evaluated")->severity, HEALTH_SEVERITY_INFO);
        assert_int_equal(health_exit_status(v.state), 0);
}

static void test_ue(void **state) {
        struct health_input in;
        struct health_verdict v;

        (void) state;
        healthy(&in);
        in.now.ras.blocks[AMDSMI_RAS_BLOCK_GFX].ce = 5;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        in.now.ras.blocks[AMDSMI_RAS_BLOCK_UMC].ue = 1;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_CRITICAL);
        assert_non_null(find(&v, "uncorrectable_errors"));
        assert_non_null(strstr(find(&v, "uncorrectable_errors")->text, "umc 1"));
        assert_int_equal(health_exit_status(v.state), 2);
}

static void test_ce_rate(void **state) {
        struct health_thresholds t;
        struct health_input in;
        struct health_sample prev;
        struct health_verdict v;

        (void) state;
        health_thresholds_default(&t);
        t.ce_rate_warning_per_hour = 100;
        healthy(&in);
        prev = in.now;
        prev.usec = in.now.usec - HOUR_US;
        in.previous = &prev;
        /* exactly 100 in an hour: not above */
        prev.ras.blocks[AMDSMI_RAS_BLOCK_UMC].ce = 50;
        in.now.ras.blocks[AMDSMI_RAS_BLOCK_UMC].ce = 150;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        assert_null(find(&v, "ce_rate"));
        assert_null(find(&v, "ce_rate_not_evaluated"));
        /* 101: above */
        in.now.ras.blocks[AMDSMI_RAS_BLOCK_UMC].ce = 151;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);
        assert_non_null(find(&v, "ce_rate"));
        assert_int_equal(health_exit_status(v.state), 1);
        /* over half an hour, 51 is above 100 per hour, 50 is not */
        prev.usec = in.now.usec - HOUR_US / 2;
        in.now.ras.blocks[AMDSMI_RAS_BLOCK_UMC].ce = 100;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        in.now.ras.blocks[AMDSMI_RAS_BLOCK_UMC].ce = 101;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);
        /* a previous sample that failed: not evaluated */
        prev.error = -EBUSY;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        assert_non_null(find(&v, "ce_rate_not_evaluated"));
}

static void test_counts_backwards(void **state) {
        struct health_input in;
        struct health_sample prev;
        struct health_verdict v;

        (void) state;
        healthy(&in);
        prev = in.now;
        prev.usec = in.now.usec - HOUR_US;
        in.previous = &prev;
        /* a reload: 5000 before, 3 after: a note and 3 counted, never a negative delta */
        prev.ras.blocks[AMDSMI_RAS_BLOCK_UMC].ce = 5000;
        in.now.ras.blocks[AMDSMI_RAS_BLOCK_UMC].ce = 3;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        assert_non_null(find(&v, "counts_reset"));
        assert_null(find(&v, "ce_rate"));
        /* the same going up: no note */
        prev.ras.blocks[AMDSMI_RAS_BLOCK_UMC].ce = 2;
        health_judge(NULL, &in, &v);
        assert_null(find(&v, "counts_reset"));
}

static void test_bad_pages(void **state) {
        struct health_thresholds t;
        struct health_input in;
        struct health_verdict v;

        (void) state;
        health_thresholds_default(&t);
        assert_int_equal(t.bad_pages_warning_percent, 90);
        healthy(&in);
        in.n_bad_pages = 89;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        in.n_bad_pages = 90;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);
        assert_non_null(find(&v, "bad_pages_near_threshold"));
        in.n_bad_pages = 99;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);
        assert_null(find(&v, "bad_pages_rma"));
        in.n_bad_pages = 100;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_CRITICAL);
        assert_non_null(find(&v, "bad_pages_rma"));
        assert_null(find(&v, "bad_pages_near_threshold"));
        /* another percentage */
        t.bad_pages_warning_percent = 50;
        in.n_bad_pages = 49;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        in.n_bad_pages = 50;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);

        /* pending: warning; unreservable: critical */
        healthy(&in);
        in.n_pending = 1;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);
        assert_non_null(find(&v, "bad_pages_pending"));
        in.n_unreservable = 1;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_CRITICAL);
        assert_non_null(find(&v, "bad_pages_unreservable"));

        /* threshold not readable without root: said, not judged */
        healthy(&in);
        in.n_bad_pages = 1000;
        in.threshold_error = -EACCES;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        assert_non_null(find(&v, "bad_page_threshold_not_evaluated"));
        assert_non_null(strstr(find(&v, "bad_page_threshold_not_evaluated")->text, "needs root"));
        /* garbage in the file: unknown */
        healthy(&in);
        in.bad_pages_error = -EBADMSG;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_UNKNOWN);
        /* no bad-page file (an APU): nothing to judge */
        healthy(&in);
        in.bad_pages_error = -ENODATA;
        in.threshold_error = -ENODATA;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
}

static void test_cper(void **state) {
        struct health_input in;
        struct health_verdict v;

        (void) state;
        healthy(&in);
        in.n_cper_fatal = 0;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        in.n_cper_fatal = 1;
        strcpy(in.cper_fatal_id, "0:3");
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_CRITICAL);
        assert_non_null(strstr(find(&v, "cper_fatal")->text, "0:3"));
        in.cper_error = -EACCES;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        assert_non_null(strstr(find(&v, "cper_not_evaluated")->text, "needs root"));
}

static void test_reset(void **state) {
        struct health_thresholds t;
        struct health_input in;
        struct health_verdict v;

        (void) state;
        health_thresholds_default(&t);
        assert_int_equal(t.reset_window_minutes, 60);
        healthy(&in);
        in.last_reset_age_usec = HOUR_US;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        in.last_reset_age_usec = HOUR_US - 1;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);
        assert_non_null(find(&v, "recent_reset"));
        in.resets_known = false;
        health_judge(&t, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        assert_non_null(find(&v, "reset_not_evaluated"));
}

static void test_unknown(void **state) {
        struct health_input in;
        struct health_verdict v;

        (void) state;
        healthy(&in);
        in.now.error = -EACCES;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_UNKNOWN);
        assert_non_null(find(&v, "ras_unreadable"));
        assert_int_equal(health_exit_status(v.state), 3);
        healthy(&in);
        in.now.ras.blocks[AMDSMI_RAS_BLOCK_GFX].error = -EBADMSG;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_UNKNOWN);
        assert_non_null(find(&v, "ras_block_unreadable"));
        /* critical wins over unknown */
        in.now.ras.blocks[AMDSMI_RAS_BLOCK_UMC].ue = 2;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_CRITICAL);
        /* no RAS at all */
        healthy(&in);
        in.now.error = -ENODATA;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_UNKNOWN);

        assert_int_equal(health_state_worst(HEALTH_OK, HEALTH_UNKNOWN), HEALTH_UNKNOWN);
        assert_int_equal(health_state_worst(HEALTH_UNKNOWN, HEALTH_WARNING), HEALTH_WARNING);
        assert_int_equal(health_state_worst(HEALTH_CRITICAL, HEALTH_UNKNOWN), HEALTH_CRITICAL);
}

static void test_config(void **state) {
        struct config *c = NULL;
        struct health_thresholds t;
        char err[256];

        (void) state;
        assert_int_equal(config_parse_string("t.conf", "[daemon]\n", &c, err, sizeof(err)), 0);
        health_thresholds_from_config(c, &t);
        assert_int_equal(t.ce_rate_warning_per_hour, 100);
        assert_int_equal(t.bad_pages_warning_percent, 90);
        assert_int_equal(t.reset_window_minutes, 60);
        assert_int_equal(c->health.events, CONFIG_HEALTH_EVENTS_AUTO);
        c = config_free(c);

        assert_int_equal(config_parse_string("t.conf",
                                             "[health]\nce_rate_warning_per_hour = 5\n"
                                             "bad_pages_warning_percent = 100\n"
                                             "reset_window_minutes = 0\nevents = no\n",
                                             &c, err, sizeof(err)),
                         0);
        health_thresholds_from_config(c, &t);
        assert_int_equal(t.ce_rate_warning_per_hour, 5);
        assert_int_equal(t.bad_pages_warning_percent, 100);
        assert_int_equal(t.reset_window_minutes, 0);
        assert_int_equal(c->health.events, CONFIG_HEALTH_EVENTS_NO);
        c = config_free(c);

        assert_int_equal(config_parse_string("t.conf",
                                             "[health]\nbad_pages_warning_percent = 101\n", &c, err,
                                             sizeof(err)),
                         -ERANGE);
        assert_non_null(strstr(err, "t.conf:2: bad_pages_warning_percent 101 out of range"));
        assert_int_equal(config_parse_string("t.conf", "[health]\nbad_pages_warning_percent = 0\n",
                                             &c, err, sizeof(err)),
                         -ERANGE);
        assert_int_equal(config_parse_string("t.conf", "[health]\nce_rate_warning_per_hour = 0\n",
                                             &c, err, sizeof(err)),
                         -ERANGE);
        assert_int_equal(
                config_parse_string("t.conf", "[health]\nevents = maybe\n", &c, err, sizeof(err)),
                -EINVAL);
        assert_non_null(strstr(err, "bad events \"maybe\" (auto, yes or no)"));
        assert_int_equal(
                config_parse_string("t.conf", "[health]\nenforce = yes\n", &c, err, sizeof(err)),
                -EINVAL);
        assert_non_null(strstr(err, "unknown key \"enforce\" in [health]"));
        assert_int_equal(
                config_parse_string("t.conf", "[health]\n[health]\n", &c, err, sizeof(err)),
                -EINVAL);
        assert_null(c);
}

static void test_links(void **state) {
        struct health_input in;
        struct health_verdict v;

        (void) state;
        healthy(&in);
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        assert_null(find(&v, "link_errors_not_evaluated"));

        /* an XGMI link down */
        in.links.xgmi_down = 1u << 3;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);
        assert_string_equal(find(&v, "xgmi_link_down")->text, "XGMI link 3 down (6 of 7 up)");
        in.links.xgmi_down = (1u << 3) | (1u << 5);
        health_judge(NULL, &in, &v);
        assert_string_equal(find(&v, "xgmi_link_down")->text, "XGMI links 3, 5 down (5 of 7 up)");
        in.links.xgmi_down = 0;

        /* PCIe: narrower is degraded; slower alone is power management, a note */
        in.links.pcie_width = 8;
        in.links.pcie_speed_mts = 16000;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);
        assert_string_equal(find(&v, "pcie_link_degraded")->text, "PCIe link x8 of x16 at 16.0 GT/s");
        in.links.pcie_width = 16;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        assert_int_equal(find(&v, "pcie_link_slower")->severity, HEALTH_SEVERITY_INFO);
        in.links.pcie_speed_mts = 32000;
        in.links.pcie_max_width = AMDSMI_NA; /* unknown: no judgement */
        in.links.pcie_width = 4;
        health_judge(NULL, &in, &v);
        assert_null(find(&v, "pcie_link_degraded"));
        in.links.pcie_width = in.links.pcie_max_width = 16;

        /* replays and XGMI errors: a warning while within the reset window (60 min) */
        in.last_replays_age_usec = 59 * 60 * 1000000ULL;
        in.replays_in_window = 12;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);
        assert_non_null(find(&v, "pcie_replays"));
        in.last_replays_age_usec = 60 * 60 * 1000000ULL;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        in.last_xgmi_error_age_usec = 5 * 1000000ULL;
        in.xgmi_errors_total = 3;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_WARNING);
        assert_string_equal(find(&v, "xgmi_errors")->text,
                            "XGMI errors 5 s ago (3 counted since amdsmid started)");

        /* without amdsmid: a note for a GPU with links, nothing for one without */
        in.link_errors_known = false;
        health_judge(NULL, &in, &v);
        assert_int_equal(v.state, HEALTH_OK);
        assert_int_equal(find(&v, "link_errors_not_evaluated")->severity, HEALTH_SEVERITY_INFO);
        in.links.xgmi_known = 0;
        in.links.pcie_replays = AMDSMI_NA;
        health_judge(NULL, &in, &v);
        assert_null(find(&v, "link_errors_not_evaluated"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ok),        cmocka_unit_test(test_ue),
                cmocka_unit_test(test_ce_rate),   cmocka_unit_test(test_counts_backwards),
                cmocka_unit_test(test_bad_pages), cmocka_unit_test(test_cper),
                cmocka_unit_test(test_reset),     cmocka_unit_test(test_unknown),
                cmocka_unit_test(test_config),    cmocka_unit_test(test_links),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
