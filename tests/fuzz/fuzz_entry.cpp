#include "fuzz_entry.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "answers.h"
#include "check/analysis.h"
#include "model/model_layout.h"
#include "model/reach.h"
#include "check_json.h"
#include "diagnostics/render.h"
#include "document_text.h"
#include "emit/codegen.h"
#include "emit/codegen_hf.h"
#include "emit/python_writer.h"

namespace ss_fuzz {
namespace {

using json = nlohmann::json;

Reached g_reached;

// How much of one input the downstream passes see: enough to reach every answer and generator,
// bounded so that a 64 KB input costs a few analyses, not one per function or per byte.
constexpr size_t kMaxFunctionsGenerated = 6;  // functions translated as a Hugging Face forward
constexpr size_t kMaxQueryOffsets = 12;       // offsets asked about (hover, definition, ...)

[[noreturn]] void violated(const char* what, ss::Span span, size_t size) {
  std::fprintf(stderr, "fuzz invariant violated: %s span [%u, %u) outside a file of %zu bytes\n", what,
               span.begin, span.end, size);
  std::abort();
}

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
  std::abort();
}

void check_span(const char* what, ss::Span span, size_t size) {
  if (span.begin > span.end || span.end > size) violated(what, span, size);
}

void check_symbols(const std::vector<ss::SymbolFact>& symbols, const ss::SourceFile& file, int depth) {
  for (const auto& symbol : symbols) {
    check_span("symbol", symbol.span, file.text().size());
    check_span("symbol name", symbol.name_span, file.text().size());
    if (depth < 64) check_symbols(symbol.children, file, depth + 1);
  }
}

// Findings that are known and being fixed, which a run can be told to pass over with
// SHAPESCRIPT_FUZZ_KNOWN=name,name so that it looks for new ones: `generated-code` (below).
bool known(const char* finding) {
  static const std::string names = [] {
    const char* value = std::getenv("SHAPESCRIPT_FUZZ_KNOWN");
    return "," + std::string(value ? value : "") + ",";
  }();
  return names.find("," + std::string(finding) + ",") != std::string::npos;
}

// Generated Python holds nothing but what the generators write (pywrite::is_generator_safe: UTF-8,
// no line terminator but \n, every string literal one of quote()'s), or a source wrote code.
void require_generator_safe(const std::string& what, const std::string& text) {
  if (!known("generated-code") && !ss::pywrite::is_generator_safe(text))
    broken(what + " breaks pywrite::is_generator_safe: a character or string literal the generators never write");
}

// Serialises a message as the CLI and the server do (replacing bytes that aren't UTF-8), and checks
// that it can be.
std::string dump(const json& message) {
  std::string text = message.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.empty()) broken("a JSON message dumped to nothing");
  return text;
}

// `shapescript check --format json` and the language server's answers, from one analysis.
void check_json_outputs(const ss::Analysis& analysis, Downstream downstream) {
  const ss::SourceFile& file = analysis.file;
  const uint32_t size = static_cast<uint32_t>(file.text().size());

  json cli = json::array();
  for (const auto& d : analysis.diagnostics) cli.push_back(ss::diagnostic_json(file, d));
  (void)dump(cli);

  namespace lsp = ss::lsp;
  lsp::TextDocument document(file.text());
  lsp::Converter at("file:///fuzz.ss", document);
  lsp::DiagnosticStyle serving;
  lsp::DiagnosticStyle hints{{ss::Severity::warning, true}, "file:///docs/errors/"};
  json answers = json::array();
  json diagnostics = lsp::diagnostics_to_lsp(analysis, at, serving);
  for (const json& d : diagnostics) {
    const json& range = d.at("range");
    uint32_t begin = at.offset(range.at("start")), end = at.offset(range.at("end"));
    if (begin > end || end > size) violated("LSP diagnostic range", ss::Span{begin, end}, size);
  }
  answers.push_back(std::move(diagnostics));
  if (downstream == Downstream::diagnostics) {
    (void)dump(answers);
    return;
  }
  answers.push_back(lsp::diagnostics_to_lsp(analysis, at, hints));
  answers.push_back(lsp::document_symbols(analysis, at));
  answers.push_back(lsp::inlay_hints(analysis, at, 0, size));
  answers.push_back(lsp::semantic_tokens(analysis, at));
  answers.push_back(lsp::code_actions(analysis, at, 0, size, json(), serving));
  answers.push_back(lsp::code_actions(analysis, at, 0, size, json::array({"quickfix"}), hints));

  // Where an editor asks: the start and end, where something was found, and inside names.
  std::vector<uint32_t> offsets{0, size, size / 2};
  size_t hovers = 0;
  for (auto hover = analysis.hovers.begin(); hover != analysis.hovers.end() && hovers < 8; ++hover, ++hovers) {
    offsets.push_back(hover->span.begin);
    offsets.push_back(hover->span.end);
  }
  size_t definitions = 0;
  for (auto definition = analysis.definitions.begin(); definition != analysis.definitions.end() && definitions < 4; ++definition, ++definitions)
    offsets.push_back(definition->use.begin + 1);
  for (size_t i = 0; i < analysis.diagnostics.size() && i < 4; ++i) offsets.push_back(analysis.diagnostics[i].primary.span.begin);
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  if (offsets.size() > kMaxQueryOffsets) {  // evenly spread over the file
    std::vector<uint32_t> spread;
    for (size_t i = 0; i < kMaxQueryOffsets; ++i) spread.push_back(offsets[i * offsets.size() / kMaxQueryOffsets]);
    offsets = std::move(spread);
  }
  for (uint32_t offset : offsets) {
    offset = std::min(offset, size);
    // Converting back and forth must land inside the text (the server clamps what clients send).
    if (at.offset(at.position(offset)) > size) violated("LSP position round trip", ss::Span{offset, offset}, size);
    answers.push_back(lsp::hover(analysis, at, offset, lsp::Markup::markdown));
    answers.push_back(lsp::hover(analysis, at, offset, lsp::Markup::plaintext));
    answers.push_back(lsp::definition(analysis, at, offset));
    answers.push_back(lsp::references(analysis, at, offset, true));
    try {  // refusing (a built-in, no name here) is an answer too
      answers.push_back(lsp::prepare_rename(analysis, at, offset));
      answers.push_back(lsp::rename(analysis, at, offset, "renamed"));
    } catch (const lsp::RequestFailed& refused) {
      answers.push_back(refused.what());
    }
    answers.push_back(lsp::signature_help(analysis, at, offset));
  }
  // Completion lists every built-in with its documentation: asked where typing happens, twice.
  answers.push_back(lsp::completion(analysis, at, size, lsp::Markup::plaintext));
  answers.push_back(lsp::completion(analysis, at, offsets[offsets.size() / 2], lsp::Markup::markdown));
  (void)dump(answers);
  ++g_reached.answered;
}

// What `export --hf` hands the runtime for one function: the folder's code, config.json's values
// (each must be JSON: the CLI parses them) and the reference module, as spec.json would hold them.
void check_hf(const ss::Analysis& analysis, const std::string& function, const std::string& reference) {
  ss::ModelLayout layout = ss::find_model_layout(analysis, function);
  ss::HfModel model = ss::generate_hf(analysis, layout);
  if (!model.error.empty()) return;  // the CLI says so and stops
  ++g_reached.hf;
  require_generator_safe("configuration_shapescript.py of `" + function + "`", model.configuration);
  require_generator_safe("modeling_shapescript.py of `" + function + "`", model.modeling);
  json config = json::object();
  for (const auto& [key, value] : model.config) {
    try {
      config[key] = json::parse(value);
    } catch (const json::parse_error& e) {
      broken("config.json's `" + key + "` of `" + function + "` is not JSON: " + value);
    }
  }
  json tensors = json::array();
  for (const ss::HfTensor& t : model.tensors) tensors.push_back({{"source", t.source}, {"layer", t.layer}, {"key", t.key}});
  json parameters = json::array();
  for (const ss::HfParameter& p : model.parameters) parameters.push_back({{"name", p.name}, {"shape", p.shape}});
  json builtins = json::array();  // --gguf's spec
  if (model.causal_lm)
    for (const ss::BuiltinCall& call : ss::builtin_calls_reached(analysis, function))
      builtins.push_back({{"name", call.name}, {"keywords", call.keywords}});
  (void)dump(json{{"config", config},
                  {"configuration", model.configuration},
                  {"modeling", model.modeling},
                  {"tensors", tensors},
                  {"parameters", parameters},
                  {"reference", reference},
                  {"model", model.model_name},
                  {"function", ss::python_name(function)},
                  {"not_servable", model.not_servable},
                  {"builtins", builtins}});
}

// Code generation, as export, run, compile and --hf do it: only for a file without errors.
void check_codegen(const ss::Analysis& analysis, std::string_view bytes, const ss::AnalyzeOptions& options) {
  ss::GeneratedModule module = ss::generate_python(analysis);
  ++g_reached.generated;
  require_generator_safe("the generated PyTorch module", module.python);
  json exports = json::array();
  for (const ss::ExportSignature& e : analysis.exports) {
    json inputs = json::array();
    for (const ss::ExportInput& input : e.inputs) {
      json axes = json::array();
      for (const ss::ExportAxis& axis : input.axes) axes.push_back({axis.label, ss::python_name(axis.dim)});
      inputs.push_back({{"name", ss::python_name(input.name)}, {"shape", axes}});
    }
    exports.push_back({{"function", ss::python_name(e.function)}, {"model", e.model}, {"dims", e.dims}, {"inputs", inputs}});
  }
  (void)dump(json{{"module", module.python}, {"exports", exports}});

  // --hf and --gguf translate one function (default `forward`), checked with the serving rules
  // aimed at it: the analysis at hand is that for `forward`; any other gets one of its own.
  size_t generated = 0;
  for (const ss::Item& item : analysis.program.items) {
    if (item.kind != ss::Item::Kind::function || generated >= kMaxFunctionsGenerated) continue;
    ++generated;
    if (item.name == options.serving_function) {
      check_hf(analysis, item.name, module.python);
      continue;
    }
    ss::AnalyzeOptions for_function = options;
    for_function.serving_function = item.name;
    auto again = ss::analyze(ss::SourceFile("fuzz.ss", std::string(bytes)), for_function);
    if (again->has_errors()) continue;  // a serving rule made an error: export stops there
    check_hf(*again, item.name, module.python);
  }
}

}  // namespace

const Reached& reached() { return g_reached; }

void check_one(std::string_view bytes, Downstream downstream) {
  ss::AnalyzeOptions options;
  options.serving_severity = ss::Severity::warning;  // run the E33xx rules too
  auto analysis = ss::analyze(ss::SourceFile("fuzz.ss", std::string(bytes)), options);
  const ss::SourceFile& file = analysis->file;
  const size_t size = file.text().size();

  // Everything the CLI and the language server do with the result.
  std::string rendered;
  for (const auto& d : analysis->diagnostics) {
    check_span("diagnostic", d.primary.span, size);
    for (const auto& label : d.secondary) check_span("secondary label", label.span, size);
    for (const auto& fix : d.fixes)
      for (const auto& edit : fix.edits) check_span("fix edit", edit.span, size);
    rendered += ss::render_diagnostic(file, d);
    rendered += ss::render_diagnostic(file, d, ss::RenderOptions{.color = true});
    rendered += ss::render_location(file, d.primary.span);
    auto lc = file.line_column(d.primary.span.begin);
    if (file.offset_of(lc) > size) violated("offset_of(line_column)", d.primary.span, size);
    (void)file.line_text(lc.line);
  }
  rendered += ss::render_explain_footer(analysis->diagnostics);
  for (const auto& h : analysis->hovers) check_span("hover", h.span, size);
  for (const auto& d : analysis->definitions) {
    check_span("definition use", d.use, size);
    check_span("definition target", d.target, size);
  }
  for (const auto& inlay : analysis->inlays)
    if (inlay.offset > size) violated("inlay", ss::Span{inlay.offset, inlay.offset}, size);
  check_symbols(ss::document_symbols(*analysis), file, 0);
  for (const auto& e : analysis->exports) check_span("export name", e.name_span, size);

  check_json_outputs(*analysis, downstream);
  if (downstream == Downstream::all && !analysis->has_errors()) check_codegen(*analysis, bytes, options);
}

}  // namespace ss_fuzz
