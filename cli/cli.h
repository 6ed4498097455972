/* SPDX-License-Identifier: MIT */
/* State shared by main() and the verbs of amdsmi(1). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#include "bus.h"
#include "change.h"
#include "gpu-set.h"
#include "macro.h"
#include "output.h"
#include "report.h"
#include "samples.h"
#include "select.h"

struct power_limit;
struct samples;

/* Each verb's own options: main.c fills those of the verb it runs (struct verb.options). */

/* metric */
struct metric_options {
        bool throttle; /* --throttle: a first gpu_metrics sample 100 ms before the one shown
                          (the limiters) */
        unsigned groups; /* -p -t -c -u -m -P -x -T: METRIC_GROUP_* (0: every field) */
        char **fields;   /* --fields: dotted JSON keys (strv; NULL: none given) */
        bool prometheus; /* --prometheus: fleet/cli-fleet.c renders the families */
};

/* metric's groups of fields, as amd-smi names them */
enum {
        METRIC_GROUP_POWER = 1u << 0,       /* -p */
        METRIC_GROUP_TEMPERATURE = 1u << 1, /* -t */
        METRIC_GROUP_CLOCK = 1u << 2,       /* -c */
        METRIC_GROUP_USAGE = 1u << 3,       /* -u */
        METRIC_GROUP_MEMORY = 1u << 4,      /* -m */
        METRIC_GROUP_PCIE = 1u << 5,        /* -P */
        METRIC_GROUP_XGMI = 1u << 6,        /* -x */
        METRIC_GROUP_THROTTLE = 1u << 7,    /* -T */
        METRIC_GROUP_ECC = 1u << 8,         /* -e: the RAS totals (not in the default output) */
        METRIC_GROUP_PERF_LEVEL = 1u << 9,  /* -l: the performance level */
};

/* Checks a --fields list (comma-separated dotted keys of metric's GPU objects) and adds it to
 * @m. @return 0, -EINVAL (*ret_bad: the field at fault) or -ENOMEM. */
int metric_add_fields(struct metric_options *m, const char *list, const char **ret_bad);

/* partition set (--compute, --memory), set (-C, -M), reset (--reload-driver) */
struct partition_options {
        enum amdsmi_compute_mode compute; /* AMDSMI_COMPUTE_UNKNOWN: none */
        enum amdsmi_memory_mode memory;   /* AMDSMI_MEMORY_UNKNOWN: none */
        bool reload_driver;
};

/* power set / clear (the sources), set -o, reset --power-cap; values are the raw arguments,
 * parsed by the power verbs (NULL: none given) */
struct power_options {
        bool host, apml, vm;         /* --host, --apml, --vm NAME given */
        const char *host_value, *apml_value, *vm_value, *vm_name;
        const char *vf_bdf;          /* --vf BDF (power set --vm) */
        const char *cap_value;       /* set -o VALUE */
        bool cap;                    /* set -o / reset --power-cap given */
        bool damaged;                /* power clear --damaged */
};

/* set -l, -d, -L, -p, -x and reset -d, -c (control/cli-perf.c); raw arguments, NULL: none */
struct perf_options {
        const char *level;        /* set -l LEVEL */
        const char *determinism;  /* set -d SCLK_MHZ */
        bool clk_limit;           /* set -L given */
        const char *clk, *bound, *mhz; /* its three values (NULL: missing) */
        const char *soc_pstate;   /* set -p POLICY */
        const char *xgmi_plpd;    /* set -x POLICY */
        bool reset_determinism;   /* reset -d */
        bool reset_clocks;        /* reset -c */
        unsigned n_given;         /* how many of them */
};

/* sriov set */
struct sriov_options {
        unsigned num_vfs;            /* --num-vfs N */
        bool num_vfs_set;
        bool autoprobe_off;          /* --autoprobe-off */
        bool persist;                /* --persist (gim's vf_num in modprobe.d) */
};

/* ras (--cper, --follow, --cper-dir), events (--kind) */
struct health_options {
        bool cper;             /* ras --cper */
        bool follow;           /* ras --cper --follow */
        const char *cper_dir;  /* ras --cper --cper-dir DIR (NULL: none) */
        uint64_t kinds;        /* events --kind: AMDSMI_EVENT_MASK() bits and
                                  CLI_EVENT_HEALTH / CLI_EVENT_CPER, 0: all */
};

/* reset -G / --gpureset (control/cli-reset.c) */
struct gpu_reset_cli_options {
        bool gpureset;
};

/* events --kind health / cper: amdsmid's own kinds (Health.Event), not the KFD's */
#define CLI_EVENT_HEALTH (UINT64_C(1) << 62)
#define CLI_EVENT_CPER (UINT64_C(1) << 63)

/* apply (--check, --profile), export (--profile) */
struct apply_options {
        bool check;          /* --check */
        const char *profile; /* --profile NAME (valid), NULL: none given */
        bool drifted;        /* --check found differences: exit status 1 */
};

struct cli {
        /* what the run says (the envelope, errors, outcome) and the GPUs it concerns */
        struct report report;
        struct gpu_set set;
        /* where this run's in-process changes are recorded (change.h) */
        struct change_journal journal;

        /* options every verb takes (a change's --dry-run is the report's) */
        enum output_format format;
        struct selection selection;
        uint64_t interval_ns; /* watch mode if > 0 */
        uint64_t count;       /* samples in watch mode, 0 = until interrupted */
        bool force;           /* change verbs: --force */
        unsigned timeout_ms;  /* change verbs: --timeout, 0: the library's default */
        bool direct;          /* --direct: change in-process (bus.h) */
        const char *argument; /* the one positional argument of verbs that take one (sriov
                                 bind VF), NULL: none given */
        /* the verb's own options */
        struct metric_options metric;
        struct partition_options partition;
        struct power_options power;
        struct sriov_options sriov;
        struct health_options health;
        struct apply_options apply;
        struct perf_options perf;
        struct gpu_reset_cli_options gpu_reset;

        /* health: the exit status of the verdicts (monitoring plugins' 0..3), used when
         * plugin_exits; any failure then exits 3 (UNKNOWN), a usage error too */
        bool plugin_exits;
        int exit_status;

        bool json_printed;    /* the verb printed its own (result) document */

        /* telemetry samples (samples.h): kept across the samples of a watch or --throttle
         * (then own_samples), or amdsmid's sampler; NULL: one sample, no limiters */
        struct samples *samples;
        struct samples own_samples;
        uint64_t samples_max_age_usec;     /* a current sample this young is shown again */
        /* what the power limiter ran against (the power slice's; NULL: not known) */
        int (*power_limit)(void *userdata, struct amdsmi_gpu *gpu, struct power_limit *ret);

        /* amdsmid (bus.c) */
        struct sd_bus *bus;
        bool bus_failed, daemon_checked, daemon_running;
        bool read_daemon; /* a read verb's samples come from amdsmid (cli_read_document()) */

        /* run time */
        unsigned sample;             /* 0-based sample number */
};

/* Verbs: 0 or a negative errno (already reported through cli_fail()). */
int verb_list(struct cli *c);
int verb_static(struct cli *c);
int verb_metric(struct cli *c);
int verb_monitor(struct cli *c); /* verb-monitor.c: amdsmi monitor */
int verb_set(struct cli *c);   /* verb-set.c: amdsmi set */
int verb_reset(struct cli *c); /* verb-set.c: amdsmi reset */
int verb_history(struct cli *c); /* verb-history.c: amdsmi history (the file, not amdsmid) */
/* control/cli-perf.c: set -l/-d/-L/-p/-x, reset -d/-c */
int perf_cli_set(struct cli *c);
int perf_cli_reset(struct cli *c);
/* power/cli-power.c */
int verb_power(struct cli *c);
int verb_power_set(struct cli *c);
int verb_power_clear(struct cli *c);
int verb_power_apply(struct cli *c);
/* set -o VALUE (the host source) and reset --power-cap (clears it). */
int power_cli_set_cap(struct cli *c);
int power_cli_reset_cap(struct cli *c);
/* What the power limiter of @gpu ran against, from the state file (c->power_limit of the
 * CLI). @return 0 or a negative errno. */
int power_cli_limit(void *userdata, struct amdsmi_gpu *gpu, struct power_limit *ret);
/* sriov/cli-sriov.c */
int verb_sriov(struct cli *c);
int verb_sriov_set(struct cli *c);
int verb_sriov_bind(struct cli *c);
int verb_sriov_release(struct cli *c);
int verb_vm(struct cli *c);
int verb_vm_release(struct cli *c);
/* verb-apply.c: amdsmid.conf (apply, reload) */
int verb_apply(struct cli *c);
int verb_reload(struct cli *c);
/* fleet/cli-export.c: the running state as an amdsmid.conf profile */
int verb_export(struct cli *c);
/* process/cli-process.c */
int verb_process(struct cli *c);
/* health/cli-health.c */
int verb_ras(struct cli *c);
int verb_bad_pages(struct cli *c);
int verb_health(struct cli *c);
int verb_events(struct cli *c);
/* topology/cli-topology.c */
int verb_topology(struct cli *c);
/* doctor/cli-doctor.c */
int verb_doctor(struct cli *c);
/* The "gpus" of a slice's read document, through amdsmid when it runs, else read here, as
 * its verb reads them (fleet/cli-fleet.c renders them). @return 0 or a negative errno
 * (reported). */
int partition_cli_collect(struct cli *c, json_object **ret);
int power_cli_collect(struct cli *c, json_object **ret);
int sriov_cli_collect(struct cli *c, json_object **ret);
int health_cli_collect(struct cli *c, json_object **ret);
int ras_cli_collect(struct cli *c, json_object **ret);
int process_cli_collect(struct cli *c, json_object **ret);
/* The whole "apply" document (amdsmi apply --check --json), not its "gpus". */
int apply_cli_collect(struct cli *c, json_object **ret);
/* fleet/cli-fleet.c: amdsmi metric --prometheus */
int fleet_cli_prometheus(struct cli *c);
/* partition/cli-partition.c */
int verb_partition(struct cli *c);
int verb_partition_set(struct cli *c);
/* The partition parts of set (-C / -M) and reset (--reload-driver): run the change for the
 * selected GPUs and print its document. @return 0 or a negative errno (already reported). */
int partition_cli_set(struct cli *c);
int partition_cli_reset(struct cli *c);
/* control/cli-reset.c: reset -G, the GPU reset of the selected GPUs (each GPU's hive once). */
int reset_cli_gpu_reset(struct cli *c);

/*
 * The run's report (core/report.h) as amdsmi(1) shows it: a fatal error is "amdsmi: <message>"
 * on stderr and the JSON error document main() prints; a field error an entry of "errors" in
 * JSON, a line on stderr otherwise; a change's line on stdout in a table.
 */
#define cli_fail(c, ...) report_fail(&(c)->report, __VA_ARGS__)
#define cli_field_error(c, ...) report_field_error(&(c)->report, __VA_ARGS__)
#define cli_field_error_msg(c, ...) report_field_error_msg(&(c)->report, __VA_ARGS__)
#define cli_say(c, ...) report_say(&(c)->report, __VA_ARGS__)
#define cli_errno_json(r) report_errno_json(r)
#define cli_begin_sample(c) report_begin_sample(&(c)->report)
#define cli_document(c, gpus) report_document(&(c)->report, (gpus))
#define cli_error_document(c, r) report_error_document(&(c)->report, (r))
#define cli_add_partition_modes(c, ...) gpu_add_partition_modes(&(c)->report, __VA_ARGS__)
#define cli_partition_count(c, ...) gpu_partition_count(&(c)->report, __VA_ARGS__)

/* The cli whose report @r is (a change code's run holds the report only). */
static inline struct cli *cli_of_report(struct report *r) {
        return (struct cli *) (void *) ((char *) r - offsetof(struct cli, report));
}

/* Sets how the report prints (the output format decides): call once the format is known. */
void cli_report_init(struct cli *c);

/*
 * Starts a change: checks the selection (cli_check_change_selection() with @why; NULL: the
 * verb checked its own), decides where it runs (ARCHITECTURE §4, bus.h cli_change_route():
 * amdsmid when it runs, else in-process, which needs root (a dry run does not) and says so on
 * stderr), enumerates and starts the sample.
 * @return CLI_ROUTE_DIRECT, CLI_ROUTE_DAEMON or a negative errno (reported).
 */
int cli_change_begin(struct cli *c, const char *why);

/* A read verb: with amdsmid running (and no --direct) leaves the reading to it, else
 * enumerates and resolves -g; then cli_run(@sample). */
int cli_open_run(struct cli *c, int (*sample)(struct cli *c));

/*
 * A read verb's sample from amdsmid (ARCHITECTURE §4): when cli_open_run() left the reading
 * to it, its Manager.GetDocument(@verb) for -g: the "gpus" in *ret, its "errors" added to the
 * report (as the in-process reading adds them), its "notes" printed. An amdsmid that cannot
 * answer (an older one, gone) or a selection GetDocument cannot take: enumerates here and
 * returns 0, as when amdsmid does not run. @return 1 (*ret set), 0 (read in-process) or a
 * negative errno (reported: amdsmid's answer, e.g. a GPU that -g does not find).
 */
int cli_read_document(struct cli *c, const char *verb, json_object **ret);
/* amdsmid's whole document of @verb for the selection, when the CLI reads through amdsmid.
 * @return 1 with *@ret; 0 (*@ret NULL) when it is to be read here (no amdsmid, or one without
 * the verb: the library context is then open); or a negative errno. */
int cli_read_daemon_document(struct cli *c, const char *verb, json_object **ret);

/*
 * `amdsmi VERB --json` of one sample through amdsmid: Manager.GetDocumentText(@verb), the text
 * written out as amdsmid rendered it (the same bytes the parsed document prints; parsing and
 * printing 30 KiB of JSON again was most of a read's time), its notes printed. For a verb
 * whose JSON output is the document as it is (not --fields). @return 1 (printed), 0 (not
 * here: no amdsmid, not JSON, a watch, an older amdsmid; go on with cli_read_document()) or a
 * negative errno (reported).
 */
int cli_print_daemon_text(struct cli *c, const char *verb);

/* cli_read_document(), or else cli_collect_gpus() with @gpu_fn. @return 0 or < 0. */
struct doc_query;
int cli_collect_document(struct cli *c, const char *verb,
                         json_object *(*gpu_fn)(const struct doc_query *q, size_t index,
                                                struct amdsmi_gpu *gpu),
                         json_object **ret);

/* The end of a table or CSV sample: frees @gpus and the errors already printed on stderr;
 * a failure @r to format the output is reported. @return 0 or @r. */
int cli_sample_done(struct cli *c, json_object *gpus, int r);

/*
 * A change needs an explicit -g, and whole GPUs: -g N.P is refused with @why ("a power cap
 * belongs to the whole GPU"). @return 0 or -EINVAL (reported).
 */
int cli_check_change_selection(struct cli *c, const char *why);

/*
 * Ends a change command: with --csv, the header and one row per element of @gpus (@csv
 * columns); with --json, the document around @gpus with "dry_run" and "result" (exit code,
 * errno and message of @r). @return @r, or the errno of the output.
 */
int cli_emit_change(struct cli *c, json_object *gpus, int r, const struct column_def *csv,
                    size_t n_csv);

/* Creates the library context with our log handler, enumerates and resolves -g. */
int cli_open(struct cli *c);


/* In a watch, what output_parents_children() needs (the sample's time stamp in @buf, 40
 * bytes); NULL otherwise. */
const struct output_watch *cli_output_watch(struct cli *c, struct output_watch *w, char *buf);

/* Prints a document (compact in watch mode). */
int cli_print_json(struct cli *c, json_object *doc);
/* Prints the amdsmi/1 document of @gpus (borrowed) as JSON. @return 0 or < 0. */
int cli_print_document(struct cli *c, json_object *gpus);

/*
 * Runs @sample once, or in watch mode every interval until the count is reached or SIGINT /
 * SIGTERM arrives (then returns 0). Re-enumerates when the KFD topology changed.
 */
int cli_run(struct cli *c, int (*sample)(struct cli *c));

/*
 * Prints one sample: the JSON document around @gpus, or CSV (header on the first sample; in
 * watch mode a leading "timestamp" column) or a table of @cols over @gpus. Takes @gpus.
 */
int cli_emit(struct cli *c, json_object *gpus, const struct columns *cols);

/* The GPUs selected, in enumeration order. */
#define FOREACH_SELECTED_GPU(c, i, gpu) FOREACH_GPU_IN_SET(&(c)->set, i, gpu)

/* The query of a read document (core/documents.h) over what @c selected and keeps. */
struct doc_query;
void cli_doc_query(struct cli *c, struct doc_query *q);
/* One JSON object per selected GPU, built by @gpu_fn (core/documents.h).
 * @return 0 and the array in @ret, or the negative errno of the failure (already reported). */
int cli_collect_gpus(struct cli *c,
                     json_object *(*gpu_fn)(const struct doc_query *q, size_t index,
                                            struct amdsmi_gpu *gpu),
                     json_object **ret);
