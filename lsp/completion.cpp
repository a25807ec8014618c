// textDocument/completion: a model's params after `m.`; else locals, parameters, axes, items,
// built-ins, element types and keywords, ranked in that order.
#include "answers.h"

#include <set>

#include "check/builtins.h"
#include "syntax/walk.h"

namespace ss::lsp {

namespace {

namespace completion_kind {
constexpr int function = 3, field = 5, variable = 6, class_ = 7, module = 9, keyword = 14, constant = 21, struct_ = 22,
              type_parameter = 25;
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

}  // namespace

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

}  // namespace ss::lsp
