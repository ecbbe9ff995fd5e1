#include "batch.h"

#include <cstring>

#include "bytes.h"

namespace regionstore::batch {

using format::Load32;
using format::Load64;
using format::Store32;
using format::Store64;

std::optional<uint64_t> LogOffset(const StoreInfo& info) {
  if ((info.incompat_flags & format::kIncompatBatchLog) == 0) return std::nullopt;
  const auto intent_offset = intent::AreaOffset(info);
  if (!intent_offset || *intent_offset < format::kBatchLogSize) return std::nullopt;
  const uint64_t start = *intent_offset - format::kBatchLogSize;
  const uint64_t table_end = info.region_table_offset +
                             format::RegionTableBytes(static_cast<uint32_t>(info.regions.size()));
  if (table_end > start) return std::nullopt;
  return start;
}

UnitBytes EncodeRecord(const Record& record) {
  UnitBytes bytes{};
  std::span<std::byte> out(bytes);
  std::memcpy(out.data() + rec::kMagic, kMagic, sizeof kMagic);
  Store64(out, rec::kBatchId, record.id);
  Store32(out, rec::kMemberCount, static_cast<uint32_t>(record.members.size()));
  for (size_t i = 0; i < record.members.size(); ++i) {
    const size_t at = rec::kMembers + i * rec::kMemberSize;
    Store32(out, at, record.members[i].region);
    Store32(out, at + 4, record.members[i].slot);
    Store64(out, at + 8, record.members[i].generation);
  }
  Store64(out, rec::kChecksum, format::Checksum(out.first(rec::kChecksum)));
  return bytes;
}

std::optional<Record> DecodeRecord(std::span<const std::byte> unit) {
  if (unit.size() < kUnitSize) return std::nullopt;
  unit = unit.first(kUnitSize);
  if (std::memcmp(unit.data() + rec::kMagic, kMagic, sizeof kMagic) != 0) return std::nullopt;
  if (Load64(unit, rec::kChecksum) != format::Checksum(unit.first(rec::kChecksum))) {
    return std::nullopt;
  }
  const uint32_t count = Load32(unit, rec::kMemberCount);
  Record record;
  record.id = Load64(unit, rec::kBatchId);
  if (record.id == 0 || record.id > kMaxBatchId || count == 0 || count > kMaxMembers ||
      Load32(unit, rec::kReserved) != 0) {
    return std::nullopt;
  }
  const size_t used_end = rec::kMembers + size_t{count} * rec::kMemberSize;
  if (!internal::AllZero(unit.subspan(used_end, rec::kChecksum - used_end))) return std::nullopt;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = rec::kMembers + size_t{i} * rec::kMemberSize;
    record.members.push_back({Load32(unit, at), Load32(unit, at + 4), Load64(unit, at + 8)});
  }
  return record;
}

Watermark ReadWatermark(std::span<const std::byte> intent_area) {
  Watermark best;
  bool found = false;
  for (uint32_t entry : intent::kWatermarkEntries) {
    const auto decoded = intent::DecodeEntry(intent_area.subspan(entry * intent::kEntrySize));
    if (!decoded || decoded->kind != intent::Kind::kBatchWatermark) continue;
    const uint64_t sequence = format::Load64(std::as_bytes(std::span(decoded->boot_id)), 0);
    if (found && sequence <= best.sequence) continue;
    found = true;
    best = {decoded->generation, sequence, (decoded->region & 1u) != 0};
  }
  return best;
}

intent::Entry WatermarkEntry(const Watermark& next) {
  intent::Entry entry;
  entry.kind = intent::Kind::kBatchWatermark;
  entry.region = next.clean ? 1u : 0u;
  entry.generation = next.w;
  format::Store64(std::as_writable_bytes(std::span(entry.boot_id)), 0, next.sequence);
  return entry;
}

}  // namespace regionstore::batch
