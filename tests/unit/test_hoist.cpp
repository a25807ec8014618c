// Unit tests of the layer-invariant pass (core/emit/hoist.h): what a block loop's callees compute
// from arguments the loop doesn't change is planned once, and the pt2 generator computes it before
// the loop; what reads the layer (its index, its parameters) or draws at random stays in it.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "check/analysis.h"
#include "emit/codegen.h"
#include "emit/hoist.h"

using namespace ss;

namespace {

std::string read_example(const std::string& name) {
  std::ifstream in(std::string(SHAPESCRIPT_SOURCE_DIR) + "/examples/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<Analysis> checked(const std::string& name, const std::string& source) {
  auto analysis = analyze(SourceFile(name, source));
  for (const Diagnostic& d : analysis->diagnostics) INFO(info(d.code).code << ": " << d.message);
  REQUIRE(!analysis->has_errors());
  return analysis;
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// The lines of `python` from `def name(` to the next top-level line.
std::string definition(const std::string& python, const std::string& name) {
  size_t begin = python.find("def " + name + "(");
  if (begin == std::string::npos) return "";
  size_t end = python.find("\n\n\n", begin);
  return python.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

const char* kHeader =
    "dim D = 16\ndim H = 2\ndim Dh = D / H\ndim Dh2 = Dh / 2\ndim L = 2\ndim P = 32\n"
    "model M:\n    param wq: [L D D] = normal(std=0.02)\n    param base: [L] = ones\n\n";

}  // namespace

TEST_CASE("llama's rotary tables are planned once for every block: inv_freq, angle, their cos and sin") {
  auto analysis = checked("llama.ss", read_example("llama.ss"));
  HoistPlan plan = plan_hoisting(*analysis);
  REQUIRE(plan.loops.size() == 1);
  const HoistedLoop& loop = plan.loops.begin()->second;
  // attention(…, pos) twice per block in the source's two lines? once: feed_forward reads no positions
  REQUIRE(loop.prepared.size() == 1);
  const HoistedFunction& attention = plan.functions[loop.prepared[0].callee];
  CHECK(attention.function->name == "attention");
  CHECK(attention.invariant == std::vector<bool>{false, false, false, false, false, true});
  // q's and k's `rope(pos)` prepare the same values: one slot
  REQUIRE(attention.slots.size() == 1);
  const HoistedFunction& rope = plan.functions[attention.slots[0].callee];
  CHECK(rope.function->name == "rope");
  CHECK(rope.statements.size() == 2);  // inv_freq, angle
  CHECK(rope.slots.size() == 2);       // cos(angle), sin(angle), each read twice
  CHECK(rope.slot_of.size() == 4);

  std::string python = generate_python(*analysis).python;
  std::string forward = definition(python, "forward");
  CHECK(forward.find("_prepared1 = _prepare_attention_2(pos)") < forward.find("for l in range(L):"));
  CHECK(forward.find("x = x + _hoisted_attention_2(") != std::string::npos);
  CHECK(count(forward, "_prepare_") == 1);
  std::string hoisted_rope = definition(python, "_hoisted_rope_1");
  CHECK(hoisted_rope.find("torch.cos") == std::string::npos);
  CHECK(hoisted_rope.find("inv_freq") == std::string::npos);
  CHECK(count(hoisted_rope, "_prepared[0].to(x.dtype)") == 2);
  std::string prepare_rope = definition(python, "_prepare_rope_1");
  CHECK(count(prepare_rope, "torch.cos(angle)") == 1);
  CHECK(count(prepare_rope, "torch.sin(angle)") == 1);
  // Every read of `pos` was computed once: the hoisted versions, and their calls, no longer take it.
  CHECK(rope.takes == std::vector<bool>{true, false});
  CHECK(attention.takes == std::vector<bool>{true, true, true, true, true, false});
  CHECK(hoisted_rope.starts_with("def _hoisted_rope_1(x, _prepared):"));
  CHECK(definition(python, "_hoisted_attention_2").starts_with("def _hoisted_attention_2(x, wq, wk, wv, wo, _prepared):"));
  CHECK(definition(python, "_hoisted_attention_2").find("_hoisted_rope_1(q, _prepared[0])") != std::string::npos);
  CHECK(forward.find("_hoisted_attention_2(F.rms_norm(x, (D,), weight=m.attn_norm[l], eps=1e-5), m.wq[l], m.wk[l], m.wv[l], m.wo[l], _prepared1)") !=
        std::string::npos);
}

TEST_CASE("a hoisted version keeps an invariant parameter it still reads, or whose shape gives a size it reads") {
  std::string source = "dim D = 16\ndim L = 2\ndim P = 32\nmodel M:\n    param wq: [L D D] = normal(std=0.02)\n    param table: [L P D] = normal(std=0.02)\n\n"
                       "fn still(x: [b n D], table: [P D], pos: [b n] Index[P]) -> [b n D]:\n"
                       "    return x * cos(rearrange(pos, b n -> b n 1) * ones[D]) + embedding(pos, table)\n\n"
                       "fn sized(x: [b D], pos: [b n] Index[P]) -> [b D]:\n"
                       "    c = sum(cos(rearrange(pos, b n -> b n 1) * ones[D]), over=n)\n"
                       "    return x * c / n\n\n"
                       "fn forward(m: M, x: [b n D], pos: [b n] Index[P]) -> [b n D]:\n"
                       "    for l in 0..L:\n"
                       "        x = linear(still(x, m.table[l], pos), m.wq[l])\n"
                       "        x = x + rearrange(sized(sum(x, over=n), pos), b D -> b 1 D)\n"
                       "    return x\n";
  auto analysis = checked("kept.ss", source);
  std::string python = generate_python(*analysis).python;
  INFO(python);
  CHECK(definition(python, "_hoisted_still_1").starts_with("def _hoisted_still_1(x, table, pos, _prepared):"));
  // `n` is read from pos's shape: no other parameter holds it
  CHECK(definition(python, "_hoisted_sized_2").starts_with("def _hoisted_sized_2(x, pos, _prepared):"));
}

TEST_CASE("what reads the layer's index or its parameters is not hoisted") {
  std::string source = std::string(kHeader) +
                       "fn angles(pos: [b n] Index[P], l: Index[L], base: []) -> [b n Dh2]:\n"
                       "    f = Dh2 |> map(i => exp(-2 * i / Dh * log(10000)))\n"
                       "    return rearrange(pos, b n -> b n 1) * f * (l + 1) * base\n\n"
                       "fn block(x: [b n D], w: [D D], pos: [b n] Index[P], l: Index[L], base: []) -> [b n D]:\n"
                       "    a = angles(pos, l, base)\n"
                       "    return linear(x, w) * rearrange(sum(cos(a), over=Dh2), b n -> b n 1)\n\n"
                       "fn forward(m: M, x: [b n D], pos: [b n] Index[P]) -> [b n D]:\n"
                       "    for l in 0..L:\n"
                       "        x = block(x, m.wq[l], pos, l, m.base[l])\n"
                       "    return x\n";
  auto analysis = checked("layer.ss", source);
  HoistPlan plan = plan_hoisting(*analysis);
  // `f` reads only sizes, but `angles` is called with the layer's index and parameter: its version
  // keeps `f` (computed from nothing the loop changes) and nothing that reads `l` or `base`.
  for (const HoistedFunction& f : plan.functions) {
    std::vector<bool> expected(f.function->parameters.size(), false);
    for (size_t i = 0; i < f.function->parameters.size(); ++i) expected[i] = f.function->parameters[i].name == "pos";
    CHECK(f.invariant == expected);
    for (const HoistedFunction::Slot& slot : f.slots)
      if (slot.value) {
        std::string text(analysis->file.slice(slot.value->span));
        CHECK(text.find("l") == std::string::npos);  // not `(l + 1)`, not `base`, not `a`
      }
  }
  std::string python = generate_python(*analysis).python;
  std::string hoisted = definition(python, "_hoisted_angles_1");
  REQUIRE(!hoisted.empty());
  CHECK(hoisted.find("(l + 1) * base") != std::string::npos);
  CHECK(hoisted.find("torch.exp") == std::string::npos);  // f: once, before the loop
  CHECK(definition(python, "_prepare_angles_1").find("torch.exp") != std::string::npos);
}

TEST_CASE("a random built-in stays in the loop; what it is given may not") {
  std::string source = std::string(kHeader) +
                       "fn noisy(x: [b n D], pos: [b n] Index[P]) -> [b n D]:\n"
                       "    return x + dropout(rearrange(pos, b n -> b n 1) * ones[D], p=0.5)\n\n"
                       "fn forward(m: M, x: [b n D], pos: [b n] Index[P]) -> [b n D]:\n"
                       "    for l in 0..L:\n"
                       "        x = linear(noisy(x, pos), m.wq[l])\n"
                       "    return x\n";
  auto analysis = checked("random.ss", source);
  std::string python = generate_python(*analysis).python;
  CHECK(definition(python, "_prepare_noisy_1").find("dropout") == std::string::npos);
  CHECK(definition(python, "_hoisted_noisy_1").find("dropout(_prepared[0]") != std::string::npos);
  CHECK(definition(python, "_hoisted_noisy_1").starts_with("def _hoisted_noisy_1(x, _prepared):"));
}

TEST_CASE("a loop that rebinds its arguments prepares nothing") {
  std::string source = std::string(kHeader) +
                       "fn shifted(x: [b n D], pos: [b n] Index[P]) -> [b n D]:\n"
                       "    return x * cos(rearrange(pos, b n -> b n 1) * ones[D])\n\n"
                       "fn forward(m: M, x: [b n D], pos: [b n] Index[P]) -> [b n D]:\n"
                       "    p = pos\n"
                       "    for l in 0..L:\n"
                       "        x = linear(shifted(x, p), m.wq[l])\n"
                       "        p = p\n"
                       "    return x\n";
  auto analysis = checked("rebound.ss", source);
  CHECK(plan_hoisting(*analysis).loops.empty());
  CHECK(generate_python(*analysis).python.find("_prepare") == std::string::npos);
}

TEST_CASE("gemma3's two rotary bases, picked by an `if` on the block's index, are each prepared once") {
  auto analysis = checked("gemma3.ss", read_example("gemma3.ss"));
  HoistPlan plan = plan_hoisting(*analysis);
  REQUIRE(plan.loops.size() == 1);
  const HoistedLoop& loop = plan.loops.begin()->second;
  CHECK(loop.prepared.size() == 2);      // rope(…, pos, 10000) and rope(…, pos, 1000000)
  CHECK(loop.prepared_of.size() == 4);   // for q and k in each branch
  std::string forward = definition(generate_python(*analysis).python, "forward");
  CHECK(forward.find("_prepared1 = _prepare_rope_1(pos, torch.tensor(float(10000)))") < forward.find("for l in range(L):"));
  CHECK(forward.find("_prepared2 = _prepare_rope_1(pos, torch.tensor(float(1000000)))") < forward.find("for l in range(L):"));
  CHECK(count(forward, "torch.cos") == 0);
}
