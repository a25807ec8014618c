"""Export a ShapeScript-generated PyTorch module with torch.export.

The ShapeScript compiler checks a `.ss` file and hands this runtime an *export
spec* (JSON, see SPEC.md next to this file): the generated Python module as
text, the function to export, its inputs' shapes written in terms of named
dims, and where to write the result.  This module turns the spec into
`torch.export` calls:

    spec = json.load(open("patchify.export.json"))
    ep = export_program(spec)        # torch.export.ExportedProgram
    write_output(ep, spec)           # .pt2 program or AOTInductor package

It is also embedded by the `shapescript` CLI and run from a temporary
directory next to `run_export.py`, so it must not import anything of
ShapeScript's package: only the standard library, torch and weights.py next to
it (einops is imported by the generated module, not here).
"""

from __future__ import annotations

import functools
import keyword
import math
import os
import sys
import tempfile
import types
from dataclasses import dataclass
from typing import Any, Callable

import torch

SPEC_VERSION = 1
EXAMPLE_SEED = 0
_SELF = "_ss_self"  # the name of `self` in the generated forward


class SpecError(ValueError):
    """The export spec is malformed (a bug in whoever wrote it, not in the model)."""


class ExportError(RuntimeError):
    """torch.export could not export the function, or the program could not be written."""


# ---------------------------------------------------------------------------
# the generated module


def _generated_code():
    """generated_code.py beside this file: the check of generated code before it runs."""
    if __package__:
        from . import generated_code
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import generated_code
    return generated_code


def load_module(source_text: str, name: str) -> types.ModuleType:
    """Execute generated Python source into a fresh module object.

    The module is neither put on sys.path nor registered in sys.modules, so it
    cannot shadow or be shadowed by anything installed.  Its code carries the
    .ss file's name and lines (generated_code.compile_mapped), so that tracebacks
    (and torch.export's stack traces) show the .ss line that failed.
    """
    mod_name = "_shapescript_generated_" + "".join(
        c if c.isalnum() or c == "_" else "_" for c in name
    )
    module = types.ModuleType(mod_name)
    module.__file__ = name
    # An export's module imports nothing `import python` names (PythonImports::left_out).
    _generated_code().check(source_text, f"`{name}`'s generated module")
    for code in _generated_code().compile_mapped(source_text, name):
        exec(code, module.__dict__)
    return module


# ---------------------------------------------------------------------------
# reading the spec


@dataclass(frozen=True)
class _Axis:
    kind: str  # "fixed" | "dim" | "product"
    size: int = 0  # fixed
    dim: str = ""  # dim
    scale: int = 1  # dim, product
    offset: int = 0  # dim
    factors: tuple[str, ...] = ()  # product

    def expr(self) -> str:
        """How the size reads in terms of the spec's dims: `b`, `16*gh`, `2*n+1`, `gh*gw`."""
        if self.kind == "fixed":
            return str(self.size)
        if self.kind == "dim":
            s = self.dim if self.scale == 1 else f"{self.scale}*{self.dim}"
            if self.offset > 0:
                s += f"+{self.offset}"
            elif self.offset < 0:
                s += f"-{-self.offset}"
            return s
        s = "*".join(self.factors)
        return s if self.scale == 1 else f"{self.scale}*{s}"


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"{what} must be an integer, not {value!r}")
    return value


def _check_version(spec: dict) -> None:
    if not isinstance(spec, dict):
        raise SpecError("the export spec must be a JSON object")
    version = spec.get("version", SPEC_VERSION)
    if version != SPEC_VERSION:
        raise SpecError(
            f"export spec version {version!r} is not supported by this runtime "
            f"(it reads version {SPEC_VERSION})"
        )


def _dims(spec: dict) -> dict[str, dict]:
    dims = spec.get("dims", {}) or {}
    if not isinstance(dims, dict):
        raise SpecError("`dims` must be an object mapping dim names to {min, max}")
    for name, rng in dims.items():
        if not name.isidentifier() or keyword.iskeyword(name):
            raise SpecError(f"dim name {name!r} is not a Python identifier")
        if not isinstance(rng, dict):
            raise SpecError(f"dims.{name} must be an object like {{\"min\": 2, \"max\": 64}}")
        lo, hi = rng.get("min"), rng.get("max")
        if lo is not None:
            _int(lo, f"dims.{name}.min")
        if hi is not None:
            _int(hi, f"dims.{name}.max")
        if lo is not None and hi is not None and hi <= lo:
            raise SpecError(
                f"dims.{name}: max ({hi}) must be greater than min ({lo}); "
                "torch.export.Dim cannot express a range of one value"
            )
    return dims


def _inputs(spec: dict) -> list[dict]:
    inputs = spec.get("inputs")
    if not isinstance(inputs, list):
        raise SpecError("`inputs` must be a list")
    names = set()
    for i, inp in enumerate(inputs):
        if not isinstance(inp, dict):
            raise SpecError(f"inputs[{i}] must be an object")
        name = inp.get("name")
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise SpecError(f"inputs[{i}].name {name!r} is not a Python identifier")
        if name == _SELF or name in names:
            raise SpecError(f"inputs[{i}].name {name!r} is used twice")
        names.add(name)
        if not isinstance(inp.get("shape"), list):
            raise SpecError(f"inputs[{i}] ({name}) needs a `shape` list")
    return inputs


def _axes(spec: dict) -> list[list[_Axis]]:
    """Parse every input's shape, checking that each dim it names is declared."""
    dims = _dims(spec)
    result = []
    for i, inp in enumerate(_inputs(spec)):
        axes = []
        for a, entry in enumerate(inp["shape"]):
            where = f"inputs[{i}] ({inp['name']}) axis {a}"
            if not isinstance(entry, dict):
                raise SpecError(f"{where}: a shape entry must be an object")
            if "fixed" in entry:
                size = _int(entry["fixed"], f"{where}: fixed")
                if size < 0:
                    raise SpecError(f"{where}: fixed size {size} is negative")
                axes.append(_Axis("fixed", size=size))
            elif "dim" in entry:
                name = entry["dim"]
                if name not in dims:
                    raise SpecError(f"{where}: dim {name!r} is not declared in `dims`")
                scale = _int(entry.get("scale", 1), f"{where}: scale")
                offset = _int(entry.get("offset", 0), f"{where}: offset")
                if scale < 1:
                    raise SpecError(
                        f"{where}: scale {scale} is not positive; torch.export supports "
                        "only increasing linear forms k*d + c"
                    )
                axes.append(_Axis("dim", dim=name, scale=scale, offset=offset))
            elif "product" in entry:
                factors = entry["product"]
                if not isinstance(factors, list) or not factors or not all(
                    isinstance(f, str) for f in factors
                ):
                    raise SpecError(f"{where}: product must be a non-empty list of dim names")
                for f in factors:
                    if f not in dims:
                        raise SpecError(f"{where}: dim {f!r} is not declared in `dims`")
                scale = _int(entry.get("scale", 1), f"{where}: scale")
                if scale < 1:
                    raise SpecError(f"{where}: scale {scale} is not positive")
                axes.append(_Axis("product", scale=scale, factors=tuple(factors)))
            else:
                raise SpecError(f"{where}: expected one of `fixed`, `dim` or `product`, got {entry!r}")
        result.append(axes)
    return result


def _product_dim_names(spec: dict) -> dict[tuple[tuple[str, ...], int], str]:
    """A fresh torch Dim name for each distinct product size (shared where it repeats)."""
    taken = set(_dims(spec))
    names: dict[tuple[tuple[str, ...], int], str] = {}
    for axes in _axes(spec):
        for ax in axes:
            if ax.kind != "product":
                continue
            key = (ax.factors, ax.scale)
            if key in names:
                continue
            base = "_".join(ax.factors) + ("" if ax.scale == 1 else f"_x{ax.scale}")
            base = "prod_" + base
            name, n = base, 1
            while name in taken:
                n += 1
                name = f"{base}_{n}"
            taken.add(name)
            names[key] = name
    return names


# ---------------------------------------------------------------------------
# dynamic shapes


def build_dynamic_shapes(spec: dict) -> dict[str, dict[int, Any]]:
    """`dynamic_shapes` for torch.export.export, keyed by input name.

    One torch.export.Dim per declared dim, shared wherever it appears; `k*d + c`
    becomes a derived Dim (on a phantom root when `d` is no input's axis by
    itself); each distinct `product` size becomes a fresh Dim of its own, whose
    relation to its factors `export_program` asserts inside the program.  Fixed
    axes are left out, which makes them static.
    """
    from torch.export import Dim

    dims = _dims(spec)
    roots = {
        name: Dim(name, min=rng.get("min"), max=rng.get("max")) for name, rng in dims.items()
    }
    products: dict[str, Any] = {}
    for (factors, scale), pname in _product_dim_names(spec).items():
        lo, hi = scale, scale
        for f in factors:
            flo, fhi = dims[f].get("min"), dims[f].get("max")
            lo = lo * (0 if flo is None else flo)
            hi = None if hi is None or fhi is None else hi * fhi
        if hi is not None and hi <= lo:
            hi = lo + 1
        products[pname] = Dim(pname, min=lo, max=hi)
    pnames = _product_dim_names(spec)

    result: dict[str, dict[int, Any]] = {}
    for inp, axes in zip(_inputs(spec), _axes(spec)):
        per_axis: dict[int, Any] = {}
        for a, ax in enumerate(axes):
            if ax.kind == "dim":
                d = roots[ax.dim]
                if ax.scale != 1:
                    d = ax.scale * d
                if ax.offset > 0:
                    d = d + ax.offset
                elif ax.offset < 0:
                    d = d - (-ax.offset)
                per_axis[a] = d
            elif ax.kind == "product":
                per_axis[a] = products[pnames[(ax.factors, ax.scale)]]
        result[inp["name"]] = per_axis
    return result


def dynamic_axes(spec: dict) -> dict[str, dict[str, str]]:
    """Which axes of which inputs are dynamic, and how they read: {"img": {"0": "b", "2": "16*gh"}}."""
    return {
        inp["name"]: {str(a): ax.expr() for a, ax in enumerate(axes) if ax.kind != "fixed"}
        for inp, axes in zip(_inputs(spec), _axes(spec))
    }


# ---------------------------------------------------------------------------
# example inputs


def _primes():
    n = 2
    while True:
        if all(n % p for p in range(2, int(math.isqrt(n)) + 1)):
            yield n
        n += 1


def example_sizes(spec: dict) -> dict[str, int]:
    """A value for every declared dim, for the example inputs.

    Uses `example_sizes` from the spec where given, and otherwise distinct
    primes (2, 3, 5, 7, ...) within each dim's range, chosen so that no two
    dynamic axes get the same size by accident (torch would take them for the
    same size) and that every axis size, derived or product, is at least 2
    (torch specializes sizes 0 and 1).
    """
    dims = _dims(spec)
    given = spec.get("example_sizes") or {}
    if not isinstance(given, dict):
        raise SpecError("`example_sizes` must be an object mapping dim names to sizes")
    for name, v in given.items():
        if name not in dims:
            raise SpecError(f"example_sizes names {name!r}, which is not declared in `dims`")
        _int(v, f"example_sizes.{name}")
    all_axes = [ax for axes in _axes(spec) for ax in axes]
    uses: dict[str, list[_Axis]] = {name: [] for name in dims}
    for ax in all_axes:
        if ax.kind == "dim":
            uses[ax.dim].append(ax)

    def sizes_of(name: str, v: int) -> list[int]:
        """The root's value and each distinct derived size of it."""
        forms = sorted({(ax.scale, ax.offset) for ax in uses[name]} | {(1, 0)})
        return [k * v + c for k, c in forms]

    def fits(sizes: list[int], used: set[int]) -> bool:
        return (
            all(s >= 2 for s in sizes)
            and len(set(sizes)) == len(sizes)
            and not used.intersection(sizes)
        )

    def ok_range(name: str, v: int) -> bool:
        lo, hi = dims[name].get("min"), dims[name].get("max")
        return (lo is None or v >= lo) and (hi is None or v <= hi)

    def product_sizes(values: dict[str, int]) -> list[int]:
        out = []
        for ax in all_axes:
            if ax.kind == "product":
                out.append(ax.scale * math.prod(values[f] for f in ax.factors))
        return out

    last_problem = ""
    for attempt in range(32):
        values: dict[str, int] = {}
        used: set[int] = set()
        for name, v in given.items():
            values[name] = v
            used.update(sizes_of(name, v))
        failed = False
        for name in dims:
            if name in values:
                continue
            lo = dims[name].get("min")
            hi = dims[name].get("max")
            start = max(2, lo if lo is not None else 2)
            chosen = None
            skip = attempt
            for p in _primes():
                if hi is not None and p > hi:
                    break
                if p < start:
                    continue
                if not fits(sizes_of(name, p), used):
                    continue
                if skip:
                    skip -= 1
                    continue
                chosen = p
                break
            if chosen is None:  # no prime fits: any integer in range that fits
                top = hi if hi is not None else start + 10_000
                for v in range(start, top + 1):
                    if fits(sizes_of(name, v), used):
                        chosen = v
                        break
            if chosen is None:
                last_problem = f"no example size for dim {name!r} in its range fits"
                failed = True
                break
            values[name] = chosen
            used.update(sizes_of(name, chosen))
        if failed:
            continue
        prods = product_sizes(values)
        distinct_prods = set(prods)
        if any(p < 2 for p in prods) or used.intersection(distinct_prods):
            last_problem = "a product size collides with another example size"
            if given and set(given) >= set(dims):
                break  # nothing of ours to change
            continue
        for name, v in values.items():
            if not ok_range(name, v):
                raise SpecError(
                    f"example size {name}={v} is outside its range "
                    f"[{dims[name].get('min')}, {dims[name].get('max')}]"
                )
        return values
    if given and set(given) >= set(dims):
        # the spec chose every size itself; trust it, torch will complain if it must
        return dict(given)
    raise SpecError(f"could not choose example sizes: {last_problem}")


_DTYPES = {
    "float32": torch.float32,
    "float": torch.float32,
    "float64": torch.float64,
    "double": torch.float64,
    "float16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "long": torch.int64,
    "int32": torch.int32,
    "int": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}


def _dtype(name: Any, where: str) -> torch.dtype:
    if name not in _DTYPES:
        raise SpecError(f"{where}: unknown dtype {name!r} (known: {', '.join(sorted(_DTYPES))})")
    return _DTYPES[name]


def example_inputs(spec: dict) -> tuple[torch.Tensor, ...]:
    """Example tensors, one per input in order, deterministic (seeded).

    Floating inputs are standard normal, bool inputs fair coins, and index
    inputs (`index_bound` n) uniform in [0, n); other integer inputs are
    uniform in [0, 16).
    """
    values = example_sizes(spec)
    gen = torch.Generator().manual_seed(EXAMPLE_SEED)
    out = []
    for i, (inp, axes) in enumerate(zip(_inputs(spec), _axes(spec))):
        where = f"inputs[{i}] ({inp['name']})"
        shape = []
        for ax in axes:
            if ax.kind == "fixed":
                shape.append(ax.size)
            elif ax.kind == "dim":
                shape.append(ax.scale * values[ax.dim] + ax.offset)
            else:
                shape.append(ax.scale * math.prod(values[f] for f in ax.factors))
        dtype = _dtype(inp.get("dtype", "float32"), where)
        bound = inp.get("index_bound")
        if bound is not None:
            bound = _int(bound, f"{where}: index_bound")
            if bound < 1:
                raise SpecError(f"{where}: index_bound {bound} must be at least 1")
            if dtype.is_floating_point or dtype == torch.bool:
                raise SpecError(f"{where}: an index input must have an integer dtype, not {inp.get('dtype')}")
            t = torch.randint(0, bound, shape, generator=gen, dtype=dtype)
        elif dtype == torch.bool:
            t = torch.rand(shape, generator=gen) < 0.5
        elif dtype.is_floating_point:
            t = torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)
        else:
            t = torch.randint(0, 16, shape, generator=gen, dtype=dtype)
        out.append(t)
    return tuple(out)


# ---------------------------------------------------------------------------
# checks torch.export can't express as dims


@dataclass(frozen=True)
class _Check:
    input: int
    axis: int
    factors: tuple[str, ...]
    scale: int
    message: str


def _checks(spec: dict) -> list[_Check]:
    """The spec's `checks`, plus one for every `product` axis it left out."""
    inputs, all_axes = _inputs(spec), _axes(spec)
    dims = _dims(spec)
    checks: list[_Check] = []
    raw = spec.get("checks") or []
    if not isinstance(raw, list):
        raise SpecError("`checks` must be a list")
    for j, c in enumerate(raw):
        if not isinstance(c, dict):
            raise SpecError(f"checks[{j}] must be an object")
        i = _int(c.get("input"), f"checks[{j}].input")
        a = _int(c.get("axis"), f"checks[{j}].axis")
        if not 0 <= i < len(inputs) or not 0 <= a < len(all_axes[i]):
            raise SpecError(f"checks[{j}]: input {i} axis {a} does not exist")
        factors = c.get("product")
        if not isinstance(factors, list) or not factors:
            raise SpecError(f"checks[{j}].product must be a non-empty list of dim names")
        for f in factors:
            if f not in dims:
                raise SpecError(f"checks[{j}]: dim {f!r} is not declared in `dims`")
        scale = _int(c.get("scale", 1), f"checks[{j}].scale")
        msg = c.get("message") or _default_message(inputs[i]["name"], a, tuple(factors), scale)
        checks.append(_Check(i, a, tuple(factors), scale, str(msg)))
    covered = {(c.input, c.axis) for c in checks}
    for i, axes in enumerate(all_axes):
        for a, ax in enumerate(axes):
            if ax.kind == "product" and (i, a) not in covered:
                checks.append(
                    _Check(i, a, ax.factors, ax.scale,
                           _default_message(inputs[i]["name"], a, ax.factors, ax.scale))
                )
    return checks


def _default_message(name: str, axis: int, factors: tuple[str, ...], scale: int) -> str:
    expr = _Axis("product", scale=scale, factors=factors).expr()
    return f"Expected input {name}.shape[{axis}] to be {expr}"


def _dim_sources(spec: dict) -> dict[str, tuple[int, int, int, int]]:
    """For each dim, an input axis it can be read from: (input, axis, scale, offset).

    A plain occurrence (scale 1, offset 0) is preferred to a derived one.
    """
    sources: dict[str, tuple[int, int, int, int]] = {}
    for i, axes in enumerate(_axes(spec)):
        for a, ax in enumerate(axes):
            if ax.kind != "dim":
                continue
            plain = ax.scale == 1 and ax.offset == 0
            old = sources.get(ax.dim)
            if old is None or (plain and (old[2], old[3]) != (1, 0)):
                sources[ax.dim] = (i, a, ax.scale, ax.offset)
    return sources


def _make_assert(checks: list[_Check], sources: dict) -> Callable[[tuple], None]:
    def assert_checks(args: tuple) -> None:
        for c in checks:
            size = args[c.input].shape[c.axis]
            known = c.scale
            unknown = []
            for f in c.factors:
                if f in sources:
                    i, a, k, off = sources[f]
                    known = known * ((args[i].shape[a] - off) // k)
                else:
                    unknown.append(f)
            cond = size == known if not unknown else size % known == 0
            if unknown and isinstance(known, int) and known == 1:
                continue  # nothing to check: the factors can be anything
            if isinstance(cond, bool):
                if not cond:
                    raise ExportError(f"{c.message} (false for the example inputs)")
                continue  # torch already knows it; nothing to record
            # torch._assert_scalar is recorded as a node of the graph, message
            # included, so every loader of the program (module() with or
            # without guards, AOTInductor) checks it.  torch._check would only
            # become a guard here, which module() checks only in some modes.
            torch._assert_scalar(cond, c.message)

    return assert_checks


# ---------------------------------------------------------------------------
# export


def _wrapper(fn: Callable, names: list[str], assert_checks: Callable[[tuple], None], model: torch.nn.Module | None = None) -> torch.nn.Module:
    """An nn.Module whose forward takes the inputs by their names. A model forward's model is a
    submodule, so its parameters become the program's."""
    params = ", ".join([_SELF] + names)
    call = ", ".join(names)
    src = (
        f"def forward({params}):\n"
        f"    {_SELF}._ss_assert(({call}{',' if len(names) == 1 else ''}))\n"
        f"    return {_SELF}._ss_fn({call})\n"
    )
    ns: dict[str, Any] = {}
    exec(compile(src, "<shapescript export wrapper>", "exec"), ns)

    class ShapeScriptExport(torch.nn.Module):
        forward = ns["forward"]

    m = ShapeScriptExport()
    if model is not None:
        m.model = model
        fn = functools.partial(fn, model)
    # plain attributes, not submodules or parameters
    object.__setattr__(m, "_ss_fn", fn)
    object.__setattr__(m, "_ss_assert", assert_checks)
    return m


def _model(spec: dict, module: types.ModuleType) -> torch.nn.Module | None:
    """A model forward's model, with the checkpoint's parameters or its initializers'."""
    model_spec = spec.get("model")
    if not model_spec:
        return None
    cls = getattr(module, model_spec["class"], None)
    if cls is None:
        raise SpecError(f"the generated module has no model `{model_spec['class']}`")
    if not model_spec.get("weights"):
        torch.manual_seed(0)  # the initializers, as every export without --weights makes them
        return cls().eval()
    if __package__:  # shapescript.runtime, in a user's process: sys.path untouched
        from . import weights
    else:  # loaded by run_export.py under the CLI's `python -I`
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import weights
    model = cls()
    expected = [{"name": name, "shape": list(value.shape)} for name, value in model.state_dict().items()]
    try:
        state = weights.load_weights({"parameters": expected, "weights": model_spec["weights"],
                                      "weights_name": model_spec.get("weights_name"), "model": model_spec["class"],
                                      "function": spec["function"], "takes_positions": len(spec["inputs"]) > 1}, module)
    except weights.WeightsError as e:
        raise ExportError(str(e)) from None
    model.load_state_dict(state)
    return model.eval()


def export_program(spec: dict) -> "torch.export.ExportedProgram":
    """Load the spec's module and export its function with dynamic shapes.

    The program's `example_inputs` are cleared (they stay available through
    `example_inputs(spec)`): with them, `ep.module()` checks inputs with a
    generated `_guards_fn` that does not check derived dims on a phantom root
    (it accepts a height of 30 for `16*gh`); without them it checks inputs
    with torch's pre-hook, which does, and words the refusal as
    `Expected input *args[0].shape[2] = 30 to be of the form 16*s68, ...`.
    """
    _check_version(spec)
    fname = spec.get("function")
    if not isinstance(fname, str) or not fname.isidentifier():
        raise SpecError(f"`function` must name a function, not {fname!r}")
    source = spec.get("module")
    if not isinstance(source, str):
        raise SpecError("`module` must be the generated Python source text")
    inputs = _inputs(spec)
    names = [inp["name"] for inp in inputs]

    dynamic_shapes = build_dynamic_shapes(spec)
    args = example_inputs(spec)
    checks = _checks(spec)
    sources = _dim_sources(spec)

    module = load_module(source, spec.get("source") or fname)
    fn = getattr(module, fname, None)
    if fn is None or not callable(fn):
        raise SpecError(f"the generated module has no function `{fname}`")

    wrapper = _wrapper(fn, names, _make_assert(checks, sources), _model(spec, module))
    ep = torch.export.export(
        wrapper,
        args,
        dynamic_shapes=dynamic_shapes,
        strict=False,
    )
    _verify_dynamic(ep, spec)
    ep.example_inputs = None
    return ep


def _verify_dynamic(ep, spec: dict) -> None:
    """Every axis the spec calls dynamic must be symbolic in the program."""
    placeholders = [
        n for n in ep.graph.nodes if n.op == "placeholder"
    ]
    user = [
        s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"
    ]
    by_name = {n.name: n for n in placeholders}
    for inp, axes, pname in zip(_inputs(spec), _axes(spec), user):
        val = by_name[pname].meta.get("val")
        if val is None:
            continue
        for a, ax in enumerate(axes):
            if ax.kind == "fixed":
                continue
            if isinstance(val.shape[a], int):
                raise ExportError(
                    f"torch.export made {inp['name']}.shape[{a}] ({ax.expr()}) "
                    f"the constant {val.shape[a]}"
                )


# ---------------------------------------------------------------------------
# writing


def _output_path(spec: dict) -> str:
    out = spec.get("output")
    if not isinstance(out, str) or not out:
        raise SpecError("`output` must be a file path")
    return os.path.abspath(out)


def write_output(ep, spec: dict) -> str:
    """Write the program where the spec says, atomically.

    `pt2` saves with torch.export.save; `aoti` compiles an AOTInductor package
    with torch._inductor.aoti_compile_and_package.  Either way the file is
    written to a temporary file in the output's directory and moved into place
    with os.replace, so a failure leaves no partial file and an existing output
    untouched.  Returns the absolute path written.
    """
    fmt = spec.get("format", "pt2")
    if fmt not in ("pt2", "aoti"):
        raise SpecError(f"`format` must be \"pt2\" or \"aoti\", not {fmt!r}")
    path = _output_path(spec)
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise ExportError(f"cannot write {spec['output']}: directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp.pt2", dir=directory
    )
    os.close(fd)
    try:
        if fmt == "pt2":
            torch.export.save(ep, tmp)
        else:
            restore = ep.example_inputs
            if restore is None:
                # AOTInductor wants them; they are deterministic
                ep.example_inputs = (example_inputs(spec), {})
            try:
                torch._inductor.aoti_compile_and_package(ep, package_path=tmp)
            finally:
                ep.example_inputs = restore
        # mkstemp makes the file 0600; give it the permissions a new file gets
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def run(spec: dict):
    """Export and write; returns (ExportedProgram, path written)."""
    ep = export_program(spec)
    return ep, write_output(ep, spec)


# The export targets `pt2` and `aoti` (targets.py): their interface. Their errors are all said by
# summarize_exception (an ExportError's lines joined, without its type).
EXPECTED = ()


def write(spec: dict, verbose: bool = False) -> dict:
    """Exports and writes the program; returns the answer (SPEC.md, "Command line")."""
    run(spec)
    return {"ok": True, "output": spec["output"], "format": spec.get("format", "pt2"), "torch": str(torch.__version__),
            "dynamic": dynamic_axes(spec)}


# ---------------------------------------------------------------------------
# error messages


_BOILERPLATE = (
    "The error above occurred when calling torch.export",
    "For more information, run with TORCH_LOGS",
    "Set TORCH_LOGS=",
    "For more information about this error, see",
    "You can suppress this exception",
    "To execute this test, run",
    "While executing",
    "Original traceback",
    "Use tlparse",
    "from user code",
    "Explanation:",
    "Hint:",
    "Developer debug context",
    "For more details about this graph break",
)


def summarize_exception(exc: BaseException) -> str:
    """One line saying why an export failed: the meaningful part of torch's message."""
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not any(ln.startswith(b) for b in _BOILERPLATE)]
    tname = type(exc).__name__
    if text.startswith("Constraints violated"):
        # "Constraints violated (b)! ...\n  - <problem>\n...\nSuggested fixes:\n  b = ..."
        problems = [ln[2:] for ln in lines if ln.startswith("- ")]
        fixes = []
        if "Suggested fixes:" in lines:
            fixes = lines[lines.index("Suggested fixes:") + 1:]
        head = lines[0].split("!")[0] if lines else "Constraints violated"
        msg = f"{head}: " + "; ".join(problems or lines[1:2])
        if fixes:
            msg += f" (torch suggests: {'; '.join(fixes)})"
        return msg
    if isinstance(exc, (SpecError, ExportError)):
        return " ".join(lines)
    if not lines:
        return tname
    return f"{tname}: {lines[-1] if len(lines) > 1 and _is_meaningful(lines[-1]) else lines[0]}"


def _is_meaningful(line: str) -> bool:
    return len(line) > 3 and not set(line) <= set("-=~^ ")
