// Recovery: what a writer's open does about earlier handles (RecoverOnOpen,
// RecoverEveryRegion), and the settling of a region at its first commit
// through a handle (SettleRegion). docs/CHECKPOINTS.md, "Recovery", says why
// each step is there. pread and pwrite only: no slot is read through the
// mapping here.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "region_check.h"
#include "shared_copy.h"
#include "store_rep.h"
#include "test_hooks.h"

namespace regionstore {

using intent::Kind;
using region_check::ReadFn;

namespace {

// The commit and file-barrier marks an open acts on: those of this boot,
// and those whose boot cannot be told (`unknown_boot`).
struct BootMarks {
  std::vector<intent::Entry> marks;
  // The intent entry each of `marks` was read from.
  std::vector<uint32_t> entries;
  bool unknown_boot = false;
};

// Reads the marks of `area` (the intent area as read, with the sidecar's
// entries put in) that this open must act on, given this boot's id
// (`boot_known`: whether one could be read). Writes nothing; with the
// kIgnoreIntentMarks mutation, finds none.
BootMarks ThisBootsMarks(std::span<const std::byte> area, bool boot_known,
                         const intent::BootId& boot_id) {
  BootMarks found;
  const bool ignore_marks = internal::Mutated(internal::Mutation::kIgnoreIntentMarks);
  for (uint32_t e = 0; e < intent::kEntryCount && !ignore_marks; ++e) {
    auto mark = intent::DecodeEntry(area.subspan(e * intent::kEntrySize));
    // ResolveBatchesOnOpen has read these.
    if (mark && (mark->kind == Kind::kBatchWatermark || mark->kind == Kind::kBatchBarrier)) {
      mark.reset();
    }
    // A mark from another boot says nothing about today's page cache: it
    // was filled from the disk since. (And the mark may be a durable copy of
    // one whose clearing never reached the disk: zeroing its commit then
    // would lose a commit that returned.)
    // A mark made where no boot id could be read (all zero), or read where
    // none can be, cannot be told from a stale one.
    if (mark && (!boot_known || mark->boot_id == boot_id || mark->boot_id == intent::BootId{})) {
      if (!boot_known || mark->boot_id == intent::BootId{}) found.unknown_boot = true;
      found.marks.push_back(*mark);
      found.entries.push_back(e);
    }
  }
  return found;
}

}  // namespace

Status Store::Rep::RecoverOnOpen() {
  // Without checkpoint regions no promise rests on what earlier handles
  // left: raw writes keep only what their own mode promised. No barrier.
  if (info.regions.empty()) return Status::Ok();
  regions.assign(info.regions.size(), RegionState{});
  ledger.Reset(static_cast<uint32_t>(info.regions.size()));
  for (uint32_t r = 0; r < info.regions.size(); ++r) {
    regions[r].known_generation.assign(info.regions[r].slot_count, 0);
    regions[r].written_at_ns.assign(info.regions[r].slot_count, 0);
  }
  const std::optional<uint64_t> intent_area = shared->area_offset();
  if (!intent_area) return RecoverEveryRegion();
  auto boot = io->BootId();
  if (boot.ok()) boot_id = *boot;
  const ReadFn read = region_check::PreadReader(*file, path);
  std::vector<std::byte> area(intent::kAreaSize);
  if (Status s = read(*intent_area, area); !s.ok()) {
    return s.WithOperation("open: read the intent area", path);
  }
  // The boot-scoped entries from where the protocol keeps them.
  bool marks_lost = false;
  if (Status s = shared->AdoptOnOpen(area, boot_id, boot.ok(), marks_lost); !s.ok()) return s;
  if (Status s = MovePublicationOnAtOpen(area); !s.ok()) return s;
  // Batches first: their traces go before any region is settled below.
  bool batch_withdrawn = false;
  if (Status s = ResolveBatchesOnOpen(area, batch_withdrawn); !s.ok()) return s;
  const BootMarks found = ThisBootsMarks(area, boot.ok(), boot_id);
  // Such a mark, or marks of this boot that were lost with a replaced
  // sidecar: zero nothing, and write every region's newest commit again
  // instead, which covers a failed barrier of any earlier handle.
  if (found.unknown_boot || marks_lost) return RecoverEveryRegion();
  bool file_barrier = false;
  // Withdrawn batch members, like a commit mark's zeroed header, must not come
  // back: if the fdatasync below fails, the next open rewrites everything.
  bool must_mark = batch_withdrawn;
  if (Status s = ActOnMarks(found.marks, file_barrier, must_mark); !s.ok()) return s;
  // Each mark is acted on once: left in place, it would match the next
  // commit that gets the same generation in the same slot (a lost commit's
  // generation is issued again) and undo it at a later open.
  for (size_t i = 0; i < found.marks.size(); ++i) {
    if (found.marks[i].kind != Kind::kCommitBarrier) continue;
    if (Status s = ClearMark(found.entries[i]); !s.ok()) {
      return s.WithOperation("open: clear an intent mark", path);
    }
  }
  // A whole-file barrier was running while commits without a barrier were
  // pending: if it failed, any of their pages may be clean in the cache and
  // missing on disk, and nothing says which. Write every region's newest
  // commit again, so the fdatasync covers it.
  if (file_barrier) return RecoverEveryRegion();
  internal::ReachPoint(internal::Point::kRecoveryBeforeBarrier);
  // Whatever earlier handles left in the page cache becomes durable here.
  // If this fails, the kernel may have marked some of it clean unwritten and
  // will not say so again; when that matters (commits an earlier handle left
  // without a barrier, a commit mark's zeroed header), the file-barrier mark
  // is down before the call, for the next open to see.
  return Barrier({.kind = BarrierKind::kFdatasync,
                  .counted_as = std::nullopt,
                  .operation = "open: fdatasync",
                  .file_offset = 0,
                  .length = 0,
                  .reset_page_tables = false,
                  .always_mark = must_mark});
}

Status Store::Rep::MovePublicationOnAtOpen(std::span<const std::byte> area) {
  // The publication word: an odd one is a dead writer's batch publication,
  // which this open resolves, and a torn one (a power loss) counts on from
  // its value half, far enough that no reader takes a later value for it.
  // Either way it is even once the open is done (Store::Open), and the
  // changes of what is visible this open makes (undoing a commit or a batch
  // whose barrier failed in this boot) happen while it is odd.
  const std::span<const std::byte> word =
      area.subspan(intent::kPublicationEntry * intent::kEntrySize);
  if (const std::optional<uint64_t> p = intent::DecodePublication(word)) {
    publication = *p;
    // A dead writer's odd word: readers that found no writer alive may be
    // taking snapshots under this very value (Store::LoadSet), so move it on
    // before this open changes anything they read.
    if ((publication & 1) != 0) {
      if (Status s = WritePublication(publication + 2, "open: pwrite (publication word)");
          !s.ok()) {
        return s;
      }
    }
  } else {
    const uint64_t start = format::Load64(word, 0) + (uint64_t{1} << 32);
    publication = start + (start & 1);
    if (Status s = BeginPublishing("open: pwrite (publication word)"); !s.ok()) return s;
  }
  open_publishing = true;
  return Status::Ok();
}

Status Store::Rep::ActOnMarks(const std::vector<intent::Entry>& marks, bool& file_barrier,
                              bool& must_mark) {
  for (const intent::Entry& mark : marks) {
    if (mark.kind == Kind::kFileBarrier) file_barrier = true;
    // Commits an earlier handle left without a barrier: this open's
    // fdatasync makes them durable, and runs as a file barrier for that.
    if (mark.kind == Kind::kVolatilePending) ledger.set_mark_down(true);
    if (mark.kind != Kind::kCommitBarrier) continue;
    // The barrier of this commit did not return: it may have failed,
    // leaving pages the kernel marked clean but never wrote, and the open's
    // fdatasync would skip them. The commit was in flight, so losing it is
    // allowed; counting it durable is not.
    // Even where the header already reads zero (the failing handle zeroed
    // it), that zero may be clean in the cache and missing on disk: the
    // open's fdatasync must make it durable, marked, before the generation
    // can be issued again.
    must_mark = true;
    if (Status s = KeepOrClearMarkedCommit(mark); !s.ok()) return s;
  }
  return Status::Ok();
}

Status Store::Rep::KeepOrClearMarkedCommit(const intent::Entry& mark) {
  if (mark.region >= info.regions.size()) return Status::Ok();
  const RegionEntry& region = info.regions[mark.region];
  if (mark.slot >= region.slot_count) return Status::Ok();
  const ReadFn read = region_check::PreadReader(*file, path);
  slot::HeaderBytes bytes;
  const uint64_t unit = slot::HeaderFileOffset(region, mark.slot);
  if (Status s = read(unit, bytes); !s.ok()) return s;
  const slot::DecodedHeader decoded =
      slot::DecodeHeader(bytes, mark.region, mark.slot, region.capacity, HeadersCarryBatchIds());
  if (decoded.kind != slot::DecodedHeader::Kind::kValid ||
      decoded.header.generation != mark.generation) {
    return Status::Ok();
  }
  // The commit was visible from its header's store on, and readers may
  // have been given it: keep it if it is whole (in this boot's page cache
  // a kill cannot leave a valid header over a partial payload). Its pages
  // are written again, so that the open's fdatasync covers them even if the
  // barrier failed and left them clean but unwritten; it is durable once
  // this open returns, and its generation stays the region's floor.
  if (!internal::Mutated(internal::Mutation::kRecoveryUndoesUnfinishedBarrier)) {
    const uint64_t payload = slot::PayloadFileOffset(region, mark.slot);
    auto matches = region_check::PayloadMatches(read, payload, decoded.header);
    if (!matches.ok()) return matches.status();
    if (*matches) {
      return RewriteRange(unit, payload + decoded.header.length,
                          "open: rewrite a commit whose barrier did not return");
    }
  }
  // Not whole (its payload pages were dropped and read back from the
  // disk after a failed writeback): no commit, and never returned.
  if (Status s = BeginPublishing("open: pwrite (publication word)"); !s.ok()) return s;
  const std::vector<std::byte> zero_unit(slot::kHeaderUnitSize);
  if (Status s = file->WriteAt(unit, zero_unit); !s.ok()) {
    return s.WithOperation("open: clear the header of a commit whose barrier did not return", path);
  }
  return Status::Ok();
}

Status Store::Rep::ResolveBatchesOnOpen(std::span<const std::byte> area, bool& must_mark) {
  batch_log = BatchLog::For(info);
  if (!batch_log) return Status::Ok();
  const batch::Watermark found = batch::ReadWatermark(area);
  // A batch whose barrier did not return in this boot: it was in flight, so
  // losing it is allowed, and its pages may be clean in the cache but
  // missing on disk. A mark from another boot says nothing (as for commits).
  std::optional<uint64_t> failed;
  const auto mark =
      intent::DecodeEntry(area.subspan(intent::kBatchBarrierEntry * intent::kEntrySize));
  if (mark && mark->kind == Kind::kBatchBarrier) {
    if (boot_id != intent::BootId{} && mark->boot_id == boot_id) failed = mark->generation;
    if (Status s = ClearMark(intent::kBatchBarrierEntry); !s.ok()) {
      return s.WithOperation("open: clear an intent mark", path);
    }
  }
  // Journaled batches whose record returned are whole again before any
  // header is judged below.
  journal = BatchJournal::ForStore(info);
  if (journal && !internal::Mutated(internal::Mutation::kJournalNotReplayed)) {
    if (Status s = ReplayJournal(found, failed, must_mark); !s.ok()) return s;
  }
  // A clean watermark: the last writer issued no batch above it, and every
  // batch up to it is durable. Otherwise every batch above it may have left
  // members whose partners or record are missing, and no record says where
  // they all are: read every slot header.
  if (!found.clean || failed) {
    auto traces = JudgeUnfinishedBatches(found, failed);
    if (!traces.ok()) return traces.status();
    if (Status s = WithdrawAndKeep(*traces, failed, must_mark); !s.ok()) return s;
  }
  const batch::Watermark open =
      batch_log->Opened(found, failed.has_value(), journal ? journal->max_id() : 0);
  if (Status s = WriteWatermark(open); !s.ok()) {
    return s.WithOperation("open: pwrite (batch watermark)", path);
  }
  batch_log->WatermarkWritten(open);
  return Status::Ok();
}

Result<Store::Rep::BatchTraces> Store::Rep::JudgeUnfinishedBatches(const batch::Watermark& found,
                                                                   std::optional<uint64_t> failed) {
  const ReadFn read = region_check::PreadReader(*file, path);
  const region_check::BatchContext context{&info, batch_log->offset(), found.w};
  BatchTraces traces;
  for (uint32_t r = 0; r < info.regions.size(); ++r) {
    const RegionEntry& region = info.regions[r];
    for (uint32_t i = 0; i < region.slot_count; ++i) {
      slot::HeaderBytes bytes;
      const uint64_t unit = slot::HeaderFileOffset(region, i);
      if (Status s = read(unit, bytes); !s.ok()) return s;
      const slot::DecodedHeader decoded =
          slot::DecodeHeader(bytes, r, i, region.capacity, /*batch_ids=*/true);
      if (decoded.kind != slot::DecodedHeader::Kind::kValid || decoded.header.batch_id <= found.w ||
          decoded.header.batch_id == batch::kWithdrawnId) {
        continue;
      }
      if (Status s = JudgeMember(read, context, r, i, decoded.header, failed, traces); !s.ok()) {
        return s;
      }
    }
  }
  return traces;
}

Status Store::Rep::JudgeMember(const ReadFn& read, const region_check::BatchContext& context,
                               uint32_t r, uint32_t i, const slot::Header& header,
                               std::optional<uint64_t> failed, BatchTraces& traces) {
  const RegionEntry& region = info.regions[r];
  const uint64_t unit = slot::HeaderFileOffset(region, i);
  const bool unfinished_barrier = failed && header.batch_id == *failed;
  if (unfinished_barrier &&
      internal::Mutated(internal::Mutation::kRecoveryUndoesUnfinishedBarrier)) {
    traces.withdraw.emplace_back(unit, header);
    return Status::Ok();
  }
  // A member whose own payload is torn counts for nothing anyway, and is
  // left for Load and verify to report; its partners fail below. (Of the
  // batch whose barrier did not return, it is withdrawn.)
  const uint64_t payload = slot::PayloadFileOffset(region, i);
  auto matches = region_check::PayloadMatches(read, payload, header);
  if (!matches.ok()) return matches.status();
  if (!*matches) {
    if (unfinished_barrier) traces.withdraw.emplace_back(unit, header);
    return Status::Ok();
  }
  auto verdict = region_check::BatchVerdict(read, context, r, i, header);
  if (!verdict.ok()) return verdict.status();
  if (!verdict->empty()) {
    traces.withdraw.emplace_back(unit, header);
  } else if (unfinished_barrier) {
    // Whole, so visible, and readers may have been given it: kept, its
    // pages written again for the open's fdatasync (as for a single commit
    // whose barrier did not return).
    traces.keep.emplace_back(unit, payload + header.length);
  }
  return Status::Ok();
}

Status Store::Rep::WithdrawAndKeep(BatchTraces& traces, std::optional<uint64_t> failed,
                                   bool& must_mark) {
  // Decided on the file as it was, then withdrawn: no verdict saw a change
  // of this open. A withdrawn member keeps its generation, so no later
  // commit to its region takes that generation again.
  std::vector<std::byte> unit_bytes(slot::kHeaderUnitSize);
  // The members of a batch whose barrier failed were visible.
  if (failed && !traces.withdraw.empty()) {
    if (Status s = BeginPublishing("open: pwrite (publication word)"); !s.ok()) return s;
  }
  for (auto& [unit, header] : traces.withdraw) {
    header.batch_id = batch::kWithdrawnId;
    const slot::HeaderBytes encoded = slot::EncodeHeader(header);
    std::copy(encoded.begin(), encoded.end(), unit_bytes.begin());
    if (Status s = file->WriteAt(unit, unit_bytes); !s.ok()) {
      return s.WithOperation("open: withdraw a member of a batch that did not complete", path);
    }
    must_mark = true;
  }
  // A kept batch needs its record on disk as much as its members.
  if (!traces.keep.empty()) {
    const uint64_t record = batch_log->RecordOffset(*failed);
    traces.keep.emplace_back(record, record + batch::kUnitSize);
  }
  for (const auto& [begin, end] : traces.keep) {
    if (Status s = RewriteRange(begin, end, "open: rewrite a batch whose barrier did not return");
        !s.ok()) {
      return s;
    }
    must_mark = true;
  }
  return Status::Ok();
}

Status Store::Rep::ReplayJournal(const batch::Watermark& found, std::optional<uint64_t> failed,
                                 bool& must_mark) {
  const BatchJournal::ReplayWriter writer{
      .file = file.get(),
      .path = &path,
      .begin_publishing = [this] { return BeginPublishing("open: pwrite (publication word)"); },
      .rewrite = [this](uint64_t begin, uint64_t end,
                        const char* operation) { return RewriteRange(begin, end, operation); }};
  return journal->Replay(writer, found, failed, must_mark);
}

Status Store::Rep::RecoverEveryRegion() {
  for (uint32_t r = 0; r < info.regions.size(); ++r) {
    if (Status s = SettleRegion(r, /*rewrite=*/true); !s.ok()) return s;
  }
  // The batch log too: a member counts only with its record, and a failed
  // barrier may have left the record's page clean in the cache but missing
  // on disk.
  if (batch_log) {
    std::vector<std::byte> log(format::kBatchLogSize);
    const ReadFn read = region_check::PreadReader(*file, path);
    if (Status s = read(batch_log->offset(), log); !s.ok()) return s;
    if (Status s = file->WriteAt(batch_log->offset(), log); !s.ok()) {
      return s.WithOperation("open: rewrite the batch log", path);
    }
  }
  // One barrier: the cleared headers and the rewritten commits are on disk
  // before the first new commit, so every settled slot is durable.
  if (Status s = file->DataSync(); !s.ok()) {
    return s.WithOperation("open: fdatasync (recovering checkpoint regions)", path);
  }
  // Every mark is moot now; the publication word and the batch watermark
  // entries describe the store and stay.
  if (Status s = shared->ClearMarks(); !s.ok()) {
    return s.WithOperation("open: clear the intent area", path);
  }
  ledger.set_mark_down(false);
  return Status::Ok();
}

Status Store::Rep::RewriteRange(uint64_t begin, uint64_t end, const char* operation) {
  const ReadFn read = region_check::PreadReader(*file, path);
  std::vector<std::byte> chunk(std::min<uint64_t>(region_check::kChunk, end - begin));
  for (uint64_t at = begin; at < end;) {
    const std::span<std::byte> piece =
        std::span(chunk).first(std::min<uint64_t>(chunk.size(), end - at));
    if (Status s = read(at, piece); !s.ok()) return s;
    if (Status s = file->WriteAt(at, piece); !s.ok()) return s.WithOperation(operation, path);
    at += piece.size();
  }
  return Status::Ok();
}

namespace {

bool Withdrawn(const slot::DecodedHeader& decoded) {
  return decoded.kind == slot::DecodedHeader::Kind::kValid &&
         decoded.header.batch_id == batch::kWithdrawnId;
}

}  // namespace

Status Store::Rep::SettleRegion(uint32_t index, bool rewrite) {
  RegionState& state = regions[index];
  if (state.settled) return Status::Ok();
  const RegionEntry& region = info.regions[index];
  const ReadFn read = region_check::PreadReader(*file, path);
  std::vector<slot::HeaderBytes> headers(region.slot_count);
  std::vector<slot::DecodedHeader> decoded(region.slot_count);
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    if (Status s = read(slot::HeaderFileOffset(region, i), headers[i]); !s.ok()) return s;
    decoded[i] = slot::DecodeHeader(headers[i], index, i, region.capacity, HeadersCarryBatchIds());
    if (decoded[i].kind == slot::DecodedHeader::Kind::kValid) {
      state.max_generation = std::max(state.max_generation, decoded[i].header.generation);
      // Only to rank free targets (an older commit goes after empty slots,
      // oldest first); newest and durable come from checked payloads below.
      // A withdrawn batch member is free like an empty slot.
      state.known_generation[i] = Withdrawn(decoded[i]) ? 0 : decoded[i].header.generation;
    }
  }
  if (internal::Mutated(internal::Mutation::kTargetFromRawGeneration)) {
    SettleByRawGeneration(index, headers);
    return Status::Ok();
  }
  auto recovered = FindNewestCommit(index, headers);
  if (!recovered.ok()) return recovered.status();
  if (Status s = ZeroUnownedHeaders(index, decoded, recovered->generation, rewrite); !s.ok()) {
    return s;
  }
  if (rewrite) {
    if (Status s = RewriteRegion(index, recovered->length); !s.ok()) return s;
  }
  state.settled = true;
  return Status::Ok();
}

void Store::Rep::SettleByRawGeneration(uint32_t index, std::span<const slot::HeaderBytes> headers) {
  RegionState& state = regions[index];
  uint64_t highest = 0;
  for (uint32_t i = 0; i < headers.size(); ++i) {
    const uint64_t raw = format::Load64(headers[i], slot::hdr::kGeneration);
    if (raw > highest && raw <= slot::kMaxGeneration) {
      state.newest = state.durable = i;
      highest = raw;
    }
  }
  state.max_generation = std::max(state.max_generation, highest);
  state.settled = true;
}

Result<Store::Rep::Recovered> Store::Rep::FindNewestCommit(
    uint32_t index, const std::vector<slot::HeaderBytes>& headers) {
  RegionState& state = regions[index];
  const RegionEntry& region = info.regions[index];
  const ReadFn read = region_check::PreadReader(*file, path);
  // Newest header first; the first whose payload matches is the commit.
  // Older slots are not checked: the protocol only needs to know the newest
  // and the durable slot, and every other slot is a free target.
  for (const region_check::ValidHeader& candidate :
       region_check::ValidHeadersNewestFirst(headers, region, index, HeadersCarryBatchIds())) {
    if (candidate.header.batch_id == batch::kWithdrawnId) continue;
    Result<bool> matches = true;
    if (!internal::Mutated(internal::Mutation::kSettleTrustsHeader)) {
      matches = region_check::PayloadMatches(read, slot::PayloadFileOffset(region, candidate.slot),
                                             candidate.header);
    }
    if (!matches.ok()) return matches.status();
    if (*matches) {
      state.newest = state.durable = candidate.slot;
      state.known_generation[candidate.slot] = candidate.header.generation;
      PublishDurable(index);  // after the open's barrier only
      return Recovered{candidate.header.generation, candidate.header.length};
    }
  }
  return Recovered{};
}

Status Store::Rep::ZeroUnownedHeaders(uint32_t index, std::span<const slot::DecodedHeader> decoded,
                                      uint64_t recovered_generation, bool rewrite) {
  RegionState& state = regions[index];
  const RegionEntry& region = info.regions[index];
  // Zero every header that holds no commit this settle trusts and is not an
  // older commit: an invalid one, an unfinished one, or one newer than the
  // recovered commit (a torn commit, or damage). Left in place, a later
  // crash while its slot is written again could complete it from units of
  // the new writes (applications commit mostly the same bytes) and bring a
  // lost commit back. Zeroed and synced before anything is written here, no
  // mix of later writes can recreate it. A withdrawn batch member never
  // counts whatever its payload holds, and stays: its generation is the
  // floor of the region's next commit at every open.
  const std::vector<std::byte> zero_unit(slot::kHeaderUnitSize);
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    if (state.newest == i || decoded[i].kind == slot::DecodedHeader::Kind::kEmpty) continue;
    if (Withdrawn(decoded[i])) continue;
    if (decoded[i].kind == slot::DecodedHeader::Kind::kValid &&
        decoded[i].header.generation <= recovered_generation) {
      continue;
    }
    const uint64_t unit = slot::HeaderFileOffset(region, i);
    state.known_generation[i] = 0;
    if (Status s = file->WriteAt(unit, zero_unit); !s.ok()) {
      return FailedWrite(s, rewrite ? "open: clear a checkpoint slot header no commit owns"
                                    : "commit: clear a checkpoint slot header no commit owns");
    }
    // A whole-file barrier follows the rewrite (RewriteRegion).
    if (rewrite) continue;
    // Marked whatever else is pending: if this fails, the zero unit may be
    // clean in the cache and missing on disk, and the next open must write
    // every header unit again.
    if (Status s = Barrier({.kind = BarrierKind::kMsyncSync,
                            .counted_as = std::nullopt,
                            .operation = "commit: msync(MS_SYNC) of a cleared slot header",
                            .file_offset = unit,
                            .length = slot::kHeaderUnitSize,
                            .reset_page_tables = false,
                            .always_mark = true});
        !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

Status Store::Rep::RewriteRegion(uint32_t index, uint64_t recovered_length) {
  const RegionState& state = regions[index];
  const RegionEntry& region = info.regions[index];
  const ReadFn read = region_check::PreadReader(*file, path);
  // Write every header unit and the recovered commit again, byte for byte,
  // for the whole-file barrier that follows: an earlier handle's failed
  // barrier may have left their pages clean in the cache but missing on disk
  // (a commit, or a header it zeroed), and the barrier skips clean pages.
  std::vector<std::byte> unit_bytes(slot::kHeaderUnitSize);
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    if (state.newest == i) continue;  // with its payload, below
    const uint64_t unit = slot::HeaderFileOffset(region, i);
    if (Status s = read(unit, unit_bytes); !s.ok()) return s;
    if (Status s = file->WriteAt(unit, unit_bytes); !s.ok()) {
      return s.WithOperation("open: rewrite a checkpoint slot header", path);
    }
  }
  if (!state.newest) return Status::Ok();
  return RewriteRange(slot::HeaderFileOffset(region, *state.newest),
                      slot::PayloadFileOffset(region, *state.newest) + recovered_length,
                      "open: rewrite the recovered checkpoint");
}

}  // namespace regionstore
