// Store: one fixed-size file, mapped once MAP_SHARED for the life of the
// handle, with writes under explicit durability modes.
//
// Threads, processes and the handle: see "Threads and processes" above
// class Store.
//
// fork(): a child inherits the parent's descriptor and its MAP_SHARED
// mapping. The flock belongs to the open file description they now share, so
// the store stays locked while any process holds that descriptor: a child
// that outlives the parent's Store keeps other writers (and the parent's own
// reopen) out with kBusy until it exits or execs (the descriptor is
// close-on-exec). The child may read through the inherited mapping; it must
// not write through an inherited writable Store (two writers would race).
// Destroying the child's copy unmaps and closes only the child's copy: it
// writes nothing (not even the clean batch watermark a parent's close
// writes), and does not wait for a background barrier of the parent's.
// The copy refuses every call that writes (Commit, Write, Flush, Sync,
// StartSync, batches and the like) with kInvalidArgument: the library
// counts fork() calls (pthread_atfork) and knows the handle is inherited.
//
// SIGBUS: View(), Read(), Write(), Load(), List(), Report() and kNone/kAsync
// commits touch the mapping directly. A media error, or another process
// truncating the file, makes that access raise SIGBUS; the library does not
// catch it. ReadStoreInfo(), VerifyRegions(), a writer's open and the
// settling of a region at its first commit use pread only.
#ifndef REGIONSTORE_STORE_H_
#define REGIONSTORE_STORE_H_

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "regionstore/checkpoint.h"
#include "regionstore/durability.h"
#include "regionstore/export.h"
#include "regionstore/io.h"
#include "regionstore/status.h"
#include "regionstore/store_info.h"

namespace regionstore {

// 64-bit only: whole files are mapped, and file offsets are 64-bit.
static_assert(sizeof(void*) == 8, "regionstore maps whole files: 64-bit only");
static_assert(sizeof(off_t) == 8, "regionstore needs a 64-bit off_t");

// What one durability mode did through one handle since it was opened.
struct ModeStats {
  uint64_t writes = 0;         // Write calls that returned OK
  uint64_t bytes_written = 0;  // their bytes
  // barriers issued (msync, fdatasync, RWF_DSYNC): Write, Flush, Commit, and
  // Sync (counted as kPwriteFdatasync's)
  uint64_t flushes = 0;
  uint64_t flush_nanos = 0;      // wall time inside those barriers
  uint64_t commits = 0;          // Commit calls that returned OK
  uint64_t bytes_committed = 0;  // their payload bytes (a batch counts each member)
  uint64_t batches = 0;          // CommitBatch calls that returned OK
};

// Counters of a Store handle. Per process and per handle: nothing is stored
// in the file.
struct StoreStats {
  // Indexed by static_cast<size_t>(Durability).
  std::array<ModeStats, 4> by_mode{};
  uint64_t failed_flushes = 0;  // barriers (msync/fdatasync) that failed; each poisons
  uint64_t failed_writes = 0;   // pwrite/pwritev failures; each poisons
  // Extra fdatasyncs a CommitBatch made so that it could reuse a unit of the
  // batch log. Batches that make no whole-file barrier of their own (kNone,
  // kAsync, journaled) cost two every 32nd batch unless a whole-file barrier
  // runs at least every 16 batches; the first batch after an open that found no
  // clean batch watermark (the last writer was killed or poisoned, or closed
  // after such batches with no whole-file barrier since) costs one.
  uint64_t batch_log_barriers = 0;
  // fdatasyncs a durable CommitBatch made because the batch journal had no
  // room for its record (protocol 2 stores with a journal): every record
  // before it must be redundant, its members durable in their slots, before
  // the journal starts over.
  uint64_t journal_checkpoints = 0;
  // Barriers started in the background (Store::StartSync, and
  // OpenOptions::sync_interval's), counted when started.
  uint64_t background_syncs = 0;
  // Commits and batch members that waited for a background barrier in
  // flight because every other slot of their region held the newest, the
  // durable, or a commit that barrier covers.
  uint64_t waits_for_background_sync = 0;
  // Calls that waited for another thread's commit on the same handle: a
  // commit of the same region waiting for its barrier (or a WaitDurable of
  // it), a slot pinned by the
  // barrier shared by durable commits, or all 32 intent entries for such
  // commits taken.
  uint64_t waits_for_group_commit = 0;
  bool poisoned = false;

  // By value: `store.Stats().of(mode)` is a temporary's member, and a
  // reference to it would dangle.
  ModeStats of(Durability durability) const { return by_mode[static_cast<size_t>(durability)]; }
};

// A payload in pieces (Store::CommitPieces, BatchMember).
using PayloadPieces = std::span<const std::span<const std::byte>>;
inline constexpr size_t kMaxPayloadPieces = 1000;

// One region of a batch commit (Store::CommitBatch) and its payload.
struct BatchMember {
  std::string_view region;
  PayloadPieces pieces;
};
// Members one batch may have (the batch record fills one 4 KiB unit).
inline constexpr size_t kMaxBatchMembers = 254;

// One region of a batch filled in place (Store::BeginBatch): at most
// `max_length` bytes.
struct BatchReservation {
  std::string_view region;
  uint64_t max_length = 0;
};

struct CreateOptions {
  // Replace an existing file at the path. A store whose writer is alive is
  // never replaced: Create takes that store's lock first (kBusy if held) and
  // keeps it across the rename. A symbolic link at the path is refused
  // (kInvalidArgument), dangling or not: the rename would replace the link,
  // not the store it points to. So is anything but a regular file there (a
  // directory, a FIFO, a device, a socket: kInvalidArgument), checked before
  // any block is written.
  bool replace_existing = false;
  // The OS seam; nullptr means Io::Default(). Not owned; must outlive the call.
  Io* io = nullptr;
  // If set, Create appends what the caller should know but that does not stop
  // it. On btrfs: that the store was made NOCOW (so btrfs no longer checksums
  // its data, only checkpoint regions carry their own checksums, and after a
  // snapshot of the subvolume the next write to each block is copy-on-write
  // again), or that the flag could not be set and a full disk can turn a
  // mapped write into SIGBUS. On other copy-on-write filesystems (bcachefs,
  // ZFS): that the reservation does not prevent that SIGBUS.
  std::vector<std::string>* warnings = nullptr;
  // Checkpoint regions to lay out after the data area, in this order (at
  // most 1,048,576). Each gets three slots (CheckpointSpec::slots asks for
  // more): compact ones (4 KiB + its capacity, rounded up to the page size)
  // or 64 KiB-aligned ones (64 KiB + its capacity rounded up to 64 KiB), as
  // CheckpointSpec::layout says.
  // Past 8,128 regions the data area starts at the next 1 MiB boundary after
  // the table instead of at 1 MiB.
  std::vector<CheckpointSpec> checkpoints;
  // Protocol 1 only (a protocol 2 store always has a batch log): reserve a
  // batch log (128 KiB before the intent area) so that the store takes batch
  // commits (Store::CommitBatch). Such a store sets an incompatible-feature
  // flag: releases before 0.8 refuse it. Without it the store is laid out
  // exactly as before, and CommitBatch is refused. With it, at most 7,104
  // regions keep the data area at 1 MiB.
  bool batch_log = false;
  // The commit protocol (docs/CHECKPOINTS.md). 1: every release since 0.1
  // reads the store. 2, the default since 0.13: the state a writer shares
  // with readers and with the next writer of the same boot (the intent marks,
  // the publication word, the wake word and its waiter bit) lives in a
  // sidecar file beside the store, PATH.shm (SidecarPath), created by the
  // writer's open and never synced. So a commit with nobody waiting makes no
  // system call, and a durable commit writes its slot and nothing else. A
  // protocol 2 store always has a batch log (as if batch_log were set) and a
  // batch journal (journal_size, below), and sets incompatible-feature flags:
  // releases before 0.13 refuse it (0.12 made protocol 2 stores without the
  // journal, which 0.13 still opens and commits to in 0.12's way). Its writer
  // needs to create or open PATH.shm (with the store's owner, group and
  // permission bits; readers never create it), and refuses one that someone
  // who cannot write the store could write (kInvalidArgument, naming its
  // owner and mode; docs/FORMAT.md, "Who may write it"). Removing that file
  // while the store is in use costs the next writer's open a recovery of
  // every region, never a commit. A reader that cannot write the sidecar
  // polls in WaitForNewer (every 10 ms); one that cannot read it, or finds
  // one that breaks that rule, also gets kBusy from LoadSet while a writer
  // holds the store. A writer's first open needs room for the
  // sidecar's 72 KiB (kNoSpace on a full filesystem). Protocol 2's metadata
  // takes 5 MiB before the data area with the default journal (protocol 1: 1
  // MiB). Anything but 1 or 2 is kInvalidArgument.
  uint32_t protocol = 2;
  // Protocol 2: the batch journal's size in bytes (0: 4 MiB), a multiple of
  // 64 KiB from 256 KiB to 1 GiB. A durable batch whose record (a head of
  // 4 KiB per 46 members, then each payload rounded up to 4 KiB) fits in half
  // of it is committed by one pwritev2(RWF_DSYNC) of that record, with no
  // fdatasync except one when the journal is full
  // (StoreStats::journal_checkpoints) and two when the batch log needs a
  // durable watermark (StoreStats::batch_log_barriers); a larger one by the
  // batch log's path (one fdatasync). The journal starts over at each
  // whole-file barrier. Such a store sets incompat bit 4: releases before
  // 0.13 refuse it. Non-zero with protocol 1 is kInvalidArgument.
  uint64_t journal_size = 0;
  // Called after each zero-filled chunk (8 MiB) with the bytes written so
  // far and the file size: a store of many GiB takes seconds to fill.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// What a large commit has done so far: OpenOptions::commit_progress.
struct CommitProgress {
  std::string_view region;  // valid during the call only
  Durability durability = Durability::kNone;
  uint64_t length = 0;  // the payload's bytes
  // Of them, written into the file (the page cache).
  uint64_t stored = 0;
  // kSync and kPwriteFdatasync: of them, written to the device. The barrier
  // that follows the last call flushes the device's cache and writes the
  // header; a call with written_back == length is not yet a durable commit.
  // 0 in the other modes.
  uint64_t written_back = 0;
};

// Commits of at least this many bytes report their progress, in steps of it.
inline constexpr uint64_t kCommitProgressStep = 16 * 1024 * 1024;

struct OpenOptions {
  // The OS seam; nullptr means Io::Default(). Not owned; must outlive the Store.
  Io* io = nullptr;
  // kRefuse: a path whose last component is a symbolic link is refused with
  // kInvalidArgument (O_NOFOLLOW), so a link planted where a store is
  // expected cannot redirect writes (or a writer's recovery) to another
  // file. kFollow: open the store the link points to. Symbolic links among
  // the directories of the path are followed either way. The same field,
  // with the same default, is in VerifyOptions and UnshareOptions, and
  // ReadStoreInfo takes it as an argument.
  SymlinkPolicy symlinks = SymlinkPolicy::kRefuse;
  // If set, a writer's open appends what the caller should know but that
  // does not stop it: on btrfs, that blocks of the store are shared (a
  // snapshot of the subvolume, or a reflink copy), so the next write to each
  // of them is copy-on-write again and can raise SIGBUS on a full disk.
  std::vector<std::string>* warnings = nullptr;
  // A writer's open refuses a store whose blocks are shared with another
  // file outside btrfs (an XFS reflink copy: cp --reflink, cp from coreutils
  // 9+) with kSharedExtents, because a mapped write into a shared block
  // needs a new block, and on a full filesystem that is SIGBUS. true opens
  // it anyway, with a warning. Read-only opens never check.
  bool allow_shared_extents = false;
  // A writer wakes the readers waiting for a commit (Store::WaitForNewer)
  // after every commit and batch. Protocol 2: one futex(FUTEX_WAKE) call
  // only when a waiter has registered in the sidecar, none otherwise.
  // Protocol 1: one futex(FUTEX_WAKE) call every time, about half a
  // microsecond here (docs/CHECKPOINTS.md, "Readers that wait"). false
  // saves it where nobody waits; a waiter then sees new commits only at
  // each WaitOptions::recheck.
  bool wake_waiters = true;
  // Writers: above zero, a commit or batch that returns starts a background
  // barrier (Store::StartSync) when none is in flight, a commit without a
  // barrier is pending, and this long has passed since the last whole-file
  // barrier began: commits in kNone become durable within about this
  // interval of the next commit, and no call waits for the flush. Checked
  // at those calls only: a handle that stops committing starts none (call
  // Sync() before stopping). Zero (the default) starts none.
  std::chrono::milliseconds sync_interval{0};
  // Writers: called from the committing thread during each Commit and
  // CommitPieces of at least kCommitProgressStep bytes. A commit written by
  // pwrite (every durable one, and kNone/kAsync into pages this handle has
  // not written in the last seconds) writes its payload in steps of
  // kCommitProgressStep and calls after each, `stored` rising to `length`;
  // then, in kSync and kPwriteFdatasync, it hashes what it stored and waits
  // for the writeback step by step (sync_file_range), calling after each
  // with `written_back` rising to `length`, before the header and the
  // barrier. A commit through the mapping calls once, after its copy.
  // Batches and commits filled in place do not call it. It must not call
  // this Store, and must not throw (the program terminates if it does).
  // Empty (the default): no call and no wait for writeback; durable commits
  // of 4 MiB and more still write in 2 MiB steps (Store::Commit).
  std::function<void(const CommitProgress&)> commit_progress{};
};

// How Store::WaitForNewer waits.
struct WaitOptions {
  // How often a waiter that was not woken looks again: it checks that the
  // store's path (as given to Open, resolved again) still names the file
  // it opened, and it rechecks the region, for a writer that does not wake
  // it (one before 0.10, or opened with wake_waiters = false). One stat
  // call per recheck; nothing else while it sleeps.
  std::chrono::nanoseconds recheck = std::chrono::seconds(1);
};

// Options of UnshareStore.
struct UnshareOptions {
  // The OS seam; nullptr means Io::Default(). Not owned; must outlive the call.
  Io* io = nullptr;
  // As OpenOptions::symlinks.
  SymlinkPolicy symlinks = SymlinkPolicy::kRefuse;
  // Called after each unshared or rewritten piece (at most 64 MiB) with the
  // shared bytes handled so far and the shared bytes found.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// What UnshareStore found and did.
struct UnshareReport {
  uint64_t shared_bytes = 0;   // shared bytes found before
  uint64_t shared_ranges = 0;  // in this many ranges
  // How: "none" (nothing was shared), "fallocate" (FALLOC_FL_UNSHARE_RANGE:
  // XFS) or "rewrite" (pread and pwrite of the same bytes: btrfs, where that
  // call fails with EOPNOTSUPP).
  std::string method = "none";
  uint64_t shared_bytes_after = 0;  // FIEMAP after the fsync; 0 on success
};

// Gives the store at `path` blocks of its own where it shares them with
// another file (a reflink copy) or a btrfs snapshot, so mapped writes into
// it cannot fault on a full disk for that reason. Takes the writer lock
// for the whole call (kBusy if a writer has the store open) and validates
// the superblock first. Where FIEMAP reports shared extents: XFS gets
// fallocate(FALLOC_FL_UNSHARE_RANGE) per range, which copies the blocks;
// btrfs (EOPNOTSUPP there) gets every shared range read and written back
// with the same bytes, which copies them on write. Then fsync, and FIEMAP
// again. The bytes of the store never change. Only this file gets new
// blocks; the copy it shared them with is left as it is (and is itself
// shared no more once every sharer but one is unshared).
// Errors: those of Store::Open (kBusy, kNotFound, kCorruption, ...);
// kNoSpace (no room for the copies: what was unshared stays unshared, the
// rest stays shared, the data is unchanged); kIOError (EOPNOTSUPP: FIEMAP
// is missing here; or the extents are still shared after the fsync: the
// message gives the bytes).
REGIONSTORE_EXPORT Result<UnshareReport> UnshareStore(const std::string& path,
                                                      const UnshareOptions& options = {});

// Options of Store::CopyTo.
struct CopyOptions {
  // Replace a file at the destination, as CreateOptions::replace_existing
  // does (never a store whose writer is alive, never a symbolic link,
  // directory or other non-regular file). Without it, an existing file at
  // the destination is kAlreadyExists and nothing is written.
  bool replace_existing = false;
  // The copy's commit protocol (CreateOptions::protocol): 0 keeps the
  // source's, 1 or 2 migrates. A copy is the only way a store changes
  // protocol: no superblock is ever rewritten in place.
  uint32_t protocol = 0;
  // The copy's data area in bytes: 0 keeps the source's; a larger one is
  // zero past the source's bytes. Smaller is kInvalidArgument.
  uint64_t data_size = 0;
  // The copy's geometry beyond the source's (the offline grow): an entry
  // naming a region of the source gives it this capacity, at least the
  // source's (smaller is kInvalidArgument: a copy never drops bytes; 0
  // keeps the source's capacity), this layout (kAuto: chosen for the new
  // capacity, or the source's when the capacity is kept) and this many
  // slots (0 keeps the source's); an entry
  // naming no region adds it, empty, after the source's regions. Each
  // region keeps its newest commit and its generations either way.
  std::vector<CheckpointSpec> checkpoints;
  // Slots of every region of the copy that no entry above gives its own
  // (CheckpointSpec::slots): 3 to 64, or 0 to keep each source region's
  // count (and three for a region added).
  uint32_t slots = 0;
  // As CreateOptions::warnings (filesystem notes about the new file).
  std::vector<std::string>* warnings = nullptr;
  // Called with the bytes written so far and the total: the new file's
  // zero-fill, then the commits and the data area.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// What Store::CopyTo wrote.
struct CopyReport {
  uint32_t protocol = 0;
  uint64_t regions = 0;            // every region of the source
  uint64_t regions_committed = 0;  // those that held a commit to copy
  uint64_t payload_bytes = 0;      // their payloads
  uint64_t data_bytes = 0;         // the source's data area, copied
  uint64_t file_size = 0;          // of the new store
};

// A commit that a Store::Sync made durable: the newest commit of `region`
// then, made without a barrier of its own (kNone, kAsync, or a member of a
// batch without one).
struct SyncedCommit {
  std::string region;
  uint64_t generation = 0;
};

// What Store::Sync did.
struct SyncReport {
  // The commits its barrier made durable, in region order: each region's
  // newest commit without a barrier that had returned when the barrier
  // began, if no barrier had covered it yet. Earlier commits of the region
  // were superseded; later ones were not covered (the next Sync covers them).
  std::vector<SyncedCommit> made_durable;
  uint64_t barrier_nanos = 0;  // time in the fdatasync
};

// Threads and processes. A writable handle is internally synchronised: any
// number of threads may call it at once, and each call runs as if alone,
// one after another, with two exceptions that run beside others:
//  - A durable commit (Commit or CommitPieces in kSync or kPwriteFdatasync)
//    of a protocol 2 store waits for its barrier without holding the
//    handle: other threads' calls run meanwhile, and durable commits that
//    arrive while a barrier is in flight share the next one (one fdatasync
//    for all of them: group commit). It returns once a barrier that began
//    after its writes returned has returned; if that barrier fails, every
//    commit it covered and every commit waiting after it fails, and the
//    handle is poisoned. Any other call that touches the same region (a
//    commit, a batch, BeginCommit or BeginBatch naming it) waits until
//    that commit returned, so a region's commits are ordered as their calls
//    returned. Protocol 1 handles make each durable commit whole, barrier
//    included, before the next call runs.
//  - Read and View take no lock, and MutableView only to check the handle:
//    they may run beside any call,
//    and a Read or View of a range being written (Write, or a view's
//    stores) may see a mix of old and new bytes.
// A writer's own Load, LoadSet, List and Report run between other calls
// (never beside a commit's copy), so they see whole commits, including one
// still waiting for its barrier, which is visible to every reader from the
// moment its header is written; WaitForNewer on a writer's handle sleeps
// without holding it, so another thread's commit wakes it. A PendingCommit
// or PendingBatch is one thread's at a time, and one fill is pending per
// handle (BeginCommit, BeginBatch: kBusy for a second). Stats() and
// poisoned() may be called from any thread.
// A read-only handle's calls may all run at once (Load retries a copy that
// a writer changed under it; see below).
// Moving or destroying a handle must not overlap any other call on it.
// Different handles share nothing but the file, so they may be used from
// different threads as if from different processes.
//
// Across processes (and handles): one writer per store, enforced with flock
// (kBusy for a second one); any number of read-only handles, which take no
// lock and never block the writer. A read-only handle's Load runs beside the
// writer's Commit: it checks what it copied and retries (kBusy if the
// writer keeps rewriting the slot). Its List and Report may show the slot
// being written as incomplete, and its Read and View see raw writes as the
// page cache holds them.
class PendingCommit;
class PendingBatch;

class REGIONSTORE_EXPORT Store {
 public:
  // Creates a store whose data area holds `data_size` bytes (zero allowed), as
  // a publish: a temp file in the same directory, mode 0600 (nameless,
  // O_TMPFILE, where the Io, kernel and filesystem allow it, so that no kill
  // leaves it behind; else a hidden random name made with O_EXCL), every
  // block reserved with posix_fallocate and zero-filled, the superblock
  // written, fsync, published at `path` (without replace_existing, never
  // over an existing file: a nameless temp is linked there, a named one
  // renamed with RENAME_NOREPLACE; with it, renamed over it, a nameless
  // temp after a link onto a hidden name), fsync of the directory. On
  // btrfs the temp is made NOCOW (FS_NOCOW_FL, read back before any block
  // is allocated; see CreateOptions::warnings). A SIGKILL
  // can leave a named temp behind (see temp_files.h for signals), a
  // nameless one only between that link and the rename of a replace.
  // On failure no temp file is left (if removing it fails too, the message
  // names it) and the error's operation names the step ("create: fallocate",
  // "create: link", "create: rename", ...). One exception: if only the final
  // directory fsync fails, the complete store is already at `path`
  // (its name may not survive a power loss) and a retry gets kAlreadyExists.
  // Errors: kInvalidArgument (size too large; a bad, duplicate or
  // zero-capacity checkpoint region; replace_existing and `path` is a
  // symbolic link; `path` is on a btrfs with mixed data and metadata block
  // groups, FsInfo::mixed_block_groups, where a full disk turns mapped
  // writes into SIGBUS whatever Create does), kAlreadyExists, kNotFound (no
  // such directory),
  // kPermissionDenied, kNoSpace, kIOError.
  static Status Create(const std::string& path, uint64_t data_size,
                       const CreateOptions& options = {});

  // Opens the store at `path`: validates the superblock (magic, version,
  // checksum, sizes against the real file size) before touching any data,
  // takes the single-writer lock for kReadWrite (and checks that the locked
  // inode is still the one at `path`, so a concurrent replace is not missed),
  // then maps the whole file MAP_SHARED from that same locked descriptor.
  // A writer of a protocol 2 store then opens or creates the sidecar PATH.shm,
  // where the intent marks are. Every writer reads the intent area (4 KiB,
  // pread) and, in a protocol 2 store, writes the sidecar's identity entry
  // (64 bytes, pwrite) into it. If an earlier writer in this boot died while a
  // barrier of its was running, or saw it fail, the commit (or batch) it was
  // making is kept if it is whole, since readers may have been given it, and
  // written again so that the open's barrier covers it (its payload once), or
  // zeroed if it is not; journaled batches whose members are not in their slots
  // are written there. It then calls fdatasync once, which makes whatever
  // earlier handles left in the page cache durable. That is all: after a clean
  // close the open reads the superblock, the region table (128 bytes a region),
  // the intent area and the batch journal's records (its first 4 KiB when it
  // holds none), and writes no slot, however much the regions hold. After a
  // kill, or a close that left a batch not yet made durable by a whole-file
  // barrier (a journaled one included), the open of a store with a batch log
  // (every protocol 2 store) also reads every slot header (64 bytes each) and
  // the whole journal, and writes into its slot again the newest member of each
  // region that a batch journaled since the last whole-file barrier named.
  // (After a kill or failure inside a barrier that ran while commits without a
  // barrier were pending, after this boot's sidecar was removed or replaced, or
  // in a store too old to have an intent area, it writes every region's header
  // units and newest commit again before the fdatasync.) A region's slots are
  // read at its first Commit through the handle (its headers and newest
  // payload, with pread); regions nobody commits to cost nothing. Damaged slots
  // are never returned. docs/CHECKPOINTS.md, "Recovery".
  // A symbolic link at `path` is refused unless options.symlinks is kFollow.
  // Copy-on-write blocks: a writer's open asks FIEMAP whether the store's
  // blocks are shared, one ioctl per 64 extents (about 0.5 us on ext4 and
  // XFS for a store in few extents; where FIEMAP is missing, no check). Shared on btrfs: a warning
  // (OpenOptions::warnings). Shared elsewhere: kSharedExtents unless
  // OpenOptions::allow_shared_extents. A reflink made while a writer has the store open is not seen
  // until the next open: that writer's mapped writes can then fault on a full disk. Errors:
  // kSharedExtents (the message names regionctl unshare PATH), kInvalidArgument (`path` is a
  // symbolic link and options.symlinks is kRefuse; the message says how to allow it), kNotFound,
  // kPermissionDenied, kCorruption, kUnsupportedVersion, kBusy (another
  // writer, in this process or another, holds the lock), kIOError (ELOOP:
  // a symbolic link loop, or more than 40 links, in the path).
  static Result<Store> Open(const std::string& path, OpenMode mode,
                            const OpenOptions& options = {});

  Store(Store&& other) noexcept;
  Store& operator=(Store&& other) noexcept;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  // Unmaps and closes (releasing the lock). Never flushes: what was written
  // with kNone stays in the page cache and reaches disk whenever the kernel
  // writes it back.
  ~Store();

  // Copies `data` to data offset `offset`, then flushes per `durability`
  // (see durability.h for what each mode survives). An empty `data` is a
  // no-op. Not atomic under a crash: a multi-page write can be torn. kNone
  // and kAsync copy through the mapping below 256 KiB, and from 256 KiB by
  // pwrite unless this handle wrote the whole range in the last 5 s with no
  // barrier since (no write fault per page where writeback cleaned the
  // pages; bytes from this store's own mapping always take the mapping). A
  // full disk under a store with holes is then kNoSpace from the pwrite, or
  // SIGBUS through the mapping (Store::Create reserves every block).
  // Errors: kInvalidArgument (range outside the data area or overflowing, a
  // read-only store, or a handle a fork() child inherited; nothing changed),
  // kIOError and kNoSpace (errno kept; a failed msync, pwrite or fdatasync
  // poisons the store), kPoisoned.
  Status Write(uint64_t offset, std::span<const std::byte> data, Durability durability);

  // Copies `data` to data offset `offset` with pwrite, without a flush and
  // without touching the mapping: for streaming an input larger than memory
  // (a copy into the mapping faults every page it writes into this process,
  // where it counts as resident memory until the handle closes). Other
  // processes' mappings and this one see the bytes at once, as after a
  // kNone Write, with kNone's guarantees until a Flush of the range makes
  // them durable (Flush in kSync or kPwriteFdatasync covers pages written
  // this way too). Errors: as Write (a failed pwrite may have changed some
  // pages: the store is poisoned).
  Status Pwrite(uint64_t offset, std::span<const std::byte> data);

  // Makes [offset, offset + length) durable with one barrier, for several
  // kNone writes, Pwrites or stores through a MutableView: kSync msyncs the covering
  // pages, kPwriteFdatasync calls fdatasync (the whole file), kAsync msyncs
  // with MS_ASYNC, kNone does nothing. After a durable barrier the covering
  // pages' page-table entries are dropped (the page cache keeps the data):
  // the next access to them maps whole folios again instead of taking a
  // write-protect fault per 4 KiB page (docs/history/BENCH-CHECKPOINTS-0.13.md, "Working
  // in place"). Errors: as Write.
  Status Flush(uint64_t offset, uint64_t length, Durability durability);

  // Makes every commit and batch that returned before the call, and every
  // raw write (Write, Pwrite, stores through a MutableView), durable with
  // one barrier: fdatasync of the file. A commit made without a barrier of
  // its own (kNone, kAsync) costs a copy and no flush; a later Sync makes it
  // durable, so a loop can commit every step and Sync when it chooses. Only
  // what completed before the barrier began is covered. After a power cut,
  // each region holds the newest commit a returned Sync (or any durable
  // commit or whole-file barrier) covered, or a newer whole one
  // (docs/GUARANTEES.md, G4). Reports which commits it made durable.
  // Errors: kInvalidArgument (a read-only store), kIOError (the fdatasync
  // failed: the store is poisoned, and the data since the last barrier that
  // returned may be lost), kPoisoned.
  Result<SyncReport> Sync();

  // Starts a whole-file barrier (fdatasync) on a thread of the library's
  // and returns at once: it covers every commit and batch that returned
  // before this call, as Sync() would, and the handle completes it at its
  // next call that finds it done (any Commit, CommitBatch, Write, Flush,
  // Sync, DurableGeneration, WaitDurable), or at the first one that needs
  // it: another barrier (one is in flight at a time: a file's writeback
  // error is reported once, to the first call that looks), a commit whose
  // region has no slot left that holds neither its newest commit, its
  // durable one, nor one this barrier covers (StoreStats counts those
  // waits), and the destructor. A barrier in flight when StartSync is
  // called is completed first. The thread is the library's only other
  // thread in a handle, started by the first StartSync and kept, asleep,
  // until the handle closes (starting one per barrier cost 50-80 µs); it
  // makes the fdatasync and nothing else (the threading rules above). It
  // does not exist in a child after fork() (a
  // child must not write through an inherited Store anyway; see the top of
  // this file). A failed background fdatasync is
  // returned by the call that completes it, and the handle is poisoned:
  // every later call returns kPoisoned. Errors: kInvalidArgument
  // (read-only), kPoisoned, those of a barrier in flight it completes first.
  Status StartSync();

  // The generation of the newest commit of region `name` known durable.
  // On the writable handle: made by a durable commit or batch, covered by a
  // Sync or another whole-file barrier that returned, or found on disk when
  // the handle opened (a writer's open makes what the last writer left
  // durable, or undoes it); 0 when the region holds none; the first call
  // for a region reads its headers, as its first commit would. On a
  // read-only handle of a protocol 2 store, in any process: what the writer
  // published in the sidecar (docs/FORMAT.md, "Sidecar"), for the first
  // 8,192 regions of the table. The writer publishes a region's durable
  // commit only after the barrier that made it durable returned, and from
  // its open on (an open starts every region at 0 again, and publishes a
  // region once it settled it: at its open's recovery, or at the region's
  // first commit or DurableGeneration call), so a reader may see 0 or an
  // older generation, never one a power cut can take back; 0 also where no
  // writer of this release has opened the store since its sidecar was
  // made, on a handle that opened an older release's sidecar before a
  // writer grew it (open the reader again), and where the point is newer
  // than every commit the region's slots hold (a store file restored or
  // copied over the path under its sidecar: the point is another file's).
  // A restored file whose commits are as new as the point is not told
  // apart: restore a store with no writer and no reader relying on it, and
  // remove its sidecar. A commit of generation g is durable once this is g or
  // more: a standby acts on what it loaded only then. Errors: kNotFound, kInvalidArgument (a
  // read-only handle of a protocol 1 store, or a region past the 8,192), kBusy (a read-only handle
  // that cannot read the writer's sidecar), those of reading the headers, kPoisoned.
  Result<uint64_t> DurableGeneration(std::string_view name);

  // Returns once the commit of generation `generation` of region `name` (or
  // a newer one) is durable: at once if it is, after the background barrier
  // in flight if that covers it, else after a Sync, which covers it if it
  // had returned. Errors: kNotFound, kInvalidArgument (a
  // generation this handle never issued, or a read-only store), those of
  // Sync.
  Status WaitDurable(std::string_view name, uint64_t generation);

  // Copies `out.size()` bytes from data offset `offset` out of the mapping.
  // Errors: kInvalidArgument (range outside the data area).
  Status Read(uint64_t offset, std::span<std::byte> out) const;

  // A read-only view of [offset, offset + length) of the data area, valid
  // until the Store is destroyed or moved from. Errors: kInvalidArgument.
  Result<std::span<const std::byte>> View(uint64_t offset, uint64_t length) const;

  // A writable view of [offset, offset + length) of the data area, for
  // working on the data where it lives (the store's own bytes: whatever a
  // store through it leaves there is what Flush and readers see): stores through it are raw writes
  // in kNone (they reach the page cache the file shares at once, survive a kill, and reach the disk
  // when the kernel writes them back), and Flush(offset, length, mode) makes them durable with one
  // barrier in kSync (msync of the covering pages) or kPwriteFdatasync (fdatasync); kAsync only
  // starts writeback, as for Write. Not atomic under a crash, like Write. Valid for the life of the
  // handle: a move keeps it valid (the mapping moves with the handle), destroying the Store unmaps
  // it. A durable Flush, and a kSync Write, drop the page-table entries of the range they synced:
  // the view stays valid, and its next store maps the page again (docs/BENCH-LAB.md). It holds
  // the handle's lock only to check it (the threading rules above). Errors: kInvalidArgument (range
  // outside the data area, or a read-only store), kPoisoned.
  Result<std::span<std::byte>> MutableView(uint64_t offset, uint64_t length);

  // --- Checkpoint regions (see checkpoint.h for G1-G3 and each mode's path)

  // Replaces the content of region `name` with `payload`, all or nothing:
  // the bytes go to a slot that holds neither the newest commit nor the
  // newest durable one, the header always after the whole payload (pwritev
  // of a zero header unit and the payload, pwrite of the header unit; kNone
  // and kAsync through the mapping instead up to 16 KiB, or while the
  // slot's pages are likely dirty from this handle's last write; kSync and
  // kPwriteFdatasync from 4 MiB in a 64 KiB-aligned slot in 2 MiB steps of
  // pwritev, each step's writeback started before the next), then the
  // barrier of `durability` (kSync: msync of that slot's range;
  // kPwriteFdatasync: fdatasync of the file). checkpoint.h lists each
  // mode's system calls per protocol. The first commit into a
  // region through this handle first reads its headers and newest payload
  // (pread), and zeroes and syncs headers that hold no commit it trusts.
  // `payload` is read once: the payload checksum is of the bytes the slot
  // received (read back from the mapping), so if another thread changes
  // `payload` during the call (a mistake), the commit holds some mix of old
  // and new bytes and still loads as the generation returned.
  // Returns the commit's generation: above every generation of the region's
  // headers that pass their checks (payload valid or not) and every one this
  // handle issued; generations of commits lost whole in a power loss may come
  // again. An empty payload is a commit of length 0. Errors: kNotFound (no
  // such region), kInvalidArgument (payload longer than the capacity, or a
  // read-only store; nothing changed), kIOError (a failed write, msync or
  // fdatasync poisons the store and zeroes this commit's header in the page
  // cache; after reopening, Load returns this commit or the one before,
  // byte-exact), kPoisoned, kCorruption (the generation counter is
  // exhausted: only a crafted file).
  Result<uint64_t> Commit(std::string_view name, std::span<const std::byte> payload,
                          Durability durability);

  // Commit with the payload in pieces: the commit holds their
  // concatenation, written with one gather write (kSync, kPwriteFdatasync)
  // or copied piece after piece (kNone, kAsync), so callers need not join
  // their state first. At most kMaxPayloadPieces pieces (kInvalidArgument);
  // empty pieces are skipped. Otherwise exactly as Commit, the pieces read
  // once too.
  Result<uint64_t> CommitPieces(std::string_view name, PayloadPieces pieces, Durability durability);

  // Commits `members` (distinct regions, 1 to kMaxBatchMembers of them) as
  // one batch, all or nothing, in `durability`; returns each member's new
  // generation, in the order given. After a kill, every member region holds
  // its batch payload or every one holds what it held before (a commit made
  // to one of them after the batch aside); after a power loss the same, and
  // a batch whose durable call returned is there, as G3 says for commits.
  // kSync and kPwriteFdatasync make one barrier for the whole batch, and at
  // times the batch log's (StoreStats::batch_log_barriers). In a protocol 2
  // store with a journal (every one made since 0.13), a batch whose record fits
  // in half the journal (CreateOptions::journal_size) is one
  // pwritev2(RWF_DSYNC) of that record, with no fdatasync except one when the
  // journal is full and the batch log's two; its members
  // reach their slots through the page cache and are made durable there by
  // the next whole-file barrier or, after a crash, by the next writer's open.
  // Any other durable batch (larger, in protocol 1, or in a 0.12 protocol 2
  // store) makes one fdatasync, which also writes back other dirty pages of
  // the file, raw writes included. docs/CHECKPOINTS.md ("Batches") has the
  // protocol. Needs a batch log: every protocol 2 store has one, a protocol
  // 1 store only if created with CreateOptions::batch_log. Every check is
  // made before anything is written: kInvalidArgument (no batch log, no member,
  // too many, a region named twice, a payload over its region's capacity,
  // too many pieces, a read-only store), kNotFound (no such region). Other
  // errors as Commit: a failed write or barrier poisons the handle, and
  // after reopening every member holds the batch or every one the commit
  // before, byte-exact. Each payload is read once, as in Commit: a durable
  // batch through the journal copies them into its record first, and its
  // checksums, the record's write and the slots' writes all come from that
  // copy.
  Result<std::vector<uint64_t>> CommitBatch(std::span<const BatchMember> members,
                                            Durability durability);

  // Copies the newest valid commit of region `name` into `out` (resized to
  // its length). From a read-only handle while another process commits:
  // reads the header generation before and after the copy and checks the
  // payload checksum, retrying a bounded number of times. Never blocks the
  // writer. If the region's newest header checks out but its payload does
  // not (torn: a power loss during that commit, or damage after it
  // returned), returns the newest older intact commit and says so in
  // CheckpointMeta::skipped_torn_generation. Errors: kNotFound (no such
  // region, or no commit yet: the message says which), kTornCommit (the
  // newest commit is torn and no older one is intact), kCorruption (slots
  // hold data but no header passes its checks), kBusy (the writer kept
  // replacing the slot being copied; retry later).
  Result<CheckpointMeta> Load(std::string_view name, std::vector<std::byte>& out) const;

  // Begins a commit of at most `max_length` bytes into region `name`, to be
  // filled in place: PendingCommit::payload() is the target slot's payload
  // area in the mapping, PendingCommit::Append writes into it by pwrite from
  // a buffer the caller keeps small; Finish then commits the first `length`
  // bytes in any durability mode, with at most one barrier (docs/
  // CHECKPOINTS.md, "Commits filled in place"). Until then the region is
  // exactly as it was: Load returns its newest commit, and a kill, a power
  // loss or an abandoned commit (Abort, or the PendingCommit destroyed
  // unfinished) leave it so. The target is the slot a Commit would take,
  // holding neither the newest nor the newest durable commit; Begin clears
  // its header first. One pending commit per handle: a second Begin gets
  // kBusy, and so do Commit and CommitBatch naming its region (other regions
  // commit as usual). Errors: kNotFound (no such region), kInvalidArgument
  // (max_length over the capacity, a read-only store), kBusy, kPoisoned,
  // and those of reading the region's slots at its first commit.
  Result<PendingCommit> BeginCommit(std::string_view name, uint64_t max_length);
  // Begins a batch whose members are filled in place: as BeginCommit for
  // each member (PendingBatch::payload(m) or Append(m, ...)), then
  // PendingBatch::Finish commits them as CommitBatch would, all or nothing
  // with one barrier. It is this handle's one pending commit: the same busy
  // rules hold for every member's region. Errors: as CommitBatch (a store
  // without a batch log, no members or too many, a region named twice) and
  // as BeginCommit.
  Result<PendingBatch> BeginBatch(std::span<const BatchReservation> members);

  // Waits until region `name` holds a commit with a generation above
  // `generation` (0: any commit), then copies it into `out` as Load does and
  // returns its CheckpointMeta; returns at once if there is one already.
  // Sleeps on a futex word that the writer changes after every commit and
  // batch, from a read-only handle in any process (or this one): no lock,
  // and no wake-up lost to a commit that lands just before the sleep.
  // Protocol 2: the sidecar's wake word; the waiter sets its waiter bit
  // there (so the writer wakes it) and writes nothing else; a handle that
  // cannot open the writer's sidecar for writing polls every 10 ms instead.
  // Protocol 1: a word in the store's mapping, woken after every commit,
  // nothing written. Spurious
  // wake-ups and signals are absorbed. On the writer's own handle it holds
  // no lock while it sleeps, so another thread's commit wakes it (the
  // threading rules above). Errors: as Load
  // (kNotFound: no such region), kTimedOut (`timeout` passed, which is what
  // a waiter whose writer died gets), kStoreReplaced (found at a recheck:
  // the path now names another file, or none), kInvalidArgument (a store
  // without an intent area, made before 0.4 with 8,129 to 8,160 regions;
  // a recheck interval that is not positive).
  Result<CheckpointMeta> WaitForNewer(std::string_view name, uint64_t generation,
                                      std::chrono::nanoseconds timeout, std::vector<std::byte>& out,
                                      const WaitOptions& options = {}) const;

  // Loads several distinct regions as one consistent set: every region as
  // of one instant of the commit history, never one region from before a
  // commit or batch and another from after it (Load of each in turn can
  // give that, racing a writer). Fills outs[i] (resized to names.size())
  // and returns the CheckpointMeta of names[i] at index i. On a read-only
  // handle it runs beside a writer in another process without blocking it:
  // it reads the regions' headers between two reads of the store's
  // publication word, which the writer changes around every change of a
  // visible commit, copies, checks, and retries a bounded number of times
  // (docs/CHECKPOINTS.md, "Consistent loads"). The promise needs a writer
  // of 0.9 or later (older ones do not keep the word). Errors: as Load for
  // any region (the set fails whole), kInvalidArgument (no names, a name
  // twice, a store without an intent area), kBusy (the writer kept
  // changing the set; retry later). A writer killed mid-batch does not make
  // it kBusy: with no writer holding the store (File::HasWriter) the set is
  // what that writer left visible; an Io that cannot tell gets kBusy with a
  // message saying so. On a protocol 2 store the word is in the sidecar
  // (CreateOptions::protocol): a handle that cannot read the writer's
  // sidecar gets kBusy, naming it, while a writer holds the store.
  Result<std::vector<CheckpointMeta>> LoadSet(std::span<const std::string_view> names,
                                              std::vector<std::vector<std::byte>>& outs) const;

  // Every region, every slot: states, generations and why a slot is invalid.
  // Reads every header and payload through the mapping (a read-only handle
  // racing a writer may see the slot being written as incomplete).
  std::vector<RegionReport> List() const;
  // List() for one region. Errors: kNotFound.
  Result<RegionReport> Report(std::string_view name) const;

  // Writes a new store at `destination` holding what this one holds: the
  // same regions (names, capacities, slot layouts), each region's newest
  // commit with its generation and commit time, and the data area. The
  // regions are one consistent set, as LoadSet gives them (a region with no
  // commit stays empty), so a copy taken while another process commits
  // batches holds each batch whole or not at all. The data area is copied
  // as its bytes stand while the copy reads them: raw writes and views
  // carry no atomicity, so a range written meanwhile may be old or new in
  // part. Generations carry on: the copy's next commit of a region is
  // numbered above the one copied. The copy is a new store (its own uuid,
  // no sidecar yet, batch ids from 1), built in a temp beside the
  // destination, synced, and published by one rename: after a failure or a
  // kill the destination is as it was, or absent, never partial. Works on a
  // read-only handle beside a live writer, which it does not block.
  // Errors: kInvalidArgument (the destination is this store's file, a
  // protocol or size that cannot be, and those of Store::Create), those of
  // LoadSet (kBusy when the writer kept changing the set; kCorruption or
  // kTornCommit for a region with nothing valid to copy: nothing is
  // written), kAlreadyExists, kNoSpace, kIOError.
  Result<CopyReport> CopyTo(const std::string& destination, const CopyOptions& options = {}) const;

  const std::string& path() const;
  // The superblock and region table, as validated at Open.
  const StoreInfo& info() const;
  uint64_t data_size() const;
  bool writable() const;
  // True once a flush failed; every later Write/Flush returns kPoisoned.
  bool poisoned() const;
  // The handle's counters: writes, bytes and barriers per mode, time spent
  // in barriers, failures. Cheap (a copy), from any thread.
  StoreStats Stats() const;

  // The library's state behind a handle: a name only, defined inside the
  // library.
  struct Rep;

 private:
  friend class PendingCommit;
  friend class PendingBatch;
  explicit Store(std::unique_ptr<Rep> rep);
  // Load with the handle's mutex held, or on a read-only handle.
  Result<CheckpointMeta> LoadHeld(std::string_view name, std::vector<std::byte>& out) const;
  // Load from the region's slots alone (Load adds a journaled batch that
  // no writer has replayed yet).
  Result<CheckpointMeta> LoadFromSlots(std::string_view name, std::vector<std::byte>& out) const;
  // LoadSet; with `missing_ok`, a region with no commit is generation 0.
  Result<std::vector<CheckpointMeta>> LoadSetImpl(std::span<const std::string_view> names,
                                                  std::vector<std::vector<std::byte>>& outs,
                                                  bool missing_ok) const;
  std::unique_ptr<Rep> rep_;
};

// A commit being filled in place (Store::BeginCommit). Move-only; must not
// be used once its Store is destroyed (every call then returns
// kInvalidArgument, and destroying it does nothing). One thread at a time,
// and not beside Write, Flush or Commit on the same Store.
class REGIONSTORE_EXPORT PendingCommit {
 public:
  PendingCommit(PendingCommit&& other) noexcept;
  PendingCommit& operator=(PendingCommit&& other) noexcept;
  PendingCommit(const PendingCommit&) = delete;
  PendingCommit& operator=(const PendingCommit&) = delete;
  // Aborts if neither finished nor aborted.
  ~PendingCommit();

  // The target slot's payload area in the store's mapping, max_length
  // bytes; empty once finished or aborted. Stores through it go straight
  // into the page cache (and count in the process's resident memory, page
  // by page). These are the store's bytes, not a copy: whatever they hold
  // when Finish runs is the payload, and Finish checksums them there: a
  // store that lands before then changes what is committed, one that lands
  // while Finish hashes or after it leaves a torn commit (G1 still holds:
  // Load never returns it as valid).
  std::span<std::byte> payload();
  // Writes `bytes` by pwrite at appended() into the payload area and
  // advances appended(): for payloads larger than the memory the caller
  // wants to hold (regionctl commit and import stream this way). `bytes` is
  // read once, through a private copy of at most 1 MiB at a time that is
  // both hashed and written, so a buffer changed meanwhile by another
  // thread cannot make the commit fail to load. Errors:
  // kInvalidArgument (past max_length: nothing written; not pending), a
  // failed pwrite (kIOError, the handle poisoned).
  Status Append(std::span<const std::byte> bytes);
  // Bytes written by Append so far.
  uint64_t appended() const;
  // The file offset of the payload area (for tools and tests).
  uint64_t payload_file_offset() const;

  // Commits the first `length` bytes of the payload area (at most
  // max_length) in `durability`, exactly as Commit of those bytes would,
  // and returns the generation: kNone/kAsync store the header through the
  // mapping (kAsync then msync(MS_ASYNC)); kSync and kPwriteFdatasync
  // pwrite the header unit, then one barrier (msync(MS_SYNC) of the slot's
  // range, or fdatasync). The payload checksum is computed while appending
  // when every byte came by Append, else read back from the mapping. After
  // Finish, successful or not, the commit is no longer pending. Errors: as
  // Commit, and kInvalidArgument (length over max_length; not pending).
  Result<uint64_t> Finish(uint64_t length, Durability durability);
  // Finish(appended(), durability).
  Result<uint64_t> Finish(Durability durability);
  // Drops the commit: the region stays exactly as it was (the target slot
  // stays empty). Nothing is written. A no-op when not pending.
  void Abort();
  bool pending() const { return rep_ != nullptr; }

 private:
  friend class Store;
  explicit PendingCommit(Store::Rep* rep);
  Store::Rep* rep_ = nullptr;
};

// A batch whose members are filled in place (Store::BeginBatch). Member m
// is the m-th BatchReservation. Move-only, with PendingCommit's rules for
// its Store, its threads, and what each call does per member; a member
// index out of range gets an empty span, 0, or kInvalidArgument.
class REGIONSTORE_EXPORT PendingBatch {
 public:
  PendingBatch(PendingBatch&& other) noexcept;
  PendingBatch& operator=(PendingBatch&& other) noexcept;
  PendingBatch(const PendingBatch&) = delete;
  PendingBatch& operator=(const PendingBatch&) = delete;
  // Aborts if neither finished nor aborted.
  ~PendingBatch();

  // Members while pending; 0 once finished or aborted.
  size_t size() const;
  std::span<std::byte> payload(size_t member);
  Status Append(size_t member, std::span<const std::byte> bytes);
  uint64_t appended(size_t member) const;
  uint64_t payload_file_offset(size_t member) const;

  // Commits the first lengths[m] bytes of each member's payload area as one
  // batch in `durability`, exactly as CommitBatch of those bytes would (one
  // record; kSync and kPwriteFdatasync: one fdatasync), and returns each
  // member's generation. After Finish, successful or not, the batch is no
  // longer pending. Errors: as CommitBatch, and kInvalidArgument (not one
  // length per member, a length over its max_length, not pending).
  Result<std::vector<uint64_t>> Finish(std::span<const uint64_t> lengths, Durability durability);
  // Finish with each member's appended() bytes.
  Result<std::vector<uint64_t>> Finish(Durability durability);
  // Drops the batch: every member's region stays exactly as it was.
  // Nothing is written. A no-op when not pending.
  void Abort();
  bool pending() const { return rep_ != nullptr; }

 private:
  friend class Store;
  explicit PendingBatch(Store::Rep* rep);
  Store::Rep* rep_ = nullptr;
};

}  // namespace regionstore

#endif  // REGIONSTORE_STORE_H_
