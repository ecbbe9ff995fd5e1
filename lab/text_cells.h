// Number formatting shared by the benchmarks' tables: fixed decimals,
// thousands separators, operations per second, microseconds, and sizes.
#ifndef REGIONSTORE_LAB_TEXT_CELLS_H_
#define REGIONSTORE_LAB_TEXT_CELLS_H_

#include <cstdint>
#include <string>

namespace regionstore::bench {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;

// `value` with `digits` decimals; "-" for NaN (an arm that did not run).
std::string Fixed(double value, int digits);

// "12,345".
std::string Grouped(uint64_t value);

// Operations per second for `ns_per_op`, with thousands separators:
// "12,345", or "45.6" under 100.
std::string FormatOps(double ns_per_op);

// Nanoseconds as microseconds: "3.25" under 10 us, "123" above.
std::string FormatMicros(double ns);

// "4 KiB", "1 MiB": whole KiB below a MiB, whole MiB from one.
std::string SizeName(uint64_t bytes);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_TEXT_CELLS_H_
