// What the sections of regionstore_commit_bench share: the options, the
// stores they create and the slots their raw arms write to, the arms every
// section builds (commits, loops), and one entry point per section. The
// program's comment (commit_bench.cc) says what each section measures;
// lab/ holds the machinery (rounds, raw descriptors, folio census).
#ifndef REGIONSTORE_BENCH_COMMIT_BENCH_H_
#define REGIONSTORE_BENCH_COMMIT_BENCH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lab/payloads.h"
#include "lab/rounds.h"
#include "lab/text_cells.h"
#include "regionstore/store.h"

namespace regionstore::bench {

struct Options {
  bool quick = false;
  bool realtime = false;  // durable arms under SCHED_FIFO
  int rounds = 0;         // 0: the default for the run length
  // --only=A,B: the sections to run (empty: all). Each is one of ratio,
  // peers, folios, open, compact, many (section 5b alone), batches, inplace
  // and wait; section 9 sums up whichever of 1, 6 and 8 ran.
  std::vector<std::string> only;
  std::string dir;
  std::string json_path;  // --json=FILE, or ""
  // Target time of one batch: section 1's mapped and durable modes, and
  // sections 2 and 3.
  double mapped_batch_ms = 0;
  double durable_batch_ms = 0;
  double peer_batch_ms = 0;
  // Section 4: each big region's capacity and commit, rounds, random kills.
  uint64_t open_mib = 1024;
  int open_rounds = 0;  // 0: the default for the run length
  int open_kills = -1;  // -1: the default for the run length
  // Section 5b: regions of 100 bytes in the many-regions store.
  uint32_t many_regions = 10000;
  // /sys/dev/block/MAJ:MIN/stat of the directory's device, or "" if none.
  std::string device_stat;
};

// The two slot layouts of lib/slot.h (format v1), offsets inside a slot.
// Aligned: the slot starts on a 64 KiB boundary, its 4 KiB header unit ends
// where its payload starts, 64 KiB in. Compact: the header unit opens the
// slot, the payload follows it. Setup checks these against a real commit
// (CheckSlotLayout).
inline constexpr uint64_t kAlignedHeaderUnitOffset = 60 * kKiB;
inline constexpr uint64_t kAlignedPayloadOffset = 64 * kKiB;
inline constexpr uint64_t kCompactHeaderUnitOffset = 0;
inline constexpr uint64_t kCompactPayloadOffset = 4 * kKiB;
inline constexpr uint64_t kHeaderUnitSize = 4 * kKiB;
inline constexpr uint32_t kSlotsPerRegion = 3;

// A region takes Store::Create's default layout (kAuto: compact slots up to
// kCompactSlotLimit, 64 KiB-aligned above) unless a section names one: the
// store "ours" measures is the one a user gets.
struct RegionSpec {
  std::string name;
  uint64_t capacity;
  SlotLayout layout = SlotLayout::kAuto;
};

// The commit protocol of a store created with Store::Create's defaults, which
// every table calls "ours"; protocol 1 appears beside it, labelled so.
inline const uint32_t kDefaultProtocol = CreateOptions{}.protocol;
inline constexpr uint32_t kProtocol1 = 1;

// A store of `regions` and no data area, in commit protocol `protocol`
// (CreateOptions::protocol; the default's journal size), with a batch log if
// `batch_log` (a protocol 2 store always has one).
void CreateStore(const std::string& path, const std::vector<RegionSpec>& regions,
                 bool batch_log = false, uint32_t protocol = kDefaultProtocol);
// Opened for writing through `io` (nullptr: the default seam).
Store OpenStore(const std::string& path, Io* io = nullptr);
const RegionEntry& RegionOf(const StoreInfo& info, const std::string& name);
uint64_t SlotPayloadOffset(const RegionEntry& region, uint32_t slot);
uint64_t SlotHeaderUnitOffset(const RegionEntry& region, uint32_t slot);

// The raw arms write where the library would: checks the layout constants
// against a real commit (its payload at the slot's payload offset, its
// header magic at the start of the header unit). Reads with pread only: a
// page the store's mapping touches would cost its later writeback an extra
// write-protect step the raw arms do not pay.
void CheckSlotLayout(Store& store, const std::string& region_name);

// kSync and kPwriteFdatasync: survive a power loss once the call returns.
bool IsDurable(Durability mode);

// Store::Commit of a new payload of `size` bytes per operation.
Arm CommitArm(std::string name, Store& store, std::string region, uint64_t size, Durability mode);

// `op` on a new payload per operation.
template <typename Op>
Arm LoopArm(std::string name, uint64_t size, Op op) {
  auto payloads = std::make_shared<Payloads>(size);
  return {std::move(name), [payloads, op](uint64_t ops) {
            for (uint64_t i = 0; i < ops; ++i) {
              if (std::string e = op(payloads->Next()); !e.empty()) return e;
            }
            return std::string();
          }};
}

// The durability modes, as sections 1 and 5 name them.
struct ModeInfo {
  Durability mode;
  const char* name;
  const char* arm;  // the benchmark arm name, as in the README
  const char* raw;  // what the raw arm does
};

inline constexpr std::array<ModeInfo, 4> kModes{{
    {Durability::kNone, "kNone", "commit_none", "memcpy into a mapping of the file"},
    {Durability::kAsync, "kAsync", "commit_async", "memcpy + msync(MS_ASYNC)"},
    {Durability::kSync, "kSync", "commit_sync", "pwritev2(RWF_DSYNC) of the payload"},
    {Durability::kPwriteFdatasync, "kPwriteFdatasync", "commit_pwrite_fdatasync",
     "pwrite + fdatasync of the payload"},
}};

// {"median", "low", "high"} of a ratio, for --json.
nlohmann::json RatioJson(const PairedRatio& ratio);
// `value`, or null for NaN (no device counters), for --json.
nlohmann::json OrNull(double value);

// A markdown row "| label | **median** | low-high | by state | target |";
// the target cell says ">= T: met" or "missed", and is empty for T = 0.
void PrintRatioRow(const std::string& label, const PairedRatio& ratio, double target);

// The sections: each runs, prints its markdown to stdout and returns what
// --json records of it (folios: nothing).
nlohmann::json RunRatiosSection(const Options& options);  // 1. ratios_bench.cc
#ifdef REGIONSTORE_BENCH_PEERS
nlohmann::json RunPeersSection(const Options& options);  // 2. peers_bench.cc
#endif
void RunFoliosSection(const Options& options);                 // 3. folios_bench.cc
nlohmann::json RunLayoutsSection(const Options& options);      // 5a. layouts_bench.cc
nlohmann::json RunManyRegionsSection(const Options& options);  // 5b. layouts_bench.cc
nlohmann::json RunBatchesSection(const Options& options);      // 6. batches_bench.cc
nlohmann::json RunInPlaceSection(const Options& options);      // 7. in_place_bench.cc
nlohmann::json RunWaitSection(const Options& options);         // 8. wait_bench.cc
// The figures of protocol 2's targets from the sections in `doc` (the --json
// document), protocol 1 and protocol 2 side by side (bench/protocol_summary.cc).
void PrintProtocolSummary(const nlohmann::json& doc);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_BENCH_COMMIT_BENCH_H_
