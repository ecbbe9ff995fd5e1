// The barrier bookkeeping (ledger.h has the contract).
#include "ledger.h"

#include <algorithm>

namespace regionstore {

void DurabilityLedger::Reset(uint32_t region_count) {
  newest_volatile_.assign(region_count, std::nullopt);
  listed_.assign(region_count, false);
  pending_.clear();
}

void DurabilityLedger::RecordVolatile(const Commit& commit) {
  if (!listed_[commit.region]) {
    listed_[commit.region] = true;
    pending_.push_back(commit.region);
  }
  newest_volatile_[commit.region] = commit;
}

void DurabilityLedger::RecordDurable(uint32_t region) {
  // Left in pending_: Returned() skips a region with nothing volatile.
  newest_volatile_[region].reset();
}

DurabilityLedger::Cover DurabilityLedger::Begin() const {
  Cover cover;
  cover.commits.reserve(pending_.size());
  for (uint32_t region : pending_) {
    if (newest_volatile_[region]) cover.commits.push_back(*newest_volatile_[region]);
  }
  cover.started = started_;
  cover.none_in_flight = started_ == completed_;
  return cover;
}

DurabilityLedger::Covered DurabilityLedger::Returned(const Cover& cover) {
  Covered covered;
  covered.durable = cover.commits;
  // A region whose newest volatile commit is still the covered one has
  // nothing volatile left; one committed again since keeps its newer commit.
  for (const Commit& commit : cover.commits) {
    std::optional<Commit>& newest = newest_volatile_[commit.region];
    if (newest && newest->generation == commit.generation) newest.reset();
  }
  std::erase_if(pending_, [&](uint32_t region) {
    if (newest_volatile_[region]) return false;
    listed_[region] = false;
    return true;
  });
  covered.mark_clearable = cover.none_in_flight && started_ == cover.started;
  return covered;
}

}  // namespace regionstore
