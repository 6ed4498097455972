/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target of amdsmid.conf (daemon/config.c): arbitrary bytes through config_parse_string()
 * (up to the first NUL) and config_parse_buffer() (every byte). Checks the documented contract:
 * only -EINVAL/-ERANGE/-ENOMEM fail, with a "NAME:LINE: " message and the output untouched; an
 * accepted file holds only values within their ranges, [gpu] first, normalised unique BDFs,
 * valid unique profile names whose GPU sections are unique and normalised, an active profile
 * (profile = of [daemon]) that has a section, an nfd_features file nfd-worker reads; and
 * config_desired()/config_unknown_gpus() work on whatever was accepted, the profile's GPU keys
 * winning.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* by its path: "config.h" alone is the build's configuration header here */
#include "amdsmid-conf.h"
#include "parse-util.h"
#include "power-arbitration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_result(int r, struct config *c, struct config *sentinel, const char *err) {
        if (r < 0) {
                if (r != -EINVAL && r != -ERANGE && r != -ENOMEM)
                        abort();
                if (c != sentinel) /* untouched on failure */
                        abort();
                if (r != -ENOMEM && strncmp(err, "fuzz:", 5) != 0)
                        abort(); /* "NAME:LINE: what" */
                return;
        }
        if (r != 0 || !c || !c->exists || err[0] != '\0')
                abort();
        if (c->poll_interval_ms < CONFIG_POLL_INTERVAL_MS_MIN ||
            c->poll_interval_ms > CONFIG_POLL_INTERVAL_MS_MAX)
                abort();
        if (c->history_max_bytes < (uint64_t) CONFIG_HISTORY_MAX_KIB_MIN * 1024 ||
            c->history_max_bytes > (uint64_t) CONFIG_HISTORY_MAX_KIB_MAX * 1024 ||
            c->history_max_bytes % 1024 != 0)
                abort();
        for (size_t i = 0; i < c->n_gpus; i++) {
                const struct config_gpu *g = &c->gpus[i];
                struct config_gpu d;

                if (g->bdf[0] == '\0' ? i != 0 : !pci_bdf_valid(g->bdf))
                        abort(); /* [gpu] first, then canonical BDFs */
                for (size_t j = 0; j < i; j++)
                        if (strcmp(c->gpus[j].bdf, g->bdf) == 0)
                                abort(); /* no section twice */
                if (g->line == 0)
                        abort();
                if (i > 0 && c->gpus[i - 1].bdf[0] != '\0' && g->line <= c->gpus[i - 1].line)
                        abort(); /* BDF sections in file order */
                if (g->compute < AMDSMI_COMPUTE_UNKNOWN || g->compute > AMDSMI_COMPUTE_CPX)
                        abort();
                if (g->power_cap_set && power_validate(g->power_cap_uw) != 0)
                        abort();
                if (g->num_vfs_set && g->num_vfs > CONFIG_NUM_VFS_MAX)
                        abort();
                if (g->bdf[0] != '\0' && c->profile[0] == '\0') {
                        (void) config_desired(c, g->bdf, &d);
                        if (strcmp(d.bdf, g->bdf) != 0 || d.line != g->line)
                                abort();
                        if (g->num_vfs_set && (!d.num_vfs_set || d.num_vfs != g->num_vfs))
                                abort(); /* the GPU's own key wins */
                }
        }
        if (c->profile[0] != '\0' &&
            (!config_find_profile(c, c->profile) || c->profile_source != CONFIG_PROFILE_CONFIG ||
             strcmp(c->profile, c->daemon_profile) != 0))
                abort(); /* profile = names a section */
        if ((c->nfd == CONFIG_NFD_PATH) != (c->nfd_features != NULL) ||
            (c->nfd_features && (c->nfd_features[0] != '/' ||
                                 strrchr(c->nfd_features, '/')[1] == '\0' ||
                                 strrchr(c->nfd_features, '/')[1] == '.')))
                abort(); /* [kubernetes] nfd_features: no, or a file NFD reads */
        for (size_t i = 0; i < c->n_profiles; i++) {
                const struct config_profile *pr = &c->profiles[i];
                bool active = strcmp(pr->name, c->profile) == 0;

                if (!config_profile_name_valid(pr->name) || pr->line == 0)
                        abort();
                for (size_t j = 0; j < i; j++)
                        if (strcmp(c->profiles[j].name, pr->name) == 0)
                                abort(); /* one entry per name */
                for (size_t k = 0; k < pr->n_gpus; k++) {
                        const struct config_gpu *g = &pr->gpus[k];
                        struct config_gpu d;

                        if (!pci_bdf_valid(g->bdf) || g->line == 0)
                                abort();
                        for (size_t j = 0; j < k; j++)
                                if (strcmp(pr->gpus[j].bdf, g->bdf) == 0)
                                        abort();
                        if (g->power_cap_set && power_validate(g->power_cap_uw) != 0)
                                abort();
                        (void) config_desired(c, g->bdf, &d);
                        if (active && (d.line != g->line ||
                                       (g->num_vfs_set && d.num_vfs != g->num_vfs) ||
                                       (g->compute != AMDSMI_COMPUTE_UNKNOWN &&
                                        d.compute != g->compute)))
                                abort(); /* the active profile's GPU section wins */
                }
        }
        {
                char **l = config_unknown_gpus(c, NULL, 0);
                size_t n = 0;

                if (l) {
                        n = strv_length(l);
                        if (n != c->n_gpus - (c->n_gpus > 0 && c->gpus[0].bdf[0] == '\0'))
                                abort();
                        strv_free(l);
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct config sentinel, *c = &sentinel;
        char *s = malloc(size + 1), err[256];
        int r;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        err[0] = 'x';
        r = config_parse_string("fuzz", s, &c, err, sizeof(err));
        check_result(r, c, &sentinel, err);
        if (c != &sentinel)
                c = config_free(c);

        c = &sentinel;
        err[0] = 'x';
        r = config_parse_buffer("fuzz", data, size, &c, err, sizeof(err));
        check_result(r, c, &sentinel, err);
        if (r >= 0 && memchr(data, '\0', size))
                abort(); /* a NUL byte is refused wherever it is */
        if (c != &sentinel)
                config_free(c);

        free(s);
        return 0;
}
