#include "slot.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "bytes.h"

namespace regionstore {

std::string_view SlotLayoutName(SlotLayout layout) {
  switch (layout) {
    case SlotLayout::kAuto:
      return "auto";
    case SlotLayout::kAligned:
      return "aligned";
    case SlotLayout::kCompact:
      return "compact";
  }
  return "unknown";
}

std::string_view SlotStateName(SlotState state) {
  switch (state) {
    case SlotState::kEmpty:
      return "empty";
    case SlotState::kValid:
      return "valid";
    case SlotState::kTorn:
      return "torn";
    case SlotState::kIncomplete:
      return "incomplete";
    case SlotState::kDamaged:
      return "damaged";
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
  Store64(out, hdr::kBatchId, header.batch_id);
  Store64(out, hdr::kHeaderChecksum, format::Checksum(out.first(hdr::kHeaderChecksum)));
  return bytes;
}

namespace {

// The header checks after the magic, on `bytes` whose magic is (or is taken
// to be) right. Fills `decoded.header`; returns the first failure, or "".
std::string CheckHeaderFields(std::span<const std::byte> bytes, uint32_t region, uint32_t slot,
                              uint64_t capacity, bool batch_ids, Header& h) {
  if (Load64(bytes, hdr::kHeaderChecksum) != format::Checksum(bytes.first(hdr::kHeaderChecksum))) {
    return "slot header checksum mismatch";
  }
  h = Header{.region = Load32(bytes, hdr::kRegion),
             .slot = Load32(bytes, hdr::kSlot),
             .generation = Load64(bytes, hdr::kGeneration),
             .length = Load64(bytes, hdr::kLength),
             .commit_unix_ns = Load64(bytes, hdr::kCommitUnixNs),
             .payload_checksum = Load64(bytes, hdr::kPayloadChecksum)};
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
  h.batch_id = Load64(bytes, hdr::kBatchId);
  if (!batch_ids && h.batch_id != 0) return "reserved header bytes are not zero";
  return "";
}

}  // namespace

DecodedHeader DecodeHeader(std::span<const std::byte> bytes, uint32_t region, uint32_t slot,
                           uint64_t capacity, bool batch_ids) {
  DecodedHeader decoded;
  bytes = bytes.first(kHeaderSize);
  if (internal::AllZero(bytes.first(sizeof kMagic))) {
    if (internal::AllZero(bytes)) {
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
  decoded.reason = CheckHeaderFields(bytes, region, slot, capacity, batch_ids, decoded.header);
  if (decoded.reason.empty()) decoded.kind = DecodedHeader::Kind::kValid;
  return decoded;
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
    if (Status s = format::CheckRegionName(spec.name, "create"); !s.ok()) return s;
    if (spec.capacity == 0 || spec.capacity > kMaxCapacity) {
      return invalid("region '" + spec.name + "': capacity " + std::to_string(spec.capacity) +
                     " is not between 1 and " + std::to_string(kMaxCapacity) + " bytes");
    }
    RegionEntry entry;
    entry.name = spec.name;
    entry.capacity = spec.capacity;
    if (spec.slots != 0 && (spec.slots < kSlotsPerRegion || spec.slots > kMaxSlotsPerRegion)) {
      return invalid("region '" + spec.name + "': " + std::to_string(spec.slots) +
                     " slots; between " + std::to_string(kSlotsPerRegion) + " and " +
                     std::to_string(kMaxSlotsPerRegion) + " are allowed");
    }
    entry.slot_count = spec.slots != 0 ? spec.slots : kSlotsPerRegion;
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
    next = entry.slots_offset + uint64_t{entry.slot_count} * entry.slot_stride;
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

}  // namespace slot
}  // namespace regionstore
