// Checkpoint regions: named, fixed-capacity regions whose commits are
// all-or-nothing under a process crash and, in the durable modes, a power
// loss. docs/FORMAT.md gives the slot layout; docs/CHECKPOINTS.md the
// protocol and why it meets the guarantees below.
//
// Guarantees (assuming a write never changes bytes outside its range, and a
// device that honours cache flushes):
//  G1  torn or damaged data is never returned as valid: each slot carries a
//      checksum of its header and one of its payload;
//  G2  after a process crash (kill -9), a region holds the last commit whose
//      call returned or the one in flight, in any mode;
//  G3  after a power loss, a region holds the newest commit whose call
//      returned in a durable mode (kSync, kPwriteFdatasync), or a newer
//      complete commit, whatever mix of modes came before and after it;
//  G4  after a power loss, a region holds the newest commit covered by a
//      whole-file barrier that returned (Store::Sync, a kPwriteFdatasync
//      commit or Flush, a writer's open), or a newer complete one: a barrier
//      covers every commit whose call returned before the barrier began.
//
// What each mode does on Commit in a protocol 2 store, the default (one
// barrier per durable commit; the header always reaches the page cache after
// the whole payload, so a kill leaves the target slot empty or unfinished,
// never a valid header over a partial payload). The intent marks, the
// publication word and the wake word are stores into the sidecar, PATH.shm:
//  kNone             up to 16 KiB, and above it while this handle wrote the
//                    target slot less than 5 s before with no whole-file
//                    barrier since (its pages are then most likely dirty
//                    and writable): through the mapping:
//                    clear the target's magic, copy the payload, store the
//                    header (its magic last). No system call, but a futex
//                    wake when a reader waits on the store. Otherwise the
//                    writes of kSync below without its barrier (pwritev,
//                    pwrite: 2 system calls): a store into a page writeback
//                    cleaned takes a write fault per 4 KiB page, a pwrite
//                    none (docs/BENCHMARKS.md, "Commits into clean pages")
//  kAsync            as kNone, then msync(MS_ASYNC) of the slot's pages
//  kSync             pwritev of a zero header unit and the payload (from
//                    64 KiB, sync_file_range to start its writeback), pwrite
//                    of the header unit, msync(MS_SYNC) of that range only:
//                    3 system calls (4 from 64 KiB)
//  kPwriteFdatasync  the same writes, then fdatasync
// Protocol 1 (CreateOptions::protocol = 1) writes its marks and the
// publication word into the store by pwrite (durable commits: three more
// calls, and one more device request per fdatasync), and wakes with a futex
// call after every commit whether or not a reader waits. docs/CHECKPOINTS.md,
// "Commit" and "Protocol 1: how it differs".
// In every mode the payload checksum is of the bytes the slot received
// (through the mapping: hashed as it is copied; by pwritev: read back
// through the mapping after it), never
// of the caller's buffer read a second time: a buffer another thread changes
// during the call gives a commit of mixed bytes that loads as returned. A
// commit filled in place through PendingCommit::payload() is the store's own
// bytes, checksummed where they are at Finish.
#ifndef REGIONSTORE_CHECKPOINT_H_
#define REGIONSTORE_CHECKPOINT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "regionstore/export.h"
#include "regionstore/io.h"
#include "regionstore/status.h"
#include "regionstore/store_info.h"

namespace regionstore {

// SlotLayout::kAuto gives regions of at most this capacity compact slots
// (docs/history/BENCH-CHECKPOINTS-0.13.md, "Compact slots", has the measurement behind it).
inline constexpr uint64_t kCompactSlotLimit = 256 * 1024;

// A region to lay out when creating a store.
struct CheckpointSpec {
  // 1 to 64 bytes of UTF-8 without control characters; unique in the store.
  std::string name;
  // The largest payload a commit may hold, in bytes (at least 1).
  uint64_t capacity = 0;
  // kAuto: compact slots up to kCompactSlotLimit, 64 KiB-aligned ones above.
  SlotLayout layout = SlotLayout::kAuto;
  // Slots of the region: 3 to kMaxSlots, or 0 for the default: three for
  // Store::Create, the source's count for Store::CopyTo (CopyOptions::slots
  // sets every region's). Three hold the newest commit, the newest durable
  // one and the next commit's target. While a background barrier
  // (Store::StartSync) makes one commit of the region durable, the first
  // commit after it still finds a slot, but a second one waits for that
  // barrier; a fourth slot (a spare, one more capacity of disk) lets every
  // commit without a barrier of its own go ahead instead (docs/GUARANTEES.md,
  // G4). More add nothing yet.
  uint32_t slots = 0;
};

// The slot counts CheckpointSpec::slots takes, and every release reads.
inline constexpr uint32_t kDefaultSlots = 3;
inline constexpr uint32_t kMaxSlots = 64;

// Checks a region name against the rule above. Errors: kInvalidArgument,
// saying what is wrong.
REGIONSTORE_EXPORT Status ValidateRegionName(std::string_view name);

enum class SlotState : uint8_t {
  // No commit here: the header unit is zero (never written), or its magic is
  // still zero because a commit was interrupted before its header was
  // complete (writers clear the magic first and store it last, so a kill
  // leaves this, never a half-written header; `reason` then says so).
  kEmpty,
  kValid,  // header and payload checksums match
  // The region's newest header passes every check but its payload does not
  // match it. A kill cannot leave this (the header is written only after the
  // whole payload); a power loss during that commit can, and so can damage
  // after the commit returned. Nothing in the file tells the two apart.
  kTorn,
  // Invalid, and not the region's newest header: a header that fails its
  // checks, or an older header whose payload does not match. After a power
  // loss, the trace of an interrupted commit; otherwise damage. Never what
  // Load returns.
  kIncomplete,
  // Invalid, in a region where no header passes its checks: every commit is
  // lost (damage, or a power loss during the region's first commit).
  kDamaged,
};
// "empty", "valid", "torn", "incomplete", "damaged".
REGIONSTORE_EXPORT std::string_view SlotStateName(SlotState state);

struct SlotReport {
  uint32_t index = 0;
  SlotState state = SlotState::kEmpty;
  // From the header when the header passed every check (so for kValid,
  // kTorn, and a kIncomplete slot whose payload is what failed), else 0.
  uint64_t generation = 0, length = 0, commit_unix_ns = 0;
  // Why a slot is not valid ("payload checksum mismatch", ...), and for a
  // kEmpty slot with an unfinished header, that.
  std::string reason;
  // false when only headers were read (VerifyOptions::check_payloads off),
  // for every slot: kValid then means "the header checks out", and a damaged
  // or torn payload would go unseen.
  bool payload_checked = true;
  // In a store with a batch log: the id of the batch this commit belongs to
  // (0: a single commit; kWithdrawnBatch: a member of an interrupted batch
  // that a writer's open withdrew), and whether that batch did not complete
  // (a power loss or a kill interrupted it: the slot is kIncomplete,
  // `reason` says which member is missing, and the next writer's open
  // withdraws it: it never counts again, and keeps its generation until the
  // slot is reused).
  uint64_t batch_id = 0;
  bool batch_incomplete = false;
  // With batch_incomplete: the batch's record is there but fails its
  // checksum. No kill leaves that (the record is written whole, before any
  // member's header): the batch log was damaged, or a power loss tore the
  // record. Either way the batch no longer loads; `regionctl verify` exits 6.
  bool batch_record_torn = false;
};
inline constexpr uint64_t kWithdrawnBatch = UINT64_MAX;

struct RegionReport {
  std::string name;
  uint32_t index = 0;  // position in the region table
  uint64_t capacity = 0;
  // false when only headers were read: `has_commit` and the fields below
  // then describe the newest header that checks out, whose payload nobody
  // read (tools must say so, never call it "the newest commit").
  bool payload_checked = true;
  // The newest valid slot, if any: what Load returns.
  bool has_commit = false;
  uint32_t active_slot = 0;
  uint64_t generation = 0, length = 0, commit_unix_ns = 0;
  // The newest header that checks out has a payload that does not match
  // (SlotState::kTorn): a power loss interrupted that commit, or it was
  // damaged after it returned. With `has_commit`, Load returns the older
  // commit above; without it, Load fails with kTornCommit.
  bool torn = false;
  uint32_t torn_slot = 0;
  uint64_t torn_generation = 0;
  // No header of the region passes its checks, and some slot holds data:
  // every commit was lost.
  bool damaged = false;
  // Protocol 2 stores with a batch journal: the commit above is a member of
  // a durable batch whose record is in the journal but whose slot
  // (`active_slot`) does not hold it yet (a power loss came first); Load
  // returns it from the record, and the next writer's open writes it into
  // its slot. A torn or damaged state of that slot is then not reported.
  bool journaled = false;
  std::vector<SlotReport> slots;
};

// What Load returned.
struct CheckpointMeta {
  uint64_t generation = 0, length = 0, commit_unix_ns = 0;
  uint32_t slot = 0;
  // Non-zero when a newer header of the region, with this generation,
  // passes its checks but its payload does not match (SlotState::kTorn), so
  // Load returned the older commit above: a power loss interrupted that
  // newer commit, or it was damaged after it returned.
  uint64_t skipped_torn_generation = 0;
  // Non-zero when a newer commit of the region belongs to a batch that did
  // not complete (yet): the batch's id. Load returned the older commit
  // above. A reader racing the writer sees this while the batch is being
  // written; after a crash, until the next writer's open removes the trace.
  uint64_t skipped_incomplete_batch = 0;
  // Slots of the region whose header fails its checks (not empty, not
  // unfinished). A kill cannot leave one: it is damage, or a power loss
  // while a header was written, and it may have held a newer commit than
  // the one returned.
  uint32_t invalid_header_slots = 0;
};

struct VerifyOptions {
  // nullptr: Io::Default().
  Io* io = nullptr;
  // kRefuse: a path that is a symbolic link is refused, as in
  // OpenOptions::symlinks; kFollow: read the store it points to.
  SymlinkPolicy symlinks = SymlinkPolicy::kRefuse;
  // false: read only the slot headers (64 bytes each), however large the regions
  // (`regionctl inspect`); slots report payload_checked = false.
  bool check_payloads = true;
  // true: also read the whole data area (it has no checksums: this finds
  // unreadable blocks, kIOError naming the offset).
  bool read_data_area = false;
  // Called after each read of up to 1 MiB with the bytes read so far and the
  // total this call will read (slot payloads and headers, data area).
  std::function<void(uint64_t done, uint64_t total)> progress;
  // Called once the superblock and region table are validated, before any
  // slot is read, with what VerifyReport::info will hold: a report can print
  // its first lines before the slots of many regions are read.
  std::function<void(const StoreInfo& info)> on_info;
  // Called with each region's report as soon as it is complete, in table
  // order (index into info.regions). An error later still fails the call, so
  // what was handed out until then is not the whole store.
  std::function<void(size_t index, const RegionReport& report)> on_region;
};

// A record of protocol 2's batch journal that fails its checks while a
// whole record with a higher batch id follows it. The writer appends a record
// only after the one before it returned, so no crash leaves this: the record
// was damaged after it was written. The newer record is read and applied as
// if the damaged one were whole; the damaged record's own batch counts by
// its slots alone.
struct DamagedJournalRecord {
  uint64_t file_offset = 0;  // of the damaged record's first 4096-byte unit
  uint64_t length = 0;       // bytes from there to the newer record
  // The batch id the damaged record's head names (unchecked); 0 when its
  // first unit does not start with the record magic.
  uint64_t batch_id = 0;
  uint64_t next_batch_id = 0;  // the newer record's
};

// What VerifyRegions read: the validated superblock and region table (what
// ReadStoreInfo returns), and one report per region, in table order.
struct VerifyReport {
  StoreInfo info;
  std::vector<RegionReport> regions;
  // Damaged records of the batch journal, in file order. Read only while
  // the journal matters to readers: no writer of this boot has opened the
  // store (after a reboot). Empty otherwise and in stores without one.
  std::vector<DamagedJournalRecord> damaged_journal_records;
};

// Reads the store at `path` with pread only (no mapping, no lock): the
// superblock and region table, then every slot header and, by default,
// payload checksum, from one open of the file. For `regionctl verify` and
// `inspect`; a bad disk gives an error, not SIGBUS. Errors: those of
// ReadStoreInfo (kInvalidArgument: `path` is a symbolic link and
// options.symlinks is kRefuse), kIOError, kCorruption (the file ends inside
// a slot or the data area: truncated while open).
REGIONSTORE_EXPORT Result<VerifyReport> VerifyRegions(const std::string& path,
                                                      const VerifyOptions& options = {});

}  // namespace regionstore

#endif  // REGIONSTORE_CHECKPOINT_H_
