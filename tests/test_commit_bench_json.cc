// The commit benchmark's batch and wait sections (bench/batches_bench.cc,
// bench/wait_bench.cc), each run once with one round: the --json keys
// bench/report.py and the README rely on, every arm present, and what the
// io seam counted per batch. "ours" is a store made with Store::Create's
// defaults; protocol 1's arms carry its name. No timing is checked: only that
// each figure is there and positive.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines it only when the benchmarks are built.
#ifdef REGIONSTORE_COMMIT_BENCH_PATH

namespace regionstore::testing {
namespace {

std::vector<std::string> KeysOf(const nlohmann::json& object) {
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Runs the benchmark's section `only` once (--quick, one round) in `dir`,
// checks that it printed `heading`, and returns its --json document.
nlohmann::json RunSection(const TempDir& dir, const std::string& only, const std::string& heading) {
  const std::string json_path = dir.File(only + ".json");
  const ProcessResult result = RunProcess(
      "/usr/bin/env", {"REGIONSTORE_BENCH_DIR=" + dir.File("files"), REGIONSTORE_COMMIT_BENCH_PATH,
                       "--quick", "--rounds=1", "--only=" + only, "--json=" + json_path});
  INFO("stderr: " << result.stderr_bytes);
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.stdout_bytes, Catch::Contains(heading));
  std::ifstream in(json_path);
  nlohmann::json document;
  REQUIRE_NOTHROW(document = nlohmann::json::parse(in));
  return document;
}

TEST_CASE("the commit benchmark's batch section writes every arm and the documented JSON keys",
          "[bench][long]") {
  TempDir dir;
  const nlohmann::json document = RunSection(dir, "batches", "## 6. Batches");
  const nlohmann::json& shapes = document["batches"];
  REQUIRE(shapes.is_array());
  REQUIRE(shapes.size() == 2);
  const uint64_t header_unit = 4096;
  const std::vector<std::pair<uint64_t, uint64_t>> expected_shapes = {{16, 4096}, {4, 65536}};
  for (size_t s = 0; s < shapes.size(); ++s) {
    const nlohmann::json& shape = shapes[s];
    INFO(shape.dump());
    CHECK(KeysOf(shape) ==
          std::vector<std::string>{"arms", "floor_over_ours", "floor_over_protocol1",
                                   "floor_protocol1_extents_over_protocol1", "lmdb_over_ours",
                                   "ours", "protocol1", "regions", "singles", "singles_over_ours",
                                   "size", "sqlite_over_ours"});
    const uint64_t regions = shape["regions"];
    const uint64_t size = shape["size"];
    CHECK(std::pair(regions, size) == expected_shapes[s]);
    for (const char* ratio : {"floor_over_ours", "floor_over_protocol1",
                              "floor_protocol1_extents_over_protocol1", "singles_over_ours"}) {
      CHECK(KeysOf(shape[ratio]) == std::vector<std::string>{"high", "low", "median"});
      CHECK(shape[ratio]["median"].get<double>() > 0);
    }
    std::vector<std::string> arms;
    for (const nlohmann::json& arm : shape["arms"]) {
      INFO(arm.dump());
      CHECK(KeysOf(arm) == std::vector<std::string>{
                               "arm", "device_flushes", "device_write_kib", "device_write_requests",
                               "median_ns", "name", "ops_per_s", "regions", "regions_per_s",
                               "seam_barriers", "seam_write_bytes", "seam_write_calls", "size"});
      const std::string name = arm["arm"];
      arms.push_back(name);
      CHECK(arm["regions"] == regions);
      CHECK(arm["size"] == size);
      // ops_per_s counts batches; regions_per_s every member.
      CHECK(arm["ops_per_s"].get<double>() == Approx(1e9 / arm["median_ns"].get<double>()));
      CHECK(arm["regions_per_s"].get<double>() ==
            Approx(arm["ops_per_s"].get<double>() * static_cast<double>(regions)));
      const bool batch = name.starts_with("commit_batch_");
      const bool singles = name.starts_with("singles_");
      if (batch || singles) {
        // Each member's payload behind its 4 KiB header unit, at least.
        CHECK(arm["seam_write_bytes"].get<double>() >=
              static_cast<double>(regions * (size + header_unit)));
        // One barrier per batch; one per commit for the singles. A batch
        // of the default store (protocol 2) has its journal record's
        // RWF_DSYNC write as its barrier; a full journal adds one fdatasync
        // (at least 14 records of these shapes fit in the default 4 MiB),
        // and the batch log's watermark two every 32 batches
        // (MakeLogUnitReusable): in a short run one of those can fall among
        // few batches, so the bound is loose, but one barrier per member
        // (4 or 16) fails it. Protocol 1's batches: exactly one.
        if (batch && !name.ends_with("_protocol1")) {
          CHECK(arm["seam_barriers"].get<double>() >= 1.0);
          CHECK(arm["seam_barriers"].get<double>() < 1.5);
        } else {
          CHECK(arm["seam_barriers"].get<double>() ==
                Approx(batch ? 1.0 : static_cast<double>(regions)));
        }
      } else {
        CHECK(arm["seam_write_bytes"].is_null());
        CHECK(arm["seam_barriers"].is_null());
      }
    }
    std::sort(arms.begin(), arms.end());
    std::vector<std::string> expected = {"commit_batch_pwrite_fdatasync",
                                         "commit_batch_pwrite_fdatasync_protocol1",
                                         "commit_batch_sync",
                                         "commit_batch_sync_protocol1",
                                         "floor",
                                         "floor_protocol1_extents",
                                         "singles_pwrite_fdatasync",
                                         "singles_sync"};
    // LMDB and SQLite: only when the benchmark was built with them, and
    // then with their ratios.
    const bool peers = !shape["lmdb_over_ours"].is_null();
    CHECK(peers == !shape["sqlite_over_ours"].is_null());
    if (peers) {
      expected.push_back("lmdb");
      expected.push_back("sqlite");
      std::sort(expected.begin(), expected.end());
    }
    CHECK(arms == expected);
    CHECK(std::find(arms.begin(), arms.end(), shape["ours"].get<std::string>()) != arms.end());
    CHECK(std::find(arms.begin(), arms.end(), shape["singles"].get<std::string>()) != arms.end());
    // "ours" is the default store's batch arm, never protocol 1's.
    CHECK(shape["ours"].get<std::string>().starts_with("commit_batch_"));
    CHECK_FALSE(shape["ours"].get<std::string>().ends_with("_protocol1"));
    CHECK(shape["protocol1"].get<std::string>().ends_with("_protocol1"));
  }
}

TEST_CASE(
    "the commit benchmark's commit section measures the default store as ours and "
    "protocol 1 beside it",
    "[bench][long]") {
  TempDir dir;
  const nlohmann::json document = RunSection(dir, "ratio", "## 1. Commit vs the same syscalls");
  // Store::Create's default protocol: what every table calls ours.
  CHECK(document["ours_protocol"] == 2);
  const nlohmann::json& rows = document["commits"];
  REQUIRE(rows.size() == 12);  // 4 modes x 3 sizes
  for (const nlohmann::json& row : rows) {
    INFO(row.dump());
    CHECK(KeysOf(row) ==
          std::vector<std::string>{"arm", "clean_commit_ns", "clean_commit_over_raw",
                                   "clean_raw_ns", "commit_device_kib", "commit_device_requests",
                                   "commit_ns", "commit_over_raw", "commit_protocol1_ns", "mode",
                                   "protocol1_device_kib", "protocol1_device_requests",
                                   "protocol1_over_raw", "raw", "raw_ns", "size"});
    CHECK(row["commit_ns"].get<double>() > 0);
    CHECK(row["commit_protocol1_ns"].get<double>() > 0);
    CHECK(row["protocol1_over_raw"]["median"].get<double>() > 0);
    // The clean-pages regime, for the modes without a barrier of their own.
    const std::string mode = row["mode"];
    if (mode == "kNone" || mode == "kAsync") {
      CHECK(row["clean_commit_ns"].get<double>() > 0);
      CHECK(row["clean_raw_ns"].get<double>() > 0);
      CHECK(row["clean_commit_over_raw"]["median"].get<double>() > 0);
    } else {
      CHECK(row["clean_commit_ns"].is_null());
    }
  }
}

TEST_CASE("the commit benchmark's wait section measures every reader and writes its JSON keys",
          "[bench][wait][long]") {
  TempDir dir;
  const nlohmann::json document = RunSection(dir, "wait", "## 8. Readers that wait");
  const nlohmann::json& wait = document["wait"];
  INFO(wait.dump());
  CHECK(KeysOf(wait) == std::vector<std::string>{"readers", "wake_cost"});
  CHECK(KeysOf(wait["wake_cost"]) == std::vector<std::string>{"ours_ns", "ours_ratio",
                                                              "protocol1_no_wake_ns",
                                                              "protocol1_ns", "protocol1_ratio"});
  CHECK(wait["wake_cost"]["ours_ns"].get<double>() > 0);
  CHECK(wait["wake_cost"]["protocol1_ns"].get<double>() > 0);
  CHECK(wait["wake_cost"]["protocol1_no_wake_ns"].get<double>() > 0);
  const nlohmann::json& readers = wait["readers"];
  REQUIRE(readers.size() == 5);
  std::vector<std::string> names;
  for (const nlohmann::json& reader : readers) {
    CHECK(KeysOf(reader) ==
          std::vector<std::string>{"commits", "cpu_fraction", "p50_ns", "p99_ns", "reader"});
    // --quick, one round: 20 commits per reader, each seen by it.
    CHECK(reader["commits"] == 20);
    CHECK(reader["p50_ns"].is_number());
    CHECK(reader["p99_ns"].get<double>() >= reader["p50_ns"].get<double>());
    CHECK(reader["cpu_fraction"].get<double>() >= 0);
    names.push_back(reader["reader"]);
  }
  CHECK(names == std::vector<std::string>{"WaitForNewer", "WaitForNewer, sidecar read-only",
                                          "Load every 1 ms", "Load every 100 µs",
                                          "WaitForNewer, protocol 1 (futex)"});
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONSTORE_COMMIT_BENCH_PATH
