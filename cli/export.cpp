#include "export.h"
#include "tokenizer_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "emit/codegen_hf.h"
#include "model/model_layout.h"
#include "model/reach.h"
#include "diagnostics/render.h"
#include "files.h"
#include "process.h"

namespace ss {

const std::map<std::string, std::string_view>& embedded_runtime_files();  // generated from python/shapescript/runtime

namespace {

// The runtime's one entry for every target (python/shapescript/runtime/run_export.py, targets.py).
constexpr const char* kExportScript = "run_export.py";

std::string dtype_of(const ElementType& element) {
  switch (element.kind) {
    case ElementKind::int_:
    case ElementKind::index: return "int64";
    case ElementKind::bool_: return "bool";
    default: return "float32";
  }
}

// Rust's ExitStatus wording, which the book prints: "exit status: 1", "signal: 9 (SIGKILL)".
std::string describe_status(int status) {
  if (status >= 0) return "exit status: " + std::to_string(status);
  const char* name = sigabbrev_np(-status);  // "KILL": Rust says SIGKILL
  return "signal: " + std::to_string(-status) + " (" + (name ? "SIG" + std::string(name) : std::string("?")) + ")";
}

}  // namespace

// After the runtime succeeded: the output is checked to be there, whole, and renamed into place;
// returns 0, or the exit status after saying why (1: the runtime didn't write it, 2: the rename
// failed, 128 + signal: interrupted, and then nothing is renamed).
static int finish_output(StagedOutput& staged, const std::vector<std::string>& required, const std::string& failed, const std::string& python) {
  std::string error;
  if (!staged.written(required, error)) {
    std::cerr << failed << "`" << python << "` exited with " << describe_status(0) << " but " << error << "\n";
    return 1;
  }
  if (int signal = interrupted()) {
    std::cerr << "interrupted (" << sigabbrev_np(signal) << "): nothing was written\n";
    return 128 + signal;
  }
  if (!staged.commit(error)) {
    std::cerr << failed << "can't put it in place: " << error << "\n";
    return kExitFiles;
  }
  return 0;
}

// Runs one of the embedded runtime's scripts on `spec` with the chosen Python, in a temporary
// folder. With `reply`, the script writes its answer (JSON) to the file the spec's `reply` names:
// its stdout is the user program's as much as the runtime's, so nothing is parsed from it. On
// failure it prints the runtime's `error:` lines (all its output with --verbose) and `failed` +
// "`python` exited with ...", the book's closing line, sets `exit_status` to the CLI's (1: the
// runtime failed, 2: files, 128 + signal: interrupted) and returns nothing.
std::optional<RuntimeResult> run_runtime(const std::string& script, nlohmann::json spec, const ExportOptions& options,
                                         const std::string& failed, bool reply, RuntimeMode mode, int* exit_status) {
  int unused = 0;
  int& status = exit_status ? *exit_status : unused;
  status = 1;
  InterruptScope interrupts;
  if (int signal = interrupted()) {
    status = 128 + signal;
    return std::nullopt;
  }
  TemporaryDirectory work;
  if (work.path().empty()) {
    std::cerr << failed << work.error() << "\n";
    status = kExitFiles;
    return std::nullopt;
  }
  // Each write checked: a full disk must not leave Python an empty script that "succeeds".
  std::string error;
  const std::filesystem::path reply_path = work.path() / "reply.json";
  if (reply) spec["reply"] = reply_path.string();
  std::vector<std::pair<std::string, std::string_view>> files(embedded_runtime_files().begin(), embedded_runtime_files().end());
  std::string spec_text = json_text(spec, 2);
  files.emplace_back("spec.json", spec_text);
  for (auto& [name, contents] : files)
    if (!write_whole_file(work.path() / name, contents, error)) {
      std::cerr << failed << "can't write `" << (work.path() / name).string() << "`: " << error << "\n";
      status = kExitFiles;
      return std::nullopt;
    }
  std::string python = choose_python(options.python);
  std::vector<std::string> argv = {python, "-I"};
  if (!options.torchrun.empty()) {  // torchrun's launcher (launch.py) starts the script on every rank
    argv.push_back((work.path() / "launch.py").string());
    argv.insert(argv.end(), options.torchrun.begin(), options.torchrun.end());
  }
  argv.push_back((work.path() / script).string());
  argv.push_back((work.path() / "spec.json").string());
  if (options.verbose) argv.push_back("--verbose");
  // A program: its progress as it goes, and Ctrl-C is the child's to handle (it saves first), passed
  // on to it; it starts with SIGINT held, so a Ctrl-C while Python starts waits until the runtime
  // unblocks it, ready to stop cleanly (train.py's main). Otherwise Ctrl-C stops the child's group.
  // A program's stdout is printed when it ends; with --verbose an export shows a program's prints too.
  bool program = mode == RuntimeMode::program;
  ChildOutput out{ChildOutput::Kind::capture, options.verbose && mode == RuntimeMode::quiet, ""};
  ChildOutput err{ChildOutput::Kind::capture, options.verbose || mode != RuntimeMode::quiet, ""};
  ProcessResult process = run_child(argv, out, err, program ? OnInterrupt::forward_sigint : OnInterrupt::stop, program);
  if (!process.started) {
    std::cerr << failed << "can't run `" << python << "`: " << process.start_error << "\n";
    return std::nullopt;
  }
  if (int signal = interrupted(); signal && !(program && signal == SIGINT)) {
    std::cerr << "interrupted (" << sigabbrev_np(signal) << "): stopped `" << python << "`; nothing was written\n";
    status = 128 + signal;
    return std::nullopt;
  }
  if (program && (process.status == 130 || process.status == -SIGINT)) {
    // Interrupted: the runtime said what it saved, unless SIGINT ended it before it could say anything.
    if (process.status == -SIGINT) std::cerr << "interrupted before `" << spec.value("function", "main") << "` started: nothing was saved\n";
    status = 130;
    return std::nullopt;
  }
  if (process.status != 0) {
    if (!options.verbose && mode == RuntimeMode::quiet) {
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
    std::string text, unread;
    if (read_source(reply_path.string(), text, unread)) result.reply = nlohmann::json::parse(text, nullptr, false);
    if (!result.reply.is_object()) {
      std::cerr << failed << "`" << python << "` exited with " << describe_status(0) << " without writing its reply\n";
      return std::nullopt;
    }
  }
  return result;
}

// Reads and checks `file`. On failure it prints why (the file's errors, or that it can't be read)
// and sets `status` (2: unreadable, 1: errors); the book prints nothing after the errors.
std::unique_ptr<Analysis> checked_file(const std::string& file, const AnalyzeOptions& options, const std::string& color, int& status) {
  std::string text, error;
  if (!read_source(file, text, error)) {
    std::cerr << "error: can't read `" << file << "`: " << error << "\n";
    status = 2;
    return nullptr;
  }
  auto analysis = analyze(SourceFile(file, std::move(text)), options);
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
    std::error_code unusable;  // a loop, no permission: not this one
    if (std::filesystem::exists(python, unusable)) return python.string();
  }
  return "python3";
}

const ExportTarget& ExportOptions::target() const {
  for (const ExportTarget& t : export_targets())
    if (!t.option.empty() && targets.contains(t.option)) return t;
  return export_targets().front();
}

std::string ExportOptions::path(const ExportTarget& t) const {
  auto given = targets.find(t.option);
  return t.flag || given == targets.end() ? output : given->second;
}

int write_hf_folder(const ExportOptions& options, const Analysis& analysis, const ExportTarget& target) {
  const std::string dir = options.path(target);
  RenderOptions render{use_color(options.color, stderr)};
  // What vLLM would refuse (the serving rules): with --vllm these were errors and export ended; here they are notes.
  std::vector<const Diagnostic*> serving;
  for (const Diagnostic& d : analysis.diagnostics)
    if (info(d.code).category == DiagnosticCategory::serving) serving.push_back(&d);
  std::string function = options.function.empty() ? "forward" : options.function;
  HfModel model = generate_hf(analysis, describe_model(analysis, function));
  if (!model.error.empty()) {
    std::cerr << "error: can't write `" << function << "` as a Hugging Face model: " << model.error << "\n";
    return 1;
  }
  const std::string& why_not = model.not_servable;
  if (options.vllm && !why_not.empty()) {
    std::cerr << "error: vLLM can't serve `" << function << "`: " << why_not << "\n";
    return 1;
  }
  // The folders above it are made as before; the folder itself is built beside it and swapped in.
  std::error_code made;
  std::filesystem::path above = std::filesystem::absolute(dir, made).parent_path();
  if (!made) std::filesystem::create_directories(above, made);
  InterruptScope interrupts;
  StagedOutput staged;
  std::string error;
  if (made) error = made.message();
  if (!error.empty() || !staged.prepare({dir, true}, error)) {
    std::cerr << "error: can't create the folder `" << dir << "`: " << error << "\n";
    return kExitFiles;
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
  for (const HfTensor& t : model.tensors) tensors.push_back({{"source", t.source}, {"layer", t.layer}, {"key", t.key}, {"parts", t.parts}});
  nlohmann::json parameters = nlohmann::json::array();
  for (const HfParameter& p : model.parameters) parameters.push_back({{"name", p.name}, {"shape", p.shape}});
  GeneratedModule reference = generate_python(analysis, PythonImports::left_out);
  nlohmann::json spec = {{"version", 1},
                         {"target", target.key},
                         {"source", analysis.file.path()},
                         {"output", staged.path().string()},
                         {"config", config},
                         {"configuration", model.configuration},
                         {"modeling", model.modeling},
                         {"tensors", tensors},
                         {"parameters", parameters},
                         {"weights", options.weights.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::filesystem::absolute(options.weights).string())},
                         {"weights_name", options.weights},
                         {"tokenizer", options.tokenizer.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::filesystem::absolute(options.tokenizer).string())},
                         {"tokenizer_name", options.tokenizer},
                         {"reference", reference.python},
                         {"model", model.model_name},
                         {"function", python_name(function)},
                         {"causal_lm", model.causal_lm},
                         {"takes_positions", model.takes_positions},
                         {"max_positions", model.max_positions},
                         {"vocab", model.vocab}};
  const std::string failed = "error: writing `" + dir + "` failed: ";
  int status = 1;
  auto result = run_runtime(kExportScript, spec, options, failed, false, RuntimeMode::quiet, &status);
  if (!result) return status;
  if (int finished = finish_output(staged, {"config.json", "configuration_shapescript.py", "modeling_shapescript.py", "model.safetensors"},
                                   failed, choose_python(options.python)))
    return finished;
  for (const Diagnostic* d : serving) std::cerr << render_diagnostic(analysis.file, *d, render);
  std::cout << "wrote " << dir << ": ";
  if (model.causal_lm) {
    if (model.attention_layers) {
      std::cout << model.attention_layers << " attention layers of " << model.heads << " heads";
      if (model.latent_cache)
        std::cout << " (latent attention: its cache holds " << model.latent_cache << " numbers a token and layer"
                  << (model.latent_cache == kMlaCacheWidth ? ")" : "; vLLM's MLA kernels cache " + std::to_string(kMlaCacheWidth) +
                                                                    ", so vLLM caches each head's keys and values)");
    } else {
      std::cout << model.layers << " layers";
    }
    std::cout << ", vocabulary of " << model.vocab;
  } else {
    std::cout << "`" << function << "` as the model's forward";
  }
  if (why_not.empty()) std::cout << "; vLLM can serve it\n";
  else std::cout << "; vLLM can't serve it: " << why_not << "\n";
  return 0;
}

namespace {

std::string where(const Analysis& analysis, Span span) {
  LineColumn p = analysis.file.line_column(span.begin);
  return std::filesystem::path(analysis.file.path()).filename().string() + ":" + std::to_string(p.line + 1) + ":" + std::to_string(p.column + 1);
}

}  // namespace

ModelLayout describe_model(const Analysis& analysis, const std::string& function) {
  if (analysis.model && analysis.model->function == function) return *analysis.model;
  return find_model_layout(analysis, function);
}

std::string why_not_language_model(const Analysis& analysis, const ModelLayout& layout) {
  if (!layout.forward) return "`" + std::filesystem::path(analysis.file.path()).filename().string() + "` has no `fn " + layout.function + "`";
  if (layout.refusals.empty()) return "";
  const ModelRefusal& first = layout.refusals.front();
  return where(analysis, first.span) + ": `" + layout.function + "` isn't a language model's forward: " + first.rule;
}

std::string why_not_described_model(const Analysis& analysis, const ModelLayout& layout) {
  if (layout.is_encoder()) return "";
  std::string why = why_not_language_model(analysis, layout);
  // Without an output layer it may have been meant as an encoder: why it isn't one too.
  if (!why.empty() && !layout.output && !layout.encoder_refusals.empty()) {
    const ModelRefusal& first = layout.encoder_refusals.front();
    why += "; nor an encoder's: " + where(analysis, first.span) + ": " + first.rule;
  }
  return why;
}

// An encoder's inputs after the model: each one's name, role (transformers' keyword) and element
// type, and, for an index, its bound.
static nlohmann::json model_inputs(const Analysis& analysis, const ModelLayout& layout) {
  nlohmann::json inputs = nlohmann::json::array();
  for (size_t i = 0; i < layout.inputs.size(); ++i) {
    const ModelInput& input = layout.inputs[i];
    const TensorType* tensor = nullptr;
    for (size_t p = 1; p < layout.forward->parameters.size() && p < layout.types->parameters.size(); ++p)
      if (layout.forward->parameters[p].name == input.name) tensor = &layout.types->parameters[p].tensor;
    nlohmann::json shape = nlohmann::json::array();  // fixed sizes, null where generic
    nlohmann::json bound = nullptr;
    if (tensor) {
      for (const Axis& axis : tensor->axes) {
        auto size = axis.size.constant_value();
        shape.push_back(size ? nlohmann::json(*size) : nlohmann::json(nullptr));
      }
      if (auto b = tensor->element.bound.constant_value(); b && tensor->element.kind == ElementKind::index) bound = *b;
    }
    inputs.push_back({{"name", python_name(input.name)}, {"role", input_role_name(input.role)}, {"shape", shape}, {"bound", bound},
                      {"where", where(analysis, input.span)}});
  }
  return inputs;
}

// The blocks: how many, the fields each reads as `m.w[l]`, where the loop is, and which slice of
// every field each block reads (`m.w_gate[l]` in the first blocks, `m.w_router[l - Ld]` in the
// rest), so a reader maps weights stacked over a run of the blocks to those blocks only.
static nlohmann::json block_description(const Analysis& analysis, const ModelLayout& layout, const LanguageModelFacts& model) {
  nlohmann::json blocks = {{"layers", model.layers}, {"stacked", layout.stacked}};
  if (layout.loop) blocks["where"] = where(analysis, layout.loop->span);
  BlockSlices slices = block_slices(analysis, layout);
  if (slices.refusals.empty() && !slices.per_block.empty()) blocks["slices"] = slices.per_block;
  return blocks;
}

nlohmann::json model_description(const Analysis& analysis, const ModelLayout& layout, const LanguageModelFacts& model) {
  auto text = [&](Span span) { return analysis.file.text().substr(span.begin, span.end - span.begin); };
  nlohmann::json refusals = nlohmann::json::array();
  for (const ModelRefusal& r : layout.refusals) refusals.push_back({{"where", where(analysis, r.span)}, {"rule", r.rule}});
  if (layout.is_encoder()) refusals = nlohmann::json::array();  // a language model's rules aren't an encoder's
  nlohmann::json description = {{"version", 1},
                                {"function", layout.function},
                                {"kind", layout.is_language_model() ? "causal_lm" : layout.is_encoder() ? "encoder" : "none"},
                                {"refusals", refusals}};
  if (layout.is_encoder()) {
    description["inputs"] = model_inputs(analysis, layout);
    description["embedding"] = {{"tables", layout.embedding_tables}};
    description["blocks"] = block_description(analysis, layout, model);
    description["takes_positions"] = false;
    return description;
  }
  if (!layout.is_language_model()) return description;
  nlohmann::json after = nlohmann::json::array();
  for (const OutputOp& op : layout.after_output) {
    nlohmann::json entry = {{"op", op.kind == OutputOp::Kind::scale ? "scale" : op.kind == OutputOp::Kind::softcap ? "softcap" : "other"},
                            {"where", where(analysis, op.span)},
                            {"text", text(op.span)}};
    if (op.kind != OutputOp::Kind::other) entry["value"] = op.value;
    after.push_back(entry);
  }
  description["embedding"] = {{"field", layout.embedding}, {"tables", layout.embedding_tables}};
  description["blocks"] = block_description(analysis, layout, model);
  description["output"] = {{"weight", layout.output_layer},
                           {"bias", layout.output_bias.empty() ? nlohmann::json(nullptr) : nlohmann::json(layout.output_bias)},
                           {"tied", layout.tied},
                           {"where", where(analysis, layout.output->span)},
                           {"after", after}};
  description["takes_positions"] = !layout.pos_var.empty();
  return description;
}

LanguageModelFacts language_model_facts(const Analysis& analysis, const ModelLayout& layout) {
  return language_model_facts(analysis, layout, [&](Span span) { return where(analysis, span); });
}

nlohmann::json language_model_spec(const Analysis& analysis, const ModelLayout& layout, const LanguageModelFacts& model, const std::string& function) {
  auto stacked = [&](const std::string& name) { return std::find(layout.stacked.begin(), layout.stacked.end(), name) != layout.stacked.end(); };
  nlohmann::json parameters = nlohmann::json::array();
  for (const auto& [name, shape] : model.parameters) {
    nlohmann::json parameter = {{"name", name}, {"shape", shape}, {"stacked", stacked(name)}};
    for (const Item::Param& p : layout.model->params)
      if (p.name == name) parameter["where"] = where(analysis, p.name_span);  // where it is declared, for refusals
    parameters.push_back(parameter);
  }
  nlohmann::json builtins = nlohmann::json::array();
  for (const BuiltinCall& call : builtin_calls_reached(analysis, function))
    builtins.push_back({{"name", call.name}, {"keywords", call.keywords}, {"where", where(analysis, call.span)}});
  return {{"version", 1},
          {"source", analysis.file.path()},
          {"reference", generate_python(analysis, PythonImports::left_out).python},
          {"model", model.model_name},
          {"function", python_name(function)},
          {"function_where", where(analysis, layout.forward->name_span)},
          {"parameters", parameters},
          {"layers", model.layers},
          {"embedding", layout.embedding},
          {"output_layer", layout.output_layer},
          {"embedding_tables", layout.embedding_tables},
          {"kind", model.encoder ? "encoder" : "causal_lm"},
          {"inputs", model.encoder ? model_inputs(analysis, layout) : nlohmann::json::array()},
          {"takes_positions", model.takes_positions},
          {"max_positions", model.max_positions},
          {"vocab", model.vocab},
          {"sliding_window", model.sliding_window},
          {"layer_windows", model.layer_windows},
          {"builtins", builtins},
          {"description", model_description(analysis, layout, model)}};
}

// --gguf: llama.cpp runs its own implementation of an architecture, so nothing is compiled; the
// runtime (gguf_export.py) finds the architecture that computes what the model does and writes it.
int write_gguf_file(const ExportOptions& options, const Analysis& analysis, const ExportTarget& target) {
  const std::string file = options.path(target);
  std::string function = options.function.empty() ? "forward" : options.function;
  const std::string failed = "error: exporting `" + function + "` failed: ";
  // The model's description (embedding, blocks, output layer); which llama.cpp architecture computes
  // what it does is the runtime's search, run on the compiled forward, not the Hugging Face generator's.
  ModelLayout layout = describe_model(analysis, function);
  // An encoder too (BERT: llama.cpp's `bert` gives embeddings); the runtime refuses one without token ids.
  if (std::string why_not = why_not_described_model(analysis, layout); !why_not.empty()) {
    std::cerr << "error: can't write `" << function << "` as a GGUF model: llama.cpp runs language models and encoders: " << why_not << "\n";
    return 1;
  }
  InterruptScope interrupts;
  StagedOutput staged;
  if (std::string error; !staged.prepare({file, false}, error)) {
    std::cerr << "error: can't write `" << file << "`: " << error << "\n";
    return kExitFiles;
  }
  auto absolute_or_null = [](const std::string& path) {
    return path.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::filesystem::absolute(path).string());
  };
  LanguageModelFacts facts = language_model_facts(analysis, layout);
  if (!facts.error.empty()) {
    std::cerr << "error: can't write `" << function << "` as a GGUF model: " << facts.error << "\n";
    return 1;
  }
  nlohmann::json spec = language_model_spec(analysis, layout, facts, function);
  spec.update({{"target", target.key},
               {"output", staged.path().string()},
               {"weights", absolute_or_null(options.weights)},
               {"weights_name", options.weights},
               {"tokenizer", absolute_or_null(options.tokenizer)},
               {"tokenizer_name", options.tokenizer}});
  int status = 1;
  auto result = run_runtime(kExportScript, spec, options, failed, true, RuntimeMode::quiet, &status);
  if (!result) return status;
  if (int finished = finish_output(staged, {}, failed, choose_python(options.python))) return finished;
  try {
    const nlohmann::json& reply = result->reply;
    std::cout << "wrote " << file << ": llama.cpp's `" << reply.at("architecture").get<std::string>() << "`, "
              << reply.at("blocks").get<int64_t>() << " blocks of " << reply.at("heads").get<int64_t>() << " heads, vocabulary of "
              << reply.at("vocab").get<int64_t>() << ", " << reply.at("tensors").get<int64_t>() << " tensors, "
              << reply.at("size").get<std::string>();
    // The tokenizer it carries, as llama.cpp reads it.
    if (const nlohmann::json& tokenizer = reply.value("tokenizer", nlohmann::json()); tokenizer.is_object()) {
      std::cout << ", tokenizer `" << tokenizer.at("model").get<std::string>() << "`";
      if (tokenizer.at("pre").is_string()) std::cout << " with the `" << tokenizer.at("pre").get<std::string>() << "` pre-tokenizer";
      if (tokenizer.at("chat_template").get<bool>()) std::cout << " and a chat template";
    }
    std::cout << "\n";
  } catch (const std::exception& e) {
    std::cerr << failed << "the runtime's reply isn't what was expected: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

int run_program(const RunOptions& run) {
  int status = 0;
  std::error_code unusable;
  std::filesystem::path source = std::filesystem::absolute(run.file, unusable);
  std::string stem = source.stem().string();
  bool distributed = run.nproc_per_node > 0;  // under torchrun: the checkpoint is a folder of shards
  std::string checkpoint = run.checkpoint.empty() ? stem + (distributed ? ".ckpt" : ".ckpt.pt") : run.checkpoint;
  std::string log = run.log.empty() ? stem + ".log.jsonl" : run.log;
  // The checkpoint may be the one resumed (it is replaced whole, after it was read); the log is appended to.
  if (!refuse_overwriting_inputs({run.file, run.resume}, {{log}}) || !refuse_overwriting_inputs({run.file}, {{checkpoint}})) return kExitFiles;
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
  // Ctrl-C's checkpoint is written beside its place and renamed into it; where that can't be
  // prepared (no such folder), the runtime is given the place itself and says so if it must save.
  // Under torchrun every rank writes its shards, into a folder the runtime swaps into place itself.
  InterruptScope interrupts;
  StagedOutput staged;
  std::string unstaged;
  bool staging = !distributed && staged.prepare({checkpoint}, unstaged);
  auto absolute = [](const std::string& path) {
    std::error_code ignored;
    std::filesystem::path full = std::filesystem::absolute(path, ignored);
    return ignored ? path : full.string();
  };
  nlohmann::json spec = {{"version", 1},
                         {"module", generate_python(*analysis).python},
                         {"function", python_name(run.function)},
                         {"source", run.file},
                         {"source_dir", source.parent_path().string()},
                         {"checkpoint", staging ? staged.path().string() : absolute(checkpoint)},
                         {"checkpoint_name", checkpoint},
                         {"resume", run.resume.empty() ? nlohmann::json(nullptr) : nlohmann::json(absolute(run.resume))},
                         {"resume_name", run.resume},
                         {"log", absolute(log)}};
  ExportOptions options;
  options.python = run.python;
  options.verbose = run.verbose;
  if (distributed) {
    std::vector<std::string>& flags = options.torchrun;
    std::string again = "shapescript run " + run.file + " --nproc-per-node " + std::to_string(run.nproc_per_node);
    flags = {"--nproc-per-node", std::to_string(run.nproc_per_node)};
    if (run.nnodes.empty() && run.rdzv_endpoint.empty()) {
      flags.push_back("--standalone");  // one machine: torchrun's own rendezvous on a free port
    } else {
      flags.insert(flags.end(), {"--nnodes", run.nnodes.empty() ? "1" : run.nnodes, "--rdzv-endpoint", run.rdzv_endpoint});
      again += " --nnodes " + (run.nnodes.empty() ? std::string("1") : run.nnodes);
      if (run.node_rank >= 0) {  // each node says which it is: torchrun's static rendezvous
        flags.insert(flags.end(), {"--node-rank", std::to_string(run.node_rank)});
        again += " --node-rank " + std::to_string(run.node_rank);
      } else {  // the rendezvous numbers the nodes as they arrive
        flags.insert(flags.end(), {"--rdzv-backend", "c10d", "--rdzv-id", run.rdzv_id});
      }
      again += " --rdzv-endpoint " + run.rdzv_endpoint;
    }
    spec["relaunch"] = again;
  }
  std::cerr << "running `" << run.function << "` of " << run.file << " with " << choose_python(run.python)
            << (distributed ? " under torchrun (" + std::to_string(run.nproc_per_node) + (run.nproc_per_node == 1 ? " process" : " processes") +
                                  " per node" + (run.nnodes.empty() ? "" : ", " + run.nnodes + " nodes") + ")"
                            : "")
            << "\n";
  auto result = run_runtime("train.py", spec, options, "error: running `" + run.function + "` failed: ", false, RuntimeMode::program, &status);
  std::string error;
  if (staging && staged.written({}, error) && !staged.commit(error)) {
    std::cerr << "error: can't save the checkpoint `" << checkpoint << "`: " << error << "\n";
    return kExitFiles;
  }
  if (!result) return status;
  std::cout << result->process.out;
  return 0;
}

int run_export(const ExportOptions& options) {
  const ExportTarget& target = options.target();
  AnalyzeOptions analyze_options;
  read_named_files(analyze_options);
  if (target.serving) {
    // --vllm makes the serving rules errors; --hf alone reports them as what vLLM would refuse.
    analyze_options.serving_severity = options.vllm ? Severity::error : Severity::information;
    if (!options.function.empty()) analyze_options.serving_function = options.function;
    analyze_options.tensor_parallel = options.tensor_parallel;
  }
  // `--fn forward` to a program: a model's forward, its weights in the program (--hf and --gguf have rules of their own).
  if (target.write == write_program) analyze_options.model_forward = options.function;
  // Before any work: no output may be an input.
  std::vector<OutputPath> outputs;
  if (std::string path = options.path(target); !path.empty()) outputs.push_back({path, target.folder});
  const std::vector<std::string> inputs = {options.file, options.weights, options.tokenizer};
  if (!refuse_overwriting_inputs(inputs, outputs)) return kExitFiles;
  int status = 0;
  auto analysis = checked_file(options.file, analyze_options, options.color, status);
  if (!analysis) return status;
  return target.write(options, *analysis, target);
}

// A program target (pt2, aoti, onnx): an `export fn`, or with --fn a model's forward, from its export spec.
int write_program(const ExportOptions& options, const Analysis& analysis, const ExportTarget& target) {
  const ExportSignature* signature = nullptr;
  for (const ExportSignature& e : analysis.exports)
    if (options.function.empty() ? analysis.exports.size() == 1 : e.function == options.function) signature = &e;
  if (!signature) {
    if (!options.function.empty()) {
      std::cerr << "error: `" << options.file << "` has no `export fn " << options.function << "`";
    } else if (analysis.exports.empty()) {
      std::cerr << "error: `" << options.file << "` has no `export fn` to export";
    } else {
      std::cerr << "error: `" << options.file << "` has " << analysis.exports.size() << " export fns; choose one with --fn:";
      for (const ExportSignature& e : analysis.exports) std::cerr << " " << e.function;
    }
    std::cerr << "\n";
    return 2;
  }
  if (!options.weights.empty() && signature->model.empty()) {
    std::cerr << "error: --weights gives a model's parameters, but `" << signature->function << "` takes no model\n";
    return 2;
  }
  const std::vector<std::string> inputs = {options.file, options.weights, options.tokenizer};
  std::string output = options.path(target);
  if (output.empty()) {
    output = signature->function + ".pt2";
    if (!refuse_overwriting_inputs(inputs, {{output}})) return kExitFiles;
  }
  InterruptScope interrupts;
  StagedOutput staged;
  if (std::string error; !staged.prepare({output}, error)) {
    std::cerr << "error: can't write `" << output << "`: " << error << "\n";
    return kExitFiles;
  }
  GeneratedModule module = generate_python(analysis, PythonImports::left_out);
  nlohmann::json spec = export_spec(analysis, *signature, module, staged.path().string(), std::string(target.key), options.weights);
  spec["target"] = target.key;
  std::cerr << "exporting `" << signature->function << "` with " << choose_python(options.python)
            << (target.slow.empty() ? "" : " (" + std::string(target.slow) + ")") << "...\n";
  const std::string failed = "error: exporting `" + signature->function + "` failed: ";
  int status = 1;
  auto result = run_runtime(kExportScript, spec, options, failed, true, RuntimeMode::quiet, &status);
  if (!result) return status;
  if (int finished = finish_output(staged, {}, failed, choose_python(options.python))) return finished;
  std::string dynamic;
  try {
    for (auto& [input, axes] : result->reply.at("dynamic").items())
      for (auto& [axis, how] : axes.items()) dynamic += (dynamic.empty() ? "" : ", ") + input + "[" + axis + "] = " + how.get<std::string>();
  } catch (const std::exception&) {
    dynamic = "?";
  }
  std::cout << "wrote " << output << ": `" << signature->function << "`" << target.as << ", dynamic " << (dynamic.empty() ? "nothing" : dynamic)
            << "\n";
  return 0;
}

}  // namespace ss
