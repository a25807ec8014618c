// A source file's text and the arithmetic between byte offsets and lines.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ss {

// A half-open byte range [begin, end) into one source file.
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool empty() const { return begin == end; }
  bool contains(uint32_t offset) const { return begin <= offset && offset < end; }
  friend bool operator==(const Span&, const Span&) = default;
};

// Where the text changed between two versions: [begin, old_end) became [begin, new_end). Spans
// wholly before or after move with the text; a span that touches the changed bytes can't be moved.
struct TextChange {
  uint32_t begin = 0, old_end = 0, new_end = 0;
  static TextChange between(std::string_view before, std::string_view after);
  // Inline: an incremental check moves every position of what it reuses, millions an edit.
  std::optional<Span> move(Span span) const {
    if (span == Span{}) return span;  // no position at all
    if (span.empty()) {
      // A point where text was inserted could belong before it or after it: not movable.
      if (span.begin < begin) return span;
      if (span.begin > old_end) return Span{span.begin - old_end + new_end, span.end - old_end + new_end};
      return std::nullopt;
    }
    if (span.end <= begin) return span;
    if (span.begin >= old_end) return Span{span.begin - old_end + new_end, span.end - old_end + new_end};
    return std::nullopt;
  }
  // Whether `span`'s text is the same after the edit, wherever it now is: it lies wholly outside
  // the text replaced (a change is found from the two texts, so the rest is equal by construction).
  bool keeps_text(Span span) const { return span.end <= begin || span.begin >= old_end; }
  std::optional<uint32_t> move_offset(uint32_t offset) const {
    if (offset <= begin) return offset;
    if (offset > old_end) return offset - old_end + new_end;
    return std::nullopt;
  }
};

// Zero-based line, zero-based column counted in bytes.
struct LineColumn {
  uint32_t line = 0;
  uint32_t column = 0;
};

// Source text on one line, as messages quote it: runs of whitespace become one space.
std::string squash_spaces(std::string_view text);

class SourceFile {
 public:
  SourceFile() = default;
  SourceFile(std::string path, std::string text);

  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  std::string_view slice(Span span) const;
  LineColumn line_column(uint32_t offset) const;
  uint32_t offset_of(LineColumn position) const;  // clamped to the line's end
  std::string_view line_text(uint32_t line) const;  // without its newline
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }

 private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
};

}  // namespace ss
