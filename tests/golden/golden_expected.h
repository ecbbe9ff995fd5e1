// What the golden store files under tests/golden/ hold, hard-coded on
// purpose rather than taken from golden_writer.h (if the writer or the files
// change, the golden tests fail), and the checks that read a file against
// it through today's library.
#ifndef REGIONSTORE_TESTS_GOLDEN_GOLDEN_EXPECTED_H_
#define REGIONSTORE_TESTS_GOLDEN_GOLDEN_EXPECTED_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "golden/golden_writer.h"

namespace regionstore::testing {

// What every v1 golden file shares.
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint64_t kDataOffset = 1048576;
inline constexpr uint64_t kRegionTableOffset = 4096;
inline constexpr uint64_t kCreatedUnixNs = 1'780'000'000'000'000'000ULL;
inline constexpr uint32_t kCreatedPageSize = 4096;

// FORMAT.md: XXH3-64 of the empty input, the region table checksum of a
// store without regions.
inline constexpr uint64_t kEmptyRegionTableChecksum = 0x2d06800538d394c2ULL;

// A range of the data area (offsets are data offsets), as the writer's.
using Range = golden::ByteRange;

struct ExpectedGolden {
  std::string file_name;
  uint64_t data_size = 0;
  uint64_t file_size = 0;
  std::array<uint8_t, 16> uuid{};
  std::string uuid_text;
  uint64_t superblock_checksum = 0;
  uint64_t file_checksum = 0;  // XXH3-64 of the whole file
  // Data-area ranges holding the pattern (i * 131 + 7) & 0xff, i the data
  // offset; every other byte of the file outside the superblock is zero.
  std::vector<Range> pattern;
};

// The checked-in files, as tests/golden/README.md describes them.
std::vector<ExpectedGolden> ExpectedGoldens();

// The golden store with checkpoint regions (tests/golden/README.md), checked
// by its own cases (test_golden_spec.cc).
inline const std::string kCheckpointGolden = "v1-checkpoints.rgn";
inline constexpr uint64_t kCheckpointGoldenSize = 2031616;
inline constexpr uint64_t kCheckpointGoldenSuperblockChecksum = 0xd23db25b1cc6f7aaULL;
inline constexpr uint64_t kCheckpointGoldenFileChecksum = 0x6f332cf12aff4e39ULL;

// A checked-in golden file under tests/golden/.
std::string GoldenPath(const std::string& file_name);

// Where the build extracts a golden file checked in as <name>.tar.gz
// (tests/CMakeLists.txt).
std::string ExtractedGoldenPath(const std::string& file_name);

// A checkpoint region as a golden file holds it.
struct ExpectedRegion {
  std::string name;
  uint64_t capacity = 0;
  uint32_t slot_alignment = 0;  // the entry's field: 0 for 64 KiB-aligned slots
  uint64_t slots_offset = 0;
  uint64_t slot_stride = 0;
  // Per slot: generation (0 = empty), payload length, payload salt.
  std::array<std::array<uint64_t, 3>, 3> slots{};
  // Per slot: the header's batch id (0 for a single commit).
  std::array<uint64_t, 3> batch_ids{};
};

// A golden file with checkpoint regions.
struct ExpectedRegionGolden {
  std::string file_name;
  bool archived = false;  // checked in as file_name + ".tar.gz"
  uint64_t file_size = 0;
  uint64_t data_offset = 0;
  uint64_t data_size = 0;
  uint32_t incompat_flags = 0;
  std::string uuid_text;
  uint64_t superblock_checksum = 0;
  uint64_t file_checksum = 0;
  std::vector<Range> pattern;  // data-area ranges holding the data pattern
  std::vector<ExpectedRegion> regions;
  // With a batch log (incompat_flags bit 2): the batch watermark the
  // writer left in the intent area, and the ids of the records in its log.
  uint64_t watermark = 0;
  bool watermark_clean = true;
  std::vector<uint64_t> record_ids = {};
};

// Where the golden file of `golden` is read from (extracted if archived).
std::string PathOf(const ExpectedRegionGolden& golden);

// A slot of ExpectedRegion::slots that holds no commit.
inline constexpr std::array<uint64_t, 3> kEmptySlot = {0, 0, 0};

// tests/golden/README.md, the table and the paragraphs after it.
std::vector<ExpectedRegionGolden> ExpectedRegionGoldens();

// Golden files today's writer can no longer make (a later release changed
// what the same options create): checked in and read as before, no longer
// generated (tests/golden/README.md).
inline const std::vector<std::string> kRetiredGoldens = {"v1-protocol2.rgn"};

// `lines`, each followed by a newline: for a failure message.
std::string Join(const std::vector<std::string>& lines);

// XXH3-64 of the whole file.
uint64_t FileChecksum(const std::vector<std::byte>& bytes);

// Everything that differs between the store at `path` and `expected`, read
// through today's library (ReadStoreInfo, a read-only Store) plus a plain
// read of the bytes no API exposes (reserved superblock bytes, the rest of
// the header area, the padding after the data area). Empty when they match.
std::vector<std::string> Differences(const std::string& path, const ExpectedGolden& expected);

// Little-endian unsigned integer of `width` bytes at `offset`, as FORMAT.md
// defines every field.
uint64_t LoadLE(const std::vector<std::byte>& bytes, size_t offset, size_t width);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_GOLDEN_GOLDEN_EXPECTED_H_
