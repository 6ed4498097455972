/* SPDX-License-Identifier: MIT */
/*
 * The command line of amdsmi(1) as data: one row per verb and one row per option (main.c).
 * The parser, the "not valid for" errors, the global help, each verb's help and the shell
 * completion (help.c) are all made from these two tables, so that they cannot disagree:
 * a new option is one row of cli_options[] (and a case in main.c's parser if it stores a
 * value), a new verb one row of cli_verbs[].
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct cli;

/* What the argument of an option, or a verb's positional argument, completes to. */
enum cli_value {
        CLI_VALUE_NONE,    /* no argument */
        CLI_VALUE_FREE,    /* anything (a number, a name): nothing to offer */
        CLI_VALUE_GPU,     /* -g: all, the indices, N.P partitions, BDFs, unique ids */
        CLI_VALUE_COMPUTE, /* a compute partition mode */
        CLI_VALUE_MEMORY,  /* a memory partition mode */
        CLI_VALUE_VF,      /* the PCI address of a VF */
        CLI_VALUE_VERB,    /* help: a verb, then its sub-verb */
};

struct cli_option {
        const char *name; /* the long name */
        char short_name;  /* 0: none */
        int has_arg;      /* getopt's no_argument, required_argument, optional_argument */
        int id;           /* what getopt_long() returns: short_name, or an ARG_* of main.c */
        unsigned verbs;   /* the OPT_* bits of the verbs that accept it (any of them); 0:
                             every verb (the common options) */
        bool global;      /* shown in the global help only (--version) */
        const char *arg;  /* its argument in the help ("SECONDS", "[VALUE]"), NULL: none */
        const char *help; /* "\n" between lines */
        enum cli_value value;
};

struct verb {
        const char *name;
        const char *sub;          /* a sub-verb ("partition set"), NULL for the verb itself */
        int (*fn)(struct cli *c); /* NULL: "help", which main.c answers itself */
        unsigned options;         /* OPT_* of main.c */
        const char *help;         /* one line of the global help */
        const char *arg;          /* the name of its one positional argument ("VF"), NULL: none */
        enum cli_value arg_value;
        /* its help (amdsmi VERB --help, amdsmi help VERB): what follows "amdsmi " in each
         * form of its synopsis ("\n" between forms), one paragraph, example command lines
         * ("\n" between them), and the exit statuses it can end with (CLI_EXIT()) */
        const char *synopsis;
        const char *description;
        const char *examples;
        unsigned exits;
        /* what an option means for this verb, where the option's own help is too general:
         * pairs of long name and help text, NULL-terminated (NULL: none) */
        const char *const *option_help;
        /* what each exit status means for this verb, from 0 on (NULL-terminated; NULL: the
         * usual meanings): health's are a monitoring plugin's */
        const char *const *exit_help;
};

/* struct verb.option_help: OPTION_HELP("force", "although ...", ...) */
#define OPTION_HELP(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* A bit mask of exit statuses (exit-codes.h) for struct verb.exits. */
#define CLI_EXIT(n) (1u << (n))

extern const struct verb cli_verbs[];
extern const size_t cli_n_verbs;
extern const struct cli_option cli_options[];
extern const size_t cli_n_options;

/* The mode names -C/--compute and -M/--memory accept (", " between them). */
#define COMPUTE_NAMES "SPX, DPX, TPX, QPX, CPX"
#define MEMORY_NAMES "NPS1, NPS2, NPS3, NPS4, NPS6, NPS8"

const struct verb *cli_find_verb(const char *name, const char *sub);
bool cli_verb_has_subs(const char *name);
/* "list, static, ..." (static storage). */
const char *cli_verb_names(void);
/* Whether verb @v accepts option @o. */
bool cli_option_valid(const struct cli_option *o, const struct verb *v);

/* amdsmi --help: the verbs, the common options, the exit statuses. */
void help_global(FILE *f);
/* amdsmi VERB [SUB] --help, amdsmi help VERB [SUB]. */
void help_verb(FILE *f, const struct verb *v);

/*
 * amdsmi __complete WORD...: the words of a command line after "amdsmi", the last one being
 * the word under the cursor (maybe empty). Prints what may come in its place, one per line
 * (unfiltered; the shell filters by what was typed); "@gpu" and "@vf" stand for the GPU
 * selectors and the VF addresses of the machine, which the shell function reads from
 * `amdsmi list --csv` and `amdsmi sriov --csv` ("--gpu=@gpu": each after "--gpu=").
 * @return 0 or -ENOMEM.
 */
int help_complete(FILE *f, int n, char **words);

/* amdsmi with no argument: the GPUs at a glance, whether amdsmid runs, the verbs.
 * @return 0 or a negative errno (reported). */
int verb_overview(struct cli *c);
