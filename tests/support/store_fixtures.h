// Small helpers shared by the store tests.
#ifndef REGIONSTORE_TESTS_SUPPORT_STORE_FIXTURES_H_
#define REGIONSTORE_TESTS_SUPPORT_STORE_FIXTURES_H_

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "regionstore/store.h"

namespace regionstore::testing {

// The long randomized tests (power-loss images, export kills) run a tenth
// of their iterations under ThreadSanitizer: it makes their single-threaded
// work 10-20x slower and has nothing to check in it; the code paths are the
// same. ASan and Release builds run the full counts.
#if defined(__SANITIZE_THREAD__)
inline constexpr uint64_t kIterationDivisor = 10;
#else
inline constexpr uint64_t kIterationDivisor = 1;
#endif
inline constexpr uint64_t ScaledCount(uint64_t count) {
  return count / kIterationDivisor > 0 ? count / kIterationDivisor : 1;
}

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

// Runs `body` in a forked child and returns its exit code. The child never
// returns into Catch: it _exits with what body returned, and an alarm ends a
// child that a bug keeps blocked.
template <typename Body>
int RunInChild(Body body) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::alarm(60);
    ::_exit(body());
  }
  int wait_status = 0;
  REQUIRE(::waitpid(child, &wait_status, 0) == child);
  REQUIRE(WIFEXITED(wait_status));
  return WEXITSTATUS(wait_status);
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

// Creates a store with checkpoint regions `specs` and REQUIREs success.
inline void MustCreateWithRegions(const std::string& path, uint64_t data_size,
                                  std::vector<CheckpointSpec> specs, Io* io = nullptr) {
  CreateOptions options;
  options.io = io;
  options.checkpoints = std::move(specs);
  Status status = Store::Create(path, data_size, options);
  INFO(status.ToString());
  REQUIRE(status.ok());
}

// The newest commit of region `name` (and what Load said of it, into
// `meta`); REQUIREs that Load succeeds.
inline std::vector<std::byte> MustLoad(const Store& store, std::string_view name,
                                       CheckpointMeta* meta = nullptr) {
  std::vector<std::byte> out;
  auto loaded = store.Load(name, out);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  if (meta != nullptr) *meta = *loaded;
  return out;
}

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_STORE_FIXTURES_H_
