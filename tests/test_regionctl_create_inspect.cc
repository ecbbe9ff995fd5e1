// regionctl create, inspect, stat and dump, driven as a separate process the
// way users and scripts run it: sizes and their units, checkpoint regions and
// their layout, the inspect table and its JSON, stat's summary, dump's hex,
// and names escaped in human output.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "regionstore/regionstore.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/regionctl_stores.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH only when the tool is built.
#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

TEST_CASE("regionctl create then inspect --json reports the new store's superblock",
          "[regionctl]") {
  TempDir dir;
  const std::string path = dir.File("store.rs");
  const ProcessResult created = Regionctl({"create", path, "--size", "16MiB"});
  RequireSuccess(created);
  CHECK_THAT(created.stdout_bytes,
             Catch::StartsWith("created '" + path + "': data area 16.0 MiB, file ") &&
                 Catch::EndsWith(" MiB\n"));
  CHECK(std::count(created.stdout_bytes.begin(), created.stdout_bytes.end(), '\n') == 1);

  const nlohmann::json document = InspectJson(path);
  const StoreInfo info = MustReadInfo(path);
  const uint64_t real_file_size = std::filesystem::file_size(path);
  REQUIRE(document.is_object());
  for (const char* field : {"format_version", "file_size", "page_size", "data_offset", "data_size",
                            "created_page_size", "created_unix_ns", "region_table_offset"}) {
    INFO(field);
    REQUIRE(document.contains(field));
    REQUIRE(document[field].is_number_unsigned());
  }
  CHECK(document["format_version"] == 1);
  CHECK(document["protocol"] == 2);
  CHECK(document["data_size"] == kStoreDataSize);
  CHECK(document["file_size"] == real_file_size);
  CHECK(document["page_size"] == static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
  CHECK(document["page_size"] == Io::Default()->PageSize());
  CHECK(document["data_offset"] == info.data_offset);
  // docs/FORMAT.md: data offset 2 MiB must be a 1 MiB-aligned file offset.
  CHECK(document["data_offset"].get<uint64_t>() % kMiB == 0);
  CHECK(document["data_offset"].get<uint64_t>() + kStoreDataSize <= real_file_size);
  CHECK(document["created_page_size"] == info.created_page_size);
  CHECK(document["created_unix_ns"] == info.created_unix_ns);
  CHECK(document["created_unix_ns"].get<uint64_t>() > 0);
  CHECK(document["region_table_offset"] == info.region_table_offset);
  REQUIRE(document["uuid"].is_string());
  CHECK(document["uuid"] == FormatUuid(info.uuid));
  CHECK(document["uuid"].get<std::string>().size() == 36);
  REQUIRE(document["superblock_checksum"].is_string());
  CHECK(document["superblock_checksum"] == Hex64(info.superblock_checksum));
  REQUIRE(document["regions"].is_array());
  CHECK(document["regions"].empty());
}

TEST_CASE("regionctl inspect prints an aligned table with sizes in bytes and binary units",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const StoreInfo info = MustReadInfo(path);
  const ProcessResult result = Regionctl({"inspect", path});
  RequireSuccess(result);

  std::vector<std::string> lines;
  std::string::size_type start = 0;
  while (start < result.stdout_bytes.size()) {
    const auto end = result.stdout_bytes.find('\n', start);
    REQUIRE(end != std::string::npos);  // every line is terminated
    lines.push_back(result.stdout_bytes.substr(start, end - start));
    start = end + 1;
  }
  REQUIRE(lines.size() >= 10);
  // The value column starts at the same place on every line.
  std::optional<size_t> value_column;
  std::map<std::string, std::string> values;
  for (const std::string& line : lines) {
    INFO(line);
    const size_t key_end = line.find(' ');
    REQUIRE(key_end != std::string::npos);
    const size_t column = line.find_first_not_of(' ', key_end);
    REQUIRE(column != std::string::npos);
    REQUIRE(column >= key_end + 2);
    if (!value_column) value_column = column;
    CHECK(column == *value_column);
    values[line.substr(0, key_end)] = line.substr(column);
  }
  CHECK(values["data_size"] == "16777216 (16.0 MiB)");
  CHECK(values["file_size"] == std::to_string(std::filesystem::file_size(path)) + " (" +
                                   std::to_string(info.file_size / kMiB) + ".0 MiB)");
  CHECK(values["format_version"] == "1");
  CHECK(values["protocol"] == "2");
  CHECK(values["uuid"] == FormatUuid(info.uuid));
  CHECK(values["superblock_checksum"] == Hex64(info.superblock_checksum));
  CHECK(values["regions"] == "0");
  CHECK_THAT(values["page_size"], Catch::StartsWith(std::to_string(Io::Default()->PageSize())));
}

TEST_CASE("regionctl create makes protocol 2 stores unless --protocol 1, and inspect says which",
          "[regionctl]") {
  TempDir dir;
  const std::string path = dir.File("p2.rs");
  RequireSuccess(Regionctl({"create", path, "--size", "64KiB", "--checkpoint", "r:4KiB"}));
  const nlohmann::json document = InspectJson(path);
  CHECK(document["protocol"] == 2);
  CHECK(document["incompat_features"] ==
        nlohmann::json::array({"compact_slots", "batch_log", "sidecar", "journal"}));
  CHECK(document["journal_size"] == 4 * 1024 * 1024);
  // --journal-size sets it; protocol 1 refuses one (exit 2).
  const std::string small = dir.File("small.rs");
  RequireSuccess(Regionctl({"create", small, "--size", "64KiB", "--checkpoint", "r:4KiB",
                            "--protocol", "2", "--journal-size", "256KiB"}));
  CHECK(InspectJson(small)["journal_size"] == 256 * 1024);
  RequireFailure(Regionctl({"create", dir.File("p1j.rs"), "--size", "64KiB", "--protocol", "1",
                            "--journal-size", "1MiB"}),
                 2);
  CHECK_FALSE(std::filesystem::exists(dir.File("p1j.rs")));
  // The older format on request: no sidecar, journal or batch log.
  const std::string older = dir.File("p1.rs");
  RequireSuccess(
      Regionctl({"create", older, "--size", "64KiB", "--checkpoint", "r:4KiB", "--protocol", "1"}));
  const nlohmann::json p1 = InspectJson(older);
  CHECK(p1["protocol"] == 1);
  CHECK(p1["incompat_features"] == nlohmann::json::array({"compact_slots"}));
  CHECK(p1["journal_size"] == 0);
  CHECK(MustReadInfo(path).protocol() == 2);
  // A commit through regionctl: its writer makes the sidecar beside it.
  const ProcessResult committed = Regionctl({"commit", path, "r", "--input", "/dev/null"});
  RequireSuccess(committed);
  CHECK(std::filesystem::file_size(path + ".shm") == 73728);
  // Only 1 and 2 exist; nothing is created for another.
  const std::string other = dir.File("p3.rs");
  const ProcessResult refused = Regionctl({"create", other, "--size", "64KiB", "--protocol", "3"});
  RequireFailure(refused, 2);
  CHECK_THAT(refused.stderr_bytes, Catch::Contains("--protocol"));
  CHECK_FALSE(std::filesystem::exists(other));
}

TEST_CASE("regionctl create --slots and copy --slots set every region's slot count",
          "[regionctl]") {
  TempDir dir;
  const std::string path = dir.File("spare.rs");
  RequireSuccess(Regionctl({"create", path, "--size", "0", "--checkpoint", "a:100", "--checkpoint",
                            "b:70KiB:aligned", "--slots", "4"}));
  const auto slot_counts = [](const std::string& store) {
    std::vector<uint32_t> counts;
    for (const RegionEntry& region : MustReadInfo(store).regions) {
      counts.push_back(region.slot_count);
    }
    return counts;
  };
  CHECK(slot_counts(path) == std::vector<uint32_t>{4, 4});
  CHECK(InspectJson(path)["regions"][1]["slot_count"] == 4);
  // A copy keeps them, or sets them, on the regions it adds too.
  const std::string kept = dir.File("kept.rs");
  RequireSuccess(Regionctl({"copy", path, kept}));
  CHECK(slot_counts(kept) == std::vector<uint32_t>{4, 4});
  const std::string more = dir.File("more.rs");
  RequireSuccess(Regionctl(
      {"copy", path, more, "--slots", "64", "--checkpoint", "c:8", "--checkpoint", "a:200"}));
  CHECK(slot_counts(more) == std::vector<uint32_t>{64, 64, 64});
  CHECK(MustReadInfo(more).regions[0].capacity == 200);
  // Out of range: a usage error, nothing made.
  for (const char* bad : {"2", "65", "0"}) {
    INFO(bad);
    const std::string refused = dir.File(std::string("bad-") + bad + ".rs");
    const ProcessResult created =
        Regionctl({"create", refused, "--size", "0", "--checkpoint", "a:100", "--slots", bad});
    CHECK(created.exit_code == 2);
    CHECK_THAT(created.stderr_bytes,
               Catch::Contains("--slots: Value " + std::string(bad) + " not in range 3 to 64"));
    CHECK_FALSE(std::filesystem::exists(refused));
    CHECK(Regionctl({"copy", path, refused, "--slots", bad}).exit_code == 2);
    CHECK_FALSE(std::filesystem::exists(refused));
  }
}

TEST_CASE("regionctl create accepts byte counts and binary units", "[regionctl]") {
  const auto [size_text, expected_size] = GENERATE(table<std::string, uint64_t>({
      {"0", 0},
      {"4096", 4096},
      {"4096B", 4096},
      {"64KiB", 64 * kKiB},
      {"64K", 64 * kKiB},
      {"3MiB", 3 * kMiB},
      {"1M", kMiB},
  }));
  INFO(size_text);
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs", size_text);
  const nlohmann::json document = InspectJson(path);
  CHECK(document["data_size"] == expected_size);
  CHECK(document["file_size"] == std::filesystem::file_size(path));
}

TEST_CASE("regionctl create refuses malformed, ambiguous and overflowing sizes with exit 2",
          "[regionctl]") {
  const std::string size_text =
      GENERATE(as<std::string>{}, "12XB", "16MB", "16KB", "1GB", "1.5GiB", "-1", "", "MiB",
               "16 MiB", "0x10", "99999999999999999999", "16777216TiB", "16MiBx");
  INFO("--size '" << size_text << "'");
  TempDir dir;
  const ProcessResult result = Regionctl({"create", dir.File("store.rs"), "--size", size_text});
  RequireFailure(result, kExitUsage);
  CHECK(dir.List().empty());  // no store, no temp file
}

TEST_CASE("regionctl create refuses an existing path without --force and replaces it with it",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::string old_uuid = InspectJson(path)["uuid"];
  const std::vector<std::byte> before = ReadWholeFile(path);

  ProcessResult result = Regionctl({"create", path, "--size", "1MiB"});
  RequireFailure(result, kExitFailure);
  CHECK_THAT(result.stderr_bytes, Catch::Contains(path));
  CHECK(ReadWholeFile(path) == before);

  const std::string other = dir.File("not-a-store.txt");
  WriteWholeFile(other, PatternBytes(1000, 10));
  const std::vector<std::byte> other_before = ReadWholeFile(other);
  RequireFailure(Regionctl({"create", other, "--size", "1MiB"}), kExitFailure);
  CHECK(ReadWholeFile(other) == other_before);

  result = Regionctl({"create", path, "--size", "1MiB", "--force"});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::StartsWith("created '" + path + "': data area 1.0 MiB"));
  const nlohmann::json replaced = InspectJson(path);
  CHECK(replaced["data_size"] == kMiB);
  CHECK(replaced["uuid"] != old_uuid);
  CHECK(dir.List() == std::vector<std::string>{"not-a-store.txt", "store.rs"});  // no temp left
}

TEST_CASE(
    "regionctl create --checkpoint lays out regions that inspect lists with three empty slots",
    "[regionctl]") {
  TempDir dir;
  const std::string path = dir.File("store.rs");
  // A name may contain ':': the capacity follows the last one.
  const ProcessResult created =
      Regionctl({"create", path, "--size", "0", "--checkpoint", "state:64KiB:aligned",
                 "--checkpoint", "cfg:v2:100", "--checkpoint", "\xc3\xa9tat:1MiB"});
  RequireSuccess(created);
  CHECK_THAT(created.stdout_bytes,
             Catch::StartsWith("created '" + path + "': data area 0 B, file ") &&
                 Catch::EndsWith(" MiB\n"
                                 "  checkpoint region 'state': capacity 64.0 KiB, 3 aligned "
                                 "slots of 128.0 KiB\n"
                                 "  checkpoint region 'cfg:v2': capacity 100 B, 3 compact slots "
                                 "of 8.0 KiB\n"
                                 "  checkpoint region '\xc3\xa9tat': capacity 1.0 MiB, 3 aligned "
                                 "slots of 1.1 MiB\n"));

  const StoreInfo info = MustReadInfo(path);
  REQUIRE(info.regions.size() == 3);
  const nlohmann::json document = InspectJson(path);
  CHECK(document["data_size"] == 0);
  REQUIRE(document["regions"].is_array());
  REQUIRE(document["regions"].size() == 3);
  const std::vector<std::pair<std::string, uint64_t>> expected = {
      {"state", 64 * kKiB}, {"cfg:v2", 100}, {"\xc3\xa9tat", kMiB}};
  for (size_t index = 0; index < expected.size(); ++index) {
    const nlohmann::json& region = document["regions"][index];
    INFO(region.dump());
    CHECK(region["name"] == expected[index].first);
    CHECK(region["capacity"] == expected[index].second);
    CHECK(region["slot_count"] == 3);
    CHECK(region["slots_offset"] == info.regions[index].slots_offset);
    CHECK(region["slot_stride"] == info.regions[index].slot_stride);
    // No commit yet: generation 0 and no active slot.
    CHECK(region["generation"] == 0);
    CHECK(region["length"] == 0);
    CHECK(region["active_slot"].is_null());
    CHECK(region["commit_unix_ns"].is_null());
    CHECK(region["damaged"] == false);
    REQUIRE(region["slots"].is_array());
    REQUIRE(region["slots"].size() == 3);
    for (size_t slot = 0; slot < 3; ++slot) {
      const nlohmann::json& slot_json = region["slots"][slot];
      CHECK(slot_json["index"] == slot);
      CHECK(slot_json["state"].get<std::string>() == "empty");
      CHECK(slot_json["generation"].is_null());
      CHECK(slot_json["reason"].is_null());
    }
  }
  CHECK(document["regions"][2]["slot_stride"] == kMiB + 64 * kKiB);

  // The table lists them too, names quoted.
  const ProcessResult table = Regionctl({"inspect", path});
  RequireSuccess(table);
  CHECK_THAT(table.stdout_bytes, Catch::Contains("name='cfg:v2' capacity=100 slot_count=3 ") &&
                                     Catch::Contains("name='\xc3\xa9tat' capacity=1048576 ") &&
                                     Catch::Contains("region[0].commit     no commit yet\n") &&
                                     Catch::Contains("region[2].slot[2]    empty\n"));
}

TEST_CASE("regionctl create refuses bad checkpoint names, duplicates and capacity 0 with exit 2",
          "[regionctl]") {
  using Checkpoints = std::vector<std::string>;
  // Octal escapes: "\x7fb" would be one hex escape swallowing the 'b'.
  const Checkpoints checkpoints = GENERATE(Checkpoints{"state"},       // no capacity
                                           Checkpoints{"state:"},      // empty capacity
                                           Checkpoints{":64KiB"},      // empty name
                                           Checkpoints{"state:0"},     // capacity 0
                                           Checkpoints{"state:12XB"},  // not a size
                                           Checkpoints{"state:64KB"},  // ambiguous unit
                                           Checkpoints{std::string(65, 'n') + ":1KiB"},  // too long
                                           Checkpoints{"a\tb:1KiB"},        // control character
                                           Checkpoints{"a\177b:1KiB"},      // DEL
                                           Checkpoints{"a\302\205b:1KiB"},  // C1 control (NEL)
                                           Checkpoints{"a\377b:1KiB"},      // not UTF-8
                                           Checkpoints{"a:1KiB", "b:1KiB", "a:2KiB"},  // twice
                                           Checkpoints{"x:y:1KiB", "x:y:1KiB"});  // twice, with ':'
  TempDir dir;
  std::vector<std::string> args = {"create", dir.File("store.rs"), "--size", "0"};
  for (const std::string& checkpoint : checkpoints) {
    args.push_back("--checkpoint");
    args.push_back(checkpoint);
  }
  INFO(Describe(args));
  const ProcessResult result = Regionctl(args);
  RequireFailure(result, kExitUsage);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("--checkpoint"));
  CHECK(dir.List().empty());  // no store, no temp file
}

TEST_CASE("regionctl stat summarizes regions, in a table and as JSON", "[regionctl][stat]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  MustCommit(path, "state", PatternBytes(5000, 1), 1);
  MustCommit(path, "state", PatternBytes(3000, 2), 2);

  ProcessResult result = Regionctl({"stat", path});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes,
             Catch::Contains("regions        2 (68.0 KiB of capacity)\n") &&
                 Catch::Contains("commits        2 (sum of the regions' generations)\n") &&
                 Catch::Contains("committed      2.9 KiB (newest header of each region)\n") &&
                 Catch::Contains("region   capacity                         slots   length  "
                                 "generation  newest header\n") &&
                 Catch::Contains("'other'   4.0 KiB    3 compact slots of 8.0 KiB        -  "
                                 "         0          never\n") &&
                 Catch::EndsWith("\n(slot headers only; payloads not checked: run verify)\n"));
  // Headers only: never an unqualified "newest commit".
  CHECK_THAT(result.stdout_bytes,
             !Catch::Contains("newest commit") && !Catch::Contains("last commit"));
  CHECK_THAT(result.stdout_bytes,
             Catch::Matches("(.|\n)*\nnewest header  [0-9]+ s ago \\(payload not checked: run "
                            "verify\\)\n(.|\n)*"));
  CHECK_THAT(result.stdout_bytes,
             Catch::Matches("(.|\n)*'state'  64\\.0 KiB  3 aligned slots of 128\\.0 KiB  "
                            "2\\.9 KiB           2 +[0-9]+ s ago\n(.|\n)*"));

  result = Regionctl({"stat", path, "--json"});
  RequireSuccess(result);
  const nlohmann::json document = ParseJson(result);
  CHECK(document["path"] == path);
  CHECK(document["region_count"] == 2);
  CHECK(document["region_capacity"] == 64 * 1024 + 4 * 1024);
  CHECK(document["commits"] == 2);
  CHECK(document["committed_bytes"] == 3000);
  CHECK(document["age_seconds"].is_number_unsigned());
  CHECK(document["payload_checked"] == false);
  REQUIRE(document["regions"].size() == 2);
  const nlohmann::json& state = document["regions"][0];
  CHECK(state["name"] == "state");
  CHECK(state["capacity"] == 65536);
  CHECK(state["length"] == 3000);
  CHECK(state["generation"] == 2);
  CHECK(state["commit_unix_ns"] == document["newest_commit_unix_ns"]);
  CHECK(state["age_seconds"].is_number_unsigned());
  CHECK(state["damaged"] == false);
  CHECK(state["payload_checked"] == false);
  const nlohmann::json& other = document["regions"][1];
  CHECK(other["generation"] == 0);
  CHECK(other["commit_unix_ns"].is_null());
  CHECK(other["age_seconds"].is_null());

  RequireFailure(Regionctl({"stat", dir.File("none.rs")}), kExitFailure);
  RequireFailure(Regionctl({"stat", path, "--bogus"}), kExitUsage);
  WriteWholeFile(dir.File("garbage.rs"), PatternBytes(8192, 3));
  RequireFailure(Regionctl({"stat", dir.File("garbage.rs")}), kExitInvalidStore);
}

TEST_CASE("regionctl dump prints hex and ASCII lines like xxd", "[regionctl][dump]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::string text = "Hello, regionstore!\n";
  std::vector<std::byte> payload(text.size() + 2);
  std::memcpy(payload.data(), text.data(), text.size());
  payload[text.size()] = std::byte{0x01};
  payload[text.size() + 1] = std::byte{0xff};
  MustCommit(path, "state", payload, 1);

  ProcessResult result = Regionctl({"dump", path, "--region", "state"});
  RequireSuccess(result);
  CHECK(result.stdout_bytes ==
        "00000000: 4865 6c6c 6f2c 2072 6567 696f 6e73 746f  Hello, regionsto\n"
        "00000010: 7265 210a 01ff                           re!...\n");

  RequireSuccess(Regionctl({"write", path, "--offset", "17"},
                           std::vector<std::byte>{std::byte{'a'}, std::byte{'b'}, std::byte{'c'}}));
  result = Regionctl({"dump", path, "--offset", "16", "--length", "20"});
  RequireSuccess(result);
  CHECK(result.stdout_bytes ==
        "00000010: 0061 6263 0000 0000 0000 0000 0000 0000  .abc............\n"
        "00000020: 0000 0000                                ....\n");
  // Without --length: to the end of the data area (1 MiB here).
  result = Regionctl({"dump", path, "--offset", "1048560"});
  RequireSuccess(result);
  CHECK(result.stdout_bytes ==
        "000ffff0: 0000 0000 0000 0000 0000 0000 0000 0000  ................\n");

  // A reader that stops early (| head) ends the dump quietly; a 16 MiB data
  // area is 4 MiB of lines, far more than a pipe holds.
  const std::string big = CreateStore(dir, "big.rs", "16MiB");
  result = testing::RunProcess("/bin/bash",
                               {"-c", "set -o pipefail; '" + std::string(REGIONCTL_PATH) +
                                          "' dump '" + big + "' | head -c 100 >/dev/null"},
                               {});
  CHECK(result.exit_code == 0);
  CHECK(result.stderr_bytes.empty());

  RequireFailure(Regionctl({"dump", path, "--offset", "1MiB", "--length", "1"}), kExitUsage);
  RequireFailure(Regionctl({"dump", path, "--region", "state", "--offset", "3"}), kExitUsage);
  RequireFailure(Regionctl({"dump", path, "--region", "nosuch"}), kExitUsage);
  RequireFailure(Regionctl({"dump", path, "--region", "other"}), kExitFailure);  // no commit
  RequireFailure(Regionctl({"dump", dir.File("none.rs")}), kExitFailure);
}

TEST_CASE("regionctl escapes region names in human output and keeps JSON valid for any path",
          "[regionctl]") {
  TempDir dir;
  // Valid names, but a backslash, a quote and a right-to-left override (which
  // would reorder the rest of the line on a terminal) are shown escaped.
  const std::string tricky = "a\\b'c\342\200\256z";  // U+202E, octal
  const std::string escaped = "'a\\\\b\\'c\\xe2\\x80\\xaez'";
  // A path that is not UTF-8: JSON output replaces the byte instead of failing.
  const std::string path = CreateCheckpointStore(dir, "bad-\xff.rs", {tricky + ":1KiB"});
  const std::vector<std::byte> payload = PatternBytes(1024, 48);

  ProcessResult result = Regionctl({"commit", path, tricky}, payload);
  RequireSuccess(result);
  CHECK(result.stdout_bytes ==
        "committed generation 1 (1.0 KiB) to " + escaped + ", durability sync\n");
  CHECK(MustLoad(path, tricky) == payload);

  result = Regionctl({"inspect", path});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::Contains("name=" + escaped + " capacity=1024 "));
  result = Regionctl({"verify", path});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::Contains("region " + escaped + ": capacity 1024"));
  CHECK_THAT(result.stdout_bytes, !Catch::Contains("\342\200\256"));

  const std::string replaced_path = dir.File("bad-\xef\xbf\xbd.rs");  // U+FFFD
  for (const auto& args : std::vector<std::vector<std::string>>{{"inspect", path, "--json"},
                                                                {"verify", path, "--json"}}) {
    INFO(Describe(args));
    result = Regionctl(args);
    RequireSuccess(result);
    const nlohmann::json document = ParseJson(result);
    CHECK(document["path"] == replaced_path);
    CHECK(document["regions"][0]["name"] == tricky);  // JSON escapes nothing it need not
    CHECK(document["regions"][0]["generation"] == 1);
  }
  result = Regionctl({"commit", path, tricky, "--json"}, payload);
  RequireSuccess(result);
  CHECK(ParseJson(result)["path"] == replaced_path);

  // A failure line shows control bytes of a path as \xNN, never raw.
  const std::string missing = dir.File("missing-\x1b]0;title\x07.rs");
  result = Regionctl({"load", missing, "state"});
  RequireFailure(result, kExitFailure);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("missing-\\x1b]0;title\\x07.rs"));
  CHECK(result.stderr_bytes.find('\x1b') == std::string::npos);
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
