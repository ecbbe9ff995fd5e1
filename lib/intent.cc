#include "intent.h"

#include <cstring>

#include "bytes.h"
#include "format.h"

namespace regionstore::intent {

std::optional<uint64_t> AreaOffset(const StoreInfo& info) {
  if (info.data_offset < format::kSuperblockSize + kAreaSize) return std::nullopt;
  const uint64_t start = info.data_offset - kAreaSize;
  const uint64_t table_end = info.region_table_offset +
                             format::RegionTableBytes(static_cast<uint32_t>(info.regions.size()));
  if (table_end > start) return std::nullopt;
  return start;
}

EntryBytes EncodeEntry(const Entry& entry) {
  EntryBytes bytes{};
  std::span<std::byte> out(bytes);
  format::Store32(out, ent::kKind, static_cast<uint32_t>(entry.kind));
  format::Store32(out, ent::kRegion, entry.region);
  format::Store32(out, ent::kSlot, entry.slot);
  format::Store64(out, ent::kGeneration, entry.generation);
  std::memcpy(out.data() + ent::kBootId, entry.boot_id.data(), entry.boot_id.size());
  format::Store64(out, ent::kChecksum, format::Checksum(out.first(ent::kChecksum)));
  return bytes;
}

std::optional<Entry> DecodeEntry(std::span<const std::byte> bytes) {
  bytes = bytes.first(kEntrySize);
  const uint32_t kind = format::Load32(bytes, ent::kKind);
  if (kind == 0 || kind > static_cast<uint32_t>(Kind::kSidecar)) return std::nullopt;
  if (format::Load64(bytes, ent::kChecksum) != format::Checksum(bytes.first(ent::kChecksum))) {
    return std::nullopt;
  }
  if (!internal::AllZero(bytes.subspan(ent::kReserved0, 4)) ||
      !internal::AllZero(bytes.subspan(ent::kReserved1, 16))) {
    return std::nullopt;
  }
  Entry entry;
  entry.kind = static_cast<Kind>(kind);
  entry.region = format::Load32(bytes, ent::kRegion);
  entry.slot = format::Load32(bytes, ent::kSlot);
  entry.generation = format::Load64(bytes, ent::kGeneration);
  std::memcpy(entry.boot_id.data(), bytes.data() + ent::kBootId, entry.boot_id.size());
  return entry;
}

PublicationBytes EncodePublication(uint64_t p) {
  PublicationBytes bytes{};
  std::span<std::byte> out(bytes);
  format::Store64(out, 0, p);
  format::Store64(out, 8, format::Checksum(out.first(8)));
  return bytes;
}

std::optional<uint64_t> DecodePublication(std::span<const std::byte> bytes) {
  bytes = bytes.first(kPublicationSize);
  if (internal::AllZero(bytes)) return 0;
  if (format::Load64(bytes, 8) != format::Checksum(bytes.first(8))) return std::nullopt;
  return format::Load64(bytes, 0);
}

}  // namespace regionstore::intent
