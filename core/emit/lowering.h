// How each built-in is written in PyTorch; the table in builtins.cpp names these.
#pragma once
#include <string>

#include "check/builtins.h"

namespace ss {

#define SHAPESCRIPT_LOWERINGS(X)                                                                          \
  X(rearrange) X(split) X(einsum) X(scale) X(masked_fill) X(causal) X(softmax) X(log_softmax) X(linear)  \
  X(embedding) X(rms_norm) X(layer_norm) X(sqrt) X(exp) X(log) X(sin) X(cos) X(tanh) X(sigmoid) X(relu) \
  X(silu) X(gelu) X(abs) X(sum) X(mean) X(max) X(min) X(concat) X(map) X(cross_entropy) X(normal)       \
  X(ones) X(zeros) X(scaled_dot_product_attention) X(dropout) X(training) X(where) X(clamp) X(minimum) X(maximum) X(stack)  \
  X(full) X(expand) X(topk) X(experts) X(conv1d) X(conv2d) X(max_pool2d) X(avg_pool2d) X(adaptive_avg_pool2d) X(interpolate)

#define SHAPESCRIPT_DECLARE_LOWERING(name) std::string lower_##name(const LowerContext& c);
SHAPESCRIPT_LOWERINGS(SHAPESCRIPT_DECLARE_LOWERING)
#undef SHAPESCRIPT_DECLARE_LOWERING

}  // namespace ss
