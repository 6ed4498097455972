/* SPDX-License-Identifier: MIT */
/*
 * The desired state of amdsmid.conf, applied at start, to GPUs that appear or come back (a
 * reset, a re-plug), and on reload (changed keys only). Each slice applies its own keys;
 * nothing here reloads a driver or changes a VF count (the slices report those).
 */
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "amdsmid.h"
#include "amdsmid-conf.h"

static const struct slice *const slices[] = { &partition_slice, &power_slice, &sriov_slice,
                                              &perf_slice };

static void apply_one(struct daemon *d, struct dgpu *g, bool only_changed,
                      const struct config *old) {
        struct config_gpu want = {}, before = {};
        bool any;

        g->desired_pending = false;
        any = config_desired(d->config, g->bdf, &want);
        if (only_changed && old)
                (void) config_desired(old, g->bdf, &before);
        /* a reload that changes nothing for this GPU leaves it alone; at start, on re-plug
         * and for ApplyDesired every slice sees every GPU (power re-applies the state file's
         * sources even where the file desires nothing) */
        if (!any && only_changed && old && !config_desired(old, g->bdf, &before) &&
            want.enforce == before.enforce)
                return;
        for (size_t i = 0; i < ELEMENTSOF(slices); i++)
                if (slices[i]->apply_desired)
                        slices[i]->apply_desired(g, &want, only_changed && old ? &before : NULL);
}

void manager_apply_desired(struct daemon *d, struct dgpu *g, bool only_changed,
                           const struct config *old) {
        if (!d->config)
                return;
        if (g) {
                apply_one(d, g, only_changed, old);
                return;
        }
        for (size_t i = 0; i < d->n_gpus; i++)
                apply_one(d, d->gpus[i], only_changed, old);
        if (d->n_gpus > 0) {
                const char **bdfs = calloc(d->n_gpus, sizeof(char *));
                char **unknown;

                if (!bdfs)
                        return;
                for (size_t i = 0; i < d->n_gpus; i++)
                        bdfs[i] = d->gpus[i]->bdf;
                unknown = config_unknown_gpus(d->config, bdfs, d->n_gpus);
                for (char **u = unknown; u && *u; u++)
                        log_warning("%s: [gpu %s] names no GPU of this machine",
                                    d->config->path ? d->config->path : "amdsmid.conf", *u);
                strv_free(unknown);
                free(bdfs);
        }
}
