// Batches filled in place (Store::BeginBatch, PendingBatch): what finishing
// them in each mode writes and costs in barriers, what abandoning or
// killing them leaves, and what is refused while one is pending. Their
// power-loss and SIGKILL-loop coverage is in test_batch_power_loss.cc and
// test_checkpoint_crash.cc beside the copying batches.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "regionstore/store.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

constexpr uint64_t kWide = 200 * kKiB;

void CreateBatchStore(const std::string& path, bool batch_log = true) {
  CreateOptions options;
  options.checkpoints = {{"a", 20'000}, {"b", 4096}, {"wide", kWide, SlotLayout::kAligned}};
  options.batch_log = batch_log;
  // Only a protocol 1 store can be without a batch log.
  if (!batch_log) options.protocol = 1;
  REQUIRE(Store::Create(path, 0, options).ok());
}

constexpr std::array<BatchReservation, 3> kAll{{{"a", 20'000}, {"b", 4096}, {"wide", kWide}}};

// The payloads of batch `n`: lengths below each capacity, distinct bytes.
std::array<std::vector<std::byte>, 3> InPlaceBatchPayloads(uint64_t n) {
  return {PatternBytes(19'000 - n % 7, 3 * n), PatternBytes(4096 - n % 5, 3 * n + 1),
          PatternBytes(kWide - 100 * (n % 9), 3 * n + 2)};
}

// InPlaceBatchPayloads(n) as FillEachWay leaves them.
std::array<std::vector<std::byte>, 3> FilledPayloads(uint64_t n) {
  std::array<std::vector<std::byte>, 3> payloads = InPlaceBatchPayloads(n);
  payloads[2][777] ^= std::byte{0x3c};
  return payloads;
}

// Fills member 0 through the mapping, member 1 by Append in pieces, member
// 2 by Append and then one byte changed through the mapping (so its
// checksum is read back), with FilledPayloads(n). Usable in a child
// process: reports failure instead of asserting.
Status FillEachWay(PendingBatch& pending, uint64_t n) {
  const std::array<std::vector<std::byte>, 3> payloads = InPlaceBatchPayloads(n);
  std::copy(payloads[0].begin(), payloads[0].end(), pending.payload(0).begin());
  for (uint64_t done = 0; done < payloads[1].size(); done += 1000) {
    const uint64_t piece = std::min<uint64_t>(1000, payloads[1].size() - done);
    if (Status s = pending.Append(1, std::span(payloads[1]).subspan(done, piece)); !s.ok()) {
      return s;
    }
  }
  if (Status s = pending.Append(2, payloads[2]); !s.ok()) return s;
  pending.payload(2)[777] = FilledPayloads(n)[2][777];
  return Status::Ok();
}

std::array<uint64_t, 3> Lengths(const std::array<std::vector<std::byte>, 3>& payloads) {
  return {payloads[0].size(), payloads[1].size(), payloads[2].size()};
}

void CheckHolds(const Store& store, const std::array<std::vector<std::byte>, 3>& payloads) {
  for (size_t m = 0; m < kAll.size(); ++m) {
    INFO("region " << kAll[m].region);
    CHECK(MustLoad(store, kAll[m].region) == payloads[m]);
  }
}

TEST_CASE("A batch filled in place loads byte-exact in every mode, one barrier when durable",
          "[inplace][batch]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateBatchStore(path);
  Store store = MustOpen(path, OpenMode::kReadWrite);
  uint64_t n = 0;
  for (Durability mode : kAllModes) {
    INFO("mode " << DurabilityName(mode));
    ++n;
    auto pending = store.BeginBatch(kAll);
    REQUIRE(pending.ok());
    REQUIRE(pending->size() == 3);
    CHECK(pending->payload(0).size() == 20'000);
    CHECK(pending->payload(3).empty());
    REQUIRE(FillEachWay(*pending, n).ok());
    const std::array<std::vector<std::byte>, 3> payloads = FilledPayloads(n);
    CHECK(pending->appended(1) == payloads[1].size());
    const ModeStats before = store.Stats().of(mode);
    auto generations = pending->Finish(Lengths(payloads), mode);
    REQUIRE(generations.ok());
    CHECK(*generations == std::vector<uint64_t>{n, n, n});
    CHECK_FALSE(pending->pending());
    const ModeStats after = store.Stats().of(mode);
    CHECK(after.batches == before.batches + 1);
    CHECK(after.commits == before.commits + 3);
    // kNone: no barrier; kAsync: an msync(MS_ASYNC) per member; durable:
    // one fdatasync for the whole batch.
    const uint64_t barriers = mode == Durability::kNone ? 0 : mode == Durability::kAsync ? 3 : 1;
    CHECK(after.flushes - before.flushes == barriers);
    CheckHolds(store, payloads);
    // A reader in another handle, as one consistent set.
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    const std::array<std::string_view, 3> names{"a", "b", "wide"};
    std::vector<std::vector<std::byte>> copies;
    auto metas = reader.LoadSet(names, copies);
    REQUIRE(metas.ok());
    for (size_t m = 0; m < 3; ++m) CHECK(copies[m] == payloads[m]);
  }
  Store reopened = MustOpen(path, OpenMode::kReadOnly);
  CheckHolds(reopened, FilledPayloads(n));
  CheckNothingDamaged(path);
}

TEST_CASE("An abandoned batch filled in place leaves every region as it was", "[inplace][batch]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateBatchStore(path);
  Store store = MustOpen(path, OpenMode::kReadWrite);
  const std::array<std::vector<std::byte>, 3> before = InPlaceBatchPayloads(1);
  {
    std::vector<std::array<std::span<const std::byte>, 1>> pieces;
    std::vector<BatchMember> members;
    for (size_t m = 0; m < 3; ++m) pieces.push_back({std::span<const std::byte>(before[m])});
    for (size_t m = 0; m < 3; ++m) members.push_back({kAll[m].region, pieces[m]});
    REQUIRE(store.CommitBatch(members, Durability::kSync).ok());
  }
  for (int how = 0; how < 3; ++how) {
    INFO("how " << how);
    {
      auto pending = store.BeginBatch(kAll);
      REQUIRE(pending.ok());
      REQUIRE(FillEachWay(*pending, 50 + how).ok());
      CheckHolds(store, before);  // meanwhile, the previous batch
      if (how == 0) {
        pending->Abort();
        CHECK_FALSE(pending->pending());
        CHECK(pending->size() == 0);
        CHECK(pending->payload(0).empty());
        CHECK(pending->Finish(Durability::kSync).status().code() == StatusCode::kInvalidArgument);
        CHECK(pending->Append(0, PatternBytes(1, 1)).code() == StatusCode::kInvalidArgument);
      }
      if (how == 1) {
        PendingBatch moved = std::move(*pending);
        CHECK_FALSE(pending->pending());
        CHECK(moved.pending());
      }
      // how 2: destroyed unfinished.
    }
    CheckHolds(store, before);
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    CheckHolds(reader, before);
  }
  // The generations abandoned batches never took are the next batch's.
  auto pending = store.BeginBatch(kAll);
  REQUIRE(pending.ok());
  REQUIRE(FillEachWay(*pending, 9).ok());
  const std::array<std::vector<std::byte>, 3> next = FilledPayloads(9);
  auto generations = pending->Finish(Durability::kPwriteFdatasync);
  REQUIRE(generations.ok());
  CHECK(*generations == std::vector<uint64_t>{2, 2, 2});
  // Finish(durability) takes appended() as each length: member 0, filled
  // only through the mapping, commits an empty payload.
  CHECK(MustLoad(store, "a").empty());
  CHECK(MustLoad(store, "b") == next[1]);
  CHECK(MustLoad(store, "wide") == next[2]);
}

TEST_CASE("While a batch is filled in place its regions refuse other commits, and bad ones fail",
          "[inplace][batch]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  {
    const std::string plain = dir.File("plain.rgn");
    CreateBatchStore(plain, /*batch_log=*/false);
    Store store = MustOpen(plain, OpenMode::kReadWrite);
    const auto refused = store.BeginBatch(kAll);
    CHECK(refused.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(refused.status().ToString(), Catch::Contains("batch log"));
  }
  CreateBatchStore(path);
  {
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    CHECK(reader.BeginBatch(kAll).status().code() == StatusCode::kInvalidArgument);
  }
  Store store = MustOpen(path, OpenMode::kReadWrite);
  const std::array<BatchReservation, 2> twice{{{"a", 1}, {"a", 2}}};
  CHECK(store.BeginBatch(twice).status().code() == StatusCode::kInvalidArgument);
  const std::array<BatchReservation, 2> too_long{{{"a", 1}, {"b", 4097}}};
  CHECK(store.BeginBatch(too_long).status().code() == StatusCode::kInvalidArgument);
  const std::array<BatchReservation, 2> unknown{{{"a", 1}, {"nope", 1}}};
  CHECK(store.BeginBatch(unknown).status().code() == StatusCode::kNotFound);
  CHECK(store.BeginBatch({}).status().code() == StatusCode::kInvalidArgument);

  const std::vector<std::byte> old_b = PatternBytes(300, 1);
  REQUIRE(store.Commit("b", old_b, Durability::kNone).ok());
  const std::array<BatchReservation, 2> a_and_b{{{"a", 100}, {"b", 100}}};
  std::optional<PendingBatch> pending;
  {
    auto begun = store.BeginBatch(a_and_b);
    REQUIRE(begun.ok());
    pending.emplace(std::move(*begun));
  }
  // Every member's region is busy, for every way of committing to it.
  CHECK(store.Commit("b", old_b, Durability::kSync).status().code() == StatusCode::kBusy);
  CHECK(store.BeginCommit("wide", 1).status().code() == StatusCode::kBusy);
  CHECK(store.BeginBatch(kAll).status().code() == StatusCode::kBusy);
  const std::array<std::span<const std::byte>, 1> piece{std::span<const std::byte>(old_b)};
  const std::array<BatchMember, 2> with_a{BatchMember{"wide", piece}, BatchMember{"a", piece}};
  const auto busy = store.CommitBatch(with_a, Durability::kNone);
  CHECK(busy.status().code() == StatusCode::kBusy);
  CHECK_THAT(busy.status().ToString(), Catch::Contains("filled in place"));
  // Other regions commit; a barrier of theirs does not finish the batch.
  REQUIRE(store.Commit("wide", old_b, Durability::kPwriteFdatasync).ok());
  CHECK(MustLoad(store, "b") == old_b);

  // Bad appends are refused and leave it pending; a bad finish is refused
  // and abandons it (store.h), leaving the regions as they were.
  REQUIRE(pending->Append(0, PatternBytes(100, 2)).ok());
  CHECK(pending->Append(0, PatternBytes(1, 2)).code() == StatusCode::kInvalidArgument);
  CHECK(pending->Append(2, PatternBytes(1, 2)).code() == StatusCode::kInvalidArgument);
  CHECK(pending->pending());
  const std::array<uint64_t, 1> one_length{100};
  CHECK(pending->Finish(one_length, Durability::kSync).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK_FALSE(pending->pending());
  const auto begin_again = [&] {
    auto begun = store.BeginBatch(a_and_b);
    REQUIRE(begun.ok());
    pending.emplace(std::move(*begun));
  };
  begin_again();
  const std::array<uint64_t, 2> over{100, 101};
  CHECK(pending->Finish(over, Durability::kSync).status().code() == StatusCode::kInvalidArgument);
  CHECK_FALSE(pending->pending());
  CHECK(MustLoad(store, "b") == old_b);
  begin_again();

  // The store closes first: the batch can no longer reach it.
  { Store gone = std::move(store); }
  CHECK_FALSE(pending->pending());
  CHECK(pending->Finish(Durability::kSync).status().code() == StatusCode::kInvalidArgument);
  pending.reset();
  Store reopened = MustOpen(path, OpenMode::kReadWrite);
  CHECK(MustLoad(reopened, "b") == old_b);
  std::vector<std::byte> out;
  CHECK(reopened.Load("a", out).status().code() == StatusCode::kNotFound);
}

TEST_CASE("A writer killed while filling a batch in place leaves the newest batch byte-exact",
          "[inplace][batch]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateBatchStore(path);
  for (uint64_t round = 0; round < 4; ++round) {
    INFO("round " << round);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::alarm(30);
      auto store = Store::Open(path, OpenMode::kReadWrite);
      if (!store.ok()) ::_exit(2);
      auto finished = store->BeginBatch(kAll);
      if (!finished.ok()) ::_exit(3);
      if (!FillEachWay(*finished, 100 + round).ok()) ::_exit(4);
      if (!finished->Finish(Lengths(FilledPayloads(100 + round)), kAllModes[round]).ok()) {
        ::_exit(5);
      }
      auto pending = store->BeginBatch(kAll);
      if (!pending.ok()) ::_exit(6);
      if (!FillEachWay(*pending, 200 + round).ok()) ::_exit(7);
      ::raise(SIGKILL);
      ::_exit(8);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(WTERMSIG(status) == SIGKILL);
    Store store = MustOpen(path, OpenMode::kReadWrite);
    CheckHolds(store, FilledPayloads(100 + round));
  }
}

}  // namespace
}  // namespace regionstore::testing
