// Writes a Hugging Face folder's code from its plan (codegen_hf_plan.h): the plan's parts in the
// fixed text of core/emit/templates/hf_*.py.tmpl. Text from the source (the file's name, docs,
// source lines) goes in as docstring() literals or comment_text() on a comment's line, never raw.
#include "emit/codegen_hf_plan.h"
#include "emit/python_writer.h"
#include "emit/text_template.h"

namespace ss {

namespace {

using pywrite::comment_text;
using pywrite::docstring;

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// `, a, b` after `self`: nothing when there are none.
std::string after_self(const std::vector<std::string>& parts) { return parts.empty() ? "" : ", " + joined(parts); }

std::string members(const std::vector<HfMember>& list) {
  std::string out;
  for (const HfMember& m : list) {
    std::string made;
    switch (m.kind) {
      case HfMember::Kind::linear: made = "nn.Linear(" + m.axes[1] + ", " + m.axes[0] + ", bias=False)"; break;
      case HfMember::Kind::embedding: made = "nn.Embedding(" + m.axes[0] + ", " + m.axes[1] + ")"; break;
      case HfMember::Kind::parameter: made = "nn.Parameter(torch.empty(" + joined(m.axes) + "))"; break;
      case HfMember::Kind::submodule: made = m.module_class + "(config, layer_idx)"; break;
      case HfMember::Kind::experts: made = m.module_class + "(" + joined(m.axes) + ")"; break;
      case HfMember::Kind::norm: made = "ShapeScriptRMSNorm(" + m.axes[0] + ", eps=" + m.eps + ")"; break;
    }
    if (!m.blocks.empty()) out += "        if " + m.blocks + ":  # the blocks whose weights include it\n    ";
    out += "        self." + m.attr + " = " + made + "\n";
  }
  return out;
}

// A helper's definition placed on its own template line, which ends it.
std::string helper(std::string_view definition) { return std::string(definition.substr(0, definition.size() - 1)); }

std::string module_class(const HfModuleClass& c) {
  TemplateValues values;
  values.text = {{"name", c.name},
                 {"doc", docstring(c.doc, 1)},
                 {"scaling", c.scaling},
                 {"key_value_groups", std::to_string(c.key_value_groups)},
                 {"sliding_window", std::to_string(c.sliding_window)},
                 {"members", members(c.members)},
                 {"inputs", after_self(c.inputs)},
                 {"body", c.body},
                 {"methods", c.methods}};
  values.flags = {{"attention", c.attention},
                 {"windowed", c.sliding_window > 0 && !c.window_by_layer},
                 {"window_by_layer", c.sliding_window > 0 && c.window_by_layer}};
  return fill_template(embedded_template("hf_module.py.tmpl"), values);
}

std::string configuration(const HfModelingPlan& plan) {
  std::string tp_plan;
  for (auto& [module, style] : plan.tp_plan) tp_plan += (tp_plan.empty() ? "" : ", ") + ("\"" + module + "\": \"" + style + "\"");
  TemplateValues values;
  values.text = {{"source", comment_text(plan.source)}, {"tp_plan", tp_plan}};
  values.flags = {{"causal_lm", plan.causal_lm}};
  return fill_template(embedded_template("hf_configuration.py.tmpl"), values);
}

std::string causal_lm(const HfModelingPlan& plan) {
  std::string dims, functions, modules;
  for (auto& [name, value] : plan.dims) dims += name + " = " + std::to_string(value) + "\n";
  for (const std::string& f : plan.functions) functions += "\n\n" + f;
  for (const HfModuleClass& c : plan.modules) modules += "\n\n" + module_class(c);
  modules += "\n\n" + module_class(plan.layer);
  TemplateValues values;
  values.text = {{"source", comment_text(plan.source)},
                 {"dims", dims},
                 {"functions", functions},
                 {"modules", modules},
                 {"base_doc", docstring(plan.base_doc, 1)},
                 {"base_members", members(plan.base_members)},
                 {"positions", plan.positions},
                 {"base_body", plan.base_body},
                 {"function", comment_text(plan.function)},
                 {"output_line", plan.output_line},
                 {"output_bias", plan.output_bias ? "True" : "False"},
                 {"after_output", plan.after_output.ends_with("\n") ? plan.after_output.substr(0, plan.after_output.size() - 1) : plan.after_output},
                 {"after_output_doc", docstring(plan.after_output_doc, 2)},
                 {"causal", helper(causal_definition)},
                 {"within_window", helper(within_window_definition)},
                 {"attention", helper(attention_definition)},
                 {"supports_sdpa", plan.supports_sdpa ? "True" : "False"},
                 {"experts", helper(experts_definition)}};
  // The cache goes by position into CausalLMOutputWithPast: its keyword is `past_key_values`
  // before transformers 5.24 and `cache` since.
  values.flags = {{"imports_math", plan.imports_math}, {"imports_einops", plan.imports_einops}, {"defines_causal", plan.defines_causal}, {"defines_mode", plan.defines_mode},
                  {"defines_window", plan.defines_window}, {"defines_within_window", plan.defines_within_window}, {"defines_attention", plan.defines_attention},
                  {"defines_experts", plan.defines_experts}, {"defines_packed_experts", plan.defines_packed_experts}, {"defines_norm", plan.defines_norm},
                  {"positions", !plan.positions.empty()},   {"tied", plan.tied},                   {"cache", plan.cache},
                  {"after_output", !plan.after_output.empty()}};
  return fill_template(embedded_template("hf_modeling_causal_lm.py.tmpl"), values);
}

std::string generic(const HfModelingPlan& plan) {
  TemplateValues values;
  values.text = {{"source", comment_text(plan.source)},
                 {"function", comment_text(plan.function)},
                 {"function_python", plan.function_python},
                 {"module", plan.module},
                 {"docstring", docstring(plan.source + ": " + plan.signature, 1)},
                 {"parameters", members(plan.parameters)},
                 {"inputs", after_self(plan.inputs)},
                 {"call_arguments", joined(plan.call_arguments)}};
  return fill_template(embedded_template("hf_modeling_generic.py.tmpl"), values);
}

}  // namespace

HfFiles emit_hf(const HfModelingPlan& plan) { return {configuration(plan), plan.causal_lm ? causal_lm(plan) : generic(plan)}; }

}  // namespace ss
