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

#include "cli.h"
#include "exit-codes.h"
#include "parse-util.h"

/* The options a verb accepts (struct verb.options). -h, --version, -g, --json and --csv are
 * accepted by every verb. */
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
        OPT_COUNT = 1u << 17, /* -n without --watch: the last COUNT entries (history) */
        OPT_DAMAGED = 1u << 18, /* --damaged (power clear) */
        OPT_THROTTLE = 1u << 19, /* --throttle (metric) */
};

struct verb {
        const char *name;
        const char *sub; /* a sub-verb ("partition set"), NULL for the verb itself */
        int (*fn)(struct cli *c);
        unsigned options;
        const char *help;
        const char *arg; /* the name of its one positional argument ("VF"), NULL: none */
};

/* Feature slices add their verbs here. */
static const struct verb verbs[] = {
        { "list", NULL, verb_list, 0, "one line per GPU: address, product, role, driver, modes" },
        { "static", NULL, verb_static, 0, "identity, PCIe, memory, firmware and partitions" },
        { "metric", NULL, verb_metric, OPT_WATCH | OPT_THROTTLE,
          "power, temperatures, clocks, activity, counters" },
        { "partition", NULL, verb_partition, 0,
          "compute and memory partition modes, what is available, the partitions" },
        { "partition", "set", verb_partition_set,
          OPT_COMPUTE | OPT_MEMORY | OPT_DRY_RUN | OPT_FORCE | OPT_TIMEOUT,
          "change the compute (--compute) and memory (--memory) partition modes" },
        { "power", NULL, verb_power, OPT_WATCH,
          "power draw, caps and range, the Host/VM/APML sources and which one binds" },
        { "power", "set", verb_power_set,
          OPT_HOST | OPT_APML | OPT_VM | OPT_VF | OPT_DRY_RUN | OPT_FORCE,
          "set power sources: --host W, --vm NAME W [--vf BDF], --apml W" },
        { "power", "clear", verb_power_clear,
          OPT_HOST | OPT_APML | OPT_VM | OPT_DAMAGED | OPT_DRY_RUN | OPT_FORCE,
          "remove power sources: --host, --vm NAME, --apml; --damaged drops damaged records" },
        { "power", "apply", verb_power_apply, OPT_DRY_RUN | OPT_FORCE,
          "apply the arbitrated cap again (after a GPU reset, a new APML file)" },
        { "sriov", NULL, verb_sriov, 0,
          "SR-IOV per PF: VF count and how it is set, the VFs, their drivers and users" },
        { "sriov", "set", verb_sriov_set,
          OPT_NUM_VFS | OPT_DRY_RUN | OPT_FORCE | OPT_AUTOPROBE_OFF | OPT_PERSIST | OPT_TIMEOUT,
          "set the VF count of PFs (--num-vfs N); gim hosts: --persist" },
        { "sriov", "bind", verb_sriov_bind, OPT_DRY_RUN | OPT_FORCE,
          "hand a VF to vfio-pci for a VM (driver_override, unbind, probe)", "VF" },
        { "sriov", "release", verb_sriov_release, OPT_DRY_RUN | OPT_FORCE,
          "give a VF back to the driver it had before 'sriov bind'", "VF" },
        { "vm", NULL, verb_vm, 0,
          "the VFs amdsmid holds for libvirt domains (amdsmi-libvirt-hook), their caps" },
        { "vm", "release", verb_vm_release, OPT_FORCE,
          "--force: drop a domain's reservation whose release never came", "DOMAIN" },
        { "set", NULL, verb_set,
          OPT_COMPUTE_PARTITION | OPT_MEMORY_PARTITION | OPT_POWER_CAP | OPT_DRY_RUN |
                  OPT_FORCE | OPT_TIMEOUT,
          "change settings: -C compute partition, -M memory partition, -o power cap (W)" },
        { "reset", NULL, verb_reset,
          OPT_RELOAD_DRIVER | OPT_POWER_CAP | OPT_DRY_RUN | OPT_FORCE | OPT_TIMEOUT,
          "--reload-driver: reload amdgpu on a GPU's hive; --power-cap: clear the host cap" },
        { "apply", NULL, verb_apply, OPT_DRY_RUN,
          "amdsmid.conf: --dry-run shows what amdsmid does with it; else amdsmid applies it" },
        { "reload", NULL, verb_reload, 0,
          "amdsmid re-reads amdsmid.conf and applies what changed (as SIGHUP)" },
        { "history", NULL, verb_history, OPT_COUNT,
          "the changes made: when, how, by whom, on which GPU, old and new value, result" },
};

static void help(void) {
        printf("Usage: amdsmi [OPTIONS] VERB [SUB-VERB] [ARGUMENT]\n"
               "\n"
               "System management of AMD Instinct GPUs.\n"
               "\n"
               "Verbs:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                char name[48];

                snprintf(name, sizeof(name), "%s%s%s%s%s", verbs[i].name, verbs[i].sub ? " " : "",
                         verbs[i].sub ? verbs[i].sub : "", verbs[i].arg ? " " : "",
                         verbs[i].arg ? verbs[i].arg : "");
                if (strlen(name) > 14)
                        printf("  %s\n  %-14s %s\n", name, "", verbs[i].help);
                else
                        printf("  %-14s %s\n", name, verbs[i].help);
        }
        printf("\n"
               "Options:\n"
               "  -g, --gpu SEL        select GPUs: N, N.P (partition P of GPU N), a PCI address\n"
               "                       (0000:c1:00.0 or c1:00.0) or all; repeatable, or a comma\n"
               "                       list (default: all; changes need an explicit -g)\n"
               "      --json           one JSON document (schema amdsmi/1) on stdout\n"
               "      --csv            CSV: a header line and one line per GPU\n"
               "  -w, --watch SECONDS  metric: repeat every SECONDS (e.g. 0.5) until interrupted\n"
               "  -n, --count COUNT    with --watch: stop after COUNT samples; history: the\n"
               "                       last COUNT entries\n"
               "      --throttle       metric: take a first sample 100 ms early, so that the\n"
               "                       THROTTLE column says which limiter held each GPU\n"
               "      --compute MODE   partition set: compute mode SPX, DPX, TPX, QPX or CPX\n"
               "      --memory MODE    partition set: memory mode NPS1, NPS2, NPS4 or NPS8\n"
               "  -C, --compute-partition MODE\n"
               "                       set: the compute partition mode (as --compute)\n"
               "  -M, --memory-partition MODE\n"
               "                       set: the memory partition mode (as --memory)\n"
               "      --dry-run        changes: print the plan, change nothing\n"
               "      --force          changes on gim hosts: although VFs exist; sriov set /\n"
               "                       release: although VFs are bound to vfio-pci or in use;\n"
               "                       sriov set --persist: a VF count gim's table lacks;\n"
               "                       --direct: although amdsmid runs\n"
               "      --direct         without amdsmid: read and change in-process (root)\n"
               "      --num-vfs N      sriov set: the VF count of the PF\n"
               "      --autoprobe-off  sriov set: new VFs bind to no host driver\n"
               "      --persist        sriov set on gim hosts: write gim's vf_num to\n"
               "                       /etc/modprobe.d/amdsmi-gim.conf for gim's next load\n"
               "      --timeout SECONDS\n"
               "                       changes: how long to wait for the driver\n"
               "      --reload-driver  reset: reload amdgpu on the GPU's XGMI hive\n"
               "      --host [VALUE]   power set: the host's cap (600W, 600000mW, 0.6kW; a bare\n"
               "                       number is watts); power clear: remove it\n"
               "      --vm NAME [VALUE]\n"
               "                       power set / clear: the cap of the VM NAME (name or UUID)\n"
               "      --vf BDF         power set --vm: the VM's VF\n"
               "      --apml [VALUE]   power set / clear: the BMC's platform limit (APML)\n"
               "      --damaged        power clear: drop the state file's damaged records\n"
               "  -o, --power-cap VALUE\n"
               "                       set: the host's power cap; reset --power-cap: clear it\n"
               "  -h, --help           show this help\n"
               "      --version        show the version\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage, 3 not found, 4 not supported, 5 busy,\n"
               "6 permission denied, 7 out of range, 8 reload required, 9 device error,\n"
               "10 state damaged.\n");
}

static const struct verb *find_verb(const char *name, const char *sub) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (strcmp(verbs[i].name, name) == 0 &&
                    (sub ? verbs[i].sub && strcmp(verbs[i].sub, sub) == 0 : !verbs[i].sub))
                        return &verbs[i];
        return NULL;
}

static bool verb_has_subs(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (verbs[i].sub && strcmp(verbs[i].name, name) == 0)
                        return true;
        return false;
}

static const char *verb_names(void) {
        static char buf[256];
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(verbs) && n < sizeof(buf); i++)
                if (!verbs[i].sub)
                        n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "",
                                               verbs[i].name);
        return buf;
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
};

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

#define COMPUTE_NAMES "SPX, DPX, TPX, QPX, CPX"
#define MEMORY_NAMES "NPS1, NPS2, NPS3, NPS4, NPS6, NPS8"

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

/* @return 0 to run *ret_verb, 1 to exit with success (help, version), or -EINVAL. */
static int parse_argv(struct cli *c, int argc, char **argv, const struct verb **ret_verb) {
        /* clang-format off */
        static const struct option options[] = {
                { "gpu", required_argument, NULL, 'g' },
                { "json", no_argument, NULL, ARG_JSON },
                { "csv", no_argument, NULL, ARG_CSV },
                { "watch", required_argument, NULL, 'w' },
                { "count", required_argument, NULL, 'n' },
                { "compute", required_argument, NULL, ARG_COMPUTE },
                { "memory", required_argument, NULL, ARG_MEMORY },
                { "compute-partition", required_argument, NULL, 'C' },
                { "memory-partition", required_argument, NULL, 'M' },
                { "dry-run", no_argument, NULL, ARG_DRY_RUN },
                { "force", no_argument, NULL, ARG_FORCE },
                { "direct", no_argument, NULL, ARG_DIRECT },
                { "throttle", no_argument, NULL, ARG_THROTTLE },
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                { "reload-driver", no_argument, NULL, ARG_RELOAD_DRIVER },
                { "host", optional_argument, NULL, ARG_HOST },
                { "apml", optional_argument, NULL, ARG_APML },
                { "vm", required_argument, NULL, ARG_VM },
                { "vf", required_argument, NULL, ARG_VF },
                { "power-cap", optional_argument, NULL, 'o' },
                { "num-vfs", required_argument, NULL, ARG_NUM_VFS },
                { "autoprobe-off", no_argument, NULL, ARG_AUTOPROBE_OFF },
                { "persist", no_argument, NULL, ARG_PERSIST },
                { "damaged", no_argument, NULL, ARG_DAMAGED },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        /* clang-format on */
        struct given_option given[16];
        size_t n_given = 0;
        bool json = false, csv = false, want_help = false, want_version = false;
        const struct verb *verb = NULL;
        const char *count_arg = NULL;
        int opt, r = 0;

        opterr = 0;
        while ((opt = getopt_long(argc, argv, ":g:w:n:C:M:o::h", options, NULL)) >= 0) {
                unsigned bit = 0;

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
                        bit = OPT_WATCH;
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
                        bit = opt == 'C' ? OPT_COMPUTE_PARTITION : OPT_COMPUTE;
                        if (parse_compute(optarg, &c->partition.compute) < 0)
                                USAGE(c, r, "invalid compute partition mode '%s' (modes: %s)",
                                      optarg, COMPUTE_NAMES);
                        break;
                case ARG_MEMORY:
                case 'M':
                        bit = opt == 'M' ? OPT_MEMORY_PARTITION : OPT_MEMORY;
                        if (parse_memory(optarg, &c->partition.memory) < 0)
                                USAGE(c, r, "invalid memory partition mode '%s' (modes: %s)",
                                      optarg, MEMORY_NAMES);
                        break;
                case ARG_DRY_RUN:
                        bit = OPT_DRY_RUN;
                        c->report.dry_run = true;
                        break;
                case ARG_FORCE:
                        bit = OPT_FORCE;
                        c->force = true;
                        break;
                case ARG_DIRECT:
                        /* every verb: reads and changes without amdsmid */
                        c->direct = true;
                        break;
                case ARG_THROTTLE:
                        bit = OPT_THROTTLE;
                        c->metric.throttle = true;
                        break;
                case ARG_TIMEOUT:
                        bit = OPT_TIMEOUT;
                        if (parse_timeout(optarg, &c->timeout_ms) < 0)
                                USAGE(c, r,
                                      "invalid timeout '%s': expected positive seconds, at "
                                      "most 3600",
                                      optarg);
                        break;
                case ARG_RELOAD_DRIVER:
                        bit = OPT_RELOAD_DRIVER;
                        c->partition.reload_driver = true;
                        break;
                case ARG_HOST:
                        bit = OPT_HOST;
                        c->power.host = true;
                        c->power.host_value = take_value(argc, argv, optarg);
                        break;
                case ARG_APML:
                        bit = OPT_APML;
                        c->power.apml = true;
                        c->power.apml_value = take_value(argc, argv, optarg);
                        break;
                case ARG_VM:
                        bit = OPT_VM;
                        if (c->power.vm)
                                USAGE(c, r, "--vm given twice: one VM per command");
                        c->power.vm = true;
                        c->power.vm_name = optarg;
                        c->power.vm_value = take_value(argc, argv, NULL);
                        break;
                case ARG_VF:
                        bit = OPT_VF;
                        c->power.vf_bdf = optarg;
                        break;
                case ARG_DAMAGED:
                        bit = OPT_DAMAGED;
                        c->power.damaged = true;
                        break;
                case ARG_NUM_VFS: {
                        uint32_t n;

                        bit = OPT_NUM_VFS;
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
                        bit = OPT_AUTOPROBE_OFF;
                        c->sriov.autoprobe_off = true;
                        break;
                case ARG_PERSIST:
                        bit = OPT_PERSIST;
                        c->sriov.persist = true;
                        break;
                case 'o':
                        bit = OPT_POWER_CAP;
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
                        if (strncmp(argv[optind - 1], "--", 2) == 0)
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
                            !(bit & (OPT_DRY_RUN | OPT_FORCE | OPT_RELOAD_DRIVER |
                                     OPT_AUTOPROBE_OFF | OPT_PERSIST)))
                                a = argv[optind - 2];
                        /* options whose value was taken by hand: find the option itself */
                        for (int k = optind - 1; k > 0 && bit & (OPT_HOST | OPT_APML | OPT_VM |
                                                                 OPT_POWER_CAP);
                             k--)
                                if (argv[k][0] == '-' &&
                                    !(argv[k][1] >= '0' && argv[k][1] <= '9')) {
                                        a = argv[k];
                                        break;
                                }
                        given[n_given].bit = bit;
                        if (strncmp(a, "--", 2) == 0)
                                snprintf(given[n_given].spelling, sizeof(given[0].spelling),
                                         "%.*s", (int) strcspn(a, "="), a);
                        else
                                snprintf(given[n_given].spelling, sizeof(given[0].spelling),
                                         "-%c", opt);
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

                if (next < argc && verb_has_subs(name) && find_verb(name, argv[next])) {
                        sub = argv[next];
                        next++;
                }
                verb = find_verb(name, sub);
                if (verb && verb->sub) {
                        static char command[64];

                        snprintf(command, sizeof(command), "%s %s", verb->name, verb->sub);
                        c->report.command = command;
                } else if (verb)
                        c->report.command = verb->name;
                else
                        USAGE(c, r, "unknown verb '%s' (verbs: %s)", name, verb_names());
                /* the one positional argument of verbs that take one (sriov bind VF) */
                if (next < argc && verb && verb->arg)
                        c->argument = argv[next++];
                if (next < argc) {
                        if (verb && verb_has_subs(verb->name) && !verb->sub)
                                USAGE(c, r, "unknown sub-verb '%s' of '%s'", argv[next],
                                      verb->name);
                        else
                                USAGE(c, r, "unexpected argument '%s'", argv[next]);
                }
        }

        if (r < 0)
                return r;
        if (want_help) {
                help();
                return 1;
        }
        if (want_version) {
                printf("amdsmi %s (libamdsmi %s)\n", PACKAGE_VERSION, amdsmi_version());
                return 1;
        }
        if (!verb)
                return cli_fail(c, -EINVAL, "missing verb (verbs: %s); see --help", verb_names());
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
                        return cli_fail(c, -EINVAL,
                                        "option '%s' is not valid for '%s' (use %s)",
                                        given[i].spelling, c->report.command,
                                        given[i].bit == OPT_COMPUTE ? "-C/--compute-partition"
                                                                    : "-M/--memory-partition");
                if (given[i].bit & (OPT_COMPUTE_PARTITION | OPT_MEMORY_PARTITION) &&
                    verb->options & (OPT_COMPUTE | OPT_MEMORY))
                        return cli_fail(c, -EINVAL,
                                        "option '%s' is not valid for '%s' (use %s)",
                                        given[i].spelling, c->report.command,
                                        given[i].bit == OPT_COMPUTE_PARTITION ? "--compute"
                                                                              : "--memory");
                return cli_fail(c, -EINVAL, "option '%s' is not valid for '%s'",
                                given[i].spelling, c->report.command);
        }
        if (count_arg && c->interval_ns == 0 && !(verb->options & OPT_COUNT))
                return cli_fail(c, -EINVAL, "--count needs --watch");

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
        cli_report_init(&c);

        r = parse_argv(&c, argc, argv, &verb);
        cli_report_init(&c); /* the format is known */
        if (r == 0)
                r = verb->fn(&c);

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
        gpu_set_clear(&c.set);
        report_clear(&c.report);
        return r < 0 ? exit_code_from_errno(r) : EXIT_OK;
}
