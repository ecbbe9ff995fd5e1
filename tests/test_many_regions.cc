// Stores with many checkpoint regions: a 10,000-region store on the real
// disk (a region table past 1 MiB, compact slots, lookups by name in log n
// among names that sort next to each other), the table sizes where the data
// area moves and the large-table flag is set, and the limit on the region
// count.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "format.h"
#include "intent.h"
#include "regionstore/store.h"
#include "slot.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

constexpr size_t kRegionCount = 10'000;
constexpr uint64_t kCapacity = 100;
constexpr uint64_t kDataSize = 64 * kKiB;

// Names a byte-wise binary search must tell apart, and names it must not
// find although they sort right next to (or before, or after) the present
// ones.
struct NameSet {
  std::vector<std::string> present;
  std::vector<std::string> absent;
};

// `prefix` padded with `pad` to `length` bytes.
std::string Padded(std::string prefix, char pad, size_t length) {
  prefix.resize(length, pad);
  return prefix;
}

NameSet MakeNames() {
  NameSet names;
  auto& present = names.present;
  auto& absent = names.absent;

  // Siblings: equal but for the last byte, at 64 bytes (the longest name)
  // and at 33. Every other printable byte is present; the bytes between
  // them, the one before the first and the one after the last are not, nor
  // is the shared prefix alone (a prefix of every sibling).
  for (const std::string& stem :
       {Padded("siblings/long/", 'x', 63), Padded("siblings/short/", 'y', 32),
        Padded("siblings/\xc3\xa9t\xc3\xa9/", 'z', 63)}) {
    for (int c = 0x21; c <= 0x7d; c += 2) present.push_back(stem + static_cast<char>(c));
    for (int c = 0x22; c <= 0x7c; c += 2) absent.push_back(stem + static_cast<char>(c));
    absent.push_back(stem + ' ');
    absent.push_back(stem + '~');
    absent.push_back(stem);
  }

  // Chains where each name is a prefix of the next: "a", "ab", "abc", ...
  // to 64 bytes, and "q", "qq", ... to 64. Absent: each link followed by a
  // byte below the next link's (between two links), and a link with its
  // last byte raised (after the rest of its chain).
  std::string chain;
  for (size_t length = 1; length <= format::kMaxRegionNameLength; ++length) {
    chain.push_back(static_cast<char>('a' + (length - 1) % 26));
    present.push_back(chain);
    present.emplace_back(length, 'q');
    if (length < format::kMaxRegionNameLength) {
      absent.push_back(chain + ' ');
      absent.push_back(std::string(length, 'q') + 'p');
    }
  }
  absent.emplace_back("ac");  // after "ab..." and all its longer links
  absent.emplace_back("qr");

  // Multi-byte UTF-8. Byte order is code point order for UTF-8, but not
  // for signed chars (every lead byte is negative, so "\xc3\xa9" would come
  // before "a"), nor for UTF-16 (U+FFFD after U+10000's surrogates), nor for
  // what a reader expects of "é" precomposed and "e" + U+0301.
  for (const char* name : {
           "\xc3\xa9",          // é U+00E9
           "e\xcc\x81",         // e + combining acute U+0301
           "z",                 // 0x7a: before every lead byte
           "\xc3\xbf",          // ÿ U+00FF
           "\xc4\x80",          // Ā U+0100
           "\xe2\x82\xac",      // € U+20AC
           "\xe4\xb8\xad",      // 中 U+4E2D
           "\xef\xbd\x81",      // ａ U+FF41
           "\xef\xbf\xbd",      // U+FFFD
           "\xf0\x90\x80\x80",  // U+10000
           "\xf4\x8f\xbf\xbf",  // U+10FFFF, the largest
           "caf\xc3\xa9",       // "café" precomposed
           "cafe\xcc\x81",      // "café" decomposed
           "cafe",              // a prefix of the decomposed one
       }) {
    present.emplace_back(name);
  }
  // 64-byte names of sixteen 4-byte sequences, the last differing only in
  // its last byte.
  std::string astral;
  for (int i = 0; i < 15; ++i) astral += "\xf0\x90\x80\x80";
  for (int c = 0x80; c <= 0xbf; c += 2) {
    present.push_back(astral + "\xf0\x90\x80" + static_cast<char>(c));
    absent.push_back(astral + "\xf0\x90\x80" + static_cast<char>(c + 1));
  }
  for (const char* name : {
           "e",                                 // a prefix of "e" + U+0301
           "\xc3\xa8",                          // è U+00E8, before é
           "\xc3\xa9\xc3\xa9",                  // after é, before ÿ
           "\xef\xbf\xbc",                      // U+FFFC, before U+FFFD
           "\xf0\x9f\x98\x80",                  // U+1F600, between U+10000 and U+10FFFF
           "caf",                               // a prefix of three present names
           "cafe\xcc\x80",                      // e + grave: before e + acute
           "\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbf",  // after every name
           " ",  // 0x20, the smallest byte allowed: before every name
           "!",  // before every name too
       }) {
    absent.emplace_back(name);
  }

  // Plain names for the rest.
  for (size_t i = 0; present.size() < kRegionCount; ++i) {
    present.push_back("region-" + std::to_string(i));
  }
  // Table order is not name order.
  std::shuffle(present.begin(), present.end(), std::mt19937_64(20240701));
  return names;
}

std::vector<std::byte> PayloadFor(size_t index, uint64_t generation) {
  return PatternBytes(kCapacity, index * 16 + generation);
}

// Mostly kNone; every 250th kAsync, two in a thousand durable.
Durability ModeFor(size_t index) {
  if (index % 1000 == 7) return Durability::kSync;
  if (index % 1000 == 503) return Durability::kPwriteFdatasync;
  if (index % 250 == 11) return Durability::kAsync;
  return Durability::kNone;
}

// Byte-wise unsigned order, written out: what FORMAT.md says the index is.
bool BytewiseLess(const std::string& a, const std::string& b) {
  const size_t common = std::min(a.size(), b.size());
  const int order = std::memcmp(a.data(), b.data(), common);
  return order != 0 ? order < 0 : a.size() < b.size();
}

TEST_CASE("A store of 10,000 compact regions commits and loads every one byte-exact",
          "[checkpoint][scale]") {
  const NameSet names = MakeNames();
  REQUIRE(names.present.size() == kRegionCount);
  const std::set<std::string> unique(names.present.begin(), names.present.end());
  REQUIRE(unique.size() == kRegionCount);
  for (const std::string& name : names.present) {
    INFO(name);
    REQUIRE(ValidateRegionName(name).ok());
  }
  for (const std::string& name : names.absent) {
    INFO(name);
    REQUIRE(unique.count(name) == 0);
  }

  TempDir dir;
  const std::string path = dir.File("many.rgn");
  std::vector<CheckpointSpec> specs;
  for (const std::string& name : names.present) specs.push_back({name, kCapacity});
  MustCreateWithRegions(path, kDataSize, specs);

  // The layout: the table (1.28 MB), the 4 MiB batch journal, the batch log
  // and the intent area push the data area to 6 MiB; each region takes
  // three 8 KiB slots (4 KiB header unit, 100 bytes of payload, rounded up
  // to the page), one after the other.
  const uint64_t page = Io::Default()->PageSize();
  const uint64_t stride = format::AlignUp(slot::kHeaderUnitSize + kCapacity, page);
  const uint64_t data_offset = 6 * kMiB;
  const uint64_t first_slots = data_offset + kDataSize;
  const uint64_t file_size =
      format::AlignUp(first_slots + kRegionCount * 3 * stride, format::kAreaAlignment);
  {
    auto info = ReadStoreInfo(path);
    INFO(info.status().ToString());
    REQUIRE(info.ok());
    const uint32_t flags =
        format::kIncompatCompactSlots | format::kIncompatLargeTable | kDefaultIncompatFlags;
    CHECK(info->incompat_flags == flags);
    CHECK(info->data_offset == data_offset);
    CHECK(info->data_offset ==
          format::DataOffsetFor(kRegionCount, /*batch_log=*/true, format::kDefaultJournalSize));
    CHECK(info->file_size == file_size);
    CHECK(std::filesystem::file_size(path) == file_size);
    CHECK(file_size <= 250 * kMiB);
    REQUIRE(info->regions.size() == kRegionCount);
    size_t wrong = 0;
    for (size_t i = 0; i < kRegionCount; ++i) {
      const RegionEntry& region = info->regions[i];
      const bool right = region.name == names.present[i] && region.capacity == kCapacity &&
                         region.slot_count == 3 && region.layout == SlotLayout::kCompact &&
                         region.slot_alignment == page && region.slot_stride == stride &&
                         region.slots_offset == first_slots + i * 3 * stride;
      if (!right && wrong++ == 0) {
        UNSCOPED_INFO("first wrong entry: "
                      << i << " '" << region.name << "' capacity " << region.capacity
                      << " slots at " << region.slots_offset << " stride " << region.slot_stride);
      }
    }
    CHECK(wrong == 0);
    // The index the lookups search is in unsigned byte order.
    const std::vector<uint32_t> by_name = format::SortedByName(info->regions);
    REQUIRE(by_name.size() == kRegionCount);
    std::vector<std::string> sorted = names.present;
    std::sort(sorted.begin(), sorted.end(), BytewiseLess);
    size_t misplaced = 0;
    for (size_t i = 0; i < kRegionCount; ++i) {
      misplaced += info->regions[by_name[i]].name != sorted[i] ? 1 : 0;
    }
    CHECK(misplaced == 0);
    // The raw superblock agrees.
    const std::vector<std::byte> superblock = PreadFile(path, 0, format::kSuperblockSize);
    CHECK(format::Load32(superblock, format::sb::kIncompatFlags) == flags);
    CHECK(format::Load32(superblock, format::sb::kRegionCount) == kRegionCount);
    CHECK(format::Load64(superblock, format::sb::kDataOffset) == data_offset);
  }

  // Every region committed once, most without a barrier; then one durable
  // commit again into the first region, whose fdatasync makes all durable.
  std::vector<uint64_t> generation(kRegionCount, 1);
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    size_t failed = 0;
    for (size_t i = 0; i < kRegionCount; ++i) {
      auto committed = store.Commit(names.present[i], PayloadFor(i, 1), ModeFor(i));
      if ((!committed.ok() || *committed != 1) && failed++ == 0) {
        UNSCOPED_INFO("first failed commit: region " << i << " '" << names.present[i]
                                                     << "': " << committed.status().ToString());
      }
    }
    CHECK(failed == 0);
    generation[0] = 2;
    auto last = store.Commit(names.present[0], PayloadFor(0, 2), Durability::kPwriteFdatasync);
    REQUIRE(last.ok());
    CHECK(*last == 2);
    CHECK(store.Stats().of(Durability::kNone).commits == kRegionCount - 10 - 10 - 40);
    CHECK(store.Stats().of(Durability::kAsync).commits == 40);
    CHECK(store.Stats().of(Durability::kSync).commits == 10);
    CHECK(store.Stats().of(Durability::kPwriteFdatasync).commits == 11);

    // Names that are not there, whatever sorts next to them.
    std::vector<std::byte> out;
    for (const std::string& name : names.absent) {
      INFO("absent name '" << name << "' (" << name.size() << " bytes)");
      CHECK(store.Load(name, out).status().code() == StatusCode::kNotFound);
      CHECK(store.Commit(name, PayloadFor(0, 3), Durability::kNone).status().code() ==
            StatusCode::kNotFound);
      CHECK(store.Report(name).status().code() == StatusCode::kNotFound);
    }
  }

  // A fresh writer (recovery on open) and a reader load every region.
  for (OpenMode mode : {OpenMode::kReadWrite, OpenMode::kReadOnly}) {
    Store store = MustOpen(path, mode);
    std::vector<std::byte> out;
    size_t wrong = 0;
    for (size_t i = 0; i < kRegionCount; ++i) {
      auto loaded = store.Load(names.present[i], out);
      const bool right =
          loaded.ok() && loaded->generation == generation[i] && out == PayloadFor(i, generation[i]);
      if (!right && wrong++ == 0) {
        UNSCOPED_INFO("first wrong load: region " << i << " '" << names.present[i]
                                                  << "': " << loaded.status().ToString());
      }
    }
    INFO((mode == OpenMode::kReadWrite ? "writer" : "reader"));
    CHECK(wrong == 0);
  }

  // VerifyRegions reads every slot with pread, in table order.
  auto reports = VerifyRegions(path);
  INFO(reports.status().ToString());
  REQUIRE(reports.ok());
  REQUIRE(reports->regions.size() == kRegionCount);
  size_t wrong = 0;
  for (size_t i = 0; i < kRegionCount; ++i) {
    const RegionReport& report = reports->regions[i];
    const bool right =
        report.name == names.present[i] && report.index == i && report.capacity == kCapacity &&
        report.has_commit && report.generation == generation[i] && report.length == kCapacity &&
        report.payload_checked && !report.torn && !report.damaged && report.slots.size() == 3;
    if (!right && wrong++ == 0) {
      UNSCOPED_INFO("first wrong report: " << i << " '" << report.name << "' generation "
                                           << report.generation);
    }
  }
  CHECK(wrong == 0);
}

// "r<index>". Built with append: GCC 12 warns falsely (-Wrestrict) about
// "r" + std::to_string(...).
std::string TableName(uint32_t index) {
  std::string name = "r";
  name += std::to_string(index);
  return name;
}

std::string RegionName(int i) {
  std::string name = "r";
  name += std::to_string(i);
  return name;
}

TEST_CASE("VerifyRegions hands out the store, then each region in order, before it returns",
          "[checkpoint][verify]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  std::vector<CheckpointSpec> specs;
  for (int i = 0; i < 40; ++i) specs.push_back({RegionName(i), 100 + 37 * uint64_t(i)});
  MustCreateWithRegions(path, 0, specs);
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    for (int i = 0; i < 40; i += 3) {
      for (int g = 0; g <= i % 4; ++g) {
        REQUIRE(store.Commit(RegionName(i), PatternBytes(50 + g, i), Durability::kNone).ok());
      }
    }
  }
  for (const bool payloads : {false, true}) {
    INFO("check_payloads " << payloads);
    // ('i', region count) for on_info, ('r', index) for on_region.
    std::vector<std::pair<char, size_t>> events;
    std::vector<RegionReport> handed;
    VerifyOptions options;
    options.check_payloads = payloads;
    options.on_info = [&](const StoreInfo& info) { events.emplace_back('i', info.regions.size()); };
    options.on_region = [&](size_t index, const RegionReport& report) {
      events.emplace_back('r', index);
      handed.push_back(report);
    };
    auto verified = VerifyRegions(path, options);
    REQUIRE(verified.ok());
    std::vector<std::pair<char, size_t>> expected = {{'i', 40}};
    for (size_t i = 0; i < 40; ++i) expected.emplace_back('r', i);
    CHECK(events == expected);
    REQUIRE(handed.size() == verified->regions.size());
    for (size_t i = 0; i < handed.size(); ++i) {
      CHECK(handed[i].name == verified->regions[i].name);
      CHECK(handed[i].generation == verified->regions[i].generation);
      CHECK(handed[i].length == verified->regions[i].length);
      CHECK(handed[i].slots.size() == verified->regions[i].slots.size());
    }
    CHECK(handed[3].generation == 4);
  }
}

TEST_CASE("Region tables of 8128 to 8161 entries move the data area and flag the large ones",
          "[checkpoint][scale][format]") {
  struct Case {
    uint32_t regions;
    uint64_t data_offset;
    bool large_table;
  };
  for (const Case c : {Case{8128, 1 * kMiB, false}, Case{8129, 2 * kMiB, false},
                       Case{8160, 2 * kMiB, false}, Case{8161, 2 * kMiB, true}}) {
    INFO(c.regions << " regions");
    TempDir dir;
    const std::string path = dir.File("table.rgn");
    std::vector<CheckpointSpec> specs;
    for (uint32_t i = 0; i < c.regions; ++i) specs.push_back({TableName(i), 1});
    // Protocol 1 without a batch log: the thresholds are the bare table's.
    MustCreateWithRegions(path, 0, specs, nullptr, /*protocol=*/1);

    auto info = ReadStoreInfo(path);
    INFO(info.status().ToString());
    REQUIRE(info.ok());
    REQUIRE(info->regions.size() == c.regions);
    CHECK(info->data_offset == c.data_offset);
    const uint32_t flags =
        format::kIncompatCompactSlots | (c.large_table ? format::kIncompatLargeTable : 0u);
    CHECK(info->incompat_flags == flags);
    const std::vector<std::byte> superblock = PreadFile(path, 0, format::kSuperblockSize);
    CHECK(format::Load32(superblock, format::sb::kIncompatFlags) == flags);
    // The intent area is the 4 KiB before the data area, after the table.
    const auto intent_offset = intent::AreaOffset(*info);
    REQUIRE(intent_offset.has_value());
    CHECK(*intent_offset == c.data_offset - intent::kAreaSize);
    CHECK(format::kRegionTableOffset + format::RegionTableBytes(c.regions) <= *intent_offset);
    CHECK(info->regions.front().slots_offset == c.data_offset);
    CHECK(info->file_size ==
          format::AlignUp(c.data_offset + uint64_t{c.regions} * 3 * info->regions[0].slot_stride,
                          format::kAreaAlignment));

    // The first and the last region take a durable commit (which marks the
    // intent area) and read back after a reopen.
    const std::string last = TableName(c.regions - 1);
    {
      Store store = MustOpen(path, OpenMode::kReadWrite);
      REQUIRE(store.Commit("r0", PatternBytes(1, 1), Durability::kSync).ok());
      REQUIRE(store.Commit(last, PatternBytes(1, 2), Durability::kPwriteFdatasync).ok());
    }
    Store store = MustOpen(path, OpenMode::kReadWrite);
    CHECK(testing::MustLoad(store, "r0") == PatternBytes(1, 1));
    CHECK(testing::MustLoad(store, last) == PatternBytes(1, 2));
    std::vector<std::byte> out;
    CHECK(store.Load("r1", out).status().code() == StatusCode::kNotFound);  // no commit yet
  }
}

TEST_CASE("Create refuses more than 2^20 regions with kInvalidArgument and leaves no file",
          "[checkpoint][scale]") {
  // Valid, distinct names: only the count is wrong. Short names stay in the
  // strings' own storage, so a million of them cost one allocation.
  std::vector<CheckpointSpec> specs(format::kMaxRegions + 1);
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].name = std::to_string(i);
    specs[i].capacity = 1;
  }
  TempDir dir;
  const std::string path = dir.File("too-many.rgn");
  CreateOptions options;
  options.checkpoints = std::move(specs);
  const Status status = Store::Create(path, 0, options);
  INFO(status.ToString());
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find(std::to_string(format::kMaxRegions + 1) + " regions") !=
        std::string::npos);
  CHECK(dir.List().empty());
  // The most a store may have: the data area after a 128 MiB table.
  CHECK(format::DataOffsetFor(format::kMaxRegions) == 129 * kMiB);
}

}  // namespace
}  // namespace regionstore::testing
