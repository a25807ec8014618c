// bench_incremental: a one-line edit inside a function, checked again incrementally
// (ss::analyze_incremental) next to a full check (ss::analyze_tree) of the same text, in the core
// alone (bench_lsp_edit.py times the same through the language server).
//
//   bench_incremental FILE [--edits K] [--only incremental|full]
//     FILE       a program, as `bench_check --lines N --dump FILE` writes
//     --edits K  edits to time (default 200): a body line gains or loses a trailing comment
//     --only X   time only that, and print nothing else (for `perf record`)
//     --serving  check the serving rules too (at information), as the language server does by default
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "check/analysis.h"
#include "syntax/syntax.h"

#include <tree_sitter/api.h>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p / 100 * static_cast<double>(v.size() - 1) + 0.5))];
}

// Lines inside function bodies that a comment may follow.
std::vector<size_t> body_lines(const std::vector<std::string>& lines) {
  std::vector<size_t> out;
  bool inside = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with("fn ") || line.starts_with("export fn ")) inside = true;
    else if (!line.empty() && line[0] != ' ') inside = false;
    else if (inside && line.starts_with("    ") && line.find('#') == std::string::npos && !line.ends_with(":")) out.push_back(i);
  }
  return out;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_incremental FILE [--edits K] [--only incremental|full] [--serving]\n");
    return 2;
  }
  std::string path = argv[1], only;
  int edits = 200;
  bool serving = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--edits" && i + 1 < argc) edits = std::atoi(argv[++i]);
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--serving") serving = true;
  }
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::vector<std::string> lines;
  for (std::string line; std::getline(buffer, line);) lines.push_back(line);
  std::vector<size_t> candidates = body_lines(lines);
  if (candidates.empty()) {
    std::fprintf(stderr, "no function bodies in %s\n", path.c_str());
    return 1;
  }
  ss::AnalyzeOptions options;
  if (serving) options.serving_severity = ss::Severity::information;
  std::string text = join(lines);
  ss::SyntaxTree tree = ss::parse_source(text);
  if (tree.gave_up()) {
    // Under valgrind a parse of thousands of lines can outrun the parser's time limit, and every
    // figure after it would be of an empty file.
    std::fprintf(stderr, "bench_incremental: the parser gave up on %s (past its time limit: %.1f s); see bench/README.md, Profiling\n",
                 path.c_str(), static_cast<double>(ss::parse_time_limit_us(text.size())) / 1e6);
    return 1;
  }
  std::unique_ptr<ss::Analysis> previous = ss::analyze_incremental(ss::SourceFile(path, text), tree, options, nullptr);
  std::mt19937 random(7);
  std::vector<double> parse_ms, scratch_ms, incremental_ms, full_ms;
  size_t checked = 0, functions = 0;
  for (int e = 0; e < edits; ++e) {
    size_t line = candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(random)];
    const std::string suffix = "  # edited";
    // The edit as the server hands it to tree-sitter (ts_tree_edit), then parsed again reusing
    // the edited tree, as the server does; a parse from scratch is timed beside it.
    uint32_t line_start = 0;
    for (size_t i = 0; i < line; ++i) line_start += static_cast<uint32_t>(lines[i].size() + 1);
    const auto column = static_cast<uint32_t>(lines[line].size());
    const auto row = static_cast<uint32_t>(line);
    const auto width = static_cast<uint32_t>(suffix.size());
    TSInputEdit edit;
    if (lines[line].ends_with(suffix)) {
      lines[line].resize(lines[line].size() - suffix.size());
      edit = {line_start + column - width, line_start + column, line_start + column - width,
              {row, column - width}, {row, column}, {row, column - width}};
    } else {
      lines[line] += suffix;
      edit = {line_start + column, line_start + column, line_start + column + width,
              {row, column}, {row, column}, {row, column + width}};
    }
    text = join(lines);
    auto start = Clock::now();
    if (only.empty()) {  // a profile of one of the two needn't wade through parses from scratch
      ss::parse_source(text);
      scratch_ms.push_back(ms_since(start));
    }
    start = Clock::now();
    ts_tree_edit(tree.get(), &edit);
    tree = ss::parse_source(text, &tree);
    parse_ms.push_back(ms_since(start));
    if (only != "full") {
      start = Clock::now();
      ss::CheckReuse reuse;
      auto next = ss::analyze_incremental(ss::SourceFile(path, text), tree, options, previous.get(), &reuse);
      incremental_ms.push_back(ms_since(start));
      checked += reuse.checked;
      functions += reuse.functions;
      previous = std::move(next);
    }
    if (only != "incremental") {
      start = Clock::now();
      auto full = ss::analyze_tree(ss::SourceFile(path, text), tree, options);
      full_ms.push_back(ms_since(start));
    }
  }
  if (!only.empty()) return 0;
  std::printf("%zu lines, %d edits; functions checked again per edit: %.2f of %zu\n", lines.size(), edits,
              static_cast<double>(checked) / edits, functions / static_cast<size_t>(edits));
  std::printf("%-24s %8s %8s\n", "", "p50 ms", "p99 ms");
  std::printf("%-24s %8.2f %8.2f\n", "parse (from scratch)", percentile(scratch_ms, 50), percentile(scratch_ms, 99));
  std::printf("%-24s %8.2f %8.2f\n", "parse (edited tree)", percentile(parse_ms, 50), percentile(parse_ms, 99));
  std::printf("%-24s %8.2f %8.2f\n", "analyze_incremental", percentile(incremental_ms, 50), percentile(incremental_ms, 99));
  std::printf("%-24s %8.2f %8.2f\n", "analyze_tree (full)", percentile(full_ms, 50), percentile(full_ms, 99));
  return 0;
}
