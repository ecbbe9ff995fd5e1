// Bad input to the newer verbs and calls: each a clear error with its
// documented exit code (or status), and nothing changed or written.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "batch.h"
#include "format.h"
#include "regionstore/store.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/regionctl_stores.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

// A store with regions a and b (4 KiB each) and a batch log, each region
// holding generation 1 ("A1", "B1").
std::string TwoRegionStore(const TempDir& dir) {
  const std::string path = dir.File("store.rgn");
  RequireSuccess(Regionctl({"create", path, "--size", "1MiB", "--checkpoint", "a:4KiB",
                            "--checkpoint", "b:4KiB", "--batch-log"}));
  RequireSuccess(
      Regionctl({"commit", path, "--set", "a=-", "--durability", "sync"}, TextBytes("A1")));
  RequireSuccess(
      Regionctl({"commit", path, "--set", "b=-", "--durability", "sync"}, TextBytes("B1")));
  return path;
}

std::vector<std::byte> Bytes(std::string_view text) {
  const std::span<const std::byte> bytes = TextBytes(text);
  return {bytes.begin(), bytes.end()};
}

void RequireShortUsageError(const ProcessResult& result, const std::string& path) {
  RequireFailure(result, kExitUsage);
  // One line, short: no 309-digit DBL_MAX (the line names the store).
  CHECK(result.stderr_bytes.size() < 160 + path.size());
}

TEST_CASE("regionctl load --wait-newer-than refuses what is not a generation, with exit 2",
          "[regionctl][bad-input]") {
  TempDir dir;
  const std::string path = TwoRegionStore(dir);
  for (const std::string bad : {"-1", "-5", "18446744073709551616", "99999999999999999999999",
                                "0x10", "9223372036854775808", "", " 3", "+3", "1.5"}) {
    INFO("--wait-newer-than '" << bad << "'");
    RequireShortUsageError(Regionctl({"load", path, "a", "--wait-newer-than=" + bad}), path);
  }
  // The largest generation is a generation: nothing is newer, so the wait times out.
  RequireFailure(Regionctl({"load", path, "a", "--wait-newer-than", "9223372036854775807",
                            "--timeout", "0.05"}),
                 kExitTimedOut);
  const ProcessResult ok = Regionctl({"load", path, "a", "--wait-newer-than", "0"});
  RequireSuccess(ok);
  CHECK(ok.stdout_bytes == "A1");
}

TEST_CASE("regionctl load --timeout refuses what is not a positive finite number, in one line",
          "[regionctl][bad-input]") {
  TempDir dir;
  const std::string path = TwoRegionStore(dir);
  for (const std::string bad :
       {"nan", "inf", "-inf", "-0", "0", "1e-400", "-1", "1e10", "abc", "1s", ""}) {
    INFO("--timeout '" << bad << "'");
    RequireShortUsageError(
        Regionctl({"load", path, "a", "--wait-newer-than", "1", "--timeout=" + bad}), path);
  }
  RequireFailure(Regionctl({"load", path, "a", "--wait-newer-than", "1", "--timeout", "0.02"}),
                 kExitTimedOut);
}

TEST_CASE("regionctl load --get checks every output before it writes any",
          "[regionctl][bad-input][load-set]") {
  TempDir dir;
  const std::string path = TwoRegionStore(dir);
  const std::string o1 = dir.File("o1");
  const std::string same = dir.File("same");

  SECTION("one file named for two regions") {
    RequireFailure(Regionctl({"load", path, "--get", "a=" + same, "--get", "b=" + same}),
                   kExitUsage);
    CHECK_FALSE(std::filesystem::exists(same));
    // By another spelling of the same file, and over an existing one.
    WriteWholeFile(same, Bytes("keep"));
    RequireFailure(Regionctl({"load", path, "--get", "a=" + same, "--get",
                              "b=" + dir.path().string() + "/./same"}),
                   kExitUsage);
    CHECK(ReadWholeFile(same) == Bytes("keep"));
  }
  SECTION("an output in a missing directory") {
    RequireFailure(
        Regionctl({"load", path, "--get", "a=" + o1, "--get", "b=" + dir.File("nodir/o2")}),
        kExitFailure);
    CHECK_FALSE(std::filesystem::exists(o1));
  }
  SECTION("an output that is the store") {
    RequireFailure(Regionctl({"load", path, "--get", "a=" + o1, "--get", "b=" + path}), kExitUsage);
    CHECK_FALSE(std::filesystem::exists(o1));
    CHECK(MustLoad(path, "b") == Bytes("B1"));
  }
  SECTION("--timeout without --wait-newer-than") {
    RequireFailure(Regionctl({"load", path, "--get", "a=" + o1, "--timeout", "1"}), kExitUsage);
    CHECK_FALSE(std::filesystem::exists(o1));
  }
  SECTION("a good set writes both") {
    const std::string o2 = dir.File("o2");
    RequireSuccess(Regionctl({"load", path, "--get", "a=" + o1, "--get", "b=" + o2}));
    CHECK(ReadWholeFile(o1) == Bytes("A1"));
    CHECK(ReadWholeFile(o2) == Bytes("B1"));
  }
}

TEST_CASE(
    "A refused Finish leaves nothing pending: the next Begin works, the old one commits "
    "nothing",
    "[in-place][bad-input]") {
  TempDir dir;
  const std::string path = TwoRegionStore(dir);
  Store store = MustOpen(path, OpenMode::kReadWrite);

  auto pending = store.BeginCommit("a", 100);
  REQUIRE(pending.ok());
  REQUIRE(pending->Append(TextBytes("A2")).ok());
  auto refused = pending->Finish(101, Durability::kSync);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK_FALSE(pending->pending());
  auto again = pending->Finish(2, Durability::kSync);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == StatusCode::kInvalidArgument);
  auto next = store.BeginCommit("a", 100);
  REQUIRE(next.ok());
  next->Abort();
  CHECK(MustLoad(store, "a") == Bytes("A1"));

  const std::array<BatchReservation, 2> members{{{"a", 100}, {"b", 100}}};
  auto batch = store.BeginBatch(members);
  REQUIRE(batch.ok());
  const std::array<uint64_t, 1> one_length{2};
  auto wrong = batch->Finish(one_length, Durability::kSync);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().code() == StatusCode::kInvalidArgument);
  CHECK_FALSE(batch->pending());
  const std::array<uint64_t, 2> too_long{2, 101};
  auto second = store.BeginBatch(members);
  REQUIRE(second.ok());
  REQUIRE_FALSE(second->Finish(too_long, Durability::kSync).ok());
  CHECK_FALSE(second->pending());
  auto third = store.BeginBatch(members);
  CHECK(third.ok());
  CHECK(MustLoad(store, "b") == Bytes("B1"));
}

TEST_CASE(
    "regionctl verify reports a damaged batch record as damage (exit 6), not as a kill's "
    "trace",
    "[regionctl][bad-input][batch]") {
  TempDir dir;
  const std::string path = TwoRegionStore(dir);
  WriteWholeFile(dir.File("a2"), Bytes("A2"));
  WriteWholeFile(dir.File("b2"), Bytes("B2"));
  RequireSuccess(Regionctl({"commit", path, "--set", "a=" + dir.File("a2"), "--set",
                            "b=" + dir.File("b2"), "--durability", "none"}));
  RequireSuccess(Regionctl({"verify", path}));
  const StoreInfo info = MustReadInfo(path);
  const std::optional<uint64_t> log = batch::LogOffset(info);
  REQUIRE(log.has_value());
  // The newest batch's record: the highest id whose unit decodes.
  std::vector<std::byte> file = ReadWholeFile(path);
  REQUIRE(file.size() > *log + batch::kUnits * batch::kUnitSize);
  uint64_t newest = 0;
  for (uint64_t id = 1; id <= batch::kUnits; ++id) {
    batch::UnitBytes unit;
    std::copy_n(file.begin() + static_cast<std::ptrdiff_t>(batch::UnitOffset(*log, id)),
                unit.size(), unit.begin());
    if (auto record = batch::DecodeRecord(unit); record && record->id == id) newest = id;
  }
  REQUIRE(newest > 0);
  file[batch::UnitOffset(*log, newest) + 20] ^= std::byte{0x40};
  WriteWholeFile(path, file);

  const ProcessResult damaged = Regionctl({"verify", path});
  RequireVerdict(damaged, kExitTornCommit);
  CHECK(damaged.stderr_bytes.find("fails its checksum") != std::string::npos);
  const ProcessResult verified = Regionctl({"verify", path, "--json"});
  RequireMatchesSchema("verify", verified);
  const nlohmann::json json = ParseJson(verified);
  CHECK(json["ok"] == false);
  CHECK(json["torn_batch_records"] == nlohmann::json::array({newest}));
}

}  // namespace
}  // namespace regionstore::testing
