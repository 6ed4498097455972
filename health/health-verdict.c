/* SPDX-License-Identifier: MIT */
/*
 * The health verdict of a GPU (health-json.h): ok / warning / critical / unknown, with every
 * reason that made it. Pure policy over a struct health_input, so that its unit test feeds it
 * structs and amdsmid passes its previous sample and the resets it saw.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amdsmid-conf.h"
#include "health-json.h"
#include "json-util.h"
#include "macro.h"

void health_thresholds_default(struct health_thresholds *t) {
        *t = (struct health_thresholds){
                .ce_rate_warning_per_hour = CONFIG_HEALTH_CE_RATE_DEFAULT,
                .bad_pages_warning_percent = CONFIG_HEALTH_BAD_PAGES_PERCENT_DEFAULT,
                .reset_window_minutes = CONFIG_HEALTH_RESET_WINDOW_DEFAULT,
        };
}

void health_thresholds_from_config(const struct config *c, struct health_thresholds *t) {
        health_thresholds_default(t);
        if (!c)
                return;
        t->ce_rate_warning_per_hour = c->health.ce_rate_warning_per_hour;
        t->bad_pages_warning_percent = c->health.bad_pages_warning_percent;
        t->reset_window_minutes = c->health.reset_window_minutes;
}

const char *health_state_to_string(enum health_state s) {
        switch (s) {
        case HEALTH_OK:
                return "ok";
        case HEALTH_WARNING:
                return "warning";
        case HEALTH_CRITICAL:
                return "critical";
        case HEALTH_UNKNOWN:
                break;
        }
        return "unknown";
}

static int state_rank(enum health_state s) {
        switch (s) {
        case HEALTH_OK:
                return 0;
        case HEALTH_UNKNOWN:
                return 1;
        case HEALTH_WARNING:
                return 2;
        case HEALTH_CRITICAL:
                return 3;
        }
        return 1;
}

enum health_state health_state_worst(enum health_state a, enum health_state b) {
        return state_rank(a) >= state_rank(b) ? a : b;
}

int health_exit_status(enum health_state s) {
        switch (s) {
        case HEALTH_OK:
                return 0;
        case HEALTH_WARNING:
                return 1;
        case HEALTH_CRITICAL:
                return 2;
        case HEALTH_UNKNOWN:
                break;
        }
        return 3;
}

const char *health_severity_to_string(enum health_severity s) {
        switch (s) {
        case HEALTH_SEVERITY_INFO:
                return "info";
        case HEALTH_SEVERITY_WARNING:
                return "warning";
        case HEALTH_SEVERITY_CRITICAL:
                return "critical";
        case HEALTH_SEVERITY_UNKNOWN:
                break;
        }
        return "unknown";
}

static uint64_t boottime_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

int health_sample_read(struct amdsmi_gpu *gpu, struct health_sample *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->ras.size = sizeof(ret->ras);
        ret->error = amdsmi_gpu_read_ras(gpu, &ret->ras);
        ret->usec = boottime_usec();
        return ret->error;
}

int health_links_read(struct amdsmi_gpu *gpu, bool metrics, struct health_links *ret) {
        struct health_links prev = *ret;
        struct amdsmi_gpu_metrics m;
        struct amdsmi_pcie_link link;
        uint64_t replays;

        *ret = (struct health_links){
                .pcie_width = AMDSMI_NA,
                .pcie_max_width = AMDSMI_NA,
                .pcie_speed_mts = AMDSMI_NA,
                .pcie_max_speed_mts = AMDSMI_NA,
                .pcie_replays = AMDSMI_NA,
                .pcie_recoveries = AMDSMI_NA,
                .usec = boottime_usec(),
        };
        if (amdsmi_gpu_read_pcie_link(gpu, &link) == 0) {
                ret->pcie_width = link.current_width;
                ret->pcie_max_width = link.max_width;
                ret->pcie_speed_mts = link.current_speed_mts;
                ret->pcie_max_speed_mts = link.max_speed_mts;
        }
        if (amdsmi_gpu_read_pcie_replay_count(gpu, &replays) == 0)
                ret->pcie_replays = replays;
        if (!metrics) {
                ret->error = prev.error;
                ret->xgmi_known = prev.xgmi_known;
                ret->xgmi_down = prev.xgmi_down;
                ret->pcie_recoveries = prev.pcie_recoveries;
                if (ret->pcie_replays == AMDSMI_NA)
                        ret->pcie_replays = prev.pcie_replays;
                return ret->error;
        }
        ret->error = amdsmi_gpu_read_metrics(gpu, &m);
        if (ret->error < 0)
                return ret->error;
        for (unsigned i = 0; i < AMDSMI_METRICS_MAX_XGMI; i++)
                if (m.xgmi_link_status[i] == 0 || m.xgmi_link_status[i] == 1) {
                        ret->xgmi_known |= 1u << i;
                        if (m.xgmi_link_status[i] == 0)
                                ret->xgmi_down |= 1u << i;
                }
        if (ret->pcie_replays == AMDSMI_NA)
                ret->pcie_replays = m.pcie_replay_count_acc;
        ret->pcie_recoveries = m.pcie_l0_to_recov_count_acc;
        return 0;
}

void health_input_read(struct amdsmi_gpu *gpu, struct health_input *ret) {
        struct amdsmi_bad_page *pages = NULL;
        struct amdsmi_cper_batch *batch = NULL;
        int n;

        memset(ret, 0, sizeof(*ret));
        health_sample_read(gpu, &ret->now);

        n = amdsmi_gpu_read_bad_pages(gpu, &pages);
        if (n < 0)
                ret->bad_pages_error = n;
        else {
                ret->n_bad_pages = (size_t) n;
                for (int i = 0; i < n; i++)
                        if (pages[i].status == AMDSMI_BAD_PAGE_STATUS_PENDING)
                                ret->n_pending++;
                        else if (pages[i].status == AMDSMI_BAD_PAGE_STATUS_UNRESERVABLE)
                                ret->n_unreservable++;
                free(pages);
        }
        ret->threshold_error = amdsmi_gpu_read_bad_page_threshold(gpu, &ret->threshold);

        ret->cper_error = amdsmi_gpu_read_cper(gpu, NULL, &batch);
        if (ret->cper_error == 0) {
                for (size_t i = 0; i < batch->n_records; i++)
                        if (batch->records[i].severity == AMDSMI_CPER_SEVERITY_FATAL) {
                                ret->n_cper_fatal++;
                                snprintf(ret->cper_fatal_id, sizeof(ret->cper_fatal_id), "%s",
                                         batch->records[i].record_id);
                        }
                amdsmi_cper_batch_free(batch);
        }
        ret->resets_known = false;
        ret->last_reset_age_usec = UINT64_MAX;
        (void) health_links_read(gpu, true, &ret->links);
        ret->link_errors_known = false;
        ret->last_replays_age_usec = ret->last_xgmi_error_age_usec = UINT64_MAX;
}

_printf_(4, 5) static void add(struct health_verdict *v, const char *code, enum health_severity sev,
                               const char *fmt, ...) {
        struct health_reason *r;
        va_list ap;

        if (v->n_reasons >= HEALTH_REASONS_MAX)
                return;
        r = &v->reasons[v->n_reasons++];
        r->code = code;
        r->severity = sev;
        va_start(ap, fmt);
        vsnprintf(r->text, sizeof(r->text), fmt, ap);
        va_end(ap);
}

/* The blocks with uncorrectable errors, "umc 2, gfx 1", into @buf. */
static void ue_blocks(const struct amdsmi_ras_info *ras, char *buf, size_t size) {
        size_t n = 0;

        buf[0] = '\0';
        for (size_t b = 0; b < _AMDSMI_RAS_BLOCK_MAX && n < size; b++)
                if (ras->blocks[b].error == 0 && ras->blocks[b].ue > 0)
                        n += (size_t) snprintf(buf + n, size - n, "%s%s %" PRIu64, n ? ", " : "",
                                               amdsmi_ras_block_to_string(b), ras->blocks[b].ue);
}

static void judge_ras(const struct health_thresholds *t, const struct health_input *in,
                      struct health_verdict *v) {
        const struct amdsmi_ras_info *ras = &in->now.ras;
        uint64_t ue = 0, ce = 0, pce = 0;
        bool readable = false, prev_ok;
        char buf[128];

        if (in->now.error == -ENODATA) {
                add(v, "ras_not_supported", HEALTH_SEVERITY_UNKNOWN,
                    "no RAS on this GPU (no ras/ directory): its errors cannot be counted");
                return;
        }
        if (in->now.error < 0) {
                add(v, "ras_unreadable", HEALTH_SEVERITY_UNKNOWN,
                    "the RAS files cannot be read: %s", strerror(-in->now.error));
                return;
        }
        for (size_t b = 0; b < _AMDSMI_RAS_BLOCK_MAX; b++) {
                const struct amdsmi_ras_count *k = &ras->blocks[b];

                if (k->error == -ENOENT)
                        continue;
                if (k->error < 0) {
                        add(v, "ras_block_unreadable", HEALTH_SEVERITY_UNKNOWN,
                            "the counts of block %s cannot be read: %s",
                            amdsmi_ras_block_to_string(b),
                            k->error == -EBUSY     ? "query currently inaccessible"
                            : k->error == -EBADMSG ? "garbage in the count file"
                                                   : strerror(-k->error));
                        continue;
                }
                readable = true;
                ue += k->ue;
                ce += k->ce;
        }
        if (!readable) {
                add(v, "ras_unreadable", HEALTH_SEVERITY_UNKNOWN,
                    "no RAS block's counts can be read");
                return;
        }
        if (ue > 0) {
                ue_blocks(ras, buf, sizeof(buf));
                add(v, "uncorrectable_errors", HEALTH_SEVERITY_CRITICAL,
                    "%" PRIu64 " uncorrectable error%s since the driver loaded (%s)", ue,
                    ue == 1 ? "" : "s", buf);
        }

        /* the CE rate needs an earlier sample of the same blocks */
        prev_ok = in->previous && in->previous->error == 0 && in->previous->usec < in->now.usec;
        if (!prev_ok) {
                add(v, "ce_rate_not_evaluated", HEALTH_SEVERITY_INFO,
                    "correctable error rate not evaluated: it needs two samples (amdsmid "
                    "keeps them)");
                return;
        }
        for (size_t b = 0; b < _AMDSMI_RAS_BLOCK_MAX; b++) {
                const struct amdsmi_ras_count *k = &ras->blocks[b],
                                              *p = &in->previous->ras.blocks[b];
                uint64_t d;

                if (k->error != 0 || p->error != 0)
                        continue;
                if (amdsmi_ras_count_delta(p->ce, k->ce, &d) == 1 ||
                    amdsmi_ras_count_delta(p->ue, k->ue, &d) == 1) {
                        add(v, "counts_reset", HEALTH_SEVERITY_INFO,
                            "the RAS counts went back since the previous sample: the driver was "
                            "reloaded (counted from the reload on)");
                        break;
                }
        }
        for (size_t b = 0; b < _AMDSMI_RAS_BLOCK_MAX; b++) {
                const struct amdsmi_ras_count *k = &ras->blocks[b],
                                              *p = &in->previous->ras.blocks[b];
                uint64_t d;

                if (k->error != 0)
                        continue;
                if (p->error != 0)
                        d = 0; /* no base for this block: its count is not a change */
                else
                        (void) amdsmi_ras_count_delta(p->ce, k->ce, &d);
                pce += d;
        }
        {
                uint64_t dt = in->now.usec - in->previous->usec;
                /* CEs per hour = pce * 3600e6 / dt, compared without rounding:
                 * pce * 3600e6 > limit * dt */
                unsigned __int128 lhs = (unsigned __int128) pce * 3600000000u;
                unsigned __int128 rhs = (unsigned __int128) t->ce_rate_warning_per_hour * dt;

                if (lhs > rhs)
                        add(v, "ce_rate", HEALTH_SEVERITY_WARNING,
                            "%" PRIu64 " correctable errors in %" PRIu64 " s: above %" PRIu64
                            " per hour",
                            pce, dt / 1000000u, t->ce_rate_warning_per_hour);
        }
}

static void judge_bad_pages(const struct health_thresholds *t, const struct health_input *in,
                            struct health_verdict *v) {
        if (in->bad_pages_error == -ENODATA)
                return;
        if (in->bad_pages_error < 0) {
                add(v, "bad_pages_unreadable", HEALTH_SEVERITY_UNKNOWN,
                    "the retired pages cannot be read: %s",
                    in->bad_pages_error == -EBADMSG ? "garbage in gpu_vram_bad_pages"
                                                    : strerror(-in->bad_pages_error));
                return;
        }
        if (in->n_unreservable > 0)
                add(v, "bad_pages_unreservable", HEALTH_SEVERITY_CRITICAL,
                    "%zu retired page%s could not be reserved: the memory stays in use",
                    in->n_unreservable, in->n_unreservable == 1 ? "" : "s");
        if (in->n_pending > 0)
                add(v, "bad_pages_pending", HEALTH_SEVERITY_WARNING,
                    "%zu page%s pending retirement", in->n_pending, in->n_pending == 1 ? "" : "s");
        if (in->threshold_error == -ENODATA)
                return;
        if (in->threshold_error < 0) {
                add(v, "bad_page_threshold_not_evaluated", HEALTH_SEVERITY_INFO,
                    "retired pages against the threshold not evaluated: %s",
                    in->threshold_error == -EACCES || in->threshold_error == -EPERM
                            ? HEALTH_NEEDS_ROOT
                            : strerror(-in->threshold_error));
                return;
        }
        if (in->threshold == 0)
                return;
        if (in->n_bad_pages >= in->threshold)
                add(v, "bad_pages_rma", HEALTH_SEVERITY_CRITICAL,
                    "%zu retired pages reach the threshold of %" PRIu32
                    ": the GPU needs replacement (RMA)",
                    in->n_bad_pages, in->threshold);
        else if ((uint64_t) in->n_bad_pages * 100 >=
                 (uint64_t) in->threshold * t->bad_pages_warning_percent)
                add(v, "bad_pages_near_threshold", HEALTH_SEVERITY_WARNING,
                    "%zu retired pages of a threshold of %" PRIu32 " (at least %u %%)",
                    in->n_bad_pages, in->threshold, t->bad_pages_warning_percent);
}

static void judge_cper(const struct health_input *in, struct health_verdict *v) {
        if (in->cper_error == -ENODATA)
                return;
        if (in->cper_error == -EACCES || in->cper_error == -EPERM) {
                add(v, "cper_not_evaluated", HEALTH_SEVERITY_INFO,
                    "CPER records not evaluated: " HEALTH_NEEDS_ROOT);
                return;
        }
        if (in->cper_error < 0) {
                add(v, "cper_not_evaluated", HEALTH_SEVERITY_INFO, "CPER records not evaluated: %s",
                    strerror(-in->cper_error));
                return;
        }
        if (in->n_cper_fatal > 0)
                add(v, "cper_fatal", HEALTH_SEVERITY_CRITICAL,
                    "%zu CPER record%s of fatal severity (last: %s)", in->n_cper_fatal,
                    in->n_cper_fatal == 1 ? "" : "s", in->cper_fatal_id);
}

static void judge_resets(const struct health_thresholds *t, const struct health_input *in,
                         struct health_verdict *v) {
        uint64_t window = (uint64_t) t->reset_window_minutes * 60u * 1000000u;

        if (!in->resets_known) {
                add(v, "reset_not_evaluated", HEALTH_SEVERITY_INFO,
                    "recent GPU resets not evaluated: amdsmid sees them");
                return;
        }
        if (in->last_reset_age_usec != UINT64_MAX && in->last_reset_age_usec < window)
                add(v, "recent_reset", HEALTH_SEVERITY_WARNING,
                    "the GPU was reset %" PRIu64 " s ago (within %u minutes)",
                    in->last_reset_age_usec / 1000000u, t->reset_window_minutes);
}

static void link_list(unsigned mask, char *buf, size_t size) {
        size_t n = 0;

        buf[0] = '\0';
        for (unsigned i = 0; i < 32 && n < size; i++)
                if (mask & (1u << i))
                        n += (size_t) snprintf(buf + n, size - n, "%s%u", n ? ", " : "", i);
}

static void judge_links(const struct health_thresholds *t, const struct health_input *in,
                        struct health_verdict *v) {
        const struct health_links *l = &in->links;
        uint64_t window = (uint64_t) t->reset_window_minutes * 60u * 1000000u;
        char buf[64];

        if (l->xgmi_down) {
                link_list(l->xgmi_down, buf, sizeof(buf));
                add(v, "xgmi_link_down", HEALTH_SEVERITY_WARNING,
                    "XGMI link%s %s down (%u of %u up)",
                    (l->xgmi_down & (l->xgmi_down - 1)) ? "s" : "", buf,
                    (unsigned) __builtin_popcount(l->xgmi_known & ~l->xgmi_down),
                    (unsigned) __builtin_popcount(l->xgmi_known));
        }
        if (l->pcie_width != AMDSMI_NA && l->pcie_max_width != AMDSMI_NA &&
            l->pcie_width < l->pcie_max_width)
                add(v, "pcie_link_degraded", HEALTH_SEVERITY_WARNING,
                    "PCIe link x%" PRIu64 " of x%" PRIu64 " at %" PRIu64 ".%" PRIu64 " GT/s",
                    l->pcie_width, l->pcie_max_width,
                    l->pcie_speed_mts == AMDSMI_NA ? 0 : l->pcie_speed_mts / 1000,
                    l->pcie_speed_mts == AMDSMI_NA ? 0 : l->pcie_speed_mts % 1000 / 100);
        else if (l->pcie_speed_mts != AMDSMI_NA && l->pcie_max_speed_mts != AMDSMI_NA &&
                 l->pcie_speed_mts < l->pcie_max_speed_mts)
                /* power management lowers the speed of an idle link: no warning */
                add(v, "pcie_link_slower", HEALTH_SEVERITY_INFO,
                    "PCIe link at %" PRIu64 ".%" PRIu64 " of %" PRIu64 ".%" PRIu64
                    " GT/s (power management may have lowered it)",
                    l->pcie_speed_mts / 1000, l->pcie_speed_mts % 1000 / 100,
                    l->pcie_max_speed_mts / 1000, l->pcie_max_speed_mts % 1000 / 100);
        if (!in->link_errors_known) {
                if (l->xgmi_known || l->pcie_replays != AMDSMI_NA)
                        add(v, "link_errors_not_evaluated", HEALTH_SEVERITY_INFO,
                            "growing PCIe replays and XGMI errors not evaluated: amdsmid "
                            "follows them");
                return;
        }
        if (in->last_replays_age_usec < window)
                add(v, "pcie_replays", HEALTH_SEVERITY_WARNING,
                    "%" PRIu64 " PCIe replay%s within %u minutes (the last %" PRIu64 " s ago)",
                    in->replays_in_window, in->replays_in_window == 1 ? "" : "s",
                    t->reset_window_minutes, in->last_replays_age_usec / 1000000u);
        if (in->last_xgmi_error_age_usec < window)
                add(v, "xgmi_errors", HEALTH_SEVERITY_WARNING,
                    "XGMI errors %" PRIu64 " s ago (%" PRIu64 " counted since amdsmid started)",
                    in->last_xgmi_error_age_usec / 1000000u, in->xgmi_errors_total);
}

void health_judge(const struct health_thresholds *t, const struct health_input *in,
                  struct health_verdict *ret) {
        struct health_thresholds def;
        bool unknown = false;
        enum health_state s = HEALTH_OK;

        if (!t) {
                health_thresholds_default(&def);
                t = &def;
        }
        memset(ret, 0, sizeof(*ret));
        judge_ras(t, in, ret);
        judge_bad_pages(t, in, ret);
        judge_cper(in, ret);
        judge_resets(t, in, ret);
        judge_links(t, in, ret);

        for (size_t i = 0; i < ret->n_reasons; i++)
                switch (ret->reasons[i].severity) {
                case HEALTH_SEVERITY_INFO:
                        break;
                case HEALTH_SEVERITY_WARNING:
                        s = health_state_worst(s, HEALTH_WARNING);
                        break;
                case HEALTH_SEVERITY_CRITICAL:
                        s = HEALTH_CRITICAL;
                        break;
                case HEALTH_SEVERITY_UNKNOWN:
                        unknown = true;
                        break;
                }
        /* what cannot be read makes the GPU unknown, unless what can is critical or warning */
        ret->state = s == HEALTH_OK && unknown ? HEALTH_UNKNOWN : s;
}

json_object *health_verdict_json(const struct health_verdict *v) {
        json_object *o = json_object_new_object(), *a;

        if (!o)
                return NULL;
        json_set(o, "state", json_object_new_string(health_state_to_string(v->state)));
        a = json_object_new_array();
        for (size_t i = 0; a && i < v->n_reasons; i++) {
                json_object *e = json_object_new_object();

                if (!e)
                        break;
                json_set(e, "code", json_object_new_string(v->reasons[i].code));
                json_set(e, "severity",
                         json_object_new_string(health_severity_to_string(v->reasons[i].severity)));
                json_set(e, "text", json_object_new_string(v->reasons[i].text));
                json_object_array_add(a, e);
        }
        json_set(o, "reasons", a);
        return o;
}
