// `shapescript`: check, explain, export and lsp, over the core.
// Argument parsing is CLI11 (Debian's libcli11-dev): subcommands, help text and errors for free.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tokenizer_file.h"
#include "check/analysis.h"
#include "check_json.h"
#include "diagnostics/explain.h"
#include "export.h"
#include "import_weights.h"
#include "language_server.h"
#include "diagnostics/render.h"
#include "files.h"
#include "verify.h"

namespace {

constexpr int kExitClean = 0, kExitErrors = 1, kExitUsage = 2;

int run_check(const std::vector<std::string>& paths, const std::string& format, const std::string& color, const std::string& serving,
              std::optional<int64_t> tensor_parallel) {
  ss::RenderOptions options{ss::use_color(color, stdout)};
  std::vector<ss::Diagnostic> all;
  nlohmann::json json = nlohmann::json::array();
  bool unreadable = false;
  for (const std::string& path : paths) {
    std::string text, error;
    if (!ss::read_source(path, text, error)) {
      std::cerr << "error: can't read `" << path << "`: " << error << "\n";
      unreadable = true;
      continue;
    }
    ss::AnalyzeOptions analyze_options;
    ss::read_named_files(analyze_options);
    if (serving == "error") analyze_options.serving_severity = ss::Severity::error;
    if (serving == "warning") analyze_options.serving_severity = ss::Severity::warning;
    if (serving == "information") analyze_options.serving_severity = ss::Severity::information;
    analyze_options.tensor_parallel = tensor_parallel;
    auto analysis = ss::analyze(ss::SourceFile(path, std::move(text)), analyze_options);
    for (const ss::Diagnostic& d : analysis->diagnostics) {
      if (format == "json") json.push_back(ss::diagnostic_json(analysis->file, d));
      else std::cout << ss::render_diagnostic(analysis->file, d, options);
      all.push_back(d);
    }
  }
  if (format == "json") std::cout << ss::json_text(json, 2) << "\n";
  else std::cout << ss::render_explain_footer(all, options);
  if (unreadable) return kExitUsage;
  bool errors = std::any_of(all.begin(), all.end(), [](const ss::Diagnostic& d) { return d.severity == ss::Severity::error; });
  return errors ? kExitErrors : kExitClean;
}

int run_explain(const std::string& code_text) {
  if (code_text.empty()) {
    for (ss::DiagnosticCode code : ss::all_codes()) {
      const ss::DiagnosticInfo& i = ss::info(code);
      std::cout << i.code << "  " << i.summary << "\n";
    }
    return kExitClean;
  }
  auto code = ss::find_code(code_text);
  if (!code) {
    std::cerr << "error: `" << code_text << "` is not an error code; run `shapescript explain` to list them\n";
    return kExitUsage;
  }
  auto page = ss::explanation(*code);
  if (!page) {
    std::cerr << "error: " << ss::info(*code).code << " has no explanation yet\n";
    return kExitErrors;
  }
  std::cout << *page;
  return kExitClean;
}

int run_command(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  // The last resort: what a command didn't say itself (a file system error thrown from deep
  // inside) is still a message and exit status 2, never an abort.
  try {
    return run_command(argc, argv);
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "error: " << e.code().message() << (e.path1().empty() ? "" : ": `" + e.path1().string() + "`") << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
  }
  return kExitUsage;
}

namespace {

int run_command(int argc, char** argv) {
  // `shapescript lsp [options]` hands its arguments to the language server untouched.
  if (argc > 1 && std::string(argv[1]) == "lsp") return run_language_server(argc, argv);
  CLI::App app{"ShapeScript: tensor shapes in the types, checked as you type, exported to where models run"};
  app.set_version_flag("--version", std::string("shapescript ") + SHAPESCRIPT_VERSION);
  app.require_subcommand(1);

  std::vector<std::string> check_paths;
  std::string format = "human", color = "auto", serving = "off";
  CLI::App* check = app.add_subcommand("check", "check files and print their diagnostics");
  check->add_option("files", check_paths, "ShapeScript files (.ss)")->required();
  check->add_option("--format", format, "human or json")->check(CLI::IsMember({"human", "json"}));
  check->add_option("--color", color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));
  check->add_option("--serving", serving, "report what a serving engine can't run (E33xx) on a model's forward: error, warning, information or off")
      ->check(CLI::IsMember({"error", "warning", "information", "off"}));
  std::optional<int64_t> check_tp;
  check->add_option("--tp", check_tp, "check that K devices can split the model's heads and weights evenly (tensor parallelism, E3310)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));

  std::string code;
  CLI::App* explain = app.add_subcommand("explain", "explain an error code, such as E1701 (all codes when none is given)");
  explain->add_option("code", code, "the code");

  app.add_subcommand("lsp", "run the language server on stdin/stdout (see `shapescript lsp --help`)");
  ss::ExportOptions export_options;
  CLI::App* export_command = app.add_subcommand("export", "export an `export fn` as a torch.export program (.pt2), an AOTInductor package or an ONNX model, or a model's forward as a Hugging Face folder or a GGUF file");
  export_command->add_option("file", export_options.file, "the ShapeScript file")->required();
  export_command->add_option("-o,--output", export_options.output, "where to write it (default: FUNCTION.pt2)");
  export_command->add_option("--fn", export_options.function, "the function to export (default: the file's only export fn)");
  export_command->add_option("--python", export_options.python, "the Python with torch and einops (default: the active virtualenv's, then python3)");
  // One option per target of the table (targets.cpp): a path of its own, or a flag on -o's file.
  std::vector<std::pair<std::string, CLI::Option*>> path_options;
  for (const ss::ExportTarget& target : ss::export_targets()) {
    if (target.option.empty()) continue;
    std::string name(target.option);
    if (target.flag) {
      export_command->add_flag_callback(name, [&export_options, name] { export_options.targets[name] = "1"; }, std::string(target.help));
    } else {
      path_options.emplace_back(name, export_command->add_option_function<std::string>(
          name, [&export_options, name](const std::string& path) { export_options.targets[name] = path; }, std::string(target.help)));
    }
  }
  // A target of its own path is the only one asked for, and -o isn't its path.
  for (auto& [name, option] : path_options) {
    for (const ss::ExportTarget& other : ss::export_targets())
      if (!other.option.empty() && other.option != name) option->excludes(std::string(other.option));
    option->excludes("-o");
  }
  export_command->add_flag("--vllm", export_options.vllm, "with --hf: insist that vLLM can serve it")->needs("--hf");
  export_command->add_option("--tp", export_options.tensor_parallel, "with --hf: insist that K devices can split its heads and weights evenly (E3310)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))->needs("--hf");
  export_command->add_option("--tokenizer", export_options.tokenizer,
                              "with --hf or --gguf: the tokenizer to carry, a tokenizer.json or a Hugging Face folder (or, for --gguf, a GGUF file "
                              "whose vocabulary to embed); default: a --weights folder's, else none (--gguf: one token per id)");
  export_command->add_option("--weights", export_options.weights,
                                                    "a checkpoint for a model's weights (a state dict keyed by parameter name), or a Hugging Face folder to import, with --hf, --gguf or --fn FORWARD");
  export_command->add_flag("-v,--verbose", export_options.verbose, "show the export's full output and traceback");
  export_command->add_option("--color", export_options.color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));

  ss::RunOptions run_options;
  CLI::App* run_command = app.add_subcommand("run", "compile a file and run a function of it (`main`) in Python: training, with progress and Ctrl-C to save");
  run_command->add_option("file", run_options.file, "the ShapeScript file")->required();
  run_command->add_option("--fn", run_options.function, "the function to run, which takes no parameters (default: main)");
  run_command->add_option("--python", run_options.python, "the Python with torch (default: the active virtualenv's, then python3)");
  run_command->add_option("--resume", run_options.resume, "continue the run a checkpoint saved (after Ctrl-C)");
  run_command->add_option("--checkpoint", run_options.checkpoint, "where Ctrl-C saves the run (default: FILE's name with .ckpt.pt, here)");
  run_command->add_option("--log", run_options.log, "where log_scalar writes, as JSON lines (default: FILE's name with .log.jsonl, here)");
  CLI::Option* nproc = run_command->add_option("--nproc-per-node", run_options.nproc_per_node,
                                               "train on N processes on this machine, under torchrun (FSDP2, sharded checkpoints)")->check(CLI::Range(1, 4096));
  CLI::Option* nnodes = run_command->add_option("--nnodes", run_options.nnodes, "with --nproc-per-node: the number of machines (M, or MIN:MAX)")->needs(nproc);
  CLI::Option* endpoint = run_command->add_option("--rdzv-endpoint", run_options.rdzv_endpoint,
                                                  "with --nnodes: HOST:PORT where the machines meet (a port free on HOST, the same on every machine)")->needs(nproc);
  nnodes->needs(endpoint);
  run_command->add_option("--node-rank", run_options.node_rank, "with --nnodes: this machine's number, 0 to M-1 (default: given by the rendezvous)")
      ->needs(nnodes)->check(CLI::NonNegativeNumber);
  run_command->add_option("--rdzv-id", run_options.rdzv_id, "with --nnodes and no --node-rank: the run's name, the same on every machine (default: shapescript)")->needs(nnodes);
  run_command->add_flag("-v,--verbose", run_options.verbose, "show the Python traceback when the program fails");
  run_command->add_option("--color", run_options.color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));

  ss::VerifyOptions verify_options;
  CLI::App* verify_command = app.add_subcommand("verify", "run every artifact of a model's forward in its engine (.pt2, AOTInductor, ONNX, transformers, vLLM, llama.cpp) and compare");
  verify_command->add_option("file", verify_options.file, "the ShapeScript file")->required();
  verify_command->add_option("--fn", verify_options.function, "the model's forward (default: forward)");
  verify_command->add_option("--weights", verify_options.weights, "a checkpoint for the model's weights (default: the initializers)");
  verify_command->add_option("--artifacts", verify_options.artifacts, "keep the artifacts in DIR; those already there are checked as they are");
  verify_command->add_option("--python", verify_options.python, "the Python with torch (default: the active virtualenv's, then python3)");
  verify_command->add_option("--vllm-venv", verify_options.vllm_venv, "vLLM's venv (default: ~/.cache/shapescript/vllm-venv, made by scripts/engines.sh)");
  verify_command->add_flag("-v,--verbose", verify_options.verbose, "show the Python traceback when the runtime fails");
  verify_command->add_option("--color", verify_options.color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));

  ss::ImportOptions import_options;
  CLI::App* import_command = app.add_subcommand(
      "import-weights", "read a Hugging Face folder's weights (safetensors) as a model's params, the mapping found by checking logits against transformers");
  import_command->add_option("file", import_options.file, "the ShapeScript file")->required();
  import_command->add_option("folder", import_options.folder, "the Hugging Face folder (config.json and *.safetensors, sharded or not)")->required();
  import_command->add_option("-o,--output", import_options.output, "the checkpoint to write (a state dict keyed by param name), for --weights")->required();
  import_command->add_option("--fn", import_options.function, "the model's forward (default: forward)");
  import_command->add_option("--python", import_options.python, "the Python with torch, safetensors and transformers (default: the active virtualenv's, then python3)");
  import_command->add_flag("-v,--verbose", import_options.verbose, "show the runtime's full output and traceback");
  import_command->add_option("--color", import_options.color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? kExitClean : kExitUsage;
  }
  if (*check) return run_check(check_paths, format, color, serving, check_tp);
  if (*explain) return run_explain(code);
  if (*export_command) {
    if (!export_options.tokenizer.empty() && !export_options.target().tokenizer) {
      std::string carriers;  // the targets that carry one, as the table lists them
      for (const ss::ExportTarget& target : ss::export_targets())
        if (target.tokenizer) carriers += (carriers.empty() ? "" : " or ") + std::string(target.option);
      std::cerr << "--tokenizer requires " << carriers << "\nRun with --help for more information.\n";
      return kExitUsage;
    }
    return ss::run_export(export_options);
  }
  if (*import_command) return ss::run_import_weights(import_options);
  if (*verify_command) return ss::run_verify(verify_options, argv[0]);
  if (*run_command) {
    int status = ss::run_program(run_options);
    return status;
  }
  return kExitUsage;
}

}  // namespace
