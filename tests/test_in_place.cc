// Working in place: writable views of the data area (Store::MutableView)
// and commits filled in place (Store::BeginCommit, PendingCommit): where the
// bytes land, what a power loss keeps, what finishing, abandoning and
// killing a pending commit leave, and what is refused while one is pending.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "regionstore/store.h"
#include "slot.h"
#include "store_rep.h"
#include "support/crash_sim.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

constexpr uint64_t kDataSize = 256 * kKiB;

std::vector<CheckpointSpec> Regions() {
  return {{"a", 20'000}, {"b", 4096}, {"wide", 200 * kKiB, SlotLayout::kAligned}};
}

void Fill(std::span<std::byte> out, uint64_t seed) {
  const std::vector<std::byte> pattern = PatternBytes(out.size(), seed);
  std::copy(pattern.begin(), pattern.end(), out.begin());
}

// --- Writable views -----------------------------------------------------

TEST_CASE("Bytes written through a writable view land at data_offset + offset", "[inplace]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, kDataSize);
  for (Durability mode : kAllModes) {
    INFO("mode " << DurabilityName(mode));
    const uint64_t offset = 4096 + 7 + static_cast<uint64_t>(mode) * 20'000;
    const std::vector<std::byte> bytes = PatternBytes(12'345, static_cast<uint64_t>(mode) + 1);
    {
      Store store = MustOpen(path, OpenMode::kReadWrite);
      auto view = store.MutableView(offset, bytes.size());
      REQUIRE(view.ok());
      REQUIRE(view->size() == bytes.size());
      std::copy(bytes.begin(), bytes.end(), view->begin());
      // A moved handle keeps the view.
      Store moved = std::move(store);
      REQUIRE(moved.Flush(offset, bytes.size(), mode).ok());
      // Another descriptor sees them in the page cache at once.
      CHECK(PreadFile(path, moved.info().data_offset + offset, bytes.size()) == bytes);
      std::vector<std::byte> read(bytes.size());
      REQUIRE(moved.Read(offset, read).ok());
      CHECK(read == bytes);
    }
    Store reopened = MustOpen(path, OpenMode::kReadOnly);
    CHECK(PreadFile(path, reopened.info().data_offset + offset, bytes.size()) == bytes);
  }
}

TEST_CASE("A writable view is refused out of range and on a read-only handle", "[inplace]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, kDataSize);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  CHECK(writer.MutableView(kDataSize - 10, 11).status().code() == StatusCode::kInvalidArgument);
  CHECK(writer.MutableView(UINT64_MAX, 2).status().code() == StatusCode::kInvalidArgument);
  CHECK(writer.MutableView(kDataSize, 0).ok());
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  const auto refused = reader.MutableView(0, 1);
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.status().ToString(), Catch::Contains("read-only"));
}

// The clean image of a store with a data area and the regions above.
std::vector<std::byte> CleanImage() {
  TempDir dir;
  const std::string path = dir.File("base.rgn");
  MustCreateWithRegions(path, kDataSize, Regions());
  return ReadWholeFile(path);
}

TEST_CASE(
    "Power-loss images keep view writes once a durable Flush returned, and may lose them "
    "before",
    "[inplace][powerloss]") {
  const std::vector<std::byte> clean = CleanImage();
  for (Durability mode : {Durability::kSync, Durability::kPwriteFdatasync}) {
    INFO("mode " << DurabilityName(mode));
    CrashSim sim(clean, /*track=*/true);
    OpenOptions options;
    options.io = &sim;
    auto store = Store::Open("sim", OpenMode::kReadWrite, options);
    REQUIRE(store.ok());
    const uint64_t offset = 3 * CrashSim::kUnit + 100;
    const uint64_t file_offset = store->info().data_offset + offset;
    const std::vector<std::byte> bytes = PatternBytes(2 * CrashSim::kUnit, 77);
    auto view = store->MutableView(offset, bytes.size());
    REQUIRE(view.ok());
    std::copy(bytes.begin(), bytes.end(), view->begin());
    sim.Observe();
    const auto holds = [&](const std::vector<std::byte>& image) {
      return std::equal(bytes.begin(), bytes.end(),
                        image.begin() + static_cast<ptrdiff_t>(file_offset));
    };
    // Before the flush: an image where the first unit written is still the
    // durable (old) one.
    std::mt19937_64 rng(7);
    CHECK_FALSE(
        holds(sim.Image(rng, CrashSim::ImageKind::kOnlyUnitOld, file_offset / CrashSim::kUnit)));
    REQUIRE(store->Flush(offset, bytes.size(), mode).ok());
    sim.Observe();
    for (int i = 0; i < 50; ++i) {
      for (auto kind : {CrashSim::ImageKind::kRandom, CrashSim::ImageKind::kOneStale}) {
        CHECK(holds(sim.Image(rng, kind)));
      }
    }
    for (uint64_t unit = file_offset / CrashSim::kUnit;
         unit * CrashSim::kUnit < file_offset + bytes.size(); ++unit) {
      CHECK(holds(sim.Image(rng, CrashSim::ImageKind::kOnlyUnitOld, unit)));
    }
  }
}

// --- Commits filled in place ---------------------------------------------

TEST_CASE("A commit filled in place loads byte-exact in every mode, filled either way",
          "[inplace][checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, Regions());
  Store store = MustOpen(path, OpenMode::kReadWrite);
  uint64_t generation = 0;
  uint64_t seed = 1;
  for (const char* region : {"a", "wide"}) {
    const uint64_t capacity = std::string(region) == "a" ? 20'000 : 200 * kKiB;
    for (Durability mode : kAllModes) {
      for (int how = 0; how < 3; ++how) {
        INFO(region << ", mode " << DurabilityName(mode) << ", how " << how);
        const std::vector<std::byte> bytes = PatternBytes(capacity - 1 - how * 1000, ++seed);
        auto pending = store.BeginCommit(region, capacity);
        REQUIRE(pending.ok());
        REQUIRE(pending->pending());
        Result<uint64_t> finished = 0;
        if (how == 0) {  // through the mapping, then a shorter final length
          std::span<std::byte> payload = pending->payload();
          REQUIRE(payload.size() == capacity);
          std::copy(bytes.begin(), bytes.end(), payload.begin());
          finished = pending->Finish(bytes.size(), mode);
        } else if (how == 1) {  // appended in uneven pieces
          for (uint64_t done = 0; done < bytes.size();) {
            const uint64_t piece = std::min<uint64_t>(bytes.size() - done, 3001);
            REQUIRE(pending->Append(std::span(bytes).subspan(done, piece)).ok());
            done += piece;
          }
          CHECK(pending->appended() == bytes.size());
          finished = pending->Finish(mode);
        } else {  // both: appended, then one byte changed through the mapping
          REQUIRE(pending->Append(bytes).ok());
          std::vector<std::byte> changed = bytes;
          changed[500] ^= std::byte{0xff};
          pending->payload()[500] = changed[500];
          finished = pending->Finish(mode);
          REQUIRE(finished.ok());
          CHECK(MustLoad(store, region) == changed);
          CHECK(*finished == ++generation);
          CHECK_FALSE(pending->pending());
          continue;
        }
        REQUIRE(finished.ok());
        CHECK(*finished == ++generation);
        CHECK_FALSE(pending->pending());
        CHECK(MustLoad(store, region) == bytes);
        // A reader in another handle, and after a reopen.
        Store reader = MustOpen(path, OpenMode::kReadOnly);
        CHECK(MustLoad(reader, region) == bytes);
      }
    }
    generation = 0;
  }
  CheckNothingDamaged(path);
}

TEST_CASE("An abandoned commit filled in place leaves the region as it was",
          "[inplace][checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, Regions());
  Store store = MustOpen(path, OpenMode::kReadWrite);
  const std::vector<std::byte> before = PatternBytes(9'999, 3);
  REQUIRE(store.Commit("a", before, Durability::kSync).ok());
  for (int how = 0; how < 3; ++how) {
    INFO("how " << how);
    {
      auto pending = store.BeginCommit("a", 20'000);
      REQUIRE(pending.ok());
      Fill(pending->payload(), 100 + how);
      REQUIRE(pending->Append(PatternBytes(5000, 9)).ok());
      // Meanwhile the region loads its newest commit.
      CHECK(MustLoad(store, "a") == before);
      if (how == 0) pending->Abort();
      if (how == 1) {
        PendingCommit moved = std::move(*pending);
        CHECK_FALSE(pending->pending());
        CHECK(moved.pending());
      }
      // how 2: destroyed unfinished.
      if (how == 0) {
        CHECK_FALSE(pending->pending());
        CHECK(pending->payload().empty());
        CHECK(pending->Finish(Durability::kNone).status().code() == StatusCode::kInvalidArgument);
        CHECK(pending->Append(PatternBytes(1, 1)).code() == StatusCode::kInvalidArgument);
      }
    }
    CHECK(MustLoad(store, "a") == before);
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    CheckpointMeta meta;
    CHECK(MustLoad(reader, "a", &meta) == before);
    CHECK(meta.generation == 1);
  }
  // The generation abandoned commits never took is the next commit's.
  auto next = store.Commit("a", PatternBytes(10, 4), Durability::kNone);
  REQUIRE(next.ok());
  CHECK(*next == 2);
}

TEST_CASE("While a commit is filled in place its region refuses other commits, and others commit",
          "[inplace][checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateOptions options;
  options.checkpoints = Regions();
  options.batch_log = true;
  REQUIRE(Store::Create(path, 0, options).ok());
  Store store = MustOpen(path, OpenMode::kReadWrite);
  const std::vector<std::byte> old_a = PatternBytes(100, 1);
  REQUIRE(store.Commit("a", old_a, Durability::kNone).ok());
  auto pending = store.BeginCommit("a", 1000);
  REQUIRE(pending.ok());
  Fill(pending->payload().first(1000), 5);

  const auto single = store.Commit("a", PatternBytes(10, 2), Durability::kSync);
  CHECK(single.status().code() == StatusCode::kBusy);
  CHECK_THAT(single.status().ToString(), Catch::Contains("filled in place"));
  const std::array<std::span<const std::byte>, 1> piece{std::span<const std::byte>(old_a)};
  const std::array<BatchMember, 2> batch{BatchMember{"b", piece}, BatchMember{"a", piece}};
  CHECK(store.CommitBatch(batch, Durability::kSync).status().code() == StatusCode::kBusy);
  CHECK(store.BeginCommit("b", 10).status().code() == StatusCode::kBusy);
  CHECK(store.BeginCommit("a", 10).status().code() == StatusCode::kBusy);
  CHECK(MustLoad(store, "a") == old_a);
  // Another region commits, a batch of others too, and a barrier of theirs
  // does not finish the pending one.
  const std::vector<std::byte> b = PatternBytes(4096, 3);
  REQUIRE(store.Commit("b", b, Durability::kPwriteFdatasync).ok());
  const std::array<BatchMember, 1> other{BatchMember{"b", piece}};
  REQUIRE(store.CommitBatch(other, Durability::kSync).ok());
  CHECK(MustLoad(store, "a") == old_a);

  auto finished = pending->Finish(1000, Durability::kSync);
  REQUIRE(finished.ok());
  CHECK(*finished == 2);
  CHECK(MustLoad(store, "a") == PatternBytes(1000, 5));
  CHECK(store.Commit("a", old_a, Durability::kNone).ok());
  CHECK(store.BeginCommit("b", 10).ok());  // and destroyed: aborted
}

TEST_CASE("A commit filled in place checks its lengths, and outlives its store harmlessly",
          "[inplace][checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, Regions());
  {
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    CHECK(reader.BeginCommit("a", 1).status().code() == StatusCode::kInvalidArgument);
  }
  Store store = MustOpen(path, OpenMode::kReadWrite);
  CHECK(store.BeginCommit("nope", 1).status().code() == StatusCode::kNotFound);
  CHECK(store.BeginCommit("b", 4097).status().code() == StatusCode::kInvalidArgument);
  std::optional<PendingCommit> pending;
  {
    auto begun = store.BeginCommit("b", 100);
    REQUIRE(begun.ok());
    pending.emplace(std::move(*begun));
  }
  CHECK(pending->payload().size() == 100);
  // Past max_length: refused, nothing written, still pending.
  REQUIRE(pending->Append(PatternBytes(60, 1)).ok());
  CHECK(pending->Append(PatternBytes(41, 2)).code() == StatusCode::kInvalidArgument);
  CHECK(pending->appended() == 60);
  CHECK(pending->Finish(101, Durability::kNone).status().code() == StatusCode::kInvalidArgument);
  // A refused Finish abandons the commit (store.h): nothing pending, and
  // the region free for the next one.
  CHECK_FALSE(pending->pending());
  CHECK(pending->Finish(60, Durability::kNone).status().code() == StatusCode::kInvalidArgument);
  {
    auto begun = store.BeginCommit("b", 100);
    REQUIRE(begun.ok());
    pending.emplace(std::move(*begun));
  }
  // The store closes first: the pending commit can no longer reach it.
  { Store gone = std::move(store); }
  CHECK_FALSE(pending->pending());
  CHECK(pending->payload().empty());
  CHECK(pending->Finish(Durability::kSync).status().code() == StatusCode::kInvalidArgument);
  pending.reset();
  Store reopened = MustOpen(path, OpenMode::kReadWrite);
  std::vector<std::byte> out;
  CHECK(reopened.Load("b", out).status().code() == StatusCode::kNotFound);
}

TEST_CASE("A writer killed while filling a commit in place leaves the newest commit byte-exact",
          "[inplace][checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(path, 0, Regions());
  std::vector<std::byte> newest;
  for (int round = 0; round < 6; ++round) {
    INFO("round " << round);
    const bool append = round % 2 == 1;
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::alarm(30);
      auto store = Store::Open(path, OpenMode::kReadWrite);
      if (!store.ok()) ::_exit(2);
      const std::vector<std::byte> next = PatternBytes(20'000, 1000 + round);
      if (!store->Commit("a", next, kAllModes[round % 4]).ok()) ::_exit(3);
      auto pending = store->BeginCommit("a", 20'000);
      if (!pending.ok()) ::_exit(4);
      if (append) {
        if (!pending->Append(PatternBytes(15'000, 7)).ok()) ::_exit(5);
      } else {
        Fill(pending->payload(), 8);
      }
      ::raise(SIGKILL);
      ::_exit(6);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(WTERMSIG(status) == SIGKILL);
    newest = PatternBytes(20'000, 1000 + round);
    Store store = MustOpen(path, OpenMode::kReadWrite);
    CheckpointMeta meta;
    CHECK(MustLoad(store, "a", &meta) == newest);
    CHECK(meta.generation == static_cast<uint64_t>(round) + 1);
  }
  CheckNothingDamaged(path);
}

}  // namespace
}  // namespace regionstore::testing
