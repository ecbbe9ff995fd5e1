// Many committing threads on one writable handle (docs/CHECKPOINTS.md,
// "Many committing threads"): the gate every error-reporting barrier call
// passes, and the group of durable commits that share one barrier.
// Internal; no I/O here.
#ifndef REGIONSTORE_LIB_GROUP_COMMIT_H_
#define REGIONSTORE_LIB_GROUP_COMMIT_H_

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "regionstore/status.h"
#include "test_hooks.h"

namespace regionstore {

// A file has one writeback error state, which the first fsync-family call
// to see an error consumes (Linux since 4.13, per open file description):
// of two barrier calls in flight at once, one can return success over
// pages the other's failure lost. Every call that can report that error
// (fdatasync, msync(MS_SYNC), pwritev2(RWF_DSYNC), sync_file_range's wait)
// runs through Run, one at a time, and once one failed every later one
// returns that failure, whatever its own call said. The failure is
// recorded before the gate opens, so no call that starts after it can
// report success. Thread-safe. Callers may hold the handle's mutex (a
// group's leader does not); nothing run through the gate takes it.
class SyncGate {
 public:
  template <typename Call>
  Status Run(Call&& call) {
    std::lock_guard lock(mutex_);
    Status status = call();
    if (!status.ok()) {
      if (failure_.ok()) failure_ = status;
      return status;
    }
    return failure_;
  }

 private:
  std::mutex mutex_;
  Status failure_;
};

// Durable commits that share barriers. A commit takes a ticket once every
// write it needs durable has returned; a barrier covers every ticket taken
// before its system call began, never one taken after (a write completed
// after fdatasync began may be anywhere when it returns). The first commit
// to wait while no barrier of the group is in flight leads: it runs one
// barrier for every ticket taken so far and wakes the others, who return
// when a barrier that covers them has returned, or lead the next one.
// With one committing thread the leader is always alone: no wait, and the
// barrier is the one its commit would have made (`alone`).
//
// Under the handle's mutex: every member is read and written with it held,
// and the leader's barrier call releases it (Store::Rep::Unlocked).
class CommitGroup {
 public:
  // After a durable commit's writes returned (payload, header, publication
  // word): its ticket.
  uint64_t Enqueue() { return ++queued_; }

  // Runs the group's barrier for ticket `ticket`, as its leader or its
  // follower. `lead(alone)` is called with the mutex held when this thread
  // leads (`alone`: the barrier covers its ticket only), makes the barrier
  // and returns its status with the mutex held again. `wait()` waits for
  // the group's condition variable, `notify_all()` wakes its waiters (and
  // whoever waits for the slots a barrier's cover pinned). Returns OK once
  // a barrier that covers `ticket` returned OK; the failure of the barrier
  // that covered it or of any barrier before (the handle is poisoned then,
  // and no later barrier reports success). Templates, not std::function:
  // one committing thread pays no allocation for them.
  template <typename Lead, typename Wait, typename NotifyAll>
  Status Await(uint64_t ticket, const Lead& lead, const Wait& wait, const NotifyAll& notify_all) {
    for (;;) {
      if (covered_ >= ticket) return Status::Ok();
      if (!failure_.ok()) return failure_;
      if (!leading_) {
        leading_ = true;
        // Taken before the call: what it covers.
        uint64_t upto = queued_;
        const bool alone = upto == ticket && covered_ + 1 == ticket;
        Status status = lead(alone);
        // The broken variant counts as covered what completed while the
        // call ran.
        if (internal::Mutated(internal::Mutation::kGroupCoversLate)) upto = queued_;
        leading_ = false;
        if (status.ok()) {
          covered_ = std::max(covered_, upto);
        } else if (failure_.ok()) {
          failure_ = status;
        }
        notify_all(waiting_ != 0);
        continue;
      }
      if (internal::Mutated(internal::Mutation::kFollowerReturnsEarly)) return Status::Ok();
      ++waiting_;
      wait();
      --waiting_;
    }
  }

 private:
  uint64_t queued_ = 0;   // tickets taken
  uint64_t covered_ = 0;  // the highest ticket a returned barrier covered
  bool leading_ = false;
  uint32_t waiting_ = 0;  // followers asleep in wait()
  Status failure_;
};

}  // namespace regionstore

#endif  // REGIONSTORE_LIB_GROUP_COMMIT_H_
