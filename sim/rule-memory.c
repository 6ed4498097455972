/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: memory partitions (spec amdgpu-sysfs.md §3, §9 rule 3).
 *
 * A write of current_memory_partition only records a request, for the whole XGMI hive; the
 * file keeps showing the hardware mode. When the last GPU of the hive is unbound from amdgpu,
 * the request goes to the firmware, and each GPU bound again comes up in the new mode with its
 * compute mode picked by the AUTO rule (§2.3), its request cleared.
 */
#include <strings.h>

#include "tree.h"

static int memory_show(struct sim_node *n, const struct sim_caller *c, char *buf) {
        struct sim_gpu *g = sim_node_obj(n);

        if (g->in_reset)
                return -EPERM;
        return sim_emit(buf, "NPS%u\n", g->nps_current);
}

static int memory_store(struct sim_node *n, const struct sim_caller *c, const char *buf,
                        size_t len) {
        struct sim_gpu *g = sim_node_obj(n);
        struct sim_machine *m = g->m;

        /* prefix match against the supported modes only */
        for (unsigned nps = 1; nps <= 8; nps++) {
                char name[8];

                if (!(g->nps_supported & SIM_NPS_BIT(nps)))
                        continue;
                snprintf(name, sizeof(name), "NPS%u", nps);
                if (strncasecmp(name, buf, strlen(name)) != 0)
                        continue;
                if (nps == g->nps_current)
                        return 0; /* "requested NPS mode is same as current NPS mode" */
                for (size_t i = 0; i < m->n_gpus; i++)
                        if (sim_same_hive(g, m->gpus[i]) &&
                            (m->gpus[i]->nps_supported & SIM_NPS_BIT(nps))) {
                                m->gpus[i]->nps_requested = nps;
                                m->gpus[i]->nps_armed = false;
                        }
                return 0;
        }
        return -EINVAL;
}

const struct sim_attr_ops sim_memory_current_ops = { .show = memory_show, .store = memory_store };

void sim_memory_on_remove(struct sim_gpu *g) {
        struct sim_machine *m = g->m;

        for (size_t i = 0; i < m->n_gpus; i++)
                if (m->gpus[i] != g && sim_same_hive(g, m->gpus[i]) &&
                    m->gpus[i]->func->driver == SIM_DRV_AMDGPU)
                        return; /* the hive is still up */
        for (size_t i = 0; i < m->n_gpus; i++)
                if (sim_same_hive(g, m->gpus[i]) && m->gpus[i]->nps_requested)
                        m->gpus[i]->nps_armed = true;
}

void sim_memory_on_probe(struct sim_gpu *g) {
        enum sim_compute mode;

        if (!g->nps_armed)
                return;
        g->nps_current = g->nps_requested;
        g->nps_requested = 0;
        g->nps_armed = false;
        mode = sim_compute_auto(g, g->nps_current);
        if (mode == SIM_COMPUTE_UNKNOWN) {
                /* "Invalid config, no compatible compute partition mode found": the lowest
                 * available one */
                unsigned avail = sim_compute_available(g, g->nps_current);

                mode = SIM_SPX;
                for (int i = 0; i < _SIM_COMPUTE_MAX; i++)
                        if (avail & (1u << i)) {
                                mode = (enum sim_compute) i;
                                break;
                        }
        }
        g->compute = mode;
}
