// Small filesystems in sparse image files, loop-mounted inside a test's
// TempDir: ext4, XFS (reflink on, as mkfs.xfs makes it) and btrfs. For tests
// of what a real filesystem does on a full disk or with shared blocks. Needs
// root and a loop device; without them MountLoopFs skips (SKIP_CASE) and
// returns nullptr.
#ifndef REGIONSTORE_TESTS_SUPPORT_LOOP_FS_H_
#define REGIONSTORE_TESTS_SUPPORT_LOOP_FS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "support/temp_dir.h"

namespace regionstore::testing {

enum class FsKind { kExt4, kXfs, kBtrfs };

const char* FsKindName(FsKind kind);

// mkfs of `kind` on the existing image file `image` of `size` bytes.
// XFS below 300 MB needs the fstests variables, which mkfs.xfs honours;
// btrfs below 114 MiB is made --mixed. Returns "" or why it could not.
std::string MakeFilesystem(FsKind kind, const std::string& image, uint64_t size);

// A mounted filesystem; the destructor unmounts (lazily if busy), also after
// a failed assertion.
class LoopFs {
 public:
  LoopFs(FsKind kind, std::string mount_point)
      : kind_(kind), mount_point_(std::move(mount_point)) {}
  ~LoopFs();
  LoopFs(const LoopFs&) = delete;
  LoopFs& operator=(const LoopFs&) = delete;

  FsKind kind() const { return kind_; }
  const std::string& path() const { return mount_point_; }
  std::string File(const std::string& name) const { return mount_point_ + "/" + name; }
  // Unmounts with the umount tool and CHECKs that it worked.
  void Unmount();

 private:
  friend std::unique_ptr<LoopFs> MountLoopFs(const TempDir&, FsKind, uint64_t);
  FsKind kind_;
  std::string mount_point_;
  bool mounted_ = false;
};

// Makes `kind` in `dir`/<kind>.img and mounts it on `dir`/<kind>, in a
// private mount namespace of this process (a mount dies with the process).
// nullptr after a SKIP_CASE (support/skip.h) when the environment cannot.
std::unique_ptr<LoopFs> MountLoopFs(const TempDir& dir, FsKind kind, uint64_t size);

// Fills the filesystem holding `path` with a new file at `path`
// (posix_fallocate, halving the request on ENOSPC down to 4 KiB), then
// fsyncs it. Returns the bytes allocated.
uint64_t Fill(const std::string& path);

// The path of a system tool: /usr/sbin/x, /sbin/x, /usr/bin/x or /bin/x.
std::string SystemTool(const std::string& name);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_LOOP_FS_H_
