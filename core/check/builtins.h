// The built-ins: one table, one entry each, with its shape rule, element types, PyTorch lowering
// and the axes it works across (what the serving rules read).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "check/analysis.h"
#include "syntax/ast.h"
#include "diagnostics/diagnostic.h"
#include "check/types.h"

namespace ss {

enum class BuiltinEffect {
  pure,         // a tensor operation torch.export records
  initializer,  // only as a model parameter's initializer
  training,     // a mode, dataset, log, gradient or optimizer: never in an exported function
  random,       // a tensor operation whose result differs from call to call (dropout while training)
};

// The checker's services a shape rule uses. Implemented by the checker.
class CallContext {
 public:
  virtual ~CallContext() = default;
  virtual size_t positional_count() const = 0;
  virtual const ValueType& positional(size_t i) const = 0;
  virtual Span positional_span(size_t i) const = 0;
  // The expression the i-th positional argument is written as (a name's text labels a size by it).
  virtual const Expr* positional_value(size_t i) const = 0;
  virtual const Argument* keyword(std::string_view name) const = 0;
  virtual const ValueType* keyword_type(std::string_view name) const = 0;
  virtual const AxisPattern* pattern() const = 0;
  virtual Span call_span() const = 0;
  virtual Span callee_span() const = 0;

  // The i-th positional argument as a tensor, or nullopt (already reported) if it is not one.
  virtual std::optional<TensorType> tensor(size_t i) = 0;
  // Which axis of `tensor` the keyword `over=` (or another axis-valued keyword) names.
  virtual std::optional<size_t> axis_argument(const TensorType& tensor, std::string_view keyword, Span tensor_span) = 0;
  // Sizes written in a subscript such as `causal[n m]`, resolved in the current scope.
  virtual std::optional<std::vector<Axis>> resolve_axes(const std::vector<SizeNode>& sizes) = 0;
  // The shape written in the callee's brackets (`full[n m](v)`), or nullptr when there is none.
  virtual const std::vector<SizeNode>* shape() const = 0;
  // A dim's or an axis's size in scope by name, without reporting a name that is neither.
  virtual std::optional<SizeExpr> size_named(std::string_view name) const = 0;
  // How `over=` can pick `axis` of `tensor` here, for a fix to write (its name, or its size); none when it can't.
  virtual std::optional<std::string> written_axis(const Axis& axis, const TensorType& tensor) const = 0;
  // Broadcasts two tensors as numpy does, reporting E0304 at `span`.
  // a_at/b_at, where the operands are written (when they are), let a help offer to rewrite one.
  virtual std::optional<TensorType> broadcast(const TensorType& a, const TensorType& b, Span span, Span a_at = {}, Span b_at = {}) = 0;
  // Solves `inputs` of the call's pattern against `tensors` and returns the output side's axes;
  // names solved become axes in scope. Reports E0307/E0308/E0303 itself.
  struct PatternSolution {
    std::vector<Axis> output;
    std::vector<std::vector<Axis>> input_axes;  // per input element, the actual axes (for lowering)
    SizeBindings bindings;
  };
  virtual std::optional<PatternSolution> solve_pattern(const AxisPattern& pattern, const std::vector<TensorType>& tensors,
                                                       const std::vector<Span>& spans) = 0;
  // Two sizes must be equal: reports E0301 with both in the user's terms.
  virtual bool expect_same_size(const Axis& expected, const Axis& actual, Span span, std::string_view what) = 0;
  // Whether `e` is the built-in mask `causal[n m]`, not a subscript of a local named `causal`.
  virtual bool is_builtin_causal(const Expr& e) const = 0;
  // The type the call's value must have, when the checker knows it (the call is what a function
  // with a declared result returns): what a help suggests should fit.
  virtual std::optional<TensorType> expected_result() const = 0;
  // The expression that gave the i-th positional argument its value, when the argument is a local a
  // single-name assignment made (`h` of `h = mean(x, over=D)`): where a help looks for the cause.
  virtual const Expr* definition(size_t i) const = 0;
  // Where the i-th positional argument's type is written, when it names a parameter of the function
  // being checked or a model's field (`m.w`, `m.w[l]`): the declared type's axes (`[D F]`), and
  // whether the argument is all of it (not a slice `m.w[l]`). For a label, or a fix of the declaration.
  struct Declared {
    Span axes;
    bool whole = true;
  };
  virtual std::optional<Declared> declared(size_t i) const = 0;
  // How many ids the tokenizer file `written` (relative to the source's folder) gives; nullopt with
  // `error` empty when the host checks no files, with `error` set when it can't be read.
  virtual std::optional<int64_t> tokenizer_size(const std::string& written, std::string& error) const = 0;
  virtual void report(Diagnostic diagnostic) = 0;
  // `report(code, span, message).label(..).note(..)`: reported when the statement ends.
  DiagnosticBuilder report(DiagnosticCode code, Span span, std::string message) {
    return DiagnosticBuilder([this](Diagnostic d) { report(std::move(d)); }, code, span, std::move(message));
  }

  // What the rule learned, for code generation and the serving rules.
  CallFacts* facts = nullptr;
};

using ShapeRule = ValueType (*)(CallContext&);

// What the code generator hands a built-in's lowering: its arguments already written as Python.
struct LowerContext {
  std::vector<std::string> args;                // positional arguments
  std::map<std::string, std::string> keywords;  // keyword arguments (except axis names such as over=)
  const CallFacts* facts = nullptr;             // what the shape rule learned (axis indices, pieces, ...)
  std::string pattern;                          // an axis pattern as einops writes it
  std::string pattern_sizes;                    // ", p1=16, H=4": sizes einops can't infer
  bool scalar = false;                          // every argument is a plain Python number
  std::string device;                           // the device of a tensor the call makes (`x.device`), or "" for torch's default
  std::string dtype;                            // the floating type of the model's values (`x.dtype`), or "" for torch's default
  std::vector<std::string> shape;               // a constructor's result shape (`zeros[n D]`), each size as Python
  std::vector<bool> numbers;                    // per positional argument: a plain Python number, not a tensor
  std::string rearrange = "einops.rearrange";   // what the generated code calls for einops' rearrange
};
using LowerRule = std::string (*)(const LowerContext&);

// What a built-in is to the passes that take a model apart (core/model/, the HF generator): they
// match a call by its role, never by the built-in's name.
enum class BuiltinRole { none, linear, embedding, attention, einsum, scale, tanh, sqrt, exp, log };

struct Builtin {
  std::string_view name;
  std::string_view signature;     // for completion, hover, signature help
  std::string_view summary;
  BuiltinEffect effect = BuiltinEffect::pure;
  int min_positional = 0, max_positional = 0;
  std::vector<std::string_view> keywords;           // accepted keyword arguments
  std::vector<std::string_view> required_keywords;  // of which these must be given
  bool takes_pattern = false;
  std::string_view works_across;  // in words: what positions it combines ("the axis `over=`")
  ShapeRule rule = nullptr;
  std::string_view torch;         // the PyTorch function it lowers to
  LowerRule lower = nullptr;      // writes the call as Python (core/emit/lowering.cpp)
  // Each optional keyword's value when the call leaves it out, as Python: the one place a default
  // is written. The signature shows the same (a unit test compares them); the lowering reads it.
  std::vector<std::pair<std::string_view, std::string_view>> defaults = {};
  BuiltinRole role = BuiltinRole::none;
  // Takes a shape in brackets after its name: `causal[n m]`, `zeros[n D]`, `full[n D](v)`.
  bool takes_shape = false;
  // The shape in brackets may also be left out (`interpolate(x, scale=2)`); the rule decides.
  bool shape_optional = false;

  std::string_view default_of(std::string_view keyword) const;
};


const std::vector<Builtin>& builtins();
const Builtin* find_builtin(std::string_view name);

// Element-wise maths (exp, silu, ...): each output element is a function of the same input element
// only, so the built-in works on a tensor of any shape, split along any axis, or on a vector of indices.
bool is_elementwise(const Builtin& builtin);

// Whether `over=` names an axis the built-in makes (`stack(a, b, over=K)` is `[K ..]`), not one of
// its argument's: PyTorch's `dim=` is then no `over=` of an axis it has.
bool over_names_a_new_axis(const Builtin& builtin);
// Whether `over=` names the axis the built-in reduces away (`sum`, `mean`, `max`, `min`).
bool over_removes_the_axis(const Builtin& builtin);

// Training constructs' reserved names (modes, datasets, logs, gradients, optimizers).
bool is_training_builtin(std::string_view name);

}  // namespace ss
