#include "format.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string_view>

#include "bytes.h"
#include "slot.h"

// The one place that picks the xxHash entry points: on x86-64 the
// runtime-dispatched ones (AVX2 or SSE2, chosen at run time).
#if defined(__x86_64__)
#include <xxh_x86dispatch.h>
#define REGIONSTORE_XXH3(name) name##_dispatch
#else
#include <xxhash.h>
#define REGIONSTORE_XXH3(name) name
#endif

namespace regionstore::format {
namespace {

using internal::AllZero;

Status Corrupt(const std::string& path, std::string message) {
  return Status::Error(StatusCode::kCorruption, "open: validate superblock", path,
                       std::move(message));
}

std::string Hex(uint64_t value) { return internal::HexNumber(value, 16); }

}  // namespace

uint64_t Checksum(std::span<const std::byte> bytes) {
  return REGIONSTORE_XXH3(XXH3_64bits)(bytes.data(), bytes.size());
}

ChecksumStream::ChecksumStream() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}
ChecksumStream::~ChecksumStream() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }
void ChecksumStream::Update(std::span<const std::byte> bytes) {
  REGIONSTORE_XXH3(XXH3_64bits_update)
  (static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}
uint64_t ChecksumStream::Digest() const {
  return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_));
}

Result<Layout> LayoutFor(uint64_t data_size, uint64_t region_count, bool batch_log,
                         uint64_t journal_size) {
  if (data_size > kMaxDataSize) {
    return Status::Error(StatusCode::kInvalidArgument, "create", "",
                         "data size " + std::to_string(data_size) + " exceeds the maximum of " +
                             std::to_string(kMaxDataSize) + " bytes");
  }
  Layout layout;
  layout.data_offset = DataOffsetFor(std::min(region_count, kMaxRegions), batch_log, journal_size);
  layout.data_size = data_size;
  layout.file_size = layout.data_offset + AlignUp(data_size, kAreaAlignment);
  return layout;
}

uint32_t IncompatFlagsFor(const StoreInfo& info) {
  uint32_t flags = info.incompat_flags & (kIncompatBatchLog | kIncompatSidecar | kIncompatJournal);
  if (info.regions.size() > kMaxRegionsSmallTable) flags |= kIncompatLargeTable;
  for (const RegionEntry& region : info.regions) {
    if (region.layout == SlotLayout::kCompact) {
      flags |= kIncompatCompactSlots;
      break;
    }
  }
  return flags;
}

std::vector<std::byte> EncodeHeader(const StoreInfo& info) {
  std::vector<std::byte> header(info.data_offset, std::byte{0});
  std::span<std::byte> bytes(header);
  std::memcpy(bytes.data() + sb::kMagic, kMagic, sizeof kMagic);
  Store32(bytes, sb::kVersion, info.format_version);
  Store32(bytes, sb::kSuperblockSize, static_cast<uint32_t>(kSuperblockSize));
  Store32(bytes, sb::kIncompatFlags, IncompatFlagsFor(info));
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
  if ((info.incompat_flags & kIncompatJournal) != 0) {
    Store64(bytes, sb::kJournalSize, info.journal_size);
  }

  std::span<std::byte> table =
      bytes.subspan(info.region_table_offset, RegionTableBytes(region_count));
  for (size_t i = 0; i < info.regions.size(); ++i) {
    const RegionEntry& region = info.regions[i];
    std::span<std::byte> entry = table.subspan(i * kRegionEntrySize, kRegionEntrySize);
    std::memcpy(entry.data() + re::kName, region.name.data(), region.name.size());
    Store32(entry, re::kNameLength, static_cast<uint32_t>(region.name.size()));
    Store32(entry, re::kSlotCount, region.slot_count);
    Store64(entry, re::kCapacity, region.capacity);
    Store64(entry, re::kSlotsOffset, region.slots_offset);
    Store64(entry, re::kSlotStride, region.slot_stride);
    if (region.layout == SlotLayout::kCompact) {
      Store32(entry, re::kSlotAlignment, region.slot_alignment);
    }
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
  const uint32_t incompat = Load32(superblock, sb::kIncompatFlags);
  if ((incompat & ~kKnownIncompatFlags) != 0) {
    return Status::Error(
        StatusCode::kUnsupportedVersion, "open: validate superblock", path,
        "unknown incompatible feature flags " + Hex(incompat & ~kKnownIncompatFlags));
  }

  Superblock decoded;
  StoreInfo& info = decoded.info;
  info.format_version = version;
  info.incompat_flags = incompat;
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
  // Without the large-table flag the table ends by 1 MiB, as every reader
  // since version 1 expects; with it, the intent area must fit after it.
  const bool large_table = (incompat & kIncompatLargeTable) != 0;
  const uint64_t region_limit = large_table ? kMaxRegions : kMaxRegionsSmallTable;
  uint64_t room = info.data_offset - info.region_table_offset;
  // A journal needs a batch log and the sidecar, and lies before the log.
  const bool journal = (incompat & kIncompatJournal) != 0;
  if (journal) {
    info.journal_size = Load64(superblock, sb::kJournalSize);
    if ((incompat & kIncompatBatchLog) == 0 || (incompat & kIncompatSidecar) == 0) {
      return Corrupt(path, "the journal flag is set without the batch log and sidecar flags");
    }
    if (info.journal_size < kMinJournalSize || info.journal_size > kMaxJournalSize ||
        info.journal_size % kAreaAlignment != 0) {
      return Corrupt(path, "journal size " + std::to_string(info.journal_size) +
                               " is not a 64 KiB multiple from 256 KiB to 1 GiB");
    }
  }
  // A batch log needs the intent area and the log after the table.
  const uint64_t after_table = (incompat & kIncompatBatchLog) != 0
                                   ? kIntentAreaSize + kBatchLogSize + info.journal_size
                               : large_table ? kIntentAreaSize
                                             : 0;
  room = room > after_table ? room - after_table : 0;
  if (decoded.region_count > region_limit || decoded.region_count > room / kRegionEntrySize) {
    return Corrupt(path, "region count " + std::to_string(decoded.region_count) +
                             " exceeds the limit of " + std::to_string(region_limit) +
                             " or does not fit between the region table and the data area" +
                             (after_table != 0 ? " (and what lies before it)" : ""));
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
  const size_t journal_end = sb::kJournalSize + 8;
  if (Load32(superblock, sb::kCompatFlags) == 0 &&
      (!AllZero(superblock.subspan(sb::kReservedStart, sb::kJournalSize - sb::kReservedStart)) ||
       (!journal && !AllZero(superblock.subspan(sb::kJournalSize, 8))) ||
       !AllZero(superblock.subspan(journal_end, kSuperblockChecksumOffset - journal_end)))) {
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
    if (Status named = CheckRegionName(region.name, "open"); !named.ok()) {
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
    // file, on their alignment; the arithmetic is bounded by file_size, so it
    // cannot overflow once each factor is checked against it.
    if (region.slot_count < slot::kSlotsPerRegion || region.slot_count > slot::kMaxSlotsPerRegion) {
      return Corrupt(path, where + " ('" + region.name +
                               "'): " + std::to_string(region.slot_count) + " slots; between " +
                               std::to_string(slot::kSlotsPerRegion) + " and " +
                               std::to_string(slot::kMaxSlotsPerRegion) + " expected");
    }
    const uint32_t compact_alignment = Load32(entry, re::kSlotAlignment);
    if (compact_alignment != 0) {
      if ((superblock.info.incompat_flags & kIncompatCompactSlots) == 0) {
        return Corrupt(path, where + " ('" + region.name +
                                 "'): compact slots in a store without the compact-slots flag");
      }
      if (compact_alignment < slot::kHeaderUnitSize || compact_alignment > kAreaAlignment ||
          (compact_alignment & (compact_alignment - 1)) != 0) {
        return Corrupt(path, where + " ('" + region.name + "'): slot alignment " +
                                 std::to_string(compact_alignment) +
                                 " is not a power of two from 4096 to 65536");
      }
      region.layout = SlotLayout::kCompact;
      region.slot_alignment = compact_alignment;
    } else {
      region.layout = SlotLayout::kAligned;
      region.slot_alignment = static_cast<uint32_t>(kAreaAlignment);
    }
    // A slot is its header space (the 64 KiB unit ending in the header unit,
    // or the compact header unit alone), then the payload area.
    const uint64_t header_space = slot::PayloadOffsetInSlot(region);
    if (region.slot_stride <= header_space || region.slot_stride % region.slot_alignment != 0 ||
        region.slots_offset % region.slot_alignment != 0 || region.slots_offset < next_free ||
        region.slots_offset > info.file_size || region.slot_stride > info.file_size ||
        region.capacity == 0 || region.capacity > region.slot_stride - header_space ||
        region.slot_count > (info.file_size - region.slots_offset) / region.slot_stride) {
      return Corrupt(path, where + " ('" + region.name + "'): slots do not fit the file");
    }
    next_free = region.slots_offset + uint64_t{region.slot_count} * region.slot_stride;
    info.regions.push_back(std::move(region));
  }
  // Names are unique: sort the indexes by name, so that a table of a million
  // entries is checked in n log n and not n^2.
  std::vector<uint32_t> by_name = SortedByName(info.regions);
  for (size_t i = 1; i < by_name.size(); ++i) {
    if (info.regions[by_name[i - 1]].name == info.regions[by_name[i]].name) {
      const uint32_t later = std::max(by_name[i - 1], by_name[i]);
      return Corrupt(path, "region entry " + std::to_string(later) + ": duplicate region name '" +
                               info.regions[later].name + "'");
    }
  }
  return Status::Ok();
}

std::vector<uint32_t> SortedByName(const std::vector<RegionEntry>& regions) {
  std::vector<uint32_t> order(regions.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return regions[a].name < regions[b].name || (regions[a].name == regions[b].name && a < b);
  });
  return order;
}

}  // namespace regionstore::format
