/* SPDX-License-Identifier: MIT */
/*
 * The object tree: /org/amdsmi1 (org.amdsmi1.Manager and the ObjectManager) and one object per
 * GPU, /org/amdsmi1/gpu/<sd_bus_path_encode(BDF)>, with org.amdsmi1.Gpu and the slices'
 * interfaces. The registry follows the library's enumeration: GPUs that appear are added
 * (InterfacesAdded), GPUs that go are removed (InterfacesRemoved), and the properties of the
 * others are refreshed and emit PropertiesChanged.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "amdsmid-conf.h"
#include "amdsmid.h"
#include "daemon-metrics.h"
#include "decode.h"
#include "documents.h"
#include "history.h"
#include "select.h"

static const struct slice *const slices[] = { &partition_slice, &power_slice, &sriov_slice,
                                              &health_slice, &perf_slice };

int manager_hive_bdfs(struct dgpu *g, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        uint64_t hive = g->partition_hive_id;

        if (strv_extend(&l, g->bdf) < 0)
                return -ENOMEM;
        for (size_t i = 0; hive != 0 && i < g->d->n_gpus; i++) {
                struct dgpu *o = g->d->gpus[i];

                if (o != g && o->partition_hive_id == hive && strv_extend(&l, o->bdf) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

struct dgpu *manager_find_gpu(struct daemon *d, const char *bdf) {
        for (size_t i = 0; i < d->n_gpus; i++)
                if (strcmp(d->gpus[i]->bdf, bdf) == 0)
                        return d->gpus[i];
        return NULL;
}

struct dgpu *manager_gpu_from_path(struct daemon *d, const char *path) {
        for (size_t i = 0; i < d->n_gpus; i++)
                if (strcmp(d->gpus[i]->path, path) == 0)
                        return d->gpus[i];
        return NULL;
}

struct amdsmi_gpu *dgpu_handle(struct dgpu *g) {
        size_t n = amdsmi_ctx_get_gpu_count(g->d->ctx);

        if (g->index < n) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(g->d->ctx, g->index);

                if (gpu && strcmp(amdsmi_gpu_get_bdf(gpu), g->bdf) == 0)
                        return gpu;
        }
        return NULL;
}

void dgpu_emit_changed(struct dgpu *g, const char *interface, char **names) {
        int r;

        if (!names || !names[0] || !g->d->bus)
                return;
        r = sd_bus_emit_properties_changed_strv(g->d->bus, g->path, interface, names);
        if (r < 0)
                log_gpu(LOG_DEBUG, g->bdf, "cannot emit PropertiesChanged: %s", strerror(-r));
}

void manager_invalidate(struct daemon *d) {
        free(d->describe_json);
        d->describe_json = NULL;
        /* the GPUs may have changed: no document of the old set */
        free(d->metrics_json);
        d->metrics_json = NULL;
        free(d->metric_text);
        d->metric_text = NULL;
        strv_free(d->metric_text_notes);
        d->metric_text_notes = NULL;
        daemon_metrics_invalidate(d); /* the static document of /metrics */
}

static void dgpu_free(struct dgpu *g) {
        if (!g)
                return;
        for (size_t i = 0; i < ELEMENTSOF(slices); i++)
                if (slices[i]->free_gpu)
                        slices[i]->free_gpu(g);
        free(g->path);
        free(g->product);
        free(g->unique_id);
        free(g->compute_mode);
        free(g->memory_mode);
        free(g->pending_memory_mode);
        strv_free(g->available_compute_modes);
        free(g->effective_source);
        free(g->metrics_json);
        json_object_put(g->describe_entry);
        free(g);
}

static struct dgpu *dgpu_new(struct daemon *d, const char *bdf) {
        struct dgpu *g = calloc(1, sizeof(*g));

        if (!g)
                return NULL;
        g->d = d;
        snprintf(g->bdf, sizeof(g->bdf), "%s", bdf);
        if (amdsmi_bus_gpu_path(bdf, &g->path) < 0) {
                free(g);
                return NULL;
        }
        g->role = "";
        g->driver = "";
        return g;
}

/* A GPU (not a host's VF) without a driver is said once, when no change of amdsmid is under
 * way (a reload unbinds for a while): whether a reload of amdsmi left it so (bound again by the
 * partition slice's check) or it was unbound outside amdsmi (left alone). */
static void check_driver(struct dgpu *g, struct amdsmi_gpu *gpu) {
        /* a host's VFs wait without a driver until one is given to a VM: nothing to say */
        if (strcmp(g->driver, "none") != 0 || strcmp(g->role, "vf") == 0) {
                g->driver_warned = false;
                return;
        }
        if (g->driver_warned || g->changing)
                return;
        g->driver_warned = true;
        if (amdsmi_gpu_is_left_unbound(gpu) > 0)
                log_gpu(LOG_WARNING, g->bdf,
                        "GPU %u has no driver: a driver reload could not bind amdgpu to it "
                        "again; amdsmid tries again on its periodic check",
                        g->index);
        else
                log_gpu(LOG_WARNING, g->bdf,
                        "GPU %u has no driver (not a reload of amdsmi: left as it is; "
                        "'amdsmi reset -g %u --reload-driver' binds amdgpu)",
                        g->index, g->index);
}

void manager_refresh_gpu(struct dgpu *g, struct amdsmi_gpu *gpu, bool emit) {
        _cleanup_strv_free_ char **changed = NULL;
        const char *s;
        char uid[24];

        if (g->index != amdsmi_gpu_get_index(gpu)) {
                g->index = amdsmi_gpu_get_index(gpu);
                (void) strv_extend(&changed, "Index");
        }
        if (free_and_strdup(&g->product, amdsmi_gpu_get_product(gpu)) > 0)
                (void) strv_extend(&changed, "Product");
        /* the one spelling of amdsmi list --json and every table: "0x" and 16 lower-case
         * hex digits (a malformed sysfs value as read, as doc_unique_id() shows it) */
        s = amdsmi_gpu_get_string(gpu, AMDSMI_STRING_UNIQUE_ID);
        if (s && format_unique_id(s, uid, sizeof(uid)) >= 0)
                s = uid;
        if (free_and_strdup(&g->unique_id, s) > 0)
                (void) strv_extend(&changed, "UniqueId");
        s = amdsmi_role_to_string(amdsmi_gpu_get_role(gpu));
        if (strcmp(g->role, s ? s : "") != 0) {
                g->role = s ? s : "";
                (void) strv_extend(&changed, "Role");
        }
        s = amdsmi_driver_to_string(amdsmi_gpu_get_driver(gpu));
        if (strcmp(g->driver, s ? s : "") != 0) {
                g->driver = s ? s : "";
                (void) strv_extend(&changed, "Driver");
        }
        if (emit)
                dgpu_emit_changed(g, AMDSMI_BUS_IFACE_GPU, changed);
        check_driver(g, gpu);
        for (size_t i = 0; i < ELEMENTSOF(slices); i++) {
                _cleanup_strv_free_ char **names = NULL;

                if (!slices[i]->refresh)
                        continue;
                names = slices[i]->refresh(g, gpu);
                if (emit)
                        dgpu_emit_changed(g, slices[i]->interface, names);
        }
}

static int gpus_add(struct daemon *d, struct dgpu *g) {
        struct dgpu **n = reallocarray(d->gpus, d->n_gpus + 1, sizeof(*n));

        if (!n)
                return -ENOMEM;
        d->gpus = n;
        d->gpus[d->n_gpus++] = g;
        return 0;
}

bool manager_check(struct daemon *d, uint64_t full_usec) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        r = amdsmi_ctx_check_devices(d->ctx);
        if (r < 0 || now - d->rescan_usec >= full_usec) {
                if (r < 0 && r != -ESTALE)
                        log_debug("checking the devices: %s", strerror(-r));
                manager_schedule_rescan(d);
                return true;
        }
        for (size_t i = 0; i < d->n_gpus; i++) {
                struct dgpu *g = d->gpus[i];
                struct amdsmi_gpu *gpu = dgpu_handle(g);

                if (!gpu)
                        continue;
                check_driver(g, gpu);
                for (size_t k = 0; k < ELEMENTSOF(slices); k++) {
                        _cleanup_strv_free_ char **names = NULL;

                        if (slices[k]->check)
                                slices[k]->check(g, gpu);
                        if (!slices[k]->refresh || !slices[k]->refresh_often)
                                continue;
                        names = slices[k]->refresh(g, gpu);
                        dgpu_emit_changed(g, slices[k]->interface, names);
                }
        }
        return false;
}

/* The BDF of each GPU index of d->ctx's enumeration (NULL when there are none or on
 * -ENOMEM: then no index change is noticed). */
static char **index_snapshot(struct daemon *d) {
        size_t n = amdsmi_ctx_get_gpu_count(d->ctx);
        char **l;

        if (n == 0)
                return NULL;
        l = calloc(n + 1, sizeof(char *));
        for (size_t i = 0; l && i < n; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(d->ctx, i);

                l[i] = strdup(gpu ? amdsmi_gpu_get_bdf(gpu) : "");
                if (!l[i]) {
                        strv_free(l);
                        return NULL;
                }
        }
        return l;
}

/* After an enumeration: when an index names another GPU than before (a GPU came or went),
 * the old indexes are kept for GetDocument's notes (document.c). */
static void index_changed(struct daemon *d, char ***before) {
        size_t n = amdsmi_ctx_get_gpu_count(d->ctx), n_before = strv_length(*before);
        bool changed = n != n_before && n_before > 0;

        for (size_t i = 0; !changed && i < n && i < n_before; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(d->ctx, i);

                changed = !gpu || strcmp(amdsmi_gpu_get_bdf(gpu), (*before)[i]) != 0;
        }
        if (!changed)
                return;
        strv_free(d->index_before);
        d->index_before = TAKE_PTR(*before);
        clock_gettime(CLOCK_REALTIME, &d->index_changed_at);
        d->index_changed_usec = now_usec(CLOCK_MONOTONIC);
}

int manager_rescan(struct daemon *d) {
        size_t n;
        int r;

        _cleanup_strv_free_ char **before = NULL;

        d->rescan_usec = now_usec(CLOCK_MONOTONIC);
        before = index_snapshot(d);
        r = amdsmi_ctx_enumerate(d->ctx);
        if (r < 0 && r != -ENOENT) {
                log_warning("cannot enumerate the GPUs: %s", strerror(-r));
                return r;
        }
        n = r > 0 ? (size_t) r : 0;
        index_changed(d, &before);
        for (size_t i = 0; i < d->n_gpus; i++)
                d->gpus[i]->present = false;

        for (size_t i = 0; i < n; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(d->ctx, i);
                struct dgpu *g;

                if (!gpu)
                        continue;
                g = manager_find_gpu(d, amdsmi_gpu_get_bdf(gpu));
                if (g) {
                        g->present = true;
                        manager_refresh_gpu(g, gpu, true);
                        continue;
                }
                g = dgpu_new(d, amdsmi_gpu_get_bdf(gpu));
                if (!g || gpus_add(d, g) < 0) {
                        dgpu_free(g);
                        return -ENOMEM;
                }
                g->present = true;
                g->index = amdsmi_gpu_get_index(gpu);
                manager_refresh_gpu(g, gpu, false);
                g->desired_pending = true;
                log_gpu(d->ready ? LOG_INFO : LOG_DEBUG, g->bdf, "GPU %u (%s, %s, %s) added",
                        g->index, g->product, g->role, g->driver);
                if (d->bus) {
                        r = sd_bus_emit_object_added(d->bus, g->path);
                        if (r < 0)
                                log_gpu(LOG_DEBUG, g->bdf, "cannot emit InterfacesAdded: %s",
                                        strerror(-r));
                }
        }
        for (size_t i = 0; i < d->n_gpus;) {
                struct dgpu *g = d->gpus[i];

                if (g->present) {
                        i++;
                        continue;
                }
                log_gpu(LOG_INFO, g->bdf, "GPU removed");
                if (d->bus) {
                        r = sd_bus_emit_object_removed(d->bus, g->path);
                        if (r < 0)
                                log_gpu(LOG_DEBUG, g->bdf, "cannot emit InterfacesRemoved: %s",
                                        strerror(-r));
                }
                memmove(d->gpus + i, d->gpus + i + 1, (d->n_gpus - i - 1) * sizeof(*d->gpus));
                d->n_gpus--;
                dgpu_free(g);
        }
        (void) amdsmi_ctx_check_topology(d->ctx);
        manager_invalidate(d);
        /* the KFD event fds follow the partitions there are now */
        if (d->bus)
                health_events_sync(d);
        return 0;
}

/* ---- Describe(), GetMetrics(), GetHistory() -------------------------------------------- */

static json_object *string_or_null(const char *s) {
        return s && s[0] ? json_object_new_string(s) : NULL;
}

/* The entry of a GPU under change that no document showed yet: from the cached properties
 * (the partition count is not cached: null). */
static json_object *cached_entry(struct dgpu *g) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "gpu", json_object_new_uint64(g->index));
        json_object_object_add(o, "bdf", json_object_new_string(g->bdf));
        json_object_object_add(o, "product", string_or_null(g->product));
        json_object_object_add(o, "role", string_or_null(g->role));
        json_object_object_add(o, "driver", string_or_null(g->driver));
        json_object_object_add(o, "partition_count", NULL);
        json_object_object_add(o, "compute_mode", string_or_null(g->compute_mode));
        json_object_object_add(o, "memory_mode", string_or_null(g->memory_mode));
        json_object_object_add(
                o, "unique_id",
                doc_unique_id(g->unique_id && g->unique_id[0] ? g->unique_id : NULL));
        json_object_object_add(o, "object_path", json_object_new_string(g->path));
        return o;
}

static int build_describe(struct daemon *d, char **ret) {
        struct report rep = { .command = "list", .keep_field_errors = true };
        struct gpu_set set = {};
        struct doc_query q = { .report = &rep, .set = &set };
        json_object *doc, *gpus, *daemon;
        int r;

        snprintf(rep.hostname, sizeof(rep.hostname), "%s", d->hostname);
        r = gpu_set_attach(&set, d->ctx, NULL);
        if (r < 0)
                return r;
        /* a GPU under change is not read (its partition files wait until the change ends):
         * it keeps its entry of the last document */
        for (size_t i = 0; i < set.n_gpus; i++) {
                struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(d->ctx, i);
                struct dgpu *g = gpu ? manager_find_gpu(d, amdsmi_gpu_get_bdf(gpu)) : NULL;

                if (g && g->busy > 0)
                        set.matches[i].selected = false;
        }
        doc = list_document(&q);
        if (!doc) {
                gpu_set_clear(&set);
                report_clear(&rep);
                return -ENOMEM;
        }
        /* what the daemon adds: the object of each GPU and whether a change is under way */
        if (json_object_object_get_ex(doc, "gpus", &gpus)) {
                json_object *all = json_object_new_array();
                size_t k = 0;

                for (size_t i = 0; all && i < set.n_gpus; i++) {
                        struct amdsmi_gpu *gpu = amdsmi_ctx_get_gpu(d->ctx, i);
                        struct dgpu *g = gpu ? manager_find_gpu(d, amdsmi_gpu_get_bdf(gpu)) : NULL;
                        json_object *o;

                        if (set.matches[i].selected)
                                o = json_object_get(json_object_array_get_idx(gpus, k++));
                        else if (g && g->describe_entry)
                                o = json_object_get(g->describe_entry);
                        else if (g)
                                o = cached_entry(g);
                        else
                                continue;
                        if (!o)
                                continue;
                        if (g && set.matches[i].selected) {
                                json_object_object_add(o, "object_path",
                                                       json_object_new_string(g->path));
                                json_object_put(g->describe_entry);
                                g->describe_entry = json_object_get(o);
                        }
                        if (g)
                                json_object_object_add(o, "changing",
                                                       json_object_new_boolean(g->changing));
                        json_object_array_add(all, o);
                }
                if (all)
                        json_object_object_add(doc, "gpus", all);
        }
        gpu_set_clear(&set);
        report_clear(&rep);
        daemon = json_object_new_object();
        json_object_object_add(daemon, "version", json_object_new_string(amdsmi_version()));
        json_object_object_add(
                daemon, "config",
                d->config && d->config->path ? json_object_new_string(d->config->path) : NULL);
        json_object_object_add(daemon, "config_error",
                               d->config_error[0] ? json_object_new_string(d->config_error) : NULL);
        json_object_object_add(doc, "daemon", daemon);
        *ret = strdup(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
                                                                  JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(doc);
        return *ret ? 0 : -ENOMEM;
}

int manager_describe(struct daemon *d, const char **ret) {
        int r;

        if (!d->describe_json) {
                r = build_describe(d, &d->describe_json);
                if (r < 0)
                        return r;
        }
        *ret = d->describe_json;
        return 0;
}

static int method_describe(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        const char *s;
        int r;

        r = manager_describe(d, &s);
        if (r < 0)
                return bus_error_errno(error, r, "cannot describe the GPUs: %s", strerror(-r));
        return bus_reply_string(m, s);
}

/* The `amdsmi metric --json` document of one GPU (@bdf) or of all (NULL), from *cache when
 * it is younger than METRICS_MAX_AGE_USEC. */
static int metrics_reply(struct daemon *d, sd_bus_message *m, const char *bdf, char **cache,
                         uint64_t *stamp, sampler_reply_fn again, sd_bus_error *error) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        struct report rep = { .command = "metric", .keep_field_errors = true };
        struct gpu_set set = {};
        struct doc_query q = {
                .report = &rep,
                .set = &set,
                /* the sampler's samples: the limiters, and no second read of a fresh one */
                .samples = sampler_samples(d),
                .samples_max_age_usec = sampler_interval_usec(d),
                .power_limit = power_daemon_limit,
                .power_limit_userdata = d,
        };
        json_object *doc;
        char *s;
        int r;

        if (*cache && now - *stamp < METRICS_MAX_AGE_USEC) {
                sampler_use(d);
                return bus_reply_string(m, *cache);
        }
        r = sampler_prepare(d, m, bdf, again);
        if (r != 0)
                return r < 0 ? bus_error_errno(error, r, "out of memory") : 1;
        now = now_usec(CLOCK_MONOTONIC);
        snprintf(rep.hostname, sizeof(rep.hostname), "%s", d->hostname);
        r = gpu_set_attach(&set, d->ctx, bdf);
        if (r < 0)
                return bus_error_errno(error, -ENODEV, "GPU %s is gone", bdf);
        doc = metric_document(&q);
        gpu_set_clear(&set);
        report_clear(&rep);
        if (!doc)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        s = strdup(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(doc);
        if (!s)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        free(*cache);
        *cache = s;
        *stamp = now;
        return bus_reply_string(m, s);
}

static int method_get_metrics(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;

        return metrics_reply(g->d, m, g->bdf, &g->metrics_json, &g->metrics_usec,
                             method_get_metrics, error);
}

/* Every GPU in one document: a scraper sampling the whole server makes one call per sample
 * instead of one per GPU. */
static int method_manager_get_metrics(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;

        return metrics_reply(d, m, NULL, &d->metrics_json, &d->metrics_usec,
                             method_manager_get_metrics, error);
}

static int method_get_history(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        json_object *entries = NULL, *doc;
        unsigned skipped = 0;
        struct timespec now;
        uint32_t max;
        int r;

        r = sd_bus_message_read(m, "u", &max);
        if (r < 0)
                return r;
        r = history_read(max, &entries, &skipped);
        if (r < 0)
                return bus_error_errno(error, r, "cannot read the history: %s",
                                       history_error(r, (char[512]){}, 512));
        clock_gettime(CLOCK_REALTIME, &now);
        doc = document_new("history", &now, d->hostname);
        if (!doc) {
                json_object_put(entries);
                return bus_error_errno(error, -ENOMEM, "out of memory");
        }
        json_object_object_add(doc, "entries", entries);
        json_object_object_add(doc, "skipped", json_object_new_uint64(skipped));
        json_object_object_add(doc, "errors", json_object_new_array());
        return bus_reply_json(m, doc);
}

/* ---- GetGpuByBdf(), GetGpuByIndex() ------------------------------------------------------ */

/* What a lookup names when it finds nothing: at most this many addresses, then a count. */
#define LOOKUP_LIST_MAX 16

static int compare_index(const void *a, const void *b) {
        const struct dgpu *x = *(struct dgpu *const *) a, *y = *(struct dgpu *const *) b;

        return x->index < y->index ? -1 : x->index > y->index;
}

/* "GPUs: 0000:05:00.0, 0000:26:00.0, ... and 56 more" in index order, or "amdsmid has no
 * GPU". */
static int gpu_list(struct daemon *d, char **ret) {
        _cleanup_free_ struct dgpu **sorted = NULL;
        char *s = NULL;
        size_t len = 0;
        FILE *f;

        if (d->n_gpus == 0) {
                s = strdup("amdsmid has no GPU");
                if (!s)
                        return -ENOMEM;
                *ret = s;
                return 0;
        }
        sorted = reallocarray(NULL, d->n_gpus, sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        memcpy(sorted, d->gpus, d->n_gpus * sizeof(*sorted));
        qsort(sorted, d->n_gpus, sizeof(*sorted), compare_index);
        f = open_memstream(&s, &len);
        if (!f)
                return -ENOMEM;
        fputs("GPUs: ", f);
        for (size_t i = 0; i < d->n_gpus && i < LOOKUP_LIST_MAX; i++)
                fprintf(f, "%s%s", i > 0 ? ", " : "", sorted[i]->bdf);
        if (d->n_gpus > LOOKUP_LIST_MAX)
                fprintf(f, " and %zu more", d->n_gpus - LOOKUP_LIST_MAX);
        if (fclose(f) != 0) {
                free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

/* The object of a GPU by its PCI address, in any form amdsmi -g takes ("0000:c1:00.0",
 * "c1:00.0", either case): what Describe() lists, VFs included. */
static int method_get_gpu_by_bdf(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        _cleanup_free_ char *list = NULL;
        struct selector sel;
        struct dgpu *g;
        const char *bdf;
        int r;

        r = sd_bus_message_read(m, "s", &bdf);
        if (r < 0)
                return r;
        r = selector_parse(bdf, &sel);
        if (r < 0 || sel.kind != SELECTOR_BDF)
                return bus_error_errno(error, -EINVAL,
                                       "bdf \"%s\" is not a PCI address (DDDD:BB:DD.F or "
                                       "BB:DD.F, hex%s)",
                                       bdf,
                                       r >= 0 && sel.kind == SELECTOR_INDEX
                                               ? "; GetGpuByIndex takes an index"
                                               : "");
        g = manager_find_gpu(d, sel.bdf);
        if (g)
                return sd_bus_reply_method_return(m, "o", g->path);
        r = gpu_list(d, &list);
        if (r < 0)
                return bus_error_errno(error, r, "out of memory");
        return bus_error_errno(error, -ENODEV, "no GPU %s (%s)", sel.bdf, list);
}

/* The object of GPU @index, as amdsmi list, Describe() and the Index property count. */
static int method_get_gpu_by_index(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        uint32_t index;
        int r;

        r = sd_bus_message_read(m, "u", &index);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d->n_gpus; i++)
                if (d->gpus[i]->index == index)
                        return sd_bus_reply_method_return(m, "o", d->gpus[i]->path);
        if (d->n_gpus == 0)
                return bus_error_errno(error, -ENODEV, "no GPU index %" PRIu32 " (no GPUs)", index);
        if (d->n_gpus == 1)
                return bus_error_errno(error, -ENODEV, "no GPU index %" PRIu32 " (1 GPU: 0)",
                                       index);
        return bus_error_errno(error, -ENODEV, "no GPU index %" PRIu32 " (%zu GPUs: 0-%zu)", index,
                               d->n_gpus, d->n_gpus - 1);
}

/* ---- CheckIndexes() -------------------------------------------------------------------- */

/* The notes a GetDocument() of the selectors @gpus would carry about indexes that moved: for
 * the calls that name GPUs by their object (a change, amdsmi power set -g 3), after the
 * client resolved -g 3 itself. Selectors as amdsmi -g takes them; an empty answer when no
 * index moved. */
static int method_check_indexes(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(selection_clear) struct selection sel = {};
        _cleanup_strv_free_ char **gpus = NULL;
        struct report rep = { .keep_notes = true };
        int r;

        r = sd_bus_message_read_strv(m, &gpus);
        if (r < 0)
                return r;
        for (char **s = gpus; s && *s; s++) {
                r = selection_add(&sel, *s);
                if (r == -ENOMEM)
                        return bus_error_errno(error, r, "out of memory");
                if (r < 0)
                        return bus_error_errno(error, -EINVAL,
                                               "invalid GPU selection '%s': expected N, N.P, a "
                                               "PCI address, a unique id or all, separated by "
                                               "commas",
                                               *s);
        }
        note_moved_indexes(d, &sel, &rep);
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; r >= 0 && rep.notes && i < json_object_array_length(rep.notes); i++)
                r = sd_bus_message_append(
                        reply, "s",
                        json_object_get_string(json_object_array_get_idx(rep.notes, i)));
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        report_clear(&rep);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static void reload_authorised(sd_bus_message *call, int r, const char *why, void *userdata) {
        struct daemon *d = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        if (r > 0) {
                r = manager_reload(d);
                if (r >= 0) {
                        (void) sd_bus_reply_method_return(call, NULL);
                        return;
                }
                bus_error_errno(&error, config_refusal_errno(r), "%s",
                                d->config_error[0] ? d->config_error : strerror(-r));
        } else if (r == 0)
                bus_error_errno(&error, -EACCES, "Reload: %s", why);
        else
                bus_error_errno(&error, r, "cannot check the authorisation: %s", strerror(-r));
        (void) sd_bus_reply_method_error(call, &error);
}

static int method_reload(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        int r;

        /* re-reading the configuration applies it: the same right as a partition change */
        r = polkit_check(d, m, "org.amdsmi1.partition.configure", reload_authorised, d, NULL);
        if (r < 0)
                return bus_error_errno(error, r, "cannot check the authorisation: %s",
                                       strerror(-r));
        return 1;
}

static void apply_authorised(sd_bus_message *call, int r, const char *why, void *userdata) {
        struct daemon *d = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        if (r > 0) {
                manager_apply_desired(d, NULL, false, NULL);
                (void) sd_bus_reply_method_return(call, "s", "{}");
                return;
        }
        if (r == 0)
                bus_error_errno(&error, -EACCES, "ApplyDesired: %s", why);
        else
                bus_error_errno(&error, r, "cannot check the authorisation: %s", strerror(-r));
        (void) sd_bus_reply_method_error(call, &error);
}

/* The whole desired state, now (what start-up does): `amdsmi apply`. The changes it queues
 * are logged and recorded in the history as they end. */
static int method_apply_desired(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "t", &flags);
        if (r < 0)
                return r;
        if (flags != 0)
                return bus_error_errno(error, -EINVAL,
                                       "ApplyDesired: unknown flags 0x%llx (none defined; "
                                       "amdsmi apply --dry-run shows the plan)",
                                       (unsigned long long) flags);
        if (d->config_error[0])
                return bus_error_errno(error, -EINVAL,
                                       "the configuration on disk is refused "
                                       "(%s); the one in force is applied by Reload",
                                       d->config_error);
        r = polkit_check(d, m, "org.amdsmi1.partition.configure", apply_authorised, d, NULL);
        if (r < 0)
                return bus_error_errno(error, r, "cannot check the authorisation: %s",
                                       strerror(-r));
        return 1;
}

static int property_version(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", amdsmi_version());
}

const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_METHOD_WITH_ARGS("Describe", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
                                method_describe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Reload", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_reload,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetHistory", SD_BUS_ARGS("u", max), SD_BUS_RESULT("s", json),
                                method_get_history, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetMetrics", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
                                method_manager_get_metrics, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ApplyDesired", SD_BUS_ARGS("t", flags), SD_BUS_RESULT("s", json),
                                method_apply_desired, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetGpuByBdf", SD_BUS_ARGS("s", bdf), SD_BUS_RESULT("o", path),
                                method_get_gpu_by_bdf, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetGpuByIndex", SD_BUS_ARGS("u", index), SD_BUS_RESULT("o", path),
                                method_get_gpu_by_index, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CheckIndexes", SD_BUS_ARGS("as", gpus), SD_BUS_RESULT("as", notes),
                                method_check_indexes, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* ---- org.amdsmi1.Gpu -------------------------------------------------------------------- */

static int property_string_ptr(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error) {
        const char *const *s = userdata;

        return sd_bus_message_append(reply, "s", *s ? *s : "");
}

static int property_bdf(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;

        return sd_bus_message_append(reply, "s", g->bdf);
}

static int property_changing(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error) {
        struct dgpu *g = userdata;

        return sd_bus_message_append(reply, "b", (int) g->changing);
}

const sd_bus_vtable gpu_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Bdf", "s", property_bdf, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Index", "u", NULL, offsetof(struct dgpu, index),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Product", "s", property_string_ptr, offsetof(struct dgpu, product),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("UniqueId", "s", property_string_ptr, offsetof(struct dgpu, unique_id),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Role", "s", property_string_ptr, offsetof(struct dgpu, role),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Driver", "s", property_string_ptr, offsetof(struct dgpu, driver),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Changing", "b", property_changing, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("GetMetrics", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
                                method_get_metrics, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* The fallback vtables find their GPU by path; the slices' data lives in struct dgpu. */
static int gpu_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                    void **found, sd_bus_error *error) {
        struct daemon *d = userdata;
        struct dgpu *g = manager_gpu_from_path(d, path);

        if (!g)
                return 0;
        *found = g;
        return 1;
}

static int gpu_enumerate(sd_bus *bus, const char *prefix, void *userdata, char ***ret_nodes,
                         sd_bus_error *error) {
        struct daemon *d = userdata;
        char **l = calloc(d->n_gpus + 1, sizeof(char *));

        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < d->n_gpus; i++) {
                l[i] = strdup(d->gpus[i]->path);
                if (!l[i]) {
                        strv_free(l);
                        return -ENOMEM;
                }
        }
        *ret_nodes = l;
        return 1;
}

int manager_register(struct daemon *d, sd_bus *bus) {
        /* the Manager's methods of the frameworks and of the slices without GPU objects */
        static const sd_bus_vtable *const vtables[] = {
                manager_vtable,        document_manager_vtable, health_events_manager_vtable,
                fleet_manager_vtable,  process_manager_vtable,  topology_manager_vtable,
                doctor_manager_vtable,
        };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(vtables); i++) {
                r = sd_bus_add_object_vtable(bus, NULL, AMDSMI_BUS_PATH, AMDSMI_BUS_IFACE_MANAGER,
                                             vtables[i], d);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(slices); i++)
                if (slices[i]->manager_vtable) {
                        r = sd_bus_add_object_vtable(bus, NULL, AMDSMI_BUS_PATH,
                                                     AMDSMI_BUS_IFACE_MANAGER,
                                                     slices[i]->manager_vtable, d);
                        if (r < 0)
                                return r;
                }
        r = sd_bus_add_object_manager(bus, NULL, AMDSMI_BUS_PATH);
        if (r < 0)
                return r;
        r = sd_bus_add_node_enumerator(bus, NULL, AMDSMI_BUS_GPU_PREFIX, gpu_enumerate, d);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(bus, NULL, AMDSMI_BUS_GPU_PREFIX, AMDSMI_BUS_IFACE_GPU,
                                       gpu_vtable, gpu_find, d);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(bus, NULL, AMDSMI_BUS_GPU_PREFIX, AMDSMI_BUS_IFACE_GPU,
                                       reset_gpu_vtable, gpu_find, d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(slices); i++) {
                r = sd_bus_add_fallback_vtable(bus, NULL, AMDSMI_BUS_GPU_PREFIX,
                                               slices[i]->interface, slices[i]->vtable, gpu_find,
                                               d);
                if (r < 0)
                        return r;
        }
        return 0;
}

void manager_done(struct daemon *d) {
        health_events_done(d);
        sampler_done(d);
        strv_free(d->index_before);
        d->index_before = NULL;
        for (size_t i = 0; i < d->n_gpus; i++)
                dgpu_free(d->gpus[i]);
        free(d->gpus);
        d->gpus = NULL;
        d->n_gpus = 0;
        manager_invalidate(d);
}
