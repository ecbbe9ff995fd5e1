// Batch commits of several regions: the batch log's records and the
// watermark, as bytes. Pure functions on byte buffers: no I/O here.
// docs/FORMAT.md ("Batch log") is the specification and docs/CHECKPOINTS.md
// ("Batches") says why a member counts when it does; keep the three in step.
#ifndef REGIONSTORE_LIB_BATCH_H_
#define REGIONSTORE_LIB_BATCH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "format.h"
#include "intent.h"
#include "regionstore/checkpoint.h"
#include "regionstore/store_info.h"

namespace regionstore::batch {

inline constexpr char kMagic[8] = {'R', 'G', 'N', 'B', 'A', 'T', 'C', '1'};
inline constexpr uint64_t kUnits = format::kBatchLogUnits;
inline constexpr uint64_t kUnitSize = format::kBatchLogUnitSize;

// Record field offsets: a 24-byte head, then kMaxMembers member entries of
// 16 bytes, then the XXH3-64 of everything before it in the last 8 bytes.
namespace rec {
inline constexpr size_t kMagic = 0;
inline constexpr size_t kBatchId = 8;
inline constexpr size_t kMemberCount = 16;
inline constexpr size_t kReserved = 20;
inline constexpr size_t kMembers = 24;
inline constexpr size_t kMemberSize = 16;  // region u32, slot u32, generation u64
inline constexpr size_t kChecksum = kUnitSize - 8;
}  // namespace rec

// Members one batch may name.
inline constexpr uint32_t kMaxMembers = (rec::kChecksum - rec::kMembers) / rec::kMemberSize;

struct Member {
  uint32_t region = 0, slot = 0;
  uint64_t generation = 0;
  bool operator==(const Member&) const = default;
};

// The batch id a writer's open gives a member of a batch that did not
// complete: no record ever has it and no watermark reaches it, so the slot
// never counts again, while its header still holds its generation (the
// region's next commit stays above it, as above any header on disk).
inline constexpr uint64_t kWithdrawnId = kWithdrawnBatch;  // regionstore/checkpoint.h
// Ids a batch may take: 1 up to below kWithdrawnId.
inline constexpr uint64_t kMaxBatchId = kWithdrawnId - 1;

struct Record {
  uint64_t id = 0;  // 1 to kMaxBatchId; record `id` lives in unit id % kUnits
  std::vector<Member> members;
};

using UnitBytes = std::array<std::byte, kUnitSize>;

// File offset of the batch log of a store laid out as `info` says: the
// kBatchLogSize bytes before its intent area, in stores with
// format::kIncompatBatchLog; nullopt in any other.
std::optional<uint64_t> LogOffset(const StoreInfo& info);
inline uint64_t UnitOffset(uint64_t log_offset, uint64_t id) {
  return log_offset + (id % kUnits) * kUnitSize;
}

// `record.members` must hold 1 to kMaxMembers entries.
UnitBytes EncodeRecord(const Record& record);
// A record: magic, checksum, count within 1..kMaxMembers, reserved and
// unused bytes zero, id not 0. Anything else (never written, torn, another
// format) is nullopt.
std::optional<Record> DecodeRecord(std::span<const std::byte> unit);

// The current watermark of an intent area: the watermark entry with the
// higher sequence number that decodes. A store whose entries both fail (a
// new store) has W = 0, clean: no batch was ever issued.
struct Watermark {
  uint64_t w = 0;
  uint64_t sequence = 0;
  bool clean = true;
};
Watermark ReadWatermark(std::span<const std::byte> intent_area);
// The entry (and its index in the area) that records `next`: the one of
// the two that `next.sequence` selects.
intent::Entry WatermarkEntry(const Watermark& next);
inline uint32_t WatermarkEntryIndex(uint64_t sequence) {
  return intent::kWatermarkEntries[sequence % 2];
}

}  // namespace regionstore::batch

#endif  // REGIONSTORE_LIB_BATCH_H_
