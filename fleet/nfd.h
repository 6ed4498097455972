/* SPDX-License-Identifier: MIT */
/*
 * The Kubernetes Node Feature Discovery labels of amdsmid (amdsmid(8) KUBERNETES): the text of
 * a feature file of nfd-worker's local source, from what amdsmid knows of the GPUs, the active
 * profile and the sync state. A pure function, so that its output can be checked byte by byte.
 *
 * The file: "# +expiry-time=RFC 3339 UTC" first (nfd-worker drops the labels after it when
 * amdsmid stops rewriting the file), a comment, then one "NAME=VALUE" line per label, every
 * name written in full ("feature.node.kubernetes.io/amdsmi-gpu.*"), never amd.com/ or
 * dcm.amd.com/ (AMD's GPU Operator owns those).
 */
#pragma once

#include <stddef.h>
#include <time.h>

/* Every label's name starts with this (nfd-master's default namespace). */
#define NFD_LABEL_PREFIX "feature.node.kubernetes.io/amdsmi-gpu."
/* The file is rewritten at least this often (amdsmid, at its periodic check), and sooner when
 * a label changes. */
#define NFD_REWRITE_S 60
/* Each writing lets the labels lapse this long after it, should amdsmid die. */
#define NFD_EXPIRY_S 300
/* A Kubernetes label value, and a label name after its "/": at most 63 characters. */
#define NFD_LABEL_MAX 63

/* One GPU (PCI function) as amdsmid sees it. */
struct nfd_gpu {
        const char *product;        /* "MI300X", "MI300X VF" (NULL: unknown) */
        const char *role;           /* amdsmi_role_to_string(): host-side VFs ("vf") are
                                       not GPUs of this node and are skipped */
        const char *compute_mode;   /* "CPX" (NULL or "": unknown) */
        const char *memory_mode;    /* "NPS4" (NULL or "": unknown) */
        const char *pending_memory; /* the mode a driver reload brings (NULL or "": none) */
        unsigned partitions;        /* its compute partitions (KFD nodes) */
};

struct nfd_input {
        const struct nfd_gpu *gpus;
        size_t n_gpus;
        const char *profile;    /* the active profile (NULL or "": none) */
        const char *sync_state; /* "success", "pending", "reload-required", "failed" (NULL:
                                   left out) */
};

/*
 * The feature file for @in, its labels expiring @expiry_s seconds after @now.
 * Labels (after NFD_LABEL_PREFIX):
 *   present                     true, or false when there is no GPU
 *   count                       the GPUs (PFs; in a guest its VFs)
 *   product                     the product when every GPU is one ("MI300X"; a guest's
 *                               "MI300X VF" is "MI300X"), else "mixed"
 *   count.PRODUCT               when mixed: the GPUs of each product
 *   role                        baremetal, host-pf, vf-guest-1vf, vf-guest-multi or mixed
 *   partitions                  the compute partitions (KFD nodes) of every GPU
 *   partition-layout            "cpx_nps4" (compute_memory, lower case; "cpx" when the memory
 *                               mode is unknown) when the same on every GPU, else "mixed"; left
 *                               out when no GPU's modes are known
 *   partition-layout-pending    the same after a driver reload, only while a GPU has a pending
 *                               memory mode
 *   profile                     the active profile, when there is one (left out when the name
 *                               is no valid label value)
 *   sync-state                  @in->sync_state
 * Values are made label values: every character outside [A-Za-z0-9._-] becomes '_', and
 * anything but a letter or digit at either end is removed, cut to NFD_LABEL_MAX.
 * @return 0 and a new string in *ret, or -ENOMEM / -EINVAL (@now out of range).
 */
int nfd_render(const struct nfd_input *in, time_t now, unsigned expiry_s, char **ret);

/* Writes the label value made of @s (see above) into @buf; @return its length (0: nothing is
 * left, the label is left out). */
size_t nfd_label_value(const char *s, char buf[static NFD_LABEL_MAX + 1]);

/* Whether @s is a valid label value as it is (1..63 characters). */
int nfd_label_value_valid(const char *s);
