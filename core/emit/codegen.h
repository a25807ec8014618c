// The PyTorch code generator: a checked file becomes a readable Python module of plain PyTorch.
#pragma once
#include <string>

#include "check/analysis.h"

namespace ss {

struct GeneratedModule {
  std::string python;  // the module's source
  bool uses_einops = false;
};

// Whether the module imports what `import python` names. Running a program (`shapescript run`,
// `shapescript.compile`) is running its Python; exporting never is: an exported function can't
// reach Python (E1701), so an export's module leaves the imports out and nothing the source names
// is imported, not even for its side effects.
enum class PythonImports { written, left_out };

// Models become nn.Modules whose parameters follow their initializers; functions become
// functions; each statement carries a comment naming its source line. Call only on a file
// without errors.
GeneratedModule generate_python(const Analysis& analysis, PythonImports python_imports = PythonImports::written);

// A size as a Python expression over the names in scope (dims are module constants).
std::string python_size(const SizeExpr& size);

// A ShapeScript name as a Python identifier that can't replace anything the generated code uses:
// characters other than letters, digits and `_` become `_`; a name starting with `_` (as the
// generators' helpers and Python's dunders do) gets `ss` before it (`_check_shape` → `ss_check_shape`,
// `__import__` → `ss__import__`); a keyword, a builtin, a name the generated module defines or
// imports, or one starting with `ShapeScript` gets a `_` after it (`lambda` → `lambda_`, `exec` → `exec_`).
// A name already of a mangled form is mangled again (`ss_x` → `ssss_x`, `lambda_` → `lambda__`), so
// two names never become one.
std::string python_name(const std::string& name);
// An attribute's name after `.` (`np.float32`): kept but for a keyword (`x.lambda` → `x.lambda_`)
// and a name starting with `__`, which gets `ss` before it (`x.__class__` → `x.ss__class__`).
std::string python_attribute(const std::string& name);

}  // namespace ss
