/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of the KFD topology (lib/kfd.c): a GPU node's properties ("key value" lines), its
 * gpu_id, its memory bank, the CPU node and generation_id, through a sysfs tree (fuzz-sysfs.h)
 * and the public partition API. The first input byte picks the file, the rest is its content.
 * Checks: a topology problem never fails the enumeration, only marks the partitions unknown
 * (an error and no partitions); and for the GPU node's properties the result is what the text
 * says: unattributable (no location_id or domain) or unreadable is an error; a bad value of a
 * known key is -EBADMSG; a node of another PCI function gives this GPU no partition; otherwise
 * one partition with the node's values (compute units never divide by zero; a value too
 * large for its field is a bad value).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[] = {
        FUZZ_NODE "properties",    FUZZ_NODE "properties", FUZZ_NODE "properties",
        FUZZ_NODE "properties",    FUZZ_NODE "gpu_id",     FUZZ_NODE "mem_banks/0/properties",
        FUZZ_TOPO "nodes/0/properties", FUZZ_TOPO "nodes/0/gpu_id", FUZZ_TOPO "generation_id",
};

#define NA UINT64_MAX

/* The node's properties as lib/kfd.c documents them. */
struct model {
        bool readable, bad;
        uint64_t location_id, domain, simd_count, simd_per_cu, num_xcc, gfx_target_version,
                unique_id;
};

static void model_properties(const uint8_t *data, size_t size, struct model *m) {
        /* the keys, and the most the partition keeps of each (more is a bad value) */
        static const struct {
                const char *key;
                uint64_t max;
        } keys[] = { { "domain", UINT64_MAX },      { "location_id", UINT64_MAX },
                     { "drm_render_minor", INT32_MAX }, { "simd_count", UINT32_MAX },
                     { "simd_per_cu", UINT32_MAX }, { "num_xcc", UINT32_MAX },
                     { "gfx_target_version", UINT32_MAX }, { "unique_id", UINT64_MAX },
                     { "hive_id", UINT64_MAX } };
        char text[FUZZ_SYSFS_TEXT_MAX + 1], *save = NULL;

        *m = (struct model){ .location_id = NA, .domain = NA, .simd_count = NA,
                             .simd_per_cu = NA, .num_xcc = NA, .gfx_target_version = NA,
                             .unique_id = NA };
        m->readable = fuzz_sysfs_text(data, size, text, sizeof(text)) == 0;
        if (!m->readable)
                return;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *sp = strchr(line, ' ');
                uint64_t v;

                if (!sp)
                        continue;
                *sp = '\0';
                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                        if (strcmp(line, keys[i].key) != 0)
                                continue;
                        if (parse_u64(sp + 1, 10, &v) < 0 || (v > keys[i].max && v != NA)) {
                                m->bad = true;
                                continue;
                        }
                        if (strcmp(line, "location_id") == 0)
                                m->location_id = v;
                        else if (strcmp(line, "domain") == 0)
                                m->domain = v;
                        else if (strcmp(line, "simd_count") == 0)
                                m->simd_count = v;
                        else if (strcmp(line, "simd_per_cu") == 0)
                                m->simd_per_cu = v;
                        else if (strcmp(line, "num_xcc") == 0)
                                m->num_xcc = v;
                        else if (strcmp(line, "gfx_target_version") == 0)
                                m->gfx_target_version = v;
                        else if (strcmp(line, "unique_id") == 0)
                                m->unique_id = v;
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct amdsmi_partition *p;
        struct amdsmi_gpu *gpu;
        struct amdsmi_ctx *ctx;
        size_t which, count;
        int err;

        if (!fuzz_sysfs_pick(&data, &size, sizeof(files) / sizeof(files[0]), &which))
                return 0;
        fuzz_sysfs_set(files[which], data, size);
        ctx = fuzz_sysfs_ctx(&gpu);
        if (!gpu)
                abort(); /* the topology never hides the PCI function */

        err = amdsmi_gpu_get_partitions_error(gpu);
        count = amdsmi_gpu_get_partition_count(gpu);
        if (err > 0 || (err < 0 && count != 0) || count > 1)
                abort();
        p = amdsmi_gpu_get_partition(gpu, 0);
        if ((p != NULL) != (count == 1) || amdsmi_gpu_get_partition(gpu, 1))
                abort();
        if (p) {
                /* whatever the values, reading them is safe and consistent */
                if (amdsmi_partition_get_gpu(p) != gpu || amdsmi_partition_get_kfd_node(p) != 1)
                        abort();
                if (amdsmi_partition_get_compute_units(p) > amdsmi_partition_get_simd_count(p))
                        abort();
                (void) amdsmi_partition_get_memory_bytes(p);
        }

        if (strcmp(files[which], FUZZ_NODE "properties") == 0) {
                struct model m;

                model_properties(data, size, &m);
                if (!m.readable || m.location_id == NA || m.domain == NA) {
                        if (err >= 0 || count != 0)
                                abort(); /* unknown, not partition-less */
                } else if (m.domain != 0 || (m.location_id & ~7ULL) != 1280) {
                        if (count != 0)
                                abort(); /* another function's node */
                } else if (m.bad) {
                        if (err != -EBADMSG || count != 0)
                                abort();
                } else {
                        if (err != 0 || count != 1)
                                abort();
                        if (m.num_xcc <= UINT32_MAX &&
                            amdsmi_partition_get_xcc_count(p) != (m.num_xcc == NA ? 0 : m.num_xcc))
                                abort();
                        if (m.simd_count <= UINT32_MAX &&
                            amdsmi_partition_get_simd_count(p) !=
                                    (m.simd_count == NA ? 0 : m.simd_count))
                                abort();
                        if (m.gfx_target_version <= UINT32_MAX &&
                            amdsmi_partition_get_gfx_target_version(p) != m.gfx_target_version)
                                abort();
                        if (amdsmi_partition_get_unique_id(p) !=
                            (m.unique_id == NA ? 0 : m.unique_id))
                                abort();
                        if (amdsmi_partition_get_kfd_gpu_id(p) != 48879)
                                abort();
                }
        } else if (strcmp(files[which], FUZZ_NODE "gpu_id") == 0) {
                uint64_t id;
                bool valid = fuzz_sysfs_u64(data, size, 10, &id) == 0 && id <= UINT32_MAX;

                if (valid && id != 0 ? count != 1 || amdsmi_partition_get_kfd_gpu_id(p) != id
                                     : count != 0)
                        abort(); /* 0 is a CPU node; garbage an unknown node */
                if (!valid && err >= 0)
                        abort();
        }
        amdsmi_ctx_unref(ctx);
        fuzz_sysfs_reset(files[which]);
        return 0;
}
