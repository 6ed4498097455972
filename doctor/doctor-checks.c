/* SPDX-License-Identifier: MIT */
/*
 * The doctor's checks (doctor.h): pure functions of the facts read, so that each is tested on
 * both sides with hand-made facts. Each says what it read (evidence) and what to do (fix).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "health-json.h"
#include "json-util.h"
#include "macro.h"

const char *doctor_status_to_string(enum doctor_status s) {
        switch (s) {
        case DOCTOR_OK:
                return "ok";
        case DOCTOR_WARN:
                return "warn";
        case DOCTOR_FAIL:
                return "fail";
        case DOCTOR_NOT_APPLICABLE:
        case _DOCTOR_STATUS_MAX:
                break;
        }
        return "not_applicable";
}

static int rank(enum doctor_status s) {
        switch (s) {
        case DOCTOR_FAIL:
                return 3;
        case DOCTOR_WARN:
                return 2;
        case DOCTOR_OK:
                return 1;
        default:
                return 0;
        }
}

enum doctor_status doctor_status_worst(enum doctor_status a, enum doctor_status b) {
        return rank(a) >= rank(b) ? a : b;
}

int doctor_exit_status(enum doctor_status worst) {
        switch (worst) {
        case DOCTOR_WARN:
                return 1;
        case DOCTOR_FAIL:
                return 2;
        default:
                return 0;
        }
}

void doctor_check_init(struct doctor_check *c, const char *id, int gpu, const char *bdf) {
        *c = (struct doctor_check){ .id = id, .gpu = gpu, .status = DOCTOR_OK };
        snprintf(c->bdf, sizeof(c->bdf), "%s", bdf ? bdf : "");
        c->evidence = json_object_new_object();
}

void doctor_check_clear(struct doctor_check *c) {
        json_object_put(c->evidence);
        c->evidence = NULL;
}

json_object *doctor_check_json(const struct doctor_check *c) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_set(o, "id", json_object_new_string(c->id));
        json_set(o, "gpu", c->gpu < 0 ? NULL : json_object_new_int(c->gpu));
        json_set(o, "bdf", c->bdf[0] ? json_object_new_string(c->bdf) : NULL);
        json_set(o, "status", json_object_new_string(doctor_status_to_string(c->status)));
        json_set(o, "summary", json_object_new_string(c->summary));
        json_set(o, "evidence",
                 c->evidence ? json_object_get(c->evidence) : json_object_new_object());
        json_set(o, "fix", c->fix[0] ? json_object_new_string(c->fix) : NULL);
        return o;
}

_printf_(3, 4) static void say(struct doctor_check *c, enum doctor_status s, const char *fmt, ...) {
        va_list ap;

        c->status = s;
        va_start(ap, fmt);
        vsnprintf(c->summary, sizeof(c->summary), fmt, ap);
        va_end(ap);
}

_printf_(2, 3) static void fix(struct doctor_check *c, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(c->fix, sizeof(c->fix), fmt, ap);
        va_end(ap);
}

static void ev_str(struct doctor_check *c, const char *key, const char *v) {
        json_set(c->evidence, key, json_string_or_null(v));
}

static void ev_int(struct doctor_check *c, const char *key, int64_t v) {
        json_set(c->evidence, key, json_object_new_int64(v));
}

static void ev_errno(struct doctor_check *c, const char *key, int r) {
        json_set(c->evidence, key, r < 0 ? json_object_new_string(strerror(-r)) : NULL);
}

/* ---- kernel command line -------------------------------------------------------------- */

/* Calls @fn for each parameter of @cmdline (blank-separated; "quoted values" kept whole). */
static int cmdline_find(const char *cmdline, const char *name, char *buf, size_t size) {
        size_t nl = strlen(name);
        int found = 0;
        const char *p = cmdline;

        if (!cmdline)
                return 0;
        while (*p) {
                const char *start, *end;
                bool quoted = false;

                while (*p == ' ' || *p == '\t' || *p == '\n')
                        p++;
                if (!*p)
                        break;
                start = p;
                while (*p && (quoted || (*p != ' ' && *p != '\t' && *p != '\n'))) {
                        if (*p == '"')
                                quoted = !quoted;
                        p++;
                }
                end = p;
                if ((size_t) (end - start) >= nl && strncmp(start, name, nl) == 0 &&
                    (start + nl == end || start[nl] == '=')) {
                        const char *v = start + nl == end ? end : start + nl + 1;
                        size_t vl = (size_t) (end - v);

                        found = 1;
                        if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
                                v++;
                                vl -= 2;
                        }
                        if (size) {
                                if (vl >= size)
                                        vl = size - 1;
                                memcpy(buf, v, vl);
                                buf[vl] = '\0';
                        }
                }
        }
        return found;
}

int doctor_cmdline_get(const char *cmdline, const char *name, char *buf, size_t size) {
        return cmdline_find(cmdline, name, buf, size);
}

int doctor_cmdline_has(const char *cmdline, const char *name, const char *value) {
        char v[256];

        if (!cmdline_find(cmdline, name, v, sizeof(v)))
                return 0;
        return !value || strcmp(v, value) == 0;
}

/* Whether the comma-separated list @list holds @word. */
static bool list_has(const char *list, const char *word) {
        size_t wl = strlen(word);

        for (const char *p = list; p && *p;) {
                size_t n = strcspn(p, ",");

                if (n == wl && strncmp(p, word, wl) == 0)
                        return true;
                p += n + (p[n] == ',');
        }
        return false;
}

/* ---- host ----------------------------------------------------------------------------- */

#define IOMMU_FIX_CMDLINE "add \"amd_iommu=on iommu=pt\" to the kernel command line"

void doctor_check_iommu(const struct amdsmi_host_info *h, struct doctor_check *c) {
        const char *cl = h->cmdline_error == 0 ? h->cmdline : NULL;
        char amd[64] = "", iommu[64] = "";
        bool amd_off, iommu_off, pt;
        json_object *units = json_object_new_array();

        (void) doctor_cmdline_get(cl, "amd_iommu", amd, sizeof(amd));
        (void) doctor_cmdline_get(cl, "iommu", iommu, sizeof(iommu));
        amd_off = list_has(amd, "off");
        iommu_off = strcmp(iommu, "off") == 0;
        pt = strcmp(iommu, "pt") == 0 || doctor_cmdline_has(cl, "iommu.passthrough", "1");

        ev_str(c, "cmdline", cl);
        ev_errno(c, "cmdline_error", h->cmdline_error);
        for (unsigned i = 0; units && i < h->n_iommu_units && i < AMDSMI_HOST_IOMMU_UNITS_MAX; i++)
                json_object_array_add(units, json_object_new_string(h->iommu_units[i]));
        json_set(c->evidence, "iommu_units", units);
        ev_errno(c, "iommu_units_error", h->iommu_error == -ENOENT ? 0 : h->iommu_error);

        if (h->n_iommu_units == 0 && h->iommu_error != 0 && h->iommu_error != -ENOENT) {
                say(c, DOCTOR_WARN, "cannot list /sys/class/iommu: %s", strerror(-h->iommu_error));
                return;
        }
        if (h->n_iommu_units == 0) {
                say(c, DOCTOR_FAIL, "the IOMMU is off: no unit in /sys/class/iommu%s",
                    amd_off     ? " (the kernel command line has amd_iommu=off)"
                    : iommu_off ? " (the kernel command line has iommu=off)"
                                : "");
                fix(c, "enable the IOMMU (AMD-Vi / IOMMU, and SR-IOV) in the BIOS; %s%s; reboot",
                    amd_off || iommu_off ? "remove amd_iommu=off / iommu=off and " : "",
                    IOMMU_FIX_CMDLINE);
                return;
        }
        if (amd_off || iommu_off) {
                say(c, DOCTOR_FAIL, "the kernel command line turns the IOMMU off (%s)",
                    amd_off ? "amd_iommu=off" : "iommu=off");
                fix(c, "remove it and " IOMMU_FIX_CMDLINE "; reboot");
                return;
        }
        if (cl && !pt) {
                say(c, DOCTOR_WARN,
                    "the IOMMU is on (%u unit%s) but translates the host's own DMA too: no "
                    "iommu=pt on the kernel command line",
                    h->n_iommu_units, h->n_iommu_units == 1 ? "" : "s");
                fix(c, IOMMU_FIX_CMDLINE " (pass-through for the host's devices, as AMD's "
                                         "SR-IOV guides ask); reboot");
                return;
        }
        say(c, DOCTOR_OK, "the IOMMU is on (%u unit%s%s)", h->n_iommu_units,
            h->n_iommu_units == 1 ? "" : "s", pt ? ", iommu=pt" : "");
}

void doctor_check_interrupt_remapping(const struct amdsmi_host_info *h, struct doctor_check *c) {
        const char *cl = h->cmdline_error == 0 ? h->cmdline : NULL;
        char intremap[64] = "";
        bool off = doctor_cmdline_get(cl, "intremap", intremap, sizeof(intremap)) &&
                   strcmp(intremap, "off") == 0;

        ev_int(c, "remapped_irq_lines", h->irq_remapped);
        ev_int(c, "plain_irq_lines", h->irq_plain);
        ev_str(c, "intremap", off ? "off" : NULL);
        switch (h->interrupt_remapping) {
        case 1:
                say(c, DOCTOR_OK, "interrupts are remapped (%u IR- line%s in /proc/interrupts)",
                    h->irq_remapped, h->irq_remapped == 1 ? "" : "s");
                return;
        case 0:
                say(c, DOCTOR_FAIL,
                    "interrupts are not remapped (%u MSI or IO-APIC line%s in /proc/interrupts, "
                    "none IR-): VFIO refuses to assign a device to a VM without "
                    "allow_unsafe_interrupts%s",
                    h->irq_plain, h->irq_plain == 1 ? "" : "s",
                    off ? "; the kernel command line has intremap=off" : "");
                fix(c,
                    "%senable the IOMMU and x2APIC in the BIOS; reboot; never set "
                    "vfio_iommu_type1.allow_unsafe_interrupts=1 on a host whose VMs are not "
                    "trusted",
                    off ? "remove intremap=off from the kernel command line; " : "");
                return;
        default:
                say(c, DOCTOR_WARN, "cannot tell whether interrupts are remapped: %s",
                    h->interrupt_remapping == -ENODATA ? "no MSI line in /proc/interrupts"
                                                       : strerror(-h->interrupt_remapping));
                return;
        }
}

void doctor_check_vfio_pci(const struct amdsmi_host_info *h, bool needed, struct doctor_check *c) {
        ev_str(c, "driver", h->vfio_pci_driver == 1 ? "bus/pci/drivers/vfio-pci" : NULL);
        json_set(c->evidence, "module_loaded",
                 h->vfio_pci_module < 0 ? NULL : json_object_new_boolean(h->vfio_pci_module));
        json_set(c->evidence, "needed", json_object_new_boolean(needed));
        if (h->vfio_pci_driver == 1) {
                say(c, DOCTOR_OK, "vfio-pci is available (%s)",
                    h->vfio_pci_module == 1   ? "module loaded"
                    : h->vfio_pci_module == 0 ? "built into the kernel"
                                              : "registered");
                return;
        }
        if (h->vfio_pci_driver < 0) {
                say(c, DOCTOR_WARN, "cannot look at /sys/bus/pci/drivers/vfio-pci: %s",
                    strerror(-h->vfio_pci_driver));
                return;
        }
        if (!needed) {
                say(c, DOCTOR_NOT_APPLICABLE,
                    "vfio-pci is not loaded; no GPU here has VFs or SR-IOV to pass to VMs");
                fix(c, "for VMs: modprobe vfio-pci");
                return;
        }
        say(c, DOCTOR_FAIL, "vfio-pci is not loaded: VFs cannot be passed to VMs");
        fix(c, "modprobe vfio-pci, and load it at boot: echo vfio-pci > "
               "/etc/modules-load.d/vfio-pci.conf");
}

void doctor_check_iommu_group(bool vf, bool guest, int error, const struct amdsmi_iommu_group *g,
                              struct doctor_check *c) {
        const char *what = vf ? "VF" : "GPU";
        json_object *others = json_object_new_array();
        unsigned n_others = 0;
        char list[256] = "";
        size_t len = 0;

        if (guest) {
                say(c, DOCTOR_NOT_APPLICABLE, "a VM's device: the host's IOMMU isolates it");
                json_object_put(others);
                return;
        }
        if (error < 0) {
                json_object_put(others);
                ev_errno(c, "error", error);
                if (error == -ENOENT) {
                        say(c, DOCTOR_FAIL, "%s %s has no IOMMU group (the IOMMU is off)", what,
                            c->bdf);
                        fix(c, "turn the IOMMU on (see the check iommu)");
                } else
                        say(c, DOCTOR_WARN, "cannot read the IOMMU group of %s %s: %s", what,
                            c->bdf, strerror(-error));
                return;
        }
        for (unsigned i = 0; i < g->n_devices && i < AMDSMI_IOMMU_GROUP_DEVICES_MAX; i++) {
                if (strcmp(g->devices[i], c->bdf) == 0)
                        continue;
                n_others++;
                if (others)
                        json_object_array_add(others, json_object_new_string(g->devices[i]));
                if (len < sizeof(list))
                        len += (size_t) snprintf(list + len, sizeof(list) - len, "%s%s",
                                                 n_others > 1 ? ", " : "", g->devices[i]);
        }
        if (g->n_devices > AMDSMI_IOMMU_GROUP_DEVICES_MAX)
                n_others += g->n_devices - AMDSMI_IOMMU_GROUP_DEVICES_MAX;
        ev_int(c, "iommu_group", g->group);
        json_set(c->evidence, "other_devices", others);
        if (n_others == 0) {
                say(c, DOCTOR_OK, "%s %s is alone in IOMMU group %d", what, c->bdf, g->group);
                return;
        }
        say(c, vf ? DOCTOR_FAIL : DOCTOR_WARN,
            "%s %s shares IOMMU group %d with %u other device%s (%s): %s", what, c->bdf, g->group,
            n_others, n_others == 1 ? "" : "s", list,
            vf ? "the VF cannot go to a VM without them"
               : "passing it to a VM takes the whole group");
        fix(c, "put the GPU behind a PCIe switch or root port with ACS (Access Control "
               "Services), or enable ACS in the BIOS; pcie_acs_override on the kernel command "
               "line only pretends isolation (devices of one group can still reach each other): "
               "never use it for VMs that are not trusted");
}

void doctor_check_gim(bool gim_loaded, const char *vf_num, const struct doctor_gim_gpu *gpus,
                      size_t n, struct doctor_check *c) {
        json_object *list = json_object_new_array();
        char what[384] = "", cmd[256] = "";
        size_t wl = 0, cl = 0;
        unsigned bad = 0, desired = 0;

        ev_str(c, "vf_num", vf_num && *vf_num ? vf_num : NULL);
        for (size_t i = 0; i < n; i++) {
                const struct doctor_gim_gpu *g = &gpus[i];
                json_object *o = json_object_new_object();

                if (o) {
                        json_set(o, "bdf", json_object_new_string(g->bdf));
                        json_set(o, "num_vfs_desired",
                                 g->desired < 0 ? NULL : json_object_new_int(g->desired));
                        json_set(o, "gim_vf_num",
                                 g->loaded < 0 ? NULL : json_object_new_int(g->loaded));
                        json_set(o, "num_vfs",
                                 g->num_vfs < 0 ? NULL : json_object_new_int(g->num_vfs));
                        if (list)
                                json_object_array_add(list, o);
                        else
                                json_object_put(o);
                }
                if (g->desired < 0)
                        continue;
                desired++;
                if ((g->loaded >= 0 && g->loaded != g->desired) ||
                    (g->loaded < 0 && g->num_vfs >= 0 && g->num_vfs != g->desired)) {
                        int have = g->loaded >= 0 ? g->loaded : g->num_vfs;

                        bad++;
                        if (wl < sizeof(what))
                                wl += (size_t) snprintf(
                                        what + wl, sizeof(what) - wl, "%s%s: %d desired, gim %d",
                                        bad > 1 ? "; " : "", g->bdf, g->desired, have);
                        if (cl < sizeof(cmd))
                                cl += (size_t) snprintf(
                                        cmd + cl, sizeof(cmd) - cl,
                                        "%samdsmi sriov set -g %s --num-vfs %d --persist",
                                        bad > 1 ? "; " : "", g->bdf, g->desired);
                }
        }
        json_set(c->evidence, "gpus", list);
        if (!gim_loaded) {
                say(c, DOCTOR_NOT_APPLICABLE, "gim drives no GPU here");
                return;
        }
        if (bad) {
                say(c, DOCTOR_WARN, "gim's vf_num is not the VF count amdsmid.conf asks (%s)",
                    what);
                fix(c,
                    "%s (writes vf_num to /etc/modprobe.d/amdsmi-gim.conf), then reload gim "
                    "while no VM uses a VF (modprobe -r gim && modprobe gim); or change num_vfs "
                    "in amdsmid.conf",
                    cmd);
                return;
        }
        if (desired == 0) {
                say(c, DOCTOR_OK, "gim loaded with vf_num=%s; amdsmid.conf asks no VF count",
                    vf_num && *vf_num ? vf_num : "?");
                return;
        }
        say(c, DOCTOR_OK, "gim's vf_num (%s) is the VF count amdsmid.conf asks",
            vf_num && *vf_num ? vf_num : "?");
}

static const struct amdsmi_firmware *fw_find(const struct doctor_hive_gpu *g, const char *name) {
        for (size_t i = 0; i < g->n_fw; i++)
                if (g->fw[i].name && strcmp(g->fw[i].name, name) == 0)
                        return &g->fw[i];
        return NULL;
}

static bool in_hive(const struct doctor_hive_gpu *g) {
        return g->hive_id != 0 && g->hive_id != AMDSMI_NA;
}

void doctor_check_hive(const struct doctor_hive_gpu *gpus, size_t n, struct doctor_check *c) {
        json_object *diffs = json_object_new_array();
        char what[384] = "";
        size_t wl = 0;
        unsigned n_diffs = 0, hives = 0;

        for (size_t i = 0; i < n; i++) {
                const struct doctor_hive_gpu *a = &gpus[i];
                bool first = true;

                if (!in_hive(a))
                        continue;
                /* the first GPU of each hive is the reference */
                for (size_t j = 0; j < i; j++)
                        if (in_hive(&gpus[j]) && gpus[j].hive_id == a->hive_id) {
                                first = false;
                                break;
                        }
                if (!first)
                        continue;
                hives++;
                for (size_t j = i + 1; j < n; j++) {
                        const struct doctor_hive_gpu *b = &gpus[j];

                        if (!in_hive(b) || b->hive_id != a->hive_id)
                                continue;
                        for (size_t k = 0; k <= a->n_fw; k++) {
                                const char *name = k < a->n_fw ? a->fw[k].name : "driver";
                                const struct amdsmi_firmware *fa = k < a->n_fw ? &a->fw[k] : NULL,
                                                             *fb = fa ? fw_find(b, name) : NULL;
                                char va[40], vb[40];
                                json_object *o;

                                if (fa) {
                                        if (!fb || fa->version == fb->version)
                                                continue;
                                        snprintf(va, sizeof(va), "0x%08" PRIx64, fa->version);
                                        snprintf(vb, sizeof(vb), "0x%08" PRIx64, fb->version);
                                } else {
                                        if (strcmp(a->driver, b->driver) == 0)
                                                continue;
                                        snprintf(va, sizeof(va), "%s",
                                                 a->driver[0] ? a->driver : "none");
                                        snprintf(vb, sizeof(vb), "%s",
                                                 b->driver[0] ? b->driver : "none");
                                }
                                n_diffs++;
                                o = json_object_new_object();
                                if (o) {
                                        json_set(o, "hive_id", json_hex(a->hive_id, 16));
                                        json_set(o, "item", json_object_new_string(name));
                                        json_set(o, "bdf", json_object_new_string(a->bdf));
                                        json_set(o, "value", json_object_new_string(va));
                                        json_set(o, "other_bdf", json_object_new_string(b->bdf));
                                        json_set(o, "other_value", json_object_new_string(vb));
                                        if (diffs)
                                                json_object_array_add(diffs, o);
                                        else
                                                json_object_put(o);
                                }
                                if (wl < sizeof(what) && n_diffs <= 3)
                                        wl += (size_t) snprintf(what + wl, sizeof(what) - wl,
                                                                "%s%s %s on %s, %s on %s",
                                                                n_diffs > 1 ? "; " : "", name, va,
                                                                a->bdf, vb, b->bdf);
                        }
                }
        }
        ev_int(c, "hives", hives);
        json_set(c->evidence, "differences", diffs);
        if (hives == 0) {
                say(c, DOCTOR_NOT_APPLICABLE, "no GPU here is in an XGMI hive");
                return;
        }
        if (n_diffs) {
                say(c, DOCTOR_WARN,
                    "the GPUs of a hive differ in %u firmware or driver "
                    "version%s: %s%s",
                    n_diffs, n_diffs == 1 ? "" : "s", what, n_diffs > 3 ? "; ..." : "");
                fix(c, "update every GPU of the hive to the same firmware bundle (IFWI / PLDM "
                       "package of one release) and bind them all to one driver; a hive with "
                       "mixed firmware may fail to form or reset");
                return;
        }
        say(c, DOCTOR_OK, "every GPU of %u hive%s runs the same firmware and driver", hives,
            hives == 1 ? "" : "s");
}

void doctor_check_xgmi(bool hive, const struct health_links *l, struct doctor_check *c) {
        char down[128] = "";
        size_t len = 0;
        unsigned n_known = 0, n_down = 0;

        if (!hive) {
                say(c, DOCTOR_NOT_APPLICABLE, "in no XGMI hive");
                return;
        }
        if (l->error < 0) {
                ev_errno(c, "error", l->error);
                say(c, l->error == -ENODATA ? DOCTOR_NOT_APPLICABLE : DOCTOR_WARN,
                    "cannot read the XGMI links' status (gpu_metrics): %s", strerror(-l->error));
                return;
        }
        for (unsigned i = 0; i < 32; i++) {
                if (!(l->xgmi_known & (1u << i)))
                        continue;
                n_known++;
                if (l->xgmi_down & (1u << i)) {
                        n_down++;
                        if (len < sizeof(down))
                                len += (size_t) snprintf(down + len, sizeof(down) - len, "%s%u",
                                                         n_down > 1 ? ", " : "", i);
                }
        }
        ev_int(c, "links", n_known);
        ev_int(c, "links_down", n_down);
        ev_str(c, "down", n_down ? down : NULL);
        if (n_known == 0) {
                say(c, DOCTOR_NOT_APPLICABLE, "gpu_metrics has no XGMI link status");
                return;
        }
        if (n_down) {
                say(c, DOCTOR_FAIL, "XGMI link%s %s down (%u of %u up)", n_down == 1 ? "" : "s",
                    down, n_known - n_down, n_known);
                fix(c, "reset the hive's GPUs or reboot; a link that stays down is a hardware "
                       "fault (the GPU or its baseboard): contact the vendor");
                return;
        }
        say(c, DOCTOR_OK, "all %u XGMI links up", n_known);
}

void doctor_check_access(const struct doctor_node *nodes, size_t n, struct doctor_check *c) {
        json_object *list = json_object_new_array();
        char what[384] = "", fixes[512] = "";
        size_t wl = 0, fl = 0;
        unsigned present = 0, bad = 0;

        for (size_t i = 0; i < n; i++) {
                const struct doctor_node *d = &nodes[i];
                json_object *o;
                char mode[8];
                bool group_rw, world_rw;

                if (d->error == -ENOENT)
                        continue;
                present++;
                o = json_object_new_object();
                snprintf(mode, sizeof(mode), "%04o", d->mode & 07777);
                if (o) {
                        json_set(o, "path", json_object_new_string(d->path));
                        if (d->error < 0)
                                json_set(o, "error", json_object_new_string(strerror(-d->error)));
                        else {
                                json_set(o, "mode", json_object_new_string(mode));
                                json_set(o, "gid", json_object_new_int64(d->gid));
                                json_set(o, "group",
                                         d->group_known ? json_object_new_string(d->group) : NULL);
                                json_set(o, "members",
                                         d->group_known ? json_object_new_string(d->members)
                                                        : NULL);
                        }
                        if (list)
                                json_object_array_add(list, o);
                        else
                                json_object_put(o);
                }
                if (d->error < 0)
                        continue;
                group_rw = (d->mode & 060) == 060;
                world_rw = (d->mode & 006) == 006;
                if (world_rw)
                        continue;
                if (group_rw && d->gid != 0 && d->n_members > 0)
                        continue;
                bad++;
                if (!group_rw || d->gid == 0) {
                        if (wl < sizeof(what))
                                wl += (size_t) snprintf(what + wl, sizeof(what) - wl,
                                                        "%s%s is %s %s: only root can use it",
                                                        bad > 1 ? "; " : "", d->path, mode,
                                                        d->group_known ? d->group : "?");
                        if (fl < sizeof(fixes))
                                fl += (size_t) snprintf(
                                        fixes + fl, sizeof(fixes) - fl,
                                        "%sa udev rule giving %s to group render, mode 0660 "
                                        "(/etc/udev/rules.d/70-amdgpu.rules: %s, "
                                        "GROUP=\"render\", MODE=\"0660\")",
                                        bad > 1 ? "; " : "", d->path,
                                        strstr(d->path, "render")
                                                ? "SUBSYSTEM==\"drm\", KERNEL==\"renderD*\""
                                                : "KERNEL==\"kfd\"");
                } else {
                        if (wl < sizeof(what))
                                wl += (size_t) snprintf(what + wl, sizeof(what) - wl,
                                                        "%s%s is for group %s, which has no "
                                                        "member",
                                                        bad > 1 ? "; " : "", d->path,
                                                        d->group_known ? d->group : "?");
                        if (fl < sizeof(fixes) && !strstr(fixes, "usermod"))
                                fl += (size_t) snprintf(fixes + fl, sizeof(fixes) - fl,
                                                        "%susermod -aG %s USER for each user "
                                                        "of the GPUs (and video on older "
                                                        "distributions), then log in again",
                                                        bad > 1 ? "; " : "",
                                                        d->group_known ? d->group : "render");
                }
        }
        json_set(c->evidence, "nodes", list);
        if (present == 0) {
                say(c, DOCTOR_NOT_APPLICABLE, "no /dev/kfd or render node (no amdgpu here)");
                return;
        }
        if (bad) {
                say(c, DOCTOR_WARN, "%s", what);
                fix(c, "%s", fixes);
                return;
        }
        say(c, DOCTOR_OK,
            "/dev/kfd and the render nodes are usable by the users of their "
            "group");
}

void doctor_check_daemon(int running, const char *sync, const char *drifted,
                         struct doctor_check *c) {
        json_set(c->evidence, "running", running < 0 ? NULL : json_object_new_boolean(running));
        ev_str(c, "sync_state", sync);
        ev_str(c, "drifted", drifted && *drifted ? drifted : NULL);
        if (running == 0) {
                say(c, DOCTOR_WARN,
                    "amdsmid is not running: changes need root and are not "
                    "serialised, desired state is not kept across resets");
                fix(c, "systemctl enable --now amdsmid");
                return;
        }
        if (running < 0) {
                say(c, DOCTOR_WARN, "cannot tell whether amdsmid runs (no system bus)");
                return;
        }
        if (!sync || strcmp(sync, "success") == 0) {
                say(c, DOCTOR_OK,
                    "amdsmid is running and the GPUs are in sync with its "
                    "desired state");
                return;
        }
        say(c, DOCTOR_WARN,
            "amdsmid is running, but the GPUs are not in sync with "
            "amdsmid.conf (%s%s%s)",
            sync, drifted && *drifted ? ": " : "", drifted ? drifted : "");
        fix(c, "%s",
            strcmp(sync, "reload-required") == 0
                    ? "amdsmi reset --reload-driver (the memory modes wait for it)"
            : strcmp(sync, "failed") == 0
                    ? "amdsmi apply --check says which setting is refused: fix "
                      "amdsmid.conf, then amdsmi reload"
                    : "amdsmi apply (or amdsmi apply --check to see what differs)");
}

void doctor_check_ras(int error, const struct amdsmi_ras_info *ras, bool vf,
                      struct doctor_check *c) {
        if (error == -ENODATA) {
                say(c, vf ? DOCTOR_NOT_APPLICABLE : DOCTOR_WARN,
                    vf ? "a VF has no RAS files (the host watches them)"
                       : "no RAS files (ras/): RAS is not supported or disabled");
                if (!vf)
                        fix(c, "enable ECC/RAS in the BIOS and remove amdgpu.ras_enable=0 from "
                               "the kernel command line; reboot");
                return;
        }
        if (error < 0 || ras->features_error < 0) {
                int r = error < 0 ? error : ras->features_error;

                ev_errno(c, "error", r);
                say(c, DOCTOR_WARN, "cannot read ras/features: %s", strerror(-r));
                return;
        }
        json_set(c->evidence, "features", json_hex(ras->features, 8));
        ev_int(c, "enabled_blocks", __builtin_popcount(ras->enabled_blocks));
        if (ras->enabled_blocks == 0) {
                say(c, DOCTOR_FAIL,
                    "RAS is disabled (ras/features 0x%08x): memory errors are "
                    "neither corrected nor counted",
                    ras->features);
                fix(c, "enable ECC/RAS in the BIOS and remove amdgpu.ras_enable=0 (or "
                       "amdgpu.ras_mask) from the kernel command line; reboot");
                return;
        }
        if (!(ras->enabled_blocks & (1u << AMDSMI_RAS_BLOCK_UMC))) {
                say(c, DOCTOR_WARN, "RAS is on for %d blocks but not for the memory (UMC)",
                    __builtin_popcount(ras->enabled_blocks));
                fix(c, "enable ECC in the BIOS; remove amdgpu.ras_mask from the kernel command "
                       "line");
                return;
        }
        say(c, DOCTOR_OK, "RAS is enabled (%d blocks, UMC too)",
            __builtin_popcount(ras->enabled_blocks));
}

void doctor_check_bad_pages(int pages_error, size_t n_pages, int threshold_error,
                            uint32_t threshold, unsigned percent, struct doctor_check *c) {
        if (pages_error == -ENODATA || pages_error == -ENOENT) {
                say(c, DOCTOR_NOT_APPLICABLE, "no bad-page table (no VRAM page retirement)");
                return;
        }
        if (pages_error < 0) {
                ev_errno(c, "error", pages_error);
                say(c, DOCTOR_WARN, "cannot read the retired pages: %s", strerror(-pages_error));
                return;
        }
        ev_int(c, "retired_pages", (int64_t) n_pages);
        json_set(c->evidence, "threshold",
                 threshold_error < 0 ? NULL : json_object_new_int64(threshold));
        ev_errno(c, "threshold_error", threshold_error);
        ev_int(c, "warning_percent", percent);
        if (threshold_error < 0 || threshold == 0) {
                say(c, DOCTOR_OK, "%zu retired page%s; the threshold is unknown (%s)", n_pages,
                    n_pages == 1 ? "" : "s",
                    threshold_error == -EACCES ? "needs root: debugfs"
                    : threshold_error < 0      ? strerror(-threshold_error)
                                               : "none");
                return;
        }
        if (n_pages >= threshold) {
                say(c, DOCTOR_FAIL,
                    "%zu retired pages: at the threshold (%" PRIu32 "): the "
                    "GPU needs replacement",
                    n_pages, threshold);
                fix(c, "take the GPU out of service and ask the vendor for an RMA");
                return;
        }
        if ((uint64_t) n_pages * 100 >= (uint64_t) percent * threshold) {
                say(c, DOCTOR_WARN,
                    "%zu retired pages: near the threshold (%" PRIu32 ", warning at %u %%)",
                    n_pages, threshold, percent);
                fix(c, "plan the GPU's replacement (RMA) before it reaches the threshold; "
                       "watch it with amdsmi bad-pages");
                return;
        }
        say(c, DOCTOR_OK, "%zu retired page%s, threshold %" PRIu32, n_pages,
            n_pages == 1 ? "" : "s", threshold);
}

void doctor_check_power(uint64_t cap_uw, const char *apml_state, uint64_t apml_uw,
                        const char *apml_path, const char *apml_error, struct doctor_check *c) {
        ev_str(c, "apml_file", apml_path);
        ev_str(c, "apml_state", apml_state);
        json_set(c->evidence, "cap_w", cap_uw == AMDSMI_NA ? NULL : json_scaled_u64(cap_uw, 6));
        json_set(c->evidence, "apml_limit_w",
                 apml_state && strcmp(apml_state, "valid") == 0 ? json_scaled_u64(apml_uw, 6)
                                                                : NULL);
        if (!apml_state || strcmp(apml_state, "absent") == 0 || strcmp(apml_state, "empty") == 0) {
                say(c, DOCTOR_NOT_APPLICABLE, "no platform (APML) limit from the BMC");
                return;
        }
        if (strcmp(apml_state, "valid") != 0) {
                ev_str(c, "apml_error", apml_error);
                say(c, DOCTOR_WARN, "the BMC's APML limit file is %s: %s", apml_state,
                    apml_error && *apml_error ? apml_error : "?");
                fix(c, "fix the BMC agent that writes %s (amdsmid ignores it as it is)",
                    apml_path ? apml_path : "the file");
                return;
        }
        if (cap_uw == AMDSMI_NA) {
                say(c, DOCTOR_WARN,
                    "cannot read the power cap to compare it with the BMC's "
                    "limit");
                return;
        }
        if (cap_uw > apml_uw) {
                char cap[32], lim[32];

                (void) format_scaled_u64(cap_uw, 6, cap, sizeof(cap));
                (void) format_scaled_u64(apml_uw, 6, lim, sizeof(lim));
                say(c, DOCTOR_WARN, "the power cap (%s W) is above the BMC's APML limit (%s W)",
                    cap, lim);
                fix(c,
                    "give amdsmid the BMC's limit as the apml source (it applies the "
                    "lowest source: amdsmi power set -g %s --apml %sW), or set the host cap "
                    "at or below it (amdsmi power set -g %s --host %sW)",
                    c->bdf, lim, c->bdf, lim);
                return;
        }
        say(c, DOCTOR_OK, "the power cap is within the BMC's APML limit");
}
