// What the documentation shows a default store doing is what one does: the
// session in docs/REGIONCTL.md is run command by command and its output
// compared line by line, and the sizes docs/FORMAT.md gives for a default
// store are the sizes Store::Create makes. When an output changes, these
// fail, naming the line; the fix is to paste what the tool now prints.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "format.h"
#include "regionstore/regionstore.h"
#include "support/files.h"
#include "support/process.h"
#include "support/regionctl_runner.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

const std::string kSource = REGIONSTORE_SOURCE_DIR;

std::string ReadDoc(const std::string& relative) {
  const std::vector<std::byte> bytes = ReadWholeFile(kSource + "/" + relative);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// What legitimately differs between two runs of the same session: wall-clock
// times ("committed 1796...84 (2026-12-07T07:59:43Z)") and ages ("12 s ago").
// By hand rather than with <regex>, which GCC 12 warns about under ASan.
std::string Normalized(const std::string& line) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    if (line.compare(i, 10, "committed ") == 0 && i + 10 < line.size() && IsDigit(line[i + 10])) {
      size_t end = i + 10;
      while (end < line.size() && IsDigit(line[end])) ++end;
      const size_t close = line.find("Z)", end);
      if (line.compare(end, 2, " (") == 0 && close != std::string::npos) {
        out += "committed <time>";
        i = close + 2;
        continue;
      }
    }
    if (IsDigit(line[i]) && (i == 0 || !IsDigit(line[i - 1]))) {
      size_t end = i;
      while (end < line.size() && IsDigit(line[end])) ++end;
      if (line.compare(end, 6, " s ago") == 0) {
        out += "<n>";
        i = end;
        continue;
      }
    }
    out += line[i++];
  }
  return out;
}

std::string WithCommas(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

struct SessionStep {
  std::string command;
  std::vector<std::string> output;
};

// The ```console block under `heading`: "$ " lines and what follows each.
std::vector<SessionStep> Session(const std::string& doc, const std::string& heading) {
  const size_t section = doc.find("\n" + heading + "\n");
  REQUIRE(section != std::string::npos);
  const size_t open = doc.find("```console\n", section);
  REQUIRE(open != std::string::npos);
  const size_t close = doc.find("\n```", open + 11);
  REQUIRE(close != std::string::npos);
  std::vector<SessionStep> steps;
  for (const std::string& line : Lines(doc.substr(open + 11, close - open - 11))) {
    if (line.rfind("$ ", 0) == 0) {
      steps.push_back({line.substr(2), {}});
    } else {
      REQUIRE_FALSE(steps.empty());
      steps.back().output.push_back(line);
    }
  }
  return steps;
}

TEST_CASE("The regionctl session in docs/REGIONCTL.md prints what the documentation shows",
          "[docs]") {
  const std::string doc = ReadDoc("docs/REGIONCTL.md");
  const std::vector<SessionStep> steps = Session(doc, "## A session");
  REQUIRE(steps.size() >= 10);

  // The session names the version that printed it.
  const ProcessResult version = Regionctl({"--version"});
  RequireSuccess(version);
  std::string printed = version.stdout_bytes;
  while (!printed.empty() && printed.back() == '\n') printed.pop_back();
  CHECK(doc.find("A session (`" + printed + "`") != std::string::npos);

  TempDir dir;
  const std::string bin = std::filesystem::path(REGIONCTL_PATH).parent_path().string();
  for (const SessionStep& step : steps) {
    // One shell per command, in the scratch directory, regionctl first on
    // PATH; stderr into stdout as a terminal would interleave them.
    const std::string script = "cd '" + dir.path().string() + "' && PATH='" + bin +
                               "':\"$PATH\" && exec 2>&1 && " + step.command;
    const ProcessResult run = RunProcess("/bin/sh", {"-c", script});
    INFO("$ " << step.command << "\nprinted:\n" << run.stdout_bytes);
    // Warnings about the filesystem under the scratch directory (btrfs:
    // NOCOW) are the machine's, not the session's: the session is on ext4.
    std::vector<std::string> got;
    for (const std::string& line : Lines(run.stdout_bytes)) {
      if (line.rfind("regionctl: warning: ", 0) != 0) got.push_back(line);
    }
    CHECK(got.size() == step.output.size());
    for (size_t i = 0; i < std::min(got.size(), step.output.size()); ++i) {
      INFO("line " << i + 1 << " of its output");
      CHECK(Normalized(got[i]) == Normalized(step.output[i]));
    }
  }
}

TEST_CASE("The sizes docs/FORMAT.md gives for a default store are what Store::Create makes",
          "[docs][format]") {
  TempDir dir;
  const std::string path = (dir.path() / "many.rs").string();
  // 10,000 regions of 100 bytes and the smallest data area, in the defaults
  // otherwise: protocol 2, its 4 MiB journal, compact slots.
  CreateOptions options;
  for (int i = 0; i < 10000; ++i) {
    std::string name = "r";  // not "r" + ...: GCC 12's false -Wstringop-overflow
    name += std::to_string(i);
    options.checkpoints.push_back({name, 100});
  }
  REQUIRE(Store::Create(path, 0, options).ok());
  const Result<StoreInfo> info = ReadStoreInfo(path);
  REQUIRE(info.ok());
  const uint64_t file_size = std::filesystem::file_size(path);

  // The layout function every create uses, checked at this store, then asked
  // where the data area starts for other region counts.
  const uint64_t journal = info->journal_size;
  CHECK(journal == 4 * format::kMiB);
  CHECK(format::DataOffsetFor(10000, true, journal) == info->data_offset);
  auto last_count_at = [&](uint64_t data_offset) {
    uint64_t count = 0;
    while (format::DataOffsetFor(count + 1, true, journal) <= data_offset) ++count;
    return count;
  };
  const uint64_t at_5 = last_count_at(5 * format::kMiB);
  const uint64_t at_6 = last_count_at(6 * format::kMiB);
  CHECK(format::DataOffsetFor(0, true, journal) == 5 * format::kMiB);

  std::string expected =
      "In a default store (protocol 2, a 4 MiB journal) the data area starts at 5 MiB for up to ";
  expected += WithCommas(at_5);
  expected += " regions and at 6 MiB for up to ";
  expected += WithCommas(at_6);
  expected += "; 10,000 regions of 100 bytes and an empty data area make a file of ";
  expected += WithCommas(file_size);
  expected += " bytes.";
  const std::string format_md = ReadDoc("docs/FORMAT.md");
  INFO("docs/FORMAT.md should say:\n" << expected);
  // The doc may wrap the sentence: compare with line breaks as spaces.
  std::string flat = format_md;
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  CHECK(flat.find(expected) != std::string::npos);
}

}  // namespace
}  // namespace regionstore::testing
