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
// and opens the sidecar again after each sleep. Both words are
// SharedState's (shared_state.h); this file tests no protocol.
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
  if (!r.shared->area_offset()) {
    return Status::Error(StatusCode::kInvalidArgument, kWait, r.path,
                         "the store has no intent area (made before 0.4 with 8,129 to 8,160 "
                         "regions): it has no word for a writer to wake waiters by");
  }
  if (options.recheck.count() <= 0) {
    return Status::Error(StatusCode::kInvalidArgument, kWait, r.path,
                         "WaitOptions::recheck must be positive");
  }
  // The word to read before the headers and sleep on, where the store's
  // protocol keeps it.
  const std::unique_ptr<SharedState::Waiter> waiter = r.shared->StartWaiting();
  const uint64_t start = r.io->MonotonicNanos();
  const uint64_t deadline = SaturatingAdd(start, timeout);
  uint64_t next_recheck = SaturatingAdd(start, options.recheck);
  FileStat opened;
  bool opened_known = false;
  for (;;) {
    // The word before the headers: a commit after this read changes it, and
    // the futex call (or the waiter bit's compare-and-swap) below then
    // fails at once.
    uint32_t seen = waiter->Read();
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
      // A new word to wait on (protocol 2: the writer's sidecar) was not
      // the one read above.
      look_again = waiter->Recheck() || look_again;
    }
    if (look_again) continue;
    internal::PauseWait();
    if (internal::Mutated(internal::Mutation::kWaitReadsWordLate)) {
      seen = waiter->Read();
    }
    const uint64_t until = std::min(deadline, next_recheck);
    const Status waited = waiter->Sleep(seen, until);
    if (waited.code() == StatusCode::kBusy) continue;  // the word moved: look again
    if (!waited.ok() && waited.code() != StatusCode::kTimedOut) {
      return waited.WithOperation(kWait, r.path);
    }
  }
}

}  // namespace regionstore
