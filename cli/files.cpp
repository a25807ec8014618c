#include "files.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>

#include "process.h"

namespace ss {

namespace fs = std::filesystem;

namespace {

struct Identity {
  dev_t device;
  ino_t inode;
  bool operator==(const Identity&) const = default;
};

std::optional<Identity> identity(const fs::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return Identity{st.st_dev, st.st_ino};
}

// The path with links and `..` resolved as far as they can be; the absolute path when even that fails (a loop).
fs::path resolved(const fs::path& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) return path;
  fs::path canonical = fs::weakly_canonical(absolute, error);
  return error ? absolute.lexically_normal() : canonical;
}

bool is_within(const fs::path& inner, const fs::path& outer) {
  auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end();
}

std::string errno_text(int error) { return std::strerror(error); }

}  // namespace

bool read_source(const std::string& path, std::string& text, std::string& error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = errno_text(errno);
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    error = "it is a folder, not a file";
    return false;
  }
  text.clear();
  char buffer[65536];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno_text(errno);  // /proc/self/mem: EIO
      close(fd);
      return false;
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return true;
}

bool write_whole_file(const fs::path& path, std::string_view contents, std::string& error) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = errno_text(errno);
    return false;
  }
  while (!contents.empty()) {
    ssize_t n = write(fd, contents.data(), contents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = errno_text(n < 0 ? errno : ENOSPC);
      close(fd);
      return false;
    }
    contents.remove_prefix(static_cast<size_t>(n));
  }
  if (close(fd) != 0) {  // NFS and some full disks say so only here
    error = errno_text(errno);
    return false;
  }
  return true;
}

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool refuse_overwriting_inputs(const std::vector<std::string>& inputs, const std::vector<OutputPath>& outputs) {
  // Every input file's identity: a folder's files too (--weights DIR, import-weights' folder).
  struct Input {
    std::string name;
    fs::path path;
    Identity id;
  };
  std::vector<Input> files;
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    if (auto id = identity(input)) files.push_back({input, resolved(input), *id});
    std::error_code error;
    if (!fs::is_directory(input, error)) continue;
    size_t seen = 0;
    for (auto it = fs::recursive_directory_iterator(input, fs::directory_options::skip_permission_denied, error);
         !error && it != fs::recursive_directory_iterator() && ++seen < 100000; it.increment(error))
      if (auto id = identity(it->path())) files.push_back({it->path().string(), resolved(it->path()), *id});
  }
  for (const OutputPath& output : outputs) {
    if (output.path.empty()) continue;
    fs::path where = resolved(output.path);
    auto id = identity(output.path);
    for (const Input& input : files) {
      std::string why;
      if (id && *id == input.id)
        why = where == input.path ? "it is the input `" + input.name + "`"
                                  : "it is the input `" + input.name + "` under another name (a link to it, or a hard link of it)";
      else if (is_within(input.path, where))
        why = "the " + std::string(output.folder ? "folder" : "path") + " holds the input `" + input.name + "`, which writing it would remove";
      if (!why.empty()) {
        std::cerr << "error: can't write `" << output.path << "`: " << why << "; choose another output\n";
        return false;
      }
    }
  }
  return true;
}

TemporaryDirectory::TemporaryDirectory(const std::string& prefix) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string base = tmpdir && *tmpdir ? tmpdir : "/tmp";
  struct stat st {};
  if (stat(base.c_str(), &st) != 0) {
    error_ = "the temporary folder `" + base + "` (TMPDIR) is unusable: " + errno_text(errno);
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    error_ = "the temporary folder `" + base + "` (TMPDIR) isn't a folder";
    return;
  }
  std::string pattern = (fs::path(base) / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data())) {
    error_ = "can't create a temporary folder in `" + base + "`: " + errno_text(errno);
    return;
  }
  path_ = pattern;
  remove_if_killed(path_);
}

TemporaryDirectory::~TemporaryDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
  forget_path(path_);
}

bool StagedOutput::prepare(const OutputPath& target, std::string& error) {
  folder_ = target.folder;
  std::error_code failed;
  target_ = fs::absolute(target.path, failed);
  if (failed) {
    error = failed.message();
    return false;
  }
  fs::path name = target_.filename();
  if (name.empty() || name == "." || name == "..") {  // `out/`, `.`: the folder's own name
    target_ = target_.parent_path().lexically_normal();
    if (target_.filename().empty()) target_ = target_.parent_path();
    name = target_.filename();
  }
  fs::path parent = target_.parent_path();
  struct stat st {};
  if (stat(parent.c_str(), &st) != 0) {
    error = errno == ENOENT ? "the folder `" + parent.string() + "` does not exist" : "`" + parent.string() + "`: " + errno_text(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    error = "`" + parent.string() + "` isn't a folder";
    return false;
  }
  long name_max = pathconf(parent.c_str(), _PC_NAME_MAX);
  if (name_max > 0 && name.native().size() > static_cast<size_t>(name_max)) {
    error = "its name is longer than the " + std::to_string(name_max) + " bytes a file name may have here";
    return false;
  }
  struct stat existing {};
  if (stat(target_.c_str(), &existing) == 0) {
    if (folder_ && !S_ISDIR(existing.st_mode)) {
      error = "it exists and isn't a folder";
      return false;
    }
    if (!folder_ && !S_ISREG(existing.st_mode)) {  // a folder, or a device the rename would replace (/dev/null)
      error = S_ISDIR(existing.st_mode) ? "it is a folder" : "it exists and isn't a regular file";
      return false;
    }
    // A folder is replaced whole: only an earlier export's (config.json), or an empty one.
    if (folder_ && !fs::exists(target_ / "config.json", failed) && !fs::is_empty(target_, failed)) {
      error = "the folder exists and isn't a Hugging Face folder (no config.json); writing it would replace what is there";
      return false;
    }
  } else if (errno != ENOENT) {
    error = errno_text(errno);  // a loop, a name too long, no permission
    return false;
  }
  std::string pattern = (parent / ".shapescript-partial-XXXXXX").string();
  if (!mkdtemp(pattern.data())) {
    error = "can't create a file in `" + parent.string() + "`: " + errno_text(errno);
    return false;
  }
  staging_ = pattern;
  remove_if_killed(staging_);
  staged_ = staging_ / name;
  return true;
}

StagedOutput::~StagedOutput() {
  if (staging_.empty()) return;
  std::error_code ignored;
  fs::remove_all(staging_, ignored);  // after a swap, the previous folder
  forget_path(staging_);
}

bool StagedOutput::written(const std::vector<std::string>& required, std::string& error) const {
  struct stat st {};
  if (stat(staged_.c_str(), &st) != 0) {
    error = "nothing was written";
    return false;
  }
  if (!folder_) {
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
      error = S_ISREG(st.st_mode) ? "the file written is empty" : "what was written isn't a file";
      return false;
    }
    return true;
  }
  for (const std::string& file : required)
    if (stat((staged_ / file).c_str(), &st) != 0) {
      error = "the folder written has no " + file;
      return false;
    }
  return true;
}

bool StagedOutput::commit(std::string& error) {
  if (!folder_) {
    if (rename(staged_.c_str(), target_.c_str()) != 0) {
      error = errno_text(errno);
      return false;
    }
    return true;
  }
  for (int attempt = 0; attempt < 8; ++attempt) {
    // Into a place that is empty: fails if another export's folder got there first, then swapped with it.
    if (renameat2(AT_FDCWD, staged_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE) == 0) return true;
    if (errno == EINVAL) {  // a file system without renameat2's flags: the target is briefly absent
      fs::path aside = staging_ / ".previous";
      if (rename(target_.c_str(), aside.c_str()) != 0 && errno != ENOENT) break;
      if (rename(staged_.c_str(), target_.c_str()) == 0) return true;
      continue;
    }
    if (errno != EEXIST) break;
    // Files of the previous folder the export doesn't write (a tokenizer put beside it) stay.
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(target_, ignored)) {
      fs::path mine = staged_ / entry.path().filename();
      if (fs::exists(fs::symlink_status(mine, ignored))) continue;
      std::error_code linked;
      fs::create_hard_link(entry.path(), mine, linked);
      if (linked) fs::copy(entry.path(), mine, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ignored);
    }
    // The new folder in, the previous one into the staging folder, which the destructor removes.
    if (renameat2(AT_FDCWD, staged_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) return true;
    if (errno != ENOENT) break;  // gone since: try an empty place again
  }
  error = errno_text(errno);
  return false;
}

}  // namespace ss
