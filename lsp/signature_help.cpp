// textDocument/signatureHelp: the call around the cursor, found in the text, and its active argument.
#include "answers.h"

#include "check/builtins.h"

namespace ss::lsp {

namespace {

// parentheses, split at top-level commas.
std::vector<std::pair<size_t, size_t>> split_parameters(std::string_view label) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t open = label.find('(');
  if (open == std::string_view::npos) return out;
  int depth = 0;
  bool in_string = false;
  size_t start = open + 1;
  for (size_t i = open + 1; i < label.size(); ++i) {
    char c = label[i];
    if (in_string) {
      if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    else if ((c == ',' && depth == 0) || (c == ')' && depth == 0)) {
      size_t b = start, e = i;
      while (b < e && label[b] == ' ') ++b;
      while (e > b && label[e - 1] == ' ') --e;
      if (e > b) out.emplace_back(b, e);
      start = i + 1;
      if (c == ')') break;
    }
  }
  return out;
}

// The call around `offset`, found by walking back over balanced brackets.
struct CallSite {
  std::string callee;     // last segment of a dotted name
  size_t active = 0;      // comma-counted argument, after the piped one
  bool piped = false;     // `x |> f(...)`: x is the first argument
  std::string keyword;    // the argument being written is `keyword=...`
};

std::optional<CallSite> find_call(std::string_view text, uint32_t offset) {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text.size()));
  constexpr uint32_t kLookBack = 8192;
  uint32_t limit = offset > kLookBack ? offset - kLookBack : 0;
  int depth = 0;
  uint32_t open = UINT32_MAX;
  for (uint32_t i = offset; i > limit;) {
    --i;
    char c = text[i];
    if (c == '"') {  // skip back over a string
      while (i > limit && text[--i] != '"') {
      }
      continue;
    }
    if (c == ')' || c == ']') ++depth;
    else if (c == '[' && depth > 0) --depth;
    else if (c == '[') return std::nullopt;  // inside a subscript or a type
    else if (c == '(') {
      if (depth == 0) {
        open = i;
        break;
      }
      --depth;
    } else if (c == ':' && depth == 0 && (i + 1 == text.size() || text[i + 1] == '\n' || text[i + 1] == '\r')) {
      return std::nullopt;  // the end of a block's header line: no call encloses us
    }
  }
  if (open == UINT32_MAX) return std::nullopt;
  uint32_t end = open;
  while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
  uint32_t begin = end;
  while (begin > 0 && is_identifier_char(text[begin - 1])) --begin;
  if (begin == end) return std::nullopt;
  CallSite site;
  site.callee = std::string(text.substr(begin, end - begin));
  // `|>` before the callee (or before its dotted prefix) means a piped first argument.
  uint32_t before = begin;
  while (before > 0 && (is_identifier_char(text[before - 1]) || text[before - 1] == '.')) --before;
  while (before > 0 && std::isspace(static_cast<unsigned char>(text[before - 1]))) --before;
  site.piped = before >= 2 && text.substr(before - 2, 2) == "|>";
  // Count top-level commas from the parenthesis to the cursor.
  depth = 0;
  bool in_string = false;
  uint32_t argument_start = open + 1;
  for (uint32_t i = open + 1; i < offset; ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '(' || c == '[') ++depth;
    else if ((c == ')' || c == ']') && depth > 0) --depth;
    else if (c == ',' && depth == 0) {
      ++site.active;
      argument_start = i + 1;
    }
  }
  std::string_view argument = text.substr(argument_start, offset - argument_start);
  size_t k = 0;
  while (k < argument.size() && std::isspace(static_cast<unsigned char>(argument[k]))) ++k;
  size_t name_begin = k;
  while (k < argument.size() && is_identifier_char(argument[k])) ++k;
  size_t name_end = k;
  while (k < argument.size() && argument[k] == ' ') ++k;
  if (name_end > name_begin && k < argument.size() && argument[k] == '=' && (k + 1 >= argument.size() || argument[k + 1] != '='))
    site.keyword = std::string(argument.substr(name_begin, name_end - name_begin));
  return site;
}

}  // namespace

json signature_help(const Analysis& analysis, const Converter& at, uint32_t offset, Markup markup) {
  auto site = find_call(at.document().text(), offset);
  if (!site) return nullptr;
  std::string label, documentation;
  if (const Item* item = analysis.find_item(site->callee);
      item && (item->kind == Item::Kind::function || item->kind == Item::Kind::extern_fn)) {
    label = signature_label(analysis, *item);
    documentation = item->doc;
  } else if (const Builtin* b = find_builtin(site->callee)) {
    label = std::string(b->signature);
    documentation = std::string(b->summary);
  } else {
    return nullptr;
  }
  auto parameters = split_parameters(label);
  if (parameters.empty() && label.find('(') == std::string::npos) return nullptr;
  json params = json::array();
  std::vector<std::string> names;
  for (auto [b, e] : parameters) {
    params.push_back({{"label", {utf16_length(std::string_view(label).substr(0, b)), utf16_length(std::string_view(label).substr(0, e))}}});
    std::string_view p = std::string_view(label).substr(b, e - b);
    size_t n = 0;
    while (n < p.size() && is_identifier_char(p[n])) ++n;
    names.emplace_back(p.substr(0, n));
  }
  size_t active = site->active + (site->piped ? 1 : 0);
  if (!site->keyword.empty()) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == site->keyword) active = i;
  }
  if (!parameters.empty()) {
    // `concat(a, b, .., over=A)`: arguments past the `..` stay on it.
    for (size_t i = 0; i < parameters.size(); ++i)
      if (names[i].empty() && std::string_view(label).substr(parameters[i].first, 2) == ".." && active > i &&
          site->keyword.empty())
        active = i;
    active = std::min(active, parameters.size() - 1);
  }
  json signature = {{"label", label}, {"parameters", params}, {"activeParameter", active}};
  if (!documentation.empty()) signature["documentation"] = markup_content(documentation, markup);
  return {{"signatures", json::array({signature})}, {"activeSignature", 0}, {"activeParameter", active}};
}

}  // namespace ss::lsp
