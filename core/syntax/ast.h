// The core's own syntax tree, lowered from tree-sitter's. Every node has a span; a part that
// did not parse is an `error` node, so later phases can skip it without crashing.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "syntax/source.h"

namespace ss {

// A size as written: `16gh`, `3*D`, `(gh gw)`, `?k`.
struct SizeNode {
  enum class Kind { number, name, scaled, unknown, group, binary, error };
  Kind kind = Kind::error;
  Span span;
  int64_t number = 0;      // number, scaled (the factor)
  std::string name;        // name, scaled, unknown
  char op = 0;             // binary: * / + - %, or kFloorDivide for `//`
  static constexpr char kFloorDivide = 'f';  // `//`: one char, as the other operators are
  std::vector<SizeNode> children;  // group factors, binary left/right
};

struct ElementTypeNode {
  std::string name;  // Real, Index, Logit, a model name, ...
  Span name_span;
  std::optional<SizeNode> bound;  // Index[N]
  std::optional<std::string> over;  // Logit over A
  Span over_span;
  Span span;
};

struct TypeNode {
  bool is_tensor = false;  // `[...]` given
  std::vector<SizeNode> axes;
  Span axes_span;
  std::optional<ElementTypeNode> element;
  Span span;
};

// `b c (gh p1) -> b (gh p1 c)`, or an einsum's `b n d, b m d -> b n m`.
struct AxisPattern {
  std::vector<std::vector<SizeNode>> inputs;
  std::vector<SizeNode> output;
  Span span;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Argument {
  std::optional<std::string> keyword;
  Span keyword_span;
  ExprPtr value;                       // null for a pattern argument
  std::optional<AxisPattern> pattern;  // `rearrange(... -> ...)`
  Span span;
};

struct Expr {
  enum class Kind { name, number, string, binary, unary, call, attribute, subscript, lambda, as, error };
  Kind kind = Kind::error;
  // Its number in its program (ExprIds), by which tables of facts about expressions are indexed
  // (check/expr_table.h); 0 for none.
  uint32_t id = 0;
  Span span;
  std::string text;   // name, string contents, operator, attribute name, lambda parameter
  Span text_span;     // where `text` is written (an attribute's name, a lambda's parameter)
  double number = 0;
  bool is_integer = false;
  std::vector<ExprPtr> operands;  // binary: 2; unary: 1; attribute/subscript/as: the value; lambda: body; call: the callee
  std::vector<Argument> arguments;  // call, with a piped value first; an error node for a keyword's list (`dim=[1, 2]`): its items
  bool piped = false;               // call written `x |> f(...)`
  std::vector<SizeNode> index;      // subscript `[l]`, `causal[n m]`
  // Subscript written as Python's `x[:, -1, :]` (which the checker reports): `arguments` are its
  // items, a slice (`:`, `:-1`) with no value.
  bool python_index = false;
  std::unique_ptr<TypeNode> type;   // as; a pointer, since a TypeNode is larger than the rest of an Expr
};

struct Block;

struct Statement {
  enum class Kind { assign, return_, for_, if_, expression, error };
  Kind kind = Kind::error;
  Span span;
  std::vector<std::pair<std::string, Span>> targets;  // assign
  ExprPtr value;                                      // assign, return, expression; for: start
  ExprPtr end;                                        // for: end
  std::string variable;                               // for
  Span variable_span;
  // for: where Python's form was written, `range(L)` (lowered as `0..L`, `range(a, b)` as `a..b`)
  // or a value (`in layers`, lowered with no ends); empty for `a..b`. The checker reports it.
  Span python_iterable;
  std::vector<std::pair<ExprPtr, std::unique_ptr<Block>>> branches;  // if/elif: condition and body
  std::unique_ptr<Block> body;                        // for body; if: else body (may be null)
};

struct Block {
  std::vector<Statement> statements;
  Span span;
};

struct Parameter {
  std::string name;
  Span name_span;
  TypeNode type;
  Span span;
};

struct Item {
  enum class Kind { dim, python_import, extern_fn, function, model };
  Kind kind = Kind::dim;
  Span span;
  std::string name;  // dim, fn, extern, model; python import: the dotted module
  Span name_span;
  std::string doc;   // from `##` lines right above the item
  // dim
  std::optional<SizeNode> dim_value;
  // extern fn, fn
  std::vector<Parameter> parameters;
  std::optional<TypeNode> result;
  std::string extern_target;  // "torch.special.erfc"
  Span extern_target_span;
  bool exported = false;
  Span export_span;
  std::unique_ptr<Block> body;
  // model
  struct Param {
    std::string name;
    Span name_span;
    TypeNode type;
    ExprPtr init;
    Span span;
    std::string doc;
  };
  std::vector<Param> params;
};

struct SyntaxError {
  enum class Kind {
    unreadable,        // an ERROR node (E0101)
    missing,           // tree-sitter inserted a MISSING token (E0103)
    too_deep,          // nesting past kMaxNesting, lowered as an error node (E0104)
    number_too_large,  // an integer literal past int64 (E0105)
    parser_gave_up,    // tree-sitter ran past parse_time_limit: the whole file, unread (E0101)
    single_quoted,     // Python's `'text'`, read as the string it is (E0101, whose fix writes `"text"`)
    python_block,      // Python's `with x:` / `while c:` / `try:` header (`expected`: `with`, `with as`, `while` or `try`); its lines are read as the block's (E0101)
    python_tuple,      // Python's `(x, y)`, `(D,)`, `return x, y` (`expected`: `arguments` when it is a call's only argument, read as its
                       // arguments; `return`; `one` for a tuple of one; else empty; the last three read as an error node) (E0101)
    python_list,       // Python's `[x, y]`, `[D]` (`expected` as for python_tuple, but never `return`) (E0101)
                       // (either, `expected` `keyword`: a keyword's value, `dim=[1, 2]`)
    dim_without_value, // `dim F`, no `= value`; the span is the name (E0103)
  };
  Kind kind = Kind::unreadable;
  Span span;
  std::string expected;     // what was missing, when known
};

// How deep expressions, sizes and blocks may nest. Every phase after parsing walks the tree
// recursively, so this bound is what keeps their stacks bounded on any input: at its deepest, a
// check under AddressSanitizer stays well inside a thread's 8 MB (bench/README.md has the figures).
inline constexpr int kMaxNesting = 128;

// The numbers a program's expressions are given: each lowered expression takes a free one, else
// the next. A program lowered again for an edit (relower_tree) carries its predecessor's on, so an
// expression it keeps keeps its number and a new one never takes a number still in use; what the
// edit dropped is freed after the check that follows (Checker::forget_dropped).
struct ExprIds {
  uint32_t next = 1;
  std::vector<uint32_t> free;
  uint32_t take() {
    if (free.empty()) return next++;
    uint32_t id = free.back();
    free.pop_back();
    return id;
  }
};

struct Program {
  std::vector<Item> items;
  std::vector<SyntaxError> syntax_errors;
  ExprIds expr_ids;
};

}  // namespace ss
