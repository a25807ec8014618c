// An open document's text: LSP positions (UTF-16 code units) to byte offsets and back, and
// incremental edits that also tell tree-sitter what changed.
#pragma once
#include <tree_sitter/api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ss::lsp {

// Zero-based line and UTF-16 column, as LSP counts them.
struct Position {
  uint32_t line = 0;
  uint32_t character = 0;
  friend bool operator==(const Position&, const Position&) = default;
};

struct Range {
  Position start;
  Position end;
};

// Byte offsets within one UTF-8 line, counted in UTF-16 code units. A column that falls inside a
// character (the middle of a surrogate pair, say) is moved to the character's start.
uint32_t utf16_to_byte(std::string_view line, uint32_t units);
uint32_t byte_to_utf16(std::string_view line, uint32_t bytes);
uint32_t utf16_length(std::string_view text);

// Where each line starts, kept up to date across edits without rescanning the whole text.
class LineIndex {
 public:
  void reset(std::string_view text);
  // The bytes [begin, old_end) were replaced by `inserted`.
  void replace(uint32_t begin, uint32_t old_end, std::string_view inserted);

  uint32_t line_count() const { return static_cast<uint32_t>(starts_.size()); }
  uint32_t line_start(uint32_t line) const { return starts_[line]; }
  // The line's text without its "\n" or "\r\n".
  std::string_view line_text(std::string_view text, uint32_t line) const;
  uint32_t line_of(uint32_t offset) const;

  // Both clamp: a line past the end is the end of the text, a column past a line's end is its end.
  uint32_t offset_of(std::string_view text, Position position) const;
  Position position_of(std::string_view text, uint32_t offset) const;
  TSPoint point_of(std::string_view text, uint32_t offset) const;  // row, byte column

 private:
  std::vector<uint32_t> starts_{0};
};

class TextDocument {
 public:
  TextDocument() = default;
  explicit TextDocument(std::string text) { set_text(std::move(text)); }

  const std::string& text() const { return text_; }
  const LineIndex& lines() const { return lines_; }
  void set_text(std::string text);

  // Replaces `range` (clamped) by `replacement` and returns the edit tree-sitter needs.
  TSInputEdit replace(Range range, std::string_view replacement);

  uint32_t offset_of(Position p) const { return lines_.offset_of(text_, p); }
  Position position_of(uint32_t offset) const { return lines_.position_of(text_, offset); }

 private:
  std::string text_;
  LineIndex lines_;
};

}  // namespace ss::lsp
