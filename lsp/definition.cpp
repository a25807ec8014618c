// textDocument/definition: the target of the innermost use at the cursor.
#include "answers.h"

namespace ss::lsp {

json definition(const Analysis& analysis, const Converter& at, uint32_t offset) {
  const DefinitionFact* fact = innermost(analysis.definitions, offset, [](const DefinitionFact& d) { return d.use; });
  if (!fact) return nullptr;
  return at.location(fact->target);
}

}  // namespace ss::lsp
