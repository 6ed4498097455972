/* SPDX-License-Identifier: MIT */
/*
 * The pure power-cap arbitration core: minimum over every combination of host/vm/apml, several
 * VMs, clamping at both ends and the 1 W floor, the default cap, removing the binding source,
 * the read-back classification (incl. the kernel's truncation to whole watts), source
 * management and validation, and power_parse_watts() on good and bad input.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "power-arbitration.h"

#define W(x) ((uint64_t) (x) * POWER_UW_PER_W)
#define NA POWER_UW_UNKNOWN

static const struct power_range mi300 = {
        .cap_min_uw = W(0),
        .cap_max_uw = W(750),
        .default_uw = W(750),
};

static struct power_explanation arbitrate(const struct power_sources *s,
                                          const struct power_range *range) {
        struct power_explanation e;

        assert_int_equal(power_arbitrate(s, range, &e), 0);
        return e;
}

static size_t count_binding(const struct power_explanation *e) {
        size_t n = 0;

        for (size_t i = 0; i < e->n_sources; i++)
                n += e->sources[i].binds;
        return n;
}

/* All 2^3 presence combinations, each with every assignment of distinct values to the present
 * kinds (permutations), so each kind is the minimum at least once where present. */
static void test_all_combinations(void **state) {
        static const uint64_t values[3] = { W(500), W(600), W(700) };
        static const unsigned perms[6][3] = {
                { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
        };
        unsigned checked = 0;

        for (unsigned mask = 0; mask < 8; mask++)
                for (unsigned p = 0; p < 6; p++) {
                        struct power_sources s;
                        struct power_explanation e;
                        uint64_t v[3], min = NA;
                        enum power_source_kind want = POWER_SOURCE_DEFAULT;
                        size_t n = 0;

                        power_sources_init(&s);
                        for (unsigned k = 0; k < 3; k++)
                                v[k] = values[perms[p][k]];
                        if (mask & 1)
                                assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL,
                                                                   NULL, v[0], "uid 0 (amdsmi)",
                                                                   1000),
                                                 1);
                        if (mask & 2)
                                assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "vm-a",
                                                                   "0000:c1:02.0", v[1],
                                                                   "libvirt hook", 2000),
                                                 1);
                        if (mask & 4)
                                assert_int_equal(power_sources_set(&s, POWER_SOURCE_APML, "",
                                                                   NULL, v[2],
                                                                   "apml file /run/amdsmi/apml/x",
                                                                   3000),
                                                 1);
                        for (unsigned k = 0; k < 3; k++)
                                if ((mask & (1u << k)) && v[k] < min) {
                                        min = v[k];
                                        want = (enum power_source_kind) k;
                                }
                        n = (size_t) __builtin_popcount(mask);

                        e = arbitrate(&s, &mi300);
                        assert_int_equal(e.n_sources, n);
                        assert_int_equal(e.binding, want);
                        assert_int_equal(e.clamp, POWER_CLAMP_NONE);
                        if (mask == 0) {
                                assert_true(e.effective_uw == W(750));
                                assert_true(e.requested_uw == NA);
                                assert_int_equal(count_binding(&e), 0);
                        } else {
                                assert_true(e.effective_uw == min);
                                assert_true(e.requested_uw == min);
                                assert_int_equal(count_binding(&e), 1);
                        }
                        assert_string_equal(e.binding_key, want == POWER_SOURCE_VM ? "vm-a" : "");
                        /* listed in tie order; the binding one carries the minimum */
                        for (size_t i = 0; i < e.n_sources; i++) {
                                if (i > 0)
                                        assert_true(e.sources[i - 1].kind < e.sources[i].kind);
                                assert_true(e.sources[i].binds == (e.sources[i].kind == want));
                                if (e.sources[i].kind == POWER_SOURCE_VM) {
                                        assert_string_equal(e.sources[i].setter, "libvirt hook");
                                        assert_string_equal(e.sources[i].vf_bdf, "0000:c1:02.0");
                                        assert_true(e.sources[i].set_usec == 2000);
                                }
                                assert_true(e.sources[i].uw == v[e.sources[i].kind]);
                        }
                        checked++;
                }
        assert_int_equal(checked, 48);
}

static void test_several_vms_and_ties(void **state) {
        struct power_sources s;
        struct power_explanation e;

        power_sources_init(&s);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "zeta", NULL, W(650), "a", 1), 1);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "alpha", NULL, W(600), "b", 2), 1);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "mid", NULL, W(450), "c", 3), 1);
        assert_int_equal(s.n_vms, 3);
        /* sorted by key */
        assert_string_equal(s.vms[0].key, "alpha");
        assert_string_equal(s.vms[1].key, "mid");
        assert_string_equal(s.vms[2].key, "zeta");

        e = arbitrate(&s, &mi300);
        assert_int_equal(e.binding, POWER_SOURCE_VM);
        assert_string_equal(e.binding_key, "mid");
        assert_true(e.effective_uw == W(450));
        assert_true(e.sources[1].binds);
        assert_int_equal(count_binding(&e), 1);

        /* replace: same key, new value → no new entry */
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "mid", "0000:c1:02.1", W(700),
                                           "d", 4),
                         0);
        assert_int_equal(s.n_vms, 3);
        assert_string_equal(power_sources_find_vm(&s, "mid")->vf_bdf, "0000:c1:02.1");
        e = arbitrate(&s, &mi300);
        assert_string_equal(e.binding_key, "alpha");
        assert_true(e.effective_uw == W(600));

        /* ties: equal VMs → the key sorting first; host beats vm; vm beats apml */
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "zeta", NULL, W(600), "a", 5), 0);
        e = arbitrate(&s, &mi300);
        assert_string_equal(e.binding_key, "alpha");
        assert_int_equal(count_binding(&e), 1);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_APML, NULL, NULL, W(600), "bmc", 6),
                         1);
        e = arbitrate(&s, &mi300);
        assert_int_equal(e.binding, POWER_SOURCE_VM);
        assert_string_equal(e.binding_key, "alpha");
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL, NULL, W(600), "uid 0", 7),
                         1);
        e = arbitrate(&s, &mi300);
        assert_int_equal(e.binding, POWER_SOURCE_HOST);
        assert_string_equal(e.binding_key, "");
        assert_true(e.sources[0].binds);
        assert_int_equal(count_binding(&e), 1);
        assert_int_equal(e.n_sources, 5);
        assert_int_equal(e.sources[4].kind, POWER_SOURCE_APML);

        /* clear all VMs */
        assert_int_equal(power_sources_clear_vms(&s), 3);
        assert_int_equal(s.n_vms, 0);
        assert_null(power_sources_find_vm(&s, "alpha"));
        e = arbitrate(&s, &mi300);
        assert_int_equal(e.n_sources, 2);
}

static void test_remove_binding_raises(void **state) {
        struct power_sources s;
        struct power_explanation e;

        power_sources_init(&s);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL, NULL, W(700), "h", 1), 1);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "a", NULL, W(500), "v", 1), 1);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "b", NULL, W(550), "v", 1), 1);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_APML, NULL, NULL, W(600), "p", 1), 1);

        e = arbitrate(&s, &mi300);
        assert_true(e.effective_uw == W(500));
        assert_string_equal(e.binding_key, "a");

        assert_int_equal(power_sources_clear(&s, POWER_SOURCE_VM, "a"), 1);
        assert_int_equal(power_sources_clear(&s, POWER_SOURCE_VM, "a"), 0);
        e = arbitrate(&s, &mi300);
        assert_true(e.effective_uw == W(550));
        assert_string_equal(e.binding_key, "b");

        assert_int_equal(power_sources_clear(&s, POWER_SOURCE_VM, "b"), 1);
        e = arbitrate(&s, &mi300);
        assert_true(e.effective_uw == W(600));
        assert_int_equal(e.binding, POWER_SOURCE_APML);

        assert_int_equal(power_sources_clear(&s, POWER_SOURCE_APML, NULL), 1);
        e = arbitrate(&s, &mi300);
        assert_true(e.effective_uw == W(700));
        assert_int_equal(e.binding, POWER_SOURCE_HOST);

        assert_int_equal(power_sources_clear(&s, POWER_SOURCE_HOST, ""), 1);
        assert_int_equal(power_sources_clear(&s, POWER_SOURCE_HOST, NULL), 0);
        e = arbitrate(&s, &mi300);
        assert_true(e.effective_uw == W(750));
        assert_int_equal(e.binding, POWER_SOURCE_DEFAULT);
        assert_int_equal(e.n_sources, 0);
}

static void test_clamp_and_default(void **state) {
        const struct power_range r = { W(200), W(750), W(700) };
        const struct power_range no_min = { NA, NA, NA };
        const struct power_range bad = { W(800), W(750), W(700) };
        const struct power_range zero_max = { W(0), 500000, NA };
        struct power_sources s;
        struct power_explanation e, keep;

        power_sources_init(&s);
        /* no source → default, unclamped; unknown default → unknown */
        e = arbitrate(&s, &r);
        assert_int_equal(e.binding, POWER_SOURCE_DEFAULT);
        assert_true(e.effective_uw == W(700));
        e = arbitrate(&s, &no_min);
        assert_int_equal(e.binding, POWER_SOURCE_NONE);
        assert_true(e.effective_uw == NA);
        assert_int_equal(e.observed, POWER_OBSERVED_UNKNOWN);

        /* low clamp at cap_min */
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL, NULL, W(150), "h", 1), 1);
        e = arbitrate(&s, &r);
        assert_int_equal(e.clamp, POWER_CLAMP_LOW);
        assert_true(e.effective_uw == W(200));
        assert_true(e.requested_uw == W(150));
        assert_int_equal(e.binding, POWER_SOURCE_HOST);
        assert_true(e.floor_uw == W(200));

        /* exactly at the bounds: no clamp */
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL, NULL, W(200), "h", 1), 0);
        e = arbitrate(&s, &r);
        assert_int_equal(e.clamp, POWER_CLAMP_NONE);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL, NULL, W(750), "h", 1), 0);
        e = arbitrate(&s, &r);
        assert_int_equal(e.clamp, POWER_CLAMP_NONE);
        assert_true(e.effective_uw == W(750));

        /* high clamp at cap_max */
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL, NULL, W(900), "h", 1), 0);
        e = arbitrate(&s, &r);
        assert_int_equal(e.clamp, POWER_CLAMP_HIGH);
        assert_true(e.effective_uw == W(750));
        assert_true(e.requested_uw == W(900));
        assert_true(e.ceiling_uw == W(750));
        /* unknown cap_max: nothing to clamp against */
        e = arbitrate(&s, &no_min);
        assert_int_equal(e.clamp, POWER_CLAMP_NONE);
        assert_true(e.effective_uw == W(900));

        /* the 1 W floor when cap_min is 0 or unknown */
        assert_int_equal(e.floor_uw, W(1));
        e = arbitrate(&s, &mi300);
        assert_true(e.floor_uw == W(1));
        s.host.uw = 500000; /* below 1 W, bypassing validation on purpose */
        e = arbitrate(&s, &mi300);
        assert_int_equal(e.clamp, POWER_CLAMP_LOW);
        assert_true(e.effective_uw == W(1));
        e = arbitrate(&s, &no_min);
        assert_int_equal(e.clamp, POWER_CLAMP_LOW);
        assert_true(e.effective_uw == W(1));

        /* inconsistent ranges; output untouched */
        memset(&keep, 0x5a, sizeof(keep));
        e = keep;
        assert_int_equal(power_arbitrate(&s, &bad, &e), -EINVAL);
        assert_int_equal(power_arbitrate(&s, &zero_max, &e), -EINVAL);
        assert_memory_equal(&e, &keep, sizeof(e));
}

static void test_observed(void **state) {
        struct power_sources s;
        struct power_explanation e;
        enum power_observed o = _POWER_OBSERVED_MAX;

        assert_int_equal(power_compare_observed(W(600), W(600), &o), 0);
        assert_int_equal(o, POWER_OBSERVED_CONSISTENT);
        /* the kernel truncates: 450.5 W applied reads back 450 W */
        assert_int_equal(power_compare_observed(UINT64_C(450500000), W(450), &o), 0);
        assert_int_equal(o, POWER_OBSERVED_CONSISTENT);
        assert_int_equal(power_compare_observed(UINT64_C(450999999), W(450), &o), 0);
        assert_int_equal(o, POWER_OBSERVED_CONSISTENT);
        assert_int_equal(power_compare_observed(UINT64_C(450500000), W(449), &o), 0);
        assert_int_equal(o, POWER_OBSERVED_EXTERNAL);
        assert_int_equal(power_compare_observed(W(600), W(550), &o), 0);
        assert_int_equal(o, POWER_OBSERVED_EXTERNAL);
        assert_int_equal(power_compare_observed(UINT64_C(450500000), W(451), &o), 0);
        assert_int_equal(o, POWER_OBSERVED_OUTSIDE_WRITER);
        assert_int_equal(power_compare_observed(W(600), W(750), &o), 0);
        assert_int_equal(o, POWER_OBSERVED_OUTSIDE_WRITER);
        o = POWER_OBSERVED_EXTERNAL;
        assert_int_equal(power_compare_observed(NA, W(750), &o), -ENODATA);
        assert_int_equal(power_compare_observed(W(750), NA, &o), -ENODATA);
        assert_int_equal(o, POWER_OBSERVED_EXTERNAL);

        power_sources_init(&s);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL, NULL, W(600), "h", 1), 1);
        e = arbitrate(&s, &mi300);
        power_explanation_observe(&e, W(500));
        assert_int_equal(e.observed, POWER_OBSERVED_EXTERNAL);
        assert_true(e.observed_uw == W(500));
        /* the model is kept: the external limiter is reported, never rolled back */
        assert_true(e.effective_uw == W(600));
        assert_int_equal(e.binding, POWER_SOURCE_HOST);
        power_explanation_observe(&e, W(700));
        assert_int_equal(e.observed, POWER_OBSERVED_OUTSIDE_WRITER);
        power_explanation_observe(&e, NA);
        assert_int_equal(e.observed, POWER_OBSERVED_UNKNOWN);

        assert_string_equal(power_observed_to_string(POWER_OBSERVED_EXTERNAL), "external");
        assert_string_equal(power_observed_to_string(POWER_OBSERVED_OUTSIDE_WRITER),
                            "outside-writer");
        assert_string_equal(power_observed_to_string(POWER_OBSERVED_CONSISTENT), "consistent");
        assert_null(power_observed_to_string(_POWER_OBSERVED_MAX));
}

static void test_validate_and_set_errors(void **state) {
        char long_key[POWER_KEY_MAX + 1];
        struct power_sources s, keep;
        enum power_source_kind k = POWER_SOURCE_NONE;

        assert_int_equal(power_validate(0), -EDOM);
        assert_int_equal(power_validate(999999), -EDOM);
        assert_int_equal(power_validate(W(1)), 0);
        assert_int_equal(power_validate(W(4294)), 0);
        assert_int_equal(power_validate(UINT64_C(4294967295)), 0);
        assert_int_equal(power_validate(UINT64_C(4294967296)), -ERANGE);
        assert_int_equal(power_validate(W(5000)), -ERANGE);

        assert_false(power_truncates(W(450)));
        assert_true(power_truncates(UINT64_C(450500000)));
        assert_true(power_truncates(UINT64_C(749999999)));
        assert_false(power_truncates(0));

        power_sources_init(&s);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "a", NULL, W(500), "v", 1), 1);
        keep = s;
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL, NULL, 0, "h", 1),
                         -EDOM);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, NULL, NULL, W(5000), "h", 1),
                         -ERANGE);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_HOST, "x", NULL, W(500), "h", 1),
                         -EINVAL);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, NULL, NULL, W(500), "h", 1),
                         -EINVAL);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "", NULL, W(500), "h", 1),
                         -EINVAL);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_DEFAULT, NULL, NULL, W(500), "h", 1),
                         -EINVAL);
        memset(long_key, 'k', sizeof(long_key) - 1);
        long_key[sizeof(long_key) - 1] = '\0';
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, long_key, NULL, W(500), "h", 1),
                         -ENAMETOOLONG);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "a", "0000:c1:00.0-too-long",
                                           W(400), "h", 1),
                         -ENAMETOOLONG);
        assert_int_equal(power_sources_clear(&s, POWER_SOURCE_VM, NULL), -EINVAL);
        assert_int_equal(power_sources_clear(&s, POWER_SOURCE_APML, "a"), -EINVAL);
        assert_memory_equal(&s, &keep, sizeof(s));

        /* full */
        for (unsigned i = 1; i < POWER_VM_MAX; i++) {
                char key[16];

                snprintf(key, sizeof(key), "vm%03u", i);
                assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, key, NULL, W(500), "v", 1),
                                 1);
        }
        assert_int_equal(s.n_vms, POWER_VM_MAX);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "zz", NULL, W(500), "v", 1),
                         -ENOSPC);
        assert_int_equal(power_sources_set(&s, POWER_SOURCE_VM, "vm010", NULL, W(300), "v", 1),
                         0);
        assert_string_equal(arbitrate(&s, &mi300).binding_key, "vm010");
        assert_int_equal(arbitrate(&s, &mi300).n_sources, POWER_VM_MAX);

        assert_int_equal(power_source_kind_from_string("vm", &k), 0);
        assert_int_equal(k, POWER_SOURCE_VM);
        assert_int_equal(power_source_kind_from_string("default", &k), -EINVAL);
        assert_int_equal(power_source_kind_from_string("external", &k), -EINVAL);
        assert_int_equal(k, POWER_SOURCE_VM);
        assert_string_equal(power_source_kind_to_string(POWER_SOURCE_APML), "apml");
        assert_string_equal(power_clamp_to_string(POWER_CLAMP_HIGH), "high");
}

static void test_parse_watts(void **state) {
        static const struct {
                const char *s;
                int r;
                uint64_t uw;
        } table[] = {
                { "600", 0, W(600) },
                { "600W", 0, W(600) },
                { "600w", 0, W(600) },
                { "600 W", 0, W(600) },
                { "450.5W", 0, UINT64_C(450500000) },
                { "450.5", 0, UINT64_C(450500000) },
                { "600000mW", 0, W(600) },
                { "600000 mw", 0, W(600) },
                { "0.6kW", 0, W(600) },
                { "0.6 KW", 0, W(600) },
                { "1.000001W", 0, UINT64_C(1000001) },
                { "1.0000010W", 0, UINT64_C(1000001) }, /* trailing zeros lose nothing */
                { "1.5mW", 0, UINT64_C(1500) },
                { "0.000000001kW", 0, 1 },
                { "4294.967295", 0, UINT64_C(4294967295) },
                { "0600", 0, W(600) },
                { "0", 0, 0 }, /* syntax only; power_validate() refuses it */
                { "18446744073709.551614", 0, UINT64_C(18446744073709551614) },
                { "1.0000001W", -EINVAL, 0 }, /* below 1 µW */
                { "1.0001mW", -EINVAL, 0 },
                { "", -EINVAL, 0 },
                { "W", -EINVAL, 0 },
                { "-600", -EINVAL, 0 },
                { "+600", -EINVAL, 0 },
                { " 600", -EINVAL, 0 },
                { "600 ", -EINVAL, 0 },
                { "600  W", -EINVAL, 0 },
                { "600W ", -EINVAL, 0 },
                { "600Wx", -EINVAL, 0 },
                { "600MW", -EINVAL, 0 },
                { "600uW", -EINVAL, 0 },
                { "600J", -EINVAL, 0 },
                { ".5W", -EINVAL, 0 },
                { "5.W", -EINVAL, 0 },
                { "5..5", -EINVAL, 0 },
                { "1e3", -EINVAL, 0 },
                { "0x10", -EINVAL, 0 },
                { "6,5", -EINVAL, 0 },
                { "abc", -EINVAL, 0 },
                { "18446744073709.551615", -ERANGE, 0 }, /* UINT64_MAX is "unknown" */
                { "18446744073710", -ERANGE, 0 },
                { "99999999999999999999999", -ERANGE, 0 },
                { "20000000000000kW", -ERANGE, 0 },
        };

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                uint64_t uw = 42;
                int r = power_parse_watts(table[i].s, &uw);

                if (r != table[i].r)
                        fail_msg("\"%s\": got %d, want %d", table[i].s, r, table[i].r);
                if (table[i].r == 0 && uw != table[i].uw)
                        fail_msg("\"%s\": got %llu µW, want %llu", table[i].s,
                                 (unsigned long long) uw, (unsigned long long) table[i].uw);
                if (table[i].r < 0 && uw != 42)
                        fail_msg("\"%s\": output written on failure", table[i].s);
        }
        assert_int_equal(power_parse_watts(NULL, &(uint64_t) { 0 }), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_all_combinations),
                cmocka_unit_test(test_several_vms_and_ties),
                cmocka_unit_test(test_remove_binding_raises),
                cmocka_unit_test(test_clamp_and_default),
                cmocka_unit_test(test_observed),
                cmocka_unit_test(test_validate_and_set_errors),
                cmocka_unit_test(test_parse_watts),
        };

        return cmocka_run_group_tests_name("power-arbitration", tests, NULL, NULL);
}
