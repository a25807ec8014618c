// What the requests' files share: settings, markup, positions, and helpers over the core's data.
#include "answers.h"

#include <algorithm>

namespace ss::lsp {

std::string source_text(const Analysis& analysis, Span span) { return squash_spaces(analysis.file.slice(span)); }

std::optional<ServingSeverity> ServingSeverity::parse(std::string_view setting) {
  ServingSeverity s;
  if (setting == "error") s.core = Severity::error;
  else if (setting == "warning") s.core = Severity::warning;
  else if (setting == "information" || setting == "info") s.core = Severity::information;
  else if (setting == "hint") s.core = Severity::information, s.hint = true;
  else if (setting == "off") s.core = std::nullopt;
  else return std::nullopt;
  return s;
}

json Converter::position(uint32_t offset) const {
  Position p = document_.position_of(offset);
  return {{"line", p.line}, {"character", p.character}};
}

json Converter::range(Span span) const { return {{"start", position(span.begin)}, {"end", position(std::max(span.begin, span.end))}}; }

json Converter::location(Span span) const { return {{"uri", uri_}, {"range", range(span)}}; }

uint32_t Converter::offset(const json& position) const {
  auto number = [](const json& value) -> uint32_t {
    if (value.is_number_unsigned()) return static_cast<uint32_t>(std::min<uint64_t>(value.get<uint64_t>(), UINT32_MAX));
    if (value.is_number_integer()) return static_cast<uint32_t>(std::clamp<int64_t>(value.get<int64_t>(), 0, UINT32_MAX));
    if (value.is_number_float()) return static_cast<uint32_t>(std::clamp(value.get<double>(), 0.0, double(UINT32_MAX)));
    throw json::type_error::create(302, "a position's line and character must be numbers", nullptr);
  };
  return document_.offset_of({number(position.at("line")), number(position.at("character"))});
}

std::string signature_label(const Analysis& analysis, const Item& item) {
  std::string out = std::string(item.kind == Item::Kind::extern_fn ? "extern fn " : "fn ") + item.name + "(";
  for (size_t i = 0; i < item.parameters.size(); ++i)
    out += (i ? ", " : "") + item.parameters[i].name + ": " + source_text(analysis, item.parameters[i].type.span);
  out += ")";
  if (item.result) out += " -> " + source_text(analysis, item.result->span);
  return out;
}

const Item* enclosing_item(const Analysis& analysis, uint32_t offset) {
  const Item* found = nullptr;
  for (const Item& item : analysis.program.items)
    if (item.span.begin <= offset) found = &item;
  return found;
}

std::string markdown_to_plain(const std::string& markdown) {
  std::string out;
  bool in_code = false;
  size_t start = 0;
  while (start <= markdown.size()) {
    size_t end = markdown.find('\n', start);
    if (end == std::string::npos) end = markdown.size();
    std::string_view line(markdown.data() + start, end - start);
    bool fence = line.starts_with("```");
    if (fence) in_code = !in_code;
    else if (in_code) out.append(line);
    else {
      // Bold is a pair of ** on one line: a lone ** (a power in a doc comment) stays.
      std::string text;
      for (char c : line)
        if (c != '`') text += c;
      for (size_t open = text.find("**"); open != std::string::npos; open = text.find("**", open)) {
        size_t close = text.find("**", open + 2);
        if (close == std::string::npos) break;
        text.erase(close, 2);
        text.erase(open, 2);
        open = close - 2;
      }
      out += text;
    }
    if (end == markdown.size()) break;
    if (!fence) out += '\n';
    start = end + 1;
  }
  return out;
}

json markup_content(const std::string& markdown, Markup kind) {
  if (kind == Markup::plaintext) return {{"kind", "plaintext"}, {"value", markdown_to_plain(markdown)}};
  return {{"kind", "markdown"}, {"value", markdown}};
}

ClientMarkup ClientMarkup::from_capabilities(const json& capabilities) {
  // A list of formats in the client's order of preference: plain text when it comes first.
  auto preferred = [&](std::initializer_list<const char*> path) {
    const json* at = &capabilities;
    for (const char* key : path) {
      if (!at->is_object() || !at->contains(key)) return Markup::markdown;
      at = &(*at)[key];
    }
    return at->is_array() && !at->empty() && *at->begin() == "plaintext" ? Markup::plaintext : Markup::markdown;
  };
  ClientMarkup out;
  out.hover = preferred({"textDocument", "hover", "contentFormat"});
  out.completion = preferred({"textDocument", "completion", "completionItem", "documentationFormat"});
  out.signature_help = preferred({"textDocument", "signatureHelp", "signatureInformation", "documentationFormat"});
  return out;
}

}  // namespace ss::lsp
