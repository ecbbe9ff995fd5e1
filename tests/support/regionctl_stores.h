// Stores made, committed to, inspected and damaged through regionctl, for the
// regionctl tests (test_regionctl_*.cc): what the command groups' cases share
// around the runner (support/regionctl_runner.h).
#ifndef REGIONSTORE_TESTS_SUPPORT_REGIONCTL_STORES_H_
#define REGIONSTORE_TESTS_SUPPORT_REGIONCTL_STORES_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "regionstore/store.h"
#include "support/process.h"
#include "support/store_fixtures.h"

namespace regionstore::testing {

class TempDir;

// The data area of CreateStore's default store.
inline constexpr uint64_t kStoreDataSize = 16 * kMiB;
// The capacity of region 'state' in CreateCheckpointStore's default store.
inline constexpr uint64_t kStateCapacity = 64 * kKiB;

// `dir`/`name`, created by `regionctl create --size size_text`.
std::string CreateStore(const TempDir& dir, const std::string& name,
                        const std::string& size_text = "16MiB");

// ReadStoreInfo, REQUIREd to succeed.
StoreInfo MustReadInfo(const std::string& path);

// "0x" and 16 hex digits.
std::string Hex64(uint64_t value);

// Stores the low `width` bytes of `value` at `offset`, little-endian.
void StoreLittleEndian(std::vector<std::byte>& bytes, size_t offset, uint64_t value, size_t width);

// Every way a command can be pointed at a file: each must refuse a bad one
// with `expected_exit_code` and leave it as it was.
void RequireAllCommandsRefuse(const TempDir& dir, const std::string& path, int expected_exit_code);

// A store with a 1 MiB data area and the checkpoint regions `checkpoints`
// ("NAME:CAPACITY"), made by regionctl.
std::string CreateCheckpointStore(const TempDir& dir, const std::string& name,
                                  const std::vector<std::string>& checkpoints = {
                                      "state:64KiB:aligned", "other:4KiB"});

// The region table entry named `name` (fails the test if there is none).
RegionEntry MustFindRegion(const std::string& path, const std::string& name);

// Commits `payload` through regionctl from standard input and checks the
// generation it reports.
void MustCommit(const std::string& path, const std::string& name,
                const std::vector<std::byte>& payload, uint64_t expected_generation,
                const std::string& durability = "sync");

// `regionctl load PATH NAME`'s standard output, the run REQUIREd to succeed.
std::vector<std::byte> MustLoad(const std::string& path, const std::string& name);

// The JSON object of region `name` in inspect's or verify's "regions".
nlohmann::json RegionJsonNamed(const nlohmann::json& document, const std::string& name);

// Zeros payload bytes [from, to) of slot `index`: what a power cut leaves when
// the commit's header reached the disk and those payload pages did not (the
// slot held zeros before).
void TearPayload(const std::string& path, const RegionEntry& region, uint32_t index, uint64_t from,
                 uint64_t to);

// The slot inspect names as region `name`'s newest header.
uint32_t ActiveSlot(const std::string& path, const std::string& name);

// A store whose region 'state' holds generation 1 (`older_length` bytes) and
// generation 2 (`newer_length`), and the slots they are in.
struct TwoCommits {
  std::string path;
  std::vector<std::byte> older;  // generation 1
  uint32_t older_slot = 0;
  uint32_t newest = 0;  // generation 2
};
TwoCommits CommitTwice(const TempDir& dir, uint64_t older_length, uint64_t newer_length,
                       uint64_t seed);

// The first line of `text` that starts with `prefix`, without its '\n'.
std::string LineStartingWith(const std::string& text, const std::string& prefix);

// A verify that judged a region torn or damaged: its report on stdout, then
// exactly one line on stderr saying why, and `expected_exit_code`.
void RequireVerdict(const ProcessResult& result, int expected_exit_code);

// What load, export and dump --region print on stderr when Load passed over
// a torn newer commit of region 'state'.
std::string TornWarning(uint64_t torn_generation, uint64_t returned_generation);

// The library's kTornCommit message, as load, export and dump --region print it.
std::string TornOnlyFailure(const std::string& path, uint64_t generation);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_REGIONCTL_STORES_H_
