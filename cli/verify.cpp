// `shapescript verify FILE`: exports every artifact of a model's forward (.pt2, AOTInductor package,
// --hf folder, --gguf file) by running this program's own `export`, then runs the runtime's
// verify.py, which runs each in its engine on the same inputs and prints one table.
#include "verify.h"
#include "tokenizer_file.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "emit/codegen.h"
#include "emit/codegen_hf.h"
#include "export.h"
#include "files.h"
#include "process.h"
#include "model/model_layout.h"
#include "diagnostics/render.h"

namespace ss {

const std::map<std::string, std::string_view>& embedded_runtime_files();  // generated from python/shapescript/runtime

namespace fs = std::filesystem;

namespace {

// Runs argv with stdout and stderr sent to files (empty: this process's own), in a process group
// that dies with this one; returns the exit status (-1: it couldn't start, 128 + signal: killed).
int spawn(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  auto where = [](const fs::path& path) {
    return path.empty() ? ChildOutput{ChildOutput::Kind::inherit, false, ""} : ChildOutput{ChildOutput::Kind::file, false, path.string()};
  };
  ProcessResult result = run_child(argv, where(out), where(err));
  if (!result.started) return -1;
  return result.status >= 0 ? result.status : 128 - result.status;
}

std::string read_text(const fs::path& path) {
  std::string text, ignored;
  read_source(path.string(), text, ignored);
  return text;
}

// The architecture `export --gguf` wrote, from its line "wrote FILE: llama.cpp's `NAME`, ...".
std::string gguf_architecture(const std::string& said) {
  const std::string marker = "llama.cpp's `";
  size_t start = said.find(marker);
  if (start == std::string::npos) return "llama";
  start += marker.size();
  size_t end = said.find('`', start);
  return end == std::string::npos ? "llama" : said.substr(start, end - start);
}

// What an export said when it failed: its `error:` lines, without the closing "exited with" one.
std::string export_error(const std::string& stderr_text) {
  std::istringstream lines(stderr_text);
  std::string line, said;
  while (std::getline(lines, line))
    if (line.starts_with("error: ") && line.find("` exited with ") == std::string::npos) {
      std::string what = line.substr(7);
      said += (said.empty() ? "" : "; ") + what;
    }
  if (said.empty()) {
    said = stderr_text.substr(0, stderr_text.find('\n'));
    if (said.empty()) said = "the export failed";
  }
  return said;
}

std::string self_path(const char* argv0) {
  std::error_code ignored;
  fs::path self = fs::read_symlink("/proc/self/exe", ignored);
  return self.empty() ? std::string(argv0) : self.string();
}

std::string home_cache(const std::string& name) {
  const char* home = std::getenv("HOME");
  return home ? (fs::path(home) / ".cache" / "shapescript" / name).string() : "";
}

// llama.cpp as scripts/llama_cpp.sh builds it: $SHAPESCRIPT_LLAMA_CPP, else the newest
// ~/.cache/shapescript/llama.cpp-VERSION with llama-server and the bindings.
std::string find_llama_cpp() {
  std::vector<fs::path> candidates;
  if (const char* given = std::getenv("SHAPESCRIPT_LLAMA_CPP"); given && *given) candidates.push_back(given);
  std::error_code ignored;
  fs::path cache = home_cache("");
  std::vector<fs::path> found;
  if (!cache.empty() && fs::is_directory(cache, ignored))
    for (const auto& entry : fs::directory_iterator(cache, ignored))
      if (entry.path().filename().string().starts_with("llama.cpp-") && !entry.path().string().ends_with(".partial"))
        found.push_back(entry.path());
  std::sort(found.rbegin(), found.rend());
  candidates.insert(candidates.end(), found.begin(), found.end());
  for (const fs::path& c : candidates)
    if (fs::exists(c / "lib" / "libllama.so", ignored) && fs::is_directory(c / "python" / "llama_cpp", ignored)) return c.string();
  return "";
}

// vLLM's pooling runner serves an encoder's folder from token ids (docs/cli.md): not pixels.
constexpr const char* kVllmPixels = "vLLM's pooling runner takes token ids: it serves no encoder of pixels";

}  // namespace

int run_verify(const VerifyOptions& options, const char* argv0) {
  std::string text, unreadable;
  if (!read_source(options.file, text, unreadable)) {
    std::cerr << "error: can't read `" << options.file << "`: " << unreadable << "\n";
    return 2;
  }
  AnalyzeOptions analyze_options;
  read_named_files(analyze_options);
  analyze_options.serving_severity = Severity::information;  // what vLLM would refuse, to say why it isn't run
  analyze_options.serving_function = options.function;
  auto analysis = analyze(SourceFile(options.file, std::move(text)), analyze_options);
  RenderOptions render{use_color(options.color, stderr)};
  if (analysis->has_errors()) {
    for (const Diagnostic& d : analysis->diagnostics)
      if (d.severity == Severity::error) std::cerr << render_diagnostic(analysis->file, d, render);
    return 1;
  }
  ModelLayout layout = describe_model(*analysis, options.function);
  // An encoder (BERT, ViT) has a .pt2 and an AOTInductor package, and transformers' own model of the
  // folder its weights came from; a language model every artifact.
  const bool encoder = layout.is_encoder();
  if (std::string why_not = why_not_described_model(*analysis, layout); !why_not.empty()) {
    std::cerr << "error: `shapescript verify` compares the engines of a language model's forward: " << why_not << "\n";
    return 1;
  }
  // The model's facts come from its description; the Hugging Face generator is one of the exports
  // checked, and a model it can't write shows as that row's failure, not as no table at all.
  LanguageModelFacts model = language_model_facts(*analysis, layout);
  if (!model.error.empty()) {
    std::cerr << "error: `shapescript verify` compares the engines of a language model's forward, and `" << options.function
              << "` isn't one: " << model.error << "\n";
    return 1;
  }
  HfModel folder = encoder ? HfModel{} : generate_hf(*analysis, layout);

  // Where the artifacts go: --artifacts DIR (those already there are checked as they are), else a
  // temporary folder.
  // Ctrl-C or SIGTERM stops the export or engine running, and the temporary folder is removed.
  InterruptScope interrupts;
  fs::path artifacts;
  bool temporary = options.artifacts.empty();
  std::optional<TemporaryDirectory> scratch;
  if (temporary) {
    scratch.emplace("shapescript-verify");
    if (scratch->path().empty()) {
      std::cerr << "error: " << scratch->error() << "\n";
      return 2;
    }
    artifacts = scratch->path();
  } else {
    std::error_code made;
    artifacts = fs::absolute(options.artifacts, made);
    if (!made) fs::create_directories(artifacts, made);
    if (made) {
      std::cerr << "error: can't create `" << options.artifacts << "`: " << made.message() << "\n";
      return 2;
    }
  }

  std::error_code ignored_error;
  std::string self = self_path(argv0);
  // An encoder's --weights HF_DIR is imported once (import-weights) and the folder kept as the
  // transformers row's model; the exports read the checkpoint.
  std::string weights = options.weights, reference_folder;
  if (encoder && !weights.empty() && fs::is_directory(weights, ignored_error)) {
    reference_folder = fs::absolute(weights, ignored_error).string();
    weights = (artifacts / "imported.pt").string();
    if (!fs::exists(weights, ignored_error)) {
      std::cerr << "verify: importing " << options.weights << "\n";
      std::vector<std::string> argv = {self, "import-weights", fs::absolute(options.file, ignored_error).string(), reference_folder, "-o", weights,
                                       "--fn", options.function, "--color", "never"};
      if (!options.python.empty()) argv.insert(argv.end(), {"--python", options.python});
      fs::path err = artifacts / "import.err";
      if (spawn(argv, artifacts / "import.out", err) != 0) {
        std::cerr << "error: importing `" << options.weights << "` failed: " << export_error(read_text(err)) << "\n";
        return 1;
      }
    }
  }
  std::vector<std::string> common;
  if (!weights.empty()) common = {"--weights", fs::absolute(weights, ignored_error).string()};
  if (!options.python.empty()) common.insert(common.end(), {"--python", options.python});
  struct Artifact {
    std::string key, what, path;
    std::vector<std::string> args;
    bool folder;
  };
  // Every target of export's table that verify has an engine for (targets.cpp: those with an
  // artifact name), asked for as a user would: `export FILE --fn F [OPTION] PATH`.
  std::vector<Artifact> wanted;
  for (const ExportTarget& target : export_targets()) {
    if (target.artifact.empty()) continue;
    // An encoder's transformers row reads the folder its weights came from: --hf writes language models.
    if (encoder && !target.encoders) continue;
    std::vector<std::string> args = {"--fn", options.function};
    if (!target.option.empty()) args.emplace_back(target.option);
    if (target.option.empty() || target.flag) args.emplace_back("-o");
    wanted.push_back({std::string(target.key), std::string(target.what), (artifacts / target.artifact).string(), args, target.folder});
  }
  std::vector<OutputPath> outputs;
  for (const Artifact& a : wanted) outputs.push_back({a.path, a.folder});
  if (!refuse_overwriting_inputs({options.file, options.weights}, outputs)) return 2;
  nlohmann::json exported = nlohmann::json::object();
  for (const Artifact& a : wanted) {
    if (int signal = interrupted()) return 128 + signal;
    nlohmann::json entry = {{"path", a.path}, {"error", nullptr}};
    std::error_code ignored;
    fs::path out = artifacts / (a.key + ".export.out"), err = artifacts / (a.key + ".export.err");
    if (fs::exists(a.path, ignored)) {
      std::cerr << "verify: using " << a.what.substr(0, a.what.find(" (")) << " already in " << a.path << "\n";
      if (a.key == "gguf") entry["architecture"] = gguf_architecture(read_text(out));
    } else {
      std::cerr << "verify: exporting " << a.what << "\n";
      std::vector<std::string> argv = {self, "export", fs::absolute(options.file, ignored).string(), "--color", "never"};
      argv.insert(argv.end(), a.args.begin(), a.args.end());
      argv.push_back(a.path);
      argv.insert(argv.end(), common.begin(), common.end());
      int status = spawn(argv, out, err);
      std::string said = export_error(read_text(err));
      if (status != 0) {
        // A model that is none of llama.cpp's architectures has no GGUF file to check.
        if (a.key == "gguf" && said.find("isn't an architecture llama.cpp has") != std::string::npos) entry["skip"] = said;
        // A Python without a package the target needs (run_export.py's exit status 3, said so) has no artifact to check.
        else if (said.find(" has no module named '") != std::string::npos) entry["skip"] = said;
        else entry["error"] = "export failed: " + said;
      } else if (a.key == "gguf") {
        entry["architecture"] = gguf_architecture(read_text(out));
      }
    }
    exported[a.key] = entry;
  }

  // vLLM: its own venv (scripts/engines.sh), and only for a model whose attention its CPU backend has.
  nlohmann::json vllm = {{"python", nullptr}, {"skip", nullptr}};
  std::string venv = options.vllm_venv.empty() ? home_cache("vllm-venv") : options.vllm_venv;
  if (const char* given = std::getenv("SHAPESCRIPT_VLLM_VENV"); options.vllm_venv.empty() && given && *given) venv = given;
  std::error_code ignored;
  std::string why_not;
  const std::string refusal = "a serving engine can't run this: ";
  // E3309 only notes that vLLM runs the experts as a loop, not its fused kernel: it still serves them.
  for (const Diagnostic& d : analysis->diagnostics)
    if (why_not.empty() && info(d.code).code.starts_with("E33") && info(d.code).code != std::string_view("E3309")) {
      why_not = d.message.starts_with(refusal) ? "vLLM can't serve it: " + d.message.substr(refusal.size()) : d.message;
      why_not += " (" + std::string(info(d.code).code) + ")";
    }
  if (why_not.empty() && folder.error.empty() && !folder.not_servable.empty()) why_not = "vLLM can't serve it: " + folder.not_servable;
  // An encoder's folder is the one its weights came from, served by the pooling runner; the
  // serving rules are a language model's.
  if (encoder) why_not = layout.inputs.front().role == ModelInput::Role::ids ? "" : kVllmPixels;
  if (!why_not.empty()) vllm["skip"] = why_not;
  else if (!fs::exists(fs::path(venv) / "bin" / "python", ignored)) vllm["skip"] = "no vLLM venv, run scripts/engines.sh";
  else vllm["python"] = (fs::path(venv) / "bin" / "python").string();
  std::string llama_cpp = find_llama_cpp();

  nlohmann::json spec = language_model_spec(*analysis, layout, model, options.function);
  spec.update({{"weights", weights.empty() ? nlohmann::json(nullptr) : nlohmann::json(fs::absolute(weights, ignored).string())},
               {"weights_name", weights == options.weights ? options.weights : weights},
               {"reference_folder", reference_folder.empty() ? nlohmann::json(nullptr) : nlohmann::json(reference_folder)},
               {"artifacts", exported},
               {"vllm", vllm},
               {"llama_cpp", llama_cpp.empty() ? nlohmann::json(nullptr) : nlohmann::json(llama_cpp)}});
  fs::path runtime = artifacts / "runtime";
  fs::create_directories(runtime, ignored);
  std::string written;
  bool whole = true;
  for (auto& [name, contents] : embedded_runtime_files()) whole = whole && write_whole_file(runtime / name, contents, written);
  whole = whole && write_whole_file(runtime / "spec.json", json_text(spec, 2), written);
  if (!whole) {
    std::cerr << "error: can't write the runtime into `" << runtime.string() << "`: " << written << "\n";
    return 2;
  }
  if (int signal = interrupted()) return 128 + signal;
  std::string python = choose_python(options.python);
  std::vector<std::string> argv = {python, "-I", (runtime / "verify.py").string(), (runtime / "spec.json").string()};
  if (options.verbose) argv.push_back("--verbose");
  std::cerr << "verify: running the engines with " << python << "\n";
  int status = spawn(argv, "", "");  // the table on stdout, progress on stderr, as they come
  if (int signal = interrupted()) return 128 + signal;
  if (status < 0) {
    std::cerr << "error: can't run `" << python << "`\n";
    return 1;
  }
  return status == 0 ? 0 : 1;
}

}  // namespace ss
