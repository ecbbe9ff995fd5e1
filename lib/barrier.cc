// Intent marks and barriers: every msync and fdatasync a Store handle
// issues, and the marks that let the next open undo what a failed one may
// have left (docs/CHECKPOINTS.md, "Recovery").
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <system_error>

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
    PublishDurable(commit.region);
  }
}

void Store::Rep::PublishDurable(uint32_t index) {
  const RegionState& state = regions[index];
  if (!durable_points_open || !state.durable) return;
  shared->PublishDurable(index, state.known_generation[*state.durable]);
}

Status Store::Rep::Barrier(const BarrierCall& call) {
  // One barrier at a time: a file has one writeback error state, which the
  // first fsync-family call to see an error consumes, so two in flight
  // could give one of them success over pages the other's failure lost.
  if (call.kind != BarrierKind::kMsyncAsync) {
    if (Status s = FinishBackgroundSync(/*wait=*/true); !s.ok()) return s;
  }
  BarrierTicket ticket = PrepareBarrier(call);
  Status status = ticket.prepared.ok() ? RunBarrierCall(call) : ticket.prepared;
  return CompleteBarrier(call, ticket, std::move(status));
}

Store::Rep::BarrierTicket Store::Rep::PrepareBarrier(const BarrierCall& call) {
  BarrierTicket ticket;
  ticket.start = std::chrono::steady_clock::now();
  const bool whole_file = call.kind == BarrierKind::kFdatasync;
  // What a whole-file barrier makes durable if it returns: every batch whose
  // writes are done, and the watermark entry as last written.
  if (batch_log) ticket.batches = batch_log->Begin();
  ticket.journal_mark = journal ? journal->AppendMark() : 0;
  // Only what completed before the call begins is covered (ledger.h).
  if (whole_file) {
    ticket.cover = ledger.Begin();
    cleaned_at_ns = io->MonotonicNanos();
    last_whole_file_barrier_ns = cleaned_at_ns;
  } else if (call.kind != BarrierKind::kMsyncAsync) {
    // A range barrier writes its pages back and write-protects them.
    NoteDataRange(call.file_offset, call.length, 0);
  }
  ticket.marked = call.kind != BarrierKind::kMsyncAsync &&
                  (ledger.mark_down() || call.always_mark) && shared->area_offset().has_value();
  if (ticket.marked) {
    ticket.prepared = SetMark(intent::kFileBarrierEntry, {Kind::kFileBarrier, 0, 0, 0, boot_id});
    if (ticket.prepared.ok()) internal::ReachPoint(internal::Point::kFileBarrierMarked);
    ++file_barrier_marks;
  }
  return ticket;
}

Status Store::Rep::RunBarrierCall(const BarrierCall& call) {
  // msync(MS_ASYNC) starts nothing and reports no writeback error.
  if (call.kind == BarrierKind::kMsyncAsync) return RunBarrierSystemCall(call);
  return gate.Run([&] { return RunBarrierSystemCall(call); });
}

Status Store::Rep::RunBarrierSystemCall(const BarrierCall& call) {
  if (call.kind == BarrierKind::kFdatasync) return file->DataSync();
  if (call.kind == BarrierKind::kDsyncWrite) {
    const std::array<std::span<const std::byte>, 1> one{call.data};
    return file->WriteGatherAt(
        call.file_offset,
        call.parts.empty() ? std::span<const std::span<const std::byte>>(one) : call.parts,
        /*data_sync=*/true);
  }
  const uint64_t begin = call.file_offset & ~(page_size - 1);
  const uint64_t end = format::AlignUp(call.file_offset + call.length, page_size);
  const bool sync = call.kind == BarrierKind::kMsyncSync;
  Status status = mapping->Sync(begin, end - begin, sync ? SyncKind::kSync : SyncKind::kAsync);
  if (status.ok() && sync && call.reset_page_tables) mapping->ResetPageTables(begin, end - begin);
  return status;
}

Status Store::Rep::CompleteBarrier(const BarrierCall& call, BarrierTicket& ticket, Status status) {
  const bool whole_file = call.kind == BarrierKind::kFdatasync;
  // The step that failed names the failure.
  const char* step = ticket.prepared.ok() ? call.operation : "write the intent mark";
  if (ticket.marked) --file_barrier_marks;
  // Another barrier that set the mark may still be in flight (a group's,
  // a background one): the last to return clears it. A failed one leaves
  // it for good, through the poison.
  if (status.ok() && ticket.marked && file_barrier_marks == 0 && poison.ok()) {
    step = "clear the intent mark";
    status = ClearMark(intent::kFileBarrierEntry);
  }
  const std::optional<DurabilityLedger::Covered> covered =
      status.ok() && whole_file ? std::optional(ledger.Returned(*ticket.cover)) : std::nullopt;
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
  if (status.ok() && whole_file && journal) {
    journal->RestartIfNoneAppendedSince(ticket.journal_mark);
  }
  if (status.ok() && whole_file && ticket.batches) {
    batch_log->Returned(*ticket.batches);
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
                                  std::chrono::steady_clock::now() - ticket.start)
                                  .count());
  }
  return status;
}

Status Store::Rep::StartBackgroundSync() {
  if (Status s = FinishBackgroundSync(/*wait=*/true); !s.ok()) return s;
  BackgroundSync sync;
  sync.call = {.kind = BarrierKind::kFdatasync,
               .counted_as = Durability::kPwriteFdatasync,
               .operation = "sync in the background: fdatasync"};
  sync.ticket = PrepareBarrier(sync.call);
  if (!sync.ticket.prepared.ok()) {
    return CompleteBarrier(sync.call, sync.ticket, sync.ticket.prepared);
  }
  if (internal::BackgroundSyncInline()) {
    sync.inline_result = gate.Run([&] { return file->DataSync(); });
  } else {
    if (!flusher) {
      auto made = Flusher::Make();
      // No thread to be had: the barrier runs here instead.
      if (!made.ok()) return CompleteBarrier(sync.call, sync.ticket, RunBarrierCall(sync.call));
      flusher = std::move(*made);
    }
    flusher->Start(file.get(), &gate);
  }
  ++stats.background_syncs;
  background_sync.emplace(std::move(sync));
  return Status::Ok();
}

Status Store::Rep::FinishBackgroundSync(bool wait) {
  if (!background_sync) return Status::Ok();
  // A forked child's copy of the handle never gets here: CheckWritable
  // refuses its writing calls, and its destructor returns before this.
  const bool inline_call = background_sync->inline_result.has_value();
  const bool ready = !inline_call && flusher->Done();
  if (!wait && !ready) return Status::Ok();
  if (!ready) internal::ReachPoint(internal::Point::kWaitForBackgroundSync);
  Status status = inline_call ? std::move(*background_sync->inline_result) : flusher->Collect();
  BackgroundSync sync = std::move(*background_sync);
  background_sync.reset();
  // The broken variant counts as covered what completed while it ran.
  if (internal::Mutated(internal::Mutation::kBackgroundCoversLate))
    sync.ticket.cover = ledger.Begin();
  return CompleteBarrier(sync.call, sync.ticket, std::move(status));
}

namespace {
bool Covers(const std::optional<DurabilityLedger::Cover>& cover, uint32_t index, uint32_t slot) {
  if (!cover) return false;
  return std::any_of(cover->commits.begin(), cover->commits.end(),
                     [&](const DurabilityLedger::Commit& commit) {
                       return commit.region == index && commit.slot == slot;
                     });
}
}  // namespace

bool Store::Rep::CoveredInFlight(uint32_t index, uint32_t slot, bool background) const {
  if (internal::Mutated(internal::Mutation::kOverwriteCoveredInFlight)) return false;
  if (group_ticket != nullptr && Covers(group_ticket->cover, index, slot)) return true;
  return background && background_sync && Covers(background_sync->ticket.cover, index, slot);
}

Status Store::Rep::MaybeStartSync() {
  if (sync_interval.count() <= 0 || background_sync || !ledger.mark_down()) return Status::Ok();
  const auto interval = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(sync_interval).count());
  if (io->MonotonicNanos() - last_whole_file_barrier_ns < interval) return Status::Ok();
  return StartBackgroundSync();
}

}  // namespace regionstore
