#include "fuzz_entry.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "check/analysis.h"
#include "diagnostics/render.h"

namespace ss_fuzz {
namespace {

[[noreturn]] void violated(const char* what, ss::Span span, size_t size) {
  std::fprintf(stderr, "fuzz invariant violated: %s span [%u, %u) outside a file of %zu bytes\n", what,
               span.begin, span.end, size);
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

}  // namespace

void check_one(std::string_view bytes) {
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
  check_symbols(analysis->symbols, file, 0);
  for (const auto& e : analysis->exports) check_span("export name", e.name_span, size);
  (void)analysis->has_errors();
}

}  // namespace ss_fuzz
