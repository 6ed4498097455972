/* SPDX-License-Identifier: MIT */
/*
 * amdsmid: the daemon's state and the interfaces between its framework (daemon/) and the
 * D-Bus glue of the feature slices (partition/, power/, sriov/, health/).
 *
 * Threads: everything runs on the sd-event loop of the main thread, except the body of a
 * change (struct job's run()), which runs on a worker thread with a library context of its
 * own. Reads never wait for a change: they answer from the GPU's cached properties, which
 * are refreshed on the main thread when a change ends or the hardware is seen to change.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include <amdsmi/amdsmi.h>

#include "bus-errors.h"
#include "macro.h"
#include "parse-util.h"

struct config;
struct doc_query;
struct job;
struct polkit_registry;
struct udev_monitor;

/* One GPU (PCI function) as the daemon exports it: /org/amdsmi1/gpu/<encoded BDF>. */
struct dgpu {
        struct daemon *d;
        char bdf[16];
        char *path;
        unsigned index;       /* amdsmi's GPU index (-g N) of the last enumeration */
        bool present;         /* seen by the last enumeration */
        bool changing;        /* a change runs or waits for this GPU */
        bool desired_pending; /* the desired state is to be applied again */
        unsigned busy;        /* jobs holding the GPU (0 or 1) */

        /* org.amdsmi1.Gpu */
        char *product;
        char *unique_id;  /* "0x" and 16 lower-case hex digits, "" when unknown */
        const char *role; /* amdsmi_role_to_string() */
        const char *driver;

        /* org.amdsmi1.Partition ("" when unknown or not supported) */
        char *compute_mode;
        char *memory_mode;
        char *pending_memory_mode;
        char **available_compute_modes; /* strv */
        /* partition/dbus-partition.c: the desired compute mode not reached yet (the GPU was
         * busy), tried again from refresh() at most every 30 s; a desired memory request
         * queued for the GPU's hive; the hive the GPU belongs to */
        bool partition_retry;
        uint64_t partition_retry_usec; /* the last attempt (CLOCK_MONOTONIC), 0: at once */
        bool partition_retry_warned;   /* the first failure was logged as a warning */
        bool partition_memory_queued;
        uint64_t partition_hive_id; /* the last non-zero XGMI hive ID seen */
        /* a GPU a failed driver reload left without a driver: bound again from the periodic
         * check, with a backoff, until it works or too many tries failed */
        unsigned rebind_failures;
        uint64_t rebind_usec; /* no try before (CLOCK_MONOTONIC) */
        bool driver_warned;   /* "has no driver" was logged */

        /* org.amdsmi1.Power */
        uint64_t cap_uw;          /* 0: unknown */
        char *effective_source;   /* "host", "vm", "apml", "default" or "" */
        struct dgpu_power *power; /* power/dbus-power.c: the state file's record, what
                                     the last refresh saw, re-applies wanted */

        /* org.amdsmi1.Performance (control/dbus-perf.c; NULL until first used) */
        struct dgpu_perf *perf;

        /* org.amdsmi1.Health (health/dbus-health.c; NULL until first used) */
        struct dgpu_health *health;

        /* org.amdsmi1.Sriov */
        uint32_t total_vfs;
        uint32_t num_vfs;
        const char *vf_config;         /* amdsmi_vf_config_to_string(), NULL until read */
        bool sriov_read;               /* read since the last change of the VFs or driver */
        unsigned sriov_seen_vfs;       /* the PF's VFs in the enumeration at that read */
        const char *sriov_seen_driver; /* the PF's driver at that read */

        /* GetMetrics(): the last document and when it was taken (CLOCK_MONOTONIC) */
        char *metrics_json;
        uint64_t metrics_usec;
        /* Describe(): this GPU's entry of the last document, shown while a change runs */
        json_object *describe_entry;
};

struct pending;

struct power_limit;
struct samples;

/* GetMetrics() and GetDocumentText("metric") of every GPU answer from a document at most
 * this old: ten clients polling at 10 Hz cost the GPU what one does. */
#define METRICS_MAX_AGE_USEC 50000

struct daemon {
        sd_event *event;
        sd_bus *bus;
        char *bus_address;      /* NULL: the system bus */
        struct amdsmi_ctx *ctx; /* the main thread's context (reads) */
        char hostname[256];

        struct dgpu **gpus; /* by the library's order */
        size_t n_gpus;
        uint64_t kfd_generation;
        sd_event_source *poll_timer;
        struct udev_monitor *udev_monitor;
        sd_event_source *udev_source;
        sd_event_source *rescan_defer; /* coalesces rescans */
        uint64_t rescan_usec;          /* CLOCK_MONOTONIC of the last rescan */

        struct config *config;
        char config_error[512]; /* why the file in force is not the one on disk */

        struct polkit_registry *polkit;
        struct health_events *health_events; /* health/dbus-health-events.c */

        /* jobs: waiting (FIFO) and running; finished jobs come back through a pipe */
        struct job *queue_head, *queue_tail;
        unsigned n_running;
        int job_pipe[2];
        sd_event_source *job_source;

        char *describe_json;     /* Describe()'s cached document */
        char pid_file[PATH_MAX]; /* written at start (main.c), "" when not */
        /* the BDF of each GPU index before the last enumeration that moved an index (a GPU
         * came or went), and when: GetDocument notes a -g N that names another GPU now */
        char **index_before;
        struct timespec index_changed_at;
        uint64_t index_changed_usec;
        char *metrics_json; /* Manager.GetMetrics()'s last document */
        uint64_t metrics_usec;
        /* GetDocumentText("metric") of every GPU: its last text and notes (document.c),
         * served again for METRICS_MAX_AGE_USEC as GetMetrics()'s document is */
        char *metric_text;
        char **metric_text_notes;
        uint64_t metric_text_usec;
        /* sampler.c: the last two gpu_metrics samples of each GPU */
        struct samples *samples; /* NULL until a first consumer */
        sd_event_source *sampler_timer;
        uint64_t sampler_used_usec;      /* the last consumer (CLOCK_MONOTONIC) */
        struct pending *sampler_pending; /* replies held for a second sample */
        bool sampler_replaying;
        bool sampler_always; /* a consumer that never stops ([metrics] textfile) */
        /* fleet/: the Prometheus families' collection and cache, the /metrics endpoint */
        struct daemon_metrics *metrics;
        struct http_metrics *http;
        bool ready; /* READY=1 sent */
        bool exiting;
};

/* daemon/log.c: structured logging to the journal (when stderr is the journal) or stderr.
 * Extra fields are "KEY=value" strings, NULL-terminated, after the format arguments is not
 * possible with printf checking, so GPU and change fields are separate parameters. */
void log_setup(void);
void log_full(int priority, const char *gpu, const char *change, const char *format, ...)
        _printf_(4, 5);
/* log_gpu() with one more journal field @field ("KEY=value", e.g. "HEALTH=warning"; on stderr
 * only the message shows) */
void log_gpu_field(int priority, const char *gpu, const char *field, const char *format, ...)
        _printf_(4, 5);
#define log_debug(...) log_full(LOG_DEBUG, NULL, NULL, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, NULL, NULL, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, NULL, NULL, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, NULL, NULL, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, NULL, NULL, __VA_ARGS__)
#define log_gpu(prio, gpu, ...) log_full(prio, gpu, NULL, __VA_ARGS__)

/* daemon/sampler.c: the telemetry sampler. A method that shows limiters calls
 * sampler_prepare() first: 0, build the reply now (the samples are there); 1, the reply is
 * held and @fn is called again with the same message (and the GPU of @bdf, or the daemon for
 * NULL) once the samples are there; or a negative errno. */
typedef int (*sampler_reply_fn)(sd_bus_message *m, void *userdata, sd_bus_error *error);
int sampler_prepare(struct daemon *d, sd_bus_message *m, const char *bdf, sampler_reply_fn fn);
/* The samples (allocated on first use; NULL on -ENOMEM). */
struct samples *sampler_samples(struct daemon *d);
/* Keeps the sampler running for a few more periods. */
void sampler_use(struct daemon *d);
/* [metrics] interval_ms in µs */
uint64_t sampler_interval_usec(struct daemon *d);
void sampler_done(struct daemon *d);

/* power/dbus-power.c: what the power limiter of @gpu ran against, from amdsmid's model
 * (c->power_limit of the documents amdsmid builds; c->power_limit_userdata is the daemon) */
int power_daemon_limit(void *userdata, struct amdsmi_gpu *gpu, struct power_limit *ret);

/* daemon/manager.c */
int manager_register(struct daemon *d, sd_bus *bus); /* the vtables on @bus */
void manager_done(struct daemon *d);
/* Re-enumerates and updates the objects (added, removed, properties). @return 0 or -errno. */
int manager_rescan(struct daemon *d);
/* Asks for a rescan soon (coalesced; from any main-thread context). */
void manager_schedule_rescan(struct daemon *d);
/* The periodic check: a rescan when the devices changed (amdsmi_ctx_check_devices()) or
 * the last one is older than @full_usec, else only the refreshes that must run often (the
 * slices' refresh_often: a power cap a GPU reset lost). */
bool manager_check(struct daemon *d, uint64_t full_usec); /* true: a rescan comes */
/* Refreshes one GPU's cached properties from @gpu (a handle of d->ctx) and emits
 * PropertiesChanged for what changed. */
void manager_refresh_gpu(struct dgpu *g, struct amdsmi_gpu *gpu, bool emit);
struct dgpu *manager_find_gpu(struct daemon *d, const char *bdf);
/* @g and the other GPUs of its XGMI hive (@g alone without one), @g first: what a driver
 * reload or a GPU reset takes. The hive IDs are the cached ones: a GPU under change may have
 * no KFD nodes (and so no hive ID) for a while. @return 0 or -ENOMEM. */
int manager_hive_bdfs(struct dgpu *g, char ***ret);
/* The GPU whose object @path is (NULL if none). */
struct dgpu *manager_gpu_from_path(struct daemon *d, const char *path);
/* Describe()'s document (cached until manager_invalidate()). @return 0 or -ENOMEM. */
int manager_describe(struct daemon *d, const char **ret);
/* Describe()'s document is rebuilt on the next call. */
void manager_invalidate(struct daemon *d);
/* Applies the desired state of the configuration to @g (NULL: every GPU). */
void manager_apply_desired(struct daemon *d, struct dgpu *g, bool only_changed,
                           const struct config *old);
int manager_reload(struct daemon *d); /* SIGHUP and Reload() */
/* The same; @all: then applies the whole desired state (SetProfile), not only what changed. */
int manager_reload_apply(struct daemon *d, bool all);

/* The library handle of @g in d->ctx (NULL when it vanished). */
struct amdsmi_gpu *dgpu_handle(struct dgpu *g);
/* Emits PropertiesChanged for @interface's @names (NULL-terminated). */
void dgpu_emit_changed(struct dgpu *g, const char *interface, char **names);

/* Fills @error from a negative errno and a message (the one errno <-> name table).
 * @return @r. */
/* While set, the text of every log message of priority NOTICE or above is also appended to
 * @buf ("; "-separated): the record of what a step did, e.g. an intent's recovery. */
void log_capture_begin(char *buf, size_t size);
void log_capture_end(void);

int bus_error_errno(sd_bus_error *error, int r, const char *format, ...) _printf_(3, 4);
/* Answers @call with the string @s (a JSON document): like sd_bus_reply_method_return(call,
 * "s", s), without sd-bus's byte-by-byte UTF-8 check when @s is plain ASCII (most documents;
 * a 24 KiB metrics document spent more in that check than in being built). */
int bus_reply_string(sd_bus_message *call, const char *s);
/* Appends @s (type s) to @m: copied as it is when ASCII (a large JSON document), else checked
 * by sd-bus. */
int bus_append_text(sd_bus_message *m, const char *s);
/*
 * The a{sv} of options at the current position of @m: @fn(@m, key, @userdata, @error) for each
 * entry, with @m at the entry's variant, which @fn enters and reads (this exits it). @fn names
 * a bad key or value in @error and returns its negative errno; that ends the loop.
 */
typedef int (*bus_option_fn)(sd_bus_message *m, const char *key, void *userdata,
                             sd_bus_error *error);
int bus_read_options(sd_bus_message *m, bus_option_fn fn, void *userdata, sd_bus_error *error);
/* Answers @call with the document @doc on one line (taken; NULL: -ENOMEM). */
int bus_reply_json(sd_bus_message *call, json_object *doc);

/* daemon/job.c: a change. Created by a slice's method handler, run on a worker thread. */
struct job {
        struct daemon *d;
        sd_bus_message *call; /* the method call to answer (NULL: the daemon's own) */
        char *name;           /* "SetComputeMode", for logs */
        char **bdfs;          /* the GPUs it changes (all held while it runs) */
        uint64_t flags;       /* AMDSMI_BUS_FLAG_* */
        bool kfd_exclusive;   /* runs alone among such jobs (a partition change
                                 rebuilds the KFD topology of every GPU) */

        /* the audit record: filled in by the creator (old/new may be NULL) */
        char *change; /* "compute_mode", ... (history_entry.change) */
        char *old_value;
        char *new_value;
        uid_t uid;
        pid_t pid;
        char *sender;

        /* Runs on a worker thread with @ctx, a new context already enumerated; must not touch
         * the daemon's state. Sets j->reply (the JSON document answered) and may set
         * j->message (one line for the log and the history). @return 0 or -errno. */
        int (*run)(struct job *j, struct amdsmi_ctx *ctx);
        /* Optional: on the main thread after run(), before the reply (refresh, signals). */
        void (*finish)(struct job *j);
        void *userdata;
        void (*free_userdata)(void *userdata);

        /* results */
        int r;
        json_object *reply;
        char *message;

        /* framework */
        struct job *next;
        bool running;
        bool record; /* history and intent records (not for dry runs) */
        bool has_intent;
        char intent_id[40];
        uint64_t start_usec;
};

/* A new job for the method call @call (may be NULL), changing the GPUs @bdfs. The caller's
 * uid, pid and unique name are taken from @call. */
struct job *job_new(struct daemon *d, sd_bus_message *call, const char *name,
                    const char *const *bdfs, size_t n_bdfs, uint64_t flags);
struct job *job_free(struct job *j);
/* Sets the audit fields (copies). */
int job_set_change(struct job *j, const char *change, const char *old_value, const char *new_value);
/* Queues @j (taken): it runs when none of its GPUs is held by another job, in submission
 * order per GPU; the call is answered when it ends. @return 0 or -errno (j freed). */
int job_submit(struct job *j);
/*
 * For method handlers: submits @j (taken) after polkit allowed @action for the caller (a dry
 * run needs no authorisation); a denial answers org.amdsmi1.Error.PermissionDenied.
 * @return 1 (the call is answered later: return it from the handler) or a negative errno
 * (nothing answered yet; j freed).
 */
int job_authorise_and_submit(struct job *j, const char *action);
int jobs_init(struct daemon *d);
/* Stopping (d->exiting): once no change runs, answers the waiting ones (refused) and ends
 * the event loop. */
int jobs_exit_when_idle(struct daemon *d);
void jobs_done(struct daemon *d);
/* Whether a job is queued or runs for @bdf. */
bool jobs_pending_for(struct daemon *d, const char *bdf);
/* Sends READY=1 when no job is left (the desired state applied at start). */
void jobs_ready_check(struct daemon *d);

/* daemon/polkit.c: asynchronous authorisation of a method call. */
typedef void (*polkit_fn)(sd_bus_message *call, int r, const char *why, void *userdata);
/*
 * Checks whether the sender of @call may do @action: root is allowed at once, everyone else
 * is asked of polkit (org.freedesktop.PolicyKit1), allowing interaction when the call allows
 * it; no polkit on the bus means denied. @fn is called exactly once with r = 1 (allowed),
 * 0 (denied, @why says why) or a negative errno, possibly before polkit_check() returns.
 * @return 0 (fn called or will be) or a negative errno (fn not called).
 */
int polkit_check(struct daemon *d, sd_bus_message *call, const char *action, polkit_fn fn,
                 void *userdata, void (*free_userdata)(void *));
int polkit_init(struct daemon *d);
void polkit_done(struct daemon *d);

/* The slices' interfaces on the GPU objects (partition/, power/, sriov/). Each refresh()
 * fills its part of struct dgpu from the library and returns the property names that changed
 * (a strv, NULL for none). */
struct config_gpu;
struct intent;
struct slice {
        const char *interface;
        const sd_bus_vtable *vtable;
        char **(*refresh)(struct dgpu *g, struct amdsmi_gpu *gpu);
        /* refresh also runs at every periodic check, not only when the devices changed
         * (cheap reads only: never one that may wake the GPU) */
        bool refresh_often;
        /* Optional: runs at every periodic check that finds the devices unchanged, for each
         * GPU (cheap: from the cached properties; may queue jobs). */
        void (*check)(struct dgpu *g, struct amdsmi_gpu *gpu);
        /* Optional: brings @g to what the configuration desires (@want; @old: what the
         * previous configuration desired, NULL at start, after a reset or a re-plug), queuing
         * jobs as needed; keys equal in @want and @old are left alone. */
        void (*apply_desired)(struct dgpu *g, const struct config_gpu *want,
                              const struct config_gpu *old);
        /* Optional: a change of this slice that a crash interrupted (an intent record of
         * one of its change names): complete or roll back, log which. @return 1 if it was
         * this slice's, 0 if not, or -errno. */
        int (*recover)(struct daemon *d, const struct intent *i);
        /* Optional: frees the slice's part of @g. */
        void (*free_gpu)(struct dgpu *g);
        /* Optional: methods the slice adds to org.amdsmi1.Manager (userdata: the daemon). */
        const sd_bus_vtable *manager_vtable;
        /* Optional: the "gpus" of the slice's read verb for Manager.GetDocument() (document.c):
         * one object per GPU of @q's set, problems with single values in @q's report.
         * @return 0 and the array in *ret, or a negative errno (reported). */
        int (*document_gpus)(struct daemon *d, const struct doc_query *q, json_object **ret);
};
extern const struct slice partition_slice, power_slice, sriov_slice, health_slice;
extern const struct slice perf_slice; /* control/dbus-perf.c */

/* health/dbus-health.c: the Health interface's state of a GPU (g->health), and what the event
 * stream (health/dbus-health-events.c) hands to it. health_daemon_event() emits
 * org.amdsmi1.Health.Event(@kind, @json) on @g's object; health_daemon_reset_seen() records a
 * GPU reset (CLOCK_BOOTTIME µs, the kernel's cause or NULL) for the verdict's reset window. */
struct dgpu_health;
void health_daemon_event(struct dgpu *g, const char *kind, const char *json);
void health_daemon_reset_seen(struct dgpu *g, uint64_t boottime_usec, const char *cause);
/* The event stream of @g is followed (@on) or not any more, since @boottime_usec: resets are
 * known to the verdict only over a window the stream was followed for. */
void health_daemon_following(struct dgpu *g, bool on, uint64_t boottime_usec);
/* health/dbus-health-events.c: the KFD event stream (the SMI event fds, held while someone
 * subscribes, [health] events of amdsmid.conf). health_events_sync() opens or closes the fds
 * as wanted now (after a rescan, a reload, a subscriber's change); pause() closes them before
 * a change of amdsmid's own that needs no KFD user (kfd_exclusive jobs), resume() after it. */
struct health_events;
extern const sd_bus_vtable health_events_manager_vtable[];
void health_events_sync(struct daemon *d);
void health_events_pause(struct daemon *d, const char *reason);
void health_events_resume(struct daemon *d);
unsigned health_events_subscribers(struct daemon *d);
void health_events_done(struct daemon *d);
extern const sd_bus_vtable gpu_vtable[], manager_vtable[];
/* control/dbus-reset.c: Gpu.Reset and Gpu.ResetWithTimeout (on the Gpu interface) */
extern const sd_bus_vtable reset_gpu_vtable[];
/* daemon/document.c: Manager.GetDocument() */
extern const sd_bus_vtable document_manager_vtable[];
/* The document of the read verb @v for the selection @sel, as GetDocument answers @m (polkit
 * asked for the privileged parts; the sampler's samples fresh first): for a slice's own
 * method with fixed arguments. @return 0 with *@ret_doc and *@ret_notes (an array, or NULL);
 * 1 when @again is called with @m later; a negative errno with @error set. */
struct doc_verb;
struct selection;
const struct doc_verb *document_find_verb(const char *verb);
int document_build_for(struct daemon *d, sd_bus_message *m, const struct doc_verb *v,
                       struct selection *sel, sampler_reply_fn again, json_object **ret_doc,
                       json_object **ret_notes, sd_bus_error *error);
/* daemon/document.c, for amdsmid's own readers (fleet/daemon-metrics.c): the document of the
 * read verb @verb (GetDocument's verbs) for every GPU, as root, built as GetDocument builds it
 * (metric and power from the sampler's samples as they are: nothing waits for a second one;
 * notes under "notes"), without opening a device node (static: no firmware versions). @return 0 and
 * the document in *ret, -EINVAL for an unknown verb, or a negative errno. */
int document_build_all(struct daemon *d, const char *verb, json_object **ret);
/* daemon/document.c: adds to @rep a note per index of @sel that names another GPU than before
 * the last enumeration that moved the indexes (a GPU came or went, in the last hour):
 * GetDocument()'s and CheckIndexes()'s. */
struct report;
struct selection;
void note_moved_indexes(struct daemon *d, const struct selection *sel, struct report *rep);
/* The slices' document_gpus */
int partition_daemon_document(struct daemon *d, const struct doc_query *q, json_object **ret);
int power_daemon_document(struct daemon *d, const struct doc_query *q, json_object **ret);
int sriov_daemon_document(struct daemon *d, const struct doc_query *q, json_object **ret);
/* health/dbus-health.c: `amdsmi health` with amdsmid's thresholds, CE-rate window and known
 * resets (a fresh sample of each GPU, which the properties follow) */
int health_daemon_document(struct daemon *d, const struct doc_query *q, json_object **ret);
/* The RAS sample of @gpu taken at the last periodic check (struct doc_query's ras_sample;
 * @userdata: the daemon). @return 0, or -ENOENT: none yet. */
struct health_sample;
int health_daemon_ras_sample(void *userdata, struct amdsmi_gpu *gpu, struct health_sample *ret);

/* power/dbus-power.c, for the VM provisioning of sriov/dbus-vm.c: on a worker thread (a job
 * holding @pf), sets (@uw) or clears (@uw AMDSMI_NA) the vm source @vm (VF @vf, may be NULL)
 * of the PF @pf and applies the arbitrated cap, as SetVmSource / ClearSource do; the GPU's
 * change document in *ret_entry (also on failure, when there is one). Then, on the main
 * thread, power_vm_done() brings the Power properties up to date. */
struct power_outcome;
int power_vm_run(struct amdsmi_ctx *ctx, const char *pf, const char *vm, const char *vf,
                 uint64_t uw, bool dry_run, const char *setter, json_object **ret_entry,
                 struct power_outcome *out);
void power_vm_done(struct daemon *d, const char *pf);

/* sriov/dbus-vm.c: the VM reservations of PrepareVm / ReleaseVm. vm_pf_holder(): 1 when a
 * domain holds a VF of @pf (its name and that VF in *ret_name, *ret_vf), -EUCLEAN when a
 * reservation that cannot be read names @pf (its key and what is wrong in *ret_name,
 * *ret_vf), else 0. */
extern const sd_bus_vtable vm_manager_vtable[];
int vm_pf_holder(const char *pf, const char **ret_name, const char **ret_vf);
void vm_recover(const struct intent *i);
/* What libvirt shows (sriov/dbus-libvirt-watch.c): the domains running now, a domain gone. */
struct watch_domain;
void vm_reconcile(struct daemon *d, const struct watch_domain *doms, size_t n);
void vm_domain_gone(struct daemon *d, const char *uuid, const char *name);

/* power/dbus-power.c: the power sources amdsmid keeps for @bdf (its copy of the state file's
 * record) and the applied record (AMDSMI_NA: none), for the plan (fleet/profile-plan.h).
 * @return 0, or -ENODATA (no such GPU). */
struct power_sources;
int power_daemon_sources(struct daemon *d, const char *bdf, struct power_sources *ret,
                         uint64_t *ret_applied_uw, uint64_t *ret_applied_usec);

/* fleet/dbus-profile.c: the profiles (Manager.Profile, SyncState, SetProfile).
 * fleet_daemon_apply_document() adds to @doc (report_document()'s) what GetDocument("apply")
 * answers for the GPUs of @set; fleet_daemon_sync_update() recomputes SyncState (and Profile)
 * and emits PropertiesChanged for what changed: when a change ends; fleet_daemon_reloaded()
 * after every (re)load of the configuration; fleet_daemon_check() at the periodic check (the
 * selector file changed: a reload). */
struct gpu_set;
extern const sd_bus_vtable fleet_manager_vtable[];
/* process/dbus-process.c: Manager.ListProcesses */
extern const sd_bus_vtable process_manager_vtable[];
/* topology/dbus-topology.c: Manager.GetTopology() */
extern const sd_bus_vtable topology_manager_vtable[];
/* doctor/dbus-doctor.c: Manager.Doctor(); the doctor's view of amdsmid's plan (struct
 * doc_query's doctor_plan) */
struct profile_plan;
extern const sd_bus_vtable doctor_manager_vtable[];
int doctor_daemon_plan(void *userdata, struct gpu_set *set, struct profile_plan *ret);
int fleet_daemon_apply_document(struct daemon *d, struct gpu_set *set, json_object *doc);
void fleet_daemon_sync_update(struct daemon *d);
void fleet_daemon_reloaded(struct daemon *d);
void fleet_daemon_check(struct daemon *d);
/* SyncState's value now ("success", ...; computed on first use). */
const char *fleet_daemon_sync_state(struct daemon *d);
/* amdsmid's plan of its configuration in force for the GPUs of @set (the doctor's):
 * @return 0, 1 (the file on disk is refused), or < 0. */
int fleet_daemon_plan(struct daemon *d, struct gpu_set *set, struct profile_plan *ret);

/* daemon/introspect.c: amdsmid --bus-introspect */
int introspect_main(const char *what);

/* daemon/util: strv helpers (strv_extend() is lib/util's, parse-util.h) */
bool strv_contains(char *const *l, const char *s);
bool strv_equal(char **a, char **b);
/* Replaces *dst with a copy of @src when they differ; @return 1 if it changed, 0, -ENOMEM. */
int free_and_strdup(char **dst, const char *src);
uint64_t now_usec(clockid_t clock);
