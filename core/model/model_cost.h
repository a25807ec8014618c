// What a model costs: its parameter count, and for a language model the key-value cache a serving
// engine holds per token. Both as a number and as a polynomial in the dims as the file writes them
// (a dim defined as a product of others is expanded; one defined by a division stays by name).
// Read from a checked program; the language server shows it on hover over the model's name.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/analysis.h"
#include "check/sizes.h"

namespace ss {

struct ModelCost {
  int64_t parameters = 0;
  std::optional<SizeExpr> parameter_formula;  // in the dims' names; absent when a size is not a polynomial in them
  // A language model's forward (`forward(m, ids, ...)` with a loop over blocks that calls
  // scaled_dot_product_attention): the keys and values each token adds, counted in elements.
  std::string forward;                        // the function it was read from; empty when none
  std::optional<int64_t> kv_elements_per_token;
  std::optional<SizeExpr> kv_formula;
  // Every attention slides a window (`window=`): the tokens a sequence's cache holds at most.
  std::optional<int64_t> kv_window;
};

ModelCost model_cost(const Analysis& analysis, const Item& model);
// The same for each of `models`, looking across the program once for all of them.
std::map<const Item*, ModelCost> model_costs(const Analysis& analysis, const std::vector<const Item*>& models);

// "2·L·D² + 3·L·D·F + D", the way the hover writes a size: largest terms first, `·` for products.
std::string format_size_formula(const SizeExpr& size);
// "1,234,567"
std::string group_thousands(int64_t value);

}  // namespace ss
