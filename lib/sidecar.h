// The sidecar of a protocol 2 store: PATH.shm, a 4 KiB file beside the
// store that every process mapping the store maps too, for state that is
// shared between processes but never needs to reach the disk. Today it
// holds the wake word only (docs/CHECKPOINTS.md, "Protocol 2", and
// docs/FORMAT.md, "Sidecar"). Nothing in it is durable and nothing reads it
// after a crash: a stale or garbled wake word costs at most one wake-up
// for nothing.
//
// The wake word: a 32-bit counter the writer advances by 2 after every
// change of a visible commit, with bit 0 set by a reader about to sleep on
// it. Both sides change it by read-modify-writes, so one of them sees the
// other: either the writer's update finds the bit and wakes, or the
// reader's compare-and-swap fails because the word moved (and the reader
// looks again instead of sleeping). With nobody waiting the writer makes
// no system call.
#ifndef REGIONSTORE_LIB_SIDECAR_H_
#define REGIONSTORE_LIB_SIDECAR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "regionstore/io.h"
#include "regionstore/status.h"

namespace regionstore::sidecar {

inline constexpr uint64_t kSize = 4096;
// Bytes 0-7: "rgnsshm1" once an opener that can write it has claimed it (a
// fresh file is all zeros, which is as valid).
inline constexpr uint64_t kMagicOffset = 0;
inline constexpr uint64_t kMagic = 0x316d6873736e6772;  // "rgnsshm1", little-endian
// The wake word, alone in its cache line.
inline constexpr uint64_t kWakeOffset = 64;
inline constexpr uint32_t kWaiterBit = 1;

// "PATH.shm".
std::string PathFor(const std::string& store_path);

struct Sidecar {
  std::unique_ptr<File> file;
  std::unique_ptr<Mapping> mapping;
  bool writable = false;

  uint32_t* wake_word() const {
    return reinterpret_cast<uint32_t*>(mapping->data() + kWakeOffset);
  }
};

// Opens the sidecar of the store at `store_path`. With kReadWrite, a missing
// one is created (0600, zero-filled to 4 KiB) and a fresh one is claimed
// (its magic written). A symbolic link there is refused, as anything that
// is not a 4 KiB regular file with the magic or zeros: such a file is not
// ours to write into. Errors: kNotFound (kReadOnly and no sidecar yet, or
// one still being created), kInvalidArgument (not a sidecar: the message
// says what is there), kPermissionDenied, kIOError.
Result<Sidecar> Open(Io& io, const std::string& store_path, OpenMode mode);

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
