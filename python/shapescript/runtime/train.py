"""Runs a ShapeScript program for `shapescript run FILE`: its training built-ins, the progress line,
Ctrl-C and resuming.

The CLI compiles the file (core/emit/codegen.cpp) and runs this script with a spec (JSON):
  module       the generated Python module's text; its training built-ins call `_ss_train.NAME(...)`
  function     the function to run (`main`), which takes no arguments
  source       the .ss file, as the user wrote it; paths in the program are relative to its folder
  source_dir   that folder, absolute
  checkpoint   where Ctrl-C saves the run (absolute); checkpoint_name, as the user wrote it
  resume       a checkpoint to continue from, or null; resume_name, as the user wrote it
  log          the JSON-lines file log_scalar appends to (absolute)

A checkpoint is a dict `{"state_dict": {...}, "shapescript_run": {...}}`: `--weights` reads its
`state_dict` (the first model's parameters by name); `shapescript_run` holds what resuming needs
(the step, every model, optimizer and dataset, the random state).

A training loop is a `for` whose body calls `update`: the code generator writes it as
`for step in _ss_train.steps(a, b):`, which starts where a resumed run stopped, shows progress, and
stops cleanly at the end of a step on Ctrl-C. Ctrl-C before the program starts (importing torch
takes seconds) stops at once: Python's own KeyboardInterrupt, nothing written. Errors are
`error: ...` lines; the exit status is 1, and 130 after Ctrl-C.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import sys
import time
import types

if __package__:  # shapescript.runtime, imported in a Python process
    from . import distributed, hf_tokenizer
else:  # a file the CLI runs with `python -I`, whose folder holds the runtime's modules
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import distributed  # noqa: E402
    import hf_tokenizer  # noqa: E402


class RunError(Exception):
    pass


class Interrupted(Exception):
    pass


class Run:
    """What one `shapescript run` has made, in order, so that a checkpoint can hold all of it."""

    def __init__(self, spec, module):
        self.spec = spec
        self.module = module
        self.models, self.optimizers, self.datasets = [], [], []
        self.tokenizer = None  # the first dataset's, saved beside each checkpoint
        self.step = 0
        self.start_step = 0
        self.tokens = 0
        self.scalars = {}
        self.first_loss = None
        self.interrupt_requested = False
        self.resume = None
        if spec.get("resume"):
            self.resume = _read_checkpoint(spec["resume"], spec.get("resume_name") or spec["resume"], sharded=WORLD is not None)
            self.start_step = self.resume["step"]
        # One log, one progress line and one copy of the program's prints: rank 0's.
        self.log = open(spec["log"] if leader() else os.devnull, "a")

    def path(self, relative):
        return relative if os.path.isabs(relative) else os.path.join(self.spec["source_dir"], relative)

    def restore(self, kind, index):
        if self.resume is None:
            return None
        saved = self.resume[kind]
        if index >= len(saved):
            raise RunError(f"the checkpoint holds {len(saved)} {kind}, but the program makes more; resume with the program that saved it")
        return saved[index]

    def state(self, whole=True):
        """What resuming needs; with `whole=False`, without the models and optimizers (saved in shards)."""
        import torch

        return {
            "step": self.step,
            **({"models": [m.state_dict() for m in self.models],
                "optimizers": [o.state_dict() for o in self.optimizers]} if whole else {}),
            "datasets": [d.generator.get_state() for d in self.datasets],
            "rng": torch.get_rng_state(),
            "tokens": self.tokens,
        }


RUN: Run | None = None
WORLD: distributed.World | None = None  # under torchrun (`--nproc-per-node`): this rank and the others


def leader():
    return WORLD is None or WORLD.rank == 0


def _generated_code():
    """generated_code.py beside this file: the check of generated code before it runs."""
    if __package__:
        from . import generated_code
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import generated_code
    return generated_code


def _read_checkpoint(path, name, sharded=False):
    """The run a checkpoint holds (its `shapescript_run`). A folder of shards is read whole in one
    process; under torchrun (`sharded`), each rank reads its models' and optimizers' shards later."""
    import torch

    if distributed.is_checkpoint_folder(path):  # a sharded one, written by several processes
        try:
            saved = {"shapescript_run": distributed.read_run(path)} if sharded else distributed.read_folder(path)
        except Exception as e:  # noqa: BLE001 - torch's own reason
            raise RunError(f"can't read the checkpoint `{name}`: {e}")
        if saved.get("shapescript_run") is None:
            raise RunError(f"`{name}` holds weights but not a run to resume (it wasn't saved by `shapescript run`)")
        return saved["shapescript_run"]
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise RunError(f"can't read the checkpoint `{name}`: no such file")
    except Exception as e:  # noqa: BLE001 - torch's own reason
        raise RunError(f"can't read the checkpoint `{name}`: {e}")
    if not isinstance(saved, dict) or "shapescript_run" not in saved:
        raise RunError(f"`{name}` holds weights but not a run to resume (it wasn't saved by `shapescript run`)")
    return saved["shapescript_run"]


def _write_checkpoint(path, model):
    """Atomically: the file is the old one or the new one, never half of one."""
    import torch

    if WORLD is not None:  # a folder of shards, each rank writing its own
        state = RUN.state(whole=False)
        WORLD.save(path, RUN.models, RUN.optimizers, state)
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RunError(f"can't save the checkpoint `{path}`: the folder `{folder}` does not exist")
    # A name of its own beside the target (two runs saving to one place never share a partial file).
    fd, partial = tempfile.mkstemp(prefix="." + os.path.basename(path)[:64] + ".", suffix=".partial", dir=folder)
    os.close(fd)
    try:
        torch.save({"state_dict": model.state_dict(), "shapescript_run": RUN.state()}, partial)
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.remove(partial)
        raise


# ---------------------------------------------------------------------------------------------
# The training built-ins (core/check/builtins.cpp declares them; lowering writes `_ss_train.NAME(...)`).


def init(model_class, seed=0):
    import torch

    saved = RUN.restore("models", len(RUN.models))
    if WORLD is not None:
        model = WORLD.make_model(model_class, seed)
        if saved is not None:
            WORLD.load_model(model, saved)
        RUN.models.append(model)
        return model
    torch.manual_seed(int(seed))
    model = model_class()
    if saved is not None:
        model.load_state_dict(saved)
    RUN.models.append(model)
    return model


def train_mode(model):
    if hasattr(RUN.module, "_ss_mode"):  # defined when the program uses dropout
        RUN.module._ss_mode["training"] = True
    model.train()


def eval_mode(model):
    if hasattr(RUN.module, "_ss_mode"):
        RUN.module._ss_mode["training"] = False
    model.eval()


class Dataset:
    """Batches of `batch` windows of `length` bytes of a file, at random offsets; the targets are
    the same windows one byte later."""

    def __init__(self, path, name, batch, length, seed, tokenizer=None):
        import torch

        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise RunError(f"can't read the dataset `{name}`: {e.strerror.lower() if e.strerror else e}")
        if tokenizer is None:
            self.tokens = torch.frombuffer(bytearray(data), dtype=torch.uint8).to(torch.long)
            unit = "bytes"
        else:  # the text's token ids under the tokenizer (checked against the vocabulary when read)
            import tokenizers

            text = data.decode("utf-8", errors="replace")
            encoded = tokenizers.Tokenizer.from_str(json.dumps(tokenizer.data)).encode(text, add_special_tokens=False)
            self.tokens = torch.tensor(encoded.ids, dtype=torch.long)
            unit = "tokens"
        if len(self.tokens) < length + 1:
            raise RunError(f"the dataset `{name}` has {len(self.tokens)} {unit}, too few for windows of {length} tokens")
        self.name, self.batch, self.length = name, batch, length
        self.generator = torch.Generator().manual_seed(int(seed))

    def next(self):
        import torch

        starts = torch.randint(0, len(self.tokens) - self.length, (self.batch,), generator=self.generator)  # windows of length + 1
        window = starts[:, None] + torch.arange(self.length + 1)
        chunk = self.tokens[window]
        return chunk[:, :-1], chunk[:, 1:]


def dataset(path, batch, length, vocab, seed=0, tokenizer=None):
    read = None
    if tokenizer is not None:  # the checker's E0804 saw its size; read here as the untrusted file it is
        try:
            read = hf_tokenizer.read(RUN.path(tokenizer), tokenizer, vocab=int(vocab))
        except hf_tokenizer.TokenizerError as e:
            raise RunError(str(e))
        if RUN.tokenizer is None:
            RUN.tokenizer = read
    data = Dataset(RUN.path(path), path, int(batch), int(length), seed, read)  # bytes: vocab >= 256, the checker's E0804
    saved = RUN.restore("datasets", len(RUN.datasets))
    if saved is not None:
        data.generator.set_state(saved)
    RUN.datasets.append(data)
    return data


def next_batch(data):
    RUN.tokens += data.batch * data.length
    ids, targets = data.next()
    if WORLD is not None:  # the global batch, drawn as one process draws it; this rank's windows of it
        return WORLD.slice_batch(ids, data.name), WORLD.slice_batch(targets, data.name)
    return ids, targets


class Gradient:
    """A gradient, as the checker types it: a value of the model's type, one tensor per parameter."""

    def __init__(self, tensors):
        self.tensors = tensors

    def __getattr__(self, name):
        try:
            return self.__dict__["tensors"][name]
        except KeyError:
            raise AttributeError(name) from None


def grad(loss, model):
    import torch

    names, params = zip(*[(n, p) for n, p in model.named_parameters() if p.requires_grad])
    gradients = torch.autograd.grad(loss, params, allow_unused=True)
    gradients = [g if g is not None else torch.zeros_like(p) for p, g in zip(params, gradients)]
    value = loss.detach()
    if WORLD is not None:  # the global batch's: every rank's mean over an equal share of it, averaged
        *gradients, value = WORLD.average([*gradients, value])
    tensors = dict(zip(names, gradients))
    RUN.scalars.setdefault("loss", float(value))
    if RUN.first_loss is None:
        RUN.first_loss = float(value)
    RUN.last_loss = float(value)
    return value, Gradient(tensors)


def _parameters(model):
    """What an optimizer steps: the model's parameters, or a sharded model's shards."""
    if WORLD is not None and model in WORLD.sharded:
        return WORLD.shards(model)
    return list(model.parameters())


def _optimizer(optimizer, model):
    optimizer.shapescript_model = model
    saved = RUN.restore("optimizers", len(RUN.optimizers))
    if saved is not None and WORLD is not None:
        WORLD.load_optimizer(model, optimizer, saved)
    elif saved is not None:
        optimizer.load_state_dict(distributed.by_index(saved))  # a sharded checkpoint's is keyed by name
    RUN.optimizers.append(optimizer)
    return optimizer


def adamw(model, lr=1e-3, weight_decay=0.01, beta1=0.9, beta2=0.999):
    import torch

    return _optimizer(torch.optim.AdamW(_parameters(model), lr=lr, weight_decay=weight_decay, betas=(beta1, beta2)), model)


def sgd(model, lr=0.01, momentum=0):
    import torch

    return _optimizer(torch.optim.SGD(_parameters(model), lr=lr, momentum=momentum), model)


def update(optimizer, gradient):
    if WORLD is not None and optimizer.shapescript_model in WORLD.sharded:
        WORLD.step(optimizer, optimizer.shapescript_model, gradient.tensors)
        return
    for name, p in optimizer.shapescript_model.named_parameters():
        if name in gradient.tensors:
            p.grad = gradient.tensors[name]
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def log_scalar(name, value):
    value = float(value)
    RUN.scalars[name] = value
    RUN.log.write(json.dumps({"step": RUN.step, name: value}) + "\n")


def save_checkpoint(model, path):
    _write_checkpoint(RUN.path(path), model)
    if RUN.tokenizer is not None and leader():  # beside it, so that `export --weights` of it carries the tokenizer
        beside = hf_tokenizer.beside_checkpoint(RUN.path(path))
        fd, partial = tempfile.mkstemp(prefix="." + os.path.basename(beside)[:64] + ".", suffix=".partial", dir=os.path.dirname(os.path.abspath(beside)))
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(RUN.tokenizer.data, f, ensure_ascii=False)
        os.replace(partial, beside)


# ---------------------------------------------------------------------------------------------
# The training loop: progress, Ctrl-C, resuming.


def _duration(seconds):
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    def __init__(self, start, end):
        self.start, self.end = start, end
        self.began = time.perf_counter()
        self.tokens_at_start = RUN.tokens
        self.tty = sys.stderr.isatty()
        self.every = max(1, (end - start) // 20)

    def measure(self):
        """Seconds since the loop started, and tokens per second."""
        elapsed = time.perf_counter() - self.began
        return elapsed, (RUN.tokens - self.tokens_at_start) / elapsed if elapsed > 0 else 0.0

    def line(self, done):
        elapsed, rate = self.measure()
        steps_done = done - self.start
        left = elapsed / steps_done * (self.end - done) if steps_done else 0.0
        scalars = "  ".join(f"{k} {v:.4g}" for k, v in RUN.scalars.items())
        filled = round(20 * done / self.end) if self.end else 20
        bar = "[" + "#" * filled + "." * (20 - filled) + "]"
        return f"step {done}/{self.end} {bar}  {scalars}  {rate:,.0f} tok/s  {_duration(left)} left"

    def show(self, done, final=False):
        text = self.line(done)
        if self.tty:
            sys.stderr.write("\r\033[K" + text + ("\n" if final else ""))
        elif final or (done - self.start) % self.every == 0:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()


def steps(first, end):
    """The steps of a training loop, from where a resumed run stopped."""
    first, end = int(first), int(end)
    start = max(first, RUN.start_step)
    if RUN.start_step > first:
        if leader():
            print(f"resuming at step {start} of {end}", file=sys.stderr)
        # Here, not at start-up: init() seeds the generator again when it makes the models.
        import torch

        torch.set_rng_state(RUN.resume["rng"])
    progress = Progress(start, end)
    for step in range(start, end):
        RUN.step = step
        RUN.scalars = {}
        yield step
        RUN.log.flush()
        RUN.step = step + 1
        # Under torchrun Ctrl-C reaches the ranks at different moments: they stop at the step any saw it.
        if RUN.interrupt_requested if WORLD is None else WORLD.anyone(RUN.interrupt_requested):
            RUN.interrupt_requested = True
            if leader():
                progress.show(step + 1, final=True)
            raise Interrupted()
        if leader():
            progress.show(step + 1, final=step + 1 == end)
    elapsed, rate = progress.measure()
    if RUN.first_loss is not None and end > start and leader():
        print(f"trained steps {start} to {end} in {_duration(elapsed)}, {rate:,.0f} tokens/s; loss {RUN.first_loss:.4g} -> {RUN.last_loss:.4g}",
              file=sys.stderr)


def _on_interrupt(signum, frame):
    if RUN.interrupt_requested:  # a second Ctrl-C: stop now
        raise KeyboardInterrupt
    RUN.interrupt_requested = True
    if leader():
        print("\ninterrupted: finishing this step, then saving (Ctrl-C again to stop at once)", file=sys.stderr)


def _start_world():
    """Under torchrun: join the others; this rank dies with torchrun, and only rank 0 prints."""
    global WORLD
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: torchrun killed, the ranks go too
    WORLD = distributed.World(RunError)
    if WORLD.rank != 0:
        sys.stdout = open(os.devnull, "w")


def _rank():
    return f"rank {WORLD.rank}: " if WORLD is not None else ""


def main(argv):
    global RUN
    verbose = "--verbose" in argv
    args = [a for a in argv if a != "--verbose"]
    spec, started = {}, False  # before the program runs, Ctrl-C (Python's KeyboardInterrupt) just stops it
    try:
        # The CLI starts Python with SIGINT blocked, so that a Ctrl-C during its start-up waits for here.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        with open(args[0]) as f:
            spec = json.load(f)
        try:
            import torch
        except ImportError as e:
            raise RunError(f"`shapescript run` needs torch in this Python ({sys.executable}): {e}")
        module = types.ModuleType(os.path.splitext(os.path.basename(spec["source"]))[0])
        module.__dict__["_ss_train"] = sys.modules[__name__]
        _generated_code().check(spec["module"], f"`{spec['source']}`'s generated module", python_imports=True)
        for code in _generated_code().compile_mapped(spec["module"], spec["source"]):
            exec(code, module.__dict__)
        function = getattr(module, spec["function"], None)
        if function is None:
            raise RunError(f"`{spec['source']}` has no function `{spec['function']}`")
        if distributed.launched():
            _start_world()
        RUN = Run(spec, module)
        if RUN.resume is not None:
            RUN.tokens = RUN.resume.get("tokens", 0)
        signal.signal(signal.SIGINT, _on_interrupt)
        started = True
        try:
            function()
        except Interrupted:
            if not RUN.models:
                raise RunError("interrupted before any model was made; nothing to save")
            _write_checkpoint(spec["checkpoint"], RUN.models[0])
            name = spec.get("checkpoint_name") or spec["checkpoint"]
            if leader():
                again = spec.get("relaunch") or f"shapescript run {spec['source']}"
                print(f"saved step {RUN.step} to {name}; continue with `{again} --resume {name}`", file=sys.stderr)
            return 130
        finally:
            RUN.log.close()
    except RunError as e:
        print(f"error: {_rank()}{e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if not leader():
            pass
        elif started:
            print("stopped without saving", file=sys.stderr)
        else:
            print(f"interrupted before `{spec.get('function', 'main')}` started: nothing was saved", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001
        if verbose:
            raise
        import traceback

        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == spec.get("source")]
        where = f" (at {spec['source']}:{frames[-1].lineno})" if frames else ""  # the code carries .ss lines
        print(f"error: {_rank()}{type(e).__name__}: {e}{where}", file=sys.stderr)
        return 1
    finally:
        if WORLD is not None:
            WORLD.close()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    if WORLD is not None:
        # Under torchrun, torch's own teardown at exit sometimes aborts rank 0 ("terminate called
        # without an active exception", past the last Python frame; about one run in five here).
        # Everything is written, closed and the process group destroyed by now: leave without it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
