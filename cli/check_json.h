// `shapescript check --format json`: one diagnostic as the JSON object the CLI prints. Apart from
// main.cpp so that the fuzz target (tests/fuzz) renders exactly what the CLI does.
#pragma once
#include <nlohmann/json.hpp>

#include <string_view>

#include "diagnostics/diagnostic.h"
#include "syntax/source.h"

namespace ss {

std::string_view severity_name(Severity s);
nlohmann::json diagnostic_json(const SourceFile& file, const Diagnostic& d);

}  // namespace ss
