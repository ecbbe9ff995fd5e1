// On-disk format v1: constants, encoding and validation of the superblock and
// region table. Pure functions on byte buffers: no I/O here. docs/FORMAT.md is
// the specification; keep the two in step (same commit).
#ifndef REGIONSTORE_LIB_FORMAT_H_
#define REGIONSTORE_LIB_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "regionstore/status.h"
#include "regionstore/store_info.h"

namespace regionstore::format {

inline constexpr char kMagic[8] = {'R', 'G', 'N', 'S', 'T', 'O', 'R', 'E'};
inline constexpr uint32_t kFormatVersion = 1;

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;

// The superblock fills the first 4 KiB of the file; its checksum is the last
// 8 bytes of that unit and covers everything before it.
inline constexpr uint64_t kSuperblockSize = 4096;
inline constexpr uint64_t kSuperblockChecksumOffset = kSuperblockSize - 8;

// The region table follows the superblock; the data area starts at 1 MiB so
// that a 1 MiB-aligned data offset is a 1 MiB-aligned file offset (large
// page-cache folios are naturally aligned in the file).
inline constexpr uint64_t kRegionTableOffset = kSuperblockSize;
inline constexpr uint64_t kRegionEntrySize = 128;
inline constexpr uint64_t kDataOffset = 1 * kMiB;
inline constexpr uint64_t kMaxRegionNameLength = 64;

// The 4 KiB intent area sits right before the data area (intent.h).
inline constexpr uint64_t kIntentAreaSize = 4096;

// Without kIncompatLargeTable the table must end by kDataOffset: at most
// 8,160 entries (writers make at most 8,128 there, room for the intent area).
inline constexpr uint64_t kMaxRegionsSmallTable =
    (kDataOffset - kRegionTableOffset) / kRegionEntrySize;
// Tables past that set kIncompatLargeTable; readers accept up to this many
// entries (a 128 MiB table).
inline constexpr uint64_t kMaxRegions = uint64_t{1} << 20;

// incompat_flags bits: a reader that does not know one refuses the store.
// A region table entry with compact slots (slot_alignment != 0).
inline constexpr uint32_t kIncompatCompactSlots = 1u << 0;
// More regions than fit below 1 MiB: the data area starts at the first
// 1 MiB boundary after the table and the intent area.
inline constexpr uint32_t kIncompatLargeTable = 1u << 1;
// A batch log (lib/batch.h) of kBatchLogSize bytes right before the intent
// area: the store accepts multi-region batch commits, and slot headers may
// carry a batch id in their reserved field.
inline constexpr uint32_t kIncompatBatchLog = 1u << 2;
// Protocol 2's first part (lib/sidecar.h): readers that wait register in a
// sidecar file beside the store, and writers wake only registered ones, so
// a commit with nobody waiting makes no system call. A release without it
// would wake nobody (or wait where no writer wakes): it must refuse the
// store. StoreInfo::protocol() reads this bit.
inline constexpr uint32_t kIncompatSidecar = 1u << 3;
// Protocol 2's batch journal (lib/journal.h): StoreInfo::journal_size bytes
// right before the batch log. A durable batch's commit point is one record
// written there; its members reach their slots through the page cache and
// become durable at the next whole-file barrier, or by the replay of the
// next writer's open. Only with kIncompatSidecar and kIncompatBatchLog. A
// release without it would not replay the journal: it must refuse the store.
inline constexpr uint32_t kIncompatJournal = 1u << 4;
inline constexpr uint32_t kKnownIncompatFlags = kIncompatCompactSlots | kIncompatLargeTable |
                                                kIncompatBatchLog | kIncompatSidecar |
                                                kIncompatJournal;

// The journal's size: a multiple of 64 KiB from 256 KiB to 1 GiB; 4 MiB
// unless CreateOptions::journal_size says otherwise.
inline constexpr uint64_t kMinJournalSize = 256 * 1024;
inline constexpr uint64_t kMaxJournalSize = uint64_t{1} << 30;
inline constexpr uint64_t kDefaultJournalSize = 4 * 1024 * 1024;

// The batch log: 32 units of 4 KiB, one batch record each.
inline constexpr uint64_t kBatchLogUnits = 32;
inline constexpr uint64_t kBatchLogUnitSize = 4096;
inline constexpr uint64_t kBatchLogSize = kBatchLogUnits * kBatchLogUnitSize;

// Every area (data, checkpoint slots) starts on and spans whole 64 KiB units:
// covers 4, 16 and 64 KiB pages.
inline constexpr uint64_t kAreaAlignment = 64 * kKiB;

// The largest data area Create accepts: 2^62 bytes keeps every sum below
// 2^63 (off_t) with room to spare.
inline constexpr uint64_t kMaxDataSize = uint64_t{1} << 62;

// Field offsets inside the superblock.
namespace sb {
inline constexpr size_t kMagic = 0;
inline constexpr size_t kVersion = 8;
inline constexpr size_t kSuperblockSize = 12;
inline constexpr size_t kIncompatFlags = 16;
inline constexpr size_t kCompatFlags = 20;
inline constexpr size_t kUuid = 24;
inline constexpr size_t kFileSize = 40;
inline constexpr size_t kDataOffset = 48;
inline constexpr size_t kDataSize = 56;
inline constexpr size_t kRegionTableOffset = 64;
inline constexpr size_t kRegionCount = 72;
inline constexpr size_t kRegionEntrySize = 76;
inline constexpr size_t kRegionTableChecksum = 80;
inline constexpr size_t kCreatedUnixNs = 88;
inline constexpr size_t kCreatedPageSize = 96;
inline constexpr size_t kReservedStart = 100;
// With kIncompatJournal: the journal's size (u64). Zero in any other store.
inline constexpr size_t kJournalSize = 104;
}  // namespace sb

// Field offsets inside a region table entry.
namespace re {
inline constexpr size_t kName = 0;
inline constexpr size_t kNameLength = 64;
inline constexpr size_t kSlotCount = 68;
inline constexpr size_t kCapacity = 72;
inline constexpr size_t kSlotsOffset = 80;
inline constexpr size_t kSlotStride = 88;
inline constexpr size_t kSlotAlignment = 96;  // 0: 64 KiB slots; else compact slots
inline constexpr size_t kReservedStart = 100;
}  // namespace re

// Rounds `value` up to a multiple of `alignment` (a power of two); the caller
// makes sure it cannot overflow.
constexpr uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

// Little-endian field access. The format is little-endian on every host; the
// loops compile to single loads and stores on x86-64 and arm64.
inline uint64_t LoadLE(std::span<const std::byte> bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= uint64_t{std::to_integer<uint8_t>(bytes[offset + i])} << (8 * i);
  }
  return value;
}
inline uint32_t Load32(std::span<const std::byte> bytes, size_t offset) {
  return static_cast<uint32_t>(LoadLE(bytes, offset, 4));
}
inline uint64_t Load64(std::span<const std::byte> bytes, size_t offset) {
  return LoadLE(bytes, offset, 8);
}
inline void StoreLE(std::span<std::byte> bytes, size_t offset, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) {
    bytes[offset + i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
  }
}
inline void Store32(std::span<std::byte> bytes, size_t offset, uint32_t value) {
  StoreLE(bytes, offset, value, 4);
}
inline void Store64(std::span<std::byte> bytes, size_t offset, uint64_t value) {
  StoreLE(bytes, offset, value, 8);
}

// XXH3-64 (seed 0) of `bytes`, through the runtime-dispatched implementation.
uint64_t Checksum(std::span<const std::byte> bytes);

// The same checksum over bytes that come in pieces (payloads read with pread).
class ChecksumStream {
 public:
  ChecksumStream();
  ~ChecksumStream();
  ChecksumStream(const ChecksumStream&) = delete;
  ChecksumStream& operator=(const ChecksumStream&) = delete;
  void Update(std::span<const std::byte> bytes);
  uint64_t Digest() const;

 private:
  void* state_;
};

// Checks a region name against the rule of CheckpointSpec::name (1 to
// kMaxRegionNameLength bytes of UTF-8 without control characters); errors
// are kInvalidArgument and carry `operation` (region_name.cc).
Status CheckRegionName(std::string_view name, const char* operation);

// Where the data area of a new store with `region_count` regions starts:
// 1 MiB while the table, the batch log (with `batch_log`) and the intent
// area fit below it (every store made before 0.5 that has an intent area),
// else the next 1 MiB boundary after them, so that a 1 MiB-aligned data
// offset stays a 1 MiB-aligned file offset.
// A journal (`journal_size` bytes, 0 for none) comes before the batch log.
constexpr uint64_t DataOffsetFor(uint64_t region_count, bool batch_log = false,
                                 uint64_t journal_size = 0) {
  return AlignUp(kRegionTableOffset + region_count * kRegionEntrySize + journal_size +
                     (batch_log ? kBatchLogSize : 0) + kIntentAreaSize,
                 kDataOffset);
}

// The layout a new store with `data_size` bytes of data area and
// `region_count` regions gets (the regions' slots come after file_size).
struct Layout {
  uint64_t data_offset = kDataOffset;
  uint64_t data_size = 0;
  uint64_t file_size = 0;
};
// Errors: kInvalidArgument if `data_size` exceeds kMaxDataSize.
Result<Layout> LayoutFor(uint64_t data_size, uint64_t region_count = 0, bool batch_log = false,
                         uint64_t journal_size = 0);

// Encodes superblock + region table: the first `data_offset` bytes of the
// file (the rest of that header area is zero).
std::vector<std::byte> EncodeHeader(const StoreInfo& info);

// What the superblock says, before the region table is read.
struct Superblock {
  StoreInfo info;  // info.regions is still empty
  uint32_t region_count = 0;
  uint64_t region_table_checksum = 0;
};

// Decodes and validates the 4 KiB superblock. `path` is for error messages;
// `actual_file_size` is what fstat says. Order of checks: magic, version,
// checksum, field sanity, file size; each failure says which.
// Errors: kCorruption, kUnsupportedVersion.
Result<Superblock> DecodeSuperblock(std::span<const std::byte> superblock,
                                    uint64_t actual_file_size, const std::string& path);

// Byte size of a region table with `region_count` entries.
constexpr uint64_t RegionTableBytes(uint32_t region_count) {
  return uint64_t{region_count} * kRegionEntrySize;
}

// Validates the region table bytes (RegionTableBytes(region_count) of them,
// read at info.region_table_offset) against the superblock and fills
// `superblock.info.regions`. Errors: kCorruption.
Status DecodeRegionTable(std::span<const std::byte> table, Superblock& superblock,
                         const std::string& path);

// The incompat_flags a store with `info.regions` needs: kIncompatLargeTable
// past 8,160 regions, kIncompatCompactSlots when a region has compact slots,
// and kIncompatBatchLog, kIncompatSidecar and kIncompatJournal when
// info.incompat_flags already has them (the store was created with a batch
// log, or in protocol 2). A store with none is written exactly as before 0.5.
uint32_t IncompatFlagsFor(const StoreInfo& info);

// Indexes of `regions` in name order (byte-wise), equal names by index: for
// lookups by name in log n (binary search) and the duplicate check.
std::vector<uint32_t> SortedByName(const std::vector<RegionEntry>& regions);

}  // namespace regionstore::format

#endif  // REGIONSTORE_LIB_FORMAT_H_
