/* SPDX-License-Identifier: MIT */
/*
 * amdsmi set / amdsmi reset: the generic change verbs. Each feature slice handles its own
 * options (partition: -C / -M and --reload-driver, in partition/cli-partition.c; power: -o and
 * --power-cap, in power/cli-power.c; the GPU reset: -G, in control/cli-reset.c); one
 * invocation changes one kind of setting.
 */
#include "config.h"

#include <errno.h>

#include "cli.h"

int verb_set(struct cli *c) {
        bool partition = c->partition.compute != AMDSMI_COMPUTE_UNKNOWN || c->partition.memory != AMDSMI_MEMORY_UNKNOWN;

        if (c->perf.n_given && (partition || c->power.cap || c->perf.n_given > 1))
                return cli_fail(c, -EINVAL,
                                "one setting per command: -C/-M, -o, -l, -d, -L, -p or -x");
        if (c->perf.n_given)
                return perf_cli_set(c);
        if (partition && c->power.cap)
                return cli_fail(c, -EINVAL,
                                "one kind of setting per command: -C/-M (partition) or -o (power "
                                "cap)");
        if (partition)
                return partition_cli_set(c);
        if (c->power.cap)
                return power_cli_set_cap(c);
        return cli_fail(c, -EINVAL,
                        "nothing to set: give -C/--compute-partition MODE, "
                        "-M/--memory-partition MODE, -o/--power-cap WATTS, -l/--perf-level "
                        "LEVEL, -d/--perf-determinism SCLK_MHZ, -L/--clk-limit sclk|mclk "
                        "min|max MHZ, -p/--soc-pstate POLICY or -x/--xgmi-plpd POLICY");
}

int verb_reset(struct cli *c) {
        unsigned kinds = (unsigned) c->partition.reload_driver + (unsigned) c->power.cap +
                         (unsigned) c->gpu_reset.gpureset + c->perf.n_given;

        if (kinds > 1)
                return cli_fail(c, -EINVAL,
                                "one kind of reset per command: -G/--gpureset, --reload-driver, "
                                "--power-cap, -d/--perf-determinism or -c/--clocks");
        if (c->gpu_reset.gpureset)
                return reset_cli_gpu_reset(c);
        if (c->perf.n_given)
                return perf_cli_reset(c);
        if (c->partition.reload_driver)
                return partition_cli_reset(c);
        if (c->power.cap)
                return power_cli_reset_cap(c);
        return cli_fail(c, -EINVAL,
                        "nothing to reset: give -G/--gpureset, --reload-driver, --power-cap, "
                        "-d/--perf-determinism or -c/--clocks");
}
