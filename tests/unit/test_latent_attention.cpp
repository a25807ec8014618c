// Unit tests of model/latent_attention.h: multi-head latent attention found in what a function
// computes (examples/deepseek_v3.ss), and not where the keys take a part per head or nothing narrower.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "check/analysis.h"
#include "model/latent_attention.h"

using namespace ss;

namespace {

std::string read_example(const std::string& name) {
  std::ifstream in(std::string(SHAPESCRIPT_SOURCE_DIR) + "/examples/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<LatentAttention> latent_of(const std::string& source, std::set<std::string> inputs, std::unique_ptr<Analysis>& analysis) {
  analysis = analyze(SourceFile("model.ss", source));
  for (const Diagnostic& d : analysis->diagnostics) INFO(info(d.code).code << ": " << d.message);
  REQUIRE(!analysis->has_errors());
  const Item* attention = analysis->find_item("attention");
  REQUIRE(attention);
  return find_latent_attention(*analysis, *attention, inputs);
}

std::string replaced(std::string text, const std::string& old, const std::string& with) {
  size_t at = text.find(old);
  REQUIRE(at != std::string::npos);
  return text.replace(at, old.size(), with);
}

}  // namespace

TEST_CASE("DeepSeek's attention caches its latent and shared rotary key part", "[latent]") {
  std::unique_ptr<Analysis> analysis;
  auto latent = latent_of(read_example("deepseek_v3.ss"), {"x", "pos"}, analysis);
  REQUIRE(latent);
  CHECK(latent->shared_key == "k_shared");
  CHECK(analysis->file.text().substr(latent->latent->span.begin, latent->latent->span.end - latent->latent->span.begin) ==
        "rms_norm(latent, over=C, weight=kv_norm, eps=1e-6)");
  CHECK(latent->expanding.size() == 3);  // kv, then k_nope and v, then k
  CHECK(latent->heads == 2);
  CHECK(latent->latent_size == 512);
  CHECK(latent->shared_size == 64);
  CHECK(latent->nope_size == 64);
  CHECK(latent->value_size == 16);
}

TEST_CASE("Keys with a rotary part per head have no latent to cache", "[latent]") {
  std::unique_ptr<Analysis> analysis;
  std::string per_head = replaced(read_example("deepseek_v3.ss"), "k = concat(k_nope, expand[b H n Dr](k_shared), over=Dn)",
                                  "k = concat(k_nope, rope(q_rope, pos), over=Dn)");
  CHECK(!latent_of(per_head, {"x", "pos"}, analysis));
}

TEST_CASE("An expansion that another statement reads stays where it is", "[latent]") {
  std::unique_ptr<Analysis> analysis;
  std::string shared = replaced(read_example("deepseek_v3.ss"), "q = concat(q_nope, rope(q_rope, pos), over=Dn)",
                                "q = concat(q_nope + k_nope, rope(q_rope, pos), over=Dn)");
  CHECK(!latent_of(shared, {"x", "pos"}, analysis));
}

TEST_CASE("Grouped-query attention has no latent", "[latent]") {
  std::unique_ptr<Analysis> analysis;
  CHECK(!latent_of(read_example("llama_gqa.ss"), {"x", "pos"}, analysis));
}

TEST_CASE("A long chain of values each read twice is searched in time linear in its length", "[latent]") {
  // Untrusted input: each statement reads the one before twice, so following every path would take 2^60 steps.
  std::string chain;
  std::string last = "latent";
  for (int i = 1; i <= 60; ++i) {
    chain += "    c" + std::to_string(i) + " = " + last + " + " + last + "\n";
    last = "c" + std::to_string(i);
  }
  std::string source = replaced(read_example("deepseek_v3.ss"), "    kv = linear(rms_norm(latent,", chain + "    kv = linear(rms_norm(" + last + ",");
  std::unique_ptr<Analysis> analysis;
  auto latent = latent_of(source, {"x", "pos"}, analysis);
  REQUIRE(latent);
  CHECK(latent->latent_size == 512);
}
