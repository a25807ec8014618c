// A language model's layout: `forward(m, ids[, pos])` embeds the token ids with a table of the
// model, runs its blocks in one `for` over parameters stacked along the blocks axis, and returns
// the output layer `linear(h, m.W)`. Found once in a checked program, as plain data, and read by
// everything that takes a language model apart: the serving rules (E33xx), the Hugging Face
// generator, the tensor-parallel planner and the GGUF export. Each reader decides what it needs
// of it and says so in its own words; the layout only records what is there.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/analysis.h"

namespace ss {

struct ModelLayout {
  std::string function;                   // the forward's name, as asked for
  const Item* forward = nullptr;          // the function; null when the file has none of that name
  const FunctionTypes* types = nullptr;   // its checked signature; null when it has none
  const Item* model = nullptr;            // the model it takes first; null when it takes none
  std::string model_var, ids_var, pos_var;  // its parameters' names; pos_var is empty without a third
  bool takes_ids = false;                 // its second parameter is a matrix of indices, `[b n] Index[V]`

  // Every `embedding(ids, …)` in the forward, in source order (the serving rules want exactly one).
  std::vector<const Expr*> ids_embeddings;
  // The token embedding, `embedding(ids, m.E)` before the loop over blocks, and its table's field.
  const Expr* token_embedding = nullptr;
  std::string embedding;
  // The output layer, `linear(h, m.W)` that the forward's last statement returns, and its weight's field.
  const Expr* output = nullptr;
  std::string output_layer;
  bool tied = false;  // the output layer's weight is the embedding table

  // The loop over blocks: the first `for` among the forward's statements.
  const Statement* loop = nullptr;
  size_t loop_at = 0;                     // its index among the forward's statements
  size_t loops = 0;                       // how many `for`s there are (one, for a language model)
  std::optional<int64_t> loop_start, layers;  // its bounds, where they are fixed numbers (`0..L`)
  // The fields the blocks read as one block's slice, `m.w[l]`, in the order the blocks first use them.
  std::vector<std::string> stacked;
  // Every field that an `embedding` in the forward reads rows of (the token table, a position table).
  std::vector<std::string> embedding_tables;

  // forward(m: Model, ids: [b n] Index[V], …) that returns linear(h, m.W): what the generators
  // translate as a language model; the rest they treat as any function.
  bool is_language_model() const { return model && takes_ids && output; }
  // `m.W`: the field of the model that `e` names, if it names one.
  std::optional<std::string> model_field(const Expr* e) const;
};

ModelLayout find_model_layout(const Analysis& analysis, const std::string& function);

}  // namespace ss
