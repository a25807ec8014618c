#include "model/latent_attention.h"

#include <map>
#include <vector>

#include "model/model_layout.h"
#include "syntax/walk.h"

namespace ss {

namespace {

// A straight-line body: which assignment each variable read at a statement reads, and what reads
// an input other than through a set of leaves (expressions and variables taken as given).
class Body {
 public:
  Body(const Analysis& analysis, const Block& block, const std::set<std::string>& inputs)
      : analysis_(analysis), statements_(block.statements), inputs_(inputs) {}

  // The statement that last assigns `name` before statement `at`.
  std::optional<size_t> definition(const std::string& name, size_t at) const {
    for (size_t i = at; i-- > 0;)
      for (const auto& target : statements_[i].targets)
        if (target.first == name) return i;
    return std::nullopt;
  }

  struct Leaves {
    std::set<const Expr*> expressions;
    std::set<std::string> variables;
    mutable std::map<size_t, bool> reads_input;  // statement -> whether it reads an input: each asked once, not once a path
  };

  // Each variable `e` reads, not inside the leaves and not a lambda's own parameter.
  template <class Visit>
  void free_names(const Expr& e, const Leaves& leaves, Visit&& visit) const {
    for_each_free_name(
        e,
        [&](const Expr& name) {
          if (!leaves.variables.count(name.text)) visit(name);
          return Walk::into;
        },
        [&](const Expr& x) { return leaves.expressions.count(&x) > 0; });
  }

  // Whether `e` (in statement `at`) reads an input, following variables to their assignments.
  bool reads_input(const Expr& e, size_t at, const Leaves& leaves) const {
    bool reads = false;
    free_names(e, leaves, [&](const Expr& name) {
      if (reads) return;
      auto d = definition(name.text, at);
      reads = d ? statement_reads_input(*d, leaves) : inputs_.count(name.text) > 0;
    });
    return reads;
  }

  bool statement_reads_input(size_t i, const Leaves& leaves) const {
    if (auto known = leaves.reads_input.find(i); known != leaves.reads_input.end()) return known->second;
    bool reads = statements_[i].value && reads_input(*statements_[i].value, i, leaves);
    leaves.reads_input[i] = reads;
    return reads;
  }

  // The statements whose assignments `e` (in statement `at`) reads, and theirs, not past the leaves.
  void assignments_read(const Expr& e, size_t at, const Leaves& leaves, std::set<size_t>& out) const {
    free_names(e, leaves, [&](const Expr& name) {
      if (auto d = definition(name.text, at); d && out.insert(*d).second && statements_[*d].value)
        assignments_read(*statements_[*d].value, *d, leaves, out);
    });
  }

  const ValueType* type_of(const Expr& e) const {
    return analysis_.semantics.types.find(&e);
  }

  const Analysis& analysis_;
  const std::vector<Statement>& statements_;
  const std::set<std::string>& inputs_;
};

std::optional<int64_t> axis_size(const ValueType* type, size_t rank, size_t axis) {
  if (!type || !type->is_tensor() || type->tensor.rank() != rank) return std::nullopt;
  return type->tensor.axes[axis].size.constant_value();
}

}  // namespace

std::optional<LatentAttention> find_latent_attention(const Analysis& analysis, const Item& fn, const std::set<std::string>& inputs) {
  if (!fn.body) return std::nullopt;
  const std::vector<Statement>& statements = fn.body->statements;
  const Expr* attention = nullptr;
  size_t at = 0;
  for (size_t i = 0; i < statements.size(); ++i) {
    const Statement& s = statements[i];
    if (s.kind != Statement::Kind::assign && s.kind != Statement::Kind::return_ && s.kind != Statement::Kind::expression) return std::nullopt;
    if (!s.value) continue;
    bool twice = !for_each_expr(*s.value, [&](const Expr& e) {
      if (!is_builtin_call(analysis, e, BuiltinRole::attention)) return Walk::into;
      if (attention) return Walk::stop;
      attention = &e;
      at = i;
      return Walk::skip;
    });
    if (twice) return std::nullopt;
  }
  if (!attention || attention->arguments.size() < 3) return std::nullopt;
  for (size_t i = 0; i < 3; ++i)
    if (!attention->arguments[i].value || (i > 0 && attention->arguments[i].value->kind != Expr::Kind::name)) return std::nullopt;
  const Expr& q = *attention->arguments[0].value;
  const Expr& k = *attention->arguments[1].value;
  const Expr& v = *attention->arguments[2].value;
  Body body(analysis, *fn.body, inputs);
  auto k_at = body.definition(k.text, at), v_at = body.definition(v.text, at);
  if (!k_at || !v_at) return std::nullopt;

  // `linear(z, W)` in statement `expansion_at` as the expansion: the latent attention it makes, if it is one.
  auto as_expansion = [&](const Expr& e, size_t expansion_at) -> std::optional<LatentAttention> {
    const Expr& z = *e.arguments[0].value;
    if (!body.reads_input(z, expansion_at, {}) || !axis_size(body.type_of(z), 3, 2)) return std::nullopt;
    Body::Leaves through_z{{&z}, {}, {}};
    if (body.reads_input(v, at, through_z)) return std::nullopt;
    // r: the one variable of k's assignment that reads an input other than through z.
    std::set<std::string> shared;
    body.free_names(*statements[*k_at].value, {}, [&](const Expr& name) {
      if (auto d = body.definition(name.text, *k_at); d && body.statement_reads_input(*d, through_z)) shared.insert(name.text);
    });
    if (shared.size() != 1) return std::nullopt;
    Body::Leaves leaves{{&z}, shared, {}};
    if (body.reads_input(k, at, leaves) || body.reads_input(v, at, leaves)) return std::nullopt;
    LatentAttention found;
    found.attention = attention;
    found.latent = &z;
    found.expansion = &e;
    found.shared_key = *shared.begin();
    found.expanding = {*k_at, *v_at};
    body.assignments_read(*statements[*k_at].value, *k_at, leaves, found.expanding);
    body.assignments_read(*statements[*v_at].value, *v_at, leaves, found.expanding);

    // The expanding statements read nothing but z, r, each other's assignments, weights and sizes, and
    // nothing else reads what they assign (the attention reads k and v only).
    for (size_t i : found.expanding) {
      bool other = false;
      body.free_names(*statements[i].value, leaves, [&](const Expr& name) {
        auto d = body.definition(name.text, i);
        other = other || (d ? !found.expanding.count(*d) : inputs.count(name.text) > 0);
      });
      if (other) return std::nullopt;
    }
    for (size_t i = 0; i < statements.size(); ++i) {
      if (found.expanding.count(i) || !statements[i].value) continue;
      bool reads = false;
      body.free_names(*statements[i].value, {}, [&](const Expr& name) {
        auto d = body.definition(name.text, i);
        bool attention_argument = i == at && (&name == &k || &name == &v);
        reads = reads || (d && found.expanding.count(*d) && !attention_argument);
      });
      if (reads) return std::nullopt;
    }
    // z and r, computed at the attention, read what they read where they were written.
    bool moved = false;
    body.free_names(z, {}, [&](const Expr& name) {
      moved = moved || body.definition(name.text, expansion_at) != body.definition(name.text, at);
    });
    if (moved || body.definition(found.shared_key, *k_at) != body.definition(found.shared_key, at)) return std::nullopt;

    auto heads = axis_size(body.type_of(k), 4, 1), query_head = axis_size(body.type_of(q), 4, 3);
    auto value_size = axis_size(body.type_of(v), 4, 3), latent_size = axis_size(body.type_of(z), 3, 2);
    body.free_names(*statements[*k_at].value, {}, [&](const Expr& name) {
      if (!found.shared_read && name.text == found.shared_key) found.shared_read = &name;
    });
    if (!found.shared_read || axis_size(body.type_of(*found.shared_read), 4, 1) != std::optional<int64_t>(1)) return std::nullopt;
    auto shared_size = axis_size(body.type_of(*found.shared_read), 4, 3);
    if (!heads || !query_head || !value_size || !latent_size || !shared_size || *shared_size >= *query_head) return std::nullopt;
    found.heads = *heads;
    found.latent_size = *latent_size;
    found.shared_size = *shared_size;
    found.nope_size = *query_head - *shared_size;
    found.value_size = *value_size;
    return found;
  };

  // The expansion: a `linear(z, W)` that v reads, through which alone k and v read an input.
  std::set<size_t> v_reads = {*v_at};
  body.assignments_read(*statements[*v_at].value, *v_at, {}, v_reads);
  std::optional<LatentAttention> found;
  for (size_t i : v_reads) {
    if (!statements[i].value) continue;
    for_each_expr(*statements[i].value, [&](const Expr& e) {
      if (is_builtin_call(analysis, e, BuiltinRole::linear) && !e.arguments.empty() && e.arguments[0].value) found = as_expansion(e, i);
      return found ? Walk::stop : Walk::into;
    });
    if (found) break;
  }
  return found;
}

}  // namespace ss
