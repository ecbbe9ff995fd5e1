// The region lab, long-lived arms: a 16 MiB store, 1 MiB updated at data
// offset 2 MiB (a 1 MiB-aligned file offset), 8 updates per iteration, in each
// durability mode, beside the same syscalls made without the library on the
// same file and a plain memcpy. The full lab (one-shot arms, sweeps, report)
// is issue 5's.
//
// The store lives in $REGIONSTORE_BENCH_DIR (default: the current directory):
// put it on the disk you want to measure, not on tmpfs.
#include <fcntl.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "regionstore/store.h"

namespace {

using regionstore::Durability;
using regionstore::OpenMode;
using regionstore::Status;
using regionstore::Store;

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kStoreSize = 16 * kMiB;
constexpr uint64_t kSliceOffset = 2 * kMiB;
constexpr uint64_t kSliceSize = 1 * kMiB;
constexpr int kUpdatesPerIteration = 8;

std::string StorePath() {
  const char* dir = std::getenv("REGIONSTORE_BENCH_DIR");
  return std::string(dir != nullptr ? dir : ".") + "/regionstore-lab-bench.rgn";
}

// Content changes every update so no layer can skip an unchanged page.
void Refill(std::vector<std::byte>& buffer, uint64_t round) {
  std::memset(buffer.data(), static_cast<int>(round & 0xff), buffer.size());
  std::memcpy(buffer.data(), &round, sizeof round);
}

void SetUp(benchmark::State& state) {
  regionstore::CreateOptions options;
  options.replace_existing = true;
  if (auto s = Store::Create(StorePath(), kStoreSize, options); !s.ok()) {
    state.SkipWithError(s.ToString().c_str());
  }
}

// Times kUpdatesPerIteration updates per iteration. `update` writes the
// slice and returns an empty string, or what failed. Refilling the slice is
// not timed.
template <typename Update>
void RunUpdates(benchmark::State& state, Update update) {
  std::vector<std::byte> slice(kSliceSize);
  uint64_t round = 0;
  for (auto _ : state) {
    for (int i = 0; i < kUpdatesPerIteration; ++i) {
      state.PauseTiming();
      Refill(slice, ++round);
      state.ResumeTiming();
      if (std::string error = update(slice); !error.empty()) {
        state.SkipWithError(error.c_str());
        return;
      }
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kUpdatesPerIteration *
                          static_cast<int64_t>(kSliceSize));
}

void BM_LibraryWrite(benchmark::State& state, Durability mode) {
  SetUp(state);
  auto store = Store::Open(StorePath(), OpenMode::kReadWrite);
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return;
  }
  RunUpdates(state, [&](const std::vector<std::byte>& slice) {
    Status written = store->Write(kSliceOffset, slice, mode);
    return written.ok() ? std::string() : written.ToString();
  });
  // From the handle's own counters: barriers per update and the time spent
  // inside them, so the table shows how much of each update is the flush.
  const regionstore::ModeStats counters = store->Stats().of(mode);
  if (counters.writes > 0) {
    state.counters["barriers_per_update"] =
        static_cast<double>(counters.flushes) / static_cast<double>(counters.writes);
    state.counters["barrier_us_per_update"] =
        static_cast<double>(counters.flush_nanos) / 1e3 / static_cast<double>(counters.writes);
  }
}

// The same pwrite + fdatasync on the same file offset, no library.
void BM_RawPwriteFdatasync(benchmark::State& state) {
  SetUp(state);
  const std::string path = StorePath();
  auto info = regionstore::ReadStoreInfo(path);
  if (!info.ok()) {
    state.SkipWithError(info.status().ToString().c_str());
    return;
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    state.SkipWithError(("open " + path + ": " + std::strerror(errno)).c_str());
    return;
  }
  const auto file_offset = static_cast<off_t>(info->data_offset + kSliceOffset);
  RunUpdates(state, [&](const std::vector<std::byte>& slice) {
    if (::pwrite(fd, slice.data(), slice.size(), file_offset) !=
        static_cast<ssize_t>(slice.size())) {
      return "pwrite: " + std::string(std::strerror(errno));
    }
    if (::fdatasync(fd) != 0) return "fdatasync: " + std::string(std::strerror(errno));
    return std::string();
  });
  ::close(fd);
}

// The floor: copying 1 MiB between two buffers.
void BM_Memcpy(benchmark::State& state) {
  std::vector<std::byte> from(kSliceSize, std::byte{1});
  std::vector<std::byte> to(kSliceSize);
  for (auto _ : state) {
    for (int i = 0; i < kUpdatesPerIteration; ++i) {
      std::memcpy(to.data(), from.data(), kSliceSize);
      benchmark::DoNotOptimize(to.data());
      benchmark::ClobberMemory();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kUpdatesPerIteration *
                          static_cast<int64_t>(kSliceSize));
}

BENCHMARK_CAPTURE(BM_LibraryWrite, none, Durability::kNone)->UseRealTime();
BENCHMARK_CAPTURE(BM_LibraryWrite, msync_async, Durability::kAsync)->UseRealTime();
BENCHMARK_CAPTURE(BM_LibraryWrite, msync_sync, Durability::kSync)->UseRealTime();
BENCHMARK_CAPTURE(BM_LibraryWrite, pwrite_fdatasync, Durability::kPwriteFdatasync)
    ->UseRealTime();
BENCHMARK(BM_RawPwriteFdatasync)->UseRealTime();
BENCHMARK(BM_Memcpy)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
