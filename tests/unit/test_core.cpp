// Unit tests of the core beyond sizes: rendering, the code registry, the checker's plain results.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "check/analysis.h"
#include "diagnostics/explain.h"
#include "diagnostics/render.h"

using namespace ss;

TEST_CASE("every diagnostic code has a name, a summary and an explanation") {
  for (DiagnosticCode code : all_codes()) {
    const DiagnosticInfo& i = info(code);
    CHECK(i.code.size() == 5);
    CHECK(!i.name.empty());
    CHECK(!i.summary.empty());
    CHECK(explanation(code).has_value());
    CHECK(find_code(i.code) == code);
  }
  CHECK(!find_code("E9999"));
  CHECK(find_code("e1701") == DiagnosticCode::E1701);
}

TEST_CASE("render_diagnostic lays a diagnostic out like rustc") {
  SourceFile file("a.ss", "dim D = 4\n\nfn f(x: [D]) -> [D]:\n    return y\n");
  Diagnostic d;
  d.code = DiagnosticCode::E0201;
  d.message = "no value named `y`";
  d.primary = {{static_cast<uint32_t>(file.text().find("y\n")), static_cast<uint32_t>(file.text().find("y\n") + 1)}, "not defined"};
  d.helps.push_back("did you mean `x`?");
  CHECK(render_diagnostic(file, d) ==
        "error[E0201]: no value named `y`\n"
        " --> a.ss:4:12\n"
        "  |\n"
        "4 |     return y\n"
        "  |            ^ not defined\n"
        "  |\n"
        "  = help: did you mean `x`?\n"
        "\n");
  CHECK(render_explain_footer({d}) == "For more information about E0201, run `shapescript explain E0201`.\n");
}

TEST_CASE("a clean file has no diagnostics and its export fn has Dims") {
  auto analysis = analyze(SourceFile("p.ss",
                                     "dim D = 768\n\nexport fn patchify(img: [b 3 16gh 16gw]) -> [b (gh gw) D]:\n"
                                     "    return img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c))\n"));
  for (const Diagnostic& d : analysis->diagnostics) INFO(d.message);
  CHECK(analysis->diagnostics.empty());
  REQUIRE(analysis->exports.size() == 1);
  const ExportSignature& e = analysis->exports[0];
  CHECK(e.dims == std::vector<std::string>{"b", "gh", "gw"});
  REQUIRE(e.inputs.size() == 1);
  REQUIRE(e.inputs[0].axes.size() == 4);
  CHECK(e.inputs[0].axes[0].kind == ExportAxis::Kind::dim);
  CHECK(e.inputs[0].axes[1].kind == ExportAxis::Kind::fixed);
  CHECK(e.inputs[0].axes[1].fixed == 3);
  CHECK(e.inputs[0].axes[2].kind == ExportAxis::Kind::derived);
  CHECK(e.inputs[0].axes[2].scale == 16);
  CHECK(e.inputs[0].axes[2].dim == "gh");
}

TEST_CASE("half-written files never crash the checker") {
  std::string text =
      "dim D = 64\nmodel M:\n    param w: [D D] = normal(std=0.02)\n\nfn f(x: [b n D], m: M) -> [b n D]:\n"
      "    y = linear(x, m.w)\n        |> softmax(over=D)\n    return einsum(y, y: b n d, b m d -> b n m)\n";
  for (size_t i = 0; i <= text.size(); ++i) {
    auto analysis = analyze(SourceFile("prefix.ss", text.substr(0, i)));
    CHECK(analysis != nullptr);
  }
}

namespace {

std::string read_example(const std::string& name) {
  std::ifstream in(std::string(SHAPESCRIPT_SOURCE_DIR) + "/examples/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string apply(std::string text, std::vector<TextEdit> edits) {
  std::sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) { return a.span.begin > b.span.begin; });
  for (const TextEdit& e : edits) text.replace(e.span.begin, e.span.end - e.span.begin, e.replacement);
  return text;
}

std::vector<std::string> codes(const Analysis& analysis) {
  std::vector<std::string> out;
  for (const Diagnostic& d : analysis.diagnostics) out.emplace_back(info(d.code).code);
  return out;
}

}  // namespace

TEST_CASE("the E3304 fix rewrites hand-written attention, and the error goes away") {
  AnalyzeOptions options;
  options.serving_severity = Severity::error;
  auto tiny = analyze(SourceFile("tiny.ss", read_example("tiny.ss")), options);
  REQUIRE(codes(*tiny) == std::vector<std::string>{"E3304"});
  REQUIRE(tiny->diagnostics[0].fixes.size() == 1);
  std::string fixed = apply(tiny->file.text(), tiny->diagnostics[0].fixes[0].edits);
  auto after = analyze(SourceFile("tiny.ss", fixed), options);
  // What remains is E3306, a note: Tiny's heads of 16 are served by vLLM's GPU backends, not its CPU one.
  CHECK(codes(*after) == std::vector<std::string>{"E3306"});
  CHECK(after->diagnostics[0].severity == Severity::information);
  CHECK(after->not_servable.empty());
  CHECK(fixed.find("return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])") != std::string::npos);
  CHECK(fixed.find("softmax") == std::string::npos);
}

TEST_CASE("the E1701 fix takes the Python value as a parameter, and the error goes away") {
  auto bad = analyze(SourceFile("export_bad.ss", read_example("export_bad.ss")));
  REQUIRE(codes(*bad) == std::vector<std::string>{"E1701"});
  REQUIRE(!bad->diagnostics[0].fixes.empty());
  std::string fixed = apply(bad->file.text(), bad->diagnostics[0].fixes[0].edits);
  CHECK(fixed.find("export fn load_qkv(w_qkv: [D 3*D]) -> [D 3*D]:") != std::string::npos);
  auto after = analyze(SourceFile("export_bad.ss", fixed));
  CHECK(codes(*after).empty());
}
