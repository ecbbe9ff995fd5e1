// Open refuses every kind of bad file with its specific error and changes
// nothing.
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <functional>

#include "format.h"
#include "regionstore/checkpoint.h"
#include "regionstore/store.h"
#include "support/files.h"
#include "support/skip.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

void StoreLE(std::vector<std::byte>& bytes, size_t offset, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) {
    bytes[offset + i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
  }
}

void Reseal(std::vector<std::byte>& file) {
  StoreLE(file, format::kSuperblockChecksumOffset,
          format::Checksum(std::span(file).first(format::kSuperblockChecksumOffset)), 8);
}

// Opens `path` both ways and through ReadStoreInfo; all three must fail with
// `code` and a message containing `needle`, and leave the file unchanged.
void ExpectRefused(const std::string& path, StatusCode code, const std::string& needle) {
  const bool exists = std::filesystem::is_regular_file(path);
  const std::vector<std::byte> before = exists ? ReadWholeFile(path) : std::vector<std::byte>{};
  for (OpenMode mode : {OpenMode::kReadOnly, OpenMode::kReadWrite}) {
    auto store = Store::Open(path, mode);
    REQUIRE_FALSE(store.ok());
    INFO(store.status().ToString());
    CHECK(store.status().code() == code);
    CHECK_THAT(store.status().ToString(), Catch::Contains(needle));
    CHECK_THAT(store.status().ToString(), Catch::Contains(path));
  }
  auto info = ReadStoreInfo(path);
  REQUIRE_FALSE(info.ok());
  CHECK(info.status().code() == code);
  if (exists) CHECK(ReadWholeFile(path) == before);
}

TEST_CASE("A new store has the documented size, layout and no leftovers", "[store][open]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 16 * kMiB);
  CHECK(dir.List() == std::vector<std::string>{"s.rgn"});
  CHECK(std::filesystem::file_size(path) == kDefaultDataOffset + 16 * kMiB);
  CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::all) ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  Store store = MustOpen(path, OpenMode::kReadOnly);
  CHECK(store.info().format_version == 1);
  CHECK(store.info().data_offset == kDefaultDataOffset);
  CHECK(store.data_size() == 16 * kMiB);
  CHECK(store.info().regions.empty());
  // The whole data area starts zeroed.
  auto view = store.View(0, store.data_size());
  REQUIRE(view.ok());
  CHECK(std::all_of(view->begin(), view->end(), [](std::byte b) { return b == std::byte{0}; }));
}

TEST_CASE("A store with an empty data area is valid", "[store][open]") {
  TempDir dir;
  MustCreate(dir.File("empty.rgn"), 0);
  Store store = MustOpen(dir.File("empty.rgn"), OpenMode::kReadWrite);
  CHECK(store.data_size() == 0);
  CHECK(store.Write(0, {}, Durability::kSync).ok());
  std::byte one{1};
  CHECK(store.Write(0, std::span(&one, 1), Durability::kNone).code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("Create refuses to replace an existing file unless asked", "[store][create]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  WriteWholeFile(path, testing::PatternBytes(1000, 1));
  Status refused = Store::Create(path, 64 * kKiB);
  CHECK(refused.code() == StatusCode::kAlreadyExists);
  CHECK(ReadWholeFile(path) == testing::PatternBytes(1000, 1));
  CHECK(dir.List() == std::vector<std::string>{"s.rgn"});

  CreateOptions replace;
  replace.replace_existing = true;
  REQUIRE(Store::Create(path, 64 * kKiB, replace).ok());
  CHECK(MustOpen(path, OpenMode::kReadOnly).data_size() == 64 * kKiB);
  CHECK(dir.List() == std::vector<std::string>{"s.rgn"});
}

TEST_CASE("Create with replace refuses a store whose writer is alive", "[store][create]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 64 * kKiB);
  const std::vector<std::byte> before = ReadWholeFile(path);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  CreateOptions replace;
  replace.replace_existing = true;
  Status status = Store::Create(path, 128 * kKiB, replace);
  CHECK(status.code() == StatusCode::kBusy);
  CHECK(ReadWholeFile(path) == before);
  // The writer's sidecar, beside the store as it was.
  CHECK(dir.List() == std::vector<std::string>{"s.rgn", "s.rgn.shm"});
}

TEST_CASE("Create rejects a size beyond the format's limit", "[store][create]") {
  TempDir dir;
  Status status = Store::Create(dir.File("s.rgn"), format::kMaxDataSize + 1);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(dir.List().empty());
}

TEST_CASE("Create in a missing directory fails with kNotFound", "[store][create]") {
  TempDir dir;
  Status status = Store::Create(dir.File("no/such/dir/s.rgn"), 4096);
  CHECK(status.code() == StatusCode::kNotFound);
  CHECK(dir.List().empty());
}

TEST_CASE("Open refuses damaged or foreign files with specific errors", "[store][open]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 64 * kKiB);
  std::vector<std::byte> good = ReadWholeFile(path);

  SECTION("bad magic") {
    std::vector<std::byte> file = good;
    file[0] = std::byte{'X'};
    WriteWholeFile(path, file);
    ExpectRefused(path, StatusCode::kCorruption, "bad magic");
  }
  SECTION("bad version") {
    std::vector<std::byte> file = good;
    StoreLE(file, format::sb::kVersion, 2, 4);
    Reseal(file);
    WriteWholeFile(path, file);
    ExpectRefused(path, StatusCode::kUnsupportedVersion, "format version 2");
  }
  SECTION("unknown incompatible feature") {
    std::vector<std::byte> file = good;
    StoreLE(file, format::sb::kIncompatFlags, 1u << 5, 4);
    Reseal(file);
    WriteWholeFile(path, file);
    ExpectRefused(path, StatusCode::kUnsupportedVersion, "incompatible feature");
  }
  SECTION("a region count beyond the format's limit") {
    std::vector<std::byte> file = good;
    StoreLE(file, format::sb::kRegionCount, 0xffffffff, 4);
    Reseal(file);
    WriteWholeFile(path, file);
    ExpectRefused(path, StatusCode::kCorruption, "region count 4294967295 exceeds the limit");
  }
  SECTION("bad checksum") {
    std::vector<std::byte> file = good;
    file[format::sb::kDataSize] ^= std::byte{0x01};
    WriteWholeFile(path, file);
    ExpectRefused(path, StatusCode::kCorruption, "checksum mismatch");
  }
  SECTION("wrong size: extended") {
    std::vector<std::byte> file = good;
    file.resize(file.size() + 64 * kKiB);
    WriteWholeFile(path, file);
    ExpectRefused(path, StatusCode::kCorruption, "(extended)");
  }
  SECTION("wrong size: data size the file cannot hold") {
    std::vector<std::byte> file = good;
    StoreLE(file, format::sb::kDataSize, 1 * kMiB, 8);
    Reseal(file);
    WriteWholeFile(path, file);
    ExpectRefused(path, StatusCode::kCorruption, "cannot hold");
  }
  SECTION("truncated inside the data area") {
    std::vector<std::byte> file = good;
    file.resize(file.size() - 1);
    WriteWholeFile(path, file);
    ExpectRefused(path, StatusCode::kCorruption, "(truncated)");
  }
  SECTION("truncated inside the superblock") {
    std::vector<std::byte> file = good;
    file.resize(100);
    WriteWholeFile(path, file);
    ExpectRefused(path, StatusCode::kCorruption, "truncated");
  }
  SECTION("empty") {
    WriteWholeFile(path, {});
    ExpectRefused(path, StatusCode::kCorruption, "empty file");
  }
  SECTION("garbage") {
    WriteWholeFile(path, testing::PatternBytes(2 * kMiB, 7));
    ExpectRefused(path, StatusCode::kCorruption, "bad magic");
  }
}

// Runs `body` in a forked child that, when root, first drops every
// capability but stays uid 0 (so root-owned folders stay reachable and file
// modes and ownership decide), and returns the exit code `body` chose.
// 77 means "nothing to prove here"; 100, the capabilities could not be dropped.
int ExitCodeWithoutCapabilities(const std::function<int()>& body) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::geteuid() == 0) {
      __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
      __user_cap_data_struct no_caps[2] = {};
      if (::syscall(SYS_capset, &header, no_caps) != 0) ::_exit(100);
    }
    ::_exit(body());
  }
  int wait_status = 0;
  REQUIRE(::waitpid(child, &wait_status, 0) == child);
  REQUIRE(WIFEXITED(wait_status));
  return WEXITSTATUS(wait_status);
}

TEST_CASE("Open refuses a directory and a missing path", "[store][open]") {
  TempDir dir;
  ExpectRefused(dir.path().string(), StatusCode::kCorruption, "directory");
  ExpectRefused(dir.File("missing.rgn"), StatusCode::kNotFound, "missing.rgn");
}

TEST_CASE("Open without permission fails with kPermissionDenied", "[store][open]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  const std::string control = dir.File("control.rgn");
  MustCreate(path, 64 * kKiB);
  MustCreate(control, 64 * kKiB);
  REQUIRE(::chmod(path.c_str(), 0) == 0);
  REQUIRE(::chmod(control.c_str(), 0644) == 0);
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  // Root ignores file modes through CAP_DAC_OVERRIDE: checked from a child
  // without capabilities, so the file's mode decides.
  const int code = ExitCodeWithoutCapabilities([&] {
    // If even the world-readable control fails, this account cannot reach
    // the folder and the check would prove nothing.
    if (!Store::Open(control, OpenMode::kReadOnly).ok()) return 77;
    auto ro = Store::Open(path, OpenMode::kReadOnly);
    auto rw = Store::Open(path, OpenMode::kReadWrite);
    const bool both_denied = !ro.ok() && ro.status().code() == StatusCode::kPermissionDenied &&
                             !rw.ok() && rw.status().code() == StatusCode::kPermissionDenied;
    return both_denied ? 0 : 1;
  });
  if (code == 77) {
    SKIP_CASE("even a world-readable store cannot be opened without privileges here");
    return;
  }
  CHECK(code == 0);
}

// The store is opened with O_NOATIME (a journalled atime update per mmap cost
// about 50 us of a one-shot update): reads, mappings and writes leave the
// access time alone. Someone who may not use O_NOATIME (not the owner, no
// CAP_FOWNER) still opens the store.
TEST_CASE("Open leaves the access time alone, and works without O_NOATIME rights",
          "[store][open]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 64 * kKiB);
  const timespec old_times[2] = {{978307200, 0}, {UTIME_OMIT, 0}};  // atime 2001-01-01
  struct stat st {};
  // On a noatime mount nothing moves the access time: the check below would
  // prove nothing. A plain read must move it first.
  {
    REQUIRE(::utimensat(AT_FDCWD, path.c_str(), old_times, 0) == 0);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    char byte = 0;
    REQUIRE(::pread(fd, &byte, 1, 0) == 1);
    ::close(fd);
    REQUIRE(::stat(path.c_str(), &st) == 0);
  }
  const bool atime_moves = st.st_atim.tv_sec != 978307200;
  if (!atime_moves) WARN("this filesystem does not update access times: that half proves nothing");
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), old_times, 0) == 0);
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    std::vector<std::byte> out(100);
    REQUIRE(store.Read(0, out).ok());
    REQUIRE(store.Write(0, out, Durability::kSync).ok());
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    REQUIRE(reader.Read(0, out).ok());
  }
  REQUIRE(ReadStoreInfo(path).ok());
  REQUIRE(::stat(path.c_str(), &st) == 0);
  // relatime would have updated an access time older than a day.
  CHECK(st.st_atim.tv_sec == 978307200);

  if (::geteuid() != 0) {
    WARN("skipped the fallback half: it needs root to give the store another owner");
    return;
  }
  REQUIRE(::chown(path.c_str(), 12345, 12345) == 0);
  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  // Without CAP_FOWNER, O_NOATIME on someone else's file is EPERM.
  const int code = ExitCodeWithoutCapabilities([&] {
    const int probe = ::open(path.c_str(), O_RDONLY | O_NOATIME);
    if (probe >= 0 || errno != EPERM) return 77;  // nothing to prove here
    auto rw = Store::Open(path, OpenMode::kReadWrite);
    auto ro = Store::Open(path, OpenMode::kReadOnly);
    return rw.ok() && ro.ok() ? 0 : 1;
  });
  if (code == 77) {
    SKIP_CASE("O_NOATIME was not refused to a non-owner here");
    return;
  }
  CHECK(code == 0);
}

TEST_CASE("A second writer in the same process gets kBusy naming the path", "[store][lock]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 64 * kKiB);
  Store first = MustOpen(path, OpenMode::kReadWrite);
  auto second = Store::Open(path, OpenMode::kReadWrite);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == StatusCode::kBusy);
  CHECK_THAT(second.status().ToString(), Catch::Contains(path));
  // Readers take no lock.
  CHECK(Store::Open(path, OpenMode::kReadOnly).ok());
  // Moving the handle keeps the lock; destroying it releases the lock.
  Store moved = std::move(first);
  CHECK(Store::Open(path, OpenMode::kReadWrite).status().code() == StatusCode::kBusy);
  { Store gone = std::move(moved); }
  CHECK(Store::Open(path, OpenMode::kReadWrite).ok());
}

// --- Symbolic links: refused unless asked for (O_NOFOLLOW)

// The status of a refused link: kInvalidArgument naming the path, saying
// what it is and how to allow it, with no errno (ELOOP would read as a loop).
void CheckRefusedAsSymlink(const Status& status, const std::string& link) {
  INFO(status.ToString());
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.sys_errno() == 0);
  CHECK(status.path() == link);
  CHECK_THAT(status.message(), Catch::Contains("is a symbolic link; refused"));
  CHECK_THAT(status.message(), Catch::Contains("SymlinkPolicy::kFollow"));
  CHECK_THAT(status.message(), Catch::Contains("--follow-symlinks"));
}

TEST_CASE("Open, ReadStoreInfo and VerifyRegions refuse a symbolic link to a store unless asked",
          "[store][open][symlink]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  const std::string link = dir.File("link.rgn");
  CreateOptions create;
  create.checkpoints = {{"state", 4 * kKiB}};
  REQUIRE(Store::Create(path, 64 * kKiB, create).ok());
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("state", testing::PatternBytes(100, 3), Durability::kSync).ok());
  }
  std::filesystem::create_symlink("s.rgn", link);
  const std::vector<std::byte> before = ReadWholeFile(path);

  for (OpenMode mode : {OpenMode::kReadOnly, OpenMode::kReadWrite}) {
    auto store = Store::Open(link, mode);
    REQUIRE_FALSE(store.ok());
    CheckRefusedAsSymlink(store.status(), link);
  }
  auto info = ReadStoreInfo(link);
  REQUIRE_FALSE(info.ok());
  CheckRefusedAsSymlink(info.status(), link);
  auto reports = VerifyRegions(link);
  REQUIRE_FALSE(reports.ok());
  CheckRefusedAsSymlink(reports.status(), link);
  VerifyOptions headers_only;
  headers_only.check_payloads = false;
  reports = VerifyRegions(link, headers_only);
  REQUIRE_FALSE(reports.ok());
  CheckRefusedAsSymlink(reports.status(), link);
  // A refused writer ran no recovery: not one byte of the target changed.
  CHECK(ReadWholeFile(path) == before);
  CHECK(std::filesystem::is_symlink(link));

  // Asked for, each opens the store the link points to.
  const Result<StoreInfo> direct = ReadStoreInfo(path);
  REQUIRE(direct.ok());
  info = ReadStoreInfo(link, nullptr, SymlinkPolicy::kFollow);
  INFO(info.status().ToString());
  REQUIRE(info.ok());
  CHECK(info->uuid == direct->uuid);
  VerifyOptions follow;
  follow.symlinks = SymlinkPolicy::kFollow;
  reports = VerifyRegions(link, follow);
  INFO(reports.status().ToString());
  REQUIRE(reports.ok());
  REQUIRE(reports->regions.size() == 1);
  CHECK(reports->regions[0].generation == 1);
  OpenOptions follow_open;
  follow_open.symlinks = SymlinkPolicy::kFollow;
  auto reader = Store::Open(link, OpenMode::kReadOnly, follow_open);
  INFO(reader.status().ToString());
  REQUIRE(reader.ok());
  CHECK(reader->info().uuid == direct->uuid);
  auto writer = Store::Open(link, OpenMode::kReadWrite, follow_open);
  INFO(writer.status().ToString());
  REQUIRE(writer.ok());
  // The lock is the target's: a writer by the real path is kept out.
  CHECK(Store::Open(path, OpenMode::kReadWrite).status().code() == StatusCode::kBusy);
  const std::vector<std::byte> written = testing::PatternBytes(64, 9);
  REQUIRE(writer->Write(0, written, Durability::kSync).ok());
  CHECK(testing::PreadFile(path, direct->data_offset, written.size()) == written);
  CHECK(std::filesystem::is_symlink(link));
}

TEST_CASE("VerifyRegions(path, {}) refuses a symbolic link and returns what ReadStoreInfo reads",
          "[store][open][symlink][verify]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateOptions create;
  create.checkpoints = {{"a", 4 * kKiB}, {"b", 70 * kKiB}};
  REQUIRE(Store::Create(path, 1 * kMiB, create).ok());
  const std::string link = dir.File("link.rgn");
  std::filesystem::create_symlink(path, link);

  // The default options, spelled `{}`: the one VerifyRegions, refusing.
  auto refused = VerifyRegions(link, {});
  REQUIRE_FALSE(refused.ok());
  CheckRefusedAsSymlink(refused.status(), link);
  // The message is true for whoever refused: it names no other call's options.
  CHECK_THAT(refused.status().message(), !Catch::Contains("OpenOptions"));
  auto info_refused = ReadStoreInfo(link);
  REQUIRE_FALSE(info_refused.ok());
  CHECK_THAT(info_refused.status().message(), !Catch::Contains("OpenOptions"));

  // One call returns the superblock and table ReadStoreInfo reads, and the
  // regions' reports beside them.
  const Result<StoreInfo> info = ReadStoreInfo(path);
  REQUIRE(info.ok());
  for (const std::string& target : {path, link}) {
    VerifyOptions options;
    if (target == link) options.symlinks = SymlinkPolicy::kFollow;
    auto verified = VerifyRegions(target, options);
    INFO(target << ": " << verified.status().ToString());
    REQUIRE(verified.ok());
    CHECK(verified->info.uuid == info->uuid);
    CHECK(verified->info.superblock_checksum == info->superblock_checksum);
    CHECK(verified->info.file_size == info->file_size);
    CHECK(verified->info.data_offset == info->data_offset);
    CHECK(verified->info.data_size == info->data_size);
    REQUIRE(verified->info.regions.size() == info->regions.size());
    REQUIRE(verified->regions.size() == info->regions.size());
    for (size_t r = 0; r < info->regions.size(); ++r) {
      CHECK(verified->info.regions[r].name == info->regions[r].name);
      CHECK(verified->info.regions[r].slots_offset == info->regions[r].slots_offset);
      CHECK(verified->regions[r].name == info->regions[r].name);
      CHECK(verified->regions[r].capacity == info->regions[r].capacity);
    }
  }
}

TEST_CASE("A dangling symbolic link and a symbolic link loop give errors saying which",
          "[store][open][symlink]") {
  TempDir dir;
  OpenOptions follow;
  follow.symlinks = SymlinkPolicy::kFollow;

  // Dangling: refused as a link; followed, the target is missing (and open
  // never creates it).
  const std::string dangling = dir.File("dangling.rgn");
  std::filesystem::create_symlink("missing.rgn", dangling);
  for (OpenMode mode : {OpenMode::kReadOnly, OpenMode::kReadWrite}) {
    auto refused = Store::Open(dangling, mode);
    REQUIRE_FALSE(refused.ok());
    CheckRefusedAsSymlink(refused.status(), dangling);
    auto followed = Store::Open(dangling, mode, follow);
    REQUIRE_FALSE(followed.ok());
    CHECK(followed.status().code() == StatusCode::kNotFound);
  }
  CHECK_FALSE(std::filesystem::exists(dir.File("missing.rgn")));

  // A loop at the last component: it is a symbolic link, so refused as one;
  // followed, the loop itself is reported (ELOOP).
  const std::string loop_a = dir.File("loop-a.rgn");
  std::filesystem::create_symlink("loop-b.rgn", loop_a);
  std::filesystem::create_symlink("loop-a.rgn", dir.File("loop-b.rgn"));
  auto refused = Store::Open(loop_a, OpenMode::kReadOnly);
  REQUIRE_FALSE(refused.ok());
  CheckRefusedAsSymlink(refused.status(), loop_a);
  auto followed = Store::Open(loop_a, OpenMode::kReadOnly, follow);
  REQUIRE_FALSE(followed.ok());
  CHECK(followed.status().code() == StatusCode::kIOError);
  CHECK(followed.status().sys_errno() == ELOOP);

  // A loop among the directories: O_NOFOLLOW does not apply there, and the
  // error is the loop, not "is a symbolic link".
  std::filesystem::create_directory_symlink("loop-dir", dir.File("loop-dir"));
  const std::string inside_loop = dir.File("loop-dir") + "/s.rgn";
  for (const OpenOptions& options : {OpenOptions{}, follow}) {
    auto looped = Store::Open(inside_loop, OpenMode::kReadOnly, options);
    REQUIRE_FALSE(looped.ok());
    INFO(looped.status().ToString());
    CHECK(looped.status().code() == StatusCode::kIOError);
    CHECK(looped.status().sys_errno() == ELOOP);
    CHECK_THAT(looped.status().ToString(), !Catch::Contains("is a symbolic link"));
  }
  auto info = ReadStoreInfo(inside_loop);
  REQUIRE_FALSE(info.ok());
  CHECK(info.status().sys_errno() == ELOOP);
}

TEST_CASE("A symbolic link among the directories of the path is followed by default",
          "[store][open][symlink]") {
  TempDir dir;
  std::filesystem::create_directory(dir.File("real"));
  MustCreate(dir.File("real") + "/s.rgn", 64 * kKiB);
  std::filesystem::create_directory_symlink("real", dir.File("via"));
  CHECK(MustOpen(dir.File("via") + "/s.rgn", OpenMode::kReadWrite).data_size() == 64 * kKiB);
  CHECK(ReadStoreInfo(dir.File("via") + "/s.rgn").ok());
}

TEST_CASE("Create with replace_existing refuses a symbolic link, leaving the link and its target",
          "[store][create][symlink]") {
  TempDir dir;
  const std::string target = dir.File("s.rgn");
  const std::string link = dir.File("link.rgn");
  const std::string dangling = dir.File("dangling.rgn");
  MustCreate(target, 64 * kKiB);
  const std::vector<std::byte> before = ReadWholeFile(target);
  std::filesystem::create_symlink("s.rgn", link);
  std::filesystem::create_symlink("missing.rgn", dangling);

  CreateOptions replace;
  replace.replace_existing = true;
  for (const std::string& path : {link, dangling}) {
    INFO(path);
    Status refused = Store::Create(path, 128 * kKiB, replace);
    INFO(refused.ToString());
    CHECK(refused.code() == StatusCode::kInvalidArgument);
    CHECK(refused.path() == path);
    CHECK_THAT(refused.message(), Catch::Contains("is a symbolic link"));
    CHECK_THAT(refused.message(), Catch::Contains("would replace the link, not the store"));
    // Without replace_existing a link is an existing file, like any other.
    CHECK(Store::Create(path, 128 * kKiB).code() == StatusCode::kAlreadyExists);
  }
  CHECK(std::filesystem::read_symlink(link) == "s.rgn");
  CHECK(std::filesystem::read_symlink(dangling) == "missing.rgn");
  CHECK(ReadWholeFile(target) == before);
  // No temp file left, and the dangling link's target was not created.
  CHECK(dir.List() == std::vector<std::string>{"dangling.rgn", "link.rgn", "s.rgn"});
}

}  // namespace
}  // namespace regionstore::testing
