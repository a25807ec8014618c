#include "export.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "emit/codegen_hf.h"
#include "check/model_layout.h"
#include "check/reach.h"
#include "diagnostics/render.h"

extern char** environ;

namespace ss {

const std::map<std::string, std::string_view>& embedded_runtime_files();  // generated from python/shapescript/runtime

namespace {

std::string dtype_of(const ElementType& element) {
  switch (element.kind) {
    case ElementKind::int_:
    case ElementKind::index: return "int64";
    case ElementKind::bool_: return "bool";
    default: return "float32";
  }
}

// A temporary directory removed when this goes out of scope.
struct TemporaryDirectory {
  std::filesystem::path path;
  TemporaryDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "shapescript-XXXXXX").string();
    if (mkdtemp(pattern.data())) path = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
};

// Runs argv, collecting stdout and stderr, each echoed to stderr as it arrives when asked to.
// `held_sigint`: the child starts with SIGINT's default action, whatever this process has set (it
// ignores SIGINT while a live child handles Ctrl-C), and with SIGINT blocked, so that a Ctrl-C while
// Python starts waits until the runtime unblocks it, ready to stop cleanly (train.py's main).
ProcessResult run_process(const std::vector<std::string>& argv, bool echo_stdout, bool echo_stderr, bool held_sigint) {
  ProcessResult result;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    result.start_error = std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (held_sigint) {
    sigset_t sigint;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    posix_spawnattr_setsigdefault(&attributes, &sigint);
    posix_spawnattr_setsigmask(&attributes, &sigint);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int spawn_error = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawn_error != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    result.start_error = std::strerror(spawn_error);
    return result;
  }
  result.started = true;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_count = 2;
  char buffer[4096];
  while (open_count > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
        continue;
      }
      (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
      if (i == 0 ? echo_stdout : echo_stderr) std::cerr.write(buffer, n).flush();
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return result;
}

// Rust's ExitStatus wording, which the book prints: "exit status: 1", "signal: 9 (SIGKILL)".
std::string describe_status(int status) {
  if (status >= 0) return "exit status: " + std::to_string(status);
  const char* name = sigabbrev_np(-status);  // "KILL": Rust says SIGKILL
  return "signal: " + std::to_string(-status) + " (" + (name ? "SIG" + std::string(name) : std::string("?")) + ")";
}

}  // namespace

// Runs one of the embedded runtime's scripts on `spec` with the chosen Python, in a temporary
// folder. With `reply`, the script writes its answer (JSON) to the file the spec's `reply` names:
// its stdout is the user program's as much as the runtime's, so nothing is parsed from it. On
// failure it prints the runtime's `error:` lines (all its output with --verbose) and `failed` +
// "`python` exited with ...", the book's closing line, and returns nothing.
std::optional<RuntimeResult> run_runtime(const std::string& script, nlohmann::json spec, const ExportOptions& options,
                                         const std::string& failed, bool reply, bool live, int* exit_status) {
  TemporaryDirectory work;
  if (work.path.empty()) {
    std::cerr << failed << "can't create a temporary folder: " << std::strerror(errno) << "\n";
    return std::nullopt;
  }
  for (auto& [name, contents] : embedded_runtime_files()) std::ofstream(work.path / name) << contents;
  const std::filesystem::path reply_path = work.path / "reply.json";
  if (reply) spec["reply"] = reply_path.string();
  std::ofstream(work.path / "spec.json") << spec.dump(2);
  std::string python = choose_python(options.python);
  std::vector<std::string> argv = {python, "-I", (work.path / script).string(), (work.path / "spec.json").string()};
  if (options.verbose) argv.push_back("--verbose");
  // Live: the program's progress as it goes, and Ctrl-C is the child's to handle (it saves first);
  // the terminal sends it to the whole process group, so this process only waits. The child gets
  // SIGINT held for it from its first instruction (run_process), unless SIGINT was already ignored
  // here (a background job's), which it then inherits.
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  if (live) sigaction(SIGINT, &ignore, &previous);
  // A live program's stdout is printed when it ends; with --verbose an export shows a program's prints too.
  ProcessResult process = run_process(argv, options.verbose && !live, options.verbose || live, live && previous.sa_handler != SIG_IGN);
  if (live) sigaction(SIGINT, &previous, nullptr);
  if (exit_status) *exit_status = process.status;
  if (!process.started) {
    std::cerr << failed << "can't run `" << python << "`: " << process.start_error << "\n";
    return std::nullopt;
  }
  if (live && (process.status == 130 || process.status == -SIGINT)) {
    // Interrupted: the runtime said what it saved, unless SIGINT ended it before it could say anything.
    if (process.status == -SIGINT) std::cerr << "interrupted before `" << spec.value("function", "main") << "` started: nothing was saved\n";
    if (exit_status) *exit_status = 130;
    return std::nullopt;
  }
  if (process.status != 0) {
    if (!options.verbose && !live) {
      // The runtime's own `error:` lines say why; the traceback only with --verbose.
      std::istringstream lines(process.err);
      std::string line;
      bool any = false;
      while (std::getline(lines, line))
        if (line.starts_with("error:")) {
          std::cerr << line << "\n";
          any = true;
        }
      if (!any) std::cerr << process.err;
    }
    std::cerr << failed << "`" << python << "` exited with " << describe_status(process.status) << "\n";
    return std::nullopt;
  }
  RuntimeResult result{std::move(process), nullptr};
  if (reply) {
    std::ifstream in(reply_path);
    if (in) result.reply = nlohmann::json::parse(in, nullptr, false);
    if (!result.reply.is_object()) {  // not there, or not whole
      std::cerr << failed << "`" << python << "` exited with " << describe_status(0) << " without writing its reply\n";
      return std::nullopt;
    }
  }
  return result;
}

// Reads and checks `file`. On failure it prints why (the file's errors, or that it can't be read)
// and sets `status` (2: unreadable, 1: errors); the book prints nothing after the errors.
std::unique_ptr<Analysis> checked_file(const std::string& file, const AnalyzeOptions& options, const std::string& color, int& status) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::cerr << "error: can't read `" << file << "`: " << std::strerror(errno) << "\n";
    status = 2;
    return nullptr;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto analysis = analyze(SourceFile(file, text.str()), options);
  RenderOptions render{use_color(color, stderr)};
  if (analysis->has_errors()) {
    for (const Diagnostic& d : analysis->diagnostics)
      if (d.severity == Severity::error) std::cerr << render_diagnostic(analysis->file, d, render);
    status = 1;
    return nullptr;
  }
  return analysis;
}


bool use_color(const std::string& mode, FILE* stream) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* term = std::getenv("TERM");
  return isatty(fileno(stream)) && !std::getenv("NO_COLOR") && !(term && std::string(term) == "dumb");
}

nlohmann::json export_spec(const Analysis& analysis, const ExportSignature& signature, const GeneratedModule& module,
                           const std::string& output, const std::string& format, const std::string& weights) {
  nlohmann::json dims = nlohmann::json::object();
  for (const std::string& dim : signature.dims) dims[python_name(dim)] = {{"min", 1}, {"max", 65536}};
  nlohmann::json inputs = nlohmann::json::array();
  for (const ExportInput& input : signature.inputs) {
    nlohmann::json shape = nlohmann::json::array();
    for (const ExportAxis& axis : input.axes) {
      switch (axis.kind) {
        case ExportAxis::Kind::fixed: shape.push_back({{"fixed", axis.fixed}}); break;
        case ExportAxis::Kind::dim: shape.push_back({{"dim", python_name(axis.dim)}}); break;
        case ExportAxis::Kind::derived:
          shape.push_back({{"dim", python_name(axis.dim)}, {"scale", axis.scale}, {"offset", axis.offset}});
          if (!dims.contains(python_name(axis.dim))) dims[python_name(axis.dim)] = {{"min", 1}, {"max", 65536}};
          break;
        case ExportAxis::Kind::product: {
          nlohmann::json factors = nlohmann::json::array();
          for (const std::string& f : axis.factors) factors.push_back(python_name(f));
          shape.push_back({{"product", factors}, {"scale", axis.scale}});
          break;
        }
        case ExportAxis::Kind::data_dependent: shape.push_back({{"dim", "data_" + python_name(axis.dim)}}); break;
      }
    }
    nlohmann::json index_bound = nullptr;
    if (input.element.kind == ElementKind::index)
      if (auto bound = input.element.bound.constant_value()) index_bound = *bound;
    inputs.push_back({{"name", python_name(input.name)}, {"dtype", dtype_of(input.element)}, {"index_bound", index_bound}, {"shape", shape}});
  }
  for (const ExportInput& input : signature.inputs)
    for (const ExportAxis& axis : input.axes)
      if (axis.kind == ExportAxis::Kind::data_dependent) dims["data_" + python_name(axis.dim)] = {{"min", 1}, {"max", 65536}};
  nlohmann::json spec = {{"version", 1},       {"source", analysis.file.path()},
                         {"function", python_name(signature.function)},
                         {"module", module.python}, {"format", format},
                         {"output", output},   {"dims", dims},
                         {"inputs", inputs}};
  if (!signature.model.empty())
    spec["model"] = {{"class", python_name(signature.model)},
                     {"weights", weights.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::filesystem::absolute(weights).string())},
                     {"weights_name", weights}};
  return spec;
}

std::string choose_python(const std::string& requested) {
  if (!requested.empty()) return requested;
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) {
    std::filesystem::path python = std::filesystem::path(venv) / "bin" / "python";
    if (std::filesystem::exists(python)) return python.string();
  }
  return "python3";
}

int run_hf_export(const ExportOptions& options, const Analysis& analysis) {
  RenderOptions render{use_color(options.color, stderr)};
  // What vLLM would refuse (the serving rules): with --vllm these were errors and export ended; here they are notes.
  std::vector<const Diagnostic*> serving;
  for (const Diagnostic& d : analysis.diagnostics)
    if (info(d.code).category == DiagnosticCategory::serving) serving.push_back(&d);
  std::string function = options.function.empty() ? "forward" : options.function;
  HfModel model = generate_hf(analysis, find_model_layout(analysis, function));
  if (!model.error.empty()) {
    std::cerr << "error: can't write `" << function << "` as a Hugging Face model: " << model.error << "\n";
    return 1;
  }
  const std::string& why_not = model.not_servable;
  if (options.vllm && !why_not.empty()) {
    std::cerr << "error: vLLM can't serve `" << function << "`: " << why_not << "\n";
    return 1;
  }
  std::filesystem::path output = std::filesystem::absolute(options.hf);
  std::error_code made;
  std::filesystem::create_directories(output, made);
  if (made || !std::filesystem::is_directory(output)) {
    std::cerr << "error: can't create the folder `" << options.hf << "`" << (made ? ": " + made.message() : "") << "\n";
    return 2;
  }
  nlohmann::json config = nlohmann::json::object();
  for (auto& [key, value] : model.config) {
    try {
      config[key] = nlohmann::json::parse(value);
    } catch (const nlohmann::json::parse_error& e) {  // the generator's bug, said rather than crashed on
      std::cerr << "error: can't write config.json: `" << key << "` is not valid JSON (" << e.what() << "): " << value << "\n";
      return 1;
    }
  }
  nlohmann::json tensors = nlohmann::json::array();
  for (const HfTensor& t : model.tensors) tensors.push_back({{"source", t.source}, {"layer", t.layer}, {"key", t.key}});
  nlohmann::json parameters = nlohmann::json::array();
  for (const HfParameter& p : model.parameters) parameters.push_back({{"name", p.name}, {"shape", p.shape}});
  GeneratedModule reference = generate_python(analysis);
  nlohmann::json spec = {{"version", 1},
                         {"source", analysis.file.path()},
                         {"output", output.string()},
                         {"config", config},
                         {"configuration", model.configuration},
                         {"modeling", model.modeling},
                         {"tensors", tensors},
                         {"parameters", parameters},
                         {"weights", options.weights.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::filesystem::absolute(options.weights).string())},
                         {"weights_name", options.weights},
                         {"reference", reference.python},
                         {"model", model.model_name},
                         {"function", python_name(function)},
                         {"causal_lm", model.causal_lm},
                         {"takes_positions", model.takes_positions},
                         {"max_positions", model.max_positions},
                         {"vocab", model.vocab}};
  auto result = run_runtime("hf.py", spec, options, "error: writing `" + options.hf + "` failed: ", false);
  if (!result) return 1;
  for (const Diagnostic* d : serving) std::cerr << render_diagnostic(analysis.file, *d, render);
  std::cout << "wrote " << options.hf << ": ";
  if (model.causal_lm) {
    if (model.attention_layers) std::cout << model.attention_layers << " attention layers of " << model.heads << " heads";
    else std::cout << model.layers << " layers";
    std::cout << ", vocabulary of " << model.vocab;
  } else {
    std::cout << "`" << function << "` as the model's forward";
  }
  if (why_not.empty()) std::cout << "; vLLM can serve it\n";
  else std::cout << "; vLLM can't serve it: " << why_not << "\n";
  return 0;
}

nlohmann::json language_model_spec(const Analysis& analysis, const ModelLayout& layout, const HfModel& model, const std::string& function) {
  auto stacked = [&](const std::string& name) { return std::find(layout.stacked.begin(), layout.stacked.end(), name) != layout.stacked.end(); };
  nlohmann::json parameters = nlohmann::json::array();
  for (const HfParameter& p : model.parameters) parameters.push_back({{"name", p.name}, {"shape", p.shape}, {"stacked", stacked(p.name)}});
  nlohmann::json builtins = nlohmann::json::array();
  for (const BuiltinCall& call : builtin_calls_reached(analysis, function)) builtins.push_back({{"name", call.name}, {"keywords", call.keywords}});
  return {{"version", 1},
          {"source", analysis.file.path()},
          {"reference", generate_python(analysis).python},
          {"model", model.model_name},
          {"function", python_name(function)},
          {"parameters", parameters},
          {"layers", model.layers},
          {"embedding", layout.embedding},
          {"output_layer", layout.output_layer},
          {"embedding_tables", layout.embedding_tables},
          {"takes_positions", model.takes_positions},
          {"max_positions", model.max_positions},
          {"vocab", model.vocab},
          {"sliding_window", model.sliding_window},
          {"builtins", builtins}};
}

// --gguf: llama.cpp runs its own implementation of an architecture, so nothing is compiled; the
// runtime (gguf_export.py) finds the architecture that computes what the model does and writes it.
int run_gguf_export(const ExportOptions& options, const Analysis& analysis) {
  std::string function = options.function.empty() ? "forward" : options.function;
  const std::string failed = "error: exporting `" + function + "` failed: ";
  // The language model's layout (embedding, blocks, output layer) is the one --hf reads, and the
  // folder's translation is what says whether one can be taken apart into llama.cpp's tensors.
  ModelLayout layout = find_model_layout(analysis, function);
  HfModel model = generate_hf(analysis, layout);
  if (!model.error.empty()) {
    std::cerr << "error: can't write `" << function << "` as a GGUF model: " << model.error << "\n";
    return 1;
  }
  if (!model.causal_lm) {
    std::cerr << "error: can't write `" << function << "` as a GGUF model: llama.cpp runs language models, and `" << function
              << "` isn't one (it must take a model and token ids, embed them and end with an output layer)\n";
    return 1;
  }
  std::filesystem::path output = std::filesystem::absolute(options.gguf);
  if (!std::filesystem::is_directory(output.parent_path())) {
    std::cerr << "error: can't write `" << options.gguf << "`: the folder `" << output.parent_path().string() << "` does not exist\n";
    return 2;
  }
  auto absolute_or_null = [](const std::string& path) {
    return path.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::filesystem::absolute(path).string());
  };
  nlohmann::json spec = language_model_spec(analysis, layout, model, function);
  spec.update({{"output", output.string()},
               {"weights", absolute_or_null(options.weights)},
               {"weights_name", options.weights},
               {"tokenizer", absolute_or_null(options.tokenizer)},
               {"tokenizer_name", options.tokenizer}});
  auto result = run_runtime("gguf_export.py", spec, options, failed, true);
  if (!result) return 1;
  try {
    const nlohmann::json& reply = result->reply;
    std::cout << "wrote " << options.gguf << ": llama.cpp's `" << reply.at("architecture").get<std::string>() << "`, "
              << reply.at("blocks").get<int64_t>() << " blocks of " << reply.at("heads").get<int64_t>() << " heads, vocabulary of "
              << reply.at("vocab").get<int64_t>() << ", " << reply.at("tensors").get<int64_t>() << " tensors, "
              << reply.at("size").get<std::string>() << "\n";
  } catch (const std::exception& e) {
    std::cerr << failed << "the runtime's reply isn't what was expected: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

int run_program(const RunOptions& run) {
  int status = 0;
  auto analysis = checked_file(run.file, {}, run.color, status);
  if (!analysis) return status;
  const Item* function = analysis->find_item(run.function);
  if (!function || function->kind != Item::Kind::function) {
    std::cerr << "error: `" << run.file << "` has no `fn " << run.function << "()` to run\n";
    return 2;
  }
  if (!function->parameters.empty()) {
    std::cerr << "error: `" << run.function << "` takes parameters; `shapescript run` runs a function that takes none, such as `fn main():`\n";
    return 2;
  }
  std::filesystem::path source = std::filesystem::absolute(run.file);
  std::string stem = source.stem().string();
  std::string checkpoint = run.checkpoint.empty() ? stem + ".ckpt.pt" : run.checkpoint;
  std::string log = run.log.empty() ? stem + ".log.jsonl" : run.log;
  nlohmann::json spec = {{"version", 1},
                         {"module", generate_python(*analysis).python},
                         {"function", python_name(run.function)},
                         {"source", run.file},
                         {"source_dir", source.parent_path().string()},
                         {"checkpoint", std::filesystem::absolute(checkpoint).string()},
                         {"checkpoint_name", checkpoint},
                         {"resume", run.resume.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::filesystem::absolute(run.resume).string())},
                         {"resume_name", run.resume},
                         {"log", std::filesystem::absolute(log).string()}};
  ExportOptions options;
  options.python = run.python;
  options.verbose = run.verbose;
  std::cerr << "running `" << run.function << "` of " << run.file << " with " << choose_python(run.python) << "\n";
  auto result = run_runtime("train.py", spec, options, "error: running `" + run.function + "` failed: ", false, true, &status);
  if (!result) return status == 130 ? 130 : 1;
  std::cout << result->process.out;
  return 0;
}

int run_export(const ExportOptions& options) {
  AnalyzeOptions analyze_options;
  if (!options.hf.empty()) {
    // --vllm makes the serving rules errors; --hf alone reports them as what vLLM would refuse.
    analyze_options.serving_severity = options.vllm ? Severity::error : Severity::information;
    if (!options.function.empty()) analyze_options.serving_function = options.function;
  }
  // `--fn forward` to a .pt2: a model's forward, its weights in the program (--hf and --gguf have rules of their own).
  if (options.hf.empty() && options.gguf.empty()) analyze_options.model_forward = options.function;
  int status = 0;
  auto analysis = checked_file(options.file, analyze_options, options.color, status);
  if (!analysis) return status;
  if (!options.hf.empty()) return run_hf_export(options, *analysis);
  if (!options.gguf.empty()) return run_gguf_export(options, *analysis);
  const ExportSignature* signature = nullptr;
  for (const ExportSignature& e : analysis->exports)
    if (options.function.empty() ? analysis->exports.size() == 1 : e.function == options.function) signature = &e;
  if (!signature) {
    if (!options.function.empty()) {
      std::cerr << "error: `" << options.file << "` has no `export fn " << options.function << "`";
    } else if (analysis->exports.empty()) {
      std::cerr << "error: `" << options.file << "` has no `export fn` to export";
    } else {
      std::cerr << "error: `" << options.file << "` has " << analysis->exports.size() << " export fns; choose one with --fn:";
      for (const ExportSignature& e : analysis->exports) std::cerr << " " << e.function;
    }
    std::cerr << "\n";
    return 2;
  }
  if (!options.weights.empty() && signature->model.empty()) {
    std::cerr << "error: --weights gives a model's parameters, but `" << signature->function << "` takes no model\n";
    return 2;
  }
  std::string format = options.aoti ? "aoti" : "pt2";
  std::string output = options.output.empty() ? signature->function + ".pt2" : options.output;
  std::filesystem::path output_dir = std::filesystem::absolute(output).parent_path();
  if (!std::filesystem::is_directory(output_dir)) {
    std::cerr << "error: can't write `" << output << "`: the folder `" << output_dir.string() << "` does not exist\n";
    return 2;
  }
  GeneratedModule module = generate_python(*analysis);
  nlohmann::json spec = export_spec(*analysis, *signature, module, std::filesystem::absolute(output).string(), format, options.weights);
  std::cerr << "exporting `" << signature->function << "` with " << choose_python(options.python)
            << (options.aoti ? " (AOTInductor: compiling C++, this takes a while)" : "") << "...\n";
  auto result = run_runtime("run_export.py", spec, options, "error: exporting `" + signature->function + "` failed: ", true);
  if (!result) return 1;
  std::string dynamic;
  try {
    for (auto& [input, axes] : result->reply.at("dynamic").items())
      for (auto& [axis, how] : axes.items()) dynamic += (dynamic.empty() ? "" : ", ") + input + "[" + axis + "] = " + how.get<std::string>();
  } catch (const std::exception&) {
    dynamic = "?";
  }
  std::cout << "wrote " << output << ": `" << signature->function << "`" << (options.aoti ? " as an AOTInductor package" : "")
            << ", dynamic " << (dynamic.empty() ? "nothing" : dynamic) << "\n";
  return 0;
}

}  // namespace ss
