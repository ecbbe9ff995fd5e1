#include "support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

namespace regionstore::testing {
namespace {

constexpr size_t kChunkBytes = size_t{64} * 1024;

// A descriptor closed at scope exit or on Close(), so a failed REQUIRE leaks
// nothing.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  ~OwnedFd() { Close(); }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;

  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool open() const { return fd_ >= 0; }
  // Takes ownership of `fd`, closing what was held.
  void Reset(int fd) {
    Close();
    fd_ = fd;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

std::string ErrnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Reaps `pid`, retrying on EINTR; returns the raw wait status.
int WaitForChild(pid_t pid) {
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) FAIL(ErrnoText("waitpid"));
  }
  return wait_status;
}

// Stops and reaps a child the test gives up on, then fails the test.
[[noreturn]] void KillAndFail(pid_t pid, const std::string& why) {
  ::kill(pid, SIGKILL);
  WaitForChild(pid);
  FAIL(why);
  throw std::logic_error("unreachable: FAIL throws");
}

// Appends what is available on `fd` to `out`; closes `fd` at end of file.
// Returns false (with errno set) on a real read error.
bool DrainOnce(OwnedFd& fd, std::string& out) {
  std::array<char, kChunkBytes> buffer{};
  const ssize_t got = ::read(fd.get(), buffer.data(), buffer.size());
  if (got > 0) {
    out.append(buffer.data(), static_cast<size_t>(got));
  } else if (got == 0) {
    fd.Close();
  } else if (errno != EINTR && errno != EAGAIN) {
    return false;
  }
  return true;
}

}  // namespace

std::vector<std::byte> ProcessResult::StdoutAsBytes() const {
  std::vector<std::byte> bytes(stdout_bytes.size());
  std::memcpy(bytes.data(), stdout_bytes.data(), stdout_bytes.size());
  return bytes;
}

std::vector<std::string> ProcessResult::StderrLines() const {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < stderr_bytes.size()) {
    size_t end = stderr_bytes.find('\n', start);
    if (end == std::string::npos) end = stderr_bytes.size();
    lines.push_back(stderr_bytes.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

ProcessResult RunProcess(const std::string& program, const std::vector<std::string>& args,
                         const RunOptions& options) {
  // stdin is a socket pair rather than a pipe: send(MSG_NOSIGNAL) to a child
  // that exits without reading gives EPIPE instead of killing the test
  // process with SIGPIPE. Every descriptor is close-on-exec; the child keeps
  // only the copies dup2 puts on 0, 1 and 2.
  OwnedFd stdin_parent, stdin_child;
  if (options.stdin_bytes.has_value()) {
    std::array<int, 2> pair{-1, -1};
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair.data()) == 0);
    stdin_parent.Reset(pair[0]);
    stdin_child.Reset(pair[1]);
  }
  std::array<int, 2> out_pipe{-1, -1};
  REQUIRE(::pipe2(out_pipe.data(), O_CLOEXEC) == 0);
  OwnedFd stdout_parent(out_pipe[0]), stdout_child(out_pipe[1]);
  std::array<int, 2> err_pipe{-1, -1};
  REQUIRE(::pipe2(err_pipe.data(), O_CLOEXEC) == 0);
  OwnedFd stderr_parent(err_pipe[0]), stderr_child(err_pipe[1]);

  posix_spawn_file_actions_t actions;
  REQUIRE(::posix_spawn_file_actions_init(&actions) == 0);
  if (stdin_child.open()) {
    ::posix_spawn_file_actions_adddup2(&actions, stdin_child.get(), STDIN_FILENO);
  } else {
    ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  ::posix_spawn_file_actions_adddup2(&actions, stdout_child.get(), STDOUT_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, stderr_child.get(), STDERR_FILENO);

  std::vector<std::string> argv_strings;
  argv_strings.push_back(program);
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (std::string& argument : argv_strings) argv.push_back(argument.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  const int spawn_error =
      ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  INFO("posix_spawn " << program << ": " << std::strerror(spawn_error));
  REQUIRE(spawn_error == 0);
  // The parent's copies of the child ends must go, or the pipes never reach
  // end of file.
  stdin_child.Close();
  stdout_child.Close();
  stderr_child.Close();

  ProcessResult result;
  std::span<const std::byte> to_send;
  if (options.stdin_bytes.has_value()) to_send = *options.stdin_bytes;
  if (to_send.empty()) stdin_parent.Close();

  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  while (stdout_parent.open() || stderr_parent.open() || stdin_parent.open()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) KillAndFail(pid, program + " did not finish in time");

    std::array<pollfd, 3> polled{};
    nfds_t count = 0;
    std::array<OwnedFd*, 3> polled_owner{};
    for (OwnedFd* fd : {&stdout_parent, &stderr_parent, &stdin_parent}) {
      if (!fd->open()) continue;
      polled[count] = {fd->get(), static_cast<short>(fd == &stdin_parent ? POLLOUT : POLLIN), 0};
      polled_owner[count] = fd;
      ++count;
    }
    const int ready = ::poll(polled.data(), count, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      KillAndFail(pid, ErrnoText("poll"));
    }
    for (nfds_t index = 0; index < count; ++index) {
      if (polled[index].revents == 0) continue;
      OwnedFd& fd = *polled_owner[index];
      if (&fd == &stdin_parent) {
        const size_t chunk = std::min(to_send.size(), kChunkBytes);
        const ssize_t sent = ::send(fd.get(), to_send.data(), chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (sent >= 0) {
          to_send = to_send.subspan(static_cast<size_t>(sent));
          if (to_send.empty()) fd.Close();  // end of file for the child
        } else if (errno == EPIPE || errno == ECONNRESET) {
          fd.Close();  // the child stopped reading; what it did is in its output
        } else if (errno != EAGAIN && errno != EINTR) {
          KillAndFail(pid, ErrnoText("send to child stdin"));
        }
      } else {
        std::string& sink = &fd == &stdout_parent ? result.stdout_bytes : result.stderr_bytes;
        if (!DrainOnce(fd, sink)) KillAndFail(pid, ErrnoText("read child output"));
      }
    }
  }

  const int wait_status = WaitForChild(pid);
  if (WIFEXITED(wait_status)) {
    result.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    result.term_signal = WTERMSIG(wait_status);
  }
  return result;
}

int RunInChild(const std::function<int()>& body) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::alarm(60);
    ::_exit(body());
  }
  int wait_status = 0;
  REQUIRE(::waitpid(child, &wait_status, 0) == child);
  REQUIRE(WIFEXITED(wait_status));
  return WEXITSTATUS(wait_status);
}

ChildOutcome RunReportingChild(const std::function<std::string()>& body) {
  int pipe_fds[2];
  REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    // Die of SIGBUS for the parent to see, whatever handler a sanitizer set.
    ::signal(SIGBUS, SIG_DFL);
    const std::string failure = body();
    static_cast<void>(WriteAll(pipe_fds[1], failure.data(), failure.size()));
    ::_exit(failure.empty() ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  ChildOutcome outcome;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    outcome.message.append(buffer, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int wait_status = 0;
  REQUIRE(::waitpid(child, &wait_status, 0) == child);
  outcome.exited = WIFEXITED(wait_status);
  if (outcome.exited) outcome.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) outcome.term_signal = WTERMSIG(wait_status);
  return outcome;
}

ChildGuard::~ChildGuard() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

int Reap(ChildGuard& child) {
  int wait_status = 0;
  pid_t reaped;
  do {
    reaped = ::waitpid(child.pid(), &wait_status, 0);
  } while (reaped < 0 && errno == EINTR);
  Must(reaped == child.pid(), "waitpid");
  child.Release();
  return wait_status;
}

ChildProcesses::~ChildProcesses() {
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (!reaped_[i]) {
      ::kill(pids_[i], SIGKILL);
      ::waitpid(pids_[i], nullptr, 0);
    }
  }
}

void ChildProcesses::Add(pid_t pid) {
  pids_.push_back(pid);
  statuses_.push_back(0);
  reaped_.push_back(false);
}

bool ChildProcesses::AllRunning() {
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (!reaped_[i] && ::waitpid(pids_[i], &statuses_[i], WNOHANG) == pids_[i]) {
      reaped_[i] = true;
    }
  }
  return std::find(reaped_.begin(), reaped_.end(), true) == reaped_.end();
}

int ChildProcesses::Wait(size_t index) {
  if (!reaped_[index]) {
    pid_t reaped;
    do {
      reaped = ::waitpid(pids_[index], &statuses_[index], 0);
    } while (reaped < 0 && errno == EINTR);
    Must(reaped == pids_[index], "waitpid");
    reaped_[index] = true;
  }
  return statuses_[index];
}

std::string DescribeWait(int wait_status, const std::string& codes_note) {
  if (WIFEXITED(wait_status)) {
    const int code = WEXITSTATUS(wait_status);
    return "exited with code " + std::to_string(code) +
           (code != 0 && !codes_note.empty() ? " (" + codes_note + ")" : "");
  }
  if (WIFSIGNALED(wait_status)) {
    return std::string("killed by signal ") + ::strsignal(WTERMSIG(wait_status)) +
           (WTERMSIG(wait_status) == SIGALRM ? " (its safety alarm: it hung)" : "");
  }
  return "wait status " + std::to_string(wait_status);
}

void Must(bool ok, const char* what) {
  if (!ok) FAIL(what << " failed: " << std::strerror(errno));
}

CpuPlacement::CpuPlacement() {
  CPU_ZERO(&original_);
  if (::sched_getaffinity(0, sizeof original_, &original_) != 0) return;
  int found = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; ++cpu) {
    if (CPU_ISSET(cpu, &original_)) (found++ == 0 ? parent_cpu_ : child_cpu_) = cpu;
  }
  if (found < 2) return;
  cpu_set_t parent;
  CPU_ZERO(&parent);
  CPU_SET(parent_cpu_, &parent);
  pinned_ = ::sched_setaffinity(0, sizeof parent, &parent) == 0;
}

CpuPlacement::~CpuPlacement() {
  if (pinned_) ::sched_setaffinity(0, sizeof original_, &original_);
}

void CpuPlacement::PinChild() const {
  if (!pinned_) return;
  cpu_set_t child;
  CPU_ZERO(&child);
  CPU_SET(child_cpu_, &child);
  (void)::sched_setaffinity(0, sizeof child, &child);
}

Pipe::Pipe() { Must(::pipe(fds_) == 0, "pipe"); }

Pipe::~Pipe() {
  CloseRead();
  CloseWrite();
}

void Pipe::Close(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool WriteAll(int fd, const void* bytes, size_t size) {
  const auto* p = static_cast<const char*>(bytes);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadExactly(int fd, void* bytes, size_t size) {
  auto* p = static_cast<char*>(bytes);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::vector<char> ReadToEnd(int fd) {
  std::vector<char> bytes;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    Must(n >= 0, "read");
    if (n == 0) return bytes;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
}

}  // namespace regionstore::testing
