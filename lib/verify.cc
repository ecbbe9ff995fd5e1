// VerifyRegions: every slot of every region, and optionally the data area,
// read with pread only (no mapping, no lock), so that a bad disk gives an
// error and not SIGBUS.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batch_journal.h"
#include "region_check.h"
#include "regionstore/checkpoint.h"
#include "store_rep.h"

namespace regionstore {
namespace {

// Reads the whole data area (it has no checksums: this finds unreadable
// blocks), calling `advanced` with the bytes of each read.
Status ReadDataArea(File& file, const std::string& path, const StoreInfo& info,
                    const std::function<void(uint64_t length)>& advanced) {
  std::vector<std::byte> chunk(std::min<uint64_t>(region_check::kChunk, info.data_size));
  for (uint64_t offset = 0; offset < info.data_size; offset += chunk.size()) {
    const uint64_t length = std::min<uint64_t>(chunk.size(), info.data_size - offset);
    auto got = file.ReadAt(info.data_offset + offset, std::span(chunk).first(length));
    if (!got.ok()) {
      return got.status().WithOperation("read data area at offset " + std::to_string(offset), path);
    }
    if (*got != length) {
      return Status::Error(StatusCode::kCorruption, "read data area", path,
                           "the file ends inside the data area (truncated while open?)");
    }
    advanced(length);
  }
  return Status::Ok();
}

// A journaled batch that no writer of this boot has replayed
// (BatchJournal::ReadPending): a member newer than what its region's slots
// hold is the region's newest commit, as Load returns it.
void ApplyJournal(const std::optional<BatchJournal::PendingMember>& newest, RegionReport& report) {
  if (!newest) return;
  const journal::Member& member = newest->member;
  if (report.has_commit && report.generation >= member.generation) return;
  report.has_commit = true;
  report.journaled = true;
  report.active_slot = member.slot;
  report.generation = member.generation;
  report.length = member.length;
  report.commit_unix_ns = newest->header.commit_unix_ns;
  // A torn newest header below the journaled commit (or its own slot, torn
  // by the power loss) is no longer the region's newest: the replay writes
  // over it or a newer commit stands above it.
  if (report.torn) {
    SlotReport& torn = report.slots[report.torn_slot];
    torn.state = SlotState::kIncomplete;
    torn.reason = "payload checksum mismatch; the batch journal holds generation " +
                  std::to_string(member.generation) +
                  " of this region, which the next writer's open writes into its slot";
    report.torn = false;
    report.torn_slot = 0;
    report.torn_generation = 0;
  }
  report.damaged = false;
}

}  // namespace

Result<VerifyReport> VerifyRegions(const std::string& path, const VerifyOptions& options) {
  Io& os = options.io != nullptr ? *options.io : *Io::Default();
  auto file = OpenStoreFile(os, path, OpenMode::kReadOnly, options.symlinks);
  if (!file.ok()) return file.status();
  auto read_info = ReadValidatedInfo(**file, path);
  if (!read_info.ok()) return read_info.status();
  VerifyReport verified;
  verified.info = std::move(*read_info);
  const StoreInfo& info = verified.info;
  if (options.on_info) options.on_info(info);
  // At most what this call reads: headers (and payloads, up to capacity) of
  // every slot, the data area. The last report says all of it.
  uint64_t total = 0;
  for (const RegionEntry& region : info.regions) {
    total +=
        region.slot_count * (slot::kHeaderSize + (options.check_payloads ? region.capacity : 0));
  }
  if (options.read_data_area) total += info.data_size;
  uint64_t done = 0;
  const region_check::ReadFn pread = region_check::PreadReader(**file, path);
  const region_check::ReadFn read = [&](uint64_t offset, std::span<std::byte> out) -> Status {
    Status s = pread(offset, out);
    // Headers re-read during the payload check can push this past `total`.
    done = std::min(total, done + out.size());
    if (s.ok() && options.progress) options.progress(done, total);
    return s;
  };
  auto batch = region_check::ReadBatchContext(pread, info);
  if (!batch.ok()) return batch.status();
  BatchJournal::Pending pending;
  if (const std::unique_ptr<BatchJournal> journal = BatchJournal::ForStore(info)) {
    auto read_pending = journal->ReadPending(pread, os);
    if (!read_pending.ok()) return read_pending.status();
    pending = std::move(*read_pending);
  }
  for (const journal::DamagedRecord& bad : pending.damaged) {
    verified.damaged_journal_records.push_back(
        {bad.offset, bad.length, bad.head_id.value_or(0), bad.next_id});
  }
  const std::vector<uint64_t> journal_generations = pending.Generations();
  if (!journal_generations.empty()) batch->journal_generations = &journal_generations;
  verified.regions.reserve(info.regions.size());
  for (uint32_t i = 0; i < info.regions.size(); ++i) {
    auto report =
        region_check::ExamineRegion(read, info.regions[i], i, options.check_payloads, &*batch);
    if (!report.ok()) return report.status();
    if (!pending.newest.empty()) ApplyJournal(pending.newest[i], *report);
    if (options.on_region) options.on_region(i, *report);
    verified.regions.push_back(std::move(*report));
  }
  if (options.read_data_area) {
    if (Status s = ReadDataArea(**file, path, info,
                                [&](uint64_t length) {
                                  done = std::min(total, done + length);
                                  if (options.progress) options.progress(done, total);
                                });
        !s.ok()) {
      return s;
    }
  }
  if (options.progress) options.progress(total, total);
  return verified;
}

}  // namespace regionstore
