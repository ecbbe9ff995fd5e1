// The sidecar of a protocol 2 store: PATH.shm, a 72 KiB file beside the
// store that every process using the store maps too, for the state that is
// shared between processes and scoped to one boot: the wake word, the
// publication word P, the writer's intent marks and the durable points
// readers ask for (docs/CHECKPOINTS.md, "Protocol 2", and docs/FORMAT.md,
// "Sidecar"). Nothing in it is ever
// synced: a store into it is a store into the page cache, which is all a
// reader or the next writer in the same boot reads, and after a power cut
// the marks are another boot's and recovery ignores them. So none of this
// state costs a durable commit a write request, or any commit a system
// call.
//
// The wake word: a 32-bit counter the writer advances by 2 after every
// change of a visible commit, with bit 0 set by a reader about to sleep on
// it. Both sides change it by read-modify-writes, so one of them sees the
// other: either the writer's update finds the bit and wakes, or the
// reader's compare-and-swap fails because the word moved (and the reader
// looks again instead of sleeping). With nobody waiting the writer makes
// no system call.
//
// The identity: a random id the writer (holding the store's lock) gives the
// sidecar, recorded with the file's inode and the boot id in the store's own
// intent area (intent::kSidecarEntry). A writer's open that finds this
// boot's entry naming another sidecar (another id, or the id on another
// inode: a copy) knows the sidecar was replaced and its marks lost, and
// recovers every region; a reader trusts only the sidecar the entry names
// and opens the path again otherwise. Readers never create the file.
//
// The trust rule (docs/FORMAT.md, "Sidecar"): whoever can write the sidecar
// steers the writer's recovery and what consistent loads trust, so nobody
// may write it who cannot write the store. At every open, by writers and
// readers alike, the file must belong to the store's owner, to root or to
// the opening process's user, and grant no write permission the store does
// not (group write only with the store's group). The writer creates it so
// (the store's group and permission bits; a root writer hands it to the
// store's owner) and refuses one that breaks the rule; a reader does not
// trust one (it polls, and its consistent loads need the writer gone).
#ifndef REGIONSTORE_LIB_SIDECAR_H_
#define REGIONSTORE_LIB_SIDECAR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "regionstore/io.h"
#include "regionstore/status.h"

namespace regionstore::sidecar {

// The size this release makes: the 8 KiB of the first layout, then the
// durable points. Older releases made (and accept only) 8 KiB sidecars
// with the first magic; a writer of this release grows such a file in
// place, under the store's lock, and gives it the second magic, which the
// older releases refuse: their writers would leave durable points standing
// that no longer describe the store (a store file restored or replaced
// under them).
inline constexpr uint64_t kLegacySize = 8192;
// Bytes 8192 on: one 64-bit word per region, in table order, for the first
// kDurableRegions regions: the generation of the region's newest commit
// the writer knows durable (0: none known). Zeroed at every writer's open
// and stored to (release) only after the barrier that made it durable
// returned, so a reader never sees a commit durable that a power cut can
// take back.
inline constexpr uint64_t kDurableOffset = kLegacySize;
inline constexpr uint32_t kDurableRegions = 8192;
inline constexpr uint64_t kSize = kDurableOffset + uint64_t{kDurableRegions} * 8;
// Bytes 0-7: the magic once an opener that can write it has claimed it (a
// fresh file is all zeros, which is as valid): "rgnsshm2" for kSize,
// "rgnsshm1" in a kLegacySize file an older writer made.
inline constexpr uint64_t kMagicOffset = 0;
inline constexpr uint64_t kLegacyMagic = 0x316d6873736e6772;  // "rgnsshm1", little-endian
inline constexpr uint64_t kMagic = 0x326d6873736e6772;        // "rgnsshm2"
// Bytes 8-15: the id the store's writer gave it (0: none yet).
inline constexpr uint64_t kIdOffset = 8;
// The wake word, alone in its cache line.
inline constexpr uint64_t kWakeOffset = 64;
inline constexpr uint32_t kWaiterBit = 1;
// Bytes 4096-8191: the boot-scoped entries of the intent area (intent.h),
// entry for entry: the marks, and P at intent::kPublicationEntry. The batch
// watermark entries describe the disk and stay in the store.
inline constexpr uint64_t kAreaOffset = 4096;

// "PATH.shm".
std::string PathFor(const std::string& store_path);

struct Sidecar {
  std::unique_ptr<File> file;
  std::unique_ptr<Mapping> mapping;
  bool writable = false;
  // The file's device and inode, to tell whether the path still names it.
  uint64_t device = 0;
  uint64_t inode = 0;
  // The file's device and inode folded to 32 bits, recorded beside the id
  // in the store's identity entry: a copy of an old sidecar carries the old
  // id but not the old inode.
  uint32_t inode_tag = 0;
  // False for a kLegacySize sidecar (an older writer's, or one mapped
  // before a writer grew it): it holds no durable points.
  bool durable_points = false;

  uint32_t* wake_word() const { return reinterpret_cast<uint32_t*>(mapping->data() + kWakeOffset); }
  std::byte* area() const { return mapping->data() + kAreaOffset; }
  uint64_t id() const {
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(mapping->data() + kIdOffset),
                           __ATOMIC_ACQUIRE);
  }
  void set_id(uint64_t id) {
    __atomic_store_n(reinterpret_cast<uint64_t*>(mapping->data() + kIdOffset), id,
                     __ATOMIC_RELEASE);
  }
  // Region `region`'s durable point: 0 where none is kept (a legacy
  // sidecar, or a region past kDurableRegions).
  uint64_t durable_point(uint32_t region) const {
    if (!durable_points || region >= kDurableRegions) return 0;
    return __atomic_load_n(DurableWord(region), __ATOMIC_ACQUIRE);
  }
  void set_durable_point(uint32_t region, uint64_t generation) {
    if (!durable_points || region >= kDurableRegions) return;
    __atomic_store_n(DurableWord(region), generation, __ATOMIC_RELEASE);
  }
  // Every durable point back to 0 (a writer's open).
  void clear_durable_points() {
    if (!durable_points) return;
    for (uint32_t region = 0; region < kDurableRegions; ++region) {
      __atomic_store_n(DurableWord(region), 0, __ATOMIC_RELAXED);
    }
    __atomic_thread_fence(__ATOMIC_RELEASE);
  }

 private:
  uint64_t* DurableWord(uint32_t region) const {
    return reinterpret_cast<uint64_t*>(mapping->data() + kDurableOffset) + region;
  }
};

// What breaks the trust rule (above) in a sidecar whose fstat is `side`,
// beside a store whose fstat is `store`, for a process of user `euid`; or
// nothing. The text names the file's owner and mode.
std::optional<std::string> TrustProblem(const FileStat& side, const FileStat& store, uint32_t euid);

// Opens the sidecar of the store at `store_path`, whose fstat is `store`.
// With `create` (the writer's open only: a file a reader made would belong
// to the reader), a missing one is created with the store's group and
// permission bits (less execute), owned by the store's owner when the
// writer is root, and zero-filled to kSize. With kReadWrite a fresh one is
// claimed (its magic written), and a legacy one grown to kSize and given
// the new magic. A symbolic link there is refused, as anything that is not
// a regular file of kSize bytes with the magic or zeros, or of kLegacySize
// bytes with the legacy magic or zeros: such a file is not ours to write
// into, and so is one that breaks the trust rule. Errors: kNotFound (kReadOnly and no sidecar yet,
// or one still being created), kInvalidArgument (not a sidecar, or not one to trust: the message
// says what is there, its owner and mode, and that removing it loses nothing), kPermissionDenied
// (the writer's message names the file's owner and mode, and says the same), kIOError.
Result<Sidecar> Open(Io& io, const std::string& store_path, const FileStat& store, OpenMode mode,
                     bool create);

// The writer, after a change of a visible commit: advances the wake word by
// 2 and clears the waiter bit, then wakes the sleepers if the bit was set.
// Returns whether it woke (a system call was made).
bool Advance(Sidecar& sidecar);

// A reader that read `seen` from the wake word and found nothing newer,
// before it sleeps: sets the waiter bit unless `seen` has it. Returns the
// value to sleep on, or nothing if the word moved since `seen` (look again).
std::optional<uint32_t> Register(Sidecar& sidecar, uint32_t seen);

}  // namespace regionstore::sidecar

#endif  // REGIONSTORE_LIB_SIDECAR_H_
