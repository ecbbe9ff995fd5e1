// WaitForNewer: a reader sleeps until a region holds a newer commit, in any
// process, without polling (docs/CHECKPOINTS.md, "Readers that wait").
//
// The wake word is the low 32 bits of the publication word (intent.h),
// which the writer changes after every change of a visible commit and then
// wakes (Rep::WritePublication). A waiter reads the word, then the region's
// headers; only if nothing newer is there does it sleep, and only while the
// word still holds what it read. A commit that lands between the two
// changed the word first (the writer stores the header, then the word, then
// wakes), so the futex call returns at once: no wake-up is lost.
//
// Protocol 2 stores (sidecar.h): the wake word is the sidecar's, and a
// waiter sets its waiter bit by compare-and-swap from the value it read
// before it sleeps; a commit in between moved the word, so the swap fails
// and the waiter looks again. The writer wakes only when the bit is set.
// A handle that cannot open the sidecar for writing, or holds one the
// store's identity entry does not name, cannot be woken: it polls
// (kPollWithoutSidecar) and opens the sidecar again after each sleep.
#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "intent.h"
#include "region_check.h"
#include "shared_copy.h"
#include "store_rep.h"
#include "test_hooks.h"

namespace regionstore {
namespace {

constexpr const char* kWait = "wait";
// How often a waiter on a protocol 2 store looks again when it has no
// sidecar of the writer's it can write (so no writer wakes it).
constexpr std::chrono::milliseconds kPollWithoutSidecar{10};

uint64_t SaturatingAdd(uint64_t a, std::chrono::nanoseconds b) {
  const auto add = static_cast<uint64_t>(std::max<int64_t>(b.count(), 0));
  return add > UINT64_MAX - a ? UINT64_MAX : a + add;
}

}  // namespace

uint64_t Store::Rep::NewestHeaderGeneration(uint32_t index) const {
  const RegionEntry& region = info.regions[index];
  const std::byte* base = mapping->data();
  std::vector<slot::HeaderBytes> headers(region.slot_count);
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    headers[i] = shared_copy::LoadHeaderWords(base + slot::HeaderFileOffset(region, i));
  }
  const bool batch_ids =
      region_check::ReadBatchContext(region_check::MappingReader(*mapping), info)->batch_ids();
  const std::vector<region_check::ValidHeader> valid =
      region_check::ValidHeadersNewestFirst(headers, region, index, batch_ids);
  return valid.empty() ? 0 : valid.front().header.generation;
}

Status Store::Rep::RefreshSidecar(std::shared_ptr<sidecar::Sidecar>& slot, OpenMode mode) const {
  if (slot && SidecarIsCurrent(*slot)) return Status::Ok();
  if (slot) {
    // The writer uses another file than the one at the path (a store
    // reached by another name, or a sidecar restored under it): opening the
    // path again would give the same file, once per poll.
    const Result<FileStat> named = io->StatPath(sidecar::PathFor(path));
    if (named.ok() && named->device == slot->device && named->inode == slot->inode) {
      return Status::Ok();
    }
  }
  const Result<FileStat> store = file->Stat();
  if (!store.ok()) return store.status();
  auto opened = sidecar::Open(*io, path, *store, mode, /*create=*/false);
  if (!opened.ok()) return opened.status();
  slot = std::make_shared<sidecar::Sidecar>(std::move(*opened));
  return Status::Ok();
}

std::shared_ptr<sidecar::Sidecar> Store::Rep::WaitSidecar() const {
  std::lock_guard lock(sidecar_mutex);
  // A writer's is the store's: its open named it.
  if (!writable) static_cast<void>(RefreshSidecar(sidecar, OpenMode::kReadWrite));
  return sidecar;
}

Result<std::shared_ptr<const sidecar::Sidecar>> Store::Rep::ReadSidecar() const {
  if (std::shared_ptr<sidecar::Sidecar> writable_one = WaitSidecar();
      writable_one != nullptr && SidecarIsCurrent(*writable_one)) {
    return std::shared_ptr<const sidecar::Sidecar>(std::move(writable_one));
  }
  std::lock_guard lock(sidecar_mutex);
  if (Status s = RefreshSidecar(sidecar_read_only, OpenMode::kReadOnly); !s.ok()) {
    if (sidecar) return std::shared_ptr<const sidecar::Sidecar>(sidecar);
    return s;
  }
  return std::shared_ptr<const sidecar::Sidecar>(sidecar_read_only);
}

bool Store::Rep::SidecarIsCurrent(const sidecar::Sidecar& side) const {
  const std::optional<uint64_t> area = intent::AreaOffset(info);
  if (!area) return false;
  const intent::EntryBytes bytes = shared_copy::LoadSharedWords<intent::kEntrySize>(
      mapping->data() + *area + uint64_t{intent::kSidecarEntry} * intent::kEntrySize);
  const std::optional<intent::Entry> entry = intent::DecodeEntry(bytes);
  // No writer has opened the store yet: any sidecar is as good as fresh.
  if (!entry || entry->kind != intent::Kind::kSidecar) return side.id() == 0;
  return entry->generation == side.id() && entry->slot == side.inode_tag;
}

Status Store::Rep::CheckStillNamed(FileStat& opened, bool& known) const {
  if (!known) {
    auto stat = file->Stat();
    if (!stat.ok()) return stat.status().WithOperation(kWait, path);
    opened = *stat;
    known = true;
  }
  auto named = io->StatPath(path);
  if (!named.ok() && named.status().code() == StatusCode::kNotFound) {
    return Status::Error(StatusCode::kStoreReplaced, kWait, path,
                         "the store's path no longer exists (removed or renamed away); this "
                         "handle still reads the old file, which no writer will change: reopen "
                         "the path");
  }
  if (!named.ok()) return named.status().WithOperation(kWait, path);
  if (named->device != opened.device || named->inode != opened.inode) {
    return Status::Error(StatusCode::kStoreReplaced, kWait, path,
                         "the path now names another file (inode " + std::to_string(named->inode) +
                             ", the handle's is " + std::to_string(opened.inode) +
                             "): the store was replaced; reopen the path to wait on the new one");
  }
  return Status::Ok();
}

Result<CheckpointMeta> Store::WaitForNewer(std::string_view name, uint64_t generation,
                                           std::chrono::nanoseconds timeout,
                                           std::vector<std::byte>& out,
                                           const WaitOptions& options) const {
  const Rep& r = *rep_;
  auto found = r.FindRegion(name, kWait);
  if (!found.ok()) return found.status();
  const std::optional<uint64_t> area = intent::AreaOffset(r.info);
  if (!area) {
    return Status::Error(StatusCode::kInvalidArgument, kWait, r.path,
                         "the store has no intent area (made before 0.4 with 8,129 to 8,160 "
                         "regions): it has no word for a writer to wake waiters by");
  }
  if (options.recheck.count() <= 0) {
    return Status::Error(StatusCode::kInvalidArgument, kWait, r.path,
                         "WaitOptions::recheck must be positive");
  }
  const uint64_t word_offset = *area + uint64_t{intent::kPublicationEntry} * intent::kEntrySize;
  const bool protocol_2 = r.info.protocol() == 2;
  std::shared_ptr<sidecar::Sidecar> registry = protocol_2 ? r.WaitSidecar() : nullptr;
  const uint64_t start = r.io->MonotonicNanos();
  const uint64_t deadline = SaturatingAdd(start, timeout);
  uint64_t next_recheck = SaturatingAdd(start, options.recheck);
  FileStat opened;
  bool opened_known = false;
  for (;;) {
    // The word before the headers: a commit after this read changes it, and
    // the futex call (or the waiter bit's compare-and-swap) below then
    // fails at once.
    const auto* word = registry != nullptr
                           ? registry->wake_word()
                           : reinterpret_cast<const uint32_t*>(r.mapping->data() + word_offset);
    uint32_t seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    bool look_again = false;
    if (r.NewestHeaderGeneration(*found) > generation) {
      auto meta = Load(name, out);
      if (meta.ok() && meta->generation > generation) return meta;
      // Not yet a newer commit Load can return: a batch still being
      // published (the word moves again when it is), a torn newest commit
      // (the next commit moves it), or the writer rewriting the slot
      // (kBusy: look again without sleeping).
      const StatusCode code = meta.ok() ? StatusCode::kOk : meta.status().code();
      look_again = code == StatusCode::kBusy;
      if (code != StatusCode::kOk && code != StatusCode::kBusy && code != StatusCode::kNotFound &&
          code != StatusCode::kTornCommit) {
        return meta.status();
      }
    }
    const uint64_t now = r.io->MonotonicNanos();
    if (now >= deadline) {
      return Status::Error(StatusCode::kTimedOut, kWait, r.path,
                           "region '" + r.info.regions[*found].name +
                               "' has no commit above generation " + std::to_string(generation) +
                               " after waiting " + std::to_string((now - start) / 1'000'000) +
                               " ms");
    }
    if (now >= next_recheck) {
      if (Status s = r.CheckStillNamed(opened, opened_known); !s.ok()) return s;
      next_recheck = SaturatingAdd(now, options.recheck);
      if (protocol_2 && registry == nullptr) {
        registry = r.WaitSidecar();
        // Its word was not the one read above.
        look_again = look_again || registry != nullptr;
      }
    }
    if (look_again) continue;
    internal::PauseWait();
    if (internal::Mutated(internal::Mutation::kWaitReadsWordLate)) {
      seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    }
    const uint64_t until = std::min(deadline, next_recheck);
    Status waited;
    // A sidecar the store's identity entry does not name (removed and made
    // anew, or one beside another path to the store) is no writer's: its
    // word may never move. Poll until it is the store's again.
    if (registry != nullptr && r.SidecarIsCurrent(*registry)) {
      const std::optional<uint32_t> value = sidecar::Register(*registry, seen);
      if (!value) continue;  // a commit moved the word: look again
      waited = registry->mapping->WaitWord(sidecar::kWakeOffset, *value, until);
    } else if (protocol_2) {
      // Nobody wakes a waiter that could not register: poll, sleeping on
      // the store's own word, which no protocol 2 writer moves, and look
      // for the writer's sidecar again after each sleep.
      const uint64_t poll = SaturatingAdd(r.io->MonotonicNanos(), kPollWithoutSidecar);
      const uint32_t still = __atomic_load_n(
          reinterpret_cast<const uint32_t*>(r.mapping->data() + word_offset), __ATOMIC_ACQUIRE);
      waited = r.mapping->WaitWord(word_offset, still, std::min(until, poll));
      registry = r.WaitSidecar();
    } else {
      waited = r.mapping->WaitWord(word_offset, seen, until);
    }
    if (!waited.ok() && waited.code() != StatusCode::kTimedOut) {
      return waited.WithOperation(kWait, r.path);
    }
  }
}

}  // namespace regionstore
