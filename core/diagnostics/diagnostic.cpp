#include "diagnostics/diagnostic.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace ss {

namespace {
const std::vector<DiagnosticInfo>& table() {
  static const std::vector<DiagnosticInfo> entries = {
#define DIAGNOSTIC(code, name, category, summary) {#code, #name, DiagnosticCategory::category, summary},
#include "diagnostics/diagnostic_codes.def"
#undef DIAGNOSTIC
  };
  return entries;
}
}  // namespace

const DiagnosticInfo& info(DiagnosticCode code) { return table()[static_cast<size_t>(code)]; }

const std::vector<DiagnosticCode>& all_codes() {
  static const std::vector<DiagnosticCode> codes = [] {
    std::vector<DiagnosticCode> result;
    for (size_t i = 0; i < table().size(); ++i) result.push_back(static_cast<DiagnosticCode>(i));
    return result;
  }();
  return codes;
}

std::optional<DiagnosticCode> find_code(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (size_t i = 0; i < table().size(); ++i)
    if (table()[i].code == upper) return static_cast<DiagnosticCode>(i);
  return std::nullopt;
}

std::string dim_word(size_t index) { return "dim " + std::to_string(index); }

void drop_nested_fixes(std::vector<Diagnostic>& diagnostics) {
  struct Rewrite {
    Span span;
    size_t owner = SIZE_MAX;  // the diagnostic whose first fix it is
  };
  std::vector<Rewrite> rewrites;
  for (size_t i = 0; i < diagnostics.size(); ++i)
    if (!diagnostics[i].fixes.empty() && diagnostics[i].fixes[0].edits.size() == 1) rewrites.push_back({diagnostics[i].fixes[0].edits[0].span, i});
  if (rewrites.size() < 2) return;
  std::sort(rewrites.begin(), rewrites.end(), [](const Rewrite& a, const Rewrite& b) { return a.span.begin < b.span.begin; });
  // Of the rewrites up to each one (by where they begin): the one reaching furthest, and the one
  // reaching furthest of another owner, so a diagnostic's own fixes never count. Linear, not a
  // pair per two diagnostics, for a file with thousands of them.
  std::vector<std::array<Rewrite, 2>> furthest(rewrites.size());
  for (size_t k = 0; k < rewrites.size(); ++k) {
    std::array<Rewrite, 3> candidates{rewrites[k], k ? furthest[k - 1][0] : Rewrite{}, k ? furthest[k - 1][1] : Rewrite{}};
    std::sort(candidates.begin(), candidates.end(), [](const Rewrite& a, const Rewrite& b) {
      return (a.owner != SIZE_MAX) > (b.owner != SIZE_MAX) || ((a.owner != SIZE_MAX) == (b.owner != SIZE_MAX) && a.span.end > b.span.end);
    });
    furthest[k][0] = candidates[0];
    for (size_t c = 1; c < 3; ++c)
      if (candidates[c].owner != candidates[0].owner) {
        furthest[k][1] = candidates[c];
        break;
      }
  }
  auto moot = [&](Span edit, size_t owner) {
    // An insertion is inside a rewrite only strictly between its ends: one at either end (`, over=V`
    // before the `)` that ends a rewritten argument) writes beside the rewritten text, not into it.
    const bool insertion = edit.begin == edit.end;
    auto after = insertion ? std::lower_bound(rewrites.begin(), rewrites.end(), edit.begin, [](const Rewrite& r, uint32_t at) { return r.span.begin < at; })
                           : std::upper_bound(rewrites.begin(), rewrites.end(), edit.begin, [](uint32_t at, const Rewrite& r) { return at < r.span.begin; });
    if (after == rewrites.begin()) return false;
    for (const Rewrite& r : furthest[static_cast<size_t>(after - rewrites.begin()) - 1])
      if (r.owner != SIZE_MAX && r.owner != owner)
        return insertion ? r.span.end > edit.end : r.span.end >= edit.end && (r.span.begin < edit.begin || r.span.end > edit.end);
    return false;
  };
  auto is_moot = [&](const Fix& fix, size_t owner) {
    return !fix.edits.empty() && std::ranges::all_of(fix.edits, [&](const TextEdit& e) { return moot(e.span, owner); });
  };
  for (size_t i = 0; i < diagnostics.size(); ++i) {
    // A first fix within another's rewrite is made by it; the alternatives to it go too (`import
    // python torch` beside a rewrite that writes `stack` for `torch.stack`).
    if (!diagnostics[i].fixes.empty() && is_moot(diagnostics[i].fixes[0], i)) diagnostics[i].fixes.clear();
    std::erase_if(diagnostics[i].fixes, [&](const Fix& fix) { return is_moot(fix, i); });
  }
}

DiagnosticBuilder::DiagnosticBuilder(Sink sink, DiagnosticCode code, Span span, std::string message) : sink_(std::move(sink)) {
  diagnostic_.code = code;
  diagnostic_.message = std::move(message);
  diagnostic_.primary.span = span;
}

DiagnosticBuilder::DiagnosticBuilder(DiagnosticBuilder&& other) noexcept
    : sink_(std::move(other.sink_)), diagnostic_(std::move(other.diagnostic_)) {
  other.sink_ = nullptr;  // only one of the two reports it
}

DiagnosticBuilder::~DiagnosticBuilder() { emit(); }

void DiagnosticBuilder::emit() {
  if (sink_) sink_(std::move(diagnostic_));
  sink_ = nullptr;
}

DiagnosticBuilder& DiagnosticBuilder::label(std::string text) {
  diagnostic_.primary.text = std::move(text);
  return *this;
}

DiagnosticBuilder& DiagnosticBuilder::secondary(Span span, std::string text) {
  diagnostic_.secondary.push_back({span, std::move(text)});
  return *this;
}

DiagnosticBuilder& DiagnosticBuilder::note(std::string text) {
  diagnostic_.notes.push_back(std::move(text));
  return *this;
}

DiagnosticBuilder& DiagnosticBuilder::help(std::string text) {
  diagnostic_.helps.push_back(std::move(text));
  return *this;
}

DiagnosticBuilder& DiagnosticBuilder::fix(std::string title, std::vector<TextEdit> edits) {
  diagnostic_.fixes.push_back({std::move(title), std::move(edits)});
  return *this;
}

DiagnosticBuilder& DiagnosticBuilder::fix(std::string title, Span span, std::string replacement) {
  return fix(std::move(title), std::vector<TextEdit>{{span, std::move(replacement)}});
}

DiagnosticBuilder& DiagnosticBuilder::suggest(Span span, const std::optional<std::string>& suggestion) {
  if (!suggestion) return *this;
  return help("did you mean `" + *suggestion + "`?").fix("change to `" + *suggestion + "`", span, *suggestion);
}

DiagnosticBuilder& DiagnosticBuilder::severity(Severity severity) {
  diagnostic_.severity = severity;
  return *this;
}

}  // namespace ss
