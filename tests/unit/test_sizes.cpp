// Unit tests for the symbolic size algebra (core/check/sizes.h).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <unordered_set>

#include "check/sizes.h"

using ss::SizeBindings;
using ss::SizeExpr;
using ss::SizeVariableSet;
using ss::UnifyStatus;

namespace {

SizeExpr k(int64_t value) { return SizeExpr::constant(value); }
SizeExpr v(const char* name) { return SizeExpr::variable(name); }

}  // namespace

TEST_CASE("sizes: normal forms are canonical", "[sizes]") {
  SizeExpr a = v("a"), b = v("b"), n = v("n");

  SECTION("zero") {
    CHECK(SizeExpr() == k(0));
    CHECK(SizeExpr().is_zero());
    CHECK(SizeExpr().is_constant());
    CHECK(SizeExpr().constant_value() == 0);
    CHECK(SizeExpr().terms().empty());
  }
  SECTION("commutativity and associativity") {
    CHECK(a + b == b + a);
    CHECK(a * b == b * a);
    CHECK((a + b) + n == a + (b + n));
    CHECK((a * b) * n == a * (b * n));
    CHECK(a * (b + n) == a * b + a * n);
  }
  SECTION("like terms combine and zero terms vanish") {
    CHECK(k(2) * n - n == n);
    CHECK(n - n == SizeExpr());
    CHECK((n - n).terms().empty());
    CHECK((a + b - a).terms().size() == 1);
    CHECK(k(0) * a == SizeExpr());
    CHECK(a + k(0) == a);
  }
  SECTION("products") {
    CHECK((a + b) * (a - b) == a * a - b * b);
    CHECK((n + k(1)) * (n + k(1)) == n * n + k(2) * n + k(1));
    CHECK(-(a - b) == b - a);
  }
  SECTION("constants fold") {
    CHECK(k(3) * k(768) == k(2304));
    CHECK((k(3) * k(768)).constant_value() == 2304);
    CHECK((k(5) - k(5)).constant_value() == 0);
    CHECK_FALSE(n.constant_value().has_value());
    CHECK_FALSE((n + k(1)).is_constant());
  }
  SECTION("hash is structural") {
    CHECK((a + b).hash() == (b + a).hash());
    CHECK((k(2) * n - n).hash() == n.hash());
    CHECK((a * b).hash() != (a + b).hash());
    std::unordered_set<SizeExpr> set{a * b, b * a, a + b};
    CHECK(set.size() == 2);
  }
}

TEST_CASE("sizes: to_string renders what the user writes", "[sizes]") {
  SizeExpr b = v("b"), n = v("n"), gh = v("gh"), gw = v("gw");
  CHECK(SizeExpr().to_string() == "0");
  CHECK(k(224).to_string() == "224");
  CHECK(k(-3).to_string() == "-3");
  CHECK(n.to_string() == "n");
  CHECK((k(16) * gh).to_string() == "16*gh");
  CHECK((gh * k(16)).to_string() == "16*gh");
  CHECK((gw * gh).to_string() == "gh*gw");
  CHECK((n + k(1)).to_string() == "n+1");
  CHECK((k(1) + n).to_string() == "n+1");
  CHECK((k(2) * n - k(1)).to_string() == "2*n-1");
  CHECK((n * k(3) * b).to_string() == "3*b*n");
  CHECK((k(1) - n).to_string() == "-n+1");
  CHECK((n + b).to_string() == "b+n");
  CHECK((n * n + gh * gw + n + k(7)).to_string() == "gh*gw+n*n+n+7");
  CHECK((n * n * n - n * n).to_string() == "n*n*n-n*n");
  CHECK(k(std::numeric_limits<int64_t>::min()).to_string() == "-9223372036854775808");

  SECTION("3*D after the checker substitutes D = 768") {
    SizeExpr three_d = k(3) * v("D");
    CHECK(three_d.to_string() == "3*D");
    CHECK(three_d.substitute({{"D", k(768)}}).to_string() == "2304");
  }
  SECTION("user style juxtaposes the scale") {
    CHECK((k(16) * gh).to_user_string() == "16gh");
    CHECK((k(2) * n - k(1)).to_user_string() == "2n-1");
    CHECK((k(3) * b * n).to_user_string() == "3b*n");
    CHECK((gh * gw).to_user_string() == "gh*gw");
    CHECK(k(2304).to_user_string() == "2304");
  }
}

TEST_CASE("sizes: floor division by a constant, as torch rounds output sizes", "[sizes]") {
  SizeExpr h = v("h"), w = v("w");
  CHECK(k(28).floor_divide(2) == k(14));
  CHECK(k(7).floor_divide(2) == k(3));
  CHECK(k(-1).floor_divide(2) == k(-1));  // floor, not truncation toward zero
  CHECK(k(-4).floor_divide(2) == k(-2));
  CHECK((k(2) * h - k(1)).floor_divide(2) == h - k(1));
  CHECK((k(4) * h + k(3)).floor_divide(4) == h);
  CHECK((k(6) * h * w + k(5)).floor_divide(3) == k(2) * h * w + k(1));
  CHECK(SizeExpr().floor_divide(3) == SizeExpr());
  CHECK_FALSE(h.floor_divide(2).has_value());  // h/2 rounds differently for odd and even h
  CHECK_FALSE((k(2) * h + w).floor_divide(2).has_value());
  CHECK_FALSE(k(5).floor_divide(0).has_value());
  CHECK_FALSE(k(5).floor_divide(-1).has_value());
}

TEST_CASE("sizes: exact division", "[sizes]") {
  SizeExpr a = v("a"), b = v("b"), n = v("n"), gh = v("gh"), gw = v("gw");

  SECTION("by constants") {
    CHECK(k(224).divide_exact(k(16)) == k(14));
    CHECK((k(32) * n + k(16)).divide_exact(k(16)) == k(2) * n + k(1));
    CHECK(k(6).divide_exact(k(-3)) == k(-2));
    CHECK(n.divide_exact(k(1)) == n);
    CHECK_FALSE(k(30).divide_exact(k(16)).has_value());
    CHECK_FALSE((k(16) * n + k(1)).divide_exact(k(16)).has_value());
    CHECK_FALSE(n.divide_exact(k(16)).has_value());
    CHECK_FALSE(n.divide_exact(SizeExpr()).has_value());
    CHECK(SizeExpr().divide_exact(n) == SizeExpr());
  }
  SECTION("by monomials") {
    CHECK((k(16) * gh).divide_exact(gh) == k(16));
    CHECK((k(16) * gh * gw).divide_exact(k(4) * gh) == k(4) * gw);
    CHECK((n * n * b + k(2) * n * b).divide_exact(n * b) == n + k(2));
    CHECK_FALSE((gh + k(1)).divide_exact(gh).has_value());
    CHECK_FALSE((k(16) * gh).divide_exact(gw).has_value());
    CHECK_FALSE((k(16) * gh).divide_exact(k(32) * gh).has_value());
    CHECK_FALSE(n.divide_exact(n * n).has_value());
  }
  SECTION("by polynomials") {
    CHECK((a * a - b * b).divide_exact(a - b) == a + b);
    CHECK((k(3) * n + k(3)).divide_exact(n + k(1)) == k(3));
    CHECK_FALSE((a * a + b * b).divide_exact(a + b).has_value());
    CHECK_FALSE((n * n + n).divide_exact(k(2)).has_value());  // always even, but not in Z[n]
  }
}

TEST_CASE("sizes: gcd, multiples and variables", "[sizes]") {
  SizeExpr n = v("n"), gh = v("gh"), gw = v("gw"), h = v("h");
  CHECK(SizeExpr().coefficient_gcd() == 0);
  CHECK(k(224).coefficient_gcd() == 224);
  CHECK(k(-6).coefficient_gcd() == 6);
  CHECK((k(32) * n + k(48)).coefficient_gcd() == 16);
  CHECK(h.coefficient_gcd() == 1);
  CHECK((k(32) * n + k(48)).coefficient_gcd() % 16 == 0);  // "a multiple of 16"
  CHECK((k(8) * n).coefficient_gcd() % 16 != 0);

  CHECK((gw * gh + n).variables() == std::vector<std::string>{"gh", "gw", "n"});
  CHECK((n * n).variables() == std::vector<std::string>{"n"});
  CHECK(k(3).variables().empty());
  CHECK((k(16) * gh).has_variable("gh"));
  CHECK_FALSE((k(16) * gh).has_variable("g"));
  CHECK_FALSE((gh - gh).has_variable("gh"));
  CHECK((n * n * gh + n).degree() == 3);
  CHECK(k(5).degree() == 0);
}

TEST_CASE("sizes: substitution", "[sizes]") {
  SizeExpr n = v("n"), m = v("m"), gh = v("gh"), D = v("D");
  CHECK((k(16) * gh).substitute({{"gh", k(14)}}) == k(224));
  CHECK((n + k(1)).substitute({{"n", m - k(1)}}) == m);
  CHECK((n * n).substitute({{"n", m + k(1)}}) == m * m + k(2) * m + k(1));
  CHECK((n * m).substitute({{"n", k(2)}}) == k(2) * m);  // unmentioned variables stay
  CHECK((n * m).substitute({{"n", SizeExpr()}}) == SizeExpr());
  // Simultaneous: the value's own names are not substituted again.
  CHECK((n + m).substitute({{"n", m}, {"m", n}}) == n + m);
  CHECK(gh.substitute({{"gh", k(2) * gh}}) == k(2) * gh);
  CHECK((D * D).substitute({{"D", k(768)}}) == k(589824));
}

TEST_CASE("sizes: linear_in", "[sizes]") {
  SizeExpr n = v("n"), b = v("b"), gh = v("gh");
  auto lin = (k(16) * gh).linear_in("gh");
  REQUIRE(lin.has_value());
  CHECK(lin->first == k(16));
  CHECK(lin->second == SizeExpr());

  lin = (k(2) * n * b + n + b + k(3)).linear_in("n");
  REQUIRE(lin.has_value());
  CHECK(lin->first == k(2) * b + k(1));
  CHECK(lin->second == b + k(3));

  lin = (b + k(1)).linear_in("n");
  REQUIRE(lin.has_value());
  CHECK(lin->first.is_zero());
  CHECK(lin->second == b + k(1));

  CHECK_FALSE((n * n + n).linear_in("n").has_value());
}

TEST_CASE("sizes: unify_sizes, every status", "[sizes]") {
  SizeExpr gh = v("gh"), gw = v("gw"), n = v("n"), m = v("m"), b = v("b"), h = v("h"), w = v("w");
  SizeBindings bindings;
  const SizeVariableSet unknowns{"gh", "gw", "n", "b"};

  SECTION("16*gh vs 224 binds gh = 14") {
    auto r = ss::unify_sizes(k(16) * gh, k(224), bindings, unknowns);
    CHECK(r.status == UnifyStatus::bound);
    CHECK(r.variable == "gh");
    CHECK(r.value == k(14));
    REQUIRE(bindings.count("gh") == 1);
    CHECK(bindings.at("gh") == k(14));
    // Once bound, the same pattern compares.
    CHECK(ss::unify_sizes(k(16) * gh, k(224), bindings, unknowns).status == UnifyStatus::equal);
    CHECK(ss::unify_sizes(k(16) * gh, k(225), bindings, unknowns).status == UnifyStatus::mismatch);
  }
  SECTION("16*gh vs 30 is not divisible by 16") {
    auto r = ss::unify_sizes(k(16) * gh, k(30), bindings, unknowns);
    CHECK(r.status == UnifyStatus::not_divisible);
    CHECK(r.variable == "gh");
    CHECK(r.required_multiple == 16);
    CHECK(r.value == k(30));
    CHECK(bindings.empty());
  }
  SECTION("16*gh vs a bare generic h is not divisible") {
    auto r = ss::unify_sizes(k(16) * gh, h, bindings, unknowns);
    CHECK(r.status == UnifyStatus::not_divisible);
    CHECK(r.required_multiple == 16);
    CHECK(r.value == h);
    CHECK(bindings.empty());
  }
  SECTION("16*gh vs 32*w binds gh = 2*w") {
    auto r = ss::unify_sizes(k(16) * gh, k(32) * w, bindings, unknowns);
    CHECK(r.status == UnifyStatus::bound);
    CHECK(r.value == k(2) * w);
    CHECK(bindings.at("gh").to_string() == "2*w");
  }
  SECTION("16*gh vs 8*w needs a multiple of 16") {
    auto r = ss::unify_sizes(k(16) * gh, k(8) * w, bindings, unknowns);
    CHECK(r.status == UnifyStatus::not_divisible);
    CHECK(r.required_multiple == 16);
  }
  SECTION("n+1 vs m binds n = m-1") {
    auto r = ss::unify_sizes(n + k(1), m, bindings, unknowns);
    CHECK(r.status == UnifyStatus::bound);
    CHECK(r.variable == "n");
    CHECK(bindings.at("n").to_string() == "m-1");
  }
  SECTION("2*n+1 vs m reports what must be a multiple") {
    auto r = ss::unify_sizes(k(2) * n + k(1), m, bindings, unknowns);
    CHECK(r.status == UnifyStatus::not_divisible);
    CHECK(r.required_multiple == 2);
    CHECK(r.value.to_string() == "m-1");
  }
  SECTION("b already bound compares equal") {
    bindings.emplace("b", b);
    auto r = ss::unify_sizes(b, b, bindings, unknowns);
    CHECK(r.status == UnifyStatus::equal);
    CHECK(ss::unify_sizes(b, n, bindings, unknowns).status == UnifyStatus::mismatch);
  }
  SECTION("literals: 3 vs 4 mismatch, 3 vs 3 equal") {
    CHECK(ss::unify_sizes(k(3), k(4), bindings, unknowns).status == UnifyStatus::mismatch);
    CHECK(ss::unify_sizes(k(3), k(3), bindings, unknowns).status == UnifyStatus::equal);
  }
  SECTION("non-unknown names are rigid") {
    CHECK(ss::unify_sizes(h, h, bindings, unknowns).status == UnifyStatus::equal);
    CHECK(ss::unify_sizes(h, w, bindings, unknowns).status == UnifyStatus::mismatch);
  }
  SECTION("two unknowns defer") {
    auto r = ss::unify_sizes(gh * gw, k(196), bindings, unknowns);
    CHECK(r.status == UnifyStatus::deferred);
    CHECK(r.variable == "gh");
    CHECK(bindings.empty());
    // After gh is bound elsewhere, the same axis solves.
    bindings.emplace("gh", k(14));
    r = ss::unify_sizes(gh * gw, k(196), bindings, unknowns);
    CHECK(r.status == UnifyStatus::bound);
    CHECK(r.value == k(14));
  }
  SECTION("non-constant coefficient that does not divide is a mismatch") {
    bindings.emplace("b", b);
    auto r = ss::unify_sizes(b * n, m, bindings, unknowns);
    CHECK(r.status == UnifyStatus::mismatch);
    CHECK(ss::unify_sizes(b * n, k(3) * b, bindings, unknowns).value == k(3));
  }
  SECTION("a negative solution is a mismatch") {
    auto r = ss::unify_sizes(n + k(5), k(3), bindings, unknowns);
    CHECK(r.status == UnifyStatus::mismatch);
    CHECK(bindings.empty());
  }
  SECTION("non-linear unknown defers") {
    CHECK(ss::unify_sizes(n * n, k(16), bindings, unknowns).status == UnifyStatus::deferred);
  }
  SECTION("the caller's own names may reuse the callee's") {
    // Callee gh bound to the caller's 2*gh: a second axis 16*gh must be 32*gh in the caller.
    bindings.emplace("gh", k(2) * gh);
    CHECK(ss::unify_sizes(k(16) * gh, k(32) * gh, bindings, unknowns).status == UnifyStatus::equal);
    // Callee n unknown against the caller's n + 1.
    auto r = ss::unify_sizes(n, n + k(1), bindings, unknowns);
    CHECK(r.status == UnifyStatus::bound);
    CHECK(r.value == n + k(1));
  }
}

TEST_CASE("sizes: unify_product solves einops groups", "[sizes]") {
  SizeExpr gh = v("gh"), gw = v("gw"), p1 = v("p1"), H = v("H"), Dh = v("Dh"), h = v("h");
  SizeBindings bindings;
  const SizeVariableSet unknowns{"gh", "gw", "p1", "p2"};

  SECTION("(gh p1) against 16*gh with gh bound gives p1 = 16") {
    bindings.emplace("gh", gh);
    auto r = ss::unify_product({gh, p1}, k(16) * gh, bindings, unknowns);
    CHECK(r.status == UnifyStatus::bound);
    CHECK(r.variable == "p1");
    CHECK(r.value == k(16));
    CHECK(bindings.at("p1") == k(16));
  }
  SECTION("(gh gw) with both unknown defers") {
    auto r = ss::unify_product({gh, gw}, k(196), bindings, unknowns);
    CHECK(r.status == UnifyStatus::deferred);
    CHECK(bindings.empty());
  }
  SECTION("(3 H Dh) with dims known checks the product") {
    SizeBindings dims{{"H", k(12)}, {"Dh", k(64)}};
    CHECK(ss::unify_product({k(3), H, Dh}, k(2304), dims, unknowns).status == UnifyStatus::equal);
    CHECK(ss::unify_product({k(3), H, Dh}, k(2300), dims, unknowns).status == UnifyStatus::mismatch);
  }
  SECTION("(gh p1) with p1 known and a bare h is not divisible") {
    bindings.emplace("p1", k(16));
    auto r = ss::unify_product({gh, p1}, h, bindings, unknowns);
    CHECK(r.status == UnifyStatus::not_divisible);
    CHECK(r.variable == "gh");
    CHECK(r.required_multiple == 16);
  }
  SECTION("an empty group is 1") {
    CHECK(ss::unify_product({}, k(1), bindings, unknowns).status == UnifyStatus::equal);
  }
}

TEST_CASE("sizes: overflow throws instead of wrapping", "[sizes]") {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  SizeExpr n = v("n");
  CHECK_THROWS_AS(k(max) + k(1), std::overflow_error);
  CHECK_THROWS_AS(k(min) - k(1), std::overflow_error);
  CHECK_THROWS_AS(k(max) * k(2), std::overflow_error);
  CHECK_THROWS_AS(-k(min), std::overflow_error);
  CHECK_THROWS_AS(k(min).divide_exact(k(-1)), std::overflow_error);
  CHECK_THROWS_AS((k(max) * n).substitute({{"n", k(2)}}), std::overflow_error);
  CHECK_THROWS_AS(k(min).coefficient_gcd(), std::overflow_error);
  CHECK(k(max) - k(max) == SizeExpr());
}
