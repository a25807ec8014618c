// textDocument/codeAction: the fixes of the diagnostics the range touches, as quick fixes.
#include "answers.h"

namespace ss::lsp {

json code_actions(const Analysis& analysis, const Converter& at, uint32_t begin, uint32_t end, const json& only,
                  const DiagnosticStyle& style) {
  json out = json::array();
  if (only.is_array()) {
    bool wanted = false;
    for (const json& kind : only)
      if (kind.is_string() && (kind == "quickfix" || kind == "")) wanted = true;
    if (!wanted) return out;
  }
  if (end < begin) std::swap(begin, end);
  for (const Diagnostic& d : analysis.diagnostics) {
    if (d.fixes.empty()) continue;
    if (d.primary.span.begin > end || begin > d.primary.span.end) continue;
    json diagnostic = diagnostic_to_lsp(d, at, style);
    for (const Fix& fix : d.fixes) {
      json edits = json::array();
      for (const TextEdit& edit : fix.edits) edits.push_back({{"range", at.range(edit.span)}, {"newText", edit.replacement}});
      out.push_back({{"title", fix.title},
                     {"kind", "quickfix"},
                     {"diagnostics", json::array({diagnostic})},
                     {"isPreferred", d.fixes.size() == 1},
                     {"edit", {{"changes", {{at.uri(), edits}}}}}});
    }
  }
  return out;
}

}  // namespace ss::lsp
