// How the golden store files under tests/golden/ are made. Shared by the
// generator (make_golden.cc) and by test_golden.cc, which regenerates them
// into a scratch directory and compares byte for byte.
//
// The files go through the real Store::Create and Store::Write, so they pin
// what today's writer produces. The only non-determinism in Create (random
// UUID and temp-file suffix, clock, page size) comes through the Io seam;
// DeterministicIo fixes it.
//
// The golden tests do not read the expected values from here:
// golden_expected.cc hard-codes them, so a change here that alters the bytes
// makes the tests fail.
#ifndef REGIONSTORE_TESTS_GOLDEN_GOLDEN_WRITER_H_
#define REGIONSTORE_TESTS_GOLDEN_GOLDEN_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "intent.h"
#include "regionstore/checkpoint.h"
#include "regionstore/durability.h"
#include "regionstore/io.h"
#include "regionstore/status.h"
#include "regionstore/store.h"

namespace regionstore::golden {

// 2026-05-28T20:26:40Z: a fixed creation time.
inline constexpr uint64_t kCreatedUnixNs = 1'780'000'000'000'000'000ULL;
inline constexpr uint64_t kCreatedPageSize = 4096;

// The documented data-area pattern: the byte at data offset `i` of a written
// range is (i * 131 + 7) & 0xff. Everything outside the written ranges is
// zero.
inline std::byte PatternByte(uint64_t data_offset) {
  return static_cast<std::byte>((data_offset * 131 + 7) & 0xff);
}

struct ByteRange {
  uint64_t offset = 0;  // data offset
  uint64_t length = 0;
};

// A checkpoint commit; payload byte i is (i * 131 + 7 + salt) & 0xff.
// Consecutive commits with the same non-zero `batch` are one CommitBatch, in
// the first one's durability.
struct GoldenCommit {
  std::string region;
  uint64_t length = 0;
  uint8_t salt = 0;
  Durability durability = Durability::kSync;
  uint32_t batch = 0;
};

inline std::byte CommitByte(uint64_t i, uint8_t salt) {
  return static_cast<std::byte>((i * 131 + 7 + salt) & 0xff);
}

struct GoldenStore {
  std::string file_name;
  uint64_t data_size = 0;
  // FillRandom fills byte i of every request with (random_base + i) & 0xff,
  // so each golden file gets its own UUID.
  uint8_t random_base = 0;
  std::vector<ByteRange> pattern_ranges;  // written with PatternByte
  std::vector<CheckpointSpec> checkpoints = {};
  std::vector<GoldenCommit> commits = {};  // in this order, one handle
  // Checked in as `file_name` + ".tar.gz" (too large raw; the build extracts
  // it, see tests/CMakeLists.txt), not as the file itself.
  bool archived = false;
  bool batch_log = false;     // CreateOptions::batch_log
  uint32_t protocol = 1;      // CreateOptions::protocol
  uint64_t journal_size = 0;  // CreateOptions::journal_size
};

// The checked-in name of `store`.
inline std::string CheckedInName(const GoldenStore& store) {
  return store.archived ? store.file_name + ".tar.gz" : store.file_name;
}

// The 8,161 regions of v1-large-table.rgn: "r00000" to "r08160", capacity 1,
// compact slots. One more than fit below 1 MiB before 0.5.
inline std::vector<CheckpointSpec> LargeTableRegions() {
  std::vector<CheckpointSpec> regions;
  for (int i = 0; i < 8161; ++i) {
    char name[16];  // room for any int: gcc -O1 cannot see that i < 8161
    std::snprintf(name, sizeof name, "r%05d", i);
    regions.push_back({name, 1, SlotLayout::kCompact});
  }
  return regions;
}

// Every golden file, in the order the generator writes them.
inline std::vector<GoldenStore> GoldenStores() {
  return {
      // The smallest store: superblock, header area, no data area.
      {"v1-empty.rgn", 0, 0x00, {}},
      // A data size that is not a page multiple: the data area is padded to
      // 64 KiB with zeros. One range at the start, one straddling the 4 KiB
      // boundary up to the last usable byte.
      {"v1-small.rgn", 4096 + 3, 0x10, {{0, 100}, {4000, 99}}},
      // A full 64 KiB data area, every byte written.
      {"v1-64k.rgn", 65536, 0x20, {{0, 65536}}},
      // Checkpoint regions only: "state" (capacity 100) committed twice,
      // "blob" (70000, more than one 64 KiB unit) once; slot 2 of each and
      // slots 1-2 of "blob" stay empty. 64 KiB-aligned slots, the only
      // layout before 0.5 (kAuto would give "state" compact ones).
      {"v1-checkpoints.rgn",
       0,
       0x30,
       {},
       {{"state", 100, SlotLayout::kAligned}, {"blob", 70000, SlotLayout::kAligned}},
       {{"state", 100, 1, Durability::kSync},
        {"state", 37, 2, Durability::kPwriteFdatasync},
        {"blob", 70000, 3, Durability::kNone}}},
      // Compact slots (0.5, incompat_flags bit 0) of capacities 1, 100, 4096
      // (payload area exactly one page) and 4097 (one more page), then a
      // 64 KiB-aligned region (padding up to its 64 KiB boundary), then a
      // compact one whose end the file pads to 64 KiB. Commits in every mode;
      // "page+1" wraps to slot 2, "tail" stays empty.
      {"v1-compact-slots.rgn",
       4096 + 3,
       0x40,
       {{4000, 99}},
       {{"one", 1, SlotLayout::kCompact},
        {"hundred", 100, SlotLayout::kCompact},
        {"page", 4096, SlotLayout::kCompact},
        {"page+1", 4097, SlotLayout::kCompact},
        {"aligned", 100, SlotLayout::kAligned},
        {"tail", 5000, SlotLayout::kCompact}},
       {{"one", 1, 1, Durability::kSync},
        {"hundred", 100, 2, Durability::kSync},
        {"hundred", 37, 3, Durability::kPwriteFdatasync},
        {"page", 4096, 4, Durability::kAsync},
        {"page+1", 4097, 5, Durability::kPwriteFdatasync},
        {"page+1", 4097, 6, Durability::kSync},
        {"page+1", 1, 7, Durability::kNone},
        {"aligned", 100, 8, Durability::kSync}}},
      // A region table past 1 MiB (0.5, incompat_flags bit 1, and bit 0 for
      // its compact slots): 8,161 regions, the data area at 2 MiB. A few
      // commits: the first and last regions, the middle, the first region a
      // 1 MiB data offset leaves no room for (r08128, an empty payload) and
      // the first past the old limit of 8,160 (r08160, twice). About 193 MiB,
      // nearly all zero: checked in as a .tar.gz.
      {"v1-large-table.rgn",
       4096 + 3,
       0x50,
       {{0, 4099}},
       LargeTableRegions(),
       {{"r00000", 1, 1, Durability::kSync},
        {"r04080", 1, 2, Durability::kPwriteFdatasync},
        {"r08128", 0, 3, Durability::kPwriteFdatasync},
        {"r08160", 1, 4, Durability::kNone},
        {"r08160", 1, 5, Durability::kSync}},
       /*archived=*/true},
      // A batch log (0.8, incompat_flags bit 2, and bit 0 for the compact
      // slots): a single commit, then three batches: durable ones (ids 1
      // and 2, at or below the watermark the writer left), and a kNone one
      // last (id 3, above it: its members count through its record).
      {"v1-batches.rgn",
       4096 + 3,
       0x60,
       {{0, 100}},
       {{"model", 5000, SlotLayout::kCompact},
        {"step", 8, SlotLayout::kCompact},
        {"log", 100, SlotLayout::kAligned}},
       {{"model", 5000, 1, Durability::kSync},
        {"model", 3000, 2, Durability::kPwriteFdatasync, 1},
        {"step", 8, 3, Durability::kPwriteFdatasync, 1},
        {"step", 8, 4, Durability::kSync, 2},
        {"log", 100, 5, Durability::kSync, 2},
        {"log", 1, 6, Durability::kNone, 3},
        {"model", 37, 7, Durability::kNone, 3}},
       /*archived=*/false,
       /*batch_log=*/true},
      // v1-protocol2.rgn (0.12: protocol 2 without a journal) left the
      // generator when 0.13 gave every protocol 2 store a journal; its
      // expectations stay (golden_expected.cc), and today's code still
      // reads it.
      // Protocol 2 with its batch journal (0.13, incompat_flags bit 4 with
      // 3, 2 and 0), the smallest journal: a single commit, a journaled
      // batch of two (its record in the journal and in the batch log), a
      // kNone commit.
      {"v1-protocol2-journal.rgn",
       4096 + 3,
       0x80,
       {{4000, 99}},
       {{"state", 100, SlotLayout::kCompact}, {"blob", 70000, SlotLayout::kAligned}},
       {{"state", 100, 1, Durability::kSync},
        {"state", 37, 2, Durability::kSync, 1},
        {"blob", 70000, 3, Durability::kSync, 1},
        {"state", 5, 4, Durability::kNone}},
       /*archived=*/false,
       /*batch_log=*/false,
       /*protocol=*/2,
       /*journal_size=*/262144},
  };
}

// An Io that forwards to `base` except for the three inputs Create takes from
// the machine, which it fixes so the same code always writes the same bytes.
class DeterministicIo final : public ForwardingIo {
 public:
  explicit DeterministicIo(uint8_t random_base, Io* base = Io::Default())
      : ForwardingIo(base), random_base_(random_base) {}

  // Every call restarts at random_base, so the UUID does not depend on how
  // many random bytes Create asked for before it.
  Status FillRandom(std::span<std::byte> out) override {
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<std::byte>((random_base_ + i) & 0xff);
    }
    return Status::Ok();
  }
  uint64_t PageSize() override { return kCreatedPageSize; }
  uint64_t NowUnixNanos() override { return kCreatedUnixNs; }

 private:
  uint8_t random_base_;
};

// Writes `store` to `directory`/`store.file_name`, replacing any file there:
// Store::Create through DeterministicIo, then the pattern ranges through
// Store::Write (real Io; pwrite + fdatasync). Errors: whatever Create, Open
// or Write return.
inline Status WriteGoldenStore(const std::string& directory, const GoldenStore& store) {
  const std::string path = (std::filesystem::path(directory) / store.file_name).string();
  DeterministicIo io(store.random_base);
  CreateOptions create_options;
  create_options.io = &io;
  create_options.replace_existing = true;
  create_options.checkpoints = store.checkpoints;
  create_options.batch_log = store.batch_log;
  create_options.protocol = store.protocol;
  create_options.journal_size = store.journal_size;
  if (Status s = Store::Create(path, store.data_size, create_options); !s.ok()) return s;
  if (store.pattern_ranges.empty() && store.commits.empty()) return Status::Ok();

  // Opened through DeterministicIo too: commits stamp its fixed clock, and
  // its page size (4096) only rounds flush ranges; nothing else Open does
  // ends up in the file.
  OpenOptions open_options;
  open_options.io = &io;
  std::optional<uint64_t> area;
  {
    auto opened = Store::Open(path, OpenMode::kReadWrite, open_options);
    if (!opened.ok()) return opened.status();
    for (const ByteRange& range : store.pattern_ranges) {
      std::vector<std::byte> bytes(range.length);
      for (uint64_t i = 0; i < range.length; ++i) bytes[i] = PatternByte(range.offset + i);
      if (Status s = opened->Write(range.offset, bytes, Durability::kPwriteFdatasync); !s.ok()) {
        return s;
      }
    }
    const auto payload_of = [](const GoldenCommit& commit) {
      std::vector<std::byte> payload(commit.length);
      for (uint64_t i = 0; i < commit.length; ++i) payload[i] = CommitByte(i, commit.salt);
      return payload;
    };
    for (size_t c = 0; c < store.commits.size();) {
      const GoldenCommit& commit = store.commits[c];
      if (commit.batch == 0) {
        if (auto committed = opened->Commit(commit.region, payload_of(commit), commit.durability);
            !committed.ok()) {
          return committed.status();
        }
        ++c;
        continue;
      }
      size_t end = c;
      while (end < store.commits.size() && store.commits[end].batch == commit.batch) ++end;
      std::vector<std::vector<std::byte>> payloads;
      std::vector<std::span<const std::byte>> pieces;
      for (size_t m = c; m < end; ++m) payloads.push_back(payload_of(store.commits[m]));
      for (const auto& payload : payloads) pieces.emplace_back(payload);
      std::vector<BatchMember> members;
      for (size_t m = c; m < end; ++m) {
        members.push_back({store.commits[m].region, PayloadPieces(&pieces[m - c], 1)});
      }
      if (auto committed = opened->CommitBatch(members, commit.durability); !committed.ok()) {
        return committed.status();
      }
      c = end;
    }
    area = intent::AreaOffset(opened->info());
  }
  // The intent area holds what a running writer was doing, tagged with this
  // boot's id (a kNone commit last leaves a "commits without a barrier"
  // mark): runtime state, not content. A store at rest has it zero, and so
  // does every golden file (docs/FORMAT.md, "Intent area"), except for the
  // batch watermark entries (the last two), which describe the disk and
  // hold no boot id.
  if (store.protocol == 2) {
    if (Status s = Io::Default()->Remove(path + ".shm"); !s.ok()) return s;
  }
  if (!area) return Status::Ok();
  auto file = Io::Default()->Open(path, OpenMode::kReadWrite, SymlinkPolicy::kRefuse);
  if (!file.ok()) return file.status();
  const std::vector<std::byte> zeros(store.batch_log || store.protocol == 2
                                         ? intent::kWatermarkEntries[0] * intent::kEntrySize
                                         : intent::kAreaSize);
  if (Status s = (*file)->WriteAt(*area, zeros); !s.ok()) return s;
  return (*file)->DataSync();
}

}  // namespace regionstore::golden

#endif  // REGIONSTORE_TESTS_GOLDEN_GOLDEN_WRITER_H_
