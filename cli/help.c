/* SPDX-License-Identifier: MIT */
/* The help and the shell completion of amdsmi(1), from the verb and option tables (help.h). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit-codes.h"
#include "help.h"
#include "macro.h"

/* The width of the option column of the help: the text starts in column HELP_INDENT. */
#define HELP_INDENT 23

static const struct {
        const char *brief; /* the global help's one-line summary */
        const char *what;  /* a verb's help */
} exit_statuses[] = {
        [EXIT_OK] = { "ok", "success" },
        [EXIT_GENERIC] = { "failure", "any other failure (out of memory, a write error)" },
        [EXIT_USAGE] = { "usage", "usage error: unknown verb or option, bad value" },
        [EXIT_NOT_FOUND] = { "not found", "no such GPU, partition or VF; no AMD GPU at all" },
        [EXIT_NOT_SUPPORTED] = { "not supported", "the GPU or its driver cannot do it" },
        [EXIT_BUSY] = { "busy", "busy: a reset, other users, a timeout; try again" },
        [EXIT_PERMISSION] = { "permission denied", "permission denied" },
        [EXIT_OUT_OF_RANGE] = { "out of range", "a value outside the accepted range" },
        [EXIT_RELOAD_REQUIRED] = { "reload required",
                                   "done, takes effect at the next driver reload" },
        [EXIT_DEVICE_ERROR] = { "device error", "the device or its firmware failed" },
        [EXIT_STATE_DAMAGED] = { "state damaged",
                                 "a record of the state file is damaged: nothing changed" },
};

const struct verb *cli_find_verb(const char *name, const char *sub) {
        for (size_t i = 0; i < cli_n_verbs; i++)
                if (strcmp(cli_verbs[i].name, name) == 0 &&
                    (sub ? cli_verbs[i].sub && strcmp(cli_verbs[i].sub, sub) == 0
                         : !cli_verbs[i].sub))
                        return &cli_verbs[i];
        return NULL;
}

bool cli_verb_has_subs(const char *name) {
        for (size_t i = 0; i < cli_n_verbs; i++)
                if (cli_verbs[i].sub && strcmp(cli_verbs[i].name, name) == 0)
                        return true;
        return false;
}

const char *cli_verb_names(void) {
        static char buf[512];
        size_t n = 0;

        for (size_t i = 0; i < cli_n_verbs && n < sizeof(buf); i++)
                if (!cli_verbs[i].sub)
                        n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "",
                                               cli_verbs[i].name);
        return buf;
}

bool cli_option_valid(const struct cli_option *o, const struct verb *v) {
        return o->verbs == 0 || (v->options & o->verbs) != 0;
}

/* "  -g, --gpu SEL" / "      --json": the option column of the help. */
static void option_label(const struct cli_option *o, char *buf, size_t len) {
        if (o->short_name)
                snprintf(buf, len, "  -%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
        else
                snprintf(buf, len, "      --%s%s%s", o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
}

/* @text after a label of @label_len columns, its lines indented to HELP_INDENT. */
static void print_indented(FILE *f, size_t label_len, const char *text) {
        if (label_len + 2 > HELP_INDENT)
                fprintf(f, "\n%*s", HELP_INDENT, "");
        else
                fprintf(f, "%*s", (int) (HELP_INDENT - label_len), "");
        for (const char *p = text; *p; p++) {
                fputc(*p, f);
                if (*p == '\n')
                        fprintf(f, "%*s", HELP_INDENT, "");
        }
        fputc('\n', f);
}

/* @o in the help of @v (NULL: the global help): the verb's own text for it, if any. */
static void print_option(FILE *f, const struct cli_option *o, const struct verb *v) {
        const char *text = o->help;
        char label[80];

        for (const char *const *h = v ? v->option_help : NULL; h && h[0] && h[1]; h += 2)
                if (strcmp(h[0], o->name) == 0)
                        text = h[1];
        option_label(o, label, sizeof(label));
        fputs(label, f);
        print_indented(f, strlen(label), text);
}

/* "partition set VF" */
static void verb_label(const struct verb *v, char *buf, size_t len) {
        snprintf(buf, len, "%s%s%s%s%s", v->name, v->sub ? " " : "", v->sub ? v->sub : "",
                 v->arg ? " " : "", v->arg ? v->arg : "");
}

static void print_verb_line(FILE *f, const struct verb *v) {
        char label[64];

        verb_label(v, label, sizeof(label));
        if (strlen(label) > 14)
                fprintf(f, "  %s\n  %-14s %s\n", label, "", v->help);
        else
                fprintf(f, "  %-14s %s\n", label, v->help);
}

/* @text from column @col on, broken at spaces before column 79; continuation lines are
 * indented by @indent. */
static void print_wrapped(FILE *f, size_t col, size_t indent, const char *text) {
        const char *p = text;

        while (*p) {
                size_t word = strcspn(p, " ");

                if (p != text && col + 1 + word > 78) {
                        fprintf(f, "\n%*s", (int) indent, "");
                        col = indent;
                } else if (p != text) {
                        fputc(' ', f);
                        col++;
                }
                fprintf(f, "%.*s", (int) word, p);
                col += word;
                p += word;
                p += strspn(p, " ");
        }
        fputc('\n', f);
}

void help_global(FILE *f) {
        char statuses[512];
        size_t n;

        fprintf(f, "Usage: amdsmi [OPTIONS] VERB [SUB-VERB] [ARGUMENT] [OPTIONS]\n"
                   "       amdsmi               (the GPUs of this machine at a glance)\n"
                   "\n"
                   "System management of AMD Instinct GPUs.\n"
                   "\n"
                   "Verbs:\n");
        for (size_t i = 0; i < cli_n_verbs; i++)
                print_verb_line(f, &cli_verbs[i]);
        fprintf(f, "\nOptions of every verb:\n");
        for (size_t i = 0; i < cli_n_options; i++)
                if (cli_options[i].verbs == 0)
                        print_option(f, &cli_options[i], NULL);
        fprintf(f, "\nSee 'amdsmi help VERB [SUB-VERB]' (or amdsmi VERB --help) for the options,\n"
                   "examples and exit statuses of a verb, and amdsmi(1).\n\n");
        n = snprintf(statuses, sizeof(statuses), "Exit status:");
        for (size_t i = 0; i < ELEMENTSOF(exit_statuses) && n < sizeof(statuses); i++)
                n += (size_t) snprintf(statuses + n, sizeof(statuses) - n, " %zu %s%s", i,
                                       exit_statuses[i].brief,
                                       i + 1 < ELEMENTSOF(exit_statuses) ? "," : ".");
        print_wrapped(f, 0, 0, statuses);
}

static void print_lines(FILE *f, const char *prefix, const char *text) {
        const char *p = text;

        while (*p) {
                size_t n = strcspn(p, "\n");

                fprintf(f, "%s%.*s\n", prefix, (int) n, p);
                p += n;
                if (*p == '\n')
                        p++;
        }
}

void help_verb(FILE *f, const struct verb *v) {
        bool subs = !v->sub && cli_verb_has_subs(v->name);
        const char *p = v->synopsis;
        bool first = true;
        char synopsis[96];

        /* a row without its own synopsis or paragraph still gets a help */
        if (!p) {
                char label[64];

                verb_label(v, label, sizeof(label));
                snprintf(synopsis, sizeof(synopsis), "[OPTIONS] %s", label);
                p = synopsis;
        }

        /* every form of the synopsis, "Usage: amdsmi ..." and aligned below it */
        while (p && *p) {
                size_t n = strcspn(p, "\n");

                char form[512];

                /* continuation lines under the first word after "amdsmi" */
                fprintf(f, "%s amdsmi ", first ? "Usage:" : "      ");
                snprintf(form, sizeof(form), "%.*s", (int) n, p);
                print_wrapped(f, 14, 14, form);
                first = false;
                p += n;
                if (*p == '\n')
                        p++;
        }
        if (subs)
                for (size_t i = 0; i < cli_n_verbs; i++)
                        if (cli_verbs[i].sub && strcmp(cli_verbs[i].name, v->name) == 0)
                                fprintf(f, "       amdsmi %s %s ...\n", v->name, cli_verbs[i].sub);
        fprintf(f, "\n");
        print_lines(f, "", v->description ? v->description : v->help);
        if (subs) {
                fprintf(f, "\nSub-verbs (amdsmi help %s SUB-VERB):\n", v->name);
                for (size_t i = 0; i < cli_n_verbs; i++)
                        if (cli_verbs[i].sub && strcmp(cli_verbs[i].name, v->name) == 0)
                                print_verb_line(f, &cli_verbs[i]);
        }
        fprintf(f, "\nOptions:\n");
        /* its own options first, then those of every verb */
        for (size_t i = 0; i < cli_n_options; i++)
                if (cli_options[i].verbs != 0 && cli_option_valid(&cli_options[i], v))
                        print_option(f, &cli_options[i], v);
        for (size_t i = 0; i < cli_n_options; i++)
                if (cli_options[i].verbs == 0 && !cli_options[i].global)
                        print_option(f, &cli_options[i], v);
        if (v->examples) {
                fprintf(f, "\nExamples:\n");
                print_lines(f, "  ", v->examples);
        }
        fprintf(f, "\nExit status:\n");
        for (size_t i = 0, own = 0; i < ELEMENTSOF(exit_statuses); i++) {
                const char *what = exit_statuses[i].what;

                if (v->exit_help && v->exit_help[own] && own == i)
                        what = v->exit_help[own++];
                if (v->exits & CLI_EXIT(i))
                        fprintf(f, "  %2zu  %s\n", i, what);
        }
}

/* ---- completion ------------------------------------------------------------------------- */

/*
 * The completion asks the CLI (amdsmi __complete) rather than carrying a generated copy of
 * the tables: the option rows stay the only list, and an installed script can never offer
 * what the installed binary refuses.
 */

static const struct cli_option *option_by_long(const char *name, size_t len) {
        for (size_t i = 0; i < cli_n_options; i++)
                if (strlen(cli_options[i].name) == len &&
                    strncmp(cli_options[i].name, name, len) == 0)
                        return &cli_options[i];
        return NULL;
}

static const struct cli_option *option_by_short(char c) {
        for (size_t i = 0; i < cli_n_options; i++)
                if (cli_options[i].short_name == c)
                        return &cli_options[i];
        return NULL;
}

/* Whether the word may be the value of an optional argument ("--host 600W", "-o ppt0"),
 * as main.c's take_value() decides. */
static bool value_like(const char *w) {
        return w[0] != '-' || (w[1] >= '0' && w[1] <= '9') || w[1] == '.';
}

/* "SPX, DPX" → one per line */
static void print_list(FILE *f, const char *names) {
        for (const char *p = names; *p;) {
                size_t n = strcspn(p, ", ");

                if (n > 0)
                        fprintf(f, "%.*s\n", (int) n, p);
                p += n;
                p += strspn(p, ", ");
        }
}

static void print_value(FILE *f, enum cli_value value) {
        switch (value) {
        case CLI_VALUE_GPU:
                fprintf(f, "all\n@gpu\n");
                break;
        case CLI_VALUE_COMPUTE:
                print_list(f, COMPUTE_NAMES);
                break;
        case CLI_VALUE_MEMORY:
                print_list(f, MEMORY_NAMES);
                break;
        case CLI_VALUE_VF:
                fprintf(f, "@vf\n");
                break;
        case CLI_VALUE_VERB:
                for (size_t i = 0; i < cli_n_verbs; i++)
                        if (!cli_verbs[i].sub)
                                fprintf(f, "%s\n", cli_verbs[i].name);
                break;
        case CLI_VALUE_NONE:
        case CLI_VALUE_FREE:
                break;
        }
}

int help_complete(FILE *f, int n, char **words) {
        const char *cur = n > 0 ? words[n - 1] : "", *name = NULL, *sub = NULL;
        const struct cli_option *pending = NULL;
        const struct verb *v;
        int positional = 0;
        const char *topic = NULL; /* help VERB */

        /* the words before the cursor: options (and their values), then the verb */
        for (int i = 0; i < n - 1; i++) {
                const char *w = words[i];
                const struct cli_option *o = NULL;
                bool attached = false;

                if (strcmp(w, "--") == 0)
                        continue;
                if (strncmp(w, "--", 2) == 0) {
                        const char *eq = strchr(w, '=');

                        o = option_by_long(w + 2, eq ? (size_t) (eq - w - 2) : strlen(w + 2));
                        attached = eq != NULL;
                } else if (w[0] == '-' && w[1]) {
                        /* a cluster of short options: the first that takes a value ends it */
                        for (const char *p = w + 1; *p; p++) {
                                o = option_by_short(*p);
                                if (o && o->has_arg != no_argument) {
                                        attached = p[1] != '\0';
                                        break;
                                }
                        }
                } else {
                        if (!name)
                                name = w;
                        else if (!sub && !topic && cli_verb_has_subs(name) &&
                                 cli_find_verb(name, w))
                                sub = w;
                        else {
                                if (positional == 0)
                                        topic = w;
                                positional++;
                        }
                        continue;
                }
                if (!o || attached || o->has_arg == no_argument)
                        continue;
                if (o->has_arg == required_argument) {
                        if (i + 1 == n - 1) {
                                pending = o;
                                break;
                        }
                        i++;
                        /* --vm NAME [VALUE]: a second, optional value */
                        if (o->arg && strstr(o->arg, " [") && i + 1 < n - 1 &&
                            value_like(words[i + 1]))
                                i++;
                } else if (i + 1 < n - 1 && value_like(words[i + 1]))
                        i++;
        }

        if (pending) {
                print_value(f, pending->value);
                return 0;
        }
        v = name ? cli_find_verb(name, sub) : NULL;
        if (strncmp(cur, "--", 2) == 0 && strchr(cur, '=')) {
                /* --gpu=VALUE: the values, each after "--gpu=" */
                const struct cli_option *o = option_by_long(cur + 2, strcspn(cur + 2, "="));
                char *buf = NULL, *line;
                size_t len = 0;
                FILE *values;

                if (!o || o->has_arg == no_argument || (v && !cli_option_valid(o, v)))
                        return 0;
                values = open_memstream(&buf, &len);
                if (!values)
                        return -ENOMEM;
                print_value(values, o->value);
                if (fclose(values) != 0) {
                        free(buf);
                        return -ENOMEM;
                }
                for (char *p = buf; (line = strsep(&p, "\n"));)
                        if (*line)
                                fprintf(f, "--%s=%s\n", o->name, line);
                free(buf);
                return 0;
        }
        if (cur[0] == '-') {
                for (size_t i = 0; i < cli_n_options; i++) {
                        const struct cli_option *o = &cli_options[i];

                        /* the verb's and the common ones; before a verb, the common ones */
                        if (v ? !cli_option_valid(o, v) || o->global : o->verbs != 0)
                                continue;
                        if (o->short_name)
                                fprintf(f, "-%c\n", o->short_name);
                        fprintf(f, "--%s\n", o->name);
                }
                return 0;
        }
        if (!name) {
                print_value(f, CLI_VALUE_VERB);
                return 0;
        }
        if (!v)
                return 0;
        if (!v->fn) {
                /* help VERB [SUB-VERB] */
                if (positional == 0)
                        print_value(f, CLI_VALUE_VERB);
                else if (positional == 1)
                        for (size_t i = 0; i < cli_n_verbs; i++)
                                if (cli_verbs[i].sub && strcmp(cli_verbs[i].name, topic) == 0)
                                        fprintf(f, "%s\n", cli_verbs[i].sub);
                return 0;
        }
        if (!sub && cli_verb_has_subs(name)) {
                for (size_t i = 0; i < cli_n_verbs; i++)
                        if (cli_verbs[i].sub && strcmp(cli_verbs[i].name, name) == 0)
                                fprintf(f, "%s\n", cli_verbs[i].sub);
                return 0;
        }
        if (v->arg && positional == 0)
                print_value(f, v->arg_value);
        return 0;
}
