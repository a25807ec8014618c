// The checker's types: tensors whose axes carry symbolic sizes, and the other values a program has.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/sizes.h"
#include "syntax/source.h"

namespace ss {

enum class ElementKind { real, nonneg, int_, bool_, index, logit };

struct ElementType {
  ElementKind kind = ElementKind::real;
  SizeExpr bound;          // index: Index[N]
  std::string bound_label;  // index: N as written
  std::string over;        // logit: Logit over A
  std::string to_string() const;
  bool is_real() const { return kind == ElementKind::real || kind == ElementKind::nonneg || kind == ElementKind::logit; }
  bool is_integer() const { return kind == ElementKind::int_ || kind == ElementKind::index; }
};

struct SizeOrigin;

// One axis: its size, and the words the user knows it by.
struct Axis {
  SizeExpr size;
  std::string label;  // as written or derived: "16gh", "D", "(gh gw)", "3*D"
  std::string name;   // the name `over=` and patterns find it by ("n", "D", "m"); may be empty
  Span bound_at;      // where this axis's size was bound, for messages; may be empty
  // How a size computed from another came about (a convolution's window, a group's factors), so a
  // mismatch further on can say at which step it stopped fitting; null for a size as written.
  std::shared_ptr<const SizeOrigin> origin;
};

// One step of size arithmetic the checker did: a window slid along `inputs[0]` (convolution,
// pooling: floor((in + 2*padding - dilation*(kernel-1) - 1) / stride) + 1), a scaling (`scale` > 0:
// in * scale), or a group (`step` empty: the product of `inputs`).
struct SizeOrigin {
  std::string step;  // the built-in, "conv2d"; empty for a group
  Span at;           // the call
  int64_t kernel = 1, stride = 1, padding = 0, dilation = 1, scale = 0;
  std::vector<Axis> inputs;
};

struct TensorType {
  std::vector<Axis> axes;
  ElementType element;
  size_t rank() const { return axes.size(); }
  // "[b 3 16gh 16gw]", with " Index[V]" etc. when the element type is not Real.
  std::string to_string() const;
};

// What an expression evaluates to.
struct ValueType {
  // dataset: batches of `tensor` (`[B T] Index[V]`); optimizer: of the model `name`; none: a call
  // made for its effect (`update`, `log_scalar`), whose value can't be used.
  enum class Kind { tensor, tuple, model, python, python_module, string, function, lambda, dataset, optimizer, none, unknown };
  Kind kind = Kind::unknown;
  TensorType tensor;                  // tensor; a scalar has no axes
  std::optional<SizeExpr> known_size;  // an Int scalar whose value is a known size (`n`, `D`, `3`)
  // A plain number while the program is traced, never a tensor: a literal, a dim, the index of a
  // `for` with fixed ends (unrolled), and arithmetic and comparisons of those. An `if` on one is
  // decided as the program is traced, per block.
  bool fixed = false;
  std::vector<ValueType> elements;    // tuple
  std::string name;                   // model, function, python (dotted callee), python_module

  static ValueType unknown() { return {}; }
  static ValueType none() {
    ValueType v;
    v.kind = Kind::none;
    return v;
  }
  static ValueType of(TensorType tensor) {
    ValueType v;
    v.kind = Kind::tensor;
    v.tensor = std::move(tensor);
    return v;
  }
  static ValueType scalar(ElementKind kind) {
    TensorType t;
    t.element.kind = kind;
    return of(std::move(t));
  }
  bool is_tensor() const { return kind == Kind::tensor; }
  bool is_unknown() const { return kind == Kind::unknown; }
  std::string to_string() const;
};

// "`(p1 p2 c)` (768)" when the label hides the value, else "`768`".
std::string describe_axis(const Axis& axis);
// Label of a size the checker computed, in the user's terms.
std::string size_label(const SizeExpr& size);

}  // namespace ss
