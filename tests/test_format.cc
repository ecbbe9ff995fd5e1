// Format v1 encoding, checked byte by byte against docs/FORMAT.md.
#include <catch2/catch.hpp>
#include <cstring>

#include "format.h"

namespace regionstore::testing {
namespace {

uint64_t LoadLE(const std::vector<std::byte>& bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= uint64_t{std::to_integer<uint8_t>(bytes[offset + i])} << (8 * i);
  }
  return value;
}

StoreInfo SampleInfo() {
  StoreInfo info;
  info.format_version = 1;
  for (size_t i = 0; i < info.uuid.size(); ++i) info.uuid[i] = static_cast<uint8_t>(0xa0 + i);
  info.data_offset = format::kDataOffset;
  info.data_size = 16 * format::kMiB;
  info.file_size = format::kDataOffset + info.data_size;
  info.region_table_offset = format::kRegionTableOffset;
  info.created_unix_ns = 0x0102030405060708ULL;
  info.created_page_size = 4096;
  return info;
}

TEST_CASE("The superblock puts every field at its documented offset, little-endian", "[format]") {
  const StoreInfo info = SampleInfo();
  const std::vector<std::byte> header = format::EncodeHeader(info);
  REQUIRE(header.size() == format::kDataOffset);
  CHECK(std::memcmp(header.data(), "RGNSTORE", 8) == 0);
  CHECK(LoadLE(header, 8, 4) == 1);                 // format_version
  CHECK(LoadLE(header, 12, 4) == 4096);             // superblock_size
  CHECK(LoadLE(header, 16, 4) == 0);                // incompat_flags
  CHECK(LoadLE(header, 20, 4) == 0);                // compat_flags
  CHECK(std::to_integer<int>(header[24]) == 0xa0);  // uuid
  CHECK(std::to_integer<int>(header[39]) == 0xaf);
  CHECK(LoadLE(header, 40, 8) == info.file_size);
  CHECK(LoadLE(header, 48, 8) == format::kDataOffset);
  CHECK(LoadLE(header, 56, 8) == 16 * format::kMiB);
  CHECK(LoadLE(header, 64, 8) == 4096);                  // region_table_offset
  CHECK(LoadLE(header, 72, 4) == 0);                     // region_count
  CHECK(LoadLE(header, 76, 4) == 128);                   // region_entry_size
  CHECK(LoadLE(header, 80, 8) == format::Checksum({}));  // checksum of an empty table
  CHECK(LoadLE(header, 88, 8) == 0x0102030405060708ULL);
  CHECK(LoadLE(header, 96, 4) == 4096);
  CHECK(LoadLE(header, 4088, 8) ==
        format::Checksum(std::span(header).first(format::kSuperblockChecksumOffset)));
  for (size_t i = 100; i < 4088; ++i) REQUIRE(header[i] == std::byte{0});
}

TEST_CASE("A superblock decodes back to what was encoded", "[format]") {
  const StoreInfo info = SampleInfo();
  const std::vector<std::byte> header = format::EncodeHeader(info);
  auto decoded = format::DecodeSuperblock(std::span(header).first(4096), info.file_size, "x");
  REQUIRE(decoded.ok());
  CHECK(decoded->info.uuid == info.uuid);
  CHECK(decoded->info.data_size == info.data_size);
  CHECK(decoded->info.file_size == info.file_size);
  CHECK(decoded->info.created_unix_ns == info.created_unix_ns);
  CHECK(decoded->region_count == 0);
}

TEST_CASE("Any flipped bit in the superblock is detected", "[format]") {
  const StoreInfo info = SampleInfo();
  const std::vector<std::byte> header = format::EncodeHeader(info);
  int rejected = 0;
  for (size_t byte = 0; byte < format::kSuperblockSize; byte += 7) {
    std::vector<std::byte> damaged(header.begin(), header.begin() + format::kSuperblockSize);
    damaged[byte] ^= std::byte{0x10};
    auto decoded = format::DecodeSuperblock(damaged, info.file_size, "x");
    if (!decoded.ok()) ++rejected;
  }
  CHECK(rejected == static_cast<int>((format::kSuperblockSize + 6) / 7));
}

TEST_CASE("A region table entry round-trips and its checksum guards it", "[format]") {
  StoreInfo info = SampleInfo();
  RegionEntry region;
  region.name = "state";
  region.capacity = 4096;
  region.slot_count = 3;
  region.slots_offset = info.file_size;
  region.slot_stride = 128 * format::kKiB;
  info.regions.push_back(region);
  info.file_size += 3 * region.slot_stride;
  const std::vector<std::byte> header = format::EncodeHeader(info);
  auto decoded = format::DecodeSuperblock(std::span(header).first(4096), info.file_size, "x");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->region_count == 1);
  std::span<const std::byte> table = std::span(header).subspan(4096, 128);
  REQUIRE(format::DecodeRegionTable(table, *decoded, "x").ok());
  REQUIRE(decoded->info.regions.size() == 1);
  CHECK(decoded->info.regions[0].name == "state");
  CHECK(decoded->info.regions[0].slot_count == 3);

  std::vector<std::byte> damaged(table.begin(), table.end());
  damaged[2] ^= std::byte{1};
  auto again = format::DecodeSuperblock(std::span(header).first(4096), info.file_size, "x");
  REQUIRE(again.ok());
  Status status = format::DecodeRegionTable(damaged, *again, "x");
  CHECK(status.code() == StatusCode::kCorruption);
  CHECK_THAT(status.message(), Catch::Contains("region table checksum"));
}

TEST_CASE("Layout keeps a 1 MiB-aligned data offset 1 MiB-aligned in the file", "[format]") {
  auto layout = format::LayoutFor(16 * format::kMiB);
  REQUIRE(layout.ok());
  CHECK(layout->data_offset % format::kMiB == 0);
  CHECK((layout->data_offset + 2 * format::kMiB) % format::kMiB == 0);
  CHECK(layout->file_size == format::kDataOffset + 16 * format::kMiB);
  auto odd = format::LayoutFor(4097);
  REQUIRE(odd.ok());
  CHECK(odd->file_size == format::kDataOffset + 64 * format::kKiB);
  CHECK(format::LayoutFor(format::kMaxDataSize + 1).status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace regionstore::testing
