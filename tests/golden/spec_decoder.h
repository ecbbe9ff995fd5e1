// A decoder of docs/FORMAT.md written from its tables and rules alone (it
// uses nothing from lib/), and the comparison that holds the library to what
// it finds in the same file.
#ifndef REGIONSTORE_TESTS_GOLDEN_SPEC_DECODER_H_
#define REGIONSTORE_TESTS_GOLDEN_SPEC_DECODER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace regionstore::testing {

// A decoder of docs/FORMAT.md, written from its tables and rules alone: the
// superblock with its incompat_flags, the region table with each entry's
// slot_alignment, both slot layouts, and a data area wherever data_offset
// puts it. It uses nothing from lib/; the cases below hold the library to
// what it finds.
struct SpecSlot {
  enum class Kind { kEmpty, kUnfinished, kValid, kInvalid };
  Kind kind = Kind::kEmpty;
  uint64_t header_offset = 0;  // file offsets
  uint64_t payload_offset = 0;
  uint64_t generation = 0;  // when kValid
  uint64_t length = 0;
  uint64_t batch_id = 0;  // when kValid: 0 for a single commit
  // When kValid: whether it holds a commit by the batch log's rules (always,
  // for a single commit or a store without a batch log).
  bool counts = false;
  std::string why;  // when kInvalid, or kValid but not counting
};

// A batch record of the batch log (FORMAT.md, "Batch log").
struct SpecBatchMember {
  uint32_t region = 0, slot = 0;
  uint64_t generation = 0;
};
struct SpecBatchRecord {
  uint32_t unit = 0;
  uint64_t id = 0;
  std::vector<SpecBatchMember> members;
};

struct SpecRegion {
  std::string name;
  uint32_t slot_count = 0;
  uint64_t capacity = 0;
  uint64_t slots_offset = 0;
  uint64_t slot_stride = 0;
  uint32_t slot_alignment = 0;  // the field: 0 = 64 KiB-aligned slots
  std::vector<SpecSlot> slots;
  // The region's content: its valid slot of highest generation (lowest
  // index among equals) that counts; -1 when it has none.
  int content = -1;
};

struct SpecStore {
  uint32_t incompat_flags = 0;
  std::array<uint8_t, 16> uuid{};
  uint64_t file_size = 0;
  uint64_t data_offset = 0;
  uint64_t data_size = 0;
  uint64_t region_table_offset = 0;
  uint32_t region_count = 0;
  uint64_t created_unix_ns = 0;
  uint32_t created_page_size = 0;
  uint64_t superblock_checksum = 0;
  std::vector<SpecRegion> regions;
  // With incompat_flags bit 2: where the batch log starts, its valid
  // records, and the batch watermark of the intent area (W, clean, and
  // which of the two entries holds it; -1 for none).
  bool batch_log = false;
  uint64_t batch_log_offset = 0;
  std::vector<SpecBatchRecord> records;
  uint64_t watermark = 0;
  bool watermark_clean = true;
  std::vector<uint32_t> watermark_entries;  // entries that decode as one
  // With incompat_flags bit 4: the batch journal's size and offset (the
  // journal_size bytes before the batch log), and the [begin, end) of each
  // record of its chain from the start (a head with the magic, then the
  // length the head gives).
  uint64_t journal_size = 0;
  uint64_t journal_offset = 0;
  std::vector<std::pair<uint64_t, uint64_t>> journal_records;
  // The first rule of "Validating a store" the file breaks; empty if none.
  std::string refusal;
  // Rules on what "this writer" makes (data_offset, flags, layout) that the
  // file breaks: a reader need not check them, a golden file keeps them.
  std::vector<std::string> writer_rules_broken;
};

// Whether bytes [begin, end) of `file` are all zero.
bool AllZeroIn(const std::vector<std::byte>& file, uint64_t begin, uint64_t end);

// FORMAT.md, "Validating a store" (steps 2 to 10) and the region table.
SpecStore DecodeBySpec(const std::vector<std::byte>& file);

// The first non-zero byte of `file` outside what `store` gives a meaning
// (superblock, region table, data area, slot headers, the payloads of valid
// slots); nullopt if there is none. FORMAT.md: everything else is written
// as zero, and a golden file's intent area is zero too.
std::optional<uint64_t> NonZeroOutsideMeaning(const std::vector<std::byte>& file,
                                              const SpecStore& store);

// Everything in which the library (ReadStoreInfo, VerifyRegions, a read-only
// Store's Read and Load) disagrees with `spec`, decoded from the same file.
std::vector<std::string> LibraryDisagreements(const std::string& path,
                                              const std::vector<std::byte>& file,
                                              const SpecStore& spec);

// Every golden file's path, archived ones at their extracted copy.
std::vector<std::string> AllGoldenPaths();

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_GOLDEN_SPEC_DECODER_H_
