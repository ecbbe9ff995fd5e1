// Child processes for tests: forked children that never return into Catch
// (RunInChild, RunReportingChild, ChildGuard, Reap, pipes between them), and
// programs run the way a user or a script would (RunProcess, for tests that
// drive a command-line tool such as regionctl).
#ifndef REGIONSTORE_TESTS_SUPPORT_PROCESS_H_
#define REGIONSTORE_TESTS_SUPPORT_PROCESS_H_

#include <sched.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace regionstore::testing {

struct ProcessResult {
  // The exit status if the child exited, -1 if a signal ended it.
  int exit_code = -1;
  // The signal that ended the child, 0 if it exited.
  int term_signal = 0;
  // Everything the child wrote, byte for byte (binary-safe).
  std::string stdout_bytes;
  std::string stderr_bytes;

  [[nodiscard]] std::vector<std::byte> StdoutAsBytes() const;
  // stderr split at '\n'; a last line without '\n' counts too.
  [[nodiscard]] std::vector<std::string> StderrLines() const;
};

struct RunOptions {
  // Fed to the child's standard input, which then reaches end of file. Without
  // it the child's stdin is /dev/null.
  std::optional<std::span<const std::byte>> stdin_bytes;
  // The child is killed with SIGKILL and the test fails after this long: a
  // hung tool must not hang the test suite.
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
};

// Runs `program` (a path, not searched in PATH) with `args` as argv[1..] and
// the test's environment, and waits for it. stdout and stderr are drained
// together with poll() while stdin is fed, so no amount of output can
// deadlock. Failing to start the child fails the test (Catch REQUIRE).
ProcessResult RunProcess(const std::string& program, const std::vector<std::string>& args,
                         const RunOptions& options = {});

// --- Forked children -------------------------------------------------------

// Runs `body` in a forked child and returns its exit code. The child never
// returns into Catch: it _exits with what body returned, and an alarm ends a
// child that a bug keeps blocked. A child that did not exit fails the test.
int RunInChild(const std::function<int()>& body);

// What a RunReportingChild child did.
struct ChildOutcome {
  bool exited = false;
  int exit_code = -1;
  int term_signal = 0;
  std::string message;  // what the child reported through the pipe

  // The exit code, or 128 + the signal's number as a shell reports it
  // (SIGBUS: 135).
  [[nodiscard]] int ShellCode() const { return exited ? exit_code : 128 + term_signal; }
};

// Runs `body` in a forked child, so that a SIGBUS from a mapped write is a
// failed assertion in the parent and not the end of the test binary. `body`
// returns "" on success or a description of what failed; the child sends it
// through a pipe, exits 0 or 1 accordingly and never returns into Catch.
ChildOutcome RunReportingChild(const std::function<std::string()>& body);

// Kills and reaps a forked child if the test leaves early (a failed REQUIRE),
// so none lingers holding a store's lock or spinning.
class ChildGuard {
 public:
  ChildGuard() = default;
  explicit ChildGuard(pid_t pid) : pid_(pid) {}
  ~ChildGuard();
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;
  pid_t pid() const { return pid_; }
  // Takes charge of `pid` (this guard held none).
  void Adopt(pid_t pid) { pid_ = pid; }
  // The caller reaped it.
  void Release() { pid_ = -1; }

 private:
  pid_t pid_ = -1;
};

// Several forked children (reader processes), each reaped once; the
// destructor kills and reaps those still running.
class ChildProcesses {
 public:
  ChildProcesses() = default;
  ~ChildProcesses();
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;
  void Add(pid_t pid);
  size_t size() const { return pids_.size(); }
  // False once any of them has exited (reaps without waiting).
  bool AllRunning();
  // Waits for child `index` if it is not reaped yet; its wait status.
  int Wait(size_t index);

 private:
  std::vector<pid_t> pids_;
  std::vector<int> statuses_;
  std::vector<bool> reaped_;
};

// Waits for the guarded child (retrying on EINTR), releases the guard and
// returns the wait status.
int Reap(ChildGuard& child);

// A wait status in words: "exited with code N", "killed by signal ...".
// `codes_note`, when given, follows a non-zero exit code in parentheses (where
// the test's exit codes are listed).
std::string DescribeWait(int wait_status, const std::string& codes_note = "");

// A check on a system call in a loop: fails the case with errno's text, but
// unlike REQUIRE adds no passing assertion per call (thousands under -s).
void Must(bool ok, const char* what);

// Puts the parent (this process, for the life of the object) and each child
// on different CPUs when at least two are allowed. Left to the scheduler, a
// pipe wakeup places the parent on the child's CPU (a sync wakeup), and then
// a spinning parent runs only while the child blocks (in a barrier, say): it
// never sees what the child does between. Restores the original mask at
// scope exit.
class CpuPlacement {
 public:
  CpuPlacement();
  ~CpuPlacement();
  CpuPlacement(const CpuPlacement&) = delete;
  CpuPlacement& operator=(const CpuPlacement&) = delete;
  // In the child, right after fork.
  void PinChild() const;
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t original_;
  int parent_cpu_ = -1;
  int child_cpu_ = -1;
  bool pinned_ = false;
};

// A pipe whose ends close at scope exit (or earlier, one by one).
class Pipe {
 public:
  Pipe();
  ~Pipe();
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  int read_fd() const { return fds_[0]; }
  int write_fd() const { return fds_[1]; }
  void CloseRead() { Close(fds_[0]); }
  void CloseWrite() { Close(fds_[1]); }

 private:
  static void Close(int& fd);
  int fds_[2] = {-1, -1};
};

// Writes all of `bytes` (a child's report); false on error. Safe in a child.
bool WriteAll(int fd, const void* bytes, size_t size);
// Reads exactly `size` bytes; false at end of file or on error. Safe in a
// child.
bool ReadExactly(int fd, void* bytes, size_t size);
// Reads until end of file (every writer gone). Parent side: a read error
// fails the test.
std::vector<char> ReadToEnd(int fd);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_PROCESS_H_
