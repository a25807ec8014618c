#include "model/reach.h"

#include <deque>
#include <set>

#include "check/builtins.h"
#include "syntax/walk.h"

namespace ss {

void for_each_builtin_call_reached(const Analysis& analysis, const Item& function,
                                   const std::function<void(const Expr& call, const CallFacts& facts)>& visit) {
  std::deque<const Item*> queue{&function};
  std::set<const Item*> seen{&function};
  auto visit_call = [&](const Expr& e) {
    if (e.kind != Expr::Kind::call) return;
    auto facts = analysis.semantics.calls.find(&e);
    if (!facts) return;
    if (facts->builtin)
      visit(e, *facts);
    else if (facts->function && seen.insert(facts->function).second)
      queue.push_back(facts->function);
  };
  while (!queue.empty()) {
    const Item* fn = queue.front();
    queue.pop_front();
    if (fn->body) for_each_expr(*fn->body, visit_call);
  }
}

std::vector<BuiltinCall> builtin_calls_reached(const Analysis& analysis, const std::string& function) {
  std::vector<BuiltinCall> out;
  for (const Item& item : analysis.program.items) {
    if (item.kind != Item::Kind::function || item.name != function) continue;
    for_each_builtin_call_reached(analysis, item, [&](const Expr& e, const CallFacts& facts) {
      BuiltinCall call{std::string(facts.builtin->name), {}, e.span};
      for (const Argument& argument : e.arguments)
        if (argument.keyword && argument.value) call.keywords[*argument.keyword] = std::string(analysis.file.slice(argument.value->span));
      out.push_back(std::move(call));
    });
    break;
  }
  return out;
}

}  // namespace ss
