// Load, List and Report: reading checkpoint regions through the mapping,
// from the writer's own handle or a read-only one in another process
// (docs/CHECKPOINTS.md, "Load").
#include <algorithm>
#include <atomic>
#include <new>
#include <optional>
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

}  // namespace

Result<CheckpointMeta> Store::Load(std::string_view name, std::vector<std::byte>& out) const {
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
  const uint32_t index = *found;
  const RegionEntry& region = r.info.regions[index];
  const std::byte* base = r.mapping->data();
  const region_check::ReadFn mapped = region_check::MappingReader(*r.mapping);
  // The watermark only rises; one read of it is at worst conservative.
  region_check::BatchContext batch = *region_check::ReadBatchContext(mapped, r.info);
  if (r.journal) batch.journal_generations = r.journal->pending_generations();
  const bool batch_ids = batch.batch_ids();

  const auto read_headers = [&] {
    std::vector<slot::HeaderBytes> headers(region.slot_count);
    for (uint32_t i = 0; i < region.slot_count; ++i) {
      headers[i] = shared_copy::LoadHeaderWords(base + slot::HeaderFileOffset(region, i));
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
  // A newer member passed over because its batch is not (or not yet) whole.
  uint64_t incomplete_batch = 0, incomplete_generation = 0;
  std::string incomplete_reason;
  std::vector<slot::HeaderBytes> headers = read_headers();
  const auto forget = [&] {
    std::fill(excluded.begin(), excluded.end(), false);
    std::fill(failed_copy.begin(), failed_copy.end(), std::nullopt);
    stable_without_candidate = 0;
    incomplete_batch = 0;
  };
  for (int attempt = 0; attempt < kLoadAttempts; ++attempt) {
    const std::vector<ValidHeader> all =
        region_check::ValidHeadersNewestFirst(headers, region, index, batch_ids);
    std::vector<ValidHeader> candidates = all;
    std::erase_if(candidates, [&](const ValidHeader& c) { return excluded[c.slot]; });
    if (candidates.empty()) {
      if (incomplete_batch != 0 && all.front().header.batch_id == incomplete_batch) {
        return Status::Error(StatusCode::kNotFound, "load", r.path,
                             "region '" + region.name +
                                 "': no complete commit: its only one (generation " +
                                 std::to_string(incomplete_generation) +
                                 ") is a member of an interrupted batch: " + incomplete_reason);
      }
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
    shared_copy::CopyFromShared(out.data(), base + slot::PayloadFileOffset(region, newest.slot),
                                out.size());
    std::atomic_thread_fence(std::memory_order_acquire);
    const uint64_t copy_checksum = format::Checksum(out);
    const bool payload_ok = copy_checksum == newest.header.payload_checksum ||
                            internal::Mutated(internal::Mutation::kSkipPayloadCheck);
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
      const auto kind = slot::DecodeHeader(headers[i], index, i, region.capacity, batch_ids).kind;
      in_transition = kind == slot::DecodedHeader::Kind::kUnfinished ||
                      kind == slot::DecodedHeader::Kind::kInvalid;
    }
    // A member of a batch above the watermark counts only once its whole
    // batch is in place; until then (a batch being written, or one a crash
    // interrupted) the region's previous commit is the one to return.
    if (payload_ok && batch_ids && newest.header.batch_id > batch.watermark &&
        after[newest.slot] == headers[newest.slot]) {
      auto verdict = region_check::BatchVerdict(mapped, batch, index, newest.slot, newest.header);
      if (!verdict->empty()) {
        excluded[newest.slot] = true;
        incomplete_batch = newest.header.batch_id;
        incomplete_generation = newest.header.generation;
        incomplete_reason = *verdict;
        headers = std::move(after);
        continue;
      }
    }
    if (payload_ok && after[newest.slot] == headers[newest.slot] &&
        (!in_transition || after == headers)) {
      CheckpointMeta meta{newest.header.generation, newest.header.length,
                          newest.header.commit_unix_ns, newest.slot};
      // Passed over a newer header whose payload does not match: say so.
      if (all.front().slot != newest.slot &&
          (incomplete_batch == 0 || all.front().header.batch_id != incomplete_batch)) {
        meta.skipped_torn_generation = all.front().header.generation;
      }
      meta.skipped_incomplete_batch = incomplete_batch;
      for (uint32_t i = 0; i < region.slot_count; ++i) {
        const auto kind = slot::DecodeHeader(headers[i], index, i, region.capacity, batch_ids).kind;
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
  const Rep& r = *rep_;
  auto found = r.FindRegion(name, "report");
  if (!found.ok()) return found.status();
  const region_check::ReadFn read = region_check::MappingReader(*r.mapping);
  const region_check::BatchContext batch = *region_check::ReadBatchContext(read, r.info);
  return region_check::ExamineRegion(read, r.info.regions[*found], *found, true, &batch);
}

}  // namespace regionstore
