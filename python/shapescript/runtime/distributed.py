"""Training on several processes: `shapescript run FILE --nproc-per-node N` starts train.py once
per rank under torchrun (launch.py), which sets RANK, WORLD_SIZE, LOCAL_RANK and the rendezvous.
This module is what the training built-ins do differently there; one process never imports torch's
distributed packages.

- The model is made on the `meta` device, sharded with FSDP2's `fully_shard` (each block of a
  `ModuleList` its own group, then the root, a parameter two blocks share kept in the root's), given
  storage, and only then given values: the ones one process makes from the same seed, each rank
  keeping its shard, so that N processes train what one process trains.
- The optimizer is made after sharding, on the shards: its state is sharded too.
- A ShapeScript training model is one module of parameters (a stack of layers is one [L ...]
  parameter) used by free functions, not a module's forward, so FSDP's forward hooks never run:
  the parameters are gathered whole (`unshard`) for the program's steps and sharded again
  (`reshard`) around each optimizer step and checkpoint. The gradients are averaged over the ranks
  (one all-reduce a step), and each rank steps its shard.
- The data: every rank draws the global batch from the same generator, in the same order as one
  process, and keeps its slice of the windows; the generator's state is the same everywhere, so a
  run resumes at any number of processes.
- A checkpoint is a torch.distributed.checkpoint (DCP) folder, written in shards by every rank into
  a folder beside its place and swapped into it whole (complete or absent). Resumed here, each rank
  reads its shards of it (DCP reshards, whatever world size wrote it); one process reads it whole.
"""

from __future__ import annotations

import ctypes
import os
import shutil


def launched():
    """Whether torchrun started this process (it sets these for every worker)."""
    return "TORCHELASTIC_RUN_ID" in os.environ and "WORLD_SIZE" in os.environ


class World:
    def __init__(self, error):
        import torch
        import torch.distributed as dist

        self.rank = int(os.environ["RANK"])
        self.size = int(os.environ["WORLD_SIZE"])
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        if torch.cuda.is_available():
            self.device = torch.device("cuda", self.local_rank)
            torch.cuda.set_device(self.device)
            dist.init_process_group("nccl", device_id=self.device)
        else:
            self.device = torch.device("cpu")
            dist.init_process_group("gloo")
        self.error = error  # train.py's RunError: said as `error: ...`
        self.sharded = []  # the models made here, sharded

    def close(self):
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()

    # -- models --------------------------------------------------------------------------------

    def make_model(self, model_class, seed):
        import torch
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

        with torch.device("meta"):
            model = model_class()
        shard(model)
        model.to_empty(device=self.device)
        # The values one process makes with this seed (and the global random state it leaves),
        # made on the CPU one parameter set at a time and each rank keeping its own shard.
        torch.manual_seed(int(seed))
        whole = model_class()
        set_model_state_dict(model, whole.state_dict(), options=StateDictOptions(full_state_dict=True))
        del whole
        self.sharded.append(model)
        model.unshard()
        return model

    def shards(self, model):
        """The sharded parameters (DTensors), which an optimizer made on them steps."""
        model.reshard()
        shards = list(model.parameters())
        model.unshard()
        return shards

    def load_model(self, model, state):
        """Into the shards: a whole state dict (a one-process checkpoint's), or a sharded checkpoint's
        part, each rank reading only what its shards hold, whatever world size wrote it."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, set_model_state_dict

        model.reshard()
        if isinstance(state, Sharded):
            loaded = state.load_into(get_model_state_dict(model))
            set_model_state_dict(model, loaded)
        else:
            set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=True))
        model.unshard()

    def load_optimizer(self, model, optimizer, state):
        from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_optimizer_state_dict,
                                                             set_optimizer_state_dict)

        model.reshard()
        if isinstance(state, Sharded):  # its template: the optimizer's state, made (a step of lr 0) to be read into
            loaded = state.load_into(get_optimizer_state_dict(model, optimizer))
            set_optimizer_state_dict(model, optimizer, loaded)
        else:
            set_optimizer_state_dict(model, optimizer, by_name(state, model), options=StateDictOptions(full_state_dict=True))
        model.unshard()

    # -- a step --------------------------------------------------------------------------------

    def slice_batch(self, tensor, name):
        if tensor.shape[0] % self.size:
            raise self.error(f"the dataset `{name}`'s batch of {tensor.shape[0]} windows doesn't split among {self.size} processes; "
                           f"use a batch that {self.size} divides")
        part = tensor.shape[0] // self.size
        return tensor[self.rank * part:(self.rank + 1) * part].to(self.device)

    def average(self, tensors):
        """The mean over the ranks of each tensor, in one all-reduce."""
        import torch
        import torch.distributed as dist

        flat = torch.cat([t.detach().reshape(-1).float() for t in tensors])
        dist.all_reduce(flat)
        flat /= self.size
        return [part.view(t.shape).to(t.dtype) for part, t in zip(flat.split([t.numel() for t in tensors]), tensors)]

    def step(self, optimizer, model, gradients):
        """The optimizer's step on each rank's shards, with the averaged whole gradients."""
        from torch.distributed.tensor import distribute_tensor

        model.reshard()
        for name, p in model.named_parameters():
            if name in gradients:  # this rank's shard of it, without communication
                p.grad = distribute_tensor(gradients[name], p.device_mesh, p.placements, src_data_rank=None)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        model.unshard()

    def anyone(self, flag):
        """Whether any rank says so (Ctrl-C reaches the ranks at different moments)."""
        import torch
        import torch.distributed as dist

        t = torch.tensor([1.0 if flag else 0.0], device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t.item())

    # -- checkpoints -----------------------------------------------------------------------------

    def save(self, path, models, optimizers, run_state):
        """A DCP folder at `path`, written by every rank; complete or absent."""
        import torch.distributed as dist
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import get_model_state_dict, get_optimizer_state_dict

        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise self.error(f"can't save the checkpoint `{path}`: the folder `{folder}` does not exist")
        # One name for every rank, rank 0's, beside the target (a rename within one file system).
        partial = [f"{folder}/.{os.path.basename(path)[:64]}.{os.getpid()}.partial" if self.rank == 0 else None]
        dist.broadcast_object_list(partial, src=0)
        partial = partial[0]
        for m in self.sharded:
            m.reshard()
        try:
            states = [get_model_state_dict(m) for m in models]
            state = {"state_dict": states[0],
                     "shapescript_run": {**run_state,
                                         "models": states[1:],  # the first is `state_dict`
                                         "optimizers": [get_optimizer_state_dict(o.shapescript_model, o) for o in optimizers],
                                         "world_size": self.size}}
            dcp.save(state, checkpoint_id=partial)
            dist.barrier()
            if self.rank == 0:
                swap_into_place(partial, path)
            dist.barrier()
        except BaseException:
            if self.rank == 0 and os.path.isdir(partial):
                shutil.rmtree(partial, ignore_errors=True)
            raise
        finally:
            for m in self.sharded:
                m.unshard()


def shard(model):
    """FSDP2: each block of a ModuleList its own group, then the root. A block that shares a
    parameter with anything outside it (a tied embedding and output) is left to the root's group,
    so that the tied pair is one parameter of one group, gathered and stepped once."""
    from torch import nn
    from torch.distributed.fsdp import fully_shard

    owners = {}
    for module in model.modules():
        for p in module.parameters(recurse=False):
            owners.setdefault(id(p), set()).add(id(module))
    for module in model.modules():
        if isinstance(module, nn.ModuleList):
            for block in module:
                inside = {id(m) for m in block.modules()}
                if all(owners[id(p)] <= inside for p in block.parameters()):
                    fully_shard(block)
    fully_shard(model)


def swap_into_place(partial, path):
    """The folder `partial` becomes `path` at once (renameat2's exchange where the old one exists)."""
    if not os.path.lexists(path):
        os.rename(partial, path)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, rename_exchange = -100, 2
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is not None and renameat2(at_fdcwd, os.fsencode(partial), at_fdcwd, os.fsencode(path), rename_exchange) == 0:
        old = partial  # the exchange left the old checkpoint here
    else:  # no renameat2: the old one aside, the new one in (for a moment there is none)
        old = partial + ".old"
        os.rename(path, old)
        os.rename(partial, path)
    if os.path.isdir(old) and not os.path.islink(old):
        shutil.rmtree(old)
    else:
        os.remove(old)


def is_checkpoint_folder(path):
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, ".metadata"))


def read_folder(path):
    """A DCP checkpoint read whole in this one process, as the single-file checkpoint's dict:
    {"state_dict": ..., "shapescript_run": {..., "models": [the first, ...]}}."""
    from torch.distributed.checkpoint import FileSystemReader
    from torch.distributed.checkpoint.default_planner import _EmptyStateDictLoadPlanner
    from torch.distributed.checkpoint.state_dict_loader import _load_state_dict

    state = {}
    _load_state_dict(state, storage_reader=FileSystemReader(path), planner=_EmptyStateDictLoadPlanner(), no_dist=True)
    run = state.get("shapescript_run")
    if isinstance(run, dict) and "state_dict" in state:
        run["models"] = [state["state_dict"], *run.get("models", [])]
    return state


class Sharded:
    """A model's or an optimizer's state left in a DCP folder, at `prefix` in it, until there are
    shards to read it into (DCP reshards: a checkpoint of any world size reads into any other)."""

    def __init__(self, path, prefix):
        self.path, self.prefix = path, prefix

    def load_into(self, template):
        import torch.distributed.checkpoint as dcp

        nested = template
        for part in reversed(self.prefix):  # the template where it sits in the checkpoint; a list index pads with nothing
            nested = [{}] * part + [nested] if isinstance(part, int) else {part: nested}
        dcp.load(nested, checkpoint_id=self.path)
        return template


def read_run(path):
    """Under torchrun, a DCP folder to resume: the run's own small state read whole (the step, the
    datasets' and random generators), its models and optimizers left to read into their shards."""
    from torch.distributed.checkpoint import FileSystemReader
    from torch.distributed.checkpoint.state_dict_loader import _load_state_dict_from_keys

    metadata = FileSystemReader(path).read_metadata()
    models, optimizers = {0}, set()
    for key in metadata.state_dict_metadata:
        where = metadata.planner_data.get(key, ())
        if len(where) > 2 and where[0] == "shapescript_run" and where[1] == "models":
            models.add(int(where[2]) + 1)  # the first model is `state_dict`
        elif len(where) > 2 and where[0] == "shapescript_run" and where[1] == "optimizers":
            optimizers.add(int(where[2]))
    small = {f"shapescript_run.{k}" for k in ("step", "datasets", "rng", "tokens", "world_size")}
    run = _load_state_dict_from_keys(small, checkpoint_id=path).get("shapescript_run")
    if run is None:  # weights alone
        return None
    run["models"] = [Sharded(path, ["state_dict"] if i == 0 else ["shapescript_run", "models", i - 1]) for i in range(max(models) + 1)]
    run["optimizers"] = [Sharded(path, ["shapescript_run", "optimizers", i]) for i in range(len(optimizers))]
    return run


def by_name(state, model):
    """An optimizer's state dict keyed by parameter name (DCP's form), from either form."""
    names = [n for n, _ in model.named_parameters()]
    groups = state["param_groups"]
    if all(isinstance(p, str) for g in groups for p in g["params"]):
        return state
    return {"state": {names[i]: v for i, v in state["state"].items()},
            "param_groups": [{**g, "params": [names[i] for i in g["params"]]} for g in groups]}


def by_index(state):
    """An optimizer's state dict keyed by index (torch.optim's own form), from either form."""
    groups = state["param_groups"]
    if not any(isinstance(p, str) for g in groups for p in g["params"]):
        return state
    order = [p for g in groups for p in g["params"]]
    index = {name: i for i, name in enumerate(order)}
    return {"state": {index[n]: v for n, v in state["state"].items()},
            "param_groups": [{**g, "params": [index[p] for p in g["params"]]} for g in groups]}
