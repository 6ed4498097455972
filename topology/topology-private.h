/* SPDX-License-Identifier: MIT */
/* The topology slice's library internals, for its library code, unit tests and fuzz targets.
 * Not installed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <amdsmi/amdsmi.h>

/* The io_links then p2p_links of KFD node @node, peers resolved, without the generation check
 * of amdsmi_partition_read_io_links(). */
int topology_read_node_links(struct amdsmi_ctx *ctx, unsigned node, struct amdsmi_io_link **ret,
                             size_t *ret_n);

/* Whether @s is a CPU list as the kernel writes it ("0-47,96-143"): numbers joined by ',' and
 * '-', nothing else. */
bool topology_cpulist_valid(const char *s);
