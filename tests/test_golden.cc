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
#include <fstream>
#include <optional>
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

// Where the build extracts a golden file checked in as <name>.tar.gz
// (tests/CMakeLists.txt).
std::string ExtractedGoldenPath(const std::string& file_name) {
  return (std::filesystem::path(REGIONSTORE_GOLDEN_EXTRACTED_DIR) / file_name).string();
}

// A checkpoint region as a golden file holds it.
struct ExpectedRegion {
  std::string name;
  uint64_t capacity = 0;
  uint32_t slot_alignment = 0;  // the entry's field: 0 for 64 KiB-aligned slots
  uint64_t slots_offset = 0;
  uint64_t slot_stride = 0;
  // Per slot: generation (0 = empty), payload length, payload salt.
  std::array<std::array<uint64_t, 3>, 3> slots{};
};

// A golden file with checkpoint regions.
struct ExpectedRegionGolden {
  std::string file_name;
  bool archived = false;  // checked in as file_name + ".tar.gz"
  uint64_t file_size = 0;
  uint64_t data_offset = 0;
  uint64_t data_size = 0;
  uint32_t incompat_flags = 0;
  std::string uuid_text;
  uint64_t superblock_checksum = 0;
  uint64_t file_checksum = 0;
  std::vector<Range> pattern;  // data-area ranges holding the data pattern
  std::vector<ExpectedRegion> regions;
};

std::string PathOf(const ExpectedRegionGolden& golden) {
  return golden.archived ? ExtractedGoldenPath(golden.file_name) : GoldenPath(golden.file_name);
}

constexpr std::array<uint64_t, 3> kEmptySlot = {0, 0, 0};

// tests/golden/README.md, the table and the paragraphs after it.
std::vector<ExpectedRegionGolden> ExpectedRegionGoldens() {
  std::vector<ExpectedRegionGolden> goldens;
  goldens.push_back(
      {"v1-checkpoints.rgn",
       false,
       2031616,
       1048576,
       0,
       0,
       "30313233-3435-4637-b839-3a3b3c3d3e3f",
       0xd23db25b1cc6f7aaULL,
       0x6f332cf12aff4e39ULL,
       {},
       {{"state", 100, 0, 1048576, 131072, {{{1, 100, 1}, {2, 37, 2}, kEmptySlot}}},
        {"blob", 70000, 0, 1441792, 196608, {{{1, 70000, 3}, kEmptySlot, kEmptySlot}}}}});
  // Compact slots on 4 KiB pages: stride roundup(4096 + capacity, 4096);
  // the data area (4099 bytes) ends at 1 MiB + 64 KiB.
  goldens.push_back(
      {"v1-compact-slots.rgn",
       false,
       1703936,
       1048576,
       4099,
       1,
       "40414243-4445-4647-8849-4a4b4c4d4e4f",
       0x9fc044981e8b7048ULL,
       0xeb26b85a8820bc56ULL,
       {{4000, 99}},
       {{"one", 1, 4096, 1114112, 8192, {{{1, 1, 1}, kEmptySlot, kEmptySlot}}},
        {"hundred", 100, 4096, 1138688, 8192, {{{1, 100, 2}, {2, 37, 3}, kEmptySlot}}},
        {"page", 4096, 4096, 1163264, 8192, {{{1, 4096, 4}, kEmptySlot, kEmptySlot}}},
        {"page+1", 4097, 4096, 1187840, 12288, {{{1, 4097, 5}, {2, 4097, 6}, {3, 1, 7}}}},
        // 1224704 rounded up to 64 KiB: 20 KiB of padding before it.
        {"aligned", 100, 0, 1245184, 131072, {{{1, 100, 8}, kEmptySlot, kEmptySlot}}},
        // Ends at 1675264; the file is padded to 1703936.
        {"tail", 5000, 4096, 1638400, 12288, {{kEmptySlot, kEmptySlot, kEmptySlot}}}}});
  // 8,161 regions of capacity 1: 3 x 8 KiB each from the end of the data
  // area at 2 MiB + 64 KiB.
  ExpectedRegionGolden large{"v1-large-table.rgn",
                             true,
                             202768384,
                             2097152,
                             4099,
                             3,
                             "50515253-5455-4657-9859-5a5b5c5d5e5f",
                             0xde68f98e65997f1aULL,
                             0x839feb802fd4de36ULL,
                             {{0, 4099}},
                             {}};
  for (uint64_t i = 0; i < 8161; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "r%05u", static_cast<unsigned>(i));
    large.regions.push_back(
        {name, 1, 4096, 2162688 + i * 24576, 8192, {{kEmptySlot, kEmptySlot, kEmptySlot}}});
  }
  large.regions[0].slots[0] = {1, 1, 1};
  large.regions[4080].slots[0] = {1, 1, 2};
  large.regions[8128].slots[0] = {1, 0, 3};
  large.regions[8160].slots[0] = {1, 1, 4};
  large.regions[8160].slots[1] = {2, 1, 5};
  goldens.push_back(std::move(large));
  return goldens;
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
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".rgn" || name.ends_with(".rgn.tar.gz")) found.insert(name);
  }
  std::set<std::string> expected;
  for (const ExpectedGolden& golden : ExpectedGoldens()) expected.insert(golden.file_name);
  for (const ExpectedRegionGolden& golden : ExpectedRegionGoldens()) {
    expected.insert(golden.archived ? golden.file_name + ".tar.gz" : golden.file_name);
    // An archived one is extracted by the build, at its documented size.
    if (golden.archived) {
      INFO(ExtractedGoldenPath(golden.file_name));
      std::error_code error;
      CHECK(std::filesystem::file_size(ExtractedGoldenPath(golden.file_name), error) ==
            golden.file_size);
    }
  }
  CHECK(found == expected);
  // The generator makes exactly these, archived where documented.
  std::set<std::string> generated;
  for (const golden::GoldenStore& store : golden::GoldenStores()) {
    generated.insert(golden::CheckedInName(store));
  }
  CHECK(generated == expected);
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

// Where two files first differ, read 1 MiB at a time (a golden file may be
// 200 MiB): nullopt when they are identical.
std::optional<uint64_t> FirstDifference(const std::string& a, const std::string& b) {
  std::ifstream in_a(a, std::ios::binary);
  std::ifstream in_b(b, std::ios::binary);
  if (!in_a || !in_b) return 0;
  std::vector<char> buffer_a(1 << 20);
  std::vector<char> buffer_b(1 << 20);
  uint64_t offset = 0;
  while (true) {
    in_a.read(buffer_a.data(), static_cast<std::streamsize>(buffer_a.size()));
    in_b.read(buffer_b.data(), static_cast<std::streamsize>(buffer_b.size()));
    const auto got_a = static_cast<size_t>(in_a.gcount());
    const auto got_b = static_cast<size_t>(in_b.gcount());
    const size_t common = std::min(got_a, got_b);
    const auto mismatch =
        std::mismatch(buffer_a.begin(), buffer_a.begin() + common, buffer_b.begin());
    if (mismatch.first != buffer_a.begin() + common) {
      return offset + static_cast<uint64_t>(mismatch.first - buffer_a.begin());
    }
    if (got_a != got_b) return offset + common;
    if (got_a == 0) return std::nullopt;
    offset += got_a;
  }
}

// Regenerates `store` into `dir` and compares it with the checked-in file
// (for an archived one, the copy the build extracted).
void CheckReproduced(const TempDir& dir, const golden::GoldenStore& store) {
  INFO(store.file_name);
  if (Status status = golden::WriteGoldenStore(dir.path().string(), store); !status.ok()) {
    FAIL("WriteGoldenStore failed: " << status.ToString());
  }
  const std::string generated = dir.File(store.file_name);
  const std::string checked_in =
      store.archived ? ExtractedGoldenPath(store.file_name) : GoldenPath(store.file_name);
  const std::optional<uint64_t> difference = FirstDifference(generated, checked_in);
  std::error_code error;
  INFO("today's writer made " << std::filesystem::file_size(generated, error)
                              << " bytes, the golden file has "
                              << std::filesystem::file_size(checked_in, error)
                              << "; first difference at file offset " << difference.value_or(0));
  INFO(
      "The writer no longer produces format v1 as checked in: that is a format change. "
      "Follow the compatibility rule in docs/FORMAT.md (a new format_version, or a "
      "compat/incompat flag), document it in FORMAT.md in the same commit, then add "
      "golden files for the new format (keep the v1 ones: later releases must still read "
      "them). See tests/golden/README.md.");
  const bool identical = !difference.has_value();
  CHECK(identical);
  std::filesystem::remove(generated, error);
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
  for (const ExpectedRegionGolden& expected : ExpectedRegionGoldens()) {
    expected_names.insert(expected.file_name);
  }
  for (const golden::GoldenStore& store : stores) {
    INFO(store.file_name << " is made by the generator but has no expectations in this file");
    CHECK(expected_names.count(store.file_name) == 1);
  }
  // The archived ones (about 200 MiB) have a case of their own, below.
  for (const golden::GoldenStore& store : stores) {
    if (!store.archived) CheckReproduced(dir, store);
  }
}

TEST_CASE("Today's writer reproduces the archived large-table golden file", "[golden]") {
  TempDir dir;
  int archived = 0;
  for (const golden::GoldenStore& store : golden::GoldenStores()) {
    if (!store.archived) continue;
    ++archived;
    CheckReproduced(dir, store);
  }
  CHECK(archived == 1);
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
  REQUIRE(verified->regions.size() == 2);
  CHECK(verified->regions[0].slots[0].state == SlotState::kValid);
  CHECK(verified->regions[0].slots[2].state == SlotState::kEmpty);
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

// A decoder of docs/FORMAT.md, written from its tables and rules alone: the
// superblock with its incompat_flags, the region table with each entry's
// slot_alignment, both slot layouts, and a data area wherever data_offset
// puts it. It uses nothing from lib/; the cases below hold the library to
// what it finds.
struct SpecSlot {
  enum class Kind { kEmpty, kUnfinished, kValid, kInvalid };
  Kind kind = Kind::kEmpty;
  uint64_t header_offset = 0;  // file offsets
  uint64_t payload_offset = 0;
  uint64_t generation = 0;  // when kValid
  uint64_t length = 0;
  std::string why;  // when kInvalid
};

struct SpecRegion {
  std::string name;
  uint32_t slot_count = 0;
  uint64_t capacity = 0;
  uint64_t slots_offset = 0;
  uint64_t slot_stride = 0;
  uint32_t slot_alignment = 0;  // the field: 0 = 64 KiB-aligned slots
  std::vector<SpecSlot> slots;
  // The region's content: its valid slot of highest generation (lowest
  // index among equals); -1 when it has none.
  int content = -1;
};

struct SpecStore {
  uint32_t incompat_flags = 0;
  std::array<uint8_t, 16> uuid{};
  uint64_t file_size = 0;
  uint64_t data_offset = 0;
  uint64_t data_size = 0;
  uint64_t region_table_offset = 0;
  uint32_t region_count = 0;
  uint64_t created_unix_ns = 0;
  uint32_t created_page_size = 0;
  uint64_t superblock_checksum = 0;
  std::vector<SpecRegion> regions;
  // The first rule of "Validating a store" the file breaks; empty if none.
  std::string refusal;
  // Rules on what "this writer" makes (data_offset, flags, layout) that the
  // file breaks: a reader need not check them, a golden file keeps them.
  std::vector<std::string> writer_rules_broken;
};

bool AllZeroIn(const std::vector<std::byte>& file, uint64_t begin, uint64_t end) {
  return std::all_of(file.begin() + static_cast<ptrdiff_t>(begin),
                     file.begin() + static_cast<ptrdiff_t>(end),
                     [](std::byte b) { return b == std::byte{0}; });
}

uint64_t RoundUp(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

bool PowerOfTwo(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

// FORMAT.md, "Checkpoint slots": the header of slot `s` of region `r`.
SpecSlot DecodeSpecSlot(const std::vector<std::byte>& file, const SpecRegion& region, uint32_t r,
                        uint32_t s) {
  SpecSlot slot;
  const uint64_t start = region.slots_offset + uint64_t{s} * region.slot_stride;
  // 64 KiB-aligned: 61440 zero bytes, the header unit, the payload at 64 KiB.
  // Compact: the header unit first, the payload after its 4096 bytes.
  slot.header_offset = region.slot_alignment == 0 ? start + 61440 : start;
  slot.payload_offset = slot.header_offset + 4096;
  const uint64_t h = slot.header_offset;
  if (AllZeroIn(file, h, h + 8)) {
    slot.kind = AllZeroIn(file, h, h + 64) ? SpecSlot::Kind::kEmpty : SpecSlot::Kind::kUnfinished;
    return slot;
  }
  slot.kind = SpecSlot::Kind::kInvalid;
  const uint64_t generation = LoadLE(file, h + 16, 8);
  const uint64_t length = LoadLE(file, h + 24, 8);
  if (std::memcmp(file.data() + h, "RGNSLOT1", 8) != 0) {
    slot.why = "magic";
  } else if (LoadLE(file, h + 56, 8) != XXH3_64bits(file.data() + h, 56)) {
    slot.why = "header_checksum";
  } else if (LoadLE(file, h + 8, 4) != r || LoadLE(file, h + 12, 4) != s) {
    slot.why = "region or slot";
  } else if (generation == 0 || generation > (uint64_t{1} << 63) - 1) {
    slot.why = "generation";
  } else if (length > region.capacity) {
    slot.why = "length";
  } else if (LoadLE(file, h + 48, 8) != 0) {
    slot.why = "reserved";
  } else if (LoadLE(file, h + 40, 8) != XXH3_64bits(file.data() + slot.payload_offset, length)) {
    slot.why = "payload_checksum";
  } else {
    slot.kind = SpecSlot::Kind::kValid;
    slot.generation = generation;
    slot.length = length;
  }
  return slot;
}

// FORMAT.md, "Validating a store" (steps 2 to 10) and the region table.
SpecStore DecodeBySpec(const std::vector<std::byte>& file) {
  SpecStore store;
  auto refuse = [&](std::string why) {
    store.refusal = std::move(why);
    return store;
  };
  if (file.size() < 8 || std::memcmp(file.data(), "RGNSTORE", 8) != 0) return refuse("magic");
  if (file.size() < 4096) return refuse("truncated");
  if (LoadLE(file, 8, 4) != 1) return refuse("format_version");
  store.superblock_checksum = LoadLE(file, 4088, 8);
  if (store.superblock_checksum != XXH3_64bits(file.data(), 4088)) {
    return refuse("superblock_checksum");
  }
  if (LoadLE(file, 12, 4) != 4096) return refuse("superblock_size");
  // Bit 0 compact slots, bit 1 large region table; any other is unknown.
  store.incompat_flags = static_cast<uint32_t>(LoadLE(file, 16, 4));
  if ((store.incompat_flags & ~uint32_t{0x3}) != 0) return refuse("unknown incompat_flags");
  const bool compact_flag = (store.incompat_flags & 0x1) != 0;
  const bool large_table = (store.incompat_flags & 0x2) != 0;
  const uint64_t compat_flags = LoadLE(file, 20, 4);
  for (size_t i = 0; i < store.uuid.size(); ++i) {
    store.uuid[i] = std::to_integer<uint8_t>(file[24 + i]);
  }
  store.file_size = LoadLE(file, 40, 8);
  store.data_offset = LoadLE(file, 48, 8);
  store.data_size = LoadLE(file, 56, 8);
  store.region_table_offset = LoadLE(file, 64, 8);
  store.region_count = static_cast<uint32_t>(LoadLE(file, 72, 4));
  store.created_unix_ns = LoadLE(file, 88, 8);
  store.created_page_size = static_cast<uint32_t>(LoadLE(file, 96, 4));

  // Step 7, field sanity.
  if (LoadLE(file, 76, 4) != 128) return refuse("region_entry_size");
  if (store.region_table_offset == 0 || store.region_table_offset % 4096 != 0) {
    return refuse("region_table_offset");
  }
  if (store.data_offset % 65536 != 0 || store.data_offset < store.region_table_offset ||
      store.data_offset > (uint64_t{1} << 62)) {
    return refuse("data_offset");
  }
  const uint64_t table_end = store.region_table_offset + uint64_t{store.region_count} * 128;
  if (large_table ? (store.region_count > 1048576 || table_end > store.data_offset - 4096)
                  : (store.region_count > 8160 || table_end > store.data_offset)) {
    return refuse("region_count");
  }
  if (store.data_size > (uint64_t{1} << 62)) return refuse("data_size");
  const uint64_t data_end = store.data_offset + RoundUp(store.data_size, 65536);
  if (store.file_size % 65536 != 0 || store.file_size < data_end) return refuse("file_size");
  // Steps 8 and 9.
  if (compat_flags == 0 && !AllZeroIn(file, 100, 4088)) return refuse("reserved bytes");
  if (store.file_size != file.size()) return refuse("file_size is not the file's size");

  // Step 10, the region table.
  if (LoadLE(file, 80, 8) !=
      XXH3_64bits(file.data() + store.region_table_offset, table_end - store.region_table_offset)) {
    return refuse("region_table_checksum");
  }
  uint64_t previous_end = data_end;
  std::set<std::string> names;
  for (uint32_t r = 0; r < store.region_count; ++r) {
    const uint64_t e = store.region_table_offset + uint64_t{r} * 128;
    const std::string where = "entry " + std::to_string(r) + ": ";
    SpecRegion region;
    const uint64_t name_length = LoadLE(file, e + 64, 4);
    if (name_length < 1 || name_length > 64 || !AllZeroIn(file, e + name_length, e + 64)) {
      return refuse(where + "name_length");
    }
    region.name.assign(reinterpret_cast<const char*>(file.data() + e), name_length);
    region.slot_count = static_cast<uint32_t>(LoadLE(file, e + 68, 4));
    if (region.slot_count < 3 || region.slot_count > 64) return refuse(where + "slot_count");
    region.slot_alignment = static_cast<uint32_t>(LoadLE(file, e + 96, 4));
    const uint64_t a = region.slot_alignment;
    if (a != 0 && (!compact_flag || !PowerOfTwo(a) || a < 4096 || a > 65536)) {
      return refuse(where + "slot_alignment");
    }
    region.capacity = LoadLE(file, e + 72, 8);
    region.slots_offset = LoadLE(file, e + 80, 8);
    region.slot_stride = LoadLE(file, e + 88, 8);
    // The two layouts: offsets and stride on the layout's unit, the stride
    // at least the header space plus the capacity.
    const uint64_t unit = a == 0 ? 65536 : a;
    const uint64_t header_space = a == 0 ? 65536 : 4096;
    if (region.capacity == 0 || region.slots_offset % unit != 0 || region.slot_stride % unit != 0 ||
        region.slot_stride < header_space || region.slot_stride - header_space < region.capacity) {
      return refuse(where + "capacity or alignment");
    }
    if (region.slots_offset < previous_end || region.slots_offset > store.file_size ||
        (store.file_size - region.slots_offset) / region.slot_count < region.slot_stride) {
      return refuse(where + "placement");
    }
    if (!AllZeroIn(file, e + 100, e + 128)) return refuse(where + "reserved bytes");
    if (!names.insert(region.name).second) return refuse(where + "duplicate name");
    // This writer: each region at the end of the previous one rounded up to
    // its own alignment, strides as the layouts table gives them.
    const uint64_t writer_stride =
        a == 0 ? 65536 + RoundUp(region.capacity, 65536) : RoundUp(4096 + region.capacity, a);
    if (region.slots_offset != RoundUp(previous_end, unit) || region.slot_stride != writer_stride ||
        region.slot_count != 3) {
      store.writer_rules_broken.push_back(where + "not laid out as this writer does");
    }
    previous_end = region.slots_offset + uint64_t{region.slot_count} * region.slot_stride;
    for (uint32_t s = 0; s < region.slot_count; ++s) {
      region.slots.push_back(DecodeSpecSlot(file, region, r, s));
      const SpecSlot& slot = region.slots.back();
      if (slot.kind == SpecSlot::Kind::kValid &&
          (region.content < 0 || slot.generation > region.slots[region.content].generation)) {
        region.content = static_cast<int>(s);
      }
    }
    store.regions.push_back(std::move(region));
  }

  // What this writer puts in the superblock.
  const uint64_t mib = 1048576;
  if (store.data_offset != RoundUp(4096 + uint64_t{store.region_count} * 128 + 4096, mib)) {
    store.writer_rules_broken.push_back(
        "data_offset is not the first 1 MiB boundary after the "
        "table and the intent area");
  }
  bool any_compact = false;
  for (const SpecRegion& region : store.regions) any_compact |= region.slot_alignment != 0;
  if (compact_flag != any_compact) store.writer_rules_broken.push_back("incompat_flags bit 0");
  if (large_table != (store.region_count > 8160)) {
    store.writer_rules_broken.push_back("incompat_flags bit 1");
  }
  if (store.file_size != RoundUp(previous_end, 65536)) {
    store.writer_rules_broken.push_back("file_size is not the end of the last slot");
  }
  return store;
}

// The first non-zero byte of `file` outside what `store` gives a meaning
// (superblock, region table, data area, slot headers, the payloads of valid
// slots); nullopt if there is none. FORMAT.md: everything else is written
// as zero, and a golden file's intent area is zero too.
std::optional<uint64_t> NonZeroOutsideMeaning(const std::vector<std::byte>& file,
                                              const SpecStore& store) {
  std::vector<std::pair<uint64_t, uint64_t>> meaning = {
      {0, 4096},
      {store.region_table_offset, store.region_table_offset + uint64_t{store.region_count} * 128},
      {store.data_offset, store.data_offset + store.data_size}};
  for (const SpecRegion& region : store.regions) {
    for (const SpecSlot& slot : region.slots) {
      if (slot.kind == SpecSlot::Kind::kEmpty) continue;
      meaning.emplace_back(slot.header_offset, slot.header_offset + 64);
      if (slot.kind == SpecSlot::Kind::kValid) {
        meaning.emplace_back(slot.payload_offset, slot.payload_offset + slot.length);
      }
    }
  }
  std::sort(meaning.begin(), meaning.end());
  uint64_t at = 0;
  auto check_gap = [&](uint64_t end) -> std::optional<uint64_t> {
    for (uint64_t i = at; i < end; ++i) {
      if (file[i] != std::byte{0}) return i;
    }
    return std::nullopt;
  };
  for (const auto& [begin, end] : meaning) {
    if (begin > at) {
      if (auto found = check_gap(begin)) return found;
    }
    at = std::max(at, end);
  }
  return check_gap(file.size());
}

// Everything in which the library (ReadStoreInfo, VerifyRegions, a read-only
// Store's Read and Load) disagrees with `spec`, decoded from the same file.
std::vector<std::string> LibraryDisagreements(const std::string& path,
                                              const std::vector<std::byte>& file,
                                              const SpecStore& spec) {
  std::vector<std::string> out;
  auto expect = [&](bool same, const std::string& what) {
    if (!same) out.push_back(what);
  };
  auto info = ReadStoreInfo(path);
  if (!info.ok()) return {"ReadStoreInfo refused it: " + info.status().ToString()};
  expect(info->incompat_flags == spec.incompat_flags, "incompat_flags");
  expect(info->uuid == spec.uuid, "uuid");
  expect(info->file_size == spec.file_size, "file_size");
  expect(info->data_offset == spec.data_offset, "data_offset");
  expect(info->data_size == spec.data_size, "data_size");
  expect(info->region_table_offset == spec.region_table_offset, "region_table_offset");
  expect(info->created_unix_ns == spec.created_unix_ns, "created_unix_ns");
  expect(info->created_page_size == spec.created_page_size, "created_page_size");
  expect(info->superblock_checksum == spec.superblock_checksum, "superblock_checksum");
  if (info->regions.size() != spec.regions.size()) {
    out.push_back("ReadStoreInfo lists " + std::to_string(info->regions.size()) + " regions");
    return out;
  }
  for (size_t r = 0; r < spec.regions.size(); ++r) {
    const SpecRegion& want = spec.regions[r];
    const RegionEntry& got = info->regions[r];
    const std::string where = "region " + want.name + ": ";
    expect(got.name == want.name, where + "name");
    expect(got.capacity == want.capacity, where + "capacity");
    expect(got.slot_count == want.slot_count, where + "slot_count");
    expect(got.slots_offset == want.slots_offset, where + "slots_offset");
    expect(got.slot_stride == want.slot_stride, where + "slot_stride");
    expect(got.layout == (want.slot_alignment == 0 ? SlotLayout::kAligned : SlotLayout::kCompact),
           where + "layout");
    expect(got.slot_alignment == (want.slot_alignment == 0 ? 65536 : want.slot_alignment),
           where + "slot_alignment");
  }

  auto verified = VerifyRegions(path);
  if (!verified.ok()) {
    out.push_back("VerifyRegions refused it: " + verified.status().ToString());
  } else if (verified->regions.size() != spec.regions.size()) {
    out.push_back("VerifyRegions lists " + std::to_string(verified->regions.size()) + " regions");
  } else {
    for (size_t r = 0; r < spec.regions.size(); ++r) {
      const SpecRegion& want = spec.regions[r];
      const RegionReport& got = verified->regions[r];
      const std::string where = "verify, region " + want.name + ": ";
      expect(got.name == want.name && got.index == r, where + "name or index");
      expect(got.has_commit == (want.content >= 0), where + "has_commit");
      if (want.content >= 0 && got.has_commit) {
        const SpecSlot& newest = want.slots[static_cast<size_t>(want.content)];
        expect(got.active_slot == static_cast<uint32_t>(want.content), where + "active_slot");
        expect(got.generation == newest.generation, where + "generation");
        expect(got.length == newest.length, where + "length");
      }
      expect(!got.torn && !got.damaged, where + "torn or damaged");
      if (got.slots.size() != want.slots.size()) {
        out.push_back(where + "slot count");
        continue;
      }
      for (size_t s = 0; s < want.slots.size(); ++s) {
        const SpecSlot& slot = want.slots[s];
        const SlotState state =
            slot.kind == SpecSlot::Kind::kValid ? SlotState::kValid
            : slot.kind == SpecSlot::Kind::kEmpty || slot.kind == SpecSlot::Kind::kUnfinished
                ? SlotState::kEmpty
                : SlotState::kIncomplete;
        expect(got.slots[s].state == state, where + "slot " + std::to_string(s) + " state");
        expect(got.slots[s].generation == slot.generation,
               where + "slot " + std::to_string(s) + " generation");
      }
    }
  }

  auto store = Store::Open(path, OpenMode::kReadOnly);
  if (!store.ok()) {
    out.push_back("Store::Open read-only refused it: " + store.status().ToString());
    return out;
  }
  std::vector<std::byte> data(store->data_size());
  if (!store->Read(0, data).ok() ||
      !std::equal(data.begin(), data.end(),
                  file.begin() + static_cast<ptrdiff_t>(spec.data_offset))) {
    out.push_back("the data area read through Store is not the bytes at data_offset");
  }
  std::vector<std::byte> payload;
  for (const SpecRegion& want : spec.regions) {
    const std::string where = "Load(" + want.name + "): ";
    auto loaded = store->Load(want.name, payload);
    if (want.content < 0) {
      expect(!loaded.ok() && loaded.status().code() == StatusCode::kNotFound,
             where + "not kNotFound for a region without a commit");
      continue;
    }
    if (!loaded.ok()) {
      out.push_back(where + loaded.status().ToString());
      continue;
    }
    const SpecSlot& newest = want.slots[static_cast<size_t>(want.content)];
    expect(loaded->slot == static_cast<uint32_t>(want.content), where + "slot");
    expect(loaded->generation == newest.generation, where + "generation");
    expect(payload.size() == newest.length &&
               std::equal(payload.begin(), payload.end(),
                          file.begin() + static_cast<ptrdiff_t>(newest.payload_offset)),
           where + "payload is not the bytes at the slot's payload offset");
  }
  return out;
}

// Every golden file's path, archived ones at their extracted copy.
std::vector<std::string> AllGoldenPaths() {
  std::vector<std::string> paths;
  for (const ExpectedGolden& golden : ExpectedGoldens())
    paths.push_back(GoldenPath(golden.file_name));
  for (const ExpectedRegionGolden& golden : ExpectedRegionGoldens())
    paths.push_back(PathOf(golden));
  return paths;
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
    // And FORMAT.md's reason it must be: a reader that skipped the flag
    // check would take compact entries and the long table as corruption.
    CHECK(OldRule(file, /*check_flags=*/false) == OldVerdict::kCorruption);
    ++refused;
  }
  CHECK(v1_accepted == 4);
  CHECK(refused == 2);
}

}  // namespace
}  // namespace regionstore
