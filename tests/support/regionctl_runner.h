// regionctl run as a separate process, the way users and scripts run it, and
// the checks every regionctl test makes of a finished run. The tool's path is
// REGIONCTL_PATH, which tests/CMakeLists.txt defines only when it is built;
// the tests that use this header are compiled out without it.
#ifndef REGIONSTORE_TESTS_SUPPORT_REGIONCTL_RUNNER_H_
#define REGIONSTORE_TESTS_SUPPORT_REGIONCTL_RUNNER_H_

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/process.h"

namespace regionstore::testing {

// regionctl's exit codes: a fixed contract other tools rely on. Compared
// with ProcessResult::exit_code as ints.
enum RegionctlExit : int {
  kExitSuccess = 0,
  kExitFailure = 1,
  kExitUsage = 2,
  kExitInvalidStore = 3,
  kExitBusy = 4,
  kExitTimedOut = 5,
  kExitTornCommit = 6,
  kExitChangedReportLost = 7,
};

// Runs regionctl with `args`, feeding `stdin_bytes` (or /dev/null) to its
// standard input, and waits for it (RunProcess).
ProcessResult Regionctl(const std::vector<std::string>& args,
                        std::optional<std::span<const std::byte>> stdin_bytes = std::nullopt);
// The bytes of `text`, for Regionctl's standard input.
std::span<const std::byte> TextBytes(std::string_view text);

// Starts regionctl with `args` in a child, its standard streams on
// /dev/null and SIGINT, SIGTERM and SIGHUP at their defaults, and returns the
// child's pid without waiting. `in_child`, when given, runs in the child
// before the exec; when it returns false the child exits 125.
pid_t StartRegionctl(const std::vector<std::string>& args,
                     const std::function<bool()>& in_child = {});

// "regionctl 'arg' 'arg'...": the command line, for INFO.
std::string Describe(const std::vector<std::string>& args);

// A successful run: exit 0 and nothing on stderr but warnings (create warns
// when the build tree is on a copy-on-write filesystem).
void RequireSuccess(const ProcessResult& result);

// A failed run: the expected exit code, nothing on stdout and exactly one
// line on stderr, "regionctl: ...".
void RequireFailure(const ProcessResult& result, int expected_exit_code);

// stdout parsed as JSON (REQUIREs it parses and is an object).
nlohmann::json ParseJson(const ProcessResult& result);
// A successful run's stdout parsed as JSON.
nlohmann::json JsonOf(const std::vector<std::string>& args);
// `regionctl inspect PATH --json`, parsed.
nlohmann::json InspectJson(const std::string& path);

// The commands `regionctl --help` lists under "Subcommands:".
std::set<std::string> RegionctlCommands();

// scripts/check-json-schema.py over (verb, file) pairs, each file holding one
// document of `regionctl VERB ... --json`, against docs/schemas: strictly (a
// key the schema does not name fails) unless `strict` is false.
ProcessResult ValidateJsonFiles(const std::vector<std::pair<std::string, std::string>>& documents,
                                bool strict = true);
// `result`'s stdout, a document of `regionctl VERB ... --json`, validates
// strictly against VERB's schema.
void RequireMatchesSchema(const std::string& verb, const ProcessResult& result);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_REGIONCTL_RUNNER_H_
