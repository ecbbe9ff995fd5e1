// Store::LoadSet: several regions as one consistent set, beside a writer that
// commits batches (docs/CHECKPOINTS.md, "Consistent loads"). Every batch of
// the loops below covers every region, and region r's payload of batch n is
// a function of (n, r) that names n in its first word, so a set is
// consistent exactly when every region names the same batch, byte-exact.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "intent.h"
#include "regionstore/store.h"
#include "support/borrowed_mapping.h"
#include "support/commit_payloads.h"
#include "support/files.h"
#include "support/mutation_scope.h"
#include "support/process.h"
#include "support/shared_memory.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"
#include "test_hooks.h"

namespace regionstore::testing {
namespace {

// Compact and aligned slots, sizes that are and are not page multiples.
const std::vector<CheckpointSpec> kSetRegions = {{"model", 20'000, SlotLayout::kCompact},
                                                 {"step", 8, SlotLayout::kCompact},
                                                 {"index", 70'001, SlotLayout::kAligned},
                                                 {"log", 4096, SlotLayout::kAuto}};
constexpr std::string_view kSetNames[] = {"model", "step", "index", "log"};

CommitId SetPayloadId(uint64_t batch, size_t region) { return {batch, region + 1}; }

uint64_t SetPayloadSize(uint64_t batch, size_t region) {
  const uint64_t capacity = kSetRegions[region].capacity;
  return 1 + Mix64(batch * 8 + region) % capacity;
}

// In protocol 2 the publication word is the sidecar's.
void CreateSetStore(const std::string& path, uint32_t protocol = 1) {
  CreateOptions options;
  options.checkpoints = kSetRegions;
  options.batch_log = true;
  options.protocol = protocol;
  const Status created = Store::Create(path, 64 * kKiB, options);
  INFO(created.ToString());
  REQUIRE(created.ok());
}

// Batch n of every region, mostly kNone (the fastest, the hardest race),
// some in every other mode.
Result<std::vector<uint64_t>> CommitSetBatch(Store& store, uint64_t n) {
  std::vector<std::vector<std::byte>> payloads(kSetRegions.size());
  std::vector<std::span<const std::byte>> pieces(kSetRegions.size());
  std::vector<BatchMember> members;
  for (size_t r = 0; r < kSetRegions.size(); ++r) {
    FillPayload(SetPayloadId(n, r), SetPayloadSize(n, r), payloads[r]);
    pieces[r] = payloads[r];
  }
  for (size_t r = 0; r < kSetRegions.size(); ++r) {
    members.push_back({kSetRegions[r].name, PayloadPieces(&pieces[r], 1)});
  }
  const uint64_t pick = Mix64(n ^ 0x5e7) % 16;
  const Durability mode = pick == 0   ? Durability::kSync
                          : pick == 1 ? Durability::kPwriteFdatasync
                          : pick < 4  ? Durability::kAsync
                                      : Durability::kNone;
  return store.CommitBatch(members, mode);
}

// What is wrong with a set LoadSet returned ("" if nothing): every region
// must hold the same batch, byte-exact.
std::string CheckSet(const std::vector<std::vector<std::byte>>& outs) {
  const uint64_t n = FirstWord(outs[0]);
  for (size_t r = 0; r < outs.size(); ++r) {
    const CommitId id = SetPayloadId(n, r);
    if (outs[r].size() >= 8 && FirstWord(outs[r]) != n) {
      return "region " + std::string(kSetNames[r]) + " holds batch " +
             std::to_string(FirstWord(outs[r])) + " beside batch " + std::to_string(n);
    }
    if (outs[r].size() != SetPayloadSize(n, r) || FirstMismatch(id, outs[r]) != outs[r].size()) {
      return "region " + std::string(kSetNames[r]) + " is not batch " + std::to_string(n) +
             " byte-exact";
    }
  }
  return "";
}

TEST_CASE("LoadSet returns a batch byte-exact, and refuses bad sets before reading",
          "[loadset][batch]") {
  TempDir dir;
  const std::string path = dir.File("set.rgn");
  CreateSetStore(path);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  std::vector<std::vector<std::byte>> outs;
  // Before any commit: the set fails whole, as Load.
  auto none = reader.LoadSet(kSetNames, outs);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == StatusCode::kNotFound);
  for (uint64_t n = 1; n <= 3; ++n) {
    auto committed = CommitSetBatch(writer, n);
    INFO(committed.status().ToString());
    REQUIRE(committed.ok());
  }
  for (const Store* store : {&writer, &reader}) {
    auto metas = store->LoadSet(kSetNames, outs);
    INFO(metas.status().ToString());
    REQUIRE(metas.ok());
    REQUIRE(metas->size() == 4);
    REQUIRE(outs.size() == 4);
    CHECK(CheckSet(outs).empty());
    CHECK(FirstWord(outs[0]) == 3);
    for (const CheckpointMeta& meta : *metas) CHECK(meta.generation == 3);
    // A subset in another order: the same batch.
    const std::string_view two[] = {"log", "model"};
    auto subset = store->LoadSet(two, outs);
    REQUIRE(subset.ok());
    REQUIRE(outs.size() == 2);
    CHECK(FirstMismatch(SetPayloadId(3, 3), outs[0]) == outs[0].size());
    CHECK(FirstMismatch(SetPayloadId(3, 0), outs[1]) == outs[1].size());
  }
  const std::string_view twice[] = {"model", "model"};
  const std::string_view unknown[] = {"model", "nope"};
  CHECK(reader.LoadSet(twice, outs).status().code() == StatusCode::kInvalidArgument);
  CHECK(reader.LoadSet(unknown, outs).status().code() == StatusCode::kNotFound);
  CHECK(reader.LoadSet({}, outs).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("The writer moves the publication word around every visible change, through the Io",
          "[loadset][batch]") {
  TempDir dir;
  const std::string path = dir.File("word.rgn");
  CreateSetStore(path);
  TestIo io;
  Store writer = MustOpen(path, OpenMode::kReadWrite, &io);
  const uint64_t word = writer.info().data_offset - intent::kAreaSize +
                        uint64_t{intent::kPublicationEntry} * intent::kEntrySize;
  const auto word_writes = [&] {
    int writes = 0;
    for (const WriteCall& call : io.Writes()) {
      if (call.offset == word) {
        CHECK(call.length == intent::kPublicationSize);
        ++writes;
      }
    }
    return writes;
  };
  const auto word_value = [&] {
    const std::vector<std::byte> file = ReadWholeFile(path);
    return intent::DecodePublication(std::span(file).subspan(word, intent::kPublicationSize));
  };
  // A clean open of a new store writes no word; 16 zero bytes read as 0.
  CHECK(word_writes() == 0);
  CHECK(word_value() == 0u);
  uint64_t p = 0;
  for (Durability mode : kAllModes) {
    INFO(DurabilityName(mode));
    io.ClearLog();
    const std::vector<std::byte> one(10, std::byte{1});
    REQUIRE(writer.Commit("model", one, mode).ok());
    // A single commit: P + 2, after its header: one pwrite, except for a
    // mapped commit that is not the first since a whole-file barrier
    // (kAsync here, after kNone), whose stores go through the mapping.
    CHECK(word_writes() == (mode == Durability::kAsync ? 0 : 1));
    CHECK(word_value() == (p += 2));
    io.ClearLog();
    REQUIRE(CommitSetBatch(writer, 1).ok());
    // A batch: P + 1 before its headers, + 1 after.
    CHECK(word_writes() == 2);
    CHECK(word_value() == (p += 2));
  }
}

// As fast as it can; under TSan (readers about ten times slower) yielding
// the CPU after each batch: on two busy cores (CI runs tests side by side)
// such a writer held TSan readers off for whole time slices, and 6% to 15%
// of their loads ended in kBusy.
void YieldUnderTsan() {
#if defined(__SANITIZE_THREAD__)
  std::this_thread::yield();
#endif
}

// Loads `loads` sets beside the writer; counts what it saw.
struct SetReaderCounts {
  std::atomic<uint64_t> ok{0}, busy{0}, mixed{0}, failed{0};
  std::atomic<uint64_t> batches_seen{0};  // distinct from the previous load
};

void LoadSets(const Store& reader, uint64_t loads, SetReaderCounts& counts) {
  std::vector<std::vector<std::byte>> outs;
  uint64_t last = 0;
  for (uint64_t i = 0; i < loads; ++i) {
    auto metas = reader.LoadSet(kSetNames, outs);
    if (!metas.ok()) {
      (metas.status().code() == StatusCode::kBusy ? counts.busy : counts.failed)++;
      continue;
    }
    if (!CheckSet(outs).empty()) {
      ++counts.mixed;
      continue;
    }
    ++counts.ok;
    if (FirstWord(outs[0]) != last) ++counts.batches_seen;
    last = FirstWord(outs[0]);
  }
}

struct SetShared {
  std::atomic<int> readers_done{0};
  SetReaderCounts readers[2];
};

TEST_CASE("Reader processes loading sets beside a batch loop never get a mixed set",
          "[loadset][batch][multiprocess][long]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string path = dir.File("race.rgn");
  CreateSetStore(path, protocol);
  {
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(CommitSetBatch(writer, 1).ok());
  }
  const uint64_t loads = ScaledCount(protocol == 1 ? 15000 : 8000);
  SharedMemory<SetShared> shared;
  std::vector<std::unique_ptr<ChildGuard>> readers;
  for (int i = 0; i < 2; ++i) {
    readers.push_back(std::make_unique<ChildGuard>(::fork()));
    Must(readers.back()->pid() >= 0, "fork");
    if (readers.back()->pid() == 0) {
      auto reader = Store::Open(path, OpenMode::kReadOnly);
      if (!reader.ok()) ::_exit(kChildOpenFailed);
      LoadSets(*reader, loads, shared->readers[i]);
      shared->readers_done.fetch_add(1);
      ::_exit(kChildOk);
    }
  }
  // The writer: batches until both readers are done (bounded by their count).
  uint64_t batches = 1;
  {
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    while (shared->readers_done.load() < 2 && batches < 50'000'000) {
      auto committed = CommitSetBatch(writer, ++batches);
      if (!committed.ok()) FAIL("batch " << batches << ": " << committed.status().ToString());
      YieldUnderTsan();
    }
  }
  for (auto& reader : readers) {
    const int status = Reap(*reader);
    INFO(DescribeChild(status));
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  for (const SetReaderCounts& c : shared->readers) {
    WARN("set reader: " << c.ok << " consistent sets (" << c.batches_seen << " changes of batch), "
                        << c.busy << " busy, " << c.mixed << " mixed, " << c.failed
                        << " failed, beside " << batches << " batches");
    CHECK(c.mixed == 0);
    CHECK(c.failed == 0);
    CHECK(c.ok + c.busy == loads);
    CHECK(c.ok * 100 >= loads * 95);
    // The race happened: the readers saw the batches move.
    CHECK(c.batches_seen > 1);
  }
}

// Reader threads on the writer's own mapping (the form ThreadSanitizer can
// watch) load sets while this thread commits batches.
std::vector<std::array<uint64_t, 3>> RaceThreads(uint64_t loads) {
  TempDir dir;
  const std::string path = dir.File("threads.rgn");
  CreateSetStore(path);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  REQUIRE(CommitSetBatch(writer, 1).ok());
  std::unique_ptr<BorrowingIo> io;
  auto reader = OpenOnWritersMapping(writer, path, io);
  INFO(reader.status().ToString());
  REQUIRE(reader.ok());
  REQUIRE(reader->View(0, 1)->data() == writer.View(0, 1)->data());
  SetShared shared;
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      LoadSets(*reader, loads, shared.readers[i]);
      shared.readers_done.fetch_add(1);
    });
  }
  uint64_t batches = 1;
  Status failure;
  while (shared.readers_done.load() < 2 && failure.ok()) {
    auto committed = CommitSetBatch(writer, ++batches);
    if (!committed.ok()) failure = committed.status();
    YieldUnderTsan();
  }
  for (std::thread& thread : threads) thread.join();
  INFO(failure.ToString());
  REQUIRE(failure.ok());
  std::vector<std::array<uint64_t, 3>> counts;
  for (const SetReaderCounts& c : shared.readers) {
    WARN("set reader thread: " << c.ok << " consistent sets, " << c.busy << " busy, " << c.mixed
                               << " mixed, " << c.failed << " failed, beside " << batches
                               << " batches");
    CHECK(c.failed == 0);
    counts.push_back({c.ok.load(), c.busy.load(), c.mixed.load()});
  }
  return counts;
}

TEST_CASE("Reader threads on the writer's own mapping load consistent sets without a data race",
          "[loadset][batch][threads][tsan][long]") {
  const uint64_t loads = ScaledCount(10000);
  for (const auto& [ok, busy, mixed] : RaceThreads(loads)) {
    CHECK(mixed == 0);
    CHECK(ok * 100 >= loads * 95);
  }
}

// A batch that lands while LoadSet is between two regions of its snapshot:
// the pause hook commits it after the first region's headers were read.
struct BatchDuringSnapshot {
  Store* writer = nullptr;
  uint64_t batch = 0;
  int commits = 0;
  static void Pause(void* context, size_t position) {
    auto* self = static_cast<BatchDuringSnapshot*>(context);
    if (position != 0 || self->commits > 0) return;
    ++self->commits;
    REQUIRE(CommitSetBatch(*self->writer, self->batch).ok());
  }
};

TEST_CASE("A batch landing between two regions of a snapshot is never mixed in",
          "[loadset][batch]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string path = dir.File("pause.rgn");
  CreateSetStore(path, protocol);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  REQUIRE(CommitSetBatch(writer, 1).ok());
  std::vector<std::vector<std::byte>> outs;
  BatchDuringSnapshot during{&writer, 2, 0};
  internal::SetLoadSetPause(&BatchDuringSnapshot::Pause, &during);
  SECTION("with the publication word: the snapshot starts over and gets batch 2") {
    auto metas = reader.LoadSet(kSetNames, outs);
    internal::SetLoadSetPause(nullptr, nullptr);
    REQUIRE(metas.ok());
    CHECK(during.commits == 1);
    CHECK(CheckSet(outs).empty());
    CHECK(FirstWord(outs[0]) == 2);
  }
  SECTION("without it: region 0 from batch 1, the others from batch 2") {
    MutationScope scope(internal::Mutation::kLoadSetIgnoresPublication);
    auto metas = reader.LoadSet(kSetNames, outs);
    internal::SetLoadSetPause(nullptr, nullptr);
    REQUIRE(metas.ok());
    CHECK(during.commits == 1);
    CHECK_FALSE(CheckSet(outs).empty());
    CHECK(FirstMismatch(SetPayloadId(1, 0), outs[0]) == outs[0].size());
    CHECK(FirstMismatch(SetPayloadId(2, 2), outs[2]) == outs[2].size());
  }
}

// Two single commits landing while LoadSet is between two regions: one to
// a region already read, then one to a region not read yet. Region 0 old
// beside region 1 new is no moment of the history (the commit to region 0
// came first), so a consistent load must not return it.
struct CommitsDuringSnapshot {
  Store* writer = nullptr;
  int commits = 0;
  static void Pause(void* context, size_t position) {
    auto* self = static_cast<CommitsDuringSnapshot*>(context);
    if (position != 0 || self->commits > 0) return;
    ++self->commits;
    for (size_t r : {size_t{0}, size_t{1}}) {
      std::vector<std::byte> payload;
      FillPayload(SetPayloadId(2, r), SetPayloadSize(2, r), payload);
      REQUIRE(self->writer->Commit(kSetRegions[r].name, payload, Durability::kNone).ok());
    }
  }
};

TEST_CASE("Single commits landing between two regions of a snapshot keep their order",
          "[loadset]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string path = dir.File("singles.rgn");
  CreateSetStore(path, protocol);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  REQUIRE(CommitSetBatch(writer, 1).ok());
  const std::string_view two[] = {"model", "step"};
  std::vector<std::vector<std::byte>> outs;
  CommitsDuringSnapshot during{&writer, 0};
  internal::SetLoadSetPause(&CommitsDuringSnapshot::Pause, &during);
  SECTION("with the publication word: both new") {
    auto metas = reader.LoadSet(two, outs);
    internal::SetLoadSetPause(nullptr, nullptr);
    REQUIRE(metas.ok());
    CHECK(during.commits == 1);
    CHECK(FirstMismatch(SetPayloadId(2, 0), outs[0]) == outs[0].size());
    CHECK(FirstMismatch(SetPayloadId(2, 1), outs[1]) == outs[1].size());
  }
  SECTION("without it: region 0 before its commit, region 1 after the later one") {
    MutationScope scope(internal::Mutation::kLoadSetIgnoresPublication);
    auto metas = reader.LoadSet(two, outs);
    internal::SetLoadSetPause(nullptr, nullptr);
    REQUIRE(metas.ok());
    CHECK(FirstMismatch(SetPayloadId(1, 0), outs[0]) == outs[0].size());
    CHECK(FirstMismatch(SetPayloadId(2, 1), outs[1]) == outs[1].size());
  }
}

}  // namespace
}  // namespace regionstore::testing
