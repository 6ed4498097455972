/* SPDX-License-Identifier: MIT */
/*
 * amdsmi: the administration CLI of libamdsmi.
 *
 *   amdsmi [OPTIONS] VERB
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
#include <unistd.h>

#include "cli.h"
#include "exit-codes.h"

enum {
        VERB_WATCH = 1u << 0, /* accepts -w / -n */
};

struct verb {
        const char *name;
        int (*fn)(struct cli *c);
        unsigned flags;
        const char *help;
};

/* Feature slices add their verbs here. */
static const struct verb verbs[] = {
        { "list", verb_list, 0, "one line per GPU: address, product, role, driver, modes" },
        { "static", verb_static, 0, "identity, PCIe, memory, firmware and partitions" },
        { "metric", verb_metric, VERB_WATCH, "power, temperatures, clocks, activity, counters" },
};

static void help(void) {
        printf("Usage: amdsmi [OPTIONS] VERB\n"
               "\n"
               "System management of AMD Instinct GPUs.\n"
               "\n"
               "Verbs:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                printf("  %-10s %s\n", verbs[i].name, verbs[i].help);
        printf("\n"
               "Options:\n"
               "  -g, --gpu SEL        select GPUs: N, N.P (partition P of GPU N), a PCI address\n"
               "                       (0000:c1:00.0 or c1:00.0) or all; repeatable, or a comma\n"
               "                       list (default: all)\n"
               "      --json           one JSON document (schema amdsmi/1) on stdout\n"
               "      --csv            CSV: a header line and one line per GPU\n"
               "  -w, --watch SECONDS  metric: repeat every SECONDS (e.g. 0.5) until interrupted\n"
               "  -n, --count COUNT    with --watch: stop after COUNT samples\n"
               "  -h, --help           show this help\n"
               "      --version        show the version\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage, 3 not found, 4 not supported, 5 busy,\n"
               "6 permission denied, 7 out of range, 8 reload required, 9 device error.\n");
}

static const struct verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (strcmp(verbs[i].name, name) == 0)
                        return &verbs[i];
        return NULL;
}

static const char *verb_names(void) {
        static char buf[256];
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(verbs) && n < sizeof(buf); i++)
                n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? ", " : "",
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
};

/* @return 0 to run *ret_verb, 1 to exit with success (help, version), or -EINVAL. */
static int parse_argv(struct cli *c, int argc, char **argv, const struct verb **ret_verb) {
        /* clang-format off */
        static const struct option options[] = {
                { "gpu", required_argument, NULL, 'g' },
                { "json", no_argument, NULL, ARG_JSON },
                { "csv", no_argument, NULL, ARG_CSV },
                { "watch", required_argument, NULL, 'w' },
                { "count", required_argument, NULL, 'n' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        /* clang-format on */
        bool json = false, csv = false, want_help = false, want_version = false;
        const struct verb *verb = NULL;
        const char *watch_arg = NULL, *count_arg = NULL;
        int opt, r = 0;

        opterr = 0;
        while ((opt = getopt_long(argc, argv, ":g:w:n:h", options, NULL)) >= 0) {
                switch (opt) {
                case 'g': {
                        int k = selection_add(&c->selection, optarg);

                        if (k == -ENOMEM && r == 0)
                                r = cli_fail(c, k, "out of memory");
                        else if (k < 0)
                                USAGE(c, r,
                                      "invalid GPU selection '%s': expected N, N.P, a PCI "
                                      "address or all, separated by commas",
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
                        watch_arg = optarg;
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
        }

        if (json && csv)
                USAGE(c, r, "--json and --csv are mutually exclusive");
        else if (json)
                c->format = OUTPUT_JSON;
        else if (csv)
                c->format = OUTPUT_CSV;

        if (optind < argc) {
                verb = find_verb(argv[optind]);
                if (verb)
                        c->command = verb->name;
                else
                        USAGE(c, r, "unknown verb '%s' (verbs: %s)", argv[optind], verb_names());
                if (optind + 1 < argc)
                        USAGE(c, r, "unexpected argument '%s'", argv[optind + 1]);
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
        if (watch_arg && !(verb->flags & VERB_WATCH))
                return cli_fail(c, -EINVAL, "--watch is not supported by '%s'", verb->name);
        if (count_arg && !watch_arg)
                return cli_fail(c, -EINVAL, "--count needs --watch");

        *ret_verb = verb;
        return 0;
}

int main(int argc, char **argv) {
        struct cli c = { .format = OUTPUT_TABLE };
        const struct verb *verb = NULL;
        int r;

        if (gethostname(c.hostname, sizeof(c.hostname) - 1) < 0)
                c.hostname[0] = '\0';

        r = parse_argv(&c, argc, argv, &verb);
        if (r == 0)
                r = verb->fn(&c);

        if (r < 0 && c.format == OUTPUT_JSON) {
                json_object *doc = cli_error_document(&c, r);

                if (doc)
                        output_json(stdout, doc, c.interval_ns > 0);
                json_object_put(doc);
        }
        if (fflush(stdout) != 0 && r >= 0) {
                r = errno > 0 ? -errno : -EPIPE;
                fprintf(stderr, "amdsmi: cannot write to standard output: %s\n", strerror(-r));
        }

        amdsmi_ctx_unref(c.ctx);
        selection_clear(&c.selection);
        free(c.matches);
        free(c.error_message);
        json_object_put(c.errors);
        return r < 0 ? exit_code_from_errno(r) : EXIT_OK;
}
