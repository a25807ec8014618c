#include "check/reach.h"

#include <deque>
#include <set>

#include "check/builtins.h"
#include "syntax/walk.h"

namespace ss {

std::vector<BuiltinCall> builtin_calls_reached(const Analysis& analysis, const std::string& function) {
  std::vector<BuiltinCall> out;
  std::deque<const Item*> queue;
  std::set<const Item*> seen;
  for (const Item& item : analysis.program.items)
    if (item.kind == Item::Kind::function && item.name == function && seen.insert(&item).second) queue.push_back(&item);
  auto visit = [&](const Expr& e) {
    if (e.kind != Expr::Kind::call) return;
    auto facts = analysis.semantics.calls.find(&e);
    if (facts == analysis.semantics.calls.end()) return;
    if (facts->second.builtin) {
      BuiltinCall call{std::string(facts->second.builtin->name), {}, e.span};
      for (const Argument& argument : e.arguments)
        if (argument.keyword && argument.value) call.keywords[*argument.keyword] = std::string(analysis.file.slice(argument.value->span));
      out.push_back(std::move(call));
    } else if (facts->second.function && seen.insert(facts->second.function).second) {
      queue.push_back(facts->second.function);
    }
  };
  while (!queue.empty()) {
    const Item* fn = queue.front();
    queue.pop_front();
    if (fn->body) for_each_expr(*fn->body, visit);
  }
  return out;
}

}  // namespace ss
