// Section 3 of regionstore_commit_bench: page-cache folios. 1 MiB
// pwrite+fdatasync and 1 MiB commits on files whose pages sit in large
// folios or in 4 KiB folios (the lab's folio regimes, lab/lab.h).
#include <fcntl.h>
#include <sys/mman.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commit_bench.h"
#include "lab/die.h"
#include "lab/folio_census.h"
#include "lab/lab.h"
#include "lab/raw_io.h"
#include "lab/realtime_scope.h"

namespace regionstore::bench {
namespace {

// Writes the file out and drops all of it from the page cache, then faults
// [offset, offset + length) back in through a read-only mapping, as Load,
// List or Info on a cold store do: on this kernel each page comes back as a
// 4 KiB folio, unless the mapping is madvise(MADV_HUGEPAGE)d (`huge`),
// which makes the fault's readahead allocate large folios.
void RefillThroughMapping(const std::string& path, uint64_t offset, uint64_t length, bool huge) {
  if (std::string e = RefillPageCache(path, offset, length,
                                      huge ? Refill::kHugeMappedRead : Refill::kMappedRead);
      !e.empty()) {
    Die(e);
  }
}

enum FolioArm : size_t {
  kPlainLarge,
  kPlainSmall,
  kStoreFresh,
  kStoreCold,
  kStoreHuge,
  kFolioArms
};

struct FolioResult {
  std::array<std::string, kFolioArms> names;
  std::array<double, kFolioArms> median_ns;
  std::array<std::string, kFolioArms> before, after;
  std::array<PairedRatio, kFolioArms> vs_large;  // time / the large-folio arm's time
  std::array<DevicePerOp, kFolioArms> device;
  // KiB the device wrote for one 4 KiB memcpy through a mapping + fdatasync,
  // plain mapping and MADV_HUGEPAGE mapping (medians).
  double mapped_write_kib = NAN;
  double huge_mapped_write_kib = NAN;
};

// The price of MADV_HUGEPAGE on a writable mapping: a 4 KiB store through it
// dirties a whole 2 MiB folio, which fdatasync then writes. Medians of 9
// tries, from the device counters (so only with a device).
double MappedWriteKib(const std::string& path, bool huge, const std::string& device_stat) {
  const uint64_t length = 8 * kMiB;
  CreatePlainFile(path, length);
  RefillThroughMapping(path, 0, length, huge);
  const Fd fd(path, O_RDWR | O_CLOEXEC);
  const FileMapping mapping(fd.get(), 0, length, /*writable=*/true, path);
  if (huge && ::madvise(mapping.data(), length, MADV_HUGEPAGE) != 0) {
    Die(Errno("madvise(MADV_HUGEPAGE)", path));
  }
  std::vector<double> kib;
  for (int i = 0; i < 9; ++i) {
    const std::optional<DeviceCounters> before = ReadDevice(device_stat);
    std::memset(mapping.data() + (static_cast<uint64_t>(i) % 4) * 2 * kMiB + 8 * kKiB, i + 1,
                4 * kKiB);
    if (std::string e = DataSync(fd.get()); !e.empty()) Die(e);
    const std::optional<DeviceCounters> after = ReadDevice(device_stat);
    if (before && after) {
      kib.push_back(static_cast<double>(after->write_sectors - before->write_sectors) / 2);
    }
  }
  return Median(kib);
}

FolioResult RunFolios(const Options& options) {
  const uint64_t size = 1 * kMiB;
  // Plain files: one written by a large pwrite (large folios), one dropped
  // from the cache and faulted back in through a mapping (4 KiB folios).
  const std::string plain_large = options.dir + "/folio-large.bin";
  const std::string plain_small = options.dir + "/folio-small.bin";
  CreatePlainFile(plain_large, size);
  CreatePlainFile(plain_small, size);
  RefillThroughMapping(plain_small, 0, size, /*huge=*/false);
  // Stores: one fresh (Create zero-fills with 8 MiB pwrites: large folios).
  // One with a commit, reopened with a cold page cache as after a restart:
  // Open verifies the newest slot with pread, Load copies it through the
  // mapping. One whose slots were faulted in through a MADV_HUGEPAGE mapping
  // (an alternative for the library's mapping: measured, not adopted).
  const std::string store_fresh = options.dir + "/folio-fresh.rgn";
  const std::string store_cold = options.dir + "/folio-cold.rgn";
  const std::string store_huge = options.dir + "/folio-huge.rgn";
  for (const std::string* path : {&store_fresh, &store_cold, &store_huge}) {
    CreateStore(*path, {{"blob", size}});
  }
  auto info = ReadStoreInfo(store_cold);
  if (!info.ok()) Die(info.status().ToString());
  const RegionEntry region = RegionOf(*info, "blob");
  const uint64_t slots_length = kSlotsPerRegion * region.slot_stride;
  {
    Store first = OpenStore(store_cold);
    Payloads payloads(size);
    if (auto g = first.Commit("blob", payloads.Next(), Durability::kSync); !g.ok()) {
      Die(g.status().ToString());
    }
  }
  {
    const Fd fd(store_cold, O_RDONLY | O_CLOEXEC);
    if (::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED) != 0) {
      Die(Errno("posix_fadvise", store_cold));
    }
  }
  Store cold = OpenStore(store_cold);
  std::vector<std::byte> loaded;
  if (auto meta = cold.Load("blob", loaded); !meta.ok()) Die(meta.status().ToString());
  RefillThroughMapping(store_huge, region.slots_offset, slots_length, /*huge=*/true);

  FolioResult result{};
  const std::array<std::string, kFolioArms> paths{plain_large, plain_small, store_fresh, store_cold,
                                                  store_huge};
  const auto census = [&](size_t arm) {
    return arm < kStoreFresh ? CensusText(paths[arm], 0, size)
                             : CensusText(paths[arm], region.slots_offset, slots_length);
  };
  for (size_t a = 0; a < kFolioArms; ++a) result.before[a] = census(a);
  Store fresh = OpenStore(store_fresh);
  Store huge = OpenStore(store_huge);
  const Fd large_fd(plain_large, O_RDWR | O_CLOEXEC);
  const Fd small_fd(plain_small, O_RDWR | O_CLOEXEC);
  const int large_raw = large_fd.get();
  const int small_raw = small_fd.get();
  std::vector<Arm> arms(kFolioArms);
  arms[kPlainLarge] = LoopArm(
      "plain file, large folios: pwrite + fdatasync", size,
      [large_raw](std::span<const std::byte> v) { return PwriteFdatasync(large_raw, v, 0); });
  arms[kPlainSmall] = LoopArm(
      "plain file, 4 KiB folios: pwrite + fdatasync", size,
      [small_raw](std::span<const std::byte> v) { return PwriteFdatasync(small_raw, v, 0); });
  arms[kStoreFresh] = CommitArm("fresh store: Commit kPwriteFdatasync", fresh, "blob", size,
                                Durability::kPwriteFdatasync);
  arms[kStoreCold] = CommitArm("store reopened cold (Open + Load): Commit", cold, "blob", size,
                               Durability::kPwriteFdatasync);
  arms[kStoreHuge] = CommitArm("store, slots read through a MADV_HUGEPAGE mapping: Commit", huge,
                               "blob", size, Durability::kPwriteFdatasync);
  std::fprintf(stderr, "  folios\n");
  {
    const RealtimeScope realtime(options.realtime, "regionstore_commit_bench");
    const Rounds rounds =
        RunInterleaved(arms, options.rounds, options.peer_batch_ms, options.device_stat);
    const RoundTimes& times = rounds.ns;
    for (size_t a = 0; a < kFolioArms; ++a) {
      result.names[a] = arms[a].name;
      result.median_ns[a] = Median(times[a]);
      result.after[a] = census(a);
      result.device[a] = MedianDevice(rounds.device[a]);
      const size_t baseline = a < kStoreFresh ? kPlainLarge : kStoreFresh;
      result.vs_large[a] = Paired(times[a], times[baseline], &times[kPlainLarge]);
    }
    result.mapped_write_kib =
        MappedWriteKib(options.dir + "/folio-mapped.bin", /*huge=*/false, options.device_stat);
    result.huge_mapped_write_kib =
        MappedWriteKib(options.dir + "/folio-mapped.bin", /*huge=*/true, options.device_stat);
  }
  return result;
}

void PrintFolios(const FolioResult& r, const Options& options) {
  std::printf("## 3. Page-cache folios and 1 MiB durable writes\n\n");
  std::printf(
      "%d interleaved rounds (batches of ~%.0f ms): the same 1 MiB pwrite + fdatasync, and "
      "the same 1 MiB commit (kPwriteFdatasync), on files whose pages sit in large or in 4 KiB "
      "folios. Page cache from /proc/kpageflags before and after the rounds (stores: the "
      "three slots). time ratio = this arm's time / the large-folio arm's (plain file, or "
      "fresh store) in the same round; fast/slow as in section 2.\n\n",
      options.rounds, options.peer_batch_ms);
  std::printf(
      "| arm | ops/s | us/op | time ratio (range) | in fast / slow rounds (rounds) | "
      "device per op: flushes / write requests / KiB written | page cache before | "
      "after |\n");
  std::printf("| --- | ---: | ---: | --- | --- | --- | --- | --- |\n");
  for (size_t a = 0; a < kFolioArms; ++a) {
    const bool baseline = a == kPlainLarge || a == kStoreFresh;
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.names[a].c_str(),
                FormatOps(r.median_ns[a]).c_str(), FormatMicros(r.median_ns[a]).c_str(),
                baseline ? "1" : FormatRatio(r.vs_large[a]).c_str(),
                baseline ? "" : FormatByState(r.vs_large[a]).c_str(),
                FormatDevice(r.device[a]).c_str(), r.before[a].c_str(), r.after[a].c_str());
  }
  std::printf(
      "\nKiB the device wrote for one 4 KiB memcpy through a mapping + fdatasync: "
      "%s with a plain mapping, %s with a MADV_HUGEPAGE mapping (median of 9).\n\n",
      Fixed(r.mapped_write_kib, 0).c_str(), Fixed(r.huge_mapped_write_kib, 0).c_str());
}

}  // namespace

void RunFoliosSection(const Options& options) { PrintFolios(RunFolios(options), options); }

}  // namespace regionstore::bench
