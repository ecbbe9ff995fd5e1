// The intent area: a 4 KiB unit of the store file, just before the data
// area, where a writer records what a barrier in progress is about, so that
// the next writer's open in the same boot can undo what a failed barrier
// may have left behind. Pure functions on byte buffers: no I/O here.
// docs/FORMAT.md ("Intent area") is the specification and
// docs/CHECKPOINTS.md ("Recovery") says why each mark exists; keep the three
// in step.
#ifndef REGIONSTORE_LIB_INTENT_H_
#define REGIONSTORE_LIB_INTENT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "format.h"
#include "regionstore/store_info.h"

namespace regionstore::intent {

inline constexpr uint64_t kAreaSize = format::kIntentAreaSize;
inline constexpr uint64_t kEntrySize = 64;
inline constexpr uint32_t kEntryCount = kAreaSize / kEntrySize;

// Entry field offsets.
namespace ent {
inline constexpr size_t kKind = 0;
inline constexpr size_t kRegion = 4;
inline constexpr size_t kSlot = 8;
inline constexpr size_t kReserved0 = 12;
inline constexpr size_t kGeneration = 16;
inline constexpr size_t kBootId = 24;
inline constexpr size_t kReserved1 = 40;
inline constexpr size_t kChecksum = 56;
}  // namespace ent

enum class Kind : uint32_t {
  kFree = 0,
  // A durable barrier for the commit (region, slot, generation) is running.
  kCommitBarrier = 1,
  // A barrier is running that can report a writeback error of pages the
  // writer cannot name (commits made without a barrier, or headers it
  // zeroed), or, at open, whatever earlier handles left in the page cache.
  // Left in place if the barrier fails.
  kFileBarrier = 2,
  // This writer has made commits without a barrier (kNone, kAsync) since
  // its last successful whole-file barrier: they are in the page cache
  // only. Cleared by the next successful fdatasync; the next open's
  // fdatasync, which makes them durable, runs as a file barrier.
  kVolatilePending = 3,
  // Stores with a batch log only. The batch watermark W (`generation`):
  // every batch with an id up to W completed and was made durable, so its
  // members count without their record. `region` bit 0: "clean", the writer
  // that wrote it issued no batch id above W; `boot_id` bytes 0-7: a
  // sequence number, the higher of the two watermark entries is current.
  // Not tied to a boot: it describes the disk.
  kBatchWatermark = 4,
  // A durable barrier for the batch with id `generation` is running: if it
  // did not return, the next open in this boot zeroes the batch's members.
  kBatchBarrier = 5,
  // Protocol 2 stores only, in the store file (never in the sidecar): the
  // sidecar's identity as the last writer's open left it. `generation` the
  // id it gave the sidecar (sidecar.h), `region` a counter of writer opens
  // (each open writes it anew before it changes anything a reader sees),
  // `boot_id` the boot it was written in.
  kSidecar = 6,
};

// Where this writer keeps each kind of mark: fixed entries, so that setting
// one never needs a search. A batch's barrier has an entry of its own,
// kBatchBarrierEntry.
inline constexpr uint32_t kFileBarrierEntry = 0;
inline constexpr uint32_t kVolatileEntry = 1;
inline constexpr uint32_t kFirstCommitEntry = 2;
inline constexpr uint32_t kBatchBarrierEntry = 3;
// Protocol 2: the sidecar's identity (Kind::kSidecar), in the store's area.
// Every other boot-scoped entry lives in the sidecar.
inline constexpr uint32_t kSidecarEntry = 4;
// The two watermark entries, written alternately (by sequence parity).
inline constexpr uint32_t kWatermarkEntries[2] = {kEntryCount - 2, kEntryCount - 1};
// The publication word (0.9): not a mark. Bytes 0-7 a counter P, 8-15 the
// XXH3-64 of bytes 0-7; 16 zero bytes read as P = 0. The writer adds 2 after
// it makes a single commit visible, and 1 before and 1 after it changes
// several regions' visible commits (a batch), so an odd P means "a batch is
// being published". Readers of several regions (Store::LoadSet) take P
// before and after their snapshot of the headers; the same bytes twice, P
// even, mean no visible commit changed in between (docs/CHECKPOINTS.md,
// "Consistent loads"). Its checksum fails DecodeEntry, so it is no mark.
inline constexpr uint32_t kPublicationEntry = kEntryCount - 4;
inline constexpr size_t kPublicationSize = 16;
using PublicationBytes = std::array<std::byte, kPublicationSize>;
PublicationBytes EncodePublication(uint64_t p);
// P, or nullopt for bytes that are neither 16 zeros nor P and its checksum
// (a write of the word in progress, or one a power loss tore).
std::optional<uint64_t> DecodePublication(std::span<const std::byte> bytes);

using BootId = std::array<std::byte, 16>;
using EntryBytes = std::array<std::byte, kEntrySize>;

struct Entry {
  Kind kind = Kind::kFree;
  uint32_t region = 0;
  uint32_t slot = 0;
  uint64_t generation = 0;
  BootId boot_id{};
};

// File offset of the intent area of a store laid out as `info` says: the
// 4 KiB unit that ends at data_offset, when the superblock and region table
// end at or before its start. Stores whose table reaches into that unit
// (8,129 to 8,160 regions with the data area at 1 MiB, made only before
// 0.4) have none.
std::optional<uint64_t> AreaOffset(const StoreInfo& info);

EntryBytes EncodeEntry(const Entry& entry);
// A live entry: kind known and not kFree, checksum and reserved bytes right.
// Anything else (a free entry, one torn by a kill while it was being
// written, garbage) is nullopt: it records nothing.
std::optional<Entry> DecodeEntry(std::span<const std::byte> bytes);

}  // namespace regionstore::intent

#endif  // REGIONSTORE_LIB_INTENT_H_
