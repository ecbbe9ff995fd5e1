#include "lab/text_cells.h"

#include <cmath>
#include <cstdio>

namespace regionstore::bench {

std::string Fixed(double value, int digits) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string Grouped(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string FormatOps(double ns_per_op) {
  const double ops = 1e9 / ns_per_op;
  char text[32];
  if (ops >= 100) {
    std::snprintf(text, sizeof text, "%.0f", ops);
  } else {
    std::snprintf(text, sizeof text, "%.1f", ops);
  }
  // Thousands separators, for reading a column of very different numbers.
  const std::string digits = text;
  const size_t dot = digits.find('.');
  const size_t integer_end = dot == std::string::npos ? digits.size() : dot;
  std::string out;
  for (size_t i = 0; i < integer_end; ++i) {
    if (i > 0 && (integer_end - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  out += digits.substr(integer_end);
  return out;
}

std::string FormatMicros(double ns) {
  char text[32];
  if (ns < 10'000) {
    std::snprintf(text, sizeof text, "%.2f", ns / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.0f", ns / 1e3);
  }
  return text;
}

std::string SizeName(uint64_t bytes) {
  return bytes >= kMiB ? std::to_string(bytes / kMiB) + " MiB"
                       : std::to_string(bytes / kKiB) + " KiB";
}

}  // namespace regionstore::bench
