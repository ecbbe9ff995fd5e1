#include "support/regionctl_stores.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "slot.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH (and links nlohmann_json) only
// when the tool is built.
#ifdef REGIONCTL_PATH

namespace regionstore::testing {

std::string CreateStore(const TempDir& dir, const std::string& name, const std::string& size_text) {
  std::string path = dir.File(name);
  RequireSuccess(Regionctl({"create", path, "--size", size_text}));
  return path;
}

StoreInfo MustReadInfo(const std::string& path) {
  Result<StoreInfo> info = ReadStoreInfo(path);
  INFO(info.status().ToString());
  REQUIRE(info.ok());
  return *info;
}

std::string Hex64(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

void StoreLittleEndian(std::vector<std::byte>& bytes, size_t offset, uint64_t value, size_t width) {
  for (size_t index = 0; index < width; ++index) {
    bytes[offset + index] = static_cast<std::byte>((value >> (8 * index)) & 0xff);
  }
}

void RequireAllCommandsRefuse(const TempDir& dir, const std::string& path, int expected_exit_code) {
  const bool is_file = std::filesystem::is_regular_file(path);
  const std::vector<std::byte> before = is_file ? ReadWholeFile(path) : std::vector<std::byte>{};
  const std::string input = dir.File("refused-input.bin");
  WriteWholeFile(input, PatternBytes(100, 7));
  const std::vector<std::byte> stdin_bytes = PatternBytes(100, 8);
  const std::vector<std::vector<std::string>> commands = {
      {"inspect", path},
      {"inspect", path, "--json"},
      {"read", path, "--offset", "0", "--length", "16"},
      {"write", path, "--offset", "0", "--input", input},
      {"write", path, "--offset", "0", "--durability", "none"},  // from stdin
      {"verify", path},
      {"verify", path, "--json"},
      {"load", path, "state"},
      {"load", path, "state", "--output", dir.File("refused-output.bin")},
      {"commit", path, "state", "--input", input},
      {"commit", path, "state", "--durability", "none"},  // from stdin
      {"export", path, "state", "--output", dir.File("refused-output.bin")},
      {"import", path, "state", "--input", input},
      {"stat", path},
      {"stat", path, "--json"},
      {"dump", path, "--length", "16"},
      {"dump", path, "--region", "state"},
  };
  for (const auto& args : commands) {
    INFO(Describe(args));
    RequireFailure(Regionctl(args, stdin_bytes), expected_exit_code);
    if (is_file) REQUIRE(ReadWholeFile(path) == before);
  }
  CHECK_FALSE(std::filesystem::exists(dir.File("refused-output.bin")));
}

std::string CreateCheckpointStore(const TempDir& dir, const std::string& name,
                                  const std::vector<std::string>& checkpoints) {
  std::string path = dir.File(name);
  std::vector<std::string> args = {"create", path, "--size", "1MiB"};
  for (const std::string& checkpoint : checkpoints) {
    args.push_back("--checkpoint");
    args.push_back(checkpoint);
  }
  RequireSuccess(Regionctl(args));
  return path;
}

RegionEntry MustFindRegion(const std::string& path, const std::string& name) {
  for (const RegionEntry& region : MustReadInfo(path).regions) {
    if (region.name == name) return region;
  }
  FAIL("no region named " << name << " in " << path);
  return {};
}

void MustCommit(const std::string& path, const std::string& name,
                const std::vector<std::byte>& payload, uint64_t expected_generation,
                const std::string& durability) {
  const ProcessResult result =
      Regionctl({"commit", path, name, "--durability", durability}, payload);
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::StartsWith("committed generation " +
                                                    std::to_string(expected_generation) + " ("));
}

std::vector<std::byte> MustLoad(const std::string& path, const std::string& name) {
  const ProcessResult result = Regionctl({"load", path, name});
  RequireSuccess(result);
  return result.StdoutAsBytes();
}

nlohmann::json RegionJsonNamed(const nlohmann::json& document, const std::string& name) {
  REQUIRE(document["regions"].is_array());
  for (const nlohmann::json& region : document["regions"]) {
    if (region["name"] == name) return region;
  }
  FAIL("no region named " << name << " in " << document.dump());
  return {};
}

void TearPayload(const std::string& path, const RegionEntry& region, uint32_t index, uint64_t from,
                 uint64_t to) {
  PwriteFile(path, slot::PayloadFileOffset(region, index) + from,
             std::vector<std::byte>(to - from, std::byte{0}));
}

uint32_t ActiveSlot(const std::string& path, const std::string& name) {
  const nlohmann::json region = RegionJsonNamed(InspectJson(path), name);
  REQUIRE(region["active_slot"].is_number_unsigned());
  return region["active_slot"].get<uint32_t>();
}

TwoCommits CommitTwice(const TempDir& dir, uint64_t older_length, uint64_t newer_length,
                       uint64_t seed) {
  TwoCommits store{CreateCheckpointStore(dir, "store.rs"), PatternBytes(older_length, seed)};
  MustCommit(store.path, "state", store.older, 1);
  store.older_slot = ActiveSlot(store.path, "state");
  MustCommit(store.path, "state", PatternBytes(newer_length, seed + 1), 2);
  store.newest = ActiveSlot(store.path, "state");
  REQUIRE(store.newest != store.older_slot);
  return store;
}

std::string LineStartingWith(const std::string& text, const std::string& prefix) {
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    if (text.compare(start, prefix.size(), prefix) == 0) return text.substr(start, end - start);
    start = end + 1;
  }
  FAIL("no line starts with '" << prefix << "' in:\n" << text);
  return {};
}

void RequireVerdict(const ProcessResult& result, int expected_exit_code) {
  INFO("stdout: " << result.stdout_bytes << "\nstderr: " << result.stderr_bytes);
  REQUIRE(result.term_signal == 0);
  REQUIRE(result.exit_code == expected_exit_code);
  REQUIRE_FALSE(result.stdout_bytes.empty());
  REQUIRE(result.StderrLines().size() == 1);
  REQUIRE(result.stderr_bytes.rfind("regionctl: ", 0) == 0);
}

std::string TornWarning(uint64_t torn_generation, uint64_t returned_generation) {
  return "regionctl: warning: region 'state': its newest commit (generation " +
         std::to_string(torn_generation) +
         ") has an intact header but its payload does not match (a power loss interrupted it, or "
         "it was damaged after it returned); returned the older generation " +
         std::to_string(returned_generation) + " instead\n";
}

std::string TornOnlyFailure(const std::string& path, uint64_t generation) {
  return "regionctl: torn commit: load '" + path + "': region 'state': its newest commit " +
         "(generation " + std::to_string(generation) +
         ") has an intact header but its payload does not match: a power loss interrupted that "
         "commit, or it was damaged after it returned; no older commit of the region is intact\n";
}

}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
