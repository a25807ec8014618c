// bench_check: how long checking takes next to parsing, on a generated 10,000-line file; with
// --limits, how time and memory grow with the file and what hostile input costs.
//
//   bench_check [--lines N] [--runs R] [--dump FILE] [--only parse|check] [--loops K] [--limits]
//     --lines N    lines to generate, at least (default 10000)
//     --runs R     rounds, each timing parse, lower and check in turn; medians are printed (default 11)
//     --dump FILE  also write the generated program to FILE (for `shapescript check FILE`)
//     --only X     time only parsing or only checking, --loops K times, and print nothing else
//                  (for a profiler: `perf record -g bench_check --only check --loops 50`)
//     --limits     check time and peak memory at 1k/10k/100k lines, where the memory goes, the
//                  deepest nesting accepted, and did-you-mean with 8,000 unknown names
//
// The file is built from templates of what ShapeScript programs look like (dims, models,
// attention with einsum and with scaled_dot_product_attention, MLPs, rearranges, patching,
// reductions, maps, branches, extern fns, export fns and calls between functions of different
// groups), with names and sizes varied per group. It must check with no diagnostics at all; the
// benchmark refuses to time a file the checker rejects, since that would measure error recovery.
#include <algorithm>
#include <cstdarg>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <malloc.h>
#ifdef SHAPESCRIPT_MIMALLOC
#include <mimalloc.h>
#endif
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check/analysis.h"
#include "diagnostics/render.h"
#include "syntax/syntax.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string fmt(const char* pattern, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* pattern, ...) {
  char buffer[4096];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(buffer, sizeof buffer, pattern, args);
  va_end(args);
  return buffer;
}

// One group of items: its own dims, a model and a dozen functions using them. Group g may call the
// shape-generic helpers of earlier groups, so the call graph crosses groups.
std::string group(int g) {
  const int heads[] = {2, 4, 8, 4, 16, 8};
  const int dims[] = {64, 128, 256, 96, 512, 192, 384};
  const int patch_sizes[] = {8, 14, 16, 32, 4};
  const int H = heads[g % 6];
  const int D = dims[g % 7] * (H >= 8 ? 2 : 1);
  const int F = 4 * D;
  const int V = 1000 + 37 * g;
  const int P = 128 << (g % 4);
  const int L = 2 + g % 5;
  const int p = patch_sizes[g % 5];
  const char* act = (g % 3 == 0) ? "gelu(approximate=\"tanh\")" : (g % 3 == 1) ? "gelu" : "relu";
  std::string s;
  auto line = [&](const std::string& text) { s += text + "\n"; };
  auto sub = [&](std::string text) {
    // {g} is the group number; everything else is substituted by fmt before.
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 3, "{g}") == 0) {
        out += std::to_string(g);
        i += 2;
      } else {
        out += text[i];
      }
    }
    return out;
  };

  line(fmt("# ---- group %d: width %d, %d heads, %d layers ----", g, D, H, L));
  line(sub(fmt("dim D{g}  = %d", D)));
  line(sub(fmt("dim H{g}  = %d", H)));
  line(sub("dim Dh{g} = D{g} / H{g}"));
  line(sub("dim F{g}  = 4 * D{g}"));
  line(sub(fmt("dim V{g}  = %d", V)));
  line(sub(fmt("dim P{g}  = %d", P)));
  line(sub(fmt("dim L{g}  = %d", L)));
  line(sub("dim Half{g} = D{g} / 2"));
  line("");
  (void)F;
  line(sub("## A GPT-style model with stacked per-layer weights."));
  line(sub("model Gpt{g}:"));
  line(sub("    param wte:    [V{g} D{g}]       = normal(std=0.02)"));
  line(sub("    param wpe:    [P{g} D{g}]       = normal(std=0.01)"));
  line(sub("    param ln1_w:  [L{g} D{g}]       = ones"));
  line(sub("    param ln1_b:  [L{g} D{g}]       = zeros"));
  line(sub("    param w_qkv:  [L{g} 3*D{g} D{g}] = normal(std=0.02)"));
  line(sub("    param w_o:    [L{g} D{g} D{g}]  = normal(std=0.02)"));
  line(sub("    param ln2_w:  [L{g} D{g}]       = ones"));
  line(sub("    param ln2_b:  [L{g} D{g}]       = zeros"));
  line(sub("    param w_fc:   [L{g} F{g} D{g}]  = normal(std=0.02)"));
  line(sub("    param w_proj: [L{g} D{g} F{g}]  = normal(std=0.02)"));
  line(sub("    param lnf_w:  [D{g}]           = ones"));
  line(sub("    param lnf_b:  [D{g}]           = zeros"));
  line("");
  line(sub("## Causal attention written out with einsum."));
  line(sub("fn attention{g}(x: [b n D{g}], w_qkv: [3*D{g} D{g}], w_o: [D{g} D{g}]) -> [b n D{g}]:"));
  line(sub("    q, k, v = linear(x, w_qkv) |> split(b n (3 H{g} Dh{g}) -> b H{g} n Dh{g})"));
  line(sub("    att = einsum(q, k: b H{g} n Dh{g}, b H{g} m Dh{g} -> b H{g} n m)"));
  line(sub("        |> scale(1 / sqrt(Dh{g}))"));
  line(sub("        |> masked_fill(!causal[n m], -inf)"));
  line(sub("        |> softmax(over=m)"));
  line(sub("    return einsum(att, v: b H{g} n m, b H{g} m Dh{g} -> b H{g} n Dh{g})"));
  line(sub("        |> rearrange(b H{g} n Dh{g} -> b n (H{g} Dh{g}))"));
  line(sub("        |> linear(w_o)"));
  line("");
  line(sub("## The same attention through the fused kernel."));
  line(sub("fn sdpa{g}(x: [b n D{g}], w_qkv: [3*D{g} D{g}], w_o: [D{g} D{g}]) -> [b n D{g}]:"));
  line(sub("    q, k, v = linear(x, w_qkv) |> split(b n (3 H{g} Dh{g}) -> b H{g} n Dh{g})"));
  line(sub("    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])"));
  line(sub("        |> rearrange(b H{g} n Dh{g} -> b n (H{g} Dh{g}))"));
  line(sub("        |> linear(w_o)"));
  line("");
  line(sub("fn mlp{g}(x: [b n D{g}], w_fc: [F{g} D{g}], w_proj: [D{g} F{g}]) -> [b n D{g}]:"));
  line(sub(fmt("    return linear(x, w_fc) |> %s |> linear(w_proj)", act)));
  line("");
  line(sub("fn swiglu{g}(x: [b n D{g}], w_gate: [F{g} D{g}], w_up: [F{g} D{g}], w_down: [D{g} F{g}]) -> [b n D{g}]:"));
  line(sub("    gate = linear(x, w_gate) |> silu"));
  line(sub("    up = linear(x, w_up)"));
  line(sub("    return linear(gate * up, w_down)"));
  line("");
  line(sub("## Shape-generic helpers; later groups call them."));
  line(sub("fn residual{g}(x: [b n d], y: [b n d]) -> [b n d]:"));
  line(sub("    return x + y"));
  line("");
  line(sub("fn center{g}(x: [b n d]) -> [b n d]:"));
  line(sub("    mu = mean(x, over=d) |> rearrange(b n -> b n 1)"));
  line(sub("    return x - mu"));
  line("");
  line(sub("fn norm{g}(x: [b n D{g}], w: [D{g}], bias: [D{g}]) -> [b n D{g}]:"));
  if (g % 2 == 0) {
    line(sub("    return layer_norm(x, over=D{g}, weight=w, bias=bias)"));
  } else {
    line(sub("    h = rms_norm(x, over=D{g}, weight=w)"));
    line(sub("    return h + bias"));
  }
  line("");
  line(sub("fn block{g}(x: [b n D{g}], m: Gpt{g}, l: Int) -> [b n D{g}]:"));
  line(sub("    h = norm{g}(x, m.ln1_w[l], m.ln1_b[l])"));
  line(sub(fmt("    x = residual{g}(x, %s(h, m.w_qkv[l], m.w_o[l]))", g % 2 ? "attention{g}" : "sdpa{g}")));
  line(sub("    h = norm{g}(x, m.ln2_w[l], m.ln2_b[l])"));
  line(sub("    return x + mlp{g}(h, m.w_fc[l], m.w_proj[l])"));
  line("");
  line(sub("fn forward{g}(m: Gpt{g}, ids: [b n] Index[V{g}], pos: [b n] Index[P{g}]) -> [b n V{g}] Logit over V{g}:"));
  line(sub("    x = embedding(ids, m.wte) + embedding(pos, m.wpe)"));
  line(sub("    for l in 0..L{g}:"));
  line(sub("        h = layer_norm(x, over=D{g}, weight=m.ln1_w[l], bias=m.ln1_b[l])"));
  line(sub("        x = x + attention{g}(h, m.w_qkv[l], m.w_o[l])"));
  line(sub("        h = layer_norm(x, over=D{g}, weight=m.ln2_w[l], bias=m.ln2_b[l])"));
  line(sub("        x = x + mlp{g}(h, m.w_fc[l], m.w_proj[l])"));
  if (g > 0) {
    // Calls into earlier groups' generic helpers: unification with this group's sizes.
    line(fmt("    x = center%d(x)", g - 1));
    line(fmt("    x = residual%d(x, center%d(x))", (g * 7 + 3) % g, (g * 5 + 1) % g));
  }
  line(sub("    x = layer_norm(x, over=D{g}, weight=m.lnf_w, bias=m.lnf_b)"));
  line(sub("    return linear(x, m.wte)"));
  line("");
  line(sub("fn loss_free_logits{g}(m: Gpt{g}, ids: [b n] Index[V{g}], pos: [b n] Index[P{g}]) -> [b n V{g}]:"));
  line(sub("    logits = forward{g}(m, ids, pos)"));
  line(sub("    return logits |> log_softmax(over=V{g})"));
  line("");
  line(sub(fmt("## Splits each image into %dx%d patches.", p, p)));
  line(sub(fmt("export fn patchify{g}(img: [b 3 %dgh %dgw]) -> [b (gh gw) %d]:", p, p, 3 * p * p)));
  line(sub("    return img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c))"));
  line("");
  line(sub("export fn causal_attention{g}(x: [b n D{g}], w_qkv: [3*D{g} D{g}], w_o: [D{g} D{g}]) -> [b n D{g}]:"));
  line(sub("    q, k, v = linear(x, w_qkv) |> split(b n (3 H{g} Dh{g}) -> b H{g} n Dh{g})"));
  line(sub("    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])"));
  line(sub("        |> rearrange(b H{g} n Dh{g} -> b n (H{g} Dh{g}))"));
  line(sub("        |> linear(w_o)"));
  line("");
  line(sub("fn pool{g}(x: [b n D{g}]) -> [b 3*D{g}]:"));
  line(sub("    s = sum(x, over=n)"));
  line(sub("    a = mean(x, over=n)"));
  line(sub("    top = max(x, over=n)"));
  line(sub("    return concat(s, a, top, over=D{g})"));
  line("");
  line(sub("fn with_cls{g}(x: [b n D{g}], cls: [b 1 D{g}]) -> [b n+1 D{g}]:"));
  line(sub("    return concat(x, cls, over=n)"));
  line("");
  line(sub("fn pairs{g}(x: [b 2*n D{g}]) -> [b n (2 D{g})]:"));
  line(sub("    return x |> rearrange(b (n two) D{g} -> b n (two D{g}))"));
  line("");
  line(sub("fn heads{g}(x: [b n D{g}]) -> [b H{g} n Dh{g}]:"));
  line(sub("    return x |> rearrange(b n (H{g} Dh{g}) -> b H{g} n Dh{g})"));
  line("");
  line(sub("fn scores{g}(q: [b n D{g}], k: [b m D{g}]) -> [b H{g} n m] NonNeg:"));
  line(sub("    att = einsum(heads{g}(q), heads{g}(k): b H{g} n Dh{g}, b H{g} m Dh{g} -> b H{g} n m)"));
  line(sub("    return att |> scale(1 / sqrt(Dh{g})) |> softmax(over=m)"));
  line("");
  line(sub("fn sinusoid{g}(x: [b n D{g}]) -> [n Half{g}]:"));
  line(sub("    angles = n |> map(i => (Half{g} |> map(j => i * j)) / 10000.0)"));
  line(sub("    return sin(angles)"));
  line("");
  line(sub("fn activate{g}(x: [b D{g}], kind: Int) -> [b D{g}]:"));
  line(sub("    if kind == 0:"));
  line(sub("        return relu(x)"));
  line(sub("    elif kind == 1:"));
  line(sub("        return gelu(x, approximate=\"tanh\")"));
  line(sub("    else:"));
  line(sub("        return silu(x)"));
  line("");
  line(sub("extern fn mish{g}(x: Real) -> Real = \"torch.nn.functional.mish\""));
  line("");
  line(sub("export fn act{g}(x: [b D{g}]) -> [b D{g}]:"));
  line(sub("    return x |> mish{g} |> tanh"));
  line("");
  line(sub("fn stack{g}(x: [b n D{g}], w: [L{g} D{g} D{g}], norm: [L{g} D{g}]) -> [b n D{g}]:"));
  line(sub("    for l in 0..L{g}:"));
  line(sub("        h = rms_norm(x, over=D{g}, weight=norm[l])"));
  line(sub("        x = x + linear(h, w[l])"));
  if (g > 0) line(fmt("        x = residual%d(x, center%d(h))", g - 1, g / 2));
  line(sub("    return x"));
  line("");
  return s;
}

std::string generate(int min_lines, int* groups_out) {
  std::string text = "# Generated by bench_check: a large, valid ShapeScript program.\n\n";
  int g = 0;
  long lines = std::count(text.begin(), text.end(), '\n');
  while (lines < min_lines) {
    std::string next = group(g++);
    lines += std::count(next.begin(), next.end(), '\n');
    text += next;
  }
  *groups_out = g;
  return text;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Bytes the allocator has handed out and not taken back. Under mimalloc (the allocator of the
// executables where it is installed: CMakeLists.txt) glibc's heap is empty, and mimalloc keeps no
// such count in a release build, so its pages are visited: blocks in use times their size class.
#ifdef SHAPESCRIPT_MIMALLOC
size_t heap_in_use() {
  size_t bytes = 0;
  mi_heap_visit_blocks(
      mi_heap_get_default(), false,
      [](const mi_heap_t*, const mi_heap_area_t* area, void*, size_t, void* total) {
        *static_cast<size_t*>(total) += area->used * area->block_size;
        return true;
      },
      &bytes);
  return bytes;
}
#else
size_t heap_in_use() { return mallinfo2().uordblks + mallinfo2().hblkhd; }
#endif

double seconds_of(const std::function<void()>& body) {
  auto start = Clock::now();
  body();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `body` in a child process and returns its peak resident memory in bytes, so that each
// figure is the body's own peak and not the largest so far.
long peak_rss_of(const std::function<void()>& body) {
  std::fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    body();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  struct rusage usage {};
  wait4(child, &status, 0, &usage);
  return usage.ru_maxrss * 1024L;
}

int limits() {
  std::printf("check time and memory by file size (peak RSS includes the generated text):\n");
  std::printf("  %8s %10s %10s %12s %14s %12s\n", "lines", "bytes", "check ms", "ms/1k lines", "heap B/source B", "peak RSS MB");
  long baseline = peak_rss_of([] {});
  for (int lines : {1000, 10000, 100000}) {
    int groups = 0;
    std::string text = generate(lines, &groups);
    long count = std::count(text.begin(), text.end(), '\n');
    double ms = 0;
    size_t retained = 0;
    long peak = peak_rss_of([&] {
      size_t before = heap_in_use();
      std::unique_ptr<ss::Analysis> analysis;
      ms = 1000 * seconds_of([&] { analysis = ss::analyze(ss::SourceFile("bench.ss", text)); });
      retained = heap_in_use() - before;
      // The child writes its figures and the parent, once it knows the child's peak, ends the row.
      std::printf("  %8ld %10zu %10.1f %12.2f %14.1f", count, text.size(), ms, ms * 1000 / static_cast<double>(count),
                  static_cast<double>(retained) / static_cast<double>(text.size()));
    });
    std::printf(" %12.1f\n", static_cast<double>(peak - baseline) / 1e6);
  }

  // Where a checked file's memory goes: each part's share, measured by freeing it.
  {
    int groups = 0;
    std::string text = generate(100000, &groups);
    double size = static_cast<double>(text.size());
    std::printf("\nwhere the memory goes, per source byte, for %zu bytes (heap in use, retained):\n", text.size());
    size_t start = heap_in_use();
    {
      ss::SyntaxTree tree = ss::parse_source(text);
      std::printf("  %-36s %8.1f\n", "tree-sitter tree", static_cast<double>(heap_in_use() - start) / size);
    }
    start = heap_in_use();
    auto analysis = ss::analyze(ss::SourceFile("bench.ss", text));
    size_t total = heap_in_use() - start;
    auto freed = [&](const char* what, auto&& clear) {
      size_t before = heap_in_use();
      clear();
      std::printf("  %-36s %8.1f\n", what, static_cast<double>(before - heap_in_use()) / size);
    };
    freed("types of expressions (semantics)", [&] { analysis->semantics.types = {}; });
    freed("call facts (semantics)", [&] { analysis->semantics.calls = {}; });
    freed("hovers", [&] { analysis->hovers = {}; });
    freed("inlay hints", [&] { analysis->inlays = {}; });
    freed("definitions", [&] { analysis->definitions = {}; });
    freed("syntax tree (ss::Program)", [&] { ss::Program().items.swap(analysis->program.items); });
    freed("the rest (source text, line table, ...)", [&] { analysis.reset(); });
    std::printf("  %-36s %8.1f\n", "retained after checking, in all", static_cast<double>(total) / size);
  }

  // Nesting: the limit, and that a file at it checks while one past it is an E0104.
  {
    auto nested = [](int depth) {
      std::string body = "x";
      for (int i = 1; i <= depth; ++i) body += " + x";
      return "fn f(x: [n]) -> [n]:\n    return " + body + "\n";
    };
    // The function's body is one level, the sum's left spine the rest.
    auto at = ss::analyze(ss::SourceFile("deep.ss", nested(ss::kMaxNesting - 2)));
    auto past = ss::analyze(ss::SourceFile("deep.ss", nested(ss::kMaxNesting - 1)));
    bool ok = at->diagnostics.empty() && !past->diagnostics.empty() && past->diagnostics[0].code == ss::DiagnosticCode::E0104;
    std::printf("\ndeepest nesting accepted: %d levels (a returned sum of %d terms checks; one more term is E0104: %s)\n",
                ss::kMaxNesting, ss::kMaxNesting - 1, ok ? "yes" : "NO");
    std::string calls;
    for (int i = 0; i < 32000; ++i) calls += "relu(";
    double s = seconds_of([&] { ss::analyze(ss::SourceFile("deep.ss", "fn f(x: [n]) -> [n]:\n    return " + calls + "x\n")); });
    std::printf("64 KB of nested calls (32,000 levels, unclosed): checked in %.1f ms\n", 1000 * s);
    std::string groups;
    for (int i = 0; i < ss::kMaxNesting - 2; ++i) groups += "(";
    groups += "b";
    for (int i = 0; i < ss::kMaxNesting - 2; ++i) groups += ")";
    s = seconds_of([&] { ss::analyze(ss::SourceFile("deep.ss", "fn f(x: [" + groups + " n]) -> [b n]:\n    return x\n")); });
    std::printf("a size in %d nested groups `((...(b)...))`: checked in %.1f ms\n", ss::kMaxNesting - 2, 1000 * s);
  }

  // Did-you-mean: every unknown name is compared with the names in scope.
  {
    std::string text = "fn f(x: [n]) -> [n]:\n";
    for (int i = 0; i < 8000; ++i) text += "    v" + std::to_string(i) + " = u" + std::to_string(i) + "\n";
    text += "    return x\n";
    size_t diagnostics = 0;
    double s = seconds_of([&] { diagnostics = ss::analyze(ss::SourceFile("unknown.ss", text))->diagnostics.size(); });
    std::printf("\n8,000 unknown names among 8,000 locals: %zu diagnostics in %.2f s\n", diagnostics, s);
  }
  return 0;
}

int usage() {
  std::fprintf(stderr, "usage: bench_check [--lines N] [--runs R] [--dump FILE] [--only parse|check --loops K]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int min_lines = 10000, runs = 11, loops = 20;
  std::string dump, only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) std::exit(usage());
      return argv[++i];
    };
    if (a == "--lines") min_lines = std::atoi(next());
    else if (a == "--runs") runs = std::max(1, std::atoi(next()));
    else if (a == "--dump") dump = next();
    else if (a == "--only") only = next();
    else if (a == "--loops") loops = std::atoi(next());
    else if (a == "--limits") return limits();
    else return usage();
  }

  int groups = 0;
  const std::string text = generate(min_lines, &groups);
  const auto line_count = std::count(text.begin(), text.end(), '\n');
  if (!dump.empty()) std::ofstream(dump, std::ios::binary) << text;

  // Under valgrind a parse of thousands of lines can outrun the parser's time limit, and the
  // figures would be of an empty file: said, not measured.
  auto gave_up = [&] {
    std::fprintf(stderr, "bench_check: the parser gave up (past its time limit: %.1f s); see bench/README.md, Profiling\n",
                 static_cast<double>(ss::parse_time_limit_us(text.size())) / 1e6);
    return 1;
  };
  if (only == "parse") {
    for (int i = 0; i < loops; ++i)
      if (ss::parse_source(text).gave_up()) return gave_up();
    return 0;
  }
  if (only == "check") {
    for (int i = 0; i < loops; ++i) {
      auto analysis = ss::analyze(ss::SourceFile("bench.ss", text));
      if (analysis->diagnostics.empty()) continue;
      if (analysis->diagnostics[0].code == ss::DiagnosticCode::E0101) return gave_up();
      std::fprintf(stderr, "bench_check: the generated file has diagnostics: %s\n", analysis->diagnostics[0].message.c_str());
      return 1;
    }
    return 0;
  }
  if (!only.empty()) return usage();

  // The file must be valid, or the benchmark measures something else.
  {
    auto analysis = ss::analyze(ss::SourceFile("bench.ss", text));
    if (!analysis->diagnostics.empty()) {
      std::fprintf(stderr, "bench_check: the generated file has %zu diagnostics; the first ones:\n\n",
                   analysis->diagnostics.size());
      for (size_t i = 0; i < std::min<size_t>(5, analysis->diagnostics.size()); ++i)
        std::fputs(ss::render_diagnostic(analysis->file, analysis->diagnostics[i]).c_str(), stderr);
      std::fprintf(stderr, "(write the file with --dump FILE to look at it)\n");
      return 1;
    }
    size_t functions = 0;
    for (const auto& [item, types] : analysis->semantics.functions) (void)item, ++functions;
    std::printf("generated: %ld lines, %zu bytes, %d groups, %zu functions; checks with no diagnostics\n",
                static_cast<long>(line_count), text.size(), groups, functions);
  }

  // Each round times the three in turn, so that a slow spell of the shared machine falls on all
  // of them alike, and the ratio is each round's own: medians taken apart drift with the load.
  const std::vector<std::function<void()>> bodies = {
      [&] { ss::parse_source(text); },
      [&] { ss::parse_program(ss::SourceFile("bench.ss", text)); },
      [&] { ss::analyze(ss::SourceFile("bench.ss", text)); },
  };
  for (const auto& body : bodies) body();  // warm up caches and the allocator
  std::vector<double> parse, lower, check, ratio;
  for (int i = 0; i < runs; ++i) {
    double ms[3];
    for (size_t b = 0; b < bodies.size(); ++b) {
      auto start = Clock::now();
      bodies[b]();
      ms[b] = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    }
    parse.push_back(ms[0]), lower.push_back(ms[1]), check.push_back(ms[2]);
    ratio.push_back(ms[2] / ms[0]);
  }
  double p = median(parse), l = median(lower), c = median(check), r = median(ratio);

  std::printf("median of %d rounds, each timing the three in turn, in ms:\n", runs);
  std::printf("  %-44s %10.2f\n", "parse (tree-sitter, ss::parse_source)", p);
  std::printf("  %-44s %10.2f\n", "parse + lower to AST (ss::parse_program)", l);
  std::printf("  %-44s %10.2f\n", "whole check (ss::analyze)", c);
  std::printf("  %-44s %10.2f x   (aim: within 2x; the median of each round's ratio)\n", "check / parse", r);
  std::printf("  %-44s %6.2f .. %.2f x\n", "  the rounds' ratios ranged",
              *std::min_element(ratio.begin(), ratio.end()), *std::max_element(ratio.begin(), ratio.end()));
  std::printf("  %s\n", r <= 2 ? "within the aim" : "NOT within the aim");
  return 0;
}
