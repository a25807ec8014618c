// The checker: names, sizes and element types of a whole file, and the export rules.
#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "check/analysis.h"
#include "check/builtins.h"
#include "check/check_internal.h"
#include "check/extern_targets.h"
#include "check/function_cache.h"
#include "model/model_cost.h"
#include "model/model_layout.h"
#include "diagnostics/names.h"
#include "syntax/syntax.h"

namespace ss {

bool Analysis::has_errors() const {
  return std::any_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::error; });
}

const Item* Analysis::find_item(std::string_view name) const {
  for (const Item& item : program.items)
    if (item.name == name && item.kind != Item::Kind::python_import) return &item;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Checker

std::optional<std::string> suggest_name(std::string_view name, const std::vector<std::string>& candidates) {
  return closest_name(name, candidates);
}

bool assignable(const ElementType& from, const ElementType& to) {
  switch (to.kind) {
    case ElementKind::real: return from.kind != ElementKind::bool_;
    case ElementKind::nonneg: return from.kind == ElementKind::nonneg || from.kind == ElementKind::index;
    case ElementKind::logit: return from.is_real();
    case ElementKind::int_: return from.is_integer();
    case ElementKind::index: return from.kind == ElementKind::index && from.bound == to.bound;
    case ElementKind::bool_: return from.kind == ElementKind::bool_;
  }
  return false;
}


Checker::Checker(Analysis& analysis, const AnalyzeOptions& options) : a_(analysis), options_(options) {
  // A function whose check read a tokenizer file is never reused: the file may have changed since.
  if (options_.tokenizer_size)
    options_.tokenizer_size = [this, read = options.tokenizer_size](const std::string& path, std::string& error) {
      if (recording_) recording_->reads_files = true;
      return read(path, error);
    };
}

void Checker::report(Diagnostic diagnostic) { a_.diagnostics.push_back(std::move(diagnostic)); }

DiagnosticBuilder Checker::report(DiagnosticCode code, Span span, std::string message) {
  return DiagnosticBuilder([this](Diagnostic d) { report(std::move(d)); }, code, span, std::move(message));
}

void Checker::error(DiagnosticCode code, Span span, std::string message, std::string label) {
  report(code, span, std::move(message)).label(std::move(label));
}

const FunctionSignature& Checker::signature(const Item* item) const {
  static const FunctionSignature none;
  auto found = signatures_.find(item);
  return found == signatures_.end() ? none : *found->second;
}

std::string Checker::text(Span span) const { return squash_spaces(a_.file.slice(span)); }

// E0207: an `extern fn`'s target becomes code in the generated module, so it must be a dotted name
// under an allowlisted module (check/extern_targets.h), for every extern fn, exported or not.
void Checker::check_extern_target(const Item& item) {
  const std::string& target = item.extern_target;
  if (item.extern_target_span.end <= item.extern_target_span.begin || is_allowed_extern_target(target)) return;
  std::string modules;
  for (std::string_view m : kExternModules) modules += (modules.empty() ? "`" : " or `") + std::string(m) + ".`";
  bool dotted = !target.empty() && is_allowed_extern_target("torch.x." + target);  // a dotted name, wherever it is
  std::string module = extern_module(target);
  bool allowed_module = std::find(kExternModules.begin(), kExternModules.end(), module) != kExternModules.end();
  std::string message = !dotted          ? "`" + item.name + "`'s target is not a dotted name"
                        : !allowed_module ? "`" + item.name + "` names `" + target + "`, which is not under " + modules
                                          : "`" + item.name + "` names `" + target + "`, a part of " + module + " an `extern fn` may not name";
  report(DiagnosticCode::E0207, item.extern_target_span, message)
      .label(!dotted ? "not a dotted name" : !allowed_module ? "not a torch or math function" : "refused")
      .note("the target becomes a call in the generated Python, so it must be names joined by dots (none starting with `_`) under " +
            modules + ", and not a part of torch that reads files or runs code (`torch.load`, `torch.hub`, ...)")
      .help("name the torch or math function, as in `extern fn erfc(x: Real) -> NonNeg = \"torch.special.erfc\"`");
}

void Checker::run(Analysis* previous, bool incremental) {
  report_syntax_errors();
  declare_globals();
  if (incremental) prepare_incremental(previous);
  a_.semantics.types.reserve_ids(a_.program.expr_ids.next);
  a_.semantics.calls.reserve_ids(a_.program.expr_ids.next);
  for (const Item& item : a_.program.items)  // a dim defined twice keeps its first value (E0202)
    if (item.kind == Item::Kind::dim && globals_.count(item.name) && globals_.at(item.name) == &item) {
      if (incremental_) recorded_dim(item);
      else evaluate_dim(item);
    }
  for (const Item& item : a_.program.items) {
    if (item.kind == Item::Kind::model) {
      if (incremental_) recorded_model(item);
      else check_model(item);
    }
    if (item.kind == Item::Kind::extern_fn) check_extern_target(item);
    if (item.kind == Item::Kind::extern_fn || item.kind == Item::Kind::function) {
      auto& signature = signatures_[&item];
      signature = incremental_ ? recorded_signature(item) : std::make_shared<const FunctionSignature>(signature_of(item));
      a_.semantics.functions[&item] = signature;
    }
  }
  for (const Item& item : a_.program.items)
    if (item.kind == Item::Kind::function) {
      if (incremental_) check_and_record(item);
      else check_function(item);
    }
  a_.model = std::make_shared<const ModelLayout>(find_model_layout(a_, options_.serving_function));
  add_model_hovers();
  check_export_rules();
  collect_exports();
  if (options_.serving_severity) check_serving_rules(*this, *options_.serving_severity);
  check_tensor_parallel(*this);
  // A Python call in an exported function is E1701; that it also lacks `as` (E0403) is beside the point.
  std::set<std::pair<uint32_t, uint32_t>> python_in_export;
  for (const Diagnostic& d : a_.diagnostics)
    if (d.code == DiagnosticCode::E1701) python_in_export.insert({d.primary.span.begin, d.primary.span.end});
  std::erase_if(a_.diagnostics, [&](const Diagnostic& d) {
    return d.code == DiagnosticCode::E0403 && python_in_export.count({d.primary.span.begin, d.primary.span.end});
  });
  drop_nested_fixes(a_.diagnostics);
  std::stable_sort(a_.diagnostics.begin(), a_.diagnostics.end(),
                   [](const Diagnostic& x, const Diagnostic& y) { return x.primary.span.begin < y.primary.span.begin; });
}

namespace {

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The first bracket in `text` (offsets from `base`) that is never closed, skipping strings and comments.
std::optional<std::pair<uint32_t, char>> unclosed_bracket(std::string_view text, uint32_t base) {
  std::vector<std::pair<uint32_t, char>> open;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i) {}
    } else if (c == '(' || c == '[') {
      open.emplace_back(base + static_cast<uint32_t>(i), c);
    } else if (c == ')' || c == ']') {
      char want = c == ')' ? '(' : '[';
      if (!open.empty() && open.back().second == want) open.pop_back();
      else return std::nullopt;  // a stray closing bracket: not this kind of mistake
    }
  }
  if (open.empty()) return std::nullopt;
  return open.front();
}

// Every bracket of a file matched in one pass (strings and comments skipped): what a `[` closes
// with, the bracket it is in, and whether a comma stands directly inside it. One pass, so that
// looking at each bracket of hostile text stays linear.
struct BracketMap {
  static constexpr uint32_t kNone = UINT32_MAX;
  std::unordered_map<uint32_t, uint32_t> close_of, parent_of;
  std::unordered_set<uint32_t> has_comma;

  explicit BracketMap(std::string_view source) {
    std::vector<uint32_t> open;
    for (size_t i = 0; i < source.size(); ++i) {
      char c = source[i];
      auto at = static_cast<uint32_t>(i);
      if (c == '#' || c == '"') {
        char end = c == '#' ? '\n' : '"';
        for (++i; i < source.size() && source[i] != end && source[i] != '\n'; ++i) {}
      } else if (c == '(' || c == '[') {
        parent_of[at] = open.empty() ? kNone : open.back();
        open.push_back(at);
      } else if ((c == ')' || c == ']') && !open.empty() && source[open.back()] == (c == ')' ? '(' : '[')) {
        close_of[open.back()] = at;
        open.pop_back();
      } else if (c == ',' && !open.empty()) {
        has_comma.insert(open.back());
      }
    }
  }
};

// A Python list as an argument, `cat([x, y], dim=-1)`: a `[` the parser could not read, in
// `region`, after `(` or `,`, closed by a `]` with a comma directly inside. The offsets of the two
// brackets, and the call's parentheses around it.
struct ListArgument {
  uint32_t open, close;
  Span call;
};
std::optional<ListArgument> python_list_in(std::string_view source, Span region, const BracketMap& brackets) {
  for (uint32_t i = region.begin; i < region.end && i < source.size(); ++i) {
    if (source[i] != '[' || !brackets.has_comma.count(i)) continue;
    auto close = brackets.close_of.find(i);
    size_t before = i == 0 ? std::string_view::npos : source.find_last_not_of(" \t\n", i - 1);
    if (close == brackets.close_of.end() || source[close->second] != ']' || before == std::string_view::npos ||
        (source[before] != '(' && source[before] != ',')) continue;
    uint32_t parent = brackets.parent_of.at(i);
    if (parent == BracketMap::kNone) continue;
    auto parent_close = brackets.close_of.find(parent);
    uint32_t call_end = parent_close == brackets.close_of.end() ? static_cast<uint32_t>(source.size()) : parent_close->second;
    return ListArgument{i, close->second, {parent, call_end}};
  }
  return std::nullopt;
}

// `s` without the spaces (and a line's `\r`) around it.
std::string_view trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// PyTorch's module as a param, `param up = nn.Linear(D, F)`: the weight it holds, `param up: [F D] =
// normal(std=0.02)` (PyTorch keeps `[out in]`), where both sizes are a name or a number.
std::optional<std::string> linear_module_param(std::string_view line) {
  auto word = [](std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return identifier_char(c); }); };
  line = trimmed(line);
  if (!line.starts_with("param ")) return std::nullopt;
  size_t equals = line.find('=');
  std::string_view name = trimmed(line.substr(6, equals == std::string_view::npos ? 0 : equals - 6));
  std::string_view module = equals == std::string_view::npos ? "" : trimmed(line.substr(equals + 1));
  bool linear = false;
  for (std::string_view prefix : {"nn.Linear(", "torch.nn.Linear("})
    if (!linear && module.starts_with(prefix) && module.ends_with(")")) {
      module = module.substr(prefix.size(), module.size() - prefix.size() - 1);
      linear = true;
    }
  if (!linear) return std::nullopt;
  size_t comma = module.find(',');
  if (!word(name) || comma == std::string_view::npos) return std::nullopt;
  std::string_view in = trimmed(module.substr(0, comma)), rest = module.substr(comma + 1);
  std::string_view out = trimmed(rest.substr(0, rest.find(',')));  // `bias=False` may follow
  if (!word(in) || !word(out) || module.find('(') != std::string_view::npos) return std::nullopt;
  return "param " + std::string(name) + ": [" + std::string(out) + " " + std::string(in) + "] = normal(std=0.02)";
}

// A line that opens a block but lacks its `:`: the offset where the `:` belongs.
std::optional<uint32_t> missing_block_colon(const SourceFile& file, uint32_t offset) {
  LineColumn position = file.line_column(offset);
  std::string_view line = file.line_text(position.line);
  size_t first = line.find_first_not_of(' ');
  if (first == std::string_view::npos) return std::nullopt;
  std::string_view code = line.substr(first);
  if (size_t hash = code.find('#'); hash != std::string_view::npos) code = code.substr(0, hash);
  while (!code.empty() && (code.back() == ' ' || code.back() == '\t' || code.back() == '\r')) code.remove_suffix(1);
  if (code.empty() || code.back() == ':') return std::nullopt;
  static const std::vector<std::string_view> openers = {"fn ", "export fn ", "model ", "for ", "if ", "elif ", "else"};
  bool opens = std::any_of(openers.begin(), openers.end(), [&](std::string_view o) { return code.starts_with(o); });
  if (!opens || (code.starts_with("else") && code.size() > 4 && identifier_char(code[4]))) return std::nullopt;
  if (unclosed_bracket(code, 0)) return std::nullopt;
  return file.offset_of({position.line, static_cast<uint32_t>(first + code.size())});
}

}  // namespace

// Whether `name` occurs as a word in text the parser could not read: a name defined there is
// unknown to the checker, and saying so would only repeat the syntax error.
bool Checker::lost_in_syntax_error(std::string_view name) const {
  auto lost = [&] {
    for (const SyntaxError& e : a_.program.syntax_errors) {
      if (e.kind != SyntaxError::Kind::unreadable) continue;
      std::string_view region = a_.file.slice(e.span);
      for (size_t at = region.find(name); at != std::string_view::npos; at = region.find(name, at + 1)) {
        bool starts = at == 0 || !identifier_char(region[at - 1]);
        bool ends = at + name.size() == region.size() || !identifier_char(region[at + name.size()]);
        if (starts && ends) return true;
      }
    }
    return false;
  }();
  if (recording_) recording_->lost_names.emplace_back(name, lost);  // the answer depends on text outside the function
  return lost;
}

// Whether text the parser could not read begins in `item` or between it and the next item: a
// function cut short there may have lost its `return` to it, and "does not return" would only
// repeat the syntax error.
bool Checker::cut_short(const Item& item) const {
  // Items are in source order: the next is the first to begin past this one's end.
  const std::vector<Item>& items = a_.program.items;
  auto next = std::ranges::upper_bound(items, item.span.begin, {}, [](const Item& i) { return i.span.begin; });
  uint32_t end = next == items.end() ? UINT32_MAX : next->span.begin;
  bool cut = std::ranges::any_of(a_.program.syntax_errors, [&](const SyntaxError& e) {
    return (e.kind == SyntaxError::Kind::unreadable || e.kind == SyntaxError::Kind::missing) && e.span.begin >= item.span.begin &&
           e.span.begin < end;
  });
  if (recording_) recording_->cut_short = cut;  // the answer depends on text outside the function
  return cut;
}

namespace {

// Python and PyTorch written where ShapeScript says it otherwise: what the text the parser could
// not read starts with, and what to write instead.
struct PythonSyntax {
  std::string_view written, help;
  std::string_view after = {};  // what the text just before it ends with, where that decides
  bool after_code = false;      // only after other code on its line (`a if c else b`)
  bool after_is_line = false;   // `after` is all of its line before it (`dim ` at the line's start)
};
constexpr std::string_view kNoImports =
    "ShapeScript's built-ins (`softmax`, `linear`, `rearrange`...) need no import; a Python module is `import python torch`, whose values "
    "can't be exported";
constexpr std::string_view kDimHelp =
    "a `dim` gives one size its value, one a line: `dim D = 64`; a size that varies from call to call (batch, sequence) needs no `dim`: "
    "it is named where it is used, as in `x: [b n D]`";
constexpr PythonSyntax kPythonSyntax[] = {
    {"-", "a tensor's sizes are the names in its type: for `x: [b n D]`, `x.shape[-1]` is `D`", ".shape["},
    {"[:", kNoSlices},
    {":", kNoSlices, "["},
    {"import ", kNoImports},
    {"from ", kNoImports},
    {"def ", "a function is `fn NAME(x: [b n D]) -> [b n D]:`, with a type for each parameter and the result"},
    {"class ", "parameters are declared in a `model NAME:` block, one `param w: [D D] = normal(std=0.02)` a line"},
    {"lambda", "a lambda is `i => e`, as in `n |> map(i => i * 2)`"},
    {"**", "there is no `**`: multiply (`x * x`), or use `sqrt`, `exp` and `log`"},
    {"", "there is no `assert`: a shape is asserted by its type (`x as [b n D]`, checked as the program runs), and what sizes must divide is written in them (`[b n H*Dh]`)", "assert "},
    {"'", "a string is written in double quotes: `\"...\"`"},  // one left open
    {"with ", "there is no `with`: write the lines inside it in the body itself (`torch.no_grad()` belongs to the Python that calls the function)"},
    {"while ", "there is no `while`: a loop counts over a range, `for l in 0..L:`"},
    {"try:", "there is no `try`: a shape that can go wrong is an error when the file is checked, so the lines inside are the body's own"},
    {"except", "there is no `except`: a shape that can go wrong is an error when the file is checked, not when it runs"},
    {"@", "there is no `@`: `linear(x, w)` multiplies by a weight `w: [out in]`, and `einsum(a, b: b n k, k m -> b n m)` writes any product"},
    {"if ", "there is no `a if c else b`: an `if` statement assigns in each branch, and `where(c, a, b)` picks element by element", {}, true},
    {"", kDimHelp, "dim ", false, true},  // `dim b, n, D`
};

// Python's `x += e` (or `-=`, `*=`, `/=`) as a line's code: where the code is in the line, its
// operator, and the whole assignment it is, `x = x + e` (e in parentheses unless a name or a number).
struct CompoundAssignment {
  Span at;
  std::string written, whole;
};
std::optional<CompoundAssignment> compound_assignment(std::string_view line) {
  size_t first = line.find_first_not_of(' ');
  if (first == std::string_view::npos) return std::nullopt;
  std::string_view code = line.substr(first);
  if (size_t hash = code.find('#'); hash != std::string_view::npos) code = code.substr(0, hash);
  code = trimmed(code);
  size_t name_end = 0;
  while (name_end < code.size() && identifier_char(code[name_end])) ++name_end;
  std::string_view name = code.substr(0, name_end), rest = trimmed(code.substr(name_end));
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || rest.size() < 3 || rest[1] != '=' ||
      std::string_view("+-*/").find(rest[0]) == std::string_view::npos)
    return std::nullopt;
  std::string_view value = trimmed(rest.substr(2));
  if (value.empty()) return std::nullopt;
  bool atom = std::ranges::all_of(value, [](char c) { return identifier_char(c) || c == '.'; });
  std::string operand = atom ? std::string(value) : "(" + std::string(value) + ")";
  Span at{static_cast<uint32_t>(first), static_cast<uint32_t>(first + code.size())};
  return CompoundAssignment{at, std::string(rest.substr(0, 2)), std::string(name) + " = " + std::string(name) + " " + rest[0] + " " + operand};
}

std::string_view python_syntax_help(std::string_view found, std::string_view before) {
  std::string_view line_before = before.substr(before.rfind('\n') + 1);
  bool code_before = line_before.find_first_not_of(' ') != std::string_view::npos;
  for (const PythonSyntax& p : kPythonSyntax) {
    if (!p.after.empty()) {
      if ((p.after_is_line ? line_before == p.after : before.ends_with(p.after)) && found.starts_with(p.written)) return p.help;
      continue;
    }
    if (p.after_code) {
      if (code_before && found.starts_with(p.written)) return p.help;
      continue;
    }
    bool keyword = std::isalpha(static_cast<unsigned char>(p.written[0]));
    // An operator may have been read up to its last characters: `x ** 2` leaves the second `*`.
    for (size_t read = 1; !keyword && read < p.written.size(); ++read)
      if (before.ends_with(p.written.substr(0, read)) && found.starts_with(p.written.substr(read))) return p.help;
    size_t at = found.find(p.written);
    // A keyword counts at the start only; an operator anywhere in the unread text.
    if (at != std::string_view::npos && (at == 0 || !keyword)) return p.help;
  }
  return {};
}

}  // namespace

void Checker::report_syntax_errors() {
  std::vector<std::pair<ListArgument, bool>> lists;  // each, and whether it was reported
  std::optional<uint32_t> compound_line;             // the last line reported as Python's `x += e`
  std::optional<BracketMap> brackets;
  // (A list can also be read as Python's indexing of a name the parser took as missing, `f(<>[x, y])`.)
  for (const SyntaxError& e : a_.program.syntax_errors)
    if (e.kind == SyntaxError::Kind::unreadable || e.kind == SyntaxError::Kind::missing) {
      if (!brackets) brackets.emplace(a_.file.text());
      Span region = e.kind == SyntaxError::Kind::missing ? Span{e.span.begin, e.span.begin + 1} : e.span;
      if (auto list = python_list_in(a_.file.text(), region, *brackets)) lists.emplace_back(*list, false);
    }
  for (const SyntaxError& e : a_.program.syntax_errors) {
    if (e.kind == SyntaxError::Kind::too_deep) {
      report(DiagnosticCode::E0104, e.span, "nesting too deep: more than " + std::to_string(kMaxNesting) + " levels")
          .label("nested too deep to check").help("name a part with an assignment, or split it into functions");
      continue;
    }
    if (e.kind == SyntaxError::Kind::parser_gave_up) {
      report(DiagnosticCode::E0101, {0, 0}, "the parser gave up on this file: it ran past its time limit")
          .label("nothing in this file was read")
          .note("tree-sitter's error recovery is slow on some broken text, such as thousands of unclosed `(`")
          .help("close the brackets left open, or delete the broken part, and check again");
      continue;
    }
    if (e.kind == SyntaxError::Kind::python_block) {
      report_python_block(e);
      continue;
    }
    if (e.kind == SyntaxError::Kind::python_tuple || e.kind == SyntaxError::Kind::python_list) {
      report_python_sequence(e);
      continue;
    }
    if (e.kind == SyntaxError::Kind::dim_without_value) {
      std::string name = text(e.span);
      report(DiagnosticCode::E0103, e.span, "`dim " + name + "` needs its value, as in `dim " + name + " = 64`").label("no `= value`")
          .help(std::string(kDimHelp));
      continue;
    }
    if (e.kind == SyntaxError::Kind::single_quoted) {
      // `'a "b" \'c\''` is `"a \"b\" 'c'"`: the same text, in the quotes the language has.
      std::string_view inside = a_.file.slice({e.span.begin + 1, e.span.end - 1});
      std::string quoted = "\"";
      for (size_t i = 0; i < inside.size(); ++i) {
        if (inside[i] == '\\' && i + 1 < inside.size()) {
          if (inside[i + 1] != '\'') quoted += '\\';
          quoted += inside[++i];
        } else {
          if (inside[i] == '"') quoted += '\\';
          quoted += inside[i];
        }
      }
      quoted += '"';
      report(DiagnosticCode::E0101, e.span, "a string is written in double quotes").label("Python's single quotes").fix("write `" + quoted + "`", e.span, quoted);
      continue;
    }
    if (e.kind == SyntaxError::Kind::number_too_large) {
      std::string digits = text(e.span);
      if (digits.size() > 30) digits = digits.substr(0, 27) + "...";
      report(DiagnosticCode::E0105, e.span, "`" + digits + "` is too large: integers must fit in 64 bits")
          .label("larger than 9223372036854775807")
          .help("a real number can be written with an exponent, as in `1e23`");
      continue;
    }
    // PyTorch's `torch.cat([x, y], dim=-1)`: ShapeScript's built-ins take the tensors as arguments.
    // Every error within the call is the list's doing, and is reported once, as the list.
    auto in_call = std::find_if(lists.begin(), lists.end(), [&](const auto& l) { return e.span.begin <= l.first.call.end && e.span.end >= l.first.call.begin; });
    if (in_call != lists.end()) {
      if (std::exchange(in_call->second, true)) continue;
      uint32_t open_at = in_call->first.open, close_at = in_call->first.close;
      report(DiagnosticCode::E0101, {open_at, close_at + 1}, "there are no lists: `[" + text({open_at + 1, close_at}) + "]`")
          .label("a Python list")
          .help("a built-in takes the tensors themselves as its arguments, as in `concat(x, y, over=D)`")
          .fix("write the tensors as arguments", {{{open_at, open_at + 1}, ""}, {{close_at, close_at + 1}, ""}});
      continue;
    }
    if (e.kind == SyntaxError::Kind::missing) {
      std::string what = e.expected;
      bool word = !what.empty() && (std::isalpha(static_cast<unsigned char>(what[0])) || what[0] == '_');
      error(DiagnosticCode::E0103, e.span, word && what.find('_') != std::string::npos ? "expected a " + what : "expected `" + what + "`",
            "expected here");
      continue;
    }
    auto open = unclosed_bracket(a_.file.slice(e.span), e.span.begin);
    // The two most common half-written lines get a precise message: a bracket left open, which
    // swallows the lines after it, and a block's header without its `:`.
    if (open) {
      std::string bracket(1, open->second), closing = open->second == '(' ? ")" : "]";
      report(DiagnosticCode::E0103, {open->first, open->first + 1}, "expected `" + closing + "`: this `" + bracket + "` is never closed")
          .label("never closed").note("newlines inside `( )` and `[ ]` don't end a line, so the lines after it were read as part of it")
          .help("add `" + closing + "` where it ends");
      continue;
    }
    if (auto colon = missing_block_colon(a_.file, e.span.begin)) {
      report(DiagnosticCode::E0103, {*colon, *colon}, "expected `:` at the end of this line").label("expected `:`")
          .note("a line that opens a block (`fn`, `model`, `for`, `if`, `elif`, `else`) ends with `:`")
          .fix("add `:`", {*colon, *colon}, ":");
      continue;
    }
    std::string found = text(e.span);
    // Params written as PyTorch's modules, a line each (the parser reads a run of them as one error):
    // each line's fix writes the weight it holds.
    std::vector<std::pair<Span, std::string>> modules;
    bool all_modules = true;
    std::string_view unread = a_.file.slice(e.span);  // as written, lines and all
    for (size_t at = 0; at < unread.size() && all_modules;) {
      size_t end = std::min(unread.find('\n', at), unread.size());
      std::string_view line = unread.substr(at, end - at);
      if (line.find_first_not_of(" \r") != std::string_view::npos) {
        auto param = linear_module_param(line);
        size_t first = line.find_first_not_of(' '), last = line.find_last_not_of(" \r") + 1;
        if (param) modules.emplace_back(Span{e.span.begin + static_cast<uint32_t>(at + first), e.span.begin + static_cast<uint32_t>(at + last)}, *param);
        else all_modules = false;
      }
      at = end + 1;
    }
    if (all_modules && !modules.empty()) {
      for (const auto& [span, param] : modules)
        report(DiagnosticCode::E0101, span, "a param is a tensor with a type, not a PyTorch module")
            .label("`nn.Linear`")
            .help("`nn.Linear(in, out)` holds a weight `[out in]`: `" + param + "`, applied with `linear(x, m." +
                  param.substr(6, param.find(':') - 6) + ")` (a bias is a param of its own)")
            .fix("write the weight", span, param);
      continue;
    }
    Span span = e.span;
    // Where the text quoted begins: an error node can start at the newline before it.
    size_t first = unread.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos) span.begin += static_cast<uint32_t>(first);
    uint32_t line = a_.file.line_column(span.begin).line;
    if (compound_line == line) continue;  // the line's other errors are the same one
    if (auto assignment = compound_assignment(a_.file.line_text(line))) {
      compound_line = line;
      Span at{a_.file.offset_of({line, assignment->at.begin}), a_.file.offset_of({line, assignment->at.end})};
      report(DiagnosticCode::E0101, at, "there is no `" + assignment->written + "`: an assignment writes the whole value")
          .label("Python's compound assignment")
          .help("`" + assignment->whole + "`")
          .fix("write `" + assignment->whole + "`", at, assignment->whole);
      continue;
    }
    std::string_view before = std::string_view(a_.file.text()).substr(0, span.begin);
    std::string_view help = python_syntax_help(found, before);
    // The first line of what was unread is what a reader recognizes.
    std::string_view rest = unread.substr(std::min(first, unread.size()));
    if (size_t newline = rest.find('\n'); newline != std::string_view::npos && trimmed(rest.substr(newline)).size() > 0)
      found = squash_spaces(rest.substr(0, newline)) + " ...";
    if (found.size() > 30) found = found.substr(0, 27) + "...";
    if (span.empty()) span.end = span.begin + 1;
    auto d = report(DiagnosticCode::E0101, span, found.empty() ? "unexpected end of input" : "unexpected `" + found + "`");
    d.label("the parser could not read this");
    if (!help.empty()) d.help(std::string(help));
  }
  // Tabs in indentation: the scanner accepts them, the language does not. Only lines with a tab
  // are looked at, found with one scan of the text.
  const std::string& source = a_.file.text();
  for (size_t at = source.find('\t'); at != std::string::npos;) {
    uint32_t line = a_.file.line_column(static_cast<uint32_t>(at)).line;
    at = line + 1 < a_.file.line_count() ? source.find('\t', a_.file.offset_of({line + 1, 0})) : std::string::npos;
    std::string_view text = a_.file.line_text(line);
    size_t first = text.find_first_not_of(" \t");
    std::string_view indent = text.substr(0, first == std::string_view::npos ? 0 : first);
    size_t tab = indent.find('\t');
    if (tab == std::string_view::npos) continue;
    uint32_t offset = a_.file.offset_of({line, static_cast<uint32_t>(tab)});
    error(DiagnosticCode::E0102, {offset, offset + 1}, "a tab in indentation", "indent with spaces");
  }
}

// Python's `with x:`, `while c:` or `try:`, whose lines were read as the lines around them. A
// `with`'s lines run as they are, so its fix removes the header and takes their indentation back one
// level; a `try`'s too, with each `except` removed, lines and all, and each `finally` as a `with`.
void Checker::report_python_block(const SyntaxError& e) {
  uint32_t line = a_.file.line_column(e.span.begin).line;
  std::string_view header = trimmed(a_.file.slice(e.span));
  if (size_t newline = header.find('\n'); newline != std::string_view::npos) header = trimmed(header.substr(0, newline));
  Span at{e.span.begin, e.span.begin + static_cast<uint32_t>(header.size())};
  if (e.expected == "while") {
    report(DiagnosticCode::E0101, at, "there is no `while`: a loop counts over a range, `for l in 0..L:`").label("Python's `while`")
        .note("its lines are checked as if they ran once");
    return;
  }
  if (e.expected == "with as") {  // `with open(f) as f:`: what it binds is Python's
    report(DiagnosticCode::E0101, at, "there is no `with`: its lines are the body's own").label("Python's `with .. as ..`")
        .help("what it binds is a Python object, which a ShapeScript function can't hold: read it in the Python that calls the function");
    return;
  }
  bool is_try = e.expected == "try";
  auto d = report(DiagnosticCode::E0101, at, is_try ? "there is no `try`: its lines are the body's own" : "there is no `with`: its lines are the body's own");
  if (is_try)
    d.label("Python's `try`").note("a shape that can go wrong is an error when the file is checked, not when it runs: an `except`'s lines are not checked");
  else
    d.label("Python's `with`").help("`torch.no_grad()` and its kin belong to the Python that calls the function");
  auto indent_of = [&](uint32_t l) { return a_.file.line_text(l).find_first_not_of(' '); };
  auto line_begin = [&](uint32_t l) { return l < a_.file.line_count() ? a_.file.offset_of({l, 0}) : static_cast<uint32_t>(a_.file.text().size()); };
  size_t header_indent = indent_of(line);
  std::vector<TextEdit> edits;
  // The block under the header line `h`: its lines go (`keep` false), or each loses one level.
  // The line after the block, or none where its indentation is not sure.
  auto block_under = [&](uint32_t h, bool keep) -> std::optional<uint32_t> {
    edits.push_back({{line_begin(h), line_begin(h + 1)}, ""});
    size_t level = 0;
    uint32_t l = h + 1;
    for (; l < a_.file.line_count(); ++l) {
      size_t indent = indent_of(l);
      if (indent == std::string_view::npos) continue;  // a blank line
      if (indent <= header_indent) break;
      if (level == 0) level = indent - header_indent;
      if (indent < header_indent + level) return std::nullopt;  // indented less than the block's first line
      if (keep) {
        uint32_t begin = a_.file.offset_of({l, static_cast<uint32_t>(header_indent)});
        edits.push_back({{begin, begin + static_cast<uint32_t>(level)}, ""});
      }
    }
    if (!keep) edits.back().span.end = line_begin(l);
    return l;
  };
  std::optional<uint32_t> next = block_under(line, true);
  // A `try`'s handlers: the lines after its block, at its indentation, that begin `except` or `finally`.
  while (is_try && next && *next < a_.file.line_count() && indent_of(*next) == header_indent) {
    std::string_view handler = a_.file.line_text(*next).substr(header_indent);
    bool except = handler.starts_with("except") && (handler.size() == 6 || !identifier_char(handler[6]));
    bool finally = handler.starts_with("finally") && (handler.size() == 7 || !identifier_char(handler[7]));
    if (!except && !finally) break;
    next = block_under(*next, finally);
  }
  if (next) d.fix(is_try ? "remove the `try` and its `except` lines" : "remove the `with` line", std::move(edits));
}

// Python's tuple or list (SyntaxError::Kind::python_tuple, python_list): as a call's first argument
// it was read as the arguments it holds, so its fix drops the brackets; one of one is the value itself.
void Checker::report_python_sequence(const SyntaxError& e) {
  const bool list = e.kind == SyntaxError::Kind::python_list;
  const char open = list ? '[' : '(', close = list ? ']' : ')';
  const std::string what = list ? "list" : "tuple", no = "there are no " + what + "s";
  const std::string label = list ? "a Python list" : "Python's tuple";
  std::string_view written = a_.file.slice(e.span);
  std::string quoted = squash_spaces(written);
  if (quoted.size() > 30) quoted = quoted.substr(0, 27) + "...";
  // Where both brackets are written (one the parser took as missing is none): the trailing comma's place.
  bool bracketed = written.size() >= 2 && written.front() == open && written.back() == close;
  size_t last = bracketed ? written.find_last_not_of(" \t\r\n", written.size() - 2) : std::string_view::npos;
  std::optional<size_t> trailing = last != std::string_view::npos && written[last] == ',' ? std::optional(last) : std::nullopt;
  if (e.expected == "arguments" && bracketed) {
    // The brackets and a trailing comma go; what is between stays as written.
    std::vector<TextEdit> edits{{{e.span.begin, e.span.begin + 1}, ""}};
    if (trailing) edits.push_back({{e.span.begin + static_cast<uint32_t>(*trailing), e.span.begin + static_cast<uint32_t>(*trailing) + 1}, ""});
    edits.push_back({{e.span.end - 1, e.span.end}, ""});
    report(DiagnosticCode::E0101, e.span, no + ": `" + quoted + "` is read as the arguments it holds").label(label)
        .note("PyTorch takes a shape, or the tensors to join, as one " + what + " or as separate arguments; ShapeScript has only the second, "
              "as in `concat(x, y, over=D)`")
        .fix("write the values as arguments", std::move(edits));
    return;
  }
  if (e.expected == "keyword") {
    report(DiagnosticCode::E0101, e.span, no + ": `" + quoted + "`").label(label)
        .help("a keyword takes one value: `over=` names one axis, so a reduction over several axes is one call an axis, each of the one before");
    return;
  }
  if (e.expected == "return") {
    report(DiagnosticCode::E0101, e.span, no + ": a function returns one value").label(label)
        .help("a function's result is one tensor (tuples aren't in signatures yet): `concat` or `stack` the values, or return each from a function of its own");
    return;
  }
  auto d = report(DiagnosticCode::E0101, e.span, no + ": `" + quoted + "`");
  d.label(label);
  if (e.expected == "one" && bracketed) {  // `(D,)`, `[D]`: what stands between the brackets, less a trailing comma
    std::string_view inside = written.substr(1, (trailing ? *trailing : written.size() - 1) - 1);
    size_t first = inside.find_first_not_of(" \t\r\n");
    std::string value(first == std::string_view::npos ? "" : inside.substr(first, inside.find_last_not_of(" \t\r\n") - first + 1));
    if (list || trailing) d.help("a " + what + " of one is the value itself").fix("write `" + value + "`", e.span, value);
    else d.help("a value is one tensor or number; `q, k, v = split(...)` takes apart the tuple a built-in makes");
  } else if (list) {
    std::string items = bracketed ? squash_spaces(written.substr(1, (trailing ? *trailing : written.size() - 1) - 1)) : "x, y";
    if (items.size() > 30) items = "x, y";
    d.help("a value is one tensor or number: `stack(" + items + ", over=K)` makes one tensor of several, along a new axis `K`");
  } else {
    d.help("a value is one tensor or number; `q, k, v = split(...)` takes apart the tuple a built-in makes");
  }
}

void Checker::declare_globals() {
  for (const Item& item : a_.program.items) {
    std::string_view name = item.name;
    if (item.kind == Item::Kind::python_import) name = name.substr(0, name.find('.'));
    auto [it, inserted] = globals_.try_emplace(name, &item);
    if (!inserted) {
      report(DiagnosticCode::E0202, item.name_span, "`" + std::string(name) + "` is defined twice").label("defined again here")
          .secondary(it->second->name_span, "first defined here");
    } else if (find_builtin(name) && item.kind != Item::Kind::python_import) {
      report(DiagnosticCode::E0202, item.name_span, "`" + item.name + "` is a built-in").label("this hides the built-in `" + item.name + "`")
          .help("choose another name");
    }
  }
}

std::vector<std::string> Checker::global_names(std::optional<Item::Kind> only) const {
  std::vector<std::string> names;
  for (auto& [name, item] : globals_)
    if (!only || item->kind == *only) names.emplace_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

void Checker::evaluate_dim(const Item& item) {
  if (!item.dim_value) return;
  Scope scope;
  scope.mode = SizeMode::fixed;
  auto axis = resolve_size(*item.dim_value, scope);
  if (!axis) return;
  auto value = axis->size.constant_value();
  if (!value) return;
  if (*value <= 0) {
    error(DiagnosticCode::E0309, item.dim_value->span, "`" + item.name + "` must be a positive integer, but it is " + std::to_string(*value),
          "this is " + std::to_string(*value));
    return;
  }
  set_dim(item, *value);
  hover(item.name_span, "```shapescript\ndim " + item.name + " = " + std::to_string(*value) + "\n```" + doc_suffix(item.doc));
}

void Checker::set_dim(const Item& item, int64_t value) {
  a_.semantics.dims[item.name] = value;
  dims_[item.name] = {value, SizeExpr::constant(value), item.name_span,
                      "```shapescript\ndim " + item.name + " = " + std::to_string(value) + "\n```"};
}

std::string Checker::doc_suffix(const std::string& doc) const { return doc.empty() ? "" : "\n\n" + doc; }

void Checker::hover(Span span, std::string text) {
  if (!span.empty()) a_.hovers.push_back({span, std::move(text)});
}

void Checker::definition(Span use, Span target) {
  if (!use.empty() && !target.empty() && !(use == target)) a_.definitions.push_back({use, target});
}

// ---------------------------------------------------------------------------------------------
// Sizes

std::vector<std::string> Checker::size_names(const Scope& scope) const {
  std::vector<std::string> names;
  for (auto& [name, value] : a_.semantics.dims) names.push_back(name);
  for (auto& [name, binding] : scope.axes) names.push_back(name);
  for (auto& [name, local] : scope.locals) names.push_back(name);
  return names;
}

void Checker::unknown_name(const std::string& name, Span span, const std::function<std::vector<std::string>()>& candidates,
                           std::string_view what) {
  if (lost_in_syntax_error(name)) return;
  report(DiagnosticCode::E0201, span, "no " + std::string(what) + " named `" + name + "`")
      .label("not defined")
      .suggest(span, suggest_known(name, candidates));
}

std::optional<std::string> Checker::suggest_known(std::string_view name, const std::function<std::vector<std::string>()>& candidates) {
  if (suggestion_work_ >= kSuggestionBudget) return std::nullopt;
  if (recording_) recording_->reads_all_names = true;
  std::vector<std::string> names = candidates();
  suggestion_work_ += names.size();
  return suggest_name(name, names);
}

std::optional<Axis> Checker::resolve_size_name(const std::string& name, Span span, Scope& scope) {
  Axis axis;
  axis.label = name;
  axis.name = name;
  if (const KnownDim* dim = known_dim(name)) {
    axis.size = dim->size;
    axis.bound_at = dim->span;
    definition(span, dim->span);
    hover(span, dim->use_hover);
    return axis;
  }
  if (auto bound = scope.axes.find(name); bound != scope.axes.end()) {
    axis.size = bound->second.size;
    axis.bound_at = bound->second.at;
    if (!bound->second.label.empty() && bound->second.label != name && scope.mode != SizeMode::signature) axis.label = name;
    definition(span, bound->second.at);
    std::string size = axis.size.to_user_string();
    hover(span, size == name ? "```shapescript\n" + name + "\n```\na generic axis: its size comes from the arguments"
                             : "```shapescript\n" + name + " = " + size + "\n```\nthe size of an axis");
    return axis;
  }
  if (auto local = scope.locals.find(name); local != scope.locals.end()) {
    const ValueType& type = local->second.type;
    if (type.is_unknown()) return std::nullopt;  // reported where its value went wrong
    if (type.is_tensor() && type.tensor.rank() == 0 && type.tensor.element.is_integer()) {
      axis.size = type.known_size ? *type.known_size : SizeExpr::variable(name);
      definition(span, local->second.at);
      hover(span, "```shapescript\n" + name + ": " + type.to_string() + "\n```");
      return axis;
    }
  }
  if (globals_.count(name) && globals_.at(name)->kind == Item::Kind::dim) return std::nullopt;  // a broken dim, reported already
  if (scope.mode == SizeMode::signature || scope.mode == SizeMode::assertion) {
    // A new generic axis: a size variable, equal wherever the same name appears.
    axis.size = SizeExpr::variable(name);
    axis.bound_at = span;
    scope.axes[name] = {axis.size, span, name};
    scope.generics.push_back(name);
    hover(span, "```shapescript\n" + name + "\n```\na generic axis: its size comes from the arguments");
    return axis;
  }
  unknown_name(name, span, [&] { return size_names(scope); }, scope.mode == SizeMode::fixed ? "dim" : "size");
  return std::nullopt;
}

std::optional<Axis> Checker::resolve_size(const SizeNode& node, Scope& scope) {
  try {
    return resolve_size_unchecked(node, scope);
  } catch (const std::overflow_error&) {
    error(DiagnosticCode::E0301, node.span, "this size is too large to compute", "overflows 64 bits");
    return std::nullopt;
  }
}

std::optional<Axis> Checker::resolve_size_unchecked(const SizeNode& node, Scope& scope) {
  Axis axis;
  axis.label = text(node.span);
  switch (node.kind) {
    case SizeNode::Kind::error: return std::nullopt;
    case SizeNode::Kind::number:
      axis.size = SizeExpr::constant(node.number);
      return axis;
    case SizeNode::Kind::name: return resolve_size_name(node.name, node.span, scope);
    case SizeNode::Kind::scaled: {
      Span name_span{static_cast<uint32_t>(node.span.end - node.name.size()), node.span.end};
      auto inner = resolve_size_name(node.name, name_span, scope);
      if (!inner) return std::nullopt;
      axis.size = SizeExpr::constant(node.number) * inner->size;
      axis.bound_at = inner->bound_at;
      return axis;
    }
    case SizeNode::Kind::unknown: {
      // A data-dependent size: a variable of its own, known only when the program runs.
      std::string name = "?" + node.name;
      axis.size = SizeExpr::variable(name);
      axis.name = node.name;
      if (!scope.axes.count(name)) scope.axes[name] = {axis.size, node.span, axis.label};
      axis.bound_at = scope.axes[name].at;
      return axis;
    }
    case SizeNode::Kind::group: {
      // Each child is resolved once: resolving a lone child again for its name was exponential in
      // nested groups (`((((b))))`).
      SizeExpr product = SizeExpr::constant(1);
      for (const SizeNode& child : node.children) {
        auto factor = resolve_size(child, scope);
        if (!factor) return std::nullopt;
        product = product * factor->size;
        if (node.children.size() == 1) axis.name = factor->name;
      }
      axis.size = product;
      return axis;
    }
    case SizeNode::Kind::binary: {
      if (node.children.size() != 2) return std::nullopt;
      auto left = resolve_size(node.children[0], scope);
      auto right = resolve_size(node.children[1], scope);
      if (!left || !right) return std::nullopt;
      switch (node.op) {
        case '+': axis.size = left->size + right->size; break;
        case '-': axis.size = left->size - right->size; break;
        case '*': axis.size = left->size * right->size; break;
        case '/': {
          auto quotient = right->size.is_zero() ? std::nullopt : left->size.divide_exact(right->size);
          if (!quotient) {
            auto d = report(DiagnosticCode::E0302, node.span,
                            "`" + axis.label + "` does not divide exactly: " + describe_axis(*left) + " is not a multiple of " + describe_axis(*right));
            d.label("not a whole number");
            if (!left->bound_at.empty() && left->size.is_constant()) d.secondary(left->bound_at, "`" + left->label + "` is " + left->size.to_user_string());
            if (!right->bound_at.empty() && right->size.is_constant() && !(right->bound_at == left->bound_at))
              d.secondary(right->bound_at, "`" + right->label + "` is " + right->size.to_user_string());
            d.note("sizes are whole numbers, so `/` must divide exactly");
            auto divisor = right->size.constant_value();
            std::vector<std::string> names = left->size.variables();
            if (divisor && *divisor > 1 && names.size() == 1 && left->size == SizeExpr::variable(names[0]))
              d.help("name the quotient instead: write `" + names[0] + "` as `" + std::to_string(*divisor) + "h` where it is bound, and use `h` here");
            d.emit();
            return std::nullopt;
          }
          axis.size = *quotient;
          break;
        }
        case '%':
        case SizeNode::kFloorDivide: {
          // Floor division and remainder, as Python's: sizes only where the result is one for every
          // value of the generic axes (`(2h+1) // 2` is `h`); an index such as `l % 2` is eval_subscript's.
          std::string op = node.op == '%' ? "%" : "//";
          auto divisor = right->size.constant_value();
          if (!divisor || *divisor <= 0) {
            error(DiagnosticCode::E0302, node.children[1].span,
                  "`" + op + "` in a size needs a fixed positive divisor, but `" + right->label + "` " +
                      (divisor ? "is " + std::to_string(*divisor) : "varies from call to call"),
                  "not a fixed positive number");
            return std::nullopt;
          }
          auto result = node.op == '%' ? left->size.remainder(*divisor) : left->size.floor_divide(*divisor);
          if (!result) {
            std::vector<std::string> names = left->size.variables();
            auto d = report(DiagnosticCode::E0302, node.span,
                            "`" + axis.label + "` is no size expression: it rounds differently for different " + describe_axis(*left));
            d.label("not a size for every `" + (names.empty() ? left->label : names[0]) + "`");
            d.note("sizes are polynomials of the generic axes, and `" + op + " " + std::to_string(*divisor) + "` gives one only where each axis's coefficient is a multiple of " +
                   std::to_string(*divisor) + ": `(2h+1) // 2` is `h`, `(2h+1) % 2` is 1");
            if (names.size() == 1 && left->size == SizeExpr::variable(names[0]) && node.op != '%')
              d.help("name the quotient instead: write `" + names[0] + "` as `" + std::to_string(*divisor) + "h` where it is bound, and use `h` here");
            d.emit();
            return std::nullopt;
          }
          axis.size = *result;
          break;
        }
        default: return std::nullopt;
      }
      if (auto value = axis.size.constant_value(); value && *value < 0) {
        error(DiagnosticCode::E0309, node.span, "`" + axis.label + "` is negative (" + std::to_string(*value) + ")", "a size can't be negative");
        return std::nullopt;
      }
      return axis;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Types

std::optional<ElementType> Checker::element_type(const ElementTypeNode& node, Scope& scope) {
  ElementType element;
  const std::string& name = node.name;
  if (name == "Real") element.kind = ElementKind::real;
  else if (name == "NonNeg") element.kind = ElementKind::nonneg;
  else if (name == "Int") element.kind = ElementKind::int_;
  else if (name == "Bool") element.kind = ElementKind::bool_;
  else if (name == "Index") {
    element.kind = ElementKind::index;
    if (!node.bound) {
      error(DiagnosticCode::E0203, node.span, "`Index` needs its bound, as in `Index[V]`", "bound missing");
      return std::nullopt;
    }
    auto bound = resolve_size(*node.bound, scope);
    if (!bound) return std::nullopt;
    element.bound = bound->size;
    element.bound_label = bound->label;
  } else if (name == "Logit") {
    element.kind = ElementKind::logit;
    if (!node.over) {
      error(DiagnosticCode::E0203, node.span, "`Logit` needs the axis it is over, as in `Logit over V`", "axis missing");
      return std::nullopt;
    }
    element.over = *node.over;
  } else {
    if (lost_in_syntax_error(name)) return std::nullopt;
    static const std::vector<std::string> known = {"Real", "NonNeg", "Int", "Bool", "Index", "Logit"};
    std::vector<std::string> candidates = known;
    if (recording_) recording_->reads_all_names = true;
    for (std::string& model : global_names(Item::Kind::model)) candidates.push_back(std::move(model));
    report(DiagnosticCode::E0203, node.name_span, "no element type or model named `" + name + "`")
        .label("unknown type")
        .suggest(node.name_span, suggest_name(name, candidates));
    return std::nullopt;
  }
  return element;
}

ValueType Checker::type_from_node(const TypeNode& node, Scope& scope) {
  // A model name stands alone: `m: Tiny`.
  if (!node.is_tensor && node.element) {
    auto global = globals_.find(node.element->name);
    if (global != globals_.end() && global->second->kind == Item::Kind::model) {
      ValueType model;
      model.kind = ValueType::Kind::model;
      model.name = node.element->name;
      definition(node.element->name_span, global->second->name_span);
      model_type_uses_.emplace_back(node.element->name_span, global->second);
      return model;
    }
  }
  TensorType tensor;
  bool ok = true;
  for (const SizeNode& size : node.axes) {
    auto axis = resolve_size(size, scope);
    if (!axis) {
      ok = false;
      continue;
    }
    tensor.axes.push_back(std::move(*axis));
  }
  if (node.element) {
    auto element = element_type(*node.element, scope);
    if (!element) return ValueType::unknown();
    if (element->kind == ElementKind::logit &&
        std::none_of(tensor.axes.begin(), tensor.axes.end(), [&](const Axis& x) { return x.name == element->over; })) {
      error(DiagnosticCode::E0305, node.element->over_span, "`Logit over " + element->over + "` names an axis this type lacks",
            "not an axis of " + tensor.to_string());
    }
    // `over V` names the axis as a size does: a use of the dim or generic axis it is bound to.
    for (const Axis& axis : tensor.axes)
      if (element->kind == ElementKind::logit && axis.name == element->over && !axis.bound_at.empty()) {
        definition(node.element->over_span, axis.bound_at);
        break;
      }
    tensor.element = *element;
  }
  if (!ok) return ValueType::unknown();
  return ValueType::of(std::move(tensor));
}

FunctionSignature Checker::signature_of(const Item& item) {
  FunctionSignature signature;
  Scope scope;
  scope.mode = SizeMode::signature;
  for (const Parameter& p : item.parameters) {
    signature.names.push_back(p.name);
    signature.parameters.push_back(type_from_node(p.type, scope));
  }
  size_t parameter_generics = scope.generics.size();
  if (item.result) signature.result = type_from_node(*item.result, scope);
  signature.generics.insert(scope.generics.begin(), scope.generics.end());
  for (auto& [name, binding] : scope.axes)
    if (name.starts_with("?")) signature.generics.insert(name);
  signature.result_only.insert(scope.generics.begin() + static_cast<std::ptrdiff_t>(parameter_generics), scope.generics.end());
  // A result's sizes must follow from the arguments' (or be `?k`, known when the program runs).
  for (auto it = scope.generics.begin() + static_cast<std::ptrdiff_t>(parameter_generics); it != scope.generics.end(); ++it) {
    std::vector<std::string> names;
    for (const std::string& g : scope.generics)
      if (!signature.result_only.count(g) || g == *it) names.push_back(g);
    for (auto& [name, value] : a_.semantics.dims) names.push_back(name);
    auto suggestion = suggest_name(*it, names);
    report(DiagnosticCode::E0308, scope.axes[*it].at, "`" + *it + "` in the result type of `" + item.name + "` is not an axis of any parameter")
        .label("bound by no parameter")
        .note("a caller works out the result's sizes from its arguments' sizes, so each one must come from a parameter")
        .help(suggestion ? "did you mean `" + *suggestion + "`?"
                         : "use a parameter's axis, or write `?" + *it + "` for a size known only when the program runs");
  }
  signature.scope_axes = scope.axes;
  signature.generic_order = scope.generics;
  return signature;
}

std::string Checker::signature_text(const Item& item) const {
  // A signature a record gave has its text already: working it out squashes every type's spaces.
  if (auto known = signature_texts_.find(&item); known != signature_texts_.end()) return known->second;
  return ss::signature_text(a_.file, item);
}

std::string signature_text(const SourceFile& file, const Item& item) {
  auto text = [&](Span span) { return squash_spaces(file.slice(span)); };
  std::string out = std::string(item.exported ? "export " : "") + (item.kind == Item::Kind::extern_fn ? "extern fn " : "fn ") + item.name + "(";
  for (size_t i = 0; i < item.parameters.size(); ++i)
    out += (i ? ", " : "") + item.parameters[i].name + ": " + text(item.parameters[i].type.span);
  out += ")";
  if (item.result) out += " -> " + text(item.result->span);
  if (item.kind == Item::Kind::extern_fn) out += " = \"" + item.extern_target + "\"";
  return out;
}

// ---------------------------------------------------------------------------------------------
// Models

void Checker::check_model(const Item& item) {
  std::map<std::string, Span> seen;
  auto fields = std::make_shared<ModelFields>();
  model_fields_[&item] = fields;
  std::string hover_text = "```shapescript\nmodel " + item.name + ":\n";
  for (const Item::Param& param : item.params) {
    if (auto [first, inserted] = seen.try_emplace(param.name, param.name_span); !inserted) {
      report(DiagnosticCode::E0202, param.name_span, "`" + item.name + "` has two parameters named `" + param.name + "`")
          .label("defined again here").secondary(first->second, "first defined here");
      continue;
    }
    // A name that is no dim reads as a generic axis here, so that E0602 can say the size isn't fixed.
    Scope scope;
    scope.mode = SizeMode::signature;
    ValueType type = type_from_node(param.type, scope);
    hover_text += "    param " + param.name + ": " + text(param.type.span) + "\n";
    if (type.is_tensor())
      for (const Axis& axis : type.tensor.axes)
        if (!axis.size.is_constant()) {
          std::vector<std::string> dims;
          for (auto& [name, value] : a_.semantics.dims) dims.push_back(name);
          std::vector<std::string> variables = axis.size.variables();
          auto suggestion = variables.size() == 1 ? suggest_name(variables[0], dims) : std::nullopt;
          report(DiagnosticCode::E0602, axis.bound_at.empty() ? param.type.span : axis.bound_at,
                 "`" + param.name + "`'s size must be fixed, but " + describe_axis(axis) + " is not")
              .label("not a dim")
              .note("a model's parameters are created before any input is seen, so every size is a dim or a number")
              .help(suggestion ? "did you mean `" + *suggestion + "`?" : "declare its size with `dim`, as in `dim P = 1024`, and use that");
          type = ValueType::unknown();
          break;
        }
    (*fields)[param.name] = type;
    hover(param.name_span, "```shapescript\nparam " + param.name + ": " + type.to_string() + "\n```" + doc_suffix(param.doc));
    if (param.init) check_initializer(*param.init);
  }
  model_hovers_[&item] = hover_text + "```" + doc_suffix(item.doc);
}

// What the tools after `check` (import-weights, verify, --hf, --gguf) read of the forward: its
// description as a language model, or the first reason it isn't one, with its line.
std::string Checker::describe_as_language_model(const ModelLayout& layout) const {
  auto line = [&](Span span) { return std::to_string(a_.file.line_column(span.begin).line + 1); };
  auto fields = [](const std::vector<std::string>& names) {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", `" : "`") + names[i] + "`";
    return out;
  };
  std::string title = "**`" + layout.function + "` as a language model** (what `import-weights`, `verify` and `--gguf` read): ";
  if (!layout.refusals.empty())
    return title + "it isn't one: line " + line(layout.refusals.front().span) + ": " + layout.refusals.front().rule + ".";
  if (!layout.is_language_model()) return title + "it isn't one.";
  std::string out = title + "embedding `" + layout.embedding + "`";
  if (layout.loop) {
    out += "; " + (layout.layers ? std::to_string(*layout.layers) + " blocks" : std::string("blocks")) + " (line " + line(layout.loop->span) + ")";
    if (!layout.stacked.empty()) out += " reading " + fields(layout.stacked) + " per block";
  }
  out += "; output layer `" + layout.output_layer + "`" + (layout.tied ? " (the embedding's table)" : "");
  if (!layout.output_bias.empty()) out += " with bias `" + layout.output_bias + "`";
  for (const OutputOp& op : layout.after_output) {
    std::ostringstream value;
    value << op.value;
    out += op.kind == OutputOp::Kind::scale ? ", then scaled by " + value.str()
          : op.kind == OutputOp::Kind::softcap ? ", then capped at " + value.str() + " (`tanh(z / c) * c`)"
                                               : ", then `" + text(op.span) + "`";
  }
  return out + ".";
}

void Checker::add_model_hovers() {
  std::vector<const Item*> models;
  for (const Item& item : a_.program.items)
    if (model_hovers_.count(&item)) models.push_back(&item);
  std::vector<ModelCost> costs = costs_of(models);
  for (size_t i = 0; i < models.size(); ++i) {
    const Item* item = models[i];
    std::string& text = model_hovers_.at(item);
    const ModelCost& cost = costs[i];
    if (cost.parameter_formula) {
      std::string formula = format_size_formula(*cost.parameter_formula);
      text += "\n\n**" + group_thousands(cost.parameters) + " parameters**";
      if (formula != std::to_string(cost.parameters)) text += " = " + formula;
    }
    if (cost.kv_elements_per_token) {
      // The export's element type is float32; a server's is often 16-bit.
      int64_t elements = *cost.kv_elements_per_token;
      text += "\n\nKey-value cache per token (`" + cost.forward + "`): " + format_size_formula(*cost.kv_formula) + " = " +
              group_thousands(elements) + " elements: " + group_thousands(elements * 4) + " B in float32, " +
              group_thousands(elements * 2) + " B in bfloat16/float16";
      if (cost.kv_window)
        text += "; a sliding window (`window=`) keeps at most " + group_thousands(*cost.kv_window) + " tokens a sequence: " +
                group_thousands(elements * 4 * *cost.kv_window) + " B in float32";
    }
    if (a_.model && a_.model->model == item) text += "\n\n" + describe_as_language_model(*a_.model);
    hover(item->name_span, text);
  }
  for (auto& [span, item] : model_type_uses_)
    if (auto text = model_hovers_.find(item); text != model_hovers_.end()) hover(span, text->second);
}

void Checker::check_initializer(const Expr& init) {
  const Expr* callee = &init;
  if (init.kind == Expr::Kind::call && !init.operands.empty()) callee = init.operands[0].get();
  const Builtin* builtin = callee->kind == Expr::Kind::name ? find_builtin(callee->text) : nullptr;
  if (builtin && builtin->effect == BuiltinEffect::initializer) {
    if (init.kind == Expr::Kind::call)
      for (const Argument& argument : init.arguments) {
        if (!argument.keyword) {
          error(DiagnosticCode::E0501, argument.span, "`" + std::string(builtin->name) + "` takes keyword arguments only", "give it a name");
          continue;
        }
        if (std::find(builtin->keywords.begin(), builtin->keywords.end(), *argument.keyword) == builtin->keywords.end()) {
          std::vector<std::string> accepted(builtin->keywords.begin(), builtin->keywords.end());
          auto suggestion = suggest_name(*argument.keyword, accepted);
          auto d = report(DiagnosticCode::E0502, argument.keyword_span, "`" + std::string(builtin->name) + "` has no argument `" + *argument.keyword + "`");
          d.label("unknown keyword").suggest(argument.keyword_span, suggestion);
          if (!suggestion) d.note("`" + std::string(builtin->name) + "` is `" + std::string(builtin->signature) + "`");
        }
      }
    return;
  }
  std::vector<std::string> initializers;
  for (const Builtin& b : builtins())
    if (b.effect == BuiltinEffect::initializer) initializers.emplace_back(b.name);
  auto d = report(DiagnosticCode::E0601, callee->span, "`" + text(callee->span) + "` is not an initializer");
  d.label("expected `normal(std=..)`, `ones` or `zeros`");
  if (auto ours = torch_initializer(init))
    d.help("PyTorch's `" + text(init.span) + "` is `" + *ours + "` here: the param's type gives the shape").fix("write `" + *ours + "`", init.span, *ours);
  else
    d.suggest(callee->span, callee->kind == Expr::Kind::name ? suggest_name(callee->text, initializers) : std::nullopt);
}

// PyTorch's way to make a weight, `torch.randn(F, D) * 0.02`, `torch.zeros(D)`: the initializer it is
// (`normal(std=0.02)`, `zeros`), the shape being the param's type.
std::optional<std::string> Checker::torch_initializer(const Expr& init) const {
  const Expr* call = &init;
  std::string scale;
  if (init.kind == Expr::Kind::binary && init.text == "*" && init.operands.size() == 2) {
    bool left = init.operands[0]->kind == Expr::Kind::number;
    const Expr& number = *init.operands[left ? 0 : 1];
    if (number.kind != Expr::Kind::number || number.number <= 0) return std::nullopt;
    scale = text(number.span);
    call = init.operands[left ? 1 : 0].get();
  }
  if (call->kind != Expr::Kind::call || call->operands.empty()) return std::nullopt;
  const Expr& callee = *call->operands[0];
  bool named = callee.kind == Expr::Kind::name || (callee.kind == Expr::Kind::attribute && !callee.operands.empty() &&
                                                   callee.operands[0]->kind == Expr::Kind::name && callee.operands[0]->text == "torch");
  if (!named) return std::nullopt;
  if (callee.text == "randn") return "normal(std=" + (scale.empty() ? std::string("1.0") : scale) + ")";
  if ((callee.text == "zeros" || callee.text == "ones") && scale.empty()) return callee.text;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Functions

void Checker::check_function(const Item& item) {
  const FunctionSignature& signature = this->signature(&item);
  Scope scope;
  scope.mode = SizeMode::body;
  scope.function = &item;
  scope.axes = signature.scope_axes;
  for (size_t i = 0; i < item.parameters.size(); ++i) {
    const Parameter& p = item.parameters[i];
    scope.locals[p.name] = {signature.parameters[i], p.name_span};
    hover(p.name_span, parameter_hover(item, i, signature));
  }
  hover(item.name_span, function_hover(item, signature));
  current_ = &item;
  bool returned = false;
  if (item.body) returned = check_block(*item.body, scope);
  if (item.result && !returned && item.body && !item.body->statements.empty() && !cut_short(item)) {
    error(DiagnosticCode::E0701, item.name_span, "`" + item.name + "` says it returns " + text(item.result->span) + " but does not return",
          "no `return` at the end");
  }
  current_ = nullptr;
}

bool Checker::check_block(const Block& block, Scope& scope) {
  bool returned = false;
  for (const Statement& statement : block.statements) returned = check_statement(statement, scope) || returned;
  return returned;
}

void Checker::widen_rebound(const Statement& block_statement, Scope& scope) {
  std::function<void(const Statement&)> visit = [&](const Statement& statement) {
    for (const auto& [name, span] : statement.targets) {
      auto local = scope.locals.find(name);
      if (local == scope.locals.end() || !local->second.type.is_tensor()) continue;
      ElementType& element = local->second.type.tensor.element;
      if (element.kind == ElementKind::nonneg || element.kind == ElementKind::logit) element = ElementType{};
    }
    auto visit_block = [&](const Block* block) {
      if (block)
        for (const Statement& inner : block->statements) visit(inner);
    };
    for (const auto& branch : statement.branches) visit_block(branch.second.get());
    visit_block(statement.body.get());
  };
  visit(block_statement);
}

bool Checker::check_statement(const Statement& statement, Scope& scope) {
  switch (statement.kind) {
    case Statement::Kind::assign: {
      const Statement* outer = std::exchange(assigning_, statement.targets.size() > 1 ? &statement : nullptr);
      ValueType value = statement.value ? eval(*statement.value, scope) : ValueType::unknown();
      assigning_ = outer;
      if (value.kind == ValueType::Kind::python && statement.value) {
        python_without_as(*statement.value, std::nullopt);
        value = ValueType::unknown();  // reported once, here, not again at each use
      }
      if (statement.targets.size() == 1) {
        bind_local(statement.targets[0].first, statement.targets[0].second, value, scope, statement.value.get());
      } else if (value.kind == ValueType::Kind::tuple && value.elements.size() == statement.targets.size()) {
        for (size_t i = 0; i < statement.targets.size(); ++i)
          bind_local(statement.targets[i].first, statement.targets[i].second, value.elements[i], scope);
      } else {
        if (!value.is_unknown()) {
          std::string have = value.kind == ValueType::Kind::tuple ? std::to_string(value.elements.size()) + " values" : "one value";
          error(DiagnosticCode::E0505, statement.value->span,
                std::to_string(statement.targets.size()) + " names are assigned " + have, "this gives " + have);
        }
        for (auto& [name, span] : statement.targets) bind_local(name, span, ValueType::unknown(), scope);
      }
      return false;
    }
    case Statement::Kind::return_: {
      if (!statement.value) return true;
      returned_ = statement.value.get();
      ValueType value = eval(*statement.value, scope);
      returned_ = nullptr;
      check_return(*statement.value, value, scope);
      return true;
    }
    case Statement::Kind::expression:
      if (statement.value) eval(*statement.value, scope);
      return false;
    case Statement::Kind::for_: {
      if (!statement.python_iterable.empty()) report_python_loop(statement);
      for (const Expr* bound : {statement.value.get(), statement.end.get()}) {
        if (!bound) continue;
        ValueType type = eval(*bound, scope);
        if (!type.is_unknown() && !(type.is_tensor() && type.tensor.rank() == 0 && type.tensor.element.is_integer()))
          error(DiagnosticCode::E0703, bound->span, "a `for` range's ends must be integers, but this is " + type.to_string(), "not an integer");
      }
      // `for l in 0..N` counts below N, so `l` is an `Index[N]`: `m.norm[l]` is known to be in range.
      ValueType index = ValueType::scalar(ElementKind::int_);
      if (statement.end)
        if (auto end = a_.semantics.types.find(statement.end.get()); end && end->known_size) {
          index = ValueType::scalar(ElementKind::index);
          index.tensor.element.bound = *end->known_size;
          index.tensor.element.bound_label = text(statement.end->span);
        }
      // Ends fixed when checking: the loop is unrolled as it is traced, and `l` is a plain number in each block.
      auto fixed_end = [&](const Expr* e) {
        const ValueType* type = e ? a_.semantics.types.find(e) : nullptr;
        return type && type->fixed && type->known_size && type->known_size->is_constant();
      };
      index.fixed = fixed_end(statement.value.get()) && fixed_end(statement.end.get());
      if (!statement.end) index = ValueType::unknown();  // Python's loop over a value: nothing known of an item
      bind_local(statement.variable, statement.variable_span, index, scope);
      widen_rebound(statement, scope);
      scope.blocks.emplace_back("the loop", scope.locals);
      if (statement.body) check_block(*statement.body, scope);
      scope.blocks.pop_back();
      return false;
    }
    case Statement::Kind::if_: {
      bool all_return = statement.body != nullptr;
      widen_rebound(statement, scope);
      for (auto& [condition, body] : statement.branches) {
        if (condition) {
          ValueType type = eval(*condition, scope);
          if (!type.is_unknown() && !(type.is_tensor() && type.tensor.rank() == 0 && type.tensor.element.kind == ElementKind::bool_))
            error(DiagnosticCode::E0401, condition->span, "an `if` condition must be a `Bool` scalar, but this is " + type.to_string(),
                  "not a Bool");
        }
        scope.blocks.emplace_back("the `if`", scope.locals);
        bool returned = body ? check_block(*body, scope) : false;
        scope.blocks.pop_back();
        all_return = all_return && returned;
      }
      if (statement.body) {
        scope.blocks.emplace_back("the `if`", scope.locals);
        all_return = check_block(*statement.body, scope) && all_return;
        scope.blocks.pop_back();
      }
      return all_return;
    }
    case Statement::Kind::error: return false;
  }
  return false;
}

// Python's `for l in range(L):` (lowered as `0..L`, which the fix writes, and checked as that loop)
// or `for layer in layers:` (lowered with no ends; the body is checked with `layer` unknown).
void Checker::report_python_loop(const Statement& loop) {
  const Span at = loop.python_iterable;
  if (loop.end) {
    std::string range = (loop.value && loop.value->span.empty() ? "0" : text(loop.value->span)) + ".." + text(loop.end->span);
    report(DiagnosticCode::E0101, at, "there is no `range`: a loop counts over `a..b`")
        .label("Python's `range`")
        .help("`for l in 0..L:` counts from 0 up to L - 1, as `range(L)` does: `" + range + "`")
        .fix("write `" + range + "`", at, range);
    return;
  }
  report(DiagnosticCode::E0101, at, "a loop counts over `a..b`, not over the items of a value")
      .label("Python's loop over a value")
      .help("there are no lists to loop over: layers are one weight stacked along an axis, `param w: [L D D]`, "
            "and a loop counts over it, `for l in 0..L:`, taking `m.w[l]`");
}

std::optional<TensorType> Checker::expected_type(const Expr& e, const Scope& scope) {
  if (&e != returned_ || !scope.function || !scope.function->result) return std::nullopt;
  const ValueType& result = signature(scope.function).result;
  if (!result.is_tensor()) return std::nullopt;
  return result.tensor;
}

bool Checker::names_builtin(const std::string& name, const Scope& scope) const {
  return find_builtin(name) && !scope.locals.count(name) && !scope.axes.count(name) && !known_dim(name) && !globals_.count(name);
}

void Checker::bind_local(const std::string& name, Span span, const ValueType& type, Scope& scope, const Expr* value) {
  if (name.empty()) return;
  // Inside a `for` or `if`, a name from before the block keeps its type: the loop compiles to
  // `torch.while_loop` and the branches to `torch.cond`, whose carried values have one shape.
  if (!scope.blocks.empty())
    if (auto before = scope.blocks.back().second.find(name); before != scope.blocks.back().second.end()) {
      const ValueType& old = before->second.type;
      std::optional<DiagnosticCode> code;
      std::string why;
      if (old.is_unknown() || type.is_unknown()) {
      } else if (old.is_tensor() != type.is_tensor() || (old.is_tensor() && old.tensor.rank() != type.tensor.rank())) {
        code = DiagnosticCode::E0306;
      } else if (old.is_tensor()) {
        for (size_t i = 0; i < old.tensor.rank() && !code; ++i)
          if (old.tensor.axes[i].size != type.tensor.axes[i].size) {
            code = DiagnosticCode::E0301;
            why = ": " + dim_word(i) + " is " + describe_axis(type.tensor.axes[i]) + ", not " + describe_axis(old.tensor.axes[i]);
          }
        if (!code && !assignable(type.tensor.element, old.tensor.element)) code = DiagnosticCode::E0401;
      }
      if (code) {
        const std::string& block = scope.blocks.back().first;
        report(*code, span, "`" + name + "` is " + old.to_string() + " before " + block + ", which can't change it, but this is " + type.to_string())
            .label(why.empty() ? "this is " + type.to_string() : why.substr(2))
            .secondary(before->second.at, "`" + name + "` is " + old.to_string() + " here")
            .note("a name rebound inside `for` or `if` keeps its type, so that the block compiles to `torch.while_loop` or `torch.cond`")
            .help("use a new name for the new value");
        scope.locals[name] = {old, span};
        return;
      }
    }
  scope.locals[name] = {type, span, value};
  if (!type.is_unknown()) {
    hover(span, "```shapescript\n" + name + ": " + type.to_string() + "\n```");
    if (type.is_tensor() || type.kind == ValueType::Kind::tuple) a_.inlays.push_back({span.end, ": " + type.to_string()});
  }
}

void Checker::check_return(const Expr& expr, const ValueType& value, Scope& scope) {
  const Item* fn = scope.function;
  if (!fn) return;
  if (!fn->result) {
    if (value.is_unknown() || value.kind == ValueType::Kind::python) return;
    report(DiagnosticCode::E0702, expr.span, "`" + fn->name + "` returns " + value.to_string() + ", but declares no result type")
        .label("this is " + value.to_string()).secondary(fn->name_span, "declared without `->`")
        .help("declare what it returns: `-> " + value.to_string() + "`");
    return;
  }
  const FunctionSignature& signature = this->signature(fn);
  const ValueType& expected = signature.result;
  if (value.kind == ValueType::Kind::python) {
    python_without_as(expr, text(fn->result->span));
    return;
  }
  if (value.is_unknown() || expected.is_unknown()) return;
  if (!value.is_tensor() || !expected.is_tensor()) {
    if (value.kind != expected.kind || value.name != expected.name)
      error(DiagnosticCode::E0702, expr.span, "`" + fn->name + "` returns " + value.to_string() + ", but its result type is " + expected.to_string(),
            "this is " + value.to_string());
    return;
  }
  const TensorType& got = value.tensor;
  const TensorType& want = expected.tensor;
  if (got.rank() != want.rank()) {
    report(DiagnosticCode::E0702, expr.span, "`" + fn->name + "` returns " + got.to_string() + " (" + std::to_string(got.rank()) + " axes), but its result type is " +
            want.to_string() + " (" + std::to_string(want.rank()) + " axes)").label("this is " + got.to_string())
        .secondary(fn->result->span, "the result type");
    return;
  }
  SizeBindings bindings;
  for (size_t i = 0; i < want.rank(); ++i) {
    UnifyResult r;
    try {
      r = unify_sizes(want.axes[i].size, got.axes[i].size, bindings, signature.result_only);
    } catch (const std::overflow_error&) {
      continue;
    }
    if (r.status == UnifyStatus::equal || r.status == UnifyStatus::bound || r.status == UnifyStatus::deferred) continue;
    const SizeNode& written = fn->result->axes[i];
    auto d = report(DiagnosticCode::E0301, expr.span,
                    "`" + fn->name + "` returns " + got.to_string() + ", but its result type says " + want.to_string() + ": " + dim_word(i) +
                        " is " + describe_axis(got.axes[i]) + ", not " + describe_axis(want.axes[i]));
    d.label(dim_word(i) + " is " + describe_axis(got.axes[i])).secondary(written.span, "the result type says " + describe_axis(want.axes[i]));
    if (!want.axes[i].bound_at.empty() && !(want.axes[i].bound_at == written.span) && want.axes[i].size.is_constant())
      d.secondary(want.axes[i].bound_at, "`" + want.axes[i].label + "` is " + want.axes[i].size.to_user_string() + " here");
    const Axis& made = got.axes[i];
    if (!made.bound_at.empty() && made.label != made.size.to_user_string() && !(made.bound_at == written.span))
      d.secondary(made.bound_at, "`" + made.label + "` is " + made.size.to_user_string() + " here");
    d.emit();
    return;
  }
  if (!assignable(got.element, want.element)) {
    error(DiagnosticCode::E0702, expr.span,
          "`" + fn->name + "` returns `" + got.element.to_string() + "` elements, but its result type says `" + want.element.to_string() + "`",
          "these are `" + got.element.to_string() + "`");
  }
}

// `e` is a Python value where a typed one is needed.
void Checker::python_without_as(const Expr& expr, std::optional<std::string> expected_type) {
  auto d = report(DiagnosticCode::E0403, expr.span, "`" + text(expr.span) + "` is a Python value, whose type the checker can't know");
  d.label("Python value").help("say what it is with `as`, as in `" + text(expr.span) + " as " + expected_type.value_or("[D]") + "`");
  if (expected_type) d.fix("assert its type with `as " + *expected_type + "`", {expr.span.end, expr.span.end}, " as " + *expected_type);
  d.emit();
}

// ---------------------------------------------------------------------------------------------
// Hover text

std::string Checker::export_dims_text(const FunctionSignature& signature) const {
  std::string dynamic, fixed;
  std::set<std::string> seen;
  for (size_t i = 0; i < signature.parameters.size(); ++i) {
    const ValueType& type = signature.parameters[i];
    if (!type.is_tensor()) continue;
    for (size_t a = 0; a < type.tensor.rank(); ++a) {
      const Axis& axis = type.tensor.axes[a];
      if (!seen.insert(axis.label).second) continue;
      ExportAxis e = export_axis(axis);
      if (e.kind == ExportAxis::Kind::fixed) {
        fixed += (fixed.empty() ? "" : ", ") + ("`" + axis.label + "`") + (axis.label == std::to_string(e.fixed) ? "" : " = " + std::to_string(e.fixed));
      } else {
        std::string how = e.kind == ExportAxis::Kind::dim            ? "`Dim(\"" + e.dim + "\")`"
                          : e.kind == ExportAxis::Kind::derived      ? "`" + axis.size.to_string() + "`, derived from `Dim(\"" + e.dim + "\")`"
                          : e.kind == ExportAxis::Kind::product      ? "a `Dim` of its own, checked to equal `" + axis.size.to_string() + "`"
                                                                     : "a data-dependent size";
        dynamic += "\n- `" + axis.label + "` → " + how;
      }
    }
  }
  std::string out = "\n\n**torch.export**: dynamic:";
  out += dynamic.empty() ? " none" : dynamic;
  out += "\n\nfixed: " + (fixed.empty() ? std::string("none") : fixed);
  return out;
}

std::string Checker::function_hover(const Item& item, const FunctionSignature& signature) const {
  std::string out = "```shapescript\n" + signature_text(item) + "\n```" + doc_suffix(item.doc);
  if (item.exported) out += export_dims_text(signature);
  return out;
}

std::string Checker::parameter_hover(const Item& item, size_t index, const FunctionSignature& signature) const {
  const ValueType& type = signature.parameters[index];
  std::string out = "```shapescript\n" + item.parameters[index].name + ": " + type.to_string() + "\n```";
  if (item.exported && type.is_tensor()) {
    out += "\n";
    for (size_t a = 0; a < type.tensor.rank(); ++a) {
      const Axis& axis = type.tensor.axes[a];
      ExportAxis e = export_axis(axis);
      std::string how = e.kind == ExportAxis::Kind::fixed     ? "fixed" + (axis.label == std::to_string(e.fixed) ? "" : " (" + std::to_string(e.fixed) + ")")
                        : e.kind == ExportAxis::Kind::dim     ? "dynamic: `Dim(\"" + e.dim + "\")`"
                        : e.kind == ExportAxis::Kind::derived ? "dynamic: `" + axis.size.to_string() + "`, derived from `Dim(\"" + e.dim + "\")`"
                        : e.kind == ExportAxis::Kind::product ? "dynamic: a `Dim` checked to equal `" + axis.size.to_string() + "`"
                                                              : "data-dependent";
      out += "\n- " + dim_word(a) + " `" + axis.label + "`: " + how;
    }
  }
  return out;
}

ExportAxis Checker::export_axis(const Axis& axis) {
  ExportAxis e;
  e.label = axis.label;
  if (auto value = axis.size.constant_value()) {
    e.kind = ExportAxis::Kind::fixed;
    e.fixed = *value;
    return e;
  }
  std::vector<std::string> variables = axis.size.variables();
  if (variables.size() == 1 && variables[0].starts_with("?")) {
    e.kind = ExportAxis::Kind::data_dependent;
    e.dim = variables[0].substr(1);
    return e;
  }
  if (variables.size() == 1)
    if (auto linear = axis.size.linear_in(variables[0])) {
      auto scale = linear->first.constant_value();
      auto offset = linear->second.constant_value();
      if (scale && offset && *scale > 0) {
        e.dim = variables[0];
        e.scale = *scale;
        e.offset = *offset;
        e.kind = (*scale == 1 && *offset == 0) ? ExportAxis::Kind::dim : ExportAxis::Kind::derived;
        return e;
      }
    }
  e.kind = ExportAxis::Kind::product;
  e.factors = variables;
  e.scale = axis.size.coefficient_gcd();
  return e;
}

// ---------------------------------------------------------------------------------------------
// Exports

void Checker::collect_exports() {
  if (reuse_exports()) return;
  for (const Item& item : a_.program.items) {
    if (exported_root(item)) {
      const FunctionSignature& signature = this->signature(&item);
      ExportSignature e;
      e.function = item.name;
      e.name_span = item.name_span;
      if (!item.exported) e.model = signature.parameters[0].name;  // its parameters become the program's
      for (size_t i = item.exported ? 0 : 1; i < item.parameters.size(); ++i) {
        ExportInput input;
        input.name = item.parameters[i].name;
        const ValueType& type = signature.parameters[i];
        if (type.is_tensor()) {
          input.element = type.tensor.element;
          for (const Axis& axis : type.tensor.axes) {
            ExportAxis ea = export_axis(axis);
            input.axes.push_back(ea);
          }
        }
        e.inputs.push_back(std::move(input));
      }
      for (const std::string& g : signature.generic_order)
        if (!g.starts_with("?") && !signature.result_only.count(g)) e.dims.push_back(g);
      a_.exports.push_back(std::move(e));
    }
  }
}

// ---------------------------------------------------------------------------------------------

std::vector<SymbolFact> document_symbols(const Analysis& analysis) {
  std::vector<SymbolFact> symbols;
  for (const Item& item : analysis.program.items) {
    SymbolFact symbol;
    symbol.name = item.name;
    symbol.span = item.span;
    symbol.name_span = item.name_span;
    switch (item.kind) {
      case Item::Kind::dim:
        symbol.kind = SymbolFact::Kind::dim;
        if (auto it = analysis.semantics.dims.find(item.name); it != analysis.semantics.dims.end()) symbol.detail = std::to_string(it->second);
        break;
      case Item::Kind::python_import: symbol.kind = SymbolFact::Kind::python_import; symbol.detail = "import python"; break;
      case Item::Kind::extern_fn: symbol.kind = SymbolFact::Kind::extern_fn; symbol.detail = signature_text(analysis.file, item); break;
      case Item::Kind::function: symbol.kind = SymbolFact::Kind::function; symbol.detail = signature_text(analysis.file, item); break;
      case Item::Kind::model:
        symbol.kind = SymbolFact::Kind::model;
        for (const Item::Param& param : item.params)
          symbol.children.push_back({SymbolFact::Kind::param, param.name, squash_spaces(analysis.file.slice(param.type.span)), param.span,
                                     param.name_span, {}});
        break;
    }
    symbols.push_back(std::move(symbol));
  }
  return symbols;
}

std::unique_ptr<Analysis> analyze_tree(SourceFile file, const SyntaxTree& tree, const AnalyzeOptions& options) {
  auto analysis = std::make_unique<Analysis>();
  analysis->file = std::move(file);
  analysis->program = lower_tree(analysis->file, tree);
  Checker checker(*analysis, options);
  checker.run();
  return analysis;
}

std::unique_ptr<Analysis> analyze(SourceFile file, const AnalyzeOptions& options) {
  SyntaxTree tree = parse_source(file.text());
  return analyze_tree(std::move(file), tree, options);
}

}  // namespace ss
