/* SPDX-License-Identifier: MIT */
/*
 * The documents of amdsmi ras / ras --cper / bad-pages / health and the KFD event lines, for
 * both front ends (health-json.h). Every value is read once; a value that cannot be read is
 * null with the reason in the report's "errors".
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "documents.h"
#include "gpu-set.h"
#include "health-json.h"
#include "json-util.h"
#include "macro.h"
#include "report.h"

/* -g N.P: the counts belong to the physical GPU; say which partitions were asked for. */
static void add_partitions_selected(const struct doc_query *q, size_t index, json_object *o) {
        const struct select_match *m;
        json_object *a;

        if (!q->set || index >= q->set->n_gpus)
                return;
        m = &q->set->matches[index];
        if (m->all_partitions)
                return;
        a = json_object_new_array();
        if (!a)
                return;
        for (unsigned p = 0; p < 64; p++)
                if (m->partitions & (UINT64_C(1) << p))
                        json_object_array_add(a, json_object_new_uint64(p));
        json_set(o, "partitions_selected", a);
        report_note(q->report,
                    "GPU %zu: RAS counts, bad pages and CPER records belong to the whole GPU, "
                    "not to a partition: GPU %zu's are shown",
                    index, index);
}

static json_object *count_json(uint64_t v) {
        return v == AMDSMI_NA ? NULL : json_object_new_uint64(v);
}

json_object *health_ecc_json(const struct amdsmi_ras_info *ras) {
        uint64_t ue = 0, ce = 0, de = 0;
        bool any = false, any_de = false;
        json_object *o;

        for (size_t b = 0; b < _AMDSMI_RAS_BLOCK_MAX; b++) {
                const struct amdsmi_ras_count *k = &ras->blocks[b];

                if (k->error != 0)
                        continue;
                any = true;
                ue += k->ue;
                ce += k->ce;
                if (k->de != AMDSMI_NA) {
                        de += k->de;
                        any_de = true;
                }
        }
        if (!any)
                return NULL;
        o = json_object_new_object();
        if (!o)
                return NULL;
        json_set(o, "uncorrectable_total", json_object_new_uint64(ue));
        json_set(o, "correctable_total", json_object_new_uint64(ce));
        json_set(o, "deferred_total", any_de ? json_object_new_uint64(de) : NULL);
        return o;
}

/* A library errno as the user reads it where a RAS block or file fails. */
static const char *ras_error_message(int r) {
        switch (r) {
        case -EBUSY:
                return "Query currently inaccessible (a reset or the driver's init): unknown, "
                       "not zero";
        case -EBADMSG:
                return "the count file holds garbage or is truncated";
        case -EACCES:
        case -EPERM:
                return "permission denied";
        default:
                return NULL;
        }
}

static json_object *ras_json(const struct doc_query *q, int idx,
                             const struct amdsmi_ras_info *ras) {
        json_object *o = json_object_new_object(), *features, *blocks;
        char field[48];

        if (!o)
                return NULL;
        if (ras->features_error == 0) {
                features = json_object_new_array();
                for (unsigned b = 0; features && b <= AMDSMI_RAS_BLOCK_JPEG; b++)
                        if (ras->enabled_blocks & (1u << b))
                                json_object_array_add(
                                        features,
                                        json_object_new_string(amdsmi_ras_block_to_string(b)));
                json_set(o, "features", features);
                json_set(o, "features_mask", json_hex(ras->features, 8));
                json_set(o, "socket_id", json_object_new_uint64(ras->socket_id));
        } else {
                report_field_error_msg(q->report, idx, "ras.features", ras->features_error,
                                       ras_error_message(ras->features_error));
                json_set(o, "features", NULL);
                json_set(o, "features_mask", NULL);
                json_set(o, "socket_id", NULL);
        }

        blocks = json_object_new_array();
        for (size_t b = 0; blocks && b < _AMDSMI_RAS_BLOCK_MAX; b++) {
                const struct amdsmi_ras_count *k = &ras->blocks[b];
                json_object *e;

                if (k->error == -ENOENT)
                        continue;
                e = json_object_new_object();
                if (!e)
                        break;
                json_set(e, "block", json_object_new_string(amdsmi_ras_block_to_string(b)));
                json_set(e, "source",
                         json_object_new_string(amdsmi_ras_source_to_string(k->source)));
                if (k->error == 0) {
                        json_set(e, "ue", json_object_new_uint64(k->ue));
                        json_set(e, "ce", json_object_new_uint64(k->ce));
                        json_set(e, "de", count_json(k->de));
                } else {
                        snprintf(field, sizeof(field), "ras.%s", amdsmi_ras_block_to_string(b));
                        report_field_error_msg(q->report, idx, field, k->error,
                                               ras_error_message(k->error));
                        json_set(e, "ue", NULL);
                        json_set(e, "ce", NULL);
                        json_set(e, "de", NULL);
                }
                json_object_array_add(blocks, e);
        }
        json_set(o, "blocks", blocks);
        return o;
}

json_object *ras_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        json_object *o = doc_gpu_new(index, gpu);
        struct health_sample s;
        int idx = (int) index;

        if (!o)
                return NULL;
        add_partitions_selected(q, index, o);
        if (!q->cached || !q->ras_sample || q->ras_sample(q->ras_sample_userdata, gpu, &s) < 0)
                health_sample_read(gpu, &s);
        if (s.error < 0) {
                report_field_error_msg(q->report, idx, "ras", s.error,
                                       s.error == -ENODATA
                                               ? "no ras/ directory: RAS not supported or "
                                                 "disabled on this GPU"
                                               : ras_error_message(s.error));
                json_set(o, "ras", NULL);
                json_set(o, "ecc", NULL);
                return o;
        }
        json_set(o, "ras", ras_json(q, idx, &s.ras));
        json_set(o, "ecc", health_ecc_json(&s.ras));
        return o;
}

json_object *metric_ecc_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        json_object *o = metric_gpu(q, index, gpu);
        struct health_sample s;

        if (!o)
                return NULL;
        if (health_sample_read(gpu, &s) < 0) {
                if (s.error != -ENODATA)
                        report_field_error(q->report, (int) index, "ecc", s.error);
                json_set(o, "ecc", NULL);
        } else
                json_set(o, "ecc", health_ecc_json(&s.ras));
        return o;
}

/* ---- bad pages ------------------------------------------------------------------------- */

static const char *debugfs_message(int r) {
        if (r == -EACCES || r == -EPERM)
                return HEALTH_NEEDS_ROOT;
        if (r == -ENODATA)
                return "not provided by this GPU or kernel (no debugfs file)";
        return NULL;
}

json_object *bad_pages_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        json_object *o = doc_gpu_new(index, gpu), *bp, *pages;
        struct amdsmi_bad_page *list = NULL;
        size_t pending = 0, unres = 0;
        uint32_t threshold;
        int idx = (int) index, n, r;

        if (!o)
                return NULL;
        add_partitions_selected(q, index, o);
        n = amdsmi_gpu_read_bad_pages(gpu, &list);
        if (n < 0) {
                report_field_error_msg(q->report, idx, "bad_pages", n,
                                       n == -ENODATA   ? "no ras/gpu_vram_bad_pages: page "
                                                         "retirement disabled or no RAS"
                                       : n == -EBADMSG ? "ras/gpu_vram_bad_pages holds a record "
                                                         "that is not \"0x%08x : 0x%08x : F\""
                                                       : NULL);
                json_set(o, "bad_pages", NULL);
                return o;
        }
        bp = json_object_new_object();
        pages = json_object_new_array();
        if (!bp || !pages) {
                json_object_put(bp);
                json_object_put(pages);
                free(list);
                json_object_put(o);
                return NULL;
        }
        for (int i = 0; i < n; i++) {
                json_object *e = json_object_new_object();

                if (!e)
                        break;
                json_set(e, "pfn", json_hex(list[i].pfn, 0));
                json_set(e, "address", json_hex(list[i].address, 0));
                json_set(e, "size", json_object_new_uint64(list[i].size));
                json_set(e, "status",
                         json_object_new_string(amdsmi_bad_page_status_to_string(list[i].status)));
                json_object_array_add(pages, e);
                if (list[i].status == AMDSMI_BAD_PAGE_STATUS_PENDING)
                        pending++;
                else if (list[i].status == AMDSMI_BAD_PAGE_STATUS_UNRESERVABLE)
                        unres++;
        }
        free(list);
        json_set(bp, "count", json_object_new_uint64((uint64_t) n));
        json_set(bp, "pending", json_object_new_uint64(pending));
        json_set(bp, "unreservable", json_object_new_uint64(unres));
        r = q->unprivileged ? -EACCES : amdsmi_gpu_read_bad_page_threshold(gpu, &threshold);
        json_set(bp, "threshold", r < 0 ? NULL : json_object_new_uint64(threshold));
        if (r < 0) {
                const char *m = debugfs_message(r);

                json_set(bp, "threshold_error", json_object_new_string(m ? m : strerror(-r)));
                if (r != -ENODATA)
                        report_field_error_msg(q->report, idx, "bad_pages.threshold", r, m);
        } else
                json_set(bp, "threshold_error", NULL);
        json_set(bp, "pages", pages);
        json_set(o, "bad_pages", bp);
        return o;
}

/* ---- CPER ------------------------------------------------------------------------------ */

json_object *health_cper_record_json(const struct amdsmi_cper_record *rec) {
        json_object *o = json_object_new_object(), *sections;
        char ts[40];

        if (!o)
                return NULL;
        json_set(o, "record_id", json_object_new_string(rec->record_id));
        json_set(o, "sequence", count_json(rec->sequence));
        json_set(o, "severity",
                 json_object_new_string(amdsmi_cper_severity_to_string(rec->severity)));
        if (rec->timestamp >= 0) {
                struct timespec t = { .tv_sec = (time_t) rec->timestamp };

                format_timestamp(&t, ts, sizeof(ts));
                json_set(o, "timestamp", json_object_new_string(ts));
        } else
                json_set(o, "timestamp", NULL);
        json_set(o, "notify", json_object_new_string(amdsmi_cper_notify_to_string(rec->notify)));
        json_set(o, "notify_guid", json_object_new_string(rec->notify_guid));
        json_set(o, "platform_id", json_object_new_string(rec->platform_id));
        json_set(o, "creator_id", json_object_new_string(rec->creator_id));
        json_set(o, "revision", json_hex(rec->revision, 4));
        sections = json_object_new_array();
        for (uint32_t i = 0; sections && i < rec->n_sections; i++) {
                const struct amdsmi_cper_section *s = &rec->sections[i];
                json_object *e = json_object_new_object();

                if (!e)
                        break;
                json_set(e, "type",
                         json_object_new_string(amdsmi_cper_section_type_to_string(s->type)));
                json_set(e, "type_guid", json_object_new_string(s->type_guid));
                json_set(e, "severity",
                         json_object_new_string(amdsmi_cper_severity_to_string(s->severity)));
                json_set(e, "fru", json_object_new_string(s->fru_text));
                json_set(e, "length", json_object_new_uint64(s->length));
                json_object_array_add(sections, e);
        }
        json_set(o, "sections", sections);
        json_set(o, "size", json_object_new_uint64(rec->length));
        return o;
}

json_object *cper_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        json_object *o = doc_gpu_new(index, gpu), *c, *records;
        struct amdsmi_cper_batch *batch = NULL;
        int idx = (int) index, r;

        if (!o)
                return NULL;
        add_partitions_selected(q, index, o);
        r = q->unprivileged ? -EACCES : amdsmi_gpu_read_cper(gpu, NULL, &batch);
        if (r < 0) {
                report_field_error_msg(q->report, idx, "cper", r, debugfs_message(r));
                json_set(o, "cper", NULL);
                return o;
        }
        c = json_object_new_object();
        records = json_object_new_array();
        for (size_t i = 0; records && i < batch->n_records; i++)
                json_object_array_add(records, health_cper_record_json(&batch->records[i]));
        if (c) {
                json_set(c, "lost", json_object_new_uint64(batch->lost));
                json_set(c, "skipped", json_object_new_uint64(batch->skipped));
                json_set(c, "records", records);
        } else
                json_object_put(records);
        amdsmi_cper_batch_free(batch);
        json_set(o, "cper", c);
        return o;
}

/* ---- health ---------------------------------------------------------------------------- */

static json_object *gts(uint64_t mts) {
        return mts == AMDSMI_NA ? NULL : json_object_new_double((double) mts / 1000.0);
}

/* The links the verdict looked at: "links" of the health document. */
static json_object *links_json(const struct health_input *in) {
        const struct health_links *l = &in->links;
        json_object *o = json_object_new_object(), *x = NULL;

        if (!o)
                return NULL;
        if (l->error == 0) {
                x = json_object_new_array();
                for (unsigned i = 0; x && i < AMDSMI_METRICS_MAX_XGMI; i++)
                        json_object_array_add(
                                x, json_object_new_string(!(l->xgmi_known & (1u << i)) ? "n/a"
                                                          : l->xgmi_down & (1u << i)   ? "down"
                                                                                       : "up"));
        }
        json_set(o, "xgmi_link_state", x);
        json_set(o, "pcie_width", json_u64_or_null(l->pcie_width));
        json_set(o, "pcie_max_width", json_u64_or_null(l->pcie_max_width));
        json_set(o, "pcie_speed_gts", gts(l->pcie_speed_mts));
        json_set(o, "pcie_max_speed_gts", gts(l->pcie_max_speed_mts));
        json_set(o, "pcie_replays", json_u64_or_null(l->pcie_replays));
        json_set(o, "pcie_recoveries", json_u64_or_null(l->pcie_recoveries));
        /* what amdsmid counts between its checks (null without it) */
        json_set(o, "pcie_replays_in_window",
                 in->link_errors_known ? json_object_new_uint64(in->replays_in_window) : NULL);
        json_set(o, "xgmi_errors_total",
                 in->link_errors_known && in->xgmi_errors_counted
                         ? json_object_new_uint64(in->xgmi_errors_total)
                         : NULL);
        return o;
}

json_object *health_gpu_with(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu,
                             const struct health_thresholds *t, const struct health_input *in) {
        json_object *o = doc_gpu_new(index, gpu);
        struct health_verdict v;

        if (!o)
                return NULL;
        add_partitions_selected(q, index, o);
        health_judge(t, in, &v);
        json_set(o, "health", health_verdict_json(&v));
        json_set(o, "ecc", in->now.error == 0 ? health_ecc_json(&in->now.ras) : NULL);
        json_set(o, "links", links_json(in));
        return o;
}

json_object *health_gpu(const struct doc_query *q, size_t index, struct amdsmi_gpu *gpu) {
        struct health_input in;

        health_input_read(gpu, &in);
        return health_gpu_with(q, index, gpu, NULL, &in);
}

/* ---- KFD events ------------------------------------------------------------------------ */

json_object *health_event_json(int gpu, const char *bdf, const struct amdsmi_event *ev) {
        json_object *o = json_object_new_object(), *d;
        struct timespec now;
        char ts[40];

        if (!o)
                return NULL;
        clock_gettime(CLOCK_REALTIME, &now);
        format_timestamp(&now, ts, sizeof(ts));
        json_set(o, "timestamp", json_object_new_string(ts));
        json_set(o, "gpu", gpu < 0 ? NULL : json_object_new_int(gpu));
        json_set(o, "bdf", json_string_or_null(bdf));
        json_set(o, "partition", ev->partition < 0 ? NULL : json_object_new_int(ev->partition));
        json_set(o, "kfd_gpu_id", json_object_new_uint64(ev->kfd_gpu_id));
        json_set(o, "kind", json_object_new_string(amdsmi_event_kind_to_string(ev->kind)));
        json_set(o, "id", json_object_new_uint64(ev->id));
        d = json_object_new_object();
        switch (ev->kind) {
        case AMDSMI_EVENT_GPU_PRE_RESET:
        case AMDSMI_EVENT_GPU_POST_RESET:
                json_set(d, "seq", json_object_new_uint64(ev->u.reset.seq));
                json_set(d, "cause", json_object_new_string(ev->u.reset.cause));
                break;
        case AMDSMI_EVENT_THERMAL_THROTTLE:
                json_set(d, "mask", json_hex(ev->u.throttle.mask, 0));
                json_set(d, "counter", json_object_new_uint64(ev->u.throttle.counter));
                break;
        case AMDSMI_EVENT_VMFAULT:
                json_set(d, "pid", json_object_new_uint64(ev->u.vmfault.pid));
                json_set(d, "task", json_object_new_string(ev->u.vmfault.task));
                break;
        case AMDSMI_EVENT_PROCESS_START:
        case AMDSMI_EVENT_PROCESS_END:
                json_set(d, "pid", json_object_new_uint64(ev->u.process.pid));
                json_set(d, "comm", json_object_new_string(ev->u.process.comm));
                break;
        case AMDSMI_EVENT_MIGRATE_START:
        case AMDSMI_EVENT_MIGRATE_END:
                json_set(d, "pid", json_object_new_uint64(ev->u.migrate.pid));
                json_set(d, "address", json_hex(ev->u.migrate.address, 0));
                json_set(d, "pages", json_object_new_uint64(ev->u.migrate.pages));
                json_set(d, "from", json_object_new_uint64(ev->u.migrate.from));
                json_set(d, "to", json_object_new_uint64(ev->u.migrate.to));
                break;
        case AMDSMI_EVENT_PAGE_FAULT_START:
        case AMDSMI_EVENT_PAGE_FAULT_END:
                json_set(d, "pid", json_object_new_uint64(ev->u.page_fault.pid));
                json_set(d, "address", json_hex(ev->u.page_fault.address, 0));
                json_set(d, "node", json_object_new_uint64(ev->u.page_fault.node));
                break;
        case AMDSMI_EVENT_QUEUE_EVICTION:
        case AMDSMI_EVENT_QUEUE_RESTORE:
                json_set(d, "pid", json_object_new_uint64(ev->u.queue.pid));
                json_set(d, "node", json_object_new_uint64(ev->u.queue.node));
                break;
        case AMDSMI_EVENT_UNMAP_FROM_GPU:
                json_set(d, "pid", json_object_new_uint64(ev->u.unmap.pid));
                json_set(d, "address", json_hex(ev->u.unmap.address, 0));
                json_set(d, "pages", json_object_new_uint64(ev->u.unmap.pages));
                break;
        default:
                break;
        }
        json_set(o, "data", d);
        json_set(o, "text", json_object_new_string(ev->text));
        return o;
}
