// Small helpers shared by the store tests: iteration scaling, sizes, every
// durability mode, and openers that fail the test (Catch REQUIRE) when the
// store refuses.
#ifndef REGIONSTORE_TESTS_SUPPORT_STORE_FIXTURES_H_
#define REGIONSTORE_TESTS_SUPPORT_STORE_FIXTURES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format.h"
#include "regionstore/store.h"

namespace regionstore::testing {

// How many iterations a long randomized case runs (power-loss images, kill
// loops, reader races): `count` is the CI value, which
// REGIONSTORE_TEST_SCALE multiplies (a positive integer; a nightly run sets
// 10; unset or invalid: 1). Under AddressSanitizer the count is divided by
// 4 (at least 1): its instrumentation makes this single-threaded work 5-10x
// slower while the code paths are the same, and the Release pass runs the
// full count. ThreadSanitizer builds only the cases where threads race
// (docs/TESTING.md) and runs their full count. Reads the environment once.
uint64_t ScaledCount(uint64_t count);

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;

// Every durability mode, in the order of the enum.
inline constexpr Durability kAllModes[] = {Durability::kNone, Durability::kAsync, Durability::kSync,
                                           Durability::kPwriteFdatasync};

// What Create gives a store made with default options (protocol 2) and at
// most a few thousand regions: these incompat flags (besides compact slots
// and the large table), and its data area after the 4 MiB batch journal.
inline constexpr uint32_t kDefaultIncompatFlags =
    format::kIncompatBatchLog | format::kIncompatSidecar | format::kIncompatJournal;
inline constexpr uint64_t kDefaultDataOffset =
    format::DataOffsetFor(0, /*batch_log=*/true, format::kDefaultJournalSize);

// Creates a store and REQUIREs success.
void MustCreate(const std::string& path, uint64_t data_size, Io* io = nullptr);

// Opens a store and REQUIREs success.
Store MustOpen(const std::string& path, OpenMode mode, Io* io = nullptr);

// Creates a store with checkpoint regions `specs` and REQUIREs success.
// `protocol` 0 takes CreateOptions' default.
void MustCreateWithRegions(const std::string& path, uint64_t data_size,
                           std::vector<CheckpointSpec> specs, Io* io = nullptr,
                           uint32_t protocol = 0);

// The newest commit of region `name` (and what Load said of it, into
// `meta`); REQUIREs that Load succeeds.
std::vector<std::byte> MustLoad(const Store& store, std::string_view name,
                                CheckpointMeta* meta = nullptr);

// The bytes of the store at `path` with its intent area zeroed: what a
// writer's open and close leave as they were. A protocol 2 writer's open
// writes its sidecar's identity there (docs/CHECKPOINTS.md), so a check
// that a refused call "changed nothing" compares these.
std::vector<std::byte> ReadStoreButIntent(const std::string& path);

// VerifyRegions finds no damaged or torn region in the store at `path`.
void CheckNothingDamaged(const std::string& path);

// What a batch filled in place needs to take the payloads of `members`:
// one reservation per member, as long as its pieces together.
struct InPlaceBatchPlan {
  std::vector<BatchReservation> reservations;
  std::vector<uint64_t> lengths;
};
InPlaceBatchPlan PlanInPlace(std::span<const BatchMember> members);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_STORE_FIXTURES_H_
