#include "model/model_layout.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "check/builtins.h"
#include "model/reach.h"
#include "syntax/walk.h"

namespace ss {

namespace {

// `[b n] Index[V]`: token ids, or their positions.
bool is_index_matrix(const ValueType& t) { return t.is_tensor() && t.tensor.rank() == 2 && t.tensor.element.kind == ElementKind::index; }

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
  if (type && type->known_size) return type->known_size->constant_value();
  return std::nullopt;
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(std::abs(a), std::abs(b)); }

const Expr* argument(const Expr& call, size_t i) { return i < call.arguments.size() ? call.arguments[i].value.get() : nullptr; }

}  // namespace

bool is_builtin_call(const Analysis& analysis, const Expr& e, BuiltinRole role, const CallFacts** facts_out) {
  if (e.kind != Expr::Kind::call) return false;
  auto facts = analysis.semantics.calls.find(&e);
  if (!facts) return false;
  if (facts_out) *facts_out = facts;
  return facts->builtin && facts->builtin->role == role;
}

std::optional<std::pair<const OutputOp*, std::string>> logits_processor_lacks(const ModelLayout& layout) {
  bool capped = false, scaled = false;
  for (const OutputOp& op : layout.after_output) {
    std::string lacks;
    if (op.kind == OutputOp::Kind::other)
      lacks = "its logits processor only caps (`tanh(z / c) * c`) and then scales the logits";
    else if (op.kind == OutputOp::Kind::softcap && (capped || scaled))
      lacks = "its logits processor caps the logits once, before it scales them";
    else if (op.kind == OutputOp::Kind::scale && scaled)
      lacks = "its logits processor scales the logits once";
    capped = capped || op.kind == OutputOp::Kind::softcap;
    scaled = scaled || op.kind == OutputOp::Kind::scale;
    if (!lacks.empty()) return std::pair{&op, lacks};
  }
  return std::nullopt;
}

namespace {

std::optional<double> fixed_value(const Analysis& analysis, const Expr* e);

}  // namespace

// Only finite numbers: config.json and Python take no infinity written as a number.
std::optional<double> fixed_real(const Analysis& analysis, const Expr* e) {
  std::optional<double> value = fixed_value(analysis, e);
  if (value && !std::isfinite(*value)) return std::nullopt;
  return value;
}

namespace {

std::optional<double> fixed_value(const Analysis& analysis, const Expr* e) {
  if (!e) return std::nullopt;
  switch (e->kind) {
    case Expr::Kind::number: return e->number;
    case Expr::Kind::name: {
      auto dim = analysis.semantics.dims.find(e->text);
      if (dim == analysis.semantics.dims.end()) return std::nullopt;
      return static_cast<double>(dim->second);
    }
    case Expr::Kind::unary: {
      auto x = e->operands.empty() ? std::nullopt : fixed_real(analysis, e->operands[0].get());
      if (!x) return std::nullopt;
      if (e->text == "-") return -*x;
      if (e->text == "+") return *x;
      return std::nullopt;
    }
    case Expr::Kind::binary: {
      if (e->operands.size() != 2) return std::nullopt;
      auto l = fixed_real(analysis, e->operands[0].get()), r = fixed_real(analysis, e->operands[1].get());
      if (!l || !r) return std::nullopt;
      if (e->text == "+") return *l + *r;
      if (e->text == "-") return *l - *r;
      if (e->text == "*") return *l * *r;
      if (e->text == "/" && *r != 0) return *l / *r;
      return std::nullopt;
    }
    case Expr::Kind::call: {
      auto x = e->arguments.size() == 1 ? fixed_real(analysis, argument(*e, 0)) : std::nullopt;
      if (!x) return std::nullopt;
      if (is_builtin_call(analysis, *e, BuiltinRole::sqrt) && *x >= 0) return std::sqrt(*x);
      if (is_builtin_call(analysis, *e, BuiltinRole::exp)) return std::exp(*x);
      if (is_builtin_call(analysis, *e, BuiltinRole::log) && *x > 0) return std::log(*x);
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

}  // namespace

namespace {

// `z * s` or `scale(z, s)` with s fixed: z and s.
std::optional<std::pair<const Expr*, double>> scaled(const Analysis& analysis, const Expr& e) {
  if (is_builtin_call(analysis, e, BuiltinRole::scale) && e.arguments.size() == 2)
    if (auto s = fixed_real(analysis, argument(e, 1))) return std::pair{argument(e, 0), *s};
  if (e.kind == Expr::Kind::binary && e.operands.size() == 2 && (e.text == "*" || e.text == "/")) {
    const Expr* l = e.operands[0].get();
    const Expr* r = e.operands[1].get();
    if (auto s = fixed_real(analysis, r)) {
      if (e.text == "*") return std::pair{l, *s};
      if (*s != 0) return std::pair{l, 1 / *s};
    }
    if (e.text == "*")
      if (auto s = fixed_real(analysis, l)) return std::pair{r, *s};
  }
  return std::nullopt;
}

// A softcap `tanh(z / c) * c` (or with `scale`): z and c.
std::optional<std::pair<const Expr*, double>> softcapped(const Analysis& analysis, const Expr& e) {
  auto outer = scaled(analysis, e);
  if (!outer || !outer->first || !is_builtin_call(analysis, *outer->first, BuiltinRole::tanh) || outer->first->arguments.size() != 1) return std::nullopt;
  const Expr* inside = argument(*outer->first, 0);
  auto inner = inside ? scaled(analysis, *inside) : std::nullopt;
  if (!inner || !inner->first || !close(inner->second * outer->second, 1)) return std::nullopt;
  return std::pair{inner->first, outer->second};
}

}  // namespace

std::optional<std::string> ModelLayout::model_field(const Expr* e) const {
  if (model_var.empty() || !e || e->kind != Expr::Kind::attribute || e->operands.empty() || !e->operands[0] ||
      e->operands[0]->kind != Expr::Kind::name || e->operands[0]->text != model_var)
    return std::nullopt;
  return e->text;
}

namespace {

ModelLayout find_layout(const Analysis& analysis, const std::string& function) {
  ModelLayout layout;
  layout.function = function;
  for (const Item& item : analysis.program.items)
    if (item.kind == Item::Kind::function && item.name == function) layout.forward = &item;
  if (!layout.forward) return layout;
  const Item& forward = *layout.forward;
  auto types = analysis.semantics.functions.find(&forward);
  if (types == analysis.semantics.functions.end()) return layout;
  layout.types = types->second.get();
  const std::vector<ValueType>& parameters = types->second->parameters;
  if (parameters.empty() || parameters[0].kind != ValueType::Kind::model || forward.parameters.empty()) return layout;
  layout.model = analysis.find_item(parameters[0].name);
  if (layout.model && layout.model->kind != Item::Kind::model) layout.model = nullptr;
  layout.model_var = forward.parameters[0].name;
  if (parameters.size() >= 2 && forward.parameters.size() >= 2) layout.ids_var = forward.parameters[1].name;
  if (parameters.size() == 3 && forward.parameters.size() == 3) layout.pos_var = forward.parameters[2].name;
  if (parameters.size() >= 2 && parameters.size() <= 3) {
    layout.takes_ids = is_index_matrix(parameters[1]);
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
      if (!is_builtin_call(analysis, e, BuiltinRole::embedding) || e.arguments.empty()) return;
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

  // The output layer: what the last statement returns is `linear(h, m.W[, m.b])`, or elementwise
  // operations on it, followed back through the assignments after the blocks.
  const Item& fn = forward;
  auto refuse = [&](Span span, std::string rule) { layout.refusals.push_back({span, std::move(rule)}); };
  size_t after_loop = layout.loop ? layout.loop_at + 1 : 0;
  const Statement* last = statements.empty() ? nullptr : &statements.back();
  if (!last || last->kind != Statement::Kind::return_ || !last->value) {
    refuse(last ? last->span : fn.name_span, "it must end by returning the output layer, `linear(h, " + layout.model_var + ".W)`");
  } else {
    const Expr* value = last->value.get();
    size_t at = statements.size() - 1;
    std::vector<OutputOp> ops;  // outermost first
    while (value) {
      const Expr& e = *value;
      if (is_builtin_call(analysis, e, BuiltinRole::linear) && (e.arguments.size() == 2 || e.arguments.size() == 3)) {
        auto weight = layout.model_field(argument(e, 1));
        auto bias = e.arguments.size() == 3 ? layout.model_field(argument(e, 2)) : std::optional<std::string>("");
        if (weight && bias) {
          layout.output = &e;
          layout.output_layer = *weight;
          layout.output_bias = *bias;
          layout.output_at = at;
          layout.tied = !layout.embedding.empty() && layout.output_layer == layout.embedding;
          break;
        }
      }
      if (e.kind == Expr::Kind::name) {  // the value of an assignment after the blocks
        const Expr* assigned = nullptr;
        for (size_t j = at; j-- > after_loop;)
          if (statements[j].kind == Statement::Kind::assign && statements[j].targets.size() == 1 && statements[j].targets[0].first == e.text) {
            assigned = statements[j].value.get();
            at = j;
            break;
          }
        value = assigned;
        continue;
      }
      if (auto cap = softcapped(analysis, e)) {
        ops.push_back({OutputOp::Kind::softcap, e.span, cap->second});
        value = cap->first;
        continue;
      }
      if (auto s = scaled(analysis, e)) {
        ops.push_back({OutputOp::Kind::scale, e.span, s->second});
        value = s->first;
        continue;
      }
      // Any other elementwise operation of one value that isn't fixed (`z + 1`, `tanh(z)`).
      auto facts = analysis.semantics.calls.find(&e);
      bool elementwise = e.kind == Expr::Kind::binary || e.kind == Expr::Kind::unary ||
                         (e.kind == Expr::Kind::call && facts && facts->builtin &&
                          facts->works_across.empty() && !is_builtin_call(analysis, e, BuiltinRole::linear) &&
                          !is_builtin_call(analysis, e, BuiltinRole::embedding));
      std::vector<const Expr*> varying;
      if (elementwise) {
        for (const ExprPtr& o : e.operands)
          if (o && e.kind != Expr::Kind::call && !fixed_real(analysis, o.get())) varying.push_back(o.get());
        for (const Argument& a : e.arguments)
          if (a.value && !fixed_real(analysis, a.value.get())) varying.push_back(a.value.get());
      }
      if (varying.size() != 1) break;
      ops.push_back({OutputOp::Kind::other, e.span, 0});
      value = varying[0];
    }
    if (!layout.output) {
      refuse(last->span, "it must end by returning the output layer, `linear(h, " + layout.model_var +
                                    ".W)`, or elementwise operations on it (`scale`, a softcap `tanh(z / c) * c`)");
    } else {
      layout.after_output.assign(ops.rbegin(), ops.rend());
      // From the output layer on, only the logits are computed: nothing else is read.
      std::set<std::string> logits_names;
      for (size_t j = layout.output_at; j < statements.size(); ++j) {
        const Statement& s = statements[j];
        if (j + 1 < statements.size() && (s.kind != Statement::Kind::assign || s.targets.size() != 1)) {
          refuse(s.span, "after the output layer, only assignments of the logits may come before the `return`");
          break;
        }
        bool read_other = false;
        if (s.value)
          for_each_expr(*s.value, [&](const Expr& x) {
            if (&x == layout.output) return Walk::skip;
            if (read_other) return Walk::stop;
            if (x.kind == Expr::Kind::attribute && layout.model_field(&x)) {
              refuse(x.span, "after the output layer, `" + layout.model_var + "." + x.text + "` is read; the operations on the logits use only fixed numbers");
              read_other = true;
              return Walk::stop;
            }
            if (x.kind == Expr::Kind::name && !logits_names.count(x.text) && !analysis.semantics.dims.count(x.text)) {
              bool local = x.text == layout.model_var || x.text == layout.ids_var || x.text == layout.pos_var;
              for (size_t k = 0; k < j && !local; ++k)
                for (auto& [name, span] : statements[k].targets) local = local || name == x.text;
              if (local) {
                refuse(x.span, "after the output layer, `" + x.text + "` is read; the operations on the logits use only the logits and fixed numbers");
                read_other = true;
                return Walk::stop;
              }
            }
            return Walk::into;
          });
        if (read_other) break;
        for (auto& [name, span] : s.targets) logits_names.insert(name);
      }
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

}  // namespace

const char* input_role_name(ModelInput::Role role) {
  switch (role) {
    case ModelInput::Role::ids: return "ids";
    case ModelInput::Role::pixels: return "pixels";
    case ModelInput::Role::token_types: return "token_types";
    case ModelInput::Role::mask: return "mask";
  }
  return "ids";
}

namespace {

// The encoder's inputs and why it isn't one (ModelLayout::is_encoder), read off the signature
// and the attention the forward reaches.
void find_encoder(const Analysis& analysis, ModelLayout& layout) {
  const Item& fn = *layout.forward;
  auto refuse = [&](Span span, std::string rule) { layout.encoder_refusals.push_back({span, std::move(rule)}); };
  if (!layout.types || !layout.model || !fn.body) return;
  const std::vector<ValueType>& parameters = layout.types->parameters;
  std::set<ModelInput::Role> seen;
  for (size_t i = 1; i < parameters.size() && i < fn.parameters.size(); ++i) {
    const ValueType& t = parameters[i];
    const TensorType* tensor = t.is_tensor() ? &t.tensor : nullptr;
    std::optional<ModelInput::Role> role;
    ElementKind element = tensor ? tensor->element.kind : ElementKind::real;
    bool real = element == ElementKind::real || element == ElementKind::nonneg || element == ElementKind::logit;
    if (tensor && i == 1 && element == ElementKind::index && tensor->rank() == 2) role = ModelInput::Role::ids;
    else if (tensor && i == 1 && real && tensor->rank() >= 2) role = ModelInput::Role::pixels;
    else if (tensor && i > 1 && element == ElementKind::index && tensor->rank() == 2) role = ModelInput::Role::token_types;
    else if (tensor && i > 1 && element == ElementKind::bool_ && tensor->rank() == 2) role = ModelInput::Role::mask;
    if (!role || !seen.insert(*role).second) {
      refuse(fn.parameters[i].span, i == 1 ? "an encoder takes the token ids `[b n] Index[V]` or the pixels (a `Real` tensor) after the model"
                                           : "after its ids, an encoder takes token types `[b n] Index[T]` and a padding mask `[b n] Bool`, each once");
      continue;
    }
    layout.inputs.push_back({*role, fn.parameters[i].name, fn.parameters[i].span});
  }
  if (parameters.size() < 2) refuse(fn.name_span, "an encoder takes its inputs after the model");
  for_each_builtin_call_reached(analysis, fn, [&](const Expr& call, const CallFacts& facts) {
    if (!facts.builtin || facts.builtin->role != BuiltinRole::attention) return;
    auto causal = facts.lowering.find("causal");
    if ((causal != facts.lowering.end() && causal->second == "1") || facts.lowering.count("window"))
      refuse(call.span, "an encoder's attention sees every position: `causal` or `window=` makes it a decoder's");
  });
  const ValueType& result = layout.types->result;
  ElementKind element = result.is_tensor() ? result.tensor.element.kind : ElementKind::int_;
  if (!result.is_tensor() || result.tensor.rank() < 2 || !(element == ElementKind::real || element == ElementKind::nonneg))
    refuse(fn.name_span, "an encoder returns its last hidden state, a `Real` tensor such as `[b n D]`");
  std::stable_sort(layout.encoder_refusals.begin(), layout.encoder_refusals.end(),
                   [](const ModelRefusal& a, const ModelRefusal& b) { return a.span.begin < b.span.begin; });
}

}  // namespace

ModelLayout find_model_layout(const Analysis& analysis, const std::string& function) {
  ModelLayout layout = find_layout(analysis, function);
  if (!layout.forward) return layout;
  find_encoder(analysis, layout);
  const Item& fn = *layout.forward;
  auto refuse = [&](Span span, std::string rule) { layout.refusals.push_back({span, std::move(rule)}); };
  if (!layout.types) refuse(fn.name_span, "it has no checked signature");
  else if (!layout.model) refuse(fn.parameters.empty() ? fn.name_span : fn.parameters[0].span, "it must take a model first, `" + fn.name + "(m: Model, ids: [b n] Index[V])`");
  else if (!layout.takes_ids)
    refuse(fn.parameters.size() >= 2 ? fn.parameters[1].span : fn.name_span,
           "it must take the token ids `[b n] Index[V]` second, and at most their positions after them");
  else if (layout.types->parameters.size() == 3 && fn.parameters.size() == 3 && !is_index_matrix(layout.types->parameters[2]))
    refuse(fn.parameters[2].span, "after the token ids it takes at most their positions, `pos: [b n] Index[P]`");
  else if (!fn.body) refuse(fn.name_span, "it has no body");
  std::stable_sort(layout.refusals.begin(), layout.refusals.end(), [](const ModelRefusal& a, const ModelRefusal& b) { return a.span.begin < b.span.begin; });
  return layout;
}

std::optional<int64_t> fixed_size(const Analysis& analysis, const SizeNode& node, std::string* generic) {
  auto both = [&](auto combine) -> std::optional<int64_t> {
    if (node.children.size() != 2) return std::nullopt;
    auto l = fixed_size(analysis, node.children[0], generic), r = fixed_size(analysis, node.children[1], generic);
    if (!l || !r) return std::nullopt;
    return combine(*l, *r);
  };
  switch (node.kind) {
    case SizeNode::Kind::number: return node.number;
    case SizeNode::Kind::name:
    case SizeNode::Kind::scaled: {
      auto dim = analysis.semantics.dims.find(node.name);
      if (dim == analysis.semantics.dims.end()) {
        if (generic && generic->empty()) *generic = node.name;
        return std::nullopt;
      }
      return node.kind == SizeNode::Kind::scaled ? node.number * dim->second : dim->second;
    }
    case SizeNode::Kind::group: {
      int64_t product = 1;
      for (const SizeNode& c : node.children) {
        auto value = fixed_size(analysis, c, generic);
        if (!value) return std::nullopt;
        product *= *value;
      }
      return product;
    }
    case SizeNode::Kind::binary:
      switch (node.op) {
        case '*': return both([](int64_t l, int64_t r) { return l * r; });
        case '/': return both([](int64_t l, int64_t r) { return r ? l / r : 0; });
        case '%': return both([](int64_t l, int64_t r) { return r > 0 ? (l % r + r) % r : 0; });  // Python's, as the checker's
        case SizeNode::kFloorDivide: return both([](int64_t l, int64_t r) { return r > 0 ? l / r - (l % r < 0) : 0; });
        case '+': return both([](int64_t l, int64_t r) { return l + r; });
        case '-': return both([](int64_t l, int64_t r) { return l - r; });
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

namespace {

struct NotFixed {
  std::string what;
};

int64_t fixed_size(const Analysis& analysis, const SizeNode& node, const std::string& what) {
  std::string generic;
  if (auto value = fixed_size(analysis, node, &generic)) return *value;
  if (!generic.empty()) throw NotFixed{what + " has the generic axis `" + generic + "`; weights need fixed sizes"};
  throw NotFixed{what + " has a size that isn't a fixed number"};
}

}  // namespace

LanguageModelFacts language_model_facts(const Analysis& analysis, const ModelLayout& layout, const std::function<std::string(Span)>& where) {
  LanguageModelFacts facts;
  facts.encoder = layout.is_encoder();
  if ((!layout.is_language_model() && !facts.encoder) || !layout.types) {
    facts.error = "`" + layout.function + "` isn't a language model's forward";
    return facts;
  }
  try {
    facts.model_name = layout.model->name;
    for (const Item::Param& p : layout.model->params) {
      std::vector<int64_t> shape;
      for (const SizeNode& axis : p.type.axes) shape.push_back(fixed_size(analysis, axis, where(p.name_span) + ": `" + p.name + "`"));
      facts.parameters.emplace_back(p.name, std::move(shape));
    }
    if (layout.loop) {
      if (!layout.layers || layout.loop_start.value_or(-1) != 0)
        throw NotFixed{where(layout.loop->span) + ": the loop over blocks must run a fixed number of times from 0, such as `0..L`"};
      facts.layers = *layout.layers;
    }
    if (facts.encoder) {
      // Its vocabulary: the ids' `Index[V]`; none for pixels.
      if (!layout.inputs.empty() && layout.inputs[0].role == ModelInput::Role::ids)
        if (auto bound = layout.types->parameters[1].tensor.element.bound.constant_value()) facts.vocab = *bound;
    } else {
      for (const auto& [name, shape] : facts.parameters)
        if (name == layout.output_layer && shape.size() == 2) facts.vocab = shape[0];
    }
    if (!facts.vocab && !facts.encoder) throw NotFixed{where(layout.output->span) + ": the output layer `" + layout.output_layer + "` must be a matrix"};
  } catch (const NotFixed& e) {
    facts.error = e.what;
    return facts;
  }
  facts.takes_positions = !facts.encoder && !layout.pos_var.empty();
  if (facts.takes_positions && layout.types->parameters.size() == 3)
    if (auto bound = layout.types->parameters[2].tensor.element.bound.constant_value()) facts.max_positions = *bound;
  // The attention the forward reaches, not every call in the file.
  for_each_builtin_call_reached(analysis, *layout.forward, [&](const Expr&, const CallFacts& call) {
    if (auto window = call.lowering.find("window"); window != call.lowering.end())
      facts.sliding_window = std::max<int64_t>(facts.sliding_window, std::stoll(window->second));
  });
  for (const std::vector<int64_t>& windows : attention_windows_per_block(analysis, layout)) {
    bool all_windowed = !windows.empty() && std::none_of(windows.begin(), windows.end(), [](int64_t w) { return w == 0; });
    facts.layer_windows.push_back(all_windowed ? *std::max_element(windows.begin(), windows.end()) : 0);
  }
  return facts;
}

namespace {

// One block's walk: the values known in it (the block's index, names bound from it), and the
// window of each attention it reaches.
class BlockWalk {
 public:
  BlockWalk(const Analysis& analysis, std::string variable, int64_t index, const ModelLayout* layout = nullptr)
      : a_(analysis), layout_(layout) {
    values_[std::move(variable)] = index;
  }

  void block(const Block& b) {
    for (const Statement& s : b.statements) statement(s);
  }
  std::vector<int64_t> windows;
  // With a layout: the slice of each model field the block reads as `m.w[i]`, and why one can't be told.
  std::map<std::string, int64_t> slices;
  std::map<std::string, Span> spans;  // where the block first reads each field
  std::vector<ModelRefusal> refusals;

 private:
  const Analysis& a_;
  const ModelLayout* layout_ = nullptr;
  std::map<std::string, int64_t> values_;

  // `m.w[i]` with i known in this block: one slice per field and block.
  void slice(const Expr& x) {
    if (!layout_ || x.kind != Expr::Kind::subscript || x.operands.empty() || !x.operands[0] || x.index.size() != 1) return;
    auto field = layout_->model_field(x.operands[0].get());
    if (!field) return;
    auto at = size_value(x.index[0]);
    if (!at) {
      refusals.push_back({x.span, "the block reads `" + layout_->model_var + "." + *field + "` at an index not known per block; a block's weights are slices chosen by its index"});
      return;
    }
    spans.emplace(*field, x.span);
    auto [it, added] = slices.emplace(*field, *at);
    if (!added && it->second != *at)
      refusals.push_back({x.span, "a block reads `" + layout_->model_var + "." + *field + "` at two indices (" + std::to_string(it->second) + " and " + std::to_string(*at) +
                                      "); a block's layer owns one slice of each weight"});
  }

  // An index written as sizes (`l`, `l - Ld`, a name bound from the block's index).
  std::optional<int64_t> size_value(const SizeNode& n) const {
    switch (n.kind) {
      case SizeNode::Kind::number: return n.number;
      case SizeNode::Kind::name: {
        if (auto v = values_.find(n.name); v != values_.end()) return v->second;
        if (auto d = a_.semantics.dims.find(n.name); d != a_.semantics.dims.end()) return d->second;
        return std::nullopt;
      }
      case SizeNode::Kind::group: return n.children.size() == 1 ? size_value(n.children[0]) : std::nullopt;
      case SizeNode::Kind::binary: {
        if (n.children.size() != 2) return std::nullopt;
        auto l = size_value(n.children[0]), r = size_value(n.children[1]);
        if (!l || !r) return std::nullopt;
        if (n.op == '+') return *l + *r;
        if (n.op == '-') return *l - *r;
        if (n.op == '*') return *l * *r;
        if (n.op == '/' && *r != 0 && *l % *r == 0) return *l / *r;
        return std::nullopt;
      }
      default: return std::nullopt;
    }
  }

  void statement(const Statement& s) {
    switch (s.kind) {
      case Statement::Kind::if_: {
        for (const auto& [condition, body] : s.branches) {
          if (condition) calls(*condition);
          std::optional<int64_t> taken = condition ? value(*condition) : std::nullopt;
          if (!taken) {  // decided only when it runs: every branch may run
            for (const auto& [c, other] : s.branches)
              if (other) block(*other);
            if (s.body) block(*s.body);
            return;
          }
          if (*taken) {
            if (body) block(*body);
            return;
          }
        }
        if (s.body) block(*s.body);
        return;
      }
      case Statement::Kind::for_:
        if (s.body) block(*s.body);
        return;
      case Statement::Kind::assign:
        if (s.value) calls(*s.value);
        for (auto& [name, span] : s.targets) values_.erase(name);
        if (s.value && s.targets.size() == 1)
          if (auto v = value(*s.value)) values_[s.targets[0].first] = *v;
        return;
      default:
        if (s.value) calls(*s.value);
        return;
    }
  }

  void calls(const Expr& e) {
    for_each_expr(e, [&](const Expr& x) {
      slice(x);
      if (x.kind != Expr::Kind::call) return;
      auto facts = a_.semantics.calls.find(&x);
      if (!facts) return;
      if (facts->builtin) attention(*facts);
      else if (facts->function && facts->function->kind == Item::Kind::function)
        for_each_builtin_call_reached(a_, *facts->function, [&](const Expr&, const CallFacts& f) { attention(f); });
    });
  }

  void attention(const CallFacts& facts) {
    if (!facts.builtin || facts.builtin->role != BuiltinRole::attention) return;
    auto window = facts.lowering.find("window");
    windows.push_back(window == facts.lowering.end() ? 0 : std::stoll(window->second));
  }

  // An integer (a Bool as 0 or 1) known in this block: numbers, dims, the block's index and names
  // bound from it, with arithmetic, `//`, `%`, comparisons and logic; nullopt for anything else.
  std::optional<int64_t> value(const Expr& e) const {
    switch (e.kind) {
      case Expr::Kind::number: return fixed_number(a_, &e);
      case Expr::Kind::name: {
        if (auto v = values_.find(e.text); v != values_.end()) return v->second;
        auto type = a_.semantics.types.find(&e);
        if (type && type->fixed && type->known_size) return type->known_size->constant_value();
        return std::nullopt;
      }
      case Expr::Kind::as: return e.operands.empty() || !e.operands[0] ? std::nullopt : value(*e.operands[0]);
      case Expr::Kind::unary: {
        auto v = e.operands.empty() || !e.operands[0] ? std::nullopt : value(*e.operands[0]);
        if (!v) return std::nullopt;
        return e.text == "!" ? static_cast<int64_t>(*v == 0) : -*v;
      }
      case Expr::Kind::binary: {
        if (e.operands.size() != 2 || !e.operands[0] || !e.operands[1]) return std::nullopt;
        auto l = value(*e.operands[0]), r = value(*e.operands[1]);
        if (!l || !r) return std::nullopt;
        const std::string& op = e.text;
        // Python's floor division and remainder (the remainder takes the divisor's sign).
        auto floor_div = [](int64_t x, int64_t y) { return x / y - ((x % y != 0) && ((x < 0) != (y < 0))); };
        if (op == "+") return *l + *r;
        if (op == "-") return *l - *r;
        if (op == "*") return *l * *r;
        if (op == "//") return *r == 0 ? std::nullopt : std::optional<int64_t>(floor_div(*l, *r));
        if (op == "%") return *r == 0 ? std::nullopt : std::optional<int64_t>(*l - *r * floor_div(*l, *r));
        if (op == "==") return *l == *r;
        if (op == "!=") return *l != *r;
        if (op == "<") return *l < *r;
        if (op == "<=") return *l <= *r;
        if (op == ">") return *l > *r;
        if (op == ">=") return *l >= *r;
        if (op == "and") return *l && *r;
        if (op == "or") return *l || *r;
        return std::nullopt;  // `/` is a Real
      }
      default: return std::nullopt;
    }
  }
};

}  // namespace

std::vector<std::vector<int64_t>> attention_windows_per_block(const Analysis& analysis, const ModelLayout& layout) {
  std::vector<std::vector<int64_t>> out;
  // More blocks than any model has (a mistyped dim) are not walked one by one.
  if (!layout.loop || !layout.loop->body || !layout.layers || layout.loop_start.value_or(-1) != 0 || *layout.layers > (1 << 16)) return out;
  for (int64_t l = 0; l < *layout.layers; ++l) {
    BlockWalk walk(analysis, layout.loop->variable, l);
    walk.block(*layout.loop->body);
    out.push_back(std::move(walk.windows));
  }
  return out;
}

BlockSlices block_slices(const Analysis& analysis, const ModelLayout& layout) {
  BlockSlices out;
  if (!layout.loop || !layout.loop->body || !layout.layers || layout.loop_start.value_or(-1) != 0 || *layout.layers > (1 << 16)) return out;
  for (int64_t l = 0; l < *layout.layers; ++l) {
    BlockWalk walk(analysis, layout.loop->variable, l, &layout);
    walk.block(*layout.loop->body);
    out.per_block.push_back(std::move(walk.slices));
    for (ModelRefusal& r : walk.refusals)
      if (std::none_of(out.refusals.begin(), out.refusals.end(), [&](const ModelRefusal& o) { return o.span == r.span; }))
        out.refusals.push_back(std::move(r));
  }
  return out;
}

}  // namespace ss
