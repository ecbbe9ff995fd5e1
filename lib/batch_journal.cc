// The batch journal as one object: a writer's appends, the replay at a
// writer's open, and the records readers take into account until a writer
// replays them. batch_journal.h has the contracts.
#include "batch_journal.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "intent.h"
#include "region_check.h"
#include "shared_copy.h"

namespace regionstore {
namespace {

using region_check::ReadFn;

// Whether member `m` of the record `chain[c]` must not be applied: a later
// record of the chain names its region (it is applied after), or the
// region's slots hold a newer commit that counts. Sets `whole_here` when the
// member's own slot already holds it, whole (its pages then only need
// writing again for the open's fdatasync).
Result<bool> Superseded(const ReadFn& read, const region_check::BatchContext& context,
                        const StoreInfo& info, std::span<const journal::ChainRecord> chain,
                        size_t c, size_t m, bool& whole_here) {
  const journal::Record& record = chain[c].record;
  const journal::Member& member = record.members[m];
  bool newer = false;
  for (size_t later = c + 1; later < chain.size() && !newer; ++later) {
    for (const journal::Member& other : chain[later].record.members) {
      newer = newer || other.region == member.region;
    }
  }
  const RegionEntry& region = info.regions[member.region];
  for (uint32_t i = 0; i < region.slot_count && !newer; ++i) {
    slot::HeaderBytes header_bytes;
    if (Status s = read(slot::HeaderFileOffset(region, i), header_bytes); !s.ok()) return s;
    const slot::DecodedHeader decoded =
        slot::DecodeHeader(header_bytes, member.region, i, region.capacity, /*batch_ids=*/true);
    if (decoded.kind != slot::DecodedHeader::Kind::kValid ||
        decoded.header.batch_id == batch::kWithdrawnId ||
        decoded.header.generation < member.generation) {
      continue;
    }
    auto matches =
        region_check::PayloadMatches(read, slot::PayloadFileOffset(region, i), decoded.header);
    if (!matches.ok()) return matches.status();
    if (!*matches) continue;
    if (decoded.header.generation == member.generation) {
      whole_here = whole_here || (i == member.slot && decoded.header.batch_id == record.id);
      continue;
    }
    auto verdict = region_check::BatchVerdict(read, context, member.region, i, decoded.header);
    if (!verdict.ok()) return verdict.status();
    newer = verdict->empty();
  }
  return newer;
}

// Member `m` of `entry` into its slot: its pages written again where the
// slot holds it whole already, otherwise as a commit writes a slot (the
// payload behind a zero header unit, then the header).
Status ApplyMember(const BatchJournal::ReplayWriter& writer, const StoreInfo& info,
                   const journal::ChainRecord& entry, size_t m, bool whole_here) {
  const journal::Record& record = entry.record;
  const journal::Member& member = record.members[m];
  const RegionEntry& region = info.regions[member.region];
  const uint64_t unit = slot::HeaderFileOffset(region, member.slot);
  const uint64_t payload_end = slot::PayloadFileOffset(region, member.slot) + member.length;
  if (whole_here) {
    return writer.rewrite(unit, payload_end, "open: rewrite a journaled batch member");
  }
  const std::span<const std::byte> payload(entry.bytes.data() + record.image_offsets[m],
                                           member.length);
  static constexpr std::array<std::byte, slot::kHeaderUnitSize> kZeroUnit{};
  const std::array<std::span<const std::byte>, 2> parts{std::span<const std::byte>(kZeroUnit),
                                                        payload};
  if (Status s = writer.file->WriteGatherAt(unit, parts, /*data_sync=*/false); !s.ok()) {
    return s.WithOperation("open: replay a journaled batch member", *writer.path);
  }
  std::array<std::byte, slot::kHeaderUnitSize> header_unit{};
  std::memcpy(header_unit.data(), record.headers[m].data(), record.headers[m].size());
  if (Status s = writer.file->WriteAt(unit, header_unit); !s.ok()) {
    return s.WithOperation("open: replay a journaled batch member", *writer.path);
  }
  return Status::Ok();
}

}  // namespace

std::unique_ptr<BatchJournal> BatchJournal::ForStore(const StoreInfo& info) {
  const std::optional<uint64_t> offset = journal::Offset(info);
  if (!offset) return nullptr;
  return std::unique_ptr<BatchJournal>(new BatchJournal(info, *offset, batch::LogOffset(info)));
}

bool BatchJournal::Takes(std::span<const uint64_t> lengths) const {
  uint64_t bytes = journal::HeadBytes(lengths.size());
  for (const uint64_t length : lengths) bytes += journal::ImageBytes(length);
  return bytes <= info_->journal_size / 2;
}

std::vector<std::span<const std::byte>> BatchJournal::Assemble(
    std::span<const journal::Member> members, std::span<const PayloadPieces> pieces) {
  // Each image is its member's pieces, copied once, then zeros to the next
  // unit, appended without a zero fill first.
  record_.clear();
  record_.reserve(journal::RecordBytes(members));
  record_.resize(journal::HeadBytes(members.size()));
  std::vector<uint64_t> starts;
  for (size_t m = 0; m < members.size(); ++m) {
    starts.push_back(record_.size());
    for (std::span<const std::byte> piece : pieces[m]) {
      record_.insert(record_.end(), piece.begin(), piece.end());
    }
    record_.resize(starts.back() + journal::ImageBytes(members[m].length));
  }
  std::vector<std::span<const std::byte>> images;
  for (size_t m = 0; m < members.size(); ++m) {
    images.emplace_back(record_.data() + starts[m], members[m].length);
  }
  return images;
}

void BatchJournal::SealHead(uint64_t id, std::span<const journal::Member> members,
                            std::span<const slot::HeaderBytes> headers,
                            std::span<const PayloadPieces> payloads) {
  const std::vector<std::byte> head = journal::EncodeHead(id, members, headers, payloads);
  std::memcpy(record_.data(), head.data(), head.size());
}

bool BatchJournal::NeedsBarrierFirst() const { return pos_ + record_.size() > info_->journal_size; }

Result<uint64_t> BatchJournal::Append(File& file, const DurableWrite& write) {
  const std::array<std::span<const std::byte>, 1> parts{record_};
  const uint64_t at = offset_ + pos_;
  if (Status written = write(at, parts); !written.ok()) {
    Forget(file, at);
    return written;
  }
  pos_ += record_.size();
  ++appends_;
  return at;
}

void BatchJournal::Forget(File& file, uint64_t at) {
  static constexpr std::array<std::byte, journal::kUnit> kZeroUnit{};
  (void)file.WriteAt(at, kZeroUnit);
}

Status BatchJournal::Replay(const ReplayWriter& writer, const batch::Watermark& found,
                            std::optional<uint64_t> failed, bool& must_mark) {
  auto chain = ReadReplayChain(writer, found, failed, must_mark);
  if (!chain.ok()) return chain.status();
  for (size_t c = 0; c < chain->size(); ++c) {
    if (Status s = ReplayRecord(writer, *chain, c, found.w, must_mark); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<std::vector<journal::ChainRecord>> BatchJournal::ReadReplayChain(
    const ReplayWriter& writer, const batch::Watermark& found, std::optional<uint64_t> failed,
    bool& must_mark) {
  const ReadFn read = region_check::PreadReader(*writer.file, *writer.path);
  // A whole-file barrier sends the writer back to the journal's start, so the
  // records past the chain's end are older ones, all redundant; a newer one
  // past a damaged record is the chain's still (ReadChain), and is applied.
  auto read_chain = journal::ReadChain(read, *info_, offset_, found);
  if (!read_chain.ok()) {
    return read_chain.status().WithOperation("open: read the batch journal", *writer.path);
  }
  pos_ = read_chain->end - offset_;
  std::vector<journal::ChainRecord> chain;
  for (journal::ChainRecord& entry : read_chain->records) {
    max_id_ = entry.record.id;
    if (failed && entry.record.id == *failed) {
      // Its call never returned and it is the newest record: nothing
      // follows it in the chain.
      static constexpr std::array<std::byte, journal::kUnit> kZeroUnit{};
      if (Status s = writer.file->WriteAt(entry.offset, kZeroUnit); !s.ok()) {
        return s.WithOperation("open: remove the journal record of a batch that did not return",
                               *writer.path);
      }
      must_mark = true;
      pos_ = entry.offset - offset_;
      break;
    }
    if (entry.record.id > found.w) chain.push_back(std::move(entry));
  }
  return chain;
}

Status BatchJournal::ReplayRecord(const ReplayWriter& writer,
                                  std::span<const journal::ChainRecord> chain, size_t c,
                                  uint64_t watermark, bool& must_mark) {
  const ReadFn read = region_check::PreadReader(*writer.file, *writer.path);
  const region_check::BatchContext context{info_, log_offset_, watermark};
  const journal::Record& record = chain[c].record;
  batch::Record log_record;
  log_record.id = record.id;
  for (size_t m = 0; m < record.members.size(); ++m) {
    const journal::Member& member = record.members[m];
    log_record.members.push_back({member.region, member.slot, member.generation});
    bool whole_here = false;
    auto superseded = Superseded(read, context, *info_, chain, c, m, whole_here);
    if (!superseded.ok()) return superseded.status();
    if (*superseded) continue;
    if (Status s = writer.begin_publishing(); !s.ok()) return s;
    if (Status s = ApplyMember(writer, *info_, chain[c], m, whole_here); !s.ok()) return s;
    must_mark = true;
  }
  // The members count by the log's record until a watermark covers them.
  // Its unit holds no later batch's: ids above the watermark are at most
  // 32 apart (MakeLogUnitReusable).
  if (Status s = writer.file->WriteAt(batch::UnitOffset(*log_offset_, record.id),
                                      batch::EncodeRecord(log_record));
      !s.ok()) {
    return s.WithOperation("open: replay a journaled batch's record", *writer.path);
  }
  must_mark = true;
  return Status::Ok();
}

std::vector<uint64_t> BatchJournal::Pending::Generations() const {
  std::vector<uint64_t> generations;
  for (const std::optional<PendingMember>& pending : newest) {
    generations.push_back(pending ? pending->member.generation : 0);
  }
  return generations;
}

Result<BatchJournal::Pending> BatchJournal::ReadPending(const journal::ReadAt& read, Io& io) const {
  Pending pending;
  const std::optional<uint64_t> area = intent::AreaOffset(*info_);
  if (!area) return pending;
  std::vector<std::byte> intent_area(intent::kAreaSize);
  if (Status s = read(*area, intent_area); !s.ok()) return s;
  if (journal::ReplayedThisBoot(intent_area, io.BootId())) return pending;
  const batch::Watermark watermark = batch::ReadWatermark(intent_area);
  auto chain = journal::ReadChain(read, *info_, offset_, watermark);
  if (!chain.ok()) return chain.status();
  pending.damaged = std::move(chain->damaged);
  for (const journal::ChainRecord& entry : chain->records) {
    const journal::Record& record = entry.record;
    if (record.id <= watermark.w) continue;
    pending.newest.resize(info_->regions.size());
    for (size_t m = 0; m < record.members.size(); ++m) {
      const journal::Member& member = record.members[m];
      const slot::DecodedHeader decoded =
          slot::DecodeHeader(record.headers[m], member.region, member.slot,
                             info_->regions[member.region].capacity, /*batch_ids=*/true);
      pending.newest[member.region] =
          PendingMember{member, decoded.header, entry.offset + record.image_offsets[m]};
    }
  }
  return pending;
}

void BatchJournal::KeepPending(const Mapping& mapping, Io& io) {
  auto pending = ReadPending(region_check::MappingReader(mapping), io);
  if (!pending.ok()) return;  // the mapping reader cannot fail
  pending_ = std::move(*pending);
  generations_ = pending_.Generations();
}

std::optional<CheckpointMeta> BatchJournal::Newer(uint32_t index, uint64_t generation,
                                                  Mapping& mapping,
                                                  std::vector<std::byte>& out) const {
  if (!PendingFor(index)) return std::nullopt;
  const slot::Header& header = pending_.newest[index]->header;
  if (header.generation <= generation) return std::nullopt;
  std::vector<std::byte> copy(header.length);
  shared_copy::CopyFromShared(copy.data(), mapping.data() + pending_.newest[index]->payload_offset,
                              copy.size());
  if (format::Checksum(copy) != header.payload_checksum) return std::nullopt;
  out = std::move(copy);
  CheckpointMeta meta;
  meta.generation = header.generation;
  meta.length = header.length;
  meta.commit_unix_ns = header.commit_unix_ns;
  meta.slot = header.slot;
  return meta;
}

}  // namespace regionstore
