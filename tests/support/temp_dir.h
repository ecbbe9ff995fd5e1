// A scratch directory per test, on a real filesystem (under the build tree,
// not /tmp, which may be tmpfs), removed with everything in it at scope exit.
#ifndef REGIONSTORE_TESTS_SUPPORT_TEMP_DIR_H_
#define REGIONSTORE_TESTS_SUPPORT_TEMP_DIR_H_

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
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

// Whole-file helpers for assertions. They abort the test (via Catch REQUIRE)
// on failure.
std::vector<std::byte> ReadWholeFile(const std::string& path);
void WriteWholeFile(const std::string& path, const std::vector<std::byte>& bytes);
// pread of `length` bytes at `offset`, through a new descriptor.
std::vector<std::byte> PreadFile(const std::string& path, uint64_t offset, uint64_t length);
// Deterministic pseudo-random bytes, distinct for distinct seeds.
std::vector<std::byte> PatternBytes(uint64_t length, uint64_t seed);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_TEMP_DIR_H_
