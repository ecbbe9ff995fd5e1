// What the children of the crash and reader tests commit and how they report:
// every payload is a pure function of what identifies its commit (CommitId),
// so any byte a reader or a recovery returns can be checked without keeping
// history; children never return into Catch but _exit with a ChildError.
// The stress test's writer commits the same payloads.
#ifndef REGIONSTORE_TESTS_SUPPORT_COMMIT_PAYLOADS_H_
#define REGIONSTORE_TESTS_SUPPORT_COMMIT_PAYLOADS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace regionstore::testing {

// splitmix64's finaliser: a cheap, well-mixed function of one word.
uint64_t Mix64(uint64_t x);

// What identifies one commit's content. `life` tells apart two commits of the
// same generation made by different child processes (the second redoes a
// generation whose first attempt died in flight), so a stale slot left by an
// earlier life cannot pass for the commit the parent expects.
struct CommitId {
  uint64_t generation = 0;
  uint64_t life = 0;
  uint64_t Key() const { return Mix64(generation ^ Mix64(life ^ 0x5eed5eedULL)); }
};

// Word `index` of the payload: word 0 is the generation itself (so a wrong
// copy says in its first bytes which commit it came from), the rest
// pseudo-random.
uint64_t PayloadWord(const CommitId& id, uint64_t key, uint64_t index);

// The payload of `id`, `size` bytes long, into `out`.
void FillPayload(const CommitId& id, uint64_t size, std::vector<std::byte>& out);

// The first offset where `bytes` differs from the payload of `id`, or
// bytes.size() if none does. Streams: no buffer.
uint64_t FirstMismatch(const CommitId& id, std::span<const std::byte> bytes);

// The generation a wrong copy names in its first word, for the message.
uint64_t FirstWord(std::span<const std::byte> bytes);

// Exit codes of the children; anything but SIGKILL (crash test) or 0
// (readers test) fails the case, naming the code.
// Open, Load or Commit failed; Load found another generation than the
// parent's; Commit returned another generation than the next; the report
// pipe failed.
enum ChildError : int {
  kChildOk = 0,
  kChildOpenFailed = 10,
  kChildLoadFailed,
  kChildUnexpectedGeneration,
  kChildCommitFailed,
  kChildCommitGeneration,
  kChildPipeFailed,
};
static_assert(kChildPipeFailed == 15);

// DescribeWait (support/process.h) with a pointer to ChildError for a
// non-zero exit code.
std::string DescribeChild(int wait_status);

// The seed: fixed, so a failure repeats; REGIONSTORE_CRASH_SEED overrides it.
uint64_t SeedOr(uint64_t fixed);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_COMMIT_PAYLOADS_H_
