// LoadSet: several regions as one consistent set, from the writer's handle
// or a read-only one in another process (docs/CHECKPOINTS.md, "Consistent
// loads").
//
// A read-only handle takes a snapshot of every header the decision needs
// (the regions' slot headers, the batch records and partners their members
// name, the watermark) between two reads of the publication word
// (intent.h). The writer changes that word around every change of a visible
// commit: when both reads give the same bytes and an even P, no visible
// commit changed in between, so the snapshot names the commits every region
// held at one instant. Then each chosen slot is copied and its header read
// again: unchanged, the copy is that commit (a slot is rewritten only after
// its header is cleared, as for Load).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "batch.h"
#include "bytes.h"
#include "intent.h"
#include "region_check.h"
#include "shared_copy.h"
#include "store_rep.h"
#include "test_hooks.h"

namespace regionstore {
namespace {

// Attempts before kBusy. More than Load's 64: every publication of any
// region of the store (a batch loop changes the word twice per batch) starts
// the snapshot over, where Load restarts only for its own region's slot.
constexpr int kLoadSetAttempts = 256;

intent::PublicationBytes ReadPublication(const std::byte* word) {
  return shared_copy::LoadSharedWords<intent::kPublicationSize>(word);
}

// Whether the record of batch `id` is valid and names `member`.
bool RecordNames(const region_check::ReadFn& read, const region_check::BatchContext& batch,
                 uint64_t id, const batch::Member& member) {
  if (!batch.log_offset) return false;
  batch::UnitBytes unit;
  if (!read(batch::UnitOffset(*batch.log_offset, id), unit).ok()) return false;
  const std::optional<batch::Record> record = batch::DecodeRecord(unit);
  return record && record->id == id &&
         std::find(record->members.begin(), record->members.end(), member) != record->members.end();
}

// What the snapshot says of one region: the slot to copy, or why none.
struct Choice {
  std::optional<region_check::ValidHeader> slot;
  Status failure;
  uint64_t skipped_incomplete_batch = 0;
  uint64_t skipped_torn_generation = 0;
  uint32_t invalid_header_slots = 0;
};

}  // namespace

Result<std::vector<CheckpointMeta>> Store::LoadSet(
    std::span<const std::string_view> names, std::vector<std::vector<std::byte>>& outs) const {
  return LoadSetImpl(names, outs, /*missing_ok=*/false);
}

Result<std::vector<CheckpointMeta>> Store::LoadSetImpl(std::span<const std::string_view> names,
                                                       std::vector<std::vector<std::byte>>& outs,
                                                       bool missing_ok) const {
  const Rep& r = *rep_;
  // With `missing_ok`, a region with no commit to give (none yet, or only
  // an incomplete batch's) is in the set as generation 0 with no bytes.
  const auto missing = [&](const Status& failure) {
    return missing_ok && failure.code() == StatusCode::kNotFound;
  };
  if (names.empty()) {
    return Status::Error(StatusCode::kInvalidArgument, "load set", r.path, "no region named");
  }
  std::vector<uint32_t> indices;
  for (std::string_view name : names) {
    auto found = r.FindRegion(name, "load set");
    if (!found.ok()) return found.status();
    if (std::find(indices.begin(), indices.end(), *found) != indices.end()) {
      return Status::Error(StatusCode::kInvalidArgument, "load set", r.path,
                           "region '" + std::string(name) + "' is named twice");
    }
    indices.push_back(*found);
  }
  outs.resize(names.size());
  std::vector<CheckpointMeta> metas(names.size());
  // The writer's own handle: nothing changes the store while this runs.
  if (r.writable) {
    for (size_t i = 0; i < names.size(); ++i) {
      auto meta = Load(names[i], outs[i]);
      if (!meta.ok() && missing(meta.status())) {
        outs[i].clear();
        continue;
      }
      if (!meta.ok()) return meta.status();
      metas[i] = *meta;
    }
    return metas;
  }
  if (!r.shared->area_offset()) {
    return Status::Error(StatusCode::kInvalidArgument, "load set", r.path,
                         "the store has no intent area (made before 0.4 with 8,129 to 8,160 "
                         "regions): it has no publication word to load a consistent set by");
  }
  const std::byte* base = r.mapping->data();
  // What makes a snapshot one instant, where the store's protocol keeps it
  // (SharedState::BeginSnapshot).
  SharedState::Guard guard;
  int stale_sidecar = 0;
  const region_check::ReadFn mapped = region_check::MappingReader(*r.mapping);
  const auto read_headers = [&](uint32_t index) {
    const RegionEntry& region = r.info.regions[index];
    std::vector<slot::HeaderBytes> headers(region.slot_count);
    for (uint32_t i = 0; i < region.slot_count; ++i) {
      headers[i] = shared_copy::LoadHeaderWords(base + slot::HeaderFileOffset(region, i));
    }
    return headers;
  };
  // Slots whose payload failed its checksum twice while nothing changed:
  // torn or damaged, skipped as Load skips them.
  std::vector<std::vector<bool>> excluded(names.size());
  std::vector<std::vector<std::optional<uint64_t>>> failed_copy(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    excluded[i].assign(r.info.regions[indices[i]].slot_count, false);
    failed_copy[i].assign(r.info.regions[indices[i]].slot_count, std::nullopt);
  }
  const bool ignore_word = internal::Mutated(internal::Mutation::kLoadSetIgnoresPublication);
  // An odd word that no live writer holds: a writer died inside a
  // publication pair, and nothing changes until the next writer's open,
  // which moves the word on before it changes anything (RecoverOnOpen). A
  // snapshot between two reads of that very value is one instant, like one
  // under an even value. The value is read before the writer's lock is
  // tested, so that a writer that opened after the test has changed it.
  std::optional<intent::PublicationBytes> dead_writer_word;
  std::optional<intent::PublicationBytes> last_odd;
  bool writer_unknown = false;
  for (int attempt = 0; attempt < kLoadSetAttempts; ++attempt) {
    if (attempt > 0) std::this_thread::yield();
    auto ready = r.shared->BeginSnapshot(guard, stale_sidecar);
    if (!ready.ok()) return ready.status();
    if (!*ready) {
      // Give a writer that is opening time before the next attempt.
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    const std::byte* word = guard.word;
    const bool by_word = !guard.identity_before.has_value();
    const intent::PublicationBytes before = ReadPublication(word);
    const std::optional<uint64_t> p = intent::DecodePublication(before);
    if ((!p || (*p & 1) != 0) && !ignore_word && before != dead_writer_word && by_word) {
      // A batch is being published, or its writer died. Or the word does
      // not decode: a writer is between the two stores of a mapped one
      // (Rep::WritePublication), or a dead writer left it torn. Test the
      // lock once the same value is seen twice (a live writer is most often
      // done by then).
      if (before == last_odd) {
        const Result<bool> alive = r.file->HasWriter();
        if (alive.ok() && !*alive) dead_writer_word = before;
        writer_unknown = !alive.ok();
      }
      last_odd = before;
      continue;
    }
    // The snapshot: every read the decision makes lies between the two
    // reads of the word.
    region_check::BatchContext batch = *region_check::ReadBatchContext(mapped, r.info);
    if (r.journal) batch.journal_generations = r.journal->pending_generations();
    std::vector<Choice> choices(names.size());
    std::vector<std::vector<slot::HeaderBytes>> headers(names.size());
    // Batches found whole in this snapshot: a member's verdict reads every
    // partner (payloads too), so the other members of a batch that counts
    // are not checked again (each one's own payload is checked when copied).
    std::vector<uint64_t> whole_batches;
    for (size_t i = 0; i < names.size(); ++i) {
      const uint32_t index = indices[i];
      const RegionEntry& region = r.info.regions[index];
      headers[i] = read_headers(index);
      internal::PauseLoadSet(i);
      Choice& choice = choices[i];
      const std::vector<region_check::ValidHeader> all =
          region_check::ValidHeadersNewestFirst(headers[i], region, index, batch.batch_ids());
      for (uint32_t s = 0; s < region.slot_count; ++s) {
        const auto kind =
            slot::DecodeHeader(headers[i][s], index, s, region.capacity, batch.batch_ids()).kind;
        choice.invalid_header_slots += kind == slot::DecodedHeader::Kind::kInvalid ? 1 : 0;
      }
      for (const region_check::ValidHeader& candidate : all) {
        if (excluded[i][candidate.slot]) {
          if (choice.skipped_torn_generation == 0) {
            choice.skipped_torn_generation = candidate.header.generation;
          }
          continue;
        }
        const uint64_t id = candidate.header.batch_id;
        const bool known_whole =
            std::find(whole_batches.begin(), whole_batches.end(), id) != whole_batches.end() &&
            RecordNames(mapped, batch, id, {index, candidate.slot, candidate.header.generation});
        if (batch.batch_ids() && id > batch.watermark && !known_whole) {
          auto verdict =
              region_check::BatchVerdict(mapped, batch, index, candidate.slot, candidate.header);
          if (!verdict->empty()) {
            if (choice.skipped_incomplete_batch == 0) choice.skipped_incomplete_batch = id;
            continue;
          }
          whole_batches.push_back(id);
        }
        choice.slot = candidate;
        break;
      }
      if (!choice.slot) {
        if (all.empty()) {
          const bool none = std::all_of(headers[i].begin(), headers[i].end(), [](const auto& h) {
            return internal::AllZero(std::span(h).first(sizeof slot::kMagic));
          });
          choice.failure = Status::Error(
              none ? StatusCode::kNotFound : StatusCode::kCorruption, "load set", r.path,
              "region '" + region.name +
                  (none ? "': no commit yet"
                        : "': its slots hold data but none is valid (no slot header passes its "
                          "checks); run `regionctl verify` for details"));
        } else if (choice.skipped_incomplete_batch != 0 && choice.skipped_torn_generation == 0) {
          choice.failure = Status::Error(
              StatusCode::kNotFound, "load set", r.path,
              "region '" + region.name + "': no complete commit: its only ones belong to batch " +
                  std::to_string(choice.skipped_incomplete_batch) + ", which did not complete");
        } else {
          choice.failure = Status::Error(
              StatusCode::kTornCommit, "load set", r.path,
              "region '" + region.name + "': its newest commit (generation " +
                  std::to_string(all.front().header.generation) +
                  ") has an intact header but its payload does not match, and no older commit "
                  "is intact");
        }
      }
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (ReadPublication(word) != before && !ignore_word) continue;
    if (!r.shared->SnapshotHeld(guard)) continue;
    // A consistent snapshot. A region with no commit to give fails the set,
    // unless the caller takes it as empty, or the journal holds a batch for
    // it that no writer has replayed yet (below).
    for (size_t i = 0; i < choices.size(); ++i) {
      const Choice& choice = choices[i];
      if (choice.slot || missing(choice.failure)) continue;
      const bool journal_may_cover = r.journal && r.journal->PendingFor(indices[i]) &&
                                     (choice.failure.code() == StatusCode::kNotFound ||
                                      choice.failure.code() == StatusCode::kTornCommit ||
                                      choice.failure.code() == StatusCode::kCorruption);
      if (!journal_may_cover) return choice.failure;
    }
    // Copy, then check each copy: its checksum, and its header unchanged.
    std::vector<uint64_t> checksums(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      const RegionEntry& region = r.info.regions[indices[i]];
      if (!choices[i].slot) {
        outs[i].clear();
        continue;
      }
      const region_check::ValidHeader& chosen = *choices[i].slot;
      try {
        outs[i].resize(chosen.header.length);
      } catch (const std::bad_alloc&) {
        return Status::Error(StatusCode::kIOError, "load set", r.path,
                             "region '" + region.name + "': cannot allocate " +
                                 std::to_string(chosen.header.length) + " bytes for the copy");
      }
      shared_copy::CopyFromShared(
          outs[i].data(), base + slot::PayloadFileOffset(region, chosen.slot), outs[i].size());
      checksums[i] = format::Checksum(outs[i]);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    bool changed = false, torn = false;
    for (size_t i = 0; i < names.size() && !changed; ++i) {
      const RegionEntry& region = r.info.regions[indices[i]];
      if (!choices[i].slot) continue;
      const region_check::ValidHeader& chosen = *choices[i].slot;
      const slot::HeaderBytes now =
          shared_copy::LoadHeaderWords(base + slot::HeaderFileOffset(region, chosen.slot));
      if (now != headers[i][chosen.slot]) {
        changed = true;
      } else if (checksums[i] != chosen.header.payload_checksum) {
        // Torn or damaged if two copies agree while its header holds still;
        // else a copy that raced something: try again.
        torn = true;
        if (failed_copy[i][chosen.slot] == checksums[i]) {
          excluded[i][chosen.slot] = true;
        } else {
          failed_copy[i][chosen.slot] = checksums[i];
        }
      }
    }
    if (changed || torn) continue;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!choices[i].slot) continue;
      const region_check::ValidHeader& chosen = *choices[i].slot;
      CheckpointMeta& meta = metas[i];
      meta.generation = chosen.header.generation;
      meta.length = chosen.header.length;
      meta.commit_unix_ns = chosen.header.commit_unix_ns;
      meta.slot = chosen.slot;
      meta.skipped_torn_generation = choices[i].skipped_torn_generation;
      meta.skipped_incomplete_batch = choices[i].skipped_incomplete_batch;
      meta.invalid_header_slots = choices[i].invalid_header_slots;
    }
    // Journaled batches no writer has replayed yet: whole records, the same
    // for every region of the set, so the set stays one instant.
    for (size_t i = 0; i < names.size() && r.journal && r.journal->has_pending(); ++i) {
      std::vector<std::byte> newer_bytes;
      if (auto newer = r.journal->Newer(indices[i], metas[i].generation, *r.mapping, newer_bytes)) {
        metas[i] = *newer;
        outs[i] = std::move(newer_bytes);
      } else if (!choices[i].slot && !missing(choices[i].failure)) {
        return choices[i].failure;
      }
    }
    return metas;
  }
  if (stale_sidecar > 0) {
    return Status::Error(
        StatusCode::kBusy, "load set", r.path,
        "the store's writer does not use the sidecar '" + sidecar::PathFor(r.path) +
            "' this handle can open (it was removed and made anew while the writer held the "
            "store, or the store was opened by another path), so its publication word says "
            "nothing; retry once the writer has closed, or open the store by the path its "
            "writer uses");
  }
  if (writer_unknown) {
    return Status::Error(
        StatusCode::kBusy, "load set", r.path,
        "the publication word stayed odd during " + std::to_string(kLoadSetAttempts) +
            " attempts: a writer is publishing a batch, or died while it did and this Io cannot "
            "tell which; retry later, or open the store for writing once to recover it");
  }
  return Status::Error(StatusCode::kBusy, "load set", r.path,
                       "the writer kept changing the regions during " +
                           std::to_string(kLoadSetAttempts) +
                           " attempts to copy them; retry later");
}

}  // namespace regionstore
