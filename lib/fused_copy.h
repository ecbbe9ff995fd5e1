// A copy into the mapping that takes the XXH3-64 checksum of the bytes it
// stores in the same pass. Internal.
//
// Each 64-byte stripe of the payload is loaded once into two vector
// registers; those registers are stored to the destination and fed to
// XXH3's accumulators, so the checksum is of the values stored even if
// another thread changes the source meanwhile, and the source is read
// once (hashing the source, then copying it, reads it twice; copying, then
// hashing the destination, reads the destination back).
#ifndef REGIONSTORE_LIB_FUSED_COPY_H_
#define REGIONSTORE_LIB_FUSED_COPY_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace regionstore::fused_copy {

// XXH3 hashes inputs of up to 240 bytes by other paths, which this copy does
// not implement: copy those, then hash what was stored.
inline constexpr uint64_t kMinLength = 241;

// True when this process can run CopyChecksummed: x86-64 with AVX2.
bool Available();

// Copies `pieces` (`length` bytes in all, at least kMinLength) one after
// another to `out` with plain stores, and returns the XXH3-64 (seed 0) of
// the bytes it stored there: format::Checksum of them. Each source byte is
// read once. Requires Available().
uint64_t CopyChecksummed(std::byte* out, std::span<const std::span<const std::byte>> pieces,
                         uint64_t length);

}  // namespace regionstore::fused_copy

#endif  // REGIONSTORE_LIB_FUSED_COPY_H_
