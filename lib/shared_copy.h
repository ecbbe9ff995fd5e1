// Copies between a private buffer and the checkpoint slots in the mapping,
// and the slot header words that order them. Internal.
//
// Slot bytes in the mapping are copied while another handle may be
// rewriting them: a reader's copy is a seqlock read, validated afterwards by
// the payload checksum and a second read of the header (Load's acquire fence
// orders the copy before it; the writer's release store of the header
// orders its copy before the header). In every supported use the writer and
// a reader copy through different mappings (one per handle; a handle's
// Commit and Load never run at once), so no two threads touch one address
// and a plain memcpy is what runs. ThreadSanitizer builds copy with relaxed
// atomic words instead: the stress test's form that hands a reader the
// writer's own mapping, the only way TSan can watch a Load race a Commit,
// then checks everything else without reporting the race the protocol
// tolerates by design. Atomic word copies cost 1.5-2.6x memcpy
// (docs/HARDENING.md), too much to pay where no address is shared.
#ifndef REGIONSTORE_LIB_SHARED_COPY_H_
#define REGIONSTORE_LIB_SHARED_COPY_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "slot.h"

namespace regionstore::shared_copy {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kAtomicSlotCopies = true;
#else
inline constexpr bool kAtomicSlotCopies = false;
#endif

inline std::byte LoadSharedByte(const std::byte* shared) {
  return std::byte{__atomic_load_n(reinterpret_cast<const uint8_t*>(shared), __ATOMIC_RELAXED)};
}

inline void StoreSharedByte(std::byte* shared, std::byte value) {
  __atomic_store_n(reinterpret_cast<uint8_t*>(shared), std::to_integer<uint8_t>(value),
                   __ATOMIC_RELAXED);
}

inline void CopyFromShared(std::byte* out, const std::byte* shared, size_t size) {
  if constexpr (!kAtomicSlotCopies) {
    if (size > 0) std::memcpy(out, shared, size);
    return;
  }
  size_t i = 0;
  for (; i < size && reinterpret_cast<uintptr_t>(shared + i) % 8 != 0; ++i) {
    out[i] = LoadSharedByte(shared + i);
  }
  for (; i + 8 <= size; i += 8) {
    const uint64_t word =
        __atomic_load_n(reinterpret_cast<const uint64_t*>(shared + i), __ATOMIC_RELAXED);
    std::memcpy(out + i, &word, 8);
  }
  for (; i < size; ++i) out[i] = LoadSharedByte(shared + i);
}

inline void CopyToShared(std::byte* shared, const std::byte* in, size_t size) {
  if constexpr (!kAtomicSlotCopies) {
    if (size > 0) std::memcpy(shared, in, size);
    return;
  }
  size_t i = 0;
  for (; i < size && reinterpret_cast<uintptr_t>(shared + i) % 8 != 0; ++i) {
    StoreSharedByte(shared + i, in[i]);
  }
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, in + i, 8);
    __atomic_store_n(reinterpret_cast<uint64_t*>(shared + i), word, __ATOMIC_RELAXED);
  }
  for (; i < size; ++i) StoreSharedByte(shared + i, in[i]);
}

// The header words are read and written as aligned 8-byte atomics, so a
// reader racing the writer sees each word old or new, and the generation
// it compares before and after a copy is read atomically.
// N bytes at `shared` (8-byte aligned, N a multiple of 8) as 8-byte
// acquire loads: each word old or new, never a mix within a word.
template <size_t N>
inline std::array<std::byte, N> LoadSharedWords(const std::byte* shared) {
  static_assert(N % 8 == 0);
  std::array<std::byte, N> bytes;
  for (size_t i = 0; i < N; i += 8) {
    const uint64_t word =
        __atomic_load_n(reinterpret_cast<const uint64_t*>(shared + i), __ATOMIC_ACQUIRE);
    std::memcpy(bytes.data() + i, &word, 8);
  }
  return bytes;
}

// N bytes to `shared` (8-byte aligned, N a multiple of 8) as 8-byte
// release stores, first word first.
template <size_t N>
inline void StoreSharedWords(std::byte* shared, const std::array<std::byte, N>& bytes) {
  static_assert(N % 8 == 0);
  for (size_t i = 0; i < N; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    __atomic_store_n(reinterpret_cast<uint64_t*>(shared + i), word, __ATOMIC_RELEASE);
  }
}

inline slot::HeaderBytes LoadHeaderWords(const std::byte* unit) {
  return LoadSharedWords<slot::kHeaderSize>(unit);
}

// Writers store a header magic last: ClearHeaderMagic first, then the
// payload, then StoreHeaderWords, whose last store is the magic word. A kill
// anywhere in between leaves the slot's magic zero (an unfinished header,
// which holds no commit), never an old header over a new partial payload
// nor a half-written header that looks like damage.
inline void StoreHeaderWords(std::byte* unit, const slot::HeaderBytes& bytes) {
  for (size_t i = bytes.size(); i > 0; i -= 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i - 8, 8);
    __atomic_store_n(reinterpret_cast<uint64_t*>(unit + i - 8), word, __ATOMIC_RELEASE);
  }
}

inline void ClearHeaderMagic(std::byte* unit) {
  __atomic_store_n(reinterpret_cast<uint64_t*>(unit + slot::hdr::kMagic), uint64_t{0},
                   __ATOMIC_RELEASE);
}

}  // namespace regionstore::shared_copy

#endif  // REGIONSTORE_LIB_SHARED_COPY_H_
