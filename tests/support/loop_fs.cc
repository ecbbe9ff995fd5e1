#include "support/loop_fs.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "support/process.h"
#include "support/skip.h"

namespace regionstore::testing {

const char* FsKindName(FsKind kind) {
  switch (kind) {
    case FsKind::kExt4:
      return "ext4";
    case FsKind::kXfs:
      return "xfs";
    case FsKind::kBtrfs:
      return "btrfs";
  }
  return "?";
}

namespace {

// statfs's f_type for `kind`.
long FsMagic(FsKind kind) {
  switch (kind) {
    case FsKind::kExt4:
      return EXT4_SUPER_MAGIC;
    case FsKind::kXfs:
      return XFS_SUPER_MAGIC;
    case FsKind::kBtrfs:
      return BTRFS_SUPER_MAGIC;
  }
  return 0;
}

}  // namespace

std::string SystemTool(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
    const std::string path = dir + name;
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return {};
}

std::string MakeFilesystem(FsKind kind, const std::string& image, uint64_t size) {
  const std::string mkfs = SystemTool(std::string("mkfs.") + FsKindName(kind));
  if (mkfs.empty()) return std::string("mkfs.") + FsKindName(kind) + " is missing";
  std::vector<std::string> args;
  switch (kind) {
    case FsKind::kExt4:
      args = {"-q", "-F", "-b", "4096", "-m", "0", image};
      break;
    case FsKind::kXfs:
      // mkfs.xfs refuses filesystems under 300 MB unless it believes it runs
      // under fstests; the variables are inherited by the child.
      ::setenv("TEST_DIR", "1", 0);
      ::setenv("TEST_DEV", "1", 0);
      ::setenv("QA_CHECK_FS", "1", 0);
      args = {"-q", "-f", "-m", "reflink=1", image};
      break;
    case FsKind::kBtrfs:
      args = {"-q", "-f"};
      if (size < 114 * 1024 * 1024) args.emplace_back("--mixed");
      args.push_back(image);
      break;
  }
  const ProcessResult made = RunProcess(mkfs, args);
  if (made.exit_code != 0) {
    return mkfs + " failed (exit " + std::to_string(made.exit_code) + "): " + made.stderr_bytes;
  }
  return {};
}

LoopFs::~LoopFs() {
  if (!mounted_) return;
  if (::umount2(mount_point_.c_str(), 0) != 0) ::umount2(mount_point_.c_str(), MNT_DETACH);
}

void LoopFs::Unmount() {
  REQUIRE(mounted_);
  const ProcessResult result = RunProcess(SystemTool("umount"), {mount_point_});
  INFO("umount stderr: " << result.stderr_bytes);
  CHECK(result.exit_code == 0);
  if (result.exit_code == 0) mounted_ = false;
}

std::unique_ptr<LoopFs> MountLoopFs(const TempDir& dir, FsKind kind, uint64_t size) {
  const std::string name = FsKindName(kind);
  if (::geteuid() != 0) {
    SKIP_CASE("loop-mounting a " << name << " image needs root");
    return nullptr;
  }
  if (SystemTool("mount").empty() || SystemTool("umount").empty()) {
    SKIP_CASE("mount or umount is missing");
    return nullptr;
  }
  // The image is a sparse file in the test's own directory: failing to make
  // it is a failure of the test, not a reason to skip.
  const std::string image = dir.File(name + ".img");
  {
    const int fd = ::open(image.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    const bool sized = ::ftruncate(fd, static_cast<off_t>(size)) == 0;
    ::close(fd);
    REQUIRE(sized);
  }
  if (std::string why = MakeFilesystem(kind, image, size); !why.empty()) {
    SKIP_CASE(why);
    return nullptr;
  }
  auto fs = std::make_unique<LoopFs>(kind, dir.File(name));
  REQUIRE(std::filesystem::create_directory(fs->path()));
  // Once per process is enough; a second unshare only makes another one.
  static const bool private_namespace =
      ::unshare(CLONE_NEWNS) == 0 &&
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
  if (!private_namespace) {
    SKIP_CASE("cannot make a private mount namespace: " << std::strerror(errno));
    return nullptr;
  }
  const ProcessResult mounted = RunProcess(
      SystemTool("mount"), {"-o", "loop", "-t", name, dir.File(name + ".img"), fs->path()});
  if (mounted.exit_code != 0) {
    ::umount2(fs->path().c_str(), MNT_DETACH);
    SKIP_CASE("cannot loop-mount a " << name << " image here (exit " << mounted.exit_code
                                     << "): " << mounted.stderr_bytes);
    return nullptr;
  }
  fs->mounted_ = true;
  struct stat parent {};
  struct stat top {};
  REQUIRE(::stat(dir.path().c_str(), &parent) == 0);
  REQUIRE(::stat(fs->path().c_str(), &top) == 0);
  REQUIRE(parent.st_dev != top.st_dev);
  // And that it is the filesystem asked for.
  struct statfs mounted_fs {};
  REQUIRE(::statfs(fs->path().c_str(), &mounted_fs) == 0);
  REQUIRE(mounted_fs.f_type == FsMagic(kind));
  return fs;
}

uint64_t Fill(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  // fallocate, not write: on a nearly full btrfs every refused write first
  // makes the filesystem flush and search for space (seconds each). Start at
  // what statvfs says is free and halve on ENOSPC down to one block.
  struct statvfs vfs {};
  REQUIRE(::fstatvfs(fd, &vfs) == 0);
  uint64_t length = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  uint64_t filled = 0;
  while (length >= 4096) {
    const int rc = ::posix_fallocate(fd, static_cast<off_t>(filled), static_cast<off_t>(length));
    if (rc == 0) {
      filled += length;
    } else if (rc == ENOSPC || rc == EDQUOT) {
      length /= 2;
    } else if (rc != EINTR) {
      break;
    }
  }
  static_cast<void>(::fsync(fd));
  ::close(fd);
  return filled;
}

}  // namespace regionstore::testing
