#include "codegen_hf.h"
#include "tensor_parallel.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>

#include "builtins.h"
#include "codegen.h"
#include "python_writer.h"

namespace ss {

namespace {

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
  enum class Kind { param, linear, embedding, owned };
  Kind kind = Kind::param;
  std::string attr;
  const TypeNode* type = nullptr;  // as declared
  size_t skip_axes = 0;            // a stacked parameter's blocks axis
  bool linear_use = false, embedding_use = false, other_use = false;
  int owners = 0;
};

struct ClassInfo {
  std::string name;
  const Item* function = nullptr;
  std::vector<bool> weight_positions;                  // which of the function's parameters are weights
  std::map<std::string, std::string> weight_paths;     // weight parameter → its path under the class ("w_qkv.weight")
  int attention_calls = 0;                             // including its submodules'
  std::set<std::string> linear_paths;                  // its nn.Linear submodules, by path
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
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
  const Expr* token_embedding = nullptr;
  std::set<const Expr*> skip;  // not walked (the output layer)
  int attention_calls = 0;
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  std::string scaling;
};

class HfGenerator : public PythonWriter {
 public:
  explicit HfGenerator(const Analysis& analysis) : PythonWriter(analysis) {}

  HfModel run(const std::string& function_name) {
    HfModel out;
    out.function = function_name;
    const Item* fn = nullptr;
    for (const Item& item : a_.program.items)
      if (item.kind == Item::Kind::function && item.name == function_name) fn = &item;
    if (!fn) {
      out.error = "`" + file_name(a_.file.path()) + "` has no `fn " + function_name + "`";
      return out;
    }
    try {
      auto types = a_.semantics.functions.find(fn);
      if (types == a_.semantics.functions.end()) refuse("`" + fn->name + "` has no checked signature");
      if (!types->second.parameters.empty() && types->second.parameters[0].kind == ValueType::Kind::model)
        model_ = a_.find_item(types->second.parameters[0].name);
      if (model_)
        for (const Item::Param& p : model_->params) {
          HfParameter parameter{p.name, {}};
          for (const SizeNode& axis : p.type.axes) parameter.shape.push_back(constant(axis, "`" + p.name + "`'s shape"));
          out.parameters.push_back(parameter);
        }
      out.model_name = model_ ? model_->name : "";
      if (model_ && is_language_model(*fn, types->second)) language_model(*fn, types->second, out);
      else generic(*fn, types->second, out);
    } catch (const Unsupported& u) {
      out.error = u.what;
    }
    return out;
  }

 private:
  const Item* model_ = nullptr;
  Scope* scope_ = nullptr;
  std::map<const Item*, std::unique_ptr<ClassInfo>> classes_;
  std::vector<std::string> class_code_;  // in dependency order
  std::vector<const Item*> plain_queue_;
  std::set<const Item*> plain_done_;
  std::string not_servable_;

  // ---------------------------------------------------------------------------------------------
  // Facts

  bool is_builtin(const Expr& e, std::string_view name) const {
    const CallFacts* f = e.kind == Expr::Kind::call ? facts_of(e) : nullptr;
    return f && f->builtin && f->builtin->name == name;
  }
  bool engine_attention(const Expr& e) const {
    const CallFacts* f = e.kind == Expr::Kind::call ? facts_of(e) : nullptr;
    return f && f->builtin && f->builtin->name == "scaled_dot_product_attention" && f->lowering.count("causal");
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
    switch (node.kind) {
      case SizeNode::Kind::number: return node.number;
      case SizeNode::Kind::name:
      case SizeNode::Kind::scaled: {
        auto dim = a_.semantics.dims.find(node.name);
        if (dim == a_.semantics.dims.end()) refuse(what + " has the generic axis `" + node.name + "`; a Hugging Face model's weights need fixed sizes");
        return node.kind == SizeNode::Kind::scaled ? node.number * dim->second : dim->second;
      }
      case SizeNode::Kind::group: {
        int64_t product = 1;
        for (const SizeNode& c : node.children) product *= constant(c, what);
        return product;
      }
      case SizeNode::Kind::binary: {
        if (node.children.size() != 2) break;
        int64_t l = constant(node.children[0], what), r = constant(node.children[1], what);
        switch (node.op) {
          case '*': return l * r;
          case '/': return r ? l / r : 0;
          case '+': return l + r;
          case '-': return l - r;
        }
        break;
      }
      default: break;
    }
    refuse(what + " has a size that isn't fixed");
  }

  static void walk_block(const Block& block, const std::function<void(const Expr&)>& visit) {
    for (const Statement& s : block.statements) {
      if (s.value) visit(*s.value);
      if (s.end) visit(*s.end);
      for (auto& [condition, body] : s.branches) {
        if (condition) visit(*condition);
        if (body) walk_block(*body, visit);
      }
      if (s.body) walk_block(*s.body, visit);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The language model's shape: forward(m, ids[, pos]) embeds, loops over blocks, returns linear(h, m.W).

  bool is_model_field(const Expr* e, const std::string& model_var) const {
    return e && e->kind == Expr::Kind::attribute && !e->operands.empty() && e->operands[0] && e->operands[0]->kind == Expr::Kind::name &&
           e->operands[0]->text == model_var;
  }

  bool is_language_model(const Item& fn, const FunctionTypes& types) const {
    if (types.parameters.size() < 2 || types.parameters.size() > 3 || !fn.body || fn.body->statements.empty()) return false;
    const ValueType& ids = types.parameters[1];
    if (!ids.is_tensor() || ids.tensor.rank() != 2 || ids.tensor.element.kind != ElementKind::index) return false;
    const Statement& last = fn.body->statements.back();
    if (last.kind != Statement::Kind::return_ || !last.value || !is_builtin(*last.value, "linear") || last.value->arguments.size() != 2) return false;
    return is_model_field(last.value->arguments[1].value.get(), fn.parameters[0].name);
  }

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
        if (is_model_field(&e, scope_->model_var)) return e.text;
        return std::nullopt;
      case ScopeKind::layer:
        if (e.kind == Expr::Kind::subscript && is_model_field(e.operands[0].get(), scope_->model_var) && e.index.size() == 1 &&
            e.index[0].kind == SizeNode::Kind::name && e.index[0].name == scope_->loop_var)
          return e.operands[0]->text;
        if (is_model_field(&e, scope_->model_var))
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
    if (scope_->skip.count(&e)) return;
    if (auto key = weight_key(e)) {
      weight(*key, e.span).other_use = true;
      return;
    }
    if ((scope_->kind == ScopeKind::base || scope_->kind == ScopeKind::layer) && e.kind == Expr::Kind::name && e.text == scope_->model_var)
      refuse(where(e.span) + ": the model `" + e.text + "` is passed on whole; pass its parameters instead (`" + e.text + ".W`)");
    if (e.kind == Expr::Kind::call) {
      if (&e == scope_->token_embedding) return;
      if ((is_builtin(e, "linear") || is_builtin(e, "embedding")) && e.arguments.size() == 2 && e.arguments[1].value)
        if (auto key = weight_key(*e.arguments[1].value)) {
          Weight& w = weight(*key, e.span);
          (is_builtin(e, "linear") ? w.linear_use : w.embedding_use) = true;
          collect(*e.arguments[0].value);
          return;
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
          ClassInfo* cls = module_class(*callee, positions, e.span);
          Instance instance;
          instance.cls = cls;
          std::string name = python_name(callee->name);
          int count = 1;
          for (const Instance& other : scope_->instances)
            if (other.cls == cls) ++count;
          instance.name = count == 1 ? name : name + "_" + std::to_string(count);
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
          return;
        }
      }
      if (engine_attention(e)) {
        if (scope_->kind == ScopeKind::base)
          refuse(where(e.span) + ": attention outside the loop over blocks; vLLM's attention layers are one per block");
        if (scope_->kind == ScopeKind::layer || scope_->kind == ScopeKind::module) ++scope_->attention_calls;
      }
    }
    for (const ExprPtr& o : e.operands)
      if (o) collect(*o);
    for (const Argument& a : e.arguments)
      if (a.value) collect(*a.value);
  }

  bool contains_attention(const Item& fn) const {
    bool found = false;
    if (fn.body) walk_block(*fn.body, [&](const Expr& e) {
        std::function<void(const Expr&)> walk = [&](const Expr& x) {
          if (engine_attention(x)) found = true;
          for (const ExprPtr& o : x.operands)
            if (o) walk(*o);
          for (const Argument& a : x.arguments)
            if (a.value) walk(*a.value);
        };
        walk(e);
      });
    return found;
  }

  // Decides each weight's kind once pass 1 has seen every use.
  void settle_weights() {
    for (const std::string& key : scope_->weight_order) {
      Weight& w = scope_->weights.at(key);
      size_t rank = w.type ? w.type->axes.size() - w.skip_axes : 0;
      if (w.owners > 0) {
        if (w.owners > 1 || w.linear_use || w.embedding_use || w.other_use)
          refuse("`" + key + "` is used in more than one place of " + scope_description() +
                 "; a Hugging Face layer owns each of its weights, so give each use its own parameter");
        w.kind = Weight::Kind::owned;
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

  // The weights' and submodules' lines of a class's __init__.
  std::string weight_init(int depth) {
    std::string out;
    for (const std::string& key : scope_->weight_order) {
      const Weight& w = scope_->weights.at(key);
      if (w.kind == Weight::Kind::owned || w.attr == "embed_tokens") continue;
      std::vector<std::string> axes;
      for (size_t i = w.skip_axes; i < w.type->axes.size(); ++i) {
        constant(w.type->axes[i], "`" + key + "`");
        axes.push_back(python_bare(size_node(w.type->axes[i])));
      }
      std::string made;
      if (w.kind == Weight::Kind::linear) made = "nn.Linear(" + axes[1] + ", " + axes[0] + ", bias=False)";
      else if (w.kind == Weight::Kind::embedding) made = "nn.Embedding(" + axes[0] + ", " + axes[1] + ")";
      else made = "nn.Parameter(torch.empty(" + join(axes) + "))";
      out += indent(depth) + "self." + w.attr + " = " + made + "\n";
    }
    for (const Instance& instance : scope_->instances)
      out += indent(depth) + "self." + instance.name + " = " + instance.cls->name + "(config, layer_idx)\n";
    return out;
  }

  // Where each weight of the scope lives, relative to the scope's module.
  std::map<std::string, std::string> weight_paths() const {
    std::map<std::string, std::string> out;
    for (auto& [key, w] : scope_->weights) {
      if (w.kind == Weight::Kind::owned) continue;
      out[key] = w.attr + (w.kind == Weight::Kind::param ? "" : ".weight");
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

  ClassInfo* module_class(const Item& fn, const std::vector<bool>& positions, Span call) {
    auto found = classes_.find(&fn);
    if (found != classes_.end()) {
      if (found->second->weight_positions != positions)
        refuse(where(call) + ": `" + fn.name + "` is called with weights in different places than before");
      if (found->second->name.empty()) refuse("`" + fn.name + "` calls itself");
      return found->second.get();
    }
    auto info = std::make_unique<ClassInfo>();
    ClassInfo* cls = info.get();
    classes_[&fn] = std::move(info);
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
    if (fn.body) walk_block(*fn.body, [&](const Expr& e) { collect(e); });
    settle_weights();
    std::string name = camel(fn.name);
    for (auto& [item, other] : classes_)
      if (other.get() != cls && other->name == name) name += "Module";
    if (name == "ShapeScriptModel" || name == "ShapeScriptDecoderLayer") name += "Block";
    std::vector<std::string> inputs;
    std::vector<std::pair<std::string, const ValueType*>> typed;
    for (size_t i = 0; i < fn.parameters.size(); ++i)
      if (!(i < positions.size() && positions[i])) {
        inputs.push_back(python_name(fn.parameters[i].name));
        locals_.insert(fn.parameters[i].name);
        if (types != a_.semantics.functions.end() && i < types->second.parameters.size())
          typed.push_back({python_name(fn.parameters[i].name), &types->second.parameters[i]});
      }
    std::string body = fn.body ? block(*fn.body, 2) : "        pass\n";
    std::string init = weight_init(2);
    int calls = scope_attention_calls();
    if (scope.attention_calls > 1)
      refuse("`" + fn.name + "` calls `scaled_dot_product_attention` more than once; vLLM needs one attention call per attention module");
    std::ostringstream out;
    out << "class " << name << "(nn.Module):\n";
    out << "    \"\"\"" << file_name(a_.file.path()) << ": " << signature_line(fn) << "\"\"\"\n\n";
    out << "    def __init__(self, config, layer_idx):\n        super().__init__()\n";
    out << "        self.config = config\n        self.layer_idx = layer_idx\n";
    if (scope.attention_calls) {
      out << "        self.is_causal = True\n";
      out << "        self.scaling = " << scope.scaling << "\n";
      int64_t groups = scope.kv_heads ? scope.heads / scope.kv_heads : 1;
      out << "        self.num_key_value_groups = " << groups << "\n";
    }
    out << init;
    out << "\n    def forward(self" << (inputs.empty() ? "" : ", " + join(inputs)) << ", attention_mask=None, **kwargs):\n";
    out << axis_reads(typed, body, 2);
    out << body;
    cls->name = name;
    cls->weight_paths.clear();
    for (auto& [key, path] : weight_paths()) cls->weight_paths[key] = path;
    cls->attention_calls = calls;
    cls->linear_paths = scope_linear_paths();
    cls->heads = scope.heads;
    cls->kv_heads = scope.kv_heads;
    cls->head_dim = scope.head_dim;
    for (const Instance& instance : scope.instances)
      if (instance.cls->heads && !cls->heads) {
        cls->heads = instance.cls->heads;
        cls->kv_heads = instance.cls->kv_heads;
        cls->head_dim = instance.cls->head_dim;
      }
    class_code_.push_back(out.str());
    scope_ = saved_scope;
    locals_ = saved_locals;
    needed_axes_ = saved_axes;
    return cls;
  }

  // ---------------------------------------------------------------------------------------------
  // The language model

  void language_model(const Item& fn, const FunctionTypes& types, HfModel& out) {
    out.causal_lm = true;
    const std::string model_var = fn.parameters[0].name;
    const std::string ids_var = fn.parameters[1].name;
    const std::string pos_var = fn.parameters.size() == 3 ? fn.parameters[2].name : "";
    const std::vector<Statement>& statements = fn.body->statements;
    // The loop over blocks: the one top-level `for`.
    size_t loop_at = statements.size();
    for (size_t i = 0; i < statements.size(); ++i)
      if (statements[i].kind == Statement::Kind::for_) {
        if (loop_at != statements.size())
          refuse(where(statements[i].span) + ": a second `for` in `" + fn.name + "`; a language model's forward loops over its blocks once");
        loop_at = i;
      }
    if (loop_at == statements.size())
      refuse("`" + fn.name + "` has no `for` over blocks; write the blocks as `for l in 0..L:` with parameters stacked along `L`");
    const Statement& loop = statements[loop_at];
    auto bound = [&](const Expr* e) -> int64_t {
      const ValueType* t = e ? type_of(*e) : nullptr;
      if (e && e->kind == Expr::Kind::number && e->is_integer) return static_cast<int64_t>(e->number);
      if (t && t->known_size && t->known_size->constant_value()) return *t->known_size->constant_value();
      refuse(where(loop.span) + ": the loop over blocks must have a fixed number of iterations, such as `0..L`");
    };
    if (bound(loop.value.get()) != 0) refuse(where(loop.span) + ": the loop over blocks must start at 0");
    int64_t layers = bound(loop.end.get());
    for (size_t i = loop_at + 1; i + 1 < statements.size(); ++i)
      if (statements[i].kind == Statement::Kind::for_ || statements[i].kind == Statement::Kind::return_)
        refuse(where(statements[i].span) + ": `" + fn.name + "` must end by returning the output layer after its blocks");

    // The token embedding: embedding(ids, m.E) before the loop.
    const Expr* token_embedding = nullptr;
    for (size_t i = 0; i < loop_at && !token_embedding; ++i)
      if (statements[i].value) {
        std::function<void(const Expr&)> find = [&](const Expr& e) {
          if (token_embedding) return;
          if (is_builtin(e, "embedding") && e.arguments.size() == 2 && e.arguments[0].value && e.arguments[0].value->kind == Expr::Kind::name &&
              e.arguments[0].value->text == ids_var && is_model_field(e.arguments[1].value.get(), model_var)) {
            token_embedding = &e;
            return;
          }
          for (const ExprPtr& o : e.operands)
            if (o) find(*o);
          for (const Argument& a : e.arguments)
            if (a.value) find(*a.value);
        };
        find(*statements[i].value);
      }
    if (!token_embedding)
      refuse("`" + fn.name + "` doesn't embed `" + ids_var + "` with `embedding(" + ids_var + ", " + model_var + ".W)` before its blocks");
    std::string table = token_embedding->arguments[1].value->text;
    const Expr& output = *statements.back().value;
    std::string output_weight = output.arguments[1].value->text;
    out.tied = output_weight == table;
    const Item::Param& table_param = model_param(table);
    const Item::Param& output_param = model_param(output_weight);
    if (table_param.type.axes.size() != 2 || output_param.type.axes.size() != 2)
      refuse("the embedding table `" + table + "` and the output layer `" + output_weight + "` must be matrices");
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
      walk_block(*loop.body, [&](const Expr& e) {
        std::function<void(const Expr&)> find = [&](const Expr& x) {
          if (x.kind == Expr::Kind::name && before.count(x.text) && x.text != carried[0] && x.text != model_var &&
              std::find(free.begin(), free.end(), x.text) == free.end() &&
              std::find(assigned.begin(), assigned.end(), x.text) == assigned.end())
            free.push_back(x.text);
          for (const ExprPtr& o : x.operands)
            if (o) find(*o);
          for (const Argument& a : x.arguments)
            if (a.value) find(*a.value);
        };
        find(e);
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
    if (loop.body) walk_block(*loop.body, [&](const Expr& e) { collect(e); });
    settle_weights();
    for (auto& [key, w] : layer.weights) {
      int64_t stacked = constant(w.type->axes[0], "`" + key + "`");
      if (stacked != layers)
        refuse("`" + key + "` is indexed by the block but its first axis is " + std::to_string(stacked) + ", not the " +
               std::to_string(layers) + " blocks");
    }
    std::vector<std::string> layer_inputs = {python_name(carried[0])};
    std::vector<std::pair<std::string, const ValueType*>> typed;
    locals_.insert(carried[0]);
    locals_.insert(loop.variable);
    for (const std::string& f : free) {
      layer_inputs.push_back(python_name(f));
      locals_.insert(f);
    }
    std::string layer_body = loop.body ? block(*loop.body, 2) : "";
    if (uses_name(layer_body, python_name(loop.variable)))
      refuse(where(loop.span) + ": the blocks use `" + loop.variable + "` other than to index stacked parameters");
    std::string layer_init = weight_init(2);
    int layer_attention = scope_attention_calls();
    int64_t heads = layer.heads, kv_heads = layer.kv_heads, head_dim = layer.head_dim;
    for (const Instance& instance : layer.instances)
      if (!heads && instance.cls->heads) {
        heads = instance.cls->heads;
        kv_heads = instance.cls->kv_heads;
        head_dim = instance.cls->head_dim;
      }
    std::map<std::string, std::string> layer_paths = weight_paths();
    std::set<std::string> linears;
    for (const std::string& p : scope_linear_paths()) linears.insert("layers.*." + p);
    std::ostringstream layer_code;
    layer_code << "class ShapeScriptDecoderLayer(nn.Module):\n";
    layer_code << "    \"\"\"One block: the body of `" << source_line(loop.span) << "`.\"\"\"\n\n";
    layer_code << "    def __init__(self, config, layer_idx):\n        super().__init__()\n";
    layer_code << "        self.config = config\n        self.layer_idx = layer_idx\n";
    if (layer.attention_calls) {
      layer_code << "        self.is_causal = True\n        self.scaling = " << layer.scaling << "\n";
      layer_code << "        self.num_key_value_groups = " << (layer.kv_heads ? layer.heads / layer.kv_heads : 1) << "\n";
    }
    layer_code << layer_init;
    layer_code << "\n    def forward(self, " << join(layer_inputs) << ", attention_mask=None, **kwargs):\n";
    layer_code << layer_body << "        return " << python_name(carried[0]) << "\n";
    if (layer.attention_calls > 1) refuse("a block calls `scaled_dot_product_attention` more than once; vLLM runs one attention per block");
    out.attention_layers = layer_attention == 1 ? layers : 0;
    if (layer_attention != 1)
      not_servable_ = layer_attention == 0 ? "its blocks have no `scaled_dot_product_attention(…, attn_mask=causal[n n])` for vLLM to replace"
                                           : "each block calls attention " + std::to_string(layer_attention) + " times, but vLLM runs one attention per block";

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
    for (size_t i = 0; i < statements.size(); ++i)
      if (i != loop_at && statements[i].value) collect(*statements[i].value);
    collect(*output.arguments[0].value);
    settle_weights();
    base.weights.at(table).kind = Weight::Kind::embedding;
    if (!out.tied && base.weights.count(output_weight))
      refuse("the output layer's `" + model_var + "." + output_weight + "` is used elsewhere in `" + fn.name + "` too; vLLM runs the output layer on its own");
    locals_.insert(ids_var);
    if (!pos_var.empty()) locals_.insert(pos_var);
    std::string pre;
    for (size_t i = 0; i < loop_at; ++i) pre += statement(statements[i], 2);
    for (const std::string& c : carried) locals_.insert(c);
    std::string call_layers = indent(2) + "# " + source_line(loop.span) + "\n" + indent(2) + "for layer in self.layers:\n" + indent(3) +
                              python_name(carried[0]) + " = layer(" + join(layer_inputs) + ", attention_mask=attention_mask, **kwargs)\n";
    std::string post;
    for (size_t i = loop_at + 1; i + 1 < statements.size(); ++i) post += statement(statements[i], 2);
    std::string hidden_states = python_bare(expression(*output.arguments[0].value));
    std::string flush = flush_prelude(2);
    std::string base_init = weight_init(2);
    std::map<std::string, std::string> base_paths = weight_paths();
    for (const std::string& p : scope_linear_paths()) linears.insert(p);
    if (!scope_->instances.empty()) refuse("`" + fn.name + "` calls functions with weights outside its blocks; only blocks become layers");

    if (uses_name(pre + post, python_name(ids_var)))
      refuse("`" + fn.name + "` uses the token ids `" + ids_var + "` other than to embed them");

    std::ostringstream base_code;
    base_code << "class ShapeScriptModel(ShapeScriptPreTrainedModel):\n";
    base_code << "    \"\"\"" << file_name(a_.file.path()) << ": " << signature_line(fn)
              << ", up to the output layer: returns the hidden states.\"\"\"\n\n";
    base_code << "    def __init__(self, config):\n        super().__init__(config)\n";
    base_code << "        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)\n";
    base_code << base_init;
    base_code << "        self.layers = nn.ModuleList([ShapeScriptDecoderLayer(config, i) for i in range(config.num_hidden_layers)])\n";
    base_code << "        self.post_init()\n\n";
    base_code << "    def get_input_embeddings(self):\n        return self.embed_tokens\n\n";
    base_code << "    def set_input_embeddings(self, value):\n        self.embed_tokens = value\n\n";
    base_code << "    def forward(self, input_ids=None, inputs_embeds=None, position_ids=None, attention_mask=None, use_cache=None,\n"
                 "                return_dict=None, **kwargs):\n";
    base_code << "        if inputs_embeds is None:\n            inputs_embeds = self.embed_tokens(input_ids)\n";
    if (!pos_var.empty()) {
      base_code << "        if position_ids is None:  # after the tokens a cache holds, if any\n";
      base_code << "            start = kwargs[\"cache\"].get_seq_length() if kwargs.get(\"cache\") is not None else 0\n";
      base_code << "            position_ids = torch.arange(start, start + inputs_embeds.shape[1], device=inputs_embeds.device)"
                   ".expand(inputs_embeds.shape[0], -1)\n";
      base_code << "        " << python_name(pos_var) << " = position_ids\n";
    }
    base_code << "        if attention_mask is not None and attention_mask.dim() == 2 and not bool(attention_mask.all()):\n";
    base_code << "            raise ValueError(\"padded batches aren't supported: each attention masks later positions itself, not padding\")\n";
    base_code << "        attention_mask = None  # causal: each attention masks later positions itself\n";
    std::vector<std::pair<std::string, const ValueType*>> base_typed = {{"inputs_embeds", &types.parameters[1]}};
    if (!pos_var.empty()) base_typed.push_back({python_name(pos_var), &types.parameters[2]});
    std::string base_body = pre + call_layers + post + flush + indent(2) + "# " + source_line(statements.back().span) + "\n" +
                            indent(2) + "hidden_states = " + hidden_states + "\n";
    base_code << axis_reads(base_typed, base_body, 2) << base_body;
    base_code << "        if return_dict is False:\n            return (hidden_states,)\n";
    base_code << "        return BaseModelOutputWithPast(last_hidden_state=hidden_states)\n";

    // Tensors.
    for (auto& [key, path] : base_paths) out.tensors.push_back({key, -1, "model." + path});
    for (int64_t l = 0; l < layers; ++l)
      for (auto& [key, path] : layer_paths) out.tensors.push_back({key, l, "model.layers." + std::to_string(l) + "." + path});
    if (!out.tied) out.tensors.push_back({output_weight, -1, "lm_head.weight"});
    for (const Item::Param& p : model_->params) {
      bool used = std::any_of(out.tensors.begin(), out.tensors.end(), [&](const HfTensor& t) { return t.source == p.name; });
      if (!used) refuse("`" + model_->name + "." + p.name + "` isn't used by `" + fn.name + "`; a Hugging Face folder holds only the weights its model uses");
    }

    out.heads = heads;
    out.takes_positions = !pos_var.empty();
    if (out.takes_positions && types.parameters[2].tensor.element.bound.constant_value())
      out.max_positions = *types.parameters[2].tensor.element.bound.constant_value();
    if (embedding_vocab != out.vocab && out.tied) refuse("the embedding table and the output layer disagree on the vocabulary");

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

    extra_code_ = layer_code.str() + base_code.str();
    std::ostringstream modeling;
    modeling << header();
    modeling << "\n\nclass ShapeScriptPreTrainedModel(PreTrainedModel):\n";
    modeling << "    config_class = ShapeScriptConfig\n    base_model_prefix = \"model\"\n";
    modeling << "    _no_split_modules = [\"ShapeScriptDecoderLayer\"]\n";
    modeling << "    _supports_attention_backend = True\n    _supports_sdpa = True\n";
    for (const std::string& code : class_code_) modeling << "\n\n" << code;
    modeling << "\n\n" << layer_code.str();
    modeling << "\n\n" << base_code.str();
    modeling << "\n\nclass ShapeScriptForCausalLM(ShapeScriptPreTrainedModel, GenerationMixin):\n";
    if (out.tied) modeling << "    _tied_weights_keys = {\"lm_head.weight\": \"model.embed_tokens.weight\"}\n";
    modeling << "    _tp_plan = {\"lm_head\": \"colwise_gather_output\"}\n\n";
    modeling << "    def __init__(self, config):\n        super().__init__(config)\n        self.model = ShapeScriptModel(config)\n";
    modeling << "        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)\n        self.post_init()\n\n";
    modeling << "    def forward(self, input_ids=None, inputs_embeds=None, position_ids=None, attention_mask=None, labels=None,\n"
                "                use_cache=None, cache=None, past_key_values=None, logits_to_keep=0, return_dict=None, **kwargs):\n";
    // A key-value cache is sound only when nothing but attention works across positions: what
    // the serving rules (E33xx, reported in `a_.diagnostics` when the caller enables them) prove.
    // E3306 is about one engine's kernels, not about what the model computes.
    bool servable = not_servable_.empty() && layer_attention == 1 &&
                    std::none_of(a_.diagnostics.begin(), a_.diagnostics.end(), [](const Diagnostic& d) {
                      return info(d.code).code.starts_with("E33") && d.code != DiagnosticCode::E3306;
                    });
    if (servable) {
      modeling << "        cache = cache if cache is not None else past_key_values  # transformers 5.24 renamed it `cache`\n";
      modeling << "        if use_cache and cache is None:\n";
      modeling << "            cache = DynamicCache(config=self.config)\n";
      modeling << "        if cache is not None:\n            kwargs[\"cache\"] = cache\n";
    } else {
      modeling << "        # No key-value cache: " << fn.name << " works across positions outside attention, so each step runs\n";
      modeling << "        # the whole sequence.\n";
    }
    modeling << "        outputs = self.model(input_ids=input_ids, inputs_embeds=inputs_embeds, position_ids=position_ids,\n"
                "                             attention_mask=attention_mask, return_dict=True, **kwargs)\n";
    modeling << "        hidden_states = outputs.last_hidden_state\n";
    modeling << "        keep = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep\n";
    modeling << "        # " << source_line(statements.back().span) << "\n";
    modeling << "        logits = self.lm_head(hidden_states[:, keep, :])\n";
    modeling << "        loss = None\n        if labels is not None:\n";
    modeling << "            loss = self.loss_function(logits=logits, labels=labels, vocab_size=self.config.vocab_size, **kwargs)\n";
    // The cache by position: its keyword is `past_key_values` before transformers 5.24, `cache` since.
    modeling << "        return CausalLMOutputWithPast(loss, logits, " << (servable ? "cache" : "None") << ")\n\n";
    if (servable) {
      modeling << "    def prepare_inputs_for_generation(self, input_ids, cache=None, past_key_values=None, attention_mask=None,\n"
                  "                                      inputs_embeds=None, use_cache=True, **kwargs):\n";
      modeling << "        # Each step runs only the tokens the cache hasn't seen.\n";
      modeling << "        cache = cache if cache is not None else past_key_values\n";
      modeling << "        seen = cache.get_seq_length() if cache is not None else 0\n";
      modeling << "        return {\"input_ids\": input_ids[:, seen:], \"cache\": cache, \"use_cache\": use_cache, \"attention_mask\": attention_mask}\n";
    } else {
      modeling << "    def prepare_inputs_for_generation(self, input_ids, attention_mask=None, inputs_embeds=None, **kwargs):\n";
      modeling << "        # Without a cache every step sees the whole sequence.\n";
      modeling << "        return {\"input_ids\": input_ids, \"attention_mask\": attention_mask}\n";
    }
    // tp plan: the blocks' linears split as core/tensor_parallel.cpp proves they may be (heads and
    // feed-forward features across devices); every other nn.Linear, or all when nothing is proven, replicated.
    std::map<std::string, std::string> styles;
    if (auto proven = tensor_parallel_plan(a_, *loop.body, model_var, loop.variable)) {
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
    std::string plan;
    for (const std::string& p : linears)
      plan += (plan.empty() ? "" : ", ") + quote(p) + ": " + quote(styles.count(p) ? styles[p] : "replicate");
    out.modeling = modeling.str();
    out.configuration = configuration(plan, true);
    out.not_servable = not_servable_;
  }

  std::string dims_json() const {
    std::string out;
    for (auto& [name, value] : a_.semantics.dims) out += (out.empty() ? "" : ", ") + quote(name) + ": " + std::to_string(value);
    return "{" + out + "}";
  }

  std::string header() const {
    std::ostringstream out;
    out << "# Generated by ShapeScript from " << file_name(a_.file.path()) << ". Edit the .ss file and export again, not this one.\n";
    if (uses_name(code_so_far(), "math.")) out << "import math\n\n";
    out << "import torch\n";
    out << "import torch.nn.functional as F\n";
    out << "from torch import nn\n";
    if (uses_einops_) out << "import einops\n";
    out << "from transformers import DynamicCache, GenerationMixin, PreTrainedModel\n";
    out << "from transformers.modeling_outputs import BaseModelOutputWithPast, CausalLMOutputWithPast\n";
    out << "from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS\n\n";
    out << "from .configuration_shapescript import ShapeScriptConfig\n\n";
    for (auto& [name, value] : a_.semantics.dims) out << python_name(name) << " = " << value << "\n";
    if (uses_name(code_so_far(), "_ss_mode")) out << "\n" << mode_definition;
    out << R"PY(

def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    # transformers' eager attention: query [b H n Dh], key and value [b Hkv m Dh] -> [b n H Dh]; causal
    # (later positions masked) when no mask is given.
    key = key.repeat_interleave(module.num_key_value_groups, dim=1)
    value = value.repeat_interleave(module.num_key_value_groups, dim=1)
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is None:
        n, m = query.shape[-2], key.shape[-2]
        later = torch.ones(n, m, dtype=torch.bool, device=query.device).tril(m - n).logical_not()
        scores = scores.masked_fill(later, float("-inf"))
    elif attention_mask.dtype == torch.bool:
        scores = scores.masked_fill(attention_mask.logical_not(), float("-inf"))
    else:
        scores = scores + attention_mask[:, :, :, : key.shape[-2]]
    weights = F.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    weights = F.dropout(weights, p=dropout, training=module.training)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


def _heads_first(attn_output, query):
    # An attention function returns [b n H Dh] (vLLM's: [b*n H*Dh]); ShapeScript's layout is [b H n Dh].
    b, h, n, _ = query.shape
    return attn_output.reshape(b, n, h, -1).transpose(1, 2)
)PY";
    if (uses_causal_) {
      out << "\n\ndef _causal(n, m):\n"
             "    # causal[n m]: True where key position j is at or before query position i (j <= i).\n"
             "    return torch.ones(n, m, dtype=torch.bool).tril()\n";
    }
    for (const std::string& fn : plain_code_) out << "\n\n" << fn;
    return out.str();
  }

  std::string code_so_far() const {
    std::string all;
    for (const std::string& c : class_code_) all += c;
    for (const std::string& c : plain_code_) all += c;
    return all + extra_code_;
  }
  std::vector<std::string> plain_code_;
  std::string extra_code_;

  std::string configuration(const std::string& plan, bool language_model) const {
    std::ostringstream out;
    out << "# Generated by ShapeScript from " << file_name(a_.file.path()) << ".\n";
    out << "from transformers import PretrainedConfig\n\n\n";
    out << "class ShapeScriptConfig(PretrainedConfig):\n";
    out << "    model_type = \"shapescript\"\n";
    if (language_model) out << "    base_model_tp_plan = {" << plan << "}\n";
    out << "\n    def __init__(self, vocab_size=0, hidden_size=0, num_hidden_layers=0, num_attention_heads=1, num_key_value_heads=None,\n"
           "                 head_dim=None, max_position_embeddings=4096, tie_word_embeddings=False, dims=None,\n"
           "                 shapescript_source=None, shapescript_function=None, initializer_range=0.02, **kwargs):\n";
    out << "        self.vocab_size = vocab_size\n        self.hidden_size = hidden_size\n";
    out << "        self.num_hidden_layers = num_hidden_layers\n        self.num_attention_heads = num_attention_heads\n";
    out << "        self.num_key_value_heads = num_key_value_heads if num_key_value_heads is not None else num_attention_heads\n";
    out << "        self.head_dim = head_dim if head_dim is not None else hidden_size // max(num_attention_heads, 1)\n";
    out << "        self.max_position_embeddings = max_position_embeddings\n";
    out << "        self.dims = dims or {}\n";
    out << "        self.shapescript_source = shapescript_source\n        self.shapescript_function = shapescript_function\n";
    out << "        self.initializer_range = initializer_range\n";
    out << "        super().__init__(tie_word_embeddings=tie_word_embeddings, **kwargs)\n";
    return out.str();
  }

  // ---------------------------------------------------------------------------------------------
  // Any other function: its compiled module, with the model's parameters on a PreTrainedModel.

  void generic(const Item& fn, const FunctionTypes& types, HfModel& out) {
    GeneratedModule module = generate_python(a_);
    std::string python = module.python;
    std::vector<std::string> inputs;
    for (size_t i = model_ ? 1 : 0; i < fn.parameters.size(); ++i) inputs.push_back(python_name(fn.parameters[i].name));
    for (size_t i = 0; i < types.parameters.size(); ++i)
      if (i > 0 && types.parameters[i].kind == ValueType::Kind::model) refuse("`" + fn.name + "` takes a second model");
    std::ostringstream modeling;
    modeling << "# Generated by ShapeScript from " << file_name(a_.file.path()) << ". Edit the .ss file and export again, not this one.\n";
    modeling << "# `" << fn.name << "` as a transformers model: its module, compiled as `shapescript export` compiles it, then the wrapper.\n";
    modeling << "from transformers import PreTrainedModel\n\n";
    modeling << "from .configuration_shapescript import ShapeScriptConfig\n\n";
    modeling << python;
    modeling << "\n\nclass ShapeScriptPreTrainedModel(PreTrainedModel):\n";
    modeling << "    config_class = ShapeScriptConfig\n    base_model_prefix = \"model\"\n";
    modeling << "\n\nclass ShapeScriptModel(ShapeScriptPreTrainedModel):\n";
    modeling << "    \"\"\"" << file_name(a_.file.path()) << ": " << signature_line(fn) << "\"\"\"\n\n";
    modeling << "    def __init__(self, config):\n        super().__init__(config)\n";
    if (model_)
      for (const Item::Param& p : model_->params) {
        std::vector<std::string> axes;
        for (const SizeNode& axis : p.type.axes) axes.push_back(std::to_string(constant(axis, "`" + p.name + "`")));
        modeling << "        self." << python_name(p.name) << " = nn.Parameter(torch.empty(" << join(axes) << "))\n";
        out.tensors.push_back({p.name, -1, python_name(p.name)});
      }
    modeling << "        self.post_init()\n\n";
    modeling << "    def forward(self" << (inputs.empty() ? "" : ", " + join(inputs)) << ", **kwargs):\n";
    std::vector<std::string> args;
    if (model_) args.push_back("self");
    for (const std::string& i : inputs) args.push_back(i);
    modeling << "        return " << python_name(fn.name) << "(" << join(args) << ")\n";
    out.modeling = modeling.str();
    out.configuration = configuration("", false);
    out.config = {
        {"model_type", "\"shapescript\""},
        {"architectures", "[\"ShapeScriptModel\"]"},
        {"auto_map", "{\"AutoConfig\": \"configuration_shapescript.ShapeScriptConfig\", \"AutoModel\": \"modeling_shapescript.ShapeScriptModel\"}"},
        {"dims", dims_json()},
        {"shapescript_source", quote(file_name(a_.file.path()))},
        {"shapescript_function", quote(fn.name)},
    };
    out.not_servable = model_ ? "`" + fn.name + "` isn't a language model's forward" : "`" + fn.name + "` takes no model";
  }

  // ---------------------------------------------------------------------------------------------
  // Statements: PythonWriter's, with these hooks.

  void on_return(const Statement& s) override {
    if (scope_ && scope_->kind == ScopeKind::layer) refuse(where(s.span) + ": `return` inside the loop over blocks");
  }

  bool step_reads(const Expr& e, const std::string& name) const override { return mentions(e, name, false); }

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
    if (scope_ && (scope_->kind == ScopeKind::base || scope_->kind == ScopeKind::layer) && is_model_field(&e, scope_->model_var))
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
        std::vector<std::string> args;
        for (size_t i = 0; i < e.arguments.size(); ++i)
          if (!(i < instance.cls->weight_positions.size() && instance.cls->weight_positions[i]) && e.arguments[i].value)
            args.push_back(python_bare(expression(*e.arguments[i].value)));
        args.push_back("attention_mask=attention_mask");
        args.push_back("**kwargs");
        return "self." + instance.name + "(" + join(args) + ")";
      }
    // A weight called as its layer.
    if (scope_ && (is_builtin(e, "linear") || is_builtin(e, "embedding")) && e.arguments.size() == 2 && e.arguments[1].value)
      if (auto key = weight_key(*e.arguments[1].value)) {
        const Weight& w = scope_->weights.at(*key);
        bool as_layer = is_builtin(e, "linear") ? w.kind == Weight::Kind::linear : w.kind == Weight::Kind::embedding;
        if (as_layer) return "self." + w.attr + "(" + python_bare(expression(*e.arguments[0].value)) + ")";
      }
    if (engine_attention(e) && scope_ && (scope_->kind == ScopeKind::layer || scope_->kind == ScopeKind::module)) return attention(e);
    return std::nullopt;
  }

  void on_builtin_call(const Expr&, const CallFacts& facts) override {
    if (facts.builtin->name == "scaled_dot_product_attention" && facts.lowering.count("causal"))
      not_servable_ = "attention outside a block can't be replaced by vLLM's";
  }

  std::string function_call(const Expr& e, const Item& item, const std::vector<std::string>& args) override {
    if (item.kind == Item::Kind::extern_fn) {
      std::string root = item.extern_target.substr(0, item.extern_target.find('.'));
      if (root != "torch" && root != "math") refuse(where(e.span) + ": `" + item.name + "` calls `" + item.extern_target + "`, which the folder can't import");
      return item.extern_target + "(" + join(args) + ")";
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
    scope_->heads = *heads;
    scope_->kv_heads = *kv_heads;
    scope_->head_dim = *head_dim;
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
    prelude_.push_back("key, value = " + qkv[1] + ", " + qkv[2]);
    prelude_.push_back("if kwargs.get(\"cache\") is not None:  # generate(): add the keys and values of earlier tokens");
    prelude_.push_back("    key, value = kwargs[\"cache\"].update(key, value, self.layer_idx)");
    prelude_.push_back("attention_interface = ALL_ATTENTION_FUNCTIONS.get_interface(self.config._attn_implementation, eager_attention_forward)");
    prelude_.push_back("attn_output, _ = attention_interface(self, " + qkv[0] +
                       ", key, value, attention_mask, dropout=0.0, scaling=self.scaling, **kwargs)");
    return "_heads_first(attn_output, " + qkv[0] + ")";
  }

  // A function without weights: a plain Python function, as the pt2 code generator writes it.
  void plain_function(const Item& fn) {
    if (plain_done_.count(&fn)) return;
    plain_done_.insert(&fn);
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
      parameters.push_back(python_name(fn.parameters[i].name));
      locals_.insert(fn.parameters[i].name);
      if (types != a_.semantics.functions.end() && i < types->second.parameters.size())
        typed.push_back({python_name(fn.parameters[i].name), &types->second.parameters[i]});
    }
    std::string body = fn.body ? block(*fn.body, 1) : "    pass\n";
    std::string code = "def " + python_name(fn.name) + "(" + join(parameters) + "):\n    \"\"\"" + file_name(a_.file.path()) + ": " +
                       signature_line(fn) + "\"\"\"\n" + axis_reads(typed, body, 1) + body;
    plain_code_.push_back(code);
    scope_ = saved_scope;
    locals_ = saved_locals;
    needed_axes_ = saved_axes;
    prelude_ = saved_prelude;
  }
};

}  // namespace

HfModel generate_hf(const Analysis& analysis, const std::string& function) { return HfGenerator(analysis).run(function); }

}  // namespace ss
