// The state a store shares with the other processes that use it in this
// boot: the writer's intent marks, the publication word P and the word
// waiting readers sleep on. Protocol 1 keeps all of it in the store's own
// intent area (intent.h); protocol 2 keeps the boot-scoped part in the
// sidecar (sidecar.h) and only the sidecar's identity and the batch
// watermarks in the store. One implementation of this interface is chosen
// at open (SharedState::ForStore); recovery, the barriers, waiting readers
// and consistent loads ask it and test no protocol feature themselves.
// Internal.
#ifndef REGIONSTORE_LIB_SHARED_STATE_H_
#define REGIONSTORE_LIB_SHARED_STATE_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "intent.h"
#include "regionstore/io.h"
#include "regionstore/status.h"
#include "regionstore/store_info.h"
#include "sidecar.h"

namespace regionstore {

// `a` (monotonic nanoseconds) plus `b`, at most UINT64_MAX: the deadlines
// of waiting readers.
inline uint64_t SaturatingAdd(uint64_t a, std::chrono::nanoseconds b) {
  const auto add = static_cast<uint64_t>(std::max<int64_t>(b.count(), 0));
  return add > UINT64_MAX - a ? UINT64_MAX : a + add;
}

class SharedState {
 public:
  // What the state lives beside: the store's file, its mapping and layout,
  // and whether this handle is its writer. The pointers outlive the state.
  struct StoreFile {
    Io* io = nullptr;
    const std::string* path = nullptr;
    File* file = nullptr;
    Mapping* mapping = nullptr;
    const StoreInfo* info = nullptr;
    bool writable = false;
  };
  // The implementation the store's protocol calls for. A protocol 2
  // writer opens (or creates) the sidecar here and fails without it;
  // readers open theirs when they first need it. Errors: those of
  // sidecar::Open, saying that the writer needs the sidecar; kIOError.
  static Result<std::unique_ptr<SharedState>> Open(const StoreFile& store);
  virtual ~SharedState() = default;

  // The intent area's file offset; nullopt in stores whose region table
  // reaches into it (made before 0.4), which have no marks, no publication
  // word and nothing to wait on: every write below does nothing there.
  std::optional<uint64_t> area_offset() const { return area_; }
  // The publication word's file offset in the store (protocol 1's P and
  // wake word). Only with an intent area.
  uint64_t store_word_offset() const {
    return *area_ + uint64_t{intent::kPublicationEntry} * intent::kEntrySize;
  }

  // Writers. Stores intent entry `entry` where the next writer's open in
  // this boot reads it: by pwrite into the store, or into the sidecar's
  // page cache (no system call). Errors: those of the pwrite.
  virtual Status WriteEntry(uint32_t entry, const intent::EntryBytes& bytes) = 0;
  // Writes P's bytes: by pwrite, or (`through_mapping`, or wherever P is
  // the sidecar's) as two 8-byte stores, value then checksum, which a
  // reader between them finds not decoding (in flux). Errors: the pwrite's.
  virtual Status WritePublication(const intent::PublicationBytes& bytes, bool through_mapping) = 0;
  // After a write of P that left it even: wakes the readers that wait.
  virtual void Wake() = 0;
  // A writer's open: `area` is the store's intent area as read; its
  // boot-scoped entries are replaced by where this protocol keeps them.
  // Sets `marks_lost` when this boot's writer used another sidecar (its
  // marks are gone: every region must be recovered). Then writes what a
  // new open must before anything else changes (protocol 2: the sidecar's
  // identity with the next open count).
  virtual Status AdoptOnOpen(std::vector<std::byte>& area, const intent::BootId& boot,
                             bool boot_known, bool& marks_lost) = 0;
  // After every region was recovered: every mark is moot. P, the sidecar's
  // identity and the batch watermarks describe the store and stay.
  virtual Status ClearMarks() = 0;
  // Whether durable commits that share a barrier (Store::Rep's group
  // commits) may each keep their commit mark in an entry of its own: in
  // protocol 2 the marks are stores into the sidecar, and every release
  // that opens such a store reads marks from any entry. Protocol 1 writes
  // marks into the store file and keeps one commit mark: no.
  virtual bool MarksPerCommit() const { return false; }
  // After a barrier that made commit `generation` of region `region`
  // durable returned (or an open found it on disk): where readers in other
  // processes read it (Store::DurableGeneration on a read-only handle).
  // Protocol 2 only; nothing in protocol 1.
  virtual void PublishDurable(uint32_t /*region*/, uint64_t /*generation*/) {}
  // Readers: the durable point the writer published for region `region`;
  // 0 when none is known (no writer has published one since its open, or
  // its sidecar keeps none). Errors: kInvalidArgument (protocol 1, or a
  // region past the sidecar's durable points), those of opening the
  // writer's sidecar (kBusy when this handle cannot read it).
  virtual Result<uint64_t> ReadDurable(uint32_t region) const;

  // Readers that wait (Store::WaitForNewer): the word they read before
  // looking at the headers and sleep on while it holds what they read.
  class Waiter {
   public:
    virtual ~Waiter() = default;
    // The word's value now.
    virtual uint32_t Read() const = 0;
    // At each recheck: whether the waiter has a new word to read (protocol
    // 2: the writer's sidecar, which it could not open before).
    virtual bool Recheck() = 0;
    // Sleeps while the word holds `seen`, until `until` (monotonic ns) or a
    // wake. kOk or kTimedOut: look again; kBusy: the word moved before the
    // waiter could register, look again at once; other errors are real.
    virtual Status Sleep(uint32_t seen, uint64_t until) = 0;
  };
  virtual std::unique_ptr<Waiter> StartWaiting() const = 0;

  // Readers of several regions (Store::LoadSet): what makes a snapshot of
  // their headers one instant.
  struct Guard {
    // P to read before and after (the store's, or the writer's sidecar's).
    const std::byte* word = nullptr;
    // Protocol 2 without the writer's sidecar: the identity entry before
    // the snapshot, which must hold, with no writer, until after it.
    std::optional<intent::EntryBytes> identity_before;
    std::shared_ptr<const sidecar::Sidecar> keep;  // keeps `word` mapped
  };
  // Before a snapshot: fills `guard` (whose `keep` a previous attempt may
  // have set) and returns true; false asks the caller to pause and try
  // again (a writer is opening, or uses a sidecar this handle cannot
  // reach: `stale` counts those). Errors: kBusy, saying why (a writer holds
  // the store and this handle cannot read its P).
  virtual Result<bool> BeginSnapshot(Guard& guard, int& stale) const = 0;
  // After it: whether the snapshot taken under `guard` was one instant
  // (the caller compares P read again itself).
  virtual bool SnapshotHeld(const Guard& guard) const = 0;

 protected:
  explicit SharedState(const StoreFile& store);
  StoreFile store_;
  std::optional<uint64_t> area_;
};

}  // namespace regionstore

#endif  // REGIONSTORE_LIB_SHARED_STATE_H_
