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

// With `missing_ok`, a region with no commit to give (none yet, or only
// an incomplete batch's) is in the set as generation 0 with no bytes.
bool TakenAsEmpty(bool missing_ok, const Status& failure) {
  return missing_ok && failure.code() == StatusCode::kNotFound;
}

// The writer's own handle, its mutex held: nothing changes the store while
// this runs, so each region is loaded alone (`load`: Store::Load), in the
// order named, into
// `outs` and `metas` (sized by the caller). The first failure not taken as
// empty ends the set.
template <typename LoadOne>
Result<std::vector<CheckpointMeta>> LoadEachAlone(const LoadOne& load,
                                                  std::span<const std::string_view> names,
                                                  std::vector<std::vector<std::byte>>& outs,
                                                  std::vector<CheckpointMeta>& metas,
                                                  bool missing_ok) {
  for (size_t i = 0; i < names.size(); ++i) {
    auto meta = load(names[i], outs[i]);
    if (!meta.ok() && TakenAsEmpty(missing_ok, meta.status())) {
      outs[i].clear();
      continue;
    }
    if (!meta.ok()) return meta.status();
    metas[i] = *meta;
  }
  return metas;
}

// Why `region` has no commit to give in a snapshot that found `all` (its
// valid headers, newest first) among `headers` and skipped what `choice`
// says: kNotFound (no commit yet, or only an incomplete batch's),
// kCorruption (data but no valid header) or kTornCommit.
Status NoCommitFailure(const std::string& path, const RegionEntry& region,
                       const std::vector<slot::HeaderBytes>& headers,
                       const std::vector<region_check::ValidHeader>& all, const Choice& choice) {
  if (all.empty()) {
    const bool none = std::all_of(headers.begin(), headers.end(), [](const auto& h) {
      return internal::AllZero(std::span(h).first(sizeof slot::kMagic));
    });
    return Status::Error(
        none ? StatusCode::kNotFound : StatusCode::kCorruption, "load set", path,
        "region '" + region.name +
            (none ? "': no commit yet"
                  : "': its slots hold data but none is valid (no slot header passes its "
                    "checks); run `regionctl verify` for details"));
  }
  if (choice.skipped_incomplete_batch != 0 && choice.skipped_torn_generation == 0) {
    return Status::Error(
        StatusCode::kNotFound, "load set", path,
        "region '" + region.name + "': no complete commit: its only ones belong to batch " +
            std::to_string(choice.skipped_incomplete_batch) + ", which did not complete");
  }
  return Status::Error(StatusCode::kTornCommit, "load set", path,
                       "region '" + region.name + "': its newest commit (generation " +
                           std::to_string(all.front().header.generation) +
                           ") has an intact header but its payload does not match, and no older "
                           "commit is intact");
}

// The snapshot's choice for region `index` from its `headers` as read: the
// newest valid header not `excluded` whose batch, if above the watermark,
// is whole, with what was skipped on the way and the count of invalid
// headers; or the failure that says why there is none. Reads the batch
// records and partners through `read` (the mapping). Adds each batch it
// finds whole to `whole_batches`.
Choice ChooseSlot(const region_check::ReadFn& read, const region_check::BatchContext& batch,
                  const std::string& path, const RegionEntry& region, uint32_t index,
                  const std::vector<slot::HeaderBytes>& headers, const std::vector<bool>& excluded,
                  std::vector<uint64_t>& whole_batches) {
  Choice choice;
  const std::vector<region_check::ValidHeader> all =
      region_check::ValidHeadersNewestFirst(headers, region, index, batch.batch_ids());
  for (uint32_t s = 0; s < region.slot_count; ++s) {
    const auto kind =
        slot::DecodeHeader(headers[s], index, s, region.capacity, batch.batch_ids()).kind;
    choice.invalid_header_slots += kind == slot::DecodedHeader::Kind::kInvalid ? 1 : 0;
  }
  for (const region_check::ValidHeader& candidate : all) {
    if (excluded[candidate.slot]) {
      if (choice.skipped_torn_generation == 0) {
        choice.skipped_torn_generation = candidate.header.generation;
      }
      continue;
    }
    const uint64_t id = candidate.header.batch_id;
    const bool known_whole =
        std::find(whole_batches.begin(), whole_batches.end(), id) != whole_batches.end() &&
        RecordNames(read, batch, id, {index, candidate.slot, candidate.header.generation});
    if (batch.batch_ids() && id > batch.watermark && !known_whole) {
      auto verdict =
          region_check::BatchVerdict(read, batch, index, candidate.slot, candidate.header);
      if (!verdict->empty()) {
        if (choice.skipped_incomplete_batch == 0) choice.skipped_incomplete_batch = id;
        continue;
      }
      whole_batches.push_back(id);
    }
    choice.slot = candidate;
    break;
  }
  if (!choice.slot) choice.failure = NoCommitFailure(path, region, headers, all, choice);
  return choice;
}

// One LoadSet through a read-only handle: its attempts at a snapshot, and
// what they learn on the way (the sidecar, torn slots, a dead writer's
// word). `StoreRep` is Store::Rep: a template parameter only because that
// type is private to Store, whose LoadSetImpl is the one user.
template <typename StoreRep>
class SetReader {
 public:
  // `indices` are the regions of the set (checked, no repeats); `outs`
  // gets the copies.
  SetReader(const StoreRep& r, std::span<const uint32_t> indices, bool missing_ok,
            std::vector<std::vector<std::byte>>& outs)
      : r_(r),
        indices_(indices),
        missing_ok_(missing_ok),
        outs_(outs),
        base_(r.mapping->data()),
        mapped_(region_check::MappingReader(*r.mapping)),
        excluded_(indices.size()),
        failed_copy_(indices.size()) {
    for (size_t i = 0; i < indices.size(); ++i) {
      excluded_[i].assign(r.info.regions[indices[i]].slot_count, false);
      failed_copy_[i].assign(r.info.regions[indices[i]].slot_count, std::nullopt);
    }
  }

  // Up to kLoadSetAttempts attempts: each takes a snapshot between two
  // reads of P, then copies the chosen slots and checks the copies. Fills
  // `outs` and `metas` from the first that holds; kBusy if none does.
  Status Run(std::vector<CheckpointMeta>& metas) {
    for (int attempt = 0; attempt < kLoadSetAttempts; ++attempt) {
      if (attempt > 0) std::this_thread::yield();
      auto ready = r_.shared->BeginSnapshot(guard_, unreachable_writer_);
      if (!ready.ok()) return ready.status();
      if (!*ready) {
        // A writer is opening (it names its sidecar a moment after it
        // gives it its id), or it uses another sidecar than this handle
        // can reach. Give it time before the next attempt.
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        continue;
      }
      const bool by_word = !guard_.identity_before.has_value();
      const intent::PublicationBytes before = ReadPublication(guard_.word);
      if (!WordAllowsSnapshot(before, by_word)) continue;
      const Snapshot snapshot = TakeSnapshot();
      if (!SnapshotHeld(before)) continue;
      if (Status s = EveryRegionHasCommit(snapshot.choices); !s.ok()) return s;
      auto checksums = CopyChosen(snapshot);
      if (!checksums.ok()) return checksums.status();
      if (!CopiesHold(snapshot, *checksums)) continue;
      return Conclude(snapshot.choices, metas);
    }
    return Exhausted();
  }

 private:
  // The headers an attempt read of each region, and what it chose.
  struct Snapshot {
    std::vector<Choice> choices;
    std::vector<std::vector<slot::HeaderBytes>> headers;
  };

  [[nodiscard]] std::vector<slot::HeaderBytes> ReadHeaders(uint32_t index) const {
    const RegionEntry& region = r_.info.regions[index];
    std::vector<slot::HeaderBytes> headers(region.slot_count);
    for (uint32_t i = 0; i < region.slot_count; ++i) {
      headers[i] = shared_copy::LoadHeaderWords(base_ + slot::HeaderFileOffset(region, i));
    }
    return headers;
  }

  // Whether a snapshot may start under P as read (`before`): not while it
  // is odd or torn, unless a dead writer left it so (or the snapshot goes
  // by the identity entry). Tests the writer's lock when the same such
  // value is seen twice, and remembers what it found.
  bool WordAllowsSnapshot(const intent::PublicationBytes& before, bool by_word) {
    const std::optional<uint64_t> p = intent::DecodePublication(before);
    if ((!p || (*p & 1) != 0) && !ignore_word_ && before != dead_writer_word_ && by_word) {
      // A batch is being published, or its writer died. Or the word does
      // not decode: a writer is between the two stores of a mapped one
      // (Rep::WritePublication), or a dead writer left it torn. Test the
      // lock once the same value is seen twice (a live writer is most often
      // done by then).
      if (before == last_odd_) {
        const Result<bool> alive = r_.file->HasWriter();
        if (alive.ok() && !*alive) dead_writer_word_ = before;
        writer_unknown_ = !alive.ok();
      }
      last_odd_ = before;
      return false;
    }
    return true;
  }

  // The snapshot: every read the decision makes lies between the two
  // reads of the word. Reads the batch context, then each region's headers
  // and chooses its slot; writes nothing.
  [[nodiscard]] Snapshot TakeSnapshot() const {
    region_check::BatchContext batch = *region_check::ReadBatchContext(mapped_, r_.info);
    if (r_.journal) batch.journal_generations = r_.journal->pending_generations();
    Snapshot snapshot{.choices = std::vector<Choice>(indices_.size()),
                      .headers = std::vector<std::vector<slot::HeaderBytes>>(indices_.size())};
    // Batches found whole in this snapshot: a member's verdict reads every
    // partner (payloads too), so the other members of a batch that counts
    // are not checked again (each one's own payload is checked when copied).
    std::vector<uint64_t> whole_batches;
    for (size_t i = 0; i < indices_.size(); ++i) {
      const uint32_t index = indices_[i];
      snapshot.headers[i] = ReadHeaders(index);
      internal::PauseLoadSet(i);
      snapshot.choices[i] = ChooseSlot(mapped_, batch, r_.path, r_.info.regions[index], index,
                                       snapshot.headers[i], excluded_[i], whole_batches);
    }
    return snapshot;
  }

  // Whether nothing visible changed during the snapshot: P read again
  // unchanged, and what else the store's shared state asks for (protocol
  // 2: the sidecar still the writer's, or, by the identity entry, the same
  // entry and still no writer: SharedState::SnapshotHeld).
  [[nodiscard]] bool SnapshotHeld(const intent::PublicationBytes& before) const {
    std::atomic_thread_fence(std::memory_order_acquire);
    if (ReadPublication(guard_.word) != before && !ignore_word_) return false;
    return r_.shared->SnapshotHeld(guard_);
  }

  // A consistent snapshot. A region with no commit to give fails the set,
  // unless the caller takes it as empty, or the journal holds a batch for
  // it that no writer has replayed yet (Conclude).
  Status EveryRegionHasCommit(const std::vector<Choice>& choices) const {
    for (size_t i = 0; i < choices.size(); ++i) {
      const Choice& choice = choices[i];
      if (choice.slot || TakenAsEmpty(missing_ok_, choice.failure)) continue;
      const bool journal_may_cover = r_.journal && r_.journal->PendingFor(indices_[i]) &&
                                     (choice.failure.code() == StatusCode::kNotFound ||
                                      choice.failure.code() == StatusCode::kTornCommit ||
                                      choice.failure.code() == StatusCode::kCorruption);
      if (!journal_may_cover) return choice.failure;
    }
    return Status::Ok();
  }

  // Copy, then check each copy: its checksum, and its header unchanged
  // (CopiesHold). Copies each chosen slot's payload into `outs_` (a region
  // without one gets no bytes) and returns the copies' checksums; kIOError
  // when a copy's memory cannot be allocated.
  Result<std::vector<uint64_t>> CopyChosen(const Snapshot& snapshot) {
    std::vector<uint64_t> checksums(indices_.size());
    for (size_t i = 0; i < indices_.size(); ++i) {
      const RegionEntry& region = r_.info.regions[indices_[i]];
      if (!snapshot.choices[i].slot) {
        outs_[i].clear();
        continue;
      }
      const region_check::ValidHeader& chosen = *snapshot.choices[i].slot;
      try {
        outs_[i].resize(chosen.header.length);
      } catch (const std::bad_alloc&) {
        return Status::Error(StatusCode::kIOError, "load set", r_.path,
                             "region '" + region.name + "': cannot allocate " +
                                 std::to_string(chosen.header.length) + " bytes for the copy");
      }
      shared_copy::CopyFromShared(
          outs_[i].data(), base_ + slot::PayloadFileOffset(region, chosen.slot), outs_[i].size());
      checksums[i] = format::Checksum(outs_[i]);
    }
    return checksums;
  }

  // Whether every copy is its commit: each chosen header read again
  // unchanged and each `checksums` entry the header's. A copy whose
  // checksum fails is remembered, and its slot excluded from later
  // attempts once two copies agree.
  bool CopiesHold(const Snapshot& snapshot, const std::vector<uint64_t>& checksums) {
    std::atomic_thread_fence(std::memory_order_acquire);
    bool changed = false, torn = false;
    for (size_t i = 0; i < indices_.size() && !changed; ++i) {
      const RegionEntry& region = r_.info.regions[indices_[i]];
      if (!snapshot.choices[i].slot) continue;
      const region_check::ValidHeader& chosen = *snapshot.choices[i].slot;
      const slot::HeaderBytes now =
          shared_copy::LoadHeaderWords(base_ + slot::HeaderFileOffset(region, chosen.slot));
      if (now != snapshot.headers[i][chosen.slot]) {
        changed = true;
      } else if (checksums[i] != chosen.header.payload_checksum) {
        // Torn or damaged if two copies agree while its header holds still;
        // else a copy that raced something: try again.
        torn = true;
        if (failed_copy_[i][chosen.slot] == checksums[i]) {
          excluded_[i][chosen.slot] = true;
        } else {
          failed_copy_[i][chosen.slot] = checksums[i];
        }
      }
    }
    return !changed && !torn;
  }

  // The set from copies that held: `metas` from the chosen headers, then
  // any journaled batch newer than a region's copy in place of it. A
  // region with neither fails the set unless it is taken as empty.
  Status Conclude(const std::vector<Choice>& choices, std::vector<CheckpointMeta>& metas) const {
    for (size_t i = 0; i < indices_.size(); ++i) {
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
    for (size_t i = 0; i < indices_.size() && r_.journal && r_.journal->has_pending(); ++i) {
      std::vector<std::byte> newer_bytes;
      if (auto newer =
              r_.journal->Newer(indices_[i], metas[i].generation, *r_.mapping, newer_bytes)) {
        metas[i] = *newer;
        outs_[i] = std::move(newer_bytes);
      } else if (!choices[i].slot && !TakenAsEmpty(missing_ok_, choices[i].failure)) {
        return choices[i].failure;
      }
    }
    return Status::Ok();
  }

  // Every attempt used up: kBusy, saying what kept the snapshot from
  // holding.
  Status Exhausted() const {
    if (unreachable_writer_ > 0) {
      return Status::Error(
          StatusCode::kBusy, "load set", r_.path,
          "the store's writer does not use the sidecar '" + sidecar::PathFor(r_.path) +
              "' this handle can open (it was removed and made anew while the writer held the "
              "store, or the store was opened by another path), so its publication word says "
              "nothing; retry once the writer has closed, or open the store by the path its "
              "writer uses");
    }
    if (writer_unknown_) {
      return Status::Error(
          StatusCode::kBusy, "load set", r_.path,
          "the publication word stayed odd during " + std::to_string(kLoadSetAttempts) +
              " attempts: a writer is publishing a batch, or died while it did and this Io "
              "cannot tell which; retry later, or open the store for writing once to recover it");
    }
    return Status::Error(StatusCode::kBusy, "load set", r_.path,
                         "the writer kept changing the regions during " +
                             std::to_string(kLoadSetAttempts) +
                             " attempts to copy them; retry later");
  }

  const StoreRep& r_;
  const std::span<const uint32_t> indices_;
  const bool missing_ok_;
  std::vector<std::vector<std::byte>>& outs_;
  const std::byte* const base_;
  // What makes a snapshot one instant, where the store's protocol keeps
  // it (SharedState::BeginSnapshot); its sidecar is kept across attempts.
  SharedState::Guard guard_;
  int unreachable_writer_ = 0;
  const region_check::ReadFn mapped_;
  // Slots whose payload failed its checksum twice while nothing changed:
  // torn or damaged, skipped as Load skips them.
  std::vector<std::vector<bool>> excluded_;
  std::vector<std::vector<std::optional<uint64_t>>> failed_copy_;
  const bool ignore_word_ = internal::Mutated(internal::Mutation::kLoadSetIgnoresPublication);
  // An odd word that no live writer holds: a writer died inside a
  // publication pair, and nothing changes until the next writer's open,
  // which moves the word on before it changes anything (RecoverOnOpen). A
  // snapshot between two reads of that very value is one instant, like one
  // under an even value. The value is read before the writer's lock is
  // tested, so that a writer that opened after the test has changed it.
  std::optional<intent::PublicationBytes> dead_writer_word_;
  std::optional<intent::PublicationBytes> last_odd_;
  bool writer_unknown_ = false;
};

}  // namespace

Result<std::vector<CheckpointMeta>> Store::LoadSet(
    std::span<const std::string_view> names, std::vector<std::vector<std::byte>>& outs) const {
  HandleLock lock(*rep_);
  return LoadSetImpl(names, outs, /*missing_ok=*/false);
}

Result<std::vector<CheckpointMeta>> Store::LoadSetImpl(std::span<const std::string_view> names,
                                                       std::vector<std::vector<std::byte>>& outs,
                                                       bool missing_ok) const {
  const Rep& r = *rep_;
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
  if (r.writable) {
    const auto load = [this](std::string_view name, std::vector<std::byte>& out) {
      return LoadHeld(name, out);
    };
    return LoadEachAlone(load, names, outs, metas, missing_ok);
  }
  if (!r.shared->area_offset()) {
    return Status::Error(StatusCode::kInvalidArgument, "load set", r.path,
                         "the store has no intent area (made before 0.4 with 8,129 to 8,160 "
                         "regions): it has no publication word to load a consistent set by");
  }
  SetReader<Rep> reader(r, indices, missing_ok, outs);
  if (Status s = reader.Run(metas); !s.ok()) return s;
  return metas;
}

}  // namespace regionstore
