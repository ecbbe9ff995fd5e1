// Durability after the fact (Store::Sync, DurableGeneration, WaitDurable),
// and the way commits without a barrier write their slot: by pwrite into
// pages the handle has no reason to think writable, so that a commit into
// pages writeback cleaned takes no write fault per page. What a power cut
// leaves after a Sync is the simulator's (test_power_loss.cc).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "regionstore/store.h"
#include "slot.h"
#include "support/files.h"
#include "support/mutation_scope.h"
#include "support/process.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"
#include "test_hooks.h"

namespace regionstore::testing {
namespace {

using internal::VolatilePath;

const std::vector<CheckpointSpec> kSyncRegions = {{"big", 2 * kMiB}, {"small", 4 * kKiB}};

// A store of kSyncRegions in `dir`, and its path.
std::string NewStore(TempDir& dir) {
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, kSyncRegions);
  return path;
}

// Minor faults of this thread so far.
long MinorFaults() {
  rusage usage{};
  REQUIRE(::getrusage(RUSAGE_THREAD, &usage) == 0);
  return usage.ru_minflt;
}

// Sets the volatile path for the scope of a test.
class VolatilePathScope {
 public:
  explicit VolatilePathScope(VolatilePath path) { internal::SetVolatilePath(path); }
  ~VolatilePathScope() { internal::SetVolatilePath(VolatilePath::kAuto); }
  VolatilePathScope(const VolatilePathScope&) = delete;
  VolatilePathScope& operator=(const VolatilePathScope&) = delete;
};

}  // namespace

TEST_CASE("Sync makes the commits without a barrier durable and names them", "[store][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);

  auto first = store.Commit("big", PatternBytes(kMiB, 1), Durability::kNone);
  REQUIRE(first.ok());
  auto second = store.Commit("big", PatternBytes(kMiB, 2), Durability::kNone);
  auto small = store.Commit("small", PatternBytes(100, 3), Durability::kAsync);
  REQUIRE(second.ok());
  REQUIRE(small.ok());
  CHECK(*store.DurableGeneration("big") == 0);
  CHECK(*store.DurableGeneration("small") == 0);

  const int syncs_before = io.Count(Op::kDataSync);
  auto synced = store.Sync();
  REQUIRE(synced.ok());
  CHECK(io.Count(Op::kDataSync) == syncs_before + 1);
  // The region's newest commit is what was made durable; the first was
  // superseded.
  REQUIRE(synced->made_durable.size() == 2);
  CHECK(synced->made_durable[0].region == "big");
  CHECK(synced->made_durable[0].generation == *second);
  CHECK(synced->made_durable[1].region == "small");
  CHECK(synced->made_durable[1].generation == *small);
  CHECK(*store.DurableGeneration("big") == *second);
  CHECK(*store.DurableGeneration("small") == *small);

  // Nothing new: the barrier runs (raw writes may be pending) and covers
  // no commit.
  auto again = store.Sync();
  REQUIRE(again.ok());
  CHECK(again->made_durable.empty());
  CHECK(io.Count(Op::kDataSync) == syncs_before + 2);

  // A durable commit needs no Sync.
  auto durable = store.Commit("small", PatternBytes(200, 4), Durability::kSync);
  REQUIRE(durable.ok());
  CHECK(*store.DurableGeneration("small") == *durable);
  CHECK(store.DurableGeneration("none").status().code() == StatusCode::kNotFound);
}

TEST_CASE("WaitDurable returns at once for a durable commit and syncs for one that is not",
          "[store][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  auto committed = store.Commit("small", PatternBytes(300, 5), Durability::kNone);
  REQUIRE(committed.ok());

  const int syncs_before = io.Count(Op::kDataSync);
  REQUIRE(store.WaitDurable("small", *committed).ok());
  CHECK(io.Count(Op::kDataSync) == syncs_before + 1);
  CHECK(*store.DurableGeneration("small") == *committed);
  // Already durable: no barrier, for it or for an older generation.
  REQUIRE(store.WaitDurable("small", *committed).ok());
  REQUIRE(store.WaitDurable("small", 1).ok());
  CHECK(io.Count(Op::kDataSync) == syncs_before + 1);

  const Status never = store.WaitDurable("small", *committed + 1);
  CHECK(never.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(never.message(), Catch::Contains("no commit of generation"));
  CHECK(store.WaitDurable("none", 1).code() == StatusCode::kNotFound);
}

TEST_CASE("Sync, a commit, a kill: the reopen loads the newest commit and reports it durable",
          "[store][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  const auto synced_bytes = PatternBytes(kMiB + 7, 6);
  const auto later_bytes = PatternBytes(kMiB - 7, 7);
  uint64_t synced_generation = 0;
  uint64_t later_generation = 0;
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    auto committed = store.Commit("big", synced_bytes, Durability::kNone);
    REQUIRE(committed.ok());
    synced_generation = *committed;
    REQUIRE(store.Sync().ok());
    auto later = store.Commit("big", later_bytes, Durability::kNone);
    REQUIRE(later.ok());
    later_generation = *later;
  }
  // The power stayed on: the newest commit is there, and the one Sync
  // covered is the durable one a writer's open reports.
  Store reopened = MustOpen(path, OpenMode::kReadWrite);
  CheckpointMeta meta;
  CHECK(MustLoad(reopened, "big", &meta) == later_bytes);
  CHECK(meta.generation == later_generation);
  CHECK(*reopened.DurableGeneration("big") == later_generation);
  CHECK(later_generation == synced_generation + 1);
}

TEST_CASE("A failed Sync reports the error, poisons the handle, and the next open recovers",
          "[store][sync][fault]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  const auto bytes = PatternBytes(64 * kKiB, 8);
  {
    TestIo io;
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    REQUIRE(store.Commit("big", bytes, Durability::kNone).ok());
    io.FailNth(Op::kDataSync, 1, EIO);
    auto failed = store.Sync();
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.status().code() == StatusCode::kIOError);
    CHECK(failed.status().sys_errno() == EIO);
    CHECK_THAT(failed.status().ToString(), Catch::Contains("sync: fdatasync"));
    CHECK(store.poisoned());
    CHECK(store.DurableGeneration("big").status().code() == StatusCode::kPoisoned);
    // Linux reports a writeback error once: every later call says it.
    CHECK(store.Sync().status().code() == StatusCode::kPoisoned);
    CHECK(store.WaitDurable("big", 1).code() == StatusCode::kPoisoned);
    CHECK(store.Commit("big", bytes, Durability::kNone).status().code() == StatusCode::kPoisoned);
  }
  // In the same boot the page cache still holds the commit.
  Store reopened = MustOpen(path, OpenMode::kReadWrite);
  CHECK(MustLoad(reopened, "big") == bytes);
}

TEST_CASE("Sync refuses a read-only handle", "[store][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  CHECK(reader.Sync().status().code() == StatusCode::kInvalidArgument);
  CHECK(reader.WaitDurable("big", 1).code() == StatusCode::kInvalidArgument);
  CHECK(reader.StartSync().code() == StatusCode::kInvalidArgument);
  // A reader asks what the writer published instead (test_durable_points.cc).
  auto durable = reader.DurableGeneration("big");
  REQUIRE(durable.ok());
  CHECK(*durable == 0);
}

TEST_CASE("A 1 MiB kNone commit into pages a Sync cleaned takes no write fault per page",
          "[store][sync][faults]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  Store store = MustOpen(path, OpenMode::kReadWrite);
  const auto bytes = PatternBytes(kMiB, 9);
  // Every slot written once through the mapping, so that each has
  // page-table entries, writable and dirty; then one barrier cleans them
  // all and write-protects those entries.
  {
    VolatilePathScope mapped(VolatilePath::kMapping);
    for (int i = 0; i < 3; ++i) REQUIRE(store.Commit("big", bytes, Durability::kNone).ok());
  }
  REQUIRE(store.Sync().ok());

  const long before = MinorFaults();
  auto committed = store.Commit("big", bytes, Durability::kNone);
  const long faults = MinorFaults() - before;
  REQUIRE(committed.ok());
  INFO("minor faults of the commit: " << faults);
  CHECK(faults <= 4);
  CHECK(MustLoad(store, "big") == bytes);

  // The control: the same commit through the mapping into cleaned pages
  // takes one fault per 4 KiB page (256 for 1 MiB), so the count above
  // can fail.
  REQUIRE(store.Sync().ok());
  {
    VolatilePathScope mapped(VolatilePath::kMapping);
    const long control_before = MinorFaults();
    REQUIRE(store.Commit("big", bytes, Durability::kNone).ok());
    const long control = MinorFaults() - control_before;
    INFO("minor faults of the mapped control: " << control);
    CHECK(control >= 200);
  }
}

TEST_CASE("Commits without a barrier write by pwrite unless the handle just wrote the slot",
          "[store][sync]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  TestIo io;
  // The store's clock stands still unless the test moves it.
  uint64_t now = 1'000'000'000'000;
  io.SetMonotonicNanos(now);
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  // After the open's barrier (which cleaned every page at `now`).
  now += 1'000'000;
  io.SetMonotonicNanos(now);
  const auto bytes = PatternBytes(256 * kKiB, 10);
  // Payload writes only (the protocol 2 marks live in the sidecar, a
  // mapping): the pwritev of a zero unit and the payload, and the header's
  // pwrite.
  const auto writes_of = [&](Durability mode) {
    io.ClearLog();
    REQUIRE(store.Commit("big", bytes, mode).ok());
    return io.Count(Op::kWriteAt);
  };
  // Three slots a region: the first commit into each knows nothing of its
  // pages (2 parts of one pwritev, and the header).
  for (int i = 0; i < 3; ++i) CHECK(writes_of(Durability::kNone) == 3);
  // Each slot again, within seconds of the handle's last write to it and
  // no barrier since: through the mapping, no system call.
  for (int i = 0; i < 3; ++i) CHECK(writes_of(Durability::kNone) == 0);
  // 4.9 s later the pages are still taken to be dirty; 5 s after the last
  // write to a slot, no longer (the kernel's flusher may have run).
  now += 4'900'000'000;
  io.SetMonotonicNanos(now);
  CHECK(writes_of(Durability::kNone) == 0);
  now += 5'000'000'000;
  io.SetMonotonicNanos(now);
  CHECK(writes_of(Durability::kNone) == 3);
  // That pwrite left the slot dirty: the next commit into it, seconds
  // later, goes through the mapping again.
  now += 1'000'000'000;
  io.SetMonotonicNanos(now);
  REQUIRE(store.Commit("big", bytes, Durability::kNone).ok());  // slot 2
  REQUIRE(store.Commit("big", bytes, Durability::kNone).ok());  // slot 0
  CHECK(writes_of(Durability::kNone) == 0);                     // slot 1
  // A whole-file barrier cleaned every page: pwrite again.
  REQUIRE(store.Sync().ok());
  now += 1'000'000;
  io.SetMonotonicNanos(now);
  CHECK(writes_of(Durability::kNone) == 3);
  // At or below 16 KiB, always the mapping.
  io.ClearLog();
  REQUIRE(store.Commit("small", PatternBytes(4 * kKiB, 11), Durability::kNone).ok());
  CHECK(io.Count(Op::kWriteAt) == 0);
  // kAsync takes the same path, then its msync(MS_ASYNC).
  REQUIRE(store.Sync().ok());
  now += 1'000'000;
  io.SetMonotonicNanos(now);
  CHECK(writes_of(Durability::kAsync) == 3);
  CHECK(io.Count(Op::kMsync) == 1);
}

namespace {

// One call of OpenOptions::commit_progress, kept.
struct ProgressCall {
  std::string region;
  Durability durability;
  uint64_t length;
  uint64_t stored;
  uint64_t written_back;
  bool operator==(const ProgressCall&) const = default;
};

// A store of one region of `capacity` bytes, opened with a progress
// callback that appends to `calls`.
Store OpenWithProgress(TempDir& dir, uint64_t capacity, TestIo& io,
                       std::vector<ProgressCall>& calls) {
  const std::string path = dir.File("progress.rgn");
  MustCreateWithRegions(path, 0, {{"state", capacity}});
  OpenOptions options;
  options.io = &io;
  options.commit_progress = [&calls](const CommitProgress& p) {
    calls.push_back({std::string(p.region), p.durability, p.length, p.stored, p.written_back});
  };
  auto store = Store::Open(path, OpenMode::kReadWrite, options);
  REQUIRE(store.ok());
  return std::move(*store);
}

// The payload's byte ranges of `io`'s StartWriteback calls, from the first
// payload byte of the slot they fall in.
std::vector<std::pair<uint64_t, uint64_t>> WritebackSteps(const TestIo& io) {
  std::vector<std::pair<uint64_t, uint64_t>> steps;
  for (const RangeCall& call : io.StartWritebacks()) steps.emplace_back(call.offset, call.length);
  if (steps.empty()) return steps;
  const uint64_t first = steps.front().first;
  for (auto& step : steps) step.first -= first;
  return steps;
}

// What a durable commit of `length` bytes into an aligned slot asks:
// 2 MiB steps (Store::Rep::kWritebackStep) from its payload's start.
std::vector<std::pair<uint64_t, uint64_t>> ExpectedWritebackSteps(const Store& store,
                                                                  uint64_t length) {
  REQUIRE(store.info().regions.at(0).layout == SlotLayout::kAligned);
  constexpr uint64_t kWritebackStep = 2 * kMiB;
  std::vector<std::pair<uint64_t, uint64_t>> steps;
  for (uint64_t at = 0; at < length; at += kWritebackStep) {
    steps.emplace_back(at, std::min(kWritebackStep, length - at));
  }
  return steps;
}

}  // namespace

TEST_CASE("A large commit reports its progress: stored in steps, then written back if durable",
          "[store][sync][progress]") {
  TempDir dir;
  constexpr uint64_t kStep = kCommitProgressStep;
  constexpr uint64_t kLength = 2 * kStep + 5 * kKiB;
  TestIo io;
  std::vector<ProgressCall> calls;
  Store store = OpenWithProgress(dir, kLength, io, calls);
  // Three uneven pieces whose joins fall inside the steps.
  const auto bytes = PatternBytes(kLength, 60);
  const std::span<const std::byte> all(bytes);
  const std::array<std::span<const std::byte>, 3> pieces{
      all.first(kStep - 3), all.subspan(kStep - 3, kStep + 7), all.subspan(2 * kStep + 4)};
  const auto stored_steps = [&](Durability mode) {
    return std::vector<ProgressCall>{{"state", mode, kLength, kStep, 0},
                                     {"state", mode, kLength, 2 * kStep, 0},
                                     {"state", mode, kLength, kLength, 0}};
  };

  for (const Durability mode : {Durability::kPwriteFdatasync, Durability::kSync}) {
    INFO("mode " << DurabilityName(mode));
    calls.clear();
    io.ClearLog();
    REQUIRE(store.CommitPieces("state", pieces, mode).ok());
    std::vector<ProgressCall> expected = stored_steps(mode);
    for (const uint64_t back : {kStep, 2 * kStep, kLength}) {
      expected.push_back({"state", mode, kLength, kLength, back});
    }
    CHECK(calls == expected);
    CHECK(io.Count(Op::kWaitWriteback) == 3);
    // Written in writeback steps, each one's writeback started after it.
    CHECK(WritebackSteps(io) == ExpectedWritebackSteps(store, kLength));
    CHECK(MustLoad(store, "state") == bytes);
  }
  {
    // kNone into pages it has not written lately: by pwrite, in steps, and
    // nothing waited for.
    VolatilePathScope by_pwrite(VolatilePath::kPwrite);
    calls.clear();
    io.ClearLog();
    REQUIRE(store.CommitPieces("state", pieces, Durability::kNone).ok());
    CHECK(calls == stored_steps(Durability::kNone));
    CHECK(io.Count(Op::kWaitWriteback) == 0);
    CHECK(MustLoad(store, "state") == bytes);
  }
  {
    // Through the mapping: one call, after the copy.
    VolatilePathScope by_mapping(VolatilePath::kMapping);
    calls.clear();
    REQUIRE(store.Commit("state", bytes, Durability::kAsync).ok());
    CHECK(calls == std::vector<ProgressCall>{{"state", Durability::kAsync, kLength, kLength, 0}});
    CHECK(MustLoad(store, "state") == bytes);
  }
  // Below a progress step: no call and no wait, the writeback steps alike.
  calls.clear();
  io.ClearLog();
  const auto smaller = PatternBytes(kStep - 1, 61);
  REQUIRE(store.Commit("state", smaller, Durability::kPwriteFdatasync).ok());
  CHECK(calls.empty());
  CHECK(WritebackSteps(io) == ExpectedWritebackSteps(store, kStep - 1));
  CHECK(io.Count(Op::kWaitWriteback) == 0);
  CHECK(MustLoad(store, "state") == smaller);
}

TEST_CASE("A failed wait for a commit's writeback poisons the handle and loses nothing",
          "[store][sync][progress][fault]") {
  TempDir dir;
  constexpr uint64_t kLength = 2 * kCommitProgressStep;
  TestIo io;
  std::vector<ProgressCall> calls;
  const auto old_bytes = PatternBytes(kLength, 62);
  {
    Store store = OpenWithProgress(dir, kLength, io, calls);
    REQUIRE(store.Commit("state", old_bytes, Durability::kPwriteFdatasync).ok());
    calls.clear();
    io.FailNth(Op::kWaitWriteback, 2, EIO);
    auto failed = store.Commit("state", PatternBytes(kLength, 63), Durability::kPwriteFdatasync);
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.status().code() == StatusCode::kIOError);
    CHECK_THAT(failed.status().ToString(), Catch::Contains("sync_file_range (wait"));
    CHECK(store.poisoned());
    // Both steps stored, the first written back, then the failure.
    REQUIRE(calls.size() == 3);
    CHECK(calls.back().written_back == kCommitProgressStep);
    CHECK(store.Commit("state", old_bytes, Durability::kNone).status().code() ==
          StatusCode::kPoisoned);
  }
  Store reopened = MustOpen(dir.File("progress.rgn"), OpenMode::kReadWrite);
  CHECK(MustLoad(reopened, "state") == old_bytes);
}

TEST_CASE("Large raw writes go by pwrite unless the handle just wrote their whole range",
          "[store][sync]") {
  TempDir dir;
  const std::string path = dir.File("data.rgn");
  MustCreateWithRegions(path, 4 * kMiB, {{"small", 4 * kKiB}});
  TestIo io;
  uint64_t now = 1'000'000'000'000;
  io.SetMonotonicNanos(now);
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  const auto advance = [&](uint64_t nanos) {
    now += nanos;
    io.SetMonotonicNanos(now);
  };
  advance(1'000'000);
  const auto bytes = PatternBytes(kMiB, 70);
  const auto pwrites_of = [&](uint64_t offset, std::span<const std::byte> data, Durability mode) {
    io.ClearLog();
    REQUIRE(store.Write(offset, data, mode).ok());
    return io.Count(Op::kWriteAt);
  };
  // Unknown pages: pwrite. Written by this handle seconds ago: the mapping.
  CHECK(pwrites_of(0, bytes, Durability::kNone) == 1);
  CHECK(pwrites_of(0, bytes, Durability::kNone) == 0);
  CHECK(pwrites_of(0, bytes, Durability::kAsync) == 0);
  advance(4'900'000'000);
  CHECK(pwrites_of(0, bytes, Durability::kNone) == 0);
  advance(5'000'000'000);
  CHECK(pwrites_of(0, bytes, Durability::kNone) == 1);
  // Half the range not written lately: pwrite.
  advance(1'000'000);
  CHECK(pwrites_of(512 * kKiB, bytes, Durability::kNone) == 1);
  CHECK(pwrites_of(512 * kKiB, bytes, Durability::kNone) == 0);
  // A whole-file barrier cleaned every page; a range barrier its range.
  REQUIRE(store.Sync().ok());
  advance(1'000'000);
  CHECK(pwrites_of(0, bytes, Durability::kNone) == 1);
  CHECK(pwrites_of(0, bytes, Durability::kNone) == 0);
  REQUIRE(store.Flush(0, 256 * kKiB, Durability::kSync).ok());
  CHECK(pwrites_of(0, bytes, Durability::kNone) == 1);
  // Below 256 KiB: the mapping, whatever the pages.
  REQUIRE(store.Sync().ok());
  CHECK(pwrites_of(2 * kMiB, std::span(bytes).first(256 * kKiB - 1), Durability::kNone) == 0);
  // What the writes left is in the file.
  std::vector<std::byte> expected(4 * kMiB);
  std::copy(bytes.begin(), bytes.end(), expected.begin());
  std::copy(bytes.begin(), bytes.end(), expected.begin() + 512 * kKiB);
  std::copy(bytes.begin(), bytes.end(), expected.begin());
  std::copy(bytes.begin(), bytes.begin() + 256 * kKiB - 1, expected.begin() + 2 * kMiB);
  std::vector<std::byte> read_back(4 * kMiB);
  REQUIRE(store.Read(0, read_back).ok());
  CHECK(read_back == expected);
}

// Not under AddressSanitizer, whose allocator maps arenas of its own that
// the data limit below would measure; the Release pass runs it.
#if !defined(__SANITIZE_ADDRESS__)
namespace {

// This process's data size (VmData of /proc/self/status: private writable
// mappings and the heap, what RLIMIT_DATA limits), in bytes; 0 if unread.
uint64_t DataBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmData:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  }
  return 0;
}

}  // namespace

TEST_CASE("Committing a big state takes no memory of its size beyond the caller's buffer",
          "[store][sync]") {
  TempDir dir;
  const std::string path = dir.File("big.rgn");
  constexpr uint64_t kState = 64 * kMiB;
  MustCreateWithRegions(path, 0, {{"state", kState}});
  const int code = RunInChild([&]() -> int {
    const std::vector<std::byte> state = PatternBytes(kState, 50);
    std::vector<std::byte> loaded(kState);
    Store store = MustOpen(path, OpenMode::kReadWrite);
    // From here on at most 24 MiB more of private memory: the library's
    // thread for StartSync (an 8 MiB stack) and small allocations fit, a
    // copy of the state does not.
    const uint64_t now = DataBytes();
    if (now == 0) return 10;
    const rlimit limit{now + 24 * kMiB, now + 24 * kMiB};
    if (::setrlimit(RLIMIT_DATA, &limit) != 0) return 11;
    int step = 20;
    for (const auto path_choice : {VolatilePath::kPwrite, VolatilePath::kMapping}) {
      VolatilePathScope scope(path_choice);
      if (!store.Commit("state", state, Durability::kNone).ok()) return step;
      ++step;
    }
    if (!store.Sync().ok()) return 22;
    auto last = store.Commit("state", state, Durability::kNone);
    if (!last.ok() || !store.StartSync().ok()) return 23;
    if (!store.WaitDurable("state", *last).ok()) return 24;
    for (const Durability mode : {Durability::kSync, Durability::kPwriteFdatasync}) {
      if (!store.Commit("state", state, mode).ok()) return 25;
    }
    // The handle's own Load, into a buffer of the right size already.
    auto meta = store.Load("state", loaded);
    if (!meta.ok() || loaded != state) return 26;
    // The limit has teeth: a copy of the state is refused.
    try {
      std::vector<std::byte> copy(kState);
      // Used, so that no compiler leaves the allocation out.
      volatile std::byte sink = copy[kState / 2];
      static_cast<void>(sink);
      return 27;
    } catch (const std::bad_alloc&) {
    }
    return 0;
  });
  CHECK(code == 0);
}
#endif

TEST_CASE("A failed pwrite of a commit without a barrier poisons the handle and loses nothing",
          "[store][sync][fault]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  const auto old_bytes = PatternBytes(kMiB, 12);
  VolatilePathScope by_pwrite(VolatilePath::kPwrite);
  for (int nth : {1, 2, 3}) {  // the zero unit, the payload, the header
    INFO("failing write number " << nth);
    {
      Store store = MustOpen(path, OpenMode::kReadWrite);
      REQUIRE(store.Commit("big", old_bytes, Durability::kPwriteFdatasync).ok());
    }
    TestIo io;
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    io.FailNth(Op::kWriteAt, nth, EIO);
    auto failed = store.Commit("big", PatternBytes(kMiB, 13), Durability::kNone);
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.status().code() == StatusCode::kIOError);
    CHECK_THAT(failed.status().ToString(),
               Catch::Contains(nth == 3 ? "pwrite (slot header)" : "pwritev (payload)"));
    CHECK(store.poisoned());
    // No reader may take the failed slot for a commit: the newest is the
    // old one, byte-exact.
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    CHECK(MustLoad(reader, "big") == old_bytes);
  }
}

TEST_CASE("A kill inside the pwritev of a commit without a barrier leaves the commit before it",
          "[store][sync][kill]") {
  // The child commits 1 MiB by pwrite and is killed inside the pwritev: the
  // test's Io writes the zero unit and half the payload, as a pwritev that a
  // signal stopped would have, then raises SIGKILL. The next open must find
  // the commit before, byte-exact, and the slot unfinished.
  TempDir dir;
  const std::string path = NewStore(dir);
  const auto old_bytes = PatternBytes(kMiB, 14);
  const auto new_bytes = PatternBytes(kMiB, 15);
  uint64_t old_generation = 0;
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    auto committed = store.Commit("big", old_bytes, Durability::kNone);
    REQUIRE(committed.ok());
    old_generation = *committed;
  }
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    internal::SetVolatilePath(VolatilePath::kPwrite);
    TestIo io;
    OpenOptions options;
    options.io = &io;
    auto store = Store::Open(path, OpenMode::kReadWrite, options);
    if (!store.ok()) ::_exit(2);
    uint64_t unit_offset = 0;
    io.OnEnter([&](Op op) {
      if (op != Op::kWriteAt) return;
      // The first write of the commit: the pwritev's zero unit. Emulate the
      // kernel's copy stopped half-way by the signal, then die.
      const std::vector<std::byte> partial = [&] {
        std::vector<std::byte> out(4096 + new_bytes.size() / 2, std::byte{0});
        std::copy(new_bytes.begin(),
                  new_bytes.begin() + static_cast<ptrdiff_t>(new_bytes.size() / 2),
                  out.begin() + 4096);
        return out;
      }();
      const int fd = ::open(path.c_str(), O_RDWR);
      if (fd < 0 || ::pwrite(fd, partial.data(), partial.size(), static_cast<off_t>(unit_offset)) !=
                        static_cast<ssize_t>(partial.size())) {
        ::_exit(3);
      }
      ::raise(SIGKILL);
    });
    auto report = store->Report("big");
    if (!report.ok()) ::_exit(4);
    // The target: neither the newest slot nor the durable one; with one
    // commit in the region, the slot after the newest (as CommitTarget
    // picks the oldest of the other two, both empty: the lowest index).
    const uint32_t target = report->active_slot == 0 ? 1 : 0;
    for (const RegionEntry& region : store->info().regions) {
      if (region.name == "big") unit_offset = slot::HeaderFileOffset(region, target);
    }
    (void)store->Commit("big", new_bytes, Durability::kNone);
    ::_exit(5);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(WTERMSIG(status) == SIGKILL);
  Store reopened = MustOpen(path, OpenMode::kReadWrite);
  CheckpointMeta meta;
  CHECK(MustLoad(reopened, "big", &meta) == old_bytes);
  CHECK(meta.generation == old_generation);
  CheckNothingDamaged(path);
}

}  // namespace regionstore::testing

// --- Background barriers (Store::StartSync) --------------------------------

namespace regionstore::testing {
namespace {

// Holds the background fdatasync at its entry until the test lets it go: the
// library's thread blocks in TestIo's OnEnter hook, and the test releases it
// either directly (Release) or when the handle's thread is about to wait for
// it (Point::kWaitForBackgroundSync), so no interleaving depends on timing.
class HeldSync {
 public:
  explicit HeldSync(TestIo& io) : state_(std::make_shared<State>()) {
    state_->released = state_->release.get_future().share();
    // The hook keeps the state alive for the library's thread, whatever
    // the test destroys first.
    io.OnEnter([state = state_](Op op) {
      if (op != Op::kDataSync || state->entered.exchange(true)) return;
      state->released.wait();
    });
    current_ = state_;
    internal::SetPointHook([](internal::Point point, uint32_t) {
      if (point == internal::Point::kWaitForBackgroundSync && current_) current_->Release();
    });
  }
  ~HeldSync() {
    state_->Release();
    internal::SetPointHook(nullptr);
    current_.reset();
  }
  HeldSync(const HeldSync&) = delete;
  HeldSync& operator=(const HeldSync&) = delete;

  void Release() { state_->Release(); }
  // True once the held call has entered (and is held or was released).
  bool entered() const { return state_->entered.load(); }

 private:
  struct State {
    std::promise<void> release;
    std::shared_future<void> released;
    std::atomic<bool> entered{false};
    std::atomic<bool> released_once{false};
    void Release() {
      if (!released_once.exchange(true)) release.set_value();
    }
  };
  static inline std::shared_ptr<State> current_;
  std::shared_ptr<State> state_;
};

}  // namespace

TEST_CASE("A background barrier covers the commits returned before StartSync, not those after",
          "[store][sync][background][threads]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  for (const bool covers_late : {false, true}) {
    INFO((covers_late ? "mutation: the cover taken at completion" : "correct"));
    std::optional<MutationScope> broken;
    if (covers_late) broken.emplace(internal::Mutation::kBackgroundCoversLate);
    TestIo io;
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    auto before = store.Commit("big", PatternBytes(64 * kKiB, 20), Durability::kNone);
    REQUIRE(before.ok());
    {
      HeldSync held(io);
      REQUIRE(store.StartSync().ok());
      CHECK(store.Stats().background_syncs == 1);
      // While the fdatasync is held, a commit to another region completes:
      // the barrier began before it and does not cover it.
      auto after = store.Commit("small", PatternBytes(100, 21), Durability::kNone);
      REQUIRE(after.ok());
      REQUIRE(store.WaitDurable("big", *before).ok());
      CHECK(held.entered());
      CHECK(*store.DurableGeneration("big") == *before);
      // The broken variant counts it as covered: the check has teeth.
      CHECK(*store.DurableGeneration("small") == (covers_late ? *after : 0));
    }
    // A Sync covers it.
    REQUIRE(store.Sync().ok());
    CHECK(*store.DurableGeneration("small") > 0);
  }
}

TEST_CASE("A commit waits for the background barrier rather than take a slot it covers",
          "[store][sync][background][threads]") {
  for (const bool overwrite : {false, true}) {
    INFO((overwrite ? "mutation: a covered slot may be taken" : "correct"));
    TempDir dir;
    const std::string path = NewStore(dir);
    std::optional<MutationScope> broken;
    if (overwrite) broken.emplace(internal::Mutation::kOverwriteCoveredInFlight);
    TestIo io;
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    // Slot 0: a durable commit. Slot 1: a kNone commit the barrier covers.
    auto durable = store.Commit("big", PatternBytes(32 * kKiB, 22), Durability::kPwriteFdatasync);
    auto covered = store.Commit("big", PatternBytes(32 * kKiB, 23), Durability::kNone);
    REQUIRE(durable.ok());
    REQUIRE(covered.ok());
    HeldSync held(io);
    REQUIRE(store.StartSync().ok());
    // Slot 2 is free; after it, every slot holds the newest, the durable or
    // the covered commit, and the next commit waits for the barrier.
    REQUIRE(store.Commit("big", PatternBytes(32 * kKiB, 24), Durability::kNone).ok());
    const auto last_bytes = PatternBytes(32 * kKiB, 25);
    auto last = store.Commit("big", last_bytes, Durability::kNone);
    REQUIRE(last.ok());
    CHECK(MustLoad(store, "big") == last_bytes);
    if (!overwrite) {
      CHECK(store.Stats().waits_for_background_sync == 1);
      // The covered commit kept its slot until the barrier returned, and is
      // the region's durable one.
      CHECK(*store.DurableGeneration("big") == *covered);
    } else {
      // The broken rule wrote over it while the barrier ran: the region's
      // newest durable commit went back to the older one.
      CHECK(store.Stats().waits_for_background_sync == 0);
      held.Release();
      REQUIRE(store.WaitDurable("big", *durable).ok());
      CHECK(*store.DurableGeneration("big") == *durable);
    }
  }
}

TEST_CASE("A spare slot lets commits go ahead while the background barrier runs",
          "[store][sync][background][threads]") {
  TempDir dir;
  const std::string path = dir.File("spare.rgn");
  MustCreateWithRegions(path, 0, {{"big", 64 * kKiB, SlotLayout::kAuto, 4}});
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  REQUIRE(store.info().regions[0].slot_count == 4);
  auto durable = store.Commit("big", PatternBytes(32 * kKiB, 40), Durability::kPwriteFdatasync);
  auto covered = store.Commit("big", PatternBytes(32 * kKiB, 41), Durability::kNone);
  REQUIRE(durable.ok());
  REQUIRE(covered.ok());
  std::vector<std::byte> last_bytes;
  {
    HeldSync held(io);
    REQUIRE(store.StartSync().ok());
    // Newest, durable and covered take three slots; the fourth is free for
    // every commit while the barrier is held, where three slots waited at
    // the second commit (the case above).
    for (uint64_t seed = 42; seed < 48; ++seed) {
      last_bytes = PatternBytes(32 * kKiB, seed);
      REQUIRE(store.Commit("big", last_bytes, Durability::kNone).ok());
    }
    CHECK(store.Stats().waits_for_background_sync == 0);
    CHECK(MustLoad(store, "big") == last_bytes);
    // Still held: the durable commit is the one before the barrier.
    CHECK(*store.DurableGeneration("big") == *durable);
    held.Release();
    REQUIRE(store.WaitDurable("big", *covered).ok());
    CHECK(*store.DurableGeneration("big") == *covered);
  }
  CHECK(store.Stats().waits_for_background_sync == 0);
  REQUIRE(store.Sync().ok());
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  CHECK(MustLoad(reader, "big") == last_bytes);
}

TEST_CASE("A failed background fdatasync is reported by the call that completes it and poisons",
          "[store][sync][background][threads][fault]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  const auto bytes = PatternBytes(64 * kKiB, 26);
  {
    TestIo io;
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    auto committed = store.Commit("big", bytes, Durability::kNone);
    REQUIRE(committed.ok());
    io.FailNth(Op::kDataSync, 1, EIO);
    REQUIRE(store.StartSync().ok());
    const Status failed = store.WaitDurable("big", *committed);
    CHECK(failed.code() == StatusCode::kIOError);
    CHECK(failed.sys_errno() == EIO);
    CHECK_THAT(failed.ToString(), Catch::Contains("sync in the background: fdatasync"));
    CHECK(store.poisoned());
    CHECK(store.Stats().failed_flushes == 1);
    // Every later call says so.
    CHECK(store.Commit("big", bytes, Durability::kNone).status().code() == StatusCode::kPoisoned);
    CHECK(store.StartSync().code() == StatusCode::kPoisoned);
    CHECK(store.Sync().status().code() == StatusCode::kPoisoned);
  }
  Store reopened = MustOpen(path, OpenMode::kReadWrite);
  CHECK(MustLoad(reopened, "big") == bytes);
}

TEST_CASE("A fork while a background barrier runs leaves parent and child working",
          "[store][sync][background]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  const auto bytes = PatternBytes(64 * kKiB, 27);
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  auto committed = store.Commit("big", bytes, Durability::kNone);
  REQUIRE(committed.ok());
  HeldSync held(io);
  REQUIRE(store.StartSync().ok());
  // The child has no copy of the library's thread; it reads the store
  // through a handle of its own, and its copy of the parent's handle
  // refuses to write and closes without waiting.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto reader = Store::Open(path, OpenMode::kReadOnly);
    std::vector<std::byte> out;
    const bool same = reader.ok() && reader->Load("big", out).ok() && out == bytes;
    // The inherited writer refuses to go on with the parent's barrier, and
    // destroying it neither waits for that barrier nor writes.
    auto refused = store.Commit("big", bytes, Durability::kNone);
    const bool refused_right = !refused.ok() &&
                               refused.status().code() == StatusCode::kInvalidArgument &&
                               refused.status().ToString().find("fork") != std::string::npos;
    const bool sync_refused = store.Sync().status().code() == StatusCode::kInvalidArgument;
    { Store inherited = std::move(store); }
    ::_exit(same ? (refused_right && sync_refused ? 0 : 2) : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE(store.WaitDurable("big", *committed).ok());
  CHECK(*store.DurableGeneration("big") == *committed);
}

TEST_CASE("Closing a store waits for its background barrier",
          "[store][sync][background][threads]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  const auto bytes = PatternBytes(64 * kKiB, 28);
  TestIo io;
  int syncs_before = 0;
  {
    std::optional<HeldSync> held;
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    REQUIRE(store.Commit("big", bytes, Durability::kNone).ok());
    held.emplace(io);
    syncs_before = io.Count(Op::kDataSync);
    REQUIRE(store.StartSync().ok());
    // The store goes first: its destructor reaches the wait point, which
    // lets the held call go, and completes the barrier.
  }
  CHECK(io.Count(Op::kDataSync) == syncs_before + 1);
  Store reopened = MustOpen(path, OpenMode::kReadWrite);
  CHECK(MustLoad(reopened, "big") == bytes);
}

TEST_CASE("sync_interval starts a background barrier after a commit once the interval passed",
          "[store][sync][background][threads]") {
  TempDir dir;
  const std::string path = NewStore(dir);
  TestIo io;
  uint64_t now = 1'000'000'000'000;
  io.SetMonotonicNanos(now);
  OpenOptions options;
  options.io = &io;
  options.sync_interval = std::chrono::milliseconds(1000);
  auto opened = Store::Open(path, OpenMode::kReadWrite, options);
  REQUIRE(opened.ok());
  Store store = std::move(*opened);
  auto first = store.Commit("small", PatternBytes(100, 29), Durability::kNone);
  REQUIRE(first.ok());
  CHECK(store.Stats().background_syncs == 0);  // less than a second since the open
  now += 1'500'000'000;
  io.SetMonotonicNanos(now);
  auto second = store.Commit("small", PatternBytes(100, 30), Durability::kNone);
  REQUIRE(second.ok());
  CHECK(store.Stats().background_syncs == 1);
  REQUIRE(store.WaitDurable("small", *second).ok());
  CHECK(*store.DurableGeneration("small") == *second);
  // Nothing pending: no barrier, however long it has been.
  now += 5'000'000'000;
  io.SetMonotonicNanos(now);
  CHECK(store.DurableGeneration("small").ok());
  CHECK(store.Stats().background_syncs == 1);
}

}  // namespace regionstore::testing
