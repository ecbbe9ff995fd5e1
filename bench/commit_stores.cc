// The stores and slots of regionstore_commit_bench, and the arms every
// section builds (see commit_bench.h).
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commit_bench.h"
#include "lab/die.h"
#include "lab/raw_io.h"
#include "regionstore/store.h"

namespace regionstore::bench {

void CreateStore(const std::string& path, const std::vector<RegionSpec>& regions, bool batch_log,
                 uint32_t protocol) {
  CreateOptions options;
  options.replace_existing = true;
  options.batch_log = batch_log;
  options.protocol = protocol;
  for (const RegionSpec& region : regions) {
    options.checkpoints.push_back({region.name, region.capacity, region.layout});
  }
  if (auto s = Store::Create(path, 0, options); !s.ok()) Die(s.ToString());
}

Store OpenStore(const std::string& path, Io* io) {
  OpenOptions options;
  options.io = io;
  auto store = Store::Open(path, OpenMode::kReadWrite, options);
  if (!store.ok()) Die(store.status().ToString());
  return std::move(*store);
}

const RegionEntry& RegionOf(const StoreInfo& info, const std::string& name) {
  for (const RegionEntry& region : info.regions) {
    if (region.name == name) return region;
  }
  Die("no region " + name);
}

namespace {

bool IsCompact(const RegionEntry& region) { return region.layout == SlotLayout::kCompact; }

}  // namespace

uint64_t SlotPayloadOffset(const RegionEntry& region, uint32_t slot) {
  return region.slots_offset + slot * region.slot_stride +
         (IsCompact(region) ? kCompactPayloadOffset : kAlignedPayloadOffset);
}
uint64_t SlotHeaderUnitOffset(const RegionEntry& region, uint32_t slot) {
  return region.slots_offset + slot * region.slot_stride +
         (IsCompact(region) ? kCompactHeaderUnitOffset : kAlignedHeaderUnitOffset);
}

void CheckSlotLayout(Store& store, const std::string& region_name) {
  const RegionEntry& region = RegionOf(store.info(), region_name);
  Payloads payloads(region.capacity);
  const std::span<const std::byte> payload = payloads.Next();
  auto generation = store.Commit(region_name, payload, Durability::kPwriteFdatasync);
  if (!generation.ok()) Die(generation.status().ToString());
  auto reports = VerifyRegions(store.path());
  if (!reports.ok()) Die(reports.status().ToString());
  uint32_t slot = kSlotsPerRegion;
  for (const RegionReport& report : reports->regions) {
    if (report.name == region_name && report.has_commit) slot = report.active_slot;
  }
  if (slot == kSlotsPerRegion) Die("layout check: no commit in " + region_name);
  const Fd fd(store.path(), O_RDONLY | O_CLOEXEC);
  std::vector<std::byte> read_back(payload.size());
  std::array<char, 8> magic{};
  if (::pread(fd.get(), read_back.data(), read_back.size(),
              static_cast<off_t>(SlotPayloadOffset(region, slot))) !=
          static_cast<ssize_t>(read_back.size()) ||
      std::memcmp(read_back.data(), payload.data(), payload.size()) != 0 ||
      ::pread(fd.get(), magic.data(), magic.size(),
              static_cast<off_t>(SlotHeaderUnitOffset(region, slot))) != 8 ||
      std::memcmp(magic.data(), "RGNSLOT1", 8) != 0) {
    Die("the " + std::string(SlotLayoutName(region.layout)) + " slot layout of " + region_name +
        " is not the one bench/commit_bench.h assumes (aligned: header unit at "
        "slot + 60 KiB, payload at slot + 64 KiB; compact: header unit at the slot, payload at "
        "slot + 4 KiB): update k*HeaderUnitOffset and k*PayloadOffset");
  }
}

bool IsDurable(Durability mode) {
  return mode == Durability::kSync || mode == Durability::kPwriteFdatasync;
}

Arm CommitArm(std::string name, Store& store, std::string region, uint64_t size, Durability mode) {
  auto payloads = std::make_shared<Payloads>(size);
  return {std::move(name), [&store, region = std::move(region), payloads, mode](uint64_t ops) {
            for (uint64_t i = 0; i < ops; ++i) {
              auto generation = store.Commit(region, payloads->Next(), mode);
              if (!generation.ok()) return generation.status().ToString();
            }
            return std::string();
          }};
}

nlohmann::json OrNull(double value) {
  return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

nlohmann::json RatioJson(const PairedRatio& ratio) {
  return {{"median", ratio.median}, {"low", ratio.low}, {"high", ratio.high}};
}

void PrintRatioRow(const std::string& label, const PairedRatio& ratio, double target) {
  std::string verdict;
  if (target > 0) {
    verdict = ">= " + Fixed(target, 1) + (ratio.median >= target ? ": met" : ": **missed**");
  }
  std::printf("| %s | **%s** | %s-%s | %s | %s |\n", label.c_str(), Fixed(ratio.median, 2).c_str(),
              Fixed(ratio.low, 2).c_str(), Fixed(ratio.high, 2).c_str(),
              FormatByState(ratio).c_str(), verdict.c_str());
}

}  // namespace regionstore::bench
