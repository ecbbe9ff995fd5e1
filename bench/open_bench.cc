// Writer open: a writer's Store::Open plus a first tiny
// commit into a small region, on a store whose two other regions hold big
// commits, beside the same on a store with the same layout whose big
// regions are empty. The target is at most 1.1x, under 5 ms warm, and
// for the open to write nothing after a clean close and at most one header
// unit per region after a kill.
//
// Setup, once: two stores, each with regions big-a and big-b (capacity
// `big_bytes`) and small (4 KiB). In "full", big-a and big-b each get one
// commit of `big_bytes` (kPwriteFdatasync); in "empty" they get none. The
// stores are removed at the end (with 1 GiB regions they take ~6 GiB each:
// three slots per region). Creating them, Store::Create's zero-fill, is
// nearly all of the section's time: 30-45 s on a 2-vCPU VM with a virtio
// disk, against well under a second for the rounds.
//
// A round runs both stores, in an order that alternates from round to
// round; per store: Store::Open(kReadWrite) through a CountingIo, Commit of
// 16 bytes (kSync) into small, close. Timed: open, commit, close and their
// sum (steady_clock). Counted: the bytes the open and the commit read and
// wrote through the Io, and what the store's block device wrote during the
// open (/proc/diskstats: the whole device, so other processes' writes show
// up too; read medians). The page cache stays warm: nothing is dropped.
// Two untimed rounds first.
//
// Kills: a child process opens the full store and commits 16 bytes (kSync)
// into small in a loop; it is SIGKILLed (a) after its eighth commit
// returned, while it waits on a pipe (a kill between commits), and (b) at a
// random moment 0-2 ms after its first commit returned (mostly inside a
// commit's barrier, where its intent mark is set). After each kill the next
// writer open is measured as in a round.
#include "open_bench.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lab/counting_io.h"
#include "lab/die.h"
#include "lab/median.h"
#include "lab/realtime_scope.h"
#include "lab/rounds.h"
#include "lab/text_cells.h"
#include "regionstore/store.h"

namespace regionstore::bench {
namespace {

constexpr uint64_t kSmallCapacity = 4 * kKiB;
constexpr size_t kTinyCommit = 16;
constexpr int kWarmupRounds = 2;
constexpr int kCommitsBeforeQuietKill = 8;
constexpr int kRandomKillMaxMicros = 2000;
// What to leave free on the disk beyond the two stores.
constexpr uint64_t kSpareBytes = 1024 * kMiB;

// This section's errors: "regionstore_commit_bench: open: ...".
[[noreturn]] void DieInOpen(const std::string& what) { Die("open: " + what); }

double Nanos(Clock::duration elapsed) {
  return std::chrono::duration<double, std::nano>(elapsed).count();
}

std::string Micros(double ns) { return Fixed(ns / 1e3, ns < 1e5 ? 1 : 0); }

// --------------------------------------------------------------------------
// The store's block device in /proc/diskstats

struct DiskCounters {
  uint64_t sectors_written = 0;
  uint64_t flushes = 0;  // 0 on kernels without the flush fields
};

class Device {
 public:
  explicit Device(const std::string& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) DieInOpen("stat " + dir + ": " + std::strerror(errno));
    major_ = major(st.st_dev);
    minor_ = minor(st.st_dev);
    if (Read()) found_ = true;
  }

  bool found() const { return found_; }
  // "vda (254:0)", or why there is none.
  std::string Describe() const {
    const std::string numbers = std::to_string(major_) + ":" + std::to_string(minor_);
    if (!found_) return "not found: no line for st_dev " + numbers + " in /proc/diskstats";
    return name_ + " (" + numbers + ")";
  }

  // Fields after major, minor and name (Documentation/admin-guide/iostats.rst):
  // 7 = sectors written, 16 = flush requests completed.
  std::optional<DiskCounters> Read() {
    std::ifstream in("/proc/diskstats");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      unsigned major_number = 0;
      unsigned minor_number = 0;
      std::string name;
      if (!(fields >> major_number >> minor_number >> name)) continue;
      if (major_number != major_ || minor_number != minor_) continue;
      std::vector<uint64_t> values;
      uint64_t value = 0;
      while (fields >> value) values.push_back(value);
      if (values.size() < 7) return std::nullopt;
      name_ = name;
      return DiskCounters{values[6], values.size() >= 16 ? values[15] : 0};
    }
    return std::nullopt;
  }

 private:
  unsigned major_ = 0;
  unsigned minor_ = 0;
  std::string name_;
  bool found_ = false;
};

// --------------------------------------------------------------------------
// One writer open + first commit + close

struct Sample {
  double open_ns = NAN, commit_ns = NAN, close_ns = NAN, total_ns = NAN;
  IoCounts open_io, commit_io;
  double device_open_kib = NAN;
  double device_open_flushes = NAN;
};

Sample OpenCommitClose(const std::string& path, Device& device, uint64_t stamp) {
  CountingIo io;  // outlives the Store
  OpenOptions options;
  options.io = &io;
  std::array<std::byte, kTinyCommit> payload{};
  std::memcpy(payload.data(), &stamp, sizeof stamp);
  Sample sample;
  std::optional<Store> store;
  const std::optional<DiskCounters> before = device.Read();
  const auto open_start = Clock::now();
  {
    auto opened = Store::Open(path, OpenMode::kReadWrite, options);
    if (!opened.ok()) DieInOpen(opened.status().ToString());
    store.emplace(std::move(*opened));
  }
  const auto open_end = Clock::now();
  const std::optional<DiskCounters> after = device.Read();
  sample.open_io = io.counts();
  const auto commit_start = Clock::now();
  auto generation = store->Commit("small", payload, Durability::kSync);
  const auto commit_end = Clock::now();
  if (!generation.ok()) DieInOpen(generation.status().ToString());
  sample.commit_io = io.counts() - sample.open_io;
  store.reset();
  const auto close_end = Clock::now();
  sample.open_ns = Nanos(open_end - open_start);
  sample.commit_ns = Nanos(commit_end - commit_start);
  sample.close_ns = Nanos(close_end - commit_end);
  sample.total_ns = sample.open_ns + sample.commit_ns + sample.close_ns;
  if (before && after) {
    sample.device_open_kib =
        static_cast<double>(after->sectors_written - before->sectors_written) / 2;
    sample.device_open_flushes = static_cast<double>(after->flushes - before->flushes);
  }
  return sample;
}

// Medians (times, device) and the byte counts' median and maximum over
// samples.
struct Summary {
  double open_ns, commit_ns, close_ns, total_ns;
  double open_written, open_written_max, open_read, open_barriers;
  double commit_written, commit_written_max, commit_read, commit_barriers;
  double device_open_kib, device_open_flushes;
  std::map<uint64_t, int> open_written_counts;  // bytes written by the open -> samples
};

Summary Summarize(const std::vector<Sample>& samples) {
  const auto field = [&](auto get) {
    std::vector<double> values;
    for (const Sample& s : samples) values.push_back(static_cast<double>(get(s)));
    return values;
  };
  const auto median = [&](auto get) { return Median(field(get)); };
  const auto maximum = [&](auto get) {
    const std::vector<double> values = field(get);
    return values.empty() ? NAN : *std::max_element(values.begin(), values.end());
  };
  Summary out{};
  out.open_ns = median([](const Sample& s) { return s.open_ns; });
  out.commit_ns = median([](const Sample& s) { return s.commit_ns; });
  out.close_ns = median([](const Sample& s) { return s.close_ns; });
  out.total_ns = median([](const Sample& s) { return s.total_ns; });
  out.open_written = median([](const Sample& s) { return s.open_io.write_bytes; });
  out.open_written_max = maximum([](const Sample& s) { return s.open_io.write_bytes; });
  out.open_read = median([](const Sample& s) { return s.open_io.read_bytes; });
  out.open_barriers = median([](const Sample& s) { return s.open_io.barriers; });
  out.commit_written = median([](const Sample& s) { return s.commit_io.write_bytes; });
  out.commit_written_max = maximum([](const Sample& s) { return s.commit_io.write_bytes; });
  out.commit_read = median([](const Sample& s) { return s.commit_io.read_bytes; });
  out.commit_barriers = median([](const Sample& s) { return s.commit_io.barriers; });
  out.device_open_kib = median([](const Sample& s) { return s.device_open_kib; });
  out.device_open_flushes = median([](const Sample& s) { return s.device_open_flushes; });
  for (const Sample& s : samples) ++out.open_written_counts[s.open_io.write_bytes];
  return out;
}

nlohmann::json SummaryJson(const Summary& s) {
  nlohmann::json written_counts = nlohmann::json::object();
  for (const auto& [bytes, count] : s.open_written_counts) {
    written_counts[std::to_string(bytes)] = count;
  }
  const auto number = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
  return {{"total_ns", s.total_ns},
          {"open_ns", s.open_ns},
          {"commit_ns", s.commit_ns},
          {"close_ns", s.close_ns},
          {"open_written", s.open_written},
          {"open_written_max", s.open_written_max},
          {"open_written_counts", written_counts},
          {"open_read", s.open_read},
          {"open_barriers", s.open_barriers},
          {"commit_written", s.commit_written},
          {"commit_written_max", s.commit_written_max},
          {"commit_read", s.commit_read},
          {"commit_barriers", s.commit_barriers},
          {"device_open_kib", number(s.device_open_kib)},
          {"device_open_flushes", number(s.device_open_flushes)}};
}

// "4,160" or "0 (max 4,160)".
std::string BytesCell(double median, double maximum) {
  std::string text = Grouped(static_cast<uint64_t>(median));
  if (maximum != median) text += " (max " + Grouped(static_cast<uint64_t>(maximum)) + ")";
  return text;
}

// --------------------------------------------------------------------------
// Setup

void CreateStore(const std::string& path, uint64_t big_bytes) {
  CreateOptions options;
  options.replace_existing = true;
  // Aligned slots, as every store of this section had before compact slots
  // (kAuto would make `small` compact): comparable with earlier runs.
  constexpr auto kAligned = SlotLayout::kAligned;
  options.checkpoints = {{"big-a", big_bytes, kAligned},
                         {"big-b", big_bytes, kAligned},
                         {"small", kSmallCapacity, kAligned}};
  if (auto s = Store::Create(path, 0, options); !s.ok()) DieInOpen(s.ToString());
}

void FillBigRegions(const std::string& path, uint64_t big_bytes) {
  auto store = Store::Open(path, OpenMode::kReadWrite);
  if (!store.ok()) DieInOpen(store.status().ToString());
  std::vector<std::byte> payload(big_bytes);
  for (const char* region : {"big-a", "big-b"}) {
    // Different bytes in each region; every 4 KiB page stamped.
    const std::byte fill{static_cast<unsigned char>(region[4])};
    std::fill(payload.begin(), payload.end(), fill);
    for (uint64_t at = 0; at + 8 <= big_bytes; at += 4 * kKiB) std::memcpy(&payload[at], &at, 8);
    auto generation = store->Commit(region, payload, Durability::kPwriteFdatasync);
    if (!generation.ok()) DieInOpen(generation.status().ToString());
  }
}

// The size Store::Create gives these stores, within a MiB: three slots per
// region of 64 KiB + the capacity rounded up to 64 KiB (store.h), plus the
// superblock, region table and intent area.
uint64_t EstimatedStoreBytes(uint64_t big_bytes) {
  const auto slots = [](uint64_t capacity) {
    return 3 * (64 * kKiB + (capacity + 64 * kKiB - 1) / (64 * kKiB) * (64 * kKiB));
  };
  return 2 * slots(big_bytes) + slots(kSmallCapacity) + kMiB;
}

// --------------------------------------------------------------------------
// Kills

enum class KillPoint { kBetweenCommits, kRandom };

// Forks a child that opens `path` for writing and commits 16 bytes into
// small in a loop, writing one byte to a pipe after each commit returns;
// SIGKILLs it at `point` and reaps it. Returns the commits that returned.
int KillCommitLoop(const std::string& path, KillPoint point, int delay_micros) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) DieInOpen(std::string("pipe2: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = ::fork();
  if (child < 0) DieInOpen(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    ::close(fds[0]);
    auto store = Store::Open(path, OpenMode::kReadWrite);
    if (!store.ok()) ::_exit(2);
    std::array<std::byte, kTinyCommit> payload{};
    for (uint64_t i = 1;; ++i) {
      std::memcpy(payload.data(), &i, sizeof i);
      if (!store->Commit("small", payload, Durability::kSync).ok()) ::_exit(3);
      const char done = 'c';
      if (::write(fds[1], &done, 1) != 1) ::_exit(4);
      if (point == KillPoint::kBetweenCommits && i == kCommitsBeforeQuietKill) {
        for (;;) ::pause();  // killed here, between commits
      }
    }
  }
  ::close(fds[1]);
  const int wanted = point == KillPoint::kBetweenCommits ? kCommitsBeforeQuietKill : 1;
  int commits = 0;
  char byte = 0;
  while (commits < wanted) {
    const ssize_t n = ::read(fds[0], &byte, 1);
    if (n == 1) {
      ++commits;
    } else if (n == 0 || errno != EINTR) {
      DieInOpen("the commit loop child stopped before it was killed");
    }
  }
  if (point == KillPoint::kRandom) {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_micros));
  }
  if (::kill(child, SIGKILL) != 0) DieInOpen(std::string("kill: ") + std::strerror(errno));
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    DieInOpen("the commit loop child exited before it was killed (status " +
              std::to_string(status) + ")");
  }
  // Commits that returned after the first ones counted.
  ssize_t n;
  while ((n = ::read(fds[0], &byte, 1)) == 1 || (n < 0 && errno == EINTR)) {
    if (n == 1) ++commits;
  }
  ::close(fds[0]);
  return commits;
}

// --------------------------------------------------------------------------
// Printing

// "0 / 8,576 (1)": bytes written / read (barriers).
std::string IoCell(double written, double written_max, double read, double barriers) {
  return BytesCell(written, written_max) + " / " + Grouped(static_cast<uint64_t>(read)) + " (" +
         Fixed(barriers, 0) + ")";
}

// "4 / 1": KiB written / flushes, or "-" without the device.
std::string DeviceCell(const Summary& s, bool device_found) {
  if (!device_found) return "-";
  return Fixed(s.device_open_kib, 0) + " / " + Fixed(s.device_open_flushes, 0);
}

void PrintStoreRow(const char* name, const Summary& s, bool device_found) {
  std::printf(
      "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, Micros(s.total_ns).c_str(),
      Micros(s.open_ns).c_str(), Micros(s.commit_ns).c_str(), Micros(s.close_ns).c_str(),
      IoCell(s.open_written, s.open_written_max, s.open_read, s.open_barriers).c_str(),
      IoCell(s.commit_written, s.commit_written_max, s.commit_read, s.commit_barriers).c_str(),
      DeviceCell(s, device_found).c_str());
}

std::string WrittenCounts(const Summary& s) {
  std::string text;
  for (const auto& [bytes, count] : s.open_written_counts) {
    if (!text.empty()) text += ", ";
    text += Grouped(bytes) + " B: " + std::to_string(count);
  }
  return text;
}

}  // namespace

nlohmann::json RunOpenBench(const OpenBenchOptions& options) {
  const std::string full_path = options.dir + "/open-full.rgn";
  const std::string empty_path = options.dir + "/open-empty.rgn";
  std::printf("## 4. Writer open on a store with big commits\n\n");
  // Old copies first, so the free-space check sees their room.
  std::filesystem::remove(full_path);
  std::filesystem::remove(empty_path);
  const uint64_t estimated = EstimatedStoreBytes(options.big_bytes);
  struct statvfs fs {};
  if (::statvfs(options.dir.c_str(), &fs) != 0) {
    DieInOpen("statvfs " + options.dir + ": " + std::strerror(errno));
  }
  const uint64_t available = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (available < 2 * estimated + kSpareBytes) {
    const std::string why = "skipped: the two stores need " + Grouped(2 * estimated / kMiB) +
                            " MiB (+ " + Grouped(kSpareBytes / kMiB) + " MiB spare) and " +
                            options.dir + " has " + Grouped(available / kMiB) + " MiB free";
    std::printf("%s.\n\n", why.c_str());
    std::fprintf(stderr, "  open: %s\n", why.c_str());
    return {{"skipped", why}};
  }
  Device device(options.dir);

  std::fprintf(stderr, "  open: setup (two stores of %s MiB)\n", Grouped(estimated / kMiB).c_str());
  const auto setup_start = Clock::now();
  // Sequential: creating both at once was slower here (the zero-fill is
  // bound by the device, and two writers only fight over it).
  CreateStore(full_path, options.big_bytes);
  CreateStore(empty_path, options.big_bytes);
  FillBigRegions(full_path, options.big_bytes);
  const double setup_s = Nanos(Clock::now() - setup_start) / 1e9;
  auto info = ReadStoreInfo(full_path);
  if (!info.ok()) DieInOpen(info.status().ToString());
  const uint64_t file_bytes = info->file_size;
  std::fprintf(stderr, "  open: setup took %.0f s\n", setup_s);

  const RealtimeScope realtime(options.realtime, "regionstore_commit_bench: open");
  std::fprintf(stderr, "  open: %d rounds\n", options.rounds);
  uint64_t stamp = 0;
  for (int round = 0; round < kWarmupRounds; ++round) {
    static_cast<void>(OpenCommitClose(full_path, device, ++stamp));
    static_cast<void>(OpenCommitClose(empty_path, device, ++stamp));
  }
  std::vector<Sample> full, empty;
  std::vector<double> ratios;
  for (int round = 0; round < options.rounds; ++round) {
    if (round % 2 == 0) {
      full.push_back(OpenCommitClose(full_path, device, ++stamp));
      empty.push_back(OpenCommitClose(empty_path, device, ++stamp));
    } else {
      empty.push_back(OpenCommitClose(empty_path, device, ++stamp));
      full.push_back(OpenCommitClose(full_path, device, ++stamp));
    }
    ratios.push_back(full.back().total_ns / empty.back().total_ns);
  }
  const Summary full_summary = Summarize(full);
  const Summary empty_summary = Summarize(empty);
  const double ratio = Median(ratios);
  const double ratio_low = *std::min_element(ratios.begin(), ratios.end());
  const double ratio_high = *std::max_element(ratios.begin(), ratios.end());
  const double ratio_of_medians = full_summary.total_ns / empty_summary.total_ns;

  std::fprintf(stderr, "  open: kills (1 between commits, %d at random moments)\n",
               options.kill_trials);
  std::vector<Sample> quiet_kill, random_kill;
  std::vector<double> random_commits;
  {
    const int commits = KillCommitLoop(full_path, KillPoint::kBetweenCommits, 0);
    static_cast<void>(commits);
    quiet_kill.push_back(OpenCommitClose(full_path, device, ++stamp));
  }
  std::mt19937 random(13);
  std::uniform_int_distribution<int> delay(0, kRandomKillMaxMicros);
  for (int trial = 0; trial < options.kill_trials; ++trial) {
    random_commits.push_back(KillCommitLoop(full_path, KillPoint::kRandom, delay(random)));
    random_kill.push_back(OpenCommitClose(full_path, device, ++stamp));
  }
  const bool fifo = realtime.active();
  const Summary quiet_summary = Summarize(quiet_kill);
  const Summary random_summary = Summarize(random_kill);
  std::filesystem::remove(full_path);
  std::filesystem::remove(empty_path);

  std::printf(
      "Two stores of %s bytes (%s MiB), regions big-a and big-b of %s MiB capacity and small of "
      "4 KiB. full: big-a and big-b each hold one %s MiB commit, made once at setup (setup: "
      "%.0f s, both stores created and filled); empty: no commit in them. %d interleaved "
      "rounds, the order alternating, after %d untimed ones; each runs, per store: "
      "Store::Open(kReadWrite) through a counting Io, Commit of %zu bytes (kSync) into small, "
      "close, under %s. Warm page cache (nothing dropped). Medians; bytes are what the store asked "
      "its "
      "file to read and write (pread/pwrite/pwritev; nothing through the mapping), with "
      "barriers (fdatasync, RWF_DSYNC, msync(MS_SYNC)) in brackets. Device: %s, the whole device's "
      "sectors "
      "written and flushes during the open alone.\n\n",
      Grouped(file_bytes).c_str(), Grouped(file_bytes / kMiB).c_str(),
      Grouped(options.big_bytes / kMiB).c_str(), Grouped(options.big_bytes / kMiB).c_str(), setup_s,
      options.rounds, kWarmupRounds, kTinyCommit, fifo ? "SCHED_FIFO (--realtime)" : "SCHED_OTHER",
      device.Describe().c_str());
  std::printf(
      "| store | open + commit + close us | open us | first commit us | close us | open: "
      "bytes written / read (barriers) | first commit: bytes written / read (barriers) "
      "| device during open: KiB written / flushes |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | --- | --- | --- |\n");
  PrintStoreRow("full", full_summary, device.found());
  PrintStoreRow("empty", empty_summary, device.found());
  std::printf(
      "\nfull / empty, open + commit + close: %s (per-round ratios, median; range %s-%s); "
      "ratio of the medians %s. Target: at most 1.10, under 5 ms.\n\n",
      Fixed(ratio, 2).c_str(), Fixed(ratio_low, 2).c_str(), Fixed(ratio_high, 2).c_str(),
      Fixed(ratio_of_medians, 2).c_str());
  std::printf(
      "The next writer open of the full store after a SIGKILLed writer (a child "
      "committing %zu bytes, kSync, into small in a loop):\n\n",
      kTinyCommit);
  std::printf(
      "| killed | opens | open + commit + close us | open us | open: bytes written / "
      "read (barriers) | first commit: bytes written / read (barriers) | device during "
      "open: KiB written / flushes | bytes written by the open: opens |\n");
  std::printf("| --- | ---: | ---: | ---: | --- | --- | --- | --- |\n");
  const auto kill_row = [&](const std::string& label, const Summary& s, size_t opens) {
    std::printf(
        "| %s | %zu | %s | %s | %s | %s | %s | %s |\n", label.c_str(), opens,
        Micros(s.total_ns).c_str(), Micros(s.open_ns).c_str(),
        IoCell(s.open_written, s.open_written_max, s.open_read, s.open_barriers).c_str(),
        IoCell(s.commit_written, s.commit_written_max, s.commit_read, s.commit_barriers).c_str(),
        DeviceCell(s, device.found()).c_str(), WrittenCounts(s).c_str());
  };
  kill_row("between commits (after " + std::to_string(kCommitsBeforeQuietKill) +
               " returned, waiting on a pipe)",
           quiet_summary, quiet_kill.size());
  kill_row("at a random moment, 0-" + std::to_string(kRandomKillMaxMicros / 1000) +
               " ms after its first commit returned",
           random_summary, random_kill.size());
  std::printf("\n");

  nlohmann::json stores = nlohmann::json::array();
  nlohmann::json full_json = SummaryJson(full_summary);
  full_json["store"] = "full";
  nlohmann::json empty_json = SummaryJson(empty_summary);
  empty_json["store"] = "empty";
  nlohmann::json quiet_json = SummaryJson(quiet_summary);
  quiet_json["kill"] = "between commits";
  quiet_json["opens"] = quiet_kill.size();
  nlohmann::json random_json = SummaryJson(random_summary);
  random_json["kill"] = "at a random moment, 0-" + std::to_string(kRandomKillMaxMicros / 1000) +
                        " ms into a commit loop";
  random_json["opens"] = random_kill.size();
  random_json["commits_before_kill_median"] = Median(random_commits);
  return {{"big_bytes", options.big_bytes},
          {"small_capacity", kSmallCapacity},
          {"commit_bytes", kTinyCommit},
          {"store_file_bytes", file_bytes},
          {"setup_s", setup_s},
          {"rounds", options.rounds},
          {"realtime", fifo},
          {"device", device.found() ? nlohmann::json(device.Describe()) : nlohmann::json()},
          {"device_note", device.Describe()},
          {"stores", {full_json, empty_json}},
          {"full_over_empty", {{"median", ratio}, {"low", ratio_low}, {"high", ratio_high}}},
          {"ratio_of_medians", ratio_of_medians},
          {"kills", {quiet_json, random_json}}};
}

}  // namespace regionstore::bench
