/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the performance files' parsers (control/perf.c): pp_dpm_* (amdsmi_clk_levels_
 * parse), pp_od_clk_voltage (amdsmi_od_clk_parse) and pm_policy/ (amdsmi_pm_policy_parse). The
 * first byte picks the parser, the rest is the file's text. Checks the documented contracts:
 * only the documented errors, the output untouched on failure, and what parses is consistent
 * (levels ascending and bounded, the current index in range, min/max present together, policy
 * names printable and ids unique, and amdsmi_pm_policy_find() finds each level back).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <amdsmi/amdsmi.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_levels(const char *s, size_t n) {
        struct amdsmi_clk_levels l, before;
        int r;

        memset(&l, 0x5a, sizeof(l));
        before = l;
        r = amdsmi_clk_levels_parse(s, n, &l);
        if (r < 0) {
                if (r != -ENODATA && r != -EIO && r != -EBADMSG)
                        abort();
                if (memcmp(&l, &before, sizeof(l)) != 0)
                        abort();
                return;
        }
        if (l.n == 0 || l.n > AMDSMI_CLK_LEVELS_MAX)
                abort();
        if (l.current < -1 || l.current >= (int) l.n || (l.deep_sleep && l.current != -1))
                abort();
        for (unsigned i = 1; i < l.n; i++)
                if (l.mhz[i] < l.mhz[i - 1])
                        abort();
        if (amdsmi_clk_levels_min(&l) > amdsmi_clk_levels_max(&l))
                abort();
        (void) amdsmi_clk_levels_current_mhz(&l);
}

static void check_od(const char *s, size_t n) {
        struct amdsmi_od_clk od, before;
        int r;

        memset(&od, 0x5a, sizeof(od));
        before = od;
        r = amdsmi_od_clk_parse(s, n, &od);
        if (r < 0) {
                if (r != -ENODATA && r != -EIO && r != -EBADMSG)
                        abort();
                if (memcmp(&od, &before, sizeof(od)) != 0)
                        abort();
                return;
        }
        if (!od.sclk_present && !od.mclk_present)
                abort();
        if (!od.sclk_present && (od.sclk_min_mhz || od.sclk_max_mhz))
                abort();
        if (!od.mclk_present && (od.mclk_min_mhz || od.mclk_max_mhz))
                abort();
}

static void check_policy(const char *s, size_t n) {
        struct amdsmi_pm_policy p, before;
        int r;

        memset(&p, 0x5a, sizeof(p));
        before = p;
        r = amdsmi_pm_policy_parse(s, n, &p);
        if (r < 0) {
                if (r != -ENODATA && r != -EBADMSG)
                        abort();
                if (memcmp(&p, &before, sizeof(p)) != 0)
                        abort();
                return;
        }
        if (p.n == 0 || p.n > AMDSMI_PM_POLICY_LEVELS_MAX || p.current < -1 ||
            p.current >= (int) p.n)
                abort();
        for (unsigned i = 0; i < p.n; i++) {
                size_t len = strnlen(p.levels[i].name, sizeof(p.levels[i].name));

                if (len == 0 || len == sizeof(p.levels[i].name))
                        abort();
                for (unsigned j = 0; j < i; j++)
                        if (p.levels[j].id == p.levels[i].id)
                                abort();
                /* a name found back is the first level of that name (any case) */
                r = amdsmi_pm_policy_find(&p, p.levels[i].name);
                if (r < 0 || r > (int) i)
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s;

        if (size < 1)
                return 0;
        /* a copy of its own size: a read past the end shows under ASan */
        s = malloc(size - 1 ? size - 1 : 1);
        if (!s)
                return 0;
        memcpy(s, data + 1, size - 1);
        switch (data[0] % 3) {
        case 0:
                check_levels(s, size - 1);
                break;
        case 1:
                check_od(s, size - 1);
                break;
        default:
                check_policy(s, size - 1);
                break;
        }
        free(s);
        return 0;
}
