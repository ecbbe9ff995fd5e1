#include "journal.h"

#include <cstring>

#include "batch.h"
#include "bytes.h"

namespace regionstore::journal {

using format::Load32;
using format::Load64;
using format::Store32;
using format::Store64;

std::optional<uint64_t> Offset(const StoreInfo& info) {
  if ((info.incompat_flags & format::kIncompatJournal) == 0 || info.journal_size == 0) {
    return std::nullopt;
  }
  const std::optional<uint64_t> log = batch::LogOffset(info);
  if (!log || *log < info.journal_size) return std::nullopt;
  const uint64_t start = *log - info.journal_size;
  const uint64_t table_end = info.region_table_offset +
                             format::RegionTableBytes(static_cast<uint32_t>(info.regions.size()));
  if (table_end > start) return std::nullopt;
  return start;
}

uint64_t RecordBytes(std::span<const Member> members) {
  uint64_t bytes = HeadBytes(members.size());
  for (const Member& member : members) bytes += ImageBytes(member.length);
  return bytes;
}

namespace {

// The checksum of a record whose checksum field is not yet (or no longer)
// part of it: read as zero.
uint64_t RecordChecksum(std::span<const std::byte> record) {
  static constexpr std::byte kZero[8]{};
  format::ChecksumStream stream;
  stream.Update(record.first(head::kChecksum));
  stream.Update(kZero);
  stream.Update(record.subspan(head::kChecksum + 8));
  return stream.Digest();
}

}  // namespace

void EncodeRecord(uint64_t id, std::span<const Member> members,
                  std::span<const slot::HeaderBytes> headers,
                  std::span<const PayloadPieces> payloads, std::vector<std::byte>& out) {
  out.assign(RecordBytes(members), std::byte{0});
  std::span<std::byte> bytes(out);
  std::memcpy(bytes.data() + head::kMagic, kMagic, sizeof kMagic);
  Store64(bytes, head::kBatchId, id);
  Store32(bytes, head::kMemberCount, static_cast<uint32_t>(members.size()));
  Store64(bytes, head::kLength, out.size());
  uint64_t image = HeadBytes(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    const size_t at = head::kMembers + i * head::kMemberSize;
    Store32(bytes, at, members[i].region);
    Store32(bytes, at + 4, members[i].slot);
    Store64(bytes, at + 8, members[i].generation);
    Store64(bytes, at + 16, members[i].length);
    std::memcpy(bytes.data() + image, headers[i].data(), headers[i].size());
    uint64_t payload = image + slot::kHeaderUnitSize;
    for (std::span<const std::byte> piece : payloads[i]) {
      if (!piece.empty()) std::memcpy(bytes.data() + payload, piece.data(), piece.size());
      payload += piece.size();
    }
    image += ImageBytes(members[i].length);
  }
  Store64(bytes, head::kChecksum, RecordChecksum(bytes));
}

std::optional<uint64_t> RecordLength(std::span<const std::byte> first_unit, uint64_t limit) {
  if (first_unit.size() < kUnit) return std::nullopt;
  if (std::memcmp(first_unit.data() + head::kMagic, kMagic, sizeof kMagic) != 0) {
    return std::nullopt;
  }
  const uint32_t count = Load32(first_unit, head::kMemberCount);
  const uint64_t length = Load64(first_unit, head::kLength);
  if (count == 0 || count > kMaxBatchMembers) return std::nullopt;
  if (length < HeadBytes(count) + count * ImageBytes(0) || length > limit ||
      length % kUnit != 0) {
    return std::nullopt;
  }
  return length;
}

std::optional<Record> DecodeRecord(std::span<const std::byte> record, const StoreInfo& info) {
  const std::optional<uint64_t> length = RecordLength(record, record.size());
  if (!length || *length != record.size()) return std::nullopt;
  if (Load64(record, head::kChecksum) != RecordChecksum(record)) return std::nullopt;
  const uint32_t count = Load32(record, head::kMemberCount);
  Record decoded;
  decoded.id = Load64(record, head::kBatchId);
  if (decoded.id == 0 || decoded.id > batch::kMaxBatchId || Load32(record, head::kReserved) != 0) {
    return std::nullopt;
  }
  const uint64_t head_bytes = HeadBytes(count);
  const size_t used_end = head::kMembers + size_t{count} * head::kMemberSize;
  if (!internal::AllZero(record.subspan(used_end, head_bytes - used_end))) return std::nullopt;
  uint64_t image = head_bytes;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = head::kMembers + size_t{i} * head::kMemberSize;
    const Member member{Load32(record, at), Load32(record, at + 4), Load64(record, at + 8),
                        Load64(record, at + 16)};
    if (member.region >= info.regions.size()) return std::nullopt;
    const RegionEntry& region = info.regions[member.region];
    if (member.slot >= region.slot_count || member.length > region.capacity ||
        image + ImageBytes(member.length) > record.size()) {
      return std::nullopt;
    }
    for (const Member& earlier : decoded.members) {
      if (earlier.region == member.region) return std::nullopt;
    }
    const slot::DecodedHeader header = slot::DecodeHeader(
        record.subspan(image, slot::kHeaderSize), member.region, member.slot, region.capacity,
        /*batch_ids=*/true);
    if (header.kind != slot::DecodedHeader::Kind::kValid ||
        header.header.generation != member.generation || header.header.length != member.length ||
        header.header.batch_id != decoded.id) {
      return std::nullopt;
    }
    const auto payload = record.subspan(image + slot::kHeaderUnitSize, member.length);
    if (format::Checksum(payload) != header.header.payload_checksum) return std::nullopt;
    decoded.members.push_back(member);
    decoded.image_offsets.push_back(image);
    image += ImageBytes(member.length);
  }
  if (image != record.size()) return std::nullopt;
  return decoded;
}

}  // namespace regionstore::journal
