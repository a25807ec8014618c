// Incremental checking (check/function_cache.h): after any edit, what analyze_incremental gives is
// what a full check gives, and an edit inside one function checks only that function again.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "check/analysis.h"
#include "check/function_cache.h"
#include "syntax/syntax.h"
#include "syntax/walk.h"

using namespace ss;

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string span_text(Span s) { return std::to_string(s.begin) + "-" + std::to_string(s.end); }

std::string describe(const Axis& axis) {
  std::string out = axis.size.to_string() + "'" + axis.label + "'" + axis.name + "@" + span_text(axis.bound_at);
  if (axis.origin) {
    out += "{" + axis.origin->step + "@" + span_text(axis.origin->at);
    for (const Axis& input : axis.origin->inputs) out += " " + describe(input);
    out += "}";
  }
  return out;
}

std::string describe(const ValueType& type) {
  std::string out = type.to_string() + (type.fixed ? " fixed" : "") + (type.known_size ? " =" + type.known_size->to_string() : "");
  for (const Axis& axis : type.tensor.axes) out += " " + describe(axis);
  for (const ValueType& element : type.elements) out += " (" + describe(element) + ")";
  return out;
}

// Everything an analysis says, as text: the two analyses hold different programs, so expressions
// are matched by their place in the walk, not by address.
std::string describe(const Analysis& a) {
  std::ostringstream out;
  for (const Diagnostic& d : a.diagnostics) {
    out << "D " << static_cast<int>(d.code) << " " << static_cast<int>(d.severity) << " " << d.message << " " << span_text(d.primary.span)
        << " " << d.primary.text;
    for (const Label& l : d.secondary) out << " | " << span_text(l.span) << " " << l.text;
    for (const std::string& n : d.notes) out << " note " << n;
    for (const std::string& h : d.helps) out << " help " << h;
    for (const Fix& f : d.fixes)
      for (const TextEdit& e : f.edits) out << " fix " << f.title << " " << span_text(e.span) << " " << e.replacement;
    out << "\n";
  }
  for (const HoverFact& h : a.hovers) out << "H " << span_text(h.span) << " " << h.text << "\n";
  for (const DefinitionFact& d : a.definitions) out << "G " << span_text(d.use) << " " << span_text(d.target) << "\n";
  for (const InlayFact& i : a.inlays) out << "I " << i.offset << " " << i.label << "\n";
  for (const SymbolFact& s : document_symbols(a)) out << "S " << s.name << " " << s.detail << " " << span_text(s.span) << "\n";
  for (const ExportSignature& e : a.exports) {
    out << "E " << e.function << " " << e.model << " " << span_text(e.name_span);
    for (const ExportInput& input : e.inputs) {
      out << " (" << input.name << " " << input.element.to_string();
      for (const ExportAxis& x : input.axes) {
        out << " " << static_cast<int>(x.kind) << ":" << x.label << ":" << x.fixed << ":" << x.dim << ":" << x.scale << ":" << x.offset;
        for (const std::string& f : x.factors) out << "*" << f;
      }
      out << ")";
    }
    for (const std::string& d : e.dims) out << " " << d;
    out << "\n";
  }
  out << "N " << a.not_servable << "\n";
  size_t types = 0, calls = 0;
  // Signatures, which a check shares with the previous one's records while no position in them moved.
  for (const Item& item : a.program.items)
    if (auto f = a.semantics.functions.find(&item); f != a.semantics.functions.end()) {
      out << "F " << item.name;
      for (const ValueType& parameter : f->second->parameters) out << " (" << describe(parameter) << ")";
      out << " -> " << describe(f->second->result) << "\n";
    }
  for (const Item& item : a.program.items) {
    if (item.kind != Item::Kind::function) continue;
    std::vector<const Expr*> expressions = expressions_of(item);
    for (size_t i = 0; i < expressions.size(); ++i) {
      if (const ValueType* t = a.semantics.types.find(expressions[i])) {
        out << "T " << item.name << " " << i << " " << describe(*t) << "\n";
        ++types;
      }
      if (auto c = a.semantics.calls.find(expressions[i]); c) {
        const CallFacts& f = *c;
        out << "C " << item.name << " " << i << " " << (f.builtin ? "builtin" : "") << " " << (f.function ? f.function->name : "")
            << (f.function ? span_text(f.function->span) : "") << " " << f.python << " " << span_text(f.callee_span);
        for (const Axis& axis : f.works_across) out << " " << describe(axis);
        for (auto& [k, v] : f.lowering) out << " " << k << "=" << v;
        for (auto& [k, v] : f.bindings) out << " " << k << ":" << v.to_string();
        out << "\n";
        ++calls;
      }
    }
  }
  // Every type and call belongs to a function's expression or a model's initializer.
  out << "counts " << types << " " << calls << " of " << a.semantics.types.size() << " " << a.semantics.calls.size() << "\n";
  return out.str();
}

// Every node of a program with its spans, for comparing a lowering that copied items with a fresh one.
void describe(std::ostream& out, const SizeNode& size) {
  out << "(" << static_cast<int>(size.kind) << " " << span_text(size.span) << " " << size.number << " " << size.name << " " << size.op;
  for (const SizeNode& child : size.children) describe(out, child);
  out << ")";
}

void describe(std::ostream& out, const TypeNode& type) {
  out << "[type " << type.is_tensor << " " << span_text(type.span) << " " << span_text(type.axes_span);
  for (const SizeNode& axis : type.axes) describe(out, axis);
  if (const auto& e = type.element) {
    out << " element " << e->name << " " << span_text(e->name_span) << " " << span_text(e->span) << " " << e->over.value_or("-") << " "
        << span_text(e->over_span);
    if (e->bound) describe(out, *e->bound);
  }
  out << "]";
}

void describe(std::ostream& out, const ExprPtr& expr) {
  if (!expr) {
    out << "null";
    return;
  }
  out << "{" << static_cast<int>(expr->kind) << " " << span_text(expr->span) << " " << expr->text << " " << span_text(expr->text_span) << " "
      << expr->number << " " << expr->is_integer << " " << expr->piped << " " << expr->python_index;
  for (const ExprPtr& operand : expr->operands) describe(out, operand);
  for (const Argument& argument : expr->arguments) {
    out << " arg " << argument.keyword.value_or("-") << " " << span_text(argument.keyword_span) << " " << span_text(argument.span);
    describe(out, argument.value);
    if (argument.pattern) {
      out << " pattern " << span_text(argument.pattern->span);
      for (const auto& input : argument.pattern->inputs)
        for (const SizeNode& size : input) describe(out, size);
      for (const SizeNode& size : argument.pattern->output) describe(out, size);
    }
  }
  for (const SizeNode& size : expr->index) describe(out, size);
  if (expr->type) describe(out, *expr->type);
  out << "}";
}

void describe(std::ostream& out, const std::unique_ptr<Block>& block) {
  if (!block) {
    out << "noblock";
    return;
  }
  out << "<block " << span_text(block->span);
  for (const Statement& s : block->statements) {
    out << "\n  stmt " << static_cast<int>(s.kind) << " " << span_text(s.span) << " " << s.variable << " " << span_text(s.variable_span) << " " << span_text(s.python_iterable);
    for (const auto& [name, at] : s.targets) out << " " << name << "@" << span_text(at);
    describe(out, s.value);
    describe(out, s.end);
    for (const auto& [condition, body] : s.branches) {
      describe(out, condition);
      describe(out, body);
    }
    describe(out, s.body);
  }
  out << ">";
}

std::string describe(const Program& program) {
  std::ostringstream out;
  for (const Item& item : program.items) {
    out << "item " << static_cast<int>(item.kind) << " " << item.name << " " << span_text(item.span) << " " << span_text(item.name_span)
        << " doc " << item.doc << " extern " << item.extern_target << " " << span_text(item.extern_target_span) << " export "
        << item.exported << " " << span_text(item.export_span);
    if (item.dim_value) describe(out, *item.dim_value);
    for (const Parameter& p : item.parameters) {
      out << " param " << p.name << " " << span_text(p.name_span) << " " << span_text(p.span);
      describe(out, p.type);
    }
    if (item.result) describe(out, *item.result);
    describe(out, item.body);
    for (const Item::Param& p : item.params) {
      out << " mparam " << p.name << " " << span_text(p.name_span) << " " << span_text(p.span) << " doc " << p.doc;
      describe(out, p.type);
      describe(out, p.init);
    }
    out << "\n";
  }
  for (const SyntaxError& e : program.syntax_errors)
    out << "error " << static_cast<int>(e.kind) << " " << span_text(e.span) << " " << e.expected << "\n";
  return out.str();
}

// One random one-line edit: a digit changed, a word misspelled, a line deleted, duplicated or
// blanked, a comment or a new local added.
std::string edit_one_line(const std::string& text, std::mt19937& random) {
  std::vector<size_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n' && i + 1 < text.size()) starts.push_back(i + 1);
  size_t line = std::uniform_int_distribution<size_t>(0, starts.size() - 1)(random);
  size_t begin = starts[line];
  size_t end = text.find('\n', begin);
  if (end == std::string::npos) end = text.size();
  std::string content = text.substr(begin, end - begin);
  size_t indent = content.find_first_not_of(' ');
  if (indent == std::string::npos) indent = content.size();
  std::string replacement = content;
  switch (std::uniform_int_distribution<int>(0, 6)(random)) {
    case 0:
      for (char& c : replacement)
        if (std::isdigit(static_cast<unsigned char>(c))) {
          c = c == '9' ? '1' : static_cast<char>(c + 1);
          break;
        }
      break;
    case 1: {
      if (replacement.size() > indent) {
        size_t at = std::uniform_int_distribution<size_t>(indent, replacement.size() - 1)(random);
        replacement.insert(at, "x");
      }
      break;
    }
    case 2: replacement = ""; break;
    case 3: replacement = content + "\n" + content; break;
    case 4: replacement = std::string(indent, ' ') + "# edited"; break;
    case 5: replacement = content + "\n" + std::string(indent, ' ') + "extra = 1"; break;
    case 6:
      if (replacement.size() > indent) replacement.erase(std::uniform_int_distribution<size_t>(indent, replacement.size() - 1)(random), 1);
      break;
  }
  return text.substr(0, begin) + replacement + text.substr(end);
}

std::unique_ptr<Analysis> incremental(const std::string& text, Analysis* previous, CheckReuse* reuse = nullptr) {
  SyntaxTree tree = parse_source(text);
  AnalyzeOptions options;
  options.serving_severity = Severity::warning;
  return analyze_incremental(SourceFile("test.ss", text), tree, options, previous, reuse);
}

std::unique_ptr<Analysis> full(const std::string& text) {
  SyntaxTree tree = parse_source(text);
  AnalyzeOptions options;
  options.serving_severity = Severity::warning;
  return analyze_tree(SourceFile("test.ss", text), tree, options);
}

// The numbers of a program's expressions (ExprIds): each held by one expression, none of them
// free; the free ones each once. Returns how many numbers below `next` are neither held nor free,
// which edits must not make grow (a number lost for good would grow the tables indexed by them).
size_t expect_expr_ids_sound(const Program& program) {
  std::vector<uint32_t> held;
  for (const Item& item : program.items) {
    auto hold = [&](const Expr& e) {
      held.push_back(e.id);
      return Walk::into;
    };
    if (item.body) for_each_expr(*item.body, hold);
    for (const Item::Param& param : item.params)
      if (param.init) for_each_expr(*param.init, hold);
  }
  std::vector<uint32_t> all = held;
  all.insert(all.end(), program.expr_ids.free.begin(), program.expr_ids.free.end());
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  CHECK((all.empty() || (all.front() >= 1 && all.back() < program.expr_ids.next)));
  return program.expr_ids.next - 1 - all.size();
}

// Makes each edit in turn (the first `from` in the text becomes `to`), checking each text from the
// previous one's analysis, and compares the program and the analysis with a full check's.
void expect_each_edit_as_full(std::string text, const std::vector<std::pair<std::string, std::string>>& edits) {
  auto previous = incremental(text, nullptr);
  for (const auto& [from, to] : edits) {
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    INFO("after replacing `" << from << "` with `" << to << "`:\n" << text);
    auto next = incremental(text, previous.get());
    auto fresh = full(text);
    CHECK(describe(next->program) == describe(fresh->program));
    CHECK(describe(*next) == describe(*fresh));
    previous = std::move(next);
  }
}

}  // namespace

// Random one-line edits of `text`, accumulating as typing does (every few, the file starts over
// so it stays mostly valid): after each, the incremental check must equal a full one.
void expect_random_edits_as_full(const std::string& name, std::string text, int count, std::mt19937& random, size_t& edits,
                                 size_t& reused, size_t& functions) {
  auto previous = incremental(text, nullptr);
  REQUIRE(describe(*previous) == describe(*full(text)));
  const size_t lost = expect_expr_ids_sound(previous->program);
  std::string original = text;
  for (int i = 0; i < count; ++i) {
    text = i % 8 == 0 ? edit_one_line(original, random) : edit_one_line(text, random);
    CheckReuse reuse;
    auto next = incremental(text, previous.get(), &reuse);
    INFO(name << " after edit " << i << ":\n" << text);
    auto fresh = full(text);
    // The items copied from the previous program, moved, are what lowering them again gives.
    REQUIRE(describe(next->program) == describe(fresh->program));
    REQUIRE(describe(*next) == describe(*fresh));
    CHECK(expect_expr_ids_sound(next->program) == lost);
    ++edits;
    functions += reuse.functions;
    reused += reuse.functions - reuse.checked;
    previous = std::move(next);
  }
}

TEST_CASE("incremental checking after random one-line edits equals a full check", "[incremental]") {
  std::mt19937 random(24);
  size_t edits = 0, reused = 0, functions = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(SHAPESCRIPT_SOURCE_DIR) / "examples"))
    if (entry.path().extension() == ".ss") expect_random_edits_as_full(entry.path().filename().string(), read_file(entry.path()), 40, random, edits, reused, functions);
  // Most edits leave most functions as they were: they must not be checked again.
  CHECK(edits > 1000);
  CHECK(reused * 2 > functions);
}

TEST_CASE("incremental checking of Python written out of habit equals a full check after random edits", "[incremental]") {
  // The goldens of Python's syntax and PyTorch's methods: their errors, values and chained fixes
  // come from the lowering and from state the checker keeps per call, which an edit must not skew.
  std::mt19937 random(43);
  size_t edits = 0, reused = 0, functions = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(SHAPESCRIPT_SOURCE_DIR) / "tests" / "golden" / "check")) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".ss" && (name.starts_with("E0101_python") || name.starts_with("E0204") || name.starts_with("E0205_python") || name.starts_with("E0501_python") ||
                                           name.starts_with("E0206") || name.starts_with("E0503") || name.starts_with("E0502_stack") || name.starts_with("E0502_reduce") || name.starts_with("E0505_table") || name.starts_with("E0103_dim")))
      expect_random_edits_as_full(name, read_file(entry.path()), 16, random, edits, reused, functions);
  }
  CHECK(edits > 300);
}

TEST_CASE("an edit inside one function checks only that function again", "[incremental]") {
  std::string text = R"(dim D = 16
dim E = 8

fn a(x: [n D]) -> [n D]:
    y = x * 2
    return y

fn b(x: [n E]) -> [n E]:
    return x + 1

fn c(x: [n D]) -> [n D]:
    return a(x)

fn d(x: [n E]) -> [n E]:
    return b(x)
)";
  CheckReuse reuse;
  auto first = incremental(text, nullptr, &reuse);
  REQUIRE(first->diagnostics.empty());
  CHECK(reuse.functions == 4);
  CHECK(reuse.checked == 4);

  // A body: that function alone.
  std::string body = text;
  body.replace(body.find("y = x * 2"), 9, "y = x * 3");
  auto second = incremental(body, first.get(), &reuse);
  CHECK(describe(*second) == describe(*full(body)));
  CHECK(reuse.checked == 1);

  // A signature: the function and its callers, not the rest.
  std::string signature = body;
  signature.replace(signature.find("fn b(x: [n E]) -> [n E]"), 23, "fn b(x: [m E]) -> [m E]");
  auto third = incremental(signature, second.get(), &reuse);
  CHECK(describe(*third) == describe(*full(signature)));
  CHECK(reuse.checked == 2);

  // A dim: the functions whose names reach it, through the signatures they call too.
  std::string dim = signature;
  dim.replace(dim.find("dim D = 16"), 10, "dim D = 32");
  auto fourth = incremental(dim, third.get(), &reuse);
  CHECK(describe(*fourth) == describe(*full(dim)));
  CHECK(reuse.checked == 2);

  // Lines added above every function move them all, and none is checked again.
  std::string moved = "# a comment\n\n" + dim;
  auto fifth = incremental(moved, fourth.get(), &reuse);
  CHECK(describe(*fifth) == describe(*full(moved)));
  CHECK(reuse.checked == 0);
}

TEST_CASE("an edit in one model's forward works out that model's cost again, and only its own", "[incremental]") {
  // Two language models over the same dims: examples/llama.ss, and its model and functions again
  // under other names. Each model's cost is reused unless a function it may read was checked again.
  std::string llama = read_file(std::filesystem::path(SHAPESCRIPT_SOURCE_DIR) / "examples" / "llama.ss");
  std::string second = llama.substr(llama.find("model Llama:"));
  for (const char* name : {"Llama", "rope", "attention", "feed_forward", "forward"})
    second = std::regex_replace(second, std::regex(std::string("\\b") + name + "\\b"), std::string(name) + "2");
  std::string text = llama + "\n" + second;
  auto first = incremental(text, nullptr);
  REQUIRE(!first->has_errors());
  REQUIRE(describe(*first) == describe(*full(text)));

  // One block fewer in the second model's cache: its hover changes, the first model's doesn't.
  std::string edited = text;
  size_t loop = edited.find("for l in 0..L:", edited.find("fn forward2("));
  REQUIRE(loop != std::string::npos);
  edited.replace(loop, 14, "for l in 1..L:");
  auto model_hovers = [](const Analysis& a, const char* model) {
    const Item* item = a.find_item(model);
    std::string out;
    for (const HoverFact& h : a.hovers)
      if (item && h.span == item->name_span) out += h.text;
    return out;
  };
  CheckReuse reuse;
  auto next = incremental(edited, first.get(), &reuse);
  auto fresh = full(edited);
  CHECK(reuse.checked == 1);
  CHECK(describe(*next) == describe(*fresh));
  CHECK(model_hovers(*next, "Llama2") == model_hovers(*fresh, "Llama2"));
  CHECK(model_hovers(*fresh, "Llama2") != model_hovers(*full(text), "Llama2"));
  CHECK(model_hovers(*fresh, "Llama") == model_hovers(*full(text), "Llama"));
}

TEST_CASE("items copied from the previous lowering read their docs again and move with the text", "[incremental]") {
  std::string text = R"(dim C = 8
dim K = 10

model Net:
    ## the weight
    param w: [K C] = normal(std=0.2)
    param b: [K] = zeros

# a comment
fn head(m: Net, x: [n C]) -> [n K]:
    return linear(x, m.w, m.b)

fn twice(x: [n K]) -> [n K]:
    return x * 2
)";
  // Each edit leaves some items' own bytes alone but changes what is read around them.
  std::vector<std::pair<std::string, std::string>> edits = {
      {"# a comment", "## a doc now"},                // the line above `head` becomes its doc
      {"## a doc now", "## a doc\n## of two lines"},  // the doc grows, `head` moves by a line
      {"    ## the weight\n", ""},                    // a model param loses its doc
      {"dim K = 10\n", "dim K = 10\n\n\n"},           // lines inserted above everything but a dim
      {"dim K = 10", "dim K = 12"},                   // a dim's value, items after it moved by nothing
      {"\n\nfn twice", "\nfn twice"},                 // a line deleted right above a function
      {"    return x * 2\n", "    return x * 2\n    y = 1\n"},  // the last function grows at its end
      {"fn head(m: Net, x: [n C])", "fn head(m: Net, x: [n C], z: [C])"},  // a signature
  };
  expect_each_edit_as_full(text, edits);
}

TEST_CASE("Python's loops, read as the loop they stand for, move with the text", "[incremental]") {
  std::string text = R"(dim D = 4
dim L = 2

fn counted(x: [n D]) -> [n D]:
    for l in range(1, L):
        x = x * 2
    return x

fn over_a_value(x: [n D]) -> [n D]:
    for layer in layers:
        x = layer(x)
    return x
)";
  expect_each_edit_as_full(text, {
      {"dim L = 2\n", "dim L = 2\ndim E = 3\n"},  // both functions move, unchanged
      {"range(1, L)", "range(L)"},                // the start is the `0` written nowhere
      {"dim E = 3\n", ""},                        // and moves back
  });
}

TEST_CASE("a function is told it does not return only while no unread text follows it", "[incremental]") {
  std::string text = R"(dim D = 4

fn forgotten(x: [n D]) -> [n D]:
    y = x * 2

fn other(x: [n D]) -> [n D]:
    return x
)";
  // Unread text appears after `forgotten`, whose own text is unchanged, then goes.
  expect_each_edit_as_full(text, {
      {"    y = x * 2\n", "    y = x * 2\n    with torch.no_grad():\n"},  // in its own text
      {"    with torch.no_grad():\n", ""},
      {"\nfn other", "\nwith torch.no_grad():\nfn other"},  // between it and the next item
      {"with torch.no_grad():\n", ""},
  });
}

TEST_CASE("an item whose lowering reported an error is lowered again, so the error stays", "[incremental]") {
  std::string text = R"(dim D = 4

fn big(x: [n D]) -> [n D]:
    return x * 99999999999999999999

fn other(x: [n D]) -> [n D]:
    return x + 1
)";
  auto previous = incremental(text, nullptr);
  REQUIRE(!previous->program.syntax_errors.empty());
  for (std::string edited : {"    return x + 2\n", "    return x + 2\n    y = 1\n"}) {
    text.replace(text.find("    return x + "), text.size() - text.find("    return x + "), edited);
    auto next = incremental(text, previous.get());
    auto fresh = full(text);
    CHECK(describe(next->program) == describe(fresh->program));
    CHECK(describe(*next) == describe(*fresh));
    previous = std::move(next);
  }
}

TEST_CASE("a string in single quotes stays an error while the text around it is edited", "[incremental]") {
  std::string text = R"(dim D = 4

fn quoted(x: [n D]) -> [n D]:
    return masked_fill(x, x > 0.0, float('-inf'))

fn other(x: [n D]) -> [n D]:
    return x + 1
)";
  REQUIRE(!full(text)->program.syntax_errors.empty());
  expect_each_edit_as_full(text, {
      {"dim D = 4\n", "dim D = 4\ndim E = 2\n"},  // the item moves; its error must come with it
      {"x + 1", "x + 2"},                         // an edit after it
  });
}

TEST_CASE("Python's tuples stay errors while the text around them is edited", "[incremental]") {
  std::string text = R"(dim D = 4

fn flat(x: [b n D]) -> [b n*D]:
    return x.reshape((b, -1,))

fn both(x: [n D]) -> [n D]:
    s = (D,)
    return x, s

fn other(x: [n D]) -> [n D]:
    return x + 1
)";
  REQUIRE(full(text)->program.syntax_errors.size() == 3);
  expect_each_edit_as_full(text, {
      {"dim D = 4\n", "dim D = 4\ndim E = 2\n"},  // the items move; their errors must come with them
      {"x + 1", "x + 2"},                         // an edit after them
      {"(D,)", "(D, 2)"},                         // an edit inside one
  });
}

TEST_CASE("Python's with block, read as the lines around it, moves with the text", "[incremental]") {
  std::string text = R"(dim D = 4

fn frozen(x: [n D]) -> [n D]:
    with torch.no_grad():
        y = x * 2
    return y

fn other(x: [n D]) -> [n D]:
    return x + 1
)";
  expect_each_edit_as_full(text, {
      {"dim D = 4\n", "dim D = 4\ndim E = 2\n"},  // the item moves; its error must come with it
      {"x + 1", "x + 2"},                         // an edit after it
      {"y = x * 2", "y = x * 3"},                 // an edit inside the block
  });
}

TEST_CASE("Python's try, whose except lines are not read, moves with the text", "[incremental]") {
  std::string text = R"(dim D = 4

fn guarded(x: [n D]) -> [n D]:
    try:
        y = x * 2
    except ValueError:
        y = x
    finally:
        z = y
    return z

fn other(x: [n D]) -> [n D]:
    return x + 1
)";
  expect_each_edit_as_full(text, {
      {"dim D = 4\n", "dim D = 4\ndim E = 2\n"},  // the item moves; its error must come with it
      {"y = x\n", "y = x + 1\n"},                // an edit in the except's lines, which are not read
      {"z = y", "z = y * 2"},                     // an edit in the finally's
      {"x + 1", "x + 2"},                         // an edit after it
  });
}

TEST_CASE("the changed region between two texts is the one a byte-by-byte comparison finds", "[incremental]") {
  // TextChange::between compares blocks first: edits near either end, or near a block's edge, must not fool it.
  auto naive = [](const std::string& before, const std::string& after) {
    size_t shorter = std::min(before.size(), after.size()), prefix = 0, suffix = 0;
    while (prefix < shorter && before[prefix] == after[prefix]) ++prefix;
    while (suffix < shorter - prefix && before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix]) ++suffix;
    return TextChange{static_cast<uint32_t>(prefix), static_cast<uint32_t>(before.size() - suffix), static_cast<uint32_t>(after.size() - suffix)};
  };
  std::mt19937 random(7);
  for (int i = 0; i < 2000; ++i) {
    size_t size = std::uniform_int_distribution<size_t>(0, 400)(random);
    std::string before(size, 'a');
    int letters = i % 2 ? 3 : 1;  // one letter: every block matches, across the change too
    for (char& c : before) c = static_cast<char>('a' + std::uniform_int_distribution<int>(0, letters - 1)(random));
    std::string after = before;
    size_t at = std::uniform_int_distribution<size_t>(0, size)(random);
    size_t removed = std::uniform_int_distribution<size_t>(0, std::min<size_t>(size - at, 70))(random);
    std::string inserted(std::uniform_int_distribution<size_t>(0, 70)(random), i % 4 < 2 ? 'a' : 'b');
    after.replace(at, removed, inserted);
    TextChange fast = TextChange::between(before, after), slow = naive(before, after);
    INFO(before << " -> " << after);
    CHECK(fast.begin == slow.begin);
    CHECK(fast.old_end == slow.old_end);
    CHECK(fast.new_end == slow.new_end);
  }
}

TEST_CASE("hash_text tells apart texts that differ in one byte or in length", "[incremental]") {
  std::string text(100, 'x');
  uint64_t h = hash_text(text);
  CHECK(hash_text(text) == h);
  CHECK(hash_text(text, 1) != h);
  for (size_t i = 0; i < text.size(); ++i) {
    std::string changed = text;
    changed[i] = 'y';
    CHECK(hash_text(changed) != h);
    CHECK(hash_text(std::string_view(text).substr(0, i)) != h);
  }
  CHECK(hash_text(std::string("ab")) != hash_text(std::string("ab\0", 3)));
}
