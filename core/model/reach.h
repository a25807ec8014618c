// What a function computes with, through everything it calls: the built-ins it reaches, each with
// the keyword arguments it is given, as written. `export --gguf` compares these with what an
// architecture of llama.cpp computes with (its norm, its activation, one epsilon).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "check/analysis.h"

namespace ss {

struct BuiltinCall {
  std::string name;                             // `rms_norm`
  std::map<std::string, std::string> keywords;  // keyword -> its value's source text (`eps` -> `1e-6`)
  Span span;
};

// Each built-in call in `function` and in every `fn` it reaches, with what the checker learned of
// it, in the order below. The one walk through a function's callees; the passes that ask what a
// function computes with build on it.
void for_each_builtin_call_reached(const Analysis& analysis, const Item& function,
                                   const std::function<void(const Expr& call, const CallFacts& facts)>& visit);

// The built-in calls in `function` and in every `fn` it reaches, in source order per function,
// functions in the order they are first reached. Empty when `function` does not exist.
std::vector<BuiltinCall> builtin_calls_reached(const Analysis& analysis, const std::string& function);

}  // namespace ss
