// Section 2 of regionstore_commit_bench (built when LMDB and SQLite
// development files are found): replace one blob durably and atomically.
// LMDB (default flags), SQLite (WAL, synchronous=FULL), our commit in both
// durable modes on a store made with Store::Create's defaults ("ours"), the
// same on a protocol 1 store (a labelled extra), and pwrite+fdatasync on a
// plain file (the device floor), with where each one's pages sit in the page
// cache.
#ifdef REGIONSTORE_BENCH_PEERS

#include <fcntl.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "commit_bench.h"
#include "lab/folio_census.h"
#include "lab/raw_io.h"
#include "lab/realtime_scope.h"
#include "peer_stores.h"

namespace regionstore::bench {
namespace {

enum PeerArm : size_t {
  kLmdb,
  kSqlite,
  kOursSync,
  kOursPwrite,
  kFloor,
  kP1Sync,
  kP1Pwrite,
  kPeerArms
};

struct PeerResult {
  uint64_t size;
  std::array<std::string, kPeerArms> names;
  std::array<double, kPeerArms> median_ns;
  std::array<std::string, kPeerArms> page_cache;
  std::array<DevicePerOp, kPeerArms> device;
  size_t ours;            // kOursSync or kOursPwrite: the faster by median
  size_t protocol1;       // kP1Sync or kP1Pwrite: the faster by median
  PairedRatio vs_sqlite;  // SQLite time / ours
  PairedRatio vs_lmdb;    // LMDB time / ours
  PairedRatio vs_floor;   // floor time / ours
};

std::vector<PeerResult> RunPeers(const Options& options) {
  std::vector<PeerResult> results;
  for (uint64_t size : {4 * kKiB, 1 * kMiB}) {
    const std::string tag = size >= kMiB ? "1m" : "4k";
    Lmdb lmdb(options.dir + "/peer-lmdb-" + tag, size);
    Sqlite sqlite(options.dir + "/peer-" + tag + ".sqlite");
    const std::string store_path = options.dir + "/peer-" + tag + ".rgn";
    CreateStore(store_path, {{"blob", size}});
    Store store = OpenStore(store_path);
    const std::string p1_path = options.dir + "/peer-" + tag + "-p1.rgn";
    CreateStore(p1_path, {{"blob", size}}, false, kProtocol1);
    Store store_p1 = OpenStore(p1_path);
    const std::string floor_path = options.dir + "/peer-floor-" + tag + ".bin";
    CreatePlainFile(floor_path, size);
    const Fd floor(floor_path, O_RDWR | O_CLOEXEC);
    const int floor_fd = floor.get();

    std::vector<Arm> arms(kPeerArms);
    arms[kLmdb] = LoopArm("LMDB, default flags: put + txn commit", size,
                          [&lmdb](std::span<const std::byte> v) {
                            return lmdb.PutAll({&v, 1});
                          });
    arms[kSqlite] = LoopArm("SQLite, WAL + synchronous=FULL: INSERT OR REPLACE in a txn", size,
                            [&sqlite](std::span<const std::byte> v) {
                              return sqlite.ReplaceAll({&v, 1});
                            });
    arms[kOursSync] = CommitArm("ours: Commit kSync", store, "blob", size, Durability::kSync);
    arms[kOursPwrite] = CommitArm("ours: Commit kPwriteFdatasync", store, "blob", size,
                                  Durability::kPwriteFdatasync);
    arms[kFloor] = LoopArm(
        "floor: pwrite + fdatasync, plain file", size,
        [floor_fd](std::span<const std::byte> v) { return PwriteFdatasync(floor_fd, v, 0); });
    arms[kP1Sync] =
        CommitArm("protocol 1: Commit kSync", store_p1, "blob", size, Durability::kSync);
    arms[kP1Pwrite] = CommitArm("protocol 1: Commit kPwriteFdatasync", store_p1, "blob", size,
                                Durability::kPwriteFdatasync);
    std::fprintf(stderr, "  peers %s\n", SizeName(size).c_str());
    const RealtimeScope realtime(options.realtime, "regionstore_commit_bench");
    const Rounds rounds =
        RunInterleaved(arms, options.rounds, options.peer_batch_ms, options.device_stat);
    const RoundTimes& times = rounds.ns;

    PeerResult result{};
    result.size = size;
    for (size_t a = 0; a < kPeerArms; ++a) {
      result.names[a] = arms[a].name;
      result.median_ns[a] = Median(times[a]);
      result.device[a] = MedianDevice(rounds.device[a]);
    }
    result.ours =
        result.median_ns[kOursSync] <= result.median_ns[kOursPwrite] ? kOursSync : kOursPwrite;
    result.protocol1 =
        result.median_ns[kP1Sync] <= result.median_ns[kP1Pwrite] ? kP1Sync : kP1Pwrite;
    result.vs_sqlite = Paired(times[kSqlite], times[result.ours], &times[kFloor]);
    result.vs_lmdb = Paired(times[kLmdb], times[result.ours], &times[kFloor]);
    result.vs_floor = Paired(times[kFloor], times[result.ours], &times[kFloor]);
    // Where each arm's bytes sit in the page cache after the rounds.
    result.page_cache[kLmdb] =
        "data.mdb: " +
        CensusText(lmdb.data_path(), 0, std::filesystem::file_size(lmdb.data_path()));
    result.page_cache[kSqlite] =
        "-wal: " + CensusText(sqlite.wal_path(), 0, std::filesystem::file_size(sqlite.wal_path()));
    const RegionEntry& region = RegionOf(store.info(), "blob");
    std::string slots;
    for (uint32_t slot = 0; slot < kSlotsPerRegion; ++slot) {
      if (slot > 0) slots += "; ";
      slots += "payload " + std::to_string(slot) + ": " +
               CensusText(store_path, SlotPayloadOffset(region, slot), size);
    }
    result.page_cache[kOursSync] = slots;
    result.page_cache[kOursPwrite] = "(the same store)";
    result.page_cache[kFloor] = CensusText(floor_path, 0, size);
    result.page_cache[kP1Sync] = "(not taken)";
    result.page_cache[kP1Pwrite] = "(not taken)";
    results.push_back(std::move(result));
  }
  return results;
}

void PrintPeers(const std::vector<PeerResult>& results, const Options& options) {
  std::printf("## 2. Replace one blob durably and atomically: peers\n\n");
  std::printf(
      "%d interleaved rounds of all seven arms per size (batches of ~%.0f ms); ops/s from the "
      "median batch. Each arm has its own files, created fresh. Ratios are speed ratios "
      "(peer time / our time) per round, median and range; \"ours\" is a store made with "
      "Store::Create's defaults (protocol %u), in its faster durable mode by median; "
      "\"protocol 1\" is the same on a protocol 1 store, for comparison.\n\n",
      options.rounds, options.peer_batch_ms, kDefaultProtocol);
  std::printf(
      "| size | arm | ops/s | us/op | device per op: flushes / write requests / "
      "KiB written |\n| --- | --- | ---: | ---: | --- |\n");
  for (const PeerResult& r : results) {
    for (size_t a = 0; a < kPeerArms; ++a) {
      std::printf("| %s | %s | %s | %s | %s |\n", SizeName(r.size).c_str(), r.names[a].c_str(),
                  FormatOps(r.median_ns[a]).c_str(), FormatMicros(r.median_ns[a]).c_str(),
                  FormatDevice(r.device[a]).c_str());
    }
  }
  std::printf("\n| ratio | median | range | in fast / slow rounds (rounds) | target |\n");
  std::printf("| --- | ---: | --- | --- | --- |\n");
  for (const PeerResult& r : results) {
    const bool small = r.size < kMiB;
    const std::string ours = r.ours == kOursSync ? "kSync" : "kPwriteFdatasync";
    const std::string size = SizeName(r.size);
    PrintRatioRow("ours (" + ours + ") / SQLite, " + size, r.vs_sqlite, small ? 1.1 : 0);
    PrintRatioRow("ours (" + ours + ") / LMDB, " + size, r.vs_lmdb, small ? 0 : 1.2);
    PrintRatioRow("ours (" + ours + ") / floor, " + size, r.vs_floor, 0);
  }
  std::printf(
      "\nFast/slow: rounds where the floor arm took under/over 2 ms per op (with the "
      "CPUs busy, every wait for I/O can cost a scheduler tick: see --realtime).\n\n");
  std::printf(
      "Where each arm's pages sit in the page cache after the rounds "
      "(/proc/kpageflags):\n\n| size | arm | page cache |\n| --- | --- | --- |\n");
  for (const PeerResult& r : results) {
    for (size_t a = 0; a < kPeerArms; ++a) {
      std::printf("| %s | %s | %s |\n", SizeName(r.size).c_str(), r.names[a].c_str(),
                  r.page_cache[a].c_str());
    }
  }
  std::printf("\n");
}

nlohmann::json PeersJson(const std::vector<PeerResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const PeerResult& r : results) {
    nlohmann::json arms = nlohmann::json::array();
    for (size_t a = 0; a < kPeerArms; ++a) {
      arms.push_back({{"name", r.names[a]}, {"median_ns", r.median_ns[a]}});
    }
    out.push_back({{"size", r.size},
                   {"ours", r.names[r.ours]},
                   {"protocol1", r.names[r.protocol1]},
                   {"arms", arms},
                   {"sqlite_over_ours", RatioJson(r.vs_sqlite)},
                   {"lmdb_over_ours", RatioJson(r.vs_lmdb)},
                   {"floor_over_ours", RatioJson(r.vs_floor)}});
  }
  return out;
}

}  // namespace

nlohmann::json RunPeersSection(const Options& options) {
  const std::vector<PeerResult> results = RunPeers(options);
  PrintPeers(results, options);
  return PeersJson(results);
}

}  // namespace regionstore::bench

#endif  // REGIONSTORE_BENCH_PEERS
