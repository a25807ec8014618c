#include "check/builtins.h"

#include "emit/lowering.h"

#include <sstream>
#include <algorithm>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace ss {

namespace {

ValueType tensor_value(TensorType t) { return ValueType::of(std::move(t)); }

// A tensor of the wrong shape or element type: the message, and "this is [..]" under it.
void wrong_shape(CallContext& call, DiagnosticCode code, Span span, std::string message, const TensorType& found) {
  call.report(code, span, std::move(message)).label("this is " + found.to_string());
}


// Elementwise maths keeps the shape; integers become reals.
ValueType elementwise(CallContext& call, ElementKind result) {
  auto x = call.tensor(0);
  if (!x) return ValueType::unknown();
  x->element = ElementType{};
  x->element.kind = result;
  return tensor_value(*x);
}

ValueType rule_real(CallContext& call) { return elementwise(call, ElementKind::real); }
ValueType rule_nonneg(CallContext& call) { return elementwise(call, ElementKind::nonneg); }

void works_across(CallContext& call, const Axis& axis) {
  if (call.facts) call.facts->works_across.push_back(axis);
}

void lowering(CallContext& call, std::string key, std::string value) {
  if (call.facts) call.facts->lowering[std::move(key)] = std::move(value);
}

// Rules that reduce or normalize along the axis `over=`.
ValueType along_axis(CallContext& call, bool keep_axis, ElementKind* element) {
  auto x = call.tensor(0);
  if (!x) return ValueType::unknown();
  auto axis = call.axis_argument(*x, "over", call.positional_span(0));
  if (!axis) return ValueType::unknown();
  works_across(call, x->axes[*axis]);
  lowering(call, "dim", std::to_string(static_cast<int64_t>(*axis) - static_cast<int64_t>(x->rank())));
  if (!keep_axis) x->axes.erase(x->axes.begin() + static_cast<std::ptrdiff_t>(*axis));
  if (element) {
    x->element = ElementType{};
    x->element.kind = *element;
  }
  return tensor_value(*x);
}

ValueType rule_softmax(CallContext& call) {
  ElementKind nonneg = ElementKind::nonneg;
  return along_axis(call, true, &nonneg);
}
ValueType rule_log_softmax(CallContext& call) {
  ElementKind real = ElementKind::real;
  return along_axis(call, true, &real);
}
ValueType rule_reduce(CallContext& call) {
  ElementKind real = ElementKind::real;
  return along_axis(call, false, &real);
}
ValueType rule_max(CallContext& call) { return along_axis(call, false, nullptr); }

// A weight given with weight= (and bias=) must be one vector along the normalized axis.
void check_vector_along(CallContext& call, std::string_view keyword, const Axis& axis) {
  const ValueType* weight = call.keyword_type(keyword);
  const Argument* argument = call.keyword(keyword);
  if (!weight || !argument || weight->is_unknown()) return;
  Span span = argument->value ? argument->value->span : argument->span;
  if (!weight->is_tensor() || weight->tensor.rank() != 1) {
    call.report(DiagnosticCode::E0306, span, "`" + std::string(keyword) + "=` must have one axis, of size " + describe_axis(axis))
        .label("this is " + (weight->is_tensor() ? weight->tensor.to_string() : weight->to_string()));
    return;
  }
  call.expect_same_size(axis, weight->tensor.axes[0], span, "`" + std::string(keyword) + "=`'s axis");
}

ValueType rule_norm(CallContext& call) {
  auto x = call.tensor(0);
  if (!x) return ValueType::unknown();
  auto axis = call.axis_argument(*x, "over", call.positional_span(0));
  if (!axis) return ValueType::unknown();
  works_across(call, x->axes[*axis]);
  lowering(call, "dim", std::to_string(static_cast<int64_t>(*axis) - static_cast<int64_t>(x->rank())));
  check_vector_along(call, "weight", x->axes[*axis]);
  check_vector_along(call, "bias", x->axes[*axis]);
  x->element = ElementType{};
  return tensor_value(*x);
}

ValueType rule_reduce(CallContext& call);
ValueType rule_max(CallContext& call);

// The `over=` argument of `e` when `e` is a call of a built-in whose `over=` axis disappears
// (sum, mean, max, min) naming `axis`: a reduction that removed that axis.
const Argument* removed_by_reduction(const Expr& e, const std::string& axis) {
  if (e.kind != Expr::Kind::call || e.operands.empty() || e.operands[0]->kind != Expr::Kind::name) return nullptr;
  const Builtin* builtin = find_builtin(e.operands[0]->text);
  if (!builtin || !over_removes_the_axis(*builtin)) return nullptr;
  for (const Argument& a : e.arguments)
    if (a.keyword == "over" && a.value && a.value->kind == Expr::Kind::name && a.value->text == axis) return &a;
  return nullptr;
}

void explain_head_mismatch(DiagnosticBuilder& d, const Axis& in, int64_t want);
bool made_by_windows(const Axis& axis);

ValueType rule_linear(CallContext& call) {
  auto x = call.tensor(0);
  auto w = call.tensor(1);
  if (!x || !w) return ValueType::unknown();
  if (x->rank() == 0 || w->rank() != 2) {
    call.report(DiagnosticCode::E0306, call.positional_span(x->rank() == 0 ? 0 : 1), x->rank() == 0 ? "`linear` needs an input with at least one axis"
            : "`linear`'s weight must be `[out in]`, two axes, but it is " + w->to_string())
        .label("this is " + (x->rank() == 0 ? x->to_string() : w->to_string()));
    return ValueType::unknown();
  }
  const Axis& in = x->axes.back();
  if (in.size != w->axes[1].size) {
    bool windowed = in.size.is_constant() && w->axes[1].size.is_constant() && made_by_windows(in);
    auto d = call.report(DiagnosticCode::E0301, call.positional_span(1), "`linear`'s weight is " + w->to_string() + ", but the input's last axis is " + describe_axis(in) +
            (windowed ? ", made by convolution and pooling steps: the sizes stop fitting here, at the head"
             : in.size.is_constant() ? ", so the weight must be `[out " + in.label + "]`" : ", a size each call sets, where the weight reads " + describe_axis(w->axes[1])));
    d.label("its `in` axis (the second) is " + describe_axis(w->axes[1]))
        .secondary(call.positional_span(0), "the last axis is " + describe_axis(in))
        .note("`linear(x, w)` computes `x @ wᵀ` with `w: [out in]`, as PyTorch stores weights");
    // The weight to suggest is the one whose result fits: `out` is the declared result's last axis
    // when the call is what a function returns, else the weight's other axis (it looks transposed).
    auto expected = call.expected_result();
    if (!in.size.is_constant()) {
      // A weight's sizes are fixed and `in` is set by each call, so `[out in]` is never the fix:
      // the input kept the wrong axis. A reduction that removed the weight's axis is the likely cause.
      const Expr* made = call.definition(0);
      const Argument* over = made ? removed_by_reduction(*made, w->axes[1].label) : nullptr;
      if (over) {
        d.secondary(over->value->span, "this removes `" + w->axes[1].label + "`, the axis the weight reads")
            .help("to reduce over " + describe_axis(in) + " and keep `" + w->axes[1].label + "`, write `over=" + in.label + "`")
            .fix("reduce over `" + in.label + "`", over->value->span, in.label);
      } else {
        if (made) d.secondary(made->span, "the input's last axis " + describe_axis(in) + " comes from here");
        d.help("a weight's sizes are fixed and " + describe_axis(in) + " is set by each call: check which axes the input keeps (`over=`, a rearrange) so that its last is `" +
               w->axes[1].label + "`");
      }
    } else if (auto want = w->axes[1].size.constant_value(); want && windowed) {
      explain_head_mismatch(d, in, *want);  // a flatten of convolution or pooling outputs: which input sizes fit
    } else if (expected && expected->rank() == x->rank() && expected->axes.back().size != w->axes[1].size)
    {
      std::string fitting = "[" + expected->axes.back().label + " " + in.label + "]";
      d.help("the result is declared " + expected->to_string() + " and the input's last axis is " + describe_axis(in) + ", so declare the weight as `" + fitting + "`");
      if (auto declared = call.declared(1); declared && declared->whole) d.fix("declare it as `" + fitting + "`", declared->axes, fitting);
    }
    else if (in.size == w->axes[0].size) {
      std::string swapped = "[" + w->axes[1].label + " " + w->axes[0].label + "]";
      d.help("this weight looks transposed: declare it as `" + swapped + "`");
      if (auto declared = call.declared(1); declared && declared->whole) d.fix("declare it as `" + swapped + "`", declared->axes, swapped);
    }
    if (auto declared = call.declared(1)) d.secondary(declared->axes, "the weight is declared here");
    d.emit();
    // The result is still [.. out], out as the help reads the weight: what follows is checked against it.
    x->axes.back() = expected && expected->rank() == x->rank() ? expected->axes.back() : in.size == w->axes[0].size ? w->axes[1] : w->axes[0];
    x->element = ElementType{};
    return tensor_value(*x);
  }
  works_across(call, in);
  if (call.positional_count() > 2) {
    if (auto bias = call.tensor(2); bias && (bias->rank() != 1 || !call.expect_same_size(w->axes[0], bias->axes[0], call.positional_span(2), "the bias"))) {
      if (bias->rank() != 1) {
        wrong_shape(call, DiagnosticCode::E0306, call.positional_span(2), "`linear`'s bias must be `[out]`, one axis, but it is " + bias->to_string(), *bias);
      }
    }
  }
  x->axes.back() = w->axes[0];
  x->element = ElementType{};
  return tensor_value(*x);
}

ValueType rule_embedding(CallContext& call) {
  auto ids = call.tensor(0);
  auto table = call.tensor(1);
  if (!ids || !table) return ValueType::unknown();
  if (table->rank() != 2) {
    wrong_shape(call, DiagnosticCode::E0306, call.positional_span(1), "`embedding`'s table must be `[V D]`, two axes, but it is " + table->to_string(), *table);
    return ValueType::unknown();
  }
  if (!ids->element.is_integer()) {
    call.report(DiagnosticCode::E0401, call.positional_span(0), "`embedding` looks up integer ids, but these are `" + ids->element.to_string() + "`")
        .label("these are `" + ids->element.to_string() + "`").help("give the ids the type `Index[" + table->axes[0].label + "]`");
    return ValueType::unknown();
  }
  if (ids->element.kind == ElementKind::index && ids->element.bound != table->axes[0].size) {
    call.report(DiagnosticCode::E0402, call.positional_span(1), "ids of type `" + ids->element.to_string() + "` index a table of " + describe_axis(table->axes[0]) + " rows")
        .label("this table has " + describe_axis(table->axes[0]) + " rows")
        .secondary(call.positional_span(0), "these ids are below " + ids->element.bound.to_user_string())
        .note("an id of `Index[N]` may be any integer below N, so the table needs exactly N rows");
  }
  TensorType out = *ids;
  out.axes.push_back(table->axes[1]);
  out.element = ElementType{};
  return tensor_value(out);
}

ValueType rule_scale(CallContext& call) {
  auto x = call.tensor(0);
  auto s = call.tensor(1);
  if (!x || !s) return ValueType::unknown();
  auto result = call.broadcast(*x, *s, call.call_span());
  if (!result) return ValueType::unknown();
  result->element = ElementType{};
  return tensor_value(*result);
}

ValueType rule_masked_fill(CallContext& call) {
  auto x = call.tensor(0);
  auto mask = call.tensor(1);
  auto value = call.tensor(2);
  if (!x || !mask || !value) return ValueType::unknown();
  if (mask->element.kind != ElementKind::bool_) {
    wrong_shape(call, DiagnosticCode::E0401, call.positional_span(1), "`masked_fill`'s mask must be `Bool`, but it is `" + mask->element.to_string() + "`", *mask);
  }
  auto shape = call.broadcast(*x, *mask, call.positional_span(1), call.positional_span(0), call.positional_span(1));
  if (!shape) return ValueType::unknown();
  if (shape->rank() != x->rank()) {
    wrong_shape(call, DiagnosticCode::E0304, call.positional_span(1), "the mask " + mask->to_string() + " has more axes than the tensor " + x->to_string(), *mask);
  }
  TensorType out = *x;
  if (out.element.kind == ElementKind::nonneg) out.element.kind = ElementKind::real;
  return tensor_value(out);
}

// The axes before the last two: `[.. n e]`'s `..`.
TensorType leading_axes(const TensorType& t) {
  TensorType lead;
  lead.axes.assign(t.axes.begin(), t.axes.end() - 2);
  return lead;
}

TensorType without_last(TensorType t) {
  t.axes.pop_back();
  return t;
}

// One of sdpa's tensors, for messages: its name and where the call gives it.
struct Operand {
  std::string_view name;
  Span span;
};

// Broadcasts the leading axes of two of sdpa's operands as torch's batched matmuls do, matched from
// the last; E0304 names both operands and the dim (as torch counts it in each) where they disagree.
std::optional<TensorType> broadcast_leading(CallContext& call, const TensorType& a, Operand a_is, const TensorType& b, Operand b_is) {
  TensorType out;
  size_t rank = std::max(a.rank(), b.rank());
  out.axes.resize(rank);
  bool ok = true;
  for (size_t i = 0; i < rank; ++i) {
    const Axis* x = i < a.rank() ? &a.axes[a.rank() - 1 - i] : nullptr;
    const Axis* y = i < b.rank() ? &b.axes[b.rank() - 1 - i] : nullptr;
    Axis& target = out.axes[rank - 1 - i];
    if (!x || (y && x->size.constant_value() == 1)) target = *y;
    else if (!y || y->size.constant_value() == 1 || x->size == y->size) target = *x;
    else {
      std::string x_dim = dim_word(a.rank() - 1 - i), y_dim = dim_word(b.rank() - 1 - i);
      call.report(DiagnosticCode::E0304, b_is.span,
                  "`" + std::string(a_is.name) + "` and `" + std::string(b_is.name) + "` don't broadcast: " + x_dim + " of `" +
                      std::string(a_is.name) + "` is " + describe_axis(*x) + ", but " + y_dim + " of `" + std::string(b_is.name) + "` is " +
                      describe_axis(*y))
          .label(y_dim + " is " + describe_axis(*y))
          .secondary(a_is.span, x_dim + " is " + describe_axis(*x))
          .note("the axes before `n e` are matched from the last, as in torch's batched matmul; each pair must be equal, or one of them 1");
      ok = false;
      target = *x;
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

// `window=W` (Mistral's sliding window): each query also stops seeing keys W or more positions
// before it. A fixed size, so that the engines' configs can say it; over a causal mask, whose
// diagonal the window slides along.
void attention_window(CallContext& call) {
  const Argument* window = call.keyword("window");
  const ValueType* value = call.keyword_type("window");
  if (!window || !window->value || !value || value->is_unknown()) return;
  const Argument* mask = call.keyword("attn_mask");
  bool causal = mask && mask->value && call.is_builtin_causal(*mask->value);
  if (!causal)
    call.report(DiagnosticCode::E0311, window->span, "`window=` slides along a causal mask, but this attention has " +
                                                         std::string(mask ? "another mask" : "no mask"))
        .label("a window without `attn_mask=causal[n n]`")
        .note("a window of W positions lets each query see the keys at most W - 1 positions before it, and none after it")
        .help("mask later positions too: `attn_mask=causal[n n], window=...`");
  auto size = value->known_size ? value->known_size->constant_value() : std::nullopt;
  if (!size || *size <= 0) {
    std::string what = !value->known_size ? "this is " + (value->is_tensor() && value->tensor.rank() == 0 ? std::string("a number, not a size") : value->to_string())
                       : !size            ? "`" + value->known_size->to_user_string() + "` is known only when the program runs"
                       : value->known_size->to_user_string() == std::to_string(*size) ? "this is " + std::to_string(*size)
                                          : "`" + value->known_size->to_user_string() + "` is " + std::to_string(*size);
    call.report(DiagnosticCode::E0311, window->value->span, "`window=` must be a fixed positive size, such as a `dim`, but " + what)
        .label(size ? "not positive" : value->known_size ? "not a fixed size" : "not a size")
        .help("declare the window as a dim, as in `dim W = 4096`, and pass `window=W`");
    return;
  }
  if (causal) lowering(call, "window", std::to_string(*size));
}

// `bias=b`: a float tensor added to the scores (ALiBi, a relative-position bias), laid over them as a
// mask is: it may broadcast to the scores [.. n m], not grow them.
void attention_bias(CallContext& call, const TensorType& scores) {
  const Argument* bias = call.keyword("bias");
  const ValueType* type = call.keyword_type("bias");
  if (!bias || !bias->value || !type || !type->is_tensor()) return;
  const Expr& e = *bias->value;
  if (!type->tensor.element.is_real()) {
    wrong_shape(call, DiagnosticCode::E0401, e.span, "`bias` is added to the attention scores, so it must be `Real`, but it is `" +
                                                         type->tensor.element.to_string() + "`", type->tensor);
    return;
  }
  // What the serving rules read: an engine's attention adds no bias of the program's.
  lowering(call, "bias", "1");
  auto laid = call.broadcast(type->tensor, scores, e.span, e.span);
  if (!laid) return;
  bool fits = laid->rank() == scores.rank();
  for (size_t i = 0; fits && i < scores.rank(); ++i) fits = laid->axes[i].size == scores.axes[i].size;
  if (!fits)
    wrong_shape(call, DiagnosticCode::E0304, e.span,
                "the bias " + type->tensor.to_string() + " is larger than the attention scores " + scores.to_string(), type->tensor);
}

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// `softcap=C`: the scores become C * tanh(scores / C), so C is a positive number fixed when traced.
void attention_softcap(CallContext& call) {
  const Argument* softcap = call.keyword("softcap");
  const ValueType* type = call.keyword_type("softcap");
  if (!softcap || !softcap->value || !type || type->is_unknown()) return;
  const Expr& e = *softcap->value;
  bool number = type->is_tensor() && type->tensor.rank() == 0 && type->fixed && type->tensor.element.kind != ElementKind::bool_;
  if (!number) {
    call.report(DiagnosticCode::E0312, e.span, "`softcap=` must be a number fixed when the model is built, but this is `" + type->to_string() + "`")
        .label("not a fixed number")
        .note("the scores become C * tanh(scores / C), as Gemma 2's `attn_logit_softcapping` caps them; engines take C as one number")
        .help("write the cap as a number, as in `softcap=50.0`");
    return;
  }
  if (e.kind == Expr::Kind::number && e.number <= 0)
    call.report(DiagnosticCode::E0312, e.span, "`softcap=` must be positive, but this is " + format_number(e.number))
        .label("not positive")
        .note("the scores become C * tanh(scores / C), which lies between -C and C");
}

// `sinks=s`: one learned logit per query head (gpt-oss) that joins each softmax's denominator and is
// then dropped, so `s` has the scores' head axes: q's axes between the batch and the positions.
void attention_sinks(CallContext& call, const TensorType& heads_of, const TensorType& q) {
  const Argument* sinks = call.keyword("sinks");
  const ValueType* type = call.keyword_type("sinks");
  if (!sinks || !sinks->value || !type || !type->is_tensor()) return;
  const Expr& e = *sinks->value;
  const TensorType& s = type->tensor;
  if (!s.element.is_real()) {
    wrong_shape(call, DiagnosticCode::E0401, e.span, "`sinks` are logits, so they must be `Real`, but they are `" + s.element.to_string() + "`", s);
    return;
  }
  // The query heads: the scores' leading axis just before the positions (and any grouped axes the
  // sinks name before it, as in `[Hkv G]` for q `[b Hkv G n e]`).
  bool fits = s.rank() >= 1 && s.rank() <= heads_of.rank();
  for (size_t i = 0; fits && i < s.rank(); ++i)
    fits = s.axes[i].size == heads_of.axes[heads_of.rank() - s.rank() + i].size;
  if (fits) return;
  std::string expected = heads_of.rank() == 0 ? "" : describe_axis(heads_of.axes.back());
  auto d = call.report(DiagnosticCode::E0312, e.span,
                       heads_of.rank() == 0 ? "`sinks=` needs one logit per query head, but `q` " + q.to_string() + " has no heads axis"
                                            : "`sinks=` needs one logit per query head, `[" + heads_of.axes.back().label + "]`, but it is `" + s.to_string() + "`");
  d.label("this is " + s.to_string());
  if (heads_of.rank() > 0) d.secondary(call.positional_span(0), "the query heads are " + expected);
  d.note("a sink is a logit per query head that joins the softmax's denominator and is then dropped (gpt-oss's `sinks`)");
  if (heads_of.rank() > 0) d.help("declare the sinks as `[" + heads_of.axes.back().label + "]`, one per query head");
}

ValueType rule_sdpa(CallContext& call) {
  auto q = call.tensor(0);
  auto k = call.tensor(1);
  auto v = call.tensor(2);
  if (!q || !k || !v) return ValueType::unknown();
  for (size_t i = 0; i < 3; ++i) {
    const TensorType& t = i == 0 ? *q : i == 1 ? *k : *v;
    if (t.rank() < 2) {
      wrong_shape(call, DiagnosticCode::E0306, call.positional_span(i), "`scaled_dot_product_attention` needs `[.. n e]` tensors, with at least two axes", t);
      return ValueType::unknown();
    }
  }
  // q: [.. H n e], k: [.. Hkv m e], v: [.. Hkv m f] -> [.. H n f]. Each check reports on its own,
  // and the result is what q and v say, so one run shows every disagreement.
  bool ok = call.expect_same_size(q->axes.back(), k->axes.back(), call.positional_span(1), "the keys' last axis");
  ok = call.expect_same_size(k->axes[k->rank() - 2], v->axes[v->rank() - 2], call.positional_span(2), "the values' positions") && ok;
  works_across(call, k->axes[k->rank() - 2]);
  // The leading axes broadcast as torch's batched matmuls do; k and v share theirs.
  TensorType q_lead = leading_axes(*q);
  Operand q_is{"q", call.positional_span(0)}, k_is{"k", call.positional_span(1)}, v_is{"v", call.positional_span(2)};
  auto kv_lead = broadcast_leading(call, leading_axes(*k), k_is, leading_axes(*v), v_is);
  if (!kv_lead) {
    ok = false;
    kv_lead = leading_axes(*k);  // reported: q is still compared with k's
  }
  TensorType out_lead = q_lead;
  {
    // Grouped-query attention: q has H heads (axis -3) and k, v have Hkv, with H a whole multiple of Hkv,
    // proved by the sizes; each group of H / Hkv query heads reads one key/value head (torch's enable_gqa).
    bool grouped = false;
    if (q_lead.rank() >= 1 && kv_lead->rank() >= 1) {
      const Axis& heads = q_lead.axes.back();
      const Axis& kv_heads = kv_lead->axes.back();
      bool broadcasts = heads.size == kv_heads.size || heads.size.constant_value() == 1 || kv_heads.size.constant_value() == 1;
      if (!broadcasts) {
        auto groups = kv_heads.size.is_zero() ? std::nullopt : heads.size.divide_exact(kv_heads.size);
        if (groups && groups->constant_value() != 1) {
          grouped = true;
        } else if (q->rank() >= 4 || k->rank() >= 4) {
          call.report(DiagnosticCode::E0310, call.positional_span(1),
                      "`q` has " + describe_axis(heads) + " heads, but `k` has " + describe_axis(kv_heads) +
                          " key/value heads, which may not divide them into whole groups")
              .label(dim_word(k->rank() - 3) + ", the heads, is " + describe_axis(kv_heads))
              .secondary(call.positional_span(0), dim_word(q->rank() - 3) + ", the heads, is " + describe_axis(heads))
              .note("with fewer key/value heads than query heads (grouped-query attention), each group of H / Hkv query heads reads one "
                    "key/value head, so H must be a whole multiple of Hkv")
              .help("declare the query heads as a multiple of the key/value heads, as in `dim H = 4 * Hkv`, or give both the same heads");
          ok = false;
          grouped = true;  // reported: compare the other axes only
        }
      }
    }
    if (grouped) {
      if (auto rest = broadcast_leading(call, without_last(q_lead), q_is, without_last(*kv_lead), k_is)) {
        out_lead = *rest;
        out_lead.axes.push_back(q_lead.axes.back());
        if (ok) lowering(call, "gqa", "1");
      } else {
        ok = false;
      }
    } else if (auto joined = broadcast_leading(call, q_lead, q_is, *kv_lead, k_is)) {
      out_lead = *joined;
    } else {
      ok = false;
    }
  }
  if (const Argument* mask = call.keyword("attn_mask"); mask && mask->value) {
    const Expr& e = *mask->value;
    const ValueType* type = call.keyword_type("attn_mask");
    if (type && type->is_tensor()) {
      if (type->tensor.element.kind != ElementKind::bool_)
        wrong_shape(call, DiagnosticCode::E0401, e.span, "`attn_mask` must be `Bool`, but it is `" + type->tensor.element.to_string() + "`", type->tensor);
      // The mask is laid over the scores [.. n m]: it may broadcast to them, not grow them.
      TensorType scores = out_lead;
      scores.axes.push_back(q->axes[q->rank() - 2]);
      scores.axes.push_back(k->axes[k->rank() - 2]);
      if (auto laid = call.broadcast(type->tensor, scores, e.span, e.span)) {
        if (laid->rank() != scores.rank()) {
          wrong_shape(call, DiagnosticCode::E0304, e.span,
                      "the mask " + type->tensor.to_string() + " has more axes than the attention scores " + scores.to_string(), type->tensor);
        } else {
          bool fits = true;
          for (size_t i = 0; i < scores.rank(); ++i) fits = fits && laid->axes[i].size == scores.axes[i].size;
          if (!fits)
            wrong_shape(call, DiagnosticCode::E0304, e.span,
                        "the mask " + type->tensor.to_string() + " is larger than the attention scores " + scores.to_string(), type->tensor);
          // `causal[n m]` over exactly these positions is torch's own causal mask: is_causal=True.
          else if (call.is_builtin_causal(e) && type->tensor.rank() == 2)
            lowering(call, "causal", "1");
        }
      }
    }
  }
  TensorType scores = out_lead;
  scores.axes.push_back(q->axes[q->rank() - 2]);
  scores.axes.push_back(k->axes[k->rank() - 2]);
  attention_bias(call, scores);
  attention_softcap(call);
  attention_sinks(call, out_lead, *q);
  attention_window(call);
  TensorType out = out_lead;
  out.axes.push_back(q->axes[q->rank() - 2]);
  out.axes.push_back(v->axes.back());
  return tensor_value(out);
}

ValueType rule_rearrange(CallContext& call) {
  auto x = call.tensor(0);
  const AxisPattern* pattern = call.pattern();
  if (!x || !pattern) return ValueType::unknown();
  auto solution = call.solve_pattern(*pattern, {*x}, {call.positional_span(0)});
  if (!solution) return ValueType::unknown();
  TensorType out;
  out.axes = solution->output;
  out.element = x->element;
  return tensor_value(out);
}

// split(x, S1, S2, .., over=A): the axis A cut into pieces of the sizes given, in order; they must
// add up to A, as concat's result is named by the sum of its parts (DeepSeek's `(Dn + Dr)` heads).
ValueType split_sizes(CallContext& call, const TensorType& x) {
  auto axis = call.axis_argument(x, "over", call.positional_span(0));
  if (!axis) return ValueType::unknown();
  const Axis& cut = x.axes[*axis];
  ValueType tuple;
  tuple.kind = ValueType::Kind::tuple;
  SizeExpr total = SizeExpr::constant(0);
  std::string written;
  for (size_t i = 1; i < call.positional_count(); ++i) {
    const ValueType& size = call.positional(i);
    auto value = size.known_size ? size.known_size->constant_value() : std::nullopt;
    if (!size.known_size || (value && *value < 1)) {
      call.report(DiagnosticCode::E0505, call.positional_span(i), "`split` cuts " + describe_axis(cut) + " into pieces of the sizes given, but this is " +
                                                                       (size.known_size ? "`" + size.known_size->to_user_string() + "`" : size.to_string()))
          .label(size.known_size ? "not positive" : "not a size")
          .help("give each piece's size as a dim, an axis name or a number, as in `split(x, Dn, Dr, over=E)`");
      return ValueType::unknown();
    }
    TensorType piece = x;
    Axis& axis_of_piece = piece.axes[*axis];
    axis_of_piece.size = *size.known_size;
    // Labelled as written (`Dn`), as topk's `k=K` labels its axis.
    const Expr* value_expr = call.positional_value(i);
    bool named = value_expr && value_expr->kind == Expr::Kind::name;
    axis_of_piece.label = named ? value_expr->text : size_label(axis_of_piece.size);
    axis_of_piece.name = named ? value_expr->text : "";
    tuple.elements.push_back(tensor_value(piece));
    total = total + *size.known_size;
    written += (written.empty() ? "" : " + ") + axis_of_piece.label;
  }
  if (total != cut.size) {
    Span sizes{call.positional_span(1).begin, call.positional_span(call.positional_count() - 1).end};
    call.report(DiagnosticCode::E0301, sizes, "`split`'s pieces must add up to the axis they cut, but `" + written + "` is " + size_label(total) +
                                                  " and the axis is " + describe_axis(cut))
        .label("these add up to " + size_label(total))
        .secondary(call.positional_span(0), "the axis `over=` is " + describe_axis(cut))
        .help("give sizes that add up to `" + size_label(cut.size) + "`, or cut another axis with `over=`");
    return ValueType::unknown();
  }
  // Cut along the tokens, a packed batch's requests would be cut at the wrong places (E3304).
  works_across(call, cut);
  lowering(call, "dim", std::to_string(static_cast<int64_t>(*axis) - static_cast<int64_t>(x.rank())));
  return tuple;
}

ValueType rule_split(CallContext& call) {
  auto x = call.tensor(0);
  const AxisPattern* pattern = call.pattern();
  if (!x) return ValueType::unknown();
  if (!pattern) {
    if (call.positional_count() < 3) {
      call.report(DiagnosticCode::E0501, call.call_span(), "`split` with `over=` takes the tensor and the size of each piece, at least two")
          .label("`split(x, S1, S2, .., over=A)`");
      return ValueType::unknown();
    }
    return split_sizes(call, *x);
  }
  if (call.positional_count() > 1 || call.keyword("over")) {
    call.report(DiagnosticCode::E0504, call.call_span(), "`split` takes either an axis pattern (equal pieces) or the pieces' sizes with `over=`, not both")
        .label("`split(x, a (k b) -> a b)` or `split(x, S1, S2, .., over=A)`");
    return ValueType::unknown();
  }
  // The factor of a group that the output lacks is the number of pieces.
  std::set<std::string> output_names;
  for (const SizeNode& s : pattern->output) {
    if (s.kind == SizeNode::Kind::name) output_names.insert(s.name);
    for (const SizeNode& c : s.children)
      if (c.kind == SizeNode::Kind::name) output_names.insert(c.name);
  }
  const SizeNode* pieces = nullptr;
  if (!pattern->inputs.empty())
    for (const SizeNode& s : pattern->inputs[0])
      if (s.kind == SizeNode::Kind::group)
        for (const SizeNode& c : s.children)
          if (c.kind == SizeNode::Kind::number || (c.kind == SizeNode::Kind::name && !output_names.count(c.name))) pieces = &c;
  if (!pieces) {
    call.report(DiagnosticCode::E0307, pattern->span, "`split` needs a group with a factor the output lacks, the number of pieces, as in `(3 H Dh)`")
        .label("no factor to split by");
    return ValueType::unknown();
  }
  AxisPattern with_pieces = *pattern;
  with_pieces.output.insert(with_pieces.output.begin(), *pieces);
  auto solution = call.solve_pattern(with_pieces, {*x}, {call.positional_span(0)});
  if (!solution) return ValueType::unknown();
  auto count = solution->output.front().size.constant_value();
  if (!count || *count < 1 || *count > 64) {
    call.report(DiagnosticCode::E0307, pieces->span, "`split` needs a fixed number of pieces, but " + describe_axis(solution->output.front()) + " is not")
        .label("the number of pieces");
    return ValueType::unknown();
  }
  TensorType piece;
  piece.axes.assign(solution->output.begin() + 1, solution->output.end());
  piece.element = x->element;
  ValueType tuple;
  tuple.kind = ValueType::Kind::tuple;
  tuple.elements.assign(static_cast<size_t>(*count), tensor_value(piece));
  lowering(call, "pieces", std::to_string(*count));
  return tuple;
}

ValueType rule_einsum(CallContext& call) {
  const AxisPattern* pattern = call.pattern();
  if (!pattern) return ValueType::unknown();
  std::vector<TensorType> tensors;
  std::vector<Span> spans;
  for (size_t i = 0; i < call.positional_count(); ++i) {
    auto t = call.tensor(i);
    if (!t) return ValueType::unknown();
    tensors.push_back(*t);
    spans.push_back(call.positional_span(i));
  }
  if (tensors.size() != pattern->inputs.size()) {
    call.report(DiagnosticCode::E0307, pattern->span, "`einsum` has " + std::to_string(tensors.size()) + " operands but its pattern has " +
            std::to_string(pattern->inputs.size()) + " inputs").label("one input per operand, separated by commas");
    return ValueType::unknown();
  }
  auto solution = call.solve_pattern(*pattern, tensors, spans);
  if (!solution) return ValueType::unknown();
  // Axes named in the inputs but not the output are summed over: the einsum works across them.
  std::set<std::string> output_names;
  for (const SizeNode& s : pattern->output)
    if (s.kind == SizeNode::Kind::name) output_names.insert(s.name);
  std::set<std::string> seen;
  for (size_t i = 0; i < pattern->inputs.size(); ++i)
    for (size_t j = 0; j < pattern->inputs[i].size(); ++j) {
      const SizeNode& s = pattern->inputs[i][j];
      if (s.kind == SizeNode::Kind::name && !output_names.count(s.name) && seen.insert(s.name).second &&
          j < solution->input_axes[i].size())
        works_across(call, solution->input_axes[i][j]);
    }
  TensorType out;
  out.axes = solution->output;
  return tensor_value(out);
}

ValueType rule_concat(CallContext& call) {
  std::vector<TensorType> parts;
  for (size_t i = 0; i < call.positional_count(); ++i) {
    auto t = call.tensor(i);
    if (!t) return ValueType::unknown();
    parts.push_back(*t);
  }
  auto axis = call.axis_argument(parts[0], "over", call.positional_span(0));
  if (!axis) return ValueType::unknown();
  TensorType out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].rank() != out.rank()) {
      call.report(DiagnosticCode::E0306, call.positional_span(i), "`concat` joins tensors with the same number of axes, but " + parts[i].to_string() + " has " +
              std::to_string(parts[i].rank()) + " and " + out.to_string() + " has " + std::to_string(out.rank()))
          .label("this is " + parts[i].to_string());
      return ValueType::unknown();
    }
    for (size_t a = 0; a < out.rank(); ++a)
      if (a != *axis && out.axes[a].size != parts[i].axes[a].size) {
        auto d = call.report(DiagnosticCode::E0301, call.positional_span(i), "`concat` joins along " + describe_axis(parts[0].axes[*axis]) + " only, so the other axes must agree, but " +
                dim_word(a) + " is " + describe_axis(parts[i].axes[a]) + " here and " + describe_axis(out.axes[a]) + " in the first");
        d.label(dim_word(a) + " is " + describe_axis(parts[i].axes[a])).secondary(call.positional_span(0), dim_word(a) + " is " + describe_axis(out.axes[a]));
        // Joined along the wrong axis: every part agrees on `over=`'s and differs only in dim a.
        bool only_a = std::all_of(parts.begin(), parts.end(), [&](const TensorType& p) {
          if (p.rank() != out.rank()) return false;
          for (size_t b = 0; b < p.rank(); ++b)
            if (b != a && p.axes[b].size != parts[0].axes[b].size) return false;
          return true;
        });
        const Argument* over = call.keyword("over");
        const std::string& name = parts[0].axes[a].name;
        // Where the result is declared, the fix must give it: joined along a, `over=`'s axis kept.
        if (auto expected = call.expected_result(); only_a && expected && expected->rank() == out.rank()) {
          SizeExpr joined = parts[0].axes[a].size;
          for (size_t p = 1; p < parts.size(); ++p) joined = joined + parts[p].axes[a].size;
          only_a = expected->axes[a].size == joined && expected->axes[*axis].size == parts[0].axes[*axis].size;
        }
        if (only_a && over && over->value && !name.empty()) {
          d.secondary(over->value->span, "the parts agree on this axis")
              .help("to join along " + dim_word(a) + ", where the parts differ, write `over=" + name + "`")
              .fix("join along `" + name + "`", over->value->span, name);
        }
        return ValueType::unknown();
      }
    Axis& joined = out.axes[*axis];
    joined.size = joined.size + parts[i].axes[*axis].size;
    joined.label = size_label(joined.size);
    joined.name.clear();
  }
  // Parts alike joined along the wrong axis: the declared result says which axis grows. Reported at
  // `over=`, the cause, rather than as the result's mismatch.
  const Argument* over = call.keyword("over");
  if (auto expected = call.expected_result(); expected && expected->rank() == out.rank() && over && over->value && parts.size() > 1) {
    auto fits = [&](const TensorType& t) {
      for (size_t b = 0; b < t.rank(); ++b)
        if (t.axes[b].size != expected->axes[b].size) return false;
      return true;
    };
    for (size_t a = 0; a < out.rank() && !fits(out); ++a) {
      if (a == *axis) continue;
      TensorType along = parts[0];
      for (size_t p = 1; p < parts.size(); ++p) along.axes[a].size = along.axes[a].size + parts[p].axes[a].size;
      if (!fits(along)) continue;
      std::optional<std::string> name = call.written_axis(parts[0].axes[a], parts[0]);
      auto d = call.report(DiagnosticCode::E0301, over->value->span,
                           "`concat` joins along " + describe_axis(parts[0].axes[*axis]) + ", which makes " + out.to_string() + ", but the result is declared " +
                               expected->to_string());
      d.label("joins along " + describe_axis(parts[0].axes[*axis]));
      if (name)
        d.help("the declared result grows " + dim_word(a) + ": to join along it, write `over=" + *name + "`").fix("join along `" + *name + "`", over->value->span, *name);
      else
        d.help("the declared result grows " + dim_word(a) + ", " + describe_axis(parts[0].axes[a]) + ": join along it with `over=`");
      return tensor_value(*expected);
    }
  }
  lowering(call, "dim", std::to_string(*axis));
  return tensor_value(out);
}

ValueType rule_causal(CallContext&) { return ValueType::unknown(); }  // written `causal[n m]`: typed as a subscript

ValueType rule_cross_entropy(CallContext& call) {
  auto logits = call.tensor(0);
  auto targets = call.tensor(1);
  if (!logits || !targets) return ValueType::unknown();
  auto axis = call.axis_argument(*logits, "over", call.positional_span(0));
  if (!axis) return ValueType::unknown();
  works_across(call, logits->axes[*axis]);
  lowering(call, "dim", std::to_string(*axis));
  lowering(call, "rank", std::to_string(logits->rank()));
  // One class index per position: the targets are the logits without their class axis.
  const Axis& classes = logits->axes[*axis];
  TensorType positions = *logits;
  positions.axes.erase(positions.axes.begin() + static_cast<std::ptrdiff_t>(*axis));
  if (!targets->element.is_integer()) {
    call.report(DiagnosticCode::E0401, call.positional_span(1), "`cross_entropy`'s targets are class indices, but these are `" + targets->element.to_string() + "`")
        .label("these are `" + targets->element.to_string() + "`").help("give the targets the type `Index[" + classes.label + "]`");
    return ValueType::unknown();
  }
  bool fits = targets->rank() == positions.rank();
  for (size_t i = 0; fits && i < positions.rank(); ++i) fits = targets->axes[i].size == positions.axes[i].size;
  if (!fits) {
    call.report(DiagnosticCode::E0306, call.positional_span(1), "`cross_entropy`'s targets must be " + (positions.rank() == 0 ? std::string("one index, a scalar") : positions.to_string()) + ", the logits " + logits->to_string() +
            " without their class axis " + describe_axis(classes) + ", but they are " + targets->to_string())
        .label("this is " + targets->to_string())
        .secondary(call.positional_span(0), "this is " + logits->to_string())
        .note("the targets hold one class index for each position of the logits");
    return ValueType::unknown();
  }
  if (targets->element.kind == ElementKind::index && !(targets->element.bound == classes.size)) {
    call.report(DiagnosticCode::E0402, call.positional_span(1), "targets of type `" + targets->element.to_string() + "` pick among " + describe_axis(classes) + " classes")
        .label("these are below " + targets->element.bound.to_user_string())
        .secondary(call.positional_span(0), "the classes, `over=`, are " + describe_axis(classes))
        .note("a target of `Index[N]` may be any integer below N, so the logits need exactly N classes");
    return ValueType::unknown();
  }
  return ValueType::scalar(ElementKind::nonneg);
}

// ---- selection, bounds, stacking and tensors made from a shape ----

// The element type two values share where either may be taken (`where`, `minimum`): their own when
// they agree, Int for integers, NonNeg for two non-negatives, else Real.
ElementType common_element(const ElementType& a, const ElementType& b) {
  if (a.kind == b.kind && (a.kind != ElementKind::index || a.bound == b.bound)) return a;
  ElementType out;
  bool nonneg_a = a.kind == ElementKind::nonneg || a.kind == ElementKind::index;
  bool nonneg_b = b.kind == ElementKind::nonneg || b.kind == ElementKind::index;
  out.kind = a.is_integer() && b.is_integer() ? ElementKind::int_ : nonneg_a && nonneg_b ? ElementKind::nonneg : ElementKind::real;
  return out;
}

// `value` may be laid over `target` by broadcasting without growing it (E0304 otherwise).
bool broadcasts_into(CallContext& call, const TensorType& value, const TensorType& target, Span span, std::string_view what) {
  auto laid = call.broadcast(value, target, span);
  if (!laid) return false;
  bool fits = laid->rank() == target.rank();
  for (size_t i = 0; fits && i < target.rank(); ++i) fits = laid->axes[i].size == target.axes[i].size;
  if (!fits)
    wrong_shape(call, DiagnosticCode::E0304, span, std::string(what) + " " + value.to_string() + " would grow " + target.to_string() + " when broadcast",
                value);
  return fits;
}

ValueType rule_where(CallContext& call) {
  auto cond = call.tensor(0);
  auto a = call.tensor(1);
  auto b = call.tensor(2);
  if (!cond || !a || !b) return ValueType::unknown();
  if (cond->element.kind != ElementKind::bool_) {
    wrong_shape(call, DiagnosticCode::E0401, call.positional_span(0), "`where`'s condition must be `Bool`, but it is `" + cond->element.to_string() + "`", *cond);
    return ValueType::unknown();
  }
  auto values = call.broadcast(*a, *b, call.call_span(), call.positional_span(1), call.positional_span(2));
  if (!values) return ValueType::unknown();
  auto shape = call.broadcast(*cond, *values, call.positional_span(0), call.positional_span(0));
  if (!shape) return ValueType::unknown();
  shape->element = common_element(a->element, b->element);
  return tensor_value(*shape);
}

ValueType rule_elementwise_pair(CallContext& call) {  // minimum, maximum
  auto a = call.tensor(0);
  auto b = call.tensor(1);
  if (!a || !b) return ValueType::unknown();
  auto shape = call.broadcast(*a, *b, call.call_span(), call.positional_span(0), call.positional_span(1));
  if (!shape) return ValueType::unknown();
  shape->element = common_element(a->element, b->element);
  return tensor_value(*shape);
}

ValueType rule_clamp(CallContext& call) {
  auto x = call.tensor(0);
  if (!x) return ValueType::unknown();
  if (!call.keyword("min") && !call.keyword("max")) {
    call.report(DiagnosticCode::E0503, call.call_span(), "`clamp` needs `min=`, `max=` or both").label("no bound given");
    return ValueType::unknown();
  }
  ElementType element = x->element;
  auto plain = [](ElementKind kind) {
    ElementType out;
    out.kind = kind;
    return out;
  };
  // Bounds may move an index off its table, and a logit off its distribution.
  if (element.kind == ElementKind::index || element.kind == ElementKind::logit) element = plain(element.kind == ElementKind::index ? ElementKind::int_ : ElementKind::real);
  for (const char* bound : {"min", "max"}) {
    const ValueType* type = call.keyword_type(bound);
    const Argument* argument = call.keyword(bound);
    if (!type || !argument || type->is_unknown()) continue;
    Span span = argument->value ? argument->value->span : argument->span;
    if (!type->is_tensor()) {
      call.report(DiagnosticCode::E0505, span, "`" + std::string(bound) + "=` must be a number or a tensor, but this is " + type->to_string()).label("not a number");
      return ValueType::unknown();
    }
    if (type->tensor.element.kind == ElementKind::bool_) {
      wrong_shape(call, DiagnosticCode::E0401, span, "`" + std::string(bound) + "=` must be a number, but it is `Bool`", type->tensor);
      return ValueType::unknown();
    }
    if (!broadcasts_into(call, type->tensor, *x, span, "`" + std::string(bound) + "=`")) return ValueType::unknown();
    if (!type->tensor.element.is_integer()) element = plain(element.kind == ElementKind::nonneg ? ElementKind::nonneg : ElementKind::real);
  }
  // A lower bound of a non-negative number keeps the result non-negative.
  if (const ValueType* low = call.keyword_type("min"); low && low->is_tensor() && element.kind == ElementKind::real &&
                                                         (low->tensor.element.kind == ElementKind::nonneg || low->tensor.element.kind == ElementKind::index))
    element.kind = ElementKind::nonneg;
  x->element = element;
  return tensor_value(*x);
}

ValueType rule_stack(CallContext& call) {
  std::vector<TensorType> parts;
  for (size_t i = 0; i < call.positional_count(); ++i) {
    auto t = call.tensor(i);
    if (!t) return ValueType::unknown();
    parts.push_back(*t);
  }
  TensorType out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].rank() != out.rank()) {
      call.report(DiagnosticCode::E0306, call.positional_span(i), "`stack` stacks tensors of one shape, but " + parts[i].to_string() + " has " +
              std::to_string(parts[i].rank()) + " axes and " + out.to_string() + " has " + std::to_string(out.rank()))
          .label("this is " + parts[i].to_string());
      return ValueType::unknown();
    }
    for (size_t a = 0; a < out.rank(); ++a)
      if (!call.expect_same_size(out.axes[a], parts[i].axes[a], call.positional_span(i), dim_word(a) + " of the stacked tensor")) return ValueType::unknown();
    out.element = common_element(out.element, parts[i].element);
  }
  // `over=` names the new first axis: a new name, or a dim or a number equal to the count.
  Axis axis;
  axis.size = SizeExpr::constant(static_cast<int64_t>(parts.size()));
  const Argument* over = call.keyword("over");
  if (!over) {
    // PyTorch's `dim=1`, reported, read as its fix writes it: `over=N` (N the count) moved there.
    TensorType made = out;
    made.axes.insert(made.axes.begin(), axis);
    auto at = call.axis_argument(made, "over", call.call_span());
    if (!at) return ValueType::unknown();
    axis.label = std::to_string(parts.size());
    out.axes.insert(out.axes.begin() + static_cast<std::ptrdiff_t>(*at), axis);
    return tensor_value(out);
  }
  if (!over->value) return ValueType::unknown();
  const Expr& named = *over->value;
  std::optional<SizeExpr> given;
  if (named.kind == Expr::Kind::name) {
    axis.label = axis.name = named.text;
    given = call.size_named(named.text);
  } else if (named.kind == Expr::Kind::number && named.is_integer) {
    axis.label = std::to_string(static_cast<int64_t>(named.number));
    given = SizeExpr::constant(static_cast<int64_t>(named.number));
  } else {
    call.report(DiagnosticCode::E0305, named.span, "`over=` names the new axis, such as `over=K`, or gives its size as a number").label("not an axis name");
    return ValueType::unknown();
  }
  if (given && !(*given == axis.size)) {
    call.report(DiagnosticCode::E0301, named.span, "`stack` of " + std::to_string(parts.size()) + " tensors makes an axis of " + std::to_string(parts.size()) +
            ", but `over=" + axis.label + "` is " + given->to_user_string())
        .label("not " + std::to_string(parts.size()))
        .help("name the new axis with a name not in use, or stack " + given->to_user_string() + " tensors");
    return ValueType::unknown();
  }
  out.axes.insert(out.axes.begin(), axis);
  return tensor_value(out);
}

// The shape in the callee's brackets (`full[n m]`), resolved.
std::optional<std::vector<Axis>> bracket_shape(CallContext& call) {
  const std::vector<SizeNode>* sizes = call.shape();
  if (!sizes) return std::nullopt;
  return call.resolve_axes(*sizes);
}

ValueType rule_full(CallContext& call) {
  auto shape = bracket_shape(call);
  auto value = call.tensor(0);
  if (!shape || !value) return ValueType::unknown();
  if (value->rank() != 0) {
    wrong_shape(call, DiagnosticCode::E0306, call.positional_span(0), "`full` fills its shape with one number, but this is " + value->to_string(), *value);
    return ValueType::unknown();
  }
  TensorType out;
  out.axes = *shape;
  out.element = value->element;
  return tensor_value(out);
}

ValueType rule_expand(CallContext& call) {
  auto shape = bracket_shape(call);
  auto x = call.tensor(0);
  if (!shape || !x) return ValueType::unknown();
  TensorType out;
  out.axes = *shape;
  out.element = x->element;
  if (!broadcasts_into(call, *x, out, call.positional_span(0), "`expand`'s tensor")) return ValueType::unknown();
  return tensor_value(out);
}

ValueType rule_initializer(CallContext&) { return ValueType::unknown(); }  // typed by the parameter it initializes

ValueType rule_dropout(CallContext& call) {
  auto x = call.tensor(0);
  if (!x) return ValueType::unknown();
  return tensor_value(*x);
}

// ---- training: models, datasets, gradients, optimizers, modes, logs, checkpoints ----

// The i-th argument as a model, or nullopt after E0801.
std::optional<ValueType> model_argument(CallContext& call, size_t i) {
  std::string_view builtin = call.facts && call.facts->builtin ? call.facts->builtin->name : "this built-in";
  if (i >= call.positional_count()) return std::nullopt;
  const ValueType& value = call.positional(i);
  if (value.kind == ValueType::Kind::model) return value;
  if (value.is_unknown()) return std::nullopt;
  call.report(DiagnosticCode::E0801, call.positional_span(i), "`" + std::string(builtin) + "` needs a model, but this is " + value.to_string())
      .label("not a model").help("make one with `init(M)` for a `model M:`");
  return std::nullopt;
}

// A string argument (a path, a name); E0501 when it is something else.
void string_argument(CallContext& call, size_t i, std::string_view what) {
  if (i < call.positional_count() && (call.positional(i).kind == ValueType::Kind::string || call.positional(i).is_unknown())) return;
  call.report(DiagnosticCode::E0501, i < call.positional_count() ? call.positional_span(i) : call.call_span(), "this must be a string: " + std::string(what))
      .label("not a string");
}

ValueType rule_init(CallContext& call) {  // the checker evaluates `init(M)`'s model name as the model's type
  auto model = model_argument(call, 0);
  return model ? *model : ValueType::unknown();
}

ValueType rule_modes(CallContext& call) {
  model_argument(call, 0);
  return ValueType::none();
}

// A keyword that must be a size known when checking (`batch=B`): its value, or nullopt after E0804.
std::optional<Axis> fixed_size_keyword(CallContext& call, std::string_view keyword) {
  const Argument* argument = call.keyword(keyword);
  const ValueType* value = call.keyword_type(keyword);
  if (!argument || !value) return std::nullopt;
  if (value->known_size && value->known_size->constant_value() && *value->known_size->constant_value() > 0) {
    Axis axis;
    axis.size = *value->known_size;
    axis.label = argument->value && argument->value->kind == Expr::Kind::name ? argument->value->text : value->known_size->to_user_string();
    axis.name = axis.label;
    return axis;
  }
  if (value->is_unknown()) return std::nullopt;
  call.report(DiagnosticCode::E0804, argument->span, "`" + std::string(keyword) + "=` must be a fixed size, such as a `dim`, but this is " + value->to_string())
      .label("not a fixed size");
  return std::nullopt;
}

ValueType rule_dataset(CallContext& call) {
  string_argument(call, 0, "the path of a text file, whose bytes are the tokens");
  auto batch = fixed_size_keyword(call, "batch");
  auto length = fixed_size_keyword(call, "length");
  auto vocab = fixed_size_keyword(call, "vocab");
  if (!batch || !length || !vocab) return ValueType::unknown();
  if (const Argument* tokenizer = call.keyword("tokenizer")) {
    // The tokens are the tokenizer's ids: the vocabulary must hold every one (a larger one is
    // padding, as GPT-2's 50257 ids in 50304 rows).
    const Expr* path = tokenizer->value.get();
    if (!path || path->kind != Expr::Kind::string) {
      call.report(DiagnosticCode::E0501, tokenizer->span, "`tokenizer=` must be a string: the path of a tokenizer.json").label("not a string");
      return ValueType::unknown();
    }
    std::string error;
    auto size = call.tokenizer_size(path->text, error);
    if (!error.empty()) {
      call.report(DiagnosticCode::E0804, path->span, "can't read the tokenizer `" + path->text + "`: " + error).label("a path relative to the .ss file");
      return ValueType::unknown();
    }
    if (size && *size > *vocab->size.constant_value()) {
      call.report(DiagnosticCode::E0804, call.keyword("vocab")->span, "the tokenizer `" + path->text + "` gives ids up to " + std::to_string(*size - 1) +
              ", but `vocab=" + vocab->label + "` is " + std::to_string(*vocab->size.constant_value()))
          .label("fewer than the tokenizer's " + std::to_string(*size) + " ids")
          .secondary(path->span, "this tokenizer has " + std::to_string(*size) + " ids")
          .help("give the model a vocabulary of at least " + std::to_string(*size) + ", such as `dim " + vocab->label + " = " + std::to_string(*size) + "`");
      return ValueType::unknown();
    }
  } else if (*vocab->size.constant_value() < 256) {
    call.report(DiagnosticCode::E0804, call.keyword("vocab")->span, "a dataset's tokens are its file's bytes, 0 to 255, but `vocab=" + vocab->label + "` is " +
            std::to_string(*vocab->size.constant_value())).label("fewer than 256 tokens")
        .help("give the model a vocabulary of at least 256, such as `dim V = 256`");
    return ValueType::unknown();
  }
  ValueType v;
  v.kind = ValueType::Kind::dataset;
  v.tensor.axes = {*batch, *length};
  v.tensor.element.kind = ElementKind::index;
  v.tensor.element.bound = vocab->size;
  v.tensor.element.bound_label = vocab->label;
  return v;
}

ValueType rule_next_batch(CallContext& call) {
  if (call.positional_count() < 1) return ValueType::unknown();
  const ValueType& data = call.positional(0);
  if (data.kind != ValueType::Kind::dataset) {
    if (!data.is_unknown()) {
      call.report(DiagnosticCode::E0501, call.positional_span(0), "`next_batch` takes a dataset, but this is " + data.to_string())
          .label("not a dataset").help("make one with `dataset(\"text.txt\", batch=B, length=T, vocab=V)`");
    }
    return ValueType::unknown();
  }
  ValueType ids = ValueType::of(data.tensor);
  ValueType pair;
  pair.kind = ValueType::Kind::tuple;
  pair.elements = {ids, ids};  // the ids, and the next token after each: the targets
  return pair;
}

ValueType rule_grad(CallContext& call) {
  auto model = model_argument(call, 1);
  if (call.positional_count() < 1) return ValueType::unknown();
  const ValueType& loss = call.positional(0);
  if (!loss.is_unknown() && !(loss.is_tensor() && loss.tensor.rank() == 0 && loss.tensor.element.is_real())) {
    call.report(DiagnosticCode::E0802, call.positional_span(0), "`grad` differentiates a scalar loss, but this is " + loss.to_string())
        .label("not a Real scalar")
        .help("reduce it to one number first, as `cross_entropy(logits, targets, over=V)` or `mean(x, over=A)` do");
    return ValueType::unknown();
  }
  if (!model) return ValueType::unknown();
  ValueType pair;
  pair.kind = ValueType::Kind::tuple;
  pair.elements = {ValueType::scalar(ElementKind::real), *model};  // the loss, and its gradient: a value of the model's type
  return pair;
}

ValueType rule_optimizer(CallContext& call) {
  auto model = model_argument(call, 0);
  if (!model) return ValueType::unknown();
  ValueType v;
  v.kind = ValueType::Kind::optimizer;
  v.name = model->name;
  return v;
}

ValueType rule_update(CallContext& call) {
  if (call.positional_count() < 2) return ValueType::none();
  const ValueType& optimizer = call.positional(0);
  const ValueType& gradient = call.positional(1);
  if (optimizer.kind != ValueType::Kind::optimizer) {
    if (!optimizer.is_unknown()) {
      call.report(DiagnosticCode::E0803, call.positional_span(0), "`update` takes an optimizer first, but this is " + optimizer.to_string())
          .label("not an optimizer").help("make one with `adamw(m, lr=3e-4)` or `sgd(m, lr=0.1)`");
    }
    return ValueType::none();
  }
  if (gradient.is_unknown() || (gradient.kind == ValueType::Kind::model && gradient.name == optimizer.name)) return ValueType::none();
  call.report(DiagnosticCode::E0803, call.positional_span(1), "this optimizer updates `" + optimizer.name + "`, but this is " +
          (gradient.kind == ValueType::Kind::model ? "a gradient of `" + gradient.name + "`" : gradient.to_string()))
      .label(gradient.kind == ValueType::Kind::model ? "another model's gradient" : "not a gradient")
      .help("pass the gradient `grad(loss, m)` gives for the optimizer's model");
  return ValueType::none();
}

ValueType rule_log_scalar(CallContext& call) {
  string_argument(call, 0, "the scalar's name, such as \"loss\"");
  if (call.positional_count() >= 2) {
    const ValueType& value = call.positional(1);
    if (!value.is_unknown() && !(value.is_tensor() && value.tensor.rank() == 0)) {
      call.report(DiagnosticCode::E0306, call.positional_span(1), "`log_scalar` logs one number, but this is " + value.to_string())
          .label("not a scalar");
    }
  }
  return ValueType::none();
}

ValueType rule_save_checkpoint(CallContext& call) {
  model_argument(call, 0);
  string_argument(call, 1, "the checkpoint's path");
  return ValueType::none();
}

// topk(x, k=K, over=E): the K largest along E, largest first, and where they are: a tuple of
// values [.. K ..] and indices [.. K ..] Index[E] (what `experts` routes by).
ValueType rule_topk(CallContext& call) {
  auto x = call.tensor(0);
  if (!x) return ValueType::unknown();
  auto axis = call.axis_argument(*x, "over", call.positional_span(0));
  const Argument* k_argument = call.keyword("k");
  const ValueType* k_type = call.keyword_type("k");
  if (!axis || !k_argument || !k_type || k_type->is_unknown()) return ValueType::unknown();
  Span k_span = k_argument->value ? k_argument->value->span : k_argument->span;
  auto k = k_type->known_size ? k_type->known_size->constant_value() : std::nullopt;
  if (!k || *k < 1) {
    call.report(DiagnosticCode::E0505, k_span, "`topk`'s `k=` must be a fixed positive size, such as a `dim` or a number, but this is " +
                                                  (k_type->known_size ? "`" + k_type->known_size->to_user_string() + "`" : k_type->to_string()))
        .label(k ? "not positive" : "not a fixed size")
        .help("declare it as a dim, as in `dim K = 2`, and pass `k=K`");
    return ValueType::unknown();
  }
  const Axis& over = x->axes[*axis];
  if (auto size = over.size.constant_value(); size && *k > *size) {
    call.report(DiagnosticCode::E0301, k_span, "`topk` takes the " + std::to_string(*k) + " largest of " + describe_axis(over) + ", which has fewer")
        .label("k is " + std::to_string(*k))
        .secondary(call.positional_span(0), "the axis `over=` is " + describe_axis(over));
    return ValueType::unknown();
  }
  works_across(call, over);
  lowering(call, "dim", std::to_string(static_cast<int64_t>(*axis) - static_cast<int64_t>(x->rank())));
  Axis chosen;
  chosen.size = *k_type->known_size;
  chosen.label = k_argument->value && k_argument->value->kind == Expr::Kind::name ? k_argument->value->text : std::to_string(*k);
  chosen.name = chosen.label;
  TensorType values = *x;
  values.axes[*axis] = chosen;
  TensorType indices = values;
  indices.element = ElementType{};
  indices.element.kind = ElementKind::index;
  indices.element.bound = over.size;
  indices.element.bound_label = over.label;
  ValueType pair;
  pair.kind = ValueType::Kind::tuple;
  pair.elements = {tensor_value(values), tensor_value(indices)};
  return pair;
}


// ---- convolution and pooling: sizes as exact size arithmetic ----

// How much of the axis a window takes beyond its first position, net of padding: d(k-1) + 1 - 2p,
// the smallest axis it fits in. Checked arithmetic (std::overflow_error, which the checker reports).
SizeExpr window_reach(const SizeOrigin& step) {
  return SizeExpr::constant(step.dilation) * SizeExpr::constant(step.kernel - 1) + SizeExpr::constant(1) - SizeExpr::constant(2) * SizeExpr::constant(step.padding);
}

// One window step applied to a fixed size: floor((in + 2p - d(k-1) - 1) / s) + 1, or in * scale.
// nullopt when nothing of the window fits (the result would be below 1).
// The sizes are a program's own, so the arithmetic is checked: a step that overflows gives nullopt.
std::optional<int64_t> apply_step(const SizeOrigin& step, int64_t in) {
  try {
    SizeExpr size = step.scale > 0 ? SizeExpr::constant(in) * SizeExpr::constant(step.scale) : SizeExpr::constant(in) - window_reach(step);
    auto value = size.constant_value();
    if (!value || *value < 0) return std::nullopt;
    return step.scale > 0 ? *value : *value / step.stride + 1;
  } catch (const std::overflow_error&) {
    return std::nullopt;
  }
}

// The steps that made `axis` from an axis written in a signature (its root), root first.
std::vector<const SizeOrigin*> window_steps(const Axis& axis, const Axis** root) {
  std::vector<const SizeOrigin*> steps;
  const Axis* at = &axis;
  while (at->origin && !at->origin->step.empty() && at->origin->inputs.size() == 1) {
    steps.push_back(at->origin.get());
    at = &at->origin->inputs[0];
  }
  std::reverse(steps.begin(), steps.end());
  if (root) *root = at;
  return steps;
}

// Whether a convolution, pooling or interpolation made the axis, or a factor of it (a flatten).
bool made_by_windows(const Axis& axis) {
  if (!axis.origin) return false;
  if (!axis.origin->step.empty()) return true;
  return std::any_of(axis.origin->inputs.begin(), axis.origin->inputs.end(), [](const Axis& f) { return f.origin && !f.origin->step.empty(); });
}

// The root size run through `steps`, or nullopt when a step leaves nothing.
std::optional<int64_t> run_steps(const std::vector<const SizeOrigin*>& steps, int64_t root) {
  std::optional<int64_t> size = root;
  for (const SizeOrigin* step : steps)
    if (size) size = apply_step(*step, *size);
  return size;
}

// "28–29, 32" for a sorted list of sizes: runs of consecutive sizes as ranges, at most four.
std::string size_ranges(const std::vector<int64_t>& sizes) {
  std::string out;
  size_t runs = 0;
  for (size_t i = 0; i < sizes.size();) {
    size_t j = i;
    while (j + 1 < sizes.size() && sizes[j + 1] == sizes[j] + 1) ++j;
    if (++runs > 4) return out + ", …";
    out += (out.empty() ? "" : ", ") + std::to_string(sizes[i]) + (j > i ? "–" + std::to_string(sizes[j]) : "");
    i = j + 1;
  }
  return out;
}

// The fixed sizes up to 4096 of a root that the steps take to a size `fits`, sorted.
std::vector<int64_t> fitting_roots(const std::vector<std::vector<const SizeOrigin*>>& chains, const std::function<bool(const std::vector<int64_t>&)>& fits) {
  std::vector<int64_t> found;
  for (int64_t r = 1; r <= 4096; ++r) {
    std::vector<int64_t> sizes;
    for (const auto& chain : chains)
      if (auto s = run_steps(chain, r)) sizes.push_back(*s);
    if (sizes.size() == chains.size() && fits(sizes)) found.push_back(r);
  }
  return found;
}

std::string joined(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : std::string(separator)) + p;
  return out;
}

// Labels each convolution or pooling call that made `axes` with the sizes it made ("28 × 28 → 14 × 14").
void label_steps(DiagnosticBuilder& d, const std::vector<const Axis*>& axes) {
  std::vector<Span> order;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<std::vector<std::string>, std::vector<std::string>>> made;
  for (const Axis* axis : axes) {
    // Walked from the last step back: each step's output is the axis whose origin it is.
    std::vector<std::pair<const SizeOrigin*, const Axis*>> steps;
    for (const Axis* at = axis; at->origin && !at->origin->step.empty() && at->origin->inputs.size() == 1; at = &at->origin->inputs[0])
      steps.push_back({at->origin.get(), at});
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      auto key = std::make_pair(it->first->at.begin, it->first->at.end);
      if (!made.count(key)) order.push_back(it->first->at);
      made[key].first.push_back(it->first->inputs[0].size.to_user_string());
      made[key].second.push_back(it->second->size.to_user_string());
    }
  }
  for (const Span& span : order) {
    auto& [ins, outs] = made[{span.begin, span.end}];
    d.secondary(span, joined(ins, " × ") + " → " + joined(outs, " × ") + " here");
  }
}

// A linear head whose input size `got` (a flatten of convolution or pooling outputs) is not the
// weight's `want`: which steps made it, and which input sizes would give `want`.
void explain_head_mismatch(DiagnosticBuilder& d, const Axis& in, int64_t want) {
  std::vector<Axis> factors = in.origin && in.origin->step.empty() ? in.origin->inputs : std::vector<Axis>{in};
  int64_t others = 1;
  std::vector<std::string> other_labels;
  std::vector<const Axis*> spatial;
  std::vector<std::vector<const SizeOrigin*>> chains;
  std::vector<const Axis*> roots;
  for (const Axis& f : factors) {
    const Axis* root = nullptr;
    auto steps = window_steps(f, &root);
    if (steps.empty()) {
      auto size = f.size.constant_value();
      if (!size) return;
      others *= *size;
      other_labels.push_back(f.label.empty() ? std::to_string(*size) : f.label);
      continue;
    }
    if (!root->size.constant_value()) return;
    spatial.push_back(&f);
    chains.push_back(std::move(steps));
    roots.push_back(root);
  }
  if (spatial.empty()) return;
  label_steps(d, spatial);
  std::vector<std::string> started, now;
  for (const Axis* r : roots) started.push_back(r->size.to_user_string());
  for (const Axis* s : spatial) now.push_back(s->size.to_user_string());
  std::set<std::pair<uint32_t, uint32_t>> labelled;
  for (const Axis* r : roots)
    if (!r->bound_at.empty() && labelled.insert({r->bound_at.begin, r->bound_at.end}).second) d.secondary(r->bound_at, "the steps start from " + r->size.to_user_string());
  std::string product = joined(other_labels, "*") + (other_labels.empty() ? "" : "*") + joined(now, "*");
  d.note("the input's last axis is " + product + " = " + in.size.to_user_string() + ": the steps above make " + joined(started, " × ") + " into " + joined(now, " × ") +
         ", and the weight reads " + std::to_string(want));
  bool same_roots = std::all_of(roots.begin(), roots.end(), [&](const Axis* r) { return r->size == roots[0]->size; });
  std::string fix_weight = "declare the weight's `in` axis as `" + product + "`";
  auto gives_want = [&](const std::vector<int64_t>& sizes) {
    int64_t size = others;
    for (int64_t s : sizes) size *= s;
    return size == want;
  };
  // A square input first (every size the same, as they are now); else one size changed, the rest kept.
  if (same_roots) {
    if (auto fits = fitting_roots(chains, gives_want); !fits.empty()) {
      d.help("input sizes of " + size_ranges(fits) + " in place of " + joined(started, " × ") + " give " + std::to_string(want) + " through these steps: declare the input so, or " + fix_weight);
      return;
    }
  }
  for (size_t i = 0; i < chains.size() && roots.size() > 1; ++i) {
    std::vector<int64_t> kept;
    for (const Axis* s : spatial) kept.push_back(*s->size.constant_value());
    auto fits = fitting_roots({chains[i]}, [&](const std::vector<int64_t>& sizes) {
      std::vector<int64_t> all = kept;
      all[i] = sizes[0];
      return gives_want(all);
    });
    if (!fits.empty()) {
      d.help("with the other sizes kept, " + size_ranges(fits) + " in place of " + (i == 0 ? std::string("the first") : i == 1 ? std::string("the second") : "size " + std::to_string(i + 1)) + " of " + joined(started, " × ") + " gives " + std::to_string(want) +
             " through these steps: declare the input so, or " + fix_weight);
      return;
    }
  }
  d.help("no input size gives " + std::to_string(want) + " through these steps: " + fix_weight);
}

// A keyword that must be a fixed integer of at least `minimum` (`stride=2`): its value, `otherwise`
// when the call leaves it out, or nullopt after E0505.
std::optional<int64_t> fixed_int_keyword(CallContext& call, std::string_view keyword, std::optional<int64_t> otherwise, int64_t minimum) {
  const Argument* argument = call.keyword(keyword);
  const ValueType* type = call.keyword_type(keyword);
  if (!argument || !type) return otherwise;
  if (type->is_unknown()) return std::nullopt;
  auto value = type->known_size ? type->known_size->constant_value() : std::nullopt;
  if (value && *value >= minimum) return value;
  call.report(DiagnosticCode::E0505, argument->value ? argument->value->span : argument->span,
              "`" + std::string(keyword) + "=` must be a fixed integer of at least " + std::to_string(minimum) + ", such as a `dim` or a number")
      .label(value ? "this is " + std::to_string(*value) : "not a fixed size");
  return std::nullopt;
}

std::string_view builtin_name(CallContext& call) { return call.facts && call.facts->builtin ? call.facts->builtin->name : "this built-in"; }

// The axis a window makes along `in`: exact size arithmetic, E0320 where nothing fits and E0321
// where a generic size would have to be rounded down.
std::optional<Axis> window_axis(CallContext& call, const Axis& in, SizeOrigin step) {
  std::string name(builtin_name(call));
  step.step = name;
  step.at = call.call_span();
  step.inputs = {in};
  const int64_t needs = *window_reach(step).constant_value();
  SizeExpr numerator = in.size - SizeExpr::constant(needs);
  std::optional<SizeExpr> size = step.scale > 0 ? std::optional<SizeExpr>(in.size * SizeExpr::constant(step.scale)) : numerator.floor_divide(step.stride);
  if (size && step.scale == 0) *size += SizeExpr::constant(1);
  std::string window = "kernel " + std::to_string(step.kernel) + (step.stride != 1 ? ", stride " + std::to_string(step.stride) : "") +
                       (step.padding ? ", padding " + std::to_string(step.padding) : "") + (step.dilation != 1 ? ", dilation " + std::to_string(step.dilation) : "");
  if (!size) {
    auto d = call.report(DiagnosticCode::E0321, call.positional_span(0),
                         "`" + name + "` (" + window + ") makes " + describe_axis(in) + " into (" + numerator.to_user_string() + ") / " + std::to_string(step.stride) +
                             " + 1 rounded down, which is no size expression for every `" + in.size.to_user_string() + "`");
    d.label("an axis is " + describe_axis(in));
    if (!in.bound_at.empty()) d.secondary(in.bound_at, describe_axis(in) + " is bound here");
    std::vector<std::string> vars = in.size.variables();
    if (vars.size() == 1 && in.size == SizeExpr::variable(vars[0]))
      d.help("promise a multiple of " + std::to_string(step.stride) + " where `" + vars[0] + "` is bound, by writing it as `" + std::to_string(step.stride) + vars[0] + "`");
    else
      d.help("write the axis so that every term but the number is a multiple of " + std::to_string(step.stride));
    return std::nullopt;
  }
  auto fixed = size->constant_value();
  // A generic size is at its smallest when every axis in it is 1 (when its coefficients are all
  // positive): a window that doesn't fit then would fail when the program runs with small inputs.
  bool increasing = std::all_of(in.size.terms().begin(), in.size.terms().end(), [](const auto& term) { return term.first.empty() || term.second > 0; });
  if (!fixed && step.scale == 0 && increasing) {
    SizeBindings ones;
    for (const std::string& v : in.size.variables()) ones[v] = SizeExpr::constant(1);
    auto smallest = in.size.substitute(ones).constant_value();
    if (smallest && *smallest < needs) {
      std::vector<std::string> vars = in.size.variables();
      auto d = call.report(DiagnosticCode::E0320, call.positional_span(0),
                           "`" + name + "` (" + window + ") needs an axis of at least " + std::to_string(needs) + ", but " + describe_axis(in) + " may be " +
                               std::to_string(*smallest) + ": nothing of the window fits then");
      d.label("an axis is " + describe_axis(in));
      if (!in.bound_at.empty()) d.secondary(in.bound_at, describe_axis(in) + " is bound here");
      if (vars.size() == 1 && in.size == SizeExpr::variable(vars[0]))
        d.help("promise room for the window where `" + vars[0] + "` is bound, by writing it as `" + vars[0] + "+" + std::to_string(needs - 1) + "`");
      return std::nullopt;
    }
  }
  if (fixed && *fixed < 1) {
    auto d = call.report(DiagnosticCode::E0320, call.positional_span(0),
                         "`" + name + "` (" + window + ") needs an axis of at least " + std::to_string(needs) + ", but this one is " + describe_axis(in) +
                             ": nothing of the window fits");
    d.label("an axis is " + describe_axis(in));
    const Axis* root = nullptr;
    auto steps = window_steps(in, &root);
    if (!steps.empty()) {
      label_steps(d, {&in});
      if (root->size.constant_value()) {
        auto fits = fitting_roots({steps}, [&](const std::vector<int64_t>& sizes) { return sizes[0] >= needs; });
        if (!fits.empty()) d.help("an input size of at least " + std::to_string(fits[0]) + " in place of " + root->size.to_user_string() + " reaches this step with " + std::to_string(needs) + " or more");
      }
    } else {
      d.help("give it an axis of at least " + std::to_string(needs) + ", or pad it (`padding=`)");
    }
    return std::nullopt;
  }
  Axis out;
  out.size = *size;
  out.label = size->to_user_string();
  std::vector<std::string> vars = size->variables();
  if (vars.size() == 1 && *size == SizeExpr::variable(vars[0])) out.name = vars[0];
  out.bound_at = call.call_span();
  out.origin = std::make_shared<SizeOrigin>(std::move(step));
  return out;
}

// `[N C ..spatial]` or `[C ..spatial]`, as torch takes: the index of C, or nullopt after E0306.
std::optional<size_t> channels_axis(CallContext& call, const TensorType& x, size_t spatial, std::string_view shape) {
  if (x.rank() == spatial + 1 || x.rank() == spatial + 2) return x.rank() - spatial - 1;
  wrong_shape(call, DiagnosticCode::E0306, call.positional_span(0),
              "`" + std::string(builtin_name(call)) + "` takes `" + std::string(shape) + "` or the same without the batch axis, but this is " + x.to_string(), x);
  return std::nullopt;
}

// conv1d / conv2d: x [N C ..spatial], w [O C/groups ..kernel], bias [O]?
ValueType rule_conv(CallContext& call, size_t spatial) {
  auto x = call.tensor(0);
  auto w = call.tensor(1);
  if (!x || !w) return ValueType::unknown();
  std::string name(builtin_name(call));
  auto c = channels_axis(call, *x, spatial, spatial == 1 ? "[N C L]" : "[N C H W]");
  if (!c) return ValueType::unknown();
  if (w->rank() != spatial + 2) {
    wrong_shape(call, DiagnosticCode::E0306, call.positional_span(1),
                "`" + name + "`'s weight must be `" + (spatial == 1 ? "[out in k]" : "[out in kh kw]") + "`, but it is " + w->to_string(), *w);
    return ValueType::unknown();
  }
  auto stride = fixed_int_keyword(call, "stride", 1, 1);
  auto padding = fixed_int_keyword(call, "padding", 0, 0);
  auto dilation = fixed_int_keyword(call, "dilation", 1, 1);
  auto groups = fixed_int_keyword(call, "groups", 1, 1);
  if (!stride || !padding || !dilation || !groups) return ValueType::unknown();
  Axis channels = w->axes[1];
  if (*groups != 1) {
    channels.size = channels.size * SizeExpr::constant(*groups);
    channels.label = std::to_string(*groups) + "*" + channels.label;
    auto out = w->axes[0].size.constant_value();
    if (out && *out % *groups != 0)
      call.report(DiagnosticCode::E0303, call.positional_span(1), "`" + name + "`'s " + describe_axis(w->axes[0]) + " output channels don't split into " + std::to_string(*groups) + " groups")
          .label("its first axis is " + describe_axis(w->axes[0]));
  }
  if (!call.expect_same_size(channels, x->axes[*c], call.positional_span(0), "the input's channels (the weight's second axis" + std::string(*groups != 1 ? " times `groups=`" : "") + ")"))
    return ValueType::unknown();
  if (call.positional_count() > 2)
    if (auto bias = call.tensor(2); bias && (bias->rank() != 1 || !call.expect_same_size(w->axes[0], bias->axes[0], call.positional_span(2), "the bias"))) {
      if (bias->rank() != 1) wrong_shape(call, DiagnosticCode::E0306, call.positional_span(2), "`" + name + "`'s bias must be `[out]`, one axis, but it is " + bias->to_string(), *bias);
    }
  works_across(call, x->axes[*c]);
  TensorType out = *x;
  out.axes[*c] = w->axes[0];
  for (size_t i = 0; i < spatial; ++i) {
    const Axis& kernel = w->axes[2 + i];
    auto k = kernel.size.constant_value();
    if (!k || *k < 1) {
      wrong_shape(call, DiagnosticCode::E0505, call.positional_span(1), "`" + name + "`'s kernel sizes must be fixed, but " + describe_axis(kernel) + " is not", *w);
      return ValueType::unknown();
    }
    works_across(call, x->axes[*c + 1 + i]);
    SizeOrigin step;
    step.kernel = *k;
    step.stride = *stride;
    step.padding = *padding;
    step.dilation = *dilation;
    auto axis = window_axis(call, x->axes[*c + 1 + i], step);
    if (!axis) return ValueType::unknown();
    out.axes[*c + 1 + i] = *axis;
  }
  out.element = ElementType{};
  return tensor_value(out);
}
ValueType rule_conv1d(CallContext& call) { return rule_conv(call, 1); }
ValueType rule_conv2d(CallContext& call) { return rule_conv(call, 2); }

// max_pool2d / avg_pool2d: a window of kernel_size×kernel_size over [N C H W], per channel.
ValueType rule_pool2d(CallContext& call) {
  auto x = call.tensor(0);
  if (!x) return ValueType::unknown();
  auto c = channels_axis(call, *x, 2, "[N C H W]");
  auto kernel = fixed_int_keyword(call, "kernel_size", std::nullopt, 1);
  if (!c || !kernel) return ValueType::unknown();
  auto stride = fixed_int_keyword(call, "stride", kernel, 1);
  auto padding = fixed_int_keyword(call, "padding", 0, 0);
  auto dilation = fixed_int_keyword(call, "dilation", 1, 1);
  if (!stride || !padding || !dilation) return ValueType::unknown();
  if (*padding > *kernel / 2) {  // torch refuses it when it runs
    const Argument* argument = call.keyword("padding");
    call.report(DiagnosticCode::E0320, argument->value ? argument->value->span : argument->span,
                "`" + std::string(builtin_name(call)) + "`'s padding may be at most half its kernel (" + std::to_string(*kernel) + "), but it is " + std::to_string(*padding))
        .label("more than half the kernel");
    return ValueType::unknown();
  }
  TensorType out = *x;
  for (size_t i = 0; i < 2; ++i) {
    works_across(call, x->axes[*c + 1 + i]);
    SizeOrigin step;
    step.kernel = *kernel;
    step.stride = *stride;
    step.padding = *padding;
    step.dilation = *dilation;
    auto axis = window_axis(call, x->axes[*c + 1 + i], step);
    if (!axis) return ValueType::unknown();
    out.axes[*c + 1 + i] = *axis;
  }
  if (builtin_name(call) == "avg_pool2d") out.element = ElementType{};
  return tensor_value(out);
}

// adaptive_avg_pool2d[h w](x): [N C H W] -> [N C h w], whatever H and W are.
ValueType rule_adaptive_pool2d(CallContext& call) {
  auto shape = bracket_shape(call);
  auto x = call.tensor(0);
  if (!shape || !x) return ValueType::unknown();
  auto c = channels_axis(call, *x, 2, "[N C H W]");
  if (!c) return ValueType::unknown();
  if (shape->size() != 2) {
    call.report(DiagnosticCode::E0306, call.callee_span(), "`adaptive_avg_pool2d` takes the two output sizes in brackets, `[h w]`, but these are " + std::to_string(shape->size()))
        .label("not two sizes");
    return ValueType::unknown();
  }
  TensorType out = *x;
  for (size_t i = 0; i < 2; ++i) {
    works_across(call, x->axes[*c + 1 + i]);
    out.axes[*c + 1 + i] = (*shape)[i];
  }
  out.element = ElementType{};
  return tensor_value(out);
}

// interpolate[h w](x, mode=..) to a size, or interpolate(x, scale=s, mode=..) by a whole factor:
// [N C L] (1-d) or [N C H W] (2-d).
ValueType rule_interpolate(CallContext& call) {
  auto x = call.tensor(0);
  if (!x) return ValueType::unknown();
  if (x->rank() != 3 && x->rank() != 4) {
    wrong_shape(call, DiagnosticCode::E0306, call.positional_span(0), "`interpolate` takes `[N C L]` or `[N C H W]`, but this is " + x->to_string(), *x);
    return ValueType::unknown();
  }
  size_t spatial = x->rank() - 2;
  std::string mode = "nearest";
  if (const Argument* m = call.keyword("mode")) {
    std::string given = m->value && m->value->kind == Expr::Kind::string ? m->value->text : "";
    std::string fitting = spatial == 1 ? "linear" : "bilinear";
    if (given != "nearest" && given != fitting) {
      call.report(DiagnosticCode::E0505, m->value ? m->value->span : m->span, "`interpolate`'s `mode=` on " + x->to_string() + " is \"nearest\" or \"" + fitting + "\"")
          .label("not a mode");
      return ValueType::unknown();
    }
    mode = given;
  }
  lowering(call, "mode", mode);
  const std::vector<SizeNode>* sizes = call.shape();
  const Argument* scale_argument = call.keyword("scale");
  if ((sizes != nullptr) == (scale_argument != nullptr)) {
    call.report(DiagnosticCode::E0503, call.call_span(), "`interpolate` takes either an output size in brackets, `interpolate[h w](x)`, or `scale=`, not both or neither")
        .label(sizes ? "both" : "neither");
    return ValueType::unknown();
  }
  TensorType out = *x;
  if (sizes) {
    auto shape = call.resolve_axes(*sizes);
    if (!shape) return ValueType::unknown();
    if (shape->size() != spatial) {
      call.report(DiagnosticCode::E0306, call.callee_span(), "`interpolate` of " + x->to_string() + " takes " + std::to_string(spatial) + " output sizes in brackets, but these are " +
                                                           std::to_string(shape->size()))
          .label("not " + std::to_string(spatial));
      return ValueType::unknown();
    }
    for (size_t i = 0; i < spatial; ++i) out.axes[2 + i] = (*shape)[i];
  } else {
    auto scale = fixed_int_keyword(call, "scale", std::nullopt, 1);
    if (!scale) return ValueType::unknown();
    for (size_t i = 0; i < spatial; ++i) {
      SizeOrigin step;
      step.scale = *scale;
      auto axis = window_axis(call, x->axes[2 + i], step);
      if (!axis) return ValueType::unknown();
      out.axes[2 + i] = *axis;
    }
  }
  for (size_t i = 0; i < spatial; ++i) works_across(call, x->axes[2 + i]);
  if (mode != "nearest") out.element = ElementType{};
  return tensor_value(out);
}

}  // namespace

const std::vector<Builtin>& builtins() {
  using E = BuiltinEffect;
  static const std::vector<Builtin> table = {
      // name, signature, summary, effect, min/max positional, keywords, required keywords, pattern, works across, rule, torch,
      // lowering, defaults, role
      {"rearrange", "rearrange(x, in -> out)", "reorders, groups and splits axes (einops)", E::pure, 1, 1, {}, {}, true, "", rule_rearrange, "einops.rearrange", lower_rearrange},
      {"split", "split(x, a (k b) -> a b), split(x, S1, S2, .., over=A)", "splits a group into k equal tensors, or the axis A into pieces of sizes S1, S2, .. (adding up to A); returned as a tuple", E::pure, 1, 17, {"over"}, {}, true, "the axis `over=`, cut by sizes", rule_split, "torch.split", lower_split},
      {"einsum", "einsum(a, b: in_a, in_b -> out)", "sums products over the axes the output lacks", E::pure, 1, 8, {}, {}, true, "the axes the output lacks", rule_einsum, "torch.einsum", lower_einsum, {}, BuiltinRole::einsum},
      {"scale", "scale(x, s)", "multiplies by a scalar or broadcastable factor", E::pure, 2, 2, {}, {}, false, "", rule_scale, "torch.mul", lower_scale, {}, BuiltinRole::scale},
      {"masked_fill", "masked_fill(x, mask: Bool, value)", "replaces x where mask is true", E::pure, 3, 3, {}, {}, false, "", rule_masked_fill, "torch.Tensor.masked_fill", lower_masked_fill},
      {"causal", "causal[n m] -> [n m] Bool", "true where key position m is at or before query position n", E::pure, 0, 0, {}, {}, false, "", rule_causal, "torch.tril", lower_causal, {}, BuiltinRole::none, true},
      {"softmax", "softmax(x, over=A) -> NonNeg", "softmax along A", E::pure, 1, 1, {"over"}, {"over"}, false, "the axis `over=`", rule_softmax, "torch.softmax", lower_softmax},
      {"log_softmax", "log_softmax(x, over=A)", "log of softmax along A", E::pure, 1, 1, {"over"}, {"over"}, false, "the axis `over=`", rule_log_softmax, "torch.log_softmax", lower_log_softmax},
      {"linear", "linear(x: [.. in], w: [out in], bias: [out]?) -> [.. out]", "x times w transposed, plus bias", E::pure, 2, 3, {}, {}, false, "the last axis of x", rule_linear, "torch.nn.functional.linear", lower_linear, {}, BuiltinRole::linear},
      {"embedding", "embedding(ids: [..] Index[V], table: [V D]) -> [.. D]", "looks up each id's row", E::pure, 2, 2, {}, {}, false, "", rule_embedding, "torch.nn.functional.embedding", lower_embedding, {}, BuiltinRole::embedding},
      {"rms_norm", "rms_norm(x, over=A, weight=[A]?, eps=1e-5)", "root-mean-square normalization along A", E::pure, 1, 1, {"over", "weight", "eps"}, {"over"}, false, "the axis `over=`", rule_norm, "torch.nn.functional.rms_norm", lower_rms_norm, {{"eps", "1e-5"}}},
      {"layer_norm", "layer_norm(x, over=A, weight=[A]?, bias=[A]?, eps=1e-5)", "layer normalization along A", E::pure, 1, 1, {"over", "weight", "bias", "eps"}, {"over"}, false, "the axis `over=`", rule_norm, "torch.nn.functional.layer_norm", lower_layer_norm, {{"eps", "1e-5"}}},
      {"scaled_dot_product_attention", "scaled_dot_product_attention(q: [.. n e], k: [.. m e], v: [.. m f], attn_mask=[n m] Bool?, scale=?, window=Int?, softcap=?, sinks=[H]?, bias=[.. n m]?) -> [.. n f]",
       "attention: softmax(q k^T * scale, masked) v; `window=W` also masks keys W or more positions before the query; `softcap=C` caps the scores at C * tanh(s / C); `bias=b` adds a float bias (ALiBi) to them; `sinks=s`, a logit per query head, joins each softmax's denominator", E::pure, 3, 3, {"attn_mask", "scale", "window", "softcap", "sinks", "bias"}, {}, false, "the keys' positions `m`", rule_sdpa, "torch.nn.functional.scaled_dot_product_attention", lower_scaled_dot_product_attention, {}, BuiltinRole::attention},
      {"sqrt", "sqrt(x) -> NonNeg", "square root, elementwise", E::pure, 1, 1, {}, {}, false, "", rule_nonneg, "torch.sqrt", lower_sqrt, {}, BuiltinRole::sqrt},
      {"exp", "exp(x) -> NonNeg", "exponential, elementwise", E::pure, 1, 1, {}, {}, false, "", rule_nonneg, "torch.exp", lower_exp, {}, BuiltinRole::exp},
      {"log", "log(x)", "natural logarithm, elementwise", E::pure, 1, 1, {}, {}, false, "", rule_real, "torch.log", lower_log, {}, BuiltinRole::log},
      {"sin", "sin(x)", "sine, elementwise", E::pure, 1, 1, {}, {}, false, "", rule_real, "torch.sin", lower_sin},
      {"cos", "cos(x)", "cosine, elementwise", E::pure, 1, 1, {}, {}, false, "", rule_real, "torch.cos", lower_cos},
      {"tanh", "tanh(x)", "hyperbolic tangent, elementwise", E::pure, 1, 1, {}, {}, false, "", rule_real, "torch.tanh", lower_tanh, {}, BuiltinRole::tanh},
      {"sigmoid", "sigmoid(x) -> NonNeg", "logistic sigmoid, elementwise", E::pure, 1, 1, {}, {}, false, "", rule_nonneg, "torch.sigmoid", lower_sigmoid},
      {"relu", "relu(x) -> NonNeg", "max(x, 0), elementwise", E::pure, 1, 1, {}, {}, false, "", rule_nonneg, "torch.relu", lower_relu},
      {"silu", "silu(x)", "x * sigmoid(x), elementwise", E::pure, 1, 1, {}, {}, false, "", rule_real, "torch.nn.functional.silu", lower_silu},
      {"gelu", "gelu(x, approximate=\"none\"|\"tanh\")", "Gaussian error linear unit, elementwise", E::pure, 1, 1, {"approximate"}, {}, false, "", rule_real, "torch.nn.functional.gelu", lower_gelu},
      {"abs", "abs(x) -> NonNeg", "absolute value, elementwise", E::pure, 1, 1, {}, {}, false, "", rule_nonneg, "torch.abs", lower_abs},
      {"sum", "sum(x, over=A)", "sum along A, which disappears", E::pure, 1, 1, {"over"}, {"over"}, false, "the axis `over=`", rule_reduce, "torch.sum", lower_sum},
      {"mean", "mean(x, over=A)", "mean along A, which disappears", E::pure, 1, 1, {"over"}, {"over"}, false, "the axis `over=`", rule_reduce, "torch.mean", lower_mean},
      {"max", "max(x, over=A)", "maximum along A, which disappears", E::pure, 1, 1, {"over"}, {"over"}, false, "the axis `over=`", rule_max, "torch.amax", lower_max},
      {"min", "min(x, over=A)", "minimum along A, which disappears", E::pure, 1, 1, {"over"}, {"over"}, false, "the axis `over=`", rule_max, "torch.amin", lower_min},
      {"concat", "concat(a, b, .., over=A)", "joins tensors along A", E::pure, 2, 16, {"over"}, {"over"}, false, "", rule_concat, "torch.cat", lower_concat},
      {"map", "map(n, i => e) -> [n ..]", "evaluates e for each i in 0..n, stacking along a new first axis; `xs |> map(x => e)` maps over the slices of xs along its first axis", E::pure, 2, 2, {}, {}, false, "", nullptr, "torch.vmap", lower_map},
      {"cross_entropy", "cross_entropy(logits, targets, over=V) -> NonNeg", "mean cross-entropy of logits along V against index targets", E::pure, 2, 2, {"over"}, {"over"}, false, "the axis `over=`", rule_cross_entropy, "torch.nn.functional.cross_entropy", lower_cross_entropy},
      // Selection, bounds, stacking, and tensors made from a shape written in brackets.
      {"where", "where(cond: Bool, a, b)", "a where cond is true, else b; the three broadcast", E::pure, 3, 3, {}, {}, false, "", rule_where, "torch.where", lower_where},
      {"clamp", "clamp(x, min=?, max=?)", "x bounded below by min and above by max (one or both), which broadcast to x", E::pure, 1, 1, {"min", "max"}, {}, false, "", rule_clamp, "torch.clamp", lower_clamp},
      {"minimum", "minimum(a, b)", "the smaller of a and b, elementwise; they broadcast", E::pure, 2, 2, {}, {}, false, "", rule_elementwise_pair, "torch.minimum", lower_minimum},
      {"maximum", "maximum(a, b)", "the larger of a and b, elementwise; they broadcast", E::pure, 2, 2, {}, {}, false, "", rule_elementwise_pair, "torch.maximum", lower_maximum},
      {"stack", "stack(a, b, .., over=K) -> [K ..]", "stacks tensors of one shape along a new first axis K of size their count", E::pure, 1, 16, {"over"}, {"over"}, false, "", rule_stack, "torch.stack", lower_stack},
      {"full", "full[n m ..](value) -> [n m ..]", "a tensor of that shape, every element value", E::pure, 1, 1, {}, {}, false, "", rule_full, "torch.full", lower_full, {}, BuiltinRole::none, true},
      {"expand", "expand[n m ..](x) -> [n m ..]", "x broadcast to that shape", E::pure, 1, 1, {}, {}, false, "", rule_expand, "torch.Tensor.expand", lower_expand, {}, BuiltinRole::none, true},
      // Convolution and pooling: output sizes by exact size arithmetic, floor division where torch floors.
      {"conv1d", "conv1d(x: [N C L], w: [O C k], bias: [O]?, stride=1, padding=0, dilation=1, groups=1) -> [N O L2]",
       "1-d convolution; L2 = (L + 2*padding - dilation*(k-1) - 1) / stride + 1, rounded down", E::pure, 2, 3, {"stride", "padding", "dilation", "groups"}, {}, false,
       "the channels and the axis L", rule_conv1d, "torch.nn.functional.conv1d", lower_conv1d},
      {"conv2d", "conv2d(x: [N C H W], w: [O C kh kw], bias: [O]?, stride=1, padding=0, dilation=1, groups=1) -> [N O H2 W2]",
       "2-d convolution; each output size is (H + 2*padding - dilation*(k-1) - 1) / stride + 1, rounded down", E::pure, 2, 3, {"stride", "padding", "dilation", "groups"}, {}, false,
       "the channels and the axes H, W", rule_conv2d, "torch.nn.functional.conv2d", lower_conv2d},
      {"max_pool2d", "max_pool2d(x: [N C H W], kernel_size=k, stride=k, padding=0, dilation=1) -> [N C H2 W2]",
       "maximum over each k×k window; sizes as `conv2d`'s", E::pure, 1, 1, {"kernel_size", "stride", "padding", "dilation"}, {"kernel_size"}, false,
       "the axes H, W", rule_pool2d, "torch.nn.functional.max_pool2d", lower_max_pool2d},
      {"avg_pool2d", "avg_pool2d(x: [N C H W], kernel_size=k, stride=k, padding=0) -> [N C H2 W2]",
       "mean over each k×k window (padding counted as zeros); sizes as `conv2d`'s", E::pure, 1, 1, {"kernel_size", "stride", "padding"}, {"kernel_size"}, false,
       "the axes H, W", rule_pool2d, "torch.nn.functional.avg_pool2d", lower_avg_pool2d},
      {"adaptive_avg_pool2d", "adaptive_avg_pool2d[h w](x: [N C H W]) -> [N C h w]", "mean over h×w windows that cover H×W, whatever their size", E::pure, 1, 1, {}, {}, false,
       "the axes H, W", rule_adaptive_pool2d, "torch.nn.functional.adaptive_avg_pool2d", lower_adaptive_avg_pool2d, {}, BuiltinRole::none, true},
      {"interpolate", "interpolate[h w](x: [N C H W], mode=\"nearest\"|\"bilinear\"), interpolate(x, scale=s, mode=..) -> [N C s*H s*W]",
       "resizes the last axes to a size, or by a whole factor; also `[N C L]` with \"nearest\"|\"linear\"", E::pure, 1, 1, {"scale", "mode"}, {}, false,
       "the resized axes", rule_interpolate, "torch.nn.functional.interpolate", lower_interpolate, {}, BuiltinRole::none, true, true},
      // Initializers: only as a model parameter's initializer.
      {"normal", "normal(std=0.02, mean=0)", "initializes a parameter from a normal distribution", E::initializer, 0, 0, {"std", "mean"}, {}, false, "", rule_initializer, "torch.nn.init.normal_", lower_normal, {{"std", "0.02"}, {"mean", "0"}}},
      {"ones", "ones, ones[n m ..] -> [n m ..] NonNeg", "initializes a parameter to ones; `ones[n D]` in an expression is a tensor of ones", E::initializer, 0, 0, {}, {}, false, "", rule_initializer, "torch.nn.init.ones_", lower_ones, {}, BuiltinRole::none, true},
      {"zeros", "zeros, zeros[n m ..] -> [n m ..] NonNeg", "initializes a parameter to zeros; `zeros[n D]` in an expression is a tensor of zeros", E::initializer, 0, 0, {}, {}, false, "", rule_initializer, "torch.nn.init.zeros_", lower_zeros, {}, BuiltinRole::none, true},
      // Training: names reserved for modes, datasets, logs, gradients and optimizers.
      {"dropout", "dropout(x, p=0.1)", "zeroes each element with probability p while training (train_mode); the identity otherwise", E::random, 1, 1, {"p"}, {}, false, "", rule_dropout, "torch.nn.functional.dropout", lower_dropout, {{"p", "0.1"}}},
      // training: the part of the language an exported function can't use (E1703)
      {"init", "init(M, seed=0) -> M", "a model M made by its parameters' initializers", E::training, 1, 1, {"seed"}, {}, false, "", rule_init, "", lower_training},
      {"train_mode", "train_mode(m)", "puts the program in training mode: dropout on", E::training, 1, 1, {}, {}, false, "", rule_modes, "", lower_training},
      {"eval_mode", "eval_mode(m)", "puts the program in evaluation mode: dropout off", E::training, 1, 1, {}, {}, false, "", rule_modes, "", lower_training},
      {"dataset", "dataset(path, batch=B, length=T, vocab=V, seed=0, tokenizer=\"tokenizer.json\"?) -> Dataset of [B T] Index[V]",
       "batches of B windows of T tokens of a text file, drawn at random: its bytes, or its ids under `tokenizer=`; paths are relative to the .ss file", E::training, 1, 1,
       {"batch", "length", "vocab", "seed", "tokenizer"}, {"batch", "length", "vocab"}, false, "", rule_dataset, "", lower_training},
      {"next_batch", "next_batch(data) -> ([B T] Index[V], [B T] Index[V])", "the next batch: token ids, and the token after each (targets)",
       E::training, 1, 1, {}, {}, false, "", rule_next_batch, "", lower_training},
      {"grad", "grad(loss, m) -> (Real, M)", "the loss, and its gradient with respect to the model m's parameters (a value of m's type)",
       E::training, 2, 2, {}, {}, false, "", rule_grad, "", lower_training},
      {"adamw", "adamw(m, lr=1e-3, weight_decay=0.01, beta1=0.9, beta2=0.999) -> Optimizer of M", "the AdamW optimizer of m's parameters",
       E::training, 1, 1, {"lr", "weight_decay", "beta1", "beta2"}, {}, false, "", rule_optimizer, "", lower_training},
      {"sgd", "sgd(m, lr=0.01, momentum=0) -> Optimizer of M", "stochastic gradient descent on m's parameters", E::training, 1, 1,
       {"lr", "momentum"}, {}, false, "", rule_optimizer, "", lower_training},
      {"update", "update(opt, g)", "one optimizer step: moves the optimizer's model along the gradient g", E::training, 2, 2, {}, {}, false, "",
       rule_update, "", lower_training},
      {"log_scalar", "log_scalar(name, value)", "logs a scalar at the current step (shown by `shapescript run`, kept in its log)", E::training, 2, 2,
       {}, {}, false, "", rule_log_scalar, "", lower_training},
      {"save_checkpoint", "save_checkpoint(m, path)", "saves m's parameters where `--weights` reads them; the path is relative to the .ss file",
       E::training, 2, 2, {}, {}, false, "", rule_save_checkpoint, "", lower_training},
      // Sparse experts: routing by the top k of the router's scores.
      {"topk", "topk(x, k=K, over=E) -> ([.. K], [.. K] Index[E])", "the K largest values along E, largest first, and their indices", E::pure, 1, 1,
       {"k", "over"}, {"k", "over"}, false, "the axis `over=`", rule_topk, "torch.topk", lower_topk},
      {"experts", "experts(x: [.. D], chosen: [.. K] Index[E], weights: [.. K], e => rows => body) -> [.. D2]",
       "each token through its K chosen experts, weighted and summed; expert e computes body on the rows routed to it ([t D] -> [t D2])",
       E::pure, 4, 4, {}, {}, false, "", nullptr, "torch.Tensor.index_add", lower_experts},
  };
  return table;
}

std::string_view Builtin::default_of(std::string_view keyword) const {
  for (auto& [name, value] : defaults)
    if (name == keyword) return value;
  return {};
}

bool is_elementwise(const Builtin& builtin) { return builtin.rule == rule_real || builtin.rule == rule_nonneg; }

bool over_names_a_new_axis(const Builtin& builtin) { return builtin.rule == rule_stack; }
bool over_removes_the_axis(const Builtin& builtin) { return builtin.rule == rule_reduce || builtin.rule == rule_max; }

const Builtin* find_builtin(std::string_view name) {
  // By name, made once: the checker asks of every call and every global name, and a scan of the
  // table was a few hundred instructions each time.
  static const std::unordered_map<std::string_view, const Builtin*> by_name = [] {
    std::unordered_map<std::string_view, const Builtin*> out;
    for (const Builtin& b : builtins()) out.emplace(b.name, &b);  // the first of a name, as a scan finds
    return out;
  }();
  auto found = by_name.find(name);
  return found == by_name.end() ? nullptr : found->second;
}

bool is_training_builtin(std::string_view name) {
  const Builtin* b = find_builtin(name);
  return b && b->effect == BuiltinEffect::training;
}

}  // namespace ss
