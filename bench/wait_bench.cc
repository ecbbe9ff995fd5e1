// Section 8 of regionstore_commit_bench: readers that wait.
//  (a) what waking costs the writer: a 4 KiB kNone commit (the cheapest
//      commit, where one more syscall shows most) on a store made with
//      Store::Create's defaults ("ours", protocol 2), which wakes only
//      registered waiters (a read-modify-write of the sidecar's wake word,
//      no system call), beside the same on a protocol 1 store opened as
//      usual, which calls futex(FUTEX_WAKE) after every commit, and opened
//      with OpenOptions::wake_waiters = false; interleaved rounds, nobody
//      waiting.
//  (b) wake-up latency: a reader in another process gets each new commit of
//      a 4 KiB region, from the moment the writer's Commit returned to the
//      moment the reader holds its copy (CLOCK_MONOTONIC, one clock for both
//      processes), five ways: WaitForNewer (a futex sleep the writer
//      wakes; the waiter registers in the sidecar first) on the default
//      store and on a protocol 1 store, WaitForNewer by a reader that may
//      read the default store's sidecar but not write it (it cannot
//      register, so it polls every 10 ms), and Load of the default store
//      polled every 1 ms and every 100 µs (nanosleep between). The writer waits for each reader's
//      report before its next commit, after a random pause of 0-2 ms (a spin) so that the pollers'
//      phase is random; p50 and p99 over every commit of every round.
//  (c) what waiting costs the reader: each reader waits for a commit that
//      does not come, for a fixed time; its CPU time per second of it.
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "commit_bench.h"
#include "lab/die.h"
#include "lab/raw_io.h"
#include "regionstore/io.h"

namespace regionstore::bench {
namespace {

constexpr uint64_t kPayload = 4 * kKiB;

uint64_t MonotonicNs() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

uint64_t CpuNs() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto ns = [](const timeval& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u +
           static_cast<uint64_t>(t.tv_usec) * 1000u;
  };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

enum class ReaderKind { kFutex, kPoll1ms, kPoll100us };

struct ReaderArm {
  ReaderKind kind;
  const char* name;
  uint64_t poll_ns;
  uint32_t protocol;  // of the store it reads: kDefaultProtocol or kProtocol1
  // A reader that may read the sidecar but not write it (a user in the
  // store's group with read access): it cannot register, so it polls.
  bool sidecar_read_only = false;
};

// The default store's readers first; protocol 1's WaitForNewer last.
const std::array<ReaderArm, 5> kReaders{{
    {ReaderKind::kFutex, "WaitForNewer", 0, kDefaultProtocol},
    {ReaderKind::kFutex, "WaitForNewer, sidecar read-only", 0, kDefaultProtocol, true},
    {ReaderKind::kPoll1ms, "Load every 1 ms", 1'000'000, kDefaultProtocol},
    {ReaderKind::kPoll100us, "Load every 100 µs", 100'000, kDefaultProtocol},
    {ReaderKind::kFutex, "WaitForNewer, protocol 1 (futex)", 0, kProtocol1},
}};

// The index of the store a reader reads in RunLatency's arrays: 0 the
// default store, 1 the protocol 1 store.
size_t StoreOf(const ReaderArm& reader) { return reader.protocol == kProtocol1 ? 1 : 0; }

// The Io of a reader with read access only to the sidecar: opening it for
// writing is denied (EACCES), as the kernel denies such a user.
class SidecarReadOnlyIo final : public ForwardingIo {
 public:
  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override {
    if (mode == OpenMode::kReadWrite && path.ends_with(".shm")) {
      return Status::FromErrno(EACCES, "open", path);
    }
    return ForwardingIo::Open(path, mode, symlinks);
  }
};

// Waits the reader's way until region "r" holds a generation above
// `after`, or until `deadline` (monotonic ns) passes. True if it got one.
bool AwaitNewer(Store& store, const ReaderArm& arm, uint64_t after, uint64_t deadline,
                std::vector<std::byte>& copy) {
  if (arm.kind == ReaderKind::kFutex) {
    const uint64_t now = MonotonicNs();
    const auto left = std::chrono::nanoseconds(deadline > now ? deadline - now : 0);
    auto got = store.WaitForNewer("r", after, left, copy);
    if (!got.ok() && got.status().code() != StatusCode::kTimedOut) ::_exit(3);
    return got.ok();
  }
  for (;;) {
    auto got = store.Load("r", copy);
    if (got.ok() && got->generation > after) return true;
    if (MonotonicNs() >= deadline) return false;
    const timespec pause{0, static_cast<long>(arm.poll_ns)};
    ::nanosleep(&pause, nullptr);
  }
}

// The reader process. Latency: gets generations first+1 .. first+count,
// reporting each as {generation, monotonic ns when it held the copy}.
// Idle (count 0): waits `idle_ns` for a commit that does not come, then
// reports {its CPU ns, the wall ns}.
[[noreturn]] void RunReader(const std::string& path, const ReaderArm& arm, uint64_t first,
                            uint64_t count, uint64_t idle_ns, int report_fd) {
  ::alarm(120);
  static SidecarReadOnlyIo read_only_sidecar;
  OpenOptions options;
  if (arm.sidecar_read_only) options.io = &read_only_sidecar;
  auto store = Store::Open(path, OpenMode::kReadOnly, options);
  if (!store.ok()) ::_exit(2);
  std::vector<std::byte> copy;
  if (count == 0) {
    const uint64_t cpu_start = CpuNs();
    const uint64_t wall_start = MonotonicNs();
    if (AwaitNewer(*store, arm, first, wall_start + idle_ns, copy)) ::_exit(5);
    const std::array<uint64_t, 2> cost{CpuNs() - cpu_start, MonotonicNs() - wall_start};
    if (!WriteAll(report_fd, cost.data(), sizeof cost)) ::_exit(4);
    ::_exit(0);
  }
  for (uint64_t generation = first + 1; generation <= first + count; ++generation) {
    if (!AwaitNewer(*store, arm, generation - 1, MonotonicNs() + 60'000'000'000u, copy)) {
      ::_exit(3);
    }
    const std::array<uint64_t, 2> seen{generation, MonotonicNs()};
    if (!WriteAll(report_fd, seen.data(), sizeof seen)) ::_exit(4);
  }
  ::_exit(0);
}

struct LatencyResult {
  std::vector<double> latency_ns;  // every commit of every round
  uint64_t reader_cpu_ns = 0;      // (c): while idle
  uint64_t reader_wall_ns = 0;
};

// Forks a reader (RunReader's arguments); returns its pid and the read end
// of its report pipe.
std::pair<pid_t, int> StartReader(const std::string& path, const ReaderArm& arm, uint64_t first,
                                  uint64_t count, uint64_t idle_ns) {
  int fds[2];
  if (::pipe(fds) != 0) Die("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) Die("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    RunReader(path, arm, first, count, idle_ns, fds[1]);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

void FinishReader(std::pair<pid_t, int> reader) {
  ::close(reader.second);
  int status = 0;
  if (::waitpid(reader.first, &status, 0) != reader.first || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    Die("section 8: a reader failed");
  }
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

std::array<LatencyResult, kReaders.size()> RunLatency(const Options& options) {
  // One store per protocol, each with its writer and its newest generation.
  const std::array<std::string, 2> paths{options.dir + "/wait.rgn", options.dir + "/wait-p1.rgn"};
  CreateStore(paths[0], {{"r", kPayload}});
  CreateStore(paths[1], {{"r", kPayload}}, false, kProtocol1);
  std::array<Store, 2> writers{OpenStore(paths[0]), OpenStore(paths[1])};
  std::array<uint64_t, 2> generations{0, 0};
  Payloads payloads(kPayload);
  std::mt19937_64 rng(42);
  std::array<LatencyResult, kReaders.size()> results;
  const uint64_t per_round = options.quick ? 20 : 40;
  for (int round = 0; round < options.rounds; ++round) {
    for (size_t k = 0; k < kReaders.size(); ++k) {
      const size_t a = (static_cast<size_t>(round) + k) % kReaders.size();
      const size_t store = StoreOf(kReaders[a]);
      Store& writer = writers[store];
      uint64_t& generation = generations[store];
      const std::pair<pid_t, int> reader =
          StartReader(paths[store], kReaders[a], generation, per_round, 0);
      const int report = reader.second;
      for (uint64_t i = 0; i < per_round; ++i) {
        // A spin, not a sleep: a timer of the writer's would expire with the
        // pollers' (timer slack batches them) and hand them each commit at
        // once.
        const uint64_t resume = MonotonicNs() + rng() % 2'000'000;
        while (MonotonicNs() < resume) {
        }
        auto committed = writer.Commit("r", payloads.Next(), Durability::kNone);
        const uint64_t returned = MonotonicNs();
        if (!committed.ok()) Die(committed.status().ToString());
        generation = *committed;
        std::array<uint64_t, 2> seen{};
        if (!ReadAll(report, seen.data(), sizeof seen) || seen[0] != generation) {
          Die(std::string("section 8: the reader '") + kReaders[a].name + "' stopped");
        }
        results[a].latency_ns.push_back(static_cast<double>(seen[1]) -
                                        static_cast<double>(returned));
      }
      FinishReader(reader);
    }
  }
  // (c) Each reader waits for a commit that does not come.
  const uint64_t idle_ns = options.quick ? 200'000'000u : 1'000'000'000u;
  for (size_t a = 0; a < kReaders.size(); ++a) {
    const size_t store = StoreOf(kReaders[a]);
    const std::pair<pid_t, int> reader =
        StartReader(paths[store], kReaders[a], generations[store], 0, idle_ns);
    std::array<uint64_t, 2> cost{};
    if (!ReadAll(reader.second, cost.data(), sizeof cost)) Die("section 8: no reader cost");
    results[a].reader_cpu_ns = cost[0];
    results[a].reader_wall_ns = cost[1];
    FinishReader(reader);
  }
  for (const std::string& path : paths) {
    std::remove(path.c_str());
    std::remove((path + ".shm").c_str());
  }
  return results;
}

struct WakeCost {
  double ours_ns = NAN, protocol1_ns = NAN, protocol1_no_wake_ns = NAN;
  PairedRatio ours_ratio;       // ours / protocol 1 without the wake
  PairedRatio protocol1_ratio;  // protocol 1 waking / not waking
};

WakeCost RunWakeCost(const Options& options) {
  const std::string ours_path = options.dir + "/wake-default.rgn";
  const std::string wake_path = options.dir + "/wake-p1.rgn";
  const std::string quiet_path = options.dir + "/no-wake-p1.rgn";
  CreateStore(ours_path, {{"r", kPayload}});
  CreateStore(wake_path, {{"r", kPayload}}, false, kProtocol1);
  CreateStore(quiet_path, {{"r", kPayload}}, false, kProtocol1);
  Store ours = OpenStore(ours_path);
  Store wake = OpenStore(wake_path);
  auto quiet = Store::Open(quiet_path, OpenMode::kReadWrite, {.wake_waiters = false});
  if (!quiet.ok()) Die(quiet.status().ToString());
  std::vector<Arm> arms;
  arms.push_back(CommitArm("ours", ours, "r", kPayload, Durability::kNone));
  arms.push_back(CommitArm("protocol 1, wake", wake, "r", kPayload, Durability::kNone));
  arms.push_back(CommitArm("protocol 1, no wake", *quiet, "r", kPayload, Durability::kNone));
  const Rounds rounds =
      RunInterleaved(arms, options.rounds, options.mapped_batch_ms, options.device_stat);
  WakeCost cost;
  cost.ours_ns = Median(rounds.ns[0]);
  cost.protocol1_ns = Median(rounds.ns[1]);
  cost.protocol1_no_wake_ns = Median(rounds.ns[2]);
  cost.ours_ratio = Paired(rounds.ns[0], rounds.ns[2]);
  cost.protocol1_ratio = Paired(rounds.ns[1], rounds.ns[2]);
  std::remove(ours_path.c_str());
  std::remove((ours_path + ".shm").c_str());
  std::remove(wake_path.c_str());
  std::remove(quiet_path.c_str());
  return cost;
}

}  // namespace

nlohmann::json RunWaitSection(const Options& options) {
  const WakeCost cost = RunWakeCost(options);
  const std::array<LatencyResult, kReaders.size()> latency = RunLatency(options);
  std::printf("## 8. Readers that wait\n\n");
  std::printf(
      "(a) What waking costs a commit: a 4 KiB kNone commit on a store made with "
      "Store::Create's defaults (protocol %u: wakes only registered waiters, no system call), "
      "beside protocol 1 stores opened as usual (futex(FUTEX_WAKE) after every commit) and "
      "with wake_waiters = false; nobody waiting, %d interleaved rounds. Target: about "
      "0.3 µs.\n\n",
      kDefaultProtocol, options.rounds);
  std::printf(
      "| commit, 4 KiB kNone, nobody waiting | µs |\n| --- | ---: |\n| ours (default store) | "
      "%s |\n| protocol 1, wakes waiters | %s |\n| protocol 1, wake_waiters = false | %s |\n"
      "| ours / protocol 1 without the wake (median, range) | %s |\n"
      "| protocol 1: waking / not (median, range) | %s |\n\n",
      FormatMicros(cost.ours_ns).c_str(), FormatMicros(cost.protocol1_ns).c_str(),
      FormatMicros(cost.protocol1_no_wake_ns).c_str(), FormatRatio(cost.ours_ratio).c_str(),
      FormatRatio(cost.protocol1_ratio).c_str());
  std::printf(
      "(b) Wake-up latency: from the writer's Commit returning to a reader in another process "
      "holding its copy of the new 4 KiB commit (negative: the reader had it first; the wake is "
      "sent inside Commit); %zu commits per reader, a random 0-2 ms pause before each. (c) CPU "
      "while waiting: the reader's user + system time per second of "
      "wall time while it waits %.1f s for a commit that does not come.\n\n",
      latency[0].latency_ns.size(), static_cast<double>(latency[0].reader_wall_ns) / 1e9);
  std::printf("| reader | p50 µs | p99 µs | CPU while waiting |\n| --- | ---: | ---: | ---: |\n");
  nlohmann::json readers = nlohmann::json::array();
  for (size_t a = 0; a < kReaders.size(); ++a) {
    const LatencyResult& r = latency[a];
    const double p50 = Percentile(r.latency_ns, 0.50);
    const double p99 = Percentile(r.latency_ns, 0.99);
    const double cpu = r.reader_wall_ns == 0 ? NAN
                                             : static_cast<double>(r.reader_cpu_ns) /
                                                   static_cast<double>(r.reader_wall_ns);
    std::printf("| %s | %s | %s | %.3f%% |\n", kReaders[a].name, FormatMicros(p50).c_str(),
                FormatMicros(p99).c_str(), cpu * 100);
    readers.push_back({{"reader", kReaders[a].name},
                       {"commits", r.latency_ns.size()},
                       {"p50_ns", OrNull(p50)},
                       {"p99_ns", OrNull(p99)},
                       {"cpu_fraction", OrNull(cpu)}});
  }
  std::printf("\n");
  return {{"wake_cost",
           {{"ours_ns", OrNull(cost.ours_ns)},
            {"ours_ratio", RatioJson(cost.ours_ratio)},
            {"protocol1_ns", OrNull(cost.protocol1_ns)},
            {"protocol1_no_wake_ns", OrNull(cost.protocol1_no_wake_ns)},
            {"protocol1_ratio", RatioJson(cost.protocol1_ratio)}}},
          {"readers", std::move(readers)}};
}

}  // namespace regionstore::bench
