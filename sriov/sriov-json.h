/* SPDX-License-Identifier: MIT */
/*
 * The SR-IOV slice's documents and change bodies, shared by amdsmi(1) (cli-sriov.c: the read
 * verb and the in-process changes) and amdsmid (dbus-sriov.c: ListVfs() and the jobs of
 * SetNumVfs(), BindVf() and ReleaseVf()), so that a change answers with the same JSON object
 * and the same lines wherever it ran:
 *
 *   sriov_pf_json()        one PF of `amdsmi sriov --json` (ListVfs())
 *   sriov_set_one()        the VF count through sriov_numvfs        } one element of "gpus" of
 *   sriov_persist_run()    gim's vf_num in /etc/modprobe.d          } `amdsmi sriov set --json`
 *   sriov_vf_change()      a VF to vfio-pci and back: one element of "gpus" of `sriov bind`
 *
 * Lines for an operator go to the run's report (core/report.h): report_say() (the "messages"
 * of the entry; stdout in amdsmi(1)'s tables), report_fail() (the error), sriov_note() (more
 * lines after the error, and warnings: "amdsmi: " lines on stderr in amdsmi(1); collected for
 * the error message in amdsmid, whose report prints nothing).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#include "gpu-set.h"
#include "macro.h"
#include "report.h"

/* What a written gim file that differs from what gim runs with says (exit status 8). */
#define SRIOV_GIM_PENDING_MESSAGE \
        "the VF count waits for gim's next load (modprobe -r gim; modprobe gim) or a reboot"

/* Where a change runs. */
/* What an SR-IOV change asks for. */
struct sriov_change {
        unsigned num_vfs;        /* sriov set: the VF count */
        bool force;
        bool autoprobe_off;      /* sriov set: sriov_drivers_autoprobe 0 */
        unsigned timeout_ms;     /* 0: the library's default */
};

struct sriov_run {
        struct report *report;      /* the run's report (its dry_run) */
        const struct gpu_set *set;  /* the context and selection */
        struct sriov_change ch;
        bool daemon; /* amdsmid: the job holds the GPU locks already, and notes go to @notes */
        FILE *notes; /* amdsmid: where sriov_note() writes its lines ("\n"-terminated) */
};

/* A line after the error, or a warning: "amdsmi: <line>" on stderr (amdsmi), or a line of
 * @s->notes (amdsmid). */
void sriov_note(struct sriov_run *s, const char *format, ...) _printf_(2, 3);

bool sriov_role_is_guest(enum amdsmi_role r);
/* The index of @bdf in @c's context, -1 if none. */
int sriov_index_of_bdf(const struct gpu_set *set, const char *bdf);
const char *sriov_or_none(const char *s);
/* "sysfs", "gim-param", ...; NULL for unknown. */
const char *sriov_config_name(enum amdsmi_vf_config c);
/* amdsmi_gpu_read_sriov() into a new struct. @return 0 or a negative errno. */
int sriov_read_info(struct amdsmi_gpu *gpu, struct amdsmi_sriov_info **ret);
/* Records a failure: the first one decides the exit status. @return @r. */
int sriov_run_fail(int *result, int r);

/* One PF of `amdsmi sriov --json`: its SR-IOV state and its VFs (all of them, or those
 * selected in @c). Problems with single values go to @c's errors. NULL on -ENOMEM. */
json_object *sriov_pf_json(struct report *rep, const struct gpu_set *set, size_t index,
                           struct amdsmi_gpu *gpu, bool all_vfs);
/* The same with all its VFs and its "state", as `amdsmi sriov` shows a PF (a PF in reset or
 * without a driver: null values and one errors entry). NULL on -ENOMEM. */
json_object *sriov_pf_state_json(struct report *rep, const struct gpu_set *set, size_t index,
                                 struct amdsmi_gpu *gpu);

/*
 * The "gpus" of `amdsmi sriov`: one object per PF the selection of @set concerns, in
 * enumeration order: a selected PF with all its VFs, the PF of a selected VF with the VFs
 * selected; each with its "state" (gpu_state_collect(): a PF in reset or without a driver has
 * null values and one errors entry). When only guests' VFs are selected there is none:
 * @guest_note then says so with report_note() (a guest's VFs are configured on the host).
 * @return 0 and the array in *ret,
 * or a negative errno (reported).
 */
int sriov_document_gpus(struct report *rep, const struct gpu_set *set, bool guest_note,
                        json_object **ret);

/* ---- sriov set ---------------------------------------------------------------------------- */

struct sriov_set_target {
        size_t index;
        struct amdsmi_gpu *gpu;         /* a reference: it outlives the enumeration after the
                                           change */
        struct amdsmi_sriov_info *info; /* before */
        json_object *entry;
};

/* The entry of a target before the change (report, persist, result null; vfs as before). */
json_object *sriov_set_entry_new(const struct sriov_run *s, const struct sriov_set_target *t);

/* --persist on a PF that is not under gim: refused (reported). @return 0 or -EOPNOTSUPP. */
int sriov_check_persist(struct sriov_run *s, const struct sriov_set_target *t);
/* The count of --persist against gim's range, the PF's total and the product's VF layouts
 * (warnings through sriov_note()). @return 0 or -ERANGE (reported). */
int sriov_check_gim_count(struct sriov_run *s, const struct sriov_set_target *t);

/* The VF count through sriov_numvfs for one PF (@s->ch, the report's dry_run); fills the entry's "report" and messages. Takes the PF's
 * lock unless @s->daemon or a dry run. @return 0 or the negative errno (reported, and in
 * *result if it is the first). */
int sriov_set_one(struct sriov_run *s, struct sriov_set_target *t, int *result);

/* After changes: enumerates @s->c's context again and sets each entry's "vfs" to the PF's
 * VFs now. */
void sriov_set_refresh_vfs(struct sriov_run *s, struct sriov_set_target *targets, size_t n);

/* gim's vf_num of the targets for gim's next load (@s->ch, the report's dry_run): checks,
 * the change locks of every GPU under gim (unless @s->daemon or a dry run), the file built and
 * written, "persist" and the messages in the entries. *ret_old and *ret_new (may be NULL) get
 * the vf_num lists before and after ("8,8,8,8", malloc'd) once the file is built.
 * @return 0, -ERELOAD_REQUIRED (written, and it differs from what gim runs with), or a
 * negative errno (reported, and in *result if it is the first). */
int sriov_persist_run(struct sriov_run *s, struct sriov_set_target *targets, size_t n, int *result,
                      char **ret_old, char **ret_new);

/* Whether the entry of a written --persist waits for gim's next load: some value of the file
 * differs from the one gim runs with. */
bool sriov_persist_pending(json_object *entry);

/* ---- sriov bind / release ----------------------------------------------------------------- */

enum sriov_vf_op {
        SRIOV_VF_BIND,
        SRIOV_VF_RELEASE,
};

/*
 * Binds @vf (a host VF of the PF @pf; @index its GPU index) to vfio-pci or releases it
 * (the report's dry_run, @s->ch.force), under the PF's change lock unless @s->daemon or a dry run. The entry
 * (one element of "gpus" of `sriov bind --json`) in *ret_entry, also on failure (NULL only
 * when out of memory); the report in *ret_report (may be NULL).
 * @return 0 or a negative errno (reported, and in *result).
 */
int sriov_vf_change(struct sriov_run *s, enum sriov_vf_op op, struct amdsmi_gpu *vf, int index,
                    const char *pf, int *result, json_object **ret_entry,
                    struct amdsmi_vf_bind_report *ret_report);
