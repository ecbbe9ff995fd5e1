// Checkpoint regions: commit, load, recovery and verification. The protocol
// and why it meets G1-G3 are in docs/CHECKPOINTS.md; the bytes in
// docs/FORMAT.md. Only the Io seam touches the OS.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <thread>

#include "format.h"
#include "regionstore/checkpoint.h"
#include "regionstore/store.h"
#include "slot.h"
#include "store_rep.h"

namespace regionstore {

namespace internal {
namespace {
std::atomic<std::atomic<uint32_t>*> g_phase_word{nullptr};
}  // namespace

void SetCommitPhaseWord(std::atomic<uint32_t>* word) { g_phase_word.store(word); }

void MarkCommitPhase(CommitPhase phase) {
  if (std::atomic<uint32_t>* word = g_phase_word.load(std::memory_order_relaxed)) {
    word->store(phase, std::memory_order_seq_cst);
  }
}
namespace {
std::atomic<Mutation> g_mutation{Mutation::kCorrect};
}  // namespace

void SetMutation(Mutation mutation) { g_mutation.store(mutation); }
Mutation CurrentMutation() { return g_mutation.load(std::memory_order_relaxed); }

}  // namespace internal

namespace {

using internal::CommitPhase;
using internal::MarkCommitPhase;

// How many times Load starts over while the writer keeps changing headers
// before it gives up with kBusy. A reader loses a race only if the writer
// finishes a commit and starts rewriting the slot being copied.
constexpr int kLoadAttempts = 64;

// Payload bytes checksummed per read when verifying with pread.
constexpr uint64_t kVerifyChunk = 1 * format::kMiB;

// Reads `out.size()` bytes at a file offset: from the mapping or by pread.
using ReadFn = std::function<Status(uint64_t offset, std::span<std::byte> out)>;

ReadFn PreadReader(File& file, const std::string& path) {
  return [&file, &path](uint64_t offset, std::span<std::byte> out) -> Status {
    auto read = file.ReadAt(offset, out);
    if (!read.ok()) return read.status().WithOperation("read checkpoint slot", path);
    if (*read != out.size()) {
      return Status::Error(StatusCode::kCorruption, "read checkpoint slot", path,
                           "the file ends inside a slot (truncated while open?)");
    }
    return Status::Ok();
  };
}

// Slot bytes in the mapping are copied while another handle may be
// rewriting them: a reader's copy is a seqlock read, validated afterwards by
// the payload checksum and a second read of the header (Load's acquire fence
// orders the copy before it; the writer's release store of the header
// orders its copy before the header). In every supported use the writer and
// a reader copy through different mappings (one per handle; a handle's
// Commit and Load never run at once), so no two threads touch one address
// and a plain memcpy is what runs. ThreadSanitizer builds copy with relaxed
// atomic words instead: the stress test's form that hands a reader the
// writer's own mapping, the only way TSan can watch a Load race a Commit,
// then checks everything else without reporting the race the protocol
// tolerates by design. Atomic word copies cost 1.5-2.6x memcpy
// (docs/HARDENING.md), too much to pay where no address is shared.
#if defined(__SANITIZE_THREAD__)
constexpr bool kAtomicSlotCopies = true;
#else
constexpr bool kAtomicSlotCopies = false;
#endif

std::byte LoadSharedByte(const std::byte* shared) {
  return std::byte{__atomic_load_n(reinterpret_cast<const uint8_t*>(shared), __ATOMIC_RELAXED)};
}

void StoreSharedByte(std::byte* shared, std::byte value) {
  __atomic_store_n(reinterpret_cast<uint8_t*>(shared), std::to_integer<uint8_t>(value),
                   __ATOMIC_RELAXED);
}

void CopyFromShared(std::byte* out, const std::byte* shared, size_t size) {
  if constexpr (!kAtomicSlotCopies) {
    if (size > 0) std::memcpy(out, shared, size);
    return;
  }
  size_t i = 0;
  for (; i < size && reinterpret_cast<uintptr_t>(shared + i) % 8 != 0; ++i) {
    out[i] = LoadSharedByte(shared + i);
  }
  for (; i + 8 <= size; i += 8) {
    const uint64_t word =
        __atomic_load_n(reinterpret_cast<const uint64_t*>(shared + i), __ATOMIC_RELAXED);
    std::memcpy(out + i, &word, 8);
  }
  for (; i < size; ++i) out[i] = LoadSharedByte(shared + i);
}

void CopyToShared(std::byte* shared, const std::byte* in, size_t size) {
  if constexpr (!kAtomicSlotCopies) {
    if (size > 0) std::memcpy(shared, in, size);
    return;
  }
  size_t i = 0;
  for (; i < size && reinterpret_cast<uintptr_t>(shared + i) % 8 != 0; ++i) {
    StoreSharedByte(shared + i, in[i]);
  }
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, in + i, 8);
    __atomic_store_n(reinterpret_cast<uint64_t*>(shared + i), word, __ATOMIC_RELAXED);
  }
  for (; i < size; ++i) StoreSharedByte(shared + i, in[i]);
}

ReadFn MappingReader(const Mapping& mapping) {
  const std::byte* base = const_cast<Mapping&>(mapping).data();
  return [base](uint64_t offset, std::span<std::byte> out) -> Status {
    CopyFromShared(out.data(), base + offset, out.size());
    return Status::Ok();
  };
}

// The header words are read and written as aligned 8-byte atomics, so a
// reader racing the writer sees each word old or new, and the generation
// it compares before and after a copy is read atomically.
slot::HeaderBytes LoadHeaderWords(const std::byte* unit) {
  slot::HeaderBytes bytes;
  for (size_t i = 0; i < bytes.size(); i += 8) {
    const uint64_t word =
        __atomic_load_n(reinterpret_cast<const uint64_t*>(unit + i), __ATOMIC_ACQUIRE);
    std::memcpy(bytes.data() + i, &word, 8);
  }
  return bytes;
}

void StoreHeaderWords(std::byte* unit, const slot::HeaderBytes& bytes) {
  for (size_t i = 0; i < bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    __atomic_store_n(reinterpret_cast<uint64_t*>(unit + i), word, __ATOMIC_RELEASE);
  }
}

// Checks a payload against its header's checksum, reading it in pieces.
Result<bool> PayloadMatches(const ReadFn& read, uint64_t offset, const slot::Header& header) {
  if (internal::CurrentMutation() == internal::Mutation::kSkipPayloadCheck) return true;
  slot::ChecksumStream checksum;
  std::vector<std::byte> chunk(std::min(kVerifyChunk, std::max<uint64_t>(header.length, 1)));
  for (uint64_t done = 0; done < header.length;) {
    const uint64_t length = std::min<uint64_t>(chunk.size(), header.length - done);
    if (Status s = read(offset + done, std::span(chunk).first(length)); !s.ok()) return s;
    checksum.Update(std::span(chunk).first(length));
    done += length;
  }
  return checksum.Digest() == header.payload_checksum;
}

// Every slot of one region: header checks and, for a header that passes,
// the payload checksum (unless `check_payloads` is off). Then the
// region-level states (incomplete/damaged).
Result<RegionReport> ExamineRegion(const ReadFn& read, const RegionEntry& region,
                                   uint32_t region_index, bool check_payloads = true) {
  RegionReport report;
  report.name = region.name;
  report.index = region_index;
  report.capacity = region.capacity;
  bool any_invalid = false;
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    SlotReport slot_report;
    slot_report.index = i;
    slot_report.payload_checked = check_payloads;
    slot::HeaderBytes bytes;
    if (Status s = read(slot::HeaderFileOffset(region, i), bytes); !s.ok()) return s;
    const slot::DecodedHeader decoded = slot::DecodeHeader(bytes, region_index, i, region.capacity);
    if (decoded.kind == slot::DecodedHeader::Kind::kEmpty) {
      slot_report.state = SlotState::kEmpty;
    } else if (decoded.kind == slot::DecodedHeader::Kind::kInvalid) {
      slot_report.state = SlotState::kDamaged;
      slot_report.reason = decoded.reason;
    } else {
      slot_report.generation = decoded.header.generation;
      slot_report.length = decoded.header.length;
      slot_report.commit_unix_ns = decoded.header.commit_unix_ns;
      Result<bool> matches = true;
      if (check_payloads) {
        matches = PayloadMatches(read, slot::PayloadFileOffset(region, i), decoded.header);
      }
      if (!matches.ok()) return matches.status();
      if (*matches) {
        slot_report.state = SlotState::kValid;
      } else {
        slot_report.state = SlotState::kDamaged;
        slot_report.reason = "payload checksum mismatch";
      }
    }
    if (slot_report.state == SlotState::kValid &&
        (!report.has_commit || slot_report.generation > report.generation)) {
      report.has_commit = true;
      report.active_slot = i;
      report.generation = slot_report.generation;
      report.length = slot_report.length;
      report.commit_unix_ns = slot_report.commit_unix_ns;
    }
    any_invalid = any_invalid || slot_report.state == SlotState::kDamaged;
    report.slots.push_back(std::move(slot_report));
  }
  // An invalid slot beside a valid one is what an interrupted commit
  // leaves; with no valid slot at all, every commit is lost.
  if (report.has_commit) {
    for (SlotReport& s : report.slots) {
      if (s.state == SlotState::kDamaged) s.state = SlotState::kIncomplete;
    }
  }
  report.damaged = any_invalid && !report.has_commit;
  return report;
}

struct ValidHeader {
  uint32_t slot = 0;
  slot::Header header;
};

// The slots whose headers validate, newest first.
std::vector<ValidHeader> ValidHeadersNewestFirst(const std::vector<slot::HeaderBytes>& headers,
                                                 const RegionEntry& region, uint32_t region_index) {
  std::vector<ValidHeader> valid;
  for (uint32_t i = 0; i < headers.size(); ++i) {
    const slot::DecodedHeader decoded =
        slot::DecodeHeader(headers[i], region_index, i, region.capacity);
    if (decoded.kind == slot::DecodedHeader::Kind::kValid) valid.push_back({i, decoded.header});
  }
  // Newest first; equal generations (only in a crafted or damaged file) go
  // to the lower slot, as ExamineRegion reports them.
  std::sort(valid.begin(), valid.end(), [](const ValidHeader& a, const ValidHeader& b) {
    if (a.header.generation != b.header.generation) {
      return a.header.generation > b.header.generation;
    }
    return a.slot < b.slot;
  });
  return valid;
}

bool AllEmpty(const std::vector<slot::HeaderBytes>& headers) {
  return std::all_of(headers.begin(), headers.end(), [](const slot::HeaderBytes& h) {
    return std::all_of(h.begin(), h.end(), [](std::byte b) { return b == std::byte{0}; });
  });
}

Status NoCommitYet(const std::string& path, const std::string& name) {
  return Status::Error(StatusCode::kNotFound, "load", path,
                       "region '" + name + "': no commit yet");
}

Status NoValidSlot(const std::string& path, const std::string& name) {
  return Status::Error(StatusCode::kCorruption, "load", path,
                       "region '" + name +
                           "': its slots hold data but none is valid (every commit is damaged); "
                           "run `regionctl verify` for details");
}

}  // namespace

// ---------------------------------------------------------------------------

Result<uint32_t> Store::Rep::FindRegion(std::string_view name, const char* operation) const {
  for (uint32_t i = 0; i < info.regions.size(); ++i) {
    if (info.regions[i].name == name) return i;
  }
  return Status::Error(StatusCode::kNotFound, operation, path,
                       "no checkpoint region named '" + std::string(name) + "'");
}

Status Store::Rep::RecoverRegions() {
  if (info.regions.empty()) return Status::Ok();
  const ReadFn read = PreadReader(*file, path);
  const std::vector<std::byte> zero_unit(slot::kHeaderUnitSize);
  std::vector<std::byte> chunk;
  regions.assign(info.regions.size(), RegionState{});
  for (uint32_t r = 0; r < info.regions.size(); ++r) {
    const RegionEntry& region = info.regions[r];
    RegionState& state = regions[r];
    state.known_generation.assign(region.slot_count, 0);
    std::vector<slot::HeaderBytes> headers(region.slot_count);
    for (uint32_t i = 0; i < region.slot_count; ++i) {
      if (Status s = read(slot::HeaderFileOffset(region, i), headers[i]); !s.ok()) return s;
    }
    // Newest header first; the first whose payload matches is the commit.
    // Older slots not checked stay "unknown" (free targets), which is safe:
    // the protocol only needs to know the newest and the durable slot.
    uint64_t recovered_length = 0;
    for (const ValidHeader& candidate : ValidHeadersNewestFirst(headers, region, r)) {
      auto matches = PayloadMatches(read, slot::PayloadFileOffset(region, candidate.slot),
                                    candidate.header);
      if (!matches.ok()) return matches.status();
      if (*matches) {
        state.newest = candidate.slot;
        state.durable = candidate.slot;
        state.newest_generation = candidate.header.generation;
        state.known_generation[candidate.slot] = candidate.header.generation;
        recovered_length = candidate.header.length;
        break;
      }
    }

    if (internal::CurrentMutation() == internal::Mutation::kTargetFromRawGeneration) {
      for (uint32_t i = 0; i < region.slot_count; ++i) {
        const uint64_t raw = format::Load64(headers[i], slot::hdr::kGeneration);
        if (raw > state.newest_generation) {
          state.newest = state.durable = i;
          state.newest_generation = raw;
        }
      }
      continue;
    }
    // A region with data but no valid slot is damaged (or its first commit
    // was interrupted): leave the evidence for Load and verify to report,
    // and number new commits above every header that passes its checks, so
    // none of them can share or outrank a new commit's generation.
    if (!state.newest) {
      for (const ValidHeader& stale : ValidHeadersNewestFirst(headers, region, r)) {
        state.newest_generation = std::max(state.newest_generation, stale.header.generation);
      }
      continue;
    }
    // Clear every header that belongs to no valid commit and is not older
    // than the recovered one: a torn header, or one whose payload is torn (a
    // pwritev puts the header unit down first). Left in place, its commit
    // was lost but its header stays; the next commit reuses its generation,
    // and a later crash can complete its old payload from units of new
    // writes to the slot, bringing the lost commit back above the durable
    // one. Once the header is zero, no mix of later writes can recreate it.
    for (uint32_t i = 0; i < region.slot_count; ++i) {
      if (state.newest == i) continue;
      const slot::DecodedHeader decoded =
          slot::DecodeHeader(headers[i], r, i, region.capacity);
      const bool stale =
          decoded.kind == slot::DecodedHeader::Kind::kInvalid ||
          (decoded.kind == slot::DecodedHeader::Kind::kValid &&
           decoded.header.generation > state.newest_generation);
      if (!stale) continue;
      if (Status s = file->WriteAt(slot::HeaderFileOffset(region, i), zero_unit); !s.ok()) {
        return s.WithOperation("open: clear an invalid checkpoint slot header", path);
      }
    }

    // Write the recovered commit again, byte for byte: if an earlier
    // handle's barrier failed, the kernel may have marked its pages clean
    // though they never reached the disk, and the fdatasync below would then
    // skip them while we count the slot as durable.
    {
      const uint32_t slot_index = *state.newest;
      const uint64_t begin = slot::HeaderFileOffset(region, slot_index);
      const uint64_t end = slot::PayloadFileOffset(region, slot_index) + recovered_length;
      chunk.resize(std::min<uint64_t>(kVerifyChunk, end - begin));
      for (uint64_t at = begin; at < end;) {
        const std::span<std::byte> piece = std::span(chunk).first(std::min<uint64_t>(
            chunk.size(), end - at));
        if (Status s = read(at, piece); !s.ok()) return s;
        if (Status s = file->WriteAt(at, piece); !s.ok()) {
          return s.WithOperation("open: rewrite the recovered checkpoint", path);
        }
        at += piece.size();
      }
    }
  }
  // One barrier: the cleared headers and the recovered commits are on disk
  // before the first new commit, so every recovered slot is durable.
  if (Status s = file->DataSync(); !s.ok()) {
    return s.WithOperation("open: fdatasync (recovering checkpoint regions)", path);
  }
  return Status::Ok();
}

Result<uint64_t> Store::Commit(std::string_view name, std::span<const std::byte> payload,
                               Durability durability) {
  Rep& r = *rep_;
  if (Status s = r.CheckWritable("commit"); !s.ok()) return s;
  auto found = r.FindRegion(name, "commit");
  if (!found.ok()) return found.status();
  const uint32_t index = *found;
  const RegionEntry& region = r.info.regions[index];
  RegionState& state = r.regions[index];
  if (payload.size() > region.capacity) {
    return Status::Error(StatusCode::kInvalidArgument, "commit", r.path,
                         "payload of " + std::to_string(payload.size()) +
                             " bytes exceeds the capacity of region '" + region.name + "' (" +
                             std::to_string(region.capacity) + " bytes)");
  }
  if (static_cast<size_t>(durability) >= r.stats.by_mode.size()) {
    return Status::Error(StatusCode::kInvalidArgument, "commit", r.path,
                         "unknown durability mode");
  }

  // The target holds neither the newest commit (G2: a kill leaves it intact)
  // nor the newest durable one (G3: a power loss leaves it intact). Of the
  // rest, the one with the oldest known commit; unknown or invalid slots
  // count as oldest. Only validated state decides.
  std::optional<uint32_t> target;
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    if (i == state.newest || i == state.durable) continue;
    if (!target || state.known_generation[i] < state.known_generation[*target]) target = i;
  }
  if (internal::CurrentMutation() == internal::Mutation::kTwoSlotAlternation) {
    target = state.newest == 0u ? 1u : 0u;
  }
  if (state.newest_generation >= slot::kMaxGeneration) {
    return Status::Error(StatusCode::kCorruption, "commit", r.path,
                         "region '" + region.name + "': the generation counter is exhausted");
  }
  const uint64_t generation = state.newest_generation + 1;
  slot::Header header;
  header.region = index;
  header.slot = *target;
  header.generation = generation;
  header.length = payload.size();
  header.commit_unix_ns = r.io->NowUnixNanos();
  header.payload_checksum = format::Checksum(payload);
  const slot::HeaderBytes header_bytes = slot::EncodeHeader(header);
  const uint64_t unit_offset = slot::HeaderFileOffset(region, *target);
  const uint64_t payload_offset = slot::PayloadFileOffset(region, *target);

  Status outcome;
  switch (durability) {
    case Durability::kNone:
    case Durability::kAsync: {
      // Payload first, header last: until the header lands, the slot is
      // old or invalid, never new-but-torn.
      MarkCommitPhase(internal::kCopy);
      std::byte* base = r.mapping->data();
      CopyToShared(base + payload_offset, payload.data(), payload.size());
      StoreHeaderWords(base + unit_offset, header_bytes);
      if (durability == Durability::kAsync) {
        MarkCommitPhase(internal::kFlush);
        outcome = r.Timed(durability, [&] {
          return r.SyncPages(unit_offset, slot::kHeaderUnitSize + payload.size(),
                             SyncKind::kAsync, "commit: msync(MS_ASYNC)");
        });
      }
      break;
    }
    case Durability::kSync:
    case Durability::kPwriteFdatasync: {
      // Header unit and payload are adjacent: one call writes both. The
      // mapping shares the page cache, so it sees them.
      std::array<std::byte, slot::kHeaderUnitSize> unit{};
      std::memcpy(unit.data(), header_bytes.data(), header_bytes.size());
      const std::array<std::span<const std::byte>, 2> parts{std::span<const std::byte>(unit),
                                                            payload};
      if (internal::CurrentMutation() == internal::Mutation::kBarrierHeaderOnly) {
        MarkCommitPhase(internal::kCopy);
        outcome = r.file->WriteGatherAt(unit_offset, parts, /*data_sync=*/false);
        if (outcome.ok()) {
          outcome = r.Timed(durability, [&] {
            return r.SyncPages(unit_offset, slot::kHeaderUnitSize, SyncKind::kSync,
                               "commit: msync(MS_SYNC)");
          });
        }
        break;
      }
      if (durability == Durability::kSync) {
        // One pwritev2(RWF_DSYNC): the copy and the barrier of this range.
        MarkCommitPhase(internal::kFlush);
        outcome = r.Timed(durability, [&] {
          Status s = r.file->WriteGatherAt(unit_offset, parts, /*data_sync=*/true);
          return s.ok() ? s : r.Poison(s, "commit: pwritev2(RWF_DSYNC)");
        });
        break;
      }
      MarkCommitPhase(internal::kCopy);
      if (Status s = r.file->WriteGatherAt(unit_offset, parts, /*data_sync=*/false); !s.ok()) {
        ++r.stats.failed_writes;
        outcome = r.Poison(s, "commit: pwritev");
        break;
      }
      MarkCommitPhase(internal::kFlush);
      outcome = r.Timed(durability, [&] {
        Status s = r.file->DataSync();
        return s.ok() ? s : r.Poison(s, "commit: fdatasync");
      });
      break;
    }
  }
  MarkCommitPhase(internal::kIdle);
  if (!outcome.ok()) return outcome;

  state.known_generation[*target] = generation;
  state.newest = *target;
  state.newest_generation = generation;
  if (durability == Durability::kSync || durability == Durability::kPwriteFdatasync) {
    state.durable = *target;
  }
  ModeStats& counters = r.stats.by_mode[static_cast<size_t>(durability)];
  ++counters.commits;
  counters.bytes_committed += payload.size();
  return generation;
}

Result<CheckpointMeta> Store::Load(std::string_view name, std::vector<std::byte>& out) const {
  const Rep& r = *rep_;
  auto found = r.FindRegion(name, "load");
  if (!found.ok()) return found.status();
  const uint32_t index = *found;
  const RegionEntry& region = r.info.regions[index];
  const std::byte* base = r.mapping->data();

  const auto read_headers = [&] {
    std::vector<slot::HeaderBytes> headers(region.slot_count);
    for (uint32_t i = 0; i < region.slot_count; ++i) {
      headers[i] = LoadHeaderWords(base + slot::HeaderFileOffset(region, i));
    }
    return headers;
  };

  // A payload that fails its checksum while no header of the region changes
  // is damaged, or still being written by a pwritev that put the header unit
  // down first: only when two copies of it are identical is it damaged, and
  // skipped. Both are forgotten when a header changes.
  std::vector<bool> excluded(region.slot_count, false);
  std::vector<std::optional<uint64_t>> failed_copy(region.slot_count);
  int stable_without_candidate = 0;
  std::vector<slot::HeaderBytes> headers = read_headers();
  const auto forget = [&] {
    std::fill(excluded.begin(), excluded.end(), false);
    std::fill(failed_copy.begin(), failed_copy.end(), std::nullopt);
    stable_without_candidate = 0;
  };
  for (int attempt = 0; attempt < kLoadAttempts; ++attempt) {
    std::vector<ValidHeader> candidates = ValidHeadersNewestFirst(headers, region, index);
    std::erase_if(candidates, [&](const ValidHeader& c) { return excluded[c.slot]; });
    if (candidates.empty()) {
      if (AllEmpty(headers)) return NoCommitYet(r.path, region.name);
      // Headers that are all invalid or damaged: damage if it holds still,
      // else a header being written (the first commit, say). The writer's
      // own handle has no one racing it.
      std::this_thread::yield();
      std::vector<slot::HeaderBytes> after = read_headers();
      if (after == headers) {
        if (r.writable || ++stable_without_candidate >= 3) return NoValidSlot(r.path, region.name);
      } else {
        forget();
      }
      headers = std::move(after);
      continue;
    }
    const ValidHeader& newest = candidates.front();
    try {
      out.resize(newest.header.length);
    } catch (const std::bad_alloc&) {
      return Status::Error(StatusCode::kIOError, "load", r.path,
                           "region '" + region.name + "': cannot allocate " +
                               std::to_string(newest.header.length) + " bytes for the copy");
    }
    CopyFromShared(out.data(), base + slot::PayloadFileOffset(region, newest.slot), out.size());
    std::atomic_thread_fence(std::memory_order_acquire);
    const uint64_t copy_checksum = format::Checksum(out);
    const bool payload_ok =
        copy_checksum == newest.header.payload_checksum ||
        internal::CurrentMutation() == internal::Mutation::kSkipPayloadCheck;
    std::vector<slot::HeaderBytes> after = read_headers();
    if (payload_ok && after[newest.slot] == headers[newest.slot]) {
      return CheckpointMeta{newest.header.generation, newest.header.length,
                            newest.header.commit_unix_ns, newest.slot};
    }
    if (after == headers) {
      // No header changed during the copy, so the writer was not rewriting
      // this slot: it writes only a slot that is not the newest, so another
      // commit's header write would have come first.
      if (r.writable || failed_copy[newest.slot] == copy_checksum) {
        excluded[newest.slot] = true;
      } else {
        failed_copy[newest.slot] = copy_checksum;
        std::this_thread::yield();
      }
    } else {
      forget();
      std::this_thread::yield();
    }
    headers = std::move(after);
  }
  return Status::Error(StatusCode::kBusy, "load", r.path,
                       "region '" + region.name + "': the writer kept changing it during " +
                           std::to_string(kLoadAttempts) + " attempts to copy it; retry later");
}

std::vector<RegionReport> Store::List() const {
  const Rep& r = *rep_;
  const ReadFn read = MappingReader(*r.mapping);
  std::vector<RegionReport> reports;
  for (uint32_t i = 0; i < r.info.regions.size(); ++i) {
    // Reading from the mapping cannot fail.
    reports.push_back(std::move(*ExamineRegion(read, r.info.regions[i], i)));
  }
  return reports;
}

Result<RegionReport> Store::Info(std::string_view name) const {
  const Rep& r = *rep_;
  auto found = r.FindRegion(name, "info");
  if (!found.ok()) return found.status();
  return ExamineRegion(MappingReader(*r.mapping), r.info.regions[*found], *found);
}

Result<std::vector<RegionReport>> VerifyRegions(const std::string& path, Io* io) {
  VerifyOptions options;
  options.io = io;
  return VerifyRegions(path, options);
}

Result<std::vector<RegionReport>> VerifyRegions(const std::string& path,
                                                const VerifyOptions& options) {
  Io& os = options.io != nullptr ? *options.io : *Io::Default();
  auto file =
      OpenStoreFile(os, path, /*writable=*/false, SymlinkPolicyFor(options.follow_symlinks));
  if (!file.ok()) return file.status();
  auto info = ReadValidatedInfo(**file, path);
  if (!info.ok()) return info.status();
  // At most what this call reads: headers (and payloads, up to capacity) of
  // every slot, the data area. The last report says all of it.
  uint64_t total = 0;
  for (const RegionEntry& region : info->regions) {
    total += region.slot_count *
             (slot::kHeaderSize + (options.check_payloads ? region.capacity : 0));
  }
  if (options.read_data_area) total += info->data_size;
  uint64_t done = 0;
  const ReadFn pread = PreadReader(**file, path);
  const ReadFn read = [&](uint64_t offset, std::span<std::byte> out) -> Status {
    Status s = pread(offset, out);
    // Headers re-read during the payload check can push this past `total`.
    done = std::min(total, done + out.size());
    if (s.ok() && options.progress) options.progress(done, total);
    return s;
  };
  std::vector<RegionReport> reports;
  for (uint32_t i = 0; i < info->regions.size(); ++i) {
    auto report = ExamineRegion(read, info->regions[i], i, options.check_payloads);
    if (!report.ok()) return report.status();
    reports.push_back(std::move(*report));
  }
  if (options.read_data_area) {
    std::vector<std::byte> chunk(std::min<uint64_t>(kVerifyChunk, info->data_size));
    for (uint64_t offset = 0; offset < info->data_size; offset += chunk.size()) {
      const uint64_t length = std::min<uint64_t>(chunk.size(), info->data_size - offset);
      auto got = (*file)->ReadAt(info->data_offset + offset, std::span(chunk).first(length));
      if (!got.ok()) {
        return got.status().WithOperation(
            "read data area at offset " + std::to_string(offset), path);
      }
      if (*got != length) {
        return Status::Error(StatusCode::kCorruption, "read data area", path,
                             "the file ends inside the data area (truncated while open?)");
      }
      done = std::min(total, done + length);
      if (options.progress) options.progress(done, total);
    }
  }
  if (options.progress) options.progress(total, total);
  return reports;
}

}  // namespace regionstore
