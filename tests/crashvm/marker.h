// The workload's record of what had returned: after each operation returns,
// the guest writes one 512-byte marker with O_DIRECT to its own sector past
// the filesystem's end (marker area sector = first marker sector + the
// operation's index in the plan), without a flush. The disk log shows each
// marker after every write of the operation it follows, so the host knows,
// for every crash point, which operations had returned and what they
// returned. docs/CRASH-VM.md, "Markers".
#ifndef REGIONSTORE_TESTS_CRASHVM_MARKER_H_
#define REGIONSTORE_TESTS_CRASHVM_MARKER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace regionstore::crashvm {

inline constexpr uint64_t kMarkerSize = 512;
inline constexpr uint64_t kMarkerMagic = 0x314b524d4d56434eULL;  // "NCVMMRK1"

struct Marker {
  uint32_t op = 0;      // index of the operation in the plan
  int32_t status = 0;   // its StatusCode (0: OK)
  uint64_t value = 0;   // a commit's generation; a loaded generation
  uint64_t value2 = 0;  // what else the operation reports (docs/CRASH-VM.md)
  bool poisoned = false;
  std::string message;  // the status's text, cut to fit
};

// The 512 bytes of `marker`: magic, fields, message, XXH3 of what precedes
// the checksum.
void EncodeMarker(const Marker& marker, std::span<std::byte, kMarkerSize> out);

// nullopt for a sector that holds no marker (never written: zero) or one
// that fails its checks (a marker is written with one sector write, so a
// real one never does).
std::optional<Marker> DecodeMarker(std::span<const std::byte, kMarkerSize> sector);

}  // namespace regionstore::crashvm

#endif  // REGIONSTORE_TESTS_CRASHVM_MARKER_H_
