#include "check/types.h"

namespace ss {

std::string ElementType::to_string() const {
  switch (kind) {
    case ElementKind::real: return "Real";
    case ElementKind::nonneg: return "NonNeg";
    case ElementKind::int_: return "Int";
    case ElementKind::bool_: return "Bool";
    case ElementKind::index: return "Index[" + (bound_label.empty() ? bound.to_user_string() : bound_label) + "]";
    case ElementKind::logit: return "Logit over " + over;
  }
  return "Real";
}

std::string TensorType::to_string() const {
  std::string out = "[";
  for (size_t i = 0; i < axes.size(); ++i) out += (i ? " " : "") + axes[i].label;
  out += "]";
  if (element.kind != ElementKind::real) out += " " + element.to_string();
  return out;
}

std::string ValueType::to_string() const {
  switch (kind) {
    case Kind::tensor:
      if (tensor.axes.empty()) return tensor.element.to_string();
      return tensor.to_string();
    case Kind::tuple: {
      std::string out = "(";
      for (size_t i = 0; i < elements.size(); ++i) out += (i ? ", " : "") + elements[i].to_string();
      return out + ")";
    }
    case Kind::model: return name;
    case Kind::python: return "Python";
    case Kind::python_module: return "Python module " + name;
    case Kind::string: return "String";
    case Kind::function: return "fn " + name;
    case Kind::lambda: return "lambda";
    case Kind::dataset: return "Dataset of " + tensor.to_string();
    case Kind::optimizer: return "Optimizer of " + name;
    case Kind::none: return "nothing";
    case Kind::unknown: return "?";
  }
  return "?";
}

std::string size_label(const SizeExpr& size) { return size.to_user_string(); }

std::string describe_axis(const Axis& axis) {
  std::string value = axis.size.to_user_string();
  if (axis.label.empty() || axis.label == value) return "`" + value + "`";
  return "`" + axis.label + "` (" + value + ")";
}

}  // namespace ss
