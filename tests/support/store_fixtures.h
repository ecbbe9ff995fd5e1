// Small helpers shared by the store tests.
#ifndef REGIONSTORE_TESTS_SUPPORT_STORE_FIXTURES_H_
#define REGIONSTORE_TESTS_SUPPORT_STORE_FIXTURES_H_

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "regionstore/store.h"

namespace regionstore::testing {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;

// Creates a store and REQUIREs success.
inline void MustCreate(const std::string& path, uint64_t data_size, Io* io = nullptr) {
  CreateOptions options;
  options.io = io;
  Status status = Store::Create(path, data_size, options);
  INFO(status.ToString());
  REQUIRE(status.ok());
}

// Opens a store and REQUIREs success.
inline Store MustOpen(const std::string& path, OpenMode mode, Io* io = nullptr) {
  OpenOptions options;
  options.io = io;
  auto store = Store::Open(path, mode, options);
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  return std::move(*store);
}

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_STORE_FIXTURES_H_
