// textDocument/hover: the innermost hover fact at the cursor.
#include "answers.h"

namespace ss::lsp {

json hover(const Analysis& analysis, const Converter& at, uint32_t offset, Markup markup) {
  const HoverFact* fact = innermost(analysis.hovers, offset, [](const HoverFact& h) { return h.span; });
  if (!fact) return nullptr;
  return {{"contents", markup_content(fact->text, markup)}, {"range", at.range(fact->span)}};
}

}  // namespace ss::lsp
