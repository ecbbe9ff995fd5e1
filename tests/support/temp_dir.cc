#include "support/temp_dir.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

std::string Catch::StringMaker<std::vector<std::byte>>::convert(
    const std::vector<std::byte>& bytes) {
  // FNV-1a: enough to tell two buffers apart in a failure message.
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (std::byte b : bytes) hash = (hash ^ std::to_integer<uint64_t>(b)) * 0x100000001b3ULL;
  // Appends, not "<" + std::string: GCC 12 warns falsely (-Wrestrict) at -O2.
  std::string text = "<";
  text += std::to_string(bytes.size());
  text += " bytes:";
  char hex[20];
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 16); ++i) {
    std::snprintf(hex, sizeof hex, " %02x", std::to_integer<unsigned>(bytes[i]));
    text += hex;
  }
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  text += bytes.size() > 16 ? " ..., fnv1a " : ", fnv1a ";
  text += hex;
  text += ">";
  return text;
}

namespace regionstore::testing {

namespace {

const char* NonEmptyEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// statfs f_type of each filesystem REGIONSTORE_TEST_FS may name; 0 if none.
uint32_t ExpectedMagic(const std::string& name) {
  if (name == "ext4") return EXT4_SUPER_MAGIC;
  if (name == "xfs") return XFS_SUPER_MAGIC;
  if (name == "btrfs") return BTRFS_SUPER_MAGIC;
  if (name == "tmpfs") return TMPFS_MAGIC;
  return 0;
}

}  // namespace

std::filesystem::path ScratchBase() {
  // The default is a folder under the build tree: a real disk filesystem,
  // where fsync and fallocate behave as they do for users.
  if (const char* base = NonEmptyEnv("REGIONSTORE_TEST_TMPDIR")) return base;
  return REGIONSTORE_TEST_TMPDIR;
}

std::string ScratchFilesystemProblem() {
  const char* fs_name = NonEmptyEnv("REGIONSTORE_TEST_FS");
  if (fs_name == nullptr) return "";
  const std::filesystem::path base = ScratchBase();
  const uint32_t expected = ExpectedMagic(fs_name);
  std::ostringstream problem;
  if (expected == 0) {
    problem << "REGIONSTORE_TEST_FS=" << fs_name << " is none of ext4, xfs, btrfs, tmpfs";
    return problem.str();
  }
  // The device differs from the parent's only on a mount point: a mount
  // that failed leaves an empty directory of the parent's filesystem, which
  // may well be ext4 itself.
  struct stat top {};
  struct stat parent {};
  if (::stat(base.c_str(), &top) != 0 || ::stat(base.parent_path().c_str(), &parent) != 0) {
    problem << base.string() << " (REGIONSTORE_TEST_TMPDIR) is missing: " << std::strerror(errno);
    return problem.str();
  }
  if (top.st_dev == parent.st_dev) {
    problem << base.string() << " is not a mount point, so not the " << fs_name
            << " filesystem REGIONSTORE_TEST_FS asks for";
    return problem.str();
  }
  struct statfs fs {};
  if (::statfs(base.c_str(), &fs) != 0) {
    problem << "statfs " << base.string() << ": " << std::strerror(errno);
    return problem.str();
  }
  const auto actual = static_cast<uint32_t>(fs.f_type);
  if (actual != expected) {
    problem << base.string() << " is a filesystem of type 0x" << std::hex << actual << ", not the "
            << fs_name << " (0x" << expected << ") REGIONSTORE_TEST_FS asks for";
    return problem.str();
  }
  return "";
}

std::string ScratchFilesystemSkipReason() {
  std::ifstream in(ScratchBase().parent_path() / "skipped");
  std::string reason;
  std::getline(in, reason);
  return reason.rfind("skipped: ", 0) == 0 ? reason : "";
}

TempDir::TempDir() {
  const std::filesystem::path base = ScratchBase();
  {
    const std::string problem = ScratchFilesystemProblem();
    INFO(problem);
    REQUIRE(problem.empty());
  }
  std::filesystem::create_directories(base);
  std::string pattern = (base / "t-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

PassableDir::PassableDir(mode_t mode) : path_(dir_.path()) {
  for (std::filesystem::path up = path_.parent_path(); !up.empty(); up = up.parent_path()) {
    struct stat st {};
    if (::stat(up.c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) {
      std::string pattern = "/var/tmp/regionstore-passable-XXXXXX";
      REQUIRE(::mkdtemp(pattern.data()) != nullptr);
      outside_ = pattern;
      path_ = outside_;
      break;
    }
    if (up == up.root_path()) break;
  }
  REQUIRE(::chmod(path_.c_str(), mode) == 0);
}

PassableDir::~PassableDir() {
  std::error_code ignored;
  if (!outside_.empty()) std::filesystem::remove_all(outside_, ignored);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ignored);
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::File(const std::string& name) const { return (path_ / name).string(); }

std::vector<std::string> TempDir::List() const {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace regionstore::testing
