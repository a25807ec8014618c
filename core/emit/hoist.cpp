#include "emit/hoist.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "check/builtins.h"
#include "syntax/walk.h"

namespace ss {

std::vector<size_t> HoistPlan::versions_of(const Item* function) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < functions.size(); ++i)
    if (functions[i].function == function) out.push_back(i);
  return out;
}

namespace {

// Which names hold the same value at every iteration.
struct Scope {
  std::map<std::string, bool> variables;  // parameters and locals the scope knows
  bool others_invariant = false;          // a loop's body: a name it doesn't assign is the same throughout
  std::set<std::string> axes;             // generic axes read from invariant inputs
  bool all_axes = false;                  // a loop's body: the function's input sizes don't change
};

class Planner {
 public:
  explicit Planner(const Analysis& a) : a_(a) {}

  HoistPlan run() {
    for (const Item& item : a_.program.items)
      if (item.kind == Item::Kind::function && item.body)
        for_each_statement(*item.body, [&](const Statement& s) {
          if (s.kind == Statement::Kind::for_ && s.body) plan_loop(s);
        });
    return std::move(plan_);
  }

 private:
  const Analysis& a_;
  HoistPlan plan_;
  std::map<std::pair<const Item*, std::vector<bool>>, std::optional<size_t>> versions_;
  std::map<const Item*, bool> deterministic_;  // a function's calls are all deterministic

  const ValueType* type_of(const Expr& e) const {
    return a_.semantics.types.find(&e);
  }
  const CallFacts* facts_of(const Expr& e) const {
    return a_.semantics.calls.find(&e);
  }
  std::string text(const Expr& e) const { return std::string(a_.file.slice(e.span)); }

  // ---- Invariance

  bool size_name_invariant(const std::string& name, const Scope& scope) const {
    if (a_.semantics.dims.count(name)) return true;
    if (auto it = scope.variables.find(name); it != scope.variables.end()) return it->second;
    return scope.all_axes || scope.axes.count(name);
  }

  bool size_invariant(const SizeNode& node, const Scope& scope) const {
    if ((node.kind == SizeNode::Kind::name || node.kind == SizeNode::Kind::scaled) && !size_name_invariant(node.name, scope)) return false;
    return std::all_of(node.children.begin(), node.children.end(), [&](const SizeNode& c) { return size_invariant(c, scope); });
  }

  bool name_invariant(const Expr& e, const Scope& scope) const {
    if (auto it = scope.variables.find(e.text); it != scope.variables.end()) return it->second;
    if (a_.semantics.dims.count(e.text) || e.text == "inf") return true;
    if (const ValueType* type = type_of(e); type && type->known_size) {  // a generic axis read as a value
      auto variables = type->known_size->variables();
      return std::all_of(variables.begin(), variables.end(), [&](const std::string& v) { return size_name_invariant(v, scope); });
    }
    return scope.others_invariant;
  }

  // Whether every call in `item` (and what it calls) gives the same result for the same arguments.
  bool deterministic(const Item& item) {
    if (auto it = deterministic_.find(&item); it != deterministic_.end()) return it->second;
    deterministic_[&item] = false;  // a recursive call: not split
    bool ok = item.kind == Item::Kind::function && item.body && for_each_expr(*item.body, [&](const Expr& e) {
      if (e.kind != Expr::Kind::call && e.kind != Expr::Kind::subscript) return Walk::into;
      const CallFacts* facts = facts_of(e);
      if (!facts) return e.kind == Expr::Kind::call ? Walk::stop : Walk::into;
      if (facts->builtin) return facts->builtin->effect == BuiltinEffect::pure ? Walk::into : Walk::stop;
      if (facts->function) return deterministic(*facts->function) ? Walk::into : Walk::stop;
      return Walk::stop;  // `import python`
    });
    deterministic_[&item] = ok;
    return ok;
  }

  bool invariant(const Expr& e, const Scope& scope, std::vector<std::string>& bound) {
    auto operands = [&](size_t from) {
      for (size_t i = from; i < e.operands.size(); ++i)
        if (!e.operands[i] || !invariant(*e.operands[i], scope, bound)) return false;
      return true;
    };
    switch (e.kind) {
      case Expr::Kind::number:
      case Expr::Kind::string: return true;
      case Expr::Kind::name:
        return std::find(bound.begin(), bound.end(), e.text) != bound.end() || name_invariant(e, scope);
      case Expr::Kind::binary:
      case Expr::Kind::unary:
      case Expr::Kind::attribute: return operands(0);
      case Expr::Kind::subscript: {
        for (const SizeNode& size : e.index)
          if (!size_invariant(size, scope)) return false;
        if (const CallFacts* facts = facts_of(e); facts && facts->builtin)  // `causal[n n]`, `zeros[n D]`
          return facts->builtin->effect == BuiltinEffect::pure;
        return operands(0);
      }
      case Expr::Kind::lambda: {
        bound.push_back(e.text);
        bool body = operands(0);
        bound.pop_back();
        return body;
      }
      case Expr::Kind::call: {
        const CallFacts* facts = facts_of(e);
        if (!facts) return false;
        if (facts->builtin ? facts->builtin->effect != BuiltinEffect::pure
                           : !(facts->function && facts->function->kind == Item::Kind::function && deterministic(*facts->function)))
          return false;
        for (const Argument& argument : e.arguments)
          if (argument.value && !invariant(*argument.value, scope, bound)) return false;
        return true;
      }
      case Expr::Kind::as:  // its check reads the sizes of the place it is written
      case Expr::Kind::error: return false;
    }
    return false;
  }

  bool invariant(const Expr& e, const Scope& scope) {
    std::vector<std::string> bound;
    return invariant(e, scope, bound);
  }

  // ---- Calls

  // Per parameter of the call's callee: whether its argument is the same at every iteration and of
  // a kind a version may compute from: positions, indices, masks and plain numbers, never a tensor
  // of model values. Empty when the call isn't one to split.
  std::vector<bool> invariant_arguments(const Expr& call, const Scope& scope) {
    const CallFacts* facts = facts_of(call);
    if (!facts || !facts->function || facts->function->kind != Item::Kind::function || !facts->function->body) return {};
    auto types = a_.semantics.functions.find(facts->function);
    if (types == a_.semantics.functions.end()) return {};
    std::vector<const Expr*> positional;
    for (const Argument& argument : call.arguments) {
      if (argument.keyword || argument.pattern || !argument.value) return {};
      positional.push_back(argument.value.get());
    }
    if (positional.size() != types->second->parameters.size()) return {};
    std::vector<bool> mask(positional.size(), false);
    bool any = false;
    for (size_t i = 0; i < positional.size(); ++i) {
      const ValueType& parameter = types->second->parameters[i];
      const ValueType* argument = type_of(*positional[i]);
      // A model value's dtype is the caller's; a plain number (`rope(q, pos, 10000)`) is a float32 tensor either way.
      if (!parameter.is_tensor() || !argument) continue;
      if (parameter.tensor.element.is_real() && !(parameter.tensor.rank() == 0 && argument->fixed)) continue;
      mask[i] = invariant(*positional[i], scope);
      any = any || mask[i];
    }
    return any ? mask : std::vector<bool>{};
  }

  // The invariant arguments' text: two calls with the same text prepare the same values.
  std::string call_key(const Expr& call, size_t callee) const {
    std::string key = std::to_string(callee);
    const std::vector<bool>& mask = plan_.functions[callee].invariant;
    for (size_t i = 0; i < call.arguments.size() && i < mask.size(); ++i)
      if (mask[i]) key += "\x1f" + text(*call.arguments[i].value);
    return key;
  }

  // ---- Loops

  void plan_loop(const Statement& loop) {
    bool training = !for_each_expr(*loop.body, [&](const Expr& e) {
      const CallFacts* facts = facts_of(e);
      return facts && facts->builtin && facts->builtin->effect == BuiltinEffect::training ? Walk::stop : Walk::into;
    });
    if (training) return;  // `update` changes the model between iterations
    Scope scope;
    scope.others_invariant = true;
    scope.all_axes = true;
    scope.variables[loop.variable] = false;
    for_each_statement(*loop.body, [&](const Statement& s) {
      for (auto& [name, span] : s.targets) scope.variables[name] = false;
      if (s.kind == Statement::Kind::for_) scope.variables[s.variable] = false;
    });
    HoistedLoop planned;
    std::map<std::string, size_t> by_key;
    // The body's statements and its `if`s' (a static `if` on the block's index picks a rope base);
    // a nested loop plans its own.
    for_each_statement(*loop.body, [&](const Statement& s) {
      if (s.kind == Statement::Kind::for_) return Walk::skip;
      for (const auto& [condition, branch] : s.branches)
        if (condition) plan_calls(*condition, scope, planned, by_key);
      if (s.value) plan_calls(*s.value, scope, planned, by_key);
      return Walk::into;
    });
    if (!planned.prepared.empty()) plan_.loops[&loop] = std::move(planned);
  }

  // Each call in `value` that has invariant arguments and a version: prepared once per distinct call.
  void plan_calls(const Expr& value, const Scope& scope, HoistedLoop& planned, std::map<std::string, size_t>& by_key) {
    for_each_expr(value, [&](const Expr& e) {
      if (e.kind == Expr::Kind::lambda) return Walk::skip;
      if (e.kind != Expr::Kind::call) return Walk::into;
      std::vector<bool> mask = invariant_arguments(e, scope);
      if (mask.empty()) return Walk::into;
      std::optional<size_t> callee = version(*facts_of(e)->function, mask);
      if (!callee) return Walk::into;
      auto [at, added] = by_key.emplace(call_key(e, *callee), planned.prepared.size());
      if (added) planned.prepared.push_back({&e, *callee});
      planned.prepared_of[&e] = at->second;
      return Walk::into;
    });
  }

  // ---- Versions

  // Worth computing once: it calls something or reads a value computed once.
  bool worth(const Expr& e, const std::set<std::string>& hoisted) const {
    if (e.kind == Expr::Kind::lambda || e.kind == Expr::Kind::number || e.kind == Expr::Kind::string) return false;
    const ValueType* type = type_of(e);
    if (!type || !type->is_tensor() || type->fixed) return false;
    return !for_each_expr(e, [&](const Expr& x) {
      if (x.kind == Expr::Kind::call) return Walk::stop;  // not a mask made from sizes alone (`causal[n n]`): cheap, and sdpa's is_causal
      return x.kind == Expr::Kind::name && hoisted.count(x.text) ? Walk::stop : Walk::into;
    });
  }

  // Whether `e`, as the hoisted version writes it, reads the variable `name`: not inside a value
  // computed once, nor in an argument that a call's own hoisted version doesn't take.
  bool hoisted_reads(const HoistedFunction& f, const Expr& e, const std::string& name) const {
    if (e.kind == Expr::Kind::lambda && e.text == name) return false;  // its parameter shadows `name`
    auto parts = [&](const std::vector<bool>* takes) {
      for (const ExprPtr& operand : e.operands)
        if (operand && hoisted_reads(f, *operand, name)) return true;
      for (size_t i = 0; i < e.arguments.size(); ++i)
        if (e.arguments[i].value && (!takes || i >= takes->size() || (*takes)[i]) && hoisted_reads(f, *e.arguments[i].value, name)) return true;
      return false;
    };
    if (auto slot = f.slot_of.find(&e); slot != f.slot_of.end()) {
      const HoistedFunction::Slot& s = f.slots[slot->second];
      return s.value ? false : parts(&plan_.functions[s.callee].takes);
    }
    if (e.kind == Expr::Kind::name && e.text == name) return true;
    for (const SizeNode& n : e.index)
      if (walk_detail::size_names(n, name)) return true;
    if (e.type)
      for (const SizeNode& n : e.type->axes)
        if (walk_detail::size_names(n, name)) return true;
    return parts(nullptr);
  }

  // Per parameter of `f`: whether its hoisted version takes it (HoistedFunction::takes). An invariant
  // parameter the statements left (`rest`) don't read is dropped, unless the version needs it for
  // what the generators read from an input: a generic axis's size no parameter it keeps holds, or
  // the device when no parameter it keeps is a tensor with axes.
  std::vector<bool> taken_parameters(const Item& item, const HoistedFunction& f, const std::vector<const Statement*>& rest,
                                     const FunctionTypes& types) const {
    std::vector<bool> takes(item.parameters.size(), true);
    std::vector<size_t> unread;
    for (size_t i = 0; i < item.parameters.size(); ++i) {
      const std::string& name = item.parameters[i].name;
      bool read = std::any_of(rest.begin(), rest.end(), [&](const Statement* s) { return hoisted_reads(f, *s->value, name); });
      if (f.invariant[i] && !read) unread.push_back(i);
    }
    for (size_t i : unread) takes[i] = false;
    auto tensor_with_axes = [&](size_t i) { return i < types.parameters.size() && types.parameters[i].is_tensor() && types.parameters[i].tensor.rank() > 0; };
    // The axis readable from a kept parameter's shape as the generators read it (`n = x.shape[2]`).
    auto axis_held = [&](const std::string& axis) {
      for (size_t k = 0; k < takes.size(); ++k) {
        if (!takes[k] || !tensor_with_axes(k)) continue;
        for (const Axis& a : types.parameters[k].tensor.axes)
          if (a.size.fixed_linear_in(axis)) return true;
      }
      return false;
    };
    for (size_t i : unread) {
      if (!tensor_with_axes(i)) continue;
      bool needed = true;  // unless a kept parameter gives the device (anchor_of in emit/python_writer.h)
      for (size_t k = 0; k < takes.size(); ++k)
        if (takes[k] && (tensor_with_axes(k) || (k < types.parameters.size() && types.parameters[k].kind == ValueType::Kind::model))) needed = false;
      for (const Axis& a : types.parameters[i].tensor.axes)
        for (const std::string& v : a.size.variables())
          needed = needed || (!a_.semantics.dims.count(v) && !axis_held(v));
      if (needed) takes[i] = true;
    }
    return takes;
  }

  std::optional<size_t> version(const Item& item, const std::vector<bool>& mask) {
    auto key = std::make_pair(&item, mask);
    if (auto it = versions_.find(key); it != versions_.end()) return it->second;
    versions_[key] = std::nullopt;  // while it is planned: a recursive call is left as it is
    std::optional<size_t> planned = plan_version(item, mask);
    versions_[key] = planned;
    return planned;
  }

  std::optional<size_t> plan_version(const Item& item, const std::vector<bool>& mask) {
    auto types = a_.semantics.functions.find(&item);
    if (!item.body || types == a_.semantics.functions.end() || mask.size() != item.parameters.size()) return std::nullopt;
    for (const Statement& s : item.body->statements)
      if (s.kind != Statement::Kind::assign && s.kind != Statement::Kind::return_ && s.kind != Statement::Kind::expression) return std::nullopt;
    // A name bound more than once reads differently before and after: never computed once.
    std::map<std::string, int> bindings;
    for (const Parameter& p : item.parameters) ++bindings[p.name];
    for (const Statement& s : item.body->statements)
      for (auto& [name, span] : s.targets) ++bindings[name];
    Scope scope;
    for (size_t i = 0; i < item.parameters.size(); ++i) {
      bool same = mask[i] && bindings[item.parameters[i].name] == 1;
      scope.variables[item.parameters[i].name] = same;
      const ValueType& type = types->second->parameters[i];
      if (same && type.is_tensor())
        for (const Axis& axis : type.tensor.axes)
          for (const std::string& v : axis.size.variables()) scope.axes.insert(v);
    }
    HoistedFunction f;
    f.function = &item;
    f.invariant = mask;
    std::set<std::string> hoisted;  // locals computed once
    std::map<std::string, size_t> slot_by_key;
    std::vector<const Statement*> rest;

    std::function<void(const Expr&, bool)> collect = [&](const Expr& e, bool chained) {
      if (e.kind == Expr::Kind::lambda) return;
      // A step inside a `|>` chain is written on a line of its own, below the steps it reads: only
      // the chain's head (or a whole expression) is replaced.
      if (!chained && invariant(e, scope) && worth(e, hoisted)) {
        auto [at, added] = slot_by_key.emplace("v\x1f" + text(e), f.slots.size());
        if (added) f.slots.push_back({&e, nullptr, 0});
        f.slot_of[&e] = at->second;
        return;
      }
      size_t first_argument = 0;
      if (e.kind == Expr::Kind::call) {
        first_argument = 0;
        std::vector<bool> inner = invariant_arguments(e, scope);
        if (!inner.empty())
          if (std::optional<size_t> callee = version(*facts_of(e)->function, inner)) {
            auto [at, added] = slot_by_key.emplace("c\x1f" + call_key(e, *callee), f.slots.size());
            if (added) f.slots.push_back({nullptr, &e, *callee});
            f.slot_of[&e] = at->second;
          }
      } else {
        for (const ExprPtr& operand : e.operands)
          if (operand) collect(*operand, false);
      }
      for (size_t i = first_argument; i < e.arguments.size(); ++i) {
        const Expr* value = e.arguments[i].value.get();
        if (!value) continue;
        bool piped_step = e.piped && i == 0 && value->kind == Expr::Kind::call && value->piped;
        collect(*value, piped_step);
      }
    };

    for (const Statement& s : item.body->statements) {
      if (!s.value) continue;
      bool once = s.kind == Statement::Kind::assign && std::all_of(s.targets.begin(), s.targets.end(), [&](const auto& t) { return bindings[t.first] == 1; });
      if (once && invariant(*s.value, scope)) {
        f.statements.insert(&s);
        for (auto& [name, span] : s.targets) {
          scope.variables[name] = true;
          hoisted.insert(name);
        }
        continue;
      }
      collect(*s.value, false);
      for (auto& [name, span] : s.targets) scope.variables[name] = false;
      rest.push_back(&s);
    }
    if (f.slots.empty()) return std::nullopt;
    // What is left may read a local computed once only through a slot.
    for (const Statement* s : rest) {
      bool reads_hoisted = !for_each_expr(*s->value, [&](const Expr& e) {
        if (auto slot = f.slot_of.find(&e); slot != f.slot_of.end() && f.slots[slot->second].value) return Walk::skip;
        if (e.kind == Expr::Kind::name && hoisted.count(e.text)) return Walk::stop;
        auto names_hoisted = [&](const SizeNode& n) {
          for (const std::string& h : hoisted)
            if (walk_detail::size_names(n, h)) return true;
          return false;
        };
        for (const SizeNode& n : e.index)
          if (names_hoisted(n)) return Walk::stop;
        if (e.type)
          for (const SizeNode& n : e.type->axes)
            if (names_hoisted(n)) return Walk::stop;
        return Walk::into;
      });
      if (reads_hoisted) return std::nullopt;
    }
    f.takes = taken_parameters(item, f, rest, *types->second);
    plan_.functions.push_back(std::move(f));
    return plan_.functions.size() - 1;
  }
};

}  // namespace

HoistPlan plan_hoisting(const Analysis& analysis) { return Planner(analysis).run(); }

}  // namespace ss
