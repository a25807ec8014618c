#include "check/model_layout.h"

#include <algorithm>
#include <set>

#include "check/builtins.h"
#include "syntax/walk.h"

namespace ss {

namespace {

bool is_builtin_call(const Analysis& analysis, const Expr& e, std::string_view name) {
  if (e.kind != Expr::Kind::call) return false;
  auto facts = analysis.semantics.calls.find(&e);
  return facts != analysis.semantics.calls.end() && facts->second.builtin && facts->second.builtin->name == name;
}

void add_once(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

// A loop bound written as a fixed number: `0`, `L`.
std::optional<int64_t> fixed_number(const Analysis& analysis, const Expr* e) {
  if (!e) return std::nullopt;
  if (e->kind == Expr::Kind::number && e->is_integer) {
    // A literal past int64 (E0105) has no fixed value; casting it would be undefined.
    if (!(e->number >= -9223372036854775808.0 && e->number < 9223372036854775808.0)) return std::nullopt;
    return static_cast<int64_t>(e->number);
  }
  auto type = analysis.semantics.types.find(e);
  if (type != analysis.semantics.types.end() && type->second.known_size) return type->second.known_size->constant_value();
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ModelLayout::model_field(const Expr* e) const {
  if (model_var.empty() || !e || e->kind != Expr::Kind::attribute || e->operands.empty() || !e->operands[0] ||
      e->operands[0]->kind != Expr::Kind::name || e->operands[0]->text != model_var)
    return std::nullopt;
  return e->text;
}

ModelLayout find_model_layout(const Analysis& analysis, const std::string& function) {
  ModelLayout layout;
  layout.function = function;
  for (const Item& item : analysis.program.items)
    if (item.kind == Item::Kind::function && item.name == function) layout.forward = &item;
  if (!layout.forward) return layout;
  const Item& forward = *layout.forward;
  auto types = analysis.semantics.functions.find(&forward);
  if (types == analysis.semantics.functions.end()) return layout;
  layout.types = &types->second;
  const std::vector<ValueType>& parameters = types->second.parameters;
  if (parameters.empty() || parameters[0].kind != ValueType::Kind::model || forward.parameters.empty()) return layout;
  layout.model = analysis.find_item(parameters[0].name);
  if (layout.model && layout.model->kind != Item::Kind::model) layout.model = nullptr;
  layout.model_var = forward.parameters[0].name;
  if (parameters.size() >= 2 && forward.parameters.size() >= 2) layout.ids_var = forward.parameters[1].name;
  if (parameters.size() == 3 && forward.parameters.size() == 3) layout.pos_var = forward.parameters[2].name;
  if (parameters.size() >= 2 && parameters.size() <= 3) {
    const ValueType& ids = parameters[1];
    layout.takes_ids = ids.is_tensor() && ids.tensor.rank() == 2 && ids.tensor.element.kind == ElementKind::index;
  }
  if (!forward.body) return layout;
  const std::vector<Statement>& statements = forward.body->statements;

  for (size_t i = 0; i < statements.size(); ++i)
    if (statements[i].kind == Statement::Kind::for_ && layout.loops++ == 0) {
      layout.loop = &statements[i];
      layout.loop_at = i;
    }
  if (layout.loop) {
    layout.loop_start = fixed_number(analysis, layout.loop->value.get());
    layout.layers = fixed_number(analysis, layout.loop->end.get());
  }
  size_t before_loop = layout.loop ? layout.loop_at : statements.size();

  // Embeddings: of the ids anywhere; the token embedding is the first of the model's before the loop.
  auto is_ids = [&](const Expr* e) { return e && e->kind == Expr::Kind::name && !layout.ids_var.empty() && e->text == layout.ids_var; };
  // The token embedding may be scaled or summed on its way in (`embedding(ids, m.E) |> scale(..)`),
  // so it is found anywhere in a value computed before the loop; a piped value lies outside its call's span.
  std::set<const Expr*> before_loop_values;
  for (size_t i = 0; i < before_loop; ++i)
    if (statements[i].value) for_each_expr(*statements[i].value, [&](const Expr& e) { before_loop_values.insert(&e); });
  for (size_t i = 0; i < statements.size(); ++i) {
    auto visit = [&](const Expr& e) {
      if (!is_builtin_call(analysis, e, "embedding") || e.arguments.empty()) return;
      std::optional<std::string> table = e.arguments.size() == 2 ? layout.model_field(e.arguments[1].value.get()) : std::nullopt;
      if (table) add_once(layout.embedding_tables, *table);
      if (!is_ids(e.arguments[0].value.get())) return;
      layout.ids_embeddings.push_back(&e);
      if (table && !layout.token_embedding && before_loop_values.count(&e)) {
        layout.token_embedding = &e;
        layout.embedding = *table;
      }
    };
    for_each_expr(statements[i], visit, [](const Statement&) { return Walk::into; });
  }

  // The output layer.
  if (!statements.empty()) {
    const Statement& last = statements.back();
    const Expr* value = last.kind == Statement::Kind::return_ ? last.value.get() : nullptr;
    if (value && is_builtin_call(analysis, *value, "linear") && value->arguments.size() == 2)
      if (auto weight = layout.model_field(value->arguments[1].value.get())) {
        layout.output = value;
        layout.output_layer = *weight;
        layout.tied = !layout.embedding.empty() && layout.output_layer == layout.embedding;
      }
  }

  // The blocks' stacked fields: `m.w[l]`.
  if (layout.loop && layout.loop->body)
    for_each_expr(*layout.loop->body, [&](const Expr& e) {
      if (e.kind == Expr::Kind::subscript && !e.operands.empty() && e.index.size() == 1 && e.index[0].kind == SizeNode::Kind::name &&
          e.index[0].name == layout.loop->variable)
        if (auto field = layout.model_field(e.operands[0].get())) add_once(layout.stacked, *field);
    });
  return layout;
}

}  // namespace ss
