"""No text of a .ss file ever runs as code (issue 25). A property test writes programs with hostile
names, `##` doc comments, `#` comments, extern targets and file names (CR, form feed, U+2028, `\"\"\"`,
backslashes, bytes that aren't UTF-8), has the code generators write them (the PyTorch module and
the Hugging Face folder, through build/golden_emit), and reads each result with Python's `ast`:
every import, call and name in it must be one the generators write on purpose, and each doc comment
must come out as the docstring it was. Then one end-to-end test per way in that worked before
(an extern target, a doc comment, a carriage return in a comment): `check`, export, and the `--hf`
folder loaded by transformers with trust_remote_code, none of which may run the payload."""
from __future__ import annotations

import ast
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, PYTHON, ROOT, cli, cli_env

sys.path.insert(0, str(ROOT / "python"))
from shapescript.runtime import generated_code  # noqa: E402

GOLDEN_EMIT = Path(os.environ.get("SHAPESCRIPT_BUILD", ROOT / "build")) / "golden_emit"

# Pieces of hostile text: everything Python, an editor or str.splitlines() reads as the end of a
# line, quotes and escapes that end or bend a string literal, bytes that aren't UTF-8, and code.
FRAGMENTS = [
    '"""', '"', "'''", "'", "\\", "\\U", "\\x", "\\N{", "\\u2028", "\r", "\f", "\v", "\x1c", "\x1d", "\x1e",
    "\x85", "\u2028", "\u2029", "\x07", "\x7f", b"\xff".decode("latin-1"), "{}", "%s", "#", " ", "é", "🙂",
    "__import__('os').system('touch PWNED')", "\rimport os; os.system('touch PWNED')\r",
    '"""\r__import__("os").system("touch PWNED")\r"""', "\\\r", ")", "(", ":", ";",
]
# Bytes that aren't UTF-8, put in as they are (FRAGMENTS are text, written as UTF-8), and NUL (which
# the parser refuses in a comment: rarer, or few programs would check).
RAW_BYTES = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x80", b"\xf4\x90\x80\x80", b"\x00"]
# Names the grammar lets through that mean something to Python or to the generated code.
NAMES = ["lambda", "exec", "eval", "__import__", "def", "None", "True", "class", "_check_shape", "_causal", "_ss_mode",
         "torch", "F", "nn", "math", "einops", "self", "os", "sys", "open", "print", "range", "len", "super", "tuple",
         "enumerate", "config", "ShapeScriptModel", "PreTrainedModel", "__init__", "__class__", "__builtins__", "globals",
         "getattr", "match", "type", "_", "__", "x", "b", "_cond1", "_then1", "kwargs", "builtins", "subprocess"]
HOSTILE_TARGETS = [
    "torch.nn.functional.relu(__import__('os').system('touch PWNED')) or torch.relu",
    "__import__('os').system('touch PWNED') or torch.relu", "torch.relu; import os", "torch.relu\rimport os",
    "torch.relu\u2028import os", "torch.__class__", "torch._C._nn.gelu", "torch.load", "torch.hub.load", "os.system",
    "builtins.exec", "torch..relu", "torch.relu.", "torch", "math", "torch.relu ", "torch.relu#", "scipy.special.erfc",
    "torch.utils.cpp_extension.load_inline", "torch.ops.aten.relu", "math.__dict__", "torch.relu\\",
]
ALLOWED_TARGETS = ["torch.special.erfc", "torch.relu", "torch.nn.functional.softplus", "math.erf"]

# What the generated code may import: docs/language.md's extern modules, einops, and for the folder
# transformers and its own configuration module.
MODULE_IMPORTS = {"torch", "torch.nn.functional", "math", "einops"}
FOLDER_IMPORTS = MODULE_IMPORTS | {"transformers", "transformers.modeling_outputs", "transformers.modeling_utils", "torch"}
# The callees the generators write by name that they don't define: the builtins and locals their
# fixed code calls, read from what they write for the golden programs (tests/golden/emit).
def called_but_not_defined(python: str) -> set[str]:
    tree = ast.parse(python)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defined |= {a.asname or a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)} - defined


HELPER_CALLS = set().union(*(called_but_not_defined(p.read_text()) for p in (ROOT / "tests" / "golden" / "emit").rglob("*.py")))
assert HELPER_CALLS and not HELPER_CALLS & generated_code.REFUSED_NAMES
# The roots of attribute chains the generators call through: modules, and values (self, a tensor).
MODULE_ROOTS = {"torch", "F", "nn", "math", "einops"}


def text(pieces: list) -> bytes:
    return b"".join(p if isinstance(p, bytes) else p.encode("utf-8", "surrogatepass") for p in pieces)


def hostile(rng: random.Random, length: int = 4, newline: bool = False) -> bytes:
    """A line of hostile text: FRAGMENTS and RAW_BYTES, never \\n (which ends a comment) unless asked."""
    pieces = [rng.choice(FRAGMENTS) if rng.random() < 0.85 else rng.choice(RAW_BYTES) for _ in range(length)]
    out = text(pieces)
    return out if newline else out.replace(b"\n", b" ")


def program(rng: random.Random, target: str) -> tuple[bytes, dict]:
    """A program whose names, docs and comments are hostile; and what each doc comment said."""
    names = rng.sample(NAMES, 5)
    dim, model, helper, param, local = names
    docs = {what: b"A doc " + hostile(rng, rng.randint(1, 6)) for what in ("model", "helper", "forward")}
    c = [b"# " + hostile(rng, rng.randint(1, 5)) for _ in range(6)]
    src = b"\n".join([
        b"## " + hostile(rng), b"dim " + dim.encode() + b" = 4  " + c[0], b"",
        b"## " + docs["model"], b"model " + model.encode() + b":", b"    ## " + hostile(rng),
        b"    param w: [" + dim.encode() + b" " + dim.encode() + b"] = normal(std=0.02)  " + c[1], b"",
        b"extern fn ext(x: Real) -> Real = \"" + target.encode("utf-8", "surrogatepass") + b"\"", c[2], b"",
        b"## " + docs["helper"], b"fn " + helper.encode() + b"(" + param.encode() + b": [b " + dim.encode() + b"]) -> [b " + dim.encode() + b"]:",
        b"    " + c[3], b"    " + local.encode() + b" = " + param.encode() + b" * 2  " + c[4],
        b"    return ext(" + local.encode() + b") as [b  " + c[5] + b"\n        " + dim.encode() + b"]", b"",
        b"## " + docs["forward"], b"fn forward(m: " + model.encode() + b", " + param.encode() + b": [b " + dim.encode() + b"]) -> [b " + dim.encode() + b"]:",
        b"    return " + helper.encode() + b"(" + param.encode() + b") |> linear(m.w)", b"",
    ])
    return src, {k: v.decode("utf-8", "replace") for k, v in docs.items()}


def emit(path: Path, *mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(GOLDEN_EMIT), os.fsencode(path), *mode], capture_output=True, timeout=60)


def defined_names(tree: ast.AST) -> set[str]:
    """Every name the code binds itself: its functions, classes, parameters, variables, imports."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
    return out


def root_of(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def assert_generated_on_purpose(python: str, folder: bool) -> ast.Module:
    """The invariant of generated code, read by Python: nothing in it came from the source as code."""
    assert python.split("\n") == python.splitlines() + ([""] if python.endswith("\n") else []), "a line terminator other than \\n"
    assert "PWNED" not in "".join(n.id for n in ast.walk(ast.parse(python)) if isinstance(n, ast.Name))
    tree = ast.parse(python)
    imports = FOLDER_IMPORTS if folder else MODULE_IMPORTS
    defined = defined_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert all(a.name in imports for a in node.names), ast.dump(node)
        elif isinstance(node, ast.ImportFrom):
            assert (node.level == 1 and node.module == "configuration_shapescript") or (node.level == 0 and node.module in imports), ast.dump(node)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                assert func.id in HELPER_CALLS or func.id in defined or func.id.startswith(("_cond", "_then", "_else", "_body")), ast.unparse(node)
            else:
                assert isinstance(func, (ast.Attribute, ast.Lambda, ast.Call)), ast.unparse(node)
                root = root_of(func)
                if isinstance(root, ast.Name):
                    assert root.id in MODULE_ROOTS or root.id in defined or root.id == "super", ast.unparse(node)
        elif isinstance(node, ast.Name):
            assert node.id not in generated_code.REFUSED_NAMES, node.id
        elif isinstance(node, ast.Attribute):
            assert not node.attr.startswith("__") or node.attr == "__init__", node.attr
        elif isinstance(node, (ast.Global, ast.Nonlocal, ast.Delete, ast.Try, ast.With, ast.AsyncFunctionDef)):
            raise AssertionError(ast.dump(node))
    generated_code.check(python, folder=folder)  # and the runtime's check agrees
    return tree


def docstrings(tree: ast.Module) -> list[str]:
    return [ast.get_docstring(n, clean=False) or "" for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


@pytest.mark.skipif(not GOLDEN_EMIT.exists(), reason="needs build/golden_emit")
def test_hostile_text_never_becomes_code(tmp_path):
    rng = random.Random(25)
    generated = refused = 0
    for case in range(150):
        target = rng.choice(ALLOWED_TARGETS) if case % 3 else rng.choice(HOSTILE_TARGETS)
        src, docs = program(rng, target)
        name = hostile(rng, rng.randint(0, 3)).replace(b"/", b"_").replace(b"\x00", b"_") + b".ss"
        path = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), name)))
        path.write_bytes(src)
        module = emit(path, "python")
        if target not in ALLOWED_TARGETS:
            said = b"E0101" if target.endswith("\\") else b"E0207"  # a `\\` before the closing `"` breaks the string
            assert module.returncode == 1 and said in module.stdout, (target, module.stdout[-2000:])
            refused += 1
            continue
        if module.returncode != 0:  # a name the checker refuses: said, no code
            assert module.returncode == 1 and b"error[" in module.stdout, module.stdout[-2000:]
            refused += 1
            continue
        generated += 1
        tree = assert_generated_on_purpose(module.stdout.decode("utf-8"), folder=False)
        # Each doc comment is a docstring, whole (a byte that isn't UTF-8 is U+FFFD, one per byte
        # where Python's decoder writes one per broken sequence).
        written = [re.sub("\ufffd+", "\ufffd", d) for d in docstrings(tree)]
        for what, doc in docs.items():
            assert any(re.sub("\ufffd+", "\ufffd", doc).strip() in d for d in written), (what, doc, written)
        for mode in ("hf-modeling", "hf-config"):
            folder = emit(path, mode, "forward")
            assert folder.returncode == 0, folder.stdout[-2000:] + folder.stderr[-2000:]
            assert_generated_on_purpose(folder.stdout.decode("utf-8"), folder=True)
    assert generated >= 30 and refused >= 50, (generated, refused)  # refused: E0207, or a comment the parser ends early


@pytest.mark.skipif(not GOLDEN_EMIT.exists(), reason="needs build/golden_emit")
def test_hostile_comments_in_a_language_model_folder(tmp_path):
    """The causal-LM folder copies source lines into its comments and docstrings (the block loop,
    the output layer): a hostile comment on every line, and doc comments, change nothing but text."""
    rng = random.Random(2028)
    lines = (EXAMPLES / "tiny_sdpa.ss").read_bytes().split(b"\n")
    for case in range(12):
        out = []
        for line in lines:
            if line.startswith((b"model", b"fn")):
                out.append(b"## " + hostile(rng, 5).replace(b"\x00", b" "))
            out.append(line + (b"  # " + hostile(rng, 5).replace(b"\x00", b" ") if line.strip() and not line.strip().startswith(b"|>") else b""))
        path = tmp_path / f"lm{case}.ss"
        path.write_bytes(b"\n".join(out))
        for mode in ("hf-modeling", "hf-config"):
            result = emit(path, mode, "forward")
            assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
            assert_generated_on_purpose(result.stdout.decode("utf-8"), folder=True)
        result = emit(path, "python")
        assert result.returncode == 0, result.stdout[-2000:]
        assert_generated_on_purpose(result.stdout.decode("utf-8"), folder=False)


# What the generators wrote before for the ways in, and other code they never write.
NEVER_WRITTEN = [
    "import torch\n\ndef f(x):\n    return torch.relu if __import__('pathlib').Path('S').touch() else torch.relu(x)\n",
    'import torch\n\nclass M:\n    """"""\n    __import__("os").system("id")\n    """"""\n',
    "import torch\nD = 4  #\rimport os\n",
    "import torch\nD = 4  #\u2028import os\n",
    "import os\n",
    "import torch as os\n",
    "from os import system\n",
    "from . import modeling_shapescript\n",
    "import torch\nx = torch.__class__\n",
    "x = ().__class__.__bases__[0].__subclasses__()\n",
    "exec('1')\n", "eval('1')\n", "open('/etc/passwd')\n", "import torch\ngetattr(torch, 'load')\n",
    "import torch\nclass __M__:\n    pass\n", "global x\n", "def f(:\n",
]


@pytest.mark.parametrize("python", NEVER_WRITTEN, ids=range(len(NEVER_WRITTEN)))
def test_runtime_check_refuses_what_the_generators_never_write(python):
    with pytest.raises(generated_code.GeneratedCodeError):
        generated_code.check(python)
    with pytest.raises(generated_code.GeneratedCodeError):
        generated_code.check(python, folder=True)


def test_runtime_check_passes_what_the_generators_write():
    for path in (ROOT / "tests" / "golden" / "emit").rglob("*.py"):
        generated_code.check(path.read_text(), path.name, folder=".hf_" in path.name)


# ---------------------------------------------------------------------------------------------
# End to end: each way in that worked before, through `check`, export and the --hf folder.

PAYLOAD = "__import__('pathlib').Path('{sentinel}').touch()"

# 1. The extern target, pasted as code (it starts with `torch.`, all E1704 and the folder's generator
# looked at): it ran when the function was called, so when it was traced or the folder's model ran.
EXTERN = """\
extern fn act(x: Real) -> Real = "torch.relu if {payload} else torch.relu"

dim D = 4

model M:
    param w: [D D] = normal(std=0.02)

export fn f(x: [b D]) -> [b D]:
    return act(x)

fn forward(m: M, x: [b D]) -> [b D]:
    return linear(act(x), m.w)
"""

# 2. A doc comment that closes the docstring: its lines ran when the module was imported.
# 3. A carriage return in a comment: the rest of the line was a line of code in the module.
# One program holds both (each payload touches a file of its own), so one export tests the two.
TEXT = '''\
dim D = 4  #\r{comment}

## """
## {doc}
## """
model M:
    param w: [D D] = normal(std=0.02)  #\r        {comment}

## """; {doc}; """
export fn f(x: [b D]) -> [b D]:
    y = x * 2  #\r    {comment}
    return y

## """
## {doc}
## """
fn forward(m: M, x: [b D]) -> [b D]:
    y = linear(x, m.w)  #\r    {comment}
    return y
'''


def place_hostile(tmp_path: Path, way: str) -> tuple[Path, dict[str, Path]]:
    """The program of a way in ("extern", or "text": a doc comment and a comment), and the files its
    payloads touch, by way in."""
    path = tmp_path / f"{way}.ss"
    if way == "extern":
        sentinels = {"extern": tmp_path / "PWNED_extern"}
        path.write_bytes(EXTERN.format(payload=PAYLOAD.format(sentinel=sentinels["extern"])).encode())
    else:
        sentinels = {w: tmp_path / f"PWNED_{w}" for w in ("doc", "comment")}
        path.write_bytes(TEXT.format(**{w: PAYLOAD.format(sentinel=f) for w, f in sentinels.items()}).encode())
    return path, sentinels


def assert_never_ran(sentinels: dict[str, Path], when: str):
    ran = [way for way, f in sentinels.items() if f.exists()]
    assert not ran, f"the {' and '.join(ran)} payload ran {when}"


@pytest.mark.parametrize("way", ["extern", "text"])
def test_check_and_export_never_run_the_payload(tmp_path, way):
    path, sentinels = place_hostile(tmp_path, way)
    checked = cli("check", path)
    exported = cli("export", path, "-o", tmp_path / "f.pt2", "--python", PYTHON, timeout=600)
    assert_never_ran(sentinels, "in export")
    if way == "extern":  # refused by the checker, and so by export: before, check said nothing and export ran it
        assert checked.returncode == 1 and "E0207" in checked.stdout, checked.stdout
        assert exported.returncode != 0
        return
    # Ordinary text in doc comments and comments: the program exports, and compiles in this process.
    assert checked.returncode == 0, checked.stdout
    assert exported.returncode == 0, exported.stderr
    import shapescript

    module = shapescript.compile(path)
    assert_never_ran(sentinels, "in shapescript.compile")
    assert PAYLOAD.format(sentinel=sentinels["doc"]) in module.M.__doc__  # the doc comment, as text


@pytest.mark.parametrize("way", ["extern", "text"])
def test_an_hf_folder_loaded_by_transformers_never_runs_the_payload(tmp_path, way):
    transformers = pytest.importorskip("transformers")
    import torch

    path, sentinels = place_hostile(tmp_path, way)
    result = cli("export", path, "--hf", tmp_path / "hf", "--fn", "forward", "--python", PYTHON, timeout=600)
    assert_never_ran(sentinels, "while the folder was written")
    if way == "extern":
        assert result.returncode != 0 and "E0207" in result.stdout + result.stderr
        return
    assert result.returncode == 0, result.stderr
    model = transformers.AutoModel.from_pretrained(str(tmp_path / "hf"), trust_remote_code=True, dtype=torch.float32)
    model(torch.randn(2, 4))
    assert_never_ran(sentinels, "when transformers loaded the folder")


def test_a_language_model_folder_loaded_by_transformers_never_runs_the_payload(tmp_path):
    """tiny_sdpa.ss with a comment inside a signature, which both code generators copied into a
    docstring (the function's, and the folder's attention module's): a triple quote in it closed the
    docstring and the rest ran. AutoModelForCausalLM loads the folder and runs it."""
    transformers = pytest.importorskip("transformers")
    import torch

    sentinel = tmp_path / "PWNED"
    source = (EXAMPLES / "tiny_sdpa.ss").read_text()
    signature = "fn attention(x: [b n D], w_qkv: [3*D D], w_o: [D D]) -> [b n D]:"
    assert signature in source
    hostile = f'fn attention(x: [b n D],  # """; {PAYLOAD.format(sentinel=sentinel)}; """\n' + " " * 13 + "w_qkv: [3*D D], w_o: [D D]) -> [b n D]:"
    path = tmp_path / "lm.ss"
    path.write_text(source.replace(signature, hostile))
    result = cli("export", path, "--hf", tmp_path / "hf", "--python", PYTHON, timeout=600)
    assert not sentinel.exists(), "the payload ran while the folder was written"
    assert result.returncode == 0, result.stderr
    model = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path / "hf"), trust_remote_code=True, dtype=torch.float32)
    model(torch.randint(0, 500, (1, 5)))
    assert not sentinel.exists(), "transformers ran the payload from the folder's code"


def test_runtime_check_refuses_a_tampered_folder(tmp_path):
    """verify and export check a folder's Python files before transformers imports them."""
    (tmp_path / "configuration_shapescript.py").write_text("from transformers import PretrainedConfig\n")
    (tmp_path / "modeling_shapescript.py").write_text("import torch  #\rimport os\n")
    with pytest.raises(generated_code.GeneratedCodeError, match="line terminator"):
        generated_code.check_folder(tmp_path)
    (tmp_path / "modeling_shapescript.py").write_text("import torch\nfrom .configuration_shapescript import PretrainedConfig\n")
    generated_code.check_folder(tmp_path)


def test_a_module_import_python_names_keeps_its_name(tmp_path):
    """Names are mangled (`torch` → `torch_`) but for a module `import python` names: its calls work."""
    import torch

    import shapescript

    path = tmp_path / "ip.ss"
    path.write_text("import python torch\n\nfn f(x: [b 4]) -> [b 4]:\n    return torch.relu(x) as [b 4]\n")
    assert torch.equal(shapescript.compile(path).f(-torch.ones(2, 4)), torch.zeros(2, 4))  # before: NameError: torch_


# 4. A module that `import python` names: importing it runs its code. Running a program (`run`,
# shapescript.compile) runs its Python; exporting must not, and an exported function can't use it
# (E1701), so an export's module leaves the import out and the module is never imported.
IMPORTS_PYTHON = """\
import python shapescript_probe_module

dim D = 4

fn load(x: [b D]) -> [b D]:
    return shapescript_probe_module.load(x) as [b D]

export fn f(x: [b D]) -> [b D]:
    return x * 2
"""


def test_export_never_imports_what_import_python_names(tmp_path):
    sentinel = tmp_path / "PWNED_import"
    (tmp_path / "shapescript_probe_module.py").write_text(f"{PAYLOAD.format(sentinel=sentinel)}\ndef load(x):\n    return x\n")
    path = tmp_path / "imports.ss"
    path.write_text(IMPORTS_PYTHON)
    result = cli("export", path, "-o", tmp_path / "f.pt2", "--python", PYTHON, env=cli_env(PYTHONPATH=str(tmp_path)), timeout=600)
    assert result.returncode == 0, result.stderr
    assert not sentinel.exists(), "exporting imported a module the source named"
    # Running the program is running its Python, as documented: compile imports the module.
    probe = subprocess.run([PYTHON, "-c", f"import shapescript; shapescript.compile({str(path)!r})"],
                           env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "python")])},
                           capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0, probe.stderr
    assert sentinel.exists(), "shapescript.compile should import what the program names (the check above could not fail)"
