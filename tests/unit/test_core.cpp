// Unit tests of the core beyond sizes: rendering, the code registry, the checker's plain results.
#include <catch2/catch.hpp>

#include "analysis.h"
#include "explain.h"
#include "render.h"

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
