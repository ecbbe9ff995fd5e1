// Format stability: the golden store files under tests/golden/ (made by
// regionstore_make_golden, see tests/golden/README.md) are read byte-exact by
// today's code, today's writer still produces them byte for byte, and a
// check against them catches one changed byte anywhere. What they hold is
// in golden/golden_expected.h; the decoder written from docs/FORMAT.md
// alone is in test_golden_spec.cc.
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "golden/golden_expected.h"
#include "golden/golden_writer.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"
#include "support/files.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

TEST_CASE("The golden directory holds exactly the documented golden files", "[golden]") {
  std::set<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(REGIONSTORE_GOLDEN_DIR)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".rgn" || name.ends_with(".rgn.tar.gz")) found.insert(name);
  }
  std::set<std::string> expected;
  for (const ExpectedGolden& golden : ExpectedGoldens()) expected.insert(golden.file_name);
  for (const ExpectedRegionGolden& golden : ExpectedRegionGoldens()) {
    expected.insert(golden.archived ? golden.file_name + ".tar.gz" : golden.file_name);
    // An archived one is extracted by the build, at its documented size.
    if (golden.archived) {
      INFO(ExtractedGoldenPath(golden.file_name));
      std::error_code error;
      CHECK(std::filesystem::file_size(ExtractedGoldenPath(golden.file_name), error) ==
            golden.file_size);
    }
  }
  CHECK(found == expected);
  // The generator makes exactly these, archived where documented, but for
  // the retired ones.
  std::set<std::string> generated(kRetiredGoldens.begin(), kRetiredGoldens.end());
  for (const golden::GoldenStore& store : golden::GoldenStores()) {
    CHECK(generated.insert(golden::CheckedInName(store)).second);
  }
  CHECK(generated == expected);
}

TEST_CASE("Today's code reads every golden file byte-exact", "[golden]") {
  for (const ExpectedGolden& expected : ExpectedGoldens()) {
    const std::string path = GoldenPath(expected.file_name);
    INFO(path);
    const std::vector<std::string> differences = Differences(path, expected);
    INFO(Join(differences));
    CHECK(differences.empty());
  }
}

// Where two files first differ, read 1 MiB at a time (a golden file may be
// 200 MiB): nullopt when they are identical.
std::optional<uint64_t> FirstDifference(const std::string& a, const std::string& b) {
  std::ifstream in_a(a, std::ios::binary);
  std::ifstream in_b(b, std::ios::binary);
  if (!in_a || !in_b) return 0;
  std::vector<char> buffer_a(1 << 20);
  std::vector<char> buffer_b(1 << 20);
  uint64_t offset = 0;
  while (true) {
    in_a.read(buffer_a.data(), static_cast<std::streamsize>(buffer_a.size()));
    in_b.read(buffer_b.data(), static_cast<std::streamsize>(buffer_b.size()));
    const auto got_a = static_cast<size_t>(in_a.gcount());
    const auto got_b = static_cast<size_t>(in_b.gcount());
    const size_t common = std::min(got_a, got_b);
    const auto mismatch =
        std::mismatch(buffer_a.begin(), buffer_a.begin() + common, buffer_b.begin());
    if (mismatch.first != buffer_a.begin() + common) {
      return offset + static_cast<uint64_t>(mismatch.first - buffer_a.begin());
    }
    if (got_a != got_b) return offset + common;
    if (got_a == 0) return std::nullopt;
    offset += got_a;
  }
}

// Regenerates `store` into `dir` and compares it with the checked-in file
// (for an archived one, the copy the build extracted).
void CheckReproduced(const TempDir& dir, const golden::GoldenStore& store) {
  INFO(store.file_name);
  if (Status status = golden::WriteGoldenStore(dir.path().string(), store); !status.ok()) {
    FAIL("WriteGoldenStore failed: " << status.ToString());
  }
  const std::string generated = dir.File(store.file_name);
  const std::string checked_in =
      store.archived ? ExtractedGoldenPath(store.file_name) : GoldenPath(store.file_name);
  const std::optional<uint64_t> difference = FirstDifference(generated, checked_in);
  std::error_code error;
  INFO("today's writer made " << std::filesystem::file_size(generated, error)
                              << " bytes, the golden file has "
                              << std::filesystem::file_size(checked_in, error)
                              << "; first difference at file offset " << difference.value_or(0));
  INFO(
      "The writer no longer produces format v1 as checked in: that is a format change. "
      "Follow the compatibility rule in docs/FORMAT.md (a new format_version, or a "
      "compat/incompat flag), document it in FORMAT.md in the same commit, then add "
      "golden files for the new format (keep the v1 ones: later releases must still read "
      "them). See tests/golden/README.md.");
  const bool identical = !difference.has_value();
  CHECK(identical);
  std::filesystem::remove(generated, error);
}

TEST_CASE("Today's writer reproduces every golden file byte for byte", "[golden]") {
  TempDir dir;
  const std::vector<golden::GoldenStore> stores = golden::GoldenStores();
  REQUIRE_FALSE(stores.empty());
  // Every golden file the generator makes has hard-coded expectations here
  // (after a format change, older files keep their expectations but leave
  // the generator: see tests/golden/README.md).
  std::set<std::string> expected_names;
  for (const ExpectedGolden& expected : ExpectedGoldens()) {
    expected_names.insert(expected.file_name);
  }
  for (const ExpectedRegionGolden& expected : ExpectedRegionGoldens()) {
    expected_names.insert(expected.file_name);
  }
  for (const golden::GoldenStore& store : stores) {
    INFO(store.file_name << " is made by the generator but has no expectations in this file");
    CHECK(expected_names.count(store.file_name) == 1);
  }
  // The archived ones (about 200 MiB) have a case of their own, below.
  for (const golden::GoldenStore& store : stores) {
    if (!store.archived) CheckReproduced(dir, store);
  }
}

TEST_CASE("Today's writer reproduces the archived large-table golden file", "[golden]") {
  TempDir dir;
  int archived = 0;
  for (const golden::GoldenStore& store : golden::GoldenStores()) {
    if (!store.archived) continue;
    ++archived;
    CheckReproduced(dir, store);
  }
  CHECK(archived == 1);
}

TEST_CASE("A golden-file check catches one changed byte anywhere in the file", "[golden]") {
  // The check above must be able to fail: damage a copy of v1-small.rgn one
  // byte at a time, in every kind of area, and expect a difference each time.
  const ExpectedGolden expected = ExpectedGoldens()[1];
  REQUIRE(expected.file_name == "v1-small.rgn");
  const std::vector<std::byte> original = ReadWholeFile(GoldenPath(expected.file_name));
  TempDir dir;
  const std::string copy = dir.File(expected.file_name);
  WriteWholeFile(copy, original);
  REQUIRE(Differences(copy, expected).empty());

  struct Damage {
    uint64_t file_offset;
    const char* where;
  };
  const Damage damages[] = {
      {9, "format_version"},
      {30, "uuid"},
      {57, "data_size"},
      {90, "created_unix_ns"},
      {200, "reserved superblock byte"},
      {4088, "superblock_checksum"},
      {4096 + 17, "header area past the superblock (no checksum covers it)"},
      {kDataOffset + 50, "a pattern byte"},
      {kDataOffset + 2000, "a zero byte between pattern ranges"},
      {kDataOffset + 4098, "the last byte of the data area"},
      {kDataOffset + 4099, "the first padding byte after the data area"},
      {expected.file_size - 1, "the last byte of the file"},
  };
  for (const Damage& damage : damages) {
    INFO(damage.where << " at file offset " << damage.file_offset);
    std::vector<std::byte> damaged = original;
    damaged[damage.file_offset] ^= std::byte{0x01};
    WriteWholeFile(copy, damaged);
    CHECK_FALSE(Differences(copy, expected).empty());
  }

  // A superblock that is valid but not the golden one (a writer that stamps
  // another time, resealed with a correct checksum) is caught too.
  std::vector<std::byte> resealed = original;
  resealed[88] ^= std::byte{0x01};  // created_unix_ns
  const uint64_t checksum = XXH3_64bits(resealed.data(), 4088);
  for (size_t i = 0; i < 8; ++i) {
    resealed[4088 + i] = static_cast<std::byte>((checksum >> (8 * i)) & 0xff);
  }
  WriteWholeFile(copy, resealed);
  REQUIRE(ReadStoreInfo(copy).ok());
  CHECK_FALSE(Differences(copy, expected).empty());
}

}  // namespace
}  // namespace regionstore::testing
