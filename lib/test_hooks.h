// Test hooks: where a commit is, for the process-crash tests, and
// deliberately broken protocols, for the power-loss simulator to prove that
// it catches them. They exist only where REGIONSTORE_TESTING is defined (the
// regionstore_testing library, which tests/ and tests/fuzz link). Everywhere
// else (the shared library) MarkCommitPhase is empty
// and CurrentMutation() a constant kCorrect, so every mutation branch folds
// away and neither the hooks nor their state are in the binary. Internal.
//
// The two spellings live in different inline namespaces: an object built
// with the hooks and one built without them never share a definition, and a
// test built with REGIONSTORE_TESTING that links the release objects fails
// to link instead of running without its hooks.
#ifndef REGIONSTORE_LIB_TEST_HOOKS_H_
#define REGIONSTORE_LIB_TEST_HOOKS_H_

#include <atomic>
#include <cstdint>

namespace regionstore::internal {

// Where a commit is, for the process-crash tests: they point this at a word
// in shared memory and SIGKILL the child while it says kCopy or kFlush.
enum CommitPhase : uint32_t { kIdle = 0, kCopy = 1, kFlush = 2 };

// Deliberately broken protocols (kCorrect everywhere but in those tests).
enum class Mutation : uint32_t {
  kCorrect = 0,
  // Durable commits write header and payload, then flush only the header's
  // page: the payload may not be on disk when the commit returns.
  kBarrierHeaderOnly,
  // Plain two-slot alternation: the target is "the slot after the newest",
  // even when it holds the newest durable commit.
  kTwoSlotAlternation,
  // Recovery and Load trust a header whose checksum matches without checking
  // the payload's checksum.
  kSkipPayloadCheck,
  // Recovery takes the slot with the highest raw generation field as the
  // newest and durable one, without validating its header.
  kTargetFromRawGeneration,
  // A region's first commit through a handle settles its newest and durable
  // slot from the newest header that checks out, without checking that
  // slot's payload (Load still checks what it copies).
  kSettleTrustsHeader,
  // A writer's open reads no intent mark: a commit whose barrier failed
  // (and whose process died before zeroing it) is taken as durable.
  kIgnoreIntentMarks,
  // A member of a batch counts on its own checks, without its batch record
  // or its partners (readers and the writer's open alike).
  kBatchMemberAlone,
  // A durable batch writes its record after its barrier instead of before.
  kBatchRecordAfterBarrier,
  // LoadSet ignores the publication word: it reads each region's headers
  // once, as loading the regions one after another would.
  kLoadSetIgnoresPublication,
  // WaitForNewer reads the wake word after its check of the region instead
  // of before: a commit between the two is a lost wake-up.
  kWaitReadsWordLate,
  // A writer's open undoes every commit and batch whose barrier did not
  // return in this boot (zeroes the commit's header, withdraws the batch's
  // members), though readers may have been given them: the rule before 0.11.
  kRecoveryUndoesUnfinishedBarrier,
  // Protocol 2: a writer's open trusts a sidecar that this boot's identity
  // entry does not name (one made anew after the old one was removed), so
  // the marks that went with the old one are taken as absent.
  kIgnoreLostSidecar,
  // A journaled batch writes its record without RWF_DSYNC: the batch
  // returns before its commit point is on stable storage.
  kJournalRecordNotSynced,
  // A writer's open does not replay the batch journal: members that had
  // not reached the disk from the page cache stay lost.
  kJournalNotReplayed,
  // Store::Sync returns success without its fdatasync: commits made without
  // a barrier are reported durable though only the page cache holds them.
  kSyncWithoutBarrier,
  // A background barrier takes its cover when it completes instead of before
  // its fdatasync: commits that completed during the call count as covered.
  kBackgroundCoversLate,
  // A commit may take the slot of a commit that the background barrier in
  // flight covers (the last slot a power cut would leave it).
  kOverwriteCoveredInFlight,
  // Protocol 2: a commit without a barrier is published to readers as
  // durable when it returns, before any barrier covered it.
  kPublishVolatileAsDurable,
  // A durable commit that shares a barrier with others takes the
  // commits that completed during the leader's call as covered by it.
  kGroupCoversLate,
  // A durable commit that finds another commit's barrier in flight returns
  // at once instead of waiting for a barrier that covers it.
  kFollowerReturnsEarly,
};

// Fixed points of a commit, a batch and an open, where a test can stop the
// writer (a kill test raises SIGKILL there) instead of aiming a kill by luck.
enum class Point : uint32_t {
  // A durable single commit: its header is visible and published, its
  // barrier not yet called.
  kCommitBeforeBarrier,
  // A durable batch: every member's header is visible and the publication
  // pair closed, the barrier not yet called.
  kBatchBeforeBarrier,
  // A batch (any mode): member number `detail` (0-based) has its header in
  // the page cache; the publication pair is still open.
  kBatchMemberHeader,
  // A writer's open: recovery wrote what it writes, its fdatasync not yet
  // called.
  kRecoveryBeforeBarrier,
  // Any barrier that sets the kFileBarrier mark (commits without a barrier
  // were pending): the mark is written, the msync or fdatasync not yet
  // called.
  kFileBarrierMarked,
  // A call is about to wait for the background barrier in flight
  // (Store::StartSync) to return.
  kWaitForBackgroundSync,
};

// Which way a commit without a barrier, above the size that always goes
// through the mapping, writes its slot: as the handle judges (commit.cc),
// or always one way, for tests that must cover one path.
enum class VolatilePath : uint32_t { kAuto = 0, kMapping, kPwrite };

#if defined(REGIONSTORE_TESTING)
inline namespace with_test_hooks {
// Set before any commit.
void SetVolatilePath(VolatilePath path);
VolatilePath CurrentVolatilePath();
// Store::StartSync runs its fdatasync on the calling thread, at once, and
// the handle completes it only when a call must wait for it (another
// barrier, a commit with no free slot, WaitDurable, the destructor), as if
// the call were still running until then: for the power-loss simulator,
// whose disk is not thread-safe. Set before opening.
void SetBackgroundSyncInline(bool inline_sync);
bool BackgroundSyncInline();
// Not synchronised with running commits: set it before any.
void SetCommitPhaseWord(std::atomic<uint32_t>* word);
void MarkCommitPhase(CommitPhase phase);
// Set before opening. Each check costs one relaxed load.
void SetMutation(Mutation mutation);
Mutation CurrentMutation();
inline bool Mutated(Mutation mutation) { return CurrentMutation() == mutation; }
// Called by LoadSet after it read the headers of the set's region number
// `position` in a snapshot: lets a test change the store at that moment.
using LoadSetPause = void (*)(void* context, size_t position);
void SetLoadSetPause(LoadSetPause pause, void* context);
void PauseLoadSet(size_t position);
// Called by Store::WaitForNewer after it read the wake word and found
// nothing newer, just before it sleeps on the word: lets a test commit in
// the window a lost wake-up would come from.
using WaitPause = void (*)(void* context);
void SetWaitPause(WaitPause pause, void* context);
void PauseWait();
// Called at each Point with its detail (see Point); a test's hook may end
// the process there. Set it before opening.
using PointHook = void (*)(Point point, uint32_t detail);
void SetPointHook(PointHook hook);
void ReachPoint(Point point, uint32_t detail = 0);
}  // namespace with_test_hooks
#else
inline namespace without_test_hooks {
inline void MarkCommitPhase(CommitPhase) {}
inline void PauseLoadSet(size_t) {}
inline void PauseWait() {}
inline void ReachPoint(Point, uint32_t = 0) {}
constexpr bool Mutated(Mutation) { return false; }
constexpr VolatilePath CurrentVolatilePath() { return VolatilePath::kAuto; }
constexpr bool BackgroundSyncInline() { return false; }
}  // namespace without_test_hooks
#endif

// In the same inline namespace as the MarkCommitPhase it calls, so that
// its two spellings stay apart too.
#if defined(REGIONSTORE_TESTING)
inline namespace with_test_hooks {
#else
inline namespace without_test_hooks {
#endif
// Sets the phase word back to kIdle when it goes out of scope: a commit or
// batch path that set kCopy or kFlush leaves the word idle by any exit,
// returned or failed, with no reset by hand.
class CommitPhaseGuard {
 public:
  CommitPhaseGuard() = default;
  CommitPhaseGuard(const CommitPhaseGuard&) = delete;
  CommitPhaseGuard& operator=(const CommitPhaseGuard&) = delete;
  ~CommitPhaseGuard() { MarkCommitPhase(kIdle); }
};
}  // namespace with_test_hooks or without_test_hooks

}  // namespace regionstore::internal

#endif  // REGIONSTORE_LIB_TEST_HOOKS_H_
