// Group-commit benchmark: durable 4 KiB commits from 1, 2, 4 and 8 threads,
// each thread to its own region (or key, row, block), beside what the same
// threads get from the raw system calls and from the peers.
//
// Arms, per thread count, in interleaved rounds (the first arm rotating):
//   ours: one Store handle that every thread calls at once, Commit
//         kPwriteFdatasync of 4 KiB into region "t<i>": durable commits that
//         wait together share one fdatasync (group commit);
//   ours, serialised: the same calls under one std::mutex, as a program had
//         to make them before the handle synchronised itself (each commit
//         pays its own fdatasync);
//   ours, batches: each thread commits a batch of 16 regions of its own,
//         4 KiB each, kPwriteFdatasync (a commit here is a batch);
//   raw, serialised: pwrite of 4 KiB into the thread's own block of a
//         preallocated file + fdatasync, under one mutex;
//   raw group commit (the floor): the pwrite without a lock, then the
//         thread waits until an fdatasync that began after its pwrite
//         returned has returned; whoever finds none in flight runs it, for
//         every write completed by then (a leader and its followers);
//   LMDB (when built with the peers): one environment, default flags, one
//         write transaction per commit putting the thread's key (LMDB's
//         writer lock serialises them);
//   SQLite (when built with the peers): WAL, synchronous=FULL, a connection
//         per thread, BEGIN IMMEDIATE, INSERT OR REPLACE of the thread's
//         row, COMMIT, a 10 s busy timeout;
//   RocksDB (when built with it): one DB, default options, Put of the
//         thread's key with WriteOptions::sync (its write thread groups
//         the writers that arrive together).
// Per arm: commits per second over all threads, p50 and p99 latency of one
// commit, fdatasyncs per commit (ours: through the io seam; raw: counted),
// and the device's write requests and KiB per commit (/sys/.../stat: every
// process's I/O). Medians over rounds. Nothing is asserted.
//
// Usage: regionstore_group_commit_bench [--threads=1,2,4,8] [--rounds=N]
//                                       [--ms=M] [--dir=D] [--json=FILE]
#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lab/bench_dir.h"
#include "lab/counting_io.h"
#include "lab/die.h"
#include "lab/median.h"
#include "lab/program.h"
#include "lab/raw_io.h"
#include "lab/rounds.h"
#include "lab/text_cells.h"
#include "regionstore/store.h"

#ifdef REGIONSTORE_BENCH_PEERS
#include <lmdb.h>
#include <sqlite3.h>
#endif
#ifdef REGIONSTORE_BENCH_ROCKSDB
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#endif

namespace regionstore::bench {
namespace {

constexpr uint64_t kCommitSize = 4 * kKiB;
// The batch arm's members per batch, each a region of the thread's own.
constexpr int kBatchMembers = 16;
// The raw group-commit floor's place among the arms (RunThreads).
constexpr size_t kFloorArm = 3;

std::string BatchRegion(int thread, int member) {
  return "b" + std::to_string(thread) + "-" + std::to_string(member);
}

struct Options {
  std::vector<int> threads = {1, 2, 4, 8};
  int rounds = 5;
  double ms = 300;
  std::string dir;
  std::string json_path;
};

int PositiveInt(const char* flag, std::string_view text) {
  const int value = std::atoi(std::string(text).c_str());
  if (value <= 0)
    Die(std::string(flag) + " needs a positive number, not '" + std::string(text) + "'");
  return value;
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--threads=")) {
      options.threads.clear();
      std::string_view list = arg.substr(10);
      while (!list.empty()) {
        const size_t comma = list.find(',');
        options.threads.push_back(PositiveInt("--threads", list.substr(0, comma)));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
      if (options.threads.empty()) Die("--threads needs at least one count");
    } else if (arg.starts_with("--rounds=")) {
      options.rounds = PositiveInt("--rounds", arg.substr(9));
    } else if (arg.starts_with("--ms=")) {
      options.ms = PositiveInt("--ms", arg.substr(5));
    } else if (arg.starts_with("--dir=")) {
      options.dir = arg.substr(6);
      if (options.dir.empty()) Die("--dir needs a directory");
    } else if (arg.starts_with("--json=")) {
      options.json_path = arg.substr(7);
      if (options.json_path.empty()) Die("--json needs a file name");
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: regionstore_group_commit_bench [--threads=1,2,4,8] [--rounds=N] [--ms=M]\n"
          "                                      [--dir=D] [--json=FILE]\n"
          "  --threads: committing thread counts (default 1,2,4,8)\n"
          "  --rounds=N: interleaved rounds per thread count (default 5)\n"
          "  --ms=M: how long each arm's threads commit per round (default 300)\n"
          "  --dir=D: where the files go (default $REGIONSTORE_BENCH_DIR, else the build tree)\n"
          "  --json=FILE: also write every arm's figures to FILE\n");
      std::exit(0);
    } else {
      Die("unknown argument '" + std::string(arg) + "' (try --help)");
    }
  }
  if (options.dir.empty())
    options.dir = BenchDirFromEnv(REGIONSTORE_GROUP_COMMIT_BENCH_DEFAULT_DIR);
  return options;
}

// One thread's commit, `thread` its index; "" or what failed. Called from
// that thread only, as often as the round lasts.
using CommitFn = std::function<std::string(int thread, std::span<const std::byte> value)>;

struct GroupArm {
  std::string name;
  CommitFn commit;
  // fdatasyncs made so far, if the arm counts them.
  std::function<uint64_t()> barriers;
};

// What one run of an arm did.
struct RunResult {
  uint64_t commits = 0;
  double seconds = 0;
  std::vector<double> latencies_ns;
  double barriers_per_commit = NAN;
  double device_requests_per_commit = NAN;
  double device_kib_per_commit = NAN;
};

// `threads` threads commit through `arm` for `ms` milliseconds, started
// together.
RunResult RunArm(const GroupArm& arm, int threads, double ms, const std::string& device_stat) {
  std::atomic<bool> stop{false};
  std::latch ready(threads + 1);
  std::vector<std::vector<double>> latencies(threads);
  std::vector<std::string> errors(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::vector<std::byte> value(kCommitSize, std::byte{static_cast<unsigned char>(t)});
      uint64_t stamp = 0;
      ready.arrive_and_wait();
      while (!stop.load(std::memory_order_relaxed)) {
        ++stamp;
        std::memcpy(value.data(), &stamp, sizeof stamp);
        const auto start = Clock::now();
        if (std::string e = arm.commit(t, value); !e.empty()) {
          errors[t] = e;
          return;
        }
        latencies[t].push_back(Seconds(Clock::now() - start) * 1e9);
      }
    });
  }
  const uint64_t barriers_before = arm.barriers ? arm.barriers() : 0;
  const std::optional<DeviceCounters> device_before = ReadDevice(device_stat);
  ready.arrive_and_wait();
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
  stop.store(true);
  for (std::thread& worker : workers) worker.join();
  RunResult result;
  result.seconds = Seconds(Clock::now() - start);
  const std::optional<DeviceCounters> device_after = ReadDevice(device_stat);
  for (int t = 0; t < threads; ++t) {
    if (!errors[t].empty()) Die(arm.name + ", thread " + std::to_string(t) + ": " + errors[t]);
    result.commits += latencies[t].size();
    result.latencies_ns.insert(result.latencies_ns.end(), latencies[t].begin(), latencies[t].end());
  }
  const auto per_commit = static_cast<double>(std::max<uint64_t>(result.commits, 1));
  if (arm.barriers) {
    result.barriers_per_commit = static_cast<double>(arm.barriers() - barriers_before) / per_commit;
  }
  if (device_before && device_after) {
    result.device_requests_per_commit =
        static_cast<double>(device_after->write_requests - device_before->write_requests) /
        per_commit;
    result.device_kib_per_commit =
        static_cast<double>(device_after->write_sectors - device_before->write_sectors) / 2 /
        per_commit;
  }
  return result;
}

double Percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return NAN;
  const auto at = static_cast<size_t>(fraction * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(at), values.end());
  return values[at];
}

// The raw group commit: a write is covered by an fdatasync that began after
// the write returned. Whoever finds no fdatasync in flight runs one for
// every write completed by then; the others wait for it, and if it began
// before their write completed, for the next.
class GroupSync {
 public:
  explicit GroupSync(int fd) : fd_(fd) {}

  // After this thread's write returned: returns once a covering fdatasync
  // returned, "" or what failed.
  std::string Commit() {
    std::unique_lock lock(mutex_);
    const uint64_t mine = ++completed_;
    while (synced_ < mine) {
      if (syncing_) {
        done_.wait(lock);
        continue;
      }
      syncing_ = true;
      const uint64_t covers = completed_;
      lock.unlock();
      std::string error = DataSync(fd_);
      lock.lock();
      syncing_ = false;
      ++syncs_;
      if (error.empty()) synced_ = std::max(synced_, covers);
      done_.notify_all();
      if (!error.empty()) return error;
    }
    return {};
  }

  uint64_t syncs() {
    std::lock_guard lock(mutex_);
    return syncs_;
  }

 private:
  int fd_;
  std::mutex mutex_;
  std::condition_variable done_;
  uint64_t completed_ = 0;
  uint64_t synced_ = 0;
  uint64_t syncs_ = 0;
  bool syncing_ = false;
};

#ifdef REGIONSTORE_BENCH_PEERS
std::string LmdbError(const char* what, int rc) {
  return std::string("lmdb ") + what + ": " + mdb_strerror(rc);
}

// One environment, default flags; each thread puts its own key.
class ThreadedLmdb {
 public:
  explicit ThreadedLmdb(const std::string& dir) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    if (int rc = mdb_env_create(&env_); rc != 0) Die(LmdbError("mdb_env_create", rc));
    if (int rc = mdb_env_set_mapsize(env_, 64 * kMiB); rc != 0) Die(LmdbError("mapsize", rc));
    if (int rc = mdb_env_open(env_, dir.c_str(), 0, 0644); rc != 0) Die(LmdbError("open", rc));
    MDB_txn* txn = nullptr;
    if (int rc = mdb_txn_begin(env_, nullptr, 0, &txn); rc != 0) Die(LmdbError("begin", rc));
    if (int rc = mdb_dbi_open(txn, nullptr, 0, &dbi_); rc != 0) Die(LmdbError("dbi_open", rc));
    if (int rc = mdb_txn_commit(txn); rc != 0) Die(LmdbError("commit", rc));
  }
  ThreadedLmdb(const ThreadedLmdb&) = delete;
  ThreadedLmdb& operator=(const ThreadedLmdb&) = delete;
  ~ThreadedLmdb() { mdb_env_close(env_); }

  std::string Put(int thread, std::span<const std::byte> value) {
    const std::string name = "key-" + std::to_string(thread);
    MDB_txn* txn = nullptr;
    if (int rc = mdb_txn_begin(env_, nullptr, 0, &txn); rc != 0) return LmdbError("begin", rc);
    MDB_val key{name.size(), const_cast<char*>(name.data())};
    MDB_val data{value.size(), const_cast<std::byte*>(value.data())};
    if (int rc = mdb_put(txn, dbi_, &key, &data, 0); rc != 0) {
      mdb_txn_abort(txn);
      return LmdbError("put", rc);
    }
    if (int rc = mdb_txn_commit(txn); rc != 0) return LmdbError("commit", rc);
    return {};
  }

 private:
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

// One database in WAL mode with synchronous=FULL; a connection per thread.
class ThreadedSqlite {
 public:
  ThreadedSqlite(const std::string& path, int threads) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    for (int t = 0; t < threads; ++t) {
      Connection& c = connections_.emplace_back();
      if (sqlite3_open_v2(path.c_str(), &c.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                          nullptr) != SQLITE_OK) {
        Die("sqlite open " + path);
      }
      sqlite3_busy_timeout(c.db, 10'000);
      if (t == 0) {
        Exec(c.db, "PRAGMA page_size=4096");
        Exec(c.db, "PRAGMA journal_mode=WAL");
        Exec(c.db, "CREATE TABLE blobs(id INTEGER PRIMARY KEY, data BLOB NOT NULL)");
      }
      Exec(c.db, "PRAGMA synchronous=FULL");
      c.begin = Prepare(c.db, "BEGIN IMMEDIATE");
      c.replace = Prepare(c.db, "INSERT OR REPLACE INTO blobs(id, data) VALUES(?1, ?2)");
      c.commit = Prepare(c.db, "COMMIT");
    }
  }
  ThreadedSqlite(const ThreadedSqlite&) = delete;
  ThreadedSqlite& operator=(const ThreadedSqlite&) = delete;
  ~ThreadedSqlite() {
    for (Connection& c : connections_) {
      sqlite3_finalize(c.begin);
      sqlite3_finalize(c.replace);
      sqlite3_finalize(c.commit);
      sqlite3_close(c.db);
    }
  }

  std::string Replace(int thread, std::span<const std::byte> value) {
    Connection& c = connections_[static_cast<size_t>(thread)];
    if (std::string e = Step(c, c.begin); !e.empty()) return e;
    if (sqlite3_bind_int64(c.replace, 1, thread + 1) != SQLITE_OK ||
        sqlite3_bind_blob(c.replace, 2, value.data(), static_cast<int>(value.size()),
                          SQLITE_STATIC) != SQLITE_OK) {
      return std::string("sqlite bind: ") + sqlite3_errmsg(c.db);
    }
    if (std::string e = Step(c, c.replace); !e.empty()) return e;
    return Step(c, c.commit);
  }

 private:
  struct Connection {
    sqlite3* db = nullptr;
    sqlite3_stmt* begin = nullptr;
    sqlite3_stmt* replace = nullptr;
    sqlite3_stmt* commit = nullptr;
  };

  static void Exec(sqlite3* db, const char* sql) {
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
      Die(std::string("sqlite ") + sql + ": " + sqlite3_errmsg(db));
    }
  }
  static sqlite3_stmt* Prepare(sqlite3* db, const char* sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) != SQLITE_OK) {
      Die(std::string("sqlite prepare ") + sql + ": " + sqlite3_errmsg(db));
    }
    return statement;
  }
  static std::string Step(Connection& c, sqlite3_stmt* statement) {
    const int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    if (rc != SQLITE_DONE) return std::string("sqlite step: ") + sqlite3_errmsg(c.db);
    return {};
  }

  std::vector<Connection> connections_;
};
#endif

#ifdef REGIONSTORE_BENCH_ROCKSDB
// One database, default options; each thread puts its own key, synced.
class ThreadedRocksDb {
 public:
  explicit ThreadedRocksDb(const std::string& dir) {
    std::filesystem::remove_all(dir);
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    const rocksdb::Status status = rocksdb::DB::Open(options, dir, &db);
    if (!status.ok()) Die("rocksdb open " + dir + ": " + status.ToString());
    db_.reset(db);
    sync_.sync = true;
  }

  std::string Put(int thread, std::span<const std::byte> value) {
    const std::string key = "key-" + std::to_string(thread);
    const rocksdb::Status status = db_->Put(
        sync_, key, rocksdb::Slice(reinterpret_cast<const char*>(value.data()), value.size()));
    return status.ok() ? std::string() : "rocksdb put: " + status.ToString();
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::WriteOptions sync_;
};
#endif

struct ArmFigures {
  std::string name;
  std::vector<double> commits_per_s;  // per round
  std::vector<double> p50_ns, p99_ns, barriers, requests, kib;
};

nlohmann::json RunThreads(const Options& options, int threads, const std::string& device_stat) {
  std::fprintf(stderr, "  %d thread%s\n", threads, threads == 1 ? "" : "s");
  const std::string store_path = options.dir + "/group-commit.rgn";
  const std::string raw_path = options.dir + "/group-commit.raw";
  CreateOptions create;
  create.replace_existing = true;
  for (int t = 0; t < threads; ++t) {
    create.checkpoints.push_back({"t" + std::to_string(t), kCommitSize});
    for (int m = 0; m < kBatchMembers; ++m) {
      create.checkpoints.push_back({BatchRegion(t, m), kCommitSize});
    }
  }
  if (Status s = Store::Create(store_path, 0, create); !s.ok()) Die(s.ToString());
  CountingIo io;
  OpenOptions open_options;
  open_options.io = &io;
  auto opened = Store::Open(store_path, OpenMode::kReadWrite, open_options);
  if (!opened.ok()) Die(opened.status().ToString());
  Store store = std::move(*opened);
  CreatePlainFile(raw_path, static_cast<uint64_t>(threads) * 64 * kKiB);
  const Fd raw(raw_path, O_RDWR | O_CLOEXEC);
  std::mutex serial;
  std::atomic<uint64_t> raw_serial_syncs{0};
  GroupSync group(raw.get());
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> batch_names(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    names.push_back("t" + std::to_string(t));
    for (int m = 0; m < kBatchMembers; ++m) {
      batch_names[static_cast<size_t>(t)].push_back(BatchRegion(t, m));
    }
  }
  auto commit = [&](int t, std::span<const std::byte> value) {
    auto generation =
        store.Commit(names[static_cast<size_t>(t)], value, Durability::kPwriteFdatasync);
    return generation.ok() ? std::string() : generation.status().ToString();
  };

  std::vector<GroupArm> arms;
  arms.push_back({"ours: Commit kPwriteFdatasync, every thread calling one handle", commit,
                  [&] { return io.counts().barriers; }});
  arms.push_back({"ours, serialised: the same calls under a mutex",
                  [&](int t, std::span<const std::byte> value) {
                    std::lock_guard lock(serial);
                    return commit(t, value);
                  },
                  [&] { return io.counts().barriers; }});
  arms.push_back({"raw, serialised: pwrite + fdatasync under a mutex",
                  [&](int t, std::span<const std::byte> value) {
                    std::lock_guard lock(serial);
                    raw_serial_syncs.fetch_add(1, std::memory_order_relaxed);
                    return PwriteFdatasync(raw.get(), value, static_cast<uint64_t>(t) * 64 * kKiB);
                  },
                  [&] { return raw_serial_syncs.load(); }});
  arms.push_back({"raw group commit (floor): pwrite, then a shared fdatasync",
                  [&](int t, std::span<const std::byte> value) {
                    if (std::string e =
                            WriteOne(raw.get(), value, static_cast<uint64_t>(t) * 64 * kKiB, 0);
                        !e.empty()) {
                      return e;
                    }
                    return group.Commit();
                  },
                  [&] { return group.syncs(); }});
  arms.push_back({"ours, batches: 16 regions x 4 KiB per commit, kPwriteFdatasync",
                  [&](int t, std::span<const std::byte> value) {
                    const std::array<std::span<const std::byte>, 1> pieces{value};
                    std::vector<BatchMember> members;
                    for (const std::string& name : batch_names[static_cast<size_t>(t)]) {
                      members.push_back({name, pieces});
                    }
                    auto generations = store.CommitBatch(members, Durability::kPwriteFdatasync);
                    return generations.ok() ? std::string() : generations.status().ToString();
                  },
                  [&] { return io.counts().barriers; }});
#ifdef REGIONSTORE_BENCH_PEERS
  ThreadedLmdb lmdb(options.dir + "/group-commit-lmdb");
  ThreadedSqlite sqlite(options.dir + "/group-commit.sqlite", threads);
  arms.push_back({"LMDB: a write transaction per commit (default flags)",
                  [&](int t, std::span<const std::byte> value) { return lmdb.Put(t, value); },
                  nullptr});
  arms.push_back({"SQLite: WAL, synchronous=FULL, a connection per thread",
                  [&](int t, std::span<const std::byte> value) { return sqlite.Replace(t, value); },
                  nullptr});
#endif
#ifdef REGIONSTORE_BENCH_ROCKSDB
  ThreadedRocksDb rocksdb(options.dir + "/group-commit-rocksdb");
  arms.push_back({"RocksDB: Put with WriteOptions::sync",
                  [&](int t, std::span<const std::byte> value) { return rocksdb.Put(t, value); },
                  nullptr});
#endif

  std::vector<ArmFigures> figures(arms.size());
  for (size_t a = 0; a < arms.size(); ++a) figures[a].name = arms[a].name;
  for (int round = 0; round < options.rounds; ++round) {
    for (size_t k = 0; k < arms.size(); ++k) {
      const size_t a = (static_cast<size_t>(round) + k) % arms.size();
      const RunResult run = RunArm(arms[a], threads, options.ms, device_stat);
      ArmFigures& f = figures[a];
      f.commits_per_s.push_back(static_cast<double>(run.commits) / run.seconds);
      f.p50_ns.push_back(Percentile(run.latencies_ns, 0.50));
      f.p99_ns.push_back(Percentile(run.latencies_ns, 0.99));
      f.barriers.push_back(run.barriers_per_commit);
      f.requests.push_back(run.device_requests_per_commit);
      f.kib.push_back(run.device_kib_per_commit);
    }
  }

  std::printf("### %d thread%s, each committing 4 KiB durably to its own region\n\n", threads,
              threads == 1 ? "" : "s");
  std::printf(
      "| arm | commits/s (range) | / raw group commit | p50 µs | p99 µs | fdatasyncs per commit "
      "| device writes, KiB per commit |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
  const std::vector<double>& floor = figures[kFloorArm].commits_per_s;
  nlohmann::json rows = nlohmann::json::array();
  for (const ArmFigures& f : figures) {
    std::vector<double> ratios;
    for (size_t r = 0; r < f.commits_per_s.size() && r < floor.size(); ++r) {
      ratios.push_back(f.commits_per_s[r] / floor[r]);
    }
    const auto [low, high] = std::minmax_element(f.commits_per_s.begin(), f.commits_per_s.end());
    const double barriers = Median(f.barriers);
    char barrier_cell[32] = "-";
    if (!std::isnan(barriers)) std::snprintf(barrier_cell, sizeof barrier_cell, "%.2f", barriers);
    std::printf("| %s | %.0f (%.0f-%.0f) | %.2f | %.0f | %.0f | %s | %.1f, %.1f |\n",
                f.name.c_str(), Median(f.commits_per_s), *low, *high, Median(ratios),
                Median(f.p50_ns) / 1e3, Median(f.p99_ns) / 1e3, barrier_cell, Median(f.requests),
                Median(f.kib));
    rows.push_back({{"arm", f.name},
                    {"commits_per_s", Median(f.commits_per_s)},
                    {"to_raw_group_commit", Median(ratios)},
                    {"p50_us", Median(f.p50_ns) / 1e3},
                    {"p99_us", Median(f.p99_ns) / 1e3},
                    {"fdatasyncs_per_commit",
                     std::isnan(barriers) ? nlohmann::json(nullptr) : nlohmann::json(barriers)},
                    {"device_requests_per_commit", Median(f.requests)},
                    {"device_kib_per_commit", Median(f.kib)}});
  }
  std::printf("\n");
  std::fflush(stdout);
  return {{"threads", threads}, {"arms", rows}};
}

}  // namespace
}  // namespace regionstore::bench

int main(int argc, char** argv) {
  using namespace regionstore;
  using namespace regionstore::bench;
  const Options options = ParseOptions(argc, argv);
  const FsInfo fs = PrepareBenchDir(options.dir);
  utsname machine{};
  ::uname(&machine);
  std::printf("# regionstore group-commit benchmark\n\n");
  std::printf(
      "Linux %s %s, %ld CPUs online; files in %s (%s). %d interleaved rounds per thread count, "
      "%.0f ms per arm and round; medians over rounds.\n\n",
      machine.release, machine.machine, ::sysconf(_SC_NPROCESSORS_ONLN), options.dir.c_str(),
      fs.type_name.c_str(), options.rounds, options.ms);
  if (MeasuresNoDisk(fs)) {
    std::printf("**WARNING: the directory is on %s: durable arms measure no disk.**\n\n",
                fs.type_name.c_str());
  }
  const std::string device_stat = DeviceStatPath(options.dir);
  const auto started = Clock::now();
  nlohmann::json runs = nlohmann::json::array();
  for (const int threads : options.threads)
    runs.push_back(RunThreads(options, threads, device_stat));
  for (const char* name :
       {"/group-commit.rgn", "/group-commit.rgn.shm", "/group-commit.raw", "/group-commit.sqlite",
        "/group-commit.sqlite-wal", "/group-commit.sqlite-shm"}) {
    std::filesystem::remove(options.dir + name);
  }
  std::filesystem::remove_all(options.dir + "/group-commit-lmdb");
  std::filesystem::remove_all(options.dir + "/group-commit-rocksdb");
  if (!options.json_path.empty()) {
    const nlohmann::json doc = {{"kernel", machine.release},
                                {"filesystem", fs.type_name},
                                {"rounds", options.rounds},
                                {"ms", options.ms},
                                {"runs", runs}};
    WriteOutputFile(options.json_path, doc.dump(2) + "\n", "--json");
  }
  std::printf("Run time: %.0f s.\n", Seconds(Clock::now() - started));
  return 0;
}
