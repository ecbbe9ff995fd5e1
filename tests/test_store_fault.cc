// Injected failures: a failed flush poisons the handle; a failed create
// leaves nothing behind.
#include <catch2/catch.hpp>
#include <cerrno>

#include "regionstore/store.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore {
namespace {

using testing::kMiB;
using testing::MustCreate;
using testing::MustOpen;
using testing::Op;
using testing::PatternBytes;
using testing::PreadFile;
using testing::TempDir;
using testing::TestIo;

void ExpectPoisoned(Store& store) {
  CHECK(store.poisoned());
  const std::vector<std::byte> before = testing::ReadWholeFile(store.path());
  for (Durability mode : {Durability::kNone, Durability::kAsync, Durability::kSync,
                          Durability::kPwriteFdatasync}) {
    Status status = store.Write(0, PatternBytes(8, 9), mode);
    CHECK(status.code() == StatusCode::kPoisoned);
    CHECK_THAT(status.message(), Catch::Contains("reopen"));
    CHECK(store.Flush(0, 8, mode).code() == StatusCode::kPoisoned);
  }
  CHECK(testing::ReadWholeFile(store.path()) == before);
}

TEST_CASE("EIO from msync or fdatasync is returned and poisons the handle", "[store][fault]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 1 * kMiB);
  const auto data = PatternBytes(5000, 3);

  struct Case {
    const char* name;
    Op op;
    Durability mode;
    bool flush;  // fail in Flush() rather than Write()
    const char* operation;
  };
  const Case cases[] = {
      {"write kSync", Op::kMsync, Durability::kSync, false, "write: msync(MS_SYNC)"},
      {"write kAsync", Op::kMsync, Durability::kAsync, false, "write: msync(MS_ASYNC)"},
      {"write kPwriteFdatasync fdatasync", Op::kDataSync, Durability::kPwriteFdatasync, false,
       "write: fdatasync"},
      {"write kPwriteFdatasync pwrite", Op::kWriteAt, Durability::kPwriteFdatasync, false,
       "write: pwrite"},
      {"flush kSync", Op::kMsync, Durability::kSync, true, "flush: msync(MS_SYNC)"},
      {"flush kPwriteFdatasync", Op::kDataSync, Durability::kPwriteFdatasync, true,
       "flush: fdatasync"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      TestIo io;
      Store store = MustOpen(path, OpenMode::kReadWrite, &io);
      io.FailNth(c.op, 1, EIO);
      Status status = c.flush ? store.Flush(100, data.size(), c.mode)
                              : store.Write(100, data, c.mode);
      INFO(status.ToString());
      CHECK(status.code() == StatusCode::kIOError);
      CHECK(status.sys_errno() == EIO);
      CHECK(status.operation() == c.operation);
      CHECK(status.path() == path);
      ExpectPoisoned(store);

      // Reopening clears the poison; the store works again.
      { Store closed = std::move(store); }
      Store reopened = MustOpen(path, OpenMode::kReadWrite);
      CHECK_FALSE(reopened.poisoned());
      REQUIRE(reopened.Write(100, data, Durability::kSync).ok());
      CHECK(PreadFile(path, reopened.info().data_offset + 100, data.size()) == data);
    }
  }
}

TEST_CASE("A failure at any step of create leaves no file and no temp behind",
          "[store][fault][create]") {
  struct Case {
    const char* name;
    Op op;
    int sys_errno;
    StatusCode code;
    const char* operation;
  };
  const Case cases[] = {
      {"ENOSPC at fallocate", Op::kAllocate, ENOSPC, StatusCode::kNoSpace, "create: fallocate"},
      {"ENOSPC while zero-filling", Op::kWriteAt, ENOSPC, StatusCode::kNoSpace,
       "create: zero-fill"},
      {"EIO writing the superblock", Op::kWriteAt, EIO, StatusCode::kIOError,
       "create: write superblock"},
      {"EIO at fsync", Op::kSync, EIO, StatusCode::kIOError, "create: fsync"},
      {"EIO at rename", Op::kRename, EIO, StatusCode::kIOError, "create: rename"},
      {"EACCES creating the temp file", Op::kCreateExclusive, EACCES,
       StatusCode::kPermissionDenied, "create: create temp file"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      TempDir dir;
      const std::string path = dir.File("s.rgn");
      TestIo io;
      // A 9 MiB file: the zero-fill takes two 8 MiB-chunk writes, the
      // superblock is the third.
      const int nth = std::string(c.name) == "EIO writing the superblock" ? 3 : 1;
      io.FailNth(c.op, nth, c.sys_errno);
      CreateOptions options;
      options.io = &io;
      Status status = Store::Create(path, 8 * kMiB, options);
      INFO(status.ToString());
      CHECK(status.code() == c.code);
      CHECK(status.sys_errno() == c.sys_errno);
      CHECK(status.operation() == c.operation);
      CHECK(status.path() == path);
      CHECK(dir.List().empty());
    }
  }
}

}  // namespace
}  // namespace regionstore
