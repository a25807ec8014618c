#!/usr/bin/env python3
"""Benchmark of shapescript-lsp on a generated 2,000-line file: edit→publishDiagnostics latency,
hover latency (median and p99), and the server's resident memory. Built as `bench_lsp`, not a test.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import threading
import queue
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
URI = "file:///bench.ss"

FUNCTION = """## Block {i}: attention with its own projections.
fn block_{i}(x: [b n D], w_qkv: [3*D D], w_o: [D D]) -> [b n D]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    att = einsum(q, k: b H n Dh, b H m Dh -> b H n m)
        |> scale(1 / sqrt(Dh))
        |> masked_fill(!causal[n m], -inf)
        |> softmax(over=m)
    y = einsum(att, v: b H n m, b H m Dh -> b H n Dh)
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(w_o)
    return x + y

"""


def generate(lines):
    text = "dim D  = 64\ndim H  = 4\ndim Dh = D / H\n\n"
    i = 0
    while text.count("\n") < lines:
        text += FUNCTION.format(i=i)
        i += 1
    return text, i


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Client:
    def __init__(self, server, args):
        self.process = subprocess.Popen([server, "--log-level", "warn", *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)
        self.messages = queue.Queue()
        threading.Thread(target=self.read, daemon=True).start()
        self.id = 0

    def read(self):
        out = self.process.stdout
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.messages.put((time.perf_counter(), json.loads(out.read(length))))

    def send(self, message):
        body = json.dumps(dict(message, jsonrpc="2.0")).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def wait(self, predicate):
        while True:
            at, message = self.messages.get(timeout=120)
            if predicate(message):
                return at, message

    def request(self, method, params):
        self.id += 1
        start = time.perf_counter()
        self.send({"id": self.id, "method": method, "params": params})
        at, message = self.wait(lambda m: m.get("id") == self.id and "method" not in m)
        return at - start, message

    def rss_kib(self):
        fields = {}
        with open("/proc/%d/status" % self.process.pid) as f:
            for line in f:
                name, _, value = line.partition(":")
                fields[name] = value.strip()
        return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def run(server, lines, edits, hovers, debounce):
    text, functions = generate(lines)
    client = Client(server, ["--debounce-ms", str(debounce)])
    client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    client.send({"method": "initialized", "params": {}})
    start = time.perf_counter()
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": URI, "languageId": "shapescript", "version": 1, "text": text}}})
    at, _ = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    open_ms = (at - start) * 1000
    source_lines = text.split("\n")
    rng = random.Random(1)
    edit_ms = []
    version = 1
    for _ in range(edits):
        # Retype one character of a `return x + y` line: the file stays valid, every check is real.
        f = rng.randrange(functions)
        line = 4 + f * 12 + 10
        assert source_lines[line].startswith("    return x + y"), source_lines[line]
        version += 1
        start = time.perf_counter()
        client.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": URI, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": 15}, "end": {"line": line, "character": 16}},
                                "text": "y"}]}})
        at, _ = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"].get("version") == version)
        edit_ms.append((at - start) * 1000)
    hover_ms = []
    for _ in range(hovers):
        f = rng.randrange(functions)
        line = 4 + f * 12 + 6  # the `|> softmax(over=m)` line
        elapsed, reply = client.request("textDocument/hover", {"textDocument": {"uri": URI},
                                                               "position": {"line": line, "character": 14}})
        assert reply.get("result"), reply
        hover_ms.append(elapsed * 1000)
    rss, peak = client.rss_kib()
    client.request("shutdown", None)
    client.send({"method": "exit"})
    client.process.wait(timeout=30)
    return {"lines": text.count("\n"), "bytes": len(text.encode()), "open_ms": open_ms, "edit_ms": edit_ms,
            "hover_ms": hover_ms, "rss_kib": rss, "peak_rss_kib": peak}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", default=os.path.join(ROOT, "build", "lsp", "shapescript-lsp"))
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--hovers", type=int, default=500)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    results = {}
    for debounce in (30, 0):
        r = run(args.server, args.lines, args.edits, args.hovers, debounce)
        results[debounce] = r
        if not args.json:
            print("shapescript-lsp, %d lines (%d bytes), debounce %s:" % (r["lines"], r["bytes"], "adaptive, at most 30 ms" if debounce else "none"))
            print("  open → diagnostics     %8.2f ms" % r["open_ms"])
            print("  edit → diagnostics     median %7.2f ms   p99 %7.2f ms   (%d edits)" % (
                statistics.median(r["edit_ms"]), percentile(r["edit_ms"], 99), len(r["edit_ms"])))
            print("  hover                  median %7.3f ms   p99 %7.3f ms   (%d hovers)" % (
                statistics.median(r["hover_ms"]), percentile(r["hover_ms"], 99), len(r["hover_ms"])))
            print("  server RSS             %8.1f MiB (peak %.1f MiB)" % (r["rss_kib"] / 1024, r["peak_rss_kib"] / 1024))
    if args.json:
        print(json.dumps({str(k): {"lines": v["lines"], "edit_median_ms": statistics.median(v["edit_ms"]),
                                   "edit_p99_ms": percentile(v["edit_ms"], 99),
                                   "hover_median_ms": statistics.median(v["hover_ms"]),
                                   "hover_p99_ms": percentile(v["hover_ms"], 99),
                                   "rss_kib": v["rss_kib"]} for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
