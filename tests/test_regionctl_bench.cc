// regionctl bench, with its shortening option so that no assertion depends on
// timing: the JSON object and its keys, the table and its recommendations,
// bad flags and a missing directory, and its --help.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "regionstore/regionstore.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/regionctl_stores.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH only when the tool is built.
#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

// bench's shortening option: five 1 ms batches per arm, so the run costs a
// few updates per arm (mostly flushes) and no assertion depends on timing.
const std::vector<std::string> kQuickBench = {"bench", "--seconds", "0.005"};

std::vector<std::string> BenchArgs(const std::string& bench_dir,
                                   std::vector<std::string> extra = {}) {
  std::vector<std::string> args = kQuickBench;
  args.push_back("--dir");
  args.push_back(bench_dir);
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST_CASE("regionctl bench --json prints one object with the documented keys and removes its files",
          "[regionctl]") {
  TempDir dir;
  const ProcessResult result = Regionctl(BenchArgs(dir.path().string(), {"--json"}));
  RequireSuccess(result);
  const nlohmann::json document = ParseJson(result);

  std::vector<std::string> keys;
  for (const auto& item : document.items()) keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<std::string>{"filesystem", "kernel", "offset", "results",
                                         "schema_version", "store_size", "update_size"});
  REQUIRE(document["filesystem"].is_string());
  CHECK_FALSE(document["filesystem"].get<std::string>().empty());
  REQUIRE(document["kernel"].is_string());
  CHECK_FALSE(document["kernel"].get<std::string>().empty());
  // 2 since the cleaned variant joined the closed list of variants.
  CHECK(document["schema_version"] == 2);
  CHECK(document["store_size"] == 16 * kMiB);
  CHECK(document["update_size"] == kMiB);
  CHECK(document["offset"] == 2 * kMiB);

  const std::vector<std::string> allowed_arms = {"pwrite",
                                                 "pwrite_fdatasync",
                                                 "msync_sync",
                                                 "msync_async",
                                                 "none",
                                                 "commit_none",
                                                 "commit_async",
                                                 "commit_sync",
                                                 "commit_pwrite_fdatasync",
                                                 "commit_batch_sync",
                                                 "commit_batch_pwrite_fdatasync"};
  const nlohmann::json& results = document["results"];
  REQUIRE(results.is_array());
  // arm/variant/size triples seen, to check that the lab and the commits ran;
  // batches as arm/variant/regions x size.
  std::vector<std::string> seen;
  for (const nlohmann::json& entry : results) {
    INFO(entry.dump());
    REQUIRE(entry.is_object());
    CHECK(entry.size() == 6);
    REQUIRE(entry["arm"].is_string());
    REQUIRE(entry["variant"].is_string());
    REQUIRE(entry["regions"].is_number_unsigned());
    REQUIRE(entry["size"].is_number_unsigned());
    REQUIRE(entry["mib_per_s"].is_number());
    REQUIRE(entry["ops_per_s"].is_number());
    const std::string arm = entry["arm"];
    const std::string variant = entry["variant"];
    CHECK(std::find(allowed_arms.begin(), allowed_arms.end(), arm) != allowed_arms.end());
    CHECK((variant == "oneshot" || variant == "longlived" || variant == "cleaned"));
    CHECK(entry["size"].get<uint64_t>() > 0);
    CHECK(entry["mib_per_s"].get<double>() > 0);
    CHECK(entry["ops_per_s"].get<double>() > 0);
    const uint64_t regions = entry["regions"];
    const uint64_t size = entry["size"];
    // ops_per_s counts updates (a batch is one); mib_per_s every member's bytes.
    CHECK(entry["ops_per_s"].get<double>() ==
          Approx(entry["mib_per_s"].get<double>() * static_cast<double>(kMiB) /
                 static_cast<double>(regions * size)));
    if (arm.starts_with("commit_batch_")) {
      seen.push_back(arm + "/" + variant + "/" + std::to_string(regions) + "x" +
                     std::to_string(size));
    } else {
      CHECK(regions == 1);
      seen.push_back(arm + "/" + variant + "/" + std::to_string(size));
    }
  }
  const std::string mib = std::to_string(kMiB);
  for (const std::string arm :
       {"pwrite", "pwrite_fdatasync", "msync_sync", "msync_async", "none"}) {
    for (const std::string variant : {"longlived", "oneshot"}) {
      const std::string key = arm + "/" + variant + "/" + mib;
      INFO(key);
      CHECK(std::count(seen.begin(), seen.end(), key) == 1);
    }
  }
  for (const std::string arm :
       {"commit_none", "commit_async", "commit_sync", "commit_pwrite_fdatasync"}) {
    for (const std::string& size : {std::string("4096"), mib}) {
      const std::string key = arm + "/longlived/" + size;
      INFO(key);
      CHECK(std::count(seen.begin(), seen.end(), key) == 1);
    }
  }
  for (const std::string arm : {"commit_batch_sync", "commit_batch_pwrite_fdatasync"}) {
    for (const std::string shape : {"16x4096", "4x65536"}) {
      const std::string key = arm + "/longlived/" + shape;
      INFO(key);
      CHECK(std::count(seen.begin(), seen.end(), key) == 1);
    }
  }
  // The not durable 1 MiB arms, into pages written back before each update.
  for (const std::string arm : {"pwrite", "msync_async", "none", "commit_none", "commit_async"}) {
    const std::string key = arm + "/cleaned/" + mib;
    INFO(key);
    CHECK(std::count(seen.begin(), seen.end(), key) == 1);
  }
  CHECK(seen.size() == 32);
  CHECK(dir.List().empty());
}

TEST_CASE("regionctl bench prints a table and ends with its recommendations", "[regionctl]") {
  TempDir dir;
  const ProcessResult result = Regionctl(BenchArgs(dir.path().string()));
  RequireSuccess(result);
  const std::string& out = result.stdout_bytes;
  CHECK_THAT(out, Catch::Contains("arm ") && Catch::Contains("MiB/s") &&
                      Catch::Contains("msync_sync") && Catch::Contains("oneshot") &&
                      Catch::Contains("commit_pwrite_fdatasync") &&
                      Catch::Contains("commit_batch_sync"));
  REQUIRE_FALSE(out.empty());
  REQUIRE(out.back() == '\n');
  // The last four lines: durable small, durable large, undurable into cleaned
  // pages, undurable.
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end = out.find('\n'); end != std::string::npos; end = out.find('\n', start)) {
    lines.push_back(out.substr(start, end - start));
    start = end + 1;
  }
  REQUIRE(lines.size() > 4);
  const size_t count = lines.size();
  CHECK_THAT(lines[count - 4],
             Catch::StartsWith("recommendation: durable, small updates (4 KiB): "));
  CHECK_THAT(lines[count - 3],
             Catch::StartsWith("recommendation: durable, large updates (1 MiB): "));
  CHECK_THAT(lines[count - 2],
             Catch::StartsWith("recommendation: undurable, pages written back between updates"));
  CHECK_THAT(lines[count - 1], Catch::StartsWith("recommendation: undurable "));
  CHECK(dir.List().empty());
}

TEST_CASE("regionctl bench refuses bad flags with exit 2 and a missing directory with exit 1",
          "[regionctl]") {
  TempDir dir;
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"bench", "--bogus"},
                                             {"bench", "--seconds", "0"},
                                             {"bench", "--seconds", "fast"},
                                             {"bench", "--dir"},
                                             {"bench", "stray-argument"}}) {
    INFO(Describe(args));
    RequireFailure(Regionctl(args), kExitUsage);
  }
  const std::string missing = dir.File("missing-dir");
  ProcessResult result = Regionctl(BenchArgs(missing));
  RequireFailure(result, kExitFailure);
  CHECK_THAT(result.stderr_bytes, Catch::Contains(missing));

  // A file where a directory belongs is refused before anything is created.
  const std::string file = dir.File("plain-file");
  WriteWholeFile(file, PatternBytes(10, 3));
  result = Regionctl(BenchArgs(file));
  RequireFailure(result, kExitFailure);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("not a directory"));
  CHECK(dir.List() == std::vector<std::string>{"plain-file"});
}

TEST_CASE("regionctl bench --help documents the quick option and the JSON keys", "[regionctl]") {
  const ProcessResult result = Regionctl({"bench", "--help"});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::Contains("Usage: regionctl bench") &&
                                      Catch::Contains("--seconds") && Catch::Contains("--dir") &&
                                      Catch::Contains("--json") && Catch::Contains("mib_per_s") &&
                                      Catch::Contains("Example:\n  "));
  const ProcessResult top = Regionctl({"--help"});
  RequireSuccess(top);
  CHECK_THAT(top.stdout_bytes, Catch::Contains("bench"));
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
