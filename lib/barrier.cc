// Intent marks and barriers: every msync and fdatasync a Store handle
// issues, and the marks that let the next open undo what a failed one may
// have left (docs/CHECKPOINTS.md, "Recovery").
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>

#include "store_rep.h"
#include "test_hooks.h"

namespace regionstore {

using intent::Kind;

Status Store::Rep::SetMark(uint32_t entry, const intent::Entry& mark) {
  return shared->WriteEntry(entry, intent::EncodeEntry(mark));
}

Status Store::Rep::ClearMark(uint32_t entry) {
  static constexpr intent::EntryBytes kFree{};
  return shared->WriteEntry(entry, kFree);
}

Status Store::Rep::WritePublication(uint64_t p, const char* operation, PublishBy by) {
  if (!shared->area_offset()) return Status::Ok();
  // Every store through the mapping before this write is visible before it,
  // and it before every store after it (a fence orders the kernel's copy
  // with this thread's own stores).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (Status s = shared->WritePublication(intent::EncodePublication(p), by == PublishBy::kMapping);
      !s.ok()) {
    return FailedWrite(s, operation);
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  publication = p;
  // A change of what is visible is complete: wake readers that wait on the
  // word (Store::WaitForNewer). After the write, so that a waiter that
  // read the old value either sees the new one before it sleeps or is woken.
  if ((p & 1) == 0 && wake_waiters) shared->Wake();
  return Status::Ok();
}

Status Store::Rep::Published(const char* operation, PublishBy by) {
  // Inside a Begin/End pair the End covers it.
  if ((publication & 1) != 0) return Status::Ok();
  return WritePublication(publication + 2, operation, by);
}

Status Store::Rep::BeginPublishing(const char* operation) {
  if ((publication & 1) != 0) return Status::Ok();  // already inside one
  return WritePublication(publication + 1, operation);
}

Status Store::Rep::EndPublishing(const char* operation) {
  if ((publication & 1) == 0) return Status::Ok();
  return WritePublication(publication + 1, operation);
}

Status Store::Rep::NoteVolatileCommit() {
  if (!ledger.mark_down()) {
    if (Status s = SetMark(intent::kVolatileEntry, {Kind::kVolatilePending, 0, 0, 0, boot_id});
        !s.ok()) {
      return FailedWrite(s, "commit: pwrite (intent mark)");
    }
    ledger.set_mark_down(true);
    publish_next_by_pwrite = true;
  }
  ledger.VolatileStarted();
  return Status::Ok();
}

void Store::Rep::PromoteCovered(std::span<const DurabilityLedger::Commit> commits) {
  // Each covered commit is durable now. Kept as its region's durable slot,
  // so that no later commit writes over it until a newer durable one
  // exists: after a power loss the region then holds it or something
  // newer, which the batches it belongs to rely on (CHECKPOINTS.md,
  // "Batches"). Never back to an older commit, nor to a slot written over
  // since the barrier began.
  for (const DurabilityLedger::Commit& commit : commits) {
    RegionState& state = regions[commit.region];
    if (state.known_generation[commit.slot] != commit.generation) continue;
    if (state.durable && state.known_generation[*state.durable] >= commit.generation) continue;
    state.durable = commit.slot;
  }
}

Status Store::Rep::Barrier(const BarrierCall& call) {
  const auto start = std::chrono::steady_clock::now();
  const bool whole_file = call.kind == BarrierKind::kFdatasync;
  // What a whole-file barrier makes durable if it returns: every batch whose
  // writes are done, and the watermark entry as last written.
  const std::optional<BatchLog::Cover> batches =
      batch_log ? std::optional(batch_log->Begin()) : std::nullopt;
  const uint64_t journal_mark = journal ? journal->AppendMark() : 0;
  // Only what completed before the call begins is covered (ledger.h).
  const std::optional<DurabilityLedger::Cover> cover =
      whole_file ? std::optional(ledger.Begin()) : std::nullopt;
  const bool marked = call.kind != BarrierKind::kMsyncAsync &&
                      (ledger.mark_down() || call.always_mark) && shared->area_offset().has_value();
  // The step that failed names the failure.
  const char* step = "write the intent mark";
  Status status = marked
                      ? SetMark(intent::kFileBarrierEntry, {Kind::kFileBarrier, 0, 0, 0, boot_id})
                      : Status::Ok();
  if (status.ok()) {
    if (marked) internal::ReachPoint(internal::Point::kFileBarrierMarked);
    step = call.operation;
    if (whole_file) {
      cleaned_at_ns = io->MonotonicNanos();
      status = file->DataSync();
    } else if (call.kind == BarrierKind::kDsyncWrite) {
      const std::array<std::span<const std::byte>, 1> one{call.data};
      status = file->WriteGatherAt(
          call.file_offset,
          call.parts.empty() ? std::span<const std::span<const std::byte>>(one) : call.parts,
          /*data_sync=*/true);
    } else {
      const uint64_t begin = call.file_offset & ~(page_size - 1);
      const uint64_t end = format::AlignUp(call.file_offset + call.length, page_size);
      const bool sync = call.kind == BarrierKind::kMsyncSync;
      status = mapping->Sync(begin, end - begin, sync ? SyncKind::kSync : SyncKind::kAsync);
      if (status.ok() && sync && call.reset_page_tables) {
        mapping->ResetPageTables(begin, end - begin);
      }
    }
  }
  if (status.ok() && marked) {
    step = "clear the intent mark";
    status = ClearMark(intent::kFileBarrierEntry);
  }
  const std::optional<DurabilityLedger::Covered> covered =
      status.ok() && whole_file ? std::optional(ledger.Returned(*cover)) : std::nullopt;
  if (covered && covered->mark_clearable && ledger.mark_down()) {
    step = "clear the intent mark";
    status = ClearMark(intent::kVolatileEntry);
    if (status.ok()) ledger.set_mark_down(false);
  }
  if (covered) PromoteCovered(covered->durable);
  if (covered && call.covered) *call.covered = *covered;
  // Every record of the journal the call covered is redundant now: their
  // members are durable in their slots. One appended meanwhile keeps the
  // journal where it is.
  if (status.ok() && whole_file && journal) journal->RestartIfNoneAppendedSince(journal_mark);
  if (status.ok() && whole_file && batches) {
    batch_log->Returned(*batches);
    status = RaiseWatermark();
    step = "pwrite (batch watermark)";
  }
  if (!status.ok()) {
    status = Poison(status, step);
    if (whole_file) status = status.WithOperation(call.operation, path);
  }
  if (call.counted_as) {
    ModeStats& counters = stats.by_mode[static_cast<size_t>(*call.counted_as)];
    ++counters.flushes;
    if (!status.ok()) ++stats.failed_flushes;
    counters.flush_nanos +=
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - start)
                                  .count());
  }
  return status;
}

}  // namespace regionstore
