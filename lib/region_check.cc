#include "region_check.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "batch.h"
#include "bytes.h"
#include "shared_copy.h"
#include "test_hooks.h"

namespace regionstore::region_check {

ReadFn PreadReader(File& file, const std::string& path) {
  return [&file, &path](uint64_t offset, std::span<std::byte> out) -> Status {
    auto read = file.ReadAt(offset, out);
    if (!read.ok()) return read.status().WithOperation("read checkpoint slot", path);
    if (*read != out.size()) {
      return Status::Error(StatusCode::kCorruption, "read checkpoint slot", path,
                           "the file ends inside a slot (truncated while open?)");
    }
    return Status::Ok();
  };
}

ReadFn MappingReader(const Mapping& mapping) {
  const std::byte* base = const_cast<Mapping&>(mapping).data();
  return [base](uint64_t offset, std::span<std::byte> out) -> Status {
    shared_copy::CopyFromShared(out.data(), base + offset, out.size());
    return Status::Ok();
  };
}

Result<bool> PayloadMatches(const ReadFn& read, uint64_t offset, const slot::Header& header) {
  if (internal::Mutated(internal::Mutation::kSkipPayloadCheck)) return true;
  format::ChecksumStream checksum;
  std::vector<std::byte> chunk(std::min(kChunk, std::max<uint64_t>(header.length, 1)));
  for (uint64_t done = 0; done < header.length;) {
    const uint64_t length = std::min<uint64_t>(chunk.size(), header.length - done);
    if (Status s = read(offset + done, std::span(chunk).first(length)); !s.ok()) return s;
    checksum.Update(std::span(chunk).first(length));
    done += length;
  }
  return checksum.Digest() == header.payload_checksum;
}

namespace {

// Batches above the watermark form chains of at most a few dozen (the log
// holds 32); deeper is a crafted file.
constexpr int kMaxBatchDepth = 64;

Result<std::vector<slot::HeaderBytes>> ReadHeaders(const ReadFn& read, const RegionEntry& region) {
  std::vector<slot::HeaderBytes> headers(region.slot_count);
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    if (Status s = read(slot::HeaderFileOffset(region, i), headers[i]); !s.ok()) return s;
  }
  return headers;
}

Result<std::string> Verdict(const ReadFn& read, const BatchContext& context, uint32_t region,
                            uint32_t slot, const slot::Header& header, bool check_payloads,
                            int depth) {
  const uint64_t id = header.batch_id;
  if (id == 0 || id <= context.watermark || !context.log_offset) return std::string();
  if (id == batch::kWithdrawnId) {
    return std::string("withdrawn by a writer's open (its batch did not complete)");
  }
  const std::string which = "batch " + std::to_string(id);
  if (depth > kMaxBatchDepth) return which + " depends on too long a chain of batches";
  batch::UnitBytes unit;
  if (Status s = read(batch::UnitOffset(*context.log_offset, id), unit); !s.ok()) return s;
  const std::optional<batch::Record> record = batch::DecodeRecord(unit);
  if (!record || record->id != id) {
    return which + " has no valid record in the batch log (the batch did not complete)";
  }
  const batch::Member self{region, slot, header.generation};
  if (std::find(record->members.begin(), record->members.end(), self) == record->members.end()) {
    return which + "'s record does not name this slot (the batch did not complete)";
  }
  const std::vector<RegionEntry>& regions = context.info->regions;
  for (const batch::Member& partner : record->members) {
    if (partner == self) continue;
    if (partner.region >= regions.size() || partner.slot >= regions[partner.region].slot_count) {
      return which + "'s record names a slot the store does not have";
    }
    const RegionEntry& other = regions[partner.region];
    if (context.journal_generations != nullptr &&
        (*context.journal_generations)[partner.region] >= partner.generation) {
      continue;
    }
    auto headers = ReadHeaders(read, other);
    if (!headers.ok()) return headers.status();
    // The partner's member in place, whole.
    const slot::DecodedHeader there = slot::DecodeHeader((*headers)[partner.slot], partner.region,
                                                         partner.slot, other.capacity, true);
    if (there.kind == slot::DecodedHeader::Kind::kValid &&
        there.header.generation == partner.generation && there.header.batch_id == id) {
      Result<bool> matches = true;
      if (check_payloads) {
        matches = PayloadMatches(read, slot::PayloadFileOffset(other, partner.slot), there.header);
      }
      if (!matches.ok()) return matches.status();
      if (*matches) continue;
    }
    // Or the partner's region moved on: a newer commit that counts.
    bool moved_on = false;
    for (const ValidHeader& newer :
         ValidHeadersNewestFirst(*headers, other, partner.region, /*batch_ids=*/true)) {
      if (newer.header.generation <= partner.generation) break;
      Result<bool> matches = true;
      if (check_payloads) {
        matches = PayloadMatches(read, slot::PayloadFileOffset(other, newer.slot), newer.header);
      }
      if (!matches.ok()) return matches.status();
      if (!*matches) continue;
      auto counts = Verdict(read, context, partner.region, newer.slot, newer.header, check_payloads,
                            depth + 1);
      if (!counts.ok()) return counts.status();
      if (counts->empty()) {
        moved_on = true;
        break;
      }
    }
    if (!moved_on) {
      return which + " did not complete: region '" + other.name + "' lacks its member (slot " +
             std::to_string(partner.slot) + ", generation " + std::to_string(partner.generation) +
             ")";
    }
  }
  return std::string();
}

}  // namespace

Result<std::string> BatchVerdict(const ReadFn& read, const BatchContext& context, uint32_t region,
                                 uint32_t slot, const slot::Header& header, bool check_payloads) {
  if (internal::Mutated(internal::Mutation::kBatchMemberAlone)) return std::string();
  return Verdict(read, context, region, slot, header, check_payloads, 0);
}

Result<bool> BatchRecordTorn(const ReadFn& read, const BatchContext& context, uint64_t id) {
  if (!context.log_offset || id == 0 || id == batch::kWithdrawnId) return false;
  batch::UnitBytes unit;
  if (Status s = read(batch::UnitOffset(*context.log_offset, id), unit); !s.ok()) return s;
  if (batch::DecodeRecord(unit)) return false;
  return !internal::AllZero(unit);
}

Result<RegionReport> ExamineRegion(const ReadFn& read, const RegionEntry& region,
                                   uint32_t region_index, bool check_payloads,
                                   const BatchContext* batch) {
  const bool batch_ids = batch != nullptr && batch->batch_ids();
  RegionReport report;
  report.name = region.name;
  report.index = region_index;
  report.capacity = region.capacity;
  report.payload_checked = check_payloads;
  // Payload verdict per slot whose header checks out.
  std::vector<std::optional<bool>> payload_ok(region.slot_count);
  std::optional<uint32_t> newest_header;  // highest generation; ties to the lower slot
  bool any_invalid = false;
  for (uint32_t i = 0; i < region.slot_count; ++i) {
    SlotReport slot_report;
    slot_report.index = i;
    slot_report.payload_checked = check_payloads;
    slot::HeaderBytes bytes;
    if (Status s = read(slot::HeaderFileOffset(region, i), bytes); !s.ok()) return s;
    const slot::DecodedHeader decoded =
        slot::DecodeHeader(bytes, region_index, i, region.capacity, batch_ids);
    switch (decoded.kind) {
      case slot::DecodedHeader::Kind::kEmpty:
        slot_report.state = SlotState::kEmpty;
        break;
      case slot::DecodedHeader::Kind::kUnfinished:
        slot_report.state = SlotState::kEmpty;
        slot_report.reason = decoded.reason;
        break;
      case slot::DecodedHeader::Kind::kInvalid:
        slot_report.state = SlotState::kDamaged;
        slot_report.reason = decoded.reason;
        any_invalid = true;
        break;
      case slot::DecodedHeader::Kind::kValid: {
        slot_report.generation = decoded.header.generation;
        slot_report.length = decoded.header.length;
        slot_report.commit_unix_ns = decoded.header.commit_unix_ns;
        Result<bool> matches = true;
        if (check_payloads) {
          matches = PayloadMatches(read, slot::PayloadFileOffset(region, i), decoded.header);
        }
        if (!matches.ok()) return matches.status();
        payload_ok[i] = *matches;
        slot_report.batch_id = decoded.header.batch_id;
        slot_report.state = *matches ? SlotState::kValid : SlotState::kIncomplete;
        if (!*matches) slot_report.reason = "payload checksum mismatch";
        if (*matches && batch_ids) {
          auto verdict =
              BatchVerdict(read, *batch, region_index, i, decoded.header, check_payloads);
          if (!verdict.ok()) return verdict.status();
          if (!verdict->empty()) {
            slot_report.state = SlotState::kIncomplete;
            slot_report.reason = "member of an interrupted batch: " + *verdict;
            slot_report.batch_incomplete = true;
            auto torn = BatchRecordTorn(read, *batch, decoded.header.batch_id);
            if (!torn.ok()) return torn.status();
            slot_report.batch_record_torn = *torn;
          }
        }
        if (!newest_header || decoded.header.generation > report.slots[*newest_header].generation) {
          newest_header = i;
        }
        break;
      }
    }
    report.slots.push_back(std::move(slot_report));
  }
  if (newest_header && payload_ok[*newest_header] == false) {
    report.torn = true;
    report.torn_slot = *newest_header;
    report.torn_generation = report.slots[*newest_header].generation;
    report.slots[*newest_header].state = SlotState::kTorn;
    report.slots[*newest_header].reason =
        "payload checksum mismatch in the newest header: a power loss interrupted this commit, "
        "or it was damaged after it returned";
  }
  for (const SlotReport& s : report.slots) {
    if (s.state == SlotState::kValid && (!report.has_commit || s.generation > report.generation)) {
      report.has_commit = true;
      report.active_slot = s.index;
      report.generation = s.generation;
      report.length = s.length;
      report.commit_unix_ns = s.commit_unix_ns;
    }
  }
  // Invalid headers beside one that checks out: after a power loss, the
  // trace of an interrupted commit; with none that checks out, every commit
  // is lost.
  if (newest_header) {
    for (SlotReport& s : report.slots) {
      if (s.state == SlotState::kDamaged) s.state = SlotState::kIncomplete;
    }
  }
  report.damaged = any_invalid && !newest_header;
  return report;
}

std::vector<ValidHeader> ValidHeadersNewestFirst(const std::vector<slot::HeaderBytes>& headers,
                                                 const RegionEntry& region, uint32_t region_index,
                                                 bool batch_ids) {
  std::vector<ValidHeader> valid;
  for (uint32_t i = 0; i < headers.size(); ++i) {
    const slot::DecodedHeader decoded =
        slot::DecodeHeader(headers[i], region_index, i, region.capacity, batch_ids);
    if (decoded.kind == slot::DecodedHeader::Kind::kValid) valid.push_back({i, decoded.header});
  }
  std::sort(valid.begin(), valid.end(), [](const ValidHeader& a, const ValidHeader& b) {
    if (a.header.generation != b.header.generation) {
      return a.header.generation > b.header.generation;
    }
    return a.slot < b.slot;
  });
  return valid;
}

}  // namespace regionstore::region_check
