// Clean-pages benchmark: what a
// checkpoint of one region the size of the state costs when the pages it
// lands in are dirty from the previous commit, and when writeback has
// cleaned (and write-protected) them, beside the floors the kernel allows.
//
// Per state size, two regimes:
//   dirty: the pages an arm writes were written by its call in the previous
//          round (six untimed warm-up calls per arm first), no barrier
//          between;
//   clean: right before each timed call (untimed), the arm's pages are
//          cleaned and write-protected: by Store::Sync for the commit arms
//          (the handle's own barrier, which it knows of), by fdatasync of
//          the file for the raw arms, as in a store committed to less often
//          than the writeback interval.
// Arms (one call per arm per round, interleaved, the first arm rotating):
//   memcpy into a private buffer (the floor every ratio divides by);
//   Store::Commit kNone and kAsync of one region of the state's capacity (a
//   store made with Store::Create's defaults); clean only: kNone into pages
//   an fdatasync of another descriptor cleaned behind the handle's back (a
//   store of its own: the handle guesses them dirty), kNone followed by
//   Store::Sync, kNone followed by Store::StartSync (what the caller waits
//   for when the barrier runs in the background; a WaitDurable after the
//   timed call, untimed, lets it end before the next arm's call), kSync and
//   kPwriteFdatasync, and from 16 MiB kPwriteFdatasync with
//   OpenOptions::commit_progress set (a store of its own);
//   Store::Write kNone and kAsync of the same bytes into the main store's
//   data area (raw writes, no checkpoint: a memcpy into the mapping);
//   raw, into a second region of the same capacity in the same file (so in
//   folios made as the commits' were): pwrite of the same bytes + XXH3-64
//   of them; MADV_POPULATE_WRITE of a MAP_SHARED mapping of that range,
//   then memcpy + XXH3-64 (memcpy + XXH3 alone where the kernel lacks
//   MADV_POPULATE_WRITE: EINVAL, said in the output); memcpy into that
//   mapping; pwrite + fdatasync (the durable floor, clean only); the same
//   in 2 MiB steps, each step's writeback started before the next step's
//   pwrite (the stepped floor: what a durable commit of several steps
//   does, clean only).
// Per arm: median and min-max time, the median of per-round ratios to the
// private memcpy (with their range), minor faults per call (getrusage
// ru_minflt around the timed call alone), the library's pwrites and
// barriers through the io seam (a CountingIo), and the device's write
// requests and KiB (/sys/.../stat of the directory's device: every
// process's writes; medians). The raw arms call the OS directly,
// as the other benchmarks' raw arms do. Nothing is asserted.
//
// Files go to --dir, else $REGIONSTORE_BENCH_DIR, else a folder under the
// build directory (never /tmp, which may be tmpfs).
//
// Usage: regionstore_clean_pages_bench [--sizes=4KiB,64KiB,1MiB,16MiB,256MiB] [--rounds=N]
//                                      [--dir=D] [--json=FILE]
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <xxh_x86dispatch.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lab/bench_dir.h"
#include "lab/counting_io.h"
#include "lab/die.h"
#include "lab/folio_census.h"
#include "lab/median.h"
#include "lab/payloads.h"
#include "lab/program.h"
#include "lab/raw_io.h"
#include "lab/rounds.h"
#include "lab/text_cells.h"
#include "regionstore/io.h"
#include "regionstore/store.h"

namespace regionstore::bench {
namespace {

struct Options {
  std::vector<uint64_t> sizes{4 * kKiB, 64 * kKiB, 1 * kMiB, 16 * kMiB, 256 * kMiB};
  int rounds = 7;
  std::string dir;
  std::string json_path;
};

inline constexpr uint64_t kGiB = 1024 * kMiB;

uint64_t ParseSize(std::string_view text) {
  uint64_t unit = 1;
  std::string_view digits = text;
  for (const auto& [suffix, factor] :
       {std::pair<std::string_view, uint64_t>{"GiB", kGiB}, {"MiB", kMiB}, {"KiB", kKiB}}) {
    if (text.ends_with(suffix)) {
      unit = factor;
      digits = text.substr(0, text.size() - suffix.size());
      break;
    }
  }
  uint64_t value = 0;
  if (digits.empty()) Die("--sizes: '" + std::string(text) + "' is not a size like 16MiB");
  for (const char c : digits) {
    if (c < '0' || c > '9') Die("--sizes: '" + std::string(text) + "' is not a size like 16MiB");
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value == 0) Die("--sizes: a size must be positive");
  return value * unit;
}

std::string StateSizeName(uint64_t size) {
  if (size % kGiB == 0) return std::to_string(size / kGiB) + " GiB";
  if (size % kMiB == 0) return std::to_string(size / kMiB) + " MiB";
  if (size % kKiB == 0) return std::to_string(size / kKiB) + " KiB";
  return std::to_string(size) + " B";
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--sizes=")) {
      options.sizes.clear();
      std::string_view list = arg.substr(8);
      while (!list.empty()) {
        const size_t comma = list.find(',');
        options.sizes.push_back(ParseSize(list.substr(0, comma)));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
      if (options.sizes.empty()) Die("--sizes needs at least one size");
    } else if (arg.starts_with("--rounds=")) {
      options.rounds = std::atoi(std::string(arg.substr(9)).c_str());
      if (options.rounds < 1) Die("--rounds needs a positive number");
    } else if (arg.starts_with("--dir=")) {
      options.dir = arg.substr(6);
      if (options.dir.empty()) Die("--dir needs a directory");
    } else if (arg.starts_with("--json=")) {
      options.json_path = arg.substr(7);
      if (options.json_path.empty()) Die("--json needs a file name");
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: regionstore_clean_pages_bench [--sizes=4KiB,64KiB,1MiB,16MiB,256MiB] "
          "[--rounds=N]\n"
          "                                     [--dir=D] [--json=FILE]\n"
          "  --sizes: state sizes (KiB, MiB, GiB suffixes), default 4KiB,64KiB,1MiB,16MiB,256MiB\n"
          "  --rounds=N: interleaved rounds per size and regime (default 7)\n"
          "  --dir=D: where the files go (default $REGIONSTORE_BENCH_DIR, else the build tree)\n"
          "  --json=FILE: also write every arm's figures to FILE\n");
      std::exit(0);
    } else {
      Die("unknown argument '" + std::string(arg) + "' (try --help)");
    }
  }
  if (options.dir.empty()) {
    options.dir = BenchDirFromEnv(REGIONSTORE_CLEAN_PAGES_BENCH_DEFAULT_DIR);
  }
  return options;
}

constexpr std::string_view kCommitNoneArm = "Commit kNone (cleaned by Store::Sync)";
constexpr std::string_view kPwriteHashArm = "raw: pwrite + XXH3";
constexpr std::string_view kPopulateArm =
    "raw: MADV_POPULATE_WRITE + memcpy into the mapping + XXH3";
constexpr std::string_view kDurableFloorArm = "raw: pwrite + fdatasync (durable floor)";
constexpr std::string_view kSteppedFloorArm =
    "raw: 2 MiB steps of pwrite + sync_file_range(WRITE), then fdatasync (stepped floor)";
constexpr std::string_view kPipelinedArm = "Commit kNone + Store::StartSync (the caller's stall)";

enum class Regime { kDirty, kClean };
const char* RegimeName(Regime regime) { return regime == Regime::kDirty ? "dirty" : "clean"; }

// One timed call, and what cleans its pages before it in the clean regime
// (untimed; empty: nothing to clean, a private buffer).
struct CallArm {
  std::string name;
  bool clean_only = false;
  std::function<std::string()> clean;
  std::function<std::string(std::span<const std::byte>)> call;
  // The store's seam, for the arms that call the library (else null).
  const CountingIo* io = nullptr;
  // After the timed call (untimed; empty: nothing): what must end before
  // the next arm's call, so that its device counts and time are its own.
  std::function<std::string()> settle = nullptr;
};

struct ArmResult {
  std::string name;
  std::vector<double> ns;
  std::vector<double> faults;
  std::vector<double> ratio;        // per round, to the private memcpy
  std::vector<double> write_calls;  // pwrite/pwritev through the seam
  std::vector<double> barriers;     // fdatasync, msync(MS_SYNC) through the seam
  std::vector<double> device_writes;
  std::vector<double> device_kib;
  bool counted = false;
};

uint64_t MinorFaults() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_minflt);
}

// A sink for the hashes, so the compiler keeps them.
volatile uint64_t g_hash_sink = 0;

// One timed call of `arm` into `result`.
void TimeCall(CallArm& arm, std::span<const std::byte> payload, const std::string& device_stat,
              ArmResult& result) {
  const IoCounts io_before = arm.io != nullptr ? arm.io->counts() : IoCounts{};
  const std::optional<DeviceCounters> device_before = ReadDevice(device_stat);
  const uint64_t faults_before = MinorFaults();
  const auto start = Clock::now();
  const std::string error = arm.call(payload);
  const auto stop = Clock::now();
  const uint64_t faults_after = MinorFaults();
  const std::optional<DeviceCounters> device_after = ReadDevice(device_stat);
  if (!error.empty()) Die(arm.name + ": " + error);
  result.ns.push_back(Seconds(stop - start) * 1e9);
  result.faults.push_back(static_cast<double>(faults_after - faults_before));
  if (arm.io != nullptr) {
    const IoCounts io_after = arm.io->counts();
    result.counted = true;
    result.write_calls.push_back(static_cast<double>(io_after.write_calls - io_before.write_calls));
    result.barriers.push_back(static_cast<double>(io_after.barriers - io_before.barriers));
  }
  if (device_before && device_after) {
    result.device_writes.push_back(
        static_cast<double>(device_after->write_requests - device_before->write_requests));
    result.device_kib.push_back(
        static_cast<double>(device_after->write_sectors - device_before->write_sectors) / 2);
  }
}

std::vector<ArmResult> RunRegime(std::vector<CallArm>& arms, Regime regime, Payloads& sources,
                                 int rounds, const std::string& device_stat) {
  std::vector<size_t> active;
  for (size_t a = 0; a < arms.size(); ++a) {
    if (regime == Regime::kDirty && arms[a].clean_only) continue;
    active.push_back(a);
  }
  std::vector<ArmResult> results(active.size());
  for (size_t i = 0; i < active.size(); ++i) results[i].name = arms[active[i]].name;
  // Warm-up, untimed: six calls of each, so that a commit arm has written
  // each of its region's three slots twice (the first write of a slot by a
  // handle is by pwrite, the next one, seconds later, through the mapping)
  // and the dirty regime's first round finds dirty, writable pages.
  for (const size_t a : active) {
    for (int w = 0; w < 6; ++w) {
      if (std::string e = arms[a].call(sources.Next()); !e.empty()) Die(arms[a].name + ": " + e);
    }
  }
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < active.size(); ++k) {
      const size_t i = (k + static_cast<size_t>(r)) % active.size();
      CallArm& arm = arms[active[i]];
      const std::span<const std::byte> payload = sources.Next();
      if (regime == Regime::kClean && arm.clean) {
        if (std::string e = arm.clean(); !e.empty()) Die(arm.name + ": cleaning: " + e);
      }
      TimeCall(arm, payload, device_stat, results[i]);
      if (arm.settle) {
        if (std::string e = arm.settle(); !e.empty()) Die(arm.name + ": settling: " + e);
      }
    }
  }
  // Arm 0 is the private memcpy.
  for (ArmResult& result : results) {
    for (int r = 0; r < rounds; ++r) result.ratio.push_back(result.ns[r] / results[0].ns[r]);
  }
  return results;
}

std::string Ms(double ns) {
  char text[32];
  const double ms = ns / 1e6;
  std::snprintf(text, sizeof text, ms < 10 ? "%.3f" : ms < 100 ? "%.1f" : "%.0f", ms);
  return text;
}
std::string Ratio(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, ratio < 10 ? "%.2f" : "%.0f", ratio);
  return text;
}

std::string Count(const std::vector<double>& values) {
  if (values.empty()) return "-";
  char text[32];
  const double median = Median(std::vector<double>(values));
  std::snprintf(text, sizeof text, median < 10 && median != std::floor(median) ? "%.1f" : "%.0f",
                median);
  return text;
}

nlohmann::json PrintTable(uint64_t size, Regime regime, const std::vector<ArmResult>& results) {
  std::printf("### %s, pages %s\n\n", StateSizeName(size).c_str(), RegimeName(regime));
  std::printf(
      "| arm | median ms | min-max ms | / private memcpy (range) | minor faults | pwrites, "
      "barriers (seam) | device writes, KiB |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  nlohmann::json arms = nlohmann::json::array();
  for (const ArmResult& r : results) {
    const auto [lo, hi] = std::minmax_element(r.ns.begin(), r.ns.end());
    const auto [rlo, rhi] = std::minmax_element(r.ratio.begin(), r.ratio.end());
    const double median = Median(r.ns);
    const double ratio = Median(r.ratio);
    const double faults = Median(r.faults);
    const std::string seam = r.counted ? Count(r.write_calls) + ", " + Count(r.barriers) : "-";
    const std::string device =
        r.device_writes.empty() ? "-" : Count(r.device_writes) + ", " + Count(r.device_kib);
    std::printf("| %s | %s | %s-%s | %s (%s-%s) | %.0f | %s | %s |\n", r.name.c_str(),
                Ms(median).c_str(), Ms(*lo).c_str(), Ms(*hi).c_str(), Ratio(ratio).c_str(),
                Ratio(*rlo).c_str(), Ratio(*rhi).c_str(), faults, seam.c_str(), device.c_str());
    nlohmann::json arm = {
        {"arm", r.name},
        {"median_ns", median},
        {"min_ns", *lo},
        {"max_ns", *hi},
        {"ratio_to_private_memcpy", {{"median", ratio}, {"low", *rlo}, {"high", *rhi}}},
        {"minor_faults_per_call", faults},
        {"ns", r.ns},
        {"minor_faults", r.faults},
        {"device_write_requests", r.device_writes},
        {"device_write_kib", r.device_kib}};
    if (r.counted) {
      arm["seam_write_calls"] = r.write_calls;
      arm["seam_barriers"] = r.barriers;
    }
    arms.push_back(std::move(arm));
  }
  std::printf("\n");
  std::fflush(stdout);
  return {{"size", size}, {"regime", RegimeName(regime)}, {"arms", arms}};
}

// The figures the library is judged by, per size: medians of per-round
// ratios between two arms of the same rounds.
struct SummaryRow {
  uint64_t size = 0;
  double dirty_commit_to_memcpy = NAN;  // Commit kNone, pages dirty / private memcpy
  double clean_commit_to_floor = NAN;   // Commit kNone, clean / the faster raw floor
  const char* clean_floor = "";         // which floor that was
  double durable_to_floor = NAN;        // Commit kPwriteFdatasync / pwrite + fdatasync
  double durable_to_stepped = NAN;      // Commit kPwriteFdatasync / the stepped floor
  double commit_sync_to_floor = NAN;    // Commit kNone + Store::Sync / pwrite + fdatasync
  double pipelined_to_floor = NAN;      // Commit kNone + StartSync / the faster raw floor
};

const ArmResult* FindArm(const std::vector<ArmResult>& results, std::string_view name) {
  for (const ArmResult& result : results) {
    if (result.name == name) return &result;
  }
  return nullptr;
}

double PairedMedian(const ArmResult* numerator, const ArmResult* denominator) {
  if (numerator == nullptr || denominator == nullptr) return NAN;
  std::vector<double> ratios;
  for (size_t r = 0; r < numerator->ns.size() && r < denominator->ns.size(); ++r) {
    ratios.push_back(numerator->ns[r] / denominator->ns[r]);
  }
  return ratios.empty() ? NAN : Median(ratios);
}

void AddSummary(uint64_t size, Regime regime, const std::vector<ArmResult>& results,
                std::vector<SummaryRow>& summary) {
  if (summary.empty() || summary.back().size != size) summary.push_back({.size = size});
  SummaryRow& row = summary.back();
  const ArmResult* commit = FindArm(results, kCommitNoneArm);
  if (regime == Regime::kDirty) {
    row.dirty_commit_to_memcpy = PairedMedian(commit, &results[0]);
    return;
  }
  const ArmResult* by_pwrite = FindArm(results, kPwriteHashArm);
  const ArmResult* by_populate = FindArm(results, kPopulateArm);
  const bool pwrite_faster = Median(by_pwrite->ns) <= Median(by_populate->ns);
  row.clean_floor = pwrite_faster ? "pwrite + XXH3" : "populate + memcpy + XXH3";
  row.clean_commit_to_floor = PairedMedian(commit, pwrite_faster ? by_pwrite : by_populate);
  row.pipelined_to_floor =
      PairedMedian(FindArm(results, kPipelinedArm), pwrite_faster ? by_pwrite : by_populate);
  const ArmResult* floor = FindArm(results, kDurableFloorArm);
  row.durable_to_floor = PairedMedian(FindArm(results, "Commit kPwriteFdatasync"), floor);
  row.durable_to_stepped =
      PairedMedian(FindArm(results, "Commit kPwriteFdatasync"), FindArm(results, kSteppedFloorArm));
  row.commit_sync_to_floor = PairedMedian(FindArm(results, "Commit kNone + Store::Sync"), floor);
}

nlohmann::json PrintSummary(const std::vector<SummaryRow>& summary) {
  std::printf("### The figures, medians of per-round ratios\n\n");
  std::printf(
      "| state | Commit kNone, dirty / private memcpy | Commit kNone, clean / faster floor "
      "(which) | Commit kNone + StartSync, clean / faster floor | Commit kPwriteFdatasync / "
      "durable floor | Commit kPwriteFdatasync / stepped floor | Commit kNone + Sync / durable "
      "floor |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  nlohmann::json rows = nlohmann::json::array();
  for (const SummaryRow& row : summary) {
    std::printf("| %s | %.2f | %.2f (%s) | %.2f | %.2f | %.2f | %.2f |\n",
                StateSizeName(row.size).c_str(), row.dirty_commit_to_memcpy,
                row.clean_commit_to_floor, row.clean_floor, row.pipelined_to_floor,
                row.durable_to_floor, row.durable_to_stepped, row.commit_sync_to_floor);
    rows.push_back({{"size", row.size},
                    {"dirty_commit_to_private_memcpy", row.dirty_commit_to_memcpy},
                    {"clean_commit_to_faster_floor", row.clean_commit_to_floor},
                    {"clean_floor", row.clean_floor},
                    {"pipelined_commit_to_faster_floor", row.pipelined_to_floor},
                    {"durable_commit_to_floor", row.durable_to_floor},
                    {"durable_commit_to_stepped_floor", row.durable_to_stepped},
                    {"commit_then_sync_to_durable_floor", row.commit_sync_to_floor}});
  }
  std::printf("\n");
  return rows;
}

nlohmann::json RunSize(const Options& options, uint64_t size, const std::string& device_stat,
                       bool& populate_missing, std::vector<SummaryRow>& summary) {
  std::fprintf(stderr, "  %s\n", StateSizeName(size).c_str());
  const std::string store_path = options.dir + "/clean-pages.rgn";
  const std::string behind_path = options.dir + "/clean-pages-behind.rgn";
  const std::string pipelined_path = options.dir + "/clean-pages-pipelined.rgn";
  const std::string progress_path = options.dir + "/clean-pages-progress.rgn";
  const bool reports_progress = size >= kCommitProgressStep;
  // "state" takes the commits; the raw arms write into "floor", a region
  // of the same capacity in the same file, made by the same Store::Create,
  // so that their pages sit in folios like the commits' (its slots are
  // never committed to: the raw bytes overwrite its first slot). The main
  // store's data area, of the state's size, takes the raw Store::Write arms.
  std::vector<std::string> paths = {store_path, behind_path, pipelined_path};
  if (reports_progress) paths.push_back(progress_path);
  for (const std::string& path : paths) {
    CreateOptions create;
    create.replace_existing = true;
    create.checkpoints.push_back({"state", size, SlotLayout::kAuto});
    if (path == store_path) create.checkpoints.push_back({"floor", size, SlotLayout::kAuto});
    if (Status s = Store::Create(path, path == store_path ? size : 0, create); !s.ok()) {
      Die(s.ToString());
    }
  }
  CountingIo io;  // outlives the stores
  OpenOptions open_options;
  open_options.io = &io;
  auto opened = Store::Open(store_path, OpenMode::kReadWrite, open_options);
  if (!opened.ok()) Die(opened.status().ToString());
  Store store = std::move(*opened);
  // A second store for the arm whose pages are cleaned behind its handle's
  // back: the other commit arms' Syncs would tell the main handle.
  auto behind_opened = Store::Open(behind_path, OpenMode::kReadWrite, open_options);
  if (!behind_opened.ok()) Die(behind_opened.status().ToString());
  Store behind = std::move(*behind_opened);
  // And one for the arm that starts background barriers, without the
  // CountingIo, which one thread at a time may use: the library's thread
  // makes the fdatasync while this one goes on.
  auto pipelined_opened = Store::Open(pipelined_path, OpenMode::kReadWrite);
  if (!pipelined_opened.ok()) Die(pipelined_opened.status().ToString());
  Store pipelined = std::move(*pipelined_opened);
  // And, from the size at which commits report progress, one that asks
  // for it: what the steps and the waits for writeback cost.
  uint64_t progress_calls = 0;
  std::optional<Store> progress;
  if (reports_progress) {
    OpenOptions progress_options;
    progress_options.commit_progress = [&progress_calls](const CommitProgress&) {
      ++progress_calls;
    };
    auto progress_opened = Store::Open(progress_path, OpenMode::kReadWrite, progress_options);
    if (!progress_opened.ok()) Die(progress_opened.status().ToString());
    progress.emplace(std::move(*progress_opened));
  }
  const RegionEntry* region = nullptr;
  const RegionEntry* floor = nullptr;
  for (const RegionEntry& entry : store.info().regions) {
    (entry.name == "state" ? region : floor) = &entry;
  }
  const uint64_t slots_length = static_cast<uint64_t>(region->slot_count) * region->slot_stride;
  const uint64_t floor_offset = floor->slots_offset;
  // Second descriptors of the stores' files: the raw arms' own, and an
  // fdatasync through one cleans the same inode's pages behind the handle's
  // back, as the kernel's flusher does.
  const Fd store_fd(store_path, O_RDWR | O_CLOEXEC);
  const Fd behind_fd(behind_path, O_RDWR | O_CLOEXEC);
  const FileMapping mapping(store_fd.get(), floor_offset, size, /*writable=*/true, store_path);
  std::vector<std::byte> private_buffer(size, std::byte{1});
  Payloads sources(size);

  const int raw_fd = store_fd.get();
  std::byte* const mapped = mapping.data();
  const auto sync_store = [&store]() {
    auto synced = store.Sync();
    return synced.ok() ? std::string() : synced.status().ToString();
  };
  const auto sync_behind = [fd = behind_fd.get()]() { return DataSync(fd); };
  const auto sync_raw = [raw_fd]() { return DataSync(raw_fd); };
  const auto commit = [&store](Durability mode) {
    return [&store, mode](std::span<const std::byte> p) {
      auto generation = store.Commit("state", p, mode);
      return generation.ok() ? std::string() : generation.status().ToString();
    };
  };
  uint64_t pipelined_generation = 0;
  std::vector<CallArm> arms;
  arms.push_back(
      {"memcpy into a private buffer", false, nullptr, [&](std::span<const std::byte> p) {
         std::memcpy(private_buffer.data(), p.data(), p.size());
         return std::string();
       }});
  arms.push_back(
      {"Commit kNone (cleaned by Store::Sync)", false, sync_store, commit(Durability::kNone), &io});
  arms.push_back({"Commit kAsync (cleaned by Store::Sync)", false, sync_store,
                  commit(Durability::kAsync), &io});
  arms.push_back({"Commit kNone, cleaned behind the handle (fdatasync of another fd)", true,
                  sync_behind,
                  [&behind](std::span<const std::byte> p) {
                    auto generation = behind.Commit("state", p, Durability::kNone);
                    return generation.ok() ? std::string() : generation.status().ToString();
                  },
                  &io});
  arms.push_back({"Commit kNone + Store::Sync", true, sync_store,
                  [&store](std::span<const std::byte> p) {
                    auto generation = store.Commit("state", p, Durability::kNone);
                    if (!generation.ok()) return generation.status().ToString();
                    auto synced = store.Sync();
                    return synced.ok() ? std::string() : synced.status().ToString();
                  },
                  &io});
  arms.push_back({std::string(kPipelinedArm), true,
                  [&pipelined]() {
                    auto synced = pipelined.Sync();  // cleans its pages
                    return synced.ok() ? std::string() : synced.status().ToString();
                  },
                  [&pipelined, &pipelined_generation](std::span<const std::byte> p) {
                    auto generation = pipelined.Commit("state", p, Durability::kNone);
                    if (!generation.ok()) return generation.status().ToString();
                    pipelined_generation = *generation;
                    const Status started = pipelined.StartSync();
                    return started.ok() ? std::string() : started.ToString();
                  },
                  nullptr,
                  // Its background fdatasync ends before the next arm's
                  // call, which would otherwise count its device writes.
                  [&pipelined, &pipelined_generation]() {
                    const Status s = pipelined.WaitDurable("state", pipelined_generation);
                    return s.ok() ? std::string() : s.ToString();
                  }});
  // Raw writes into the data area (no checkpoint): a memcpy into the
  // mapping whatever the size, so a write fault per page into clean pages.
  for (const Durability mode : {Durability::kNone, Durability::kAsync}) {
    arms.push_back({std::string("Store::Write ") +
                        (mode == Durability::kNone ? "kNone" : "kAsync") +
                        " into the data area (cleaned by Store::Sync)",
                    false, sync_store,
                    [&store, mode](std::span<const std::byte> p) {
                      const Status s = store.Write(0, p, mode);
                      return s.ok() ? std::string() : s.ToString();
                    },
                    &io});
  }
  arms.push_back({"Commit kSync", true, sync_store, commit(Durability::kSync), &io});
  arms.push_back(
      {"Commit kPwriteFdatasync", true, sync_store, commit(Durability::kPwriteFdatasync), &io});
  if (progress) {
    arms.push_back({"Commit kPwriteFdatasync, reporting progress (OpenOptions::commit_progress)",
                    true,
                    [&progress]() {
                      auto synced = progress->Sync();
                      return synced.ok() ? std::string() : synced.status().ToString();
                    },
                    [&progress](std::span<const std::byte> p) {
                      auto generation = progress->Commit("state", p, Durability::kPwriteFdatasync);
                      return generation.ok() ? std::string() : generation.status().ToString();
                    }});
  }
  arms.push_back(
      {"raw: pwrite + XXH3", false, sync_raw, [raw_fd, floor_offset](std::span<const std::byte> p) {
         std::string e = WriteOne(raw_fd, p, floor_offset, 0);
         g_hash_sink = XXH3_64bits_dispatch(p.data(), p.size());
         return e;
       }});
  arms.push_back({std::string(kPopulateArm), false, sync_raw,
                  [mapped, &populate_missing](std::span<const std::byte> p) {
#ifdef MADV_POPULATE_WRITE
                    if (!populate_missing &&
                        ::madvise(mapped, p.size(), MADV_POPULATE_WRITE) != 0) {
                      if (errno != EINVAL) return Errno("madvise(MADV_POPULATE_WRITE)", "");
                      populate_missing = true;
                    }
#else
                    populate_missing = true;
#endif
                    std::memcpy(mapped, p.data(), p.size());
                    g_hash_sink = XXH3_64bits_dispatch(mapped, p.size());
                    return std::string();
                  }});
  arms.push_back(
      {"raw: memcpy into the mapping", false, sync_raw, [mapped](std::span<const std::byte> p) {
         std::memcpy(mapped, p.data(), p.size());
         return std::string();
       }});
  arms.push_back({std::string(kDurableFloorArm), true, sync_raw,
                  [raw_fd, floor_offset](std::span<const std::byte> p) {
                    return PwriteFdatasync(raw_fd, p, floor_offset);
                  }});
  // What a durable commit of several steps does (Store::Rep::kWritebackStep).
  arms.push_back({std::string(kSteppedFloorArm), true, sync_raw,
                  [raw_fd, floor_offset](std::span<const std::byte> p) {
                    return SteppedPwriteFdatasync(raw_fd, p, floor_offset, 2 * kMiB);
                  }});

  nlohmann::json tables = nlohmann::json::array();
  for (const Regime regime : {Regime::kDirty, Regime::kClean}) {
    std::fprintf(stderr, "    %s\n", RegimeName(regime));
    const std::vector<ArmResult> results =
        RunRegime(arms, regime, sources, options.rounds, device_stat);
    nlohmann::json table = PrintTable(size, regime, results);
    AddSummary(size, regime, results, summary);
    // Where the pages sit after the rounds: a fault per 4 KiB page or per
    // large folio depends on it (/proc/kpageflags: root only, else "unknown").
    table["store_slots_page_cache"] = CensusText(store_path, region->slots_offset, slots_length);
    table["floor_page_cache"] = CensusText(store_path, floor_offset, size);
    std::printf("Page cache after these rounds: the commits' slots %s; the raw arms' range %s.\n\n",
                table["store_slots_page_cache"].get<std::string>().c_str(),
                table["floor_page_cache"].get<std::string>().c_str());
    std::fflush(stdout);
    tables.push_back(std::move(table));
  }
  return tables;
}

}  // namespace
}  // namespace regionstore::bench

int main(int argc, char** argv) {
  using namespace regionstore;
  using namespace regionstore::bench;
  const Options options = ParseOptions(argc, argv);
  const FsInfo fs = PrepareBenchDir(options.dir);
  utsname machine{};
  ::uname(&machine);
  std::printf("# regionstore clean-pages benchmark\n\n");
  std::printf(
      "Linux %s %s, %ld CPUs online; files in %s (%s). %d interleaved rounds per size and "
      "regime, one call per arm per round.\n\n",
      machine.release, machine.machine, ::sysconf(_SC_NPROCESSORS_ONLN), options.dir.c_str(),
      fs.type_name.c_str(), options.rounds);
  if (MeasuresNoDisk(fs)) {
    std::printf(
        "**WARNING: the directory is on %s: durable arms measure no disk, and its pages "
        "may never be write-protected.**\n\n",
        fs.type_name.c_str());
  }
  std::printf(
      "dirty: the arm's pages were written by its previous call, no barrier between. clean: "
      "right before each timed call (untimed), Store::Sync for the commit arms, fdatasync of "
      "the file for the raw arms (which write into a region of the same file). Ratios are "
      "medians of per-round ratios to the private memcpy. Faults: ru_minflt around the timed "
      "call; pwrites and barriers: the library's, through the io seam; device: write requests "
      "and KiB of the directory's device during the call (every process's).\n\n");
  std::fflush(stdout);
  const std::string device_stat = DeviceStatPath(options.dir);
  const auto started = Clock::now();
  bool populate_missing = false;
  std::vector<SummaryRow> summary;
  nlohmann::json doc = {{"tool", "regionstore_clean_pages_bench"},
                        {"kernel", machine.release},
                        {"filesystem", fs.type_name},
                        {"rounds", options.rounds},
                        {"tables", nlohmann::json::array()},
                        {"skipped", nlohmann::json::array()}};
  for (const uint64_t size : options.sizes) {
    // Three stores: three slots of the state and three of the floor
    // region and a data area, and twice three of the state again; a quarter
    // more for slack.
    const uint64_t stores = size >= kCommitProgressStep ? 16 : 13;
    if (!HasRoom(options.dir, stores * size + size / 4 + 64 * kMiB, StateSizeName(size))) {
      doc["skipped"].push_back(size);
      continue;
    }
    for (nlohmann::json& table : RunSize(options, size, device_stat, populate_missing, summary)) {
      doc["tables"].push_back(std::move(table));
    }
  }
  doc["summary"] = PrintSummary(summary);
  if (populate_missing) {
    std::printf(
        "MADV_POPULATE_WRITE is not available here (EINVAL): its arm did memcpy + XXH3 "
        "alone.\n\n");
  }
  doc["populate_write_available"] = !populate_missing;
  std::error_code error;
  for (const char* store :
       {"clean-pages", "clean-pages-behind", "clean-pages-pipelined", "clean-pages-progress"}) {
    std::filesystem::remove(options.dir + "/" + store + ".rgn", error);
    std::filesystem::remove(options.dir + "/" + store + ".rgn.shm", error);  // the sidecars
  }
  if (!options.json_path.empty()) WriteOutputFile(options.json_path, doc.dump(2) + "\n", "--json");
  std::printf("Run time: %.0f s.\n", Seconds(Clock::now() - started));
  return 0;
}
