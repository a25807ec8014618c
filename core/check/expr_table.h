// A fact per expression (its type, its call's facts), found by the expression's number in its
// program (Expr::id) rather than by hashing its address: a check stores and looks up a type for
// nearly every expression, and freeing an analysis frees a few blocks instead of a node per
// expression. The facts themselves lie side by side in the order they were first set, each
// number holding its fact's place, so a table of facts for few of the expressions (calls) stays
// the size of those.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "syntax/ast.h"

namespace ss {

template <class T>
class ExprTable {
 public:
  // The fact for `e`, or null.
  T* find(const Expr* e) {
    uint32_t at = place(e);
    return at ? &value(at) : nullptr;
  }
  const T* find(const Expr* e) const {
    uint32_t at = place(e);
    return at ? &value(at) : nullptr;
  }
  bool contains(const Expr* e) const { return place(e) != 0; }

  // Sets the fact for `e`, replacing one it had. A fact stays where it is until it is erased.
  T& set(const Expr* e, T value_set) {
    if (uint32_t at = place(e)) return value(at) = std::move(value_set);
    if (e->id >= places_.size()) places_.resize(std::max<size_t>(e->id + 1, places_.size() + places_.size() / 2), 0);
    uint32_t at;
    if (!unused_.empty()) {
      at = unused_.back();
      unused_.pop_back();
    } else {
      at = ++used_;
      if ((at - 1) / kBlock == blocks_.size()) blocks_.push_back(std::make_unique<T[]>(kBlock));
    }
    places_[e->id] = at;
    return value(at) = std::move(value_set);
  }
  // Takes `e`'s fact out (to set it for another expression), leaving it without one.
  T take(const Expr* e) {
    uint32_t at = place(e);
    if (!at) return T{};
    T taken = std::move(value(at));
    erase(e);
    return taken;
  }
  void erase(const Expr* e) {
    uint32_t at = place(e);
    if (!at) return;
    value(at) = T{};
    unused_.push_back(at);
    places_[e->id] = 0;
  }
  // How many expressions have a fact.
  size_t size() const { return used_ - unused_.size(); }
  // Room for the expressions numbered below `ids` (Program::expr_ids.next), so that a check
  // doesn't grow the table as it goes.
  void reserve_ids(uint32_t ids) {
    if (ids > places_.size()) places_.resize(ids, 0);
  }

 private:
  // Facts lie in blocks of a fixed size, not one vector: a fact never moves as the table grows,
  // and a block is an ordinary allocation that the next check reuses, where one vector for every
  // expression of a large file would be mapped afresh from the system (and its pages faulted in)
  // on every check.
  static constexpr uint32_t kBlock = 256;

  // 1 + the index of `e`'s fact, or 0 for none.
  uint32_t place(const Expr* e) const { return e->id < places_.size() ? places_[e->id] : 0; }
  T& value(uint32_t at) { return blocks_[(at - 1) / kBlock][(at - 1) % kBlock]; }
  const T& value(uint32_t at) const { return blocks_[(at - 1) / kBlock][(at - 1) % kBlock]; }

  std::vector<uint32_t> places_;  // by expression number
  std::vector<std::unique_ptr<T[]>> blocks_;
  uint32_t used_ = 0;             // places handed out
  std::vector<uint32_t> unused_;  // places of erased facts, for the next to be set
};

}  // namespace ss
