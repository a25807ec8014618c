// The explanation of each error code: docs/errors/CODE.md, embedded at build time.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "diagnostics/diagnostic.h"

namespace ss {

std::optional<std::string_view> explanation(DiagnosticCode code);

}  // namespace ss
