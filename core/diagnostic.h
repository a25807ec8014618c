// Diagnostics as plain data: what the checker found, where, and how to fix it.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "source.h"

namespace ss {

enum class DiagnosticCode {
#define DIAGNOSTIC(code, name, category, summary) code,
#include "diagnostic_codes.def"
#undef DIAGNOSTIC
};

// What a diagnostic is about: the column of diagnostic_codes.def.
enum class DiagnosticCategory { syntax, name, shape, call, model, flow, training, exporting, serving };

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

}  // namespace ss
