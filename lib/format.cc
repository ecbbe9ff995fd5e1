#include "format.h"

#include "slot.h"

#if defined(__x86_64__)
#include <xxh_x86dispatch.h>  // XXH3_64bits_dispatch: picks AVX2/SSE2 at run time
#else
#include <xxhash.h>
#endif

#include <algorithm>
#include <cstring>
#include <string_view>

namespace regionstore::format {
namespace {

bool AllZero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

Status Corrupt(const std::string& path, std::string message) {
  return Status::Error(StatusCode::kCorruption, "open: validate superblock", path,
                       std::move(message));
}

std::string Hex(uint64_t value) {
  char buffer[19];
  std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace

uint64_t Checksum(std::span<const std::byte> bytes) {
#if defined(__x86_64__)
  return XXH3_64bits_dispatch(bytes.data(), bytes.size());
#else
  return XXH3_64bits(bytes.data(), bytes.size());
#endif
}

Result<Layout> LayoutFor(uint64_t data_size) {
  if (data_size > kMaxDataSize) {
    return Status::Error(StatusCode::kInvalidArgument, "create", "",
                         "data size " + std::to_string(data_size) + " exceeds the maximum of " +
                             std::to_string(kMaxDataSize) + " bytes");
  }
  Layout layout;
  layout.data_size = data_size;
  layout.file_size = kDataOffset + AlignUp(data_size, kAreaAlignment);
  return layout;
}

std::vector<std::byte> EncodeHeader(const StoreInfo& info) {
  std::vector<std::byte> header(info.data_offset, std::byte{0});
  std::span<std::byte> bytes(header);
  std::memcpy(bytes.data() + sb::kMagic, kMagic, sizeof kMagic);
  Store32(bytes, sb::kVersion, info.format_version);
  Store32(bytes, sb::kSuperblockSize, static_cast<uint32_t>(kSuperblockSize));
  Store32(bytes, sb::kIncompatFlags, 0);
  Store32(bytes, sb::kCompatFlags, 0);
  std::memcpy(bytes.data() + sb::kUuid, info.uuid.data(), info.uuid.size());
  Store64(bytes, sb::kFileSize, info.file_size);
  Store64(bytes, sb::kDataOffset, info.data_offset);
  Store64(bytes, sb::kDataSize, info.data_size);
  Store64(bytes, sb::kRegionTableOffset, info.region_table_offset);
  const auto region_count = static_cast<uint32_t>(info.regions.size());
  Store32(bytes, sb::kRegionCount, region_count);
  Store32(bytes, sb::kRegionEntrySize, static_cast<uint32_t>(kRegionEntrySize));
  Store64(bytes, sb::kCreatedUnixNs, info.created_unix_ns);
  Store32(bytes, sb::kCreatedPageSize, info.created_page_size);

  std::span<std::byte> table = bytes.subspan(info.region_table_offset,
                                             RegionTableBytes(region_count));
  for (size_t i = 0; i < info.regions.size(); ++i) {
    const RegionEntry& region = info.regions[i];
    std::span<std::byte> entry = table.subspan(i * kRegionEntrySize, kRegionEntrySize);
    std::memcpy(entry.data() + re::kName, region.name.data(), region.name.size());
    Store32(entry, re::kNameLength, static_cast<uint32_t>(region.name.size()));
    Store32(entry, re::kSlotCount, region.slot_count);
    Store64(entry, re::kCapacity, region.capacity);
    Store64(entry, re::kSlotsOffset, region.slots_offset);
    Store64(entry, re::kSlotStride, region.slot_stride);
  }
  Store64(bytes, sb::kRegionTableChecksum, Checksum(table));
  Store64(bytes, kSuperblockChecksumOffset, Checksum(bytes.first(kSuperblockChecksumOffset)));
  return header;
}

Result<Superblock> DecodeSuperblock(std::span<const std::byte> superblock,
                                    uint64_t actual_file_size, const std::string& path) {
  if (superblock.empty()) return Corrupt(path, "empty file: not a regionstore file");
  if (superblock.size() < sizeof kMagic ||
      std::memcmp(superblock.data() + sb::kMagic, kMagic, sizeof kMagic) != 0) {
    return Corrupt(path, "bad magic: not a regionstore file");
  }
  if (superblock.size() < kSuperblockSize) {
    return Corrupt(path, "truncated: file is " + std::to_string(superblock.size()) +
                             " bytes, shorter than the " + std::to_string(kSuperblockSize) +
                             "-byte superblock");
  }
  const uint32_t version = Load32(superblock, sb::kVersion);
  if (version != kFormatVersion) {
    return Status::Error(StatusCode::kUnsupportedVersion, "open: validate superblock", path,
                         "format version " + std::to_string(version) +
                             " is not supported (this build reads version " +
                             std::to_string(kFormatVersion) + ")");
  }
  const uint64_t stored_checksum = Load64(superblock, kSuperblockChecksumOffset);
  const uint64_t computed_checksum = Checksum(superblock.first(kSuperblockChecksumOffset));
  if (stored_checksum != computed_checksum) {
    return Corrupt(path, "superblock checksum mismatch (stored " + Hex(stored_checksum) +
                             ", computed " + Hex(computed_checksum) + ")");
  }
  if (Load32(superblock, sb::kSuperblockSize) != kSuperblockSize) {
    return Corrupt(path, "superblock size field is " +
                             std::to_string(Load32(superblock, sb::kSuperblockSize)) +
                             ", expected " + std::to_string(kSuperblockSize));
  }
  if (const uint32_t incompat = Load32(superblock, sb::kIncompatFlags); incompat != 0) {
    return Status::Error(StatusCode::kUnsupportedVersion, "open: validate superblock", path,
                         "unknown incompatible feature flags " + Hex(incompat));
  }

  Superblock decoded;
  StoreInfo& info = decoded.info;
  info.format_version = version;
  std::memcpy(info.uuid.data(), superblock.data() + sb::kUuid, info.uuid.size());
  info.file_size = Load64(superblock, sb::kFileSize);
  info.data_offset = Load64(superblock, sb::kDataOffset);
  info.data_size = Load64(superblock, sb::kDataSize);
  info.region_table_offset = Load64(superblock, sb::kRegionTableOffset);
  info.created_unix_ns = Load64(superblock, sb::kCreatedUnixNs);
  info.created_page_size = Load32(superblock, sb::kCreatedPageSize);
  info.superblock_checksum = stored_checksum;
  decoded.region_count = Load32(superblock, sb::kRegionCount);
  decoded.region_table_checksum = Load64(superblock, sb::kRegionTableChecksum);

  // Field sanity, in an order where each check may rely on the ones before.
  if (Load32(superblock, sb::kRegionEntrySize) != kRegionEntrySize) {
    return Corrupt(path, "region entry size is " +
                             std::to_string(Load32(superblock, sb::kRegionEntrySize)) +
                             ", expected " + std::to_string(kRegionEntrySize));
  }
  if (info.region_table_offset < kSuperblockSize ||
      info.region_table_offset % kSuperblockSize != 0) {
    return Corrupt(path, "region table offset " + std::to_string(info.region_table_offset) +
                             " is not a 4 KiB multiple after the superblock");
  }
  if (info.data_offset % kAreaAlignment != 0 || info.data_offset < info.region_table_offset ||
      info.data_offset > kMaxDataSize) {
    return Corrupt(path, "data offset " + std::to_string(info.data_offset) +
                             " is not a 64 KiB multiple after the region table");
  }
  if (decoded.region_count > kMaxRegions ||
      decoded.region_count > (info.data_offset - info.region_table_offset) / kRegionEntrySize) {
    return Corrupt(path, "region count " + std::to_string(decoded.region_count) +
                             " exceeds the limit of " + std::to_string(kMaxRegions) +
                             " or does not fit between the region table and the data area");
  }
  if (info.data_size > kMaxDataSize) {
    return Corrupt(path, "data size " + std::to_string(info.data_size) + " is impossible");
  }
  const uint64_t data_end = info.data_offset + AlignUp(info.data_size, kAreaAlignment);
  if (info.file_size < data_end || info.file_size % kAreaAlignment != 0) {
    return Corrupt(path, "recorded file size " + std::to_string(info.file_size) +
                             " cannot hold a data area ending at " + std::to_string(data_end));
  }
  // Reserved bytes are written as zero. A later compatible extension sets a
  // compat_flags bit and may use them; without one, a non-zero byte under a
  // valid checksum means a writer that does not follow this format.
  if (Load32(superblock, sb::kCompatFlags) == 0 &&
      !AllZero(superblock.subspan(sb::kReservedStart,
                                  kSuperblockChecksumOffset - sb::kReservedStart))) {
    return Corrupt(path, "reserved superblock bytes are not zero");
  }
  if (actual_file_size != info.file_size) {
    return Corrupt(path, "file is " + std::to_string(actual_file_size) +
                             " bytes but its superblock says " + std::to_string(info.file_size) +
                             (actual_file_size < info.file_size ? " (truncated)" : " (extended)"));
  }
  return decoded;
}

Status DecodeRegionTable(std::span<const std::byte> table, Superblock& superblock,
                         const std::string& path) {
  StoreInfo& info = superblock.info;
  if (table.size() != RegionTableBytes(superblock.region_count)) {
    return Corrupt(path, "region table is " + std::to_string(table.size()) + " bytes, expected " +
                             std::to_string(RegionTableBytes(superblock.region_count)));
  }
  if (Checksum(table) != superblock.region_table_checksum) {
    return Corrupt(path, "region table checksum mismatch");
  }
  uint64_t next_free = info.data_offset + AlignUp(info.data_size, kAreaAlignment);
  info.regions.clear();
  info.regions.reserve(superblock.region_count);
  for (uint32_t i = 0; i < superblock.region_count; ++i) {
    std::span<const std::byte> entry = table.subspan(i * kRegionEntrySize, kRegionEntrySize);
    const std::string where = "region entry " + std::to_string(i);
    RegionEntry region;
    const uint32_t name_length = Load32(entry, re::kNameLength);
    if (name_length == 0 || name_length > kMaxRegionNameLength ||
        !AllZero(entry.subspan(re::kName + name_length, kMaxRegionNameLength - name_length))) {
      return Corrupt(path, where + ": bad name length " + std::to_string(name_length));
    }
    region.name.assign(reinterpret_cast<const char*>(entry.data() + re::kName), name_length);
    if (Status named = slot::CheckName(region.name, "open"); !named.ok()) {
      return Corrupt(path, where + ": " + named.message());
    }
    region.slot_count = Load32(entry, re::kSlotCount);
    region.capacity = Load64(entry, re::kCapacity);
    region.slots_offset = Load64(entry, re::kSlotsOffset);
    region.slot_stride = Load64(entry, re::kSlotStride);
    if (!AllZero(entry.subspan(re::kReservedStart, kRegionEntrySize - re::kReservedStart))) {
      return Corrupt(path, where + ": reserved bytes are not zero");
    }
    // Slots lie after the data area and after the previous region, inside the
    // file, on 64 KiB boundaries; the arithmetic is bounded by file_size, so
    // it cannot overflow once each factor is checked against it.
    // A slot is a 64 KiB unit ending in the header, then the payload area.
    if (region.slot_count < slot::kSlotsPerRegion || region.slot_count > slot::kMaxSlotsPerRegion) {
      return Corrupt(path, where + " ('" + region.name + "'): " +
                               std::to_string(region.slot_count) + " slots; between " +
                               std::to_string(slot::kSlotsPerRegion) + " and " +
                               std::to_string(slot::kMaxSlotsPerRegion) + " expected");
    }
    if (region.slot_stride <= kAreaAlignment || region.slot_stride % kAreaAlignment != 0 ||
        region.slots_offset % kAreaAlignment != 0 || region.slots_offset < next_free ||
        region.slots_offset > info.file_size || region.slot_stride > info.file_size ||
        region.capacity == 0 || region.capacity > region.slot_stride - kAreaAlignment ||
        region.slot_count > (info.file_size - region.slots_offset) / region.slot_stride) {
      return Corrupt(path, where + " ('" + region.name + "'): slots do not fit the file");
    }
    next_free = region.slots_offset + uint64_t{region.slot_count} * region.slot_stride;
    for (const RegionEntry& earlier : info.regions) {
      if (earlier.name == region.name) {
        return Corrupt(path, where + ": duplicate region name '" + region.name + "'");
      }
    }
    info.regions.push_back(std::move(region));
  }
  return Status::Ok();
}

}  // namespace regionstore::format
