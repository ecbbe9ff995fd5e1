// regionctl create's slot layouts, --checkpoints-from and progress bar, and
// inspect, stat and verify on many regions: driven as a separate process,
// asserting exact bytes and exit codes (the other test_regionctl_*.cc have
// the rest).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "regionstore/regionstore.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/regionctl_stores.h"
#include "support/skip.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH only when the tool is built.
#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

void WriteText(const std::string& path, std::string_view text) {
  testing::WriteWholeFile(path, {reinterpret_cast<const std::byte*>(text.data()),
                                 reinterpret_cast<const std::byte*>(text.data()) + text.size()});
}

// regionctl's "8.0 KiB" for a whole number of KiB below 1 MiB.
std::string KiBText(uint64_t bytes) { return std::to_string(bytes / 1024) + ".0 KiB"; }

TEST_CASE("regionctl create --slot-layout and NAME:CAPACITY:LAYOUT pick each region's slots",
          "[regionctl][layout]") {
  TempDir dir;
  const std::string path = dir.File("store.rs");
  // aligned by --slot-layout; compact by its own suffix; auto over 256 KiB
  // (aligned); a name holding ":compact" followed by a capacity only.
  // Protocol 1, so that compact slots are the only incompat feature.
  const ProcessResult created =
      Regionctl({"create", path, "--size", "0", "--protocol", "1", "--slot-layout", "aligned",
                 "--checkpoint", "a:100", "--checkpoint", "b:100:compact", "--checkpoint",
                 "c:257KiB:auto", "--checkpoint", "x:compact:1KiB"});
  RequireSuccess(created);
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t compact_stride = (4096 + 100 + page - 1) / page * page;
  const StoreInfo info = MustReadInfo(path);
  CHECK_THAT(created.stdout_bytes,
             Catch::StartsWith("created '" + path + "': data area 0 B, file "));
  CHECK_THAT(
      created.stdout_bytes,
      Catch::EndsWith(
          " MiB\n"
          "  checkpoint region 'a': capacity 100 B, 3 aligned slots of 128.0 KiB\n"
          "  checkpoint region 'b': capacity 100 B, 3 compact slots of " +
          KiBText(compact_stride) +
          "\n"
          "  checkpoint region 'c': capacity 257.0 KiB, 3 aligned slots of 384.0 KiB\n"
          "  checkpoint region 'x:compact': capacity 1.0 KiB, 3 aligned slots of 128.0 KiB\n"));
  REQUIRE(info.regions.size() == 4);
  CHECK(info.regions[1].layout == SlotLayout::kCompact);
  CHECK(info.regions[1].slot_stride == compact_stride);
  CHECK(info.incompat_flags == 1);

  const nlohmann::json inspect = JsonOf({"inspect", path, "--json"});
  CHECK(inspect["incompat_flags"] == 1);
  CHECK(inspect["incompat_features"] == nlohmann::json::array({"compact_slots"}));
  const nlohmann::json stat = JsonOf({"stat", path, "--json"});
  const nlohmann::json verify = JsonOf({"verify", path, "--json"});
  const std::vector<std::string> layouts = {"aligned", "compact", "aligned", "aligned"};
  for (size_t index = 0; index < layouts.size(); ++index) {
    INFO("region " << index);
    const uint64_t alignment = layouts[index] == "compact" ? page : 65536;
    for (const nlohmann::json* document : {&inspect, &stat, &verify}) {
      const nlohmann::json& region = (*document)["regions"][index];
      CHECK(region["layout"] == layouts[index]);
      CHECK(region["slot_alignment"] == alignment);
      CHECK(region["slot_stride"] == info.regions[index].slot_stride);
    }
  }

  const ProcessResult table = Regionctl({"inspect", path});
  RequireSuccess(table);
  CHECK_THAT(table.stdout_bytes,
             Catch::Contains("\nincompat_flags       0x00000001 (compact_slots)\n") &&
                 Catch::Contains(" slot_stride=131072 layout=aligned slot_alignment=65536\n") &&
                 Catch::Contains(" layout=compact slot_alignment=" + std::to_string(page) + "\n"));
  CHECK_THAT(Regionctl({"verify", path}).stdout_bytes,
             Catch::Contains("region 'b': capacity 100 (100 B), 3 compact slots of "));

  // Only aligned slots: no incompatible feature, as before 0.5.
  const std::string plain = dir.File("plain.rs");
  RequireSuccess(Regionctl(
      {"create", plain, "--size", "0", "--protocol", "1", "--checkpoint", "a:100:aligned"}));
  const nlohmann::json plain_json = JsonOf({"inspect", plain, "--json"});
  CHECK(plain_json["incompat_flags"] == 0);
  CHECK(plain_json["incompat_features"] == nlohmann::json::array());
  CHECK_THAT(Regionctl({"inspect", plain}).stdout_bytes,
             Catch::Contains("\nincompat_flags       0x00000000 (none)\n"));
}

TEST_CASE("regionctl create refuses a bad slot layout with exit 2 and creates nothing",
          "[regionctl][layout]") {
  struct Case {
    std::vector<std::string> args;
    std::string message;  // what stderr must say
  };
  const Case bad = GENERATE(
      Case{{"--slot-layout", "compat"},
           "--slot-layout: unknown slot layout 'compat': use auto, compact or aligned"},
      Case{{"--slot-layout", "COMPACT"}, "unknown slot layout 'COMPACT'"},
      Case{{"--checkpoint", "a:compat"},
           "--checkpoint 'a:compat': 'compat' is neither a capacity (e.g. 64KiB) nor a slot "
           "layout (auto, compact, aligned)\n"},
      Case{{"--checkpoint", "a:compact"},
           "--checkpoint 'a:compact': expected NAME:CAPACITY[:LAYOUT], e.g. state:64KiB or "
           "log:100:compact (LAYOUT: auto, compact or aligned)\n"},
      Case{{"--checkpoint", ":100:compact"}, "--checkpoint ':100:compact': "},
      Case{{"--checkpoint", "a:0:aligned"}, "the capacity must be at least 1 byte\n"},
      Case{{"--checkpoints-from", ""}, "an empty FILE name: use '-' for standard input"});
  TempDir dir;
  std::vector<std::string> args = {"create", dir.File("store.rs"), "--size", "0"};
  args.insert(args.end(), bad.args.begin(), bad.args.end());
  const ProcessResult result = Regionctl(args);
  RequireFailure(result, kExitUsage);
  CHECK_THAT(result.stderr_bytes, Catch::Contains(bad.message));
  CHECK(dir.List().empty());
}

TEST_CASE("regionctl create --checkpoints-from names the line of a bad entry", "[regionctl]") {
  TempDir dir;
  const std::string path = dir.File("store.rs");
  const std::string list = dir.File("list.txt");
  const auto refused = [&](const std::string& text, const std::string& stderr_bytes) {
    WriteText(list, text);
    const ProcessResult result =
        Regionctl({"create", path, "--size", "0", "--checkpoints-from", list});
    RequireFailure(result, kExitUsage);
    CHECK(result.stderr_bytes == stderr_bytes);
    CHECK_FALSE(std::filesystem::exists(path));
  };
  const std::string prefix =
      "regionctl: invalid argument: create '" + path + "': --checkpoints-from '" + list + "' ";
  // Comments, blank lines and CRLF count as lines.
  refused("# regions\n\na:1KiB\r\n \t\nb:64K:aligne\n",
          prefix + "line 5: 'b:64K:aligne': 'aligne' is neither a capacity (e.g. 64KiB) nor a " +
              "slot layout (auto, compact, aligned)\n");
  refused("a:1KiB\nb:2KiB:compact\na:3KiB\n",
          prefix + "line 3: 'a:3KiB': region name 'a' is given twice (first at line 1)\n");
  refused("ok:1\nno-capacity\n", prefix +
                                     "line 2: 'no-capacity': expected NAME:CAPACITY[:LAYOUT], "
                                     "e.g. state:64KiB or log:100:compact (LAYOUT: auto, "
                                     "compact or aligned)\n");

  // After the --checkpoint options, checked against them too.
  WriteText(list, "b:1\na:1\n");
  ProcessResult result =
      Regionctl({"create", path, "--size", "0", "--checkpoints-from", list, "--checkpoint", "a:5"});
  RequireFailure(result, kExitUsage);
  CHECK(result.stderr_bytes ==
        prefix + "line 2: 'a:1': region name 'a' is given twice (first at --checkpoint 'a:5')\n");

  // A missing file is a failure (exit 1), as for every other input file.
  result = Regionctl({"create", path, "--size", "0", "--checkpoints-from", dir.File("none.txt")});
  RequireFailure(result, kExitFailure);
  CHECK_THAT(result.stderr_bytes,
             Catch::Contains("none.txt") && Catch::Contains("No such file or directory"));
  CHECK_FALSE(std::filesystem::exists(path));

  // Accepted: the order is --checkpoint first, then the file's lines.
  WriteText(list, "# name:capacity[:layout]\nb c:2KiB:aligned\r\n\nd:#1:1\n");
  RequireSuccess(Regionctl(
      {"create", path, "--size", "0", "--checkpoints-from", list, "--checkpoint", "a:1"}));
  const StoreInfo info = MustReadInfo(path);
  REQUIRE(info.regions.size() == 3);
  CHECK(info.regions[0].name == "a");
  CHECK(info.regions[1].name == "b c");
  CHECK(info.regions[1].layout == SlotLayout::kAligned);
  CHECK(info.regions[2].name == "d:#1");
  CHECK(info.regions[2].capacity == 1);
}

TEST_CASE("regionctl create --checkpoints-from - makes 10,000 regions, inspect lists them",
          "[regionctl][slow]") {
  TempDir dir;
  const std::string path = dir.File("many.rs");
  constexpr size_t kRegions = 10000;
  std::string list;
  for (size_t index = 0; index < kRegions; ++index) {
    list += "region-" + std::to_string(index) + ":100\n";
  }
  RequireSuccess(
      Regionctl({"create", path, "--size", "0", "--checkpoints-from", "-"}, TextBytes(list)));
  const StoreInfo info = MustReadInfo(path);
  REQUIRE(info.regions.size() == kRegions);
  CHECK(info.regions[9999].name == "region-9999");
  // Compact slots, large region table, and protocol 2's three.
  CHECK(info.incompat_flags == 31);
  const nlohmann::json document = JsonOf({"inspect", path, "--json"});
  CHECK(document["incompat_features"] ==
        nlohmann::json::array(
            {"compact_slots", "large_region_table", "batch_log", "sidecar", "journal"}));
  REQUIRE(document["regions"].size() == kRegions);
  CHECK(document["regions"][9999]["name"] == "region-9999");
  CHECK(document["regions"][9999]["layout"] == "compact");
  CHECK(document["regions"][9999]["slots_offset"] == info.regions[9999].slots_offset);
  const nlohmann::json stat = JsonOf({"stat", path, "--json"});
  CHECK(stat["region_count"] == kRegions);
  CHECK(stat["region_capacity"] == 100 * kRegions);

  // A region it lacks: the message names the first ten, not 10,000.
  const ProcessResult missing = Regionctl({"load", path, "nope"});
  RequireFailure(missing, kExitUsage);
  CHECK_THAT(missing.stderr_bytes,
             Catch::EndsWith("no checkpoint region named 'nope'; the store has 'region-0', "
                             "'region-1', 'region-2', 'region-3', 'region-4', 'region-5', "
                             "'region-6', 'region-7', 'region-8', 'region-9' and 9990 more "
                             "(regionctl inspect lists them)\n"));
}

TEST_CASE("regionctl create draws a progress bar on a terminal past 1 GiB, never when piped",
          "[regionctl][slow]") {
  TempDir dir;
  const std::string big = dir.File("big.rs");
  // The file is 1 GiB + 5 MiB (the header area with the batch journal): just
  // over the bar's limit.
  const std::vector<std::string> create_big = {"create", big, "--size", "1GiB"};

  // Piped (this test's pipes): the report on stdout, nothing on stderr.
  ProcessResult result = Regionctl(create_big);
  RequireSuccess(result);
  CHECK(result.stderr_bytes.empty());
  CHECK(result.stdout_bytes ==
        "created '" + big + "': data area 1.0 GiB, file 1078984704 B (~1.0 GiB)\n");
  std::filesystem::remove(big);

  const std::string script = "/usr/bin/script";
  if (::access(script.c_str(), X_OK) != 0) {
    SKIP_CASE("no /usr/bin/script to run regionctl under a pseudo-terminal");
    return;
  }
  // Under a pseudo-terminal; a file of exactly 1 GiB (1019 MiB + 5 MiB)
  // gets no bar.
  const std::string exact = dir.File("exact.rs");
  for (const auto& [store, size, wants_bar] :
       {std::tuple{big, "1GiB", true}, std::tuple{exact, "1019MiB", false}}) {
    INFO(store);
    const std::string command =
        std::string("'") + REGIONCTL_PATH + "' create '" + store + "' --size " + size;
    result = testing::RunProcess(script, {"-qefc", command, "/dev/null"}, {});
    std::filesystem::remove(store);
    INFO("pty transcript: " << result.stdout_bytes);
    REQUIRE(result.exit_code == 0);
    if (wants_bar) {
      CHECK_THAT(result.stdout_bytes,
                 Catch::StartsWith("\rcreate: [") &&
                     Catch::Contains("] 100% (~1.0 GiB of ~1.0 GiB), fsync\r\033[Kcreated ") &&
                     Catch::EndsWith(": data area 1.0 GiB, file 1078984704 B (~1.0 GiB)\r\n"));
    } else {
      CHECK_THAT(result.stdout_bytes,
                 !Catch::Contains("create: [") && Catch::StartsWith("created "));
    }
  }
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
