/* SPDX-License-Identifier: MIT */
/* Internal: what the fixed-layout and the attribute-encoded gpu_metrics parsers share. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <amdsmi/amdsmi.h>

/* How a raw value becomes the library's unit. */
enum conv {
        CONV_NONE,
        CONV_X10,       /* firmware_timestamp: 10 ns -> ns */
        CONV_X100,      /* pcie_link_speed: 0.1 GT/s -> MT/s */
        CONV_X1000,     /* temperatures: degrees C -> millidegrees C */
        CONV_X1E6,      /* W -> uW, MHz -> Hz */
        CONV_X1E9,      /* mem_max_bandwidth: GB/s -> bytes/s */
        CONV_ENERGY_UJ, /* energy_accumulator: 2^-16 J -> uJ */
};

uint64_t metrics_convert(uint64_t v, enum conv conv);

/* Writes a one-line reason into @reason (may be NULL) and returns -EBADMSG. */
int metrics_invalid(char *reason, size_t reason_size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* The attribute-encoded tables (gpu-metrics-attr.c): gpu_metrics 1.9 into @m, xcp_metrics
 * 1.1 into @pm. The header is checked by the caller (format 1, the content revision). */
int metrics_attr_parse_gpu(const uint8_t *p, size_t len, struct amdsmi_gpu_metrics_ext *m,
                           char *reason, size_t reason_size);
int metrics_attr_parse_partition(const uint8_t *p, size_t len, struct amdsmi_partition_metrics *pm,
                                 char *reason, size_t reason_size);
