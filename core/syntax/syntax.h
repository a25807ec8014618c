// Parsing with tree-sitter and lowering its tree to the core's Program.
#pragma once
#include <memory>

#include "syntax/ast.h"
#include "syntax/source.h"

struct TSTree;
struct TSParser;

namespace ss {

// Owns a tree-sitter tree; the language server keeps one per document and edits it in place.
class SyntaxTree {
 public:
  SyntaxTree() = default;
  explicit SyntaxTree(TSTree* tree) : tree_(tree) {}
  SyntaxTree(SyntaxTree&& other) noexcept : tree_(other.tree_), gave_up_(other.gave_up_) { other.tree_ = nullptr; }
  SyntaxTree& operator=(SyntaxTree&& other) noexcept;
  ~SyntaxTree();
  TSTree* get() const { return tree_; }
  // True when the parser ran out of time (parse_time_limit_us) and this is the tree of no text.
  bool gave_up() const { return gave_up_; }
  void set_gave_up() { gave_up_ = true; }

 private:
  TSTree* tree_ = nullptr;
  bool gave_up_ = false;
};

// How long tree-sitter may take on `bytes` of text. Its error recovery is quadratic on some broken
// inputs (thousands of unclosed calls split by a name: 10 s at 64 KB), so it gets a budget far above
// any real file's parse (about 1 ms per 10 KB) and the file is reported unread past it.
uint64_t parse_time_limit_us(size_t bytes);

// Parses `text`, reusing `previous` (already edited with ts_tree_edit) when given. Never fails.
SyntaxTree parse_source(const std::string& text, const SyntaxTree* previous = nullptr);

// Lowers a tree to items; ERROR and MISSING nodes become syntax_errors and are skipped.
Program lower_tree(const SourceFile& file, const SyntaxTree& tree);

// lower_tree for a new version of `previous_file`, whose lowering was `previous`: a top-level item
// the edit left alone (the same text, no syntax error, away from the changed bytes) is taken out
// of `previous` as it is, its positions moved to where it now is, instead of lowered again; its
// nodes keep their addresses. The result is lower_tree's; what is left of `previous` is only to
// be destroyed.
Program relower_tree(const SourceFile& file, const SyntaxTree& tree, const SourceFile& previous_file, Program& previous);

// parse_source + lower_tree.
Program parse_program(const SourceFile& file);

}  // namespace ss
