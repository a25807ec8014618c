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
  SyntaxTree(SyntaxTree&& other) noexcept : tree_(other.tree_) { other.tree_ = nullptr; }
  SyntaxTree& operator=(SyntaxTree&& other) noexcept;
  ~SyntaxTree();
  TSTree* get() const { return tree_; }

 private:
  TSTree* tree_ = nullptr;
};

// Parses `text`, reusing `previous` (already edited with ts_tree_edit) when given. Never fails.
SyntaxTree parse_source(const std::string& text, const SyntaxTree* previous = nullptr);

// Lowers a tree to items; ERROR and MISSING nodes become syntax_errors and are skipped.
Program lower_tree(const SourceFile& file, const SyntaxTree& tree);

// parse_source + lower_tree.
Program parse_program(const SourceFile& file);

}  // namespace ss
