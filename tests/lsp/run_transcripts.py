#!/usr/bin/env python3
"""Golden JSON-RPC transcripts of shapescript-lsp.

Each tests/lsp/transcripts/NAME.jsonl holds one JSON message per line (blank lines and lines
starting with // are skipped). The runner frames each with Content-Length and sends it, then:

  * after a request (it has "id" and "method"), waits for the response with that id (or an
    error with id null, for a request too malformed to have its id echoed);
  * after didOpen / didChange / didSave, waits for publishDiagnostics of that document's version,
    unless the line says "$wait": false (runner-only keys start with "$" and are not sent);
  * after didClose, waits for the empty publishDiagnostics of that document;
  * after a line with "$await": N, waits for N publishDiagnostics (didChangeConfiguration);
  * a line {"$body": TEXT, "$receive": N} sends TEXT as a body as it is and waits for N messages;
  * after other notifications, records what arrives within 50 ms ("$wait": false: nothing);
  * after exit, waits for the server to exit and records its status.

Any string "$file:PATH" in a message is replaced by the contents of PATH (relative to the repository
root), so transcripts stay small. Everything the server sends while a line is handled is recorded
under that line, in the order it arrived, and compared with NAME.expected.json. Nothing in the
messages is normalized: the server is told where error pages are (ERROR_DOCS), so that diagnostics'
links don't depend on the checkout's path. --update rewrites the expected files.
"""
import argparse
import difflib
import json
import os
import queue
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TIMEOUT = 20.0
ERROR_DOCS = "file:///checkout/docs/errors/"


def frame(message):
    body = json.dumps(message, ensure_ascii=False).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_frames(stream, out):
    """Puts each message the server sends on `out`; None at the end."""
    try:
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    out.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = stream.read(length or 0)
            out.put(json.loads(body))
    except Exception as e:  # a framing error is a test failure, reported as a message
        out.put({"$runner_error": "unreadable output: %s" % e})
        out.put(None)


def substitute(value):
    if isinstance(value, str) and value.startswith("$file:"):
        with open(os.path.join(ROOT, value[len("$file:"):]), encoding="utf-8") as f:
            return f.read()
    if isinstance(value, list):
        return [substitute(v) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v) for k, v in value.items()}
    return value


def describe(message):
    text = message.get("method", "?")
    if "id" in message:
        text += " #%s" % json.dumps(message["id"])
    return text


class Session:
    def __init__(self, server):
        self.process = subprocess.Popen([server, "--log-level", "warn", "--error-docs", ERROR_DOCS], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.incoming = queue.Queue()
        threading.Thread(target=read_frames, args=(self.process.stdout, self.incoming), daemon=True).start()
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()
        self.ended = False

    def send(self, message):
        self.process.stdin.write(frame(message))
        self.process.stdin.flush()

    def collect_until(self, done):
        """Messages until done(message) is true; a timeout or the end of output is recorded."""
        got = []
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                message = self.incoming.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                got.append({"$runner_error": "timed out"})
                return got
            if message is None:
                self.ended = True
                return got
            got.append(message)
            if done(message):
                return got

    def drain(self, seconds=0.05):
        got = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                message = self.incoming.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                break
            if message is None:
                self.ended = True
                break
            got.append(message)
        return got


def run_transcript(server, path):
    session = Session(server)
    steps = []
    versions = {}
    with open(path, encoding="utf-8") as f:
        lines = [l for l in f if l.strip() and not l.lstrip().startswith("//")]
    for number, line in enumerate(lines, 1):
        message = json.loads(line)
        wait = message.pop("$wait", True)
        publishes = message.pop("$await", 0)
        raw_body = message.pop("$body", None)
        receive = message.pop("$receive", 0)
        message = {k: v for k, v in message.items() if not k.startswith("$")}
        sent = substitute(message)
        method = message.get("method")
        params = sent.get("params") or {}
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if method in ("textDocument/didOpen", "textDocument/didChange") and isinstance(document, dict):
            versions[uri] = document.get("version")
        if method == "textDocument/didSave" and isinstance(params.get("text"), str):
            versions[uri] = None  # a changed text on save bumps the version the server tracks
        if raw_body is not None:
            data = raw_body.encode()
            session.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
            session.process.stdin.flush()
            steps.append({"send": "(body) " + raw_body[:60], "receive": session.collect_until(
                lambda m, c=[0]: c.__setitem__(0, c[0] + 1) or c[0] == max(receive, 1))})
            continue
        session.send(sent)
        if "id" in message and method is not None:
            got = session.collect_until(lambda m: "method" not in m and (m.get("id") == message["id"] or (
                m.get("id") is None and "error" in m)))
        elif method in ("textDocument/didOpen", "textDocument/didChange") and wait:
            version = versions.get(uri)
            got = session.collect_until(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                        and m["params"]["uri"] == uri and m["params"].get("version") == version)
        elif method == "textDocument/didClose":
            got = session.collect_until(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                        and m["params"]["uri"] == uri and "version" not in m["params"])
        elif method == "exit":
            got = session.collect_until(lambda m: False) if not session.ended else []
        elif publishes:
            count = [0]

            def counted(m):
                count[0] += m.get("method") == "textDocument/publishDiagnostics"
                return count[0] == publishes
            got = session.collect_until(counted)
        elif not wait:
            got = []  # whatever it causes is recorded under the next line
        else:
            got = session.drain()
        steps.append({"send": describe(message), "receive": got})
    session.process.stdin.close()
    try:
        status = session.process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        session.process.kill()
        status = "did not exit"
    leftover = session.collect_until(lambda m: False) if not session.ended else []
    if leftover:
        steps.append({"send": "(end of input)", "receive": leftover})
    return {"steps": steps, "exit": status}, b"".join(session.stderr).decode(errors="replace")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=os.path.join(ROOT, "build", "lsp", "shapescript-lsp"))
    parser.add_argument("--update", action="store_true", help="rewrite the expected files")
    parser.add_argument("names", nargs="*", help="transcripts to run (default: all)")
    args = parser.parse_args()
    directory = os.path.join(HERE, "transcripts")
    names = args.names or sorted(n[:-len(".jsonl")] for n in os.listdir(directory) if n.endswith(".jsonl"))
    passed = failed = 0
    for name in names:
        actual, stderr = run_transcript(args.server, os.path.join(directory, name + ".jsonl"))
        text = json.dumps(actual, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        expected_path = os.path.join(directory, name + ".expected.json")
        if args.update:
            with open(expected_path, "w", encoding="utf-8") as f:
                f.write(text)
            print("updated", name)
            passed += 1
            continue
        try:
            with open(expected_path, encoding="utf-8") as f:
                expected = f.read()
        except FileNotFoundError:
            expected = ""
        if expected == text:
            passed += 1
            print("PASS", name)
        else:
            failed += 1
            print("FAIL", name)
            sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                       name + ".expected.json", "actual"))
            if stderr.strip():
                print("server stderr:\n" + stderr)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
