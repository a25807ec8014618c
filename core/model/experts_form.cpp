#include "model/experts_form.h"

#include <string>
#include <utility>

#include "check/builtins.h"

namespace ss {

namespace {

const Builtin* builtin_of(const Analysis& a, const Expr& e) {
  if (e.kind != Expr::Kind::call) return nullptr;
  const CallFacts* facts = a.semantics.calls.find(&e);
  return facts ? facts->builtin : nullptr;
}

// The positional arguments of a call to the built-in `name` with exactly `count` of them, else empty.
std::vector<const Expr*> arguments_of(const Analysis& a, const Expr& e, std::string_view name, size_t count) {
  const Builtin* b = builtin_of(a, e);
  if (!b || b->name != name || e.arguments.size() != count) return {};
  std::vector<const Expr*> out;
  for (const Argument& argument : e.arguments) {
    if (!argument.value || argument.keyword) return {};
    out.push_back(argument.value.get());
  }
  return out;
}

}  // namespace

std::optional<GatedExperts> gated_experts(const Analysis& a, const Expr& call) {
  std::vector<const Expr*> args = arguments_of(a, call, "experts", 4);
  if (args.empty()) return std::nullopt;
  const Expr& outer = *args[3];
  if (outer.kind != Expr::Kind::lambda || outer.operands.empty() || outer.operands[0]->kind != Expr::Kind::lambda ||
      outer.operands[0]->operands.empty())
    return std::nullopt;
  const std::string& expert = outer.text;
  const std::string& rows = outer.operands[0]->text;
  // `w[e]`: w, indexed by the expert.
  auto of_expert = [&](const Expr& x) -> const Expr* {
    bool indexed = x.kind == Expr::Kind::subscript && x.index.size() == 1 && x.index[0].kind == SizeNode::Kind::name &&
                   x.index[0].name == expert && !x.operands.empty();
    return indexed ? x.operands[0].get() : nullptr;
  };
  // `linear(a, w[e])`: a and w.
  auto linear_of = [&](const Expr& x) -> std::pair<const Expr*, const Expr*> {
    std::vector<const Expr*> l = arguments_of(a, x, "linear", 2);
    if (l.empty()) return {nullptr, nullptr};
    return {l[0], of_expert(*l[1])};
  };
  auto of_rows = [&](const Expr& x) -> const Expr* {
    auto [input, weight] = linear_of(x);
    return input && input->kind == Expr::Kind::name && input->text == rows ? weight : nullptr;
  };
  auto [product, down] = linear_of(*outer.operands[0]->operands[0]);
  if (!down || product->kind != Expr::Kind::binary || product->text != "*" || product->operands.size() != 2) return std::nullopt;
  for (int first : {0, 1}) {
    std::vector<const Expr*> silu = arguments_of(a, *product->operands[first], "silu", 1);
    const Expr* gate = silu.empty() ? nullptr : of_rows(*silu[0]);
    const Expr* up = of_rows(*product->operands[1 - first]);
    if (gate && up) return GatedExperts{gate, up, down};
  }
  return std::nullopt;
}

}  // namespace ss
