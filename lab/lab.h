// The region lab, written once for the benchmarks (bench/lab_bench.cc,
// bench/commit_bench.cc) and `regionctl bench`: "1 MiB at offset 2 MiB in a
// 16 MiB file". A store with a 16 MiB data area; the update is a 1 MiB
// slice at data offset 2 MiB (file offset 3 MiB, 1 MiB-aligned, since the
// data area starts at file offset 1 MiB).
//
// And how the slice's pages get into the page cache (the folio regime): it
// decides what an msync or fdatasync writes back and how many faults a kept
// mapping takes after one. Large folios: Store::Create's 8 MiB zero-fill
// pwrites leave them, and one 1 MiB pwrite brings the slice back as one
// 1 MiB folio. Small folios: the slice faulted back in through a mapping
// comes back as 256 4 KiB folios.
//
// No Google Benchmark here, and no exit on an error: regionctl links this.
#ifndef REGIONSTORE_LAB_LAB_H_
#define REGIONSTORE_LAB_LAB_H_

#include <cstdint>
#include <string>

#include "lab/text_cells.h"
#include "regionstore/status.h"
#include "regionstore/store.h"

namespace regionstore::bench {

inline constexpr uint64_t kLabStoreSize = 16 * kMiB;   // the store's data area
inline constexpr uint64_t kLabSliceOffset = 2 * kMiB;  // data-area offset of the update
inline constexpr uint64_t kLabSliceSize = 1 * kMiB;    // the update

// Creates the lab's store at `path`: Store::Create with a kLabStoreSize data
// area and `options`.
Status CreateLabStore(const std::string& path, const CreateOptions& options);

// The file offset of the lab's slice in the store at `path`: its data offset
// (ReadStoreInfo) + kLabSliceOffset.
Result<uint64_t> LabSliceFileOffset(const std::string& path);

// How RefillPageCache brings a range back into the page cache.
enum class Refill {
  kPwrite,          // one pwrite of zeros over the range, then fdatasync: large folios
  kMappedRead,      // each page read through a read-only mapping: 4 KiB folios
  kHugeMappedRead,  // the same through a MADV_HUGEPAGE mapping: the fault's
                    // readahead allocates large folios
};

// Drops the whole file at `path` from the page cache, after an fdatasync so
// that its pages are clean and can be dropped (the whole file: a range
// would keep the large folios straddling its ends, which Store::Create's
// 8 MiB pwrites leave), then brings [offset, offset + length) back as `how`
// says. `offset` must be page-aligned. Checked on Linux 6.18 / ext4 with
// /proc/self/pagemap and /proc/kpageflags. Returns "" or what failed.
std::string RefillPageCache(const std::string& path, uint64_t offset, uint64_t length, Refill how);

// The lab's two folio regimes for its slice.
enum class FolioRegime { kLargeFolios, kSmallFolios };

// "large_folios", "small_folios".
const char* FolioRegimeName(FolioRegime regime);

// What the two regimes are, in a sentence (the lab's benchmark context).
extern const char* const kFolioRegimesText;

// Puts the lab slice at `slice_file_offset` of the store at `path` into the
// page cache in `regime`'s folios: RefillPageCache with kPwrite (large) or
// kMappedRead (small) over kLabSliceSize bytes.
std::string PrepareFolioRegime(const std::string& path, uint64_t slice_file_offset,
                               FolioRegime regime);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_LAB_H_
