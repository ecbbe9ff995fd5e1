// The batch journal of a store (protocol 2) as one object: where its next
// record goes and the buffer records are built in (a writer's appends), the
// replay of its chain at a writer's open, and the records a reader must
// take into account until a writer has replayed them (Load, LoadSet,
// VerifyRegions). Whether a store has a journal is decided once, by
// BatchJournal::ForStore; the callers ask the object and test no layout
// feature themselves. The record bytes and the chain reader are
// journal.{h,cc}'s (pure); docs/CHECKPOINTS.md ("Batches: a journal in every
// store") is the protocol. The object makes no barrier of its own: a
// writer's Store::Rep issues them (AppendJournalRecord, Barrier). Its I/O
// goes through the File or reader the caller passes. Internal.
#ifndef REGIONSTORE_LIB_BATCH_JOURNAL_H_
#define REGIONSTORE_LIB_BATCH_JOURNAL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "batch.h"
#include "journal.h"
#include "regionstore/checkpoint.h"
#include "regionstore/io.h"
#include "regionstore/status.h"
#include "regionstore/store_info.h"
#include "slot.h"

namespace regionstore {

class BatchJournal {
 public:
  // The journal of the store laid out as `info` says (which must outlive
  // the object), or nullptr when it has none (journal::Offset).
  static std::unique_ptr<BatchJournal> ForStore(const StoreInfo& info);

  // --- A writer's appends -------------------------------------------------

  // Whether a batch whose members hold payloads of `lengths` bytes goes
  // through the journal: its record fits in half of it.
  bool Takes(std::span<const uint64_t> lengths) const;
  // Assembles a record of `members` (each one's payload the pieces of
  // `pieces` at its index) in the record buffer, but for its head, whose
  // bytes stay zero (the head needs the images' checksums). The caller's
  // bytes are read once, here. Returns each member's payload in the buffer:
  // the bytes every checksum and the slots' writes must come from.
  std::vector<std::span<const std::byte>> Assemble(std::span<const journal::Member> members,
                                                   std::span<const PayloadPieces> pieces);
  // Fills in the head of batch `id`'s record assembled above, whose members
  // get `headers` and hold `payloads` (the images Assemble returned).
  void SealHead(uint64_t id, std::span<const journal::Member> members,
                std::span<const slot::HeaderBytes> headers,
                std::span<const PayloadPieces> payloads);
  // Whether the record assembled does not fit between the write position
  // and the journal's end: a whole-file barrier must come first (after
  // which RestartIfNoneAppendedSince sends the position back to 0).
  bool NeedsBarrierFirst() const;
  // Writes the record assembled at the write position by `write` (which
  // must make it durable before it returns: it is the batch's commit
  // point), then advances the position past it. A failed write withdraws
  // the record (Forget) and is returned. Returns the record's file offset.
  using DurableWrite =
      std::function<Status(uint64_t at, std::span<const std::span<const std::byte>> parts)>;
  Result<uint64_t> Append(File& file, const DurableWrite& write);
  // The record at `at`, whose batch is not reported as committed, must not
  // be applied by a later open in this boot: its first unit is zeroed, best
  // effort (after a power loss the record may still be whole on disk, like
  // any write whose barrier failed).
  static void Forget(File& file, uint64_t at);
  // The mark a whole-file barrier takes as it begins; once it returned,
  // RestartIfNoneAppendedSince(mark) sends the write position back to the
  // journal's start unless a record was appended meanwhile: every record
  // before the mark has its members durable in their slots.
  // The mark counts appends, not positions: barriers may overlap (a
  // group's and a call's own), and a position restarted by one and reached
  // again by new records would look unchanged to the other.
  uint64_t AppendMark() const { return appends_; }
  void RestartIfNoneAppendedSince(uint64_t mark) {
    if (appends_ == mark) pos_ = 0;
  }

  // --- A writer's open ----------------------------------------------------

  // What the replay writes through: the store's file (pwrite; `path` names
  // its errors), and the writer's publication pair and page rewrite
  // (Store::Rep::BeginPublishing, Store::Rep::RewriteRange).
  struct ReplayWriter {
    File* file = nullptr;
    const std::string* path = nullptr;
    std::function<Status()> begin_publishing;
    std::function<Status(uint64_t begin, uint64_t end, const char* operation)> rewrite;
  };
  // Before the open reads any slot header for the batches: each record of
  // the chain (from the journal's start, while records are whole and their
  // ids rise) above the watermark `found` is applied again, member by
  // member, unless the member's region holds a newer commit; a member found
  // in place is rewritten, so that the open's fdatasync covers it; then its
  // batch's record in the batch log. Sets `must_mark` when it wrote
  // anything, the write position for the next record and max_id(). The
  // record of `failed` (the batch whose barrier mark of this boot says its
  // call never returned) is not applied but removed, its first unit zeroed:
  // the batch is judged as a logged batch whose barrier did not return is
  // (kept if whole, else withdrawn), so that what readers were shown after
  // the kill stays.
  Status Replay(const ReplayWriter& writer, const batch::Watermark& found,
                std::optional<uint64_t> failed, bool& must_mark);
  // The highest batch id in the chain, as Replay found it (0 before).
  uint64_t max_id() const { return max_id_; }

  // --- Readers ------------------------------------------------------------

  // One region's newest member in the chain above the watermark.
  struct PendingMember {
    journal::Member member;
    slot::Header header;          // its slot header, from the record's head
    uint64_t payload_offset = 0;  // file offset of its payload, in the journal
  };
  struct Pending {
    // Per region, when the chain holds a record above the watermark (else
    // empty): the member a writer's open would replay.
    std::vector<std::optional<PendingMember>> newest;
    // What the chain passed over (journal::Chain::damaged).
    std::vector<journal::DamagedRecord> damaged;
    // Each region's pending generation (0: none), for
    // region_check::BatchContext; empty when `newest` is.
    std::vector<uint64_t> Generations() const;
  };
  // The records no writer of this boot has replayed (nothing when one has,
  // by the sidecar identity entry of the intent area, or when the store has
  // no intent area): the intent area and the chain, read through `read`,
  // then `io`'s boot id. Errors: those of `read`.
  Result<Pending> ReadPending(const journal::ReadAt& read, Io& io) const;
  // A read-only handle's open: what ReadPending finds through `mapping`,
  // kept. There is something only when no writer of this boot has opened
  // the store since the journal was last written (after a power loss or a
  // reboot: the sidecar identity entry names another boot). Load and
  // LoadSet return a region's pending member when its slots hold nothing
  // as new, so a reader sees what the next writer will (docs/CHECKPOINTS.md,
  // "Batches: a journal in every store").
  void KeepPending(const Mapping& mapping, Io& io);
  bool has_pending() const { return !pending_.newest.empty(); }
  // Whether region `index` has a pending member (false without any).
  bool PendingFor(uint32_t index) const {
    return has_pending() && pending_.newest[index].has_value();
  }
  // The pending generations (Pending::Generations), or nullptr without any.
  const std::vector<uint64_t>* pending_generations() const {
    return generations_.empty() ? nullptr : &generations_;
  }
  // Region `index`'s pending member if it is newer than `generation`: its
  // payload copied out of `mapping` into `out`, checked against its header
  // (a mismatch means a writer has replayed the journal since and moved on:
  // nullopt, the slots hold it).
  std::optional<CheckpointMeta> Newer(uint32_t index, uint64_t generation, Mapping& mapping,
                                      std::vector<std::byte>& out) const;

 private:
  BatchJournal(const StoreInfo& info, uint64_t offset, std::optional<uint64_t> log_offset)
      : info_(&info), offset_(offset), log_offset_(log_offset) {}
  // Replay's steps (batch_journal.cc).
  Result<std::vector<journal::ChainRecord>> ReadReplayChain(const ReplayWriter& writer,
                                                            const batch::Watermark& found,
                                                            std::optional<uint64_t> failed,
                                                            bool& must_mark);
  Status ReplayRecord(const ReplayWriter& writer, std::span<const journal::ChainRecord> chain,
                      size_t c, uint64_t watermark, bool& must_mark);

  const StoreInfo* info_;
  uint64_t offset_;                     // the journal's file offset
  std::optional<uint64_t> log_offset_;  // the batch log's
  // Writers: where the next record goes, relative to offset_; the buffer
  // records are assembled in; the chain's highest id at open.
  uint64_t pos_ = 0;
  uint64_t appends_ = 0;  // records appended by this handle
  std::vector<std::byte> record_;
  uint64_t max_id_ = 0;
  // Read-only handles: what KeepPending found.
  Pending pending_;
  std::vector<uint64_t> generations_;
};

}  // namespace regionstore

#endif  // REGIONSTORE_LIB_BATCH_JOURNAL_H_
