// What an `extern fn` may name (`= "torch.special.erfc"`). The target becomes code in the generated
// module, so it must be a plain dotted name under an allowlisted module: the checker reports any
// other as E0207, and the code generators write none but an allowed one (docs/language.md, "extern fn").
#pragma once
#include <array>
#include <string>
#include <string_view>

namespace ss {

// The modules an `extern fn` may name a function of.
inline constexpr std::array<std::string_view, 2> kExternModules = {"torch", "math"};

// Parts of torch an `extern fn` may not name: they read or write files, fetch or compile code, or
// start processes, which no tensor function does.
inline constexpr std::array<std::string_view, 16> kExternRefusedTorch = {
    "hub", "utils", "load", "save", "package", "jit", "compile", "library", "classes", "serialization",
    "distributed", "multiprocessing", "backends", "onnx", "export", "ops"};

// `torch` of `torch.special.erfc`: the module a target's code imports.
inline std::string extern_module(std::string_view target) { return std::string(target.substr(0, target.find('.'))); }

// Whether `target` is identifiers ([A-Za-z][A-Za-z0-9_]*: none starts with `_`, so no private or
// dunder name) joined by single dots, at least two, the first in kExternModules, and under torch
// the second not in kExternRefusedTorch.
inline bool is_allowed_extern_target(std::string_view target) {
  std::array<std::string_view, 2> first_two;
  size_t parts = 0;
  for (size_t begin = 0;;) {
    size_t end = target.find('.', begin);
    std::string_view part = target.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    if (part.empty() || !((part[0] >= 'A' && part[0] <= 'Z') || (part[0] >= 'a' && part[0] <= 'z'))) return false;
    for (char c : part)
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    if (parts < 2) first_two[parts] = part;
    ++parts;
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  if (parts < 2) return false;
  bool module = false;
  for (std::string_view m : kExternModules) module = module || first_two[0] == m;
  if (!module) return false;
  if (first_two[0] == "torch")
    for (std::string_view refused : kExternRefusedTorch)
      if (first_two[1] == refused) return false;
  return true;
}

}  // namespace ss
