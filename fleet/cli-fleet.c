/* SPDX-License-Identifier: MIT */
/*
 * amdsmi metric --prometheus: every family of amdsmid's /metrics, once, in the Prometheus
 * text format, for node_exporter's textfile collector (a cron job or a timer writes it to a
 * .prom file; amdsmid's [metrics] textfile does the same by itself).
 *
 * The documents are the read verbs' own (fleet/metrics.h): through amdsmid when it runs (its
 * samples, so the throttle counters are there), else read here; --throttle takes a first
 * gpu_metrics sample 100 ms early so that an in-process run has them too.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "documents.h"
#include "metrics.h"
#include "time-util.h"

struct prometheus_docs {
        json_object *list, *static_doc, *metric, *ras, *power, *partition, *health, *sriov, *apply;
};

static void docs_free(struct prometheus_docs *d) {
        json_object_put(d->list);
        json_object_put(d->static_doc);
        json_object_put(d->metric);
        json_object_put(d->ras);
        json_object_put(d->power);
        json_object_put(d->partition);
        json_object_put(d->health);
        json_object_put(d->sriov);
        json_object_put(d->apply);
}

/* A document that could not be read leaves its families out (the reason is on stderr). */
static int collected(int r, bool *up) {
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                *up = false;
        return 0;
}

/* Without -g, the host's VFs are left out (their PF has the series): they are not read at
 * all, so that a gim host's 64 VFs say nothing on stderr about what a VF does not have. */
static int leave_out_vfs(struct cli *c, json_object *list) {
        size_t n = list ? json_object_array_length(list) : 0, n_vfs = 0;

        if (c->selection.n_items > 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                json_object *g = json_object_array_get_idx(list, i), *v;

                n_vfs += json_object_object_get_ex(g, "role", &v) &&
                         strcmp(json_object_get_string(v), "vf") == 0;
        }
        if (n_vfs == 0 || n_vfs == n)
                return 0;
        for (size_t i = 0; i < n; i++) {
                json_object *g = json_object_array_get_idx(list, i), *role, *bdf, *index;
                bool vf;

                if (!json_object_object_get_ex(g, "role", &role) ||
                    !json_object_object_get_ex(g, "bdf", &bdf) ||
                    !json_object_object_get_ex(g, "gpu", &index))
                        continue;
                vf = strcmp(json_object_get_string(role), "vf") == 0;
                if (c->read_daemon) {
                        /* amdsmid is asked for the PFs by name */
                        if (!vf && selection_add(&c->selection, json_object_get_string(bdf)) < 0)
                                return -ENOMEM;
                } else if (vf) {
                        size_t k = (size_t) json_object_get_int64(index);

                        if (k < c->set.n_gpus)
                                c->set.matches[k].selected = false;
                }
        }
        return 0;
}

/* Through amdsmid, for every GPU: its own rendering, byte for byte what /metrics answers
 * (GetDocumentText("prometheus")). @return 1 printed; 0 to collect the documents instead (a
 * -g selection, no amdsmid, an older one without the verb); < 0 failed (reported). */
static int prometheus_from_daemon(struct cli *c) {
        _cleanup_strv_free_ char **notes = NULL;
        _cleanup_free_ char *text = NULL, *message = NULL;
        size_t size;
        int r;

        if (!c->read_daemon || c->selection.n_items > 0)
                return 0;
        r = cli_bus_get_document_text("prometheus", NULL, 30000, &text, &notes, &message);
        if (r == -ENOMEM)
                return cli_fail(c, r, "out of memory");
        if (r < 0)
                return 0;
        size = strlen(text);
        if (fwrite(text, 1, size, stdout) != size || fflush(stdout) != 0)
                return cli_fail(c, -EIO, "cannot write the metrics: %s", strerror(errno));
        return 1;
}

static int prometheus_sample(struct cli *c) {
        struct prometheus_docs d = {};
        uint64_t t0 = now_monotonic_us();
        bool up = true;
        char *text = NULL;
        size_t size = 0;
        int r = 0;

        r = prometheus_from_daemon(c);
        if (r != 0)
                return r < 0 ? r : 0;
        if (c->metric.throttle && !c->read_daemon && c->sample == 0) {
                /* the limiters' first sample, 100 ms before the one rendered */
                json_object *first = NULL;

                c->samples = &c->own_samples;
                if (cli_collect_document(c, "metric", metric_gpu, &first) == 0)
                        json_object_put(first);
                sleep_ms(100);
        }
        r = collected(cli_collect_document(c, "list", list_gpu, &d.list), &up);
        if (r >= 0)
                r = leave_out_vfs(c, d.list);
        if (r >= 0)
                r = collected(cli_collect_document(c, "static", static_gpu, &d.static_doc), &up);
        if (r >= 0)
                r = collected(cli_collect_document(c, "metric", metric_gpu, &d.metric), &up);
        if (r >= 0)
                r = collected(ras_cli_collect(c, &d.ras), &up);
        if (r >= 0)
                r = collected(power_cli_collect(c, &d.power), &up);
        if (r >= 0)
                r = collected(partition_cli_collect(c, &d.partition), &up);
        if (r >= 0)
                r = collected(health_cli_collect(c, &d.health), &up);
        if (r >= 0)
                r = collected(sriov_cli_collect(c, &d.sriov), &up);
        if (r >= 0)
                r = collected(apply_cli_collect(c, &d.apply), &up);
        if (r >= 0) {
                struct metrics_input in = {
                        .list = d.list,
                        .static_doc = d.static_doc,
                        .metric = d.metric,
                        .ras = d.ras,
                        .power = d.power,
                        .partition = d.partition,
                        .health = d.health,
                        .sriov = d.sriov,
                        .apply = d.apply,
                        .identity = true,
                        .up = up,
                        .scrape_duration_s = (double) (now_monotonic_us() - t0) / 1e6,
                };

                r = metrics_render(&in, METRICS_FORMAT_TEXT, &text, &size);
        }
        docs_free(&d);
        if (r < 0)
                return cli_fail(c, r, "out of memory");
        if (fwrite(text, 1, size, stdout) != size || fflush(stdout) != 0)
                r = cli_fail(c, -EIO, "cannot write the metrics: %s", strerror(errno));
        free(text);
        return r;
}

int fleet_cli_prometheus(struct cli *c) {
        int r = cli_open_run(c, prometheus_sample);

        c->samples = NULL;
        samples_clear(&c->own_samples);
        return r;
}
