#include "diagnostics/explain.h"

#include <map>

namespace ss {

const std::map<std::string, std::string_view>& embedded_error_pages();  // generated

std::optional<std::string_view> explanation(DiagnosticCode code) {
  auto it = embedded_error_pages().find(std::string(info(code).code) + ".md");
  if (it == embedded_error_pages().end()) return std::nullopt;
  return it->second;
}

}  // namespace ss
