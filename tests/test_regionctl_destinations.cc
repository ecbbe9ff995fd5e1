// regionctl against the destinations and standard streams users really give
// it: an --output that is the store (by any name), a FIFO or a device where a
// file was expected, a full or closed standard stream. Each case runs the
// tool through /bin/sh with the redirection a user would type, and checks
// the exit code, the one line on stderr and that the store is byte for byte
// what it was.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "regionstore/regionstore.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/skip.h"
#include "support/temp_dir.h"

#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

// `command` run by /bin/sh, with "regionctl" standing for the tool: for the
// redirections (`>>`, `<&-`, `>FULL`) a test cannot express as arguments.
ProcessResult Shell(const std::string& command) {
  return testing::RunProcess("/bin/sh", {"-c", command});
}

std::string Quoted(const std::string& text) { return "'" + text + "'"; }

std::string Tool() { return Quoted(REGIONCTL_PATH); }

std::vector<std::byte> Bytes(std::string_view text) {
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  return {data, data + text.size()};
}

// A 1 MiB store with one 4 KiB checkpoint region "state" holding "abc".
std::string CheckpointStore(const TempDir& dir) {
  const std::string path = dir.File("s.rs");
  RequireSuccess(Regionctl({"create", path, "--size", "1MiB", "--checkpoint", "state:4KiB"}));
  const std::vector<std::byte> payload = Bytes("abc");
  RequireSuccess(Regionctl({"commit", path, "state"}, payload));
  return path;
}

uint64_t Generation(const std::string& path) {
  Result<Store> store = Store::Open(path, OpenMode::kReadOnly);
  REQUIRE(store.ok());
  Result<RegionReport> report = store->Report("state");
  REQUIRE(report.ok());
  return report->generation;
}

// A character device of our own in `dir` (never a system one): mknod needs
// root. Returns nothing, after a "skipped:" warning, without it.
std::optional<std::string> MakeDevice(const TempDir& dir, const std::string& name, unsigned minor) {
  const std::string path = dir.File(name);
  // Major 1 is the kernel's memory devices: minor 3 null, 7 full.
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0) {
    SKIP_CASE("mknod needs root (" << std::strerror(errno) << ")");
    return std::nullopt;
  }
  return path;
}

bool IsCharacterDevice(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

bool IsFifo(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

TEST_CASE("regionctl refuses an --output that is the store, by any name, and leaves it intact",
          "[regionctl][destinations]") {
  TempDir dir;
  const std::string store = CheckpointStore(dir);
  std::filesystem::create_symlink(store, dir.File("link.rs"));
  std::filesystem::create_hard_link(store, dir.File("hard.rs"));
  const std::vector<std::byte> before = ReadWholeFile(store);
  for (const std::string& name : {store, dir.File("link.rs"), dir.File("hard.rs")}) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"load", store, "state", "--output", name},
             {"read", store, "--offset", "0", "--length", "16", "--output", name},
             {"export", store, "state", "--output", name},
             {"export", store, "state", "--in-place", "--output", name},
         }) {
      INFO(args[0] << " --output " << name);
      const ProcessResult result = Regionctl(args);
      RequireFailure(result, kExitUsage);
      CHECK_THAT(result.stderr_bytes, Catch::Contains("is the store itself"));
      REQUIRE(ReadWholeFile(store) == before);
    }
  }
}

TEST_CASE("regionctl refuses a standard output appended to the store (>>) before it runs",
          "[regionctl][destinations]") {
  TempDir dir;
  const std::string store = CheckpointStore(dir);
  const std::vector<std::byte> before = ReadWholeFile(store);
  for (const std::string command :
       {"inspect", "stat", "verify", "dump", "load", "read", "commit", "write", "import"}) {
    std::string line = Tool() + " " + command + " " + Quoted(store);
    if (command == "load" || command == "commit") line += " state";
    if (command == "import") line += " state --input /dev/null";
    if (command == "read") line += " --offset 0 --length 4";
    if (command == "write") line += " --offset 0";
    line += " </dev/null >>" + Quoted(store);
    INFO(line);
    const ProcessResult result = Shell(line);
    RequireFailure(result, kExitUsage);
    CHECK_THAT(result.stderr_bytes, Catch::Contains("standard output is the store file itself"));
    REQUIRE(ReadWholeFile(store) == before);
  }
  CHECK(Generation(store) == 1);
}

TEST_CASE("regionctl export refuses a FIFO or a device in FILE's place unless --in-place",
          "[regionctl][destinations]") {
  TempDir dir;
  const std::string store = CheckpointStore(dir);
  const std::string fifo = dir.File("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  std::filesystem::create_symlink(fifo, dir.File("fifo-link"));

  for (const std::string& output : {fifo, dir.File("fifo-link")}) {
    INFO(output);
    const ProcessResult refused = Regionctl({"export", store, "state", "--output", output});
    RequireFailure(refused, kExitUsage);
    CHECK_THAT(refused.stderr_bytes,
               Catch::Contains("not a regular file") && Catch::Contains("--in-place"));
    REQUIRE(IsFifo(fifo));
  }
  REQUIRE(std::filesystem::is_symlink(dir.File("fifo-link")));

  // --in-place writes into the FIFO: its reader gets the payload.
  const std::string received = dir.File("received");
  const ProcessResult in_place =
      Shell("cat " + Quoted(fifo) + " >" + Quoted(received) + " & " + Tool() + " export " +
            Quoted(store) + " state --in-place --output " + Quoted(fifo) + "; " +
            "status=$?; wait; exit $status");
  RequireSuccess(in_place);
  CHECK(ReadWholeFile(received) == Bytes("abc"));
  CHECK(IsFifo(fifo));

  const std::optional<std::string> null_device = MakeDevice(dir, "null", 3);
  if (!null_device.has_value()) return;
  const ProcessResult device = Regionctl({"export", store, "state", "--output", *null_device});
  RequireFailure(device, kExitUsage);
  REQUIRE(IsCharacterDevice(*null_device));
  RequireSuccess(Regionctl({"export", store, "state", "--in-place", "--output", *null_device}));
  REQUIRE(IsCharacterDevice(*null_device));
  // A regular file is still replaced atomically: a new inode.
  const std::string plain = dir.File("plain.bin");
  RequireSuccess(Regionctl({"export", store, "state", "--output", plain}));
  CHECK(ReadWholeFile(plain) == Bytes("abc"));
}

TEST_CASE("regionctl create --force refuses a FIFO, a device or a directory before writing",
          "[regionctl][destinations]") {
  TempDir dir;
  const std::string fifo = dir.File("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const std::string directory = dir.File("directory");
  std::filesystem::create_directory(directory);
  std::vector<std::string> targets = {fifo, directory};
  const std::optional<std::string> device = MakeDevice(dir, "null", 3);
  if (device.has_value()) targets.push_back(*device);
  for (const std::string& target : targets) {
    INFO(target);
    const ProcessResult result = Regionctl({"create", target, "--size", "64KiB", "--force"});
    RequireFailure(result, kExitUsage);
    CHECK_THAT(result.stderr_bytes, Catch::Contains("refused"));
  }
  CHECK(IsFifo(fifo));
  CHECK(std::filesystem::is_directory(directory));
  if (device.has_value()) CHECK(IsCharacterDevice(*device));
  // Nothing else appeared: no store, no temp.
  CHECK(dir.List().size() == targets.size());
}

TEST_CASE("a command that changed the store but could not report it exits 7, not 1",
          "[regionctl][destinations]") {
  TempDir dir;
  const std::string store = CheckpointStore(dir);
  const std::optional<std::string> full = MakeDevice(dir, "full", 7);
  if (!full.has_value()) return;
  const std::string payload = dir.File("payload.bin");
  testing::WriteWholeFile(payload, Bytes("new"));

  struct Case {
    std::string line;
    bool changes;
  };
  const std::vector<Case> cases = {
      {"commit " + Quoted(store) + " state --input " + Quoted(payload), true},
      {"import " + Quoted(store) + " state --input " + Quoted(payload) + " --json", true},
      {"write " + Quoted(store) + " --offset 4096 --input " + Quoted(payload), true},
      {"export " + Quoted(store) + " state --output " + Quoted(dir.File("out.bin")), true},
      {"create " + Quoted(dir.File("new.rs")) + " --size 64KiB", true},
      // Nothing changed: a lost report is an ordinary failure.
      {"inspect " + Quoted(store), false},
  };
  uint64_t generation = Generation(store);
  for (const Case& each : cases) {
    INFO(each.line);
    const ProcessResult result = Shell(Tool() + " " + each.line + " >" + Quoted(*full));
    // create may warn first (btrfs: what NOCOW costs); then one failure line.
    INFO("stderr: " << result.stderr_bytes);
    REQUIRE(result.exit_code == (each.changes ? kExitChangedReportLost : 1));
    const std::vector<std::string> lines = result.StderrLines();
    REQUIRE(!lines.empty());
    for (size_t index = 0; index + 1 < lines.size(); ++index) {
      CHECK_THAT(lines[index], Catch::StartsWith("regionctl: warning: "));
    }
    CHECK_THAT(lines.back(),
               Catch::StartsWith("regionctl: ") && !Catch::StartsWith("regionctl: warning: "));
    CHECK_THAT(result.stderr_bytes, Catch::Contains("write output '<stdout>'"));
    if (each.changes) CHECK_THAT(result.stderr_bytes, Catch::Contains("do not retry"));
  }
  // Both commits landed: 1 + 2.
  CHECK(Generation(store) == generation + 2);
  CHECK(std::filesystem::exists(dir.File("new.rs")));
  CHECK(ReadWholeFile(dir.File("out.bin")) == Bytes("new"));
}

TEST_CASE("regionctl with a closed standard input never reads the store as the payload",
          "[regionctl][destinations]") {
  TempDir dir;
  const std::string store = CheckpointStore(dir);
  const std::vector<std::byte> before = ReadStoreButIntent(store);
  for (const std::string& line :
       {"commit " + Quoted(store) + " state", "write " + Quoted(store) + " --offset 0"}) {
    INFO(line);
    const ProcessResult result = Shell(Tool() + " " + line + " <&-");
    RequireFailure(result, kExitUsage);
    CHECK_THAT(result.stderr_bytes, Catch::Contains("standard input is closed"));
    REQUIRE(ReadStoreButIntent(store) == before);
  }
  // With --input the closed stdin does not matter, and the store did not
  // land on descriptor 0 (the payload is the file's, not the store's).
  const std::string payload = dir.File("payload.bin");
  testing::WriteWholeFile(payload, Bytes("xyz"));
  RequireSuccess(
      Shell(Tool() + " commit " + Quoted(store) + " state --input " + Quoted(payload) + " <&-"));
  const ProcessResult loaded = Regionctl({"load", store, "state"});
  RequireSuccess(loaded);
  CHECK(loaded.stdout_bytes == "xyz");
}

TEST_CASE("regionctl refuses to print a payload or a dump to a closed standard output",
          "[regionctl][destinations]") {
  TempDir dir;
  const std::string store = CheckpointStore(dir);
  for (const std::string& line :
       {"load " + Quoted(store) + " state", "read " + Quoted(store) + " --offset 0 --length 16",
        "dump " + Quoted(store) + " --region state"}) {
    INFO(line);
    // stderr goes to stdout's pipe, which the test reads.
    const ProcessResult result = Shell(Tool() + " " + line + " 2>&1 >&-");
    CHECK(result.exit_code == kExitUsage);
    CHECK_THAT(result.stdout_bytes, Catch::Contains("standard output is closed"));
  }
  // A report that cannot be printed is a failure too: 1 when nothing
  // changed, 7 when the command changed the store.
  const ProcessResult inspected = Shell(Tool() + " inspect " + Quoted(store) + " 2>&1 >&-");
  CHECK(inspected.exit_code == 1);
  CHECK_THAT(inspected.stdout_bytes, Catch::Contains("standard output is closed"));
  const std::string payload = dir.File("payload.bin");
  testing::WriteWholeFile(payload, Bytes("new"));
  const uint64_t before = Generation(store);
  const ProcessResult committed = Shell(Tool() + " commit " + Quoted(store) + " state --input " +
                                        Quoted(payload) + " 2>&1 >&-");
  CHECK(committed.exit_code == kExitChangedReportLost);
  CHECK_THAT(committed.stdout_bytes,
             Catch::Contains("standard output is closed") && Catch::Contains("do not retry"));
  CHECK(Generation(store) == before + 1);
  // And a closed stderr does not change the exit code of a failure.
  CHECK(Shell(Tool() + " load " + Quoted(store) + " nosuchregion 2>&-").exit_code == kExitUsage);
}

TEST_CASE("regionctl quotes paths everywhere and shows inexact sizes in bytes",
          "[regionctl][destinations]") {
  TempDir dir;
  const std::string store = dir.File("new\nline.rs");
  const ProcessResult created = Regionctl({"create", store, "--size", "4095"});
  RequireSuccess(created);
  // One line per fact: the newline in the path is escaped, never printed.
  CHECK_THAT(created.stdout_bytes, Catch::StartsWith("created '" + dir.File("new\\x0aline.rs") +
                                                     "': data area 4095 B (~4.0 KiB), file "));
  const ProcessResult inspected = Regionctl({"inspect", store});
  RequireSuccess(inspected);
  CHECK_THAT(inspected.stdout_bytes, Catch::Contains("new\\x0aline.rs") &&
                                         Catch::Contains("4095 (~4.0 KiB)") &&
                                         !Catch::Contains("new\nline"));
  const ProcessResult verified = Regionctl({"verify", store});
  RequireSuccess(verified);
  CHECK_THAT(verified.stdout_bytes, Catch::StartsWith("'" + dir.File("new\\x0aline.rs") + "': "));
  CHECK_THAT(verified.stdout_bytes, !Catch::Contains("new\nline"));
}

TEST_CASE("regionctl range errors name the command, not the library's view",
          "[regionctl][destinations]") {
  TempDir dir;
  const std::string store = CheckpointStore(dir);
  for (const std::string command : {"read", "dump"}) {
    INFO(command);
    const ProcessResult result = Regionctl({command, store, "--offset", "2MiB", "--length", "1"});
    RequireFailure(result, kExitUsage);
    CHECK_THAT(result.stderr_bytes,
               Catch::StartsWith("regionctl: invalid argument: " + std::string(command) + " '"));
    CHECK_THAT(result.stderr_bytes, !Catch::Contains("view"));
  }
}

TEST_CASE("regionctl bench refuses --seconds nan and never recommends the raw pwrite arm",
          "[regionctl][destinations]") {
  TempDir dir;
  for (const std::string seconds : {"nan", "inf", "-1", "0"}) {
    INFO(seconds);
    RequireFailure(Regionctl({"bench", "--dir", dir.path().string(), "--seconds", seconds}),
                   kExitUsage);
  }
  const ProcessResult bench =
      Regionctl({"bench", "--dir", dir.path().string(), "--seconds", "0.002"});
  RequireSuccess(bench);
  size_t recommendations = 0;
  for (size_t at = bench.stdout_bytes.find("recommendation: "); at != std::string::npos;
       at = bench.stdout_bytes.find("recommendation: ", at + 1)) {
    const std::string line = bench.stdout_bytes.substr(at, bench.stdout_bytes.find('\n', at) - at);
    INFO(line);
    CHECK_THAT(line, !Catch::Contains(": pwrite ("));
    ++recommendations;
  }
  CHECK(recommendations == 4);
}

TEST_CASE("regionctl JSON gives an RFC 3339 string beside every nanosecond timestamp",
          "[regionctl][destinations]") {
  TempDir dir;
  const std::string store = CheckpointStore(dir);
  const ProcessResult inspected = Regionctl({"inspect", store, "--json"});
  RequireSuccess(inspected);
  const auto inspect = nlohmann::json::parse(inspected.stdout_bytes);
  const ProcessResult stated = Regionctl({"stat", store, "--json"});
  RequireSuccess(stated);
  const auto stat = nlohmann::json::parse(stated.stdout_bytes);
  // Checks every "*_unix_ns" key of `object` has its "*_utc" twin, naming
  // the same second.
  size_t checked = 0;
  const auto check_pairs = [&checked](const nlohmann::json& object, const auto& self) -> void {
    if (object.is_array()) {
      for (const auto& element : object) self(element, self);
      return;
    }
    if (!object.is_object()) return;
    for (auto item = object.begin(); item != object.end(); ++item) {
      self(item.value(), self);
      const std::string& key = item.key();
      if (key.size() < 8 || key.compare(key.size() - 8, 8, "_unix_ns") != 0) continue;
      const std::string twin = key.substr(0, key.size() - 8) + "_utc";
      INFO(key);
      REQUIRE(object.contains(twin));
      if (item.value().is_null()) {
        CHECK(object[twin].is_null());
        continue;
      }
      const uint64_t nanos = item.value().get<uint64_t>();
      const std::string text = object[twin].get<std::string>();
      REQUIRE(text.size() == 30);  // 2026-12-02T00:46:30.454825559Z
      CHECK(text.back() == 'Z');
      CHECK(std::stoull(text.substr(20, 9)) == nanos % 1000000000);
      ++checked;
    }
  };
  check_pairs(inspect, check_pairs);
  check_pairs(stat, check_pairs);
  // created (inspect, stat), the region's commit (inspect, stat), its slot
  // (inspect), the newest commit (stat).
  CHECK(checked >= 6);
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
