// Clean-pages benchmark (issue 51, "the measurement first"): what a
// checkpoint of one region the size of the state costs when the pages it
// lands in are dirty from the previous commit, and when writeback has
// cleaned (and write-protected) them, beside the floors the kernel allows.
//
// Per state size, two regimes:
//   dirty: the pages an arm writes were written by its call in the previous
//          round (one untimed warm-up call per arm first), no barrier between;
//   clean: an untimed fdatasync of the file the arm writes to right before
//          each timed call, so its pages are clean and write-protected, as
//          in a store committed to less often than the writeback interval.
// Arms (one call per arm per round, interleaved, the first arm rotating):
//   memcpy into a private buffer (the floor every ratio divides by);
//   Store::Commit kNone of one region of the state's capacity (a store made
//   with Store::Create's defaults); kSync and kPwriteFdatasync (clean only);
//   raw, on a plain file of the same size written by one pwrite: pwrite of
//   the same bytes + XXH3-64 of them; MADV_POPULATE_WRITE of a MAP_SHARED
//   mapping of it, then memcpy + XXH3-64 (memcpy + XXH3 alone where the
//   kernel lacks MADV_POPULATE_WRITE: EINVAL, said in the output); memcpy
//   into that mapping; pwrite + fdatasync (the durable floor, clean only).
// Per arm: median and min-max time, the median of per-round ratios to the
// private memcpy (with their range), and minor faults per call (getrusage
// ru_minflt around the timed call alone). The raw arms call the OS directly,
// as the other benchmarks' raw arms do. Nothing is asserted.
//
// Files go to --dir, else $REGIONSTORE_BENCH_DIR, else a folder under the
// build directory (never /tmp, which may be tmpfs).
//
// Usage: regionstore_clean_pages_bench [--sizes=1MiB,16MiB,256MiB] [--rounds=N]
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
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lab/bench_dir.h"
#include "lab/die.h"
#include "lab/folio_census.h"
#include "lab/median.h"
#include "lab/raw_io.h"
#include "lab/rounds.h"
#include "lab/text_cells.h"
#include "regionstore/io.h"
#include "regionstore/store.h"

namespace regionstore::bench {
namespace {

struct Options {
  std::vector<uint64_t> sizes{1 * kMiB, 16 * kMiB, 256 * kMiB};
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

std::string SizeName(uint64_t size) {
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
          "usage: regionstore_clean_pages_bench [--sizes=1MiB,16MiB,256MiB] [--rounds=N]\n"
          "                                     [--dir=D] [--json=FILE]\n"
          "  --sizes: state sizes (KiB, MiB, GiB suffixes), default 1MiB,16MiB,256MiB\n"
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

// Two source buffers that differ in every byte, used alternately and stamped
// with a call number, so that every call writes new content.
class Sources {
 public:
  explicit Sources(uint64_t size) : buffers_{Filled(size, 0x9e3779b97f4a7c15), Filled(size, 7)} {}
  std::span<const std::byte> Next() {
    std::vector<std::byte>& buffer = buffers_[count_ & 1];
    std::memcpy(buffer.data(), &count_, std::min<size_t>(sizeof count_, buffer.size()));
    ++count_;
    return buffer;
  }

 private:
  static std::vector<std::byte> Filled(uint64_t size, uint64_t seed) {
    std::vector<std::byte> bytes(size);
    uint64_t x = seed;
    for (uint64_t i = 0; i + 8 <= size; i += 8) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::memcpy(bytes.data() + i, &x, 8);
    }
    return bytes;
  }
  std::vector<std::byte> buffers_[2];
  uint64_t count_ = 1;
};

enum class Regime { kDirty, kClean };
const char* RegimeName(Regime regime) { return regime == Regime::kDirty ? "dirty" : "clean"; }

// One timed call, and the fd to fdatasync before it in the clean regime (-1:
// nothing to clean, a private buffer).
struct CallArm {
  std::string name;
  bool clean_only = false;
  int clean_fd = -1;
  std::function<std::string(std::span<const std::byte>)> call;
};

struct ArmResult {
  std::string name;
  std::vector<double> ns;
  std::vector<double> faults;
  std::vector<double> ratio;  // per round, to the private memcpy
};

uint64_t MinorFaults() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_minflt);
}

// A sink for the hashes, so the compiler keeps them.
volatile uint64_t g_hash_sink = 0;

std::vector<ArmResult> RunRegime(std::vector<CallArm>& arms, Regime regime, Sources& sources,
                                 int rounds) {
  std::vector<size_t> active;
  for (size_t a = 0; a < arms.size(); ++a) {
    if (regime == Regime::kDirty && arms[a].clean_only) continue;
    active.push_back(a);
  }
  std::vector<ArmResult> results(active.size());
  for (size_t i = 0; i < active.size(); ++i) results[i].name = arms[active[i]].name;
  // Warm-up: one call of each, three for commits (a region rotates over its
  // slots), untimed, so the dirty regime's first round finds dirty pages.
  for (const size_t a : active) {
    for (int w = 0; w < 3; ++w) {
      if (std::string e = arms[a].call(sources.Next()); !e.empty()) Die(arms[a].name + ": " + e);
    }
  }
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < active.size(); ++k) {
      const size_t i = (k + static_cast<size_t>(r)) % active.size();
      CallArm& arm = arms[active[i]];
      const std::span<const std::byte> payload = sources.Next();
      if (regime == Regime::kClean && arm.clean_fd >= 0) {
        if (std::string e = DataSync(arm.clean_fd); !e.empty()) Die(e);
      }
      const uint64_t faults_before = MinorFaults();
      const auto start = Clock::now();
      const std::string error = arm.call(payload);
      const auto stop = Clock::now();
      const uint64_t faults_after = MinorFaults();
      if (!error.empty()) Die(arm.name + ": " + error);
      results[i].ns.push_back(Seconds(stop - start) * 1e9);
      results[i].faults.push_back(static_cast<double>(faults_after - faults_before));
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

nlohmann::json PrintTable(uint64_t size, Regime regime, const std::vector<ArmResult>& results) {
  std::printf("### %s, pages %s\n\n", SizeName(size).c_str(), RegimeName(regime));
  std::printf(
      "| arm | median ms | min-max ms | / private memcpy (range) | minor faults per call |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: |\n");
  nlohmann::json arms = nlohmann::json::array();
  for (const ArmResult& r : results) {
    const auto [lo, hi] = std::minmax_element(r.ns.begin(), r.ns.end());
    const auto [rlo, rhi] = std::minmax_element(r.ratio.begin(), r.ratio.end());
    const double median = Median(r.ns);
    const double ratio = Median(r.ratio);
    const double faults = Median(r.faults);
    std::printf("| %s | %s | %s-%s | %s (%s-%s) | %.0f |\n", r.name.c_str(), Ms(median).c_str(),
                Ms(*lo).c_str(), Ms(*hi).c_str(), Ratio(ratio).c_str(), Ratio(*rlo).c_str(),
                Ratio(*rhi).c_str(), faults);
    arms.push_back({{"arm", r.name},
                    {"median_ns", median},
                    {"min_ns", *lo},
                    {"max_ns", *hi},
                    {"ratio_to_private_memcpy", {{"median", ratio}, {"low", *rlo}, {"high", *rhi}}},
                    {"minor_faults_per_call", faults},
                    {"ns", r.ns},
                    {"minor_faults", r.faults}});
  }
  std::printf("\n");
  std::fflush(stdout);
  return {{"size", size}, {"regime", RegimeName(regime)}, {"arms", arms}};
}

nlohmann::json RunSize(const Options& options, uint64_t size, bool& populate_missing) {
  std::fprintf(stderr, "  %s\n", SizeName(size).c_str());
  const std::string store_path = options.dir + "/clean-pages.rgn";
  const std::string plain_path = options.dir + "/clean-pages-plain.bin";
  {
    CreateOptions create;
    create.replace_existing = true;
    create.checkpoints.push_back({"state", size, SlotLayout::kAuto});
    if (Status s = Store::Create(store_path, 0, create); !s.ok()) Die(s.ToString());
  }
  CreatePlainFile(plain_path, size);
  auto opened = Store::Open(store_path, OpenMode::kReadWrite);
  if (!opened.ok()) Die(opened.status().ToString());
  Store store = std::move(*opened);
  const RegionEntry& region = store.info().regions.at(0);
  const uint64_t slots_length = static_cast<uint64_t>(region.slot_count) * region.slot_stride;
  // The store's own descriptor is the library's; fdatasync through a second
  // one cleans the same inode's pages.
  const Fd store_fd(store_path, O_RDWR | O_CLOEXEC);
  const Fd plain_fd(plain_path, O_RDWR | O_CLOEXEC);
  const FileMapping mapping(plain_fd.get(), 0, size, /*writable=*/true, plain_path);
  std::vector<std::byte> private_buffer(size, std::byte{1});
  Sources sources(size);

  const int plain = plain_fd.get();
  std::byte* const mapped = mapping.data();
  std::vector<CallArm> arms;
  arms.push_back({"memcpy into a private buffer", false, -1, [&](std::span<const std::byte> p) {
                    std::memcpy(private_buffer.data(), p.data(), p.size());
                    return std::string();
                  }});
  const auto commit = [&store](Durability mode) {
    return [&store, mode](std::span<const std::byte> p) {
      auto generation = store.Commit("state", p, mode);
      return generation.ok() ? std::string() : generation.status().ToString();
    };
  };
  arms.push_back({"Commit kNone", false, store_fd.get(), commit(Durability::kNone)});
  arms.push_back({"Commit kSync", true, store_fd.get(), commit(Durability::kSync)});
  arms.push_back(
      {"Commit kPwriteFdatasync", true, store_fd.get(), commit(Durability::kPwriteFdatasync)});
  arms.push_back({"raw: pwrite + XXH3", false, plain, [plain](std::span<const std::byte> p) {
                    std::string e = WriteOne(plain, p, 0, 0);
                    g_hash_sink = XXH3_64bits_dispatch(p.data(), p.size());
                    return e;
                  }});
  arms.push_back({"raw: MADV_POPULATE_WRITE + memcpy into the mapping + XXH3", false, plain,
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
      {"raw: memcpy into the mapping", false, plain, [mapped](std::span<const std::byte> p) {
         std::memcpy(mapped, p.data(), p.size());
         return std::string();
       }});
  arms.push_back({"raw: pwrite + fdatasync (durable floor)", true, plain,
                  [plain](std::span<const std::byte> p) { return PwriteFdatasync(plain, p, 0); }});

  nlohmann::json tables = nlohmann::json::array();
  for (const Regime regime : {Regime::kDirty, Regime::kClean}) {
    std::fprintf(stderr, "    %s\n", RegimeName(regime));
    nlohmann::json table =
        PrintTable(size, regime, RunRegime(arms, regime, sources, options.rounds));
    // Where the pages sit after the rounds: a fault per 4 KiB page or per
    // large folio depends on it (/proc/kpageflags: root only, else "unknown").
    table["store_slots_page_cache"] = CensusText(store_path, region.slots_offset, slots_length);
    table["plain_file_page_cache"] = CensusText(plain_path, 0, size);
    std::printf("Page cache after these rounds: store slots %s; plain file %s.\n\n",
                table["store_slots_page_cache"].get<std::string>().c_str(),
                table["plain_file_page_cache"].get<std::string>().c_str());
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
  std::error_code error;
  std::filesystem::create_directories(options.dir, error);
  if (error) Die("cannot create " + options.dir + ": " + error.message());
  Result<FsInfo> fs = Io::Default()->StatFs(options.dir);
  if (!fs.ok()) Die(fs.status().ToString());
  utsname machine{};
  ::uname(&machine);
  std::printf("# regionstore clean-pages benchmark\n\n");
  std::printf(
      "Linux %s %s, %ld CPUs online; files in %s (%s). %d interleaved rounds per size and "
      "regime, one call per arm per round.\n\n",
      machine.release, machine.machine, ::sysconf(_SC_NPROCESSORS_ONLN), options.dir.c_str(),
      fs->type_name.c_str(), options.rounds);
  if (MeasuresNoDisk(*fs)) {
    std::printf(
        "**WARNING: the directory is on %s: durable arms measure no disk, and its pages "
        "may never be write-protected.**\n\n",
        fs->type_name.c_str());
  }
  std::printf(
      "dirty: the arm's pages were written by its previous call, no barrier between. clean: "
      "an fdatasync of the arm's file before each timed call (untimed). Ratios are medians of "
      "per-round ratios to the private memcpy. Faults: ru_minflt around the timed call.\n\n");
  std::fflush(stdout);
  const auto started = Clock::now();
  bool populate_missing = false;
  nlohmann::json doc = {{"tool", "regionstore_clean_pages_bench"},
                        {"kernel", machine.release},
                        {"filesystem", fs->type_name},
                        {"rounds", options.rounds},
                        {"tables", nlohmann::json::array()}};
  for (const uint64_t size : options.sizes) {
    for (nlohmann::json& table : RunSize(options, size, populate_missing)) {
      doc["tables"].push_back(std::move(table));
    }
  }
  if (populate_missing) {
    std::printf(
        "MADV_POPULATE_WRITE is not available here (EINVAL): its arm did memcpy + XXH3 "
        "alone.\n\n");
  }
  doc["populate_write_available"] = !populate_missing;
  std::filesystem::remove(options.dir + "/clean-pages.rgn", error);
  std::filesystem::remove(options.dir + "/clean-pages-plain.bin", error);
  if (!options.json_path.empty()) {
    std::ofstream out(options.json_path, std::ios::trunc);
    out << doc.dump(2) << "\n";
    if (!out) Die("cannot write --json file '" + options.json_path + "'");
  }
  std::printf("Run time: %.0f s.\n", Seconds(Clock::now() - started));
  return 0;
}
