#include "crashvm/plan.h"

#include <algorithm>
#include <cstring>
#include <random>

namespace regionstore::crashvm {
namespace {

// splitmix64's finaliser.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t Between(std::mt19937_64& rng, uint64_t low, uint64_t high) {  // inclusive
  return low + rng() % (high - low + 1);
}

// Payload sizes that find the edges: one byte, a page and a byte either
// side, the whole capacity, and anything between.
uint64_t CommitSize(std::mt19937_64& rng, uint64_t capacity) {
  switch (rng() % 7) {
    case 0:
      return 1;
    case 1:
      return capacity;
    case 2:
      return std::min<uint64_t>(capacity, 4096);
    case 3:
      return std::min<uint64_t>(capacity, 4095);
    case 4:
      return std::min<uint64_t>(capacity, 4097);
    default:
      return Between(rng, 1, capacity);
  }
}

Op KindOp(OpKind kind) {
  Op op;
  op.kind = kind;
  return op;
}

Op CommitOp(uint32_t region, uint64_t size, Durability mode, uint64_t generation) {
  Op op;
  op.kind = OpKind::kCommit;
  op.region = region;
  op.size = size;
  op.mode = mode;
  op.generation = generation;
  return op;
}

// A commit of a random size to a random region, numbered after the
// region's last.
Op RandomCommit(const Plan& plan, std::mt19937_64& rng, std::vector<uint64_t>& generation,
                Durability mode) {
  const auto region = static_cast<uint32_t>(rng() % plan.regions.size());
  const uint64_t size = CommitSize(rng, plan.regions[region].capacity);
  return CommitOp(region, size, mode, ++generation[region]);
}

// A batch of 2 to all of the plan's regions, in random order, sizes as
// CommitSize gives.
Op RandomBatch(const Plan& plan, std::mt19937_64& rng, std::vector<uint64_t>& generation,
               Durability mode) {
  std::vector<uint32_t> order(plan.regions.size());
  for (uint32_t r = 0; r < order.size(); ++r) order[r] = r;
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(Between(rng, 2, plan.regions.size()));
  Op op = KindOp(OpKind::kBatch);
  op.mode = mode;
  for (uint32_t region : order) {
    const uint64_t size = CommitSize(rng, plan.regions[region].capacity);
    op.members.push_back({region, size, ++generation[region]});
    op.size += size;
  }
  return op;
}

// Commits in a random mix of every mode and size into four regions (large
// and compact slots, capacities that are and are not whole pages), with one
// close and reopen of the writer in the middle. `breakage` kBarrierHeaderOnly
// makes every commit kSync, so that each one depends on its barrier.
Plan CommitsPlan(Plan plan) {
  plan.data_size = 64 * 1024;
  plan.regions = {{"big", 1024 * 1024, SlotLayout::kAuto},
                  {"mid", 200000, SlotLayout::kAuto},
                  {"small", 4096, SlotLayout::kAuto},
                  {"odd", 70001, SlotLayout::kAligned}};
  std::mt19937_64 rng(plan.seed);
  std::vector<uint64_t> generation(plan.regions.size(), 0);
  plan.ops.push_back(KindOp(OpKind::kCreateStore));
  const bool all_sync = plan.breakage == Breakage::kBarrierHeaderOnly;
  const int commits = all_sync ? 16 : 44;
  for (int i = 0; i < commits; ++i) {
    if (i == commits / 2) plan.ops.push_back(KindOp(OpKind::kReopen));
    const auto region = static_cast<uint32_t>(rng() % plan.regions.size());
    const auto mode = all_sync ? Durability::kSync : static_cast<Durability>(rng() % 4);
    const uint64_t size = CommitSize(rng, plan.regions[region].capacity);
    plan.ops.push_back(CommitOp(region, size, mode, ++generation[region]));
  }
  return plan;
}

// Commits without a barrier (kNone and kAsync, sizes from 1 byte to 1 MiB:
// through the mapping up to 16 KiB, above it by pwrite or through the
// mapping as the handle judges its pages) into three regions of a protocol
// 2 store, a Store::Sync after every two to five of them, then a kSync
// commit to a fourth region (its msync flushes the device but writes back
// only its own range, so the log has a flush after every Sync's marker that
// a skipped fdatasync leaves the other regions' pages behind), and one
// close and reopen of the writer in the middle: after a power cut each
// region holds the newest commit a returned Sync covered, or a newer whole
// one (G4). `breakage` kSyncWithoutBarrier makes every Sync skip its
// fdatasync.
Plan SyncPlan(Plan plan) {
  plan.protocol = 2;
  plan.data_size = 64 * 1024;
  plan.regions = {{"big", 1024 * 1024, SlotLayout::kAuto},
                  {"mid", 200000, SlotLayout::kAuto},
                  {"odd", 70001, SlotLayout::kAligned},
                  {"small", 4096, SlotLayout::kAuto}};
  std::mt19937_64 rng(plan.seed);
  std::vector<uint64_t> generation(plan.regions.size(), 0);
  plan.ops.push_back(KindOp(OpKind::kCreateStore));
  const int rounds = 10;
  for (int round = 0; round < rounds; ++round) {
    if (round == rounds / 2) plan.ops.push_back(KindOp(OpKind::kReopen));
    const uint64_t commits = Between(rng, 2, 5);
    for (uint64_t c = 0; c < commits; ++c) {
      const auto region = static_cast<uint32_t>(rng() % 3);
      const Durability mode = rng() % 3 == 0 ? Durability::kAsync : Durability::kNone;
      const uint64_t size = CommitSize(rng, plan.regions[region].capacity);
      plan.ops.push_back(CommitOp(region, size, mode, ++generation[region]));
    }
    plan.ops.push_back(KindOp(OpKind::kSync));
    plan.ops.push_back(CommitOp(3, CommitSize(rng, 4096), Durability::kSync, ++generation[3]));
  }
  return plan;
}

// Batches of 2 to 6 regions and single commits interleaved, in every mode,
// into six regions (large and compact slots, capacities that are and are not
// whole pages) of a store with a batch log, with one close and reopen of the
// writer in the middle. `breakage` kBatchRecordLate makes every op a durable
// batch, so that each depends on its record being under the barrier.
Plan BatchesPlan(Plan plan) {
  plan.data_size = 64 * 1024;
  plan.batch_log = true;
  plan.regions = {{"big", 1024 * 1024, SlotLayout::kAuto}, {"mid", 200000, SlotLayout::kAuto},
                  {"small", 4096, SlotLayout::kAuto},      {"odd", 70001, SlotLayout::kAligned},
                  {"tiny", 100, SlotLayout::kCompact},     {"pair", 9000, SlotLayout::kAuto}};
  std::mt19937_64 rng(plan.seed);
  std::vector<uint64_t> generation(plan.regions.size(), 0);
  plan.ops.push_back(KindOp(OpKind::kCreateStore));
  const bool control = plan.breakage == Breakage::kBatchRecordLate;
  const int ops = control ? 16 : 36;
  for (int i = 0; i < ops; ++i) {
    if (i == ops / 2) plan.ops.push_back(KindOp(OpKind::kReopen));
    const uint64_t m = rng() % 4;
    const Durability mode = control
                                ? (m % 2 == 0 ? Durability::kSync : Durability::kPwriteFdatasync)
                                : static_cast<Durability>(m);
    if (!control && rng() % 10 < 4) {
      plan.ops.push_back(RandomCommit(plan, rng, generation, mode));
      continue;
    }
    plan.ops.push_back(RandomBatch(plan, rng, generation, mode));
  }
  return plan;
}

// Commits and batches killed after readers could see them and before their
// barrier, each followed by a writer's open (recovery) in the same boot and
// by more commits: what a reader was given must survive the recovery and,
// once the open returned, a power cut. Six rounds on a store with a batch
// log, in every durability mode around the killed ops (which are durable:
// only those have a barrier to be killed before).
Plan SeenPlan(Plan plan) {
  plan.data_size = 64 * 1024;
  plan.batch_log = true;
  plan.regions = {{"big", 1024 * 1024, SlotLayout::kAuto},
                  {"small", 4096, SlotLayout::kAuto},
                  {"tiny", 100, SlotLayout::kCompact},
                  {"odd", 70001, SlotLayout::kAligned}};
  std::mt19937_64 rng(plan.seed);
  std::vector<uint64_t> generation(plan.regions.size(), 0);
  const auto commit = [&](Durability mode) {
    plan.ops.push_back(RandomCommit(plan, rng, generation, mode));
  };
  const auto batch = [&](Durability mode) {
    plan.ops.push_back(RandomBatch(plan, rng, generation, mode));
  };
  plan.ops.push_back(KindOp(OpKind::kCreateStore));
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 2; ++i) {
      const auto mode = static_cast<Durability>(rng() % 4);
      if (rng() % 2 == 0) {
        commit(mode);
      } else {
        batch(mode);
      }
    }
    const Durability durable = rng() % 2 == 0 ? Durability::kSync : Durability::kPwriteFdatasync;
    // Alternate, so that every seed kills both kinds.
    if (round % 2 == 0) {
      commit(durable);
      plan.ops.back().killed = true;
      Op reopen = KindOp(OpKind::kReopenLoad);
      reopen.region = plan.ops.back().region;
      plan.ops.push_back(reopen);
    } else {
      batch(durable);
      plan.ops.back().killed = true;
      plan.ops.push_back(KindOp(OpKind::kReopen));
    }
  }
  commit(Durability::kNone);
  batch(Durability::kSync);
  return plan;
}

// Threads committing through one handle at once (OpKind::kThreads): eight
// regions of 1 byte to 64 KiB, each op one durable commit per region, now
// and then a round of kNone commits and a Sync. Protocol 2 (protocol 1
// handles make each durable commit whole, one after another).
Plan ThreadsPlan(Plan plan) {
  plan.protocol = 2;
  std::mt19937_64 rng(plan.seed);
  for (int r = 0; r < 8; ++r) {
    const uint64_t capacity = r % 2 == 0 ? 4096 : Between(rng, 100, 65536);
    std::string name = std::to_string(r);
    name.insert(name.begin(), 't');
    plan.regions.push_back({name, capacity, SlotLayout::kAuto});
  }
  plan.ops.push_back(KindOp(OpKind::kCreateStore));
  std::vector<uint64_t> generation(plan.regions.size(), 0);
  for (int round = 0; round < 12; ++round) {
    Op op = KindOp(OpKind::kThreads);
    op.mode = round % 5 == 3   ? Durability::kNone
              : round % 2 == 0 ? Durability::kPwriteFdatasync
                               : Durability::kSync;
    for (uint32_t r = 0; r < plan.regions.size(); ++r) {
      op.members.push_back({r, Between(rng, 1, plan.regions[r].capacity), ++generation[r]});
    }
    plan.ops.push_back(op);
    if (round % 5 == 3) plan.ops.push_back(KindOp(OpKind::kSync));
  }
  return plan;
}

// Raw data-area writes in every mode, and Flush of ranges written before.
Plan RawPlan(Plan plan) {
  plan.data_size = 1024 * 1024;
  std::mt19937_64 rng(plan.seed);
  plan.ops.push_back(KindOp(OpKind::kCreateStore));
  std::vector<uint32_t> writes;
  for (int i = 0; i < 40; ++i) {
    Op op;
    if (!writes.empty() && rng() % 10 < 3) {
      // Flush a range an earlier write covered, or a random one.
      op.kind = OpKind::kFlush;
      if (rng() % 3 != 0) {
        const Op& earlier = plan.ops[writes[rng() % writes.size()]];
        op.offset = earlier.offset;
        op.size = earlier.size;
      } else {
        op.offset = Between(rng, 0, plan.data_size - 1);
        op.size = Between(rng, 1, plan.data_size - op.offset);
      }
      op.mode = rng() % 2 == 0 ? Durability::kSync : Durability::kPwriteFdatasync;
    } else {
      op.kind = OpKind::kWrite;
      switch (rng() % 5) {
        case 0:
          op.size = 1;
          break;
        case 1:
          op.size = 4095;
          break;
        case 2:
          op.size = 4097;
          break;
        case 3:
          op.size = 8192 + 13;
          break;
        default:
          op.size = Between(rng, 1, 65536);
          break;
      }
      op.offset = Between(rng, 0, plan.data_size - op.size);
      const uint64_t m = rng() % 20;
      op.mode = m < 7    ? Durability::kNone
                : m < 9  ? Durability::kAsync
                : m < 14 ? Durability::kSync
                         : Durability::kPwriteFdatasync;
      writes.push_back(static_cast<uint32_t>(plan.ops.size()));
    }
    plan.ops.push_back(op);
  }
  return plan;
}

// One file replaced again and again, as `regionctl export` does.
Plan ExportPlan(Plan plan) {
  std::mt19937_64 rng(plan.seed);
  for (int i = 0; i < 16; ++i) {
    Op op;
    op.kind = OpKind::kExport;
    op.path = "out.bin";
    switch (rng() % 4) {
      case 0:
        op.size = 4096;
        break;
      case 1:
        op.size = 1024 * 1024;
        break;
      default:
        op.size = Between(rng, 16, 200000);
        break;
    }
    plan.ops.push_back(op);
  }
  return plan;
}

// New stores, and one path replaced by new stores; each op's data size
// tells the stores apart.
Plan CreatePlan(Plan plan) {
  const std::vector<std::pair<OpKind, std::string>> steps = {
      {OpKind::kCreate, "rep.rs"},        {OpKind::kCreate, "new-1.rs"},
      {OpKind::kCreateReplace, "rep.rs"}, {OpKind::kCreate, "new-3.rs"},
      {OpKind::kCreateReplace, "rep.rs"}, {OpKind::kCreateReplace, "rep.rs"},
      {OpKind::kCreate, "new-6.rs"},      {OpKind::kCreateReplace, "rep.rs"}};
  plan.regions = {{"r", 5000, SlotLayout::kAuto}};
  for (size_t i = 0; i < steps.size(); ++i) {
    Op op;
    op.kind = steps[i].first;
    op.path = steps[i].second;
    op.size = (i + 1) * 64 * 1024 + (plan.seed % 16) * 4096;
    plan.ops.push_back(op);
  }
  return plan;
}

// A durable commit whose payload write the disk fails (blkdebug), what a
// reopen in the same boot finds, then durable commits after it.
Plan EioPlan(Plan plan) {
  plan.data_size = 64 * 1024;
  plan.regions = {{"r", 64 * 1024, SlotLayout::kAuto}};
  plan.prepared_on_host = true;
  plan.ops.push_back(KindOp(OpKind::kReopen));
  Op failing = CommitOp(0, 64 * 1024, Durability::kPwriteFdatasync, 2);
  failing.expect_failure = true;
  plan.ops.push_back(failing);
  plan.ops.push_back(KindOp(OpKind::kReopenLoad));
  plan.ops.push_back(CommitOp(0, 64 * 1024, Durability::kPwriteFdatasync, 0));
  plan.ops.push_back(CommitOp(0, 5000, Durability::kSync, 0));
  plan.ops.push_back(CommitOp(0, 3000, Durability::kNone, 0));
  return plan;
}

void FillBytes(uint64_t key, uint64_t offset, std::span<std::byte> out) {
  for (size_t i = 0; i < out.size(); ++i) {
    const uint64_t x = offset + i;
    out[i] = static_cast<std::byte>(Mix(key ^ (x / 8)) >> (8 * (x % 8)));
  }
}

}  // namespace

const std::vector<std::string>& WorkloadNames() {
  static const std::vector<std::string> names = {"commits",
                                                 "batches",
                                                 "raw",
                                                 "export",
                                                 "create",
                                                 "eio",
                                                 "seen",
                                                 "commits-p2",
                                                 "batches-p2",
                                                 "seen-p2",
                                                 "sync",
                                                 "threads",
                                                 "commits-barrier-header-only",
                                                 "batches-record-late",
                                                 "export-no-dirsync",
                                                 "seen-recovery-undoes",
                                                 "commits-p2-barrier-header-only",
                                                 "batches-p2-record-late",
                                                 "sync-no-barrier",
                                                 "threads-follower-early",
                                                 "threads-covers-late"};
  return names;
}

namespace {

// "commits-p2-barrier-header-only" -> "commits-barrier-header-only".
std::string WithoutProtocol2(std::string_view workload) {
  std::string name(workload);
  if (const size_t at = name.find("-p2");
      at != std::string::npos && (at + 3 == name.size() || name[at + 3] == '-')) {
    name.erase(at, 3);
  }
  return name;
}

}  // namespace

bool IsNegativeControl(std::string_view workload) {
  const std::string base = WithoutProtocol2(workload);
  return base == "commits-barrier-header-only" || base == "batches-record-late" ||
         base == "export-no-dirsync" || base == "seen-recovery-undoes" ||
         base == "sync-no-barrier" || base == "threads-follower-early" ||
         base == "threads-covers-late";
}

Plan MakePlan(std::string_view name, uint64_t seed) {
  Plan plan;
  plan.workload = std::string(name);
  plan.seed = seed;
  // The protocol 2 workloads: the same plans on a protocol 2 store.
  plan.base = WithoutProtocol2(name);
  if (plan.base != name) {
    if (plan.base != "commits" && plan.base != "batches" && plan.base != "seen" &&
        plan.base != "commits-barrier-header-only" && plan.base != "batches-record-late") {
      return plan;
    }
    plan.protocol = 2;
  }
  const std::string_view workload = plan.base;
  if (workload == "commits") return CommitsPlan(std::move(plan));
  if (workload == "commits-barrier-header-only") {
    plan.breakage = Breakage::kBarrierHeaderOnly;
    return CommitsPlan(std::move(plan));
  }
  if (workload == "batches") return BatchesPlan(std::move(plan));
  if (workload == "batches-record-late") {
    plan.breakage = Breakage::kBatchRecordLate;
    return BatchesPlan(std::move(plan));
  }
  if (workload == "raw") return RawPlan(std::move(plan));
  if (workload == "export") return ExportPlan(std::move(plan));
  if (workload == "export-no-dirsync") {
    plan.breakage = Breakage::kNoDirectorySync;
    return ExportPlan(std::move(plan));
  }
  if (workload == "create") return CreatePlan(std::move(plan));
  if (workload == "eio") return EioPlan(std::move(plan));
  if (workload == "sync") return SyncPlan(std::move(plan));
  if (workload == "sync-no-barrier") {
    plan.breakage = Breakage::kSyncWithoutBarrier;
    return SyncPlan(std::move(plan));
  }
  if (workload == "threads") return ThreadsPlan(std::move(plan));
  if (workload == "threads-follower-early") {
    plan.breakage = Breakage::kFollowerReturnsEarly;
    return ThreadsPlan(std::move(plan));
  }
  if (workload == "threads-covers-late") {
    plan.breakage = Breakage::kGroupCoversLate;
    return ThreadsPlan(std::move(plan));
  }
  if (workload == "seen") return SeenPlan(std::move(plan));
  if (workload == "seen-recovery-undoes") {
    plan.breakage = Breakage::kRecoveryUndoesSeen;
    return SeenPlan(std::move(plan));
  }
  return plan;
}

namespace {

// The region's body for this seed, cut to `size`, with a few bytes changed
// by `index` and the index in the first eight bytes.
std::vector<std::byte> PayloadOf(const Plan& plan, uint32_t index, uint32_t region, uint64_t size) {
  std::vector<std::byte> out(plan.regions[region].capacity);
  FillBytes(Mix(plan.seed ^ (region + 1) * 0x100000001b3ULL), 0, out);
  out.resize(size);
  for (int i = 0; i < 8 && !out.empty(); ++i) {
    const uint64_t r = Mix(plan.seed ^ Mix(index * 8 + i));
    out[r % out.size()] = static_cast<std::byte>(r >> 56);
  }
  const uint64_t tag = index;
  std::memcpy(out.data(), &tag, std::min<size_t>(8, out.size()));
  return out;
}

}  // namespace

std::vector<std::byte> CommitPayload(const Plan& plan, uint32_t index) {
  const Op& op = plan.ops[index];
  return PayloadOf(plan, index, op.region, op.size);
}

std::vector<std::byte> MemberPayload(const Plan& plan, uint32_t index, size_t member) {
  const Member& m = plan.ops[index].members[member];
  return PayloadOf(plan, index, m.region, m.size);
}

std::vector<uint64_t> PieceCuts(const Plan& plan, uint32_t index, size_t member) {
  // One to three pieces; a cut may fall at 0 or at the end (an empty piece).
  const uint64_t size = plan.ops[index].members[member].size;
  const uint64_t r = Mix(plan.seed ^ Mix(index * 64 + member + 0xc07));
  std::vector<uint64_t> cuts;
  for (uint64_t i = 0; i < r % 3; ++i) cuts.push_back(Mix(r + i) % (size + 1));
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

std::vector<std::byte> PreparedPayload(const Plan& plan) {
  std::vector<std::byte> out(plan.regions[0].capacity - 100);
  FillBytes(Mix(plan.seed ^ 0x9e9a9ed), 0, out);
  return out;
}

std::vector<std::byte> AfterRecoveryPayload(const Plan& plan, uint32_t region) {
  std::vector<std::byte> out(std::min<uint64_t>(plan.regions[region].capacity, 3000));
  FillBytes(Mix(plan.seed ^ 0xaf7e7 ^ region), 0, out);
  return out;
}

std::byte RawByte(const Plan& plan, uint32_t index, uint64_t data_offset) {
  std::byte b;
  FillBytes(Mix(plan.seed ^ Mix(index + 0x7a3)), data_offset, std::span<std::byte>(&b, 1));
  return b;
}

std::vector<std::byte> RawBytes(const Plan& plan, uint32_t index) {
  const Op& op = plan.ops[index];
  std::vector<std::byte> out(op.size);
  FillBytes(Mix(plan.seed ^ Mix(index + 0x7a3)), op.offset, out);
  return out;
}

std::vector<std::byte> ExportBytes(const Plan& plan, uint32_t index) {
  const Op& op = plan.ops[index];
  std::vector<std::byte> out(op.size);
  FillBytes(Mix(plan.seed ^ Mix(index + 0xe4b)), 0, out);
  const uint64_t header[2] = {index, op.size};
  std::memcpy(out.data(), header, std::min<size_t>(sizeof(header), out.size()));
  return out;
}

std::string_view OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kCreateStore:
      return "create-store";
    case OpKind::kCommit:
      return "commit";
    case OpKind::kBatch:
      return "batch";
    case OpKind::kReopen:
      return "reopen";
    case OpKind::kReopenLoad:
      return "reopen-load";
    case OpKind::kWrite:
      return "write";
    case OpKind::kFlush:
      return "flush";
    case OpKind::kExport:
      return "export";
    case OpKind::kCreate:
      return "create";
    case OpKind::kCreateReplace:
      return "create-replace";
    case OpKind::kSync:
      return "sync";
    case OpKind::kThreads:
      return "threads";
  }
  return "?";
}

}  // namespace regionstore::crashvm
