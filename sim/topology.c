/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the KFD topology (spec amdgpu-sysfs.md §6, §9 rule 6): CPU nodes first (one per
 * NUMA node), then one node per valid compute partition, in the order the GPUs were added.
 * Removing a GPU's nodes and adding them again moves generation_id by one per node, and the
 * kernel writes nodes/ again from its list each time: so does sim_topology_refresh().
 * The texts of the files come from the pure module kfd.c.
 */
#include <inttypes.h>

#include "kfd.h"
#include "tree.h"

#define TOPOLOGY "devices/virtual/kfd/kfd/topology"
#define SIMD_ID_BASE 0x80001000u

enum {
        LINK_CPU = 1,
        LINK_PCIE = 2,
        LINK_XGMI = 11
};

static int generation_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        const struct sim_machine *m = sim_node_obj(n);

        return sim_emit(buf, "%" PRIu64 "\n", m->kfd_generation);
}

static const struct sim_attr_ops generation_ops = { .show = generation_show };

/* mem_banks/0/used_memory of a partition's node: its share of the GPU's baseline (page
 * aligned) and the VRAM the KFD processes hold on that node. */
static int used_memory_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        const struct sim_gpu *g = sim_node_obj(n);
        int part = (int) sim_node_arg(n);

        return sim_emit(
                buf, "%" PRIu64 "\n",
                (g->sensors.vram_used_bytes / MAX(sim_gpu_parts(g), 1u) & ~(uint64_t) 4095) +
                        sim_kfd_vram_used(g, part));
}

static const struct sim_attr_ops used_memory_ops = { .show = used_memory_show };

void sim_topology_build(struct sim_machine *m) {
        struct sim_node *root = sim_fs_root(m->fs),
                        *kfd = sim_mkdir(root, "devices/virtual/kfd/kfd");
        struct sim_node *top = sim_mkdir(kfd, "topology");

        sim_text(kfd, "dev", 0444, "511:0");
        sim_mkdir(kfd, "proc");
        sim_link(m->fs, "devices/virtual/kfd/kfd/subsystem", "class/kfd");
        sim_link(m->fs, "class/kfd/kfd", "devices/virtual/kfd/kfd");
        sim_attr(top, "generation_id", 0444, &generation_ops, m, 0);
        sim_text(top, "system_properties", 0444, "platform_oem 0\nplatform_id 0\nplatform_rev 0");
        sim_mkdir(top, "nodes");
        m->kfd_generation = 1; /* the CPU nodes, from the virtual CRAT */
}

/* Per-partition memory (§2.4): the memory partition's size over the partitions in it. */
static uint64_t partition_memory(const struct sim_gpu *g) {
        unsigned parts = sim_gpu_parts(g), nmem = sim_nps_mem_parts(g, g->nps_current);
        uint64_t size = g->prod->kfd_memory_bytes / MAX(nmem, 1u) / MAX(parts / MAX(nmem, 1u), 1u);

        return size & ~4095ULL;
}

static bool gpu_id_used(const struct sim_machine *m, uint16_t id) {
        for (size_t i = 0; i < m->n_kfd; i++)
                if (m->kfd[i].gpu_id == id)
                        return true;
        return false;
}

void sim_topology_add_gpu(struct sim_gpu *g) {
        struct sim_machine *m = g->m;
        const struct sim_func *f = g->func;
        unsigned parts = sim_gpu_parts(g), xcc_pp = g->prod->xcc / parts;
        uint64_t mem = partition_memory(g);

        if (g->kfd_lost)
                return;
        for (unsigned p = 0; p < parts && m->n_kfd < ELEMENTSOF(m->kfd); p++) {
                uint16_t id;

                /* "Won't add GPU to topology since it has no drm node assigned." */
                if (p >= SIM_MAX_XCP || g->render[p] < 0)
                        continue;
                id = sim_kfd_gpu_id((uint8_t) (f->dev << 3 | f->fn), g->prod->subsystem_vendor,
                                    g->prod->subsystem_device, f->domain, g->prod->device_id,
                                    f->bus, mem, p * xcc_pp, xcc_pp);
                while (id == 0 || gpu_id_used(m, id))
                        id++;
                m->kfd[m->n_kfd++] = (struct sim_kfd_entry){ g, p, id };
                m->kfd_generation++;
        }
}

void sim_topology_remove_gpu(struct sim_gpu *g) {
        struct sim_machine *m = g->m;
        size_t out = 0;

        sim_kfd_users_forget_gpu(g); /* processes lose the device with its nodes */
        for (size_t i = 0; i < m->n_kfd; i++) {
                if (m->kfd[i].gpu == g) {
                        m->kfd_generation++;
                        continue;
                }
                m->kfd[out++] = m->kfd[i];
        }
        m->n_kfd = out;
}

/* The CPU node of a GPU: its NUMA node (node 0 without one). */
static unsigned cpu_node_of(const struct sim_gpu *g) {
        return g->func->numa_node < 0 ? 0 : (unsigned) g->func->numa_node;
}

static void text_file(struct sim_node *dir, const char *name, const char *text, int len) {
        if (len >= 0)
                sim_raw(dir, name, 0444, text, (size_t) len);
}

/* caches/<i>/properties: not in kfd.h (yet); the kernel's key order. */
static int cache_properties(unsigned proc_id, unsigned level, unsigned size_kb, unsigned cus,
                            char *buf, size_t size) {
        size_t len = 0;

        bprintf(buf, size, &len,
                "processor_id_low %u\nlevel %u\nsize %u\ncache_line_size 128\n"
                "cache_lines_per_tag 1\nassociation 16\nlatency %u\ntype 1\nsibling_map ",
                proc_id, level, size_kb, level == 1 ? 1 : 2);
        for (unsigned i = 0; i < 32; i++)
                bprintf(buf, size, &len, "%s%u", i ? "," : "", i < cus ? 1 : 0);
        bprintf(buf, size, &len, "\n");
        return len > size ? -ENOSPC : (int) len;
}

struct link {
        unsigned type, to, weight, min_bw, max_bw;
};

static void write_links(struct sim_node *node, unsigned from, const struct link *links, size_t n) {
        char buf[SIM_PAGE_SIZE];

        sim_mkdir(node, "io_links");
        sim_mkdir(node, "p2p_links");
        for (size_t i = 0; i < n; i++) {
                struct sim_node *d = sim_mkdirf(node, "io_links/%zu", i);
                int len = sim_kfd_io_link(links[i].type, from, links[i].to, links[i].weight,
                                          links[i].min_bw, links[i].max_bw, buf, sizeof(buf));

                text_file(d, "properties", buf, len);
        }
}

static void write_cpu_node(struct sim_machine *m, struct sim_node *nodes, unsigned c) {
        unsigned ncpu = m->cpu.sockets, threads = m->cpu.cores_per_socket * m->cpu.threads_per_core;
        struct sim_node *d = sim_mkdirf(nodes, "%u", c), *bank;
        struct link links[SIM_MAX_GPUS * SIM_MAX_XCP + 8];
        struct sim_kfd_node kn = { 0 };
        char buf[SIM_PAGE_SIZE];
        size_t n = 0;
        int len;

        for (unsigned o = 0; o < ncpu; o++)
                if (o != c)
                        links[n++] = (struct link){ LINK_CPU, o, 21, 0, 0 };
        for (size_t i = 0; i < m->n_kfd; i++)
                if (cpu_node_of(m->kfd[i].gpu) == c)
                        links[n++] =
                                (struct link){ LINK_PCIE, ncpu + (unsigned) i, 20, 312, 64000 };
        sim_text(d, "gpu_id", 0444, "0");
        sim_text(d, "name", 0444, "%s", "");
        kn.cpu_cores_count = threads;
        kn.cpu_core_id_base = c * m->cpu.cores_per_socket;
        kn.max_engine_clk_ccompute = m->cpu.max_clock_mhz;
        kn.mem_banks_count = 1;
        kn.io_links_count = (unsigned) n;
        len = sim_kfd_properties(&kn, buf, sizeof(buf));
        text_file(d, "properties", buf, len);
        bank = sim_mkdir(d, "mem_banks/0");
        len = sim_kfd_mem_bank(0, m->cpu.memory_bytes_per_socket, 64, 4800, buf, sizeof(buf));
        text_file(bank, "properties", buf, len);
        sim_mkdir(d, "caches");
        write_links(d, c, links, n);
}

static void write_gpu_node(struct sim_machine *m, struct sim_node *nodes, size_t i,
                           unsigned *simd_base) {
        const struct sim_kfd_entry *e = &m->kfd[i];
        const struct sim_gpu *g = e->gpu;
        const struct sim_product *p = g->prod;
        const struct sim_func *f = g->func;
        unsigned ncpu = m->cpu.sockets, node = ncpu + (unsigned) i, parts = sim_gpu_parts(g);
        unsigned xcc_pp = p->xcc / parts, cus = p->cu_per_xcc * xcc_pp;
        unsigned sdma_pp = p->sdma_engines / parts;
        uint32_t pci_dev_id = (uint32_t) f->bus << 8 | (uint32_t) (f->dev << 3 | f->fn);
        struct link links[SIM_MAX_GPUS * SIM_MAX_XCP + 1];
        struct sim_node *d = sim_mkdirf(nodes, "%u", node), *bank;
        struct sim_kfd_node kn = { 0 };
        char buf[SIM_PAGE_SIZE];
        size_t n = 0;
        int len;

        links[n++] = (struct link){ LINK_PCIE, cpu_node_of(g), 20, 312, 64000 };
        for (size_t j = 0; j < m->n_kfd; j++) {
                const struct sim_gpu *o = m->kfd[j].gpu;

                /* XGMI to the hive, and between the partitions of one GPU */
                if (j != i && (o == g || (g->hive_id && o->hive_id == g->hive_id)))
                        links[n++] = (struct link){ LINK_XGMI, ncpu + (unsigned) j,
                                                    o == g ? 13 : 15, 50000, 50000 };
        }

        kn.is_gpu = true;
        kn.simd_count = cus * 4;
        kn.num_xcc = xcc_pp;
        kn.array_count = 4 * xcc_pp;
        kn.simd_id_base = *simd_base;
        kn.gfx_target_version = p->gfx_target_version;
        kn.vendor_id = 0x1002;
        kn.device_id = p->device_id;
        kn.location_id = pci_dev_id | (parts > 1 ? e->part : 0);
        kn.domain = f->domain;
        kn.drm_render_minor = (unsigned) g->render[e->part];
        kn.hive_id = g->hive_id ? g->hive_id : parts > 1 ? pci_dev_id : 0;
        kn.num_sdma_engines = MIN(sdma_pp, 2u);
        kn.num_sdma_xgmi_engines = sdma_pp - kn.num_sdma_engines;
        kn.max_engine_clk_fcompute = p->max_engine_clk_mhz;
        kn.fw_version = p->fw[SIM_FW_MEC];
        kn.sdma_fw_version = p->fw[SIM_FW_SDMA];
        kn.capability = p->kfd_capability;
        kn.capability2 = p->kfd_capability2;
        /* newer kernels: the partition's XCD unique id outside SPX */
        kn.unique_id = parts > 1
                               ? sim_hash3(g->unique_id, e->part, 0x786364) & 0x7fffffffffffffffULL
                               : g->unique_id;
        kn.max_engine_clk_ccompute = m->cpu.max_clock_mhz;
        kn.mem_banks_count = 1;
        kn.caches_count = 2;
        kn.io_links_count = (unsigned) n;
        kn.p2p_links_count = 0;
        *simd_base += cus;

        sim_text(d, "gpu_id", 0444, "%u", e->gpu_id);
        sim_text(d, "name", 0444, "ip discovery");
        len = sim_kfd_properties(&kn, buf, sizeof(buf));
        text_file(d, "properties", buf, len);
        bank = sim_mkdir(d, "mem_banks/0");
        len = sim_kfd_mem_bank(1, partition_memory(g), p->hbm_width, p->mclk.mhz[p->mclk.n - 1],
                               buf, sizeof(buf));
        text_file(bank, "properties", buf, len);
        sim_attr(bank, "used_memory", 0444, &used_memory_ops, (void *) g, (intptr_t) e->part);
        for (unsigned level = 1; level <= 2; level++) {
                struct sim_node *cd = sim_mkdirf(d, "caches/%u", level - 1);

                len = cache_properties(kn.simd_id_base, level, level == 1 ? 32 : 4096 * xcc_pp, cus,
                                       buf, sizeof(buf));
                text_file(cd, "properties", buf, len);
        }
        write_links(d, node, links, n);
}

void sim_topology_refresh(struct sim_machine *m) {
        struct sim_node *nodes = sim_lookup(m->fs, TOPOLOGY "/nodes");
        unsigned simd_base = SIMD_ID_BASE;

        sim_remove_children(nodes);
        for (unsigned c = 0; c < m->cpu.sockets; c++)
                write_cpu_node(m, nodes, c);
        for (size_t i = 0; i < m->n_kfd; i++)
                write_gpu_node(m, nodes, i, &simd_base);
}
