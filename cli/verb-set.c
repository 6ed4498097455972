/* SPDX-License-Identifier: MIT */
/*
 * amdsmi set / amdsmi reset: the generic change verbs. Each feature slice handles its own
 * options (partition: -C / -M and --reload-driver, in partition/cli-partition.c); one
 * invocation changes one kind of setting.
 */
#include "config.h"

#include <errno.h>

#include "cli.h"

int verb_set(struct cli *c) {
        if (c->compute != AMDSMI_COMPUTE_UNKNOWN || c->memory != AMDSMI_MEMORY_UNKNOWN)
                return partition_cli_set(c);
        return cli_fail(c, -EINVAL,
                        "nothing to set: give -C/--compute-partition MODE or "
                        "-M/--memory-partition MODE");
}

int verb_reset(struct cli *c) {
        if (c->reload_driver)
                return partition_cli_reset(c);
        return cli_fail(c, -EINVAL, "nothing to reset: give --reload-driver");
}
