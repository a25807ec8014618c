#!/usr/bin/env python3
"""Golden tests: what `shapescript check` prints, and what the code generators write.

check: each test is a `.ss` file under tests/golden/check/ with its expected output beside it as
`NAME.out`: exactly what `shapescript check NAME.ss` prints to stdout, run from that folder with
the relative file name, followed by a final line `exit: N`; where a diagnostic offers fixes, then
what `check` says of the file with the first fix of each applied (a fix is tested by its result). A first line `# check: ARGS` adds ARGS
to the command line (e.g. `# check: --serving error` for the serving rules).

refuse: each test is a `.ss` file under tests/golden/refuse/ whose first line `# refuse: ARGS` is a
command of the CLI that takes the file apart as a model (`import-weights {} hf -o ckpt.pt`,
`export {} --hf out`, `export {} --gguf m.gguf`, `verify {}`), `{}` the file's name; `NAME.out` is
what it prints, stdout then stderr, and `exit: N`. It runs in a fresh folder holding the file and
an empty folder `hf`: every refusal comes before a folder or a Python is read, so each names its
line of the `.ss` without torch.

emit: each test is a `.ss` file under tests/golden/emit/ with the code generated from it beside
it: `NAME.py`, the PyTorch module (what `shapescript.compile` and `export` run), and for a file
whose first line is `# emit: --hf FN`, `NAME.hf_modeling.py` and `NAME.hf_configuration.py`, the
Hugging Face folder's code with FN as the forward. The programs in ELSEWHERE below are tests too,
read where they are (examples/, tests/python/programs/), their code kept under
tests/golden/emit/examples/ and tests/golden/emit/programs/. Every
generated file must parse as Python. A code generator change is then a diff to review: refresh
with --update and read `git diff`.

    run.py --shapescript PATH            the check goldens; a unified diff for each mismatch
    run.py --emit PATH                   the emit goldens, with PATH the golden_emit tool
                                         (cmake builds it as build/golden_emit)
    run.py --filter SUBSTR               only the tests whose name contains SUBSTR
    run.py --update                      rewrite the expected files (or SHAPESCRIPT_UPDATE_GOLDEN=1)

With neither --shapescript nor --emit, both suites run on the binaries build/ holds.
"""
import argparse
import ast
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHECK_DIR = os.path.join(HERE, "check")
EMIT_DIR = os.path.join(HERE, "emit")
REFUSE_DIR = os.path.join(HERE, "refuse")
# Programs kept where they are whose generated code is kept too: folder -> {file: the function
# written as a Hugging Face forward, or None for the PyTorch module only}. Together they cover
# every kind of program the code generators write.
ELSEWHERE = {
    "examples": {
        "patches.ss": None,         # an export fn with derived dims, einops rearrange
        "tiny.ss": "forward",       # attention by hand: a model vLLM can't serve
        "tiny_sdpa.ss": "forward",  # scaled_dot_product_attention: a servable language model
        "llama.ss": "forward",      # a block loop, rotary embeddings, RMSNorm, SwiGLU
        "gpt2.ss": "forward",       # learned positions, layer_norm, GELU
        "gemma.ss": "forward",      # a scaled embedding tied to the output, (1 + w) norms, GeGLU, one kv head
        "phi3.ss": "forward",       # fused qkv and gate/up projections split by einops (a dim named F)
        "mistral_sliding.ss": "forward",  # a sliding window: a band mask, and the folder's sliding_window
        "train_tiny.ss": None,      # the training built-ins, as `shapescript run` runs them
        "mixtral.ss": "forward",    # sparse experts: topk routing, `_experts` on the rows routed to each expert
        "deepseek_v3.ss": "forward",  # multi-head latent attention: the latent cached, `expand_kv`, norm modules, MLA's config keys
        "cnn.ss": None,             # conv2d, max_pool2d and a flatten: F.conv2d, F.max_pool2d, einops
    },
    "tests/python/programs": {
        "as_assert.ss": None,       # an `as` assertion on derived dims
        "nonzero.ss": None,         # a data-dependent size (?k)
        "cond_if.ss": None,         # `if` on a value: torch.cond
        "if_elif.ss": None,         # if/elif on Bool inputs: nested torch.cond
        "while_for.ss": None,       # `for` over a dynamic size: torch.while_loop
        "unrolled_for.ss": None,    # `for` over a dim: unrolled
        "map_axis.ss": None,        # map over an axis: torch.vmap
        "map_positions.ss": None,   # map over sizes
    },
}


def built(name, on_path=None):
    for candidate in (os.path.join(ROOT, "build", name), on_path and shutil.which(on_path)):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def first_line_arguments(path, marker):
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline()
    return first[len(marker):].split() if first.startswith(marker) else []


def run(argv, cwd, with_stderr=False):
    """stdout (then stderr, with_stderr), and the exit status (None: timed out)."""
    try:
        proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    except subprocess.TimeoutExpired:
        return "(timed out after 60 s)\n", None
    out = proc.stdout.decode("utf-8", errors="replace")
    return out + (proc.stderr.decode("utf-8", errors="replace") if with_stderr else ""), proc.returncode


# --- the suites: each gives (expected file, actual text) for a .ss file -----------------------


def check_outputs(binary, name):
    arguments = first_line_arguments(os.path.join(CHECK_DIR, name), "# check:")
    out, status = run([binary, "check", *arguments, name], CHECK_DIR)
    if out and not out.endswith("\n"):
        out += "\n"
    out += "exit: %s\n" % ("timeout" if status is None else status)
    yield os.path.join(CHECK_DIR, name[:-3] + ".out"), out + with_fixes_applied(binary, name, arguments)


def with_fixes_applied(binary, name, arguments):
    """What `check` says once each diagnostic's first fix is applied, so that a fix is a golden too:
    one that leaves the program wrong, or wrong in another way, shows as a diff. Empty without fixes."""
    said, _ = run([binary, "check", "--format", "json", *arguments, name], CHECK_DIR)
    try:
        diagnostics = json.loads(said)
    except ValueError:
        return ""
    with open(os.path.join(CHECK_DIR, name), encoding="utf-8") as f:
        lines = f.read().split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(line, column):
        return starts[line - 1] + column - 1

    edits, titles = [], []
    for d in diagnostics:
        if d.get("fixes"):
            titles.append(d["fixes"][0]["title"])
            edits += [(offset(e["span"]["line"], e["span"]["column"]), offset(e["span"]["end_line"], e["span"]["end_column"]), e["replacement"])
                      for e in d["fixes"][0]["edits"]]
    if not edits:
        return ""
    text = "\n".join(lines)
    end = len(text) + 1
    for begin, stop, replacement in sorted(edits, reverse=True):
        if stop > end:  # overlaps an edit already made: the first fix wins
            continue
        text, end = text[:begin] + replacement + text[stop:], begin
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)
        out, status = run([binary, "check", *arguments, name], folder)
    if out and not out.endswith("\n"):
        out += "\n"
    return "--- with the first fix of each applied: %s\n%sexit: %s\n" % ("; ".join(titles), out, "timeout" if status is None else status)


def refuse_outputs(binary, name):
    arguments = first_line_arguments(os.path.join(REFUSE_DIR, name), "# refuse:")
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(os.path.join(REFUSE_DIR, name), folder)
        os.mkdir(os.path.join(folder, "hf"))
        out, status = run([binary, *[a.replace("{}", name) for a in arguments]], folder, with_stderr=True)
    if out and not out.endswith("\n"):
        out += "\n"
    yield os.path.join(REFUSE_DIR, name[:-3] + ".out"), out + "exit: %s\n" % ("timeout" if status is None else status)


def emit_outputs(tool, source_dir, name, golden_dir, hf_function):
    stem = name[:-3]
    outputs = [(stem + ".py", ["python"])]
    if hf_function:
        outputs += [(stem + ".hf_modeling.py", ["hf-modeling", hf_function]), (stem + ".hf_configuration.py", ["hf-config", hf_function])]
    for file, mode in outputs:
        out, status = run([tool, name, *mode], source_dir)
        if status is not None and status < 0:  # killed by a signal: a crash is never an expected output
            sys.exit("golden_emit crashed (signal %d) on %s %s:\n%s" % (-status, name, " ".join(mode), out))
        if status != 0:  # a program that doesn't check, or a generator that refuses it: said instead of code
            out += "# golden_emit exited with %s\n" % ("a timeout" if status is None else "status %d" % status)
        else:
            try:
                ast.parse(out, filename=file)
            except SyntaxError as e:
                out += "# not Python: %s (line %s)\n" % (e.msg, e.lineno)
        yield os.path.join(golden_dir, file), out


def check_tests(binary, name_filter):
    """(name, its outputs) for each check golden, and the folders its expected files are in."""
    names = sorted(f for f in os.listdir(CHECK_DIR) if f.endswith(".ss") and name_filter in f)
    return [(name, check_outputs(binary, name)) for name in names], [CHECK_DIR]


def refuse_tests(binary, name_filter):
    names = sorted(f for f in os.listdir(REFUSE_DIR) if f.endswith(".ss") and name_filter in f)
    return [(name, refuse_outputs(binary, name)) for name in names], [REFUSE_DIR]


def emit_tests(tool, name_filter):
    tests = []
    for name in sorted(f for f in os.listdir(EMIT_DIR) if f.endswith(".ss") and name_filter in f):
        hf = first_line_arguments(os.path.join(EMIT_DIR, name), "# emit:")
        tests.append((name, emit_outputs(tool, EMIT_DIR, name, EMIT_DIR, hf[1] if hf[:1] == ["--hf"] and len(hf) == 2 else None)))
    golden_dirs = [EMIT_DIR]
    for folder, programs in ELSEWHERE.items():
        golden_dir = os.path.join(EMIT_DIR, os.path.basename(folder))
        os.makedirs(golden_dir, exist_ok=True)
        golden_dirs.append(golden_dir)
        for name, hf_function in sorted(programs.items()):
            if name_filter in name:
                tests.append((folder + "/" + name, emit_outputs(tool, os.path.join(ROOT, folder), name, golden_dir, hf_function)))
    return tests, golden_dirs


SUITES = {"check": check_tests, "refuse": refuse_tests, "emit": emit_tests}


def run_suite(suite, binary, name_filter, update):
    """Returns (passed, failed, updated)."""
    tests, folders = SUITES[suite](binary, name_filter)
    passed = failed = updated = 0
    produced = set()
    for name, outputs in tests:
        for expected_path, actual in outputs:
            produced.add(expected_path)
            shown = os.path.relpath(expected_path, HERE)
            expected = None
            if os.path.exists(expected_path):
                with open(expected_path, encoding="utf-8", newline="") as f:
                    expected = f.read()
            if expected == actual:
                passed += 1
                continue
            if update:
                with open(expected_path, "w", encoding="utf-8", newline="") as f:
                    f.write(actual)
                updated += 1
                passed += 1
                print("updated %s" % shown)
                continue
            failed += 1
            if expected is None:
                print("FAIL %s: no %s (run with --update to create it)" % (name, shown))
                expected = ""
            else:
                print("FAIL %s: %s differs (run with --update to accept, then review `git diff`)" % (name, shown))
            diff = difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                        fromfile=shown, tofile="actual")
            for line in diff:
                sys.stdout.write(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    # A golden that no test produces any more would never be compared again.
    if not name_filter:
        for folder in folders:
            for f in sorted(os.listdir(folder)):
                path = os.path.join(folder, f)
                if f.endswith(".ss") or os.path.isdir(path) or path in produced:
                    continue
                if update:
                    os.remove(path)
                    print("removed %s" % os.path.relpath(path, HERE))
                else:
                    failed += 1
                    print("FAIL %s: no test produces it (run with --update to remove it)" % os.path.relpath(path, HERE))
    return passed, failed, updated, len(tests)


def main():
    parser = argparse.ArgumentParser(description="golden tests of `shapescript check` and of the code generators")
    parser.add_argument("--shapescript", help="the shapescript binary: run the check goldens")
    parser.add_argument("--emit", help="the golden_emit tool: run the emit goldens")
    parser.add_argument("--update", action="store_true", help="rewrite the expected files with the current output")
    parser.add_argument("--filter", default="", help="run only tests whose file name contains this")
    args = parser.parse_args()
    update = args.update or os.environ.get("SHAPESCRIPT_UPDATE_GOLDEN", "") not in ("", "0")

    runs = []
    if args.shapescript or not args.emit:
        runs.append(("check", args.shapescript or built("shapescript", "shapescript")))
        runs.append(("refuse", args.shapescript or built("shapescript", "shapescript")))
    if args.emit or not args.shapescript:
        runs.append(("emit", args.emit or built("golden_emit")))
    totals = [0, 0, 0]
    matched = 0
    for suite, binary in runs:
        if not binary:
            print("error: no binary for the %s goldens; pass --%s PATH" % (suite, "shapescript" if suite == "check" else "emit"),
                  file=sys.stderr)
            return 2
        passed, failed, updated, count = run_suite(suite, os.path.abspath(binary), args.filter, update)
        totals = [totals[0] + passed, totals[1] + failed, totals[2] + updated]
        matched += count
    if not matched:
        print("error: no tests match", file=sys.stderr)
        return 2
    if update:
        print("%d updated" % totals[2])
    print("%d passed, %d failed" % (totals[0], totals[1]))
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main())
