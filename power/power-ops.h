/* SPDX-License-Identifier: MIT */
/*
 * The power slice's model of one GPU and its one change procedure, shared by amdsmi(1)
 * (reads, and changes made in-process) and amdsmid (org.amdsmi1.Power), so that both show
 * the same documents and change the same way (ARCHITECTURE §5 "Power"):
 *
 *   - the view: the device's caps and range (libamdsmi), the sources recorded in the state
 *     file, the BMC agent's APML file merged in, the arbitration and what the device holds
 *     compared with it; as the per-GPU object of `amdsmi power --json` (Explain());
 *   - a change (power_change_gpu()): optionally the GPU's change lock, the state file's
 *     exclusive lock, the values checked against the GPU's range, the sources changed, the
 *     arbitrated cap applied once and read back once, the applied cap recorded and the state
 *     committed; its report is the GPU's object of the change document ("gpus"[i] of
 *     `amdsmi power set --json`), including "messages".
 *
 * Lines and failures go through the run's report (core/report.h: report_say(), report_fail()):
 * amdsmi(1) prints them as they come, amdsmid answers with the report's documents.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#include "power-apml.h"
#include "power-arbitration.h"
#include "power-state.h"

struct report;
struct power_limit;
struct sample_pair;

/* GPU change lock and state lock: power changes take milliseconds. */
#define POWER_LOCK_WAIT_MS 10000

/* The setter of a host source that amdsmid keeps from amdsmid.conf's power_cap: such a source
 * has the origin "config"; any other host source was set by a call ("runtime") and overrides
 * the configuration until it is cleared. */
#define POWER_SETTER_CONFIG "amdsmid.conf"

/* What a source's setter says about where it comes from: "config" (amdsmid.conf), "file"
 * (the APML file) or "runtime" (a call: amdsmi, amdsmid, the libvirt hook). */
const char *power_source_origin(enum power_source_kind kind, const char *setter);

/* ---- the view of one GPU ------------------------------------------------------------------ */

struct power_view {
        struct amdsmi_power_info info;
        int info_error;
        struct power_sources sources; /* the recorded ones, with the APML file merged */
        struct apml_file apml;
        bool apml_used;
        struct power_explanation expl;
        int expl_error; /* < 0: the GPU's range is inconsistent */
        uint64_t applied_uw, applied_usec;
        char damaged[640]; /* a damaged record of the state that concerns the GPU ("" none):
                              the model leaves it out */
};

/* Reads the device only (amdsmi_gpu_read_power() with @read_flags); no source yet. */
void power_view_read_device(struct amdsmi_gpu *gpu, uint64_t read_flags, struct power_view *v);
/* Sets the recorded sources (NULL: none) and the applied record (AMDSMI_NA: none), reads
 * and merges the APML file of @bdf, arbitrates and compares with the device. */
void power_view_set_sources(struct power_view *v, const char *bdf,
                            const struct power_sources *recorded, uint64_t applied_uw,
                            uint64_t applied_usec);
/* Both, with the sources of the state @st (NULL: none). */
void power_view_load(struct amdsmi_gpu *gpu, const struct state_store *st, uint64_t read_flags,
                     struct power_view *v);

/* Whether a cap can be applied under @c (hwmon, vf). */
bool power_control_can_apply(enum amdsmi_power_control c);
/* "host", "vm", "apml", "default", "external", "outside-writer", or NULL (nothing known). */
const char *power_view_effective_source(const struct power_view *v);

/* The per-GPU object of `amdsmi power --json`: gpu, bdf, product, role and the view. A failed
 * read of the device is reported through report_field_error(). NULL on -ENOMEM. */
json_object *power_gpu_object(struct report *rep, size_t index, struct amdsmi_gpu *gpu,
                              const struct power_view *v);
/* What a power limiter of the GPU ran against: the binding source ("external" or
 * "outside-writer" when the device holds another cap than the model), the VM's key, and the
 * cap the device holds (the model's when the device's cannot be read). */
void power_view_limit(const struct power_view *v, struct power_limit *ret);

/* Adds "limiters" (samples.h; @pair NULL: one sample, unknown) to a GPU's object of
 * `amdsmi power`, and to its "notes" the sentence of a power limiter that held the GPU. */
void power_gpu_object_add_limiters(json_object *o, const struct power_view *v,
                                   const struct sample_pair *pair);

/* Adds the table and CSV helpers "sources_text" and "range_text" to such an object, computed
 * from its JSON (so that a document from amdsmid prints as one read in-process). */
void power_gpu_object_add_text(json_object *o);

/* ---- changes ---------------------------------------------------------------------------- */

enum power_change_kind {
        POWER_CHANGE_SET,
        POWER_CHANGE_CLEAR,
        POWER_CHANGE_APPLY, /* no source changes: apply the arbitrated cap again */
};

struct power_change {
        enum power_change_kind kind;
        bool host, apml, vm;
        bool damaged;                     /* CLEAR: drop the state file's damaged records of
                                             the GPU (state_drop_damaged()) */
        uint64_t host_uw, apml_uw, vm_uw; /* SET: valid values (power_validate()) */
        const char *vm_name, *vf_bdf;     /* vm: the key (power_vm_name_ok()), the VF or NULL */
        const char *host_option;          /* how messages name the host value: "--host", "-o" */
        const char *setter;               /* who sets the sources (state "setter") */
        bool lock;                        /* take the GPU's change lock (in-process changes;
                                             amdsmid's jobs hold it already) */
        /* amdsmid: after the change, bring a host source without a runtime setter in line
         * with amdsmid.conf's power_cap (config_set, config_uw; config_setter is recorded) */
        bool sync_config;
        bool config_set;
        uint64_t config_uw;
        const char *config_setter;
};

/* What a change did, for the history and amdsmid's bookkeeping. */
struct power_outcome {
        char old_value[512]; /* "host=none; cap 750W" */
        char new_value[512]; /* "host=600W; cap 600W" */
        char message[2048];  /* the first failure, in full, or the last line said */
        char warning[512];   /* the state file's warning (a corrupt file kept aside), or "" */
        char config_warning[256]; /* amdsmid.conf's power_cap refused for this GPU, or "" */
        bool applied;        /* power1_cap was written */
        bool limited;        /* ... and reads back lower: an external limiter */
        uint64_t applied_uw, readback_uw;
};

/* A VM key as the CLI and amdsmid accept it: 1 to POWER_KEY_MAX - 1 bytes, no control
 * characters. */
bool power_vm_name_ok(const char *s);

/* The "changes" array of the change document. */
json_object *power_change_list(const struct power_change *ch);

/* A GPU's object of the change document before the change: gpu, bdf, product, dry_run,
 * changes, and null control, apply, before, after and result, an empty messages. */
json_object *power_change_entry_new(const struct power_change *ch, size_t index, const char *bdf,
                                    const char *product, bool dry_run);
/* Sets control, before and after of @entry to @v (a change that changed nothing). */
void power_change_entry_set_view(json_object *entry, const struct power_view *v);

/*
 * Changes the sources of @gpu as @ch says (nothing with the report's dry_run, which takes no lock and
 * writes nothing), applies the arbitrated cap, and fills @entry (see
 * power_change_entry_new()) and @out. Failures are reported with report_fail(): -EINVAL,
 * -ERANGE (a value outside the GPU's range, the driver refused the value, 64 VMs), -ENOENT
 * (no source of that VM to clear), -EOPNOTSUPP (where the cap cannot be applied; on gim
 * hosts after the sources were recorded), -EBUSY (the locks, a reset in progress), -EIO,
 * the errno of the state file.
 * @return 0 or a negative errno.
 */
int power_change_gpu(struct report *rep, const struct power_change *ch, size_t index,
                     struct amdsmi_gpu *gpu, json_object *entry, struct power_outcome *out);
