/* SPDX-License-Identifier: MIT */
/* State shared by main() and the verbs of amdsmi(1). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#include <amdsmi/amdsmi.h>

#include "bus.h"
#include "macro.h"
#include "output.h"
#include "samples.h"
#include "select.h"

struct power_limit;
struct samples;

struct cli {
        /* from the command line */
        const char *command;
        enum output_format format;
        struct selection selection;
        uint64_t interval_ns; /* watch mode if > 0 */
        uint64_t count;       /* samples in watch mode, 0 = until interrupted */
        /* change verbs (set, reset, partition set) */
        enum amdsmi_compute_mode compute;  /* --compute / -C, AMDSMI_COMPUTE_UNKNOWN: none */
        enum amdsmi_memory_mode memory;    /* --memory / -M, AMDSMI_MEMORY_UNKNOWN: none */
        bool dry_run;
        bool force;
        bool reload_driver;
        unsigned timeout_ms;               /* --timeout, 0: the library's default */
        /* power sources (power set / clear, set -o, reset --power-cap); values are the raw
         * arguments, parsed by the power verbs (NULL: none given) */
        bool host, apml, vm;               /* --host, --apml, --vm NAME given */
        const char *host_value, *apml_value, *vm_value, *vm_name;
        const char *vf_bdf;                /* --vf BDF (power set --vm) */
        const char *power_cap_value;       /* set -o VALUE */
        bool power_cap;                    /* set -o / reset --power-cap given */
        bool damaged;                      /* power clear --damaged */
        /* SR-IOV (sriov set, bind, release) */
        unsigned num_vfs;                  /* --num-vfs N */
        bool num_vfs_set;
        bool autoprobe_off;                /* --autoprobe-off */
        bool persist;                      /* --persist (gim's vf_num in modprobe.d) */
        const char *argument;              /* the one positional argument of verbs that take
                                              one (sriov bind VF), NULL: none given */
        bool json_printed;                 /* the verb printed its own (result) document */
        bool quiet;                        /* print nothing on stderr (amdsmid builds its
                                              documents with this framework) */
        bool direct;                       /* --direct: change in-process (bus.h) */
        bool throttle;                     /* --throttle: a first gpu_metrics sample 100 ms
                                              before the one shown (the limiters) */

        /* telemetry samples (samples.h): kept across the samples of a watch or --throttle
         * (then own_samples), or amdsmid's sampler; NULL: one sample, no limiters */
        struct samples *samples;
        struct samples own_samples;
        uint64_t samples_max_age_usec;     /* a current sample this young is shown again */
        /* what the power limiter ran against (the power slice's; NULL: not known) */
        int (*power_limit)(struct cli *c, struct amdsmi_gpu *gpu, struct power_limit *ret);
        void *power_limit_userdata;

        /* amdsmid (bus.c) */
        struct sd_bus *bus;
        bool bus_failed, daemon_checked, daemon_running;

        /* run time */
        struct amdsmi_ctx *ctx;
        size_t n_gpus;
        struct select_match *matches; /* n_gpus entries */
        char hostname[256];
        struct timespec sample_time; /* CLOCK_REALTIME at the start of the sample */
        unsigned sample;             /* 0-based sample number */
        json_object *errors;         /* "errors" of the next JSON document */
        char *error_message;         /* the fatal error, for the JSON error document */
};

/* Verbs: 0 or a negative errno (already reported through cli_fail()). */
int verb_list(struct cli *c);
int verb_static(struct cli *c);
int verb_metric(struct cli *c);
int verb_set(struct cli *c);   /* verb-set.c: amdsmi set */
int verb_reset(struct cli *c); /* verb-set.c: amdsmi reset */
int verb_history(struct cli *c); /* verb-history.c: amdsmi history (the file, not amdsmid) */
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
int power_cli_limit(struct cli *c, struct amdsmi_gpu *gpu, struct power_limit *ret);
/* sriov/cli-sriov.c */
int verb_sriov(struct cli *c);
int verb_sriov_set(struct cli *c);
int verb_sriov_bind(struct cli *c);
int verb_sriov_release(struct cli *c);
int verb_vm(struct cli *c);
int verb_vm_release(struct cli *c);
/* daemon/cli-apply.c: amdsmid.conf */
int verb_apply(struct cli *c);
int verb_reload(struct cli *c);
/* partition/cli-partition.c */
int verb_partition(struct cli *c);
int verb_partition_set(struct cli *c);
/* The partition parts of set (-C / -M) and reset (--reload-driver): run the change for the
 * selected GPUs and print its document. @return 0 or a negative errno (already reported). */
int partition_cli_set(struct cli *c);
int partition_cli_reset(struct cli *c);

/*
 * Reports a fatal error: "amdsmi: <message>" on stderr, and keeps the message for the JSON
 * error document main() prints. @return @r.
 */
int cli_fail(struct cli *c, int r, const char *format, ...) _printf_(3, 4);

/*
 * Reports a problem with one field of one GPU (@gpu < 0: not tied to a GPU): an entry of
 * "errors" in JSON, a line on stderr otherwise. The value itself becomes null / N/A.
 */
void cli_field_error(struct cli *c, int gpu, const char *field, int r);
/* The same with the reason the library gave (NULL: the errno's message). */
void cli_field_error_msg(struct cli *c, int gpu, const char *field, int r, const char *msg);

/*
 * Where a change runs (ARCHITECTURE §4, bus.h cli_change_route()): amdsmid when it runs,
 * else in-process, which needs root (a dry run does not) and says so on stderr.
 * @return CLI_ROUTE_DIRECT, CLI_ROUTE_DAEMON or a negative errno (reported).
 */
int cli_authorise_change(struct cli *c);

/*
 * A change needs an explicit -g, and whole GPUs: -g N.P is refused with @why ("a power cap
 * belongs to the whole GPU"). @return 0 or -EINVAL (reported).
 */
int cli_check_change_selection(struct cli *c, const char *why);

/* The errno's symbolic name as a JSON string ("EBUSY"), or NULL (JSON null) for 0. */
json_object *cli_errno_json(int r);

/* A line about a change: printed on stdout in table format, and appended to the "messages"
 * array of @entry (a GPU's object in the change document; may be NULL). */
void cli_say(struct cli *c, json_object *entry, const char *format, ...) _printf_(3, 4);

/*
 * Ends a change command: with --csv, the header and one row per element of @gpus (@csv
 * columns); with --json, the document around @gpus with "dry_run" and "result" (exit code,
 * errno and message of @r). @return @r, or the errno of the output.
 */
int cli_emit_change(struct cli *c, json_object *gpus, int r, const struct column_def *csv,
                    size_t n_csv);

/* Creates the library context with our log handler, enumerates and resolves -g. */
int cli_open(struct cli *c);

/*
 * For programs that hold their own context (amdsmid): selects every GPU of @ctx's last
 * enumeration, or only @bdf (-ENOENT if it has none), without enumerating or logging. The
 * context stays the caller's: clear c->ctx before freeing what the cli holds.
 */
int cli_attach(struct cli *c, struct amdsmi_ctx *ctx, const char *bdf);
/* Frees what cli_attach() and the documents left in @c, and leaves the context alone. */
void cli_detach(struct cli *c);

/* The documents of the read verbs for the selected GPUs, as --json prints them (one sample;
 * NULL on -ENOMEM). */
json_object *list_document(struct cli *c);
json_object *metric_document(struct cli *c);

/* Starts a sample: takes the time stamp. */
void cli_begin_sample(struct cli *c);

/* A document: the envelope, "gpus" (taken) and the collected "errors" (taken). */
json_object *cli_document(struct cli *c, json_object *gpus);

/* The JSON error document for a fatal @r. */
json_object *cli_error_document(struct cli *c, int r);

/* Prints a document (compact in watch mode). */
int cli_print_json(struct cli *c, json_object *doc);

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

/* Adds "compute_mode" and "memory_mode" (null when the GPU has no partitions). */
/* compute_mode and memory_mode. With from_topology, the compute mode comes from the KFD
 * topology (never wakes the GPU) and the partition file is read only when that is unknown. */
void cli_add_partition_modes(struct cli *c, int index, struct amdsmi_gpu *gpu, json_object *obj,
                             bool from_topology);
/* The GPU's partition count, or null (with an errors entry) when its KFD topology is broken. */
json_object *cli_partition_count(struct cli *c, int index, struct amdsmi_gpu *gpu);

/* The GPUs selected, in enumeration order. */
#define FOREACH_SELECTED_GPU(c, i, gpu)                                                         \
        for (size_t i = 0; i < (c)->n_gpus; i++)                                                \
                for (struct amdsmi_gpu *gpu =                                                   \
                             (c)->matches[i].selected ? amdsmi_ctx_get_gpu((c)->ctx, i) : NULL; \
                     gpu; gpu = NULL)

/* One JSON object per selected GPU, built by @gpu_fn (NULL means out of memory).
 * @return 0 and the array in @ret, or the negative errno of the failure (already reported). */
typedef json_object *(*cli_gpu_fn)(struct cli *c, size_t index, struct amdsmi_gpu *gpu);
int cli_collect_gpus(struct cli *c, cli_gpu_fn gpu_fn, json_object **ret);

/* Sets @key of @obj to @v (NULL for JSON null). */
static inline void json_set(json_object *obj, const char *key, json_object *v) {
        json_object_object_add(obj, key, v);
}

/* Turns a label into a JSON key part: lower case, [a-z0-9_] only. */
void sanitize_key(const char *in, char *out, size_t len);
