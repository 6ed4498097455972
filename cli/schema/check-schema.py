#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks the amdsmi/1 JSON Schema, and validates documents against it.

    check-schema.py SCHEMA              checks that SCHEMA is a valid draft 2020-12 schema
    check-schema.py SCHEMA FILE|- ...   also validates every JSON document in each FILE
                                        (one pretty document, or one document per line as
                                        watch mode prints them); '-' reads stdin
    check-schema.py SCHEMA --cli AMDSMI TREES
                                        runs AMDSMI on every sysfs tree under TREES (each
                                        verb, --json, also partition selections and watch
                                        mode) and on a missing root, and validates the output

Exit status: 0 valid, 1 invalid, 2 usage.
"""

import json
import os
import subprocess
import sys

import jsonschema


def documents(text):
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return
        doc, pos = decoder.raw_decode(text, pos)
        yield doc


def run_cli(validate, amdsmi, trees):
    """Validates what amdsmi prints for every fixture tree; returns the number of failures."""
    failed = 0
    runs = []
    for tree in sorted(os.listdir(trees)):
        root = os.path.join(trees, tree)
        if not os.path.isdir(root):
            continue
        for verb in ("list", "static", "metric", "process"):
            runs.append((root, [verb, "--json"], 0))
        runs.append((root, ["partition", "--json"], 0))
        runs.append((root, ["partition", "--json", "-g", "0.0"], None))
        runs.append((root, ["partition", "set", "--json", "-g", "0", "--compute", "CPX",
                            "--dry-run"], None))
        runs.append((root, ["static", "--json", "-g", "0.0"], None))
        runs.append((root, ["metric", "--json", "-g", "0.0"], None))
        runs.append((root, ["metric", "--json", "-w", "0.01", "-n", "2"], 0))
        runs.append((root, ["list", "--json", "-g", "99"], 3))
        runs.append((root, ["topology", "--json"], 0))
        runs.append((root, ["topology", "--json", "-g", "0.0"], None))
    runs.append((os.path.join(trees, "does-not-exist"), ["metric", "--json"], 3))
    runs.append((trees, ["list", "--json", "-g", "x"], 2))

    for root, args, want_rc in runs:
        env = dict(os.environ, AMDSMI_SYSFS_ROOT=root)
        p = subprocess.run([amdsmi] + args, env=env, capture_output=True, text=True, check=False)
        name = f"AMDSMI_SYSFS_ROOT={root} amdsmi {' '.join(args)}"
        if want_rc is not None and p.returncode != want_rc:
            print(f"{name}: exit status {p.returncode}, expected {want_rc}: {p.stderr}",
                  file=sys.stderr)
            failed += 1
        failed += validate(name, p.stdout, 2 if "-n" in args else 1)
    return failed


def main(argv):
    if len(argv) < 2 or (len(argv) > 2 and argv[2] == "--cli" and len(argv) != 5):
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    def validator_for(doc):
        # The schema's branch for this document, for precise messages (oneOf reports only
        # "not valid under any"); the whole schema when none is recognised.
        if isinstance(doc, dict):
            name = "error_document" if "error" in doc else f"{doc.get('command')}_document"
            if name in schema["$defs"]:
                branch = {k: v for k, v in schema.items() if k != "oneOf"}
                branch["$ref"] = f"#/$defs/{name}"
                return jsonschema.Draft202012Validator(branch)
        return validator

    def validate(name, text, expected=None):
        failed = 0
        count = 0
        try:
            for doc in documents(text):
                count += 1
                errors = list(validator_for(doc).iter_errors(doc))
                if not errors:
                    errors = list(validator.iter_errors(doc))
                errors.sort(key=lambda e: [str(p) for p in e.absolute_path])
                for e in errors:
                    failed += 1
                    path = "/".join(str(p) for p in e.absolute_path)
                    print(f"{name}: document {count}: /{path}: {e.message}", file=sys.stderr)
        except json.JSONDecodeError as e:
            print(f"{name}: not JSON: {e}", file=sys.stderr)
            failed += 1
        if count == 0 or (expected is not None and count != expected):
            print(f"{name}: {count} documents", file=sys.stderr)
            failed += 1
        return failed

    if len(argv) == 5 and argv[2] == "--cli":
        failed = run_cli(validate, argv[3], argv[4])
    else:
        failed = 0
        for name in argv[2:]:
            if name == "-":
                text = sys.stdin.read()
            else:
                with open(name, encoding="utf-8") as f:
                    text = f.read()
            failed += validate(name, text)
    print(f"{'FAIL' if failed else 'OK'}: {failed} problem(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
