/* SPDX-License-Identifier: MIT */
/**
 * @file amdsmi-topology.h
 * How the GPUs are wired: the KFD io_links of each compute partition (XGMI and PCIe links to
 * the other nodes, with their weight and bandwidth), the XGMI hive files of a physical GPU
 * (device and physical ids, hive id, hops and link counts per hive member), and where a GPU
 * sits in the host (NUMA node, CPUs close to it).
 *
 * Everything here is read from sysfs as the kernel writes it, and every read is tolerant: a
 * file that does not exist (no XGMI on this GPU, an older kernel) is -ENOENT or AMDSMI_NA, a
 * file that does not parse is -EBADMSG. Only amdsmi_gpu_read_xgmi_error() has a side effect:
 * reading that file clears the register behind it.
 */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct amdsmi_ctx;
struct amdsmi_gpu;
struct amdsmi_partition;

/* ---- KFD io_links ----------------------------------------------------------------------- */

/** KFD's link types (the CRAT IO link types of the `type` key); other values may appear. */
#define AMDSMI_IO_LINK_TYPE_UNDEFINED 0
#define AMDSMI_IO_LINK_TYPE_HYPERTRANSPORT 1
#define AMDSMI_IO_LINK_TYPE_PCIE 2
#define AMDSMI_IO_LINK_TYPE_XGMI 11

/**
 * "pcie", "xgmi", "hypertransport", "undefined" for the types above, "other" for any other
 * value. @since 0.2
 */
const char *amdsmi_io_link_type_to_string(unsigned type);

/**
 * One link of a KFD node: `io_links/<M>/properties` or `p2p_links/<M>/properties` of
 * `/sys/class/kfd/kfd/topology/nodes/<N>/`. Numbers the file does not give are AMDSMI_NA
 * (older kernels lack some keys); type, node_from and node_to are always given.
 */
struct amdsmi_io_link {
        unsigned type;        /**< AMDSMI_IO_LINK_TYPE_*: 11 XGMI, 2 PCIe, ... */
        bool p2p;             /**< from p2p_links/ (a peer-to-peer path), not io_links/ */
        unsigned node_from;   /**< the KFD node the link starts at */
        unsigned node_to;     /**< the KFD node it leads to (a CPU or a GPU partition) */
        uint64_t weight;      /**< KFD's NUMA weight: larger is farther */
        uint64_t min_latency; /**< as the kernel says it (often 0) */
        uint64_t max_latency;
        uint64_t min_bandwidth; /**< MB/s */
        uint64_t max_bandwidth; /**< MB/s */
        uint64_t flags;         /**< CRAT_IOLINK_FLAGS_* (bit 0: enabled) */
        /** The partition @c node_to is (of this or another GPU of the context), NULL when it is
         * a CPU node or a node no GPU of the context has. Valid as long as the partition
         * handle is (see amdsmi_partition_check()). */
        struct amdsmi_partition *peer;
};

/**
 * Parses the text of one link's properties file: `key value` lines, decimal values (the
 * kernel's `iolink_show`); unknown keys are ignored, a known key given twice is an error.
 * @c p2p and @c peer are set to false / NULL.
 * @return 0, or -EBADMSG (empty, a value that is no number, type / node_from / node_to
 * missing or out of range); *@ret_link is untouched on failure.
 * @since 0.2
 */
int amdsmi_io_link_parse(const char *text, struct amdsmi_io_link *ret_link) AMDSMI_WARN_UNUSED
        AMDSMI_NONNULL(1, 2);

/**
 * Reads the io_links and then the p2p_links of a partition's KFD node, in the kernel's order,
 * with @c peer resolved. A link file that cannot be read or parsed is left out (logged at debug
 * priority). The KFD generation is checked around the reads: a partition whose nodes were
 * renumbered meanwhile is -ESTALE.
 * @param ret_links a new array (free it with free()); NULL when there is none.
 * @param ret_n its length.
 * @return 0, -ESTALE (the partition is gone), -ENOENT (the node has no io_links directory),
 * -ENOMEM or another negative errno of listing the directory.
 * @since 0.2
 */
int amdsmi_partition_read_io_links(struct amdsmi_partition *part, struct amdsmi_io_link **ret_links,
                                   size_t *ret_n) AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2, 3);

/**
 * The link from partition @p from to partition @p to (of this or another GPU of the context),
 * or with @p to NULL, the PCIe link of @p from to its CPU node: the io_link (else p2p_link) of
 * @p from's KFD node whose node_to is @p to's node. One read when the kernel's numbering
 * holds (the CPU first, then the other GPU nodes of the hive in node order: kfd_crat.c), else
 * the node's links are read until it is found. For the pairs of many partitions this reads
 * a file per pair, not the whole directory per partition.
 * The KFD generation is not checked (a batch of calls would read it twice each): call
 * amdsmi_partition_check() before and after them.
 * @return 0, -ENOENT (no direct link: the path goes through the CPU), -ESTALE (a partition
 * handle of an older enumeration) or another negative errno of the reads.
 * @since 0.2
 */
int amdsmi_partition_find_io_link(struct amdsmi_partition *from, struct amdsmi_partition *to,
                                  struct amdsmi_io_link *ret_link) AMDSMI_WARN_UNUSED
        AMDSMI_NONNULL(1, 3);

/**
 * Reads the io_links and p2p_links of KFD node @p node of the context's topology, as
 * amdsmi_partition_read_io_links() does for a partition: for the CPU nodes, whose links to each
 * other make the PCIe path between GPUs of two sockets. Node numbers change when partitions
 * do: check a partition handle
 * (amdsmi_partition_check()) around the call.
 * @return 0, -ENOENT (no such node or no io_links directory), -ENOMEM or another negative
 * errno.
 * @since 0.2
 */
int amdsmi_ctx_read_kfd_node_io_links(struct amdsmi_ctx *ctx, unsigned node,
                                      struct amdsmi_io_link **ret_links,
                                      size_t *ret_n) AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 3, 4);

/* ---- XGMI ------------------------------------------------------------------------------- */

/** The most hive members xgmi_num_hops / xgmi_num_links list (the XGMI TA's node table). */
#define AMDSMI_XGMI_MAX_NODES 64

/** The hop count of one byte of xgmi_num_hops (bits 2:0). @since 0.2 */
unsigned amdsmi_xgmi_hops(uint8_t raw);
/** The link type of one byte of xgmi_num_hops (bits 7:6: 0 xGMI2, 1 xGMI3). @since 0.2 */
unsigned amdsmi_xgmi_link_type(uint8_t raw);

/**
 * Parses xgmi_num_hops or xgmi_num_links: one two-digit hex byte per hive member, each followed
 * by a space (`%02x `), then an optional newline.
 * @param ret_bytes up to @p max bytes.
 * @param ret_n how many were given.
 * @return 0, -EBADMSG (anything else: empty, a byte not of two hex digits, a missing
 * separator) or -E2BIG (more than @p max bytes); the outputs are untouched on failure.
 * @since 0.2
 */
int amdsmi_xgmi_parse_bytes(const char *text, uint8_t *ret_bytes, size_t max,
                            size_t *ret_n) AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2, 4);

/** What amdsmi_gpu_read_xgmi() fills. Set @c size to sizeof(struct amdsmi_xgmi_info). */
struct amdsmi_xgmi_info {
        size_t size;
        uint64_t device_id;   /**< xgmi_device_id (the XGMI node id); AMDSMI_NA if none */
        uint64_t physical_id; /**< xgmi_physical_id (the GPU's place in the hive, decimal as
                                   the kernel writes it); AMDSMI_NA if none */
        uint64_t hive_id;     /**< xgmi_hive_info/xgmi_hive_id; AMDSMI_NA if none */
        int hops_error;       /**< 0, or why @c hops is empty: -ENOENT (no file), -EBADMSG */
        int links_error;      /**< the same for @c links */
        size_t n_hops;        /**< entries in @c hops (the hive's members, this GPU too) */
        size_t n_links;       /**< entries in @c links */
        uint8_t hops[AMDSMI_XGMI_MAX_NODES];  /**< raw bytes: amdsmi_xgmi_hops(),
                                                   amdsmi_xgmi_link_type() */
        uint8_t links[AMDSMI_XGMI_MAX_NODES]; /**< XGMI links to each member */
        /** The PCI address of each hive member, in the order of @c hops and @c links (the
         * hive's join order, from the xgmi_hive_info/node<K> links, K = 1, 2, ...); "" when
         * unknown. */
        char members[AMDSMI_XGMI_MAX_NODES][16];
        size_t n_members; /**< members listed (0 without xgmi_hive_info) */
};

/**
 * Reads the XGMI files of a GPU: xgmi_device_id, xgmi_physical_id,
 * xgmi_hive_info/xgmi_hive_id, xgmi_num_hops, xgmi_num_links and the hive's members. Never
 * reads xgmi_error (see amdsmi_gpu_read_xgmi_error()). A list shorter or longer than the hive
 * is given as it is: callers match entries to members by index and treat the missing ones as
 * unknown.
 * @return 0 (each part may still be unknown), -ENOENT if the GPU has no xgmi_device_id (the
 * driver creates the XGMI files together, for a GPU with XGMI only), -EINVAL if @c size is
 * too small.
 * @since 0.2
 */
int amdsmi_gpu_read_xgmi(struct amdsmi_gpu *gpu,
                         struct amdsmi_xgmi_info *ret_info) AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1, 2);

/** xgmi_error's values. */
enum amdsmi_xgmi_error {
        AMDSMI_XGMI_ERROR_NONE = 0,     /**< no error since the last read */
        AMDSMI_XGMI_ERROR_ONE = 1,      /**< one error */
        AMDSMI_XGMI_ERROR_MULTIPLE = 2, /**< more than one */
};

/**
 * Reads xgmi_error, the XGMI error status of the GPU since the previous read.
 *
 * **Reading CLEARS the register**: the kernel zeroes the status when the file is read, so a
 * second reader sees "none" for an error the first one consumed. Call it from one place only,
 * the one that keeps the running total for everyone else (on a host with amdsmid, amdsmid's
 * place: other programs should not read it there), never from a read-only listing. Nothing
 * else in the library reads this file (amdsmi_gpu_read_xgmi() does not).
 * @return 0, -ENOENT (no XGMI), -EINVAL (the driver cannot read the register), -EBADMSG (a
 * value other than 0, 1, 2) or another negative errno.
 * @since 0.2
 */
int amdsmi_gpu_read_xgmi_error(struct amdsmi_gpu *gpu,
                               enum amdsmi_xgmi_error *ret_status) AMDSMI_WARN_UNUSED
        AMDSMI_NONNULL(1, 2);

/* ---- host placement --------------------------------------------------------------------- */

/**
 * The CPUs close to the GPU: its PCI device's local_cpulist, as the kernel writes it
 * ("0-47,96-143").
 * @param ret_cpulist a new string (free it with free()).
 * @return 0, -ENOENT (no such file), -EBADMSG (not a CPU list) or another negative errno.
 * @since 0.2
 */
int amdsmi_gpu_read_local_cpulist(struct amdsmi_gpu *gpu, char **ret_cpulist) AMDSMI_WARN_UNUSED
        AMDSMI_NONNULL(1, 2);

#ifdef __cplusplus
}
#endif
