// A tensor-parallel plan for a language model's blocks: which weights `linear` uses can be split
// across devices by output rows ("colwise") or input columns ("rowwise", its outputs summed), so
// that every device holds some of the heads and some of the feed-forward features, as vLLM's
// ColumnParallelLinear and RowParallelLinear do. Found by following, through the block and every
// function it calls, which axis of each value is split: nothing is assumed of names.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "check/analysis.h"
#include "model/model_layout.h"

namespace ss {

// The plan for the blocks of a language model (`layout.loop`'s body, its model `layout.model_var`):
// model field -> "colwise" or "rowwise", for every field `linear` uses there. Nothing when some value
// would be split where the computation needs it whole (a fused projection split by `split`, a
// norm over split features, a block that returns split values...): the caller then replicates.
std::optional<std::map<std::string, std::string>> tensor_parallel_plan(const Analysis& analysis, const ModelLayout& layout);

}  // namespace ss
