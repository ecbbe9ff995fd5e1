// The LMDB and SQLite peers of regionstore_commit_bench (peer_stores.h).
#ifdef REGIONSTORE_BENCH_PEERS

#include "peer_stores.h"

#include <algorithm>
#include <filesystem>
#include <string>

#include "lab/die.h"
#include "lab/text_cells.h"

namespace regionstore::bench {
namespace {

std::string LmdbError(const char* what, int rc) {
  std::string message = "lmdb ";
  message += what;
  message += ": ";
  message += mdb_strerror(rc);
  return message;
}

void CheckLmdb(int rc, const char* what) {
  if (rc != 0) Die(LmdbError(what, rc));
}

}  // namespace

Lmdb::Lmdb(const std::string& dir, uint64_t value_size, size_t keys) : dir_(dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (size_t key = 0; key < keys; ++key) keys_.push_back("key-" + std::to_string(key));
  CheckLmdb(mdb_env_create(&env_), "mdb_env_create");
  // Copy-on-write keeps the last commits' pages until they can be reused:
  // room for many copies of every value.
  CheckLmdb(mdb_env_set_mapsize(env_, std::max<uint64_t>(64 * kMiB, 64 * value_size * keys)),
            "mdb_env_set_mapsize");
  CheckLmdb(mdb_env_open(env_, dir.c_str(), 0, 0644), "mdb_env_open");  // default flags
  MDB_txn* txn = nullptr;
  CheckLmdb(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin");
  CheckLmdb(mdb_dbi_open(txn, nullptr, 0, &dbi_), "mdb_dbi_open");
  CheckLmdb(mdb_txn_commit(txn), "mdb_txn_commit");
}

Lmdb::~Lmdb() { mdb_env_close(env_); }

std::string Lmdb::PutAll(PeerValues values) {
  if (values.size() > keys_.size()) return "lmdb: more values than keys";
  MDB_txn* txn = nullptr;
  if (int rc = mdb_txn_begin(env_, nullptr, 0, &txn); rc != 0) return LmdbError("begin", rc);
  for (size_t i = 0; i < values.size(); ++i) {
    MDB_val key{keys_[i].size(), keys_[i].data()};
    MDB_val data{values[i].size(), const_cast<std::byte*>(values[i].data())};
    if (int rc = mdb_put(txn, dbi_, &key, &data, 0); rc != 0) {
      mdb_txn_abort(txn);
      return LmdbError("put", rc);
    }
  }
  if (int rc = mdb_txn_commit(txn); rc != 0) return LmdbError("commit", rc);
  return {};
}

Sqlite::Sqlite(const std::string& path) : path_(path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    Die(Message("open"));
  }
  Exec("PRAGMA page_size=4096");  // before the first table: it fixes the file's page size
  Exec("PRAGMA journal_mode=WAL");
  Exec("PRAGMA synchronous=FULL");
  Exec("CREATE TABLE blobs(id INTEGER PRIMARY KEY, data BLOB NOT NULL)");
  begin_ = Prepare("BEGIN");
  replace_ = Prepare("INSERT OR REPLACE INTO blobs(id, data) VALUES(?1, ?2)");
  commit_ = Prepare("COMMIT");
}

Sqlite::~Sqlite() {
  sqlite3_finalize(begin_);
  sqlite3_finalize(replace_);
  sqlite3_finalize(commit_);
  sqlite3_close(db_);
}

std::string Sqlite::ReplaceAll(PeerValues values) {
  if (std::string e = Step(begin_); !e.empty()) return e;
  for (size_t i = 0; i < values.size(); ++i) {
    if (sqlite3_bind_int64(replace_, 1, static_cast<sqlite3_int64>(i + 1)) != SQLITE_OK ||
        sqlite3_bind_blob64(replace_, 2, values[i].data(), values[i].size(), SQLITE_STATIC) !=
            SQLITE_OK) {
      const std::string e = Message("bind");
      (void)sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return e;
    }
    if (std::string e = Step(replace_); !e.empty()) {
      (void)sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return e;
    }
  }
  return Step(commit_);
}

std::string Sqlite::Message(const char* what) const {
  std::string message = "sqlite ";
  message += what;
  message += " ";
  message += path_;
  message += ": ";
  message += sqlite3_errmsg(db_);
  return message;
}

void Sqlite::Exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) Die(Message(sql));
}

sqlite3_stmt* Sqlite::Prepare(const char* sql) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &statement, nullptr) != SQLITE_OK) Die(Message(sql));
  return statement;
}

std::string Sqlite::Step(sqlite3_stmt* statement) {
  const int rc = sqlite3_step(statement);
  sqlite3_reset(statement);
  return rc == SQLITE_DONE ? std::string() : Message("step");
}

}  // namespace regionstore::bench

#endif  // REGIONSTORE_BENCH_PEERS
