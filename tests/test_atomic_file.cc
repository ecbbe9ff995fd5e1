// ReplaceFileAtomically: the new content is complete, the old one stays on
// every failure, and no temp file is left behind.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>

#include "regionstore/atomic_file.h"
#include "regionstore/io.h"
#include "support/files.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore::testing {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST_CASE("ReplaceFileAtomically creates and replaces whole files, leaving no temp",
          "[atomic_file]") {
  TempDir dir;
  const std::string path = dir.File("out.bin");
  TestIo io;
  std::vector<Op> calls;
  io.OnEnter([&calls](Op op) { calls.push_back(op); });
  const auto first = PatternBytes(3 * kMiB + 5, 1);  // several write chunks
  REQUIRE(ReplaceFileAtomically(path, first, {.io = &io}).ok());
  CHECK(ReadWholeFile(path) == first);
  CHECK(dir.List() == std::vector<std::string>{"out.bin"});
  // The cookbook's order: every write, fsync, rename, then the directory.
  CHECK(calls == std::vector<Op>{Op::kCreateExclusive, Op::kWriteAt, Op::kWriteAt, Op::kWriteAt,
                                 Op::kWriteAt, Op::kSync, Op::kRename, Op::kSyncDirectory});
  io.OnEnter(nullptr);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  const auto second = PatternBytes(100, 2);
  REQUIRE(ReplaceFileAtomically(path, second, {.io = &io}).ok());
  CHECK(ReadWholeFile(path) == second);
  REQUIRE(ReplaceFileAtomically(path, {}, {.io = &io}).ok());
  CHECK(ReadWholeFile(path).empty());
  CHECK(dir.List() == std::vector<std::string>{"out.bin"});

  io.ClearLog();
  REQUIRE(ReplaceFileAtomically(path, second, {.durable = false, .io = &io}).ok());
  CHECK(ReadWholeFile(path) == second);
  CHECK(io.Count(Op::kSync) == 0);
  CHECK(io.Count(Op::kSyncDirectory) == 0);
}

TEST_CASE("ReplaceFileAtomically keeps the old file on every failure and removes the temp",
          "[atomic_file]") {
  struct Case {
    Op op;
    int nth;
    int sys_errno;
    StatusCode code;
    const char* step;
  };
  for (const Case& c :
       {Case{Op::kCreateExclusive, 1, EACCES, StatusCode::kPermissionDenied, "create temp file"},
        Case{Op::kWriteAt, 1, ENOSPC, StatusCode::kNoSpace, "write temp file"},
        Case{Op::kWriteAt, 2, ENOSPC, StatusCode::kNoSpace, "write temp file"},
        Case{Op::kWriteAt, 3, EIO, StatusCode::kIOError, "write temp file"},
        Case{Op::kSync, 1, EIO, StatusCode::kIOError, "fsync"},
        Case{Op::kRename, 1, EIO, StatusCode::kIOError, "rename"}}) {
    DYNAMIC_SECTION("fail " << static_cast<int>(c.op) << " #" << c.nth << " with errno "
                            << c.sys_errno) {
      TempDir dir;
      const std::string path = dir.File("out.bin");
      const auto old_content = PatternBytes(1000, 7);
      WriteWholeFile(path, old_content);
      TestIo io;
      io.FailNth(c.op, c.nth, c.sys_errno);
      const Status status = ReplaceFileAtomically(path, PatternBytes(2 * kMiB + 1, 8), {.io = &io});
      INFO(status.ToString());
      REQUIRE_FALSE(status.ok());
      CHECK(status.code() == c.code);
      CHECK(status.sys_errno() == c.sys_errno);
      CHECK_THAT(status.ToString(), Catch::Contains(c.step) && Catch::Contains(path));
      CHECK(ReadWholeFile(path) == old_content);
      CHECK(dir.List() == std::vector<std::string>{"out.bin"});
    }
  }
}

TEST_CASE("ReplaceFileAtomically reports a failed directory fsync with the new file in place",
          "[atomic_file]") {
  TempDir dir;
  const std::string path = dir.File("out.bin");
  TestIo io;
  io.FailNth(Op::kSyncDirectory, 1, EIO);
  const auto content = PatternBytes(10, 3);
  const Status status = ReplaceFileAtomically(path, content, {.io = &io});
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == StatusCode::kIOError);
  CHECK_THAT(status.ToString(), Catch::Contains("the new file is in place"));
  CHECK(ReadWholeFile(path) == content);
  CHECK(dir.List() == std::vector<std::string>{"out.bin"});
}

TEST_CASE("ReplaceFileAtomically takes a 255-byte file name (the temp's is cut short)",
          "[atomic_file]") {
  TempDir dir;
  const std::string name(255, 'n');
  const auto content = PatternBytes(10, 4);
  REQUIRE(ReplaceFileAtomically(dir.File(name), content).ok());
  CHECK(ReadWholeFile(dir.File(name)) == content);
  CHECK(dir.List() == std::vector<std::string>{name});
}

TEST_CASE("ReplaceFileAtomically refuses a missing directory and a directory", "[atomic_file]") {
  TempDir dir;
  const Status missing = ReplaceFileAtomically(dir.File("no/such/out.bin"), PatternBytes(10, 1));
  CHECK(missing.code() == StatusCode::kNotFound);
  CHECK_THAT(missing.ToString(), Catch::Contains("no/such/out.bin"));
  std::filesystem::create_directory(dir.File("sub"));
  const Status directory = ReplaceFileAtomically(dir.File("sub"), PatternBytes(10, 1));
  CHECK(directory.code() == StatusCode::kIOError);
  CHECK(directory.sys_errno() == EISDIR);
  CHECK_THAT(directory.ToString(), Catch::Contains("directory"));
  CHECK(std::filesystem::is_directory(dir.File("sub")));
  CHECK(dir.List() == std::vector<std::string>{"sub"});
}

TEST_CASE("ReplaceFileAtomically refuses a FIFO, or a link to one, and leaves it a FIFO",
          "[atomic_file]") {
  TempDir dir;
  const std::string fifo = dir.File("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  std::filesystem::create_symlink("fifo", dir.File("link"));
  for (const std::string& path : {fifo, dir.File("link")}) {
    INFO(path);
    const Status refused = ReplaceFileAtomically(path, PatternBytes(10, 1));
    CHECK(refused.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(refused.ToString(), Catch::Contains("not a regular file"));
  }
  CHECK(std::filesystem::is_fifo(fifo));
  CHECK(std::filesystem::is_symlink(dir.File("link")));
  CHECK(dir.List() == std::vector<std::string>{"fifo", "link"});
}

TEST_CASE("CreateExclusive never follows a symbolic link planted at its path", "[atomic_file]") {
  // O_CREAT | O_EXCL fails on any existing name, a symbolic link included,
  // dangling or not: this is why a link planted at the temp path of export
  // (or of create) cannot redirect the write to another file.
  TempDir dir;
  const std::string victim = dir.File("victim.bin");
  WriteWholeFile(victim, PatternBytes(1000, 4));
  const std::string to_victim = dir.File(".planted-1");
  const std::string dangling = dir.File(".planted-2");
  std::filesystem::create_symlink("victim.bin", to_victim);
  std::filesystem::create_symlink("would-be-created.bin", dangling);
  for (const std::string& path : {to_victim, dangling}) {
    INFO(path);
    auto created = Io::Default()->CreateExclusive(path);
    REQUIRE_FALSE(created.ok());
    CHECK(created.status().code() == StatusCode::kAlreadyExists);
    CHECK(created.status().sys_errno() == EEXIST);
    CHECK(std::filesystem::is_symlink(path));
  }
  CHECK(ReadWholeFile(victim) == PatternBytes(1000, 4));
  CHECK_FALSE(std::filesystem::exists(dir.File("would-be-created.bin")));
  CHECK(dir.List() == std::vector<std::string>{".planted-1", ".planted-2", "victim.bin"});
}

TEST_CASE("ReplaceFileAtomically fails rather than follow a link planted at its temp path",
          "[atomic_file][symlink]") {
  // With the random bytes fixed, the temp's name is known in advance:
  // ".out.bin.tmp-", this process's id and boot, and the random bytes. Plant
  // a link there, to a file and dangling; the replace must fail and write
  // through neither.
  TempDir dir;
  const std::string victim = dir.File("victim.bin");
  WriteWholeFile(victim, PatternBytes(1000, 4));
  const std::string temp =
      TempNameOf(dir.File("out.bin"), static_cast<uint64_t>(::getpid()), "abababab");
  TestIo io;
  io.FixRandom(std::byte{0xab});
  ReplaceOptions options;
  options.io = &io;
  const std::vector<std::byte> data = PatternBytes(5000, 5);
  for (const char* target : {"victim.bin", "would-be-created.bin"}) {
    INFO(target);
    std::filesystem::create_symlink(target, temp);
    const Status replaced = ReplaceFileAtomically(dir.File("out.bin"), data, options);
    CHECK(replaced.code() == StatusCode::kAlreadyExists);
    CHECK_THAT(replaced.ToString(), Catch::Contains("temp"));
    CHECK(std::filesystem::is_symlink(temp));
    CHECK(ReadWholeFile(victim) == PatternBytes(1000, 4));
    CHECK_FALSE(std::filesystem::exists(dir.File("would-be-created.bin")));
    CHECK_FALSE(std::filesystem::exists(dir.File("out.bin")));
    std::filesystem::remove(temp);
  }
  // Without the planted link, the same fixed name works.
  REQUIRE(ReplaceFileAtomically(dir.File("out.bin"), data, options).ok());
  CHECK(ReadWholeFile(dir.File("out.bin")) == data);
  CHECK(dir.List() == std::vector<std::string>{"out.bin", "victim.bin"});
}

}  // namespace
}  // namespace regionstore::testing
