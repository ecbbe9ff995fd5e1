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
//  6. batches (batches_bench.cc): CommitBatch of 16 x 4 KiB and 4 x 64 KiB in
//     both durable modes, beside LMDB and SQLite doing the same in one
//     transaction (when built), the device floor (the pieces pwritten to a
//     plain file, one fdatasync) and N single durable commits; bytes per
//     batch counted through the io seam.
//  7. working in place (in_place_bench.cc): commits filled in place against
//     copying commits, and writes through a MutableView + Flush against
//     Write, at 4 KiB, 64 KiB, 1 MiB and 16 MiB in every mode.
//  8. readers that wait (wait_bench.cc): what waking waiters costs a kNone
//     commit, and the wake-up latency of a reader in another process
//     (WaitForNewer) beside readers polling Load every 1 ms and 100 µs.
// The folio census reads /proc/kpageflags, so it needs root; without it the
// tables say "unknown".
//
// Files go to $REGIONSTORE_BENCH_DIR, default a folder under the build
// directory. Put it on the disk you want to measure: tmpfs or overlayfs
// measures no device and gets a loud warning.
//
// Usage: regionstore_commit_bench [--quick] [--realtime] [--rounds=N]
//                                 [--only=ratio|peers|folios|open|compact|many|batches|inplace|wait]
//                                 [--json=FILE] [--open-mib=N] [--open-rounds=N]
//                                 [--open-kills=N] [--many-regions=N]
// --json writes sections 1, 2, 4, 5, 6, 7 and 8's medians and ratios to FILE,
// for bench/report.py (which reads sections 1, 2, 4, 6 and 8).
//
// "ours", in every section, is a store made with Store::Create's defaults
// (protocol 2 and its journal; the default slot layout unless the section
// names one); protocol 1 runs beside it where it is measured, labelled so.
//
// Files: this one parses the options and runs the sections; each section is
// a file of its own (ratios_bench.cc, peers_bench.cc, folios_bench.cc,
// open_bench.cc, layouts_bench.cc, batches_bench.cc, in_place_bench.cc), on the stores and arms of
// commit_stores.cc (commit_bench.h) and the machinery of lab/.
#include "commit_bench.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "lab/bench_dir.h"
#include "lab/die.h"
#include "lab/flags.h"
#include "open_bench.h"
#include "regionstore/io.h"

#ifndef REGIONSTORE_COMMIT_BENCH_DEFAULT_DIR
#define REGIONSTORE_COMMIT_BENCH_DEFAULT_DIR "commit-bench-files"
#endif

namespace regionstore::bench {
namespace {

// --------------------------------------------------------------------------
// Options and the bench directory

// True when --only names `section`, or there was no --only.
bool Runs(const Options& options, std::string_view section) {
  return options.only.empty() ||
         std::find(options.only.begin(), options.only.end(), section) != options.only.end();
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  CommonFlags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (ParseCommonFlag(arg, flags)) {
      continue;
    } else if (arg.starts_with("--only=")) {
      static constexpr std::string_view kSections[] = {
          "ratio", "peers", "folios", "open", "compact", "many", "batches", "inplace", "wait"};
      std::string_view list = arg.substr(7);
      while (true) {
        const size_t comma = list.find(',');
        const std::string_view section = list.substr(0, comma);
        if (std::find(std::begin(kSections), std::end(kSections), section) == std::end(kSections)) {
          Die("--only takes a comma-separated list of ratio, peers, folios, open, compact, many "
              "(section 5b alone), batches, inplace and wait");
        }
        options.only.emplace_back(section);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
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
          "                                "
          "[--only=ratio|peers|folios|open|compact|many|batches|inplace|wait]\n"
          "                                [--json=FILE] [--open-mib=N] [--open-rounds=N]\n"
          "                                [--open-kills=N] [--many-regions=N]\n"
          "  files go to $REGIONSTORE_BENCH_DIR (default %s)\n"
          "  --quick: 5 short rounds per measurement, well under a minute\n"
          "  --realtime: run the durable arms under SCHED_FIFO (root), so that on busy CPUs\n"
          "    each wait for I/O does not also wait for a scheduler tick\n"
          "  --rounds=N: interleaved rounds per measurement (default 31, --quick 5)\n"
          "  --json=FILE: also write the commit, peer, open and batch medians and ratios to FILE\n"
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
  options.quick = flags.quick;
  options.realtime = flags.realtime;
  options.rounds = flags.rounds != 0 ? flags.rounds : options.quick ? 5 : 31;
  if (options.open_rounds == 0) options.open_rounds = options.quick ? 21 : 51;
  if (options.open_kills < 0) options.open_kills = options.quick ? 10 : 20;
  options.mapped_batch_ms = options.quick ? 5 : 20;
  options.durable_batch_ms = options.quick ? 15 : 40;
  options.peer_batch_ms = options.quick ? 20 : 60;
  options.dir = BenchDirFromEnv(REGIONSTORE_COMMIT_BENCH_DEFAULT_DIR);
  return options;
}

// Creates the directory and says what it sits on (Io::StatFs); warns loudly
// when that is memory rather than a disk.
std::string PrepareDirectory(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) Die("cannot create " + dir + ": " + error.message());
  Result<FsInfo> fs = Io::Default()->StatFs(dir);
  if (!fs.ok()) Die(fs.status().ToString());
  const std::string& name = fs->type_name;
  if (MeasuresNoDisk(*fs)) {
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

void WriteJson(const std::string& path, const nlohmann::json& doc) {
  std::ofstream out(path, std::ios::trunc);
  out << doc.dump(2) << "\n";
  out.close();
  if (!out) Die("cannot write --json file '" + path + "'");
}

}  // namespace
}  // namespace regionstore::bench

int main(int argc, char** argv) {
  using namespace regionstore::bench;
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
                        // What every table calls "ours": a store made with
                        // Store::Create's defaults, in this protocol.
                        {"ours_protocol", kDefaultProtocol},
                        {"commits", nlohmann::json::array()},
                        {"peers", nullptr},
                        {"open", nullptr},
                        {"layouts", nullptr},
                        {"many_regions", nullptr},
                        {"batches", nullptr},
                        {"in_place", nullptr},
                        {"wait", nullptr}};
  if (Runs(options, "ratio")) {
    std::fprintf(stderr, "section 1: commit vs raw\n");
    doc["commits"] = RunRatiosSection(options);
    std::fflush(stdout);
  }
  if (Runs(options, "peers")) {
#ifdef REGIONSTORE_BENCH_PEERS
    std::fprintf(stderr, "section 2: peers\n");
    doc["peers"] = RunPeersSection(options);
#else
    std::printf(
        "## 2. Peers\n\nNot built: LMDB and SQLite development files were not found "
        "when this was configured (Debian: liblmdb-dev, libsqlite3-dev).\n\n");
#endif
    std::fflush(stdout);
  }
  if (Runs(options, "folios")) {
    std::fprintf(stderr, "section 3: folios\n");
    RunFoliosSection(options);
    std::fflush(stdout);
  }
  if (Runs(options, "open")) {
    std::fprintf(stderr, "section 4: writer open\n");
    OpenBenchOptions open;
    open.dir = options.dir;
    open.big_bytes = options.open_mib * kMiB;
    open.rounds = options.open_rounds;
    open.kill_trials = options.open_kills;
    open.realtime = options.realtime;
    doc["open"] = RunOpenBench(open);
    std::fflush(stdout);
  }
  if (Runs(options, "compact") || Runs(options, "many")) {
    std::fprintf(stderr, "section 5: compact slots\n");
    if (Runs(options, "compact")) {
      doc["layouts"] = RunLayoutsSection(options);
      std::fflush(stdout);
    }
    doc["many_regions"] = RunManyRegionsSection(options);
    std::fflush(stdout);
  }
  if (Runs(options, "batches")) {
    std::fprintf(stderr, "section 6: batches\n");
    doc["batches"] = RunBatchesSection(options);
    std::fflush(stdout);
  }
  if (Runs(options, "inplace")) {
    std::fprintf(stderr, "section 7: working in place\n");
    doc["in_place"] = RunInPlaceSection(options);
    std::fflush(stdout);
  }
  if (Runs(options, "wait")) {
    std::fprintf(stderr, "section 8: readers that wait\n");
    doc["wait"] = RunWaitSection(options);
    std::fflush(stdout);
  }
  if (!options.json_path.empty()) WriteJson(options.json_path, doc);
  PrintProtocolSummary(doc);
  std::printf("Run time: %.0f s.\n", Seconds(Clock::now() - started));
  return 0;
}
