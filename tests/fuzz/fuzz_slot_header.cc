#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "format.h"
#include "fuzz_targets.h"
#include "slot.h"

namespace regionstore::fuzz {
namespace {

uint64_t LoadLE(std::span<const uint8_t> bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width && offset + i < bytes.size(); ++i) {
    value |= uint64_t{bytes[offset + i]} << (8 * i);
  }
  return value;
}

[[noreturn]] void Broken(const char* what) {
  std::fprintf(stderr, "fuzz slot header: %s\n", what);
  std::abort();
}

}  // namespace

int SlotHeader(std::span<const uint8_t> input) {
  // The region index's top bit asks for the header checksum to be made
  // right first, so mutations reach the checks behind it.
  const auto raw_region = static_cast<uint32_t>(LoadLE(input, 0, 4));
  const bool fix_checksum = (raw_region & 0x80000000u) != 0;
  const uint32_t region = raw_region & 0x7fffffffu;
  const auto slot_index = static_cast<uint32_t>(LoadLE(input, 4, 4));
  const uint64_t capacity = LoadLE(input, 8, 8);
  slot::HeaderBytes bytes{};
  const std::span<const uint8_t> rest =
      input.size() > 16 ? input.subspan(16) : std::span<const uint8_t>{};
  if (!rest.empty()) std::memcpy(bytes.data(), rest.data(), std::min(rest.size(), bytes.size()));

  if (fix_checksum) {
    format::Store64(
        bytes, slot::hdr::kHeaderChecksum,
        format::Checksum(std::span<const std::byte>(bytes).first(slot::hdr::kHeaderChecksum)));
  }
  const slot::DecodedHeader decoded = slot::DecodeHeader(bytes, region, slot_index, capacity);
  switch (decoded.kind) {
    case slot::DecodedHeader::Kind::kEmpty:
      for (std::byte b : bytes) {
        if (b != std::byte{0}) Broken("a header with a non-zero byte decoded as empty");
      }
      break;
    case slot::DecodedHeader::Kind::kUnfinished: {
      for (size_t i = 0; i < sizeof slot::kMagic; ++i) {
        if (bytes[i] != std::byte{0}) Broken("a header with a magic decoded as unfinished");
      }
      if (decoded.reason.empty()) Broken("an unfinished header without a reason");
      break;
    }
    case slot::DecodedHeader::Kind::kInvalid:
      if (decoded.reason.empty()) Broken("an invalid header without a reason");
      break;
    case slot::DecodedHeader::Kind::kValid: {
      const slot::Header& header = decoded.header;
      if (header.region != region || header.slot != slot_index) Broken("wrong indexes accepted");
      if (header.generation == 0 || header.generation > slot::kMaxGeneration) {
        Broken("a generation outside 1..2^63-1 accepted");
      }
      if (header.length > capacity) Broken("a length over the capacity accepted");
      // Everything the header says is in the decoded fields: encoding them
      // again must give the same 64 bytes (reserved zero, same checksum).
      if (slot::EncodeHeader(header) != bytes) Broken("an accepted header does not re-encode");
      break;
    }
  }
  return 0;
}

}  // namespace regionstore::fuzz
