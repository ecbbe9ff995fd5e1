// Checkpoint commit benchmark: what Store::Commit costs beside the
// same syscalls made without the library, and beside LMDB and SQLite doing
// "replace one blob durably and atomically". docs/BENCH-CHECKPOINTS.md has a
// measured run and how to read it.
//
// A plain program, not Google Benchmark, so that arms can be interleaved:
// every measurement is a set of rounds, and each round times one batch of
// every arm, the first arm rotating from round to round. A batch runs
// operations until it has lasted a target time. Tables give each arm's
// median over rounds; each ratio is the median of the per-round ratios (two
// batches of one round ran a few tens of milliseconds apart, so they saw
// about the same machine), with their range. Nothing is asserted: speed is
// never a test.
//
// Sections:
//  1. commit vs raw, per durability mode, at 4 KiB, 64 KiB and 1 MiB. raw is the
//     mode's syscalls (or memcpy) on the same store file, at a slot of a
//     second region of the same size, writing the payload only. Beside them,
//     to show where a commit's time goes: raw rotating over three slots,
//     XXH3 of the payload alone, and "same I/O": what a commit writes,
//     without the library.
//  2. (built when LMDB and SQLite development files are found) peers: LMDB
//     (default flags), SQLite (WAL, synchronous=FULL), our commit in both
//     durable modes, and pwrite+fdatasync on a plain file (the device
//     floor), with where each one's pages sit in the page cache.
//  3. page-cache folios: 1 MiB pwrite+fdatasync and 1 MiB commits on files
//     whose pages sit in large folios or in 4 KiB folios.
//  4. writer open (bench/open_bench.cc): Store::Open plus a first 16-byte
//     commit on a store whose two other regions hold 1 GiB commits, beside
//     the same on a store with empty big regions, and after SIGKILLed
//     writers; bytes counted through the Io. Needs ~12 GiB free for a few
//     seconds (two stores, removed at the end), else it says so and skips.
//  5. compact slots: (a) commits into compact and into 64 KiB-aligned slots
//     of the same capacity, 4 KiB to 1 MiB, side by side, in kNone, kSync and
//     kPwriteFdatasync; (b) a 100-byte kSync commit into one of 10,000
//     compact regions beside a raw 4 KiB pwrite + fdatasync in the same file.
// The folio census reads /proc/kpageflags, so it needs root; without it the
// tables say "unknown".
//
// Files go to $REGIONSTORE_BENCH_DIR, default a folder under the build
// directory. Put it on the disk you want to measure: tmpfs or overlayfs
// measures no device and gets a loud warning.
//
// Usage: regionstore_commit_bench [--quick] [--realtime] [--rounds=N]
//                                 [--only=ratio|peers|folios|open|compact|many]
//                                 [--json=FILE] [--open-mib=N] [--open-rounds=N]
//                                 [--open-kills=N] [--many-regions=N]
// --json writes sections 1, 2, 4 and 5's medians and ratios to FILE, for
// bench/report.py (which reads sections 1, 2 and 4).
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <xxh_x86dispatch.h>

#include <nlohmann/json.hpp>

#ifdef REGIONSTORE_BENCH_PEERS
#include <lmdb.h>
#include <sqlite3.h>
#endif

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "open_bench.h"
#include "median.h"
#include "realtime_scope.h"
#include "text_cells.h"
#include "regionstore/store.h"

#ifndef REGIONSTORE_COMMIT_BENCH_DEFAULT_DIR
#define REGIONSTORE_COMMIT_BENCH_DEFAULT_DIR "commit-bench-files"
#endif

namespace {

using regionstore::Durability;
using regionstore::OpenMode;
using regionstore::Store;
using regionstore::bench::Fixed;
using regionstore::bench::Grouped;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
// The two slot layouts of lib/slot.h (format v1), offsets inside a slot.
// Aligned: the slot starts on a 64 KiB boundary, its 4 KiB header unit ends
// where its payload starts, 64 KiB in. Compact: the header unit opens the
// slot, the payload follows it. Setup checks these against a real commit
// (CheckSlotLayout).
constexpr uint64_t kAlignedHeaderUnitOffset = 60 * kKiB;
constexpr uint64_t kAlignedPayloadOffset = 64 * kKiB;
constexpr uint64_t kCompactHeaderUnitOffset = 0;
constexpr uint64_t kCompactPayloadOffset = 4 * kKiB;
constexpr uint64_t kHeaderUnitSize = 4 * kKiB;
constexpr uint32_t kSlotsPerRegion = 3;

// statfs f_type values (linux/magic.h).
constexpr long kTmpfsMagic = 0x01021994;
constexpr long kRamfsMagic = static_cast<long>(0x858458f6);
constexpr long kOverlayfsMagic = 0x794c7630;
constexpr long kExt4Magic = 0xEF53;
constexpr long kXfsMagic = 0x58465342;
constexpr long kBtrfsMagic = static_cast<long>(0x9123683E);

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "regionstore_commit_bench: %s\n", what.c_str());
  std::exit(1);
}

std::string Errno(const char* call, const std::string& path) {
  std::string message = call;
  message += " ";
  message += path;
  message += ": ";
  message += std::strerror(errno);
  return message;
}

std::string SizeName(uint64_t bytes) {
  return bytes >= kMiB ? std::to_string(bytes / kMiB) + " MiB"
                       : std::to_string(bytes / kKiB) + " KiB";
}

std::string FsName(long type) {
  switch (type) {
    case kExt4Magic: return "ext2/3/4";
    case kXfsMagic: return "xfs";
    case kBtrfsMagic: return "btrfs";
    case kTmpfsMagic: return "tmpfs";
    case kRamfsMagic: return "ramfs";
    case kOverlayfsMagic: return "overlayfs";
    default: {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(type));
      return hex;
    }
  }
}

// --------------------------------------------------------------------------
// Options and the bench directory

struct Options {
  bool quick = false;
  bool realtime = false;     // durable arms under SCHED_FIFO
  int rounds = 0;            // 0: the default for the run length
  std::string only;          // "", "ratio", "peers", "folios", "open" or "compact"
  std::string dir;
  std::string json_path;     // --json=FILE, or ""
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

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--realtime") {
      options.realtime = true;
    } else if (arg.starts_with("--rounds=")) {
      options.rounds = std::atoi(argv[i] + 9);
      if (options.rounds < 1) Die("--rounds needs a positive number");
    } else if (arg.starts_with("--only=")) {
      options.only = std::string(arg.substr(7));
      if (options.only != "ratio" && options.only != "peers" && options.only != "folios" &&
          options.only != "open" && options.only != "compact" && options.only != "many") {
        Die("--only takes ratio, peers, folios, open, compact or many (section 5b alone)");
      }
    } else if (arg.starts_with("--many-regions=")) {
      const long long regions = std::atoll(argv[i] + 15);
      if (regions < 1 || regions > 1'000'000) Die("--many-regions needs 1 to 1000000");
      options.many_regions = static_cast<uint32_t>(regions);
    } else if (arg.starts_with("--open-mib=")) {
      const long long mib = std::atoll(argv[i] + 11);
      if (mib < 1) Die("--open-mib needs a positive number");
      options.open_mib = static_cast<uint64_t>(mib);
    } else if (arg.starts_with("--open-rounds=")) {
      options.open_rounds = std::atoi(argv[i] + 14);
      if (options.open_rounds < 1) Die("--open-rounds needs a positive number");
    } else if (arg.starts_with("--open-kills=")) {
      options.open_kills = std::atoi(argv[i] + 13);
      if (options.open_kills < 0) Die("--open-kills needs a number >= 0");
    } else if (arg.starts_with("--json=")) {
      options.json_path = std::string(arg.substr(7));
      if (options.json_path.empty()) Die("--json needs a file name");
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: regionstore_commit_bench [--quick] [--realtime] [--rounds=N]\n"
          "                                [--only=ratio|peers|folios|open|compact|many]\n"
          "                                [--json=FILE] [--open-mib=N] [--open-rounds=N]\n"
          "                                [--open-kills=N] [--many-regions=N]\n"
          "  files go to $REGIONSTORE_BENCH_DIR (default %s)\n"
          "  --quick: 5 short rounds per measurement, well under a minute\n"
          "  --realtime: run the durable arms under SCHED_FIFO (root), so that on busy CPUs\n"
          "    each wait for I/O does not also wait for a scheduler tick\n"
          "  --rounds=N: interleaved rounds per measurement (default 31, --quick 5)\n"
          "  --json=FILE: also write the commit, peer and open medians and ratios to FILE\n"
          "    (bench/report.py reads it)\n"
          "  --open-mib=N: section 4's big regions hold N MiB commits (default 1024; the two\n"
          "    stores need ~12 N MiB free while it runs)\n"
          "  --open-rounds=N: section 4's interleaved rounds (default 51, --quick 21)\n"
          "  --open-kills=N: section 4's kills at a random moment (default 20, --quick 10)\n"
          "  --many-regions=N: section 5b's store has N regions of 100 bytes (default 10000)\n",
          REGIONSTORE_COMMIT_BENCH_DEFAULT_DIR);
      std::exit(0);
    } else {
      std::string message = "unknown argument '";
      message += arg;
      message += "' (try --help)";
      Die(message);
    }
  }
  if (options.rounds == 0) options.rounds = options.quick ? 5 : 31;
  if (options.open_rounds == 0) options.open_rounds = options.quick ? 21 : 51;
  if (options.open_kills < 0) options.open_kills = options.quick ? 10 : 20;
  options.mapped_batch_ms = options.quick ? 5 : 20;
  options.durable_batch_ms = options.quick ? 15 : 40;
  options.peer_batch_ms = options.quick ? 20 : 60;
  const char* dir = std::getenv("REGIONSTORE_BENCH_DIR");
  options.dir = dir != nullptr && *dir != '\0' ? dir : REGIONSTORE_COMMIT_BENCH_DEFAULT_DIR;
  return options;
}

// Creates the directory and says what it sits on; warns loudly when that is
// memory rather than a disk.
std::string PrepareDirectory(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) Die("cannot create " + dir + ": " + error.message());
  struct statfs fs {};
  if (::statfs(dir.c_str(), &fs) != 0) Die(Errno("statfs", dir));
  const long type = static_cast<long>(fs.f_type);
  const std::string name = FsName(type);
  if (type == kTmpfsMagic || type == kRamfsMagic || type == kOverlayfsMagic) {
    std::fprintf(stderr,
                 "\n*** WARNING: %s is on %s. Durable arms there measure memory, not a disk:\n"
                 "*** fdatasync has nothing to flush and the ratios mean nothing.\n"
                 "*** Set REGIONSTORE_BENCH_DIR to a folder on a real disk.\n\n",
                 dir.c_str(), name.c_str());
    std::printf("**WARNING: the bench directory is on %s: these numbers measure no disk.**\n\n",
                name.c_str());
  }
  return name;
}

// --------------------------------------------------------------------------
// Payloads: two buffers that differ in every byte, used alternately, each
// stamped with the operation number, so every operation writes new content.

class Payloads {
 public:
  explicit Payloads(uint64_t size) : buffers_{Filled(size, 0x9e3779b97f4a7c15), Filled(size, 7)} {}

  std::span<const std::byte> Next() {
    std::vector<std::byte>& buffer = buffers_[count_ & 1];
    std::memcpy(buffer.data(), &count_, sizeof count_);
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

  std::array<std::vector<std::byte>, 2> buffers_;
  uint64_t count_ = 1;
};

// --------------------------------------------------------------------------
// Scheduling

using regionstore::bench::RealtimeScope;

// --------------------------------------------------------------------------
// Arms and interleaved rounds

// Runs `ops` operations; returns "" or what failed.
using Batch = std::function<std::string(uint64_t ops)>;

struct Arm {
  std::string name;
  Batch batch;
};

// Per arm, the time per operation of each round's batch, in nanoseconds.
using RoundTimes = std::vector<std::vector<double>>;

// What the block device under the bench directory did per operation during
// one batch, from its /sys/.../stat counters. They count every process's
// I/O on that device, so a busy neighbour shows up here: read medians.
struct DevicePerOp {
  double flushes = NAN;
  double write_requests = NAN;
  double write_kib = NAN;
  // This thread's CPU time per operation (getrusage), in nanoseconds: user
  // time is the library's own work (checksums, bookkeeping), system time
  // the kernel's (copies into the page cache, writeback, waits excluded).
  double user_ns = NAN;
  double system_ns = NAN;
};

struct Rounds {
  RoundTimes ns;
  std::vector<std::vector<DevicePerOp>> device;  // per arm, per round
};

struct DeviceCounters {
  uint64_t write_requests = 0;
  uint64_t write_sectors = 0;
  uint64_t flushes = 0;
};

// The stat file of the device holding `dir`, or "" (tmpfs, overlayfs, ...).
std::string DeviceStatPath(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return {};
  std::string path = "/sys/dev/block/";
  path += std::to_string(major(st.st_dev));
  path += ":";
  path += std::to_string(minor(st.st_dev));
  path += "/stat";
  return ::access(path.c_str(), R_OK) == 0 ? path : std::string();
}

// Fields 5 and 7 (writes completed, sectors written) and 16 (flushes
// completed) of Documentation/block/stat.rst.
std::optional<DeviceCounters> ReadDevice(const std::string& stat_path) {
  if (stat_path.empty()) return std::nullopt;
  std::FILE* file = std::fopen(stat_path.c_str(), "re");
  if (file == nullptr) return std::nullopt;
  std::array<unsigned long long, 17> fields{};
  size_t read = 0;
  while (read < fields.size() && std::fscanf(file, "%llu", &fields[read]) == 1) ++read;
  std::fclose(file);
  if (read < fields.size()) return std::nullopt;
  return DeviceCounters{fields[4], fields[6], fields[15]};
}

// On a machine whose CPUs other processes keep busy, a thread woken by an
// I/O completion waits for a CPU, up to a scheduler tick (4 ms at HZ=250),
// at every wait: durable operations that take 0.1 ms on free CPUs take
// ~4 ms, for seconds at a time (docs/BENCH-CHECKPOINTS.md). A round whose
// reference arm took longer than this per operation ran in that slow state.
constexpr double kSlowRoundNs = 2e6;

using regionstore::bench::Median;

double Seconds(Clock::duration elapsed) { return std::chrono::duration<double>(elapsed).count(); }

void RunOps(const Arm& arm, uint64_t ops) {
  if (std::string error = arm.batch(ops); !error.empty()) Die(arm.name + ": " + error);
}

// Operations per clock check: doubled until one stride takes a twentieth of
// the batch time, so reading the clock costs nothing measurable. Also warms
// the arm up (page faults, caches, file growth).
uint64_t Calibrate(const Arm& arm, double batch_ns) {
  uint64_t stride = 1;
  for (;;) {
    const auto start = Clock::now();
    RunOps(arm, stride);
    const double ns = Seconds(Clock::now() - start) * 1e9;
    if (ns >= batch_ns / 20 || stride >= (uint64_t{1} << 24)) return stride;
    stride *= 2;
  }
}

// `rounds` rounds; round r runs arms r, r+1, ... (mod n), so each arm runs
// first, and after each other arm, equally often. A batch runs strides of
// operations until it has taken `batch_ms`: a batch lasts about as long
// whether the machine is in its fast or its slow state.
// This thread's user and system CPU time so far, in nanoseconds.
std::pair<double, double> ThreadCpuNs() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  const auto ns = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_usec) * 1e3;
  };
  return {ns(usage.ru_utime), ns(usage.ru_stime)};
}

Rounds RunInterleaved(const std::vector<Arm>& arms, int rounds, double batch_ms,
                      const std::string& device_stat) {
  const double batch_ns = batch_ms * 1e6;
  std::vector<uint64_t> strides;
  for (const Arm& arm : arms) strides.push_back(Calibrate(arm, batch_ns));
  Rounds out;
  out.ns.resize(arms.size());
  out.device.resize(arms.size());
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < arms.size(); ++k) {
      const size_t a = (static_cast<size_t>(round) + k) % arms.size();
      const std::optional<DeviceCounters> before = ReadDevice(device_stat);
      const std::pair<double, double> cpu_before = ThreadCpuNs();
      uint64_t ops = 0;
      const auto start = Clock::now();
      double elapsed_ns = 0;
      while (elapsed_ns < batch_ns) {
        RunOps(arms[a], strides[a]);
        ops += strides[a];
        elapsed_ns = Seconds(Clock::now() - start) * 1e9;
      }
      const std::pair<double, double> cpu_after = ThreadCpuNs();
      const std::optional<DeviceCounters> after = ReadDevice(device_stat);
      const auto per_op = static_cast<double>(ops);
      out.ns[a].push_back(elapsed_ns / per_op);
      DevicePerOp device;
      device.user_ns = (cpu_after.first - cpu_before.first) / per_op;
      device.system_ns = (cpu_after.second - cpu_before.second) / per_op;
      if (before && after) {
        device.flushes = static_cast<double>(after->flushes - before->flushes) / per_op;
        device.write_requests =
            static_cast<double>(after->write_requests - before->write_requests) / per_op;
        device.write_kib =
            static_cast<double>(after->write_sectors - before->write_sectors) / 2 / per_op;
      }
      out.device[a].push_back(device);
    }
  }
  return out;
}

// Each field's median over rounds.
DevicePerOp MedianDevice(const std::vector<DevicePerOp>& rounds) {
  std::vector<double> flushes, requests, kib, user, system;
  for (const DevicePerOp& d : rounds) {
    flushes.push_back(d.flushes);
    requests.push_back(d.write_requests);
    kib.push_back(d.write_kib);
    user.push_back(d.user_ns);
    system.push_back(d.system_ns);
  }
  return {Median(flushes), Median(requests), Median(kib), Median(user), Median(system)};
}

// Per-round ratios numerator/denominator (same round, so both batches ran in
// about the same machine state): their median and range, and their median
// over the fast and the slow rounds of `reference` (when given).
struct PairedRatio {
  double median = NAN, low = NAN, high = NAN;
  double fast = NAN, slow = NAN;
  int fast_rounds = 0, slow_rounds = 0;
};

PairedRatio Paired(const std::vector<double>& numerator, const std::vector<double>& denominator,
                   const std::vector<double>* reference = nullptr) {
  PairedRatio out;
  std::vector<double> all, fast, slow;
  for (size_t i = 0; i < numerator.size() && i < denominator.size(); ++i) {
    const double ratio = numerator[i] / denominator[i];
    all.push_back(ratio);
    if (reference != nullptr) ((*reference)[i] > kSlowRoundNs ? slow : fast).push_back(ratio);
  }
  out.median = Median(all);
  if (!all.empty()) {
    out.low = *std::min_element(all.begin(), all.end());
    out.high = *std::max_element(all.begin(), all.end());
  }
  out.fast = Median(fast);
  out.slow = Median(slow);
  out.fast_rounds = static_cast<int>(fast.size());
  out.slow_rounds = static_cast<int>(slow.size());
  return out;
}

std::string FormatOps(double ns_per_op) {
  const double ops = 1e9 / ns_per_op;
  char text[32];
  if (ops >= 100) {
    std::snprintf(text, sizeof text, "%.0f", ops);
  } else {
    std::snprintf(text, sizeof text, "%.1f", ops);
  }
  // Thousands separators, for reading a column of very different numbers.
  const std::string digits = text;
  const size_t dot = digits.find('.');
  const size_t integer_end = dot == std::string::npos ? digits.size() : dot;
  std::string out;
  for (size_t i = 0; i < integer_end; ++i) {
    if (i > 0 && (integer_end - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  out += digits.substr(integer_end);
  return out;
}

std::string FormatMicros(double ns) {
  char text[32];
  if (ns < 10'000) {
    std::snprintf(text, sizeof text, "%.2f", ns / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.0f", ns / 1e3);
  }
  return text;
}

// "1.02 (0.98-1.10)".
std::string FormatRatio(const PairedRatio& ratio) {
  return Fixed(ratio.median, 2) + " (" + Fixed(ratio.low, 2) + "-" + Fixed(ratio.high, 2) + ")";
}

// "1.00 / 2.0 / 8": device flushes, write requests and KiB written per
// operation.
std::string FormatDevice(const DevicePerOp& d) {
  if (std::isnan(d.flushes)) return "-";
  return Fixed(d.flushes, 2) + " / " + Fixed(d.write_requests, 1) + " / " +
         Fixed(d.write_kib, 0);
}

// "1.01 / 1.20 (14 / 7)": the ratio in fast and in slow rounds (how many).
std::string FormatByState(const PairedRatio& ratio) {
  return Fixed(ratio.fast, 2) + " / " + Fixed(ratio.slow, 2) + " (" +
         std::to_string(ratio.fast_rounds) + " / " + std::to_string(ratio.slow_rounds) + ")";
}

// --------------------------------------------------------------------------
// Plain-file helpers for the raw arms (the bench calls the OS directly)

class Fd {
 public:
  Fd(const std::string& path, int flags) : path_(path), fd_(::open(path.c_str(), flags, 0644)) {
    if (fd_ < 0) Die(Errno("open", path));
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { ::close(fd_); }
  int get() const { return fd_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// MAP_SHARED, read-write or read-only, of [offset, offset + length).
class FileMapping {
 public:
  FileMapping(int fd, uint64_t offset, uint64_t length, bool writable, const std::string& path)
      : length_(length) {
    void* address = ::mmap(nullptr, length, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED,
                           fd, static_cast<off_t>(offset));
    if (address == MAP_FAILED) Die(Errno("mmap", path));
    base_ = static_cast<std::byte*>(address);
  }
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  ~FileMapping() { ::munmap(base_, length_); }
  std::byte* data() const { return base_; }

 private:
  std::byte* base_ = nullptr;
  uint64_t length_ = 0;
};

// One write of all of `parts` at `offset` (pwritev2 with `flags`); a short
// write is an error here, which a local file does not give.
std::string WriteParts(int fd, std::span<const iovec> parts, uint64_t offset, int flags) {
  size_t total = 0;
  for (const iovec& part : parts) total += part.iov_len;
  ssize_t n;
  do {
    n = ::pwritev2(fd, parts.data(), static_cast<int>(parts.size()), static_cast<off_t>(offset),
                   flags);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return std::string("pwritev2: ") + std::strerror(errno);
  if (static_cast<size_t>(n) != total) return "pwritev2: short write";
  return {};
}

std::string WriteOne(int fd, std::span<const std::byte> data, uint64_t offset, int flags) {
  const iovec part{const_cast<std::byte*>(data.data()), data.size()};
  return WriteParts(fd, std::span(&part, 1), offset, flags);
}

std::string DataSync(int fd) {
  int rc;
  do {
    rc = ::fdatasync(fd);
  } while (rc != 0 && errno == EINTR);
  return rc == 0 ? std::string() : std::string("fdatasync: ") + std::strerror(errno);
}

std::string PwriteFdatasync(int fd, std::span<const std::byte> data, uint64_t offset) {
  if (std::string error = WriteOne(fd, data, offset, 0); !error.empty()) return error;
  return DataSync(fd);
}

// A plain file of `size` bytes written by one large pwrite and synced.
void CreatePlainFile(const std::string& path, uint64_t size) {
  std::filesystem::remove(path);
  const Fd fd(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC);
  const std::vector<std::byte> zeros(size);
  if (std::string error = PwriteFdatasync(fd.get(), zeros, 0); !error.empty()) Die(error);
}

// --------------------------------------------------------------------------
// Where a file's pages sit in the page cache

struct FolioCensus {
  bool available = false;
  std::string why_not;
  uint64_t pages = 0;            // pages in the range
  uint64_t resident = 0;         // of which in the page cache
  uint64_t in_large_folios = 0;  // of which in a folio larger than one page
  std::map<uint64_t, uint64_t> folios;  // folio bytes -> folios whose head is in range
};

// Maps the range read-only, touches only pages already resident (mincore),
// so nothing is read in, and reads their frames' flags from /proc/kpageflags
// (root only). A large folio is a compound head page followed by tails.
FolioCensus CensusOf(const std::string& path, uint64_t offset, uint64_t length) {
  FolioCensus census;
  const auto page_size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset & ~(page_size - 1);
  const uint64_t end = (offset + length + page_size - 1) & ~(page_size - 1);
  census.pages = (end - start) / page_size;
  const Fd file(path, O_RDONLY | O_CLOEXEC);
  const FileMapping mapping(file.get(), start, end - start, /*writable=*/false, path);
  const auto* bytes = reinterpret_cast<const volatile unsigned char*>(mapping.data());
  std::vector<unsigned char> residency(census.pages);
  if (::mincore(mapping.data(), end - start, residency.data()) != 0) Die(Errno("mincore", path));
  const int pagemap = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  const int flags = ::open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
  const auto read_u64 = [](int fd, uint64_t index, uint64_t& out) {
    return ::pread(fd, &out, 8, static_cast<off_t>(index * 8)) == 8;
  };
  constexpr uint64_t kHead = uint64_t{1} << 15;  // KPF_COMPOUND_HEAD
  constexpr uint64_t kTail = uint64_t{1} << 16;  // KPF_COMPOUND_TAIL
  census.available = pagemap >= 0 && flags >= 0;
  if (!census.available) census.why_not = "needs root (/proc/kpageflags)";
  const uint64_t first_virtual = reinterpret_cast<uintptr_t>(mapping.data()) / page_size;
  for (uint64_t i = 0; i < census.pages && census.available; ++i) {
    if ((residency[i] & 1) == 0) continue;
    (void)bytes[i * page_size];  // maps the cached page; reads nothing in
    uint64_t entry = 0;
    if (!read_u64(pagemap, first_virtual + i, entry)) {
      census.available = false;
      census.why_not = "cannot read /proc/self/pagemap";
      break;
    }
    if ((entry >> 63) == 0) continue;  // evicted since mincore
    const uint64_t frame = entry & ((uint64_t{1} << 55) - 1);
    if (frame == 0) {
      census.available = false;
      census.why_not = "frame numbers hidden (needs CAP_SYS_ADMIN)";
      break;
    }
    ++census.resident;
    uint64_t page_flags = 0;
    if (!read_u64(flags, frame, page_flags)) {
      census.available = false;
      census.why_not = "cannot read /proc/kpageflags";
      break;
    }
    if ((page_flags & (kHead | kTail)) != 0) ++census.in_large_folios;
    if ((page_flags & kHead) != 0) {
      uint64_t pages_in_folio = 1;
      uint64_t next = 0;
      while (pages_in_folio < 512 && read_u64(flags, frame + pages_in_folio, next) &&
             (next & kTail) != 0) {
        ++pages_in_folio;
      }
      ++census.folios[pages_in_folio * page_size];
    } else if ((page_flags & kTail) == 0) {
      ++census.folios[page_size];
    }
  }
  if (pagemap >= 0) ::close(pagemap);
  if (flags >= 0) ::close(flags);
  return census;
}

// "256/256 pages cached, 100% in large folios (1x1 MiB)".
std::string DescribeCensus(const FolioCensus& census) {
  if (!census.available) return "unknown: " + census.why_not;
  std::string text = std::to_string(census.resident);
  text += "/";
  text += std::to_string(census.pages);
  text += " pages cached, ";
  text += census.resident == 0 ? std::string("0")
                               : Fixed(100.0 * static_cast<double>(census.in_large_folios) /
                                           static_cast<double>(census.resident),
                                       0);
  text += "% in large folios (";
  bool first = true;
  for (const auto& [bytes, count] : census.folios) {
    if (!first) text += " ";
    first = false;
    text += std::to_string(count);
    text += "x";
    text += SizeName(bytes);
  }
  if (census.in_large_folios > 0) text += first ? "inside larger folios" : " + tails of larger ones";
  text += ")";
  return text;
}

std::string CensusText(const std::string& path, uint64_t offset, uint64_t length) {
  return DescribeCensus(CensusOf(path, offset, length));
}

// Writes the file out and drops all of it from the page cache (nobody may
// map it; a range would keep the large folios straddling its ends), then
// faults [offset, offset + length) back in through a read-only mapping, as
// Load, List or Info on a cold store do: on this kernel each page comes back
// as a 4 KiB folio, unless the mapping is madvise(MADV_HUGEPAGE)d
// (`huge`), which makes the fault's readahead allocate large folios.
void RefillThroughMapping(const std::string& path, uint64_t offset, uint64_t length, bool huge) {
  const Fd fd(path, O_RDWR | O_CLOEXEC);
  if (std::string e = DataSync(fd.get()); !e.empty()) Die(e);
  if (::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED) != 0) {
    Die(Errno("posix_fadvise", path));
  }
  const FileMapping mapping(fd.get(), offset, length, /*writable=*/false, path);
  if (huge && ::madvise(mapping.data(), length, MADV_HUGEPAGE) != 0) {
    Die(Errno("madvise(MADV_HUGEPAGE)", path));
  }
  const auto* bytes = reinterpret_cast<const volatile unsigned char*>(mapping.data());
  for (uint64_t i = 0; i < length; i += 4096) (void)bytes[i];
}

// --------------------------------------------------------------------------
// Stores

// Every region gets an explicit layout, never kAuto: the sections that
// compare with earlier runs keep 64 KiB-aligned slots whatever
// kCompactSlotLimit says.
struct RegionSpec {
  std::string name;
  uint64_t capacity;
  regionstore::SlotLayout layout = regionstore::SlotLayout::kAligned;
};

void CreateStore(const std::string& path, const std::vector<RegionSpec>& regions) {
  regionstore::CreateOptions options;
  options.replace_existing = true;
  for (const RegionSpec& region : regions) {
    options.checkpoints.push_back({region.name, region.capacity, region.layout});
  }
  if (auto s = Store::Create(path, 0, options); !s.ok()) Die(s.ToString());
}

Store OpenStore(const std::string& path) {
  auto store = Store::Open(path, OpenMode::kReadWrite);
  if (!store.ok()) Die(store.status().ToString());
  return std::move(*store);
}

const regionstore::RegionEntry& RegionOf(const regionstore::StoreInfo& info,
                                         const std::string& name) {
  for (const regionstore::RegionEntry& region : info.regions) {
    if (region.name == name) return region;
  }
  Die("no region " + name);
}

bool IsCompact(const regionstore::RegionEntry& region) {
  return region.layout == regionstore::SlotLayout::kCompact;
}
uint64_t SlotPayloadOffset(const regionstore::RegionEntry& region, uint32_t slot) {
  return region.slots_offset + slot * region.slot_stride +
         (IsCompact(region) ? kCompactPayloadOffset : kAlignedPayloadOffset);
}
uint64_t SlotHeaderUnitOffset(const regionstore::RegionEntry& region, uint32_t slot) {
  return region.slots_offset + slot * region.slot_stride +
         (IsCompact(region) ? kCompactHeaderUnitOffset : kAlignedHeaderUnitOffset);
}

// The raw arms write where the library would: checks the layout constants
// against a real commit (its payload at the slot's payload offset, its
// header magic at the start of the header unit). Reads with pread only: a
// page the store's mapping touches would cost its later writeback an extra
// write-protect step the raw arms do not pay.
void CheckSlotLayout(Store& store, const std::string& region_name) {
  const regionstore::RegionEntry& region = RegionOf(store.info(), region_name);
  Payloads payloads(region.capacity);
  const std::span<const std::byte> payload = payloads.Next();
  auto generation = store.Commit(region_name, payload, Durability::kPwriteFdatasync);
  if (!generation.ok()) Die(generation.status().ToString());
  auto reports = regionstore::VerifyRegions(store.path());
  if (!reports.ok()) Die(reports.status().ToString());
  uint32_t slot = kSlotsPerRegion;
  for (const regionstore::RegionReport& report : reports->regions) {
    if (report.name == region_name && report.has_commit) slot = report.active_slot;
  }
  if (slot == kSlotsPerRegion) Die("layout check: no commit in " + region_name);
  const Fd fd(store.path(), O_RDONLY | O_CLOEXEC);
  std::vector<std::byte> read_back(payload.size());
  std::array<char, 8> magic{};
  if (::pread(fd.get(), read_back.data(), read_back.size(),
              static_cast<off_t>(SlotPayloadOffset(region, slot))) !=
          static_cast<ssize_t>(read_back.size()) ||
      std::memcmp(read_back.data(), payload.data(), payload.size()) != 0 ||
      ::pread(fd.get(), magic.data(), magic.size(),
              static_cast<off_t>(SlotHeaderUnitOffset(region, slot))) != 8 ||
      std::memcmp(magic.data(), "RGNSLOT1", 8) != 0) {
    Die("the " + std::string(regionstore::SlotLayoutName(region.layout)) + " slot layout of " +
        region_name +
        " is not the one bench/commit_bench.cc assumes (aligned: header unit at "
        "slot + 60 KiB, payload at slot + 64 KiB; compact: header unit at the slot, payload at "
        "slot + 4 KiB): update k*HeaderUnitOffset and k*PayloadOffset");
  }
}

// --------------------------------------------------------------------------
// Arms

Arm CommitArm(std::string name, Store& store, std::string region, uint64_t size,
              Durability mode) {
  auto payloads = std::make_shared<Payloads>(size);
  return {std::move(name), [&store, region = std::move(region), payloads, mode](uint64_t ops) {
            for (uint64_t i = 0; i < ops; ++i) {
              auto generation = store.Commit(region, payloads->Next(), mode);
              if (!generation.ok()) return generation.status().ToString();
            }
            return std::string();
          }};
}

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

// Where the raw arms of one mode and size write: region `region` of the
// same store file, through their own descriptor and (mapped modes) their
// own mapping of the whole file.
struct RawTarget {
  Durability mode;
  int fd;
  std::byte* map;  // null for the durable modes
  regionstore::RegionEntry region;
};

bool IsDurable(Durability mode) {
  return mode == Durability::kSync || mode == Durability::kPwriteFdatasync;
}

// The payload only, with the mode's syscalls, at slot 0's payload offset
// (`slots` = 1) or rotating over the slots' payload offsets (`slots` = 3).
Arm RawArm(std::string name, const RawTarget& target, uint64_t size, uint32_t slots) {
  auto payloads = std::make_shared<Payloads>(size);
  auto next_slot = std::make_shared<uint32_t>(0);
  return {std::move(name), [=](uint64_t ops) {
            for (uint64_t i = 0; i < ops; ++i) {
              const std::span<const std::byte> payload = payloads->Next();
              *next_slot = (*next_slot + 1) % slots;
              const uint64_t offset = SlotPayloadOffset(target.region, *next_slot);
              switch (target.mode) {
                case Durability::kNone:
                  std::memcpy(target.map + offset, payload.data(), payload.size());
                  break;
                case Durability::kAsync:
                  std::memcpy(target.map + offset, payload.data(), payload.size());
                  if (::msync(target.map + offset, payload.size(), MS_ASYNC) != 0) {
                    return std::string("msync: ") + std::strerror(errno);
                  }
                  break;
                case Durability::kSync:
                  if (std::string e = WriteOne(target.fd, payload, offset, RWF_DSYNC); !e.empty()) {
                    return e;
                  }
                  break;
                case Durability::kPwriteFdatasync:
                  if (std::string e = PwriteFdatasync(target.fd, payload, offset); !e.empty()) {
                    return e;
                  }
                  break;
              }
            }
            return std::string();
          }};
}

// What a commit writes, without the library, rotating over the three slots:
// mapped modes copy the payload, hash it with XXH3, and copy a 64-byte
// header (kAsync adds msync(MS_ASYNC) of unit + payload); durable modes
// write the 4 KiB header unit and the payload in one pwritev2 (RWF_DSYNC, or
// then fdatasync).
Arm SameIoArm(const RawTarget& target, uint64_t size) {
  auto payloads = std::make_shared<Payloads>(size);
  auto unit = std::make_shared<std::array<std::byte, kHeaderUnitSize>>();
  auto next_slot = std::make_shared<uint32_t>(0);
  return {"same I/O", [=](uint64_t ops) {
            for (uint64_t i = 0; i < ops; ++i) {
              const std::span<const std::byte> payload = payloads->Next();
              *next_slot = (*next_slot + 1) % kSlotsPerRegion;
              const uint64_t unit_at = SlotHeaderUnitOffset(target.region, *next_slot);
              const uint64_t payload_at = SlotPayloadOffset(target.region, *next_slot);
              if (!IsDurable(target.mode)) {
                std::memcpy(target.map + payload_at, payload.data(), payload.size());
                std::array<uint64_t, 8> header{};
                header[0] = XXH3_64bits_dispatch(payload.data(), payload.size());
                header[1] = i;
                header[7] = XXH3_64bits_dispatch(header.data(), 56);
                std::memcpy(target.map + unit_at, header.data(), sizeof header);
                if (target.mode == Durability::kAsync &&
                    ::msync(target.map + unit_at, kHeaderUnitSize + payload.size(), MS_ASYNC) !=
                        0) {
                  return std::string("msync: ") + std::strerror(errno);
                }
                continue;
              }
              std::memcpy(unit->data(), &i, sizeof i);
              const std::array<iovec, 2> parts{
                  iovec{unit->data(), unit->size()},
                  iovec{const_cast<std::byte*>(payload.data()), payload.size()}};
              const bool dsync = target.mode == Durability::kSync;
              if (std::string e = WriteParts(target.fd, parts, unit_at, dsync ? RWF_DSYNC : 0);
                  !e.empty()) {
                return e;
              }
              if (!dsync) {
                if (std::string e = DataSync(target.fd); !e.empty()) return e;
              }
            }
            return std::string();
          }};
}

// XXH3 of the payload alone: the price of G1 (a torn payload is never
// returned as valid), paid by every commit.
Arm ChecksumArm(uint64_t size) {
  auto payloads = std::make_shared<Payloads>(size);
  auto sink = std::make_shared<uint64_t>(0);
  return {"XXH3 only", [=](uint64_t ops) {
            for (uint64_t i = 0; i < ops; ++i) {
              const std::span<const std::byte> payload = payloads->Next();
              *sink += XXH3_64bits_dispatch(payload.data(), payload.size());
            }
            // Keeps the hashing from being optimised away.
            if (*sink == 42) std::fprintf(stderr, " ");
            return std::string();
          }};
}

// --------------------------------------------------------------------------
// Section 1: commit vs raw

struct ModeInfo {
  Durability mode;
  const char* name;
  const char* arm;  // the benchmark arm name, as in the README
  const char* raw;  // what the raw arm does
};

constexpr std::array<ModeInfo, 4> kModes{{
    {Durability::kNone, "kNone", "commit_none", "memcpy into a mapping of the file"},
    {Durability::kAsync, "kAsync", "commit_async", "memcpy + msync(MS_ASYNC)"},
    {Durability::kSync, "kSync", "commit_sync", "pwritev2(RWF_DSYNC) of the payload"},
    {Durability::kPwriteFdatasync, "kPwriteFdatasync", "commit_pwrite_fdatasync",
     "pwrite + fdatasync of the payload"},
}};

enum RatioArm : size_t { kCommit, kRaw, kRawThreeSlots, kSameIo, kChecksum, kRatioArms };

struct RatioRow {
  const ModeInfo* mode;
  uint64_t size;
  std::array<double, kRatioArms> median_ns;
  PairedRatio cost;  // commit / raw
  std::array<DevicePerOp, kRatioArms> device;
  std::string page_cache;  // durable 1 MiB rows: the folio census of both regions
};

std::vector<RatioRow> RunRatios(const Options& options) {
  const std::array<uint64_t, 3> sizes{4 * kKiB, 64 * kKiB, 1 * kMiB};
  std::vector<RatioRow> rows;
  for (const ModeInfo& mode : kModes) {
    // One store per mode, so one mode's dirty pages never reach another
    // mode's barrier.
    std::string path = options.dir;
    path += "/ratio-";
    path += mode.name;
    path += ".rgn";
    std::vector<RegionSpec> regions;
    for (uint64_t size : sizes) {
      regions.push_back({"commit-" + SizeName(size), size});
      regions.push_back({"raw-" + SizeName(size), size});
    }
    CreateStore(path, regions);
    Store store = OpenStore(path);
    CheckSlotLayout(store, "commit-4 KiB");
    const Fd fd(path, O_RDWR | O_CLOEXEC);
    const bool durable = IsDurable(mode.mode);
    std::optional<FileMapping> mapping;
    if (!durable) mapping.emplace(fd.get(), 0, store.info().file_size, /*writable=*/true, path);
    for (uint64_t size : sizes) {
      const RawTarget target{mode.mode, fd.get(), durable ? nullptr : mapping->data(),
                             RegionOf(store.info(), "raw-" + SizeName(size))};
      std::vector<Arm> arms(kRatioArms);
      arms[kCommit] = CommitArm("commit", store, "commit-" + SizeName(size), size, mode.mode);
      arms[kRaw] = RawArm("raw", target, size, 1);
      arms[kRawThreeSlots] = RawArm("raw, 3 slots", target, size, kSlotsPerRegion);
      arms[kSameIo] = SameIoArm(target, size);
      arms[kChecksum] = ChecksumArm(size);
      std::fprintf(stderr, "  %s %s\n", mode.name, SizeName(size).c_str());
      const RealtimeScope realtime(durable && options.realtime, "regionstore_commit_bench");
      const Rounds rounds = RunInterleaved(
          arms, options.rounds, durable ? options.durable_batch_ms : options.mapped_batch_ms,
          options.device_stat);
      const RoundTimes& times = rounds.ns;
      RatioRow row{&mode, size, {},
                   Paired(times[kCommit], times[kRaw], durable ? &times[kRaw] : nullptr), {}, {}};
      for (size_t a = 0; a < kRatioArms; ++a) {
        row.median_ns[a] = Median(times[a]);
        row.device[a] = MedianDevice(rounds.device[a]);
      }
      if (durable && size >= kMiB) {
        for (const char* kind : {"commit-", "raw-"}) {
          const regionstore::RegionEntry& region = RegionOf(store.info(), kind + SizeName(size));
          row.page_cache += row.page_cache.empty() ? "commit: " : "; raw: ";
          row.page_cache += CensusText(path, region.slots_offset,
                                       kSlotsPerRegion * region.slot_stride);
        }
      }
      rows.push_back(row);
    }
    // The mapped modes leave dirty pages: write them back now, untimed, so
    // the kernel's writeback does not land in a later measurement.
    if (std::string e = DataSync(fd.get()); !e.empty()) Die(e);
  }
  return rows;
}

void PrintRatios(const std::vector<RatioRow>& rows, const Options& options) {
  std::printf("## 1. Commit vs the same syscalls without the library\n\n");
  std::printf(
      "%d interleaved rounds per row (batches of ~%.0f ms mapped, ~%.0f ms durable); ops/s "
      "from the median batch. cost = commit time / raw time: the median of the %d per-round "
      "ratios, their range in brackets. Targets: <= 1.10 at 4 KiB, <= 1.15 at 1 MiB. "
      "Durable rows also give the cost over the fast and the slow rounds (raw under or "
      "over 2 ms/op).\n\n",
      options.rounds, options.mapped_batch_ms, options.durable_batch_ms, options.rounds);
  std::printf(
      "| mode | size | commit ops/s | raw ops/s | cost commit/raw | target | met | cost in "
      "fast / slow rounds (rounds) |\n");
  std::printf("| --- | --- | ---: | ---: | --- | ---: | --- | --- |\n");
  for (const RatioRow& row : rows) {
    // Targets exist at 4 KiB and 1 MiB only (docs/BENCH-CHECKPOINTS.md).
    const double target = row.size == 4 * kKiB ? 1.10 : row.size == kMiB ? 1.15 : NAN;
    const char* met = std::isnan(target) ? "" : row.cost.median <= target ? "yes" : "**no**";
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", row.mode->name,
                SizeName(row.size).c_str(), FormatOps(row.median_ns[kCommit]).c_str(),
                FormatOps(row.median_ns[kRaw]).c_str(), FormatRatio(row.cost).c_str(),
                std::isnan(target) ? "–" : Fixed(target, 2).c_str(), met,
                IsDurable(row.mode->mode) ? FormatByState(row.cost).c_str() : "");
  }
  std::printf("\nraw:");
  for (const ModeInfo& mode : kModes) std::printf(" %s = %s;", mode.name, mode.raw);
  std::printf(" at slot 0's payload offset of a second region of the same size in the same "
              "store file.\n\n");
  std::printf(
      "Where a commit's time goes, in microseconds per operation (medians, same rounds): "
      "raw; raw rotating over 3 slots as commits do; XXH3 of the payload alone; same I/O = "
      "what a commit writes without the library (mapped: memcpy + XXH3 + 64 B header; "
      "durable: 4 KiB header unit + payload in one pwritev2), 3 slots; commit. Then, for "
      "the durable modes, what the device did per operation: flushes / write requests / KiB "
      "written (medians; the counters are the whole device's); and this thread's CPU time per "
      "operation, user + system (getrusage: sampled at the scheduler tick, so rough).\n\n");
  std::printf("| mode | size | raw | raw, 3 slots | XXH3 only | same I/O | commit | device: "
              "raw | device: commit | CPU user + sys us: raw / same I/O / commit |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |\n");
  for (const RatioRow& row : rows) {
    const bool durable = IsDurable(row.mode->mode);
    std::string cpu;
    for (size_t arm : {kRaw, kSameIo, kCommit}) {
      if (!cpu.empty()) cpu += " / ";
      cpu += FormatMicros(row.device[arm].user_ns) + " + " +
             FormatMicros(row.device[arm].system_ns);
    }
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.mode->name,
                SizeName(row.size).c_str(), FormatMicros(row.median_ns[kRaw]).c_str(),
                FormatMicros(row.median_ns[kRawThreeSlots]).c_str(),
                FormatMicros(row.median_ns[kChecksum]).c_str(),
                FormatMicros(row.median_ns[kSameIo]).c_str(),
                FormatMicros(row.median_ns[kCommit]).c_str(),
                durable ? FormatDevice(row.device[kRaw]).c_str() : "",
                durable ? FormatDevice(row.device[kCommit]).c_str() : "", cpu.c_str());
  }
  std::printf("\nPage cache of the durable stores' 1 MiB regions after the rounds (the commit "
              "region's three slots; the raw region's three slots, slot 0 being raw's):\n\n");
  for (const RatioRow& row : rows) {
    if (!row.page_cache.empty()) {
      std::printf("- %s: %s\n", row.mode->name, row.page_cache.c_str());
    }
  }
  std::printf("\n");
}

// --------------------------------------------------------------------------
// Section 2: peers

#ifdef REGIONSTORE_BENCH_PEERS

class Lmdb {
 public:
  Lmdb(const std::string& dir, uint64_t value_size) : dir_(dir) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    Check(mdb_env_create(&env_), "mdb_env_create");
    // Copy-on-write keeps the last commits' pages until they can be reused:
    // room for many copies of the value.
    Check(mdb_env_set_mapsize(env_, std::max<uint64_t>(64 * kMiB, 64 * value_size)),
          "mdb_env_set_mapsize");
    Check(mdb_env_open(env_, dir.c_str(), 0, 0644), "mdb_env_open");  // default flags
    MDB_txn* txn = nullptr;
    Check(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin");
    Check(mdb_dbi_open(txn, nullptr, 0, &dbi_), "mdb_dbi_open");
    Check(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  Lmdb(const Lmdb&) = delete;
  Lmdb& operator=(const Lmdb&) = delete;
  ~Lmdb() { mdb_env_close(env_); }

  std::string Put(std::span<const std::byte> value) {
    MDB_txn* txn = nullptr;
    if (int rc = mdb_txn_begin(env_, nullptr, 0, &txn); rc != 0) return Error("begin", rc);
    char key_bytes[] = "blob";
    MDB_val key{4, key_bytes};
    MDB_val data{value.size(), const_cast<std::byte*>(value.data())};
    if (int rc = mdb_put(txn, dbi_, &key, &data, 0); rc != 0) {
      mdb_txn_abort(txn);
      return Error("put", rc);
    }
    if (int rc = mdb_txn_commit(txn); rc != 0) return Error("commit", rc);
    return {};
  }

  std::string data_path() const { return dir_ + "/data.mdb"; }

 private:
  static std::string Error(const char* what, int rc) {
    std::string message = "lmdb ";
    message += what;
    message += ": ";
    message += mdb_strerror(rc);
    return message;
  }
  static void Check(int rc, const char* what) {
    if (rc != 0) Die(Error(what, rc));
  }

  std::string dir_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

class Sqlite {
 public:
  explicit Sqlite(const std::string& path) : path_(path) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        nullptr) != SQLITE_OK) {
      Die(Message("open"));
    }
    Exec("PRAGMA journal_mode=WAL");
    Exec("PRAGMA synchronous=FULL");
    Exec("CREATE TABLE blobs(id INTEGER PRIMARY KEY, data BLOB NOT NULL)");
    begin_ = Prepare("BEGIN");
    replace_ = Prepare("INSERT OR REPLACE INTO blobs(id, data) VALUES(1, ?1)");
    commit_ = Prepare("COMMIT");
  }
  Sqlite(const Sqlite&) = delete;
  Sqlite& operator=(const Sqlite&) = delete;
  ~Sqlite() {
    sqlite3_finalize(begin_);
    sqlite3_finalize(replace_);
    sqlite3_finalize(commit_);
    sqlite3_close(db_);
  }

  std::string Replace(std::span<const std::byte> blob) {
    if (std::string e = Step(begin_); !e.empty()) return e;
    if (sqlite3_bind_blob64(replace_, 1, blob.data(), blob.size(), SQLITE_STATIC) != SQLITE_OK) {
      return Message("bind");
    }
    if (std::string e = Step(replace_); !e.empty()) return e;
    return Step(commit_);
  }

  std::string wal_path() const { return path_ + "-wal"; }

 private:
  std::string Message(const char* what) const {
    std::string message = "sqlite ";
    message += what;
    message += " ";
    message += path_;
    message += ": ";
    message += sqlite3_errmsg(db_);
    return message;
  }
  void Exec(const char* sql) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) Die(Message(sql));
  }
  sqlite3_stmt* Prepare(const char* sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &statement, nullptr) != SQLITE_OK) Die(Message(sql));
    return statement;
  }
  std::string Step(sqlite3_stmt* statement) {
    const int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    return rc == SQLITE_DONE ? std::string() : Message("step");
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* replace_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
};

enum PeerArm : size_t { kLmdb, kSqlite, kOursSync, kOursPwrite, kFloor, kPeerArms };

struct PeerResult {
  uint64_t size;
  std::array<std::string, kPeerArms> names;
  std::array<double, kPeerArms> median_ns;
  std::array<std::string, kPeerArms> page_cache;
  std::array<DevicePerOp, kPeerArms> device;
  size_t ours;              // kOursSync or kOursPwrite: the faster by median
  PairedRatio vs_sqlite;    // SQLite time / ours
  PairedRatio vs_lmdb;      // LMDB time / ours
  PairedRatio vs_floor;     // floor time / ours
};

std::vector<PeerResult> RunPeers(const Options& options) {
  std::vector<PeerResult> results;
  for (uint64_t size : {4 * kKiB, 1 * kMiB}) {
    const std::string tag = size >= kMiB ? "1m" : "4k";
    Lmdb lmdb(options.dir + "/peer-lmdb-" + tag, size);
    Sqlite sqlite(options.dir + "/peer-" + tag + ".sqlite");
    const std::string store_path = options.dir + "/peer-" + tag + ".rgn";
    CreateStore(store_path, {{"blob", size}});
    Store store = OpenStore(store_path);
    const std::string floor_path = options.dir + "/peer-floor-" + tag + ".bin";
    CreatePlainFile(floor_path, size);
    const Fd floor(floor_path, O_RDWR | O_CLOEXEC);
    const int floor_fd = floor.get();

    std::vector<Arm> arms(kPeerArms);
    arms[kLmdb] = LoopArm("LMDB, default flags: put + txn commit", size,
                          [&lmdb](std::span<const std::byte> v) { return lmdb.Put(v); });
    arms[kSqlite] = LoopArm("SQLite, WAL + synchronous=FULL: INSERT OR REPLACE in a txn", size,
                            [&sqlite](std::span<const std::byte> v) { return sqlite.Replace(v); });
    arms[kOursSync] = CommitArm("ours: Commit kSync", store, "blob", size, Durability::kSync);
    arms[kOursPwrite] = CommitArm("ours: Commit kPwriteFdatasync", store, "blob", size,
                                  Durability::kPwriteFdatasync);
    arms[kFloor] = LoopArm("floor: pwrite + fdatasync, plain file", size,
                           [floor_fd](std::span<const std::byte> v) {
                             return PwriteFdatasync(floor_fd, v, 0);
                           });
    std::fprintf(stderr, "  peers %s\n", SizeName(size).c_str());
    const RealtimeScope realtime(options.realtime, "regionstore_commit_bench");
    const Rounds rounds = RunInterleaved(arms, options.rounds, options.peer_batch_ms,
                                         options.device_stat);
    const RoundTimes& times = rounds.ns;

    PeerResult result{};
    result.size = size;
    for (size_t a = 0; a < kPeerArms; ++a) {
      result.names[a] = arms[a].name;
      result.median_ns[a] = Median(times[a]);
      result.device[a] = MedianDevice(rounds.device[a]);
    }
    result.ours = result.median_ns[kOursSync] <= result.median_ns[kOursPwrite] ? kOursSync
                                                                                : kOursPwrite;
    result.vs_sqlite = Paired(times[kSqlite], times[result.ours], &times[kFloor]);
    result.vs_lmdb = Paired(times[kLmdb], times[result.ours], &times[kFloor]);
    result.vs_floor = Paired(times[kFloor], times[result.ours], &times[kFloor]);
    // Where each arm's bytes sit in the page cache after the rounds.
    result.page_cache[kLmdb] =
        "data.mdb: " + CensusText(lmdb.data_path(), 0, std::filesystem::file_size(lmdb.data_path()));
    result.page_cache[kSqlite] = "-wal: " + CensusText(sqlite.wal_path(), 0,
                                                       std::filesystem::file_size(sqlite.wal_path()));
    const regionstore::RegionEntry& region = RegionOf(store.info(), "blob");
    std::string slots;
    for (uint32_t slot = 0; slot < kSlotsPerRegion; ++slot) {
      if (slot > 0) slots += "; ";
      slots += "payload " + std::to_string(slot) + ": " +
               CensusText(store_path, SlotPayloadOffset(region, slot), size);
    }
    result.page_cache[kOursSync] = slots;
    result.page_cache[kOursPwrite] = "(the same store)";
    result.page_cache[kFloor] = CensusText(floor_path, 0, size);
    results.push_back(std::move(result));
  }
  return results;
}

void PrintPeerRatio(const std::string& label, const PairedRatio& ratio, double target) {
  std::string verdict;
  if (target > 0) {
    verdict = ">= " + Fixed(target, 1) + (ratio.median >= target ? ": met" : ": **missed**");
  }
  std::printf("| %s | **%s** | %s-%s | %s | %s |\n", label.c_str(),
              Fixed(ratio.median, 2).c_str(), Fixed(ratio.low, 2).c_str(),
              Fixed(ratio.high, 2).c_str(), FormatByState(ratio).c_str(), verdict.c_str());
}

void PrintPeers(const std::vector<PeerResult>& results, const Options& options) {
  std::printf("## 2. Replace one blob durably and atomically: peers\n\n");
  std::printf(
      "%d interleaved rounds of all five arms per size (batches of ~%.0f ms); ops/s from the "
      "median batch. Each arm has its own files, created fresh. Ratios are speed ratios "
      "(peer time / our time) per round, median and range; \"ours\" is the faster durable "
      "mode by median.\n\n",
      options.rounds, options.peer_batch_ms);
  std::printf("| size | arm | ops/s | us/op | device per op: flushes / write requests / "
              "KiB written |\n| --- | --- | ---: | ---: | --- |\n");
  for (const PeerResult& r : results) {
    for (size_t a = 0; a < kPeerArms; ++a) {
      std::printf("| %s | %s | %s | %s | %s |\n", SizeName(r.size).c_str(), r.names[a].c_str(),
                  FormatOps(r.median_ns[a]).c_str(), FormatMicros(r.median_ns[a]).c_str(),
                  FormatDevice(r.device[a]).c_str());
    }
  }
  std::printf("\n| ratio | median | range | in fast / slow rounds (rounds) | target |\n");
  std::printf("| --- | ---: | --- | --- | --- |\n");
  for (const PeerResult& r : results) {
    const bool small = r.size < kMiB;
    const std::string ours = r.ours == kOursSync ? "kSync" : "kPwriteFdatasync";
    const std::string size = SizeName(r.size);
    PrintPeerRatio("ours (" + ours + ") / SQLite, " + size, r.vs_sqlite,
                   small ? 1.1 : 0);
    PrintPeerRatio("ours (" + ours + ") / LMDB, " + size, r.vs_lmdb, small ? 0 : 1.2);
    PrintPeerRatio("ours (" + ours + ") / floor, " + size, r.vs_floor, 0);
  }
  std::printf("\nFast/slow: rounds where the floor arm took under/over 2 ms per op (with the "
              "CPUs busy, every wait for I/O can cost a scheduler tick: see --realtime).\n\n");
  std::printf("Where each arm's pages sit in the page cache after the rounds "
              "(/proc/kpageflags):\n\n| size | arm | page cache |\n| --- | --- | --- |\n");
  for (const PeerResult& r : results) {
    for (size_t a = 0; a < kPeerArms; ++a) {
      std::printf("| %s | %s | %s |\n", SizeName(r.size).c_str(), r.names[a].c_str(),
                  r.page_cache[a].c_str());
    }
  }
  std::printf("\n");
}

#endif  // REGIONSTORE_BENCH_PEERS

// --------------------------------------------------------------------------
// Section 3: folio regimes

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
  auto info = regionstore::ReadStoreInfo(store_cold);
  if (!info.ok()) Die(info.status().ToString());
  const regionstore::RegionEntry region = RegionOf(*info, "blob");
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
  const std::array<std::string, kFolioArms> paths{plain_large, plain_small, store_fresh,
                                                  store_cold, store_huge};
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
  arms[kPlainLarge] = LoopArm("plain file, large folios: pwrite + fdatasync", size,
                              [large_raw](std::span<const std::byte> v) {
                                return PwriteFdatasync(large_raw, v, 0);
                              });
  arms[kPlainSmall] = LoopArm("plain file, 4 KiB folios: pwrite + fdatasync", size,
                              [small_raw](std::span<const std::byte> v) {
                                return PwriteFdatasync(small_raw, v, 0);
                              });
  arms[kStoreFresh] = CommitArm("fresh store: Commit kPwriteFdatasync", fresh, "blob", size,
                                Durability::kPwriteFdatasync);
  arms[kStoreCold] = CommitArm("store reopened cold (Open + Load): Commit", cold, "blob", size,
                               Durability::kPwriteFdatasync);
  arms[kStoreHuge] = CommitArm("store, slots read through a MADV_HUGEPAGE mapping: Commit",
                               huge, "blob", size, Durability::kPwriteFdatasync);
  std::fprintf(stderr, "  folios\n");
  {
    const RealtimeScope realtime(options.realtime, "regionstore_commit_bench");
    const Rounds rounds = RunInterleaved(arms, options.rounds, options.peer_batch_ms,
                                         options.device_stat);
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
  std::printf("| arm | ops/s | us/op | time ratio (range) | in fast / slow rounds (rounds) | "
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
  std::printf("\nKiB the device wrote for one 4 KiB memcpy through a mapping + fdatasync: "
              "%s with a plain mapping, %s with a MADV_HUGEPAGE mapping (median of 9).\n\n",
              Fixed(r.mapped_write_kib, 0).c_str(), Fixed(r.huge_mapped_write_kib, 0).c_str());
}

// --------------------------------------------------------------------------
// Section 5: compact slots beside aligned ones, and a store of many regions

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
      regions.push_back({"compact-" + SizeName(size), size, regionstore::SlotLayout::kCompact});
      regions.push_back({"aligned-" + SizeName(size), size, regionstore::SlotLayout::kAligned});
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
    regions.push_back({ManyName(i), kManyCapacity, regionstore::SlotLayout::kCompact});
  }
  regions.push_back({"raw", kManyCapacity, regionstore::SlotLayout::kCompact});
  std::fprintf(stderr, "  many regions: creating %u\n", options.many_regions);
  CreateStore(path, regions);
  Store store = OpenStore(path);
  result.file_size = store.info().file_size;
  const std::string target = ManyName(options.many_regions / 2);
  CheckSlotLayout(store, target);
  const regionstore::RegionEntry raw_region = RegionOf(store.info(), "raw");
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
  const regionstore::RegionEntry& target_region = RegionOf(store.info(), target);
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

}  // namespace

// --------------------------------------------------------------------------
// --json: what bench/report.py needs from sections 1 and 2

namespace {

nlohmann::json RatioJson(const PairedRatio& ratio) {
  return {{"median", ratio.median}, {"low", ratio.low}, {"high", ratio.high}};
}

nlohmann::json RatiosJson(const std::vector<RatioRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const RatioRow& row : rows) {
    out.push_back({{"arm", row.mode->arm},
                   {"mode", row.mode->name},
                   {"raw", row.mode->raw},
                   {"size", row.size},
                   {"commit_ns", row.median_ns[kCommit]},
                   {"raw_ns", row.median_ns[kRaw]},
                   {"commit_over_raw", RatioJson(row.cost)}});
  }
  return out;
}

#ifdef REGIONSTORE_BENCH_PEERS
nlohmann::json PeersJson(const std::vector<PeerResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const PeerResult& r : results) {
    nlohmann::json arms = nlohmann::json::array();
    for (size_t a = 0; a < kPeerArms; ++a) {
      arms.push_back({{"name", r.names[a]}, {"median_ns", r.median_ns[a]}});
    }
    out.push_back({{"size", r.size},
                   {"ours", r.names[r.ours]},
                   {"arms", arms},
                   {"sqlite_over_ours", RatioJson(r.vs_sqlite)},
                   {"lmdb_over_ours", RatioJson(r.vs_lmdb)},
                   {"floor_over_ours", RatioJson(r.vs_floor)}});
  }
  return out;
}
#endif

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

void WriteJson(const std::string& path, const nlohmann::json& doc) {
  std::ofstream out(path, std::ios::trunc);
  out << doc.dump(2) << "\n";
  out.close();
  if (!out) Die("cannot write --json file '" + path + "'");
}

}  // namespace

int main(int argc, char** argv) {
  Options options = ParseOptions(argc, argv);
  std::printf("# regionstore checkpoint commit benchmark%s\n\n", options.quick ? " (--quick)" : "");
  const std::string fs = PrepareDirectory(options.dir);
  options.device_stat = DeviceStatPath(options.dir);
  utsname machine{};
  ::uname(&machine);
  const auto started = Clock::now();
  std::printf("Linux %s %s, %ld CPUs online; files in %s (%s; device counters: %s).\n\n",
              machine.release, machine.machine, ::sysconf(_SC_NPROCESSORS_ONLN),
              options.dir.c_str(), fs.c_str(),
              options.device_stat.empty() ? "none" : options.device_stat.c_str());
  std::printf("Durable arms run %s.\n\n",
              options.realtime ? "under SCHED_FIFO (--realtime)"
                               : "under SCHED_OTHER; if the CPUs are busy, try --realtime");
  std::fflush(stdout);

  nlohmann::json doc = {{"tool", "regionstore_commit_bench"},
                        {"kernel", machine.release},
                        {"filesystem", fs},
                        {"rounds", options.rounds},
                        {"realtime", options.realtime},
                        {"commits", nlohmann::json::array()},
                        {"peers", nullptr},
                        {"open", nullptr},
                        {"layouts", nullptr},
                        {"many_regions", nullptr}};
  if (options.only.empty() || options.only == "ratio") {
    std::fprintf(stderr, "section 1: commit vs raw\n");
    const std::vector<RatioRow> rows = RunRatios(options);
    PrintRatios(rows, options);
    doc["commits"] = RatiosJson(rows);
    std::fflush(stdout);
  }
  if (options.only.empty() || options.only == "peers") {
#ifdef REGIONSTORE_BENCH_PEERS
    std::fprintf(stderr, "section 2: peers\n");
    const std::vector<PeerResult> results = RunPeers(options);
    PrintPeers(results, options);
    doc["peers"] = PeersJson(results);
#else
    std::printf("## 2. Peers\n\nNot built: LMDB and SQLite development files were not found "
                "when this was configured (Debian: liblmdb-dev, libsqlite3-dev).\n\n");
#endif
    std::fflush(stdout);
  }
  if (options.only.empty() || options.only == "folios") {
    std::fprintf(stderr, "section 3: folios\n");
    PrintFolios(RunFolios(options), options);
    std::fflush(stdout);
  }
  if (options.only.empty() || options.only == "open") {
    std::fprintf(stderr, "section 4: writer open\n");
    regionstore_bench::OpenBenchOptions open;
    open.dir = options.dir;
    open.big_bytes = options.open_mib * kMiB;
    open.rounds = options.open_rounds;
    open.kill_trials = options.open_kills;
    open.realtime = options.realtime;
    doc["open"] = regionstore_bench::RunOpenBench(open);
    std::fflush(stdout);
  }
  if (options.only.empty() || options.only == "compact" || options.only == "many") {
    std::fprintf(stderr, "section 5: compact slots\n");
    if (options.only != "many") {
      const std::vector<LayoutRow> rows = RunLayouts(options);
      PrintLayouts(rows, options);
      doc["layouts"] = LayoutsJson(rows);
      std::fflush(stdout);
    }
    const ManyResult many = RunManyRegions(options);
    PrintManyRegions(many, options);
    doc["many_regions"] = ManyJson(many);
    std::fflush(stdout);
  }
  std::printf("Run time: %.0f s.\n", Seconds(Clock::now() - started));
  if (!options.json_path.empty()) WriteJson(options.json_path, doc);
  return 0;
}
