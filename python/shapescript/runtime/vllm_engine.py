"""Runs real vLLM (its offline `LLM`) on a Hugging Face folder and writes what it computed: the
tokens it sampled greedily and the log-probabilities of every token of the vocabulary at every
position. `shapescript verify` and the tests run it with the Python of vLLM's own venv
(scripts/engines.sh); it imports nothing but vLLM and the standard library.

    vllm-venv/bin/python vllm_engine.py REQUEST.json RESULT.json

REQUEST: {"jobs": [JOB, ...]}, served one after another in this process (importing vLLM and
         starting it are most of the time on a small model)
JOB:     {"model": folder, "vocab": int, "max_model_len": int, "prompts": [[token ids], ...],
          "max_tokens": int, "logprobs": bool (every token's log-probability, prompt and sampled),
          "max_num_seqs": int, "model_impl": "transformers" (the default; "auto" for vLLM's own
          models), "runs": how many times to generate (default 1; the last run's outputs are kept),
          "dtype": what vLLM computes in (default "float32"; "bfloat16" as GPUs serve),
          "pooling": true for an encoder (BertModel) served by the pooling runner, task
          `token_embed`: each prompt's last hidden state, no activation}
RESULT:  {"jobs": [{"outputs": [{"tokens": [...], "logprobs": [[V floats] per sampled token],
                                 "prompt_logprobs": [null, [V floats], ...]}],
                    "seconds": the last run's wall time, "runs": [each run's], "tokens": prompt and
                    sampled tokens} or {"error": "vLLM's reason"}, ...]}
A pooling job's outputs are [{"hidden": [[D floats] per token]}].
The exit status is 1 when a job failed.
"""

from __future__ import annotations

import gc
import json
import sys
import time


def dense(entry, vocab):
    """vLLM's {token id: Logprob} of one position as a list over the vocabulary."""
    values = [float("nan")] * vocab
    for token, logprob in entry.items():
        values[token] = logprob.logprob
    return values


def serve(request):
    from vllm import LLM, SamplingParams

    vocab = request["vocab"]
    want = request.get("logprobs", True)
    llm = LLM(
        model=request["model"],
        trust_remote_code=True,
        model_impl=request.get("model_impl", "transformers"),
        skip_tokenizer_init=True,
        dtype=request.get("dtype", "float32"),
        enforce_eager=True,
        # On CPU the KV cache is host memory; a fixed small size also skips vLLM's warm-up pass.
        kv_cache_memory_bytes=request.get("kv_cache_bytes", 128 << 20),
        max_model_len=request["max_model_len"],
        max_num_seqs=request.get("max_num_seqs", 8),
        max_logprobs=-1,  # every token of the vocabulary, so that whole distributions are compared
        seed=0,
    )
    params = SamplingParams(
        temperature=0.0,
        max_tokens=request["max_tokens"],
        ignore_eos=True,
        logprobs=-1 if want else None,
        prompt_logprobs=-1 if want else None,
        detokenize=False,
    )
    prompts = [{"prompt_token_ids": ids} for ids in request["prompts"]]
    runs = []
    for _ in range(request.get("runs", 1)):
        start = time.perf_counter()
        results = llm.generate(prompts, params, use_tqdm=False)
        runs.append(time.perf_counter() - start)
    seconds = runs[-1]
    outputs = []
    for r in results:
        completion = r.outputs[0]
        out = {"tokens": list(completion.token_ids)}
        if want:
            out["logprobs"] = [dense(e, vocab) for e in completion.logprobs]
            out["prompt_logprobs"] = [None if e is None else dense(e, vocab) for e in r.prompt_logprobs]
        outputs.append(out)
    del llm
    gc.collect()  # the engine core shuts down with its last reference, before the next job starts
    return {"outputs": outputs, "seconds": seconds, "runs": runs,
            "tokens": sum(len(p) for p in request["prompts"]) + sum(len(o["tokens"]) for o in outputs)}


def serve_pooling(request):
    """An encoder's last hidden state for each prompt, by vLLM's pooling runner. Its prompts are token
    ids, but the runner reads a tokenizer: one of the vocabulary's size (`t0`, `t1`, ...) is made for it."""
    import os
    import tempfile

    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast
    from vllm import LLM
    from vllm.config import PoolerConfig
    from vllm.pooling_params import PoolingParams

    with tempfile.TemporaryDirectory(prefix="shapescript-tokenizer-") as folder:
        vocab = {f"t{i}": i for i in range(request["vocab"])}
        PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="t0")), unk_token="t0").save_pretrained(folder)
        llm = LLM(
            model=request["model"],
            tokenizer=os.path.abspath(folder),
            runner="pooling",
            model_impl=request.get("model_impl", "transformers"),
            pooler_config=PoolerConfig(task="token_embed", use_activation=False),
            dtype=request.get("dtype", "float32"),
            enforce_eager=True,
            kv_cache_memory_bytes=request.get("kv_cache_bytes", 128 << 20),
            max_model_len=request["max_model_len"],
            max_num_seqs=request.get("max_num_seqs", 8),
            seed=0,
        )
        prompts = [{"prompt_token_ids": ids} for ids in request["prompts"]]
        start = time.perf_counter()
        results = llm.encode(prompts, pooling_task="token_embed", pooling_params=PoolingParams(use_activation=False), use_tqdm=False)
        seconds = time.perf_counter() - start
        outputs = [{"hidden": r.outputs.data.float().tolist()} for r in results]
        del llm
        gc.collect()
    return {"outputs": outputs, "seconds": seconds, "runs": [seconds], "tokens": sum(len(p) for p in request["prompts"])}


def main(argv):
    with open(argv[0]) as f:
        request = json.load(f)
    results = []
    for job in request["jobs"]:
        try:
            results.append(serve_pooling(job) if job.get("pooling") else serve(job))
        except Exception as e:  # noqa: BLE001 - the caller shows vLLM's own reason
            results.append({"error": f"{type(e).__name__}: {e}"})
        print(f"vllm_engine: served {job['model']}", file=sys.stderr, flush=True)
    with open(argv[1], "w") as f:
        json.dump({"jobs": results}, f)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":  # vLLM starts processes that import this file again
    sys.exit(main(sys.argv[1:]))
