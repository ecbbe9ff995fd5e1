// The copies of a mapped commit (CopyPiecesToSharedChecksummed, and both
// ways it takes: the fused copy that hashes the values it stores, and the
// copy that hashes what it reads back): the bytes they store and the
// checksum they return are those of a plain copy and a one-shot XXH3,
// whatever the payload's size and pieces.
#include <catch2/catch.hpp>
#include <cstring>
#include <span>
#include <vector>

#include "format.h"
#include "fused_copy.h"
#include "store_rep.h"

namespace regionstore::testing {
namespace {

std::vector<std::byte> PatternBytes(size_t size, uint32_t seed) {
  std::vector<std::byte> bytes(size);
  uint32_t x = seed * 2654435761u + 1;
  for (std::byte& b : bytes) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::byte>(x);
  }
  return bytes;
}

using CopyFunction = uint64_t (*)(std::byte*, PayloadPieces, uint64_t);

// Every size in `sizes`, each cut into 1, 2, 5 and 9 pieces at uneven
// places (some empty, some inside a 64-byte stripe) and into 1-byte pieces:
// `copy` stores the payload, nothing around it, and returns its checksum.
void CheckCopies(CopyFunction copy, const std::vector<size_t>& sizes) {
  for (size_t size : sizes) {
    for (size_t cuts : {size_t{1}, size_t{2}, size_t{5}, size_t{9}, size_t{0}}) {
      CAPTURE(size, cuts);
      const std::vector<std::byte> payload = PatternBytes(size, static_cast<uint32_t>(size + cuts));
      std::vector<std::span<const std::byte>> pieces;
      if (cuts == 0) {
        if (size > 4096) continue;
        for (size_t i = 0; i < size; ++i) {
          pieces.push_back(std::span<const std::byte>(payload).subspan(i, 1));
        }
      } else {
        size_t at = 0;
        for (size_t i = 1; i <= cuts; ++i) {
          const size_t end = i == cuts ? size : std::min(size, at + (size / cuts) + i * 13);
          pieces.push_back(std::span<const std::byte>(payload).subspan(at, end - at));
          at = end;
        }
      }
      std::vector<std::byte> shared(size + 16, std::byte{0x5a});
      const uint64_t checksum = copy(shared.data() + 8, pieces, size);
      CHECK(checksum == format::Checksum(payload));
      // (memcmp wants non-null pointers even for 0 bytes: an empty vector's
      // data() may be null.)
      CHECK((size == 0 || std::memcmp(shared.data() + 8, payload.data(), size) == 0));
      // Nothing outside the payload's range was written.
      for (size_t i = 0; i < 8; ++i) {
        CHECK(shared[i] == std::byte{0x5a});
        CHECK(shared[size + 8 + i] == std::byte{0x5a});
      }
    }
  }
}

// Around XXH3's edges (240 bytes and less take other paths; 64-byte
// stripes, 1 KiB blocks, the overlapping last stripe) and the block copy's
// (kOnePassBlock, kOnePassThreshold).
std::vector<size_t> EdgeSizes() {
  const size_t block = kOnePassBlock;
  const size_t threshold = kOnePassThreshold;
  return {0,
          1,
          240,
          241,
          255,
          256,
          257,
          1023,
          1024,
          1025,
          1087,
          1088,
          1089,
          2048,
          block - 1,
          block,
          block + 1,
          threshold,
          threshold + 1,
          3 * block + 7,
          65536,
          size_t{1} << 20,
          (size_t{1} << 20) + 4095};
}

}  // namespace

TEST_CASE("A mapped commit's copy stores the payload and returns its one-shot checksum",
          "[checkpoint][format]") {
  CheckCopies(CopyPiecesToSharedChecksummed, EdgeSizes());
}

TEST_CASE("The copy that hashes what it reads back stores the payload and returns its checksum",
          "[checkpoint][format]") {
  CheckCopies(CopyPiecesToSharedThenChecksum, EdgeSizes());
}

TEST_CASE("The fused copy stores the payload and returns its one-shot checksum",
          "[checkpoint][format]") {
  if (!fused_copy::Available()) {
    SUCCEED("no AVX2 here: commits take the copy that hashes what it reads back");
    return;
  }
  std::vector<size_t> sizes;
  for (size_t size : EdgeSizes()) {
    if (size >= fused_copy::kMinLength) sizes.push_back(size);
  }
  CheckCopies([](std::byte* out, PayloadPieces pieces,
                 uint64_t length) { return fused_copy::CopyChecksummed(out, pieces, length); },
              sizes);
}

}  // namespace regionstore::testing
