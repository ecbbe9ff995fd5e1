// StoreInfo: the validated superblock of a store, as docs/FORMAT.md defines it.
//
// The file format is little-endian on every host; StoreInfo holds the decoded
// native values. StoreInfo is a plain value; ReadStoreInfo may be called from
// any thread and any process at any time (it takes no lock and never blocks
// a writer).
#ifndef REGIONSTORE_STORE_INFO_H_
#define REGIONSTORE_STORE_INFO_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "regionstore/export.h"
#include "regionstore/io.h"
#include "regionstore/status.h"

namespace regionstore {

// One entry of the region table (checkpoint regions; empty in stores made
// without any).
struct RegionEntry {
  std::string name;
  uint64_t capacity = 0;      // largest payload a commit may hold
  uint32_t slot_count = 0;
  uint64_t slots_offset = 0;  // file offset of slot 0
  uint64_t slot_stride = 0;   // bytes from one slot to the next
};

struct StoreInfo {
  uint32_t format_version = 0;
  std::array<uint8_t, 16> uuid{};
  uint64_t file_size = 0;
  uint64_t data_offset = 0;  // file offset of data offset 0
  uint64_t data_size = 0;    // bytes writable through Write()
  uint64_t region_table_offset = 0;
  uint64_t created_unix_ns = 0;
  uint32_t created_page_size = 0;  // page size of the machine that made it
  uint64_t superblock_checksum = 0;
  std::vector<RegionEntry> regions;
};

// The UUID in its usual 8-4-4-4-12 lower-case hex form.
REGIONSTORE_EXPORT std::string FormatUuid(const std::array<uint8_t, 16>& uuid);

// Reads and validates the superblock and region table of the store at `path`
// with pread only: no mapping, no lock, so a bad disk gives an error and not
// a SIGBUS. This is what `regionctl inspect` shows. `io` nullptr means
// Io::Default(). A symbolic link at `path` is refused unless `symlinks` is
// SymlinkPolicy::kFollow, as Store::Open does (OpenOptions::follow_symlinks).
// Errors: kInvalidArgument (`path` is a symbolic link and `symlinks` is
// kRefuse), kNotFound, kPermissionDenied, kCorruption (not a store: a
// directory, empty, bad magic, bad checksum, size disagreeing with the
// file), kUnsupportedVersion, kIOError.
REGIONSTORE_EXPORT Result<StoreInfo> ReadStoreInfo(const std::string& path, Io* io = nullptr,
                                                   SymlinkPolicy symlinks = SymlinkPolicy::kRefuse);

}  // namespace regionstore

#endif  // REGIONSTORE_STORE_INFO_H_
