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

// Writers store a header magic last: ClearHeaderMagic first, then the
// payload, then StoreHeaderWords, whose last store is the magic word. A kill
// anywhere in between leaves the slot's magic zero (an unfinished header,
// which holds no commit), never an old header over a new partial payload
// nor a half-written header that looks like damage.
void StoreHeaderWords(std::byte* unit, const slot::HeaderBytes& bytes) {
  for (size_t i = bytes.size(); i > 0; i -= 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i - 8, 8);
    __atomic_store_n(reinterpret_cast<uint64_t*>(unit + i - 8), word, __ATOMIC_RELEASE);
  }
}

void ClearHeaderMagic(std::byte* unit) {
  __atomic_store_n(reinterpret_cast<uint64_t*>(unit + slot::hdr::kMagic), uint64_t{0},
                   __ATOMIC_RELEASE);
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
// region-level states: the newest header that checks out decides between
// a commit, a torn commit and damage.
Result<RegionReport> ExamineRegion(const ReadFn& read, const RegionEntry& region,
                                   uint32_t region_index, bool check_payloads = true) {
  RegionReport report;
  report.name = region.name;
  report.index = region_index;
  report.capacity = region.capacity;
  report.payload_checked = check_payloads;
  // Payload verdict per slot whose header checks out.
  std::vector<std::optional<bool>> payload_ok(region.slot_count);
  std::optional<uint32_t> newest_header;  // highest generation; ties to the lower slot
  bool any_invalid = false;
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    SlotReport slot_report;
    slot_report.index = i;
    slot_report.payload_checked = check_payloads;
    slot::HeaderBytes bytes;
    if (Status s = read(slot::HeaderFileOffset(region, i), bytes); !s.ok()) return s;
    const slot::DecodedHeader decoded = slot::DecodeHeader(bytes, region_index, i, region.capacity);
    switch (decoded.kind) {
      case slot::DecodedHeader::Kind::kEmpty:
        slot_report.state = SlotState::kEmpty;
        break;
      case slot::DecodedHeader::Kind::kUnfinished:
        slot_report.state = SlotState::kEmpty;
        slot_report.reason = decoded.reason;
        break;
      case slot::DecodedHeader::Kind::kInvalid:
        slot_report.state = SlotState::kDamaged;
        slot_report.reason = decoded.reason;
        any_invalid = true;
        break;
      case slot::DecodedHeader::Kind::kValid: {
        slot_report.generation = decoded.header.generation;
        slot_report.length = decoded.header.length;
        slot_report.commit_unix_ns = decoded.header.commit_unix_ns;
        Result<bool> matches = true;
        if (check_payloads) {
          matches = PayloadMatches(read, slot::PayloadFileOffset(region, i), decoded.header);
        }
        if (!matches.ok()) return matches.status();
        payload_ok[i] = *matches;
        slot_report.state = *matches ? SlotState::kValid : SlotState::kIncomplete;
        if (!*matches) slot_report.reason = "payload checksum mismatch";
        if (!newest_header || decoded.header.generation > report.slots[*newest_header].generation) {
          newest_header = i;
        }
        break;
      }
    }
    report.slots.push_back(std::move(slot_report));
  }
  if (newest_header && payload_ok[*newest_header] == false) {
    report.torn = true;
    report.torn_slot = *newest_header;
    report.torn_generation = report.slots[*newest_header].generation;
    report.slots[*newest_header].state = SlotState::kTorn;
    report.slots[*newest_header].reason =
        "payload checksum mismatch in the newest header: a power loss interrupted this commit, "
        "or it was damaged after it returned";
  }
  for (const SlotReport& s : report.slots) {
    if (s.state == SlotState::kValid && (!report.has_commit || s.generation > report.generation)) {
      report.has_commit = true;
      report.active_slot = s.index;
      report.generation = s.generation;
      report.length = s.length;
      report.commit_unix_ns = s.commit_unix_ns;
    }
  }
  // Invalid headers beside one that checks out: after a power loss, the
  // trace of an interrupted commit; with none that checks out, every commit
  // is lost.
  if (newest_header) {
    for (SlotReport& s : report.slots) {
      if (s.state == SlotState::kDamaged) s.state = SlotState::kIncomplete;
    }
  }
  report.damaged = any_invalid && !newest_header;
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

// No slot holds a commit header: every header unit is empty or unfinished.
bool NoCommitHeader(const std::vector<slot::HeaderBytes>& headers) {
  return std::all_of(headers.begin(), headers.end(), [](const slot::HeaderBytes& h) {
    return std::all_of(h.begin(), h.begin() + sizeof slot::kMagic,
                       [](std::byte b) { return b == std::byte{0}; });
  });
}

Status NoCommitYet(const std::string& path, const std::string& name) {
  return Status::Error(StatusCode::kNotFound, "load", path,
                       "region '" + name + "': no commit yet");
}

Status NoValidSlot(const std::string& path, const std::string& name) {
  return Status::Error(StatusCode::kCorruption, "load", path,
                       "region '" + name +
                           "': its slots hold data but none is valid (no slot header passes its "
                           "checks: every commit is damaged); run `regionctl verify` for details");
}

Status TornOnly(const std::string& path, const std::string& name, uint64_t generation) {
  return Status::Error(StatusCode::kTornCommit, "load", path,
                       "region '" + name + "': its newest commit (generation " +
                           std::to_string(generation) +
                           ") has an intact header but its payload does not match: a power loss "
                           "interrupted that commit, or it was damaged after it returned; no "
                           "older commit of the region is intact");
}

using intent::Kind;

}  // namespace

// ---------------------------------------------------------------------------
// Intent marks and barriers

Status Store::Rep::SetMark(uint32_t entry, const intent::Entry& mark) {
  if (!intent_offset) return Status::Ok();
  // By pwrite, not through the mapping: on Linux 6.x ext4 a store through
  // the mapping dirties its whole page-cache folio (2 MiB measured), and the
  // next fdatasync writes all of it back (docs/BENCH-CHECKPOINTS.md).
  const intent::EntryBytes bytes = intent::EncodeEntry(mark);
  return file->WriteAt(*intent_offset + uint64_t{entry} * intent::kEntrySize, bytes);
}

Status Store::Rep::ClearMark(uint32_t entry) {
  if (!intent_offset) return Status::Ok();
  static constexpr intent::EntryBytes kFree{};
  return file->WriteAt(*intent_offset + uint64_t{entry} * intent::kEntrySize, kFree);
}

Status Store::Rep::NoteVolatileCommit() {
  if (volatile_pending) return Status::Ok();
  if (Status s = SetMark(intent::kVolatileEntry, {Kind::kVolatilePending, 0, 0, 0, boot_id});
      !s.ok()) {
    ++stats.failed_writes;
    return Poison(s, "commit: pwrite (intent mark)");
  }
  volatile_pending = true;
  return Status::Ok();
}

Status Store::Rep::FileBarrier(Durability mode, const char* operation) {
  return Timed(mode, [&] {
    Status s = MarkedBarrier(/*whole_file=*/true, [&] { return file->DataSync(); });
    return s.ok() ? s : Poison(s, operation);
  });
}

// ---------------------------------------------------------------------------
// Recovery

Result<uint32_t> Store::Rep::FindRegion(std::string_view name, const char* operation) const {
  const auto at = std::lower_bound(by_name.begin(), by_name.end(), name,
                                   [&](uint32_t index, std::string_view wanted) {
                                     return info.regions[index].name < wanted;
                                   });
  if (at != by_name.end() && info.regions[*at].name == name) return *at;
  return Status::Error(StatusCode::kNotFound, operation, path,
                       "no checkpoint region named '" + std::string(name) + "'");
}

Status Store::Rep::RecoverOnOpen() {
  // Without checkpoint regions no promise rests on what earlier handles
  // left: raw writes keep only what their own mode promised. No barrier.
  if (info.regions.empty()) return Status::Ok();
  regions.assign(info.regions.size(), RegionState{});
  for (uint32_t r = 0; r < info.regions.size(); ++r) {
    regions[r].known_generation.assign(info.regions[r].slot_count, 0);
  }
  intent_offset = intent::AreaOffset(info);
  if (!intent_offset) return RecoverEveryRegion();
  auto boot = io->BootId();
  if (boot.ok()) boot_id = *boot;
  const ReadFn read = PreadReader(*file, path);
  std::vector<std::byte> area(intent::kAreaSize);
  if (Status s = read(*intent_offset, area); !s.ok()) {
    return s.WithOperation("open: read the intent area", path);
  }
  std::vector<intent::Entry> marks;
  std::vector<uint32_t> mark_entries;
  bool unknown_boot = false;
  const bool ignore_marks = internal::CurrentMutation() == internal::Mutation::kIgnoreIntentMarks;
  for (uint32_t e = 0; e < intent::kEntryCount && !ignore_marks; ++e) {
    const auto mark = intent::DecodeEntry(std::span(area).subspan(e * intent::kEntrySize));
    // A mark from another boot says nothing about today's page cache: it
    // was filled from the disk since. (And the mark may be a durable copy of
    // one whose clearing never reached the disk: zeroing its commit then
    // would lose a commit that returned.)
    // A mark made where no boot id could be read (all zero), or read where
    // none can be, cannot be told from a stale one.
    if (mark && (!boot.ok() || mark->boot_id == boot_id || mark->boot_id == intent::BootId{})) {
      if (!boot.ok() || mark->boot_id == intent::BootId{}) unknown_boot = true;
      marks.push_back(*mark);
      mark_entries.push_back(e);
    }
  }
  // Such a mark: zero nothing, and write every region's newest commit again
  // instead, which covers a failed barrier of any earlier handle.
  if (unknown_boot) return RecoverEveryRegion();
  bool file_barrier = false;
  bool must_mark = false;
  const std::vector<std::byte> zero_unit(slot::kHeaderUnitSize);
  for (const intent::Entry& mark : marks) {
    if (mark.kind == Kind::kFileBarrier) file_barrier = true;
    // Commits an earlier handle left without a barrier: this open's
    // fdatasync makes them durable, and runs as a file barrier for that.
    if (mark.kind == Kind::kVolatilePending) volatile_pending = true;
    if (mark.kind != Kind::kCommitBarrier) continue;
    // The barrier of this commit did not return: it may have failed,
    // leaving pages the kernel marked clean but never wrote, and the
    // fdatasync below would skip them. The commit was in flight, so losing
    // it is allowed; counting it durable is not.
    // Even where the header already reads zero (the failing handle zeroed
    // it), that zero may be clean in the cache and missing on disk: the
    // fdatasync below must make it durable, marked, before the generation
    // can be issued again.
    must_mark = true;
    if (mark.region >= info.regions.size()) continue;
    const RegionEntry& region = info.regions[mark.region];
    if (mark.slot >= region.slot_count) continue;
    slot::HeaderBytes bytes;
    const uint64_t unit = slot::HeaderFileOffset(region, mark.slot);
    if (Status s = read(unit, bytes); !s.ok()) return s;
    const slot::DecodedHeader decoded =
        slot::DecodeHeader(bytes, mark.region, mark.slot, region.capacity);
    if (decoded.kind != slot::DecodedHeader::Kind::kValid ||
        decoded.header.generation != mark.generation) {
      continue;
    }
    if (Status s = file->WriteAt(unit, zero_unit); !s.ok()) {
      return s.WithOperation("open: clear the header of a commit whose barrier did not return",
                             path);
    }
  }
  // Each mark is acted on once: left in place, it would match the next
  // commit that gets the same generation in the same slot (a lost commit's
  // generation is issued again) and undo it at a later open.
  for (size_t i = 0; i < marks.size(); ++i) {
    if (marks[i].kind != Kind::kCommitBarrier) continue;
    if (Status s = ClearMark(mark_entries[i]); !s.ok()) {
      return s.WithOperation("open: clear an intent mark", path);
    }
  }
  // A whole-file barrier was running while commits without a barrier were
  // pending: if it failed, any of their pages may be clean in the cache and
  // missing on disk, and nothing says which. Write every region's newest
  // commit again, so the fdatasync covers it.
  if (file_barrier) return RecoverEveryRegion();
  // Whatever earlier handles left in the page cache becomes durable here.
  // If this fails, the kernel may have marked some of it clean unwritten and
  // will not say so again; when that matters (commits an earlier handle left
  // without a barrier, a commit mark's zeroed header), the file-barrier mark
  // is down before the call, for the next open to see.
  Status synced = MarkedBarrier(/*whole_file=*/true, [&] { return file->DataSync(); }, must_mark);
  if (!synced.ok()) return synced.WithOperation("open: fdatasync", path);
  return Status::Ok();
}

Status Store::Rep::RecoverEveryRegion() {
  for (uint32_t r = 0; r < info.regions.size(); ++r) {
    if (Status s = SettleRegion(r, /*rewrite=*/true); !s.ok()) return s;
  }
  // One barrier: the cleared headers and the rewritten commits are on disk
  // before the first new commit, so every settled slot is durable.
  if (Status s = file->DataSync(); !s.ok()) {
    return s.WithOperation("open: fdatasync (recovering checkpoint regions)", path);
  }
  // Every mark is moot now.
  if (intent_offset) {
    const std::vector<std::byte> zero_area(intent::kAreaSize);
    if (Status s = file->WriteAt(*intent_offset, zero_area); !s.ok()) {
      return s.WithOperation("open: clear the intent area", path);
    }
  }
  volatile_pending = false;
  return Status::Ok();
}

Status Store::Rep::SettleRegion(uint32_t index, bool rewrite) {
  RegionState& state = regions[index];
  if (state.settled) return Status::Ok();
  const RegionEntry& region = info.regions[index];
  const ReadFn read = PreadReader(*file, path);
  std::vector<slot::HeaderBytes> headers(region.slot_count);
  std::vector<slot::DecodedHeader> decoded(region.slot_count);
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    if (Status s = read(slot::HeaderFileOffset(region, i), headers[i]); !s.ok()) return s;
    decoded[i] = slot::DecodeHeader(headers[i], index, i, region.capacity);
    if (decoded[i].kind == slot::DecodedHeader::Kind::kValid) {
      state.max_generation = std::max(state.max_generation, decoded[i].header.generation);
      // Only to rank free targets (an older commit goes after empty slots,
      // oldest first); newest and durable come from checked payloads below.
      state.known_generation[i] = decoded[i].header.generation;
    }
  }
  if (internal::CurrentMutation() == internal::Mutation::kTargetFromRawGeneration) {
    uint64_t highest = 0;
    for (uint32_t i = 0; i < region.slot_count; ++i) {
      const uint64_t raw = format::Load64(headers[i], slot::hdr::kGeneration);
      if (raw > highest && raw <= slot::kMaxGeneration) {
        state.newest = state.durable = i;
        highest = raw;
      }
    }
    state.max_generation = std::max(state.max_generation, highest);
    state.settled = true;
    return Status::Ok();
  }
  // Newest header first; the first whose payload matches is the commit.
  // Older slots are not checked: the protocol only needs to know the newest
  // and the durable slot, and every other slot is a free target.
  uint64_t recovered_generation = 0;
  uint64_t recovered_length = 0;
  for (const ValidHeader& candidate : ValidHeadersNewestFirst(headers, region, index)) {
    Result<bool> matches = true;
    if (internal::CurrentMutation() != internal::Mutation::kSettleTrustsHeader) {
      matches =
          PayloadMatches(read, slot::PayloadFileOffset(region, candidate.slot), candidate.header);
    }
    if (!matches.ok()) return matches.status();
    if (*matches) {
      state.newest = state.durable = candidate.slot;
      state.known_generation[candidate.slot] = candidate.header.generation;
      recovered_generation = candidate.header.generation;
      recovered_length = candidate.header.length;
      break;
    }
  }
  // Zero every header that holds no commit this settle trusts and is not an
  // older commit: an invalid one, an unfinished one, or one newer than the
  // recovered commit (a torn commit, or damage). Left in place, a later
  // crash while its slot is written again could complete it from units of
  // the new writes (applications commit mostly the same bytes) and bring a
  // lost commit back. Zeroed and synced before anything is written here, no
  // mix of later writes can recreate it.
  const std::vector<std::byte> zero_unit(slot::kHeaderUnitSize);
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    if (state.newest == i || decoded[i].kind == slot::DecodedHeader::Kind::kEmpty) continue;
    if (decoded[i].kind == slot::DecodedHeader::Kind::kValid &&
        decoded[i].header.generation <= recovered_generation) {
      continue;
    }
    const uint64_t unit = slot::HeaderFileOffset(region, i);
    state.known_generation[i] = 0;
    if (Status s = file->WriteAt(unit, zero_unit); !s.ok()) {
      ++stats.failed_writes;
      return Poison(s, rewrite ? "open: clear a checkpoint slot header no commit owns"
                               : "commit: clear a checkpoint slot header no commit owns");
    }
    // A whole-file barrier follows the rewrite below.
    if (rewrite) continue;
    // Marked whatever else is pending: if this fails, the zero unit may be
    // clean in the cache and missing on disk, and the next open must write
    // every header unit again.
    Status synced = MarkedBarrier(
        /*whole_file=*/false,
        [&] {
          return SyncPages(unit, slot::kHeaderUnitSize, SyncKind::kSync,
                           "commit: msync(MS_SYNC) of a cleared slot header");
        },
        /*always_mark=*/true);
    if (!synced.ok()) return synced;
  }
  // Write every header unit and the recovered commit again, byte for byte,
  // for the whole-file barrier that follows: an earlier handle's failed
  // barrier may have left their pages clean in the cache but missing on disk
  // (a commit, or a header it zeroed), and the barrier skips clean pages.
  if (rewrite) {
    std::vector<std::byte> unit_bytes(slot::kHeaderUnitSize);
    for (uint32_t i = 0; i < region.slot_count; ++i) {
      if (state.newest == i) continue;  // with its payload, below
      const uint64_t unit = slot::HeaderFileOffset(region, i);
      if (Status s = read(unit, unit_bytes); !s.ok()) return s;
      if (Status s = file->WriteAt(unit, unit_bytes); !s.ok()) {
        return s.WithOperation("open: rewrite a checkpoint slot header", path);
      }
    }
  }
  if (rewrite && state.newest) {
    const uint64_t begin = slot::HeaderFileOffset(region, *state.newest);
    const uint64_t end = slot::PayloadFileOffset(region, *state.newest) + recovered_length;
    std::vector<std::byte> chunk(std::min<uint64_t>(kVerifyChunk, end - begin));
    for (uint64_t at = begin; at < end;) {
      const std::span<std::byte> piece =
          std::span(chunk).first(std::min<uint64_t>(chunk.size(), end - at));
      if (Status s = read(at, piece); !s.ok()) return s;
      if (Status s = file->WriteAt(at, piece); !s.ok()) {
        return s.WithOperation("open: rewrite the recovered checkpoint", path);
      }
      at += piece.size();
    }
  }
  state.settled = true;
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Commit

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
  if (Status s = r.SettleRegion(index, /*rewrite=*/false); !s.ok()) return s;

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
  if (state.max_generation >= slot::kMaxGeneration) {
    return Status::Error(StatusCode::kCorruption, "commit", r.path,
                         "region '" + region.name + "': the generation counter is exhausted");
  }
  const uint64_t generation = state.max_generation + 1;
  slot::Header header;
  header.region = index;
  header.slot = *target;
  header.generation = generation;
  header.length = payload.size();
  header.commit_unix_ns = r.io->NowUnixNanos();
  const uint64_t unit_offset = slot::HeaderFileOffset(region, *target);
  const uint64_t payload_offset = slot::PayloadFileOffset(region, *target);
  std::byte* base = r.mapping->data();

  // From here the target's old content is gone: a failure below may leave
  // the slot unfinished or empty, never another commit's header.
  Status outcome;
  switch (durability) {
    case Durability::kNone:
    case Durability::kAsync: {
      if (Status s = r.NoteVolatileCommit(); !s.ok()) return s;
      MarkCommitPhase(internal::kCopy);
      header.payload_checksum = format::Checksum(payload);
      ClearHeaderMagic(base + unit_offset);
      // As a seqlock writer: no payload store may become visible before the
      // cleared magic (a reader must not see the old magic over new bytes).
      std::atomic_thread_fence(std::memory_order_release);
      CopyToShared(base + payload_offset, payload.data(), payload.size());
      StoreHeaderWords(base + unit_offset, slot::EncodeHeader(header));
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
    case Durability::kPwriteFdatasync:
      outcome = r.DurableCommit(index, *target, header, payload, durability);
      break;
  }
  MarkCommitPhase(internal::kIdle);
  if (!outcome.ok()) return outcome;

  state.known_generation[*target] = generation;
  state.newest = *target;
  state.max_generation = generation;
  if (durability == Durability::kSync || durability == Durability::kPwriteFdatasync) {
    state.durable = *target;
  }
  ModeStats& counters = r.stats.by_mode[static_cast<size_t>(durability)];
  ++counters.commits;
  counters.bytes_committed += payload.size();
  return generation;
}

Status Store::Rep::DurableCommit(uint32_t index, uint32_t target, slot::Header& header,
                                 std::span<const std::byte> payload, Durability durability) {
  const RegionEntry& region = info.regions[index];
  const uint64_t unit_offset = slot::HeaderFileOffset(region, target);
  const auto failed_write = [&](const Status& s, const char* operation) {
    ++stats.failed_writes;
    return Poison(s, operation);
  };
  // Zero the header unit once a write failed: its pages may hold bytes that
  // never reach the disk (or a header over a payload that is not there), and
  // no later reader or open may take them for a commit. Through the mapping,
  // which cannot fail.
  const auto forget_slot = [&] {
    StoreHeaderWords(mapping->data() + unit_offset, slot::HeaderBytes{});
  };
  MarkCommitPhase(internal::kCopy);
  // A zero header unit, then the payload, in one call (the unit comes first
  // in the file, so a kill stops the write after it), then the header unit:
  // a kill at any point leaves the slot empty or unfinished, never a valid
  // header over a partial payload. All of it goes through the page cache the
  // mapping shares.
  static constexpr std::array<std::byte, slot::kHeaderUnitSize> kZeroUnit{};
  const std::array<std::span<const std::byte>, 2> parts{std::span<const std::byte>(kZeroUnit),
                                                        payload};
  if (Status s = file->WriteGatherAt(unit_offset, parts, /*data_sync=*/false); !s.ok()) {
    forget_slot();
    return failed_write(s, "commit: pwritev (payload)");
  }
  header.payload_checksum = format::Checksum(payload);
  const slot::HeaderBytes header_bytes = slot::EncodeHeader(header);
  std::array<std::byte, slot::kHeaderUnitSize> unit{};
  std::memcpy(unit.data(), header_bytes.data(), header_bytes.size());
  // Recorded before the header reaches the page cache: if the barrier fails
  // and the process dies before the header is zeroed again, the next open
  // in this boot zeroes it.
  if (Status s = SetMark(intent::kFirstCommitEntry,
                         {Kind::kCommitBarrier, index, target, header.generation, boot_id});
      !s.ok()) {
    return failed_write(s, "commit: pwrite (intent mark)");
  }
  if (Status s = file->WriteAt(unit_offset, unit); !s.ok()) {
    forget_slot();
    return failed_write(s, "commit: pwrite (slot header)");
  }
  MarkCommitPhase(internal::kFlush);
  // One barrier for header unit and payload, which are adjacent: msync of
  // that range (kSync: writeback and device flush of this range only), or
  // fdatasync (the whole file).
  uint64_t synced_length = slot::kHeaderUnitSize + payload.size();
  if (internal::CurrentMutation() == internal::Mutation::kBarrierHeaderOnly) {
    synced_length = slot::kHeaderUnitSize;
  }
  Status barrier;
  if (durability == Durability::kSync ||
      internal::CurrentMutation() == internal::Mutation::kBarrierHeaderOnly) {
    barrier = Timed(durability, [&] {
      return MarkedBarrier(/*whole_file=*/false, [&] {
        return SyncPages(unit_offset, synced_length, SyncKind::kSync, "commit: msync(MS_SYNC)");
      });
    });
  } else {
    barrier = FileBarrier(durability, "commit: fdatasync");
  }
  if (!barrier.ok()) {
    // The kernel may have marked the slot's pages clean though they never
    // reached the disk.
    forget_slot();
    return barrier;
  }
  // Until the mark is gone, the next open would undo this commit: a commit
  // whose mark cannot be cleared has not returned.
  if (Status s = ClearMark(intent::kFirstCommitEntry); !s.ok()) {
    return failed_write(s, "commit: pwrite (clear the intent mark)");
  }
  return Status::Ok();
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
  // is torn or damaged: the writer stores a header only after its whole
  // payload and never rewrites the newest slot. A reader in another process
  // still takes two identical copies before it skips a slot (a copy racing
  // the writer's rewrite of an older slot fails too); the writer's own
  // handle has no one racing it. Both are forgotten when a header changes.
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
    const std::vector<ValidHeader> all = ValidHeadersNewestFirst(headers, region, index);
    std::vector<ValidHeader> candidates = all;
    std::erase_if(candidates, [&](const ValidHeader& c) { return excluded[c.slot]; });
    if (candidates.empty()) {
      if (!all.empty()) return TornOnly(r.path, region.name, all.front().header.generation);
      if (NoCommitHeader(headers)) return NoCommitYet(r.path, region.name);
      // Headers that are all invalid: damage if they hold still, else a
      // header being written.
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
    // The headers were read one slot after another. While every one of them
    // checked out or was empty, the newest commit at the first read was
    // among them (a slot is rewritten only after a newer commit completed
    // elsewhere). A slot caught mid-rewrite (unfinished or invalid) breaks
    // that: the reader may have read the slot of a newer commit before it
    // was complete and the previous newest after its own rewrite began, and
    // see only an older commit. Then the whole set must read the same twice,
    // so it held at one instant between the two reads.
    bool in_transition = false;
    for (uint32_t i = 0; i < region.slot_count && !in_transition; ++i) {
      const auto kind = slot::DecodeHeader(headers[i], index, i, region.capacity).kind;
      in_transition = kind == slot::DecodedHeader::Kind::kUnfinished ||
                      kind == slot::DecodedHeader::Kind::kInvalid;
    }
    if (payload_ok && after[newest.slot] == headers[newest.slot] &&
        (!in_transition || after == headers)) {
      CheckpointMeta meta{newest.header.generation, newest.header.length,
                          newest.header.commit_unix_ns, newest.slot};
      // Passed over a newer header whose payload does not match: say so.
      if (all.front().slot != newest.slot) {
        meta.skipped_torn_generation = all.front().header.generation;
      }
      for (uint32_t i = 0; i < region.slot_count; ++i) {
        const auto kind = slot::DecodeHeader(headers[i], index, i, region.capacity).kind;
        meta.invalid_header_slots += kind == slot::DecodedHeader::Kind::kInvalid ? 1 : 0;
      }
      return meta;
    }
    if (after == headers) {
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
