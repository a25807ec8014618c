#!/usr/bin/env node
// Builds the VS Code extension from the checkout (editors/vscode/package.sh), unzips the .vsix and
// checks it: the manifest, that every file it names is inside, that out/extension.js loads from the
// unpacked folder alone (esbuild bundled its dependencies into it), and the TextMate grammar's scopes
// (vscode-tmgrammar-test on tests/editors/grammar/*.test.ss). Exits non-zero on any failure.
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const Module = require("module");

const root = path.resolve(__dirname, "../..");
const ext = path.join(root, "editors/vscode");
let failures = 0;
function check(name, ok, detail) {
  console.log(`${ok ? "PASS" : "FAIL"} vscode ${name}${!ok && detail ? ": " + detail : ""}`);
  if (!ok) failures++;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "shapescript-vsix-"));
try {
  const vsix = path.join(tmp, "shapescript.vsix");
  try {
    execFileSync(path.join(ext, "package.sh"), [vsix], { stdio: "pipe", encoding: "utf8" });
  } catch (e) {
    process.stdout.write(String(e.stdout || "") + String(e.stderr || ""));
  }
  check("package.sh builds a .vsix", fs.existsSync(vsix));
  const unpacked = path.join(tmp, "unpacked");
  execFileSync("unzip", ["-q", vsix, "-d", unpacked]);
  const dir = path.join(unpacked, "extension");
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));

  check("name", pkg.name === "shapescript" && pkg.publisher === "shapescript", `${pkg.publisher}.${pkg.name}`);
  check("engines.vscode", typeof pkg.engines?.vscode === "string" && /^\^1\.\d+/.test(pkg.engines.vscode), pkg.engines?.vscode);
  check("activationEvents", (pkg.activationEvents || []).includes("onLanguage:shapescript"), JSON.stringify(pkg.activationEvents));
  const lang = (pkg.contributes?.languages || []).find((l) => l.id === "shapescript");
  check("language shapescript for .ss", !!lang && lang.extensions.includes(".ss"), JSON.stringify(lang));
  check("language configuration packaged", !!lang && fs.existsSync(path.join(dir, lang.configuration)));
  if (lang) {
    const conf = JSON.parse(fs.readFileSync(path.join(dir, lang.configuration), "utf8"));
    check("language configuration: # comments, brackets, indent after ':'",
      conf.comments?.lineComment === "#" && conf.brackets.length >= 2 &&
      new RegExp(conf.indentationRules.increaseIndentPattern).test("fn f(x: [n]) -> [n]:") &&
      new RegExp(conf.onEnterRules[1].beforeText).test("    for l in 0..L:") && conf.onEnterRules.length >= 2);
  }
  const grammar = (pkg.contributes?.grammars || []).find((g) => g.language === "shapescript");
  check("grammar source.shapescript packaged", !!grammar && grammar.scopeName === "source.shapescript" &&
    fs.existsSync(path.join(dir, grammar.path)), JSON.stringify(grammar));
  const commands = (pkg.contributes?.commands || []).map((c) => c.command);
  for (const c of ["shapescript.exportFunction", "shapescript.explainCode"]) {
    check(`command ${c}`, commands.includes(c), JSON.stringify(commands));
  }
  const props = pkg.contributes?.configuration?.properties || {};
  check("setting shapescript.server.path defaults to shapescript",
    props["shapescript.server.path"]?.default === "shapescript" &&
    JSON.stringify(props["shapescript.server.args"]?.default) === '["lsp"]');
  check("setting shapescript.python", props["shapescript.python"]?.type === "string");
  check("setting shapescript.trace.server (read by the client for the id `shapescript`)",
    JSON.stringify(props["shapescript.trace.server"]?.enum) === '["off","messages","verbose"]');
  const tokenTypes = Object.fromEntries((pkg.contributes?.semanticTokenTypes || []).map((t) => [t.id, t.superType]));
  check("semantic token types dim and axis, with standard fallbacks",
    tokenTypes.dim === "enumMember" && tokenTypes.axis === "typeParameter", JSON.stringify(tokenTypes));
  check("setting shapescript.servingSeverity",
    JSON.stringify(props["shapescript.servingSeverity"]?.enum) === '["error","warning","information","hint","off"]');
  check("main packaged", fs.existsSync(path.join(dir, pkg.main)), pkg.main);
  const packaged = [];
  (function walk(d) {
    for (const e of fs.readdirSync(d, { withFileTypes: true }))
      e.isDirectory() ? walk(path.join(d, e.name)) : packaged.push(path.relative(dir, path.join(d, e.name)));
  })(dir);
  check("bundled: no sources, no node_modules, a handful of files",
    !fs.existsSync(path.join(dir, "src")) && !fs.existsSync(path.join(dir, "node_modules")) && packaged.length <= 8,
    packaged.join(", "));

  // Load the packaged extension with a stand-in `vscode` module and no access to editors/vscode's
  // node_modules: every other require must resolve inside the .vsix.
  const stub = new Proxy(function () {}, { get: (t, p) => (p === "__esModule" ? false : stub), construct: () => ({}), apply: () => stub });
  const origResolve = Module._resolveFilename;
  const origLoad = Module._load;
  const outside = [];
  Module._load = function (request, parent, isMain) {
    if (request === "vscode") return stub;
    return origLoad.apply(this, arguments);
  };
  Module._resolveFilename = function (request, parent) {
    const resolved = origResolve.apply(this, arguments);
    if (path.isAbsolute(resolved) && !resolved.startsWith(unpacked)) outside.push(resolved);
    return resolved;
  };
  let loaded;
  try {
    loaded = require(path.join(dir, pkg.main));
  } catch (e) {
    check("out/extension.js loads from the .vsix", false, e.message);
  } finally {
    Module._resolveFilename = origResolve;
    Module._load = origLoad;
  }
  if (loaded) {
    check("out/extension.js loads from the .vsix", typeof loaded.activate === "function" && outside.length === 0,
      "resolved outside the .vsix: " + outside.join(", "));
    const lines = fs.readFileSync(path.join(root, "examples/causal_attention.ss"), "utf8").split("\n");
    const body = lines.findIndex((l) => l.includes("scaled_dot_product_attention"));
    check("export fn under the cursor", loaded.exportFunctionAt(lines, body) === "causal_attention" &&
      loaded.exportFunctionAt(lines, 0) === undefined);
    const running = loaded.statusText("running", "shapescript lsp"), stopped = loaded.statusText("stopped", "shapescript lsp");
    check("status bar: the server's state", running.text === "$(check) ShapeScript" && stopped.text === "$(error) ShapeScript" &&
      running.tooltip.includes("`shapescript lsp`") && stopped.tooltip.includes("stopped"), JSON.stringify([running, stopped]));
    check("diagnostic code under the cursor", loaded.codeAt("error[E1701]: an exported", 8) === "E1701" &&
      loaded.codeAt("no code here", 3) === undefined);
  }

  // TextMate grammar scopes.
  const tm = path.join(ext, "node_modules/.bin/vscode-tmgrammar-test");
  try {
    const outp = execFileSync("timeout", ["120", tm, "-c", "-g", path.join(ext, grammar.path),
      path.join(root, "tests/editors/grammar/*.test.ss")], { cwd: root, encoding: "utf8" });
    process.stdout.write(outp.split("\n").map((l) => (l ? "  " + l : l)).join("\n"));
    check("grammar scopes (vscode-tmgrammar-test)", true);
  } catch (e) {
    process.stdout.write(String(e.stdout || ""));
    check("grammar scopes (vscode-tmgrammar-test)", false, `exit ${e.status}`);
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(failures === 0 ? "vscode: all checks passed" : `vscode: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
