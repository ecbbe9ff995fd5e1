// The batch log (batch_log.h): its state, and the writes a handle makes
// for it: a watermark entry after a barrier raised what is durable, the
// barriers before a log unit is reused, the clean watermark at close.
#include "batch_log.h"

#include <algorithm>
#include <string>

#include "region_check.h"
#include "store_rep.h"

namespace regionstore {

std::optional<BatchLog> BatchLog::For(const StoreInfo& info) {
  const std::optional<uint64_t> offset = batch::LogOffset(info);
  if (!offset) return std::nullopt;
  return BatchLog(*offset);
}

void BatchLog::Returned(const Cover& cover) {
  watermark_durable_ = std::max(watermark_durable_, cover.watermark);
  batches_durable_ = std::max(batches_durable_, cover.batches_done);
}

std::optional<batch::Watermark> BatchLog::NextWatermark() const {
  if (batches_durable_ <= watermark_written_.w) return std::nullopt;
  return batch::Watermark{batches_durable_, watermark_written_.sequence + 1, false};
}

batch::Watermark BatchLog::Opened(const batch::Watermark& found, bool unresolved,
                                  uint64_t journal_max_id) {
  // Batches of the last writer had ids up to found.w + 32 at most (a batch
  // reuses a log unit only once a durable watermark covers the batch 32
  // before it); every one of them is now complete or gone.
  next_id_ = (found.clean && !unresolved ? found.w : found.w + batch::kUnits) + 1;
  next_id_ = std::max(next_id_, journal_max_id + 1);
  return {found.w, found.sequence + 1, false};
}

void BatchLog::AfterOpenBarrier() {
  // The open left every id below next_id_ complete or gone, and its
  // fdatasync made that durable, with the open watermark.
  watermark_durable_ = watermark_written_.w;
  last_done_ = batches_durable_ = next_id_ - 1;
}

std::optional<batch::Watermark> BatchLog::CleanWatermark() const {
  if (last_done_ + 1 != next_id_ || batches_durable_ < last_done_) return std::nullopt;
  return batch::Watermark{last_done_, watermark_written_.sequence + 1, true};
}

// Declared in region_check.h, which judges batches by it; here because the
// log's place and its watermark are this file's to know.
Result<region_check::BatchContext> region_check::ReadBatchContext(const ReadFn& read,
                                                                  const StoreInfo& info) {
  BatchContext context;
  context.info = &info;
  context.log_offset = batch::LogOffset(info);
  if (!context.log_offset) return context;
  std::vector<std::byte> area(intent::kAreaSize);
  if (Status s = read(*intent::AreaOffset(info), area); !s.ok()) return s;
  context.watermark = batch::ReadWatermark(area).w;
  return context;
}

Result<uint64_t> Store::Rep::NextBatchId(Durability durability, const char* operation) {
  const uint64_t id = batch_log->next_id();
  if (id > batch::kMaxBatchId) {
    return Status::Error(StatusCode::kCorruption, operation, path,
                         "the batch id counter is exhausted");
  }
  if (Status s = MakeLogUnitReusable(id, durability); !s.ok()) return s;
  return id;
}

Status Store::Rep::MakeLogUnitReusable(uint64_t id, Durability durability) {
  // Unit id % 32 holds the record of batch id - 32, whose members may still
  // need it: only a durable watermark at or above that batch frees it. When
  // it does not, catch up all the way, so that the next 31 batches need
  // nothing: one barrier makes every batch so far durable (and writes a
  // watermark that says so), the next makes that watermark durable.
  if (batch_log->UnitReusable(id)) return Status::Ok();
  for (int round = 0; round < 3 && !batch_log->CaughtUp(id); ++round) {
    ++stats.batch_log_barriers;
    if (Status s = Barrier({.kind = BarrierKind::kFdatasync,
                            .counted_as = durability,
                            .operation = "commit batch: fdatasync (free a batch log unit)"});
        !s.ok()) {
      return s;
    }
  }
  if (!batch_log->UnitReusable(id)) {
    return Status::Error(
        StatusCode::kCorruption, "commit batch", path,
        "the batch log's watermark does not advance (batch " + std::to_string(id) + ")");
  }
  return Status::Ok();
}

Status Store::Rep::WriteWatermark(const batch::Watermark& watermark) {
  return SetMark(batch::WatermarkEntryIndex(watermark.sequence), batch::WatermarkEntry(watermark));
}

Status Store::Rep::RaiseWatermark() {
  const std::optional<batch::Watermark> next =
      batch_log ? batch_log->NextWatermark() : std::nullopt;
  if (!next) return Status::Ok();
  if (Status s = WriteWatermark(*next); !s.ok()) {
    return FailedWrite(s, "pwrite (batch watermark)");
  }
  batch_log->WatermarkWritten(*next);
  return Status::Ok();
}

Status Store::Rep::AfterOpenBarrier() {
  if (!batch_log) return Status::Ok();
  batch_log->AfterOpenBarrier();
  return RaiseWatermark();
}

Store::Rep::~Rep() {
  // A commit still being filled in place can no longer reach this store.
  if (in_place && in_place->owner != nullptr) *in_place->owner = nullptr;
  if (CurrentForkGeneration() != opened_fork_generation) {
    // A child of fork() destroys its inherited copy: it writes nothing (two
    // processes must not write through one handle), and the barrier in
    // flight and its thread are the parent's.
    if (flusher) Flusher::Abandon(std::move(flusher));
    return;
  }
  // A background barrier in flight is waited for and completed: its
  // thread uses the file, and what it covered is recorded (its failure
  // poisons, and the marks it leaves tell the next open).
  (void)FinishBackgroundSync(/*wait=*/true);
  // A clean watermark tells the next open that no batch above it was ever
  // issued, so it reads no slot header. True only when every batch this
  // handle issued is durable; written without a barrier (if it is lost, the
  // open watermark still on disk makes the next open check every header).
  if (!writable || !poison.ok() || !batch_log || !file) return;
  if (const std::optional<batch::Watermark> clean = batch_log->CleanWatermark()) {
    (void)WriteWatermark(*clean);
  }
}

}  // namespace regionstore
