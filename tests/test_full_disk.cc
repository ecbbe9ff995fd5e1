// Full disks, for real: a small ext4 filesystem in an image file, loop-mounted
// inside the test's TempDir. A store that does not fit is refused at create
// and leaves nothing behind; a store that fits has every block reserved and
// written, so filling the filesystem afterwards cannot make a mapped write
// fault. Needs root and a loop device; without them each case says it was
// skipped (WARN) and passes.
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "format.h"
#include "regionstore/regionstore.h"
#include "support/files.h"
#include "support/loop_fs.h"
#include "support/process.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

constexpr uint64_t kImageSize = 32 * kMiB;
// What a store file adds to its data area: the data area starts here and its
// size is rounded up to kAreaAlignment (docs/FORMAT.md). A default store
// (protocol 2) has its 4 MiB batch journal before the data area.
constexpr uint64_t kStoreMetadata = kDefaultDataOffset;
constexpr uint64_t kAreaAlignment = format::kAreaAlignment;

// A descriptor closed at scope exit, so a failed REQUIRE leaks nothing (an
// open descriptor would also keep the filesystem from unmounting).
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Close(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// Bytes a non-privileged data write can still get, after committing the
// journal so that blocks freed by an unlink are counted again.
uint64_t FreeBytes(const std::string& mount_point) {
  Fd fd(::open(mount_point.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(fd.get() >= 0);
  REQUIRE(::syncfs(fd.get()) == 0);
  struct statvfs fs {};
  REQUIRE(::fstatvfs(fd.get(), &fs) == 0);
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

uint64_t BlockSize(const std::string& mount_point) {
  struct statvfs fs {};
  REQUIRE(::statvfs(mount_point.c_str(), &fs) == 0);
  return fs.f_frsize;
}

std::vector<std::string> ListDirectory(const std::string& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

struct FillResult {
  uint64_t bytes = 0;
  bool saw_enospc = false;
  int other_errno = 0;
};

// Writes `path` until the filesystem says ENOSPC even for one block, then
// fsyncs it (ext4 reserves delayed-allocation blocks at write time, so the
// fsync finds room for what was accepted).
FillResult FillFilesystem(const std::string& path, uint64_t block_size) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  REQUIRE(fd.get() >= 0);
  const std::vector<std::byte> chunk(1 * kMiB, std::byte{0x5a});
  FillResult result;
  uint64_t length = chunk.size();
  while (true) {
    const ssize_t n = ::pwrite(fd.get(), chunk.data(), length, static_cast<off_t>(result.bytes));
    if (n > 0) {
      result.bytes += static_cast<uint64_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == ENOSPC) {
      if (length == block_size) {
        result.saw_enospc = true;
        break;
      }
      length = block_size;  // squeeze the last blocks in one at a time
    } else {
      result.other_errno = n < 0 ? errno : EIO;
      break;
    }
  }
  REQUIRE(::fsync(fd.get()) == 0);
  return result;
}

// Deterministic bytes for data offset `offset` (a multiple of 8), cheap
// enough for tens of MiB in a debug build.
void FillPattern(uint64_t offset, std::span<std::byte> out, uint64_t seed) {
  for (size_t index = 0; index < out.size(); index += 8) {
    uint64_t word = (offset + index) / 8 + seed * 0x9e3779b97f4a7c15ULL;
    word = (word ^ (word >> 30)) * 0xbf58476d1ce4e5b9ULL;  // splitmix64 finaliser
    word = (word ^ (word >> 27)) * 0x94d049bb133111ebULL;
    word ^= word >> 31;
    std::memcpy(out.data() + index, &word, std::min<size_t>(8, out.size() - index));
  }
}

// Opens the store for writing and covers its whole data area with the
// pattern for `seed` by kNone (mapped) writes, then makes it all durable with
// one kSync flush. Runs in a child: returns "" or what failed.
std::string WriteWholeDataArea(const std::string& path, uint64_t seed, uint64_t chunk_size = kMiB) {
  auto store = Store::Open(path, OpenMode::kReadWrite);
  if (!store.ok()) return "open: " + store.status().ToString();
  std::vector<std::byte> chunk(chunk_size);
  const uint64_t size = store->data_size();
  for (uint64_t offset = 0; offset < size; offset += chunk.size()) {
    const auto piece = std::span(chunk).first(std::min<uint64_t>(chunk.size(), size - offset));
    FillPattern(offset, piece, seed);
    if (Status s = store->Write(offset, piece, Durability::kNone); !s.ok()) {
      return "write at " + std::to_string(offset) + ": " + s.ToString();
    }
  }
  if (Status s = store->Flush(0, size, Durability::kSync); !s.ok()) {
    return "flush: " + s.ToString();
  }
  return "";
}

// Offset of the first byte of the store's data area that differs from the
// pattern, or -1 if all match. Reads with pread, not through a mapping.
int64_t FirstMismatch(const std::string& path, uint64_t data_offset, uint64_t data_size,
                      uint64_t seed) {
  const std::vector<std::byte> actual = testing::PreadFile(path, data_offset, data_size);
  std::vector<std::byte> expected(data_size);
  FillPattern(0, expected, seed);
  const auto [first, ignored] = std::mismatch(actual.begin(), actual.end(), expected.begin());
  return first == actual.end() ? -1 : first - actual.begin();
}

struct ExtentReport {
  uint64_t mapped_bytes = 0;       // bytes of [0, size) covered by extents
  uint64_t unwritten_extents = 0;  // reserved but never written (fallocate only)
  uint64_t delalloc_extents = 0;   // no blocks chosen yet
};

// Walks the file's extents with FIEMAP (after syncing it).
ExtentReport Extents(const std::string& path, uint64_t size) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.get() >= 0);
  constexpr uint32_t kBatch = 64;
  std::vector<uint64_t> storage(
      (sizeof(struct fiemap) + kBatch * sizeof(struct fiemap_extent)) / sizeof(uint64_t) + 1);
  ExtentReport report;
  uint64_t start = 0;
  bool last = false;
  while (!last && start < size) {
    std::fill(storage.begin(), storage.end(), 0);
    auto* map = reinterpret_cast<struct fiemap*>(storage.data());
    map->fm_start = start;
    map->fm_length = size - start;
    map->fm_flags = FIEMAP_FLAG_SYNC;
    map->fm_extent_count = kBatch;
    REQUIRE(::ioctl(fd.get(), FS_IOC_FIEMAP, map) == 0);
    if (map->fm_mapped_extents == 0) break;
    for (uint32_t index = 0; index < map->fm_mapped_extents; ++index) {
      const struct fiemap_extent& extent = map->fm_extents[index];
      const uint64_t begin = std::max<uint64_t>(extent.fe_logical, start);
      const uint64_t end = std::min<uint64_t>(extent.fe_logical + extent.fe_length, size);
      if (end > begin) report.mapped_bytes += end - begin;
      if ((extent.fe_flags & FIEMAP_EXTENT_UNWRITTEN) != 0) ++report.unwritten_extents;
      if ((extent.fe_flags & FIEMAP_EXTENT_DELALLOC) != 0) ++report.delalloc_extents;
      if ((extent.fe_flags & FIEMAP_EXTENT_LAST) != 0) last = true;
      start = std::max<uint64_t>(start, extent.fe_logical + extent.fe_length);
    }
  }
  return report;
}

uint64_t AlignDown(uint64_t value, uint64_t alignment) { return value / alignment * alignment; }

// The largest data area whose store leaves `spare` bytes of `free_bytes`.
uint64_t DataSizeLeaving(uint64_t free_bytes, uint64_t spare) {
  REQUIRE(free_bytes > kStoreMetadata + spare + kAreaAlignment);
  return AlignDown(free_bytes - kStoreMetadata - spare, kAreaAlignment);
}

// The filesystems the cases run on (support/loop_fs.h), each about the
// smallest its mkfs accepts: ext4 and XFS (reflink on, the fstests variables
// set) in 32 MiB, btrfs in 128 MiB (it needs about 110 MiB, and is then not
// made --mixed).
std::unique_ptr<LoopFs> MountSmall(const TempDir& dir, FsKind fs) {
  return MountLoopFs(dir, fs, fs == FsKind::kBtrfs ? 128 * kMiB : kImageSize);
}

TEST_CASE("A store that does not fit fails at create with kNoSpace and leaves nothing behind",
          "[fulldisk]") {
  const FsKind fs = GENERATE(FsKind::kExt4, FsKind::kXfs, FsKind::kBtrfs);
  INFO("filesystem: " << FsKindName(fs));
  TempDir dir;
  std::unique_ptr<LoopFs> mount = MountSmall(dir, fs);
  if (mount == nullptr) return;

  const std::vector<std::string> entries_before = ListDirectory(mount->path());
  const uint64_t free_before = FreeBytes(mount->path());
  const uint64_t block_size = BlockSize(mount->path());
  INFO("free bytes before: " << free_before);
  // Larger than the free space by far less than the filesystem's size, so
  // fallocate really starts and has to give back what it got.
  const uint64_t data_size = AlignDown(free_before, kAreaAlignment) + 4 * kMiB;
  const std::string path = mount->File("too-big.rgn");

  const Status status = Store::Create(path, data_size);
  INFO(status.ToString());
  CHECK(status.code() == StatusCode::kNoSpace);
  CHECK(status.sys_errno() == ENOSPC);
  CHECK(status.operation().rfind("create: fallocate", 0) == 0);
  CHECK(status.path() == path);
  // Nothing new: neither the store nor its temp file (.too-big.rgn.tmp-*).
  CHECK(ListDirectory(mount->path()) == entries_before);
  // Whatever fallocate reserved before it ran out went back with the temp file.
  const uint64_t free_after = FreeBytes(mount->path());
  INFO("free bytes after: " << free_after);
  CHECK(free_after + 4 * block_size >= free_before);
  CHECK(free_after <= free_before + 4 * block_size);

  // The filesystem is still usable: a store that fits can be made there.
  MustCreate(path, 1 * kMiB);
  CHECK(ListDirectory(mount->path()).size() == entries_before.size() + 1);
  mount->Unmount();
}

// The case below, on `fs`.
void CheckFitsNeverFaults(FsKind fs) {
  INFO("filesystem: " << FsKindName(fs));
  TempDir dir;
  std::unique_ptr<LoopFs> mount = MountSmall(dir, fs);
  if (mount == nullptr) return;
  const std::vector<std::string> entries_before = ListDirectory(mount->path());
  const uint64_t block_size = BlockSize(mount->path());

  // Most of the free space, leaving a little for the filler file.
  const uint64_t data_size = DataSizeLeaving(FreeBytes(mount->path()), 2 * kMiB);
  const std::string path = mount->File("s.rgn");
  MustCreate(path, data_size);
  // A writer's first open creates the store's sidecar PATH.shm (72 KiB,
  // allocated); on a full filesystem that open fails with kNoSpace (a
  // case below). Made while there is room.
  MustOpen(path, OpenMode::kReadWrite);
  const uint64_t file_size = data_size + kStoreMetadata;

  // Reserved: every byte has a block, no hole anywhere.
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  REQUIRE(static_cast<uint64_t>(st.st_size) == file_size);
  CHECK(static_cast<uint64_t>(st.st_blocks) * 512 >= file_size);
  {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    REQUIRE(fd.get() >= 0);
    CHECK(::lseek(fd.get(), 0, SEEK_HOLE) == static_cast<off_t>(file_size));
  }
  // Written: no extent is still "unwritten" (the zero-fill converted them)
  // or waiting for delayed allocation.
  const ExtentReport extents = Extents(path, file_size);
  CHECK(extents.mapped_bytes == file_size);
  CHECK(extents.unwritten_extents == 0);
  CHECK(extents.delalloc_extents == 0);

  // Fill the rest of the filesystem, and make sure it really is full.
  const FillResult fill = FillFilesystem(mount->File("fill"), block_size);
  INFO("filler bytes: " << fill.bytes << ", other errno: " << fill.other_errno);
  REQUIRE(fill.other_errno == 0);
  REQUIRE(fill.saw_enospc);
  REQUIRE(fill.bytes >= 1 * kMiB);
  CHECK(FreeBytes(mount->path()) < 16 * block_size);

  // Every page of the data area, written through the mapping (writes below
  // 256 KiB), then one msync: a page without a reserved block would SIGBUS
  // the child here.
  constexpr uint64_t kSeed = 41;
  const ChildOutcome child =
      RunReportingChild([&] { return WriteWholeDataArea(path, kSeed, 64 * kKiB); });
  INFO("child: " << child.message << (child.term_signal != 0 ? " killed by " : "")
                 << (child.term_signal != 0 ? strsignal(child.term_signal) : ""));
  CHECK(child.term_signal == 0);
  REQUIRE(child.exited);
  REQUIRE(child.exit_code == 0);
  CHECK(child.message.empty());

  // The bytes are in the file (pread, no mapping), the superblock is intact,
  // and nothing else appeared.
  CHECK(FirstMismatch(path, kStoreMetadata, data_size, kSeed) == -1);
  const Result<StoreInfo> info = ReadStoreInfo(path);
  INFO(info.status().ToString());
  REQUIRE(info.ok());
  CHECK(info->data_size == data_size);
  CHECK(info->data_offset == kStoreMetadata);
  // ext4 has lost+found, XFS and btrfs nothing.
  std::vector<std::string> expected = entries_before;
  expected.insert(expected.end(), {"fill", "s.rgn", "s.rgn.shm"});
  std::sort(expected.begin(), expected.end());
  CHECK(ListDirectory(mount->path()) == expected);
  mount->Unmount();
}

TEST_CASE(
    "A store that fits is fully reserved and written, so filling the filesystem afterwards "
    "never makes a mapped write fault",
    "[fulldisk][long]") {
  CheckFitsNeverFaults(GENERATE(FsKind::kExt4, FsKind::kXfs, FsKind::kBtrfs));
}

// On btrfs this holds only because Create makes the store NOCOW
// (FS_NOCOW_FL) before it allocates a block: copy-on-write blocks would need
// new space at the first write, and the full filesystem has none
// (tests/test_cow_filesystems.cc shows the SIGBUS without the flag).

TEST_CASE("A store with holes does fault on a full filesystem, so the check above has teeth",
          "[fulldisk]") {
  TempDir dir;
  std::unique_ptr<LoopFs> mount = MountSmall(dir, FsKind::kExt4);
  if (mount == nullptr) return;
  const uint64_t block_size = BlockSize(mount->path());

  const uint64_t data_size = DataSizeLeaving(FreeBytes(mount->path()), 2 * kMiB);
  const std::string path = mount->File("s.rgn");
  MustCreate(path, data_size);
  MustOpen(path, OpenMode::kReadWrite);  // its sidecar, while there is room
  // What a store made without reserving would look like: the data area is a
  // hole (same size, so Open still accepts it).
  {
    Fd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    REQUIRE(fd.get() >= 0);
    REQUIRE(::fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        static_cast<off_t>(kStoreMetadata), static_cast<off_t>(data_size)) == 0);
    REQUIRE(::fsync(fd.get()) == 0);
  }
  const FillResult fill = FillFilesystem(mount->File("fill"), block_size);
  INFO("filler bytes: " << fill.bytes);
  REQUIRE(fill.saw_enospc);
  REQUIRE(fill.bytes > data_size);  // the filler took the punched blocks

  // Writes of 256 KiB and more go by pwrite (Store::Write), which reports
  // the full disk: kNoSpace, no signal.
  const ChildOutcome by_pwrite =
      RunReportingChild([&] { return WriteWholeDataArea(path, 42, kMiB); });
  INFO("by pwrite: exit " << by_pwrite.exit_code << ", signal " << by_pwrite.term_signal << ": "
                          << by_pwrite.message);
  CHECK(by_pwrite.term_signal == 0);
  CHECK_THAT(by_pwrite.message, Catch::Contains("no space"));
  // Smaller ones store through the mapping, and a store into a hole that
  // cannot be allocated raises SIGBUS.
  const ChildOutcome child =
      RunReportingChild([&] { return WriteWholeDataArea(path, 42, 64 * kKiB); });
  INFO("child: exit " << child.exit_code << ", signal " << child.term_signal << ": "
                      << child.message);
  CHECK(child.term_signal == SIGBUS);
  mount->Unmount();
}

TEST_CASE(
    "On a full filesystem a writer's first open fails with kNoSpace naming the sidecar, "
    "and changes nothing",
    "[fulldisk]") {
  TempDir dir;
  std::unique_ptr<LoopFs> mount = MountSmall(dir, FsKind::kExt4);
  if (mount == nullptr) return;
  const std::string path = mount->File("s.rgn");
  MustCreateWithRegions(path, 1 * kMiB, {{"a", 100}});
  const std::vector<std::byte> before = ReadWholeFile(path);
  const FillResult fill = FillFilesystem(mount->File("fill"), BlockSize(mount->path()));
  REQUIRE(fill.saw_enospc);

  auto writer = Store::Open(path, OpenMode::kReadWrite);
  REQUIRE_FALSE(writer.ok());
  CHECK(writer.status().code() == StatusCode::kNoSpace);
  CHECK(writer.status().sys_errno() == ENOSPC);
  CHECK(writer.status().path() == path + ".shm");
  CHECK_THAT(writer.status().message(), Catch::Contains("sidecar"));
  CHECK(ReadWholeFile(path) == before);
  {
    // A reader needs no sidecar of its own.
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    CHECK(reader.Report("a")->has_commit == false);
  }
  {
    // With room again, the next writer's open takes the empty file it left.
    REQUIRE(::unlink(mount->File("fill").c_str()) == 0);
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("a", PatternBytes(100, 1), Durability::kSync).ok());
    CHECK(MustLoad(store, "a") == PatternBytes(100, 1));
  }
  mount->Unmount();
}

// tests/CMakeLists.txt defines REGIONCTL_PATH only when the tool is built.
#ifdef REGIONCTL_PATH

// A failed regionctl run: exit 1 (kFailure), nothing on stdout, exactly one
// stderr line, "regionctl: ..." naming the no-space error.
void RequireNoSpaceFailure(const ProcessResult& result) {
  INFO("stdout: " << result.stdout_bytes);
  INFO("stderr: " << result.stderr_bytes);
  REQUIRE(result.term_signal == 0);
  CHECK(result.exit_code == 1);
  CHECK(result.stdout_bytes.empty());
  REQUIRE(result.StderrLines().size() == 1);
  CHECK(result.stderr_bytes.back() == '\n');
  CHECK(result.stderr_bytes.rfind("regionctl: ", 0) == 0);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("no space"));
}

TEST_CASE("regionctl create on a filesystem without room exits 1 with one no-space line",
          "[fulldisk][regionctl]") {
  TempDir dir;
  std::unique_ptr<LoopFs> mount = MountSmall(dir, FsKind::kExt4);
  if (mount == nullptr) return;
  const std::vector<std::string> entries_before = ListDirectory(mount->path());
  const std::string path = mount->File("s.rgn");

  // Too large for the free space.
  const uint64_t too_large = AlignDown(FreeBytes(mount->path()), kAreaAlignment) + 4 * kMiB;
  RequireNoSpaceFailure(
      RunProcess(REGIONCTL_PATH, {"create", path, "--size", std::to_string(too_large)}));
  CHECK(ListDirectory(mount->path()) == entries_before);

  // A small store on a filesystem that is completely full.
  const FillResult fill = FillFilesystem(mount->File("fill"), BlockSize(mount->path()));
  REQUIRE(fill.saw_enospc);
  RequireNoSpaceFailure(RunProcess(REGIONCTL_PATH, {"create", path, "--size", "64KiB"}));
  std::vector<std::string> expected = entries_before;
  expected.emplace_back("fill");
  std::sort(expected.begin(), expected.end());
  CHECK(ListDirectory(mount->path()) == expected);
  mount->Unmount();
}

#endif  // REGIONCTL_PATH

}  // namespace
}  // namespace regionstore::testing
