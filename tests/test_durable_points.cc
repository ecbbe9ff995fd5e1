// Readers' durable points (Store::DurableGeneration on a read-only handle):
// the writer of a protocol 2 store publishes each region's durable commit
// in the sidecar once the barrier that made it durable returned, starts
// them again at its open, and grows an older release's sidecar to hold
// them; a failed barrier publishes nothing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "regionstore/store.h"
#include "sidecar.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore::testing {
namespace {

// Regions "a" (compact) and "b" (64 KiB-aligned slots), protocol `protocol`.
std::string NewStore(TempDir& dir, uint32_t protocol = 2) {
  const std::string path = dir.File("d.rgn");
  MustCreateWithRegions(path, 0, {{"a", 4096}, {"b", 300 * kKiB}}, nullptr, protocol);
  return path;
}

uint64_t Durable(Store& reader, const char* name) {
  auto generation = reader.DurableGeneration(name);
  INFO(generation.status().ToString());
  REQUIRE(generation.ok());
  return *generation;
}

Status Batch(Store& store, Durability mode, uint64_t seed) {
  const std::vector<std::byte> a = PatternBytes(100, seed), b = PatternBytes(70 * kKiB, seed);
  const std::array<std::span<const std::byte>, 1> pa{std::span<const std::byte>(a)};
  const std::array<std::span<const std::byte>, 1> pb{std::span<const std::byte>(b)};
  const std::array<BatchMember, 2> members{BatchMember{"a", pa}, BatchMember{"b", pb}};
  return store.CommitBatch(members, mode).status();
}

// The first 8 bytes of the file at `path`.
std::string Magic(const std::string& path) {
  const std::vector<std::byte> bytes = ReadWholeFile(path);
  REQUIRE(bytes.size() >= 8);
  return std::string(reinterpret_cast<const char*>(bytes.data()), 8);
}

}  // namespace

TEST_CASE("A reader sees each region's durable commit once its barrier returned, never before",
          "[sidecar][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  CHECK(Durable(reader, "a") == 0);
  REQUIRE(writer.Commit("a", PatternBytes(100, 1), Durability::kNone).ok());
  CHECK(Durable(reader, "a") == 0);  // committed, visible, not durable
  REQUIRE(writer.Sync().ok());
  CHECK(Durable(reader, "a") == 1);
  REQUIRE(writer.Commit("a", PatternBytes(100, 2), Durability::kNone).ok());
  CHECK(Durable(reader, "a") == 1);
  // A ranged barrier (kSync: msync of b's slot) covers nothing of a's.
  REQUIRE(writer.Commit("b", PatternBytes(70 * kKiB, 3), Durability::kSync).ok());
  CHECK(Durable(reader, "b") == 1);
  CHECK(Durable(reader, "a") == 1);
  // A whole-file one (fdatasync) covers a's commit before it too.
  REQUIRE(writer.Commit("b", PatternBytes(70 * kKiB, 4), Durability::kPwriteFdatasync).ok());
  CHECK(Durable(reader, "b") == 2);
  CHECK(Durable(reader, "a") == 2);
  REQUIRE(writer.Commit("a", PatternBytes(100, 5), Durability::kNone).ok());
  REQUIRE(writer.StartSync().ok());
  REQUIRE(writer.WaitDurable("a", 3).ok());
  CHECK(Durable(reader, "a") == 3);
  REQUIRE(Batch(writer, Durability::kPwriteFdatasync, 6).ok());
  CHECK(Durable(reader, "a") == 4);
  CHECK(Durable(reader, "b") == 3);
  REQUIRE(writer.Commit("a", PatternBytes(100, 7), Durability::kSync).ok());
  CHECK(Durable(reader, "a") == 5);
  // The writer's own handle says the same.
  CHECK(*writer.DurableGeneration("a") == 5);
  CHECK(reader.DurableGeneration("nope").status().code() == StatusCode::kNotFound);
}

TEST_CASE("A failed barrier publishes nothing durable to readers", "[sidecar][sync][fault]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  TestIo io;
  Store writer = MustOpen(path, OpenMode::kReadWrite, &io);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  REQUIRE(writer.Commit("a", PatternBytes(100, 1), Durability::kPwriteFdatasync).ok());
  REQUIRE(writer.Commit("a", PatternBytes(100, 2), Durability::kNone).ok());
  io.FailNth(Op::kDataSync, 1, EIO);
  REQUIRE_FALSE(writer.Sync().ok());
  CHECK(Durable(reader, "a") == 1);
  io.FailNth(Op::kDataSync, 1, EIO);
  CHECK_FALSE(writer.Commit("b", PatternBytes(100, 3), Durability::kPwriteFdatasync).ok());
  CHECK(Durable(reader, "b") == 0);
}

TEST_CASE("A writer's open starts the durable points again and publishes what it settles",
          "[sidecar][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  {
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(writer.Commit("a", PatternBytes(100, 1), Durability::kPwriteFdatasync).ok());
    // Left without a barrier: the next writer's open makes it durable.
    REQUIRE(writer.Commit("b", PatternBytes(100, 2), Durability::kNone).ok());
  }
  CHECK(Durable(reader, "a") == 1);  // the writer that published it is gone; still true
  CHECK(Durable(reader, "b") == 0);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  // The open settled no region (no marks of a failed barrier): none known.
  CHECK(Durable(reader, "a") == 0);
  CHECK(Durable(reader, "b") == 0);
  // Settling a region publishes what the open's barrier made durable.
  CHECK(*writer.DurableGeneration("a") == 1);
  CHECK(*writer.DurableGeneration("b") == 1);
  CHECK(Durable(reader, "a") == 1);
  CHECK(Durable(reader, "b") == 1);
}

TEST_CASE("A writer grows an older release's sidecar to hold durable points", "[sidecar][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  const std::string shm = sidecar::PathFor(path);
  // What an older release's writer leaves: 8 KiB with the first magic.
  std::vector<std::byte> legacy(sidecar::kLegacySize);
  std::memcpy(legacy.data(), "rgnsshm1", 8);
  WriteWholeFile(shm, legacy);
  REQUIRE(::chmod(shm.c_str(), 0644) == 0);
  {
    // A reader of it: nothing is known durable.
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    CHECK(Durable(reader, "a") == 0);
  }
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  CHECK(std::filesystem::file_size(shm) == sidecar::kSize);
  CHECK(Magic(shm) == "rgnsshm2");
  REQUIRE(writer.Commit("a", PatternBytes(100, 1), Durability::kPwriteFdatasync).ok());
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  CHECK(Durable(reader, "a") == 1);
}

TEST_CASE("A writer leaves an 8 KiB file that is not a sidecar as it was", "[sidecar][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  const std::string shm = sidecar::PathFor(path);
  const std::vector<std::byte> other = PatternBytes(sidecar::kLegacySize, 9);
  WriteWholeFile(shm, other);
  REQUIRE(::chmod(shm.c_str(), 0644) == 0);
  OpenOptions options;
  auto refused = Store::Open(path, OpenMode::kReadWrite, options);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.status().message(), Catch::Contains("not the magic"));
  CHECK(ReadWholeFile(shm) == other);  // not grown, not written
}

TEST_CASE("A durable point newer than the store file's commits is not reported",
          "[sidecar][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  const std::string backup = dir.File("backup.rgn");
  {
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(writer.Commit("a", PatternBytes(100, 1), Durability::kPwriteFdatasync).ok());
    std::filesystem::copy_file(path, backup);
    REQUIRE(writer.Commit("a", PatternBytes(100, 2), Durability::kPwriteFdatasync).ok());
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    CHECK(Durable(reader, "a") == 2);
  }
  // The older file put back over the path, its sidecar still beside it
  // (which names the same sidecar): the point, 2, is the other file's.
  std::filesystem::copy_file(backup, path, std::filesystem::copy_options::overwrite_existing);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  CHECK(Durable(reader, "a") == 0);
}

TEST_CASE("A reader of a protocol 1 store is told it keeps no durable point", "[sidecar][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir, 1);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  REQUIRE(writer.Commit("a", PatternBytes(100, 1), Durability::kPwriteFdatasync).ok());
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  const Status refused = reader.DurableGeneration("a").status();
  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.message(), Catch::Contains("protocol 1 store keeps no durable point"));
}

}  // namespace regionstore::testing
