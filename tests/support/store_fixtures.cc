#include "support/store_fixtures.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "format.h"
#include "regionstore/store_info.h"
#include "support/files.h"

namespace regionstore::testing {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kSanitizerDivisor = 4;
#else
constexpr uint64_t kSanitizerDivisor = 1;
#endif

uint64_t ScaleFromEnvironment() {
  const char* text = std::getenv("REGIONSTORE_TEST_SCALE");
  if (text == nullptr || *text == '\0') return 1;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || value == 0 || value > 1000 || *text == '-') return 1;
  return value;
}

}  // namespace

uint64_t ScaledCount(uint64_t count) {
  static const uint64_t scale = ScaleFromEnvironment();
  return std::max<uint64_t>(1, count * scale / kSanitizerDivisor);
}

void MustCreate(const std::string& path, uint64_t data_size, Io* io) {
  MustCreateWithRegions(path, data_size, {}, io);
}

Store MustOpen(const std::string& path, OpenMode mode, Io* io) {
  OpenOptions options;
  options.io = io;
  auto store = Store::Open(path, mode, options);
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  return std::move(*store);
}

void MustCreateWithRegions(const std::string& path, uint64_t data_size,
                           std::vector<CheckpointSpec> specs, Io* io, uint32_t protocol) {
  CreateOptions options;
  options.io = io;
  if (protocol != 0) options.protocol = protocol;
  options.checkpoints = std::move(specs);
  Status status = Store::Create(path, data_size, options);
  INFO(status.ToString());
  REQUIRE(status.ok());
}

std::vector<std::byte> MustLoad(const Store& store, std::string_view name, CheckpointMeta* meta) {
  std::vector<std::byte> out;
  auto loaded = store.Load(name, out);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  if (meta != nullptr) *meta = *loaded;
  return out;
}

std::vector<std::byte> ReadStoreButIntent(const std::string& path) {
  auto info = ReadStoreInfo(path);
  INFO(info.status().ToString());
  REQUIRE(info.ok());
  std::vector<std::byte> bytes = ReadWholeFile(path);
  REQUIRE(bytes.size() >= info->data_offset);
  std::fill_n(bytes.begin() + static_cast<ptrdiff_t>(info->data_offset - format::kIntentAreaSize),
              format::kIntentAreaSize, std::byte{0});
  return bytes;
}

void CheckNothingDamaged(const std::string& path) {
  auto report = VerifyRegions(path);
  REQUIRE(report.ok());
  for (const RegionReport& region : report->regions) {
    INFO("region " << region.name);
    CHECK_FALSE(region.damaged);
    CHECK_FALSE(region.torn);
  }
}

InPlaceBatchPlan PlanInPlace(std::span<const BatchMember> members) {
  InPlaceBatchPlan plan;
  for (const BatchMember& member : members) {
    uint64_t length = 0;
    for (std::span<const std::byte> piece : member.pieces) length += piece.size();
    plan.reservations.push_back({member.region, length});
    plan.lengths.push_back(length);
  }
  return plan;
}

}  // namespace regionstore::testing
