// The store fuzzer's input format: a compact description of a store file.
//
// A store is at least 1 MiB (the data area starts there) and mostly zeros, so
// the fuzzer does not mutate whole files. It mutates an image:
//
//   u8  flags       what the target does with the file (ImageFlags)
//   u32 file size   bytes, little-endian; clamped to kMaxImageFileSize
//   then records to the end of the input, each
//     u32 offset    bytes into the file, little-endian
//     u16 length    bytes that follow
//     u8  bytes[length]   written at offset (clipped at the file's end; a
//                         record cut short by the end of the input keeps
//                         what is there)
//
// Everything not covered by a record is zero. The file is materialised with
// ftruncate (sparse) and pwrite.
#ifndef REGIONSTORE_TESTS_FUZZ_STORE_IMAGE_H_
#define REGIONSTORE_TESTS_FUZZ_STORE_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace regionstore::fuzz {

// 8 MiB keeps a full verify (which reads the whole file) near a millisecond.
inline constexpr uint64_t kMaxImageFileSize = 8 * 1024 * 1024;

enum ImageFlags : uint8_t {
  kReadDataArea = 1 << 0,  // VerifyRegions also reads the data area
  kOpenWriter = 1 << 1,    // open read-write: lock, recovery, then a commit
  // Before the readers run, the target recomputes every checksum the file's
  // own fields locate (superblock, region table, slot headers and the
  // payloads they describe), so that mutated fields get past the checksums
  // to the checks behind them.
  kFixChecksums = 1 << 2,
};

struct Record {
  uint64_t offset = 0;
  std::vector<std::byte> bytes;
};

struct Image {
  uint8_t flags = 0;
  uint64_t file_size = 0;
  std::vector<Record> records;
};

// Never fails: every byte string is some image.
Image DecodeImage(std::span<const uint8_t> input);

// The image of `file`: one record per run of non-zero bytes, runs closer than
// 16 zero bytes merged, each at most 65535 bytes.
std::vector<uint8_t> EncodeImage(std::span<const std::byte> file, uint8_t flags);

// Writes `image` to `path` (created or truncated, 0600). Returns false with
// errno set if the file system refuses.
bool WriteImage(const Image& image, const std::string& path);

}  // namespace regionstore::fuzz

#endif  // REGIONSTORE_TESTS_FUZZ_STORE_IMAGE_H_
