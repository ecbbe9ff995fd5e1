// The fuzz targets in the ordinary suite: every seed of tests/fuzz/corpus and
// every input that once crashed a fuzzer (tests/fuzz/regressions) runs
// through its target under this build's compiler and sanitizers. A target
// aborts on a broken invariant, so a regression fails here.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_targets.h"
#include "fuzz/store_image.h"
#include "regionstore/store_info.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzzDir = REGIONSTORE_FUZZ_DIR;

std::vector<uint8_t> ReadInput(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs every file of corpus/<name> and regressions/<name> through `target`;
// returns how many ran.
template <typename Target>
int Replay(const std::string& name, Target target) {
  int count = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    const fs::path dir = kFuzzDir / kind / name;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::vector<uint8_t> input = ReadInput(entry.path());
      INFO(entry.path().string());
      CHECK(target(std::span<const uint8_t>(input)) == 0);
      ++count;
    }
  }
  return count;
}

TEST_CASE("Every fuzz seed and regression input runs clean through its target", "[fuzz]") {
  // The fuzzer runs the store target in memory; the replay runs it on a
  // real file as well, so the POSIX Io reads every input too.
  CHECK(Replay("store", fuzz::StoreFile) >= 26);
  CHECK(Replay("store", fuzz::StoreFileOnDisk) >= 26);
  CHECK(Replay("slot_header", fuzz::SlotHeader) >= 7);
  CHECK(Replay("cli_parse", fuzz::CliParse) >= 18);
}

TEST_CASE("A store image materialises the file it was made from, byte for byte", "[fuzz]") {
  std::vector<std::byte> file(200000);
  for (size_t i = 0; i < file.size(); ++i) {
    // Runs of data, short and long gaps, and a run longer than one record.
    const bool data = (i % 1000) < 37 || (i >= 100000 && i < 170000) || i == file.size() - 1;
    file[i] = data ? static_cast<std::byte>((i * 13 + 1) | 1) : std::byte{0};
  }
  const std::vector<uint8_t> encoded = fuzz::EncodeImage(file, fuzz::kOpenWriter);
  CHECK(encoded.size() < file.size() / 2);
  const fuzz::Image image = fuzz::DecodeImage(encoded);
  CHECK(image.flags == fuzz::kOpenWriter);
  CHECK(image.file_size == file.size());
  TempDir dir;
  const std::string path = dir.File("image");
  REQUIRE(fuzz::WriteImage(image, path));
  CHECK(testing::ReadWholeFile(path) == file);
}

TEST_CASE("The store seeds are the valid and damaged stores they are named after", "[fuzz]") {
  TempDir dir;
  const std::string path = dir.File("seed.rgn");
  auto status_of = [&](const char* seed) {
    const std::vector<uint8_t> input = ReadInput(kFuzzDir / "corpus" / "store" / seed);
    REQUIRE(!input.empty());
    REQUIRE(fuzz::WriteImage(fuzz::DecodeImage(input), path));
    auto info = ReadStoreInfo(path);
    return info.ok() ? StatusCode::kOk : info.status().code();
  };
  CHECK(status_of("two-regions") == StatusCode::kOk);
  CHECK(status_of("three-regions-writer") == StatusCode::kOk);
  CHECK(status_of("superblock-checksum") == StatusCode::kCorruption);
  CHECK(status_of("truncated") == StatusCode::kCorruption);
  auto info = ReadStoreInfo(path);  // "truncated" is still there
  CHECK(!info.ok());
  REQUIRE(status_of("two-regions") == StatusCode::kOk);
  CHECK(ReadStoreInfo(path)->regions.size() == 2);
  CHECK(ReadStoreInfo(path)->incompat_flags == 0);

  // Compact slots: incompat_flags bit 0, and the layouts they are named for.
  REQUIRE(status_of("compact-regions") == StatusCode::kOk);
  info = ReadStoreInfo(path);
  CHECK(info->incompat_flags == 1);
  REQUIRE(info->regions.size() == 5);
  CHECK(info->regions[1].layout == SlotLayout::kCompact);
  CHECK(info->regions[3].layout == SlotLayout::kAligned);
  // Damaged behind checksums the target fixes: refused as they are.
  CHECK(status_of("compact-flag-cleared-fixed") == StatusCode::kCorruption);
  CHECK(status_of("compact-alignment-zero-fixed") == StatusCode::kCorruption);

  // The large-table flag: with 8,161 entries the superblock passes and the
  // first zeroed entry is refused; with 200 the store is valid.
  CHECK(status_of("large-table-8161-entries") == StatusCode::kCorruption);
  info = ReadStoreInfo(path);
  CHECK(info.status().message().find("region entry 200") != std::string::npos);
  REQUIRE(status_of("large-table-flag-200-regions") == StatusCode::kOk);
  info = ReadStoreInfo(path);
  CHECK(info->incompat_flags == 3);
  CHECK(info->data_offset == 2 * 1024 * 1024);
  CHECK(info->regions.size() == 200);
}

}  // namespace
}  // namespace regionstore::testing
