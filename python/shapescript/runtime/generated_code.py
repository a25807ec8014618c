"""The runtime's second look at code the ShapeScript generators wrote, before it runs it.

The generators build code from the checked program and let source text in only through quoting
(core/emit/python_writer.h), and the checker allows an `extern fn` only a torch or math function
(E0207). This module checks the result again, from Python's own reading of it, so that a generated
module or Hugging Face folder that somehow holds something else is refused instead of run: it
parses the code with `ast`, and refuses imports outside the allowlist, the builtins that run or
reach code (eval, exec, __import__, open, ...), dunder attributes, and line terminators other than
"\\n". Standard library only: exporter.py and the scripts load it beside themselves.
"""

from __future__ import annotations

import ast

# What an `extern fn` may name, and what the generated code imports besides (docs/language.md).
EXTERN_MODULES = ("torch", "math")
MODULE_IMPORTS = frozenset(EXTERN_MODULES) | {"einops"}
# A Hugging Face folder's files also import transformers and their own configuration module.
FOLDER_IMPORTS = MODULE_IMPORTS | {"transformers"}
FOLDER_RELATIVE = frozenset({"configuration_shapescript"})

# Names the generators never write that would run code, reach the interpreter or touch files.
REFUSED_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "getattr", "setattr",
    "delattr", "breakpoint", "input", "exit", "quit", "help", "memoryview", "__builtins__", "builtins",
    "__loader__", "__spec__", "importlib", "os", "sys", "subprocess",
})
ALLOWED_DUNDERS = frozenset({"__init__"})


def _dunder(name):
    return name.startswith("__") and name.endswith("__") and name not in ALLOWED_DUNDERS
# Line terminators other than \n that Python, an editor or str.splitlines() knows: the generators
# never write one, so none can start a line the generator didn't write.
LINE_TERMINATORS = "\r\f\v\x1c\x1d\x1e\x85\u2028\u2029"


class GeneratedCodeError(Exception):
    """Generated code that holds something the generators never write."""


def _root(name):
    return (name or "").split(".")[0]


def check(source, what="the generated module", folder=False, python_imports=False):
    """Raises GeneratedCodeError unless `source` is code the generators could have written.

    folder: a Hugging Face folder's file (transformers and `.configuration_shapescript` may be
    imported). python_imports: a module for `shapescript run` or `shapescript.compile`, where a
    plain `import a.b` may be a module the program names with `import python` (never in a folder,
    never with `from` or `as`).
    """
    if not isinstance(source, str):
        raise GeneratedCodeError(f"{what} is not text")
    for c in LINE_TERMINATORS + "\0":
        if c in source:
            raise GeneratedCodeError(f"{what} holds the line terminator {c!r}, which the code generators never write")
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise GeneratedCodeError(f"{what} is not valid Python: {e.msg} (line {e.lineno})") from None
    allowed = FOLDER_IMPORTS if folder else MODULE_IMPORTS

    def refuse(node, why):
        raise GeneratedCodeError(f"{what}, line {getattr(node, 'lineno', '?')}: {why}, which the code generators never write")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                plain = alias.asname is None and python_imports and node.col_offset == 0 and _root(alias.name) not in REFUSED_NAMES
                fixed = alias.name == "torch.nn.functional" and alias.asname == "F"
                if _root(alias.name) not in allowed and not plain or (alias.asname and not fixed):
                    refuse(node, f"`import {alias.name}`")
        elif isinstance(node, ast.ImportFrom):
            relative = folder and node.level == 1 and node.module in FOLDER_RELATIVE
            if not relative and (node.level or _root(node.module) not in allowed):
                refuse(node, f"`from {'.' * node.level}{node.module or ''} import ...`")
            if any(alias.name == "*" for alias in node.names):
                refuse(node, "`import *`")
        elif isinstance(node, ast.Name) and node.id in REFUSED_NAMES:
            refuse(node, f"the name `{node.id}`")
        elif isinstance(node, ast.Attribute) and _dunder(node.attr):
            refuse(node, f"the attribute `{node.attr}`")
        elif isinstance(node, (ast.Name, ast.FunctionDef, ast.ClassDef)) and _dunder(getattr(node, "id", None) or node.name):
            refuse(node, f"the definition `{node.name}`")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            refuse(node, "a `global` or `nonlocal` statement")
        elif isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.Yield, ast.YieldFrom, ast.Try, ast.With, ast.Delete)):
            refuse(node, f"a `{type(node).__name__}`")
    return tree


def check_folder(path):
    """Checks a Hugging Face folder's Python files before transformers imports them."""
    import os

    for name in sorted(os.listdir(path)):
        if name.endswith(".py"):
            with open(os.path.join(path, name), "rb") as f:
                data = f.read()
            try:  # as written: no newline translation, which would hide a \r
                source = data.decode("utf-8")
            except UnicodeDecodeError:
                raise GeneratedCodeError(f"`{name}` is not UTF-8, which the code generators always write") from None
            check(source, f"`{name}`", folder=True)


def source_lines(source, source_name):
    """{generated line: .ss line}, read off the `# NAME.ss:N: ...` comments the generator writes
    above each statement's code (and after each `param`'s): a statement's lines take its comment's
    line; the lines a function runs before its first statement take that statement's."""
    import re

    marker = re.compile(r"#\s" + re.escape(source_name) + r":(\d+):")
    mapped, current, pending = {}, None, []
    for number, line in enumerate(source.split("\n"), start=1):
        text = line.strip()
        if line[:1] not in ("", " ", "#"):  # a top-level statement: a new item
            current, pending = None, []
        found = marker.search(line)
        if found and text.startswith("#"):
            current = int(found.group(1))
            for waiting in pending:
                mapped[waiting] = current
            pending = []
            continue
        if found:  # code with its line at its end
            mapped[number] = int(found.group(1))
        elif text and current is not None:
            mapped[number] = current
        elif text and line[:1] == " ":
            pending.append(number)
    return mapped


def compile_mapped(source, path, source_text=None):
    """The code of generated `source` as a list of code objects, one per top-level statement,
    to run in order: those generated from statements of the .ss file at `path` carry its file
    name and its line numbers (a traceback shows the .ss line that failed), the rest (imports,
    sizes, runtime helpers) a `<generated from NAME>` file name. linecache holds both texts: the
    .ss file's is `source_text` when given (what was compiled, which the file on disk may not
    be). `source` must have passed check()."""
    import linecache
    import os

    if source_text is None:
        try:
            with open(path, encoding="utf-8") as f:
                source_text = f.read()
        except (OSError, UnicodeDecodeError):
            source_text = ""
    ss_lines = source_text.splitlines(keepends=True)
    linecache.cache[os.fspath(path)] = (len(source_text), None, ss_lines, os.fspath(path))
    tree = ast.parse(source)
    mapped = source_lines(source, os.path.basename(path))
    generated_name = f"<generated from {os.path.basename(path)}>"
    linecache.cache[generated_name] = (len(source), None, source.splitlines(keepends=True), generated_name)
    codes = []
    for statement in tree.body:
        nodes = [n for n in ast.walk(statement) if hasattr(n, "lineno")]
        if not any(n.lineno in mapped for n in nodes):
            codes.append(compile(ast.Module(body=[statement], type_ignores=[]), generated_name, "exec"))
            continue
        fallback = next(mapped[n.lineno] for n in nodes if n.lineno in mapped)
        for node in nodes:
            line = mapped.get(node.lineno, fallback)
            # The columns are the generated text's, not the .ss line's: span the whole line.
            width = len(ss_lines[line - 1].rstrip("\n").encode("utf-8")) if line <= len(ss_lines) else 0
            node.lineno, node.end_lineno, node.col_offset, node.end_col_offset = line, line, 0, width
        codes.append(compile(ast.Module(body=[statement], type_ignores=[]), os.fspath(path), "exec"))
    return codes
