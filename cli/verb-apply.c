/* SPDX-License-Identifier: MIT */
/*
 * amdsmi apply [--check|--dry-run] [--profile NAME] and amdsmi reload: the desired state of
 * amdsmid.conf and its profiles.
 *
 * --dry-run and --check read the file and the GPUs themselves (no root, no amdsmid needed)
 * and show per GPU and setting what amdsmid does with it (fleet/profile-plan.c, the plan
 * amdsmid's GetDocument("apply") answers too); --check exits 0 when every setting is in sync
 * and 1 when one is not (the check mode of Ansible and mig-parted's assert). Without either,
 * amdsmid applies the whole file now (ApplyDesired), or with --profile NAME makes NAME the
 * active profile first (SetProfile: it writes the selector file); reload makes it re-read the
 * file and apply what changed (Reload, as SIGHUP).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdsmid-conf.h"
#include "bus-errors.h"
#include "cli.h"
#include "exit-codes.h"
#include "power-ops.h"
#include "power-state.h"
#include "profile-plan.h"

static const struct column_def apply_columns[] = {
        { "gpu", "GPU", "gpu", 0 },
        { "bdf", "BDF", "bdf", 0 },
        { "setting", "SETTING", "setting", 0 },
        { "now", "NOW", "now", 0 },
        { "desired", "DESIRED", "desired", 0 },
        { "unit", "UNIT", "unit", 0 },
        { "action", "ACTION", "action", 0 },
        { "message", "WHY", "message", 0 },
};

/* amdsmid.conf with its active profile, or --profile NAME's (source "option"). */
static int load_conf(struct cli *c, struct config **ret, char *path, size_t path_size) {
        _cleanup_(config_freep) struct config *conf = NULL;
        char err[768] = "";
        int r;

        r = config_load(NULL, &conf, err, sizeof(err));
        if (r < 0)
                return cli_fail(c, config_refusal_errno(r), "%s", err[0] ? err : strerror(-r));
        if (c->apply.profile) {
                r = config_select_profile(conf, c->apply.profile, CONFIG_PROFILE_OPTION, err,
                                          sizeof(err));
                if (r < 0)
                        return cli_fail(c, r, "--profile %s: %s", c->apply.profile, err);
        }
        if (config_path(path, path_size) < 0)
                snprintf(path, path_size, "amdsmid.conf");
        *ret = TAKE_PTR(conf);
        return 0;
}

/* --check: only the rows that differ (all of them in JSON) */
static json_object *drifted_rows(json_object *rows) {
        json_object *l = json_object_new_array();

        for (size_t k = 0; l && k < json_object_array_length(rows); k++) {
                json_object *o = json_object_array_get_idx(rows, k), *in = NULL;

                if (json_object_object_get_ex(o, "in_sync", &in) && json_object_get_boolean(in))
                        continue;
                json_object_array_add(l, json_object_get(o));
        }
        return l;
}

/* --dry-run and --check: the plan, read here (no root, no amdsmid needed). */
static int apply_plan(struct cli *c, bool check) {
        _cleanup_(config_freep) struct config *conf = NULL;
        struct state_store *state = NULL;
        struct profile_plan p = {};
        struct profile_plan_env env = {};
        struct columns cols = {};
        char path[4096];
        json_object *doc;
        int r;

        r = load_conf(c, &conf, path, sizeof(path));
        if (r < 0)
                return r;
        r = cli_open(c);
        if (r < 0)
                return r;
        cli_begin_sample(c);
        if (state_open(STATE_READ, 1000, &state) < 0)
                state = NULL;
        env.state = state;
        r = profile_plan_build(&p, conf, &c->set, &env);
        state_close(state);
        if (r < 0)
                return cli_fail(c, r, "out of memory");
        if (!conf->exists && c->format == OUTPUT_TABLE)
                fprintf(stderr, "amdsmi: no %s: nothing is desired\n", path);

        if (c->format == OUTPUT_JSON) {
                doc = cli_document(c, NULL);
                json_object_object_del(doc, "gpus");
                json_set(doc, "dry_run", json_object_new_boolean(!check));
                if (check)
                        json_set(doc, "check", json_object_new_boolean(true));
                profile_plan_document(doc, &p, conf, path, NULL);
                if (check) /* the status this command exits with: 0 in sync, 1 drifted */
                        json_set(doc, "exit_code",
                                 json_object_new_int(profile_plan_check_status(&p)));
                r = cli_print_json(c, doc);
                json_object_put(doc);
                c->json_printed = true;
        } else if (check && p.state == PROFILE_SYNC_SUCCESS) {
                if (c->format == OUTPUT_TABLE)
                        printf("in sync with %s%s%s%s\n", path, conf->profile[0] ? " (profile " : "",
                               conf->profile, conf->profile[0] ? ")" : "");
                else
                        r = columns_add_defs(&cols, apply_columns, ELEMENTSOF(apply_columns)) < 0
                                    ? -ENOMEM
                                    : cli_emit(c, json_object_new_array(), &cols);
                columns_free(&cols);
        } else {
                r = columns_add_defs(&cols, apply_columns, ELEMENTSOF(apply_columns));
                if (r >= 0)
                        r = cli_emit(c, check ? drifted_rows(p.rows) : json_object_get(p.rows),
                                     &cols);
                columns_free(&cols);
        }
        if (r < 0) {
                profile_plan_clear(&p);
                return r;
        }
        if (check) {
                /* the check-mode contract: 0 in sync, 1 drifted (the rows said how) */
                c->apply.drifted = profile_plan_check_status(&p) != 0;
                if (c->apply.drifted && c->format == OUTPUT_TABLE)
                        fprintf(stderr, "amdsmi: the GPUs differ from %s%s%s%s (sync state %s)\n",
                                path, conf->profile[0] ? ", profile " : "", conf->profile,
                                "", profile_sync_state_to_string(p.state));
                profile_plan_clear(&p);
                return 0;
        }
        r = p.worst;
        profile_plan_clear(&p);
        if (r < 0 && !c->report.error_message) {
                /* the exit status the change would have had; the rows said why */
                c->report.error_message = strdup("the plan has settings that cannot be applied now");
                c->json_printed = true;
        }
        return r;
}

static int call_manager(struct cli *c, const char *member, const char *types, uint64_t flags) {
        _cleanup_free_ char *message = NULL;
        json_object *reply = NULL;
        int r;

        if (!cli_daemon_running(c))
                return cli_fail(c, -ESRCH, "amdsmid is not running: it applies amdsmid.conf "
                                           "when it starts (systemctl start amdsmid)");
        r = cli_bus_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, member, 0, &reply,
                         &message, types, flags);
        json_object_put(reply);
        if (r < 0)
                return cli_fail(c, r, "%s: %s", member, message ? message : strerror(-r));
        return 0;
}

/* What amdsmid was asked, said once: a line, or with --json a document (apply_document). */
static int say_done(struct cli *c, const char *what) {
        json_object *doc;
        int r;

        if (c->format != OUTPUT_JSON) {
                printf("%s\n", what);
                return 0;
        }
        cli_begin_sample(c);
        doc = cli_document(c, NULL);
        if (!doc)
                return cli_fail(c, -ENOMEM, "out of memory");
        json_object_object_del(doc, "gpus");
        json_set(doc, "message", json_object_new_string(what));
        json_set(doc, "exit_code", json_object_new_int(0));
        r = cli_print_json(c, doc);
        json_object_put(doc);
        c->json_printed = true;
        return r;
}

/* apply --profile NAME: amdsmid makes NAME the active profile (its selector file) and applies
 * it. */
static int set_profile(struct cli *c) {
        _cleanup_free_ char *message = NULL;
        json_object *reply = NULL;
        char what[256];
        int r;

        if (!cli_daemon_running(c))
                return cli_fail(c, -ESRCH, "amdsmid is not running: it writes the selector file "
                                           "and applies the profile (systemctl start amdsmid)");
        r = cli_bus_call(c, AMDSMI_BUS_PATH, NULL, AMDSMI_BUS_IFACE_MANAGER, "SetProfile", 0,
                         &reply, &message, "st", c->apply.profile, UINT64_C(0));
        json_object_put(reply);
        if (r < 0)
                return cli_fail(c, r, "SetProfile: %s", message ? message : strerror(-r));
        snprintf(what, sizeof(what),
                 "amdsmid made %s the active profile and applies it: see amdsmi apply --check "
                 "and amdsmi history",
                 c->apply.profile);
        return say_done(c, what);
}

/* The "apply" document (amdsmi apply --check --json) for amdsmi metric --prometheus'
 * amdsmi_gpu_config_in_sync: amdsmid's when it runs, else the plan read here. A file that is
 * refused is said on stderr; its families are then left out. */
int apply_cli_collect(struct cli *c, json_object **ret) {
        _cleanup_(config_freep) struct config *conf = NULL;
        struct state_store *state = NULL;
        struct profile_plan p = {};
        struct profile_plan_env env = {};
        char path[4096], err[768] = "";
        json_object *doc = NULL;
        int r;

        *ret = NULL;
        r = cli_read_daemon_document(c, "apply", &doc);
        if (r != 0) {
                *ret = doc;
                return r < 0 ? r : 0;
        }
        r = config_load(NULL, &conf, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "amdsmi: amdsmid.conf: %s\n", err[0] ? err : strerror(-r));
                return r == -ENOMEM ? r : -EINVAL;
        }
        if (config_path(path, sizeof(path)) < 0)
                snprintf(path, sizeof(path), "amdsmid.conf");
        if (state_open(STATE_READ, 1000, &state) < 0)
                state = NULL;
        env.state = state;
        r = profile_plan_build(&p, conf, &c->set, &env);
        state_close(state);
        if (r < 0)
                return r;
        doc = json_object_new_object();
        if (!doc) {
                profile_plan_clear(&p);
                return -ENOMEM;
        }
        profile_plan_document(doc, &p, conf, path, NULL);
        profile_plan_clear(&p);
        *ret = doc;
        return 0;
}

int verb_apply(struct cli *c) {
        int r;

        if (c->apply.check && c->report.dry_run)
                return cli_fail(c, -EINVAL, "--check and --dry-run are mutually exclusive: "
                                            "--check compares, --dry-run plans");
        if (c->apply.check)
                return apply_plan(c, true);
        if (c->report.dry_run)
                return apply_plan(c, false);
        if (c->selection.n_items > 0)
                return cli_fail(c, -EINVAL, "amdsmi apply applies the whole amdsmid.conf: -g "
                                            "selects GPUs only with --check or --dry-run");
        if (c->apply.profile)
                return set_profile(c);
        r = call_manager(c, "ApplyDesired", "t", 0);
        if (r < 0)
                return r;
        return say_done(c, "amdsmid applies amdsmid.conf now: see amdsmi history and its journal");
}

int verb_reload(struct cli *c) {
        int r;

        if (c->selection.n_items > 0)
                return cli_fail(c, -EINVAL, "amdsmi reload re-reads the whole amdsmid.conf: it "
                                            "takes no -g");
        r = call_manager(c, "Reload", NULL, 0);
        if (r < 0)
                return r;
        return say_done(c, "amdsmid re-read amdsmid.conf and applies what changed");
}
