// The CLI's files: reading sources, refusing an output that is an input, temporary folders, and
// outputs written beside their target and renamed into place whole.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ss {

// Exit status of a command that can't read or write what it was given (usage, files).
constexpr int kExitFiles = 2;

// Reads a whole file; false with `error` set when it can't (a folder, or what open/read said).
bool read_source(const std::string& path, std::string& text, std::string& error);

// Writes a whole file, false with `error` (what open/write/close said: a full disk is ENOSPC).
bool write_whole_file(const std::filesystem::path& path, std::string_view contents, std::string& error);

// JSON as text, a string that isn't UTF-8 (a source's byte, a file name's) written with U+FFFD
// rather than throwing.
std::string json_text(const nlohmann::json& value, int indent = -1);

// An output a command writes; `folder`: a folder it replaces whole (--hf).
struct OutputPath {
  std::string path;
  bool folder = false;
};

// Every command's check, before it does any work: an output that is one of its inputs (the same
// path, a link to it or a hard link of it: the same device and inode; any file of an input
// folder), or a folder output that holds an input, is refused. Prints why and returns false.
bool refuse_overwriting_inputs(const std::vector<std::string>& inputs, const std::vector<OutputPath>& outputs);

// A temporary folder `shapescript-XXXXXX` under $TMPDIR (or /tmp), removed when this goes out of
// scope, and by the reaper (process.h) if this process is killed first.
class TemporaryDirectory {
 public:
  explicit TemporaryDirectory(const std::string& prefix = "shapescript");
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }
  const std::string& error() const { return error_; }  // why there is none (path() empty)
 private:
  std::filesystem::path path_;
  std::string error_;
};

// An output built under a temporary name beside its target and renamed into place when whole, so
// the target is the previous one or the new one, never part of one. The runtime writes `path()`:
// the target's name inside a folder `.shapescript-partial-XXXXXX` beside the target (on the same
// file system, so the rename is atomic), removed whatever happens, and by the reaper if this
// process is killed. A folder is swapped in with renameat2(RENAME_EXCHANGE): two exports to one
// folder at once leave the one that finished last, whole.
class StagedOutput {
 public:
  StagedOutput() = default;
  ~StagedOutput();
  StagedOutput(const StagedOutput&) = delete;
  StagedOutput& operator=(const StagedOutput&) = delete;
  // False with `error`: the target's folder doesn't exist or can't be written, or its name is too long.
  bool prepare(const OutputPath& target, std::string& error);
  const std::filesystem::path& path() const { return staged_; }
  // Whether the runtime wrote what it should (a file; a folder holding `required`), else `error`.
  bool written(const std::vector<std::string>& required, std::string& error) const;
  // Renames the output into place; false with `error`.
  bool commit(std::string& error);

 private:
  std::filesystem::path target_, staging_, staged_;
  bool folder_ = false;
};

}  // namespace ss
