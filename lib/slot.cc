#include "slot.h"

#if defined(__x86_64__)
#include <xxh_x86dispatch.h>
#else
#include <xxhash.h>
#endif

#include <algorithm>
#include <cstring>
#include <new>
#include <string_view>

namespace regionstore {

namespace {

// Length of the UTF-8 sequence starting at `text[i]`, or 0 if it is not a
// well-formed one (overlong forms, surrogates and values past U+10FFFF are
// refused, as RFC 3629 says).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return length;
}

}  // namespace

Status ValidateRegionName(std::string_view name) { return slot::CheckName(name, "region name"); }

std::string_view SlotLayoutName(SlotLayout layout) {
  switch (layout) {
    case SlotLayout::kAuto: return "auto";
    case SlotLayout::kAligned: return "aligned";
    case SlotLayout::kCompact: return "compact";
  }
  return "unknown";
}

std::string_view SlotStateName(SlotState state) {
  switch (state) {
    case SlotState::kEmpty: return "empty";
    case SlotState::kValid: return "valid";
    case SlotState::kTorn:
      return "torn";
    case SlotState::kIncomplete: return "incomplete";
    case SlotState::kDamaged: return "damaged";
  }
  return "unknown";
}

namespace slot {

using format::Load32;
using format::Load64;
using format::Store32;
using format::Store64;

HeaderBytes EncodeHeader(const Header& header) {
  HeaderBytes bytes{};
  std::span<std::byte> out(bytes);
  std::memcpy(out.data() + hdr::kMagic, kMagic, sizeof kMagic);
  Store32(out, hdr::kRegion, header.region);
  Store32(out, hdr::kSlot, header.slot);
  Store64(out, hdr::kGeneration, header.generation);
  Store64(out, hdr::kLength, header.length);
  Store64(out, hdr::kCommitUnixNs, header.commit_unix_ns);
  Store64(out, hdr::kPayloadChecksum, header.payload_checksum);
  Store64(out, hdr::kHeaderChecksum, format::Checksum(out.first(hdr::kHeaderChecksum)));
  return bytes;
}

namespace {

// The header checks after the magic, on `bytes` whose magic is (or is taken
// to be) right. Fills `decoded.header`; returns the first failure, or "".
std::string CheckHeaderFields(std::span<const std::byte> bytes, uint32_t region, uint32_t slot,
                              uint64_t capacity, Header& h) {
  if (Load64(bytes, hdr::kHeaderChecksum) != format::Checksum(bytes.first(hdr::kHeaderChecksum))) {
    return "slot header checksum mismatch";
  }
  h.region = Load32(bytes, hdr::kRegion);
  h.slot = Load32(bytes, hdr::kSlot);
  h.generation = Load64(bytes, hdr::kGeneration);
  h.length = Load64(bytes, hdr::kLength);
  h.commit_unix_ns = Load64(bytes, hdr::kCommitUnixNs);
  h.payload_checksum = Load64(bytes, hdr::kPayloadChecksum);
  if (h.region != region || h.slot != slot) {
    return "header names region " + std::to_string(h.region) + " slot " + std::to_string(h.slot) +
           ", not region " + std::to_string(region) + " slot " + std::to_string(slot);
  }
  if (h.generation == 0 || h.generation > kMaxGeneration) {
    return "generation " + std::to_string(h.generation) + " is outside 1.." +
           std::to_string(kMaxGeneration);
  }
  if (h.length > capacity) {
    return "payload length " + std::to_string(h.length) + " exceeds the capacity " +
           std::to_string(capacity);
  }
  if (Load64(bytes, hdr::kReserved) != 0) return "reserved header bytes are not zero";
  return "";
}

}  // namespace

DecodedHeader DecodeHeader(std::span<const std::byte> bytes, uint32_t region, uint32_t slot,
                           uint64_t capacity) {
  DecodedHeader decoded;
  bytes = bytes.first(kHeaderSize);
  const auto zero = [](std::span<const std::byte> s) {
    return std::all_of(s.begin(), s.end(), [](std::byte b) { return b == std::byte{0}; });
  };
  if (zero(bytes.first(sizeof kMagic))) {
    if (zero(bytes)) {
      decoded.kind = DecodedHeader::Kind::kEmpty;
      return decoded;
    }
    decoded.kind = DecodedHeader::Kind::kUnfinished;
    decoded.reason =
        "unfinished header (magic zero, other bytes not): a commit interrupted before its header "
        "was complete, or damage to a slot that held no commit";
    return decoded;
  }
  decoded.kind = DecodedHeader::Kind::kInvalid;
  if (std::memcmp(bytes.data() + hdr::kMagic, kMagic, sizeof kMagic) != 0) {
    decoded.reason = "bad slot header magic";
    return decoded;
  }
  decoded.reason = CheckHeaderFields(bytes, region, slot, capacity, decoded.header);
  if (decoded.reason.empty()) decoded.kind = DecodedHeader::Kind::kValid;
  return decoded;
}

Status CheckName(std::string_view name, const char* operation) {
  const auto bad = [&](const std::string& why) {
    return Status::Error(StatusCode::kInvalidArgument, operation, "", why);
  };
  if (name.empty()) return bad("a region name may not be empty");
  if (name.size() > format::kMaxRegionNameLength) {
    return bad("region name is " + std::to_string(name.size()) + " bytes; at most " +
               std::to_string(format::kMaxRegionNameLength) + " are allowed");
  }
  for (size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) {
      return bad("region name has a control character (byte " + std::to_string(c) +
                 ") at offset " + std::to_string(i));
    }
    const size_t length = Utf8SequenceLength(name, i);
    if (length == 0) return bad("region name is not valid UTF-8 at offset " + std::to_string(i));
    // C1 controls, U+0080..U+009F, encode as 0xc2 0x80..0x9f.
    if (length == 2 && c == 0xc2 && static_cast<unsigned char>(name[i + 1]) <= 0x9f) {
      return bad("region name has a control character at offset " + std::to_string(i));
    }
    i += length;
  }
  return Status::Ok();
}

SlotLayout ResolveLayout(SlotLayout requested, uint64_t capacity, uint64_t page_size) {
  if (requested != SlotLayout::kAuto) return requested;
  return capacity <= kCompactSlotLimit && page_size <= format::kAreaAlignment
             ? SlotLayout::kCompact
             : SlotLayout::kAligned;
}

Result<std::pair<std::vector<RegionEntry>, uint64_t>> LayoutRegions(
    const std::vector<CheckpointSpec>& specs, uint64_t data_end, uint64_t page_size) {
  const auto invalid = [](std::string message) {
    return Status::Error(StatusCode::kInvalidArgument, "create", "", std::move(message));
  };
  if (specs.size() > kMaxRegionsCreated) {
    return invalid(std::to_string(specs.size()) + " regions; at most " +
                   std::to_string(kMaxRegionsCreated) + " are allowed");
  }
  const uint64_t compact_alignment = std::max<uint64_t>(page_size, kHeaderUnitSize);
  std::vector<RegionEntry> regions;
  regions.reserve(specs.size());
  uint64_t next = data_end;
  for (const CheckpointSpec& spec : specs) {
    if (Status s = CheckName(spec.name, "create"); !s.ok()) return s;
    if (spec.capacity == 0 || spec.capacity > kMaxCapacity) {
      return invalid("region '" + spec.name + "': capacity " + std::to_string(spec.capacity) +
                     " is not between 1 and " + std::to_string(kMaxCapacity) + " bytes");
    }
    RegionEntry entry;
    entry.name = spec.name;
    entry.capacity = spec.capacity;
    entry.slot_count = kSlotsPerRegion;
    entry.layout = ResolveLayout(spec.layout, spec.capacity, page_size);
    if (entry.layout == SlotLayout::kCompact) {
      if (compact_alignment > format::kAreaAlignment ||
          (compact_alignment & (compact_alignment - 1)) != 0) {
        return invalid("region '" + spec.name + "': compact slots need pages of 4 to 64 KiB; " +
                       "this host's are " + std::to_string(page_size) + " bytes");
      }
      entry.slot_alignment = static_cast<uint32_t>(compact_alignment);
    } else {
      entry.layout = SlotLayout::kAligned;
      entry.slot_alignment = static_cast<uint32_t>(format::kAreaAlignment);
    }
    entry.slot_stride = StrideFor(spec.capacity, entry.layout, entry.slot_alignment);
    entry.slots_offset = format::AlignUp(next, entry.slot_alignment);
    next = entry.slots_offset + uint64_t{kSlotsPerRegion} * entry.slot_stride;
    if (next > format::kMaxDataSize) {
      return invalid("the regions do not fit the largest store of " +
                     std::to_string(format::kMaxDataSize) + " bytes");
    }
    regions.push_back(std::move(entry));
  }
  const std::vector<uint32_t> by_name = format::SortedByName(regions);
  for (size_t i = 1; i < by_name.size(); ++i) {
    if (regions[by_name[i - 1]].name == regions[by_name[i]].name) {
      return invalid("region name '" + regions[by_name[i]].name + "' is given twice");
    }
  }
  return std::make_pair(std::move(regions), format::AlignUp(next, format::kAreaAlignment));
}

ChecksumStream::ChecksumStream() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}
ChecksumStream::~ChecksumStream() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }
void ChecksumStream::Update(std::span<const std::byte> bytes) {
#if defined(__x86_64__)
  XXH3_64bits_update_dispatch(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
#else
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
#endif
}
uint64_t ChecksumStream::Digest() const {
  return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_));
}

}  // namespace slot
}  // namespace regionstore
