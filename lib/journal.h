// Protocol 2's batch journal: the records a durable batch writes as its
// commit point, as bytes; and the chain of records, read through a callback
// (the caller's pread or mapping: no I/O here).
// docs/FORMAT.md ("Batch journal") is the specification and
// docs/CHECKPOINTS.md ("Batches: a journal in every store") the protocol and
// its proof; keep the three in step.
#ifndef REGIONSTORE_LIB_JOURNAL_H_
#define REGIONSTORE_LIB_JOURNAL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "batch.h"
#include "format.h"
#include "intent.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"
#include "slot.h"

namespace regionstore::journal {

inline constexpr char kMagic[8] = {'R', 'G', 'N', 'J', 'R', 'N', 'L', '1'};
// Records start on and span whole units.
inline constexpr uint64_t kUnit = 4096;

// Head field offsets: a 40-byte head, then one 88-byte entry per member
// (its place, its payload's length and the 64-byte slot header it gets),
// zero up to the next unit boundary. The checksum is the XXH3-64 of the
// whole record (head and payloads) with its own 8 bytes read as zero.
namespace head {
inline constexpr size_t kMagic = 0;
inline constexpr size_t kBatchId = 8;
inline constexpr size_t kMemberCount = 16;
inline constexpr size_t kReserved = 20;
inline constexpr size_t kLength = 24;  // bytes of the whole record
inline constexpr size_t kChecksum = 32;
inline constexpr size_t kMembers = 40;
// region u32, slot u32, generation u64, length u64, then the slot header.
inline constexpr size_t kMemberSize = 24 + slot::kHeaderSize;
}  // namespace head

struct Member {
  uint32_t region = 0, slot = 0;
  uint64_t generation = 0, length = 0;
  bool operator==(const Member&) const = default;
};

// The journal's file offset in a store laid out as `info` says: the
// journal_size bytes before its batch log, in stores with
// format::kIncompatJournal; nullopt in any other.
std::optional<uint64_t> Offset(const StoreInfo& info);

constexpr uint64_t HeadBytes(uint64_t members) {
  return format::AlignUp(head::kMembers + members * head::kMemberSize, kUnit);
}
// A member's image: its payload, zero-padded to a unit. Its header is in
// the head, so a batch of small members writes little more than its bytes.
constexpr uint64_t ImageBytes(uint64_t length) { return format::AlignUp(length, kUnit); }
uint64_t RecordBytes(std::span<const Member> members);

// The head of batch `id`'s record (HeadBytes long), its checksum computed
// over the head and the payloads as the record lays them out: member i's
// entry holds `headers[i]`, its image `payloads[i]`, the pieces end to end.
std::vector<std::byte> EncodeHead(uint64_t id, std::span<const Member> members,
                                  std::span<const slot::HeaderBytes> headers,
                                  std::span<const PayloadPieces> payloads);
// The parts of the whole record for one gather write: the head, then each
// member's pieces and zero padding (from `zeros`, kUnit bytes of zero).
std::vector<std::span<const std::byte>> RecordParts(std::span<const std::byte> head,
                                                    std::span<const Member> members,
                                                    std::span<const PayloadPieces> payloads,
                                                    std::span<const std::byte> zeros);
// The whole record in one buffer.
void EncodeRecord(uint64_t id, std::span<const Member> members,
                  std::span<const slot::HeaderBytes> headers,
                  std::span<const PayloadPieces> payloads, std::vector<std::byte>& out);

// What the first unit of a record says its length is, if its magic, member
// count and length are plausible (1 to kMaxBatchMembers members, a length
// from RecordBytes' smallest up to `limit`); nullopt for anything else.
std::optional<uint64_t> RecordLength(std::span<const std::byte> first_unit, uint64_t limit);

struct Record {
  uint64_t id = 0;
  std::vector<Member> members;
  std::vector<slot::HeaderBytes> headers;  // each member's slot header
  std::vector<uint64_t> image_offsets;     // of each member's payload, in the record
};
// A whole record: magic, checksum, the length its members add up to, and
// each member's header valid for its region and slot, naming the member's
// generation, length and this batch, over a payload (its image) that
// matches it. Anything else (never written, torn, damaged, another record's tail)
// is nullopt.
std::optional<Record> DecodeRecord(std::span<const std::byte> record, const StoreInfo& info);

// One record of a chain, as read.
struct ChainRecord {
  uint64_t offset = 0;           // file offset of its first unit
  std::vector<std::byte> bytes;  // the whole record
  Record record;
};
// Bytes of the journal the chain passed over: where a record is not whole
// (or not above the id before it) and yet a whole record with a higher id
// follows. The writer appends each record only after the one before it
// returned (docs/FORMAT.md, "Batch journal"), so no torn write leaves this:
// it is damage.
struct DamagedRecord {
  uint64_t offset = 0;  // file offset of its first unit
  uint64_t length = 0;  // bytes from there to the newer record
  // The batch id its first unit names, when that unit starts with the
  // magic (not checked: the record is damaged); nullopt otherwise.
  std::optional<uint64_t> head_id;
  uint64_t next_id = 0;  // the newer record's id
};
struct Chain {
  std::vector<ChainRecord> records;
  uint64_t end = 0;  // file offset right after the last record (the journal's start if none)
  std::vector<DamagedRecord> damaged;
};
// Reads `length` bytes at a file offset (pread, or a copy out of the mapping).
using ReadAt = std::function<Status(uint64_t offset, std::span<std::byte> out)>;
// The chain of the journal of `info` at `journal_offset`: the records end to
// end from its start while each is whole (DecodeRecord) and its id is above
// the one before. Where that stops, the rest of the journal is searched unit
// by unit for a record's magic: a whole record there whose id is above the
// chain's last, above the batch watermark's W (lower ids are durable in
// their slots, and records of the journal's earlier rounds have them) and
// above the id the bad record's head names, continues the chain, and the
// bytes passed over are reported in Chain::damaged. Records of earlier rounds
// and a torn last record are the chain's end, as before. A clean watermark
// says no batch above W was issued: then nothing is searched. The only I/O
// is through `read`: the chain, and the journal's bytes past it once, in
// 256 KiB reads, unless the watermark is clean.
Result<Chain> ReadChain(const ReadAt& read, const StoreInfo& info, uint64_t journal_offset,
                        const batch::Watermark& watermark);

// Whether a writer of this boot has opened the store (the sidecar identity
// entry of `intent_area` names this boot), so that its open replayed the
// journal and every record since was applied by the batch that wrote it.
bool ReplayedThisBoot(std::span<const std::byte> intent_area, const Result<intent::BootId>& boot);

}  // namespace regionstore::journal

#endif  // REGIONSTORE_LIB_JOURNAL_H_
