// The barrier bookkeeping's contract (lib/ledger.h), one rule at a time:
// a barrier covers what completed before it began, never more, whatever
// runs while its system call does, and in whatever order barriers return.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "ledger.h"

namespace regionstore {
namespace {

using Commit = DurabilityLedger::Commit;

std::vector<uint64_t> Generations(const std::vector<Commit>& commits) {
  std::vector<uint64_t> out;
  for (const Commit& commit : commits) out.push_back(commit.generation);
  return out;
}

// A volatile commit as a handle makes one: started, recorded, completed.
void Volatile(DurabilityLedger& ledger, uint32_t region, uint32_t slot, uint64_t generation) {
  ledger.VolatileStarted();
  ledger.RecordVolatile({region, slot, generation});
  ledger.VolatileCompleted();
}

}  // namespace

TEST_CASE("A barrier covers the commits completed before it began, one per region", "[ledger]") {
  DurabilityLedger ledger;
  ledger.Reset(3);
  Volatile(ledger, 0, 1, 5);
  Volatile(ledger, 0, 2, 6);  // the region's newest: only it is covered
  Volatile(ledger, 2, 0, 9);
  const auto cover = ledger.Begin();
  const auto covered = ledger.Returned(cover);
  CHECK(Generations(covered.durable) == std::vector<uint64_t>{6, 9});
  CHECK(covered.mark_clearable);
  // Nothing is left for the next barrier.
  CHECK(ledger.Begin().commits.empty());
}

TEST_CASE("A commit that completes while a barrier runs stays volatile when it returns",
          "[ledger]") {
  DurabilityLedger ledger;
  ledger.Reset(2);
  Volatile(ledger, 0, 1, 5);
  const auto cover = ledger.Begin();
  Volatile(ledger, 0, 2, 6);  // after the barrier began: not covered
  Volatile(ledger, 1, 0, 3);
  const auto covered = ledger.Returned(cover);
  CHECK(Generations(covered.durable) == std::vector<uint64_t>{5});
  // A commit started after the barrier began keeps the mark down.
  CHECK_FALSE(covered.mark_clearable);
  const auto next = ledger.Begin();
  CHECK(Generations(next.commits) == std::vector<uint64_t>{6, 3});
  CHECK(ledger.Returned(next).mark_clearable);
}

TEST_CASE("A commit in flight when a barrier begins keeps the volatile mark down", "[ledger]") {
  DurabilityLedger ledger;
  ledger.Reset(1);
  ledger.VolatileStarted();  // its writes are under way
  const auto cover = ledger.Begin();
  ledger.RecordVolatile({0, 1, 4});
  ledger.VolatileCompleted();
  const auto covered = ledger.Returned(cover);
  CHECK(covered.durable.empty());
  CHECK_FALSE(covered.mark_clearable);
}

TEST_CASE("A durable commit takes its region out of what a barrier has to cover", "[ledger]") {
  DurabilityLedger ledger;
  ledger.Reset(2);
  Volatile(ledger, 0, 1, 5);
  Volatile(ledger, 1, 1, 2);
  ledger.RecordDurable(0);
  const auto covered = ledger.Returned(ledger.Begin());
  CHECK(Generations(covered.durable) == std::vector<uint64_t>{2});
  // And a later volatile commit of that region is tracked again, once.
  Volatile(ledger, 0, 2, 7);
  Volatile(ledger, 0, 0, 8);
  CHECK(Generations(ledger.Begin().commits) == std::vector<uint64_t>{8});
}

TEST_CASE("Overlapping barriers each apply their own cover, in either order of return",
          "[ledger]") {
  DurabilityLedger ledger;
  ledger.Reset(1);
  Volatile(ledger, 0, 1, 5);
  const auto first = ledger.Begin();
  Volatile(ledger, 0, 2, 6);
  const auto second = ledger.Begin();
  // The later barrier returns first: it covers both commits' region as of
  // its start (generation 6) and leaves nothing volatile.
  const auto later = ledger.Returned(second);
  CHECK(Generations(later.durable) == std::vector<uint64_t>{6});
  CHECK(later.mark_clearable);
  // The earlier one then names generation 5, which its caller must not
  // take over the durable 6 (rule 4); the ledger has nothing to drop.
  const auto earlier = ledger.Returned(first);
  CHECK(Generations(earlier.durable) == std::vector<uint64_t>{5});
  CHECK(ledger.Begin().commits.empty());
}

}  // namespace regionstore
