#!/usr/bin/env python3
"""docs/language.md's built-in tables are generated from the built-in table (core/check/builtins.cpp).

Each table sits between two markers in docs/language.md,

    <!-- builtins: core -->            the pure built-ins and the initializers
    <!-- builtins: training -->        the training built-ins
    <!-- end builtins -->

and is what `builtin_reference PART` prints (cmake builds the tool as build/builtin_reference). The
test fails, with a diff, when a table differs: a built-in added to the table without its line in
the docs, or a summary changed in one place only.

    builtin_reference.py --tool PATH     compare (PATH defaults to build/builtin_reference)
    builtin_reference.py --update        rewrite the tables in docs/language.md (or SHAPESCRIPT_UPDATE_GOLDEN=1)
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "language.md")
TABLE = re.compile(r"(<!-- builtins: (\w+) -->\n)(.*?)(<!-- end builtins -->)", re.S)


def generated(tool, part):
    done = subprocess.run([tool, part], capture_output=True, text=True, check=True)
    return done.stdout


def main():
    parser = argparse.ArgumentParser(description="docs/language.md's built-in tables against the built-in table")
    parser.add_argument("--tool", default=os.path.join(ROOT, "build", "builtin_reference"), help="the builtin_reference tool")
    parser.add_argument("--update", action="store_true", help="rewrite the tables in docs/language.md")
    args = parser.parse_args()
    update = args.update or os.environ.get("SHAPESCRIPT_UPDATE_GOLDEN", "") not in ("", "0")

    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    parts = [m.group(2) for m in TABLE.finditer(doc)]
    if sorted(parts) != ["core", "training"]:
        print("FAIL docs/language.md must hold the markers `<!-- builtins: core -->` and `<!-- builtins: training -->`, "
              "each closed by `<!-- end builtins -->`; found %s" % (parts or "none"))
        return 1
    failed = 0

    def replace(m):
        nonlocal failed
        want = generated(args.tool, m.group(2))
        have = m.group(3)
        if have != want and not update:
            failed += 1
            print("FAIL docs/language.md's %s built-ins differ from the built-in table (run with --update to accept, then review `git diff`)"
                  % m.group(2))
            sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True), "docs/language.md", "generated"))
        return m.group(1) + want + m.group(4)

    updated = TABLE.sub(replace, doc)
    if update and updated != doc:
        with open(DOC, "w", encoding="utf-8") as f:
            f.write(updated)
        print("updated docs/language.md")
    print("%d passed, %d failed" % (len(parts) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
