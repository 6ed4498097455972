/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the host around the GPUs (struct sim_host): its IOMMU units in sysfs, and the
 * texts of the files outside /sys that `amdsmi-sim run` gives its command by bind mounts:
 * /proc/cmdline, /proc/modules, /proc/interrupts (one line per PCI function with an
 * interrupt, IR-PCI-MSIX when interrupts are remapped, PCI-MSIX when not) and /etc/group
 * (the host's, with render and video as the machine says).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree.h"

/* IOMMU units: AMD hosts have one per PCI root complex, 4 per socket (ivhd0 ...). */
void sim_host_build(struct sim_machine *m) {
        struct sim_node *root = sim_fs_root(m->fs);

        sim_mkdir(root, "class/iommu");
        if (m->vm || !m->host.iommu)
                return;
        for (unsigned i = 0; i < m->cpu.sockets * 4; i++) {
                char path[64], target[64];

                sim_mkdirf(root, "devices/virtual/iommu/ivhd%u", i);
                snprintf(path, sizeof(path), "class/iommu/ivhd%u", i);
                snprintf(target, sizeof(target), "devices/virtual/iommu/ivhd%u", i);
                sim_link(m->fs, path, target);
        }
}

/* A growing text. */
struct text {
        char *s;
        size_t len, size;
        int error;
};

_printf_(2, 3) static void add(struct text *t, const char *fmt, ...) {
        va_list ap;
        int n;

        if (t->error)
                return;
        for (;;) {
                va_start(ap, fmt);
                n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->size - t->len : 0, fmt, ap);
                va_end(ap);
                if (n < 0) {
                        t->error = -EINVAL;
                        return;
                }
                if (t->s && t->len + (size_t) n < t->size) {
                        t->len += (size_t) n;
                        return;
                }
                {
                        size_t ns = (t->size + (size_t) n + 1) * 2;
                        char *p = realloc(t->s, ns);

                        if (!p) {
                                t->error = -ENOMEM;
                                return;
                        }
                        t->s = p;
                        t->size = ns;
                }
        }
}

static int done(struct text *t, char **ret) {
        if (t->error || !t->s) {
                free(t->s);
                return t->error ? t->error : -ENOMEM;
        }
        *ret = t->s;
        return 0;
}

static void module(struct text *t, const char *name, unsigned size, unsigned refs,
                   const char *deps) {
        add(t, "%s %u %u %s Live 0x0000000000000000\n", name, size, refs, deps);
}

/* What an interrupt of @f is named (NULL: @f has none here). */
static bool func_label(const struct sim_func *f, char *buf, size_t size) {
        if (f->gpu || f->physfn) {
                if (f->driver == SIM_DRV_VFIO_PCI)
                        snprintf(buf, size, "vfio-msix[0](%s)", f->bdf);
                else
                        snprintf(buf, size, "%s", f->driver == SIM_DRV_NONE ? "" : "amdgpu");
                return f->driver != SIM_DRV_NONE;
        }
        switch (f->kind) {
        case SIM_FUNC_ROOT_PORT:
        case SIM_FUNC_SWITCH_UP:
        case SIM_FUNC_SWITCH_DOWN:
                snprintf(buf, size, "PCIe PME, aerdrv");
                return true;
        default:
                return false;
        }
}

int sim_host_proc_text(const struct sim_machine *m, const char *name, char **ret) {
        struct text t = {};
        unsigned cpus = m->cpu.sockets * m->cpu.cores_per_socket * m->cpu.threads_per_core;
        const char *ir = m->host.interrupt_remapping ? "IR-" : "";

        if (cpus > 4)
                cpus = 4; /* the first CPUs' columns are enough */
        if (strcmp(name, "cmdline") == 0)
                add(&t, "%s\n", m->host.cmdline);
        else if (strcmp(name, "modules") == 0) {
                if (m->host.vfio_pci) {
                        module(&t, "vfio_pci", 16384, 0, "-");
                        module(&t, "vfio_pci_core", 94208, 1, "vfio_pci,");
                        module(&t, "vfio_iommu_type1", 49152, 0, "-");
                        module(&t, "vfio", 69632, 3, "vfio_pci_core,vfio_iommu_type1,");
                }
                if (m->gim_host)
                        module(&t, "gim", 3895296, 0, "-");
                else
                        module(&t, "amdgpu", 19034112, 0, "-");
                if (!m->vm) {
                        module(&t, "kvm_amd", 208896, 0, "-");
                        module(&t, "kvm", 1409024, 1, "kvm_amd,");
                }
        } else if (strcmp(name, "interrupts") == 0) {
                for (unsigned c = 0; c < cpus; c++)
                        add(&t, "%sCPU%u", c ? "       " : "            ", c);
                add(&t, "\n");
                add(&t, "%4u: %10u", 0, 44);
                for (unsigned c = 1; c < cpus; c++)
                        add(&t, " %10u", 0);
                add(&t, "  %sIO-APIC    2-edge      timer\n", ir);
                for (size_t i = 0; i < m->n_funcs; i++) {
                        const struct sim_func *f = m->funcs[i];
                        char label[64];

                        if (!func_label(f, label, sizeof(label)) || f->unplugged)
                                continue;
                        add(&t, "%4u: %10u", f->irq + 100, f->gpu ? 1024u : 0u);
                        for (unsigned c = 1; c < cpus; c++)
                                add(&t, " %10u", 0);
                        add(&t, "  %sPCI-MSIX-%s    0-edge      %s\n", ir, f->bdf, label);
                }
                add(&t, " NMI: %10u", 0);
                for (unsigned c = 1; c < cpus; c++)
                        add(&t, " %10u", 0);
                add(&t, "   Non-maskable interrupts\n");
                add(&t, " LOC: %10u", 123456);
                for (unsigned c = 1; c < cpus; c++)
                        add(&t, " %10u", 120000);
                add(&t, "   Local timer interrupts\n");
        } else
                return -ENOENT;
        return done(&t, ret);
}

/* The gid of @group in @current (/etc/group's text), or a free one from @want down. */
static unsigned group_gid(const char *current, const char *group, unsigned want) {
        size_t gl = strlen(group);
        bool used;

        for (const char *l = current; l && *l;) {
                const char *nl = strchr(l, '\n');
                unsigned gid;

                if (strncmp(l, group, gl) == 0 && l[gl] == ':' &&
                    sscanf(strchr(l + gl + 1, ':') ? strchr(l + gl + 1, ':') + 1 : "", "%u",
                           &gid) == 1)
                        return gid;
                l = nl ? nl + 1 : NULL;
        }
        do {
                char pat[32];

                used = false;
                snprintf(pat, sizeof(pat), ":%u:", want);
                for (const char *l = current; l && *l && !used;) {
                        const char *nl = strchr(l, '\n'), *p = strstr(l, pat);

                        used = p && (!nl || p < nl) && strchr(l, ':') &&
                               strchr(strchr(l, ':') + 1, ':') == p;
                        l = nl ? nl + 1 : NULL;
                }
                if (used)
                        want--;
        } while (used && want > 100);
        return want;
}

int sim_host_group_text(const struct sim_machine *m, const char *current, char **ret,
                        unsigned *ret_render_gid, unsigned *ret_video_gid) {
        struct text t = {};
        unsigned render = group_gid(current, "render", 993),
                 video = group_gid(current, "video", 44);

        /* the host's groups but render and video, then the machine's */
        for (const char *l = current; l && *l;) {
                const char *nl = strchr(l, '\n');
                size_t n = nl ? (size_t) (nl - l) : strlen(l);

                if (!(strncmp(l, "render:", 7) == 0 || strncmp(l, "video:", 6) == 0) && n > 0)
                        add(&t, "%.*s\n", (int) n, l);
                l = nl ? nl + 1 : NULL;
        }
        add(&t, "video:x:%u:%s\n", video, m->host.video_members);
        add(&t, "render:x:%u:%s\n", render, m->host.render_members);
        *ret_render_gid = render;
        *ret_video_gid = video;
        return done(&t, ret);
}
