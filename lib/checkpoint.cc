// Checkpoint regions: commit, load, recovery and verification. The protocol
// and why it meets G1-G3 are in docs/CHECKPOINTS.md; the bytes in
// docs/FORMAT.md. Only the Io seam touches the OS.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <functional>
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

ReadFn MappingReader(const Mapping& mapping) {
  const std::byte* base = const_cast<Mapping&>(mapping).data();
  return [base](uint64_t offset, std::span<std::byte> out) -> Status {
    std::memcpy(out.data(), base + offset, out.size());
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
// the payload checksum. Then the region-level states (incomplete/damaged).
Result<RegionReport> ExamineRegion(const ReadFn& read, const RegionEntry& region,
                                   uint32_t region_index) {
  RegionReport report;
  report.name = region.name;
  report.index = region_index;
  report.capacity = region.capacity;
  bool any_invalid = false;
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    SlotReport slot_report;
    slot_report.index = i;
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
      auto matches = PayloadMatches(read, slot::PayloadFileOffset(region, i), decoded.header);
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
  std::sort(valid.begin(), valid.end(), [](const ValidHeader& a, const ValidHeader& b) {
    return a.header.generation > b.header.generation;
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
  // Whatever is valid in the page cache now (a commit of a writer killed
  // before its barrier, kNone commits) becomes durable, so the slot this
  // recovery picks is the durable one and the next commit may not touch it.
  if (Status s = file->DataSync(); !s.ok()) {
    return s.WithOperation("open: fdatasync (recovering checkpoint regions)", path);
  }
  const ReadFn read = PreadReader(*file, path);
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
    // Slots not checked stay "unknown" (free targets), which is safe: the
    // protocol only needs to know the newest and the durable slot.
    for (const ValidHeader& candidate : ValidHeadersNewestFirst(headers, region, r)) {
      auto matches = PayloadMatches(read, slot::PayloadFileOffset(region, candidate.slot),
                                    candidate.header);
      if (!matches.ok()) return matches.status();
      if (*matches) {
        state.newest = candidate.slot;
        state.durable = candidate.slot;
        state.newest_generation = candidate.header.generation;
        state.known_generation[candidate.slot] = candidate.header.generation;
        break;
      }
    }
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
      if (!payload.empty()) std::memcpy(base + payload_offset, payload.data(), payload.size());
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

  // Slots whose payload failed while no header of the region changed: real
  // damage, not a race with the writer. Forgotten when the headers change.
  std::vector<bool> excluded(region.slot_count, false);
  std::vector<slot::HeaderBytes> headers = read_headers();
  for (int attempt = 0; attempt < kLoadAttempts; ++attempt) {
    std::vector<ValidHeader> candidates = ValidHeadersNewestFirst(headers, region, index);
    std::erase_if(candidates, [&](const ValidHeader& c) { return excluded[c.slot]; });
    if (candidates.empty()) {
      if (AllEmpty(headers)) return NoCommitYet(r.path, region.name);
      return NoValidSlot(r.path, region.name);
    }
    const ValidHeader& newest = candidates.front();
    out.resize(newest.header.length);
    if (!out.empty()) {
      std::memcpy(out.data(), base + slot::PayloadFileOffset(region, newest.slot), out.size());
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    const bool payload_ok =
        format::Checksum(out) == newest.header.payload_checksum ||
        internal::CurrentMutation() == internal::Mutation::kSkipPayloadCheck;
    std::vector<slot::HeaderBytes> after = read_headers();
    if (payload_ok && after[newest.slot] == headers[newest.slot]) {
      return CheckpointMeta{newest.header.generation, newest.header.length,
                            newest.header.commit_unix_ns, newest.slot};
    }
    if (after == headers) {
      // No header changed during the copy, so the writer was not rewriting
      // this slot (it writes only a slot that is not the newest, so another
      // commit's header write would come first): the payload itself is bad,
      // or the writer's header is ahead of its payload (pwritev writes the
      // header unit first). Either way, try the next newest.
      excluded[newest.slot] = true;
    } else {
      std::fill(excluded.begin(), excluded.end(), false);
      std::this_thread::yield();
    }
    headers = std::move(after);
  }
  return Status::Error(StatusCode::kBusy, "load", r.path,
                       "region '" + region.name + "': the writer replaced the slot being read " +
                           std::to_string(kLoadAttempts) + " times in a row; retry later");
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
  Io& os = io != nullptr ? *io : *Io::Default();
  auto file = OpenStoreFile(os, path, /*writable=*/false);
  if (!file.ok()) return file.status();
  auto info = ReadValidatedInfo(**file, path);
  if (!info.ok()) return info.status();
  const ReadFn read = PreadReader(**file, path);
  std::vector<RegionReport> reports;
  for (uint32_t i = 0; i < info->regions.size(); ++i) {
    auto report = ExamineRegion(read, info->regions[i], i);
    if (!report.ok()) return report.status();
    reports.push_back(std::move(*report));
  }
  return reports;
}

}  // namespace regionstore
