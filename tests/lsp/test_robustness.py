"""shapescript-lsp against bad and heavy input: it must never crash, and must answer the next valid
request correctly. Run with pytest; SHAPESCRIPT_LSP names the server (default build/lsp/shapescript-lsp).
"""
import json
import os
import queue
import subprocess
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SERVER = os.environ.get("SHAPESCRIPT_LSP", os.path.join(ROOT, "build", "lsp", "shapescript-lsp"))
URI = "file:///robust.ss"
SMALL = "dim D = 4\n\nfn f(x: [b D]) -> [b D]:\n    y = x + x\n    return y\n"


def utf16_len(text):
    return len(text.encode("utf-16-le")) // 2


class Client:
    def __init__(self, *args):
        self.process = subprocess.Popen([SERVER, "--log-level", "warn", *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages = queue.Queue()
        self.next_id = 1000
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()

    def _read(self):
        out = self.process.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                if not line.strip():
                    break
                name, _, value = line.partition(b":")
                assert name.strip().lower() == b"content-length", line
                length = int(value)
            assert length is not None
            self.messages.put(json.loads(out.read(length)))

    def raw(self, data):
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def body(self, text):
        data = text.encode() if isinstance(text, str) else text
        self.raw(b"Content-Length: %d\r\n\r\n" % len(data) + data)

    def send(self, message):
        message = dict(message, jsonrpc="2.0")
        self.body(json.dumps(message))

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def request(self, method, params=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.next_id

    def wait(self, predicate, timeout=30):
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            try:
                message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError("timed out; saw %s" % json.dumps(seen)[:2000])
            if message is None:
                raise AssertionError("the server ended; stderr: %s" % b"".join(self.stderr).decode()[-2000:])
            seen.append(message)
            if predicate(message):
                return message

    def response(self, id, timeout=30):
        return self.wait(lambda m: "method" not in m and m.get("id") == id, timeout)

    def call(self, method, params=None, timeout=30):
        return self.response(self.request(method, params), timeout)

    def diagnostics(self, version, uri=URI, timeout=60):
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri and m["params"].get("version") == version, timeout)["params"]

    def initialize(self):
        result = self.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert "capabilities" in result["result"]
        self.notify("initialized", {})

    def open(self, text, version=1, uri=URI):
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "shapescript",
                                                              "version": version, "text": text}})

    def change(self, version, changes, uri=URI):
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                               "contentChanges": changes})

    def hover(self, line, character, uri=URI):
        return self.call("textDocument/hover", {"textDocument": {"uri": uri},
                                                "position": {"line": line, "character": character}})

    def alive(self):
        """The next valid request is answered correctly."""
        reply = self.call("textDocument/documentSymbol", {"textDocument": {"uri": URI}})
        assert "result" in reply, reply
        return reply

    def close(self):
        if self.process.poll() is None:
            try:
                self.call("shutdown", timeout=10)
                self.notify("exit", None)
                self.process.wait(timeout=10)
            except Exception:
                self.process.kill()
        return self.process.returncode


@pytest.fixture
def client():
    c = Client()
    c.initialize()
    c.open(SMALL)
    c.diagnostics(1)
    yield c
    status = c.close()
    assert status == 0, b"".join(c.stderr).decode()[-2000:]


def symbols_ok(client):
    names = [s["name"] for s in client.alive()["result"]]
    assert names == ["D", "f"]


# --- framing and JSON -------------------------------------------------------------------------

def test_malformed_json_gets_parse_error(client):
    client.body('{"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {')
    error = client.wait(lambda m: "error" in m)
    assert error["id"] is None and error["error"]["code"] == -32700
    client.body("\x00\x01 not json at all \xff")
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32700
    symbols_ok(client)


def test_not_an_object_and_bad_shapes(client):
    client.body("[]")
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32600
    client.body('"just a string"')
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32600
    client.send({"id": 7, "method": 42})
    assert client.response(7)["error"]["code"] == -32600
    client.send({"id": 8, "method": "textDocument/hover", "params": {"textDocument": {"uri": URI}}})
    assert client.response(8)["error"]["code"] == -32602  # no position
    client.send({"id": 9, "method": "textDocument/hover",
                 "params": {"textDocument": {"uri": URI}, "position": {"line": "x", "character": 0}}})
    assert client.response(9)["error"]["code"] == -32602
    client.send({"id": 10, "method": "textDocument/hover", "params": {"textDocument": {"uri": 5},
                                                                      "position": {"line": 0, "character": 0}}})
    assert client.response(10)["error"]["code"] == -32602
    # A malformed didChange is ignored as a whole.
    client.change(2, [{"range": {"start": {"line": 0}}, "text": "x"}])
    client.change(2, "not a list")
    symbols_ok(client)


def test_content_length_too_short(client):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}).encode()
    client.raw(b"Content-Length: %d\r\n\r\n" % (len(body) - 5) + body)
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32700
    symbols_ok(client)


def test_content_length_too_long(client):
    body = json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}}).encode()
    client.raw(b"Content-Length: %d\r\n\r\n" % (len(body) + 200) + body)
    symbols_ok(client)  # the next message's header cuts the first one short


def test_content_length_not_a_number_or_missing_or_huge(client):
    client.raw(b"Content-Length: banana\r\n\r\n{}")
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32700
    client.raw(b"Content-Type: application/json\r\n\r\n{}")
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32700
    client.raw(b"Content-Length: 99999999999999999\r\n\r\n{}")
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32700
    client.raw(b"Content-Length: -5\r\n\r\n")
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32700
    symbols_ok(client)


def test_other_headers_lowercase_and_byte_by_byte(client):
    body = json.dumps({"jsonrpc": "2.0", "id": 77, "method": "textDocument/documentSymbol",
                       "params": {"textDocument": {"uri": URI}}}).encode()
    client.raw(b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" % len(body) + body)
    assert len(client.response(77)["result"]) == 2
    frame = b"Content-Length: %d\r\n\r\n" % len(body) + body.replace(b"77", b"78")
    for i in range(len(frame)):
        client.raw(frame[i:i + 1])
    assert len(client.response(78)["result"]) == 2


def test_garbage_between_messages(client):
    client.raw(b"\r\n\r\nhello there\r\n\r\n")
    client.raw(bytes(range(256)) * 4 + b"\r\n\r\n")
    symbols_ok(client)


# --- protocol --------------------------------------------------------------------------------

def test_requests_before_initialize():
    c = Client()
    try:
        reply = c.call("textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}})
        assert reply["error"]["code"] == -32002
        c.open(SMALL)  # dropped before initialize
        c.initialize()
        assert c.alive()["result"] is None  # the early didOpen was not kept
    finally:
        assert c.close() == 0


def test_unknown_methods(client):
    assert client.call("shapescript/unknown", {})["error"]["code"] == -32601
    assert client.call("$/unknownRequest", {})["error"]["code"] == -32601
    client.notify("shapescript/unknownNotification", {"a": 1})
    client.notify("$/progress", {"token": 1, "value": {}})
    symbols_ok(client)


def test_exit_without_shutdown_is_status_1():
    c = Client()
    c.initialize()
    c.notify("exit", None)
    assert c.process.wait(timeout=10) == 1


def test_end_of_input_exits():
    c = Client()
    c.initialize()
    c.process.stdin.close()
    assert c.process.wait(timeout=10) == 1


def test_cancel_a_waiting_request(client):
    client.change(2, [{"range": {"start": {"line": 4, "character": 11}, "end": {"line": 4, "character": 12}},
                       "text": "y"}])
    id = client.request("textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": 3, "character": 4}})
    client.notify("$/cancelRequest", {"id": id})
    reply = client.response(id)
    # Either it was answered before the cancel arrived, or it was cancelled.
    assert "result" in reply or reply["error"]["code"] == -32800
    symbols_ok(client)


# --- positions -------------------------------------------------------------------------------

def test_positions_past_the_end_are_clamped(client):
    for line, character in [(0, 10_000), (3, 999), (10_000, 0), (10_000, 10_000), (-1, -5), (2**40, 2**40)]:
        reply = client.hover(line, character)
        assert "result" in reply, reply
        reply = client.call("textDocument/definition", {"textDocument": {"uri": URI},
                                                        "position": {"line": line, "character": character}})
        assert "result" in reply, reply
        reply = client.call("textDocument/completion", {"textDocument": {"uri": URI},
                                                        "position": {"line": line, "character": character}})
        assert "result" in reply
    reply = client.call("textDocument/inlayHint", {"textDocument": {"uri": URI}, "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": 99999, "character": 99999}}})
    assert [h["label"] for h in reply["result"]] == [": [b D]"]
    # An edit whose range runs past the end appends at the end.
    client.change(2, [{"range": {"start": {"line": 400, "character": 3}, "end": {"line": 500, "character": 0}},
                       "text": "dim E = 5\n"}])
    client.diagnostics(2)
    assert [s["name"] for s in client.alive()["result"]] == ["D", "f", "E"]


def test_utf16_surrogate_pairs(client):
    prefix = '    return scale(x, "😀😀") + '
    text = "dim D = 4\n\nfn f(x: [b D]) -> [b D]:\n" + prefix + "yy\n"
    client.open(text, 1, "file:///emoji.ss")
    diags = client.diagnostics(1, "file:///emoji.ss")["diagnostics"]
    unknown = [d for d in diags if d["code"] == "E0201"]
    assert unknown and unknown[0]["range"]["start"] == {"line": 3, "character": utf16_len(prefix)}
    assert unknown[0]["range"]["end"] == {"line": 3, "character": utf16_len(prefix) + 2}
    # Insert in the middle of the first surrogate pair: it lands before the emoji, so `yy` moves
    # right by 2 code units.
    emoji = prefix.index("😀")
    client.change(2, [{"range": {"start": {"line": 3, "character": utf16_len(prefix[:emoji]) + 1},
                                 "end": {"line": 3, "character": utf16_len(prefix[:emoji]) + 1}}, "text": "ab"}],
                  "file:///emoji.ss")
    diags = client.diagnostics(2, "file:///emoji.ss")["diagnostics"]
    unknown = [d for d in diags if d["code"] == "E0201"]
    assert unknown[0]["range"]["start"]["character"] == utf16_len(prefix) + 2
    # Replace `yy` by `x`, addressed in UTF-16 after the pairs: the error goes away.
    start = utf16_len(prefix) + 2
    client.change(3, [{"range": {"start": {"line": 3, "character": start}, "end": {"line": 3, "character": start + 2}},
                       "text": "x"}], "file:///emoji.ss")
    diags = client.diagnostics(3, "file:///emoji.ss")["diagnostics"]
    assert not [d for d in diags if d["code"] == "E0201"], diags
    # Hover positions come back in UTF-16 too.
    hover = client.hover(3, start, "file:///emoji.ss")["result"]
    assert hover["range"] == {"start": {"line": 3, "character": start}, "end": {"line": 3, "character": start + 1}}


def test_invalid_unicode_in_messages(client):
    # A lone surrogate escape is not Unicode: nlohmann refuses the message, the server says so.
    client.open("dim D = 4\n# \udcff bad\nfn f(x: [D]) -> [D]:\n    return zz\n", 1, "file:///bad-utf8.ss")
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32700
    raw = b'{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///bad-utf8.ss","version":2},"contentChanges":[{"text":"dim D = 4\\n# \xff\xfe\\n"}]}}'
    client.body(raw)  # invalid UTF-8 in the JSON itself: a ParseError
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32700
    symbols_ok(client)


def test_deeply_nested_json_gets_parse_error(client):
    # 60,000 levels overflowed the server's stack; past its limit a message is refused unbuilt.
    deep = 60000
    client.body('{"jsonrpc": "2.0", "id": 1, "method": "x", "params": ' + "[" * deep + "]" * deep + "}")
    error = client.wait(lambda m: "error" in m)
    assert error["id"] is None and error["error"]["code"] == -32700, error
    assert "deeper than" in error["error"]["message"]
    client.body('{"jsonrpc": "2.0", "method": "x", "params": ' + '{"a": ' * deep + "1" + "}" * deep + "}")
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32700
    # An ordinary message nested a few levels is still read.
    client.notify("workspace/didChangeConfiguration", {"settings": {"a": {"b": {"c": {"d": [[[[1]]]]}}}}})
    symbols_ok(client)


def test_deeply_nested_document(client):
    # Each of these killed the server with a stack overflow at a few thousand levels.
    deep = 20000
    bodies = ["relu(" * deep + "x" + ")" * deep, "x" + " |> relu" * deep, " + ".join(["x"] * deep)]
    text = "".join("fn f%d(x: [n]) -> [n]:\n    return %s\n\n" % (i, body) for i, body in enumerate(bodies))
    client.open(text, 1, "file:///deep.ss")
    params = client.diagnostics(1, "file:///deep.ss")
    assert [d["code"] for d in params["diagnostics"]] == ["E0104"] * len(bodies)
    hover = client.hover(1, 11, "file:///deep.ss")
    assert "result" in hover
    symbols_ok(client)


# --- load ------------------------------------------------------------------------------------

def big_document(target_bytes):
    parts = ["dim D = 64\n\n"]
    size = len(parts[0])
    i = 0
    while size < target_bytes:
        block = ("fn layer_%d(x: [b n D], w: [D D]) -> [b n D]:\n"
                 "    h = linear(x, w)\n"
                 "    g = h + x\n"
                 "    return g |> softmax(over=D)\n\n") % i
        parts.append(block)
        size += len(block)
        i += 1
    return "".join(parts), i


def test_five_megabyte_document(client):
    text, functions = big_document(5 * 1024 * 1024)
    start = time.monotonic()
    client.open(text, 1, "file:///big.ss")
    params = client.diagnostics(1, "file:///big.ss", timeout=120)
    assert params["diagnostics"] == []
    elapsed = time.monotonic() - start
    line = text.count("\n") - 2  # the last function's `return` line
    hover = client.hover(line, 18, "file:///big.ss")
    assert hover["result"] and "softmax" in hover["result"]["contents"]["value"], hover
    # An edit at the very end of the big file is checked again.
    end_line = text.count("\n")
    client.change(2, [{"range": {"start": {"line": end_line, "character": 0}, "end": {"line": end_line, "character": 0}},
                       "text": "dim E = oops\n"}], "file:///big.ss")
    params = client.diagnostics(2, "file:///big.ss", timeout=120)
    assert params["diagnostics"] and params["diagnostics"][0]["range"]["start"]["line"] == end_line
    symbols = client.call("textDocument/documentSymbol", {"textDocument": {"uri": "file:///big.ss"}}, timeout=60)
    assert len(symbols["result"]) == functions + 2
    print("5 MB document checked in %.2f s" % elapsed)


def test_a_thousand_edits_in_a_row(client):
    # Type a new function one character at a time, as fast as the pipe takes it.
    addition = "fn g(z: [b D]) -> [b D]:\n    w = z * z\n    return softmax(w, over=D) + zz\n"
    line = SMALL.count("\n")
    column = 0
    version = 1
    typed = ""
    for repeat in range(1000 // len(addition) + 1):
        for ch in addition:
            if version > 1000:
                break
            version += 1
            client.change(version, [{"range": {"start": {"line": line, "character": column},
                                               "end": {"line": line, "character": column}}, "text": ch}])
            typed += ch
            if ch == "\n":
                line += 1
                column = 0
            else:
                column += 1
    final = client.diagnostics(version, timeout=60)
    reply = client.alive()
    published = version  # versions before the last may have been dropped as stale
    # The server's text must be exactly what was typed: its diagnostics say where the typos are.
    expected_text = SMALL + typed
    for d in final["diagnostics"]:
        start = d["range"]["start"]
        assert start["line"] < expected_text.count("\n") + 1
    names = [s["name"] for s in reply["result"]]
    assert names[:2] == ["D", "f"] and "g" in names, names
    # A whole-file check of the same text from scratch agrees with the incremental one.
    client.open(expected_text, 1, "file:///fresh.ss")
    fresh = client.diagnostics(1, "file:///fresh.ss")
    same_uri = json.loads(json.dumps(fresh["diagnostics"]).replace("file:///fresh.ss", URI))
    assert same_uri == final["diagnostics"], (fresh, final)
    assert len(final["diagnostics"]) > 0
    assert published == 1001


def test_stale_versions_are_dropped(client):
    # 200 quick edits: far fewer than 200 checks are published, and the last is.
    published = []
    for v in range(2, 202):
        client.change(v, [{"range": {"start": {"line": 0, "character": 8}, "end": {"line": 0, "character": 9}},
                           "text": str(v % 9 + 1)}])
    client.wait(lambda m: (m.get("method") == "textDocument/publishDiagnostics" and published.append(
        m["params"]["version"]) is None and m["params"]["version"] == 201), timeout=60)
    assert published[-1] == 201 and len(published) < 100, published
    hover = client.hover(0, 4)["result"]
    assert "dim D = %d" % (201 % 9 + 1) in hover["contents"]["value"]
