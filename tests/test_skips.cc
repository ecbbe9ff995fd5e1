// A skip must not hide a check in CI (support/skip.h, tests/skips-allowed.txt).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/process.h"
#include "support/skip.h"

namespace regionstore::testing {
namespace {

// Run only by the case below, as a child process: a case whose
// precondition is "missing".
TEST_CASE("Skip probe: a case whose precondition is missing", "[.skip-probe]") {
  SKIP_CASE("a precondition this probe fakes is missing");
}

ProcessResult RunProbe(const std::string& ci) {
  // /usr/bin/env sets or clears CI for the child only.
  std::vector<std::string> args =
      ci.empty() ? std::vector<std::string>{"-u", "CI"} : std::vector<std::string>{"CI=" + ci};
  args.push_back(std::filesystem::read_symlink("/proc/self/exe").string());
  args.push_back("[.skip-probe]");
  return RunProcess("/usr/bin/env", args);
}

TEST_CASE("Under CI=true a skip that the allow-list does not name fails the case", "[skips]") {
  const ProcessResult outside = RunProbe("");
  INFO(outside.stdout_bytes << outside.stderr_bytes);
  CHECK(outside.exit_code == 0);
  CHECK(outside.stdout_bytes.find("skipped: a precondition this probe fakes is missing") !=
        std::string::npos);

  const ProcessResult in_ci = RunProbe("true");
  INFO(in_ci.stdout_bytes << in_ci.stderr_bytes);
  CHECK(in_ci.exit_code != 0);
  CHECK(in_ci.stdout_bytes.find("tests/skips-allowed.txt does not allow that skip") !=
        std::string::npos);
  CHECK(in_ci.stdout_bytes.find("skipped: a precondition") == std::string::npos);

  // Only "true" means CI, as CI services set it.
  const ProcessResult other = RunProbe("false");
  CHECK(other.exit_code == 0);
}

TEST_CASE("The skip allow-list is well formed, and an entry needs a reason", "[skips]") {
  std::ifstream in(REGIONSTORE_SKIPS_ALLOWED);
  REQUIRE(in);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::string error;
  const std::vector<SkipAllowance> entries = ParseSkipAllowList(text, error);
  CHECK(error.empty());
  for (const SkipAllowance& entry : entries) {
    CHECK_FALSE(entry.text.empty());
    CHECK(entry.why.size() >= 20);  // a reason, not a placeholder
  }

  error.clear();
  const std::vector<SkipAllowance> parsed =
      ParseSkipAllowList("# comment\n\n  no loop device | CI runners here have none \n", error);
  CHECK(error.empty());
  REQUIRE(parsed.size() == 1);
  CHECK(parsed[0].text == "no loop device");
  CHECK(parsed[0].why == "CI runners here have none");
  for (const char* bad : {"no reason given\n", "text | \n", " | why without text\n"}) {
    error.clear();
    CHECK(ParseSkipAllowList(bad, error).empty());
    CHECK(error.find("line 1") != std::string::npos);
  }
}

}  // namespace
}  // namespace regionstore::testing
