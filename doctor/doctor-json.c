/* SPDX-License-Identifier: MIT */
/*
 * The doctor document (doctor.h) for both front ends: reads the host's and the selected GPUs'
 * facts once, runs the checks of doctor-checks.c and lists them, host checks first, then each
 * GPU's (and its VFs'). Reads only; nothing here needs root except the bad-page threshold
 * (debugfs), which an unprivileged run reports as unknown.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "amdsmid-conf.h"
#include "doctor.h"
#include "documents.h"
#include "health-json.h"
#include "json-util.h"
#include "macro.h"
#include "power-apml.h"
#include "profile-plan.h"
#include "state.h"

struct doctor_run {
        const struct doc_query *q;
        struct amdsmi_ctx *ctx;
        const struct config *conf; /* amdsmid's, or @own_conf */
        struct config *own_conf;
        struct health_thresholds thresholds;
        json_object *gpu_checks; /* the per-GPU checks, in GPU order */
        bool sriov_needed, guest_only, any_host_gpu, gim;
        struct doctor_gim_gpu *gim_gpus;
        size_t n_gim;
        struct doctor_hive_gpu *hive;
        size_t n_hive;
        struct doctor_node *nodes;
        size_t n_nodes;
};

/* Adds @c's object to @list and clears @c. */
static int add_check(json_object *list, struct doctor_check *c) {
        json_object *o = c->evidence ? doctor_check_json(c) : NULL;

        doctor_check_clear(c);
        if (!o)
                return -ENOMEM;
        json_object_array_add(list, o);
        return 0;
}

/* The group of a device node: its name and members (getgrgid_r: /etc/group, NSS). */
static void node_group(struct doctor_node *n) {
        struct group gr, *res = NULL;
        char buf[16384];
        size_t len = 0;

        if (getgrgid_r((gid_t) n->gid, &gr, buf, sizeof(buf), &res) != 0 || !res)
                return;
        n->group_known = true;
        snprintf(n->group, sizeof(n->group), "%s", res->gr_name);
        for (char **m = res->gr_mem; m && *m; m++) {
                n->n_members++;
                if (len < sizeof(n->members))
                        len += (size_t) snprintf(n->members + len, sizeof(n->members) - len, "%s%s",
                                                 len ? "," : "", *m);
        }
}

static int add_node(struct doctor_run *run, const char *dev_root, const char *name) {
        struct doctor_node *nn = reallocarray(run->nodes, run->n_nodes + 1, sizeof(*nn)), *n;
        struct stat st;

        if (!nn)
                return -ENOMEM;
        run->nodes = nn;
        n = &nn[run->n_nodes];
        *n = (struct doctor_node){};
        snprintf(n->path, sizeof(n->path), "%s/%s", dev_root, name);
        for (size_t i = 0; i < run->n_nodes; i++)
                if (strcmp(run->nodes[i].path, n->path) == 0)
                        return 0;
        run->n_nodes++;
        if (stat(n->path, &st) < 0) {
                n->error = -errno;
                return 0;
        }
        n->mode = st.st_mode;
        n->uid = st.st_uid;
        n->gid = st.st_gid;
        node_group(n);
        return 0;
}

/* Whether the GPU at @bdf is selected. */
static bool pf_selected(const struct doctor_run *run, const char *bdf) {
        const struct gpu_set *set = run->q->set;

        for (size_t i = 0; bdf && i < set->n_gpus; i++) {
                struct amdsmi_gpu *g = amdsmi_ctx_get_gpu(set->ctx, i);

                if (set->matches[i].selected && g && strcmp(amdsmi_gpu_get_bdf(g), bdf) == 0)
                        return true;
        }
        return false;
}

static json_object *doctor_gpu(void *userdata, size_t index, struct amdsmi_gpu *gpu) {
        struct doctor_run *run = userdata;
        enum amdsmi_role role = amdsmi_gpu_get_role(gpu);
        bool guest = role == AMDSMI_ROLE_VF_GUEST_1VF || role == AMDSMI_ROLE_VF_GUEST_MULTI;
        bool vf = guest || role == AMDSMI_ROLE_VF;
        const char *bdf = amdsmi_gpu_get_bdf(gpu);
        const char *drv = amdsmi_gpu_get_driver_name(gpu);
        struct amdsmi_sriov_info sriov = { .size = sizeof(sriov) };
        struct amdsmi_iommu_group g;
        struct doctor_check c;
        uint64_t hive_id = amdsmi_gpu_get_hive_id(gpu);
        bool hive = hive_id != 0 && hive_id != AMDSMI_NA;
        int r, idx = (int) index;

        if (!guest)
                run->guest_only = false;
        if (!vf)
                run->any_host_gpu = true;
        /* a host's VF: its PF's checks have its IOMMU group (nothing else is its own) */
        if (role == AMDSMI_ROLE_VF && pf_selected(run, amdsmi_gpu_get_physfn_bdf(gpu)))
                return doc_gpu_new(index, gpu);
        if (role == AMDSMI_ROLE_VF) {
                doctor_check_init(&c, "iommu_group", idx, bdf);
                r = amdsmi_pci_read_iommu_group(run->ctx, bdf, &g);
                doctor_check_iommu_group(true, false, r, &g, &c);
                if (add_check(run->gpu_checks, &c) < 0)
                        return NULL;
                return doc_gpu_new(index, gpu);
        }

        /* the GPU's IOMMU group, then its VFs' */
        doctor_check_init(&c, "iommu_group", idx, bdf);
        r = guest ? 0 : amdsmi_pci_read_iommu_group(run->ctx, bdf, &g);
        doctor_check_iommu_group(role == AMDSMI_ROLE_VF, guest, r, &g, &c);
        if (add_check(run->gpu_checks, &c) < 0)
                return NULL;
        if (!vf && amdsmi_gpu_read_sriov(gpu, &sriov) == 0) {
                struct config_gpu cg;
                bool desired = run->conf && config_desired(run->conf, bdf, &cg) && cg.num_vfs_set;

                if (sriov.n_vfs > 0 || (desired && cg.num_vfs > 0))
                        run->sriov_needed = true;
                if (drv && strcmp(drv, "gim") == 0) {
                        struct doctor_gim_gpu *ng =
                                reallocarray(run->gim_gpus, run->n_gim + 1, sizeof(*ng));

                        run->gim = true;
                        run->sriov_needed = true;
                        if (!ng)
                                return NULL;
                        run->gim_gpus = ng;
                        ng[run->n_gim] = (struct doctor_gim_gpu){
                                .desired = desired ? (int) cg.num_vfs : -1,
                                .loaded = sriov.gim_vf_num,
                                .num_vfs = (int) sriov.num_vfs,
                        };
                        snprintf(ng[run->n_gim].bdf, sizeof(ng[run->n_gim].bdf), "%s", bdf);
                        run->n_gim++;
                }
                for (unsigned k = 0; k < sriov.n_vfs; k++) {
                        doctor_check_init(&c, "iommu_group", idx, sriov.vfs[k].bdf);
                        r = amdsmi_pci_read_iommu_group(run->ctx, sriov.vfs[k].bdf, &g);
                        doctor_check_iommu_group(true, false, r, &g, &c);
                        if (add_check(run->gpu_checks, &c) < 0)
                                return NULL;
                }
        }

        /* the hive's firmware and driver */
        if (hive) {
                struct doctor_hive_gpu *nh = reallocarray(run->hive, run->n_hive + 1, sizeof(*nh));
                const struct amdsmi_firmware *fw = NULL;
                int n = amdsmi_gpu_get_firmware(gpu, &fw);

                if (!nh)
                        return NULL;
                run->hive = nh;
                nh[run->n_hive] = (struct doctor_hive_gpu){
                        .hive_id = hive_id,
                        .n_fw = n > 0 ? (size_t) n : 0,
                        .fw = n > 0 ? fw : NULL,
                };
                snprintf(nh[run->n_hive].bdf, sizeof(nh[run->n_hive].bdf), "%s", bdf);
                snprintf(nh[run->n_hive].driver, sizeof(nh[run->n_hive].driver), "%s",
                         drv ? drv : "");
                run->n_hive++;
        }

        /* XGMI links */
        doctor_check_init(&c, "xgmi_links", idx, bdf);
        if (hive) {
                struct health_links l = {};

                (void) health_links_read(gpu, true, &l);
                doctor_check_xgmi(true, &l, &c);
        } else
                doctor_check_xgmi(false, NULL, &c);
        if (add_check(run->gpu_checks, &c) < 0)
                return NULL;

        /* RAS */
        {
                struct amdsmi_ras_info ras = { .size = sizeof(ras) };

                doctor_check_init(&c, "ras", idx, bdf);
                if (drv && strcmp(drv, "gim") == 0) {
                        /* gim keeps RAS behind its own device (amdgv-cmd-handle), not sysfs */
                        c.status = DOCTOR_NOT_APPLICABLE;
                        snprintf(c.summary, sizeof(c.summary),
                                 "gim drives this GPU: its RAS state is gim's, not in sysfs");
                } else {
                        r = amdsmi_gpu_read_ras(gpu, &ras);
                        doctor_check_ras(r, &ras, vf, &c);
                }
                if (add_check(run->gpu_checks, &c) < 0)
                        return NULL;
        }

        /* bad pages against the threshold */
        {
                struct amdsmi_bad_page *pages = NULL;
                uint32_t threshold = 0;
                int n = amdsmi_gpu_read_bad_pages(gpu, &pages), te;

                free(pages);
                te = run->q->unprivileged ? -EACCES
                                          : amdsmi_gpu_read_bad_page_threshold(gpu, &threshold);
                doctor_check_init(&c, "bad_pages", idx, bdf);
                doctor_check_bad_pages(n < 0 ? n : 0, n > 0 ? (size_t) n : 0, te, threshold,
                                       run->thresholds.bad_pages_warning_percent, &c);
                if (add_check(run->gpu_checks, &c) < 0)
                        return NULL;
        }

        /* the power cap against the BMC's APML limit */
        {
                struct amdsmi_power_info p = { .size = sizeof(p) };
                struct apml_file f = {};
                uint64_t cap = AMDSMI_NA;

                doctor_check_init(&c, "power_cap", idx, bdf);
                if (!vf && amdsmi_gpu_read_power(gpu, AMDSMI_POWER_READ_NO_METRICS, &p) == 0 &&
                    p.ppt0.cap.error == 0)
                        cap = p.ppt0.cap.uw;
                if (vf)
                        doctor_check_power(cap, "absent", 0, NULL, NULL, &c);
                else if (apml_read(bdf, &f) == 0)
                        doctor_check_power(cap, apml_file_state_to_string(f.state), f.uw, f.path,
                                           f.error, &c);
                else
                        doctor_check_power(cap, "unreadable", 0, NULL, "not a PCI address", &c);
                if (add_check(run->gpu_checks, &c) < 0)
                        return NULL;
        }

        /* the device nodes its users need */
        {
                const char *dev = amdsmi_ctx_get_dev_root(run->ctx);
                int minor = amdsmi_gpu_get_render_minor(gpu);
                char name[32];

                if (!dev)
                        dev = "/dev";
                if (add_node(run, dev, "kfd") < 0)
                        return NULL;
                if (minor >= 0) {
                        snprintf(name, sizeof(name), "dri/renderD%d", minor);
                        if (add_node(run, dev, name) < 0)
                                return NULL;
                }
        }
        return doc_gpu_new(index, gpu);
}

/* amdsmid.conf's plan as `amdsmi apply --check` sees it: its sync state, the settings that
 * differ ("0000:c1:00.0 power_cap_w, ...") into @drifted. */
static const char *plan_state(struct doctor_run *run, char *drifted, size_t size) {
        struct profile_plan p = {};
        struct profile_plan_env env = {};
        struct state_store *state = NULL;
        const char *s;
        size_t len = 0;

        if (run->q->doctor_plan) {
                /* amdsmid's own plan, of its configuration in force */
                int r = run->q->doctor_plan(run->q->doctor_userdata, (struct gpu_set *) run->q->set,
                                            &p);

                if (r < 0)
                        return NULL;
                if (r > 0) {
                        profile_plan_clear(&p);
                        return "failed";
                }
        } else {
                if (!run->conf)
                        return "failed";
                if (state_open(STATE_READ, 1000, &state) < 0)
                        state = NULL;
                env.state = state;
                if (profile_plan_build(&p, run->conf, (struct gpu_set *) run->q->set, &env) < 0) {
                        state_close(state);
                        return NULL;
                }
                state_close(state);
        }
        for (size_t i = 0; p.rows && i < json_object_array_length(p.rows); i++) {
                json_object *o = json_object_array_get_idx(p.rows, i), *v;

                if (json_object_object_get_ex(o, "in_sync", &v) && json_object_get_boolean(v))
                        continue;
                if (len < size)
                        len += (size_t) snprintf(
                                drifted + len, size - len, "%s%s %s", len ? ", " : "",
                                json_object_get_string(json_object_object_get(o, "bdf")),
                                json_object_get_string(json_object_object_get(o, "setting")));
        }
        s = profile_sync_state_to_string(p.state);
        profile_plan_clear(&p);
        return s;
}

json_object *doctor_document(const struct doc_query *q) {
        struct doctor_run run = { .q = q, .ctx = q->set->ctx, .guest_only = true };
        struct amdsmi_host_info host = { .size = sizeof(host) };
        unsigned counts[_DOCTOR_STATUS_MAX] = {};
        enum doctor_status worst = DOCTOR_NOT_APPLICABLE;
        json_object *checks = json_object_new_array(), *gpus = NULL, *doc = NULL, *sum, *errors;
        struct doctor_check c;
        char err[512] = "", vf_num[256] = "", drifted[512] = "";
        const char *sync;
        int r;

        run.gpu_checks = json_object_new_array();
        if (!checks || !run.gpu_checks)
                goto oom;
        if (q->doctor_config)
                run.conf = q->doctor_config;
        else if (config_load(NULL, &run.own_conf, err, sizeof(err)) >= 0)
                run.conf = run.own_conf;
        health_thresholds_from_config(run.conf, &run.thresholds);
        (void) amdsmi_host_read(run.ctx, &host);

        r = gpu_set_collect(q->set, q->report, doctor_gpu, &run, &gpus);
        if (r < 0)
                goto finish;

        /* the host's checks: not in a VM (its IOMMU is the host's) */
        doctor_check_init(&c, "iommu", -1, NULL);
        if (run.guest_only && q->set->n_gpus > 0) {
                c.status = DOCTOR_NOT_APPLICABLE;
                snprintf(c.summary, sizeof(c.summary), "a VM: the host's IOMMU isolates its GPUs");
        } else
                doctor_check_iommu(&host, &c);
        if (add_check(checks, &c) < 0)
                goto oom;
        doctor_check_init(&c, "interrupt_remapping", -1, NULL);
        if (run.guest_only && q->set->n_gpus > 0) {
                c.status = DOCTOR_NOT_APPLICABLE;
                snprintf(c.summary, sizeof(c.summary), "a VM: the host remaps its interrupts");
        } else
                doctor_check_interrupt_remapping(&host, &c);
        if (add_check(checks, &c) < 0)
                goto oom;
        doctor_check_init(&c, "vfio_pci", -1, NULL);
        doctor_check_vfio_pci(&host, run.sriov_needed && !run.guest_only, &c);
        if (add_check(checks, &c) < 0)
                goto oom;
        doctor_check_init(&c, "gim_vf_num", -1, NULL);
        if (run.gim)
                (void) amdsmi_host_read_module_param(run.ctx, "gim", "vf_num", vf_num,
                                                     sizeof(vf_num));
        doctor_check_gim(run.gim, vf_num, run.gim_gpus, run.n_gim, &c);
        if (add_check(checks, &c) < 0)
                goto oom;
        doctor_check_init(&c, "hive_versions", -1, NULL);
        doctor_check_hive(run.hive, run.n_hive, &c);
        if (add_check(checks, &c) < 0)
                goto oom;
        doctor_check_init(&c, "device_access", -1, NULL);
        doctor_check_access(run.nodes, run.n_nodes, &c);
        if (add_check(checks, &c) < 0)
                goto oom;
        doctor_check_init(&c, "amdsmid", -1, NULL);
        sync = q->doctor_daemon == 1 ? plan_state(&run, drifted, sizeof(drifted)) : NULL;
        doctor_check_daemon(q->doctor_daemon, sync, drifted, &c);
        if (run.conf == NULL && err[0])
                json_set(c.evidence, "config_error", json_object_new_string(err));
        if (add_check(checks, &c) < 0)
                goto oom;
        for (size_t i = 0; i < json_object_array_length(run.gpu_checks); i++)
                json_object_array_add(
                        checks, json_object_get(json_object_array_get_idx(run.gpu_checks, i)));

        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                const char *s = json_object_get_string(
                        json_object_object_get(json_object_array_get_idx(checks, i), "status"));

                for (int k = 0; k < _DOCTOR_STATUS_MAX; k++)
                        if (strcmp(s, doctor_status_to_string((enum doctor_status) k)) == 0) {
                                counts[k]++;
                                worst = doctor_status_worst(worst, (enum doctor_status) k);
                        }
        }
        doc = report_document(q->report, TAKE_PTR(gpus));
        if (!doc)
                goto oom;
        sum = json_object_new_object();
        for (int k = 0; sum && k < _DOCTOR_STATUS_MAX; k++)
                json_set(sum, doctor_status_to_string((enum doctor_status) k),
                         json_object_new_int((int) counts[k]));
        /* "errors" last, as the other documents end with it */
        errors = json_object_get(json_object_object_get(doc, "errors"));
        json_object_object_del(doc, "errors");
        json_set(doc, "checks", TAKE_PTR(checks));
        json_set(doc, "summary", sum);
        json_set(doc, "status",
                 json_object_new_string(doctor_status_to_string(
                         worst == DOCTOR_NOT_APPLICABLE ? DOCTOR_OK : worst)));
        json_set(doc, "exit_code", json_object_new_int(doctor_exit_status(worst)));
        json_set(doc, "errors", errors);
        goto finish;
oom:
        report_fail(q->report, -ENOMEM, "out of memory");
finish:
        json_object_put(checks);
        json_object_put(gpus);
        json_object_put(run.gpu_checks);
        config_free(run.own_conf);
        free(run.gim_gpus);
        free(run.hive);
        free(run.nodes);
        return doc;
}
