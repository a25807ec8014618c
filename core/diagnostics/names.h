// "Did you mean": the closest known name to a misspelled one.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ss {

size_t edit_distance(std::string_view a, std::string_view b);
// The candidate nearest `name`, if it is near enough to be a likely typo.
std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace ss
