// Interleaved rounds and their medians: how the plain benchmark programs
// time arms side by side. Every measurement is a set of rounds, and each
// round times one batch of every arm, the first arm rotating from round to
// round. A batch runs operations until it has lasted a target time. Tables
// give each arm's median over rounds; a ratio is the median of the
// per-round ratios (two batches of one round ran a few tens of milliseconds
// apart, so they saw about the same machine), with their range.
#ifndef REGIONSTORE_LAB_ROUNDS_H_
#define REGIONSTORE_LAB_ROUNDS_H_

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lab/median.h"

namespace regionstore::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::duration elapsed) {
  return std::chrono::duration<double>(elapsed).count();
}

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
std::string DeviceStatPath(const std::string& dir);

// Fields 5 and 7 (writes completed, sectors written) and 16 (flushes
// completed) of Documentation/block/stat.rst; nothing without a stat file.
std::optional<DeviceCounters> ReadDevice(const std::string& stat_path);

// On a machine whose CPUs other processes keep busy, a thread woken by an
// I/O completion waits for a CPU, up to a scheduler tick (4 ms at HZ=250),
// at every wait: durable operations that take 0.1 ms on free CPUs take
// ~4 ms, for seconds at a time (docs/BENCH-CHECKPOINTS.md). A round whose
// reference arm took longer than this per operation ran in that slow state.
inline constexpr double kSlowRoundNs = 2e6;

// Inside a batch, what an operation does untimed: its time, this thread's
// CPU time and the device's writes while the scope lives are taken out of
// the batch's figures (RunInterleaved). For per-operation preparation that
// is not what is measured, such as cleaning pages before a commit into
// clean pages.
class UntimedScope {
 public:
  UntimedScope();
  ~UntimedScope();
  UntimedScope(const UntimedScope&) = delete;
  UntimedScope& operator=(const UntimedScope&) = delete;

 private:
  Clock::time_point start_;
  std::pair<double, double> cpu_;
  std::optional<DeviceCounters> device_;
};

// `rounds` rounds; round r runs arms r, r+1, ... (mod n), so each arm runs
// first, and after each other arm, equally often. A batch runs strides of
// operations until it has taken `batch_ms`: a batch lasts about as long
// whether the machine is in its fast or its slow state. Each arm is
// calibrated (and warmed up) first. Dies if an arm fails.
Rounds RunInterleaved(const std::vector<Arm>& arms, int rounds, double batch_ms,
                      const std::string& device_stat);

// Each field's median over rounds.
DevicePerOp MedianDevice(const std::vector<DevicePerOp>& rounds);

// Per-round ratios numerator/denominator (same round, so both batches ran in
// about the same machine state): their median and range, and their median
// over the fast and the slow rounds of `reference` (when given).
struct PairedRatio {
  double median = NAN, low = NAN, high = NAN;
  double fast = NAN, slow = NAN;
  int fast_rounds = 0, slow_rounds = 0;
};

PairedRatio Paired(const std::vector<double>& numerator, const std::vector<double>& denominator,
                   const std::vector<double>* reference = nullptr);

// "1.02 (0.98-1.10)".
std::string FormatRatio(const PairedRatio& ratio);

// "1.00 / 2.0 / 8": device flushes, write requests and KiB written per
// operation; "-" without device counters.
std::string FormatDevice(const DevicePerOp& d);

// "1.01 / 1.20 (14 / 7)": the ratio in fast and in slow rounds (how many).
std::string FormatByState(const PairedRatio& ratio);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_ROUNDS_H_
