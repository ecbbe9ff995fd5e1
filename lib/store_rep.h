// Store::Rep: the state behind a Store handle, shared by store.cc (open,
// raw writes) and checkpoint.cc (commits, loads, recovery). Internal.
#ifndef REGIONSTORE_LIB_STORE_REP_H_
#define REGIONSTORE_LIB_STORE_REP_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "format.h"
#include "intent.h"
#include "regionstore/store.h"
#include "slot.h"

namespace regionstore {

namespace internal {

// Where a commit is, for the process-crash tests: they point this at a word
// in shared memory and SIGKILL the child while it says kCopy or kFlush.
enum CommitPhase : uint32_t { kIdle = 0, kCopy = 1, kFlush = 2 };
// Not synchronised with running commits: set it before any.
void SetCommitPhaseWord(std::atomic<uint32_t>* word);
void MarkCommitPhase(CommitPhase phase);

// Deliberately broken protocols, for the power-loss simulator to prove it
// catches them (tests only; kCorrect everywhere else, where each check costs
// one relaxed load). Set before opening.
enum class Mutation : uint32_t {
  kCorrect = 0,
  // Durable commits write header and payload, then flush only the header's
  // page: the payload may not be on disk when the commit returns.
  kBarrierHeaderOnly,
  // Plain two-slot alternation: the target is "the slot after the newest",
  // even when it holds the newest durable commit.
  kTwoSlotAlternation,
  // Recovery and Load trust a header whose checksum matches without checking
  // the payload's checksum.
  kSkipPayloadCheck,
  // Recovery takes the slot with the highest raw generation field as the
  // newest and durable one, without validating its header.
  kTargetFromRawGeneration,
  // A region's first commit through a handle settles its newest and durable
  // slot from the newest header that checks out, without checking that
  // slot's payload (Load still checks what it copies).
  kSettleTrustsHeader,
  // A writer's open reads no intent mark: a commit whose barrier failed
  // (and whose process died before zeroing it) is taken as durable.
  kIgnoreIntentMarks,
};
void SetMutation(Mutation mutation);
Mutation CurrentMutation();

}  // namespace internal

// Opens `path` (a directory is kCorruption) for reading or writing. A
// symbolic link refused by `symlinks` is kInvalidArgument, with a message
// saying how to allow it.
Result<std::unique_ptr<File>> OpenStoreFile(Io& io, const std::string& path, bool writable,
                                            SymlinkPolicy symlinks);

inline SymlinkPolicy SymlinkPolicyFor(bool follow_symlinks) {
  return follow_symlinks ? SymlinkPolicy::kFollow : SymlinkPolicy::kRefuse;
}
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
};

// Hidden: Store is exported, and a nested class would inherit that.
struct [[gnu::visibility("hidden")]] Store::Rep {
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
  // Writers only: the intent area's file offset (none in stores whose
  // region table reaches into it), this boot's id, and whether this handle
  // has made commits without a barrier (kNone, kAsync) since its last
  // successful whole-file barrier.
  std::optional<uint64_t> intent_offset;
  intent::BootId boot_id{};
  bool volatile_pending = false;

  // A writer's open, after the lock and the mapping: reads the intent area,
  // undoes what the current boot's marks say a failed barrier may have left
  // (zeroing the marked commit's header unit), one fdatasync. Reads no slot
  // but the marked ones and writes nothing else, except where the marks
  // cannot rule out a failed whole-file barrier (or the store has no intent
  // area): then every region is settled at once and its newest commit
  // written again before the fdatasync (RecoverEveryRegion).
  Status RecoverOnOpen();
  // Settles region `index` (see RegionState): pread of its headers, then of
  // payloads newest first until one matches; that slot is newest and
  // durable. Headers that could piece a lost commit back together (invalid,
  // or newer than that slot) are zeroed and synced first. With `rewrite`,
  // the newest commit is written again, for a whole-file barrier to follow.
  Status SettleRegion(uint32_t index, bool rewrite);
  Status RecoverEveryRegion();

  // The intent area's entry `entry`, by pwrite (no-ops without an intent
  // area). A torn entry fails its checksum and records nothing.
  Status SetMark(uint32_t entry, const intent::Entry& mark);
  Status ClearMark(uint32_t entry);
  // A whole-file barrier (fdatasync) with the marks it needs: kFileBarrier
  // while volatile commits are pending, both cleared once it succeeds.
  // Failures poison, as `operation`.
  Status FileBarrier(Durability mode, const char* operation);
  // A barrier run by `call`. While this handle has commits without a
  // barrier pending (or with `always_mark`: it zeroed headers that must not
  // come back), any barrier can report, and so consume, a writeback error
  // of pages nothing names, a file having one error state for all its
  // ranges: the kFileBarrier mark is set around it and stays if it fails. A
  // `whole_file` barrier that succeeds also makes those commits durable.
  template <typename Call>
  Status MarkedBarrier(bool whole_file, Call call, bool always_mark = false) {
    const bool marked = (volatile_pending || always_mark) && intent_offset.has_value();
    if (marked) {
      Status s = SetMark(intent::kFileBarrierEntry, {intent::Kind::kFileBarrier, 0, 0, 0, boot_id});
      if (!s.ok()) return Poison(s, "write the intent mark");
    }
    Status status = call();
    if (!status.ok()) return status;
    if (marked) {
      if (Status s = ClearMark(intent::kFileBarrierEntry); !s.ok()) {
        return Poison(s, "clear the intent mark");
      }
    }
    if (whole_file && volatile_pending) {
      if (Status s = ClearMark(intent::kVolatileEntry); !s.ok()) {
        return Poison(s, "clear the intent mark");
      }
      volatile_pending = false;
    }
    return status;
  }
  // Before a commit without a barrier: records kVolatilePending once per
  // whole-file barrier. Errors: those of the pwrite (the handle poisoned).
  Status NoteVolatileCommit();
  // kSync and kPwriteFdatasync commits of `header` (its payload checksum
  // filled in here) into slot `target` of region `index`.
  Status DurableCommit(uint32_t index, uint32_t target, slot::Header & header,
                       std::span<const std::byte> payload, Durability durability);

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

  Status CheckWritable(const char* operation) const {
    if (!writable) {
      return Status::Error(StatusCode::kInvalidArgument, operation, path,
                           "the store is open read-only");
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

  // Runs one barrier (msync or fdatasync) and counts it against `mode`.
  template <typename Barrier>
  Status Timed(Durability mode, Barrier barrier) {
    const auto start = std::chrono::steady_clock::now();
    Status status = barrier();
    ModeStats& counters = stats.by_mode[static_cast<size_t>(mode)];
    ++counters.flushes;
    if (!status.ok()) ++stats.failed_flushes;
    counters.flush_nanos += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                             start)
            .count());
    return status;
  }

  Status CountWrite(Durability mode, uint64_t bytes) {
    ModeStats& counters = stats.by_mode[static_cast<size_t>(mode)];
    ++counters.writes;
    counters.bytes_written += bytes;
    return Status::Ok();
  }

  // msync needs a page-aligned start: round the start down and the end up to
  // the runtime page size. The extra bytes are flushed early, which is
  // harmless. With `reset_page_tables` (Write in kSync: the range it just
  // copied), the range's page-table entries are dropped after an MS_SYNC, so
  // the next write through the mapping does not take a write-protect fault
  // per page (Mapping::ResetPageTables). Not for Flush: its range can be the
  // whole store, and every later read of it would fault again.
  Status SyncPages(uint64_t file_offset, uint64_t length, SyncKind kind, const char* operation,
                   bool reset_page_tables = false) {
    const uint64_t start = file_offset & ~(page_size - 1);
    const uint64_t end = format::AlignUp(file_offset + length, page_size);
    if (Status s = mapping->Sync(start, end - start, kind); !s.ok()) return Poison(s, operation);
    if (reset_page_tables && kind == SyncKind::kSync) {
      mapping->ResetPageTables(start, end - start);
    }
    return Status::Ok();
  }
};

}  // namespace regionstore

#endif  // REGIONSTORE_LIB_STORE_REP_H_
