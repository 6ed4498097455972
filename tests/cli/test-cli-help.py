#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""amdsmi(1)'s help, the overview of `amdsmi` alone, and the bash and zsh completions.

usage: test-cli-help.py AMDSMI COMPLETION ZSH_COMPLETION [unittest options]
env:   FIXTURES_DIR  the generated trees;  AMDSMI_SIM  amdsmi-sim (for a snapshot of a gim
       host with VFs)

The help texts themselves are golden files (test-cli-help-golden.sh); here: that the three
spellings of a verb's help agree, that each verb's help lists exactly the options the parser
accepts for it (and no other), `help` errors, the overview with and without GPUs, and the
completion function run in bash as readline runs it (COMP_WORDS, COMP_CWORD -> COMPREPLY),
and the zsh one in zsh as compsys runs it (words, CURRENT, PREFIX -> compadd). zsh is a
test dependency (.ci/install-deps.sh): without it the zsh tests fail.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

AMDSMI = None
COMPLETION = None
ZSH_COMPLETION = None
FIXTURES_DIR = os.environ.get("FIXTURES_DIR", "")
AMDSMI_SIM = os.environ.get("AMDSMI_SIM", "")

SPX = "mi300x-8-spx"
CPX = "mi300x-8-cpx"
EXIT_OK, EXIT_USAGE = 0, 2
VERB_NAMES = ["list", "static", "metric", "monitor", "process", "ras", "bad-pages", "health", "events",
              "topology", "doctor",
              "partition", "power", "sriov", "vm", "set", "reset",
              "apply", "export", "reload", "history", "help"]


def tree(name):
    return os.path.join(FIXTURES_DIR, name)


class Env:
    """Private state, runtime and configuration directories, and no system bus: nothing a
    run does can reach the host's amdsmid or its files."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="amdsmi-help-")
        for d in ("state", "run", "conf"):
            os.mkdir(os.path.join(self.tmp, d))

    def env(self, root):
        env = {k: v for k, v in os.environ.items()
               if k not in ("AMDSMI_DEV_ROOT", "AMDSMI_DEBUG", "AMDSMI_SYSFS_ROOT")}
        env.update(AMDSMI_SYSFS_ROOT=root,
                   STATE_DIRECTORY=os.path.join(self.tmp, "state"),
                   RUNTIME_DIRECTORY=os.path.join(self.tmp, "run"),
                   CONFIGURATION_DIRECTORY=os.path.join(self.tmp, "conf"),
                   DBUS_SYSTEM_BUS_ADDRESS="unix:path=" + os.path.join(self.tmp, "no-bus"))
        return env


ENV = None


def run(args, root=None, timeout=30):
    return subprocess.run([AMDSMI] + list(args), env=ENV.env(root or tree(SPX)),
                          capture_output=True, text=True, check=False, timeout=timeout)


def commands():
    """Every verb and sub-verb as an argument list, from the CLI's own table."""
    out = []
    for verb in run(["__complete", ""]).stdout.split():
        out.append([verb])
        if verb != "help":
            out += [[verb, sub] for sub in run(["__complete", verb, ""]).stdout.split()]
    return out


# "  -g, --gpu SEL        select", "      --timeout SECONDS": the option column of a help
OPTION_LINE = re.compile(r"^  (?:-(\w), )?(?:    )?--([a-z-]+)(?: (\S+(?: \S+)?))?(?:  |$)")


def help_options(text):
    """The options of a verb's help: {long name: (short name, argument)}."""
    opts = {}
    section = False
    for line in text.splitlines():
        if line in ("Options:", "Options of every verb:"):
            section = True
            continue
        if section and not line:
            break
        m = OPTION_LINE.match(line) if section else None
        if m:
            opts[m.group(2)] = (m.group(1), m.group(3))
    return opts


class Help(unittest.TestCase):
    maxDiff = None

    def ok(self, args):
        p = run(args)
        self.assertEqual(p.returncode, EXIT_OK, "amdsmi %s: %r" % (" ".join(args), p.stderr))
        self.assertEqual(p.stderr, "", args)
        return p.stdout

    def usage(self, args, message):
        p = run(args)
        what = "amdsmi %s: %r" % (" ".join(args), p.stderr)
        self.assertEqual(p.returncode, EXIT_USAGE, what)
        self.assertIn(message, p.stderr, what)
        self.assertEqual(p.stdout if "--json" not in args else "", "", what)
        return p

    def test_commands_listed(self):
        names = [" ".join(c) for c in commands()]
        for want in ("list", "partition set", "power clear", "sriov bind", "vm release",
                     "history", "help"):
            self.assertIn(want, names)

    def test_three_spellings_agree(self):
        for cmd in commands():
            if cmd == ["help"]:
                continue
            text = self.ok(cmd + ["--help"])
            self.assertEqual(self.ok(cmd + ["-h"]), text, cmd)
            self.assertEqual(self.ok(["help"] + cmd), text, cmd)
            self.assertEqual(self.ok(["-h"] + cmd), text, cmd)  # options before the verb
            self.assertTrue(text.startswith("Usage: amdsmi "), cmd)
            self.assertIn(" ".join(cmd), text.splitlines()[0] + text.splitlines()[1], cmd)
            for section in ("\nOptions:\n", "\nExamples:\n", "\nExit status:\n"):
                self.assertIn(section, text, cmd)
            # not the global help
            self.assertNotIn("Options of every verb", text, cmd)

    def test_examples_are_the_verb(self):
        for cmd in commands():
            text = self.ok(cmd + ["--help"])
            self.assertIn("\nExamples:\n", text, cmd)
            examples = text.split("\nExamples:\n")[1].split("\n\n")[0].splitlines()
            self.assertTrue(2 <= len(examples) <= 4 or cmd in (["vm", "release"], ["reload"]),
                            (cmd, examples))
            for ex in examples:
                words = ex.split()
                self.assertEqual(words[0], "amdsmi", ex)
                self.assertEqual([w for w in words[1:] if not w.startswith("-")][:len(cmd)]
                                 if cmd != ["help"] else words[1:2], cmd, ex)

    def test_exit_statuses(self):
        text = self.ok(["partition", "set", "--help"])
        status = text.split("\nExit status:\n")[1]
        self.assertIn("   8  done, takes effect at the next driver reload", status)
        self.assertIn("   2  usage error", status)
        self.assertNotIn("10  ", status)   # no state file in a partition change
        self.assertIn("10  ", self.ok(["power", "set", "--help"]).split("\nExit status:\n")[1])
        self.assertEqual(self.ok(["help", "help"]).split("\nExit status:\n")[1].split("\n")[:2],
                         ["   0  success", "   2  usage error: unknown verb or option, bad value"])

    def test_global_help(self):
        text = self.ok(["--help"])
        self.assertEqual(self.ok(["help"]), text)
        self.assertEqual(self.ok(["-h"]), text)
        for verb in VERB_NAMES:
            self.assertRegex(text, r"\n  %s " % verb)
        self.assertIn("amdsmi help VERB", text)
        self.assertIn("--version", text)
        # the common options only: a verb's own are in its help
        self.assertNotIn("--compute", help_options(text))
        self.assertEqual(set(help_options(text)),
                         {"gpu", "json", "csv", "direct", "help", "version"})

    def test_option_help_of_the_verb(self):
        # an option's text in a verb's help is what it means for that verb
        lines = self.ok(["power", "clear", "--help"]).splitlines()
        self.assertIn("      --host [VALUE]   remove the host's cap (no value)", lines)
        lines = self.ok(["power", "set", "--help"]).splitlines()
        self.assertIn("      --host [VALUE]   the host's cap: 600W, 600000mW, 0.6kW; a bare",
                      lines)
        self.assertIn("  -n, --count COUNT    show the last COUNT changes",
                      self.ok(["history", "--help"]).splitlines())
        self.assertIn("      --csv            CSV: a header line and one line per pair of GPUs,",
                      self.ok(["topology", "--help"]).splitlines())

    def test_sub_verbs_in_verb_help(self):
        text = self.ok(["help", "power"])
        for sub in ("power set", "power clear", "power apply"):
            self.assertIn("\n  %s " % sub, text)
        self.assertNotIn("--host", help_options(text))

    def test_help_unknown(self):
        p = self.usage(["help", "frobnicate"], "unknown verb 'frobnicate'")
        self.assertIn("list, static", p.stderr)   # names the verbs
        self.usage(["help", "partition", "frob"], "unknown sub-verb 'frob' of 'partition'")
        self.usage(["help", "list", "extra"], "unexpected argument 'extra'")
        self.usage(["frobnicate", "--help"], "unknown verb 'frobnicate'")
        p = run(["--json", "help", "frobnicate"])
        self.assertEqual(p.returncode, EXIT_USAGE)
        self.assertIn('"exit_code": 2', p.stdout)

    def test_help_lists_exactly_the_accepted_options(self):
        """The help of each verb and the parser agree: every option of another verb's help
        that this verb's help does not list is refused as 'not valid for' this verb, and
        every option it lists is not."""
        everything = {}
        per_verb = {}
        for cmd in commands():
            if cmd == ["help"]:
                continue
            opts = help_options(self.ok(cmd + ["--help"]))
            per_verb[tuple(cmd)] = opts
            everything.update(opts)
        self.assertGreater(len(everything), 20)
        values = {"SECONDS": ["1"], "COUNT": ["1"], "MODE": ["CPX"], "[VALUE]": ["600"],
                  "NAME [VALUE]": ["web1", "450"], "BDF": ["0000:ff:1f.7"], "N": ["1"],
                  "SEL": ["99"], "KEY,...": ["power"], "KIND,...": ["vm_fault"],
                  "DIR": ["/nonexistent/amdsmi-cper"], "NAME": ["nosuchprofile"],
                  "LEVEL": ["auto"], "SCLK_MHZ": ["1500"], "POLICY": ["0"],
                  "sclk|mclk min|max MHZ": ["sclk", "max", "1500"]}
        for cmd, opts in per_verb.items():
            arg = ["0000:ff:1f.7"] if cmd[:2] in (("sriov", "bind"), ("sriov", "release")) \
                else ["nosuchdomain"] if cmd == ("vm", "release") else []
            for name, (short, value) in everything.items():
                if name in ("help", "version"):
                    continue
                value = values[value] if value else []
                if name == "memory" or name == "memory-partition":
                    value = ["NPS1"]
                # -g 99 selects no GPU: whatever the verb, nothing is read or changed
                args = list(cmd) + arg + ["-g", "99", "--" + name] + value
                p = run(args, timeout=60)
                refused = re.search(r"is not valid for|is not supported by", p.stderr)
                if name in opts:
                    self.assertFalse(refused, "%s: %s" % (" ".join(args), p.stderr))
                else:
                    # health and doctor exit as monitoring plugins: a usage error is UNKNOWN (3)
                    self.assertEqual(p.returncode, 3 if cmd in (("health",), ("doctor",)) else EXIT_USAGE,
                                     " ".join(args))
                    self.assertTrue(refused, "%s: %s" % (" ".join(args), p.stderr))


class Overview(unittest.TestCase):
    def test_overview(self):
        p = run([], root=tree(CPX))
        self.assertEqual(p.returncode, EXIT_OK, p.stderr)
        self.assertEqual(p.stderr, "")
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], "8 GPUs:")
        self.assertEqual(lines[2].split()[:5], ["GPU", "BDF", "PRODUCT", "COMPUTE", "MEMORY"])
        self.assertEqual(lines[3].split()[:5], ["0", "0000:05:00.0", "MI300X", "CPX", "NPS4"])
        self.assertIn("amdsmid is not running", p.stdout)
        self.assertIn("amdsmi help VERB", p.stdout)
        for verb in VERB_NAMES:
            self.assertTrue(re.search(r"Verbs:.*\b%s\b" % verb, p.stdout, re.S), verb)

    def test_overview_without_gpus(self):
        root = os.path.join(ENV.tmp, "empty")
        os.makedirs(os.path.join(root, "bus/pci/devices"), exist_ok=True)
        p = run([], root=root)
        self.assertEqual(p.returncode, EXIT_OK, p.stderr)
        self.assertIn("No AMD GPU found under %s." % root, p.stdout)
        self.assertIn("Verbs:", p.stdout)

    def test_options_without_verb_stay_an_error(self):
        for args in (["--json"], ["-g", "0"]):
            p = run(args)
            self.assertEqual(p.returncode, EXIT_USAGE, args)
            self.assertIn("missing verb", p.stderr)


class Completion(unittest.TestCase):
    """The completion function in a plain bash (no bash-completion loaded), words split as
    readline splits them without bash-completion: COMP_WORDS, COMP_CWORD -> COMPREPLY."""

    gim = None

    @classmethod
    def setUpClass(cls):
        # a gim host with 8 VFs per GPU, as a plain tree
        if AMDSMI_SIM:
            cls.gim = os.path.join(ENV.tmp, "gim")
            subprocess.run([AMDSMI_SIM, "-m", "mi300x-gim-8vf", "--frozen", "snapshot", cls.gim],
                           check=True, capture_output=True, timeout=120)

    def complete(self, words, root=None):
        """COMPREPLY for the command line "amdsmi WORDS" with the cursor at its end, as
        readline sets it up: COMP_LINE, COMP_POINT, and COMP_WORDS split at its word break
        characters (':' and '=' too)."""
        script = ('source "$1"; COMP_LINE="$2"; COMP_POINT=${#COMP_LINE}; shift 2; '
                  'COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
                  'COMPREPLY=(); _amdsmi; printf "%s\\n" "${COMPREPLY[@]}"')
        line = " ".join([AMDSMI] + list(words))
        split = re.findall(r"[:=]|[^\s:=]+", line) + ([""] if line.endswith(" ") or
                                                      re.search(r"[:=]$", line) else [])
        p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash", COMPLETION,
                            line] + split,
                           env=ENV.env(root or tree(SPX)), capture_output=True, text=True,
                           check=False, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        return [w for w in p.stdout.splitlines() if w]

    def test_registered(self):
        p = subprocess.run(["bash", "--norc", "-c", 'source "$1"; complete -p amdsmi', "bash",
                            COMPLETION], capture_output=True, text=True, check=False)
        self.assertEqual(p.stdout.strip(), "complete -F _amdsmi amdsmi")

    def test_verbs(self):
        self.assertEqual(self.complete([""]), VERB_NAMES)
        self.assertEqual(self.complete(["pa"]), ["partition"])
        self.assertEqual(self.complete(["-g", "0", "s"]), ["static", "sriov", "set"])
        self.assertEqual(self.complete(["to"]), ["topology"])
        self.assertEqual(self.complete(["topology", "--c"]), ["--csv"])

    def test_sub_verbs(self):
        self.assertEqual(self.complete(["power", ""]), ["set", "clear", "apply"])
        self.assertEqual(self.complete(["sriov", "b"]), ["bind"])
        self.assertEqual(self.complete(["help", "power", ""]), ["set", "clear", "apply"])
        self.assertEqual(self.complete(["help", "me"]), ["metric"])
        self.assertEqual(self.complete(["help", "top"]), ["topology"])

    def test_options_of_the_verb(self):
        opts = self.complete(["partition", "set", "--"])
        for o in ("--compute", "--memory", "--dry-run", "--timeout", "--gpu", "--json"):
            self.assertIn(o, opts)
        # an option of another verb is not offered
        for o in ("--compute-partition", "--num-vfs", "--host", "--watch", "--version"):
            self.assertNotIn(o, opts)
        self.assertEqual(self.complete(["static", "--c"]), ["--csv"])
        self.assertEqual(self.complete(["list", "--c"]), ["--csv", "--count"])
        self.assertEqual(self.complete(["metric", "--c"]), ["--csv", "--count", "--clock"])
        self.assertIn("-C", self.complete(["set", "-"]))
        self.assertNotIn("-C", self.complete(["partition", "set", "-"]))
        # options before the verb: those of every verb
        self.assertEqual(sorted(self.complete(["--"])),
                         ["--csv", "--direct", "--gpu", "--help", "--json", "--version"])

    def test_gpu_values(self):
        values = self.complete(["list", "-g", ""])
        for v in ("all", "0", "7", "0000:05:00.0", "0000:e5:00.0", "0x637aac6ed49bc25c"):
            self.assertIn(v, values)
        self.assertNotIn("0.1", values)    # SPX: one partition, no N.P
        values = self.complete(["metric", "--gpu", ""], root=tree(CPX))
        for v in ("0.0", "0.7", "7.7", "0000:26:00.0"):
            self.assertIn(v, values)
        self.assertNotIn("0.8", values)
        # readline replaces what follows the last ':' (a word break)
        self.assertEqual(self.complete(["-g", "0000:2"]), ["26:00.0"])
        self.assertEqual(self.complete(["-g", "0000:26:"]), ["00.0"])
        self.assertEqual(self.complete(["static", "-g", "0x637a"]), ["0x637aac6ed49bc25c"])
        # --gpu=VALUE: readline replaces what follows '=' (or the last ':')
        self.assertEqual(self.complete(["list", "--gpu=al"]), ["all"])
        self.assertEqual(self.complete(["list", "--gpu=0000:e"]), ["e5:00.0"])
        self.assertIn("0.7", self.complete(["list", "--gpu="], root=tree(CPX)))

    def test_mode_values(self):
        self.assertEqual(self.complete(["partition", "set", "--compute", ""]),
                         ["SPX", "DPX", "TPX", "QPX", "CPX"])
        self.assertEqual(self.complete(["set", "-C", "c"]), ["CPX"])
        self.assertEqual(self.complete(["set", "-M", "NPS"]),
                         ["NPS1", "NPS2", "NPS3", "NPS4", "NPS6", "NPS8"])
        self.assertEqual(self.complete(["partition", "set", "--memory", "nps4"]), ["NPS4"])
        self.assertEqual(self.complete(["partition", "set", "--compute=c"]), ["CPX"])
        # not an option of list: nothing
        self.assertEqual(self.complete(["list", "--compute=c"]), [])
        # an option's value is not a verb
        self.assertEqual(self.complete(["partition", "set", "--timeout", ""]), [])

    def test_vf_values(self):
        if not self.gim:
            self.fail("AMDSMI_SIM is not set: no gim host to complete VFs on")
        vfs = self.complete(["sriov", "bind", ""], root=self.gim)
        self.assertEqual(len(vfs), 64, vfs)
        self.assertIn("0000:05:02.0", vfs)
        self.assertNotIn("0000:05:00.0", vfs)   # a PF
        self.assertEqual(self.complete(["sriov", "release", "0000:26:02.7"], root=self.gim),
                         ["02.7"])
        # one argument only
        self.assertEqual(self.complete(["sriov", "bind", "0000:05:02.0", ""], root=self.gim), [])
        self.assertEqual(self.complete(["sriov", "bind", ""]), [])   # no VFs on bare metal


class ZshCompletion(unittest.TestCase):
    """_amdsmi in a plain zsh (zsh -f), called as compsys calls it: words (the command line,
    the program first), CURRENT (the index of the word at the cursor) and PREFIX (that word
    up to the cursor, here all of it); a stub compadd prints what it is given. zsh does not
    split words at ':' or '=', so a candidate is always a whole word."""

    gim = None

    # the stub accepts only the form _amdsmi uses (-U: the candidates are filtered already)
    SCRIPT = (r'fpath=("$1" $fpath); autoload -Uz _amdsmi; shift; '
              r'compadd() { [[ $1 == -U && $2 == -- ]] || { print -u2 "compadd: $*"; return 2; }; '
              r'shift 2; print -rl -- "$@"; }; '
              r'words=("$@"); CURRENT=$#words; PREFIX=$words[CURRENT]; _amdsmi; '
              r'r=$?; (( r <= 1 )) || exit $r')

    @classmethod
    def setUpClass(cls):
        if AMDSMI_SIM:
            cls.gim = os.path.join(ENV.tmp, "zsh-gim")
            subprocess.run([AMDSMI_SIM, "-m", "mi300x-gim-8vf", "--frozen", "snapshot", cls.gim],
                           check=True, capture_output=True, timeout=120)

    def zsh(self, script, *args, root=None):
        if not shutil.which("zsh"):
            self.fail("zsh is not installed (a test dependency: .ci/install-deps.sh)")
        return subprocess.run(["zsh", "-f", "-c", script, "zsh"] + list(args),
                              env=ENV.env(root or tree(SPX)), capture_output=True, text=True,
                              check=False, timeout=60)

    def complete(self, words, root=None):
        """The candidates _amdsmi adds for "amdsmi WORDS", the cursor at the end of the last."""
        p = self.zsh(self.SCRIPT, os.path.dirname(ZSH_COMPLETION), AMDSMI, *words, root=root)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        return p.stdout.splitlines()

    def test_registered(self):
        with open(ZSH_COMPLETION, encoding="utf-8") as f:
            self.assertEqual(f.readline().strip(), "#compdef amdsmi")
        # compinit finds it on $fpath and binds it to the command
        p = self.zsh('fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -D; '
                     'print -r -- $_comps[amdsmi]', os.path.dirname(ZSH_COMPLETION))
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "_amdsmi"), p.stderr)

    def test_verbs(self):
        self.assertEqual(self.complete([""]), VERB_NAMES)
        self.assertEqual(self.complete(["pa"]), ["partition"])
        self.assertEqual(self.complete(["-g", "0", "s"]), ["static", "sriov", "set"])
        self.assertEqual(self.complete(["nosuchverb"]), [])

    def test_sub_verbs(self):
        self.assertEqual(self.complete(["power", ""]), ["set", "clear", "apply"])
        self.assertEqual(self.complete(["sriov", "b"]), ["bind"])
        self.assertEqual(self.complete(["help", "power", ""]), ["set", "clear", "apply"])

    def test_options_of_the_verb(self):
        opts = self.complete(["partition", "set", "--"])
        for o in ("--compute", "--memory", "--dry-run", "--timeout", "--gpu", "--json"):
            self.assertIn(o, opts)
        for o in ("--compute-partition", "--num-vfs", "--host", "--watch", "--version"):
            self.assertNotIn(o, opts)
        self.assertEqual(self.complete(["metric", "--c"]), ["--csv", "--count", "--clock"])
        self.assertEqual(sorted(self.complete(["--"])),
                         ["--csv", "--direct", "--gpu", "--help", "--json", "--version"])

    def test_gpu_values(self):
        values = self.complete(["list", "-g", ""])
        for v in ("all", "0", "7", "0000:05:00.0", "0000:e5:00.0", "0x637aac6ed49bc25c"):
            self.assertIn(v, values)
        self.assertNotIn("0.1", values)
        values = self.complete(["metric", "--gpu", ""], root=tree(CPX))
        for v in ("0.0", "0.7", "7.7", "0000:26:00.0"):
            self.assertIn(v, values)
        self.assertNotIn("0.8", values)
        # whole words: no word break at ':' or '='
        self.assertEqual(self.complete(["-g", "0000:2"]), ["0000:26:00.0"])
        self.assertEqual(self.complete(["static", "-g", "0x637A"]), ["0x637aac6ed49bc25c"])
        self.assertEqual(self.complete(["list", "--gpu=al"]), ["--gpu=all"])
        self.assertEqual(self.complete(["list", "--gpu=0000:e"]), ["--gpu=0000:e5:00.0"])

    def test_mode_values(self):
        self.assertEqual(self.complete(["partition", "set", "--compute", ""]),
                         ["SPX", "DPX", "TPX", "QPX", "CPX"])
        self.assertEqual(self.complete(["set", "-C", "c"]), ["CPX"])
        self.assertEqual(self.complete(["partition", "set", "--memory", "nps4"]), ["NPS4"])
        self.assertEqual(self.complete(["list", "--compute=c"]), [])
        self.assertEqual(self.complete(["partition", "set", "--timeout", ""]), [])

    def test_quoted_words(self):
        # the words as typed, quotes and all: the CLI is asked with them unquoted
        self.assertEqual(self.complete(["'partition'", "s\\et", "--compute", "c"]), ["CPX"])

    def test_vf_values(self):
        if not self.gim:
            self.fail("AMDSMI_SIM is not set: no gim host to complete VFs on")
        vfs = self.complete(["sriov", "bind", ""], root=self.gim)
        self.assertEqual(len(vfs), 64, vfs)
        self.assertIn("0000:05:02.0", vfs)
        self.assertNotIn("0000:05:00.0", vfs)
        self.assertEqual(self.complete(["sriov", "release", "0000:26:02.7"], root=self.gim),
                         ["0000:26:02.7"])
        self.assertEqual(self.complete(["sriov", "bind", "0000:05:02.0", ""], root=self.gim), [])
        self.assertEqual(self.complete(["sriov", "bind", ""]), [])


def main(argv):
    global AMDSMI, COMPLETION, ZSH_COMPLETION, ENV
    if len(argv) < 4 or not os.path.isdir(FIXTURES_DIR):
        print(__doc__, file=sys.stderr)
        return 2
    AMDSMI, COMPLETION, ZSH_COMPLETION = (os.path.abspath(a) for a in argv[1:4])
    ENV = Env()
    try:
        prog = unittest.main(argv=[argv[0]] + argv[4:], exit=False, verbosity=2)
    finally:
        shutil.rmtree(ENV.tmp, ignore_errors=True)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
