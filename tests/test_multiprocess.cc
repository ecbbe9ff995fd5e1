// Other processes: they see a write as soon as it returns, and a second
// writer is refused.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "regionstore/store.h"
#include "support/files.h"
#include "support/process.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

TEST_CASE("Another process sees the bytes as soon as Write returns, in every mode",
          "[store][multiprocess]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 4 * kMiB);
  Store writer = MustOpen(path, OpenMode::kReadWrite);

  uint64_t seed = 100;
  for (Durability mode :
       {Durability::kNone, Durability::kAsync, Durability::kSync, Durability::kPwriteFdatasync}) {
    ++seed;
    const uint64_t offset = 2 * kMiB + 3;
    const auto data = PatternBytes(70000, seed);
    // The reader maps the store before the write, then waits on a pipe: the
    // pipe, not a sleep, orders "Write returned" before "reader looks".
    int go[2];
    REQUIRE(::pipe(go) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(go[1]);
      auto reader = Store::Open(path, OpenMode::kReadOnly);
      if (!reader.ok()) ::_exit(2);
      char byte;
      if (::read(go[0], &byte, 1) != 1) ::_exit(3);
      auto view = reader->View(offset, data.size());
      if (!view.ok()) ::_exit(4);
      ::_exit(std::memcmp(view->data(), data.data(), data.size()) == 0 ? 0 : 1);
    }
    ::close(go[0]);
    REQUIRE(writer.Write(offset, data, mode).ok());
    REQUIRE(::write(go[1], "x", 1) == 1);
    ::close(go[1]);
    int wait_status = 0;
    REQUIRE(::waitpid(child, &wait_status, 0) == child);
    REQUIRE(WIFEXITED(wait_status));
    INFO(DurabilityName(mode));
    CHECK(WEXITSTATUS(wait_status) == 0);
  }
}

TEST_CASE("A second writer in another process gets kBusy: readers are not blocked",
          "[store][multiprocess][lock]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 1 * kMiB);
  Store writer = MustOpen(path, OpenMode::kReadWrite);

  const int busy = RunInChild([&] {
    auto second = Store::Open(path, OpenMode::kReadWrite);
    if (second.ok()) return 1;
    if (second.status().code() != StatusCode::kBusy) return 2;
    if (second.status().ToString().find(path) == std::string::npos) return 3;
    return 0;
  });
  CHECK(busy == 0);
  const int reader =
      RunInChild([&] { return Store::Open(path, OpenMode::kReadOnly).ok() ? 0 : 1; });
  CHECK(reader == 0);

  // Once the writer is gone, another process may write.
  { Store gone = std::move(writer); }
  const int next = RunInChild([&] {
    auto store = Store::Open(path, OpenMode::kReadWrite);
    return store.ok() && store->Write(0, PatternBytes(10, 1), Durability::kSync).ok() ? 0 : 1;
  });
  CHECK(next == 0);
}

}  // namespace
}  // namespace regionstore::testing
