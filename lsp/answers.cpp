#include "answers.h"

#include <algorithm>
#include <set>

#include "check/builtins.h"
#include "syntax/walk.h"

namespace ss::lsp {

namespace {

// LSP enumerations used here.
namespace severity {
constexpr int error = 1, warning = 2, information = 3, hint = 4;
}
namespace completion_kind {
constexpr int function = 3, field = 5, variable = 6, class_ = 7, module = 9, keyword = 14, constant = 21, struct_ = 22,
              type_parameter = 25;
}
namespace symbol_kind {
constexpr int module = 2, class_ = 5, field = 8, function = 12, constant = 14;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string source_text(const Analysis& analysis, Span span) { return squash_spaces(analysis.file.slice(span)); }

// The innermost of `spans` containing `offset`; a span ending right at `offset` counts when none
// contains it (the cursor just after a name).
template <typename T, typename SpanOf>
const T* innermost(const std::vector<T>& facts, uint32_t offset, SpanOf span_of) {
  const T* best = nullptr;
  for (int pass = 0; pass < 2 && !best; ++pass)
    for (const T& fact : facts) {
      Span s = span_of(fact);
      bool inside = pass == 0 ? s.contains(offset) : (s.end == offset && !s.empty());
      if (inside && (!best || s.end - s.begin < span_of(*best).end - span_of(*best).begin)) best = &fact;
    }
  return best;
}

bool in_comment(std::string_view line_before_cursor) {
  bool in_string = false;
  for (char c : line_before_cursor) {
    if (c == '"') in_string = !in_string;
    else if (c == '#' && !in_string) return true;
  }
  return false;
}

void collect_size_names(const SizeNode& node, std::vector<std::string>& out) {
  switch (node.kind) {
    case SizeNode::Kind::name:
    case SizeNode::Kind::scaled:
      if (!node.name.empty()) out.push_back(node.name);
      break;
    case SizeNode::Kind::unknown:
      if (!node.name.empty()) out.push_back(node.name.starts_with("?") ? node.name.substr(1) : node.name);
      break;
    default: break;
  }
  for (const SizeNode& child : node.children) collect_size_names(child, out);
}

void collect_type_names(const TypeNode& type, std::vector<std::string>& out) {
  for (const SizeNode& axis : type.axes) collect_size_names(axis, out);
}

struct CompletionList {
  Markup markup = Markup::markdown;
  json items = json::array();
  std::set<std::string> seen;
  void add(const std::string& label, int kind, const std::string& detail, const std::string& documentation, int rank) {
    if (label.empty() || !seen.insert(label).second) return;
    json item = {{"label", label}, {"kind", kind}, {"sortText", std::to_string(rank) + "_" + label}};
    if (!detail.empty()) item["detail"] = detail;
    if (!documentation.empty()) item["documentation"] = markup_content(documentation, markup);
    items.push_back(std::move(item));
  }
};

// Names assigned in `block` before `offset`, loop variables of loops around it, and the
// parameters of lambdas around it (`i` in `map(i => |)`).
void collect_locals(const Analysis& analysis, const Block& block, uint32_t offset, CompletionList& list) {
  for_each_statement(block, [&](const Statement& statement) {
    if (statement.span.begin >= offset) return Walk::stop;
    if (statement.kind == Statement::Kind::assign) {
      for (const auto& [name, span] : statement.targets) {
        std::string detail;
        for (const InlayFact& inlay : analysis.inlays)
          if (inlay.offset == span.end) detail = inlay.label.starts_with(": ") ? inlay.label.substr(2) : inlay.label;
        list.add(name, completion_kind::variable, detail, "", 0);
      }
    }
    bool inside = offset <= statement.span.end;
    if (!inside) return Walk::skip;
    auto lambda_parameters = [&](const Expr& e) {
      for_each_expr(e, [&](const Expr& x) {
        if (x.kind == Expr::Kind::lambda && x.text_span.end < offset && offset <= x.span.end)
          list.add(x.text, completion_kind::variable, "lambda parameter", "", 0);
      });
    };
    if (statement.value) lambda_parameters(*statement.value);
    if (statement.end) lambda_parameters(*statement.end);
    for (const auto& [condition, body] : statement.branches)
      if (condition) lambda_parameters(*condition);
    if (statement.kind == Statement::Kind::for_) {
      list.add(statement.variable, completion_kind::variable, "loop index", "", 0);
      return Walk::into;
    }
    if (statement.kind == Statement::Kind::if_) {
      // Only the branch the cursor is in: another branch's names aren't bound there.
      for (const auto& [condition, body] : statement.branches)
        if (body && body->span.begin <= offset && offset <= body->span.end) collect_locals(analysis, *body, offset, list);
      if (statement.body && statement.body->span.begin <= offset) collect_locals(analysis, *statement.body, offset, list);
    }
    return Walk::skip;
  });
}

std::string item_detail(const Analysis& analysis, const Item& item) {
  switch (item.kind) {
    case Item::Kind::dim: {
      auto it = analysis.semantics.dims.find(item.name);
      return "dim " + item.name + (it != analysis.semantics.dims.end() ? " = " + std::to_string(it->second) : "");
    }
    case Item::Kind::python_import: return "import python " + item.name;
    case Item::Kind::extern_fn:
    case Item::Kind::function: return signature_label(analysis, item);
    case Item::Kind::model: return "model " + item.name;
  }
  return "";
}

// Parameters of a signature written `name(a, b: [x y], c=1) -> T`: the text between the outer
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

// ---------------------------------------------------------------------------------------------

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

json diagnostic_to_lsp(const Diagnostic& d, const Converter& at, const ServingSeverity& serving) {
  std::string_view code = info(d.code).code;
  int level = d.severity == Severity::error ? severity::error : d.severity == Severity::warning ? severity::warning : severity::information;
  if (serving.hint && info(d.code).category == DiagnosticCategory::serving) level = severity::hint;
  std::string message = d.message;
  for (const std::string& note : d.notes) message += "\nnote: " + note;
  for (const std::string& help : d.helps) message += "\nhelp: " + help;
  json out = {{"range", at.range(d.primary.span)},
              {"severity", level},
              {"code", code},
              {"codeDescription", {{"href", std::string(kErrorIndex) + std::string(code)}}},
              {"source", "shapescript"},
              {"message", message}};
  if (!d.secondary.empty()) {
    json related = json::array();
    for (const Label& label : d.secondary) related.push_back({{"location", at.location(label.span)}, {"message", label.text}});
    out["relatedInformation"] = std::move(related);
  }
  return out;
}

json diagnostics_to_lsp(const Analysis& analysis, const Converter& at, const ServingSeverity& serving) {
  json out = json::array();
  for (const Diagnostic& d : analysis.diagnostics) out.push_back(diagnostic_to_lsp(d, at, serving));
  return out;
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

json hover(const Analysis& analysis, const Converter& at, uint32_t offset, Markup markup) {
  const HoverFact* fact = innermost(analysis.hovers, offset, [](const HoverFact& h) { return h.span; });
  if (!fact) return nullptr;
  return {{"contents", markup_content(fact->text, markup)}, {"range", at.range(fact->span)}};
}

json definition(const Analysis& analysis, const Converter& at, uint32_t offset) {
  const DefinitionFact* fact = innermost(analysis.definitions, offset, [](const DefinitionFact& d) { return d.use; });
  if (!fact) return nullptr;
  return at.location(fact->target);
}

namespace {
json symbol_to_lsp(const SymbolFact& symbol, const Converter& at) {
  int kind = symbol_kind::function;
  switch (symbol.kind) {
    case SymbolFact::Kind::dim: kind = symbol_kind::constant; break;
    case SymbolFact::Kind::python_import: kind = symbol_kind::module; break;
    case SymbolFact::Kind::extern_fn:
    case SymbolFact::Kind::function: kind = symbol_kind::function; break;
    case SymbolFact::Kind::model: kind = symbol_kind::class_; break;
    case SymbolFact::Kind::param: kind = symbol_kind::field; break;
  }
  Span range = symbol.span;
  Span selection = symbol.name_span;
  if (selection.empty() || selection.begin < range.begin || selection.end > range.end) selection = {range.begin, range.begin};
  json out = {{"name", symbol.name.empty() ? std::string("?") : symbol.name},
              {"kind", kind},
              {"range", at.range(range)},
              {"selectionRange", at.range(selection)}};
  if (!symbol.detail.empty()) out["detail"] = symbol.detail;
  if (!symbol.children.empty()) {
    json children = json::array();
    for (const SymbolFact& child : symbol.children) children.push_back(symbol_to_lsp(child, at));
    out["children"] = std::move(children);
  }
  return out;
}
}  // namespace

json document_symbols(const Analysis& analysis, const Converter& at) {
  json out = json::array();
  for (const SymbolFact& symbol : analysis.symbols) out.push_back(symbol_to_lsp(symbol, at));
  return out;
}

json completion(const Analysis& analysis, const Converter& at, uint32_t offset, Markup markup) {
  const std::string& text = at.document().text();
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text.size()));
  Position cursor = at.document().position_of(offset);
  std::string_view line = at.document().lines().line_text(text, cursor.line);
  uint32_t line_start = at.document().lines().line_start(cursor.line);
  CompletionList list;
  list.markup = markup;
  if (in_comment(line.substr(0, std::min<size_t>(line.size(), offset - line_start))))
    return {{"isIncomplete", false}, {"items", list.items}};
  uint32_t word = offset;
  while (word > line_start && is_identifier_char(text[word - 1])) --word;
  const Item* scope = enclosing_item(analysis, offset);
  if (scope && scope->kind != Item::Kind::function) scope = nullptr;

  // `m.` : a model's parameters.
  if (word > line_start && text[word - 1] == '.') {
    uint32_t object_end = word - 1, object_begin = object_end;
    while (object_begin > line_start && is_identifier_char(text[object_begin - 1])) --object_begin;
    std::string object = text.substr(object_begin, object_end - object_begin);
    std::string model_name;
    if (scope)
      for (const Parameter& p : scope->parameters)
        if (p.name == object && p.type.element && !p.type.is_tensor) model_name = p.type.element->name;
    if (const Item* item = analysis.find_item(object); item && item->kind == Item::Kind::model) model_name = object;
    if (const Item* model = analysis.find_item(model_name); model && model->kind == Item::Kind::model)
      for (const Item::Param& param : model->params)
        list.add(param.name, completion_kind::field, source_text(analysis, param.type.span), param.doc, 0);
    return {{"isIncomplete", false}, {"items", list.items}};
  }

  std::set<std::string> dims;
  for (const Item& item : analysis.program.items)
    if (item.kind == Item::Kind::dim) dims.insert(item.name);
  if (scope) {
    if (scope->body) collect_locals(analysis, *scope->body, offset, list);
    for (const Parameter& p : scope->parameters)
      list.add(p.name, completion_kind::variable, source_text(analysis, p.type.span), "parameter of `" + scope->name + "`", 1);
    std::vector<std::string> axes;
    for (const Parameter& p : scope->parameters) collect_type_names(p.type, axes);
    if (scope->result) collect_type_names(*scope->result, axes);
    for (const std::string& axis : axes)
      if (!dims.count(axis)) list.add(axis, completion_kind::type_parameter, "axis of `" + scope->name + "`", "", 1);
  }
  for (const Item& item : analysis.program.items) {
    std::string name = item.name;
    int kind = completion_kind::function;
    switch (item.kind) {
      case Item::Kind::dim: kind = completion_kind::constant; break;
      case Item::Kind::python_import: kind = completion_kind::module, name = name.substr(0, name.find('.')); break;
      case Item::Kind::extern_fn:
      case Item::Kind::function: kind = completion_kind::function; break;
      case Item::Kind::model: kind = completion_kind::class_; break;
    }
    list.add(name, kind, item_detail(analysis, item), item.doc, 2);
  }
  for (const Builtin& b : builtins()) list.add(std::string(b.name), completion_kind::function, std::string(b.signature), std::string(b.summary), 3);
  for (const char* type : {"Real", "NonNeg", "Int", "Bool", "Index", "Logit"})
    list.add(type, completion_kind::struct_, "element type", "", 4);
  for (const char* keyword : {"as", "dim", "elif", "else", "export", "extern", "fn", "for", "if", "import", "in", "model", "over",
                              "param", "python", "return"})
    list.add(keyword, completion_kind::keyword, "", "", 5);
  return {{"isIncomplete", false}, {"items", list.items}};
}

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

json code_actions(const Analysis& analysis, const Converter& at, uint32_t begin, uint32_t end, const json& only,
                  const ServingSeverity& serving) {
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
    json diagnostic = diagnostic_to_lsp(d, at, serving);
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

json inlay_hints(const Analysis& analysis, const Converter& at, uint32_t begin, uint32_t end) {
  json out = json::array();
  for (const InlayFact& inlay : analysis.inlays) {
    if (inlay.offset < begin || inlay.offset > end) continue;
    out.push_back({{"position", at.position(inlay.offset)}, {"label", inlay.label}, {"kind", 1}, {"paddingLeft", false}, {"paddingRight", false}});
  }
  return out;
}

}  // namespace ss::lsp
