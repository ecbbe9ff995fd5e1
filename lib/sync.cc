// Store::Sync, DurableGeneration and WaitDurable: durability after the
// fact, for commits made without a barrier of their own. One whole-file
// barrier (Rep::Barrier) covers every commit whose writes completed before
// it began (ledger.h); docs/GUARANTEES.md, G4, has what that promises.
#include <algorithm>
#include <chrono>

#include "store_rep.h"
#include "test_hooks.h"

namespace regionstore {

namespace {

// Store::Sync with the handle's mutex held.
Result<SyncReport> SyncLocked(Store::Rep& r) {
  if (Status s = r.BeginWrite("sync"); !s.ok()) return s;
  if (internal::Mutated(internal::Mutation::kSyncWithoutBarrier)) return SyncReport{};
  DurabilityLedger::Covered covered;
  const auto start = std::chrono::steady_clock::now();
  if (Status s = r.Barrier({.kind = Store::Rep::BarrierKind::kFdatasync,
                            .counted_as = Durability::kPwriteFdatasync,
                            .operation = "sync: fdatasync",
                            .covered = &covered});
      !s.ok()) {
    return s;
  }
  SyncReport report;
  report.barrier_nanos = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
  report.made_durable.reserve(covered.durable.size());
  for (const DurabilityLedger::Commit& commit : covered.durable) {
    report.made_durable.push_back({r.info.regions[commit.region].name, commit.generation});
  }
  std::sort(report.made_durable.begin(), report.made_durable.end(),
            [](const SyncedCommit& a, const SyncedCommit& b) { return a.region < b.region; });
  return report;
}

// Store::DurableGeneration with the handle's mutex held.
Result<uint64_t> DurableGenerationLocked(Store::Rep& r, std::string_view name) {
  if (!r.writable) {
    // What the writer published in the sidecar (protocol 2).
    auto found = r.FindRegion(name, "durable generation");
    if (!found.ok()) return found.status();
    auto point = r.shared->ReadDurable(*found);
    if (!point.ok()) return point.status();
    // A point newer than every commit the region's slots hold describes
    // another file than this one (a store restored or copied over the path
    // while the sidecar stayed): nothing is known.
    if (*point > r.NewestHeaderGeneration(*found)) return uint64_t{0};
    return *point;
  }
  if (Status s = r.BeginWrite("durable generation"); !s.ok()) return s;
  auto found = r.FindRegion(name, "durable generation");
  if (!found.ok()) return found.status();
  if (Status s = r.SettleRegion(*found, /*rewrite=*/false); !s.ok()) return s;
  const RegionState& state = r.regions[*found];
  return state.durable ? state.known_generation[*state.durable] : 0;
}

}  // namespace

Result<SyncReport> Store::Sync() {
  HandleLock lock(*rep_);
  return SyncLocked(*rep_);
}

Status Store::StartSync() {
  Rep& r = *rep_;
  HandleLock lock(r);
  if (Status s = r.BeginWrite("start sync"); !s.ok()) return s;
  return r.StartBackgroundSync();
}

Result<uint64_t> Store::DurableGeneration(std::string_view name) {
  HandleLock lock(*rep_);
  return DurableGenerationLocked(*rep_, name);
}

Status Store::WaitDurable(std::string_view name, uint64_t generation) {
  HandleLock lock(*rep_);
  // A reader's DurableGeneration reads the writer's sidecar; waiting (and
  // syncing) is the writer's. (DurableGeneration below polls the barrier in
  // flight.)
  if (Status s = rep_->CheckWritable("wait durable"); !s.ok()) return s;
  auto durable = DurableGenerationLocked(*rep_, name);
  if (!durable.ok()) return durable.status();
  if (*durable >= generation) return Status::Ok();
  Rep& r = *rep_;
  const uint32_t index = *r.FindRegion(name, "wait durable");
  // Another thread's durable commit of the region, visible and waiting for
  // its barrier, returns durable or fails: wait for it first.
  while (r.regions[index].in_flight && r.holder != nullptr) {
    ++r.stats.waits_for_group_commit;
    ++r.change_waiters;
    r.WaitFor(r.changed);
    --r.change_waiters;
  }
  if (Status s = r.CheckWritable("wait durable"); !s.ok()) return s;
  {
    const RegionState& state = r.regions[index];
    if (state.durable && state.known_generation[*state.durable] >= generation) return Status::Ok();
  }
  // The barrier in flight may cover it.
  if (r.background_sync) {
    if (Status s = r.FinishBackgroundSync(/*wait=*/true); !s.ok()) return s;
    const RegionState& state = r.regions[index];
    if (state.durable && state.known_generation[*state.durable] >= generation) return Status::Ok();
  }
  if (generation > r.regions[index].max_generation) {
    return Status::Error(StatusCode::kInvalidArgument, "wait durable", r.path,
                         "region '" + std::string(name) + "' has no commit of generation " +
                             std::to_string(generation) + " (its newest is " +
                             std::to_string(r.regions[index].max_generation) + ")");
  }
  auto synced = SyncLocked(r);
  if (!synced.ok()) return synced.status().WithOperation("wait durable", r.path);
  return Status::Ok();
}

}  // namespace regionstore
