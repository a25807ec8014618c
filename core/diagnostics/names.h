// "Did you mean": the closest known name to a misspelled one.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ss {

// The optimal string alignment distance between `a` and `b`, ignoring case: insertions,
// deletions, substitutions and swaps of two neighbouring letters each cost one. Any distance over
// `cutoff` is returned as cutoff + 1, so a far candidate costs only as much as it takes to see that.
size_t edit_distance(std::string_view a, std::string_view b, size_t cutoff = SIZE_MAX - 1);

// The candidate nearest `name`, if it is near enough to be a likely typo: within a third of the
// name's length (at least one edit), and a one-letter name only finds the same letter in another
// case (`t` is no typo of `b`). The first of equally near candidates wins; candidates equal to
// `name`, empty or starting with `?` (data-dependent sizes) are passed over.
std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace ss
