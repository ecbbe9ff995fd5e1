// Batch commits and payloads in pieces through the public API: what a batch
// returns and loads, what it refuses before writing anything, how many
// barriers it makes (counted through the io seam), and what readers, verify
// and the next open make of a batch that did not complete.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "batch.h"
#include "format.h"
#include "regionstore/store.h"
#include "slot.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

#ifdef REGIONCTL_PATH  // tests/CMakeLists.txt: the tool, and nlohmann-json with it
#include <nlohmann/json.hpp>
#endif

namespace regionstore::testing {
namespace {

std::vector<std::byte> Bytes(size_t length, int seed) {
  std::vector<std::byte> out(length);
  for (size_t i = 0; i < length; ++i) out[i] = static_cast<std::byte>((i * 131 + seed * 7) & 0xff);
  return out;
}

const std::vector<CheckpointSpec> kSpecs = {
    {"model", 10'000}, {"optimizer", 5'000, SlotLayout::kAligned}, {"step", 8}, {"log", 70'001}};

// Protocol 1 unless asked: the layout, barrier and trace cases below are
// protocol 1's (test_journal.cc has protocol 2's).
void CreateBatchStore(const std::string& path, bool batch_log = true, Io* io = nullptr,
                      uint32_t protocol = 1) {
  CreateOptions options;
  options.protocol = protocol;
  options.checkpoints = kSpecs;
  options.batch_log = batch_log;
  options.io = io;
  const Status s = Store::Create(path, 64 * kKiB, options);
  INFO(s.ToString());
  REQUIRE(s.ok());
}

// One member per (name, payload), each payload in one piece.
struct Batch {
  std::vector<std::vector<std::span<const std::byte>>> pieces;
  std::vector<BatchMember> members;
  Batch(const std::vector<std::pair<std::string_view, const std::vector<std::byte>*>>& list) {
    pieces.reserve(list.size());
    for (const auto& [name, payload] : list) {
      pieces.push_back({std::span<const std::byte>(*payload)});
      members.push_back({name, pieces.back()});
    }
  }
};

TEST_CASE("A batch commits every member and returns each generation", "[batch]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string path = dir.File("b.rgn");
  CreateBatchStore(path, /*batch_log=*/true, /*io=*/nullptr, protocol);
  for (Durability mode : kAllModes) {
    INFO("mode " << static_cast<int>(mode));
    Store store = MustOpen(path, OpenMode::kReadWrite);
    const auto model = Bytes(9'999, 1 + static_cast<int>(mode));
    const auto step = Bytes(8, 2);
    const auto log = Bytes(4'097, 3);
    const uint64_t model_before =
        store.Report("model")->has_commit ? store.Report("model")->generation : 0;
    Batch batch({{"model", &model}, {"step", &step}, {"log", &log}});
    auto generations = store.CommitBatch(batch.members, mode);
    INFO(generations.status().ToString());
    REQUIRE(generations.ok());
    REQUIRE(generations->size() == 3);
    CHECK((*generations)[0] == model_before + 1);
    CheckpointMeta meta;
    CHECK(MustLoad(store, "model", &meta) == model);
    CHECK(meta.generation == (*generations)[0]);
    CHECK(meta.skipped_incomplete_batch == 0);
    CHECK(MustLoad(store, "step") == step);
    CHECK(MustLoad(store, "log") == log);
    CHECK(store.Stats().of(mode).batches == 1);
    CHECK(store.Stats().of(mode).commits == 3);
    // A read-only handle in the same boot sees the same.
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    CHECK(MustLoad(reader, "log") == log);
  }
  // And after the last handle closed: verify sees one batch per member slot.
  auto report = VerifyRegions(path);
  REQUIRE(report.ok());
  for (const RegionReport& region : report->regions) {
    for (const SlotReport& s : region.slots) {
      CHECK_FALSE(s.batch_incomplete);
      if (region.name == "optimizer") CHECK(s.batch_id == 0);
    }
  }
  // The last batch's members carry one id (ids jump past 32 after a handle
  // that closed with a batch not durable: see "Batches" in CHECKPOINTS.md).
  const RegionReport& model = report->regions[0];
  const RegionReport& step = report->regions[2];
  REQUIRE(step.has_commit);
  REQUIRE(model.has_commit);
  CHECK(step.slots[step.active_slot].batch_id != 0);
  CHECK(step.slots[step.active_slot].batch_id == model.slots[model.active_slot].batch_id);
}

TEST_CASE("A payload in pieces commits their concatenation in every mode", "[batch]") {
  TempDir dir;
  const std::string path = dir.File("p.rgn");
  CreateBatchStore(path, /*batch_log=*/false);
  Store store = MustOpen(path, OpenMode::kReadWrite);
  const auto whole = Bytes(10'000, 5);
  for (Durability mode : kAllModes) {
    const std::span<const std::byte> all(whole);
    const std::vector<std::span<const std::byte>> pieces = {
        all.first(1), all.subspan(1, 4095), std::span<const std::byte>(), all.subspan(4096)};
    auto generation = store.CommitPieces("model", pieces, mode);
    INFO(generation.status().ToString());
    REQUIRE(generation.ok());
    CHECK(MustLoad(store, "model") == whole);
  }
  // Over the capacity counted over all pieces, and too many pieces: refused.
  const std::vector<std::span<const std::byte>> over = {std::span<const std::byte>(whole),
                                                        std::span<const std::byte>(whole).first(1)};
  auto refused = store.CommitPieces("model", over, Durability::kSync);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  const std::vector<std::span<const std::byte>> many(kMaxPayloadPieces + 1,
                                                     std::span<const std::byte>(whole).first(1));
  refused = store.CommitPieces("model", many, Durability::kSync);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(MustLoad(store, "model") == whole);
}

TEST_CASE("A bad batch is refused before anything is written", "[batch]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string path = dir.File("r.rgn");
  CreateBatchStore(path, /*batch_log=*/true, /*io=*/nullptr, protocol);
  const auto small = Bytes(8, 1);
  const auto big = Bytes(10'001, 2);
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    Batch first({{"model", &small}, {"step", &small}});
    REQUIRE(store.CommitBatch(first.members, Durability::kSync).ok());
  }
  const std::vector<std::byte> before = ReadWholeFile(path);
  TestIo io;
  {
    OpenOptions options;
    options.io = &io;
    auto store = Store::Open(path, OpenMode::kReadWrite, options);
    REQUIRE(store.ok());
    io.ClearLog();
    struct Case {
      const char* what;
      std::vector<std::pair<std::string_view, const std::vector<std::byte>*>> list;
      StatusCode code;
      const char* says;
    };
    for (const Case& c : std::vector<Case>{
             {"twice",
              {{"model", &small}, {"model", &small}},
              StatusCode::kInvalidArgument,
              "named twice"},
             {"unknown", {{"model", &small}, {"nope", &small}}, StatusCode::kNotFound, "nope"},
             {"over",
              {{"step", &small}, {"model", &big}},
              StatusCode::kInvalidArgument,
              "exceeds the capacity"},
             {"empty", {}, StatusCode::kInvalidArgument, "at least one"}}) {
      INFO(c.what);
      Batch batch(c.list);
      auto result = store->CommitBatch(batch.members, Durability::kPwriteFdatasync);
      REQUIRE_FALSE(result.ok());
      CHECK(result.status().code() == c.code);
      CHECK_THAT(result.status().message(), Catch::Contains(c.says));
    }
    std::vector<std::byte> one = Bytes(1, 1);
    std::vector<std::pair<std::string_view, const std::vector<std::byte>*>> too_many(
        kMaxBatchMembers + 1, {"step", &one});
    Batch batch(too_many);
    auto result = store->CommitBatch(batch.members, Durability::kNone);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == StatusCode::kInvalidArgument);
    CHECK(io.Count(Op::kWriteAt) == 0);
    CHECK(io.Count(Op::kDataSync) == 0);
    CHECK_FALSE(store->poisoned());
  }
  // The open and its close wrote the watermark and nothing else: every slot
  // and record byte is as it was.
  const std::vector<std::byte> after = ReadWholeFile(path);
  REQUIRE(after.size() == before.size());
  const StoreInfo info = *ReadStoreInfo(path);
  const uint64_t intent = info.data_offset - format::kIntentAreaSize;
  CHECK(std::memcmp(before.data(), after.data(), intent) == 0);
  CHECK(std::memcmp(before.data() + info.data_offset, after.data() + info.data_offset,
                    before.size() - info.data_offset) == 0);
}

TEST_CASE("A store without a batch log refuses a batch and is laid out as before", "[batch]") {
  TempDir dir;
  const std::string with = dir.File("with.rgn");
  const std::string without = dir.File("without.rgn");
  CreateBatchStore(with);
  CreateBatchStore(without, /*batch_log=*/false);
  const StoreInfo plain = *ReadStoreInfo(without);
  CHECK((plain.incompat_flags & format::kIncompatBatchLog) == 0);
  CHECK(plain.data_offset == format::kDataOffset);
  const StoreInfo logged = *ReadStoreInfo(with);
  CHECK((logged.incompat_flags & format::kIncompatBatchLog) != 0);
  CHECK(logged.data_offset == format::kDataOffset);
  CHECK(batch::LogOffset(logged) ==
        format::kDataOffset - format::kIntentAreaSize - format::kBatchLogSize);
  CHECK_FALSE(batch::LogOffset(plain).has_value());

  Store store = MustOpen(without, OpenMode::kReadWrite);
  const auto payload = Bytes(8, 1);
  Batch batch({{"step", &payload}});
  auto refused = store.CommitBatch(batch.members, Durability::kSync);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.status().message(), Catch::Contains("no batch log"));
  // Single commits of a store without a log keep a zero reserved field.
  REQUIRE(store.Commit("step", payload, Durability::kSync).ok());
  const RegionReport report = *store.Report("step");
  CHECK(report.slots[report.active_slot].batch_id == 0);
}

TEST_CASE("A durable batch makes exactly one barrier", "[batch]") {
  TempDir dir;
  const std::string path = dir.File("one.rgn");
  CreateBatchStore(path);
  TestIo io;
  OpenOptions options;
  options.io = &io;
  auto store = Store::Open(path, OpenMode::kReadWrite, options);
  REQUIRE(store.ok());
  const auto a = Bytes(10'000, 1), b = Bytes(5'000, 2), c = Bytes(8, 3), d = Bytes(70'001, 4);
  // Settle every region first: a region's first commit reads its slots and
  // may zero and sync headers no commit owns.
  Batch warm({{"model", &a}, {"optimizer", &b}, {"step", &c}, {"log", &d}});
  REQUIRE(store->CommitBatch(warm.members, Durability::kSync).ok());
  for (Durability mode : {Durability::kSync, Durability::kPwriteFdatasync}) {
    for (int round = 0; round < 40; ++round) {
      io.ClearLog();
      Batch batch({{"model", &a}, {"optimizer", &b}, {"step", &c}, {"log", &d}});
      auto generations = store->CommitBatch(batch.members, mode);
      REQUIRE(generations.ok());
      INFO("round " << round);
      CHECK(io.Count(Op::kDataSync) == 1);
      CHECK(io.Count(Op::kMsync) == 0);
      CHECK(io.Count(Op::kSync) == 0);
    }
  }
  CHECK(store->Stats().batch_log_barriers == 0);
  // 40 batches without a barrier: the 33rd needs the log unit of the
  // first, which only a durable watermark frees: two forced barriers, then
  // none for the next 31.
  int forced = 0;
  for (int round = 0; round < 40; ++round) {
    io.ClearLog();
    Batch batch({{"model", &a}, {"step", &c}});
    REQUIRE(store->CommitBatch(batch.members, Durability::kNone).ok());
    forced += io.Count(Op::kDataSync);
  }
  CHECK(forced == 2);
  CHECK(store->Stats().batch_log_barriers == 2);
}

#ifdef REGIONCTL_PATH
// Slot `index` of the first region in `regionctl inspect PATH --json`, the
// document checked against its schema.
nlohmann::json InspectedSlot(const std::string& path, uint32_t index) {
  const ProcessResult inspected = Regionctl({"inspect", path, "--json"});
  RequireSuccess(inspected);
  RequireMatchesSchema("inspect", inspected);
  return ParseJson(inspected)["regions"][0]["slots"][index];
}
#endif

// The trace of a batch a kill interrupted, written by hand: one member's
// header in place, its partner's missing. Readers skip it, verify names it,
// and the next writer's open removes it.
TEST_CASE("An interrupted batch is skipped, reported, then removed by the next open", "[batch]") {
  TempDir dir;
  const std::string path = dir.File("i.rgn");
  CreateBatchStore(path);
  const auto old_model = Bytes(100, 1), old_step = Bytes(8, 2);
  const auto new_model = Bytes(200, 3), new_step = Bytes(8, 4);
  uint32_t model_target = 0, step_target = 0;
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    Batch first({{"model", &old_model}, {"step", &old_step}});
    REQUIRE(store.CommitBatch(first.members, Durability::kSync).ok());
    Batch second({{"model", &new_model}, {"step", &new_step}});
    REQUIRE(store.CommitBatch(second.members, Durability::kSync).ok());
    step_target = store.Report("step")->active_slot;
    model_target = store.Report("model")->active_slot;
  }
  // Undo the second batch's step member: zero its header unit, as if the
  // kill came before that header reached the page cache.
  const StoreInfo info = *ReadStoreInfo(path);
  std::vector<std::byte> file = ReadWholeFile(path);
  const uint64_t step_unit = slot::HeaderFileOffset(info.regions[2], step_target);
  std::memset(file.data() + step_unit, 0, slot::kHeaderUnitSize);
  // And the watermark: back to what it was before the second batch, open
  // (not clean), as a killed writer leaves it.
  const uint64_t intent = info.data_offset - format::kIntentAreaSize;
  const batch::Watermark wm = batch::ReadWatermark(std::span(file).subspan(intent));
  const batch::Watermark killed{1, wm.sequence + 1, false};
  const intent::EntryBytes entry = intent::EncodeEntry(batch::WatermarkEntry(killed));
  std::memcpy(
      file.data() + intent + batch::WatermarkEntryIndex(killed.sequence) * intent::kEntrySize,
      entry.data(), entry.size());
  WriteWholeFile(path, file);

  {
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    CheckpointMeta meta;
    CHECK(MustLoad(reader, "model", &meta) == old_model);
    CHECK(meta.skipped_incomplete_batch == 2);
    CHECK(MustLoad(reader, "step") == old_step);
    auto report = VerifyRegions(path);
    REQUIRE(report.ok());
    const SlotReport& trace = report->regions[0].slots[model_target];
    CHECK(trace.state == SlotState::kIncomplete);
    CHECK(trace.batch_incomplete);
    CHECK(trace.batch_id == 2);
    CHECK_THAT(trace.reason, Catch::Contains("region 'step' lacks its member"));
    CHECK(report->regions[0].has_commit);
    CHECK(report->regions[0].generation == 1);
#ifdef REGIONCTL_PATH
    // regionctl's documents of the trace match their schemas and show it.
    const nlohmann::json slot_json = InspectedSlot(path, model_target);
    CHECK(slot_json["batch_incomplete"] == true);
    CHECK(slot_json["batch"] == 2);
    const ProcessResult verified = Regionctl({"verify", path, "--json"});
    CHECK(verified.exit_code == kExitSuccess);
    RequireMatchesSchema("verify", verified);
#endif
  }
  {
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    CheckpointMeta meta;
    CHECK(MustLoad(writer, "model", &meta) == old_model);
    CHECK(meta.generation == 1);
    // The open withdrew the trace: it never counts again, and keeps its
    // generation.
    const RegionReport model = *writer.Report("model");
    const SlotReport& withdrawn = model.slots[model_target];
    CHECK(withdrawn.state == SlotState::kIncomplete);
    CHECK(withdrawn.batch_incomplete);
    CHECK(withdrawn.batch_id == batch::kWithdrawnId);
    CHECK(withdrawn.generation == 2);
    CHECK_THAT(withdrawn.reason, Catch::Contains("withdrawn by a writer's open"));
#ifdef REGIONCTL_PATH
    const nlohmann::json slot_json = InspectedSlot(path, model_target);
    CHECK(slot_json["batch_withdrawn"] == true);
    CHECK(slot_json["batch"] == nullptr);
#endif
    // The next batch gets an id past every one the killed writer could have
    // issued, and generations above the withdrawn member's.
    Batch next({{"model", &new_model}, {"step", &new_step}});
    auto generations = writer.CommitBatch(next.members, Durability::kPwriteFdatasync);
    REQUIRE(generations.ok());
    CHECK(generations.value()[0] == 3);
    CHECK(generations.value()[1] == 2);
    CHECK(MustLoad(writer, "model") == new_model);
    const RegionReport after = *writer.Report("model");
    CHECK(after.slots[after.active_slot].batch_id == 1 + batch::kUnits + 1);
  }
}

}  // namespace
}  // namespace regionstore::testing
