"""`shapescript verify FILE`: runs every artifact ShapeScript wrote for a model's forward on the same
inputs and compares each with the compiled forward: the .pt2 program, the AOTInductor package, the
Hugging Face folder in transformers, the same folder in real vLLM (in its own venv, made by
scripts/engines.sh) and the GGUF file in llama.cpp. Prints one table on stdout (engine, largest
difference, tokens/s, pass or fail); progress goes to stderr. Exit status 1 when an engine disagrees.

The CLI (cli/verify.cpp) exports the artifacts and runs this script with a spec (JSON):
  reference, model, function, parameters, weights, weights_name  as for hf.py (weights.py reads them)
  takes_positions, max_positions, vocab                           the forward's inputs
  kind, inputs    "encoder" and its inputs by role (import_weights.py's), else a language model's
  reference_folder  an encoder's: the Hugging Face folder its weights came from, whose model in
              transformers (AutoModel: BertModel, ViTModel) is the transformers row, and which
              vLLM's pooling runner serves (token ids alone); null: none
  artifacts   {engine: {"path": str, "error": str|null}}: pt2, aoti, hf, gguf (what the export said
              when it failed; for gguf, "architecture": llama.cpp's, when it is one)
  vllm        {"python": the vLLM venv's Python or null, "skip": why vLLM isn't run, or null}
  llama_cpp   llama.cpp's folder (scripts/llama_cpp.sh) or null
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

if __package__:  # shapescript.runtime, imported in a Python process: sys.path untouched
    from . import script, weights
else:  # a file the CLI runs with `python -I`, whose folder holds the runtime's modules
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import script  # noqa: E402
    import weights  # noqa: E402

# Largest difference allowed, as a fraction of the largest logit: float32 summed in another order
# (measured about 1e-6). llama.cpp's gpt2 and gemma read GELU from a float16 table (measured about
# 2e-4 and 8e-5), as do its phi2, starcoder2, gemma2, gemma3, bloom and gptneox (about 3e-4 against transformers;
# gptneox's is the tanh form where GPT-NeoX's is exact).
TOLERANCE = 1e-4
GGUF_TOLERANCE = {"llama": 1e-4, "gpt2": 2e-3, "gemma": 2e-3, "phi2": 2e-3, "starcoder2": 2e-3, "gemma2": 2e-3, "gptneox": 2e-3,
                  "gemma3": 2e-3, "bloom": 2e-3, "bert": 2e-3}
NO_LENGTH_LIMIT = 100  # the longest input for a model without positions, which has no P


def progress(message):
    print(f"verify: {message}", file=sys.stderr, flush=True)


def boundary_inputs(spec):
    """(batch, tokens) sizes at the edges the types allow: one token, P tokens, batch 1 and more,
    and lengths that are multiples of nothing."""
    longest = spec["max_positions"] if spec["takes_positions"] else NO_LENGTH_LIMIT
    sizes = [(1, 1), (1, longest), (3, min(7, longest)), (2, max(1, min(longest - 2, 61)))]
    import torch

    generator = torch.Generator().manual_seed(0)
    inputs = []
    for b, n in dict.fromkeys(sizes):  # a model with P = 7 would repeat one
        ids = torch.randint(3, spec["vocab"], (b, n), generator=generator)  # past llama.cpp's <unk>, <s>, </s>
        inputs.append((ids, torch.arange(n).expand(b, n).contiguous()))
    return inputs


def encoder_inputs(spec):
    """An encoder's inputs at the edges the types allow, each a list in the forward's order: one
    token and one row, several rows, a longer row; ids and token types at random, a padding mask
    that keeps each row's first token and about three quarters of the rest; for pixels, batches of
    1, 3 and 2 images of the fixed size."""
    import torch

    generator = torch.Generator().manual_seed(0)
    pixels = spec["inputs"][0]["role"] == "pixels"
    sizes = [(1, 1), (3, 7), (2, 16)]
    inputs = []
    for b, n in sizes:
        values = []
        for given in spec["inputs"]:
            role, bound = given["role"], given.get("bound")
            if role == "pixels":
                values.append(torch.randn(b, *given["shape"][1:], generator=generator))
            elif role == "mask":
                mask = torch.rand(b, n, generator=generator) > 0.25
                mask[:, 0] = True
                values.append(mask)
            else:
                values.append(torch.randint(0, bound or spec["vocab"], (b, n), generator=generator))
        inputs.append(tuple(values))
        if pixels and len(inputs) == 3:
            break
    return inputs


def run_encoder_transformers(folder, spec, inputs):
    """transformers' own model of the folder the encoder's weights came from: its last hidden state."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging

    logging.disable_progress_bar()
    model = AutoModel.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    keyword = {"ids": "input_ids", "token_types": "token_type_ids", "mask": "attention_mask", "pixels": "pixel_values"}
    roles = [given["role"] for given in spec["inputs"]]

    def run(*values):
        given = {keyword[role]: v.long() if role == "mask" else v for role, v in zip(roles, values)}
        return model(**given).last_hidden_state

    outputs, seconds = timed(run, inputs)
    return outputs, seconds, f"transformers' {type(model).__name__} of the folder"


class Row:
    def __init__(self, engine, status, difference=None, tokens_per_second=None, note=""):
        self.engine, self.status, self.difference, self.tps, self.note = engine, status, difference, tokens_per_second, note


def compare(engine, reference, outputs, tokens, seconds, tolerance, note=""):
    """outputs: one tensor per input, of the reference's shape."""
    largest = max(r.abs().max().item() for r in reference)
    difference = 0.0
    for expected, got in zip(reference, outputs):
        if tuple(got.shape) != tuple(expected.shape):
            return Row(engine, "FAIL", None, None, f"shape {list(got.shape)}, expected {list(expected.shape)}")
        difference = max(difference, (got.float() - expected).abs().max().item() / largest)
    ok = difference <= tolerance
    return Row(engine, "pass" if ok else "FAIL", difference, tokens / seconds if seconds > 0 else None,
               note if ok else f"differs by more than {tolerance:g} of the largest logit" + (f"; {note}" if note else ""))


def timed(run, inputs):
    import torch

    with torch.no_grad():
        run(*inputs[0])  # a first call compiles or loads lazily: not counted
        start = time.perf_counter()
        outputs = [run(*given) for given in inputs]
        return outputs, time.perf_counter() - start


def run_reference(spec, reference, params, inputs):
    model = getattr(reference, spec["model"])()
    model.load_state_dict(params)
    forward = getattr(reference, spec["function"])

    def run(*given):
        return forward(model, *given) if spec.get("kind") == "encoder" or spec["takes_positions"] else forward(model, given[0])

    return timed(run, inputs)


def run_pt2(path, spec, inputs):
    import torch

    program = torch.export.load(path).module()

    def run(*given):
        return program(*given) if spec.get("kind") == "encoder" or spec["takes_positions"] else program(given[0])

    return timed(run, inputs)


def run_aoti(path, spec, inputs):
    import torch

    package = torch._inductor.aoti_load_package(path)

    def run(*given):
        return package(*given) if spec.get("kind") == "encoder" or spec["takes_positions"] else package(given[0])

    return timed(run, inputs)


def run_onnx(path, spec, inputs):
    """The --onnx file in onnx's reference evaluator: its own implementation of every ONNX operator (numpy)."""
    import onnx
    import torch
    from onnx.reference import ReferenceEvaluator

    model = onnx.load(path)
    names = [value.name for value in model.graph.input]
    evaluator = ReferenceEvaluator(model)

    def run(*given):
        given = given if spec.get("kind") == "encoder" or spec["takes_positions"] else given[:1]
        return torch.from_numpy(evaluator.run(None, {name: value.numpy() for name, value in zip(names, given)})[0])

    return timed(run, inputs)


def run_transformers(path, spec, inputs):
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging

    logging.disable_progress_bar()  # stderr is verify's progress lines
    script.check_folder(path)  # trust_remote_code runs the folder's code: only what the generators write
    model = AutoModelForCausalLM.from_pretrained(path, trust_remote_code=True, dtype=torch.float32).eval()

    def run(ids, pos):
        return model(input_ids=ids, position_ids=pos, use_cache=False).logits

    return timed(run, inputs)


def llama_cpp_bindings(folder):
    """llama-cpp-python's bindings to the libllama built in FOLDER (scripts/llama_cpp.sh)."""
    os.environ["LLAMA_CPP_LIB_PATH"] = os.path.join(folder, "lib")
    sys.path.insert(0, os.path.join(folder, "python"))
    import llama_cpp

    return llama_cpp


def run_llama_cpp(path, folder, spec, inputs):
    import numpy as np
    import torch

    llama_cpp = llama_cpp_bindings(folder)
    longest = max(ids.shape[1] for ids, _ in inputs)
    llm = llama_cpp.Llama(model_path=path, n_ctx=max(64, longest), n_batch=max(64, longest), logits_all=True, type_k=0, type_v=0,
                          flash_attn=False, verbose=False, n_threads=os.cpu_count() or 1)
    outputs, seconds = [], 0.0
    for ids, _ in inputs:  # llama.cpp evaluates one sequence at a time here
        rows = []
        for sequence in ids.tolist():
            llm.reset()
            start = time.perf_counter()
            llm.eval(sequence)
            seconds += time.perf_counter() - start
            rows.append(torch.from_numpy(np.array(llm.scores[: llm.n_tokens], dtype=np.float32)))
        outputs.append(torch.stack(rows))
    return outputs, seconds


def run_llama_cpp_encoder(path, folder, spec, inputs):
    """llama.cpp's per-token embeddings (pooling none) of each row's token ids: llama.cpp gives every
    token type 0 and pads nothing, so `inputs` are ids alone."""
    import torch

    llama_cpp = llama_cpp_bindings(folder)
    longest = max(given[0].shape[1] for given in inputs)
    llm = llama_cpp.Llama(model_path=path, embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_NONE, n_ctx=max(64, longest),
                          n_batch=max(64, longest), n_ubatch=max(64, longest), verbose=False, n_threads=os.cpu_count() or 1)
    outputs, seconds = [], 0.0
    for given in inputs:
        rows = []
        for sequence in given[0].tolist():
            llm.tokenize = lambda *args, sequence=sequence, **kwargs: sequence  # the ids as they are, not text
            start = time.perf_counter()
            rows.append(torch.tensor(llm.embed("ids", normalize=False), dtype=torch.float32))
            seconds += time.perf_counter() - start
        outputs.append(torch.stack(rows))
    return outputs, seconds


def serve_in_vllm(python, jobs):
    """vllm_engine.py's answer to one job, run in vLLM's venv and stopped with its workers."""
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory(prefix="shapescript-vllm-") as work:
        request, result = os.path.join(work, "request.json"), os.path.join(work, "result.json")
        with open(request, "w") as f:
            json.dump({"jobs": jobs}, f)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        env["VLLM_NO_USAGE_STATS"] = "1"
        log = open(os.path.join(work, "vllm.log"), "w")
        process = subprocess.Popen([python, os.path.join(here, "vllm_engine.py"), request, result], stdout=log, stderr=subprocess.STDOUT,
                                   env=env, cwd=work, start_new_session=True)
        try:
            process.wait(timeout=900)
        except subprocess.TimeoutExpired:
            pass
        finally:
            for sig in (signal.SIGTERM, signal.SIGKILL):  # vLLM's engine core and workers too
                try:
                    os.killpg(process.pid, sig)
                    process.wait(timeout=20)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
        log.close()
        if not os.path.exists(result):
            with open(os.path.join(work, "vllm.log")) as f:
                tail = [line for line in f.read().splitlines() if "Error" in line][-1:]
            raise RuntimeError("vLLM stopped without an answer" + (f": {tail[0].strip()}" if tail else ""))
        with open(result) as f:
            job = json.load(f)["jobs"][0]
    if "error" in job:
        raise RuntimeError(job["error"])
    return job


def run_vllm_encoder(python, folder, spec, inputs):
    """Each input's rows served by vLLM's pooling runner from the folder: token ids alone (its requests
    carry no token types and no padding mask), each row's last hidden state."""
    import torch

    prompts = [row for given in inputs for row in given[0].tolist()]
    job = serve_in_vllm(python, [{"model": folder, "vocab": spec["vocab"], "max_model_len": max(len(p) for p in prompts), "prompts": prompts,
                                  "pooling": True, "max_num_seqs": len(prompts)}])
    outputs, index = [], 0
    for given in inputs:
        rows = job["outputs"][index:index + given[0].shape[0]]
        index += given[0].shape[0]
        outputs.append(torch.stack([torch.tensor(r["hidden"], dtype=torch.float32) for r in rows]))
    return outputs, job["seconds"]


def run_vllm(python, folder, spec, inputs):
    """Every row of every input as one request, all served together; vLLM returns log-probabilities
    (the logits less their log-sum-exp), which are compared with the reference's. vLLM samples at
    least one token within its max_model_len (P), so a prompt holds at most P - 1 tokens: an input of
    P tokens is served without its last, whose logits would predict a token past P."""
    import torch

    limit = spec["max_positions"] if spec["takes_positions"] else NO_LENGTH_LIMIT + 1
    prompts = [row[: limit - 1] for ids, _ in inputs for row in ids.tolist()]
    job = serve_in_vllm(python, [{"model": folder, "vocab": spec["vocab"], "max_model_len": limit, "prompts": prompts, "max_tokens": 1,
                                  "logprobs": True, "max_num_seqs": len(prompts)}])
    outputs, index = [], 0
    for ids, _ in inputs:
        rows = []
        for _ in range(ids.shape[0]):
            out = job["outputs"][index]
            index += 1
            rows.append(torch.tensor(out["prompt_logprobs"][1:] + out["logprobs"][:1], dtype=torch.float32))
        outputs.append(torch.stack(rows))
    return outputs, job["seconds"], job["tokens"], limit - 1


def verify(spec):
    import torch

    reference = script.reference_module(spec)
    params = weights.load_weights(spec, reference)
    encoder = spec.get("kind") == "encoder"
    inputs = encoder_inputs(spec) if encoder else boundary_inputs(spec)
    if encoder and spec["inputs"][0]["role"] == "pixels":
        progress(f"inputs of {', '.join(str(given[0].shape[0]) for given in inputs)} images")
    else:
        progress(f"inputs of batch x tokens {', '.join(f'{given[0].shape[0]}x{given[0].shape[1]}' for given in inputs)}")
    progress("running the compiled forward")
    expected, seconds = run_reference(spec, reference, params, inputs)
    tokens = sum(e.shape[0] * e.shape[1] for e in expected)  # an encoder's: positions of its last hidden state
    rows = [Row("compiled forward", "reference", 0.0, tokens / seconds)]
    artifacts = spec["artifacts"]

    # llama.cpp's row, language model or encoder: skipped without its build.
    gguf = artifacts.get("gguf", {})
    if not gguf.get("skip") and not gguf.get("error") and not spec.get("llama_cpp"):
        artifacts["gguf"] = {"skip": "no llama.cpp: run scripts/llama_cpp.sh"}
    gguf_tolerance = GGUF_TOLERANCE.get(artifacts.get("gguf", {}).get("architecture"), TOLERANCE)

    def attempt(engine, key, run, tolerance=TOLERANCE, reference=None):
        """run(path) -> (outputs, seconds[, a note said with a pass]), compared with `reference()`
        (default: the compiled forward on the inputs)."""
        artifact = artifacts.get(key, {})
        if artifact.get("skip"):
            rows.append(Row(engine, "skipped", note=artifact["skip"]))
            return
        if artifact.get("error"):
            rows.append(Row(engine, "FAIL", note=artifact["error"]))
            return
        progress(f"running {engine}")
        try:
            outputs, seconds, *note = run(artifact["path"])
        except Exception as e:  # noqa: BLE001 - the engine's own reason, in the table
            rows.append(Row(engine, "FAIL", note=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
            return
        rows.append(compare(engine, reference() if reference else expected, outputs, tokens, seconds, tolerance, *note))

    attempt(".pt2 (torch.export)", "pt2", lambda p: run_pt2(p, spec, inputs))
    attempt("AOTInductor", "aoti", lambda p: run_aoti(p, spec, inputs))
    attempt("ONNX (--onnx)", "onnx", lambda p: run_onnx(p, spec, inputs))
    if encoder:
        # The encoder's own class in transformers, from the folder its weights came from.
        folder = spec.get("reference_folder")
        artifacts["hf"] = {"path": folder} if folder else {"skip": "an encoder is compared with transformers' own model of the folder "
                                                                  "its weights came from: give `--weights HF_DIR`"}
        attempt("transformers (--hf)", "hf", lambda p: run_encoder_transformers(p, spec, inputs))
        # vLLM's requests and llama.cpp's batches are token ids alone: compared with the compiled
        # forward on the same ids with token types 0 and nothing padded, run once if an engine runs.
        roles = [given["role"] for given in spec["inputs"]]
        plain = [tuple(v if role == "ids" else torch.zeros_like(v) if role == "token_types" else torch.ones_like(v)
                       for role, v in zip(roles, given)) for given in inputs]

        @functools.cache
        def plain_expected():
            return run_reference(spec, reference, params, plain)[0]

        vllm = spec["vllm"]
        if vllm.get("skip") or not folder:
            rows.append(Row("vLLM (--hf)", "skipped", note=vllm.get("skip") or artifacts["hf"]["skip"]))
        else:
            progress("serving the folder with vLLM's pooling runner (starting it takes a minute)")
            try:
                outputs, seconds = run_vllm_encoder(vllm["python"], folder, spec, plain)
                rows.append(compare("vLLM (--hf)", plain_expected(), outputs, tokens, seconds, TOLERANCE,
                                    "the pooling runner's last hidden state of token ids alone (token types 0, nothing padded)"))
            except Exception as e:  # noqa: BLE001
                rows.append(Row("vLLM (--hf)", "FAIL", note=str(e).splitlines()[0] if str(e) else type(e).__name__))
        attempt("llama.cpp (--gguf)", "gguf",
                lambda p: (*run_llama_cpp_encoder(p, spec["llama_cpp"], spec, plain),
                           "per-token embeddings of token ids alone (token types 0, nothing padded)"),
                gguf_tolerance, plain_expected)
        print_table(rows, encoder)
        failed = [r.engine for r in rows if r.status == "FAIL"]
        if failed:
            print(f"error: {', '.join(failed)} disagree{'s' if len(failed) == 1 else ''} with `{spec['function']}`", file=sys.stderr)
            return 1
        return 0
    attempt("transformers (--hf)", "hf", lambda p: run_transformers(p, spec, inputs))

    vllm = spec["vllm"]
    hf = artifacts.get("hf", {})
    if vllm.get("skip"):
        rows.append(Row("vLLM (--hf)", "skipped", note=vllm["skip"]))
    elif hf.get("error"):
        rows.append(Row("vLLM (--hf)", "FAIL", note=hf["error"]))
    else:
        progress("serving the folder with vLLM (starting it takes a minute)")
        try:
            outputs, seconds, served, longest = run_vllm(vllm["python"], hf["path"], spec, inputs)
            log_softmax = [torch.log_softmax(e[:, :longest], dim=-1) for e in expected]
            cut = any(e.shape[1] > longest for e in expected)
            rows.append(compare("vLLM (--hf)", log_softmax, outputs, served, seconds, TOLERANCE,
                                f"prompts of at most {longest} tokens: vLLM samples one more within P" if cut else ""))
        except Exception as e:  # noqa: BLE001
            rows.append(Row("vLLM (--hf)", "FAIL", note=str(e).splitlines()[0] if str(e) else type(e).__name__))

    attempt("llama.cpp (--gguf)", "gguf", lambda p: run_llama_cpp(p, spec["llama_cpp"], spec, inputs), gguf_tolerance)

    print_table(rows)
    failed = [r.engine for r in rows if r.status == "FAIL"]
    if failed:
        print(f"error: {', '.join(failed)} disagree{'s' if len(failed) == 1 else ''} with `{spec['function']}`", file=sys.stderr)
        return 1
    return 0


def print_table(rows, encoder=False):
    header = ("engine", "max difference", "tokens/s", "result")
    cells = [header]
    for r in rows:
        difference = "-" if r.difference is None else ("0" if r.difference == 0 else f"{r.difference:.1e}")
        tps = "-" if r.tps is None else f"{r.tps:,.0f}"
        result = r.status + (f": {r.note}" if r.note else "")
        cells.append((r.engine, difference, tps, result))
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    for c in cells:
        print(f"{c[0]:<{widths[0]}}  {c[1]:>{widths[1]}}  {c[2]:>{widths[2]}}  {c[3]}".rstrip())
    if encoder:
        print("max difference: the largest difference from the compiled forward's last hidden state, as a fraction of the largest")
        return
    print("max difference: the largest difference from the compiled forward's logits (vLLM: log-probabilities), "
          "as a fraction of the largest")


def main(argv):
    return script.run(argv, verify, (weights.WeightsError,))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
