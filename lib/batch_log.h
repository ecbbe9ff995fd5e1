// The batch log of a writer's handle: where the log is, the ids batches
// take, which of them are done and which a whole-file barrier made
// durable, and the watermark that lets a member stop depending on its
// record (docs/CHECKPOINTS.md, "Batches"; batch.h has the bytes). State
// only: the writes it asks for (a watermark entry, a barrier before a log
// unit is reused) are the handle's (batch_log.cc's Store::Rep methods).
// Internal.
//
// An id is spent once taken (Spend), done once every write of its batch
// returned (Done), durable once a whole-file barrier that began after it
// was done returned (Cover/Returned, the barrier bookkeeping's rule:
// ledger.h). Unit id % 32 holds the record of batch id - 32 until a
// durable watermark covers that batch (UnitReusable).
#ifndef REGIONSTORE_LIB_BATCH_LOG_H_
#define REGIONSTORE_LIB_BATCH_LOG_H_

#include <cstdint>
#include <optional>

#include "batch.h"
#include "regionstore/store_info.h"

namespace regionstore {

class BatchLog {
 public:
  // The store's log, if it has one (batch::LogOffset).
  static std::optional<BatchLog> For(const StoreInfo& info);

  uint64_t offset() const { return offset_; }
  // The file offset of the unit batch `id`'s record goes to.
  uint64_t RecordOffset(uint64_t id) const { return batch::UnitOffset(offset_, id); }

  // Ids. The one the next batch takes; taken (the id is spent whatever
  // happens to its batch: its traces carry it); every write of it done.
  uint64_t next_id() const { return next_id_; }
  void Spend(uint64_t id) { next_id_ = id + 1; }
  void Done(uint64_t id) { last_done_ = id; }
  // Whether batch `id` may write its record over the unit of batch
  // id - 32: a durable watermark covers that batch.
  bool UnitReusable(uint64_t id) const {
    return id <= batch::kUnits || watermark_durable_ >= id - batch::kUnits;
  }
  // Whether a durable watermark covers every batch before `id`.
  bool CaughtUp(uint64_t id) const { return watermark_durable_ >= id - 1; }

  // A whole-file barrier: what it makes durable if it returns, taken before
  // its call (the batches done and the watermark as last written), and what
  // it then made durable.
  struct Cover {
    uint64_t batches_done = 0;
    uint64_t watermark = 0;
  };
  Cover Begin() const { return {last_done_, watermark_written_.w}; }
  void Returned(const Cover& cover);

  // The watermark to write after a barrier raised what is durable (nullopt:
  // nothing new), and the one written.
  std::optional<batch::Watermark> NextWatermark() const;
  void WatermarkWritten(const batch::Watermark& written) { watermark_written_ = written; }

  // A writer's open. `found` is the watermark on disk and `unresolved`
  // says a batch of this boot did not return; every batch the last writer
  // may have issued is complete or gone by now, and ids continue above
  // them and above `journal_max_id`. Returns the open (not clean)
  // watermark to write before the open's barrier.
  batch::Watermark Opened(const batch::Watermark& found, bool unresolved, uint64_t journal_max_id);
  // After the open's barrier returned: every id below next_id() is durable.
  void AfterOpenBarrier();
  // At a clean close: the watermark that tells the next open no batch above
  // it was issued, if true (every batch issued is done and durable).
  std::optional<batch::Watermark> CleanWatermark() const;

 private:
  explicit BatchLog(uint64_t offset) : offset_(offset) {}
  uint64_t offset_ = 0;
  uint64_t next_id_ = 1;
  uint64_t last_done_ = 0;  // the newest batch whose writes are all done
  uint64_t batches_durable_ = 0;
  batch::Watermark watermark_written_;  // the entry last written
  uint64_t watermark_durable_ = 0;      // the watermark known on disk
};

}  // namespace regionstore

#endif  // REGIONSTORE_LIB_BATCH_LOG_H_
