// Median of a benchmark's samples, NaN samples (arms that did not run)
// left out; NaN if none is left.
#ifndef REGIONSTORE_LAB_MEDIAN_H_
#define REGIONSTORE_LAB_MEDIAN_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace regionstore::bench {

inline double Median(std::vector<double> values) {
  std::erase_if(values, [](double v) { return std::isnan(v); });
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_MEDIAN_H_
