#include "syntax/syntax.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>
#include <string_view>

#include "syntax/walk.h"

extern "C" const TSLanguage* tree_sitter_shapescript();

namespace ss {

SyntaxTree& SyntaxTree::operator=(SyntaxTree&& other) noexcept {
  if (this != &other) {
    if (tree_) ts_tree_delete(tree_);
    tree_ = other.tree_;
    gave_up_ = other.gave_up_;
    other.tree_ = nullptr;
  }
  return *this;
}

SyntaxTree::~SyntaxTree() {
  if (tree_) ts_tree_delete(tree_);
}

SyntaxTree parse_source(const std::string& text, const SyntaxTree* previous) {
  // One parser per thread: creating one costs more than parsing a small file.
  thread_local std::unique_ptr<TSParser, void (*)(TSParser*)> parser(
      [] {
        TSParser* p = ts_parser_new();
        ts_parser_set_language(p, tree_sitter_shapescript());
        return p;
      }(),
      ts_parser_delete);
  TSTree* old = previous ? previous->get() : nullptr;
  ts_parser_set_timeout_micros(parser.get(), parse_time_limit_us(text.size()));
  if (TSTree* tree = ts_parser_parse_string(parser.get(), old, text.data(), static_cast<uint32_t>(text.size())))
    return SyntaxTree(tree);
  ts_parser_reset(parser.get());  // a timed-out parse would otherwise resume on the next call
  ts_parser_set_timeout_micros(parser.get(), 0);
  SyntaxTree nothing(ts_parser_parse_string(parser.get(), nullptr, "", 0));
  nothing.set_gave_up();
  return nothing;
}

uint64_t parse_time_limit_us(size_t bytes) { return 2'000'000 + static_cast<uint64_t>(bytes) * 16; }

namespace {

// The grammar's node kinds that the lowering tells apart, read by symbol id rather than by
// comparing ts_node_type's string at every node. A symbol maps to a kind by its name, so two
// symbols of one name (the keyword `model` and the item `model`) are one kind, as the names were.
enum class Sym : uint8_t {
  other, error, comment, number, identifier, string, scaled_size, unknown_size, group_size, binary_size,
  tensor_type, element_type, keyword_argument, axis_pattern, parenthesized_expression, binary_expression,
  unary_expression, pipe_expression, call, attribute, subscript, lambda, as_expression, assignment,
  return_statement, for_statement, if_statement, elif_clause, else_clause, expression_statement,
  parameter, dim_item, python_import, extern_fn, function, model, param_decl, python_block, python_handler, tuple,
  python_index, python_slice, python_list,
};

struct Symbols {
  std::vector<Sym> by_symbol;  // indexed by TSSymbol, for the grammar's own symbols
  Symbols() {
    static constexpr std::pair<Sym, const char*> names[] = {
        {Sym::error, "ERROR"}, {Sym::comment, "comment"}, {Sym::number, "number"}, {Sym::identifier, "identifier"},
        {Sym::string, "string"}, {Sym::scaled_size, "scaled_size"}, {Sym::unknown_size, "unknown_size"},
        {Sym::group_size, "group_size"}, {Sym::binary_size, "binary_size"}, {Sym::tensor_type, "tensor_type"},
        {Sym::element_type, "element_type"}, {Sym::keyword_argument, "keyword_argument"},
        {Sym::axis_pattern, "axis_pattern"}, {Sym::parenthesized_expression, "parenthesized_expression"},
        {Sym::binary_expression, "binary_expression"}, {Sym::unary_expression, "unary_expression"},
        {Sym::pipe_expression, "pipe_expression"}, {Sym::call, "call"}, {Sym::attribute, "attribute"},
        {Sym::subscript, "subscript"}, {Sym::lambda, "lambda"}, {Sym::as_expression, "as_expression"},
        {Sym::assignment, "assignment"}, {Sym::return_statement, "return_statement"},
        {Sym::for_statement, "for_statement"}, {Sym::if_statement, "if_statement"}, {Sym::elif_clause, "elif_clause"},
        {Sym::else_clause, "else_clause"}, {Sym::expression_statement, "expression_statement"},
        {Sym::parameter, "parameter"}, {Sym::dim_item, "dim_item"}, {Sym::python_import, "python_import"},
        {Sym::extern_fn, "extern_fn"}, {Sym::function, "function"}, {Sym::model, "model"}, {Sym::param_decl, "param_decl"},
        {Sym::python_block, "python_block"}, {Sym::python_handler, "python_handler"},
        {Sym::tuple, "tuple"}, {Sym::python_index, "python_index"}, {Sym::python_slice, "python_slice"},
        {Sym::python_list, "python_list"},
    };
    const TSLanguage* language = tree_sitter_shapescript();
    by_symbol.resize(ts_language_symbol_count(language), Sym::other);
    for (TSSymbol symbol = 0; symbol < by_symbol.size(); ++symbol) {
      const char* name = ts_language_symbol_name(language, symbol);
      if (!name) continue;
      for (const auto& [sym, wanted] : names)
        if (std::strcmp(name, wanted) == 0) by_symbol[symbol] = sym;
    }
  }
  Sym operator()(TSSymbol symbol) const {
    if (symbol < by_symbol.size()) return by_symbol[symbol];
    return symbol == static_cast<TSSymbol>(-1) ? Sym::error : Sym::other;  // ts_builtin_sym_error: "ERROR"
  }
};

// Field ids, looked up once: by name, tree-sitter compares strings on every call.
struct Fields {
  TSFieldId arguments, attribute, axes, body, bound, condition, element, end, export_, function, index, init, input,
      iterable, keyword, left, module, name, object, operand, operator_, output, over, parameter, parameters, result, right,
      start, target, targets, type, value, variable;
  Fields() {
    const TSLanguage* language = tree_sitter_shapescript();
    auto id = [language](const char* name) {
      return ts_language_field_id_for_name(language, name, static_cast<uint32_t>(std::strlen(name)));
    };
    arguments = id("arguments"), attribute = id("attribute"), axes = id("axes"), body = id("body");
    bound = id("bound"), condition = id("condition"), element = id("element"), end = id("end");
    export_ = id("export"), function = id("function"), index = id("index"), init = id("init");
    input = id("input"), iterable = id("iterable"), keyword = id("keyword"), left = id("left"), module = id("module"), name = id("name"), object = id("object");
    operand = id("operand"), operator_ = id("operator"), output = id("output"), over = id("over");
    parameter = id("parameter"), parameters = id("parameters"), result = id("result"), right = id("right");
    start = id("start"), target = id("target"), targets = id("targets"), type = id("type");
    value = id("value"), variable = id("variable");
  }
};

const Symbols& symbols() {
  static const Symbols table;  // built once, thread-safe
  return table;
}
const Fields& fields() {
  static const Fields table;
  return table;
}

class Lowering {
 public:
  Lowering(const SourceFile& file, Program& program) : file_(file), program_(program) {}
  ~Lowering() {
    if (has_cursor_) ts_tree_cursor_delete(&cursor_);
  }
  Lowering(const Lowering&) = delete;
  Lowering& operator=(const Lowering&) = delete;

  // The lowering of an earlier version of the file, and what changed since.
  struct Earlier {
    Program& program;  // its unchanged items are taken out
    TextChange change;
    std::vector<uint32_t> lowering_errors;  // where the errors the lowering itself reports begin, sorted
  };

  void source_file(TSNode root, const Earlier* earlier = nullptr) {
    collect_errors(root);
    size_t next_earlier = 0;  // items come in source order in both versions
    Children top(*this, root);
    program_.items.reserve(top.size());  // Items are large: moved once each, never by the vector's growth
    for (size_t i = 0; i < top.size(); ++i) {
      TSNode child = top[i].node;
      too_deep_reported_ = false;
      if (earlier && copy_unchanged(child, *earlier, next_earlier)) continue;
      if (earlier) taken_ids_.emplace();
      std::optional<Item> item = lower_item(child);
      if (earlier) free_unused_ids(item ? &*item : nullptr);
      if (item) program_.items.push_back(std::move(*item));
    }
  }

 private:
  const SourceFile& file_;
  Program& program_;
  // While an item is lowered again for an edit: the numbers its expressions took. Those of
  // expressions the lowering made and then dropped (`range(n)`'s call) are freed at once, since
  // numbers now live as long as the document.
  mutable std::optional<std::vector<uint32_t>> taken_ids_;

  ExprPtr new_expr() const {
    auto expr = std::make_unique<Expr>();
    expr->id = program_.expr_ids.take();
    if (taken_ids_) taken_ids_->push_back(expr->id);
    return expr;
  }

  // Frees the numbers taken while lowering an item that none of its expressions holds.
  void free_unused_ids(const Item* item) const {
    std::vector<uint32_t> taken = std::move(*taken_ids_);
    taken_ids_.reset();
    if (taken.empty()) return;
    std::vector<uint32_t> held;
    auto hold = [&](const Expr& e) {
      held.push_back(e.id);
      return Walk::into;
    };
    if (item) {
      if (item->body) for_each_expr(*item->body, hold);
      for (const Item::Param& param : item->params)
        if (param.init) for_each_expr(*param.init, hold);
    }
    std::sort(taken.begin(), taken.end());
    std::sort(held.begin(), held.end());
    std::set_difference(taken.begin(), taken.end(), held.begin(), held.end(), std::back_inserter(program_.expr_ids.free));
  }
  const Symbols& symbols_ = symbols();
  const Fields& fields_ = fields();
  // How many expressions, sizes and blocks enclose the node being lowered; past kMaxNesting a
  // node becomes an error node (one E0104 an item), so no later recursive walk can go deeper.
  mutable int depth_ = 0;
  mutable bool too_deep_reported_ = false;

  struct Deeper {
    explicit Deeper(int& depth) : depth_(++depth) {}
    ~Deeper() { --depth_; }
    int& depth_;
  };
  bool too_deep(TSNode node) const {
    if (depth_ <= kMaxNesting) return false;
    if (!too_deep_reported_) program_.syntax_errors.push_back({SyntaxError::Kind::too_deep, span(node), {}});
    too_deep_reported_ = true;
    return true;
  }

  static Span span(TSNode node) { return {ts_node_start_byte(node), ts_node_end_byte(node)}; }
  std::string text(TSNode node) const { return std::string(file_.slice(span(node))); }
  static std::string_view type(TSNode node) { return ts_node_type(node); }
  Sym kind(TSNode node) const { return ts_node_is_null(node) ? Sym::other : symbols_(ts_node_symbol(node)); }
  static bool present(TSNode node) { return !ts_node_is_null(node) && !ts_node_is_missing(node); }

  // The first child in field `id`, or a null node.
  static TSNode field(TSNode node, TSFieldId id) { return id ? ts_node_child_by_field_id(node, id) : TSNode{}; }

  // A named child of a node, as tree-sitter's cursor visits it (through hidden nodes).
  struct Child {
    TSNode node;
    Sym sym;
    // What the lowering reads: not a comment, not an ERROR.
    bool lowered() const { return sym != Sym::comment && sym != Sym::error; }
  };
  // The children of every node being lowered, a frame per node on one stack, so that walking the
  // tree allocates nothing once the stack has grown to the deepest path's needs; and one cursor,
  // reset per node (a new cursor allocates a stack of its own).
  mutable std::vector<Child> kids_;
  mutable TSTreeCursor cursor_{};
  mutable bool has_cursor_ = false;
  static constexpr uint32_t kFewChildren = 4;

  // Pushes `node`'s named children onto `kids_`; with a field id, only its children in that field
  // (named or not).
  void collect(TSNode node, TSFieldId only_field) const {
    if (!only_field) {
      uint32_t count = ts_node_named_child_count(node);
      if (count <= kFewChildren) {
        for (uint32_t i = 0; i < count; ++i) {
          TSNode child = ts_node_named_child(node, i);
          kids_.push_back({child, symbols_(ts_node_symbol(child))});
        }
        return;
      }
    }
    if (has_cursor_) {
      ts_tree_cursor_reset(&cursor_, node);
    } else {
      cursor_ = ts_tree_cursor_new(node);
      has_cursor_ = true;
    }
    if (!ts_tree_cursor_goto_first_child(&cursor_)) return;
    do {
      if (only_field) {
        if (ts_tree_cursor_current_field_id(&cursor_) == only_field)
          kids_.push_back({ts_tree_cursor_current_node(&cursor_), Sym::other});
        continue;
      }
      TSNode child = ts_tree_cursor_current_node(&cursor_);
      if (ts_node_is_named(child)) kids_.push_back({child, symbols_(ts_node_symbol(child))});
    } while (ts_tree_cursor_goto_next_sibling(&cursor_));
  }

  // The named children of one node (or its children in one field): a frame on `kids_`, popped
  // when it goes out of scope. Lowering a child pushes frames above it, so children are handed
  // out by value, not by reference.
  class Children {
   public:
    Children(const Lowering& lowering, TSNode node, TSFieldId only_field = 0) : kids_(lowering.kids_), begin_(kids_.size()) {
      if (!ts_node_is_null(node)) lowering.collect(node, only_field);
      end_ = kids_.size();
    }
    ~Children() { kids_.resize(begin_); }
    Children(const Children&) = delete;
    Children& operator=(const Children&) = delete;
    size_t size() const { return end_ - begin_; }
    Child operator[](size_t i) const { return kids_[begin_ + i]; }
    // How many children are lowered (Child::lowered), and the first of them.
    size_t lowered_count() const {
      size_t n = 0;
      for (size_t i = begin_; i < end_; ++i) n += kids_[i].lowered();
      return n;
    }
    std::optional<Child> first_lowered() const {
      for (size_t i = begin_; i < end_; ++i)
        if (kids_[i].lowered()) return kids_[i];
      return std::nullopt;
    }

   private:
    std::vector<Child>& kids_;
    size_t begin_, end_;
  };

  // ERROR and MISSING nodes in source order; a cursor walk, since the tree may be deeper than
  // kMaxNesting.
  void collect_errors(TSNode root) {
    if (!ts_node_has_error(root)) return;
    TSTreeCursor cursor = ts_tree_cursor_new(root);
    for (;;) {
      TSNode node = ts_tree_cursor_current_node(&cursor);
      bool descend = false;
      if (ts_node_is_missing(node))
        program_.syntax_errors.push_back({SyntaxError::Kind::missing, span(node), std::string(type(node))});
      else if (kind(node) == Sym::error)
        program_.syntax_errors.push_back({SyntaxError::Kind::unreadable, span(node), {}});
      else
        descend = ts_node_has_error(node);
      if (descend && ts_tree_cursor_goto_first_child(&cursor)) continue;
      bool moved = false;
      while (!moved) {
        if (ts_tree_cursor_goto_next_sibling(&cursor)) moved = true;
        else if (!ts_tree_cursor_goto_parent(&cursor)) break;
      }
      if (!moved) break;
    }
    ts_tree_cursor_delete(&cursor);
  }

  // `##` lines directly above `node`, without the markers.
  std::string doc_comment(TSNode node) const { return doc_comment_at(ts_node_start_byte(node)); }
  std::string doc_comment_at(uint32_t offset) const {
    LineColumn start = file_.line_column(offset);
    std::vector<std::string> lines;
    for (int64_t line = static_cast<int64_t>(start.line) - 1; line >= 0; --line) {
      std::string_view text = file_.line_text(static_cast<uint32_t>(line));
      size_t first = text.find_first_not_of(" \t");
      if (first == std::string_view::npos || text.substr(first, 2) != "##") break;
      std::string_view body = text.substr(first + 2);
      if (!body.empty() && body.front() == ' ') body.remove_prefix(1);
      lines.emplace_back(body);
    }
    std::string doc;
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) doc += (doc.empty() ? "" : "\n") + *it;
    return doc;
  }

  // A string's contents; one in Python's single quotes is noted as an error of the lowering.
  std::string string_contents(TSNode node) const {
    std::string_view t = file_.slice(span(node));
    if (t.starts_with('\'')) program_.syntax_errors.push_back({SyntaxError::Kind::single_quoted, span(node), {}});
    return std::string(t.size() >= 2 ? t.substr(1, t.size() - 2) : t);
  }

  // Digits as an int64; past int64 an E0105 at `at`, and nothing.
  std::optional<int64_t> parse_integer(std::string_view digits, Span at) const {
    int64_t value = 0;
    auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (result.ec == std::errc::result_out_of_range) {
      program_.syntax_errors.push_back({SyntaxError::Kind::number_too_large, at, {}});
      return std::nullopt;
    }
    return result.ec == std::errc() ? std::optional(value) : std::nullopt;
  }

  SizeNode lower_size(TSNode node) const {
    SizeNode size;
    size.span = span(node);
    Sym sym = kind(node);
    if (!present(node) || sym == Sym::error) return size;
    Deeper deeper(depth_);
    if (too_deep(node)) return size;
    if (sym == Sym::number) {
      std::string t = text(node);
      if (t.find_first_not_of("0123456789") != std::string::npos) {  // a float is no size
        size.kind = SizeNode::Kind::number;
        return size;
      }
      auto value = parse_integer(t, size.span);
      if (!value) return size;  // an error node: E0105 says why
      size.kind = SizeNode::Kind::number;
      size.number = *value;
    } else if (sym == Sym::identifier) {
      size.kind = SizeNode::Kind::name;
      size.name = text(node);
    } else if (sym == Sym::scaled_size) {
      std::string t = text(node);
      size_t digits = t.find_first_not_of("0123456789");
      auto factor = parse_integer(std::string_view(t).substr(0, digits), {size.span.begin, size.span.begin + static_cast<uint32_t>(digits)});
      if (!factor) return size;
      size.kind = SizeNode::Kind::scaled;
      size.number = *factor;
      size.name = t.substr(digits);
    } else if (sym == Sym::unknown_size) {
      size.kind = SizeNode::Kind::unknown;
      TSNode name = field(node, fields_.name);
      if (present(name)) size.name = text(name);
    } else if (sym == Sym::group_size) {
      size.kind = SizeNode::Kind::group;
      Children c(*this, node);
      size.children.reserve(c.lowered_count());
      for (size_t i = 0; i < c.size(); ++i)
        if (Child child = c[i]; child.lowered()) size.children.push_back(lower_size(child.node));
    } else if (sym == Sym::binary_size) {
      size.kind = SizeNode::Kind::binary;
      TSNode op = field(node, fields_.operator_);
      std::string written = present(op) ? text(op) : "*";
      size.op = written == "//" ? SizeNode::kFloorDivide : written[0];
      size.children.reserve(2);
      size.children.push_back(lower_size(field(node, fields_.left)));
      size.children.push_back(lower_size(field(node, fields_.right)));
    }
    return size;
  }

  std::vector<SizeNode> lower_sizes(TSNode node) const {
    std::vector<SizeNode> sizes;
    if (!present(node)) return sizes;
    Children c(*this, node);
    sizes.reserve(c.lowered_count());
    for (size_t i = 0; i < c.size(); ++i)
      if (Child child = c[i]; child.lowered()) sizes.push_back(lower_size(child.node));
    return sizes;
  }

  ElementTypeNode lower_element(TSNode node) const {
    ElementTypeNode element;
    element.span = span(node);
    TSNode name = field(node, fields_.name);
    if (present(name)) {
      element.name = text(name);
      element.name_span = span(name);
    }
    TSNode bound = field(node, fields_.bound);
    if (present(bound)) element.bound = lower_size(bound);
    TSNode over = field(node, fields_.over);
    if (present(over)) {
      element.over = text(over);
      element.over_span = span(over);
    }
    return element;
  }

  TypeNode lower_type(TSNode node) const {
    TypeNode result;
    result.span = span(node);
    if (!present(node)) return result;
    Sym sym = kind(node);
    if (sym == Sym::tensor_type) {
      result.is_tensor = true;
      TSNode axes = field(node, fields_.axes);
      result.axes = lower_sizes(axes);
      if (present(axes)) result.axes_span = span(axes);
      TSNode element = field(node, fields_.element);
      if (present(element)) result.element = lower_element(element);
    } else if (sym == Sym::element_type) {
      result.element = lower_element(node);
    }
    return result;
  }

  AxisPattern lower_pattern(TSNode node) const {
    AxisPattern pattern;
    pattern.span = span(node);
    if (fields_.input) {
      Children inputs(*this, node, fields_.input);
      for (size_t i = 0; i < inputs.size(); ++i) pattern.inputs.push_back(lower_sizes(inputs[i].node));
    }
    pattern.output = lower_sizes(field(node, fields_.output));
    return pattern;
  }

  // Python's `for l in range(L):` is lowered as `0..L` (the `0` written nowhere) and `range(a, b)`
  // as `a..b`, so the body is checked as the loop the fix writes; any other value (`in layers`)
  // has no ends. Either way the checker reports `python_iterable`.
  void lower_python_loop(Statement& statement, TSNode iterable) const {
    statement.python_iterable = span(iterable);
    ExprPtr value = lower_expr(iterable);
    bool range = value->kind == Expr::Kind::call && value->operands.size() == 1 && value->operands[0]->kind == Expr::Kind::name &&
                 value->operands[0]->text == "range" && !value->piped && (value->arguments.size() == 1 || value->arguments.size() == 2) &&
                 std::ranges::all_of(value->arguments, [](const Argument& a) { return !a.keyword && a.value; });
    if (!range) return;
    if (value->arguments.size() == 2) {
      statement.value = std::move(value->arguments[0].value);
    } else {
      statement.value = new_expr();
      statement.value->kind = Expr::Kind::number;
      statement.value->is_integer = true;
      statement.value->text = "0";
    }
    statement.end = std::move(value->arguments.back().value);
  }

  // Python's tuple or list, which the language has not: an error node, reported once as what it
  // is (one of one, `(D,)` or `[D]`, told apart: its fix is its value).
  ExprPtr python_sequence(TSNode node, std::string where) const {
    if (where.empty() && Children(*this, node).lowered_count() == 1) where = "one";
    program_.syntax_errors.push_back({sequence_error(kind(node)), span(node), std::move(where)});
    return error_expr(node);
  }
  static SyntaxError::Kind sequence_error(Sym sym) {
    return sym == Sym::python_list ? SyntaxError::Kind::python_list : SyntaxError::Kind::python_tuple;
  }

  ExprPtr error_expr(TSNode node) const {
    auto expr = new_expr();
    expr->span = present(node) ? span(node) : Span{};
    return expr;
  }

  std::vector<Argument> lower_arguments(TSNode list, bool unwrap_tuple = true) const {
    std::vector<Argument> arguments;
    if (!present(list)) return arguments;
    Children c(*this, list);
    // PyTorch's `x.view((b, n, D))` is `x.view(b, n, D)`, and `torch.cat([x, y], dim=-1)` is
    // `torch.cat(x, y, dim=-1)`: a tuple or list as the first argument, with only keywords after
    // it, is read as the arguments it holds (and reported).
    arguments.reserve(c.lowered_count());
    for (size_t i = 0; i < c.size(); ++i) {
      Child child = c[i];
      if (!child.lowered()) continue;
      if (unwrap_tuple && (child.sym == Sym::tuple || child.sym == Sym::python_list) && first_with_only_keywords_after(c, child)) {
        program_.syntax_errors.push_back({sequence_error(child.sym), span(child.node), "arguments"});
        for (Argument& held : lower_arguments(child.node, false)) arguments.push_back(std::move(held));
        continue;
      }
      Argument argument;
      argument.span = span(child.node);
      if (child.sym == Sym::keyword_argument) {
        TSNode name = field(child.node, fields_.name);
        if (present(name)) {
          argument.keyword = text(name);
          argument.keyword_span = span(name);
        }
        TSNode value = field(child.node, fields_.value);
        // `sum(x, dim=[1, 2])`, `dim=(1, 2)`: several values where a keyword takes one.
        const bool sequence = kind(value) == Sym::tuple || kind(value) == Sym::python_list;
        argument.value = sequence ? python_sequence(value, "keyword") : lower_expr(value);
        // Its items stay, as the error node's arguments: the checker reads `dim=[1, 2]`'s axes from them.
        if (sequence) argument.value->arguments = lower_arguments(value, false);
      } else if (child.sym == Sym::axis_pattern) {
        argument.pattern = lower_pattern(child.node);
      } else {
        argument.value = lower_expr(child.node);
      }
      arguments.push_back(std::move(argument));
    }
    return arguments;
  }

  // Whether `child` is the first of `c`'s lowered children and only keyword arguments follow it:
  // where a tuple or a list of PyTorch's is read as the arguments it holds.
  static bool first_with_only_keywords_after(const Children& c, const Child& child) {
    std::optional<Child> first = c.first_lowered();
    if (!first || first->node.id != child.node.id) return false;
    for (size_t i = 0; i < c.size(); ++i)
      if (c[i].lowered() && c[i].node.id != child.node.id && c[i].sym != Sym::keyword_argument) return false;
    return true;
  }
  ExprPtr lower_expr(TSNode node) const {
    if (!present(node)) return error_expr(node);
    // Parentheses add no node, so they are unwrapped here, in a loop, not by recursion.
    Span outer = span(node);
    while (kind(node) == Sym::parenthesized_expression) {
      Children inner(*this, node);
      std::optional<Child> first = inner.first_lowered();
      if (!first || !present(first->node)) return error_expr(node);
      node = first->node;
    }
    Deeper deeper(depth_);
    if (too_deep(node)) return error_expr(node);
    Sym sym = kind(node);
    if (sym == Sym::tuple || sym == Sym::python_list) return python_sequence(node, "");
    const Fields& f = fields_;
    auto expr = new_expr();
    expr->span = outer;
    if (sym == Sym::identifier) {
      expr->kind = Expr::Kind::name;
      expr->text = text(node);
      expr->text_span = expr->span;
    } else if (sym == Sym::number) {
      expr->kind = Expr::Kind::number;
      std::string t = text(node);
      expr->is_integer = t.find_first_not_of("0123456789") == std::string::npos;
      if (expr->is_integer && !parse_integer(t, expr->span)) return error_expr(node);
      try {
        expr->number = std::stod(t);
      } catch (...) {
        expr->number = 0;
      }
    } else if (sym == Sym::string) {
      expr->kind = Expr::Kind::string;
      expr->text = string_contents(node);
    } else if (sym == Sym::binary_expression) {
      expr->kind = Expr::Kind::binary;
      TSNode op = field(node, f.operator_);
      expr->text = present(op) ? text(op) : "?";
      expr->text_span = present(op) ? span(op) : expr->span;
      expr->operands.reserve(2);
      expr->operands.push_back(lower_expr(field(node, f.left)));
      expr->operands.push_back(lower_expr(field(node, f.right)));
    } else if (sym == Sym::unary_expression) {
      expr->kind = Expr::Kind::unary;
      TSNode op = field(node, f.operator_);
      expr->text = present(op) ? text(op) : "-";
      expr->operands.push_back(lower_expr(field(node, f.operand)));
    } else if (sym == Sym::pipe_expression) {
      // `x |> f(a)` is `f(x, a)` and `x |> f` is `f(x)`; the call keeps the piped flag for messages.
      ExprPtr value = lower_expr(field(node, f.value));
      TSNode function = field(node, f.function);
      ExprPtr call;
      if (present(function) && kind(function) == Sym::call) {
        call = lower_expr(function);
      } else {
        call = new_expr();
        call->kind = Expr::Kind::call;
        call->span = present(function) ? span(function) : expr->span;
        call->operands.push_back(lower_expr(function));
      }
      if (call->kind != Expr::Kind::call) return expr;
      Argument first;
      first.span = value->span;
      first.value = std::move(value);
      call->arguments.insert(call->arguments.begin(), std::move(first));
      call->piped = true;
      return call;
    } else if (sym == Sym::call) {
      expr->kind = Expr::Kind::call;
      expr->operands.push_back(lower_expr(field(node, f.function)));
      expr->arguments = lower_arguments(field(node, f.arguments));
    } else if (sym == Sym::attribute) {
      expr->kind = Expr::Kind::attribute;
      expr->operands.push_back(lower_expr(field(node, f.object)));
      TSNode name = field(node, f.attribute);
      if (present(name)) {
        expr->text = text(name);
        expr->text_span = span(name);
      }
    } else if (sym == Sym::subscript) {
      expr->kind = Expr::Kind::subscript;
      expr->operands.push_back(lower_expr(field(node, f.value)));
      TSNode index = field(node, f.index);
      if (kind(index) == Sym::python_index) {
        expr->python_index = true;
        Children items(*this, index);
        for (size_t i = 0; i < items.size(); ++i) {
          Child item = items[i];
          if (!item.lowered()) continue;
          Argument argument;
          argument.span = span(item.node);
          if (item.sym != Sym::python_slice) argument.value = lower_expr(item.node);
          expr->arguments.push_back(std::move(argument));
        }
      } else {
        expr->index = lower_sizes(index);
      }
    } else if (sym == Sym::lambda) {
      expr->kind = Expr::Kind::lambda;
      TSNode parameter = field(node, f.parameter);
      if (present(parameter)) {
        expr->text = text(parameter);
        expr->text_span = span(parameter);
      }
      expr->operands.push_back(lower_expr(field(node, f.body)));
    } else if (sym == Sym::as_expression) {
      expr->kind = Expr::Kind::as;
      expr->operands.push_back(lower_expr(field(node, f.value)));
      expr->type = std::make_unique<TypeNode>(lower_type(field(node, f.type)));
    }
    return expr;
  }

  std::unique_ptr<Block> lower_block(TSNode node) const {
    auto block = std::make_unique<Block>();
    if (!present(node)) return block;
    block->span = span(node);
    Deeper deeper(depth_);
    if (too_deep(node)) return block;
    Children c(*this, node);
    block->statements.reserve(c.lowered_count());
    for (size_t i = 0; i < c.size(); ++i) {
      Child child = c[i];
      if (!child.lowered()) continue;
      if (child.sym == Sym::python_block) {
        lower_python_block(*block, child.node);
        continue;
      }
      block->statements.push_back(lower_statement(child.node));
    }
    return block;
  }

  // Python's `with x:`, `while c:` or `try:` block: its header is an error of the lowering (the core
  // says what to write) and its lines are lowered as lines of the block around it, where `with`'s
  // run; so are a `try`'s and its `finally`'s, but not an `except`'s, which run only on an error.
  void lower_python_block(Block& into, TSNode node) const {
    TSNode keyword = field(node, fields_.keyword), body = field(node, fields_.body);
    Span header = span(node);
    if (present(body)) header.end = span(body).begin;
    // `with open(f) as f:` binds a Python object: no sure fix, told apart by its `expected`.
    std::string written = present(keyword) ? text(keyword) : std::string();
    if (TSNode value = field(node, fields_.value); present(value) && kind(value) == Sym::as_expression) written += " as";
    program_.syntax_errors.push_back({SyntaxError::Kind::python_block, header, written});
    auto inline_block = [&](TSNode block) {
      std::unique_ptr<Block> inner = lower_block(block);
      for (Statement& statement : inner->statements) into.statements.push_back(std::move(statement));
    };
    inline_block(body);
    Children handlers(*this, node);
    for (size_t i = 0; i < handlers.size(); ++i) {
      Child handler = handlers[i];
      if (handler.sym != Sym::python_handler) continue;
      TSNode handler_keyword = field(handler.node, fields_.keyword);
      if (present(handler_keyword) && text(handler_keyword) == "finally") inline_block(field(handler.node, fields_.body));
    }
  }

  Statement lower_statement(TSNode node) const {
    Statement statement;
    statement.span = span(node);
    Sym sym = kind(node);
    const Fields& f = fields_;
    if (sym == Sym::assignment) {
      statement.kind = Statement::Kind::assign;
      TSNode targets = field(node, f.targets);
      if (present(targets)) {
        Children t(*this, targets);
        statement.targets.reserve(t.lowered_count());
        for (size_t i = 0; i < t.size(); ++i)
          if (Child target = t[i]; target.lowered()) statement.targets.emplace_back(text(target.node), span(target.node));
      }
      statement.value = lower_expr(field(node, f.value));
    } else if (sym == Sym::return_statement) {
      statement.kind = Statement::Kind::return_;
      TSNode value = field(node, f.value);
      statement.value = kind(value) == Sym::tuple ? python_sequence(value, "return") : lower_expr(value);
    } else if (sym == Sym::for_statement) {
      statement.kind = Statement::Kind::for_;
      TSNode variable = field(node, f.variable);
      if (present(variable)) {
        statement.variable = text(variable);
        statement.variable_span = span(variable);
      }
      if (TSNode iterable = field(node, f.iterable); present(iterable)) {
        lower_python_loop(statement, iterable);
      } else {
        statement.value = lower_expr(field(node, f.start));
        statement.end = lower_expr(field(node, f.end));
      }
      statement.body = lower_block(field(node, f.body));
    } else if (sym == Sym::if_statement) {
      statement.kind = Statement::Kind::if_;
      Children c(*this, node);
      statement.branches.emplace_back(lower_expr(field(node, f.condition)), lower_block(field(node, f.body)));
      for (size_t i = 0; i < c.size(); ++i) {
        Child clause = c[i];
        if (!clause.lowered()) continue;
        if (clause.sym == Sym::elif_clause) {
          statement.branches.emplace_back(lower_expr(field(clause.node, f.condition)), lower_block(field(clause.node, f.body)));
        } else if (clause.sym == Sym::else_clause) {
          statement.body = lower_block(field(clause.node, f.body));
        }
      }
    } else if (sym == Sym::expression_statement) {
      statement.kind = Statement::Kind::expression;
      Children c(*this, node);
      std::optional<Child> inner = c.first_lowered();
      statement.value = inner ? lower_expr(inner->node) : error_expr(node);
    }
    // A line the parser could not read whole: what it kept of the value is a piece (`x @ w` kept
    // `w`), whose type would only add errors about the piece to the E0101 about the line.
    bool value_line = sym == Sym::assignment || sym == Sym::return_statement || sym == Sym::expression_statement;
    if (value_line && statement.value && ts_node_has_error(node)) {
      auto unread = new_expr();
      unread->span = statement.value->span;
      statement.value = std::move(unread);
    }
    return statement;
  }

  std::vector<Parameter> lower_parameters(TSNode list) const {
    std::vector<Parameter> parameters;
    if (!present(list)) return parameters;
    Children c(*this, list);
    parameters.reserve(c.lowered_count());
    for (size_t i = 0; i < c.size(); ++i) {
      Child child = c[i];
      if (!child.lowered() || child.sym != Sym::parameter) continue;
      Parameter parameter;
      parameter.span = span(child.node);
      TSNode name = field(child.node, fields_.name);
      if (present(name)) {
        parameter.name = text(name);
        parameter.name_span = span(name);
      }
      parameter.type = lower_type(field(child.node, fields_.type));
      parameters.push_back(std::move(parameter));
    }
    return parameters;
  }

  std::optional<Item> lower_item(TSNode node) const {
    Sym sym = kind(node);
    const Fields& f = fields_;
    Item item;
    item.span = span(node);
    TSNode name = field(node, f.name);
    if (present(name)) {
      item.name = text(name);
      item.name_span = span(name);
    }
    item.doc = doc_comment(node);
    if (sym == Sym::dim_item) {
      item.kind = Item::Kind::dim;
      TSNode value = field(node, f.value);
      if (present(value)) item.dim_value = lower_size(value);
      else if (ts_node_is_null(value) && !ts_node_has_error(node))
        program_.syntax_errors.push_back({SyntaxError::Kind::dim_without_value, item.name_span, {}});
    } else if (sym == Sym::python_import) {
      item.kind = Item::Kind::python_import;
      TSNode module = field(node, f.module);
      if (!present(module)) return std::nullopt;
      item.name = text(module);
      item.name_span = span(module);
    } else if (sym == Sym::extern_fn) {
      item.kind = Item::Kind::extern_fn;
      item.parameters = lower_parameters(field(node, f.parameters));
      TSNode result = field(node, f.result);
      if (present(result)) item.result = lower_type(result);
      TSNode target = field(node, f.target);
      if (present(target)) {
        item.extern_target = string_contents(target);
        item.extern_target_span = span(target);
      }
    } else if (sym == Sym::function) {
      item.kind = Item::Kind::function;
      TSNode exported = field(node, f.export_);
      if (present(exported)) {
        item.exported = true;
        item.export_span = span(exported);
      }
      item.parameters = lower_parameters(field(node, f.parameters));
      TSNode result = field(node, f.result);
      if (present(result)) item.result = lower_type(result);
      item.body = lower_block(field(node, f.body));
    } else if (sym == Sym::model) {
      item.kind = Item::Kind::model;
      TSNode body = field(node, f.body);
      if (present(body)) {
        Children b(*this, body);
        for (size_t i = 0; i < b.size(); ++i) {
          Child child = b[i];
          if (!child.lowered() || child.sym != Sym::param_decl) continue;
          Item::Param param;
          param.span = span(child.node);
          param.doc = doc_comment(child.node);
          TSNode param_name = field(child.node, f.name);
          if (present(param_name)) {
            param.name = text(param_name);
            param.name_span = span(param_name);
          }
          param.type = lower_type(field(child.node, f.type));
          TSNode init = field(child.node, f.init);
          if (present(init)) param.init = lower_expr(init);
          item.params.push_back(std::move(param));
        }
      }
    } else {
      return std::nullopt;
    }
    if (item.name.empty()) return std::nullopt;  // too broken to name: its errors are reported anyway
    return item;
  }

  static std::optional<Item::Kind> item_kind(Sym sym) {
    if (sym == Sym::dim_item) return Item::Kind::dim;
    if (sym == Sym::python_import) return Item::Kind::python_import;
    if (sym == Sym::extern_fn) return Item::Kind::extern_fn;
    if (sym == Sym::function) return Item::Kind::function;
    if (sym == Sym::model) return Item::Kind::model;
    return std::nullopt;
  }

  // Moves the earlier version's item for `node` into the program, moved to where it now is, when
  // lowering `node` would give the same: its bytes and the byte on either side are unchanged, it
  // has no syntax error, and its earlier lowering reported none. False: `node` is lowered again.
  bool copy_unchanged(TSNode node, const Earlier& earlier, size_t& next) const {
    const TextChange& change = earlier.change;
    Span now = span(node);
    Span before;
    if (now.end < change.begin) before = now;
    else if (now.begin > change.new_end) before = {now.begin - change.new_end + change.old_end, now.end - change.new_end + change.old_end};
    else return false;
    std::vector<Item>& items = earlier.program.items;
    while (next < items.size() && items[next].span.begin < before.begin) ++next;
    if (next == items.size() || !(items[next].span == before)) return false;
    Item& old = items[next];
    if (ts_node_has_error(node) || item_kind(kind(node)) != old.kind) return false;
    auto error = std::lower_bound(earlier.lowering_errors.begin(), earlier.lowering_errors.end(), before.begin);
    if (error != earlier.lowering_errors.end() && *error < before.end) return false;
    Item& item = program_.items.emplace_back(std::move(old));
    old.name = item.name;  // what the previous analysis's calls of it still say they called
    move(item, now.begin - before.begin);
    // Doc comments are the lines above: unchanged for an item before the edit, read again after it.
    if (now.end >= change.begin) {
      item.doc = doc_comment_at(item.span.begin);
      for (Item::Param& param : item.params) param.doc = doc_comment_at(param.span.begin);
    }
    return true;
  }

 public:
  void lower_again(TSNode root, Program& previous, TextChange change) {
    Earlier earlier{previous, change, {}};
    for (const SyntaxError& error : previous.syntax_errors)
      if (error.kind == SyntaxError::Kind::too_deep || error.kind == SyntaxError::Kind::number_too_large ||
          error.kind == SyntaxError::Kind::single_quoted || error.kind == SyntaxError::Kind::python_block ||
          error.kind == SyntaxError::Kind::python_tuple || error.kind == SyntaxError::Kind::python_list ||
          error.kind == SyntaxError::Kind::dim_without_value)
        earlier.lowering_errors.push_back(error.span.begin);
    std::sort(earlier.lowering_errors.begin(), earlier.lowering_errors.end());
    source_file(root, &earlier);
  }

 private:
  // Every position in a piece of the AST moved by `delta` bytes (modulo 2^32, so backwards too), in
  // place: an unchanged item is taken out of the previous program as it is, not copied, so its
  // expressions keep their addresses (the checker's records find their types by them). A span of
  // no position (Span{}, what an absent node lowers to) stays as it is.
  static void move(Span& at, uint32_t delta) {
    if (at == Span{}) return;
    at.begin += delta;
    at.end += delta;
  }
  static void move(SizeNode& size, uint32_t delta) {
    move(size.span, delta);
    for (SizeNode& child : size.children) move(child, delta);
  }
  static void move(TypeNode& node, uint32_t delta) {
    move(node.span, delta);
    move(node.axes_span, delta);
    for (SizeNode& axis : node.axes) move(axis, delta);
    if (node.element) {
      move(node.element->span, delta);
      move(node.element->name_span, delta);
      move(node.element->over_span, delta);
      if (node.element->bound) move(*node.element->bound, delta);
    }
  }
  static void move(Expr* expr, uint32_t delta) {
    if (!expr) return;
    move(expr->span, delta);
    move(expr->text_span, delta);
    for (const ExprPtr& operand : expr->operands) move(operand.get(), delta);
    for (Argument& argument : expr->arguments) {
      move(argument.keyword_span, delta);
      move(argument.value.get(), delta);
      if (argument.pattern) {
        move(argument.pattern->span, delta);
        for (auto& input : argument.pattern->inputs)
          for (SizeNode& size : input) move(size, delta);
        for (SizeNode& size : argument.pattern->output) move(size, delta);
      }
      move(argument.span, delta);
    }
    for (SizeNode& size : expr->index) move(size, delta);
    if (expr->type) move(*expr->type, delta);
  }
  static void move(Block* block, uint32_t delta) {
    if (!block) return;
    move(block->span, delta);
    for (Statement& statement : block->statements) {
      move(statement.span, delta);
      for (auto& target : statement.targets) move(target.second, delta);
      move(statement.value.get(), delta);
      move(statement.end.get(), delta);
      move(statement.variable_span, delta);
      move(statement.python_iterable, delta);
      for (auto& [condition, body] : statement.branches) {
        move(condition.get(), delta);
        move(body.get(), delta);
      }
      move(statement.body.get(), delta);
    }
  }
  static void move(Item& item, uint32_t delta) {
    if (delta == 0) return;
    move(item.span, delta);
    move(item.name_span, delta);
    if (item.dim_value) move(*item.dim_value, delta);
    for (Parameter& parameter : item.parameters) {
      move(parameter.name_span, delta);
      move(parameter.type, delta);
      move(parameter.span, delta);
    }
    if (item.result) move(*item.result, delta);
    move(item.extern_target_span, delta);
    move(item.export_span, delta);
    move(item.body.get(), delta);
    for (Item::Param& param : item.params) {
      move(param.name_span, delta);
      move(param.type, delta);
      move(param.init.get(), delta);
      move(param.span, delta);
    }
  }
};

}  // namespace

Program lower_tree(const SourceFile& file, const SyntaxTree& tree) {
  Program program;
  if (tree.gave_up()) program.syntax_errors.push_back({SyntaxError::Kind::parser_gave_up, {0, static_cast<uint32_t>(file.text().size())}, {}});
  if (!tree.get() || tree.gave_up()) return program;
  Lowering(file, program).source_file(ts_tree_root_node(tree.get()));
  return program;
}

Program relower_tree(const SourceFile& file, const SyntaxTree& tree, const SourceFile& previous_file, Program& previous) {
  if (!tree.get() || tree.gave_up()) {
    Program program = lower_tree(file, tree);
    program.expr_ids = std::move(previous.expr_ids);  // still the numbers of the previous check's facts
    return program;
  }
  Program program;
  program.expr_ids = std::move(previous.expr_ids);
  Lowering(file, program).lower_again(ts_tree_root_node(tree.get()), previous, TextChange::between(previous_file.text(), file.text()));
  return program;
}

Program parse_program(const SourceFile& file) {
  SyntaxTree tree = parse_source(file.text());
  return lower_tree(file, tree);
}

}  // namespace ss
