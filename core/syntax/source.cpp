#include "syntax/source.h"

#include <algorithm>
#include <cstring>

namespace ss {

TextChange TextChange::between(std::string_view before, std::string_view after) {
  size_t shorter = std::min(before.size(), after.size());
  // Whole blocks compared with memcmp first: both loops cover the file on every edit.
  constexpr size_t kBlock = 64;
  size_t prefix = 0;
  while (prefix + kBlock <= shorter && std::memcmp(before.data() + prefix, after.data() + prefix, kBlock) == 0) prefix += kBlock;
  while (prefix < shorter && before[prefix] == after[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix + kBlock <= shorter - prefix &&
         std::memcmp(before.data() + before.size() - suffix - kBlock, after.data() + after.size() - suffix - kBlock, kBlock) == 0)
    suffix += kBlock;
  while (suffix < shorter - prefix && before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix]) ++suffix;
  return {static_cast<uint32_t>(prefix), static_cast<uint32_t>(before.size() - suffix), static_cast<uint32_t>(after.size() - suffix)};
}


SourceFile::SourceFile(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::string_view SourceFile::slice(Span span) const {
  uint32_t begin = std::min<uint32_t>(span.begin, text_.size());
  uint32_t end = std::clamp<uint32_t>(span.end, begin, text_.size());
  return std::string_view(text_).substr(begin, end - begin);
}

LineColumn SourceFile::line_column(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - line_starts_.begin()) - 1;
  return {line, offset - line_starts_[line]};
}

uint32_t SourceFile::offset_of(LineColumn position) const {
  if (position.line >= line_starts_.size()) return static_cast<uint32_t>(text_.size());
  uint32_t start = line_starts_[position.line];
  uint32_t length = static_cast<uint32_t>(line_text(position.line).size());
  return start + std::min(position.column, length);
}

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line >= line_starts_.size()) return {};
  uint32_t start = line_starts_[line];
  uint32_t end = line + 1 < line_starts_.size() ? line_starts_[line + 1] - 1 : static_cast<uint32_t>(text_.size());
  std::string_view text = std::string_view(text_).substr(start, end - start);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return text;
}

std::string squash_spaces(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace ss
