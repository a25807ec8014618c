#include "tokenizer_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ss {

// As the runtime's reader (hf_tokenizer.MAX_BYTES): the largest vocabularies' are tens of MB.
constexpr uintmax_t kMaxTokenizerBytes = uintmax_t{256} << 20;

std::optional<int64_t> tokenizer_file_size(const std::string& path, std::string& error) {
  std::error_code ignored;
  std::filesystem::path file = std::filesystem::is_directory(path, ignored) ? std::filesystem::path(path) / "tokenizer.json" : std::filesystem::path(path);
  // The path comes from an untrusted .ss, read as it is typed: only a regular file, and not a huge
  // one (a FIFO would block, /dev/zero would never end).
  if (!std::filesystem::is_regular_file(file, ignored)) {
    error = std::filesystem::exists(file, ignored) ? "not a regular file" : "no such file";
    return std::nullopt;
  }
  if (std::filesystem::file_size(file, ignored) > kMaxTokenizerBytes) {
    error = "larger than " + std::to_string(kMaxTokenizerBytes >> 20) + " MB";
    return std::nullopt;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    error = "can't open it";
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json data = nlohmann::json::parse(text.str(), nullptr, false);
  if (data.is_discarded() || !data.is_object() || !data.contains("model") || !data["model"].is_object()) {
    error = "it isn't a tokenizer.json (no `model` object)";
    return std::nullopt;
  }
  int64_t size = 0;
  const nlohmann::json& vocab = data["model"].value("vocab", nlohmann::json());
  if (vocab.is_object()) {  // BPE, WordPiece: token -> id
    for (const auto& [token, id] : vocab.items())
      if (id.is_number_integer()) size = std::max<int64_t>(size, id.get<int64_t>() + 1);
  } else if (vocab.is_array()) {  // Unigram: [piece, score] per id
    size = static_cast<int64_t>(vocab.size());
  }
  if (data.contains("added_tokens") && data["added_tokens"].is_array())
    for (const nlohmann::json& token : data["added_tokens"])
      if (token.is_object() && token.contains("id") && token["id"].is_number_integer()) size = std::max<int64_t>(size, token["id"].get<int64_t>() + 1);
  if (size == 0) {
    error = "it has no tokens";
    return std::nullopt;
  }
  return size;
}

}  // namespace ss
