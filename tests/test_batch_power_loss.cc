// Simulated power loss with batch commits (docs/CHECKPOINTS.md, "Batches"):
// random interleavings of batches of 2 to 8 regions and single commits, in
// every mode, into compact and 64 KiB-aligned regions of sizes that are not
// multiples of 4 KiB, run against CrashSim. Every crash image is recovered
// by a writer's open and checked: G1 and G3 per region, and the batch
// promise (if any member region holds its batch payload, every member
// region holds its batch payload or a later commit). Kills between
// operations and failed barriers are followed by a reopen in the same boot,
// checked against G2 and all-or-nothing. Two deliberately broken protocols
// must each be caught.
//
// Replay: every violation names its trial seed; REGIONSTORE_SIM_SEED=<n>
// makes trial seeds start at n.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "regionstore/store.h"
#include "slot.h"
#include "store_rep.h"
#include "support/crash_sim.h"
#include "support/files.h"
#include "support/mutation_scope.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

using internal::Mutation;

const std::vector<CheckpointSpec> kRegions = {{"a", 100},
                                              {"b", 4095},
                                              {"c", 13'001},
                                              {"d", 4097, SlotLayout::kAligned},
                                              {"e", 1},
                                              {"f", 64 * kKiB, SlotLayout::kCompact},
                                              {"g", 20'000, SlotLayout::kAligned},
                                              {"h", 5'000}};

// Protocol 2 stores get the smallest journal, so that trials fill it (a
// whole-file barrier, then the journal from its start) and batches too
// large for half of it take protocol 1's path beside journaled ones.
constexpr uint64_t kJournalSize = 256 * kKiB;

std::vector<std::byte> MakeCleanImage(uint32_t protocol) {
  TempDir dir;
  const std::string path = dir.File("base.rgn");
  CreateOptions options;
  options.checkpoints = kRegions;
  options.batch_log = true;
  options.protocol = protocol;
  if (protocol == 2) options.journal_size = kJournalSize;
  const Status status = Store::Create(path, 0, options);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return ReadWholeFile(path);
}

const std::vector<std::byte>& CleanImage(uint32_t protocol) {
  static const std::vector<std::byte> one = MakeCleanImage(1);
  static const std::vector<std::byte> two = MakeCleanImage(2);
  return protocol == 2 ? two : one;
}

struct RegionModel {
  std::map<uint64_t, std::vector<std::byte>> issued;  // since the recovery point
  uint64_t durable = 0;
};
// A batch that returned: (region, generation) per member.
using BatchModel = std::vector<std::pair<size_t, uint64_t>>;

struct Model {
  std::vector<RegionModel> regions = std::vector<RegionModel>(kRegions.size());
  std::vector<BatchModel> batches;
};

// Mostly the previous bytes with a few changed, as applications commit.
std::vector<std::byte> NextPayload(std::mt19937_64& rng, uint64_t capacity,
                                   std::vector<std::byte>& body) {
  uint64_t length = 0;
  switch (rng() % 6) {
    case 0:
      length = 0;
      break;
    case 1:
      length = capacity;
      break;
    case 2:
      length = std::min<uint64_t>(capacity, 4097);
      break;
    default:
      length = rng() % (capacity + 1);
      break;
  }
  if (rng() % 8 == 0 || body.empty()) {
    body.resize(capacity);
    for (auto& b : body) b = static_cast<std::byte>(rng());
  } else {
    for (int i = 0; i < 8; ++i) body[rng() % body.size()] = static_cast<std::byte>(rng());
  }
  return {body.begin(), body.begin() + static_cast<ptrdiff_t>(length)};
}

// Commits `batch` as a batch filled in place (BeginBatch): each member's
// pieces stored through the mapping (told to the simulator, Touch) or
// appended by pwrite, one time in four after an abandoned batch of other
// bytes into the same slots.
Result<std::vector<uint64_t>> CommitBatchInPlace(Store& store, CrashSim& sim,
                                                 std::span<const BatchMember> batch,
                                                 Durability mode, std::mt19937_64& rng) {
  const auto [reservations, lengths] = PlanInPlace(batch);
  if (rng() % 4 == 0) {
    auto abandoned = store.BeginBatch(reservations);
    if (!abandoned.ok()) return abandoned.status();
    for (size_t m = 0; m < batch.size(); ++m) {
      const std::span<std::byte> area = abandoned->payload(m);
      const uint64_t scribbled = rng() % (area.size() + 1);
      for (uint64_t i = 0; i < scribbled; ++i) area[i] = static_cast<std::byte>(rng());
      sim.Touch(abandoned->payload_file_offset(m), scribbled);
    }
    sim.Observe();
  }
  auto pending = store.BeginBatch(reservations);
  if (!pending.ok()) return pending.status();
  for (size_t m = 0; m < batch.size(); ++m) {
    const bool mapped = rng() % 2 == 0;
    uint64_t at = 0;
    for (std::span<const std::byte> piece : batch[m].pieces) {
      if (mapped) {
        std::copy(piece.begin(), piece.end(), pending->payload(m).begin() + at);
      } else if (Status s = pending->Append(m, piece); !s.ok()) {
        return s;
      }
      at += piece.size();
    }
    if (mapped) sim.Touch(pending->payload_file_offset(m), lengths[m]);
  }
  sim.Observe();
  return pending->Finish(lengths, mode);
}

Durability RandomMode(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0:
    case 1:
    case 2:
      return Durability::kNone;
    case 3:
      return Durability::kAsync;
    case 4:
    case 5:
      return Durability::kSync;
    default:
      return Durability::kPwriteFdatasync;
  }
}

// Loads every region of `store`: the generation (0: nothing loads) and bytes.
struct Loaded {
  std::vector<uint64_t> generation;
  std::vector<std::vector<std::byte>> bytes;
};
Loaded LoadAll(const Store& store) {
  Loaded loaded;
  for (const CheckpointSpec& spec : kRegions) {
    std::vector<std::byte> out;
    auto meta = store.Load(spec.name, out);
    loaded.generation.push_back(meta.ok() ? meta->generation : 0);
    loaded.bytes.push_back(meta.ok() ? std::move(out) : std::vector<std::byte>());
  }
  return loaded;
}

// G1, G3 and the batch promise on what `loaded` shows.
void CheckLoaded(const Loaded& loaded, const Model& model, const std::string& where,
                 std::vector<std::string>& violations) {
  for (size_t r = 0; r < kRegions.size(); ++r) {
    const RegionModel& m = model.regions[r];
    const uint64_t g = loaded.generation[r];
    std::ostringstream v;
    v << where << " region '" << kRegions[r].name << "' (durable " << m.durable << "): ";
    if (g == 0) {
      if (m.durable != 0) violations.push_back(v.str() + "G3: nothing loads");
      continue;
    }
    const auto issued = m.issued.find(g);
    if (issued == m.issued.end()) {
      violations.push_back(v.str() + "G1: generation " + std::to_string(g) + " never issued");
    } else if (issued->second != loaded.bytes[r]) {
      violations.push_back(v.str() + "G1: generation " + std::to_string(g) + " differs");
    } else if (g < m.durable) {
      violations.push_back(v.str() + "G3: loads generation " + std::to_string(g));
    }
  }
  for (const BatchModel& batch : model.batches) {
    const auto present = std::find_if(batch.begin(), batch.end(), [&](const auto& member) {
      return loaded.generation[member.first] == member.second;
    });
    if (present == batch.end()) continue;
    for (const auto& [r, g] : batch) {
      if (loaded.generation[r] >= g) continue;
      violations.push_back(where + ": batch torn apart: region '" + kRegions[present->first].name +
                           "' holds its member (generation " + std::to_string(present->second) +
                           ") but region '" + kRegions[r].name + "' holds generation " +
                           std::to_string(loaded.generation[r]) + ", older than its member " +
                           std::to_string(g));
    }
  }
}

// After a recovery that loaded `loaded`: the new starting point.
void RecoveryPoint(const Loaded& loaded, Model& model) {
  for (size_t r = 0; r < kRegions.size(); ++r) {
    RegionModel& m = model.regions[r];
    m.issued.erase(m.issued.upper_bound(loaded.generation[r]), m.issued.end());
    m.durable = loaded.generation[r];
  }
  std::erase_if(model.batches, [&](const BatchModel& batch) {
    return std::any_of(batch.begin(), batch.end(), [&](const auto& member) {
      return loaded.generation[member.first] < member.second;
    });
  });
}

std::vector<std::string> CheckImage(std::vector<std::byte> image, const Model& model,
                                    const std::string& where) {
  std::vector<std::string> violations;
  CrashSim sim(std::move(image), /*track=*/false);
  OpenOptions options;
  options.io = &sim;
  auto store = Store::Open("sim", OpenMode::kReadWrite, options);
  if (!store.ok()) {
    violations.push_back(where + ": open failed: " + store.status().ToString());
    return violations;
  }
  CheckLoaded(LoadAll(*store), model, where, violations);
  return violations;
}

struct Totals {
  uint64_t images = 0, batches = 0, commits = 0, in_flight = 0, failed = 0, reopens = 0;
  std::vector<std::string> violations;
};

// What a reopen in the same boot must find: per region the last returned
// commit; and for a failed operation, its members all at the failed
// payloads or all at the returned ones.
struct Expected {
  std::vector<uint64_t> returned = std::vector<uint64_t>(kRegions.size(), 0);
  std::vector<std::pair<size_t, std::vector<std::byte>>> failed;
};

// `expected` nullptr: the first open after a power loss, where only G1, G3
// and the batch promise hold.
std::optional<Store> Reopen(CrashSim& sim, Model& model, const Expected* expected,
                            const std::string& where, Totals& totals) {
  OpenOptions options;
  options.io = &sim;
  auto opened = Store::Open("sim", OpenMode::kReadWrite, options);
  if (!opened.ok()) {
    totals.violations.push_back(where + ": open failed: " + opened.status().ToString());
    return std::nullopt;
  }
  Loaded loaded = LoadAll(*opened);
  size_t at_failed = 0;
  for (size_t r = 0; r < kRegions.size() && expected != nullptr; ++r) {
    const auto failed = std::find_if(expected->failed.begin(), expected->failed.end(),
                                     [&](const auto& f) { return f.first == r; });
    const bool as_failed = failed != expected->failed.end() &&
                           loaded.generation[r] > expected->returned[r] &&
                           loaded.bytes[r] == failed->second;
    if (as_failed) {
      ++at_failed;
      model.regions[r].issued[loaded.generation[r]] = failed->second;
      continue;
    }
    if (loaded.generation[r] != expected->returned[r]) {
      totals.violations.push_back(where + " region '" + kRegions[r].name +
                                  "': G2: a reopen in the same boot loads generation " +
                                  std::to_string(loaded.generation[r]) + ", not " +
                                  std::to_string(expected->returned[r]));
      return std::nullopt;
    }
  }
  if (expected != nullptr && at_failed != 0 && at_failed != expected->failed.size()) {
    totals.violations.push_back(where + ": a failed batch came back in " +
                                std::to_string(at_failed) + " of its " +
                                std::to_string(expected->failed.size()) + " regions");
    return std::nullopt;
  }
  CheckLoaded(loaded, model, where, totals.violations);
  RecoveryPoint(loaded, model);
  return std::move(*opened);
}

void RunTrial(uint64_t seed, Totals& totals, uint32_t protocol = 1) {
  std::mt19937_64 rng(seed);
  Model model;
  std::vector<std::byte> disk = CleanImage(protocol);
  std::vector<std::vector<std::byte>> bodies(kRegions.size());
  for (int epoch = 0; epoch < 3; ++epoch) {
    const std::string where_epoch =
        "seed " + std::to_string(seed) + " epoch " + std::to_string(epoch);
    CrashSim sim(disk, /*track=*/true);
    Expected expected;
    std::optional<Store> store = Reopen(sim, model, nullptr, where_epoch, totals);
    if (!store) return;
    for (size_t r = 0; r < kRegions.size(); ++r) expected.returned[r] = model.regions[r].durable;

    const int ops = 1 + static_cast<int>(rng() % 8);
    uint64_t last_header_unit = 0;
    for (int op = 0; op < ops; ++op) {
      const std::string where = where_epoch + " op " + std::to_string(op);
      // Two operations in three are batches of 2 to 8 distinct regions.
      std::vector<size_t> members(kRegions.size());
      for (size_t r = 0; r < members.size(); ++r) members[r] = r;
      std::shuffle(members.begin(), members.end(), rng);
      const bool is_batch = rng() % 3 != 0;
      members.resize(is_batch ? 2 + rng() % 7 : 1);
      std::vector<std::vector<std::byte>> payloads;
      for (size_t r : members)
        payloads.push_back(NextPayload(rng, kRegions[r].capacity, bodies[r]));
      const Durability mode = RandomMode(rng);
      const bool durable = mode == Durability::kSync || mode == Durability::kPwriteFdatasync;
      const bool in_flight = op == ops - 1 && rng() % 3 == 0;
      const bool fail = !in_flight && durable && rng() % 10 == 0;
      const bool kill_at_failure = fail && rng() % 2 == 0;
      if (std::getenv("REGIONSTORE_SIM_TRACE") != nullptr) {
        std::fprintf(stderr, "%s: %s mode %d%s%s%s:", where.c_str(), is_batch ? "batch" : "commit",
                     static_cast<int>(mode), in_flight ? " in-flight" : "", fail ? " fail" : "",
                     kill_at_failure ? " kill" : "");
        for (size_t r : members) std::fprintf(stderr, " %s", kRegions[r].name.c_str());
        std::fprintf(stderr, "\n");
      }
      if (in_flight && durable) sim.BeginInFlight();
      if (fail) sim.FailNextBarrier(kill_at_failure);
      Result<std::vector<uint64_t>> done = std::vector<uint64_t>{};
      if (is_batch) {
        std::vector<std::vector<std::span<const std::byte>>> pieces(members.size());
        std::vector<BatchMember> batch;
        for (size_t m = 0; m < members.size(); ++m) {
          // Some payloads in two pieces, split anywhere.
          const std::span<const std::byte> all(payloads[m]);
          const size_t cut = all.empty() ? 0 : rng() % all.size();
          pieces[m] = {all.first(cut), all.subspan(cut)};
          batch.push_back({kRegions[members[m]].name, pieces[m]});
        }
        done = rng() % 3 == 0 ? CommitBatchInPlace(*store, sim, batch, mode, rng)
                              : store->CommitBatch(batch, mode);
      } else {
        auto one = store->Commit(kRegions[members[0]].name, payloads[0], mode);
        done = one.ok() ? Result<std::vector<uint64_t>>(std::vector<uint64_t>{*one})
                        : Result<std::vector<uint64_t>>(one.status());
      }
      // The power goes during the last barrier: what the operation would
      // write after it (the watermark that says the batch is durable) never
      // happens.
      if (in_flight && durable) sim.EndInFlight(/*after_barrier_happened=*/false);
      sim.Observe();
      if (fail) {
        if (done.ok() || done.status().code() != StatusCode::kIOError) {
          totals.violations.push_back(where + ": an operation whose barrier failed returned " +
                                      (done.ok() ? std::string("OK") : done.status().ToString()));
          return;
        }
        ++totals.failed;
        if (kill_at_failure) sim.RestoreKilledState();
        store.reset();
        expected.failed.clear();
        for (size_t m = 0; m < members.size(); ++m) {
          expected.failed.emplace_back(members[m], payloads[m]);
        }
        store = Reopen(sim, model, &expected, where + " (reopened after EIO)", totals);
        if (!store) return;
        expected.failed.clear();
        for (size_t r = 0; r < kRegions.size(); ++r) {
          expected.returned[r] = model.regions[r].durable;
        }
        continue;
      }
      if (!done.ok()) {
        totals.violations.push_back(where + ": failed: " + done.status().ToString());
        return;
      }
      totals.batches += is_batch ? 1 : 0;
      totals.commits += is_batch ? 0 : 1;
      totals.in_flight += in_flight ? 1 : 0;
      BatchModel batch;
      for (size_t m = 0; m < members.size(); ++m) {
        const size_t r = members[m];
        const uint64_t g = (*done)[m];
        model.regions[r].issued[g] = payloads[m];
        expected.returned[r] = g;
        if (!in_flight && durable) model.regions[r].durable = g;
        batch.emplace_back(r, g);
        const RegionReport report = *store->Report(kRegions[r].name);
        const uint64_t header =
            slot::HeaderFileOffset(store->info().regions[r], report.active_slot);
        last_header_unit = header / CrashSim::kUnit;
        if (!durable) sim.Touch(header, slot::kHeaderUnitSize + payloads[m].size());
      }
      if (is_batch) model.batches.push_back(std::move(batch));
      if (op != ops - 1 && rng() % 6 == 0) {
        ++totals.reopens;
        if (std::getenv("REGIONSTORE_SIM_TRACE") != nullptr) std::fprintf(stderr, "reopen\n");
        store.reset();
        store = Reopen(sim, model, &expected, where + " (reopened)", totals);
        if (!store) return;
      }
    }
    std::vector<std::byte> next_disk;
    for (int i = 0; i < 12; ++i) {
      CrashSim::ImageKind kind = CrashSim::ImageKind::kRandom;
      if (i == 0) kind = CrashSim::ImageKind::kOneStale;
      if (i == 1) kind = CrashSim::ImageKind::kOnlyUnitNew;
      if (i == 2) kind = CrashSim::ImageKind::kOnlyUnitOld;
      std::vector<std::byte> image = sim.Image(rng, kind, last_header_unit);
      if (i == 11) next_disk = image;
      auto found = CheckImage(std::move(image), model, where_epoch + " image " + std::to_string(i));
      ++totals.images;
      totals.violations.insert(totals.violations.end(), found.begin(), found.end());
    }
    store.reset();
    disk = std::move(next_disk);
  }
}

uint64_t BaseSeed() {
  if (const char* env = std::getenv("REGIONSTORE_SIM_SEED")) return std::strtoull(env, nullptr, 10);
  return std::random_device{}();
}

// 280 trials x 3 epochs x 12 images = 10,080 images in the Release pass
// (about 27 s here), over stores of `protocol`. Under the sanitizers an
// eighth (ScaledCount's quarter, halved): these two cases were the longest of
// the ASan pass at a quarter, 48 and 50 s.
void RunSimulation(uint32_t protocol, const char* what) {
  const uint64_t base = BaseSeed();
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const uint64_t trials = std::max<uint64_t>(1, testing::ScaledCount(280) / 2);
#else
  const uint64_t trials = testing::ScaledCount(280);
#endif
  INFO("base seed " << base << " (replay with REGIONSTORE_SIM_SEED=" << base << ")");
  Totals totals;
  for (uint64_t t = 0; t < trials; ++t) RunTrial(base + t, totals, protocol);
  WARN(what << ": " << totals.images << " images after " << totals.batches << " batches and "
            << totals.commits << " single commits (" << totals.in_flight << " in flight), "
            << totals.failed << " failed barriers, " << totals.reopens << " reopens, "
            << totals.violations.size() << " violations; base seed " << base);
  for (size_t i = 0; i < std::min<size_t>(totals.violations.size(), 10); ++i) {
    UNSCOPED_INFO(totals.violations[i]);
  }
  CHECK(totals.violations.empty());
  CHECK(totals.images == trials * 3 * 12);
}

TEST_CASE("Power loss among batches and single commits keeps every batch whole",
          "[batch][powerloss][long]") {
  RunSimulation(1, "batch power-loss simulator");
}

// Over protocol 2 stores with a 256 KiB journal: durable batches whose
// record fits in half of it are committed by the record, applied through
// the page cache and replayed by the open after the power loss; larger ones
// take protocol 1's path.
TEST_CASE("Power loss among journaled batches (protocol 2) keeps every batch whole",
          "[batch][powerloss][protocol2][long]") {
  RunSimulation(2, "journaled batch power-loss simulator");
}

TEST_CASE("The journal simulator catches each deliberately broken journal",
          "[batch][powerloss][protocol2]") {
  const uint64_t base = BaseSeed();
  INFO("base seed " << base);
  for (const auto& [mutation, what] :
       {std::pair{Mutation::kJournalRecordNotSynced, "the record is written without RWF_DSYNC"},
        std::pair{Mutation::kJournalNotReplayed, "the open does not replay the journal"}}) {
    MutationScope scope(mutation);
    Totals totals;
    uint64_t trials = 0;
    while (totals.violations.empty() && trials < 300) RunTrial(base + trials++, totals, 2);
    WARN("mutation '" << what << "': caught after " << trials << " trials, " << totals.images
                      << " images"
                      << (totals.violations.empty() ? "" : ": " + totals.violations.front()));
    CHECK_FALSE(totals.violations.empty());
  }
}

TEST_CASE("The batch simulator catches each deliberately broken batch protocol",
          "[batch][powerloss]") {
  const uint64_t base = BaseSeed();
  INFO("base seed " << base);
  for (const auto& [mutation, what] :
       {std::pair{Mutation::kBatchMemberAlone, "a member counts without its record or partners"},
        std::pair{Mutation::kBatchRecordAfterBarrier, "the record is written after the barrier"}}) {
    MutationScope scope(mutation);
    Totals totals;
    uint64_t trials = 0;
    while (totals.violations.empty() && trials < 300) RunTrial(base + trials++, totals);
    WARN("mutation '" << what << "': caught after " << trials << " trials, " << totals.images
                      << " images"
                      << (totals.violations.empty() ? "" : ": " + totals.violations.front()));
    CHECK_FALSE(totals.violations.empty());
  }
}

}  // namespace
}  // namespace regionstore::testing
