// The barrier bookkeeping of a writer's handle: which commits made without
// a barrier of their own (kNone, kAsync, and the slot writes of journaled
// batches) are still only in the page cache, and what a whole-file barrier
// that returned made durable. Internal; no I/O here.
//
// The contract, for every caller (today one thread per handle; a
// background barrier or several committers sharing one need no other rule):
//
//  1. A commit without a barrier calls VolatileStarted() before its first
//     write reaches the page cache, and VolatileCompleted() once every one
//     of its writes has returned (payload, header, publication word).
//  2. A whole-file barrier calls Begin() before it issues its system call,
//     and, only if that call returned success, Returned() with what Begin()
//     gave it. A failed barrier calls nothing more: it covered nothing.
//  3. A barrier covers exactly the commits that completed before it began.
//     fdatasync writes back what is dirty when it is called; a write that
//     completes after that may or may not be on disk when it returns. So a
//     commit completed after Begin() stays volatile when that barrier
//     returns, even if it is its region's newest commit by then.
//  4. Covers only ever raise what is durable: barriers may overlap and
//     return in any order, and the caller moves a region's durable slot
//     only to a commit newer than the durable one it has (the slot still
//     holding that commit: Returned() names slot and generation).
//  5. The kVolatilePending mark may be cleared by a returned barrier only
//     if no commit without a barrier was in flight when it began and none
//     started since (MarkClearable): otherwise a commit that a later
//     failed barrier loses would have no mark telling the next open.
//
// Not synchronised: callers serialise their calls into it (the handle's
// one thread today), while the barrier's system call itself runs outside.
#ifndef REGIONSTORE_LIB_LEDGER_H_
#define REGIONSTORE_LIB_LEDGER_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace regionstore {

class DurabilityLedger {
 public:
  // A commit without a barrier: region, slot and generation.
  struct Commit {
    uint32_t region = 0;
    uint32_t slot = 0;
    uint64_t generation = 0;
  };
  // What a barrier covers, taken when it began.
  struct Cover {
    std::vector<Commit> commits;  // each region's newest volatile commit then
    uint64_t started = 0;         // volatile commits started by then
    bool none_in_flight = true;   // and every one of them had completed
  };
  // What a returned barrier made durable.
  struct Covered {
    std::vector<Commit> durable;  // for the caller's region state (rule 4)
    bool mark_clearable = false;  // rule 5
  };

  // Sizes the per-region bookkeeping; forgets every volatile commit.
  void Reset(uint32_t region_count);

  // Rule 1.
  void VolatileStarted() { ++started_; }
  void VolatileCompleted() { ++completed_; }
  // A commit without a barrier of `commit.region` returned: it is the
  // region's newest, durable at the first barrier that begins after now.
  void RecordVolatile(const Commit& commit);
  // A commit of `region` made durable by its own barrier returned: its
  // region's earlier volatile commit needs no whole-file barrier any more.
  void RecordDurable(uint32_t region);

  // The kVolatilePending mark: down (set by the first commit without a
  // barrier since the last barrier that cleared it, or found by the open).
  bool mark_down() const { return mark_down_; }
  void set_mark_down(bool down) { mark_down_ = down; }

  // Rule 2.
  Cover Begin() const;
  Covered Returned(const Cover& cover);

 private:
  // Per region: its newest commit without a barrier not yet covered by a
  // barrier that returned; `pending_` lists the regions that have one.
  std::vector<std::optional<Commit>> newest_volatile_;
  std::vector<uint32_t> pending_;
  std::vector<bool> listed_;  // per region: in pending_
  uint64_t started_ = 0;
  uint64_t completed_ = 0;
  bool mark_down_ = false;
};

}  // namespace regionstore

#endif  // REGIONSTORE_LIB_LEDGER_H_
