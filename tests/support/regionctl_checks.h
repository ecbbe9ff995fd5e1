// Checks of a finished regionctl process, shared by the regionctl tests.
#ifndef REGIONSTORE_TESTS_SUPPORT_REGIONCTL_CHECKS_H_
#define REGIONSTORE_TESTS_SUPPORT_REGIONCTL_CHECKS_H_

#include <catch2/catch.hpp>

#include <string>

#include "support/run_process.h"

namespace regionstore::testing {

// A successful run: exit 0 and nothing on stderr but warnings (create warns
// when the build tree is on a copy-on-write filesystem).
inline void RequireSuccess(const ProcessResult& result) {
  INFO("stderr: " << result.stderr_bytes);
  REQUIRE(result.term_signal == 0);
  REQUIRE(result.exit_code == 0);
  for (const std::string& line : result.StderrLines()) {
    REQUIRE(line.rfind("regionctl: warning: ", 0) == 0);
  }
}

// A failed run: the expected exit code, nothing on stdout and exactly one
// line on stderr, "regionctl: ...".
inline void RequireFailure(const ProcessResult& result, int expected_exit_code) {
  INFO("stderr: " << result.stderr_bytes);
  REQUIRE(result.term_signal == 0);
  REQUIRE(result.exit_code == expected_exit_code);
  REQUIRE(result.stdout_bytes.empty());
  REQUIRE(result.StderrLines().size() == 1);
  REQUIRE(result.stderr_bytes.back() == '\n');
  REQUIRE(result.stderr_bytes.rfind("regionctl: ", 0) == 0);
}

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_REGIONCTL_CHECKS_H_
