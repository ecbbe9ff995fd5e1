// The peers of regionstore_commit_bench (built when LMDB and SQLite
// development files are found): an LMDB environment and a SQLite database
// that replace a fixed set of values durably in one transaction, as a
// checkpoint commit or a batch does. Sections 2 (one value) and 6 (one value
// per region of a batch) use them.
#ifndef REGIONSTORE_BENCH_PEER_STORES_H_
#define REGIONSTORE_BENCH_PEER_STORES_H_
#ifdef REGIONSTORE_BENCH_PEERS

#include <lmdb.h>
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace regionstore::bench {

// The values of one transaction, value i under key (or row) i.
using PeerValues = std::span<const std::span<const std::byte>>;

// An environment in its own, fresh directory, opened with the default
// flags: no MDB_NOSYNC, MDB_NOMETASYNC or MDB_WRITEMAP, so every commit
// writes its pages with pwrite and makes two fdatasyncs (data, then meta).
class Lmdb {
 public:
  // Room for `keys` values of `value_size` bytes and the copies that
  // copy-on-write keeps until their pages can be reused. Dies on failure.
  Lmdb(const std::string& dir, uint64_t value_size, size_t keys = 1);
  Lmdb(const Lmdb&) = delete;
  Lmdb& operator=(const Lmdb&) = delete;
  ~Lmdb();

  // One write transaction putting values[i] under key i; "" or what failed.
  std::string PutAll(PeerValues values);

  std::string data_path() const { return dir_ + "/data.mdb"; }

 private:
  std::string dir_;
  std::vector<std::string> keys_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

// A fresh database file: page_size=4096, journal_mode=WAL, synchronous=FULL
// (an fdatasync of the WAL at every commit), the default autocheckpoint.
class Sqlite {
 public:
  explicit Sqlite(const std::string& path);  // dies on failure
  Sqlite(const Sqlite&) = delete;
  Sqlite& operator=(const Sqlite&) = delete;
  ~Sqlite();

  // BEGIN, INSERT OR REPLACE of row i + 1 with values[i] for each value,
  // COMMIT; "" or what failed.
  std::string ReplaceAll(PeerValues values);

  std::string wal_path() const { return path_ + "-wal"; }

 private:
  std::string Message(const char* what) const;
  void Exec(const char* sql);
  sqlite3_stmt* Prepare(const char* sql);
  std::string Step(sqlite3_stmt* statement);

  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* replace_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
};

}  // namespace regionstore::bench

#endif  // REGIONSTORE_BENCH_PEERS
#endif  // REGIONSTORE_BENCH_PEER_STORES_H_
