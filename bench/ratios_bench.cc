// Section 1 of regionstore_commit_bench: Store::Commit beside the same
// syscalls without the library, per durability mode, at 4 KiB, 64 KiB and
// 1 MiB. raw is the mode's syscalls (or memcpy) on the same store file, at a
// slot of a second region of the same size, writing the payload only.
// Beside them, to show where a commit's time goes: raw rotating over three
// slots, XXH3 of the payload alone, and "same I/O": what a commit writes,
// without the library. The commit is on a store made with Store::Create's
// defaults; the same commit on a protocol 1 store runs in the same rounds.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <xxh_x86dispatch.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commit_bench.h"
#include "lab/die.h"
#include "lab/folio_census.h"
#include "lab/raw_io.h"
#include "lab/realtime_scope.h"

namespace regionstore::bench {
namespace {

// Where the raw arms of one mode and size write: region `region` of the
// same store file, through their own descriptor and (mapped modes) their
// own mapping of the whole file.
struct RawTarget {
  Durability mode;
  int fd;
  std::byte* map;  // null for the durable modes
  RegionEntry region;
};

// The payload only, with the mode's syscalls, at slot 0's payload offset
// (`slots` = 1) or rotating over the slots' payload offsets (`slots` = 3).
Arm RawArm(std::string name, const RawTarget& target, uint64_t size, uint32_t slots) {
  auto payloads = std::make_shared<Payloads>(size);
  auto next_slot = std::make_shared<uint32_t>(0);
  return {std::move(name), [=](uint64_t ops) {
            for (uint64_t i = 0; i < ops; ++i) {
              const std::span<const std::byte> payload = payloads->Next();
              *next_slot = (*next_slot + 1) % slots;
              const uint64_t offset = SlotPayloadOffset(target.region, *next_slot);
              switch (target.mode) {
                case Durability::kNone:
                  std::memcpy(target.map + offset, payload.data(), payload.size());
                  break;
                case Durability::kAsync:
                  std::memcpy(target.map + offset, payload.data(), payload.size());
                  if (::msync(target.map + offset, payload.size(), MS_ASYNC) != 0) {
                    return std::string("msync: ") + std::strerror(errno);
                  }
                  break;
                case Durability::kSync:
                  if (std::string e = WriteOne(target.fd, payload, offset, RWF_DSYNC); !e.empty()) {
                    return e;
                  }
                  break;
                case Durability::kPwriteFdatasync:
                  if (std::string e = PwriteFdatasync(target.fd, payload, offset); !e.empty()) {
                    return e;
                  }
                  break;
              }
            }
            return std::string();
          }};
}

// What a commit writes, without the library, rotating over the three slots:
// mapped modes copy the payload, hash it with XXH3, and copy a 64-byte
// header (kAsync adds msync(MS_ASYNC) of unit + payload); durable modes
// write the 4 KiB header unit and the payload in one pwritev2 (RWF_DSYNC, or
// then fdatasync).
Arm SameIoArm(const RawTarget& target, uint64_t size) {
  auto payloads = std::make_shared<Payloads>(size);
  auto unit = std::make_shared<std::array<std::byte, kHeaderUnitSize>>();
  auto next_slot = std::make_shared<uint32_t>(0);
  return {
      "same I/O", [=](uint64_t ops) {
        for (uint64_t i = 0; i < ops; ++i) {
          const std::span<const std::byte> payload = payloads->Next();
          *next_slot = (*next_slot + 1) % kSlotsPerRegion;
          const uint64_t unit_at = SlotHeaderUnitOffset(target.region, *next_slot);
          const uint64_t payload_at = SlotPayloadOffset(target.region, *next_slot);
          if (!IsDurable(target.mode)) {
            std::memcpy(target.map + payload_at, payload.data(), payload.size());
            std::array<uint64_t, 8> header{};
            header[0] = XXH3_64bits_dispatch(payload.data(), payload.size());
            header[1] = i;
            header[7] = XXH3_64bits_dispatch(header.data(), 56);
            std::memcpy(target.map + unit_at, header.data(), sizeof header);
            if (target.mode == Durability::kAsync &&
                ::msync(target.map + unit_at, kHeaderUnitSize + payload.size(), MS_ASYNC) != 0) {
              return std::string("msync: ") + std::strerror(errno);
            }
            continue;
          }
          std::memcpy(unit->data(), &i, sizeof i);
          const std::array<iovec, 2> parts{
              iovec{unit->data(), unit->size()},
              iovec{const_cast<std::byte*>(payload.data()), payload.size()}};
          const bool dsync = target.mode == Durability::kSync;
          if (std::string e = WriteParts(target.fd, parts, unit_at, dsync ? RWF_DSYNC : 0);
              !e.empty()) {
            return e;
          }
          if (!dsync) {
            if (std::string e = DataSync(target.fd); !e.empty()) return e;
          }
        }
        return std::string();
      }};
}

// XXH3 of the payload alone: the price of G1 (a torn payload is never
// returned as valid), paid by every commit.
Arm ChecksumArm(uint64_t size) {
  auto payloads = std::make_shared<Payloads>(size);
  auto sink = std::make_shared<uint64_t>(0);
  return {"XXH3 only", [=](uint64_t ops) {
            for (uint64_t i = 0; i < ops; ++i) {
              const std::span<const std::byte> payload = payloads->Next();
              *sink += XXH3_64bits_dispatch(payload.data(), payload.size());
            }
            // Keeps the hashing from being optimised away.
            if (*sink == 42) std::fprintf(stderr, " ");
            return std::string();
          }};
}

// kCommit: a commit on a store made with Store::Create's defaults
// (protocol 2: marks and the publication word in the sidecar, so nothing but
// the slot is written), "ours"; kCommitP1: the same commit on a protocol 1
// store, a labelled extra column.
enum RatioArm : size_t { kCommit, kRaw, kRawThreeSlots, kSameIo, kChecksum, kCommitP1, kRatioArms };

struct RatioRow {
  const ModeInfo* mode;
  uint64_t size;
  std::array<double, kRatioArms> median_ns;
  PairedRatio cost;     // commit / raw
  PairedRatio cost_p1;  // protocol 1 commit / raw
  std::array<DevicePerOp, kRatioArms> device;
  std::string page_cache;  // durable 1 MiB rows: the folio census of both regions
  // Mapped modes, the regime the rows above do not see: every operation
  // into pages an untimed fdatasync (the commit: Store::Sync) cleaned and
  // write-protected right before it, commit and raw alike.
  double clean_commit_ns = NAN;
  double clean_raw_ns = NAN;
  PairedRatio clean_cost;
};

// `arm`, one operation at a time, each after `clean` (untimed).
Arm Cleaned(Arm arm, std::function<std::string()> clean) {
  return {arm.name + ", pages cleaned", [arm, clean](uint64_t ops) {
            for (uint64_t i = 0; i < ops; ++i) {
              {
                const UntimedScope untimed;
                if (std::string e = clean(); !e.empty()) return e;
              }
              if (std::string e = arm.batch(1); !e.empty()) return e;
            }
            return std::string();
          }};
}

// Timed batches of the clean-pages arms: each operation also makes an
// untimed fdatasync of a few hundred microseconds.
constexpr double kCleanBatchMs = 3;

std::vector<RatioRow> RunRatios(const Options& options) {
  const std::array<uint64_t, 3> sizes{4 * kKiB, 64 * kKiB, 1 * kMiB};
  std::vector<RatioRow> rows;
  for (const ModeInfo& mode : kModes) {
    // One store per mode, so one mode's dirty pages never reach another
    // mode's barrier.
    std::string path = options.dir;
    path += "/ratio-";
    path += mode.name;
    path += ".rgn";
    std::vector<RegionSpec> regions;
    for (uint64_t size : sizes) {
      regions.push_back({"commit-" + SizeName(size), size});
      regions.push_back({"raw-" + SizeName(size), size});
    }
    CreateStore(path, regions);
    Store store = OpenStore(path);
    const std::string path_p1 = path + "-p1";
    CreateStore(path_p1, regions, false, kProtocol1);
    Store store_p1 = OpenStore(path_p1);
    CheckSlotLayout(store, "commit-4 KiB");
    const Fd fd(path, O_RDWR | O_CLOEXEC);
    const bool durable = IsDurable(mode.mode);
    std::optional<FileMapping> mapping;
    if (!durable) mapping.emplace(fd.get(), 0, store.info().file_size, /*writable=*/true, path);
    // The clean-pages arms get a store of their own: their barriers would
    // clean the other arms' pages.
    const std::string path_clean = path + "-clean";
    std::optional<Store> store_clean;
    std::optional<Fd> fd_clean;
    std::optional<FileMapping> mapping_clean;
    if (!durable) {
      CreateStore(path_clean, regions);
      store_clean.emplace(OpenStore(path_clean));
      fd_clean.emplace(path_clean, O_RDWR | O_CLOEXEC);
      mapping_clean.emplace(fd_clean->get(), 0, store_clean->info().file_size, /*writable=*/true,
                            path_clean);
    }
    for (uint64_t size : sizes) {
      const RawTarget target{mode.mode, fd.get(), durable ? nullptr : mapping->data(),
                             RegionOf(store.info(), "raw-" + SizeName(size))};
      std::vector<Arm> arms(kRatioArms);
      arms[kCommit] = CommitArm("commit", store, "commit-" + SizeName(size), size, mode.mode);
      arms[kRaw] = RawArm("raw", target, size, 1);
      arms[kRawThreeSlots] = RawArm("raw, 3 slots", target, size, kSlotsPerRegion);
      arms[kSameIo] = SameIoArm(target, size);
      arms[kChecksum] = ChecksumArm(size);
      arms[kCommitP1] =
          CommitArm("commit, protocol 1", store_p1, "commit-" + SizeName(size), size, mode.mode);
      std::fprintf(stderr, "  %s %s\n", mode.name, SizeName(size).c_str());
      const RealtimeScope realtime(durable && options.realtime, "regionstore_commit_bench");
      const Rounds rounds = RunInterleaved(
          arms, options.rounds, durable ? options.durable_batch_ms : options.mapped_batch_ms,
          options.device_stat);
      const RoundTimes& times = rounds.ns;
      RatioRow row{&mode,
                   size,
                   {},
                   Paired(times[kCommit], times[kRaw], durable ? &times[kRaw] : nullptr),
                   Paired(times[kCommitP1], times[kRaw], durable ? &times[kRaw] : nullptr),
                   {},
                   {},
                   NAN,
                   NAN,
                   {}};
      for (size_t a = 0; a < kRatioArms; ++a) {
        row.median_ns[a] = Median(times[a]);
        row.device[a] = MedianDevice(rounds.device[a]);
      }
      if (durable && size >= kMiB) {
        for (const char* kind : {"commit-", "raw-"}) {
          const RegionEntry& region = RegionOf(store.info(), kind + SizeName(size));
          row.page_cache += row.page_cache.empty() ? "commit: " : "; raw: ";
          row.page_cache +=
              CensusText(path, region.slots_offset, kSlotsPerRegion * region.slot_stride);
        }
      }
      if (!durable) {
        const RawTarget clean_target{mode.mode, fd_clean->get(), mapping_clean->data(),
                                     RegionOf(store_clean->info(), "raw-" + SizeName(size))};
        std::vector<Arm> clean_arms;
        clean_arms.push_back(
            Cleaned(CommitArm("commit", *store_clean, "commit-" + SizeName(size), size, mode.mode),
                    [&store_clean] {
                      auto synced = store_clean->Sync();
                      return synced.ok() ? std::string() : synced.status().ToString();
                    }));
        clean_arms.push_back(Cleaned(RawArm("raw", clean_target, size, 1),
                                     [fd = fd_clean->get()] { return DataSync(fd); }));
        const Rounds clean =
            RunInterleaved(clean_arms, options.rounds, kCleanBatchMs, options.device_stat);
        row.clean_commit_ns = Median(clean.ns[0]);
        row.clean_raw_ns = Median(clean.ns[1]);
        row.clean_cost = Paired(clean.ns[0], clean.ns[1]);
      }
      rows.push_back(row);
    }
    // The mapped modes leave dirty pages: write them back now, untimed, so
    // the kernel's writeback does not land in a later measurement.
    if (std::string e = DataSync(fd.get()); !e.empty()) Die(e);
    if (std::string e = DataSync(Fd(path_p1, O_RDWR | O_CLOEXEC).get()); !e.empty()) Die(e);
    std::remove(path_p1.c_str());
    if (!durable) {
      if (std::string e = DataSync(fd_clean->get()); !e.empty()) Die(e);
      mapping_clean.reset();
      store_clean.reset();
      std::remove(path_clean.c_str());
      std::remove((path_clean + ".shm").c_str());
    }
  }
  return rows;
}

void PrintRatios(const std::vector<RatioRow>& rows, const Options& options) {
  std::printf("## 1. Commit vs the same syscalls without the library\n\n");
  std::printf(
      "commit: a store made with Store::Create's defaults (protocol %u, the default layout); "
      "protocol 1: the same commit on a protocol 1 store, measured in the same rounds. "
      "%d interleaved rounds per row (batches of ~%.0f ms mapped, ~%.0f ms durable); ops/s "
      "from the median batch. cost = commit time / raw time: the median of the %d per-round "
      "ratios, their range in brackets. Targets: <= 1.10 at 4 KiB, <= 1.15 at 1 MiB. "
      "Durable rows also give the cost over the fast and the slow rounds (raw under or "
      "over 2 ms/op).\n\n",
      kDefaultProtocol, options.rounds, options.mapped_batch_ms, options.durable_batch_ms,
      options.rounds);
  std::printf(
      "| mode | size | commit ops/s | raw ops/s | cost commit/raw | target | met | cost in "
      "fast / slow rounds (rounds) | protocol 1: cost commit/raw |\n");
  std::printf("| --- | --- | ---: | ---: | --- | ---: | --- | --- | --- |\n");
  for (const RatioRow& row : rows) {
    // Targets exist at 4 KiB and 1 MiB only (docs/BENCH-CHECKPOINTS.md).
    const double target = row.size == 4 * kKiB ? 1.10 : row.size == kMiB ? 1.15 : NAN;
    const char* met = std::isnan(target) ? "" : row.cost.median <= target ? "yes" : "**no**";
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.mode->name,
                SizeName(row.size).c_str(), FormatOps(row.median_ns[kCommit]).c_str(),
                FormatOps(row.median_ns[kRaw]).c_str(), FormatRatio(row.cost).c_str(),
                std::isnan(target) ? "–" : Fixed(target, 2).c_str(), met,
                IsDurable(row.mode->mode) ? FormatByState(row.cost).c_str() : "",
                FormatRatio(row.cost_p1).c_str());
  }
  std::printf("\nraw:");
  for (const ModeInfo& mode : kModes) std::printf(" %s = %s;", mode.name, mode.raw);
  std::printf(
      " at slot 0's payload offset of a second region of the same size in the same "
      "store file.\n\n");
  std::printf(
      "Where a commit's time goes, in microseconds per operation (medians, same rounds): "
      "raw; raw rotating over 3 slots as commits do; XXH3 of the payload alone; same I/O = "
      "what a commit writes without the library (mapped: memcpy + XXH3 + 64 B header; "
      "durable: 4 KiB header unit + payload in one pwritev2), 3 slots; commit. Then, for "
      "the durable modes, what the device did per operation: flushes / write requests / KiB "
      "written (medians; the counters are the whole device's); and this thread's CPU time per "
      "operation, user + system (getrusage: sampled at the scheduler tick, so rough). "
      "Protocol 1: the same commit on a protocol 1 store, whose marks and publication word "
      "live in the store file itself.\n\n");
  std::printf(
      "| mode | size | raw | raw, 3 slots | XXH3 only | same I/O | commit | commit, "
      "protocol 1 | device: raw | device: commit | device: protocol 1 | CPU user + sys "
      "us: raw / same I/O / commit |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |\n");
  for (const RatioRow& row : rows) {
    const bool durable = IsDurable(row.mode->mode);
    std::string cpu;
    for (size_t arm : {kRaw, kSameIo, kCommit}) {
      if (!cpu.empty()) cpu += " / ";
      cpu +=
          FormatMicros(row.device[arm].user_ns) + " + " + FormatMicros(row.device[arm].system_ns);
    }
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.mode->name,
                SizeName(row.size).c_str(), FormatMicros(row.median_ns[kRaw]).c_str(),
                FormatMicros(row.median_ns[kRawThreeSlots]).c_str(),
                FormatMicros(row.median_ns[kChecksum]).c_str(),
                FormatMicros(row.median_ns[kSameIo]).c_str(),
                FormatMicros(row.median_ns[kCommit]).c_str(),
                FormatMicros(row.median_ns[kCommitP1]).c_str(),
                durable ? FormatDevice(row.device[kRaw]).c_str() : "",
                durable ? FormatDevice(row.device[kCommit]).c_str() : "",
                durable ? FormatDevice(row.device[kCommitP1]).c_str() : "", cpu.c_str());
  }
  std::printf(
      "\nThe mapped modes in the other regime: before each operation (untimed: its time, CPU "
      "and device writes are taken out), the pages were written back and write-protected "
      "(the commit: Store::Sync; raw: fdatasync), as for a program that commits less often "
      "than the kernel's writeback interval. Batches of ~%.0f ms, the same rounds for both; "
      "raw is the mode's syscalls, as above. docs/BENCHMARKS.md (Commits into clean pages) "
      "has sizes beyond 1 MiB.\n\n",
      kCleanBatchMs);
  std::printf(
      "| mode | size | commit us, pages cleaned | raw us, pages cleaned | cost commit/raw | "
      "commit us, pages dirty (above) |\n| --- | --- | ---: | ---: | --- | ---: |\n");
  for (const RatioRow& row : rows) {
    if (std::isnan(row.clean_commit_ns)) continue;
    std::printf("| %s | %s | %s | %s | %s | %s |\n", row.mode->name, SizeName(row.size).c_str(),
                FormatMicros(row.clean_commit_ns).c_str(), FormatMicros(row.clean_raw_ns).c_str(),
                FormatRatio(row.clean_cost).c_str(), FormatMicros(row.median_ns[kCommit]).c_str());
  }
  std::printf(
      "\nPage cache of the durable stores' 1 MiB regions after the rounds (the commit "
      "region's three slots; the raw region's three slots, slot 0 being raw's):\n\n");
  for (const RatioRow& row : rows) {
    if (!row.page_cache.empty()) {
      std::printf("- %s: %s\n", row.mode->name, row.page_cache.c_str());
    }
  }
  std::printf("\n");
}
nlohmann::json RatiosJson(const std::vector<RatioRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const RatioRow& row : rows) {
    out.push_back({{"arm", row.mode->arm},
                   {"mode", row.mode->name},
                   {"raw", row.mode->raw},
                   {"size", row.size},
                   {"commit_ns", row.median_ns[kCommit]},
                   {"raw_ns", row.median_ns[kRaw]},
                   {"commit_over_raw", RatioJson(row.cost)},
                   {"commit_protocol1_ns", row.median_ns[kCommitP1]},
                   {"protocol1_over_raw", RatioJson(row.cost_p1)},
                   {"commit_device_requests", OrNull(row.device[kCommit].write_requests)},
                   {"commit_device_kib", OrNull(row.device[kCommit].write_kib)},
                   {"protocol1_device_requests", OrNull(row.device[kCommitP1].write_requests)},
                   {"protocol1_device_kib", OrNull(row.device[kCommitP1].write_kib)},
                   {"clean_commit_ns", OrNull(row.clean_commit_ns)},
                   {"clean_raw_ns", OrNull(row.clean_raw_ns)},
                   {"clean_commit_over_raw", RatioJson(row.clean_cost)}});
  }
  return out;
}

}  // namespace

nlohmann::json RunRatiosSection(const Options& options) {
  const std::vector<RatioRow> rows = RunRatios(options);
  PrintRatios(rows, options);
  return RatiosJson(rows);
}

}  // namespace regionstore::bench
