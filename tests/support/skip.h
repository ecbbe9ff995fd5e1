// Skipping a case whose precondition is missing, without hiding it in CI.
//
// A case that cannot run here says so with SKIP_CASE("why") and returns:
// ctest reports it as skipped (SKIP_REGULAR_EXPRESSION "skipped:"). With
// CI=true in the environment, a skip whose reason is not listed in
// tests/skips-allowed.txt fails the case instead: in CI a missing loop
// device or tool is a broken runner, and a skip would make a check that
// never ran look like one that passed.
#ifndef REGIONSTORE_TESTS_SUPPORT_SKIP_H_
#define REGIONSTORE_TESTS_SUPPORT_SKIP_H_

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace regionstore::testing {

// Whether CI=true is set.
bool InCi();

// The allow-list's entries, parsed from `text` (tests/skips-allowed.txt's
// format: "TEXT | WHY" per line, '#' comments, blank lines). An entry
// without a WHY is an error, returned in `error`.
struct SkipAllowance {
  std::string text;
  std::string why;
};
std::vector<SkipAllowance> ParseSkipAllowList(std::string_view text, std::string& error);

// Empty when a skip for `reason` may be reported as a skip here; otherwise
// the message the case fails with (in CI, and `reason` matches no entry of
// the allow-list file, or the file cannot be read or parsed).
std::string SkipRefusal(const std::string& reason);

// WARNs "skipped: <reason>", or FAILs with SkipRefusal's message.
void ReportSkip(const std::string& reason);

}  // namespace regionstore::testing

// SKIP_CASE("no loop device: " << why); then return from the case.
#define SKIP_CASE(message)                                              \
  do {                                                                  \
    std::ostringstream regionstore_skip_reason_;                        \
    regionstore_skip_reason_ << message;                                \
    ::regionstore::testing::ReportSkip(regionstore_skip_reason_.str()); \
  } while (false)

#endif  // REGIONSTORE_TESTS_SUPPORT_SKIP_H_
