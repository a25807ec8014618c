// textDocument/inlayHint: each assignment's inferred type, after the assigned name.
#include "answers.h"

namespace ss::lsp {

json inlay_hints(const Analysis& analysis, const Converter& at, uint32_t begin, uint32_t end) {
  json out = json::array();
  for (const InlayFact& inlay : analysis.inlays) {
    if (inlay.offset < begin || inlay.offset > end) continue;
    out.push_back({{"position", at.position(inlay.offset)}, {"label", inlay.label}, {"kind", 1}, {"paddingLeft", false}, {"paddingRight", false}});
  }
  return out;
}

}  // namespace ss::lsp
