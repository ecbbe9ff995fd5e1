// Whole files and ranges of them, for assertions: read, write, pread,
// pwrite in place, and deterministic pattern bytes. Each fails the test (a
// Catch REQUIRE) when the system call does.
#ifndef REGIONSTORE_TESTS_SUPPORT_FILES_H_
#define REGIONSTORE_TESTS_SUPPORT_FILES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace regionstore::testing {

// The whole file, read with pread in bulk (a byte-by-byte stream read costs
// seconds per store under the sanitizers).
std::vector<std::byte> ReadWholeFile(const std::string& path);
// Creates or truncates `path` and writes `bytes`.
void WriteWholeFile(const std::string& path, const std::vector<std::byte>& bytes);
// pread of `length` bytes at `offset`, through a new descriptor.
std::vector<std::byte> PreadFile(const std::string& path, uint64_t offset, uint64_t length);
// Writes `bytes` at `offset` of the file in place, without a sync.
void PwriteFile(const std::string& path, uint64_t offset, const std::vector<std::byte>& bytes);
// XORs one byte of the file in place (with 0x40), as a bad sector or a stray
// write would.
void FlipByte(const std::string& path, uint64_t offset);
// The name the library gives a named temp of `destination`
// (regionstore/temp_files.h): "." + its file name + ".tmp-" + the owner's
// pid and `boot` (8 hex digits each; this boot's if empty) and `random`.
std::string TempNameOf(const std::string& destination, uint64_t pid, const std::string& random,
                       const std::string& boot = "");
// Deterministic pseudo-random bytes, distinct for distinct seeds.
std::vector<std::byte> PatternBytes(uint64_t length, uint64_t seed);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_FILES_H_
