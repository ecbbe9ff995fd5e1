// Store::Rep: the state behind a Store handle, shared by store.cc (open,
// raw writes), barrier.cc (intent marks and barriers), commit.cc, load.cc
// and recovery.cc. Internal.
#ifndef REGIONSTORE_LIB_STORE_REP_H_
#define REGIONSTORE_LIB_STORE_REP_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "batch.h"
#include "batch_journal.h"
#include "batch_log.h"
#include "flusher.h"
#include "format.h"
#include "group_commit.h"
#include "intent.h"
#include "ledger.h"
#include "region_check.h"
#include "regionstore/store.h"
#include "shared_state.h"
#include "slot.h"
#include "test_hooks.h"  // for the tests that reach the hooks through this header

namespace regionstore {

// Opens `path` (a directory is kCorruption) for reading or writing. A
// symbolic link refused by `symlinks` is kInvalidArgument, with a message
// saying how to allow it.
// (store_info.cc)
Result<std::unique_ptr<File>> OpenStoreFile(Io& io, const std::string& path, OpenMode mode,
                                            SymlinkPolicy symlinks);

// Reads and validates superblock and region table with pread only.
Result<StoreInfo> ReadValidatedInfo(File& file, const std::string& path);

// What the writer knows about one checkpoint region, from validated slots
// only (never from a header that failed its checks). Open leaves a region
// unsettled; its first Commit through the handle reads its headers and its
// newest payload (Store::Rep::SettleRegion).
struct RegionState {
  bool settled = false;
  std::optional<uint32_t> newest;   // slot of the newest valid commit
  std::optional<uint32_t> durable;  // slot of the newest commit known durable
  // The highest generation of the region's headers that pass their checks
  // (payload valid or not) when it was settled, or of a commit this handle
  // issued since. The next commit gets this + 1. Headers that hold no
  // commit (unfinished, invalid, zeroed by an intent mark) do not count:
  // settling zeroes them on disk before anything is written to the region.
  uint64_t max_generation = 0;
  // Per slot: the generation of a commit known valid there, 0 if unknown or
  // invalid (such a slot is free).
  std::vector<uint64_t> known_generation;
  // Per slot: when this handle last wrote the slot above 16 KiB without a
  // barrier (Io::MonotonicNanos), 0 if never or if a barrier of its own
  // covered it since. What VolatileCommitByMapping judges the slot's pages
  // by.
  std::vector<uint64_t> written_at_ns;
  // A durable commit of this region has written its header and waits for
  // the barrier it shares with other commits, the handle's mutex released
  // (CommitGroup): no other commit or batch may touch the region until it
  // returned (Store::Rep::WaitUntilCommittable).
  bool in_flight = false;
};

inline bool IsDurable(Durability durability) {
  return durability == Durability::kSync || durability == Durability::kPwriteFdatasync;
}
// Copies the pieces one after another into the mapping at `shared`.
void CopyPiecesToShared(std::byte* shared, PayloadPieces pieces);
// Write in kSync: below this size, one pwritev2(RWF_DSYNC); from it on,
// memcpy into the mapping + msync(MS_SYNC) (the lab's arm, and whole folios
// anyway). Store::Write says why.
inline constexpr uint64_t kDsyncWriteBelow = 1024 * 1024;
// Store::Write kNone and kAsync of at least this many bytes write by pwrite
// rather than through the mapping unless their pages are likely dirty
// (store.cc says why).
inline constexpr uint64_t kWriteByPwriteFrom = 256 * 1024;
// How long after this handle wrote a slot or a range of the data area its
// pages are taken to be still dirty, their page-table entries writable: the
// kernel's flusher wakes every 5 s (vm.dirty_writeback_centisecs) and
// writes back an inode dirtied more than 30 s before
// (vm.dirty_expire_centisecs); the shorter bound mispredicts less.
inline constexpr uint64_t kPagesStayDirtyNanos = 5'000'000'000;
// Copies the pieces to `shared` and returns the checksum of the `length`
// bytes it stored there: of the values it stored (fused_copy.h), or read
// back from `shared`; never of a separate read of the pieces, which another
// thread may change meanwhile. `length` is the pieces' total, which the
// caller has summed already.
uint64_t CopyPiecesToSharedChecksummed(std::byte* shared, PayloadPieces pieces, uint64_t length);
// The same, where fused_copy cannot run (ThreadSanitizer's atomic word
// copies, no AVX2, short payloads): copies, then hashes what it reads back
// from `shared`, each byte of a large payload while it is still in L1.
uint64_t CopyPiecesToSharedThenChecksum(std::byte* shared, PayloadPieces pieces, uint64_t length);
// In CopyPiecesToSharedThenChecksum, payloads up to this size are copied
// whole, then hashed; above it, block by block in one pass (kOnePassBlock
// bytes fit in L1 beside the hash's state). Measured in
// docs/history/BENCH-CHECKPOINTS-0.13.md, "Small durable writes, the publication word and
// the fused copy".
inline constexpr uint64_t kOnePassThreshold = 16 * 1024;
inline constexpr size_t kOnePassBlock = 4 * 1024;

// One region of a commit or batch being filled in place: its target slot
// (whose header magic Begin cleared), the bytes Append wrote, and their
// checksum while no payload() span was handed out.
struct InPlaceMember {
  uint32_t index = 0;
  uint32_t target = 0;
  uint64_t max_length = 0;
  uint64_t appended = 0;
  bool only_appended = true;
  std::unique_ptr<format::ChecksumStream> checksum;
};
// One member of a batch about to be written (Store::Rep::WriteBatch): its
// region, target slot, header (generation, length and payload checksum
// set; the batch id is set there) and the payload to copy, if any.
struct BatchPlanMember {
  uint32_t index = 0;
  uint32_t target = 0;
  PayloadPieces pieces;
  slot::Header header;
};

// Hidden: Store is exported, and a nested class would inherit that.
struct [[gnu::visibility("hidden")]] Store::Rep {
  // Threads (include/regionstore/store.h, "Threads and processes"). Every
  // call on a writable handle holds `mutex` (HandleLock), except Read and
  // View (MutableView only to check the handle); a durable commit of a protocol 2 store releases
  // it while it waits for the barrier it shares (CommitGroup), and so does
  // a call that waits for a region or an intent entry (WaitFor).
  // `holder` is the lock of the thread holding the mutex, for those waits.
  std::mutex mutex;
  std::unique_lock<std::mutex>* holder = nullptr;
  // Calls waiting in WaitUntilCommittable wait on `changed`, notified (when
  // `change_waiters` says anyone waits) as a region leaves flight, an
  // intent entry is freed or a barrier of the group returns; durable
  // commits waiting for the group's barrier wait on `group_returned`. Two
  // variables, so that a commit's return wakes no follower: with eight
  // committers on two CPUs the wake-ups cost more than the copies.
  std::condition_variable changed;
  std::condition_variable group_returned;
  uint32_t change_waiters = 0;
  void NotifyChange() {
    if (change_waiters != 0) changed.notify_all();
  }
  // Waits for `variable` (the mutex released meanwhile, held again after).
  void WaitFor(std::condition_variable & variable) {
    std::unique_lock<std::mutex>* mine = holder;
    variable.wait(*mine);
    holder = mine;
  }
  // Runs `call` with the mutex released; holds it again after.
  template <typename Call>
  auto Unlocked(Call && call)->decltype(call()) {
    std::unique_lock<std::mutex>* mine = holder;
    holder = nullptr;
    mine->unlock();
    auto result = call();
    mine->lock();
    holder = mine;
    return result;
  }
  // Every barrier call that can report a writeback error (group_commit.h).
  SyncGate gate;
  // Durable commits sharing barriers (protocol 2 stores).
  CommitGroup group;
  // The ticket of the group's barrier in flight, whose covers pin slots as
  // a background barrier's do (CoveredInFlight); null when none is.
  struct BarrierTicket;
  const BarrierTicket* group_ticket = nullptr;
  // The intent entries of durable commits waiting for a shared barrier, a
  // bit per entry from kFirstGroupCommitEntry: each commit has its own
  // mark, which recovery finds in any entry.
  static constexpr uint32_t kFirstGroupCommitEntry = 5;
  static constexpr uint32_t kGroupCommitEntries = 32;
  // Every region in flight holds one until it returned (a failed commit
  // keeps its entry, marked, on a poisoned handle).
  uint32_t group_entries_used = 0;
  static constexpr uint32_t kAllGroupEntries = ~uint32_t{0};
  // Barriers in flight that set the kFileBarrier mark: the last one to
  // return clears it, if the handle is not poisoned (a group barrier, a
  // background one and a call's own barrier can overlap).
  uint32_t file_barrier_marks = 0;
  // Whether durable commits on this handle share barriers: protocol 2
  // stores (protocol 1 handles serialise their commits whole).
  bool group_commits = false;
  // Waits (WaitFor) until none of `indices` is in flight, each has a slot
  // free of every pin while the group's barrier is in flight, and, with
  // `group_entry`, an intent entry for a grouped commit is free. Errors:
  // those of CheckWritable (the handle may be poisoned meanwhile).
  Status WaitUntilCommittable(std::span<const uint32_t> indices, bool group_entry,
                              const char* operation);
  Io* io = nullptr;
  std::string path;
  bool writable = false;
  uint64_t page_size = 0;
  StoreInfo info;
  // Indexes of info.regions in name order, for FindRegion's binary search.
  std::vector<uint32_t> by_name;
  // Declared before `mapping` so the mapping is destroyed (unmapped) first.
  std::unique_ptr<File> file;
  std::unique_ptr<Mapping> mapping;
  // The first failed pwrite, msync or fdatasync; once set, every write is
  // refused.
  Status poison;
  StoreStats stats;
  // Writers only: one per entry of info.regions.
  std::vector<RegionState> regions;
  // Writers only: this boot's id.
  intent::BootId boot_id{};
  // Writers only: the commits without a barrier (kNone, kAsync, the slot
  // writes of journaled batches) that no whole-file barrier has covered
  // yet, and the kVolatilePending mark (ledger.h has the contract).
  DurabilityLedger ledger;
  // Set when NoteVolatileCommit writes the commits-pending mark (the first
  // mapped commit since a whole-file barrier); the commit then publishes by
  // pwrite too (PublishMappedHeader says why).
  bool publish_next_by_pwrite = false;
  // When the newest whole-file barrier of this handle began
  // (Io::MonotonicNanos): it cleaned every page written before it.
  uint64_t cleaned_at_ns = 0;
  // When this handle last wrote each chunk of the data area with a Write
  // of kWriteByPwriteFrom or more (0: not since a range barrier cleaned
  // it), chunks of 2^data_chunk_shift bytes, at most 65,536 of them; made
  // at the first such Write. A guess, as for slots (VolatileCommitByMapping):
  // a wrong one costs faults or a copy, never safety.
  std::vector<uint64_t> data_written_at_ns;
  uint32_t data_chunk_shift = 0;
  // Whether every chunk of data range [offset, offset + length) was
  // written by this handle less than kPagesStayDirtyNanos ago and after
  // the newest whole-file barrier began.
  bool DataLikelyDirty(uint64_t offset, uint64_t length);
  // Stamps the chunks the range touches with `now` (0: cleaned). Ranges
  // outside the data area are ignored; `file_offset` is a file offset.
  void NoteDataRange(uint64_t file_offset, uint64_t length, uint64_t now);
  // The publication word as this writer last wrote it (even when idle), and
  // whether the open made it odd (Store::Open makes it even when done).
  uint64_t publication = 0;
  bool open_publishing = false;
  // Writers: wake waiters after each write of the publication word that
  // leaves it even (OpenOptions::wake_waiters): by FUTEX_WAKE on the word
  // in protocol 1, through the sidecar's wake word in protocol 2.
  bool wake_waiters = true;
  // The marks, the publication word and the wake word, where the store's
  // protocol keeps them (shared_state.h); chosen at open. Declared after
  // `mapping` and `file`, which it uses: destroyed before them.
  std::unique_ptr<SharedState> shared;
  // Writers of stores with a batch log only (batch_log.h): its ids, what
  // is done and durable, its watermark. Set by the open's recovery.
  std::optional<BatchLog> batch_log;
  // Whether slot headers carry batch ids (stores with a batch log).
  bool HeadersCarryBatchIds() const { return batch_log.has_value(); }
  // The store's batch journal (batch_journal.h), null in stores without
  // one: a writer's appends and replay (set by ResolveBatchesOnOpen), or
  // what a read-only handle must show of it (set at open).
  std::unique_ptr<BatchJournal> journal;
  // Append's private copy of the caller's bytes, at most 1 MiB:
  // hashed and written from here (AppendToFill).
  std::vector<std::byte> append_copy;
  // The commit or batch being filled in place (Store::BeginCommit,
  // Store::BeginBatch), if any (commit_in_place.cc). Set by assignment:
  // clang decides whether std::optional of a nested class is
  // default-constructible before the class's member initializers are
  // parsed, and says no, so emplace() does not compile.
  struct InPlaceFill {
    std::vector<InPlaceMember> members;
    // The `rep_` of the PendingCommit or PendingBatch that owns it, which
    // the store's destruction clears (the handle is gone).
    Rep** owner = nullptr;
  };
  std::optional<InPlaceFill> in_place;

  ~Rep();

  // A writer's open, after the lock and the mapping: reads the intent area,
  // undoes what the current boot's marks say a failed barrier may have left
  // (zeroing the marked commit's header unit), one fdatasync. Reads no slot
  // but the marked ones and writes nothing else, except where the marks
  // cannot rule out a failed whole-file barrier (or the store has no intent
  // area): then every region is settled at once and its newest commit
  // written again before the fdatasync (RecoverEveryRegion).
  Status RecoverOnOpen();
  // Part of RecoverOnOpen: takes the publication word from `area` (the
  // intent area as read, the sidecar's entries put in) into `publication`.
  // An odd word moves on by 2 and a torn one to a fresh odd value (pwrite
  // either way) before anything visible changes; then sets open_publishing.
  Status MovePublicationOnAtOpen(std::span<const std::byte> area);
  // Part of RecoverOnOpen: acts on this boot's `marks`. Sets `file_barrier`
  // for a file-barrier mark and volatile_pending for a volatile one; for
  // each commit mark sets `must_mark` and calls KeepOrClearMarkedCommit.
  // Clears no mark.
  Status ActOnMarks(const std::vector<intent::Entry>& marks, bool& file_barrier, bool& must_mark);
  // Part of RecoverOnOpen, for one commit mark: preads the marked header
  // and, if it still holds the marked generation, its payload. A whole
  // commit is written again (RewriteRange) for the open's fdatasync; a
  // partial one gets its header unit zeroed (pwrite), under an odd
  // publication word. Anything else (a mark naming no slot, a header that
  // moved on) is left alone.
  Status KeepOrClearMarkedCommit(const intent::Entry& mark);
  // Settles region `index` (see RegionState): pread of its headers, then of
  // payloads newest first until one matches; that slot is newest and
  // durable. Headers that could piece a lost commit back together (invalid,
  // or newer than that slot) are zeroed and synced first. With `rewrite`,
  // the newest commit is written again, for a whole-file barrier to follow.
  Status SettleRegion(uint32_t index, bool rewrite);
  // SettleRegion's steps. With the kTargetFromRawGeneration mutation: the
  // highest raw generation is newest and durable, nothing checked.
  void SettleByRawGeneration(uint32_t index, std::span<const slot::HeaderBytes> headers);
  // The newest header of region `index` whose payload matches (pread), set
  // as newest and durable; its generation and length (0 and 0: none).
  struct Recovered {
    uint64_t generation = 0;
    uint64_t length = 0;
  };
  Result<Recovered> FindNewestCommit(uint32_t index, const std::vector<slot::HeaderBytes>& headers);
  // Zeroes every header of region `index` that holds no commit the settle
  // trusts and is not an older one; without `rewrite`, each zeroed unit is
  // synced (marked) before anything else is written to the region.
  Status ZeroUnownedHeaders(uint32_t index, std::span<const slot::DecodedHeader> decoded,
                            uint64_t recovered_generation, bool rewrite);
  // Writes every header unit and the recovered commit of region `index`
  // again, for the whole-file barrier that follows.
  Status RewriteRegion(uint32_t index, uint64_t recovered_length);
  Status RecoverEveryRegion();
  // Reads [begin, end) with pread and writes it back unchanged, so that the
  // next fdatasync writes it even where a failed barrier left its pages
  // clean in the cache but missing on disk. Errors name `operation`.
  Status RewriteRange(uint64_t begin, uint64_t end, const char* operation);
  // Part of RecoverOnOpen for stores with a batch log, before anything else
  // is written: unless the watermark says the last writer left no batch
  // open, reads every slot header and withdraws the members of batches that
  // did not complete: their headers get batch::kWithdrawnId and keep their
  // generations. A batch whose barrier did not return in this boot (its
  // mark) is kept if it is whole, its members and record written again for
  // the open's fdatasync; otherwise withdrawn. Then marks the watermark
  // open (not clean) for the open's fdatasync to make durable. `area` is
  // the intent area as read; `must_mark` is set when anything was written
  // that the open's fdatasync must make durable under the file-barrier mark.
  Status ResolveBatchesOnOpen(std::span<const std::byte> area, bool& must_mark);
  // ResolveBatchesOnOpen's steps. What the open does about batches above
  // the watermark: members to withdraw (header unit, header) and ranges to
  // write again ([begin, end): the kept members of the batch whose barrier
  // did not return).
  struct BatchTraces {
    std::vector<std::pair<uint64_t, slot::Header>> withdraw;
    std::vector<std::pair<uint64_t, uint64_t>> keep;
  };
  // Reads every slot header and judges each member above `found`'s
  // watermark (JudgeMember); writes nothing. `failed`: the batch whose
  // barrier mark of this boot says its call never returned.
  Result<BatchTraces> JudgeUnfinishedBatches(const batch::Watermark& found,
                                             std::optional<uint64_t> failed);
  // One member, whose valid header is `header` (slot `i` of region `r`):
  // withdrawn if its payload is torn and it belongs to `failed`, or if its
  // batch is not whole; kept and rewritten if whole and of `failed`.
  Status JudgeMember(const region_check::ReadFn& read, const region_check::BatchContext& context,
                     uint32_t r, uint32_t i, const slot::Header& header,
                     std::optional<uint64_t> failed, BatchTraces& traces);
  // Writes what JudgeUnfinishedBatches decided (withdrawn headers keep
  // their generations; kept members and their record written again for
  // the open's fdatasync); sets `must_mark` when it wrote anything.
  Status WithdrawAndKeep(BatchTraces & traces, std::optional<uint64_t> failed, bool& must_mark);
  // After the open's fdatasync returned: every batch the log can hold is
  // complete or gone, and durable.
  Status AfterOpenBarrier();
  // After a whole-file barrier returned: writes a watermark that says what
  // it made durable (by pwrite, durable at a later barrier), if it raised
  // anything (BatchLog::NextWatermark).
  Status RaiseWatermark();
  // The watermark entry `watermark`'s sequence selects, by SetMark.
  Status WriteWatermark(const batch::Watermark& watermark);
  // Before batch `id` overwrites its log unit (the record of batch id - 32):
  // whole-file barriers until a durable watermark covers that batch.
  Status MakeLogUnitReusable(uint64_t id, Durability durability);
  // The id the next batch gets, once its log unit is reusable. Errors:
  // kCorruption (ids exhausted), those of MakeLogUnitReusable.
  Result<uint64_t> NextBatchId(Durability durability, const char* operation);
  // The regions of a batch (when `batch`) or of a single commit filled in
  // place, by name, checked before anything is written: the batch log and
  // the member count (batches), each region found and named once, its
  // generations not exhausted, and not being filled in place. Lengths are
  // the caller's to check. Errors: kInvalidArgument, kNotFound,
  // kCorruption, kBusy.
  Result<std::vector<uint32_t>> CheckMembers(std::span<const std::string_view> names, bool batch,
                                             const char* operation) const;
  // The writes of batch `id` (ids below it spent) whose members' payloads
  // are in `plan`, or already in their slots (`payloads_in_place`: filled
  // in place, header magic cleared first), by one of the three paths below,
  // as docs/CHECKPOINTS.md ("Batches") orders them; then what the handle
  // learns. Sets the phase word to kCopy and kFlush as it goes: the caller
  // holds an internal::CommitPhaseGuard, which sets it idle again. Returns
  // each member's generation.
  Result<std::vector<uint64_t>> WriteBatch(std::vector<BatchPlanMember> & plan, uint64_t id,
                                           Durability durability, bool payloads_in_place);
  // A durable batch by the batch log: the payloads (unless in place), the
  // log's record (`record_bytes`) and the headers by pwrite, then one
  // fdatasync for all of them, between the batch-barrier mark's set and
  // clear.
  Status WriteLoggedDurableBatch(std::vector<BatchPlanMember> & plan, uint64_t id,
                                 const batch::UnitBytes& record_bytes, Durability durability,
                                 bool payloads_in_place);
  // A kNone or kAsync batch by the batch log: the payloads copied through
  // the mapping (unless in place), the log's record by pwrite, the headers
  // through the mapping; kAsync then an msync(MS_ASYNC) per member.
  Status WriteLoggedMappedBatch(std::vector<BatchPlanMember> & plan, uint64_t id,
                                const batch::UnitBytes& record_bytes, Durability durability,
                                bool payloads_in_place);
  // A durable batch in a store with a journal, when its record fits in
  // half the journal: the record by one pwritev2(RWF_DSYNC), which is the
  // batch's commit point (AppendJournalRecord), then the members, the batch
  // log's record and the headers through the page cache, durable at the
  // next whole-file barrier (CopyJournaledBatch; docs/CHECKPOINTS.md,
  // "Batches: a journal in every store").
  Status WriteJournaledBatch(std::vector<BatchPlanMember> & plan, uint64_t id,
                             const batch::UnitBytes& record_bytes, Durability durability);
  // The journal's record of batch `id`, assembled in the journal's buffer
  // (BatchJournal::Assemble), made durable at the write position (after a
  // whole-file barrier if it does not fit): BatchJournal::Append, with this
  // handle's intent mark and barrier. Returns its file offset.
  Result<uint64_t> AppendJournalRecord(uint64_t id, Durability durability);
  // A journaled batch's members (from the record's `payloads`), the log's
  // record and the headers, into the page cache; a failed write also
  // withdraws the journal's record at `at`.
  Status CopyJournaledBatch(std::span<const BatchPlanMember> plan, uint64_t id,
                            const batch::UnitBytes& record_bytes,
                            std::span<const PayloadPieces> payloads, uint64_t at);
  // After a failed write or barrier of a batch: the members' headers
  // forgotten (ForgetBatchHeaders). With `failed_write` (the write's
  // operation) the failure is also counted and poisons the handle, as
  // FailedWrite; without, the step that failed (a publication word, a
  // barrier) did both. Returns the failure as reported.
  Status WithdrawBatch(std::span<const BatchPlanMember> plan, const Status& failure,
                       const char* failed_write = nullptr);
  // What the handle learns from a batch that returned: each member's commit
  // (RecordCommit) and the mode's count. Returns each member's generation.
  std::vector<uint64_t> RecordBatch(std::span<const BatchPlanMember> plan, Durability durability);
  // After a failed write or barrier of a batch: no member may be read as a
  // commit. Readers of several regions may have seen some of the headers:
  // their removal is one change of what is visible (best effort: the handle
  // is poisoned next).
  void ForgetBatchHeaders(std::span<const BatchPlanMember> plan);
  // A writer's open, before it reads any slot header for the batches: the
  // journal's replay (BatchJournal::Replay), through this handle's file,
  // publication pair and RewriteRange.
  Status ReplayJournal(const batch::Watermark& found, std::optional<uint64_t> failed,
                       bool& must_mark);

  // The intent area's entry `entry`, by pwrite (no-ops without an intent
  // area). A torn entry fails its checksum and records nothing.
  Status SetMark(uint32_t entry, const intent::Entry& mark);
  Status ClearMark(uint32_t entry);
  // The publication word (intent.h): `Published` after a single commit's
  // header became visible (P += 2); `BeginPublishing`/`EndPublishing`
  // around changes to several regions' visible commits (P += 1 each; nested
  // calls inside an open pair do nothing). By
  // pwrite, with fences that order them against header stores through the
  // mapping. A failure poisons the handle (readers of several regions would
  // wait on an odd P until the next writer's open).
  // How a publication word is written. By pwrite (the default): its 4 KiB
  // block is dirty, never its whole page-cache folio, which matters to the
  // barriers of durable commits and batches. Through the mapping: no
  // system call; the folio is dirty whole (64 KiB for the intent area of a
  // store made since f06406e) until the next whole-file barrier writes it,
  // once per barrier epoch. Mapped kNone and kAsync commits use it.
  enum class PublishBy : uint8_t { kPwrite, kMapping };
  Status Published(const char* operation, PublishBy by = PublishBy::kPwrite);
  Status BeginPublishing(const char* operation);
  Status EndPublishing(const char* operation);
  Status WritePublication(uint64_t p, const char* operation, PublishBy by = PublishBy::kPwrite);
  // Whether any of `bytes` lies in this handle's mapping of the store.
  bool InMapping(std::span<const std::byte> bytes) const {
    const auto begin = reinterpret_cast<uintptr_t>(mapping->data());
    const auto end = begin + info.file_size;
    const auto first = reinterpret_cast<uintptr_t>(bytes.data());
    return !bytes.empty() && first < end && first + bytes.size() > begin;
  }
  // The barriers a handle issues.
  enum class BarrierKind : uint8_t {
    kMsyncAsync,  // msync(MS_ASYNC) of the pages covering the range: starts nothing
    kMsyncSync,   // msync(MS_SYNC) of those pages: writeback and flush of the range only
    kFdatasync,   // fdatasync: the whole file
    // pwritev2(RWF_DSYNC) of `data` at `file_offset`: the write and a
    // writeback and flush of its range in one call (Write in kSync below
    // kDsyncWriteBelow bytes)
    kDsyncWrite,
  };
  struct BarrierCall {
    BarrierKind kind = BarrierKind::kFdatasync;
    // The mode whose counters (StoreStats) count it and its time; none for
    // the barriers of recovery.
    std::optional<Durability> counted_as;
    const char* operation = "";  // names a failure, and so the poison
    // The msync kinds: the range, rounded out to whole pages (msync needs a
    // page-aligned start; the extra bytes are flushed early, harmlessly).
    uint64_t file_offset = 0;
    uint64_t length = 0;
    // kDsyncWrite: the bytes to write at file_offset, or, when `parts` is
    // not empty, those parts end to end.
    std::span<const std::byte> data{};
    std::span<const std::span<const std::byte>> parts{};
    // kMsyncSync of what Write in kSync just copied: drop the range's
    // page-table entries once it is synced, so the next write through the
    // mapping does not take a write-protect fault per page
    // (Mapping::ResetPageTables). Not for Flush: its range can be the whole
    // store, and every later read of it would fault again.
    bool reset_page_tables = false;
    // Set the kFileBarrier mark even with no commit without a barrier
    // pending (recovery zeroed headers that must not come back).
    bool always_mark = false;
    // A whole-file barrier that returned: what it made durable
    // (Store::Sync reports it).
    DurabilityLedger::Covered* covered = nullptr;
  };
  // Every barrier goes through here: it is marked where it must be (below),
  // run, counted and timed against `counted_as`, and a failure poisons the
  // handle (as `operation`, or as the mark write that failed; a whole-file
  // barrier's error names `operation` either way).
  // While this handle has commits without a barrier pending (or with
  // `always_mark`), any barrier but kMsyncAsync can report, and so consume,
  // a writeback error of pages nothing names, a file having one error state
  // for all its ranges: the kFileBarrier mark is set around it and stays if
  // it fails. A kFdatasync that succeeds also makes those commits durable
  // and clears their kVolatilePending mark.
  Status Barrier(const BarrierCall& call);
  // Barrier's three steps, for a whole-file barrier whose system call runs
  // on another thread (StartSync): PrepareBarrier takes the covers and sets
  // the mark (on the handle's thread, before the call); RunBarrierCall makes
  // the system call (any thread: it touches only the file or the mapping);
  // CompleteBarrier applies what a returned call covered, clears the marks,
  // poisons on failure and counts (on the handle's thread, after the call).
  struct BarrierTicket {
    std::chrono::steady_clock::time_point start;
    std::optional<BatchLog::Cover> batches;
    uint64_t journal_mark = 0;
    std::optional<DurabilityLedger::Cover> cover;
    bool marked = false;
    Status prepared;  // the mark's write: a failure skips the call
  };
  BarrierTicket PrepareBarrier(const BarrierCall& call);
  Status RunBarrierCall(const BarrierCall& call);  // through `gate`
  Status RunBarrierSystemCall(const BarrierCall& call);
  Status CompleteBarrier(const BarrierCall& call, BarrierTicket& ticket, Status status);

  // A whole-file barrier whose fdatasync runs on a library thread
  // (Store::StartSync) while the handle's thread goes on: its ticket, and
  // the call's result once it returns. The commits its cover names keep
  // their slots until it is complete (CommitTarget).
  struct BackgroundSync {
    BarrierCall call;
    BarrierTicket ticket;
    // Tests that simulate the disk run the call at once, in order
    // (internal::BackgroundSyncInline): its result. Otherwise the flusher
    // has it.
    std::optional<Status> inline_result;
  };
  std::optional<BackgroundSync> background_sync;
  // The thread background barriers run on, from the first one to the
  // handle's close (flusher.h).
  std::unique_ptr<Flusher> flusher;
  // CurrentForkGeneration() at the open: another value in the destructor
  // means a child of fork() destroys its inherited copy, which must neither
  // write nor touch the parent's thread.
  uint64_t opened_fork_generation = 0;
  // Completes the background barrier if its call returned (or, with `wait`,
  // once it does): what a barrier that returned on this thread would do.
  // Returns its failure (the handle is poisoned then), OK otherwise.
  Status FinishBackgroundSync(bool wait);
  // Whether slot `slot` of region `index` holds a commit that the group's
  // barrier in flight covers, or (with `background`) the background one.
  bool CoveredInFlight(uint32_t index, uint32_t slot, bool background = true) const;
  // Starts a background barrier (one in flight is completed first).
  Status StartBackgroundSync();
  // OpenOptions::sync_interval: after a commit or batch returned, starts a
  // background barrier when none is in flight, a commit without a barrier
  // is pending and the interval has passed since the last whole-file
  // barrier began.
  Status MaybeStartSync();
  std::chrono::milliseconds sync_interval{0};
  // OpenOptions::commit_progress, and the call for one step of a commit of
  // slot `target` of region `index` (noexcept: a callback that throws ends
  // the program rather than unwind through a commit half made).
  std::function<void(const CommitProgress&)> commit_progress;
  bool ReportsProgress(uint64_t length) const {
    return commit_progress && length >= kCommitProgressStep;
  }
  void ReportProgress(uint32_t index, Durability durability, uint64_t length, uint64_t stored,
                      uint64_t written_back) const noexcept;
  // When the newest whole-file barrier began (Io::MonotonicNanos), or the
  // handle opened.
  uint64_t last_whole_file_barrier_ns = 0;
  // After a whole-file barrier returned: the commits it covered become
  // their regions' durable commits (ledger.h, rule 4).
  void PromoteCovered(std::span<const DurabilityLedger::Commit> commits);
  // Region `index`'s durable commit, where readers in other processes read
  // it (SharedState::PublishDurable), once the open's barrier returned
  // (`durable_points_open`): what an open settles before that is not
  // durable yet. Called wherever `durable` moves.
  void PublishDurable(uint32_t index);
  bool durable_points_open = false;
  // Before a commit without a barrier: records kVolatilePending once per
  // whole-file barrier. Errors: those of the pwrite (the handle poisoned).
  Status NoteVolatileCommit();

  // Commit, in the steps of commit.cc. The slot a commit of region `index`
  // goes to: neither the newest commit nor the newest durable one, nor one
  // a background barrier in flight covers (with none left, it completes
  // that barrier first: counted in StoreStats::waits_for_background_sync).
  Result<uint32_t> CommitTarget(uint32_t index);
  // FreeSlot(index, false) ignores the background barrier's pins, which
  // CommitTarget can lift by completing it.
  std::optional<uint32_t> FreeSlot(uint32_t index, bool background_pins = true) const;
  // The length of `pieces` for region `index`. Errors: kInvalidArgument
  // (too many pieces, over the capacity), naming `operation`.
  Result<uint64_t> CheckPayload(uint32_t index, PayloadPieces pieces, const char* operation) const;
  // The header of the next commit of region `index` into `target`, payload
  // checksum and batch id still 0. Errors: kCorruption (generations
  // exhausted).
  Result<slot::Header> NextHeader(uint32_t index, uint32_t target, uint64_t length,
                                  const char* operation) const;
  // pwritev of a zero header unit and the pieces, from `unit_offset`.
  Status WriteZeroUnitAndPieces(uint64_t unit_offset, PayloadPieces pieces);
  // The checksum of the first `length` payload bytes of slot `target` of
  // region `index` as they are in the file now, read through the mapping:
  // what a pwrite stored, whatever the caller's buffer holds since.
  uint64_t StoredPayloadChecksum(uint32_t index, uint32_t target, uint64_t length) const;
  // Whether a kNone/kAsync commit of `length` bytes into slot `target` of
  // region `index` goes through the mapping (its pages are likely dirty and
  // writable from this handle's last write) or by pwrite (commit.cc says
  // why and what each costs).
  bool VolatileCommitByMapping(uint32_t index, uint32_t target, uint64_t length) const;
  // The writes of a commit of `header` (its payload checksum filled in
  // here) into slot `target` of region `index`, and its barrier:
  // kNone/kAsync through the mapping or by pwrite (no barrier),
  // kSync/kPwriteFdatasync by pwrite.
  Status MappedCommit(uint32_t index, uint32_t target, slot::Header & header, PayloadPieces pieces,
                      Durability durability);
  Status PwriteCommit(uint32_t index, uint32_t target, slot::Header & header, PayloadPieces pieces,
                      Durability durability);
  Status DurableCommit(uint32_t index, uint32_t target, slot::Header & header, PayloadPieces pieces,
                       Durability durability, bool grouped = false);
  // A zero header unit and the pieces by one pwritev (a failure forgets the
  // slot and poisons the handle), then the checksum of what was stored.
  // With a progress callback, a large payload is written, and in kSync and
  // kPwriteFdatasync waited for, in steps (OpenOptions::commit_progress).
  Status WriteSlotPayload(uint32_t index, uint32_t target, slot::Header & header,
                          PayloadPieces pieces, bool start_writeback, Durability durability);
  // WriteSlotPayload in steps of `write_step` (kWritebackStep or
  // kCommitProgressStep, which is a multiple of it), reported every
  // kCommitProgressStep with a progress callback.
  static constexpr uint64_t kWritebackStep = 2 * 1024 * 1024;
  Status WriteSlotPayloadInSteps(uint32_t index, uint32_t target, slot::Header & header,
                                 PayloadPieces pieces, bool start_writeback, uint64_t write_step,
                                 Durability durability);
  // The header unit of `header` by pwrite (a failure forgets the slot and
  // poisons the handle).
  Status WriteHeaderUnit(uint32_t index, uint32_t target, const slot::Header& header);
  // The second half of MappedCommit (the payload is in the slot): the
  // header through the mapping, then PublishVolatile.
  Status PublishMappedHeader(uint32_t index, uint32_t target, const slot::Header& header,
                             Durability durability);
  // After the header of a commit without a barrier is in the slot: the
  // publication word, kAsync's msync.
  Status PublishVolatile(uint32_t index, uint32_t target, const slot::Header& header,
                         Durability durability);
  // The second half of DurableCommit (the payload is in the slot, behind a
  // header unit with no valid header): the intent mark, the header unit by
  // pwrite, the publication word, the barrier, the mark cleared.
  // With `grouped` (a protocol 2 handle's Commit), the barrier is shared
  // with the durable commits waiting beside it (CommitGroup), the mutex
  // released while it runs and the region in flight.
  Status DurableHeaderAndBarrier(uint32_t index, uint32_t target, const slot::Header& header,
                                 Durability durability, bool grouped = false);
  // A grouped commit's intent entry, and its release.
  uint32_t TakeGroupEntry();
  void ReleaseGroupEntry(uint32_t entry);
  // Takes a ticket and returns once a barrier that covers it returned, as
  // the group's leader (LeadGroupBarrier: `own` when alone, else one
  // fdatasync for every commit waiting) or a follower.
  Status AwaitGroupBarrier(const BarrierCall& own);
  Status LeadGroupBarrier(const BarrierCall& call);
  // After a failed write: counted, and the handle poisoned.
  Status FailedWrite(const Status& failure, const char* operation) {
    ++stats.failed_writes;
    return Poison(failure, operation);
  }
  // Zeroes the header unit at `unit_offset` through the mapping (which
  // cannot fail) inside a publication pair: after a failed write or
  // barrier no reader or later open may take its bytes for a commit.
  void ForgetSlot(uint64_t unit_offset, const char* operation);
  // Begins the commit (one member) or batch filled in place whose owner's
  // `rep_` is `owner` (commit_in_place.cc). Errors: kBusy (one pending
  // already), those of CheckMembers, kInvalidArgument (over a capacity),
  // those of settling a region.
  Status BeginInPlace(std::span<const BatchReservation> members, bool batch, Store::Rep** owner,
                      const char* operation);
  // The steps of a commit or batch filled in place, for one member
  // (commit_in_place.cc): its payload's file offset; its payload area in
  // the mapping (from then on its checksum is read back at Finish); a
  // pwrite at its fill cursor; Finish's checks; its header with the
  // payload checksum; after a durable finish, its page-table entries
  // dropped.
  uint64_t FillOffset(const InPlaceMember& fill) const;
  std::span<std::byte> MappedFill(InPlaceMember & fill);
  Status AppendToFill(InPlaceMember & fill, std::span<const std::byte> bytes);
  Status CheckFillFinish(const InPlaceMember& fill, uint64_t length, Durability durability) const;
  Result<slot::Header> FilledHeader(const InPlaceMember& fill, uint64_t length) const;
  void ResetFilledPages(const InPlaceMember& fill, uint64_t length);
  // Finish of a commit or batch filled in place, once it is no longer
  // pending, up to what the handle learns: the checks, the header(s), the
  // writes and barrier. The fill's phase word (kCopy since BeginInPlace)
  // is idle again when they return, by any exit. FinishFilledCommit
  // returns the header; FinishFilledBatch each member's generation.
  Result<slot::Header> FinishFilledCommit(const InPlaceMember& fill, uint64_t length,
                                          Durability durability);
  Result<std::vector<uint64_t>> FinishFilledBatch(std::span<const InPlaceMember> fills,
                                                  std::span<const uint64_t> lengths,
                                                  Durability durability);
  // PendingCommit's and PendingBatch's moves and aborts, on their `rep_`:
  // TakeFill moves a pending fill's ownership from `from` to `to` (the fill
  // then clears `to` if the store closes first); DropFill abandons it.
  static void TakeFill(Rep * &to, Rep * &from);
  static void DropFill(Rep * &rep);
  // kBusy if region `index` has a commit filled in place pending.
  Status CheckNotFilling(uint32_t index, const char* operation) const;
  // After a commit returned: what the region state, the ledger and the
  // counters learn. A commit without a barrier is reported complete to the
  // ledger by its caller (DurabilityLedger::VolatileCompleted), once per
  // NoteVolatileCommit: a batch's members are one commit there.
  void RecordCommit(uint32_t index, uint32_t target, uint64_t generation, Durability durability,
                    uint64_t bytes);

  // Readers that wait (wait.cc): the generation of the newest header of
  // region `index` that passes its header checks (0 if none), from the
  // mapping, payload unread; and whether `path` still names the file this
  // handle opened (`opened`, fstat of it, taken at the first call).
  // Errors: kStoreReplaced, and those of the stat calls.
  uint64_t NewestHeaderGeneration(uint32_t index) const;
  Status CheckStillNamed(FileStat & opened, bool& known) const;

  // The index of region `name`. Errors: kNotFound.
  Result<uint32_t> FindRegion(std::string_view name, const char* operation) const;

  Status CheckRange(uint64_t offset, uint64_t length, const char* operation) const {
    if (offset > info.data_size || length > info.data_size - offset) {
      return Status::Error(StatusCode::kInvalidArgument, operation, path,
                           "range at offset " + std::to_string(offset) + " of length " +
                               std::to_string(length) + " is outside the data area of " +
                               std::to_string(info.data_size) + " bytes");
    }
    return Status::Ok();
  }

  // CheckWritable, then completes a background barrier whose call
  // returned (its failure is this call's): the first step of every call
  // that writes.
  Status BeginWrite(const char* operation) {
    if (Status s = CheckWritable(operation); !s.ok()) return s;
    return FinishBackgroundSync(/*wait=*/false);
  }
  Status CheckWritable(const char* operation) const {
    if (!writable) {
      return Status::Error(StatusCode::kInvalidArgument, operation, path,
                           "the store is open read-only");
    }
    if (CurrentForkGeneration() != opened_fork_generation) {
      return Status::Error(StatusCode::kInvalidArgument, operation, path,
                           "this handle was inherited across fork(): two processes must not "
                           "write through one handle; the child must open the store itself");
    }
    if (!poison.ok()) {
      return Status::Error(StatusCode::kPoisoned, operation, path,
                           "an earlier write or flush failed (" + poison.ToString() +
                               "); its data may be lost: reopen the store");
    }
    return Status::Ok();
  }

  // A failed flush may have left the kernel marking the failed pages clean
  // (PostgreSQL, 2018): a retry would report success for lost data. Refuse
  // every later write until the store is reopened.
  Status Poison(const Status& failure, const char* operation) {
    Status reported = failure.WithOperation(operation, path);
    if (poison.ok()) poison = reported;
    return reported;
  }

  Status CountWrite(Durability mode, uint64_t bytes) {
    ModeStats& counters = stats.by_mode[static_cast<size_t>(mode)];
    ++counters.writes;
    counters.bytes_written += bytes;
    return Status::Ok();
  }
};

// Holds a writable handle's mutex for one call (Store::Rep::mutex says
// which); does nothing on a read-only handle, whose calls change nothing
// that another call reads. Not reentrant: a call that holds it calls no
// other public member of Store that takes it.
class [[gnu::visibility("hidden")]] HandleLock {
 public:
  // A forked child's copy locks nothing: a thread of the parent may have
  // held the mutex at fork(), and the child has none of those threads
  // (CheckWritable refuses its writing calls).
  explicit HandleLock(Store::Rep & rep)
      : rep_(rep.writable && CurrentForkGeneration() == rep.opened_fork_generation ? &rep
                                                                                   : nullptr) {
    if (rep_ == nullptr) return;
    lock_ = std::unique_lock<std::mutex>(rep_->mutex);
    rep_->holder = &lock_;
  }
  ~HandleLock() {
    if (rep_ != nullptr) rep_->holder = nullptr;
  }
  HandleLock(const HandleLock&) = delete;
  HandleLock& operator=(const HandleLock&) = delete;

 private:
  Store::Rep* rep_;
  std::unique_lock<std::mutex> lock_;
};

}  // namespace regionstore

#endif  // REGIONSTORE_LIB_STORE_REP_H_
