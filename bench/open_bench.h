// The writer-open section of regionstore_commit_bench:
// what a writer's Store::Open plus a first tiny commit costs on a store
// whose other regions hold big commits, beside the same on a store with the
// same layout and empty big regions. bench/open_bench.cc says how.
#ifndef REGIONSTORE_BENCH_OPEN_BENCH_H_
#define REGIONSTORE_BENCH_OPEN_BENCH_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace regionstore::bench {

struct OpenBenchOptions {
  std::string dir;         // where the two stores go (removed at the end)
  uint64_t big_bytes = 0;  // capacity of, and commit into, each big region
  int rounds = 0;          // interleaved rounds (each: both stores once)
  int kill_trials = 0;     // SIGKILLs at a random moment of a commit loop
  bool realtime = false;   // rounds and kills under SCHED_FIFO (not the setup)
};

// Runs the section, prints its markdown to stdout and returns what
// bench/report.py prints: {"skipped": why} when the disk has no room for the
// two stores, else the medians, byte counts and kill results. Exits the
// process (like the rest of the benchmark) on an error it cannot measure
// around.
nlohmann::json RunOpenBench(const OpenBenchOptions& options);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_BENCH_OPEN_BENCH_H_
