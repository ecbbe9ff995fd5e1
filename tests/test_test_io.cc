// The test seams themselves: the forwarding bases pass every call through,
// and TestIo records what the production path does (WriteGatherAt reaching
// the real file's pwritev2, StartWriteback, bytes written, a faked boot id)
// and lets its OnEnter hook read its counts.
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "regionstore/io.h"
#include "support/files.h"
#include "support/syscall_hook.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore::testing {
namespace {

// A Mapping and a File that write the name of every call made on them into
// `calls` (and do nothing else). Roots, not forwarding wrappers: they are
// what the forwarding bases are checked against.
class RecordingMapping final : public Mapping {
 public:
  explicit RecordingMapping(std::vector<std::string>& calls) : calls_(calls) {}
  std::byte* data() override {
    calls_.push_back("data");
    return bytes_.data();
  }
  uint64_t size() const override {
    calls_.push_back("size");
    return bytes_.size();
  }
  Status Sync(uint64_t, uint64_t, SyncKind) override {
    calls_.push_back("Sync");
    return Status::Ok();
  }
  void PrepareWrite(uint64_t, uint64_t) override { calls_.push_back("PrepareWrite"); }
  void ResetPageTables(uint64_t, uint64_t) override { calls_.push_back("ResetPageTables"); }
  Status WaitWord(uint64_t, uint32_t, uint64_t) override {
    calls_.push_back("WaitWord");
    return Status::Ok();
  }
  void WakeWord(uint64_t) override { calls_.push_back("WakeWord"); }

 private:
  std::vector<std::string>& calls_;
  std::array<std::byte, 8> bytes_{};
};

class RecordingFile final : public File {
 public:
  explicit RecordingFile(std::vector<std::string>& calls) : calls_(calls) {}
  const std::string& path() const override {
    calls_.push_back("path");
    return path_;
  }
  Result<uint64_t> ReadAt(uint64_t, std::span<std::byte>) override {
    calls_.push_back("ReadAt");
    return uint64_t{0};
  }
  Status WriteAt(uint64_t, std::span<const std::byte>) override { return Record("WriteAt"); }
  Status WriteGatherAt(uint64_t, std::span<const std::span<const std::byte>>, bool) override {
    return Record("WriteGatherAt");
  }
  void StartWriteback(uint64_t, uint64_t) override { calls_.push_back("StartWriteback"); }
  Status Allocate(uint64_t, uint64_t) override { return Record("Allocate"); }
  Status DataSync() override { return Record("DataSync"); }
  Status Sync() override { return Record("Sync"); }
  Status LockExclusive() override { return Record("LockExclusive"); }
  Result<bool> HasWriter() override {
    calls_.push_back("HasWriter");
    return false;
  }
  Result<FileStat> Stat() override {
    calls_.push_back("Stat");
    return FileStat{};
  }
  Result<std::unique_ptr<Mapping>> Map(uint64_t, OpenMode) override {
    calls_.push_back("Map");
    return std::unique_ptr<Mapping>(std::make_unique<RecordingMapping>(calls_));
  }

 private:
  Status Record(const char* name) {
    calls_.push_back(name);
    return Status::Ok();
  }
  std::vector<std::string>& calls_;
  std::string path_ = "recorded";
};

TEST_CASE("ForwardingFile and ForwardingMapping pass every call to the wrapped one", "[io]") {
  std::vector<std::string> calls;
  ForwardingFile file(std::make_unique<RecordingFile>(calls));
  std::array<std::byte, 4> buffer{};
  const std::array<std::span<const std::byte>, 1> parts{std::span<const std::byte>(buffer)};
  static_cast<void>(file.path());
  static_cast<void>(file.ReadAt(0, buffer));
  static_cast<void>(file.WriteAt(0, buffer));
  static_cast<void>(file.WriteGatherAt(0, parts, true));
  file.StartWriteback(0, 4);
  static_cast<void>(file.Allocate(0, 4));
  static_cast<void>(file.DataSync());
  static_cast<void>(file.Sync());
  static_cast<void>(file.LockExclusive());
  static_cast<void>(file.HasWriter());
  static_cast<void>(file.Stat());
  auto mapped = file.Map(8, OpenMode::kReadWrite);
  REQUIRE(mapped.ok());
  ForwardingMapping mapping(std::move(*mapped));
  static_cast<void>(mapping.data());
  static_cast<void>(mapping.size());
  static_cast<void>(mapping.Sync(0, 4, SyncKind::kSync));
  mapping.PrepareWrite(0, 4);
  mapping.ResetPageTables(0, 4);
  static_cast<void>(mapping.WaitWord(0, 0, 0));
  mapping.WakeWord(0);
  const std::vector<std::string> expected = {"path",
                                             "ReadAt",
                                             "WriteAt",
                                             "WriteGatherAt",
                                             "StartWriteback",
                                             "Allocate",
                                             "DataSync",
                                             "Sync",
                                             "LockExclusive",
                                             "HasWriter",
                                             "Stat",
                                             "Map",
                                             "data",
                                             "size",
                                             "Sync",
                                             "PrepareWrite",
                                             "ResetPageTables",
                                             "WaitWord",
                                             "WakeWord"};
  CHECK(calls == expected);
}

TEST_CASE("ForwardingIo passes BootId on, and TestIo returns the boot id it was given", "[io]") {
  TestIo io;
  auto real = Io::Default()->BootId();
  REQUIRE(real.ok());
  auto unfaked = io.BootId();
  REQUIRE(unfaked.ok());
  CHECK(*unfaked == *real);
  std::array<std::byte, 16> other = *real;
  other[0] = ~other[0];
  io.SetBootId(other);
  ForwardingIo forwarding(&io);
  auto faked = forwarding.BootId();
  REQUIRE(faked.ok());
  CHECK(*faked == other);
}

TEST_CASE("An OnEnter hook may call Count without deadlocking", "[io]") {
  TempDir dir;
  TestIo io;
  std::vector<int> seen;
  io.OnEnter([&](Op op) { seen.push_back(io.Count(op)); });
  auto file = io.CreateExclusive(dir.File("f"));
  REQUIRE(file.ok());
  const std::vector<std::byte> bytes = PatternBytes(10, 1);
  REQUIRE((*file)->WriteAt(0, bytes).ok());
  REQUIRE((*file)->WriteAt(10, bytes).ok());
  io.OnEnter(nullptr);
  // The hook runs before the call is counted.
  CHECK(seen == std::vector<int>{0, 0, 1});
  CHECK(io.Count(Op::kWriteAt) == 2);
}

TEST_CASE("TestIo hands WriteGatherAt to the real file's pwritev2 and counts it as its parts",
          "[io]") {
  TempDir dir;
  const std::string path = dir.File("f");
  TestIo io;
  auto file = io.CreateExclusive(path);
  REQUIRE(file.ok());
  const std::vector<std::byte> bytes = PatternBytes(5000, 1);
  const std::array<std::span<const std::byte>, 3> parts{
      std::span<const std::byte>(bytes).first(1000), std::span<const std::byte>(),
      std::span<const std::byte>(bytes).subspan(1000)};
  SyscallHook hook;
  REQUIRE((*file)->WriteGatherAt(64, parts, /*data_sync=*/true).ok());
  // The production path: one pwritev2(RWF_DSYNC), not a pwrite per part.
  REQUIRE(hook.Count(Syscall::kPwritev2) == 1);
  CHECK(hook.Calls().at(0).flags == RWF_DSYNC);
  CHECK(hook.Count(Syscall::kPwrite) == 0);
  CHECK(io.Count(Op::kWriteAt) == 2);
  CHECK(io.Count(Op::kDataSync) == 1);
  const auto writes = io.Writes();
  REQUIRE(writes.size() == 2);
  CHECK((writes[0].offset == 64 && writes[0].length == 1000));
  CHECK((writes[1].offset == 1064 && writes[1].length == 4000));
  CHECK(io.BytesWritten() == 5000);
  std::vector<std::byte> expected(64 + bytes.size());
  std::copy(bytes.begin(), bytes.end(), expected.begin() + 64);
  CHECK(ReadWholeFile(path) == expected);
}

TEST_CASE("A fault in TestIo's WriteGatherAt stops it where the WriteAt-per-part emulation would",
          "[io][fault]") {
  const std::vector<std::byte> bytes = PatternBytes(3000, 1);
  const std::array<std::span<const std::byte>, 2> parts{
      std::span<const std::byte>(bytes).first(1000),
      std::span<const std::byte>(bytes).subspan(1000)};
  struct Case {
    Op op;
    int nth;
    uint64_t on_disk;  // bytes of `bytes` the file holds afterwards
  };
  for (const Case c :
       {Case{Op::kWriteAt, 1, 0}, Case{Op::kWriteAt, 2, 1000}, Case{Op::kDataSync, 1, 3000}}) {
    INFO("op " << static_cast<int>(c.op) << " call " << c.nth);
    TempDir dir;
    const std::string path = dir.File("f");
    TestIo io;
    auto file = io.CreateExclusive(path);
    REQUIRE(file.ok());
    io.FailNth(c.op, c.nth, EIO);
    const Status s = (*file)->WriteGatherAt(0, parts, /*data_sync=*/true);
    CHECK(s.code() == StatusCode::kIOError);
    CHECK(s.sys_errno() == EIO);
    CHECK(io.BytesWritten() == c.on_disk);
    CHECK(ReadWholeFile(path) == std::vector<std::byte>(bytes.begin(), bytes.begin() + c.on_disk));
  }
}

TEST_CASE("TestIo counts StartWriteback and passes it to sync_file_range", "[io]") {
  TempDir dir;
  TestIo io;
  auto file = io.CreateExclusive(dir.File("f"));
  REQUIRE(file.ok());
  SyscallHook hook;
  (*file)->StartWriteback(4096, 8192);
  CHECK(io.Count(Op::kStartWriteback) == 1);
  const auto ranges = io.StartWritebacks();
  REQUIRE(ranges.size() == 1);
  CHECK((ranges[0].offset == 4096 && ranges[0].length == 8192));
  CHECK(hook.Count(Syscall::kSyncFileRange) == 1);
  // A fault drops the hint.
  io.FailNth(Op::kStartWriteback, 1, EIO);
  (*file)->StartWriteback(0, 4096);
  CHECK(io.Count(Op::kStartWriteback) == 2);
  CHECK(hook.Count(Syscall::kSyncFileRange) == 1);
}

TEST_CASE("TestIo's BytesWritten counts what WriteAt and WriteGatherAt wrote, not what failed",
          "[io]") {
  TempDir dir;
  TestIo io;
  auto file = io.CreateExclusive(dir.File("f"));
  REQUIRE(file.ok());
  const std::vector<std::byte> bytes = PatternBytes(700, 1);
  const std::array<std::span<const std::byte>, 2> parts{std::span<const std::byte>(bytes),
                                                        std::span<const std::byte>(bytes)};
  REQUIRE((*file)->WriteAt(0, bytes).ok());
  REQUIRE((*file)->WriteGatherAt(700, parts, /*data_sync=*/false).ok());
  io.FailNth(Op::kWriteAt, 1, EIO);
  CHECK_FALSE((*file)->WriteAt(0, bytes).ok());
  CHECK(io.BytesWritten() == 2100);
  io.ClearLog();
  CHECK(io.BytesWritten() == 0);
}

}  // namespace
}  // namespace regionstore::testing
