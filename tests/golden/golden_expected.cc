#include "golden/golden_expected.h"

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
#include "support/files.h"
#include "support/temp_dir.h"

namespace regionstore::testing {

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

std::string GoldenPath(const std::string& file_name) {
  return (std::filesystem::path(REGIONSTORE_GOLDEN_DIR) / file_name).string();
}

std::string ExtractedGoldenPath(const std::string& file_name) {
  return (std::filesystem::path(REGIONSTORE_GOLDEN_EXTRACTED_DIR) / file_name).string();
}

std::string PathOf(const ExpectedRegionGolden& golden) {
  return golden.archived ? ExtractedGoldenPath(golden.file_name) : GoldenPath(golden.file_name);
}

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
  // A batch log: 131,072 bytes before the intent area, so the table, the
  // log and the intent area still end by 1 MiB. Batch 1: model 2, step 1;
  // batch 2: step 2, log 1; batch 3 (kNone, above the watermark of 2): log
  // 2, model 3.
  goldens.push_back(
      {"v1-batches.rgn",
       false,
       1572864,
       1048576,
       4099,
       5,
       "60616263-6465-4667-a869-6a6b6c6d6e6f",
       0xfe135bb390673597ULL,
       0x58c832aa8c1231aeULL,
       {{0, 100}},
       {{"model",
         5000,
         4096,
         1114112,
         12288,
         {{{1, 5000, 1}, {2, 3000, 2}, {3, 37, 7}}},
         {0, 1, 3}},
        {"step", 8, 4096, 1150976, 8192, {{{1, 8, 3}, {2, 8, 4}, kEmptySlot}}, {1, 2, 0}},
        {"log", 100, 0, 1179648, 131072, {{{1, 100, 5}, {2, 1, 6}, kEmptySlot}}, {2, 3, 0}}},
       2,
       false,
       {1, 2, 3}});
  // Protocol 2 (0.12): the layout of protocol 1 with a batch log,
  // incompat_flags bits 3 and 2 set.
  // "state" compact from the end of the data area (1 MiB + 64 KiB), "blob"
  // 64 KiB-aligned after it.
  goldens.push_back(
      {"v1-protocol2.rgn",
       false,
       1769472,
       1048576,
       4099,
       13,
       "70717273-7475-4677-b879-7a7b7c7d7e7f",
       0x6e00db695e7c43aeULL,
       0x68585d2ed37eef9aULL,
       {{4000, 99}},
       {{"state", 100, 4096, 1114112, 8192, {{{1, 100, 1}, {2, 37, 2}, {3, 5, 4}}}},
        {"blob", 70000, 0, 1179648, 196608, {{{1, 70000, 3}, kEmptySlot, kEmptySlot}}}}});
  // Protocol 2 with its journal (0.13): incompat_flags bits 4, 3, 2 and 0;
  // the 256 KiB journal at 651264, before the batch log at 913408. Batch 1
  // is journaled: its record is the journal's first, and the batch log's
  // unit 1. No whole-file barrier came after it, so the watermark stays the
  // open one (W 0, not clean).
  goldens.push_back(
      {"v1-protocol2-journal.rgn",
       false,
       1769472,
       1048576,
       4099,
       29,
       "80818283-8485-4687-8889-8a8b8c8d8e8f",
       0x57d777c80d84d97cULL,
       0x3cdb440c575a55daULL,
       {{4000, 99}},
       {{"state", 100, 4096, 1114112, 8192, {{{1, 100, 1}, {2, 37, 2}, {3, 5, 4}}}, {0, 1, 0}},
        {"blob", 70000, 0, 1179648, 196608, {{{1, 70000, 3}, kEmptySlot, kEmptySlot}}, {1, 0, 0}}},
       0,
       false,
       {1}});
  return goldens;
}

namespace {

std::string Hex(uint64_t value) {
  char buffer[19];
  std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace

std::string Join(const std::vector<std::string>& lines) {
  std::string joined;
  for (const std::string& line : lines) joined += line + "\n";
  return joined;
}

namespace {

uint8_t ExpectedDataByte(const ExpectedGolden& expected, uint64_t data_offset) {
  for (const Range& range : expected.pattern) {
    if (data_offset >= range.offset && data_offset - range.offset < range.length) {
      return static_cast<uint8_t>((data_offset * 131 + 7) & 0xff);
    }
  }
  return 0;
}

}  // namespace

uint64_t FileChecksum(const std::vector<std::byte>& bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

namespace {

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

}  // namespace

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

uint64_t LoadLE(const std::vector<std::byte>& bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= uint64_t{std::to_integer<uint8_t>(bytes[offset + i])} << (8 * i);
  }
  return value;
}

}  // namespace regionstore::testing
