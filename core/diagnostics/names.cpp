#include "diagnostics/names.h"

#include <algorithm>
#include <cctype>

namespace ss {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b, size_t cutoff) {
  // Lengths further apart than the cutoff need more edits than it allows.
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > cutoff) return cutoff + 1;
  // Three rows of the table (i-2, i-1, i), reused across calls: no allocation per candidate.
  thread_local std::vector<size_t> rows;
  size_t width = b.size() + 1;
  rows.assign(3 * width, 0);
  size_t* before = rows.data();  // row i-2
  size_t* above = before + width;  // row i-1
  size_t* row = above + width;     // row i
  for (size_t j = 0; j < width; ++j) above[j] = j;
  size_t above_min = 0;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    size_t row_min = i;
    for (size_t j = 1; j < width; ++j) {
      size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      size_t d = std::min({above[j] + 1, row[j - 1] + 1, above[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) d = std::min(d, before[j - 2] + 1);
      row[j] = d;
      row_min = std::min(row_min, d);
    }
    // A cell is at least a neighbour in this row or the one above: once both rows' least
    // exceed the cutoff, every later row does too.
    if (row_min > cutoff && above_min > cutoff) return cutoff + 1;
    above_min = row_min;
    std::swap(before, above);  // rotate: the old i-1 becomes i-2, the old i-2 is overwritten next
    std::swap(above, row);
  }
  return std::min(above[b.size()], cutoff + 1);
}

std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  size_t limit = name.size() <= 1 ? 0 : std::max<size_t>(1, name.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    if (best_distance == 0) break;  // the same name in another case: nothing is nearer
    if (candidate == name || candidate.empty() || candidate[0] == '?') continue;
    size_t d = edit_distance(name, candidate, best_distance - 1);  // only a nearer one can win
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace ss
