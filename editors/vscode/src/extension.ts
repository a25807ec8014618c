// ShapeScript for VS Code: starts `shapescript lsp` with vscode-languageclient, shows the server's
// state in the status bar (a click shows its output; `shapescript.trace.server` traces messages
// there), and adds two commands, `shapescript.exportFunction` and `shapescript.explainCode`.
import * as cp from "child_process";
import * as path from "path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;
let status: vscode.StatusBarItem | undefined;

// The status bar's text and tooltip for a server state.
export function statusText(state: "starting" | "running" | "stopped", command: string): { text: string; tooltip: string } {
  const icon = state === "running" ? "$(check)" : state === "starting" ? "$(sync~spin)" : "$(error)";
  const says = state === "running" ? "running" : state === "starting" ? "starting" : "stopped (see its output)";
  return { text: `${icon} ShapeScript`, tooltip: `ShapeScript language server \`${command}\`: ${says}. Click for its output.` };
}

function showStatus(state: "starting" | "running" | "stopped", command: string): void {
  if (!status) return;
  const { text, tooltip } = statusText(state, command);
  status.text = text;
  status.tooltip = tooltip;
  status.show();
}

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("shapescript");
}

function executable(): string {
  return config().get<string>("server.path") || "shapescript";
}

function servingSeverity(): string {
  return config().get<string>("servingSeverity") || "information";
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const command = executable();
  const args = config().get<string[]>("server.args") ?? ["lsp"];
  const serverOptions: ServerOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args: [...args, "--log-level", "debug"], transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "shapescript" },
      { scheme: "untitled", language: "shapescript" },
    ],
    initializationOptions: { shapescript: { servingSeverity: servingSeverity() } },
    synchronize: { configurationSection: "shapescript" },
    outputChannel: output,
  };
  // The id "shapescript" makes the client read `shapescript.trace.server`.
  client = new LanguageClient("shapescript", "ShapeScript", serverOptions, clientOptions);
  const shown = `${command} ${args.join(" ")}`.trim();
  client.onDidChangeState((e) =>
    showStatus(e.newState === State.Running ? "running" : e.newState === State.Starting ? "starting" : "stopped", shown)
  );
  showStatus("starting", shown);
  try {
    await client.start();
  } catch (err) {
    showStatus("stopped", shown);
    vscode.window.showErrorMessage(
      `ShapeScript: could not start the language server \`${command} ${args.join(" ")}\` ` +
        `(set shapescript.server.path): ${err}`
    );
  }
}

// The name of the `export fn` whose body holds the cursor: the nearest `export fn NAME` at or
// above the cursor line, at column 0 (items are not nested).
export function exportFunctionAt(lines: string[], line: number): string | undefined {
  for (let i = Math.min(line, lines.length - 1); i >= 0; i--) {
    const text = lines[i];
    const m = /^export\s+fn\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(text);
    if (m) return m[1];
    // Another top-level item (not a comment, not blank, not indented) ends the search,
    // unless the cursor is on it.
    if (i !== line && /^[A-Za-z]/.test(text)) return undefined;
  }
  return undefined;
}

// A diagnostic code (E1701) at the cursor: in the text, else from a diagnostic that covers it.
export function codeAt(lineText: string, character: number): string | undefined {
  const re = /\b[EW]\d{4}\b/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(lineText)) !== null) {
    if (character >= m.index && character <= m.index + m[0].length) return m[0];
  }
  return undefined;
}

function quote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

async function exportFunction(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== "shapescript") {
    vscode.window.showWarningMessage("ShapeScript: open a .ss file first.");
    return;
  }
  const doc = editor.document;
  if (doc.isDirty) await doc.save();
  const lines = doc.getText().split(/\r?\n/);
  const name = exportFunctionAt(lines, editor.selection.active.line);
  if (!name) {
    vscode.window.showWarningMessage("ShapeScript: the cursor is not in an `export fn`.");
    return;
  }
  const args = ["export", doc.uri.fsPath, "--fn", name];
  const python = config().get<string>("python");
  if (python) args.push("--python", python);
  const terminal = vscode.window.createTerminal({
    name: `ShapeScript export ${name}`,
    cwd: path.dirname(doc.uri.fsPath),
  });
  terminal.show();
  terminal.sendText([executable(), ...args].map(quote).join(" "));
}

async function explainCode(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  let code: string | undefined;
  if (editor) {
    const pos = editor.selection.active;
    code = codeAt(editor.document.lineAt(pos.line).text, pos.character);
    if (!code) {
      const diags = vscode.languages
        .getDiagnostics(editor.document.uri)
        .filter((d) => d.range.contains(pos) && d.code !== undefined);
      const c = diags.length > 0 ? diags[0].code : undefined;
      code = typeof c === "object" && c !== null ? String(c.value) : c !== undefined ? String(c) : undefined;
    }
  }
  if (!code) {
    code = await vscode.window.showInputBox({ prompt: "Diagnostic code to explain", placeHolder: "E1701" });
  }
  if (!code) return;
  cp.execFile(executable(), ["explain", code], { timeout: 10000 }, async (err, stdout, stderr) => {
    if (err && !stdout) {
      vscode.window.showErrorMessage(`ShapeScript: \`shapescript explain ${code}\` failed: ${stderr || err.message}`);
      return;
    }
    const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: stdout });
    try {
      await vscode.commands.executeCommand("markdown.showPreview", doc.uri);
    } catch {
      output?.clear();
      output?.append(stdout);
      output?.show(true);
    }
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("ShapeScript");
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
  status.name = "ShapeScript";
  status.command = "shapescript.showOutput";
  context.subscriptions.push(
    output,
    status,
    vscode.commands.registerCommand("shapescript.showOutput", () => output?.show(true)),
    vscode.commands.registerCommand("shapescript.exportFunction", exportFunction),
    vscode.commands.registerCommand("shapescript.explainCode", explainCode),
    vscode.commands.registerCommand("shapescript.restartServer", async () => {
      if (client) await client.stop();
      await startClient(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration("shapescript.server")) {
        if (client) await client.stop();
        await startClient(context);
      }
    })
  );
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  if (client) await client.stop();
}
