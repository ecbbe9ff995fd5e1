#include "journal.h"

#include <algorithm>
#include <array>
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

constexpr std::byte kZero8[8]{};

// The head's bytes, its checksum field still zero.
std::vector<std::byte> HeadWithoutChecksum(uint64_t id, std::span<const Member> members,
                                           std::span<const slot::HeaderBytes> headers) {
  std::vector<std::byte> head(HeadBytes(members.size()), std::byte{0});
  std::span<std::byte> bytes(head);
  std::memcpy(bytes.data() + head::kMagic, kMagic, sizeof kMagic);
  Store64(bytes, head::kBatchId, id);
  Store32(bytes, head::kMemberCount, static_cast<uint32_t>(members.size()));
  Store64(bytes, head::kLength, RecordBytes(members));
  for (size_t i = 0; i < members.size(); ++i) {
    const size_t at = head::kMembers + i * head::kMemberSize;
    Store32(bytes, at, members[i].region);
    Store32(bytes, at + 4, members[i].slot);
    Store64(bytes, at + 8, members[i].generation);
    Store64(bytes, at + 16, members[i].length);
    std::memcpy(bytes.data() + at + 24, headers[i].data(), headers[i].size());
  }
  return head;
}

}  // namespace

std::vector<std::span<const std::byte>> RecordParts(std::span<const std::byte> head,
                                                    std::span<const Member> members,
                                                    std::span<const PayloadPieces> payloads,
                                                    std::span<const std::byte> zeros) {
  std::vector<std::span<const std::byte>> parts{head};
  for (size_t i = 0; i < members.size(); ++i) {
    for (std::span<const std::byte> piece : payloads[i]) {
      if (!piece.empty()) parts.push_back(piece);
    }
    const uint64_t pad = ImageBytes(members[i].length) - members[i].length;
    if (pad != 0) parts.push_back(zeros.first(pad));
  }
  return parts;
}

std::vector<std::byte> EncodeHead(uint64_t id, std::span<const Member> members,
                                  std::span<const slot::HeaderBytes> headers,
                                  std::span<const PayloadPieces> payloads) {
  static constexpr std::array<std::byte, kUnit> kZeros{};
  std::vector<std::byte> head = HeadWithoutChecksum(id, members, headers);
  format::ChecksumStream stream;
  for (std::span<const std::byte> part : RecordParts(head, members, payloads, kZeros)) {
    stream.Update(part);
  }
  Store64(head, head::kChecksum, stream.Digest());
  return head;
}

void EncodeRecord(uint64_t id, std::span<const Member> members,
                  std::span<const slot::HeaderBytes> headers,
                  std::span<const PayloadPieces> payloads, std::vector<std::byte>& out) {
  static constexpr std::array<std::byte, kUnit> kZeros{};
  const std::vector<std::byte> head = EncodeHead(id, members, headers, payloads);
  out.clear();
  out.reserve(RecordBytes(members));
  for (std::span<const std::byte> part : RecordParts(head, members, payloads, kZeros)) {
    out.insert(out.end(), part.begin(), part.end());
  }
}

std::optional<uint64_t> RecordLength(std::span<const std::byte> first_unit, uint64_t limit) {
  if (first_unit.size() < kUnit) return std::nullopt;
  if (std::memcmp(first_unit.data() + head::kMagic, kMagic, sizeof kMagic) != 0) {
    return std::nullopt;
  }
  const uint32_t count = Load32(first_unit, head::kMemberCount);
  const uint64_t length = Load64(first_unit, head::kLength);
  if (count == 0 || count > kMaxBatchMembers) return std::nullopt;
  if (length < HeadBytes(count) + count * ImageBytes(0) || length > limit || length % kUnit != 0) {
    return std::nullopt;
  }
  return length;
}

std::optional<Record> DecodeRecord(std::span<const std::byte> record, const StoreInfo& info) {
  const std::optional<uint64_t> length = RecordLength(record, record.size());
  if (!length || *length != record.size()) return std::nullopt;
  format::ChecksumStream stream;
  stream.Update(record.first(head::kChecksum));
  stream.Update(kZero8);
  stream.Update(record.subspan(head::kChecksum + 8));
  if (Load64(record, head::kChecksum) != stream.Digest()) return std::nullopt;
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
    slot::HeaderBytes header_bytes;
    std::memcpy(header_bytes.data(), record.data() + at + 24, header_bytes.size());
    const slot::DecodedHeader header = slot::DecodeHeader(header_bytes, member.region, member.slot,
                                                          region.capacity, /*batch_ids=*/true);
    if (header.kind != slot::DecodedHeader::Kind::kValid ||
        header.header.generation != member.generation || header.header.length != member.length ||
        header.header.batch_id != decoded.id) {
      return std::nullopt;
    }
    const auto payload = record.subspan(image, member.length);
    if (format::Checksum(payload) != header.header.payload_checksum) return std::nullopt;
    if (!internal::AllZero(
            record.subspan(image + member.length, ImageBytes(member.length) - member.length))) {
      return std::nullopt;
    }
    decoded.members.push_back(member);
    decoded.headers.push_back(header_bytes);
    decoded.image_offsets.push_back(image);
    image += ImageBytes(member.length);
  }
  if (image != record.size()) return std::nullopt;
  return decoded;
}

namespace {

// The first whole record at or after `from` (a unit boundary inside the
// journal) with an id above `bound`, found by its magic; nullopt if none.
// A whole record with a lower id (an earlier round's) is passed over whole:
// its payload units hold a caller's bytes, which may hold anything, a
// record's image included, and must never be taken for a record.
Result<std::optional<uint64_t>> FindNewerRecord(const ReadAt& read, const StoreInfo& info,
                                                uint64_t journal_offset, uint64_t from,
                                                uint64_t bound) {
  constexpr uint64_t kChunkUnits = 64;
  std::vector<std::byte> chunk(kChunkUnits * kUnit);
  std::vector<std::byte> bytes;
  uint64_t skip_until = from;
  for (uint64_t at = from; info.journal_size - at >= kUnit;) {
    const uint64_t units = std::min(kChunkUnits, (info.journal_size - at) / kUnit);
    const std::span<std::byte> window = std::span(chunk).first(units * kUnit);
    if (Status s = read(journal_offset + at, window); !s.ok()) return s;
    for (uint64_t u = 0; u < units; ++u) {
      const uint64_t pos = at + u * kUnit;
      if (pos < skip_until) continue;
      const std::span<const std::byte> unit = window.subspan(u * kUnit, kUnit);
      if (std::memcmp(unit.data() + head::kMagic, kMagic, sizeof kMagic) != 0) continue;
      const uint64_t id = Load64(unit, head::kBatchId);
      if (id == 0 || id > batch::kMaxBatchId) continue;
      const std::optional<uint64_t> length = RecordLength(unit, info.journal_size - pos);
      if (!length) continue;
      bytes.resize(*length);
      if (Status s = read(journal_offset + pos, bytes); !s.ok()) return s;
      const std::optional<Record> record = DecodeRecord(bytes, info);
      if (!record) continue;
      if (record->id > bound) return std::optional<uint64_t>(pos);
      skip_until = pos + *length;
    }
    at += units * kUnit;
  }
  return std::optional<uint64_t>();
}

}  // namespace

Result<Chain> ReadChain(const ReadAt& read, const StoreInfo& info, uint64_t journal_offset,
                        const batch::Watermark& watermark) {
  Chain chain;
  chain.end = journal_offset;
  uint64_t pos = 0, last = 0;
  std::array<std::byte, kUnit> first;
  while (info.journal_size - pos >= kUnit) {
    if (Status s = read(journal_offset + pos, first); !s.ok()) return s;
    const std::optional<uint64_t> length = RecordLength(first, info.journal_size - pos);
    std::optional<Record> record;
    ChainRecord entry;
    if (length) {
      entry.offset = journal_offset + pos;
      entry.bytes.resize(*length);
      if (Status s = read(entry.offset, entry.bytes); !s.ok()) return s;
      record = DecodeRecord(entry.bytes, info);
    }
    if (record && record->id > last) {
      last = record->id;
      entry.record = std::move(*record);
      chain.records.push_back(std::move(entry));
      pos += *length;
      chain.end = journal_offset + pos;
      continue;
    }
    // Not the next record: the end of the chain (a torn last record, an
    // earlier round's, zeros), unless a newer whole record lies further on.
    // The writer wrote that one after this one's write returned, so this
    // one was whole: it is damaged. Its length may be too, hence the magic.
    // After a clean close no batch above W exists to be found.
    if (watermark.clean) break;
    DamagedRecord damaged;
    damaged.offset = journal_offset + pos;
    uint64_t bound = std::max(last, watermark.w);
    if (std::memcmp(first.data() + head::kMagic, kMagic, sizeof kMagic) == 0) {
      // A torn write that reached the head names its own id: the records
      // of earlier rounds past it are all lower.
      const uint64_t head_id = Load64(first, head::kBatchId);
      if (head_id != 0 && head_id <= batch::kMaxBatchId) {
        damaged.head_id = head_id;
        bound = std::max(bound, head_id);
      }
    }
    // A whole record of an earlier round is passed over whole (see
    // FindNewerRecord); anything else from its next unit on.
    const uint64_t search_from = record ? pos + *length : pos + kUnit;
    auto newer = FindNewerRecord(read, info, journal_offset, search_from, bound);
    if (!newer.ok()) return newer.status();
    if (!*newer) break;
    damaged.length = **newer - pos;
    pos = **newer;
    // The loop reads it again as the chain's next record.
    std::array<std::byte, kUnit> next_head;
    if (Status s = read(journal_offset + pos, next_head); !s.ok()) return s;
    damaged.next_id = Load64(next_head, head::kBatchId);
    last = std::max(last, bound);
    chain.damaged.push_back(damaged);
  }
  return chain;
}

bool ReplayedThisBoot(std::span<const std::byte> intent_area, const Result<intent::BootId>& boot) {
  const std::optional<intent::Entry> identity =
      intent::DecodeEntry(intent_area.subspan(intent::kSidecarEntry * intent::kEntrySize));
  return identity && identity->kind == intent::Kind::kSidecar && boot.ok() &&
         identity->boot_id == *boot;
}

}  // namespace regionstore::journal
