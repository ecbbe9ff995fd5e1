// The state behind test_hooks.h; compiled only into regionstore_testing.
#include "test_hooks.h"

#if !defined(REGIONSTORE_TESTING)
#error "test_hooks.cc belongs to regionstore_testing only (REGIONSTORE_TESTING)"
#endif

namespace regionstore::internal {
inline namespace with_test_hooks {
namespace {
std::atomic<std::atomic<uint32_t>*> g_phase_word{nullptr};
std::atomic<Mutation> g_mutation{Mutation::kCorrect};
std::atomic<VolatilePath> g_volatile_path{VolatilePath::kAuto};
std::atomic<bool> g_background_sync_inline{false};
std::atomic<LoadSetPause> g_pause{nullptr};
std::atomic<void*> g_pause_context{nullptr};
std::atomic<WaitPause> g_wait_pause{nullptr};
std::atomic<void*> g_wait_pause_context{nullptr};
std::atomic<PointHook> g_point_hook{nullptr};
}  // namespace

void SetCommitPhaseWord(std::atomic<uint32_t>* word) { g_phase_word.store(word); }

void MarkCommitPhase(CommitPhase phase) {
  if (std::atomic<uint32_t>* word = g_phase_word.load(std::memory_order_relaxed)) {
    word->store(phase, std::memory_order_seq_cst);
  }
}

void SetMutation(Mutation mutation) { g_mutation.store(mutation); }
Mutation CurrentMutation() { return g_mutation.load(std::memory_order_relaxed); }
void SetVolatilePath(VolatilePath path) { g_volatile_path.store(path); }
VolatilePath CurrentVolatilePath() { return g_volatile_path.load(std::memory_order_relaxed); }
void SetBackgroundSyncInline(bool inline_sync) { g_background_sync_inline.store(inline_sync); }
bool BackgroundSyncInline() { return g_background_sync_inline.load(std::memory_order_relaxed); }

void SetLoadSetPause(LoadSetPause pause, void* context) {
  g_pause_context.store(context);
  g_pause.store(pause);
}

void PauseLoadSet(size_t position) {
  if (LoadSetPause pause = g_pause.load(std::memory_order_relaxed)) {
    pause(g_pause_context.load(), position);
  }
}

void SetWaitPause(WaitPause pause, void* context) {
  g_wait_pause_context.store(context);
  g_wait_pause.store(pause);
}

void PauseWait() {
  if (WaitPause pause = g_wait_pause.load(std::memory_order_relaxed)) {
    pause(g_wait_pause_context.load());
  }
}

void SetPointHook(PointHook hook) { g_point_hook.store(hook); }

void ReachPoint(Point point, uint32_t detail) {
  if (PointHook hook = g_point_hook.load(std::memory_order_relaxed)) hook(point, detail);
}

}  // namespace with_test_hooks
}  // namespace regionstore::internal
