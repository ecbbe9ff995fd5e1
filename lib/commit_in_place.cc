// Commits and batches filled in place (Store::BeginCommit, PendingCommit;
// Store::BeginBatch, PendingBatch): the target slots are chosen and their
// header magic cleared at Begin, the caller fills the payload areas
// (through the mapping or by Append), and Finish writes the headers and the
// barrier as Commit or CommitBatch would (their second halves).
// docs/CHECKPOINTS.md, "Commits filled in place", has the argument.
#include <algorithm>
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
constexpr const char* kBeginBatch = "begin batch";
constexpr const char* kFill = "commit in place";
// Append copies the caller's bytes this much at a time (one pwrite each):
// enough to keep the pwrites large, small beside what a streaming caller
// holds.
constexpr size_t kAppendCopyBytes = 1024 * 1024;

Status NotPending(const char* operation) {
  return Status::Error(StatusCode::kInvalidArgument, operation, "",
                       "the commit filled in place is no longer pending (finished, aborted, or "
                       "its store was closed)");
}

}  // namespace

uint64_t Store::Rep::FillOffset(const InPlaceMember& fill) const {
  return slot::PayloadFileOffset(info.regions[fill.index], fill.target);
}

std::span<std::byte> Store::Rep::MappedFill(InPlaceMember& fill) {
  fill.only_appended = false;
  return {mapping->data() + FillOffset(fill), fill.max_length};
}

Status Store::Rep::AppendToFill(InPlaceMember& fill, std::span<const std::byte> bytes) {
  if (Status s = CheckWritable(kFill); !s.ok()) return s;
  if (bytes.size() > fill.max_length - fill.appended) {
    return Status::Error(StatusCode::kInvalidArgument, kFill, path,
                         "appending " + std::to_string(bytes.size()) + " bytes to the " +
                             std::to_string(fill.appended) + " already there passes the " +
                             std::to_string(fill.max_length) +
                             " bytes this commit was begun with; nothing written");
  }
  // Through a private copy, a bounded chunk at a time: the checksum and
  // the pwrite both read the copy, so they agree on the bytes even if
  // another thread changes the caller's buffer meanwhile (hashed and
  // written from the caller's buffer, a returned commit could fail to load).
  while (!bytes.empty()) {
    const size_t chunk = std::min(bytes.size(), kAppendCopyBytes);
    append_copy.assign(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(chunk));
    if (Status s = file->WriteAt(FillOffset(fill) + fill.appended, append_copy); !s.ok()) {
      return FailedWrite(s, "commit in place: pwrite (payload)");
    }
    if (fill.only_appended) fill.checksum->Update(append_copy);
    fill.appended += chunk;
    bytes = bytes.subspan(chunk);
  }
  return Status::Ok();
}

Status Store::Rep::CheckFillFinish(const InPlaceMember& fill, uint64_t length,
                                   Durability durability) const {
  if (length > fill.max_length) {
    return Status::Error(StatusCode::kInvalidArgument, "commit", path,
                         "a payload of " + std::to_string(length) + " bytes is longer than the " +
                             std::to_string(fill.max_length) + " this commit was begun with");
  }
  if (static_cast<size_t>(durability) >= stats.by_mode.size()) {
    return Status::Error(StatusCode::kInvalidArgument, "commit", path, "unknown durability mode");
  }
  return Status::Ok();
}

// A member's header at Finish: the next generation, and the checksum of
// its first `length` bytes, from the Append stream when every byte came
// that way, else read back from the mapping (the payload's pages come into
// this process's resident memory if they were not).
Result<slot::Header> Store::Rep::FilledHeader(const InPlaceMember& fill, uint64_t length) const {
  auto header = NextHeader(fill.index, fill.target, length, "commit");
  if (!header.ok()) return header;
  header->payload_checksum =
      fill.only_appended && length == fill.appended
          ? fill.checksum->Digest()
          : format::Checksum({mapping->data() + FillOffset(fill), static_cast<size_t>(length)});
  return header;
}

// After a durable finish: the barrier's writeback write-protected the pages
// stored through the mapping, and the next fill of this slot would take a
// fault per page. Drop their page-table entries (the page cache keeps the
// data), as kSync Write does, so that it maps whole folios instead
// (docs/BENCH-LAB.md).
void Store::Rep::ResetFilledPages(const InPlaceMember& fill, uint64_t length) {
  if (fill.only_appended || length == 0) return;
  mapping->ResetPageTables(FillOffset(fill), format::AlignUp(length, page_size));
}

void Store::Rep::TakeFill(Rep*& to, Rep*& from) {
  to = std::exchange(from, nullptr);
  if (to != nullptr) to->in_place->owner = &to;
}

void Store::Rep::DropFill(Rep*& rep) {
  if (rep == nullptr) return;
  // Every target's header stays cleared: the slots are free, the regions'
  // commits are untouched, and nothing needs writing.
  rep->in_place.reset();
  rep = nullptr;
  MarkCommitPhase(internal::kIdle);
}

Status Store::Rep::CheckNotFilling(uint32_t index, const char* operation) const {
  if (!in_place) return Status::Ok();
  for (const InPlaceMember& fill : in_place->members) {
    if (fill.index != index) continue;
    return Status::Error(StatusCode::kBusy, operation, path,
                         "region '" + info.regions[index].name +
                             "' has a commit filled in place pending on this handle "
                             "(PendingCommit or PendingBatch): finish or abort it first");
  }
  return Status::Ok();
}

Status Store::Rep::BeginInPlace(std::span<const BatchReservation> members, bool batch,
                                Store::Rep** owner, const char* operation) {
  if (Status s = BeginWrite(operation); !s.ok()) return s;
  if (in_place) {
    return Status::Error(StatusCode::kBusy, operation, path,
                         "a commit filled in place is already pending on this handle (region '" +
                             info.regions[in_place->members[0].index].name + "'): one at a time");
  }
  std::vector<std::string_view> names;
  for (const BatchReservation& member : members) names.push_back(member.region);
  auto indexes = CheckMembers(names, batch, operation);
  if (!indexes.ok()) return indexes.status();
  for (size_t m = 0; m < members.size(); ++m) {
    const RegionEntry& region = info.regions[(*indexes)[m]];
    if (members[m].max_length > region.capacity) {
      return Status::Error(StatusCode::kInvalidArgument, operation, path,
                           "a commit of up to " + std::to_string(members[m].max_length) +
                               " bytes exceeds the capacity of region '" + region.name + "' (" +
                               std::to_string(region.capacity) + " bytes)");
    }
  }
  for (const uint32_t index : *indexes) {
    if (Status s = SettleRegion(index, /*rewrite=*/false); !s.ok()) return s;
  }
  // Another thread's durable commit of a member may be waiting for its
  // barrier; another thread may begin a fill meanwhile.
  if (Status s = WaitUntilCommittable(*indexes, /*group_entry=*/false, operation); !s.ok()) {
    return s;
  }
  if (in_place) {
    return Status::Error(StatusCode::kBusy, operation, path,
                         "a commit filled in place is already pending on this handle (region '" +
                             info.regions[in_place->members[0].index].name + "'): one at a time");
  }
  InPlaceFill started{.members = {}, .owner = owner};
  for (size_t m = 0; m < members.size(); ++m) {
    const uint32_t index = (*indexes)[m];
    auto target = CommitTarget(index);
    if (!target.ok()) return target.status();
    started.members.push_back({.index = index,
                               .target = *target,
                               .max_length = members[m].max_length,
                               .checksum = std::make_unique<format::ChecksumStream>()});
  }
  // Each target holds neither the newest nor the newest durable commit of
  // its region; from here it holds none at all. As in a mapped commit, the
  // cleared magic is ordered before any payload store (a reader must not
  // see the old magic over new bytes), and is in the page cache before any
  // pwrite of Append.
  MarkCommitPhase(internal::kCopy);
  for (const InPlaceMember& fill : started.members) {
    shared_copy::ClearHeaderMagic(mapping->data() +
                                  slot::HeaderFileOffset(info.regions[fill.index], fill.target));
    regions[fill.index].known_generation[fill.target] = 0;
  }
  std::atomic_thread_fence(std::memory_order_release);
  in_place = std::move(started);
  return Status::Ok();
}

// --- PendingCommit -------------------------------------------------------

Result<PendingCommit> Store::BeginCommit(std::string_view name, uint64_t max_length) {
  const BatchReservation member{name, max_length};
  PendingCommit pending(nullptr);
  HandleLock lock(*rep_);
  if (Status s = rep_->BeginInPlace({&member, 1}, /*batch=*/false, &pending.rep_, kBegin);
      !s.ok()) {
    return s;
  }
  pending.rep_ = rep_.get();
  return pending;
}

PendingCommit::PendingCommit(Store::Rep* rep) : rep_(rep) {}

PendingCommit::PendingCommit(PendingCommit&& other) noexcept {
  Store::Rep::TakeFill(rep_, other.rep_);
}

PendingCommit& PendingCommit::operator=(PendingCommit&& other) noexcept {
  if (this != &other) {
    Abort();
    Store::Rep::TakeFill(rep_, other.rep_);
  }
  return *this;
}

PendingCommit::~PendingCommit() { Abort(); }

std::span<std::byte> PendingCommit::payload() {
  if (rep_ == nullptr) return {};
  return rep_->MappedFill(rep_->in_place->members[0]);
}

uint64_t PendingCommit::appended() const {
  return rep_ == nullptr ? 0 : rep_->in_place->members[0].appended;
}

uint64_t PendingCommit::payload_file_offset() const {
  return rep_ == nullptr ? 0 : rep_->FillOffset(rep_->in_place->members[0]);
}

Status PendingCommit::Append(std::span<const std::byte> bytes) {
  if (rep_ == nullptr) return NotPending(kFill);
  HandleLock lock(*rep_);
  return rep_->AppendToFill(rep_->in_place->members[0], bytes);
}

Result<uint64_t> PendingCommit::Finish(Durability durability) {
  return Finish(appended(), durability);
}

Result<uint64_t> PendingCommit::Finish(uint64_t length, Durability durability) {
  if (rep_ == nullptr) return NotPending("commit");
  Store::Rep& r = *rep_;
  HandleLock lock(r);
  // After Finish, successful or not, the commit is no longer pending: a
  // refused Finish abandons it too (store.h), as Abort would.
  if (Status s = r.CheckFillFinish(r.in_place->members[0], length, durability); !s.ok()) {
    Store::Rep::DropFill(rep_);
    return s;
  }
  const InPlaceMember fill = std::move(r.in_place->members[0]);
  r.in_place.reset();
  rep_ = nullptr;
  auto header = r.FinishFilledCommit(fill, length, durability);
  if (!header.ok()) return header.status();
  if (IsDurable(durability)) r.ResetFilledPages(fill, length);
  r.RecordCommit(fill.index, fill.target, header->generation, durability, length);
  if (!IsDurable(durability)) r.ledger.VolatileCompleted();
  return header->generation;
}

Result<slot::Header> Store::Rep::FinishFilledCommit(const InPlaceMember& fill, uint64_t length,
                                                    Durability durability) {
  const internal::CommitPhaseGuard phase;
  if (Status s = BeginWrite("commit"); !s.ok()) return s;
  auto header = FilledHeader(fill, length);
  if (!header.ok()) return header;
  Status outcome;
  if (IsDurable(durability)) {
    outcome = DurableHeaderAndBarrier(fill.index, fill.target, *header, durability);
  } else {
    outcome = NoteVolatileCommit();
    if (outcome.ok()) outcome = PublishMappedHeader(fill.index, fill.target, *header, durability);
  }
  if (!outcome.ok()) return outcome;
  return header;
}

void PendingCommit::Abort() {
  if (rep_ == nullptr) return;
  HandleLock lock(*rep_);
  Store::Rep::DropFill(rep_);
}

// --- PendingBatch --------------------------------------------------------

Result<PendingBatch> Store::BeginBatch(std::span<const BatchReservation> members) {
  PendingBatch pending(nullptr);
  HandleLock lock(*rep_);
  if (Status s = rep_->BeginInPlace(members, /*batch=*/true, &pending.rep_, kBeginBatch); !s.ok()) {
    return s;
  }
  pending.rep_ = rep_.get();
  return pending;
}

PendingBatch::PendingBatch(Store::Rep* rep) : rep_(rep) {}

PendingBatch::PendingBatch(PendingBatch&& other) noexcept {
  Store::Rep::TakeFill(rep_, other.rep_);
}

PendingBatch& PendingBatch::operator=(PendingBatch&& other) noexcept {
  if (this != &other) {
    Abort();
    Store::Rep::TakeFill(rep_, other.rep_);
  }
  return *this;
}

PendingBatch::~PendingBatch() { Abort(); }

size_t PendingBatch::size() const { return rep_ == nullptr ? 0 : rep_->in_place->members.size(); }

std::span<std::byte> PendingBatch::payload(size_t member) {
  if (member >= size()) return {};
  return rep_->MappedFill(rep_->in_place->members[member]);
}

uint64_t PendingBatch::appended(size_t member) const {
  return member >= size() ? 0 : rep_->in_place->members[member].appended;
}

uint64_t PendingBatch::payload_file_offset(size_t member) const {
  return member >= size() ? 0 : rep_->FillOffset(rep_->in_place->members[member]);
}

Status PendingBatch::Append(size_t member, std::span<const std::byte> bytes) {
  if (rep_ == nullptr) return NotPending(kFill);
  if (member >= size()) {
    return Status::Error(
        StatusCode::kInvalidArgument, kFill, rep_->path,
        "member " + std::to_string(member) + " of a batch of " + std::to_string(size()));
  }
  HandleLock lock(*rep_);
  return rep_->AppendToFill(rep_->in_place->members[member], bytes);
}

Result<std::vector<uint64_t>> PendingBatch::Finish(Durability durability) {
  std::vector<uint64_t> lengths(size());
  for (size_t m = 0; m < lengths.size(); ++m) lengths[m] = appended(m);
  return Finish(lengths, durability);
}

Result<std::vector<uint64_t>> PendingBatch::Finish(std::span<const uint64_t> lengths,
                                                   Durability durability) {
  if (rep_ == nullptr) return NotPending("commit batch");
  Store::Rep& r = *rep_;
  HandleLock lock(r);
  std::vector<InPlaceMember>& members = r.in_place->members;
  // After Finish, successful or not, the batch is no longer pending: a
  // refused Finish abandons it too (store.h), as Abort would.
  if (lengths.size() != members.size()) {
    const Status refused =
        Status::Error(StatusCode::kInvalidArgument, "commit batch", r.path,
                      std::to_string(lengths.size()) + " lengths for a batch of " +
                          std::to_string(members.size()) + " regions");
    Store::Rep::DropFill(rep_);
    return refused;
  }
  for (size_t m = 0; m < members.size(); ++m) {
    if (Status s = r.CheckFillFinish(members[m], lengths[m], durability); !s.ok()) {
      Store::Rep::DropFill(rep_);
      return s;
    }
  }
  const std::vector<InPlaceMember> fills = std::move(members);
  r.in_place.reset();
  rep_ = nullptr;
  auto generations = r.FinishFilledBatch(fills, lengths, durability);
  if (generations.ok() && IsDurable(durability)) {
    for (size_t m = 0; m < fills.size(); ++m) r.ResetFilledPages(fills[m], lengths[m]);
  }
  return generations;
}

Result<std::vector<uint64_t>> Store::Rep::FinishFilledBatch(std::span<const InPlaceMember> fills,
                                                            std::span<const uint64_t> lengths,
                                                            Durability durability) {
  const internal::CommitPhaseGuard phase;
  if (Status s = BeginWrite("commit batch"); !s.ok()) return s;
  auto id = NextBatchId(durability, "commit batch");
  if (!id.ok()) return id.status();
  std::vector<BatchPlanMember> plan(fills.size());
  for (size_t m = 0; m < fills.size(); ++m) {
    auto header = FilledHeader(fills[m], lengths[m]);
    if (!header.ok()) return header.status();
    plan[m] = {.index = fills[m].index, .target = fills[m].target, .pieces = {}, .header = *header};
  }
  return WriteBatch(plan, *id, durability, /*payloads_in_place=*/true);
}

void PendingBatch::Abort() {
  if (rep_ == nullptr) return;
  HandleLock lock(*rep_);
  Store::Rep::DropFill(rep_);
}

}  // namespace regionstore
