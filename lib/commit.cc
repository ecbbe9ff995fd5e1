// Commit: the target choice, then one of the two write paths (through the
// mapping for kNone/kAsync, write-through pwrite for kSync and
// kPwriteFdatasync), then what the handle learns. docs/CHECKPOINTS.md,
// "Commit", has the protocol and why each step is where it is.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "fused_copy.h"
#include "shared_copy.h"
#include "store_rep.h"
#include "test_hooks.h"

namespace regionstore {

using intent::Kind;
using internal::MarkCommitPhase;

Result<uint64_t> Store::Commit(std::string_view name, std::span<const std::byte> payload,
                               Durability durability) {
  const std::array<std::span<const std::byte>, 1> pieces{payload};
  return CommitPieces(name, pieces, durability);
}

Result<uint64_t> Store::CommitPieces(std::string_view name, PayloadPieces pieces,
                                     Durability durability) {
  Rep& r = *rep_;
  HandleLock lock(r);
  if (Status s = r.BeginWrite("commit"); !s.ok()) return s;
  auto found = r.FindRegion(name, "commit");
  if (!found.ok()) return found.status();
  const uint32_t index = *found;
  auto length = r.CheckPayload(index, pieces, "commit");
  if (!length.ok()) return length.status();
  if (static_cast<size_t>(durability) >= r.stats.by_mode.size()) {
    return Status::Error(StatusCode::kInvalidArgument, "commit", r.path, "unknown durability mode");
  }
  if (Status s = r.SettleRegion(index, /*rewrite=*/false); !s.ok()) return s;
  // Another thread's commit of the region may be waiting for its barrier:
  // this one starts after it returned.
  const bool grouped = IsDurable(durability) && r.group_commits;
  if (Status s = r.WaitUntilCommittable({&index, 1}, grouped, "commit"); !s.ok()) return s;
  if (Status s = r.CheckNotFilling(index, "commit"); !s.ok()) return s;

  auto chosen = r.CommitTarget(index);
  if (!chosen.ok()) return chosen.status();
  const uint32_t target = *chosen;
  auto header = r.NextHeader(index, target, *length, "commit");
  if (!header.ok()) return header.status();

  // From here the target's old content is gone: a failure below may leave
  // the slot unfinished or empty, never another commit's header.
  Status outcome;
  if (IsDurable(durability)) {
    outcome = r.DurableCommit(index, target, *header, pieces, durability, grouped);
  } else if (r.VolatileCommitByMapping(index, target, *length)) {
    outcome = r.MappedCommit(index, target, *header, pieces, durability);
  } else {
    outcome = r.PwriteCommit(index, target, *header, pieces, durability);
  }
  MarkCommitPhase(internal::kIdle);
  if (!outcome.ok()) return outcome;
  r.RecordCommit(index, target, header->generation, durability, *length);
  if (!IsDurable(durability)) r.ledger.VolatileCompleted();
  // The commit returned either way; a background barrier that cannot start
  // poisons the handle, and the next call says so.
  (void)r.MaybeStartSync();
  return header->generation;
}

Result<uint64_t> Store::Rep::CheckPayload(uint32_t index, PayloadPieces pieces,
                                          const char* operation) const {
  const RegionEntry& region = info.regions[index];
  if (pieces.size() > kMaxPayloadPieces) {
    return Status::Error(StatusCode::kInvalidArgument, operation, path,
                         "region '" + region.name + "': a payload in " +
                             std::to_string(pieces.size()) + " pieces; at most " +
                             std::to_string(kMaxPayloadPieces) + " are allowed");
  }
  uint64_t length = 0;
  for (std::span<const std::byte> piece : pieces) length += piece.size();
  if (length > region.capacity) {
    return Status::Error(StatusCode::kInvalidArgument, operation, path,
                         "payload of " + std::to_string(length) +
                             " bytes exceeds the capacity of region '" + region.name + "' (" +
                             std::to_string(region.capacity) + " bytes)");
  }
  return length;
}

Result<slot::Header> Store::Rep::NextHeader(uint32_t index, uint32_t target, uint64_t length,
                                            const char* operation) const {
  const RegionState& state = regions[index];
  if (state.max_generation >= slot::kMaxGeneration) {
    return Status::Error(
        StatusCode::kCorruption, operation, path,
        "region '" + info.regions[index].name + "': the generation counter is exhausted");
  }
  slot::Header header;
  header.region = index;
  header.slot = target;
  header.generation = state.max_generation + 1;
  header.length = length;
  header.commit_unix_ns = io->NowUnixNanos();
  return header;
}

void CopyPiecesToShared(std::byte* shared, PayloadPieces pieces) {
  for (std::span<const std::byte> piece : pieces) {
    shared_copy::CopyToShared(shared, piece.data(), piece.size());
    shared += piece.size();
  }
}

uint64_t CopyPiecesToSharedChecksummed(std::byte* shared, PayloadPieces pieces, uint64_t length) {
  // The checksum is of the bytes stored in the mapping, never of a separate
  // read of the caller's: another thread may change those between any two
  // reads of them, and a checksum of one read over a copy of another would
  // make a commit that returned OK fail to load.
  // Where it can (x86-64 with AVX2; not under ThreadSanitizer, whose builds
  // copy with atomic words), one pass loads each source stripe once into
  // registers that it both stores and hashes. It reads the source once and
  // never reads the destination back: against hashing the source, then
  // copying it (before 0.13), 0.82x the time at 4 KiB, 0.66x at 64 KiB,
  // 0.94x at 1 MiB (a copy-and-hash microbenchmark, one process), where
  // copying, then hashing the destination cost 0.89x, 0.99x and 1.06x.
  if (!shared_copy::kAtomicSlotCopies && length >= fused_copy::kMinLength &&
      fused_copy::Available()) {
    return fused_copy::CopyChecksummed(shared, pieces, length);
  }
  return CopyPiecesToSharedThenChecksum(shared, pieces, length);
}

uint64_t CopyPiecesToSharedThenChecksum(std::byte* shared, PayloadPieces pieces, uint64_t length) {
  // A small payload is still in L1 after the copy: one copy, one hash.
  if (length <= kOnePassThreshold) {
    CopyPiecesToShared(shared, pieces);
    return format::Checksum({shared, static_cast<size_t>(length)});
  }
  // A large one would be read from memory twice (copy, then hash): copy
  // block by block, and hash each stored block one block later, while it is
  // still in L1 but its stores have drained (the hash's wide loads would
  // wait on the copy's narrower stores still in flight). The streaming XXH3
  // gives the one-shot digest.
  format::ChecksumStream checksum;
  const std::byte* hashed = shared;
  for (std::span<const std::byte> piece : pieces) {
    for (size_t at = 0; at < piece.size(); at += kOnePassBlock) {
      const size_t block = std::min(kOnePassBlock, piece.size() - at);
      shared_copy::CopyToShared(shared, piece.data() + at, block);
      shared += block;
      while (static_cast<size_t>(shared - hashed) >= 2 * kOnePassBlock) {
        checksum.Update({hashed, kOnePassBlock});
        hashed += kOnePassBlock;
      }
    }
  }
  checksum.Update({hashed, static_cast<size_t>(shared - hashed)});
  return checksum.Digest();
}

Result<uint32_t> Store::Rep::CommitTarget(uint32_t index) {
  std::optional<uint32_t> target = FreeSlot(index);
  if (!target) {
    // Every slot is the newest, the durable one or covered by the
    // background barrier in flight: that barrier completes first (G4).
    ++stats.waits_for_background_sync;
    if (Status s = FinishBackgroundSync(/*wait=*/true); !s.ok()) return s;
    target = FreeSlot(index);
  }
  // WaitUntilCommittable left a slot that no barrier in flight pins, or the
  // background barrier's alone, and newest and durable take two.
  if (!target) {
    return Status::Error(StatusCode::kBusy, "commit", path,
                         "region '" + info.regions[index].name +
                             "' has no slot free of its newest, durable and pinned commits");
  }
  return *target;
}

std::optional<uint32_t> Store::Rep::FreeSlot(uint32_t index, bool background_pins) const {
  const RegionEntry& region = info.regions[index];
  const RegionState& state = regions[index];
  // The target holds neither the newest commit (G2: a kill leaves it intact)
  // nor the newest durable one (G3: a power loss leaves it intact), nor a
  // commit a background barrier in flight is making durable (G4: it may be
  // the only one a power cut leaves of what that barrier covers). Of the
  // rest, the one with the oldest known commit; unknown or invalid slots
  // count as oldest. Only validated state decides. Three slots can all be
  // taken, by the newest commit (made after the barrier in flight began),
  // the one that barrier covers and the durable one: CommitTarget then
  // waits for the barrier. A fourth slot (CheckpointSpec::slots) is left
  // free in that case.
  std::optional<uint32_t> target;
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    if (i == state.newest || i == state.durable || CoveredInFlight(index, i, background_pins)) {
      continue;
    }
    if (!target || state.known_generation[i] < state.known_generation[*target]) target = i;
  }
  if (internal::Mutated(internal::Mutation::kTwoSlotAlternation)) {
    target = state.newest == 0u ? 1u : 0u;
  }
  return target;
}

namespace {
// A commit without a barrier goes through the mapping at or below this
// size, whatever the state of its pages: a few write faults at most, and
// no system call.
constexpr uint64_t kMappedUpTo = 16 * 1024;
}  // namespace

bool Store::Rep::VolatileCommitByMapping(uint32_t index, uint32_t target, uint64_t length) const {
  // A store into a page whose writeback has run takes a write fault (and
  // the filesystem's page_mkwrite) per 4 KiB page, whatever the folio's
  // size: a 1 MiB commit into clean pages cost 4.7x a private memcpy
  // (257 faults), by pwrite and a hash of what it stored 1.6x; into dirty,
  // writable pages both cost about 1.8x, and at 64 KiB the mapping 2.0x
  // where pwrite cost 4.0x (regionstore_clean_pages_bench, ext4, Linux
  // 6.18; docs/BENCHMARKS.md, "Commits into clean pages"). The handle
  // cannot ask the kernel whether a page is dirty; it knows what it wrote
  // and which of its own barriers cleaned it. A wrong guess costs time, not
  // safety: both paths keep the protocol's order.
  if (length <= kMappedUpTo) return true;
  switch (internal::CurrentVolatilePath()) {
    case internal::VolatilePath::kMapping:
      return true;
    case internal::VolatilePath::kPwrite:
      return false;
    case internal::VolatilePath::kAuto:
      break;
  }
  const uint64_t written = regions[index].written_at_ns[target];
  if (written == 0 || written <= cleaned_at_ns) return false;
  return io->MonotonicNanos() - written < kPagesStayDirtyNanos;
}

Status Store::Rep::MappedCommit(uint32_t index, uint32_t target, slot::Header& header,
                                PayloadPieces pieces, Durability durability) {
  const RegionEntry& region = info.regions[index];
  const uint64_t unit_offset = slot::HeaderFileOffset(region, target);
  std::byte* base = mapping->data();
  if (Status s = NoteVolatileCommit(); !s.ok()) return s;
  MarkCommitPhase(internal::kCopy);
  shared_copy::ClearHeaderMagic(base + unit_offset);
  // As a seqlock writer: no payload store may become visible before the
  // cleared magic (a reader must not see the old magic over new bytes).
  std::atomic_thread_fence(std::memory_order_release);
  // The checksum is of the bytes stored, taken in the same pass as the
  // copy; the header that carries it is stored after the copy.
  header.payload_checksum = CopyPiecesToSharedChecksummed(
      base + slot::PayloadFileOffset(region, target), pieces, header.length);
  if (ReportsProgress(header.length)) {
    ReportProgress(index, durability, header.length, header.length, 0);
  }
  return PublishMappedHeader(index, target, header, durability);
}

Status Store::Rep::PwriteCommit(uint32_t index, uint32_t target, slot::Header& header,
                                PayloadPieces pieces, Durability durability) {
  // The durable path's writes without its barrier (DurableCommit has the
  // order and why): no store into the mapping, so no write fault, whatever
  // writeback did to the slot's pages. The hash reads them back through
  // the mapping, which takes no fault where the page-table entries are
  // there, writable or not.
  if (Status s = NoteVolatileCommit(); !s.ok()) return s;
  MarkCommitPhase(internal::kCopy);
  if (Status s =
          WriteSlotPayload(index, target, header, pieces, /*start_writeback=*/false, durability);
      !s.ok()) {
    return s;
  }
  if (Status s = WriteHeaderUnit(index, target, header); !s.ok()) return s;
  return PublishVolatile(index, target, header, durability);
}

Status Store::Rep::PublishMappedHeader(uint32_t index, uint32_t target, const slot::Header& header,
                                       Durability durability) {
  const uint64_t unit_offset = slot::HeaderFileOffset(info.regions[index], target);
  shared_copy::StoreHeaderWords(mapping->data() + unit_offset, slot::EncodeHeader(header));
  return PublishVolatile(index, target, header, durability);
}

Status Store::Rep::PublishVolatile(uint32_t index, uint32_t target, const slot::Header& header,
                                   Durability durability) {
  const uint64_t unit_offset = slot::HeaderFileOffset(info.regions[index], target);
  // Only a commit above kMappedUpTo asks when its slot was written: the
  // clock stays off the small commits' path.
  if (header.length > kMappedUpTo) regions[index].written_at_ns[target] = io->MonotonicNanos();
  // Through the mapping, no system call, except for the first mapped
  // commit since a whole-file barrier: that barrier wrote the intent area's
  // folio back and write-protected it, so a store would take a write fault
  // on it (about 14 µs measured in a 1:1 mix of kNone and kPwriteFdatasync
  // commits), and this commit pwrites the commits-pending mark anyway.
  const PublishBy by = publish_next_by_pwrite ? PublishBy::kPwrite : PublishBy::kMapping;
  publish_next_by_pwrite = false;
  if (Status s = Published(by == PublishBy::kPwrite ? "commit: pwrite (publication word)"
                                                    : "commit: publication word",
                           by);
      !s.ok()) {
    return s;
  }
  if (durability != Durability::kAsync) return Status::Ok();
  MarkCommitPhase(internal::kFlush);
  return Barrier({.kind = BarrierKind::kMsyncAsync,
                  .counted_as = durability,
                  .operation = "commit: msync(MS_ASYNC)",
                  .file_offset = unit_offset,
                  .length = slot::kHeaderUnitSize + header.length});
}

namespace {
constexpr uint64_t kStartWritebackFrom = 64 * 1024;
}  // namespace

Status Store::Rep::DurableCommit(uint32_t index, uint32_t target, slot::Header& header,
                                 PayloadPieces pieces, Durability durability, bool grouped) {
  MarkCommitPhase(internal::kCopy);
  // A zero header unit, then the payload, in one call (the unit comes first
  // in the file, so a kill stops the write after it), then the header unit:
  // a kill at any point leaves the slot empty or unfinished, never a valid
  // header over a partial payload. All of it goes through the page cache the
  // mapping shares.
  const bool start_writeback =
      header.length >= kStartWritebackFrom && info.regions[index].layout == SlotLayout::kAligned;
  if (Status s = WriteSlotPayload(index, target, header, pieces, start_writeback, durability);
      !s.ok()) {
    return s;
  }
  return DurableHeaderAndBarrier(index, target, header, durability, grouped);
}

Status Store::Rep::WriteSlotPayload(uint32_t index, uint32_t target, slot::Header& header,
                                    PayloadPieces pieces, bool start_writeback,
                                    Durability durability) {
  // A payload of several writeback steps, when its writeback is started
  // early, is written step by step, each step's writeback started as the
  // next is copied: the device writes while the page cache fills, where
  // one pwritev then one sync_file_range kept them apart. 256 MiB durable
  // commits took 0.65x the time of a pwrite + fdatasync of the same bytes,
  // and steps of 1 to 32 MiB all gained, 2 MiB the most at 256 MiB
  // (regionstore_clean_pages_bench; docs/BENCHMARKS.md, "Durable commits
  // in steps").
  const bool overlap = start_writeback && header.length >= 2 * kWritebackStep;
  if (overlap || ReportsProgress(header.length)) {
    return WriteSlotPayloadInSteps(index, target, header, pieces, start_writeback,
                                   overlap ? kWritebackStep : kCommitProgressStep, durability);
  }
  const uint64_t unit_offset = slot::HeaderFileOffset(info.regions[index], target);
  if (Status s = WriteZeroUnitAndPieces(unit_offset, pieces); !s.ok()) {
    ForgetSlot(unit_offset, "commit: pwrite (publication word)");
    return FailedWrite(s, "commit: pwritev (payload)");
  }
  // From 64 KiB on, in a 64 KiB-aligned slot, the payload's writeback is
  // started first, so that the hash below (which reads what was written,
  // not the caller's buffer) overlaps the device's write instead of
  // delaying it: without it 1 MiB commits cost 4-6% more than when the
  // caller's buffer was hashed before the write, with it 4-9% less
  // (docs/history/BENCH-CHECKPOINTS-0.13.md, "Hashing what was stored"). Not the header
  // unit's: the header's pwrite would wait on a page under writeback. Not in
  // a compact slot either, whose payload starts 4 KiB into the slot: the
  // page cache's folio there can hold the header unit too, so the header's
  // pwrite waited for the payload's writeback, and 64 KiB durable commits
  // took 1.52x a raw write instead of 1.07x (commit bench section 1, three
  // alternating pairs).
  if (start_writeback) file->StartWriteback(unit_offset + slot::kHeaderUnitSize, header.length);
  header.payload_checksum = StoredPayloadChecksum(index, target, header.length);
  return Status::Ok();
}

namespace {
// Appends to `out` the parts of `pieces` that hold bytes [from, from +
// length) of their concatenation.
void SlicePieces(PayloadPieces pieces, uint64_t from, uint64_t length,
                 std::vector<std::span<const std::byte>>& out) {
  for (std::span<const std::byte> piece : pieces) {
    if (length == 0) return;
    if (from >= piece.size()) {
      from -= piece.size();
      continue;
    }
    const uint64_t take = std::min<uint64_t>(piece.size() - from, length);
    out.push_back(piece.subspan(static_cast<size_t>(from), static_cast<size_t>(take)));
    from = 0;
    length -= take;
  }
}
}  // namespace

Status Store::Rep::WriteSlotPayloadInSteps(uint32_t index, uint32_t target, slot::Header& header,
                                           PayloadPieces pieces, bool start_writeback,
                                           uint64_t write_step, Durability durability) {
  // The writes of WriteSlotPayload cut into steps, in the same order: the
  // first step carries the zeroed header unit, every later one starts where
  // the one before ended, and the header is written only after the last
  // (by the caller). A kill between steps leaves the slot unfinished, as a
  // kill inside the one pwritev does.
  static constexpr std::array<std::byte, slot::kHeaderUnitSize> kZeroUnit{};
  constexpr const char* kWord = "commit: pwrite (publication word)";
  const uint64_t unit_offset = slot::HeaderFileOffset(info.regions[index], target);
  const uint64_t payload_offset = unit_offset + slot::kHeaderUnitSize;
  const uint64_t length = header.length;
  const bool reports = ReportsProgress(length);
  const std::byte* const stored = mapping->data() + payload_offset;
  format::ChecksumStream checksum;
  std::vector<std::span<const std::byte>> parts;
  for (uint64_t at = 0; at < length;) {
    const uint64_t step = std::min(write_step, length - at);
    parts.clear();
    if (at == 0) parts.emplace_back(kZeroUnit);
    SlicePieces(pieces, at, step, parts);
    if (Status s = file->WriteGatherAt(at == 0 ? unit_offset : payload_offset + at, parts, false);
        !s.ok()) {
      ForgetSlot(unit_offset, kWord);
      return FailedWrite(s, "commit: pwritev (payload)");
    }
    // Each step's writeback starts as the next is copied.
    if (start_writeback) file->StartWriteback(payload_offset + at, step);
    // The step's hash, read back from the page cache while its writeback
    // runs and the step is still in the CPU's cache.
    checksum.Update({stored + at, static_cast<size_t>(step)});
    at += step;
    if (reports && (at % kCommitProgressStep == 0 || at == length)) {
      ReportProgress(index, durability, length, at, 0);
    }
  }
  header.payload_checksum = checksum.Digest();
  if (!reports || !IsDurable(durability)) return Status::Ok();
  // A wait for writeback reports an error the file's writeback met once,
  // to whichever call asks first: a background fdatasync in flight must
  // not be the one that misses it.
  if (Status s = FinishBackgroundSync(/*wait=*/true); !s.ok()) return s;
  for (uint64_t at = 0; at < length;) {
    const uint64_t step = std::min(kCommitProgressStep, length - at);
    if (Status s = gate.Run([&] { return file->WaitWriteback(payload_offset + at, step); });
        !s.ok()) {
      ForgetSlot(unit_offset, kWord);
      return FailedWrite(s, "commit: sync_file_range (wait for the payload's writeback)");
    }
    at += step;
    ReportProgress(index, durability, length, length, at);
  }
  return Status::Ok();
}

void Store::Rep::ReportProgress(uint32_t index, Durability durability, uint64_t length,
                                uint64_t stored, uint64_t written_back) const noexcept {
  commit_progress({.region = info.regions[index].name,
                   .durability = durability,
                   .length = length,
                   .stored = stored,
                   .written_back = written_back});
}

Status Store::Rep::WriteHeaderUnit(uint32_t index, uint32_t target, const slot::Header& header) {
  const uint64_t unit_offset = slot::HeaderFileOffset(info.regions[index], target);
  const slot::HeaderBytes header_bytes = slot::EncodeHeader(header);
  std::array<std::byte, slot::kHeaderUnitSize> unit{};
  std::memcpy(unit.data(), header_bytes.data(), header_bytes.size());
  if (Status s = file->WriteAt(unit_offset, unit); !s.ok()) {
    ForgetSlot(unit_offset, "commit: pwrite (publication word)");
    return FailedWrite(s, "commit: pwrite (slot header)");
  }
  return Status::Ok();
}

uint64_t Store::Rep::StoredPayloadChecksum(uint32_t index, uint32_t target, uint64_t length) const {
  // Read back through the mapping, which shares the page cache the pwritev
  // wrote: the checksum is of what reached the file (the caller's buffer
  // may have changed since), with no copy held. The pages are the ones just
  // written, so the reads hit the page cache.
  const std::byte* payload = mapping->data() + slot::PayloadFileOffset(info.regions[index], target);
  return format::Checksum({payload, static_cast<size_t>(length)});
}

void Store::Rep::ForgetSlot(uint64_t unit_offset, const char* operation) {
  // Its pages may hold bytes that never reach the disk (or a header over a
  // payload that is not there). Readers of several regions may have seen
  // the header: its removal is a change of what is visible (best effort:
  // the handle is poisoned next).
  (void)BeginPublishing(operation);
  shared_copy::StoreHeaderWords(mapping->data() + unit_offset, slot::HeaderBytes{});
  (void)EndPublishing(operation);
}

Status Store::Rep::DurableHeaderAndBarrier(uint32_t index, uint32_t target,
                                           const slot::Header& header, Durability durability,
                                           bool grouped) {
  const uint64_t unit_offset = slot::HeaderFileOffset(info.regions[index], target);
  constexpr const char* kWord = "commit: pwrite (publication word)";
  regions[index].written_at_ns[target] = 0;  // the barrier cleans its pages
  // A grouped commit has an intent entry of its own (WaitUntilCommittable
  // saw one free, and the mutex was held since); the others share one, as
  // they never overlap.
  grouped = grouped && holder != nullptr;
  const uint32_t entry = grouped ? TakeGroupEntry() : intent::kFirstCommitEntry;
  // Recorded before the header reaches the page cache: if the barrier fails
  // and the process dies before the header is zeroed again, the next open
  // in this boot zeroes it.
  if (Status s = SetMark(entry, {Kind::kCommitBarrier, index, target, header.generation, boot_id});
      !s.ok()) {
    if (grouped) ReleaseGroupEntry(entry);
    return FailedWrite(s, "commit: pwrite (intent mark)");
  }
  if (Status s = WriteHeaderUnit(index, target, header); !s.ok()) return s;
  if (Status s = Published(kWord); !s.ok()) return s;
  MarkCommitPhase(internal::kFlush);
  internal::ReachPoint(internal::Point::kCommitBeforeBarrier);
  // One barrier for header unit and payload, which are adjacent: msync of
  // that range (kSync: writeback and device flush of this range only), or
  // fdatasync (the whole file). A grouped commit shares an fdatasync with
  // the commits waiting beside it, or makes this very call when alone.
  const bool header_only = internal::Mutated(internal::Mutation::kBarrierHeaderOnly);
  const BarrierCall own =
      durability == Durability::kSync || header_only
          ? BarrierCall{.kind = BarrierKind::kMsyncSync,
                        .counted_as = durability,
                        .operation = "commit: msync(MS_SYNC)",
                        .file_offset = unit_offset,
                        .length = slot::kHeaderUnitSize + (header_only ? 0 : header.length)}
          : BarrierCall{.kind = BarrierKind::kFdatasync,
                        .counted_as = durability,
                        .operation = "commit: fdatasync"};
  Status barrier;
  if (grouped) {
    regions[index].in_flight = true;
    barrier = AwaitGroupBarrier(own);
    regions[index].in_flight = false;
    NotifyChange();
  } else {
    barrier = Barrier(own);
  }
  if (!barrier.ok()) {
    // The kernel may have marked the slot's pages clean though they never
    // reached the disk. The mark stays (and its entry taken) for the next
    // open.
    ForgetSlot(unit_offset, kWord);
    return barrier;
  }
  // Until the mark is gone, the next open would undo this commit: a commit
  // whose mark cannot be cleared has not returned.
  if (Status s = ClearMark(entry); !s.ok()) {
    return FailedWrite(s, "commit: pwrite (clear the intent mark)");
  }
  if (grouped) ReleaseGroupEntry(entry);
  return Status::Ok();
}

uint32_t Store::Rep::TakeGroupEntry() {
  for (uint32_t i = 0; i < kGroupCommitEntries; ++i) {
    if ((group_entries_used & (uint32_t{1} << i)) == 0) {
      group_entries_used |= uint32_t{1} << i;
      return kFirstGroupCommitEntry + i;
    }
  }
  // WaitUntilCommittable saw one free and the mutex was held since.
  std::abort();
}

void Store::Rep::ReleaseGroupEntry(uint32_t entry) {
  group_entries_used &= ~(uint32_t{1} << (entry - kFirstGroupCommitEntry));
  NotifyChange();
}

Status Store::Rep::AwaitGroupBarrier(const BarrierCall& own) {
  const uint64_t ticket = group.Enqueue();
  const auto lead = [&](bool alone) {
    if (alone) return LeadGroupBarrier(own);
    return LeadGroupBarrier({.kind = BarrierKind::kFdatasync,
                             .counted_as = own.counted_as,
                             .operation = "commit: fdatasync (shared with other commits)"});
  };
  return group.Await(
      ticket, lead, [&] { WaitFor(group_returned); },
      [&](bool followers) {
        if (followers) group_returned.notify_all();
        NotifyChange();  // the slots its cover pinned are free
      });
}

Status Store::Rep::LeadGroupBarrier(const BarrierCall& call) {
  // As a background barrier: prepared and completed with the mutex held,
  // the call made without it; the commits its cover names keep their
  // slots meanwhile (CoveredInFlight).
  BarrierTicket ticket = PrepareBarrier(call);
  Status status = ticket.prepared;
  if (status.ok()) {
    group_ticket = &ticket;
    status = Unlocked([&] { return RunBarrierCall(call); });
    group_ticket = nullptr;
  }
  return CompleteBarrier(call, ticket, std::move(status));
}

Status Store::Rep::WaitUntilCommittable(std::span<const uint32_t> indices, bool group_entry,
                                        const char* operation) {
  for (bool waited = false;; waited = true) {
    // The caller checked before; a wait may end on a poisoned handle.
    if (waited) {
      if (Status s = CheckWritable(operation); !s.ok()) return s;
    }
    bool ready = !group_entry || group_entries_used != kAllGroupEntries;
    // No other thread's commit is waiting: nothing to look at per region.
    // (A region in flight holds an intent entry until it returns.)
    if (ready && group_entries_used == 0 && group_ticket == nullptr) return Status::Ok();
    for (uint32_t index : indices) {
      if (!ready) break;
      // A slot pinned by the group's barrier in flight is freed only when
      // it returns. While it is, a slot must be free of every pin: lifting
      // the background barrier's (CommitTarget) can make the free slot its
      // region's durable one, and leave none.
      ready = !regions[index].in_flight && (group_ticket == nullptr || FreeSlot(index));
    }
    if (ready || holder == nullptr) return Status::Ok();
    ++stats.waits_for_group_commit;
    ++change_waiters;
    WaitFor(changed);
    --change_waiters;
  }
}

Status Store::Rep::WriteZeroUnitAndPieces(uint64_t unit_offset, PayloadPieces pieces) {
  static constexpr std::array<std::byte, slot::kHeaderUnitSize> kZeroUnit{};
  std::vector<std::span<const std::byte>> parts;
  parts.reserve(pieces.size() + 1);
  parts.emplace_back(kZeroUnit);
  parts.insert(parts.end(), pieces.begin(), pieces.end());
  return file->WriteGatherAt(unit_offset, parts, /*data_sync=*/false);
}

void Store::Rep::RecordCommit(uint32_t index, uint32_t target, uint64_t generation,
                              Durability durability, uint64_t bytes) {
  RegionState& state = regions[index];
  state.known_generation[target] = generation;
  state.newest = target;
  state.max_generation = generation;
  if (IsDurable(durability)) {
    state.durable = target;
    PublishDurable(index);
    ledger.RecordDurable(index);
  } else {
    // The next whole-file barrier makes this commit durable, and from then
    // on its slot must be kept like any durable one: a batch whose other
    // members still stand may count on it (PromoteCovered).
    ledger.RecordVolatile({index, target, generation});
    if (internal::Mutated(internal::Mutation::kPublishVolatileAsDurable)) {
      shared->PublishDurable(index, generation);
    }
  }
  ModeStats& counters = stats.by_mode[static_cast<size_t>(durability)];
  ++counters.commits;
  counters.bytes_committed += bytes;
}

}  // namespace regionstore
