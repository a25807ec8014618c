// Multi-head latent attention (DeepSeek's MLA), found in what a function computes: keys and values
// that every head gets from one projection of a narrower per-token latent, plus one rotary key part
// all heads share. An engine that knows it caches the latent and the shared part instead of every
// head's keys and values (vLLM's MLA layer, llama.cpp's deepseek2): 576 numbers a token and layer at
// DeepSeek-V3's sizes, where its 128 heads' keys and values are 40,960.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "check/analysis.h"

namespace ss {

struct LatentAttention {
  const Expr* attention = nullptr;  // the `scaled_dot_product_attention(q, k, v, ...)` call
  const Expr* latent = nullptr;     // z, `[b n C]`: what the expansion projects (DeepSeek's normed kv latent)
  const Expr* expansion = nullptr;  // `linear(z, W)`: the one projection both k and v come from
  std::string shared_key;           // r, `[b 1 n Dr]`: the variable k takes besides the expansion
  const Expr* shared_read = nullptr;  // where k's assignment reads r
  std::set<size_t> expanding;       // the body's statements that compute k and v from z and r alone
  int64_t heads = 0, latent_size = 0, shared_size = 0, nope_size = 0, value_size = 0;
};

// `fn`'s latent attention, where its body is straight-line, calls attention once with k and v named,
// and k and v read `inputs` (its parameters that aren't weights) only through one `linear(z, W)` and
// one variable r shared by the heads; nullopt otherwise. The statements in `expanding` define nothing
// any other statement reads, and z and r read the same values at the attention as where they are written.
std::optional<LatentAttention> find_latent_attention(const Analysis& analysis, const Item& fn, const std::set<std::string>& inputs);

}  // namespace ss
