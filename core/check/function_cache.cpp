// The per-function records of incremental checking: finding what changed, and moving positions.
#include "check/function_cache.h"

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstring>
#include <cctype>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include "syntax/syntax.h"
#include "syntax/walk.h"

namespace ss {

std::vector<const Expr*> expressions_of(const Item& function) {
  std::vector<const Expr*> out;
  if (!function.body) return out;
  auto add = [&](const Expr& e) { out.push_back(&e); };
  for_each_statement(*function.body, [&](const Statement& s) {
    if (s.value) for_each_expr(*s.value, add);
    if (s.end) for_each_expr(*s.end, add);
    for (const auto& [condition, body] : s.branches)
      if (condition) for_each_expr(*condition, add);
  });
  return out;
}

std::vector<std::string> identifiers_in(std::string_view text) {
  std::vector<std::string> out;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < text.size();) {
    if (!word(text[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < text.size() && word(text[i])) ++i;
    if (!std::isdigit(static_cast<unsigned char>(text[start]))) out.emplace_back(text.substr(start, i - start));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

uint64_t hash_text(std::string_view text, uint64_t seed) {
  // MurmurHash3's mixing, eight bytes a step: the file's text is hashed a few times per edit, and
  // FNV-1a's byte a step was a tenth of the instructions left.
  auto mix_word = [](uint64_t h, uint64_t word) {
    word *= 0x87c37b91114253d5ull;
    word = std::rotl(word, 31) * 0x4cf5ad432745937full;
    return std::rotl(h ^ word, 27) * 5 + 0x52dce729;
  };
  uint64_t h = 1469598103934665603ull ^ (seed * 0x9E3779B97F4A7C15ull);
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    h = mix_word(h, word);
  }
  uint64_t tail = 0;
  if (i < text.size()) std::memcpy(&tail, text.data() + i, text.size() - i);
  h = mix_word(h, tail) ^ text.size();
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

namespace {

template <class Fact, class Plain>
concept fact_of = std::same_as<std::remove_const_t<Fact>, Plain>;

// Every position a fact holds, in one walk: `step` is called on each span (a `Span&` when the fact
// is mutable) and the walk stops at the first false. Whether a fact stays, can move, widens a
// record's bounds or is moved are this one walk with different steps, so a position a fact gains
// is added here once.
template <class Step>
bool each_position(const Span& span, Step& step) {
  return step(span);
}
template <class Step>
bool each_position(Span& span, Step& step) {
  return step(span);
}

template <fact_of<Axis> A, class Step>
bool each_position(A& axis, Step& step);

template <fact_of<SizeOrigin> O, class Step>
bool each_position(O& origin, Step& step) {
  if (!each_position(origin.at, step)) return false;
  for (auto& input : origin.inputs)
    if (!each_position(input, step)) return false;
  return true;
}

template <fact_of<Axis> A, class Step>
bool each_position(A& axis, Step& step) {
  if (!each_position(axis.bound_at, step)) return false;
  if (!axis.origin) return true;
  if constexpr (std::is_const_v<A>) {
    return each_position(*axis.origin, step);
  } else {
    // An origin is shared between types: copied only when the step changes a position in it.
    bool failed = false;
    auto unchanged = [&](const Span& span) {
      Span stepped = span;
      failed = !step(stepped);
      return !failed && stepped == span;
    };
    if (each_position(std::as_const(*axis.origin), unchanged)) return true;
    if (failed) return false;
    auto origin = std::make_shared<SizeOrigin>(*axis.origin);
    if (!each_position(*origin, step)) return false;
    axis.origin = std::move(origin);
    return true;
  }
}

template <fact_of<ValueType> V, class Step>
bool each_position(V& value, Step& step) {
  for (auto& axis : value.tensor.axes)
    if (!each_position(axis, step)) return false;
  for (auto& element : value.elements)
    if (!each_position(element, step)) return false;
  return true;
}

template <fact_of<CallFacts> C, class Step>
bool each_position(C& facts, Step& step) {
  for (auto& axis : facts.works_across)
    if (!each_position(axis, step)) return false;
  return each_position(facts.callee_span, step);
}

template <fact_of<Diagnostic> D, class Step>
bool each_position(D& diagnostic, Step& step) {
  if (!each_position(diagnostic.primary.span, step)) return false;
  for (auto& label : diagnostic.secondary)
    if (!each_position(label.span, step)) return false;
  for (auto& fix : diagnostic.fixes)
    for (auto& edit : fix.edits)
      if (!each_position(edit.span, step)) return false;
  return true;
}

template <fact_of<FunctionSignature> S, class Step>
bool each_position(S& signature, Step& step) {
  for (auto& parameter : signature.parameters)
    if (!each_position(parameter, step)) return false;
  if (!each_position(signature.result, step)) return false;
  for (auto& [name, binding] : signature.scope_axes)
    if (!each_position(binding.at, step)) return false;
  return true;
}

// True when the edit moves no position in `fact`.
template <class Fact>
bool stays(const Fact& fact, const TextChange& change) {
  auto step = [&](const Span& span) {
    auto moved = change.move(span);
    return moved && *moved == span;
  };
  return each_position(fact, step);
}

bool can_move(Span span, const TextChange& change) { return change.move(span).has_value(); }

template <class Fact>
bool can_move_each(const Fact& fact, const TextChange& change) {
  auto step = [&](const Span& span) { return can_move(span, change); };
  return each_position(fact, step);
}

template <class Fact>
bool move_each(Fact& fact, const TextChange& change) {
  auto step = [&](Span& span) {
    auto moved = change.move(span);
    if (moved) span = *moved;
    return moved.has_value();
  };
  return each_position(fact, step);
}

template <class Fact>
void widen_each(PositionBounds& bounds, const Fact& fact) {
  auto step = [&](const Span& span) {
    widen(bounds, span);
    return true;
  };
  each_position(fact, step);
}

}  // namespace

bool move_spans(Axis& axis, const TextChange& change) { return move_each(axis, change); }
bool move_spans(ValueType& value, const TextChange& change) { return move_each(value, change); }
bool move_spans(CallFacts& facts, const TextChange& change) { return move_each(facts, change); }
bool move_spans(Diagnostic& diagnostic, const TextChange& change) { return move_each(diagnostic, change); }
bool move_spans(FunctionSignature& signature, const TextChange& change) { return move_each(signature, change); }

bool can_move(const ValueType& value, const TextChange& change) { return can_move_each(value, change); }
bool can_move(const CallFacts& facts, const TextChange& change) { return can_move_each(facts, change); }

void widen(PositionBounds& bounds, uint32_t offset) {
  bounds.first = std::min(bounds.first, offset);
  bounds.last = std::max(bounds.last, offset);
}

void widen(PositionBounds& bounds, Span span) {
  if (span == Span{}) return;  // no position: move leaves it as it is
  widen(bounds, span.begin);
  widen(bounds, span.end);
}

void widen(PositionBounds& bounds, const ValueType& value) { widen_each(bounds, value); }
void widen(PositionBounds& bounds, const CallFacts& facts) { widen_each(bounds, facts); }
void widen(PositionBounds& bounds, const Diagnostic& diagnostic) { widen_each(bounds, diagnostic); }
void widen(PositionBounds& bounds, const FunctionSignature& signature) { widen_each(bounds, signature); }

// Strictly apart, so that an empty span or an offset at either end of the edit, which TextChange
// may refuse to move, is never taken for one that stays or shifts.
Placement placement(PositionBounds positions, const TextChange& change) {
  if (positions.empty() || positions.last < change.begin) return Placement::after;
  if (positions.first > change.old_end) return Placement::before;
  return Placement::among;
}

PositionBounds moved_bounds(PositionBounds positions, const TextChange& change) {
  if (positions.empty()) return positions;
  // A position past the edit's start that could be moved lay past its end, so it shifted.
  auto moved = [&](uint32_t offset) { return offset <= change.begin ? offset : offset - change.old_end + change.new_end; };
  return {moved(positions.first), moved(positions.last)};
}

RecordedItem RecordedItem::of(const Item& item, Span span) {
  return {item.kind, span, item.doc, item.exported, item.body.get()};
}

}  // namespace ss

// ---------------------------------------------------------------------------------------------
// The checker's side: which functions to check again, and recording those it checks.

namespace ss {

struct Checker::Incremental {
  Analysis* previous = nullptr;  // taken apart as its records are reused
  FunctionCache* cache = nullptr;  // the previous analysis's, when its options match
  std::shared_ptr<FunctionCache> next;
  TextChange change;
  // Each global name's interface: what a function that names it can see of it.
  struct Interface {
    uint64_t hash = 0;
    std::vector<const std::vector<std::string>*> identifiers;  // each item's of that name, held by next->interface_words
  };
  std::unordered_map<std::string_view, Interface> interfaces;
  bool interfaces_unchanged = false;  // every interface as the cache's: each record's environment is as it was
};

Checker::~Checker() = default;

namespace {

// The positions of a record's hovers, definitions and model-type uses, which every kind of record has.
template <class Record>
void widen_by_facts(PositionBounds& bounds, const Analysis& analysis, const Record& record) {
  for (const HoverFact& hover : analysis.hovers.chunk(record.hovers_chunk)) widen(bounds, hover.span);
  for (const DefinitionFact& definition : analysis.definitions.chunk(record.definitions_chunk)) {
    widen(bounds, definition.use);
    widen(bounds, definition.target);
  }
  for (auto& [at, model] : record.model_type_uses) widen(bounds, at);
}

std::string options_key(const AnalyzeOptions& options, const SourceFile& file) {
  std::string key = options.serving_severity ? std::to_string(static_cast<int>(*options.serving_severity)) : "-";
  key += "\n" + options.serving_function + "\n" + options.model_forward + "\n" + (options.tokenizer_size ? "t" : "-");
  return key + "\n" + std::string(file.path());
}

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x9E3779B97F4A7C15ull + (h >> 29); }

}  // namespace

void Checker::prepare_incremental(Analysis* previous) {
  incremental_ = std::make_shared<Incremental>();
  Incremental& s = *incremental_;
  s.previous = previous;
  s.next = std::make_shared<FunctionCache>();
  a_.function_cache = s.next;  // filled as the functions are checked
  s.next->options_key = options_key(options_, a_.file);
  if (previous && previous->function_cache && previous->function_cache->options_key == s.next->options_key) {
    s.cache = previous->function_cache.get();
    s.change = TextChange::between(previous->file.text(), a_.file.text());
  }
  uint64_t names = 0, interfaces = 0;
  s.interfaces.reserve(a_.program.items.size());
  s.next->interface_words.reserve(a_.program.items.size());
  for (const Item& item : a_.program.items) {
    std::string_view name = item.name;
    if (item.kind == Item::Kind::python_import) name = name.substr(0, name.find('.'));
    // Each text is hashed once, and what depends on more than the text mixes that hash.
    uint64_t name_hash = hash_text(name);
    names = mix(mix(name_hash, static_cast<uint64_t>(item.kind)), names);
    // A function's body is its own; the rest of an item is what its users see.
    Span seen = item.span;
    if (item.kind == Item::Kind::function && item.body) seen.end = std::max(seen.begin, item.body->span.begin);
    std::string_view text = a_.file.slice(seen);
    uint64_t text_hash = hash_text(text);
    uint64_t hash = hash_text(item.doc, mix(text_hash, static_cast<uint64_t>(item.kind) * 2 + item.exported));
    if (item.kind == Item::Kind::dim) names = mix(names, hash);  // did-you-mean lists the dims that have values
    Incremental::Interface& interface = s.interfaces[name];
    interface.hash = mix(interface.hash, hash);
    interfaces = mix(mix(interfaces, name_hash), hash);
    // The words of an unchanged interface are the previous check's: reading them again is most of this loop.
    auto& words = s.next->interface_words[text_hash];
    if (!words) {
      if (s.cache)
        if (auto known = s.cache->interface_words.find(text_hash); known != s.cache->interface_words.end()) words = known->second;
      if (!words) words = std::make_shared<const std::vector<std::string>>(identifiers_in(text));
    }
    interface.identifiers.push_back(words.get());
  }
  s.next->names_hash = names;
  s.next->interfaces_hash = interfaces;
  if (s.cache) {
    // The types and call facts stay where they are, keyed by the expressions that relower_tree
    // carried over: a record taken leaves them in place (moved, where the edit moved them); what
    // is checked again is forgotten first (forget_expressions), and what the edit dropped at the end.
    a_.semantics.types = std::move(previous->semantics.types);
    a_.semantics.calls = std::move(previous->semantics.calls);
    // Most of the previous check's other facts come back, a chunk at a time: no regrowing as they do.
    a_.hovers.reserve_chunks(previous->hovers.chunk_count());
    a_.definitions.reserve_chunks(previous->definitions.chunk_count());
    a_.inlays.reserve_chunks(previous->inlays.chunk_count());
  }
  s.interfaces_unchanged = s.cache && s.cache->interfaces_hash == interfaces;
}

// The interfaces of the global names `identifiers` reach, followed through those interfaces' names.
uint64_t Checker::environment_hash(const std::vector<std::string>& identifiers) const {
  const Incremental& s = *incremental_;
  std::vector<std::pair<std::string_view, const Incremental::Interface*>> reached;
  std::unordered_set<std::string_view> seen;
  std::vector<std::string_view> queue;
  auto visit = [&](std::string_view name) {
    auto it = s.interfaces.find(name);
    if (it == s.interfaces.end() || !seen.insert(it->first).second) return;
    reached.emplace_back(it->first, &it->second);
    queue.push_back(it->first);
  };
  for (const std::string& name : identifiers) visit(name);
  while (!queue.empty()) {
    std::string_view name = queue.back();
    queue.pop_back();
    for (const std::vector<std::string>* words : s.interfaces.at(name).identifiers)
      for (const std::string& inner : *words) visit(inner);
  }
  std::sort(reached.begin(), reached.end());
  uint64_t h = reached.size();
  for (auto& [name, interface] : reached) h = mix(mix(h, hash_text(name)), interface->hash);
  return h;
}

void Checker::check_and_record(const Item& item) {
  Incremental& s = *incremental_;
  ++reuse_.functions;
  std::string_view source = a_.file.slice(item.span);
  uint64_t text_hash = hash_text(item.doc, hash_text(source, item.exported));
  if (s.cache) {
    auto [first, last] = s.cache->by_text.equal_range(text_hash);
    for (; first != last; ++first)
      if (reuse_record(s.cache->functions[first->second], item)) return;
  }
  ++reuse_.checked;
  checked_again_.insert(item.name);
  forget_expressions(item);
  FunctionRecord record;
  record.item = RecordedItem::of(item, item.span);
  record.text_hash = text_hash;
  record.identifiers = std::make_shared<const std::vector<std::string>>(identifiers_in(source));
  record.environment_hash = environment_hash(*record.identifiers);
  record.position_dependent = std::binary_search(record.identifiers->begin(), record.identifiers->end(), "experts");
  size_t diagnostics = a_.diagnostics.size(), model_type_uses = model_type_uses_.size(), work = suggestion_work_;
  begin_chunks(record);
  recording_ = &record;
  check_function(item);
  recording_ = nullptr;
  end_chunks(record);
  record.suggestion_work = suggestion_work_ - work;
  // Past the did-you-mean budget, what a function says depends on every function before it.
  if (record.reads_files || suggestion_work_ >= kSuggestionBudget) return;
  record.diagnostics.assign(a_.diagnostics.begin() + static_cast<std::ptrdiff_t>(diagnostics), a_.diagnostics.end());
  for (size_t i = model_type_uses; i < model_type_uses_.size(); ++i)
    record.model_type_uses.emplace_back(model_type_uses_[i].first, model_type_uses_[i].second->name);
  std::vector<const Expr*> expressions = expressions_of(item);
  record.expression_count = expressions.size();
  for (size_t i = 0; i < expressions.size(); ++i) {
    if (const ValueType* type = a_.semantics.types.find(expressions[i])) {
      record.typed.emplace_back(i, expressions[i]);
      widen(record.positions, *type);
    }
    if (auto facts = a_.semantics.calls.find(expressions[i]); facts) {
      record.called.emplace_back(i, expressions[i]);
      widen(record.positions, *facts);
    }
  }
  for (const Diagnostic& d : record.diagnostics) widen(record.positions, d);
  widen_by_facts(record.positions, a_, record);
  for (const InlayFact& inlay : a_.inlays.chunk(record.inlays_chunk)) widen(record.positions, inlay.offset);
  if (auto uses = uses_.find(&item); uses != uses_.end() && !uses->second.empty()) {
    for (const Use& use : uses->second) {
      widen(record.positions, use.span);
      RecordedUse recorded{use, use.callee ? use.callee->name : "", -1};
      recorded.use.callee = nullptr;
      if (use.expr) {
        auto at = std::find(expressions.begin(), expressions.end(), use.expr);
        if (at == expressions.end()) return;  // not an expression of its own: don't keep the record
        recorded.expr = at - expressions.begin();
      }
      record.uses.push_back(std::move(recorded));
    }
  }
  s.next->by_text.emplace(text_hash, s.next->functions.size());
  s.next->functions.push_back(std::move(record));
}

template <class Record>
bool Checker::can_take_facts(const Analysis& previous, const Record& record, const TextChange& change, ModelTypeUses& model_type_uses,
                             bool ask_positions) const {
  if (ask_positions) {
    for (const HoverFact& hover : previous.hovers.chunk(record.hovers_chunk))
      if (!can_move(hover.span, change)) return false;
    for (const DefinitionFact& definition : previous.definitions.chunk(record.definitions_chunk))
      if (!can_move(definition.use, change) || !can_move(definition.target, change)) return false;
  }
  for (auto& [at, model] : record.model_type_uses) {
    auto span = change.move(at);
    auto global = globals_.find(model);
    if (!span || global == globals_.end()) return false;
    model_type_uses.emplace_back(*span, global->second);
  }
  return true;
}

// `record` was moved out of the previous cache: its chunks are the previous analysis's until set
// here. Each is taken whole; its positions are moved only when the edit lies before or among them.
template <class Record>
void Checker::take_facts(Analysis& previous, Record& record, const TextChange& change, const ModelTypeUses& model_type_uses,
                         bool moves) {
  std::vector<HoverFact> hovers = previous.hovers.take_chunk(record.hovers_chunk);
  std::vector<DefinitionFact> definitions = previous.definitions.take_chunk(record.definitions_chunk);
  if (moves) {
    for (HoverFact& hover : hovers) hover.span = *change.move(hover.span);
    for (DefinitionFact& definition : definitions) {
      definition.use = *change.move(definition.use);
      definition.target = *change.move(definition.target);
    }
  }
  record.hovers_chunk = a_.hovers.add_chunk(std::move(hovers));
  record.definitions_chunk = a_.definitions.add_chunk(std::move(definitions));
  for (size_t i = 0; i < model_type_uses.size(); ++i) record.model_type_uses[i].first = model_type_uses[i].first;
  model_type_uses_.insert(model_type_uses_.end(), model_type_uses.begin(), model_type_uses.end());
}

template <class Record>
void Checker::begin_chunks(Record& record) {
  record.hovers_chunk = a_.hovers.begin_chunk();
  record.definitions_chunk = a_.definitions.begin_chunk();
  if constexpr (requires { record.inlays_chunk; }) record.inlays_chunk = a_.inlays.begin_chunk();
}

template <class Record>
void Checker::end_chunks(const Record& record) {
  a_.hovers.begin_chunk();
  a_.definitions.begin_chunk();
  if constexpr (requires { record.inlays_chunk; }) a_.inlays.begin_chunk();
}

bool Checker::same_text(Span before, Span now) const {
  const Incremental& s = *incremental_;
  if (s.change.keeps_text(before)) return true;
  return s.previous->file.slice(before) == a_.file.slice(now);
}

bool Checker::reuse_record(FunctionRecord& record, const Item& item) {
  Incremental& s = *incremental_;
  Analysis& previous = *s.previous;
  const RecordedItem& old = record.item;
  const TextChange& change = s.change;
  if (record.taken) return false;
  auto moved_item = change.move(old.span);
  if (!moved_item || !(*moved_item == item.span) || old.doc != item.doc || old.exported != item.exported ||
      !same_text(old.span, item.span))
    return false;
  if (record.position_dependent && old.span.begin != item.span.begin) return false;
  if (record.reads_all_names && s.cache->names_hash != s.next->names_hash) return false;
  if (record.suggestion_work && suggestion_work_ + record.suggestion_work >= kSuggestionBudget) return false;
  if (!s.interfaces_unchanged && environment_hash(*record.identifiers) != record.environment_hash) return false;
  for (auto& [name, lost] : record.lost_names) {
    FunctionRecord* recording = std::exchange(recording_, nullptr);
    bool now = lost_in_syntax_error(name);
    recording_ = recording;
    if (now != lost) return false;
  }
  if (record.cut_short) {
    FunctionRecord* recording = std::exchange(recording_, nullptr);
    bool now = cut_short(item);
    recording_ = recording;
    if (now != *record.cut_short) return false;
  }

  // Whether everything can be moved to where the text now is, before any of it is taken: asked of
  // each position only when the edit lies among them.
  const Placement where = placement(record.positions, change);
  const bool among = where == Placement::among, moves = where != Placement::after;
  std::vector<Diagnostic> diagnostics = record.diagnostics;
  if (moves)
    for (Diagnostic& d : diagnostics)
      if (!move_spans(d, change)) return false;
  ModelTypeUses model_type_uses;
  if (!can_take_facts(previous, record, change, model_type_uses, among)) return false;
  if (among)
    for (const InlayFact& inlay : previous.inlays.chunk(record.inlays_chunk))
      if (!change.move_offset(inlay.offset)) return false;
  // An item taken as it was (relower_tree) has the very expressions the record's types are keyed
  // by; one lowered again has new ones, found by their place in the walk.
  bool same_nodes = item.body && item.body.get() == old.body;
  std::vector<const Expr*> expressions;
  if (!same_nodes) {
    expressions = expressions_of(item);
    if (expressions.size() != record.expression_count) return false;
  }
  auto& all_types = a_.semantics.types;  // the previous check's, adopted (prepare_incremental)
  auto& all_calls = a_.semantics.calls;
  std::vector<ValueType*> types;
  std::vector<CallFacts*> calls;
  // Types the edit neither moves nor re-keys stay as they are, unlooked-at: only a check of this
  // item would have forgotten them, and then the item isn't taken.
  if (moves || !same_nodes) {
    types.reserve(record.typed.size());
    for (auto& [i, old_expr] : record.typed) {
      ValueType* type = all_types.find(old_expr);
      if (!type || (among && !can_move(*type, change))) return false;
      types.push_back(type);
    }
  }
  calls.reserve(record.called.size());
  std::vector<const Item*> callees;  // each call's function, in this program
  callees.reserve(record.called.size());
  for (auto& [i, old_expr] : record.called) {
    CallFacts* facts = all_calls.find(old_expr);
    if (!facts || (among && !can_move(*facts, change))) return false;
    const Item* callee = nullptr;
    if (facts->function) {
      auto global = globals_.find(facts->function->name);
      if (global == globals_.end()) return false;
      callee = global->second;
    }
    calls.push_back(facts);
    callees.push_back(callee);
  }
  std::vector<Use> uses;
  for (const RecordedUse& recorded : record.uses) {
    Use use = recorded.use;
    auto span = change.move(use.span);
    if (!span) return false;
    use.span = *span;
    if (!recorded.callee.empty()) {
      auto callee = globals_.find(recorded.callee);
      if (callee == globals_.end()) return false;
      use.callee = callee->second;
    }
    uses.push_back(std::move(use));
  }
  // A use names its call by its place in the walk: the very expression while the item is the same.
  for (size_t i = 0; i < uses.size(); ++i)
    uses[i].expr = record.uses[i].expr < 0 ? nullptr : same_nodes ? record.uses[i].use.expr : expressions[static_cast<size_t>(record.uses[i].expr)];

  // Taken: as if the function had been checked here. With the very expressions, the facts stay
  // in place; with new ones, each is set for its new expression (all taken out before any goes in,
  // since setting one may grow the table and so move the rest).
  if (moves)
    for (ValueType* type : types) move_spans(*type, change);
  for (size_t k = 0; k < calls.size(); ++k) {
    if (moves) move_spans(*calls[k], change);
    calls[k]->function = callees[k];
  }
  if (!same_nodes) {
    std::vector<ValueType> type_values;
    std::vector<CallFacts> call_values;
    type_values.reserve(record.typed.size());
    call_values.reserve(record.called.size());
    for (auto& [i, old_expr] : record.typed) type_values.push_back(all_types.take(old_expr));
    for (auto& [i, old_expr] : record.called) call_values.push_back(all_calls.take(old_expr));
    for (size_t k = 0; k < type_values.size(); ++k) all_types.set(expressions[record.typed[k].first], std::move(type_values[k]));
    for (size_t k = 0; k < call_values.size(); ++k) all_calls.set(expressions[record.called[k].first], std::move(call_values[k]));
  }
  FunctionRecord next = std::move(record);
  record.taken = true;
  next.item = RecordedItem::of(item, item.span);
  next.diagnostics = diagnostics;
  next.positions = moved_bounds(next.positions, change);
  for (size_t i = 0; i < uses.size(); ++i) {
    next.uses[i].use.span = uses[i].span;
    next.uses[i].use.expr = uses[i].expr;
  }
  if (!same_nodes) {
    for (auto& [i, expr] : next.typed) expr = expressions[i];
    for (auto& [i, expr] : next.called) expr = expressions[i];
  }
  take_facts(previous, next, change, model_type_uses, moves);
  std::vector<InlayFact> inlays = previous.inlays.take_chunk(next.inlays_chunk);
  if (moves)
    for (InlayFact& inlay : inlays) inlay.offset = *change.move_offset(inlay.offset);
  next.inlays_chunk = a_.inlays.add_chunk(std::move(inlays));
  a_.diagnostics.insert(a_.diagnostics.end(), std::make_move_iterator(diagnostics.begin()), std::make_move_iterator(diagnostics.end()));
  if (!uses.empty()) uses_[&item] = std::move(uses);
  suggestion_work_ += next.suggestion_work;
  s.next->by_text.emplace(next.text_hash, s.next->functions.size());
  s.next->functions.push_back(std::move(next));
  return true;
}

Span signature_span(const Item& item) {
  Span span = item.span;
  // A body that didn't parse has no span: then the signature is all there is.
  if (item.kind == Item::Kind::function && item.body && !(item.body->span == Span{})) span.end = std::max(span.begin, item.body->span.begin);
  return span;
}

std::shared_ptr<const FunctionSignature> Checker::recorded_signature(const Item& item) {
  Incremental& s = *incremental_;
  std::string_view text = a_.file.slice(signature_span(item));
  uint64_t text_hash = hash_text(text, static_cast<uint64_t>(item.kind));
  if (s.cache) {
    auto [first, last] = s.cache->signatures_by_text.equal_range(text_hash);
    for (; first != last; ++first)
      if (auto signature = reuse_signature(s.cache->signatures[first->second], item)) return signature;
  }
  SignatureRecord record;
  record.item = RecordedItem::of(item, signature_span(item));
  record.text_hash = text_hash;
  size_t diagnostics = a_.diagnostics.size(), model_type_uses = model_type_uses_.size(), work = suggestion_work_;
  begin_chunks(record);
  FunctionRecord reads;  // what signature_of read beyond the signature's names, noted as a function's check notes it
  recording_ = &reads;
  auto signature = std::make_shared<const FunctionSignature>(signature_of(item));
  recording_ = nullptr;
  end_chunks(record);
  if (a_.diagnostics.size() != diagnostics || suggestion_work_ != work || reads.reads_files || reads.reads_all_names || !reads.lost_names.empty())
    return signature;
  record.identifiers = std::make_shared<const std::vector<std::string>>(identifiers_in(text));
  record.environment_hash = environment_hash(*record.identifiers);
  for (size_t i = model_type_uses; i < model_type_uses_.size(); ++i)
    record.model_type_uses.emplace_back(model_type_uses_[i].first, model_type_uses_[i].second->name);
  record.signature = signature;
  widen(record.positions, *signature);
  widen_by_facts(record.positions, a_, record);
  record.text = signature_text(item);
  signature_texts_[&item] = record.text;
  s.next->signatures_by_text.emplace(text_hash, s.next->signatures.size());
  s.next->signatures.push_back(std::move(record));
  return signature;
}

std::shared_ptr<const FunctionSignature> Checker::reuse_signature(SignatureRecord& record, const Item& item) {
  Incremental& s = *incremental_;
  Analysis& previous = *s.previous;
  const TextChange& change = s.change;
  Span old_span = record.item.span, span = signature_span(item);
  auto moved_span = change.move(old_span);
  if (record.taken || !moved_span || !(*moved_span == span) || record.item.kind != item.kind || !same_text(old_span, span))
    return nullptr;
  if (!s.interfaces_unchanged && environment_hash(*record.identifiers) != record.environment_hash) return nullptr;

  // Everything moved to where the text now is, before any of it is taken; asked of each position
  // only when the edit lies among them.
  const Placement where = placement(record.positions, change);
  std::shared_ptr<const FunctionSignature> signature = record.signature;
  if (where != Placement::after && !stays(*signature, change)) {
    auto moved = std::make_shared<FunctionSignature>(*signature);
    if (!move_spans(*moved, change)) return nullptr;
    signature = std::move(moved);
  }
  ModelTypeUses model_type_uses;
  if (!can_take_facts(previous, record, change, model_type_uses, where == Placement::among)) return nullptr;

  // Taken: as if signature_of had run here.
  if (record.item.exported == item.exported) signature_texts_[&item] = record.text;
  SignatureRecord next = std::move(record);
  record.taken = true;
  next.item = RecordedItem::of(item, span);
  next.signature = signature;
  next.positions = moved_bounds(next.positions, change);
  take_facts(previous, next, change, model_type_uses, where != Placement::after);
  s.next->signatures_by_text.emplace(next.text_hash, s.next->signatures.size());
  s.next->signatures.push_back(std::move(next));
  return signature;
}

bool Checker::reuse_exports() {
  Incremental* s = incremental_.get();
  // What is exported, and how, is read from the interfaces alone (the signatures, dims and models):
  // while every interface is as it was, so are the exports, moved to where their names now are.
  if (!s || !s->cache || !s->interfaces_unchanged) return false;
  std::vector<ExportSignature>& exports = s->previous->exports;
  for (const ExportSignature& e : exports)
    if (!s->change.move(e.name_span)) return false;
  for (ExportSignature& e : exports) e.name_span = *s->change.move(e.name_span);
  a_.exports = std::move(exports);
  return true;
}

std::vector<ModelCost> Checker::costs_of(const std::vector<const Item*>& models) {
  Incremental* s = incremental_.get();
  // While every interface is unchanged the models are the cache's, in the same order: each keeps
  // its cost unless a function its cost may read was checked again. Taken, as the records are: a
  // model's cost holds no position, so nothing moves.
  bool cached = s && s->cache && s->interfaces_unchanged && s->cache->model_costs && s->cache->model_costs->size() == models.size() &&
                s->cache->model_cost_reads.size() == models.size();
  std::vector<ModelCost> costs;
  std::vector<std::unordered_set<std::string>> reads;
  if (cached) {
    costs = std::move(*std::exchange(s->cache->model_costs, std::nullopt));
    reads = std::move(s->cache->model_cost_reads);
  } else {
    costs.resize(models.size());
    reads.resize(models.size());
  }
  std::vector<const Item*> stale;
  std::vector<size_t> stale_at;
  for (size_t i = 0; i < models.size(); ++i)
    if (!cached || std::any_of(checked_again_.begin(), checked_again_.end(), [&](const std::string& name) { return reads[i].count(name) > 0; })) {
      stale.push_back(models[i]);
      stale_at.push_back(i);
    }
  if (!stale.empty()) {
    std::map<const Item*, ModelCost> by_model = model_costs(a_, stale);
    std::vector<std::unordered_set<std::string>> stale_reads;
    if (s) stale_reads = model_cost_reads(stale);
    for (size_t k = 0; k < stale.size(); ++k) {
      costs[stale_at[k]] = std::move(by_model.at(stale[k]));
      if (s) reads[stale_at[k]] = std::move(stale_reads[k]);
    }
  }
  if (s) {
    s->next->model_costs = costs;
    s->next->model_cost_reads = std::move(reads);
  }
  return costs;
}

// The functions each model's cost may read (model_cost.cpp): every function taking that model
// first (its forward candidates, by signature), and every function their text names, followed. A
// name, not a call: it may read more than it needs, never less.
std::vector<std::unordered_set<std::string>> Checker::model_cost_reads(const std::vector<const Item*>& models) const {
  std::unordered_map<std::string_view, std::vector<const Item*>> functions;
  for (const Item& item : a_.program.items)
    if (item.kind == Item::Kind::function || item.kind == Item::Kind::extern_fn) functions[item.name].push_back(&item);
  std::unordered_map<std::string_view, std::vector<const Item*>> taking;  // model name -> the functions taking it first
  for (const auto& [item, types] : a_.semantics.functions)
    if (!types->parameters.empty() && types->parameters[0].kind == ValueType::Kind::model) taking[types->parameters[0].name].push_back(item);
  // Each function's words as its record holds them, found by where the function starts: read only
  // here, when the costs are worked out again, rather than noted for every function on every edit.
  std::unordered_map<uint32_t, const std::vector<std::string>*> recorded_words;
  if (incremental_)
    for (const FunctionRecord& record : incremental_->next->functions) recorded_words[record.item.span.begin] = record.identifiers.get();
  std::vector<std::unordered_set<std::string>> all_reads;
  for (const Item* model : models) {
    std::unordered_set<std::string>& reads = all_reads.emplace_back();
    std::vector<const Item*> queue;
    auto reach = [&](std::string_view name) {
      auto it = functions.find(name);
      if (it == functions.end() || !reads.insert(std::string(name)).second) return;
      queue.insert(queue.end(), it->second.begin(), it->second.end());
    };
    if (auto first = taking.find(model->name); first != taking.end())
      for (const Item* item : first->second) reach(item->name);
    while (!queue.empty()) {
      const Item* item = queue.back();
      queue.pop_back();
      auto words = item->kind == Item::Kind::function ? recorded_words.find(item->span.begin) : recorded_words.end();
      if (words != recorded_words.end()) {
        for (const std::string& word : *words->second) reach(word);
      } else {
        for (const std::string& word : identifiers_in(a_.file.slice(item->span))) reach(word);
      }
    }
  }
  return all_reads;
}

template <class Record, class Check, class Keep>
void Checker::recorded_global(const Item& item, std::vector<Record> FunctionCache::*records,
                              std::unordered_multimap<uint64_t, size_t> FunctionCache::*by_text,
                              bool (Checker::*reuse)(Record&, const Item&), Check check, Keep keep) {
  Incremental& s = *incremental_;
  std::string_view text = a_.file.slice(item.span);
  uint64_t text_hash = hash_text(item.doc, hash_text(text, static_cast<uint64_t>(item.kind)));
  if (s.cache) {
    auto [first, last] = (s.cache->*by_text).equal_range(text_hash);
    for (; first != last; ++first)
      if ((this->*reuse)((s.cache->*records)[first->second], item)) return;
  }
  Record record;
  record.item = RecordedItem::of(item, item.span);
  record.text_hash = text_hash;
  size_t diagnostics = a_.diagnostics.size(), model_type_uses = model_type_uses_.size(), work = suggestion_work_;
  begin_chunks(record);
  FunctionRecord reads;  // what the check read beyond the item's names, noted as a function's check notes it
  recording_ = &reads;
  check();
  recording_ = nullptr;
  end_chunks(record);
  if (a_.diagnostics.size() != diagnostics || suggestion_work_ != work || reads.reads_files || reads.reads_all_names ||
      !reads.lost_names.empty() || !keep(record))
    return;
  record.identifiers = std::make_shared<const std::vector<std::string>>(identifiers_in(text));
  record.environment_hash = environment_hash(*record.identifiers);
  for (size_t i = model_type_uses; i < model_type_uses_.size(); ++i)
    record.model_type_uses.emplace_back(model_type_uses_[i].first, model_type_uses_[i].second->name);
  FunctionCache& next = *s.next;
  (next.*by_text).emplace(text_hash, (next.*records).size());
  (next.*records).push_back(std::move(record));
}

bool Checker::may_reuse(const GlobalRecord& record, const Item& item) const {
  const Incremental& s = *incremental_;
  const RecordedItem& old = record.item;
  auto moved_item = s.change.move(old.span);
  if (record.taken || !moved_item || !(*moved_item == item.span) || old.kind != item.kind || old.doc != item.doc ||
      !same_text(old.span, item.span))
    return false;
  // What it names (the dims in a dim's value, a model's sizes): as they were, or all interfaces are.
  return s.interfaces_unchanged || environment_hash(*record.identifiers) == record.environment_hash;
}

void Checker::recorded_dim(const Item& item) {
  recorded_global(item, &FunctionCache::dims, &FunctionCache::dims_by_text, &Checker::reuse_dim, [&] { evaluate_dim(item); },
                  [&](DimRecord& record) {
                    const KnownDim* dim = known_dim(item.name);
                    if (!dim) return false;  // no value: evaluated again on each check
                    record.value = dim->value;
                    return true;
                  });
}

bool Checker::reuse_dim(DimRecord& record, const Item& item) {
  Incremental& s = *incremental_;
  const TextChange& change = s.change;
  if (!may_reuse(record, item)) return false;
  ModelTypeUses model_type_uses;
  if (!can_take_facts(*s.previous, record, change, model_type_uses)) return false;

  // Taken: as if evaluate_dim had run here.
  DimRecord next = std::move(record);
  record.taken = true;
  next.item = RecordedItem::of(item, item.span);
  take_facts(*s.previous, next, change, model_type_uses, true);
  set_dim(item, next.value);
  s.next->dims_by_text.emplace(next.text_hash, s.next->dims.size());
  s.next->dims.push_back(std::move(next));
  return true;
}

void Checker::recorded_model(const Item& item) {
  recorded_global(item, &FunctionCache::models, &FunctionCache::models_by_text, &Checker::reuse_model,
                  [&] {
                    forget_expressions(item);
                    check_model(item);
                  },
                  [&](ModelRecord& record) {
                    if (auto fields = model_fields_.find(&item); fields != model_fields_.end()) record.fields = fields->second;
                    record.hover_text = model_hovers_.at(&item);
                    return true;
                  });
}

bool Checker::reuse_model(ModelRecord& record, const Item& item) {
  Incremental& s = *incremental_;
  Analysis& previous = *s.previous;
  const TextChange& change = s.change;
  if (!may_reuse(record, item)) return false;

  // Everything moved to where the text now is, before any of it is taken.
  std::shared_ptr<const ModelFields> fields = record.fields;
  if (fields && !std::all_of(fields->begin(), fields->end(), [&](const auto& field) { return stays(field.second, change); })) {
    auto moved = std::make_shared<ModelFields>(*fields);
    for (auto& [name, type] : *moved)
      if (!move_spans(type, change)) return false;
    fields = std::move(moved);
  }
  ModelTypeUses model_type_uses;
  if (!can_take_facts(previous, record, change, model_type_uses)) return false;

  // Taken: as if check_model had run here.
  ModelRecord next = std::move(record);
  record.taken = true;
  next.item = RecordedItem::of(item, item.span);
  take_facts(previous, next, change, model_type_uses, true);
  if (fields) model_fields_[&item] = fields;
  next.fields = std::move(fields);
  model_hovers_[&item] = next.hover_text;
  s.next->models_by_text.emplace(next.text_hash, s.next->models.size());
  s.next->models.push_back(std::move(next));
  return true;
}

// Every expression an item holds: a function's body, a model's initializers.
template <class F>
void for_each_expression_of(const Item& item, F&& f) {
  for (const Expr* e : expressions_of(item)) f(e);
  for (const Item::Param& param : item.params)
    if (param.init) for_each_expr(*param.init, [&](const Expr& e) { f(&e); });
}

void Checker::forget_expressions(const Item& item) {
  if (!incremental_ || !incremental_->cache) return;
  for_each_expression_of(item, [&](const Expr* e) {
    a_.semantics.types.erase(e);
    a_.semantics.calls.erase(e);
  });
}

void Checker::forget_dropped(const Program& previous_program) {
  // What relower_tree carried over was moved out of the previous program: what is left there is
  // what the edit dropped, and its expressions die with the previous analysis.
  // Their numbers are free for the expressions of the next edit's items (not this one's: each
  // fact of theirs was keyed by number until now).
  for (const Item& item : previous_program.items) {
    forget_expressions(item);
    for_each_expression_of(item, [&](const Expr* e) { a_.program.expr_ids.free.push_back(e->id); });
  }
}

std::unique_ptr<Analysis> analyze_incremental(SourceFile file, const SyntaxTree& tree, const AnalyzeOptions& options,
                                              Analysis* previous, CheckReuse* reuse) {
  auto analysis = std::make_unique<Analysis>();
  analysis->file = std::move(file);
  // The items an edit left alone are taken from the previous program rather than lowered again.
  analysis->program = previous ? relower_tree(analysis->file, tree, previous->file, previous->program) : lower_tree(analysis->file, tree);
  Checker checker(*analysis, options);
  checker.run(previous, true);
  if (previous) checker.forget_dropped(previous->program);
  if (reuse) *reuse = checker.reuse();
  return analysis;
}

}  // namespace ss
