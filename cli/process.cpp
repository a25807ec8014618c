#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <set>

namespace ss {

namespace {

// ---------------------------------------------------------------------------------------------
// Interrupts: the handler only records the signal and wakes the waiting loop through a pipe.

volatile sig_atomic_t g_interrupted = 0;
int g_wake[2] = {-1, -1};  // written by the handler, polled by run_child
int g_scopes = 0;
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];
bool g_installed[3] = {false, false, false};

void on_stop_signal(int signal) {
  int saved = errno;
  if (!g_interrupted || signal == SIGINT) g_interrupted = signal;  // a later Ctrl-C is still Ctrl-C (run forwards each)
  char byte = static_cast<char>(signal);
  if (g_wake[1] >= 0) {
    [[maybe_unused]] ssize_t ignored = write(g_wake[1], &byte, 1);
  }
  errno = saved;
}

bool is_our_handler(int signal) {
  struct sigaction current {};
  sigaction(signal, nullptr, &current);
  return current.sa_handler == on_stop_signal;
}

// ---------------------------------------------------------------------------------------------
// The reaper. Messages are NUL-terminated records: "+d PATH", "-d PATH", "+g PGID", "-g PGID".

int g_reaper = -1;  // the write end of its pipe

[[noreturn]] void reap(int from) {
  std::set<std::string> paths;
  std::set<pid_t> groups;
  std::string pending;
  char buffer[4096];
  for (;;) {
    ssize_t n = read(from, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buffer, static_cast<size_t>(n));
    for (size_t end; (end = pending.find('\0')) != std::string::npos; pending.erase(0, end + 1)) {
      std::string record = pending.substr(0, end);
      if (record.size() < 3) continue;
      std::string what = record.substr(3);
      if (record.starts_with("+d ")) paths.insert(what);
      else if (record.starts_with("-d ")) paths.erase(what);
      else if (record.starts_with("+g ")) groups.insert(std::stoi(what));
      else if (record.starts_with("-g ")) groups.erase(std::stoi(what));
      else if (record.starts_with("bye")) _exit(0);
    }
  }
  for (pid_t group : groups) kill(-group, SIGKILL);
  for (const std::string& path : paths) {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  _exit(0);
}

void say_goodbye() {
  if (g_reaper < 0) return;
  const char bye[] = "bye";
  [[maybe_unused]] ssize_t ignored = write(g_reaper, bye, sizeof bye);
  close(g_reaper);
  g_reaper = -1;
}

void tell_reaper(const std::string& record) {
  if (g_reaper < 0) {
    int channel[2];
    if (pipe2(channel, O_CLOEXEC) != 0) return;  // no reaper: cleaning up after SIGKILL is lost, nothing else
    pid_t pid = fork();
    if (pid < 0) {
      close(channel[0]);
      close(channel[1]);
      return;
    }
    if (pid == 0) {
      // Out of the terminal's process group and session, so Ctrl-C and a kill of the CLI's group
      // don't reach it; holding none of the CLI's descriptors, so no pipe waits on it.
      setsid();
      for (int signal : kStopSignals) ::signal(signal, SIG_IGN);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      int null = open("/dev/null", O_RDWR);
      for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
      dup2(channel[0], 3);
      close_range(4, ~0U, 0);
      reap(3);
    }
    close(channel[0]);
    g_reaper = channel[1];
    std::atexit(say_goodbye);  // a normal exit has cleaned up: the reaper leaves without touching anything
  }
  std::string message = record + '\0';
  const char* data = message.data();
  size_t left = message.size();
  while (left > 0) {
    ssize_t n = write(g_reaper, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

void remove_if_killed(const std::filesystem::path& path) { tell_reaper("+d " + path.string()); }
void forget_path(const std::filesystem::path& path) { tell_reaper("-d " + path.string()); }
void kill_if_killed(pid_t group) { tell_reaper("+g " + std::to_string(group)); }
void forget_group(pid_t group) { tell_reaper("-g " + std::to_string(group)); }

InterruptScope::InterruptScope() {
  if (g_scopes++ > 0) return;
  if (g_wake[0] < 0 && pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) g_wake[0] = g_wake[1] = -1;
  char stale[64];
  while (g_wake[0] >= 0 && read(g_wake[0], stale, sizeof stale) > 0) {
  }
  g_interrupted = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < 3; ++i) {
    sigaction(kStopSignals[i], nullptr, &g_previous[i]);
    g_installed[i] = g_previous[i].sa_handler != SIG_IGN;
    if (g_installed[i]) sigaction(kStopSignals[i], &action, nullptr);
  }
}

InterruptScope::~InterruptScope() {
  if (--g_scopes > 0) return;
  for (int i = 0; i < 3; ++i)
    if (g_installed[i]) sigaction(kStopSignals[i], &g_previous[i], nullptr);
}

int interrupted() { return g_interrupted; }

ProcessResult run_child(const std::vector<std::string>& argv, const ChildOutput& out, const ChildOutput& err, OnInterrupt on_interrupt,
                        bool hold_sigint) {
  ProcessResult result;
  const ChildOutput* outputs[2] = {&out, &err};
  int read_ends[2] = {-1, -1}, child_ends[2] = {-1, -1};
  auto close_all = [&] {
    for (int& fd : read_ends)
      if (fd >= 0) close(fd), fd = -1;
    for (int& fd : child_ends)
      if (fd >= 0) close(fd), fd = -1;
  };
  for (int i = 0; i < 2; ++i) {
    if (outputs[i]->kind == ChildOutput::Kind::capture) {
      int ends[2];
      if (pipe2(ends, O_CLOEXEC) != 0) {
        result.start_error = std::strerror(errno);
        close_all();
        return result;
      }
      read_ends[i] = ends[0];
      child_ends[i] = ends[1];
    } else if (outputs[i]->kind == ChildOutput::Kind::file) {
      child_ends[i] = open(outputs[i]->path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (child_ends[i] < 0) {
        result.start_error = "can't write `" + outputs[i]->path + "`: " + std::strerror(errno);
        close_all();
        return result;
      }
    }
  }
  int report[2];  // the child writes exec's errno here; closed by a successful exec
  if (pipe2(report, O_CLOEXEC) != 0) {
    result.start_error = std::strerror(errno);
    close_all();
    return result;
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  bool sigint_held = hold_sigint && is_our_handler(SIGINT);  // not when SIGINT is ignored: it stays so
  // Signals wait until the child has its own handlers (exec's defaults), so ours never runs in it.
  sigset_t all, previous;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &previous);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the CLI died before prctl
    for (int signal : kStopSignals)
      if (is_our_handler(signal)) ::signal(signal, SIG_DFL);
    for (int i = 0; i < 2; ++i)
      if (child_ends[i] >= 0) dup2(child_ends[i], i + 1);
    sigset_t mask;
    sigemptyset(&mask);
    if (sigint_held) sigaddset(&mask, SIGINT);
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    execvp(args[0], args.data());
    int error = errno;
    [[maybe_unused]] ssize_t ignored = write(report[1], &error, sizeof error);
    _exit(127);
  }
  int fork_error = errno;
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  close(report[1]);
  for (int& fd : child_ends)
    if (fd >= 0) close(fd), fd = -1;
  if (pid < 0) {
    close(report[0]);
    close_all();
    result.start_error = std::strerror(fork_error);
    return result;
  }
  setpgid(pid, pid);  // also here, so the group exists before anything signals it
  kill_if_killed(pid);
  int exec_error = 0;
  ssize_t n;
  while ((n = read(report[0], &exec_error, sizeof exec_error)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (n == sizeof exec_error) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    forget_group(pid);
    close_all();
    result.start_error = std::strerror(exec_error);
    return result;
  }
  result.started = true;

  using Clock = std::chrono::steady_clock;
  bool stopping = false;
  Clock::time_point kill_at{};
  auto stop = [&](int signal) {
    if (on_interrupt == OnInterrupt::forward_sigint && signal == SIGINT) {
      kill(-pid, SIGINT);
      return;
    }
    if (!stopping) {
      stopping = true;
      kill(-pid, SIGTERM);
      kill_at = Clock::now() + std::chrono::seconds(3);
    }
  };
  if (int signal = interrupted(); signal && !(on_interrupt == OnInterrupt::forward_sigint && signal == SIGINT)) stop(signal);
  char buffer[4096];
  int status = 0;
  bool ended = false;
  for (;;) {
    pollfd fds[3] = {{read_ends[0], POLLIN, 0}, {read_ends[1], POLLIN, 0}, {g_wake[0], POLLIN, 0}};
    bool pipes_open = read_ends[0] >= 0 || read_ends[1] >= 0;
    if (!ended) {
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
        // Ended (a zombie still, so its pid and group id can't be reused yet): whatever it left
        // running in its group goes too, which also closes the pipes they held.
        ended = true;
        kill(-pid, SIGKILL);
      }
    }
    if (ended && !pipes_open) break;
    // Polled at a slow pace for the child's end (no pidfd needed), at once for output and signals.
    int timeout = 100;
    if (stopping && !ended) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - Clock::now()).count();
      if (left <= 0) {
        kill(-pid, SIGKILL);
        left = 100;
      }
      timeout = std::min(timeout, static_cast<int>(left));
    }
    if (poll(fds, 3, timeout) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].fd >= 0 && (fds[2].revents & POLLIN)) {
      char signals[16];
      ssize_t got = read(g_wake[0], signals, sizeof signals);
      for (ssize_t i = 0; i < got; ++i) stop(signals[i]);
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        close(read_ends[i]);
        read_ends[i] = -1;
        continue;
      }
      (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(got));
      if (outputs[i]->echo) std::cerr.write(buffer, got).flush();
    }
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  forget_group(pid);
  close_all();
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return result;
}

}  // namespace ss
