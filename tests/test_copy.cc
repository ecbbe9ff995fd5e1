// Store::CopyTo and `regionctl copy`: a new store with one consistent set
// of the source's commits, generations carried on, the data area, published
// whole or not at all; and the migration from protocol 1 to protocol 2.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "regionstore/store.h"
#include "regionstore/temp_files.h"
#include "slot.h"
#include "support/commit_payloads.h"
#include "support/files.h"
#include "support/process.h"
#include "support/regionctl_runner.h"
#include "support/shared_memory.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

// Compact and aligned slots, one region left without a commit.
const std::vector<CheckpointSpec> kCopyRegions = {{"model", 20'000, SlotLayout::kCompact},
                                                  {"step", 8, SlotLayout::kCompact},
                                                  {"index", 70'001, SlotLayout::kAligned},
                                                  {"never", 100, SlotLayout::kAuto}};

CopyOptions Options(bool replace, uint32_t protocol = 0, uint64_t data_size = 0) {
  CopyOptions options;
  options.replace_existing = replace;
  options.protocol = protocol;
  options.data_size = data_size;
  return options;
}

// A batch of `payloads` into `names`, one piece each.
Result<std::vector<uint64_t>> Batch(Store& store, const std::vector<std::string_view>& names,
                                    const std::vector<std::vector<std::byte>>& payloads,
                                    Durability mode) {
  std::vector<std::span<const std::byte>> pieces(payloads.begin(), payloads.end());
  std::vector<BatchMember> members;
  for (size_t i = 0; i < names.size(); ++i) {
    members.push_back({names[i], PayloadPieces(&pieces[i], 1)});
  }
  return store.CommitBatch(members, mode);
}

std::vector<std::byte> Payload(uint64_t length, uint64_t generation, uint64_t life) {
  std::vector<std::byte> out;
  FillPayload({generation, life}, length, out);
  return out;
}

// A source with commits of several generations in every region but "never",
// a data area with a pattern, in `protocol`.
void MakeSource(const std::string& path, uint32_t protocol, uint64_t data_size) {
  CreateOptions options;
  options.checkpoints = kCopyRegions;
  options.protocol = protocol;
  options.batch_log = true;
  REQUIRE(Store::Create(path, data_size, options).ok());
  Store store = MustOpen(path, OpenMode::kReadWrite);
  for (uint64_t g = 1; g <= 4; ++g) {
    REQUIRE(store.Commit("model", Payload(20'000 - g, g, 1), Durability::kNone).ok());
    REQUIRE(store.Commit("index", Payload(70'001, g, 2), Durability::kNone).ok());
  }
  REQUIRE(store.Commit("step", Payload(8, 1, 3), Durability::kSync).ok());
  REQUIRE(store.Write(4096, PatternBytes(10'000, 7), Durability::kNone).ok());
  REQUIRE(store.Write(data_size - 100, PatternBytes(100, 8), Durability::kSync).ok());
}

// DST holds what SRC holds: every region's newest commit with its
// generation and time, the data area (and zeros past it), nothing damaged.
void CheckSameContent(const std::string& source, const std::string& destination) {
  Store src = MustOpen(source, OpenMode::kReadOnly);
  Store dst = MustOpen(destination, OpenMode::kReadOnly);
  REQUIRE(dst.info().regions.size() == src.info().regions.size());
  for (size_t i = 0; i < src.info().regions.size(); ++i) {
    const RegionEntry& a = src.info().regions[i];
    const RegionEntry& b = dst.info().regions[i];
    INFO("region " << a.name);
    CHECK(b.name == a.name);
    CHECK(b.capacity == a.capacity);
    CHECK(b.layout == a.layout);
    std::vector<std::byte> from, to;
    auto expected = src.Load(a.name, from);
    auto got = dst.Load(b.name, to);
    if (!expected.ok()) {
      CHECK(expected.status().code() == StatusCode::kNotFound);
      CHECK(got.status().code() == StatusCode::kNotFound);
      continue;
    }
    REQUIRE(got.ok());
    CHECK(got->generation == expected->generation);
    CHECK(got->commit_unix_ns == expected->commit_unix_ns);
    CHECK(to == from);
  }
  REQUIRE(dst.data_size() >= src.data_size());
  std::vector<std::byte> from(src.data_size()), to(dst.data_size());
  REQUIRE(src.Read(0, from).ok());
  REQUIRE(dst.Read(0, to).ok());
  CHECK(std::memcmp(to.data(), from.data(), from.size()) == 0);
  CHECK(std::all_of(to.begin() + static_cast<std::ptrdiff_t>(from.size()), to.end(),
                    [](std::byte b) { return b == std::byte{0}; }));
  CheckNothingDamaged(destination);
}

TEST_CASE("CopyTo copies every region's newest commit, its generation and the data area",
          "[copy]") {
  TempDir dir;
  for (uint32_t from : {1u, 2u}) {
    for (uint32_t to : {0u, 1u, 2u}) {
      const uint32_t expected_protocol = to == 0 ? from : to;
      DYNAMIC_SECTION("protocol " << from << " to " << expected_protocol) {
        const std::string source = dir.File("src.rgn");
        const std::string destination = dir.File("dst.rgn");
        MakeSource(source, from, 2 * kMiB);
        Store src = MustOpen(source, OpenMode::kReadOnly);
        auto report = src.CopyTo(destination, Options(false, to));
        INFO(report.status().ToString());
        REQUIRE(report.ok());
        CHECK(report->protocol == expected_protocol);
        CHECK(report->regions == 4);
        CHECK(report->regions_committed == 3);
        CHECK(report->payload_bytes == (20'000 - 4) + 8 + 70'001);
        CHECK(report->data_bytes == 2 * kMiB);
        CHECK(report->file_size == std::filesystem::file_size(destination));
        CheckSameContent(source, destination);
        Store dst = MustOpen(destination, OpenMode::kReadWrite);
        CHECK(dst.info().protocol() == expected_protocol);
        CHECK(dst.info().uuid != src.info().uuid);
        // Generations carry on, in every mode and in a batch.
        auto next = dst.Commit("model", Payload(10, 5, 4), Durability::kPwriteFdatasync);
        REQUIRE(next.ok());
        CHECK(*next == 5);
        auto first = dst.Commit("never", Payload(100, 1, 5), Durability::kNone);
        REQUIRE(first.ok());
        CHECK(*first == 1);
        const std::vector<std::byte> b = Payload(70'001, 5, 7);
        auto batch = Batch(dst, {"step", "index"}, {Payload(8, 2, 6), b}, Durability::kSync);
        REQUIRE(batch.ok());
        CHECK((*batch)[0] == 2);
        CHECK((*batch)[1] == 5);
        CHECK(MustLoad(dst, "index") == b);
      }
    }
  }
}

TEST_CASE("CopyTo to a larger data area, from a writer's own handle", "[copy]") {
  TempDir dir;
  const std::string source = dir.File("src.rgn");
  const std::string destination = dir.File("dst.rgn");
  MakeSource(source, 2, 1 * kMiB);
  Store writer = MustOpen(source, OpenMode::kReadWrite);
  REQUIRE(writer.Commit("step", Payload(8, 2, 9), Durability::kNone).ok());
  auto report = writer.CopyTo(destination, Options(false, 0, 3 * kMiB));
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  CHECK(report->data_bytes == 1 * kMiB);
  CHECK(ReadStoreInfo(destination)->data_size == 3 * kMiB);
  CheckSameContent(source, destination);
}

TEST_CASE(
    "CopyTo to twice the size with larger regions and a new one: every commit "
    "byte-exact, generations carried on, a commit larger than the old capacity fits",
    "[copy]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string source = dir.File("src.rgn");
  const std::string destination = dir.File("dst.rgn");
  MakeSource(source, protocol, 1 * kMiB);
  CopyOptions options = Options(false, 0, 2 * kMiB);
  options.checkpoints = {{"model", 40'000, SlotLayout::kAuto},
                         {"index", 140'002, SlotLayout::kAuto},
                         {"added", 1000, SlotLayout::kAuto}};
  {
    Store src = MustOpen(source, OpenMode::kReadOnly);
    auto report = src.CopyTo(destination, options);
    INFO(report.status().ToString());
    REQUIRE(report.ok());
    CHECK(report->regions == 4);
  }
  Store src = MustOpen(source, OpenMode::kReadOnly);
  {
    Store dst = MustOpen(destination, OpenMode::kReadOnly);
    const StoreInfo& info = dst.info();
    CHECK(info.data_size == 2 * kMiB);
    REQUIRE(info.regions.size() == 5);
    CHECK(info.regions[0].name == "model");
    CHECK(info.regions[0].capacity == 40'000);
    CHECK(info.regions[2].capacity == 140'002);
    CHECK(info.regions[3].capacity == 100);  // "never": not named, as it was
    CHECK(info.regions[4].name == "added");
    // Every region's newest commit, byte-exact, with its generation.
    for (const std::string_view name : {"model", "step", "index"}) {
      INFO("region " << name);
      std::vector<std::byte> a, b;
      auto from = src.Load(name, a);
      auto to = dst.Load(name, b);
      REQUIRE(from.ok());
      REQUIRE(to.ok());
      CHECK(a == b);
      CHECK(to->generation == from->generation);
    }
    std::vector<std::byte> none;
    CHECK(dst.Load("added", none).status().code() == StatusCode::kNotFound);
    std::vector<std::byte> data(1 * kMiB);
    REQUIRE(dst.Read(0, data).ok());
    std::vector<std::byte> expected(1 * kMiB);
    REQUIRE(src.Read(0, expected).ok());
    CHECK(data == expected);
  }
  // The next commit is larger than the source's capacity and numbered
  // above the copied one; a reader waiting on the copy sees it as newer.
  Store dst = MustOpen(destination, OpenMode::kReadWrite);
  const std::vector<std::byte> bigger = Payload(35'000, 5, 4);
  auto generation = dst.Commit("model", bigger, Durability::kSync);
  REQUIRE(generation.ok());
  CHECK(*generation == 5);
  std::vector<std::byte> back;
  REQUIRE(dst.Load("model", back).ok());
  CHECK(back == bigger);
  REQUIRE(dst.Commit("added", Payload(1000, 1, 5), Durability::kSync).ok());
  Store reader = MustOpen(destination, OpenMode::kReadOnly);
  std::vector<std::byte> waited;
  auto newer = reader.WaitForNewer("model", 4, std::chrono::seconds(10), waited);
  REQUIRE(newer.ok());
  CHECK(newer->generation == 5);
}

TEST_CASE("CopyTo refuses to shrink a region or to name one twice", "[copy]") {
  TempDir dir;
  const std::string source = dir.File("src.rgn");
  const std::string destination = dir.File("dst.rgn");
  MakeSource(source, 2, 1 * kMiB);
  Store src = MustOpen(source, OpenMode::kReadOnly);
  CopyOptions shrink;
  shrink.checkpoints = {{"model", 19'999, SlotLayout::kAuto}};
  auto shrunk = src.CopyTo(destination, shrink);
  CHECK(shrunk.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(shrunk.status().message(), Catch::Contains("would shrink"));
  CopyOptions twice;
  twice.checkpoints = {{"new", 10, SlotLayout::kAuto}, {"new", 20, SlotLayout::kAuto}};
  CHECK(src.CopyTo(destination, twice).status().code() == StatusCode::kInvalidArgument);
  CHECK_FALSE(std::filesystem::exists(destination));
}

TEST_CASE("Regions with spare slots: every slot used, reopened, verified, and copied", "[copy]") {
  for (const uint32_t protocol : {1u, 2u}) {
    DYNAMIC_SECTION("protocol " << protocol) {
      TempDir dir;
      const std::string source = dir.File("src.rgn");
      MustCreateWithRegions(source, 0,
                            {{"many", 100, SlotLayout::kAuto, slot::kMaxSlotsPerRegion},
                             {"four", 70'000, SlotLayout::kAligned, 4},
                             {"three", 8}},
                            nullptr, protocol);
      std::vector<std::byte> many, four;
      {
        Store store = MustOpen(source, OpenMode::kReadWrite);
        const StoreInfo& info = store.info();
        CHECK(info.regions[0].slot_count == 64);
        CHECK(info.regions[1].slot_count == 4);
        CHECK(info.regions[2].slot_count == 3);
        // Twice round the 64 slots, durable every tenth commit, and the
        // aligned region's four slots three times over.
        for (uint64_t g = 1; g <= 130; ++g) {
          many = Payload(100, g, 1);
          const Durability mode = g % 10 == 0 ? Durability::kPwriteFdatasync : Durability::kNone;
          auto generation = store.Commit("many", many, mode);
          REQUIRE(generation.ok());
          CHECK(*generation == g);
        }
        for (uint64_t g = 1; g <= 12; ++g) {
          four = Payload(70'000, g, 2);
          REQUIRE(store.Commit("four", four, Durability::kNone).ok());
        }
        REQUIRE(store.Sync().ok());
      }
      {
        Store store = MustOpen(source, OpenMode::kReadWrite);  // the writer's recovery
        CHECK(MustLoad(store, "many") == many);
        CHECK(MustLoad(store, "four") == four);
      }
      auto verified = VerifyRegions(source);
      REQUIRE(verified.ok());
      for (const RegionReport& region : verified->regions) {
        INFO(region.name);
        CHECK_FALSE(region.damaged);
        CHECK_FALSE(region.torn);
      }
      CHECK(verified->regions[0].generation == 130);
      CHECK(verified->regions[1].generation == 12);

      // A copy keeps each region's slots, or takes new ones (capacity 0
      // keeps the capacity).
      Store src = MustOpen(source, OpenMode::kReadOnly);
      const std::string kept = dir.File("kept.rgn");
      REQUIRE(src.CopyTo(kept).ok());
      const std::string changed = dir.File("changed.rgn");
      CopyOptions more;
      // "four" keeps its capacity and takes compact slots.
      more.checkpoints = {{"three", 0, SlotLayout::kAuto, 5},
                          {"many", 0, SlotLayout::kAuto, 3},
                          {"four", 0, SlotLayout::kCompact}};
      REQUIRE(src.CopyTo(changed, more).ok());
      // Every region's count at once, a region added among them.
      const std::string all = dir.File("all.rgn");
      CopyOptions every;
      every.slots = 6;
      every.checkpoints = {{"added", 10}, {"three", 0, SlotLayout::kAuto, 7}};
      REQUIRE(src.CopyTo(all, every).ok());
      CHECK(MustOpen(all, OpenMode::kReadOnly).info().regions[3].slot_count == 6);
      {
        Store changed_store = MustOpen(changed, OpenMode::kReadOnly);
        CHECK(changed_store.info().regions[1].layout == SlotLayout::kCompact);
        CHECK(changed_store.info().regions[1].capacity == 70'000);
      }
      for (const auto& [path, slots] : {std::pair{kept, std::vector<uint32_t>{64, 4, 3}},
                                        std::pair{changed, std::vector<uint32_t>{3, 4, 5}},
                                        std::pair{all, std::vector<uint32_t>{6, 6, 7}}}) {
        INFO(path);
        Store copy = MustOpen(path, OpenMode::kReadWrite);
        for (size_t i = 0; i < slots.size(); ++i) {
          CHECK(copy.info().regions[i].slot_count == slots[i]);
        }
        CHECK(copy.info().regions[0].capacity == 100);
        CHECK(MustLoad(copy, "many") == many);
        CHECK(MustLoad(copy, "four") == four);
        auto next = copy.Commit("many", Payload(100, 131, 1), Durability::kNone);
        REQUIRE(next.ok());
        CHECK(*next == 131);
      }
    }
  }
}

TEST_CASE("Create and CopyTo refuse a slot count outside 3 to 64, naming the region", "[copy]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  for (const uint32_t slots : {1u, 2u, 65u, 1000u}) {
    INFO(slots);
    CreateOptions create;
    create.checkpoints = {{"state", 100, SlotLayout::kAuto, slots}};
    const Status s = Store::Create(path, 0, create);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("region 'state': " + std::to_string(slots) +
                                            " slots; between 3 and 64 are allowed"));
    CHECK_FALSE(std::filesystem::exists(path));
  }
  MustCreateWithRegions(path, 0, {{"state", 100}});
  Store src = MustOpen(path, OpenMode::kReadOnly);
  CopyOptions two;
  two.checkpoints = {{"state", 0, SlotLayout::kAuto, 2}};
  const std::string destination = dir.File("dst.rgn");
  CHECK(src.CopyTo(destination, two).status().code() == StatusCode::kInvalidArgument);
  CHECK_FALSE(std::filesystem::exists(destination));
  CopyOptions every;
  every.slots = 65;
  const Status refused = src.CopyTo(destination, every).status();
  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.message(), Catch::Contains("65 slots; between 3 and 64"));
  CHECK_FALSE(std::filesystem::exists(destination));
}

TEST_CASE("CopyTo refuses what it cannot do and leaves the destination as it was", "[copy]") {
  TempDir dir;
  const std::string source = dir.File("src.rgn");
  const std::string destination = dir.File("dst.rgn");
  MakeSource(source, 1, 1 * kMiB);
  Store src = MustOpen(source, OpenMode::kReadOnly);
  WriteWholeFile(destination, PatternBytes(5000, 1));
  const auto unchanged = [&] { return ReadWholeFile(destination) == PatternBytes(5000, 1); };

  auto exists = src.CopyTo(destination);
  CHECK(exists.status().code() == StatusCode::kAlreadyExists);
  CHECK(unchanged());
  auto itself = src.CopyTo(source, Options(true));
  CHECK(itself.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(itself.status().message(), Catch::Contains("is the store being copied"));
  std::filesystem::create_hard_link(source, dir.File("link.rgn"));
  auto linked = src.CopyTo(dir.File("link.rgn"), Options(true));
  CHECK(linked.status().code() == StatusCode::kInvalidArgument);
  auto smaller = src.CopyTo(destination, Options(true, 0, 4096));
  CHECK(smaller.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(smaller.status().message(), Catch::Contains("smaller than the source's"));
  auto protocol = src.CopyTo(destination, Options(true, 3));
  CHECK(protocol.status().code() == StatusCode::kInvalidArgument);
  CHECK(unchanged());
  std::filesystem::create_directory(dir.File("adir"));
  auto directory = src.CopyTo(dir.File("adir"), Options(true));
  CHECK(directory.status().code() == StatusCode::kInvalidArgument);
  CHECK(std::filesystem::is_directory(dir.File("adir")));
  // The source is untouched by all of it.
  CheckNothingDamaged(source);
}

TEST_CASE("CopyTo refuses a source region with nothing valid, writing nothing", "[copy]") {
  TempDir dir;
  const std::string source = dir.File("src.rgn");
  MakeSource(source, 1, 1 * kMiB);
  {
    // Damage every slot header of "step": no commit left to copy.
    Store src = MustOpen(source, OpenMode::kReadOnly);
    const RegionEntry& step = src.info().regions[1];
    for (uint32_t s = 0; s < step.slot_count; ++s) {
      FlipByte(source, slot::HeaderFileOffset(step, s) + 20);
    }
  }
  Store src = MustOpen(source, OpenMode::kReadOnly);
  std::vector<std::byte> out;
  const auto loaded = src.Load("step", out);
  REQUIRE_FALSE(loaded.ok());
  auto report = src.CopyTo(dir.File("dst.rgn"));
  CHECK_FALSE(report.ok());
  CHECK(report.status().code() == loaded.status().code());
  CHECK_FALSE(std::filesystem::exists(dir.File("dst.rgn")));
}

// Region r's payload of batch n names n in its first word.
struct BatchLoop {
  std::atomic<uint32_t> stop{0};
  std::atomic<uint64_t> batches{0};
};

TEST_CASE("A copy taken while another process commits batches holds one batch whole",
          "[copy][multiprocess]") {
  for (uint32_t protocol : {1u, 2u}) {
    DYNAMIC_SECTION("protocol " << protocol) {
      TempDir dir;
      const std::string source = dir.File("src.rgn");
      CreateOptions options;
      options.checkpoints = kCopyRegions;
      options.protocol = protocol;
      options.batch_log = true;
      REQUIRE(Store::Create(source, 64 * kKiB, options).ok());
      SharedMemory<BatchLoop> loop;
      ChildGuard child;
      const pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        ::alarm(300);
        auto writer = Store::Open(source, OpenMode::kReadWrite);
        if (!writer.ok()) ::_exit(2);
        for (uint64_t n = 1; loop->stop.load() == 0; ++n) {
          const Durability mode = n % 16 == 0 ? Durability::kSync : Durability::kNone;
          if (!Batch(*writer, {"model", "step", "index"},
                     {Payload(20'000, n, 11), Payload(8, n, 12), Payload(70'001, n, 13)}, mode)
                   .ok()) {
            ::_exit(3);
          }
          loop->batches.store(n);
        }
        ::_exit(0);
      }
      child.Adopt(pid);
      while (loop->batches.load() == 0) ::sched_yield();
      Store reader = MustOpen(source, OpenMode::kReadOnly);
      int copies = 0, busy = 0;
      for (int i = 0; i < 6; ++i) {
        const std::string destination = dir.File("dst" + std::to_string(i) + ".rgn");
        auto report = reader.CopyTo(destination);
        if (!report.ok() && report.status().code() == StatusCode::kBusy) {
          ++busy;
          continue;
        }
        INFO(report.status().ToString());
        REQUIRE(report.ok());
        ++copies;
        Store dst = MustOpen(destination, OpenMode::kReadOnly);
        CheckpointMeta meta;
        const std::vector<std::byte> model = MustLoad(dst, "model", &meta);
        const uint64_t n = FirstWord(model);
        INFO("copy " << i << " holds batch " << n);
        CHECK(meta.generation == n);
        CHECK(model == Payload(20'000, n, 11));
        CHECK(MustLoad(dst, "step") == Payload(8, n, 12));
        CHECK(MustLoad(dst, "index") == Payload(70'001, n, 13));
        CheckNothingDamaged(destination);
      }
      const uint64_t before_stop = loop->batches.load();
      loop->stop.store(1);
      const int status = Reap(child);
      CHECK(DescribeWait(status) == DescribeWait(0));
      INFO(copies << " copies, " << busy << " busy, " << before_stop << " batches");
      CHECK(copies >= 1);
      CHECK(before_stop >= 2);
    }
  }
}

TEST_CASE("A copy killed at any step leaves the destination absent or as it was, and no temp",
          "[copy][multiprocess][long]") {
  TempDir dir;
  const std::string source = dir.File("src.rgn");
  const std::string destination = dir.File("dst.rgn");
  MakeSource(source, 1, 32 * kMiB);
  // How many progress steps a whole copy makes: the kills land on them.
  uint64_t steps = 0;
  {
    Store src = MustOpen(source, OpenMode::kReadOnly);
    CopyOptions counting;
    counting.progress = [&](uint64_t, uint64_t) { ++steps; };
    REQUIRE(src.CopyTo(dir.File("count.rgn"), counting).ok());
  }
  REQUIRE(steps >= 8);
  // 100 kills (25 under the sanitizers), half with no file at the
  // destination and half replacing one, cycling through every step.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr uint64_t kKillsEach = 12;
#else
  constexpr uint64_t kKillsEach = 50;
#endif
  uint64_t kills = 0;
  for (const bool replace : {false, true}) {
    if (replace) WriteWholeFile(destination, PatternBytes(3000, 2));
    for (uint64_t kill = 0; kill < kKillsEach; ++kill) {
      const uint64_t step = 1 + kill % steps;
      ++kills;
      INFO((replace ? "replacing a file" : "no file")
           << ", killed at step " << step << " of " << steps);
      ChildGuard child;
      const pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        ::alarm(120);
        auto src = Store::Open(source, OpenMode::kReadOnly);
        if (!src.ok()) ::_exit(2);
        uint64_t seen = 0;
        CopyOptions options;
        options.replace_existing = replace;
        options.progress = [&](uint64_t, uint64_t) {
          if (++seen == step) ::kill(::getpid(), SIGKILL);
        };
        (void)src->CopyTo(destination, options);
        ::_exit(3);  // the kill never came
      }
      child.Adopt(pid);
      const int status = Reap(child);
      INFO(DescribeWait(status));
      REQUIRE(WIFSIGNALED(status));
      CHECK(WTERMSIG(status) == SIGKILL);
      if (replace) {
        CHECK(ReadWholeFile(destination) == PatternBytes(3000, 2));
      } else {
        CHECK_FALSE(std::filesystem::exists(destination));
      }
    }
  }
  CHECK(kills == 2 * kKillsEach);
  // The next copy publishes, and leaves no temp beside it.
  Store src = MustOpen(source, OpenMode::kReadOnly);
  REQUIRE(src.CopyTo(destination, Options(true)).ok());
  CheckSameContent(source, destination);
  auto strays = FindStrayTemps(destination);
  REQUIRE(strays.ok());
  CHECK(strays->empty());
}

TEST_CASE("regionctl copy --size --checkpoint: the offline grow", "[copy][regionctl]") {
  TempDir dir;
  const std::string source = dir.File("src.rs");
  const std::string destination = dir.File("big.rs");
  RequireSuccess(Regionctl({"create", source, "--size", "64KiB", "--checkpoint", "state:1KiB"}));
  RequireSuccess(Regionctl({"commit", source, "state"}, TextBytes("small state")));
  RequireSuccess(Regionctl({"copy", source, destination, "--size", "128KiB", "--checkpoint",
                            "state:8KiB", "--checkpoint", "log:2KiB:compact"}));
  ProcessResult loaded = Regionctl({"load", destination, "state"});
  RequireSuccess(loaded);
  CHECK(loaded.stdout_bytes == "small state");
  const std::string large(5000, 'x');  // over the source's 1 KiB
  RequireSuccess(Regionctl({"commit", destination, "state"}, TextBytes(large)));
  const nlohmann::json stat = JsonOf({"stat", destination, "--json"});
  CHECK(stat["data_size"] == 128 * 1024);
  REQUIRE(stat["regions"].size() == 2);
  CHECK(stat["regions"][0]["capacity"] == 8 * 1024);
  CHECK(stat["regions"][0]["generation"] == 2);
  CHECK(stat["regions"][1]["name"] == "log");
  RequireFailure(Regionctl({"copy", source, dir.File("small.rs"), "--checkpoint", "state:10"}),
                 kExitUsage);
  CHECK_FALSE(std::filesystem::exists(dir.File("small.rs")));
}

TEST_CASE(
    "regionctl copy --wait-idle waits for no writer, then copies as one, and a writer "
    "that stays is a bounded wait and exit 4",
    "[copy][regionctl]") {
  TempDir dir;
  const std::string source = dir.File("src.rs");
  RequireSuccess(Regionctl({"create", source, "--size", "64KiB", "--checkpoint", "a:1KiB"}));
  RequireSuccess(Regionctl({"commit", source, "a"}, TextBytes("committed")));
  RequireSuccess(Regionctl({"write", source, "--offset", "0"}, TextBytes("data area")));
  {
    Store writer = MustOpen(source, OpenMode::kReadWrite);
    ProcessResult busy =
        Regionctl({"copy", source, dir.File("busy.rs"), "--wait-idle", "--wait-seconds", "0.3"});
    RequireFailure(busy, kExitBusy);
    CHECK(busy.stderr_bytes.find("a writer held the store") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.File("busy.rs")));
  }
  RequireSuccess(Regionctl({"copy", source, dir.File("idle.rs"), "--wait-idle"}));
  CHECK(Regionctl({"load", dir.File("idle.rs"), "a"}).stdout_bytes == "committed");
  CHECK(Regionctl({"read", dir.File("idle.rs"), "--offset", "0", "--length", "9"}).stdout_bytes ==
        "data area");
  // The copy ran as the writer and closed: another writer opens at once.
  CHECK(Store::Open(source, OpenMode::kReadWrite).ok());
}

TEST_CASE("regionctl copy: a report, its JSON, and clear refusals", "[copy][regionctl]") {
  TempDir dir;
  const std::string source = dir.File("src.rgn");
  const std::string destination = dir.File("dst.rgn");
  MakeSource(source, 1, 1 * kMiB);
  const nlohmann::json report =
      JsonOf({"copy", source, destination, "--protocol", "2", "--size", "2MiB", "--json"});
  CHECK(report["source"] == source);
  CHECK(report["destination"] == destination);
  CHECK(report["protocol"] == 2);
  CHECK(report["regions"] == 4);
  CHECK(report["destination_regions"] == 4);
  CHECK(report["regions_committed"] == 3);
  CHECK(report["data_bytes"] == 1 * kMiB);
  CHECK(InspectJson(destination)["protocol"] == 2);
  CheckSameContent(source, destination);

  const ProcessResult exists = Regionctl({"copy", source, destination});
  RequireFailure(exists, 1);
  CHECK_THAT(exists.stderr_bytes, Catch::Contains("exists"));
  const ProcessResult itself = Regionctl({"copy", source, source, "--force"});
  RequireFailure(itself, 2);
  CHECK_THAT(itself.stderr_bytes, Catch::Contains("is the store being copied"));
  RequireFailure(Regionctl({"copy", source, dir.File("x.rgn"), "--protocol", "3"}), 2);
  CHECK_FALSE(std::filesystem::exists(dir.File("x.rgn")));
  const ProcessResult text = Regionctl({"copy", source, destination, "--force"});
  RequireSuccess(text);
  CHECK_THAT(text.stdout_bytes, Catch::Contains("3 of 4 regions with a commit"));
}

}  // namespace
}  // namespace regionstore::testing
