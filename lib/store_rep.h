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
#include "regionstore/store.h"

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
// only (never from a header that failed its checks).
struct RegionState {
  std::optional<uint32_t> newest;   // slot of the newest valid commit
  std::optional<uint32_t> durable;  // slot of the newest commit known durable
  uint64_t newest_generation = 0;
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
  // Declared before `mapping` so the mapping is destroyed (unmapped) first.
  std::unique_ptr<File> file;
  std::unique_ptr<Mapping> mapping;
  // The first failed pwrite, msync or fdatasync; once set, every write is
  // refused.
  Status poison;
  StoreStats stats;
  // Writers only: one per entry of info.regions.
  std::vector<RegionState> regions;

  // Recovers every checkpoint region of a freshly opened writable store: one
  // fdatasync, then per region the newest slot that validates (pread).
  Status RecoverRegions();

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
