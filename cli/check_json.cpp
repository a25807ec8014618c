#include "check_json.h"

namespace ss {

std::string_view severity_name(Severity s) {
  return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "information";
}

nlohmann::json diagnostic_json(const SourceFile& file, const Diagnostic& d) {
  auto position = [&](Span span) {
    LineColumn begin = file.line_column(span.begin), end = file.line_column(span.end);
    return nlohmann::json{{"line", begin.line + 1}, {"column", begin.column + 1}, {"end_line", end.line + 1}, {"end_column", end.column + 1}};
  };
  nlohmann::json labels = nlohmann::json::array();
  for (const Label& label : d.secondary) labels.push_back({{"span", position(label.span)}, {"text", label.text}});
  nlohmann::json fixes = nlohmann::json::array();
  for (const Fix& fix : d.fixes) {
    nlohmann::json edits = nlohmann::json::array();
    for (const TextEdit& edit : fix.edits) edits.push_back({{"span", position(edit.span)}, {"replacement", edit.replacement}});
    fixes.push_back({{"title", fix.title}, {"edits", edits}});
  }
  return {{"file", file.path()},
          {"code", info(d.code).code},
          {"severity", severity_name(d.severity)},
          {"message", d.message},
          {"span", position(d.primary.span)},
          {"label", d.primary.text},
          {"secondary", labels},
          {"notes", d.notes},
          {"helps", d.helps},
          {"fixes", fixes}};
}

}  // namespace ss
