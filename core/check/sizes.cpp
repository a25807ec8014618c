#include "check/sizes.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <climits>
#include <stdexcept>

namespace ss {

namespace {

// Checked int64 arithmetic: an exact result or std::overflow_error, never UB.
int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("size arithmetic overflows int64");
  return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("size arithmetic overflows int64");
  return r;
}

int64_t checked_neg(int64_t a) {
  int64_t r;
  if (__builtin_sub_overflow(int64_t{0}, a, &r)) throw std::overflow_error("size arithmetic overflows int64");
  return r;
}

uint32_t checked_power_add(uint32_t a, uint32_t b) {
  uint32_t r;
  if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("size exponent overflows uint32");
  return r;
}

uint64_t total_degree(const SizeExpr::Monomial& m) {
  uint64_t d = 0;
  for (const auto& [name, power] : m) d += power;  // at most 2^32 names * 2^32: fits in uint64
  return d;
}

SizeExpr::Monomial multiply_monomials(const SizeExpr::Monomial& a, const SizeExpr::Monomial& b) {
  // Merge of two name-sorted lists, adding powers of shared names.
  SizeExpr::Monomial out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].first < a[i].first) {
      out.push_back(b[j++]);
    } else {
      out.emplace_back(a[i].first, checked_power_add(a[i].second, b[j].second));
      ++i;
      ++j;
    }
  }
  return out;
}

// m / d when d divides m (every power in d at most the one in m), else nullopt.
std::optional<SizeExpr::Monomial> divide_monomials(const SizeExpr::Monomial& m, const SizeExpr::Monomial& d) {
  SizeExpr::Monomial out;
  size_t j = 0;
  for (const auto& [name, power] : m) {
    if (j < d.size() && d[j].first < name) return std::nullopt;  // d has a variable m lacks
    if (j < d.size() && d[j].first == name) {
      if (d[j].second > power) return std::nullopt;
      if (d[j].second < power) out.emplace_back(name, power - d[j].second);
      ++j;
    } else {
      out.emplace_back(name, power);
    }
  }
  if (j != d.size()) return std::nullopt;
  return out;
}

SizeExpr power(SizeExpr base, uint32_t exponent) {
  if (exponent == 1) return base;  // the usual case: no multiplication by the constant 1
  // Square-and-multiply: a handful of multiplications even for large exponents.
  SizeExpr result = SizeExpr::constant(1);
  while (exponent > 0) {
    if (exponent & 1u) result = result * base;
    exponent >>= 1;
    if (exponent > 0) base = base * base;
  }
  return result;
}

std::string unsigned_magnitude(int64_t c) {
  // Via uint64 so INT64_MIN prints without overflow.
  uint64_t m = c < 0 ? uint64_t{0} - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
  return std::to_string(m);
}

}  // namespace

bool SizeExpr::MonomialOrder::operator()(const Monomial& a, const Monomial& b) const {
  uint64_t da = total_degree(a), db = total_degree(b);
  if (da != db) return da < db;
  // Same degree: the first variable (in name order) whose power differs decides; more of it is bigger.
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].first != b[j].first) return a[i].first > b[j].first;  // b has the earlier name, a has 0 of it
    if (a[i].second != b[j].second) return a[i].second < b[j].second;
    ++i;
    ++j;
  }
  return false;  // same names and powers: equal (equal degrees rule out one being a prefix)
}

SizeExpr::SizeExpr() = default;

SizeExpr SizeExpr::constant(int64_t value) {
  SizeExpr e;
  e.add_term({}, value);
  return e;
}

SizeExpr SizeExpr::variable(std::string name) {
  SizeExpr e;
  e.add_term({{std::move(name), 1u}}, 1);
  return e;
}

void SizeExpr::add_term(const Monomial& monomial, int64_t coefficient) {
  if (coefficient == 0) return;
  Terms& terms = mutable_terms();
  auto [it, inserted] = terms.try_emplace(monomial, coefficient);
  if (inserted) return;
  it->second = checked_add(it->second, coefficient);
  if (it->second == 0) terms.erase(it);  // zero terms vanish: keeps the form canonical
}

SizeExpr SizeExpr::operator+(const SizeExpr& other) const {
  SizeExpr r = *this;
  r += other;
  return r;
}

SizeExpr SizeExpr::operator-(const SizeExpr& other) const {
  SizeExpr r = *this;
  r -= other;
  return r;
}

SizeExpr SizeExpr::operator*(const SizeExpr& other) const {
  SizeExpr r;
  for (const auto& [ma, ca] : terms())
    for (const auto& [mb, cb] : other.terms()) r.add_term(multiply_monomials(ma, mb), checked_mul(ca, cb));
  return r;
}

SizeExpr SizeExpr::operator-() const {
  SizeExpr r;
  for (const auto& [m, c] : terms()) r.mutable_terms().emplace(m, checked_neg(c));
  return r;
}

SizeExpr& SizeExpr::operator+=(const SizeExpr& other) {
  std::shared_ptr<Terms> snapshot = other.terms_;  // `x += x`: add_term then copies before changing
  for (const auto& [m, c] : other.terms()) add_term(m, c);
  return *this;
}

SizeExpr& SizeExpr::operator-=(const SizeExpr& other) {
  std::shared_ptr<Terms> snapshot = other.terms_;  // `x -= x`: add_term then copies before changing
  for (const auto& [m, c] : other.terms()) add_term(m, checked_neg(c));
  return *this;
}

SizeExpr& SizeExpr::operator*=(const SizeExpr& other) {
  *this = *this * other;
  return *this;
}

std::optional<SizeExpr> SizeExpr::divide_exact(const SizeExpr& divisor) const {
  if (divisor.is_zero()) return std::nullopt;
  // Multivariate division by the leading term. If divisor * q == *this then the remainder's leading
  // term is always the divisor's leading term times q's next term, so a step that cannot divide
  // (monomial or coefficient) proves no quotient exists in Z[vars]. The leading monomial strictly
  // decreases in a well-order, so the loop ends.
  const auto& [lead_m, lead_c] = *divisor.terms().rbegin();
  SizeExpr quotient;
  SizeExpr remainder = *this;
  while (!remainder.is_zero()) {
    const auto& [rm, rc] = *remainder.terms().rbegin();
    if (lead_c == -1 && rc == INT64_MIN) throw std::overflow_error("size arithmetic overflows int64");
    if (rc % lead_c != 0) return std::nullopt;  // guarded above: INT64_MIN % -1 is UB
    auto m = divide_monomials(rm, lead_m);
    if (!m) return std::nullopt;
    SizeExpr step;
    step.add_term(*m, rc / lead_c);
    quotient += step;
    remainder -= step * divisor;
  }
  return quotient;
}

std::optional<SizeExpr> SizeExpr::floor_divide(int64_t divisor) const {
  if (divisor <= 0) return std::nullopt;
  SizeExpr quotient;
  for (const auto& [m, c] : terms()) {
    if (!m.empty() && c % divisor != 0) return std::nullopt;
    // C++ truncates toward zero; the constant term rounds toward minus infinity, as floor does.
    int64_t q = c / divisor;
    if (m.empty() && c % divisor != 0 && c < 0) --q;
    if (q != 0) quotient.add_term(m, q);
  }
  return quotient;
}

std::optional<SizeExpr> SizeExpr::remainder(int64_t divisor) const {
  if (divisor <= 0) return std::nullopt;
  int64_t constant = 0;
  for (const auto& [m, c] : terms()) {
    if (!m.empty() && c % divisor != 0) return std::nullopt;
    if (m.empty()) constant = c % divisor;
  }
  return SizeExpr::constant(constant < 0 ? constant + divisor : constant);  // C++ keeps the dividend's sign
}

bool SizeExpr::operator==(const SizeExpr& other) const {
  return terms_ == other.terms_ || terms() == other.terms();  // shared terms are equal without comparing
}

const SizeExpr::Terms& SizeExpr::terms() const {
  static const Terms none;
  return terms_ ? *terms_ : none;
}

SizeExpr::Terms& SizeExpr::mutable_terms() {
  if (!terms_) terms_ = std::make_shared<Terms>();
  else if (terms_.use_count() > 1) terms_ = std::make_shared<Terms>(*terms_);
  return *terms_;
}

bool SizeExpr::is_constant() const {
  return terms().empty() || (terms().size() == 1 && terms().begin()->first.empty());
}

std::optional<int64_t> SizeExpr::constant_value() const {
  if (terms().empty()) return 0;
  if (terms().size() == 1 && terms().begin()->first.empty()) return terms().begin()->second;
  return std::nullopt;
}

bool SizeExpr::has_variable(std::string_view name) const {
  for (const auto& [m, c] : terms())
    for (const auto& [v, p] : m)
      if (v == name) return true;
  return false;
}

std::vector<std::string> SizeExpr::variables() const {
  std::set<std::string> names;
  for (const auto& [m, c] : terms())
    for (const auto& [v, p] : m) names.insert(v);
  return {names.begin(), names.end()};
}

int64_t SizeExpr::degree() const {
  if (terms().empty()) return 0;
  return static_cast<int64_t>(total_degree(terms().rbegin()->first));  // the last term has the top degree
}

int64_t SizeExpr::coefficient_gcd() const {
  // Unsigned so |INT64_MIN| is representable during the computation.
  uint64_t g = 0;
  for (const auto& [m, c] : terms()) {
    uint64_t magnitude = c < 0 ? uint64_t{0} - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
    g = std::gcd(g, magnitude);
  }
  if (g > static_cast<uint64_t>(INT64_MAX)) throw std::overflow_error("coefficient gcd is 2^63");
  return static_cast<int64_t>(g);
}

SizeExpr SizeExpr::substitute(const SizeBindings& values) const {
  // Most substitutions bind none of the size's variables: the size itself, shared, not rebuilt.
  bool binds_any = false;
  for (const auto& [m, c] : terms())
    for (const auto& [v, p] : m) binds_any = binds_any || values.count(v);
  if (!binds_any) return *this;
  SizeExpr result;
  for (const auto& [m, c] : terms()) {
    // The variables left free stay in the term's monomial (a sorted subsequence stays sorted); each
    // bound one multiplies the term by its value, in name order as before.
    Monomial kept;
    std::vector<std::pair<const SizeExpr*, uint32_t>> bound;
    for (const auto& [v, p] : m) {
      auto it = values.find(v);
      if (it == values.end()) kept.emplace_back(v, p);
      else bound.emplace_back(&it->second, p);
    }
    if (bound.empty()) {
      result.add_term(m, c);
      continue;
    }
    SizeExpr term;
    term.add_term(kept, c);
    for (const auto& [value, p] : bound) term = term * power(*value, p);
    result += term;
  }
  return result;
}

std::optional<std::pair<int64_t, int64_t>> SizeExpr::fixed_linear_in(std::string_view v) const {
  auto linear = linear_in(v);
  if (!linear || variables().size() != 1) return std::nullopt;
  auto scale = linear->first.constant_value();
  auto offset = linear->second.constant_value();
  if (!scale || !offset || *scale <= 0) return std::nullopt;
  return std::make_pair(*scale, *offset);
}

std::optional<std::pair<SizeExpr, SizeExpr>> SizeExpr::linear_in(std::string_view v) const {
  SizeExpr a, c;
  for (const auto& [m, coeff] : terms()) {
    auto it = std::find_if(m.begin(), m.end(), [&](const auto& vp) { return vp.first == v; });
    if (it == m.end()) {
      c.add_term(m, coeff);
    } else if (it->second == 1) {
      Monomial rest = m;
      rest.erase(rest.begin() + (it - m.begin()));
      a.add_term(rest, coeff);
    } else {
      return std::nullopt;  // v^2 or higher
    }
  }
  return std::make_pair(std::move(a), std::move(c));
}

std::string SizeExpr::render(bool juxtapose_scale) const {
  if (terms().empty()) return "0";
  std::string out;
  bool first = true;
  for (auto it = terms().rbegin(); it != terms().rend(); ++it) {  // leading (highest) term first
    const auto& [m, c] = *it;
    if (c < 0) out += "-";
    else if (!first) out += "+";
    first = false;
    std::string magnitude = unsigned_magnitude(c);
    if (m.empty()) {
      out += magnitude;
      continue;
    }
    if (magnitude != "1") out += magnitude + (juxtapose_scale ? "" : "*");
    bool first_factor = true;
    for (const auto& [v, p] : m) {
      for (uint32_t k = 0; k < p; ++k) {  // the size grammar has no power operator: n*n
        if (!first_factor) out += "*";
        first_factor = false;
        out += v;
      }
    }
  }
  return out;
}

std::string SizeExpr::to_string() const { return render(false); }

std::string SizeExpr::to_user_string() const { return render(true); }

size_t SizeExpr::hash() const {
  // boost-style combine over the canonical term sequence: equal normal forms hash equal.
  size_t h = terms().size();
  auto mix = [&h](size_t x) { h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const auto& [m, c] : terms()) {
    for (const auto& [v, p] : m) {
      mix(std::hash<std::string>{}(v));
      mix(std::hash<uint32_t>{}(p));
    }
    mix(std::hash<int64_t>{}(c));
    mix(0x51ed27);  // term separator so {a*b} and {a}{b} differ
  }
  return h;
}

namespace {

// Unknowns of `e` that `bindings` does not yet give a value, in name order.
std::vector<std::string> remaining_unknowns(const SizeExpr& e, const SizeBindings& bindings,
                                            const SizeVariableSet& unknowns) {
  std::vector<std::string> out;
  for (auto& v : e.variables())
    if (unknowns.count(v) != 0 && bindings.count(v) == 0) out.push_back(v);
  return out;
}

UnifyResult make_result(UnifyStatus status, std::string variable = {}, SizeExpr value = {},
                        int64_t required_multiple = 0) {
  return UnifyResult{status, std::move(variable), std::move(value), required_multiple};
}

}  // namespace

UnifyResult unify_sizes(const SizeExpr& pattern, const SizeExpr& actual, SizeBindings& bindings,
                        const SizeVariableSet& unknowns) {
  std::vector<std::string> remaining = remaining_unknowns(pattern, bindings, unknowns);
  if (remaining.size() >= 2) return make_result(UnifyStatus::deferred, remaining.front());
  if (remaining.empty()) {
    SizeExpr p = pattern.substitute(bindings);
    return make_result(p == actual ? UnifyStatus::equal : UnifyStatus::mismatch);
  }

  const std::string& v = remaining.front();
  // The usual pattern is the unknown itself (`n`): its value is the actual size, with no bindings
  // copied and no algebra, as the general case below would find.
  if (pattern.is_monomial() && pattern.terms().begin()->second == 1 &&
      pattern.terms().begin()->first == SizeExpr::Monomial{{v, 1u}}) {
    auto value = actual.constant_value();
    if (value && *value < 0) return make_result(UnifyStatus::mismatch, v, actual);  // sizes are never negative
    bindings.insert_or_assign(v, actual);
    return make_result(UnifyStatus::bound, v, actual);
  }
  // Rename v to a name no identifier can have, so a binding's value or `actual` that reuses the
  // name v (the caller's own v) is not confused with the unknown.
  const std::string fresh = "$" + v;
  SizeBindings renamed = bindings;
  renamed.insert_or_assign(v, SizeExpr::variable(fresh));
  auto linear = pattern.substitute(renamed).linear_in(fresh);
  if (!linear) return make_result(UnifyStatus::deferred, v);  // n*n against a size: not solved here
  auto& [a, c] = *linear;
  if (a.is_zero())  // v cancelled out after substitution: this axis says nothing about it
    return make_result(c == actual ? UnifyStatus::deferred : UnifyStatus::mismatch, v);

  SizeExpr target = actual - c;
  if (auto q = target.divide_exact(a)) {
    auto value = q->constant_value();
    if (value && *value < 0) return make_result(UnifyStatus::mismatch, v, *q);  // sizes are never negative
    bindings.insert_or_assign(v, *q);
    return make_result(UnifyStatus::bound, v, *q);
  }
  if (auto k = a.constant_value()) {
    int64_t multiple = *k < 0 ? checked_neg(*k) : *k;
    return make_result(UnifyStatus::not_divisible, v, std::move(target), multiple);
  }
  return make_result(UnifyStatus::mismatch, v);
}

UnifyResult unify_product(const std::vector<SizeExpr>& factors, const SizeExpr& actual,
                          SizeBindings& bindings, const SizeVariableSet& unknowns) {
  std::string first_unknown;
  size_t unknown_factors = 0;
  SizeExpr product = SizeExpr::constant(1);
  for (const auto& f : factors) {
    auto rem = remaining_unknowns(f, bindings, unknowns);
    if (!rem.empty()) {
      ++unknown_factors;
      if (first_unknown.empty() || rem.front() < first_unknown) first_unknown = rem.front();
    }
    product *= f;
  }
  if (unknown_factors >= 2) return make_result(UnifyStatus::deferred, first_unknown);
  return unify_sizes(product, actual, bindings, unknowns);
}

}  // namespace ss
