// Runs a program as a child process and captures what it says, for tests that
// drive a command-line tool (regionctl) the way a user or a script would.
#ifndef REGIONSTORE_TESTS_SUPPORT_RUN_PROCESS_H_
#define REGIONSTORE_TESTS_SUPPORT_RUN_PROCESS_H_

#include <chrono>
#include <cstddef>
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

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_RUN_PROCESS_H_
