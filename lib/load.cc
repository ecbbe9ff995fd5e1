// Load, List and Report: reading checkpoint regions through the mapping,
// from the writer's own handle or a read-only one in another process
// (docs/CHECKPOINTS.md, "Load").
#include <algorithm>
#include <atomic>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bytes.h"
#include "region_check.h"
#include "shared_copy.h"
#include "store_rep.h"
#include "test_hooks.h"

namespace regionstore {
namespace {

using region_check::ValidHeader;

// How many times Load starts over while the writer keeps changing headers
// before it gives up with kBusy. A reader loses a race only if the writer
// finishes a commit and starts rewriting the slot being copied.
constexpr int kLoadAttempts = 64;

// No slot holds a commit header: every header unit is empty or unfinished.
bool NoCommitHeader(const std::vector<slot::HeaderBytes>& headers) {
  return std::all_of(headers.begin(), headers.end(), [](const slot::HeaderBytes& h) {
    return internal::AllZero(std::span(h).first(sizeof slot::kMagic));
  });
}

Status NoCommitYet(const std::string& path, const std::string& name) {
  return Status::Error(StatusCode::kNotFound, "load", path, "region '" + name + "': no commit yet");
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

// One Load of one region's slots through the mapping: its attempts at a
// copy, and what they learn on the way (slots found torn, an incomplete
// batch passed over). `StoreRep` is Store::Rep: a template parameter only
// because that type is private to Store, whose LoadFromSlots is the one
// user (as SetReader in load_set.cc).
template <typename StoreRep>
class RegionReader {
 public:
  // `index` is the region's (checked). Reads the batch context once: the
  // watermark only rises, so one read of it is at worst conservative.
  RegionReader(const StoreRep& r, uint32_t index)
      : r_(r),
        index_(index),
        region_(r.info.regions[index]),
        base_(r.mapping->data()),
        mapped_(region_check::MappingReader(*r.mapping)),
        batch_(ReadBatch(r, mapped_)),
        batch_ids_(batch_.batch_ids()),
        excluded_(region_.slot_count, false),
        failed_copy_(region_.slot_count) {}

  // Up to kLoadAttempts attempts: each takes the newest valid header not
  // excluded, copies its payload into `out` and checks the copy against the
  // headers read again. Returns the first copy that holds; the failure that
  // says why the region has none; kBusy if no attempt held.
  Result<CheckpointMeta> Run(std::vector<std::byte>& out) {
    headers_ = ReadHeaders();
    for (int attempt = 0; attempt < kLoadAttempts; ++attempt) {
      const std::vector<ValidHeader> all =
          region_check::ValidHeadersNewestFirst(headers_, region_, index_, batch_ids_);
      std::vector<ValidHeader> candidates = all;
      std::erase_if(candidates, [&](const ValidHeader& c) { return excluded_[c.slot]; });
      if (candidates.empty()) {
        if (Status s = NoCandidate(all); !s.ok()) return s;
        continue;
      }
      const ValidHeader& newest = candidates.front();
      const Result<uint64_t> copy_checksum = CopyPayload(newest, out);
      if (!copy_checksum.ok()) return copy_checksum.status();
      const bool payload_ok = *copy_checksum == newest.header.payload_checksum ||
                              internal::Mutated(internal::Mutation::kSkipPayloadCheck);
      std::vector<slot::HeaderBytes> after = ReadHeaders();
      const bool in_transition = InTransition();
      if (payload_ok && PassOverIncompleteBatch(newest, after)) {
        headers_ = std::move(after);
        continue;
      }
      if (payload_ok && after[newest.slot] == headers_[newest.slot] &&
          (!in_transition || after == headers_)) {
        return Conclude(all, newest);
      }
      CopyFailed(newest, *copy_checksum, std::move(after));
    }
    return Status::Error(StatusCode::kBusy, "load", r_.path,
                         "region '" + region_.name + "': the writer kept changing it during " +
                             std::to_string(kLoadAttempts) + " attempts to copy it; retry later");
  }

 private:
  static region_check::BatchContext ReadBatch(const StoreRep& r,
                                              const region_check::ReadFn& mapped) {
    region_check::BatchContext batch = *region_check::ReadBatchContext(mapped, r.info);
    if (r.journal) batch.journal_generations = r.journal->pending_generations();
    return batch;
  }

  [[nodiscard]] std::vector<slot::HeaderBytes> ReadHeaders() const {
    std::vector<slot::HeaderBytes> headers(region_.slot_count);
    for (uint32_t i = 0; i < region_.slot_count; ++i) {
      headers[i] = shared_copy::LoadHeaderWords(base_ + slot::HeaderFileOffset(region_, i));
    }
    return headers;
  }

  // Every header changed since the slots were last judged: what was
  // learnt of them no longer holds.
  void Forget() {
    std::fill(excluded_.begin(), excluded_.end(), false);
    std::fill(failed_copy_.begin(), failed_copy_.end(), std::nullopt);
    stable_without_candidate_ = 0;
    incomplete_batch_ = 0;
  }

  // No valid header is left to copy (`all` the valid ones, excluded or
  // not). The failure that says why, or OK when the headers are all
  // invalid but changed or may still change: they are read again for the
  // next attempt.
  Status NoCandidate(const std::vector<ValidHeader>& all) {
    if (incomplete_batch_ != 0 && all.front().header.batch_id == incomplete_batch_) {
      return Status::Error(StatusCode::kNotFound, "load", r_.path,
                           "region '" + region_.name +
                               "': no complete commit: its only one (generation " +
                               std::to_string(incomplete_generation_) +
                               ") is a member of an interrupted batch: " + incomplete_reason_);
    }
    if (!all.empty()) return TornOnly(r_.path, region_.name, all.front().header.generation);
    if (NoCommitHeader(headers_)) return NoCommitYet(r_.path, region_.name);
    // Headers that are all invalid: damage if they hold still, else a
    // header being written.
    std::this_thread::yield();
    std::vector<slot::HeaderBytes> after = ReadHeaders();
    if (after == headers_) {
      if (r_.writable || ++stable_without_candidate_ >= 3) {
        return NoValidSlot(r_.path, region_.name);
      }
    } else {
      Forget();
    }
    headers_ = std::move(after);
    return Status::Ok();
  }

  // Copies the payload of `newest` into `out` and returns the copy's
  // checksum; kIOError when the copy's memory cannot be allocated.
  Result<uint64_t> CopyPayload(const ValidHeader& newest, std::vector<std::byte>& out) const {
    try {
      out.resize(newest.header.length);
    } catch (const std::bad_alloc&) {
      return Status::Error(StatusCode::kIOError, "load", r_.path,
                           "region '" + region_.name + "': cannot allocate " +
                               std::to_string(newest.header.length) + " bytes for the copy");
    }
    shared_copy::CopyFromShared(out.data(), base_ + slot::PayloadFileOffset(region_, newest.slot),
                                out.size());
    std::atomic_thread_fence(std::memory_order_acquire);
    return format::Checksum(out);
  }

  // The headers were read one slot after another. While every one of them
  // checked out or was empty, the newest commit at the first read was
  // among them (a slot is rewritten only after a newer commit completed
  // elsewhere). A slot caught mid-rewrite (unfinished or invalid) breaks
  // that: the reader may have read the slot of a newer commit before it
  // was complete and the previous newest after its own rewrite began, and
  // see only an older commit. Then the whole set must read the same twice,
  // so it held at one instant between the two reads.
  [[nodiscard]] bool InTransition() const {
    bool in_transition = false;
    for (uint32_t i = 0; i < region_.slot_count && !in_transition; ++i) {
      const auto kind =
          slot::DecodeHeader(headers_[i], index_, i, region_.capacity, batch_ids_).kind;
      in_transition = kind == slot::DecodedHeader::Kind::kUnfinished ||
                      kind == slot::DecodedHeader::Kind::kInvalid;
    }
    return in_transition;
  }

  // A member of a batch above the watermark counts only once its whole
  // batch is in place; until then (a batch being written, or one a crash
  // interrupted) the region's previous commit is the one to return.
  // Whether `newest`, its header unchanged in `after`, is such a member:
  // then its slot is excluded and its batch remembered.
  bool PassOverIncompleteBatch(const ValidHeader& newest,
                               const std::vector<slot::HeaderBytes>& after) {
    if (!batch_ids_ || newest.header.batch_id <= batch_.watermark ||
        after[newest.slot] != headers_[newest.slot]) {
      return false;
    }
    auto verdict = region_check::BatchVerdict(mapped_, batch_, index_, newest.slot, newest.header);
    if (verdict->empty()) return false;
    excluded_[newest.slot] = true;
    incomplete_batch_ = newest.header.batch_id;
    incomplete_generation_ = newest.header.generation;
    incomplete_reason_ = *verdict;
    return true;
  }

  // A copy that held: the meta of `newest`, with what was passed over on
  // the way to it among `all` (the valid headers, newest first).
  [[nodiscard]] CheckpointMeta Conclude(const std::vector<ValidHeader>& all,
                                        const ValidHeader& newest) const {
    CheckpointMeta meta{newest.header.generation, newest.header.length,
                        newest.header.commit_unix_ns, newest.slot};
    // Passed over a newer header whose payload does not match: say so.
    if (all.front().slot != newest.slot &&
        (incomplete_batch_ == 0 || all.front().header.batch_id != incomplete_batch_)) {
      meta.skipped_torn_generation = all.front().header.generation;
    }
    meta.skipped_incomplete_batch = incomplete_batch_;
    for (uint32_t i = 0; i < region_.slot_count; ++i) {
      const auto kind =
          slot::DecodeHeader(headers_[i], index_, i, region_.capacity, batch_ids_).kind;
      meta.invalid_header_slots += kind == slot::DecodedHeader::Kind::kInvalid ? 1 : 0;
    }
    return meta;
  }

  // A copy that did not hold (its checksum failed, or a header changed
  // under it), with the headers read `after` it: a slot whose copies fail
  // twice while no header changes is excluded; a change forgets it all.
  void CopyFailed(const ValidHeader& newest, uint64_t copy_checksum,
                  std::vector<slot::HeaderBytes> after) {
    if (after == headers_) {
      if (r_.writable || failed_copy_[newest.slot] == copy_checksum) {
        excluded_[newest.slot] = true;
      } else {
        failed_copy_[newest.slot] = copy_checksum;
        std::this_thread::yield();
      }
    } else {
      Forget();
      std::this_thread::yield();
    }
    headers_ = std::move(after);
  }

  const StoreRep& r_;
  const uint32_t index_;
  const RegionEntry& region_;
  const std::byte* const base_;
  const region_check::ReadFn mapped_;
  const region_check::BatchContext batch_;
  const bool batch_ids_;
  // The headers as last read, which the current attempt judges.
  std::vector<slot::HeaderBytes> headers_;
  // A payload that fails its checksum while no header of the region changes
  // is torn or damaged: the writer stores a header only after its whole
  // payload and never rewrites the newest slot. A reader in another process
  // still takes two identical copies before it skips a slot (a copy racing
  // the writer's rewrite of an older slot fails too); the writer's own
  // handle has no one racing it. Both are forgotten when a header changes.
  std::vector<bool> excluded_;
  std::vector<std::optional<uint64_t>> failed_copy_;
  int stable_without_candidate_ = 0;
  // A newer member passed over because its batch is not (or not yet) whole.
  uint64_t incomplete_batch_ = 0, incomplete_generation_ = 0;
  std::string incomplete_reason_;
};

}  // namespace

Result<CheckpointMeta> Store::Load(std::string_view name, std::vector<std::byte>& out) const {
  HandleLock lock(*rep_);
  return LoadHeld(name, out);
}

Result<CheckpointMeta> Store::LoadHeld(std::string_view name, std::vector<std::byte>& out) const {
  Result<CheckpointMeta> loaded = LoadFromSlots(name, out);
  const Rep& r = *rep_;
  if (!r.journal || !r.journal->has_pending()) return loaded;
  // A journaled batch a writer has not replayed yet: newer than anything
  // the slots hold, or than a region with none, only a torn one, or only
  // damaged headers (the replay writes the member into its slot).
  if (!loaded.ok() && loaded.status().code() != StatusCode::kNotFound &&
      loaded.status().code() != StatusCode::kTornCommit &&
      loaded.status().code() != StatusCode::kCorruption) {
    return loaded;
  }
  auto found = r.FindRegion(name, "load");
  if (!found.ok()) return loaded;
  std::vector<std::byte> newer_bytes;
  if (auto newer =
          r.journal->Newer(*found, loaded.ok() ? loaded->generation : 0, *r.mapping, newer_bytes)) {
    out = std::move(newer_bytes);
    return *newer;
  }
  return loaded;
}

Result<CheckpointMeta> Store::LoadFromSlots(std::string_view name,
                                            std::vector<std::byte>& out) const {
  const Rep& r = *rep_;
  auto found = r.FindRegion(name, "load");
  if (!found.ok()) return found.status();
  RegionReader<Rep> reader(r, *found);
  return reader.Run(out);
}

std::vector<RegionReport> Store::List() const {
  HandleLock lock(*rep_);
  const Rep& r = *rep_;
  const region_check::ReadFn read = region_check::MappingReader(*r.mapping);
  std::vector<RegionReport> reports;
  const region_check::BatchContext batch = *region_check::ReadBatchContext(read, r.info);
  for (uint32_t i = 0; i < r.info.regions.size(); ++i) {
    // Reading from the mapping cannot fail.
    reports.push_back(
        std::move(*region_check::ExamineRegion(read, r.info.regions[i], i, true, &batch)));
  }
  return reports;
}

Result<RegionReport> Store::Report(std::string_view name) const {
  HandleLock lock(*rep_);
  const Rep& r = *rep_;
  auto found = r.FindRegion(name, "report");
  if (!found.ok()) return found.status();
  const region_check::ReadFn read = region_check::MappingReader(*r.mapping);
  const region_check::BatchContext batch = *region_check::ReadBatchContext(read, r.info);
  return region_check::ExamineRegion(read, r.info.regions[*found], *found, true, &batch);
}

}  // namespace regionstore
