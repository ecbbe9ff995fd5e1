// Copy-on-write filesystems, for real: small btrfs and XFS images,
// loop-mounted inside the test's TempDir. On btrfs a store is created NOCOW
// so a full disk takes mapped writes; on XFS a reflink copy shares the
// store's blocks, and a writer's open refuses it until `regionctl unshare`.
// Needs root and a loop device; without them each case WARNs "skipped:".
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/posix_syscalls.h"
#include "regionstore/regionstore.h"
#include "support/files.h"
#include "support/loop_fs.h"
#include "support/process.h"
#include "support/skip.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH only when the tool is built.
#ifdef REGIONCTL_PATH
namespace regionstore::testing {
namespace {

// Sparse images. XFS at 32 MiB (with the fstests variables, see loop_fs.h);
// btrfs at 128 MiB, above the 114 MiB it needs for separate data and
// metadata block groups: on a small --mixed btrfs, where data and metadata
// share block groups, a full disk still made NOCOW mapped writes die of
// SIGBUS (measured: exit 135), and that is not the layout users get.
constexpr uint64_t kXfsImage = 64 * kMiB;
constexpr uint64_t kBtrfsImage = 128 * kMiB;
constexpr uint64_t kStoreData = 4 * kMiB;

uint32_t InodeFlagsOf(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  int flags = 0;
  const int rc = ::ioctl(fd, FS_IOC_GETFLAGS, &flags);
  ::close(fd);
  REQUIRE(rc == 0);
  return static_cast<uint32_t>(flags);
}

// Shared bytes of the file, through the POSIX Io's FIEMAP (filefrag's view).
uint64_t SharedBytes(const std::string& path) {
  auto file = Io::Default()->Open(path, OpenMode::kReadOnly, SymlinkPolicy::kRefuse);
  REQUIRE(file.ok());
  auto size = (*file)->Stat();
  REQUIRE(size.ok());
  auto shared = (*file)->SharedRanges(0, size->size);
  REQUIRE(shared.ok());
  uint64_t total = 0;
  for (const FileRange& range : *shared) total += range.length;
  return total;
}

std::vector<std::string> CreateWithWarnings(const std::string& path,
                                            std::vector<CheckpointSpec> checkpoints = {}) {
  std::vector<std::string> warnings;
  CreateOptions options;
  options.warnings = &warnings;
  options.checkpoints = std::move(checkpoints);
  const Status created = Store::Create(path, kStoreData, options);
  INFO(created.ToString());
  REQUIRE(created.ok());
  return warnings;
}

void WritePattern(const std::string& path, uint64_t seed) {
  auto store = Store::Open(path, OpenMode::kReadWrite);
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  REQUIRE(
      store->Write(0, testing::PatternBytes(kStoreData, seed), Durability::kPwriteFdatasync).ok());
}

// Writes the whole data area in each durability mode, then commits region
// "state" in each mode. Runs in a child: "" or what failed.
std::string WriteAndCommitEveryMode(const std::string& path) {
  auto store = Store::Open(path, OpenMode::kReadWrite);
  if (!store.ok()) return "open: " + store.status().ToString();
  uint64_t seed = 1;
  for (Durability mode :
       {Durability::kNone, Durability::kAsync, Durability::kSync, Durability::kPwriteFdatasync}) {
    // kNone dirties every page of the data area; the modes with a barrier
    // write 256 KiB each (on a full btrfs each barrier takes seconds while
    // it hunts for space).
    const uint64_t length = mode == Durability::kNone ? kStoreData : 256 * 1024;
    const std::vector<std::byte> bytes = testing::PatternBytes(length, seed++);
    if (Status s = store->Write(0, bytes, mode); !s.ok()) return "write: " + s.ToString();
    const std::vector<std::byte> payload = testing::PatternBytes(64 * 1024, seed++);
    if (auto c = store->Commit("state", payload, mode); !c.ok()) {
      return "commit: " + c.status().ToString();
    }
  }
  return "";
}

// Swallows FS_IOC_SETFLAGS (returns success without setting), as btrfs does
// on a file that already has data.
int IoctlIgnoringSetFlags(int fd, unsigned long request, void* arg) {
  if (request == FS_IOC_SETFLAGS) return 0;
  return internal::RealSyscalls().ioctl(fd, request, arg);
}

class SyscallsGuard {
 public:
  explicit SyscallsGuard(const internal::PosixSyscalls& table)
      : previous_(internal::InstallSyscalls(table)) {}
  ~SyscallsGuard() { internal::InstallSyscalls(previous_); }
  SyscallsGuard(const SyscallsGuard&) = delete;
  SyscallsGuard& operator=(const SyscallsGuard&) = delete;

 private:
  internal::PosixSyscalls previous_;
};

bool Contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const std::string& line : lines) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("On btrfs, Create sets FS_NOCOW_FL on the store and says what remains", "[cow]") {
  TempDir dir;
  auto fs = MountLoopFs(dir, FsKind::kBtrfs, kBtrfsImage);
  if (!fs) return;
  const std::string path = fs->File("s.rs");
  const std::vector<std::string> warnings = CreateWithWarnings(path);
  CHECK((InodeFlagsOf(path) & FS_NOCOW_FL) != 0);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("NOCOW") != std::string::npos);
  CHECK(warnings[0].find("no longer checksums") != std::string::npos);
  CHECK(warnings[0].find("snapshot") != std::string::npos);
  // inspect reports it, in text and JSON.
  const ProcessResult text = RunProcess(REGIONCTL_PATH, {"inspect", path});
  REQUIRE(text.exit_code == 0);
  CHECK(text.stdout_bytes.find("yes (FS_NOCOW_FL)") != std::string::npos);
  const ProcessResult json = RunProcess(REGIONCTL_PATH, {"inspect", "--json", path});
  REQUIRE(json.exit_code == 0);
  CHECK(json.stdout_bytes.find("\"nocow\": true") != std::string::npos);
  CHECK(json.stdout_bytes.find("\"shared_bytes\": 0") != std::string::npos);
}

TEST_CASE("On a --mixed btrfs, create refuses with a clear error and leaves nothing behind",
          "[cow]") {
  TempDir dir;
  // 32 MiB: MakeFilesystem makes it --mixed (support/loop_fs.h).
  auto mixed = MountLoopFs(dir, FsKind::kBtrfs, 32 * kMiB);
  if (!mixed) return;
  auto info = Io::Default()->StatFs(mixed->path());
  REQUIRE(info.ok());
  CHECK(info->mixed_block_groups);
  const std::string path = mixed->File("s.rs");
  const Status created = Store::Create(path, 1 * kMiB);
  CHECK(created.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(created.message(), Catch::Contains("--mixed") && Catch::Contains("SIGBUS") &&
                                    Catch::Contains("nothing created"));
  CHECK(std::filesystem::is_empty(mixed->path()));
  const ProcessResult tool = RunProcess(REGIONCTL_PATH, {"create", path, "--size", "1MiB"});
  CHECK(tool.exit_code == 2);
  CHECK_THAT(tool.stderr_bytes, Catch::Contains("--mixed"));
  CHECK(std::filesystem::is_empty(mixed->path()));

  // The ordinary layout (separate block groups) is told apart, and creates.
  TempDir other;
  auto separate = MountLoopFs(other, FsKind::kBtrfs, kBtrfsImage);
  REQUIRE(separate != nullptr);
  auto separate_info = Io::Default()->StatFs(separate->path());
  REQUIRE(separate_info.ok());
  CHECK_FALSE(separate_info->mixed_block_groups);
  CHECK(Store::Create(separate->File("s.rs"), 1 * kMiB).ok());
}

TEST_CASE("On btrfs, a SETFLAGS that succeeds without setting the flag keeps the SIGBUS warning",
          "[cow][fault]") {
  TempDir dir;
  auto fs = MountLoopFs(dir, FsKind::kBtrfs, kBtrfsImage);
  if (!fs) return;
  const std::string path = fs->File("s.rs");
  std::vector<std::string> warnings;
  {
    internal::PosixSyscalls table = internal::RealSyscalls();
    table.ioctl = IoctlIgnoringSetFlags;
    SyscallsGuard guard(table);
    warnings = CreateWithWarnings(path);
  }
  CHECK((InodeFlagsOf(path) & FS_NOCOW_FL) == 0);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("could not make the store NOCOW") != std::string::npos);
  CHECK(warnings[0].find("flag is not set") != std::string::npos);
  CHECK(warnings[0].find("SIGBUS") != std::string::npos);
}

TEST_CASE("On a full btrfs, writes and commits in every mode into a created store do not fault",
          "[cow][slow]") {
  TempDir dir;
  auto fs = MountLoopFs(dir, FsKind::kBtrfs, kBtrfsImage);
  if (!fs) return;
  const std::string path = fs->File("s.rs");
  CreateWithWarnings(path, {{.name = "state", .capacity = 64 * 1024}});
  // Overwrite once so that every block has been written through btrfs.
  WritePattern(path, 7);
  const uint64_t filled = testing::Fill(fs->File("fill"));
  INFO("filled " << filled << " bytes");
  CHECK(filled > 0);
  const testing::ChildOutcome child =
      testing::RunReportingChild([&] { return WriteAndCommitEveryMode(path); });
  const int code = child.ShellCode();
  INFO(child.message);
  CHECK(code == 0);  // 135 is SIGBUS
}

TEST_CASE("On XFS, a reflink copy makes a writer's open refuse both copies, naming unshare",
          "[cow]") {
  TempDir dir;
  auto fs = MountLoopFs(dir, FsKind::kXfs, kXfsImage);
  if (!fs) return;
  const std::string path = fs->File("s.rs");
  const std::string copy = fs->File("backup.rs");
  CreateWithWarnings(path);
  WritePattern(path, 3);
  const ProcessResult cp = RunProcess(testing::SystemTool("cp"), {"--reflink=always", path, copy});
  INFO(cp.stderr_bytes);
  REQUIRE(cp.exit_code == 0);
  REQUIRE(SharedBytes(path) > 0);
  for (const std::string& either : {path, copy}) {
    auto store = Store::Open(either, OpenMode::kReadWrite);
    REQUIRE_FALSE(store.ok());
    CHECK(store.status().code() == StatusCode::kSharedExtents);
    CHECK(store.status().message().find("regionctl unshare " + either) != std::string::npos);
    // Readers are not refused, and the opt-in opens with a warning.
    CHECK(Store::Open(either, OpenMode::kReadOnly).ok());
    std::vector<std::string> warnings;
    CHECK(Store::Open(either, OpenMode::kReadWrite,
                      {.warnings = &warnings, .allow_shared_extents = true})
              .ok());
    CHECK(Contains(warnings, "SIGBUS"));
  }
  // regionctl: write exits 1 and names the fix; inspect shows the shared bytes.
  const std::vector<std::byte> input(16, std::byte{1});
  const ProcessResult refused =
      RunProcess(REGIONCTL_PATH, {"write", path, "--offset", "0", "--durability", "none"},
                 {.stdin_bytes = std::span<const std::byte>(input)});
  CHECK(refused.exit_code == 1);
  CHECK(refused.stderr_bytes.find("regionctl unshare " + path) != std::string::npos);
  const ProcessResult inspect = RunProcess(REGIONCTL_PATH, {"inspect", "--json", path});
  REQUIRE(inspect.exit_code == 0);
  CHECK(inspect.stdout_bytes.find("\"shared_bytes\": 0") == std::string::npos);
  CHECK(inspect.stdout_bytes.find("\"nocow\": false") != std::string::npos);

  const std::vector<std::byte> before = testing::ReadWholeFile(path);
  const ProcessResult unshared = RunProcess(REGIONCTL_PATH, {"unshare", path});
  INFO(unshared.stderr_bytes);
  REQUIRE(unshared.exit_code == 0);
  CHECK(unshared.stdout_bytes.find("by fallocate") != std::string::npos);
  CHECK(SharedBytes(path) == 0);
  CHECK(SharedBytes(copy) == 0);  // the only other sharer
  CHECK(testing::ReadWholeFile(path) == before);
  CHECK(testing::ReadWholeFile(copy) == before);
  CHECK(Store::Open(path, OpenMode::kReadWrite).ok());
  CHECK(Store::Open(copy, OpenMode::kReadWrite).ok());
  // A second run has nothing to do.
  const ProcessResult again = RunProcess(REGIONCTL_PATH, {"unshare", "--json", path});
  REQUIRE(again.exit_code == 0);
  CHECK(again.stdout_bytes.find("\"method\": \"none\"") != std::string::npos);
}

TEST_CASE("On a full XFS, unshare fails cleanly with ENOSPC and leaves the store as it was",
          "[cow]") {
  TempDir dir;
  auto fs = MountLoopFs(dir, FsKind::kXfs, kXfsImage);
  if (!fs) return;
  const std::string path = fs->File("s.rs");
  CreateWithWarnings(path);
  WritePattern(path, 5);
  const ProcessResult cp =
      RunProcess(testing::SystemTool("cp"), {"--reflink=always", path, fs->File("backup.rs")});
  REQUIRE(cp.exit_code == 0);
  testing::Fill(fs->File("fill"));
  const uint64_t shared = SharedBytes(path);
  REQUIRE(shared > 0);
  const std::vector<std::byte> before = testing::ReadWholeFile(path);
  const ProcessResult unshared = RunProcess(REGIONCTL_PATH, {"unshare", path});
  CHECK(unshared.exit_code == 1);
  CHECK(unshared.stderr_bytes.find("no space") != std::string::npos);
  CHECK(unshared.stderr_bytes.find("FALLOC_FL_UNSHARE_RANGE") != std::string::npos);
  CHECK(testing::ReadWholeFile(path) == before);
  // Part of it may have been unshared before the space ran out; not all.
  CHECK(SharedBytes(path) <= shared);
  CHECK(SharedBytes(path) > 0);
  auto store = Store::Open(path, OpenMode::kReadWrite);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kSharedExtents);
}

TEST_CASE("On btrfs, a snapshot's shared blocks warn at a writer's open and unshare rewrites them",
          "[cow]") {
  TempDir dir;
  auto fs = MountLoopFs(dir, FsKind::kBtrfs, kBtrfsImage);
  if (!fs) return;
  const std::string btrfs = testing::SystemTool("btrfs");
  if (btrfs.empty()) {
    SKIP_CASE("the btrfs tool is missing");
    return;
  }
  REQUIRE(RunProcess(btrfs, {"-q", "subvolume", "create", fs->File("vol")}).exit_code == 0);
  const std::string path = fs->File("vol/s.rs");
  CreateWithWarnings(path);
  WritePattern(path, 9);
  const ProcessResult snap =
      RunProcess(btrfs, {"-q", "subvolume", "snapshot", fs->File("vol"), fs->File("snap")});
  INFO(snap.stderr_bytes);
  REQUIRE(snap.exit_code == 0);
  REQUIRE(SharedBytes(path) > 0);
  {
    std::vector<std::string> warnings;
    auto store = Store::Open(path, OpenMode::kReadWrite, {.warnings = &warnings});
    INFO(store.status().ToString());
    REQUIRE(store.ok());
    CHECK(Contains(warnings, "snapshot or a reflink copy (btrfs)"));
    CHECK(Contains(warnings, "regionctl unshare " + path));
  }
  // regionctl write takes it, and prints the warning.
  const std::vector<std::byte> input = testing::PatternBytes(4096, 9);  // the bytes already there
  const ProcessResult written =
      RunProcess(REGIONCTL_PATH, {"write", path, "--offset", "0", "--durability", "sync"},
                 {.stdin_bytes = std::span<const std::byte>(input)});
  INFO(written.stderr_bytes);
  CHECK(written.exit_code == 0);
  CHECK(written.stderr_bytes.find("regionctl: warning: '" + path + "' shares") !=
        std::string::npos);
  const std::vector<std::byte> before = testing::ReadWholeFile(path);
  auto report = UnshareStore(path);
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  CHECK(report->method == "rewrite");
  CHECK(report->shared_bytes > 0);
  CHECK(report->shared_bytes_after == 0);
  CHECK(SharedBytes(path) == 0);
  CHECK(testing::ReadWholeFile(path) == before);
  CHECK(testing::ReadWholeFile(fs->File("snap/s.rs")) == before);
  CHECK((InodeFlagsOf(path) & FS_NOCOW_FL) != 0);
  std::vector<std::string> warnings;
  CHECK(Store::Open(path, OpenMode::kReadWrite, {.warnings = &warnings}).ok());
  CHECK(warnings.empty());
}

}  // namespace
}  // namespace regionstore::testing
#endif  // REGIONCTL_PATH
