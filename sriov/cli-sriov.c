/* SPDX-License-Identifier: MIT */
/*
 * The SR-IOV slice's part of amdsmi(1):
 *
 *   amdsmi sriov [-g SEL]       per PF: the VF count and how it is set, its VFs and their users
 *   amdsmi sriov set -g SEL --num-vfs N [--dry-run] [--force] [--autoprobe-off] [--timeout S]
 *   amdsmi sriov set -g SEL --num-vfs N --persist [--dry-run] [--force]        (gim hosts)
 *   amdsmi sriov bind VF [--dry-run]
 *   amdsmi sriov release VF [--dry-run] [--force]
 *
 * Selection. `amdsmi sriov` shows PFs: a PF selected shows all its VFs; a host VF selected
 * (-g 0000:05:02.0, or its index) shows its PF with the selected VFs only; a VF inside a
 * guest shows nothing (its VF count is the host's business). `sriov set` needs PFs: -g all
 * skips VFs, a VF named explicitly is refused with its PF's number (exit 2), a guest's VF is
 * refused as not supported (exit 4). bind and release take one VF address as their argument
 * (0000:05:02.0 or 05:02.0), checked before anything is opened: malformed (exit 2), no AMD GPU
 * function at that address (exit 3), a PF (exit 2, as the library's EINVAL for "not a VF"), a
 * VF inside a guest (exit 4).
 *
 * Where it runs (cli_change_begin()): through amdsmid when it runs (org.amdsmi1.Sriov of
 * the PF's object: SetNumVfs (SetNumVfsWithTimeout with --timeout), BindVf, ReleaseVf; polkit
 * decides), else in-process as root (and with --direct --force). Both print the same lines and
 * documents: the bodies of the changes and the JSON objects are shared with amdsmid
 * (sriov-json.c). The checks that need no change (the selection, --persist on a PF outside
 * gim, the count against gim's layouts) run here in both cases. Through amdsmid a failed
 * change answers with a D-Bus error that carries amdsmid's document of it after the message:
 * it is printed as the in-process one (only a refusal before any change, such as a denial,
 * comes without one). With --persist each PF is one call, each writing the whole file. `amdsmi sriov` reads through
 * ListVfs() when amdsmid runs (it sees every process's /dev/vfio holders, which an
 * unprivileged caller cannot), in-process with --direct or when the call fails.
 *
 * Changes in-process take the per-GPU lock of the PF (lib/util/gpu-lock.h; bind and release:
 * of the VF's PF) and are recorded in history.jsonl (via "direct"), as amdsmid records its own.
 *
 * The VF count: amdsmi_gpu_set_num_vfs() (its errno is the exit status: 7 above the total, 5
 * while VFs are bound to vfio-pci or in use, 4 where the PF driver cannot configure VFs), then
 * amdsmi_ctx_enumerate() for the VFs that came or went. On gim hosts the count is gim's vf_num
 * module parameter: without --persist the library's explanation and exit 4; with --persist
 * the new count of the selected GPUs (1 to 31, at most the PF's total; a count outside the
 * product's VF layouts of gim's release notes only with --force) goes into
 * /etc/modprobe.d/amdsmi-gim.conf (sriov/gim-modprobe.h) together with the values of every
 * other GPU under gim, under the change locks of all of them. Another configuration file that
 * sets vf_num is a conflict (exit 5, the file named, nothing written). A written count that
 * differs from the one gim runs with waits for gim's next load: exit 8, as a memory partition
 * request waits for a driver reload. --persist on a PF outside gim is refused (exit 4).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bus-errors.h"
#include "cli.h"
#include "exit-codes.h"
#include "gim-modprobe.h"
#include "change.h"
#include "history.h"
#include "parse-util.h"
#include "sriov-json.h"


/* The table's and CSV's helper fields of a PF row. */
static void pf_row_texts(json_object *row, json_object *pf) {
        json_object *f, *modes = NULL;
        char buf[256];
        size_t n = 0;

        if (json_object_object_get_ex(pf, "num_vfs", &f) && f) {
                json_object *t = NULL;

                json_object_object_get_ex(pf, "total_vfs", &t);
                snprintf(buf, sizeof(buf), "%s/%s", json_object_get_string(f),
                         t ? json_object_get_string(t) : "?");
                json_set(row, "vfs_text", json_object_new_string(buf));
        }
        {
                json_object *cm = NULL, *mm = NULL;

                json_object_object_get_ex(pf, "compute_mode", &cm);
                json_object_object_get_ex(pf, "memory_mode", &mm);
                if (cm || mm) {
                        snprintf(buf, sizeof(buf), "%s/%s", cm ? json_object_get_string(cm) : "?",
                                 mm ? json_object_get_string(mm) : "?");
                        json_set(row, "mode_text", json_object_new_string(buf));
                }
        }
        json_object_object_get_ex(pf, "vf_modes", &modes);
        buf[0] = '\0';
        for (size_t i = 0; modes && i < json_object_array_length(modes) && n < sizeof(buf); i++) {
                json_object *m = json_object_array_get_idx(modes, i), *v, *cm, *mm, *cur;

                json_object_object_get_ex(m, "vfs", &v);
                json_object_object_get_ex(m, "compute_mode", &cm);
                json_object_object_get_ex(m, "memory_mode", &mm);
                json_object_object_get_ex(m, "current", &cur);
                n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s%s=%s/%s%s", i ? " " : "",
                                       json_object_get_string(v), json_object_get_string(cm),
                                       json_object_get_string(mm),
                                       json_object_get_boolean(cur) ? "*" : "");
        }
        if (modes)
                json_set(row, "vf_modes_text", json_object_new_string(buf));
}

/* "no", "yes: 4242 (qemu-system-x86), 4243 (...)"; NULL when unknown. */
static json_object *in_use_text(json_object *vf) {
        json_object *in_use = NULL, *users = NULL, *nu = NULL;
        char buf[256];
        size_t n;

        json_object_object_get_ex(vf, "in_use", &in_use);
        if (!in_use)
                return NULL;
        if (!json_object_get_boolean(in_use))
                return json_object_new_string("no");
        json_object_object_get_ex(vf, "users", &users);
        json_object_object_get_ex(vf, "n_users", &nu);
        n = (size_t) snprintf(buf, sizeof(buf), "yes");
        for (size_t i = 0; users && i < json_object_array_length(users) && n < sizeof(buf); i++) {
                json_object *u = json_object_array_get_idx(users, i), *pid, *comm = NULL;

                json_object_object_get_ex(u, "pid", &pid);
                json_object_object_get_ex(u, "comm", &comm);
                n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s %s (%s)", i ? "," : ":",
                                       json_object_get_string(pid),
                                       comm ? json_object_get_string(comm) : "?");
        }
        if (nu && users && json_object_get_int(nu) > (int) json_object_array_length(users) &&
            n < sizeof(buf))
                snprintf(buf + n, sizeof(buf) - n, " and %d more",
                         json_object_get_int(nu) - (int) json_object_array_length(users));
        return json_object_new_string(buf);
}

/* A row: the PF's scalar fields (and helpers), and @vf as "v" (with its helpers). */
static json_object *flat_row(json_object *pf, json_object *vf) {
        json_object *row = json_object_new_object();

        if (!row)
                return NULL;
        json_object_object_foreach(pf, key, val) {
                if (strcmp(key, "vfs") == 0 || strcmp(key, "vf_modes") == 0)
                        continue;
                json_set(row, key, json_object_get(val));
        }
        pf_row_texts(row, pf);
        if (vf) {
                json_object *v = json_object_new_object();

                if (v) {
                        json_object_object_foreach(vf, vkey, vval)
                                json_set(v, vkey, json_object_get(vval));
                        json_set(v, "in_use_text", in_use_text(vf));
                }
                json_set(row, "v", v);
        }
        return row;
}

static const struct column_def pf_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", "BDF", "bdf", 0 },
        { "product", "PRODUCT", "product", 0 },
        { "role", NULL, "role", 0 },
        { "driver", NULL, "driver", 0 },
        { "pf_driver", "DRIVER", "pf_driver", 0 },
        { "capable", NULL, "capable", 0 },
        { "config", "CONFIG", "config", 0 },
        { "num_vfs", NULL, "num_vfs", 0 },
        { "total_vfs", NULL, "total_vfs", 0 },
        { NULL, "VFS", "vfs_text", 0 },
        { "offset", "OFFSET", "offset", 0 },
        { "stride", "STRIDE", "stride", 0 },
        { "vf_device", "VF ID", "vf_device", 0 },
        { "autoprobe", "AUTOPROBE", "autoprobe", 0 },
        { "gim_vf_num", "GIM VF_NUM", "gim_vf_num", 0 },
        { "compute_mode", NULL, "compute_mode", 0 },
        { "memory_mode", NULL, "memory_mode", 0 },
        { NULL, "MODE", "mode_text", 0 },
        { "vf_modes", "GIM VF MODES (* now)", "vf_modes_text", 0 },
};

static const struct column_def vf_columns[] = {
        { "vf_index", "VF", "v.index", 0 },
        { "vf_bdf", "BDF", "v.bdf", 0 },
        { "vf_gpu", "GPU", "v.gpu", 0 },
        { "vf_driver", "DRIVER", "v.driver", 0 },
        { "vf_driver_override", "OVERRIDE", "v.driver_override", 0 },
        { "vf_iommu_group", "IOMMU GROUP", "v.iommu_group", 0 },
        { "vf_vfio_viable", "VIABLE", "v.vfio_viable", 0 },
        { "vf_in_use", NULL, "v.in_use", 0 },
        { "vf_user_pids", NULL, "v.users[].pid", 0 },
        { "vf_user_comms", NULL, "v.users[].comm", 0 },
        { "vf_n_users", NULL, "v.n_users", 0 },
        { NULL, "IN USE", "v.in_use_text", 0 },
};

static json_object *pf_vf_row(json_object *pf, json_object *vf, bool table) {
        return flat_row(pf, vf);
}

/* One line per PF, its VFs indented below it (columns aligned over all PFs and all VFs); in
 * CSV one row per VF with its PF's columns, and a PF without VFs one row, empty VF cells. */
static int print_pfs(struct cli *c, json_object *gpus, bool table) {
        struct output_watch w;
        char stamp[40];

        return output_parents_children(stdout, gpus, "vfs", pf_columns, ELEMENTSOF(pf_columns),
                                       vf_columns, ELEMENTSOF(vf_columns), pf_vf_row, table,
                                       cli_output_watch(c, &w, stamp));
}

int sriov_cli_collect(struct cli *c, json_object **ret) {
        int r = cli_read_document(c, "sriov", ret);

        return r == 0 ? sriov_document_gpus(&c->report, &c->set, false, ret) : r < 0 ? r : 0;
}

static int sriov_sample(struct cli *c) {
        json_object *gpus = NULL;
        int r;

        r = cli_print_daemon_text(c, "sriov");
        if (r != 0)
                return r < 0 ? r : 0;
        r = cli_read_document(c, "sriov", &gpus);
        if (r == 0)
                r = sriov_document_gpus(&c->report, &c->set, c->format != OUTPUT_JSON, &gpus);
        if (r < 0)
                return r;

        switch (c->format) {
        case OUTPUT_JSON:
                return cli_print_document(c, gpus);
        case OUTPUT_CSV:
                r = print_pfs(c, gpus, false);
                break;
        case OUTPUT_TABLE:
                r = json_object_array_length(gpus) > 0 ? print_pfs(c, gpus, true) : 0;
                break;
        }
        return cli_sample_done(c, gpus, r);
}

int verb_sriov(struct cli *c) {
        return cli_open_run(c, sriov_sample);
}

/* ---- changes: shared -------------------------------------------------------------------- */

/* An in-process change in history.jsonl, as amdsmid records its own (via "direct"). */
static void record_direct(struct cli *c, const char *gpu, const char *change,
                          const char *old_value, const char *new_value, int r,
                          const char *message) {
        (void) change_journal_record(&c->journal, (struct history_entry){
                                                          .gpu = gpu,
                                                          .change = change,
                                                          .old_value = old_value,
                                                          .new_value = new_value,
                                                          .result = r,
                                                          .message = message,
                                                  });
}

/* The first message line of @entry, or NULL. */
static const char *first_message(json_object *entry) {
        json_object *lines = NULL;

        if (!entry || !json_object_object_get_ex(entry, "messages", &lines) ||
            json_object_array_length(lines) == 0)
                return NULL;
        return json_object_get_string(json_object_array_get_idx(lines, 0));
}

/* A failed call of amdsmid: its message (several lines for blockers, hints) as the in-process
 * change prints it: the first line as the error, the others after it. @return @r. */
static int daemon_fail(struct cli *c, int r, const char *message) {
        const char *nl;

        if (!message || !message[0])
                return cli_fail(c, r, "amdsmid: %s", strerror(-r));
        nl = strchr(message, '\n');
        cli_fail(c, r, "%.*s", nl ? (int) (nl - message) : (int) strlen(message), message);
        while (nl) {
                const char *line = nl + 1;

                nl = strchr(line, '\n');
                report_note(&c->report, "%.*s", nl ? (int) (nl - line) : (int) strlen(line),
                            line);
        }
        return r;
}

/* The lines of the reply's "messages", as cli_say() prints them in process. */
static void print_messages(struct cli *c, json_object *entry) {
        json_object *lines = NULL;

        if (c->format != OUTPUT_TABLE || !json_object_object_get_ex(entry, "messages", &lines))
                return;
        for (size_t i = 0; i < json_object_array_length(lines); i++)
                printf("%s\n", json_object_get_string(json_object_array_get_idx(lines, i)));
}

/* ---- sriov set -------------------------------------------------------------------------- */

static const struct column_def set_csv_columns[] = {
        { "gpu", NULL, "gpu", 0 },
        { "bdf", NULL, "bdf", 0 },
        { "dry_run", NULL, "dry_run", 0 },
        { "config", NULL, "config", 0 },
        { "num_vfs_requested", NULL, "num_vfs_requested", 0 },
        { "stage", NULL, "report.stage", 0 },
        { "vfs_before", NULL, "report.vfs_before", 0 },
        { "vfs_after", NULL, "report.vfs_after", 0 },
        { "changed", NULL, "report.changed", 0 },
        { "wrote_zero", NULL, "report.wrote_zero", 0 },
        { "autoprobe_off", NULL, "report.autoprobe_off", 0 },
        { "blockers", NULL, "report.blockers[].bdf", 0 },
        { "vfs", NULL, "vfs", 0 },
        { "persist_path", NULL, "persist.path", 0 },
        { "persist_written", NULL, "persist.written", 0 },
        { "persist_vf_num", NULL, "persist.vf_num[].vf_num", 0 },
        { "result", NULL, "result", 0 },
};

static bool selection_has_all(const struct cli *c) {
        if (c->selection.n_items == 0)
                return true;
        for (size_t i = 0; i < c->selection.n_items; i++)
                if (c->selection.items[i].kind == SELECTOR_ALL)
                        return true;
        return false;
}

/* The selected PFs, with their state before. Refuses VFs named explicitly (exit 2) and
 * guests' VFs (exit 4). */
static int collect_targets(struct cli *c, struct sriov_set_target **ret, size_t *ret_n) {
        struct sriov_set_target *t = calloc(c->set.n_gpus + 1, sizeof(*t));
        bool all = selection_has_all(c);
        size_t n = 0;
        int r = 0;

        if (!t)
                return cli_fail(c, -ENOMEM, "out of memory");
        FOREACH_SELECTED_GPU(c, i, gpu) {
                enum amdsmi_role role = amdsmi_gpu_get_role(gpu);
                const char *bdf = amdsmi_gpu_get_bdf(gpu);

                if (role == AMDSMI_ROLE_VF) {
                        const char *pf = amdsmi_gpu_get_physfn_bdf(gpu);

                        if (all)
                                continue;
                        r = cli_fail(c, -EINVAL,
                                     "GPU %zu (%s) is a VF: the VF count is set on its PF, GPU "
                                     "%d (%s)",
                                     i, bdf, sriov_index_of_bdf(&c->set, pf), pf ? pf : "?");
                        break;
                }
                if (sriov_role_is_guest(role)) {
                        r = cli_fail(c, -EOPNOTSUPP,
                                     "GPU %zu (%s) is a VF inside a guest (%s): the VF count is "
                                     "set on the host",
                                     i, bdf, amdsmi_role_to_string(role));
                        break;
                }
                t[n].index = i;
                t[n].gpu = amdsmi_gpu_ref(gpu);
                r = sriov_read_info(gpu, &t[n].info);
                if (r < 0) {
                        amdsmi_gpu_unref(t[n].gpu);
                        r = cli_fail(c, r, "GPU %zu (%s): cannot read its SR-IOV state: %s", i, bdf,
                                     strerror(-r));
                        break;
                }
                n++;
        }
        if (r == 0 && n == 0)
                r = cli_fail(c, -EOPNOTSUPP,
                             "no SR-IOV physical function among the selected "
                             "GPUs");
        if (r < 0) {
                for (size_t i = 0; i < n; i++) {
                        amdsmi_gpu_unref(t[i].gpu);
                        free(t[i].info);
                }
                free(t);
                return r;
        }
        *ret = t;
        *ret_n = n;
        return 0;
}

/* In-process: the count through sriov_numvfs, each PF recorded in the history. */
static void set_direct(struct cli *c, struct sriov_run *s, struct sriov_set_target *targets,
                       size_t n, int *result) {
        bool changed = false;

        for (size_t i = 0; i < n; i++) {
                const char *bdf = amdsmi_gpu_get_bdf(targets[i].gpu);
                char old_value[16], new_value[16];
                int r;

                r = sriov_set_one(s, &targets[i], result);
                json_set(targets[i].entry, "result", cli_errno_json(r));
                if (r == 0 && !c->report.dry_run)
                        changed = true;
                if (c->report.dry_run)
                        continue;
                snprintf(old_value, sizeof(old_value), "%u", targets[i].info->num_vfs);
                snprintf(new_value, sizeof(new_value), "%u", c->sriov.num_vfs);
                if (r < 0) {
                        json_object *report = NULL, *msg = NULL;

                        if (json_object_object_get_ex(targets[i].entry, "report", &report) &&
                            report)
                                json_object_object_get_ex(report, "message", &msg);
                        record_direct(c, bdf, "num_vfs", old_value, new_value, r,
                                      msg ? json_object_get_string(msg) : strerror(-r));
                } else
                        record_direct(c, bdf, "num_vfs", old_value, new_value, 0,
                                      first_message(targets[i].entry));
        }
        if (changed)
                sriov_set_refresh_vfs(s, targets, n);
}

/* In-process: gim's vf_num for every target at once, recorded for every GPU under gim. */
static void persist_direct(struct cli *c, struct sriov_run *s, struct sriov_set_target *targets,
                           size_t n, int *result) {
        _cleanup_free_ char *old_list = NULL, *new_list = NULL;
        json_object *persist = NULL, *list = NULL;
        int r;

        r = sriov_persist_run(s, targets, n, result, &old_list, &new_list);
        for (size_t i = 0; i < n; i++)
                json_set(targets[i].entry, "result",
                         cli_errno_json(r < 0 && r != -ERELOAD_REQUIRED ? r : 0));
        if (c->report.dry_run || !new_list)
                return;
        /* the file covers every GPU under gim: each one's history says so */
        if (json_object_object_get_ex(targets[0].entry, "persist", &persist) && persist)
                json_object_object_get_ex(persist, "vf_num", &list);
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *bdf = NULL;

                if (json_object_object_get_ex(json_object_array_get_idx(list, i), "bdf", &bdf))
                        record_direct(c, json_object_get_string(bdf), "gim_vf_num", old_list, new_list,
                                      r == -ERELOAD_REQUIRED ? 0 : r,
                                      r < 0 && r != -ERELOAD_REQUIRED
                                              ? c->report.error_message
                                              : "written for gim's next load");
        }
}

/* Through amdsmid: one SetNumVfs() per PF; its entry replaces ours. */
static void set_daemon(struct cli *c, struct sriov_run *s, json_object *gpus,
                       struct sriov_set_target *targets, size_t n, int *result) {
        uint64_t flags = (c->report.dry_run ? AMDSMI_BUS_FLAG_DRY_RUN : 0) |
                         (c->force ? AMDSMI_BUS_FLAG_FORCE : 0) |
                         (c->sriov.autoprobe_off ? AMDSMI_BUS_FLAG_AUTOPROBE_OFF : 0) |
                         (c->sriov.persist ? AMDSMI_BUS_FLAG_PERSIST : 0);
        bool pending = false;
        int r;

        /* the checks of a --persist count need nothing of amdsmid: the same lines here, and as
         * in-process, one refused count refuses the command */
        for (size_t i = 0; c->sriov.persist && i < n; i++) {
                r = sriov_check_gim_count(s, &targets[i]);
                if (r < 0) {
                        sriov_run_fail(result, r);
                        for (size_t k = 0; k < n; k++)
                                json_set(targets[k].entry, "result", cli_errno_json(r));
                        return;
                }
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *message = NULL;
                json_object *reply = NULL, *persist = NULL, *content = NULL;

                if (c->timeout_ms)
                        r = cli_bus_call(c, NULL, amdsmi_gpu_get_bdf(targets[i].gpu),
                                         AMDSMI_BUS_IFACE_SRIOV, "SetNumVfsWithTimeout", 0, &reply,
                                         &message, "uut", (uint32_t) c->sriov.num_vfs,
                                         (uint32_t) c->timeout_ms, flags);
                else
                        r = cli_bus_call(c, NULL, amdsmi_gpu_get_bdf(targets[i].gpu),
                                         AMDSMI_BUS_IFACE_SRIOV, "SetNumVfs", 0, &reply, &message,
                                         "ut", (uint32_t) c->sriov.num_vfs, flags);
                if (!json_object_is_type(reply, json_type_object)) {
                        json_object_put(reply);
                        reply = NULL;
                        if (r >= 0)
                                r = -EBADMSG;
                }
                if (!reply) { /* no report (a denial): the message alone */
                        sriov_run_fail(result, daemon_fail(c, r, message));
                        json_set(targets[i].entry, "result", cli_errno_json(r));
                        continue;
                }
                /* amdsmid's report, also of a failed change, replaces ours */
                json_object_array_put_idx(gpus, i, reply);
                targets[i].entry = reply;
                print_messages(c, reply);
                if (r < 0) {
                        sriov_run_fail(result, daemon_fail(c, r, message));
                        json_set(reply, "result", cli_errno_json(r));
                        continue;
                }
                if (c->report.dry_run && c->sriov.persist && c->format == OUTPUT_TABLE &&
                    json_object_object_get_ex(reply, "persist", &persist) && persist &&
                    json_object_object_get_ex(persist, "content", &content) && content)
                        fputs(json_object_get_string(content), stdout);
                if (sriov_persist_pending(reply))
                        pending = true;
        }
        if (pending)
                sriov_run_fail(result, cli_fail(c, -ERELOAD_REQUIRED, SRIOV_GIM_PENDING_MESSAGE));
}

int verb_sriov_set(struct cli *c) {
        struct sriov_set_target *targets = NULL;
        struct sriov_run s = { .report = &c->report,
                                 .set = &c->set,
                                 .ch = { .num_vfs = c->sriov.num_vfs,
                                         .force = c->force,
                                         .autoprobe_off = c->sriov.autoprobe_off,
                                         .timeout_ms = c->timeout_ms } };
        json_object *gpus = NULL;
        size_t n = 0;
        int r, route, result = 0;

        if (!c->sriov.num_vfs_set)
                return cli_fail(c, -EINVAL, "sriov set needs --num-vfs N");
        if (c->sriov.num_vfs > UINT16_MAX)
                return cli_fail(c, -ERANGE, "%u VFs is out of range: a PF has at most %u",
                                c->sriov.num_vfs, (unsigned) UINT16_MAX);
        if (c->sriov.persist && c->sriov.autoprobe_off)
                return cli_fail(c, -EINVAL,
                                "--autoprobe-off is for the sysfs path "
                                "(sriov_numvfs), not for --persist");
        route = cli_change_begin(c, "VFs belong to the whole GPU");
        if (route < 0)
                return route;
        r = collect_targets(c, &targets, &n);
        if (r < 0)
                return r;

        for (size_t i = 0; c->sriov.persist && i < n; i++) {
                r = sriov_check_persist(&s, &targets[i]);
                if (r < 0)
                        goto finish;
        }

        gpus = json_object_new_array();
        if (!gpus) {
                r = cli_fail(c, -ENOMEM, "out of memory");
                goto finish;
        }
        for (size_t i = 0; i < n; i++) {
                targets[i].entry = sriov_set_entry_new(&s, &targets[i]);
                if (!targets[i].entry) {
                        r = cli_fail(c, -ENOMEM, "out of memory");
                        goto finish;
                }
                json_object_array_add(gpus, targets[i].entry);
        }

        if (route == CLI_ROUTE_DAEMON)
                set_daemon(c, &s, gpus, targets, n, &result);
        else if (c->sriov.persist)
                persist_direct(c, &s, targets, n, &result);
        else
                set_direct(c, &s, targets, n, &result);

        /* CSV rows say whether it was a dry run; the JSON says it once, at the top */
        for (size_t i = 0; c->format == OUTPUT_CSV && i < n; i++)
                json_set(targets[i].entry, "dry_run", json_object_new_boolean(c->report.dry_run));
        r = cli_emit_change(c, gpus, result, set_csv_columns, ELEMENTSOF(set_csv_columns));

finish:
        json_object_put(gpus);
        for (size_t i = 0; i < n; i++) {
                amdsmi_gpu_unref(targets[i].gpu);
                free(targets[i].info);
        }
        free(targets);
        return r;
}

/* ---- sriov bind / release --------------------------------------------------------------- */

static const struct column_def vf_csv_columns[] = {
        { "gpu", NULL, "gpu", 0 },
        { "bdf", NULL, "bdf", 0 },
        { "pf_bdf", NULL, "pf_bdf", 0 },
        { "dry_run", NULL, "dry_run", 0 },
        { "operation", NULL, "operation", 0 },
        { "stage", NULL, "report.stage", 0 },
        { "driver_before", NULL, "report.driver_before", 0 },
        { "driver_after", NULL, "report.driver_after", 0 },
        { "override_before", NULL, "report.override_before", 0 },
        { "override_after", NULL, "report.override_after", 0 },
        { "changed", NULL, "report.changed", 0 },
        { "result", NULL, "result", 0 },
};

/* The VF argument: "0000:05:02.0" or "05:02.0" (any case), nothing else: no path can get
 * through. @return 0 and the kernel's spelling in @ret (16 bytes), or -EINVAL (reported). */
static int parse_vf_argument(struct cli *c, const char *arg, char *ret) {
        struct selector s;

        if (!arg)
                return cli_fail(c, -EINVAL, "'%s' needs a VF: amdsmi %s 0000:05:02.0", c->report.command,
                                c->report.command);
        if (pci_bdf_valid(arg)) {
                snprintf(ret, 16, "%s", arg);
                return 0;
        }
        if (selector_parse(arg, &s) == 0 && s.kind == SELECTOR_BDF && pci_bdf_valid(s.bdf) &&
            strlen(s.bdf) < 16) {
                snprintf(ret, 16, "%s", s.bdf);
                return 0;
        }
        return cli_fail(c, -EINVAL,
                        "invalid VF address '%s': expected a PCI address such as 0000:05:02.0 "
                        "or 05:02.0",
                        arg);
}

static int vf_change(struct cli *c, enum sriov_vf_op op) {
        struct sriov_run s = { .report = &c->report,
                                 .set = &c->set,
                                 .ch = { .num_vfs = c->sriov.num_vfs,
                                         .force = c->force,
                                         .autoprobe_off = c->sriov.autoprobe_off,
                                         .timeout_ms = c->timeout_ms } };
        struct amdsmi_vf_bind_report rep = { .size = sizeof(rep) };
        struct amdsmi_gpu *vf = NULL;
        json_object *gpus = NULL, *e = NULL;
        char bdf[16];
        const char *pf;
        enum amdsmi_role role;
        int r, k, route, result = 0;

        if (c->selection.n_items > 0)
                return cli_fail(c, -EINVAL, "'%s' takes the VF as its argument, not -g",
                                c->report.command);
        r = parse_vf_argument(c, c->argument, bdf);
        if (r < 0)
                return r;
        route = cli_change_begin(c, NULL);
        if (route < 0)
                return route;

        r = amdsmi_ctx_find_gpu(c->set.ctx, bdf, &vf);
        if (r < 0)
                return cli_fail(c, -ENODEV,
                                "no AMD GPU function at %s (no such PCI device, or not an AMD "
                                "GPU)",
                                bdf);
        k = sriov_index_of_bdf(&c->set, bdf);
        role = amdsmi_gpu_get_role(vf);
        if (sriov_role_is_guest(role))
                return cli_fail(c, -EOPNOTSUPP,
                                "%s (GPU %d) is a VF inside a guest (%s): VFs are bound to "
                                "vfio-pci on the host",
                                bdf, k, amdsmi_role_to_string(role));
        pf = amdsmi_gpu_get_physfn_bdf(vf);
        if (role != AMDSMI_ROLE_VF || !pf)
                return cli_fail(c, -EINVAL,
                                "%s (GPU %d, %s) is a physical function: '%s' takes one of its "
                                "VFs ('amdsmi sriov -g %d' lists them)",
                                bdf, k, amdsmi_role_to_string(role), c->report.command, k);

        if (route == CLI_ROUTE_DAEMON) {
                _cleanup_free_ char *message = NULL;
                uint64_t flags = (c->report.dry_run ? AMDSMI_BUS_FLAG_DRY_RUN : 0) |
                                 (c->force ? AMDSMI_BUS_FLAG_FORCE : 0);

                r = cli_bus_call(c, NULL, pf, AMDSMI_BUS_IFACE_SRIOV,
                                 op == SRIOV_VF_BIND ? "BindVf" : "ReleaseVf", 0, &e, &message,
                                 "st", bdf, flags);
                if (!json_object_is_type(e, json_type_object)) {
                        json_object_put(e);
                        e = NULL;
                        if (r >= 0)
                                r = -EBADMSG;
                }
                if (!e) /* no report (a denial): the message alone */
                        return daemon_fail(c, r, message);
                /* amdsmid's report, also of a failed change: its lines, then the error */
                print_messages(c, e);
                if (r < 0) {
                        sriov_run_fail(&result, daemon_fail(c, r, message));
                        json_set(e, "result", cli_errno_json(r));
                }
        } else {
                r = sriov_vf_change(&s, op, vf, k, pf, &result, &e, &rep);
                if (!e)
                        return r;
                if (!c->report.dry_run) {
                        char old_value[64], new_value[64];

                        snprintf(old_value, sizeof(old_value), "%s %s", bdf,
                                 sriov_or_none(rep.driver_before));
                        snprintf(new_value, sizeof(new_value), "%s %s", bdf,
                                 sriov_or_none(rep.driver_after));
                        record_direct(c, pf, op == SRIOV_VF_BIND ? "bind_vf" : "release_vf", old_value,
                                      new_value, r,
                                      r < 0 ? (rep.message[0] ? rep.message : strerror(-r))
                                            : first_message(e));
                }
        }

        gpus = json_object_new_array();
        if (!gpus) {
                json_object_put(e);
                return cli_fail(c, -ENOMEM, "out of memory");
        }
        json_object_array_add(gpus, e);
        if (c->format == OUTPUT_CSV)
                json_set(e, "dry_run", json_object_new_boolean(c->report.dry_run));
        r = cli_emit_change(c, gpus, result, vf_csv_columns, ELEMENTSOF(vf_csv_columns));
        json_object_put(gpus);
        return r;
}

int verb_sriov_bind(struct cli *c) {
        return vf_change(c, SRIOV_VF_BIND);
}

int verb_sriov_release(struct cli *c) {
        return vf_change(c, SRIOV_VF_RELEASE);
}
