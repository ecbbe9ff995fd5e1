#include "support/temp_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

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

TempDir::TempDir() {
  // REGIONSTORE_TEST_TMPDIR is a folder under the build tree: a real disk
  // filesystem, where fsync and fallocate behave as they do for users.
  std::filesystem::path base = REGIONSTORE_TEST_TMPDIR;
  std::filesystem::create_directories(base);
  std::string pattern = (base / "t-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
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

std::vector<std::byte> ReadWholeFile(const std::string& path) {
  // pread in bulk: a byte-by-byte stream read costs seconds per store under
  // the sanitizers.
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  INFO(path << ": " << error.message());
  REQUIRE(!error);
  return PreadFile(path, 0, size);
}

void WriteWholeFile(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  REQUIRE(out.good());
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::vector<std::byte> PreadFile(const std::string& path, uint64_t offset, uint64_t length) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  std::vector<std::byte> bytes(length);
  uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, bytes.data() + done, length - done,
                              static_cast<off_t>(offset + done));
    REQUIRE(n > 0);
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  return bytes;
}

std::vector<std::byte> PatternBytes(uint64_t length, uint64_t seed) {
  std::mt19937_64 generator(seed * 0x9e3779b97f4a7c15ULL + 1);
  std::vector<std::byte> bytes(length);
  for (auto& b : bytes) b = static_cast<std::byte>(generator() & 0xff);
  return bytes;
}

}  // namespace regionstore::testing
