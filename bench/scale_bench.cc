// Scale benchmark: what many regions and a big data area cost the calls that
// should not grow with them. docs/history/BENCH-CHECKPOINTS-0.13.md ("Compact slots and
// many regions") has a measured run.
//
// Part 1, many regions: one store of --regions regions of 100 bytes (kAuto,
// so compact slots), each given one commit at setup. Measured once: its file
// size and Store::Create's time. Then rounds, each running every arm once,
// the first arm rotating from round to round: `regionctl inspect`, `regionctl
// stat` and `regionctl verify` (the built binary, fork + exec, output to
// /dev/null: wall time including the process start), Store::Open(kReadWrite)
// + close, the same plus a first 16-byte kSync commit into the last region,
// ReadStoreInfo, VerifyRegions with and without payloads. Bytes the writer's
// open read come from a CountingIo. The rounds run twice: warm (the page
// cache holds the file after setup) and cold (posix_fadvise(DONTNEED) of
// the store file before every arm: the file's pages only, not the dentries
// or the binary; drop_caches would empty the page cache of every process
// on the machine).
//
// Part 2, data area size: stores whose data area holds each of --data-mib
// (default 16 MiB, 2 GiB and 32 GiB) and one 4 KiB region. A size the disk
// has no room for (statvfs, with 2 GiB to spare, all stores existing at
// once) is skipped, and the output says so. Rounds as above over the stores:
// Store::Open(kReadWrite), a first 16-byte kSync commit, close; warm, then
// cold as above. Ratios are per round against the smallest store. Creating
// a 32 GiB store zero-fills 32 GiB (tens of seconds): never in --quick.
//
// Nothing is asserted: the output says which targets were met.
//
// Usage: regionstore_scale_bench [--quick] [--realtime] [--rounds=N] [--regions=N]
//                                [--data-mib=A,B,...] [--regionctl=PATH] [--only=regions|data]
#include <fcntl.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lab/bench_dir.h"
#include "lab/counting_io.h"
#include "lab/die.h"
#include "lab/flags.h"
#include "lab/median.h"
#include "lab/realtime_scope.h"
#include "lab/rounds.h"
#include "lab/text_cells.h"
#include "regionstore/store.h"

#ifndef REGIONSTORE_SCALE_BENCH_DEFAULT_DIR
#define REGIONSTORE_SCALE_BENCH_DEFAULT_DIR "scale-bench-files"
#endif
#ifndef REGIONSTORE_SCALE_BENCH_REGIONCTL
#define REGIONSTORE_SCALE_BENCH_REGIONCTL ""
#endif

namespace regionstore::bench {
namespace {

constexpr uint64_t kRegionCapacity = 100;
constexpr uint64_t kSmallCapacity = 4 * kKiB;
constexpr size_t kTinyCommit = 16;
constexpr uint64_t kSpareBytes = 2048 * kMiB;

// Milliseconds with three significant-ish digits: "0.412", "12.3", "1,234".
std::string Millis(double seconds) {
  const double ms = seconds * 1e3;
  if (std::isnan(ms)) return "-";
  if (ms < 1) return Fixed(ms, 3);
  if (ms < 100) return Fixed(ms, 1);
  return Grouped(static_cast<uint64_t>(std::llround(ms)));
}

// "16 MiB", "2 GiB": a data area's size.
std::string AreaSizeName(uint64_t bytes) {
  if (bytes >= 1024 * kMiB && bytes % (1024 * kMiB) == 0) {
    return std::to_string(bytes / (1024 * kMiB)) + " GiB";
  }
  return std::to_string(bytes / kMiB) + " MiB";
}

struct Options {
  CommonFlags flags;  // --quick, --realtime, --rounds=N
  uint32_t regions = 0;
  std::vector<uint64_t> data_mib;
  std::string regionctl = REGIONSTORE_SCALE_BENCH_REGIONCTL;
  std::string only;  // "", "regions" or "data"
  std::string dir;
};

std::vector<uint64_t> ParseList(std::string_view text) {
  std::vector<uint64_t> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string item(text.substr(0, comma));
    const long long value = std::atoll(item.c_str());
    if (value < 1) Die("--data-mib takes positive numbers separated by commas");
    out.push_back(static_cast<uint64_t>(value));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (ParseCommonFlag(arg, options.flags)) {
      continue;
    } else if (arg.starts_with("--regions=")) {
      const long long regions = std::atoll(argv[i] + 10);
      if (regions < 1 || regions > 1'000'000) Die("--regions needs 1 to 1000000");
      options.regions = static_cast<uint32_t>(regions);
    } else if (arg.starts_with("--data-mib=")) {
      options.data_mib = ParseList(arg.substr(11));
    } else if (arg.starts_with("--regionctl=")) {
      options.regionctl = std::string(arg.substr(12));
    } else if (arg.starts_with("--only=")) {
      options.only = std::string(arg.substr(7));
      if (options.only != "regions" && options.only != "data") {
        Die("--only takes regions or data");
      }
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: regionstore_scale_bench [--quick] [--realtime] [--rounds=N] [--regions=N]\n"
          "                               [--data-mib=A,B,...] [--regionctl=PATH]\n"
          "                               [--only=regions|data]\n"
          "  files go to $REGIONSTORE_BENCH_DIR (default %s)\n"
          "  --quick: 500 regions, data areas of 16 and 64 MiB, 3 rounds (a smoke run)\n"
          "  --rounds=N: rounds per measurement (default 21, --quick 3)\n"
          "  --regions=N: regions of 100 bytes in part 1 (default 10000)\n"
          "  --data-mib=A,B,...: data area sizes of part 2 in MiB (default 16,2048,32768)\n"
          "  --regionctl=PATH: the regionctl binary (default the one built beside this)\n",
          REGIONSTORE_SCALE_BENCH_DEFAULT_DIR);
      std::exit(0);
    } else {
      Die("unknown argument '" + std::string(arg) + "' (try --help)");
    }
  }
  CommonFlags& flags = options.flags;
  if (flags.rounds == 0) flags.rounds = flags.quick ? 3 : 21;
  if (options.regions == 0) options.regions = flags.quick ? 500 : 10000;
  if (options.data_mib.empty()) {
    options.data_mib =
        flags.quick ? std::vector<uint64_t>{16, 64} : std::vector<uint64_t>{16, 2048, 32768};
  }
  options.dir = BenchDirFromEnv(REGIONSTORE_SCALE_BENCH_DEFAULT_DIR);
  return options;
}

uint64_t FreeBytes(const std::string& dir) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) Die("statvfs " + dir + ": " + std::strerror(errno));
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

// Drops the file's pages from the page cache (they are clean after Create's
// fsync and each durable commit; fdatasync first for any that are not).
void DropFromCache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) Die("open " + path + ": " + std::strerror(errno));
  if (::fdatasync(fd) != 0) Die("fdatasync " + path + ": " + std::strerror(errno));
  const int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  if (rc != 0) Die("posix_fadvise " + path + ": " + std::strerror(rc));
}

// fork + exec of `argv`, stdout and stderr to /dev/null; returns the exit
// status (or -1 if it did not exit).
int RunQuietly(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = ::fork();
  if (child < 0) Die(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) Die(std::string("waitpid: ") + std::strerror(errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Store OpenWriter(const std::string& path, Io* io = nullptr) {
  OpenOptions options;
  options.io = io;
  auto store = Store::Open(path, OpenMode::kReadWrite, options);
  if (!store.ok()) Die(store.status().ToString());
  return std::move(*store);
}

void CommitTiny(Store& store, const std::string& region, uint64_t stamp) {
  std::array<std::byte, kTinyCommit> payload{};
  std::memcpy(payload.data(), &stamp, sizeof stamp);
  if (auto g = store.Commit(region, payload, Durability::kSync); !g.ok()) {
    Die(g.status().ToString());
  }
}

// An arm: runs once and returns its wall time in seconds (what it times is
// up to the arm: an arm may leave its setup out).
struct TimedArm {
  std::string name;
  std::function<double()> run;
};

// Per arm, per round, seconds. Round r runs arms r, r+1, ... (mod n); with
// `cold`, `drop` runs (untimed) before every arm.
std::vector<std::vector<double>> RunRounds(const std::vector<TimedArm>& arms, int rounds,
                                           const std::function<void()>& drop) {
  std::vector<std::vector<double>> seconds(arms.size());
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < arms.size(); ++k) {
      const size_t a = (static_cast<size_t>(round) + k) % arms.size();
      if (drop) drop();
      seconds[a].push_back(arms[a].run());
    }
  }
  return seconds;
}

double Minimum(const std::vector<double>& values) {
  return values.empty() ? NAN : *std::min_element(values.begin(), values.end());
}
double Maximum(const std::vector<double>& values) {
  return values.empty() ? NAN : *std::max_element(values.begin(), values.end());
}

const char* Verdict(bool met) { return met ? "met" : "**missed**"; }

// --------------------------------------------------------------------------
// Part 1: many regions

std::string RegionName(uint32_t index) {
  char name[16];
  std::snprintf(name, sizeof name, "r-%06u", index);
  return name;
}

void RunManyRegions(const Options& options) {
  const std::string path = options.dir + "/scale-regions.rgn";
  std::filesystem::remove(path);
  std::printf("## Many regions: %s regions of %llu bytes\n\n", Grouped(options.regions).c_str(),
              static_cast<unsigned long long>(kRegionCapacity));
  CreateOptions create;
  for (uint32_t i = 0; i < options.regions; ++i) {
    create.checkpoints.push_back({RegionName(i), kRegionCapacity});  // kAuto
  }
  std::fprintf(stderr, "  regions: create\n");
  const auto create_start = Clock::now();
  if (Status s = Store::Create(path, 0, create); !s.ok()) Die(s.ToString());
  const double create_s = Seconds(Clock::now() - create_start);
  auto info = ReadStoreInfo(path);
  if (!info.ok()) Die(info.status().ToString());
  const uint64_t file_size = info->file_size;
  const std::string layout(SlotLayoutName(info->regions.front().layout));
  const uint64_t stride = info->regions.front().slot_stride;

  // One commit per region, so verify has payloads to check.
  std::fprintf(stderr, "  regions: one commit into each\n");
  const auto fill_start = Clock::now();
  {
    Store store = OpenWriter(path);
    std::array<std::byte, kRegionCapacity> payload{};
    for (uint32_t i = 0; i < options.regions; ++i) {
      std::memcpy(payload.data(), &i, sizeof i);
      const Durability mode =
          i + 1 == options.regions ? Durability::kPwriteFdatasync : Durability::kNone;
      if (auto g = store.Commit(RegionName(i), payload, mode); !g.ok()) {
        Die(g.status().ToString());
      }
    }
  }
  const double fill_s = Seconds(Clock::now() - fill_start);

  const std::string last = RegionName(options.regions - 1);
  uint64_t stamp = 0;
  uint64_t open_read_bytes = 0;
  std::vector<TimedArm> arms;
  const bool have_regionctl =
      !options.regionctl.empty() && ::access(options.regionctl.c_str(), X_OK) == 0;
  if (have_regionctl) {
    for (const char* verb : {"inspect", "stat", "verify"}) {
      arms.push_back({std::string("regionctl ") + verb, [&, verb] {
                        const auto start = Clock::now();
                        const int rc = RunQuietly({options.regionctl, verb, path});
                        const double s = Seconds(Clock::now() - start);
                        if (rc != 0)
                          Die(std::string("regionctl ") + verb + " exited " + std::to_string(rc));
                        return s;
                      }});
    }
  }
  arms.push_back({"Store::Open(kReadWrite) + close", [&] {
                    CountingIo io;
                    const auto start = Clock::now();
                    {
                      Store store = OpenWriter(path, &io);
                      open_read_bytes = io.counts().read_bytes;
                    }
                    return Seconds(Clock::now() - start);
                  }});
  arms.push_back({"Store::Open(kReadWrite) + 16 B kSync commit into the last region + close", [&] {
                    const auto start = Clock::now();
                    {
                      Store store = OpenWriter(path);
                      CommitTiny(store, last, ++stamp);
                    }
                    return Seconds(Clock::now() - start);
                  }});
  arms.push_back({"Store::Open(kReadOnly) + close", [&] {
                    const auto start = Clock::now();
                    {
                      auto store = Store::Open(path, OpenMode::kReadOnly);
                      if (!store.ok()) Die(store.status().ToString());
                    }
                    return Seconds(Clock::now() - start);
                  }});
  arms.push_back({"ReadStoreInfo", [&] {
                    const auto start = Clock::now();
                    auto read = ReadStoreInfo(path);
                    const double s = Seconds(Clock::now() - start);
                    if (!read.ok()) Die(read.status().ToString());
                    return s;
                  }});
  arms.push_back({"VerifyRegions (headers only)", [&] {
                    VerifyOptions verify;
                    verify.check_payloads = false;
                    const auto start = Clock::now();
                    auto reports = VerifyRegions(path, verify);
                    const double s = Seconds(Clock::now() - start);
                    if (!reports.ok()) Die(reports.status().ToString());
                    return s;
                  }});
  arms.push_back({"VerifyRegions (payloads too)", [&] {
                    const auto start = Clock::now();
                    auto reports = VerifyRegions(path);
                    const double s = Seconds(Clock::now() - start);
                    if (!reports.ok()) Die(reports.status().ToString());
                    return s;
                  }});
  // What each arm should stay under (seconds), or NaN.
  const auto target_of = [](const std::string& name) {
    if (name == "regionctl inspect" || name == "regionctl stat") return 0.1;
    if (name == "regionctl verify" || name.starts_with("VerifyRegions")) return 2.0;
    if (name == "Store::Open(kReadWrite) + close") return 0.05;
    return static_cast<double>(NAN);
  };

  std::vector<std::vector<double>> warm, cold;
  {
    const RealtimeScope realtime(options.flags.realtime, "regionstore_scale_bench");
    std::fprintf(stderr, "  regions: %d warm rounds\n", options.flags.rounds);
    for (const TimedArm& arm : arms) static_cast<void>(arm.run());  // untimed
    warm = RunRounds(arms, options.flags.rounds, {});
    std::fprintf(stderr, "  regions: %d cold rounds\n", options.flags.rounds);
    cold = RunRounds(arms, options.flags.rounds, [&] { DropFromCache(path); });
  }
  const uint64_t open_read = open_read_bytes;
  std::filesystem::remove(path);

  const double file_mib = static_cast<double>(file_size) / kMiB;
  std::printf(
      "Store::Create of %s regions of %llu bytes (kAuto: %s slots, stride %s bytes), data area "
      "0: file %s bytes (%s MiB; target <= 250 MiB: %s), Create %s s (target < 10 s: %s). "
      "Then one commit into each region (%s s, kNone, the last kPwriteFdatasync).\n\n",
      Grouped(options.regions).c_str(), static_cast<unsigned long long>(kRegionCapacity),
      layout.c_str(), Grouped(stride).c_str(), Grouped(file_size).c_str(),
      Fixed(file_mib, 1).c_str(), Verdict(file_mib <= 250), Fixed(create_s, 2).c_str(),
      Verdict(create_s < 10), Fixed(fill_s, 2).c_str());
  std::printf(
      "%d rounds, the arms' order rotating; warm: the page cache holds the file; cold: "
      "posix_fadvise(DONTNEED) of the store file before each arm. regionctl: %s (fork + exec, "
      "output to /dev/null, wall time). Medians in ms (range).\n\n",
      options.flags.rounds, have_regionctl ? options.regionctl.c_str() : "not found, left out");
  std::printf("| arm | warm ms | warm range | cold ms | cold range | target | warm / cold |\n");
  std::printf("| --- | ---: | --- | ---: | --- | ---: | --- |\n");
  for (size_t a = 0; a < arms.size(); ++a) {
    const double target = target_of(arms[a].name);
    const double w = Median(warm[a]);
    const double c = Median(cold[a]);
    std::printf("| %s | %s | %s-%s | %s | %s-%s | %s | %s |\n", arms[a].name.c_str(),
                Millis(w).c_str(), Millis(Minimum(warm[a])).c_str(),
                Millis(Maximum(warm[a])).c_str(), Millis(c).c_str(),
                Millis(Minimum(cold[a])).c_str(), Millis(Maximum(cold[a])).c_str(),
                std::isnan(target) ? "" : ("< " + Millis(target) + " ms").c_str(),
                std::isnan(target)
                    ? ""
                    : (std::string(Verdict(w < target)) + " / " + Verdict(c < target)).c_str());
  }
  std::printf("\nThe writer's open read %s bytes through its Io (pread).\n\n",
              Grouped(open_read).c_str());
}

// --------------------------------------------------------------------------
// Part 2: data area size

void RunDataSizes(const Options& options) {
  std::printf("## Writer open and first commit by data area size\n\n");
  struct Sized {
    uint64_t data_size;
    std::string path;
    double create_s;
  };
  std::vector<Sized> stores;
  std::vector<std::string> skipped;
  for (uint64_t mib : options.data_mib) {
    std::filesystem::remove(options.dir + "/scale-data-" + std::to_string(mib) + ".rgn");
  }
  for (uint64_t mib : options.data_mib) {
    const uint64_t bytes = mib * kMiB;
    const std::string path = options.dir + "/scale-data-" + std::to_string(mib) + ".rgn";
    // Free space now: the stores made so far already take theirs.
    const uint64_t free_bytes = FreeBytes(options.dir);
    if (free_bytes < bytes + 2 * kMiB + kSpareBytes) {
      skipped.push_back(AreaSizeName(bytes) + " (needs " + Grouped((bytes + kSpareBytes) / kMiB) +
                        " MiB with the spare, " + Grouped(free_bytes / kMiB) + " MiB free)");
      continue;
    }
    CreateOptions create;
    create.checkpoints.push_back({"small", kSmallCapacity});
    std::fprintf(stderr, "  data: create %s\n", AreaSizeName(bytes).c_str());
    const auto start = Clock::now();
    if (Status s = Store::Create(path, bytes, create); !s.ok()) Die(s.ToString());
    stores.push_back({bytes, path, Seconds(Clock::now() - start)});
  }
  if (stores.empty()) {
    std::printf("Skipped: no size fits (%zu asked for).\n\n", options.data_mib.size());
    return;
  }

  uint64_t stamp = 0;
  // Per store: open, commit (seconds) of one sample.
  const auto sample = [&](const Sized& store, double& open_s, double& commit_s) {
    const auto start = Clock::now();
    Store handle = OpenWriter(store.path);
    const auto opened = Clock::now();
    CommitTiny(handle, "small", ++stamp);
    commit_s = Seconds(Clock::now() - opened);
    open_s = Seconds(opened - start);
  };
  struct Times {
    std::vector<std::vector<double>> open, commit, total;
  };
  const auto run = [&](bool cold) {
    Times t;
    t.open.resize(stores.size());
    t.commit.resize(stores.size());
    t.total.resize(stores.size());
    for (int round = 0; round < options.flags.rounds; ++round) {
      for (size_t k = 0; k < stores.size(); ++k) {
        const size_t s = (static_cast<size_t>(round) + k) % stores.size();
        if (cold) DropFromCache(stores[s].path);
        double open_s = 0;
        double commit_s = 0;
        sample(stores[s], open_s, commit_s);
        t.open[s].push_back(open_s);
        t.commit[s].push_back(commit_s);
        t.total[s].push_back(open_s + commit_s);
      }
    }
    return t;
  };
  Times warm, cold;
  {
    const RealtimeScope realtime(options.flags.realtime, "regionstore_scale_bench");
    for (const Sized& store : stores) {  // untimed: the first commit settles the region
      double open_s = 0;
      double commit_s = 0;
      sample(store, open_s, commit_s);
    }
    std::fprintf(stderr, "  data: %d warm rounds\n", options.flags.rounds);
    warm = run(false);
    std::fprintf(stderr, "  data: %d cold rounds\n", options.flags.rounds);
    cold = run(true);
  }
  for (const Sized& store : stores) std::filesystem::remove(store.path);

  std::printf(
      "Stores with one 4 KiB region (kAuto) and a data area of each size, all on disk at once; "
      "created sequentially (Create time below: the zero-fill). %d rounds, the stores' order "
      "rotating; per store: Store::Open(kReadWrite), Commit of %zu bytes (kSync) into the "
      "region, close. Warm: the pages the open and commit touch are cached (the rest of a big "
      "file may not be); cold: posix_fadvise(DONTNEED) of the store file first. Medians in ms; "
      "vs %s = median of the per-round ratios of open + commit (range). Target: within 20%%.\n\n",
      options.flags.rounds, kTinyCommit, AreaSizeName(stores.front().data_size).c_str());
  if (!skipped.empty()) {
    std::printf("Skipped for lack of room: ");
    for (size_t i = 0; i < skipped.size(); ++i) {
      std::printf("%s%s", i > 0 ? "; " : "", skipped[i].c_str());
    }
    std::printf(".\n\n");
  }
  std::printf(
      "| data area | Create s | warm: open ms | commit ms | open + commit vs %s | cold: "
      "open ms | commit ms | open + commit vs %s | within 20%% (warm / cold) |\n",
      AreaSizeName(stores.front().data_size).c_str(),
      AreaSizeName(stores.front().data_size).c_str());
  std::printf("| --- | ---: | ---: | ---: | --- | ---: | ---: | --- | --- |\n");
  const auto ratio_cell = [](const std::vector<double>& num, const std::vector<double>& den,
                             double& median) {
    std::vector<double> ratios;
    for (size_t i = 0; i < num.size() && i < den.size(); ++i) ratios.push_back(num[i] / den[i]);
    median = Median(ratios);
    return Fixed(median, 2) + " (" + Fixed(Minimum(ratios), 2) + "-" + Fixed(Maximum(ratios), 2) +
           ")";
  };
  for (size_t s = 0; s < stores.size(); ++s) {
    double warm_ratio = NAN;
    double cold_ratio = NAN;
    const std::string warm_cell = ratio_cell(warm.total[s], warm.total[0], warm_ratio);
    const std::string cold_cell = ratio_cell(cold.total[s], cold.total[0], cold_ratio);
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                AreaSizeName(stores[s].data_size).c_str(), Fixed(stores[s].create_s, 1).c_str(),
                Millis(Median(warm.open[s])).c_str(), Millis(Median(warm.commit[s])).c_str(),
                s == 0 ? "1" : warm_cell.c_str(), Millis(Median(cold.open[s])).c_str(),
                Millis(Median(cold.commit[s])).c_str(), s == 0 ? "1" : cold_cell.c_str(),
                s == 0
                    ? ""
                    : (std::string(Verdict(warm_ratio <= 1.2)) + " / " + Verdict(cold_ratio <= 1.2))
                          .c_str());
  }
  std::printf("\n");
}

}  // namespace
}  // namespace regionstore::bench

int main(int argc, char** argv) {
  using namespace regionstore::bench;
  const Options options = ParseOptions(argc, argv);
  std::error_code error;
  std::filesystem::create_directories(options.dir, error);
  if (error) Die("cannot create " + options.dir + ": " + error.message());
  utsname machine{};
  ::uname(&machine);
  std::printf("# regionstore scale benchmark%s\n\n", options.flags.quick ? " (--quick)" : "");
  std::printf("Linux %s %s, %ld CPUs online; files in %s (%s MiB free).\n\n", machine.release,
              machine.machine, ::sysconf(_SC_NPROCESSORS_ONLN), options.dir.c_str(),
              Grouped(FreeBytes(options.dir) / kMiB).c_str());
  const auto started = Clock::now();
  if (options.only.empty() || options.only == "regions") RunManyRegions(options);
  std::fflush(stdout);
  if (options.only.empty() || options.only == "data") RunDataSizes(options);
  std::printf("Run time: %.0f s.\n", Seconds(Clock::now() - started));
  return 0;
}
