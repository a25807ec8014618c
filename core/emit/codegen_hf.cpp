#include "emit/codegen_hf.h"
#include "model/experts_form.h"
#include "model/latent_attention.h"
#include "check/extern_targets.h"
#include "model/tensor_parallel.h"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <set>

#include "check/builtins.h"
#include "emit/hoist.h"
#include "emit/codegen.h"
#include "emit/codegen_hf_plan.h"
#include "emit/hoist.h"
#include "emit/python_writer.h"
#include "syntax/walk.h"

namespace ss {

namespace {

constexpr int64_t kMaxBlocks = 1 << 16;  // far more than any model has; each is a layer of tensors


using namespace pywrite;

std::string camel(const std::string& name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out.empty() ? "Block" : out;
}

struct Unsupported {
  std::string what;
};

[[noreturn]] void refuse(std::string what) { throw Unsupported{std::move(what)}; }

enum class ScopeKind { base, layer, module, plain };

struct Weight {
  enum class Kind { param, linear, embedding, owned, packed, norm };
  Kind kind = Kind::param;
  std::string attr;
  const TypeNode* type = nullptr;  // as declared
  size_t skip_axes = 0;            // a stacked parameter's blocks axis
  bool linear_use = false, embedding_use = false, other_use = false, expert_use = false;
  int norm_uses = 0;     // as `rms_norm(x, weight=w)` over x's last axis, where the scope's norms are modules
  std::string norm_eps;  // that norm's eps, as Python
  int owners = 0;
  Span at;  // its first use, for refusals
  std::string packed;  // packed: its path in the scope's `experts` module, `[part]` when it shares a tensor
};

// `experts(x, chosen, weights, e => rows => linear(silu(linear(rows, g[e])) * linear(rows, u[e]), d[e]))`
// in a function with weights: the form vLLM's FusedMoE computes (its activation is SiLU), so the
// module gets an `experts` submodule of packed 3-D weights, transformers' MixtralExperts' layout.
struct PackedExperts {
  std::string gate, up, down;  // the function's weight parameters
  int64_t experts = 0, top_k = 0, features = 0;
};

// What an attention call fixes for the module that makes it: its heads, and `window=` (0: none).
struct AttentionShape {
  int64_t heads = 0, kv_heads = 0, head_dim = 0, window = 0;
  // A latent attention's (model/latent_attention.h) sizes, 0 for another: what config.json's MLA keys say.
  int64_t latent_size = 0, shared_size = 0, nope_size = 0, value_size = 0;
};

struct ClassInfo {
  std::string name;
  const Item* function = nullptr;
  std::vector<bool> weight_positions;                  // which of the function's parameters are weights
  std::map<std::string, std::string> weight_paths;     // weight parameter → its path under the class ("w_qkv.weight")
  int attention_calls = 0;                             // including its submodules'
  std::set<std::string> linear_paths;                  // its nn.Linear submodules, by path
  AttentionShape attention;                            // its own, else its first submodule's
};

struct Instance {
  std::string name;
  ClassInfo* cls = nullptr;
  std::map<std::string, std::string> weights;  // the scope's weight key → the class's parameter name
};

struct Scope {
  ScopeKind kind = ScopeKind::plain;
  std::string model_var, loop_var;
  std::map<std::string, Weight> weights;
  std::vector<std::string> weight_order;
  std::vector<Instance> instances;
  std::map<const Expr*, size_t> instance_of_call;
  std::map<const Expr*, PackedExperts> packed_experts;  // at most one: vLLM replaces the child named `experts`
  const Expr* token_embedding = nullptr;
  std::set<const Expr*> skip;  // not walked (the output layer)
  int attention_calls = 0;
  AttentionShape attention;  // of its own attention call
  std::string scaling;
  // Its attention calls' `sinks=`, as Python ("" for none), where it makes several (one per branch
  // of an `if` on the block's index): they then share one call of the interface, `attend`.
  std::set<std::string> shared_sinks;
  // Its attention's keys and values come from a latent (DeepSeek's MLA): the folder caches the latent,
  // expands it in `expand_kv`, and its norms are modules, as vLLM's MLA fuser finds them.
  std::optional<LatentAttention> latent;
};

// A scope's attention, else the first of its submodules' that has one.
AttentionShape attention_of(const Scope& scope) {
  if (scope.attention.heads) return scope.attention;
  for (const Instance& instance : scope.instances)
    if (instance.cls->attention.heads) return instance.cls->attention;
  return {};
}

class HfGenerator : public PythonWriter {
 public:
  explicit HfGenerator(const Analysis& analysis) : PythonWriter(analysis), hoist_(plan_hoisting(analysis)) {}

  HfModel run(const ModelLayout& layout) {
    HfModel out;
    out.function = layout.function;
    if (!layout.forward) {
      out.error = "`" + file_name(a_.file.path()) + "` has no `fn " + layout.function + "`";
      return out;
    }
    layout_ = &layout;
    const Item* fn = layout.forward;
    try {
      if (!layout.types) refuse("`" + fn->name + "` has no checked signature");
      model_ = layout.model;
      if (model_)
        for (const Item::Param& p : model_->params) {
          HfParameter parameter{p.name, {}};
          for (const SizeNode& axis : p.type.axes) parameter.shape.push_back(constant(axis, "`" + p.name + "`'s shape"));
          out.parameters.push_back(parameter);
        }
      out.model_name = model_ ? model_->name : "";
      if (layout.is_language_model()) language_model(*fn, *layout.types, out);
      else generic(*fn, *layout.types, out);
    } catch (const Unsupported& u) {
      out.error = u.what;
    }
    // One verdict: the serving rules' first reason, else what the translation found.
    out.not_servable = why_not_servable();
    return out;
  }

 private:
  const ModelLayout* layout_ = nullptr;
  const Item* model_ = nullptr;
  Scope* scope_ = nullptr;
  // A function's module, per version of it (emit/hoist.h; null: as written).
  std::map<std::pair<const Item*, const HoistedFunction*>, std::unique_ptr<ClassInfo>> classes_;
  // Layer-invariant work (emit/hoist.h), as the pt2 generator writes it: ShapeScriptModel computes
  // it once before its layers (`_prepare_f_N`) and passes it down, as transformers passes
  // `position_embeddings`; each module and function that reads it is written as its version.
  HoistPlan hoist_;
  const HoistedFunction* version_ = nullptr;  // the version of the module or function being translated
  const HoistedLoop* loop_ = nullptr;         // the decoder layer's loop, while it is translated
  std::vector<std::string> loop_prepared_;    // the layer's inputs that hold its prepared values
  std::set<std::string> versions_done_;       // the version functions written
  HfModelingPlan plan_;  // what the folder's code must contain, filled as the program is translated
  std::vector<const Item*> plain_queue_;
  std::set<const Item*> plain_done_;
  std::string not_servable_;  // what the translation found that an engine can't replace
  std::string attention_softcap_;   // the `softcap=` of the attention calls, as Python; empty: none
  bool uncapped_attention_ = false;  // some attention call has no `softcap=`
  std::optional<PackedExperts> moe_;  // the first packed experts: config.json's num_local_experts, ...

  // The one verdict on serving: the serving rules' first reason (E33xx, when the caller ran them),
  // else what the translation found. Empty: servable, so a key-value cache is sound.
  std::string why_not_servable() const { return !a_.not_servable.empty() ? a_.not_servable : not_servable_; }

  // ---------------------------------------------------------------------------------------------
  // Facts

  bool is_builtin(const Expr& e, BuiltinRole role) const {
    const CallFacts* f = e.kind == Expr::Kind::call ? facts_of(e) : nullptr;
    return f && f->builtin && f->builtin->role == role;
  }
  bool engine_attention(const Expr& e) const {
    const CallFacts* f = e.kind == Expr::Kind::call ? facts_of(e) : nullptr;
    return f && f->builtin && f->builtin->role == BuiltinRole::attention && f->lowering.count("causal") && !f->lowering.count("bias");
  }
  static const Argument* has_keyword(const Expr& e, std::string_view name) {
    for (const Argument& argument : e.arguments)
      if (argument.keyword && *argument.keyword == name && argument.value) return &argument;
    return nullptr;
  }
  const Item* user_function(const Expr& e) const {
    const CallFacts* f = e.kind == Expr::Kind::call ? facts_of(e) : nullptr;
    return f && f->function && f->function->kind == Item::Kind::function ? f->function : nullptr;
  }

  std::string where(Span span) const {
    LineColumn p = a_.file.line_column(span.begin);
    return file_name(a_.file.path()) + ":" + std::to_string(p.line + 1) + ":" + std::to_string(p.column + 1);
  }

  int64_t constant(const SizeNode& node, const std::string& what) const {
    std::string generic;
    if (auto value = fixed_size(a_, node, &generic)) return *value;
    if (!generic.empty()) refuse(what + " has the generic axis `" + generic + "`; a Hugging Face model's weights need fixed sizes");
    refuse(what + " has a size that isn't fixed");
  }

  // ---------------------------------------------------------------------------------------------
  // The language model's shape: forward(m, ids[, pos]) embeds, loops over blocks, returns linear(h, m.W).

  bool is_model_field(const Expr* e) const { return layout_->model_field(e).has_value(); }

  const Item::Param& model_param(const std::string& name) const {
    for (const Item::Param& p : model_->params)
      if (p.name == name) return p;
    refuse("`" + model_->name + "` has no parameter `" + name + "`");
  }

  // Which model field (or weight parameter) `e` is in the current scope, if any.
  std::optional<std::string> weight_key(const Expr& e) const {
    if (!scope_) return std::nullopt;
    switch (scope_->kind) {
      case ScopeKind::base:
        if (is_model_field(&e)) return e.text;
        return std::nullopt;
      case ScopeKind::layer:
        // `m.w[l]`, or any index known per block (`m.w[l - Ld]`): block_slices says which slice each block reads.
        if (e.kind == Expr::Kind::subscript && is_model_field(e.operands[0].get()) && e.index.size() == 1) return e.operands[0]->text;
        if (is_model_field(&e))
          refuse(where(e.span) + ": `" + text(e.span) + "` is used inside the loop over blocks without `[" + scope_->loop_var +
                 "]`; only parameters stacked along the blocks axis can be split into per-block layers");
        return std::nullopt;
      case ScopeKind::module:
        if (e.kind == Expr::Kind::name && scope_->weights.count(e.text) && !locals_.count(e.text)) return e.text;
        return std::nullopt;
      case ScopeKind::plain: return std::nullopt;
    }
    return std::nullopt;
  }

  Weight& weight(const std::string& key, Span span) {
    auto it = scope_->weights.find(key);
    if (it != scope_->weights.end()) return it->second;
    Weight w;
    w.attr = python_name(key);
    w.at = span;
    if (scope_->kind == ScopeKind::base || scope_->kind == ScopeKind::layer) {
      const Item::Param& p = model_param(key);
      w.type = &p.type;
      if (scope_->kind == ScopeKind::layer) {
        w.skip_axes = 1;
        if (p.type.axes.empty()) refuse(where(span) + ": `" + key + "` has no blocks axis");
      }
    }
    scope_->weight_order.push_back(key);
    return scope_->weights.emplace(key, w).first->second;
  }

  // Pass 1: how each weight is used, and which calls become submodules.
  void collect(const Expr& e) {
    for_each_expr(e, [&](const Expr& x) { return collect_one(x); });
  }
  void collect(const Block& b) {
    for_each_expr(b, [&](const Expr& x) { return collect_one(x); });
  }
  Walk collect_one(const Expr& e) {
    if (scope_->skip.count(&e)) return Walk::skip;
    if (auto key = weight_key(e)) {
      weight(*key, e.span).other_use = true;
      return Walk::skip;
    }
    if ((scope_->kind == ScopeKind::base || scope_->kind == ScopeKind::layer) && e.kind == Expr::Kind::name && e.text == scope_->model_var)
      refuse(where(e.span) + ": the model `" + e.text + "` is passed on whole; pass its parameters instead (`" + e.text + ".W`)");
    if (e.kind == Expr::Kind::call) {
      if (&e == scope_->token_embedding) return Walk::skip;
      if ((is_builtin(e, BuiltinRole::linear) || is_builtin(e, BuiltinRole::embedding)) && e.arguments.size() == 2 && e.arguments[1].value)
        if (auto key = weight_key(*e.arguments[1].value)) {
          Weight& w = weight(*key, e.span);
          (is_builtin(e, BuiltinRole::linear) ? w.linear_use : w.embedding_use) = true;
          collect(*e.arguments[0].value);
          return Walk::skip;
        }
      if (const Item* callee = user_function(e)) {
        std::vector<bool> positions;
        bool any = false;
        for (const Argument& argument : e.arguments) {
          bool is_weight = argument.value && !argument.keyword && weight_key(*argument.value).has_value();
          positions.push_back(is_weight);
          any = any || is_weight;
        }
        if (any || contains_attention(*callee)) {
          if (scope_->kind == ScopeKind::plain)
            refuse(where(e.span) + ": `" + callee->name + "` holds attention but is called from a function without weights");
          ClassInfo* cls = module_class(*callee, positions, e.span, call_version(e));
          Instance instance;
          instance.cls = cls;
          std::string name = python_name(callee->name);
          int count = 1;
          for (const Instance& other : scope_->instances)
            if (other.cls == cls) ++count;
          instance.name = count == 1 ? name : name + "_" + std::to_string(count);
          std::map<std::string, std::string> weights;
          for (size_t i = 0; i < e.arguments.size(); ++i)
            if (positions[i]) weights[*weight_key(*e.arguments[i].value)] = i < callee->parameters.size() ? callee->parameters[i].name : "";
          // The same function on the same weights (in both branches of an `if` on the block's index): one module.
          for (size_t k = 0; k < scope_->instances.size(); ++k)
            if (scope_->instances[k].cls == cls && scope_->instances[k].weights == weights) {
              for (size_t i = 0; i < e.arguments.size(); ++i)
                if (!positions[i] && e.arguments[i].value) collect(*e.arguments[i].value);
              scope_->instance_of_call[&e] = k;
              return Walk::skip;
            }
          for (size_t i = 0; i < e.arguments.size(); ++i) {
            if (!positions[i]) {
              if (e.arguments[i].value) collect(*e.arguments[i].value);
              continue;
            }
            std::string key = *weight_key(*e.arguments[i].value);
            Weight& w = weight(key, e.span);
            ++w.owners;
            instance.weights[key] = i < callee->parameters.size() ? callee->parameters[i].name : "";
          }
          scope_->instance_of_call[&e] = scope_->instances.size();
          scope_->instances.push_back(instance);
          return Walk::skip;
        }
      }
      if (const std::string* key = norm_weight(e)) {
        Weight& w = weight(*key, e.span);
        ++w.norm_uses;
        const Argument* eps = has_keyword(e, "eps");
        w.norm_eps = eps ? python_bare(expression(*eps->value)) : "1e-5";
        collect(*e.arguments[0].value);
        return Walk::skip;
      }
      if (auto packed = packable_experts(e)) {
        for (const std::string* key : {&packed->gate, &packed->up, &packed->down}) scope_->weights.at(*key).expert_use = true;
        for (size_t i = 0; i < 3; ++i) collect(*e.arguments[i].value);
        scope_->packed_experts[&e] = *packed;
        return Walk::skip;
      }
      if (engine_attention(e)) {
        if (scope_->kind == ScopeKind::base)
          refuse(where(e.span) + ": attention outside the loop over blocks; vLLM's attention layers are one per block");
        if (scope_->kind == ScopeKind::layer || scope_->kind == ScopeKind::module) ++scope_->attention_calls;
      }
    }
    return Walk::into;
  }

  // `rms_norm(x, over=A, weight=w, eps=e)` over x's last axis, w a weight of a scope whose norms are
  // modules (a latent attention's): w's key. vLLM's MLA fuser finds the latent's norm as a module.
  const std::string* norm_weight(const Expr& e) const {
    if (!scope_ || !scope_->latent || e.kind != Expr::Kind::call || e.arguments.empty() || !e.arguments[0].value) return nullptr;
    const CallFacts* f = facts_of(e);
    if (!f || !f->builtin || f->builtin->name != "rms_norm" || (f->lowering.count("dim") && f->lowering.at("dim") != "-1")) return nullptr;
    const Argument* w = has_keyword(e, "weight");
    if (!w || w->value->kind != Expr::Kind::name || !scope_->weights.count(w->value->text) || locals_.count(w->value->text)) return nullptr;
    return &scope_->weights.find(w->value->text)->first;
  }

  // `experts(...)` in a function with weights whose expert is SiLU(x g[e]) * (x u[e]), then d[e], each
  // a weight [E F D] / [E D F] of the function, of the same sizes as any other packed experts (vLLM
  // reads one num_local_experts, num_experts_per_tok and moe_intermediate_size from config.json).
  std::optional<PackedExperts> packable_experts(const Expr& e) const {
    if (scope_->kind != ScopeKind::module) return std::nullopt;
    auto form = gated_experts(a_, e);
    if (!form) return std::nullopt;
    // Each weight a parameter of the function, [E F D] or [E D F].
    auto parameter = [&](const Expr* w) -> std::optional<std::string> {
      if (w->kind != Expr::Kind::name || !scope_->weights.count(w->text) || locals_.count(w->text)) return std::nullopt;
      const TypeNode* type = scope_->weights.at(w->text).type;
      if (!type || type->axes.size() != 3) return std::nullopt;
      return w->text;
    };
    auto gate = parameter(form->gate), up = parameter(form->up), down = parameter(form->down);
    if (!gate || !up || !down) return std::nullopt;
    PackedExperts p{*gate, *up, *down};
    try {
      const TypeNode& down_type = *scope_->weights.at(p.down).type;
      p.experts = constant(down_type.axes[0], "`" + p.down + "`");
      p.features = constant(down_type.axes[2], "`" + p.down + "`");
      const ValueType* chosen = type_of(*e.arguments[1].value);
      if (!chosen || !chosen->is_tensor() || chosen->tensor.axes.empty()) return std::nullopt;
      auto k = chosen->tensor.axes.back().size.constant_value();
      if (!k) return std::nullopt;
      p.top_k = *k;
    } catch (const Unsupported&) {
      return std::nullopt;
    }
    if (moe_ && (moe_->experts != p.experts || moe_->top_k != p.top_k || moe_->features != p.features)) return std::nullopt;
    return p;
  }

  bool contains_attention(const Item& fn) const {
    return fn.body && !for_each_expr(*fn.body, [&](const Expr& e) { return engine_attention(e) ? Walk::stop : Walk::into; });
  }

  // Decides each weight's kind once pass 1 has seen every use.
  void settle_weights() {
    // Packed experts own their weights: the one such call of the function, each weight used by it alone;
    // else the `_experts` helper.
    bool single = scope_->packed_experts.size() == 1;
    for (auto it = scope_->packed_experts.begin(); it != scope_->packed_experts.end();) {
      const PackedExperts& p = it->second;
      bool alone = single && p.gate != p.up && p.gate != p.down && p.up != p.down;
      for (const std::string* key : {&p.gate, &p.up, &p.down}) {
        const Weight& w = scope_->weights.at(*key);
        alone = alone && !w.other_use && !w.linear_use && !w.embedding_use && w.owners == 0;
      }
      if (!alone) {
        for (const std::string* key : {&p.gate, &p.up, &p.down}) scope_->weights.at(*key).other_use = true;
        it = scope_->packed_experts.erase(it);
        continue;
      }
      scope_->weights.at(p.gate).packed = "experts.gate_up_proj[0]";
      scope_->weights.at(p.up).packed = "experts.gate_up_proj[1]";
      scope_->weights.at(p.down).packed = "experts.down_proj";
      if (!moe_) moe_ = p;
      ++it;
    }
    for (const std::string& key : scope_->weight_order) {
      Weight& w = scope_->weights.at(key);
      size_t rank = w.type ? w.type->axes.size() - w.skip_axes : 0;
      if (!w.packed.empty()) {
        w.kind = Weight::Kind::packed;
      } else if (w.owners > 0) {
        if (w.owners > 1 || w.linear_use || w.embedding_use || w.other_use)
          refuse(where(w.at) + ": `" + key + "` is used in more than one place of " + scope_description() +
                 "; a Hugging Face layer owns each of its weights, so give each use its own parameter");
        w.kind = Weight::Kind::owned;
      } else if (w.norm_uses == 1 && rank == 1 && !w.other_use && !w.linear_use && !w.embedding_use) {
        w.kind = Weight::Kind::norm;
      } else if (w.embedding_use && rank == 2) {
        w.kind = Weight::Kind::embedding;
      } else if (w.linear_use && rank == 2) {
        w.kind = Weight::Kind::linear;
      } else {
        w.kind = Weight::Kind::param;
      }
    }
  }

  std::string scope_description() const {
    switch (scope_->kind) {
      case ScopeKind::base: return "the forward outside the blocks";
      case ScopeKind::layer: return "a block";
      default: return "a function";
    }
  }

  // The weights and submodules of the scope's module, as its __init__ makes them.
  std::vector<HfMember> weight_members() {
    std::vector<HfMember> out;
    for (const std::string& key : scope_->weight_order) {
      const Weight& w = scope_->weights.at(key);
      if (w.kind == Weight::Kind::owned || w.kind == Weight::Kind::packed || w.attr == "embed_tokens") continue;
      HfMember member;
      member.attr = w.attr;
      for (size_t i = w.skip_axes; i < w.type->axes.size(); ++i) {
        constant(w.type->axes[i], "`" + key + "`");
        member.axes.push_back(python_bare(size_node(w.type->axes[i])));
      }
      member.kind = w.kind == Weight::Kind::linear      ? HfMember::Kind::linear
                    : w.kind == Weight::Kind::embedding ? HfMember::Kind::embedding
                    : w.kind == Weight::Kind::norm      ? HfMember::Kind::norm
                                                        : HfMember::Kind::parameter;
      if (w.kind == Weight::Kind::norm) {
        member.eps = w.norm_eps;
        plan_.defines_norm = true;
      }
      out.push_back(member);
    }
    for (auto& [call, p] : scope_->packed_experts) {
      const TypeNode& down = *scope_->weights.at(p.down).type;  // [E D F]
      HfMember member{HfMember::Kind::experts, "experts", {}, "ShapeScriptExperts", {}, {}};
      for (size_t i : {0, 2, 1}) member.axes.push_back(python_bare(size_node(down.axes[i])));
      out.push_back(member);
    }
    for (const Instance& instance : scope_->instances) out.push_back({HfMember::Kind::submodule, instance.name, {}, instance.cls->name, {}, {}});
    return out;
  }

  // Where each weight of the scope lives, relative to the scope's module.
  std::map<std::string, std::string> weight_paths() const {
    std::map<std::string, std::string> out;
    for (auto& [key, w] : scope_->weights) {
      if (w.kind == Weight::Kind::owned) continue;
      out[key] = w.kind == Weight::Kind::packed ? w.packed : w.attr + (w.kind == Weight::Kind::param ? "" : ".weight");
    }
    for (const Instance& instance : scope_->instances)
      for (auto& [key, parameter] : instance.weights) {
        auto path = instance.cls->weight_paths.find(parameter);
        if (path != instance.cls->weight_paths.end()) out[key] = instance.name + "." + path->second;
      }
    return out;
  }

  std::set<std::string> scope_linear_paths() const {
    std::set<std::string> out;
    for (auto& [key, w] : scope_->weights)
      if (w.kind == Weight::Kind::linear) out.insert(w.attr);
    for (const Instance& instance : scope_->instances)
      for (const std::string& p : instance.cls->linear_paths) out.insert(instance.name + "." + p);
    return out;
  }

  int scope_attention_calls() const {
    int calls = scope_->attention_calls;
    for (const Instance& instance : scope_->instances) calls += instance.cls->attention_calls;
    return calls;
  }

  // ---------------------------------------------------------------------------------------------
  // A function with weights becomes an nn.Module; its weights are the module's own.

  ClassInfo* module_class(const Item& fn, const std::vector<bool>& positions, Span call, const HoistedFunction* version) {
    auto found = classes_.find({&fn, version});
    if (found != classes_.end()) {
      if (found->second->weight_positions != positions)
        refuse(where(call) + ": `" + fn.name + "` is called with weights in different places than before");
      if (found->second->name.empty()) refuse(where(call) + ": `" + fn.name + "` calls itself");
      return found->second.get();
    }
    auto info = std::make_unique<ClassInfo>();
    ClassInfo* cls = info.get();
    classes_[{&fn, version}] = std::move(info);
    cls->function = &fn;
    cls->weight_positions = positions;

    Scope scope;
    scope.kind = ScopeKind::module;
    auto types = a_.semantics.functions.find(&fn);
    for (size_t i = 0; i < fn.parameters.size(); ++i)
      if (i < positions.size() && positions[i]) {
        Weight w;
        w.attr = python_name(fn.parameters[i].name);
        w.type = &fn.parameters[i].type;
        scope.weights[fn.parameters[i].name] = w;
        scope.weight_order.push_back(fn.parameters[i].name);
      }
    Scope* saved_scope = scope_;
    auto saved_locals = locals_;
    auto saved_axes = needed_axes_;
    scope_ = &scope;
    locals_.clear();
    needed_axes_.clear();
    const HoistedFunction* saved_version = version_;
    const HoistedLoop* saved_loop = loop_;
    version_ = version;
    loop_ = nullptr;
    if (version) prepare_function(*version);
    std::set<std::string> inputs_read;  // its parameters that aren't weights
    for (size_t i = 0; i < fn.parameters.size(); ++i)
      if (!(i < positions.size() && positions[i])) inputs_read.insert(fn.parameters[i].name);
    scope.latent = find_latent_attention(a_, fn, inputs_read);
    if (scope.latent && !engine_attention(*scope.latent->attention)) scope.latent.reset();
    if (fn.body) collect(*fn.body);
    settle_weights();
    std::string name = camel(fn.name);
    for (auto& [item, other] : classes_)
      if (other.get() != cls && other->name == name) name += "Module";
    if (name == "ShapeScriptModel" || name == "ShapeScriptDecoderLayer") name += "Block";
    std::vector<std::string> inputs;
    std::vector<std::pair<std::string, const ValueType*>> typed;
    for (size_t i = 0; i < fn.parameters.size(); ++i)
      if (!(i < positions.size() && positions[i]) && (!version || version->takes[i])) {
        inputs.push_back(python_name(fn.parameters[i].name));
        locals_.insert(fn.parameters[i].name);
        if (types != a_.semantics.functions.end() && i < types->second->parameters.size())
          typed.push_back({python_name(fn.parameters[i].name), &types->second->parameters[i]});
      }
    Anchor saved_anchor = anchor_;
    anchor_ = anchor_of(typed);
    for (const std::string& weight : scope.weight_order) anchor_.floating.insert(weight);  // the module's own parameters
    if (version) inputs.push_back("_prepared");
    std::string body = fn.body ? version_body(fn, version, 2) : "        pass\n";
    anchor_ = saved_anchor;
    version_ = saved_version;
    loop_ = saved_loop;
    HfModuleClass code;
    code.members = weight_members();
    int calls = scope_attention_calls();
    if (scope.attention_calls > 1)
      refuse(where(fn.name_span) + ": `" + fn.name + "` calls `scaled_dot_product_attention` more than once; vLLM needs one attention call per attention module");
    code.name = name;
    code.doc = file_name(a_.file.path()) + ": " + signature_line(fn);
    attention_members(scope, code);
    code.inputs = inputs;
    code.body = axis_reads(typed, body, 2) + body;
    if (scope.latent) code.methods = expansion_method(fn, *scope.latent);
    cls->name = name;
    cls->weight_paths.clear();
    for (auto& [key, path] : weight_paths()) cls->weight_paths[key] = path;
    cls->attention_calls = calls;
    cls->linear_paths = scope_linear_paths();
    cls->attention = attention_of(scope);
    plan_.modules.push_back(std::move(code));
    scope_ = saved_scope;
    locals_ = saved_locals;
    needed_axes_ = saved_axes;
    return cls;
  }

  // ---------------------------------------------------------------------------------------------
  // The language model

  void language_model(const Item& fn, const FunctionTypes& types, HfModel& out) {
    out.causal_lm = true;
    const ModelLayout& layout = *layout_;
    const std::string& model_var = layout.model_var;
    const std::string& ids_var = layout.ids_var;
    const std::string& pos_var = layout.pos_var;
    const std::vector<Statement>& statements = fn.body->statements;
    // The loop over blocks: the one top-level `for`.
    for (size_t i = layout.loop_at + 1; layout.loops > 1 && i < statements.size(); ++i)
      if (statements[i].kind == Statement::Kind::for_)
        refuse(where(statements[i].span) + ": a second `for` in `" + fn.name + "`; a language model's forward loops over its blocks once");
    if (!layout.loop)
      refuse(where(fn.name_span) + ": `" + fn.name + "` has no `for` over blocks; write the blocks as `for l in 0..L:` with parameters stacked along `L`");
    const Statement& loop = *layout.loop;
    const size_t loop_at = layout.loop_at;
    auto fixed = [&](std::optional<int64_t> bound) -> int64_t {
      if (!bound) refuse(where(loop.span) + ": the loop over blocks must have a fixed number of iterations, such as `0..L`");
      return *bound;
    };
    if (fixed(layout.loop_start) != 0) refuse(where(loop.span) + ": the loop over blocks must start at 0");
    int64_t layers = fixed(layout.layers);
    // The folder lists every block's tensors (and config.json each block's type): a count from the
    // source, such as `dim L = 4611686018427387904`, must not become that many entries.
    if (layers > kMaxBlocks)
      refuse(where(loop.span) + ": the loop over blocks runs " + std::to_string(layers) + " times; a Hugging Face folder holds at most " +
             std::to_string(kMaxBlocks) + " blocks");
    const size_t output_at = layout.output_at;
    if (output_at <= loop_at) refuse(where(layout.output->span) + ": the output layer must come after the loop over blocks");
    for (size_t i = loop_at + 1; i + 1 < statements.size(); ++i)
      if (statements[i].kind == Statement::Kind::for_ || statements[i].kind == Statement::Kind::return_)
        refuse(where(statements[i].span) + ": `" + fn.name + "` must end by returning the output layer after its blocks");

    // The token embedding: embedding(ids, m.E) before the loop.
    const Expr* token_embedding = layout.token_embedding;
    if (!token_embedding)
      refuse(where(fn.name_span) + ": `" + fn.name + "` doesn't embed `" + ids_var + "` with `embedding(" + ids_var + ", " + model_var + ".W)` before its blocks");
    const std::string& table = layout.embedding;
    const Expr& output = *layout.output;
    const std::string& output_weight = layout.output_layer;
    out.tied = layout.tied;
    const Item::Param& table_param = model_param(table);
    const Item::Param& output_param = model_param(output_weight);
    if (table_param.type.axes.size() != 2 || output_param.type.axes.size() != 2)
      refuse(where(output.span) + ": the embedding table `" + table + "` and the output layer `" + output_weight + "` must be matrices");
    out.vocab = constant(output_param.type.axes[0], "`" + output_weight + "`");
    int64_t hidden = constant(output_param.type.axes[1], "`" + output_weight + "`");
    int64_t embedding_vocab = constant(table_param.type.axes[0], "`" + table + "`");
    out.layers = layers;

    // Names the loop reads from before it, and the one it carries.
    std::set<std::string> before = {ids_var};
    if (!pos_var.empty()) before.insert(pos_var);
    for (size_t i = 0; i < loop_at; ++i)
      for (auto& [name, span] : statements[i].targets) before.insert(name);
    std::vector<std::string> assigned;
    if (loop.body) assigned_names(*loop.body, assigned);
    std::vector<std::string> carried;
    for (const std::string& n : assigned)
      if (before.count(n)) carried.push_back(n);
    if (carried.size() != 1)
      refuse(where(loop.span) + ": the loop over blocks must update exactly one variable (the hidden states); it updates " +
             std::to_string(carried.size()));
    std::vector<std::string> free;
    if (loop.body)
      for_each_expr(*loop.body, [&](const Expr& e) {
        for_each_free_name(e, [&](const Expr& x) {
          if (before.count(x.text) && x.text != carried[0] && x.text != model_var && std::find(free.begin(), free.end(), x.text) == free.end() &&
              std::find(assigned.begin(), assigned.end(), x.text) == assigned.end())
            free.push_back(x.text);
        });
        return Walk::skip;  // for_each_free_name walked its parts
      });
    if (std::find(free.begin(), free.end(), ids_var) != free.end())
      refuse(where(loop.span) + ": the blocks read the token ids `" + ids_var + "`; only the embedding may");

    // The decoder layer: the loop's body.
    Scope layer;
    layer.kind = ScopeKind::layer;
    layer.model_var = model_var;
    layer.loop_var = loop.variable;
    scope_ = &layer;
    locals_.clear();
    needed_axes_.clear();
    auto planned = hoist_.loops.find(&loop);
    loop_ = planned != hoist_.loops.end() ? &planned->second : nullptr;
    loop_prepared_.clear();
    if (loop_)
      for (size_t i = 0; i < loop_->prepared.size(); ++i) {
        loop_prepared_.push_back("_prepared" + std::to_string(i + 1));
        prepare_function(hoist_.functions[loop_->prepared[i].callee]);
      }
    if (loop.body) collect(*loop.body);
    settle_weights();
    // Which slice of each stacked weight each block reads: a weight stacked over a run of the blocks
    // (DeepSeek's dense first block, then experts) is a member of those blocks' layers only.
    BlockSlices slices = block_slices(a_, layout);
    if (!slices.refusals.empty()) refuse(where(slices.refusals[0].span) + ": " + slices.refusals[0].rule);
    if (slices.per_block.size() != static_cast<size_t>(layers)) refuse(where(loop.span) + ": the blocks' weights can't be told block by block");
    std::map<std::string, std::vector<int64_t>> blocks_of;  // weight -> the blocks that read it
    for (auto& [key, w] : layer.weights) {
      int64_t stacked = constant(w.type->axes[0], "`" + key + "`");
      std::vector<int64_t>& blocks = blocks_of[key];
      std::set<int64_t> slices_read;
      for (int64_t l = 0; l < layers; ++l)
        if (auto at = slices.per_block[static_cast<size_t>(l)].find(key); at != slices.per_block[static_cast<size_t>(l)].end()) {
          if (at->second < 0 || at->second >= stacked)
            refuse(where(model_param(key).name_span) + ": block " + std::to_string(l) + " reads `" + key + "` at " + std::to_string(at->second) + ", outside its first axis of " +
                   std::to_string(stacked));
          blocks.push_back(l);
          slices_read.insert(at->second);
        }
      // A slice several blocks read (weights shared by blocks) is a copy in each one's layer; a slice none reads would be lost.
      if (static_cast<int64_t>(slices_read.size()) != stacked)
      {
        std::string read;
        for (int64_t at : slices_read) read += (read.empty() ? "" : ", ") + std::to_string(at);
        refuse(where(model_param(key).name_span) + ": `" + model_var + "." + key + "` has " + std::to_string(stacked) + " slices along its first axis but the blocks read " +
               (slices_read.size() == 1 ? "only slice " : "only slices ") + read + "; the folder would lose the others");
      }
    }
    std::vector<std::string> layer_inputs = {python_name(carried[0])};
    std::vector<std::pair<std::string, const ValueType*>> typed;
    locals_.insert(carried[0]);
    locals_.insert(loop.variable);
    for (const std::string& f : free) {
      layer_inputs.push_back(python_name(f));
      locals_.insert(f);
    }
    for (const std::string& p : loop_prepared_) layer_inputs.push_back(p);
    anchor_ = Anchor{python_name(carried[0]) + ".device", python_name(carried[0]) + ".dtype", {carried[0], model_var}};  // the hidden states
    std::string layer_body = loop.body ? block(*loop.body, 2) : "";
    const HoistedLoop* layer_loop = loop_;
    loop_ = nullptr;
    // The block's index, for what a block decides by it (`if l % 2 == 0:`): each layer knows its own.
    if (uses_name(layer_body, python_name(loop.variable)))
      layer_body = indent(2) + python_name(loop.variable) + " = self.layer_idx  # " + source_line(loop.span) + "\n" + layer_body;
    layer_body = shared_attention(layer) + layer_body;
    // A name the blocks read only as an argument a hoisted call no longer takes (emit/hoist.h) isn't passed in.
    for (const std::string& f : free)
      if (!uses_name(layer_body, python_name(f))) std::erase(layer_inputs, python_name(f));
    HfModuleClass& layer_code = plan_.layer;
    layer_code.members = weight_members();
    // A member of only some blocks' layers: created where a block reads its weights.
    for (HfMember& member : layer_code.members) {
      std::set<int64_t> blocks;
      for (const std::string& key : layer.weight_order) {
        const Weight& w = layer.weights.at(key);
        bool mine = member.kind == HfMember::Kind::submodule
                        ? std::any_of(layer.instances.begin(), layer.instances.end(),
                                      [&](const Instance& i) { return i.name == member.attr && i.weights.count(key); })
                        : w.attr == member.attr && w.kind != Weight::Kind::owned;
        if (mine) blocks.insert(blocks_of[key].begin(), blocks_of[key].end());
      }
      member.blocks = blocks_condition(blocks, layers);
    }
    // How many attentions a block runs: counted per block, where an `if` on its index picks one of several.
    std::vector<std::vector<int64_t>> block_windows = attention_windows_per_block(a_, layout);
    int layer_attention = scope_attention_calls();
    if (!block_windows.empty() && layer_attention > 0) {  // none: no attention an engine replaces (one with `bias=`)
      size_t most = 0;
      for (const auto& windows : block_windows) most = std::max(most, windows.size());
      layer_attention = static_cast<int>(most);
    }
    AttentionShape shape = attention_of(layer);
    int64_t heads = shape.heads, kv_heads = shape.kv_heads, head_dim = shape.head_dim, window = shape.window;
    std::map<std::string, std::string> layer_paths = weight_paths();
    std::set<std::string> linears;
    for (const std::string& p : scope_linear_paths()) linears.insert("layers.*." + p);
    layer_code.name = "ShapeScriptDecoderLayer";
    layer_code.doc = "One block: the body of `" + source_line(loop.span) + "`.";
    attention_members(layer, layer_code);
    layer_code.inputs = layer_inputs;
    layer_code.body = layer_body + "        return " + python_name(carried[0]) + "\n";
    if (layer_attention > 1) refuse(where(loop.span) + ": a block calls `scaled_dot_product_attention` more than once; vLLM runs one attention per block");
    out.attention_layers = layer_attention == 1 ? layers : 0;
    if (layer_attention != 1)
      not_servable_ = where(loop.span) + ": " + (layer_attention == 0 ? "its blocks have no `scaled_dot_product_attention(…, attn_mask=causal[n n])` for vLLM to replace"
                                           : "each block calls attention " + std::to_string(layer_attention) + " times, but vLLM runs one attention per block");

    // The base model: before and after the loop.
    Scope base;
    base.kind = ScopeKind::base;
    base.model_var = model_var;
    base.token_embedding = token_embedding;
    base.skip.insert(&output);
    scope_ = &base;
    locals_.clear();
    needed_axes_.clear();
    {
      Weight w;
      w.attr = "embed_tokens";
      w.type = &table_param.type;
      w.kind = Weight::Kind::embedding;
      w.embedding_use = true;
      base.weights[table] = w;
      base.weight_order.push_back(table);
    }
    // The statements from the output layer on compute only the logits (the layout proved it): lm_head's.
    for (size_t i = 0; i <= output_at; ++i)
      if (i != loop_at && statements[i].value) collect(*statements[i].value);
    collect(*output.arguments[0].value);
    settle_weights();
    base.weights.at(table).kind = Weight::Kind::embedding;
    if (!out.tied && base.weights.count(output_weight))
      refuse(where(base.weights.at(output_weight).at) + ": the output layer's `" + model_var + "." + output_weight + "` is used elsewhere in `" + fn.name + "` too; vLLM runs the output layer on its own");
    locals_.insert(ids_var);
    if (!pos_var.empty()) locals_.insert(pos_var);
    anchor_ = Anchor{"inputs_embeds.device", "inputs_embeds.dtype", {model_var}};
    std::string pre;
    for (size_t i = 0; i < loop_at; ++i) pre += statement(statements[i], 2);
    for (const std::string& c : carried) locals_.insert(c);
    std::string prepared;  // what the blocks' calls compute from values no block changes: once, here
    if (layer_loop)
      for (size_t i = 0; i < layer_loop->prepared.size(); ++i) {
        const HoistedLoop::Prepared& p = layer_loop->prepared[i];
        prepared += line(2, loop_prepared_[i] + " = " + version_name(p.callee, true) + "(" + prepared_arguments(*p.call, hoist_.functions[p.callee].invariant) + ")");
      }
    // Pipeline parallelism (vLLM's Transformers backend) runs this forward on every stage, the layers
    // of the other stages replaced by placeholders: a later stage takes the hidden states in as
    // inputs_embeds, and an earlier one hands them on before the work after the blocks.
    const std::string carried_hidden = python_name(carried[0]);
    std::string stage_in = line(2, std::string("if not isinstance(self.layers[0], ShapeScriptDecoderLayer):  # a later pipeline stage: the hidden states come in")) +
                           line(3, carried_hidden + " = inputs_embeds");
    std::string stage_out = line(2, std::string("if not isinstance(self.layers[-1], ShapeScriptDecoderLayer):  # an earlier pipeline stage: hand them on")) +
                            line(3, "return (" + carried_hidden + ",) if return_dict is False else BaseModelOutputWithPast(last_hidden_state=" + carried_hidden + ")");
    std::string call_layers = stage_in + prepared + indent(2) + "# " + source_line(loop.span) + "\n" + indent(2) + "for layer in self.layers:\n" + indent(3) +
                              carried_hidden + " = layer(" + join(layer_inputs) + ", attention_mask=attention_mask, **kwargs)\n" + stage_out;
    std::string post;
    for (size_t i = loop_at + 1; i < output_at; ++i) post += statement(statements[i], 2);
    std::string hidden_states = python_bare(expression(*output.arguments[0].value));
    std::string flush = flush_prelude(2);
    plan_.base_members = weight_members();
    std::map<std::string, std::string> base_paths = weight_paths();
    for (const std::string& p : scope_linear_paths()) linears.insert(p);
    if (!scope_->instances.empty()) refuse(where(fn.name_span) + ": `" + fn.name + "` calls functions with weights outside its blocks; only blocks become layers");

    if (uses_name(pre + post, python_name(ids_var)))
      refuse(where(fn.name_span) + ": `" + fn.name + "` uses the token ids `" + ids_var + "` other than to embed them");

    plan_.base_doc = file_name(a_.file.path()) + ": " + signature_line(fn) + ", up to the output layer: returns the hidden states.";
    plan_.positions = pos_var.empty() ? "" : python_name(pos_var);
    std::vector<std::pair<std::string, const ValueType*>> base_typed = {{"inputs_embeds", &types.parameters[1]}};
    if (!pos_var.empty()) base_typed.push_back({python_name(pos_var), &types.parameters[2]});
    std::string base_body = pre + call_layers + post + flush + indent(2) + "# " + source_line(statements[output_at].span) + "\n" +
                            indent(2) + "hidden_states = " + hidden_states + "\n";
    plan_.base_body = axis_reads(base_typed, base_body, 2) + base_body;

    // What follows the output layer: ShapeScriptForCausalLM computes it on lm_head's logits.
    if (!layout.after_output.empty()) {
      locals_.clear();
      needed_axes_.clear();
      locals_.insert("logits");
      substitutes_[&output] = "logits";
      anchor_ = Anchor{"logits.device", "logits.dtype", {model_var}};
      std::string body;
      for (size_t i = output_at; i < statements.size(); ++i) body += statement(statements[i], 2);
      substitutes_.erase(&output);
      plan_.after_output = flush_prelude(2) + body;
      plan_.after_output_doc = "What `" + fn.name + "` computes from the output layer's logits: " + source_line(statements[output_at].span);
      for (size_t i = output_at + 1; i < statements.size(); ++i) plan_.after_output_doc += "; " + source_line(statements[i].span);
    }

    // Tensors. A path `...gate_up_proj[i]` is part i of a tensor packed from several parameters.
    auto add_tensor = [&](const std::string& key, int64_t layer, const std::string& path) {
      size_t open = path.ends_with("]") ? path.rfind('[') : std::string::npos;
      if (open == std::string::npos) return out.tensors.push_back({key, layer, path, {}});
      std::string packed = path.substr(0, open);
      size_t part = std::stoul(path.substr(open + 1, path.size() - open - 2));
      auto it = std::find_if(out.tensors.begin(), out.tensors.end(), [&](const HfTensor& t) { return t.key == packed && t.layer == layer; });
      if (it == out.tensors.end()) it = out.tensors.insert(out.tensors.end(), HfTensor{"", layer, packed, {}});
      if (it->parts.size() <= part) it->parts.resize(part + 1);
      it->parts[part] = key;
      it->source = it->parts[0];
    };
    for (auto& [key, path] : base_paths) add_tensor(key, -1, "model." + path);
    for (int64_t l = 0; l < layers; ++l)
      for (auto& [key, path] : layer_paths)
        if (auto at = slices.per_block[static_cast<size_t>(l)].find(key); at != slices.per_block[static_cast<size_t>(l)].end())
          add_tensor(key, at->second, "model.layers." + std::to_string(l) + "." + path);
    if (!out.tied) out.tensors.push_back({output_weight, -1, "lm_head.weight", {}});
    if (!layout.output_bias.empty()) out.tensors.push_back({layout.output_bias, -1, "lm_head.bias", {}});
    for (const Item::Param& p : model_->params) {
      bool used = std::any_of(out.tensors.begin(), out.tensors.end(),
                              [&](const HfTensor& t) { return t.source == p.name || std::count(t.parts.begin(), t.parts.end(), p.name); });
      if (!used) refuse(where(p.name_span) + ": `" + model_->name + "." + p.name + "` isn't used by `" + fn.name + "`; a Hugging Face folder holds only the weights its model uses");
    }

    out.heads = heads;
    out.takes_positions = !pos_var.empty();
    if (out.takes_positions && types.parameters[2].tensor.element.bound.constant_value())
      out.max_positions = *types.parameters[2].tensor.element.bound.constant_value();
    if (embedding_vocab != out.vocab && out.tied) refuse(where(output.span) + ": the embedding table and the output layer disagree on the vocabulary");

    // config.json
    int64_t config_heads = heads ? heads : 1;
    int64_t config_head_dim = head_dim ? head_dim : hidden / config_heads;
    out.config = {
        {"model_type", "\"shapescript\""},
        {"architectures", "[\"ShapeScriptForCausalLM\"]"},
        {"auto_map", "{\"AutoConfig\": \"configuration_shapescript.ShapeScriptConfig\", \"AutoModel\": \"modeling_shapescript.ShapeScriptModel\", "
                     "\"AutoModelForCausalLM\": \"modeling_shapescript.ShapeScriptForCausalLM\"}"},
        {"vocab_size", std::to_string(out.vocab)},
        {"hidden_size", std::to_string(hidden)},
        {"num_hidden_layers", std::to_string(layers)},
        {"num_attention_heads", std::to_string(config_heads)},
        {"num_key_value_heads", std::to_string(kv_heads ? kv_heads : config_heads)},
        {"head_dim", std::to_string(config_head_dim)},
        {"max_position_embeddings", std::to_string(out.max_positions ? out.max_positions : 4096)},
        {"tie_word_embeddings", out.tied ? "true" : "false"},
        {"dims", dims_json()},
        {"shapescript_source", quote(file_name(a_.file.path()))},
        {"shapescript_function", quote(fn.name)},
    };

    // A latent attention: the sizes vLLM's MLA layer reads, where one of its kernels caches a latent and
    // shared key part of that size (576: 512 + 64, DeepSeek-V2/V3's); else it caches every head's keys and values.
    out.latent_cache = shape.latent_size + shape.shared_size;
    if (shape.latent_size && shape.latent_size + shape.shared_size == kMlaCacheWidth) {
      // What the cache holds a token and layer: one "head" of the latent and shared part (vLLM sizes its
      // MLA cache by head_dim for a model type it doesn't list as DeepSeek's).
      for (auto& [key, value] : out.config) {
        if (key == "num_key_value_heads") value = "1";
        if (key == "head_dim") value = std::to_string(kMlaCacheWidth);
      }
      out.config.push_back({"kv_lora_rank", std::to_string(shape.latent_size)});
      out.config.push_back({"qk_rope_head_dim", std::to_string(shape.shared_size)});
      out.config.push_back({"qk_nope_head_dim", std::to_string(shape.nope_size)});
      out.config.push_back({"v_head_dim", std::to_string(shape.value_size)});
    }

    // Packed experts: what vLLM's Transformers backend sizes its FusedMoE by (routing stays in the block).
    if (moe_) {
      out.config.push_back({"num_local_experts", std::to_string(moe_->experts)});
      out.config.push_back({"num_experts_per_tok", std::to_string(moe_->top_k)});
      out.config.push_back({"moe_intermediate_size", std::to_string(moe_->features)});
    }

    // What vLLM's logits processor applies after its output layer: a softcap, then a scale.
    if (!logits_processor_lacks(layout))
      for (const OutputOp& op : layout.after_output)
        out.config.push_back({op.kind == OutputOp::Kind::softcap ? "final_logit_softcapping" : "logit_scale", json_real(op.value)});
    if (logits_processor_lacks(layout))
      not_servable_ = where(logits_processor_lacks(layout)->first->span) + ": it computes `" + text(logits_processor_lacks(layout)->first->span) +
                      "` after the output layer, which vLLM can't";

    // Attention's softcap: one for every block in config.json, which vLLM's attention applies.
    if (!attention_softcap_.empty()) {
      out.config.push_back({"attn_logit_softcapping", json_real(std::stod(attention_softcap_))});
      if (uncapped_attention_)
        not_servable_ = "some attention is capped at " + attention_softcap_ + " and some isn't, but vLLM caps every block's at "
                        "config.json's one `attn_logit_softcapping`";
    }

    // A sliding window: what vLLM reads to slide its own attention's, block by block (`layer_types`).
    std::vector<int64_t> windows(static_cast<size_t>(layers), layer_attention == 1 ? window : 0);
    if (layer_attention == 1 && block_windows.size() == windows.size())
      for (size_t l = 0; l < windows.size(); ++l) windows[l] = block_windows[l].empty() ? 0 : block_windows[l][0];
    out.sliding_window = windows.empty() ? 0 : *std::max_element(windows.begin(), windows.end());
    for (int64_t w : windows)
      if (w && w != out.sliding_window)
        refuse(where(loop.span) + ": the blocks slide windows of " + std::to_string(w) + " and " + std::to_string(out.sliding_window) +
               " positions, but a Hugging Face config has one `sliding_window`");
    if (out.sliding_window) {
      std::string layer_types;
      bool mixed = std::find(windows.begin(), windows.end(), 0) != windows.end();
      plan_.layer.window_by_layer = mixed;
      for (HfModuleClass& module : plan_.modules) module.window_by_layer = module.window_by_layer || (mixed && module.sliding_window);
      for (int64_t l = 0; l < layers; ++l)
        layer_types += std::string(l ? ", " : "") + (windows[static_cast<size_t>(l)] ? "\"sliding_attention\"" : "\"full_attention\"");
      out.config.push_back({"sliding_window", std::to_string(out.sliding_window)});
      out.config.push_back({"layer_types", "[" + layer_types + "]"});
    }

    plan_.causal_lm = true;
    plan_.function = fn.name;
    plan_.output_line = source_line(statements[output_at].span);
    plan_.output_bias = !layout.output_bias.empty();
    plan_.tied = out.tied;
    // A key-value cache is sound only when nothing but attention works across positions: what
    // the serving rules (E33xx, run when the caller enables them) prove.
    plan_.cache = why_not_servable().empty();
    // tp plan: the blocks' linears split as core/model/tensor_parallel.cpp proves they may be (heads and
    // feed-forward features across devices); every other nn.Linear, or all when nothing is proven, replicated.
    std::map<std::string, std::string> styles;
    if (auto proven = tensor_parallel_plan(a_, layout)) {
      for (auto& [field, style] : *proven) {
        auto path = layer_paths.find(field);
        std::string module = path != layer_paths.end() && path->second.ends_with(".weight")
                                 ? "layers.*." + path->second.substr(0, path->second.size() - std::string(".weight").size())
                                 : "";
        if (module.empty() || !linears.count(module)) {  // not an nn.Linear here (a biased linear is F.linear): split none
          styles.clear();
          break;
        }
        styles[module] = style;
      }
    }
    for (const std::string& p : linears) plan_.tp_plan.push_back({p, styles.count(p) ? styles[p] : "replicate"});
    write_files(out);
  }

  // The Python condition on `layer_idx` that holds for these blocks of `layers`: empty for all of them.
  static std::string blocks_condition(const std::set<int64_t>& blocks, int64_t layers) {
    if (static_cast<int64_t>(blocks.size()) == layers) return "";
    if (blocks.empty()) return "False";
    int64_t first = *blocks.begin(), last = *blocks.rbegin();
    if (last - first + 1 == static_cast<int64_t>(blocks.size()))  // one run
      return first == last ? "layer_idx == " + std::to_string(first)
                           : std::to_string(first) + " <= layer_idx < " + std::to_string(last + 1);
    std::string listed;
    for (int64_t b : blocks) listed += (listed.empty() ? "" : ", ") + std::to_string(b);
    return "layer_idx in (" + listed + ")";
  }

  // A number for config.json: exact enough to round-trip a float, and a float to Python.
  static std::string json_real(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.17g", value);
    std::string text = buffer;
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return text;
  }

  std::string dims_json() const {
    std::string out;
    for (auto& [name, value] : a_.semantics.dims) out += (out.empty() ? "" : ", ") + quote(name) + ": " + std::to_string(value);
    return "{" + out + "}";
  }

  // The plan's top of the module, from what its code uses, and the files from the plan.
  void write_files(HfModel& out) {
    plan_.source = file_name(a_.file.path());
    std::string code = plan_.layer.scaling + plan_.layer.body + plan_.base_body;
    for (const HfModuleClass& c : plan_.modules) code += c.scaling + c.body;
    for (const std::string& f : plan_.functions) code += f;
    plan_.imports_math = uses_name(code, "math.");
    plan_.defines_mode = uses_name(code, "_ss_mode");
    plan_.imports_einops = uses_einops_;
    plan_.defines_causal = uses_causal_;
    plan_.defines_window = uses_name(code, "_sliding_window_mask");
    plan_.defines_within_window = uses_name(code, "_within_window");
    plan_.defines_experts = uses_name(code, "_experts");
    plan_.defines_attention = uses_name(code, "_attention");
    for (auto& [name, value] : a_.semantics.dims) plan_.dims.push_back({python_name(name), value});
    HfFiles files = emit_hf(plan_);
    out.configuration = std::move(files.configuration);
    out.modeling = std::move(files.modeling);
  }

  // An attention's members of the module that calls it (the one its `scope` is).
  static void attention_members(const Scope& scope, HfModuleClass& code) {
    code.attention = scope.attention_calls > 0;
    code.scaling = scope.scaling;
    code.key_value_groups = scope.attention.kv_heads ? scope.attention.heads / scope.attention.kv_heads : 1;
    code.sliding_window = scope.attention.window;
  }

  // ---------------------------------------------------------------------------------------------
  // Any other function: its compiled module, with the model's parameters on a PreTrainedModel.

  void generic(const Item& fn, const FunctionTypes& types, HfModel& out) {
    GeneratedModule module = generate_python(a_);
    std::string python = module.python;
    std::vector<std::string> inputs;
    for (size_t i = model_ ? 1 : 0; i < fn.parameters.size(); ++i) inputs.push_back(python_name(fn.parameters[i].name));
    for (size_t i = 0; i < types.parameters.size(); ++i)
      if (i > 0 && types.parameters[i].kind == ValueType::Kind::model && i < fn.parameters.size())
        refuse(where(fn.parameters[i].span) + ": `" + fn.name + "` takes a second model");
    plan_.function = fn.name;
    plan_.function_python = python_name(fn.name);
    plan_.module = python;
    plan_.signature = signature_line(fn);
    if (model_)
      for (const Item::Param& p : model_->params) {
        HfMember parameter{HfMember::Kind::parameter, python_name(p.name), {}, "", {}, {}};
        for (const SizeNode& axis : p.type.axes) parameter.axes.push_back(std::to_string(constant(axis, "`" + p.name + "`")));
        plan_.parameters.push_back(parameter);
        out.tensors.push_back({p.name, -1, python_name(p.name), {}});
      }
    plan_.inputs = inputs;
    if (model_) plan_.call_arguments.push_back("self");
    for (const std::string& i : inputs) plan_.call_arguments.push_back(i);
    write_files(out);
    out.config = {
        {"model_type", "\"shapescript\""},
        {"architectures", "[\"ShapeScriptModel\"]"},
        {"auto_map", "{\"AutoConfig\": \"configuration_shapescript.ShapeScriptConfig\", \"AutoModel\": \"modeling_shapescript.ShapeScriptModel\"}"},
        {"dims", dims_json()},
        {"shapescript_source", quote(file_name(a_.file.path()))},
        {"shapescript_function", quote(fn.name)},
    };
    not_servable_ = !model_ ? "`" + fn.name + "` takes no model"
                    : layout_ && !layout_->refusals.empty()
                        ? where(layout_->refusals.front().span) + ": `" + fn.name + "` isn't a language model's forward: " + layout_->refusals.front().rule
                        : "`" + fn.name + "` isn't a language model's forward";
  }

  // ---------------------------------------------------------------------------------------------
  // Statements: PythonWriter's, with these hooks.

  void on_return(const Statement& s) override {
    if (scope_ && scope_->kind == ScopeKind::layer) refuse(where(s.span) + ": `return` inside the loop over blocks");
  }

  bool step_reads(const Expr& e, const std::string& name) const override { return reads_variable(e, name, false); }

  // A latent attention's forward, a statement per piped step: each projection's value is then a fresh
  // tensor, which vLLM's MLA fuser needs to merge the two down-projections into one.
  size_t pipe_steps_from() const override { return scope_ && scope_->latent ? 1 : 2; }

  std::string rearrange_callable() const override { return "_rearrange"; }

  std::string for_statement(const Statement& s, int depth) override {
    bool fixed = s.value && s.end && is_static(*s.value) && is_static(*s.end);
    if (!fixed) refuse(where(s.span) + ": a `for` with a number of iterations known only when it runs");
    std::string start = expression(*s.value), end = expression(*s.end);
    locals_.insert(s.variable);
    std::string range = python_bare(start) == "0" ? python_bare(end) : python_bare(start) + ", " + python_bare(end);
    std::string head = line(depth, "for " + python_name(s.variable) + " in range(" + range + "):");
    return head + (s.body ? block(*s.body, depth + 1) : indent(depth + 1) + "pass\n");
  }

  std::string if_statement(const Statement& s, int depth) override {
    std::string code;
    for (size_t i = 0; i < s.branches.size(); ++i) {
      if (!s.branches[i].first || !is_static(*s.branches[i].first))
        refuse(where(s.span) + ": an `if` on a value known only when it runs (torch.cond) isn't supported in a Hugging Face model yet");
      code += line(depth, std::string(i ? "elif " : "if ") + expression(*s.branches[i].first) + ":");
      code += s.branches[i].second ? block(*s.branches[i].second, depth + 1) : indent(depth + 1) + "pass\n";
    }
    if (s.body) code += indent(depth) + "else:\n" + block(*s.body, depth + 1);
    return code;
  }

  // ---------------------------------------------------------------------------------------------
  // Expressions: PythonWriter's, with these hooks.

  // A weight, where it isn't called as its layer: the parameter itself.
  std::string weight_value(const std::string& key) {
    const Weight& w = scope_->weights.at(key);
    if (w.kind == Weight::Kind::param) return "self." + w.attr;
    return "self." + w.attr + ".weight";
  }

  std::optional<std::string> special_expression(const Expr& e) override {
    if (auto key = weight_key(e)) return weight_value(*key);
    return std::nullopt;
  }

  std::string attribute(const Expr& e) override {
    if (scope_ && (scope_->kind == ScopeKind::base || scope_->kind == ScopeKind::layer) && is_model_field(&e))
      refuse(where(e.span) + ": `" + text(e.span) + "` can't be translated here");
    return PythonWriter::attribute(e);
  }

  std::string as_expression(const Expr& e) override { return expression(*e.operands[0]); }  // the checker proved the shape

  std::string error_expression(const Expr& e) override { refuse(where(e.span) + ": a part that didn't parse"); }

  std::optional<std::string> special_call(const Expr& e) override {
    if (scope_ && &e == scope_->token_embedding) return "inputs_embeds";
    // A function with weights: its module.
    if (scope_)
      if (auto it = scope_->instance_of_call.find(&e); it != scope_->instance_of_call.end()) {
        const Instance& instance = scope_->instances[it->second];
        const HoistedFunction* version = call_version(e);
        std::vector<std::string> args;
        for (size_t i = 0; i < e.arguments.size(); ++i)
          if (!(i < instance.cls->weight_positions.size() && instance.cls->weight_positions[i]) && e.arguments[i].value &&
              !(version && i < version->takes.size() && !version->takes[i]))
            args.push_back(python_bare(expression(*e.arguments[i].value)));
        if (auto prepared = prepared_argument(e)) args.push_back(*prepared);
        args.push_back("attention_mask=attention_mask");
        args.push_back("**kwargs");
        return "self." + instance.name + "(" + join(args) + ")";
      }
    // Packed experts: routed in the module as written, computed by its `experts` (vLLM's FusedMoE there).
    if (scope_)
      if (auto it = scope_->packed_experts.find(&e); it != scope_->packed_experts.end()) {
        plan_.defines_packed_experts = true;
        std::vector<std::string> args;
        for (size_t i = 0; i < 3; ++i) args.push_back(python_bare(expression(*e.arguments[i].value)));
        return "_routed(self.experts, " + join(args) + ")";
      }
    // A norm whose weight is a norm module: the module.
    if (const std::string* key = norm_weight(e); key && scope_->weights.at(*key).kind == Weight::Kind::norm)
      return "self." + scope_->weights.at(*key).attr + "(" + python_bare(expression(*e.arguments[0].value)) + ")";
    // A weight called as its layer.
    if (scope_ && (is_builtin(e, BuiltinRole::linear) || is_builtin(e, BuiltinRole::embedding)) && e.arguments.size() == 2 && e.arguments[1].value)
      if (auto key = weight_key(*e.arguments[1].value)) {
        const Weight& w = scope_->weights.at(*key);
        bool as_layer = is_builtin(e, BuiltinRole::linear) ? w.kind == Weight::Kind::linear : w.kind == Weight::Kind::embedding;
        if (as_layer) return "self." + w.attr + "(" + python_bare(expression(*e.arguments[0].value)) + ")";
      }
    if (engine_attention(e) && scope_ && (scope_->kind == ScopeKind::layer || scope_->kind == ScopeKind::module)) return attention(e);
    return std::nullopt;
  }

  void on_builtin_call(const Expr& e, const CallFacts& facts) override {
    if (facts.builtin->role == BuiltinRole::attention && facts.lowering.count("causal"))
      not_servable_ = where(e.span) + ": attention outside a block can't be replaced by vLLM's";
  }

  std::string function_call(const Expr& e, const Item& item, const std::vector<std::string>& args) override {
    if (item.kind == Item::Kind::extern_fn) {
      if (!is_allowed_extern_target(item.extern_target)) refuse(where(e.span) + ": `" + item.name + "` calls `" + item.extern_target + "`, which the folder can't import");
      return item.extern_target + "(" + join(args) + ")";
    }
    if (auto prepared = prepared_argument(e)) {
      const HoistedFunction& version = *call_version(e);
      plain_function(*version.function, &version, false);
      std::vector<std::string> taken = taken_arguments(args, version.takes);
      taken.push_back(*prepared);
      return version_name(static_cast<size_t>(&version - hoist_.functions.data()), false) + "(" + join(taken) + ")";
    }
    plain_function(item);
    return python_name(item.name) + "(" + join(args) + ")";
  }

  std::string python_call(const Expr& e, const std::vector<std::string>&, const std::map<std::string, std::string>&) override {
    refuse(where(e.span) + ": `" + text(e.span) + "` calls Python; a Hugging Face folder holds only the compiled model");
  }

  // scaled_dot_product_attention(q, k, v, attn_mask=causal[n n]): whichever attention the engine sets.
  std::string attention(const Expr& e) {
    if (e.arguments.size() < 3 || !e.arguments[0].value || !e.arguments[1].value || !e.arguments[2].value)
      refuse(where(e.span) + ": `scaled_dot_product_attention` needs q, k and v");
    const ValueType* q = type_of(*e.arguments[0].value);
    const ValueType* k = type_of(*e.arguments[1].value);
    if (!q || !q->is_tensor() || q->tensor.rank() != 4 || !k || !k->is_tensor() || k->tensor.rank() != 4)
      refuse(where(e.span) + ": attention on tensors other than `[b H n Dh]`; an engine's attention takes heads as the second axis");
    auto heads = q->tensor.axes[1].size.constant_value();
    auto kv_heads = k->tensor.axes[1].size.constant_value();
    auto head_dim = q->tensor.axes[3].size.constant_value();
    if (!heads || !kv_heads || !head_dim) refuse(where(e.span) + ": attention whose heads or head size aren't fixed");
    scope_->attention.heads = *heads;
    scope_->attention.kv_heads = *kv_heads;
    scope_->attention.head_dim = *head_dim;
    std::string scaling = std::to_string(*head_dim) + " ** -0.5";
    for (const Argument& argument : e.arguments)
      if (argument.keyword && *argument.keyword == "scale" && argument.value) {
        if (!is_number(*argument.value)) refuse(where(argument.span) + ": `scale=` must be a number known when the model is built");
        scaling = python_bare(expression(*argument.value));
      }
    scope_->scaling = scaling;
    std::vector<std::string> qkv;
    const char* names[] = {"query", "key", "value"};
    for (int i = 0; i < 3; ++i) {
      std::string value = python_bare(expression(*e.arguments[static_cast<size_t>(i)].value));
      if (value.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") != std::string::npos) {
        prelude_.push_back(std::string(names[i]) + " = " + value);
        value = names[i];
      }
      qkv.push_back(value);
    }
    if (scope_->latent && &e == scope_->latent->attention) {
      // The latent (one head of C) and the shared rotary key part are what is cached; every head's keys
      // and values are expanded from them after, in `expand_kv` (whose call vLLM's MLA layer replaces).
      const LatentAttention& latent = *scope_->latent;
      scope_->attention.latent_size = latent.latent_size;
      scope_->attention.shared_size = latent.shared_size;
      scope_->attention.nope_size = latent.nope_size;
      scope_->attention.value_size = latent.value_size;
      prelude_.push_back("key, value = " + python_atom(expression(*latent.latent)) + ".unsqueeze(1), " + python_name(latent.shared_key));
      prelude_.push_back("if kwargs.get(\"cache\") is not None:  # generate(): add the latents of earlier tokens");
      prelude_.push_back("    key, value = kwargs[\"cache\"].update(key, value, self.layer_idx)");
      prelude_.push_back("key, value = self.expand_kv(key, value)");
    } else {
      prelude_.push_back("key, value = " + qkv[1] + ", " + qkv[2]);
      prelude_.push_back("if kwargs.get(\"cache\") is not None:  # generate(): add the keys and values of earlier tokens");
      prelude_.push_back("    key, value = kwargs[\"cache\"].update(key, value, self.layer_idx)");
    }
    std::string mask = "attention_mask";
    if (auto facts = a_.semantics.calls.find(&e); facts && facts->lowering.count("window")) {
      scope_->attention.window = std::stoll(facts->lowering.at("window"));
      prelude_.push_back("window_mask = _sliding_window_mask(self, " + qkv[0] + ", key)");
      mask = "window_mask";
    }
    // softcap=: config.json's attn_logit_softcapping, which vLLM applies to every block's attention.
    std::string options;
    if (const Argument* softcap = has_keyword(e, "softcap")) {
      if (!is_number(*softcap->value)) refuse(where(softcap->span) + ": `softcap=` must be a number known when the model is built");
      std::string cap = python_bare(expression(*softcap->value));
      char* end = nullptr;
      bool plain = !cap.empty() && (std::strtod(cap.c_str(), &end), end == cap.c_str() + cap.size());
      if (!plain)
        not_servable_ = where(softcap->span) + ": vLLM reads the attention's softcap from config.json, which needs it written as a number";
      else if (!attention_softcap_.empty() && attention_softcap_ != cap)
        not_servable_ = where(softcap->span) + ": attention capped at " + cap + " here and at " + attention_softcap_ +
                        " elsewhere, but vLLM caps every block's at config.json's one `attn_logit_softcapping`";
      if (attention_softcap_.empty() && plain) attention_softcap_ = cap;
      options += ", softcap=" + cap;
      plan_.supports_sdpa = false;
    } else {
      uncapped_attention_ = true;
    }
    // sinks=: vLLM's backend finds them as `s_aux=self.<parameter>` in the call, and loads that parameter.
    std::string sinks_value;
    if (const Argument* sinks = has_keyword(e, "sinks")) {
      std::string value = python_bare(expression(*sinks->value));
      sinks_value = value;
      if (!value.starts_with("self.") || value.find_first_of("[(. ", 5) != std::string::npos)
        not_servable_ = where(sinks->span) + ": vLLM finds attention sinks only as a parameter of the attention's module, "
                                             "`sinks=` given a block's own slice such as `m.sinks[l]`";
      plan_.supports_sdpa = false;
    }
    if (scope_->attention_calls > 1) {
      scope_->shared_sinks.insert(sinks_value);  // passed by `attend`'s one call
      prelude_.push_back("attn_output, _ = attend(" + qkv[0] + ", key, value, " + mask + options + ")");
      return "_heads_first(attn_output, " + qkv[0] + ")";
    }
    if (!sinks_value.empty()) options += ", s_aux=" + sinks_value;
    prelude_.push_back("attention_interface = ALL_ATTENTION_FUNCTIONS.get_interface(self.config._attn_implementation, eager_attention_forward)");
    prelude_.push_back("attn_output, _ = attention_interface(self, " + qkv[0] + ", key, value, " + mask +
                       ", dropout=0.0, scaling=self.scaling" + options + ", **kwargs)");
    return "_heads_first(attn_output, " + qkv[0] + ")";
  }

  // `expand_kv(self, cached_latent, r)`: a latent attention's statements that compute its keys and values
  // from the latent z and the shared key part r, run on the cached ones ([b 1 m C], [b 1 m Dr]). vLLM's MLA
  // fuser finds it as the method of two arguments that applies the expansion and returns keys and values.
  std::string expansion_method(const Item& fn, const LatentAttention& latent) {
    const Expr& k = *latent.attention->arguments[1].value;
    const Expr& v = *latent.attention->arguments[2].value;
    std::string shared = python_name(latent.shared_key);
    substitutes_[latent.latent] = "_latent";
    std::string body;
    for (size_t i : latent.expanding) body += statement(fn.body->statements[i], 2);
    substitutes_.erase(latent.latent);
    body += indent(2) + "return " + python_name(k.text) + ", " + python_name(v.text) + "\n";
    std::vector<std::pair<std::string, const ValueType*>> typed = {{"_latent", type_of(*latent.latent)}, {shared, type_of(*latent.shared_read)}};
    return "\n" + indent(1) + "def expand_kv(self, cached_latent, " + shared + "):\n" +
           indent(2) + "# every head's keys and values from the cached latent [b 1 m C] and shared key part [b 1 m Dr]\n" +
           indent(2) + "_latent = cached_latent[:, 0]\n" + axis_reads(typed, body, 2) + body;
  }

  // Several attention calls in one forward (one per branch of an `if` on the block's index) call the
  // interface through one local function: vLLM 0.32's backend finds a block's attention only in a
  // forward that calls it once (fusers/attention.py), and reads `s_aux=self.<sinks>` from that call.
  std::string shared_attention(const Scope& scope) {
    if (scope.shared_sinks.empty()) return "";
    if (scope.shared_sinks.size() > 1) refuse("a block's attentions take different `sinks=`; a block's attention has one parameter of sinks");
    std::string sinks = *scope.shared_sinks.begin();
    std::string passed = "softcap=softcap" + (sinks.empty() ? "" : ", s_aux=" + sinks);
    return indent(2) + "attention_interface = ALL_ATTENTION_FUNCTIONS.get_interface(self.config._attn_implementation, eager_attention_forward)\n\n" +
           indent(2) + "def attend(query, key, value, mask, softcap=None):  # the block's one call of the attention interface, whichever it runs\n" +
           indent(3) + "return attention_interface(self, query, key, value, mask, dropout=0.0, scaling=self.scaling, " + passed + ", **kwargs)\n\n";
  }

  // ---------------------------------------------------------------------------------------------
  // Layer-invariant work

  std::string version_name(size_t v, bool prepare) const {
    return std::string(prepare ? "_prepare_" : "_hoisted_") + python_name(hoist_.functions[v].function->name) + "_" + std::to_string(v + 1);
  }

  // The version a call runs: one whose invariant work was prepared before the loop; else null.
  const HoistedFunction* call_version(const Expr& e) const {
    if (loop_)
      if (auto p = loop_->prepared_of.find(&e); p != loop_->prepared_of.end()) return &hoist_.functions[loop_->prepared[p->second].callee];
    if (version_)
      if (auto slot = version_->slot_of.find(&e); slot != version_->slot_of.end() && !version_->slots[slot->second].value)
        return &hoist_.functions[version_->slots[slot->second].callee];
    return nullptr;
  }

  // What such a call is given besides its arguments: its prepared values.
  std::optional<std::string> prepared_argument(const Expr& e) const {
    if (loop_)
      if (auto p = loop_->prepared_of.find(&e); p != loop_->prepared_of.end()) return loop_prepared_[p->second];
    if (version_)
      if (auto slot = version_->slot_of.find(&e); slot != version_->slot_of.end() && !version_->slots[slot->second].value)
        return "_prepared[" + std::to_string(slot->second) + "]";
    return std::nullopt;
  }


  // `fn`'s body, or its version's: without what was prepared, reading it from `_prepared`.
  std::string version_body(const Item& fn, const HoistedFunction* version, int depth) {
    std::set<const Statement*> expanding;  // a latent attention's keys and values: computed in `expand_kv`
    if (scope_ && scope_->latent)
      for (size_t i : scope_->latent->expanding) expanding.insert(&fn.body->statements[i]);
    // Restored after: a function this body calls is written while it is (`_hoisted_rope_1` on first use).
    std::set<const Statement*> outer_skipped = skipped_;
    if (!version) {
      skipped_ = expanding;
      std::string body = block(*fn.body, depth);
      skipped_ = outer_skipped;
      return body;
    }
    const HoistedFunction* saved = version_;
    version_ = version;
    for (auto& [e, slot] : version->slot_of)
      if (version->slots[slot].value) substitutes_[e] = "_prepared[" + std::to_string(slot) + "]";
    skipped_ = version->statements;
    skipped_.insert(expanding.begin(), expanding.end());
    std::string body = block(*fn.body, depth);
    skipped_ = outer_skipped;
    for (auto& [e, slot] : version->slot_of) substitutes_.erase(e);
    version_ = saved;
    return body;
  }

  // `_prepare_f_N`: what version N of `f` computes once, as a plain function of its invariant parameters.
  void prepare_function(const HoistedFunction& version) { plain_function(*version.function, &version, true); }

  // A function without weights: a plain Python function, as the pt2 code generator writes it. With
  // a version: its `_hoisted_` function, or with `prepare`, its `_prepare_` function.
  void plain_function(const Item& fn, const HoistedFunction* version = nullptr, bool prepare = false) {
    size_t v = version ? static_cast<size_t>(version - hoist_.functions.data()) : 0;
    std::string name = version ? version_name(v, prepare) : python_name(fn.name);
    if (version ? versions_done_.count(name) : plain_done_.count(&fn)) return;
    if (version) versions_done_.insert(name);
    else plain_done_.insert(&fn);
    // A `_prepare_` version takes the invariant parameters, a `_hoisted_` one those it still reads.
    auto kept = [&](size_t i) {
      if (!version) return true;
      const std::vector<bool>& mask = prepare ? version->invariant : version->takes;
      return i < mask.size() && mask[i];
    };
    Scope scope;
    scope.kind = ScopeKind::plain;
    Scope* saved_scope = scope_;
    auto saved_locals = locals_;
    auto saved_axes = needed_axes_;
    auto saved_prelude = prelude_;
    prelude_.clear();
    scope_ = &scope;
    locals_.clear();
    needed_axes_.clear();
    std::vector<std::string> parameters;
    std::vector<std::pair<std::string, const ValueType*>> typed;
    auto types = a_.semantics.functions.find(&fn);
    for (size_t i = 0; i < fn.parameters.size(); ++i) {
      if (!kept(i)) continue;
      parameters.push_back(python_name(fn.parameters[i].name));
      locals_.insert(fn.parameters[i].name);
      if (types != a_.semantics.functions.end() && i < types->second->parameters.size())
        typed.push_back({python_name(fn.parameters[i].name), &types->second->parameters[i]});
    }
    if (version && !prepare) parameters.push_back("_prepared");
    Anchor saved_anchor = anchor_;
    anchor_ = anchor_of(typed);
    const HoistedFunction* saved_version = version_;
    const HoistedLoop* saved_loop = loop_;
    loop_ = nullptr;
    std::string body;
    if (!fn.body) {
      body = "    pass\n";
    } else if (prepare) {
      version_ = nullptr;
      for (const Statement& s : fn.body->statements)
        if (version->statements.count(&s)) body += statement(s, 1);
      std::vector<std::string> values;
      for (const HoistedFunction::Slot& slot : version->slots) {
        if (slot.value) {
          values.push_back(python_bare(expression(*slot.value)));
          continue;
        }
        prepare_function(hoist_.functions[slot.callee]);
        values.push_back(version_name(slot.callee, true) + "(" + prepared_arguments(*slot.call, hoist_.functions[slot.callee].invariant) + ")");
      }
      body += line(1, "return (" + join(values) + (values.size() == 1 ? ",)" : ")"));
    } else {
      body = version_body(fn, version, 1);
    }
    version_ = saved_version;
    loop_ = saved_loop;
    anchor_ = saved_anchor;
    std::string doc = file_name(a_.file.path()) + ": " + signature_line(fn);
    if (version)
      doc = file_name(a_.file.path()) + ": `" + fn.name + "`" +
            (prepare ? ", what reads only the arguments a loop doesn't change, computed once before it"
                     : " in a loop, with what reads only the arguments the loop doesn't change computed once (`_prepared`)");
    std::string code = "def " + name + "(" + join(parameters) + "):\n    " + docstring(doc, 1) + "\n" + axis_reads(typed, body, 1) + body;
    plan_.functions.push_back(code);
    scope_ = saved_scope;
    locals_ = saved_locals;
    needed_axes_ = saved_axes;
    prelude_ = saved_prelude;
  }
};

}  // namespace

HfModel generate_hf(const Analysis& analysis, const ModelLayout& layout) { return HfGenerator(analysis).run(layout); }

}  // namespace ss
