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

/*
 * io_links and p2p_links as KFD builds them (Linux 6.x; sources checked):
 * - GPU <-> its CPU node (kfd_crat.c kfd_fill_gpu_direct_io_link_to_cpu()): PCIe (type 2),
 *   weight 20 (kfd_parse_subtype_iolink()), bandwidth amdgpu_amdkfd_get_pcie_bandwidth_mbytes():
 *   min x1 at 2.5 GT/s = 2500 / 8 = 312 MB/s, max lanes x Mbit/s of the fastest speed / 8
 *   (Gen5 x16: 64000; the kernel's table ends at Gen5). An APU linked to its CPU by XGMI
 *   (MI300A, GC 9.4.3: not ext_cpu): XGMI (type 11), KFD_CRAT_INTRA_SOCKET_WEIGHT (13), the
 *   memory bandwidth 819200 MB/s both ways. The CPU node gets the same link back.
 * - GPU <-> GPU (kfd_create_vcrat_image_gpu(), kfd_fill_gpu_xgmi_link_to_gpu()): between nodes
 *   of one KFD hive (the XGMI hive_id, else in a partition mode the PCI id of the GPU: its
 *   partitions), made when the later node is added, the reverse copied. With one node on the
 *   later GPU (use_ta_info): weight KFD_CRAT_XGMI_WEIGHT (15) x hops (amdgpu_xgmi_get_hops_count
 *   = num_hops & 7: 1 here), max num_links x per-link bandwidth, min one link (per link
 *   amdgpu_xgmi_get_bandwidth(): max_speed 32 GT/s x max_width 16 x 1000 / 8 = 64000 MB/s on
 *   GC 9.4.3, 9.4.4 and 9.5.0). With several nodes: partitions of the same GPU weight 13 at
 *   819200 MB/s, nodes of other GPUs 2 x 13 + 15 = 41 with bandwidth 0.
 * - p2p_links (kfd_topology.c kfd_dev_create_p2p_links() when a node is added):
 *   kfd_create_indirect_link_prop(): the GPU's CPU link continued over each other CPU node's link
 *   to the GPU's CPU (weights added, bandwidth the least), on the GPU node, and back on that CPU
 *   node (large BAR: every GPU here); kfd_add_peer_prop() (CONFIG_HSA_AMD_P2P, peer accessible:
 *   not an APU, large BAR, the root complex allowing P2P, assumed) between GPU nodes of different
 *   KFD hives: the two CPU links (and the CPU-CPU link between, if they differ) added, min
 *   bandwidth the least, max the second GPU's (the kernel takes iolink2's twice).
 */
#define KFD_CRAT_INTRA_SOCKET_WEIGHT 13
#define KFD_CRAT_XGMI_WEIGHT 15
#define PCIE_WEIGHT 20
#define CPU_CPU_WEIGHT 21
#define MEM_BW_MBS 819200
#define XGMI_LINK_MBS (32 * 16 * 1000 / 8)

struct link {
        unsigned type, to, weight, min_bw, max_bw;
};

static unsigned pci_dev_id(const struct sim_gpu *g) {
        return (unsigned) g->func->bus << 8 | (unsigned) (g->func->dev << 3 | g->func->fn);
}

/* kfd->hive_id */
static uint64_t kfd_hive(const struct sim_gpu *g) {
        if (g->hive_id)
                return g->hive_id;
        return sim_gpu_parts(g) > 1 ? pci_dev_id(g) : 0;
}

static unsigned pcie_max_mbs(const struct sim_func *f) {
        static const struct {
                const char *prefix;
                unsigned mbits;
        } gens[] = { { "2.5 ", 2500 },   { "5.0 ", 5000 },   { "8.0 ", 8000 },
                     { "16.0 ", 16000 }, { "32.0 ", 32000 }, { "64.0 ", 32000 } };

        for (size_t i = 0; f->link_speed_max && i < ELEMENTSOF(gens); i++)
                if (strncmp(f->link_speed_max, gens[i].prefix, strlen(gens[i].prefix)) == 0)
                        return f->link_width_max * gens[i].mbits / 8;
        return 0;
}

/* The GPU's link to its CPU node @cpu. */
static struct link cpu_link(const struct sim_gpu *g, unsigned cpu) {
        if (g->prod->apu)
                return (struct link){ LINK_XGMI, cpu, KFD_CRAT_INTRA_SOCKET_WEIGHT, MEM_BW_MBS,
                                      MEM_BW_MBS };
        return (struct link){ LINK_PCIE, cpu, PCIE_WEIGHT, 2500 / 8, pcie_max_mbs(g->func) };
}

/* The XGMI link between KFD nodes @i and @k (@k the later), false if there is none. */
static bool xgmi_link(const struct sim_machine *m, size_t k, size_t i, struct link *l) {
        const struct sim_gpu *gk = m->kfd[k].gpu, *gi = m->kfd[i].gpu;

        if (!kfd_hive(gk) || kfd_hive(gk) != kfd_hive(gi))
                return false;
        if (sim_gpu_parts(gk) == 1) {
                unsigned links = sim_xgmi_links_per_peer(gk);

                *l = (struct link){ LINK_XGMI, 0, KFD_CRAT_XGMI_WEIGHT * 1, XGMI_LINK_MBS,
                                    links * XGMI_LINK_MBS };
        } else if (gk == gi)
                *l = (struct link){ LINK_XGMI, 0, KFD_CRAT_INTRA_SOCKET_WEIGHT, MEM_BW_MBS,
                                    MEM_BW_MBS };
        else
                *l = (struct link){ LINK_XGMI, 0,
                                    2 * KFD_CRAT_INTRA_SOCKET_WEIGHT + KFD_CRAT_XGMI_WEIGHT, 0, 0 };
        return true;
}

/* The CPU node of a GPU: its NUMA node (node 0 without one). */
static unsigned cpu_node_of(const struct sim_gpu *g) {
        return g->func->numa_node < 0 ? 0 : (unsigned) g->func->numa_node;
}

/* kfd_add_peer_prop(kdev = node @a, peer = node @b): the link @b -> @a, on @b. */
static struct link peer_link(const struct sim_machine *m, size_t a, size_t b) {
        unsigned ncpu = m->cpu.sockets;
        const struct sim_gpu *ga = m->kfd[a].gpu, *gb = m->kfd[b].gpu;
        struct link l1 = cpu_link(ga, cpu_node_of(ga)), l2 = cpu_link(gb, cpu_node_of(gb));
        struct link l = l1;

        l.weight = l1.weight + l2.weight;
        l.min_bw = MIN(l1.min_bw, l2.min_bw);
        l.max_bw = l2.max_bw;
        if (l1.to != l2.to) {
                /* the CPU-CPU link: no bandwidth in the virtual CRAT */
                l.weight += CPU_CPU_WEIGHT;
                l.min_bw = l.max_bw = 0;
        }
        l.to = ncpu + (unsigned) a;
        return l;
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

static void write_list(struct sim_node *node, const char *dir, unsigned from,
                       const struct link *links, size_t n) {
        char buf[SIM_PAGE_SIZE];

        sim_mkdir(node, dir);
        for (size_t i = 0; i < n; i++) {
                struct sim_node *d = sim_mkdirf(node, "%s/%zu", dir, i);
                int len = sim_kfd_io_link(links[i].type, from, links[i].to, links[i].weight,
                                          links[i].min_bw, links[i].max_bw, buf, sizeof(buf));

                text_file(d, "properties", buf, len);
        }
}

/* The p2p_links of CPU node @c: the indirect links back from each GPU node on another CPU. */
static size_t cpu_p2p(const struct sim_machine *m, unsigned c, struct link *out) {
        unsigned ncpu = m->cpu.sockets;
        size_t n = 0;

        for (size_t k = 0; k < m->n_kfd; k++) {
                const struct sim_gpu *g = m->kfd[k].gpu;
                struct link l = cpu_link(g, cpu_node_of(g));

                if (cpu_node_of(g) == c)
                        continue;
                l.weight += CPU_CPU_WEIGHT;
                l.min_bw = l.max_bw = 0;
                l.to = ncpu + (unsigned) k;
                out[n++] = l;
        }
        return n;
}

/* The p2p_links of GPU node @k. */
static size_t gpu_p2p(const struct sim_machine *m, size_t k, struct link *out) {
        const struct sim_gpu *g = m->kfd[k].gpu;
        size_t n = 0;

        for (unsigned c = 0; c < m->cpu.sockets; c++) {
                struct link l = cpu_link(g, c);

                if (c == cpu_node_of(g))
                        continue;
                l.weight += CPU_CPU_WEIGHT;
                l.min_bw = l.max_bw = 0;
                out[n++] = l;
        }
        for (size_t j = 0; j < m->n_kfd; j++) {
                const struct sim_gpu *o = m->kfd[j].gpu;

                if (j == k || (kfd_hive(g) && kfd_hive(g) == kfd_hive(o)))
                        continue;
                /* made when the later of the two was added; the kdev is the other one for the
                 * entry on the later node, the later node for the entry on the earlier */
                if (j < k ? o->prod->apu : g->prod->apu)
                        continue; /* amdgpu_device_is_peer_accessible(): connected_to_cpu */
                out[n++] = peer_link(m, j, k);
        }
        return n;
}

static void write_cpu_node(struct sim_machine *m, struct sim_node *nodes, unsigned c) {
        unsigned ncpu = m->cpu.sockets, threads = m->cpu.cores_per_socket * m->cpu.threads_per_core;
        struct sim_node *d = sim_mkdirf(nodes, "%u", c), *bank;
        struct link links[SIM_MAX_GPUS * SIM_MAX_XCP + 8], p2p[SIM_MAX_GPUS * SIM_MAX_XCP];
        struct sim_kfd_node kn = { 0 };
        char buf[SIM_PAGE_SIZE];
        size_t n = 0, np2p;
        int len;

        for (unsigned o = 0; o < ncpu; o++)
                if (o != c)
                        links[n++] = (struct link){ LINK_CPU, o, CPU_CPU_WEIGHT, 0, 0 };
        for (size_t i = 0; i < m->n_kfd; i++)
                if (cpu_node_of(m->kfd[i].gpu) == c) {
                        links[n] = cpu_link(m->kfd[i].gpu, c); /* the GPU's, back */
                        links[n++].to = ncpu + (unsigned) i;
                }
        np2p = cpu_p2p(m, c, p2p);
        sim_text(d, "gpu_id", 0444, "0");
        sim_text(d, "name", 0444, "%s", "");
        kn.cpu_cores_count = threads;
        kn.cpu_core_id_base = c * m->cpu.cores_per_socket;
        kn.max_engine_clk_ccompute = m->cpu.max_clock_mhz;
        kn.mem_banks_count = 1;
        kn.io_links_count = (unsigned) n;
        kn.p2p_links_count = (unsigned) np2p;
        len = sim_kfd_properties(&kn, buf, sizeof(buf));
        text_file(d, "properties", buf, len);
        bank = sim_mkdir(d, "mem_banks/0");
        len = sim_kfd_mem_bank(0, m->cpu.memory_bytes_per_socket, 64, 4800, buf, sizeof(buf));
        text_file(bank, "properties", buf, len);
        sim_mkdir(d, "caches");
        write_list(d, "io_links", c, links, n);
        write_list(d, "p2p_links", c, p2p, np2p);
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
        struct link links[SIM_MAX_GPUS * SIM_MAX_XCP + 1], p2p[SIM_MAX_GPUS * SIM_MAX_XCP + 8];
        struct sim_node *d = sim_mkdirf(nodes, "%u", node), *bank;
        struct sim_kfd_node kn = { 0 };
        char buf[SIM_PAGE_SIZE];
        size_t n = 0, np2p = gpu_p2p(m, i, p2p);
        int len;

        links[n++] = cpu_link(g, cpu_node_of(g));
        /* XGMI to the KFD hive: in node order, the link made by the later node of each pair */
        for (size_t j = 0; j < m->n_kfd; j++)
                if (j != i && xgmi_link(m, MAX(i, j), MIN(i, j), &links[n]))
                        links[n++].to = ncpu + (unsigned) j;

        kn.is_gpu = true;
        kn.simd_count = cus * 4;
        kn.num_xcc = xcc_pp;
        kn.array_count = 4 * xcc_pp;
        kn.simd_id_base = *simd_base;
        kn.gfx_target_version = p->gfx_target_version;
        kn.vendor_id = 0x1002;
        kn.device_id = p->device_id;
        kn.location_id = pci_dev_id(g) | (parts > 1 ? e->part : 0);
        kn.domain = f->domain;
        kn.drm_render_minor = (unsigned) g->render[e->part];
        kn.hive_id = kfd_hive(g);
        kn.num_sdma_engines = MIN(sdma_pp, 2u);
        kn.num_sdma_xgmi_engines = sdma_pp - kn.num_sdma_engines;
        kn.max_engine_clk_fcompute = p->max_engine_clk_mhz;
        kn.fw_version = g->fw[SIM_FW_MEC];
        kn.sdma_fw_version = g->fw[SIM_FW_SDMA];
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
        kn.p2p_links_count = (unsigned) np2p;
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
        write_list(d, "io_links", node, links, n);
        write_list(d, "p2p_links", node, p2p, np2p);
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
