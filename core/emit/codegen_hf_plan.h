// What a Hugging Face folder's code must contain, as plain data: codegen_hf.cpp decides it from the
// checked program (which functions become modules, which weights become which layers, what each
// forward computes), and emit_hf (codegen_hf_emit.cpp) writes it out with the fixed parts of the
// files, which are templates in core/emit/templates/.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ss {

// One line of a module's __init__: a weight as its layer or parameter, or a submodule.
struct HfMember {
  enum class Kind { linear, embedding, parameter, submodule, experts, norm };
  Kind kind = Kind::parameter;
  std::string attr;               // `w_qkv`
  std::vector<std::string> axes;  // the weight's sizes as Python (`3 * D`, `D`), one block's for a stacked one; experts: E, F, D
  std::string module_class;       // submodule: its class
  std::string blocks;             // a block's member that only some blocks have: the Python condition on `layer_idx`; empty: every block
  std::string eps;                // norm: its eps as Python
};

// An nn.Module: a block (ShapeScriptDecoderLayer) or a function with weights.
struct HfModuleClass {
  std::string name;
  std::string doc;                  // its docstring's text
  bool attention = false;           // it calls an attention the engine replaces
  std::string scaling;              // attention: its scale as Python (`16 ** -0.5`)
  int64_t key_value_groups = 1;     // attention: query heads per key-value head
  int64_t sliding_window = 0;       // attention: `window=`, or 0
  bool window_by_layer = false;     // only the blocks config.layer_types says slide have the window
  std::vector<HfMember> members;
  std::vector<std::string> inputs;  // forward's parameters besides self (attention_mask and kwargs follow)
  std::string body;                 // forward's body, indented for a method
  std::string methods;              // its other methods (a latent attention's `expand_kv`), as Python
};

struct HfModelingPlan {
  std::string source;  // the .ss file's name, as the generated comments cite it
  bool causal_lm = false;

  // The module's top: what the code below uses.
  bool imports_math = false, imports_einops = false, defines_mode = false, defines_causal = false, defines_window = false,
       defines_within_window = false, defines_experts = false, defines_attention = false, defines_packed_experts = false,
       defines_norm = false;
  // torch's fused attention has no softcap or sinks, so transformers must pick the eager one.
  bool supports_sdpa = true;
  std::vector<std::pair<std::string, int64_t>> dims;  // Python name and value
  std::vector<std::string> functions;                 // functions without weights, as Python

  // A language model (causal_lm): its modules, in the order each is first needed after the ones it uses.
  std::vector<HfModuleClass> modules;
  HfModuleClass layer;  // ShapeScriptDecoderLayer
  std::string base_doc;
  std::vector<HfMember> base_members;  // ShapeScriptModel's, besides embed_tokens and layers
  std::string positions;  // the forward's positions parameter as Python; empty when it takes none
  std::string base_body;  // ShapeScriptModel.forward from the embeddings to `hidden_states`
  std::string output_line;  // the source line of the output layer, for its comment
  bool output_bias = false;  // lm_head has a bias
  std::string after_output;      // what follows the output layer, as a method's body on `logits`; empty: nothing
  std::string after_output_doc;  // its docstring's text
  std::string function;         // the forward's name
  std::string function_python;  // and as Python
  bool tied = false;
  bool cache = false;  // servable: a key-value cache is sound
  std::vector<std::pair<std::string, std::string>> tp_plan;  // module path -> "colwise", "rowwise" or "replicate"

  // Any other function: the compiled module and a wrapper that holds the model's parameters.
  std::string module;     // the pt2 code generator's module
  std::string signature;  // `forward(m: Tiny, x: [b D]) -> [b D]`, for the docstring
  std::vector<HfMember> parameters;
  std::vector<std::string> inputs, call_arguments;
};

struct HfFiles {
  std::string configuration;  // configuration_shapescript.py
  std::string modeling;       // modeling_shapescript.py
};

HfFiles emit_hf(const HfModelingPlan& plan);

}  // namespace ss
