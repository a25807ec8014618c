// What checking a file produces: plain data for the CLI, the language server and the code generator.
#pragma once
#include <map>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "syntax/ast.h"
#include "diagnostics/diagnostic.h"
#include "syntax/source.h"
#include "check/expr_table.h"
#include "check/fact_chunks.h"
#include "check/types.h"

namespace ss {

struct Builtin;
class SyntaxTree;

struct HoverFact {
  Span span;
  std::string text;  // Markdown: the shape in the user's terms, doc comments, Dims
};

struct DefinitionFact {
  Span use;
  Span target;
};

struct InlayFact {
  uint32_t offset;    // after the assigned name
  std::string label;  // ": [b n D]"
};

struct SymbolFact {
  enum class Kind { dim, python_import, extern_fn, function, model, param };
  Kind kind;
  std::string name;
  std::string detail;  // signature or type
  Span span;
  Span name_span;
  std::vector<SymbolFact> children;
};

// How one axis of an exported function's input is declared to torch.export.
struct ExportAxis {
  enum class Kind { fixed, dim, derived, product, data_dependent };
  Kind kind = Kind::fixed;
  int64_t fixed = 0;
  std::string dim;                   // dim, derived: the root's name
  int64_t scale = 1, offset = 0;     // derived: scale*dim + offset
  std::vector<std::string> factors;  // product: generic axes multiplied into one input axis
  std::string label;                 // as written: "16gh"
};

struct ExportInput {
  std::string name;
  ElementType element;
  std::vector<ExportAxis> axes;
};

struct ExportSignature {
  std::string function;
  std::string model;  // a model forward's model (`Llama`), whose parameters the program holds; else empty
  Span name_span;
  std::vector<ExportInput> inputs;
  std::vector<std::string> dims;  // the torch.export.Dims, one per generic axis, in order of appearance
};

// What the checker learned about one call.
struct CallFacts {
  const Builtin* builtin = nullptr;       // a built-in call
  const Item* function = nullptr;         // a call of a user `fn` or `extern fn`
  std::string python;                     // a call through `import python`: the dotted callee
  std::vector<Axis> works_across;         // axes it combines positions of (serving rules)
  std::map<std::string, std::string> lowering;  // facts the code generator needs (axis index, pattern text, ...)
  SizeBindings bindings;                  // the callee's generic axes, as the caller's sizes
  Span callee_span;
};

// A function's parameter and result types, as its signature declares them.
struct FunctionTypes {
  std::vector<ValueType> parameters;
  ValueType result;
};

struct Semantics {
  ExprTable<ValueType> types;
  // Shared with the checker's signatures (and the records that keep them), not copied for each check.
  std::unordered_map<const Item*, std::shared_ptr<const FunctionTypes>> functions;
  ExprTable<CallFacts> calls;
  std::map<std::string, int64_t> dims;  // dim values
};

struct ModelLayout;  // model/model_layout.h
struct FunctionCache;  // check/function_cache.h

struct Analysis {
  SourceFile file;
  Program program;
  std::vector<Diagnostic> diagnostics;
  // In chunks, one per item an incremental check may take whole (fact_chunks.h); read in order.
  FactChunks<HoverFact> hovers;
  FactChunks<DefinitionFact> definitions;
  FactChunks<InlayFact> inlays;
  std::vector<ExportSignature> exports;
  Semantics semantics;
  // Why a serving engine can't run the model's forward, in a few words: the reason of the first
  // serving rule (E33xx) it breaks. Empty when it breaks none, or when the rules didn't run.
  std::string not_servable;
  // The model description of AnalyzeOptions::serving_function (model/model_layout.h), found once
  // when the checker has typed the program; null when the program has errors that stop the checker.
  std::shared_ptr<const ModelLayout> model;
  // What checking each function produced, for the next check of the same document to reuse; only
  // from analyze_incremental, whose next call takes this analysis apart.
  std::shared_ptr<FunctionCache> function_cache;

  bool has_errors() const;
  const Item* find_item(std::string_view name) const;

  Analysis() = default;
  Analysis(const Analysis&) = delete;  // semantics point into program
  Analysis& operator=(const Analysis&) = delete;
  Analysis(Analysis&&) = default;
  Analysis& operator=(Analysis&&) = default;
};

struct AnalyzeOptions {
  // Serving rules (E33xx) are reported at this severity on a model's forward; off when unset.
  std::optional<Severity> serving_severity;
  // The function a serving engine runs: the model's forward.
  std::string serving_function = "forward";
  // The tensor-parallel degree (`--tp K`) the model's heads and split weights must divide (E3310); unset: not checked.
  std::optional<int64_t> tensor_parallel;
  // A model's forward (`fn forward(m: Tiny, ...)`) that `export --fn` exports with the model's
  // parameters held in the program: checked by the export rules as an `export fn` is.
  std::string model_forward;
  // How many ids the tokenizer at a path gives (`dataset(.., tokenizer="tok.json")`, the path as
  // resolved from the file's folder), or an error: the hosts read files, the core reads none. Unset:
  // not checked.
  std::function<std::optional<int64_t>(const std::string& path, std::string& error)> tokenizer_size;
};

// The outline of a checked file: each item, with a model's params as children. Made on request
// (an editor's outline), not on every check: it reads only the items, the file and the dims.
std::vector<SymbolFact> document_symbols(const Analysis& analysis);

// How a symbol and a hover show a function: "fn f(x: [b n D]) -> [b n D]", each type as written
// with its runs of whitespace squashed.
std::string signature_text(const SourceFile& file, const Item& item);

// Checks one file. Never fails: a broken file yields as much as can be trusted.
std::unique_ptr<Analysis> analyze(SourceFile file, const AnalyzeOptions& options = {});
std::unique_ptr<Analysis> analyze_tree(SourceFile file, const SyntaxTree& tree, const AnalyzeOptions& options = {});

// How much of a check was done afresh: the file's functions, and those checked again.
struct CheckReuse {
  size_t functions = 0;
  size_t checked = 0;
};

// Checks a new version of the file `previous` checked (null: none), checking again only the
// functions an edit can reach: a body that changed, and those whose names reach a changed dim,
// model or signature. The result is the one analyze_tree gives, and keeps what the next call reuses.
// `previous` is taken apart: what the edit left alone (items, their types, hovers) is moved out of
// it rather than copied, so afterwards it is only to be destroyed.
std::unique_ptr<Analysis> analyze_incremental(SourceFile file, const SyntaxTree& tree, const AnalyzeOptions& options,
                                              Analysis* previous, CheckReuse* reuse = nullptr);

}  // namespace ss
