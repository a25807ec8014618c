// Diagnostics as LSP diagnostics: published after each check, and quoted by code actions.
#include "answers.h"

namespace ss::lsp {

namespace {

namespace severity {
constexpr int error = 1, warning = 2, information = 3, hint = 4;
}

}  // namespace

json diagnostic_to_lsp(const Diagnostic& d, const Converter& at, const ServingSeverity& serving) {
  std::string_view code = info(d.code).code;
  int level = d.severity == Severity::error ? severity::error : d.severity == Severity::warning ? severity::warning : severity::information;
  if (serving.hint && info(d.code).category == DiagnosticCategory::serving) level = severity::hint;
  std::string message = d.message;
  for (const std::string& note : d.notes) message += "\nnote: " + note;
  for (const std::string& help : d.helps) message += "\nhelp: " + help;
  json out = {{"range", at.range(d.primary.span)},
              {"severity", level},
              {"code", code},
              {"codeDescription", {{"href", std::string(kErrorIndex) + std::string(code)}}},
              {"source", "shapescript"},
              {"message", message}};
  if (!d.secondary.empty()) {
    json related = json::array();
    for (const Label& label : d.secondary) related.push_back({{"location", at.location(label.span)}, {"message", label.text}});
    out["relatedInformation"] = std::move(related);
  }
  return out;
}

json diagnostics_to_lsp(const Analysis& analysis, const Converter& at, const ServingSeverity& serving) {
  json out = json::array();
  for (const Diagnostic& d : analysis.diagnostics) out.push_back(diagnostic_to_lsp(d, at, serving));
  return out;
}

}  // namespace ss::lsp
