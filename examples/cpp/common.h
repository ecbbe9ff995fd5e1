// What the examples share: bytes from text, and stopping on an error.
#ifndef REGIONSTORE_EXAMPLES_COMMON_H_
#define REGIONSTORE_EXAMPLES_COMMON_H_

#include <regionstore/regionstore.h>

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

inline std::span<const std::byte> Bytes(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

inline std::string Text(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The value of a Result, or the program ends with its error.
template <typename T>
T Must(regionstore::Result<T> result, const char* what) {
  if (!result.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, result.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*result);
}

inline void Must(const regionstore::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
    std::exit(1);
  }
}

#endif  // REGIONSTORE_EXAMPLES_COMMON_H_
