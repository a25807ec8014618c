// The PyTorch code generator: a checked file becomes a readable Python module of plain PyTorch.
#pragma once
#include <string>

#include "check/analysis.h"

namespace ss {

struct GeneratedModule {
  std::string python;  // the module's source
  bool uses_einops = false;
};

// Models become nn.Modules whose parameters follow their initializers; functions become
// functions; each statement carries a comment naming its source line. Call only on a file
// without errors.
GeneratedModule generate_python(const Analysis& analysis);

// A size as a Python expression over the names in scope (dims are module constants).
std::string python_size(const SizeExpr& size);

// A name that is safe in Python (`lambda` → `lambda_`).
std::string python_name(const std::string& name);

}  // namespace ss
