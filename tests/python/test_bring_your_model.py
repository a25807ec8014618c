"""The README's "Bring your model": its four commands, as written there, on a Hugging Face folder.

transformers' Qwen2ForCausalLM with random weights and examples/qwen2.ss's dims, saved with
`save_pretrained` beside a byte-level BPE tokenizer trained here (no hub), is the user's folder
`my-qwen2`. The README's lines run one after another: `import-weights` must give the parameters
transformers holds, the GGUF must tokenize a text as the folder's tokenizer does and give
transformers' logits in real llama.cpp, and `vllm serve` of the exported folder (real vLLM, CPU
build; the flags a CPU needs are added to the README's line) must answer a text prompt with
transformers' greedy tokens.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_bring_your_model.py
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import urllib.request

import torch

from conftest import BIN, EXAMPLES, ROOT, VLLM_VENV, cli_env, free_port, llama_cpp_logits, llama_cpp_module, wait_until_healthy
from test_architectures import ARCHITECTURES, reference_model, relative_difference, shapescript_weights


def readme_commands() -> list[list[str]]:
    """The lines of the README's "Bring your model" shell block, comments left out."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Bring your model", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def post(url, body, timeout=120):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as r:
        return json.loads(r.read())


def test_the_readmes_four_commands(tmp_path):
    from test_vllm import MAX_MODEL_LEN, engine_env, stop

    from tokenizers import pre_tokenizers
    import transformers
    from test_tokenizers import CHAT_TEMPLATE, byte_level_bpe

    arch = ARCHITECTURES["qwen2"]
    model = reference_model(arch, seed=21)
    model.save_pretrained(tmp_path / "my-qwen2")
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=byte_level_bpe(pre_tokenizers.ByteLevel(add_prefix_space=False)),
                                                     bos_token="<|endoftext|>", eos_token="<|im_end|>", chat_template=CHAT_TEMPLATE)
    assert len(tokenizer) <= arch.V
    tokenizer.save_pretrained(tmp_path / "my-qwen2")
    shutil.copy(EXAMPLES / "qwen2.ss", tmp_path / "qwen2.ss")
    commands = readme_commands()
    assert [c[:2] for c in commands] == [["shapescript", "import-weights"], ["shapescript", "export"], ["shapescript", "export"],
                                         ["vllm", "serve"]]

    for command in commands[:3]:
        result = subprocess.run([BIN, *command[1:]], cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, f"{shlex.join(command)}\n{result.stdout}{result.stderr}"

    # The checkpoint holds what transformers holds, parameter for parameter.
    imported = torch.load(tmp_path / "qwen2.pt", weights_only=True)
    expected_weights = shapescript_weights(arch, model)
    assert sorted(imported) == sorted(expected_weights)
    for name, value in expected_weights.items():
        assert torch.equal(imported[name], value), name

    text = "The quick brown fox, 12345 and café"
    ids = torch.tensor([tokenizer.encode(text)])
    assert ids.shape[1] > 4
    llama = llama_cpp_module().Llama(model_path=str(tmp_path / "qwen2.gguf"), vocab_only=True, verbose=False)
    assert llama.tokenize(text.encode(), add_bos=False, special=True) == ids[0].tolist()
    with torch.no_grad():
        expected = model(input_ids=ids).logits[0]
    got = torch.from_numpy(llama_cpp_logits(tmp_path / "qwen2.gguf", ids[0].tolist())).float()
    assert relative_difference(got, expected) < 1e-4

    # vllm serve, as the README says, plus what a 2-core CPU machine needs.
    port = free_port()
    serve = [str(VLLM_VENV / "bin" / "vllm"), *commands[3][1:], "--dtype", "float32", "--enforce-eager", "--max-model-len",
             str(MAX_MODEL_LEN), "--max-num-seqs", "2", "--kv-cache-memory-bytes", str(128 << 20), "--host", "127.0.0.1",
             "--port", str(port)]
    log_path = tmp_path / "serve.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(serve, stdout=log, stderr=subprocess.STDOUT, env=engine_env(), cwd=tmp_path, start_new_session=True)
        try:
            wait_until_healthy(f"http://127.0.0.1:{port}/health", server, log_path, 300, "vllm serve")
            answer = post(f"http://127.0.0.1:{port}/v1/completions",
                          {"model": "qwen2-hf", "prompt": text, "max_tokens": 8, "temperature": 0, "ignore_eos": True, "return_token_ids": True})
            messages = [{"role": "user", "content": "hi there"}]
            chat = post(f"http://127.0.0.1:{port}/v1/chat/completions",
                        {"model": "qwen2-hf", "messages": messages, "max_tokens": 6, "temperature": 0, "ignore_eos": True, "return_token_ids": True})
        finally:
            stop(server)
    with torch.no_grad():
        greedy = model.generate(ids, max_new_tokens=8, do_sample=False, min_new_tokens=8)[0, ids.shape[1]:].tolist()
    choice = answer["choices"][0]
    assert choice["prompt_token_ids"] == ids[0].tolist()  # vLLM tokenized the text as the folder's tokenizer does
    assert choice["token_ids"] == greedy
    # Text out: random weights end on a partial UTF-8 byte sequence, which vLLM's detokenizer holds back.
    assert choice["text"] and tokenizer.decode(greedy).startswith(choice["text"])

    # A chat request: vLLM renders the folder's chat template and answers with transformers' greedy tokens.
    rendered = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    chat_ids = torch.tensor([tokenizer.encode(rendered, add_special_tokens=False)])
    with torch.no_grad():
        chat_greedy = model.generate(chat_ids, max_new_tokens=6, do_sample=False, min_new_tokens=6)[0, chat_ids.shape[1]:].tolist()
    assert chat.get("prompt_token_ids") == chat_ids[0].tolist(), chat
    assert chat["choices"][0]["token_ids"] == chat_greedy
