// Diagnostics as plain data: what the checker found, where, and how to fix it.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "syntax/source.h"

namespace ss {

enum class DiagnosticCode {
#define DIAGNOSTIC(code, name, category, summary) code,
#include "diagnostics/diagnostic_codes.def"
#undef DIAGNOSTIC
};

// What a diagnostic is about: the column of diagnostic_codes.def.
enum class DiagnosticCategory { syntax, name, shape, call, model, flow, training, exporting, serving, engine };

struct DiagnosticInfo {
  std::string_view code;     // "E1701"
  std::string_view name;     // "export-uses-python"
  DiagnosticCategory category;
  std::string_view summary;  // one line, what `explain` lists
};
const DiagnosticInfo& info(DiagnosticCode code);
std::optional<DiagnosticCode> find_code(std::string_view text);  // "E1701" or "e1701"
const std::vector<DiagnosticCode>& all_codes();

enum class Severity { error, warning, information };

struct Label {
  Span span;
  std::string text;
};

struct TextEdit {
  Span span;
  std::string replacement;
};

// A fix is data on the diagnostic; editors turn it into a code action.
struct Fix {
  std::string title;
  std::vector<TextEdit> edits;
};

struct Diagnostic {
  DiagnosticCode code;
  Severity severity = Severity::error;
  std::string message;
  Label primary;
  std::vector<Label> secondary;  // e.g. where an axis was bound
  std::vector<std::string> notes;
  std::vector<std::string> helps;
  std::vector<Fix> fixes;
};

// A fix that rewrites a region makes another diagnostic's fix inside it moot (`float('-inf')`
// becomes `-inf`, its quotes with it), and the two, applied together, collide: drops each fix whose
// every edit lies strictly inside the one edit of another diagnostic's first fix.
void drop_nested_fixes(std::vector<Diagnostic>& diagnostics);

// An axis's position as PyTorch's `dim=` counts it, from 0: "dim 2". Messages say it beside the
// axis's name, so a user finds the axis either way.
std::string dim_word(size_t index);

// Builds one diagnostic in one expression and hands it to its sink when the statement (or the
// variable holding it) ends, as rustc's builders do:
//   report(code, span, "message").label("under the span").note(..).help(..).fix(..);
// A builder kept in a variable takes parts conditionally; `cancel()` drops it.
class DiagnosticBuilder {
 public:
  using Sink = std::function<void(Diagnostic)>;
  DiagnosticBuilder(Sink sink, DiagnosticCode code, Span span, std::string message);
  DiagnosticBuilder(DiagnosticBuilder&& other) noexcept;
  DiagnosticBuilder(const DiagnosticBuilder&) = delete;
  DiagnosticBuilder& operator=(const DiagnosticBuilder&) = delete;
  DiagnosticBuilder& operator=(DiagnosticBuilder&&) = delete;
  ~DiagnosticBuilder();

  DiagnosticBuilder& label(std::string text);  // the text under the primary span
  DiagnosticBuilder& secondary(Span span, std::string text);
  DiagnosticBuilder& note(std::string text);
  DiagnosticBuilder& help(std::string text);
  DiagnosticBuilder& fix(std::string title, std::vector<TextEdit> edits);
  DiagnosticBuilder& fix(std::string title, Span span, std::string replacement);
  // "did you mean `x`?" with the fix that writes `x` over `span`; nothing when there is no suggestion.
  DiagnosticBuilder& suggest(Span span, const std::optional<std::string>& suggestion);
  DiagnosticBuilder& severity(Severity severity);
  Diagnostic& diagnostic() { return diagnostic_; }
  void emit();                      // reports it now rather than at the end of its scope
  void cancel() { sink_ = nullptr; }

 private:
  Sink sink_;
  Diagnostic diagnostic_;
};

}  // namespace ss
