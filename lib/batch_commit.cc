// Batch commits: several regions, all or nothing, one barrier; and the
// batch log's watermark, which lets a completed batch's members stop
// depending on their record. docs/CHECKPOINTS.md ("Batches") has the
// protocol and the proof.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <vector>

#include "journal.h"
#include "shared_copy.h"
#include "store_rep.h"
#include "test_hooks.h"

namespace regionstore {

using intent::Kind;
using internal::MarkCommitPhase;

Result<std::vector<uint32_t>> Store::Rep::CheckMembers(std::span<const std::string_view> names,
                                                       bool batch, const char* operation) const {
  const auto invalid = [&](std::string message) {
    return Status::Error(StatusCode::kInvalidArgument, operation, path, std::move(message));
  };
  if (batch && !batch_log) {
    return invalid(
        "the store has no batch log: it was created without one (CreateOptions::batch_log, "
        "`regionctl create --batch-log`); commit its regions one at a time, or copy them into "
        "a new store that has one");
  }
  if (names.empty()) return invalid("a batch needs at least one region");
  if (names.size() > kMaxBatchMembers) {
    return invalid("a batch of " + std::to_string(names.size()) + " regions; at most " +
                   std::to_string(kMaxBatchMembers) + " are allowed");
  }
  std::vector<uint32_t> indexes;
  for (std::string_view name : names) {
    auto found = FindRegion(name, operation);
    if (!found.ok()) return found.status();
    if (Status s = CheckNotFilling(*found, operation); !s.ok()) return s;
    if (std::find(indexes.begin(), indexes.end(), *found) != indexes.end()) {
      return invalid("region '" + std::string(name) + "' is named twice in one batch");
    }
    if (regions[*found].max_generation >= slot::kMaxGeneration) {
      return Status::Error(
          StatusCode::kCorruption, operation, path,
          "region '" + info.regions[*found].name + "': the generation counter is exhausted");
    }
    indexes.push_back(*found);
  }
  return indexes;
}

Result<std::vector<uint64_t>> Store::CommitBatch(std::span<const BatchMember> members,
                                                 Durability durability) {
  Rep& r = *rep_;
  static constexpr const char* kOperation = "commit batch";
  HandleLock lock(r);
  if (Status s = r.BeginWrite(kOperation); !s.ok()) return s;
  if (static_cast<size_t>(durability) >= r.stats.by_mode.size()) {
    return Status::Error(StatusCode::kInvalidArgument, kOperation, r.path,
                         "unknown durability mode");
  }
  // Every check before anything is written, settling included.
  std::vector<std::string_view> names;
  for (const BatchMember& member : members) names.push_back(member.region);
  auto indexes = r.CheckMembers(names, /*batch=*/true, kOperation);
  if (!indexes.ok()) return indexes.status();
  std::vector<BatchPlanMember> plan(members.size());
  std::vector<uint64_t> lengths(members.size());
  for (size_t m = 0; m < members.size(); ++m) {
    auto length = r.CheckPayload((*indexes)[m], members[m].pieces, kOperation);
    if (!length.ok()) return length.status();
    plan[m].index = (*indexes)[m];
    plan[m].pieces = members[m].pieces;
    lengths[m] = *length;
  }
  // Another thread's durable commit of a member may be waiting for its
  // barrier: the batch starts after it returned (a region not settled yet
  // has none, nor a slot pinned). A fill in place begun meanwhile refuses
  // the batch, as CheckMembers would have.
  if (Status s = r.WaitUntilCommittable(*indexes, /*group_entry=*/false, kOperation); !s.ok()) {
    return s;
  }
  for (const uint32_t index : *indexes) {
    if (Status s = r.CheckNotFilling(index, kOperation); !s.ok()) return s;
  }
  auto id = r.NextBatchId(durability, kOperation);
  if (!id.ok()) return id.status();
  for (size_t m = 0; m < plan.size(); ++m) {
    if (Status s = r.SettleRegion(plan[m].index, /*rewrite=*/false); !s.ok()) return s;
    auto target = r.CommitTarget(plan[m].index);
    if (!target.ok()) return target.status();
    plan[m].target = *target;
    auto header = r.NextHeader(plan[m].index, plan[m].target, lengths[m], kOperation);
    if (!header.ok()) return header.status();
    // The payload checksum comes later, from the bytes stored (WriteBatch).
    plan[m].header = *header;
  }
  // The batch's phase (kCopy, kFlush) ends when it returns, by any exit.
  const internal::CommitPhaseGuard phase;
  auto generations = r.WriteBatch(plan, *id, durability, /*payloads_in_place=*/false);
  // The batch returned either way; a background barrier that cannot start
  // poisons the handle, and the next call says so.
  if (generations.ok()) (void)r.MaybeStartSync();
  return generations;
}

namespace {

constexpr const char* kPublicationWord = "commit batch: pwrite (publication word)";

// Where the header unit of `member`'s target slot is in the file.
uint64_t HeaderUnitOf(const StoreInfo& info, const BatchPlanMember& member) {
  return slot::HeaderFileOffset(info.regions[member.index], member.target);
}

// Each member's header unit (its header, then zeros) by pwrite, in plan
// order, each followed by its test point. Returns the first failure as the
// write reported it.
Status WriteHeaderUnits(File& file, const StoreInfo& info, std::span<const BatchPlanMember> plan) {
  std::array<std::byte, slot::kHeaderUnitSize> unit{};
  for (uint32_t m = 0; m < plan.size(); ++m) {
    const slot::HeaderBytes header_bytes = slot::EncodeHeader(plan[m].header);
    std::memcpy(unit.data(), header_bytes.data(), header_bytes.size());
    if (Status s = file.WriteAt(HeaderUnitOf(info, plan[m]), unit); !s.ok()) return s;
    internal::ReachPoint(internal::Point::kBatchMemberHeader, m);
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<uint64_t>> Store::Rep::WriteBatch(std::vector<BatchPlanMember>& plan,
                                                     uint64_t id, Durability durability,
                                                     bool payloads_in_place) {
  // A durable batch whose record fits in half the journal goes through it.
  // (Payloads filled in place are in their slots already: the journal would
  // copy them out again, and they are logged instead.)
  bool journaled = false;
  if (journal && IsDurable(durability) && !payloads_in_place) {
    std::vector<uint64_t> lengths;
    for (const BatchPlanMember& member : plan) lengths.push_back(member.header.length);
    journaled = journal->Takes(lengths);
  }
  batch::Record record;
  record.id = id;
  for (BatchPlanMember& member : plan) {
    member.header.batch_id = id;
    record.members.push_back({member.index, member.target, member.header.generation});
  }
  // The id is spent whatever happens now: a failed batch leaves traces
  // under it, and no later batch of this handle may take it again.
  batch_log->Spend(id);
  const batch::UnitBytes record_bytes = batch::EncodeRecord(record);
  Status written;
  if (journaled) {
    written = WriteJournaledBatch(plan, id, record_bytes, durability);
  } else if (IsDurable(durability)) {
    written = WriteLoggedDurableBatch(plan, id, record_bytes, durability, payloads_in_place);
  } else {
    written = WriteLoggedMappedBatch(plan, id, record_bytes, durability, payloads_in_place);
  }
  if (!written.ok()) return written;
  return RecordBatch(plan, durability);
}

Status Store::Rep::WithdrawBatch(std::span<const BatchPlanMember> plan, const Status& failure,
                                 const char* failed_write) {
  if (failed_write != nullptr) ++stats.failed_writes;
  ForgetBatchHeaders(plan);
  return failed_write != nullptr ? Poison(failure, failed_write) : failure;
}

Status Store::Rep::WriteLoggedDurableBatch(std::vector<BatchPlanMember>& plan, uint64_t id,
                                           const batch::UnitBytes& record_bytes,
                                           Durability durability, bool payloads_in_place) {
  const uint64_t record_offset = batch_log->RecordOffset(id);
  const auto write_record = [&]() -> Status {
    if (Status s = file->WriteAt(record_offset, record_bytes); !s.ok()) {
      return WithdrawBatch(plan, s, "commit batch: pwrite (batch record)");
    }
    return Status::Ok();
  };
  // Payloads, then the record, then the headers: a kill at any point leaves
  // headers only of members whose payload is whole, and a record in place
  // before any of them. The record counts for nothing until every member it
  // names is in place. Payloads filled in place are there already, behind
  // header units whose magic was cleared before the first of their bytes.
  const bool record_late = internal::Mutated(internal::Mutation::kBatchRecordAfterBarrier);
  MarkCommitPhase(internal::kCopy);
  if (!payloads_in_place) {
    for (const BatchPlanMember& member : plan) {
      if (Status s = WriteZeroUnitAndPieces(HeaderUnitOf(info, member), member.pieces); !s.ok()) {
        return WithdrawBatch(plan, s, "commit batch: pwritev (payload)");
      }
    }
    // The checksums of what the pwritev stored, read back through the
    // mapping (as DurableCommit does), not of the caller's buffers.
    for (BatchPlanMember& member : plan) {
      member.header.payload_checksum =
          StoredPayloadChecksum(member.index, member.target, member.header.length);
    }
  }
  if (!record_late) {
    if (Status s = write_record(); !s.ok()) return s;
  }
  // Recorded before any header reaches the page cache: if the barrier
  // fails and the process dies before the headers are zeroed again, the
  // next open in this boot withdraws them.
  if (Status s = SetMark(intent::kBatchBarrierEntry, {Kind::kBatchBarrier, 0, 0, id, boot_id});
      !s.ok()) {
    return WithdrawBatch(plan, s, "commit batch: pwrite (intent mark)");
  }
  // The headers become visible one after another: readers of several
  // regions wait while the publication word is odd.
  if (Status s = BeginPublishing(kPublicationWord); !s.ok()) return WithdrawBatch(plan, s);
  if (Status s = WriteHeaderUnits(*file, info, plan); !s.ok()) {
    return WithdrawBatch(plan, s, "commit batch: pwrite (slot header)");
  }
  if (Status s = EndPublishing(kPublicationWord); !s.ok()) return s;
  batch_log->Done(id);
  MarkCommitPhase(internal::kFlush);
  internal::ReachPoint(internal::Point::kBatchBeforeBarrier);
  // One barrier for every member, the record and the mark: fdatasync in
  // both modes (the members and the log are far apart in the file, and a
  // ranged msync from one to the other would cover everything between).
  if (Status s = Barrier({.kind = BarrierKind::kFdatasync,
                          .counted_as = durability,
                          .operation = "commit batch: fdatasync"});
      !s.ok()) {
    return WithdrawBatch(plan, s);
  }
  if (record_late) {
    if (Status s = write_record(); !s.ok()) return s;
  }
  // Until the mark is gone, the next open would undo this batch.
  if (Status s = ClearMark(intent::kBatchBarrierEntry); !s.ok()) {
    return WithdrawBatch(plan, s, "commit batch: pwrite (clear the intent mark)");
  }
  return Status::Ok();
}

Status Store::Rep::WriteLoggedMappedBatch(std::vector<BatchPlanMember>& plan, uint64_t id,
                                          const batch::UnitBytes& record_bytes,
                                          Durability durability, bool payloads_in_place) {
  std::byte* base = mapping->data();
  // As in the durable path: payloads, the record, then the headers.
  MarkCommitPhase(internal::kCopy);
  if (Status s = NoteVolatileCommit(); !s.ok()) return s;
  if (!payloads_in_place) {
    for (const BatchPlanMember& member : plan) {
      shared_copy::ClearHeaderMagic(base + HeaderUnitOf(info, member));
    }
    // As in a single commit: no payload store before the cleared magics.
    std::atomic_thread_fence(std::memory_order_release);
    // Each checksum of the bytes the copy stored (as MappedCommit).
    for (BatchPlanMember& member : plan) {
      member.header.payload_checksum = CopyPiecesToSharedChecksummed(
          base + slot::PayloadFileOffset(info.regions[member.index], member.target), member.pieces,
          member.header.length);
    }
  }
  // By pwrite, not through the mapping (a store through the mapping
  // dirties its whole page-cache folio; see Rep::SetMark).
  if (Status s = file->WriteAt(batch_log->RecordOffset(id), record_bytes); !s.ok()) {
    return WithdrawBatch(plan, s, "commit batch: pwrite (batch record)");
  }
  if (Status s = BeginPublishing(kPublicationWord); !s.ok()) return s;
  for (uint32_t m = 0; m < plan.size(); ++m) {
    shared_copy::StoreHeaderWords(base + HeaderUnitOf(info, plan[m]),
                                  slot::EncodeHeader(plan[m].header));
    internal::ReachPoint(internal::Point::kBatchMemberHeader, m);
  }
  if (Status s = EndPublishing(kPublicationWord); !s.ok()) return s;
  batch_log->Done(id);
  if (durability != Durability::kAsync) return Status::Ok();
  MarkCommitPhase(internal::kFlush);
  for (const BatchPlanMember& member : plan) {
    if (Status s = Barrier({.kind = BarrierKind::kMsyncAsync,
                            .counted_as = durability,
                            .operation = "commit batch: msync(MS_ASYNC)",
                            .file_offset = HeaderUnitOf(info, member),
                            .length = slot::kHeaderUnitSize + member.header.length});
        !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

Status Store::Rep::WriteJournaledBatch(std::vector<BatchPlanMember>& plan, uint64_t id,
                                       const batch::UnitBytes& record_bytes,
                                       Durability durability) {
  std::vector<journal::Member> members;
  for (const BatchPlanMember& member : plan) {
    members.push_back(
        {member.index, member.target, member.header.generation, member.header.length});
  }
  // The caller's payloads are read once, into the record assembled here;
  // every checksum, the record's write and the slots' writes then come from
  // it. Read more than once, a buffer another thread changes meanwhile would
  // give a member checksum, a record checksum and slot bytes of different
  // contents: a returned batch that does not load.
  std::vector<PayloadPieces> pieces;
  for (const BatchPlanMember& member : plan) pieces.push_back(member.pieces);
  const std::vector<std::span<const std::byte>> images = journal->Assemble(members, pieces);
  std::vector<slot::HeaderBytes> headers;
  std::vector<std::array<std::span<const std::byte>, 1>> image_pieces(plan.size());
  std::vector<PayloadPieces> payloads;
  for (size_t m = 0; m < plan.size(); ++m) {
    plan[m].header.payload_checksum = format::Checksum(images[m]);
    headers.push_back(slot::EncodeHeader(plan[m].header));
    image_pieces[m][0] = images[m];
    payloads.push_back(image_pieces[m]);
  }
  journal->SealHead(id, members, headers, payloads);
  auto at = AppendJournalRecord(id, durability);
  if (!at.ok()) return at.status();
  return CopyJournaledBatch(plan, id, record_bytes, payloads, *at);
}

Result<uint64_t> Store::Rep::AppendJournalRecord(uint64_t id, Durability durability) {
  MarkCommitPhase(internal::kCopy);
  // The journal starts over after a whole-file barrier (Barrier restarts
  // it): every member its records named is then durable in its slot.
  if (journal->NeedsBarrierFirst()) {
    ++stats.journal_checkpoints;
    if (Status s = Barrier({.kind = BarrierKind::kFdatasync,
                            .counted_as = durability,
                            .operation = "commit batch: fdatasync (the journal is full)"});
        !s.ok()) {
      return s;
    }
  }
  // As in a logged durable batch: if the record's write does not return in
  // this boot, the next open treats the batch as one whose barrier did not
  // return.
  if (Status s = SetMark(intent::kBatchBarrierEntry, {Kind::kBatchBarrier, 0, 0, id, boot_id});
      !s.ok()) {
    return FailedWrite(s, "commit batch: pwrite (intent mark)");
  }
  MarkCommitPhase(internal::kFlush);
  // The commit point: once this returns, the batch is on stable storage,
  // and a writer's open applies it again if its slots are not.
  return journal->Append(
      *file, [&](uint64_t at, std::span<const std::span<const std::byte>> parts) {
        return internal::Mutated(internal::Mutation::kJournalRecordNotSynced)
                   ? file->WriteGatherAt(at, parts, /*data_sync=*/false)
                   : Barrier({.kind = BarrierKind::kDsyncWrite,
                              .counted_as = durability,
                              .operation = "commit batch: pwritev2(RWF_DSYNC) (journal record)",
                              .file_offset = at,
                              .parts = parts});
      });
}

Status Store::Rep::CopyJournaledBatch(std::span<const BatchPlanMember> plan, uint64_t id,
                                      const batch::UnitBytes& record_bytes,
                                      std::span<const PayloadPieces> payloads, uint64_t at) {
  // The members reach their slots through the page cache: durable at the
  // next whole-file barrier (or by replay), pending until then.
  if (Status s = NoteVolatileCommit(); !s.ok()) return s;
  // A failed write leaves neither a member nor the journal's record behind.
  const auto failed_write = [&](const Status& s, const char* operation) {
    const Status reported = WithdrawBatch(plan, s, operation);
    BatchJournal::Forget(*file, at);
    return reported;
  };
  MarkCommitPhase(internal::kCopy);
  // As in a logged durable batch: payloads, the log's record, then the
  // headers, while readers of several regions wait on an odd publication
  // word.
  if (Status s = BeginPublishing(kPublicationWord); !s.ok()) return s;
  // From the record's images: the slots hold exactly what the record does.
  for (size_t m = 0; m < plan.size(); ++m) {
    if (Status s = WriteZeroUnitAndPieces(HeaderUnitOf(info, plan[m]), payloads[m]); !s.ok()) {
      return failed_write(s, "commit batch: pwritev (payload)");
    }
  }
  if (Status s = file->WriteAt(batch_log->RecordOffset(id), record_bytes); !s.ok()) {
    return failed_write(s, "commit batch: pwrite (batch record)");
  }
  if (Status s = WriteHeaderUnits(*file, info, plan); !s.ok()) {
    return failed_write(s, "commit batch: pwrite (slot header)");
  }
  if (Status s = EndPublishing(kPublicationWord); !s.ok()) return s;
  batch_log->Done(id);
  // Where a logged durable batch is published and its call has not
  // returned (there: before its barrier): the tests that kill a writer with
  // a batch readers were given stop here.
  internal::ReachPoint(internal::Point::kBatchBeforeBarrier);
  if (Status s = ClearMark(intent::kBatchBarrierEntry); !s.ok()) {
    return failed_write(s, "commit batch: pwrite (clear the intent mark)");
  }
  // The slot writes went through the page cache (NoteVolatileCommit above).
  ledger.VolatileCompleted();
  return Status::Ok();
}

void Store::Rep::ForgetBatchHeaders(std::span<const BatchPlanMember> plan) {
  std::byte* base = mapping->data();
  (void)BeginPublishing("commit batch: pwrite (publication word)");
  for (const BatchPlanMember& member : plan) {
    shared_copy::StoreHeaderWords(
        base + slot::HeaderFileOffset(info.regions[member.index], member.target),
        slot::HeaderBytes{});
  }
  (void)EndPublishing("commit batch: pwrite (publication word)");
}

std::vector<uint64_t> Store::Rep::RecordBatch(std::span<const BatchPlanMember> plan,
                                              Durability durability) {
  std::vector<uint64_t> generations;
  for (const BatchPlanMember& member : plan) {
    RecordCommit(member.index, member.target, member.header.generation, durability,
                 member.header.length);
    generations.push_back(member.header.generation);
  }
  ++stats.by_mode[static_cast<size_t>(durability)].batches;
  if (!IsDurable(durability)) ledger.VolatileCompleted();
  return generations;
}

}  // namespace regionstore
