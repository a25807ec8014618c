#include "diagnostic.h"

#include <cctype>

namespace ss {

namespace {
const std::vector<DiagnosticInfo>& table() {
  static const std::vector<DiagnosticInfo> entries = {
#define DIAGNOSTIC(code, name, category, summary) {#code, #name, DiagnosticCategory::category, summary},
#include "diagnostic_codes.def"
#undef DIAGNOSTIC
  };
  return entries;
}
}  // namespace

const DiagnosticInfo& info(DiagnosticCode code) { return table()[static_cast<size_t>(code)]; }

const std::vector<DiagnosticCode>& all_codes() {
  static const std::vector<DiagnosticCode> codes = [] {
    std::vector<DiagnosticCode> result;
    for (size_t i = 0; i < table().size(); ++i) result.push_back(static_cast<DiagnosticCode>(i));
    return result;
  }();
  return codes;
}

std::optional<DiagnosticCode> find_code(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (size_t i = 0; i < table().size(); ++i)
    if (table()[i].code == upper) return static_cast<DiagnosticCode>(i);
  return std::nullopt;
}

}  // namespace ss
