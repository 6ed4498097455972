/* SPDX-License-Identifier: MIT */
/*
 * The SR-IOV slice's documents and change bodies, shared by amdsmi(1) and amdsmid (see
 * sriov-json.h). Everything here works on a run (struct sriov_run): the report, GPUs and
 * change of amdsmi(1)'s command, or of amdsmid's ListVfs() and each job.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exit-codes.h"
#include "gim-modprobe.h"
#include "change.h"
#include "safe-open.h"
#include "sriov-json.h"

#define BIND_LOCK_WAIT_MS 10000 /* bind and release take milliseconds: queue up behind others */

/* ---- helpers ---------------------------------------------------------------------------- */

void sriov_note(struct sriov_run *s, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        if (s->daemon) {
                if (s->notes) {
                        vfprintf(s->notes, format, ap);
                        fputc('\n', s->notes);
                }
        } else {
                char *msg = NULL;

                if (vasprintf(&msg, format, ap) >= 0) {
                        report_note(s->report, "%s", msg);
                        free(msg);
                }
        }
        va_end(ap);
}

bool sriov_role_is_guest(enum amdsmi_role r) {
        return r == AMDSMI_ROLE_VF_GUEST_1VF || r == AMDSMI_ROLE_VF_GUEST_MULTI;
}

int sriov_index_of_bdf(const struct gpu_set *set, const char *bdf) {
        for (size_t i = 0; bdf && i < amdsmi_ctx_get_gpu_count(set->ctx); i++) {
                struct amdsmi_gpu *g = amdsmi_ctx_get_gpu(set->ctx, i);

                if (g && strcmp(amdsmi_gpu_get_bdf(g), bdf) == 0)
                        return (int) i;
        }
        return -1;
}

static json_object *str_or_null(const char *s) {
        return s && *s ? json_object_new_string(s) : NULL;
}

const char *sriov_or_none(const char *s) {
        return s && *s ? s : "none";
}

static struct amdsmi_sriov_info *info_new(void) {
        struct amdsmi_sriov_info *info = calloc(1, sizeof(*info));

        if (info)
                info->size = sizeof(*info);
        return info;
}

int sriov_read_info(struct amdsmi_gpu *gpu, struct amdsmi_sriov_info **ret) {
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

const char *sriov_config_name(enum amdsmi_vf_config c) {
        return c == AMDSMI_VF_CONFIG_UNKNOWN ? NULL : amdsmi_vf_config_to_string(c);
}

int sriov_run_fail(int *result, int r) {
        if (*result == 0)
                *result = r;
        return r;
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
static json_object *vf_json(struct report *rep, const struct gpu_set *set, size_t pf_index, const struct amdsmi_vf_info *v,
                            bool *in_use_reported) {
        json_object *o = json_object_new_object(), *users;
        int k = sriov_index_of_bdf(set, v->bdf);

        if (!o)
                return NULL;
        json_set(o, "gpu", k < 0 ? NULL : json_object_new_int(k));
        json_set(o, "bdf", json_object_new_string(v->bdf));
        json_set(o, "index", json_object_new_uint64(v->index));
        /* "none" when unbound, as list and static say it (amdsmi_driver_to_string()) */
        json_set(o, "driver", json_object_new_string(sriov_or_none(v->driver)));
        json_set(o, "driver_override", str_or_null(v->driver_override));
        json_set(o, "iommu_group", v->iommu_group < 0 ? NULL : json_object_new_int(v->iommu_group));
        json_set(o, "vfio_viable", json_object_new_boolean(v->vfio_viable));
        if (v->in_use < 0 && v->in_use != -ENODATA && !*in_use_reported) {
                report_field_error(rep, (int) pf_index, "vfs.in_use", v->in_use);
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

json_object *sriov_pf_json(struct report *rep, const struct gpu_set *set, size_t index, struct amdsmi_gpu *gpu, bool all_vfs) {
        _cleanup_free_ struct amdsmi_sriov_info *info = NULL;
        const char *product = amdsmi_gpu_get_product(gpu);
        json_object *o = json_object_new_object(), *vfs;
        bool reported = false;
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

        r = sriov_read_info(gpu, &info);
        if (r == -ENOMEM) {
                json_object_put(o);
                return NULL;
        }
        if (r < 0)
                report_field_error(rep, (int) index, "sriov", r);
        json_set(o, "capable", info ? json_object_new_boolean(info->capable) : NULL);
        json_set(o, "config", info ? str_or_null(sriov_config_name(info->config)) : NULL);
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
        gpu_add_partition_modes(rep, (int) index, gpu, o, true);
        json_set(o, "vf_modes", info ? vf_modes_json(product, info) : NULL);

        vfs = json_object_new_array();
        for (unsigned i = 0; vfs && info && i < info->n_vfs && i < AMDSMI_SRIOV_MAX_VFS; i++) {
                const struct amdsmi_vf_info *v = &info->vfs[i];
                int k = sriov_index_of_bdf(set, v->bdf);

                if (!all_vfs && (k < 0 || !set->matches[k].selected))
                        continue;
                json_object_array_add(vfs, vf_json(rep, set, index, v, &reported));
        }
        json_set(o, "vfs", vfs);
        return o;
}

struct pf_read {
        struct report *rep;
        const struct gpu_set *set;
        const bool *all_vfs; /* per GPU index; NULL: all VFs of every PF */
};

static json_object *pf_read_gpu(void *userdata, size_t index, struct amdsmi_gpu *gpu) {
        struct pf_read *p = userdata;

        return sriov_pf_json(p->rep, p->set, index, gpu, !p->all_vfs || p->all_vfs[index]);
}

json_object *sriov_pf_state_json(struct report *rep, const struct gpu_set *set, size_t index,
                                 struct amdsmi_gpu *gpu) {
        struct pf_read p = { rep, set, NULL };

        return gpu_state_collect(rep, set->ctx, index, gpu, pf_read_gpu, &p);
}

int sriov_document_gpus(struct report *rep, const struct gpu_set *set, bool guest_note,
                        json_object **ret) {
        _cleanup_free_ bool *show = NULL, *all_vfs = NULL;
        json_object *gpus = NULL;
        size_t n_guest = 0;
        int guest = -1;

        show = calloc(set->n_gpus + 1, sizeof(bool));
        all_vfs = calloc(set->n_gpus + 1, sizeof(bool));
        gpus = json_object_new_array();
        if (!show || !all_vfs || !gpus) {
                json_object_put(gpus);
                return report_fail(rep, -ENOMEM, "out of memory");
        }
        FOREACH_GPU_IN_SET(set, i, gpu) {
                enum amdsmi_role role = amdsmi_gpu_get_role(gpu);

                if (role == AMDSMI_ROLE_VF) {
                        int k = sriov_index_of_bdf(set, amdsmi_gpu_get_physfn_bdf(gpu));

                        if (k >= 0 && (size_t) k < set->n_gpus)
                                show[k] = true;
                } else if (sriov_role_is_guest(role)) {
                        if (guest < 0)
                                guest = (int) i;
                        n_guest++;
                } else {
                        show[i] = true;
                        all_vfs[i] = true;
                }
        }
        for (size_t i = 0; i < set->n_gpus; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(set->ctx, i);
                struct pf_read p = { rep, set, all_vfs };
                json_object *o;

                if (!show[i] || !gpu)
                        continue;
                /* a PF in reset or without a driver: "state" and one errors entry, as every
                 * read verb says it (its VFs stay listed: they are devices of their own) */
                o = gpu_state_collect(rep, set->ctx, i, gpu, pf_read_gpu, &p);
                if (!o) {
                        json_object_put(gpus);
                        return report_fail(rep, -ENOMEM, "out of memory");
                }
                json_object_array_add(gpus, o);
        }
        if (guest_note && n_guest > 0 && json_object_array_length(gpus) == 0) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(set->ctx, (size_t) guest);

                report_note(rep, "GPU %d (%s) is a VF inside a guest (%s): its VFs are "
                                 "configured on the host",
                            guest, amdsmi_gpu_get_bdf(gpu),
                            amdsmi_role_to_string(amdsmi_gpu_get_role(gpu)));
        }
        *ret = gpus;
        return 0;
}

static json_object *vf_bdfs_json(const struct amdsmi_sriov_info *info) {
        json_object *a = json_object_new_array();

        for (unsigned i = 0; a && i < info->n_vfs && i < AMDSMI_SRIOV_MAX_VFS; i++)
                json_object_array_add(a, json_object_new_string(info->vfs[i].bdf));
        return a;
}

/* ---- sriov set: the sysfs path ---------------------------------------------------------- */

static json_object *change_report_json(const struct amdsmi_sriov_change *ch) {
        json_object *o = json_object_new_object(), *bl;

        if (!o)
                return NULL;
        json_set(o, "stage", json_object_new_string(amdsmi_sriov_stage_to_string(ch->stage)));
        json_set(o, "error", report_errno_json(ch->error));
        json_set(o, "config", str_or_null(sriov_config_name(ch->config)));
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

static void say_blockers(struct sriov_run *s, const struct amdsmi_sriov_change *ch) {
        for (unsigned i = 0; i < ch->n_blockers && i < AMDSMI_SRIOV_MAX_VFS; i++) {
                const struct amdsmi_vf_blocker *b = &ch->blockers[i];

                if (b->in_use && b->pid > 0)
                        sriov_note(s, "  VF %s%s, in use by PID %ld (%s)", b->bdf,
                                   b->vfio ? " is bound to vfio-pci" : "", (long) b->pid,
                                   b->comm[0] ? b->comm : "?");
                else if (b->in_use)
                        sriov_note(s, "  VF %s%s, in use", b->bdf,
                                   b->vfio ? " is bound to vfio-pci" : "");
                else
                        sriov_note(s, "  VF %s is bound to vfio-pci", b->bdf);
        }
        if (ch->n_blockers > AMDSMI_SRIOV_MAX_VFS)
                sriov_note(s, "  ... and %u more VFs", ch->n_blockers - AMDSMI_SRIOV_MAX_VFS);
}

int sriov_set_one(struct sriov_run *s, struct sriov_set_target *t, int *result) {
        const char *bdf = amdsmi_gpu_get_bdf(t->gpu);
        struct amdsmi_sriov_change ch = { .size = sizeof(ch) };
        struct gpu_lock lock = GPU_LOCK_INIT;
        uint64_t flags = (s->report->dry_run ? AMDSMI_SRIOV_DRY_RUN : 0) |
                         (s->ch.force ? AMDSMI_SRIOV_FORCE : 0) |
                         (s->ch.autoprobe_off ? AMDSMI_SRIOV_AUTOPROBE_OFF : 0);
        char who[64], msg[4600];
        int r;

        /* amdsmid's job holds the lock already */
        snprintf(who, sizeof(who), "GPU %zu (%s)", t->index, bdf);
        r = change_lock(&(struct change_lock){ .bdfs = &bdf,
                                               .n = 1,
                                               .who = who,
                                               .held = s->report->dry_run || s->daemon },
                        &lock, msg, sizeof(msg));
        if (r < 0)
                return sriov_run_fail(result, report_fail(s->report, r, "%s", msg));
        r = amdsmi_gpu_set_num_vfs(t->gpu, s->ch.num_vfs, flags, s->ch.timeout_ms, &ch);
        change_unlock(&lock, 1);
        json_set(t->entry, "report", change_report_json(&ch));

        if (r < 0) {
                if (ch.message[0])
                        report_fail(s->report, r, "GPU %zu (%s): %s", t->index, bdf, ch.message);
                else if (r == -ERANGE)
                        report_fail(s->report, r,
                                 "GPU %zu (%s): %u VFs is out of range: the PF has at most "
                                 "%u",
                                 t->index, bdf, s->ch.num_vfs, t->info->total_vfs);
                else
                        report_fail(s->report, r, "GPU %zu (%s): setting %u VFs failed: %s", t->index, bdf,
                                 s->ch.num_vfs, strerror(-r));
                if (r == -EBUSY && ch.n_blockers > 0) {
                        say_blockers(s, &ch);
                        sriov_note(s, "  stop the VMs or release the VFs (amdsmi sriov "
                                      "release VF); --force changes the count anyway");
                }
                if (!ch.message[0] && (ch.config == AMDSMI_VF_CONFIG_GIM_PARAM ||
                                       t->info->config == AMDSMI_VF_CONFIG_GIM_PARAM))
                        sriov_note(s,
                                   "  with --persist, amdsmi writes gim's vf_num to %s for "
                                   "gim's next load",
                                   GIM_MODPROBE_FILE);
                return sriov_run_fail(result, r);
        }

        if (s->report->dry_run && ch.vfs_before == s->ch.num_vfs)
                report_say(s->report, t->entry, "GPU %zu (%s): dry run: already %u VFs, nothing to do",
                        t->index, bdf, ch.vfs_before);
        else if (s->report->dry_run)
                report_say(s->report, t->entry, "GPU %zu (%s): dry run: VFs %u -> %u is possible now%s%s",
                        t->index, bdf, ch.vfs_before, s->ch.num_vfs,
                        ch.n_blockers > 0 ? " (with --force: VFs in use)" : "",
                        ch.vfs_before > 0 && s->ch.num_vfs > 0 ? " (writing 0 first)" : "");
        else if (!ch.changed)
                report_say(s->report, t->entry, "GPU %zu (%s): already %u VFs, nothing to do", t->index, bdf,
                        ch.vfs_after);
        else
                report_say(s->report, t->entry, "GPU %zu (%s): VFs %u -> %u (%s%s%u ms)", t->index, bdf,
                        ch.vfs_before, ch.vfs_after, ch.wrote_zero ? "0 written first, " : "",
                        ch.autoprobe_off ? "autoprobe off, " : "", ch.elapsed_ms);
        if (!s->report->dry_run && ch.changed && ch.n_blockers > 0)
                report_say(s->report, t->entry, "  forced: %u VF%s in use or bound to vfio-pci went away",
                        ch.n_blockers, ch.n_blockers == 1 ? "" : "s");
        return 0;
}

void sriov_set_refresh_vfs(struct sriov_run *s, struct sriov_set_target *targets, size_t n) {

        /* the VFs that came or went: the context's GPUs are out of date */
        if (amdsmi_ctx_enumerate(s->set->ctx) < 0)
                sriov_note(s, "cannot enumerate the GPUs again after the change");
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ struct amdsmi_sriov_info *after = NULL;
                struct amdsmi_gpu *gpu = NULL;
                int k;

                k = amdsmi_ctx_find_gpu(s->set->ctx, amdsmi_gpu_get_bdf(targets[i].gpu), &gpu);
                if (k >= 0)
                        k = sriov_read_info(gpu, &after);
                if (k < 0) {
                        report_field_error(s->report, (int) targets[i].index, "vfs", k);
                        json_set(targets[i].entry, "vfs", NULL);
                } else
                        json_set(targets[i].entry, "vfs", vf_bdfs_json(after));
        }
}

json_object *sriov_set_entry_new(const struct sriov_run *s, const struct sriov_set_target *t) {
        json_object *e = json_object_new_object();

        if (!e)
                return NULL;
        json_set(e, "gpu", json_object_new_uint64(t->index));
        json_set(e, "bdf", json_object_new_string(amdsmi_gpu_get_bdf(t->gpu)));
        json_set(e, "product", json_object_new_string(amdsmi_gpu_get_product(t->gpu)));
        json_set(e, "config", str_or_null(sriov_config_name(t->info->config)));
        json_set(e, "num_vfs_requested", json_object_new_uint64(s->ch.num_vfs));
        json_set(e, "report", NULL);
        json_set(e, "persist", NULL);
        json_set(e, "vfs", vf_bdfs_json(t->info));
        json_set(e, "result", NULL);
        json_set(e, "messages", json_object_new_array());
        return e;
}

int sriov_check_persist(struct sriov_run *s, const struct sriov_set_target *t) {
        if (t->info->config == AMDSMI_VF_CONFIG_GIM_PARAM)
                return 0;
        return report_fail(s->report, -EOPNOTSUPP,
                        "GPU %zu (%s): --persist writes gim's vf_num; this PF is not under gim "
                        "(%s, VF count through %s): amdsmi does not persist a sysfs VF count "
                        "(amdsmid will keep it as desired state)",
                        t->index, amdsmi_gpu_get_bdf(t->gpu), sriov_or_none(t->info->pf_driver),
                        sriov_or_none(sriov_config_name(t->info->config)));
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

static int collect_gim_gpus(struct sriov_run *s, struct sriov_set_target *targets, size_t n_targets,
                            struct gim_gpus *ret) {
        size_t n = amdsmi_ctx_get_gpu_count(s->set->ctx);
        struct gim_gpus g = {};

        g.pfs = calloc(n + 1, sizeof(*g.pfs));
        g.bdfs = calloc(n + 1, sizeof(*g.bdfs));
        if (!g.pfs || !g.bdfs) {
                gim_gpus_done(&g);
                return report_fail(s->report, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ struct amdsmi_sriov_info *own = NULL;
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(s->set->ctx, i);
                const struct amdsmi_sriov_info *info = NULL;
                struct gim_pf *pf;
                enum amdsmi_role role;
                int r;

                if (!gpu)
                        continue;
                role = amdsmi_gpu_get_role(gpu);
                if (role == AMDSMI_ROLE_VF || sriov_role_is_guest(role))
                        continue;
                for (size_t k = 0; k < n_targets; k++)
                        if (strcmp(amdsmi_gpu_get_bdf(targets[k].gpu), amdsmi_gpu_get_bdf(gpu)) ==
                            0)
                                info = targets[k].info;
                if (!info) {
                        if (amdsmi_gpu_get_driver(gpu) != AMDSMI_DRIVER_GIM)
                                continue;
                        r = sriov_read_info(gpu, &own);
                        if (r < 0) {
                                gim_gpus_done(&g);
                                return report_fail(s->report, r,
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
                        if (strcmp(amdsmi_gpu_get_bdf(targets[k].gpu), pf->bdf) == 0)
                                pf->requested = (int) s->ch.num_vfs;
                g.bdfs[g.n] = amdsmi_gpu_get_bdf(gpu);
                g.n++;
        }
        *ret = g;
        return 0;
}

int sriov_check_gim_count(struct sriov_run *s, const struct sriov_set_target *t) {
        const char *bdf = amdsmi_gpu_get_bdf(t->gpu), *product = amdsmi_gpu_get_product(t->gpu);
        char modes[128];
        unsigned n = s->ch.num_vfs;

        if (n < GIM_VF_NUM_MIN || n > GIM_VF_NUM_MAX)
                return report_fail(s->report, -ERANGE,
                                "GPU %zu (%s): gim's vf_num is %u to %u VFs per GPU, not %u",
                                t->index, bdf, GIM_VF_NUM_MIN, GIM_VF_NUM_MAX, n);
        if (t->info->capable && n > t->info->total_vfs)
                return report_fail(s->report, -ERANGE,
                                "GPU %zu (%s): %u VFs is out of range: the PF has at "
                                "most %u",
                                t->index, bdf, n, t->info->total_vfs);
        if (gim_vf_modes(product, NULL) == 0) {
                sriov_note(s,
                           "warning: GPU %zu (%s): no VF layout of gim is known for %s: %u "
                           "VFs is not checked against its partition modes",
                           t->index, bdf, product, n);
                return 0;
        }
        if (gim_vf_mode_find(product, n))
                return 0;
        vf_modes_text(product, modes, sizeof(modes));
        if (!s->ch.force)
                return report_fail(s->report, -ERANGE,
                                "GPU %zu (%s): gim supports %s VFs on %s (one partition per VF); "
                                "%u is not among them (--force writes it anyway)",
                                t->index, bdf, modes, product, n);
        sriov_note(s, "warning: GPU %zu (%s): gim supports %s VFs on %s; writing %u as forced",
                   t->index, bdf, modes, product, n);
        return 0;
}

static int persist_fail_build(struct sriov_run *s, int r, const char *bdf,
                              const struct gim_modprobe_scan *scan, const struct gim_gpus *g) {
        const struct gim_conf_line *l = &scan->enabled_devices_line;
        bool requested = false;

        for (size_t i = 0; i < g->n; i++)
                if (strcmp(g->pfs[i].bdf, bdf) == 0 && g->pfs[i].requested >= 0)
                        requested = true;
        switch (r) {
        case -ENXIO:
                if (requested)
                        return report_fail(s->report, r,
                                        "GPU %s is not in gim's enabled_devices (%s:%u): gim "
                                        "would not drive it at its next load",
                                        bdf, l->path, l->line);
                return report_fail(s->report, r,
                                "gim's enabled_devices (%s:%u) names %s, which is no GPU under "
                                "gim now: its VF count is unknown; fix enabled_devices first",
                                l->path, l->line, bdf);
        case -ENODATA:
                return report_fail(s->report, -EOPNOTSUPP,
                                "the VF count gim runs GPU %s with is unknown: give it with -g "
                                "too",
                                bdf);
        case -ERANGE:
                return report_fail(s->report, r,
                                "%s holds a vf_num outside 1..31 for GPU %s: give that GPU "
                                "with -g too",
                                GIM_MODPROBE_FILE, bdf);
        default:
                return report_fail(s->report, r, "cannot work out gim's vf_num: %s", strerror(-r));
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

/* "8,8,1,8": the values gim runs with (loaded: "?" when unknown) or those of the file. */
static char *vf_num_list(const struct gim_gpus *g, const struct gim_vf_num *v, size_t n_v,
                         bool loaded) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (size_t i = 0; i < n_v; i++) {
                int value = (int) v[i].vf_num;

                if (loaded) {
                        value = -1;
                        for (size_t k = 0; k < g->n; k++)
                                if (strcmp(g->pfs[k].bdf, v[i].bdf) == 0)
                                        value = g->pfs[k].loaded;
                }
                if (value < 0)
                        fprintf(f, "%s?", i ? "," : "");
                else
                        fprintf(f, "%s%d", i ? "," : "", value);
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

int sriov_persist_run(struct sriov_run *s, struct sriov_set_target *targets, size_t n_targets,
                      int *result, char **ret_old, char **ret_new) {
        _cleanup_free_ struct gim_vf_num *v = NULL;
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ struct gpu_lock *locks = NULL;
        struct gim_modprobe_scan scan = {};
        struct gim_gpus g = {};
        struct gim_conf_line initramfs = {};
        char errpath[PATH_MAX] = "", bdf[16] = "", order[PATH_MAX + 64], lock_msg[4600];
        json_object *persist = NULL;
        size_t n_v = 0;
        bool pending = false, lock = !s->report->dry_run && !s->daemon;
        int r;

        for (size_t i = 0; i < n_targets; i++) {
                r = sriov_check_gim_count(s, &targets[i]);
                if (r < 0)
                        return sriov_run_fail(result, r);
        }
        r = collect_gim_gpus(s, targets, n_targets, &g);
        if (r < 0)
                return sriov_run_fail(result, r);

        /* the file covers every GPU under gim: hold all their change locks (amdsmid's job
         * holds them already) */
        locks = calloc(g.n + 1, sizeof(*locks));
        if (!locks) {
                r = report_fail(s->report, -ENOMEM, "out of memory");
                goto finish;
        }
        for (size_t i = 0; i < g.n; i++)
                locks[i] = (struct gpu_lock) GPU_LOCK_INIT;
        r = change_lock(&(struct change_lock){ .bdfs = g.bdfs,
                                               .n = g.n,
                                               .what = "the change locks of the GPUs under gim",
                                               .held = !lock },
                        locks, lock_msg, sizeof(lock_msg));
        if (r < 0) {
                r = report_fail(s->report, r, "%s", lock_msg);
                goto finish;
        }

        r = gim_modprobe_scan(NULL, &scan, errpath);
        if (r == -EBADMSG) {
                r = report_fail(s->report, -EINVAL,
                             "cannot work out gim's order of the GPUs: enabled_devices in %s:%u "
                             "is malformed (%s)",
                             scan.enabled_devices_line.path, scan.enabled_devices_line.line,
                             scan.enabled_devices_line.text);
                goto finish;
        }
        if (r < 0) {
                char msg[PATH_MAX + 128];

                if (errpath[0] && (r == -ELOOP || r == -EISDIR || r == -EBADFD))
                        r = report_fail(s->report, r, "cannot read the modprobe configuration: %s",
                                     safe_open_message(errpath, r, msg, sizeof(msg)));
                else
                        r = report_fail(s->report, r, "cannot read the modprobe configuration%s%s: %s",
                                     errpath[0] ? " " : "", errpath, strerror(-r));
                goto finish;
        }
        r = gim_modprobe_build(g.pfs, g.n, &scan, &v, &n_v, bdf);
        if (r < 0) {
                r = persist_fail_build(s, r, bdf, &scan, &g);
                goto finish;
        }
        persist = persist_json(&g, &scan, v, n_v);
        if (!persist) {
                r = report_fail(s->report, -ENOMEM, "out of memory");
                goto finish;
        }
        for (size_t i = 0; i < n_targets; i++)
                json_set(targets[i].entry, "persist", json_object_get(persist));
        if (ret_old)
                *ret_old = vf_num_list(&g, v, n_v, true);
        if (ret_new)
                *ret_new = vf_num_list(&g, v, n_v, false);

        if (scan.n_conflicts > 0) {
                const struct gim_conf_line *l = &scan.conflicts[0];

                r = report_fail(s->report, -EBUSY,
                             "gim's vf_num is set in %s:%u already (\"%s\"): amdsmi writes only "
                             "%s and changes no other file; remove vf_num there and run the "
                             "command again",
                             l->path, l->line, l->text, GIM_MODPROBE_FILE);
                for (size_t i = 1; i < scan.n_conflicts && i < GIM_MODPROBE_MAX_CONFLICTS; i++)
                        sriov_note(s, "  also %s:%u: %s", scan.conflicts[i].path,
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
                r = report_fail(s->report, r, "cannot format %s: %s", GIM_MODPROBE_FILE, strerror(-r));
                goto finish;
        }
        json_set(persist, "content", json_object_new_string(text));
        for (size_t i = 0; i < n_v; i++)
                for (size_t k = 0; k < g.n; k++)
                        if (strcmp(g.pfs[k].bdf, v[i].bdf) == 0 &&
                            g.pfs[k].loaded != (int) v[i].vf_num)
                                pending = true;

        if (s->report->dry_run) {
                for (size_t i = 0; i < n_targets; i++)
                        report_say(s->report, targets[i].entry,
                                "GPU %zu (%s): dry run: vf_num %u for gim's next load",
                                targets[i].index, amdsmi_gpu_get_bdf(targets[i].gpu), s->ch.num_vfs);
                report_say(s->report, targets[0].entry, "dry run: amdsmi would write %s:", GIM_MODPROBE_FILE);
                report_text(s->report, text);
                r = 0;
                goto finish;
        }

        r = gim_modprobe_write(NULL, text);
        if (r < 0) {
                r = report_fail(s->report, r, "cannot write %s: %s", GIM_MODPROBE_FILE, strerror(-r));
                goto finish;
        }
        json_set(persist, "written", json_object_new_boolean(true));
        for (size_t i = 0; i < n_targets; i++)
                report_say(s->report, targets[i].entry, "GPU %zu (%s): vf_num %u for gim's next load",
                        targets[i].index, amdsmi_gpu_get_bdf(targets[i].gpu), s->ch.num_vfs);
        {
                const char *line = strstr(text, "\noptions gim ");

                line = line ? line + 1 : text;
                report_say(s->report, targets[0].entry, "wrote %s: %.*s", GIM_MODPROBE_FILE,
                        (int) strcspn(line, "\n"), line);
        }
        report_say(s->report, targets[0].entry,
                "gim reads vf_num when it loads: the new count applies at gim's next load "
                "(modprobe -r gim; modprobe gim: every VF goes away meanwhile) or at the next "
                "boot");
        r = gim_modprobe_initramfs(NULL, &initramfs);
        if (r > 0) {
                json_set(persist, "initramfs", conf_line_ref(&initramfs));
                report_say(s->report, targets[0].entry,
                        "gim is loaded from the initramfs (%s:%u): rebuild it so that it "
                        "carries the new file: update-initramfs -u (dracut -f on dracut systems)",
                        initramfs.path, initramfs.line);
        } else
                report_say(s->report, targets[0].entry,
                        "if the initramfs loads gim, rebuild it too: update-initramfs -u");
        r = 0;
        if (pending)
                r = report_fail(s->report, -ERELOAD_REQUIRED, SRIOV_GIM_PENDING_MESSAGE);

finish:
        if (locks)
                change_unlock(locks, g.n);
        gim_gpus_done(&g);
        gim_modprobe_scan_done(&scan);
        json_object_put(persist);
        if (r < 0)
                sriov_run_fail(result, r);
        return r;
}

bool sriov_persist_pending(json_object *entry) {
        json_object *persist = NULL, *written = NULL, *list = NULL;

        if (!json_object_object_get_ex(entry, "persist", &persist) || !persist ||
            !json_object_object_get_ex(persist, "written", &written) ||
            !json_object_get_boolean(written) ||
            !json_object_object_get_ex(persist, "vf_num", &list))
                return false;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *e = json_object_array_get_idx(list, i), *want = NULL, *loaded = NULL;

                json_object_object_get_ex(e, "vf_num", &want);
                json_object_object_get_ex(e, "loaded", &loaded);
                /* the same rule as sriov_persist_run(): an unknown loaded value differs */
                if (!loaded || !want ||
                    json_object_get_int64(loaded) != json_object_get_int64(want))
                        return true;
        }
        return false;
}

/* ---- sriov bind / release --------------------------------------------------------------- */

static json_object *bind_report_json(const struct amdsmi_vf_bind_report *rep) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "stage", json_object_new_string(amdsmi_sriov_stage_to_string(rep->stage)));
        json_set(o, "error", report_errno_json(rep->error));
        json_set(o, "driver_before", json_object_new_string(sriov_or_none(rep->driver_before)));
        json_set(o, "driver_after", json_object_new_string(sriov_or_none(rep->driver_after)));
        json_set(o, "override_before", str_or_null(rep->override_before));
        json_set(o, "override_after", str_or_null(rep->override_after));
        json_set(o, "changed", json_object_new_boolean(rep->changed));
        json_set(o, "message", str_or_null(rep->message));
        return o;
}

int sriov_vf_change(struct sriov_run *s, enum sriov_vf_op op, struct amdsmi_gpu *vf, int k,
                    const char *pf, int *result, json_object **ret_entry,
                    struct amdsmi_vf_bind_report *ret_report) {
        const char *what = op == SRIOV_VF_BIND ? "bind" : "release";
        const char *bdf = amdsmi_gpu_get_bdf(vf);
        struct amdsmi_vf_bind_report rep = { .size = sizeof(rep) };
        struct gpu_lock lock = GPU_LOCK_INIT;
        json_object *e;
        uint64_t flags;
        char who[64], msg[4600];
        int r;

        *ret_entry = NULL;
        /* the PF's lock: a bind waits for a change of its PF; amdsmid's job holds it already */
        snprintf(who, sizeof(who), "GPU %s (the PF of %s)", pf, bdf);
        r = change_lock(&(struct change_lock){ .bdfs = &pf,
                                               .n = 1,
                                               .wait_ms = BIND_LOCK_WAIT_MS,
                                               .who = who,
                                               .held = s->report->dry_run || s->daemon },
                        &lock, msg, sizeof(msg));
        if (r < 0)
                return sriov_run_fail(result, report_fail(s->report, r, "%s", msg));
        flags = (s->report->dry_run ? AMDSMI_SRIOV_DRY_RUN : 0) | (s->ch.force ? AMDSMI_SRIOV_FORCE : 0);
        r = op == SRIOV_VF_BIND ? amdsmi_vf_bind_vfio(vf, flags, &rep)
                                : amdsmi_vf_release(vf, flags, &rep);
        change_unlock(&lock, 1);
        if (ret_report)
                *ret_report = rep;

        e = json_object_new_object();
        if (!e)
                return sriov_run_fail(result, report_fail(s->report, -ENOMEM, "out of memory"));
        json_set(e, "gpu", json_object_new_int(k));
        json_set(e, "bdf", json_object_new_string(bdf));
        json_set(e, "pf_bdf", json_object_new_string(pf));
        json_set(e, "product", json_object_new_string(amdsmi_gpu_get_product(vf)));
        json_set(e, "operation", json_object_new_string(what));
        json_set(e, "report", bind_report_json(&rep));
        json_set(e, "result", report_errno_json(r));
        json_set(e, "messages", json_object_new_array());
        *ret_entry = e;

        if (r < 0) {
                sriov_run_fail(result, r);
                report_fail(s->report, r, "%s: %s failed: %s", bdf, what,
                         rep.message[0] ? rep.message : strerror(-r));
                if (r == -EBUSY && op == SRIOV_VF_RELEASE && !s->ch.force)
                        sriov_note(s, "  --force releases it anyway");
        } else if (s->report->dry_run && op == SRIOV_VF_BIND && strcmp(rep.driver_before, "vfio-pci") != 0)
                report_say(s->report, e, "%s: dry run: %s -> vfio-pci is possible now", bdf,
                        sriov_or_none(rep.driver_before));
        else if (s->report->dry_run && op == SRIOV_VF_RELEASE && strcmp(rep.driver_before, "vfio-pci") == 0)
                report_say(s->report, e, "%s: dry run: vfio-pci -> the driver it had before is possible now",
                        bdf);
        else if (!rep.changed)
                report_say(s->report, e, "%s: %s (%s)", bdf, sriov_or_none(rep.driver_after),
                        op == SRIOV_VF_BIND ? "bound to vfio-pci already, nothing to do"
                                            : "not bound to vfio-pci, nothing to do");
        else
                report_say(s->report, e, "%s: %s -> %s%s", bdf, sriov_or_none(rep.driver_before),
                        sriov_or_none(rep.driver_after), s->report->dry_run ? " (dry run)" : "");
        return r;
}
