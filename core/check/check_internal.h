// The checker's internals, shared by check.cpp (items, statements), check_expr.cpp (expressions)
// and rules_export.cpp / rules_serving.cpp. Not part of the core's interface.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "check/analysis.h"
#include "check/builtins.h"
#include "model/model_cost.h"

namespace ss {

// The help for Python's slices and indexing, which the parser may or may not have read.
inline constexpr std::string_view kNoSlices =
    "there are no slices: `x[l]` takes one index along the first axis, so move the axis first, as in `rearrange(x, b n D -> n b D)[n - 1]` "
    "for the last position of `n`";

struct ModelLayout;

enum class SizeMode {
  fixed,      // dims and model parameters: only dims and numbers
  signature,  // a new name is a generic axis
  body,       // names must be in scope
  assertion,  // `as` types: a new name is a generic axis checked when the program runs
};

struct AxisBinding {
  SizeExpr size;
  Span at;            // where it was bound
  std::string label;  // how it was written there
};

struct Local {
  ValueType type;
  Span at;
  const Expr* value = nullptr;  // what a single-name assignment gave it: where a help looks for the cause
};

struct Scope {
  SizeMode mode = SizeMode::body;
  const Item* function = nullptr;
  std::map<std::string, AxisBinding, std::less<>> axes;  // generic axes and names solved by patterns
  std::vector<std::string> generics;                      // new generic axes, in order of appearance
  std::map<std::string, Local, std::less<>> locals;
  // The `for` and `if` blocks being checked, innermost last: what each is called, and the locals
  // from before it, whose types a rebinding inside the block must keep.
  std::vector<std::pair<std::string, std::map<std::string, Local, std::less<>>>> blocks;
};

// Its parameters and result (unknown when none is declared) are what Semantics::functions shares.
struct FunctionSignature : FunctionTypes {
  std::vector<std::string> names;
  SizeVariableSet generics;
  SizeVariableSet result_only;  // generic axes only the result mentions: solved from the returned value
  std::map<std::string, AxisBinding, std::less<>> scope_axes;
  std::vector<std::string> generic_order;
};

// What an exported function may not reach, recorded per function as it is checked.
struct Use {
  enum class Kind { python, training, extern_call, call };
  Kind kind;
  Span span;         // the narrowest span of the use
  std::string what;  // dotted Python name, built-in name, extern target
  const Item* callee = nullptr;  // call, extern_call
  const Expr* expr = nullptr;    // the call
  std::optional<std::string> asserted_type;  // python: the `as` type around it, if any
};

using ModelFields = std::map<std::string, ValueType, std::less<>>;  // a model's parameters, by name

struct FunctionRecord;
struct SignatureRecord;
struct ModelRecord;
struct DimRecord;
struct GlobalRecord;
struct FunctionCache;

class Checker {
 public:
  Checker(Analysis& analysis, const AnalyzeOptions& options);
  ~Checker();
  // With `previous` (which may hold no cache), functions the edit since can't reach are not
  // checked again but taken from it (check.cpp), and the analysis keeps a cache for the next.
  // `previous` is taken apart (analyze_incremental).
  void run(Analysis* previous = nullptr, bool incremental = false);
  CheckReuse reuse() const { return reuse_; }
  // After run(previous): forgets the types and call facts of the items relower_tree left in the
  // previous program (those the edit dropped), which die with it.
  void forget_dropped(const Program& previous_program);

  Analysis& analysis() { return a_; }
  const AnalyzeOptions& options() const { return options_; }
  const std::map<const Item*, std::vector<Use>>& uses() const { return uses_; }
  // A function's or extern fn's signature; an empty one for any other item.
  const FunctionSignature& signature(const Item* item) const;
  std::string text(Span span) const;
  void report(Diagnostic diagnostic);
  // `report(code, span, message).label(..).note(..)`: reported when the statement ends.
  DiagnosticBuilder report(DiagnosticCode code, Span span, std::string message);
  void error(DiagnosticCode code, Span span, std::string message, std::string label);

  // Expressions (check_expr.cpp).
  // `enclosing`: the subscript or call that `expr` is the base or callee of, for a help that reads
  // the whole of `x.shape[1]` or `x.size(1)`.
  ValueType eval(const Expr& expr, Scope& scope, const Expr* enclosing = nullptr);
  std::optional<Axis> resolve_size(const SizeNode& node, Scope& scope);
  // Broadcasts as numpy does; a_at/b_at, where the operands are written, let a help rewrite one.
  // With `scope`, an operand that is a local has the line that made it labelled.
  std::optional<TensorType> broadcast(const TensorType& a, const TensorType& b, Span span, Span a_at = {}, Span b_at = {}, const Scope* scope = nullptr);
  bool expect_same_size(const Axis& expected, const Axis& actual, Span span, std::string_view what);
  std::optional<CallContext::PatternSolution> solve_pattern(const AxisPattern& pattern, const std::vector<TensorType>& tensors,
                                                            const std::vector<Span>& spans, Scope& scope);
  std::optional<size_t> axis_argument(const TensorType& tensor, const Argument* argument, std::string_view keyword, Span tensor_span, Scope& scope);
  static ExportAxis export_axis(const Axis& axis);
  // A tensor's axis that is a product of dims a parameter declares apart (heads never split).
  struct Split {
    size_t axis;          // the tensor's
    std::string dims;     // "H Dh"
    std::string pattern;  // "b n (H Dh) -> b H n Dh"
  };
  std::optional<Split> split_into(const std::vector<SizeNode>& declared, const TensorType& tensor) const;
  // A pattern written as a string, einops' or torch's: the call with ShapeScript's pattern.
  std::optional<std::string> unquoted_pattern_call(const std::string& name, const Expr& call) const;
  std::optional<std::pair<size_t, std::string>> unsplit_axis(const std::vector<SizeNode>& side, const TensorType& tensor) const;
  // (`result`, where given, gets the pieces `split` gives.)
  std::optional<std::string> chunked_pattern(std::string_view torch, const TensorType& x, const Expr& call, const Scope& scope,
                                             ValueType* result = nullptr) const;
  // (`result`, where given, gets the value the pattern gives.)
  std::optional<std::string> reshaped_pattern(std::string_view torch, const TensorType& x, const std::vector<const Expr*>& arguments,
                                              const Scope& scope, TensorType* result = nullptr) const;
  static std::string tensors_pattern(const TensorType& tensor, size_t at, const std::string& dims);
  // The type `e` must have, when the checker knows it: the declared result, for what is returned.
  std::optional<TensorType> expected_type(const Expr& e, const Scope& scope);
  // Whether `name` in `scope` is the built-in of that name, not a local, size or global.
  bool names_builtin(const std::string& name, const Scope& scope) const;
  // A dim that has a value, as a use of its name reads it; null for any other name.
  struct KnownDim {
    int64_t value = 0;
    SizeExpr size;          // the value as a size
    Span span;              // where its name is declared
    std::string use_hover;  // what hovering a use of it shows
  };
  const KnownDim* known_dim(std::string_view name) const {
    auto dim = dims_.find(name);
    return dim == dims_.end() ? nullptr : &dim->second;
  }

 private:
  friend class CallChecker;
  Analysis& a_;
  AnalyzeOptions options_;  // a copy: reading a tokenizer is noted while a function is recorded
  // Incremental checking (check.cpp).
  struct Incremental;
  std::shared_ptr<Incremental> incremental_;  // shared_ptr: complete only in function_cache.cpp
  FunctionRecord* recording_ = nullptr;  // the function being checked, while its record is kept
  CheckReuse reuse_;
  void prepare_incremental(Analysis* previous);
  void check_and_record(const Item& item);
  bool reuse_record(FunctionRecord& record, const Item& item);
  // The types and call facts of an item's expressions, which an incremental check adopts from the
  // previous one: forgotten before the item is checked again, and for what the edit dropped.
  void forget_expressions(const Item& item);
  // Whether the previous file's text at `before` is this file's at `now`: compared only when the
  // edit touched it.
  bool same_text(Span before, Span now) const;
  // signature_of, or the cache's record: shared when no position in it moved, else a moved copy.
  std::shared_ptr<const FunctionSignature> recorded_signature(const Item& item);
  std::shared_ptr<const FunctionSignature> reuse_signature(SignatureRecord& record, const Item& item);
  void recorded_model(const Item& item);  // check_model, or the cache's record moved
  void recorded_dim(const Item& item);  // evaluate_dim, or the cache's record moved
  // A model or dim: `check` runs unless `reuse` takes a record of the previous check's; a check
  // that reported nothing and read no more than its names is kept, with what `keep` adds of its
  // kind's own (false: nothing to keep).
  template <class Record, class Check, class Keep>
  void recorded_global(const Item& item, std::vector<Record> FunctionCache::*records,
                       std::unordered_multimap<uint64_t, size_t> FunctionCache::*by_text,
                       bool (Checker::*reuse)(Record&, const Item&), Check check, Keep keep);
  // Whether a model's or dim's record may be taken: the same text where the edit moved it, and the
  // same environment.
  bool may_reuse(const GlobalRecord& record, const Item& item) const;
  bool reuse_dim(DimRecord& record, const Item& item);
  bool reuse_model(ModelRecord& record, const Item& item);
  // What every kind of record carries of the previous check: its hovers, definitions and uses of
  // models as types. Whether each can be moved by the edit (false: checked again), with the models
  // those uses now name; then taking them out of the previous analysis into this one, moved.
  using ModelTypeUses = std::vector<std::pair<Span, const Item*>>;
  template <class Record>
  bool can_take_facts(const Analysis& previous, const Record& record, const TextChange& change, ModelTypeUses& model_type_uses,
                      bool ask_positions = true) const;  // false: the record's placement says every position can move
  template <class Record>
  void take_facts(Analysis& previous, Record& record, const TextChange& change, const ModelTypeUses& model_type_uses,
                  bool moves);  // false: the edit lies after every position of the record
  bool reuse_exports();  // the previous check's exports, where no interface changed
  // A record's own chunks of hovers and definitions (and inlays, for the records that have them),
  // begun before its check and ended after it.
  template <class Record>
  void begin_chunks(Record& record);
  template <class Record>
  void end_chunks(const Record& record);
  uint64_t environment_hash(const std::vector<std::string>& identifiers) const;
  // Keyed by the items' own names (the program outlives the check); sorted where listed (global_names).
  std::unordered_map<std::string_view, const Item*> globals_;
  std::vector<std::string> global_names(std::optional<Item::Kind> only = std::nullopt) const;
  // The dims that have values, keyed by the items' own names: a use of a dim is the commonest size
  // there is, and semantics.dims (sorted, for the emitters) made each lookup a walk of string compares.
  std::unordered_map<std::string_view, KnownDim> dims_;
  void set_dim(const Item& item, int64_t value);
  std::optional<ValueType> torch_axes_call(const Expr& expr, Scope& scope);
  std::optional<std::string> written_axis(const Axis& axis, const TensorType& tensor, const Scope& scope) const;
  void report_python_loop(const Statement& loop);
  std::optional<std::string> size_as_value(const Axis& axis, const TensorType& tensor, const Scope& scope) const;
  static bool names_its_axes(const SizeExpr& size, const Scope& scope);
  bool writable_here(const SizeExpr& size, const Scope& scope) const;
  // writable_here in `scope`, as the predicate pattern_axes and moved_axes_pattern take.
  auto writable_in(const Scope& scope) const {
    return [this, &scope](const SizeExpr& size) { return writable_here(size, scope); };
  }
  std::optional<std::string> implied_over(std::string_view builtin, const std::vector<ValueType>& arguments, const Scope& scope) const;
  // Where an unknown keyword is PyTorch's (`dim=`, `is_causal=`): the help and fix, and the keyword it stands for.
  std::optional<std::string> kept_axis(const Builtin& builtin, const Expr& call, const Argument& keepdim, const TensorType* x,
                                       const Scope& scope) const;
  struct ReducedInTurn {
    std::vector<size_t> positions;  // x's axes, in the order the calls reduce them
    bool kept = false;              // `keepdim=True`: a `rearrange` puts a 1 where each was
    std::string written;            // `sum(sum(x, over=n), over=D)`
  };
  std::optional<ReducedInTurn> reduced_in_turn(const Builtin& builtin, const std::vector<const Argument*>& after_tensor, const TensorType& x,
                                               const std::string& x_written, const Scope& scope) const;
  std::optional<ReducedInTurn> call_reduced_in_turn(const Builtin& builtin, const Expr& call, const std::vector<ValueType>& positional,
                                                    const Scope& scope) const;
  bool method_reduced_in_turn(DiagnosticBuilder& d, const Builtin& builtin, const Expr& method, const Expr& call, const ValueType& object,
                              const std::string& x, Scope& scope);
  std::optional<std::string> reductions_written(const Builtin& builtin, std::string x_written, const std::vector<size_t>& positions, const TensorType& x,
                                                bool keep, const Scope& scope) const;
  ValueType reductions_value(const Builtin& builtin, const Expr& call, const Expr& x_expr, ValueType value, const std::vector<size_t>& positions,
                             bool keep, Scope& scope);
  struct NewAxisFix {
    std::string written;
    bool whole_call = false;  // a `rearrange` that replaces the call; else `over=N` in place of `dim=`
  };
  std::optional<NewAxisFix> new_axis_moved(const Builtin& builtin, const Expr& call, const Argument& dim, const std::vector<ValueType>& positional,
                                            const Scope& scope) const;
  std::optional<std::string> torch_keyword_help(DiagnosticBuilder& d, const Builtin& builtin, const Expr& call, const Argument& argument,
                                                const std::vector<ValueType>& positional, Scope& scope);
  // Shared with the signature records, which outlive this check (function_cache.h).
  std::unordered_map<const Item*, std::shared_ptr<const FunctionSignature>> signatures_;
  std::unordered_map<const Item*, std::string> signature_texts_;  // signature_text of the signatures records gave
  // Each model's parameters and their types; shared with the model records, which outlive this check.
  std::unordered_map<const Item*, std::shared_ptr<const ModelFields>> model_fields_;
  // A model's hover, written once all functions are checked (its cost reads the forward): the text
  // so far, and each place its name is used as a type.
  std::map<const Item*, std::string> model_hovers_;
  std::vector<std::pair<Span, const Item*>> model_type_uses_;
  void add_model_hovers();
  std::vector<ModelCost> costs_of(const std::vector<const Item*>& models);  // model_costs, or the cache's
  std::vector<std::unordered_set<std::string>> model_cost_reads(const std::vector<const Item*>& models) const;
  std::unordered_set<std::string> checked_again_;  // functions check_and_record checked, by name
  std::string describe_as_language_model(const ModelLayout& layout) const;
  std::map<const Item*, std::vector<Use>> uses_;
  const Item* current_ = nullptr;  // the function being checked
  const Statement* assigning_ = nullptr;  // the assignment of several names whose value is being checked (`B, T, C = x.shape`)
  const Expr* returned_ = nullptr;  // the expression a `return` is checking, whose type the result declares
  std::vector<std::optional<std::string>> as_context_;  // `as` types being evaluated, innermost last

  void report_syntax_errors();
  bool lost_in_syntax_error(std::string_view name) const;
  bool cut_short(const Item& item) const;
  void report_python_block(const SyntaxError& e);
  void report_python_sequence(const SyntaxError& e);
  void declare_globals();
  void evaluate_dim(const Item& item);
  void check_model(const Item& item);
  void check_extern_target(const Item& item);
  void check_initializer(const Expr& init);
  FunctionSignature signature_of(const Item& item);
  std::string signature_text(const Item& item) const;
  void check_function(const Item& item);
  bool check_block(const Block& block, Scope& scope);
  // Before a `for` or `if` block: a name it rebinds may hold any value of its kind after a pass,
  // so a refined element type (NonNeg, Logit) it had before widens to Real for the block.
  void widen_rebound(const Statement& block_statement, Scope& scope);
  bool check_statement(const Statement& statement, Scope& scope);
  void bind_local(const std::string& name, Span span, const ValueType& type, Scope& scope, const Expr* value = nullptr);
  void check_return(const Expr& expr, const ValueType& value, Scope& scope);
  void python_without_as(const Expr& expr, std::optional<std::string> expected_type);
  void check_export_rules();
  void collect_exports();

  std::optional<Axis> resolve_size_unchecked(const SizeNode& node, Scope& scope);
  std::optional<Axis> resolve_size_name(const std::string& name, Span span, Scope& scope);
  std::vector<std::string> size_names(const Scope& scope) const;
  void unknown_name(const std::string& name, Span span, const std::function<std::vector<std::string>()>& candidates, std::string_view what);
  // Did-you-mean compares an unknown name with every name in scope, which is quadratic in a file
  // of thousands of unknown names; past a budget of names compared, the rest get no suggestion.
  std::optional<std::string> suggest_known(std::string_view name, const std::function<std::vector<std::string>()>& candidates);
  static constexpr size_t kSuggestionBudget = 2'000'000;
  size_t suggestion_work_ = 0;
  std::optional<ElementType> element_type(const ElementTypeNode& node, Scope& scope);
  ValueType type_from_node(const TypeNode& node, Scope& scope);

  // check_expr.cpp
  ValueType eval_uncached(const Expr& expr, Scope& scope, const Expr* enclosing);
  ValueType eval_name(const Expr& expr, Scope& scope);
  ValueType eval_binary(const Expr& expr, Scope& scope);
  ValueType eval_unary(const Expr& expr, Scope& scope);
  ValueType python_identity(const Expr& expr, Scope& scope);
  // PyTorch's arguments by position where the built-in names them (`layer_norm(x, (D,), w, b)`):
  // the keywords the fix writes (`over=D, weight=w, bias=b`), each argument's keyword (empty for
  // the shape, read as the axis `over`), and that axis.
  struct NamedArguments {
    std::string written;
    std::vector<std::string> keywords;
    std::optional<size_t> over;
  };
  std::optional<NamedArguments> torch_positional(const Builtin& builtin, const Expr& call, const std::vector<const Argument*>& positional,
                                                 const std::vector<ValueType>& types,
                                                 const std::map<std::string, std::pair<const Argument*, ValueType>>& keywords, Scope& scope);
  ValueType python_matmul(const Expr& expr, Scope& scope);
  void matmul_call(DiagnosticBuilder& d, const Expr& call, const Expr& a, const ValueType& left, const Expr& b, Scope& scope, const std::string& what);
  // `einsum_written`: set to the einsum the fix writes, where it writes one. `lead`: words the
  // help says before it.
  ValueType matmul_as_einsum(DiagnosticBuilder& d, const Expr& left_e, const ValueType& left, const Expr& right_e, const ValueType& right, Span span,
                             Scope& scope, std::string* einsum_written = nullptr, const std::string& lead = "");
  ValueType python_index(const Expr& expr, Scope& scope);
  ValueType python_power(const Expr& expr, Scope& scope);
  // What a call is, where eval_attribute reported its callee, a PyTorch method or module function,
  // with a sure fix: its value, or the built-in to check it as (`F.softmax(x, dim=-1)` is checked
  // as `softmax(x, dim=-1)`). Handed to eval_call, which returns it or makes that call.
  struct KnownCall {
    const Expr* call = nullptr;
    ValueType value;
    const Builtin* builtin = nullptr;
  };
  KnownCall known_call_;
  void call_value(const Expr& call, ValueType value) { known_call_ = {&call, std::move(value), nullptr}; }
  void call_as_builtin(const Expr& call, const Builtin& builtin) { known_call_ = {&call, {}, &builtin}; }
  // A PyTorch method call whose fix is a `rearrange` (`from` -> `to`), or nothing (`.contiguous()`,
  // `from` empty): the tensor the chain starts from and its pattern so far, so that a chain
  // (`x.view(b, n, H, Dh).transpose(1, 2)`) is one fix, `rearrange(x, b n (H Dh) -> b H n Dh)`.
  struct RearrangeChain {
    std::string object, from, to;
  };
  std::unordered_map<const Expr*, RearrangeChain> rearrange_chains_;
  // What a PyTorch method call's sure fix writes in its place (`x.pow(2)`: `(x * x)`), so that a
  // method called on it writes that, not the call as it was.
  std::unordered_map<const Expr*, std::string> fixed_text_;
  // `e` as the program reads once those fixes are applied: its text with each part that has one
  // (`x.pow(2)` in `x.pow(2).mean(-1) + 1e-6`) written as its fix writes it.
  std::string written_as_fixed(const Expr& e) const;
  // written_as_fixed, as one operand of an operation a fix writes around it: in parentheses unless
  // it is an atom (a name, a number, a call, an attribute, a subscript) or already in its own.
  std::string written_as_operand(const Expr& e) const;
  ValueType eval_attribute(const Expr& expr, Scope& scope, const Expr* enclosing);
  std::optional<std::string> torch_initializer(const Expr& init) const;
  std::optional<std::vector<TextEdit>> shape_unpacked(const TensorType& tensor, const Expr& asked, const Scope& scope) const;
  bool changes_nothing(const std::string& method, const Expr& call, const ValueType& object, Scope& scope);
  // `x.shape[1]`, `x.size(-1)`, `x.shape`, `x.ndim`: what PyTorch asks a tensor, which its type says.
  // What its fix writes in place of what was asked, where it has one.
  std::optional<std::string> tensor_size_help(DiagnosticBuilder& d, const Expr& attribute, const TensorType& tensor, const Expr* enclosing,
                                              const Scope& scope) const;
  // `asked` (`x.shape[1]`, `len(x)`) is the size of the axis at `at`: its name, as a fix where this
  // function can write it (what the fix writes, returned).
  std::optional<std::string> axis_size_help(DiagnosticBuilder& d, const Expr& asked, const TensorType& tensor, size_t at, const Scope& scope) const;
  ValueType eval_subscript(const Expr& expr, Scope& scope);
  // Where an index written as a size (`L - l`, `n`, `l + 1`) surely falls outside an axis of size
  // `size`: "at l = 0 it is 3", or "it is never below n"; nullopt where it may be in range.
  std::optional<std::string> index_out_of_range(const SizeExpr& index, const SizeExpr& size, const Scope& scope) const;
  // An index in a subscript: a size (`l`, `L - 1 - l`, `(2l) // 2`), or a remainder or floor division
  // that is no size (`l % 2`, `l // 2`), known by the bound its values lie below where there is one.
  struct IndexValue {
    std::optional<Axis> size;
    std::optional<SizeExpr> below;
  };
  std::optional<IndexValue> resolve_index(const SizeNode& node, Scope& scope);
  ValueType eval_as(const Expr& expr, Scope& scope);
  ValueType eval_call(const Expr& expr, Scope& scope);
  ValueType call_builtin(const Builtin& builtin, const Expr& expr, Scope& scope, CallFacts& facts,
                         const std::vector<SizeNode>* shape = nullptr);
  const Builtin* shaped_callee(const Expr& callee, const Scope& scope) const;
  ValueType call_map(const Expr& expr, Scope& scope, CallFacts& facts);
  ValueType call_experts(const Expr& expr, Scope& scope, CallFacts& facts);
  bool elementwise_in(const Expr& e, const std::string& index, bool& mentions_index) const;
  // An `export fn`, or the model forward AnalyzeOptions::model_forward names: what the export rules check.
  bool exported_root(const Item& item) const;
  ValueType call_function(const Item& item, const Expr& expr, Scope& scope, CallFacts& facts);
  std::optional<TensorType> require_tensor(const ValueType& value, const Expr* expr, Span span);
  std::vector<std::string> value_names(const Scope& scope) const;

  void hover(Span span, std::string text);
  void definition(Span use, Span target);
  std::string doc_suffix(const std::string& doc) const;
  std::string function_hover(const Item& item, const FunctionSignature& signature) const;
  std::string parameter_hover(const Item& item, size_t index, const FunctionSignature& signature) const;
  std::string export_dims_text(const FunctionSignature& signature) const;
};

// "Did you mean": the candidate a misspelled `name` most likely meant (closest_name): a swap of
// two neighbouring letters (`nrom`, `Tiyn`) is one edit, and a one-letter name only finds the same
// letter in another case: `t` is no typo of `b`.
std::optional<std::string> suggest_name(std::string_view name, const std::vector<std::string>& candidates);

// Whether a value of element type `from` may be used where `to` is declared.
bool assignable(const ElementType& from, const ElementType& to);

// rules_serving.cpp: E33xx on a model's forward, at `severity`.
void check_serving_rules(Checker& checker, Severity severity);
// E3310, when AnalyzeOptions::tensor_parallel is set (model/rules_serving.cpp).
void check_tensor_parallel(Checker& checker);

}  // namespace ss
