// textDocument/semanticTokens/full: what each name is (a dim, an axis of a signature, a function, a
// model, a model param, a parameter, a local), read off the core's definition facts, so an editor
// colours `D` in `[b n D]` as the fixed size it is and `n` as the axis it is, wherever they appear.
#include <algorithm>
#include <map>

#include "answers.h"

namespace ss::lsp {

const std::vector<std::string>& semantic_token_types() {
  // "dim" and "axis" are ShapeScript's own; editors/vscode/package.json declares them with the
  // standard types they fall back to (enumMember and typeParameter).
  static const std::vector<std::string> types = {"dim", "axis", "function", "class", "property", "parameter", "variable"};
  return types;
}

const std::vector<std::string>& semantic_token_modifiers() {
  static const std::vector<std::string> modifiers = {"declaration", "readonly"};
  return modifiers;
}

namespace {

enum TokenType { dim, axis, function, model, model_param, parameter, variable };
constexpr uint32_t kDeclaration = 1, kReadonly = 2;

struct Token {
  Span span;
  TokenType type;
  uint32_t modifiers;
};

// What each declaration is, keyed by its name's span; a target found in no item is an axis when a
// signature's type holds it (its first mention declares it), else a local.
std::map<std::pair<uint32_t, uint32_t>, TokenType> declaration_kinds(const Analysis& analysis) {
  std::map<std::pair<uint32_t, uint32_t>, TokenType> kinds;
  auto key = [](Span s) { return std::pair{s.begin, s.end}; };
  for (const Item& item : analysis.program.items) {
    switch (item.kind) {
      case Item::Kind::dim: kinds[key(item.name_span)] = dim; break;
      case Item::Kind::function:
      case Item::Kind::extern_fn: kinds[key(item.name_span)] = function; break;
      case Item::Kind::model: kinds[key(item.name_span)] = model; break;
      case Item::Kind::python_import: break;
    }
    for (const Parameter& p : item.parameters) kinds[key(p.name_span)] = parameter;
    for (const Item::Param& p : item.params) kinds[key(p.name_span)] = model_param;
  }
  // The signatures' types, begin -> end (they don't overlap): a lookup per target, not a scan.
  std::map<uint32_t, uint32_t> signature_types;
  auto add = [&](Span type) { signature_types[type.begin] = std::max(signature_types[type.begin], type.end); };
  for (const Item& item : analysis.program.items) {
    for (const Parameter& p : item.parameters) add(p.type.span);
    if (item.result) add(item.result->span);
  }
  auto in_signature = [&](Span s) {
    auto after = signature_types.upper_bound(s.begin);
    return after != signature_types.begin() && s.end <= std::prev(after)->second;
  };
  for (const DefinitionFact& fact : analysis.definitions)
    if (!kinds.count(key(fact.target))) kinds[key(fact.target)] = in_signature(fact.target) ? axis : variable;
  return kinds;
}

uint32_t readonly_for(TokenType type) { return type == dim || type == axis ? kReadonly : 0; }

}  // namespace

json semantic_tokens(const Analysis& analysis, const Converter& at) {
  auto kinds = declaration_kinds(analysis);
  std::vector<Token> tokens;
  for (const auto& [span, type] : kinds) {
    Span s{span.first, span.second};
    if (!s.empty()) tokens.push_back({s, type, kDeclaration | readonly_for(type)});
  }
  for (const DefinitionFact& fact : analysis.definitions) {
    auto found = kinds.find({fact.target.begin, fact.target.end});
    if (found != kinds.end() && !fact.use.empty()) tokens.push_back({fact.use, found->second, readonly_for(found->second)});
  }
  // One token per span, in document order (the checker may visit a use more than once).
  std::sort(tokens.begin(), tokens.end(), [](const Token& a, const Token& b) {
    return a.span.begin != b.span.begin ? a.span.begin < b.span.begin : a.modifiers > b.modifiers;
  });
  json data = json::array();
  uint32_t line = 0, character = 0, last_end = 0;
  bool first = true;
  for (const Token& token : tokens) {
    if (!first && token.span.begin < last_end) continue;  // overlapping or repeated
    json begin = at.position(token.span.begin), end = at.position(token.span.end);
    uint32_t token_line = begin["line"], token_character = begin["character"];
    if (end["line"].get<uint32_t>() != token_line) continue;  // tokens are single-line
    uint32_t length = end["character"].get<uint32_t>() - token_character;
    data.push_back(token_line - line);
    data.push_back(token_line == line ? token_character - character : token_character);
    data.push_back(length);
    data.push_back(static_cast<uint32_t>(token.type));
    data.push_back(token.modifiers);
    line = token_line, character = token_character, last_end = token.span.end, first = false;
  }
  return {{"data", data}};
}

}  // namespace ss::lsp
