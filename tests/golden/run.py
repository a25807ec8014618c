#!/usr/bin/env python3
"""Golden tests of `shapescript check`.

Each test is a `.ss` file under tests/golden/check/ with its expected output beside it as
`NAME.out`: exactly what `shapescript check NAME.ss` prints to stdout, run from that folder with
the relative file name, followed by a final line `exit: N`. A first line `# check: ARGS` adds ARGS to the command line
(e.g. `# check: --serving error` for the serving rules).

    run.py --shapescript PATH            run every test; a unified diff for each mismatch
    run.py --filter SUBSTR               run the tests whose name contains SUBSTR
    run.py --update                      rewrite the .out files (or SHAPESCRIPT_UPDATE_GOLDEN=1)
"""
import argparse
import difflib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK_DIR = os.path.join(HERE, "check")


def default_binary():
    root = os.path.dirname(os.path.dirname(HERE))
    for candidate in (os.path.join(root, "build", "shapescript"), shutil.which("shapescript")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def extra_arguments(name):
    with open(os.path.join(CHECK_DIR, name), encoding="utf-8", errors="replace") as f:
        first = f.readline()
    return first[len("# check:"):].split() if first.startswith("# check:") else []


def run_one(binary, name):
    try:
        proc = subprocess.run([binary, "check", *extra_arguments(name), name], cwd=CHECK_DIR,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    except subprocess.TimeoutExpired:
        return "(timed out after 60 s)\nexit: timeout\n"
    out = proc.stdout.decode("utf-8", errors="replace")
    if out and not out.endswith("\n"):
        out += "\n"
    return out + "exit: %d\n" % proc.returncode


def main():
    parser = argparse.ArgumentParser(description="golden tests of `shapescript check`")
    parser.add_argument("--shapescript", help="the shapescript binary (default: build/shapescript)")
    parser.add_argument("--update", action="store_true", help="rewrite the .out files with the current output")
    parser.add_argument("--filter", default="", help="run only tests whose file name contains this")
    args = parser.parse_args()
    update = args.update or os.environ.get("SHAPESCRIPT_UPDATE_GOLDEN", "") not in ("", "0")

    binary = args.shapescript or default_binary()
    if not binary:
        print("error: no shapescript binary; pass --shapescript PATH", file=sys.stderr)
        return 2
    binary = os.path.abspath(binary)

    tests = sorted(f for f in os.listdir(CHECK_DIR) if f.endswith(".ss") and args.filter in f)
    if not tests:
        print("error: no tests match", file=sys.stderr)
        return 2

    passed = failed = updated = 0
    for name in tests:
        actual = run_one(binary, name)
        expected_path = os.path.join(CHECK_DIR, name[:-3] + ".out")
        expected = None
        if os.path.exists(expected_path):
            with open(expected_path, encoding="utf-8", newline="") as f:
                expected = f.read()
        if update:
            if expected != actual:
                with open(expected_path, "w", encoding="utf-8", newline="") as f:
                    f.write(actual)
                updated += 1
                print("updated %s" % os.path.relpath(expected_path, HERE))
            passed += 1
            continue
        if expected == actual:
            passed += 1
            continue
        failed += 1
        if expected is None:
            print("FAIL %s: no %s (run with --update to create it)" % (name, os.path.basename(expected_path)))
            expected = ""
        else:
            print("FAIL %s" % name)
        diff = difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                    fromfile="check/" + name[:-3] + ".out", tofile="actual")
        for line in diff:
            sys.stdout.write(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    if update:
        print("%d updated" % updated)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
