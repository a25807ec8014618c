// Symbolic sizes: the polynomial algebra behind ShapeScript's shape checking.
//
// Every size normalizes to a polynomial with int64 coefficients over the generic axes (b, n, gh, ...);
// dims are substituted by the checker before sizes reach this layer. Normal forms are canonical, so
// equality and hashing are structural.
//
// Overflow: every coefficient and power operation is checked; an operation whose exact result does
// not fit throws std::overflow_error (never UB, never a silently wrong size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ss {

class SizeExpr;

// Variable bindings and sets of variables; std::less<> lets lookups use std::string_view.
using SizeBindings = std::map<std::string, SizeExpr, std::less<>>;
using SizeVariableSet = std::set<std::string, std::less<>>;

class SizeExpr {
 public:
  // A product of variables with positive powers, sorted by name, each name once; empty = the constant 1.
  using Monomial = std::vector<std::pair<std::string, uint32_t>>;
  // Graded lexicographic order (total degree, then powers of variables in name order), a monomial
  // order: the map's last term is the leading term that polynomial division needs.
  struct MonomialOrder {
    bool operator()(const Monomial& a, const Monomial& b) const;
  };
  using Terms = std::map<Monomial, int64_t, MonomialOrder>;

  SizeExpr();  // zero
  static SizeExpr constant(int64_t value);
  static SizeExpr variable(std::string name);

  SizeExpr operator+(const SizeExpr& other) const;
  SizeExpr operator-(const SizeExpr& other) const;
  SizeExpr operator*(const SizeExpr& other) const;
  SizeExpr operator-() const;
  SizeExpr& operator+=(const SizeExpr& other);
  SizeExpr& operator-=(const SizeExpr& other);
  SizeExpr& operator*=(const SizeExpr& other);

  // Exact division in Z[variables]: the quotient q with q * divisor == *this when one exists,
  // otherwise nullopt. Covers a nonzero constant, a monomial (c * v1^k1 * ...) dividing every term,
  // and also general polynomial divisors ((a*a-b*b) / (a-b) == a+b). Zero divisor -> nullopt.
  // Divisibility is in the polynomial ring: (n*n+n)/2 is nullopt although it is an integer for every n.
  std::optional<SizeExpr> divide_exact(const SizeExpr& divisor) const;

  // Floor division by a positive constant, as torch's output sizes round down: floor(*this / k) as a
  // polynomial. Exact for every value of the variables when each non-constant coefficient is a
  // multiple of k, since then only the constant term leaves a remainder: (2h-1) floor/ 2 == h-1.
  // Otherwise (h floor/ 2) no polynomial is it, and the result is nullopt; k <= 0 -> nullopt.
  std::optional<SizeExpr> floor_divide(int64_t divisor) const;
  // The remainder modulo a positive constant, as Python's `%` (0..k-1): a constant when each
  // non-constant coefficient is a multiple of k ((2h+1) % 2 == 1); otherwise (h % 2) nullopt.
  std::optional<SizeExpr> remainder(int64_t divisor) const;

  bool operator==(const SizeExpr& other) const;  // normal forms compare equal
  bool operator!=(const SizeExpr& other) const { return !(*this == other); }

  bool is_zero() const { return !terms_ || terms_->empty(); }
  bool is_constant() const;                      // true for zero too
  std::optional<int64_t> constant_value() const;
  // A single term c * v1^k1 * ... (a nonzero constant counts); false for zero.
  bool is_monomial() const { return terms().size() == 1; }
  bool has_variable(std::string_view name) const;
  std::vector<std::string> variables() const;   // sorted, each once
  int64_t degree() const;                         // total degree of the highest term; 0 for constants and zero

  // gcd of all coefficients (0 for zero, always >= 0): the size is a multiple of k iff gcd % k == 0.
  // Throws std::overflow_error in the one case the gcd is 2^63 (every coefficient is INT64_MIN).
  int64_t coefficient_gcd() const;

  // Simultaneous substitution: every variable in `values` is replaced at once (values are not
  // re-substituted), so a binding gh -> 2*gh is safe. Variables not in `values` stay.
  SizeExpr substitute(const SizeBindings& values) const;

  // Linear view in one variable: *this == a*v + c with a, c free of v; nullopt if v appears with a
  // power above 1. A v that does not appear gives a == 0.
  std::optional<std::pair<SizeExpr, SizeExpr>> linear_in(std::string_view v) const;
  // (a, c) where *this == a*v + c with v its only variable and a > 0, c fixed numbers: the form in
  // which v can be read back from the size ((size - c) / a), as the code generators read axes.
  std::optional<std::pair<int64_t, int64_t>> fixed_linear_in(std::string_view v) const;

  // Deterministic, parseable by the size grammar: "16*gh", "gh*gw", "n+1", "2*n-1", "3*b*n",
  // "n*n" (no power operator in the language), "0" for zero. Constant factor first; terms by
  // descending total degree, then by variable names; the constant term last.
  std::string to_string() const;
  // The same with a coefficient written right before its first variable, as users write scaled
  // axes: "16gh", "2n-1", "3b*n". Use this in diagnostics ("names the sizes in the user's own terms").
  std::string to_user_string() const;

  size_t hash() const;

  // Read-only view of the normal form (monomial -> nonzero coefficient), lowest term first.
  const Terms& terms() const;

 private:
  std::string render(bool juxtapose_scale) const;
  void add_term(const Monomial& monomial, int64_t coefficient);  // keeps the normal form
  Terms& mutable_terms();  // this size's own terms, copied first if shared

  // No zero coefficients: canonical; null for zero. Shared between copies until one changes: a
  // checked file holds a type per expression, and most are copies of a few.
  std::shared_ptr<Terms> terms_;
};

struct SizeExprHash {
  size_t operator()(const SizeExpr& e) const { return e.hash(); }
};

// Unifying a callee's size pattern (e.g. 16*gh, with gh not yet bound) against an actual size.
enum class UnifyStatus {
  equal,          // no unknown left and the sizes are equal
  bound,          // exactly one unknown solved; recorded in bindings
  mismatch,       // the sizes cannot be equal
  not_divisible,  // the unknown's coefficient is a constant k that does not divide what it must
  deferred,       // not solvable yet: 2+ unknowns, or one that appears non-linearly / with no effect
};

struct UnifyResult {
  UnifyStatus status = UnifyStatus::equal;
  // bound: the solved variable. not_divisible / mismatch after solving / deferred: the unknown
  // involved (deferred: the first in name order). equal / plain mismatch: empty.
  std::string variable;
  // bound: the variable's value. not_divisible: the size that had to be a multiple of
  // required_multiple (actual minus the pattern's other terms). mismatch from a negative
  // solution: that solution. Otherwise zero.
  SizeExpr value;
  int64_t required_multiple = 0;  // not_divisible only; always positive
};

// `pattern` may mention variables in `unknowns` that are not yet in `bindings`. Known bindings are
// substituted (simultaneously, so a binding's value may reuse a pattern name); then:
//  - no unknown left: equal / mismatch;
//  - exactly one unknown v, pattern == a*v + c with a != 0: v = (actual - c) / a via divide_exact ->
//    bound (recorded in bindings); if a is a constant k and the division fails ->
//    not_divisible (required_multiple = |k|); if the division fails otherwise -> mismatch;
//    a solution that is a negative constant -> mismatch (sizes are never negative);
//  - v non-linear (n*n): deferred; a == 0 after substitution (v has no effect): deferred when
//    c == actual, else mismatch;
//  - two or more unknowns: deferred (the caller retries after other axes).
// Throws std::overflow_error if the arithmetic overflows.
UnifyResult unify_sizes(const SizeExpr& pattern, const SizeExpr& actual, SizeBindings& bindings,
                        const SizeVariableSet& unknowns);

// Solving a group: a product of factors (einops `(gh p1)`) against one size, where at most one
// factor is unknown. Returns deferred when 2+ factors are unknown; otherwise unify_sizes on the
// product, with the same statuses. An empty list is the size 1.
UnifyResult unify_product(const std::vector<SizeExpr>& factors, const SizeExpr& actual,
                          SizeBindings& bindings, const SizeVariableSet& unknowns);

}  // namespace ss

namespace std {
template <>
struct hash<ss::SizeExpr> {
  size_t operator()(const ss::SizeExpr& e) const { return e.hash(); }
};
}  // namespace std
