#include "model/model_cost.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>

#include "check/builtins.h"
#include "model/model_layout.h"
#include "syntax/walk.h"

namespace ss {

namespace {

// A dim as a polynomial in the dims it is made of: `Dkv = Hkv * Dh` expands, `Dh = D / H` stays `Dh`
// (a quotient is no polynomial), and a dim given as a number is itself a variable.
class DimAlgebra {
 public:
  explicit DimAlgebra(const Analysis& analysis) {
    for (const Item& item : analysis.program.items)
      if (item.kind == Item::Kind::dim && !dims_.count(item.name)) dims_[item.name] = &item;
  }

  bool is_dim(const std::string& name) const { return dims_.count(name) > 0; }

  SizeExpr dim(const std::string& name) {
    if (auto done = expanded_.find(name); done != expanded_.end()) return done->second;
    SizeExpr result = SizeExpr::variable(name);
    auto item = dims_.find(name);
    if (item != dims_.end() && item->second->dim_value && item->second->dim_value->kind != SizeNode::Kind::number && !expanding_.count(name)) {
      expanding_.insert(name);
      if (auto value = size(*item->second->dim_value)) result = *value;
      expanding_.erase(name);
    }
    expanded_[name] = result;
    return result;
  }

  std::optional<SizeExpr> size(const SizeNode& node) {
    switch (node.kind) {
      case SizeNode::Kind::number: return SizeExpr::constant(node.number);
      case SizeNode::Kind::name:
        if (!is_dim(node.name)) return std::nullopt;
        return dim(node.name);
      case SizeNode::Kind::scaled:
        if (!is_dim(node.name)) return std::nullopt;
        return SizeExpr::constant(node.number) * dim(node.name);
      case SizeNode::Kind::group: {
        SizeExpr product = SizeExpr::constant(1);
        for (const SizeNode& child : node.children) {
          auto factor = size(child);
          if (!factor) return std::nullopt;
          product *= *factor;
        }
        return product;
      }
      case SizeNode::Kind::binary: {
        if (node.children.size() != 2) return std::nullopt;
        auto left = size(node.children[0]);
        auto right = size(node.children[1]);
        if (!left || !right) return std::nullopt;
        switch (node.op) {
          case '+': return *left + *right;
          case '-': return *left - *right;
          case '*': return *left * *right;
          case '/': return right->is_zero() ? std::nullopt : left->divide_exact(*right);
          case '%':
          case SizeNode::kFloorDivide: {
            auto k = right->constant_value();
            if (!k) return std::nullopt;
            return node.op == '%' ? left->remainder(*k) : left->floor_divide(*k);
          }
          default: return std::nullopt;
        }
      }
      default: return std::nullopt;
    }
  }

 private:
  std::map<std::string, const Item*> dims_;
  std::map<std::string, SizeExpr> expanded_;
  std::set<std::string> expanding_;
};

// An axis of a checked type as a polynomial in the dims: by its label when that names a dim, else its fixed size.
std::optional<SizeExpr> axis_formula(DimAlgebra& dims, const Axis& axis) {
  if (dims.is_dim(axis.label)) return dims.dim(axis.label);
  if (axis.size.is_constant()) return axis.size;
  return std::nullopt;
}

struct KeyValueCount {
  SizeExpr elements;  // per token, per pass through the code walked
  SizeExpr formula;
  bool known = true;
  // Every attention's `window=` (the narrowest): a sequence's cache then holds at most that many tokens.
  std::optional<int64_t> window;
  bool every_attention_windowed = true;
};

// The keys and values that every scaled_dot_product_attention reached from `block` reads, per token:
// heads times head size of k, and of v. Calls of the file's own functions are followed.
void count_key_values(const Analysis& analysis, DimAlgebra& dims, const Block& block, KeyValueCount& count,
                      std::set<const Item*>& active, int& attentions) {
  for_each_statement(block, [&](const Statement& statement) {
    auto visit = [&](const Expr& e) {
      const CallFacts* facts = nullptr;
      if (is_builtin_call(analysis, e, BuiltinRole::attention, &facts)) {
        ++attentions;
        if (auto window = facts->lowering.find("window"); window != facts->lowering.end())
          count.window = std::min<int64_t>(count.window.value_or(INT64_MAX), std::stoll(window->second));
        else
          count.every_attention_windowed = false;
        std::vector<const Expr*> positional;
        for (const Argument& argument : e.arguments)
          if (!argument.keyword && argument.value) positional.push_back(argument.value.get());
        for (size_t i = 1; i <= 2; ++i) {
          const ValueType* type = nullptr;
          if (positional.size() > i)
            if (auto t = analysis.semantics.types.find(positional[i]); t) type = t;
          if (!type || !type->is_tensor() || type->tensor.rank() < 3) {
            count.known = false;
            continue;
          }
          const auto& axes = type->tensor.axes;
          const Axis& heads = axes[axes.size() - 3];
          const Axis& head_size = axes[axes.size() - 1];
          auto h = axis_formula(dims, heads), d = axis_formula(dims, head_size);
          if (!h || !d || !heads.size.is_constant() || !head_size.size.is_constant()) {
            count.known = false;
            continue;
          }
          count.elements += heads.size * head_size.size;
          count.formula += *h * *d;
        }
        return;
      }
      if (facts && facts->function && facts->function->body && !active.count(facts->function)) {
        // Calls nest as deep as a file has functions: past the nesting limit, the count is unknown
        // rather than the stack exhausted.
        if (active.size() > static_cast<size_t>(kMaxNesting)) {
          count.known = false;
          return;
        }
        active.insert(facts->function);
        count_key_values(analysis, dims, *facts->function->body, count, active, attentions);
        active.erase(facts->function);
      }
    };
    // Only this statement's own expressions: the walk over the block reaches the nested ones itself.
    if (statement.value) for_each_expr(*statement.value, visit);
    if (statement.end) for_each_expr(*statement.end, visit);
    for (const auto& [condition, body] : statement.branches)
      if (condition) for_each_expr(*condition, visit);
    // An `if` decided per block (on the block's index) runs one branch in each block: its branches
    // are alternatives, and the cache holds the largest one's keys and values (exact when they agree).
    bool per_block = statement.kind == Statement::Kind::if_ &&
                     std::all_of(statement.branches.begin(), statement.branches.end(), [&](const auto& branch) {
                       const ValueType* type = branch.first ? analysis.semantics.types.find(branch.first.get()) : nullptr;
                       return type && type->fixed;
                     });
    if (!per_block) return Walk::into;
    std::vector<const Block*> branches;
    for (const auto& [condition, body] : statement.branches) branches.push_back(body.get());
    branches.push_back(statement.body.get());
    std::optional<KeyValueCount> largest;
    int most = 0;
    for (const Block* branch : branches) {
      KeyValueCount alternative;
      int calls = 0;
      if (branch) count_key_values(analysis, dims, *branch, alternative, active, calls);
      count.known = count.known && alternative.known;
      if (alternative.window) count.window = std::min(count.window.value_or(INT64_MAX), *alternative.window);
      if (calls) count.every_attention_windowed = count.every_attention_windowed && alternative.every_attention_windowed;
      auto size = alternative.elements.constant_value();
      if (!largest || (size && largest->elements.constant_value() && *size > *largest->elements.constant_value())) largest = alternative;
      most = std::max(most, calls);
    }
    if (largest) {
      count.elements += largest->elements;
      count.formula += largest->formula;
    }
    attentions += most;
    return Walk::skip;
  });
}

const char* superscript(uint32_t power) {
  static const char* digits[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  return power < 10 ? digits[power] : nullptr;
}

}  // namespace

std::string group_thousands(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string format_size_formula(const SizeExpr& size) {
  if (size.is_zero()) return "0";
  std::string out;
  const auto& terms = size.terms();
  for (auto it = terms.rbegin(); it != terms.rend(); ++it) {
    const auto& [monomial, coefficient] = *it;
    int64_t magnitude = coefficient < 0 ? -coefficient : coefficient;
    out += out.empty() ? (coefficient < 0 ? "-" : "") : (coefficient < 0 ? " - " : " + ");
    std::string term = magnitude != 1 || monomial.empty() ? std::to_string(magnitude) : "";
    for (const auto& [name, power] : monomial) {
      if (!term.empty()) term += "·";
      term += name;
      if (power > 1) {
        const char* sup = superscript(power);
        term += sup ? std::string(sup) : "^" + std::to_string(power);
      }
    }
    out += term;
  }
  return out;
}

namespace {

int64_t checked_product(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("a model's size overflows int64");
  return r;
}

// What model_cost looks up across the whole program, found once for all of a file's models: a
// scan of every item per model made a file of many models quadratic.
struct ProgramIndex {
  explicit ProgramIndex(const Analysis& analysis) : dims(analysis) {
    // A language model's forward takes the model first and runs its blocks in a `for`.
    for (const Item& item : analysis.program.items) {
      if (item.kind != Item::Kind::function || item.parameters.empty() || !item.body) continue;
      auto types = analysis.semantics.functions.find(&item);
      if (types == analysis.semantics.functions.end() || types->second->parameters.empty() ||
          types->second->parameters[0].kind != ValueType::Kind::model)
        continue;
      bool loops = std::any_of(item.body->statements.begin(), item.body->statements.end(),
                               [](const Statement& s) { return s.kind == Statement::Kind::for_; });
      if (loops) forwards[types->second->parameters[0].name].push_back(&item);
    }
  }
  DimAlgebra dims;
  std::map<std::string, std::vector<const Item*>> forwards;  // by model name, in source order
};

// A size at the dims' values: SizeExpr::substitute's arithmetic, checked alike, without building a
// polynomial per term; a size naming a non-dim is substituted, since its terms may still cancel.
std::optional<int64_t> value_at_dims(const SizeExpr& size, const std::map<std::string, int64_t>& dims) {
  int64_t total = 0;
  for (const auto& [monomial, coefficient] : size.terms()) {
    int64_t term = coefficient;
    for (const auto& [name, exponent] : monomial) {
      auto value = dims.find(name);
      if (value == dims.end()) {
        SizeBindings values;
        for (const std::string& variable : size.variables())
          if (auto v = dims.find(variable); v != dims.end()) values[variable] = SizeExpr::constant(v->second);
        return size.substitute(values).constant_value();
      }
      int64_t power = 1, base = value->second;  // square-and-multiply, as SizeExpr's power
      for (uint32_t e = exponent; e > 0;) {
        if (e & 1u) power = checked_product(power, base);
        e >>= 1;
        if (e > 0) base = checked_product(base, base);
      }
      term = checked_product(term, power);
    }
    if (__builtin_add_overflow(total, term, &total)) throw std::overflow_error("size arithmetic overflows int64");
  }
  return total;
}

ModelCost model_cost_or_overflow(const Analysis& analysis, const Item& model, ProgramIndex& index) {
  ModelCost cost;
  DimAlgebra& dims = index.dims;
  SizeExpr formula;
  for (const Item::Param& param : model.params) {
    int64_t count = 1;
    SizeExpr symbolic = SizeExpr::constant(1);
    for (const SizeNode& axis : param.type.axes) {
      auto size = dims.size(axis);
      // The number is the formula at the dims' values; a size the algebra can't write leaves only the number.
      std::optional<int64_t> value;
      if (size) value = value_at_dims(*size, analysis.semantics.dims);
      if (!size || !value) return ModelCost{};  // an unchecked size: no count at all rather than a wrong one
      count = checked_product(count, *value);
      symbolic *= *size;
    }
    if (__builtin_add_overflow(cost.parameters, count, &cost.parameters)) throw std::overflow_error("a model's size overflows int64");
    formula += symbolic;
  }
  cost.parameter_formula = formula;

  // The forward: the first function taking this model that has a language model's layout.
  auto forwards = index.forwards.find(model.name);
  for (const Item* candidate : forwards == index.forwards.end() ? std::vector<const Item*>{} : forwards->second) {
    const Item& item = *candidate;
    ModelLayout layout = find_model_layout(analysis, item.name);
    if (!layout.is_language_model() || !layout.loop || !layout.loop->body || layout.loops != 1 || !layout.layers || !layout.loop_start)
      continue;
    KeyValueCount count;
    std::set<const Item*> active{&item};
    int attentions = 0;
    count_key_values(analysis, dims, *layout.loop->body, count, active, attentions);
    if (!attentions || !count.known) continue;
    int64_t layers = *layout.layers - *layout.loop_start;
    SizeExpr layers_formula = SizeExpr::constant(layers);
    const Expr* end = layout.loop->end.get();
    if (*layout.loop_start == 0 && end && end->kind == Expr::Kind::name && dims.is_dim(end->text)) layers_formula = dims.dim(end->text);
    cost.forward = item.name;
    auto elements = (count.elements * SizeExpr::constant(layers)).constant_value();
    if (!elements) continue;
    checked_product(*elements, 4);  // the hover says the bytes in float32
    cost.kv_elements_per_token = *elements;
    cost.kv_formula = layers_formula * count.formula;
    if (count.every_attention_windowed) cost.kv_window = count.window;
    break;
  }
  return cost;
}

}  // namespace

ModelCost model_cost(const Analysis& analysis, const Item& model) { return model_costs(analysis, {&model}).at(&model); }

std::map<const Item*, ModelCost> model_costs(const Analysis& analysis, const std::vector<const Item*>& models) {
  ProgramIndex index(analysis);
  std::map<const Item*, ModelCost> costs;
  for (const Item* model : models) {
    // Sizes past 64 bits (a fuzzed or absurd file) leave the model without figures: checking never fails.
    try {
      costs[model] = model_cost_or_overflow(analysis, *model, index);
    } catch (const std::overflow_error&) {
      costs[model] = ModelCost{};
    }
  }
  return costs;
}

}  // namespace ss
