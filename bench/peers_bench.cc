// Section 2 of regionstore_commit_bench (built when LMDB and SQLite
// development files are found): replace one blob durably and atomically.
// LMDB (default flags), SQLite (WAL, synchronous=FULL), our commit in both
// durable modes, and pwrite+fdatasync on a plain file (the device floor),
// with where each one's pages sit in the page cache.
#ifdef REGIONSTORE_BENCH_PEERS

#include <fcntl.h>
#include <lmdb.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "commit_bench.h"
#include "common/die.h"
#include "common/folio_census.h"
#include "common/raw_io.h"
#include "common/realtime_scope.h"

namespace regionstore::bench {
namespace {

class Lmdb {
 public:
  Lmdb(const std::string& dir, uint64_t value_size) : dir_(dir) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    Check(mdb_env_create(&env_), "mdb_env_create");
    // Copy-on-write keeps the last commits' pages until they can be reused:
    // room for many copies of the value.
    Check(mdb_env_set_mapsize(env_, std::max<uint64_t>(64 * kMiB, 64 * value_size)),
          "mdb_env_set_mapsize");
    Check(mdb_env_open(env_, dir.c_str(), 0, 0644), "mdb_env_open");  // default flags
    MDB_txn* txn = nullptr;
    Check(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin");
    Check(mdb_dbi_open(txn, nullptr, 0, &dbi_), "mdb_dbi_open");
    Check(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  Lmdb(const Lmdb&) = delete;
  Lmdb& operator=(const Lmdb&) = delete;
  ~Lmdb() { mdb_env_close(env_); }

  std::string Put(std::span<const std::byte> value) {
    MDB_txn* txn = nullptr;
    if (int rc = mdb_txn_begin(env_, nullptr, 0, &txn); rc != 0) return Error("begin", rc);
    char key_bytes[] = "blob";
    MDB_val key{4, key_bytes};
    MDB_val data{value.size(), const_cast<std::byte*>(value.data())};
    if (int rc = mdb_put(txn, dbi_, &key, &data, 0); rc != 0) {
      mdb_txn_abort(txn);
      return Error("put", rc);
    }
    if (int rc = mdb_txn_commit(txn); rc != 0) return Error("commit", rc);
    return {};
  }

  std::string data_path() const { return dir_ + "/data.mdb"; }

 private:
  static std::string Error(const char* what, int rc) {
    std::string message = "lmdb ";
    message += what;
    message += ": ";
    message += mdb_strerror(rc);
    return message;
  }
  static void Check(int rc, const char* what) {
    if (rc != 0) Die(Error(what, rc));
  }

  std::string dir_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

class Sqlite {
 public:
  explicit Sqlite(const std::string& path) : path_(path) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        nullptr) != SQLITE_OK) {
      Die(Message("open"));
    }
    Exec("PRAGMA journal_mode=WAL");
    Exec("PRAGMA synchronous=FULL");
    Exec("CREATE TABLE blobs(id INTEGER PRIMARY KEY, data BLOB NOT NULL)");
    begin_ = Prepare("BEGIN");
    replace_ = Prepare("INSERT OR REPLACE INTO blobs(id, data) VALUES(1, ?1)");
    commit_ = Prepare("COMMIT");
  }
  Sqlite(const Sqlite&) = delete;
  Sqlite& operator=(const Sqlite&) = delete;
  ~Sqlite() {
    sqlite3_finalize(begin_);
    sqlite3_finalize(replace_);
    sqlite3_finalize(commit_);
    sqlite3_close(db_);
  }

  std::string Replace(std::span<const std::byte> blob) {
    if (std::string e = Step(begin_); !e.empty()) return e;
    if (sqlite3_bind_blob64(replace_, 1, blob.data(), blob.size(), SQLITE_STATIC) != SQLITE_OK) {
      return Message("bind");
    }
    if (std::string e = Step(replace_); !e.empty()) return e;
    return Step(commit_);
  }

  std::string wal_path() const { return path_ + "-wal"; }

 private:
  std::string Message(const char* what) const {
    std::string message = "sqlite ";
    message += what;
    message += " ";
    message += path_;
    message += ": ";
    message += sqlite3_errmsg(db_);
    return message;
  }
  void Exec(const char* sql) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) Die(Message(sql));
  }
  sqlite3_stmt* Prepare(const char* sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &statement, nullptr) != SQLITE_OK) Die(Message(sql));
    return statement;
  }
  std::string Step(sqlite3_stmt* statement) {
    const int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    return rc == SQLITE_DONE ? std::string() : Message("step");
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* replace_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
};

enum PeerArm : size_t { kLmdb, kSqlite, kOursSync, kOursPwrite, kFloor, kPeerArms };

struct PeerResult {
  uint64_t size;
  std::array<std::string, kPeerArms> names;
  std::array<double, kPeerArms> median_ns;
  std::array<std::string, kPeerArms> page_cache;
  std::array<DevicePerOp, kPeerArms> device;
  size_t ours;              // kOursSync or kOursPwrite: the faster by median
  PairedRatio vs_sqlite;    // SQLite time / ours
  PairedRatio vs_lmdb;      // LMDB time / ours
  PairedRatio vs_floor;     // floor time / ours
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
    const std::string floor_path = options.dir + "/peer-floor-" + tag + ".bin";
    CreatePlainFile(floor_path, size);
    const Fd floor(floor_path, O_RDWR | O_CLOEXEC);
    const int floor_fd = floor.get();

    std::vector<Arm> arms(kPeerArms);
    arms[kLmdb] = LoopArm("LMDB, default flags: put + txn commit", size,
                          [&lmdb](std::span<const std::byte> v) { return lmdb.Put(v); });
    arms[kSqlite] = LoopArm("SQLite, WAL + synchronous=FULL: INSERT OR REPLACE in a txn", size,
                            [&sqlite](std::span<const std::byte> v) { return sqlite.Replace(v); });
    arms[kOursSync] = CommitArm("ours: Commit kSync", store, "blob", size, Durability::kSync);
    arms[kOursPwrite] = CommitArm("ours: Commit kPwriteFdatasync", store, "blob", size,
                                  Durability::kPwriteFdatasync);
    arms[kFloor] = LoopArm("floor: pwrite + fdatasync, plain file", size,
                           [floor_fd](std::span<const std::byte> v) {
                             return PwriteFdatasync(floor_fd, v, 0);
                           });
    std::fprintf(stderr, "  peers %s\n", SizeName(size).c_str());
    const RealtimeScope realtime(options.realtime, "regionstore_commit_bench");
    const Rounds rounds = RunInterleaved(arms, options.rounds, options.peer_batch_ms,
                                         options.device_stat);
    const RoundTimes& times = rounds.ns;

    PeerResult result{};
    result.size = size;
    for (size_t a = 0; a < kPeerArms; ++a) {
      result.names[a] = arms[a].name;
      result.median_ns[a] = Median(times[a]);
      result.device[a] = MedianDevice(rounds.device[a]);
    }
    result.ours = result.median_ns[kOursSync] <= result.median_ns[kOursPwrite] ? kOursSync
                                                                                : kOursPwrite;
    result.vs_sqlite = Paired(times[kSqlite], times[result.ours], &times[kFloor]);
    result.vs_lmdb = Paired(times[kLmdb], times[result.ours], &times[kFloor]);
    result.vs_floor = Paired(times[kFloor], times[result.ours], &times[kFloor]);
    // Where each arm's bytes sit in the page cache after the rounds.
    result.page_cache[kLmdb] =
        "data.mdb: " + CensusText(lmdb.data_path(), 0, std::filesystem::file_size(lmdb.data_path()));
    result.page_cache[kSqlite] = "-wal: " + CensusText(sqlite.wal_path(), 0,
                                                       std::filesystem::file_size(sqlite.wal_path()));
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
    results.push_back(std::move(result));
  }
  return results;
}

void PrintPeerRatio(const std::string& label, const PairedRatio& ratio, double target) {
  std::string verdict;
  if (target > 0) {
    verdict = ">= " + Fixed(target, 1) + (ratio.median >= target ? ": met" : ": **missed**");
  }
  std::printf("| %s | **%s** | %s-%s | %s | %s |\n", label.c_str(),
              Fixed(ratio.median, 2).c_str(), Fixed(ratio.low, 2).c_str(),
              Fixed(ratio.high, 2).c_str(), FormatByState(ratio).c_str(), verdict.c_str());
}

void PrintPeers(const std::vector<PeerResult>& results, const Options& options) {
  std::printf("## 2. Replace one blob durably and atomically: peers\n\n");
  std::printf(
      "%d interleaved rounds of all five arms per size (batches of ~%.0f ms); ops/s from the "
      "median batch. Each arm has its own files, created fresh. Ratios are speed ratios "
      "(peer time / our time) per round, median and range; \"ours\" is the faster durable "
      "mode by median.\n\n",
      options.rounds, options.peer_batch_ms);
  std::printf("| size | arm | ops/s | us/op | device per op: flushes / write requests / "
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
    PrintPeerRatio("ours (" + ours + ") / SQLite, " + size, r.vs_sqlite,
                   small ? 1.1 : 0);
    PrintPeerRatio("ours (" + ours + ") / LMDB, " + size, r.vs_lmdb, small ? 0 : 1.2);
    PrintPeerRatio("ours (" + ours + ") / floor, " + size, r.vs_floor, 0);
  }
  std::printf("\nFast/slow: rounds where the floor arm took under/over 2 ms per op (with the "
              "CPUs busy, every wait for I/O can cost a scheduler tick: see --realtime).\n\n");
  std::printf("Where each arm's pages sit in the page cache after the rounds "
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
