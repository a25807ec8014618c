// textDocument/documentSymbol: the core's outline of the file (document_symbols), items with their params.
#include "answers.h"

namespace ss::lsp {

namespace {

namespace symbol_kind {
constexpr int module = 2, class_ = 5, field = 8, function = 12, constant = 14;
}

json symbol_to_lsp(const SymbolFact& symbol, const Converter& at) {
  int kind = symbol_kind::function;
  switch (symbol.kind) {
    case SymbolFact::Kind::dim: kind = symbol_kind::constant; break;
    case SymbolFact::Kind::python_import: kind = symbol_kind::module; break;
    case SymbolFact::Kind::extern_fn:
    case SymbolFact::Kind::function: kind = symbol_kind::function; break;
    case SymbolFact::Kind::model: kind = symbol_kind::class_; break;
    case SymbolFact::Kind::param: kind = symbol_kind::field; break;
  }
  Span range = symbol.span;
  Span selection = symbol.name_span;
  if (selection.empty() || selection.begin < range.begin || selection.end > range.end) selection = {range.begin, range.begin};
  json out = {{"name", symbol.name.empty() ? std::string("?") : symbol.name},
              {"kind", kind},
              {"range", at.range(range)},
              {"selectionRange", at.range(selection)}};
  if (!symbol.detail.empty()) out["detail"] = symbol.detail;
  if (!symbol.children.empty()) {
    json children = json::array();
    for (const SymbolFact& child : symbol.children) children.push_back(symbol_to_lsp(child, at));
    out["children"] = std::move(children);
  }
  return out;
}

}  // namespace

json document_symbols(const Analysis& analysis, const Converter& at) {
  json out = json::array();
  for (const SymbolFact& symbol : ss::document_symbols(analysis)) out.push_back(symbol_to_lsp(symbol, at));
  return out;
}

}  // namespace ss::lsp
