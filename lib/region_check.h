// Reading and judging the slots of one checkpoint region, shared by Load
// and List (through the mapping), VerifyRegions (pread) and recovery (pread).
// Internal.
#ifndef REGIONSTORE_LIB_REGION_CHECK_H_
#define REGIONSTORE_LIB_REGION_CHECK_H_

#include <cstdint>
#include <functional>
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

// Every slot of one region: header checks and, for a header that passes,
// the payload checksum (unless `check_payloads` is off). Then the
// region-level states: the newest header that checks out decides between
// a commit, a torn commit and damage.
Result<RegionReport> ExamineRegion(const ReadFn& read, const RegionEntry& region,
                                   uint32_t region_index, bool check_payloads = true);

struct ValidHeader {
  uint32_t slot = 0;
  slot::Header header;
};

// The slots whose headers validate, newest first; equal generations (only
// in a crafted or damaged file) go to the lower slot, as ExamineRegion
// reports them.
std::vector<ValidHeader> ValidHeadersNewestFirst(const std::vector<slot::HeaderBytes>& headers,
                                                 const RegionEntry& region, uint32_t region_index);

}  // namespace regionstore::region_check

#endif  // REGIONSTORE_LIB_REGION_CHECK_H_
