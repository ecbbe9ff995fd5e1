// Section 5 of regionstore_commit_bench: compact slots. (a) Commits into
// compact and into 64 KiB-aligned slots of the same capacity, 4 KiB to
// 1 MiB, side by side, in kNone, kSync and kPwriteFdatasync; (b) a 100-byte
// kSync commit into one of 10,000 compact regions beside a raw 4 KiB
// pwrite + fdatasync in the same file.
#include <fcntl.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "commit_bench.h"
#include "lab/die.h"
#include "lab/folio_census.h"
#include "lab/raw_io.h"
#include "lab/realtime_scope.h"

namespace regionstore::bench {
namespace {

constexpr std::array<uint64_t, 5> kLayoutSizes{4 * kKiB, 16 * kKiB, 64 * kKiB, 256 * kKiB,
                                               1 * kMiB};

struct LayoutRow {
  const ModeInfo* mode;
  uint64_t size;
  double compact_ns, aligned_ns;
  PairedRatio cost;  // compact / aligned
};

// Per mode, one store with a compact and an aligned region of each size;
// per size, the two commit arms interleaved (payload = capacity).
std::vector<LayoutRow> RunLayouts(const Options& options) {
  std::vector<LayoutRow> rows;
  for (const ModeInfo& mode : kModes) {
    if (mode.mode == Durability::kAsync) continue;
    const std::string path = options.dir + "/layout-" + mode.name + ".rgn";
    std::vector<RegionSpec> regions;
    for (uint64_t size : kLayoutSizes) {
      regions.push_back({"compact-" + SizeName(size), size, SlotLayout::kCompact});
      regions.push_back({"aligned-" + SizeName(size), size, SlotLayout::kAligned});
    }
    CreateStore(path, regions);
    Store store = OpenStore(path);
    const bool durable = IsDurable(mode.mode);
    for (uint64_t size : kLayoutSizes) {
      CheckSlotLayout(store, "compact-" + SizeName(size));
      CheckSlotLayout(store, "aligned-" + SizeName(size));
      std::vector<Arm> arms;
      arms.push_back(CommitArm("compact", store, "compact-" + SizeName(size), size, mode.mode));
      arms.push_back(CommitArm("aligned", store, "aligned-" + SizeName(size), size, mode.mode));
      std::fprintf(stderr, "  layouts %s %s\n", mode.name, SizeName(size).c_str());
      const RealtimeScope realtime(durable && options.realtime, "regionstore_commit_bench");
      const Rounds rounds = RunInterleaved(
          arms, options.rounds, durable ? options.durable_batch_ms : options.mapped_batch_ms,
          options.device_stat);
      rows.push_back({&mode, size, Median(rounds.ns[0]), Median(rounds.ns[1]),
                      Paired(rounds.ns[0], rounds.ns[1], durable ? &rounds.ns[1] : nullptr)});
    }
    const Fd fd(path, O_RDWR | O_CLOEXEC);
    if (std::string e = DataSync(fd.get()); !e.empty()) Die(e);
    std::filesystem::remove(path);
  }
  return rows;
}

void PrintLayouts(const std::vector<LayoutRow>& rows, const Options& options) {
  std::printf("## 5. Compact slots and many regions\n\n");
  std::printf("### 5a. Commit into compact vs 64 KiB-aligned slots\n\n");
  std::printf(
      "One store per mode with a compact and an aligned region of each capacity (explicit "
      "layouts); payload = capacity. %d interleaved rounds per row (batches of ~%.0f ms "
      "mapped, ~%.0f ms durable). compact / aligned = median of the per-round ratios (range); "
      "durable rows also over the fast and the slow rounds (aligned under or over 2 ms/op).\n\n",
      options.rounds, options.mapped_batch_ms, options.durable_batch_ms);
  std::printf(
      "| mode | size | compact us | aligned us | compact / aligned | fast / slow "
      "(rounds) |\n");
  std::printf("| --- | --- | ---: | ---: | --- | --- |\n");
  for (const LayoutRow& row : rows) {
    std::printf("| %s | %s | %s | %s | %s | %s |\n", row.mode->name, SizeName(row.size).c_str(),
                FormatMicros(row.compact_ns).c_str(), FormatMicros(row.aligned_ns).c_str(),
                FormatRatio(row.cost).c_str(),
                IsDurable(row.mode->mode) ? FormatByState(row.cost).c_str() : "");
  }
  std::printf("\n");
}

enum ManyArm : size_t {
  kManySync,
  kManyPwrite,
  kManyRawFdatasync,
  kManyRawDsync,
  kManyRawTwoPages,
  kManyArms
};

struct ManyResult {
  uint32_t regions = 0;
  uint64_t file_size = 0;
  std::array<std::string, kManyArms> names;
  std::array<double, kManyArms> median_ns{};
  std::array<DevicePerOp, kManyArms> device;
  PairedRatio sync_over_raw;        // commit kSync / raw pwrite + fdatasync
  PairedRatio pwrite_over_raw;      // commit kPwriteFdatasync / raw pwrite + fdatasync
  PairedRatio sync_over_dsync;      // commit kSync / raw pwritev2(RWF_DSYNC)
  PairedRatio sync_over_two_pages;  // commit kSync / raw 8 KiB pwrite + fdatasync
  // Folio census after the rounds: the target's slots, the raw region's,
  // the intent area (the 4 KiB before the data area).
  std::string page_cache;
};

constexpr uint64_t kManyCapacity = 100;

// "r-004999": the region names of the many-regions store.
std::string ManyName(uint32_t index) {
  char name[16];
  std::snprintf(name, sizeof name, "r-%06u", index);
  return name;
}

// A store of `options.many_regions` compact 100-byte regions plus "raw", one
// more of them: 100-byte commits into the middle region (kSync and
// kPwriteFdatasync) beside a raw 4 KiB pwrite + fdatasync (and a
// pwritev2(RWF_DSYNC)) at the raw region's slot 0 payload, in the same file.
ManyResult RunManyRegions(const Options& options) {
  ManyResult result;
  result.regions = options.many_regions;
  const std::string path = options.dir + "/many-regions.rgn";
  std::vector<RegionSpec> regions;
  for (uint32_t i = 0; i < options.many_regions; ++i) {
    regions.push_back({ManyName(i), kManyCapacity, SlotLayout::kCompact});
  }
  regions.push_back({"raw", kManyCapacity, SlotLayout::kCompact});
  std::fprintf(stderr, "  many regions: creating %u\n", options.many_regions);
  CreateStore(path, regions);
  Store store = OpenStore(path);
  result.file_size = store.info().file_size;
  const std::string target = ManyName(options.many_regions / 2);
  CheckSlotLayout(store, target);
  const RegionEntry raw_region = RegionOf(store.info(), "raw");
  const uint64_t raw_at = SlotPayloadOffset(raw_region, 0);
  const Fd fd(path, O_RDWR | O_CLOEXEC);
  const int raw_fd = fd.get();
  std::vector<Arm> arms(kManyArms);
  arms[kManySync] =
      CommitArm("Commit 100 B kSync", store, target, kManyCapacity, Durability::kSync);
  arms[kManyPwrite] = CommitArm("Commit 100 B kPwriteFdatasync", store, target, kManyCapacity,
                                Durability::kPwriteFdatasync);
  arms[kManyRawFdatasync] = LoopArm("raw: pwrite 4 KiB + fdatasync", 4 * kKiB,
                                    [raw_fd, raw_at](std::span<const std::byte> page) {
                                      return PwriteFdatasync(raw_fd, page, raw_at);
                                    });
  arms[kManyRawDsync] = LoopArm("raw: pwritev2(RWF_DSYNC) 4 KiB", 4 * kKiB,
                                [raw_fd, raw_at](std::span<const std::byte> page) {
                                  return WriteOne(raw_fd, page, raw_at, RWF_DSYNC);
                                });
  // The pages a compact commit of 100 bytes writes: its header unit and the
  // payload's page, here the raw region's whole slot 1.
  const uint64_t raw_slot_at = SlotHeaderUnitOffset(raw_region, 1);
  arms[kManyRawTwoPages] = LoopArm("raw: pwrite 8 KiB (a compact slot) + fdatasync", 8 * kKiB,
                                   [raw_fd, raw_slot_at](std::span<const std::byte> pages) {
                                     return PwriteFdatasync(raw_fd, pages, raw_slot_at);
                                   });
  std::fprintf(stderr, "  many regions: rounds\n");
  const RealtimeScope realtime(options.realtime, "regionstore_commit_bench");
  const Rounds rounds =
      RunInterleaved(arms, options.rounds, options.durable_batch_ms, options.device_stat);
  for (size_t a = 0; a < kManyArms; ++a) {
    result.names[a] = arms[a].name;
    result.median_ns[a] = Median(rounds.ns[a]);
    result.device[a] = MedianDevice(rounds.device[a]);
  }
  const std::vector<double>& reference = rounds.ns[kManyRawFdatasync];
  result.sync_over_raw = Paired(rounds.ns[kManySync], reference, &reference);
  result.pwrite_over_raw = Paired(rounds.ns[kManyPwrite], reference, &reference);
  result.sync_over_dsync = Paired(rounds.ns[kManySync], rounds.ns[kManyRawDsync], &reference);
  result.sync_over_two_pages =
      Paired(rounds.ns[kManySync], rounds.ns[kManyRawTwoPages], &reference);
  const RegionEntry& target_region = RegionOf(store.info(), target);
  result.page_cache =
      "target's slots: " +
      CensusText(path, target_region.slots_offset, kSlotsPerRegion * target_region.slot_stride) +
      "; raw's slots: " +
      CensusText(path, raw_region.slots_offset, kSlotsPerRegion * raw_region.slot_stride) +
      "; intent area: " +
      CensusText(path, store.info().data_offset - kHeaderUnitSize, kHeaderUnitSize);
  std::filesystem::remove(path);
  return result;
}

void PrintManyRegions(const ManyResult& r, const Options& options) {
  std::printf("### 5b. A kSync commit into one of %s regions of 100 bytes\n\n",
              Grouped(r.regions).c_str());
  std::printf(
      "One store of %s compact regions of 100 bytes plus one more, raw (file %s MiB). "
      "Commits of 100 bytes go to the middle region; the raw arms write 4 KiB at the raw "
      "region's slot 0 payload offset (page-aligned) of the same file, or 8 KiB over its slot 1 "
      "(header unit and payload page: what a compact 100-byte commit writes). %d interleaved "
      "rounds (batches of ~%.0f ms). Target: commit kSync / raw pwrite + fdatasync <= 1.10.\n\n",
      Grouped(r.regions).c_str(), Fixed(static_cast<double>(r.file_size) / kMiB, 1).c_str(),
      options.rounds, options.durable_batch_ms);
  std::printf("| arm | us/op | device per op: flushes / write requests / KiB written |\n");
  std::printf("| --- | ---: | --- |\n");
  for (size_t a = 0; a < kManyArms; ++a) {
    std::printf("| %s | %s | %s |\n", r.names[a].c_str(), FormatMicros(r.median_ns[a]).c_str(),
                FormatDevice(r.device[a]).c_str());
  }
  std::printf("\n| ratio | median (range) | fast / slow rounds (rounds) | target |\n");
  std::printf("| --- | --- | --- | --- |\n");
  std::printf("| commit kSync / raw pwrite + fdatasync | %s | %s | <= 1.10: %s |\n",
              FormatRatio(r.sync_over_raw).c_str(), FormatByState(r.sync_over_raw).c_str(),
              r.sync_over_raw.median <= 1.10 ? "met" : "**missed**");
  std::printf("| commit kPwriteFdatasync / raw pwrite + fdatasync | %s | %s | |\n",
              FormatRatio(r.pwrite_over_raw).c_str(), FormatByState(r.pwrite_over_raw).c_str());
  std::printf("| commit kSync / raw pwritev2(RWF_DSYNC) | %s | %s | |\n",
              FormatRatio(r.sync_over_dsync).c_str(), FormatByState(r.sync_over_dsync).c_str());
  std::printf("| commit kSync / raw 8 KiB pwrite + fdatasync | %s | %s | |\n\n",
              FormatRatio(r.sync_over_two_pages).c_str(),
              FormatByState(r.sync_over_two_pages).c_str());
  std::printf("Page cache after the rounds: %s.\n\n", r.page_cache.c_str());
}
nlohmann::json LayoutsJson(const std::vector<LayoutRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const LayoutRow& row : rows) {
    out.push_back({{"mode", row.mode->name},
                   {"size", row.size},
                   {"compact_ns", row.compact_ns},
                   {"aligned_ns", row.aligned_ns},
                   {"compact_over_aligned", RatioJson(row.cost)}});
  }
  return out;
}

nlohmann::json ManyJson(const ManyResult& r) {
  nlohmann::json arms = nlohmann::json::array();
  for (size_t a = 0; a < kManyArms; ++a) {
    arms.push_back({{"name", r.names[a]}, {"median_ns", r.median_ns[a]}});
  }
  return {{"regions", r.regions},
          {"file_size", r.file_size},
          {"arms", arms},
          {"sync_over_raw_fdatasync", RatioJson(r.sync_over_raw)},
          {"pwrite_fdatasync_over_raw_fdatasync", RatioJson(r.pwrite_over_raw)},
          {"sync_over_raw_dsync", RatioJson(r.sync_over_dsync)},
          {"sync_over_raw_8kib_fdatasync", RatioJson(r.sync_over_two_pages)}};
}

}  // namespace

nlohmann::json RunLayoutsSection(const Options& options) {
  const std::vector<LayoutRow> rows = RunLayouts(options);
  PrintLayouts(rows, options);
  return LayoutsJson(rows);
}

nlohmann::json RunManyRegionsSection(const Options& options) {
  const ManyResult many = RunManyRegions(options);
  PrintManyRegions(many, options);
  return ManyJson(many);
}

}  // namespace regionstore::bench
