// Commits filled in place (Store::BeginCommit, PendingCommit): the target
// slot is chosen and its header cleared at Begin, the caller fills the
// payload area (through the mapping or by Append), and Finish writes the
// header and the barrier as a Commit would (commit.cc's second halves).
// docs/CHECKPOINTS.md, "Commits filled in place", has the argument.
#include <atomic>
#include <string>
#include <utility>

#include "shared_copy.h"
#include "store_rep.h"
#include "test_hooks.h"

namespace regionstore {

using internal::MarkCommitPhase;

namespace {

constexpr const char* kBegin = "begin commit";
constexpr const char* kFill = "commit in place";

Status NotPending(const char* operation) {
  return Status::Error(StatusCode::kInvalidArgument, operation, "",
                       "the commit filled in place is no longer pending (finished, aborted, or "
                       "its store was closed)");
}

}  // namespace

Status Store::Rep::CheckNotFilling(uint32_t index, const char* operation) const {
  if (!in_place || in_place->index != index) return Status::Ok();
  return Status::Error(StatusCode::kBusy, operation, path,
                       "region '" + info.regions[index].name +
                           "' has a commit filled in place pending on this handle "
                           "(PendingCommit): finish or abort it first");
}

Result<PendingCommit> Store::BeginCommit(std::string_view name, uint64_t max_length) {
  Rep& r = *rep_;
  if (Status s = r.CheckWritable(kBegin); !s.ok()) return s;
  auto found = r.FindRegion(name, kBegin);
  if (!found.ok()) return found.status();
  const uint32_t index = *found;
  if (r.in_place) {
    return Status::Error(StatusCode::kBusy, kBegin, r.path,
                         "a commit filled in place is already pending on this handle (region '" +
                             r.info.regions[r.in_place->index].name + "'): one at a time");
  }
  const RegionEntry& region = r.info.regions[index];
  if (max_length > region.capacity) {
    return Status::Error(StatusCode::kInvalidArgument, kBegin, r.path,
                         "a commit of up to " + std::to_string(max_length) +
                             " bytes exceeds the capacity of region '" + region.name + "' (" +
                             std::to_string(region.capacity) + " bytes)");
  }
  if (Status s = r.SettleRegion(index, /*rewrite=*/false); !s.ok()) return s;
  const uint32_t target = r.CommitTarget(index);
  // Fails now, not after the caller filled the slot, if generations are
  // exhausted.
  if (auto header = r.NextHeader(index, target, 0, kBegin); !header.ok()) return header.status();

  // The target holds neither the newest nor the newest durable commit; from
  // here it holds none at all. As in a mapped commit, the cleared magic is
  // ordered before any payload store (a reader must not see the old magic
  // over new bytes), and is in the page cache before any pwrite of Append.
  MarkCommitPhase(internal::kCopy);
  shared_copy::ClearHeaderMagic(r.mapping->data() + slot::HeaderFileOffset(region, target));
  std::atomic_thread_fence(std::memory_order_release);
  r.regions[index].known_generation[target] = 0;
  r.in_place.emplace();
  r.in_place->index = index;
  r.in_place->target = target;
  r.in_place->max_length = max_length;
  r.in_place->checksum = std::make_unique<format::ChecksumStream>();
  return PendingCommit(&r);
}

PendingCommit::PendingCommit(Store::Rep* rep) : rep_(rep) { rep_->in_place->owner = this; }

PendingCommit::PendingCommit(PendingCommit&& other) noexcept
    : rep_(std::exchange(other.rep_, nullptr)) {
  if (rep_ != nullptr) rep_->in_place->owner = this;
}

PendingCommit& PendingCommit::operator=(PendingCommit&& other) noexcept {
  if (this != &other) {
    Abort();
    rep_ = std::exchange(other.rep_, nullptr);
    if (rep_ != nullptr) rep_->in_place->owner = this;
  }
  return *this;
}

PendingCommit::~PendingCommit() { Abort(); }

std::span<std::byte> PendingCommit::payload() {
  if (rep_ == nullptr) return {};
  Store::Rep::InPlace& fill = *rep_->in_place;
  fill.only_appended = false;
  return {rep_->mapping->data() + payload_file_offset(), fill.max_length};
}

uint64_t PendingCommit::appended() const { return rep_ == nullptr ? 0 : rep_->in_place->appended; }

uint64_t PendingCommit::payload_file_offset() const {
  if (rep_ == nullptr) return 0;
  const Store::Rep::InPlace& fill = *rep_->in_place;
  return slot::PayloadFileOffset(rep_->info.regions[fill.index], fill.target);
}

Status PendingCommit::Append(std::span<const std::byte> bytes) {
  if (rep_ == nullptr) return NotPending(kFill);
  Store::Rep& r = *rep_;
  if (Status s = r.CheckWritable(kFill); !s.ok()) return s;
  Store::Rep::InPlace& fill = *r.in_place;
  if (bytes.size() > fill.max_length - fill.appended) {
    return Status::Error(StatusCode::kInvalidArgument, kFill, r.path,
                         "appending " + std::to_string(bytes.size()) + " bytes to the " +
                             std::to_string(fill.appended) + " already there passes the " +
                             std::to_string(fill.max_length) +
                             " bytes this commit was begun with; nothing written");
  }
  if (bytes.empty()) return Status::Ok();
  if (Status s = r.file->WriteAt(payload_file_offset() + fill.appended, bytes); !s.ok()) {
    return r.FailedWrite(s, "commit in place: pwrite (payload)");
  }
  if (fill.only_appended) fill.checksum->Update(bytes);
  fill.appended += bytes.size();
  return Status::Ok();
}

Result<uint64_t> PendingCommit::Finish(Durability durability) {
  return Finish(appended(), durability);
}

Result<uint64_t> PendingCommit::Finish(uint64_t length, Durability durability) {
  if (rep_ == nullptr) return NotPending("commit");
  Store::Rep& r = *rep_;
  const Store::Rep::InPlace& fill = *r.in_place;
  if (length > fill.max_length) {
    return Status::Error(StatusCode::kInvalidArgument, "commit", r.path,
                         "a payload of " + std::to_string(length) + " bytes is longer than the " +
                             std::to_string(fill.max_length) + " this commit was begun with");
  }
  if (static_cast<size_t>(durability) >= r.stats.by_mode.size()) {
    return Status::Error(StatusCode::kInvalidArgument, "commit", r.path, "unknown durability mode");
  }
  // From here the commit is no longer pending, whatever happens.
  const uint32_t index = fill.index;
  const uint32_t target = fill.target;
  const uint64_t payload_offset = payload_file_offset();
  const bool streamed = fill.only_appended && length == fill.appended;
  const bool through_mapping = !fill.only_appended;
  const uint64_t streamed_checksum = streamed ? fill.checksum->Digest() : 0;
  r.in_place.reset();
  rep_ = nullptr;
  const auto finished = [](Status s) {
    MarkCommitPhase(internal::kIdle);
    return s;
  };
  if (Status s = r.CheckWritable("commit"); !s.ok()) return finished(s);
  auto header = r.NextHeader(index, target, length, "commit");
  if (!header.ok()) return finished(header.status());
  // The checksum of bytes stored through the mapping reads them back from
  // the page cache (the payload's pages come into this process's resident
  // memory if they were not).
  header->payload_checksum =
      streamed ? streamed_checksum : format::Checksum({r.mapping->data() + payload_offset, length});
  Status outcome;
  if (IsDurable(durability)) {
    outcome = r.DurableHeaderAndBarrier(index, target, *header, durability);
  } else {
    outcome = r.NoteVolatileCommit();
    if (outcome.ok()) outcome = r.PublishMappedHeader(index, target, *header, durability);
  }
  MarkCommitPhase(internal::kIdle);
  if (!outcome.ok()) return outcome;
  if (IsDurable(durability) && through_mapping && length > 0) {
    // The barrier's writeback write-protected the pages stored through the
    // mapping; the next fill of this slot would take a fault per page. Drop
    // their page-table entries (the page cache keeps the data), as kSync
    // Write does, so that it maps whole folios instead (docs/BENCH-LAB.md).
    r.mapping->ResetPageTables(payload_offset, format::AlignUp(length, r.page_size));
  }
  r.RecordCommit(index, target, header->generation, durability, length);
  return header->generation;
}

void PendingCommit::Abort() {
  if (rep_ == nullptr) return;
  // The target's header stays cleared: the slot is free, the region's
  // commits are untouched, and nothing needs writing.
  rep_->in_place.reset();
  rep_ = nullptr;
  MarkCommitPhase(internal::kIdle);
}

}  // namespace regionstore
