// fuzz_replay: the fuzz target's entry point without libFuzzer, for any compiler.
//
//   fuzz_replay [options] [FILE...]
//     FILE...              replay these inputs (e.g. a crash-* file) and stop
//     --corpus DIR         replay every file in DIR as is (repeatable)
//     --seeds DIR          every *.ss file in DIR: each of its prefixes, then random mutations (repeatable)
//     --no-prefixes        skip the seeds' prefixes (for long runs of mutations)
//     --mutations N        how many mutated inputs to check (default 20000)
//     --seed S             seed of the mutations (default 1)
//     --max-seconds T      stop making mutations after T seconds in all (default 30; 0: no limit)
//     --timeout-ms MS      fail when one input takes longer than this (default 2000)
//     --max-len N          mutations grow inputs up to N bytes (default 65536, libFuzzer's -max_len of the nightly run)
//     --max-nesting D      the deepest nesting or longest chain a growing mutation writes (default 0: as deep as
//                          --max-len allows)
//     --artifact-dir DIR   where a failing input is written (default: the working directory)
//
// A crash, an uncaught exception, an invariant failure (see fuzz_entry.cpp) or an input that runs
// past --timeout-ms fails the run; the input is written to DIR/fuzz_replay-{crash,timeout}-*.ss
// first so that `fuzz_replay FILE` (or fuzz_check FILE) reproduces it.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fuzz_entry.h"

// Built with sanitizers (build-fuzz/): a sanitizer's report ends the process without a signal, so
// the input is saved from its death callback instead.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define FUZZ_REPLAY_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_REPLAY_SANITIZED 1
#endif
#ifdef FUZZ_REPLAY_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// ---- The input being checked, for the watchdog and the crash handler. ----------------------------

std::string g_current;             // the bytes of the input being checked
std::string g_current_name;        // how it was made, e.g. "mutation 812 of tiny.ss"
std::atomic<int64_t> g_started_ns{0};  // when check_one started; 0 when idle
std::atomic<bool> g_done{false};
int64_t g_timeout_ms = 2000;
std::string g_artifact_dir = ".";
char g_crash_path[4096];
char g_timeout_path[4096];

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Only async-signal-safe calls: open/write/close.
void write_raw(const char* path, const std::string& bytes) {
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

void say(const char* text) { (void)!::write(2, text, std::strlen(text)); }

void crash_handler(int sig) {
  write_raw(g_crash_path, g_current);
  say("\nfuzz_replay: CRASH (signal ");
  char num[16];
  std::snprintf(num, sizeof num, "%d", sig);
  say(num);
  say(") on ");
  say(g_current_name.c_str());
  say("\nfuzz_replay: input written to ");
  say(g_crash_path);
  say("\n");
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

#ifdef FUZZ_REPLAY_SANITIZED
void sanitizer_death() {
  write_raw(g_crash_path, g_current);
  say("\nfuzz_replay: sanitizer report on ");
  say(g_current_name.c_str());
  say("\nfuzz_replay: input written to ");
  say(g_crash_path);
  say("\n");
}
#endif

void watchdog() {
  while (!g_done.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    int64_t started = g_started_ns.load();
    if (started != 0 && (now_ns() - started) / 1000000 > g_timeout_ms) {
      // The checked thread may be anywhere; the input is stable while it runs.
      write_raw(g_timeout_path, g_current);
      std::fprintf(stderr, "\nfuzz_replay: HANG: %s ran past %lld ms; input written to %s\n", g_current_name.c_str(),
                   static_cast<long long>(g_timeout_ms), g_timeout_path);
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
}

// For failures found between inputs (an exception, a slow input): a new file each time.
std::string save_failure(const char* kind) {
  static int count = 0;
  std::string path = g_artifact_dir + "/fuzz_replay-" + kind + "-" + std::to_string(::getpid()) + "-" +
                     std::to_string(count++) + ".ss";
  write_raw(path.c_str(), g_current);
  return path;
}

struct Stats {
  size_t inputs = 0;
  double total_ms = 0;
  double slowest_ms = 0;
  std::string slowest;
  size_t largest = 0;  // bytes
};
Stats g_stats;

// Checks one input; returns false (after saving it) when it threw or ran past the time limit.
bool run_one(std::string bytes, std::string name, ss_fuzz::Downstream downstream = ss_fuzz::Downstream::all) {
  g_current = std::move(bytes);
  g_current_name = std::move(name);
  auto start = now_ns();
  g_started_ns.store(start);
  try {
    ss_fuzz::check_one(g_current, downstream);
  } catch (const std::exception& e) {
    g_started_ns.store(0);
    std::string path = save_failure("exception");
    std::fprintf(stderr, "fuzz_replay: uncaught exception on %s: %s\ninput written to %s\n", g_current_name.c_str(),
                 e.what(), path.c_str());
    return false;
  } catch (...) {
    g_started_ns.store(0);
    std::string path = save_failure("exception");
    std::fprintf(stderr, "fuzz_replay: uncaught exception on %s\ninput written to %s\n", g_current_name.c_str(),
                 path.c_str());
    return false;
  }
  g_started_ns.store(0);
  double ms = (now_ns() - start) / 1e6;
  ++g_stats.inputs;
  g_stats.largest = std::max(g_stats.largest, g_current.size());
  g_stats.total_ms += ms;
  if (ms > g_stats.slowest_ms) {
    g_stats.slowest_ms = ms;
    g_stats.slowest = g_current_name;
  }
  if (ms > static_cast<double>(g_timeout_ms)) {
    std::string path = save_failure("slow");
    std::fprintf(stderr, "fuzz_replay: SLOW: %s took %.0f ms (limit %lld ms); input written to %s\n",
                 g_current_name.c_str(), ms, static_cast<long long>(g_timeout_ms), path.c_str());
    return false;
  }
  return true;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<fs::path> files_in(const fs::path& dir, bool only_ss) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    if (only_ss && entry.path().extension() != ".ss") continue;
    out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- Mutations. ------------------------------------------------------------------------------------

const char* const kTokens[] = {
    "|>", "(", ")", "[", "]", ":", "->", "=>", "\t", ",", "=", "?", "*", "/", "+", "-", "!", ".", "..", "#", "##",
    "\n", "\n    ", "\n        |> ", "dim ", "fn ", "export fn ", "extern fn ", "model ", "param ", "import python ",
    "return ", "for l in 0..L:", "if ", "elif ", "else:", " as ", " over ", "Index[", "Logit over ", "Real", "Int",
    "Bool", "NonNeg", "16gh", "?k", "(gh gw)", "3*D", "D/H", "n+1", "0", "1", "-1", "99999999999999999999",
    "9223372036854775807", "4294967296", "0.02", "1e-5", "1e999", "-inf", "\"", "\"torch.x\"", "\\", "i => i",
    "causal[n m]", "split(", "rearrange(", "einsum(", "softmax(over=", "linear(", "map(", "concat(", "sum(",
    "b n -> b n", "b (n two) D -> b n (two D)", "q, k, v = ", "m.", "\xc3\xa9", "\xe2\x86\x92", "\xff", "\0",
    "\r\n", "\r",
};

struct Mutator {
  std::mt19937_64 rng;
  const std::vector<std::string>* pool;
  size_t max_len = 64 * 1024;
  size_t max_nesting = 0;  // 0: as deep as max_len allows

  size_t below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng); }

  // How many times to repeat a piece of `piece_size` bytes: log-uniform, so shallow and very deep
  // (thousands of levels, up to what fits in max_len) are both common.
  size_t repeats(size_t size_now, size_t piece_size) {
    size_t room = max_len > size_now ? (max_len - size_now) / std::max<size_t>(piece_size, 1) : 0;
    if (max_nesting > 0) room = std::min(room, max_nesting);
    if (room <= 1) return room;
    size_t bits = 1;
    while ((size_t{1} << bits) < room) ++bits;
    size_t n = 1 + below(size_t{1} << (1 + below(bits)));
    return std::min(n, room);
  }

  // Replaces the rest of a statement (after `= `, `return ` or `|> `) or a type's axes with a deep
  // nesting or a long chain: f(f(f(x))), ((x)), x + x + ..., x |> f |> f ..., [((b)) n D], m.w[0][0]...
  void grow(std::string& s) {
    static const char* const kCallees[] = {"f", "relu", "gelu", "attention", "softmax", "neg", "exp"};
    std::string callee = kCallees[below(std::size(kCallees))];
    std::string prefix, unit, middle, close;
    switch (below(8)) {
      case 0: unit = callee + "(", middle = "x", close = ")"; break;          // nested calls
      case 1: unit = "(", middle = "x", close = ")"; break;                   // parentheses
      case 2: middle = "x", unit = below(2) ? " + x" : " * 2 - x"; break;     // a long sum
      case 3: middle = "x", unit = " |> " + callee; break;                    // a long pipe
      case 4: middle = "x", unit = "\n        |> " + callee + "()"; break;    // one stage a line
      case 5: unit = "(", middle = "b", close = ")"; break;                   // groups in a type
      case 6: middle = "m.w", unit = "[0]"; break;                           // chained indexing
      default: {                                                             // repeat a piece of the file
        if (s.empty()) return;
        size_t p = below(s.size());
        std::string piece = s.substr(p, 1 + below(std::min<size_t>(s.size() - p, 200)));
        size_t n = repeats(s.size(), piece.size());
        std::string out;
        for (size_t k = 0; k < n; ++k) out += piece;
        s.insert(p, out);
        return;
      }
    }
    size_t n = repeats(s.size() + middle.size(), unit.size() + close.size());
    std::string built;
    built.reserve(n * (unit.size() + close.size()) + middle.size());
    if (close.empty()) {
      built = middle;
      for (size_t k = 0; k < n; ++k) built += unit;
    } else {
      for (size_t k = 0; k < n; ++k) built += unit;
      built += middle;
      for (size_t k = 0; k < n; ++k) built += close;
    }
    // Where it goes: for groups, the axes of a type `[...]`; else the rest of a statement's line.
    if (middle == "b") {
      size_t open = s.find('[', below(s.size() + 1));
      if (open == std::string::npos) open = s.find('[');
      size_t end = open == std::string::npos ? open : s.find_first_of("]\n", open);
      if (end == std::string::npos || s[end] != ']') {
        s.insert(below(s.size() + 1), "[" + built + " n D]");
        return;
      }
      s.replace(open + 1, end - open - 1, built + (below(2) ? " n D" : ""));
      return;
    }
    static const char* const kStarts[] = {"= ", "return ", "|> "};
    const char* start = kStarts[below(std::size(kStarts))];
    size_t at = s.find(start, below(s.size() + 1));
    if (at == std::string::npos) at = s.find(start);
    if (at == std::string::npos) {
      s.insert(below(s.size() + 1), built);
      return;
    }
    at += std::strlen(start);
    size_t eol = s.find('\n', at);
    s.replace(at, (eol == std::string::npos ? s.size() : eol) - at, built);
  }

  static std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string::npos) {
        lines.push_back(text.substr(start));
        break;
      }
      lines.push_back(text.substr(start, nl - start + 1));
      start = nl + 1;
    }
    return lines;
  }
  static std::string join(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l;
    return out;
  }
  std::string some_line() {
    const std::string& other = (*pool)[below(pool->size())];
    auto lines = lines_of(other);
    return lines[below(lines.size())];
  }

  void mutate_once(std::string& s) {
    size_t at = below(s.size() + 1);
    switch (below(17)) {
      case 0:  // insert random bytes
        for (size_t n = 1 + below(4); n > 0; --n) s.insert(s.begin() + at, static_cast<char>(below(256)));
        break;
      case 1:  // delete a range
        if (!s.empty()) s.erase(below(s.size()), 1 + below(std::min<size_t>(s.size(), 40)));
        break;
      case 2:  // replace a byte
        if (!s.empty()) s[below(s.size())] = static_cast<char>(below(256));
        break;
      case 3:
      case 4:  // insert a token
        s.insert(at, kTokens[below(std::size(kTokens))]);
        break;
      case 5: {  // splice a line from any seed
        auto lines = lines_of(s);
        lines.insert(lines.begin() + below(lines.size() + 1), some_line());
        s = join(lines);
        break;
      }
      case 6: {  // duplicate a line
        auto lines = lines_of(s);
        size_t i = below(lines.size());
        lines.insert(lines.begin() + i, lines[i]);
        s = join(lines);
        break;
      }
      case 7: {  // delete or swap lines
        auto lines = lines_of(s);
        if (lines.size() > 1) {
          size_t i = below(lines.size()), j = below(lines.size());
          if (below(2)) lines.erase(lines.begin() + i);
          else std::swap(lines[i], lines[j]);
        }
        s = join(lines);
        break;
      }
      case 8: {  // indent or dedent a line, sometimes very deeply, sometimes with a tab
        auto lines = lines_of(s);
        size_t i = below(lines.size());
        size_t r = below(4);
        if (r == 0) lines[i].insert(0, std::string(1 + below(400), ' '));
        else if (r == 1) lines[i].insert(0, "\t");
        else if (r == 2) lines[i].insert(0, "    ");
        else lines[i].erase(0, lines[i].find_first_not_of(' ') == std::string::npos ? 0 : lines[i].find_first_not_of(' '));
        s = join(lines);
        break;
      }
      case 9: {  // deep nesting of brackets or pipes
        size_t depth = 1 + below(below(8) == 0 ? 300 : 20);
        std::string open = below(2) ? "(" : "[";
        std::string piece;
        for (size_t k = 0; k < depth; ++k) piece += below(4) == 0 ? "|> " : open;
        s.insert(at, piece);
        break;
      }
      case 10:  // truncate
        s.resize(at);
        break;
      case 11: {  // replace an identifier-ish word with another from the seeds
        std::string line = some_line();
        size_t b = line.find_first_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
        if (b == std::string::npos) break;
        size_t e = line.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789", b);
        std::string word = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
        if (!s.empty()) {
          size_t p = below(s.size());
          size_t q = s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789", p);
          s.replace(p, (q == std::string::npos ? s.size() : q) - p, word);
        }
        break;
      }
      case 12: {  // change a number
        size_t p = s.find_first_of("0123456789", at);
        if (p == std::string::npos) break;
        size_t q = s.find_first_not_of("0123456789", p);
        const char* numbers[] = {"0", "1", "2", "3", "7", "16", "1000000", "4611686018427387904", "18446744073709551616"};
        s.replace(p, (q == std::string::npos ? s.size() : q) - p, numbers[below(std::size(numbers))]);
        break;
      }
      case 13: {  // cross over with another seed
        const std::string& other = (*pool)[below(pool->size())];
        s = s.substr(0, at) + other.substr(below(other.size() + 1));
        break;
      }
      case 14:  // a continuation line in a random place
        s.insert(at, "\n" + std::string(below(12), ' ') + "|> ");
        break;
      case 15:  // deep nesting, long chains, a repeated piece: inputs up to max_len
        grow(s);
        break;
      default:  // duplicate a range
        if (!s.empty()) {
          size_t p = below(s.size());
          s.insert(at, s.substr(p, 1 + below(80)));
        }
        break;
    }
    if (s.size() > max_len) s.resize(max_len);
  }
};

int usage() {
  std::fprintf(stderr,
               "usage: fuzz_replay [--corpus DIR]... [--seeds DIR]... [--no-prefixes] [--mutations N] [--seed S]\n"
               "                   [--max-seconds T] [--timeout-ms MS] [--max-len N] [--max-nesting D]\n"
               "                   [--artifact-dir DIR] [FILE...]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> corpus_dirs, seed_dirs, files;
  long long mutations = 20000;
  unsigned long long seed = 1;
  double max_seconds = 30;
  size_t max_len = 64 * 1024, max_nesting = 0;
  bool prefixes_wanted = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) std::exit(usage());
      return argv[++i];
    };
    if (a == "--corpus") corpus_dirs.push_back(next());
    else if (a == "--seeds") seed_dirs.push_back(next());
    else if (a == "--mutations") mutations = std::atoll(next());
    else if (a == "--seed") seed = std::strtoull(next(), nullptr, 10);
    else if (a == "--max-seconds") max_seconds = std::atof(next());
    else if (a == "--timeout-ms") g_timeout_ms = std::atoll(next());
    else if (a == "--artifact-dir") g_artifact_dir = next();
    else if (a == "--no-prefixes") prefixes_wanted = false;
    else if (a == "--max-len") max_len = std::strtoull(next(), nullptr, 10);
    else if (a == "--max-nesting") max_nesting = std::strtoull(next(), nullptr, 10);
    else if (a == "-h" || a == "--help") return usage(), 0;
    else if (!a.empty() && a[0] == '-') return usage();
    else files.push_back(a);
  }
  std::snprintf(g_crash_path, sizeof g_crash_path, "%s/fuzz_replay-crash-%d.ss", g_artifact_dir.c_str(), ::getpid());
  std::snprintf(g_timeout_path, sizeof g_timeout_path, "%s/fuzz_replay-timeout-%d.ss", g_artifact_dir.c_str(),
                ::getpid());
  // An alternate stack, so that a stack overflow (deep recursion in the checker) is reported too.
  static std::vector<char> alt_stack(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt_stack.data();
  ss.ss_size = alt_stack.size();
  ::sigaltstack(&ss, nullptr);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction action {};
    action.sa_handler = crash_handler;
    action.sa_flags = SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
#ifdef FUZZ_REPLAY_SANITIZED
  __sanitizer_set_death_callback(sanitizer_death);
#endif
  std::thread dog(watchdog);
  int failures = 0;
  auto finish = [&](int code) {
    g_done.store(true);
    dog.join();
    std::printf("fuzz_replay: %zu inputs (the largest %zu bytes), %.1f ms checking in all, slowest %.1f ms (%s)\n",
                g_stats.inputs, g_stats.largest, g_stats.total_ms, g_stats.slowest_ms, g_stats.slowest.c_str());
    const ss_fuzz::Reached& reached = ss_fuzz::reached();
    std::printf("fuzz_replay: reached the server's answers on %zu, PyTorch code generation on %zu, --hf code on %zu\n",
                reached.answered, reached.generated, reached.hf);
    std::printf("fuzz_replay: %s\n", code == 0 ? "OK" : "FAILED");
    return code;
  };

  if (!files.empty()) {
    for (const auto& f : files) {
      if (!run_one(read_file(f), f)) ++failures;
    }
    return finish(failures ? 1 : 0);
  }

  auto begin = Clock::now();
  for (const auto& dir : corpus_dirs) {
    auto paths = files_in(dir, false);
    for (const auto& p : paths)
      if (!run_one(read_file(p), p.string())) ++failures;
    std::printf("fuzz_replay: corpus %s: %zu files\n", dir.c_str(), paths.size());
  }

  std::vector<std::string> pool;
  std::vector<std::string> pool_names;
  for (const auto& dir : seed_dirs) {
    for (const auto& p : files_in(dir, true)) {
      std::string text = read_file(p);
      if (std::find(pool.begin(), pool.end(), text) != pool.end()) continue;
      pool.push_back(std::move(text));
      pool_names.push_back(p.filename().string());
    }
  }
  size_t prefixes = 0;
  for (size_t k = 0; k < pool.size() && prefixes_wanted; ++k) {
    // Every prefix of a file written by hand; a large reproducer (16 KB of `f(`) is about its whole,
    // and all its prefixes would cost time quadratic in its size, so 64 of them, evenly spaced.
    const size_t step = pool[k].size() <= 4096 ? 1 : pool[k].size() / 64;
    for (size_t n = 0; n <= pool[k].size(); n = n < pool[k].size() ? std::min(n + step, pool[k].size()) : n + 1) {
      // An editor checks and publishes diagnostics on every keystroke; it asks for the rest now and then.
      auto downstream = n % 16 == 0 || n == pool[k].size() ? ss_fuzz::Downstream::all : ss_fuzz::Downstream::diagnostics;
      if (!run_one(pool[k].substr(0, n), "prefix " + std::to_string(n) + " of " + pool_names[k], downstream)) ++failures;
      ++prefixes;
    }
  }
  if (!pool.empty()) std::printf("fuzz_replay: %zu seeds, %zu prefixes\n", pool.size(), prefixes);

  if (!pool.empty() && mutations > 0) {
    Mutator m{std::mt19937_64(seed), &pool, max_len, max_nesting};
    long long done = 0;
    for (; done < mutations; ++done) {
      if (max_seconds > 0 && std::chrono::duration<double>(Clock::now() - begin).count() > max_seconds) break;
      size_t k = m.below(pool.size());
      std::string s = pool[k];
      for (size_t n = 1 + m.below(m.below(4) == 0 ? 24 : 6); n > 0; --n) m.mutate_once(s);
      if (!run_one(std::move(s), "mutation " + std::to_string(done) + " (seed " + std::to_string(seed) + ") of " +
                                     pool_names[k]))
        ++failures;
      if (failures >= 10) break;
    }
    std::printf("fuzz_replay: %lld mutations (seed %llu)%s\n", done, seed,
                done < mutations && failures < 10 ? ", stopped by --max-seconds" : "");
  }
  if (failures) std::fprintf(stderr, "fuzz_replay: %d failing inputs\n", failures);
  return finish(failures ? 1 : 0);
}
