// A fact per expression (its type, its call's facts), kept in a vector indexed by the expression's
// number in its program (Expr::id) rather than in a hash map keyed by its address: a check
// stores and looks up a type for nearly every expression, and freeing an analysis frees one
// vector instead of a node per expression.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "syntax/ast.h"

namespace ss {

template <class T>
class ExprTable {
 public:
  // The fact for `e`, or null.
  T* find(const Expr* e) { return has(e) ? &values_[e->id] : nullptr; }
  const T* find(const Expr* e) const { return has(e) ? &values_[e->id] : nullptr; }
  bool contains(const Expr* e) const { return has(e); }

  // Sets the fact for `e`, replacing one it had.
  T& set(const Expr* e, T value) {
    grow(e->id + 1);
    if (!present_[e->id]) {
      present_[e->id] = 1;
      ++size_;
    }
    return values_[e->id] = std::move(value);
  }
  // Takes `e`'s fact out (to set it for another expression), leaving it without one.
  T take(const Expr* e) {
    if (!has(e)) return T{};
    T value = std::move(values_[e->id]);
    erase(e);
    return value;
  }
  void erase(const Expr* e) {
    if (!has(e)) return;
    present_[e->id] = 0;
    values_[e->id] = T{};
    --size_;
  }
  // How many expressions have a fact.
  size_t size() const { return size_; }
  // Room for the expressions numbered below `ids` (Program::expr_ids.next), so that a check
  // doesn't grow the table as it goes.
  void reserve_ids(uint32_t ids) { grow(ids); }

 private:
  bool has(const Expr* e) const { return e->id < present_.size() && present_[e->id]; }
  void grow(size_t count) {
    if (count <= present_.size()) return;
    size_t capacity = std::max(count, present_.size() + present_.size() / 2);
    values_.resize(capacity);
    present_.resize(capacity, 0);
  }

  std::vector<T> values_;
  std::vector<uint8_t> present_;
  size_t size_ = 0;
};

}  // namespace ss
