#include "diagnostics/diagnostic.h"

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
