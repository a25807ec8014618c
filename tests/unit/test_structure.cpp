// Unit tests of what the passes share: the one tree walker (core/syntax/walk.h), the one language-model
// layout (core/model/model_layout.h), the one serving verdict and the templates of generated code, and of
// the passes that read them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "check/analysis.h"
#include "emit/codegen.h"
#include "emit/codegen_hf.h"
#include "check/builtins.h"
#include "model/model_layout.h"
#include "model/reach.h"
#include "emit/text_template.h"
#include "syntax/walk.h"

using namespace ss;

namespace {

std::string example(const std::string& name) {
  std::ifstream in(std::string(SHAPESCRIPT_SOURCE_DIR) + "/examples/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string replaced(std::string text, const std::string& old, const std::string& with) {
  size_t at = text.find(old);
  REQUIRE(at != std::string::npos);
  return text.replace(at, old.size(), with);
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

void require_clean(const Analysis& analysis) {
  for (const Diagnostic& d : analysis.diagnostics) INFO(info(d.code).code << ": " << d.message);
  REQUIRE(!analysis.has_errors());
}

const Item& function(const Analysis& analysis, const std::string& name) {
  const Item* item = analysis.find_item(name);
  REQUIRE(item);
  REQUIRE(item->body);
  return *item;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The walker

TEST_CASE("the walker visits every expression in source order, for bodies and branches included") {
  auto analysis = analyze(SourceFile("w.ss",
                                     "fn f(x: [n], k: Int) -> [n]:\n"
                                     "    a = x + 1.0\n"
                                     "    for i in 0..k:\n"
                                     "        a = a * 2.0\n"
                                     "    if k > 1:\n"
                                     "        a = a - 3.0\n"
                                     "    else:\n"
                                     "        a = a / 4.0\n"
                                     "    return a\n"));
  require_clean(*analysis);
  const Item& f = function(*analysis, "f");
  std::vector<std::string> numbers;
  for_each_expr(*f.body, [&](const Expr& e) {
    if (e.kind == Expr::Kind::number) numbers.push_back(std::string(analysis->file.slice(e.span)));
  });
  CHECK(numbers == std::vector<std::string>{"1.0", "0", "2.0", "1", "3.0", "4.0"});

  std::vector<Statement::Kind> kinds;
  for_each_statement(*f.body, [&](const Statement& s) { kinds.push_back(s.kind); });
  using K = Statement::Kind;
  CHECK(kinds == std::vector<K>{K::assign, K::for_, K::assign, K::if_, K::assign, K::assign, K::return_});

  // skip passes over a statement whole; stop ends the walk and says so.
  numbers.clear();
  bool finished = for_each_expr(
      *f.body,
      [&](const Expr& e) {
        if (e.kind != Expr::Kind::number) return Walk::into;
        numbers.push_back(std::string(analysis->file.slice(e.span)));
        return numbers.back() == "3.0" ? Walk::stop : Walk::into;
      },
      [](const Statement& s) { return s.kind == Statement::Kind::for_ ? Walk::skip : Walk::into; });
  CHECK(!finished);
  CHECK(numbers == std::vector<std::string>{"1.0", "1", "3.0"});
}

TEST_CASE("a lambda's parameter shadows the name outside it") {
  auto analysis = analyze(SourceFile("w.ss",
                                     "dim D = 4\n\n"
                                     "fn f(i: [D]) -> [D]:\n"
                                     "    return i + (D |> map(i => i / D))\n"));
  require_clean(*analysis);
  const Expr& sum = *function(*analysis, "f").body->statements[0].value;
  REQUIRE(sum.kind == Expr::Kind::binary);
  const Expr& mapped = *sum.operands[1];
  CHECK(reads_variable(sum, "i"));
  CHECK(!reads_variable(mapped, "i"));  // only the lambda's own `i`
  std::vector<std::string> free;
  for_each_free_name(sum, [&](const Expr& e) { free.push_back(e.text); });
  CHECK(free == std::vector<std::string>{"i", "map", "D", "D"});  // the first `i`, `D |> map`, `/ D`: not the lambda's `i`
}

// calls_builtin skipped nested `for`s while the other walkers went into them. That was a
// decision, not a slip: the innermost loop that calls `update` is the training loop, and an
// outer loop (over epochs) stays a plain loop around it.
TEST_CASE("only the innermost loop that calls update becomes the training loop") {
  std::string source = example("train_tiny.ss");
  size_t loop = source.find("    for step in 0..S:\n");
  REQUIRE(loop != std::string::npos);
  // The loop and its body, one level deeper, inside a loop over epochs.
  std::string head = source.substr(0, loop), body = source.substr(loop), nested = "    for epoch in 0..2:\n";
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) nested += (line.empty() ? "" : "    " + line) + "\n";
  auto analysis = analyze(SourceFile("train_tiny.ss", head + nested));
  require_clean(*analysis);
  std::string python = generate_python(*analysis).python;
  CHECK(count(python, "_ss_train.steps(") == 1);
  CHECK(python.find("for epoch in range(2):") != std::string::npos);
  CHECK(python.find("for epoch in range(2):") < python.find("for step in _ss_train.steps("));
}

TEST_CASE("what a forward reaches is walked through the functions it calls, each once") {
  auto analysis = analyze(SourceFile("llama.ss", example("llama.ss")));
  require_clean(*analysis);
  std::vector<std::string> names;
  for (const BuiltinCall& call : builtin_calls_reached(*analysis, "forward")) names.push_back(call.name);
  CHECK(names.front() == "embedding");
  // attention's body is walked once, though the blocks call it twice
  CHECK(std::count(names.begin(), names.end(), "scaled_dot_product_attention") == 1);
  CHECK(std::count(names.begin(), names.end(), "rms_norm") == 3);
}

// ---------------------------------------------------------------------------------------------
// The layout

TEST_CASE("the layout of a language model names its embedding, blocks and output layer") {
  auto llama = analyze(SourceFile("llama.ss", example("llama.ss")));
  require_clean(*llama);
  ModelLayout layout = find_model_layout(*llama, "forward");
  REQUIRE(layout.is_language_model());
  CHECK(layout.model->name == "Llama");
  CHECK((layout.model_var == "m" && layout.ids_var == "ids" && layout.pos_var == "pos"));
  CHECK(layout.embedding == "wte");
  CHECK(layout.output_layer == "w_out");
  CHECK(!layout.tied);
  REQUIRE(layout.loop);
  CHECK(layout.loops == 1);
  CHECK(layout.loop_start == 0);
  CHECK(layout.layers == 2);
  CHECK(layout.stacked == std::vector<std::string>{"attn_norm", "wq", "wk", "wv", "wo", "ffn_norm", "w_gate", "w_up", "w_down"});
  CHECK(layout.embedding_tables == std::vector<std::string>{"wte"});

  auto gpt2 = analyze(SourceFile("gpt2.ss", example("gpt2.ss")));
  require_clean(*gpt2);
  ModelLayout tied = find_model_layout(*gpt2, "forward");
  REQUIRE(tied.is_language_model());
  CHECK(tied.tied);
  CHECK(tied.embedding_tables == std::vector<std::string>{"wte", "wpe"});
  CHECK(tied.ids_embeddings.size() == 1);

  ModelLayout none = find_model_layout(*gpt2, "mlp");
  CHECK(none.forward);
  CHECK(!none.is_language_model());
  CHECK(none.model_var.empty());
  CHECK(!find_model_layout(*gpt2, "nothing").forward);
}

TEST_CASE("each role of the built-in table is one built-in's, which the model passes match by role") {
  std::map<BuiltinRole, std::vector<std::string_view>> holders;
  for (const Builtin& b : builtins())
    if (b.role != BuiltinRole::none) holders[b.role].push_back(b.name);
  for (auto& [role, names] : holders) CHECK(names.size() == 1);
  CHECK(holders[BuiltinRole::linear] == std::vector<std::string_view>{"linear"});
  CHECK(holders[BuiltinRole::embedding] == std::vector<std::string_view>{"embedding"});
  CHECK(holders[BuiltinRole::attention] == std::vector<std::string_view>{"scaled_dot_product_attention"});
  CHECK(holders.size() == 9);  // linear, embedding, attention, einsum, scale, tanh, sqrt, exp, log
}

TEST_CASE("analyze describes the serving function's model once, and the serving rules read that description") {
  auto llama = analyze(SourceFile("llama.ss", example("llama.ss")));
  REQUIRE(llama->model);
  CHECK(llama->model->function == "forward");
  CHECK(llama->model->is_language_model());
  CHECK(llama->model->output_layer == "w_out");
  AnalyzeOptions options;
  options.serving_function = "rope";
  auto other = analyze(SourceFile("llama.ss", example("llama.ss")), options);
  REQUIRE(other->model);
  CHECK(other->model->function == "rope");
  CHECK(!other->model->is_language_model());
}

TEST_CASE("the layout follows the return value back to the output layer, its bias and the operations after it") {
  std::string llama = example("llama.ss");
  auto with_head = [&](const std::string& head, const std::string& params = "") {
    std::string source = replaced(llama, "    return linear(rms_norm(x, over=D, weight=m.norm), m.w_out)\n", head);
    if (!params.empty()) source = replaced(source, "model Llama:\n", "model Llama:\n" + params);
    auto analysis = analyze(SourceFile("llama.ss", source));
    require_clean(*analysis);
    return std::pair{std::move(analysis), find_model_layout(*analysis, "forward")};
  };
  auto [biased, bias] = with_head("    return linear(rms_norm(x, over=D, weight=m.norm), m.w_out, m.b_out)\n",
                                  "    param b_out: [V] = zeros\n");
  REQUIRE(bias.is_language_model());
  CHECK((bias.output_layer == "w_out" && bias.output_bias == "b_out" && bias.after_output.empty()));

  auto [capped, cap] = with_head("    h = rms_norm(x, over=D, weight=m.norm)\n    z = linear(h, m.w_out)\n"
                                 "    return scale(tanh(scale(z, 1 / 30.0)), 30.0) |> scale(1 / sqrt(D))\n");
  REQUIRE(cap.is_language_model());
  CHECK(cap.output_bias.empty());
  REQUIRE(cap.after_output.size() == 2);
  CHECK((cap.after_output[0].kind == OutputOp::Kind::softcap && std::abs(cap.after_output[0].value - 30.0) < 1e-9));
  CHECK((cap.after_output[1].kind == OutputOp::Kind::scale && std::abs(cap.after_output[1].value - 0.125) < 1e-9));
  CHECK(!logits_processor_lacks(cap));

  auto [other, tanh_only] = with_head("    return tanh(linear(rms_norm(x, over=D, weight=m.norm), m.w_out))\n");
  REQUIRE(tanh_only.is_language_model());
  REQUIRE(tanh_only.after_output.size() == 1);
  CHECK(tanh_only.after_output[0].kind == OutputOp::Kind::other);
  CHECK(logits_processor_lacks(tanh_only));

  // Reading the hidden states after the output layer: not a language model's forward, and the line says why.
  auto [mixed, refused] = with_head("    h = rms_norm(x, over=D, weight=m.norm)\n    z = linear(h, m.w_out)\n    h2 = h * 2.0\n"
                                    "    return tanh(z / 30.0) * 30.0\n");
  CHECK(!refused.is_language_model());
  REQUIRE(!refused.refusals.empty());
  CHECK(refused.refusals[0].rule.find("after the output layer, `h` is read") != std::string::npos);
}

TEST_CASE("a language model's blocks may use a lambda whose parameter is named like the ids") {
  // The HF generator looked for names the blocks read from before the loop without lambda
  // scoping, so `ids` here was taken for the token ids and the model refused.
  std::string source = replaced(example("tiny_sdpa.ss"), "    for l in 0..L:\n", "    for l in 0..L:\n        x = x * (D |> map(ids => ids / D))\n");
  auto analysis = analyze(SourceFile("tiny_sdpa.ss", source));
  require_clean(*analysis);
  HfModel model = generate_hf(*analysis, find_model_layout(*analysis, "forward"));
  INFO(model.error);
  REQUIRE(model.error.empty());
  CHECK(model.causal_lm);
  CHECK(model.modeling.find("def forward(self, x, attention_mask=None, **kwargs):") != std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The serving verdict and the diagnostics' categories

TEST_CASE("the serving verdict is the first broken rule's reason, and the rules are found by category") {
  AnalyzeOptions options;
  options.serving_severity = Severity::information;
  auto tiny = analyze(SourceFile("tiny.ss", example("tiny.ss")), options);
  CHECK(tiny->not_servable == "this works along `n`, which mixes its positions");
  HfModel model = generate_hf(*tiny, find_model_layout(*tiny, "forward"));
  REQUIRE(model.error.empty());
  CHECK(model.not_servable == tiny->not_servable);
  CHECK(model.modeling.find("# No key-value cache") != std::string::npos);  // the same verdict decides the cache

  auto sdpa = analyze(SourceFile("tiny_sdpa.ss", example("tiny_sdpa.ss")), options);
  CHECK(sdpa->not_servable.empty());
  HfModel servable = generate_hf(*sdpa, find_model_layout(*sdpa, "forward"));
  CHECK(servable.not_servable.empty());
  CHECK(servable.modeling.find("DynamicCache(config=self.config)") != std::string::npos);

  for (DiagnosticCode code : all_codes()) {
    INFO(info(code).code);
    CHECK((info(code).category == DiagnosticCategory::serving) == (info(code).name.substr(0, 8) == "serving-"));
  }
}

// ---------------------------------------------------------------------------------------------
// Templates

TEST_CASE("a template fills names, keeps or drops sections, and leaves out the tags' lines") {
  TemplateValues values;
  values.text = {{"name", "Tiny"}, {"dims", "{\"D\": 4}"}};
  values.flags = {{"tied", true}, {"cache", false}};
  std::string text =
      "class ${name}:\n"
      "${#tied}\n"
      "    tied = True\n"
      "${/tied}\n"
      "    ${^cache}\n"
      "    cache = None  # ${name}\n"
      "    ${/cache}\n"
      "${#cache}\n"
      "    cache = Cache()\n"
      "${^tied}\n"
      "    never = 1\n"
      "${/tied}\n"
      "${/cache}\n"
      "    dims = {${dims}}";
  CHECK(fill_template(text, values) == "class Tiny:\n    tied = True\n    cache = None  # Tiny\n    dims = {{\"D\": 4}}");
  CHECK_THROWS_AS(fill_template("${nothing}\n", values), std::out_of_range);
  CHECK_THROWS_AS(fill_template("${#tied}\nx\n", values), std::out_of_range);
  CHECK(!embedded_template("hf_module.py.tmpl").empty());
}

TEST_CASE("each block's window is the attention an `if` on the block's index picks, of the calls the forward reaches") {
  std::string source = example("mistral_sliding.ss");
  std::string attention = "fn attention(x: [b n D], wq: [D D], wk: [Dkv D], wv: [Dkv D], wo: [D D], pos: [b n] Index[P]) -> [b n D]:\n";
  std::string windowed = source.substr(source.find(attention), source.find("## SwiGLU") - source.find(attention));
  std::string full = replaced(replaced(windowed, "fn attention(", "fn full_attention("), ", window=W)", ")");
  // A wider window in a function the forward never calls: not the model's.
  std::string unused = "fn unused(q: [b H n Dh], k: [b H n Dh]) -> [b H n Dh]:\n"
                       "    return scaled_dot_product_attention(q, k, k, attn_mask=causal[n n], window=64)\n\n";
  source = replaced(source, "## SwiGLU", full + unused + "## SwiGLU");
  source = replaced(source, "        x = x + attention(rms_norm(x, over=D, weight=m.attn_norm[l]), m.wq[l], m.wk[l], m.wv[l], m.wo[l], pos)\n",
                    "        h = rms_norm(x, over=D, weight=m.attn_norm[l])\n"
                    "        if l % 2 == 0 and l // 2 < 1:\n"
                    "            x = x + attention(h, m.wq[l], m.wk[l], m.wv[l], m.wo[l], pos)\n"
                    "        else:\n"
                    "            x = x + full_attention(h, m.wq[l], m.wk[l], m.wv[l], m.wo[l], pos)\n");
  auto analysis = analyze(SourceFile("alternating.ss", source));
  require_clean(*analysis);
  ModelLayout layout = find_model_layout(*analysis, "forward");
  REQUIRE(layout.is_language_model());
  CHECK(attention_windows_per_block(*analysis, layout) == std::vector<std::vector<int64_t>>{{32}, {0}});
  LanguageModelFacts facts = language_model_facts(*analysis, layout, [](Span) { return std::string("here"); });
  CHECK(facts.error.empty());
  CHECK(facts.layer_windows == std::vector<int64_t>{32, 0});
  CHECK(facts.sliding_window == 32);  // not the unused function's 64
}
