// textDocument/prepareRename and textDocument/rename: the occurrences references finds, edited
// together; a new name that isn't a name, or that is taken where the symbol is seen, is refused.
#include <algorithm>

#include "answers.h"
#include "check/builtins.h"

namespace ss::lsp {

namespace {

bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80 && is_identifier_char(c); });
}

// Whether `name` is written as a whole word in `text` outside comments and strings.
bool mentions(std::string_view text, std::string_view name) {
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '#') {
      i = text.find('\n', i);
      if (i == std::string_view::npos) return false;
    } else if (c == '"') {
      i = text.find('"', i + 1);
      if (i == std::string_view::npos) return false;
      ++i;
    } else if (is_identifier_char(c)) {
      size_t end = i;
      while (end < text.size() && is_identifier_char(text[end])) ++end;
      if (text.substr(i, end - i) == name) return true;
      i = end;
    } else {
      ++i;
    }
  }
  return false;
}

const Item* item_around(const Analysis& analysis, Span span) {
  for (const Item& item : analysis.program.items)
    if (item.span.begin <= span.begin && span.end <= item.span.end) return &item;
  return nullptr;
}

// The occurrences at `offset`, all spelled as the declaration is; throws RequestFailed otherwise.
Occurrences renameable(const Analysis& analysis, uint32_t offset) {
  auto found = occurrences(analysis, offset);
  if (!found) throw RequestFailed("there is no name here that can be renamed (built-ins and keywords can't be)");
  std::string old_name(analysis.file.slice(found->declaration));
  if (!is_identifier(old_name)) throw RequestFailed("`" + old_name + "` can't be renamed");
  for (Span use : found->uses)
    if (analysis.file.slice(use) != old_name) throw RequestFailed("`" + old_name + "` is used here in a way rename can't edit");
  // Two patterns of one function that both solve `m` label their tensors' axes alike, and `over=m`
  // matches the label: renaming one of them would change which axis a later use means.
  if (const Item* home = item_around(analysis, found->declaration))
    for (const DefinitionFact& fact : analysis.definitions)
      if (fact.target != found->declaration && analysis.file.slice(fact.target) == old_name && item_around(analysis, fact.target) == home)
        throw RequestFailed("`" + old_name + "` is also named by another pattern of `" + home->name +
                            "`, and a use of the name may mean either: rename it by hand");
  return *found;
}

}  // namespace

json prepare_rename(const Analysis& analysis, const Converter& at, uint32_t offset) {
  Occurrences found = renameable(analysis, offset);
  Span here = found.declaration;
  for (Span use : found.uses)
    if (use.contains(offset) || use.end == offset) here = use;
  return {{"range", at.range(here)}, {"placeholder", std::string(analysis.file.slice(found.declaration))}};
}

json rename(const Analysis& analysis, const Converter& at, uint32_t offset, const std::string& new_name) {
  Occurrences found = renameable(analysis, offset);
  std::string old_name(analysis.file.slice(found.declaration));
  if (!is_identifier(new_name)) throw RequestFailed("`" + new_name + "` is not a name: use letters, digits and _, not starting with a digit");
  for (const char* keyword : kKeywords)
    if (new_name == keyword) throw RequestFailed("`" + new_name + "` is a keyword");
  json edits = json::array();
  if (new_name != old_name) {
    if (find_builtin(new_name)) throw RequestFailed("`" + new_name + "` is a built-in");
    if (const Item* item = analysis.find_item(new_name)) throw RequestFailed("`" + new_name + "` is already declared at line " +
                                                                            std::to_string(at.document().position_of(item->name_span.begin).line + 1));
    // Seen only inside one item (a local, a parameter, an axis): the new name must be free there;
    // seen across items (a dim, a fn, a model param): free in the whole file.
    const Item* home = item_around(analysis, found.declaration);
    for (Span use : found.uses)
      if (!home || item_around(analysis, use) != home) home = nullptr;
    std::string_view text = analysis.file.text();
    std::string_view region = home ? text.substr(home->span.begin, home->span.end - home->span.begin) : text;
    if (mentions(region, new_name))
      throw RequestFailed("`" + new_name + "` is already used " + (home ? "in `" + home->name + "`" : std::string("in this file")));
    edits.push_back({{"range", at.range(found.declaration)}, {"newText", new_name}});
    for (Span use : found.uses) edits.push_back({{"range", at.range(use)}, {"newText", new_name}});
  }
  return {{"changes", {{at.uri(), edits}}}};
}

}  // namespace ss::lsp
