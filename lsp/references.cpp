// textDocument/references, and the occurrences of a symbol that rename edits too: both are read
// off the core's definition facts (each use → the span of what it names).
#include <algorithm>

#include "answers.h"

namespace ss::lsp {

namespace {

// The declaration a name at `offset` stands for: the target of a use there, a declaration there
// that has uses, or an item's, a parameter's or a model param's name there (which may have none).
std::optional<Span> declaration_at(const Analysis& analysis, uint32_t offset) {
  auto smallest = [&](auto spans) -> std::optional<Span> {
    std::optional<Span> best;
    for (int pass = 0; pass < 2 && !best; ++pass)  // a name just before the cursor counts when none is under it
      for (auto [span, target] : spans) {
        bool inside = pass == 0 ? span.contains(offset) : (span.end == offset && !span.empty());
        if (inside && (!best || span.end - span.begin < best->end - best->begin)) best = target;
      }
    return best;
  };
  std::vector<std::pair<Span, Span>> uses, declarations;
  for (const DefinitionFact& fact : analysis.definitions) {
    uses.emplace_back(fact.use, fact.target);
    declarations.emplace_back(fact.target, fact.target);
  }
  for (const Item& item : analysis.program.items) {
    declarations.emplace_back(item.name_span, item.name_span);
    for (const Parameter& p : item.parameters) declarations.emplace_back(p.name_span, p.name_span);
    for (const Item::Param& p : item.params) declarations.emplace_back(p.name_span, p.name_span);
  }
  if (auto target = smallest(uses)) return target;
  return smallest(declarations);
}

}  // namespace

std::optional<Occurrences> occurrences(const Analysis& analysis, uint32_t offset) {
  auto target = declaration_at(analysis, offset);
  if (!target || target->empty()) return std::nullopt;
  Occurrences out{*target, {}};
  for (const DefinitionFact& fact : analysis.definitions)
    if (fact.target == *target) out.uses.push_back(fact.use);
  // The checker may visit a use more than once (a signature is resolved per call).
  std::sort(out.uses.begin(), out.uses.end(), [](Span a, Span b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  out.uses.erase(std::unique(out.uses.begin(), out.uses.end()), out.uses.end());
  return out;
}

json references(const Analysis& analysis, const Converter& at, uint32_t offset, bool include_declaration) {
  auto found = occurrences(analysis, offset);
  if (!found) return nullptr;
  json out = json::array();
  if (include_declaration) out.push_back(at.location(found->declaration));
  for (Span use : found->uses) out.push_back(at.location(use));
  return out;
}

}  // namespace ss::lsp
