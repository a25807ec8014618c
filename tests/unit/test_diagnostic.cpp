// The diagnostic builder, and the built-in table's defaults (one place each default is written).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "check/builtins.h"
#include "diagnostics/diagnostic.h"

using namespace ss;

TEST_CASE("the diagnostic builder reports once, with every part, when its statement ends") {
  std::vector<Diagnostic> out;
  auto sink = [&](Diagnostic d) { out.push_back(std::move(d)); };
  DiagnosticBuilder(sink, DiagnosticCode::E0301, {3, 5}, "sizes differ")
      .label("this one")
      .secondary({0, 1}, "that one")
      .note("a note")
      .help("a help")
      .suggest({3, 5}, std::string("n"))
      .fix("a fix", {7, 8}, "x");
  REQUIRE(out.size() == 1);
  const Diagnostic& d = out[0];
  CHECK(d.code == DiagnosticCode::E0301);
  CHECK(d.message == "sizes differ");
  CHECK((d.primary.span == Span{3, 5}));
  CHECK(d.primary.text == "this one");
  REQUIRE(d.secondary.size() == 1);
  CHECK(d.secondary[0].text == "that one");
  CHECK(d.notes == std::vector<std::string>{"a note"});
  CHECK(d.helps == std::vector<std::string>{"a help", "did you mean `n`?"});
  REQUIRE(d.fixes.size() == 2);
  CHECK(d.fixes[0].title == "change to `n`");
  CHECK(d.fixes[1].edits[0].replacement == "x");
  {
    DiagnosticBuilder kept(sink, DiagnosticCode::E0201, {0, 1}, "kept");
    kept.emit();
    DiagnosticBuilder moved = std::move(kept);  // emitted already: the move reports nothing more
    DiagnosticBuilder dropped(sink, DiagnosticCode::E0201, {0, 1}, "dropped");
    dropped.cancel();
    DiagnosticBuilder(sink, DiagnosticCode::E0201, {0, 1}, "no suggestion").suggest({0, 1}, std::nullopt);
  }
  REQUIRE(out.size() == 3);
  CHECK(out[1].message == "kept");
  CHECK(out[2].message == "no suggestion");
  CHECK(out[2].helps.empty());
}

TEST_CASE("a fix inside another diagnostic's rewrite is dropped (a first one with its alternatives); its own, overlapping ones, and equal ones stay") {
  auto with_fixes = [](std::vector<std::vector<Span>> fixes) {
    Diagnostic d{DiagnosticCode::E0101, Severity::error, "m", {}, {}, {}, {}, {}};
    for (auto& spans : fixes) {
      Fix fix{"f", {}};
      for (Span s : spans) fix.edits.push_back({s, "x"});
      d.fixes.push_back(fix);
    }
    return d;
  };
  // float('-inf') -> -inf (a rewrite of 33..46), and the quotes inside it (39..45).
  std::vector<Diagnostic> ds{with_fixes({{{39, 45}}}), with_fixes({{{33, 46}}, {{34, 35}}}), with_fixes({{{40, 50}}}),
                             with_fixes({{{60, 62}}}), with_fixes({{{60, 62}}}), with_fixes({{{70, 71}, {90, 91}}}), with_fixes({{{69, 72}}})};
  drop_nested_fixes(ds);
  CHECK(ds[0].fixes.empty());          // inside another's rewrite
  CHECK(ds[1].fixes.size() == 2);      // its second fix lies in its own first: both stay
  CHECK(ds[2].fixes.size() == 1);      // overlaps without lying inside
  CHECK(ds[3].fixes.size() == 1);      // two equal rewrites: neither is inside the other
  CHECK(ds[4].fixes.size() == 1);
  CHECK(ds[5].fixes.size() == 1);      // one of its edits lies outside
  CHECK(ds[6].fixes.size() == 1);
  // The same with the diagnostics in another order: the answer is the positions', not the order's.
  std::vector<Diagnostic> reversed{with_fixes({{{33, 46}}}), with_fixes({{{39, 45}}})};
  drop_nested_fixes(reversed);
  CHECK(reversed[0].fixes.size() == 1);
  CHECK(reversed[1].fixes.empty());
  // An insertion at either end of another's rewrite writes beside it and stays; one strictly inside goes.
  std::vector<Diagnostic> insertions{with_fixes({{{20, 30}}}), with_fixes({{{30, 30}}}), with_fixes({{{20, 20}}}), with_fixes({{{25, 25}}})};
  drop_nested_fixes(insertions);
  CHECK(insertions[0].fixes.size() == 1);
  CHECK(insertions[1].fixes.size() == 1);
  CHECK(insertions[2].fixes.size() == 1);
  CHECK(insertions[3].fixes.empty());
  // A first fix inside another's rewrite takes its alternatives with it (`write stack` inside the
  // rewritten call, `import python torch` at the top); a later fix inside alone goes by itself.
  std::vector<Diagnostic> alternatives{with_fixes({{{40, 60}}}), with_fixes({{{40, 45}}, {{0, 0}}}), with_fixes({{{0, 5}}, {{50, 52}}})};
  drop_nested_fixes(alternatives);
  CHECK(alternatives[0].fixes.size() == 1);
  CHECK(alternatives[1].fixes.empty());
  CHECK(alternatives[2].fixes.size() == 1);
}

TEST_CASE("every default a built-in declares is the one its signature shows") {
  size_t defaults = 0;
  for (const Builtin& b : builtins())
    for (auto& [keyword, value] : b.defaults) {
      INFO(b.name << " " << keyword);
      CHECK(std::find(b.keywords.begin(), b.keywords.end(), keyword) != b.keywords.end());
      CHECK(std::string(b.signature).find(std::string(keyword) + "=" + std::string(value)) != std::string::npos);
      ++defaults;
    }
  CHECK(defaults >= 5);
}
