#include "document_text.h"

#include <algorithm>
#include <cstring>

namespace ss::lsp {

namespace {

// Length of the UTF-8 sequence at `i`; 1 for a byte that does not start a valid sequence.
size_t sequence_length(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  return n;
}

}  // namespace

uint32_t utf16_to_byte(std::string_view line, uint32_t units) {
  size_t i = 0;
  uint32_t counted = 0;
  while (i < line.size() && counted < units) {
    size_t n = sequence_length(line, i);
    uint32_t width = n == 4 ? 2 : 1;
    if (counted + width > units) break;  // inside a surrogate pair: stay before the character
    counted += width;
    i += n;
  }
  return static_cast<uint32_t>(i);
}

uint32_t byte_to_utf16(std::string_view line, uint32_t bytes) {
  size_t i = 0;
  uint32_t units = 0;
  size_t limit = std::min<size_t>(bytes, line.size());
  while (i < limit) {
    size_t n = sequence_length(line, i);
    if (i + n > limit) break;  // inside a character: count up to its start
    units += n == 4 ? 2 : 1;
    i += n;
  }
  return units;
}

uint32_t utf16_length(std::string_view text) { return byte_to_utf16(text, static_cast<uint32_t>(text.size())); }

void LineIndex::reset(std::string_view text) {
  starts_.assign(1, 0);
  const char* data = text.data();
  const char* end = data + text.size();
  for (const char* p = data; (p = static_cast<const char*>(std::memchr(p, '\n', end - p))) != nullptr; ++p)
    starts_.push_back(static_cast<uint32_t>(p - data + 1));
}

void LineIndex::replace(uint32_t begin, uint32_t old_end, std::string_view inserted) {
  // Lines starting inside (begin, old_end] began after a newline that was replaced.
  auto first = std::upper_bound(starts_.begin(), starts_.end(), begin);
  auto last = std::upper_bound(first, starts_.end(), old_end);
  int64_t delta = static_cast<int64_t>(inserted.size()) - static_cast<int64_t>(old_end - begin);
  for (auto it = last; it != starts_.end(); ++it) *it = static_cast<uint32_t>(*it + delta);
  std::vector<uint32_t> added;
  for (size_t i = 0; i < inserted.size(); ++i)
    if (inserted[i] == '\n') added.push_back(static_cast<uint32_t>(begin + i + 1));
  auto at = starts_.erase(first, last);
  starts_.insert(at, added.begin(), added.end());
}

std::string_view LineIndex::line_text(std::string_view text, uint32_t line) const {
  if (line >= starts_.size()) return {};
  uint32_t start = std::min<uint32_t>(starts_[line], static_cast<uint32_t>(text.size()));
  uint32_t end = line + 1 < starts_.size() ? starts_[line + 1] - 1 : static_cast<uint32_t>(text.size());
  end = std::clamp<uint32_t>(end, start, static_cast<uint32_t>(text.size()));
  std::string_view result = text.substr(start, end - start);
  if (!result.empty() && result.back() == '\r') result.remove_suffix(1);
  return result;
}

uint32_t LineIndex::line_of(uint32_t offset) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  return static_cast<uint32_t>(it - starts_.begin()) - 1;
}

uint32_t LineIndex::offset_of(std::string_view text, Position position) const {
  if (position.line >= starts_.size()) return static_cast<uint32_t>(text.size());
  std::string_view line = line_text(text, position.line);
  return starts_[position.line] + utf16_to_byte(line, position.character);
}

Position LineIndex::position_of(std::string_view text, uint32_t offset) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text.size()));
  uint32_t line = line_of(offset);
  std::string_view line_bytes = line_text(text, line);
  return {line, byte_to_utf16(line_bytes, offset - starts_[line])};
}

TSPoint LineIndex::point_of(std::string_view text, uint32_t offset) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text.size()));
  uint32_t line = line_of(offset);
  return {line, offset - starts_[line]};
}

void TextDocument::set_text(std::string text) {
  text_ = std::move(text);
  lines_.reset(text_);
}

TSInputEdit TextDocument::replace(Range range, std::string_view replacement) {
  uint32_t begin = offset_of(range.start), end = offset_of(range.end);
  if (end < begin) std::swap(begin, end);
  TSInputEdit edit{};
  edit.start_byte = begin;
  edit.old_end_byte = end;
  edit.new_end_byte = begin + static_cast<uint32_t>(replacement.size());
  edit.start_point = lines_.point_of(text_, begin);
  edit.old_end_point = lines_.point_of(text_, end);
  text_.replace(begin, end - begin, replacement);
  lines_.replace(begin, end, replacement);
  edit.new_end_point = lines_.point_of(text_, edit.new_end_byte);
  return edit;
}

}  // namespace ss::lsp
