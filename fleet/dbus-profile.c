/* SPDX-License-Identifier: MIT */
/*
 * amdsmid's side of the named profiles (amdsmid.conf(5) PROFILES, amdsmid(8)):
 *
 *   Manager.Profile     (s, EMITS_CHANGE) the active profile, "" for none
 *   Manager.SyncState   (s, EMITS_CHANGE) success, pending, reload-required or failed: the
 *                       plan of fleet/profile-plan.c over every GPU, recomputed when a change
 *                       ends, at a reload and at the periodic check
 *   Manager.SetProfile(s name, t flags) -> s
 *                       makes @name the active profile ("" none): writes the selector file
 *                       atomically (root-owned, 0644; "" removes it), re-reads amdsmid.conf
 *                       and applies the whole desired state, as ApplyDesired; flags bit 0 (dry
 *                       run): only the plan. Answers the "apply" document. Authorised as
 *                       ApplyDesired (org.amdsmi1.partition.configure); an unknown profile is
 *                       InvalidArgument.
 *   GetDocument("apply") the document of `amdsmi apply --check --json`, from amdsmid's state:
 *                       its cached partition modes and its model of the power sources.
 *
 * The selector file is looked at in every periodic check (inode, size, mtime): a new version
 * reloads the configuration, as SIGHUP does, and says so in the log.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "amdsmid.h"
#include "amdsmid-conf.h"
#include "daemon-nfd.h"
#include "gpu-set.h"
#include "json-util.h"
#include "power-arbitration.h"
#include "profile-plan.h"
#include "report.h"
#include "runtime-dir.h"
#include "select.h"

static struct {
        struct config_selector_stamp seen; /* the selector file's version last read */
        bool seen_known;
        enum profile_sync_state state;     /* SyncState */
        bool state_known;
        char profile[CONFIG_PROFILE_NAME_MAX + 1]; /* Profile */
} fleet_daemon;

/* ---- the plan from amdsmid's state ------------------------------------------------------ */

static int partition_modes(void *userdata, struct amdsmi_gpu *gpu,
                           enum amdsmi_compute_mode *ret_compute,
                           enum amdsmi_memory_mode *ret_memory,
                           enum amdsmi_memory_mode *ret_pending) {
        struct dgpu *g = manager_find_gpu(userdata, amdsmi_gpu_get_bdf(gpu));
        enum amdsmi_compute_mode cm = AMDSMI_COMPUTE_UNKNOWN;
        enum amdsmi_memory_mode mm = AMDSMI_MEMORY_UNKNOWN, pending = AMDSMI_MEMORY_UNKNOWN;

        /* nothing cached yet: read as the CLI does */
        if (!g || ((!g->compute_mode || !g->compute_mode[0]) &&
                   (!g->memory_mode || !g->memory_mode[0])))
                return -ENODATA;
        if (g->compute_mode && g->compute_mode[0])
                (void) amdsmi_compute_mode_from_string(g->compute_mode, &cm);
        if (g->memory_mode && g->memory_mode[0])
                (void) amdsmi_memory_mode_from_string(g->memory_mode, &mm);
        if (g->pending_memory_mode && g->pending_memory_mode[0])
                (void) amdsmi_memory_mode_from_string(g->pending_memory_mode, &pending);
        *ret_compute = cm;
        *ret_memory = mm;
        *ret_pending = pending;
        return 0;
}

static int power_sources(void *userdata, const char *bdf, struct power_sources *ret,
                         uint64_t *ret_applied_uw, uint64_t *ret_applied_usec) {
        return power_daemon_sources(userdata, bdf, ret, ret_applied_uw, ret_applied_usec);
}

/* The plan of @c for the GPUs of @set. */
static int daemon_plan(struct daemon *d, const struct config *c, struct gpu_set *set,
                       struct profile_plan *ret) {
        struct profile_plan_env env = {
                .power_sources = power_sources,
                .partition_modes = partition_modes,
                .userdata = d,
        };

        return profile_plan_build(ret, c, set, &env);
}

static const char *config_file(const struct daemon *d, const struct config *c, char *buf,
                               size_t size) {
        if (c && c->path)
                return c->path;
        if (config_path(buf, size) < 0)
                snprintf(buf, size, "amdsmid.conf");
        return buf;
}

/* The "apply" document of @c for the GPUs of @set, added to @doc (report_document()'s). */
static int apply_document(struct daemon *d, const struct config *c, struct gpu_set *set,
                          const char *conf_error, json_object *doc) {
        struct profile_plan p = {};
        char path[4096];
        int r;

        r = daemon_plan(d, c, set, &p);
        if (r < 0)
                return r;
        json_object_object_del(doc, "gpus");
        profile_plan_document(doc, &p, c, config_file(d, c, path, sizeof(path)), conf_error);
        /* the document of amdsmi apply --check: its exit status, 0 in sync, 1 drifted */
        json_object_object_add(doc, "exit_code",
                               json_object_new_int(conf_error ? 1 : profile_plan_check_status(&p)));
        profile_plan_clear(&p);
        return 0;
}

int fleet_daemon_plan(struct daemon *d, struct gpu_set *set, struct profile_plan *ret) {
        int r = daemon_plan(d, d->config, set, ret);

        return r < 0 ? r : d->config_error[0] ? 1 : 0;
}

int fleet_daemon_apply_document(struct daemon *d, struct gpu_set *set, json_object *doc) {
        return apply_document(d, d->config, set, d->config_error[0] ? d->config_error : NULL,
                              doc);
}

/* ---- Profile and SyncState ---------------------------------------------------------------- */

static void emit(struct daemon *d, const char *property) {
        if (d->bus)
                (void) sd_bus_emit_properties_changed(d->bus, AMDSMI_BUS_PATH,
                                                      AMDSMI_BUS_IFACE_MANAGER, property, NULL);
}

static void sync_update(struct daemon *d);

void fleet_daemon_sync_update(struct daemon *d) {
        sync_update(d);
        daemon_nfd_update(d); /* the NFD labels follow Profile, SyncState and the GPUs */
}

const char *fleet_daemon_sync_state(struct daemon *d) {
        if (!fleet_daemon.state_known)
                sync_update(d);
        return profile_sync_state_to_string(fleet_daemon.state);
}

static void sync_update(struct daemon *d) {
        _cleanup_(selection_clear) struct selection sel = {};
        struct report rep = {};
        struct gpu_set set = {};
        struct profile_plan p = {};
        enum profile_sync_state state = PROFILE_SYNC_SUCCESS;
        const char *profile = d->config ? d->config->profile : "";

        if (strcmp(profile, fleet_daemon.profile) != 0) {
                snprintf(fleet_daemon.profile, sizeof(fleet_daemon.profile), "%s", profile);
                if (!profile[0])
                        log_info("active profile: none");
                else if (d->config->profile_source == CONFIG_PROFILE_SELECTOR)
                        log_info("active profile: %s (the selector file %s)", profile,
                                 d->config->selector_path ?: "?");
                else
                        log_info("active profile: %s (profile = in [daemon] of %s)", profile,
                                 d->config->path ?: "amdsmid.conf");
                emit(d, "Profile");
        }

        if (amdsmi_ctx_get_gpu_count(d->ctx) > 0 &&
            gpu_set_resolve(&set, d->ctx, &sel, &rep, 0) >= 0 &&
            daemon_plan(d, d->config, &set, &p) >= 0)
                state = p.state;
        profile_plan_clear(&p);
        gpu_set_clear(&set);
        report_clear(&rep);
        if (d->config_error[0])
                state = PROFILE_SYNC_FAILED;
        if (fleet_daemon.state_known && fleet_daemon.state == state)
                return;
        if (fleet_daemon.state_known)
                log_full(state == PROFILE_SYNC_FAILED ? LOG_WARNING : LOG_INFO, NULL, NULL,
                         "sync state: %s (was %s)", profile_sync_state_to_string(state),
                         profile_sync_state_to_string(fleet_daemon.state));
        fleet_daemon.state = state;
        fleet_daemon.state_known = true;
        emit(d, "SyncState");
}

void fleet_daemon_reloaded(struct daemon *d) {
        if (d->config && !d->config_error[0])
                fleet_daemon.seen = d->config->selector;
        else {
                char path[4096];

                if (config_selector_path(path, sizeof(path)) >= 0)
                        config_selector_stat(path, &fleet_daemon.seen);
        }
        fleet_daemon.seen_known = true;
        fleet_daemon_sync_update(d);
}

void fleet_daemon_check(struct daemon *d) {
        struct config_selector_stamp now;
        char path[4096];

        if (config_selector_path(path, sizeof(path)) < 0)
                return;
        config_selector_stat(path, &now);
        if (fleet_daemon.seen_known && !config_selector_stamp_equal(&now, &fleet_daemon.seen)) {
                log_info("%s %s: reloading the configuration", path,
                         !now.exists ? "was removed" : fleet_daemon.seen.exists ? "changed"
                                                                                  : "appeared");
                (void) manager_reload(d); /* fleet_daemon_reloaded() follows */
                return;
        }
        fleet_daemon_sync_update(d);
}

static int property_profile(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error) {
        struct daemon *d = userdata;

        return sd_bus_message_append(reply, "s", d->config ? d->config->profile : "");
}

static int property_sync_state(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error) {
        struct daemon *d = userdata;

        return sd_bus_message_append(reply, "s", fleet_daemon_sync_state(d));
}

/* ---- SetProfile ----------------------------------------------------------------------------- */

struct set_profile {
        struct daemon *d;
        char name[CONFIG_PROFILE_NAME_MAX + 1];
};

/* The "apply" document of every GPU under the configuration in force, as the reply. */
static int reply_apply(struct daemon *d, sd_bus_message *call, const struct config *c,
                       sd_bus_error *error) {
        _cleanup_(selection_clear) struct selection sel = {};
        struct report rep = { .command = "apply" };
        struct gpu_set set = {};
        json_object *doc = NULL;
        int r;

        snprintf(rep.hostname, sizeof(rep.hostname), "%s", d->hostname);
        report_begin_sample(&rep);
        if (amdsmi_ctx_get_gpu_count(d->ctx) > 0)
                (void) gpu_set_resolve(&set, d->ctx, &sel, &rep, 0);
        doc = report_document(&rep, NULL);
        r = doc ? apply_document(d, c, &set, NULL, doc) : -ENOMEM;
        gpu_set_clear(&set);
        report_clear(&rep);
        if (r < 0) {
                json_object_put(doc);
                return bus_error_errno(error, r, "out of memory");
        }
        return bus_reply_json(call, doc);
}

static void set_profile_authorised(sd_bus_message *call, int r, const char *why,
                                   void *userdata) {
        struct set_profile *sp = userdata;
        struct daemon *d = sp->d;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        char path[4096], text[CONFIG_PROFILE_NAME_MAX + 2];

        if (r == 0) {
                bus_error_errno(&error, -EACCES, "SetProfile: %s", why);
                goto fail;
        }
        if (r < 0) {
                bus_error_errno(&error, r, "cannot check the authorisation: %s", strerror(-r));
                goto fail;
        }
        r = config_selector_path(path, sizeof(path));
        if (r >= 0) {
                if (sp->name[0]) {
                        snprintf(text, sizeof(text), "%s\n", sp->name);
                        r = write_file_atomic(path, text, strlen(text), 0644);
                } else if (unlink(path) < 0 && errno != ENOENT)
                        r = -errno;
        }
        if (r < 0) {
                log_error("cannot write the selector file %s: %s", path, strerror(-r));
                bus_error_errno(&error, r, "cannot write the selector file %s: %s", path,
                                strerror(-r));
                goto fail;
        }
        log_info("%s: the profile %s was selected through SetProfile", path,
                 sp->name[0] ? sp->name : "(none)");
        r = manager_reload_apply(d, true);
        if (r < 0) {
                bus_error_errno(&error, config_refusal_errno(r), "%s",
                                d->config_error[0] ? d->config_error : strerror(-r));
                goto fail;
        }
        r = reply_apply(d, call, d->config, &error);
        if (r >= 0)
                return;
fail:
        (void) sd_bus_reply_method_error(call, &error);
}

static int method_set_profile(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct daemon *d = userdata;
        _cleanup_(config_freep) struct config *c = NULL;
        struct set_profile *sp;
        const char *name;
        uint64_t flags;
        char err[768] = "";
        int r;

        r = sd_bus_message_read(m, "st", &name, &flags);
        if (r < 0)
                return r;
        if (flags & ~(uint64_t) AMDSMI_BUS_FLAG_DRY_RUN)
                return bus_error_errno(error, -EINVAL,
                                       "SetProfile: unknown flags 0x%llx (bit 0: dry run)",
                                       (unsigned long long) flags);
        if (name[0] && !config_profile_name_valid(name))
                return bus_error_errno(error, -EINVAL,
                                       "SetProfile: bad profile name \"%s\" (1 to 63 letters, "
                                       "digits, '.', '_' or '-', a letter or digit at both ends)",
                                       name);
        /* amdsmid.conf as it is on disk (without the selector, which this replaces) */
        r = config_load_with_selector(NULL, NULL, &c, err, sizeof(err));
        if (r < 0)
                return bus_error_errno(error, config_refusal_errno(r),
                                       "the configuration on disk is refused (%s)",
                                       err[0] ? err : strerror(-r));
        r = config_select_profile(c, name, CONFIG_PROFILE_SELECTOR, err, sizeof(err));
        if (r < 0)
                return bus_error_errno(error, -EINVAL, "SetProfile: %s", err);
        if (flags & AMDSMI_BUS_FLAG_DRY_RUN)
                return reply_apply(d, m, c, error);

        sp = calloc(1, sizeof(*sp));
        if (!sp)
                return bus_error_errno(error, -ENOMEM, "out of memory");
        sp->d = d;
        snprintf(sp->name, sizeof(sp->name), "%s", name);
        r = polkit_check(d, m, "org.amdsmi1.partition.configure", set_profile_authorised, sp,
                         free);
        if (r < 0) {
                free(sp);
                return bus_error_errno(error, r, "cannot check the authorisation: %s",
                                       strerror(-r));
        }
        return 1;
}

const sd_bus_vtable fleet_manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Profile", "s", property_profile, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("SyncState", "s", property_sync_state, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("SetProfile", SD_BUS_ARGS("s", name, "t", flags),
                                SD_BUS_RESULT("s", json), method_set_profile,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};
