#include "temp_registry.h"

#include <atomic>
#include <cstring>

#include "io/signal_safe.h"
#include "regionstore/temp_files.h"

namespace regionstore {
namespace internal {
namespace {

constexpr int kSlots = 64;
constexpr size_t kMaxPath = 4096;

// A slot's life: kFree -> kWriting (its owner copies the path) -> kLive ->
// kFree when its owner is done. A signal handler takes kLive -> kRemoving,
// unlinks, then -> kRemoved, which only the owner turns back into kFree. So
// the path is never rewritten while a handler reads it, and a slot is never
// handed to a new temp while its old path may still be unlinked.
enum State : int { kFree, kWriting, kLive, kRemoving, kRemoved };

struct Slot {
  std::atomic<int> state{kFree};
  char path[kMaxPath];
};

static_assert(std::atomic<int>::is_always_lock_free,
              "a signal handler may only use lock-free atomics");

// Zero-initialized static storage: nothing to construct, usable from any
// static constructor or signal handler.
Slot slots[kSlots];

}  // namespace

int RegisterTemp(const std::string& path) noexcept {
  if (path.size() >= kMaxPath) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (slots[i].state.compare_exchange_strong(expected, kWriting, std::memory_order_acquire)) {
      std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
      slots[i].state.store(kLive, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void UnregisterTemp(int slot) noexcept {
  if (slot < 0 || slot >= kSlots) return;
  std::atomic<int>& state = slots[slot].state;
  for (;;) {
    int seen = state.load(std::memory_order_acquire);
    // Another thread's handler is inside its unlink: a few microseconds.
    if (seen == kRemoving) continue;
    if (state.compare_exchange_weak(seen, kFree, std::memory_order_acq_rel)) return;
  }
}

}  // namespace internal

int RemoveLiveTempFiles() noexcept {
  int removed = 0;
  for (internal::Slot& slot : internal::slots) {
    int expected = internal::kLive;
    if (!slot.state.compare_exchange_strong(expected, internal::kRemoving,
                                            std::memory_order_acq_rel)) {
      continue;
    }
    if (internal::UnlinkForSignal(slot.path) == 0) ++removed;
    slot.state.store(internal::kRemoved, std::memory_order_release);
  }
  return removed;
}

}  // namespace regionstore
