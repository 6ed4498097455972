/* SPDX-License-Identifier: MIT */
/*
 * amdsmi: the administration CLI of libamdsmi.
 *
 *   amdsmi [OPTIONS] VERB [SUB-VERB] [OPTIONS]
 *
 * Data goes to stdout and nothing else does; errors and library messages go to stderr (and,
 * with --json, into the document). The exit status is documented in exit-codes.h; every
 * failure is a negative errno until main() maps it with exit_code_from_errno().
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "amdsmid-conf.h"
#include "cli.h"
#include "exit-codes.h"
#include "help.h"
#include "parse-util.h"

/* The options a verb accepts (struct verb.options; struct cli_option.verbs says which verbs
 * accept an option). -g, --json, --csv, --direct, -h and --version are accepted by every
 * verb. */
enum {
        OPT_WATCH = 1u << 0,             /* -w / -n */
        OPT_COMPUTE = 1u << 1,           /* --compute MODE (partition set) */
        OPT_MEMORY = 1u << 2,            /* --memory MODE (partition set) */
        OPT_COMPUTE_PARTITION = 1u << 3, /* -C / --compute-partition MODE (set) */
        OPT_MEMORY_PARTITION = 1u << 4,  /* -M / --memory-partition MODE (set) */
        OPT_DRY_RUN = 1u << 5,
        OPT_FORCE = 1u << 6,
        OPT_TIMEOUT = 1u << 7,
        OPT_RELOAD_DRIVER = 1u << 8,
        OPT_HOST = 1u << 9,       /* --host [VALUE] (power set / clear) */
        OPT_APML = 1u << 10,      /* --apml [VALUE] */
        OPT_VM = 1u << 11,        /* --vm NAME [VALUE] */
        OPT_VF = 1u << 12,        /* --vf BDF (power set --vm) */
        OPT_POWER_CAP = 1u << 13, /* set -o VALUE, reset --power-cap */
        OPT_NUM_VFS = 1u << 14,   /* --num-vfs N (sriov set) */
        OPT_AUTOPROBE_OFF = 1u << 15,
        OPT_PERSIST = 1u << 16,
        OPT_COUNT = 1u << 17,      /* -n without --watch: the last COUNT entries (history) */
        OPT_DAMAGED = 1u << 18,    /* --damaged (power clear) */
        OPT_THROTTLE = 1u << 19,   /* --throttle (metric) */
        OPT_FIELDS = 1u << 20,     /* -p -t -c -u -m -P -x -T, --fields (metric) */
        OPT_CPER = 1u << 21,       /* --cper (ras) */
        OPT_FOLLOW = 1u << 22,     /* --follow (ras --cper) */
        OPT_CPER_DIR = 1u << 23,   /* --cper-dir DIR (ras --cper) */
        OPT_KIND = 1u << 24,       /* --kind K,K (events) */
        OPT_CHECK = 1u << 25,      /* --check (apply) */
        OPT_PROFILE = 1u << 26,    /* --profile NAME (apply, export) */
        OPT_PROMETHEUS = 1u << 30, /* --prometheus (metric) */
        OPT_PERF_SET = 1u << 27,   /* set -l, -d, -L, -p, -x (control/cli-perf.c) */
        OPT_PERF_RESET = 1u << 28, /* reset -d/--perf-determinism, -c/--clocks */
        OPT_GPU_RESET = 1u << 31,  /* -G / --gpureset (reset) */
};

/* What getopt_long() returns for options without a short name. */
enum {
        ARG_JSON = 0x100,
        ARG_CSV,
        ARG_VERSION,
        ARG_COMPUTE,
        ARG_MEMORY,
        ARG_DRY_RUN,
        ARG_FORCE,
        ARG_DIRECT,
        ARG_TIMEOUT,
        ARG_RELOAD_DRIVER,
        ARG_HOST,
        ARG_APML,
        ARG_VM,
        ARG_VF,
        ARG_NUM_VFS,
        ARG_AUTOPROBE_OFF,
        ARG_PERSIST,
        ARG_DAMAGED,
        ARG_THROTTLE,
        ARG_FIELDS,
        ARG_CPER,
        ARG_FOLLOW,
        ARG_CPER_DIR,
        ARG_KIND,
        ARG_CHECK,
        ARG_PROFILE,
        ARG_PROMETHEUS,
        /* the performance options: letters other verbs use too (the table is per verb) */
        ARG_PERF_LEVEL,
        ARG_PERF_DETERMINISM,
        ARG_CLK_LIMIT,
        ARG_SOC_PSTATE,
        ARG_XGMI_PLPD,
        ARG_RESET_DETERMINISM,
        ARG_RESET_CLOCKS,
        ARG_METRIC_PERF_LEVEL,
};

/* The exit statuses (exit-codes.h) of the kinds of verbs, for struct verb.exits. */
#define EXITS_READ (CLI_EXIT(0) | CLI_EXIT(1) | CLI_EXIT(2) | CLI_EXIT(3) | CLI_EXIT(4))
/* health's: as monitoring plugins expect (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN) */
#define EXITS_PLUGIN (CLI_EXIT(0) | CLI_EXIT(1) | CLI_EXIT(2) | CLI_EXIT(3))
#define EXITS_CHANGE (EXITS_READ | CLI_EXIT(5) | CLI_EXIT(6) | CLI_EXIT(7) | CLI_EXIT(9))

/* Feature slices add their verbs here: the row is the verb's help too (help.h). */
/* (the pairs of option_help keep their layout) */
/* clang-format off */
const struct verb cli_verbs[] = {
        {
                .name = "list",
                .fn = verb_list,
                .help = "one line per GPU: address, product, role, driver, modes",
                .options = OPT_WATCH,
                .synopsis = "[-g SEL]... [--json|--csv] list [-w SECONDS [-n COUNT]]",
                .description =
                        "One line per GPU: its index, PCI address, product, role (baremetal,\n"
                        "host-pf, a VF in a guest), driver, partition count, compute and\n"
                        "memory partition modes and unique id. With amdsmid running, it\n"
                        "answers from its cache (--direct: read here). -w shows GPUs come\n"
                        "and go.",
                .examples = "amdsmi list\n"
                            "amdsmi list -g 0,3 --csv\n"
                            "amdsmi list --json -w 5",
                .exits = CLI_EXIT(0) | CLI_EXIT(1) | CLI_EXIT(2) | CLI_EXIT(3),
        },
        {
                .name = "static",
                .fn = verb_static,
                .help = "identity, PCIe, memory, firmware and partitions",
                .synopsis = "[-g SEL]... [--json|--csv] static",
                .description =
                        "What does not change while the GPU runs: identity (product, vendor\n"
                        "and device ids, serial, unique id), PCIe link, VRAM, VBIOS and\n"
                        "firmware versions, the partitions and their nodes.",
                .examples = "amdsmi static -g 0\n"
                            "amdsmi static --json | jq '.gpus[].vbios'",
                .exits = EXITS_READ,
        },
        {
                .name = "metric",
                .fn = verb_metric,
                .options = OPT_WATCH | OPT_THROTTLE | OPT_FIELDS | OPT_PROMETHEUS,
                .help = "power, temperatures, clocks, activity, counters",
                .synopsis = "[-g SEL]... [--json|--csv] [-w SECONDS [-n COUNT]] metric "
                            "[--throttle] [-p] [-t] [-c] [-u] [-m] [-P] [-x] [-T] [-e] [-l] "
                            "[--fields KEY,...] [--prometheus]",
                .description = "Telemetry: power draw and caps, temperatures, clocks, activity,\n"
                               "PCIe and XGMI counters, from hwmon and gpu_metrics. The group\n"
                               "options and --fields show only those fields, in every format.\n"
                               "-w repeats it (one JSON document per line, or CSV rows with a\n"
                               "timestamp); --throttle says which limiter held each GPU.\n"
                               "--prometheus prints every family of amdsmid's /metrics once,\n"
                               "in the Prometheus text format (for node_exporter's textfile\n"
                               "collector).",
                .examples = "amdsmi metric\n"
                            "amdsmi metric -p -t -g 0,1\n"
                            "amdsmi metric -g 0 -w 0.5 -n 10 --csv --fields power.power_w\n"
                            "amdsmi metric --prometheus > amdsmi.prom.$$ && mv amdsmi.prom.$$ amdsmi.prom",
                .exits = EXITS_READ,
                .option_help = OPTION_HELP(
                        "count", "with --watch: stop after COUNT samples"),
        },
        {
                .name = "monitor",
                .fn = verb_monitor,
                .options = OPT_WATCH,
                .help = "one line per GPU or partition: power, temperatures, clocks, busy, VRAM",
                .synopsis = "[-g SEL]... [--json|--csv] monitor [-w SECONDS [-n COUNT]]",
                .description =
                        "amd-smi's compact live view: one line per GPU, or per partition with\n"
                        "-g N.P: power and cap, hotspot and memory temperatures, GFX and\n"
                        "memory clocks and busy, VRAM, and what held the GPU back (THROTTLE,\n"
                        "known from the second sample, or at once through amdsmid). With -w\n"
                        "on a terminal the screen is drawn again each sample; piped, the\n"
                        "samples' rows follow one header, each with its time.",
                .examples = "amdsmi monitor -w 1\n"
                            "amdsmi monitor -g 0.0,0.1 -w 0.5\n"
                            "amdsmi monitor -w 5 -n 12 --csv > node.csv",
                .exits = EXITS_READ,
                .option_help = OPTION_HELP(
                        "count", "with --watch: stop after COUNT samples"),
        },
        {
                .name = "process",
                .fn = verb_process,
                .options = OPT_WATCH,
                .help = "the processes using each GPU and partition (VRAM, queues, CUs)",
                .synopsis = "[-g SEL]... [--json|--csv] process [-w SECONDS [-n COUNT]]",
                .description =
                        "The processes that use the GPUs through KFD (ROCm, HIP, OpenCL):\n"
                        "PID, name, user and container, and per partition their VRAM,\n"
                        "queues, CU occupancy, SDMA time, eviction time and GPU page faults.\n"
                        "-g N.P shows one partition. Through amdsmid other users' processes\n"
                        "show when polkit allows org.amdsmi1.process.list (active local\n"
                        "sessions by default), else the caller's own; read here (--direct),\n"
                        "what the kernel shows this user.",
                .examples = "amdsmi process\n"
                            "amdsmi process -g 0.3 --json\n"
                            "amdsmi process -w 2 --csv",
                .exits = EXITS_READ,
                .option_help = OPTION_HELP(
                        "count", "with --watch: stop after COUNT samples"),
        },
        {
                .name = "ras",
                .fn = verb_ras,
                .options = OPT_WATCH | OPT_CPER | OPT_FOLLOW | OPT_CPER_DIR,
                .help = "RAS error counts per block (UE, CE, deferred); --cper: the CPER records",
                .synopsis = "[-g SEL]... [--json|--csv] ras [-w SECONDS [-n COUNT]]\n"
                            "[-g SEL]... [--json|--csv] ras --cper [--follow] [--cper-dir DIR]",
                .description =
                        "The RAS error counts of each GPU and block since the driver loaded:\n"
                        "uncorrectable, correctable and deferred, from ras/aca_<block> or\n"
                        "<block>_err_count, and their totals. --cper lists the CPER records\n"
                        "of the debugfs ring (root), --follow streams new ones until Ctrl-C\n"
                        "(--json: one line each), --cper-dir writes each as a .cper file.\n"
                        "Counts belong to the whole GPU, also with -g N.P.",
                .examples = "amdsmi ras -g 0 --json\n"
                            "amdsmi ras --cper\n"
                            "amdsmi ras --cper --follow --json\n"
                            "amdsmi ras --cper --cper-dir /var/tmp/cper",
                .exits = EXITS_READ | CLI_EXIT(6) | CLI_EXIT(9),
                .option_help = OPTION_HELP(
                        "count", "with --watch: stop after COUNT samples"),
        },
        {
                .name = "bad-pages",
                .fn = verb_bad_pages,
                .options = OPT_WATCH,
                .help = "retired VRAM pages (reserved, pending, unreservable) and the threshold",
                .synopsis = "[-g SEL]... [--json|--csv] bad-pages [-w SECONDS [-n COUNT]]",
                .description =
                        "The retired VRAM pages of each GPU (ras/gpu_vram_bad_pages): page\n"
                        "frame, address, size and status (reserved, pending, unreservable),\n"
                        "and the retirement threshold, which needs root (debugfs): reaching\n"
                        "it means the GPU needs replacement (RMA).",
                .examples = "amdsmi bad-pages\n"
                            "amdsmi bad-pages -g 0 --json",
                .exits = EXITS_READ,
                .option_help = OPTION_HELP(
                        "count", "with --watch: stop after COUNT samples"),
        },
        {
                .name = "health",
                .fn = verb_health,
                .options = OPT_WATCH,
                .help = "the health verdict of each GPU (ok, warning, critical, unknown) and why",
                .synopsis = "[-g SEL]... [--json|--csv] health [-w SECONDS [-n COUNT]]",
                .description =
                        "The health of each GPU, ok, warning, critical or unknown, with the\n"
                        "reasons: uncorrectable errors, the correctable error rate (amdsmid),\n"
                        "pending or unreservable pages, pages near or at the threshold (RMA),\n"
                        "fatal CPER records (root), a recent reset (amdsmid). Thresholds:\n"
                        "amdsmid.conf [health]. Exits as a monitoring plugin: 0 OK,\n"
                        "1 WARNING, 2 CRITICAL, 3 UNKNOWN (the worst GPU; any error is 3).",
                .examples = "amdsmi health\n"
                            "amdsmi health -g 0 --json",
                .exits = EXITS_PLUGIN,
                .exit_help = OPTION_HELP(
                        "OK: every selected GPU is ok",
                        "WARNING: the worst GPU is warning",
                        "CRITICAL: a GPU is critical",
                        "UNKNOWN: a GPU cannot be judged (its RAS files cannot be\n"
                        "      read), or the command failed (usage errors too)"),
                .option_help = OPTION_HELP(
                        "count", "with --watch: stop after COUNT samples"),
        },
        {
                .name = "events",
                .fn = verb_events,
                .options = OPT_KIND,
                .help = "stream the GPUs' KFD events (resets, throttling, VM faults, ...)",
                .synopsis = "[-g SEL]... [--json|--csv] events [--kind KIND,...]",
                .description =
                        "Streams the KFD SMI events of the selected GPUs and partitions until\n"
                        "Ctrl-C (exit 0): GPU resets, thermal throttling, VM faults, process\n"
                        "start and end, migrations, page faults, queue evictions. --json\n"
                        "prints one JSON object per line. When amdsmid runs, its stream\n"
                        "(health changes and CPER records too, and a \"stream\" line when it\n"
                        "paused for a partition change: events may be missed until resumed);\n"
                        "else, or with --direct, read in-process (a KFD user of every GPU).",
                .examples = "amdsmi events\n"
                            "amdsmi events -g 0 --kind gpu_pre_reset,gpu_post_reset --json\n"
                            "amdsmi events --kind health,cper",
                .exits = EXITS_READ | CLI_EXIT(6),
        },
        {
                .name = "topology",
                .fn = verb_topology,
                .help = "how the GPUs are wired: XGMI or PCIe, hops, weight, bandwidth, NUMA",
                .synopsis = "[-g SEL]... [--json|--csv] topology",
                .description =
                        "The peer matrix of the GPUs, as amd-smi topology shows it: for each\n"
                        "pair, the link type (XGMI, PCIE, SELF), hops, KFD weight, XGMI link\n"
                        "count and bandwidth; for each GPU its NUMA node, local CPUs, XGMI\n"
                        "hive and physical id. In DPX, QPX or CPX the pairs of partitions\n"
                        "follow (SAME_GPU: two partitions of one GPU); -g N.P selects some.\n"
                        "--csv prints one row per pair. With amdsmid running, it answers.",
                .examples = "amdsmi topology\n"
                            "amdsmi topology -g 0,1 --json\n"
                            "amdsmi topology -g 0.0,1.0 --csv",
                .exits = EXITS_READ,
                .option_help = OPTION_HELP(
                        "csv", "CSV: a header line and one line per pair of GPUs,\n"
                        "then of partitions"),
        },
        {
                .name = "doctor",
                .fn = verb_doctor,
                .help = "is this host ready for SR-IOV VMs and amdsmi? each check and its fix",
                .synopsis = "[-g SEL]... [--json|--csv] doctor",
                .description =
                        "Checks the host and says what to fix: IOMMU on, interrupt\n"
                        "remapping, each GPU's and VF's IOMMU group alone (ACS), vfio-pci,\n"
                        "gim's vf_num against amdsmid.conf, one firmware and driver per XGMI\n"
                        "hive, XGMI links up, /dev/kfd and render nodes usable by a group\n"
                        "with members, amdsmid running and in sync, RAS on, retired pages\n"
                        "below the threshold, power caps within the BMC's APML limit. Each\n"
                        "check: ok, warn, fail or not_applicable, its evidence and fix. Reads\n"
                        "only; through amdsmid when it runs. Exits as health: 0 OK, 1 a\n"
                        "warning, 2 a failure, 3 could not run.",
                .examples = "amdsmi doctor\n"
                            "amdsmi doctor --json | jq '.checks[] | select(.status != \"ok\")'\n"
                            "amdsmi doctor -g 0 --direct",
                .exits = EXITS_PLUGIN,
                .exit_help = OPTION_HELP(
                        "OK: every check is ok or not applicable",
                        "WARNING: a check warns",
                        "FAILED: a check fails",
                        "UNKNOWN: the doctor could not run (usage errors too)"),
                .option_help = OPTION_HELP(
                        "csv", "CSV: a header line and one line per check"),
        },
        {
                .name = "partition",
                .fn = verb_partition,
                .help = "compute and memory partition modes, what is available, the partitions",
                .options = OPT_WATCH,
                .synopsis = "[-g SEL]... [--json|--csv] partition [-w SECONDS [-n COUNT]]",
                .description =
                        "The compute (SPX ... CPX) and memory (NPS1 ... NPS8) partition modes\n"
                        "of each GPU, a pending memory mode, the modes available, and the\n"
                        "partitions with their KFD nodes and render devices. -w follows a\n"
                        "change or a reload.",
                .examples = "amdsmi partition\n"
                            "amdsmi partition -g 0 --json\n"
                            "amdsmi partition -g 0 -w 1",
                .exits = EXITS_READ,
        },
        {
                .name = "partition",
                .sub = "set",
                .fn = verb_partition_set,
                .options = OPT_COMPUTE | OPT_MEMORY | OPT_DRY_RUN | OPT_FORCE | OPT_TIMEOUT,
                .help = "change the compute (--compute) and memory (--memory) partition modes",
                .synopsis = "-g SEL... [--json|--csv] partition set [--compute MODE] "
                            "[--memory MODE] [--dry-run] [--force] [--timeout SECONDS]",
                .description = "Changes the compute and memory partition modes of the selected\n"
                               "GPUs, through amdsmid when it runs. A memory mode takes effect at\n"
                               "the next driver reload of the whole XGMI hive (exit status 8);\n"
                               "with --memory alone, the plan says which compute mode the\n"
                               "driver's AUTO rule picks then on each GPU of the hive.\n"
                               "--dry-run prints the plan and who would block it.",
                .examples = "amdsmi partition set -g 0 --compute CPX --dry-run\n"
                            "amdsmi partition set -g 0 --memory NPS4 --dry-run\n"
                            "amdsmi partition set -g all --compute DPX --memory NPS2\n"
                            "amdsmi partition set -g 0 --compute SPX --timeout 120",
                .exits = EXITS_CHANGE | CLI_EXIT(8),
                .option_help = OPTION_HELP(
                        "force", "although VFs exist (gim hosts), or amdsmid runs\n"
                        "(with --direct)"),
        },
        {
                .name = "power",
                .fn = verb_power,
                .options = OPT_WATCH,
                .help = "power draw, caps and range, the Host/VM/APML sources and which one binds",
                .synopsis = "[-g SEL]... [--json|--csv] [-w SECONDS [-n COUNT]] power",
                .description = "The power draw, cap and cap range of each GPU, the Host, VM and\n"
                               "APML sources recorded for it, the effective cap (their minimum)\n"
                               "and which source binds.",
                .examples = "amdsmi power\n"
                            "amdsmi power -g 0 --json\n"
                            "amdsmi power -w 1",
                .exits = EXITS_READ | CLI_EXIT(10),
                .option_help = OPTION_HELP(
                        "count", "with --watch: stop after COUNT samples"),
        },
        {
                .name = "power",
                .sub = "set",
                .fn = verb_power_set,
                .options = OPT_HOST | OPT_APML | OPT_VM | OPT_VF | OPT_DRY_RUN | OPT_FORCE,
                .help = "set power sources: --host W, --vm NAME W [--vf BDF], --apml W",
                .synopsis = "-g SEL... [--json|--csv] power set [--host W] "
                            "[--vm NAME W [--vf BDF]] [--apml W] [--dry-run]",
                .description =
                        "Records power cap sources of the selected GPUs and applies the\n"
                        "effective cap, the minimum of the sources present, clamped to the\n"
                        "GPU's range. Values: 600W, 600000mW, 0.6kW; a bare number is watts.",
                .examples = "amdsmi power set -g 0 --host 600W\n"
                            "amdsmi power set -g 2 --vm web1 450 --vf 0000:26:00.1\n"
                            "amdsmi power set -g all --apml 500 --dry-run",
                .exits = EXITS_CHANGE | CLI_EXIT(10),
                .option_help = OPTION_HELP(
                        "host", "the host's cap: 600W, 600000mW, 0.6kW; a bare\n"
                        "number is watts",
                        "vm", "the cap of the VM NAME (name or UUID)",
                        "vf", "with --vm: the VF the VM has",
                        "apml", "the BMC's platform limit (APML)",
                        "force", "although amdsmid runs (with --direct)"),
        },
        {
                .name = "power",
                .sub = "clear",
                .fn = verb_power_clear,
                .options = OPT_HOST | OPT_APML | OPT_VM | OPT_DAMAGED | OPT_DRY_RUN | OPT_FORCE,
                .help = "remove power sources: --host, --vm NAME, --apml; --damaged drops damaged "
                        "records",
                .synopsis = "-g SEL... [--json|--csv] power clear [--host] [--vm NAME] [--apml] "
                            "[--damaged] [--dry-run]",
                .description =
                        "Removes power cap sources of the selected GPUs and applies the cap\n"
                        "of those left (the GPU's default cap when none is). --damaged drops\n"
                        "the records of the state file that cannot be read.",
                .examples = "amdsmi power clear -g 0 --host\n"
                            "amdsmi power clear -g 2 --vm web1\n"
                            "amdsmi power clear -g all --damaged --dry-run",
                .exits = EXITS_CHANGE | CLI_EXIT(10),
                .option_help = OPTION_HELP(
                        "host", "remove the host's cap (no value)",
                        "vm", "remove the cap of the VM NAME (no value)",
                        "apml", "remove the BMC's platform limit (no value)",
                        "force", "although amdsmid runs (with --direct)"),
        },
        {
                .name = "power",
                .sub = "apply",
                .fn = verb_power_apply,
                .options = OPT_DRY_RUN | OPT_FORCE,
                .help = "apply the arbitrated cap again (after a GPU reset, a new APML file)",
                .synopsis = "-g SEL... [--json|--csv] power apply [--dry-run]",
                .description = "Writes the effective cap of the recorded sources to the selected\n"
                               "GPUs again, e.g. after a GPU reset or a new APML file.",
                .examples = "amdsmi power apply -g all\n"
                            "amdsmi power apply -g 0 --dry-run",
                .exits = EXITS_CHANGE | CLI_EXIT(10),
                .option_help = OPTION_HELP(
                        "force", "although amdsmid runs (with --direct)"),
        },
        {
                .name = "sriov",
                .fn = verb_sriov,
                .help = "SR-IOV per PF: VF count and how it is set, the VFs, their drivers and "
                        "users",
                .options = OPT_WATCH,
                .synopsis = "[-g SEL]... [--json|--csv] sriov [-w SECONDS [-n COUNT]]",
                .description = "Per physical function: whether it can do SR-IOV, its VF count and\n"
                               "how that is set (sysfs, gim's parameter), and each VF with its\n"
                               "driver, IOMMU group and users. -w follows VFs as VMs take them.",
                .examples = "amdsmi sriov\n"
                            "amdsmi sriov -g 0 --json\n"
                            "amdsmi sriov --csv -w 2 -n 10",
                .exits = EXITS_READ,
        },
        {
                .name = "sriov",
                .sub = "set",
                .fn = verb_sriov_set,
                .options = OPT_NUM_VFS | OPT_DRY_RUN | OPT_FORCE | OPT_AUTOPROBE_OFF | OPT_PERSIST |
                           OPT_TIMEOUT,
                .help = "set the VF count of PFs (--num-vfs N); gim hosts: --persist",
                .synopsis = "-g SEL... [--json|--csv] sriov set --num-vfs N [--dry-run] "
                            "[--force] [--autoprobe-off] [--timeout SECONDS]\n"
                            "-g SEL... [--json|--csv] sriov set --num-vfs N --persist [--dry-run] "
                            "[--force]",
                .description = "Sets the VF count of the selected PFs through sriov_numvfs. Under\n"
                               "gim the count is gim's module parameter: --persist writes it for\n"
                               "gim's next load (exit status 8 until then).",
                .examples = "amdsmi sriov set -g 0 --num-vfs 4 --dry-run\n"
                            "amdsmi sriov set -g all --num-vfs 0\n"
                            "amdsmi sriov set -g all --num-vfs 8 --persist",
                .exits = EXITS_CHANGE | CLI_EXIT(8),
                .option_help = OPTION_HELP(
                        "force", "although VFs are bound to vfio-pci or in use;\n"
                        "with --persist: a VF count gim's table lacks"),
        },
        {
                .name = "sriov",
                .sub = "bind",
                .fn = verb_sriov_bind,
                .options = OPT_DRY_RUN | OPT_FORCE,
                .help = "hand a VF to vfio-pci for a VM (driver_override, unbind, probe)",
                .arg = "VF",
                .arg_value = CLI_VALUE_VF,
                .synopsis = "[--json|--csv] sriov bind VF [--dry-run]",
                .description = "Hands the VF at PCI address VF to vfio-pci for a virtual machine:\n"
                               "driver_override, unbind from its driver, probe. 'sriov release'\n"
                               "gives it back.",
                .examples = "amdsmi sriov bind 0000:05:02.0\n"
                            "amdsmi sriov bind 0000:05:02.0 --dry-run --json",
                .exits = EXITS_CHANGE,
                .option_help = OPTION_HELP(
                        "force", "although amdsmid runs (with --direct)"),
        },
        {
                .name = "sriov",
                .sub = "release",
                .fn = verb_sriov_release,
                .options = OPT_DRY_RUN | OPT_FORCE,
                .help = "give a VF back to the driver it had before 'sriov bind'",
                .arg = "VF",
                .arg_value = CLI_VALUE_VF,
                .synopsis = "[--json|--csv] sriov release VF [--dry-run] [--force]",
                .description = "Gives the VF at PCI address VF back to the driver it had before\n"
                               "'sriov bind'; --force although a process uses it.",
                .examples = "amdsmi sriov release 0000:05:02.0\n"
                            "amdsmi sriov release 0000:05:02.0 --force",
                .exits = EXITS_CHANGE,
                .option_help = OPTION_HELP(
                        "force", "although the VF is in use"),
        },
        {
                .name = "vm",
                .fn = verb_vm,
                .help = "the VFs amdsmid holds for libvirt domains (amdsmi-libvirt-hook), their "
                        "caps",
                .synopsis = "[--json|--csv] vm",
                .description = "The VFs amdsmid holds for libvirt domains (reserved by\n"
                               "amdsmi-libvirt-hook when a domain starts) and their power caps.",
                .examples = "amdsmi vm\n"
                            "amdsmi vm --json",
                .exits = EXITS_READ,
        },
        {
                .name = "vm",
                .sub = "release",
                .fn = verb_vm_release,
                .options = OPT_FORCE,
                .help = "--force: drop a domain's reservation whose release never came",
                .arg = "DOMAIN",
                .arg_value = CLI_VALUE_FREE,
                .synopsis = "[--json] vm release DOMAIN --force",
                .description = "Drops the reservation of the libvirt domain DOMAIN (name or UUID)\n"
                               "whose release never came (libvirt died, the hook timed out).",
                .examples = "amdsmi vm release web1 --force",
                .exits = CLI_EXIT(0) | CLI_EXIT(1) | CLI_EXIT(2) | CLI_EXIT(3) | CLI_EXIT(5) |
                         CLI_EXIT(6),
                .option_help = OPTION_HELP(
                        "force", "drop the reservation (required)"),
        },
        {
                .name = "set",
                .fn = verb_set,
                .options = OPT_COMPUTE_PARTITION | OPT_MEMORY_PARTITION | OPT_POWER_CAP |
                           OPT_DRY_RUN | OPT_FORCE | OPT_TIMEOUT | OPT_PERF_SET,
                .help = "change settings: -C compute partition, -M memory partition, -o power cap "
                        "(W), -l/-d/-L performance, -p/-x PM policies",
                .synopsis = "-g SEL... [--json|--csv] set -C MODE|-M MODE [--dry-run] [--force] "
                            "[--timeout SECONDS]\n"
                            "-g SEL... [--json|--csv] set -o W [--dry-run]\n"
                            "-g SEL... [--json|--csv] set -l auto|manual|-d SCLK_MHZ [--dry-run]\n"
                            "-g SEL... [--json|--csv] set -L sclk|mclk min|max MHZ [--dry-run]\n"
                            "-g SEL... [--json|--csv] set -p POLICY|-x POLICY [--dry-run]",
                .description = "amd-smi's spelling of the changes: -C and -M as 'partition set\n"
                               "--compute/--memory', -o as 'power set --host'; -l the\n"
                               "performance level, -d determinism with its gfx clock ceiling,\n"
                               "-L a soft clock limit (the level switched to manual when the\n"
                               "kernel needs it), -p and -x the SOC P-state and XGMI\n"
                               "power-down policies (an id or a name as 'static' shows them).\n"
                               "One setting per command.",
                .examples = "amdsmi set -g 0 -C CPX --dry-run\n"
                            "amdsmi set -g 0 -o 600\n"
                            "amdsmi set -g 0 -d 1900\n"
                            "amdsmi set -g all -L sclk max 1800 --dry-run",
                .exits = EXITS_CHANGE | CLI_EXIT(8) | CLI_EXIT(10),
                .option_help = OPTION_HELP(
                        "power-cap", "the host's power cap in W (as power set --host)",
                        "force", "although VFs exist (gim hosts), or amdsmid runs\n"
                        "(with --direct)"),
        },
        {
                .name = "reset",
                .fn = verb_reset,
                .options = OPT_RELOAD_DRIVER | OPT_POWER_CAP | OPT_DRY_RUN | OPT_FORCE |
                           OPT_TIMEOUT | OPT_PERF_RESET | OPT_GPU_RESET,
                .help = "-G: reset GPUs; --reload-driver: reload amdgpu on a GPU's hive; "
                        "--power-cap: clear the host cap; -d, -c: performance",
                .synopsis = "-g SEL... [--json|--csv] reset -G [--dry-run] [--force] "
                            "[--timeout SECONDS]\n"
                            "-g SEL... [--json|--csv] reset --reload-driver [--dry-run] "
                            "[--timeout SECONDS]\n"
                            "-g SEL... [--json|--csv] reset --power-cap [--dry-run]\n"
                            "-g SEL... [--json|--csv] reset -d|-c [--dry-run]",
                .description =
                        "-G/--gpureset resets the selected GPUs through the kernel (amdgpu's\n"
                        "debugfs recovery, gim's reset_gpu on a host; the whole XGMI hive),\n"
                        "after a preflight that refuses KFD users (unless --force), VFs in\n"
                        "use by VMs and changes in flight; it waits for the GPUs, compares\n"
                        "modes, caps and VFs with before, and re-applies the desired state.\n"
                        "--reload-driver reloads amdgpu on the XGMI hive of the selected\n"
                        "GPUs, which applies a pending memory mode; --power-cap removes the\n"
                        "host's power cap source (as 'power clear --host'); -d leaves\n"
                        "determinism (the level back to auto), -c restores the default\n"
                        "clock limits and the level auto.",
                .examples = "amdsmi reset -g 0 -G --dry-run\n"
                            "amdsmi reset -g 0 --reload-driver --dry-run\n"
                            "amdsmi reset -g all --power-cap\n"
                            "amdsmi reset -g 0 -c",
                .exits = EXITS_CHANGE | CLI_EXIT(8) | CLI_EXIT(10),
                .option_help = OPTION_HELP(
                        "power-cap", "remove the host's power cap (as power clear\n"
                        "--host; no value)",
                        "force", "-G: although processes use the GPUs through\n"
                        "KFD; although amdsmid runs (with --direct)",
                        "timeout", "-G, --reload-driver: how long to wait for the\n"
                        "reset and the GPUs (default 60 s; 120 s)"),
        },
        {
                .name = "apply",
                .fn = verb_apply,
                .options = OPT_DRY_RUN | OPT_CHECK | OPT_PROFILE,
                .help = "amdsmid.conf and its profiles: --check compares, --dry-run shows what "
                        "amdsmid does; else amdsmid applies it",
                .synopsis = "[-g SEL]... [--json|--csv] apply --check [--profile NAME]\n"
                            "[-g SEL]... [--json|--csv] apply --dry-run [--profile NAME]\n"
                            "[--json] apply [--profile NAME]",
                .description =
                        "amdsmid.conf with its active profile: --check exits 0 when the GPUs\n"
                        "hold what it desires and 1, listing the differences, when they do\n"
                        "not; --dry-run shows what amdsmid would change to reach it; without\n"
                        "either, amdsmid applies it now. --profile NAME checks or plans the\n"
                        "[profile NAME] sections instead of the active profile; without\n"
                        "--check or --dry-run it makes NAME the active profile (amdsmid writes\n"
                        "the selector file) and applies it.",
                .examples = "amdsmi apply --check\n"
                            "amdsmi apply --check --profile cpx-nps4 --json\n"
                            "amdsmi apply --dry-run\n"
                            "amdsmi apply --profile cpx-nps4",
                .exits = EXITS_CHANGE | CLI_EXIT(8) | CLI_EXIT(10),
                .option_help = OPTION_HELP(
                        "check", "exit 0 when the GPUs match amdsmid.conf, 1 (with\n"
                        "the differences) when they do not",
                        "profile", "the profile to check, plan or make active"),
        },
        {
                .name = "export",
                .fn = verb_export,
                .options = OPT_PROFILE,
                .help = "the running state as an amdsmid.conf profile",
                .synopsis = "[-g SEL]... [--json] export [--profile NAME]",
                .description =
                        "The running state of the GPUs (compute and memory modes, power cap,\n"
                        "VF count) as amdsmid.conf text: a [profile NAME] section with what\n"
                        "all selected GPUs share and a [profile NAME gpu BDF] section for\n"
                        "what differs (NAME: exported). amdsmi apply --check --profile NAME\n"
                        "with that text in amdsmid.conf exits 0.",
                .examples = "amdsmi export --profile cpx-nps4 >> /etc/amdsmi/amdsmid.conf\n"
                            "amdsmi export -g 0,1",
                .exits = EXITS_READ,
                .option_help = OPTION_HELP(
                        "profile", "the name of the section (default: exported)"),
        },
        {
                .name = "reload",
                .fn = verb_reload,
                .help = "amdsmid re-reads amdsmid.conf and applies what changed (as SIGHUP)",
                .synopsis = "reload",
                .description = "amdsmid re-reads amdsmid.conf and applies what changed, as on\n"
                               "SIGHUP.",
                .examples = "amdsmi reload",
                .exits = CLI_EXIT(0) | CLI_EXIT(1) | CLI_EXIT(2) | CLI_EXIT(5) | CLI_EXIT(6),
        },
        {
                .name = "history",
                .fn = verb_history,
                .options = OPT_COUNT,
                .help = "the changes made: when, how, by whom, on which GPU, old and new value, "
                        "result",
                .synopsis = "[-g SEL]... [--json|--csv] [-n COUNT] history",
                .description =
                        "The changes made to the GPUs, newest last: when, through what (amdsmid\n"
                        "or in-process), by whom, on which GPU, the old and new value and the\n"
                        "result.",
                .examples = "amdsmi history\n"
                            "amdsmi history -g 0 -n 20\n"
                            "amdsmi history --json",
                .exits = CLI_EXIT(0) | CLI_EXIT(1) | CLI_EXIT(2) | CLI_EXIT(3) | CLI_EXIT(10),
                .option_help = OPTION_HELP(
                        "count", "show the last COUNT changes"),
        },
        {
                .name = "help",
                .help = "the help of a verb",
                .arg = "[VERB [SUB-VERB]]",
                .arg_value = CLI_VALUE_VERB,
                .synopsis = "help [VERB [SUB-VERB]]",
                .description = "The help of a verb: its synopsis, options, examples and exit\n"
                               "statuses, as 'amdsmi VERB [SUB-VERB] --help'. Without a verb, the\n"
                               "overview of all of them (amdsmi --help).",
                .examples = "amdsmi help partition set\n"
                            "amdsmi help",
                .exits = CLI_EXIT(0) | CLI_EXIT(2),
        },
};
/* clang-format on */
const size_t cli_n_verbs = ELEMENTSOF(cli_verbs);

/* Every option: getopt's table, the help and the completion are made from these rows. */
const struct cli_option cli_options[] = {
        { "gpu", 'g', required_argument, 'g', 0, false, "SEL",
          "select GPUs: N, N.P (partition P of GPU N), a PCI address\n"
          "(0000:c1:00.0 or c1:00.0), a unique id (16 hex digits) or\n"
          "all; repeatable, or a comma list (default: all; changes\n"
          "need an explicit -g)",
          CLI_VALUE_GPU },
        { "json", 0, no_argument, ARG_JSON, 0, false, NULL,
          "one JSON document (schema amdsmi/1) on stdout", CLI_VALUE_NONE },
        { "csv", 0, no_argument, ARG_CSV, 0, false, NULL, "CSV: a header line and one line per GPU",
          CLI_VALUE_NONE },
        { "direct", 0, no_argument, ARG_DIRECT, 0, false, NULL,
          "without amdsmid: read and change in-process (a change\nneeds root)", CLI_VALUE_NONE },
        { "watch", 'w', required_argument, 'w', OPT_WATCH, false, "SECONDS",
          "repeat every SECONDS (e.g. 0.5) until interrupted", CLI_VALUE_FREE },
        { "count", 'n', required_argument, 'n', OPT_WATCH | OPT_COUNT, false, "COUNT",
          "with --watch: stop after COUNT samples; history: the\n"
          "last COUNT entries",
          CLI_VALUE_FREE },
        { "throttle", 0, no_argument, ARG_THROTTLE, OPT_THROTTLE, false, NULL,
          "take a first sample 100 ms early, so that the THROTTLE\n"
          "column says which limiter held each GPU",
          CLI_VALUE_NONE },
        { "power", 'p', no_argument, 'p', OPT_FIELDS, false, NULL,
          "the power fields: draw, caps, voltage, energy", CLI_VALUE_NONE },
        { "temperature", 't', no_argument, 't', OPT_FIELDS, false, NULL,
          "the temperatures and their limits", CLI_VALUE_NONE },
        { "clock", 'c', no_argument, 'c', OPT_FIELDS, false, NULL, "the clocks", CLI_VALUE_NONE },
        { "usage", 'u', no_argument, 'u', OPT_FIELDS, false, NULL,
          "busy and activity, per partition too", CLI_VALUE_NONE },
        { "mem-usage", 'm', no_argument, 'm', OPT_FIELDS, false, NULL, "VRAM used and total",
          CLI_VALUE_NONE },
        { "pcie", 'P', no_argument, 'P', OPT_FIELDS, false, NULL, "the PCIe link and its counters",
          CLI_VALUE_NONE },
        { "xgmi", 'x', no_argument, 'x', OPT_FIELDS, false, NULL,
          "the XGMI links and their counters", CLI_VALUE_NONE },
        { "ecc", 'e', no_argument, 'e', OPT_FIELDS, false, NULL,
          "the RAS error totals (UE, CE, deferred)", CLI_VALUE_NONE },
        { "throttle-status", 'T', no_argument, 'T', OPT_FIELDS, false, NULL,
          "what held the GPU back: THROTTLE, the throttle\n"
          "status and residencies, the limiters (as --throttle,\n"
          "with a first sample 100 ms early)",
          CLI_VALUE_NONE },
        { "prometheus", 0, no_argument, ARG_PROMETHEUS, OPT_PROMETHEUS, false, NULL,
          "the Prometheus text format: every family of amdsmid's\n"
          "/metrics, once (amdsmid(8) METRICS)",
          CLI_VALUE_NONE },
        { "fields", 0, required_argument, ARG_FIELDS, OPT_FIELDS, false, "KEY,...",
          "only these keys of the JSON document (dotted, e.g.\n"
          "power.cap_w,gpu_metrics.pcie), in every format",
          CLI_VALUE_FREE },
        { "cper", 0, no_argument, ARG_CPER, OPT_CPER, false, NULL,
          "the CPER records of the debugfs ring (root)", CLI_VALUE_NONE },
        { "follow", 0, no_argument, ARG_FOLLOW, OPT_FOLLOW, false, NULL,
          "with --cper: stream new records until interrupted", CLI_VALUE_NONE },
        { "cper-dir", 0, required_argument, ARG_CPER_DIR, OPT_CPER_DIR, false, "DIR",
          "with --cper: write each record to DIR as a .cper file", CLI_VALUE_FREE },
        { "kind", 0, required_argument, ARG_KIND, OPT_KIND, false, "KIND,...",
          "only these kinds of events (vm_fault, thermal_throttle,\n"
          "gpu_pre_reset, gpu_post_reset, process_start, ...)",
          CLI_VALUE_FREE },
        { "compute", 0, required_argument, ARG_COMPUTE, OPT_COMPUTE, false, "MODE",
          "the compute mode: " COMPUTE_NAMES, CLI_VALUE_COMPUTE },
        { "memory", 0, required_argument, ARG_MEMORY, OPT_MEMORY, false, "MODE",
          "the memory mode: " MEMORY_NAMES, CLI_VALUE_MEMORY },
        { "compute-partition", 'C', required_argument, 'C', OPT_COMPUTE_PARTITION, false, "MODE",
          "the compute partition mode (as partition set --compute)", CLI_VALUE_COMPUTE },
        { "memory-partition", 'M', required_argument, 'M', OPT_MEMORY_PARTITION, false, "MODE",
          "the memory partition mode (as partition set --memory)", CLI_VALUE_MEMORY },
        { "power-cap", 'o', optional_argument, 'o', OPT_POWER_CAP, false, "[VALUE]",
          "set: the host's power cap (W); reset: clear it", CLI_VALUE_FREE },
        { "reload-driver", 0, no_argument, ARG_RELOAD_DRIVER, OPT_RELOAD_DRIVER, false, NULL,
          "reload amdgpu on the GPU's XGMI hive", CLI_VALUE_NONE },
        { "gpureset", 'G', no_argument, 'G', OPT_GPU_RESET, false, NULL,
          "reset the GPU through the kernel (its whole XGMI hive)", CLI_VALUE_NONE },
        { "host", 0, optional_argument, ARG_HOST, OPT_HOST, false, "[VALUE]",
          "set: the host's cap (600W, 600000mW, 0.6kW; a bare\n"
          "number is watts); clear: remove it",
          CLI_VALUE_FREE },
        { "vm", 0, required_argument, ARG_VM, OPT_VM, false, "NAME [VALUE]",
          "the cap of the VM NAME (name or UUID)", CLI_VALUE_FREE },
        { "vf", 0, required_argument, ARG_VF, OPT_VF, false, "BDF", "with --vm: the VM's VF",
          CLI_VALUE_VF },
        { "apml", 0, optional_argument, ARG_APML, OPT_APML, false, "[VALUE]",
          "the BMC's platform limit (APML)", CLI_VALUE_FREE },
        { "damaged", 0, no_argument, ARG_DAMAGED, OPT_DAMAGED, false, NULL,
          "drop the state file's damaged records", CLI_VALUE_NONE },
        { "num-vfs", 0, required_argument, ARG_NUM_VFS, OPT_NUM_VFS, false, "N",
          "the VF count of the PF", CLI_VALUE_FREE },
        { "autoprobe-off", 0, no_argument, ARG_AUTOPROBE_OFF, OPT_AUTOPROBE_OFF, false, NULL,
          "new VFs bind to no host driver", CLI_VALUE_NONE },
        { "persist", 0, no_argument, ARG_PERSIST, OPT_PERSIST, false, NULL,
          "on gim hosts: write gim's vf_num to\n"
          "/etc/modprobe.d/amdsmi-gim.conf for gim's next load",
          CLI_VALUE_NONE },
        { "check", 0, no_argument, ARG_CHECK, OPT_CHECK, false, NULL,
          "compare the GPUs with the desired state: exit 0 in\nsync, 1 drifted", CLI_VALUE_NONE },
        { "profile", 0, required_argument, ARG_PROFILE, OPT_PROFILE, false, "NAME",
          "a profile of amdsmid.conf ([profile NAME])", CLI_VALUE_FREE },
        { "dry-run", 0, no_argument, ARG_DRY_RUN, OPT_DRY_RUN, false, NULL,
          "print the plan, change nothing", CLI_VALUE_NONE },
        { "force", 0, no_argument, ARG_FORCE, OPT_FORCE, false, NULL,
          "although VFs exist or are in use, amdsmid runs\n"
          "(--direct), or gim's table lacks the VF count",
          CLI_VALUE_NONE },
        { "timeout", 0, required_argument, ARG_TIMEOUT, OPT_TIMEOUT, false, "SECONDS",
          "how long to wait for the driver", CLI_VALUE_FREE },
        { "perf-level", 'l', required_argument, ARG_PERF_LEVEL, OPT_PERF_SET, false, "LEVEL",
          "the performance level: auto or manual (perf_determinism: use -d)", CLI_VALUE_FREE },
        { "perf-determinism", 'd', required_argument, ARG_PERF_DETERMINISM, OPT_PERF_SET, false,
          "SCLK_MHZ", "determinism with this gfx clock ceiling in MHz", CLI_VALUE_FREE },
        { "clk-limit", 'L', required_argument, ARG_CLK_LIMIT, OPT_PERF_SET, false,
          "sclk|mclk min|max MHZ",
          "a soft clock limit within pp_od_clk_voltage's range\n"
          "(the level becomes manual)",
          CLI_VALUE_FREE },
        { "soc-pstate", 'p', required_argument, ARG_SOC_PSTATE, OPT_PERF_SET, false, "POLICY",
          "the SOC P-state policy (its id or name)", CLI_VALUE_FREE },
        { "xgmi-plpd", 'x', required_argument, ARG_XGMI_PLPD, OPT_PERF_SET, false, "POLICY",
          "the XGMI per-link power-down policy (its id or name)", CLI_VALUE_FREE },
        { "perf-determinism", 'd', no_argument, ARG_RESET_DETERMINISM, OPT_PERF_RESET, false, NULL,
          "leave determinism (the level back to auto)", CLI_VALUE_NONE },
        { "clocks", 'c', no_argument, ARG_RESET_CLOCKS, OPT_PERF_RESET, false, NULL,
          "the default clock limits and the level auto", CLI_VALUE_NONE },
        /* metric -l: after set's -l, the row other verbs read (it takes a value) */
        { "perf-level", 'l', no_argument, ARG_METRIC_PERF_LEVEL, OPT_FIELDS, false, NULL,
          "the performance level", CLI_VALUE_NONE },
        { "help", 'h', no_argument, 'h', 0, false, NULL, "show this help", CLI_VALUE_NONE },
        { "version", 0, no_argument, ARG_VERSION, 0, true, NULL, "show the version",
          CLI_VALUE_NONE },
};
const size_t cli_n_options = ELEMENTSOF(cli_options);

static const struct cli_option *find_option(int id) {
        for (size_t i = 0; i < cli_n_options; i++)
                if (cli_options[i].id == id)
                        return &cli_options[i];
        return NULL;
}

/* Keeps the first usage error; parsing goes on so that a later --json is still seen. */
#define USAGE(c, r, ...)                                           \
        do {                                                       \
                if ((r) == 0)                                      \
                        (r) = cli_fail((c), -EINVAL, __VA_ARGS__); \
        } while (0)

static bool is_long_option(const struct option *options, const char *name, size_t len) {
        for (; options->name; options++)
                if (strlen(options->name) == len && strncmp(options->name, name, len) == 0)
                        return true;
        return false;
}

/*
 * The value of an option whose value is optional or separate ("--host 600W", "--host=600W",
 * "--vm NAME 450W", "-o 600"): the attached argument, else the next argument when it does not
 * look like an option ("-5W" is taken, so that it is refused as a value, not as an option).
 */
static const char *take_value(int argc, char **argv, const char *attached) {
        const char *next;

        if (attached)
                return attached;
        if (optind >= argc)
                return NULL;
        next = argv[optind];
        if (next[0] == '-' && !(next[1] >= '0' && next[1] <= '9') && next[1] != '.')
                return NULL;
        optind++;
        return next;
}

/* A verb-specific option as the user spelled it, for "not valid for" messages. */
struct given_option {
        unsigned bit;
        char spelling[32];
};

/* Mode names: exact, case-insensitive ("cpx" is CPX); no prefixes, no "UNKNOWN". */
static int parse_compute(const char *s, enum amdsmi_compute_mode *ret) {
        enum amdsmi_compute_mode m;

        if (amdsmi_compute_mode_from_string(s, &m) < 0 || m == AMDSMI_COMPUTE_UNKNOWN)
                return -EINVAL;
        *ret = m;
        return 0;
}

static int parse_memory(const char *s, enum amdsmi_memory_mode *ret) {
        enum amdsmi_memory_mode m;

        if (amdsmi_memory_mode_from_string(s, &m) < 0 || m == AMDSMI_MEMORY_UNKNOWN)
                return -EINVAL;
        *ret = m;
        return 0;
}

/* --timeout: positive seconds (fractions allowed), at most one hour; rounded up to ms. */
static int parse_timeout(const char *s, unsigned *ret_ms) {
        uint64_t ns;

        if (parse_interval(s, &ns) < 0 || ns > UINT64_C(3600) * 1000000000u)
                return -EINVAL;
        *ret_ms = (unsigned) ((ns + 999999u) / 1000000u);
        return 0;
}

/* --kind: a comma list of event kind names. @return 0 or -EINVAL. */
static int parse_event_kinds(const char *s, uint64_t *ret) {
        uint64_t mask = 0;

        for (;;) {
                size_t n = strcspn(s, ",");
                char name[32];
                enum amdsmi_event_kind k;

                if (n == 0 || n >= sizeof(name))
                        return -EINVAL;
                memcpy(name, s, n);
                name[n] = '\0';
                if (strcmp(name, "health") == 0)
                        mask |= CLI_EVENT_HEALTH;
                else if (strcmp(name, "cper") == 0)
                        mask |= CLI_EVENT_CPER;
                else if (amdsmi_event_kind_from_string(name, &k) < 0 || k == AMDSMI_EVENT_UNKNOWN)
                        return -EINVAL;
                else
                        mask |= AMDSMI_EVENT_MASK(k);
                if (s[n] == '\0')
                        break;
                s += n + 1;
        }
        *ret = mask;
        return 0;
}

/* Whether every row of the option spelled @name (a long name, or @letter) takes a separate
 * argument: then the next word is its value, not the verb. */
static bool takes_value(const char *name, size_t len, char letter) {
        bool any = false;

        for (size_t i = 0; i < cli_n_options; i++) {
                const struct cli_option *o = &cli_options[i];

                if (name ? strlen(o->name) != len || strncmp(o->name, name, len) != 0
                         : o->short_name != letter)
                        continue;
                if (o->has_arg != required_argument)
                        return false;
                any = true;
        }
        return any;
}

/* The verb named in argv, before getopt runs (its options decide the tables): the first word
 * that names a verb and is not an option's value. NULL: none. */
static const struct verb *scan_verb(int argc, char **argv) {
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];

                if (strcmp(a, "--") == 0)
                        return NULL;
                if (a[0] == '-' && a[1] == '-') {
                        if (!strchr(a, '=') && takes_value(a + 2, strlen(a + 2), 0))
                                i++;
                        continue;
                }
                if (a[0] == '-' && a[1]) {
                        /* a cluster ("-gall", "-pt"): a letter with a value ends it */
                        for (const char *p = a + 1; *p; p++)
                                if (takes_value(NULL, 0, *p)) {
                                        if (!p[1])
                                                i++;
                                        break;
                                }
                        continue;
                }
                if (cli_find_verb(a, NULL) || cli_verb_has_subs(a)) {
                        const char *sub = i + 1 < argc && cli_verb_has_subs(a) ? argv[i + 1] : NULL;
                        const struct verb *v = sub ? cli_find_verb(a, sub) : NULL;

                        return v ? v : cli_find_verb(a, NULL);
                }
        }
        return NULL;
}

/* Which row of cli_options[] a spelling means for @v: the one @v accepts, else the first
 * (which then reads "not valid for" as before). Options with the same letter or long name
 * mean different things in different verbs, as in amd-smi (set -p, metric -p). */
static bool row_chosen(const struct verb *v, size_t i, bool by_letter) {
        const struct cli_option *o = &cli_options[i];
        size_t first = SIZE_MAX, valid = SIZE_MAX;

        for (size_t k = 0; k < cli_n_options; k++) {
                const struct cli_option *p = &cli_options[k];

                if (by_letter ? p->short_name != o->short_name : strcmp(p->name, o->name) != 0)
                        continue;
                if (first == SIZE_MAX)
                        first = k;
                if (valid == SIZE_MAX && v && cli_option_valid(p, v))
                        valid = k;
        }
        return i == (valid != SIZE_MAX ? valid : first);
}

/* Whether some row @v accepts is spelled @arg ("--name", "--name=x") or, for a letter, @letter. */
static bool spelling_valid(const struct verb *v, const char *arg, int letter) {
        bool is_long = strncmp(arg, "--", 2) == 0;
        size_t n = is_long ? strcspn(arg + 2, "=") : 0;

        for (size_t i = 0; i < cli_n_options; i++) {
                const struct cli_option *o = &cli_options[i];

                if (is_long ? strlen(o->name) == n && strncmp(o->name, arg + 2, n) == 0
                            : o->short_name == letter) {
                        if (cli_option_valid(o, v))
                                return true;
                }
        }
        return false;
}

/* @return 0 to run *ret_verb, 1 to exit with success (help, version), or -EINVAL. */
static int parse_argv(struct cli *c, int argc, char **argv, const struct verb **ret_verb) {
        struct option options[ELEMENTSOF(cli_options) + 1] = {};
        char optstring[2 + 3 * ELEMENTSOF(cli_options) + 1];
        int letter_id[256] = {}, long_index = -1;
        struct given_option given[16];
        size_t n_given = 0, n_long = 0;
        bool json = false, csv = false, want_help = false, want_version = false;
        const struct verb *verb = NULL, *scanned = scan_verb(argc, argv);
        const char *count_arg = NULL;
        size_t len;
        int opt, r = 0;

        /* getopt's tables, from cli_options[], for the verb named */
        len = 0;
        optstring[len++] = ':';
        for (size_t i = 0; i < cli_n_options; i++) {
                const struct cli_option *o = &cli_options[i];

                if (row_chosen(scanned, i, false))
                        options[n_long++] = (struct option){ o->name, o->has_arg, NULL, o->id };
                if (!o->short_name || !row_chosen(scanned, i, true))
                        continue;
                letter_id[(unsigned char) o->short_name] = o->id;
                optstring[len++] = o->short_name;
                if (o->has_arg != no_argument)
                        optstring[len++] = ':';
                if (o->has_arg == optional_argument)
                        optstring[len++] = ':';
        }
        optstring[len] = '\0';

        opterr = 0;
        while ((opt = getopt_long(argc, argv, optstring, options, &long_index)) >= 0) {
                const struct cli_option *o;

                /* a letter: the row the verb's table chose for it (a long name returns its
                 * own row's id) */
                if (long_index < 0 && opt > 0 && opt < 256 && letter_id[opt])
                        opt = letter_id[opt];
                long_index = -1;
                o = find_option(opt);
                /* the verbs that accept it; checked once the verb is known */
                unsigned bit = o ? o->verbs : 0;

                switch (opt) {
                case 'g': {
                        int k = selection_add(&c->selection, optarg);

                        if (k == -ENOMEM && r == 0)
                                r = cli_fail(c, k, "out of memory");
                        else if (k < 0)
                                USAGE(c, r,
                                      "invalid GPU selection '%s': expected N, N.P, a PCI "
                                      "address, a unique id or all, separated by commas",
                                      optarg);
                        break;
                }
                case ARG_JSON:
                        json = true;
                        break;
                case ARG_CSV:
                        csv = true;
                        break;
                case 'w':
                        if (parse_interval(optarg, &c->interval_ns) < 0)
                                USAGE(c, r,
                                      "invalid watch interval '%s': expected positive "
                                      "seconds, e.g. 2 or 0.5",
                                      optarg);
                        break;
                case 'n':
                        count_arg = optarg;
                        if (parse_count(optarg, &c->count) < 0)
                                USAGE(c, r, "invalid count '%s': expected a positive integer",
                                      optarg);
                        break;
                case ARG_COMPUTE:
                case 'C':
                        if (parse_compute(optarg, &c->partition.compute) < 0)
                                USAGE(c, r, "invalid compute partition mode '%s' (modes: %s)",
                                      optarg, COMPUTE_NAMES);
                        break;
                case ARG_MEMORY:
                case 'M':
                        if (parse_memory(optarg, &c->partition.memory) < 0)
                                USAGE(c, r, "invalid memory partition mode '%s' (modes: %s)",
                                      optarg, MEMORY_NAMES);
                        break;
                case ARG_DRY_RUN:
                        c->report.dry_run = true;
                        break;
                case ARG_CHECK:
                        c->apply.check = true;
                        break;
                case ARG_PROFILE:
                        if (!config_profile_name_valid(optarg))
                                USAGE(c, r,
                                      "invalid profile name '%s': 1 to 63 letters, digits, '.', "
                                      "'_' or '-', a letter or digit at both ends",
                                      optarg);
                        c->apply.profile = optarg;
                        break;
                case ARG_FORCE:
                        c->force = true;
                        break;
                case ARG_DIRECT:
                        /* every verb: reads and changes without amdsmid */
                        c->direct = true;
                        break;
                case ARG_THROTTLE:
                        c->metric.throttle = true;
                        break;
                case ARG_PROMETHEUS:
                        c->metric.prometheus = true;
                        break;
                case 'p':
                        c->metric.groups |= METRIC_GROUP_POWER;
                        break;
                case 't':
                        c->metric.groups |= METRIC_GROUP_TEMPERATURE;
                        break;
                case 'c':
                        c->metric.groups |= METRIC_GROUP_CLOCK;
                        break;
                case 'u':
                        c->metric.groups |= METRIC_GROUP_USAGE;
                        break;
                case 'm':
                        c->metric.groups |= METRIC_GROUP_MEMORY;
                        break;
                case 'P':
                        c->metric.groups |= METRIC_GROUP_PCIE;
                        break;
                case 'x':
                        c->metric.groups |= METRIC_GROUP_XGMI;
                        break;
                case 'e':
                        c->metric.groups |= METRIC_GROUP_ECC;
                        break;
                case ARG_METRIC_PERF_LEVEL:
                        c->metric.groups |= METRIC_GROUP_PERF_LEVEL;
                        break;
                case 'T':
                        c->metric.groups |= METRIC_GROUP_THROTTLE;
                        c->metric.throttle = true; /* the limiters need two samples */
                        break;
                case ARG_FIELDS: {
                        const char *bad = NULL;
                        int k = metric_add_fields(&c->metric, optarg, &bad);

                        if (k == -ENOMEM && r == 0)
                                r = cli_fail(c, k, "out of memory");
                        else if (k < 0)
                                USAGE(c, r,
                                      "invalid field '%s' in --fields: expected dotted keys of "
                                      "metric's GPU objects (power, temperatures, clocks, usage, "
                                      "memory, voltages, gpu_metrics, limiters, e.g. "
                                      "power.cap_w)",
                                      bad ? bad : optarg);
                        break;
                }
                case ARG_CPER:
                        c->health.cper = true;
                        break;
                case ARG_FOLLOW:
                        c->health.follow = true;
                        break;
                case ARG_CPER_DIR:
                        if (optarg[0] == '\0')
                                USAGE(c, r, "--cper-dir needs a directory");
                        c->health.cper_dir = optarg;
                        break;
                case ARG_KIND: {
                        int k = parse_event_kinds(optarg, &c->health.kinds);

                        if (k < 0)
                                USAGE(c, r,
                                      "invalid event kind in '%s' (kinds: vm_fault, "
                                      "thermal_throttle, gpu_pre_reset, gpu_post_reset, "
                                      "migrate_start, migrate_end, page_fault_start, "
                                      "page_fault_end, queue_eviction, queue_restore, "
                                      "unmap_from_gpu, process_start, process_end; "
                                      "through amdsmid also health, cper)",
                                      optarg);
                        break;
                }
                case ARG_TIMEOUT:
                        if (parse_timeout(optarg, &c->timeout_ms) < 0)
                                USAGE(c, r,
                                      "invalid timeout '%s': expected positive seconds, at "
                                      "most 3600",
                                      optarg);
                        break;
                case ARG_RELOAD_DRIVER:
                        c->partition.reload_driver = true;
                        break;
                case 'G':
                        c->gpu_reset.gpureset = true;
                        break;
                case ARG_HOST:
                        c->power.host = true;
                        c->power.host_value = take_value(argc, argv, optarg);
                        break;
                case ARG_APML:
                        c->power.apml = true;
                        c->power.apml_value = take_value(argc, argv, optarg);
                        break;
                case ARG_VM:
                        if (c->power.vm)
                                USAGE(c, r, "--vm given twice: one VM per command");
                        c->power.vm = true;
                        c->power.vm_name = optarg;
                        c->power.vm_value = take_value(argc, argv, NULL);
                        break;
                case ARG_VF:
                        c->power.vf_bdf = optarg;
                        break;
                case ARG_DAMAGED:
                        c->power.damaged = true;
                        break;
                case ARG_NUM_VFS: {
                        uint32_t n;

                        if (parse_u32(optarg, 10, &n) < 0)
                                USAGE(c, r,
                                      "invalid VF count '%s': expected a number, e.g. "
                                      "--num-vfs 4",
                                      optarg);
                        c->sriov.num_vfs = n;
                        c->sriov.num_vfs_set = true;
                        break;
                }
                case ARG_AUTOPROBE_OFF:
                        c->sriov.autoprobe_off = true;
                        break;
                case ARG_PERSIST:
                        c->sriov.persist = true;
                        break;
                case ARG_PERF_LEVEL:
                        c->perf.level = optarg;
                        c->perf.n_given++;
                        break;
                case ARG_PERF_DETERMINISM:
                        c->perf.determinism = optarg;
                        c->perf.n_given++;
                        break;
                case ARG_CLK_LIMIT:
                        /* three values: sclk|mclk min|max MHZ */
                        c->perf.clk = optarg;
                        c->perf.bound = take_value(argc, argv, NULL);
                        c->perf.mhz = c->perf.bound ? take_value(argc, argv, NULL) : NULL;
                        c->perf.clk_limit = true;
                        c->perf.n_given++;
                        break;
                case ARG_SOC_PSTATE:
                        c->perf.soc_pstate = optarg;
                        c->perf.n_given++;
                        break;
                case ARG_XGMI_PLPD:
                        c->perf.xgmi_plpd = optarg;
                        c->perf.n_given++;
                        break;
                case ARG_RESET_DETERMINISM:
                        c->perf.reset_determinism = true;
                        c->perf.n_given++;
                        break;
                case ARG_RESET_CLOCKS:
                        c->perf.reset_clocks = true;
                        c->perf.n_given++;
                        break;
                case 'o':
                        c->power.cap = true;
                        c->power.cap_value = take_value(argc, argv, optarg);
                        /* amd-smi's newer spelling: -o ppt0 VALUE */
                        if (c->power.cap_value && (strcasecmp(c->power.cap_value, "ppt0") == 0 ||
                                                   strcasecmp(c->power.cap_value, "ppt1") == 0)) {
                                if (strcasecmp(c->power.cap_value, "ppt1") == 0)
                                        USAGE(c, r,
                                              "-o ppt1: the PPT1 (fast) limit is shown, not set; "
                                              "amdsmi arbitrates and sets PPT0");
                                c->power.cap_value = take_value(argc, argv, NULL);
                        }
                        break;
                case 'h':
                        want_help = true;
                        break;
                case ARG_VERSION:
                        want_version = true;
                        break;
                case ':':
                        if (scanned && !spelling_valid(scanned, argv[optind - 1], optopt)) {
                                /* the option of another verb: say that, not its argument */
                                if (strncmp(argv[optind - 1], "--", 2) == 0)
                                        USAGE(c, r, "option '%s' is not valid for '%s%s%s'",
                                              argv[optind - 1], scanned->name,
                                              scanned->sub ? " " : "",
                                              scanned->sub ? scanned->sub : "");
                                else
                                        USAGE(c, r, "option '-%c' is not valid for '%s%s%s'",
                                              optopt, scanned->name, scanned->sub ? " " : "",
                                              scanned->sub ? scanned->sub : "");
                        } else if (strncmp(argv[optind - 1], "--", 2) == 0)
                                USAGE(c, r, "option '%s' needs an argument", argv[optind - 1]);
                        else
                                USAGE(c, r, "option '-%c' needs an argument", optopt);
                        break;
                case '?':
                default:
                        if (strncmp(argv[optind - 1], "--", 2) == 0) {
                                const char *arg = argv[optind - 1];
                                const char *eq = strchr(arg, '=');

                                if (eq && is_long_option(options, arg + 2, (size_t) (eq - arg - 2)))
                                        USAGE(c, r, "option '%.*s' takes no argument",
                                              (int) (eq - arg), arg);
                                else
                                        USAGE(c, r, "unknown option '%s'", arg);
                        } else
                                USAGE(c, r, "unknown option '-%c'", optopt);
                        break;
                }
                if (bit && n_given < ELEMENTSOF(given)) {
                        /* the option as typed: "--compute", "-C" (also "-Ccpx", "--compute=x") */
                        const char *a = argv[optind - 1];

                        if (optarg && a == optarg && optind >= 2 &&
                            !(bit & (OPT_DRY_RUN | OPT_CHECK | OPT_FORCE | OPT_RELOAD_DRIVER |
                                     OPT_AUTOPROBE_OFF | OPT_PERSIST)))
                                a = argv[optind - 2];
                        /* options whose value was taken by hand: find the option itself */
                        for (int k = optind - 1;
                             k > 0 && ((bit & (OPT_HOST | OPT_APML | OPT_VM | OPT_POWER_CAP)) ||
                                       opt == ARG_CLK_LIMIT);
                             k--)
                                if (argv[k][0] == '-' &&
                                    !(argv[k][1] >= '0' && argv[k][1] <= '9')) {
                                        a = argv[k];
                                        break;
                                }
                        given[n_given].bit = bit;
                        if (strncmp(a, "--", 2) == 0)
                                snprintf(given[n_given].spelling, sizeof(given[0].spelling), "%.*s",
                                         (int) strcspn(a, "="), a);
                        else
                                snprintf(given[n_given].spelling, sizeof(given[0].spelling), "-%c",
                                         o && o->short_name ? o->short_name : opt);
                        n_given++;
                }
        }

        if (json && csv)
                USAGE(c, r, "--json and --csv are mutually exclusive");
        else if (json)
                c->format = OUTPUT_JSON;
        else if (csv)
                c->format = OUTPUT_CSV;

        if (optind < argc) {
                const char *name = argv[optind], *sub = NULL;
                int next = optind + 1;

                if (next < argc && cli_verb_has_subs(name) && cli_find_verb(name, argv[next])) {
                        sub = argv[next];
                        next++;
                }
                verb = cli_find_verb(name, sub);
                /* health exits as monitoring plugins expect, a usage error as UNKNOWN too */
                if (verb && (verb->fn == verb_health || verb->fn == verb_doctor))
                        c->plugin_exits = true;
                if (verb && verb->sub) {
                        static char command[64];

                        snprintf(command, sizeof(command), "%s %s", verb->name, verb->sub);
                        c->report.command = command;
                } else if (verb)
                        c->report.command = verb->name;
                else
                        USAGE(c, r, "unknown verb '%s' (verbs: %s)", name, cli_verb_names());
                if (verb && !verb->fn) {
                        /* help [VERB [SUB-VERB]]: that verb's help, as VERB --help; help
                         * alone: the global help, but help --help: its own */
                        if (!want_help)
                                verb = NULL;
                        want_help = true;
                        if (next < argc) {
                                name = argv[next++];
                                sub = next < argc && cli_verb_has_subs(name) ? argv[next++] : NULL;
                                verb = cli_find_verb(name, sub);
                                if (!verb && !cli_find_verb(name, NULL))
                                        USAGE(c, r, "unknown verb '%s' (verbs: %s)", name,
                                              cli_verb_names());
                                else if (!verb)
                                        USAGE(c, r, "unknown sub-verb '%s' of '%s'", sub, name);
                        }
                } else if (next < argc && verb && verb->arg)
                        /* the one positional argument of verbs that take one (sriov bind VF) */
                        c->argument = argv[next++];
                if (next < argc) {
                        if (verb && cli_verb_has_subs(verb->name) && !verb->sub)
                                USAGE(c, r, "unknown sub-verb '%s' of '%s'", argv[next],
                                      verb->name);
                        else
                                USAGE(c, r, "unexpected argument '%s'", argv[next]);
                }
        }

        if (r < 0)
                return r;
        if (want_help) {
                if (verb)
                        help_verb(stdout, verb);
                else
                        help_global(stdout);
                return 1;
        }
        if (want_version) {
                printf("amdsmi %s (libamdsmi %s)\n", PACKAGE_VERSION, amdsmi_version());
                return 1;
        }
        if (!verb)
                return cli_fail(c, -EINVAL, "missing verb (verbs: %s); see --help",
                                cli_verb_names());
        /* a verb's positional argument is required: no verb runs without it */
        if (verb->arg && !c->argument)
                return cli_fail(c, -EINVAL, "'%s' needs a %s: amdsmi %s %s", c->report.command,
                                verb->arg, c->report.command, verb->arg);
        for (size_t i = 0; i < n_given; i++) {
                if (verb->options & given[i].bit)
                        continue;
                if (given[i].bit == OPT_WATCH)
                        return cli_fail(c, -EINVAL, "--watch is not supported by '%s'",
                                        c->report.command);
                if (given[i].bit & (OPT_COMPUTE | OPT_MEMORY) &&
                    verb->options & (OPT_COMPUTE_PARTITION | OPT_MEMORY_PARTITION))
                        return cli_fail(c, -EINVAL, "option '%s' is not valid for '%s' (use %s)",
                                        given[i].spelling, c->report.command,
                                        given[i].bit == OPT_COMPUTE ? "-C/--compute-partition"
                                                                    : "-M/--memory-partition");
                if (given[i].bit & (OPT_COMPUTE_PARTITION | OPT_MEMORY_PARTITION) &&
                    verb->options & (OPT_COMPUTE | OPT_MEMORY))
                        return cli_fail(c, -EINVAL, "option '%s' is not valid for '%s' (use %s)",
                                        given[i].spelling, c->report.command,
                                        given[i].bit == OPT_COMPUTE_PARTITION ? "--compute"
                                                                              : "--memory");
                return cli_fail(c, -EINVAL, "option '%s' is not valid for '%s'", given[i].spelling,
                                c->report.command);
        }
        if (count_arg && c->interval_ns == 0 && !(verb->options & OPT_COUNT))
                return cli_fail(c, -EINVAL, "--count needs --watch");
        if (c->metric.prometheus) {
                if (c->format != OUTPUT_TABLE)
                        return cli_fail(c, -EINVAL,
                                        "--prometheus prints the Prometheus text "
                                        "format: not with --json or --csv");
                if (c->interval_ns > 0)
                        return cli_fail(c, -EINVAL,
                                        "--prometheus prints one sample: not with "
                                        "--watch (Prometheus scrapes amdsmid's "
                                        "/metrics for that)");
                if (c->metric.groups || c->metric.fields)
                        return cli_fail(c, -EINVAL,
                                        "--prometheus prints every family: not "
                                        "with -p, -t, -c, -u, -m, -P, -x, -T, -e or "
                                        "--fields");
        }

        *ret_verb = verb;
        return 0;
}

int main(int argc, char **argv) {
        struct cli c = {
                .format = OUTPUT_TABLE,
                .partition = { .compute = AMDSMI_COMPUTE_UNKNOWN, .memory = AMDSMI_MEMORY_UNKNOWN },
        };
        const struct verb *verb = NULL;
        int r;

        /* the power slice answers what the power limiter of `metric` ran against */
        c.power_limit = power_cli_limit;
        report_set_hostname(&c.report);
        /* a watch says each note once, on the sample where it first comes up */
        c.report.notes_once = true;
        cli_report_init(&c);

        if (argc >= 2 && strcmp(argv[1], "__complete") == 0)
                /* the shell completion asks (amdsmi.bash): not a verb, not in any help */
                return help_complete(stdout, argc - 2, argv + 2) < 0 ? EXIT_GENERIC : EXIT_OK;

        if (argc <= 1)
                /* amdsmi alone: the machine at a glance (any option means a command) */
                r = verb_overview(&c);
        else {
                r = parse_argv(&c, argc, argv, &verb);
                cli_report_init(&c); /* the format is known */
                if (r == 0)
                        r = verb->fn(&c);
        }

        if (r < 0 && c.format == OUTPUT_JSON && !c.json_printed) {
                json_object *doc = cli_error_document(&c, r);

                if (doc)
                        output_json(stdout, doc, c.interval_ns > 0);
                json_object_put(doc);
        }
        if (fflush(stdout) != 0 && r >= 0) {
                r = errno > 0 ? -errno : -EPIPE;
                fprintf(stderr, "amdsmi: cannot write to standard output: %s\n", strerror(-r));
        }

        cli_bus_close(&c);
        amdsmi_ctx_unref(c.set.ctx);
        selection_clear(&c.selection);
        strv_free(c.metric.fields);
        gpu_set_clear(&c.set);
        report_clear(&c.report);
        if (c.plugin_exits)
                return r < 0 ? 3 : c.exit_status;
        if (r >= 0 && c.apply.drifted) /* apply --check: the check-mode contract */
                return EXIT_GENERIC;
        return r < 0 ? exit_code_from_errno(r) : EXIT_OK;
}
