#include "emit/lowering.h"

namespace ss {

std::string python_atom(const std::string& text);  // codegen.cpp: `text`, parenthesized unless atomic

namespace {

std::string arg(const LowerContext& c, size_t i) { return i < c.args.size() ? c.args[i] : "None"; }

std::string fact(const LowerContext& c, const std::string& key, const std::string& otherwise = "") {
  if (!c.facts) return otherwise;
  auto it = c.facts->lowering.find(key);
  return it == c.facts->lowering.end() ? otherwise : it->second;
}

// A keyword as the call gives it, else the built-in's default from its table entry.
std::string keyword(const LowerContext& c, std::string_view builtin, const std::string& name) {
  auto it = c.keywords.find(name);
  return it != c.keywords.end() ? it->second : std::string(find_builtin(builtin)->default_of(name));
}

// Elementwise maths: `math.f` on plain numbers (dims, literals), `torch.f` on tensors.
std::string elementwise(const LowerContext& c, const char* math_name, const char* torch_name) {
  if (c.scalar && math_name) return std::string("math.") + math_name + "(" + arg(c, 0) + ")";
  return std::string(torch_name) + "(" + arg(c, 0) + ")";
}

// Normalizations that torch applies to the last axis: move the axis there and back.
std::string moved(const LowerContext& c, const std::string& x) {
  std::string dim = fact(c, "dim", "-1");
  return dim == "-1" ? x : python_atom(x) + ".movedim(" + dim + ", -1)";
}

std::string moved_back(const LowerContext& c, const std::string& y) {
  std::string dim = fact(c, "dim", "-1");
  return dim == "-1" ? y : python_atom(y) + ".movedim(-1, " + dim + ")";
}

// normalized_shape: the `over=` axis's size as the code generator computed it (`(D,)`), else
// read from the tensor.
std::string normalized_shape(const LowerContext& c, const std::string& x) {
  auto size = c.keywords.find("#over_size");
  return size != c.keywords.end() ? "(" + size->second + ",)" : python_atom(x) + ".shape[-1:]";
}

// `, name=value` for a keyword the call gave, nothing for one it left out.
std::string optional_keyword(const LowerContext& c, const std::string& name) {
  auto it = c.keywords.find(name);
  return it == c.keywords.end() ? "" : ", " + name + "=" + it->second;
}

}  // namespace

std::string lower_rearrange(const LowerContext& c) {
  return c.rearrange + "(" + arg(c, 0) + ", \"" + c.pattern + "\"" + c.pattern_sizes + ")";
}

// The pieces axis is moved to the front by the pattern (see the code generator), then unbound.
std::string lower_split(const LowerContext& c) {
  // Pieces of the sizes given along `over=` (checked to add up to it): torch.split with the sizes.
  if (c.pattern.empty()) {
    std::string sizes;
    for (size_t i = 1; i < c.args.size(); ++i) sizes += (i > 1 ? ", " : "") + c.args[i];
    return "torch.split(" + arg(c, 0) + ", [" + sizes + "], dim=" + fact(c, "dim", "-1") + ")";
  }
  return c.rearrange + "(" + arg(c, 0) + ", \"" + c.pattern + "\"" + c.pattern_sizes + ").unbind(0)";
}

std::string lower_einsum(const LowerContext& c) {
  std::string operands;
  for (const std::string& a : c.args) operands += a + ", ";
  return "einops.einsum(" + operands + "\"" + c.pattern + "\")";
}

// Parenthesized, so that it stays one operand wherever it is used.
std::string lower_scale(const LowerContext& c) { return "(" + python_atom(arg(c, 0)) + " * " + python_atom(arg(c, 1)) + ")"; }

std::string lower_masked_fill(const LowerContext& c) {
  return python_atom(arg(c, 0)) + ".masked_fill(" + arg(c, 1) + ", " + arg(c, 2) + ")";
}

std::string lower_causal(const LowerContext& c) {
  return "_causal(" + arg(c, 0) + ", " + arg(c, 1) + (c.device.empty() ? "" : ", " + c.device) + ")";
}

std::string lower_softmax(const LowerContext& c) { return "torch.softmax(" + arg(c, 0) + ", dim=" + fact(c, "dim", "-1") + ")"; }
std::string lower_log_softmax(const LowerContext& c) {
  return "torch.log_softmax(" + arg(c, 0) + ", dim=" + fact(c, "dim", "-1") + ")";
}

std::string lower_linear(const LowerContext& c) {
  return "F.linear(" + arg(c, 0) + ", " + arg(c, 1) + (c.args.size() > 2 ? ", " + arg(c, 2) : "") + ")";
}

std::string lower_embedding(const LowerContext& c) { return "F.embedding(" + arg(c, 0) + ", " + arg(c, 1) + ")"; }

std::string lower_rms_norm(const LowerContext& c) {
  std::string x = moved(c, arg(c, 0));
  std::string call = "F.rms_norm(" + x + ", " + normalized_shape(c, x) + optional_keyword(c, "weight") +
                     ", eps=" + keyword(c, "rms_norm", "eps") + ")";
  return moved_back(c, call);
}

std::string lower_layer_norm(const LowerContext& c) {
  std::string x = moved(c, arg(c, 0));
  std::string call = "F.layer_norm(" + x + ", " + normalized_shape(c, x) + optional_keyword(c, "weight") +
                     optional_keyword(c, "bias") + ", eps=" + keyword(c, "layer_norm", "eps") + ")";
  return moved_back(c, call);
}

std::string lower_scaled_dot_product_attention(const LowerContext& c) {
  // softcap=, sinks= and bias= aren't torch's: _attention writes them out (python_writer.h), and
  // calls torch's fused attention itself when only a bias is added.
  if (c.keywords.count("softcap") || c.keywords.count("sinks") || c.keywords.count("bias")) {
    std::string window = fact(c, "window");
    std::string mask = !window.empty() ? "_within_window(" + c.keywords.at("attn_mask") + ", " + window + ")"
                       : c.keywords.count("attn_mask") ? c.keywords.at("attn_mask")
                                                       : "None";
    std::string call = "_attention(" + arg(c, 0) + ", " + arg(c, 1) + ", " + arg(c, 2) + ", " + mask;
    for (const char* option : {"scale", "softcap", "sinks", "bias"})
      if (c.keywords.count(option)) call += std::string(", ") + option + "=" + c.keywords.at(option);
    if (fact(c, "gqa") == "1") call += ", gqa=True";
    return call + ")";
  }
  std::string call = "F.scaled_dot_product_attention(" + arg(c, 0) + ", " + arg(c, 1) + ", " + arg(c, 2);
  // causal[n n] is torch's own causal mask: is_causal=True needs no mask tensor, unless a window narrows it.
  std::string window = fact(c, "window");
  if (!window.empty()) call += ", attn_mask=_within_window(" + c.keywords.at("attn_mask") + ", " + window + ")";
  else if (fact(c, "causal") == "1") call += ", is_causal=True";
  else if (c.keywords.count("attn_mask")) call += ", attn_mask=" + c.keywords.at("attn_mask");
  if (c.keywords.count("scale")) call += ", scale=" + c.keywords.at("scale");
  // Fewer key/value heads than query heads: each group of query heads reads one (checked by the rule).
  if (fact(c, "gqa") == "1") call += ", enable_gqa=True";
  return call + ")";
}

std::string lower_sqrt(const LowerContext& c) { return elementwise(c, "sqrt", "torch.sqrt"); }
std::string lower_exp(const LowerContext& c) { return elementwise(c, "exp", "torch.exp"); }
std::string lower_log(const LowerContext& c) { return elementwise(c, "log", "torch.log"); }
std::string lower_sin(const LowerContext& c) { return elementwise(c, "sin", "torch.sin"); }
std::string lower_cos(const LowerContext& c) { return elementwise(c, "cos", "torch.cos"); }
std::string lower_tanh(const LowerContext& c) { return elementwise(c, "tanh", "torch.tanh"); }
std::string lower_sigmoid(const LowerContext& c) { return elementwise(c, nullptr, "torch.sigmoid"); }
std::string lower_relu(const LowerContext& c) { return elementwise(c, nullptr, "torch.relu"); }
std::string lower_silu(const LowerContext& c) { return elementwise(c, nullptr, "F.silu"); }
std::string lower_abs(const LowerContext& c) { return c.scalar ? "abs(" + arg(c, 0) + ")" : "torch.abs(" + arg(c, 0) + ")"; }
std::string lower_gelu(const LowerContext& c) {
  return "F.gelu(" + arg(c, 0) + (c.keywords.count("approximate") ? ", approximate=" + c.keywords.at("approximate") : "") + ")";
}

std::string lower_sum(const LowerContext& c) { return "torch.sum(" + arg(c, 0) + ", dim=" + fact(c, "dim", "-1") + ")"; }
std::string lower_mean(const LowerContext& c) { return "torch.mean(" + arg(c, 0) + ", dim=" + fact(c, "dim", "-1") + ")"; }
std::string lower_max(const LowerContext& c) { return "torch.amax(" + arg(c, 0) + ", dim=" + fact(c, "dim", "-1") + ")"; }
std::string lower_min(const LowerContext& c) { return "torch.amin(" + arg(c, 0) + ", dim=" + fact(c, "dim", "-1") + ")"; }

std::string lower_concat(const LowerContext& c) {
  std::string list;
  for (const std::string& a : c.args) list += (list.empty() ? "" : ", ") + a;
  return "torch.cat([" + list + "], dim=" + fact(c, "dim", "0") + ")";
}

// map(n, i => e): the code generator writes the lambda; e is evaluated for each i by torch.vmap.
std::string lower_map(const LowerContext& c) {
  if (fact(c, "slices", "") == "1") return "torch.vmap(" + arg(c, 1) + ")(" + arg(c, 0) + ")";  // `xs |> map(x => e)`
  std::string positions = "torch.arange(" + arg(c, 0) + (c.device.empty() ? "" : ", device=" + c.device) + ")";
  if (fact(c, "elementwise", "") == "1") return "(" + arg(c, 1) + ")(" + positions + ")";
  return "torch.vmap(" + arg(c, 1) + ")(" + positions + ")";
}

std::string lower_cross_entropy(const LowerContext& c) {
  std::string dim = fact(c, "dim", "-1");
  // torch reads the classes from axis 1, or from the only axis of one position's logits.
  if (fact(c, "rank") == "1" || dim == "1") return "F.cross_entropy(" + arg(c, 0) + ", " + arg(c, 1) + ")";
  return "F.cross_entropy(" + python_atom(arg(c, 0)) + ".movedim(" + dim + ", 1), " + arg(c, 1) + ")";
}

namespace {
bool is_number_argument(const LowerContext& c, size_t i) { return i < c.numbers.size() && c.numbers[i]; }

// A shape as a Python tuple: `(n, D)`, `(n,)`.
std::string shape_tuple(const LowerContext& c) {
  std::string out;
  for (const std::string& size : c.shape) out += (out.empty() ? "" : ", ") + size;
  return "(" + out + (c.shape.size() == 1 ? ",)" : ")");
}

std::string device_keyword(const LowerContext& c) { return c.device.empty() ? "" : ", device=" + c.device; }

// minimum/maximum: torch's take two tensors; a plain number is a bound of `clamp` instead.
std::string extremum(const LowerContext& c, const char* python, const char* torch_name, const char* bound) {
  bool a = is_number_argument(c, 0), b = is_number_argument(c, 1);
  if (a && b) return std::string(python) + "(" + arg(c, 0) + ", " + arg(c, 1) + ")";
  if (a || b) return "torch.clamp(" + arg(c, a ? 1 : 0) + ", " + bound + "=" + arg(c, a ? 0 : 1) + ")";
  return std::string(torch_name) + "(" + arg(c, 0) + ", " + arg(c, 1) + ")";
}
}  // namespace

std::string lower_where(const LowerContext& c) {
  if (is_number_argument(c, 0)) return "(" + python_atom(arg(c, 1)) + " if " + python_atom(arg(c, 0)) + " else " + python_atom(arg(c, 2)) + ")";
  std::string chosen = "torch.where(" + arg(c, 0) + ", " + arg(c, 1) + ", " + arg(c, 2) + ")";
  // Two numbers make torch's default float type: the model's values' type instead (bfloat16 stays).
  if (is_number_argument(c, 1) && is_number_argument(c, 2) && !c.dtype.empty()) chosen += ".to(" + c.dtype + ")";
  return chosen;
}

// torch.clamp takes both bounds as numbers or both as tensors: one bound per call mixes either.
std::string lower_clamp(const LowerContext& c) {
  std::string out = arg(c, 0);
  for (const char* bound : {"min", "max"})
    if (auto it = c.keywords.find(bound); it != c.keywords.end()) out = "torch.clamp(" + out + ", " + bound + "=" + it->second + ")";
  return out;
}

std::string lower_minimum(const LowerContext& c) { return extremum(c, "min", "torch.minimum", "max"); }
std::string lower_maximum(const LowerContext& c) { return extremum(c, "max", "torch.maximum", "min"); }

std::string lower_stack(const LowerContext& c) {
  std::string list;
  for (const std::string& a : c.args) list += (list.empty() ? "" : ", ") + a;
  return "torch.stack([" + list + "], dim=0)";
}

std::string lower_full(const LowerContext& c) {
  if (is_number_argument(c, 0)) return "torch.full(" + shape_tuple(c) + ", " + arg(c, 0) + device_keyword(c) + ")";
  return python_atom(arg(c, 0)) + ".expand(" + shape_tuple(c) + ")";
}

std::string lower_expand(const LowerContext& c) {
  if (is_number_argument(c, 0)) return lower_full(c);
  return python_atom(arg(c, 0)) + ".expand(" + shape_tuple(c) + ")";
}

std::string lower_normal(const LowerContext& c) {
  return "nn.init.normal_({param}, mean=" + keyword(c, "normal", "mean") + ", std=" + keyword(c, "normal", "std") + ")";
}
std::string lower_dropout(const LowerContext& c) {
  return "F.dropout(" + arg(c, 0) + ", p=" + keyword(c, "dropout", "p") + ", training=_ss_mode[\"training\"])";
}

// Training built-ins are calls into the runtime `shapescript run` provides as `_ss_train`.
std::string lower_training(const LowerContext& c) {
  std::string out = "_ss_train." + std::string(c.facts && c.facts->builtin ? c.facts->builtin->name : "?") + "(";
  for (size_t i = 0; i < c.args.size(); ++i) out += (i ? ", " : "") + c.args[i];
  for (auto& [name, value] : c.keywords) out += (out.back() == '(' ? "" : ", ") + name + "=" + value;
  return out + ")";
}

// topk(x, k=K, over=E): torch's (values, indices), K in place of E.
std::string lower_topk(const LowerContext& c) {
  return "torch.topk(" + arg(c, 0) + ", " + c.keywords.at("k") + ", dim=" + fact(c, "dim", "-1") + ")";
}

// experts(x, chosen, weights, e => rows => body): `_experts` (python_writer.h) runs each expert on
// the rows routed to it only.
std::string lower_experts(const LowerContext& c) {
  return "_experts(" + arg(c, 0) + ", " + arg(c, 1) + ", " + arg(c, 2) + ", " + arg(c, 3) + ", " + fact(c, "experts", "0") + ")";
}

// A parameter's initializer, or with a shape (`zeros[n D]`) a tensor made in an expression.
std::string lower_ones(const LowerContext& c) {
  return c.shape.empty() ? "nn.init.ones_({param})" : "torch.ones(" + shape_tuple(c) + device_keyword(c) + ")";
}
std::string lower_zeros(const LowerContext& c) {
  return c.shape.empty() ? "nn.init.zeros_({param})" : "torch.zeros(" + shape_tuple(c) + device_keyword(c) + ")";
}

// Convolution and pooling: the keywords the call gives, in torch's own names; the rest are torch's defaults,
// which are the table's.
std::string window_keywords(const LowerContext& c, std::initializer_list<const char*> names) {
  std::string out;
  for (const char* name : names) out += optional_keyword(c, name);
  return out;
}

std::string lower_conv(const char* function, const LowerContext& c) {
  return std::string(function) + "(" + arg(c, 0) + ", " + arg(c, 1) + (c.args.size() > 2 ? ", " + arg(c, 2) : "") +
         window_keywords(c, {"stride", "padding", "dilation", "groups"}) + ")";
}
std::string lower_conv1d(const LowerContext& c) { return lower_conv("F.conv1d", c); }
std::string lower_conv2d(const LowerContext& c) { return lower_conv("F.conv2d", c); }
std::string lower_max_pool2d(const LowerContext& c) {
  return "F.max_pool2d(" + arg(c, 0) + window_keywords(c, {"kernel_size", "stride", "padding", "dilation"}) + ")";
}
std::string lower_avg_pool2d(const LowerContext& c) { return "F.avg_pool2d(" + arg(c, 0) + window_keywords(c, {"kernel_size", "stride", "padding"}) + ")"; }

// The output sizes are the result shape's last two, as the checker resolved them.
std::string lower_adaptive_avg_pool2d(const LowerContext& c) {
  size_t n = c.shape.size();
  return "F.adaptive_avg_pool2d(" + arg(c, 0) + ", (" + (n >= 2 ? c.shape[n - 2] + ", " + c.shape[n - 1] : "") + "))";
}

// The mode is one the rule accepted, written here from that list, never from the source's text.
std::string lower_interpolate(const LowerContext& c) {
  std::string mode = fact(c, "mode", "nearest");
  std::string call = "F.interpolate(" + arg(c, 0);
  if (c.keywords.count("scale")) {
    call += ", scale_factor=" + c.keywords.at("scale");
  } else {
    std::string sizes;
    for (size_t i = 2; i < c.shape.size(); ++i) sizes += c.shape[i] + ", ";
    call += ", size=(" + sizes + ")";
  }
  call += mode == "bilinear" ? ", mode=\"bilinear\", align_corners=False" : mode == "linear" ? ", mode=\"linear\", align_corners=False" : ", mode=\"nearest\"";
  return call + ")";
}

}  // namespace ss
