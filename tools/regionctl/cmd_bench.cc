#include "cmd_bench.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "lab/bench_dir.h"
#include "lab/lab.h"
#include "regionstore/checkpoint.h"
#include "regionstore/durability.h"
#include "regionstore/io.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"
#include "signals.h"

namespace regionstore::regionctl {
namespace {

using bench::kKiB;
using bench::kMiB;
// The region lab (lab/lab.h, as the benchmarks run it): a 16 MiB
// store, 1 MiB updates at data offset 2 MiB (a 1 MiB-aligned file offset,
// so an update covers whole large folios).
constexpr uint64_t kLabDataSize = bench::kLabStoreSize;
constexpr uint64_t kUpdateSize = bench::kLabSliceSize;
constexpr uint64_t kSmallSize = 4 * kKiB;
constexpr uint64_t kLabOffset = bench::kLabSliceOffset;
// The commit arms use a store of their own with one region this large.
constexpr uint64_t kCommitCapacity = 1 * kMiB;
constexpr const char* kRegionName = "bench";
// The batch arms use a third store, with a batch log and this many regions
// of this capacity (compact slots, as kAuto lays them out): batches of 16 x
// 4 KiB and 4 x 64 KiB commit to its first regions.
constexpr uint32_t kBatchRegions = 16;
constexpr uint64_t kBatchCapacity = 64 * kKiB;
// Each arm's time is split into this many batches, interleaved with the
// other arms' batches so that a noisy moment hits every arm alike; the
// figure reported is the median batch.
constexpr int kBatches = 5;
constexpr uint64_t kMaxUpdatesPerBatch = 100000;
constexpr double kDefaultSecondsPerArm = 0.6;

using Clock = std::chrono::steady_clock;

struct BenchArgs {
  std::string dir = ".";
  bool json = false;
  double seconds_per_arm = kDefaultSecondsPerArm;
};

enum class ArmKind {
  kRawPwrite,  // pwrite through a plain descriptor, no flush, no library mode
  kWrite,      // Store::Write at the lab offset
  kCommit,     // Store::Commit to the checkpoint region
  kBatch,      // Store::CommitBatch of `regions` regions of the batch store
};

struct Arm {
  ArmKind kind = ArmKind::kWrite;
  Durability durability = Durability::kNone;  // unused by kRawPwrite
  bool oneshot = false;  // open, update, close per update; else one open handle per batch
  uint64_t size = 0;     // bytes per region (kBatch) or per update
  uint32_t regions = 1;  // regions per update: kBatch commits that many at once
  std::vector<double> batch_mib_per_s;
  double mib_per_s = 0;  // the median batch
  // Long-lived, and before each update (untimed) the file's pages written
  // back: the regime of a program that updates less often than the
  // kernel's writeback interval. Not durable arms only.
  bool cleaned = false;
};

// The document's schema_version: 2 since the cleaned variant (a closed
// list gained a value; docs/REGIONCTL.md, the rule for readers).
constexpr int kBenchSchemaVersion = 2;

// The names of the README's durability table.
std::string ArmName(const Arm& arm) {
  if (arm.kind == ArmKind::kRawPwrite) return "pwrite";
  if (arm.kind == ArmKind::kCommit || arm.kind == ArmKind::kBatch) {
    std::string name = arm.kind == ArmKind::kBatch ? "commit_batch_" : "commit_";
    for (const char letter : DurabilityName(arm.durability)) name += letter == '-' ? '_' : letter;
    return name;
  }
  switch (arm.durability) {
    case Durability::kNone:
      return "none";
    case Durability::kAsync:
      return "msync_async";
    case Durability::kSync:
      return "msync_sync";
    case Durability::kPwriteFdatasync:
      return "pwrite_fdatasync";
  }
  return "unknown";
}

const char* VariantName(const Arm& arm) {
  return arm.cleaned ? "cleaned" : arm.oneshot ? "oneshot" : "longlived";
}

// Survives a power loss once the call returns (if the device honours flushes).
bool IsDurable(const Arm& arm) {
  return arm.kind != ArmKind::kRawPwrite &&
         (arm.durability == Durability::kSync || arm.durability == Durability::kPwriteFdatasync);
}

// Bytes one update writes (a batch: every member's).
uint64_t UpdateBytes(const Arm& arm) { return arm.size * arm.regions; }

// Updates per second: a batch is one.
double OpsPerSecond(const Arm& arm) {
  return arm.mib_per_s * static_cast<double>(kMiB) / static_cast<double>(UpdateBytes(arm));
}

std::vector<Arm> MakeArms() {
  constexpr Durability kWriteModes[] = {Durability::kPwriteFdatasync, Durability::kSync,
                                        Durability::kAsync, Durability::kNone};
  std::vector<Arm> arms;
  // The lab: every arm at 1 MiB, long-lived and one-shot.
  for (const bool oneshot : {false, true}) {
    arms.push_back({ArmKind::kRawPwrite, Durability::kNone, oneshot, kUpdateSize, 1, {}, 0});
  }
  for (const Durability durability : kWriteModes) {
    for (const bool oneshot : {false, true}) {
      arms.push_back({ArmKind::kWrite, durability, oneshot, kUpdateSize, 1, {}, 0});
    }
  }
  // Small raw writes at the same offset, long-lived.
  arms.push_back({ArmKind::kRawPwrite, Durability::kNone, false, kSmallSize, 1, {}, 0});
  for (const Durability durability : kWriteModes) {
    arms.push_back({ArmKind::kWrite, durability, false, kSmallSize, 1, {}, 0});
  }
  // Commits, long-lived only: a writer's open recovers the region and calls
  // fdatasync, so a one-shot commit would mostly measure the open.
  for (const uint64_t size : {kSmallSize, kUpdateSize}) {
    for (const Durability durability : kWriteModes) {
      arms.push_back({ArmKind::kCommit, durability, false, size, 1, {}, 0});
    }
  }
  // The not durable 1 MiB arms again, into pages written back before each
  // update: a store through the mapping takes a fault per page there.
  arms.push_back({ArmKind::kRawPwrite, Durability::kNone, false, kUpdateSize, 1, {}, 0, true});
  for (const ArmKind kind : {ArmKind::kWrite, ArmKind::kCommit}) {
    for (const Durability durability : {Durability::kAsync, Durability::kNone}) {
      arms.push_back({kind, durability, false, kUpdateSize, 1, {}, 0, true});
    }
  }
  // Batches, durable modes only: one barrier for every member is the point.
  for (const auto& [regions, size] : {std::pair<uint32_t, uint64_t>{kBatchRegions, kSmallSize},
                                      std::pair<uint32_t, uint64_t>{4, kBatchCapacity}}) {
    for (const Durability durability : {Durability::kPwriteFdatasync, Durability::kSync}) {
      arms.push_back({ArmKind::kBatch, durability, false, size, regions, {}, 0});
    }
  }
  return arms;
}

// The update's bytes: random once, then the update counter stamped into
// every 4 KiB page, so each update writes content the file does not hold.
class Payload {
 public:
  Status Fill() {
    bytes_.resize(kUpdateSize);
    return Io::Default()->FillRandom(bytes_);
  }
  std::span<const std::byte> Next(uint64_t size) {
    ++counter_;
    for (uint64_t page = 0; page < size; page += kSmallSize) {
      for (size_t index = 0; index < sizeof(counter_); ++index) {
        bytes_[page + index] = static_cast<std::byte>((counter_ >> (8 * index)) & 0xff);
      }
    }
    return std::span<const std::byte>(bytes_.data(), size);
  }

 private:
  std::vector<std::byte> bytes_;
  uint64_t counter_ = 0;
};

struct Batch {
  uint64_t updates = 0;
  double seconds = 0;
};

// Runs `update` until `budget_seconds` have passed or `max_updates` ran (at
// least once), timing the whole loop but what `clean` takes before each
// update (the budget counts it too, so a batch's length stays bounded).
template <typename Update, typename Clean>
Result<Batch> TimeBatch(double budget_seconds, uint64_t max_updates, Update&& update,
                        Clean&& clean) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(budget_seconds));
  Clock::time_point now = start;
  Clock::duration untimed{};
  Batch batch;
  do {
    const Clock::time_point clean_start = Clock::now();
    if (Status cleaned = clean(); !cleaned.ok()) return cleaned;
    untimed += Clock::now() - clean_start;
    Status status = update();
    if (!status.ok()) return status;
    ++batch.updates;
    now = Clock::now();
  } while (batch.updates < max_updates && now < deadline);
  // A clock that did not move still yields a finite, positive rate.
  batch.seconds = std::max(std::chrono::duration<double>(now - start - untimed).count(), 1e-9);
  return batch;
}

template <typename Update>
Result<Batch> TimeBatch(double budget_seconds, uint64_t max_updates, Update&& update) {
  return TimeBatch(budget_seconds, max_updates, std::forward<Update>(update),
                   [] { return Status::Ok(); });
}

// What a cleaned arm runs before each update: a whole-file barrier, which
// writes the pages back and write-protects them; nothing for other arms.
auto CleanBy(const Arm& arm, Store& store) {
  return [cleaned = arm.cleaned, &store]() -> Status {
    if (!cleaned) return Status::Ok();
    return store.Sync().status();
  };
}

std::string BatchRegionName(uint32_t index) {
  std::string name = "bench-";
  name += std::to_string(index);
  return name;
}

class LabRunner {
 public:
  LabRunner(std::string lab_path, uint64_t lab_file_offset, std::string commit_path,
            std::string batch_path, Payload& payload)
      : lab_path_(std::move(lab_path)),
        lab_file_offset_(lab_file_offset),
        commit_path_(std::move(commit_path)),
        batch_path_(std::move(batch_path)),
        payload_(payload) {}

  // One batch of `arm`. Opening the long-lived handle is outside the timing;
  // a one-shot update's open and close are inside it.
  Result<Batch> Run(const Arm& arm, double budget_seconds, uint64_t max_updates) {
    switch (arm.kind) {
      case ArmKind::kRawPwrite:
        return RunRawPwrite(arm, budget_seconds, max_updates);
      case ArmKind::kWrite:
        return RunWrite(arm, budget_seconds, max_updates);
      case ArmKind::kCommit:
        return RunCommit(arm, budget_seconds, max_updates);
      case ArmKind::kBatch:
        return RunBatch(arm, budget_seconds, max_updates);
    }
    return Status::Error(StatusCode::kInvalidArgument, "bench", lab_path_, "unknown arm");
  }

 private:
  Result<Batch> RunRawPwrite(const Arm& arm, double budget_seconds, uint64_t max_updates) {
    // The bench made the lab file itself: a symbolic link there was planted.
    Io* io = Io::Default();
    if (arm.oneshot) {
      return TimeBatch(budget_seconds, max_updates, [&]() -> Status {
        Result<std::unique_ptr<File>> file =
            io->Open(lab_path_, OpenMode::kReadWrite, SymlinkPolicy::kRefuse);
        if (!file.ok()) return file.status();
        return (*file)->WriteAt(lab_file_offset_, payload_.Next(arm.size));
      });
    }
    Result<std::unique_ptr<File>> file =
        io->Open(lab_path_, OpenMode::kReadWrite, SymlinkPolicy::kRefuse);
    if (!file.ok()) return file.status();
    return TimeBatch(
        budget_seconds, max_updates,
        [&]() -> Status { return (*file)->WriteAt(lab_file_offset_, payload_.Next(arm.size)); },
        [&]() -> Status { return arm.cleaned ? (*file)->DataSync() : Status::Ok(); });
  }

  Result<Batch> RunWrite(const Arm& arm, double budget_seconds, uint64_t max_updates) {
    if (arm.oneshot) {
      return TimeBatch(budget_seconds, max_updates, [&]() -> Status {
        Result<Store> store = Store::Open(lab_path_, OpenMode::kReadWrite);
        if (!store.ok()) return store.status();
        return store->Write(kLabOffset, payload_.Next(arm.size), arm.durability);
      });
    }
    Result<Store> store = Store::Open(lab_path_, OpenMode::kReadWrite);
    if (!store.ok()) return store.status();
    return TimeBatch(
        budget_seconds, max_updates,
        [&]() -> Status {
          return store->Write(kLabOffset, payload_.Next(arm.size), arm.durability);
        },
        CleanBy(arm, *store));
  }

  Result<Batch> RunCommit(const Arm& arm, double budget_seconds, uint64_t max_updates) {
    Result<Store> store = Store::Open(commit_path_, OpenMode::kReadWrite);
    if (!store.ok()) return store.status();
    return TimeBatch(
        budget_seconds, max_updates,
        [&]() -> Status {
          Result<uint64_t> generation =
              store->Commit(kRegionName, payload_.Next(arm.size), arm.durability);
          return generation.status();
        },
        CleanBy(arm, *store));
  }

  // Every member gets the update's bytes (new ones per batch).
  Result<Batch> RunBatch(const Arm& arm, double budget_seconds, uint64_t max_updates) {
    Result<Store> store = Store::Open(batch_path_, OpenMode::kReadWrite);
    if (!store.ok()) return store.status();
    std::vector<std::string> names;
    for (uint32_t i = 0; i < arm.regions; ++i) names.push_back(BatchRegionName(i));
    std::vector<std::span<const std::byte>> pieces(arm.regions);
    std::vector<BatchMember> members(arm.regions);
    return TimeBatch(budget_seconds, max_updates, [&]() -> Status {
      const std::span<const std::byte> bytes = payload_.Next(arm.size);
      for (uint32_t i = 0; i < arm.regions; ++i) {
        pieces[i] = bytes;
        members[i] = {names[i], PayloadPieces(&pieces[i], 1)};
      }
      return store->CommitBatch(members, arm.durability).status();
    });
  }

  std::string lab_path_;
  uint64_t lab_file_offset_;
  std::string commit_path_;
  std::string batch_path_;
  Payload& payload_;
};

// Removes the files it is given when it goes out of scope, so a failed run
// leaves nothing behind either; Finish() removes them and reports a failure.
class CreatedFiles {
 public:
  CreatedFiles() = default;
  CreatedFiles(const CreatedFiles&) = delete;
  CreatedFiles& operator=(const CreatedFiles&) = delete;
  ~CreatedFiles() {
    for (const std::string& path : paths_) {
      ForgetToRemoveOnSignal(path);
      (void)Io::Default()->Remove(path);
    }
  }
  // Creates the store at `path` with `create` (which calls Store::Create),
  // and removes it and its sidecar (SidecarPath: a protocol 2 store's writer
  // makes one) at the end; also if a SIGINT, SIGTERM or SIGHUP ends the
  // bench, from before the create (the name appears at its rename, before
  // its directory fsync returns). The names hold the pid: no one else's files.
  template <typename MakeStore>
  Status Create(const std::string& path, MakeStore&& create) {
    const std::string sidecar = SidecarPath(path);
    static_cast<void>(RememberToRemoveOnSignal(path));
    static_cast<void>(RememberToRemoveOnSignal(sidecar));
    Status made = create(path);
    if (!made.ok()) {
      ForgetToRemoveOnSignal(path);
      ForgetToRemoveOnSignal(sidecar);
      return made;
    }
    paths_.push_back(path);
    paths_.push_back(sidecar);
    return Status::Ok();
  }
  Status Finish() {
    Status first_failure;
    for (const std::string& path : paths_) {
      ForgetToRemoveOnSignal(path);
      Status removed = Io::Default()->Remove(path);
      // A protocol 1 store has no sidecar.
      if (removed.code() == StatusCode::kNotFound) continue;
      if (!removed.ok() && first_failure.ok()) first_failure = removed;
    }
    paths_.clear();
    return first_failure;
  }

 private:
  std::vector<std::string> paths_;
};

std::string JoinPath(const std::string& dir, const std::string& name) {
  std::string path = dir;
  if (!path.empty() && path.back() != '/') path += '/';
  path += name;
  return path;
}

std::string FormatRate(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

// "msync_sync (longlived), 512.3 MiB/s, 512 ops/s".
std::string DescribeArm(const Arm& arm) {
  std::string text = ArmName(arm);
  text += " (";
  text += VariantName(arm);
  text += "), ";
  text += FormatRate(arm.mib_per_s);
  text += " MiB/s, ";
  char ops[32];
  std::snprintf(ops, sizeof(ops), "%.0f", OpsPerSecond(arm));
  text += ops;
  text += " ops/s";
  return text;
}

// The fastest arm of `size` that is (or is not) durable, in the cleaned
// regime or not. Only arms a --durability selects: the raw pwrite arm is the
// floor, not a mode.
const Arm* Fastest(const std::vector<Arm>& arms, uint64_t size, bool durable, bool cleaned) {
  const Arm* best = nullptr;
  for (const Arm& arm : arms) {
    if (arm.kind == ArmKind::kRawPwrite || arm.kind == ArmKind::kBatch) continue;
    if (arm.size != size || IsDurable(arm) != durable || arm.cleaned != cleaned) continue;
    if (best == nullptr || arm.mib_per_s > best->mib_per_s) best = &arm;
  }
  return best;
}

void PrintTable(const std::vector<Arm>& arms) {
  std::printf("%-30s %-10s %7s %8s %10s %11s  %s\n", "arm", "variant", "regions", "size", "MiB/s",
              "ops/s", "survives power loss");
  for (const Arm& arm : arms) {
    std::printf("%-30s %-10s %7u %8s %10.1f %11.0f  %s\n", ArmName(arm).c_str(), VariantName(arm),
                arm.regions, HumanBytes(arm.size).c_str(), arm.mib_per_s, OpsPerSecond(arm),
                IsDurable(arm) ? "yes" : "no");
  }
  std::printf(
      "\nMedian of %d interleaved batches per arm. longlived: one open handle per batch;\n"
      "oneshot: open, write, close per update (the lab's way). Durable arms survive power\n"
      "loss once the call returns, if the device honours flushes; all survive kill -9.\n"
      "commit_* arms are all-or-nothing; raw writes can be torn by a crash. A commit_batch_*\n"
      "arm commits that many regions of that size as one batch with one barrier: its ops/s\n"
      "counts batches, its MiB/s every member's bytes. The lab store's pages entered the page\n"
      "cache through Store::Create's large pwrites (large folios where the filesystem uses\n"
      "them; sync drops the range's page tables after each msync so the next write maps\n"
      "whole folios: docs/BENCH-LAB.md). cleaned: one open handle, and before each update,\n"
      "untimed, the file's pages written back (Store::Sync; raw: fdatasync), as in a program\n"
      "that updates less often than the kernel writes dirty pages back (30 s).\n\n",
      kBatches);
  const struct {
    const char* label;
    uint64_t size;
    bool durable;
    bool cleaned;
  } picks[] = {
      {"durable, small updates (4 KiB)", kSmallSize, true, false},
      {"durable, large updates (1 MiB)", kUpdateSize, true, false},
      {"undurable, pages written back between updates (1 MiB)", kUpdateSize, false, true},
      {"undurable (1 MiB; survives kill -9, not power loss)", kUpdateSize, false, false},
  };
  for (const auto& pick : picks) {
    const Arm* best = Fastest(arms, pick.size, pick.durable, pick.cleaned);
    if (best == nullptr) continue;
    std::printf("recommendation: %s: %s\n", pick.label, DescribeArm(*best).c_str());
  }
}

void PrintJson(const std::vector<Arm>& arms, const std::string& filesystem,
               const std::string& kernel) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const Arm& arm : arms) {
    results.push_back({{"arm", ArmName(arm)},
                       {"variant", VariantName(arm)},
                       {"regions", arm.regions},
                       {"size", arm.size},
                       {"mib_per_s", arm.mib_per_s},
                       {"ops_per_s", OpsPerSecond(arm)}});
  }
  const nlohmann::ordered_json document = {
      {"schema_version", kBenchSchemaVersion},
      {"filesystem", filesystem},
      {"kernel", kernel},
      {"store_size", kLabDataSize},
      {"update_size", kUpdateSize},
      {"offset", kLabOffset},
      {"results", std::move(results)},
  };
  std::cout << document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
            << '\n';
}

Status RunBench(const BenchArgs& args) {
  Io* io = Io::Default();
  Result<FileStat> dir_stat = io->StatPath(args.dir);
  if (!dir_stat.ok()) return dir_stat.status();
  if (!dir_stat->is_directory) {
    return Status::Error(StatusCode::kNotFound, "bench", args.dir, "not a directory");
  }
  Result<FsInfo> fs = io->StatFs(args.dir);
  if (!fs.ok()) return fs.status();
  if (bench::MeasuresNoDisk(*fs)) {
    std::cerr << "regionctl: warning: " << QuoteName(args.dir) << " is on " << fs->type_name
              << ": durable modes reach no disk there and their figures mean nothing; use"
                 " --dir on a disk filesystem\n";
  }
  const std::string kernel = bench::KernelRelease();

  Payload payload;
  Status filled = payload.Fill();
  if (!filled.ok()) return filled;

  std::string stem = "regionctl-bench-";
  stem += std::to_string(::getpid());
  const std::string lab_path = JoinPath(args.dir, stem + "-lab.rs");
  const std::string commit_path = JoinPath(args.dir, stem + "-commit.rs");
  const std::string batch_path = JoinPath(args.dir, stem + "-batch.rs");
  CreatedFiles created;
  CreateOptions options;
  std::vector<std::string> warnings;
  options.warnings = &warnings;
  Status made = created.Create(
      lab_path, [&](const std::string& path) { return bench::CreateLabStore(path, options); });
  if (!made.ok()) return made;
  options.checkpoints = {CheckpointSpec{kRegionName, kCommitCapacity}};
  made = created.Create(commit_path,
                        [&](const std::string& path) { return Store::Create(path, 0, options); });
  if (!made.ok()) return made;
  options.checkpoints.clear();
  for (uint32_t i = 0; i < kBatchRegions; ++i) {
    options.checkpoints.push_back(CheckpointSpec{BatchRegionName(i), kBatchCapacity});
  }
  options.batch_log = true;
  made = created.Create(batch_path,
                        [&](const std::string& path) { return Store::Create(path, 0, options); });
  if (!made.ok()) return made;
  // Each warning once (both stores are in the same directory).
  std::sort(warnings.begin(), warnings.end());
  warnings.erase(std::unique(warnings.begin(), warnings.end()), warnings.end());
  for (const std::string& warning : warnings) {
    std::cerr << "regionctl: warning: " << warning << '\n';
  }

  Result<uint64_t> lab_file_offset = bench::LabSliceFileOffset(lab_path);
  if (!lab_file_offset.ok()) return lab_file_offset.status();

  std::vector<Arm> arms = MakeArms();
  if (!args.json) {
    std::printf("directory %s (%s), kernel %s\n", QuoteName(args.dir).c_str(),
                fs->type_name.c_str(), kernel.c_str());
    std::printf(
        "lab: %s store, %s updates at data offset %s; commits to a %s checkpoint region;\n"
        "batches of %u x %s and 4 x %s\n"
        "running %zu arms, %d batches each, about %.1f s ...\n\n",
        HumanBytes(kLabDataSize).c_str(), HumanBytes(kUpdateSize).c_str(),
        HumanBytes(kLabOffset).c_str(), HumanBytes(kCommitCapacity).c_str(), kBatchRegions,
        HumanBytes(kSmallSize).c_str(), HumanBytes(kBatchCapacity).c_str(), arms.size(), kBatches,
        static_cast<double>(arms.size()) * args.seconds_per_arm);
    std::fflush(stdout);
  }

  LabRunner runner(lab_path, *lab_file_offset, commit_path, batch_path, payload);
  // One untimed update per arm first: page cache, mappings, first commits.
  for (const Arm& arm : arms) {
    Result<Batch> warmup = runner.Run(arm, 0, 1);
    if (!warmup.ok()) return warmup.status();
  }
  const double batch_seconds = args.seconds_per_arm / kBatches;
  for (int round = 0; round < kBatches; ++round) {
    for (Arm& arm : arms) {
      Result<Batch> batch = runner.Run(arm, batch_seconds, kMaxUpdatesPerBatch);
      if (!batch.ok()) return batch.status();
      const double bytes =
          static_cast<double>(batch->updates) * static_cast<double>(UpdateBytes(arm));
      arm.batch_mib_per_s.push_back(bytes / static_cast<double>(kMiB) / batch->seconds);
    }
  }
  for (Arm& arm : arms) {
    std::vector<double> rates = arm.batch_mib_per_s;
    std::sort(rates.begin(), rates.end());
    arm.mib_per_s = rates[rates.size() / 2];
  }
  Status removed = created.Finish();
  if (!removed.ok()) return removed;

  if (args.json) {
    PrintJson(arms, fs->type_name, kernel);
  } else {
    PrintTable(arms);
  }
  return Status::Ok();
}

}  // namespace

void SetupBench(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* command = AddCommand(
      app, "bench",
      "Measure every durability mode on this disk (the region lab, ~18 s) and recommend",
      "Creates a 16 MiB store, a store with a 1 MiB checkpoint region and a store with a\n"
      "batch log and 16 regions of 64 KiB in DIR, times 1 MiB updates at data offset 2 MiB\n"
      "in each arm (pwrite, pwrite_fdatasync, msync_sync, msync_async, none; longlived and\n"
      "oneshot), 4 KiB updates, commits of 4 KiB and 1 MiB (commit_none, commit_async,\n"
      "commit_sync, commit_pwrite_fdatasync) and batch commits of 16 x 4 KiB and 4 x 64 KiB\n"
      "(commit_batch_sync, commit_batch_pwrite_fdatasync); the not durable 1 MiB arms also\n"
      "cleaned (the pages written back before each update, untimed); then removes the files.\n"
      "Run it on the disk your stores will live on: on tmpfs or overlay durable figures mean\n"
      "nothing. JSON keys (docs/schemas/regionctl-bench.schema.json): schema_version (2),\n"
      "filesystem, kernel, store_size, update_size, offset, results: a list of\n"
      "{arm, variant (oneshot|longlived|cleaned), regions (1, or a batch's members), size\n"
      "(bytes per region), mib_per_s (every member's bytes), ops_per_s (updates; a batch is\n"
      "one)}.\n"
      "Example:\n"
      "  regionctl bench --dir /var/lib/myapp\n"
      "  regionctl bench --json --seconds 0.05   # a quick smoke run");
  command->add_option("--dir", args->dir, "Directory to benchmark in (default: the current one)")
      ->type_name("DIR");
  command->add_flag("--json", args->json, "Print one JSON object instead of a table");
  command
      ->add_option("--seconds", args->seconds_per_arm,
                   "Seconds per arm, in 5 interleaved batches (0.005: a quick, noisy run)")
      ->type_name("S")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // CLI::Range lets NaN through (every comparison with it is false).
            double seconds = 0;
            try {
              seconds = std::stod(text);
            } catch (const std::exception&) {
              return "'" + text + "' is not a number of seconds";
            }
            if (!std::isfinite(seconds) || seconds < 0.0001 || seconds > 60.0) {
              return "--seconds must be a number from 0.0001 to 60, not '" + text + "'";
            }
            return {};
          },
          "0.0001..60", "seconds"));
  command->callback([args, &outcome] { outcome = RunBench(*args); });
}

}  // namespace regionstore::regionctl
