// The one-pass copy of a mapped commit (CopyPiecesToSharedChecksummed):
// the bytes it stores and the checksum it returns are those of a plain copy
// and a one-shot XXH3, whatever the payload's size and pieces.
#include <catch2/catch.hpp>
#include <cstring>
#include <span>
#include <vector>

#include "format.h"
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

}  // namespace

TEST_CASE("A one-pass copy stores the payload and returns its one-shot checksum",
          "[checkpoint][format]") {
  const size_t block = kOnePassBlock;
  const size_t threshold = kOnePassThreshold;
  for (size_t size : {size_t{0}, size_t{1}, block - 1, block, block + 1, threshold, threshold + 1,
                      3 * block + 7, size_t{1} << 20, (size_t{1} << 20) + 4095}) {
    for (size_t cuts : {size_t{1}, size_t{2}, size_t{5}}) {
      CAPTURE(size, cuts);
      const std::vector<std::byte> payload = PatternBytes(size, static_cast<uint32_t>(size + cuts));
      // Cut into pieces at uneven places, some of them empty.
      std::vector<std::span<const std::byte>> pieces;
      size_t at = 0;
      for (size_t i = 1; i <= cuts; ++i) {
        const size_t end = i == cuts ? size : std::min(size, at + (size / cuts) + i * 13);
        pieces.push_back(std::span<const std::byte>(payload).subspan(at, end - at));
        at = end;
      }
      std::vector<std::byte> shared(size + 16, std::byte{0x5a});
      const uint64_t checksum = CopyPiecesToSharedChecksummed(shared.data() + 8, pieces, size);
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

}  // namespace regionstore::testing
