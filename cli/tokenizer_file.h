// What the checker asks of a tokenizer file (`dataset(..., tokenizer="tok.json")`), read by the
// hosts (the CLI, the language server): the core reads no files and knows nothing of JSON.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "check/analysis.h"

namespace ss {

// How many ids a tokenizer.json (or a folder holding one) gives: its largest id + 1. Nullopt,
// with `error` set, when it can't be read or isn't a tokenizer.
std::optional<int64_t> tokenizer_file_size(const std::string& path, std::string& error);

// Lets the checker ask of the files a program names (its tokenizers) what it checks them for.
inline void read_named_files(AnalyzeOptions& options) { options.tokenizer_size = tokenizer_file_size; }

}  // namespace ss
