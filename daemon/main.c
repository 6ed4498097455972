/* SPDX-License-Identifier: MIT */
/*
 * amdsmid: the D-Bus system service that owns every change to the GPUs (amdsmid(8)).
 *
 * Start-up order: the library context and the first enumeration; the configuration; the
 * changes a crash interrupted (intent records) are completed or rolled back; the objects go
 * on the bus and the name is taken; the desired state is applied; READY=1.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <libudev.h>
#include <systemd/sd-daemon.h>

#include "amdsmid.h"
#include "libvirt-watch.h"
#include "amdsmid-conf.h"
#include "daemon-metrics.h"
#include "daemon-nfd.h"
#include "history.h"
#include "pid-file.h"
#include "runtime-dir.h"
#include "safe-open.h"

static void help(void) {
        printf("Usage: amdsmid [OPTIONS]\n"
               "\n"
               "The AMD Instinct GPU management service: owns every change to the GPUs and\n"
               "answers on the system bus as org.amdsmi1 (amdsmid(8)).\n"
               "\n"
               "Options:\n"
               "      --bus-introspect=INTERFACE|all\n"
               "                     print the D-Bus introspection XML and exit\n"
               "  -h, --help         show this help\n"
               "      --version      show the version\n"
               "\n"
               "Environment: DBUS_SYSTEM_BUS_ADDRESS, AMDSMI_SYSFS_ROOT, AMDSMI_DEV_ROOT,\n"
               "CONFIGURATION_DIRECTORY, STATE_DIRECTORY, RUNTIME_DIRECTORY, AMDSMI_DEBUG=1.\n");
}

/* ---- watching the hardware -------------------------------------------------------------- */

static int on_rescan(sd_event_source *s, void *userdata) {
        struct daemon *d = userdata;

        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        (void) manager_rescan(d);
        /* GPUs that appeared (or came back after a reset or re-plug) get the desired state */
        for (size_t i = 0; i < d->n_gpus; i++)
                if (d->gpus[i]->desired_pending && !d->gpus[i]->changing)
                        manager_apply_desired(d, d->gpus[i], false, NULL);
        return 0;
}

void manager_schedule_rescan(struct daemon *d) {
        if (d->rescan_defer)
                (void) sd_event_source_set_enabled(d->rescan_defer, SD_EVENT_ONESHOT);
}

static int on_uevent(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct daemon *d = userdata;
        struct udev_device *dev;
        bool any = false;

        /* drain: one rescan covers any number of events; a wake-up whose messages the
         * filter dropped (another subsystem) gives no device and no rescan */
        while ((dev = udev_monitor_receive_device(d->udev_monitor))) {
                log_debug("uevent %s %s", udev_device_get_action(dev) ?: "?",
                          udev_device_get_syspath(dev) ?: "?");
                udev_device_unref(dev);
                any = true;
        }
        if (any)
                manager_schedule_rescan(d);
        return 0;
}

static int udev_setup(struct daemon *d) {
        struct udev *udev;
        int r;

        /* a simulated tree sends no uevents: the periodic check covers it alone */
        if (getenv("AMDSMI_SYSFS_ROOT"))
                return 0;
        udev = udev_new();
        if (!udev)
                return -ENOMEM;
        d->udev_monitor = udev_monitor_new_from_netlink(udev, "udev");
        udev_unref(udev);
        if (!d->udev_monitor)
                return -errno ? -errno : -ENOMEM;
        /* hot-plug, driver bind/unbind and VFs come as pci events; partition switches
         * re-create the DRM and KFD devices */
        (void) udev_monitor_filter_add_match_subsystem_devtype(d->udev_monitor, "pci", NULL);
        (void) udev_monitor_filter_add_match_subsystem_devtype(d->udev_monitor, "drm", NULL);
        (void) udev_monitor_filter_add_match_subsystem_devtype(d->udev_monitor, "kfd", NULL);
        r = udev_monitor_enable_receiving(d->udev_monitor);
        if (r < 0)
                return r;
        return sd_event_add_io(d->event, &d->udev_source,
                               udev_monitor_get_fd(d->udev_monitor), EPOLLIN, on_uevent, d);
}

/* Where no uevents come (the simulator, a uevent lost): a cheap check of the PCI functions,
 * their drivers and the KFD topology's generation_id, a full rescan when they moved (and at
 * least every FULL_RESCAN_USEC, for what changes without moving them), and the power caps
 * (a GPU reset restores the default without any of those moving). */
#define FULL_RESCAN_USEC (30 * 1000000ULL)

static int on_poll(sd_event_source *s, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        unsigned ms = d->config ? d->config->poll_interval_ms : 2000;

        /* after a rescan, on_rescan() gives GPUs whose desired state could not be applied
         * yet another try; without one, here */
        if (!manager_check(d, FULL_RESCAN_USEC))
                for (size_t i = 0; i < d->n_gpus; i++)
                        if (d->gpus[i]->desired_pending && !d->gpus[i]->changing)
                                manager_apply_desired(d, d->gpus[i], false, NULL);
        /* a new selector file (Kubernetes, Ansible) reloads; SyncState follows the GPUs */
        fleet_daemon_check(d);
        return sd_event_source_set_time(s, usec + (uint64_t) ms * 1000);
}

/* ---- the PID file ------------------------------------------------------------------------ */

/* RUNTIME_DIRECTORY/amdsmid.pid while amdsmid owns its bus name: amdsmi(1) reads it to learn,
 * without the bus, that amdsmid may run, and which roots it reads (pid-file.h): its reads
 * ask amdsmid only when they are its own. Best effort: without the file the CLI reads
 * in-process, as when amdsmid does not run. */
static void write_pid_file(struct daemon *d) {
        char dir[PATH_MAX], sysfs[PATH_MAX], dev[PATH_MAX], buf[PID_FILE_MAX];
        int r, n = 0;

        r = runtime_dir(dir, sizeof(dir));
        if (r >= 0)
                r = runtime_dir_mkdir(dir);
        if (r >= 0 && (size_t) snprintf(d->pid_file, sizeof(d->pid_file), "%s/%s", dir,
                                        AMDSMID_PID_FILE) >= sizeof(d->pid_file))
                r = -ENAMETOOLONG;
        if (r >= 0)
                r = pid_file_resolve_roots(amdsmi_ctx_get_sysfs_root(d->ctx),
                                           amdsmi_ctx_get_dev_root(d->ctx), sysfs, dev);
        if (r >= 0)
                r = n = pid_file_format((uint32_t) getpid(), sysfs, dev, buf, sizeof(buf));
        if (r >= 0)
                r = write_file_atomic(d->pid_file, buf, (size_t) n, 0644);
        if (r < 0) {
                log_warning("cannot write the PID file in %s: %s (amdsmi reads without "
                            "amdsmid)", dir, strerror(-r));
                d->pid_file[0] = '\0';
        }
}

/* ---- signals ---------------------------------------------------------------------------- */

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;

        log_info("stopping (signal %u)%s", si->ssi_signo,
                 d->n_running ? ", after the changes under way" : "");
        (void) sd_notify(false, "STOPPING=1");
        d->exiting = true;
        health_events_sync(d); /* no KFD user left behind while the last changes end */
        return jobs_exit_when_idle(d);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;

        (void) sd_notify(false, "RELOADING=1");
        (void) manager_reload(d);
        (void) sd_notify(false, "READY=1");
        return 0;
}

/* ---- the desired state ------------------------------------------------------------------ */

static int load_config(struct daemon *d, struct config **ret) {
        char err[sizeof(d->config_error)] = "";
        int r;

        r = config_load(NULL, ret, err, sizeof(err));
        if (r < 0) {
                snprintf(d->config_error, sizeof(d->config_error), "%s",
                         err[0] ? err : strerror(-r));
                log_error("configuration refused: %s", d->config_error);
                return r;
        }
        d->config_error[0] = '\0';
        return 0;
}

int manager_reload(struct daemon *d) {
        return manager_reload_apply(d, false);
}

int manager_reload_apply(struct daemon *d, bool all) {
        struct config *c = NULL, *old;
        int r;

        r = load_config(d, &c);
        if (r < 0) {
                log_warning("the previous configuration stays in force");
                manager_invalidate(d);
                fleet_daemon_reloaded(d);
                return r;
        }
        if (c->exists)
                log_info("configuration reloaded from %s", c->path);
        else {
                char path[4096];

                if (config_path(path, sizeof(path)) < 0)
                        snprintf(path, sizeof(path), "amdsmid.conf");
                log_info("configuration reloaded: no %s, nothing desired", path);
        }
        old = d->config;
        d->config = c;
        if (old && old->health.events != c->health.events)
                log_info("[health] events changed: the KFD event fds follow the new setting");
        (void) manager_rescan(d); /* with health_events_sync(): [health] events in force */
        manager_apply_desired(d, NULL, !all, all ? NULL : old);
        config_free(old);
        manager_invalidate(d);
        daemon_metrics_config(d); /* [metrics] identity and textfile in force */
        daemon_nfd_config(d);     /* [kubernetes] nfd_features in force */
        fleet_daemon_reloaded(d);
        return 0;
}

static void recover_intents(struct daemon *d) {
        _cleanup_strv_free_ char **skipped = NULL;
        struct intent *l = NULL;
        size_t n = 0;
        int r;

        r = intent_list(&l, &n, &skipped);
        if (r < 0) {
                char dir[PATH_MAX] = "", msg[PATH_MAX + 64];

                (void) intent_dir(dir, sizeof(dir));
                log_warning("cannot read the intent records: %s",
                            safe_open_message(dir, r, msg, sizeof(msg)));
                return;
        }
        for (char **s = skipped; s && *s; s++) {
                struct stat st;

                if (lstat(*s, &st) == 0 && !S_ISREG(st.st_mode))
                        log_warning("intent record %s is %s, not a regular file: ignored", *s,
                                    file_type_name(st.st_mode));
                else
                        log_warning("intent record %s is malformed, ignored", *s);
        }
        for (size_t i = 0; i < n; i++) {
                static const struct slice *const slices[] = { &partition_slice, &power_slice,
                                                              &sriov_slice };
                char what[1024], old_value[512];
                int handled = 0;

                log_gpu(LOG_NOTICE, l[i].gpu,
                        "found an interrupted change %s (%s -> %s) from %s (PID %d)",
                        l[i].change, l[i].old_value ?: "?", l[i].new_value ?: "?", l[i].id,
                        (int) l[i].pid);
                /* what the slice says it did is the message of the one history record */
                log_capture_begin(what, sizeof(what));
                for (size_t k = 0; k < ELEMENTSOF(slices) && handled == 0; k++)
                        if (slices[k]->recover)
                                handled = slices[k]->recover(d, &l[i]);
                if (handled == 0)
                        log_gpu(LOG_WARNING, l[i].gpu,
                                "nothing knows how to recover a %s change; the desired state "
                                "is applied again", l[i].change);
                else if (handled < 0)
                        log_gpu(LOG_WARNING, l[i].gpu, "recovering the %s change failed: %s",
                                l[i].change, strerror(-handled));
                log_capture_end();
                snprintf(old_value, sizeof(old_value), "%s %s -> %s", l[i].change,
                         l[i].old_value ?: "?", l[i].new_value ?: "?");
                {
                        char message[1200];
                        struct history_entry e = {
                                .via = "amdsmid",
                                .uid = getuid(),
                                .pid = getpid(),
                                .gpu = l[i].gpu[0] ? l[i].gpu : NULL,
                                .change = "recovery",
                                .old_value = old_value,
                                .new_value = handled > 0 ? "recovered"
                                             : handled == 0 ? "not recovered"
                                                            : "failed",
                                .result = handled < 0 ? handled : 0,
                                .message = message,
                        };

                        snprintf(message, sizeof(message), "intent %s (PID %d): %s", l[i].id,
                                 (int) l[i].pid, what[0] ? what : "nothing to do");
                        r = history_append(&e, d->config ? d->config->history_max_bytes : 0);
                        if (r < 0)
                                log_gpu(LOG_WARNING, l[i].gpu,
                                        "cannot append the recovery to the history: %s",
                                        strerror(-r));
                }
                r = intent_end(&l[i]);
                if (r < 0)
                        log_warning("cannot remove the intent record %s: %s", l[i].id,
                                    strerror(-r));
        }
        intent_list_free(l, n);
}

/* ---- main ------------------------------------------------------------------------------- */

static int run(struct daemon *d) {
        sigset_t mask;
        uint64_t now;
        int r;

        r = sd_event_default(&d->event);
        if (r < 0)
                return r;
        (void) sd_event_set_watchdog(d->event, true);
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        /* a KFD event descriptor whose other end went away must fail a write with EPIPE, not
         * end amdsmid (as systemd's IgnoreSIGPIPE= does for the unit) */
        (void) signal(SIGPIPE, SIG_IGN);
        r = sd_event_add_signal(d->event, NULL, SIGTERM, on_sigterm, d);
        if (r >= 0)
                r = sd_event_add_signal(d->event, NULL, SIGINT, on_sigterm, d);
        if (r >= 0)
                r = sd_event_add_signal(d->event, NULL, SIGHUP, on_sighup, d);
        if (r < 0)
                return r;
        if (gethostname(d->hostname, sizeof(d->hostname) - 1) < 0)
                d->hostname[0] = '\0';

        r = amdsmi_ctx_new(&d->ctx);
        if (r < 0) {
                log_error("cannot create the library context: %s", strerror(-r));
                return r;
        }
        r = polkit_init(d);
        if (r >= 0)
                r = jobs_init(d);
        if (r >= 0)
                r = sd_event_add_defer(d->event, &d->rescan_defer, on_rescan, d);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->rescan_defer, SD_EVENT_OFF);
        if (r < 0)
                return r;
        (void) load_config(d, &d->config);
        if (!d->config) {
                /* a refused file: run without desired state, and say so in Describe() */
                r = config_parse_string("(none)", "", &d->config, NULL, 0);
                if (r < 0)
                        return r;
                d->config->exists = false;
                free(d->config->path);
                d->config->path = NULL;
        }
        r = manager_rescan(d);
        if (r < 0 && r != -ENOENT)
                log_warning("starting without GPUs: %s", strerror(-r));
        log_info("amdsmid %s: %zu GPU%s under %s", amdsmi_version(), d->n_gpus,
                 d->n_gpus == 1 ? "" : "s", amdsmi_ctx_get_sysfs_root(d->ctx));
        recover_intents(d);

        r = amdsmi_bus_errors_register();
        if (r >= 0)
                r = sd_bus_open_system(&d->bus);
        if (r < 0) {
                log_error("cannot connect to the system bus: %s", strerror(-r));
                return r;
        }
        r = manager_register(d, d->bus);
        if (r < 0) {
                log_error("cannot register the objects: %s", strerror(-r));
                return r;
        }
        r = sd_bus_attach_event(d->bus, d->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return r;
        r = sd_bus_request_name(d->bus, AMDSMI_BUS_NAME, 0);
        if (r < 0) {
                log_error("cannot own %s: %s", AMDSMI_BUS_NAME, strerror(-r));
                return r;
        }

        write_pid_file(d);
        /* the Prometheus families: the textfile, and /metrics on amdsmid-metrics.socket's
         * sockets (fleet/); neither stops amdsmid when it cannot start */
        daemon_metrics_config(d);
        (void) http_metrics_start(d);
        /* [health] events = yes: the KFD event fds from the start */
        health_events_sync(d);

        r = udev_setup(d);
        if (r < 0)
                log_warning("no udev monitor (%s): relying on the periodic check", strerror(-r));
        now = now_usec(CLOCK_MONOTONIC);
        r = sd_event_add_time(d->event, &d->poll_timer, CLOCK_MONOTONIC,
                              now + (uint64_t) d->config->poll_interval_ms * 1000, 10000,
                              on_poll, d);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(d->poll_timer, SD_EVENT_ON);

        manager_apply_desired(d, NULL, false, NULL);
        daemon_nfd_config(d);     /* the NFD labels: written from the next line on */
        fleet_daemon_reloaded(d); /* Profile, SyncState, the selector file's version */
        jobs_ready_check(d);
        /* the libvirt domains (a thread of its own; never on a hook's call path) */
        r = libvirt_watch_start(d, d->config->libvirt_uri);
        if (r < 0)
                log_warning("cannot watch the libvirt domains: %s", strerror(-r));
        r = sd_event_loop(d->event);
        libvirt_watch_stop();
        jobs_done(d);
        return r;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "bus-introspect", required_argument, NULL, 'I' },
                {}
        };
        struct daemon d = { .job_pipe = { -1, -1 } };
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'V':
                        printf("amdsmid %s\n", amdsmi_version());
                        return 0;
                case 'I':
                        return introspect_main(optarg) < 0 ? 1 : 0;
                default:
                        return 2;
                }
        if (optind < argc) {
                fprintf(stderr, "amdsmid: unexpected argument \"%s\" (see --help)\n",
                        argv[optind]);
                return 2;
        }
        log_setup();
        r = run(&d);
        if (r < 0)
                log_error("exiting: %s", strerror(-r));
        if (d.pid_file[0])
                (void) unlink(d.pid_file);
        http_metrics_stop(&d);
        daemon_metrics_done(&d);
        daemon_nfd_done(&d); /* the labels go with amdsmid */
        manager_done(&d);
        polkit_done(&d);
        config_free(d.config);
        if (d.udev_monitor)
                udev_monitor_unref(d.udev_monitor);
        sd_event_source_unref(d.udev_source);
        sd_event_source_unref(d.poll_timer);
        sd_event_source_unref(d.rescan_defer);
        sd_bus_flush_close_unref(d.bus);
        amdsmi_ctx_unref(d.ctx);
        sd_event_unref(d.event);
        return r < 0 ? 1 : 0;
}
