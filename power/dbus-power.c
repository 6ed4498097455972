/* SPDX-License-Identifier: MIT */
/*
 * amdsmid: the org.amdsmi1.Power interface of the GPU objects, and the daemon's ownership of
 * the power sources (ARCHITECTURE §5 "Power", §6).
 *
 * Properties (EMITS_CHANGE): CapUw (t, the cap the device holds, µW; 0 unknown) and
 * EffectiveSource (s, what `amdsmi power --json` calls effective_source: "host", "vm", "apml",
 * "default", "external", "outside-writer", or "" when nothing is known).
 *
 * Methods; each change answers the GPU's object of the change document of `amdsmi power set
 * --json` ("gpus"[i], with its "messages"), runs as a job under the GPU's change lock and goes
 * through power/power-ops.h as an in-process change does. flags: bit 0 dry run (the answer
 * is the plan; no polkit, nothing changes), bit 1 force (accepted; power changes have nothing
 * to force); any other bit is InvalidArgument.
 *
 *   Explain() -> s                  the GPU's object of `amdsmi power --json`
 *   SetSource(s source, s key, t uw, t flags) -> s
 *                                   source "host" or "apml" (key ""), or "vm" (key: the VM's
 *                                   name or UUID, 1 to 127 bytes, no control characters)
 *   ClearSource(s source, s key, t flags) -> s
 *   Additions:
 *   SetVmSource(s key, s vf_bdf, t uw, t flags) -> s
 *                                   a VM's source with its VF's PCI address ("" for none)
 *   SetSources(a(ssst) sources, t flags) -> s
 *                                   several sources at once, one apply: (source, key, vf_bdf,
 *                                   uw), each kind at most once (one VM per call)
 *   ClearSources(a(ss) sources, t flags) -> s
 *   Apply(t flags) -> s             apply the arbitrated cap again, changing no source
 *
 * Authorisation per source: host -> org.amdsmi1.power.configure, apml ->
 * org.amdsmi1.power.set-platform-limit, vm -> org.amdsmi1.vm.provision (every kind a call
 * names); Apply -> power.configure. Errors as the CLI maps them: InvalidArgument (unknown
 * source, a key where none goes, a bad VM name or VF address, a cap below 1 W, unknown flags),
 * OutOfRange (above 4294.967295 W or outside the GPU's range, 64 VMs), NotFound (clearing a VM
 * that has no source), NotSupported (where no cap can be applied; on gim hosts the sources are
 * recorded all the same and the error says "sources recorded; ..."), Busy, DeviceError.
 *
 * What amdsmid keeps (its own jobs, change "power_apply", or "power_source" when
 * amdsmid.conf's power_cap changed, or "power_enforce"):
 *   - after a GPU appears (start, re-plug) the state file's arbitrated cap is applied when the
 *     device does not hold it, and when amdsmid.conf's power_cap is not what the host source
 *     says;
 *   - when the device's cap goes back to its default while no change runs (a GPU reset), the
 *     cap is applied again, at most every 10 s per GPU; a lower cap is an external limiter
 *     and is left alone, always;
 *   - a higher cap than the arbitrated one (an outside writer wrote power1_cap) is reported
 *     (EffectiveSource "outside-writer", a log line per value) and left alone, unless
 *     amdsmid.conf's enforce is yes for the GPU ([power], [gpu], [gpu BDF]): then the
 *     arbitrated cap is written again as a change of its own ("power_enforce"), at most once
 *     every CONFIG_ENFORCE_BACKOFF_S (10 s) per GPU, whatever the writer does meanwhile (a
 *     warning says so); Reload switching enforce on undoes a writer already reported;
 *   - <runtime dir>/apml/ is watched (inotify): a changed APML file is applied at once;
 *   - amdsmid.conf's power_cap is the host source while no call set one (its setter is
 *     "amdsmid.conf (PATH)", its origin "config"); a host source set by a call overrides it
 *     until cleared, and clearing it brings the configured one back; on Reload only a changed
 *     power_cap is applied.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <syslog.h>

#include "amdsmid.h"
#include "amdsmid-conf.h"
#include "documents.h"
#include "report.h"
#include "samples.h"
#include "history.h"
#include "power-ops.h"
#include "runtime-dir.h"

#define REAPPLY_INTERVAL_USEC (10 * UINT64_C(1000000))
#define ENFORCE_BACKOFF_USEC (CONFIG_ENFORCE_BACKOFF_S * UINT64_C(1000000))
#define LOST_CONFIRM_USEC UINT64_C(1000000)
#define NO_WATTS UINT64_MAX

#define ACTION_HOST "org.amdsmi1.power.configure"
#define ACTION_APML "org.amdsmi1.power.set-platform-limit"
#define ACTION_VM "org.amdsmi1.vm.provision"

/* Why a GPU's cap is to be applied by amdsmid itself. */
enum {
        WANT_CHECK = 1u << 0,   /* it appeared: apply if the device or amdsmid.conf differs */
        WANT_RESET = 1u << 1,   /* the device left the applied cap (rate-limited) */
        WANT_APML = 1u << 2,    /* its APML file changed */
        WANT_CONFIG = 1u << 3,  /* amdsmid.conf's power_cap changed */
        WANT_RECOVER = 1u << 4, /* a change a crash interrupted */
        WANT_ENFORCE = 1u << 5, /* an outside writer raised the cap, and enforce = yes */
};

/* How the device's cap differs from the one amdsmid applied (cap_lost()). */
enum cap_lost {
        CAP_HELD,    /* the same, or lower and not the default: an external limiter */
        CAP_RESET,   /* the default cap is back: a GPU reset (or a writer of that value) */
        CAP_OUTSIDE, /* higher, and above the arbitrated cap: an outside writer */
};

/* The power part of a struct dgpu (g->power). */
struct dgpu_power {
        /* a copy of the state file's record of this GPU, reloaded when state.json changes */
        unsigned state_gen; /* the generation it was loaded at, 0: to load */
        struct power_sources sources;
        uint64_t applied_uw, applied_usec;

        /* what the last refresh saw */
        bool seen;
        bool can_apply, gim, has_record, model_known, apml_file;
        char binding_key[POWER_KEY_MAX]; /* the VM whose cap binds, "" when no VM binds */
        uint64_t device_uw, model_uw, default_uw;

        /* applying again */
        unsigned want;
        uint64_t last_reapply_usec; /* CLOCK_MONOTONIC of the last re-apply after a reset */
        uint64_t lost_since_usec;   /* when a refresh first saw the device leave the applied
                                       cap (0: it holds it); an in-process change writes the
                                       device a moment before the state file */
        uint64_t ignore_w;          /* the cap the device kept below our last apply (an
                                       external limiter): no new attempt while it holds it */
        /* outside writers (amdsmid.conf's enforce) */
        uint64_t outside_w;         /* the outside writer's cap last logged, NO_WATTS: none */
        uint64_t last_enforce_usec; /* CLOCK_MONOTONIC of the last enforcement, 0: none */
        bool backoff_logged;        /* "not fighting it" was logged since that enforcement */
};

static struct {
        unsigned n_gpus;       /* struct dgpu_power allocated: the sources below live as long */
        unsigned state_gen;    /* bumped when state.json is another file or changed */
        unsigned warned_gen;   /* the generation whose warning (a corrupt file) was logged */
        bool state_known;
        struct stat state_st;
        sd_event_source *kick; /* a defer: queue the re-applies wanted */
        sd_event_source *apml; /* the inotify watch of the APML directory */
        uint64_t apml_retry_usec;
        bool apml_warned;
} power_daemon = { .state_gen = 1 };

static void power_kick(struct daemon *d, struct dgpu *only);

static struct dgpu_power *power_get(struct dgpu *g) {
        if (!g->power) {
                g->power = calloc(1, sizeof(*g->power));
                if (!g->power)
                        return NULL;
                g->power->applied_uw = g->power->applied_usec = AMDSMI_NA;
                g->power->ignore_w = NO_WATTS;
                g->power->outside_w = NO_WATTS;
                power_sources_init(&g->power->sources);
                power_daemon.n_gpus++;
        }
        return g->power;
}

static void power_free_gpu(struct dgpu *g) {
        if (!g->power)
                return;
        free(g->power);
        g->power = NULL;
        if (--power_daemon.n_gpus == 0) {
                power_daemon.kick = sd_event_source_disable_unref(power_daemon.kick);
                power_daemon.apml = sd_event_source_disable_unref(power_daemon.apml);
        }
}

/* ---- the state file ------------------------------------------------------------------- */

/* Notices a new state.json (writers rename a new file into place) by its stat. */
static void state_check(void) {
        char dir[256], path[300];
        struct stat st;
        bool exists;

        if (state_dir(dir, sizeof(dir)) < 0)
                return;
        snprintf(path, sizeof(path), "%s/state.json", dir);
        exists = stat(path, &st) >= 0;
        if (!exists)
                st = (struct stat){};
        if (power_daemon.state_known && st.st_dev == power_daemon.state_st.st_dev &&
            st.st_ino == power_daemon.state_st.st_ino && st.st_size == power_daemon.state_st.st_size &&
            st.st_mtim.tv_sec == power_daemon.state_st.st_mtim.tv_sec &&
            st.st_mtim.tv_nsec == power_daemon.state_st.st_mtim.tv_nsec)
                return;
        power_daemon.state_known = true;
        power_daemon.state_st = st;
        if (++power_daemon.state_gen == 0)
                power_daemon.state_gen = 1;
}

/* Loads the GPU's record when the state changed (never waits: a writer holding the lock
 * means a new file soon, loaded next time). */
static void state_load_gpu(struct dgpu *g, struct dgpu_power *p) {
        struct state_store *st = NULL;
        int r;

        state_check();
        if (p->state_gen == power_daemon.state_gen)
                return;
        r = state_open(STATE_READ, 0, &st);
        if (r < 0) {
                if (r != -EBUSY)
                        log_gpu(LOG_DEBUG, g->bdf, "cannot read the state: %s", strerror(-r));
                return;
        }
        if (state_warning(st) && power_daemon.warned_gen != power_daemon.state_gen) {
                log_warning("%s", state_warning(st));
                power_daemon.warned_gen = power_daemon.state_gen;
        }
        power_sources_init(&p->sources);
        (void) state_get_power(st, g->bdf, &p->sources);
        if (state_get_applied(st, g->bdf, &p->applied_uw, &p->applied_usec) < 0)
                p->applied_uw = p->applied_usec = AMDSMI_NA;
        p->state_gen = power_daemon.state_gen;
        state_close(st);
}

/* ---- amdsmid.conf ------------------------------------------------------------------------- */

static bool setter_is_config(const struct power_source *s) {
        return s->present && strcmp(power_source_origin(POWER_SOURCE_HOST, s->setter), "config") == 0;
}

/* Whether the host source is not what amdsmid.conf asks for (and no call set one). */
static bool config_differs(struct dgpu *g, const struct dgpu_power *p) {
        struct config_gpu want;
        const struct power_source *h = &p->sources.host;

        (void) config_desired(g->d->config, g->bdf, &want);
        if (h->present && !setter_is_config(h))
                return false;
        if (want.power_cap_set)
                return !h->present || h->uw != want.power_cap_uw;
        return h->present;
}

/* ---- jobs ----------------------------------------------------------------------------- */

struct power_job {
        struct power_change ch;
        char bdf[16];
        char vm_name[POWER_KEY_MAX];
        char vf_bdf[POWER_BDF_MAX];
        char setter[POWER_SETTER_MAX];
        char config_setter[POWER_SETTER_MAX];
        const char *reason; /* the daemon's own changes: why */
        struct power_outcome out;
};

static struct power_job *power_job_new(struct dgpu *g, enum power_change_kind kind) {
        struct power_job *pj = calloc(1, sizeof(*pj));
        struct config_gpu want;

        if (!pj)
                return NULL;
        snprintf(pj->bdf, sizeof(pj->bdf), "%s", g->bdf);
        pj->ch.kind = kind;
        pj->ch.host_option = "--host";
        /* every change of amdsmid keeps the host source in line with amdsmid.conf */
        (void) config_desired(g->d->config, g->bdf, &want);
        pj->ch.sync_config = true;
        pj->ch.config_set = want.power_cap_set;
        pj->ch.config_uw = want.power_cap_uw;
        snprintf(pj->config_setter, sizeof(pj->config_setter), POWER_SETTER_CONFIG " (%s)",
                 g->d->config && g->d->config->path ? g->d->config->path : "");
        pj->ch.config_setter = pj->config_setter;
        snprintf(pj->setter, sizeof(pj->setter), "amdsmid");
        pj->ch.setter = pj->setter;
        return pj;
}

/* On a worker thread: the change; its report (printing nothing) is the answer. */
static int power_job_run(struct job *j, struct amdsmi_ctx *ctx) {
        struct power_job *pj = j->userdata;
        struct report rep = {
                .command = "power",
                .keep_field_errors = true,
                .dry_run = (j->flags & AMDSMI_BUS_FLAG_DRY_RUN) != 0,
        };
        struct amdsmi_gpu *gpu = NULL;
        json_object *entry;
        size_t index;
        int r;

        r = amdsmi_ctx_find_gpu(ctx, pj->bdf, &gpu);
        if (r < 0) {
                (void) asprintf(&j->message, "GPU %s is gone", pj->bdf);
                return -ENODEV;
        }
        index = amdsmi_gpu_get_index(gpu);
        entry = power_change_entry_new(&pj->ch, index, pj->bdf, amdsmi_gpu_get_product(gpu),
                                       rep.dry_run);
        if (!entry)
                return -ENOMEM;
        r = power_change_gpu(&rep, &pj->ch, index, gpu, entry, &pj->out);
        json_set(entry, "result", report_errno_json(r < 0 ? r : 0));
        j->reply = entry;
        if (pj->reason)
                (void) asprintf(&j->message, "%s: %s", pj->reason,
                                pj->out.message[0] ? pj->out.message : "applied");
        else if (pj->out.message[0])
                j->message = strdup(pj->out.message);
        if (pj->out.old_value[0] || pj->out.new_value[0])
                (void) job_set_change(j, j->change, pj->out.old_value[0] ? pj->out.old_value : NULL,
                                      pj->out.new_value[0] ? pj->out.new_value : NULL);
        report_clear(&rep);
        return r;
}

static char **power_refresh(struct dgpu *g, struct amdsmi_gpu *gpu);

/* On the main thread after the change: what it did shows in the properties before the caller
 * hears back. */
static void power_job_finish(struct job *j) {
        struct power_job *pj = j->userdata;
        struct dgpu *g = manager_find_gpu(j->d, pj->bdf);
        struct amdsmi_gpu *gpu;

        if (pj->out.warning[0])
                log_gpu(LOG_WARNING, pj->bdf, "%s", pj->out.warning);
        if (pj->out.config_warning[0])
                log_gpu(LOG_WARNING, pj->bdf, "%s", pj->out.config_warning);
        if (!g || !g->power || (j->flags & AMDSMI_BUS_FLAG_DRY_RUN))
                return;
        if (pj->out.limited && pj->out.readback_uw != AMDSMI_NA)
                g->power->ignore_w = pj->out.readback_uw / POWER_UW_PER_W;
        else if (pj->out.applied)
                g->power->ignore_w = NO_WATTS;
        g->power->state_gen = 0; /* the state file changed: read it again */
        gpu = dgpu_handle(g);
        if (gpu) {
                _cleanup_strv_free_ char **names = power_refresh(g, gpu);

                dgpu_emit_changed(g, AMDSMI_BUS_IFACE_POWER, names);
        }
}

static struct job *power_job_submit_new(struct dgpu *g, sd_bus_message *m, const char *name,
                                        struct power_job *pj, uint64_t flags, const char *change,
                                        const char *new_value) {
        const char *bdfs[] = { g->bdf };
        struct job *j = job_new(g->d, m, name, bdfs, 1, flags);

        if (!j) {
                free(pj);
                return NULL;
        }
        if (m)
                snprintf(pj->setter, sizeof(pj->setter), "uid %d via amdsmid (pid %d)",
                         (int) j->uid, (int) j->pid);
        j->run = power_job_run;
        j->finish = power_job_finish;
        j->userdata = pj;
        j->free_userdata = free;
        if (job_set_change(j, change, NULL, new_value) < 0)
                return job_free(j);
        return j;
}

/* ---- a VM's source, for the VM provisioning of the SR-IOV slice ---------------------------- */

int power_vm_run(struct amdsmi_ctx *ctx, const char *pf, const char *vm, const char *vf,
                 uint64_t uw, bool dry_run, const char *setter, json_object **ret_entry,
                 struct power_outcome *out) {
        struct report rep = { .command = "power", .keep_field_errors = true, .dry_run = dry_run };
        struct power_change ch = {
                .kind = uw == AMDSMI_NA ? POWER_CHANGE_CLEAR : POWER_CHANGE_SET,
                .vm = true,
                .vm_uw = uw == AMDSMI_NA ? 0 : uw,
                .vm_name = vm,
                .vf_bdf = vf,
                .host_option = "--host",
                .setter = setter,
        };
        struct amdsmi_gpu *gpu = NULL;
        json_object *entry;
        size_t index;
        int r;

        *ret_entry = NULL;
        memset(out, 0, sizeof(*out));
        r = amdsmi_ctx_find_gpu(ctx, pf, &gpu);
        if (r < 0) {
                snprintf(out->message, sizeof(out->message), "GPU %s is gone", pf);
                return -ENODEV;
        }
        index = amdsmi_gpu_get_index(gpu);
        entry = power_change_entry_new(&ch, index, pf, amdsmi_gpu_get_product(gpu), dry_run);
        if (!entry)
                return -ENOMEM;
        r = power_change_gpu(&rep, &ch, index, gpu, entry, out);
        json_set(entry, "result", report_errno_json(r < 0 ? r : 0));
        *ret_entry = entry;
        if (r < 0 && !out->message[0] && rep.error_message)
                snprintf(out->message, sizeof(out->message), "%s", rep.error_message);
        report_clear(&rep);
        return r;
}

void power_vm_done(struct daemon *d, const char *pf) {
        struct dgpu *g = manager_find_gpu(d, pf);
        struct amdsmi_gpu *gpu;

        if (!g || !g->power)
                return;
        g->power->state_gen = 0; /* the state file changed: read it again */
        gpu = dgpu_handle(g);
        if (gpu) {
                _cleanup_strv_free_ char **names = power_refresh(g, gpu);

                dgpu_emit_changed(g, AMDSMI_BUS_IFACE_POWER, names);
        }
}

/* The daemon's own change: apply the arbitrated cap again (and amdsmid.conf's host cap), recorded
 * as @change ("power_apply", "power_source" or "power_enforce"). */
static int submit_reapply(struct dgpu *g, const char *reason, const char *change) {
        struct power_job *pj = power_job_new(g, POWER_CHANGE_APPLY);
        struct job *j;

        if (!pj)
                return -ENOMEM;
        pj->reason = reason;
        j = power_job_submit_new(g, NULL, "ReapplyPower", pj, 0, change, NULL);
        if (!j)
                return -ENOMEM;
        return job_submit(j);
}

/* Whether, and how, the device left the cap amdsmi applied (a changed model is the APML watch's
 * and the changes' business, not this). A reset brings the default back, which is applied again
 * whatever enforce says (the state amdsmid keeps); any other higher cap is an outside writer's,
 * undone only with enforce = yes; a lower one is an external limiter's, never fought. */
static enum cap_lost cap_lost(const struct dgpu_power *p) {
        uint64_t dev, applied;

        if (!p->can_apply || p->applied_uw == AMDSMI_NA || p->device_uw == AMDSMI_NA)
                return CAP_HELD;
        dev = p->device_uw / POWER_UW_PER_W;
        applied = p->applied_uw / POWER_UW_PER_W;
        if (dev == applied || dev == p->ignore_w)
                return CAP_HELD;
        if (p->default_uw != AMDSMI_NA && dev == p->default_uw / POWER_UW_PER_W)
                return CAP_RESET;
        /* never upward: only a cap above the arbitrated one is undone */
        if (dev > applied && (!p->model_known || dev > p->model_uw / POWER_UW_PER_W))
                return CAP_OUTSIDE;
        return CAP_HELD;
}

/* amdsmid.conf's enforce for @g ([gpu BDF] over [gpu] over [power]). */
static bool enforce_on(struct dgpu *g) {
        struct config_gpu want;

        (void) config_desired(g->d->config, g->bdf, &want);
        return want.enforce;
}

static bool device_lost_cap(struct dgpu *g, const struct dgpu_power *p) {
        enum cap_lost l = cap_lost(p);

        return l == CAP_RESET || (l == CAP_OUTSIDE && enforce_on(g));
}

static bool start_needs_apply(struct dgpu *g, const struct dgpu_power *p) {
        if (config_differs(g, p))
                return true;
        if (!p->can_apply || !p->has_record || !p->model_known)
                return false;
        return p->applied_uw == AMDSMI_NA ||
               p->applied_uw / POWER_UW_PER_W != p->model_uw / POWER_UW_PER_W ||
               device_lost_cap(g, p);
}

/* Queues the re-applies wanted (of @only, or of every GPU). */
static void power_kick(struct daemon *d, struct dgpu *only) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (d->exiting)
                return;
        for (size_t i = 0; i < d->n_gpus; i++) {
                struct dgpu *g = d->gpus[i];
                struct dgpu_power *p = g->power;
                const char *reason = NULL, *change = "power_apply";
                char w1[32], w2[32];
                bool config = false;
                int r;

                if ((only && g != only) || !p || !p->want || !g->present || g->changing ||
                    jobs_pending_for(d, g->bdf))
                        continue; /* after the change under way: its refresh comes back here */
                /* nothing to apply here (a VF seen from the host, a guest without the grant);
                 * gim hosts record amdsmid.conf's cap (and say they cannot apply it) */
                if (!p->can_apply && !(p->gim && config_differs(g, p))) {
                        p->want = 0;
                        continue;
                }
                if (p->want & WANT_RECOVER)
                        reason = "recovering an interrupted power change";
                else if (p->want & WANT_CONFIG) {
                        reason = "amdsmid.conf's power_cap changed";
                        config = true;
                } else if (p->want & WANT_APML)
                        reason = "the APML file changed";
                else if ((p->want & WANT_CHECK) && start_needs_apply(g, p)) {
                        config = config_differs(g, p);
                        reason = config ? "amdsmid.conf's power_cap"
                                        : "the device does not hold the arbitrated cap";
                        /* only an outside writer's cap stands between the device and the
                         * record (amdsmid was not running when it was written) */
                        if (!config && cap_lost(p) == CAP_OUTSIDE &&
                            p->applied_uw / POWER_UW_PER_W == p->model_uw / POWER_UW_PER_W) {
                                p->last_enforce_usec = now;
                                p->backoff_logged = false;
                                p->outside_w = NO_WATTS;
                                change = "power_enforce";
                                reason = "enforcing the arbitrated cap over an outside writer";
                                (void) format_scaled_u64(p->device_uw, 6, w1, sizeof(w1));
                                (void) format_scaled_u64(p->model_uw, 6, w2, sizeof(w2));
                                log_full(LOG_NOTICE, g->bdf, change,
                                         "the device holds %s W, above the arbitrated %s W: an "
                                         "outside writer; enforce = yes, writing the arbitrated "
                                         "cap again",
                                         w1, w2);
                        }
                } else if ((p->want & WANT_ENFORCE) && cap_lost(p) == CAP_OUTSIDE &&
                           enforce_on(g)) {
                        (void) format_scaled_u64(p->device_uw, 6, w1, sizeof(w1));
                        (void) format_scaled_u64(p->model_uw != AMDSMI_NA ? p->model_uw
                                                                          : p->applied_uw,
                                                 6, w2, sizeof(w2));
                        if (p->last_enforce_usec != 0 &&
                            now - p->last_enforce_usec < ENFORCE_BACKOFF_USEC) {
                                /* never a fight: once per back-off, whatever the writer does */
                                double since = (double) (now - p->last_enforce_usec) / 1e6;

                                if (!p->backoff_logged)
                                        log_full(LOG_WARNING, g->bdf, "power_enforce",
                                                 "an outside writer set power1_cap to %s W "
                                                 "again, %.1f s after amdsmid enforced %s W: "
                                                 "not fighting it more than once every %d s; "
                                                 "enforcing again in %.1f s",
                                                 w1, since, w2, CONFIG_ENFORCE_BACKOFF_S,
                                                 CONFIG_ENFORCE_BACKOFF_S - since);
                                p->backoff_logged = true;
                                p->want &= ~(unsigned) WANT_CHECK;
                                continue; /* again at the next refresh after the back-off */
                        }
                        p->last_enforce_usec = now;
                        p->backoff_logged = false;
                        p->lost_since_usec = 0;
                        p->outside_w = NO_WATTS;
                        change = "power_enforce";
                        reason = "enforcing the arbitrated cap over an outside writer";
                        log_full(LOG_NOTICE, g->bdf, change,
                                 "the device holds %s W, above the arbitrated %s W: an outside "
                                 "writer; enforce = yes, writing the arbitrated cap again",
                                 w1, w2);
                } else if ((p->want & WANT_RESET) && cap_lost(p) == CAP_RESET) {
                        if (p->last_reapply_usec != 0 &&
                            now - p->last_reapply_usec < REAPPLY_INTERVAL_USEC) {
                                p->want &= ~(unsigned) WANT_CHECK;
                                continue; /* again at the next refresh after the interval */
                        }
                        p->last_reapply_usec = now;
                        p->lost_since_usec = 0;
                        reason = "the device lost the applied cap (a GPU reset or another "
                                 "writer)";
                        (void) format_scaled_u64(p->device_uw, 6, w1, sizeof(w1));
                        (void) format_scaled_u64(p->applied_uw, 6, w2, sizeof(w2));
                        log_gpu(LOG_NOTICE, g->bdf,
                                "the device holds %s W, not the %s W amdsmi applied: a GPU reset "
                                "or another writer; applying the arbitrated cap again", w1, w2);
                }
                p->want = 0;
                if (!reason)
                        continue;
                r = submit_reapply(g, reason, config ? "power_source" : change);
                if (r < 0 && r != -ESHUTDOWN)
                        log_gpu(LOG_WARNING, g->bdf, "cannot queue the power re-apply: %s",
                                strerror(-r));
        }
}

static int on_kick(sd_event_source *s, void *userdata) {
        power_kick(userdata, NULL);
        return 0;
}

static void schedule_kick(struct daemon *d) {
        int r;

        if (!d->event || d->exiting)
                return;
        if (!power_daemon.kick) {
                r = sd_event_add_defer(d->event, &power_daemon.kick, on_kick, d);
                if (r < 0) {
                        log_warning("cannot schedule the power re-apply: %s", strerror(-r));
                        return;
                }
        }
        (void) sd_event_source_set_enabled(power_daemon.kick, SD_EVENT_ONESHOT);
}

/* ---- the APML directory ------------------------------------------------------------------- */

static void apml_flag_all(struct daemon *d, bool only_with_file) {
        for (size_t i = 0; i < d->n_gpus; i++) {
                struct dgpu_power *p = d->gpus[i]->power;

                if (p && (!only_with_file || p->apml_file))
                        p->want |= WANT_APML;
        }
        schedule_kick(d);
}

static int on_apml(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        struct daemon *d = userdata;
        struct dgpu *g;

        if (ev->mask & IN_Q_OVERFLOW) {
                apml_flag_all(d, false);
                return 0;
        }
        if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) {
                if (power_daemon.apml) {
                        log_notice("the APML directory went away: watching it again when it "
                                   "is back");
                        power_daemon.apml = sd_event_source_disable_unref(power_daemon.apml);
                        power_daemon.apml_retry_usec = 0;
                        apml_flag_all(d, true);
                }
                return 0;
        }
        /* the agent's temporary files start with a dot; other names name no GPU */
        if (ev->len == 0 || ev->name[0] == '.')
                return 0;
        g = manager_find_gpu(d, ev->name);
        if (!g || !g->power)
                return 0;
        log_gpu(LOG_INFO, g->bdf, "APML file %s changed", ev->name);
        g->power->want |= WANT_APML;
        schedule_kick(d);
        return 0;
}

/* Watches <runtime dir>/apml/ (made if missing); tried again every 10 s until it works. */
static void apml_watch(struct daemon *d) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        char dir[256];
        int r;

        if (power_daemon.apml || !d->event || now < power_daemon.apml_retry_usec)
                return;
        power_daemon.apml_retry_usec = now + REAPPLY_INTERVAL_USEC;
        r = apml_dir(dir, sizeof(dir));
        /* the BMC agent's directory, maybe of its own uid: made if missing, owner left alone;
         * never watched through a symbolic link */
        if (r >= 0 && mkdir(dir, 0755) < 0 && errno != EEXIST) {
                r = -errno;
                if (r == -ENOENT) {
                        char rt[256];

                        r = runtime_dir(rt, sizeof(rt));
                        if (r >= 0)
                                r = runtime_dir_mkdir(rt);
                        if (r >= 0 && mkdir(dir, 0755) < 0 && errno != EEXIST)
                                r = -errno;
                }
        }
        if (r >= 0)
                r = sd_event_add_inotify(d->event, &power_daemon.apml, dir,
                                         IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                                                 IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF |
                                                 IN_ONLYDIR | IN_DONT_FOLLOW,
                                         on_apml, d);
        if (r < 0) {
                if (!power_daemon.apml_warned)
                        log_warning("cannot watch the APML directory %s: %s; its files count at "
                                    "the next change", dir, strerror(-r));
                power_daemon.apml_warned = true;
                return;
        }
        power_daemon.apml_warned = false;
        log_debug("watching %s for the BMC agent's APML files", dir);
}

/* ---- refresh --------------------------------------------------------------------------- */

/* enforce = no: an outside writer's cap is left alone and logged, once per value. */
static void report_outside(struct dgpu *g, struct dgpu_power *p) {
        uint64_t dev = p->device_uw / POWER_UW_PER_W;
        char w1[32], w2[32];

        if (p->outside_w == dev)
                return;
        p->outside_w = dev;
        (void) format_scaled_u64(p->device_uw, 6, w1, sizeof(w1));
        (void) format_scaled_u64(p->model_uw != AMDSMI_NA ? p->model_uw : p->applied_uw, 6, w2,
                                 sizeof(w2));
        log_gpu(LOG_NOTICE, g->bdf,
                "the device holds %s W, above the arbitrated %s W: an outside writer; left "
                "alone (enforce = no in amdsmid.conf)",
                w1, w2);
}

static char **power_refresh(struct dgpu *g, struct amdsmi_gpu *gpu) {
        struct dgpu_power *p = power_get(g);
        _cleanup_free_ struct power_view *v = malloc(sizeof(*v));
        char **changed = NULL;
        enum cap_lost lost;
        const char *src;
        uint64_t cap;
        bool first;

        if (!p || !v)
                return NULL;
        apml_watch(g->d);
        state_load_gpu(g, p);
        power_view_read_device(gpu, AMDSMI_POWER_READ_NO_METRICS, v);
        power_view_set_sources(v, g->bdf, &p->sources, p->applied_uw, p->applied_usec);

        cap = v->info.ppt0.cap.error == 0 ? v->info.ppt0.cap.uw : 0;
        if (cap != g->cap_uw) {
                g->cap_uw = cap;
                (void) strv_extend(&changed, "CapUw");
        }
        src = power_view_effective_source(v);
        if (free_and_strdup(&g->effective_source, src ? src : "") > 0)
                (void) strv_extend(&changed, "EffectiveSource");
        snprintf(p->binding_key, sizeof(p->binding_key), "%s",
                 v->expl_error == 0 && v->expl.binding == POWER_SOURCE_VM ? v->expl.binding_key
                                                                          : "");

        p->can_apply = power_control_can_apply(v->info.control);
        p->gim = v->info.control == AMDSMI_POWER_CONTROL_GIM;
        p->model_known = v->expl_error == 0 && v->expl.effective_uw != POWER_UW_UNKNOWN;
        p->model_uw = p->model_known ? v->expl.effective_uw : AMDSMI_NA;
        p->device_uw = v->info.ppt0.cap.error == 0 ? v->info.ppt0.cap.uw : AMDSMI_NA;
        p->default_uw = v->info.ppt0.def.error == 0 ? v->info.ppt0.def.uw : AMDSMI_NA;
        p->has_record = v->sources.host.present || v->sources.apml.present ||
                        v->sources.n_vms > 0 || p->applied_uw != AMDSMI_NA;
        p->apml_file = v->apml.state != APML_FILE_ABSENT;
        if (p->device_uw != AMDSMI_NA && p->device_uw / POWER_UW_PER_W != p->ignore_w)
                p->ignore_w = NO_WATTS; /* the limiter moved */

        first = !p->seen;
        p->seen = true;
        if (first)
                p->want |= WANT_CHECK;
        lost = cap_lost(p);
        if (!g->changing && !jobs_pending_for(g->d, g->bdf) && lost != CAP_HELD) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);

                /* seen again a while later: not an in-process change between its write and
                 * its commit */
                if (p->lost_since_usec == 0)
                        p->lost_since_usec = now;
                else if (now - p->lost_since_usec >= LOST_CONFIRM_USEC) {
                        if (lost == CAP_RESET)
                                p->want |= WANT_RESET;
                        else if (enforce_on(g))
                                p->want |= WANT_ENFORCE;
                        else
                                report_outside(g, p);
                }
        } else {
                p->lost_since_usec = 0;
                p->want &= ~(unsigned) (WANT_RESET | WANT_ENFORCE);
                if (lost == CAP_HELD)
                        p->outside_w = NO_WATTS;
        }
        /* never a job from here: the first enumeration comes before the recovery of
         * interrupted changes, which must not find the intent records of new ones */
        if (p->want)
                schedule_kick(g->d);
        return changed;
}

/* ---- methods ------------------------------------------------------------------------------ */

/* A string of the caller for a message: quoted when short and printable, else its length. */
static const char *shown(const char *s, char *buf, size_t size) {
        size_t n = strlen(s);
        bool printable = n <= 64;

        for (const char *c = s; printable && *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        printable = false;
        if (printable)
                snprintf(buf, size, "'%s'", s);
        else
                snprintf(buf, size, "of %zu bytes", n);
        return buf;
}

static int check_flags(uint64_t flags, sd_bus_error *error) {
        if (flags & ~AMDSMI_BUS_FLAGS_ALL)
                return bus_error_errno(error, -EINVAL, "unknown flags 0x%" PRIx64 " (known: 0x%" PRIx64 ")",
                                       flags & ~AMDSMI_BUS_FLAGS_ALL, (uint64_t) AMDSMI_BUS_FLAGS_ALL);
        return 0;
}

/* Adds one source of a call to @pj after checking it. @return 0 or an error (set). */
static int add_source(struct power_job *pj, const char *source, const char *key, const char *vf,
                      uint64_t uw, sd_bus_error *error) {
        bool set = pj->ch.kind == POWER_CHANGE_SET;
        enum power_source_kind kind;
        char b1[80];
        int r;

        /* ClearSource("damaged", ""): drop the state file's damaged records of the GPU */
        if (!set && strcmp(source, "damaged") == 0) {
                if (key[0] || vf[0])
                        return bus_error_errno(error, -EINVAL, "the damaged records take no key");
                if (pj->ch.damaged)
                        return bus_error_errno(error, -EINVAL, "damaged is given twice");
                pj->ch.damaged = true;
                return 0;
        }
        if (power_source_kind_from_string(source, &kind) < 0)
                return bus_error_errno(error, -EINVAL, "unknown power source %s (sources: host, "
                                       "vm, apml%s)", shown(source, b1, sizeof(b1)),
                                       set ? "" : "; damaged to drop damaged records");
        if (kind != POWER_SOURCE_VM && key[0])
                return bus_error_errno(error, -EINVAL, "the %s source takes no key (%s given)",
                                       source, shown(key, b1, sizeof(b1)));
        if (kind == POWER_SOURCE_VM && !power_vm_name_ok(key))
                return bus_error_errno(error, -EINVAL,
                                       "invalid VM name %s: 1 to %d bytes, no control characters",
                                       shown(key, b1, sizeof(b1)), POWER_KEY_MAX - 1);
        if (vf[0] && kind != POWER_SOURCE_VM)
                return bus_error_errno(error, -EINVAL, "a VF address goes with a vm source only");
        if (vf[0] && !pci_bdf_valid(vf))
                return bus_error_errno(error, -EINVAL,
                                       "invalid VF address %s: expected a PCI address such as "
                                       "0000:c1:02.0", shown(vf, b1, sizeof(b1)));
        if (set) {
                r = power_validate(uw);
                if (r == -ERANGE)
                        return bus_error_errno(error, r, "%s cap of %" PRIu64 " µW: too large "
                                               "(power1_cap takes at most 4294.967295 W)",
                                               source, uw);
                if (r < 0)
                        return bus_error_errno(error, r, "%s cap of %" PRIu64 " µW: a cap is at "
                                               "least 1 W (writing 0 only re-applies the current "
                                               "limit; ClearSource removes a source)", source, uw);
        }
        switch (kind) {
        case POWER_SOURCE_HOST:
                if (pj->ch.host)
                        return bus_error_errno(error, -EINVAL, "the host source is given twice");
                pj->ch.host = true;
                pj->ch.host_uw = uw;
                break;
        case POWER_SOURCE_APML:
                if (pj->ch.apml)
                        return bus_error_errno(error, -EINVAL, "the apml source is given twice");
                pj->ch.apml = true;
                pj->ch.apml_uw = uw;
                break;
        default:
                if (pj->ch.vm)
                        return bus_error_errno(error, -EINVAL, "one VM per call");
                pj->ch.vm = true;
                pj->ch.vm_uw = uw;
                snprintf(pj->vm_name, sizeof(pj->vm_name), "%s", key);
                pj->ch.vm_name = pj->vm_name;
                if (vf[0]) {
                        snprintf(pj->vf_bdf, sizeof(pj->vf_bdf), "%s", vf);
                        pj->ch.vf_bdf = pj->vf_bdf;
                }
                break;
        }
        return 0;
}

/* "host=600W, vm:web1=450W" or "host=none" for the intent and the history. */
static void requested(const struct power_job *pj, char *buf, size_t size) {
        const struct power_change *ch = &pj->ch;
        char w[32];
        size_t n = 0;

        buf[0] = '\0';
        if (ch->kind == POWER_CHANGE_APPLY)
                return;
#define ITEM(on, fmt, ...)                                                                       \
        do {                                                                                     \
                if ((on) && n < size)                                                            \
                        n += (size_t) snprintf(buf + n, size - n, "%s" fmt, n ? ", " : "",       \
                                               __VA_ARGS__);                                     \
        } while (0)
#define VAL(uw) (ch->kind == POWER_CHANGE_SET && format_scaled_u64(uw, 6, w, sizeof(w)) == 0 ? w : "none")
        ITEM(ch->host, "host=%s%s", VAL(ch->host_uw), ch->kind == POWER_CHANGE_SET ? "W" : "");
        ITEM(ch->vm, "vm:%s=%s%s", ch->vm_name, VAL(ch->vm_uw), ch->kind == POWER_CHANGE_SET ? "W" : "");
        ITEM(ch->apml, "apml=%s%s", VAL(ch->apml_uw), ch->kind == POWER_CHANGE_SET ? "W" : "");
        ITEM(ch->damaged, "%s", "damaged records dropped");
#undef VAL
#undef ITEM
}

/* polkit, one action after the other, for calls naming several kinds of source */
struct auth_chain {
        struct job *j;
        const char *actions[3];
        size_t n, i;
};

static void auth_chain_step(sd_bus_message *call, int r, const char *why, void *userdata) {
        struct auth_chain *a = userdata;
        struct job *j = a->j;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        if (r > 0) {
                a->i++;
                if (a->i + 1 < a->n) {
                        r = polkit_check(j->d, call, a->actions[a->i], auth_chain_step, a, NULL);
                        if (r >= 0)
                                return;
                        bus_error_errno(&error, r, "%s: cannot check the authorisation: %s",
                                        j->name, strerror(-r));
                } else {
                        const char *last = a->actions[a->i];

                        free(a);
                        r = job_authorise_and_submit(j, last); /* answers a denial itself */
                        if (r >= 0)
                                return;
                        bus_error_errno(&error, r, "cannot queue the change: %s", strerror(-r));
                        (void) sd_bus_reply_method_error(call, &error);
                        return;
                }
        } else if (r == 0)
                bus_error_errno(&error, -EACCES, "%s: %s", j->name, why);
        else
                bus_error_errno(&error, r, "%s: cannot check the authorisation: %s", j->name,
                                strerror(-r));
        log_full(LOG_NOTICE, j->bdfs && j->bdfs[0] ? j->bdfs[0] : NULL, j->change,
                 "%s by uid %d refused: %s", j->name, (int) j->uid,
                 error.message ? error.message : "denied");
        job_free(j);
        free(a);
        (void) sd_bus_reply_method_error(call, &error);
}

/* Authorises (every kind of source the call names) and queues the change. */
static int submit_change(sd_bus_message *m, struct dgpu *g, const char *method,
                         struct power_job *pj, uint64_t flags, sd_bus_error *error) {
        struct auth_chain *a;
        char what[512];
        struct job *j;
        int r;

        if (pj->ch.kind != POWER_CHANGE_APPLY && !pj->ch.host && !pj->ch.vm && !pj->ch.apml &&
            !pj->ch.damaged) {
                free(pj);
                return bus_error_errno(error, -EINVAL, "no source given");
        }
        requested(pj, what, sizeof(what));
        j = power_job_submit_new(g, m, method, pj, flags,
                                 pj->ch.kind == POWER_CHANGE_APPLY ? "power_apply"
                                                                   : "power_source",
                                 what[0] ? what : NULL);
        if (!j)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        a = calloc(1, sizeof(*a));
        if (!a) {
                job_free(j);
                return bus_error_errno(error, -ENOMEM, "out of memory");
        }
        a->j = j;
        if (pj->ch.kind == POWER_CHANGE_APPLY || pj->ch.host || pj->ch.damaged)
                a->actions[a->n++] = ACTION_HOST;
        if (pj->ch.vm)
                a->actions[a->n++] = ACTION_VM;
        if (pj->ch.apml)
                a->actions[a->n++] = ACTION_APML;
        if (a->n == 1 || (flags & AMDSMI_BUS_FLAG_DRY_RUN)) {
                const char *action = a->actions[0];

                free(a);
                r = job_authorise_and_submit(j, action);
        } else {
                r = polkit_check(j->d, m, a->actions[0], auth_chain_step, a, NULL);
                if (r < 0) {
                        job_free(j);
                        free(a);
                }
        }
        if (r < 0)
                return bus_error_errno(error, r, "cannot queue the change: %s", strerror(-r));
        return 1;
}

static int method_set_source(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        const char *source, *key;
        struct power_job *pj;
        uint64_t uw, flags;
        int r;

        r = sd_bus_message_read(m, "sstt", &source, &key, &uw, &flags);
        if (r < 0)
                return r;
        if ((r = check_flags(flags, error)) < 0)
                return r;
        pj = power_job_new(g, POWER_CHANGE_SET);
        if (!pj)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        r = add_source(pj, source, key, "", uw, error);
        if (r < 0) {
                free(pj);
                return r;
        }
        return submit_change(m, g, "SetSource", pj, flags, error);
}

static int method_set_vm_source(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        const char *key, *vf;
        struct power_job *pj;
        uint64_t uw, flags;
        int r;

        r = sd_bus_message_read(m, "sstt", &key, &vf, &uw, &flags);
        if (r < 0)
                return r;
        if ((r = check_flags(flags, error)) < 0)
                return r;
        pj = power_job_new(g, POWER_CHANGE_SET);
        if (!pj)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        r = add_source(pj, "vm", key, vf, uw, error);
        if (r < 0) {
                free(pj);
                return r;
        }
        return submit_change(m, g, "SetVmSource", pj, flags, error);
}

static int method_clear_source(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        const char *source, *key;
        struct power_job *pj;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "sst", &source, &key, &flags);
        if (r < 0)
                return r;
        if ((r = check_flags(flags, error)) < 0)
                return r;
        pj = power_job_new(g, POWER_CHANGE_CLEAR);
        if (!pj)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        r = add_source(pj, source, key, "", 0, error);
        if (r < 0) {
                free(pj);
                return r;
        }
        return submit_change(m, g, "ClearSource", pj, flags, error);
}

/* SetSources(a(ssst), t) and ClearSources(a(ss), t) */
static int sources_method(sd_bus_message *m, struct dgpu *g, bool set, sd_bus_error *error) {
        const char *member = set ? "(ssst)" : "(ss)", *inner = set ? "ssst" : "ss";
        struct power_job *pj = power_job_new(g, set ? POWER_CHANGE_SET : POWER_CHANGE_CLEAR);
        uint64_t flags;
        int r;

        if (!pj)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        r = sd_bus_message_enter_container(m, 'a', member);
        while (r >= 0) {
                const char *source, *key, *vf = "";
                uint64_t uw = 0;

                r = sd_bus_message_enter_container(m, 'r', inner);
                if (r <= 0)
                        break;
                r = set ? sd_bus_message_read(m, "ssst", &source, &key, &vf, &uw)
                        : sd_bus_message_read(m, "ss", &source, &key);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        break;
                r = add_source(pj, source, key, vf, uw, error);
                if (r < 0) {
                        free(pj);
                        return r;
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r >= 0)
                r = sd_bus_message_read(m, "t", &flags);
        if (r < 0) {
                free(pj);
                return r;
        }
        if ((r = check_flags(flags, error)) < 0) {
                free(pj);
                return r;
        }
        return submit_change(m, g, set ? "SetSources" : "ClearSources", pj, flags, error);
}

static int method_set_sources(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sources_method(m, userdata, true, error);
}

static int method_clear_sources(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sources_method(m, userdata, false, error);
}

static int method_apply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        struct power_job *pj;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(m, "t", &flags);
        if (r < 0)
                return r;
        if ((r = check_flags(flags, error)) < 0)
                return r;
        pj = power_job_new(g, POWER_CHANGE_APPLY);
        if (!pj)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        return submit_change(m, g, "Apply", pj, flags, error);
}

/* From what the last refresh saw (the periodic check, and every change, refresh the GPU):
 * a metrics document reads no power file for it. */
int power_daemon_sources(struct daemon *d, const char *bdf, struct power_sources *ret,
                         uint64_t *ret_applied_uw, uint64_t *ret_applied_usec) {
        struct dgpu *g = d ? manager_find_gpu(d, bdf) : NULL;
        struct dgpu_power *p = g ? power_get(g) : NULL;

        if (!p)
                return -ENODATA;
        state_load_gpu(g, p);
        *ret = p->sources;
        *ret_applied_uw = p->applied_uw;
        *ret_applied_usec = p->applied_usec;
        return 0;
}

int power_daemon_limit(void *userdata, struct amdsmi_gpu *gpu, struct power_limit *ret) {
        struct daemon *d = userdata;
        struct dgpu *g = d ? manager_find_gpu(d, amdsmi_gpu_get_bdf(gpu)) : NULL;
        struct dgpu_power *p = g ? power_get(g) : NULL;

        if (!g || !p || !p->seen)
                return -ENODATA;
        *ret = (struct power_limit){ .cap_uw = g->cap_uw ? g->cap_uw : AMDSMI_NA };
        snprintf(ret->source, sizeof(ret->source), "%s", g->effective_source ? g->effective_source : "");
        if (strcmp(ret->source, "vm") == 0)
                snprintf(ret->key, sizeof(ret->key), "%s", p->binding_key);
        return 0;
}

/* The GPU's object of `amdsmi power --json` from the model (@index: its "gpu"), problems
 * with single values in @rep. NULL on -ENOMEM. */
static json_object *explain_object(struct dgpu *g, struct amdsmi_gpu *gpu, struct report *rep,
                                   size_t index) {
        struct dgpu_power *p = power_get(g);
        _cleanup_free_ struct power_view *v = malloc(sizeof(*v));
        struct sample_pair *pair;
        json_object *o;

        if (!p || !v)
                return NULL;
        state_load_gpu(g, p);
        power_view_read_device(gpu, 0, v);
        power_view_set_sources(v, g->bdf, &p->sources, p->applied_uw, p->applied_usec);
        o = power_gpu_object(rep, index, gpu, v);
        if (!o)
                return NULL;
        pair = sampler_samples(g->d) ? samples_get(g->d->samples, g->bdf) : NULL;
        if (pair)
                (void) sample_pair_update(pair, gpu, sampler_interval_usec(g->d));
        power_gpu_object_add_limiters(o, v, pair);
        return o;
}

struct explain_read {
        struct dgpu *g;
        struct report *rep;
};

static json_object *explain_read_gpu(void *userdata, size_t index, struct amdsmi_gpu *gpu) {
        struct explain_read *k = userdata;

        return explain_object(k->g, gpu, k->rep, index);
}

static int method_explain(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;
        struct amdsmi_gpu *gpu = dgpu_handle(g);
        struct report rep = { .command = "power", .keep_field_errors = true };
        json_object *o;
        int r;

        if (!gpu)
                return bus_error_errno(error, -ENODEV, "GPU %s is gone", g->bdf);
        /* the limiters: two gpu_metrics samples (held back only after a long idle) */
        r = sampler_prepare(g->d, m, g->bdf, method_explain);
        if (r != 0)
                return r < 0 ? bus_error_errno(error, r, "out of memory") : 1;
        /* the object of the power document, "state" included */
        o = gpu_state_collect(&rep, g->d->ctx, amdsmi_gpu_get_index(gpu), gpu, explain_read_gpu,
                              &(struct explain_read){ g, &rep });
        report_clear(&rep);
        if (!o)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        return bus_reply_json(m, o);
}

int power_daemon_document(struct daemon *d, const struct doc_query *q, json_object **ret) {
        json_object *gpus = json_object_new_array();

        if (!gpus)
                return report_fail(q->report, -ENOMEM, "out of memory");
        FOREACH_GPU_IN_SET(q->set, i, gpu) {
                struct dgpu *g = manager_find_gpu(d, amdsmi_gpu_get_bdf(gpu));
                json_object *o;

                if (!g) {
                        /* a GPU amdsmid has no object for (yet): the device alone */
                        report_field_error_msg(q->report, (int) i, "power", -ENODEV,
                                               "amdsmid has no object for this GPU yet");
                        continue;
                }
                o = gpu_state_collect(q->report, q->set->ctx, i, gpu, explain_read_gpu,
                                      &(struct explain_read){ g, q->report });
                if (!o) {
                        json_object_put(gpus);
                        return report_fail(q->report, -ENOMEM, "out of memory");
                }
                json_object_array_add(gpus, o);
        }
        *ret = gpus;
        return 0;
}

static int property_cap_uw(sd_bus *bus, const char *path, const char *interface,
                           const char *property, sd_bus_message *reply, void *userdata,
                           sd_bus_error *error) {
        struct dgpu *g = userdata;

        return sd_bus_message_append(reply, "t", g->cap_uw);
}

static int property_effective_source(sd_bus *bus, const char *path, const char *interface,
                                     const char *property, sd_bus_message *reply,
                                     void *userdata, sd_bus_error *error) {
        struct dgpu *g = userdata;

        return sd_bus_message_append(reply, "s", g->effective_source ? g->effective_source : "");
}

static const sd_bus_vtable power_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("CapUw", "t", property_cap_uw, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("EffectiveSource", "s", property_effective_source, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("Explain", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
                                method_explain, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetSource",
                                SD_BUS_ARGS("s", source, "s", key, "t", uw, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_source,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ClearSource", SD_BUS_ARGS("s", source, "s", key, "t", flags),
                                SD_BUS_RESULT("s", json), method_clear_source,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetVmSource",
                                SD_BUS_ARGS("s", key, "s", vf_bdf, "t", uw, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_vm_source,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetSources", SD_BUS_ARGS("a(ssst)", sources, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_sources,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ClearSources", SD_BUS_ARGS("a(ss)", sources, "t", flags),
                                SD_BUS_RESULT("s", json), method_clear_sources,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Apply", SD_BUS_ARGS("t", flags), SD_BUS_RESULT("s", json),
                                method_apply, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* ---- desired state and recovery ------------------------------------------------------------ */

static void power_apply_desired(struct dgpu *g, const struct config_gpu *want,
                                const struct config_gpu *old) {
        struct dgpu_power *p = power_get(g);

        if (!p)
                return;
        if (old && want->enforce != old->enforce) {
                if (want->enforce)
                        log_gpu(LOG_INFO, g->bdf,
                                "enforce = yes: an outside writer's higher power cap is undone "
                                "(at most every %d s)",
                                CONFIG_ENFORCE_BACKOFF_S);
                else
                        log_gpu(LOG_INFO, g->bdf,
                                "enforce = no: an outside writer's higher power cap is reported "
                                "and left alone");
                /* one the last refresh reported: undone now; turned off: reported again */
                if (want->enforce && p->outside_w != NO_WATTS)
                        p->want |= WANT_ENFORCE;
                p->outside_w = NO_WATTS;
        }
        if (!old)
                p->want |= WANT_CHECK; /* start, re-plug: applied when something differs */
        else if (want->power_cap_set != old->power_cap_set ||
                 (want->power_cap_set && want->power_cap_uw != old->power_cap_uw))
                p->want |= WANT_CONFIG;
        else if (!(p->want & WANT_ENFORCE))
                return;
        /* queued now: at start READY=1 waits for amdsmid.conf's caps */
        power_kick(g->d, g);
}

static int power_recover(struct daemon *d, const struct intent *i) {
        struct dgpu *g;
        struct dgpu_power *p;
        struct amdsmi_gpu *gpu;
        char w[32];

        if (strcmp(i->change, "power_source") != 0 && strcmp(i->change, "power_apply") != 0 &&
            strcmp(i->change, "power_enforce") != 0)
                return 0;
        g = manager_find_gpu(d, i->gpu);
        p = g ? g->power : NULL;
        gpu = g ? dgpu_handle(g) : NULL;
        if (!g || !p || !gpu) {
                log_gpu(LOG_NOTICE, i->gpu, "interrupted %s change: the GPU is not here; its "
                        "cap is applied when it comes back", i->change);
                return 1;
        }
        /* what the device holds now against the state file (read again) */
        p->state_gen = 0;
        {
                _cleanup_strv_free_ char **names = power_refresh(g, gpu);
        }
        if (!p->can_apply || !p->model_known ||
            (p->device_uw != AMDSMI_NA &&
             p->device_uw / POWER_UW_PER_W == p->model_uw / POWER_UW_PER_W &&
             p->applied_uw != AMDSMI_NA &&
             p->applied_uw / POWER_UW_PER_W == p->model_uw / POWER_UW_PER_W &&
             !config_differs(g, p))) {
                log_full(LOG_NOTICE, g->bdf, i->change,
                         "interrupted %s change completed: the device holds the arbitrated cap "
                         "of the state file%s", i->change,
                         p->can_apply ? "" : " (nothing is applied here)");
                return 1;
        }
        if (format_scaled_u64(p->model_uw, 6, w, sizeof(w)) < 0)
                snprintf(w, sizeof(w), "?");
        log_full(LOG_NOTICE, g->bdf, i->change,
                 "interrupted %s change re-applied: the arbitrated cap of the state file, %s W",
                 i->change, w);
        if (!jobs_pending_for(d, g->bdf)) {
                p->want |= WANT_RECOVER;
                power_kick(d, g);
        }
        return 1;
}

const struct slice power_slice = {
        .interface = AMDSMI_BUS_IFACE_POWER,
        .vtable = power_vtable,
        .refresh = power_refresh,
        .refresh_often = true, /* a GPU reset restores the default cap, and nothing else moves */
        .apply_desired = power_apply_desired,
        .recover = power_recover,
        .free_gpu = power_free_gpu,
        .document_gpus = power_daemon_document,
};
