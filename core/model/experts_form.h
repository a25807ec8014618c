// Which sparse experts an engine's fused kernel computes. vLLM's FusedMoE (what its Transformers
// backend swaps in for a child named `experts` of packed 3-D weights) runs a gated expert with SiLU
// only: silu(rows g[e]ᵀ) * (rows u[e]ᵀ), then d[e]. `--hf` packs experts of that form; the serving
// rules say where vLLM instead runs the folder's own loop over experts.
#pragma once
#include <optional>

#include "check/analysis.h"

namespace ss {

// The weights of `experts(x, chosen, weights, e => rows => linear(silu(linear(rows, g[e])) *
// linear(rows, u[e]), d[e]))` (the product either way round, no biases): the expressions `g`, `u`, `d`
// as written, each indexed by the expert only.
struct GatedExperts {
  const Expr* gate = nullptr;
  const Expr* up = nullptr;
  const Expr* down = nullptr;
};

// `call`'s weights when it is an `experts` call of that form; nullopt otherwise.
std::optional<GatedExperts> gated_experts(const Analysis& analysis, const Expr& call);

}  // namespace ss
