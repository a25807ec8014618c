// Unit tests of a model's cost (core/model/model_cost.h): the parameter count and the key-value cache per
// token that hover shows, checked against counts done by hand from the examples' declarations.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "check/analysis.h"
#include "model/model_cost.h"

using namespace ss;

namespace {

std::unique_ptr<Analysis> analyze_example(const std::string& name) {
  std::ifstream in(std::string(SHAPESCRIPT_SOURCE_DIR) + "/examples/" + name);
  std::stringstream text;
  text << in.rdbuf();
  auto analysis = analyze(SourceFile(name, text.str()));
  for (const Diagnostic& d : analysis->diagnostics) INFO(info(d.code).code << ": " << d.message);
  REQUIRE(!analysis->has_errors());
  return analysis;
}

SizeExpr v(const char* name) { return SizeExpr::variable(name); }
SizeExpr c(int64_t value) { return SizeExpr::constant(value); }

// Every hover whose span covers `offset`.
std::vector<std::string> hovers_at(const Analysis& analysis, uint32_t offset) {
  std::vector<std::string> texts;
  for (const HoverFact& h : analysis.hovers)
    if (h.span.begin <= offset && offset < h.span.end) texts.push_back(h.text);
  return texts;
}

}  // namespace

TEST_CASE("examples/llama.ss: parameters and key-value cache per token, against a count by hand") {
  auto analysis = analyze_example("llama.ss");
  const Item* llama = analysis->find_item("Llama");
  REQUIRE(llama);
  ModelCost cost = model_cost(*analysis, *llama);
  // D=64 H=4 F=192 V=512 L=2: wte V·D 32768, attn_norm and ffn_norm L·D 128 each, wq wk wv wo
  // L·D·D 8192 each, w_gate w_up w_down L·F·D 24576 each, norm D 64, w_out V·D 32768.
  CHECK(cost.parameters == 32768 + 128 + 4 * 8192 + 128 + 3 * 24576 + 64 + 32768);
  CHECK(cost.parameters == 172352);
  REQUIRE(cost.parameter_formula);
  CHECK(*cost.parameter_formula == c(4) * v("L") * v("D") * v("D") + c(3) * v("L") * v("F") * v("D") + c(2) * v("L") * v("D") +
                                       c(2) * v("V") * v("D") + v("D"));
  CHECK(format_size_formula(*cost.parameter_formula) == "4·D²·L + 3·D·F·L + 2·D·L + 2·D·V + D");
  // Each of L blocks keeps k and v of H heads of Dh = 16: 2·2·4·16.
  CHECK(cost.forward == "forward");
  REQUIRE(cost.kv_elements_per_token);
  CHECK(*cost.kv_elements_per_token == 256);
  REQUIRE(cost.kv_formula);
  CHECK(*cost.kv_formula == c(2) * v("L") * v("H") * v("Dh"));
}

TEST_CASE("examples/llama_gqa.ss: the cache counts the key-value heads, not the query heads") {
  auto analysis = analyze_example("llama_gqa.ss");
  ModelCost cost = model_cost(*analysis, *analysis->find_item("LlamaGqa"));
  // D=256 Hkv=2 Dh=64 Dkv=128 F=512 V=512 L=2.
  int64_t wk = 2 * 128 * 256;
  CHECK(cost.parameters == 512 * 256 + 2 * 256 + 2 * (2 * 256 * 256) + 2 * wk + 2 * 256 + 3 * (2 * 512 * 256) + 256 + 512 * 256);
  // Dkv = Hkv * Dh expands; Dh = D / H is no polynomial and stays by name.
  CHECK(*cost.parameter_formula == c(2) * v("L") * v("D") * v("D") + c(2) * v("L") * v("Hkv") * v("Dh") * v("D") +
                                       c(3) * v("L") * v("F") * v("D") + c(2) * v("L") * v("D") + c(2) * v("V") * v("D") + v("D"));
  REQUIRE(cost.kv_elements_per_token);
  CHECK(*cost.kv_elements_per_token == 2 * 2 * 2 * 64);
  CHECK(*cost.kv_formula == c(2) * v("L") * v("Hkv") * v("Dh"));
}

TEST_CASE("examples/mistral_sliding.ss: a sliding window bounds the tokens a sequence's cache holds") {
  auto analysis = analyze_example("mistral_sliding.ss");
  ModelCost cost = model_cost(*analysis, *analysis->find_item("MistralSliding"));
  // L=2 blocks keep k and v of Hkv=1 head of Dh=64, for at most W=32 tokens.
  REQUIRE(cost.kv_elements_per_token);
  CHECK(*cost.kv_elements_per_token == 2 * 2 * 1 * 64);
  REQUIRE(cost.kv_window);
  CHECK(*cost.kv_window == 32);
  // Without `window=`, examples/mistral.ss's cache grows with every token.
  auto unwindowed = analyze_example("mistral.ss");
  CHECK_FALSE(model_cost(*unwindowed, *unwindowed->find_item("Mistral")).kv_window);
}

TEST_CASE("a model without a block loop of attention has a parameter count and no cache") {
  auto analysis = analyze(SourceFile("mlp.ss",
                                     "dim D = 8\n"
                                     "dim F = 3 * D\n"
                                     "model Mlp:\n"
                                     "    param w1: [F D] = normal(std=0.02)\n"
                                     "    param b1: [F] = zeros\n"
                                     "fn forward(m: Mlp, x: [b D]) -> [b F]:\n"
                                     "    return linear(x, m.w1) + m.b1\n"));
  REQUIRE(!analysis->has_errors());
  ModelCost cost = model_cost(*analysis, *analysis->find_item("Mlp"));
  CHECK(cost.parameters == 24 * 8 + 24);
  CHECK(format_size_formula(*cost.parameter_formula) == "3·D² + 3·D");
  CHECK(!cost.kv_elements_per_token);
}

TEST_CASE("hover on a model's name and on its name as a type shows the cost") {
  auto analysis = analyze_example("llama.ss");
  const std::string& text = analysis->file.text();
  size_t declared = text.find("model Llama:") + 6;
  size_t as_type = text.find("m: Llama") + 3;
  for (size_t offset : {declared, as_type}) {
    auto texts = hovers_at(*analysis, static_cast<uint32_t>(offset));
    REQUIRE(texts.size() == 1);
    INFO(texts[0]);
    CHECK(texts[0].find("**172,352 parameters** = 4·D²·L + 3·D·F·L + 2·D·L + 2·D·V + D") != std::string::npos);
    CHECK(texts[0].find("2·Dh·H·L = 256 elements") != std::string::npos);
    CHECK(texts[0].find("1,024 B in float32") != std::string::npos);
  }
}

TEST_CASE("a model too large to count in 64 bits has no figures, and checking it does not fail") {
  // Found by fuzz_smoke: the count threw past analyze(), which must never fail.
  std::string text = "dim D = 4294967296\n\nmodel Huge:\n    param w: [D D] = normal(std=0.02)\n";
  std::unique_ptr<Analysis> analysis;
  REQUIRE_NOTHROW(analysis = analyze(SourceFile("huge.ss", text)));
  const Item* huge = analysis->find_item("Huge");
  REQUIRE(huge);
  ModelCost cost = model_cost(*analysis, *huge);
  CHECK(!cost.parameter_formula);
  CHECK(cost.parameters == 0);
  for (const std::string& hover : hovers_at(*analysis, huge->name_span.begin)) CHECK(hover.find("parameters") == std::string::npos);
}

TEST_CASE("an `if` on the block's index runs one of its attentions per block: the cache counts one") {
  auto analysis = analyze(SourceFile("alternating.ss", R"(dim D  = 32
dim H  = 2
dim Dh = D / H
dim V  = 64
dim L  = 4
dim W  = 4

model Alternating:
    param wte:   [V D]     = normal(std=0.02)
    param w_qkv: [L 3*D D] = normal(std=0.02)

fn forward(m: Alternating, ids: [b n] Index[V]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        q, k, v = linear(x, m.w_qkv[l]) |> split(b n (3 H Dh) -> b H n Dh)
        if l % 2 == 0:
            a = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], window=W)
        else:
            a = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        x = x + rearrange(a, b H n Dh -> b n (H Dh))
    return linear(x, m.wte)
)"));
  for (const Diagnostic& d : analysis->diagnostics) INFO(info(d.code).code << ": " << d.message);
  REQUIRE(!analysis->has_errors());
  ModelCost cost = model_cost(*analysis, *analysis->find_item("Alternating"));
  // L=4 blocks keep k and v of H=2 heads of Dh=16: one attention each, not both branches'.
  REQUIRE(cost.kv_elements_per_token);
  CHECK(*cost.kv_elements_per_token == 4 * 2 * 2 * 16);
  CHECK_FALSE(cost.kv_window);  // the full blocks keep every token
}
