// The single-writer lock: what keeps it, what a fork() child inherits, and a
// store replaced between open() and flock(). Plus the handle's counters and
// the copy-on-write warning.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "regionstore/store.h"
#include "support/files.h"
#include "support/process.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore::testing {
namespace {

// Exit code of a forked child that tries to open `path` for writing:
// 0 opened, 4 busy, 1 anything else.
int ChildTriesWriter(const std::string& path) {
  return testing::RunInChild([&] {
    auto store = Store::Open(path, OpenMode::kReadWrite);
    return store.ok() ? 0 : store.status().code() == StatusCode::kBusy ? 4 : 1;
  });
}

TEST_CASE("Closing another descriptor of the store in the same process keeps the lock",
          "[lock][fs-matrix]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 64 * kKiB);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  // fcntl record locks would vanish here; flock belongs to the writer's own
  // open file description and stays.
  const int other = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(other >= 0);
  REQUIRE(::close(other) == 0);
  {
    auto reader = Store::Open(path, OpenMode::kReadOnly);
    REQUIRE(reader.ok());
  }
  CHECK(ChildTriesWriter(path) == 4);
  CHECK(Store::Open(path, OpenMode::kReadWrite).status().code() == StatusCode::kBusy);
}

TEST_CASE("A fork() child inherits the lock and the mapping, and holds the lock until it exits",
          "[lock][fork][multiprocess][fs-matrix]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 1 * kMiB);
  auto writer = std::make_unique<Store>(MustOpen(path, OpenMode::kReadWrite));
  const auto before_fork = PatternBytes(5000, 1);
  REQUIRE(writer->Write(100, before_fork, Durability::kNone).ok());

  // A child that died early makes our pipe writes fail with EPIPE instead
  // of killing the test binary.
  ::signal(SIGPIPE, SIG_IGN);
  int to_child[2];
  int to_parent[2];
  REQUIRE(::pipe2(to_child, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(to_parent, O_CLOEXEC) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::alarm(60);  // never outlive a parent stuck on a failed assertion
    ::close(to_child[1]);
    ::close(to_parent[0]);
    // The inherited mapping shows what the parent wrote before the fork...
    auto view = writer->View(100, before_fork.size());
    int verdict =
        view.ok() && std::memcmp(view->data(), before_fork.data(), before_fork.size()) == 0 ? 0 : 1;
    char go = 0;
    if (::write(to_parent[1], "r", 1) != 1 || ::read(to_child[0], &go, 1) != 1) ::_exit(2);
    // ...and, MAP_SHARED, what it wrote after the fork.
    const auto after_fork = PatternBytes(3000, 2);
    auto later = writer->View(20000, after_fork.size());
    if (!later.ok() || std::memcmp(later->data(), after_fork.data(), after_fork.size()) != 0) {
      verdict |= 4;
    }
    // Stay alive (holding the inherited descriptor) until told to exit.
    if (::write(to_parent[1], "s", 1) != 1 || ::read(to_child[0], &go, 1) != 1) ::_exit(2);
    ::_exit(verdict);
  }
  ChildGuard guard(child);
  ::close(to_child[0]);
  ::close(to_parent[1]);
  char signal_byte = 0;
  REQUIRE(::read(to_parent[0], &signal_byte, 1) == 1);
  REQUIRE(writer->Write(20000, PatternBytes(3000, 2), Durability::kNone).ok());
  REQUIRE(::write(to_child[1], "g", 1) == 1);
  REQUIRE(::read(to_parent[0], &signal_byte, 1) == 1);

  // The parent closes its handle, but the child still holds the shared open
  // file description: the store stays locked.
  writer.reset();
  CHECK(Store::Open(path, OpenMode::kReadWrite).status().code() == StatusCode::kBusy);
  CHECK(ChildTriesWriter(path) == 4);

  REQUIRE(::write(to_child[1], "x", 1) == 1);
  int wait_status = 0;
  REQUIRE(::waitpid(child, &wait_status, 0) == child);
  guard.Release();
  REQUIRE(WIFEXITED(wait_status));
  CHECK(WEXITSTATUS(wait_status) == 0);
  ::close(to_child[1]);
  ::close(to_parent[0]);
  // The child is gone: the lock is free.
  CHECK(Store::Open(path, OpenMode::kReadWrite).ok());
}

TEST_CASE("A store replaced between open and lock is reopened: the writer locks the new inode",
          "[lock][fs-matrix]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  const std::string replacement = dir.File("replacement.rgn");
  MustCreate(path, 64 * kKiB);
  MustCreate(replacement, 128 * kKiB);
  TestIo io;
  // After Open's open() of the old file, before its flock: swap the path.
  io.OnNextOpen([&] { std::filesystem::rename(replacement, path); });
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  // Opened, saw the swap, opened again; then the sidecar PATH.shm.
  CHECK(io.Count(testing::Op::kOpen) == 3);
  CHECK(store.data_size() == 128 * kKiB);  // the new store, not the orphan
  REQUIRE(store.Write(0, PatternBytes(10, 1), Durability::kSync).ok());
  CHECK(testing::PreadFile(path, store.info().data_offset, 10) == PatternBytes(10, 1));
  CHECK(ChildTriesWriter(path) == 4);  // and the lock is on the inode at `path`
}

TEST_CASE("Stats count writes, bytes and barriers per mode, and failures", "[store][stats]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 1 * kMiB);
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  const auto data = PatternBytes(1000, 1);
  REQUIRE(store.Write(0, data, Durability::kNone).ok());
  REQUIRE(store.Write(0, data, Durability::kNone).ok());
  REQUIRE(store.Write(0, data, Durability::kSync).ok());
  REQUIRE(store.Write(0, data, Durability::kPwriteFdatasync).ok());
  REQUIRE(store.Flush(0, 2000, Durability::kSync).ok());
  REQUIRE(store.Write(0, {}, Durability::kSync).ok());  // empty: no barrier, not counted
  StoreStats stats = store.Stats();
  CHECK(stats.of(Durability::kNone).writes == 2);
  CHECK(stats.of(Durability::kNone).bytes_written == 2000);
  CHECK(stats.of(Durability::kNone).flushes == 0);
  CHECK(stats.of(Durability::kSync).writes == 1);
  CHECK(stats.of(Durability::kSync).flushes == 2);  // the write's RWF_DSYNC and Flush's msync
  CHECK(stats.of(Durability::kSync).flush_nanos > 0);
  CHECK(stats.of(Durability::kPwriteFdatasync).writes == 1);
  CHECK(stats.of(Durability::kPwriteFdatasync).flushes == 1);
  CHECK(stats.of(Durability::kAsync).writes == 0);
  CHECK(stats.failed_flushes == 0);
  CHECK_FALSE(stats.poisoned);

  REQUIRE(store.Write(0, data, Durability::kAsync).ok());
  CHECK(store.Stats().of(Durability::kAsync).writes == 1);
  CHECK(store.Stats().of(Durability::kAsync).flushes == 1);

  // A kSync Write below 1 MiB is one pwritev2(RWF_DSYNC): its flush fails.
  io.FailNth(testing::Op::kDataSync, 1, EIO);
  CHECK(store.Write(0, data, Durability::kSync).code() == StatusCode::kIOError);
  stats = store.Stats();
  CHECK(stats.of(Durability::kSync).writes == 1);  // the failed write is not counted
  CHECK(stats.of(Durability::kSync).flushes == 3);
  CHECK(stats.failed_flushes == 1);
  CHECK(stats.failed_writes == 0);
  CHECK(stats.poisoned);
  // A poisoned handle refuses before doing anything: nothing more is counted.
  CHECK(store.Write(0, data, Durability::kPwriteFdatasync).code() == StatusCode::kPoisoned);
  CHECK(store.Flush(0, 10, Durability::kSync).code() == StatusCode::kPoisoned);
  const StoreStats after = store.Stats();
  CHECK(after.of(Durability::kPwriteFdatasync).writes == 1);
  CHECK(after.of(Durability::kPwriteFdatasync).flushes == 1);
  CHECK(after.of(Durability::kSync).flushes == 3);
  CHECK(after.failed_flushes == 1);
}

TEST_CASE("Stats count a failed pwrite, a failed fdatasync and a failed Flush apart",
          "[store][stats]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 1 * kMiB);
  const auto data = PatternBytes(100, 1);
  SECTION("pwrite") {
    TestIo io;
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    io.FailNth(testing::Op::kWriteAt, 1, EIO);
    CHECK(store.Write(0, data, Durability::kPwriteFdatasync).code() == StatusCode::kIOError);
    const StoreStats stats = store.Stats();
    CHECK(stats.failed_writes == 1);
    CHECK(stats.failed_flushes == 0);
    CHECK(stats.of(Durability::kPwriteFdatasync).flushes == 0);  // never got to the barrier
    CHECK(stats.of(Durability::kPwriteFdatasync).writes == 0);
    CHECK(stats.poisoned);
  }
  SECTION("fdatasync in Write") {
    TestIo io;
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    io.FailNth(testing::Op::kDataSync, 1, EIO);
    CHECK(store.Write(0, data, Durability::kPwriteFdatasync).code() == StatusCode::kIOError);
    const StoreStats stats = store.Stats();
    CHECK(stats.failed_writes == 0);
    CHECK(stats.failed_flushes == 1);
    CHECK(stats.of(Durability::kPwriteFdatasync).flushes == 1);
    CHECK(stats.of(Durability::kPwriteFdatasync).writes == 0);
  }
  SECTION("fdatasync in Flush") {
    TestIo io;
    Store store = MustOpen(path, OpenMode::kReadWrite, &io);
    REQUIRE(store.Write(0, data, Durability::kNone).ok());
    io.FailNth(testing::Op::kDataSync, 1, EIO);
    CHECK(store.Flush(0, 100, Durability::kPwriteFdatasync).code() == StatusCode::kIOError);
    const StoreStats stats = store.Stats();
    CHECK(stats.failed_flushes == 1);
    CHECK(stats.of(Durability::kPwriteFdatasync).flushes == 1);
    CHECK(stats.of(Durability::kNone).writes == 1);
    CHECK(stats.poisoned);
  }
}

TEST_CASE("Create warns when the directory is on a copy-on-write filesystem", "[store][create]") {
  TempDir dir;
  TestIo io;
  std::vector<std::string> warnings;
  CreateOptions options;
  options.io = &io;
  options.warnings = &warnings;
  FsInfo ext4;
  ext4.type_name = "ext2/3/4";
  io.FakeFilesystem(ext4);
  REQUIRE(Store::Create(dir.File("plain.rgn"), 64 * kKiB, options).ok());
  CHECK(warnings.empty());

  FsInfo btrfs;
  btrfs.type_name = "btrfs";
  btrfs.copy_on_write = true;
  io.FakeFilesystem(btrfs);
  REQUIRE(Store::Create(dir.File("cow.rgn"), 64 * kKiB, options).ok());
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("btrfs") && Catch::Contains("SIGBUS"));
}

}  // namespace
}  // namespace regionstore::testing
