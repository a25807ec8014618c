// Layer-invariant work: what a function called from a loop (`for l in 0..L:`, the block loop)
// computes from arguments that are the same at every iteration (positions, sizes, masks) and from
// nothing the iteration changes, such as rope's inverse frequencies, angles and their cos and sin.
// The plan is plain data read from the checker's tree and types; the code generators compute each
// such value once before the loop and pass it in (codegen.cpp).
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "check/analysis.h"

namespace ss {

// A version of a function for calls whose `invariant` arguments are the same at every iteration.
struct HoistedFunction {
  const Item* function = nullptr;
  std::vector<bool> invariant;  // per parameter
  // Per parameter: whether the `_hoisted_` version takes it. An invariant one that what is left of
  // the body no longer reads is dropped, with its argument at each call (the `_prepare_` call before
  // the loop already evaluated that pure argument once).
  std::vector<bool> takes;
  // Its assignments that read only those parameters (and sizes): computed once, not per call.
  std::set<const Statement*> statements;
  // What is computed once, in order: a value the rest of the body reads (`cos(angle)`, the first
  // expression of that text), or the prepared values of a call it makes (`rope(q, pos)` in
  // `attention`) of the version `functions[callee]`.
  struct Slot {
    const Expr* value = nullptr;
    const Expr* call = nullptr;
    size_t callee = 0;
  };
  std::vector<Slot> slots;
  std::map<const Expr*, size_t> slot_of;  // each expression the body reads a slot for (values and calls)
};

// A loop whose body calls hoisted versions: each distinct call's values are prepared before it.
struct HoistedLoop {
  struct Prepared {
    const Expr* call = nullptr;  // the first call of its kind: its invariant arguments are written once
    size_t callee = 0;
  };
  std::vector<Prepared> prepared;
  std::map<const Expr*, size_t> prepared_of;  // each call in the body → its entry
};

struct HoistPlan {
  std::vector<HoistedFunction> functions;
  std::map<const Statement*, HoistedLoop> loops;  // keyed by the `for` statement
  // The versions of `function`, by index into `functions`.
  std::vector<size_t> versions_of(const Item* function) const;
};

// Each `for` in the program's functions whose body calls a function with arguments the loop
// doesn't change, and what of each such callee (transitively, through the calls it makes) reads
// only those arguments. Only straight-line callees (no `for` or `if`) whose layer-invariant values
// hold no model values (positions, indices, masks, sizes and what is computed from them) and no
// random or training built-in are split; anything else is left as it is.
HoistPlan plan_hoisting(const Analysis& analysis);

}  // namespace ss
