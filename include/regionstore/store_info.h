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
#include <string_view>
#include <vector>

#include "regionstore/export.h"
#include "regionstore/io.h"
#include "regionstore/status.h"

namespace regionstore {

// How a checkpoint region's slots are laid out (docs/FORMAT.md,
// "Checkpoint slots").
enum class SlotLayout : uint8_t {
  // For CheckpointSpec only: kCompact for capacities up to
  // kCompactSlotLimit (checkpoint.h), kAligned above.
  kAuto,
  // A 64 KiB unit ending in the 4 KiB header unit, then the payload on a
  // 64 KiB boundary: no two slots share a page of 4, 16 or 64 KiB. The only
  // layout before 0.5.
  kAligned,
  // The 4 KiB header unit, then the payload; slots on the page size of the
  // host that created the store. A 100-byte region takes 3 x 8 KiB instead
  // of 3 x 128 KiB. Stores with such regions are refused by releases before
  // 0.5 (they set an incompatible-feature flag).
  kCompact,
};

// "auto", "aligned", "compact".
REGIONSTORE_EXPORT std::string_view SlotLayoutName(SlotLayout layout);

// One entry of the region table (checkpoint regions; empty in stores made
// without any).
struct RegionEntry {
  std::string name;
  uint64_t capacity = 0;  // largest payload a commit may hold
  uint32_t slot_count = 0;
  uint64_t slots_offset = 0;                 // file offset of slot 0
  uint64_t slot_stride = 0;                  // bytes from one slot to the next
  SlotLayout layout = SlotLayout::kAligned;  // kAligned or kCompact
  // Slots start on and span multiples of this: 65536 for kAligned; for
  // kCompact, the creating host's page size (4096 on x86-64).
  uint32_t slot_alignment = 65536;
};

struct StoreInfo {
  uint32_t format_version = 0;
  // Incompatible features the store uses (docs/FORMAT.md): bit 0 compact
  // slots, bit 1 a region table past 1 MiB, bit 2 a batch log, bit 3 a
  // sidecar for waiters (protocol 2), bit 4 a batch journal. 0 for every
  // store a release before 0.5 can read.
  uint32_t incompat_flags = 0;
  std::array<uint8_t, 16> uuid{};
  uint64_t file_size = 0;
  uint64_t data_offset = 0;  // file offset of data offset 0
  uint64_t data_size = 0;    // bytes writable through Write()
  uint64_t region_table_offset = 0;
  uint64_t created_unix_ns = 0;
  uint32_t created_page_size = 0;  // page size of the machine that made it
  uint64_t superblock_checksum = 0;
  // Bytes of the batch journal (bit 4 of incompat_flags; protocol 2 stores
  // made by 0.13 or later); 0 in a store without one.
  uint64_t journal_size = 0;
  std::vector<RegionEntry> regions;

  // The commit protocol the store uses (docs/CHECKPOINTS.md): 2 when the
  // store keeps its boot-scoped state (intent marks, publication and wake
  // words) in a sidecar (incompat bit 3), 1 otherwise.
  uint32_t protocol() const { return (incompat_flags & (1u << 3)) != 0 ? 2 : 1; }
};

// The UUID in its usual 8-4-4-4-12 lower-case hex form.
REGIONSTORE_EXPORT std::string FormatUuid(const std::array<uint8_t, 16>& uuid);

// Reads and validates the superblock and region table of the store at `path`
// with pread only: no mapping, no lock, so a bad disk gives an error and not
// a SIGBUS. This is what `regionctl inspect` shows. `io` nullptr means
// Io::Default(). A symbolic link at `path` is refused unless `symlinks` is
// SymlinkPolicy::kFollow, as Store::Open does (OpenOptions::symlinks).
// Errors: kInvalidArgument (`path` is a symbolic link and `symlinks` is
// kRefuse), kNotFound, kPermissionDenied, kCorruption (not a store: a
// directory, empty, bad magic, bad checksum, size disagreeing with the
// file), kUnsupportedVersion, kIOError.
REGIONSTORE_EXPORT Result<StoreInfo> ReadStoreInfo(const std::string& path, Io* io = nullptr,
                                                   SymlinkPolicy symlinks = SymlinkPolicy::kRefuse);

// Where the writer of a protocol 2 store at `store_path` keeps its sidecar:
// `store_path` + ".shm" (docs/CHECKPOINTS.md, "The sidecar"). The first
// writer's open creates it and no one removes it: it holds nothing a store
// needs after a reboot. Whoever removes a store removes this file too, once
// no process has the store open.
REGIONSTORE_EXPORT std::string SidecarPath(const std::string& store_path);

}  // namespace regionstore

#endif  // REGIONSTORE_STORE_INFO_H_
