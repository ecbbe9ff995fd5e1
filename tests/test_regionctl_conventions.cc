// Shell conventions of regionctl: '-' as a FILE means the standard stream
// on every verb that reads or writes one, -V is --version, and tables pad
// region names by the columns a terminal gives them, not by their bytes.
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/regionctl_runner.h"
#include "support/temp_dir.h"

#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_CASE(
    "regionctl: '-' for --input is standard input and for --output standard output, "
    "and no file named '-' appears",
    "[regionctl]") {
  TempDir dir;
  const std::string store = dir.File("s.rs");
  REQUIRE_FALSE(std::filesystem::exists("-"));
  RequireSuccess(Regionctl(
      {"create", store, "--size", "64KiB", "--checkpoint", "a:1KiB", "--checkpoint", "b:1KiB"}));

  RequireSuccess(Regionctl({"commit", store, "a", "--input", "-"}, TextBytes("from stdin\n")));
  ProcessResult loaded = Regionctl({"load", store, "a", "--output", "-"});
  RequireSuccess(loaded);
  CHECK(loaded.stdout_bytes == "from stdin\n");

  RequireSuccess(Regionctl({"import", store, "b", "--input", "-"}, TextBytes("imported")));
  CHECK(Regionctl({"load", store, "b"}).stdout_bytes == "imported");

  RequireSuccess(
      Regionctl({"write", store, "--offset", "100", "--input", "-"}, TextBytes("raw bytes")));
  ProcessResult read =
      Regionctl({"read", store, "--offset", "100", "--length", "9", "--output", "-"});
  RequireSuccess(read);
  CHECK(read.stdout_bytes == "raw bytes");

  // export replaces a file atomically: standard output cannot be one, so
  // it says what to use instead, and writes nothing anywhere.
  ProcessResult exported = Regionctl({"export", store, "a", "--output", "-"});
  RequireFailure(exported, kExitUsage);
  CHECK(exported.stderr_bytes.find("regionctl load") != std::string::npos);

  CHECK_FALSE(std::filesystem::exists("-"));
  CHECK(dir.List() == std::vector<std::string>{"s.rs", "s.rs.shm"});
}

TEST_CASE("regionctl: -V prints the version as --version does", "[regionctl]") {
  ProcessResult shorter = Regionctl({"-V"});
  RequireSuccess(shorter);
  CHECK(shorter.stdout_bytes == Regionctl({"--version"}).stdout_bytes);
  CHECK(shorter.stdout_bytes.rfind("regionctl ", 0) == 0);
}

TEST_CASE("regionctl stat: columns line up for region names of 1- and 2-column characters",
          "[regionctl]") {
  TempDir dir;
  const std::string store = dir.File("s.rs");
  RequireSuccess(Regionctl({"create", store, "--size", "0", "--checkpoint", "ascii:1KiB",
                            "--checkpoint", "état:1KiB", "--checkpoint", "状态:1KiB"}));
  ProcessResult stat = Regionctl({"stat", store});
  RequireSuccess(stat);
  // Each region row's capacity column, "1.0 KiB", starts at the same
  // display column: the name cell before it is padded by display width.
  std::vector<size_t> columns;
  for (const std::string& line : Lines(stat.stdout_bytes)) {
    if (line.rfind("'", 0) != 0) continue;  // region rows start with the quoted name
    const size_t at = line.find("1.0 KiB");
    REQUIRE(at != std::string::npos);
    const std::string before = line.substr(0, at);
    size_t width = 0;
    for (size_t i = 0; i < before.size(); ++i) {
      const auto byte = static_cast<unsigned char>(before[i]);
      if ((byte & 0xC0) == 0x80) continue;  // a continuation byte
      // The test's own names: é is one column, 状 and 态 two.
      width += byte >= 0xE0 ? 2 : 1;
    }
    columns.push_back(width);
  }
  REQUIRE(columns.size() == 3);
  CHECK(columns[0] == columns[1]);
  CHECK(columns[1] == columns[2]);
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
