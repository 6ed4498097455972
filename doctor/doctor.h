/* SPDX-License-Identifier: MIT */
/*
 * The host preflight (amdsmi doctor, amdsmid's Manager.Doctor and GetDocument("doctor")): is
 * this host ready for its GPUs' SR-IOV VMs and for amdsmi's controls? Each check has an id, a
 * status (ok, warn, fail, not_applicable), a summary, the evidence it read and the fix. The
 * checks are pure functions of the facts (doctor-checks.c, unit-tested with hand-made facts);
 * doctor-json.c reads the facts and builds the document for both front ends. Reads only.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

struct doc_query;
struct health_links;

enum doctor_status {
        DOCTOR_OK,
        DOCTOR_WARN,
        DOCTOR_FAIL,
        DOCTOR_NOT_APPLICABLE,
        _DOCTOR_STATUS_MAX,
};

/* "ok", "warn", "fail", "not_applicable" */
const char *doctor_status_to_string(enum doctor_status s);
/* The exit status of the worst check, as `amdsmi health` exits: 0 ok (not_applicable too),
 * 1 a warn, 2 a fail (3: the doctor could not run, never from a check). */
int doctor_exit_status(enum doctor_status worst);
/* The worse of the two (fail > warn > ok > not_applicable). */
enum doctor_status doctor_status_worst(enum doctor_status a, enum doctor_status b);

struct doctor_check {
        const char *id; /* "iommu", "interrupt_remapping", ... */
        int gpu;        /* the GPU's index, -1 for the host */
        char bdf[16];   /* the device checked ("" for the host): a GPU or one of its VFs */
        enum doctor_status status;
        char summary[512];
        char fix[640];         /* "" when nothing is to do */
        json_object *evidence; /* an object: what was read (owned) */
};

void doctor_check_init(struct doctor_check *c, const char *id, int gpu, const char *bdf);
void doctor_check_clear(struct doctor_check *c);
/* {"id", "gpu", "bdf", "status", "summary", "evidence", "fix"} (NULL on -ENOMEM) */
json_object *doctor_check_json(const struct doctor_check *c);

/* ---- the checks (pure) ---------------------------------------------------------------- */

/* Whether the kernel command line @cmdline has parameter @name ("iommu", "amd_iommu") and its
 * value (@value NULL: any value; "" matches a bare "name"). The last one given counts, as the
 * kernel takes it. @return 1, 0. */
int doctor_cmdline_has(const char *cmdline, const char *name, const char *value);
/* The value of the last @name=VALUE of @cmdline into @buf ("" for a bare name). @return 1
 * found, 0 not. */
int doctor_cmdline_get(const char *cmdline, const char *name, char *buf, size_t size);

/* IOMMU on: the IOMMU units (class/iommu) and the kernel command line. */
void doctor_check_iommu(const struct amdsmi_host_info *h, struct doctor_check *ret);
/* Interrupt remapping (/proc/interrupts' IR- chips). */
void doctor_check_interrupt_remapping(const struct amdsmi_host_info *h, struct doctor_check *ret);
/* vfio-pci available (bus/pci/drivers/vfio-pci; /proc/modules); @needed: the host has VFs or
 * an SR-IOV capable PF (else not applicable when missing). */
void doctor_check_vfio_pci(const struct amdsmi_host_info *h, bool needed, struct doctor_check *ret);
/* The IOMMU group of device ret->bdf (a GPU, @vf: one of its VFs): alone in it. @error: 0, or
 * why the group could not be read (-ENOENT: none); @guest: a VM (no IOMMU: not applicable). */
void doctor_check_iommu_group(bool vf, bool guest, int error, const struct amdsmi_iommu_group *g,
                              struct doctor_check *ret);

/* gim's VF count: one entry per GPU driven by gim. */
struct doctor_gim_gpu {
        char bdf[16];
        int desired; /* amdsmid.conf's num_vfs, -1 not set */
        int loaded;  /* gim's vf_num for it as gim was loaded, -1 unknown */
        int num_vfs; /* VFs now (sriov_numvfs), -1 unknown */
};
/* @vf_num: module/gim/parameters/vf_num ("" unknown); @gim_loaded: gim is the PF driver of
 * some GPU (else not applicable). */
void doctor_check_gim(bool gim_loaded, const char *vf_num, const struct doctor_gim_gpu *gpus,
                      size_t n, struct doctor_check *ret);

/* A GPU of an XGMI hive, for the firmware and driver comparison. */
struct doctor_hive_gpu {
        char bdf[16];
        uint64_t hive_id; /* AMDSMI_NA or 0: in no hive */
        char driver[32];
        size_t n_fw;
        const struct amdsmi_firmware *fw;
};
/* The same firmware and driver on every GPU of each hive (ret's gpu: -1, every hive). */
void doctor_check_hive(const struct doctor_hive_gpu *gpus, size_t n, struct doctor_check *ret);

/* XGMI links up (gpu_metrics' xgmi_link_status); @in_hive: the GPU has a hive. */
void doctor_check_xgmi(bool in_hive, const struct health_links *l, struct doctor_check *ret);

/* A device node the GPUs' users need (/dev/kfd, /dev/dri/renderD*). */
struct doctor_node {
        char path[128];
        int error; /* 0, or why stat() failed (-ENOENT: absent) */
        uint32_t mode, uid, gid;
        char group[64];     /* the group's name, "" unknown */
        char members[256];  /* the group's members, comma-separated */
        unsigned n_members; /* -- how many; a group without members: only root uses it */
        bool group_known;
};
/* render/video access: every node present is usable by a group with members (or everyone). */
void doctor_check_access(const struct doctor_node *nodes, size_t n, struct doctor_check *ret);

/* amdsmid running (@running 1, 0, -1 unknown) and its desired state in sync (@sync: "success",
 * "pending", "reload-required", "failed"; @drifted: the settings out of sync, "" none). */
void doctor_check_daemon(int running, const char *sync, const char *drifted,
                         struct doctor_check *ret);

/* RAS enabled (ras/features): @error the read's (amdsmi_gpu_read_ras()); @vf a VF. */
void doctor_check_ras(int error, const struct amdsmi_ras_info *ras, bool vf,
                      struct doctor_check *ret);

/* The retired pages against the threshold; @percent: the warning level (amdsmid.conf's
 * [health] bad_pages_warning_percent). */
void doctor_check_bad_pages(int pages_error, size_t n_pages, int threshold_error,
                            uint32_t threshold, unsigned percent, struct doctor_check *ret);

/* The power cap against the BMC's APML limit: @cap_uw the GPU's PPT0 cap (AMDSMI_NA
 * unknown); @apml_state one of "absent", "empty", "valid", "malformed", "unreadable";
 * @apml_uw with "valid"; @apml_path and @apml_error for the evidence. */
void doctor_check_power(uint64_t cap_uw, const char *apml_state, uint64_t apml_uw,
                        const char *apml_path, const char *apml_error, struct doctor_check *ret);

/* ---- the document ---------------------------------------------------------------------- */

/* The doctor document of @q's GPUs: the envelope, "gpus" (list entries of the selected GPUs),
 * "checks", "summary" (counts per status), "status" (the worst) and "exit_code". @q's
 * doctor_daemon says whether amdsmid runs. NULL on -ENOMEM (reported). */
json_object *doctor_document(const struct doc_query *q);
