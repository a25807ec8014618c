#include "reach.h"

#include <deque>
#include <set>

#include "builtins.h"

namespace ss {

namespace {

struct Walker {
  const Analysis& analysis;
  std::vector<BuiltinCall>& out;
  std::deque<const Item*>& queue;
  std::set<const Item*>& seen;

  void expr(const Expr* e) {
    if (!e) return;
    if (e->kind == Expr::Kind::call)
      if (auto facts = analysis.semantics.calls.find(e); facts != analysis.semantics.calls.end()) {
        if (facts->second.builtin) {
          BuiltinCall call{std::string(facts->second.builtin->name), {}, e->span};
          for (const Argument& argument : e->arguments)
            if (argument.keyword && argument.value) call.keywords[*argument.keyword] = std::string(analysis.file.slice(argument.value->span));
          out.push_back(std::move(call));
        } else if (facts->second.function && seen.insert(facts->second.function).second) {
          queue.push_back(facts->second.function);
        }
      }
    for (const ExprPtr& operand : e->operands) expr(operand.get());
    for (const Argument& argument : e->arguments) expr(argument.value.get());
  }

  void block(const Block* b) {
    if (!b) return;
    for (const Statement& s : b->statements) {
      expr(s.value.get());
      expr(s.end.get());
      for (const auto& [condition, body] : s.branches) {
        expr(condition.get());
        block(body.get());
      }
      block(s.body.get());
    }
  }
};

}  // namespace

std::vector<BuiltinCall> builtin_calls_reached(const Analysis& analysis, const std::string& function) {
  std::vector<BuiltinCall> out;
  std::deque<const Item*> queue;
  std::set<const Item*> seen;
  for (const Item& item : analysis.program.items)
    if (item.kind == Item::Kind::function && item.name == function && seen.insert(&item).second) queue.push_back(&item);
  Walker walker{analysis, out, queue, seen};
  while (!queue.empty()) {
    const Item* fn = queue.front();
    queue.pop_front();
    walker.block(fn->body.get());
  }
  return out;
}

}  // namespace ss
