// The core's plain results (ss::Analysis) as LSP messages, one file per request (hover.cpp,
// completion.cpp, ...). Nothing here knows about transport, scheduling or documents' versions.
#pragma once
#include <nlohmann/json.hpp>

#include <cctype>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "check/analysis.h"
#include "document_text.h"

namespace ss::lsp {

using json = nlohmann::json;

// What `shapescript.servingSeverity` asks for: the severity the core reports E33xx at, and whether
// the server shows them as hints (which the core does not have).
struct ServingSeverity {
  std::optional<Severity> core = Severity::information;
  bool hint = false;
  static std::optional<ServingSeverity> parse(std::string_view setting);  // nullopt: not a setting
};

// How a client shows documentation (LSP's MarkupKind). The core writes Markdown; a client that
// puts plaintext first in its capabilities gets it as plain text.
enum class Markup { markdown, plaintext };
struct ClientMarkup {
  Markup hover = Markup::markdown, completion = Markup::markdown, signature_help = Markup::markdown;
  static ClientMarkup from_capabilities(const json& capabilities);  // initialize's params.capabilities
};
// {"kind", "value"} for Markdown text, turned into plain text where `kind` asks for it.
json markup_content(const std::string& markdown, Markup kind);
// Markdown as plain text: code fences dropped around their code, backticks and bold's ** pairs removed.
std::string markdown_to_plain(const std::string& markdown);

// Byte offsets of one document to LSP positions, and back.
class Converter {
 public:
  Converter(std::string uri, const TextDocument& document) : uri_(std::move(uri)), document_(document) {}
  const std::string& uri() const { return uri_; }
  const TextDocument& document() const { return document_; }
  json position(uint32_t offset) const;
  json range(Span span) const;
  json location(Span span) const;
  uint32_t offset(const json& position) const;  // clamped; throws json errors on a malformed one

 private:
  std::string uri_;
  const TextDocument& document_;
};

// How diagnostics are shown: the serving codes' severity, and where each code's page is
// (`docs/errors/`, as a URI prefix; empty: no link, `shapescript explain CODE` shows it).
struct DiagnosticStyle {
  ServingSeverity serving;
  std::string error_docs;
};

json diagnostic_to_lsp(const Diagnostic& diagnostic, const Converter& at, const DiagnosticStyle& style);
json diagnostics_to_lsp(const Analysis& analysis, const Converter& at, const DiagnosticStyle& style);

json hover(const Analysis& analysis, const Converter& at, uint32_t offset, Markup markup = Markup::markdown);
json definition(const Analysis& analysis, const Converter& at, uint32_t offset);
json document_symbols(const Analysis& analysis, const Converter& at);
json completion(const Analysis& analysis, const Converter& at, uint32_t offset, Markup markup = Markup::markdown);
json signature_help(const Analysis& analysis, const Converter& at, uint32_t offset, Markup markup = Markup::markdown);
json code_actions(const Analysis& analysis, const Converter& at, uint32_t begin, uint32_t end, const json& only,
                  const DiagnosticStyle& style);
json inlay_hints(const Analysis& analysis, const Converter& at, uint32_t begin, uint32_t end);
json semantic_tokens(const Analysis& analysis, const Converter& at);
const std::vector<std::string>& semantic_token_types();      // the legend, in the order of the data's indices
const std::vector<std::string>& semantic_token_modifiers();  // bit i is modifier i
json references(const Analysis& analysis, const Converter& at, uint32_t offset, bool include_declaration);
json prepare_rename(const Analysis& analysis, const Converter& at, uint32_t offset);
json rename(const Analysis& analysis, const Converter& at, uint32_t offset, const std::string& new_name);

// A request that is well formed but can't be done (LSP's RequestFailed), with a message for the user.
struct RequestFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A symbol's declaration and its uses, from the core's definition facts.
struct Occurrences {
  Span declaration;
  std::vector<Span> uses;  // in order, each once
};
std::optional<Occurrences> occurrences(const Analysis& analysis, uint32_t offset);

// ShapeScript's reserved words.
inline constexpr const char* kKeywords[] = {"and", "as", "dim", "elif", "else", "export", "extern", "fn", "for", "if",
                                            "import", "in", "model", "or", "over", "param", "python", "return"};

// Helpers over the core's data that would sit well in the core (see lsp/README.md).
std::string signature_label(const Analysis& analysis, const Item& item);
const Item* enclosing_item(const Analysis& analysis, uint32_t offset);
std::string source_text(const Analysis& analysis, Span span);  // a span's text, spaces squashed

inline bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The innermost of `facts` whose span contains `offset`; a span ending right at `offset` counts
// when none contains it (the cursor just after a name).
template <typename Facts, typename SpanOf>
const typename Facts::value_type* innermost(const Facts& facts, uint32_t offset, SpanOf span_of) {
  using T = typename Facts::value_type;
  const T* best = nullptr;
  for (int pass = 0; pass < 2 && !best; ++pass)
    for (const T& fact : facts) {
      Span s = span_of(fact);
      bool inside = pass == 0 ? s.contains(offset) : (s.end == offset && !s.empty());
      if (inside && (!best || s.end - s.begin < span_of(*best).end - span_of(*best).begin)) best = &fact;
    }
  return best;
}

}  // namespace ss::lsp
