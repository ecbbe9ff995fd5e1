// Checkpoint slots: layout, header encoding and validation. Pure functions on
// byte buffers: no I/O here. docs/FORMAT.md ("Checkpoint slots") is the
// specification; keep the two in step.
#ifndef REGIONSTORE_LIB_SLOT_H_
#define REGIONSTORE_LIB_SLOT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format.h"
#include "regionstore/checkpoint.h"
#include "regionstore/status.h"
#include "regionstore/store_info.h"

namespace regionstore::slot {

inline constexpr char kMagic[8] = {'R', 'G', 'N', 'S', 'L', 'O', 'T', '1'};

// Regions this version creates at most: the table and the intent area
// before a data area at the next 1 MiB boundary (format::DataOffsetFor).
inline constexpr uint64_t kMaxRegionsCreated = format::kMaxRegions;

// Slots per region this version creates unless CheckpointSpec::slots asks
// for more. Three are what the commit protocol needs: the newest commit,
// the newest durable one and a free target.
inline constexpr uint32_t kSlotsPerRegion = kDefaultSlots;
// Readers accept tables with up to this many slots per region.
inline constexpr uint32_t kMaxSlotsPerRegion = kMaxSlots;

// Two slot layouts (docs/FORMAT.md, "Checkpoint slots"), both with the
// header unit right before the payload, so one pwritev writes both and one
// msync range covers both:
//  kAligned  [zero: 60 KiB][header unit: 4 KiB][payload area], from a 64 KiB
//            boundary: the payload is 64 KiB-aligned, no two slots share a
//            page of 4, 16 or 64 KiB;
//  kCompact  [header unit: 4 KiB][payload area], slot and stride multiples
//            of slot_alignment (the creating host's page size, at least
//            4 KiB): no two slots share a page of that host.
inline constexpr uint64_t kHeaderUnitSize = 4096;
inline constexpr uint64_t kHeaderSize = 64;  // meaningful bytes of the unit
inline constexpr uint64_t kAlignedHeaderOffset = format::kAreaAlignment - kHeaderUnitSize;
inline constexpr uint64_t kAlignedPayloadOffset = format::kAreaAlignment;
inline constexpr uint64_t kCompactPayloadOffset = kHeaderUnitSize;

// Header field offsets.
namespace hdr {
inline constexpr size_t kMagic = 0;
inline constexpr size_t kRegion = 8;
inline constexpr size_t kSlot = 12;
inline constexpr size_t kGeneration = 16;
inline constexpr size_t kLength = 24;
inline constexpr size_t kCommitUnixNs = 32;
inline constexpr size_t kPayloadChecksum = 40;
// Reserved (zero) in stores without a batch log; there, the id of the batch
// the commit belongs to, 0 for a single commit.
inline constexpr size_t kReserved = 48;
inline constexpr size_t kBatchId = kReserved;
inline constexpr size_t kHeaderChecksum = 56;
}  // namespace hdr

// Generations run from 1 to 2^63 - 1: a header claiming more is invalid, so
// a crafted file cannot make the next commit's generation wrap to 0.
inline constexpr uint64_t kMaxGeneration = (uint64_t{1} << 63) - 1;

// Largest capacity Create accepts: keeps every slot sum far below 2^63.
inline constexpr uint64_t kMaxCapacity = uint64_t{1} << 56;

// Offsets of the header unit and the payload inside a slot of `region`.
inline uint64_t HeaderOffsetInSlot(const RegionEntry& region) {
  return region.layout == SlotLayout::kCompact ? 0 : kAlignedHeaderOffset;
}
inline uint64_t PayloadOffsetInSlot(const RegionEntry& region) {
  return region.layout == SlotLayout::kCompact ? kCompactPayloadOffset : kAlignedPayloadOffset;
}

// Bytes from one slot to the next for a region of `capacity`: a 64 KiB
// multiple for kAligned, a multiple of `alignment` for kCompact.
constexpr uint64_t StrideFor(uint64_t capacity, SlotLayout layout = SlotLayout::kAligned,
                             uint64_t alignment = format::kAreaAlignment) {
  if (layout == SlotLayout::kCompact) {
    return format::AlignUp(kCompactPayloadOffset + capacity, alignment);
  }
  return kAlignedPayloadOffset + format::AlignUp(capacity, format::kAreaAlignment);
}

// File offsets of slot `index` of `region`.
inline uint64_t SlotOffset(const RegionEntry& region, uint32_t index) {
  return region.slots_offset + uint64_t{index} * region.slot_stride;
}
inline uint64_t HeaderFileOffset(const RegionEntry& region, uint32_t index) {
  return SlotOffset(region, index) + HeaderOffsetInSlot(region);
}
inline uint64_t PayloadFileOffset(const RegionEntry& region, uint32_t index) {
  return SlotOffset(region, index) + PayloadOffsetInSlot(region);
}

// A slot header's fields (offsets in hdr::), decoded.
struct Header {
  uint32_t region = 0, slot = 0;  // whose header it is: checked against where it lies
  uint64_t generation = 0, length = 0, commit_unix_ns = 0, payload_checksum = 0;
  uint64_t batch_id = 0;  // 0: a single commit (lib/batch.h)
};

using HeaderBytes = std::array<std::byte, kHeaderSize>;

HeaderBytes EncodeHeader(const Header& header);

// What the 64 header bytes say, before the payload is looked at.
struct DecodedHeader {
  enum class Kind : uint8_t {
    kEmpty,  // all 64 bytes zero: never written
    // The magic field is zero but other bytes are not: a header whose
    // commit was interrupted before it stored the magic (writers clear the
    // magic first and store it last). Holds no commit.
    kUnfinished,
    kValid,
    kInvalid,
  };
  Kind kind = Kind::kEmpty;
  Header header;       // meaningful when kind == kValid
  std::string reason;  // when kind == kInvalid or kUnfinished
};

// Validates the header of slot `slot` of region `region` (its index in the
// table) of capacity `capacity`: magic, header checksum, indexes, generation
// not 0, length within capacity, reserved bytes zero (unless `batch_ids`:
// a store with a batch log keeps the batch id there), in that order.
DecodedHeader DecodeHeader(std::span<const std::byte> bytes, uint32_t region, uint32_t slot,
                           uint64_t capacity, bool batch_ids = false);

// The layout kAuto picks for `capacity`, given the creating host's page
// size: kCompact up to kCompactSlotLimit (checkpoint.h) on hosts whose pages
// are at most 64 KiB, kAligned above.
SlotLayout ResolveLayout(SlotLayout requested, uint64_t capacity, uint64_t page_size);

// Lays out `specs` after the data area (which ends at `data_end`, a 64 KiB
// multiple), in order, each region on its slot alignment; compact slots on
// `page_size` (at least 4 KiB). Returns the entries and the file size (the
// end of the last slot, rounded up to 64 KiB).
// Errors: kInvalidArgument (bad or duplicate name, capacity 0 or too large,
// too many regions, compact slots asked for on pages over 64 KiB).
Result<std::pair<std::vector<RegionEntry>, uint64_t>> LayoutRegions(
    const std::vector<CheckpointSpec>& specs, uint64_t data_end, uint64_t page_size);

}  // namespace regionstore::slot

#endif  // REGIONSTORE_LIB_SLOT_H_
