// Format stability: the golden store files under tests/golden/ (made by
// regionstore_make_golden, see tests/golden/README.md) are read byte-exact by
// today's code, today's writer still produces them byte for byte, and a
// decoder written from docs/FORMAT.md alone agrees with the library.
//
// The expected values are hard-coded here on purpose, not taken from
// golden_writer.h: if the writer or the files change, these tests fail.
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "golden/golden_writer.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"
#include "support/temp_dir.h"

namespace regionstore {
namespace {

using testing::ReadWholeFile;
using testing::TempDir;
using testing::WriteWholeFile;

// What every v1 golden file shares.
constexpr uint32_t kFormatVersion = 1;
constexpr uint64_t kDataOffset = 1048576;
constexpr uint64_t kRegionTableOffset = 4096;
constexpr uint64_t kCreatedUnixNs = 1'780'000'000'000'000'000ULL;
constexpr uint32_t kCreatedPageSize = 4096;
// FORMAT.md: XXH3-64 of the empty input, the region table checksum of a
// store without regions.
constexpr uint64_t kEmptyRegionTableChecksum = 0x2d06800538d394c2ULL;

struct Range {
  uint64_t offset = 0;  // data offset
  uint64_t length = 0;
};

struct ExpectedGolden {
  std::string file_name;
  uint64_t data_size = 0;
  uint64_t file_size = 0;
  std::array<uint8_t, 16> uuid{};
  std::string uuid_text;
  uint64_t superblock_checksum = 0;
  uint64_t file_checksum = 0;  // XXH3-64 of the whole file
  // Data-area ranges holding the pattern (i * 131 + 7) & 0xff, i the data
  // offset; every other byte of the file outside the superblock is zero.
  std::vector<Range> pattern;
};

// The checked-in files, as tests/golden/README.md describes them.
std::vector<ExpectedGolden> ExpectedGoldens() {
  return {
      {"v1-empty.rgn",
       0,
       1048576,
       {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x46, 0x07, 0x88, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e,
        0x0f},
       "00010203-0405-4607-8809-0a0b0c0d0e0f",
       0xbc0dcf15d44fdec0ULL,
       0x28f7a4be6b8c6dddULL,
       {}},
      {"v1-small.rgn",
       4099,
       1114112,
       {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x46, 0x17, 0x98, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e,
        0x1f},
       "10111213-1415-4617-9819-1a1b1c1d1e1f",
       0xb63870c25187ad62ULL,
       0x9767c79473d77d1fULL,
       {{0, 100}, {4000, 99}}},
      {"v1-64k.rgn",
       65536,
       1114112,
       {0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x46, 0x27, 0xa8, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e,
        0x2f},
       "20212223-2425-4627-a829-2a2b2c2d2e2f",
       0xd1533eb840d05ddeULL,
       0x017ef8400af2a44cULL,
       {{0, 65536}}},
  };
}

// The golden store with checkpoint regions (tests/golden/README.md), checked
// by its own cases below.
const std::string kCheckpointGolden = "v1-checkpoints.rgn";
constexpr uint64_t kCheckpointGoldenSize = 2031616;
constexpr uint64_t kCheckpointGoldenSuperblockChecksum = 0xd23db25b1cc6f7aaULL;
constexpr uint64_t kCheckpointGoldenFileChecksum = 0x6f332cf12aff4e39ULL;

std::string GoldenPath(const std::string& file_name) {
  return (std::filesystem::path(REGIONSTORE_GOLDEN_DIR) / file_name).string();
}

std::string Hex(uint64_t value) {
  char buffer[19];
  std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string joined;
  for (const std::string& line : lines) joined += line + "\n";
  return joined;
}

uint8_t ExpectedDataByte(const ExpectedGolden& expected, uint64_t data_offset) {
  for (const Range& range : expected.pattern) {
    if (data_offset >= range.offset && data_offset - range.offset < range.length) {
      return static_cast<uint8_t>((data_offset * 131 + 7) & 0xff);
    }
  }
  return 0;
}

uint64_t FileChecksum(const std::vector<std::byte>& bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

// Adds a line for the first byte of file[begin, end) that is not zero.
void ExpectZeros(const std::vector<std::byte>& file, uint64_t begin, uint64_t end,
                 const std::string& area, std::vector<std::string>& differences) {
  end = std::min<uint64_t>(end, file.size());
  for (uint64_t offset = begin; offset < end; ++offset) {
    if (file[offset] != std::byte{0}) {
      differences.push_back(area + ": file offset " + std::to_string(offset) + " is " +
                            std::to_string(std::to_integer<int>(file[offset])) + ", want 0");
      return;
    }
  }
}

// Everything that differs between the store at `path` and `expected`, read
// through today's library (ReadStoreInfo, a read-only Store) plus a plain
// read of the bytes no API exposes (reserved superblock bytes, the rest of
// the header area, the padding after the data area). Empty when they match.
std::vector<std::string> Differences(const std::string& path, const ExpectedGolden& expected) {
  std::vector<std::string> differences;
  auto expect = [&](bool same, const std::string& field, const std::string& got,
                    const std::string& want) {
    if (!same) differences.push_back(field + ": got " + got + ", want " + want);
  };

  auto info = ReadStoreInfo(path);
  if (!info.ok()) {
    differences.push_back("ReadStoreInfo refused it: " + info.status().ToString());
    return differences;
  }
  expect(info->format_version == kFormatVersion, "format_version",
         std::to_string(info->format_version), std::to_string(kFormatVersion));
  expect(info->uuid == expected.uuid, "uuid", FormatUuid(info->uuid), FormatUuid(expected.uuid));
  expect(FormatUuid(info->uuid) == expected.uuid_text, "uuid text", FormatUuid(info->uuid),
         expected.uuid_text);
  expect(info->file_size == expected.file_size, "file_size", std::to_string(info->file_size),
         std::to_string(expected.file_size));
  expect(info->data_offset == kDataOffset, "data_offset", std::to_string(info->data_offset),
         std::to_string(kDataOffset));
  expect(info->data_size == expected.data_size, "data_size", std::to_string(info->data_size),
         std::to_string(expected.data_size));
  expect(info->region_table_offset == kRegionTableOffset, "region_table_offset",
         std::to_string(info->region_table_offset), std::to_string(kRegionTableOffset));
  expect(info->regions.empty(), "region count", std::to_string(info->regions.size()), "0");
  expect(info->created_unix_ns == kCreatedUnixNs, "created_unix_ns",
         std::to_string(info->created_unix_ns), std::to_string(kCreatedUnixNs));
  expect(info->created_page_size == kCreatedPageSize, "created_page_size",
         std::to_string(info->created_page_size), std::to_string(kCreatedPageSize));
  expect(info->superblock_checksum == expected.superblock_checksum, "superblock_checksum",
         Hex(info->superblock_checksum), Hex(expected.superblock_checksum));

  auto store = Store::Open(path, OpenMode::kReadOnly);
  if (!store.ok()) {
    differences.push_back("Store::Open read-only refused it: " + store.status().ToString());
  } else {
    expect(store->data_size() == expected.data_size, "Store::data_size",
           std::to_string(store->data_size()), std::to_string(expected.data_size));
    std::vector<std::byte> data(store->data_size());
    if (Status s = store->Read(0, data); !s.ok()) {
      differences.push_back("Store::Read of the data area failed: " + s.ToString());
    } else {
      uint64_t mismatches = 0;
      for (uint64_t i = 0; i < data.size(); ++i) {
        const int got = std::to_integer<int>(data[i]);
        const int want = ExpectedDataByte(expected, i);
        if (got != want && mismatches++ == 0) {
          differences.push_back("data area: data offset " + std::to_string(i) + " is " +
                                std::to_string(got) + ", want " + std::to_string(want));
        }
      }
      if (mismatches > 1) {
        differences.push_back("data area: " + std::to_string(mismatches) + " bytes differ");
      }
    }
  }

  const std::vector<std::byte> file = ReadWholeFile(path);
  expect(file.size() == expected.file_size, "real file size", std::to_string(file.size()),
         std::to_string(expected.file_size));
  ExpectZeros(file, 100, 4088, "superblock reserved bytes", differences);
  ExpectZeros(file, kRegionTableOffset, kDataOffset, "header area after the superblock",
              differences);
  ExpectZeros(file, kDataOffset + expected.data_size, expected.file_size,
              "padding after the data area", differences);
  expect(FileChecksum(file) == expected.file_checksum, "XXH3-64 of the whole file",
         Hex(FileChecksum(file)), Hex(expected.file_checksum));
  return differences;
}

// Little-endian unsigned integer of `width` bytes at `offset`, as FORMAT.md
// defines every field.
uint64_t LoadLE(const std::vector<std::byte>& bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= uint64_t{std::to_integer<uint8_t>(bytes[offset + i])} << (8 * i);
  }
  return value;
}

TEST_CASE("The golden directory holds exactly the documented golden files", "[golden]") {
  std::set<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(REGIONSTORE_GOLDEN_DIR)) {
    if (entry.path().extension() == ".rgn") found.insert(entry.path().filename().string());
  }
  std::set<std::string> expected;
  for (const ExpectedGolden& golden : ExpectedGoldens()) expected.insert(golden.file_name);
  expected.insert(kCheckpointGolden);
  CHECK(found == expected);
}

TEST_CASE("Today's code reads every golden file byte-exact", "[golden]") {
  for (const ExpectedGolden& expected : ExpectedGoldens()) {
    const std::string path = GoldenPath(expected.file_name);
    INFO(path);
    const std::vector<std::string> differences = Differences(path, expected);
    INFO(Join(differences));
    CHECK(differences.empty());
  }
}

TEST_CASE("Today's writer reproduces every golden file byte for byte", "[golden]") {
  TempDir dir;
  const std::vector<golden::GoldenStore> stores = golden::GoldenStores();
  REQUIRE_FALSE(stores.empty());
  // Every golden file the generator makes has hard-coded expectations here
  // (after a format change, older files keep their expectations but leave
  // the generator: see tests/golden/README.md).
  std::set<std::string> expected_names;
  for (const ExpectedGolden& expected : ExpectedGoldens()) {
    expected_names.insert(expected.file_name);
  }
  expected_names.insert(kCheckpointGolden);
  for (const golden::GoldenStore& store : stores) {
    INFO(store.file_name << " is made by the generator but has no expectations in this file");
    CHECK(expected_names.count(store.file_name) == 1);
  }

  for (const golden::GoldenStore& store : stores) {
    INFO(store.file_name);
    if (Status status = golden::WriteGoldenStore(dir.path().string(), store); !status.ok()) {
      FAIL("WriteGoldenStore failed: " << status.ToString());
    }
    const std::vector<std::byte> generated = ReadWholeFile(dir.File(store.file_name));
    const std::vector<std::byte> checked_in = ReadWholeFile(GoldenPath(store.file_name));
    const auto mismatch =
        std::mismatch(generated.begin(), generated.end(), checked_in.begin(), checked_in.end());
    const uint64_t first_difference = mismatch.first - generated.begin();
    INFO("today's writer made " << generated.size() << " bytes, the golden file has "
                                << checked_in.size() << "; first difference at file offset "
                                << first_difference);
    INFO(
        "The writer no longer produces format v1 as checked in: that is a format change. "
        "Follow the compatibility rule in docs/FORMAT.md (a new format_version, or a "
        "compat/incompat flag), document it in FORMAT.md in the same commit, then add "
        "golden files for the new format (keep the v1 ones: later releases must still read "
        "them). See tests/golden/README.md.");
    // A bool, not the vectors: Catch would print a megabyte of "{?}".
    const bool identical = generated == checked_in;
    CHECK(identical);
  }
}

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
  CHECK(LoadLE(file, 56, 8) == 0);  // data_size
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
  REQUIRE(verified->size() == 2);
  CHECK((*verified)[0].slots[0].state == SlotState::kValid);
  CHECK((*verified)[0].slots[2].state == SlotState::kEmpty);
}

TEST_CASE("A golden-file check catches one changed byte anywhere in the file", "[golden]") {
  // The check above must be able to fail: damage a copy of v1-small.rgn one
  // byte at a time, in every kind of area, and expect a difference each time.
  const ExpectedGolden expected = ExpectedGoldens()[1];
  REQUIRE(expected.file_name == "v1-small.rgn");
  const std::vector<std::byte> original = ReadWholeFile(GoldenPath(expected.file_name));
  TempDir dir;
  const std::string copy = dir.File(expected.file_name);
  WriteWholeFile(copy, original);
  REQUIRE(Differences(copy, expected).empty());

  struct Damage {
    uint64_t file_offset;
    const char* where;
  };
  const Damage damages[] = {
      {9, "format_version"},
      {30, "uuid"},
      {57, "data_size"},
      {90, "created_unix_ns"},
      {200, "reserved superblock byte"},
      {4088, "superblock_checksum"},
      {4096 + 17, "header area past the superblock (no checksum covers it)"},
      {kDataOffset + 50, "a pattern byte"},
      {kDataOffset + 2000, "a zero byte between pattern ranges"},
      {kDataOffset + 4098, "the last byte of the data area"},
      {kDataOffset + 4099, "the first padding byte after the data area"},
      {expected.file_size - 1, "the last byte of the file"},
  };
  for (const Damage& damage : damages) {
    INFO(damage.where << " at file offset " << damage.file_offset);
    std::vector<std::byte> damaged = original;
    damaged[damage.file_offset] ^= std::byte{0x01};
    WriteWholeFile(copy, damaged);
    CHECK_FALSE(Differences(copy, expected).empty());
  }

  // A superblock that is valid but not the golden one (a writer that stamps
  // another time, resealed with a correct checksum) is caught too.
  std::vector<std::byte> resealed = original;
  resealed[88] ^= std::byte{0x01};  // created_unix_ns
  const uint64_t checksum = XXH3_64bits(resealed.data(), 4088);
  for (size_t i = 0; i < 8; ++i) {
    resealed[4088 + i] = static_cast<std::byte>((checksum >> (8 * i)) & 0xff);
  }
  WriteWholeFile(copy, resealed);
  REQUIRE(ReadStoreInfo(copy).ok());
  CHECK_FALSE(Differences(copy, expected).empty());
}

}  // namespace
}  // namespace regionstore
