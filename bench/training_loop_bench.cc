// Training-loop benchmark: what checkpointing costs a loop of fixed compute
// steps, per way of checkpointing, with the checkpoint interval set by the
// disk: every K steps, K chosen so that the interval is twice the time a
// blocking durable commit of the state takes in this run (measured first).
//
// Per state size (default 16 and 256 MiB), arms, run in the same rounds
// (each round runs every arm once, the first arm rotating):
//   no checkpoint: the steps alone, the reference;
//   copy floor: a memcpy of the state into a private buffer and nothing
//     else, the least a checkpointer that copies the state and persists it
//     in the background (PyTorch's asynchronous checkpoint copies to host
//     memory) makes the loop wait for;
//   cookbook: what a PyTorch user writes for an atomic file: write the state
//     to a temporary file, fsync it, rename it over the checkpoint, fsync the
//     directory;
//   blocking: Store::Commit kPwriteFdatasync, durable when it returns;
//   pipelined: Store::Commit kNone (a copy into the page cache) then
//     Store::StartSync (the fdatasync runs on the library's thread while the
//     loop goes on; the handle completes it at a later call).
// An arm runs (C + 1) * K steps and checkpoints after steps K, 2K, ..., CK,
// so the last barrier of the pipelined arm has K steps to finish, as it
// would in a longer loop; the timed run ends once every checkpoint is
// durable (the pipelined arm's WaitDurable on its last one included).
// A step: an 8-byte stamp every 64 KiB of the state (so every checkpoint
// differs), then a fixed chain of floating-point operations, calibrated
// once to --step-ms.
// Per arm: the cost per checkpoint, the arm's time less the reference's
// in the same round over C, and the overhead per step in a steady loop, that
// cost over the K steps of an interval (median of per-round figures, range);
// the stall per checkpoint (the
// time the loop waits in the checkpoint call); the lag until durable (from
// the checkpoint's start until the library reports it durable:
// DurableGeneration polled after each step, so at a step's resolution; the
// stall for the blocking arms); device write requests and KiB per
// checkpoint (/sys/.../stat of the directory's device, every process's
// writes, over the arm's run); the library's pwrites and barriers through
// the io seam per checkpoint. Nothing is asserted.
//
// Files go to --dir, else $REGIONSTORE_BENCH_DIR, else a folder under the
// build directory (never /tmp, which may be tmpfs).
//
// Usage: regionstore_training_bench [--sizes=16,256 (MiB)] [--rounds=N] [--checkpoints=C]
//                                   [--step-ms=MS] [--dir=D] [--json=FILE]
#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
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
#include "lab/counting_io.h"
#include "lab/die.h"
#include "lab/median.h"
#include "lab/program.h"
#include "lab/raw_io.h"
#include "lab/rounds.h"
#include "lab/text_cells.h"
#include "regionstore/io.h"
#include "regionstore/store.h"

namespace regionstore::bench {
namespace {

struct Options {
  std::vector<uint64_t> sizes{16 * kMiB, 256 * kMiB};
  int rounds = 4;
  int checkpoints = 2;  // per arm per round
  double step_ms = 5;
  std::string dir;
  std::string json_path;
};

int PositiveInt(std::string_view flag, std::string_view text) {
  const int value = std::atoi(std::string(text).c_str());
  if (value < 1) Die(std::string(flag) + " needs a positive number");
  return value;
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
        const int mib = PositiveInt("--sizes", list.substr(0, comma));
        options.sizes.push_back(static_cast<uint64_t>(mib) * kMiB);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
      if (options.sizes.empty()) Die("--sizes needs at least one size in MiB");
    } else if (arg.starts_with("--rounds=")) {
      options.rounds = PositiveInt("--rounds", arg.substr(9));
    } else if (arg.starts_with("--checkpoints=")) {
      options.checkpoints = PositiveInt("--checkpoints", arg.substr(14));
    } else if (arg.starts_with("--step-ms=")) {
      options.step_ms = std::atof(std::string(arg.substr(10)).c_str());
      if (!(options.step_ms > 0)) Die("--step-ms needs a positive number of milliseconds");
    } else if (arg.starts_with("--dir=")) {
      options.dir = arg.substr(6);
      if (options.dir.empty()) Die("--dir needs a directory");
    } else if (arg.starts_with("--json=")) {
      options.json_path = arg.substr(7);
      if (options.json_path.empty()) Die("--json needs a file name");
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: regionstore_training_bench [--sizes=16,256] [--rounds=N] [--checkpoints=C]\n"
          "                                  [--step-ms=MS] [--dir=D] [--json=FILE]\n"
          "  --sizes: state sizes in MiB (default 16,256)\n"
          "  --rounds=N: interleaved rounds per size (default 4)\n"
          "  --checkpoints=C: checkpoints per arm per round, at least (default 2; more where\n"
          "    an arm would run under 200 ms)\n"
          "  --step-ms=MS: the compute of one step (default 5)\n"
          "  --dir=D: where the files go (default $REGIONSTORE_BENCH_DIR, else the build tree)\n"
          "  --json=FILE: also write every arm's figures to FILE\n");
      std::exit(0);
    } else {
      Die("unknown argument '" + std::string(arg) + "' (try --help)");
    }
  }
  if (options.dir.empty()) options.dir = BenchDirFromEnv(REGIONSTORE_TRAINING_BENCH_DEFAULT_DIR);
  return options;
}

// The compute of a step: a dependent chain of multiply-adds, which no
// compiler folds and no memory traffic disturbs.
volatile double g_sink = 0;

void Compute(uint64_t iterations) {
  double x = g_sink;
  for (uint64_t i = 0; i < iterations; ++i) x = x * 0.999999 + 1e-7;
  g_sink = x;
}

// Iterations of Compute that take about `ms` (the fastest of three tries).
uint64_t CalibrateCompute(double ms) {
  constexpr uint64_t kProbe = 1 << 22;
  double best = INFINITY;
  for (int i = 0; i < 3; ++i) {
    const auto start = Clock::now();
    Compute(kProbe);
    best = std::min(best, Seconds(Clock::now() - start) * 1e3);
  }
  return static_cast<uint64_t>(static_cast<double>(kProbe) * ms / best);
}

// One step: stamp the state, then compute.
void Step(uint64_t step, std::span<std::byte> state, uint64_t iterations) {
  for (uint64_t offset = 0; offset + sizeof step <= state.size(); offset += 64 * kKiB) {
    std::memcpy(state.data() + offset, &step, sizeof step);
  }
  Compute(iterations);
}

// A way of checkpointing. `checkpoint` saves the state (the loop waits for
// it); `poll` runs after every step, and `finish` after the loop (neither
// timed as a stall): both report lags until durable of checkpoints made
// durable since, through `lags`.
struct Method {
  std::string name;
  std::function<std::string(std::span<const std::byte> state)> checkpoint;
  std::function<std::string(std::vector<double>& lags)> poll;
  std::function<std::string(std::vector<double>& lags)> finish;
  const CountingIo* io = nullptr;
  bool durable_on_return = true;  // the lag is the stall
};

struct ArmRun {
  double ns = NAN;  // the whole run, until its last checkpoint was durable
  std::vector<double> stalls;
  std::vector<double> lags;
  double device_writes = NAN;  // per checkpoint
  double device_kib = NAN;
  double seam_writes = NAN;
  double seam_barriers = NAN;
};

ArmRun RunArm(Method* method, std::span<std::byte> state, uint64_t& step, uint64_t every,
              int checkpoints, uint64_t iterations, const std::string& device_stat) {
  ArmRun run;
  const IoCounts io_before = method != nullptr && method->io ? method->io->counts() : IoCounts{};
  const std::optional<DeviceCounters> device_before = ReadDevice(device_stat);
  const uint64_t steps = every * static_cast<uint64_t>(checkpoints + 1);
  const auto start = Clock::now();
  for (uint64_t s = 1; s <= steps; ++s) {
    Step(++step, state, iterations);
    if (method == nullptr) continue;
    if (s % every == 0 && s / every <= static_cast<uint64_t>(checkpoints)) {
      const auto before = Clock::now();
      if (std::string e = method->checkpoint(state); !e.empty()) Die(method->name + ": " + e);
      run.stalls.push_back(Seconds(Clock::now() - before) * 1e9);
      if (method->durable_on_return) run.lags.push_back(run.stalls.back());
    }
    if (method->poll) {
      if (std::string e = method->poll(run.lags); !e.empty()) Die(method->name + ": " + e);
    }
  }
  if (method != nullptr && method->finish) {
    if (std::string e = method->finish(run.lags); !e.empty()) Die(method->name + ": " + e);
  }
  run.ns = Seconds(Clock::now() - start) * 1e9;
  const std::optional<DeviceCounters> device_after = ReadDevice(device_stat);
  const double per = method != nullptr ? checkpoints : 1;
  if (device_before && device_after) {
    run.device_writes =
        static_cast<double>(device_after->write_requests - device_before->write_requests) / per;
    run.device_kib =
        static_cast<double>(device_after->write_sectors - device_before->write_sectors) / 2 / per;
  }
  if (method != nullptr && method->io != nullptr) {
    const IoCounts io = method->io->counts() - io_before;
    run.seam_writes = static_cast<double>(io.write_calls) / per;
    run.seam_barriers = static_cast<double>(io.barriers) / per;
  }
  return run;
}

// The cookbook: an atomic replace of a plain file, as torch.save users
// write it.
std::string CookbookSave(const std::string& dir, std::span<const std::byte> state) {
  const std::string final_path = dir + "/training-cookbook.ckpt";
  const std::string temp_path = final_path + ".tmp";
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", temp_path);
  std::string error;
  if (!WriteAll(fd, state.data(), state.size())) error = Errno("write", temp_path);
  if (error.empty() && ::fsync(fd) != 0) error = Errno("fsync", temp_path);
  if (::close(fd) != 0 && error.empty()) error = Errno("close", temp_path);
  if (!error.empty()) return error;
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) return Errno("rename", temp_path);
  const Fd directory(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (::fsync(directory.get()) != 0) return Errno("fsync", dir);
  return {};
}

std::string Error(const Status& status) { return status.ok() ? std::string() : status.ToString(); }

// The pipelined arm's checkpoints not yet reported durable.
struct Pending {
  uint64_t generation;
  Clock::time_point started;
};

// Commit kNone + StartSync; lags from DurableGeneration after each step.
Method Pipelined(Store& store, std::vector<Pending>& pending, uint64_t& overlapped,
                 const CountingIo* io) {
  const auto report = [&store, &pending](std::vector<double>& lags) -> std::string {
    if (pending.empty()) return {};
    auto durable = store.DurableGeneration("state");
    if (!durable.ok()) return durable.status().ToString();
    const auto now = Clock::now();
    while (!pending.empty() && pending.front().generation <= *durable) {
      lags.push_back(Seconds(now - pending.front().started) * 1e9);
      pending.erase(pending.begin());
    }
    return {};
  };
  Method method;
  method.name = "regionstore pipelined: Commit kNone + StartSync";
  method.io = io;
  method.durable_on_return = false;
  method.checkpoint = [&store, &pending,
                       &overlapped](std::span<const std::byte> state) -> std::string {
    // The previous checkpoint not seen durable after the last step: its
    // barrier may still run, and StartSync below waits for it.
    if (!pending.empty()) ++overlapped;
    const auto started = Clock::now();
    auto generation = store.Commit("state", state, Durability::kNone);
    if (!generation.ok()) return generation.status().ToString();
    pending.push_back({*generation, started});
    return Error(store.StartSync());
  };
  method.poll = report;
  method.finish = [&store, &pending, report](std::vector<double>& lags) -> std::string {
    if (pending.empty()) return {};
    if (Status s = store.WaitDurable("state", pending.back().generation); !s.ok()) {
      return s.ToString();
    }
    return report(lags);
  };
  return method;
}

Store OpenStore(const std::string& path, uint64_t size, CountingIo* io) {
  CreateOptions create;
  create.replace_existing = true;
  create.checkpoints.push_back({"state", size, SlotLayout::kAuto});
  if (Status s = Store::Create(path, 0, create); !s.ok()) Die(s.ToString());
  OpenOptions open;
  open.io = io;
  auto store = Store::Open(path, OpenMode::kReadWrite, open);
  if (!store.ok()) Die(store.status().ToString());
  return std::move(*store);
}

std::string Ms(double ns) {
  char text[32];
  const double ms = ns / 1e6;
  std::snprintf(text, sizeof text, std::isnan(ms) ? "-" : ms < 10 ? "%.2f" : "%.0f", ms);
  return text;
}

std::string Percent(double ratio) {
  if (std::isnan(ratio)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", (ratio - 1) * 100);
  return text;
}

std::vector<double> Field(const std::vector<ArmRun>& runs, double ArmRun::*field) {
  std::vector<double> values;
  for (const ArmRun& run : runs) values.push_back(run.*field);
  return values;
}

std::vector<double> Joined(const std::vector<ArmRun>& runs, std::vector<double> ArmRun::*field) {
  std::vector<double> values;
  for (const ArmRun& run : runs)
    values.insert(values.end(), (run.*field).begin(), (run.*field).end());
  return values;
}

// Per size, the medians the summary prints: overhead per step of each arm
// (in the arms' order, the reference left out), and the stalls.
struct SummaryRow {
  uint64_t size = 0;
  uint64_t every = 0;
  std::vector<double> overhead;
  std::vector<double> stall_ns;
};

nlohmann::json RunSize(const Options& options, uint64_t size, const std::string& device_stat,
                       std::vector<SummaryRow>& summary) {
  std::fprintf(stderr, "  %s\n", SizeName(size).c_str());
  const std::string blocking_path = options.dir + "/training-blocking.rgn";
  const std::string pipelined_path = options.dir + "/training-pipelined.rgn";
  // Two io seams: the pipelined store's barrier is counted on the library's
  // thread (CountingIo counts barriers atomically).
  CountingIo blocking_io, pipelined_io;
  Store blocking = OpenStore(blocking_path, size, &blocking_io);
  Store pipelined = OpenStore(pipelined_path, size, &pipelined_io);
  std::vector<std::byte> state(size, std::byte{3});
  const uint64_t iterations = CalibrateCompute(options.step_ms);

  // The blocking commit's time, which sets the interval: the median of five
  // (each slot written at least once first: a first write allocates).
  std::vector<double> persist;
  for (int i = 0; i < 8; ++i) {
    state[0] = static_cast<std::byte>(i);
    const auto start = Clock::now();
    if (auto g = blocking.Commit("state", state, Durability::kPwriteFdatasync); !g.ok()) {
      Die(g.status().ToString());
    }
    if (i >= 3) persist.push_back(Seconds(Clock::now() - start) * 1e9);
  }
  const double persist_ns = Median(persist);
  const double step_ns = options.step_ms * 1e6;
  const uint64_t every =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(2 * persist_ns / step_ns)));
  for (int i = 0; i < 3; ++i) {  // the pipelined store's slots, and the cookbook's file
    if (auto g = pipelined.Commit("state", state, Durability::kNone); !g.ok()) {
      Die(g.status().ToString());
    }
    if (auto synced = pipelined.Sync(); !synced.ok()) Die(synced.status().ToString());
  }
  if (std::string e = CookbookSave(options.dir, state); !e.empty()) Die("cookbook: " + e);

  std::vector<Pending> pending;
  std::vector<Method> methods;
  std::vector<std::byte> host_copy(size);
  methods.push_back({"copy floor: memcpy into a private buffer",
                     [&host_copy](std::span<const std::byte> s) {
                       std::memcpy(host_copy.data(), s.data(), s.size());
                       return std::string();
                     },
                     nullptr, nullptr, nullptr, false});
  methods.push_back(
      {"cookbook: temp file, fsync, rename, fsync dir",
       [&options](std::span<const std::byte> s) { return CookbookSave(options.dir, s); }, nullptr,
       nullptr, nullptr, true});
  methods.push_back({"regionstore blocking: Commit kPwriteFdatasync",
                     [&blocking](std::span<const std::byte> s) -> std::string {
                       auto g = blocking.Commit("state", s, Durability::kPwriteFdatasync);
                       return g.ok() ? std::string() : g.status().ToString();
                     },
                     nullptr, nullptr, &blocking_io, true});
  uint64_t overlapped = 0;
  // Enough checkpoints that an arm's run lasts 200 ms or more: a small
  // state's interval is a few steps, and two of them time too little.
  const double interval_ns = static_cast<double>(every) * step_ns;
  const int checkpoints = std::clamp(static_cast<int>(std::ceil(200e6 / interval_ns)) - 1,
                                     options.checkpoints, std::max(options.checkpoints, 30));
  methods.push_back(Pipelined(pipelined, pending, overlapped, &pipelined_io));
  // Arm 0 is the reference, no checkpoint.
  const size_t arms = methods.size() + 1;
  std::vector<std::vector<ArmRun>> runs(arms);
  uint64_t step = 0;
  for (int r = 0; r < options.rounds; ++r) {
    for (size_t k = 0; k < arms; ++k) {
      const size_t a = (k + static_cast<size_t>(r)) % arms;
      runs[a].push_back(RunArm(a == 0 ? nullptr : &methods[a - 1], state, step, every, checkpoints,
                               iterations, device_stat));
    }
  }

  const double interval_ms = static_cast<double>(every) * options.step_ms;
  std::printf(
      "### %s state: a step of %g ms compute, a checkpoint every %llu steps (%.0f ms: twice "
      "the blocking commit's %s ms, timed before the rounds), %d checkpoints per arm per "
      "round\n\n",
      SizeName(size).c_str(), options.step_ms, static_cast<unsigned long long>(every), interval_ms,
      Ms(persist_ns).c_str(), checkpoints);
  std::printf(
      "| arm | cost per checkpoint ms (range) | overhead per step (range) | stall per checkpoint "
      "ms, median (max) | lag until durable ms, median (max) | device writes, KiB per checkpoint "
      "| pwrites, barriers per checkpoint (seam) |\n| --- | ---: | ---: | ---: | ---: | ---: | "
      "---: |\n");
  nlohmann::json table = nlohmann::json::array();
  SummaryRow& row = summary.emplace_back();
  row.size = size;
  row.every = every;
  const std::vector<double> reference = Field(runs[0], &ArmRun::ns);
  const double steps = static_cast<double>(every) * (checkpoints + 1);
  for (size_t a = 0; a < arms; ++a) {
    const std::string name = a == 0 ? "no checkpoint" : methods[a - 1].name;
    const std::vector<double> ns = Field(runs[a], &ArmRun::ns);
    // Per round: what the arm's checkpoints added to its run, per
    // checkpoint, and that over the compute of one interval (K of the
    // reference's steps in the same round).
    std::vector<double> cost, overhead;
    for (size_t r = 0; r < ns.size(); ++r) {
      cost.push_back((ns[r] - reference[r]) / checkpoints);
      overhead.push_back(cost.back() / (reference[r] / steps * static_cast<double>(every)));
    }
    const auto [cost_lo, cost_hi] = std::minmax_element(cost.begin(), cost.end());
    const auto [lo, hi] = std::minmax_element(overhead.begin(), overhead.end());
    const std::vector<double> stalls = Joined(runs[a], &ArmRun::stalls);
    const std::vector<double> lags = Joined(runs[a], &ArmRun::lags);
    const double max_stall = stalls.empty() ? NAN : *std::max_element(stalls.begin(), stalls.end());
    const double max_lag = lags.empty() ? NAN : *std::max_element(lags.begin(), lags.end());
    const double writes = Median(Field(runs[a], &ArmRun::device_writes));
    const double kib = Median(Field(runs[a], &ArmRun::device_kib));
    const double seam_writes = Median(Field(runs[a], &ArmRun::seam_writes));
    const double seam_barriers = Median(Field(runs[a], &ArmRun::seam_barriers));
    const std::string device = std::isnan(writes) ? "-"
                                                  : Grouped(static_cast<uint64_t>(writes)) + ", " +
                                                        Grouped(static_cast<uint64_t>(kib));
    const std::string seam =
        std::isnan(seam_writes) ? "-" : Fixed(seam_writes, 1) + ", " + Fixed(seam_barriers, 1);
    if (a == 0) {
      std::printf("| no checkpoint: %s ms per step; device per run: %s | - | - | - | - | - | - |\n",
                  Ms(Median(ns) / steps).c_str(), device.c_str());
    } else {
      std::printf("| %s | %s (%s to %s) | %s (%s to %s) | %s (%s) | %s (%s) | %s | %s |\n",
                  name.c_str(), Ms(Median(cost)).c_str(), Ms(*cost_lo).c_str(),
                  Ms(*cost_hi).c_str(), Percent(1 + Median(overhead)).c_str(),
                  Percent(1 + *lo).c_str(), Percent(1 + *hi).c_str(), Ms(Median(stalls)).c_str(),
                  Ms(max_stall).c_str(), Ms(Median(lags)).c_str(), Ms(max_lag).c_str(),
                  device.c_str(), seam.c_str());
      row.overhead.push_back(Median(overhead));
      row.stall_ns.push_back(Median(stalls));
    }
    table.push_back(
        {{"arm", name},
         {"run_ns", ns},
         {"cost_per_checkpoint_ns", cost},
         {"overhead_per_step", {{"median", Median(overhead)}, {"low", *lo}, {"high", *hi}}},
         {"stall_ns", stalls},
         {"lag_until_durable_ns", lags},
         {"device_write_requests_per_checkpoint", writes},
         {"device_write_kib_per_checkpoint", kib},
         {"seam_write_calls_per_checkpoint", seam_writes},
         {"seam_barriers_per_checkpoint", seam_barriers}});
  }
  const StoreStats stats = pipelined.Stats();
  std::printf(
      "\nThe pipelined arm: %llu background barriers started; %llu of %d checkpoints found the "
      "one before not yet seen durable (its StartSync then waits for that barrier).\n\n",
      static_cast<unsigned long long>(stats.background_syncs),
      static_cast<unsigned long long>(overlapped), options.rounds * checkpoints);
  std::fflush(stdout);
  return {{"size", size},
          {"step_ms", options.step_ms},
          {"every_steps", every},
          {"blocking_commit_ns", persist_ns},
          {"checkpoints_per_arm_per_round", checkpoints},
          {"background_syncs", stats.background_syncs},
          {"checkpoints_finding_the_last_not_durable", overlapped},
          {"arms", table}};
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
  std::printf("# regionstore training-loop benchmark\n\n");
  std::printf("Linux %s %s, %ld CPUs online; files in %s (%s). %d interleaved rounds per size.\n\n",
              machine.release, machine.machine, ::sysconf(_SC_NPROCESSORS_ONLN),
              options.dir.c_str(), fs.type_name.c_str(), options.rounds);
  if (MeasuresNoDisk(fs)) {
    std::printf("**WARNING: the directory is on %s: durable arms measure no disk.**\n\n",
                fs.type_name.c_str());
  }
  std::printf(
      "Cost per checkpoint: the arm's run (until its last checkpoint was durable) less the "
      "no-checkpoint arm's in the same round, over the checkpoints. Overhead per step: that "
      "cost over the compute of one interval, what a long loop pays (medians of per-round "
      "figures). Stall: the loop's wait in the checkpoint call. Lag: from the "
      "checkpoint's start until it is durable (pipelined: seen by DurableGeneration after a "
      "step, so at a step's resolution). Device: write requests and KiB of the directory's "
      "device over the arm's run, per checkpoint (every process's).\n\n");
  std::fflush(stdout);
  const std::string device_stat = DeviceStatPath(options.dir);
  const auto started = Clock::now();
  std::vector<SummaryRow> summary;
  nlohmann::json doc = {
      {"tool", "regionstore_training_bench"}, {"kernel", machine.release},
      {"filesystem", fs.type_name},           {"rounds", options.rounds},
      {"tables", nlohmann::json::array()},    {"skipped", nlohmann::json::array()}};
  for (const uint64_t size : options.sizes) {
    // Two stores of three slots, the cookbook's file and its temporary
    // copy, and slack.
    if (!HasRoom(options.dir, 8 * size + 64 * kMiB, SizeName(size))) {
      doc["skipped"].push_back(size);
      continue;
    }
    doc["tables"].push_back(RunSize(options, size, device_stat, summary));
  }
  // Arms 0-3 of SummaryRow: copy floor, cookbook, blocking, pipelined.
  std::printf(
      "### Overhead per step, medians of per-round figures (target for the pipelined arm: at most "
      "5%%)\n\n| state | every | copy floor | cookbook | regionstore blocking | regionstore "
      "pipelined | pipelined stall / copy floor's |\n| ---: | ---: | ---: | ---: | ---: | ---: | "
      "---: |\n");
  for (const SummaryRow& row : summary) {
    std::printf("| %s | %llu steps | %s | %s | %s | %s | %.2f |\n", SizeName(row.size).c_str(),
                static_cast<unsigned long long>(row.every), Percent(1 + row.overhead[0]).c_str(),
                Percent(1 + row.overhead[1]).c_str(), Percent(1 + row.overhead[2]).c_str(),
                Percent(1 + row.overhead[3]).c_str(), row.stall_ns[3] / row.stall_ns[0]);
  }
  std::printf("\n");
  std::error_code error;
  for (const char* name :
       {"training-blocking.rgn", "training-blocking.rgn.shm", "training-pipelined.rgn",
        "training-pipelined.rgn.shm", "training-cookbook.ckpt"}) {
    std::filesystem::remove(options.dir + "/" + name, error);
  }
  if (!options.json_path.empty()) WriteOutputFile(options.json_path, doc.dump(2) + "\n", "--json");
  std::printf("Run time: %.0f s.\n", Seconds(Clock::now() - started));
  return 0;
}
