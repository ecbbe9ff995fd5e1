#include "crashvm/marker.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace regionstore::crashvm {
namespace {

// magic, op, status, value, value2, poisoned, message length, message,
// then the checksum in the last 8 bytes.
constexpr size_t kMessageOffset = 40;
constexpr size_t kChecksumOffset = kMarkerSize - 8;
constexpr size_t kMessageMax = kChecksumOffset - kMessageOffset;

template <typename T>
void Put(std::span<std::byte> out, size_t offset, T value) {
  std::memcpy(out.data() + offset, &value, sizeof(value));
}

template <typename T>
T Get(std::span<const std::byte> in, size_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(value));
  return value;
}

}  // namespace

void EncodeMarker(const Marker& marker, std::span<std::byte, kMarkerSize> out) {
  std::fill(out.begin(), out.end(), std::byte{0});
  const size_t length = std::min(marker.message.size(), kMessageMax);
  Put(out, 0, kMarkerMagic);
  Put(out, 8, marker.op);
  Put(out, 12, marker.status);
  Put(out, 16, marker.value);
  Put(out, 24, marker.value2);
  Put(out, 32, static_cast<uint32_t>(marker.poisoned ? 1 : 0));
  Put(out, 36, static_cast<uint32_t>(length));
  std::memcpy(out.data() + kMessageOffset, marker.message.data(), length);
  Put(out, kChecksumOffset, XXH3_64bits(out.data(), kChecksumOffset));
}

std::optional<Marker> DecodeMarker(std::span<const std::byte, kMarkerSize> sector) {
  if (Get<uint64_t>(sector, 0) != kMarkerMagic) return std::nullopt;
  if (Get<uint64_t>(sector, kChecksumOffset) != XXH3_64bits(sector.data(), kChecksumOffset)) {
    return std::nullopt;
  }
  const uint32_t length = Get<uint32_t>(sector, 36);
  if (length > kMessageMax) return std::nullopt;
  Marker marker;
  marker.op = Get<uint32_t>(sector, 8);
  marker.status = Get<int32_t>(sector, 12);
  marker.value = Get<uint64_t>(sector, 16);
  marker.value2 = Get<uint64_t>(sector, 24);
  marker.poisoned = Get<uint32_t>(sector, 32) != 0;
  marker.message.assign(reinterpret_cast<const char*>(sector.data()) + kMessageOffset, length);
  return marker;
}

}  // namespace regionstore::crashvm
