// Number formatting shared by the benchmarks' tables.
#ifndef REGIONSTORE_BENCH_TEXT_CELLS_H_
#define REGIONSTORE_BENCH_TEXT_CELLS_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace regionstore::bench {

// `value` with `digits` decimals; "-" for NaN (an arm that did not run).
inline std::string Fixed(double value, int digits) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// "12,345".
inline std::string Grouped(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace regionstore::bench

#endif  // REGIONSTORE_BENCH_TEXT_CELLS_H_
