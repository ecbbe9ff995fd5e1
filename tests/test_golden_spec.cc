// Format stability, from the specification's side: a decoder written from
// docs/FORMAT.md alone (golden/spec_decoder.h) reads every golden file under
// tests/golden/ and agrees with ReadStoreInfo and the library on each, and
// the golden store with a new incompat flag is refused by the old rule.
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "golden/golden_expected.h"
#include "golden/golden_writer.h"
#include "golden/spec_decoder.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"
#include "support/files.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

TEST_CASE("A decoder written from FORMAT.md alone agrees with ReadStoreInfo", "[golden]") {
  for (const ExpectedGolden& expected : ExpectedGoldens()) {
    const std::string path = GoldenPath(expected.file_name);
    INFO(path);
    const std::vector<std::byte> file = ReadWholeFile(path);
    REQUIRE(file.size() >= 4096);

    // Superblock, field by field, as the table in FORMAT.md places them.
    CHECK(std::memcmp(file.data(), "RGNSTORE", 8) == 0);
    const uint64_t format_version = LoadLE(file, 8, 4);
    const uint64_t superblock_size = LoadLE(file, 12, 4);
    const uint64_t incompat_flags = LoadLE(file, 16, 4);
    const uint64_t compat_flags = LoadLE(file, 20, 4);
    std::array<uint8_t, 16> uuid{};
    for (size_t i = 0; i < uuid.size(); ++i) uuid[i] = std::to_integer<uint8_t>(file[24 + i]);
    const uint64_t file_size = LoadLE(file, 40, 8);
    const uint64_t data_offset = LoadLE(file, 48, 8);
    const uint64_t data_size = LoadLE(file, 56, 8);
    const uint64_t region_table_offset = LoadLE(file, 64, 8);
    const uint64_t region_count = LoadLE(file, 72, 4);
    const uint64_t region_entry_size = LoadLE(file, 76, 4);
    const uint64_t region_table_checksum = LoadLE(file, 80, 8);
    const uint64_t created_unix_ns = LoadLE(file, 88, 8);
    const uint64_t created_page_size = LoadLE(file, 96, 4);
    const uint64_t superblock_checksum = LoadLE(file, 4088, 8);

    // The documented constraints hold.
    CHECK(format_version == 1);
    CHECK(superblock_size == 4096);
    CHECK(incompat_flags == 0);
    CHECK(compat_flags == 0);
    CHECK(superblock_checksum == XXH3_64bits(file.data(), 4088));
    CHECK((uuid[6] >> 4) == 4);       // RFC 4122 version 4
    CHECK((uuid[8] & 0xc0) == 0x80);  // RFC 4122 variant
    CHECK(file_size == file.size());
    CHECK(file_size % 65536 == 0);
    CHECK(data_offset % 65536 == 0);
    CHECK(region_table_offset == 4096);
    CHECK(region_entry_size == 128);
    CHECK(region_count == 0);
    CHECK(region_table_checksum == XXH3_64bits(file.data() + region_table_offset, 0));
    CHECK(region_table_checksum == kEmptyRegionTableChecksum);
    CHECK(file_size == data_offset + (data_size + 65535) / 65536 * 65536);
    CHECK(std::all_of(file.begin() + 100, file.begin() + 4088,
                      [](std::byte b) { return b == std::byte{0}; }));

    // The library says the same.
    auto info = ReadStoreInfo(path);
    if (!info.ok()) FAIL("ReadStoreInfo refused it: " << info.status().ToString());
    CHECK(info->format_version == format_version);
    CHECK(info->uuid == uuid);
    CHECK(info->file_size == file_size);
    CHECK(info->data_offset == data_offset);
    CHECK(info->data_size == data_size);
    CHECK(info->region_table_offset == region_table_offset);
    CHECK(info->regions.size() == region_count);
    CHECK(info->created_unix_ns == created_unix_ns);
    CHECK(info->created_page_size == created_page_size);
    CHECK(info->superblock_checksum == superblock_checksum);

    // The data area FORMAT.md locates is the one the library reads.
    auto store = Store::Open(path, OpenMode::kReadOnly);
    if (!store.ok()) FAIL("Store::Open read-only refused it: " << store.status().ToString());
    std::vector<std::byte> data(store->data_size());
    REQUIRE(store->Read(0, data).ok());
    REQUIRE(data_offset + data_size <= file.size());
    CHECK(std::equal(data.begin(), data.end(), file.begin() + static_cast<ptrdiff_t>(data_offset)));
  }
}

TEST_CASE("A decoder written from FORMAT.md alone reads the checkpoint golden file",
          "[golden][checkpoint]") {
  const std::string path = GoldenPath(kCheckpointGolden);
  const std::vector<std::byte> file = ReadWholeFile(path);
  REQUIRE(file.size() == kCheckpointGoldenSize);
  CHECK(LoadLE(file, 4088, 8) == kCheckpointGoldenSuperblockChecksum);
  CHECK(FileChecksum(file) == kCheckpointGoldenFileChecksum);
  CHECK(LoadLE(file, 56, 8) == 0);    // data_size
  REQUIRE(LoadLE(file, 72, 4) == 2);  // region_count
  CHECK(LoadLE(file, 80, 8) == XXH3_64bits(file.data() + 4096, 2 * 128));

  struct Expected {
    std::string name;
    uint64_t capacity;
    uint64_t slots_offset;
    uint64_t slot_stride;
    // Per slot: generation (0 = empty), length, payload salt.
    std::array<std::array<uint64_t, 3>, 3> slots;
  };
  const Expected regions[] = {
      {"state", 100, 1048576, 131072, {{{1, 100, 1}, {2, 37, 2}, {0, 0, 0}}}},
      {"blob", 70000, 1048576 + 3 * 131072, 196608, {{{1, 70000, 3}, {0, 0, 0}, {0, 0, 0}}}},
  };
  for (uint32_t r = 0; r < 2; ++r) {
    const Expected& want = regions[r];
    INFO("region " << want.name);
    const size_t entry = 4096 + r * 128;
    const uint64_t name_length = LoadLE(file, entry + 64, 4);
    CHECK(std::string(reinterpret_cast<const char*>(file.data() + entry), name_length) ==
          want.name);
    CHECK(LoadLE(file, entry + 68, 4) == 3);
    CHECK(LoadLE(file, entry + 72, 8) == want.capacity);
    CHECK(LoadLE(file, entry + 80, 8) == want.slots_offset);
    CHECK(LoadLE(file, entry + 88, 8) == want.slot_stride);
    for (uint32_t s = 0; s < 3; ++s) {
      INFO("slot " << s);
      const uint64_t slot = want.slots_offset + s * want.slot_stride;
      const uint64_t header = slot + 61440;
      const uint64_t payload = slot + 65536;
      // Everything before the header unit, and the unit after the header,
      // is zero.
      CHECK(std::all_of(file.begin() + static_cast<ptrdiff_t>(slot),
                        file.begin() + static_cast<ptrdiff_t>(header),
                        [](std::byte b) { return b == std::byte{0}; }));
      CHECK(std::all_of(file.begin() + static_cast<ptrdiff_t>(header + 64),
                        file.begin() + static_cast<ptrdiff_t>(payload),
                        [](std::byte b) { return b == std::byte{0}; }));
      const uint64_t generation = want.slots[s][0];
      if (generation == 0) {
        CHECK(std::all_of(file.begin() + static_cast<ptrdiff_t>(header),
                          file.begin() + static_cast<ptrdiff_t>(header + 64),
                          [](std::byte b) { return b == std::byte{0}; }));
        continue;
      }
      const uint64_t length = want.slots[s][1];
      CHECK(std::memcmp(file.data() + header, "RGNSLOT1", 8) == 0);
      CHECK(LoadLE(file, header + 8, 4) == r);
      CHECK(LoadLE(file, header + 12, 4) == s);
      CHECK(LoadLE(file, header + 16, 8) == generation);
      CHECK(LoadLE(file, header + 24, 8) == length);
      CHECK(LoadLE(file, header + 32, 8) == kCreatedUnixNs);
      CHECK(LoadLE(file, header + 40, 8) == XXH3_64bits(file.data() + payload, length));
      CHECK(LoadLE(file, header + 48, 8) == 0);
      CHECK(LoadLE(file, header + 56, 8) == XXH3_64bits(file.data() + header, 56));
      for (uint64_t i = 0; i < length; ++i) {
        if (file[payload + i] != golden::CommitByte(i, static_cast<uint8_t>(want.slots[s][2]))) {
          FAIL("payload byte " << i << " differs");
        }
      }
    }
  }

  // The library agrees: the newest valid slot of each region.
  auto store = Store::Open(path, OpenMode::kReadOnly);
  if (!store.ok()) FAIL("Store::Open refused it: " << store.status().ToString());
  std::vector<std::byte> out;
  auto state = store->Load("state", out);
  REQUIRE(state.ok());
  CHECK(state->generation == 2);
  CHECK(state->slot == 1);
  CHECK(out.size() == 37);
  CHECK(out[36] == golden::CommitByte(36, 2));
  auto blob = store->Load("blob", out);
  REQUIRE(blob.ok());
  CHECK(blob->generation == 1);
  CHECK(out.size() == 70000);
  auto verified = VerifyRegions(path);
  REQUIRE(verified.ok());
  REQUIRE(verified->regions.size() == 2);
  CHECK(verified->regions[0].slots[0].state == SlotState::kValid);
  CHECK(verified->regions[0].slots[2].state == SlotState::kEmpty);
}

TEST_CASE("A decoder written from FORMAT.md alone agrees with the library on every golden file",
          "[golden]") {
  for (const std::string& path : AllGoldenPaths()) {
    INFO(path);
    const std::vector<std::byte> file = ReadWholeFile(path);
    const SpecStore spec = DecodeBySpec(file);
    INFO("refused: " << spec.refusal);
    REQUIRE(spec.refusal.empty());
    INFO(Join(spec.writer_rules_broken));
    CHECK(spec.writer_rules_broken.empty());
    const std::optional<uint64_t> stray = NonZeroOutsideMeaning(file, spec);
    INFO("a byte FORMAT.md gives no meaning is not zero at file offset " << stray.value_or(0));
    CHECK_FALSE(stray.has_value());
    const std::vector<std::string> disagreements = LibraryDisagreements(path, file, spec);
    INFO(Join(disagreements));
    CHECK(disagreements.empty());
  }
}

// The golden file `golden` against its documented expectations, through the
// decoder above; then the library against the decoder.
void CheckRegionGolden(const ExpectedRegionGolden& golden) {
  const std::string path = PathOf(golden);
  INFO(path);
  const std::vector<std::byte> file = ReadWholeFile(path);
  REQUIRE(file.size() == golden.file_size);
  CHECK(FileChecksum(file) == golden.file_checksum);
  const SpecStore spec = DecodeBySpec(file);
  INFO("refused: " << spec.refusal);
  REQUIRE(spec.refusal.empty());
  INFO(Join(spec.writer_rules_broken));
  CHECK(spec.writer_rules_broken.empty());
  CHECK(spec.superblock_checksum == golden.superblock_checksum);
  CHECK(FormatUuid(spec.uuid) == golden.uuid_text);
  CHECK(spec.incompat_flags == golden.incompat_flags);
  CHECK(spec.data_offset == golden.data_offset);
  CHECK(spec.data_size == golden.data_size);
  CHECK(spec.created_unix_ns == kCreatedUnixNs);
  CHECK(spec.created_page_size == kCreatedPageSize);
  for (uint64_t i = 0; i < golden.data_size; ++i) {
    bool in_pattern = false;
    for (const Range& range : golden.pattern) {
      in_pattern = in_pattern || (i >= range.offset && i - range.offset < range.length);
    }
    const auto want = static_cast<std::byte>(in_pattern ? (i * 131 + 7) & 0xff : 0);
    if (file[golden.data_offset + i] != want) FAIL("data offset " << i << " differs");
  }
  REQUIRE(spec.regions.size() == golden.regions.size());
  for (size_t r = 0; r < golden.regions.size(); ++r) {
    const ExpectedRegion& want = golden.regions[r];
    const SpecRegion& got = spec.regions[r];
    INFO("region " << want.name);
    CHECK(got.name == want.name);
    CHECK(got.capacity == want.capacity);
    CHECK(got.slot_alignment == want.slot_alignment);
    CHECK(got.slots_offset == want.slots_offset);
    CHECK(got.slot_stride == want.slot_stride);
    REQUIRE(got.slots.size() == 3);
    for (size_t s = 0; s < 3; ++s) {
      INFO("slot " << s);
      const SpecSlot& slot = got.slots[s];
      const uint64_t generation = want.slots[s][0];
      if (generation == 0) {
        CHECK(slot.kind == SpecSlot::Kind::kEmpty);
        continue;
      }
      REQUIRE(slot.kind == SpecSlot::Kind::kValid);
      CHECK(slot.counts);
      CHECK(slot.batch_id == want.batch_ids[s]);
      CHECK(slot.generation == generation);
      CHECK(slot.length == want.slots[s][1]);
      CHECK(LoadLE(file, slot.header_offset + 32, 8) == kCreatedUnixNs);
      for (uint64_t i = 0; i < slot.length; ++i) {
        if (file[slot.payload_offset + i] !=
            golden::CommitByte(i, static_cast<uint8_t>(want.slots[s][2]))) {
          FAIL("payload byte " << i << " differs");
        }
      }
    }
  }
  CHECK(spec.batch_log == ((golden.incompat_flags & 0x4) != 0));
  CHECK(spec.watermark == golden.watermark);
  CHECK(spec.watermark_clean == golden.watermark_clean);
  std::vector<uint64_t> record_ids;
  for (const SpecBatchRecord& record : spec.records) record_ids.push_back(record.id);
  CHECK(record_ids == golden.record_ids);
  const std::optional<uint64_t> stray = NonZeroOutsideMeaning(file, spec);
  INFO("a byte FORMAT.md gives no meaning is not zero at file offset " << stray.value_or(0));
  CHECK_FALSE(stray.has_value());
  const std::vector<std::string> disagreements = LibraryDisagreements(path, file, spec);
  INFO(Join(disagreements));
  CHECK(disagreements.empty());
}

TEST_CASE("A decoder written from FORMAT.md alone reads the compact-slot golden file",
          "[golden][checkpoint]") {
  CheckRegionGolden(ExpectedRegionGoldens()[1]);
}

TEST_CASE("A decoder written from FORMAT.md alone reads the large-table golden file",
          "[golden][checkpoint]") {
  CheckRegionGolden(ExpectedRegionGoldens()[2]);
}

TEST_CASE("A decoder written from FORMAT.md alone reads the batch-log golden file",
          "[golden][checkpoint][batch]") {
  const ExpectedRegionGolden golden = ExpectedRegionGoldens()[3];
  REQUIRE(golden.file_name == "v1-batches.rgn");
  CheckRegionGolden(golden);
}

// The batch rules have teeth: changes to the batch-log golden file that a
// power loss could leave make members stop counting, and the library agrees
// with the decoder on each.
TEST_CASE("A decoder written from FORMAT.md alone and the library agree on broken batches",
          "[golden][checkpoint][batch]") {
  const ExpectedRegionGolden golden = ExpectedRegionGoldens()[3];
  const std::vector<std::byte> original = ReadWholeFile(PathOf(golden));
  const SpecStore clean = DecodeBySpec(original);
  REQUIRE(clean.refusal.empty());
  const uint64_t log = clean.batch_log_offset;
  TempDir dir;
  const uint64_t intent = clean.data_offset - 4096;
  const auto zero = [](std::vector<std::byte>& f, uint64_t at, uint64_t n) {
    std::fill_n(f.begin() + static_cast<ptrdiff_t>(at), n, std::byte{0});
  };
  struct Break {
    std::string what;
    std::function<void(std::vector<std::byte>&)> apply;
    std::array<int, 3> content;  // the slot each region (model, step, log) then holds
  };
  // Batch 3 (log slot 1, model slot 2) is above the watermark of 2: it
  // counts only through record 3 and both members. Without the watermark,
  // every batch needs its record.
  const std::vector<Break> breaks = {
      {"nothing", [](auto&) {}, {2, 1, 1}},
      {"record 3 lost", [&](auto& f) { zero(f, log + 3 * 4096, 4096); }, {1, 1, 0}},
      {"log's member of batch 3 lost",
       [&](auto& f) { zero(f, 1179648 + 131072 + 61440, 64); },
       {1, 1, 0}},
      {"the watermark lost", [&](auto& f) { zero(f, intent + 62 * 64, 128); }, {2, 1, 1}},
      {"the watermark and record 2 lost",
       [&](auto& f) {
         zero(f, intent + 62 * 64, 128);
         zero(f, log + 2 * 4096, 4096);
       },
       {2, 0, 1}},
  };
  for (const Break& b : breaks) {
    INFO(b.what);
    std::vector<std::byte> file = original;
    b.apply(file);
    const std::string path = dir.File("broken.rgn");
    WriteWholeFile(path, file);
    const SpecStore spec = DecodeBySpec(file);
    REQUIRE(spec.refusal.empty());
    REQUIRE(spec.regions.size() == 3);
    CHECK(spec.regions[0].content == b.content[0]);
    CHECK(spec.regions[1].content == b.content[1]);
    CHECK(spec.regions[2].content == b.content[2]);
    const std::vector<std::string> disagreements = LibraryDisagreements(path, file, spec);
    INFO(Join(disagreements));
    CHECK(disagreements.empty());
  }
}

// The acceptance rule of the releases before 0.5, as FORMAT.md gave it then
// ("Validating a store", steps 6, 7 and 10): incompat_flags must be 0 (else
// an unsupported version); at most 8160 region entries, the table ending by
// data_offset (else corruption); each entry's bytes 96..127 reserved (zero)
// and every slot on the 64 KiB grid. Only the steps the 0.5 change touched:
// the others are as above.
enum class OldVerdict { kAccepted, kUnsupportedVersion, kCorruption };

OldVerdict OldRule(const std::vector<std::byte>& file, bool check_flags = true) {
  if (check_flags && LoadLE(file, 16, 4) != 0) return OldVerdict::kUnsupportedVersion;
  const uint64_t table_offset = LoadLE(file, 64, 8);
  const uint64_t region_count = LoadLE(file, 72, 4);
  if (region_count > 8160 || table_offset + region_count * 128 > LoadLE(file, 48, 8)) {
    return OldVerdict::kCorruption;
  }
  for (uint64_t r = 0; r < region_count; ++r) {
    const uint64_t e = table_offset + r * 128;
    if (!AllZeroIn(file, e + 96, e + 128) || LoadLE(file, e + 80, 8) % 65536 != 0 ||
        LoadLE(file, e + 88, 8) % 65536 != 0) {
      return OldVerdict::kCorruption;
    }
  }
  return OldVerdict::kAccepted;
}

TEST_CASE("The new-flag golden store refused by the old rule", "[golden][compat]") {
  int v1_accepted = 0;
  int refused = 0;
  for (const std::string& path : AllGoldenPaths()) {
    INFO(path);
    const std::vector<std::byte> file = ReadWholeFile(path);
    const SpecStore spec = DecodeBySpec(file);
    REQUIRE(spec.refusal.empty());
    if (spec.incompat_flags == 0) {
      // Every store a release before 0.5 could make: the old rule takes it.
      CHECK(OldRule(file) == OldVerdict::kAccepted);
      ++v1_accepted;
      continue;
    }
    // A store with a 0.5 flag is an unsupported version to the old rule,
    // not damage.
    CHECK(OldRule(file) == OldVerdict::kUnsupportedVersion);
    if ((spec.incompat_flags & 0x4) != 0) {
      // Readers from 0.5 to 0.7 knew bits 0 and 1 only: bit 2 is an
      // unsupported version to them. Had they ignored it, every batch
      // member's header would fail their check of bytes 48..55 (reserved,
      // zero), so they would call committed slots damaged.
      CHECK((spec.incompat_flags & ~uint32_t{0x3}) != 0);
      int members = 0;
      for (const SpecRegion& region : spec.regions) {
        for (const SpecSlot& slot : region.slots) {
          if (slot.kind == SpecSlot::Kind::kValid && slot.batch_id != 0) {
            CHECK(LoadLE(file, slot.header_offset + 48, 8) != 0);
            ++members;
          }
        }
      }
      // v1-batches.rgn's three batches; v1-protocol2.rgn has the log (every
      // protocol 2 store does) and single commits only;
      // v1-protocol2-journal.rgn one journaled batch of two.
      CHECK(members == (path.ends_with("v1-batches.rgn")             ? 6
                        : path.ends_with("v1-protocol2-journal.rgn") ? 2
                                                                     : 0));
    }
    // And FORMAT.md's reason it must be: a reader that skipped the flag
    // check would take compact entries and the long table as corruption.
    CHECK(OldRule(file, /*check_flags=*/false) == OldVerdict::kCorruption);
    ++refused;
  }
  CHECK(v1_accepted == 4);
  CHECK(refused == 5);
}

}  // namespace
}  // namespace regionstore::testing
