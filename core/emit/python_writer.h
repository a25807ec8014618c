// What the two Python code generators share (codegen.cpp: the .pt2 module; codegen_hf.cpp: the
// Hugging Face folder): text helpers, and PythonWriter, which lowers a checked function's
// statements, expressions, sizes and einops patterns to Python. Each generator derives from it
// and overrides the hooks for what it writes differently (a model field, a call of a user
// function, an attention, a weight, a `for` or an `if`).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "check/analysis.h"
#include "check/builtins.h"
#include "emit/codegen.h"
#include "syntax/walk.h"

namespace ss {

std::string python_atom(const std::string& text);  // codegen.cpp
std::string python_bare(const std::string& text);  // codegen.cpp

namespace pywrite {

// Walks Python text outside string literals (and, when `skip_comments`, outside `#` comments),
// calling `visit(i, depth)` for each character with the bracket depth after it; stops when visit
// returns true, and then returns true. The one bracket-and-quote scanner the generators use.
bool scan_code(const std::string& text, bool skip_comments, const std::function<bool(size_t, int)>& visit);
// `text` as a double-quoted string literal that is valid Python and valid JSON alike: `"` and `\`
// escaped, control characters as \n, \r, \t or \u00XX, the C1 controls (U+0080-U+009F) and U+2028
// and U+2029 as \u escapes, other UTF-8 kept, a byte that isn't UTF-8 as U+FFFD. The one way text
// from a source file (doc comments, strings, file names, source lines) becomes a Python string.
std::string quote(const std::string& text);
// `text` on one line of a `#` comment: what quote() would escape is escaped (so no line terminator
// Python, an editor or str.splitlines() knows can end the comment), `"` and `\` kept as they are.
std::string comment_text(const std::string& text);
// A docstring at `depth` made of quote()d literals: one for a one-line text; for longer ones a
// parenthesized literal per line, which Python joins into the same one string.
std::string docstring(const std::string& text, int depth);
// The invariant of every generated Python file (the module, the Hugging Face folder's files): no
// line terminator but `\n` (no \r, \f, \v, \x1c-\x1e, U+0085, U+2028, U+2029), no byte that isn't
// UTF-8, no other control character but in quote()'s escapes, and every string literal a one-line
// `"..."` in quote()'s alphabet (an `f` prefix only on the generator's own fixed helpers). The
// fuzzers and tests assert it of everything the generators write.
bool is_generator_safe(const std::string& python);
// True when `text` uses `prefix` (such as "F.", or a whole name such as "n") as a name of its
// own, outside strings and comments.
bool uses_name(const std::string& text, const std::string& prefix);
// The file's name without its folders, as the generated comments cite it.
std::string file_name(const std::string& path);
std::string indent(int depth);
std::string join(const std::vector<std::string>& parts);

}  // namespace pywrite

// `causal[n m]`, as both code generators define it where their code calls it.
inline constexpr const char* causal_definition =
    "def _causal(n, m, device=None):\n"
    "    # causal[n m]: True where key position j is at or before query position i (j <= i).\n"
    "    return torch.ones(n, m, dtype=torch.bool, device=device).tril()\n";

// `window=w` on a causal mask [n m] (key j visible where j <= i): also masks keys w or more before i.
// Both code generators define it where their code calls it.
inline constexpr const char* within_window_definition =
    "def _within_window(mask, w):\n"
    "    # window=w: besides what the mask hides, keys w or more positions before the query (j <= i - w).\n"
    "    return mask & torch.ones_like(mask).triu(1 - w)\n";

// Attention with what torch's fused attention lacks: scores capped softly (`softcap=C`, before the
// bias and mask, as Gemma 2 caps them), a float bias added (ALiBi), and sinks, a logit per query
// head that joins the softmax's denominator and is then dropped (gpt-oss). With only a bias, torch's
// fused attention adds it as a float mask. Both code generators define it where their code calls it.
inline constexpr const char* attention_definition =
    "def _attention(q, k, v, mask, scale=None, softcap=None, sinks=None, bias=None, gqa=False):\n"
    "    # q [.. H n e], k [.. Hkv m e], v [.. Hkv m f] -> [.. H n f]; mask [n m] Bool (True: seen) or None.\n"
    "    if softcap is None and sinks is None:\n"
    "        bias = bias.to(q.dtype)\n"
    "        if mask is not None:\n"
    "            bias = torch.where(mask, bias, float(\"-inf\"))\n"
    "        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=scale, enable_gqa=gqa)\n"
    "    if gqa:  # each group of query heads reads one key/value head, as torch's enable_gqa does\n"
    "        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3)\n"
    "        v = v.repeat_interleave(q.shape[-3] // v.shape[-3], dim=-3)\n"
    "    scores = torch.matmul(q, k.transpose(-2, -1)) * (q.shape[-1] ** -0.5 if scale is None else scale)\n"
    "    if softcap is not None:\n"
    "        scores = torch.tanh(scores / softcap) * softcap\n"
    "    if bias is not None:\n"
    "        scores = scores + bias\n"
    "    if mask is not None:\n"
    "        scores = scores.masked_fill(mask.logical_not(), float(\"-inf\"))\n"
    "    if sinks is not None:\n"
    "        sink = sinks.to(scores.dtype).reshape(sinks.shape + (1, 1)).expand(scores.shape[:-1] + (1,))\n"
    "        scores = torch.cat([scores, sink], dim=-1)\n"
    "    weights = torch.softmax(scores, dim=-1)\n"
    "    if sinks is not None:\n"
    "        weights = weights[..., :-1]\n"
    "    return torch.matmul(weights.to(v.dtype), v)\n";

// `experts(x, chosen, weights, e => rows => body)`, as transformers' MixtralExperts computes it:
// each expert runs on the rows routed to it only, weighted, and added back at their tokens.
inline constexpr const char* experts_definition =
    "def _experts(x, chosen, weights, expert, count):\n"
    "    # Each token goes to the k experts `chosen` names; expert e sees only the rows routed to it.\n"
    "    flat = x.reshape(-1, x.shape[-1])\n"
    "    chosen = chosen.reshape(-1, chosen.shape[-1])\n"
    "    weights = weights.reshape(-1, weights.shape[-1])\n"
    "    out = None\n"
    "    for e in range(count):\n"
    "        token, slot = torch.where(chosen == e)\n"
    "        rows = expert(e)(flat[token]) * weights[token, slot, None]\n"
    "        if out is None:\n"
    "            out = flat.new_zeros(flat.shape[0], rows.shape[-1], dtype=rows.dtype)\n"
    "        out = out.index_add(0, token, rows)\n"
    "    return out.reshape(*x.shape[:-1], out.shape[-1])\n";

class PythonWriter {
 public:
  explicit PythonWriter(const Analysis& analysis) : a_(analysis) {}
  virtual ~PythonWriter() = default;

 protected:
  const Analysis& a_;
  std::set<std::string> locals_;
  std::set<std::string> needed_axes_;  // generic axes used as values: read from the inputs' shapes
  std::map<const Expr*, std::string> substitutes_;  // an expression already computed into a variable
  std::set<const Statement*> skipped_;  // statements computed elsewhere (once, before a loop: emit/hoist.h)
  // Where and in what precision a function's values live, read from its inputs: a model moved to a
  // GPU runs there, one cast to bfloat16 computes in bfloat16.
  struct Anchor {
    std::string device;  // `x.device`: where a tensor made from sizes alone goes (`causal[n n]`, `map`'s positions)
    // `x.dtype`: the floating type of the model's values. A float tensor computed from sizes and
    // positions (rope's angles) is float32, for precision, until it meets them; there it takes this.
    std::string dtype;
    std::set<std::string> floating;  // variables computed from floating inputs or the model's parameters
  };
  Anchor anchor_;
  std::vector<std::string> prelude_;  // statements an expression needs first (the HF attention)
  bool uses_einops_ = false, uses_causal_ = false;
  int lambda_depth_ = 0;  // inside a lambda (`map`'s, run by torch.vmap)
  // The mode `dropout` reads, defined at the top of a module whose code uses it.
  static constexpr const char* mode_definition = "_ss_mode = {\"training\": False}  # dropout is on between train_mode() and eval_mode()\n";

  // ---- Hooks: what the generators write differently.

  // An expression written in a way of the generator's own (a weight), before the common lowering.
  virtual std::optional<std::string> special_expression(const Expr&) { return std::nullopt; }
  // `a.b`.
  virtual std::string attribute(const Expr& e);
  // `x as [..]`.
  virtual std::string as_expression(const Expr& e) = 0;
  // A part that didn't parse.
  virtual std::string error_expression(const Expr&) { return "None"; }
  // A call written in a way of the generator's own (a module, a layer, an attention), before the
  // common lowering.
  virtual std::optional<std::string> special_call(const Expr&) { return std::nullopt; }
  // Called before a builtin's lowering runs.
  virtual void on_builtin_call(const Expr&, const CallFacts&) {}
  // The size of the `over=` axis a lowering may pass to torch; nullopt: none.
  virtual std::optional<std::string> over_size(const Axis& over);
  // A call of a user function or an extern.
  virtual std::string function_call(const Expr& e, const Item& item, const std::vector<std::string>& args) = 0;
  // A call through `import python`.
  virtual std::string python_call(const Expr& e, const std::vector<std::string>& args, const std::map<std::string, std::string>& keywords) = 0;
  // Whether a `return` may pick `name` for a chain's variable.
  virtual bool name_taken(const std::string& name) { return locals_.count(name) || a_.semantics.dims.count(name); }
  // Called before a `return` is written.
  virtual void on_return(const Statement&) {}
  virtual std::string for_statement(const Statement& s, int depth) = 0;
  virtual std::string if_statement(const Statement& s, int depth) = 0;
  // Whether a `|>` step reads `name` (the pt2 generator also looks into subscripts' sizes).
  virtual bool step_reads(const Expr& e, const std::string& name) const { return reads_variable(e, name); }
  virtual size_t pipe_steps_from() const { return 2; }
  // What the code calls for einops' rearrange.
  virtual std::string rearrange_callable() const { return "einops.rearrange"; }

  // ---- Facts

  const ValueType* type_of(const Expr& e) const;
  // Whether `name` is the first part of a module `import python` names (written as it is, not mangled).
  bool is_python_module(const std::string& name) const;
  const CallFacts* facts_of(const Expr& e) const;
  std::string text(Span span) const { return std::string(a_.file.slice(span)); }
  std::string signature_line(const Item& item) const;
  // Names a block assigns, in order.
  static void assigned_names(const Block& b, std::vector<std::string>& names);
  // Static: depends only on dims and numbers, so plain Python runs it while tracing.
  bool is_static(const Expr& e) const;
  // A plain Python number: a literal, a dim, an axis size, or arithmetic on those.
  bool is_number(const Expr& e) const;

  // ---- Statements

  // `file.ss:12: the line`, as comment_text: safe on a `#` comment's line, not yet a literal.
  std::string source_line(Span span) const;
  std::string source_comment(const Statement& s, int depth) const;
  std::string block(const Block& b, int depth);
  std::string flush_prelude(int depth);
  // A line of code, after what its expression needs first.
  std::string line(int depth, const std::string& code);
  std::string statement(const Statement& s, int depth);
  // A piped value of at least pipe_steps_from() stages as one statement per stage, through `name`;
  // `last_targets` (`a, b`) takes the last stage's value where several targets unpack it.
  std::string pipe_steps(const Expr& value, const std::string& name, const std::string& source_name, int depth, bool returns = false,
                         const std::string& last_targets = "");
  // `n = x.shape[1]` for each generic axis the body uses as a value.
  std::string axis_reads(const std::vector<std::pair<std::string, const ValueType*>>& inputs, const std::string& body, int depth);
  // The anchor of a function with these inputs: the device of the first that is a tensor with axes,
  // the dtype of the first floating one, else of a model input's first parameter; "" where none is
  // (torch's defaults).
  Anchor anchor_of(const std::vector<std::pair<std::string, const ValueType*>>& inputs) const;
  // Whether `e` is computed from the model's values (a name in anchor_.floating)...
  bool from_model_values(const Expr& e) const;
  // ...and the Python for `operands` that meet in one operation: a float tensor computed from sizes
  // and positions alone, cast to the anchor's dtype where it meets one that is.
  std::vector<std::string> in_model_dtype(const std::vector<const Expr*>& operands, std::vector<std::string> code) const;
  // After `names = value`: which of them now hold the model's values.
  void assigned(const std::vector<std::string>& names, const Expr* value);
  // `causal[n m]` as a call of `_causal`, on the function's device.
  std::string causal_call(const std::string& n, const std::string& m);

  // ---- Expressions

  std::string size_node(const SizeNode& node);
  std::string computed_size(const SizeExpr& size);
  std::vector<std::string> result_shape(const Expr& e);
  std::string expression(const Expr& e);
  static constexpr int kComparison = 4;
  int precedence(const Expr& e) const;
  std::string python_operator(const Expr& e) const;
  std::string call(const Expr& e);
  // A user function's argument `i`, as call() passes it: a plain number given for a scalar
  // parameter becomes a tensor.
  std::string function_argument(const Item& callee, size_t i, const Expr& value, std::string code) const;
  // The arguments of `call` whose parameters `invariant` marks, as call() writes them: what a
  // version's `_prepare_` function (emit/hoist.h) is called with.
  std::string prepared_arguments(const Expr& call, const std::vector<bool>& invariant);
  // Of a call's arguments as written, those a version's `_hoisted_` function takes (HoistedFunction::takes).
  static std::vector<std::string> taken_arguments(const std::vector<std::string>& args, const std::vector<bool>& takes);
  std::string pattern_side(const std::vector<SizeNode>& side, const CallFacts& facts, std::map<std::string, int64_t>& sizes);
  std::string pattern_axis(const SizeNode& node, const CallFacts& facts, std::map<std::string, int64_t>& sizes);
  void einops_pattern(const AxisPattern& pattern, const CallFacts& facts, LowerContext& context);
};

}  // namespace ss
