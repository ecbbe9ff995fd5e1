// The public region lab ("1 MiB at offset 2 MiB in a 16 MiB file"),
// reproduced: a 16 MiB store, a 1 MiB slice updated at data offset 2 MiB
// (file offset 3 MiB, 1 MiB-aligned, since the data area starts at file
// offset 1 MiB; lab/lab.h, which regionctl bench shares), content
// changing on every update, in each of the lab's five arms:
//
//   pwrite            pwrite, no flush (raw only: the library has no such mode)
//   pwrite_fdatasync  pwrite + fdatasync        (library: kPwriteFdatasync)
//   msync_sync        memcpy + msync(MS_SYNC)   (library: kSync)
//   msync_async       memcpy + msync(MS_ASYNC)  (library: kAsync)
//   none              memcpy into the mapping   (library: kNone)
//
// each as two variants:
//
//   oneshot     every iteration opens, maps, writes, syncs, unmaps, closes, as
//               the lab did. Library: Store::Open + Write + destructor. Raw:
//               open/mmap/memcpy/msync/munmap/close or open/pwrite/fdatasync/
//               close on the same file.
//   longlived   one open store (raw: one descriptor and one mapping), 8
//               updates per iteration.
//   cleaned     long-lived, one update per iteration, and before each one,
//               with the timing paused, the file's dirty pages written back
//               (library: Store::Sync; raw: fdatasync), which write-protects
//               them: the pages of a program that updates less often than
//               the kernel's writeback interval. Not durable arms only (a
//               durable arm cleans its pages itself).
//
// and each with the library and with raw syscalls on the same file, plus a
// memcpy of 1 MiB between two buffers (the floor), and two more raw long-lived
// msync_sync arms that show what a kept mapping's write faults after each
// msync cost: raw_populate prefaults the range with MADV_POPULATE_WRITE before
// each copy; raw_populate_reset also drops the range's page-table entries with
// MADV_DONTNEED after each msync, as the library's kSync does. Benchmarks are
// named
// lab/<arm>/<variant>/<library|raw>/<regime> so a report can pair library and
// raw; run with --benchmark_repetitions=7
// --benchmark_enable_random_interleaving=true so the pairs are measured side
// by side, and read the medians (bench/report.py does).
//
// framework/memcpy/<bytes> checks what Debian's DEBUG build of Google
// Benchmark does to a timing (see FrameworkMemcpy).
//
// With REGIONSTORE_LAB_SWEEPS=1 it adds the write-size sweep:
// sweep/<arm>/<bytes>/<aligned|unaligned>/<library|raw>, 4 KiB to 4 MiB.
//
// Folio regime (how the slice's pages got into the page cache; it decides what
// an msync writes back and how many faults a kept mapping takes after one):
//
//   large_folios  the store as Store::Create leaves it (8 MiB zero-fill
//                 pwrites), and before each run the slice is dropped from the
//                 cache and written back in by one 1 MiB pwrite.
//   small_folios  the slice dropped from the cache, then faulted back in
//                 through a mapping (4 KiB folios), before each run.
//
// Files go to $REGIONSTORE_BENCH_DIR, by default a folder under the build
// directory (never /tmp); on tmpfs or overlay the bench warns loudly.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lab/bench_dir.h"
#include "lab/lab.h"
#include "publish_bench.h"
#include "regionstore/io.h"
#include "regionstore/store.h"

#ifndef REGIONSTORE_LAB_BENCH_DEFAULT_DIR
#define REGIONSTORE_LAB_BENCH_DEFAULT_DIR "."
#endif

namespace regionstore::bench {
namespace {

constexpr uint64_t kSliceOffset = kLabSliceOffset;  // in the data area
constexpr uint64_t kSliceSize = kLabSliceSize;
constexpr int kLongLivedUpdates = 8;

enum class Arm { kPwrite, kPwriteFdatasync, kMsyncSync, kMsyncAsync, kNone };
using Regime = FolioRegime;

const char* ArmName(Arm arm) {
  switch (arm) {
    case Arm::kPwrite:
      return "pwrite";
    case Arm::kPwriteFdatasync:
      return "pwrite_fdatasync";
    case Arm::kMsyncSync:
      return "msync_sync";
    case Arm::kMsyncAsync:
      return "msync_async";
    case Arm::kNone:
      return "none";
  }
  return "?";
}

std::optional<Durability> LibraryMode(Arm arm) {
  switch (arm) {
    case Arm::kPwrite:
      return std::nullopt;
    case Arm::kPwriteFdatasync:
      return Durability::kPwriteFdatasync;
    case Arm::kMsyncSync:
      return Durability::kSync;
    case Arm::kMsyncAsync:
      return Durability::kAsync;
    case Arm::kNone:
      return Durability::kNone;
  }
  return std::nullopt;
}

bool UsesMapping(Arm arm) {
  return arm == Arm::kMsyncSync || arm == Arm::kMsyncAsync || arm == Arm::kNone;
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

struct Lab {
  std::string dir;
  std::vector<uint64_t> store_size_sweep;  // store sizes created for storesize/...
  uint64_t slice_file_offset = 0;          // data_offset + kSliceOffset
  std::string Path(Regime regime) const { return dir + "/lab-" + FolioRegimeName(regime) + ".rgn"; }
};

Lab& TheLab() {
  static Lab lab;
  return lab;
}

std::string StoreSizePath(uint64_t store_size) {
  return TheLab().dir + "/lab-storesize-" + std::to_string(store_size / kMiB) + "MiB.rgn";
}

bool SweepsWanted() {
  const char* sweeps = std::getenv("REGIONSTORE_LAB_SWEEPS");
  return sweeps != nullptr && std::string(sweeps) == "1";
}

// Content changes on every update, in every 4 KiB page, so no layer can skip
// an unchanged page. Costs 256 stores: included in the timing of every arm
// alike (library, raw and memcpy), instead of a PauseTiming per update.
void Stamp(std::vector<std::byte>& slice, uint64_t round) {
  for (size_t at = 0; at + sizeof round <= slice.size(); at += 4096) {
    std::memcpy(slice.data() + at, &round, sizeof round);
  }
}

// Puts the slice's pages into the page cache in `regime`'s folio size
// (lab/lab.h). Returns an empty string or what failed.
std::string PrepareRegimeAt(const std::string& path, Regime regime) {
  return PrepareFolioRegime(path, TheLab().slice_file_offset, regime);
}

std::string PrepareRegime(Regime regime) { return PrepareRegimeAt(TheLab().Path(regime), regime); }

// What a kept mapping does about the write faults its next copy takes after
// an msync(MS_SYNC) left the pages write-protected (docs/BENCH-LAB.md).
enum class KeptFix {
  kNothing,           // the lab's plain syscalls
  kPopulate,          // MADV_POPULATE_WRITE on the range before the copy (Linux 5.14+)
  kPopulateAndReset,  // and MADV_DONTNEED after the msync: what the library does
};

// One update of `data` at `offset` in the file with raw syscalls on an open
// descriptor (and, for the mapping arms, an open mapping of the whole file).
std::string RawUpdate(Arm arm, int fd, std::byte* map, std::span<const std::byte> data,
                      uint64_t offset, KeptFix fix = KeptFix::kNothing) {
  if (!UsesMapping(arm)) {
    if (::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset)) !=
        static_cast<ssize_t>(data.size())) {
      return Errno("pwrite");
    }
    if (arm == Arm::kPwriteFdatasync && ::fdatasync(fd) != 0) return Errno("fdatasync");
    return {};
  }
  // msync and madvise need a page-aligned start: round the start down and the
  // end up (the lab's own offset is 1 MiB-aligned already).
  static const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;
  const uint64_t end = (offset + data.size() + page - 1) / page * page;
  if (fix != KeptFix::kNothing && ::madvise(map + start, end - start, MADV_POPULATE_WRITE) != 0) {
    return Errno("madvise(MADV_POPULATE_WRITE)");
  }
  std::memcpy(map + offset, data.data(), data.size());
  if (arm != Arm::kNone) {
    const int flags = arm == Arm::kMsyncSync ? MS_SYNC : MS_ASYNC;
    if (::msync(map + start, end - start, flags) != 0) return Errno("msync");
  }
  if (fix == KeptFix::kPopulateAndReset &&
      ::madvise(map + start, end - start, MADV_DONTNEED) != 0) {
    return Errno("madvise(MADV_DONTNEED)");
  }
  return {};
}

struct RawFile {
  int fd = -1;
  std::byte* map = nullptr;
  size_t map_size = 0;
  std::string Open(const std::string& path, bool with_mapping) {
    fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return Errno("open " + path);
    if (with_mapping) {
      struct stat st {};
      if (::fstat(fd, &st) != 0) return Errno("fstat");
      map_size = static_cast<size_t>(st.st_size);
      void* m = ::mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED) return Errno("mmap");
      map = static_cast<std::byte*>(m);
    }
    return {};
  }
  std::string Close() {
    std::string error;
    if (map != nullptr && ::munmap(map, map_size) != 0) error = Errno("munmap");
    map = nullptr;
    if (fd >= 0 && ::close(fd) != 0 && error.empty()) error = Errno("close");
    fd = -1;
    return error;
  }
  ~RawFile() { (void)Close(); }
};

// A long-lived arm's target: `size` bytes at data-area `offset` of the store
// at `path`, whose pages are put in `regime` before the run. The lab's arms
// use the 1 MiB slice at 2 MiB of their regime's store; the sweeps vary size,
// offset and store.
struct Kept {
  std::string path;
  Regime regime;
  uint64_t size;
  uint64_t offset;
};

void Finish(benchmark::State& state, int updates_per_iteration, uint64_t size = kSliceSize) {
  const auto bytes =
      static_cast<int64_t>(state.iterations()) * updates_per_iteration * static_cast<int64_t>(size);
  state.SetBytesProcessed(bytes);
  state.counters["updates_per_iter"] = updates_per_iteration;
}

// The long-lived loop: each iteration makes kLongLivedUpdates updates of
// `size` bytes, each stamped anew; `update` returns "" or what failed, which
// ends the run.
template <typename Update>
void RunKept(benchmark::State& state, uint64_t size, Update update) {
  std::vector<std::byte> data(size);
  uint64_t round = 0;
  for (auto _ : state) {
    std::string error;
    for (int i = 0; i < kLongLivedUpdates && error.empty(); ++i) {
      Stamp(data, ++round);
      error = update(std::span<const std::byte>(data));
    }
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
  Finish(state, kLongLivedUpdates, size);
}

// The one-shot loop: each iteration stamps the slice anew and hands it to
// `update` (which opens, writes and closes); "" or what failed, which ends
// the run.
template <typename Update>
void RunOneShot(benchmark::State& state, Regime regime, Update update) {
  if (std::string e = PrepareRegime(regime); !e.empty()) return state.SkipWithError(e.c_str());
  const std::string path = TheLab().Path(regime);
  std::vector<std::byte> slice(kSliceSize);
  uint64_t round = 0;
  for (auto _ : state) {
    Stamp(slice, ++round);
    if (std::string error = update(path, std::span<const std::byte>(slice)); !error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
  Finish(state, 1);
}

void RawOneShot(benchmark::State& state, Arm arm, Regime regime) {
  RunOneShot(state, regime, [arm](const std::string& path, std::span<const std::byte> slice) {
    RawFile file;
    std::string error = file.Open(path, UsesMapping(arm));
    if (error.empty()) error = RawUpdate(arm, file.fd, file.map, slice, TheLab().slice_file_offset);
    if (std::string closed = file.Close(); error.empty()) error = closed;
    return error;
  });
}

// The raw kept arms' setup: the regime prepared and `file` opened (mapped
// for the mapping arms). Returns the slice's file offset, or nothing after
// skipping the benchmark with the error.
std::optional<uint64_t> OpenKeptRaw(benchmark::State& state, Arm arm, const Kept& kept,
                                    RawFile& file) {
  if (std::string e = PrepareRegimeAt(kept.path, kept.regime); !e.empty()) {
    state.SkipWithError(e.c_str());
    return std::nullopt;
  }
  auto info = ReadStoreInfo(kept.path);
  if (!info.ok()) {
    state.SkipWithError(info.status().ToString().c_str());
    return std::nullopt;
  }
  if (std::string e = file.Open(kept.path, UsesMapping(arm)); !e.empty()) {
    state.SkipWithError(e.c_str());
    return std::nullopt;
  }
  return info->data_offset + kept.offset;
}

void RawLongLived(benchmark::State& state, Arm arm, const Kept& kept, KeptFix fix) {
  RawFile file;
  const std::optional<uint64_t> opened = OpenKeptRaw(state, arm, kept, file);
  if (!opened) return;
  const uint64_t file_offset = *opened;
  RunKept(state, kept.size, [&](std::span<const std::byte> data) {
    return RawUpdate(arm, file.fd, file.map, data, file_offset, fix);
  });
}

void LibraryOneShot(benchmark::State& state, Durability mode, Regime regime) {
  RunOneShot(state, regime, [mode](const std::string& path, std::span<const std::byte> slice) {
    auto store = Store::Open(path, OpenMode::kReadWrite);
    if (!store.ok()) return store.status().ToString();
    Status written = store->Write(kSliceOffset, slice, mode);
    return written.ok() ? std::string() : written.ToString();
  });  // the destructor unmaps, unlocks and closes inside the timed loop
}

void LibraryLongLived(benchmark::State& state, Durability mode, const Kept& kept) {
  if (std::string e = PrepareRegimeAt(kept.path, kept.regime); !e.empty()) {
    return state.SkipWithError(e.c_str());
  }
  auto store = Store::Open(kept.path, OpenMode::kReadWrite);
  if (!store.ok()) return state.SkipWithError(store.status().ToString().c_str());
  RunKept(state, kept.size, [&](std::span<const std::byte> data) {
    Status written = store->Write(kept.offset, data, mode);
    return written.ok() ? std::string() : written.ToString();
  });
  // From the handle's counters: time inside barriers per update.
  const ModeStats counters = store->Stats().of(mode);
  if (counters.writes > 0) {
    state.counters["barrier_us_per_update"] =
        static_cast<double>(counters.flush_nanos) / 1e3 / static_cast<double>(counters.writes);
  }
}

// The cleaned loop: each iteration cleans the file's pages with `clean`
// (untimed), then stamps and updates (timed, as in the other variants).
template <typename Clean, typename Update>
void RunCleaned(benchmark::State& state, uint64_t size, Clean clean, Update update) {
  std::vector<std::byte> data(size);
  uint64_t round = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::string error = clean();
    state.ResumeTiming();
    if (error.empty()) {
      Stamp(data, ++round);
      error = update(std::span<const std::byte>(data));
    }
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
  Finish(state, 1, size);
}

void LibraryCleaned(benchmark::State& state, Durability mode, const Kept& kept) {
  if (std::string e = PrepareRegimeAt(kept.path, kept.regime); !e.empty()) {
    return state.SkipWithError(e.c_str());
  }
  auto store = Store::Open(kept.path, OpenMode::kReadWrite);
  if (!store.ok()) return state.SkipWithError(store.status().ToString().c_str());
  RunCleaned(
      state, kept.size,
      [&] {
        auto synced = store->Sync();
        return synced.ok() ? std::string() : synced.status().ToString();
      },
      [&](std::span<const std::byte> data) {
        Status written = store->Write(kept.offset, data, mode);
        return written.ok() ? std::string() : written.ToString();
      });
}

void RawCleaned(benchmark::State& state, Arm arm, const Kept& kept) {
  RawFile file;
  const std::optional<uint64_t> opened = OpenKeptRaw(state, arm, kept, file);
  if (!opened) return;
  const uint64_t file_offset = *opened;
  RunCleaned(
      state, kept.size,
      [&] { return ::fdatasync(file.fd) == 0 ? std::string() : Errno("fdatasync"); },
      [&](std::span<const std::byte> data) {
        return RawUpdate(arm, file.fd, file.map, data, file_offset);
      });
}

// The write-size sweep (only with REGIONSTORE_LAB_SWEEPS=1): the
// long-lived arms in the large-folio regime, 8 updates of `size` bytes per
// iteration at data offset 2 MiB, or 2 MiB + 100 bytes (unaligned).
constexpr uint64_t kUnalignedBy = 100;

// The one-shot arms' fixed cost alone: open, map the whole
// file, unmap, close, with no update. Library: Store::Open (open, flock, fstat
// and stat of the path, pread and checksum of superblock and region table,
// mmap, checkpoint recovery scan) and the destructor. Raw: open, fstat, mmap,
// munmap, close.
void OpenCloseLibrary(benchmark::State& state) {
  const std::string path = TheLab().Path(Regime::kLargeFolios);
  for (auto _ : state) {
    auto store = Store::Open(path, OpenMode::kReadWrite);
    if (!store.ok()) {
      state.SkipWithError(store.status().ToString().c_str());
      break;
    }
  }
}

void OpenCloseRaw(benchmark::State& state) {
  const std::string path = TheLab().Path(Regime::kLargeFolios);
  for (auto _ : state) {
    RawFile file;
    std::string error = file.Open(path, /*with_mapping=*/true);
    if (std::string closed = file.Close(); error.empty()) error = closed;
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
}

// One copy of `from` into `to`, stamped like every other arm: the body of
// the memcpy floor and of the framework check below.
void StampAndCopy(std::vector<std::byte>& from, std::vector<std::byte>& to, uint64_t round) {
  Stamp(from, round);
  std::memcpy(to.data(), from.data(), from.size());
  benchmark::DoNotOptimize(to.data());
  benchmark::ClobberMemory();
}

// The floor: 1 MiB copied between two buffers, stamped like every other arm.
void MemcpyFloor(benchmark::State& state) {
  std::vector<std::byte> from(kSliceSize);
  std::vector<std::byte> to(kSliceSize);
  uint64_t round = 0;
  for (auto _ : state) StampAndCopy(from, to, ++round);
  Finish(state, 1);
}

// The framework check: Debian's libbenchmark is built without NDEBUG (it
// prints "Library was built as DEBUG"). Its checks run in the library's
// code between timed batches; the timed loop (`for (auto _ : state)`) is
// inline code of its header, built here in Release. Measured rather than
// assumed: the same copy (4 KiB, and 1 MiB as the floor) through Google
// Benchmark (framework/memcpy/<bytes>) and through a plain steady_clock loop
// in this process before the benchmarks start (the context's
// plain_memcpy_<bytes>_ns: the median of 7 runs of ~0.1 s). bench/report.py
// prints both.
void FrameworkMemcpy(benchmark::State& state) {
  const auto bytes = static_cast<size_t>(state.range(0));
  std::vector<std::byte> from(bytes);
  std::vector<std::byte> to(bytes);
  uint64_t round = 0;
  for (auto _ : state) StampAndCopy(from, to, ++round);
}

double PlainLoopNs(size_t bytes) {
  std::vector<std::byte> from(bytes);
  std::vector<std::byte> to(bytes);
  uint64_t round = 0;
  std::vector<double> runs;
  for (int run = 0; run < 7; ++run) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    uint64_t ops = 0;
    std::chrono::duration<double, std::nano> elapsed{};
    // Checks the clock every 64 copies, so reading it costs nothing measurable.
    do {
      for (int i = 0; i < 64; ++i) StampAndCopy(from, to, ++round);
      ops += 64;
      elapsed = Clock::now() - start;
    } while (elapsed < std::chrono::milliseconds(100));
    runs.push_back(elapsed.count() / static_cast<double>(ops));
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

void MeasurePlainLoops() {
  for (const size_t bytes : {size_t{4096}, size_t{kSliceSize}}) {
    char value[32];
    std::snprintf(value, sizeof value, "%.1f", PlainLoopNs(bytes));
    benchmark::AddCustomContext("plain_memcpy_" + std::to_string(bytes) + "_ns", value);
  }
}

// Creates both stores and sets up the small-folio regime's store; records the
// filesystem, kernel and regimes in the benchmark context. Returns false (and
// says why) if the lab cannot be set up.
bool SetUpLab() {
  Lab& lab = TheLab();
  lab.dir = BenchDirFromEnv(REGIONSTORE_LAB_BENCH_DEFAULT_DIR);
  if (::mkdir(lab.dir.c_str(), 0700) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "lab_bench: %s\n", Errno("mkdir " + lab.dir).c_str());
    return false;
  }
  Result<FsInfo> fs = Io::Default()->StatFs(lab.dir);
  if (!fs.ok()) {
    std::fprintf(stderr, "lab_bench: %s\n", fs.status().ToString().c_str());
    return false;
  }
  const std::string& fs_name = fs->type_name;
  if (MeasuresNoDisk(*fs)) {
    std::fprintf(stderr,
                 "\n*** WARNING: %s is on %s. Durable numbers mean nothing there (fdatasync and\n"
                 "*** msync(MS_SYNC) reach no disk). Set REGIONSTORE_BENCH_DIR to a folder on a\n"
                 "*** real disk filesystem.\n\n",
                 lab.dir.c_str(), fs_name.c_str());
  }
  struct utsname uts {};
  ::uname(&uts);
  benchmark::AddCustomContext("lab_dir", lab.dir);
  benchmark::AddCustomContext("filesystem", fs_name);
  benchmark::AddCustomContext("kernel", std::string(uts.sysname) + " " + uts.release);
  benchmark::AddCustomContext("folio_regimes", kFolioRegimesText);

  CreateOptions options;
  options.replace_existing = true;
  for (Regime regime : {Regime::kLargeFolios, Regime::kSmallFolios}) {
    if (auto s = CreateLabStore(lab.Path(regime), options); !s.ok()) {
      std::fprintf(stderr, "lab_bench: %s\n", s.ToString().c_str());
      return false;
    }
  }
  auto slice_offset = LabSliceFileOffset(lab.Path(Regime::kLargeFolios));
  if (!slice_offset.ok()) {
    std::fprintf(stderr, "lab_bench: %s\n", slice_offset.status().ToString().c_str());
    return false;
  }
  lab.slice_file_offset = *slice_offset;
  // REGIONSTORE_LAB_STORE_SIZES: MiB sizes, comma-separated (the lab's
  // sweep is 16,256,2048), only with REGIONSTORE_LAB_SWEEPS=1. The files are
  // removed at exit.
  if (const char* sizes = std::getenv("REGIONSTORE_LAB_STORE_SIZES");
      sizes != nullptr && SweepsWanted()) {
    std::string list = sizes;
    for (size_t at = 0; at < list.size();) {
      size_t comma = list.find(',', at);
      if (comma == std::string::npos) comma = list.size();
      const uint64_t mib = std::strtoull(list.substr(at, comma - at).c_str(), nullptr, 10);
      at = comma + 1;
      if (mib < 8) continue;  // the slice needs data offset 2 MiB + 4 MiB
      const std::string path = StoreSizePath(mib * kMiB);
      if (auto s = Store::Create(path, mib * kMiB, options); !s.ok()) {
        std::fprintf(stderr, "lab_bench: %s\n", s.ToString().c_str());
        return false;
      }
      lab.store_size_sweep.push_back(mib * kMiB);
    }
  }
  if (lab.slice_file_offset % kMiB != 0) {
    std::fprintf(stderr, "lab_bench: note: the slice's file offset %llu is not 1 MiB-aligned\n",
                 static_cast<unsigned long long>(lab.slice_file_offset));
  }
  return true;
}

// <prefix>library and <prefix>raw, long-lived on `kept`, the lab's plain syscalls for raw.
void RegisterKeptPair(const std::string& prefix, Arm arm, const Kept& kept) {
  benchmark::RegisterBenchmark((prefix + "library").c_str(), LibraryLongLived, *LibraryMode(arm),
                               kept)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark((prefix + "raw").c_str(), RawLongLived, arm, kept, KeptFix::kNothing)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

void RegisterLab() {
  for (Regime regime : {Regime::kLargeFolios, Regime::kSmallFolios}) {
    for (Arm arm :
         {Arm::kPwrite, Arm::kPwriteFdatasync, Arm::kMsyncSync, Arm::kMsyncAsync, Arm::kNone}) {
      const std::string arm_name = ArmName(arm);
      const std::string regime_name = FolioRegimeName(regime);
      const Kept slice{TheLab().Path(regime), regime, kSliceSize, kSliceOffset};
      auto name = [&](const char* variant, const char* impl) {
        return "lab/" + arm_name + "/" + variant + "/" + impl + "/" + regime_name;
      };
      if (auto mode = LibraryMode(arm)) {
        benchmark::RegisterBenchmark(name("oneshot", "library").c_str(), LibraryOneShot, *mode,
                                     regime)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(name("longlived", "library").c_str(), LibraryLongLived, *mode,
                                     slice)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
      }
      benchmark::RegisterBenchmark(name("oneshot", "raw").c_str(), RawOneShot, arm, regime)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(name("longlived", "raw").c_str(), RawLongLived, arm, slice,
                                   KeptFix::kNothing)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
      if (arm == Arm::kPwrite || arm == Arm::kMsyncAsync || arm == Arm::kNone) {
        // Few iterations: each one's untimed writeback costs more than its
        // timed update.
        if (auto mode = LibraryMode(arm)) {
          benchmark::RegisterBenchmark(name("cleaned", "library").c_str(), LibraryCleaned, *mode,
                                       slice)
              ->UseRealTime()
              ->MinTime(0.05)
              ->Unit(benchmark::kMicrosecond);
        }
        benchmark::RegisterBenchmark(name("cleaned", "raw").c_str(), RawCleaned, arm, slice)
            ->UseRealTime()
            ->MinTime(0.05)
            ->Unit(benchmark::kMicrosecond);
      }
      if (arm == Arm::kMsyncSync) {
        // What removes a kept mapping's fault cost?
        benchmark::RegisterBenchmark(name("longlived", "raw_populate").c_str(), RawLongLived, arm,
                                     slice, KeptFix::kPopulate)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(name("longlived", "raw_populate_reset").c_str(), RawLongLived,
                                     arm, slice, KeptFix::kPopulateAndReset)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  const std::string large = TheLab().Path(Regime::kLargeFolios);
  if (SweepsWanted()) {
    for (Arm arm : {Arm::kPwriteFdatasync, Arm::kMsyncSync, Arm::kMsyncAsync, Arm::kNone}) {
      for (uint64_t size : {uint64_t{4096}, uint64_t{65536}, kMiB, 4 * kMiB}) {
        for (bool unaligned : {false, true}) {
          const std::string prefix = "sweep/" + std::string(ArmName(arm)) + "/" +
                                     std::to_string(size) + "/" +
                                     (unaligned ? "unaligned" : "aligned") + "/";
          RegisterKeptPair(
              prefix, arm,
              {large, Regime::kLargeFolios, size, kSliceOffset + (unaligned ? kUnalignedBy : 0)});
        }
      }
    }
  }
  // The same 1 MiB update on stores of 16 MiB, 256 MiB and 2 GiB: the cost
  // should not grow with the store's size.
  for (uint64_t store_size : TheLab().store_size_sweep) {
    const std::string path = StoreSizePath(store_size);
    for (Arm arm : {Arm::kPwriteFdatasync, Arm::kMsyncSync, Arm::kMsyncAsync, Arm::kNone}) {
      const std::string prefix =
          "storesize/" + std::string(ArmName(arm)) + "/" + std::to_string(store_size) + "/aligned/";
      RegisterKeptPair(prefix, arm, {path, Regime::kLargeFolios, kSliceSize, kSliceOffset});
    }
  }
  benchmark::RegisterBenchmark("lab/open_close/oneshot/library/no_update", OpenCloseLibrary)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("lab/open_close/oneshot/raw/no_update", OpenCloseRaw)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("lab/memcpy/oneshot/raw/no_file", MemcpyFloor)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  for (const int64_t bytes : {int64_t{4096}, static_cast<int64_t>(kSliceSize)}) {
    benchmark::RegisterBenchmark("framework/memcpy", FrameworkMemcpy)
        ->Arg(bytes)
        ->UseRealTime()
        ->Unit(benchmark::kNanosecond);
  }
}

}  // namespace
}  // namespace regionstore::bench

int main(int argc, char** argv) {
  using regionstore::bench::RegisterLab;
  using regionstore::bench::SetUpLab;
  using regionstore::bench::StoreSizePath;
  using regionstore::bench::TheLab;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!SetUpLab()) return 1;
  regionstore::bench::MeasurePlainLoops();
  RegisterLab();
  if (std::string e = regionstore::bench::RegisterPublish(TheLab().dir); !e.empty()) {
    std::fprintf(stderr, "lab_bench: %s\n", e.c_str());
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (uint64_t store_size : TheLab().store_size_sweep) {
    ::unlink(StoreSizePath(store_size).c_str());
  }
  return 0;
}
