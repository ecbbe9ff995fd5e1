// Many threads committing through one writable handle (store.h, "Threads
// and processes"; docs/CHECKPOINTS.md, "Many committing threads"): durable
// commits that wait together share one barrier, a barrier covers only the
// commits whose writes returned before its call began, a failed one fails
// every commit waiting on it, and every commit that returned loads
// byte-exact. The cases that hold a barrier in flight do it through the io
// seam (TestIo::OnEnter) and count system calls; none sleeps or times.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "regionstore/store.h"
#include "support/commit_payloads.h"
#include "support/mutation_scope.h"
#include "support/process.h"
#include "support/shared_memory.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"
#include "test_hooks.h"

namespace regionstore::testing {
namespace {

using internal::Mutation;
using internal::Point;

std::string RegionName(size_t r) {
  std::string name = std::to_string(r);
  name.insert(name.begin(), 'r');
  return name;
}

std::vector<CheckpointSpec> Regions(size_t count, uint64_t capacity) {
  std::vector<CheckpointSpec> specs;
  for (size_t r = 0; r < count; ++r) specs.push_back({.name = RegionName(r), .capacity = capacity});
  return specs;
}

std::vector<std::byte> Payload(uint64_t life, uint64_t sequence, uint64_t length) {
  std::vector<std::byte> bytes;
  FillPayload(CommitId{sequence, life}, length, bytes);
  return bytes;
}

// A barrier held in its system call until `needed` durable commits (the
// leader's included) have reached Point::kCommitBeforeBarrier: their
// headers are written and published, and each takes its ticket before it
// lets the handle's mutex go.
struct HeldBarrier {
  std::mutex mutex;
  std::condition_variable changed;
  int at_point = 0;
  int needed = 0;
  bool leader_in_call = false;
  bool released = false;
  int data_syncs = 0;
};
std::atomic<HeldBarrier*> g_held{nullptr};

void CountPoint(Point point, uint32_t /*detail*/) {
  HeldBarrier* held = g_held.load();
  if (held == nullptr || point != Point::kCommitBeforeBarrier) return;
  std::lock_guard lock(held->mutex);
  ++held->at_point;
  held->changed.notify_all();
}

// Installs the hooks on `io` for `held`; the point hook stays for the
// process (a null g_held makes it do nothing).
void HoldFirstDataSync(TestIo& io, HeldBarrier& held) {
  internal::SetPointHook(CountPoint);
  io.OnEnter([&held](Op op) {
    if (op != Op::kDataSync) return;
    std::unique_lock lock(held.mutex);
    if (++held.data_syncs != 1) return;
    held.leader_in_call = true;
    held.changed.notify_all();
    held.changed.wait(lock, [&] { return held.at_point >= held.needed; });
    held.released = true;
  });
}

struct GroupOutcome {
  std::vector<Status> statuses;  // the leader's first
  int data_syncs = 0;
  int returned_while_held = 0;  // followers that returned before the release
};

// Region r0's commit leads; once its fdatasync is in the call, `followers`
// threads commit r1.. and wait beside it. Every region held version 1,
// durable, before; each commit writes version 2.
GroupOutcome RunHeldGroup(const std::string& path, size_t followers, bool fail_barrier) {
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  HeldBarrier held;
  held.needed = static_cast<int>(followers) + 1;
  io.ClearLog();
  g_held.store(&held);
  HoldFirstDataSync(io, held);
  if (fail_barrier) io.FailNth(Op::kDataSync, 1, EIO);

  GroupOutcome outcome;
  outcome.statuses.resize(followers + 1);
  std::vector<bool> early(followers + 1, false);
  auto commit = [&](size_t r) {
    auto done = store.Commit(RegionName(r), Payload(r, 2, 4 * kKiB), Durability::kPwriteFdatasync);
    outcome.statuses[r] = done.ok() ? Status::Ok() : done.status();
    std::lock_guard lock(held.mutex);
    early[r] = !held.released;
  };
  std::thread leader(commit, 0);
  {
    std::unique_lock lock(held.mutex);
    held.changed.wait(lock, [&] { return held.leader_in_call; });
  }
  std::vector<std::thread> threads;
  for (size_t r = 1; r <= followers; ++r) threads.emplace_back(commit, r);
  for (std::thread& t : threads) t.join();
  leader.join();
  g_held.store(nullptr);
  io.OnEnter(nullptr);
  outcome.data_syncs = io.Count(Op::kDataSync);
  for (size_t r = 1; r <= followers; ++r) outcome.returned_while_held += early[r] ? 1 : 0;
  return outcome;
}

// A store of `regions` regions of 4 KiB, each holding version 1, durable.
struct VersionOneStore {
  explicit VersionOneStore(size_t regions) : path(dir.File("store")) {
    MustCreateWithRegions(path, 0, Regions(regions, 4 * kKiB));
    Store store = MustOpen(path, OpenMode::kReadWrite);
    for (size_t r = 0; r < regions; ++r) {
      REQUIRE(
          store.Commit(RegionName(r), Payload(r, 1, 4 * kKiB), Durability::kPwriteFdatasync).ok());
    }
  }
  TempDir dir;
  const std::string path;
};

}  // namespace

TEST_CASE("Durable commits that wait beside a barrier in flight share the next one",
          "[group][threads]") {
  constexpr size_t kFollowers = 5;
  const VersionOneStore made(kFollowers + 1);
  const std::string& path = made.path;

  const GroupOutcome outcome = RunHeldGroup(path, kFollowers, /*fail_barrier=*/false);
  for (const Status& status : outcome.statuses) CHECK(status.ok());
  // The leader's own fdatasync, which began before the others wrote, and
  // one more for all five followers.
  CHECK(outcome.data_syncs == 2);
  CHECK(outcome.returned_while_held == 0);

  Store store = MustOpen(path, OpenMode::kReadWrite);
  for (size_t r = 0; r <= kFollowers; ++r) {
    CheckpointMeta meta;
    CHECK(MustLoad(store, RegionName(r), &meta) == Payload(r, 2, 4 * kKiB));
    CHECK(meta.generation == 2);
  }
}

TEST_CASE("A barrier that began before a commit's writes returned never covers it",
          "[group][threads]") {
  // The negative controls: a follower that returns before a barrier that
  // covers it, and a leader that counts the commits written during its
  // call as covered. Each changes what RunHeldGroup observes.
  constexpr size_t kFollowers = 3;
  const auto broken = GENERATE(Mutation::kFollowerReturnsEarly, Mutation::kGroupCoversLate);
  const VersionOneStore made(kFollowers + 1);
  const std::string& path = made.path;
  GroupOutcome outcome;
  {
    const MutationScope scope(broken);
    outcome = RunHeldGroup(path, kFollowers, /*fail_barrier=*/false);
  }
  INFO("mutation " << static_cast<int>(broken));
  // Either way no barrier begins after the followers' writes: the one
  // fdatasync is the leader's, which began before them.
  CHECK(outcome.data_syncs == 1);
}

TEST_CASE("A failed shared barrier fails every commit waiting on it and poisons the handle",
          "[group][threads]") {
  constexpr size_t kFollowers = 4;
  const VersionOneStore made(kFollowers + 1);
  const std::string& path = made.path;

  const GroupOutcome outcome = RunHeldGroup(path, kFollowers, /*fail_barrier=*/true);
  // The leader's barrier failed; the followers, whose writes it did not
  // cover, get its failure and no barrier of their own.
  for (const Status& status : outcome.statuses) {
    CHECK(status.code() == StatusCode::kIOError);
    CHECK(status.ToString().find("fdatasync") != std::string::npos);
  }
  CHECK(outcome.data_syncs == 1);

  // Every region still holds its version 1, whole: no commit that failed
  // may come back.
  Store store = MustOpen(path, OpenMode::kReadWrite);
  for (size_t r = 0; r <= kFollowers; ++r) {
    CheckpointMeta meta;
    CHECK(MustLoad(store, RegionName(r), &meta) == Payload(r, 1, 4 * kKiB));
    CHECK(meta.generation == 1);
  }
  CheckNothingDamaged(path);
}

TEST_CASE("WaitDurable of a commit still waiting for its barrier waits for it",
          "[group][threads]") {
  // Generation 2 of r0 is visible (a Load gives it) while its barrier is
  // held: WaitDurable must wait for that barrier, not call the generation
  // unknown.
  const VersionOneStore made(1);
  const std::string& path = made.path;
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  HeldBarrier held;
  held.needed = 2;  // the leader and the WaitDurable below, counted by hand
  g_held.store(&held);
  HoldFirstDataSync(io, held);
  std::thread leader([&] {
    CHECK(store.Commit(RegionName(0), Payload(0, 2, 4 * kKiB), Durability::kPwriteFdatasync).ok());
  });
  {
    std::unique_lock lock(held.mutex);
    held.changed.wait(lock, [&] { return held.leader_in_call; });
  }
  CheckpointMeta meta;
  CHECK(MustLoad(store, RegionName(0), &meta) == Payload(0, 2, 4 * kKiB));
  CHECK(meta.generation == 2);
  Status waited;
  std::thread waiter([&] { waited = store.WaitDurable(RegionName(0), 2); });
  // Released only once the waiter waits (counted as a wait for another
  // thread's commit).
  while (store.Stats().waits_for_group_commit == 0) std::this_thread::yield();
  {
    std::lock_guard lock(held.mutex);
    ++held.at_point;
    held.changed.notify_all();
  }
  leader.join();
  waiter.join();
  g_held.store(nullptr);
  io.OnEnter(nullptr);
  CHECK(waited.ok());
  auto durable = store.DurableGeneration(RegionName(0));
  REQUIRE(durable.ok());
  CHECK(*durable == 2);
}

TEST_CASE("A forked child's handle answers while a parent thread held it at fork()", "[group]") {
  // A thread of the parent is inside Sync's fdatasync, the handle's mutex
  // held, when another forks: the child's copy must neither lock it (no
  // thread would ever release it there) nor write.
  const VersionOneStore made(1);
  const std::string& path = made.path;
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  HeldBarrier held;
  held.needed = 1;
  HoldFirstDataSync(io, held);
  std::thread syncing([&] { CHECK(store.Sync().ok()); });
  {
    std::unique_lock lock(held.mutex);
    held.changed.wait(lock, [&] { return held.leader_in_call; });
  }
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::vector<std::byte> out;
    auto loaded = store.Load(RegionName(0), out);
    const bool load_ok = loaded.ok() && out == Payload(0, 1, 4 * kKiB);
    auto refused = store.Commit(RegionName(0), Payload(0, 2, 4 * kKiB), Durability::kNone);
    const bool refused_ok =
        !refused.ok() && refused.status().code() == StatusCode::kInvalidArgument;
    _exit(load_ok && refused_ok && !store.poisoned() ? 0 : 1);
  }
  int status = 0;
  const pid_t reaped = waitpid(child, &status, 0);
  {
    std::lock_guard lock(held.mutex);
    ++held.at_point;
    held.changed.notify_all();
  }
  syncing.join();
  io.OnEnter(nullptr);
  REQUIRE(reaped == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("A writer killed with many durable commits in flight leaves each one whole or absent",
          "[group]") {
  // Each waiting commit has an intent mark of its own; the next open acts
  // on every one of them.
  constexpr size_t kFollowers = 6;
  const VersionOneStore made(kFollowers + 1);
  const std::string& path = made.path;
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Ends the process inside the leader's fdatasync, once every follower
    // waits beside it: seven commits visible, none durable, seven marks.
    TestIo io;
    auto opened = Store::Open(path, OpenMode::kReadWrite, {.io = &io});
    if (!opened.ok()) _exit(2);
    static HeldBarrier held;
    held.needed = kFollowers + 1;
    g_held.store(&held);
    internal::SetPointHook(CountPoint);
    io.OnEnter([](Op op) {
      if (op != Op::kDataSync) return;
      std::unique_lock lock(held.mutex);
      held.changed.wait(lock, [] { return held.at_point >= held.needed; });
      _exit(0);
    });
    std::vector<std::thread> threads;
    for (size_t r = 0; r <= kFollowers; ++r) {
      threads.emplace_back([&, r] {
        (void)opened->Commit(RegionName(r), Payload(r, 2, 4 * kKiB), Durability::kPwriteFdatasync);
      });
    }
    for (std::thread& t : threads) t.join();
    _exit(3);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  Store store = MustOpen(path, OpenMode::kReadWrite);
  for (size_t r = 0; r <= kFollowers; ++r) {
    CheckpointMeta meta;
    const std::vector<std::byte> loaded = MustLoad(store, RegionName(r), &meta);
    INFO("region " << r << " generation " << meta.generation);
    // The page cache holds every commit whole: the open keeps each one,
    // rewritten for its fdatasync.
    CHECK(meta.generation == 2);
    CHECK(loaded == Payload(r, 2, 4 * kKiB));
  }
  CheckNothingDamaged(path);
}

TEST_CASE("Threads commit to their own regions through one handle beside loads and syncs",
          "[group][threads]") {
  constexpr size_t kThreads = 8;
  constexpr size_t kVolatileRegions = 2;
  const uint64_t rounds = ScaledCount(24);
  TempDir dir;
  const std::string path = dir.File("store");
  MustCreateWithRegions(path, 0, Regions(kThreads + kVolatileRegions, 16 * kKiB));
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  const StoreStats before = store.Stats();
  auto length = [](size_t r, uint64_t generation) {
    return 1 + Mix64(generation * 31 + r) % (16 * kKiB);
  };

  std::atomic<int> failures{0};
  std::atomic<size_t> running{kThreads};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t g = 1; g <= rounds; ++g) {
        const Durability mode = g % 3 == 0 ? Durability::kSync : Durability::kPwriteFdatasync;
        auto done = store.Commit(RegionName(t), Payload(t, g, length(t, g)), mode);
        if (!done.ok() || *done != g) ++failures;
      }
      --running;
    });
  }
  // Commits without a barrier, Sync and StartSync, beside the durable ones.
  threads.emplace_back([&] {
    uint64_t g = 0;
    while (running.load() > 0 || g < rounds) {
      ++g;
      for (size_t r = kThreads; r < kThreads + kVolatileRegions; ++r) {
        if (!store.Commit(RegionName(r), Payload(r, g, length(r, g)), Durability::kNone).ok()) {
          ++failures;
        }
      }
      if (g % 4 == 0 && !store.Sync().ok()) ++failures;
      if (g % 4 == 2 && !store.StartSync().ok()) ++failures;
    }
  });
  // A waiter on the writer's own handle and one on a read-only handle of
  // the same process: each newer commit of region 0 byte-exact, up to the
  // last.
  auto reader = Store::Open(path, OpenMode::kReadOnly);
  REQUIRE(reader.ok());
  for (const Store* waiting_on : {&store, &*reader}) {
    threads.emplace_back([&, waiting_on] {
      uint64_t seen = 0;
      std::vector<std::byte> out;
      while (seen < rounds) {
        auto got = waiting_on->WaitForNewer(RegionName(0), seen, std::chrono::seconds(60), out);
        if (!got.ok() || got->generation <= seen ||
            out != Payload(0, got->generation, length(0, got->generation))) {
          ++failures;
          return;
        }
        seen = got->generation;
      }
    });
  }
  // The writer's own loads: whole commits only, each byte-exact for the
  // generation it reports.
  std::atomic<uint64_t> loads{0};
  threads.emplace_back([&] {
    std::vector<std::string_view> names;
    std::vector<std::string> owned;
    for (size_t r = 0; r < kThreads + kVolatileRegions; ++r) owned.push_back(RegionName(r));
    for (const std::string& name : owned) names.push_back(name);
    while (running.load() > 0) {
      std::vector<std::vector<std::byte>> outs;
      auto set = store.LoadSet(names, outs);
      if (!set.ok()) {
        // Regions with no commit yet.
        if (set.status().code() != StatusCode::kNotFound) ++failures;
        continue;
      }
      for (size_t r = 0; r < names.size(); ++r) {
        const uint64_t g = (*set)[r].generation;
        if (outs[r] != Payload(r, g, length(r, g))) ++failures;
      }
      ++loads;
    }
  });
  for (std::thread& t : threads) t.join();
  CHECK(failures.load() == 0);

  for (size_t t = 0; t < kThreads; ++t) {
    CheckpointMeta meta;
    CHECK(MustLoad(store, RegionName(t), &meta) == Payload(t, rounds, length(t, rounds)));
    CHECK(meta.generation == rounds);
    auto durable = store.DurableGeneration(RegionName(t));
    REQUIRE(durable.ok());
    CHECK(*durable == rounds);
  }
  const StoreStats after = store.Stats();
  uint64_t commits = 0;
  for (Durability mode : {Durability::kSync, Durability::kPwriteFdatasync}) {
    commits += after.of(mode).commits - before.of(mode).commits;
  }
  CHECK(commits == kThreads * rounds);
  CHECK(loads.load() > 0);
  CHECK_FALSE(store.poisoned());
}

TEST_CASE("Threads committing one region get its generations in the order their calls returned",
          "[group][threads]") {
  constexpr size_t kThreads = 8;
  const uint64_t rounds = ScaledCount(16);
  TempDir dir;
  const std::string path = dir.File("store");
  MustCreateWithRegions(path, 0, Regions(1, 8 * kKiB));
  Store store = MustOpen(path, OpenMode::kReadWrite);

  std::mutex mutex;
  std::map<uint64_t, std::pair<size_t, uint64_t>> by_generation;  // -> thread, round
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t last = 0;
      for (uint64_t i = 1; i <= rounds; ++i) {
        const Durability mode = i % 2 == 0 ? Durability::kNone : Durability::kPwriteFdatasync;
        auto done = store.Commit("r0", Payload(t, i, 1 + (t * 977 + i * 131) % (8 * kKiB)), mode);
        if (!done.ok() || *done <= last) {
          ++failures;
          continue;
        }
        last = *done;
        std::lock_guard lock(mutex);
        by_generation[*done] = {t, i};
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(failures.load() == 0);
  // Every generation from 1 to the last was given once.
  REQUIRE(by_generation.size() == kThreads * rounds);
  CHECK(by_generation.begin()->first == 1);
  CHECK(by_generation.rbegin()->first == kThreads * rounds);
  const auto [t, i] = by_generation.rbegin()->second;
  CheckpointMeta meta;
  CHECK(MustLoad(store, "r0", &meta) == Payload(t, i, 1 + (t * 977 + i * 131) % (8 * kKiB)));
  CHECK(meta.generation == kThreads * rounds);
}

TEST_CASE("A protocol 1 handle makes each durable commit whole before the next call",
          "[group][threads]") {
  // No intent entry of its own per commit in the store file: commits from
  // several threads each make their own barrier.
  constexpr size_t kThreads = 4;
  const uint64_t rounds = ScaledCount(8);
  TempDir dir;
  const std::string path = dir.File("store");
  MustCreateWithRegions(path, 0, Regions(kThreads, 4 * kKiB), nullptr, /*protocol=*/1);
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  io.ClearLog();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t g = 1; g <= rounds; ++g) {
        if (!store.Commit(RegionName(t), Payload(t, g, 4 * kKiB), Durability::kPwriteFdatasync)
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(failures.load() == 0);
  CHECK(static_cast<uint64_t>(io.Count(Op::kDataSync)) == kThreads * rounds);
  CHECK(store.Stats().waits_for_group_commit == 0);
  for (size_t t = 0; t < kThreads; ++t) {
    CHECK(MustLoad(store, RegionName(t)) == Payload(t, rounds, 4 * kKiB));
  }
}

namespace {

// The kill loop's board, in memory the killed child shares with the test:
// per region, the generation of its last commit whose call returned and
// the newest a load of the writer's own handle was given.
constexpr size_t kKillThreads = 8;
constexpr size_t kKillRegions = kKillThreads + 2;  // and a batch of two
struct KillBoard {
  std::atomic<uint64_t> returned[kKillRegions];
  std::atomic<uint64_t> seen[kKillRegions];
  std::atomic<uint64_t> commits;
};

uint64_t KillLength(size_t r, uint64_t generation) {
  return 1 + Mix64(generation * 977 + r) % (8 * kKiB);
}

// The child: eight threads commit their own regions in every mode, a ninth
// commits batches of the last two regions, a tenth loads every region
// through the same handle; all until the test kills the process.
[[noreturn]] void CommitUntilKilled(const std::string& path, KillBoard& board) {
  auto opened = Store::Open(path, OpenMode::kReadWrite);
  if (!opened.ok()) _exit(2);
  Store& store = *opened;
  auto note = [&](size_t r, uint64_t generation) {
    board.returned[r].store(generation);
    board.commits.fetch_add(1);
  };
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kKillThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t g = board.returned[t].load() + 1;; ++g) {
        const Durability mode = kAllModes[(g + t) % 4];
        auto done = store.Commit(RegionName(t), Payload(t, g, KillLength(t, g)), mode);
        if (!done.ok() || *done != g) _exit(3);
        note(t, g);
      }
    });
  }
  threads.emplace_back([&] {
    for (uint64_t g = board.returned[kKillThreads].load() + 1;; ++g) {
      const std::vector<std::byte> a = Payload(kKillThreads, g, KillLength(kKillThreads, g));
      const std::vector<std::byte> b =
          Payload(kKillThreads + 1, g, KillLength(kKillThreads + 1, g));
      const std::array<std::span<const std::byte>, 1> a_pieces{a};
      const std::array<std::span<const std::byte>, 1> b_pieces{b};
      const std::string a_name = RegionName(kKillThreads);
      const std::string b_name = RegionName(kKillThreads + 1);
      const BatchMember members[] = {{a_name, a_pieces}, {b_name, b_pieces}};
      auto done =
          store.CommitBatch(members, g % 2 == 0 ? Durability::kNone : Durability::kPwriteFdatasync);
      if (!done.ok() || (*done)[0] != g || (*done)[1] != g) _exit(4);
      board.returned[kKillThreads + 1].store(g);
      note(kKillThreads, g);
    }
  });
  threads.emplace_back([&] {
    std::vector<std::string> owned;
    for (size_t r = 0; r < kKillRegions; ++r) owned.push_back(RegionName(r));
    const std::vector<std::string_view> names(owned.begin(), owned.end());
    for (;;) {
      std::vector<std::vector<std::byte>> outs;
      auto set = store.LoadSet(names, outs);
      if (!set.ok()) continue;  // a region with no commit yet
      for (size_t r = 0; r < kKillRegions; ++r) {
        const uint64_t g = (*set)[r].generation;
        if (outs[r] != Payload(r, g, KillLength(r, g))) _exit(5);
        uint64_t before = board.seen[r].load();
        while (before < g && !board.seen[r].compare_exchange_weak(before, g)) {
        }
      }
    }
  });
  for (std::thread& t : threads) t.join();
  _exit(6);
}

}  // namespace

TEST_CASE("Kill loop with eight committing threads: nothing torn, mixed or undone", "[group]") {
  // After each SIGKILL the next open must show, per region, the commit
  // whose call returned last or the one in flight, never older than what a
  // load was given, byte-exact; the batch's two regions at one generation.
  const uint64_t kills = ScaledCount(10);
  TempDir dir;
  const std::string path = dir.File("store");
  MustCreateWithRegions(path, 0, Regions(kKillRegions, 8 * kKiB));
  SharedMemory<KillBoard> board;
  for (uint64_t kill = 0; kill < kills; ++kill) {
    const uint64_t start = board->commits.load();
    // Somewhere in the next 40 to 400 commits.
    const uint64_t at = start + 40 + Mix64(kill + 0x6b111) % 360;
    ChildGuard child(fork());
    REQUIRE(child.pid() >= 0);
    if (child.pid() == 0) CommitUntilKilled(path, *board);
    while (board->commits.load() < at) {
      int status = 0;
      if (waitpid(child.pid(), &status, WNOHANG) == child.pid()) {
        child.Release();
        FAIL("the committing child ended by itself: " << DescribeWait(status));
      }
      sched_yield();
    }
    REQUIRE(::kill(child.pid(), SIGKILL) == 0);
    const int status = Reap(child);
    REQUIRE(WIFSIGNALED(status));

    Store store = MustOpen(path, OpenMode::kReadWrite);
    std::vector<uint64_t> loaded_generations;
    for (size_t r = 0; r < kKillRegions; ++r) {
      const uint64_t returned = board->returned[r].load();
      std::vector<std::byte> loaded;
      auto meta = store.Load(RegionName(r), loaded);
      // A region whose thread had no commit return yet may hold none.
      const uint64_t generation = meta.ok() ? meta->generation : 0;
      INFO("kill " << kill << ", region " << r << ": returned " << returned << ", seen "
                   << board->seen[r].load() << ", loaded " << generation << ": "
                   << (meta.ok() ? std::string("ok") : meta.status().ToString()));
      CHECK((meta.ok() || meta.status().code() == StatusCode::kNotFound));
      CHECK((generation == returned || generation == returned + 1));
      CHECK(generation >= board->seen[r].load());
      if (generation != 0) CHECK(loaded == Payload(r, generation, KillLength(r, generation)));
      // The next child carries on from what the store holds.
      board->returned[r].store(generation);
      board->seen[r].store(generation);
      loaded_generations.push_back(generation);
    }
    // The batch is whole or absent: both its regions at one generation.
    CHECK(loaded_generations[kKillThreads] == loaded_generations[kKillThreads + 1]);
  }
  CheckNothingDamaged(path);
}

}  // namespace regionstore::testing
