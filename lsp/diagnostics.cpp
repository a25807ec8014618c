// Diagnostics as LSP diagnostics: published after each check, and quoted by code actions.
#include "answers.h"

namespace ss::lsp {

namespace {

namespace severity {
constexpr int error = 1, warning = 2, information = 3, hint = 4;
}

}  // namespace

json diagnostic_to_lsp(const Diagnostic& d, const Converter& at, const DiagnosticStyle& style) {
  std::string_view code = info(d.code).code;
  int level = d.severity == Severity::error ? severity::error : d.severity == Severity::warning ? severity::warning : severity::information;
  if (style.serving.hint && info(d.code).category == DiagnosticCategory::serving) level = severity::hint;
  std::string message = d.message;
  for (const std::string& note : d.notes) message += "\nnote: " + note;
  for (const std::string& help : d.helps) message += "\nhelp: " + help;
  json out = {{"range", at.range(d.primary.span)},
              {"severity", level},
              {"code", code},
              {"source", "shapescript"},
              {"message", message}};
  if (!style.error_docs.empty()) out["codeDescription"] = {{"href", style.error_docs + std::string(code) + ".md"}};
  if (!d.secondary.empty()) {
    json related = json::array();
    for (const Label& label : d.secondary) related.push_back({{"location", at.location(label.span)}, {"message", label.text}});
    out["relatedInformation"] = std::move(related);
  }
  return out;
}

json diagnostics_to_lsp(const Analysis& analysis, const Converter& at, const DiagnosticStyle& style) {
  json out = json::array();
  for (const Diagnostic& d : analysis.diagnostics) out.push_back(diagnostic_to_lsp(d, at, style));
  return out;
}

}  // namespace ss::lsp
