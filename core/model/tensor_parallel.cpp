#include "model/tensor_parallel.h"

#include <set>

#include "check/builtins.h"

namespace ss {

namespace {

// How a value is laid out across devices.
enum class Split { whole, features, heads, broken };  // features: the last axis; heads: axis 1 of [b H n Dh]

struct Value {
  Split split = Split::whole;
  std::string field;  // a model field (a stacked weight's block), when the value is one
};

struct Planner {
  const Analysis& a;
  const ModelLayout& layout;
  std::map<std::string, std::string> plan;
  std::set<std::string> other_uses;  // fields used other than as a linear's weight
  bool failed = false;
  int depth = 0;

  Value fail() {
    failed = true;
    return {Split::broken, ""};
  }

  const ValueType* type_of(const Expr* e) const {
    return a.semantics.types.find(e);
  }

  // A whole operand broadcast against a split one: fine when it is a scalar, or has size 1 on the split axis.
  bool broadcasts_along(const Expr* whole, Split split, size_t rank) const {
    const ValueType* t = type_of(whole);
    if (!t || !t->is_tensor()) return true;  // a number, a size
    size_t r = t->tensor.rank();
    if (r == 0) return true;
    size_t axis = split == Split::features ? r - 1 : (r == rank ? 1 : SIZE_MAX);
    if (axis == SIZE_MAX || axis >= r) return false;
    auto size = t->tensor.axes[axis].size.constant_value();
    return size && *size == 1;
  }

  Value combine(const Expr* a_expr, Value x, const Expr* b_expr, Value y, const Expr* whole) {
    if (x.split == Split::broken || y.split == Split::broken) return fail();
    if (x.split == y.split) return {x.split, ""};
    const ValueType* t = type_of(whole);
    size_t rank = t && t->is_tensor() ? t->tensor.rank() : 0;
    if (x.split == Split::whole && broadcasts_along(a_expr, y.split, rank)) return {y.split, ""};
    if (y.split == Split::whole && broadcasts_along(b_expr, x.split, rank)) return {x.split, ""};
    return fail();
  }

  using Env = std::map<std::string, Value>;

  Value use_field(const Value& v) {
    if (!v.field.empty()) other_uses.insert(v.field);
    return {v.split, ""};
  }

  Value expr(const Expr* e, Env& env) {
    if (!e || failed) return fail();
    switch (e->kind) {
      case Expr::Kind::number:
      case Expr::Kind::string: return {};
      case Expr::Kind::name: {
        auto found = env.find(e->text);
        return found == env.end() ? Value{} : found->second;  // dims and sizes: whole
      }
      case Expr::Kind::subscript: {
        // `m.w_q[l]`: one block's slice of a stacked weight.
        const Expr* base = e->operands.empty() ? nullptr : e->operands[0].get();
        if (auto field = layout.model_field(base); field && e->index.size() == 1 && e->index[0].kind == SizeNode::Kind::name &&
                                                    e->index[0].name == layout.loop->variable)
          return {Split::whole, *field};
        Value v = expr(base, env);
        return v.split == Split::whole ? use_field(v) : fail();
      }
      case Expr::Kind::attribute:
        if (auto field = layout.model_field(e)) return {Split::whole, *field};
        return fail();
      case Expr::Kind::unary: return use_field(expr(e->operands[0].get(), env));
      case Expr::Kind::binary: {
        Value x = use_field(expr(e->operands[0].get(), env)), y = use_field(expr(e->operands[1].get(), env));
        return combine(e->operands[0].get(), x, e->operands[1].get(), y, e);
      }
      case Expr::Kind::as: return use_field(expr(e->operands[0].get(), env));
      case Expr::Kind::lambda: {  // `map`'s body, its parameter an index: whole unless it reads split values
        Env inner = env;
        inner[e->text] = Value{};
        return use_field(expr(e->operands.empty() ? nullptr : e->operands[0].get(), inner));
      }
      case Expr::Kind::call: return call(e, env);
      default: return fail();
    }
  }

  Value call(const Expr* e, Env& env) {
    auto facts = a.semantics.calls.find(e);
    if (!facts) return fail();
    std::vector<Value> args;
    std::vector<const Expr*> arg_exprs;
    for (const Argument& argument : e->arguments)
      if (!argument.keyword && !argument.pattern && argument.value) {
        args.push_back(expr(argument.value.get(), env));
        arg_exprs.push_back(argument.value.get());
      }
    if (failed) return fail();
    if (facts->function) return function(*facts->function, args);
    if (!facts->builtin) return fail();
    std::string name(facts->builtin->name);  // the regrouping built-ins', whose patterns are read below
    BuiltinRole role = facts->builtin->role;
    auto keyword_value = [&](std::string_view keyword) -> Value {
      for (const Argument& argument : e->arguments)
        if (argument.keyword && *argument.keyword == keyword && argument.value) return use_field(expr(argument.value.get(), env));
      return {};
    };
    if (role == BuiltinRole::linear && args.size() >= 2) {
      if (args[1].field.empty()) return fail();  // a weight computed in the block: can't be split as it loads
      Split in = use_field(args[0]).split;
      std::string style = in == Split::whole ? "colwise" : in == Split::features ? "rowwise" : "";
      if (style.empty()) return fail();
      auto [at, inserted] = plan.emplace(args[1].field, style);
      if (!inserted && at->second != style) return fail();
      if (args.size() == 3 && args[2].field.empty()) return fail();
      return {style == "colwise" ? Split::features : Split::whole, ""};
    }
    for (Value& v : args) v = use_field(v);
    bool all_whole = true;
    for (const Value& v : args) all_whole = all_whole && v.split == Split::whole;
    // Element-wise built-ins keep the layout; so do dropout and scaling by a scalar.
    if ((is_elementwise(*facts->builtin) || name == "dropout" || role == BuiltinRole::scale) && !args.empty()) return {args[0].split, ""};
    if (role == BuiltinRole::attention && args.size() == 3) {
      if (args[0].split == args[1].split && args[1].split == args[2].split && args[0].split != Split::features) return {args[0].split, ""};
      return fail();
    }
    // Cut by sizes (no pattern): the heads stay split unless the cut is along them (axis 1).
    if (name == "split" && facts->lowering.count("dim") && !args.empty()) {
      if (args[0].split == Split::whole) return {};
      const ValueType* t = type_of(arg_exprs[0]);
      if (args[0].split != Split::heads || !t || !t->is_tensor()) return fail();
      long rank = static_cast<long>(t->tensor.rank());
      return (std::stol(facts->lowering.at("dim")) + rank) % rank != 1 ? Value{Split::heads, ""} : fail();
    }
    if (name == "rearrange" || name == "split") return regroup(e, name, args.empty() ? Value{} : args[0]);
    if (name == "concat") {
      for (const Value& v : args)
        if (v.split != args[0].split) return fail();
      if (args[0].split == Split::whole) return {};
      auto dim = facts->lowering.find("dim");
      const ValueType* t = type_of(e);
      if (args[0].split == Split::heads && dim != facts->lowering.end() && t && t->is_tensor()) {
        long d = std::stol(dim->second);
        long rank = static_cast<long>(t->tensor.rank());
        if ((d + rank) % rank != 1) return {Split::heads, ""};
      }
      return fail();
    }
    if (all_whole) {  // norms, reductions, masks, maps on whole values: whole (their keyword weights are whole too)
      for (const Argument& argument : e->arguments)
        if (argument.keyword && argument.value && *argument.keyword != "over") keyword_value(*argument.keyword);
      return {};
    }
    return fail();
  }

  // rearrange/split moving the split axis: [.. (H Dh)] split along features <-> [b H n Dh] split along heads.
  Value regroup(const Expr* e, const std::string& name, Value x) {
    if (x.split == Split::whole) return {};
    const AxisPattern* pattern = nullptr;
    for (const Argument& argument : e->arguments)
      if (argument.pattern) pattern = &*argument.pattern;
    if (!pattern || pattern->inputs.size() != 1 || pattern->inputs[0].empty()) return fail();
    const std::vector<SizeNode>& in = pattern->inputs[0];
    const std::vector<SizeNode>& out = pattern->output;
    if (x.split == Split::features && name == "rearrange") {
      // `b n (H Dh) -> b H n Dh`: the last group's first factor becomes axis 1.
      const SizeNode& last = in.back();
      if (last.kind != SizeNode::Kind::group || last.children.empty() || last.children[0].kind != SizeNode::Kind::name) return fail();
      if (out.size() >= 2 && out[1].kind == SizeNode::Kind::name && out[1].name == last.children[0].name) return {Split::heads, ""};
      return fail();
    }
    if (x.split == Split::heads) {
      if (in.size() < 2 || in[1].kind != SizeNode::Kind::name) return fail();
      const std::string& head = in[1].name;
      // `b H n Dh -> b n (H Dh)`: axis 1 becomes the last group's first factor.
      if (name == "rearrange" && !out.empty() && out.back().kind == SizeNode::Kind::group && !out.back().children.empty() &&
          out.back().children[0].kind == SizeNode::Kind::name && out.back().children[0].name == head)
        return {Split::features, ""};
      // Regrouping other axes keeps axis 1 where it is (`split(b H n (2 h) -> b H n h)`).
      if (out.size() >= 2 && out[1].kind == SizeNode::Kind::name && out[1].name == head) return {Split::heads, ""};
    }
    return fail();
  }

  Value function(const Item& fn, const std::vector<Value>& args) {
    if (++depth > 16 || !fn.body || args.size() != fn.parameters.size()) return fail();
    Env env;
    for (size_t i = 0; i < args.size(); ++i) env[fn.parameters[i].name] = args[i];
    Value result = block(*fn.body, env);
    --depth;
    return result;
  }

  // A block's statements; the value of its `return`, if any.
  Value block(const Block& b, Env& env) {
    Value result;
    for (const Statement& s : b.statements) {
      if (failed) return fail();
      switch (s.kind) {
        case Statement::Kind::assign: {
          Value v = expr(s.value.get(), env);
          if (s.targets.size() > 1) v = use_field(v);  // the pieces of a split keep its layout
          for (auto& [target, span] : s.targets) env[target] = v;
          break;
        }
        case Statement::Kind::return_: result = use_field(expr(s.value.get(), env)); break;
        case Statement::Kind::expression: expr(s.value.get(), env); break;
        default: return fail();  // loops and branches inside a block: not followed
      }
    }
    return result;
  }
};

}  // namespace

std::optional<std::map<std::string, std::string>> tensor_parallel_plan(const Analysis& analysis, const ModelLayout& layout) {
  if (!layout.loop || !layout.loop->body) return std::nullopt;
  const Block& body = *layout.loop->body;
  Planner planner{analysis, layout, {}, {}, false, 0};
  std::map<std::string, Value> env;  // everything outside the block is whole
  for (const Statement& s : body.statements) {
    if (s.kind != Statement::Kind::assign || s.targets.size() != 1) return std::nullopt;
    Value v = planner.use_field(planner.expr(s.value.get(), env));
    // Each block hands the next its hidden states whole (the residual stream).
    if (planner.failed || v.split != Split::whole) return std::nullopt;
    env[s.targets[0].first] = v;
  }
  std::map<std::string, std::string> plan;
  for (auto& [field, style] : planner.plan) {
    if (planner.other_uses.count(field)) return std::nullopt;  // also used whole: can't be split
    plan[field] = style;
  }
  if (plan.empty()) return std::nullopt;
  return plan;
}

}  // namespace ss
