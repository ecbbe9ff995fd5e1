// Compact slots across page sizes: a store made on 4 KiB pages, written by a
// host with 16 KiB pages (its msync ranges cover neighbouring slots, which
// must come through unchanged), and what Create lays out on 16 KiB and
// 128 KiB pages. The page size is the Io's: the kernel under the test keeps
// its own 4 KiB pages, which serve any 16 KiB-aligned range.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "format.h"
#include "regionstore/io.h"
#include "regionstore/store.h"
#include "slot.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore::testing {
namespace {

// The real Io, except for the page size it reports.
class PageSizeIo final : public ForwardingIo {
 public:
  explicit PageSizeIo(uint64_t page_size) : page_size_(page_size) {}
  uint64_t PageSize() override { return page_size_; }

 private:
  uint64_t page_size_;
};

Status CreateOn(PageSizeIo& io, const std::string& path, std::vector<CheckpointSpec> specs) {
  CreateOptions options;
  options.io = &io;
  options.checkpoints = std::move(specs);
  return Store::Create(path, 0, options);
}

TEST_CASE("A writer on 16 KiB pages commits to compact slots made on 4 KiB pages",
          "[checkpoint][pagesize]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  PageSizeIo small_pages(4096);
  // Four regions whose 4 KiB-aligned slots share 16 KiB pages with each
  // other, between two that are committed once and then left alone.
  const std::vector<CheckpointSpec> specs = {{"left", 100}, {"a", 100},  {"b", 3000},
                                             {"c", 1},      {"d", 4097}, {"right", 100}};
  {
    const Status created = CreateOn(small_pages, path, specs);
    INFO(created.ToString());
    REQUIRE(created.ok());
  }
  auto info = ReadStoreInfo(path);
  REQUIRE(info.ok());
  CHECK(info->created_page_size == 4096);
  for (const RegionEntry& region : info->regions) {
    INFO(region.name);
    CHECK(region.layout == SlotLayout::kCompact);
    CHECK(region.slot_alignment == 4096);
  }
  // Each of "a" to "d" has a slot that does not start on 16 KiB: every
  // 16 KiB msync range of theirs takes in a neighbour's bytes.
  CHECK(info->regions[1].slots_offset % (16 * kKiB) != 0);
  CHECK(info->regions[1].slot_stride == 8 * kKiB);
  CHECK(info->regions[4].slot_stride == 12 * kKiB);

  const auto payload_of = [&](size_t region, uint64_t round) {
    return PatternBytes(specs[region].capacity - round % 2, region * 100 + round + 1);
  };
  {
    Store store = MustOpen(path, OpenMode::kReadWrite, &small_pages);
    REQUIRE(store.Commit("left", payload_of(0, 0), Durability::kSync).ok());
    REQUIRE(store.Commit("right", payload_of(5, 0), Durability::kPwriteFdatasync).ok());
  }
  const std::vector<std::byte> before = ReadWholeFile(path);

  PageSizeIo big_pages(16 * kKiB);
  TestIo io(&big_pages);
  // What each region last took (an odd round's payload for "c" is empty).
  std::vector<std::vector<std::byte>> last(specs.size());
  std::vector<bool> holds(specs.size(), false);
  last[0] = payload_of(0, 0);
  last[5] = payload_of(5, 0);
  holds[0] = holds[5] = true;
  // Bytes a commit may change: its target slot, and the intent area.
  std::vector<std::pair<uint64_t, uint64_t>> written = {
      {info->data_offset - 4096, info->data_offset}};
  {
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    // Every region of "a" to "d" in every mode: the mode moves on by one
    // region each round.
    for (uint64_t round = 0; round < 4; ++round) {
      for (size_t r = 1; r <= 4; ++r) {
        const Durability mode = kAllModes[(r + round) % 4];
        const RegionEntry& region = store.info().regions[r];
        INFO("round " << round << ", region '" << region.name << "', " << DurabilityName(mode));
        const std::vector<std::byte> payload = payload_of(r, round + 1);
        io.ClearLog();
        const int datasyncs = io.Count(Op::kDataSync);
        auto committed = store.Commit(region.name, payload, mode);
        INFO(committed.status().ToString());
        REQUIRE(committed.ok());
        CHECK(*committed == round + 1);
        last[r] = payload;
        holds[r] = true;
        const uint32_t target = store.Report(region.name)->active_slot;
        written.emplace_back(slot::SlotOffset(region, target),
                             slot::SlotOffset(region, target) + region.slot_stride);

        const std::vector<MsyncCall> msyncs = io.Msyncs();
        const uint64_t start = slot::HeaderFileOffset(region, target);
        const uint64_t end = slot::PayloadFileOffset(region, target) + payload.size();
        for (const MsyncCall& call : msyncs) {
          CHECK(call.offset % (16 * kKiB) == 0);
          CHECK(call.length % (16 * kKiB) == 0);
          CHECK(call.offset <= start);
          CHECK(call.offset + call.length >= end);
          CHECK(call.offset + call.length <= store.info().file_size);
        }
        const bool msyncs_expected = mode == Durability::kAsync || mode == Durability::kSync;
        CHECK(msyncs.size() == (msyncs_expected ? 1u : 0u));
        if (!msyncs.empty()) {
          CHECK(msyncs[0].kind == (mode == Durability::kSync ? SyncKind::kSync : SyncKind::kAsync));
        }
        CHECK(io.Count(Op::kDataSync) - datasyncs ==
              (mode == Durability::kPwriteFdatasync ? 1 : 0));

        // Every region still loads what it last held, through this handle.
        for (size_t other = 0; other < specs.size(); ++other) {
          if (!holds[other]) continue;
          INFO("region '" << specs[other].name << "'");
          CHECK(MustLoad(store, specs[other].name) == last[other]);
        }
      }
    }
  }

  // No byte outside the target slots and the intent area changed.
  const std::vector<std::byte> after = ReadWholeFile(path);
  REQUIRE(after.size() == before.size());
  uint64_t changed_elsewhere = 0;
  uint64_t first_changed = 0;
  for (uint64_t offset = 0; offset < after.size(); ++offset) {
    if (after[offset] == before[offset]) continue;
    bool allowed = false;
    for (const auto& [from, to] : written) allowed = allowed || (offset >= from && offset < to);
    if (!allowed && changed_elsewhere++ == 0) first_changed = offset;
  }
  INFO("first byte changed outside the commits' slots: " << first_changed);
  CHECK(changed_elsewhere == 0);

  // Fresh handles on either page size load the same bytes.
  for (PageSizeIo* pages : {&small_pages, &big_pages}) {
    INFO("reopened with pages of " << pages->PageSize() << " bytes");
    Store store = MustOpen(path, OpenMode::kReadWrite, pages);
    for (size_t r = 0; r < specs.size(); ++r) {
      INFO("region '" << specs[r].name << "'");
      CHECK(MustLoad(store, specs[r].name) == last[r]);
    }
  }
}

TEST_CASE("Create on 16 KiB pages aligns compact slots and their strides to 16 KiB",
          "[checkpoint][pagesize][format]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  PageSizeIo io(16 * kKiB);
  const Status created = CreateOn(io, path,
                                  {{"one", 1},
                                   {"page", 12 * kKiB},
                                   {"page+1", 12 * kKiB + 1},
                                   {"limit", kCompactSlotLimit},
                                   {"aligned", kCompactSlotLimit + 1}});
  INFO(created.ToString());
  REQUIRE(created.ok());
  auto info = ReadStoreInfo(path);
  REQUIRE(info.ok());
  CHECK(info->created_page_size == 16 * kKiB);
  CHECK(info->incompat_flags == (format::kIncompatCompactSlots | kDefaultIncompatFlags));
  REQUIRE(info->regions.size() == 5);
  const uint64_t expected_strides[] = {16 * kKiB, 16 * kKiB, 32 * kKiB, 272 * kKiB, 384 * kKiB};
  for (size_t r = 0; r < 4; ++r) {
    const RegionEntry& region = info->regions[r];
    INFO(region.name);
    CHECK(region.layout == SlotLayout::kCompact);
    CHECK(region.slot_alignment == 16 * kKiB);
    CHECK(region.slots_offset % (16 * kKiB) == 0);
    CHECK(region.slot_stride % (16 * kKiB) == 0);
    CHECK(region.slot_stride == expected_strides[r]);
  }
  CHECK(info->regions[4].layout == SlotLayout::kAligned);
  CHECK(info->regions[4].slot_alignment == 64 * kKiB);
  CHECK(info->regions[4].slot_stride == expected_strides[4]);
  // One after the other, no gaps: each 16 KiB multiple needs no padding.
  for (size_t r = 1; r < 4; ++r) {
    CHECK(info->regions[r].slots_offset ==
          info->regions[r - 1].slots_offset + 3 * info->regions[r - 1].slot_stride);
  }

  // A writer on 16 KiB pages commits and loads each; msyncs stay aligned.
  TestIo recorder(&io);
  Store store = MustOpen(path, OpenMode::kReadWrite, &recorder);
  for (size_t r = 0; r < info->regions.size(); ++r) {
    const RegionEntry& region = info->regions[r];
    INFO(region.name);
    const std::vector<std::byte> payload = PatternBytes(region.capacity, r + 1);
    REQUIRE(store.Commit(region.name, payload, Durability::kSync).ok());
    CHECK(MustLoad(store, region.name) == payload);
  }
  CHECK(recorder.Msyncs().size() == info->regions.size());
  for (const MsyncCall& call : recorder.Msyncs()) {
    CHECK(call.offset % (16 * kKiB) == 0);
    CHECK(call.length % (16 * kKiB) == 0);
  }
}

TEST_CASE("On 128 KiB pages kAuto gives aligned slots and kCompact is refused",
          "[checkpoint][pagesize][format]") {
  TempDir dir;
  PageSizeIo io(128 * kKiB);
  const std::string path = dir.File("auto.rgn");
  {
    const Status created = CreateOn(io, path, {{"small", 100}, {"one", 1}});
    INFO(created.ToString());
    REQUIRE(created.ok());
  }
  auto info = ReadStoreInfo(path);
  REQUIRE(info.ok());
  CHECK(info->created_page_size == 128 * kKiB);
  CHECK(info->incompat_flags == kDefaultIncompatFlags);
  for (const RegionEntry& region : info->regions) {
    INFO(region.name);
    CHECK(region.layout == SlotLayout::kAligned);
    CHECK(region.slot_alignment == 64 * kKiB);
    CHECK(region.slot_stride == 128 * kKiB);
  }

  const Status refused =
      CreateOn(io, dir.File("compact.rgn"), {{"small", 100, SlotLayout::kCompact}});
  INFO(refused.ToString());
  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK(dir.List() == std::vector<std::string>{"auto.rgn"});
}

}  // namespace
}  // namespace regionstore::testing
