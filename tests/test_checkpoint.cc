// Checkpoint regions through the public API: layout, commit and load in every
// mode, recovery on open, read-only loads, injected faults and hand damage.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "format.h"
#include "intent.h"
#include "regionstore/store.h"
#include "slot.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore::testing {
namespace {

TEST_CASE("Create lays out three 64 KiB-aligned slots per region after the data area",
          "[checkpoint][format]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(
      path, 100 * kKiB,
      {{"state", 5000, SlotLayout::kAligned}, {"big", 70 * kKiB, SlotLayout::kAligned}});
  auto info = ReadStoreInfo(path);
  REQUIRE(info.ok());
  REQUIRE(info->regions.size() == 2);
  CHECK(info->incompat_flags == kDefaultIncompatFlags);
  CHECK(info->data_offset == kDefaultDataOffset);
  const RegionEntry& a = info->regions[0];
  const RegionEntry& b = info->regions[1];
  CHECK(a.name == "state");
  CHECK(a.layout == SlotLayout::kAligned);
  CHECK(b.layout == SlotLayout::kAligned);
  CHECK(a.slot_alignment == 64 * kKiB);
  CHECK(a.capacity == 5000);
  CHECK(a.slot_count == 3);
  CHECK(a.slots_offset == kDefaultDataOffset + 128 * kKiB);  // data area rounded up to 64 KiB
  CHECK(a.slot_stride == 128 * kKiB);
  CHECK(b.slots_offset == a.slots_offset + 3 * a.slot_stride);
  CHECK(b.slot_stride == 64 * kKiB + 128 * kKiB);
  CHECK(info->file_size == b.slots_offset + 3 * b.slot_stride);
}

TEST_CASE("Create gives small regions compact slots on the page size, large ones 64 KiB units",
          "[checkpoint][format]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  // 100 KiB of data area: the first region starts 128 KiB after the data
  // area's start.
  MustCreateWithRegions(path, 100 * kKiB,
                        {{"tiny", 1},
                         {"small", 100},
                         {"page", 4096},
                         {"page+1", 4097},
                         {"limit", kCompactSlotLimit},
                         {"big", kCompactSlotLimit + 1},
                         {"forced", 100, SlotLayout::kAligned},
                         {"after", 100}});
  auto info = ReadStoreInfo(path);
  REQUIRE(info.ok());
  REQUIRE(info->regions.size() == 8);
  // Compact slots, no large table.
  CHECK(info->incompat_flags == (format::kIncompatCompactSlots | kDefaultIncompatFlags));
  REQUIRE(info->data_offset == kDefaultDataOffset);
  const uint64_t page = Io::Default()->PageSize();
  REQUIRE(page == 4096);  // the strides below are those of 4 KiB pages
  struct Expected {
    SlotLayout layout;
    uint64_t offset;
    uint64_t stride;
  };
  const uint64_t start = kDefaultDataOffset + 128 * kKiB;
  const uint64_t after_limit = start + 3 * (8 + 8 + 8 + 12) * kKiB + 3 * 260 * kKiB;
  const uint64_t big = format::AlignUp(after_limit, 64 * kKiB);
  const std::vector<Expected> expected = {
      {SlotLayout::kCompact, start, 8 * kKiB},
      {SlotLayout::kCompact, start + 3 * 8 * kKiB, 8 * kKiB},
      {SlotLayout::kCompact, start + 6 * 8 * kKiB, 8 * kKiB},
      {SlotLayout::kCompact, start + 9 * 8 * kKiB, 12 * kKiB},
      {SlotLayout::kCompact, start + 9 * 8 * kKiB + 3 * 12 * kKiB, 260 * kKiB},
      {SlotLayout::kAligned, big, 64 * kKiB + 320 * kKiB},
      {SlotLayout::kAligned, big + 3 * 384 * kKiB, 128 * kKiB},
      {SlotLayout::kCompact, big + 3 * 384 * kKiB + 3 * 128 * kKiB, 8 * kKiB},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    const RegionEntry& region = info->regions[i];
    INFO(region.name);
    CHECK(region.layout == expected[i].layout);
    CHECK(region.slot_alignment == (expected[i].layout == SlotLayout::kCompact ? page : 64 * kKiB));
    CHECK(region.slots_offset == expected[i].offset);
    CHECK(region.slot_stride == expected[i].stride);
    CHECK(slot::HeaderFileOffset(region, 1) ==
          region.slots_offset + region.slot_stride +
              (expected[i].layout == SlotLayout::kCompact ? 0 : 60 * kKiB));
    CHECK(slot::PayloadFileOffset(region, 1) == slot::HeaderFileOffset(region, 1) + 4096);
  }
  // The file ends on a 64 KiB boundary after the last slot.
  CHECK(info->file_size ==
        format::AlignUp(big + 3 * 384 * kKiB + 3 * 128 * kKiB + 3 * 8 * kKiB, 64 * kKiB));

  // Every region commits and loads back byte-exact, in every mode.
  auto store = Store::Open(path, OpenMode::kReadWrite);
  REQUIRE(store.ok());
  for (const RegionEntry& region : info->regions) {
    INFO(region.name);
    for (Durability mode : kAllModes) {
      const std::vector<std::byte> payload =
          PatternBytes(region.capacity, static_cast<uint8_t>(region.capacity + 3));
      REQUIRE(store->Commit(region.name, payload, mode).ok());
      std::vector<std::byte> out;
      REQUIRE(store->Load(region.name, out).ok());
      CHECK(out == payload);
    }
  }
}

TEST_CASE("Bad region specs are refused before anything is written", "[checkpoint][create]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  const std::vector<std::vector<CheckpointSpec>> bad = {
      {{"", 10}},           {{std::string(65, 'a'), 10}},
      {{"tab\there", 10}},  {{"bad\xff utf8", 10}},
      {{"c1\xc2\x85", 10}}, {{"dup", 10}, {"dup", 20}},
      {{"zero", 0}},
  };
  for (const auto& specs : bad) {
    CreateOptions options;
    options.checkpoints = specs;
    Status status = Store::Create(path, 0, options);
    INFO(status.ToString());
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK_FALSE(Io::Default()->StatPath(path).ok());
  }
  CHECK(ValidateRegionName(std::string(64, 'x')).ok());
  CHECK(ValidateRegionName("état-✓").ok());
}

TEST_CASE("Commit then Load returns the bytes, in every mode, across reopen",
          "[checkpoint][commit]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, {{"a", 200 * kKiB + 1}, {"b", 1}});
  uint64_t seed = 1;
  for (Durability mode : kAllModes) {
    for (uint64_t length : {uint64_t{0}, uint64_t{1}, uint64_t{4095}, 4 * kKiB, 200 * kKiB + 1}) {
      INFO(DurabilityName(mode) << " length " << length);
      const std::vector<std::byte> payload = PatternBytes(length, ++seed);
      uint64_t generation = 0;
      {
        Store store = MustOpen(path, OpenMode::kReadWrite);
        auto before = store.Report("a");
        REQUIRE(before.ok());
        auto committed = store.Commit("a", payload, mode);
        INFO(committed.status().ToString());
        REQUIRE(committed.ok());
        generation = *committed;
        CHECK(generation == before->generation + 1);
        CheckpointMeta meta;
        CHECK(MustLoad(store, "a", &meta) == payload);
        CHECK(meta.generation == generation);
        CHECK(meta.length == length);
      }
      Store reader = MustOpen(path, OpenMode::kReadOnly);
      CheckpointMeta meta;
      CHECK(MustLoad(reader, "a", &meta) == payload);
      CHECK(meta.generation == generation);
      // The bytes are where FORMAT.md says: pread of the active slot.
      const RegionEntry& region = reader.info().regions[0];
      CHECK(PreadFile(path, slot::PayloadFileOffset(region, meta.slot), length) == payload);
    }
  }
  Store store = MustOpen(path, OpenMode::kReadWrite);
  std::vector<std::byte> out;
  auto empty = store.Load("b", out);
  CHECK(empty.status().code() == StatusCode::kNotFound);
  CHECK_THAT(empty.status().message(), Catch::Contains("no commit yet"));
  CHECK(store.Load("nope", out).status().code() == StatusCode::kNotFound);
  CHECK(store.Commit("nope", {}, Durability::kNone).status().code() == StatusCode::kNotFound);
}

TEST_CASE("A payload over capacity, or a read-only store, changes nothing",
          "[checkpoint][commit]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, {{"a", 100}});
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("a", PatternBytes(100, 1), Durability::kSync).ok());
  }
  const std::vector<std::byte> before = ReadStoreButIntent(path);
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    auto over = store.Commit("a", PatternBytes(101, 2), Durability::kSync);
    CHECK(over.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(over.status().message(), Catch::Contains("capacity"));
  }
  {
    Store store = MustOpen(path, OpenMode::kReadOnly);
    CHECK(store.Commit("a", PatternBytes(10, 3), Durability::kNone).status().code() ==
          StatusCode::kInvalidArgument);
  }
  CHECK(ReadStoreButIntent(path) == before);
}

TEST_CASE("Commits rotate over slots, never touching the newest or the newest durable",
          "[checkpoint][commit]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, {{"a", 4096}});
  Store store = MustOpen(path, OpenMode::kReadWrite);
  // One durable commit, then a run of kNone ones: the durable slot stays.
  REQUIRE(store.Commit("a", PatternBytes(10, 1), Durability::kPwriteFdatasync).ok());
  auto durable = store.Report("a");
  REQUIRE(durable.ok());
  const uint32_t durable_slot = durable->active_slot;
  std::vector<uint32_t> used;
  for (int i = 0; i < 6; ++i) {
    REQUIRE(store.Commit("a", PatternBytes(10, 10 + i), Durability::kNone).ok());
    auto info = store.Report("a");
    REQUIRE(info.ok());
    CHECK(info->active_slot != durable_slot);
    if (!used.empty()) CHECK(info->active_slot != used.back());
    used.push_back(info->active_slot);
    // The durable commit is still valid in its slot.
    CHECK(info->slots[durable_slot].state == SlotState::kValid);
    CHECK(info->slots[durable_slot].generation == 1);
  }
}

TEST_CASE("Each mode makes the calls it documents: one barrier per durable commit",
          "[checkpoint][commit]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  // Protocol 1's calls (test_sidecar.cc counts protocol 2's).
  MustCreateWithRegions(path, 0, {{"a", 64 * kKiB}}, nullptr, /*protocol=*/1);
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  const std::vector<std::byte> payload = PatternBytes(10000, 7);
  for (Durability mode : kAllModes) {
    INFO(DurabilityName(mode));
    io.ClearLog();
    const int datasyncs = io.Count(Op::kDataSync);
    const int writes = io.Count(Op::kWriteAt);
    auto committed = store.Commit("a", payload, mode);
    REQUIRE(committed.ok());
    const int barrier_datasyncs = io.Count(Op::kDataSync) - datasyncs;
    const int pwrites = io.Count(Op::kWriteAt) - writes;
    switch (mode) {
      case Durability::kNone: {
        CHECK(io.Msyncs().empty());
        CHECK(barrier_datasyncs == 0);
        // The first mapped commit since the last fdatasync: the intent mark
        // saying commits without a barrier are pending, and the publication
        // word, by pwrite; the commit itself is all mapping.
        const uint64_t word =
            store.info().data_offset - 4096 + intent::kPublicationEntry * intent::kEntrySize;
        CHECK(pwrites == 2);
        CHECK(io.Writes().back().offset == word);
        CHECK(io.Writes().back().length == intent::kPublicationSize);
        const auto word_in_file = [&] {
          return intent::DecodePublication(PreadFile(path, word, intent::kPublicationSize));
        };
        const std::optional<uint64_t> first = word_in_file();
        REQUIRE(first.has_value());
        // The next one makes no call at all: the word is stored through
        // the mapping, which shares the page cache, so a pread sees it.
        const int writes_before = io.Count(Op::kWriteAt);
        REQUIRE(store.Commit("a", payload, mode).ok());
        CHECK(io.Count(Op::kWriteAt) == writes_before);
        CHECK(io.Msyncs().empty());
        CHECK(word_in_file() == *first + 2);
        break;
      }
      case Durability::kAsync:
        REQUIRE(io.Msyncs().size() == 1);
        CHECK(io.Msyncs()[0].kind == SyncKind::kAsync);
        CHECK(barrier_datasyncs == 0);
        break;
      case Durability::kSync:
      case Durability::kPwriteFdatasync: {
        // A zero header unit and the payload, then the header unit: the
        // header reaches the page cache only after the whole payload. (The
        // intent marks around the barrier go to the intent area.)
        const RegionEntry& region = store.info().regions[0];
        const uint32_t target = store.Report("a")->active_slot;
        std::vector<WriteCall> calls;
        int intent_writes = 0;
        for (const WriteCall& call : io.Writes()) {
          if (call.offset >= region.slots_offset) {
            calls.push_back(call);
          } else {
            CHECK(call.offset >= store.info().data_offset - 4096);
            CHECK(call.offset + call.length <= store.info().data_offset);
            ++intent_writes;
          }
        }
        // The commit's mark, set and cleared, and the publication word; the
        // kNone commit before makes each barrier set and clear the
        // whole-file mark too, and the fdatasync then clears the
        // pending-commits mark.
        CHECK(intent_writes == (mode == Durability::kSync ? 5 : 6));
        REQUIRE(calls.size() == 3);
        CHECK(calls[0].offset == slot::HeaderFileOffset(region, target));
        CHECK(calls[0].length == slot::kHeaderUnitSize);
        CHECK(calls[1].offset == slot::PayloadFileOffset(region, target));
        CHECK(calls[1].length == payload.size());
        CHECK(calls[2].offset == slot::HeaderFileOffset(region, target));
        CHECK(calls[2].length == slot::kHeaderUnitSize);
        CHECK(pwrites == 3 + intent_writes);
        if (mode == Durability::kSync) {
          // One msync(MS_SYNC) of header unit and payload, which are
          // adjacent: this range only.
          REQUIRE(io.Msyncs().size() == 1);
          CHECK(io.Msyncs()[0].kind == SyncKind::kSync);
          CHECK(io.Msyncs()[0].offset == slot::HeaderFileOffset(region, target));
          CHECK(io.Msyncs()[0].length >= slot::kHeaderUnitSize + payload.size());
          CHECK(barrier_datasyncs == 0);
        } else {
          CHECK(io.Msyncs().empty());
          CHECK(barrier_datasyncs == 1);
        }
        break;
      }
    }
    // kNone commits twice (above).
    CHECK(store.Stats().of(mode).commits == (mode == Durability::kNone ? 2u : 1u));
    CHECK(MustLoad(store, "a") == payload);
  }
}

TEST_CASE("EIO at the commit barrier poisons: reopening gives the previous commit",
          "[checkpoint][fault]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, {{"a", 8 * kKiB}});
  const std::vector<std::byte> previous = PatternBytes(5000, 1);
  const std::vector<std::byte> failed = PatternBytes(6000, 2);
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("a", previous, Durability::kSync).ok());
  }
  struct Case {
    Durability mode;
    Op op;
    int nth;
  };
  // kSync's barrier is an msync of the slot's range, kPwriteFdatasync's an
  // fdatasync. The writes of a durable commit, in order: the zero header
  // unit and the payload (one gathered write, counted per part), the intent
  // mark, the header unit.
  for (Case c :
       {Case{Durability::kPwriteFdatasync, Op::kDataSync, 1},
        Case{Durability::kPwriteFdatasync, Op::kWriteAt, 1}, Case{Durability::kSync, Op::kMsync, 1},
        Case{Durability::kSync, Op::kWriteAt, 3}, Case{Durability::kAsync, Op::kMsync, 1}}) {
    INFO(DurabilityName(c.mode) << " failing op " << static_cast<int>(c.op) << " #" << c.nth);
    {
      TestIo io;
      Store store = MustOpen(path, OpenMode::kReadWrite, &io);
      io.FailNth(c.op, c.nth, EIO);
      auto committed = store.Commit("a", failed, c.mode);
      CHECK(committed.status().code() == StatusCode::kIOError);
      CHECK(committed.status().sys_errno() == EIO);
      CHECK(store.poisoned());
      CHECK(store.Commit("a", previous, Durability::kNone).status().code() ==
            StatusCode::kPoisoned);
      // A failed durable commit zeroes its header through the page cache
      // before it returns: nobody may take it for a commit now.
      if (c.mode != Durability::kAsync) {
        std::vector<std::byte> out;
        auto loaded = store.Load("a", out);
        REQUIRE(loaded.ok());
        CHECK(out == previous);
      }
    }
    // The reopen loads the previous commit and writes only intent entries:
    // the failed barrier's mark cleared (its header is zero already), and
    // its fdatasync, which makes that zero durable, set and cleared as a
    // marked file barrier. kAsync's failed msync leaves its commit in place:
    // it promised nothing more.
    TestIo reopen_io;
    Store reopened = MustOpen(path, OpenMode::kReadWrite, &reopen_io);
    const std::vector<std::byte> got = MustLoad(reopened, "a");
    if (c.mode == Durability::kAsync) {
      CHECK((got == previous || got == failed));
    } else {
      CHECK(got == previous);
      CHECK(reopen_io.BytesWritten() <= 3 * intent::kEntrySize);
    }
    CHECK(reopen_io.Count(Op::kDataSync) == 1);
    // Back to the known state for the next case.
    REQUIRE(reopened.Commit("a", previous, Durability::kSync).ok());
  }
}

// Offsets of the pieces of slot `index` of the first region.
struct SlotPlace {
  uint64_t header = 0;
  uint64_t payload = 0;
};
SlotPlace PlaceOf(const std::string& path, uint32_t index) {
  auto info = ReadStoreInfo(path);
  REQUIRE(info.ok());
  return {slot::HeaderFileOffset(info->regions[0], index),
          slot::PayloadFileOffset(info->regions[0], index)};
}

TEST_CASE("Hand-damaged slots are reported and skipped, never returned", "[checkpoint][damage]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, {{"a", 8 * kKiB}});
  const std::vector<std::byte> older = PatternBytes(3000, 1);
  const std::vector<std::byte> newer = PatternBytes(3000, 2);
  uint32_t newest_slot = 0;
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("a", older, Durability::kSync).ok());
    REQUIRE(store.Commit("a", newer, Durability::kSync).ok());
    newest_slot = store.Report("a")->active_slot;
  }
  const std::vector<std::byte> pristine = ReadWholeFile(path);
  const SlotPlace place = PlaceOf(path, newest_slot);
  struct Damage {
    const char* what;
    uint64_t offset;
    uint64_t length;  // bytes set to `value` (flip when value < 0)
    int value;
    const char* reason;
  };
  for (Damage d :
       {Damage{"flipped payload byte", place.payload + 1234, 1, -1, "payload checksum"},
        Damage{"flipped header byte", place.header + slot::hdr::kLength, 1, -1, "header checksum"},
        Damage{"zeroed header", place.header, slot::kHeaderSize, 0, nullptr}}) {
    INFO(d.what);
    std::vector<std::byte> bytes = pristine;
    for (uint64_t i = 0; i < d.length; ++i) {
      bytes[d.offset + i] =
          d.value < 0 ? bytes[d.offset + i] ^ std::byte{0x40} : static_cast<std::byte>(d.value);
    }
    WriteWholeFile(path, bytes);
    auto reports = VerifyRegions(path);
    REQUIRE(reports.ok());
    const SlotReport& damaged = reports->regions[0].slots[newest_slot];
    if (d.reason != nullptr) {
      // Damage in the newest header is an invalid slot; damage in its
      // payload cannot be told from a commit a power loss tore: kTorn.
      CHECK(damaged.state ==
            (d.offset >= place.payload ? SlotState::kTorn : SlotState::kIncomplete));
      CHECK_THAT(damaged.reason, Catch::Contains(d.reason));
    } else {
      CHECK(damaged.state == SlotState::kEmpty);  // a zeroed header is an empty slot
    }
    CHECK(reports->regions[0].has_commit);
    CHECK(reports->regions[0].generation == 1);
    for (OpenMode mode : {OpenMode::kReadOnly, OpenMode::kReadWrite}) {
      Store store = MustOpen(path, mode);
      CheckpointMeta meta;
      CHECK(MustLoad(store, "a", &meta) == older);
      CHECK(meta.generation == 1);
    }
  }
  // Both slots damaged: no valid copy, and Load says so.
  std::vector<std::byte> bytes = pristine;
  for (uint32_t s = 0; s < 3; ++s) bytes[PlaceOf(path, s).header + 20] ^= std::byte{1};
  WriteWholeFile(path, bytes);
  auto reports = VerifyRegions(path);
  REQUIRE(reports.ok());
  CHECK(reports->regions[0].damaged);
  CHECK_FALSE(reports->regions[0].has_commit);
  Store store = MustOpen(path, OpenMode::kReadWrite);
  std::vector<std::byte> out;
  CHECK(store.Load("a", out).status().code() == StatusCode::kCorruption);
}

// A default (protocol 2) store for the byte-flip cases, with the smallest
// journal: each flip rewrites the whole file, 1.6 MiB instead of 5.4.
void CreateFlipStore(const std::string& path, std::vector<CheckpointSpec> specs) {
  CreateOptions options;
  options.checkpoints = std::move(specs);
  options.journal_size = 256 * kKiB;
  const Status status = Store::Create(path, 0, options);
  INFO(status.ToString());
  REQUIRE(status.ok());
}

TEST_CASE("Every single-byte flip of a small store's metadata is read, opened or refused",
          "[checkpoint][damage][long]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  // One region of each slot layout: "a" compact (kAuto), "b" 64 KiB-aligned.
  CreateFlipStore(path, {{"a", 100}, {"b", 200, SlotLayout::kAligned}});
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("a", PatternBytes(100, 1), Durability::kSync).ok());
    REQUIRE(store.Commit("a", PatternBytes(50, 2), Durability::kNone).ok());
    REQUIRE(store.Commit("b", PatternBytes(200, 3), Durability::kPwriteFdatasync).ok());
  }
  const std::vector<std::byte> pristine = ReadWholeFile(path);
  auto info = ReadStoreInfo(path);
  REQUIRE(info.ok());
  // Superblock and table, and every slot header.
  std::vector<uint64_t> offsets;
  // The superblock's fields (0..103) and checksum (4088..4095), then both
  // table entries.
  for (uint64_t i = 0; i < format::kRegionTableOffset + 2 * format::kRegionEntrySize; ++i) {
    if (i < 104 || i >= format::kSuperblockChecksumOffset) offsets.push_back(i);
  }
  for (const RegionEntry& region : info->regions) {
    for (uint32_t s = 0; s < region.slot_count; ++s) {
      for (uint64_t i = 0; i < slot::kHeaderSize; ++i) {
        offsets.push_back(slot::HeaderFileOffset(region, s) + i);
      }
    }
  }
  int opened = 0;
  int refused = 0;
  for (uint64_t offset : offsets) {
    std::vector<std::byte> bytes = pristine;
    bytes[offset] ^= std::byte{0xff};
    WriteWholeFile(path, bytes);
    // What inspect and stat read (headers only), read-only: each works or
    // gives a specific error, before a writer's recovery touches anything.
    VerifyOptions headers_only;
    headers_only.check_payloads = false;
    for (auto result : {VerifyRegions(path, headers_only), VerifyRegions(path)}) {
      if (!result.ok()) {
        CHECK((result.status().code() == StatusCode::kCorruption ||
               result.status().code() == StatusCode::kUnsupportedVersion));
      }
    }
    {
      auto reader = Store::Open(path, OpenMode::kReadOnly);
      if (reader.ok()) {
        std::vector<std::byte> out;
        for (const char* name : {"a", "b"}) {
          auto loaded = reader->Load(name, out);
          CHECK((loaded.ok() || loaded.status().code() == StatusCode::kCorruption ||
                 loaded.status().code() == StatusCode::kNotFound));
        }
      } else {
        CHECK((reader.status().code() == StatusCode::kCorruption ||
               reader.status().code() == StatusCode::kUnsupportedVersion));
      }
    }
    auto store = Store::Open(path, OpenMode::kReadWrite);
    if (!store.ok()) {
      ++refused;
      CHECK((store.status().code() == StatusCode::kCorruption ||
             store.status().code() == StatusCode::kUnsupportedVersion));
      continue;
    }
    ++opened;
    for (const char* name : {"a", "b"}) {
      std::vector<std::byte> out;
      auto loaded = store->Load(name, out);
      if (loaded.ok()) {
        CHECK(out.size() == loaded->length);
      } else {
        CHECK((loaded.status().code() == StatusCode::kCorruption ||
               loaded.status().code() == StatusCode::kNotFound));
      }
    }
    CHECK(VerifyRegions(path).ok());
  }
  INFO("opened " << opened << " refused " << refused);
  CHECK(offsets.size() == 104 + 8 + 256 + 2 * 3 * 64);
  CHECK(opened + refused == static_cast<int>(offsets.size()));
  CHECK(refused > 0);
  CHECK(opened > 0);
}

}  // namespace
}  // namespace regionstore::testing

namespace regionstore::testing {
namespace {

// What `regionctl inspect` reads: superblock, region table and slot headers,
// counted through the io seam, on a 2 GiB store.
TEST_CASE("Reading only the slot headers of a 2 GiB store reads under 1 MiB",
          "[checkpoint][verify][long]") {
  TempDir dir;
  const std::string path = dir.File("big.rgn");
  CreateOptions create;
  create.checkpoints = {{"big", 350 * kMiB}, {"small", 4 * kKiB}};
  Status created = Store::Create(path, 1024 * kMiB, create);
  INFO(created.ToString());
  REQUIRE(created.ok());
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("big", PatternBytes(3 * kMiB, 1), Durability::kSync).ok());
    REQUIRE(store.Commit("small", PatternBytes(100, 2), Durability::kSync).ok());
    REQUIRE(store.info().file_size >= 2048 * kMiB);
  }
  TestIo io;
  REQUIRE(ReadStoreInfo(path, &io).ok());
  VerifyOptions options;
  options.io = &io;
  options.check_payloads = false;
  auto reports = VerifyRegions(path, options);
  REQUIRE(reports.ok());
  CHECK(io.BytesRead() < 1 * kMiB);
  REQUIRE(reports->regions.size() == 2);
  const SlotReport& newest = reports->regions[0].slots[reports->regions[0].active_slot];
  CHECK(newest.state == SlotState::kValid);
  CHECK_FALSE(newest.payload_checked);
  CHECK(newest.length == 3 * kMiB);

  // The full check reads the payload too.
  io.ClearLog();
  options.check_payloads = true;
  reports = VerifyRegions(path, options);
  REQUIRE(reports.ok());
  CHECK(io.BytesRead() > 3 * kMiB);
  CHECK(reports->regions[0].slots[reports->regions[0].active_slot].payload_checked);
}

TEST_CASE("VerifyRegions can read the whole data area, reporting progress and unreadable blocks",
          "[checkpoint][verify]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateOptions create;
  create.checkpoints = {{"a", 64 * kKiB}};
  REQUIRE(Store::Create(path, 5 * kMiB + 123, create).ok());
  TestIo io;
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  VerifyOptions options;
  options.io = &io;
  options.read_data_area = true;
  options.progress = [&calls](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
  REQUIRE(VerifyRegions(path, options).ok());
  CHECK(io.BytesRead() >= 5 * kMiB + 123);
  REQUIRE(calls.size() >= 6);  // one per 1 MiB of the data area at least
  for (size_t i = 1; i < calls.size(); ++i) {
    CHECK(calls[i].first >= calls[i - 1].first);
    CHECK(calls[i].second == calls[0].second);
  }
  CHECK(calls.back().first == calls.back().second);
  CHECK(calls.back().second >= 5 * kMiB + 123);

  // An unreadable block: kIOError naming the data-area offset. The last six
  // reads were the data area's six chunks: fail the fifth, at 4 MiB.
  const int reads = io.Count(Op::kReadAt);
  TestIo failing;
  failing.FailNth(Op::kReadAt, reads - 1, EIO);
  options.io = &failing;
  options.progress = nullptr;
  auto result = VerifyRegions(path, options);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kIOError);
  CHECK_THAT(result.status().ToString(), Catch::Contains("read data area at offset 4194304"));
}

}  // namespace
}  // namespace regionstore::testing

namespace regionstore::testing {
namespace {

// The 0.5 fields: incompat_flags, each entry's slot_alignment and compact
// slot headers, flipped one byte at a time, as is (the checksums catch it)
// and resealed (checksums made right, so the field checks behind them
// decide). A loaded payload is always one that was committed to that region.
TEST_CASE("Every byte flip of a compact store's 0.5 fields is read, opened or refused",
          "[checkpoint][damage][long]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateFlipStore(path, {{"a", 100, SlotLayout::kCompact},
                         {"b", 200, SlotLayout::kAligned},
                         {"c", 4097, SlotLayout::kCompact}});
  const std::vector<std::vector<std::byte>> committed = {
      PatternBytes(100, 1), PatternBytes(50, 2), PatternBytes(200, 3), PatternBytes(4097, 4)};
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("a", committed[0], Durability::kSync).ok());
    REQUIRE(store.Commit("a", committed[1], Durability::kNone).ok());
    REQUIRE(store.Commit("b", committed[2], Durability::kPwriteFdatasync).ok());
    REQUIRE(store.Commit("c", committed[3], Durability::kSync).ok());
  }
  const std::vector<std::byte> pristine = ReadWholeFile(path);
  auto info = ReadStoreInfo(path);
  REQUIRE(info.ok());
  REQUIRE(info->incompat_flags == (format::kIncompatCompactSlots | kDefaultIncompatFlags));
  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < 4; ++i) offsets.push_back(format::sb::kIncompatFlags + i);
  for (uint64_t r = 0; r < info->regions.size(); ++r) {
    for (uint64_t i = 0; i < 4; ++i) {
      offsets.push_back(format::kRegionTableOffset + r * format::kRegionEntrySize +
                        format::re::kSlotAlignment + i);
    }
  }
  for (const RegionEntry& region : info->regions) {
    if (region.layout != SlotLayout::kCompact) continue;
    for (uint32_t s = 0; s < region.slot_count; ++s) {
      for (uint64_t i = 0; i < slot::kHeaderSize; ++i) {
        offsets.push_back(slot::HeaderFileOffset(region, s) + i);
      }
    }
  }
  REQUIRE(offsets.size() == 4 + 3 * 4 + 2 * 3 * 64);
  // Resealing: the slot headers' own checksums, the table's, the superblock's.
  auto reseal = [&](std::vector<std::byte>& bytes) {
    std::span<std::byte> all(bytes);
    for (const RegionEntry& region : info->regions) {
      for (uint32_t s = 0; s < region.slot_count; ++s) {
        std::span<std::byte> header =
            all.subspan(slot::HeaderFileOffset(region, s), slot::kHeaderSize);
        format::Store64(header, slot::hdr::kHeaderChecksum,
                        format::Checksum(header.first(slot::hdr::kHeaderChecksum)));
      }
    }
    format::Store64(
        all, format::sb::kRegionTableChecksum,
        format::Checksum(all.subspan(format::kRegionTableOffset, 3 * format::kRegionEntrySize)));
    format::Store64(all, format::kSuperblockChecksumOffset,
                    format::Checksum(all.first(format::kSuperblockChecksumOffset)));
  };
  int opened = 0;
  int refused = 0;
  for (const bool resealed : {false, true}) {
    for (uint64_t offset : offsets) {
      INFO("file offset " << offset << (resealed ? ", resealed" : ""));
      std::vector<std::byte> bytes = pristine;
      bytes[offset] ^= std::byte{0xff};
      if (resealed) reseal(bytes);
      WriteWholeFile(path, bytes);
      for (auto result : {ReadStoreInfo(path).status(), VerifyRegions(path).status()}) {
        CHECK((result.ok() || result.code() == StatusCode::kCorruption ||
               result.code() == StatusCode::kUnsupportedVersion));
      }
      auto store = Store::Open(path, OpenMode::kReadWrite);
      if (!store.ok()) {
        ++refused;
        CHECK((store.status().code() == StatusCode::kCorruption ||
               store.status().code() == StatusCode::kUnsupportedVersion));
        continue;
      }
      ++opened;
      for (const char* name : {"a", "b", "c"}) {
        std::vector<std::byte> out;
        auto loaded = store->Load(name, out);
        if (loaded.ok()) {
          CHECK(std::find(committed.begin(), committed.end(), out) != committed.end());
        } else {
          CHECK((loaded.status().code() == StatusCode::kCorruption ||
                 loaded.status().code() == StatusCode::kNotFound ||
                 loaded.status().code() == StatusCode::kTornCommit));
        }
      }
      CHECK(VerifyRegions(path).ok());
    }
  }
  INFO("opened " << opened << " refused " << refused);
  CHECK(opened + refused == 2 * static_cast<int>(offsets.size()));
  CHECK(refused > 0);
  CHECK(opened > 0);
}

}  // namespace
}  // namespace regionstore::testing
