// Section 6 of regionstore_commit_bench: batch commits. One batch replaces
// N regions of S bytes durably and atomically, at 16 x 4 KiB and 4 x 64 KiB,
// interleaved with what else does that job: LMDB putting N keys in one
// transaction and SQLite replacing N rows in one (when built with them: see
// peer_stores.h), the device floor (the same N pieces pwritten to a plain
// file, then one fdatasync), and N single durable commits, one per region
// (the region rate a batch is for). An operation is one batch: ops/s is
// batches per second, and regions/s is N times that. "ours" is a store made
// with Store::Create's defaults; the same batches on a protocol 1 store (and
// the floor at the file offsets protocol 1 writes) run beside it, labelled
// "protocol 1".
//
// What our arms ask of the OS is counted through the io seam (CountingIo:
// bytes and calls of every pwrite, and barriers), beside the device's own
// counters, so that a rate can be read against the bytes behind it. The
// store holds only the N regions (no data area), so a batch's fdatasync
// writes back nothing but the batch.
#include <fcntl.h>
#include <sys/uio.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "commit_bench.h"
#include "lab/counting_io.h"
#include "lab/die.h"
#include "lab/raw_io.h"
#include "lab/realtime_scope.h"
#include "peer_stores.h"

namespace regionstore::bench {
namespace {

struct Shape {
  size_t regions;
  uint64_t size;  // bytes per region
};
inline constexpr std::array<Shape, 2> kShapes{{{16, 4 * kKiB}, {4, 64 * kKiB}}};
inline constexpr size_t kMaxShapeRegions = 16;

// What an arm writes per batch: its pieces, one per region.
using Pieces = std::array<std::span<const std::byte>, kMaxShapeRegions>;

// The arms, by the names --json and the README give them.
enum BatchArmId : size_t {
  kBatchSync,
  kBatchPwrite,
  kFloor,
  kFloorP1Extents,
  kLmdb,
  kSqlite,
  kSinglesSync,
  kSinglesPwrite,
  // The same batches on a protocol 1 store (batch log, marks in the file).
  kBatchSyncP1,
  kBatchPwriteP1,
  kBatchArmIds
};
constexpr std::array<const char*, kBatchArmIds> kArmKeys = {
    "commit_batch_sync",
    "commit_batch_pwrite_fdatasync",
    "floor",
    "floor_protocol1_extents",
    "lmdb",
    "sqlite",
    "singles_sync",
    "singles_pwrite_fdatasync",
    "commit_batch_sync_protocol1",
    "commit_batch_pwrite_fdatasync_protocol1"};

// What the io seam saw of one arm, over all its batches (calibration and
// warm-up included: per batch, they are the same).
struct SeamTally {
  uint64_t ops = 0;
  IoCounts counts;
};

struct ArmResult {
  BatchArmId id;
  std::string name;
  double median_ns = NAN;  // per batch
  DevicePerOp device;
  bool counted = false;                                         // through the io seam (our arms)
  double write_bytes = NAN, write_calls = NAN, barriers = NAN;  // per batch
};

struct ShapeResult {
  Shape shape;
  std::vector<ArmResult> arms;
  BatchArmId ours = kBatchSync;       // the faster batch mode by median
  BatchArmId singles = kSinglesSync;  // the faster singles mode by median
  BatchArmId ours_p1 = kBatchSyncP1;  // the faster protocol 1 batch mode
  PairedRatio floor_over_ours, singles_over_ours, lmdb_over_ours, sqlite_over_ours, floor_over_p1,
      extents_over_p1;
  bool peers = false;
};

// `run(pieces)` per operation, on N new pieces: one Payloads buffer of N x S
// bytes cut into N.
template <typename Run>
Arm PiecesArm(std::string name, Shape shape, Run run) {
  return LoopArm(
      std::move(name), shape.regions * shape.size, [shape, run](std::span<const std::byte> all) {
        Pieces pieces{};
        for (size_t i = 0; i < shape.regions; ++i) {
          pieces[i] = all.subspan(i * shape.size, shape.size);
        }
        return run(std::span<const std::span<const std::byte>>(pieces.data(), shape.regions));
      });
}

// `arm`, with what it asks of `io` added to `tally`.
Arm Counted(Arm arm, const CountingIo& io, SeamTally& tally) {
  return {std::move(arm.name), [inner = std::move(arm.batch), &io, &tally](uint64_t ops) {
            const IoCounts before = io.counts();
            std::string error = inner(ops);
            tally.counts += io.counts() - before;
            tally.ops += ops;
            return error;
          }};
}

ShapeResult RunShape(const Options& options, Shape shape) {
  const std::string tag = std::to_string(shape.regions) + "x" + SizeName(shape.size);
  std::string stem = options.dir + "/batch-" + std::to_string(shape.regions) + "x" +
                     std::to_string(shape.size / kKiB) + "k";
  std::vector<std::string> names;
  std::vector<RegionSpec> regions;
  for (size_t i = 0; i < shape.regions; ++i) {
    char name[24];  // not "r" + std::to_string(i): gcc 12's -Wrestrict misfires on it
    std::snprintf(name, sizeof name, "r%zu", i);
    names.emplace_back(name);
    // What kAuto picks at these sizes (under kCompactSlotLimit).
    regions.push_back({names.back(), shape.size, SlotLayout::kCompact});
  }
  const std::string store_path = stem + ".rgn";
  CreateStore(store_path, regions, /*batch_log=*/true);
  CountingIo io;
  Store store = OpenStore(store_path, &io);
  const std::string p1_path = stem + "-p1.rgn";
  CreateStore(p1_path, regions, /*batch_log=*/true, kProtocol1);
  CountingIo io_p1;
  Store store_p1 = OpenStore(p1_path, &io_p1);
  const std::string floor_path = stem + "-floor.bin";
  CreatePlainFile(floor_path, shape.regions * shape.size);
  const Fd floor(floor_path, O_RDWR | O_CLOEXEC);
  const int floor_fd = floor.get();
  // The same floor, at the file offsets a protocol 1 batch writes: a plain
  // file as large as that store, each piece behind a zero 4 KiB header unit in the
  // member's slot (compact: the unit opens the slot), slots rotating as
  // commits do, one 4 KiB batch record in the log (the 32 units before the
  // intent area, docs/FORMAT.md) and a 16-byte intent mark; then one
  // fdatasync. What the layout costs the device, without the library.
  const std::string extents_path = stem + "-extents.bin";
  CreatePlainFile(extents_path, std::filesystem::file_size(p1_path));
  const Fd extents(extents_path, O_RDWR | O_CLOEXEC);
  std::vector<uint64_t> unit_offsets;  // slot 0's header unit, per member
  uint64_t slot_stride = 0;
  for (const std::string& name : names) {
    const RegionEntry& region = RegionOf(store_p1.info(), name);
    unit_offsets.push_back(SlotHeaderUnitOffset(region, 0));
    slot_stride = region.slot_stride;
  }
  const uint64_t intent_offset = store_p1.info().data_offset - kHeaderUnitSize;
  const uint64_t log_offset = intent_offset - 32 * kHeaderUnitSize;

  const auto batch_on = [&names](Store& on, Durability mode) {
    return [&on, &names, mode](PayloadPieces pieces) -> std::string {
      std::array<BatchMember, kMaxShapeRegions> members{};
      for (size_t i = 0; i < pieces.size(); ++i) {
        members[i] = {names[i], PayloadPieces(&pieces[i], 1)};
      }
      auto generations = on.CommitBatch({members.data(), pieces.size()}, mode);
      return generations.ok() ? std::string() : generations.status().ToString();
    };
  };
  const auto batch = [&store, &batch_on](Durability mode) { return batch_on(store, mode); };
  const auto singles = [&store, &names](Durability mode) {
    return [&store, &names, mode](PayloadPieces pieces) -> std::string {
      for (size_t i = 0; i < pieces.size(); ++i) {
        auto generation = store.Commit(names[i], pieces[i], mode);
        if (!generation.ok()) return generation.status().ToString();
      }
      return {};
    };
  };
  std::array<SeamTally, kBatchArmIds> tallies{};
  std::vector<Arm> arms;
  std::vector<BatchArmId> ids;
  const auto add = [&](BatchArmId id, Arm arm) {
    ids.push_back(id);
    arms.push_back(std::move(arm));
  };
  const std::string n = std::to_string(shape.regions);
  add(kBatchSync, Counted(PiecesArm("ours: CommitBatch kSync", shape, batch(Durability::kSync)), io,
                          tallies[kBatchSync]));
  add(kBatchPwrite, Counted(PiecesArm("ours: CommitBatch kPwriteFdatasync", shape,
                                      batch(Durability::kPwriteFdatasync)),
                            io, tallies[kBatchPwrite]));
  add(kFloor, PiecesArm("floor: " + n + " pwrites + 1 fdatasync, plain file", shape,
                        [floor_fd, size = shape.size](PayloadPieces pieces) -> std::string {
                          for (size_t i = 0; i < pieces.size(); ++i) {
                            std::string e = WriteOne(floor_fd, pieces[i], i * size, 0);
                            if (!e.empty()) return e;
                          }
                          return DataSync(floor_fd);
                        }));
  add(kFloorP1Extents,
      PiecesArm(
          "floor at protocol 1's extents: " + n + " (unit + piece) + record + mark, 1 fdatasync",
          shape,
          [fd = extents.get(), unit_offsets, slot_stride, intent_offset, log_offset,
           zero = std::make_shared<std::vector<std::byte>>(kHeaderUnitSize),
           count = std::make_shared<uint64_t>(0)](PayloadPieces pieces) -> std::string {
            const uint64_t op = (*count)++;
            const uint64_t slot = op % kSlotsPerRegion;
            for (size_t i = 0; i < pieces.size(); ++i) {
              const std::array<iovec, 2> parts = {
                  iovec{zero->data(), zero->size()},
                  iovec{const_cast<std::byte*>(pieces[i].data()), pieces[i].size()}};
              std::string e = WriteParts(fd, parts, unit_offsets[i] + slot * slot_stride, 0);
              if (!e.empty()) return e;
            }
            const std::span<const std::byte> record(zero->data(), kHeaderUnitSize);
            std::string e = WriteOne(fd, record, log_offset + (op % 32) * kHeaderUnitSize, 0);
            if (e.empty()) e = WriteOne(fd, record.first(16), intent_offset + 48, 0);
            return e.empty() ? DataSync(fd) : e;
          }));
#ifdef REGIONSTORE_BENCH_PEERS
  Lmdb lmdb(stem + "-lmdb", shape.size, shape.regions);
  Sqlite sqlite(stem + ".sqlite");
  add(kLmdb, PiecesArm("LMDB, default flags: " + n + " puts in one txn", shape,
                       [&lmdb](PayloadPieces pieces) { return lmdb.PutAll(pieces); }));
  add(kSqlite, PiecesArm("SQLite, WAL + FULL: " + n + " INSERT OR REPLACE in one txn", shape,
                         [&sqlite](PayloadPieces pieces) { return sqlite.ReplaceAll(pieces); }));
#endif
  add(kSinglesSync,
      Counted(PiecesArm(n + " single Commits kSync", shape, singles(Durability::kSync)), io,
              tallies[kSinglesSync]));
  add(kSinglesPwrite, Counted(PiecesArm(n + " single Commits kPwriteFdatasync", shape,
                                        singles(Durability::kPwriteFdatasync)),
                              io, tallies[kSinglesPwrite]));
  add(kBatchSyncP1, Counted(PiecesArm("protocol 1: CommitBatch kSync", shape,
                                      batch_on(store_p1, Durability::kSync)),
                            io_p1, tallies[kBatchSyncP1]));
  add(kBatchPwriteP1, Counted(PiecesArm("protocol 1: CommitBatch kPwriteFdatasync", shape,
                                        batch_on(store_p1, Durability::kPwriteFdatasync)),
                              io_p1, tallies[kBatchPwriteP1]));

  std::fprintf(stderr, "  batches %s\n", tag.c_str());
  const RealtimeScope realtime(options.realtime, "regionstore_commit_bench");
  const Rounds rounds =
      RunInterleaved(arms, options.rounds, options.peer_batch_ms, options.device_stat);

  ShapeResult result;
  result.shape = shape;
  std::array<const std::vector<double>*, kBatchArmIds> times{};
  for (size_t a = 0; a < arms.size(); ++a) {
    ArmResult arm;
    arm.id = ids[a];
    arm.name = arms[a].name;
    arm.median_ns = Median(rounds.ns[a]);
    arm.device = MedianDevice(rounds.device[a]);
    const SeamTally& tally = tallies[arm.id];
    if (tally.ops > 0) {
      const double ops = static_cast<double>(tally.ops);
      arm.counted = true;
      arm.write_bytes = static_cast<double>(tally.counts.write_bytes) / ops;
      arm.write_calls = static_cast<double>(tally.counts.write_calls) / ops;
      arm.barriers = static_cast<double>(tally.counts.barriers) / ops;
    }
    times[arm.id] = &rounds.ns[a];
    result.arms.push_back(std::move(arm));
  }
  const auto median_of = [&](BatchArmId id) { return Median(*times[id]); };
  result.ours = median_of(kBatchSync) <= median_of(kBatchPwrite) ? kBatchSync : kBatchPwrite;
  result.singles =
      median_of(kSinglesSync) <= median_of(kSinglesPwrite) ? kSinglesSync : kSinglesPwrite;
  result.ours_p1 =
      median_of(kBatchSyncP1) <= median_of(kBatchPwriteP1) ? kBatchSyncP1 : kBatchPwriteP1;
  const std::vector<double>& ours = *times[result.ours];
  const std::vector<double>* reference = times[kFloor];
  result.floor_over_p1 = Paired(*times[kFloor], *times[result.ours_p1], reference);
  result.extents_over_p1 = Paired(*times[kFloorP1Extents], *times[result.ours_p1], reference);
  result.floor_over_ours = Paired(*times[kFloor], ours, reference);
  result.singles_over_ours = Paired(*times[result.singles], ours, reference);
  if (times[kLmdb] != nullptr && times[kSqlite] != nullptr) {
    result.peers = true;
    result.lmdb_over_ours = Paired(*times[kLmdb], ours, reference);
    result.sqlite_over_ours = Paired(*times[kSqlite], ours, reference);
  }
  return result;
}

std::string PerBatch(double value, int digits) {
  return std::isnan(value) ? std::string("-") : Fixed(value, digits);
}

void PrintShapes(const std::vector<ShapeResult>& results, const Options& options) {
  std::printf("## 6. Batches: replace N regions durably and atomically\n\n");
  std::printf(
      "%d interleaved rounds of every arm per shape (batches of ~%.0f ms); an operation is "
      "one batch of N regions of S bytes, so ops/s is batches/s. \"ours\": a store made with "
      "Store::Create's defaults (protocol %u), holding only the N compact regions; "
      "\"protocol 1\": the same on a protocol 1 store, for comparison. Each arm has its own "
      "files, created fresh. Seam: what our arms asked "
      "of the OS per batch, counted through the io seam (KiB pwritten / pwrite calls / "
      "barriers). Device: flushes / write requests / KiB written per batch, and this "
      "thread's user / system CPU µs per batch.\n\n",
      options.rounds, options.peer_batch_ms, kDefaultProtocol);
  std::printf(
      "| shape | arm | batches/s | regions/s | µs/batch | seam per batch | device per "
      "batch | CPU µs user / sys |\n| --- | --- | ---: | ---: | ---: | --- | --- | --- |\n");
  for (const ShapeResult& r : results) {
    const std::string shape = std::to_string(r.shape.regions) + " x " + SizeName(r.shape.size);
    for (const ArmResult& arm : r.arms) {
      const double per_s = 1e9 / arm.median_ns;
      const std::string seam = arm.counted ? PerBatch(arm.write_bytes / kKiB, 0) + " / " +
                                                 PerBatch(arm.write_calls, 0) + " / " +
                                                 PerBatch(arm.barriers, 0)
                                           : std::string("-");
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s / %s |\n", shape.c_str(),
                  arm.name.c_str(), FormatOps(arm.median_ns).c_str(),
                  Fixed(per_s * static_cast<double>(r.shape.regions), 0).c_str(),
                  FormatMicros(arm.median_ns).c_str(), seam.c_str(),
                  FormatDevice(arm.device).c_str(), PerBatch(arm.device.user_ns / 1e3, 0).c_str(),
                  PerBatch(arm.device.system_ns / 1e3, 0).c_str());
    }
  }
  std::printf(
      "\n| ratio (time of the other arm / ours, per round) | median | range | in fast / "
      "slow rounds (rounds) | target |\n| --- | ---: | --- | --- | --- |\n");
  for (const ShapeResult& r : results) {
    const bool wide = r.shape.regions == 16;
    const std::string shape = std::to_string(r.shape.regions) + " x " + SizeName(r.shape.size);
    const std::string ours = kArmKeys[r.ours];
    const std::string p1 = kArmKeys[r.ours_p1];
    PrintRatioRow(shape + ": floor / " + ours, r.floor_over_ours, wide ? 0.8 : 0);
    PrintRatioRow(shape + ": floor / " + p1, r.floor_over_p1, 0);
    PrintRatioRow(shape + ": floor at protocol 1's extents / " + p1, r.extents_over_p1, 0);
    PrintRatioRow(shape + ": " + std::string(kArmKeys[r.singles]) + " / " + ours +
                      " (the region rate's gain)",
                  r.singles_over_ours, wide ? 8 : 0);
    if (r.peers) {
      PrintRatioRow(shape + ": LMDB / " + ours, r.lmdb_over_ours, wide ? 0 : 1.8);
      PrintRatioRow(shape + ": SQLite / " + ours, r.sqlite_over_ours, wide ? 0 : 2.5);
    }
  }
  std::printf("\n");
  if (results.empty() || !results.front().peers) {
    std::printf(
        "LMDB and SQLite arms not built: their development files were not found when "
        "this was configured (Debian: liblmdb-dev, libsqlite3-dev).\n\n");
  }
}

nlohmann::json ShapesJson(const std::vector<ShapeResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const ShapeResult& r : results) {
    nlohmann::json arms = nlohmann::json::array();
    for (const ArmResult& arm : r.arms) {
      const double per_s = 1e9 / arm.median_ns;
      nlohmann::json row = {{"arm", kArmKeys[arm.id]},
                            {"name", arm.name},
                            {"regions", r.shape.regions},
                            {"size", r.shape.size},
                            {"median_ns", arm.median_ns},
                            {"ops_per_s", per_s},
                            {"regions_per_s", per_s * static_cast<double>(r.shape.regions)},
                            {"seam_write_bytes", nullptr},
                            {"seam_write_calls", nullptr},
                            {"seam_barriers", nullptr},
                            {"device_flushes", OrNull(arm.device.flushes)},
                            {"device_write_requests", OrNull(arm.device.write_requests)},
                            {"device_write_kib", OrNull(arm.device.write_kib)}};
      if (arm.counted) {
        row["seam_write_bytes"] = arm.write_bytes;
        row["seam_write_calls"] = arm.write_calls;
        row["seam_barriers"] = arm.barriers;
      }
      arms.push_back(std::move(row));
    }
    nlohmann::json shape = {
        {"regions", r.shape.regions},
        {"size", r.shape.size},
        {"ours", kArmKeys[r.ours]},
        {"singles", kArmKeys[r.singles]},
        {"arms", std::move(arms)},
        {"floor_over_ours", RatioJson(r.floor_over_ours)},
        {"singles_over_ours", RatioJson(r.singles_over_ours)},
        {"protocol1", kArmKeys[r.ours_p1]},
        {"floor_over_protocol1", RatioJson(r.floor_over_p1)},
        {"floor_protocol1_extents_over_protocol1", RatioJson(r.extents_over_p1)},
        {"lmdb_over_ours", nullptr},
        {"sqlite_over_ours", nullptr}};
    if (r.peers) {
      shape["lmdb_over_ours"] = RatioJson(r.lmdb_over_ours);
      shape["sqlite_over_ours"] = RatioJson(r.sqlite_over_ours);
    }
    out.push_back(std::move(shape));
  }
  return out;
}

}  // namespace

nlohmann::json RunBatchesSection(const Options& options) {
  std::vector<ShapeResult> results;
  for (const Shape& shape : kShapes) results.push_back(RunShape(options, shape));
  PrintShapes(results, options);
  return ShapesJson(results);
}

}  // namespace regionstore::bench
