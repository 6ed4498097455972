/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's side of the Prometheus families (amdsmid(8) METRICS): the documents the renderer
 * takes, collected through GetDocument's builders at most once per [metrics] interval_ms and
 * rendered once per format in that period, for /metrics (http-metrics.c) and the textfile.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

struct daemon;
struct daemon_metrics;

/*
 * The rendering of every family in @f: the cached one while the last collection is younger
 * than [metrics] interval_ms (whatever the number of scrapers, the GPUs are read no more often
 * than the sampler reads them), else a new collection. *ret stays valid until the next call;
 * *ret_generation (may be NULL) changes with each new rendering of @f.
 * @return 0, or -ENOMEM.
 */
int daemon_metrics_get(struct daemon *d, enum metrics_format f, const char **ret, size_t *ret_size,
                       uint64_t *ret_generation);

/* After the start and every reload: [metrics] identity and textfile in force (the textfile
 * written every interval_ms, which keeps the sampler running), the cache dropped. */
void daemon_metrics_config(struct daemon *d);

void daemon_metrics_done(struct daemon *d);

/* The GPUs changed (manager_invalidate()): what a collection keeps across collections (the
 * static document) is built again. */
void daemon_metrics_invalidate(struct daemon *d);

/* fleet/http-metrics.c: the /metrics endpoint on the sockets systemd passes named "metrics"
 * (amdsmid-metrics.socket), served from amdsmid's event loop. No such socket: no endpoint
 * (said at debug level). @return 0 or a negative errno (logged). */
int http_metrics_start(struct daemon *d);
void http_metrics_stop(struct daemon *d);
