// Expressions: names, arithmetic with broadcasting, calls of built-ins and functions, patterns.
#include <algorithm>
#include <cmath>
#include <bit>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "check/check_internal.h"
#include "syntax/walk.h"
#include "check/function_cache.h"
#include "diagnostics/names.h"

namespace ss {

namespace {

// The label at the place an axis was bound: a dim's value, or where a generic axis was named.
std::string bound_label(const Axis& axis) {
  if (auto value = axis.size.constant_value()) return "`" + axis.label + "` is " + std::to_string(*value);
  return "`" + axis.label + "` bound here";
}

bool is_int_scalar(const ValueType& v) {
  return v.is_tensor() && v.tensor.rank() == 0 && v.tensor.element.is_integer();
}

ElementType combine_elements(const ElementType& a, const ElementType& b, const std::string& op) {
  ElementType out;
  if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=" || op == "and" || op == "or") {
    out.kind = ElementKind::bool_;
    return out;
  }
  if (a.is_integer() && b.is_integer()) {
    out.kind = op == "/" ? ElementKind::real : ElementKind::int_;
    return out;
  }
  bool nonneg_a = a.kind == ElementKind::nonneg || a.kind == ElementKind::index;
  bool nonneg_b = b.kind == ElementKind::nonneg || b.kind == ElementKind::index;
  out.kind = (nonneg_a && nonneg_b && op != "-") ? ElementKind::nonneg : ElementKind::real;
  return out;
}

// How a size that isn't a multiple ends the sentence: a known number is not one; a symbol may not be.
std::string may_not_be(const SizeExpr& size) { return size.is_constant() ? ", which is not" : ", which may not be"; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// The call context handed to built-in shape rules.

namespace {
std::optional<size_t> literal_position(const Expr* e, size_t rank);  // below, with the other positions
}  // namespace

class CallChecker final : public CallContext {
 public:
  CallChecker(Checker& checker, const Expr& call, Scope& scope, std::vector<const Argument*> positional,
              std::vector<ValueType> positional_types, std::map<std::string, std::pair<const Argument*, ValueType>> keywords,
              const AxisPattern* pattern)
      : checker_(checker), call_(call), scope_(scope), positional_(std::move(positional)), positional_types_(std::move(positional_types)),
        keywords_(std::move(keywords)), pattern_(pattern) {}

  size_t positional_count() const override { return positional_.size(); }
  const ValueType& positional(size_t i) const override { return positional_types_.at(i); }
  Span positional_span(size_t i) const override { return positional_.at(i)->span; }
  const Expr* positional_value(size_t i) const override { return positional_.at(i)->value.get(); }
  const Argument* keyword(std::string_view name) const override {
    auto it = keywords_.find(std::string(name));
    return it == keywords_.end() ? nullptr : it->second.first;
  }
  const ValueType* keyword_type(std::string_view name) const override {
    auto it = keywords_.find(std::string(name));
    return it == keywords_.end() ? nullptr : &it->second.second;
  }
  const AxisPattern* pattern() const override { return pattern_; }
  Span call_span() const override { return call_.span; }
  Span callee_span() const override { return call_.operands.empty() ? call_.span : call_.operands[0]->span; }

  std::optional<TensorType> tensor(size_t i) override {
    if (i >= positional_.size()) return std::nullopt;
    return checker_.require_tensor(positional_types_[i], positional_[i]->value.get(), positional_[i]->span);
  }
  std::optional<size_t> axis_argument(const TensorType& tensor, std::string_view keyword, Span tensor_span) override {
    // PyTorch's `dim=-1`, reported with its `over=`: the axis at that position, as the fix picks it.
    if (keyword == "over" && !this->keyword(keyword) && torch_dim)
      if (auto at = literal_position(torch_dim, tensor.rank())) return at;
    if (keyword == "over" && !this->keyword(keyword) && torch_over && *torch_over < tensor.rank()) return torch_over;
    return checker_.axis_argument(tensor, this->keyword(keyword), keyword, tensor_span, scope_);
  }
  std::optional<std::vector<Axis>> resolve_axes(const std::vector<SizeNode>& sizes) override {
    std::vector<Axis> axes;
    for (const SizeNode& s : sizes) {
      auto axis = checker_.resolve_size(s, scope_);
      if (!axis) return std::nullopt;
      axes.push_back(*axis);
    }
    return axes;
  }
  const std::vector<SizeNode>* shape() const override { return shape_; }
  const Expr* torch_dim = nullptr;  // PyTorch's `dim=` in place of `over=`, already reported
  std::optional<size_t> torch_over;  // PyTorch's shape by position (`layer_norm(x, (D,))`), already reported: that axis
  std::optional<SizeExpr> size_named(std::string_view name) const override {
    if (const Checker::KnownDim* dim = checker_.known_dim(name)) return dim->size;
    if (auto axis = scope_.axes.find(name); axis != scope_.axes.end()) return axis->second.size;
    return std::nullopt;
  }
  std::optional<std::string> written_axis(const Axis& axis, const TensorType& tensor) const override { return checker_.written_axis(axis, tensor, scope_); }
  std::optional<TensorType> broadcast(const TensorType& a, const TensorType& b, Span span, Span a_at, Span b_at) override {
    return checker_.broadcast(a, b, span, a_at, b_at, &scope_);
  }
  std::optional<PatternSolution> solve_pattern(const AxisPattern& pattern, const std::vector<TensorType>& tensors,
                                               const std::vector<Span>& spans) override {
    auto solution = checker_.solve_pattern(pattern, tensors, spans, scope_);
    if (solution && facts) facts->bindings = solution->bindings;  // the code generator passes solved sizes to einops
    return solution;
  }
  bool expect_same_size(const Axis& expected, const Axis& actual, Span span, std::string_view what) override {
    return checker_.expect_same_size(expected, actual, span, what);
  }
  bool is_builtin_causal(const Expr& e) const override {
    auto facts = checker_.analysis().semantics.calls.find(&e);
    return e.kind == Expr::Kind::subscript && facts && facts->builtin &&
           facts->builtin->name == "causal";
  }
  std::optional<TensorType> expected_result() const override { return checker_.expected_type(call_, scope_); }
  std::optional<int64_t> tokenizer_size(const std::string& written, std::string& error) const override {
    if (!checker_.options().tokenizer_size) return std::nullopt;
    std::filesystem::path path = std::filesystem::path(checker_.analysis().file.path()).parent_path() / written;
    return checker_.options().tokenizer_size(path.string(), error);
  }
  std::optional<Declared> declared(size_t i) const override {
    const Expr* e = i < positional_.size() ? positional_[i]->value.get() : nullptr;
    bool whole = true;
    if (e && e->kind == Expr::Kind::subscript && !e->operands.empty()) {
      e = e->operands[0].get();
      whole = false;
    }
    if (!e) return std::nullopt;
    if (e->kind == Expr::Kind::name && checker_.current_) {  // a parameter of the function being checked
      auto local = scope_.locals.find(e->text);
      if (local == scope_.locals.end() || local->second.value) return std::nullopt;
      for (const Parameter& p : checker_.current_->parameters)
        if (p.name == e->text && p.type.is_tensor) return Declared{p.type.axes_span, whole};
      return std::nullopt;
    }
    if (e->kind == Expr::Kind::attribute && !e->operands.empty() && e->operands[0]->kind == Expr::Kind::name) {  // `m.w`
      auto local = scope_.locals.find(e->operands[0]->text);
      if (local == scope_.locals.end() || local->second.type.kind != ValueType::Kind::model) return std::nullopt;
      const Item* model = checker_.analysis().find_item(local->second.type.name);
      if (!model || model->kind != Item::Kind::model) return std::nullopt;
      for (const Item::Param& p : model->params)
        if (p.name == e->text && p.type.is_tensor) return Declared{p.type.axes_span, whole};
    }
    return std::nullopt;
  }
  const Expr* definition(size_t i) const override {
    const Expr* e = i < positional_.size() ? positional_[i]->value.get() : nullptr;
    if (!e || e->kind != Expr::Kind::name) return nullptr;
    auto local = scope_.locals.find(e->text);
    return local == scope_.locals.end() ? nullptr : local->second.value;
  }
  using CallContext::report;
  void report(Diagnostic diagnostic) override { checker_.report(std::move(diagnostic)); }

  const std::vector<SizeNode>* shape_ = nullptr;  // `full[n m](v)`: the sizes in the callee's brackets

 private:
  Checker& checker_;
  const Expr& call_;
  Scope& scope_;
  std::vector<const Argument*> positional_;
  std::vector<ValueType> positional_types_;
  std::map<std::string, std::pair<const Argument*, ValueType>> keywords_;
  const AxisPattern* pattern_;
};

// A built-in called as PyTorch's method (`x.softmax(dim=-1)`, `att.masked_fill(mask, -inf)`), as
// its fix writes it (`softmax(x, over=n)`, `masked_fill(att, mask, -inf)`): the tensor first, then
// the call's own positional arguments, and for a rule along an axis, that axis. Its rule gives
// the call's value, so the lines after it are checked in the same round; what the rule finds wrong
// with the fixed call (a mask that doesn't broadcast) is reported as a check of the fix would.
class FixedMethodCall final : public CallContext {
 public:
  struct Positional {
    const Expr* value;
    Span span;
    ValueType type;
  };
  FixedMethodCall(Checker& checker, Scope& scope, const Expr& call, std::vector<Positional> positional, std::optional<size_t> over)
      : checker_(checker), scope_(scope), call_(call), positional_(std::move(positional)), over_(over) {}
  size_t positional_count() const override { return positional_.size(); }
  const ValueType& positional(size_t i) const override { return positional_[i].type; }
  Span positional_span(size_t i) const override { return positional_[i].span; }
  const Expr* positional_value(size_t i) const override { return positional_[i].value; }
  const Argument* keyword(std::string_view) const override { return nullptr; }
  const ValueType* keyword_type(std::string_view) const override { return nullptr; }
  const AxisPattern* pattern() const override { return nullptr; }
  Span call_span() const override { return call_.span; }
  Span callee_span() const override { return call_.operands[0]->span; }
  std::optional<TensorType> tensor(size_t i) override {
    const ValueType& type = positional_[i].type;
    return type.is_tensor() ? std::optional(type.tensor) : std::nullopt;
  }
  std::optional<size_t> axis_argument(const TensorType& tensor, std::string_view keyword, Span) override {
    return keyword == "over" && over_ && *over_ < tensor.rank() ? over_ : std::nullopt;
  }
  std::optional<std::vector<Axis>> resolve_axes(const std::vector<SizeNode>&) override { return std::nullopt; }
  const std::vector<SizeNode>* shape() const override { return nullptr; }
  std::optional<SizeExpr> size_named(std::string_view) const override { return std::nullopt; }
  std::optional<std::string> written_axis(const Axis&, const TensorType&) const override { return std::nullopt; }
  std::optional<TensorType> broadcast(const TensorType& a, const TensorType& b, Span span, Span a_at, Span b_at) override {
    return checker_.broadcast(a, b, span, a_at, b_at, &scope_);
  }
  std::optional<PatternSolution> solve_pattern(const AxisPattern&, const std::vector<TensorType>&, const std::vector<Span>&) override {
    return std::nullopt;
  }
  bool expect_same_size(const Axis& expected, const Axis& actual, Span span, std::string_view what) override {
    return checker_.expect_same_size(expected, actual, span, what);
  }
  bool is_builtin_causal(const Expr&) const override { return false; }
  std::optional<TensorType> expected_result() const override { return std::nullopt; }
  const Expr* definition(size_t) const override { return nullptr; }
  std::optional<Declared> declared(size_t) const override { return std::nullopt; }
  std::optional<int64_t> tokenizer_size(const std::string&, std::string&) const override { return std::nullopt; }
  using CallContext::report;
  void report(Diagnostic diagnostic) override { checker_.report(std::move(diagnostic)); }

 private:
  Checker& checker_;
  Scope& scope_;
  const Expr& call_;
  std::vector<Positional> positional_;
  std::optional<size_t> over_;
};

// The value `builtin`'s rule gives `call` as its fix writes it (FixedMethodCall); unknown where the
// built-in has no rule.
ValueType fixed_call_value(Checker& checker, Scope& scope, const Builtin* builtin, const Expr& call,
                           std::vector<FixedMethodCall::Positional> positional, std::optional<size_t> over = std::nullopt) {
  if (!builtin || !builtin->rule) return ValueType::unknown();
  FixedMethodCall fixed(checker, scope, call, std::move(positional), over);
  return builtin->rule(fixed);
}

// ---------------------------------------------------------------------------------------------

ValueType Checker::eval(const Expr& expr, Scope& scope, const Expr* enclosing) {
  ValueType type;
  try {
    type = eval_uncached(expr, scope, enclosing);
  } catch (const std::overflow_error&) {
    error(DiagnosticCode::E0301, expr.span, "a size here is too large to compute", "overflows 64 bits");
    type = ValueType::unknown();
  }
  a_.semantics.types.set(&expr, type);
  return type;
}

ValueType Checker::eval_uncached(const Expr& expr, Scope& scope, const Expr* enclosing) {
  switch (expr.kind) {
    case Expr::Kind::name: return eval_name(expr, scope);
    case Expr::Kind::number: {
      ValueType v = ValueType::scalar(expr.is_integer ? ElementKind::int_ : ElementKind::real);
      if (expr.is_integer && expr.number < 9.0e15) v.known_size = SizeExpr::constant(static_cast<int64_t>(expr.number));
      if (!expr.is_integer && expr.number >= 0) v.tensor.element.kind = ElementKind::nonneg;
      v.fixed = true;
      return v;
    }
    case Expr::Kind::string: {
      ValueType v;
      v.kind = ValueType::Kind::string;
      return v;
    }
    case Expr::Kind::binary: return eval_binary(expr, scope);
    case Expr::Kind::unary: return eval_unary(expr, scope);
    case Expr::Kind::call: return eval_call(expr, scope);
    case Expr::Kind::attribute: return eval_attribute(expr, scope, enclosing);
    case Expr::Kind::subscript: return eval_subscript(expr, scope);
    case Expr::Kind::as: return eval_as(expr, scope);
    case Expr::Kind::lambda:
      error(DiagnosticCode::E0505, expr.span, "a lambda can only be given to `map` or `experts`", "not in a `map` or `experts`");
      return ValueType::unknown();
    case Expr::Kind::error: return ValueType::unknown();
  }
  return ValueType::unknown();
}

std::vector<std::string> Checker::value_names(const Scope& scope) const {
  std::vector<std::string> names = size_names(scope);
  for (std::string& name : global_names()) names.push_back(std::move(name));
  for (const Builtin& b : builtins()) names.emplace_back(b.name);
  names.emplace_back("inf");
  return names;
}

namespace {

// PyTorch's functions that ShapeScript writes otherwise: the help on an unknown name, a dotted
// `torch.…` one and a method call. `ours` alone (no `how`) is the same call under another name.
struct TorchName {
  std::string_view torch, ours, how;
  bool method_only = false;  // `x.T`: as a bare name, `T` is more likely a dim the file lacks
  // For a function of one tensor that is an expression here, that expression with `@` for the
  // tensor (`torch.rsqrt(x)`, `x.rsqrt()`: `(1 / sqrt(x))`); its value is `ours`'s, elementwise.
  std::string_view written = {};
};
constexpr std::string_view kMoveAxes = "axes move by name, in a pattern: `x |> rearrange(b n D -> b D n)`";
constexpr std::string_view kNewShape = "a new shape is a pattern over the axes' names: `x |> rearrange(b n (H Dh) -> b n H Dh)`";
constexpr std::string_view kProduct =
    "`linear(x, w)` multiplies by a weight `w: [out in]`, and `einsum(a, b: b n k, k m -> b n m)` writes any product";
constexpr TorchName kTorchNames[] = {
    {"cat", "concat", ""},
    {"transpose", "rearrange", kMoveAxes},
    {"permute", "rearrange", kMoveAxes},
    {"T", "rearrange", kMoveAxes, true},
    {"mT", "rearrange", kMoveAxes, true},
    {"reshape", "rearrange", kNewShape},
    {"view", "rearrange", kNewShape},
    {"flatten", "rearrange", kNewShape},
    {"unflatten", "rearrange", kNewShape},
    {"unsqueeze", "rearrange", "a new axis of size 1 is a `1` in a pattern: `x |> rearrange(b n -> b 1 n)`"},
    {"squeeze", "rearrange", "an axis of size 1 is dropped by a pattern: `x |> rearrange(b 1 n -> b n)`"},
    {"matmul", "linear", kProduct},
    {"mm", "linear", kProduct},
    {"bmm", "einsum", kProduct},
    {"rsqrt", "sqrt", "`rsqrt(x)` is `1 / sqrt(x)`", false, "(1 / sqrt(@))"},
    {"pow", "*", "a square is `x * x`, and `sqrt`, `exp` and `log` give the rest"},
    {"chunk", "split", "equal pieces are a group in a pattern: `split(x, b n (3 D) -> b n D)`"},
    {"tril", "causal", "a lower-triangular mask is `causal[n n]`, true where a position may attend"},
    {"triu", "causal", "the positions after each query are those `causal[n n]` leaves false: attention masks them with `attn_mask=causal[n n]`, "
                       "and `masked_fill(s, !causal[n n], -inf)` fills them"},
    {"arange", "map", "the positions `0..n` are `n |> map(i => i)`, an `[n]` of indices; `as [n] Index[P]` bounds them for an `embedding` of P rows"},
    {"norm", "sqrt", "a vector's length is `sqrt(sum(x * x, over=D))`"},
    {"amax", "max", ""},
    {"amin", "min", ""},
    {"zeros_like", "zeros", "a tensor of zeros is written with its shape, as in `zeros[b n D]`"},
    {"ones_like", "ones", "a tensor of ones is written with its shape, as in `ones[b n D]`"},
    {"full_like", "full", "a filled tensor is written with its shape, as in `full[b n D](0.5)`"},
};

const TorchName* torch_name(std::string_view name) {
  for (const TorchName& t : kTorchNames)
    if (t.torch == name) return &t;
  return nullptr;
}

// PyTorch's names for `a @ b`.
bool is_matmul(std::string_view name) { return name == "matmul" || name == "mm" || name == "bmm"; }

// A TorchName's `written` form with `tensor` in place of `@`.
std::string written_torch(const TorchName& torch, const std::string& tensor) {
  std::string out(torch.written);
  size_t at = out.find('@');
  return out.replace(at, 1, tensor);
}

// Where a call is written, its piped operand included: `x |> f(a)`'s span is `f(a)` alone, so a fix
// that rewrites the call replaces this and writes the operand in, `g(x, ..)`.
Span written_call(const Expr& call) {
  return call.piped && !call.arguments.empty() ? Span{call.arguments[0].span.begin, call.span.end} : call.span;
}

// Whether `enclosing` is a call (or subscript) of `base`: `x.size(1)`, `x.shape[1]` around `x.size`.
bool encloses(const Expr* enclosing, Expr::Kind kind, const Expr& base) {
  return enclosing && enclosing->kind == kind && !enclosing->operands.empty() && enclosing->operands[0].get() == &base;
}

// A position written as PyTorch does (`1`, `-1` from the end) among `rank` axes.
std::optional<size_t> literal_position(const Expr* e, size_t rank) {
  bool negative = e && e->kind == Expr::Kind::unary && e->text == "-" && !e->operands.empty();
  const Expr* number = negative ? e->operands[0].get() : e;
  if (!number || number->kind != Expr::Kind::number || !number->is_integer) return std::nullopt;
  auto at = static_cast<int64_t>(number->number) * (negative ? -1 : 1) + (negative ? static_cast<int64_t>(rank) : 0);
  return at >= 0 && at < static_cast<int64_t>(rank) ? std::optional<size_t>(static_cast<size_t>(at)) : std::nullopt;
}

// A size written as a number: a positive integer literal, as its value.
std::optional<int64_t> positive_integer(const Expr& e) {
  if (e.kind != Expr::Kind::number || !e.is_integer || e.number < 1 || e.number >= 9.0e15) return std::nullopt;
  return static_cast<int64_t>(e.number);
}

// Whether the built-in takes the keyword `name=`.
bool takes_keyword(const Builtin& builtin, std::string_view name) {
  return std::find(builtin.keywords.begin(), builtin.keywords.end(), name) != builtin.keywords.end();
}

// `zeros(b, n, D)`, PyTorch's sizes as arguments: the shape ShapeScript writes in brackets,
// `[b n D]`, where each is a name or a number.
std::optional<std::string> shape_of_arguments(const Expr& call) {
  std::string shape;
  for (const Argument& argument : call.arguments) {
    const Expr* v = argument.value.get();
    if (argument.keyword || !v) return std::nullopt;
    if (v->kind == Expr::Kind::name) shape += (shape.empty() ? "" : " ") + v->text;
    else if (auto n = positive_integer(*v))
      shape += (shape.empty() ? "" : " ") + std::to_string(*n);
    else return std::nullopt;
  }
  if (shape.empty()) return std::nullopt;
  return "[" + shape + "]";
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// `16*gh` in place of `x.shape[2]` in `x.shape[2] * 2` keeps its own precedence: a name or a number
// stands as it is, anything else in parentheses.
std::string as_operand(const std::string& value) {
  bool plain = is_identifier(value) || (!value.empty() && std::ranges::all_of(value, ::isdigit));
  return plain ? value : "(" + value + ")";
}

// PyTorch's `zeros_like(x)`, `ones_like(x)` and `full_like(x, v)` of a `Real` x: the built-in
// written with x's shape, `zeros[b n D]`, `full[b n D](v)`, where every axis of x is a name or a number.
std::optional<std::string> like_call(std::string_view torch, const Expr& call, const ValueType& x, const std::string& value) {
  std::string_view ours = torch == "zeros_like" ? "zeros" : torch == "ones_like" ? "ones" : torch == "full_like" ? "full" : "";
  size_t count = ours == "full" ? 2 : 1;
  if (ours.empty() || call.arguments.size() != count || !x.is_tensor() || x.tensor.element.kind != ElementKind::real) return std::nullopt;
  for (const Argument& a : call.arguments)
    if (a.keyword || !a.value) return std::nullopt;
  std::string shape;
  for (const Axis& a : x.tensor.axes) {
    bool number = !a.label.empty() && std::all_of(a.label.begin(), a.label.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (!is_identifier(a.label) && !number) return std::nullopt;
    shape += (shape.empty() ? "" : " ") + a.label;
  }
  std::string written = std::string(ours) + "[" + shape + "]";
  if (ours == "full") written += "(" + value + ")";
  return written;
}

// The same, written in a subscript's brackets (`x.shape[1]`), where a size has no sign.
std::optional<size_t> size_position(const SizeNode& node, size_t rank) {
  if (node.kind != SizeNode::Kind::number || node.number < 0 || static_cast<uint64_t>(node.number) >= rank) return std::nullopt;
  return static_cast<size_t>(node.number);
}

}  // namespace

ValueType Checker::eval_name(const Expr& expr, Scope& scope) {
  const std::string& name = expr.text;
  if (auto local = scope.locals.find(name); local != scope.locals.end()) {
    definition(expr.span, local->second.at);
    // A use of an export fn's parameter shows what its declaration shows: the Dims of each axis.
    const Item* fn = scope.function;
    for (size_t i = 0; fn && fn->exported && i < fn->parameters.size(); ++i)
      if (fn->parameters[i].name_span == local->second.at) {
        hover(expr.span, parameter_hover(*fn, i, signature(fn)));
        return local->second.type;
      }
    if (!local->second.type.is_unknown()) hover(expr.span, "```shapescript\n" + name + ": " + local->second.type.to_string() + "\n```");
    return local->second.type;
  }
  auto size_value = [&](const SizeExpr& size, Span at, std::string what) {
    ValueType v = ValueType::scalar(ElementKind::int_);
    v.known_size = size;
    definition(expr.span, at);
    hover(expr.span, "```shapescript\n" + name + " = " + size.to_user_string() + "\n```\n" + what);
    return v;
  };
  if (const KnownDim* dim = known_dim(name)) {
    ValueType v = size_value(dim->size, dim->span, "a dim");
    v.fixed = true;
    return v;
  }
  if (auto axis = scope.axes.find(name); axis != scope.axes.end()) return size_value(axis->second.size, axis->second.at, "the size of an axis");
  if (name == "inf") return ValueType::scalar(ElementKind::real);
  if (auto global = globals_.find(name); global != globals_.end()) {
    const Item& item = *global->second;
    definition(expr.span, item.name_span);
    ValueType v;
    switch (item.kind) {
      case Item::Kind::python_import:
        v.kind = ValueType::Kind::python_module;
        v.name = name;
        return v;
      case Item::Kind::function:
      case Item::Kind::extern_fn:
        v.kind = ValueType::Kind::function;
        v.name = name;
        hover(expr.span, "```shapescript\n" + signature_text(item) + "\n```" + doc_suffix(item.doc));
        return v;
      case Item::Kind::model:
        error(DiagnosticCode::E0505, expr.span, "`" + name + "` is a model type, not a value", "a type");
        return ValueType::unknown();
      case Item::Kind::dim: return ValueType::unknown();  // a broken dim, reported already
    }
  }
  if (const Builtin* builtin = find_builtin(name)) {
    ValueType v;
    v.kind = ValueType::Kind::function;
    v.name = std::string(builtin->name);
    hover(expr.span, "```shapescript\n" + std::string(builtin->signature) + "\n```\n" + std::string(builtin->summary));
    return v;
  }
  if (const TorchName* torch = torch_name(name); torch && !torch->method_only && !lost_in_syntax_error(name)) {
    auto d = report(DiagnosticCode::E0201, expr.span, "no value named `" + name + "`");
    d.label("not defined");
    if (torch->how.empty())
      d.help("PyTorch's `" + name + "` is `" + std::string(torch->ours) + "` here").fix("write `" + std::string(torch->ours) + "`", expr.span, std::string(torch->ours));
    else
      d.help("PyTorch's `" + name + "` is `" + std::string(torch->ours) + "` here: " + std::string(torch->how));
    return ValueType::unknown();
  }
  if (name == "None" && !lost_in_syntax_error(name)) {
    report(DiagnosticCode::E0201, expr.span, "no value named `None`")
        .label("Python's `None`")
        .help("there is no `None`: every value has its type and every parameter is passed; where PyTorch passes `None` for "
              "\"no mask\", write the function without that parameter");
    return ValueType::unknown();
  }
  unknown_name(name, expr.span, [&] { return value_names(scope); }, "value");
  return ValueType::unknown();
}

std::optional<TensorType> Checker::require_tensor(const ValueType& value, const Expr* expr, Span span) {
  if (value.is_tensor()) return value.tensor;
  if (value.is_unknown()) return std::nullopt;
  if (value.kind == ValueType::Kind::python) {
    if (expr) python_without_as(*expr, std::nullopt);
    return std::nullopt;
  }
  error(DiagnosticCode::E0505, span, "expected a tensor, but this is " + value.to_string(), "not a tensor");
  return std::nullopt;
}

namespace {

// Where each axis of `small` sits among `big`'s, in order and size for size, when exactly one
// such placement exists: the axes `rearrange` must insert around them for the two to broadcast.
std::optional<std::vector<size_t>> only_placement(const TensorType& small, const TensorType& big) {
  std::vector<std::vector<size_t>> found;
  std::vector<size_t> at;
  std::function<void(size_t, size_t)> place = [&](size_t i, size_t from) {
    if (found.size() > 1) return;
    if (i == small.rank()) {
      found.push_back(at);
      return;
    }
    for (size_t j = from; j + (small.rank() - i) <= big.rank(); ++j)
      if (small.axes[i].size == big.axes[j].size) {
        at.push_back(j);
        place(i + 1, j + 1);
        at.pop_back();
      }
  };
  place(0, 0);
  if (found.size() != 1) return std::nullopt;
  return found[0];
}


// One side of a pattern, its axes separated by spaces.
std::string joined_axes(const std::vector<std::string>& side) {
  std::string out;
  for (const std::string& w : side) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Each axis of x as a pattern writes it, once: a name, `8`, `16gh`, a group `(gh gw)`, `(n+1)`; an
// axis of size 1 as `1`. None where two are written alike or a size can't be written here.
std::optional<std::vector<std::string>> pattern_axes(const TensorType& x, const std::function<bool(const SizeExpr&)>& writable) {
  std::set<std::string> labels;
  std::vector<std::string> written;
  for (const Axis& a : x.axes) {
    if (a.size.constant_value() == 1) {
      written.push_back("1");
      continue;
    }
    std::string as_pattern = a.label;
    if (!is_identifier(a.label)) {
      if (a.label.empty() || a.label.find('?') != std::string::npos || !writable(a.size)) return std::nullopt;
      // `16gh` and `8` are one token, a group `(gh gw)` is written as it is; `n+1` is a size in a group of one.
      bool token = std::isalnum(static_cast<unsigned char>(a.label[0])) && std::ranges::all_of(a.label, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
      if (!token && a.label.front() != '(') as_pattern = "(" + a.label + ")";
    }
    if (!labels.insert(as_pattern).second) return std::nullopt;
    written.push_back(as_pattern);
  }
  return written;
}

constexpr size_t kNewAxis = SIZE_MAX;

// Where each axis of PyTorch's `transpose(x, 1, 2)`, `permute(x, 0, 2, 1)`, `unsqueeze(x, 1)` or
// `squeeze(x, 1)` comes from, given the positions after x (each a number): an axis of x, or
// kNewAxis for a new axis of size 1. None where the positions don't say.
std::optional<std::vector<size_t>> moved_axes(std::string_view torch, const TensorType& x, const std::vector<const Expr*>& positions) {
  size_t rank = x.rank();
  std::vector<size_t> to(rank);
  for (size_t i = 0; i < rank; ++i) to[i] = i;
  auto size_one = [&](size_t i) { return x.axes[i].size.constant_value() == 1; };
  if (torch == "transpose" && positions.size() == 2) {
    auto a = literal_position(positions[0], rank), b = literal_position(positions[1], rank);
    if (!a || !b) return std::nullopt;
    std::swap(to[*a], to[*b]);
  } else if (torch == "permute" && positions.size() == rank) {
    std::set<size_t> seen;
    for (size_t i = 0; i < rank; ++i) {
      auto at = literal_position(positions[i], rank);
      if (!at || !seen.insert(*at).second) return std::nullopt;
      to[i] = *at;
    }
  } else if (torch == "unsqueeze" && positions.size() == 1) {
    auto at = literal_position(positions[0], rank + 1);  // a place among rank + 1
    if (!at) return std::nullopt;
    to.insert(to.begin() + static_cast<std::ptrdiff_t>(*at), kNewAxis);
  } else if (torch == "squeeze" && positions.size() <= 1) {
    std::optional<size_t> at = positions.empty() ? std::nullopt : literal_position(positions[0], rank);
    if (!positions.empty() && (!at || !size_one(*at))) return std::nullopt;
    to.clear();
    for (size_t i = 0; i < rank; ++i)
      if (!size_one(i) || (at && i != *at)) to.push_back(i);
    if (to.size() == rank) return std::nullopt;  // nothing of size 1
  } else {
    return std::nullopt;
  }
  return to;
}

// The value of such a call: x's axes, moved (`to`, from moved_axes).
TensorType moved_axes_type(const TensorType& x, const std::vector<size_t>& to) {
  TensorType moved;
  moved.element = x.element;
  for (size_t from : to) {
    if (from != kNewAxis) {
      moved.axes.push_back(x.axes[from]);
      continue;
    }
    Axis one;
    one.size = SizeExpr::constant(1);
    one.label = "1";
    moved.axes.push_back(std::move(one));
  }
  return moved;
}

// The pattern such a call is, `b n D -> b D n`: where each axis of x is written once, as it is in
// its type (a name, `8`, `16gh`, `(gh gw)`, `(n+1)`; an axis of size 1 as `1`; a size this
// function can't write, none).
std::optional<std::string> moved_axes_pattern(const TensorType& x, const std::vector<size_t>& to, const std::function<bool(const SizeExpr&)>& writable) {
  std::optional<std::vector<std::string>> written = pattern_axes(x, writable);
  if (!written) return std::nullopt;
  std::vector<std::string> out;
  for (size_t from : to) out.push_back(from == kNewAxis ? "1" : (*written)[from]);
  return joined_axes(*written) + " -> " + joined_axes(out);
}

// PyTorch's `keepdim=True`: a reduction's axes with a new one (a 1) at each of the `removed`
// positions of the tensor of `rank` axes it reduced, which moved_axes_pattern writes as
// `b n -> b n 1`; for the method form and the function form alike, and for several axes.
std::vector<size_t> kept_axis_order(size_t rank, const std::vector<size_t>& removed) {
  std::vector<size_t> to;
  for (size_t i = 0, next = 0; i < rank; ++i)
    to.push_back(std::ranges::find(removed, i) != removed.end() ? kNewAxis : next++);
  return to;
}

// The pattern from x less its `removed` axes to the same with a 1 where each was: `b n -> b n 1`.
std::optional<std::string> kept_axes_pattern(const TensorType& x, const std::vector<size_t>& removed, const std::function<bool(const SizeExpr&)>& writable) {
  TensorType reduced = x;
  for (size_t i = x.rank(); i-- > 0;)
    if (std::ranges::find(removed, i) != removed.end()) reduced.axes.erase(reduced.axes.begin() + static_cast<std::ptrdiff_t>(i));
  return moved_axes_pattern(reduced, kept_axis_order(x.rank(), removed), writable);
}

// PyTorch's `keepdim=True`, as an argument.
bool is_keepdim_true(const Argument& a) {
  return a.keyword && *a.keyword == "keepdim" && a.value && a.value->kind == Expr::Kind::name && a.value->text == "True";
}

}  // namespace

// The pattern PyTorch's `x.view(-1, V)`, `x.reshape(b, n, H, Dh)` or `x.flatten(2)` is, `b n V ->
// (b n) V`: each new size is a run of x's axes merged, or one of x's axes split into named sizes,
// in order. A new size is a number, `-1` (what is left, merged only), or a name: one of x's axes,
// a dim or an axis of the function; x's axes must each have a name of their own.
std::optional<std::string> Checker::reshaped_pattern(std::string_view torch, const TensorType& x, const std::vector<const Expr*>& arguments,
                                                     const Scope& scope, TensorType* result) const {
  size_t rank = x.rank();
  std::set<std::string> labels;
  for (const Axis& a : x.axes)
    if (!is_identifier(a.label) || !labels.insert(a.label).second) return std::nullopt;
  struct NewSize {
    std::optional<SizeExpr> size;  // none: `-1`
    std::string written;
  };
  std::vector<NewSize> sizes;
  if (torch == "flatten") {
    // `flatten(start=0, end=-1)` merges the axes from start to end.
    if (arguments.size() > 2) return std::nullopt;
    auto start = arguments.empty() ? std::optional<size_t>(0) : literal_position(arguments[0], rank);
    auto end = arguments.size() < 2 ? std::optional<size_t>(rank - 1) : literal_position(arguments[1], rank);
    if (!start || !end || *start > *end) return std::nullopt;
    for (size_t i = 0; i < rank; ++i)
      if (i <= *start || i > *end) sizes.push_back({i == *start ? std::nullopt : std::optional(x.axes[i].size), ""});
  } else if (torch == "view" || torch == "reshape") {
    for (const Expr* e : arguments) {
      if (!e) return std::nullopt;
      if (e->kind == Expr::Kind::unary && e->text == "-" && !e->operands.empty() && e->operands[0]->kind == Expr::Kind::number &&
          e->operands[0]->number == 1) {
        sizes.push_back({std::nullopt, ""});
      } else if (auto n = positive_integer(*e)) {
        sizes.push_back({SizeExpr::constant(*n), std::to_string(*n)});
      } else if (e->kind == Expr::Kind::name) {
        auto axis = std::find_if(x.axes.begin(), x.axes.end(), [&](const Axis& a) { return a.label == e->text; });
        std::optional<SizeExpr> size;
        if (axis != x.axes.end()) size = axis->size;
        else if (const KnownDim* dim = known_dim(e->text)) size = dim->size;
        else if (auto bound = scope.axes.find(e->text); bound != scope.axes.end()) size = bound->second.size;
        if (!size) return std::nullopt;
        sizes.push_back({std::move(*size), e->text});
      } else if (const ValueType* type = a_.semantics.types.find(e); type && type->known_size) {
        // A size PyTorch asks for (`logits.size(-1)`), written as its fix writes it (`V`).
        std::string written = written_as_fixed(*e);
        if (!is_identifier(written) && !std::all_of(written.begin(), written.end(), [](char c) { return c >= '0' && c <= '9'; }))
          return std::nullopt;
        sizes.push_back({*type->known_size, std::move(written)});
      } else {
        return std::nullopt;
      }
    }
  } else {
    return std::nullopt;
  }
  // What `-1` stands for: x's size over the product of the others.
  SizeExpr total = SizeExpr::constant(1), given = SizeExpr::constant(1);
  for (const Axis& a : x.axes) total *= a.size;
  size_t unknowns = 0;
  for (const NewSize& n : sizes) n.size ? void(given *= *n.size) : void(++unknowns);
  if (unknowns > 1 || sizes.empty()) return std::nullopt;
  for (NewSize& n : sizes)
    if (!n.size) {
      auto rest = total.divide_exact(given);
      if (!rest) return std::nullopt;
      n.size = *rest;
    }
  std::string from, to;
  auto add = [](std::string& side, const std::string& piece) { side += (side.empty() ? "" : " ") + piece; };
  TensorType reshaped;  // the value, as the pattern gives it
  reshaped.element = x.element;
  auto new_axis = [&](SizeExpr size, std::string label, std::string name) {
    Axis axis;
    axis.size = std::move(size);
    axis.label = std::move(label);
    axis.name = std::move(name);
    reshaped.axes.push_back(std::move(axis));
  };
  size_t i = 0, j = 0;
  while (i < rank && j < sizes.size()) {
    if (x.axes[i].size == *sizes[j].size) {
      add(from, x.axes[i].label);
      add(to, x.axes[i].label);
      reshaped.axes.push_back(x.axes[i]);
      ++i, ++j;
      continue;
    }
    // Several of x's axes merged into this new size,
    SizeExpr product = x.axes[i].size;
    size_t k = i + 1;
    while (k < rank && product != *sizes[j].size) product *= x.axes[k++].size;
    if (product == *sizes[j].size) {
      std::string group;
      for (size_t m = i; m < k; ++m) add(group, x.axes[m].label);
      for (size_t m = i; m < k; ++m) add(from, x.axes[m].label);
      add(to, "(" + group + ")");
      new_axis(*sizes[j].size, "(" + group + ")", "");
      i = k, ++j;
      continue;
    }
    // or one of x's axes split into named new sizes.
    product = *sizes[j].size;
    k = j + 1;
    while (k < sizes.size() && product != x.axes[i].size) product *= *sizes[k++].size;
    if (product != x.axes[i].size) return std::nullopt;
    std::string group;
    for (size_t m = j; m < k; ++m) {
      if (!is_identifier(sizes[m].written) || labels.count(sizes[m].written)) return std::nullopt;
      add(group, sizes[m].written);
      add(to, sizes[m].written);
      new_axis(*sizes[m].size, sizes[m].written, sizes[m].written);
    }
    add(from, "(" + group + ")");
    ++i, j = k;
  }
  if (i != rank || j != sizes.size() || from == to) return std::nullopt;
  if (result) *result = std::move(reshaped);
  return from + " -> " + to;
}

// The pattern PyTorch's `x.chunk(3, dim=-1)` or `x.split(D, dim=-1)` (pieces of size D) is for
// ShapeScript's `split`, `b n (3 D) -> b n D`: where the piece's size has a name here (a dim or an
// axis of the function), and every other axis of x a name of its own.
std::optional<std::string> Checker::chunked_pattern(std::string_view torch, const TensorType& x, const Expr& call, const Scope& scope,
                                                    ValueType* result) const {
  if (torch != "chunk" && torch != "split") return std::nullopt;
  const Expr* count = nullptr;
  const Expr* position = nullptr;
  for (const Argument& a : call.arguments) {
    if (!a.value) return std::nullopt;
    if (a.keyword ? (*a.keyword == "dim") : count != nullptr) {
      if (position) return std::nullopt;
      position = a.value.get();
    } else if (!a.keyword && !count) {
      count = a.value.get();
    } else {
      return std::nullopt;
    }
  }
  auto at = position ? literal_position(position, x.rank()) : std::optional<size_t>(0);
  if (!count || !at) return std::nullopt;
  auto size_of = [&](const Expr& e) -> std::optional<SizeExpr> {
    if (auto n = positive_integer(e)) return SizeExpr::constant(*n);
    if (e.kind != Expr::Kind::name) return std::nullopt;
    if (const KnownDim* dim = known_dim(e.text)) return dim->size;
    if (auto bound = scope.axes.find(e.text); bound != scope.axes.end()) return bound->second.size;
    return std::nullopt;
  };
  auto given = size_of(*count);
  if (!given || given->is_zero()) return std::nullopt;
  const SizeExpr& whole = x.axes[*at].size;
  // `chunk(k)` gives k pieces; `split(S)` pieces of size S.
  std::optional<SizeExpr> pieces = torch == "chunk" ? given : whole.divide_exact(*given);
  std::optional<SizeExpr> piece = torch == "chunk" ? whole.divide_exact(*given) : given;
  if (!pieces || !piece || !pieces->constant_value() || *pieces->constant_value() < 2 || piece->is_zero()) return std::nullopt;
  // The piece by the name the axis is written with (`3*D`: `D`), else by an axis of the function of its size.
  std::string piece_name;
  const std::string& written = x.axes[*at].label;
  std::string times = std::to_string(*pieces->constant_value()) + "*";
  if (std::string name = written.substr(std::min(written.size(), times.size())); written.starts_with(times) && is_identifier(name)) {
    const KnownDim* dim = known_dim(name);
    auto bound = scope.axes.find(name);
    if ((dim && dim->size == *piece) || (bound != scope.axes.end() && bound->second.size == *piece)) piece_name = name;
  }
  for (const auto& [name, bound] : scope.axes)
    if (piece_name.empty() && bound.size == *piece) piece_name = name;
  // A number would not do: in `(2 4) -> 4`, which factor is cut is the names' to say.
  if (piece_name.empty()) return std::nullopt;
  std::set<std::string> labels;
  std::string from, to;
  for (size_t i = 0; i < x.rank(); ++i) {
    std::string label = x.axes[i].label;
    if (i == *at) {
      label = "(" + std::to_string(*pieces->constant_value()) + " " + piece_name + ")";
    } else if (!is_identifier(label) || label == piece_name || !labels.insert(label).second) {
      return std::nullopt;
    }
    from += (i ? " " : "") + label;
    to += (i ? " " : "") + (i == *at ? piece_name : label);
  }
  if (result) {  // the pieces, as `split` gives them: a tuple of x with the axis cut to the piece
    TensorType cut = x;
    cut.axes[*at].size = *piece;
    cut.axes[*at].label = cut.axes[*at].name = piece_name;
    cut.axes[*at].origin = nullptr;
    result->kind = ValueType::Kind::tuple;
    result->elements.assign(static_cast<size_t>(*pieces->constant_value()), ValueType::of(cut));
  }
  return from + " -> " + to;
}

// When a pattern names every axis of `tensor` but one, plus dims whose product is that axis's size
// (`b H n Dh` against [b n D] with D = H * Dh): that axis, and the dims, as the pattern writes them.
std::optional<std::pair<size_t, std::string>> Checker::unsplit_axis(const std::vector<SizeNode>& side, const TensorType& tensor) const {
  std::vector<bool> matched(tensor.rank(), false);
  std::string extra;
  int64_t product = 1;
  for (const SizeNode& node : side) {
    if (node.kind != SizeNode::Kind::name) return std::nullopt;
    auto axis = std::find_if(tensor.axes.begin(), tensor.axes.end(), [&](const Axis& a) { return a.label == node.name; });
    if (axis != tensor.axes.end() && !matched[axis - tensor.axes.begin()]) {
      matched[axis - tensor.axes.begin()] = true;
      continue;
    }
    const KnownDim* dim = known_dim(node.name);
    if (!dim) return std::nullopt;
    product *= dim->value;
    extra += (extra.empty() ? "" : " ") + node.name;
  }
  if (std::count(matched.begin(), matched.end(), false) != 1 || extra.find(' ') == std::string::npos) return std::nullopt;
  size_t at = std::find(matched.begin(), matched.end(), false) - matched.begin();
  if (tensor.axes[at].size.constant_value() != product) return std::nullopt;
  return std::pair{at, extra};
}

// `einsum("bnd,bmd->bnm", q, k)` and einops' `rearrange(x, "b n (h d) -> b h n d", h=H)`: the call
// with the pattern written as ShapeScript's, `einsum(q, k: b n d, b m d -> b n m)` and
// `rearrange(x, b n (H d) -> b H n d)` (a keyword's size in place of its name).
std::optional<std::string> Checker::unquoted_pattern_call(const std::string& name, const Expr& call) const {
  const Expr* quoted = nullptr;
  std::vector<std::string> operands;
  std::map<std::string, std::string> sizes;  // einops' `h=H`
  for (const Argument& argument : call.arguments) {
    const Expr* v = argument.value.get();
    if (!v) return std::nullopt;
    if (argument.keyword) {
      if (v->kind != Expr::Kind::name && !(v->kind == Expr::Kind::number && v->is_integer)) return std::nullopt;
      sizes[*argument.keyword] = text(v->span);
    } else if (v->kind == Expr::Kind::string && !quoted) {
      quoted = v;
    } else {
      operands.push_back(text(argument.span));
    }
  }
  if (!quoted || operands.empty()) return std::nullopt;
  const std::string& written = quoted->text;
  std::string pattern;
  if (name == "einsum") {
    // torch's equation: one letter an axis, no spaces needed; only the explicit form, `->` and an output.
    size_t arrow = written.find("->");
    if (arrow == std::string::npos || !sizes.empty()) return std::nullopt;
    size_t inputs = 1;
    for (size_t i = 0; i < written.size(); ++i) {
      char c = written[i];
      if (i == arrow || i == arrow + 1 || c == ' ') {
        if (i == arrow) pattern += " -> ";
        continue;
      }
      if (c == ',') {
        if (i > arrow) return std::nullopt;
        pattern += ", ";
        ++inputs;
      } else if (std::isalpha(static_cast<unsigned char>(c))) {
        if (!pattern.empty() && std::isalpha(static_cast<unsigned char>(pattern.back()))) pattern += ' ';
        pattern += c;
      } else {
        return std::nullopt;  // `...`, a digit: no sure rewrite
      }
    }
    if (inputs != operands.size()) return std::nullopt;
    std::string joined;
    for (const std::string& o : operands) joined += (joined.empty() ? "" : ", ") + o;
    return name + "(" + joined + ": " + pattern + ")";
  }
  // einops: the words as written, each name given a size by a keyword replaced by that size.
  if (operands.size() != 1 || written.find("->") == std::string::npos) return std::nullopt;
  for (size_t i = 0; i < written.size();) {
    char c = written[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = i;
      while (end < written.size() && (std::isalnum(static_cast<unsigned char>(written[end])) || written[end] == '_')) ++end;
      std::string word = written.substr(i, end - i);
      auto size = sizes.find(word);
      pattern += size != sizes.end() ? size->second : word;
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == ' ' || c == '(' || c == ')' || c == '-' || c == '>') {
      pattern += c;
      ++i;
    } else {
      return std::nullopt;  // `...` and the like
    }
  }
  return name + "(" + operands[0] + ", " + pattern + ")";
}

// A parameter declared `[b H m Dh]` given `[b n D]` with D = H * Dh: the tensor's axis that is the
// product of some of the declared dims, the other declared axes matching the tensor's others in
// order (a dim by its size, a generic axis any). The pattern, `b n (H Dh) -> b H n Dh`, names the
// caller's axes, so each of them must have a name of its own.
std::optional<Checker::Split> Checker::split_into(const std::vector<SizeNode>& declared, const TensorType& tensor) const {
  size_t rank = tensor.rank(), extra = declared.size() >= rank ? declared.size() - rank : 0;
  if (extra == 0 || declared.size() > 8) return std::nullopt;
  for (const Axis& a : tensor.axes)
    if (!is_identifier(a.label) && !a.size.is_constant()) return std::nullopt;
  std::optional<Split> found;
  // Which declared axes make up the split one: each subset of extra + 1 of them, by a bit mask.
  for (uint32_t mask = 0; mask < (1u << declared.size()); ++mask) {
    if (static_cast<size_t>(std::popcount(mask)) != extra + 1) continue;
    int64_t product = 1;
    std::string dims;
    bool all_dims = true;
    for (size_t j = 0; j < declared.size() && all_dims; ++j)
      if (mask & (1u << j)) {
        const KnownDim* dim = declared[j].kind == SizeNode::Kind::name ? known_dim(declared[j].name) : nullptr;
        all_dims = dim != nullptr;
        if (dim) product *= dim->value, dims += (dims.empty() ? "" : " ") + declared[j].name;
      }
    if (!all_dims) continue;
    for (size_t at = 0; at < rank; ++at) {
      if (tensor.axes[at].size.constant_value() != product) continue;
      // The rest pair up in order: declared j (outside the mask) with the tensor's axes but `at`.
      std::string from, to;
      bool fits = true;
      for (size_t a = 0, j = 0; j < declared.size() && fits; ++j) {
        if (mask & (1u << j)) {
          to += (to.empty() ? "" : " ") + declared[j].name;
          continue;
        }
        if (a == at) ++a;
        const SizeNode& node = declared[j];
        const KnownDim* dim = node.kind == SizeNode::Kind::name ? known_dim(node.name) : nullptr;
        fits = node.kind == SizeNode::Kind::name && a < rank && (!dim || tensor.axes[a].size.constant_value() == dim->value) && is_identifier(tensor.axes[a].label);
        if (fits) to += (to.empty() ? "" : " ") + tensor.axes[a++].label;
      }
      if (!fits) continue;
      for (size_t a = 0; a < rank; ++a) from += (a ? " " : "") + (a == at ? "(" + dims + ")" : tensor.axes[a].label);
      if (found) return std::nullopt;  // two ways to split: no sure fix
      found = Split{at, dims, from + " -> " + to};
    }
  }
  return found;
}

// `b n (H Dh) -> b H n Dh`-like: the tensor's axes with axis `at` as the group `dims`, into the
// tensor's other axes with the dims after the first (the heads beside the batch, as attention wants).
std::string Checker::tensors_pattern(const TensorType& tensor, size_t at, const std::string& dims) {
  std::string from, to;
  std::string first = dims.substr(0, dims.find(' ')), rest = dims.substr(dims.find(' ') + 1);
  for (size_t a = 0; a < tensor.rank(); ++a) {
    from += std::string(from.empty() ? "" : " ") + (a == at ? "(" + dims + ")" : tensor.axes[a].label);
    if (a == at) continue;
    to += std::string(to.empty() ? "" : " ") + tensor.axes[a].label;
    if (a == 0) to += " " + first;
  }
  return from + " -> " + to + " " + rest;
}

std::optional<TensorType> Checker::broadcast(const TensorType& a, const TensorType& b, Span span, Span a_at, Span b_at, const Scope* scope) {
  TensorType out;
  size_t rank = std::max(a.rank(), b.rank());
  out.axes.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Axis* x = i < a.rank() ? &a.axes[a.rank() - 1 - i] : nullptr;
    const Axis* y = i < b.rank() ? &b.axes[b.rank() - 1 - i] : nullptr;
    Axis& target = out.axes[rank - 1 - i];
    if (!x) target = *y;
    else if (!y) target = *x;
    else if (x->size == y->size) target = x->name.empty() ? *y : *x;
    else if (x->size.constant_value() == 1) target = *y;
    else if (y->size.constant_value() == 1) target = *x;
    else {
      auto d = report(DiagnosticCode::E0304, span, a.to_string() + " and " + b.to_string() + " don't broadcast: " + describe_axis(*x) + " against " + describe_axis(*y));
      d.label(describe_axis(*x) + " against " + describe_axis(*y));
      if (!x->bound_at.empty()) d.secondary(x->bound_at, bound_label(*x));
      if (!y->bound_at.empty() && !(y->bound_at == x->bound_at)) d.secondary(y->bound_at, bound_label(*y));
      d.note("axes are matched from the last; each pair must be equal, or one of them 1");
      // Where an operand that is a local got its shape: the cause may be there, not here.
      for (auto [at, type] : {std::pair{a_at, &a}, std::pair{b_at, &b}}) {
        auto local = scope && !at.empty() ? scope->locals.find(text(at)) : std::map<std::string, Local, std::less<>>::const_iterator{};
        if (scope && !at.empty() && local != scope->locals.end() && local->second.value)
          d.secondary(local->second.value->span, "`" + local->first + "` is " + type->to_string() + ", made here");
      }
      // Two widths at the last axis (a residual around a layer that changed it): project one back.
      std::string second = b_at.empty() ? "" : text(b_at);
      if (i == 0 && x->size.is_constant() && y->size.is_constant() && a.rank() == b.rank() && is_identifier(second))
        d.help("to combine them, bring `" + second + "` back to " + describe_axis(*x) + " first, e.g. `linear(" + second + ", W)` with a weight `W: [" + x->label + " " +
               y->label + "]`");
      // The fewer axes may belong elsewhere among the more (a `[b m]` padding mask against
      // `[b H n m]` scores): say which `rearrange` lines them up, and offer it.
      const TensorType& small = a.rank() < b.rank() ? a : b;
      const TensorType& big = a.rank() < b.rank() ? b : a;
      Span small_at = a.rank() < b.rank() ? a_at : b_at;
      auto placed = a.rank() == b.rank() ? std::nullopt : only_placement(small, big);
      bool named = std::all_of(small.axes.begin(), small.axes.end(), [](const Axis& axis) { return is_identifier(axis.label); });
      if (placed && named) {
        std::string from, to;
        for (size_t i = 0, j = 0; j < big.rank(); ++j) {
          bool here = i < placed->size() && (*placed)[i] == j;
          to += std::string(to.empty() ? "" : " ") + (here ? small.axes[i++].label : "1");
        }
        for (const Axis& axis : small.axes) from += std::string(from.empty() ? "" : " ") + axis.label;
        std::string operand = small_at.empty() ? "x" : text(small_at);
        std::string lined_up = "rearrange(" + operand + ", " + from + " -> " + to + ")";
        d.help("to match `" + from + "` with the same axes of " + big.to_string() + ", insert axes of size 1: `" + lined_up + "`");
        if (!small_at.empty()) d.fix("line it up with `rearrange`", small_at, lined_up);
      } else if (!x->size.is_constant() && !y->size.is_constant()) {
        d.help("if " + describe_axis(*x) + " and " + describe_axis(*y) + " are always the same size, give them one name");
      }
      d.emit();
      return std::nullopt;
    }
  }
  return out;
}

bool Checker::expect_same_size(const Axis& expected, const Axis& actual, Span span, std::string_view what) {
  if (expected.size == actual.size) return true;
  auto d = report(DiagnosticCode::E0301, span, std::string(what) + " is " + describe_axis(actual) + ", but it must be " + describe_axis(expected));
  d.label("this has " + describe_axis(actual));
  if (!expected.bound_at.empty()) d.secondary(expected.bound_at, bound_label(expected));
  if (!actual.bound_at.empty() && !(actual.bound_at == expected.bound_at)) d.secondary(actual.bound_at, bound_label(actual));
  d.emit();
  return false;
}

std::string Checker::written_as_fixed(const Expr& e) const {
  if (auto fixed = fixed_text_.find(&e); fixed != fixed_text_.end()) return fixed->second;
  if (fixed_text_.empty()) return text(e.span);
  // The outermost parts with a fix of their own, in source order; each replaces its own text.
  std::vector<std::pair<Span, const std::string*>> parts;
  auto find = [&](auto& self, const Expr& x) -> void {
    if (auto fixed = fixed_text_.find(&x); fixed != fixed_text_.end() && x.span.begin >= e.span.begin && x.span.end <= e.span.end) {
      parts.emplace_back(x.span, &fixed->second);
      return;
    }
    for (const ExprPtr& operand : x.operands)
      if (operand) self(self, *operand);
    for (const Argument& argument : x.arguments)
      if (argument.value) self(self, *argument.value);
  };
  find(find, e);
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  std::string out;
  uint32_t at = e.span.begin;
  for (const auto& [span, fixed] : parts) {
    if (span.begin < at) return text(e.span);  // parts that overlap (a piped call's operand): as written
    out += a_.file.slice({at, span.begin});
    out += *fixed;
    at = span.end;
  }
  return squash_spaces(out + std::string(a_.file.slice({at, e.span.end})));  // as text() writes it
}

std::string Checker::written_as_operand(const Expr& e) const {
  std::string written = written_as_fixed(e);
  bool atom = e.kind == Expr::Kind::name || e.kind == Expr::Kind::number || e.kind == Expr::Kind::call || e.kind == Expr::Kind::attribute ||
              e.kind == Expr::Kind::subscript;
  // Already in parentheses of its own: `(a + b)`, not `(a) + (b)`.
  int depth = 0;
  bool enclosed = written.size() >= 2 && written.front() == '(';
  for (size_t i = 0; enclosed && i + 1 < written.size(); ++i)
    if ((depth += written[i] == '(' ? 1 : written[i] == ')' ? -1 : 0) == 0) enclosed = false;
  return atom || enclosed ? written : "(" + written + ")";
}

ValueType Checker::eval_binary(const Expr& expr, Scope& scope) {
  if (expr.operands.size() != 2) return ValueType::unknown();
  if (expr.text.starts_with("is")) return python_identity(expr, scope);
  if (expr.text == "@") return python_matmul(expr, scope);
  if (expr.text == "**") return python_power(expr, scope);
  ValueType left = eval(*expr.operands[0], scope);
  ValueType right = eval(*expr.operands[1], scope);
  auto l = require_tensor(left, expr.operands[0].get(), expr.operands[0]->span);
  auto r = require_tensor(right, expr.operands[1].get(), expr.operands[1]->span);
  if (!l || !r) return ValueType::unknown();
  const std::string& op = expr.text;
  bool logical = op == "and" || op == "or";
  // `//` and `%` floor as Python and torch do (the remainder takes the divisor's sign): integers only.
  if (op == "//" || op == "%")
    for (auto [t, e] : {std::pair{&*l, expr.operands[0].get()}, std::pair{&*r, expr.operands[1].get()}})
      if (!t->element.is_integer()) {
        error(DiagnosticCode::E0401, e->span, "`" + op + "` needs integers, but this is `" + t->element.to_string() + "`",
              "this is " + (t->rank() ? t->to_string() : t->element.to_string()));
        return ValueType::unknown();
      }
  for (auto [t, e] : {std::pair{&*l, expr.operands[0].get()}, std::pair{&*r, expr.operands[1].get()}}) {
    bool is_bool = t->element.kind == ElementKind::bool_;
    if (logical != is_bool && !(op == "==" || op == "!=")) {
      error(DiagnosticCode::E0401, e->span,
            logical ? "`" + op + "` needs `Bool` values, but this is `" + t->element.to_string() + "`"
                    : "`" + op + "` needs numbers, but this is `Bool`",
            "this is " + (t->rank() ? t->to_string() : t->element.to_string()));
      return ValueType::unknown();
    }
  }
  auto shape = broadcast(*l, *r, expr.text_span.empty() ? expr.span : expr.text_span, expr.operands[0]->span, expr.operands[1]->span, &scope);
  if (!shape) return ValueType::unknown();
  shape->element = combine_elements(l->element, r->element, op);
  // Python's `%` by a positive N lands in 0..N-1, and an index below M floor-divided by a positive k
  // is below ceil(M / k): both are indices, so `m.w[(l + 1) % L]` is known to be in range.
  auto positive = [](const ValueType& v) -> std::optional<int64_t> {
    auto n = v.known_size ? v.known_size->constant_value() : std::nullopt;
    return n && *n > 0 ? n : std::nullopt;
  };
  if (op == "%")
    if (auto n = positive(right)) {
      shape->element = ElementType{ElementKind::index, SizeExpr::constant(*n), text(expr.operands[1]->span), ""};
    }
  if (op == "//" && l->element.kind == ElementKind::index)
    if (auto k = positive(right); k && l->element.bound.constant_value()) {
      int64_t below = (*l->element.bound.constant_value() + *k - 1) / *k;
      shape->element = ElementType{ElementKind::index, SizeExpr::constant(below), std::to_string(below), ""};
    }
  ValueType result = ValueType::of(*shape);
  if (left.known_size && right.known_size) {
    if (op == "+") result.known_size = *left.known_size + *right.known_size;
    if (op == "-") result.known_size = *left.known_size - *right.known_size;
    if (op == "*") result.known_size = *left.known_size * *right.known_size;
  }
  result.fixed = left.fixed && right.fixed;
  return result;
}

// Python's `x is None` / `x is not None` (HF's test for an argument left out): one E0101, and the
// `if` around it is checked as it stands. `None` itself is not looked up: it would only repeat it.
ValueType Checker::python_identity(const Expr& expr, Scope& scope) {
  bool negated = expr.text != "is";
  for (const ExprPtr& operand : expr.operands)
    if (!(operand->kind == Expr::Kind::name && operand->text == "None")) eval(*operand, scope);
  report(DiagnosticCode::E0101, expr.text_span, "there is no `" + std::string(negated ? "is not" : "is") + "`: a value is never `None`")
      .label("Python's `" + std::string(negated ? "is not" : "is") + " None`")
      .help(std::string("every parameter is passed, with its type, so `") + (negated ? "x is not None` is always true: keep what the `if` does, without the `if`"
                                                                                 : "x is None` is never true: what the `if` does never happens"));
  return ValueType::unknown();
}

// Python's `a @ b`: PyTorch's product over the last axis of `a` and the one before last of `b`,
// whose other leading axes are `a`'s (or `b` is a weight of rank 2, shared by all of them). One
// E0101, whose fix writes the `einsum` it is; its value is the product's, so the lines after it
// are checked.
ValueType Checker::python_matmul(const Expr& expr, Scope& scope) {
  ValueType left = eval(*expr.operands[0], scope), right = eval(*expr.operands[1], scope);
  auto d = report(DiagnosticCode::E0101, expr.text_span, "there is no `@`: a product is written with `einsum` or `linear`");
  d.label("Python's matrix product");
  return matmul_as_einsum(d, *expr.operands[0], left, *expr.operands[1], right, expr.span, scope);
}

// PyTorch's matrix product of `left_e` and `right_e` (`a @ b`, `torch.matmul(a, b)`): its value,
// and where the axes can be written, the help and fix (replacing `span`) that write it as `einsum`.
// `torch.matmul(a, b)` or `a.matmul(b)` (`what`, as the help names it) is `a @ b`: its einsum
// fix, and that product as the call's value.
void Checker::matmul_call(DiagnosticBuilder& d, const Expr& call, const Expr& a, const ValueType& left, const Expr& b, Scope& scope,
                          const std::string& what) {
  ValueType right = eval(b, scope);
  std::string written;
  ValueType product = matmul_as_einsum(d, a, left, b, right, call.span, scope, &written, what + " is the matrix product, written with `einsum` here: ");
  if (!written.empty()) fixed_text_[&call] = written;
  if (!product.is_unknown()) call_value(call, std::move(product));
}

ValueType Checker::matmul_as_einsum(DiagnosticBuilder& d, const Expr& left_e, const ValueType& left, const Expr& right_e, const ValueType& right,
                                    Span span, Scope& scope, std::string* einsum_written, const std::string& lead) {
  // `x @ w.T` of a weight `w: [out in]`, as PyTorch stores one: `linear(x, w)`.
  if (right_e.kind == Expr::Kind::attribute && (right_e.text == "T" || right_e.text == "mT") && !right_e.operands.empty() && left.is_tensor() &&
      left.tensor.rank() >= 1)
    if (const ValueType* w = a_.semantics.types.find(right_e.operands[0].get());
        w && w->is_tensor() && w->tensor.rank() == 2 && w->tensor.axes[1].size == left.tensor.axes.back().size) {
      std::string written = "linear(" + written_as_fixed(left_e) + ", " + written_as_fixed(*right_e.operands[0]) + ")";
      d.help(lead + "`" + written + "`, a weight `[out in]` applied as PyTorch's `x @ w.T` applies it").fix("write `linear`", span, written);
      if (einsum_written) *einsum_written = written;
      TensorType product = left.tensor;
      product.axes.back() = w->tensor.axes[0];
      product.element = combine_elements(left.tensor.element, w->tensor.element, "*");
      return ValueType::of(std::move(product));
    }
  if (!left.is_tensor() || !right.is_tensor()) {
    d.help(std::string(kProduct));
    return ValueType::unknown();
  }
  const TensorType &a = left.tensor, &b = right.tensor;
  size_t rank = a.rank();
  bool shared = b.rank() == 2;  // a weight: every leading axis of `a` is kept
  if (rank < 2 || b.rank() < 2 || (!shared && b.rank() != rank)) {
    d.help(std::string(kProduct)).note("`a @ b` here needs `a` of two axes or more and `b` of two, or of as many as `a`");
    return ValueType::unknown();
  }
  for (size_t i = 0; !shared && i + 2 < rank; ++i)
    if (a.axes[i].size != b.axes[i].size) {
      d.note("their leading axes differ: `" + a.axes[i].label + "` and `" + b.axes[i].label + "`");
      return ValueType::unknown();
    }
  const Axis &k_a = a.axes[rank - 1], &k_b = b.axes[b.rank() - 2];
  if (k_a.size != k_b.size) {
    d.note("the product runs along `" + k_a.label + "` of " + a.to_string() + " and `" + k_b.label + "` of " + b.to_string() + ", which differ");
    // PyTorch's `x @ w.T` with the `.T` left out: a weight [out in], as `linear` takes it.
    if (shared && b.axes[1].size == k_a.size)
      d.help("`" + text(right_e.span) + "` is " + b.to_string() + ", [out in] as `linear` takes a weight: `x @ w.T` is `linear(x, w)`");
    return ValueType::unknown();
  }
  TensorType product;
  product.axes.assign(a.axes.begin(), a.axes.end() - 1);
  product.axes.push_back(b.axes.back());
  product.element = combine_elements(a.element, b.element, "*");
  // The fix: b's shared axes take a's names, and its last axis a name a doesn't use, since einsum
  // reads one name as one index (`q @ kt` of [b H n Dh] and [b H Dh n] is `.. -> b H n m`).
  TensorType b_last;
  b_last.axes.push_back(b.axes.back());
  auto a_axes = pattern_axes(a, writable_in(scope)), last_axis = pattern_axes(b_last, writable_in(scope));
  std::string last = last_axis ? last_axis->front() : "";
  if (a_axes && std::ranges::count(*a_axes, last)) {
    last.clear();
    for (std::string fresh : {"m", "k", "j", "p"})
      if (!std::ranges::count(*a_axes, fresh) && !scope.axes.count(fresh) && !known_dim(fresh)) {
        last = fresh;
        break;
      }
  }
  if (!a_axes || last.empty()) {
    d.help(std::string(kProduct));
    return ValueType::of(std::move(product));
  }
  // The value's last axis is named as the fix names it, so what follows reads it as the fixed program would (`over=m`).
  if (last_axis && last != last_axis->front()) {
    product.axes.back().label = product.axes.back().name = last;
    scope.axes.try_emplace(last, AxisBinding{product.axes.back().size, span, last});  // as the einsum binds it
  }
  std::vector<std::string> b_written(a_axes->begin(), a_axes->begin() + static_cast<std::ptrdiff_t>(shared ? 0 : rank - 2));
  b_written.push_back(a_axes->back());
  b_written.push_back(last);
  std::vector<std::string> out(a_axes->begin(), a_axes->end() - 1);
  out.push_back(last);
  // An operand that is PyTorch's `k.transpose(-2, -1)` (or `.permute`) is `k` itself in the
  // einsum, its axes written in k's order: einsum reads them in any order.
  std::vector<std::string> a_written = *a_axes;
  auto operand = [&](const Expr& e, std::vector<std::string>& written) {
    if (e.kind != Expr::Kind::call || e.operands.empty() || e.operands[0]->kind != Expr::Kind::attribute ||
        (e.operands[0]->text != "transpose" && e.operands[0]->text != "permute") || e.operands[0]->operands.empty())
      return written_as_fixed(e);
    const Expr& object = *e.operands[0]->operands[0];
    auto type = a_.semantics.types.find(&object);
    if (!type || !type->is_tensor()) return written_as_fixed(e);
    std::vector<const Expr*> positions;
    for (const Argument& argument : e.arguments) positions.push_back(argument.keyword ? nullptr : argument.value.get());
    auto to = moved_axes(e.operands[0]->text, type->tensor, positions);
    if (!to || to->size() != written.size()) return written_as_fixed(e);
    std::vector<std::string> in_object_order(written.size());
    for (size_t i = 0; i < to->size(); ++i) in_object_order[(*to)[i]] = written[i];
    written = std::move(in_object_order);
    return written_as_fixed(object);
  };
  std::string left_text = operand(left_e, a_written), right_text = operand(right_e, b_written);
  std::string call = "einsum(" + left_text + ", " + right_text + ": " + joined_axes(a_written) + ", " + joined_axes(b_written) + " -> " +
                     joined_axes(out) + ")";
  d.help(lead + "`" + call + "`").fix("write `einsum`", span, call);
  if (einsum_written) *einsum_written = call;
  return ValueType::of(std::move(product));
}

// Python's indexing, `x[:, -1, :]`: each item a whole axis (`:`), an index along one, or a slice
// (`:-1`, which the language has not). One E0101; where one axis is indexed and the rest whole, the
// fix moves that axis first and indexes it (`rearrange(x, b n D -> n b D)[n - 1]`) and the value
// is x without it, so the lines after it are checked.
ValueType Checker::python_index(const Expr& expr, Scope& scope) {
  ValueType object = eval(*expr.operands[0], scope);
  std::vector<ValueType> indices;
  for (const Argument& item : expr.arguments) indices.push_back(item.value ? eval(*item.value, scope) : ValueType::unknown());
  if (expr.operands[0]->kind == Expr::Kind::error) return ValueType::unknown();  // `f([x, y])`, a list: its syntax error says so
  auto d = report(DiagnosticCode::E0101, {expr.operands[0]->span.end, expr.span.end}, "there is no Python indexing: `" + text(expr.span) + "`");
  d.label("Python's indexing");
  if (!object.is_tensor() || expr.arguments.size() > object.tensor.rank()) {
    d.help(std::string(kNoSlices));
    return ValueType::unknown();
  }
  const TensorType& x = object.tensor;
  std::vector<size_t> indexed;  // the axes given an index; the rest are whole (`:`)
  for (size_t i = 0; i < expr.arguments.size(); ++i) {
    const Argument& item = expr.arguments[i];
    if (item.value) indexed.push_back(i);
    else if (text(item.span) != ":") {  // a slice with bounds
      d.help(std::string(kNoSlices));
      return ValueType::unknown();
    }
  }
  if (indexed.empty()) {  // `x[:, :]`: x itself
    d.help("`" + text(expr.operands[0]->span) + "` itself: every axis is whole").fix("remove the indexing", Span{expr.operands[0]->span.end, expr.span.end}, "");
    return object;
  }
  TensorType rest = x;
  for (auto i = indexed.rbegin(); i != indexed.rend(); ++i) rest.axes.erase(rest.axes.begin() + static_cast<std::ptrdiff_t>(*i));
  // Each index as a size: a number, `N - k` for PyTorch's `-k`, or a name of a size here.
  auto axes = pattern_axes(x, writable_in(scope));
  std::vector<std::string> written_indices;
  for (size_t i : indexed) {
    const Expr& at = *expr.arguments[i].value;
    if (auto n = positive_integer(at); n || (at.kind == Expr::Kind::number && at.is_integer && at.number == 0))
      written_indices.push_back(n ? std::to_string(*n) : "0");
    else if (at.kind == Expr::Kind::unary && at.text == "-" && !at.operands.empty() && positive_integer(*at.operands[0]) && axes)
      written_indices.push_back((*axes)[i] + " - " + std::to_string(*positive_integer(*at.operands[0])));
    else if (at.kind == Expr::Kind::name && indices[i].known_size)
      written_indices.push_back(at.text);
  }
  std::string written = written_as_fixed(*expr.operands[0]);
  bool leading = indexed.back() + 1 == indexed.size();  // `x[0, 1]`: the first axes, each in turn
  if (written_indices.size() == indexed.size() && leading) {
    for (const std::string& index : written_indices) written += "[" + index + "]";
  } else if (written_indices.size() == indexed.size() && indexed.size() == 1 && axes) {
    std::vector<std::string> moved = *axes;
    auto at = moved.begin() + static_cast<std::ptrdiff_t>(indexed[0]);
    std::rotate(moved.begin(), at, at + 1);
    written = "rearrange(" + written + ", " + joined_axes(*axes) + " -> " + joined_axes(moved) + ")[" + written_indices[0] + "]";
  } else {
    d.help(indexed.size() > 1 ? "one axis is indexed at a time, the first: `x[i]`; move an axis first, with `rearrange`, to index another"
                              : std::string(kNoSlices));
    return ValueType::of(std::move(rest));
  }
  d.help("the language indexes the first axis, `x[i]`: `" + written + "`").fix("write `" + written + "`", expr.span, written);
  return ValueType::of(std::move(rest));
}

// Python's `x ** p`: one E0101. For the powers models use, the fix writes the operation the
// language has, in parentheses since it replaces one operand: `(x * x)`, `sqrt(x)`, `(1 / sqrt(x))`
// (`head_dim ** -0.5`), `(1 / x)`. The value is x's, so the lines after it are checked.
ValueType Checker::python_power(const Expr& expr, Scope& scope) {
  ValueType base = eval(*expr.operands[0], scope);
  eval(*expr.operands[1], scope);
  auto d = report(DiagnosticCode::E0101, expr.text_span, "there is no `**`: a power is written with `*`, `sqrt`, `exp` and `log`");
  d.label("Python's power");
  // The exponent, where it is a number, possibly negated.
  const Expr* exponent = expr.operands[1].get();
  double sign = 1;
  if (exponent->kind == Expr::Kind::unary && exponent->text == "-" && !exponent->operands.empty()) {
    sign = -1;
    exponent = exponent->operands[0].get();
  }
  std::optional<double> power = exponent->kind == Expr::Kind::number ? std::optional(sign * exponent->number) : std::nullopt;
  std::string x = written_as_fixed(*expr.operands[0]), factor = written_as_operand(*expr.operands[0]);
  std::optional<std::string> written;
  if (power == 2) written = "(" + factor + " * " + factor + ")";
  else if (power == 3) written = "(" + factor + " * " + factor + " * " + factor + ")";
  else if (power == 0.5) written = "sqrt(" + x + ")";
  else if (power == -0.5) written = "(1 / sqrt(" + x + "))";
  else if (power == -1) written = "(1 / " + factor + ")";
  else if (power == 1) written = factor;
  if (written)
    d.help("`" + *written + "`").fix("write `" + *written + "`", expr.span, *written);
  else
    d.help("multiply (`x * x`), or use `sqrt`, `exp` and `log`: `x ** p` is `exp(p * log(x))`");
  if (!base.is_tensor()) return ValueType::unknown();
  ValueType value = ValueType::of(base.tensor);
  if (power == 2 && base.known_size) value.known_size = *base.known_size * *base.known_size;
  if (!power || *power != std::floor(*power) || *power < 0) value.tensor.element = ElementType{};  // Real: a root or a reciprocal
  return value;
}

ValueType Checker::eval_unary(const Expr& expr, Scope& scope) {
  if (expr.operands.empty()) return ValueType::unknown();
  const Expr& value = *expr.operands[0];
  if (expr.text == "not") {  // Python's, read as Python reads it (`not a > b` is `!(a > b)`), then checked as `!`
    std::string negated = "!" + written_as_operand(value);
    report(DiagnosticCode::E0101, {expr.span.begin, expr.span.begin + 3}, "there is no `not`: ShapeScript writes `!`")
        .label("Python's `not`")
        .help("`" + negated + "`")
        .fix("write `" + negated + "`", expr.span, negated);
  }
  ValueType operand = eval(value, scope);
  auto t = require_tensor(operand, &value, value.span);
  if (!t) return ValueType::unknown();
  if (expr.text == "!" || expr.text == "not") {
    if (t->element.kind != ElementKind::bool_) {
      error(DiagnosticCode::E0401, expr.operands[0]->span, "`!` needs `Bool` values, but this is `" + t->element.to_string() + "`",
            "this is " + (t->rank() ? t->to_string() : t->element.to_string()));
      return ValueType::unknown();
    }
    ValueType negated = ValueType::of(*t);
    negated.fixed = operand.fixed;
    return negated;
  }
  if (t->element.kind == ElementKind::bool_) {
    error(DiagnosticCode::E0401, expr.operands[0]->span, "`-` needs numbers, but this is `Bool`", "this is Bool");
    return ValueType::unknown();
  }
  if (t->element.kind == ElementKind::nonneg || t->element.kind == ElementKind::index) t->element = ElementType{};
  if (t->element.kind == ElementKind::index) t->element.kind = ElementKind::int_;
  ValueType negated = ValueType::of(*t);
  negated.fixed = operand.fixed;
  return negated;
}

// PyTorch's usual module names, each with its whole name where it is an alias, which `import
// python` has no `as` for.
const std::map<std::string_view, std::string_view> kPythonModules = {
    {"torch", ""}, {"F", "torch.nn.functional"}, {"nn", "torch.nn"}, {"np", "numpy"}, {"numpy", ""}, {"einops", ""}, {"math", ""}};

ValueType Checker::eval_attribute(const Expr& expr, Scope& scope, const Expr* enclosing) {
  if (expr.operands.empty()) return ValueType::unknown();
  // `numpy.load` with no `import python numpy`: a dotted name whose first part is nothing known.
  const Expr* root = expr.operands[0].get();
  while (root->kind == Expr::Kind::attribute && !root->operands.empty()) root = root->operands[0].get();
  if (root->kind == Expr::Kind::name && !scope.locals.count(root->text) && !known_dim(root->text) &&
      !scope.axes.count(root->text) && !globals_.count(root->text) && !find_builtin(root->text) && root->text != "inf") {
    // `F.dropout`: PyTorch's usual module names are that, not a misspelling of a local `f`.
    auto known_module = kPythonModules.find(root->text);
    bool module_name = known_module != kPythonModules.end();
    if ((!module_name && suggest_known(root->text, [&] { return value_names(scope); })) || lost_in_syntax_error(root->text)) {
      eval(*root, scope);  // a misspelled name: E0201 with its suggestion
      return ValueType::unknown();
    }
    std::string module = root->text;
    auto d = report(DiagnosticCode::E0206, root->span, "`" + text(expr.span) + "` starts with `" + module + "`, which is not an imported Python module");
    d.label("not imported");
    // `torch.relu`, `F.softmax`, `torch.cat`: ShapeScript has its own, which checks and exports.
    const TorchName* torch = torch_name(expr.text);
    std::string ours = find_builtin(expr.text) ? expr.text : torch ? std::string(torch->ours) : "";
    const Builtin* own = find_builtin(expr.text);
    bool called = encloses(enclosing, Expr::Kind::call, expr);
    if (expr.text == "inf" && !called) {  // `math.inf`, `torch.inf`
      d.help("infinity is ShapeScript's own: `inf`, and its negation `-inf`").fix("write `inf`", expr.span, "inf");
    } else if (own && own->takes_shape && own->max_positional == 0) {  // `torch.zeros(b, n, D)`: `zeros[b n D]`
      if (auto shape = called ? shape_of_arguments(*enclosing) : std::nullopt)
        d.help("`" + ours + "` is ShapeScript's own, written with its shape: `" + ours + *shape + "`")
            .fix("write `" + ours + *shape + "`", written_call(*enclosing), ours + *shape);
      else
        d.help("`" + ours + "` is ShapeScript's own, written with its shape, as in `" + ours + "[n D]`");
    } else if (auto like = called && expr.text.ends_with("_like") && !enclosing->arguments.empty() && enclosing->arguments[0].value
                               ? like_call(expr.text, *enclosing, eval(*enclosing->arguments[0].value, scope),
                                           enclosing->arguments.size() > 1 ? text(enclosing->arguments[1].span) : "")
                               : std::nullopt) {
      // `torch.zeros_like(x)`: its argument, which nothing else evaluates, gives the shape.
      d.help("PyTorch's `" + expr.text + "` is `" + ours + "` here, written with the shape: `" + *like + "`")
          .fix("write `" + *like + "`", written_call(*enclosing), *like);
    } else if (auto unquoted = own && own->takes_pattern && called ? unquoted_pattern_call(ours, *enclosing) : std::nullopt) {
      // `torch.einsum("bnd,bmd->bnm", q, k)`: renaming it alone would leave the quoted equation.
      d.help("`" + ours + "` is ShapeScript's own, whose pattern is written without quotes: `" + *unquoted + "`")
          .fix("write `" + ours + "`", written_call(*enclosing), *unquoted);
    } else if (!ours.empty() && (!torch || torch->how.empty())) {
      d.help("`" + ours + "` is ShapeScript's own, which the checker follows and `export` can compile: write `" + ours + "`")
          .fix("write `" + ours + "`", expr.span, ours);
      // The call is checked as the fix writes it, so its arguments' own fixes come in the same round.
      if (const Builtin* builtin = find_builtin(ours); builtin && called && builtin->name != "map" && builtin->name != "experts")
        call_as_builtin(*enclosing, *builtin);
    } else if (torch && is_matmul(expr.text) && called && enclosing->arguments.size() == 2 && !enclosing->piped &&
               std::ranges::all_of(enclosing->arguments, [](const Argument& a) { return !a.keyword && a.value; })) {
      // `torch.matmul(a, b)` is `a @ b`: the einsum it is, and its value.
      const Expr& a = *enclosing->arguments[0].value;
      ValueType left = eval(a, scope);
      matmul_call(d, *enclosing, a, left, *enclosing->arguments[1].value, scope, "PyTorch's `" + expr.text + "`");
    } else if (torch && !torch->written.empty() && called && enclosing->arguments.size() == 1 && !enclosing->arguments[0].keyword &&
               enclosing->arguments[0].value) {
      // `torch.rsqrt(x)`: `(1 / sqrt(x))`, whose value is the built-in's of x, elementwise.
      const Expr& tensor = *enclosing->arguments[0].value;
      ValueType type = eval(tensor, scope);
      std::string written = written_torch(*torch, written_as_fixed(tensor));
      d.help("PyTorch's `" + expr.text + "` is `" + written + "` here").fix("write `" + written + "`", written_call(*enclosing), written);
      if (!enclosing->piped) fixed_text_[enclosing] = written;
      if (ValueType value = fixed_call_value(*this, scope, find_builtin(ours), *enclosing, {{&tensor, tensor.span, type}}); !value.is_unknown())
        call_value(*enclosing, std::move(value));
    } else if (torch)
      d.help("PyTorch's `" + expr.text + "` is `" + ours + "` here: " + std::string(torch->how));
    std::string also = torch || !ours.empty() || expr.text == "inf" ? "or, to call Python, " : "";
    if (module_name && !known_module->second.empty()) {
      // `F.gelu` is `torch.nn.functional.gelu`: the import, and the module's whole name where the alias was.
      std::string whole(known_module->second);
      d.help(also + "import `" + whole + "` and write its whole name: `import python " + whole + "`, then `" + whole + "." + expr.text + "`" +
             (also.empty() ? "" : " (its values can't be exported)"))
          .fix("add `import python " + whole + "`", {{{0, 0}, "import python " + whole + "\n"}, {root->span, whole}});
    } else {
      d.help(also.empty() ? "import it: `import python " + module + "`" : also + "import it: `import python " + module + "` (its values can't be exported)")
          .fix("add `import python " + module + "`", {0, 0}, "import python " + module + "\n");
    }
    return ValueType::unknown();
  }
  ValueType object = eval(*expr.operands[0], scope);
  if (object.kind == ValueType::Kind::python_module || object.kind == ValueType::Kind::python) {
    ValueType v;
    v.kind = ValueType::Kind::python;
    v.name = text(expr.span);
    return v;
  }
  if (object.kind == ValueType::Kind::model) {
    auto model = globals_.find(object.name);
    if (model == globals_.end()) return ValueType::unknown();
    static const ModelFields none;
    auto known = model_fields_.find(model->second);
    const ModelFields& fields = known != model_fields_.end() ? *known->second : none;
    auto field = fields.find(expr.text);
    if (field == fields.end()) {
      std::vector<std::string> names;
      for (auto& [name, type] : fields) names.push_back(name);
      report(DiagnosticCode::E0204, expr.text_span, "`" + object.name + "` has no parameter `" + expr.text + "`")
          .label("not a parameter of `" + object.name + "`")
          .secondary(model->second->name_span, "`" + object.name + "` is defined here")
          .suggest(expr.text_span, suggest_name(expr.text, names));
      return ValueType::unknown();
    }
    for (const Item::Param& p : model->second->params)
      if (p.name == expr.text) definition(expr.text_span, p.name_span);
    hover(expr.text_span, "```shapescript\nparam " + expr.text + ": " + field->second.to_string() + "\n```");
    return field->second;
  }
  if (object.is_unknown()) return object;
  auto d = report(DiagnosticCode::E0204, expr.text_span, object.to_string() + " has no field `" + expr.text + "`");
  d.label("no such field");
  // `x.softmax(over=D)`, PyTorch's method style: the built-in takes the tensor first, or through `|>`.
  if (object.is_tensor()) {
    // A method called with a piped value (`y |> x.softmax(..)`) is no PyTorch habit: help, no fix.
    bool called = encloses(enclosing, Expr::Kind::call, expr) && !enclosing->piped;
    // The object as its own fix writes it, where it is such a method too (`x.pow(2).mean(dim=-1)`),
    // so that a chain's outermost fix is the whole chain's.
    const std::string x = written_as_fixed(*expr.operands[0]);
    auto rewrite = [&](const std::string& title, const std::string& written) {
      d.fix(title, enclosing->span, written);
      fixed_text_[enclosing] = written;
    };
    // Fixes write a call, not a pipe, which binds as the method call it replaces (`a + x.softmax(..)`).
    auto method_as_call = [&](const std::string& name, const std::string& rest) {
      return name + "(" + x + (rest.empty() ? "" : ", " + rest) + ")";
    };
    // A built-in by its name, or by PyTorch's for it that means the same (`x.amax(1)` is `max`).
    const TorchName* renamed = torch_name(expr.text);
    const Builtin* as_function = find_builtin(expr.text) ? find_builtin(expr.text) : renamed && renamed->how.empty() ? find_builtin(renamed->ours) : nullptr;
    ValueType pieces;
    std::optional<std::string> chunked = called ? chunked_pattern(expr.text, object.tensor, *enclosing, scope, &pieces) : std::nullopt;
    if (chunked) {
      call_value(*enclosing, std::move(pieces));  // so `q, k, v = ..` have their types
      // `qkv.chunk(3, dim=-1)`, `qkv.split(D, dim=-1)`: equal pieces, ShapeScript's `split` of a group.
      std::string written = method_as_call("split", *chunked);
      d.help("PyTorch's `." + expr.text + "` into equal pieces is `split` of a group here: `" + written + "`");
      rewrite("write `split`", written);
    } else if (as_function && object.tensor.rank() == 0 && expr.operands[0]->kind == Expr::Kind::name && kPythonModules.count(expr.operands[0]->text)) {
      // `F.gelu(h)` in a file with `dim F`: PyTorch's module alias, not a method of the size.
      const std::string name(as_function->name);
      d.help("`" + x + "` is a size here, but `" + text(expr.span) + "` is PyTorch's function: ShapeScript's own is `" + name + "`")
          .fix("write `" + name + "`", expr.span, name);
      // Checked as the fix writes it, as `F.softmax(..)` is where `F` is no size (E0206).
      if (called && as_function->name != "map" && as_function->name != "experts") call_as_builtin(*enclosing, *as_function);
    } else if (as_function && as_function->takes_shape) {
      // `x.expand(-1, n, -1)`: ShapeScript's `expand` takes its result's shape in brackets,
      // `expand[b n D](x)`, each `-1` being the axis x has there.
      const std::string name(as_function->name);
      std::optional<std::string> shape;
      static const std::vector<Argument> none;
      const std::vector<Argument>& arguments = called ? enclosing->arguments : none;
      if (name == "expand" && !arguments.empty() && arguments.size() >= object.tensor.rank()) {
        shape = "";
        const size_t added = arguments.size() - object.tensor.rank();  // new leading axes
        for (size_t i = 0; i < arguments.size() && shape; ++i) {
          const Argument& a = arguments[i];
          std::optional<std::string> size;
          if (a.keyword || !a.value) {
          } else if (a.value->kind == Expr::Kind::unary && a.value->text == "-" && a.value->operands[0]->kind == Expr::Kind::number &&
                     a.value->operands[0]->number == 1) {
            if (i >= added) size = written_axis(object.tensor.axes[i - added], object.tensor, scope);
          } else if (a.value->kind == Expr::Kind::name || (a.value->kind == Expr::Kind::number && a.value->is_integer)) {
            size = text(a.value->span);
          }
          if (size) *shape += (shape->empty() ? "" : " ") + *size;
          else shape.reset();
        }
      }
      if (shape) {
        std::string written = name + "[" + *shape + "](" + x + ")";
        d.help("PyTorch's `." + expr.text + "` is `" + name + "` here, with the shape in brackets: `" + written + "`");
        rewrite("write `" + written + "`", written);
      } else {
        d.help("`" + name + "` is a function that takes its result's shape in brackets: `" + std::string(as_function->signature) + "`");
      }
    } else if (as_function) {
      const Builtin& builtin = *as_function;
      const std::string name(builtin.name);
      // `exp(x)` for a built-in of the tensor alone; `mean(x, …)` where more follows it.
      const bool tensor_alone = builtin.max_positional <= 1 && builtin.keywords.empty();
      d.help((name == expr.text ? "`" + name + "` is a function, not a method" : "PyTorch's `." + expr.text + "` is the function `" + name + "` here") +
             ": the tensor is its first argument, `" + name + "(" + x + (tensor_alone ? ")`" : ", …)`") + ", or piped in, `" + x + " |> " +
             name + (tensor_alone ? "()`" : "(…)`"));
      if (called && method_reduced_in_turn(d, builtin, expr, *enclosing, object, x, scope)) {
      } else if (called) {
        // PyTorch's axis, `x.sum(-1)` or `x.mean(dim=1)`, becomes the `over=` it is, where the axis has a name here.
        const auto& arguments = enclosing->arguments;
        bool takes_over = takes_keyword(builtin, "over");
        std::optional<size_t> over;  // the axis the fix names, where it names one
        // PyTorch's `keepdim=True` on a reduction (`x.mean(-1, keepdim=True)`): the reduced axis
        // stays as an axis of size 1, which the fix writes as a `rearrange` of the reduction.
        auto is_keepdim = [&](const Argument& a) {
          return takes_over && a.keyword && *a.keyword == "keepdim" && a.value && a.value->kind == Expr::Kind::name && a.value->text == "True";
        };
        const bool keepdim = std::any_of(arguments.begin(), arguments.end(), is_keepdim);
        const size_t given = arguments.size() - (keepdim ? 1 : 0);  // arguments but keepdim
        std::vector<std::string> written(arguments.size());
        for (size_t i = 0; i < arguments.size(); ++i) {
          const Argument& a = arguments[i];
          written[i] = text(a.span);
          bool axis = a.keyword ? (*a.keyword == "dim" || *a.keyword == "axis") : builtin.max_positional == 1 && given == 1;
          if (takes_over && axis && a.value)
            if (auto at = literal_position(a.value.get(), object.tensor.rank()))
              if (auto name = written_axis(object.tensor.axes[*at], object.tensor, scope)) {
                written[i] = "over=" + *name;
                if (given == 1) over = at;
              }
        }
        // Where the fix is sure, the built-in with the tensor and the call's positional arguments
        // (`exp(x)`, `masked_fill(att, mask, -inf)`) or with the axis alone (`softmax(x, over=n)`),
        // the call has the value the fix gives.
        const size_t count = 1 + (takes_over ? 0 : arguments.size());
        bool sure = builtin.rule && builtin.effect == BuiltinEffect::pure && !builtin.takes_pattern && !builtin.takes_shape &&
                    count >= static_cast<size_t>(builtin.min_positional) && count <= static_cast<size_t>(builtin.max_positional) &&
                    (takes_over ? over && builtin.required_keywords.size() == 1 && builtin.keywords.size() == 1
                                : builtin.required_keywords.empty() &&
                                      std::all_of(arguments.begin(), arguments.end(), [](const Argument& a) { return !a.keyword && !a.pattern && a.value; }));
        std::vector<FixedMethodCall::Positional> positional{{expr.operands[0].get(), expr.operands[0]->span, object}};
        if (sure && !takes_over)
          for (size_t i = 0; i < arguments.size(); ++i) {
            const Expr& value = *arguments[i].value;
            positional.push_back({&value, value.span, eval(value, scope)});
            written[i] = written_as_fixed(value);  // `mask.unsqueeze(1)` as its own fix writes it, so one round does
          }
        ValueType value = sure ? fixed_call_value(*this, scope, &builtin, *enclosing, std::move(positional), over) : ValueType::unknown();
        // With keepdim, a reduction's result gets its axis back, of size 1, where the fix can write it.
        std::optional<std::string> kept;
        if (keepdim && over && value.is_tensor() && value.tensor.rank() + 1 == object.tensor.rank()) {
          std::vector<size_t> to = kept_axis_order(object.tensor.rank(), {*over});
          if ((kept = moved_axes_pattern(value.tensor, to, writable_in(scope)))) value.tensor = moved_axes_type(value.tensor, to);
        }
        std::string rest;
        for (size_t i = 0; i < arguments.size(); ++i)
          if (!(kept && is_keepdim(arguments[i]))) rest += (rest.empty() ? "" : ", ") + written[i];
        if (kept) {
          std::string reduced = method_as_call(name, rest);
          std::string whole = "rearrange(" + reduced + ", " + *kept + ")";
          d.help("PyTorch's `keepdim=True` keeps the axis with size 1: `" + whole + "`");
          rewrite("keep the axis with `rearrange`", whole);
        } else {
          rewrite("write `" + name + "(" + x + (tensor_alone && rest.empty() ? ")`" : ", …)`"), method_as_call(name, rest));
        }
        if (!value.is_unknown() && (!keepdim || kept)) call_value(*enclosing, std::move(value));
      }
    } else if (const TorchName* torch = renamed; torch && !called && (expr.text == "mT" || (expr.text == "T" && object.tensor.rank() == 2)) &&
                                                   object.tensor.rank() >= 2) {
      // `w.T`, `x.mT`: the last two axes swapped, a `rearrange` whose value is the tensor so moved.
      const size_t rank = object.tensor.rank();
      std::vector<size_t> to(rank);
      for (size_t i = 0; i < rank; ++i) to[i] = i;
      std::swap(to[rank - 2], to[rank - 1]);
      if (auto pattern = moved_axes_pattern(object.tensor, to, writable_in(scope))) {
        std::string written = "rearrange(" + x + ", " + *pattern + ")";
        d.help("PyTorch's `." + expr.text + "` swaps the last two axes: `" + written + "`").fix("write `rearrange`", expr.span, written);
        fixed_text_[&expr] = written;
        return ValueType::of(moved_axes_type(object.tensor, to));
      }
      d.help("PyTorch's `." + expr.text + "` is `" + std::string(torch->ours) + "` here: " + std::string(torch->how));
    } else if (const TorchName* torch = renamed) {
      std::optional<std::string> moved;
      if (called) {
        std::vector<const Expr*> positions;
        for (const Argument& a : enclosing->arguments) positions.push_back(a.keyword ? nullptr : a.value.get());
        // A size asked of a tensor (`logits.view(-1, logits.size(-1))`) has its value before the shape is read.
        for (const Expr* e : positions)
          if (e && (e->kind == Expr::Kind::call || e->kind == Expr::Kind::subscript || e->kind == Expr::Kind::attribute)) eval(*e, scope);
        // The call's value is the moved axes' or the new shape's, so the lines after it are checked.
        if (auto to = moved_axes(expr.text, object.tensor, positions)) {
          moved = moved_axes_pattern(object.tensor, *to, writable_in(scope));
          call_value(*enclosing, ValueType::of(moved_axes_type(object.tensor, *to)));
        }
        TensorType reshaped;
        if (!moved && (moved = reshaped_pattern(expr.text, object.tensor, positions, scope, &reshaped))) call_value(*enclosing, ValueType::of(std::move(reshaped)));
      }
      std::optional<std::string> length;  // `x.norm(dim=-1)`: the length along one axis
      if (called && expr.text == "norm" && enclosing->arguments.size() == 1 && enclosing->arguments[0].value &&
          (!enclosing->arguments[0].keyword || *enclosing->arguments[0].keyword == "dim"))
        if (auto at = literal_position(enclosing->arguments[0].value.get(), object.tensor.rank()))
          if (auto axis = written_axis(object.tensor.axes[*at], object.tensor, scope)) {
            std::string factor = written_as_operand(*expr.operands[0]);  // `(a + b).norm(..)`: `(a + b) * (a + b)`
            length = "sqrt(sum(" + factor + " * " + factor + ", over=" + *axis + "))";
          }
      // `x.pow(2)`: `(x * x)`, whose value is x's.
      const Expr* exponent = called && expr.text == "pow" && enclosing->arguments.size() == 1 && !enclosing->arguments[0].keyword
                                 ? enclosing->arguments[0].value.get() : nullptr;
      if (length) {
        d.help("PyTorch's `.norm` is a vector's length: `" + *length + "`");
        rewrite("write the length", *length);
      } else if (is_matmul(expr.text) && called && enclosing->arguments.size() == 1 && !enclosing->arguments[0].keyword && enclosing->arguments[0].value) {
        // `a.matmul(b)` is `a @ b`: the einsum it is, and its value.
        matmul_call(d, *enclosing, *expr.operands[0], object, *enclosing->arguments[0].value, scope, "PyTorch's `." + expr.text + "`");
      } else if (!torch->written.empty() && called && enclosing->arguments.empty()) {
        // `x.rsqrt()`: `(1 / sqrt(x))`, whose value is the built-in's of x, elementwise.
        std::string written = written_torch(*torch, x);
        d.help("PyTorch's `." + expr.text + "` is `" + written + "` here");
        rewrite("write `" + written + "`", written);
        if (ValueType value = fixed_call_value(*this, scope, find_builtin(torch->ours), *enclosing, {{expr.operands[0].get(), expr.operands[0]->span, object}});
            !value.is_unknown())
          call_value(*enclosing, std::move(value));
      } else if (exponent && exponent->kind == Expr::Kind::number && exponent->is_integer && exponent->number == 2) {
        std::string square = "(" + x + " * " + x + ")";
        d.help("PyTorch's `.pow(2)` is `" + square + "`");
        rewrite("write `" + square + "`", square);
        call_value(*enclosing, object);
      } else if (moved) {
        size_t arrow = moved->find(" -> ");
        RearrangeChain chain{x, moved->substr(0, arrow), moved->substr(arrow + 4)};
        // After another such method (`x.view(..).transpose(1, 2)`), one `rearrange` from where it started.
        if (auto inner = rearrange_chains_.find(expr.operands[0].get()); inner != rearrange_chains_.end()) {
          if (inner->second.from.empty()) chain.object = inner->second.object;  // after `.contiguous()`
          else if (inner->second.to == chain.from) chain = {inner->second.object, inner->second.from, chain.to};
        }
        std::string written = chain.from == chain.to ? chain.object : "rearrange(" + chain.object + ", " + chain.from + " -> " + chain.to + ")";
        if (chain.from == chain.to)
          d.help("with the moves before it, this one leaves the axes where they were: `" + written + "`");
        else
          d.help("PyTorch's `." + expr.text + "` is `rearrange` here, whose pattern names the axes: `" + written + "`");
        rewrite(chain.from == chain.to ? "write `" + written + "`" : "write `rearrange`", written);
        rearrange_chains_[enclosing] = std::move(chain);
      }
      else
        d.help("PyTorch's `." + expr.text + "` is `" + std::string(torch->ours) + "` here" + (torch->how.empty() ? "" : ": " + std::string(torch->how)));
    } else if (expr.text == "weight" && !called) {
      // PyTorch's `self.up.weight` of an `nn.Linear`: a param is the weight itself.
      d.help("a param is the weight itself: `" + x + "`").fix("remove `.weight`", Span{expr.operands[0]->span.end, expr.span.end}, "");
    } else if (expr.text == "bias" && !called) {
      std::string out = object.tensor.rank() == 2 ? object.tensor.axes[0].label : "out";
      d.help("a bias is a param of its own, as in `param " + (expr.operands[0]->kind == Expr::Kind::attribute ? expr.operands[0]->text : std::string("w")) +
             "_bias: [" + out + "] = zeros`, added after `linear`");
    } else if (called && changes_nothing(expr.text, *enclosing, object, scope)) {
      // Memory layout, copies, devices and the float precision are PyTorch's to decide, and the compiled program does.
      std::string call = "." + expr.text + "(" + (enclosing->arguments.empty() ? "" : "..") + ")";
      d.help("`" + call + "` changes nothing a ShapeScript value has: remove it")
          .fix("remove `" + call + "`", Span{expr.operands[0]->span.end, enclosing->span.end}, "");
      call_value(*enclosing, object);
      fixed_text_[enclosing] = x;
      auto inner = rearrange_chains_.find(expr.operands[0].get());
      rearrange_chains_[enclosing] = inner != rearrange_chains_.end() ? inner->second : RearrangeChain{x, "", ""};
    } else if (called && enclosing->arguments.empty() && (expr.text == "float" || expr.text == "double") && object.tensor.element.is_integer()) {
      d.help("an `" + object.tensor.element.to_string() + "` tensor becomes `Real` wherever a `Real` is expected (`/` always gives one): " +
             "check that this place expects one, and remove `." + expr.text + "()`");
    } else {
      std::optional<std::string> written = tensor_size_help(d, expr, object.tensor, enclosing, scope);
      // `x.size(-1)`: the axis's size, so the lines after it are checked, written as its fix writes
      // it where an operation around it writes it too (`q.size(-1) ** -0.5`).
      if (called && expr.text == "size" && enclosing->arguments.size() == 1 && !enclosing->arguments[0].keyword)
        if (auto at = literal_position(enclosing->arguments[0].value.get(), object.tensor.rank())) {
          ValueType size = ValueType::scalar(ElementKind::int_);
          size.known_size = object.tensor.axes[*at].size;
          call_value(*enclosing, std::move(size));
          if (written) fixed_text_[enclosing] = *written;
        }
    }
  }
  return ValueType::unknown();
}

// PyTorch's methods that change nothing a ShapeScript value has: `x.contiguous()`, `x.clone()`,
// `x.cuda()`, `x.to(device)`, and on a `Real` tensor `x.float()`, `x.half()`, `x.type_as(y)` of a `Real` y.
bool Checker::changes_nothing(const std::string& method, const Expr& call, const ValueType& object, Scope& scope) {
  static const std::set<std::string, std::less<>> kLayout = {"contiguous", "clone", "cuda", "cpu"};
  static const std::set<std::string, std::less<>> kPrecision = {"float", "half", "bfloat16", "double"};
  bool real = object.is_tensor() && object.tensor.element.kind == ElementKind::real;
  if (call.arguments.empty()) return kLayout.count(method) || (real && kPrecision.count(method));
  if (call.arguments.size() != 1 || call.arguments[0].keyword || !call.arguments[0].value) return false;
  const Expr& argument = *call.arguments[0].value;
  if (method == "to") {  // a device, or a Real tensor's floating-point precision (as `.float()` is)
    static const std::set<std::string, std::less<>> kFloatTypes = {"torch.float32", "torch.float", "torch.float16", "torch.half",
                                                                   "torch.bfloat16", "torch.float64", "torch.double"};
    std::string written = text(argument.span);
    return written.find("device") != std::string::npos || written == "\"cuda\"" || written == "\"cpu\"" ||
           (real && (kFloatTypes.count(written) || written.ends_with(".dtype")));
  }
  if (method == "type_as" && real) {
    ValueType other = eval(argument, scope);
    return other.is_tensor() && other.tensor.element.kind == ElementKind::real;
  }
  return false;
}

// PyTorch's `B, T, C = x.shape` (or `x.size()`), the whole value of an assignment: the edits that
// remove the line and write each axis's name (or size) where the names are used after it. None
// where a name is assigned again in the function, or an axis can't be written here.
std::optional<std::vector<TextEdit>> Checker::shape_unpacked(const TensorType& tensor, const Expr& asked, const Scope& scope) const {
  const Statement* statement = assigning_;
  if (!statement || statement->value.get() != &asked || statement->targets.size() != tensor.rank() || !current_ || !current_->body) return std::nullopt;
  std::map<std::string, std::string> written;  // each name, and what replaces its uses
  for (size_t i = 0; i < tensor.rank(); ++i) {
    const Axis& axis = tensor.axes[i];
    std::optional<std::string> name = size_as_value(axis, tensor, scope);
    if (!name) return std::nullopt;
    if (statement->targets[i].first != "_") written[statement->targets[i].first] = as_operand(*name);
  }
  bool rebound = false;
  for_each_statement(*current_->body, [&](const Statement& s) {
    if (&s != statement)
      for (const auto& [name, span] : s.targets) rebound = rebound || written.count(name);
    if (s.kind == Statement::Kind::for_ && written.count(s.variable)) rebound = true;
    return rebound ? Walk::stop : Walk::into;
  });
  if (rebound) return std::nullopt;
  // The whole line goes, its indentation and newline with it.
  uint32_t line = a_.file.line_column(statement->span.begin).line;
  uint32_t begin = a_.file.offset_of({line, 0});
  uint32_t end = line + 1 < a_.file.line_count() ? a_.file.offset_of({line + 1, 0}) : statement->span.end;
  std::vector<TextEdit> edits{{{begin, end}, ""}};
  for (const Expr* e : expressions_of(*current_))
    if (e->kind == Expr::Kind::name && e->span.begin >= end)
      if (auto to = written.find(e->text); to != written.end() && to->first != to->second) edits.push_back({e->span, to->second});
  return edits;
}

std::optional<std::string> Checker::tensor_size_help(DiagnosticBuilder& d, const Expr& attribute, const TensorType& tensor, const Expr* enclosing,
                                                     const Scope& scope) const {
  const std::string& field = attribute.text;
  bool called = encloses(enclosing, Expr::Kind::call, attribute), indexed = encloses(enclosing, Expr::Kind::subscript, attribute);
  const Expr& asked = called || indexed ? *enclosing : attribute;  // the whole `x.shape[1]`
  std::string names;
  for (const Axis& a : tensor.axes) names += (names.empty() ? "`" : ", `") + a.label + "`";
  if (field == "ndim" && !called) {
    std::string rank = std::to_string(tensor.rank());
    d.help("a tensor's rank is in its type: `" + text(asked.span) + "` is " + rank + " here, for " + tensor.to_string())
        .fix("write `" + rank + "`", asked.span, rank);
    return rank;
  }
  // The one position asked: `x.shape[1]`, `x.size(-1)`.
  std::optional<size_t> at;
  if (field == "shape" && indexed && asked.index.size() == 1) {
    at = size_position(asked.index[0], tensor.rank());
  } else if (field == "size" && called && asked.arguments.size() == 1 && !asked.arguments[0].keyword) {
    at = literal_position(asked.arguments[0].value.get(), tensor.rank());
  } else if ((field == "shape" && !indexed) || (field == "size" && called && asked.arguments.empty())) {
    d.help("a tensor's shape is its type, " + tensor.to_string() + ": each size is written by its axis's name (" + names + ")");
    if (auto edits = shape_unpacked(tensor, asked, scope)) d.fix("use the axes' names", std::move(*edits));
    return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!at) {
    d.help("a size is written by its axis's name, and " + tensor.to_string() + " has " + std::to_string(tensor.rank()) + ": " + names);
    return std::nullopt;
  }
  return axis_size_help(d, asked, tensor, *at, scope);
}

std::optional<std::string> Checker::axis_size_help(DiagnosticBuilder& d, const Expr& asked, const TensorType& tensor, size_t at,
                                                   const Scope& scope) const {
  const Axis& axis = tensor.axes[at];
  Span whole = written_call(asked);  // `x |> len` from `x` on
  if (auto written = written_axis(axis, tensor, scope)) {
    d.help("a size is written by its axis's name, which the checker follows: `" + text(whole) + "` is `" + *written + "` here")
        .fix("write `" + as_operand(*written) + "`", whole, as_operand(*written));
    return as_operand(*written);
  }
  if (auto value = size_as_value(axis, tensor, scope)) {
    // A size is a value, whichever axis has it: `8`, `(n+1)` where another axis is the same size.
    d.help("`" + text(whole) + "` is " + *value + " here, for " + tensor.to_string())
        .fix("write `" + as_operand(*value) + "`", whole, as_operand(*value));
    return as_operand(*value);
  }
  if (std::ranges::any_of(axis.size.variables(), [](const std::string& v) { return v.starts_with("?"); })) {
    d.help("`" + text(whole) + "` is `" + axis.label + "`, a size known only as the program runs, which no value names: " +
           "what uses it takes it from the tensor's type");
  } else {
    d.help("a size is written by its axis's name: `" + text(whole) + "` is the axis `" + axis.label + "` of " + tensor.to_string() +
           ", which this function's signature can name");
  }
  return std::nullopt;
}

namespace {

// A size of generic axes (each at least 1) that is negative whatever they are: every term but the
// constant has a negative coefficient, so it is largest with each axis at 1, and that is below 0.
bool surely_negative(const SizeExpr& e) {
  int64_t largest = 0;
  for (const auto& [monomial, coefficient] : e.terms()) {
    if (!monomial.empty() && coefficient > 0) return false;
    largest += coefficient;
  }
  return largest < 0;
}

}  // namespace

std::optional<std::string> Checker::index_out_of_range(const SizeExpr& index, const SizeExpr& size, const Scope& scope) const {
  // The index's loop indices and Index[N] locals, each with its range 0..N-1; generic axes stay.
  std::vector<std::pair<std::string, int64_t>> counted;
  int64_t combinations = 1;
  for (const std::string& name : index.variables()) {
    if (scope.axes.count(name)) continue;
    auto local = scope.locals.find(name);
    if (local == scope.locals.end() || !local->second.type.is_tensor()) return std::nullopt;
    const ElementType& element = local->second.type.tensor.element;
    auto bound = element.kind == ElementKind::index ? element.bound.constant_value() : std::nullopt;
    if (!bound || *bound <= 0) return std::nullopt;  // an Int of any value: nothing sure
    counted.emplace_back(name, *bound);
    combinations *= *bound;
    if (combinations > 65536) return std::nullopt;
  }
  SizeBindings values;
  for (int64_t k = 0; k < combinations; ++k) {
    int64_t rest = k;
    for (const auto& [name, bound] : counted) {
      values[name] = SizeExpr::constant(rest % bound);
      rest /= bound;
    }
    SizeExpr value = index.substitute(values);
    bool above = surely_negative(size - SizeExpr::constant(1) - value);
    if (!above && !surely_negative(value)) continue;
    // Words only for the combination reported: up to 65536 are tried.
    std::string at;
    for (const auto& [name, bound] : counted) at += (at.empty() ? "at " : ", ") + name + " = " + values[name].to_user_string();
    std::string is = "it is " + value.to_user_string() + (!above ? ", below 0" : value.is_constant() ? "" : ", never below " + size.to_user_string());
    return at.empty() ? is : at + " " + is;
  }
  return std::nullopt;
}

namespace {

bool is_quotient(const SizeNode& node) {
  return node.kind == SizeNode::Kind::binary && (node.op == '%' || node.op == SizeNode::kFloorDivide) && node.children.size() == 2;
}

bool has_quotient(const SizeNode& node) {
  return is_quotient(node) || std::any_of(node.children.begin(), node.children.end(), has_quotient);
}

}  // namespace

std::optional<Checker::IndexValue> Checker::resolve_index(const SizeNode& node, Scope& scope) {
  // A sum, product or parenthesis around a remainder or quotient (`l % 2 + 1`): its range from theirs.
  bool combines = (node.kind == SizeNode::Kind::binary && (node.op == '+' || node.op == '*') && node.children.size() == 2) ||
                  (node.kind == SizeNode::Kind::group && node.children.size() == 1);
  if (combines && has_quotient(node)) {
    std::vector<IndexValue> parts;
    for (const SizeNode& child : node.children) {
      auto part = resolve_index(child, scope);
      if (!part) return std::nullopt;
      parts.push_back(std::move(*part));
    }
    if (std::any_of(parts.begin(), parts.end(), [](const IndexValue& part) { return !part.size; })) {
      if (node.kind == SizeNode::Kind::group) return parts[0];
      // The largest value of each part: a range's bound less one, or a fixed size; none known, no range.
      auto largest = [](const IndexValue& part) -> std::optional<int64_t> {
        if (part.size) return part.size->size.constant_value();
        auto below = part.below ? part.below->constant_value() : std::nullopt;
        return below ? std::optional<int64_t>(*below - 1) : std::nullopt;
      };
      IndexValue index;
      auto a = largest(parts[0]), b = largest(parts[1]);
      if (a && b && *a >= 0 && *b >= 0) index.below = SizeExpr::constant((node.op == '+' ? *a + *b : *a * *b) + 1);
      return index;
    }
  }
  if (!is_quotient(node)) {
    auto axis = resolve_size(node, scope);
    if (!axis) return std::nullopt;
    IndexValue index{axis, std::nullopt};
    if (auto local = node.kind == SizeNode::Kind::name ? scope.locals.find(node.name) : scope.locals.end(); local != scope.locals.end()) {
      const ValueType& type = local->second.type;
      if (type.is_tensor() && type.tensor.element.kind == ElementKind::index) index.below = type.tensor.element.bound;
    }
    return index;
  }
  auto left = resolve_index(node.children[0], scope);
  auto right = resolve_size(node.children[1], scope);
  if (!left || !right) return std::nullopt;
  auto k = right->size.constant_value();
  if (!k || *k <= 0) {
    resolve_size(node, scope);  // E0302: it needs a fixed positive divisor
    return std::nullopt;
  }
  if (left->size)
    if (auto size = node.op == '%' ? left->size->size.remainder(*k) : left->size->size.floor_divide(*k)) {
      Axis axis;
      axis.size = *size;
      axis.label = text(node.span);
      return IndexValue{axis, std::nullopt};
    }
  // As eval_binary types them: `%` by k lands in 0..k-1; an index below M, floor-divided by k, is below ceil(M / k).
  IndexValue index;
  if (node.op == '%') index.below = SizeExpr::constant(*k);
  else if (auto m = left->below ? left->below->constant_value() : std::nullopt) index.below = SizeExpr::constant((*m + *k - 1) / *k);
  return index;
}

ValueType Checker::eval_subscript(const Expr& expr, Scope& scope) {
  if (expr.operands.empty()) return ValueType::unknown();
  if (expr.python_index) return python_index(expr, scope);
  const Expr& base = *expr.operands[0];
  // `causal[n m]`: a Bool mask, true where the key position m is at or before the query position n.
  if (base.kind == Expr::Kind::name && base.text == "causal" && names_builtin("causal", scope)) {
    // Recorded as the built-in's use, so that rules (sdpa's is_causal) read the name as it was resolved.
    a_.semantics.calls.set(&expr, CallFacts{.builtin = find_builtin("causal")});
    hover(base.span, "```shapescript\n" + std::string(find_builtin("causal")->signature) + "\n```\n" + std::string(find_builtin("causal")->summary));
    TensorType mask;
    mask.element.kind = ElementKind::bool_;
    for (const SizeNode& s : expr.index) {
      auto axis = resolve_size(s, scope);
      if (!axis) return ValueType::unknown();
      mask.axes.push_back(*axis);
    }
    if (mask.rank() != 2) {
      error(DiagnosticCode::E0306, expr.span, "`causal` takes two sizes, query and key positions, as in `causal[n m]`", "give two sizes");
      return ValueType::unknown();
    }
    a_.semantics.types.set(&base, ValueType::unknown());
    return ValueType::of(mask);
  }
  // `zeros[n D]`, `ones[n D]`: a tensor of that shape (the same names initialize a parameter).
  if (const Builtin* filled = base.kind == Expr::Kind::name ? find_builtin(base.text) : nullptr;
      filled && filled->takes_shape && filled->max_positional == 0 && names_builtin(base.text, scope)) {
    a_.semantics.calls.set(&expr, CallFacts{.builtin = filled});
    hover(base.span, "```shapescript\n" + std::string(filled->signature) + "\n```\n" + std::string(filled->summary));
    TensorType made;
    made.element.kind = ElementKind::nonneg;
    for (const SizeNode& s : expr.index) {
      auto axis = resolve_size(s, scope);
      if (!axis) return ValueType::unknown();
      made.axes.push_back(*axis);
    }
    a_.semantics.types.set(&base, ValueType::unknown());
    return ValueType::of(made);
  }
  ValueType value = eval(base, scope, &expr);
  if (value.kind == ValueType::Kind::python) return value;
  auto tensor = require_tensor(value, &base, base.span);
  if (!tensor) return ValueType::unknown();
  // PyTorch's `wte[ids]`, a table `[V D]` indexed by a tensor of ids: a lookup, `embedding(ids, wte)`,
  // whose value it has.
  if (auto ids = expr.index.size() == 1 && expr.index[0].kind == SizeNode::Kind::name && tensor->rank() == 2 ? scope.locals.find(expr.index[0].name)
                                                                                                              : scope.locals.end();
      ids != scope.locals.end() && ids->second.type.is_tensor() && ids->second.type.tensor.rank() >= 1) {
    const std::string& name = expr.index[0].name;
    definition(expr.index[0].span, ids->second.at);
    std::string written = "embedding(" + name + ", " + written_as_fixed(base) + ")";
    report(DiagnosticCode::E0505, expr.index[0].span, "`" + name + "` is a tensor, not a size: a table indexed by a tensor of ids is a lookup")
        .label("a tensor " + ids->second.type.tensor.to_string())
        .help("`embedding(ids, table)` looks up each id's row: `" + written + "`")
        .fix("write `embedding`", expr.span, written);
    fixed_text_[&expr] = written;
    return fixed_call_value(*this, scope, find_builtin("embedding"), expr, {{nullptr, expr.index[0].span, ids->second.type}, {&base, base.span, value}});
  }
  std::vector<IndexValue> indices;
  for (const SizeNode& s : expr.index) {
    auto index = resolve_index(s, scope);
    if (!index) return ValueType::unknown();
    indices.push_back(std::move(*index));
  }
  // An index is an integer literal below the axis's size, or an `Index[N]` for an axis of size N.
  for (size_t i = 0; i < expr.index.size() && i < tensor->rank(); ++i) {
    const SizeNode& s = expr.index[i];
    const Axis& axis = tensor->axes[i];
    if (!indices[i].size) {
      // `l % 2`, `l // 2`: in range when the bound its values lie below fits the axis.
      const std::optional<SizeExpr>& below = indices[i].below;
      if (!below || *below == axis.size) continue;  // no bound: an integer of any value, as an `Int` local
      auto bound = below->constant_value(), size = axis.size.constant_value();
      if (bound && size && *bound <= *size) continue;
      report(DiagnosticCode::E0402, s.span,
             "index `" + text(s.span) + "` is below " + below->to_user_string() + ", but it indexes " + dim_word(i) + " of " + tensor->to_string() +
                 ", " + describe_axis(axis))
          .label("below " + below->to_user_string() + ", not " + axis.size.to_user_string())
          .note("`%` by k is one of 0 to k-1, and an index below M floor-divided by k is below M/k rounded up")
          .secondary(base.span, "this is " + tensor->to_string());
    } else if (s.kind == SizeNode::Kind::number) {
      auto size = axis.size.constant_value();
      if (!size || s.number < *size) continue;
      report(DiagnosticCode::E0402, s.span,
             "index " + std::to_string(s.number) + " is out of range for " + dim_word(i) + " of " + tensor->to_string() + ", " + describe_axis(axis))
          .label("out of range")
          .note("indices count from 0, so the last is " + std::to_string(*size - 1))
          .secondary(base.span, "this is " + tensor->to_string());
    } else if (s.kind == SizeNode::Kind::name && scope.locals.count(s.name) && scope.locals.at(s.name).type.is_tensor() &&
               scope.locals.at(s.name).type.tensor.element.kind == ElementKind::index) {
      auto local = scope.locals.find(s.name);
      const ElementType& element = local->second.type.tensor.element;
      if (element.bound == axis.size) continue;
      auto bound = element.bound.constant_value(), size = axis.size.constant_value();
      if (bound && size && *bound <= *size) continue;  // every value is in range
      report(DiagnosticCode::E0402, s.span,
             "`" + s.name + "` is an `" + element.to_string() + "`, but it indexes " + dim_word(i) + " of " + tensor->to_string() + ", " +
                 describe_axis(axis))
          .label("below " + element.bound.to_user_string() + ", not " + axis.size.to_user_string())
          .secondary(local->second.at, "`" + s.name + "` is bound here")
          .note("an index of `Index[N]` may be any integer below N, so the axis needs exactly N entries")
          .secondary(base.span, "this is " + tensor->to_string());
    } else if (const std::optional<Axis>& value = indices[i].size; value && !value->size.is_constant()) {
      // An index computed from sizes and loop indices: refused where it surely misses the axis.
      auto where = index_out_of_range(value->size, axis.size, scope);
      if (!where) continue;
      report(DiagnosticCode::E0402, s.span,
             "index `" + text(s.span) + "` is out of range for " + dim_word(i) + " of " + tensor->to_string() + ", " + describe_axis(axis) +
                 ": " + *where)
          .label("out of range")
          .note("indices count from 0, so the last is " + (axis.size - SizeExpr::constant(1)).to_user_string())
          .secondary(base.span, "this is " + tensor->to_string());
    } else {
      continue;
    }
    return ValueType::unknown();
  }
  if (expr.index.size() > tensor->rank()) {
    error(DiagnosticCode::E0306, expr.span,
          "indexing " + std::to_string(expr.index.size()) + " axes of " + tensor->to_string() + ", which has " + std::to_string(tensor->rank()),
          "too many indices");
    return ValueType::unknown();
  }
  tensor->axes.erase(tensor->axes.begin(), tensor->axes.begin() + static_cast<std::ptrdiff_t>(expr.index.size()));
  return ValueType::of(*tensor);
}

ValueType Checker::eval_as(const Expr& expr, Scope& scope) {
  if (expr.operands.empty() || !expr.type) return ValueType::unknown();
  as_context_.push_back(text(expr.type->span));
  ValueType value = eval(*expr.operands[0], scope);
  as_context_.pop_back();
  SizeMode mode = scope.mode;
  scope.mode = SizeMode::assertion;
  ValueType asserted = type_from_node(*expr.type, scope);
  scope.mode = mode;
  if (value.kind == ValueType::Kind::python && expr.operands[0]->kind != Expr::Kind::call && current_)
    uses_[current_].push_back({Use::Kind::python, expr.operands[0]->span, text(expr.operands[0]->span), nullptr, nullptr, text(expr.type->span)});
  if (value.is_tensor() && asserted.is_tensor() && value.tensor.rank() != asserted.tensor.rank()) {
    error(DiagnosticCode::E0306, expr.span,
          "`as` asserts " + std::to_string(asserted.tensor.rank()) + " axes, but this has " + std::to_string(value.tensor.rank()) + ": " +
              value.tensor.to_string(),
          "this is " + value.tensor.to_string());
    return asserted;
  }
  // An assertion is checked when the program runs; one whose sizes differ by a fixed amount (64
  // asserted as 32, `n` as `n+1`) fails on every input, so it is an error now.
  if (value.is_tensor() && asserted.is_tensor() && value.tensor.rank() == asserted.tensor.rank())
    for (size_t i = 0; i < value.tensor.rank(); ++i) {
      const Axis& is = value.tensor.axes[i];
      const Axis& said = asserted.tensor.axes[i];
      auto difference = (is.size - said.size).constant_value();
      if (!difference || *difference == 0) continue;
      const Span at = expr.type->axes.size() == value.tensor.rank() ? expr.type->axes[i].span : expr.type->span;
      auto d = report(DiagnosticCode::E0301, at,
                      "`as` asserts that axis " + std::to_string(i + 1) + " is " + describe_axis(said) + ", but it is always " + describe_axis(is));
      d.label("this is " + describe_axis(is));
      if (!is.bound_at.empty()) d.secondary(is.bound_at, bound_label(is));
      d.help("`as` checks a size as the program runs and never changes it, so this one fails on every input; "
             "a tensor gets another shape from `rearrange` or a function that computes it");
      d.emit();
      return asserted;
    }
  // A plain number stays one: the compiled program checks it as it is traced.
  asserted.fixed = value.fixed && asserted.is_tensor() && asserted.tensor.rank() == 0;
  return asserted;
}

// ---------------------------------------------------------------------------------------------
// Calls

ValueType Checker::eval_call(const Expr& expr, Scope& scope) {
  if (expr.operands.empty()) return ValueType::unknown();
  const Expr& callee = *expr.operands[0];
  CallFacts facts;
  facts.callee_span = callee.span;
  ValueType result = ValueType::unknown();
  // A built-in or a function is found by name; anything else is evaluated.
  if (callee.kind == Expr::Kind::name && !scope.locals.count(callee.text) && !globals_.count(callee.text) && find_builtin(callee.text)) {
    const Builtin& builtin = *find_builtin(callee.text);
    facts.builtin = &builtin;
    hover(callee.span, "```shapescript\n" + std::string(builtin.signature) + "\n```\n" + std::string(builtin.summary) +
                           (builtin.works_across.empty() ? "" : "\n\nworks across " + std::string(builtin.works_across)));
    result = builtin.name == "map"       ? call_map(expr, scope, facts)
             : builtin.name == "experts" ? call_experts(expr, scope, facts)
                                         : call_builtin(builtin, expr, scope, facts);
  } else if (const Builtin* shaped = shaped_callee(callee, scope)) {
    // `full[n m](v)`, `expand[b n D](x)`: a built-in given its result's shape in brackets.
    facts.builtin = shaped;
    hover(callee.operands[0]->span, "```shapescript\n" + std::string(shaped->signature) + "\n```\n" + std::string(shaped->summary));
    a_.semantics.types.set(&callee, ValueType::unknown());
    result = call_builtin(*shaped, expr, scope, facts, &callee.index);
  } else if (auto moved = torch_axes_call(expr, scope)) {
    result = *moved;  // `transpose(x, 1, 2)`: reported with the pattern it is
  } else {
    ValueType function = eval(callee, scope, &expr);
    if (known_call_.call == &expr) {
      // A PyTorch method reported where its value is sure (`x.transpose(1, 2)`): that value; a
      // module's function that is a built-in (`F.softmax(..)`): checked as that built-in.
      KnownCall known = std::exchange(known_call_, {});
      if (known.builtin) {
        facts.builtin = known.builtin;
        result = call_builtin(*known.builtin, expr, scope, facts);
      } else {
        result = std::move(known.value);
      }
    } else if (function.kind == ValueType::Kind::function) {
      auto global = globals_.find(function.name);
      if (global != globals_.end()) result = call_function(*global->second, expr, scope, facts);
    } else if (function.kind == ValueType::Kind::python || function.kind == ValueType::Kind::python_module) {
      for (const Argument& argument : expr.arguments)
        if (argument.value) eval(*argument.value, scope);
      facts.python = text(callee.span);
      if (current_) {
        std::optional<std::string> asserted = as_context_.empty() ? std::nullopt : as_context_.back();
        uses_[current_].push_back({Use::Kind::python, expr.span, facts.python, nullptr, &expr, asserted});
      }
      result.kind = ValueType::Kind::python;
      result.name = facts.python;
    } else if (!function.is_unknown()) {
      std::string what = function.to_string();
      if (function.known_size && function.is_tensor() && function.tensor.rank() == 0) what = "a size, " + function.known_size->to_user_string();
      auto d = report(DiagnosticCode::E0205, callee.span, "`" + text(callee.span) + "` is " + what + ", which can't be called");
      d.label("not a function");
      // PyTorch's `self.up(x)` of an `nn.Linear`: a weight `[out in]` is applied with `linear`.
      // Where the param is a model's and the input's last axis is its `in`.
      bool applied = function.is_tensor() && function.tensor.rank() == 2 && callee.kind == Expr::Kind::attribute && expr.arguments.size() == 1 &&
                     !expr.arguments[0].keyword && expr.arguments[0].value && !expr.piped;
      ValueType input = applied ? eval(*expr.arguments[0].value, scope) : ValueType::unknown();
      if (applied && input.is_tensor() && input.tensor.rank() >= 1 && input.tensor.axes.back().size == function.tensor.axes[1].size) {
        const Expr& x = *expr.arguments[0].value;
        std::string written = "linear(" + written_as_fixed(x) + ", " + text(callee.span) + ")";
        d.help("a weight `[out in]` is applied with `linear`, as PyTorch's `nn.Linear` is: `" + written + "`").fix("write `linear`", expr.span, written);
        // The call has the value of the `linear` its fix writes, so the lines after it are checked.
        fixed_text_[&expr] = written;
        result = fixed_call_value(*this, scope, find_builtin("linear"), expr, {{&x, x.span, input}, {&callee, callee.span, function}});
      }
    }
  }
  a_.semantics.calls.set(&expr, std::move(facts));
  return result;
}

// The built-in a callee such as `full[n m]` names: a subscript of a shape-taking built-in's name.
const Builtin* Checker::shaped_callee(const Expr& callee, const Scope& scope) const {
  if (callee.kind != Expr::Kind::subscript || callee.operands.empty() || callee.operands[0]->kind != Expr::Kind::name) return nullptr;
  const Builtin* builtin = find_builtin(callee.operands[0]->text);
  if (!builtin || !builtin->takes_shape || builtin->max_positional == 0 || !names_builtin(std::string(builtin->name), scope)) return nullptr;
  return builtin;
}

ValueType Checker::call_builtin(const Builtin& builtin, const Expr& expr, Scope& scope, CallFacts& facts, const std::vector<SizeNode>* shape) {
  std::string name(builtin.name);
  if (builtin.takes_shape && !builtin.shape_optional && builtin.max_positional > 0 && !shape) {
    error(DiagnosticCode::E0504, expr.operands[0]->span, "`" + name + "` takes its result's shape in brackets, as in `" + std::string(builtin.signature) + "`",
          "no shape");
    return ValueType::unknown();
  }
  if (builtin.effect == BuiltinEffect::initializer) {
    auto d = report(DiagnosticCode::E0601, expr.operands[0]->span, "`" + name + "` initializes a model parameter; it can't be called here");
    d.label("only after `param name: [..] =`");
    if (auto shape = builtin.takes_shape ? shape_of_arguments(expr) : std::nullopt)
      d.help("a tensor of " + name + " in an expression is written with its shape: `" + name + *shape + "`").fix("write `" + name + *shape + "`", written_call(expr), name + *shape);
    else if (builtin.takes_shape)
      d.help("a tensor of " + name + " in an expression is written with its shape, as in `" + name + "[n D]`");
    d.emit();
    return ValueType::unknown();
  }
  if (builtin.effect == BuiltinEffect::training && current_)
    uses_[current_].push_back({Use::Kind::training, expr.operands[0]->span, name, nullptr, &expr, std::nullopt});
  std::vector<const Argument*> positional;
  std::vector<ValueType> positional_types;
  std::map<std::string, std::pair<const Argument*, ValueType>> keywords;
  const AxisPattern* pattern = nullptr;
  bool ok = true;
  std::set<std::string> suggested;  // keywords a misspelled one was taken for: not reported missing too
  const Expr* torch_dim = nullptr;  // PyTorch's `dim=-1`, reported, read as the `over=` its fix writes
  std::vector<size_t> torch_dims;   // PyTorch's `dim=[1, 2]` of a reduction, reported, read as the calls its fix writes
  bool torch_dims_kept = false;     // and with `keepdim=True`, the `rearrange` around them
  std::optional<size_t> torch_over;  // PyTorch's `normalized_shape` by position, reported, read as the `over=` its fix writes
  // einops' `rearrange(x, "b n (h d) -> ...", h=H)`: its keywords size the quoted pattern, whose E0504 fix writes them in.
  bool quoted_pattern = builtin.takes_pattern && std::none_of(expr.arguments.begin(), expr.arguments.end(), [](const Argument& a) { return a.pattern.has_value(); }) &&
                        std::any_of(expr.arguments.begin(), expr.arguments.end(), [](const Argument& a) { return !a.keyword && a.value && a.value->kind == Expr::Kind::string; });
  for (const Argument& argument : expr.arguments) {
    if (argument.pattern) {
      if (!builtin.takes_pattern) {
        error(DiagnosticCode::E0504, argument.span, "`" + name + "` does not take an axis pattern", "unexpected pattern");
        ok = false;
      }
      pattern = &*argument.pattern;
      continue;
    }
    if (argument.keyword) {
      if (quoted_pattern) continue;
      if (!takes_keyword(builtin, *argument.keyword)) {
        std::vector<std::string> accepted(builtin.keywords.begin(), builtin.keywords.end());
        auto suggestion = suggest_name(*argument.keyword, accepted);
        auto d = report(DiagnosticCode::E0502, argument.keyword_span, "`" + name + "` has no argument `" + *argument.keyword + "`");
        d.label("unknown keyword").suggest(argument.keyword_span, suggestion);
        if (suggestion) suggested.insert(*suggestion);
        else d.note("`" + name + "` is `" + std::string(builtin.signature) + "`");
        // `keepdim=True` after `dim=[1, 2]`: the `rearrange` that fix writes keeps the axes.
        if (torch_dims_kept && is_keepdim_true(argument)) {
          d.help("the axes are kept, of size 1, by the `rearrange` that the fix for `dim=` writes around the reductions");
          d.emit();
          continue;
        }
        // PyTorch's `sum(x, dim=[1, 2])`: the reductions in turn its fix writes, and their value.
        if ((*argument.keyword == "dim" || *argument.keyword == "axis") && torch_dims.empty())
          if (auto turns = call_reduced_in_turn(builtin, expr, positional_types, scope)) {
            d.help("ShapeScript reduces one axis a call, picked by its name: `" + turns->written + "`")
                .fix("reduce one axis a call", written_call(expr), turns->written);
            suggested.insert("over");
            torch_dims = std::move(turns->positions);
            torch_dims_kept = turns->kept;
            d.emit();
            continue;
          }
        if (auto ours = torch_keyword_help(d, builtin, expr, argument, positional_types, scope)) {
          if (ours->empty()) {  // PyTorch's keyword for what ShapeScript knows (`training=`): the call is as without it
            d.emit();
            continue;
          }
          suggested.insert(*ours);
          // PyTorch's `dim=-1` of the first tensor: the call is checked as its `over=` fix writes it.
          // (For `stack`, whose `over=` makes an axis, a position in its result: one more than x has.)
          if (*ours == "over" && (*argument.keyword == "dim" || *argument.keyword == "axis") && !torch_dim && !positional_types.empty() &&
              positional_types[0].is_tensor() &&
              literal_position(argument.value.get(), positional_types[0].tensor.rank() + (over_names_a_new_axis(builtin) ? 1 : 0))) {
            torch_dim = argument.value.get();
            d.emit();
            continue;
          }
          // PyTorch's `is_causal=True`, where its fix writes `attn_mask=causal[n n]`: checked with that mask.
          if (*ours == "attn_mask" && *argument.keyword == "is_causal" && !keywords.count("attn_mask") && argument.value &&
              argument.value->kind == Expr::Kind::name && argument.value->text == "True" && !positional_types.empty() &&
              positional_types[0].is_tensor() && positional_types[0].tensor.rank() >= 2) {
            const TensorType& q = positional_types[0].tensor;
            const Axis& n = q.axes[q.rank() - 2];
            if (written_axis(n, q, scope)) {
              TensorType mask;
              mask.element.kind = ElementKind::bool_;
              mask.axes = {n, n};
              keywords["attn_mask"] = {&argument, ValueType::of(std::move(mask))};
              d.emit();
              continue;
            }
          }
        }
        d.emit();
        ok = false;
        continue;
      }
      // `over=` names an axis; it is resolved by the rule, not evaluated as a value.
      ValueType value = ValueType::unknown();
      if (argument.value && *argument.keyword != "over") value = eval(*argument.value, scope);
      keywords[*argument.keyword] = {&argument, value};
      continue;
    }
    positional.push_back(&argument);
    // `init(Tiny)` names a model's type, which is no value anywhere else.
    if (name == "init" && positional.size() == 1 && argument.value && argument.value->kind == Expr::Kind::name &&
        !scope.locals.count(argument.value->text)) {
      const Item* item = a_.find_item(argument.value->text);
      if (item && item->kind == Item::Kind::model) {
        ValueType model;
        model.kind = ValueType::Kind::model;
        model.name = item->name;
        hover(argument.value->span, "```shapescript\nmodel " + item->name + "\n```" + doc_suffix(item->doc));
        definition(argument.value->span, item->name_span);
        a_.semantics.types.set(argument.value.get(), model);
        positional_types.push_back(model);
        continue;
      }
    }
    positional_types.push_back(argument.value ? eval(*argument.value, scope) : ValueType::unknown());
  }
  // A missing pattern explains a surplus argument (a pattern written as a string) better than a count.
  // `split(x, S1, S2, over=A)` cuts by sizes instead: a built-in that takes `over=` needs one or the other.
  bool cuts_over = keywords.count("over") && takes_keyword(builtin, "over");
  if (builtin.takes_pattern && !pattern && !cuts_over) {
    const Argument* string_pattern = nullptr;
    for (const Argument* a : positional)
      if (a->value && a->value->kind == Expr::Kind::string) string_pattern = a;
    auto d = report(DiagnosticCode::E0504, string_pattern ? string_pattern->span : expr.span,
                    "`" + name + "` needs an axis pattern, as in `" + std::string(builtin.signature) + "`");
    d.label(string_pattern ? "a pattern is written without quotes" : "no pattern");
    if (auto written = unquoted_pattern_call(name, expr))
      d.help("a pattern is written without quotes, one name an axis: `" + *written + "`").fix("write the pattern", written_call(expr), *written);
    return ValueType::unknown();
  }
  int count = static_cast<int>(positional.size());
  if (count < builtin.min_positional || count > builtin.max_positional) {
    std::string expected = builtin.min_positional == builtin.max_positional
                               ? std::to_string(builtin.min_positional)
                               : std::to_string(builtin.min_positional) + " to " + std::to_string(builtin.max_positional);
    auto d = report(DiagnosticCode::E0501, expr.span, "`" + name + "` takes " + expected + " argument" + (expected == "1" ? "" : "s") + ", but " + std::to_string(count) +
            (count == 1 ? " was" : " were") + " given");
    d.label("`" + std::string(builtin.signature) + "`");
    if (expr.piped) d.note("`x |> f(a)` passes `x` as the first argument");
    // PyTorch's `layer_norm(x, (D,), w, b, eps)`: what ShapeScript names, given by position. The
    // call is checked as the fix writes it.
    if (auto named = torch_positional(builtin, expr, positional, positional_types, keywords, scope)) {
      d.help("PyTorch's `" + name + "` takes these by position, ShapeScript's by name: `" + named->written + "`")
          .fix("name the arguments", Span{positional[1]->span.begin, positional.back()->span.end}, named->written);
      d.emit();
      for (size_t i = 1; i < positional.size(); ++i)
        if (!named->keywords[i - 1].empty()) keywords[named->keywords[i - 1]] = {positional[i], positional_types[i]};
      positional.resize(1);
      positional_types.resize(1);
      torch_over = named->over;
      suggested.insert("over");
      count = 1;
    } else {
    // PyTorch's `softmax(x, -1)` and `x.sum(-1)`: the axis as a position after the tensor.
    bool takes_over = takes_keyword(builtin, "over");
    if (takes_over && !keywords.count("over") && count == builtin.max_positional + 1 && positional_types[0].is_tensor())
      if (auto at = literal_position(positional.back()->value.get(), positional_types[0].tensor.rank())) {
        const TensorType& x = positional_types[0].tensor;
        if (auto axis = written_axis(x.axes[*at], x, scope))
          d.help("ShapeScript picks an axis by its name, not its position: write `over=" + *axis + "`")
              .fix("write `over=" + *axis + "`", positional.back()->span, "over=" + *axis);
      }
    d.emit();
    return ValueType::unknown();
    }
  }
  for (std::string_view required : builtin.required_keywords)
    if (!keywords.count(std::string(required)) && !suggested.count(std::string(required))) {
      auto d = report(DiagnosticCode::E0503, expr.span, "`" + name + "` needs `" + std::string(required) + "=`");
      d.label("`" + std::string(builtin.signature) + "`");
      // `stack(x, y)`, as PyTorch's `torch.stack((x, y))` puts the new axis first: `over=2`, the count.
      const bool new_axis = over_names_a_new_axis(builtin);
      const bool all_tensors = !positional_types.empty() && std::ranges::all_of(positional_types, [](const ValueType& t) { return t.is_tensor(); });
      const std::string count = std::to_string(positional_types.size());
      if (required == "over" && new_axis && all_tensors)
        d.help("`over=` names the axis `" + name + "` makes, first, with one position per tensor: `over=" + count +
               "`, or a name for it (`over=K`, with `dim K = " + count + "` or an axis of that size)");
      if (required == "over")
        if (auto over = !new_axis ? implied_over(name, positional_types, scope) : all_tensors ? std::optional(count) : std::nullopt) {
          // Written inside the call's parentheses, or in new ones after a bare piped name (`x |> softmax`).
          std::string written = text(expr.span);
          bool others = expr.arguments.size() > (expr.piped ? 1u : 0u);  // written inside the parentheses
          std::string keyword = "over=" + *over;
          if (!written.empty() && written.back() == ')')
            d.fix("write `" + keyword + "`", Span{expr.span.end - 1, expr.span.end - 1}, (others ? ", " : "") + keyword);
          else
            d.fix("write `" + keyword + "`", Span{expr.span.end, expr.span.end}, "(" + keyword + ")");
          if (!new_axis)
            d.help(builtin.name == "cross_entropy" ? "the targets are `" + positional_types[1].tensor.element.to_string() + "`: the classes are the logits' axis `" + *over + "`"
                                                   : "the logits are `" + positional_types[0].tensor.element.to_string() + "`: `" + name + "` is along `" + *over + "`");
        }
      ok = false;
    }
  if (!ok || !builtin.rule) return ValueType::unknown();
  for (size_t i = 0; i < positional_types.size(); ++i)
    if (positional_types[i].is_unknown()) return ValueType::unknown();
  if (!torch_dims.empty()) return reductions_value(builtin, expr, *positional[0]->value, positional_types[0], torch_dims, torch_dims_kept, scope);
  CallChecker context(*this, expr, scope, positional, positional_types, keywords, pattern);
  context.facts = &facts;
  context.shape_ = shape;
  context.torch_dim = torch_dim;
  context.torch_over = torch_over;
  return builtin.rule(context);
}

// The `over=` a call's arguments' types already say: `Logit over A` logits are normalized over `A`, and
// `cross_entropy`'s `Index[V]` targets index the one axis of size V.
std::optional<std::string> Checker::implied_over(std::string_view builtin, const std::vector<ValueType>& arguments, const Scope& scope) const {
  if (arguments.empty() || !arguments[0].is_tensor()) return std::nullopt;
  const TensorType& x = arguments[0].tensor;
  auto only = [&](auto matches) -> std::optional<std::string> {
    const Axis* found = nullptr;
    for (const Axis& a : x.axes)
      if (matches(a)) {
        if (found) return std::nullopt;
        found = &a;
      }
    return found ? written_axis(*found, x, scope) : std::nullopt;
  };
  if (builtin == "cross_entropy" && arguments.size() == 2 && arguments[1].is_tensor() && arguments[1].tensor.element.kind == ElementKind::index &&
      !arguments[1].tensor.element.bound.is_zero())
    return only([&](const Axis& a) { return a.size == arguments[1].tensor.element.bound; });
  bool normalizes = builtin == "softmax" || builtin == "log_softmax" || builtin == "cross_entropy";  // what logits are for
  if (normalizes && x.element.kind == ElementKind::logit && !x.element.over.empty())
    return only([&](const Axis& a) { return a.name == x.element.over || a.label == x.element.over; });
  return std::nullopt;
}

// How `over=` can pick `axis` of `tensor` here, for a fix to write: its name, where this function
// knows the name as that very size, or for an axis with no name its size, where each name in it
// is one of this function's axes and no other axis of the tensor has that size.
std::optional<std::string> Checker::written_axis(const Axis& axis, const TensorType& tensor, const Scope& scope) const {
  if (!axis.name.empty()) {
    if (const KnownDim* dim = known_dim(axis.name); dim && dim->size == axis.size) return axis.name;
    if (auto bound = scope.axes.find(axis.name); bound != scope.axes.end() && bound->second.size == axis.size) return axis.name;
    return std::nullopt;
  }
  if (!names_its_axes(axis.size, scope)) return std::nullopt;
  if (std::count_if(tensor.axes.begin(), tensor.axes.end(), [&](const Axis& a) { return a.size == axis.size; }) != 1) return std::nullopt;
  return axis.size.to_string();
}

// Each name in `size` is one of this function's axes, as that very size: the size can be written here.
// (`?k`, a size known only as the program runs, is bound in scope too, but no value names it.)
bool Checker::names_its_axes(const SizeExpr& size, const Scope& scope) {
  return std::ranges::all_of(size.variables(), [&](const std::string& v) {
    auto bound = scope.axes.find(v);
    return !v.starts_with("?") && bound != scope.axes.end() && bound->second.size == SizeExpr::variable(v);
  });
}

// Each name in `size` is one of this function's axes or a dim: the size can be written in a type or pattern here.
bool Checker::writable_here(const SizeExpr& size, const Scope& scope) const {
  return std::ranges::all_of(size.variables(), [&](const std::string& v) {
    SizeExpr only = SizeExpr::variable(v);
    return names_its_axes(only, scope) || known_dim(v);
  });
}

// The size of `axis` as a value this function can write: as over= would pick it (written_axis),
// else the size itself (`8`, `n+1`) where each name in it is one of this function's axes.
std::optional<std::string> Checker::size_as_value(const Axis& axis, const TensorType& tensor, const Scope& scope) const {
  if (auto written = written_axis(axis, tensor, scope)) return written;
  if (names_its_axes(axis.size, scope)) return axis.size.to_string();
  return std::nullopt;
}

// `transpose(x, 1, 2)`, `permute(x, 0, 2, 1)`, `unsqueeze(x, 1)` and `squeeze(x, 1)`, where none is
// defined: PyTorch's, reported as E0201 with the `rearrange` they are, written out where every axis
// has a name and each position is a number; `zeros_like(x)` and its kin, with x's shape; and
// Python's `len(x)`, with the name of x's first axis. Unknown (reported) when it is one of them;
// nullopt otherwise.
std::optional<ValueType> Checker::torch_axes_call(const Expr& expr, Scope& scope) {
  const Expr& callee = *expr.operands[0];
  static const std::set<std::string, std::less<>> kNames = {"transpose", "permute", "unsqueeze", "squeeze", "len", "zeros_like", "ones_like", "full_like", "float"};
  if (callee.kind != Expr::Kind::name || !kNames.count(callee.text) || scope.locals.count(callee.text) ||
      scope.axes.count(callee.text) || known_dim(callee.text) || globals_.count(callee.text) || lost_in_syntax_error(callee.text))
    return std::nullopt;
  std::vector<ValueType> arguments;
  for (const Argument& argument : expr.arguments) arguments.push_back(argument.value ? eval(*argument.value, scope) : ValueType::unknown());
  a_.semantics.types.set(&callee, ValueType::unknown());
  if (callee.text == "len") {  // Python's size of the first axis
    auto d = report(DiagnosticCode::E0201, callee.span, "no value named `len`");
    d.label("not defined");
    if (arguments.size() == 1 && arguments[0].is_tensor() && arguments[0].tensor.rank() > 0) axis_size_help(d, expr, arguments[0].tensor, 0, scope);
    return ValueType::unknown();
  }
  if (callee.text == "float") {  // Python's `float("-inf")`: `-inf`
    auto d = report(DiagnosticCode::E0201, callee.span, "no value named `float`");
    d.label("not defined");
    const Expr* value = expr.arguments.size() == 1 && !expr.arguments[0].keyword ? expr.arguments[0].value.get() : nullptr;
    std::string infinity = value && value->kind == Expr::Kind::string ? value->text : "";
    if (infinity == "inf" || infinity == "-inf" || infinity == "+inf")
      d.help("infinity is written `inf`, and its negation `-inf`").fix("write `" + infinity.substr(infinity[0] == '+') + "`", written_call(expr), infinity.substr(infinity[0] == '+'));
    else
      d.help("a number is written as it is (`0.5`, `inf`), and a tensor of integers becomes `Real` where a `Real` is expected");
    return ValueType::unknown();
  }
  if (callee.text.ends_with("_like")) {  // `zeros_like(x)`: `zeros[b n D]`
    const TorchName& torch = *torch_name(callee.text);
    auto d = report(DiagnosticCode::E0201, callee.span, "no value named `" + callee.text + "`");
    d.label("not defined");
    if (auto written = like_call(callee.text, expr, arguments.empty() ? ValueType::unknown() : arguments[0],
                                 expr.arguments.size() > 1 ? text(expr.arguments[1].span) : ""))
      d.help("PyTorch's `" + callee.text + "` is `" + std::string(torch.ours) + "` here, written with the shape: `" + *written + "`")
          .fix("write `" + *written + "`", written_call(expr), *written);
    else
      d.help("PyTorch's `" + callee.text + "` is `" + std::string(torch.ours) + "` here: " + std::string(torch.how));
    return ValueType::unknown();
  }
  std::optional<std::string> pattern;
  ValueType value = ValueType::unknown();  // the moved axes', so the lines after it are checked
  if (!arguments.empty() && arguments[0].is_tensor() && !expr.arguments[0].keyword) {
    std::vector<const Expr*> positions;
    for (size_t i = 1; i < expr.arguments.size(); ++i) positions.push_back(expr.arguments[i].keyword ? nullptr : expr.arguments[i].value.get());
    // The call form, not a pipe, so that it binds as the call it replaces does inside `a + transpose(x, 1, 2)`.
    if (auto to = moved_axes(callee.text, arguments[0].tensor, positions)) {
      if (auto moved = moved_axes_pattern(arguments[0].tensor, *to, writable_in(scope)))
        pattern = "rearrange(" + text(expr.arguments[0].span) + ", " + *moved + ")";
      value = ValueType::of(moved_axes_type(arguments[0].tensor, *to));
    }
  }
  auto d = report(DiagnosticCode::E0201, callee.span, "no value named `" + callee.text + "`");
  d.label("not defined");
  if (pattern)
    d.help("PyTorch's `" + callee.text + "` is `rearrange` here, whose pattern names the axes: `" + *pattern + "`")
        .fix("write `rearrange`", written_call(expr), *pattern);
  else
    d.help("PyTorch's `" + callee.text + "` is `rearrange` here: " + std::string(torch_name(callee.text)->how));
  return value;
}

// PyTorch's arguments by position where ShapeScript names them: after the tensor, each is the
// keyword it is here; `over` stands for PyTorch's `normalized_shape`, the last axes' sizes.
struct TorchPositional {
  std::string_view builtin;
  std::vector<std::string_view> after;
};
const TorchPositional kTorchPositional[] = {
    {"layer_norm", {"over", "weight", "bias", "eps"}},
    {"rms_norm", {"over", "weight", "eps"}},
    {"dropout", {"p"}},
};

std::optional<Checker::NamedArguments> Checker::torch_positional(const Builtin& builtin, const Expr& call, const std::vector<const Argument*>& positional,
                                                                 const std::vector<ValueType>& types,
                                                                 const std::map<std::string, std::pair<const Argument*, ValueType>>& keywords,
                                                                 Scope& scope) {
  auto entry = std::find_if(std::begin(kTorchPositional), std::end(kTorchPositional), [&](const TorchPositional& t) { return t.builtin == builtin.name; });
  if (entry == std::end(kTorchPositional) || positional.size() < 2 || positional.size() - 1 > entry->after.size() || call.piped || !types[0].is_tensor())
    return std::nullopt;
  const TensorType& x = types[0].tensor;
  NamedArguments named;
  for (size_t i = 1; i < positional.size(); ++i) {
    const std::string keyword(entry->after[i - 1]);
    if (keywords.count(keyword) || !positional[i]->value) return std::nullopt;
    std::string value;
    if (keyword == "over") {
      // `(D,)`, `[D]` or `D`: the normalized shape, one size, which must be x's last axis.
      std::string shape(a_.file.slice(positional[i]->span));
      std::erase_if(shape, [](char c) { return c == '(' || c == ')' || c == '[' || c == ']' || c == ' '; });
      if (shape.ends_with(",")) shape.pop_back();
      auto last = x.rank() ? written_axis(x.axes.back(), x, scope) : std::nullopt;
      if (!last || shape != *last) return std::nullopt;
      value = *last;
      named.over = x.rank() - 1;
      named.keywords.emplace_back();  // read as the axis, not kept as a keyword
    } else {
      value = written_as_fixed(*positional[i]->value);
      named.keywords.push_back(keyword);
    }
    named.written += (named.written.empty() ? "" : ", ") + keyword + "=" + value;
  }
  return named;
}

// PyTorch's keywords for what ShapeScript says otherwise: someone coming from torch writes
// `softmax(x, dim=-1)` and `scaled_dot_product_attention(q, k, v, is_causal=True)`. Returns the
// keyword it stands for here, or an empty one for what ShapeScript needs no keyword for.
std::optional<std::string> Checker::torch_keyword_help(DiagnosticBuilder& d, const Builtin& builtin, const Expr& call, const Argument& argument,
                                                       const std::vector<ValueType>& positional, Scope& scope) {
  const std::string& keyword = *argument.keyword;
  const TensorType* first = !positional.empty() && positional[0].is_tensor() ? &positional[0].tensor : nullptr;
  if ((keyword == "dim" || keyword == "axis") && takes_keyword(builtin, "over") && over_names_a_new_axis(builtin)) {
    const std::string why = "`" + std::string(builtin.name) + "`'s `over=` names the axis it makes, which comes first (`" + std::string(builtin.signature) + "`)";
    if (auto fix = new_axis_moved(builtin, call, argument, positional, scope)) {
      if (!fix->whole_call)
        d.help(why + ", with one position per tensor: `" + fix->written + "`").fix("write `" + fix->written + "`", argument.span, fix->written);
      else
        d.help(why + ": PyTorch's `" + keyword + "=` puts it elsewhere, where `rearrange` moves it: `" + fix->written + "`")
            .fix("write the `rearrange`", written_call(call), fix->written);
    } else {
      d.help(why + ": PyTorch's `" + keyword + "=` puts it elsewhere, so give it a name and, where it goes elsewhere, move it there with `rearrange`");
    }
    return "over";
  }
  if ((keyword == "dim" || keyword == "axis") && takes_keyword(builtin, "over")) {
    const Expr* value = argument.value.get();
    std::optional<std::string> axis;
    if (value && first) {
      if (auto at = literal_position(value, first->rank())) axis = written_axis(first->axes[*at], *first, scope);
      else if (value->kind == Expr::Kind::name) axis = value->text;
    }
    const std::string why = "ShapeScript picks an axis by its name, not its position: ";
    auto at = value && first ? literal_position(value, first->rank()) : std::nullopt;
    if (axis) d.help(why + "write `over=" + *axis + "`").fix("write `over=" + *axis + "`", argument.span, "over=" + *axis);
    else if (at && first->axes[*at].name.empty() &&
             std::count_if(first->axes.begin(), first->axes.end(), [&](const Axis& a) { return a.size == first->axes[*at].size; }) > 1)
      d.help(why + "axis " + std::to_string(*at + 1) + " of " + first->to_string() + " has no name and another axis has its size, so give it a name " +
             "where it is declared (`[.. c]`, or a `dim`) and write `over=` with it");
    else d.help(why + "`over=` with the axis's name (or, for one with no name, its size)");
    return "over";
  }
  if (keyword == "training" && builtin.effect == BuiltinEffect::random) {
    // `F.dropout(x, p=0.1, training=self.training)`: the mode is the program's, not the call's.
    d.help("`" + std::string(builtin.name) + "` is active only while training, which ShapeScript knows from where the program runs " +
           "(`train_mode`): remove `" + keyword + "=`");
    const Argument* before = nullptr;  // the fix takes the comma before it too
    for (const Argument& a : call.arguments) {
      if (&a == &argument) break;
      before = &a;
    }
    if (before) d.fix("remove `" + keyword + "=`", Span{before->span.end, argument.span.end}, "");
    return std::string();
  }
  if (keyword == "is_causal" && takes_keyword(builtin, "attn_mask")) {
    // The query's positions are its second axis from the end: `causal[n n]` masks them against themselves.
    std::optional<std::string> n;
    if (first && first->rank() >= 2) n = written_axis(first->axes[first->rank() - 2], *first, scope);
    std::string mask = "causal[" + (n ? *n + " " + *n : std::string("n n")) + "]";
    d.help("a causal mask is `attn_mask=" + mask + "`, which becomes torch's `is_causal=True`");
    if (n && argument.value && argument.value->kind == Expr::Kind::name && argument.value->text == "True")
      d.fix("write `attn_mask=" + mask + "`", argument.span, "attn_mask=" + mask);
    return "attn_mask";
  }
  if (keyword == "keepdim" && takes_keyword(builtin, "over")) {
    if (auto kept = kept_axis(builtin, call, argument, first, scope)) {
      d.help("the axis `over=` names is gone from the result, and a pattern puts a 1 in its place: `" + *kept + "`")
          .fix("write the pattern", written_call(call), *kept);
    } else {
      d.help("the axis `over=` names is gone from the result, and a pattern puts a 1 in its place: `mean(x, over=D) |> rearrange(b n -> b n 1)`");
    }
  }
  return std::nullopt;
}

// PyTorch's several axes of a reduction, given after the tensor: `sum(x, dim=[1, 2])`, `dim=(-2, -1)`,
// or `x.mean((-2, -1))` (the tuple read as the arguments), with `keepdim=True` or not. The fix is
// one reduction an axis, `sum(sum(x, over=n), over=D)`. None unless the built-in reduces its
// `over=` away and each axis is a distinct literal position of an axis with a name here.
std::optional<Checker::ReducedInTurn> Checker::reduced_in_turn(const Builtin& builtin, const std::vector<const Argument*>& after_tensor,
                                                               const TensorType& x, const std::string& x_written, const Scope& scope) const {
  if (!over_removes_the_axis(builtin)) return std::nullopt;
  ReducedInTurn turns;
  std::vector<const Argument*> axes;
  for (const Argument* a : after_tensor) {
    if (is_keepdim_true(*a) && !turns.kept) turns.kept = true;
    else axes.push_back(a);
  }
  // One `dim=` list (its items kept by the lowering on the error node), or several positions.
  std::vector<const Expr*> items;
  if (axes.size() == 1 && axes[0]->keyword && (*axes[0]->keyword == "dim" || *axes[0]->keyword == "axis") && axes[0]->value &&
      axes[0]->value->kind == Expr::Kind::error) {
    for (const Argument& item : axes[0]->value->arguments) items.push_back(item.keyword ? nullptr : item.value.get());
  } else {
    for (const Argument* a : axes) items.push_back(a->keyword ? nullptr : a->value.get());
  }
  if (items.size() < 2) return std::nullopt;
  for (const Expr* item : items) {
    auto at = literal_position(item, x.rank());
    if (!at || std::ranges::find(turns.positions, *at) != turns.positions.end()) return std::nullopt;
    turns.positions.push_back(*at);
  }
  auto written = reductions_written(builtin, x_written, turns.positions, x, turns.kept, scope);
  if (!written) return std::nullopt;
  turns.written = std::move(*written);
  return turns;
}

// reduced_in_turn of a function's call, `sum(x, dim=[1, 2])`: x its first argument, not piped in.
std::optional<Checker::ReducedInTurn> Checker::call_reduced_in_turn(const Builtin& builtin, const Expr& call, const std::vector<ValueType>& positional,
                                                                    const Scope& scope) const {
  if (!over_removes_the_axis(builtin) || call.piped || positional.size() != 1 || !positional[0].is_tensor() || call.arguments.empty() || call.arguments[0].keyword ||
      !call.arguments[0].value)
    return std::nullopt;
  std::vector<const Argument*> after_tensor;
  for (size_t i = 1; i < call.arguments.size(); ++i) after_tensor.push_back(&call.arguments[i]);
  return reduced_in_turn(builtin, after_tensor, positional[0].tensor, written_as_fixed(*call.arguments[0].value), scope);
}

// The method, `x.sum(dim=[1, 2])`: the fix and its value. False, doing nothing, where there is none.
bool Checker::method_reduced_in_turn(DiagnosticBuilder& d, const Builtin& builtin, const Expr& method, const Expr& call, const ValueType& object,
                                     const std::string& x, Scope& scope) {
  if (!object.is_tensor()) return false;
  std::vector<const Argument*> after_tensor;
  for (const Argument& a : call.arguments) after_tensor.push_back(&a);
  auto turns = reduced_in_turn(builtin, after_tensor, object.tensor, x, scope);
  if (!turns) return false;
  d.help("PyTorch's `." + method.text + "` over several axes is one reduction an axis here, each picked by its name: `" + turns->written + "`")
      .fix("reduce one axis a call", call.span, turns->written);
  fixed_text_[&call] = turns->written;
  ValueType value = reductions_value(builtin, call, *method.operands[0], object, turns->positions, turns->kept, scope);
  if (!value.is_unknown()) call_value(call, std::move(value));
  return true;
}

// `sum(sum(x, over=n), over=D)`: x reduced along each of its axes at `positions`, in turn, each by
// its name; none where one has no name here.
std::optional<std::string> Checker::reductions_written(const Builtin& builtin, std::string x_written, const std::vector<size_t>& positions,
                                                       const TensorType& x, bool keep, const Scope& scope) const {
  for (size_t at : positions) {
    auto axis = written_axis(x.axes[at], x, scope);
    if (!axis) return std::nullopt;
    x_written = std::string(builtin.name) + "(" + x_written + ", over=" + *axis + ")";
  }
  if (!keep) return x_written;
  // `keepdim=True`: a 1 where each reduced axis was, `rearrange(.., b c -> b c 1 1)`.
  auto pattern = kept_axes_pattern(x, positions, writable_in(scope));
  if (!pattern) return std::nullopt;
  return "rearrange(" + x_written + ", " + *pattern + ")";
}

// The value of those reductions: each of the result of the one before, where a later axis has
// moved down a place for each earlier one removed before it.
ValueType Checker::reductions_value(const Builtin& builtin, const Expr& call, const Expr& x_expr, ValueType value, const std::vector<size_t>& positions,
                                    bool keep, Scope& scope) {
  const size_t rank = value.is_tensor() ? value.tensor.rank() : 0;
  for (size_t i = 0; i < positions.size() && value.is_tensor(); ++i) {
    size_t at = positions[i];
    for (size_t j = 0; j < i; ++j) at -= positions[j] < positions[i] ? 1 : 0;
    value = fixed_call_value(*this, scope, &builtin, call, {{&x_expr, x_expr.span, value}}, at);
  }
  if (keep && value.is_tensor() && value.tensor.rank() + positions.size() == rank)
    value.tensor = moved_axes_type(value.tensor, kept_axis_order(rank, positions));
  return value;
}

// PyTorch's `stack([x, y], dim=1)` of `x, y: [b n D]`: `stack(x, y, over=2)` makes the new axis,
// with one position per tensor, first; `rearrange(stack(x, y, over=2), 2 b n D -> b 2 n D)` moves
// it where `dim=` puts it (`over=2` alone for `dim=0`). None unless `dim=` is a literal position,
// every argument before it is a tensor and x's axes can be written in a pattern apart from the count.
std::optional<Checker::NewAxisFix> Checker::new_axis_moved(const Builtin& builtin, const Expr& call, const Argument& dim,
                                                           const std::vector<ValueType>& positional, const Scope& scope) const {
  if (positional.empty() || !std::ranges::all_of(positional, [](const ValueType& t) { return t.is_tensor(); })) return std::nullopt;
  const TensorType& x = positional[0].tensor;
  auto at = literal_position(dim.value.get(), x.rank() + 1);
  if (!at) return std::nullopt;
  const std::string count = std::to_string(positional.size());
  if (*at == 0) return NewAxisFix{"over=" + count, false};
  auto axes = pattern_axes(x, writable_in(scope));
  if (!axes || std::ranges::find(*axes, count) != axes->end()) return std::nullopt;
  std::vector<std::string> moved = *axes;
  moved.insert(moved.begin() + static_cast<std::ptrdiff_t>(*at), count);
  std::vector<std::string> made = *axes;
  made.insert(made.begin(), count);
  std::string stacked = std::string(builtin.name) + "(";
  for (const Argument& a : call.arguments)  // each as its own fix writes it, so one round does
    if (&a != &dim) stacked += (a.value && !a.keyword ? written_as_fixed(*a.value) : text(a.span)) + ", ";
  return NewAxisFix{"rearrange(" + stacked + "over=" + count + "), " + joined_axes(made) + " -> " + joined_axes(moved) + ")", true};
}

// PyTorch's `mean(x, over=D, keepdim=True)` (and `sum`, `max`...) of an `x: [b n D]`: the reduction
// with a 1 put where its axis was, `rearrange(mean(x, over=D), b n -> b n 1)`, a call so that it
// binds as the one it replaces in `x - mean(..)`. None unless `over=` names one axis of x, each of
// x's axes can be written in a pattern, and keepdim is `True`.
std::optional<std::string> Checker::kept_axis(const Builtin& builtin, const Expr& call, const Argument& keepdim, const TensorType* x,
                                              const Scope& scope) const {
  if (!x || !keepdim.value || keepdim.value->kind != Expr::Kind::name || keepdim.value->text != "True") return std::nullopt;
  const Argument* over = nullptr;
  for (const Argument& a : call.arguments)
    if (a.keyword && *a.keyword == "over" && a.value && a.value->kind == Expr::Kind::name) over = &a;
  if (!over) return std::nullopt;
  std::optional<size_t> at;
  for (size_t i = 0; i < x->rank(); ++i)
    if (x->axes[i].name == over->value->text || x->axes[i].label == over->value->text) {
      if (at) return std::nullopt;
      at = i;
    }
  if (!at) return std::nullopt;
  auto pattern = kept_axes_pattern(*x, {*at}, writable_in(scope));
  if (!pattern) return std::nullopt;
  std::string reduction = std::string(builtin.name) + "(";
  bool first_argument = true;
  for (const Argument& a : call.arguments) {
    if (&a == &keepdim) continue;
    reduction += (first_argument ? "" : ", ") + text(a.span);
    first_argument = false;
  }
  return "rearrange(" + reduction + "), " + *pattern + ")";
}

// `map(n, i => e)`: e for each i in 0..n, stacked along a new axis of size n.
ValueType Checker::call_map(const Expr& expr, Scope& scope, CallFacts& facts) {
  if (expr.arguments.size() != 2 || !expr.arguments[0].value || !expr.arguments[1].value) {
    error(DiagnosticCode::E0501, expr.span, "`map` takes a size and a lambda, as in `n |> map(i => i)`", "`map(n, i => e)`");
    return ValueType::unknown();
  }
  const Expr& count = *expr.arguments[0].value;
  const Expr& lambda = *expr.arguments[1].value;
  ValueType n = eval(count, scope);
  if (n.is_unknown()) return n;
  // `xs |> map(x => e)` maps over the slices of `xs` along its first axis.
  bool slices = n.is_tensor() && n.tensor.rank() > 0;
  if (!slices && (!is_int_scalar(n) || !n.known_size)) {
    error(DiagnosticCode::E0505, count.span, "`map` maps over a size, such as an axis name, or a tensor's first axis, but this is " + n.to_string(),
          "not a size or a tensor");
    return ValueType::unknown();
  }
  if (lambda.kind != Expr::Kind::lambda || lambda.operands.empty()) {
    error(DiagnosticCode::E0505, lambda.span, "`map` needs a lambda, as in `i => i * 2`", "not a lambda");
    return ValueType::unknown();
  }
  Scope inner = scope;
  ValueType index = ValueType::scalar(ElementKind::index);
  if (slices) {
    TensorType slice = n.tensor;
    slice.axes.erase(slice.axes.begin());
    index = ValueType::of(slice);
  } else {
    index.tensor.element.bound = *n.known_size;
    index.tensor.element.bound_label = text(count.span);
  }
  inner.locals[lambda.text] = {index, lambda.text_span};
  hover(lambda.text_span, "```shapescript\n" + lambda.text + ": " + index.to_string() + "\n```");
  ValueType body = eval(*lambda.operands[0], inner);
  a_.semantics.types.set(&lambda, body);
  auto element = require_tensor(body, lambda.operands[0].get(), lambda.operands[0]->span);
  if (!element) return ValueType::unknown();
  Axis axis;
  if (slices) {
    axis = n.tensor.axes.front();
  } else {
    axis.size = *n.known_size;
    axis.label = text(count.span);
    axis.name = count.kind == Expr::Kind::name ? count.text : "";
  }
  element->axes.insert(element->axes.begin(), axis);
  facts.lowering["over"] = axis.size.to_string();
  if (slices) facts.lowering["slices"] = "1";
  // `n |> map(i => exp(-2 * i / Dh))` is the same expression on `0..n` at once: no vmap needed.
  bool mentions_index = false;
  if (!slices && element->rank() == 1 && elementwise_in(*lambda.operands[0], lambda.text, mentions_index) && mentions_index)
    facts.lowering["elementwise"] = "1";
  return ValueType::of(*element);
}

// `experts(x, chosen, weights, e => rows => body)`: each token of x ([.. D]) goes to the K experts
// `chosen` names ([.. K] Index[E]); expert e computes `body` on the rows routed to it ([t D], t known
// only when it runs) and gives [t D2]; the result is each token's K outputs weighted by `weights`
// ([.. K]) and summed: [.. D2]. Only the chosen experts compute, so the cost grows with K, not E.
ValueType Checker::call_experts(const Expr& expr, Scope& scope, CallFacts& facts) {
  const char* usage = "`experts(x, chosen, weights, e => rows => body)`";
  std::vector<const Argument*> positional;
  for (const Argument& argument : expr.arguments) {
    if (argument.keyword || argument.pattern || !argument.value) {
      error(DiagnosticCode::E0502, argument.span, "`experts` takes its arguments by position: " + std::string(usage), "not by position");
      return ValueType::unknown();
    }
    positional.push_back(&argument);
  }
  if (positional.size() != 4) {
    report(DiagnosticCode::E0501, expr.span, "`experts` takes 4 arguments, but " + std::to_string(positional.size()) +
                                                 (positional.size() == 1 ? " was" : " were") + " given")
        .label(usage);
    return ValueType::unknown();
  }
  std::optional<TensorType> parts[3];
  for (size_t i = 0; i < 3; ++i) {
    const Expr& value = *positional[i]->value;
    ValueType type = eval(value, scope);
    if (type.is_unknown()) return type;
    parts[i] = require_tensor(type, &value, value.span);
  }
  const Expr& lambda = *positional[3]->value;
  if (!parts[0] || !parts[1] || !parts[2]) return ValueType::unknown();
  TensorType &x = *parts[0], &chosen = *parts[1], &weights = *parts[2];
  Span x_span = positional[0]->value->span, chosen_span = positional[1]->value->span, weights_span = positional[2]->value->span;
  if (x.rank() == 0 || chosen.rank() == 0) {
    error(DiagnosticCode::E0306, x.rank() == 0 ? x_span : chosen_span,
          "`experts` routes the rows of `x: [.. D]` by `chosen: [.. K] Index[E]`, so each needs at least one axis",
          "this is " + (x.rank() == 0 ? x : chosen).to_string());
    return ValueType::unknown();
  }
  if (chosen.element.kind != ElementKind::index || chosen.element.bound.is_zero()) {
    report(DiagnosticCode::E0401, chosen_span, "`experts` needs the chosen experts as `Index[E]`, E the number of experts, but these are `" +
                                                  chosen.element.to_string() + "`")
        .label("this is " + chosen.to_string())
        .help("choose them with `topk(scores, k=K, over=E)`, whose indices are `[.. K] Index[E]`");
    return ValueType::unknown();
  }
  auto count = chosen.element.bound.constant_value();
  if (!count || *count < 1) {
    error(DiagnosticCode::E0401, chosen_span, "`experts` needs a fixed number of experts, but these are `" + chosen.element.to_string() + "`",
          "not a fixed number of experts");
    return ValueType::unknown();
  }
  // Every token has its K choices and their K weights: chosen [.. K] and weights [.. K] over x's [..].
  bool ok = true;
  if (chosen.rank() != x.rank()) {
    error(DiagnosticCode::E0306, chosen_span,
          "`chosen` must be `[.. K]` over the tokens of `x` " + x.to_string() + ", so " + std::to_string(x.rank()) + " axes, but it is " + chosen.to_string(),
          "this is " + chosen.to_string());
    return ValueType::unknown();
  }
  for (size_t i = 0; i + 1 < x.rank(); ++i)
    ok = expect_same_size(x.axes[i], chosen.axes[i], chosen_span, "the tokens' " + dim_word(i)) && ok;
  if (weights.rank() != chosen.rank()) {
    error(DiagnosticCode::E0306, weights_span, "`weights` must have the shape of `chosen`, " + chosen.to_string() + ", but it is " + weights.to_string(),
          "this is " + weights.to_string());
    return ValueType::unknown();
  }
  for (size_t i = 0; i < chosen.rank(); ++i)
    ok = expect_same_size(chosen.axes[i], weights.axes[i], weights_span, "the weights' " + dim_word(i)) && ok;
  if (!weights.element.is_real()) {
    error(DiagnosticCode::E0401, weights_span, "`weights` must be real numbers, but they are `" + weights.element.to_string() + "`",
          "this is " + weights.to_string());
    ok = false;
  }
  const Expr* rows_lambda = lambda.kind == Expr::Kind::lambda && !lambda.operands.empty() ? lambda.operands[0].get() : nullptr;
  if (!rows_lambda || rows_lambda->kind != Expr::Kind::lambda || rows_lambda->operands.empty()) {
    error(DiagnosticCode::E0505, lambda.span, "`experts` needs the expert as a lambda of its index and its rows, `e => rows => body`",
          "not `e => rows => body`");
    return ValueType::unknown();
  }
  // e: Index[E], which indexes the experts' stacked parameters; rows: [t D], t the rows routed to e.
  Scope inner = scope;
  ValueType index = ValueType::scalar(ElementKind::index);
  index.tensor.element = chosen.element;
  inner.locals[lambda.text] = {index, lambda.text_span};
  hover(lambda.text_span, "```shapescript\n" + lambda.text + ": " + index.to_string() + "\n```");
  Axis routed;
  routed.name = "t";
  routed.label = "t";
  routed.size = SizeExpr::variable("?t" + std::to_string(rows_lambda->text_span.begin));
  routed.bound_at = rows_lambda->text_span;
  TensorType rows;
  rows.axes = {routed, x.axes.back()};
  rows.element = x.element;
  inner.locals[rows_lambda->text] = {ValueType::of(rows), rows_lambda->text_span};
  hover(rows_lambda->text_span, "```shapescript\n" + rows_lambda->text + ": " + rows.to_string() +
                                    "\n```\nthe rows routed to expert `" + lambda.text + "`: `t` is known only when it runs");
  const Expr& body_expr = *rows_lambda->operands[0];
  ValueType body = eval(body_expr, inner);
  a_.semantics.types.set(&lambda, body);
  a_.semantics.types.set(rows_lambda, body);
  auto out = require_tensor(body, &body_expr, body_expr.span);
  if (!out || !ok) return ValueType::unknown();
  if (out->rank() != 2 || out->axes[0].size != routed.size) {
    error(DiagnosticCode::E0306, body_expr.span,
          "an expert gives one row per row it is given, `[t D2]` for `" + rows_lambda->text + ": " + rows.to_string() + "`, but this is " + out->to_string(),
          "this is " + out->to_string());
    return ValueType::unknown();
  }
  facts.lowering["experts"] = std::to_string(*count);
  TensorType result = x;
  result.axes.back() = out->axes[1];
  result.element = ElementType{};
  return ValueType::of(result);
}

// Whether `e` is built only from numbers, names of scalars, arithmetic and element-wise built-ins,
// so that evaluating it on a vector of indices gives each index's value.
bool Checker::elementwise_in(const Expr& e, const std::string& index, bool& mentions_index) const {
  switch (e.kind) {
    case Expr::Kind::number: return true;
    case Expr::Kind::name: {
      if (e.text == index) mentions_index = true;
      auto type = a_.semantics.types.find(&e);
      return type && (!type->is_tensor() || type->tensor.rank() == 0 || e.text == index);
    }
    case Expr::Kind::unary:
    case Expr::Kind::binary:
      for (const ExprPtr& operand : e.operands)
        if (!operand || !elementwise_in(*operand, index, mentions_index)) return false;
      return true;
    case Expr::Kind::call: {
      auto facts = a_.semantics.calls.find(&e);
      if (!facts || !facts->builtin || !is_elementwise(*facts->builtin)) return false;
      for (const Argument& argument : e.arguments)
        if (!argument.keyword && (!argument.value || !elementwise_in(*argument.value, index, mentions_index))) return false;
      return true;
    }
    default: return false;
  }
}

ValueType Checker::call_function(const Item& item, const Expr& expr, Scope& scope, CallFacts& facts) {
  facts.function = &item;
  if (current_)
    uses_[current_].push_back({item.kind == Item::Kind::extern_fn ? Use::Kind::extern_call : Use::Kind::call, expr.operands[0]->span,
                               item.kind == Item::Kind::extern_fn ? item.extern_target : item.name, &item, &expr, std::nullopt});
  const FunctionSignature& signature = this->signature(&item);
  std::vector<std::pair<const Argument*, ValueType>> arguments;
  for (const Argument& argument : expr.arguments) {
    if (argument.keyword || argument.pattern) {
      error(DiagnosticCode::E0502, argument.span, "`" + item.name + "` takes its arguments by position", "not by name");
      return ValueType::unknown();
    }
    arguments.emplace_back(&argument, argument.value ? eval(*argument.value, scope) : ValueType::unknown());
  }
  if (arguments.size() != signature.parameters.size()) {
    report(DiagnosticCode::E0501, expr.span, "`" + item.name + "` takes " + std::to_string(signature.parameters.size()) + " argument" +
            (signature.parameters.size() == 1 ? "" : "s") + ", but " + std::to_string(arguments.size()) +
            (arguments.size() == 1 ? " was" : " were") + " given").label("`" + signature_text(item) + "`")
        .secondary(item.name_span, "defined here");
    return ValueType::unknown();
  }
  bool ok = true;
  bool extern_fn = item.kind == Item::Kind::extern_fn;
  std::optional<TensorType> lifted;  // an extern fn's scalar parameters lift over tensor arguments
  SizeBindings& bindings = facts.bindings;
  std::map<std::string, std::string> labels, names;  // a generic axis's label and name at the call site
  std::map<std::string, std::pair<Span, size_t>> bound_by;  // the argument and axis that bound it
  struct Pending {
    size_t parameter, axis;
  };
  std::vector<Pending> pending;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const auto& [argument, value] = arguments[i];
    const ValueType& parameter = signature.parameters[i];
    if (value.is_unknown() || parameter.is_unknown()) {
      ok = false;
      continue;
    }
    if (value.kind == ValueType::Kind::python) {
      python_without_as(*argument->value, parameter.is_tensor() ? std::optional(parameter.tensor.to_string()) : std::nullopt);
      ok = false;
      continue;
    }
    if (parameter.kind == ValueType::Kind::model) {
      if (value.kind != ValueType::Kind::model || value.name != parameter.name) {
        error(DiagnosticCode::E0505, argument->span, "`" + item.name + "`'s `" + signature.names[i] + "` is a `" + parameter.name + "`, but this is " + value.to_string(),
              "not a `" + parameter.name + "`");
        ok = false;
      }
      continue;
    }
    auto tensor = require_tensor(value, argument->value.get(), argument->span);
    if (!tensor || !parameter.is_tensor()) {
      ok = false;
      continue;
    }
    const TensorType& want = parameter.tensor;
    if (extern_fn && want.rank() == 0 && tensor->rank() > 0) {
      TensorType shape = *tensor;
      if (lifted) {
        auto joined = broadcast(*lifted, shape, argument->span);
        if (!joined) return ValueType::unknown();
        lifted = joined;
      } else {
        lifted = shape;
      }
    } else if (tensor->rank() != want.rank()) {
      auto d = report(DiagnosticCode::E0306, argument->span, "`" + item.name + "` expects `" + signature.names[i] + "` to be " + want.to_string() + ", with " +
                                                                 std::to_string(want.rank()) + " axes, but this is " + tensor->to_string() + ", with " + std::to_string(tensor->rank()));
      d.label("this is " + tensor->to_string()).secondary(item.parameters[i].type.span, "the parameter's type");
      // Heads never split: `[b n D]` where `[b H n Dh]` is expected, with D = H * Dh. The fix is the
      // rearrange into the parameter's order, where every axis has a name.
      if (auto split = split_into(item.parameters[i].type.axes, *tensor)) {
        std::string rearranged = "rearrange(" + text(argument->span) + ", " + split->pattern + ")";
        d.help(describe_axis(tensor->axes[split->axis]) + " is `(" + split->dims + ")` but was never split into `" + split->dims + "`: `" + rearranged + "`")
            .fix("split `" + split->dims + "`", argument->span, rearranged);
      }
      ok = false;
      continue;
    } else {
      for (size_t a = 0; a < want.rank(); ++a) pending.push_back({i, a});
    }
    if (!assignable(tensor->element, want.element)) {
      report(tensor->element.kind == ElementKind::index && want.element.kind == ElementKind::index ? DiagnosticCode::E0402 : DiagnosticCode::E0401, argument->span, "`" + item.name + "` expects `" + signature.names[i] + "` of `" + want.element.to_string() + "`, but this is `" +
              tensor->element.to_string() + "`").label("its elements are `" + tensor->element.to_string() + "`")
          .secondary(item.parameters[i].type.span, "the parameter's type");
      ok = false;
    }
  }
  // Unify axis by axis; a group such as `(gh gw)` may wait until its factors are bound elsewhere.
  // The arguments that are fine are unified even when another one is not, so their errors show too.
  bool arguments_ok = ok;
  SizeBindings guesses;  // generic axes an argument couldn't bind, as they would be had it fit
  for (int pass = 0; pass < 4 && !pending.empty(); ++pass) {
    std::vector<Pending> deferred;
    for (const Pending& p : pending) {
      const Axis& want = signature.parameters[p.parameter].tensor.axes[p.axis];
      const Axis& got = arguments[p.parameter].second.tensor.axes[p.axis];
      const Argument& argument = *arguments[p.parameter].first;
      UnifyResult r;
      try {
        r = unify_sizes(want.size, got.size, bindings, signature.generics);
      } catch (const std::overflow_error&) {
        r.status = UnifyStatus::mismatch;
      }
      if (r.status == UnifyStatus::bound) {
        labels[r.variable] = got.label;
        names[r.variable] = got.name;
        bound_by[r.variable] = {argument.span, p.axis};
      }
      if (r.status == UnifyStatus::equal || r.status == UnifyStatus::bound) continue;
      if (r.status == UnifyStatus::deferred && (pass < 3 || !arguments_ok)) {
        deferred.push_back(p);  // an argument already reported may be what would have bound it
        continue;
      }
      const std::string& param = signature.names[p.parameter];
      Span declared = item.parameters[p.parameter].type.axes[p.axis].span;
      if (r.status == UnifyStatus::not_divisible) {
        auto d = report(DiagnosticCode::E0303, argument.span,
                        "`" + item.name + "` needs " + dim_word(p.axis) + " of `" + param + "` to be `" + want.label + "`, a multiple of " +
                            std::to_string(r.required_multiple) + ", but it is " + describe_axis(got) + may_not_be(got.size));
        d.label(dim_word(p.axis) + " is " + describe_axis(got)).secondary(declared, "`" + want.label + "` is declared here");
        if (!got.bound_at.empty()) d.secondary(got.bound_at, "`" + got.label + "` bound here");
        d.note("`" + want.label + "` means " + std::to_string(r.required_multiple) + " × " + r.variable + " for a whole number " + r.variable);
        if (!got.size.is_constant() && got.size.variables().size() == 1)
          d.help("promise it where `" + got.label + "` is bound, by writing it as `" + std::to_string(r.required_multiple) + got.label + "`");
        // What the variable would be if the promise held (`h/16`): the result's best guess, below.
        if (!r.variable.empty())
          guesses.try_emplace(r.variable, SizeExpr::variable(got.label + "/" + std::to_string(r.required_multiple)));
      } else {
        Axis shown = want;
        shown.size = want.size.substitute(bindings);
        bool deferred_for_good = r.status == UnifyStatus::deferred;
        auto d = report(deferred_for_good ? DiagnosticCode::E0308 : DiagnosticCode::E0301, argument.span,
                        deferred_for_good ? "`" + item.name + "` can't work out `" + want.label + "` from " + describe_axis(got)
                                          : "`" + item.name + "` expects " + dim_word(p.axis) + " of `" + param + "` to be " + describe_axis(shown) +
                                                ", but it is " + describe_axis(got));
        d.label(dim_word(p.axis) + " is " + describe_axis(got)).secondary(declared, "`" + want.label + "` is declared here");
        for (const std::string& v : want.size.variables())
          if (bindings.count(v) && bound_by.count(v) && !(want.label == v && deferred_for_good))
            d.secondary(bound_by[v].first, "`" + v + "` is `" + labels[v] + "` here, from " + dim_word(bound_by[v].second));
        if (!got.bound_at.empty() && !got.size.is_constant()) d.secondary(got.bound_at, "`" + got.label + "` bound here");
      }
      // Each axis is checked on its own, so one run reports every axis that disagrees.
      ok = false;
    }
    pending = std::move(deferred);
  }
  ValueType result = signature.result;
  if (result.is_unknown()) return result;
  // After an error, the declared result is still the best guess when the arguments fixed its sizes:
  // later statements are checked against it rather than skipped (one run, every independent error).
  if (!ok) {
    if (!result.is_tensor() || lifted) return ValueType::unknown();
    for (auto& [variable, guess] : guesses) bindings.try_emplace(variable, guess);
    for (const Axis& axis : result.tensor.axes)
      for (const std::string& v : axis.size.variables())
        if (signature.generics.count(v) && !bindings.count(v) && !v.starts_with("?")) return ValueType::unknown();
  }
  if (result.is_tensor()) {
    for (Axis& axis : result.tensor.axes) {
      std::vector<std::string> variables = axis.size.variables();
      bool bare_generic = variables.size() == 1 && axis.size == SizeExpr::variable(variables[0]);
      axis.size = axis.size.substitute(bindings);
      // The caller's axis, by its label and its name: the callee's `n` means nothing where the call is.
      if (bare_generic && labels.count(variables[0])) axis.label = labels[variables[0]], axis.name = names[variables[0]];
      else if (!variables.empty()) axis.label = size_label(axis.size);
      axis.bound_at = {};
    }
    if (result.tensor.element.kind == ElementKind::index) result.tensor.element.bound = result.tensor.element.bound.substitute(bindings);
    if (lifted) {
      TensorType out = *lifted;
      out.axes.insert(out.axes.end(), result.tensor.axes.begin(), result.tensor.axes.end());
      out.element = result.tensor.element;
      result.tensor = out;
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Axis arguments and patterns

std::optional<size_t> Checker::axis_argument(const TensorType& tensor, const Argument* argument, std::string_view keyword, Span tensor_span,
                                             Scope& scope) {
  if (!argument || !argument->value) return std::nullopt;
  const Expr& value = *argument->value;
  if (value.kind != Expr::Kind::name) {
    // A size picks the one axis of that size: `over=1`, so a size-1 axis needs no dim of its own,
    // and `over=gh*gw`, for an axis no name picks (a group, a scaled axis).
    ValueType given = eval(value, scope);
    if (given.is_unknown()) return std::nullopt;  // reported where it went wrong
    if (!given.known_size) {
      error(DiagnosticCode::E0305, value.span,
            "`" + std::string(keyword) + "=` names an axis, such as `over=D`, or gives its size, such as `over=1` or `over=gh*gw`",
            "not an axis name or size");
      return std::nullopt;
    }
    std::vector<size_t> sized;
    for (size_t i = 0; i < tensor.rank(); ++i)
      if (tensor.axes[i].size == *given.known_size) sized.push_back(i);
    if (sized.size() == 1) return sized[0];
    report(DiagnosticCode::E0305, value.span,
           sized.empty() ? tensor.to_string() + " has no axis of size " + given.known_size->to_user_string()
                         : "`" + std::string(keyword) + "=" + text(value.span) + "` is ambiguous: " + tensor.to_string() + " has several axes of that size")
        .label(sized.empty() ? "no such axis" : "which one?")
        .secondary(tensor_span, "this is " + tensor.to_string());
    return std::nullopt;
  }
  // `over=D` names a dim or a generic axis as sizes do: a use of it, for references and rename.
  if (const KnownDim* dim = known_dim(value.text)) definition(value.span, dim->span);
  else if (auto axis = scope.axes.find(value.text); axis != scope.axes.end()) definition(value.span, axis->second.at);
  std::vector<size_t> by_name;
  for (size_t i = 0; i < tensor.rank(); ++i)
    if (tensor.axes[i].name == value.text) by_name.push_back(i);
  if (by_name.size() == 1) {
    hover(value.span, "```shapescript\n" + value.text + " = " + tensor.axes[by_name[0]].size.to_user_string() + "\n```\n" +
                          dim_word(by_name[0]) + " of " + tensor.to_string());
    return by_name[0];
  }
  // Not a name the tensor's axes carry: find the axis by its size.
  Scope probe = scope;
  probe.mode = SizeMode::body;
  std::optional<SizeExpr> size;
  if (const KnownDim* dim = known_dim(value.text)) size = dim->size;
  else if (auto axis = scope.axes.find(value.text); axis != scope.axes.end()) size = axis->second.size;
  std::vector<size_t> by_size;
  if (size)
    for (size_t i = 0; i < tensor.rank(); ++i)
      if (tensor.axes[i].size == *size) by_size.push_back(i);
  if (by_size.size() == 1 && by_name.empty()) return by_size[0];
  if (by_name.size() > 1 || by_size.size() > 1) {
    report(DiagnosticCode::E0305, value.span,
           "`" + std::string(keyword) + "=" + value.text + "` is ambiguous: " + tensor.to_string() + " has several such axes")
        .label("which one?");
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const Axis& axis : tensor.axes)
    if (!axis.name.empty()) names.push_back(axis.name);
  auto suggestion = suggest_name(value.text, names);
  auto d = report(DiagnosticCode::E0305, value.span, tensor.to_string() + " has no axis `" + value.text + "`");
  d.label("not an axis of " + tensor.to_string()).secondary(tensor_span, "this is " + tensor.to_string()).suggest(value.span, suggestion);
  if (suggestion) return std::nullopt;
  // An axis with no name (`(gh gw)`, `16gh`) is picked by its size; offered where the name given
  // is part of that size and the size can be written here (its names are this function's axes).
  const Axis* part_of = nullptr;
  std::optional<std::string> written;
  for (const Axis& axis : tensor.axes) {
    std::vector<std::string> variables = axis.size.variables();
    if (!axis.name.empty() || !std::binary_search(variables.begin(), variables.end(), value.text)) continue;
    if ((written = written_axis(axis, tensor, scope))) {
      part_of = &axis;
      break;
    }
  }
  std::string list;
  for (size_t i = 0; i < tensor.rank(); ++i) {
    const Axis& axis = tensor.axes[i];
    list += (i == 0 ? "" : i + 1 == tensor.rank() ? " and " : ", ") + ("`" + (axis.name.empty() ? axis.label : axis.name) + "`");
    if (axis.name.empty()) list += " (no name)";
  }
  if (!list.empty()) d.note("its axes are " + list + (names.size() < tensor.rank() ? "; one with no name is picked by its size" : ""));
  if (part_of) {
    d.help("`" + value.text + "` is part of the axis `" + part_of->label + "`: to work along all of it, give its size, `" + std::string(keyword) +
           "=" + *written + "`");
    d.fix("work along `" + part_of->label + "`", value.span, *written);
  }
  return std::nullopt;
}

namespace {

// A pattern's size, with names not yet in scope as unknowns to solve.
std::optional<SizeExpr> pattern_size(Checker& checker, const SizeNode& node, Scope& scope, SizeVariableSet& unknowns,
                                     const std::set<std::string>& resolvable) {
  switch (node.kind) {
    case SizeNode::Kind::name:
      if (resolvable.count("!" + node.name)) return std::nullopt;  // a dim that failed: reported already
      if (!resolvable.count(node.name)) {
        unknowns.insert(node.name);
        return SizeExpr::variable(node.name);
      }
      [[fallthrough]];
    case SizeNode::Kind::number:
    case SizeNode::Kind::unknown: {
      auto axis = checker.resolve_size(node, scope);
      return axis ? std::optional(axis->size) : std::nullopt;
    }
    case SizeNode::Kind::scaled: {
      SizeNode name = node;
      name.kind = SizeNode::Kind::name;
      auto inner = pattern_size(checker, name, scope, unknowns, resolvable);
      return inner ? std::optional(SizeExpr::constant(node.number) * *inner) : std::nullopt;
    }
    case SizeNode::Kind::group: {
      SizeExpr product = SizeExpr::constant(1);
      for (const SizeNode& child : node.children) {
        auto factor = pattern_size(checker, child, scope, unknowns, resolvable);
        if (!factor) return std::nullopt;
        product = product * *factor;
      }
      return product;
    }
    case SizeNode::Kind::binary: {
      if (node.children.size() != 2) return std::nullopt;
      auto l = pattern_size(checker, node.children[0], scope, unknowns, resolvable);
      auto r = pattern_size(checker, node.children[1], scope, unknowns, resolvable);
      if (!l || !r) return std::nullopt;
      if (node.op == '+') return *l + *r;
      if (node.op == '-') return *l - *r;
      if (node.op == '*') return *l * *r;
      if (node.op == '%' || node.op == SizeNode::kFloorDivide) {
        auto k = r->constant_value();
        auto result = !k ? std::nullopt : node.op == '%' ? l->remainder(*k) : l->floor_divide(*k);
        if (!result) checker.resolve_size(node, scope);  // reports why it is no size
        return result;
      }
      return l->divide_exact(*r);
    }
    case SizeNode::Kind::error: return std::nullopt;
  }
  return std::nullopt;
}

void collect_names(const SizeNode& node, std::vector<std::pair<std::string, Span>>& names) {
  if (node.kind == SizeNode::Kind::name) names.emplace_back(node.name, node.span);
  for (const SizeNode& child : node.children) collect_names(child, names);
}

}  // namespace

std::optional<CallContext::PatternSolution> Checker::solve_pattern(const AxisPattern& pattern, const std::vector<TensorType>& tensors,
                                                                   const std::vector<Span>& spans, Scope& scope) {
  // Names a pattern can use as they are: dims, the signature's generic axes, integer locals.
  // Names solved by earlier patterns are solved again, so a pattern may reuse `c` for another size.
  // Only the pattern's own names are looked up: a set of every name in scope, built per call,
  // made checking quadratic in the number of dims (bench/bench_check).
  std::vector<std::pair<std::string, Span>> pattern_names;
  for (const auto& side : pattern.inputs)
    for (const SizeNode& node : side) collect_names(node, pattern_names);
  for (const SizeNode& node : pattern.output) collect_names(node, pattern_names);
  const FunctionSignature* signature = scope.function ? &this->signature(scope.function) : nullptr;
  std::set<std::string> resolvable;
  for (auto& [name, span] : pattern_names) {
    auto local = scope.locals.find(name);
    if (known_dim(name) || (signature && signature->scope_axes.count(name) && !signature->result_only.count(name)) ||
        (local != scope.locals.end() && is_int_scalar(local->second.type)))
      resolvable.insert(name);
    auto global = globals_.find(name);
    if (global != globals_.end() && global->second->kind == Item::Kind::dim && !known_dim(name)) resolvable.insert("!" + name);
  }
  SizeVariableSet unknowns;
  SizeBindings bindings;
  std::map<std::string, Span> first_seen;
  std::map<std::string, std::string> labels;
  struct Element {
    size_t input, axis;
    SizeExpr size;
    const SizeNode* node;
  };
  std::vector<Element> elements;
  for (size_t i = 0; i < pattern.inputs.size() && i < tensors.size(); ++i) {
    const auto& side = pattern.inputs[i];
    if (side.size() != tensors[i].rank()) {
      Span side_span{side.empty() ? pattern.span.begin : side.front().span.begin, side.empty() ? pattern.span.begin : side.back().span.end};
      auto d = report(DiagnosticCode::E0307, side_span,
                      "the pattern `" + text(side_span) + "` has " + std::to_string(side.size()) + " axes, but the tensor is " + tensors[i].to_string() +
                          ", with " + std::to_string(tensors[i].rank()));
      d.label(std::to_string(side.size()) + " axes").secondary(spans[i], "this is " + tensors[i].to_string());
      if (auto split = unsplit_axis(side, tensors[i])) {
        if (auto local = scope.locals.find(text(spans[i])); local != scope.locals.end() && local->second.value)
          d.secondary(local->second.value->span, "`" + local->first + "` is " + tensors[i].to_string() + ", made here");
        d.help(describe_axis(tensors[i].axes[split->first]) + " is `(" + split->second + ")` but was never split into `" + split->second +
               "`: if those axes were meant (attention per head, say), split them before the operations that should see them, e.g. `rearrange(x, " +
               tensors_pattern(tensors[i], split->first, split->second) + ")`");
      }
      return std::nullopt;
    }
    for (size_t a = 0; a < side.size(); ++a) {
      std::vector<std::pair<std::string, Span>> names;
      collect_names(side[a], names);
      for (auto& [name, span] : names) first_seen.try_emplace(name, span);
      auto size = pattern_size(*this, side[a], scope, unknowns, resolvable);
      if (!size) return std::nullopt;
      elements.push_back({i, a, *size, &side[a]});
      if (side[a].kind == SizeNode::Kind::name) labels.try_emplace(side[a].name, side[a].name);
    }
  }
  std::vector<Element> pending = elements;
  for (int pass = 0; pass < 8 && !pending.empty(); ++pass) {
    std::vector<Element> deferred;
    for (const Element& e : pending) {
      const Axis& actual = tensors[e.input].axes[e.axis];
      UnifyResult r;
      try {
        r = unify_sizes(e.size, actual.size, bindings, unknowns);
      } catch (const std::overflow_error&) {
        r.status = UnifyStatus::mismatch;
      }
      if (r.status == UnifyStatus::equal || r.status == UnifyStatus::bound) continue;
      if (r.status == UnifyStatus::deferred) {
        deferred.push_back(e);
        continue;
      }
      std::string written = text(e.node->span);
      std::string tensor_name = text(spans[e.input]);
      std::string of_tensor = tensor_name.size() <= 24 ? "`" + tensor_name + "`" : "the tensor";
      if (r.status == UnifyStatus::not_divisible) {
        auto d = report(DiagnosticCode::E0303, e.node->span,
                        "the pattern's `" + written + "` needs " + dim_word(e.axis) + " of " + of_tensor + " to be a multiple of " +
                            std::to_string(r.required_multiple) + ", but it is " + describe_axis(actual) + may_not_be(actual.size));
        d.label("needs a multiple of " + std::to_string(r.required_multiple));
        if (!actual.bound_at.empty() && !actual.size.is_constant()) d.secondary(actual.bound_at, "`" + actual.label + "` bound here");
        if (!actual.size.is_constant() && actual.size.variables().size() == 1 && actual.label == actual.size.variables()[0])
          d.help("promise it where `" + actual.label + "` is bound, by writing it as `" + std::to_string(r.required_multiple) + actual.label + "`");
        d.secondary(spans[e.input], dim_word(e.axis) + " is " + describe_axis(actual));
      } else {
        SizeExpr expected = e.size.substitute(bindings);
        std::string value = expected.to_user_string();
        auto d = report(DiagnosticCode::E0307, e.node->span,
                        "the pattern's `" + written + "`" + (value == written ? "" : " (" + value + ")") + " doesn't match " + dim_word(e.axis) +
                            " of " + of_tensor + ", which is " + describe_axis(actual));
        d.label(value == written ? "doesn't match" : "this is " + value);
        if (e.node->kind == SizeNode::Kind::group) {
          std::string factors;
          for (const SizeNode& child : e.node->children) {
            std::string child_text = text(child.span);
            SizeVariableSet none;
            auto size = pattern_size(*this, child, scope, none, resolvable);
            std::string child_value = size ? size->substitute(bindings).to_user_string() : child_text;
            factors += (factors.empty() ? "" : " × ") + (child_value == child_text ? child_text : "`" + child_text + "` (" + child_value + ")");
          }
          d.note("a group's size is the product of its factors: " + factors + " = " + value);
        }
        d.secondary(spans[e.input], dim_word(e.axis) + " is " + describe_axis(actual));
      }
      return std::nullopt;
    }
    if (deferred.size() == pending.size()) {
      pending = std::move(deferred);
      break;
    }
    pending = std::move(deferred);
  }
  if (!pending.empty()) {
    const Element& e = pending.front();
    std::string unsolved;
    for (const std::string& v : e.size.variables())
      if (unknowns.count(v) && !bindings.count(v)) unsolved += (unsolved.empty() ? "`" : ", `") + v + "`";
    report(DiagnosticCode::E0308, e.node->span, "can't work out " + unsolved + " from the pattern `" + text(e.node->span) + "`")
        .label("more than one unknown size").help("name one of them with a dim or an axis already known, or give its size as a number");
    return std::nullopt;
  }
  // Names solved become axes in scope, so `causal[n m]` can follow an einsum that named `m`.
  for (auto& [name, value] : bindings) scope.axes[name] = {value, first_seen.count(name) ? first_seen[name] : pattern.span, name};
  // A name the pattern solves is declared where it first appears; its other appearances use it.
  for (auto& [name, span] : pattern_names)
    if (auto first = first_seen.find(name); first != first_seen.end() && bindings.count(name) && unknowns.count(name)) {
      definition(span, first->second);
      hover(span, "```shapescript\n" + name + " = " + bindings.at(name).to_user_string() + "\n```\nsolved by the pattern");
    }
  CallContext::PatternSolution solution;
  solution.bindings = bindings;
  for (size_t i = 0; i < tensors.size(); ++i) solution.input_axes.push_back(tensors[i].axes);
  std::set<std::string> inputs_named;
  for (auto& [name, span] : first_seen) inputs_named.insert(name);
  for (const SizeNode& node : pattern.output) {
    std::vector<std::pair<std::string, Span>> names;
    collect_names(node, names);
    for (auto& [name, span] : names)
      if (!inputs_named.count(name) && !resolvable.count(name)) {
        report(DiagnosticCode::E0307, span, "`" + name + "` is in the pattern's output but not its input").label("not in the input");
        return std::nullopt;
      }
    SizeVariableSet none;
    auto size = pattern_size(*this, node, scope, none, resolvable);
    if (!size) return std::nullopt;
    Axis axis;
    axis.size = size->substitute(bindings);
    axis.label = text(node.span);
    if (node.kind == SizeNode::Kind::name) axis.name = node.name;
    if (node.kind != SizeNode::Kind::name) axis.bound_at = node.span;  // a new axis: made here
    // A group of input axes (a flatten, `b c h w -> b (c h w)`) keeps its factors, and so how each came to its size.
    if (node.kind == SizeNode::Kind::group) {
      auto origin = std::make_shared<SizeOrigin>();
      for (const SizeNode& child : node.children)
        for (size_t i = 0; i < pattern.inputs.size() && i < tensors.size(); ++i)
          for (size_t a = 0; a < pattern.inputs[i].size(); ++a)
            if (child.kind == SizeNode::Kind::name && pattern.inputs[i][a].kind == SizeNode::Kind::name && pattern.inputs[i][a].name == child.name)
              origin->inputs.push_back(tensors[i].axes[a]);
      if (origin->inputs.size() == node.children.size()) axis.origin = std::move(origin);
    }
    // An axis carried through unchanged keeps the label the user knows it by.
    if (node.kind == SizeNode::Kind::name)
      for (size_t i = 0; i < pattern.inputs.size() && i < tensors.size(); ++i)
        for (size_t a = 0; a < pattern.inputs[i].size(); ++a)
          if (pattern.inputs[i][a].kind == SizeNode::Kind::name && pattern.inputs[i][a].name == node.name) axis.bound_at = tensors[i].axes[a].bound_at;
    solution.output.push_back(axis);
  }
  return solution;
}

}  // namespace ss
