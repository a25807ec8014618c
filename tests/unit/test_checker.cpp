// The checker's and the lowering's answers for the bugs issue 12 names, each checked on the core's
// plain results: the generated Python, the built-in table, the diagnostics.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>
#include <string>

#include "check/analysis.h"
#include "check/builtins.h"
#include "emit/codegen.h"
#include "diagnostics/diagnostic.h"
#include "emit/python_writer.h"
#include "check/extern_targets.h"

using namespace ss;

namespace {

std::unique_ptr<Analysis> checked(const std::string& text) {
  auto analysis = analyze(SourceFile("t.ss", text));
  for (const Diagnostic& d : analysis->diagnostics) UNSCOPED_INFO(d.message);
  return analysis;
}

// The generated line that calls `needle`'s function, for messages.
std::string line_with(const std::string& python, const std::string& needle) {
  size_t at = python.find(needle);
  if (at == std::string::npos) return "";
  size_t begin = python.rfind('\n', at) + 1;
  return python.substr(begin, python.find('\n', at) - begin);
}

}  // namespace

TEST_CASE("attn_mask=causal[..] is the built-in only when no local of that name hides it") {
  // A stack of masks named `causal`, indexed per layer: its own mask, not torch's causal one.
  auto shadowed = checked(
      "dim L = 2\n\n"
      "fn attend(q: [b h n e], k: [b h n e], v: [b h n e], causal: [L n n] Bool) -> [b h n e]:\n"
      "    return scaled_dot_product_attention(q, k, v, attn_mask=causal[1])\n");
  REQUIRE(shadowed->diagnostics.empty());
  std::string python = generate_python(*shadowed).python;
  std::string call = line_with(python, "F.scaled_dot_product_attention(");
  CHECK(call.find("is_causal") == std::string::npos);
  CHECK(call.find("attn_mask=causal[1]") != std::string::npos);

  auto builtin = checked(
      "fn attend(q: [b h n e], k: [b h n e], v: [b h n e]) -> [b h n e]:\n"
      "    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])\n");
  REQUIRE(builtin->diagnostics.empty());
  CHECK(line_with(generate_python(*builtin).python, "F.scaled_dot_product_attention(").find("is_causal=True") != std::string::npos);
}

TEST_CASE("grouped-query attention lowers with enable_gqa, equal heads without") {
  auto grouped = checked(
      "dim H = 4\ndim Hkv = 2\n\n"
      "fn attend(q: [b H n e], k: [b Hkv n e], v: [b Hkv n e]) -> [b H n e]:\n"
      "    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])\n");
  REQUIRE(grouped->diagnostics.empty());
  CHECK(line_with(generate_python(*grouped).python, "F.scaled_dot_product_attention(").find(", enable_gqa=True") != std::string::npos);
  auto equal = checked(
      "dim H = 4\n\n"
      "fn attend(q: [b H n e], k: [b H n e], v: [b H n e]) -> [b H n e]:\n"
      "    return scaled_dot_product_attention(q, k, v)\n");
  REQUIRE(equal->diagnostics.empty());
  CHECK(generate_python(*equal).python.find("enable_gqa") == std::string::npos);
}

TEST_CASE("normal() without std= initializes with the table's default, the one its signature shows") {
  auto analysis = checked("dim D = 8\n\nmodel M:\n    param w: [D D] = normal()\n    param u: [D] = normal(std=0.5, mean=1)\n");
  REQUIRE(analysis->diagnostics.empty());
  std::string python = generate_python(*analysis).python;
  CHECK(line_with(python, "nn.init.normal_(self.w") == "        nn.init.normal_(self.w, mean=0, std=0.02)");
  CHECK(line_with(python, "nn.init.normal_(self.u") == "        nn.init.normal_(self.u, mean=1, std=0.5)");
}

TEST_CASE("quote writes a literal that Python and JSON both read back as the text") {
  CHECK(pywrite::quote("plain") == "\"plain\"");
  CHECK(pywrite::quote("a \"b\" \\c") == "\"a \\\"b\\\" \\\\c\"");
  CHECK(pywrite::quote("[b\n    D]\r\t") == "\"[b\\n    D]\\r\\t\"");
  CHECK(pywrite::quote(std::string("nul\0bell\x07" "del\x7f", 13)) == "\"nul\\u0000bell\\u0007del\\u007f\"");
  CHECK(pywrite::quote("größe ∑ 🙂") == "\"größe ∑ 🙂\"");                      // UTF-8 as it is
  CHECK(pywrite::quote("bad \xff byte, cut \xe2\x88") == "\"bad \\ufffd byte, cut \\ufffd\\ufffd\"");  // not UTF-8
  CHECK(pywrite::quote("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate is no UTF-8 either
}

TEST_CASE("messages name an axis's position as torch's dim does, from 0") {
  auto analysis = checked(
      "dim D = 64\n\n"
      "fn f(x: [b n D]) -> [b n D]:\n    return x\n\n"
      "fn g(x: [b n 32]) -> [b n D]:\n    return f(x)\n");
  REQUIRE(analysis->diagnostics.size() == 1);
  CHECK(analysis->diagnostics[0].message == "`f` expects dim 2 of `x` to be `D` (64), but it is `32`");
  CHECK(analysis->diagnostics[0].primary.text == "dim 2 is `32`");
}

// ---------------------------------------------------------------------------------------------
// Source text in generated Python (issue 25): quote() and comment_text() are the only ways in.

TEST_CASE("quote and comment_text escape every line terminator and every byte that isn't UTF-8") {
  const std::string hostile = std::string("a\r\n\f\v\x1c\x1d\x1e") + "\xC2\x85" + "\xE2\x80\xA8" + "\xE2\x80\xA9" + "\xFF\xC0\x80" +
                              std::string(1, '\0') + "\"\"\"\\U\\x" + "\xED\xA0\x80" + "é🙂";
  std::string quoted = pywrite::quote(hostile);
  CHECK(quoted == "\"a\\r\\n\\u000c\\u000b\\u001c\\u001d\\u001e\\u0085\\u2028\\u2029\\ufffd\\ufffd\\ufffd\\u0000\\\"\\\"\\\"\\\\U\\\\x"
                  "\\ufffd\\ufffd\\ufffdé🙂\"");
  CHECK(pywrite::is_generator_safe("x = " + quoted + "\n"));
  std::string comment = pywrite::comment_text(hostile);
  CHECK(comment.find_first_of("\r\n\f\v\x1c\x1d\x1e") == std::string::npos);
  CHECK(pywrite::is_generator_safe("# " + comment + "\n"));
  CHECK(pywrite::docstring("one\ntwo\n", 1) == "(\"one\\n\"\n     \"two\\n\")");
  CHECK(pywrite::docstring("one \"\"\" line", 1) == "\"one \\\"\\\"\\\" line\"");
}

TEST_CASE("is_generator_safe refuses what only source text could have put there") {
  CHECK(pywrite::is_generator_safe("import torch\n\n\ndef f(x):\n    \"doc\"\n    return torch.relu(x)  # it's a comment\n"));
  CHECK(pywrite::is_generator_safe("y = f\"expected {written}\"\n"));
  CHECK_FALSE(pywrite::is_generator_safe("x = 1  # a\rimport os\n"));
  CHECK_FALSE(pywrite::is_generator_safe("x = 1  # a\xE2\x80\xA8import os\n"));
  CHECK_FALSE(pywrite::is_generator_safe("x = 1  # a\xC2\x85\n"));
  CHECK_FALSE(pywrite::is_generator_safe("x = 1\f\n"));
  CHECK_FALSE(pywrite::is_generator_safe("x = 1  # \xFF\n"));
  CHECK_FALSE(pywrite::is_generator_safe("def f():\n    \"\"\"doc\"\"\"\n"));
  CHECK_FALSE(pywrite::is_generator_safe("x = 'single'\n"));
  CHECK_FALSE(pywrite::is_generator_safe("x = r\"raw\"\n"));
  CHECK_FALSE(pywrite::is_generator_safe("x = \"\\x41\"\n"));
  CHECK_FALSE(pywrite::is_generator_safe("x = \"unterminated\n"));
}

TEST_CASE("an extern fn may name only a dotted name under torch or math (E0207)") {
  for (const char* allowed : {"torch.special.erfc", "torch.relu", "torch.nn.functional.mish", "math.erf"}) CHECK(is_allowed_extern_target(allowed));
  for (const char* refused : {"scipy.special.erfc", "torch", "math", "torch.", ".torch.relu", "torch..relu", "torch.relu(x)", "torch.relu; import os",
                              "torch.relu\rimport os", "torch.__class__", "torch._C.gelu", "torch.load", "torch.hub.load", "torch.utils.cpp_extension.load_inline",
                              "torch.ops.aten.relu", "os.system", "__import__", "torch.relu or os", "torch.r\xC3\xA9lu", ""})
    CHECK_FALSE(is_allowed_extern_target(refused));
  auto analysis = analyze(SourceFile("t.ss", "extern fn f(x: Real) -> Real = \"torch.relu(__import__('os').system('id')) or torch.relu\"\n\n"
                                              "fn g(x: [b 4]) -> [b 4]:\n    return f(x)\n"));
  REQUIRE(analysis->diagnostics.size() == 1);
  CHECK(analysis->diagnostics[0].code == DiagnosticCode::E0207);
}

TEST_CASE("python_name and python_attribute never make two names one") {
  // Each pair collided before: the mangled form of one was the other as written.
  const std::vector<std::string> names = {"lambda", "lambda_", "lambda__", "_x", "ss_x", "ssss_x", "input", "input_",
                                          "torch", "torch_", "ShapeScriptModel", "ShapeScriptModel_", "x", "x_", "ss"};
  std::set<std::string> written;
  for (const std::string& name : names) written.insert(ss::python_name(name));
  CHECK(written.size() == names.size());
  CHECK(ss::python_name("lambda") == "lambda_");
  CHECK(ss::python_name("_x") == "ss_x");
  CHECK(ss::python_name("x_") == "x_");
  const std::vector<std::string> dotted = {"if", "if_", "__class__", "ss__class__", "float32"};
  std::set<std::string> dotted_written;
  for (const std::string& name : dotted) dotted_written.insert(ss::python_attribute(name));
  CHECK(dotted_written.size() == dotted.size());
  CHECK(ss::python_attribute("float32") == "float32");
}

namespace {
std::vector<DiagnosticCode> codes_of(const std::string& text) {
  std::vector<DiagnosticCode> codes;
  auto analysis = checked(text);
  for (const Diagnostic& d : analysis->diagnostics) codes.push_back(d.code);
  return codes;
}
}  // namespace

TEST_CASE("stack makes a new first axis of the count, named by over=") {
  std::string fn = "dim D = 8\n\nfn f(x: [n D], y: [n D]) -> [RESULT]:\n    return stack(x, y, over=OVER)\n";
  auto with = [&](const std::string& result, const std::string& over) {
    std::string text = fn;
    text.replace(text.find("RESULT"), 6, result);
    text.replace(text.find("OVER"), 4, over);
    return codes_of(text);
  };
  CHECK(with("2 n D", "K").empty());
  CHECK(with("2 n D", "2").empty());
  CHECK_FALSE(with("n 2 D", "K").empty());  // first, not last
  CHECK(with("2 n D", "D") == std::vector{DiagnosticCode::E0301});  // a dim of another size
}

TEST_CASE("where, minimum and maximum broadcast and keep the element type the values share") {
  CHECK(codes_of("fn f(c: [n] Bool, i: [n] Int, j: [1] Int) -> [n] Int:\n    return where(c, i, j)\n").empty());
  CHECK(codes_of("fn f(a: [n 1] Int, b: [m] Int) -> [n m] Int:\n    return minimum(a, b) + maximum(a, b)\n").empty());
  // A Real value makes the result Real, which an Int result refuses.
  CHECK_FALSE(codes_of("fn f(c: [n] Bool, i: [n] Int, x: [n]) -> [n] Int:\n    return where(c, i, x)\n").empty());
}

TEST_CASE("zeros and ones initialize parameters as before, and with a shape make tensors") {
  auto analysis = checked("dim D = 8\n\nmodel M:\n    param w: [D] = zeros\n    param u: [D] = ones\n\n"
                          "fn f(m: M, x: [n D]) -> [n D]:\n    return x * m.w + m.u + zeros[n D] + ones[n D] + full[n D](2)\n");
  REQUIRE(analysis->diagnostics.empty());
  std::string python = generate_python(*analysis).python;
  CHECK(python.find("nn.init.zeros_(") != std::string::npos);
  CHECK(python.find("nn.init.ones_(") != std::string::npos);
  CHECK(python.find("torch.zeros((n, 8)") != std::string::npos);
  CHECK(python.find("torch.full((n, 8), 2") != std::string::npos);
}

TEST_CASE("a local named like a shape built-in is indexed, not called") {
  auto analysis = checked("dim D = 8\n\nfn f(full: [D D]) -> [D]:\n    return full[0]\n");
  REQUIRE(analysis->diagnostics.empty());
  CHECK(generate_python(*analysis).python.find("full[0]") != std::string::npos);
}

TEST_CASE("cross_entropy's targets are the logits' shape without the class axis") {
  CHECK(codes_of("dim V = 16\n\nfn f(l: [b n V], t: [b n] Index[V]) -> Real:\n    return cross_entropy(l, t, over=V)\n").empty());
  CHECK(codes_of("dim V = 16\n\nfn f(l: [V b], t: [b] Index[V]) -> Real:\n    return cross_entropy(l, t, over=V)\n").empty());
  CHECK(codes_of("dim V = 16\n\nfn f(l: [b n V], t: [n b] Index[V]) -> Real:\n    return cross_entropy(l, t, over=V)\n") ==
        std::vector{DiagnosticCode::E0306});
  CHECK(codes_of("dim V = 16\n\nfn f(l: [b n V], t: [b n]) -> Real:\n    return cross_entropy(l, t, over=V)\n") ==
        std::vector{DiagnosticCode::E0401});
}

TEST_CASE("over= takes a fixed size for the one axis of that size") {
  CHECK(codes_of("dim D = 8\n\nfn f(x: [n 1 D]) -> [n D]:\n    return sum(x, over=1)\n").empty());
  CHECK(codes_of("dim D = 8\n\nfn f(x: [1 1 D]) -> [1 D]:\n    return sum(x, over=1)\n") == std::vector{DiagnosticCode::E0305});
}

TEST_CASE("as .. Index[N] checks the values when it runs, unless they are Index[N] already or under map's vmap") {
  auto code = [](const std::string& text) {
    auto analysis = checked(text);
    REQUIRE(analysis->diagnostics.empty());
    return generate_python(*analysis).python;
  };
  std::string checked_ids = code("dim P = 16\n\nfn f(ids: [n] Int) -> [n] Index[P]:\n    return ids as [n] Index[P]\n");
  CHECK(checked_ids.find("below=16") != std::string::npos);
  CHECK(checked_ids.find("torch._assert_async(") != std::string::npos);
  CHECK(code("dim P = 16\n\nfn f(ids: [n] Index[P]) -> [n] Index[P]:\n    return ids as [n] Index[P]\n").find("below=") == std::string::npos);
  CHECK(code("dim P = 16\n\nfn f(ids: [b n] Int) -> [b n] Index[P]:\n    return ids |> map(r => r as [n] Index[P])\n").find("below=") == std::string::npos);
}

TEST_CASE("a name rebound in a for or an if starts the block widened from NonNeg or Logit to Real") {
  // exp(x) is NonNeg; after a pass of the loop it may be anything: uses in the block see Real.
  CHECK(codes_of("dim L = 2\n\nfn f(x: [n]) -> [n]:\n    y = exp(x)\n    for l in 0..L:\n        y = y - 1\n    return y\n").empty());
  CHECK(codes_of("dim L = 2\n\nfn f(x: [n]) -> [n]:\n    y = exp(x)\n    for l in 0..L:\n        if l % 2 == 0:\n            y = y - 1\n    return y\n")
            .empty());
  // Inside the loop, `y` is Real from the start: a use that needs NonNeg sees that it may not be.
  auto analysis = checked("dim L = 2\n\nfn f(x: [n]) -> [n] NonNeg:\n    y = exp(x)\n    for l in 0..L:\n        z = y\n        y = y - 1\n    return z\n");
  REQUIRE(analysis->diagnostics.size() == 1);
  CHECK(analysis->diagnostics[0].message == "`f` returns `Real` elements, but its result type says `NonNeg`");
  // The shape still may not change.
  CHECK(codes_of("dim L = 2\n\nfn f(x: [n]) -> [n]:\n    y = exp(x)\n    for l in 0..L:\n        y = concat(y, y, over=n)\n    return y\n") ==
        std::vector{DiagnosticCode::E0301});
}

TEST_CASE("% by a fixed N is an Index[N], and an index floor-divided by k one of ceil(N / k)") {
  const std::string head = "dim D = 4\ndim L = 3\n\nmodel M:\n    param w: [L D D] = normal(std=0.5)\n    param h: [1 D D] = normal(std=0.5)\n\n"
                           "fn f(m: M, x: [n D]) -> [n D]:\n    for l in 0..L:\n";
  CHECK(codes_of(head + "        j = (l + 1) % L\n        x = linear(x, m.w[j])\n    return x\n").empty());
  CHECK(codes_of(head + "        j = l // 2\n        x = linear(x, m.w[j])\n    return x\n").empty());      // Index[2] into 3 rows
  CHECK(codes_of(head + "        j = l // 2\n        x = linear(x, m.h[j])\n    return x\n") ==            // l = 2 gives 1: past [1 ..]
        std::vector{DiagnosticCode::E0402});
  CHECK(codes_of(head + "        x = linear(x, m.w[L - l])\n    return x\n") == std::vector{DiagnosticCode::E0402});  // L at l = 0
  CHECK(codes_of(head + "        x = linear(x, m.w[L - 1 - l])\n    return x\n").empty());
}

TEST_CASE("convolution and pooling sizes are torch's rounded-down arithmetic, fixed or generic") {
  // Fixed sizes are computed: (28 + 2 - 3) / 1 + 1 = 28, pooled 14; (14 + 2 - 3) / 2 + 1 = 7.
  CHECK(codes_of("fn f(x: [b 3 28 28], w: [8 3 3 3]) -> [b 8 14 14]:\n    return max_pool2d(conv2d(x, w, padding=1), kernel_size=2)\n").empty());
  CHECK(codes_of("fn f(x: [b 8 14 14], w: [8 8 3 3]) -> [b 8 7 7]:\n    return conv2d(x, w, stride=2, padding=1)\n").empty());
  CHECK(codes_of("fn f(x: [b 8 14 14], w: [8 8 3 3]) -> [b 8 6 6]:\n    return conv2d(x, w, stride=2, padding=1)\n") == std::vector{DiagnosticCode::E0301});
  // Generic sizes stay expressions when every term but the number divides by the stride.
  CHECK(codes_of("fn f(x: [b 16 2t], w: [32 16 3]) -> [b 32 t]:\n    return conv1d(x, w, stride=2, padding=1)\n").empty());
  CHECK(codes_of("fn f(x: [b 16 t], w: [32 16 3]) -> [b 32 t]:\n    return conv1d(x, w, stride=2, padding=1)\n") == std::vector{DiagnosticCode::E0321});
  CHECK(codes_of("fn f(x: [b 16 t+2], w: [32 16 3]) -> [b 32 t]:\n    return conv1d(x, w)\n").empty());
  // A generic axis may be as small as 1: a window that doesn't fit then fails when it runs.
  CHECK(codes_of("fn f(x: [b 16 t], w: [32 16 3]) -> [b 32 t-2]:\n    return conv1d(x, w)\n") == std::vector{DiagnosticCode::E0320});
  // The input's channels are the weight's second axis (times groups=); a window larger than its axis is E0320.
  CHECK(codes_of("fn f(x: [b 4 10], w: [8 3 3]) -> [b 8 10]:\n    return conv1d(x, w, padding=1)\n") == std::vector{DiagnosticCode::E0301});
  CHECK(codes_of("fn f(x: [b 4 10], w: [8 2 3]) -> [b 8 10]:\n    return conv1d(x, w, padding=1, groups=2)\n").empty());
  CHECK(codes_of("fn f(x: [b 4 2 2]) -> [b 4 1 1]:\n    return max_pool2d(x, kernel_size=3)\n") == std::vector{DiagnosticCode::E0320});
  CHECK(codes_of("fn f(x: [b t]) -> [b t]:\n    return max_pool2d(x, kernel_size=2)\n") == std::vector{DiagnosticCode::E0306});
  CHECK(codes_of("fn f(x: [b 4 8 8]) -> [b 4 4 4]:\n    return max_pool2d(x, kernel_size=2, stride=s)\n") == std::vector{DiagnosticCode::E0201});
}

TEST_CASE("adaptive pooling and interpolate take their sizes from brackets or scale=") {
  CHECK(codes_of("fn f(x: [b 4 h w]) -> [b 4 7 7]:\n    return adaptive_avg_pool2d[7 7](x)\n").empty());
  CHECK(codes_of("fn f(x: [b 4 h w]) -> [b 4 2h 2w]:\n    return interpolate(x, scale=2)\n").empty());
  CHECK(codes_of("fn f(x: [b 4 h w]) -> [b 4 9 9]:\n    return interpolate[9 9](x, mode=\"bilinear\")\n").empty());
  CHECK(codes_of("fn f(x: [b 4 h w]) -> [b 4 9 9]:\n    return interpolate[9 9](x, mode=\"bicubic\")\n") == std::vector{DiagnosticCode::E0505});
  CHECK(codes_of("fn f(x: [b 4 h w]) -> [b 4 h w]:\n    return interpolate(x)\n") == std::vector{DiagnosticCode::E0503});
}

TEST_CASE("convolution and pooling lower to torch.nn.functional with the keywords the call gives") {
  auto analysis = checked("fn f(x: [b 3 32 32], w: [8 3 3 3], bias: [8]) -> [b 8 2 2]:\n"
                          "    h = max_pool2d(conv2d(x, w, bias, padding=1), kernel_size=2)\n"
                          "    h = interpolate[8 8](avg_pool2d(h, kernel_size=2, stride=2), mode=\"bilinear\")\n"
                          "    return adaptive_avg_pool2d[2 2](h)\n");
  REQUIRE(analysis->diagnostics.empty());
  std::string python = generate_python(*analysis).python;
  CHECK(line_with(python, "F.conv2d(").find("F.conv2d(x, w, bias, padding=1)") != std::string::npos);
  CHECK(python.find("F.max_pool2d(") != std::string::npos);
  CHECK(python.find("kernel_size=2)") != std::string::npos);
  CHECK(python.find("F.interpolate(F.avg_pool2d(h, kernel_size=2, stride=2), size=(8, 8, ), mode=\"bilinear\", align_corners=False)") != std::string::npos);
  CHECK(python.find("F.adaptive_avg_pool2d(h, (2, 2))") != std::string::npos);
}

TEST_CASE("a linear head that a flatten of pooled sizes doesn't fit names the steps and the inputs that fit") {
  auto analysis = checked("fn f(x: [b 3 28 28], w: [8 3 3 3], head: [10 8*8*8]) -> [b 10]:\n"
                          "    h = max_pool2d(conv2d(x, w, padding=1), kernel_size=2)\n"
                          "    h = max_pool2d(h, kernel_size=2)\n"
                          "    return linear(rearrange(h, b c y x -> b (c y x)), head)\n");
  REQUIRE(analysis->diagnostics.size() == 1);
  const Diagnostic& d = analysis->diagnostics[0];
  CHECK(d.code == DiagnosticCode::E0301);
  std::string helps;
  for (const std::string& h : d.helps) helps += h + "\n";
  CHECK(helps.find("input sizes of 32–35 in place of 28 × 28") != std::string::npos);
  CHECK(d.secondary.size() >= 4);  // one label per convolution or pooling step, and the weight
}

TEST_CASE("a convolution's keywords too large for 64 bits are reported, never overflowed") {
  std::string big = "dim Big = 4611686018427387904\n\n";
  CHECK(codes_of(big + "fn f(x: [b 4 10], w: [8 4 3]) -> [b 8 10]:\n    return conv1d(x, w, padding=Big, dilation=Big)\n") == std::vector{DiagnosticCode::E0301});
  CHECK(codes_of(big + "fn f(x: [b 4 10 10]) -> [b 4 10 10]:\n    return max_pool2d(x, kernel_size=2, padding=Big)\n") == std::vector{DiagnosticCode::E0320});
  CHECK(codes_of(big + "fn f(x: [b 4 h 10]) -> [b 4 h 10]:\n    return interpolate(x, scale=Big)\n") == std::vector{DiagnosticCode::E0301});
}

TEST_CASE("attention's softcap=, sinks= and bias= lower to the written-out attention, checked against the scores") {
  auto options = checked(
      "dim H = 4\ndim Hkv = 2\n\n"
      "fn attend(q: [b H n e], k: [b Hkv n e], v: [b Hkv n e], s: [H], a: [H 1 n]) -> [b H n e]:\n"
      "    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], softcap=50.0, sinks=s, bias=a)\n");
  REQUIRE(options->diagnostics.empty());
  std::string python = generate_python(*options).python;
  std::string call = line_with(python, "return _attention(q");
  CHECK(call.find("softcap=50.0") != std::string::npos);
  CHECK(call.find("sinks=s") != std::string::npos);
  CHECK(call.find("bias=a") != std::string::npos);
  CHECK(call.find("gqa=True") != std::string::npos);
  CHECK(python.find("def _attention(") != std::string::npos);
  CHECK(call.find("F.scaled_dot_product_attention") == std::string::npos);

  auto codes = [](const Analysis& a) {
    std::vector<DiagnosticCode> out;
    for (const Diagnostic& d : a.diagnostics) out.push_back(d.code);
    return out;
  };
  // Sinks of the key/value heads, not the query heads; a softcap of 0; an Index bias; a bias wider than the scores.
  auto wrong = checked(
      "dim H = 4\ndim Hkv = 2\n\n"
      "fn sinks(q: [b H n e], k: [b Hkv n e], v: [b Hkv n e], s: [Hkv]) -> [b H n e]:\n"
      "    return scaled_dot_product_attention(q, k, v, sinks=s)\n\n"
      "fn cap(q: [b H n e], k: [b H n e], v: [b H n e]) -> [b H n e]:\n"
      "    return scaled_dot_product_attention(q, k, v, softcap=0)\n\n"
      "fn index_bias(q: [b H n e], k: [b H n e], v: [b H n e], a: [n n] Index[H]) -> [b H n e]:\n"
      "    return scaled_dot_product_attention(q, k, v, bias=a)\n\n"
      "fn wide_bias(q: [b H n e], k: [b H n e], v: [b H n e], a: [2 b H n n]) -> [b H n e]:\n"
      "    return scaled_dot_product_attention(q, k, v, bias=a)\n");
  CHECK(codes(*wrong) == std::vector<DiagnosticCode>{DiagnosticCode::E0312, DiagnosticCode::E0312, DiagnosticCode::E0401, DiagnosticCode::E0304});
  REQUIRE(!wrong->diagnostics.empty());
  CHECK(wrong->diagnostics[0].message == "`sinks=` needs one logit per query head, `[H]`, but it is `[Hkv]`");
}

TEST_CASE("% and // in sizes and subscripts: a size where a polynomial says it, an index by its range") {
  const std::string head = "dim D = 4\ndim L = 3\n\nmodel M:\n    param w: [L D D] = normal(std=0.5)\n    param h: [1 D D] = normal(std=0.5)\n\n"
                           "fn f(m: M, x: [n D]) -> [n D]:\n    for l in 0..L:\n";
  auto body = [&](const std::string& line) { return codes_of(head + "        x = linear(x, " + line + ")\n    return x\n"); };
  // Written in the subscript, as an `Index` local would be: `% 3` is below 3, `l // 2` below ceil(3 / 2) = 2.
  CHECK(body("m.w[l % 2]").empty());
  CHECK(body("m.w[(l + 1) % L]").empty());
  CHECK(body("m.w[l // 2]").empty());
  CHECK(body("m.w[l % 2 // 2]").empty());                                   // below 2, then below 1
  CHECK(body("m.h[l % 2 // 2]").empty());
  CHECK(body("m.h[(2 * l) // 2 - l]").empty());                             // (2l) // 2 is the size l: 0 at every l
  CHECK(body("m.h[l % 2]") == std::vector{DiagnosticCode::E0402});          // 1 at l = 1: past [1 ..]
  CHECK(body("m.h[l // 2]") == std::vector{DiagnosticCode::E0402});
  CHECK(body("m.w[l % 2 + 1]").empty());                                   // 1 or 2: below 3
  CHECK(body("m.w[(l % 2) * 2]").empty());                                 // 0 or 2
  CHECK(body("m.w[l % 2 + 2]") == std::vector{DiagnosticCode::E0402});     // 3 at l = 1
  CHECK(body("m.w[2 * (l // 2) + 1]") == std::vector{DiagnosticCode::E0402});  // 3 at l = 2
  CHECK(body("m.w[l % 0]") == std::vector{DiagnosticCode::E0302});
  CHECK(body("m.w[l // n]") == std::vector{DiagnosticCode::E0302});
  // Sizes: fixed ones computed as Python's; generic ones only where the result is a polynomial.
  CHECK(codes_of("dim D = 7\ndim H = D // 2\n\nfn f(x: [H D % 4]) -> [3 3]:\n    return x\n").empty());
  CHECK(codes_of("fn f(x: [h (2*h+1) // 2 (2*h+1) % 2]) -> [h h 1]:\n    return x\n").empty());
  CHECK(codes_of("fn f(x: [n]) -> [n // 2]:\n    return x\n") == std::vector{DiagnosticCode::E0302});
  CHECK(codes_of("fn f(x: [n]) -> [n % 2]:\n    return x\n") == std::vector{DiagnosticCode::E0302});
  // The generated Python floors as the checker did.
  auto analysis = checked(head + "        x = linear(x, m.w[(l + 1) % L]) + linear(x, m.w[l // 2])\n    return x\n");
  REQUIRE(analysis->diagnostics.empty());
  std::string python = generate_python(*analysis).python;
  CHECK(python.find("[(((l + 1)) % L)]") != std::string::npos);
  CHECK(python.find("[(l // 2)]") != std::string::npos);
}
