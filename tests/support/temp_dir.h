// A scratch directory per test, on a real filesystem (under the build tree,
// not /tmp, which may be tmpfs), removed with everything in it at scope exit.
//
// Environment, read at each TempDir's construction:
//  - REGIONSTORE_TEST_TMPDIR, when set and not empty, is the base the
//    directories are made in, instead of the build tree's tests/scratch.
//  - REGIONSTORE_TEST_FS (ext4, xfs, btrfs or tmpfs), when set, says which
//    filesystem that base must be the mount point of. The filesystem matrix
//    (tests/CMakeLists.txt, scripts/test-filesystems.sh) sets both; main()
//    checks once before any case runs (ScratchFilesystemProblem) and each
//    TempDir checks again, so a mount that failed never lets a case run on
//    the build tree's filesystem while ctest calls it "xfs: ...".
#ifndef REGIONSTORE_TESTS_SUPPORT_TEMP_DIR_H_
#define REGIONSTORE_TESTS_SUPPORT_TEMP_DIR_H_

#include <sys/types.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

// Catch prints both sides of a failed comparison. For byte buffers of a
// megabyte its default formatting takes minutes; print a summary instead:
// the size, the first bytes and a checksum.
namespace Catch {
template <>
struct StringMaker<std::vector<std::byte>> {
  static std::string convert(const std::vector<std::byte>& bytes);
};
}  // namespace Catch

namespace regionstore::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // path() / name, as a string.
  std::string File(const std::string& name) const;
  // Names of the entries in the directory, sorted.
  std::vector<std::string> List() const;

 private:
  std::filesystem::path path_;
};

// A scratch directory other users can reach, for cases whose children drop
// to unprivileged users: a TempDir when every directory above it lets
// others through, else one made in /var/tmp (a disk filesystem on Debian:
// a checkout under a 0700 directory, as `mktemp -d` makes, blocks them),
// removed at scope exit. Its own mode is `mode`.
class PassableDir {
 public:
  explicit PassableDir(mode_t mode);
  ~PassableDir();
  PassableDir(const PassableDir&) = delete;
  PassableDir& operator=(const PassableDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  TempDir dir_;
  std::string outside_;  // the /var/tmp one, if made
  std::filesystem::path path_;
};

// The base TempDir makes its directories in (see the environment above).
std::filesystem::path ScratchBase();
// "" when REGIONSTORE_TEST_FS is unset, or when ScratchBase() is a mount
// point (its device differs from its parent's) of that filesystem type
// (statfs f_type); otherwise what is wrong, in a sentence.
std::string ScratchFilesystemProblem();
// When ScratchFilesystemProblem() is not "": the reason the matrix's setup
// left in ScratchBase()/../skipped when this machine cannot mount the
// filesystem (not root, no mkfs, no loop device), or "" when it left none
// (then the mount should be there, and its absence is a failure).
std::string ScratchFilesystemSkipReason();

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_TEMP_DIR_H_
