// Reading and judging the slots of one checkpoint region, shared by Load
// and List (through the mapping), VerifyRegions (pread) and recovery (pread).
// Internal.
#ifndef REGIONSTORE_LIB_REGION_CHECK_H_
#define REGIONSTORE_LIB_REGION_CHECK_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format.h"
#include "regionstore/checkpoint.h"
#include "regionstore/io.h"
#include "regionstore/status.h"
#include "regionstore/store_info.h"
#include "slot.h"

namespace regionstore::region_check {

// Payload bytes checksummed (or copied) per read when working with pread.
inline constexpr uint64_t kChunk = 1 * format::kMiB;

// Reads `out.size()` bytes at a file offset: from the mapping or by pread.
using ReadFn = std::function<Status(uint64_t offset, std::span<std::byte> out)>;

// pread through `file`; a short read is kCorruption (truncated while open).
ReadFn PreadReader(File& file, const std::string& path);
// Copies out of the mapping (shared_copy.h); cannot fail.
ReadFn MappingReader(const Mapping& mapping);

// Checks a payload against its header's checksum, reading it in pieces.
Result<bool> PayloadMatches(const ReadFn& read, uint64_t offset, const slot::Header& header);

// What decides whether a member of a batch counts (docs/CHECKPOINTS.md,
// "Batches"): the store's batch log and watermark as a reader sees them.
// Without a log (`log_offset` nullopt) every header's batch id is 0.
struct BatchContext {
  const StoreInfo* info = nullptr;
  std::optional<uint64_t> log_offset;
  uint64_t watermark = 0;
  // Per region, the generation of the newest member of a journaled batch
  // that the next writer's open will replay (0: none); null when there is
  // none. A partner's region whose journal holds its member or a newer one
  // counts as in place or moved on, as it will after the replay.
  const std::vector<uint64_t>* journal_generations = nullptr;
  bool batch_ids() const { return log_offset.has_value(); }
};
// The context of the store `info` describes, its watermark read through
// `read` (batch_log.cc, the owner of the log's place and watermark).
Result<BatchContext> ReadBatchContext(const ReadFn& read, const StoreInfo& info);

// Whether the commit in slot `slot` of region `region`, whose header
// `header` passed its checks (and whose payload matched, if the caller
// checks payloads), counts: "" if it does, else why not. A single commit
// (batch id 0), or a member of a batch at or below the watermark, counts. A
// member of a later batch counts when that batch's record is valid, names
// exactly this slot and generation, and every other member it names is in
// place (header, batch id and, with `check_payloads`, payload), or its
// region holds a newer commit that counts.
Result<std::string> BatchVerdict(const ReadFn& read, const BatchContext& context, uint32_t region,
                                 uint32_t slot, const slot::Header& header,
                                 bool check_payloads = true);

// Whether batch `id`'s unit of the batch log holds bytes that fail the
// record's checks (not all zero, and no valid record of any batch): a torn
// or damaged record rather than one never written or since reused.
Result<bool> BatchRecordTorn(const ReadFn& read, const BatchContext& context, uint64_t id);

// Every slot of one region: header checks and, for a header that passes,
// the payload checksum (unless `check_payloads` is off) and, in a store with
// a batch log (`batch`), whether its batch completed. Then the region-level
// states: the newest header that checks out decides between a commit, a
// torn commit and damage.
Result<RegionReport> ExamineRegion(const ReadFn& read, const RegionEntry& region,
                                   uint32_t region_index, bool check_payloads = true,
                                   const BatchContext* batch = nullptr);

struct ValidHeader {
  uint32_t slot = 0;
  slot::Header header;
};

// The slots whose headers validate, newest first; equal generations (only
// in a crafted or damaged file) go to the lower slot, as ExamineRegion
// reports them.
std::vector<ValidHeader> ValidHeadersNewestFirst(const std::vector<slot::HeaderBytes>& headers,
                                                 const RegionEntry& region, uint32_t region_index,
                                                 bool batch_ids = false);

}  // namespace regionstore::region_check

#endif  // REGIONSTORE_LIB_REGION_CHECK_H_
