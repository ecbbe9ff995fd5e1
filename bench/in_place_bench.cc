// Section 7 of regionstore_commit_bench: working in place. Per size (4 KiB,
// 64 KiB, 1 MiB, 16 MiB) and durability mode, four arms interleaved:
//  - copy: the caller produces the payload in its own buffer, then Commit
//    copies it into the slot;
//  - in place: BeginCommit, the caller produces the payload straight into
//    PendingCommit::payload() (the slot, through the mapping), Finish;
//  - write: the same bytes produced in a buffer, then Write to the data area;
//  - view: produced straight into a MutableView of the data area, then Flush.
// "Producing" is a memset of the whole size with the operation's counter,
// the cheapest stand-in for an application's own work, so what the table
// shows is the copy the in-place arm saves and what it costs instead (the
// mapping's faults after a barrier write-protected its pages).
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commit_bench.h"
#include "lab/die.h"
#include "lab/realtime_scope.h"

namespace regionstore::bench {
namespace {

inline constexpr std::array<uint64_t, 4> kSizes = {4 * kKiB, 64 * kKiB, kMiB, 16 * kMiB};

enum InPlaceArm : size_t { kCopy, kInPlace, kWrite, kView, kInPlaceArms };

struct InPlaceResult {
  uint64_t size;
  Durability mode;
  std::array<double, kInPlaceArms> median_ns;
  // The device's KiB written and write requests per operation (medians;
  // NaN without device counters): what each arm makes the barrier write.
  std::array<double, kInPlaceArms> write_kib;
  std::array<double, kInPlaceArms> write_requests;
  std::array<double, kInPlaceArms> system_ns;  // the thread's system time per operation
  PairedRatio in_place_over_copy;              // time ratios: below 1, in place is faster
  PairedRatio view_over_write;
};

std::string RegionName(uint64_t size) {
  std::string name = std::to_string(size / kKiB);
  name += "k";  // a suffix, not "r" + ...: gcc 12's -Wrestrict misfires on that
  return name;
}

std::vector<InPlaceResult> RunInPlace(const Options& options) {
  const std::string path = options.dir + "/in-place.rgn";
  std::vector<RegionSpec> regions;
  for (uint64_t size : kSizes) {
    regions.push_back({RegionName(size), size,
                       size <= kCompactSlotLimit ? SlotLayout::kCompact : SlotLayout::kAligned});
  }
  {
    CreateOptions create;
    create.replace_existing = true;
    for (const RegionSpec& region : regions) {
      create.checkpoints.push_back({region.name, region.capacity, region.layout});
    }
    if (Status s = Store::Create(path, 16 * kMiB, create); !s.ok()) Die(s.ToString());
  }
  Store store = OpenStore(path);
  std::vector<InPlaceResult> results;
  for (uint64_t size : kSizes) {
    const std::string region = RegionName(size);
    for (const ModeInfo& mode : kModes) {
      auto buffer = std::make_shared<std::vector<std::byte>>(size);
      auto counter = std::make_shared<int>(0);
      const Durability durability = mode.mode;
      std::vector<Arm> arms(kInPlaceArms);
      arms[kCopy] = {"copy", [&store, region, buffer, counter, durability](uint64_t ops) {
                       for (uint64_t i = 0; i < ops; ++i) {
                         std::memset(buffer->data(), ++*counter, buffer->size());
                         auto g = store.Commit(region, *buffer, durability);
                         if (!g.ok()) return g.status().ToString();
                       }
                       return std::string();
                     }};
      arms[kInPlace] = {"in place", [&store, region, size, counter, durability](uint64_t ops) {
                          for (uint64_t i = 0; i < ops; ++i) {
                            auto pending = store.BeginCommit(region, size);
                            if (!pending.ok()) return pending.status().ToString();
                            std::memset(pending->payload().data(), ++*counter, size);
                            auto g = pending->Finish(size, durability);
                            if (!g.ok()) return g.status().ToString();
                          }
                          return std::string();
                        }};
      arms[kWrite] = {"write", [&store, buffer, counter, durability](uint64_t ops) {
                        for (uint64_t i = 0; i < ops; ++i) {
                          std::memset(buffer->data(), ++*counter, buffer->size());
                          if (Status s = store.Write(0, *buffer, durability); !s.ok()) {
                            return s.ToString();
                          }
                        }
                        return std::string();
                      }};
      arms[kView] = {"view", [&store, size, counter, durability](uint64_t ops) {
                       auto view = store.MutableView(0, size);
                       if (!view.ok()) return view.status().ToString();
                       for (uint64_t i = 0; i < ops; ++i) {
                         std::memset(view->data(), ++*counter, size);
                         if (Status s = store.Flush(0, size, durability); !s.ok()) {
                           return s.ToString();
                         }
                       }
                       return std::string();
                     }};
      std::fprintf(stderr, "  in place %s %s\n", SizeName(size).c_str(), mode.name);
      const RealtimeScope realtime(options.realtime && IsDurable(durability),
                                   "regionstore_commit_bench");
      const Rounds rounds =
          RunInterleaved(arms, options.rounds,
                         IsDurable(durability) ? options.durable_batch_ms : options.mapped_batch_ms,
                         options.device_stat);
      InPlaceResult result{size, durability, {}, {}, {}, {}, {}, {}};
      for (size_t a = 0; a < kInPlaceArms; ++a) {
        result.median_ns[a] = Median(rounds.ns[a]);
        const DevicePerOp device = MedianDevice(rounds.device[a]);
        result.write_kib[a] = options.device_stat.empty() ? NAN : device.write_kib;
        result.write_requests[a] = options.device_stat.empty() ? NAN : device.write_requests;
        result.system_ns[a] = device.system_ns;
      }
      result.in_place_over_copy = Paired(rounds.ns[kInPlace], rounds.ns[kCopy]);
      result.view_over_write = Paired(rounds.ns[kView], rounds.ns[kWrite]);
      results.push_back(result);
    }
  }
  return results;
}

const char* ModeName(Durability mode) {
  for (const ModeInfo& info : kModes) {
    if (info.mode == mode) return info.name;
  }
  return "?";
}

void PrintInPlace(const std::vector<InPlaceResult>& results, const Options& options) {
  std::printf("## 7. Working in place: commits filled in place, writable views\n\n");
  std::printf(
      "%d interleaved rounds of the four arms per size and mode; the payload is produced by a "
      "memset of the whole size, into the caller's buffer (copy, write) or straight into the "
      "slot or the data area (in place, view). Ratios are time ratios per round (below 1: in "
      "place is faster), median and range.\n\n",
      options.rounds);
  std::printf(
      "| size | mode | copy µs | in place µs | in place / copy | write µs | view µs | "
      "view / write |\n| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const InPlaceResult& r : results) {
    std::printf(
        "| %s | %s | %s | %s | %s | %s | %s | %s |\n", SizeName(r.size).c_str(), ModeName(r.mode),
        FormatMicros(r.median_ns[kCopy]).c_str(), FormatMicros(r.median_ns[kInPlace]).c_str(),
        FormatRatio(r.in_place_over_copy).c_str(), FormatMicros(r.median_ns[kWrite]).c_str(),
        FormatMicros(r.median_ns[kView]).c_str(), FormatRatio(r.view_over_write).c_str());
  }
  std::printf(
      "\nWhat the durable arms cost besides time, per operation (medians: the device's KiB "
      "written / write requests, counting other processes' writes too; then the thread's "
      "system time in µs, where the mapping's write faults show):\n\n"
      "| size | mode | copy | in place | write | view |\n| ---: | --- | ---: | ---: | ---: | "
      "---: |\n");
  for (const InPlaceResult& r : results) {
    if (!IsDurable(r.mode)) continue;
    std::printf("| %s | %s |", SizeName(r.size).c_str(), ModeName(r.mode));
    for (size_t a = 0; a < kInPlaceArms; ++a) {
      if (std::isnan(r.write_kib[a])) {
        std::printf(" - / - / %.0f |", r.system_ns[a] / 1e3);
      } else {
        std::printf(" %.0f / %.1f / %.0f |", r.write_kib[a], r.write_requests[a],
                    r.system_ns[a] / 1e3);
      }
    }
    std::printf("\n");
  }
  std::printf("\n");
}

nlohmann::json InPlaceJson(const std::vector<InPlaceResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const InPlaceResult& r : results) {
    out.push_back({{"size", r.size},
                   {"mode", ModeName(r.mode)},
                   {"copy_ns", r.median_ns[kCopy]},
                   {"in_place_ns", r.median_ns[kInPlace]},
                   {"write_ns", r.median_ns[kWrite]},
                   {"view_ns", r.median_ns[kView]},
                   {"write_kib",
                    {{"copy", OrNull(r.write_kib[kCopy])},
                     {"in_place", OrNull(r.write_kib[kInPlace])},
                     {"write", OrNull(r.write_kib[kWrite])},
                     {"view", OrNull(r.write_kib[kView])}}},
                   {"system_ns",
                    {{"copy", OrNull(r.system_ns[kCopy])},
                     {"in_place", OrNull(r.system_ns[kInPlace])},
                     {"write", OrNull(r.system_ns[kWrite])},
                     {"view", OrNull(r.system_ns[kView])}}},
                   {"in_place_over_copy", RatioJson(r.in_place_over_copy)},
                   {"view_over_write", RatioJson(r.view_over_write)}});
  }
  return out;
}

}  // namespace

nlohmann::json RunInPlaceSection(const Options& options) {
  const std::vector<InPlaceResult> results = RunInPlace(options);
  PrintInPlace(results, options);
  return InPlaceJson(results);
}

}  // namespace regionstore::bench
