#include "tokenizer_file.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ss {

// As the runtime's reader (hf_tokenizer.MAX_BYTES): the largest vocabularies' are tens of MB.
constexpr uintmax_t kMaxTokenizerBytes = uintmax_t{256} << 20;

namespace {
std::optional<int64_t> parsed_size(const std::filesystem::path& file, std::string& error);
}

std::optional<int64_t> tokenizer_file_size(const std::string& path, std::string& error) {
  std::error_code ignored;
  std::filesystem::path file = std::filesystem::is_directory(path, ignored) ? std::filesystem::path(path) / "tokenizer.json" : std::filesystem::path(path);
  // The path comes from an untrusted .ss, read as it is typed: only a regular file, and not a huge
  // one (a FIFO would block, /dev/zero would never end).
  if (!std::filesystem::is_regular_file(file, ignored)) {
    error = std::filesystem::exists(file, ignored) ? "not a regular file" : "no such file";
    return std::nullopt;
  }
  uintmax_t bytes = std::filesystem::file_size(file, ignored);
  if (bytes > kMaxTokenizerBytes) {
    error = "larger than " + std::to_string(kMaxTokenizerBytes >> 20) + " MB";
    return std::nullopt;
  }
  // The language server checks on every edit: a tokenizer is parsed again only when it changed.
  struct Read {
    std::filesystem::file_time_type written;
    uintmax_t bytes = 0;
    std::optional<int64_t> size;
    std::string error;
  };
  static std::mutex mutex;
  static std::map<std::string, Read> read;  // one entry per path
  std::string key = std::filesystem::absolute(file, ignored).string();
  auto written = std::filesystem::last_write_time(file, ignored);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto known = read.find(key); known != read.end() && known->second.written == written && known->second.bytes == bytes) {
      error = known->second.error;
      return known->second.size;
    }
  }
  auto size = parsed_size(file, error);
  std::lock_guard<std::mutex> lock(mutex);
  read[key] = {written, bytes, size, error};
  return size;
}

namespace {

// Its largest id + 1, read from the file's JSON.
std::optional<int64_t> parsed_size(const std::filesystem::path& file, std::string& error) {
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

}  // namespace

}  // namespace ss
