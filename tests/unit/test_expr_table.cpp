// ExprTable (core/check/expr_table.h): a fact per expression, found by the expression's number.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "check/expr_table.h"

using namespace ss;

TEST_CASE("an ExprTable finds each expression's fact by its number, and a fact stays where it is") {
  std::vector<std::unique_ptr<Expr>> exprs;
  for (uint32_t id = 1; id <= 600; ++id) {  // more than two blocks of facts
    exprs.push_back(std::make_unique<Expr>());
    exprs.back()->id = id;
  }
  ExprTable<std::string> table;
  table.reserve_ids(100);  // fewer than the numbers used: the table grows past it
  for (size_t i = 0; i < exprs.size(); i += 2) table.set(exprs[i].get(), "fact " + std::to_string(i));
  CHECK(table.size() == 300);
  const std::string* early = table.find(exprs[0].get());
  REQUIRE(early);
  for (size_t i = 1; i < exprs.size(); i += 2) table.set(exprs[i].get(), "odd " + std::to_string(i));
  CHECK(table.find(exprs[0].get()) == early);  // the table grew; the first fact didn't move
  CHECK(*early == "fact 0");
  CHECK(table.size() == 600);
  CHECK(*table.find(exprs[599].get()) == "odd 599");

  Expr unnumbered;  // id 0, and one past every number the table has seen
  Expr later;
  later.id = 5000;
  CHECK(table.find(&unnumbered) == nullptr);
  CHECK(table.find(&later) == nullptr);

  // Set again: replaced in place. Erased: gone, and its place is the next fact's.
  table.set(exprs[10].get(), "again");
  CHECK(*table.find(exprs[10].get()) == "again");
  CHECK(table.size() == 600);
  table.erase(exprs[10].get());
  CHECK(table.find(exprs[10].get()) == nullptr);
  CHECK(table.size() == 599);
  table.set(&later, "later");
  CHECK(table.size() == 600);
  CHECK(*table.find(&later) == "later");

  // Taken: the fact moves out, for another expression.
  std::string taken = table.take(exprs[20].get());
  CHECK(taken == "fact 20");
  CHECK(table.find(exprs[20].get()) == nullptr);
  CHECK(table.take(exprs[20].get()).empty());
  table.set(exprs[10].get(), std::move(taken));
  CHECK(*table.find(exprs[10].get()) == "fact 20");
  CHECK(table.size() == 600);
}
