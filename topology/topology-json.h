/* SPDX-License-Identifier: MIT */
/*
 * The topology slice's core part, for both front ends (amdsmi(1) and amdsmid): the "topology"
 * document, the peer matrix as `amd-smi topology` shows it. Not part of libamdsmi.
 *
 *   gpus             one object per selected GPU: doc_gpu_new()'s keys, numa_node,
 *                    cpu_affinity (the kernel's local_cpulist), hive_id, xgmi_physical_id,
 *                    xgmi_device_id, partitions [{partition, kfd_node}]
 *   links            every ordered pair of selected GPUs (from, to: "0", "1", ...): type
 *                    (SELF, XGMI, PCIE, or NONE when no path is known), hops, weight,
 *                    xgmi_links, min_bandwidth_mbps, max_bandwidth_mbps (null when unknown)
 *   partition_links  when a selected GPU has more than one partition (DPX, QPX, CPX), or -g
 *                    names partitions: every ordered pair of selected partitions (from, to:
 *                    "0.1", ...), with type SAME_GPU for two partitions of one GPU; else []
 *
 * Hops between GPUs of a hive come from xgmi_num_hops (bits 2:0 of the byte of the peer, found
 * by the hive's member order), else from the KFD weight (KFD_CRAT_XGMI_WEIGHT, 15, per hop);
 * xgmi_links from xgmi_num_links. Weight and bandwidth are the KFD io_link's. A PCIe path goes
 * through the CPU nodes: 2 hops on one socket, 3 across (weight: the sum of the links'; the
 * bandwidth: the narrowest GPU link's).
 */
#pragma once

#include <json-c/json.h>

struct doc_query;

/* The type of a pair: its "type" value. */
#define TOPOLOGY_TYPE_SELF "SELF"
#define TOPOLOGY_TYPE_XGMI "XGMI"
#define TOPOLOGY_TYPE_PCIE "PCIE"
#define TOPOLOGY_TYPE_SAME_GPU "SAME_GPU"
#define TOPOLOGY_TYPE_NONE "NONE"

/* KFD's weights (kfd_crat.h): per XGMI hop, and between partitions of one socket. */
#define TOPOLOGY_KFD_XGMI_WEIGHT 15
#define TOPOLOGY_KFD_INTRA_SOCKET_WEIGHT 13

/* The whole document of @q's selection (report_document() with links and partition_links).
 * @return it, or NULL on -ENOMEM or a failure reported through @q's report. */
json_object *topology_document(const struct doc_query *q);
