// A language model's layout: `forward(m, ids[, pos])` embeds the token ids with a table of the
// model, runs its blocks in one `for` over parameters stacked along the blocks axis, and ends with
// the output layer `linear(h, m.W[, m.b])`, possibly followed by elementwise operations on the
// logits (a `scale`, a softcap `tanh(z / c) * c`). Found once in a checked program, as plain data, and read by
// everything that takes a language model apart: the serving rules (E33xx), the Hugging Face
// generator, the tensor-parallel planner and the GGUF export. Each reader decides what it needs
// of it and says so in its own words; the layout only records what is there.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/analysis.h"
#include "check/builtins.h"

namespace ss {

// One operation on the logits after the output layer, in the order the forward applies them.
struct OutputOp {
  enum class Kind { scale, softcap, other };
  Kind kind = Kind::other;
  Span span;
  double value = 0;  // scale: its factor; softcap: its cap c in `tanh(z / c) * c`; other: unused
};

// Why a tool can't take the forward apart as a language model: where, and the rule it breaks.
struct ModelRefusal {
  Span span;
  std::string rule;  // completes "`forward` isn't a language model's forward: "
};

// An encoder's input after the model, by what it is to the engines (transformers' keyword):
// the token ids `[b n] Index[V]` or the pixels (a `Real` tensor), then token types `[b n] Index[T]`
// and a padding mask `[b n] Bool` (true where a token is attended to), in any order.
struct ModelInput {
  enum class Role { ids, pixels, token_types, mask };
  Role role = Role::ids;
  std::string name;
  Span span;
};
const char* input_role_name(ModelInput::Role role);  // "ids", "pixels", "token_types", "mask"

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
  // The output layer, `linear(h, m.W[, m.b])` whose value (after `after_output`) the forward's last
  // statement returns, and its weight's and bias's fields (output_bias: empty without one).
  const Expr* output = nullptr;
  std::string output_layer, output_bias;
  size_t output_at = 0;  // the index of the statement that computes it
  // What happens to the logits between the output layer and the return, in order.
  std::vector<OutputOp> after_output;
  bool tied = false;  // the output layer's weight is the embedding table
  // Why it isn't a language model's forward, first reason first; empty when it is one.
  std::vector<ModelRefusal> refusals;

  // The loop over blocks: the first `for` among the forward's statements.
  const Statement* loop = nullptr;
  size_t loop_at = 0;                     // its index among the forward's statements
  size_t loops = 0;                       // how many `for`s there are (one, for a language model)
  std::optional<int64_t> loop_start, layers;  // its bounds, where they are fixed numbers (`0..L`)
  // The fields the blocks read as one block's slice, `m.w[l]`, in the order the blocks first use them.
  std::vector<std::string> stacked;
  // Every field that an `embedding` in the forward reads rows of (the token table, a position table).
  std::vector<std::string> embedding_tables;

  // An encoder's forward (BERT, ViT): the model, then its inputs (`inputs`), attention that sees
  // every position (no `causal`, no window), blocks in a `for`, a `Real` tensor returned (the last
  // hidden state) and no output layer over a vocabulary. Why not, in `encoder_refusals`.
  std::vector<ModelInput> inputs;
  std::vector<ModelRefusal> encoder_refusals;

  // forward(m: Model, ids: [b n] Index[V], …) that ends with linear(h, m.W): what the generators
  // translate as a language model; the rest they treat as any function.
  bool is_language_model() const { return model && takes_ids && output && refusals.empty(); }
  bool is_encoder() const { return model && !is_language_model() && !inputs.empty() && encoder_refusals.empty(); }
  // `m.W`: the field of the model that `e` names, if it names one.
  std::optional<std::string> model_field(const Expr* e) const;
};

// The first operation after the output layer that a logits processor which caps the logits
// (`tanh(z / c) * c`), then scales them, as vLLM's does, can't apply, and what it lacks.
std::optional<std::pair<const OutputOp*, std::string>> logits_processor_lacks(const ModelLayout& layout);

// `e` is a call of a built-in of `role` (the passes that take a model apart match built-ins by role,
// never by name); *facts_out, when given, becomes the call's facts whatever the role.
bool is_builtin_call(const Analysis& analysis, const Expr& e, BuiltinRole role, const CallFacts** facts_out = nullptr);

// A number written with literals, dims and `sqrt`/`exp`/`log` of them (`1 / sqrt(D)`, `30.0`).
std::optional<double> fixed_real(const Analysis& analysis, const Expr* e);

ModelLayout find_model_layout(const Analysis& analysis, const std::string& function);

// A size written with numbers and dims (`3 * D`, `(H Dh)`); without a value, *generic (when
// given) names the first dim that has none.
std::optional<int64_t> fixed_size(const Analysis& analysis, const SizeNode& node, std::string* generic = nullptr);

// What a tool that reads a language model's weights and runs its compiled forward needs of it
// (import-weights, verify, --gguf): read off the layout and the checked types, so a model whose
// blocks the Hugging Face generator can't translate still has its weights imported.
struct LanguageModelFacts {
  std::string error;  // why it has none, as `where: what`; empty when it has them
  bool encoder = false;  // an encoder's (ModelLayout::is_encoder): vocab is its ids' table's rows, 0 for pixels
  std::string model_name;
  std::vector<std::pair<std::string, std::vector<int64_t>>> parameters;  // each param's name and fixed sizes
  int64_t layers = 0, vocab = 0;
  bool takes_positions = false;
  int64_t max_positions = 0;   // P of `pos: [b n] Index[P]`; 0 without positions
  int64_t sliding_window = 0;  // the widest `window=` of any attention the forward reaches; 0: none
  // Each block's window, as transformers' `layer_types` says it: the `window=` of the attention that
  // block runs (an `if` on the block's index decides which), 0 where it sees every earlier position.
  std::vector<int64_t> layer_windows;
};

// The `window=` (0: none) of each `scaled_dot_product_attention` each block runs, block by block:
// the loop's body walked with the block's index known, an `if` on it taking one branch, the
// functions it calls followed. An `if` that isn't decided per block counts all its branches.
std::vector<std::vector<int64_t>> attention_windows_per_block(const Analysis& analysis, const ModelLayout& layout);

// The blocks' weights, block by block: the slice of each stacked field a block reads (`m.w[l]`;
// `m.w[l - Ld]` in the blocks after Ld dense ones; any index known per block), so a field may be
// stacked over a run of the blocks, or several runs, as transformers' DeepseekV3 builds its first
// `first_k_dense_replace` layers with a dense MLP and the rest with experts; several blocks may read
// one slice (`m.w[(l % 2) as Index[2]]`: weights shared by every other block). An `if` on the block's
// index takes one branch; one not decided per block, all of them.
struct BlockSlices {
  std::vector<std::map<std::string, int64_t>> per_block;  // block -> field -> its index along the field's first axis
  std::vector<ModelRefusal> refusals;  // an index not known per block; a field read at two indices in one block
};
BlockSlices block_slices(const Analysis& analysis, const ModelLayout& layout);

// Of a layout that is a language model's (refusals empty) or an encoder's; `where` names a span as `file:line:col`.
LanguageModelFacts language_model_facts(const Analysis& analysis, const ModelLayout& layout,
                                        const std::function<std::string(Span)>& where);

}  // namespace ss
