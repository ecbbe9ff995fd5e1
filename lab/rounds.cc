#include "lab/rounds.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

#include "lab/die.h"
#include "lab/text_cells.h"

namespace regionstore::bench {
namespace {

// What the UntimedScopes of the batch running on this thread took out, and
// the device they read (RunInterleaved sets it per batch).
struct Untimed {
  double ns = 0;
  double user_ns = 0;
  double system_ns = 0;
  DeviceCounters device;
  std::string device_stat;
};
thread_local Untimed g_untimed;

void RunOps(const Arm& arm, uint64_t ops) {
  if (std::string error = arm.batch(ops); !error.empty()) Die(arm.name + ": " + error);
}

// Operations per clock check: doubled until one stride takes a twentieth of
// the batch time, so reading the clock costs nothing measurable. Also warms
// the arm up (page faults, caches, file growth).
uint64_t Calibrate(const Arm& arm, double batch_ns) {
  uint64_t stride = 1;
  for (;;) {
    g_untimed.ns = 0;
    const auto start = Clock::now();
    RunOps(arm, stride);
    const double ns = Seconds(Clock::now() - start) * 1e9 - g_untimed.ns;
    if (ns >= batch_ns / 20 || stride >= (uint64_t{1} << 24)) return stride;
    stride *= 2;
  }
}

// This thread's user and system CPU time so far, in nanoseconds.
std::pair<double, double> ThreadCpuNs() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  const auto ns = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_usec) * 1e3;
  };
  return {ns(usage.ru_utime), ns(usage.ru_stime)};
}

}  // namespace

UntimedScope::UntimedScope()
    : start_(Clock::now()), cpu_(ThreadCpuNs()), device_(ReadDevice(g_untimed.device_stat)) {}

UntimedScope::~UntimedScope() {
  if (device_) {
    if (const std::optional<DeviceCounters> after = ReadDevice(g_untimed.device_stat)) {
      g_untimed.device.write_requests += after->write_requests - device_->write_requests;
      g_untimed.device.write_sectors += after->write_sectors - device_->write_sectors;
      g_untimed.device.flushes += after->flushes - device_->flushes;
    }
  }
  const std::pair<double, double> cpu = ThreadCpuNs();
  g_untimed.user_ns += cpu.first - cpu_.first;
  g_untimed.system_ns += cpu.second - cpu_.second;
  g_untimed.ns += Seconds(Clock::now() - start_) * 1e9;
}

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
      g_untimed = Untimed{};
      g_untimed.device_stat = device_stat;
      const std::optional<DeviceCounters> before = ReadDevice(device_stat);
      const std::pair<double, double> cpu_before = ThreadCpuNs();
      uint64_t ops = 0;
      const auto start = Clock::now();
      double elapsed_ns = 0;
      while (elapsed_ns < batch_ns) {
        RunOps(arms[a], strides[a]);
        ops += strides[a];
        elapsed_ns = Seconds(Clock::now() - start) * 1e9 - g_untimed.ns;
      }
      const std::pair<double, double> cpu_after = ThreadCpuNs();
      const std::optional<DeviceCounters> after = ReadDevice(device_stat);
      const auto per_op = static_cast<double>(ops);
      out.ns[a].push_back(elapsed_ns / per_op);
      DevicePerOp device;
      device.user_ns = (cpu_after.first - cpu_before.first - g_untimed.user_ns) / per_op;
      device.system_ns = (cpu_after.second - cpu_before.second - g_untimed.system_ns) / per_op;
      if (before && after) {
        const DeviceCounters& untimed = g_untimed.device;
        device.flushes =
            static_cast<double>(after->flushes - before->flushes - untimed.flushes) / per_op;
        device.write_requests = static_cast<double>(after->write_requests - before->write_requests -
                                                    untimed.write_requests) /
                                per_op;
        device.write_kib = static_cast<double>(after->write_sectors - before->write_sectors -
                                               untimed.write_sectors) /
                           2 / per_op;
      }
      out.device[a].push_back(device);
    }
  }
  return out;
}

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

PairedRatio Paired(const std::vector<double>& numerator, const std::vector<double>& denominator,
                   const std::vector<double>* reference) {
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

std::string FormatRatio(const PairedRatio& ratio) {
  return Fixed(ratio.median, 2) + " (" + Fixed(ratio.low, 2) + "-" + Fixed(ratio.high, 2) + ")";
}

std::string FormatDevice(const DevicePerOp& d) {
  if (std::isnan(d.flushes)) return "-";
  return Fixed(d.flushes, 2) + " / " + Fixed(d.write_requests, 1) + " / " + Fixed(d.write_kib, 0);
}

std::string FormatByState(const PairedRatio& ratio) {
  return Fixed(ratio.fast, 2) + " / " + Fixed(ratio.slow, 2) + " (" +
         std::to_string(ratio.fast_rounds) + " / " + std::to_string(ratio.slow_rounds) + ")";
}

}  // namespace regionstore::bench
