// A writer's open costs what the metadata costs (docs/CHECKPOINTS.md,
// "Recovery"): after a clean close it reads the intent area (and a store
// with a batch journal, the journal's chain) and writes no slot; after a
// kill, a store with a batch log also has its slot headers and journal
// read; a current-boot intent mark costs one header unit. Regions are settled at their first
// commit; torn and unfinished slots are reported as what they are; generations are never reused
// while a header that checks out can show them.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "intent.h"
#include "regionstore/store.h"
#include "slot.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore::testing {
namespace {

// A big commit in each of two regions and a small one: 16 MiB, a thousand
// times what an open may read, and cheap enough for every filesystem.
constexpr uint64_t kBig = 16 * kMiB;
const std::vector<CheckpointSpec> kBigStore = {{"big1", kBig}, {"big2", kBig}, {"small", 4 * kKiB}};

void PwriteAt(const std::string& path, uint64_t offset, std::span<const std::byte> bytes) {
  std::vector<std::byte> file = testing::ReadWholeFile(path);
  REQUIRE(offset + bytes.size() <= file.size());
  std::memcpy(file.data() + offset, bytes.data(), bytes.size());
  WriteWholeFile(path, file);
}

// Where a store's one commit went: region "a" of 8 KiB, one commit of
// `length` bytes in `mode`.
struct OneCommit {
  RegionEntry region;
  uint32_t slot = 0;
};
OneCommit CreateWithOneCommit(const std::string& path, uint64_t length, Durability mode) {
  MustCreateWithRegions(path, 0, {{"a", 8 * kKiB}});
  Store store = MustOpen(path, OpenMode::kReadWrite);
  REQUIRE(store.Commit("a", PatternBytes(length, 1), mode).ok());
  return {store.info().regions[0], store.Report("a")->active_slot};
}

intent::BootId MustBootId() {
  auto boot = Io::Default()->BootId();
  INFO(boot.status().ToString());
  REQUIRE(boot.ok());
  return *boot;
}

TEST_CASE("A writer's open reads no payload and writes no slot after a clean close",
          "[checkpoint][open][fs-matrix][long]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, kBigStore, nullptr, protocol);
  const std::vector<std::byte> big = PatternBytes(kBig, 3);
  Durability last_mode = Durability::kSync;
  SECTION("after durable commits") { last_mode = Durability::kSync; }
  SECTION("after a kNone commit left dirty pages") { last_mode = Durability::kNone; }
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("big1", big, Durability::kSync).ok());
    REQUIRE(store.Commit("big2", big, Durability::kPwriteFdatasync).ok());
    REQUIRE(store.Commit("small", PatternBytes(100, 4), last_mode).ok());
  }
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  // Superblock, region table and the intent area: a few KiB, however large
  // the commits.
  CHECK(io.BytesRead() <= 16 * kKiB);
  // Protocol 1: nothing; after a kNone commit, three intent entries: the
  // open's fdatasync is what makes that commit durable, so it runs as a
  // marked file barrier (set, cleared) and then clears the pending-commits
  // mark. Protocol 2 keeps its marks in the sidecar, and writes only its
  // identity (two entries) into the store.
  CHECK(io.BytesWritten() == (protocol == 2                    ? 2 * intent::kEntrySize
                              : last_mode == Durability::kNone ? 3 * intent::kEntrySize
                                                               : uint64_t{0}));
  CHECK(io.Count(testing::Op::kDataSync) == 1);
  // The first commit into the small region settles it alone: its headers
  // and newest payload, nothing of the big regions.
  io.ClearLog();
  const uint64_t read_before = io.BytesRead();
  REQUIRE(store.Commit("small", PatternBytes(3, 5), Durability::kSync).ok());
  CHECK(io.BytesRead() - read_before <= 3 * slot::kHeaderSize + 100);
  // The big regions are as they were.
  CHECK(MustLoad(store, "big1") == big);
}

// Writes a commit-barrier mark naming the newest commit of `region`, as a
// process killed inside that commit's barrier leaves it.
void PlantCommitMark(const std::string& path, const std::string& region,
                     const intent::BootId& boot) {
  Store store = MustOpen(path, OpenMode::kReadOnly);
  auto info = store.Report(region);
  REQUIRE(info.ok());
  REQUIRE(info->has_commit);
  uint32_t index = 0;
  while (store.info().regions[index].name != region) ++index;
  auto area = intent::AreaOffset(store.info());
  REQUIRE(area.has_value());
  const intent::EntryBytes entry = intent::EncodeEntry(
      {intent::Kind::kCommitBarrier, index, info->active_slot, info->generation, boot});
  PwriteAt(path, *area + intent::kFirstCommitEntry * intent::kEntrySize, entry);
}

TEST_CASE(
    "A current-boot commit mark keeps a whole commit and writes it once more, undoes a torn one, "
    "and another boot's costs nothing",
    "[checkpoint][open][fs-matrix][long]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  // Protocol 1's marks live in the store's intent area (test_sidecar.cc has
  // protocol 2's).
  MustCreateWithRegions(path, 0, kBigStore, nullptr, /*protocol=*/1);
  const std::vector<std::byte> older = PatternBytes(kBig, 6);
  const std::vector<std::byte> newer = PatternBytes(kBig, 7);
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("big1", older, Durability::kSync).ok());
    REQUIRE(store.Commit("big1", newer, Durability::kSync).ok());
    REQUIRE(store.Commit("big2", older, Durability::kSync).ok());
  }
  const intent::BootId boot = MustBootId();
  SECTION("this boot, whole: readers may have been given it, so it stays") {
    PlantCommitMark(path, "big1", boot);
    TestIo io;
    {
      Store store = MustOpen(path, OpenMode::kReadWrite, &io);
      // The marked commit's header unit and payload written again, byte for
      // byte (a failed barrier may have left their pages clean but never
      // written), the mark cleared, and the fdatasync run as a marked file
      // barrier (set, cleared). Nothing visible changed: the publication word
      // is not written.
      CHECK(io.BytesWritten() == slot::kHeaderUnitSize + newer.size() + 3 * intent::kEntrySize);
      // The intent area and headers, the payload checked, then read to be written.
      CHECK(io.BytesRead() <= 16 * kKiB + 2 * newer.size());
      CheckpointMeta meta;
      CHECK(MustLoad(store, "big1", &meta) == newer);
      CHECK(meta.generation == 2);
      CHECK(MustLoad(store, "big2") == older);
    }
    // Acted on once: the next open writes nothing.
    TestIo again;
    Store store = MustOpen(path, OpenMode::kReadWrite, &again);
    CHECK(again.BytesWritten() == 0);
  }
  SECTION("this boot, torn (its pages read back from the disk): undone with one header unit") {
    PlantCommitMark(path, "big1", boot);
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    auto report = reader.Report("big1");
    REQUIRE(report.ok());
    const RegionEntry& region = reader.info().regions[0];
    REQUIRE(region.name == "big1");
    FlipByte(path, slot::PayloadFileOffset(region, report->active_slot) + 12345);
    TestIo io;
    {
      Store store = MustOpen(path, OpenMode::kReadWrite, &io);
      // The header unit zeroed and the mark cleared; the marked fdatasync
      // (set, cleared); the publication word odd around the zeroing.
      CHECK(io.BytesWritten() ==
            slot::kHeaderUnitSize + 3 * intent::kEntrySize + 2 * intent::kPublicationSize);
      CheckpointMeta meta;
      CHECK(MustLoad(store, "big1", &meta) == older);
      CHECK(meta.generation == 1);
    }
    TestIo again;
    Store store = MustOpen(path, OpenMode::kReadWrite, &again);
    CHECK(again.BytesWritten() == 0);
  }
  SECTION("another boot: the page cache was filled from the disk since; nothing to undo") {
    intent::BootId other = boot;
    other[0] ^= std::byte{1};
    PlantCommitMark(path, "big1", other);
    TestIo io;
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    CHECK(io.BytesWritten() == 0);
    CheckpointMeta meta;
    CHECK(MustLoad(store, "big1", &meta) == newer);
    CHECK(meta.generation == 2);
  }
}

TEST_CASE("A flipped byte in the newest payload is a torn commit, and its generation is not reused",
          "[checkpoint][open][fs-matrix]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, {{"a", 8 * kKiB}});
  const std::vector<std::byte> older = PatternBytes(3000, 1);
  const std::vector<std::byte> newer = PatternBytes(3000, 2);
  uint32_t newest_slot = 0;
  RegionEntry region;
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("a", older, Durability::kSync).ok());
    REQUIRE(store.Commit("a", newer, Durability::kSync).ok());
    newest_slot = store.Report("a")->active_slot;
    region = store.info().regions[0];
  }
  std::vector<std::byte> bytes = testing::ReadWholeFile(path);
  bytes[slot::PayloadFileOffset(region, newest_slot) + 17] ^= std::byte{0x08};
  WriteWholeFile(path, bytes);

  auto reports = VerifyRegions(path);
  REQUIRE(reports.ok());
  const RegionReport& report = reports->regions[0];
  CHECK(report.torn);
  CHECK(report.torn_generation == 2);
  CHECK(report.torn_slot == newest_slot);
  CHECK(report.slots[newest_slot].state == SlotState::kTorn);
  CHECK(report.has_commit);
  CHECK(report.generation == 1);

  Store store = MustOpen(path, OpenMode::kReadWrite);
  CheckpointMeta meta;
  CHECK(MustLoad(store, "a", &meta) == older);
  CHECK(meta.generation == 1);
  CHECK(meta.skipped_torn_generation == 2);
  // The next commit is numbered above the torn header, never 2 again.
  auto committed = store.Commit("a", PatternBytes(10, 3), Durability::kSync);
  REQUIRE(committed.ok());
  CHECK(*committed == 3);
  auto after = store.Report("a");
  REQUIRE(after.ok());
  CHECK_FALSE(after->torn);
  CHECK(after->generation == 3);
}

TEST_CASE("A region whose only commit is torn loads as kTornCommit, never 'no commit' or damage",
          "[checkpoint][open][fs-matrix]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  const auto [region, slot_index] = CreateWithOneCommit(path, 5000, Durability::kPwriteFdatasync);
  // What a power loss during the first commit can leave: its header on disk,
  // part of its payload not.
  PwriteAt(path, slot::PayloadFileOffset(region, slot_index) + 4096, PatternBytes(904, 9));
  for (OpenMode mode : {OpenMode::kReadOnly, OpenMode::kReadWrite}) {
    Store store = MustOpen(path, mode);
    std::vector<std::byte> out;
    auto loaded = store.Load("a", out);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.status().code() == StatusCode::kTornCommit);
    CHECK_THAT(loaded.status().message(), Catch::Contains("generation 1") &&
                                              Catch::Contains("power loss") &&
                                              Catch::Contains("damaged"));
    auto info = store.Report("a");
    REQUIRE(info.ok());
    CHECK(info->torn);
    CHECK_FALSE(info->has_commit);
    CHECK_FALSE(info->damaged);
  }
  Store store = MustOpen(path, OpenMode::kReadWrite);
  auto committed = store.Commit("a", PatternBytes(10, 3), Durability::kSync);
  REQUIRE(committed.ok());
  CHECK(*committed == 2);
}

TEST_CASE("An unfinished header (magic not yet stored) holds no commit and is no damage",
          "[checkpoint][open][fs-matrix]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  const auto [region, slot_index] = CreateWithOneCommit(path, 100, Durability::kNone);
  // A first commit killed before its last store: the magic is still zero.
  PwriteAt(path, slot::HeaderFileOffset(region, slot_index) + slot::hdr::kMagic,
           std::vector<std::byte>(8));
  auto reports = VerifyRegions(path);
  REQUIRE(reports.ok());
  CHECK_FALSE(reports->regions[0].has_commit);
  CHECK_FALSE(reports->regions[0].damaged);
  CHECK_FALSE(reports->regions[0].torn);
  CHECK(reports->regions[0].slots[slot_index].state == SlotState::kEmpty);
  CHECK_THAT(reports->regions[0].slots[slot_index].reason, Catch::Contains("unfinished"));
  Store store = MustOpen(path, OpenMode::kReadWrite);
  std::vector<std::byte> out;
  auto loaded = store.Load("a", out);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().code() == StatusCode::kNotFound);
  // The next commit clears the unfinished header before it writes anything.
  REQUIRE(store.Commit("a", PatternBytes(50, 2), Durability::kSync).ok());
  const std::vector<std::byte> unit =
      PreadFile(path, slot::HeaderFileOffset(region, slot_index), slot::kHeaderSize);
  CHECK((slot::DecodeHeader(unit, 0, slot_index, region.capacity).kind ==
             slot::DecodedHeader::Kind::kEmpty ||
         store.Report("a")->active_slot == slot_index));
}

}  // namespace
}  // namespace regionstore::testing
