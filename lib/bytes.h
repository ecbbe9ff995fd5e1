// Small byte helpers every layer of lib/ uses: the all-zero check and hex
// formatting. Internal.
#ifndef REGIONSTORE_LIB_BYTES_H_
#define REGIONSTORE_LIB_BYTES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace regionstore::internal {

inline bool AllZero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

inline constexpr char kHexDigits[] = "0123456789abcdef";

// Two lower-case hex digits per byte, in order ("00ff1a...").
inline std::string HexBytes(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve(2 * bytes.size());
  for (std::byte b : bytes) {
    const auto value = std::to_integer<unsigned>(b);
    out += kHexDigits[value >> 4];
    out += kHexDigits[value & 0xf];
  }
  return out;
}

// "0x" and `value` in lower-case hex, zero-padded to at least `min_digits`.
inline std::string HexNumber(uint64_t value, size_t min_digits = 1) {
  std::string digits;
  do {
    digits.insert(digits.begin(), kHexDigits[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  if (digits.size() < min_digits) digits.insert(0, min_digits - digits.size(), '0');
  return "0x" + digits;
}

}  // namespace regionstore::internal

#endif  // REGIONSTORE_LIB_BYTES_H_
