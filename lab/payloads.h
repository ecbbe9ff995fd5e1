// Payloads: two buffers that differ in every byte, used alternately, each
// stamped with the operation number, so every operation writes new content
// (no layer below can skip a write of bytes it already holds). Shared by
// the benchmarks.
#ifndef REGIONSTORE_LAB_PAYLOADS_H_
#define REGIONSTORE_LAB_PAYLOADS_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace regionstore::bench {

class Payloads {
 public:
  explicit Payloads(uint64_t size) : buffers_{Filled(size, 0x9e3779b97f4a7c15), Filled(size, 7)} {}

  std::span<const std::byte> Next() {
    std::vector<std::byte>& buffer = buffers_[count_ & 1];
    std::memcpy(buffer.data(), &count_, std::min(sizeof count_, buffer.size()));
    ++count_;
    return buffer;
  }

 private:
  // xorshift64 words from `seed`.
  static std::vector<std::byte> Filled(uint64_t size, uint64_t seed) {
    std::vector<std::byte> bytes(size);
    uint64_t x = seed;
    for (uint64_t i = 0; i + 8 <= size; i += 8) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::memcpy(bytes.data() + i, &x, 8);
    }
    return bytes;
  }

  std::array<std::vector<std::byte>, 2> buffers_;
  uint64_t count_ = 1;
};

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_PAYLOADS_H_
