// What checking each function produced, kept with an analysis so that the next check of the same
// document (the language server's, after an edit) reuses the functions the edit can't reach. Not
// part of the core's interface: analysis.h holds it opaquely, check.cpp fills and reads it.
//
// A function's result depends on its own text and on the interface of the items its names reach
// (dims, models, extern fns, other functions' signatures and docs), followed through those
// interfaces' own names. A record is reused when both are unchanged and every position it holds
// lies outside the edited region; then it is the result a fresh check would give, moved to where
// the text now is (tests/unit/test_incremental.cpp compares the two after random edits).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "check/analysis.h"
#include "check/check_internal.h"
#include "model/model_cost.h"

namespace ss {

// The first and last position (offset) a record's facts hold; none while first > last.
struct PositionBounds {
  uint32_t first = UINT32_MAX, last = 0;
  bool empty() const { return first > last; }
};

// A use (check_internal.h) with its pointers as the names and positions that survive a re-lowering.
struct RecordedUse {
  Use use;                     // callee null; expr the expression as it was (kept while the item is)
  std::string callee;          // the callee's global name, or empty
  std::ptrdiff_t expr = -1;    // the expression's index in expressions_of(function), or -1
};

// What a record needs of the item it was made from, kept by value: the next check takes the item
// itself out of the previous program (relower_tree) before it looks at the records.
struct RecordedItem {
  Item::Kind kind = Item::Kind::function;
  Span span;  // the item's; a signature record's, signature_span
  std::string doc;
  bool exported = false;
  // Its body, by address: the same object when the next program took the item as it was, whose
  // expressions are then the very ones the record's types are keyed by.
  const Block* body = nullptr;
  static RecordedItem of(const Item& item, Span span);
};

struct FunctionRecord {
  RecordedItem item;
  bool taken = false;  // moved into the next check's cache
  uint64_t text_hash = 0;      // the function's text and doc
  uint64_t environment_hash = 0;
  // The words of its text, sorted, each once; shared by the records that reuse this one.
  std::shared_ptr<const std::vector<std::string>> identifiers;
  // What else its check read, beyond its text and environment.
  bool reads_files = false;      // a tokenizer's size: never reused
  bool reads_all_names = false;  // did-you-mean over every global name: reused while the names stay
  bool position_dependent = false;  // `experts` names sizes by offset: reused only where it didn't move
  std::vector<std::pair<std::string, bool>> lost_names;  // lost_in_syntax_error's answers
  std::optional<bool> cut_short;                          // cut_short's answer, where it was asked
  size_t suggestion_work = 0;
  // What it produced: diagnostics copied, the rest as its chunks of the analysis's facts.
  std::vector<Diagnostic> diagnostics;
  size_t hovers_chunk = 0, definitions_chunk = 0, inlays_chunk = 0;
  std::vector<RecordedUse> uses;
  std::vector<std::pair<Span, std::string>> model_type_uses;  // where a model's name is a type, and the model
  // Its expressions its check gave a type or call facts, each as its index in expressions_of(*item)
  // and itself: a reuse copies those without looking up every expression.
  size_t expression_count = 0;
  std::vector<std::pair<size_t, const Expr*>> typed, called;
  // The first and last position any of those facts holds: an edit wholly after them moves none, one
  // wholly before them moves all alike, and neither is checked position by position.
  PositionBounds positions;
};

// What a record of a signature, model or dim holds whatever its kind: the item as it was, its text's
// hash (with the doc, for models and dims), what its environment was, and its chunks of the facts.
struct GlobalRecord {
  RecordedItem item;
  bool taken = false;  // moved into the next check's cache
  uint64_t text_hash = 0;
  uint64_t environment_hash = 0;
  std::shared_ptr<const std::vector<std::string>> identifiers;
  size_t hovers_chunk = 0, definitions_chunk = 0;  // its chunks of the analysis's facts
  std::vector<std::pair<Span, std::string>> model_type_uses;  // where a model's name is a type, and the model
};

// What working out a function's signature gave (Checker::signature_of), kept as a function's check
// is. It reads the signature's text and the dims and models it names; one that reported anything
// or read more (every name, a syntax error) is not kept.
struct SignatureRecord : GlobalRecord {
  std::shared_ptr<const FunctionSignature> signature;  // the checker's own while no position in it moves
  std::string text;  // Checker::signature_text: what a symbol and a hover show of it
  PositionBounds positions;  // of the signature and those facts, as a function record's
};

// What checking a model gave (Checker::check_model): its parameters' types and hovers, and the
// start of its hover. Kept only when it reported nothing and read no more than its names.
struct ModelRecord : GlobalRecord {
  std::shared_ptr<const ModelFields> fields;  // shared with the check's model_fields_ while no position in them moves
  std::string hover_text;
};

// What evaluating a `dim` gave (Checker::evaluate_dim): its value, hover and the definitions of
// the dims its value names. It reads its text and those dims; one that reported anything, or has
// no value, is not kept.
struct DimRecord : GlobalRecord {
  int64_t value = 0;
};

struct FunctionCache {
  std::string options_key;  // a cache serves only checks with the same options
  uint64_t names_hash = 0;  // every global name, for records that read them all
  uint64_t interfaces_hash = 0;  // every item's name and interface, in order: equal, no environment changed
  std::vector<FunctionRecord> functions;
  std::unordered_multimap<uint64_t, size_t> by_text;  // text_hash -> index in functions
  std::unordered_map<uint64_t, std::shared_ptr<const std::vector<std::string>>> interface_words;  // text hash -> its words
  std::vector<SignatureRecord> signatures;
  std::unordered_multimap<uint64_t, size_t> signatures_by_text;  // text_hash -> index in signatures
  std::vector<ModelRecord> models;
  std::unordered_multimap<uint64_t, size_t> models_by_text;  // text_hash -> index in models
  std::vector<DimRecord> dims;
  std::unordered_multimap<uint64_t, size_t> dims_by_text;  // text_hash -> index in dims
  // The models' costs (their hovers' figures), in source order, and for each the functions it may
  // read: those taking the model first and what their text names, followed. While every interface
  // is unchanged, a model keeps its cost unless one of its functions was checked again.
  std::optional<std::vector<ModelCost>> model_costs;
  std::vector<std::unordered_set<std::string>> model_cost_reads;
};

// Where a function's signature is written: all of an extern fn, a function up to its body.
Span signature_span(const Item& item);

// Every expression of a function's body, in the one walk's order (syntax/walk.h): how a record
// finds, in a new program, the expressions whose types it holds.
std::vector<const Expr*> expressions_of(const Item& function);

// The words (identifiers) of `text`, sorted, each once.
std::vector<std::string> identifiers_in(std::string_view text);

uint64_t hash_text(std::string_view text, uint64_t seed = 0);

// Whether every position in a value can be moved to where the text now is (move_spans would succeed).
bool can_move(const ValueType& value, const TextChange& change);
bool can_move(const CallFacts& facts, const TextChange& change);

// Moves every position in a value to where the text now is; false when one can't be moved.
bool move_spans(Diagnostic& diagnostic, const TextChange& change);
bool move_spans(ValueType& value, const TextChange& change);
bool move_spans(Axis& axis, const TextChange& change);
bool move_spans(CallFacts& facts, const TextChange& change);
bool move_spans(FunctionSignature& signature, const TextChange& change);

// Widens `bounds` to every position in a fact, as move_spans would move them (Span{} is none).
void widen(PositionBounds& bounds, uint32_t offset);
void widen(PositionBounds& bounds, Span span);
void widen(PositionBounds& bounds, const ValueType& value);
void widen(PositionBounds& bounds, const CallFacts& facts);
void widen(PositionBounds& bounds, const Diagnostic& diagnostic);
void widen(PositionBounds& bounds, const FunctionSignature& signature);

// Where an edit lies against a record's positions: after them all (nothing moves), before them all
// (each moves by the same amount, and can), or among them (each must be asked).
enum class Placement { after, before, among };
Placement placement(PositionBounds positions, const TextChange& change);
// A record's bounds once every position in it was moved: they still hold what they held.
PositionBounds moved_bounds(PositionBounds positions, const TextChange& change);

}  // namespace ss
