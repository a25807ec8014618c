// The one walk over a function's syntax tree (core/syntax/ast.h). Every pass that looks for something in
// a body (the code generators, the serving rules, what a function reaches, the language server)
// walks with it, so that all of them see the same nodes in the same order.
//
// A visitor returns Walk (or nothing, which means Walk::into): into the node's children, past
// them, or the end of the whole walk. Each walk returns false when a visitor stopped it.
#pragma once
#include <string_view>
#include <type_traits>
#include <vector>

#include "syntax/ast.h"

namespace ss {

enum class Walk { into, skip, stop };

namespace walk_detail {

template <class Node, class Visit>
Walk visit_node(Visit& visit, const Node& node) {
  if constexpr (std::is_void_v<std::invoke_result_t<Visit&, const Node&>>) {
    visit(node);
    return Walk::into;
  } else {
    return visit(node);
  }
}

inline bool size_names(const SizeNode& node, std::string_view name) {
  if ((node.kind == SizeNode::Kind::name || node.kind == SizeNode::Kind::scaled) && node.name == name) return true;
  for (const SizeNode& child : node.children)
    if (size_names(child, name)) return true;
  return false;
}

}  // namespace walk_detail

// `e` and every expression inside it, each before its parts, in source order: operands (a call's
// callee, a binary's left then right, a lambda's body), then arguments' values (a piped value first).
template <class Visit>
bool for_each_expr(const Expr& e, Visit&& visit) {
  Walk walk = walk_detail::visit_node(visit, e);
  if (walk != Walk::into) return walk != Walk::stop;
  for (const ExprPtr& operand : e.operands)
    if (operand && !for_each_expr(*operand, visit)) return false;
  for (const Argument& argument : e.arguments)
    if (argument.value && !for_each_expr(*argument.value, visit)) return false;
  return true;
}

// Each statement of `block` and of the blocks inside it, each before its blocks: an `if`'s
// branches in order, then its `else`; a `for`'s body. Walk::skip passes over the statement's blocks.
template <class Visit>
bool for_each_statement(const Block& block, Visit&& visit) {
  for (const Statement& s : block.statements) {
    Walk walk = walk_detail::visit_node(visit, s);
    if (walk == Walk::stop) return false;
    if (walk == Walk::skip) continue;
    for (const auto& [condition, body] : s.branches)
      if (body && !for_each_statement(*body, visit)) return false;
    if (s.body && !for_each_statement(*s.body, visit)) return false;
  }
  return true;
}

// Every expression of `s`, in source order: its value (a `for`'s start, then its end, then its
// body), an `if`'s conditions each before its branch, then the `else`. `statement` is asked first
// about `s` and each statement inside it; Walk::skip passes over all of one, its blocks included.
template <class VisitExpr, class VisitStatement>
bool for_each_expr(const Statement& s, VisitExpr&& visit, VisitStatement&& statement) {
  Walk walk = walk_detail::visit_node(statement, s);
  if (walk != Walk::into) return walk != Walk::stop;
  if (s.value && !for_each_expr(*s.value, visit)) return false;
  if (s.end && !for_each_expr(*s.end, visit)) return false;
  for (const auto& [condition, body] : s.branches) {
    if (condition && !for_each_expr(*condition, visit)) return false;
    if (body)
      for (const Statement& inner : body->statements)
        if (!for_each_expr(inner, visit, statement)) return false;
  }
  if (s.body)
    for (const Statement& inner : s.body->statements)
      if (!for_each_expr(inner, visit, statement)) return false;
  return true;
}

// Every expression of `block`'s statements, as above.
template <class VisitExpr, class VisitStatement>
bool for_each_expr(const Block& block, VisitExpr&& visit, VisitStatement&& statement) {
  for (const Statement& s : block.statements)
    if (!for_each_expr(s, visit, statement)) return false;
  return true;
}

template <class VisitExpr>
bool for_each_expr(const Block& block, VisitExpr&& visit) {
  return for_each_expr(block, visit, [](const Statement&) { return Walk::into; });
}

// Lambda scoping: each `name` expression in `e` that reads a variable from outside `e`, that is,
// every name but those a lambda around it binds (`i` in `map(i => i * x)` reads only `x`). The
// expressions `opaque` says are (and all inside them) are passed over.
template <class Visit, class Opaque>
bool for_each_free_name(const Expr& e, Visit&& visit, Opaque&& opaque) {
  std::vector<std::string_view> bound;  // the parameters of the lambdas around the node
  auto walk = [&](auto& self, const Expr& x) -> bool {
    if (opaque(x)) return true;
    if (x.kind == Expr::Kind::name) {
      for (std::string_view b : bound)
        if (b == x.text) return true;
      return walk_detail::visit_node(visit, x) != Walk::stop;
    }
    if (x.kind == Expr::Kind::lambda) bound.push_back(x.text);
    bool going = true;
    for (const ExprPtr& operand : x.operands)
      if (going && operand) going = self(self, *operand);
    for (const Argument& argument : x.arguments)
      if (going && argument.value) going = self(self, *argument.value);
    if (x.kind == Expr::Kind::lambda) bound.pop_back();
    return going;
  };
  return walk(walk, e);
}

template <class Visit>
bool for_each_free_name(const Expr& e, Visit&& visit) {
  return for_each_free_name(e, visit, [](const Expr&) { return false; });
}

// Whether `e` reads the variable `name` (a lambda whose parameter is `name` shadows it); with
// `sizes`, also where a subscript's sizes name it (`x[l]`, `causal[n n]`).
inline bool reads_variable(const Expr& e, std::string_view name, bool sizes = true) {
  return !for_each_expr(e, [&](const Expr& x) {
    if (x.kind == Expr::Kind::lambda && x.text == name) return Walk::skip;
    if (x.kind == Expr::Kind::name && x.text == name) return Walk::stop;
    if (sizes)
      for (const SizeNode& size : x.index)
        if (walk_detail::size_names(size, name)) return Walk::stop;
    return Walk::into;
  });
}

}  // namespace ss
