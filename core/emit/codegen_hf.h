// The Hugging Face code generator: a checked model's forward becomes a transformers model folder's
// code (configuration_shapescript.py, modeling_shapescript.py) that vLLM's Transformers backend can
// serve: the token embedding, each attention and the output layer are the parts an engine replaces.
#pragma once
#include <string>
#include <vector>

#include "check/analysis.h"
#include "model/model_layout.h"

namespace ss {

// One tensor of the folder's model.safetensors: a ShapeScript parameter, or one block's slice of a
// parameter stacked along the blocks axis.
struct HfTensor {
  std::string source;  // the model's parameter (`w_qkv`)
  int64_t layer = -1;  // the block's index into the stacked axis; -1 for the whole parameter
  std::string key;     // the transformers state-dict key (`model.layers.0.attention.w_qkv.weight`)
  // A tensor packed from several parameters' slices (experts' gate_up_proj [E 2F D]): them in order,
  // joined along axis 1 of each slice; empty: `source` alone.
  std::vector<std::string> parts;
};

struct HfParameter {
  std::string name;
  std::vector<int64_t> shape;
};

// The width of the latent and shared key part vLLM 0.32's MLA kernels cache per token (CPU, FlashMLA,
// FlashAttention MLA: kv_lora_rank 512 + qk_rope_head_dim 64).
constexpr int64_t kMlaCacheWidth = 576;

struct HfModel {
  std::string error;  // non-empty: what couldn't be translated (the rest is then meaningless)
  std::string configuration;  // configuration_shapescript.py
  std::string modeling;       // modeling_shapescript.py
  std::vector<std::pair<std::string, std::string>> config;  // config.json: key and its value as JSON text
  std::vector<HfTensor> tensors;
  std::vector<HfParameter> parameters;  // the model's parameters, as --weights must give them
  std::string model_name;               // the ShapeScript model (`Tiny`); empty when the function takes none
  std::string function;                 // the function compiled as the forward
  bool causal_lm = false;               // a language model: ShapeScriptForCausalLM and its lm_head
  bool tied = false;                    // the output layer is the embedding table
  int64_t layers = 0, attention_layers = 0, heads = 0, vocab = 0;
  // A latent attention's (model/latent_attention.h): what its cache holds a token and layer, the latent
  // and the shared key part (C + Dr); 0 where the cache holds every head's keys and values.
  int64_t latent_cache = 0;
  bool takes_positions = false;
  int64_t max_positions = 0;
  int64_t sliding_window = 0;  // its blocks' attention sees only this many positions (`window=`); 0: all
  std::string not_servable;  // why vLLM can't serve it (the serving rules' reason first); empty: it can
};

// Translates the function `layout` was found for (a model's forward, or with a model's parameters
// any function) of a file without errors.
HfModel generate_hf(const Analysis& analysis, const ModelLayout& layout);

}  // namespace ss
