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
 * Changes take the per-GPU lock of the PF (lib/util/gpu-lock.h; bind and release: of the VF's
 * PF). Until amdsmid exists they run in-process and need root (cli_authorise_change()).
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
 * request waits for a driver reload. --persist on a PF outside gim is refused (exit 4): its
 * sysfs VF count is not persisted until amdsmid keeps a desired state.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "exit-codes.h"
#include "gim-modprobe.h"
#include "gpu-lock.h"
#include "parse-util.h"

#define BIND_LOCK_WAIT_MS 10000 /* bind and release take milliseconds: queue up behind others */

/* ---- helpers ---------------------------------------------------------------------------- */

static bool role_is_guest(enum amdsmi_role r) {
        return r == AMDSMI_ROLE_VF_GUEST_1VF || r == AMDSMI_ROLE_VF_GUEST_MULTI;
}

static int index_of_bdf(struct cli *c, const char *bdf) {
        for (size_t i = 0; bdf && i < amdsmi_ctx_get_gpu_count(c->ctx); i++) {
                struct amdsmi_gpu *g = amdsmi_ctx_get_gpu(c->ctx, i);

                if (g && strcmp(amdsmi_gpu_get_bdf(g), bdf) == 0)
                        return (int) i;
        }
        return -1;
}

static json_object *str_or_null(const char *s) {
        return s && *s ? json_object_new_string(s) : NULL;
}

static const char *or_none(const char *s) {
        return s && *s ? s : "none";
}

static struct amdsmi_sriov_info *info_new(void) {
        struct amdsmi_sriov_info *info = calloc(1, sizeof(*info));

        if (info)
                info->size = sizeof(*info);
        return info;
}

static int read_info(struct amdsmi_gpu *gpu, struct amdsmi_sriov_info **ret) {
        _cleanup_free_ struct amdsmi_sriov_info *info = info_new();
        int r;

        if (!info)
                return -ENOMEM;
        r = amdsmi_gpu_read_sriov(gpu, info);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(info);
        return 0;
}

static const char *config_name(enum amdsmi_vf_config c) {
        return c == AMDSMI_VF_CONFIG_UNKNOWN ? NULL : amdsmi_vf_config_to_string(c);
}

/* The gim VF layouts of @product as JSON ({vfs, compute_mode, memory_mode, current}), or NULL
 * (JSON null) when gim does not drive the PF or the product has no known table. */
static json_object *vf_modes_json(const char *product, const struct amdsmi_sriov_info *info) {
        const struct gim_vf_mode *m = NULL;
        size_t n = gim_vf_modes(product, &m);
        json_object *a;

        if (info->config != AMDSMI_VF_CONFIG_GIM_PARAM || n == 0)
                return NULL;
        a = json_object_new_array();
        for (size_t i = 0; a && i < n; i++) {
                json_object *o = json_object_new_object();

                if (!o)
                        break;
                json_set(o, "vfs", json_object_new_uint64(m[i].vfs));
                json_set(o, "compute_mode", json_object_new_string(m[i].compute_mode));
                json_set(o, "memory_mode", json_object_new_string(m[i].memory_mode));
                json_set(o, "current", json_object_new_boolean(m[i].vfs == info->num_vfs));
                json_object_array_add(a, o);
        }
        return a;
}

/* "1 (SPX/NPS1) or 8 (CPX/NPS4)" */
static void vf_modes_text(const char *product, char *buf, size_t len) {
        const struct gim_vf_mode *m = NULL;
        size_t n = gim_vf_modes(product, &m), k = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n && k < len; i++)
                k += (size_t) snprintf(buf + k, len - k, "%s%u (%s/%s)",
                                       i == 0       ? ""
                                       : i + 1 == n ? " or "
                                                    : ", ",
                                       m[i].vfs, m[i].compute_mode, m[i].memory_mode);
}

/* ---- amdsmi sriov ----------------------------------------------------------------------- */

/* @in_use_reported: whether a failed VFIO user scan was reported for this PF already (one
 * scan serves all the VFs of a PF: one error entry). -ENODATA (the context looks at no device
 * nodes) is no error: in_use is null. */
static json_object *vf_json(struct cli *c, size_t pf_index, const struct amdsmi_vf_info *v,
                            bool *in_use_reported) {
        json_object *o = json_object_new_object(), *users;
        int k = index_of_bdf(c, v->bdf);

        if (!o)
                return NULL;
        json_set(o, "gpu", k < 0 ? NULL : json_object_new_int(k));
        json_set(o, "bdf", json_object_new_string(v->bdf));
        json_set(o, "index", json_object_new_uint64(v->index));
        json_set(o, "driver", str_or_null(v->driver));
        json_set(o, "driver_override", str_or_null(v->driver_override));
        json_set(o, "iommu_group", v->iommu_group < 0 ? NULL : json_object_new_int(v->iommu_group));
        json_set(o, "vfio_viable", json_object_new_boolean(v->vfio_viable));
        if (v->in_use < 0 && v->in_use != -ENODATA && !*in_use_reported) {
                cli_field_error(c, (int) pf_index, "vfs.in_use", v->in_use);
                *in_use_reported = true;
        }
        json_set(o, "in_use", v->in_use < 0 ? NULL : json_object_new_boolean(v->in_use > 0));
        users = json_object_new_array();
        for (unsigned i = 0; users && i < v->n_users && i < AMDSMI_SRIOV_MAX_USERS; i++) {
                json_object *u = json_object_new_object();

                if (!u)
                        break;
                json_set(u, "pid", json_object_new_int(v->users[i].pid));
                json_set(u, "comm", str_or_null(v->users[i].comm));
                json_object_array_add(users, u);
        }
        json_set(o, "users", users);
        json_set(o, "n_users", json_object_new_uint64(v->n_users));
        return o;
}

/* One PF: its SR-IOV state and its VFs (all of them, or those selected). */
static json_object *pf_json(struct cli *c, size_t index, struct amdsmi_gpu *gpu, bool all_vfs) {
        _cleanup_free_ struct amdsmi_sriov_info *info = NULL;
        const char *product = amdsmi_gpu_get_product(gpu);
        json_object *o = json_object_new_object(), *vfs;
        int r;

        if (!o)
                return NULL;
        json_set(o, "gpu", json_object_new_uint64(index));
        json_set(o, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(gpu)));
        json_set(o, "product", json_object_new_string(product));
        json_set(o, "role",
                 json_object_new_string(amdsmi_role_to_string(amdsmi_gpu_get_role(gpu))));
        json_set(o, "driver",
                 json_object_new_string(amdsmi_driver_to_string(amdsmi_gpu_get_driver(gpu))));

        r = read_info(gpu, &info);
        if (r == -ENOMEM) {
                json_object_put(o);
                return NULL;
        }
        if (r < 0)
                cli_field_error(c, (int) index, "sriov", r);
        json_set(o, "capable", info ? json_object_new_boolean(info->capable) : NULL);
        json_set(o, "config", info ? str_or_null(config_name(info->config)) : NULL);
        json_set(o, "total_vfs",
                 info && info->capable ? json_object_new_uint64(info->total_vfs) : NULL);
        json_set(o, "num_vfs",
                 info && info->capable ? json_object_new_uint64(info->num_vfs) : NULL);
        json_set(o, "offset", info && info->capable ? json_object_new_uint64(info->offset) : NULL);
        json_set(o, "stride", info && info->capable ? json_object_new_uint64(info->stride) : NULL);
        json_set(o, "vf_device", info && info->capable ? json_hex(info->vf_device, 4) : NULL);
        json_set(o, "autoprobe",
                 info && info->capable && info->drivers_autoprobe >= 0
                         ? json_object_new_boolean(info->drivers_autoprobe > 0)
                         : NULL);
        json_set(o, "pf_driver", info ? str_or_null(info->pf_driver) : NULL);
        json_set(o, "gim_vf_num",
                 info && info->gim_vf_num >= 0 ? json_object_new_int(info->gim_vf_num) : NULL);
        cli_add_partition_modes(c, (int) index, gpu, o, true);
        json_set(o, "vf_modes", info ? vf_modes_json(product, info) : NULL);

        vfs = json_object_new_array();
        bool reported = false;
        for (unsigned i = 0; vfs && info && i < info->n_vfs && i < AMDSMI_SRIOV_MAX_VFS; i++) {
                const struct amdsmi_vf_info *v = &info->vfs[i];
                int k = index_of_bdf(c, v->bdf);

                if (!all_vfs && (k < 0 || !c->matches[k].selected))
                        continue;
                json_object_array_add(vfs, vf_json(c, index, v, &reported));
        }
        json_set(o, "vfs", vfs);
        return o;
}

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

static size_t split_lines(char *text, char **lines, size_t max) {
        size_t n = 0;

        for (char *p = text; p && *p && n < max;) {
                char *nl = strchr(p, '\n');

                lines[n++] = p;
                if (!nl)
                        break;
                *nl = '\0';
                p = nl + 1;
        }
        return n;
}

/* A table as text. */
static int render_table(const struct columns *cols, json_object *rows, const char *indent,
                        char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        r = output_table(f, cols, rows, indent);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(text);
        return 0;
}

/* One line per PF, its VFs indented below it; columns aligned over all PFs and all VFs. */
static int print_sriov_table(json_object *gpus) {
        _cleanup_free_ char *ptext = NULL, *vtext = NULL;
        _cleanup_free_ char **plines = NULL, **vlines = NULL;
        struct columns pcols = {}, vcols = {};
        json_object *prows = json_object_new_array(), *vrows = json_object_new_array();
        size_t n = json_object_array_length(gpus), np, nv, vl = 1;
        int r;

        r = columns_add_defs(&pcols, pf_columns, ELEMENTSOF(pf_columns));
        if (r >= 0)
                r = columns_add_defs(&vcols, vf_columns, ELEMENTSOF(vf_columns));
        if (r < 0 || !prows || !vrows) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *vfs = NULL;

                json_object_array_add(prows, flat_row(g, NULL));
                json_object_object_get_ex(g, "vfs", &vfs);
                for (size_t k = 0; vfs && k < json_object_array_length(vfs); k++)
                        json_object_array_add(vrows,
                                              flat_row(g, json_object_array_get_idx(vfs, k)));
        }
        r = render_table(&pcols, prows, "", &ptext);
        if (r >= 0)
                r = render_table(&vcols, vrows, "      ", &vtext);
        if (r < 0)
                goto finish;
        plines = calloc(n + 2, sizeof(char *));
        vlines = calloc(json_object_array_length(vrows) + 2, sizeof(char *));
        if (!plines || !vlines) {
                r = -ENOMEM;
                goto finish;
        }
        np = split_lines(ptext, plines, n + 1);
        nv = split_lines(vtext, vlines, json_object_array_length(vrows) + 1);

        if (np > 0)
                printf("%s\n", plines[0]);
        for (size_t i = 0; i < n && i + 1 < np; i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *vfs = NULL;
                size_t k;

                printf("%s\n", plines[i + 1]);
                json_object_object_get_ex(g, "vfs", &vfs);
                k = vfs ? json_object_array_length(vfs) : 0;
                if (k == 0)
                        continue;
                if (nv > 0)
                        printf("%s\n", vlines[0]);
                for (size_t j = 0; j < k && vl < nv; j++)
                        printf("%s\n", vlines[vl++]);
        }
        r = 0;
finish:
        json_object_put(prows);
        json_object_put(vrows);
        columns_free(&pcols);
        columns_free(&vcols);
        return r;
}

/* One CSV row per VF with its PF's columns; a PF without VFs: one row, empty VF cells. */
static int print_sriov_csv(json_object *gpus) {
        struct columns cols = {};
        json_object *rows = json_object_new_array();
        int r;

        r = columns_add_defs(&cols, pf_columns, ELEMENTSOF(pf_columns));
        if (r >= 0)
                r = columns_add_defs(&cols, vf_columns, ELEMENTSOF(vf_columns));
        if (r < 0 || !rows) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i), *vfs = NULL;
                size_t k;

                json_object_object_get_ex(g, "vfs", &vfs);
                k = vfs ? json_object_array_length(vfs) : 0;
                if (k == 0)
                        json_object_array_add(rows, flat_row(g, NULL));
                for (size_t j = 0; j < k; j++)
                        json_object_array_add(rows, flat_row(g, json_object_array_get_idx(vfs, j)));
        }
        r = output_csv_header(stdout, &cols);
        if (r >= 0)
                r = output_csv_rows(stdout, &cols, rows);
finish:
        json_object_put(rows);
        columns_free(&cols);
        return r;
}

static int sriov_sample(struct cli *c) {
        _cleanup_free_ bool *show = NULL, *all_vfs = NULL;
        json_object *gpus = NULL, *doc;
        size_t n_guest = 0;
        int r = 0, guest = -1;

        show = calloc(c->n_gpus + 1, sizeof(bool));
        all_vfs = calloc(c->n_gpus + 1, sizeof(bool));
        gpus = json_object_new_array();
        if (!show || !all_vfs || !gpus) {
                json_object_put(gpus);
                return cli_fail(c, -ENOMEM, "out of memory");
        }
        FOREACH_SELECTED_GPU(c, i, gpu) {
                enum amdsmi_role role = amdsmi_gpu_get_role(gpu);

                if (role == AMDSMI_ROLE_VF) {
                        int k = index_of_bdf(c, amdsmi_gpu_get_physfn_bdf(gpu));

                        if (k >= 0 && (size_t) k < c->n_gpus)
                                show[k] = true;
                } else if (role_is_guest(role)) {
                        if (guest < 0)
                                guest = (int) i;
                        n_guest++;
                } else {
                        show[i] = true;
                        all_vfs[i] = true;
                }
        }
        for (size_t i = 0; i < c->n_gpus; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(c->ctx, i);
                json_object *o;

                if (!show[i] || !gpu)
                        continue;
                o = pf_json(c, i, gpu, all_vfs[i]);
                if (!o) {
                        json_object_put(gpus);
                        return cli_fail(c, -ENOMEM, "out of memory");
                }
                json_object_array_add(gpus, o);
        }
        if (n_guest > 0 && json_object_array_length(gpus) == 0 && c->format != OUTPUT_JSON)
                fprintf(stderr,
                        "amdsmi: GPU %d (%s) is a VF inside a guest (%s): its VFs are "
                        "configured on the host\n",
                        guest, amdsmi_gpu_get_bdf(amdsmi_ctx_get_gpu(c->ctx, guest)),
                        amdsmi_role_to_string(
                                amdsmi_gpu_get_role(amdsmi_ctx_get_gpu(c->ctx, guest))));

        switch (c->format) {
        case OUTPUT_JSON:
                doc = cli_document(c, gpus);
                r = cli_print_json(c, doc);
                json_object_put(doc);
                return r;
        case OUTPUT_CSV:
                r = print_sriov_csv(gpus);
                break;
        case OUTPUT_TABLE:
                r = json_object_array_length(gpus) > 0 ? print_sriov_table(gpus) : 0;
                break;
        }
        json_object_put(gpus);
        json_object_put(c->errors); /* already on stderr */
        c->errors = NULL;
        if (r < 0)
                return cli_fail(c, r, "cannot format the output: %s", strerror(-r));
        return 0;
}

int verb_sriov(struct cli *c) {
        int r = cli_open(c);

        if (r < 0)
                return r;
        return cli_run(c, sriov_sample);
}

/* ---- changes: shared -------------------------------------------------------------------- */

/* Records a failure: the first one decides the exit status. */
static int run_fail(int *result, int r) {
        if (*result == 0)
                *result = r;
        return r;
}

static json_object *vf_bdfs_json(const struct amdsmi_sriov_info *info) {
        json_object *a = json_object_new_array();

        for (unsigned i = 0; a && i < info->n_vfs && i < AMDSMI_SRIOV_MAX_VFS; i++)
                json_object_array_add(a, json_object_new_string(info->vfs[i].bdf));
        return a;
}

/* ---- sriov set: the sysfs path ---------------------------------------------------------- */

struct set_target {
        size_t index;
        struct amdsmi_gpu *gpu; /* a reference: it outlives the enumeration after the change */
        struct amdsmi_sriov_info *info; /* before */
        json_object *entry;
};

static json_object *change_report_json(const struct amdsmi_sriov_change *ch) {
        json_object *o = json_object_new_object(), *bl;

        if (!o)
                return NULL;
        json_set(o, "stage", json_object_new_string(amdsmi_sriov_stage_to_string(ch->stage)));
        json_set(o, "error", cli_errno_json(ch->error));
        json_set(o, "config", str_or_null(config_name(ch->config)));
        json_set(o, "total_vfs", json_object_new_uint64(ch->total_vfs));
        json_set(o, "vfs_before", json_object_new_uint64(ch->vfs_before));
        json_set(o, "vfs_after", json_object_new_uint64(ch->vfs_after));
        json_set(o, "changed", json_object_new_boolean(ch->changed));
        json_set(o, "wrote_zero", json_object_new_boolean(ch->wrote_zero));
        json_set(o, "autoprobe_off", json_object_new_boolean(ch->autoprobe_off));
        json_set(o, "elapsed_ms", json_object_new_uint64(ch->elapsed_ms));
        bl = json_object_new_array();
        for (unsigned i = 0; bl && i < ch->n_blockers && i < AMDSMI_SRIOV_MAX_VFS; i++) {
                const struct amdsmi_vf_blocker *b = &ch->blockers[i];
                json_object *e = json_object_new_object();

                if (!e)
                        break;
                json_set(e, "bdf", json_object_new_string(b->bdf));
                json_set(e, "vfio", json_object_new_boolean(b->vfio));
                json_set(e, "in_use", json_object_new_boolean(b->in_use));
                json_set(e, "pid", b->pid > 0 ? json_object_new_int(b->pid) : NULL);
                json_set(e, "comm", str_or_null(b->comm));
                json_object_array_add(bl, e);
        }
        json_set(o, "blockers", bl);
        json_set(o, "n_blockers", json_object_new_uint64(ch->n_blockers));
        json_set(o, "message", str_or_null(ch->message));
        return o;
}

static void say_blockers(const struct amdsmi_sriov_change *ch) {
        for (unsigned i = 0; i < ch->n_blockers && i < AMDSMI_SRIOV_MAX_VFS; i++) {
                const struct amdsmi_vf_blocker *b = &ch->blockers[i];

                if (b->in_use && b->pid > 0)
                        fprintf(stderr, "amdsmi:   VF %s%s, in use by PID %ld (%s)\n", b->bdf,
                                b->vfio ? " is bound to vfio-pci" : "", (long) b->pid,
                                b->comm[0] ? b->comm : "?");
                else if (b->in_use)
                        fprintf(stderr, "amdsmi:   VF %s%s, in use\n", b->bdf,
                                b->vfio ? " is bound to vfio-pci" : "");
                else
                        fprintf(stderr, "amdsmi:   VF %s is bound to vfio-pci\n", b->bdf);
        }
        if (ch->n_blockers > AMDSMI_SRIOV_MAX_VFS)
                fprintf(stderr, "amdsmi:   ... and %u more VFs\n",
                        ch->n_blockers - AMDSMI_SRIOV_MAX_VFS);
}

static int set_one(struct cli *c, struct set_target *t, int *result) {
        const char *bdf = amdsmi_gpu_get_bdf(t->gpu);
        struct amdsmi_sriov_change ch = { .size = sizeof(ch) };
        struct gpu_lock lock = GPU_LOCK_INIT;
        uint64_t flags = (c->dry_run ? AMDSMI_SRIOV_DRY_RUN : 0) |
                         (c->force ? AMDSMI_SRIOV_FORCE : 0) |
                         (c->autoprobe_off ? AMDSMI_SRIOV_AUTOPROBE_OFF : 0);
        pid_t holder = 0;
        int r;

        if (!c->dry_run) {
                r = gpu_lock_acquire(&lock, bdf, &holder);
                if (r == -EBUSY && holder > 0)
                        return run_fail(result, cli_fail(c, r,
                                                         "GPU %zu (%s) is being changed by "
                                                         "PID %ld",
                                                         t->index, bdf, (long) holder));
                if (r == -EBUSY)
                        return run_fail(result, cli_fail(c, r,
                                                         "GPU %zu (%s) is being changed by another "
                                                         "process",
                                                         t->index, bdf));
                if (r < 0)
                        return run_fail(result, cli_fail(c, r,
                                                         "cannot take the change lock of "
                                                         "GPU %s: %s",
                                                         bdf, strerror(-r)));
        }
        r = amdsmi_gpu_set_num_vfs(t->gpu, c->num_vfs, flags, c->timeout_ms, &ch);
        gpu_lock_release(&lock);
        json_set(t->entry, "report", change_report_json(&ch));

        if (r < 0) {
                if (ch.message[0])
                        cli_fail(c, r, "GPU %zu (%s): %s", t->index, bdf, ch.message);
                else if (r == -ERANGE)
                        cli_fail(c, r,
                                 "GPU %zu (%s): %u VFs is out of range: the PF has at most "
                                 "%u",
                                 t->index, bdf, c->num_vfs, t->info->total_vfs);
                else
                        cli_fail(c, r, "GPU %zu (%s): setting %u VFs failed: %s", t->index, bdf,
                                 c->num_vfs, strerror(-r));
                if (r == -EBUSY && ch.n_blockers > 0) {
                        say_blockers(&ch);
                        fprintf(stderr, "amdsmi:   stop the VMs or release the VFs (amdsmi sriov "
                                        "release VF); --force changes the count anyway\n");
                }
                if (!ch.message[0] && (ch.config == AMDSMI_VF_CONFIG_GIM_PARAM ||
                                       t->info->config == AMDSMI_VF_CONFIG_GIM_PARAM))
                        fprintf(stderr,
                                "amdsmi:   with --persist, amdsmi writes gim's vf_num to "
                                "%s for gim's next load\n",
                                GIM_MODPROBE_FILE);
                return run_fail(result, r);
        }

        if (c->dry_run && ch.vfs_before == c->num_vfs)
                cli_say(c, t->entry, "GPU %zu (%s): dry run: already %u VFs, nothing to do",
                        t->index, bdf, ch.vfs_before);
        else if (c->dry_run)
                cli_say(c, t->entry, "GPU %zu (%s): dry run: VFs %u -> %u is possible now%s%s",
                        t->index, bdf, ch.vfs_before, c->num_vfs,
                        ch.n_blockers > 0 ? " (with --force: VFs in use)" : "",
                        ch.vfs_before > 0 && c->num_vfs > 0 ? " (writing 0 first)" : "");
        else if (!ch.changed)
                cli_say(c, t->entry, "GPU %zu (%s): already %u VFs, nothing to do", t->index, bdf,
                        ch.vfs_after);
        else
                cli_say(c, t->entry, "GPU %zu (%s): VFs %u -> %u (%s%s%u ms)", t->index, bdf,
                        ch.vfs_before, ch.vfs_after, ch.wrote_zero ? "0 written first, " : "",
                        ch.autoprobe_off ? "autoprobe off, " : "", ch.elapsed_ms);
        if (!c->dry_run && ch.changed && ch.n_blockers > 0)
                cli_say(c, t->entry, "  forced: %u VF%s in use or bound to vfio-pci went away",
                        ch.n_blockers, ch.n_blockers == 1 ? "" : "s");
        return 0;
}

/* ---- sriov set --persist: gim's vf_num ------------------------------------------------- */

static json_object *conf_line_json(const struct gim_conf_line *l) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "path", json_object_new_string(l->path));
        json_set(o, "line", json_object_new_uint64(l->line));
        json_set(o, "text", json_object_new_string(l->text));
        return o;
}

static json_object *conf_line_ref(const struct gim_conf_line *l) {
        char buf[PATH_MAX + 16];

        snprintf(buf, sizeof(buf), "%s:%u", l->path, l->line);
        return json_object_new_string(buf);
}

/* Every GPU under gim (a gim file covers all of them) with its loaded vf_num. */
struct gim_gpus {
        struct gim_pf *pfs;
        const char **bdfs;
        size_t n;
};

static void gim_gpus_done(struct gim_gpus *g) {
        free(g->pfs);
        free(g->bdfs);
}

static int collect_gim_gpus(struct cli *c, struct set_target *targets, size_t n_targets,
                            struct gim_gpus *ret) {
        size_t n = amdsmi_ctx_get_gpu_count(c->ctx);
        struct gim_gpus g = {};

        g.pfs = calloc(n + 1, sizeof(*g.pfs));
        g.bdfs = calloc(n + 1, sizeof(*g.bdfs));
        if (!g.pfs || !g.bdfs) {
                gim_gpus_done(&g);
                return cli_fail(c, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ struct amdsmi_sriov_info *own = NULL;
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(c->ctx, i);
                const struct amdsmi_sriov_info *info = NULL;
                struct gim_pf *pf;
                enum amdsmi_role role;
                int r;

                if (!gpu)
                        continue;
                role = amdsmi_gpu_get_role(gpu);
                if (role == AMDSMI_ROLE_VF || role_is_guest(role))
                        continue;
                for (size_t k = 0; k < n_targets; k++)
                        if (targets[k].gpu == gpu)
                                info = targets[k].info;
                if (!info) {
                        if (amdsmi_gpu_get_driver(gpu) != AMDSMI_DRIVER_GIM)
                                continue;
                        r = read_info(gpu, &own);
                        if (r < 0) {
                                gim_gpus_done(&g);
                                return cli_fail(c, r,
                                                "GPU %zu (%s): cannot read its VF count "
                                                "under gim: %s",
                                                i, amdsmi_gpu_get_bdf(gpu), strerror(-r));
                        }
                        info = own;
                }
                if (info->config != AMDSMI_VF_CONFIG_GIM_PARAM)
                        continue;
                pf = &g.pfs[g.n];
                snprintf(pf->bdf, sizeof(pf->bdf), "%s", amdsmi_gpu_get_bdf(gpu));
                pf->loaded = info->gim_vf_num >= 0 ? info->gim_vf_num
                             : info->num_vfs > 0   ? (int) info->num_vfs
                                                   : -1;
                pf->requested = -1;
                for (size_t k = 0; k < n_targets; k++)
                        if (targets[k].gpu == gpu)
                                pf->requested = (int) c->num_vfs;
                g.bdfs[g.n] = amdsmi_gpu_get_bdf(gpu);
                g.n++;
        }
        *ret = g;
        return 0;
}

/* The count against gim's range, the PF's total and the product's VF layouts. */
static int check_gim_count(struct cli *c, const struct set_target *t) {
        const char *bdf = amdsmi_gpu_get_bdf(t->gpu), *product = amdsmi_gpu_get_product(t->gpu);
        char modes[128];
        unsigned n = c->num_vfs;

        if (n < GIM_VF_NUM_MIN || n > GIM_VF_NUM_MAX)
                return cli_fail(c, -ERANGE,
                                "GPU %zu (%s): gim's vf_num is %u to %u VFs per GPU, not %u",
                                t->index, bdf, GIM_VF_NUM_MIN, GIM_VF_NUM_MAX, n);
        if (t->info->capable && n > t->info->total_vfs)
                return cli_fail(c, -ERANGE,
                                "GPU %zu (%s): %u VFs is out of range: the PF has at "
                                "most %u",
                                t->index, bdf, n, t->info->total_vfs);
        if (gim_vf_modes(product, NULL) == 0) {
                fprintf(stderr,
                        "amdsmi: warning: GPU %zu (%s): no VF layout of gim is known for %s: %u "
                        "VFs is not checked against its partition modes\n",
                        t->index, bdf, product, n);
                return 0;
        }
        if (gim_vf_mode_find(product, n))
                return 0;
        vf_modes_text(product, modes, sizeof(modes));
        if (!c->force)
                return cli_fail(c, -ERANGE,
                                "GPU %zu (%s): gim supports %s VFs on %s (one partition per VF); "
                                "%u is not among them (--force writes it anyway)",
                                t->index, bdf, modes, product, n);
        fprintf(stderr,
                "amdsmi: warning: GPU %zu (%s): gim supports %s VFs on %s; writing %u as forced\n",
                t->index, bdf, modes, product, n);
        return 0;
}

static int persist_fail_build(struct cli *c, int r, const char *bdf,
                              const struct gim_modprobe_scan *scan, const struct gim_gpus *g) {
        const struct gim_conf_line *l = &scan->enabled_devices_line;
        bool requested = false;

        for (size_t i = 0; i < g->n; i++)
                if (strcmp(g->pfs[i].bdf, bdf) == 0 && g->pfs[i].requested >= 0)
                        requested = true;
        switch (r) {
        case -ENXIO:
                if (requested)
                        return cli_fail(c, r,
                                        "GPU %s is not in gim's enabled_devices (%s:%u): gim "
                                        "would not drive it at its next load",
                                        bdf, l->path, l->line);
                return cli_fail(c, r,
                                "gim's enabled_devices (%s:%u) names %s, which is no GPU under "
                                "gim now: its VF count is unknown; fix enabled_devices first",
                                l->path, l->line, bdf);
        case -ENODATA:
                return cli_fail(c, -EOPNOTSUPP,
                                "the VF count gim runs GPU %s with is unknown: give it with -g "
                                "too",
                                bdf);
        case -ERANGE:
                return cli_fail(c, r,
                                "%s holds a vf_num outside 1..31 for GPU %s: give that GPU "
                                "with -g too",
                                GIM_MODPROBE_FILE, bdf);
        default:
                return cli_fail(c, r, "cannot work out gim's vf_num: %s", strerror(-r));
        }
}

static json_object *persist_json(const struct gim_gpus *g, const struct gim_modprobe_scan *scan,
                                 const struct gim_vf_num *v, size_t n_v) {
        json_object *o = json_object_new_object(), *a, *conf;

        if (!o)
                return NULL;
        json_set(o, "path", json_object_new_string(GIM_MODPROBE_FILE));
        json_set(o, "written", json_object_new_boolean(false));
        json_set(o, "order",
                 json_object_new_string(scan->enabled_devices ? "enabled_devices" : "pci_address"));
        json_set(o, "order_line",
                 scan->enabled_devices ? conf_line_ref(&scan->enabled_devices_line) : NULL);
        a = json_object_new_array();
        for (size_t i = 0; a && i < n_v; i++) {
                json_object *e = json_object_new_object();
                const struct gim_pf *pf = NULL;

                if (!e)
                        break;
                for (size_t k = 0; k < g->n; k++)
                        if (strcmp(g->pfs[k].bdf, v[i].bdf) == 0)
                                pf = &g->pfs[k];
                json_set(e, "bdf", json_object_new_string(v[i].bdf));
                json_set(e, "vf_num", json_object_new_uint64(v[i].vf_num));
                json_set(e, "loaded",
                         pf && pf->loaded >= 0 ? json_object_new_int(pf->loaded) : NULL);
                json_set(e, "selected", json_object_new_boolean(pf && pf->requested >= 0));
                json_object_array_add(a, e);
        }
        json_set(o, "vf_num", a);
        json_set(o, "content", NULL);
        conf = json_object_new_array();
        for (size_t i = 0; conf && i < scan->n_conflicts && i < GIM_MODPROBE_MAX_CONFLICTS; i++)
                json_object_array_add(conf, conf_line_json(&scan->conflicts[i]));
        json_set(o, "conflicts", conf);
        json_set(o, "initramfs", NULL);
        return o;
}

static int persist_run(struct cli *c, struct set_target *targets, size_t n_targets, int *result) {
        _cleanup_free_ struct gim_vf_num *v = NULL;
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ struct gpu_lock *locks = NULL;
        struct gim_modprobe_scan scan = {};
        struct gim_gpus g = {};
        struct gim_conf_line initramfs = {};
        char errpath[PATH_MAX] = "", bdf[16] = "", busy[16] = "", order[PATH_MAX + 64];
        json_object *persist = NULL;
        size_t n_v = 0;
        bool pending = false;
        pid_t holder = 0;
        int r;

        for (size_t i = 0; i < n_targets; i++) {
                r = check_gim_count(c, &targets[i]);
                if (r < 0)
                        return run_fail(result, r);
        }
        r = collect_gim_gpus(c, targets, n_targets, &g);
        if (r < 0)
                return run_fail(result, r);

        /* the file covers every GPU under gim: hold all their change locks */
        locks = calloc(g.n + 1, sizeof(*locks));
        if (!locks) {
                r = cli_fail(c, -ENOMEM, "out of memory");
                goto finish;
        }
        for (size_t i = 0; i < g.n; i++)
                locks[i] = (struct gpu_lock) GPU_LOCK_INIT;
        if (!c->dry_run) {
                r = gpu_locks_acquire(locks, g.bdfs, g.n, busy, &holder);
                if (r == -EBUSY) {
                        r = holder > 0 ? cli_fail(c, r, "GPU %s is being changed by PID %ld", busy,
                                                  (long) holder)
                                       : cli_fail(c, r,
                                                  "GPU %s is being changed by another "
                                                  "process",
                                                  busy);
                        goto finish;
                }
                if (r < 0) {
                        r = cli_fail(c, r,
                                     "cannot take the change locks of the GPUs under gim: "
                                     "%s",
                                     strerror(-r));
                        goto finish;
                }
        }

        r = gim_modprobe_scan(NULL, &scan, errpath);
        if (r == -EBADMSG) {
                r = cli_fail(c, -EINVAL,
                             "cannot work out gim's order of the GPUs: enabled_devices in %s:%u "
                             "is malformed (%s)",
                             scan.enabled_devices_line.path, scan.enabled_devices_line.line,
                             scan.enabled_devices_line.text);
                goto finish;
        }
        if (r < 0) {
                r = cli_fail(c, r, "cannot read the modprobe configuration%s%s: %s",
                             errpath[0] ? " " : "", errpath, strerror(-r));
                goto finish;
        }
        r = gim_modprobe_build(g.pfs, g.n, &scan, &v, &n_v, bdf);
        if (r < 0) {
                r = persist_fail_build(c, r, bdf, &scan, &g);
                goto finish;
        }
        persist = persist_json(&g, &scan, v, n_v);
        if (!persist) {
                r = cli_fail(c, -ENOMEM, "out of memory");
                goto finish;
        }
        for (size_t i = 0; i < n_targets; i++)
                json_set(targets[i].entry, "persist", json_object_get(persist));

        if (scan.n_conflicts > 0) {
                const struct gim_conf_line *l = &scan.conflicts[0];

                r = cli_fail(c, -EBUSY,
                             "gim's vf_num is set in %s:%u already (\"%s\"): amdsmi writes only "
                             "%s and changes no other file; remove vf_num there and run the "
                             "command again",
                             l->path, l->line, l->text, GIM_MODPROBE_FILE);
                for (size_t i = 1; i < scan.n_conflicts && i < GIM_MODPROBE_MAX_CONFLICTS; i++)
                        fprintf(stderr, "amdsmi:   also %s:%u: %s\n", scan.conflicts[i].path,
                                scan.conflicts[i].line, scan.conflicts[i].text);
                goto finish;
        }

        if (scan.enabled_devices)
                snprintf(order, sizeof(order),
                         "PCI address order of the GPUs in enabled_devices (%s:%u)",
                         scan.enabled_devices_line.path, scan.enabled_devices_line.line);
        else
                snprintf(order, sizeof(order), "PCI address order (enabled_devices is not set)");
        r = gim_modprobe_render(v, n_v, order, time(NULL), &text);
        if (r < 0) {
                r = cli_fail(c, r, "cannot format %s: %s", GIM_MODPROBE_FILE, strerror(-r));
                goto finish;
        }
        json_set(persist, "content", json_object_new_string(text));
        for (size_t i = 0; i < n_v; i++)
                for (size_t k = 0; k < g.n; k++)
                        if (strcmp(g.pfs[k].bdf, v[i].bdf) == 0 &&
                            g.pfs[k].loaded != (int) v[i].vf_num)
                                pending = true;

        if (c->dry_run) {
                for (size_t i = 0; i < n_targets; i++)
                        cli_say(c, targets[i].entry,
                                "GPU %zu (%s): dry run: vf_num %u for gim's next load",
                                targets[i].index, amdsmi_gpu_get_bdf(targets[i].gpu), c->num_vfs);
                cli_say(c, targets[0].entry, "dry run: amdsmi would write %s:", GIM_MODPROBE_FILE);
                if (c->format == OUTPUT_TABLE)
                        fputs(text, stdout);
                r = 0;
                goto finish;
        }

        r = gim_modprobe_write(NULL, text);
        if (r < 0) {
                r = cli_fail(c, r, "cannot write %s: %s", GIM_MODPROBE_FILE, strerror(-r));
                goto finish;
        }
        json_set(persist, "written", json_object_new_boolean(true));
        for (size_t i = 0; i < n_targets; i++)
                cli_say(c, targets[i].entry, "GPU %zu (%s): vf_num %u for gim's next load",
                        targets[i].index, amdsmi_gpu_get_bdf(targets[i].gpu), c->num_vfs);
        {
                const char *line = strstr(text, "\noptions gim ");

                line = line ? line + 1 : text;
                cli_say(c, targets[0].entry, "wrote %s: %.*s", GIM_MODPROBE_FILE,
                        (int) strcspn(line, "\n"), line);
        }
        cli_say(c, targets[0].entry,
                "gim reads vf_num when it loads: the new count applies at gim's next load "
                "(modprobe -r gim; modprobe gim: every VF goes away meanwhile) or at the next "
                "boot");
        r = gim_modprobe_initramfs(NULL, &initramfs);
        if (r > 0) {
                json_set(persist, "initramfs", conf_line_ref(&initramfs));
                cli_say(c, targets[0].entry,
                        "gim is loaded from the initramfs (%s:%u): rebuild it so that it "
                        "carries the new file: update-initramfs -u (dracut -f on dracut systems)",
                        initramfs.path, initramfs.line);
        } else
                cli_say(c, targets[0].entry,
                        "if the initramfs loads gim, rebuild it too: update-initramfs -u");
        r = 0;
        if (pending)
                r = cli_fail(c, -ERELOAD_REQUIRED,
                             "the VF count waits for gim's next load (modprobe -r gim; modprobe "
                             "gim) or a reboot");

finish:
        if (locks)
                gpu_locks_release(locks, g.n);
        gim_gpus_done(&g);
        gim_modprobe_scan_done(&scan);
        json_object_put(persist);
        if (r < 0)
                run_fail(result, r);
        return r;
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

static json_object *set_entry_new(struct cli *c, const struct set_target *t) {
        json_object *e = json_object_new_object();

        if (!e)
                return NULL;
        json_set(e, "gpu", json_object_new_uint64(t->index));
        json_set(e, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(t->gpu)));
        json_set(e, "product", json_object_new_string(amdsmi_gpu_get_product(t->gpu)));
        json_set(e, "config", str_or_null(config_name(t->info->config)));
        json_set(e, "num_vfs_requested", json_object_new_uint64(c->num_vfs));
        json_set(e, "report", NULL);
        json_set(e, "persist", NULL);
        json_set(e, "vfs", vf_bdfs_json(t->info));
        json_set(e, "result", NULL);
        json_set(e, "messages", json_object_new_array());
        return e;
}

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
static int collect_targets(struct cli *c, struct set_target **ret, size_t *ret_n) {
        struct set_target *t = calloc(c->n_gpus + 1, sizeof(*t));
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
                                     i, bdf, index_of_bdf(c, pf), pf ? pf : "?");
                        break;
                }
                if (role_is_guest(role)) {
                        r = cli_fail(c, -EOPNOTSUPP,
                                     "GPU %zu (%s) is a VF inside a guest (%s): the VF count is "
                                     "set on the host",
                                     i, bdf, amdsmi_role_to_string(role));
                        break;
                }
                t[n].index = i;
                t[n].gpu = amdsmi_gpu_ref(gpu);
                r = read_info(gpu, &t[n].info);
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

int verb_sriov_set(struct cli *c) {
        struct set_target *targets = NULL;
        json_object *gpus = NULL;
        size_t n = 0;
        int r, result = 0;

        if (!c->num_vfs_set)
                return cli_fail(c, -EINVAL, "sriov set needs --num-vfs N");
        if (c->num_vfs > UINT16_MAX)
                return cli_fail(c, -ERANGE, "%u VFs is out of range: a PF has at most %u",
                                c->num_vfs, (unsigned) UINT16_MAX);
        if (c->persist && c->autoprobe_off)
                return cli_fail(c, -EINVAL,
                                "--autoprobe-off is for the sysfs path "
                                "(sriov_numvfs), not for --persist");
        r = cli_check_change_selection(c, "VFs belong to the whole GPU");
        if (r < 0)
                return r;
        r = cli_authorise_change(c);
        if (r < 0)
                return r;
        r = cli_open(c);
        if (r < 0)
                return r;
        cli_begin_sample(c);
        r = collect_targets(c, &targets, &n);
        if (r < 0)
                return r;

        if (c->persist)
                for (size_t i = 0; i < n; i++)
                        if (targets[i].info->config != AMDSMI_VF_CONFIG_GIM_PARAM) {
                                r = cli_fail(c, -EOPNOTSUPP,
                                             "GPU %zu (%s): --persist writes gim's vf_num; "
                                             "this PF is not under gim (%s, VF count through "
                                             "%s): amdsmi does not persist a sysfs VF count "
                                             "(amdsmid will keep it as desired state)",
                                             targets[i].index, amdsmi_gpu_get_bdf(targets[i].gpu),
                                             or_none(targets[i].info->pf_driver),
                                             or_none(config_name(targets[i].info->config)));
                                goto finish;
                        }

        gpus = json_object_new_array();
        if (!gpus) {
                r = cli_fail(c, -ENOMEM, "out of memory");
                goto finish;
        }
        for (size_t i = 0; i < n; i++) {
                targets[i].entry = set_entry_new(c, &targets[i]);
                if (!targets[i].entry) {
                        r = cli_fail(c, -ENOMEM, "out of memory");
                        goto finish;
                }
                json_object_array_add(gpus, targets[i].entry);
        }

        if (c->persist) {
                r = persist_run(c, targets, n, &result);
                for (size_t i = 0; i < n; i++)
                        json_set(targets[i].entry, "result",
                                 cli_errno_json(r < 0 && r != -ERELOAD_REQUIRED ? r : 0));
        } else {
                bool changed = false;

                for (size_t i = 0; i < n; i++) {
                        r = set_one(c, &targets[i], &result);
                        json_set(targets[i].entry, "result", cli_errno_json(r));
                        if (r == 0 && !c->dry_run)
                                changed = true;
                }
                /* the VFs that came or went: the context's GPUs are out of date */
                if (changed && amdsmi_ctx_enumerate(c->ctx) < 0)
                        fprintf(stderr, "amdsmi: cannot enumerate the GPUs again after the "
                                        "change\n");
                for (size_t i = 0; changed && i < n; i++) {
                        _cleanup_free_ struct amdsmi_sriov_info *after = NULL;
                        struct amdsmi_gpu *gpu = NULL;
                        int k;

                        k = amdsmi_ctx_find_gpu(c->ctx, amdsmi_gpu_get_bdf(targets[i].gpu), &gpu);
                        if (k >= 0)
                                k = read_info(gpu, &after);
                        if (k < 0) {
                                cli_field_error(c, (int) targets[i].index, "vfs", k);
                                json_set(targets[i].entry, "vfs", NULL);
                        } else
                                json_set(targets[i].entry, "vfs", vf_bdfs_json(after));
                }
        }

        /* CSV rows say whether it was a dry run; the JSON says it once, at the top */
        for (size_t i = 0; c->format == OUTPUT_CSV && i < n; i++)
                json_set(targets[i].entry, "dry_run", json_object_new_boolean(c->dry_run));
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

enum vf_op {
        VF_BIND,
        VF_RELEASE,
};

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
                return cli_fail(c, -EINVAL, "'%s' needs a VF: amdsmi %s 0000:05:02.0", c->command,
                                c->command);
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

static json_object *bind_report_json(const struct amdsmi_vf_bind_report *rep) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "stage", json_object_new_string(amdsmi_sriov_stage_to_string(rep->stage)));
        json_set(o, "error", cli_errno_json(rep->error));
        json_set(o, "driver_before", str_or_null(rep->driver_before));
        json_set(o, "driver_after", str_or_null(rep->driver_after));
        json_set(o, "override_before", str_or_null(rep->override_before));
        json_set(o, "override_after", str_or_null(rep->override_after));
        json_set(o, "changed", json_object_new_boolean(rep->changed));
        json_set(o, "message", str_or_null(rep->message));
        return o;
}

static int vf_change(struct cli *c, enum vf_op op) {
        const char *what = op == VF_BIND ? "bind" : "release";
        struct amdsmi_vf_bind_report rep = { .size = sizeof(rep) };
        struct gpu_lock lock = GPU_LOCK_INIT;
        struct amdsmi_gpu *vf = NULL;
        json_object *gpus = NULL, *e = NULL;
        char bdf[16];
        const char *pf;
        enum amdsmi_role role;
        uint64_t flags;
        pid_t holder = 0;
        int r, k, result = 0;

        if (c->selection.n_items > 0)
                return cli_fail(c, -EINVAL, "'%s' takes the VF as its argument, not -g",
                                c->command);
        r = parse_vf_argument(c, c->argument, bdf);
        if (r < 0)
                return r;
        r = cli_authorise_change(c);
        if (r < 0)
                return r;
        r = cli_open(c);
        if (r < 0)
                return r;
        cli_begin_sample(c);

        r = amdsmi_ctx_find_gpu(c->ctx, bdf, &vf);
        if (r < 0)
                return cli_fail(c, -ENODEV,
                                "no AMD GPU function at %s (no such PCI device, or not an AMD "
                                "GPU)",
                                bdf);
        k = index_of_bdf(c, bdf);
        role = amdsmi_gpu_get_role(vf);
        if (role_is_guest(role))
                return cli_fail(c, -EOPNOTSUPP,
                                "%s (GPU %d) is a VF inside a guest (%s): VFs are bound to "
                                "vfio-pci on the host",
                                bdf, k, amdsmi_role_to_string(role));
        pf = amdsmi_gpu_get_physfn_bdf(vf);
        if (role != AMDSMI_ROLE_VF || !pf)
                return cli_fail(c, -EINVAL,
                                "%s (GPU %d, %s) is a physical function: '%s' takes one of its "
                                "VFs ('amdsmi sriov -g %d' lists them)",
                                bdf, k, amdsmi_role_to_string(role), c->command, k);

        if (!c->dry_run) {
                r = gpu_lock_acquire_wait(&lock, pf, BIND_LOCK_WAIT_MS, &holder);
                if (r == -EBUSY)
                        return holder > 0 ? cli_fail(c, r,
                                                     "GPU %s (the PF of %s) is being "
                                                     "changed by PID %ld",
                                                     pf, bdf, (long) holder)
                                          : cli_fail(c, r,
                                                     "GPU %s (the PF of %s) is being "
                                                     "changed by another process",
                                                     pf, bdf);
                if (r < 0)
                        return cli_fail(c, r, "cannot take the change lock of GPU %s: %s", pf,
                                        strerror(-r));
        }
        flags = (c->dry_run ? AMDSMI_SRIOV_DRY_RUN : 0) | (c->force ? AMDSMI_SRIOV_FORCE : 0);
        r = op == VF_BIND ? amdsmi_vf_bind_vfio(vf, flags, &rep)
                          : amdsmi_vf_release(vf, flags, &rep);
        gpu_lock_release(&lock);

        gpus = json_object_new_array();
        e = json_object_new_object();
        if (!gpus || !e) {
                json_object_put(gpus);
                json_object_put(e);
                return cli_fail(c, -ENOMEM, "out of memory");
        }
        json_set(e, "gpu", json_object_new_int(k));
        json_set(e, "bdf", json_object_new_string(bdf));
        json_set(e, "pf_bdf", json_object_new_string(pf));
        json_set(e, "product", json_object_new_string(amdsmi_gpu_get_product(vf)));
        json_set(e, "operation", json_object_new_string(what));
        json_set(e, "report", bind_report_json(&rep));
        json_set(e, "result", cli_errno_json(r));
        json_set(e, "messages", json_object_new_array());
        json_object_array_add(gpus, e);

        if (r < 0) {
                run_fail(&result, r);
                cli_fail(c, r, "%s: %s failed: %s", bdf, what,
                         rep.message[0] ? rep.message : strerror(-r));
                if (r == -EBUSY && op == VF_RELEASE && !c->force)
                        fprintf(stderr, "amdsmi:   --force releases it anyway\n");
        } else if (c->dry_run && op == VF_BIND && strcmp(rep.driver_before, "vfio-pci") != 0)
                cli_say(c, e, "%s: dry run: %s -> vfio-pci is possible now", bdf,
                        or_none(rep.driver_before));
        else if (c->dry_run && op == VF_RELEASE && strcmp(rep.driver_before, "vfio-pci") == 0)
                cli_say(c, e, "%s: dry run: vfio-pci -> the driver it had before is possible now",
                        bdf);
        else if (!rep.changed)
                cli_say(c, e, "%s: %s (%s)", bdf, or_none(rep.driver_after),
                        op == VF_BIND ? "bound to vfio-pci already, nothing to do"
                                      : "not bound to vfio-pci, nothing to do");
        else
                cli_say(c, e, "%s: %s -> %s%s", bdf, or_none(rep.driver_before),
                        or_none(rep.driver_after), c->dry_run ? " (dry run)" : "");

        if (c->format == OUTPUT_CSV)
                json_set(e, "dry_run", json_object_new_boolean(c->dry_run));
        r = cli_emit_change(c, gpus, result, vf_csv_columns, ELEMENTSOF(vf_csv_columns));
        json_object_put(gpus);
        return r;
}

int verb_sriov_bind(struct cli *c) {
        return vf_change(c, VF_BIND);
}

int verb_sriov_release(struct cli *c) {
        return vf_change(c, VF_RELEASE);
}
