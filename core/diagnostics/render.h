// Renders diagnostics as text in rustc's layout, the one the book prints.
#pragma once
#include <string>
#include <vector>

#include "diagnostics/diagnostic.h"
#include "syntax/source.h"

namespace ss {

struct RenderOptions {
  bool color = false;
};

// One diagnostic block, ending with a blank line.
std::string render_diagnostic(const SourceFile& file, const Diagnostic& diagnostic, const RenderOptions& options = {});

// "For more information about E1701, run `shapescript explain E1701`." for the codes seen; empty if none.
std::string render_explain_footer(const std::vector<Diagnostic>& diagnostics, const RenderOptions& options = {});

// One-based line and column as the book prints them (columns count characters).
std::string render_location(const SourceFile& file, Span span);

}  // namespace ss
