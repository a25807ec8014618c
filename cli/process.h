// The CLI's child processes (the Python runtime, verify's exports): each in a process group of its
// own that dies with the CLI, however the CLI ends, and stopped cleanly by Ctrl-C or SIGTERM.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace ss {

struct ProcessResult {
  int status = -1;  // exit status, or -signal
  std::string out, err;
  bool started = false;
  std::string start_error;
};

// While one lives, SIGINT, SIGTERM and SIGHUP don't end this process: they are recorded, stop the
// running child (run_child) and the command returns through its destructors, which remove its
// temporary files, with exit status 128 + the signal. A signal ignored when it is made (a
// background job's SIGINT, nohup's SIGHUP) stays ignored, here and in the children.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

// The signal that interrupted this command (0: none yet).
int interrupted();

// Where a child's stdout or stderr goes: captured (and echoed to stderr as it comes), a file, or this process's own.
struct ChildOutput {
  enum class Kind { capture, file, inherit } kind = Kind::capture;
  bool echo = false;
  std::string path;  // Kind::file
};

// How an interrupt reaches the child: `stop` sends its group SIGTERM, then SIGKILL after a few
// seconds; `forward_sigint` passes SIGINT on to a child that handles Ctrl-C itself (train.py saves
// first), and stops it as `stop` does for SIGTERM and SIGHUP.
enum class OnInterrupt { stop, forward_sigint };

// Runs argv (PATH searched) in a new process group, with PR_SET_PDEATHSIG so the kernel kills it
// when this process dies, and its group killed by the reaper (below) if this process is killed
// before it can. `hold_sigint`: the child starts with SIGINT blocked, for a runtime that unblocks
// it once it can stop cleanly (train.py). Whatever is left of the group when the child ends is killed.
ProcessResult run_child(const std::vector<std::string>& argv, const ChildOutput& out, const ChildOutput& err,
                        OnInterrupt on_interrupt = OnInterrupt::stop, bool hold_sigint = false);

// The reaper: a small process forked once, in a session of its own, which outlives this one only
// to clean up after it. If this process dies without saying goodbye (SIGKILL, a crash), the reaper
// sees its pipe close, kills the process groups and removes the paths registered here and not
// forgotten since. Only this can clean up after SIGKILL, which no process can catch.
void remove_if_killed(const std::filesystem::path& path);
void forget_path(const std::filesystem::path& path);
void kill_if_killed(pid_t group);
void forget_group(pid_t group);

}  // namespace ss
