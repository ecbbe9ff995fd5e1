// regionctl's command line as a contract: usage errors (exit 2, one line on
// stderr, nothing changed), help and version, missing or unopenable stores
// and inputs (exit 1), files that are no store (exit 3), and store paths
// that are symbolic links.
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
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "format.h"
#include "regionstore/regionstore.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/regionctl_stores.h"
#include "support/skip.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH only when the tool is built.
#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

TEST_CASE("regionctl usage errors exit with 2, print one line on stderr and change nothing",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::vector<std::byte> before = ReadWholeFile(path);
  const std::string input = dir.File("input.bin");
  WriteWholeFile(input, PatternBytes(100, 5));
  const std::vector<std::vector<std::string>> commands = {
      {"inspect", path, "--bogus"},
      {"inspect"},
      {"inspect", path, path},
      {"frobnicate", path},
      {"--bogus"},
      {"create", dir.File("new.rs"), "--size", "12XB"},
      {"create", dir.File("new.rs")},
      {"write", path, "--offset", "0", "--durability", "fast", "--input", input},
      {"write", path, "--offset", "0", "--durability", "", "--input", input},
      {"write", path, "--input", input},
      {"write", "--offset", "0", "--input", input},
      {"write", path, "--offset", "12XB", "--input", input},
      {"read", path, "--offset", "0"},
      {"read", path, "--offset", "x", "--length", "1"},
      {"read", path, "--offset", "0", "--length", "1", "--output"},
      {"create", "--version"},
  };
  for (const auto& args : commands) {
    INFO(Describe(args));
    RequireFailure(Regionctl(args), kExitUsage);
  }
  CHECK(ReadWholeFile(path) == before);
  CHECK(dir.List() == std::vector<std::string>{"input.bin", "store.rs"});
}

TEST_CASE("regionctl with no arguments prints help and exits with 2", "[regionctl]") {
  const ProcessResult result = Regionctl({});
  CHECK(result.exit_code == kExitUsage);
  CHECK_THAT(result.stdout_bytes, Catch::Contains("Usage: regionctl"));
  CHECK(std::count(result.stderr_bytes.begin(), result.stderr_bytes.end(), '\n') == 1);
  CHECK_THAT(result.stderr_bytes, Catch::StartsWith("regionctl: "));
}

TEST_CASE("regionctl --help, --version and each command's --help exit with 0", "[regionctl]") {
  ProcessResult result = Regionctl({"--version"});
  RequireSuccess(result);
  CHECK(result.stdout_bytes == "regionctl " REGIONSTORE_VERSION_STRING "\n");

  result = Regionctl({"--help"});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::Contains("Example:") && Catch::Contains("create") &&
                                      Catch::Contains("inspect") && Catch::Contains("write") &&
                                      Catch::Contains("read") && Catch::Contains("verify") &&
                                      Catch::Contains("commit") && Catch::Contains("load") &&
                                      Catch::Contains("stat") && Catch::Contains("dump") &&
                                      Catch::Contains("export") && Catch::Contains("import") &&
                                      Catch::Contains("Exit codes: 0 success, 1 failure"));

  for (const std::string command : {"create", "inspect", "stat", "write", "read", "verify", "dump",
                                    "commit", "load", "export", "import", "bench"}) {
    INFO(command);
    result = Regionctl({command, "--help"});
    RequireSuccess(result);
    CHECK_THAT(result.stdout_bytes,
               Catch::Contains("Usage: regionctl " + command) && Catch::Contains("Example:\n  ") &&
                   Catch::Contains("regionctl " + command + " ") &&
                   Catch::Contains("Exit codes: 0 success, 1 failure, 2 "
                                   "usage error, 3 not a valid store") &&
                   Catch::Contains("4 busy (another writer holds the "
                                   "store), 5 timed out (load --wait-newer-than),\n6 torn "
                                   "commit (a region's newest commit header is intact"));
  }
}

TEST_CASE("regionctl reports a missing store or input file with exit 1", "[regionctl]") {
  TempDir dir;
  const std::string missing = dir.File("missing.rs");
  RequireAllCommandsRefuse(dir, missing, kExitFailure);
  const ProcessResult result = Regionctl({"inspect", missing});
  CHECK_THAT(result.stderr_bytes, Catch::Contains(missing));

  const std::string path = CreateStore(dir, "store.rs");
  const std::vector<std::byte> before = ReadWholeFile(path);
  const std::string missing_input = dir.File("missing-input.bin");
  const ProcessResult write_result =
      Regionctl({"write", path, "--offset", "0", "--input", missing_input});
  RequireFailure(write_result, kExitFailure);
  CHECK_THAT(write_result.stderr_bytes, Catch::Contains(missing_input));
  CHECK(ReadWholeFile(path) == before);
}

TEST_CASE("regionctl reports a store it may not open with exit 1 and changes nothing",
          "[regionctl]") {
  TempDir dir;
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  const std::string path = CreateStore(dir, "store.rs", "64KiB");
  const std::string control = CreateStore(dir, "control.rs", "64KiB");
  REQUIRE(::chmod(path.c_str(), 0) == 0);
  REQUIRE(::chmod(control.c_str(), 0644) == 0);
  const std::vector<std::byte> before = ReadWholeFile(path);

  // Root ignores file modes through CAP_DAC_OVERRIDE: as root, run regionctl
  // as uid 0 without any capability, so the (root-owned) build tree stays
  // reachable and the file's mode decides.
  std::string program = REGIONCTL_PATH;
  std::vector<std::string> prefix;
  if (::geteuid() == 0) {
    program = ::access("/usr/bin/setpriv", X_OK) == 0 ? "/usr/bin/setpriv" : "/bin/setpriv";
    prefix = {"--inh-caps=-all", "--bounding-set=-all", "--", REGIONCTL_PATH};
  }
  const std::vector<std::byte> stdin_bytes = PatternBytes(10, 3);
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), prefix.begin(), prefix.end());
    testing::RunOptions options;
    options.stdin_bytes = stdin_bytes;
    return testing::RunProcess(program, args, options);
  };
  // The control store is readable by everyone: if even it fails, this
  // account cannot reach the folder and the check below would prove nothing.
  const ProcessResult reachable = run({"inspect", control});
  if (reachable.exit_code != kExitSuccess) {
    SKIP_CASE("cannot run regionctl without privileges here: " << reachable.stderr_bytes);
    return;
  }
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"inspect", path},
           {"read", path, "--offset", "0", "--length", "16"},
           {"write", path, "--offset", "0", "--durability", "none"}}) {
    INFO(Describe(args));
    const ProcessResult result = run(args);
    RequireFailure(result, kExitFailure);
    CHECK_THAT(result.stderr_bytes, Catch::Contains("permission denied"));
    CHECK_THAT(result.stderr_bytes, Catch::Contains(path));
  }
  CHECK(ReadWholeFile(path) == before);
}

TEST_CASE("regionctl refuses a directory as a store with exit 3", "[regionctl]") {
  TempDir dir;
  const std::string directory = dir.File("a-directory");
  std::filesystem::create_directory(directory);
  RequireAllCommandsRefuse(dir, directory, kExitInvalidStore);
}

TEST_CASE("regionctl refuses garbage bytes, an empty file and a short file with exit 3",
          "[regionctl]") {
  TempDir dir;
  const std::string path = dir.File("not-a-store.rs");
  SECTION("2 MiB of garbage") { WriteWholeFile(path, PatternBytes(2 * kMiB, 6)); }
  SECTION("an empty file") { WriteWholeFile(path, {}); }
  SECTION("a file shorter than a superblock") { WriteWholeFile(path, PatternBytes(100, 6)); }
  RequireAllCommandsRefuse(dir, path, kExitInvalidStore);
}

TEST_CASE("regionctl refuses a store with a damaged superblock or the wrong size with exit 3",
          "[regionctl][long]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  std::vector<std::byte> bytes = ReadWholeFile(path);
  SECTION("bad magic") { bytes[format::sb::kMagic] ^= std::byte{0x01}; }
  SECTION("bad checksum") { bytes[format::kSuperblockChecksumOffset] ^= std::byte{0x01}; }
  SECTION("a byte of the superblock flipped") { bytes[format::sb::kDataSize] ^= std::byte{0x10}; }
  SECTION("a newer format version, correctly checksummed") {
    StoreLittleEndian(bytes, format::sb::kVersion, format::kFormatVersion + 1, 4);
    StoreLittleEndian(bytes, format::kSuperblockChecksumOffset,
                      format::Checksum(std::span(bytes).first(format::kSuperblockChecksumOffset)),
                      8);
  }
  SECTION("truncated by 64 KiB") { bytes.resize(bytes.size() - 64 * kKiB); }
  SECTION("extended by 64 KiB") { bytes.resize(bytes.size() + 64 * kKiB); }
  WriteWholeFile(path, bytes);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Every command for each damage in Release; under the sanitizers (where
  // this case took 45 s) the commands that read the superblock differently:
  // the metadata readers, verify, and a writer's open.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"inspect", path},
                                             {"stat", path},
                                             {"verify", path},
                                             {"commit", path, "state", "--durability", "none"}}) {
    INFO(Describe(args));
    RequireFailure(Regionctl(args, PatternBytes(100, 8)), kExitInvalidStore);
    REQUIRE(ReadWholeFile(path) == bytes);
  }
#else
  RequireAllCommandsRefuse(dir, path, kExitInvalidStore);
#endif
}

TEST_CASE("regionctl commit, load and verify usage errors exit 2 and change nothing",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::string plain = CreateStore(dir, "plain.rs", "64KiB");
  const std::vector<std::byte> before = ReadStoreButIntent(path);
  const std::string input = dir.File("input.bin");
  WriteWholeFile(input, PatternBytes(100, 46));
  const std::vector<std::vector<std::string>> commands = {
      {"commit", path},
      {"commit", path, "state", "--durability", "fast", "--input", input},
      {"commit", path, "state", "extra", "--input", input},
      {"commit", path, "nope", "--input", input},  // no such region
      {"commit", plain, "state", "--input", input},
      {"load", path},
      {"load", path, "nope"},
      {"load", plain, "state"},
      {"load", path, "state", "--output"},
      {"verify"},
      {"verify", path, "--bogus"},
      {"create", dir.File("new.rs"), "--size", "0", "--checkpoint"},
      {"create", dir.File("new.rs"), "--size", "0", "--checkpoint", "a:1K", "b:1K"},
  };
  for (const auto& args : commands) {
    INFO(Describe(args));
    RequireFailure(Regionctl(args, PatternBytes(10, 47)), kExitUsage);
  }
  const ProcessResult unknown = Regionctl({"load", path, "nope"});
  CHECK_THAT(unknown.stderr_bytes,
             Catch::Contains("no checkpoint region named 'nope'; the store has 'state', 'other'"));
  CHECK(ReadStoreButIntent(path) == before);
  // The commits that got as far as the writer's open made each store's
  // sidecar (and its identity in the intent area), and nothing else.
  CHECK(dir.List() == std::vector<std::string>{"input.bin", "plain.rs", "plain.rs.shm", "store.rs",
                                               "store.rs.shm"});
}

TEST_CASE("regionctl refuses a store PATH that is a symbolic link unless --follow-symlinks",
          "[regionctl][symlink]") {
  TempDir dir;
  const std::string path = dir.File("store.rs");
  RequireSuccess(Regionctl({"create", path, "--size", "1MiB", "--checkpoint", "state:4KiB"}));
  const std::string link = dir.File("link.rs");
  std::filesystem::create_symlink("store.rs", link);
  const StoreInfo info = MustReadInfo(path);

  // Every command that opens an existing store: exit 2, one line, and the
  // store the link points to unchanged (write and commit included).
  RequireAllCommandsRefuse(dir, link, kExitUsage);
  const std::vector<std::byte> before = ReadWholeFile(path);
  ProcessResult refused = Regionctl({"inspect", link});
  RequireFailure(refused, kExitUsage);
  std::string expected = "regionctl: invalid argument: open '";
  expected += link;
  expected +=
      "': is a symbolic link; refused unless asked to follow it "
      "(SymlinkPolicy::kFollow, regionctl --follow-symlinks)\n";
  CHECK(refused.stderr_bytes == expected);
  const std::vector<std::byte> payload = PatternBytes(100, 5);
  RequireFailure(Regionctl({"write", link, "--offset", "0", "--durability", "none"}, payload),
                 kExitUsage);
  CHECK(ReadWholeFile(path) == before);

  // create --force onto the link would replace the link, not the store.
  ProcessResult forced = Regionctl({"create", link, "--size", "2MiB", "--force"});
  RequireFailure(forced, kExitUsage);
  CHECK_THAT(forced.stderr_bytes, Catch::Contains("is a symbolic link"));
  CHECK(std::filesystem::read_symlink(link) == "store.rs");
  CHECK(ReadWholeFile(path) == before);

  // With --follow-symlinks every command works on the store the link points to.
  ProcessResult inspected = Regionctl({"inspect", "--follow-symlinks", link});
  RequireSuccess(inspected);
  CHECK_THAT(inspected.stdout_bytes, Catch::Contains(FormatUuid(info.uuid)));
  RequireSuccess(Regionctl({"stat", link, "--follow-symlinks"}));
  RequireSuccess(Regionctl({"verify", link, "--follow-symlinks"}));
  RequireSuccess(Regionctl(
      {"write", link, "--follow-symlinks", "--offset", "0", "--durability", "sync"}, payload));
  CHECK(PreadFile(path, info.data_offset, payload.size()) == payload);
  ProcessResult read =
      Regionctl({"read", link, "--follow-symlinks", "--offset", "0", "--length", "100"});
  RequireSuccess(read);
  CHECK(read.stdout_bytes ==
        std::string(reinterpret_cast<const char*>(payload.data()), payload.size()));
  RequireSuccess(Regionctl({"dump", link, "--follow-symlinks", "--length", "16"}));
  RequireSuccess(Regionctl({"commit", link, "state", "--follow-symlinks"}, payload));
  ProcessResult loaded = Regionctl({"load", link, "state", "--follow-symlinks"});
  RequireSuccess(loaded);
  CHECK(loaded.stdout_bytes ==
        std::string(reinterpret_cast<const char*>(payload.data()), payload.size()));
  const std::string exported = dir.File("exported.bin");
  RequireSuccess(Regionctl({"export", link, "state", "--follow-symlinks", "--output", exported}));
  CHECK(ReadWholeFile(exported) == payload);
  RequireSuccess(Regionctl({"import", link, "state", "--follow-symlinks", "--input", exported}));
  Result<VerifyReport> reports = VerifyRegions(path);
  REQUIRE(reports.ok());
  CHECK(reports->regions[0].generation == 2);
  CHECK(std::filesystem::is_symlink(link));

  // Each of those commands documents the flag; create and bench open no
  // existing store and have none.
  for (const std::string command : {"inspect", "stat", "verify", "write", "read", "dump", "commit",
                                    "load", "export", "import"}) {
    INFO(command);
    ProcessResult help = Regionctl({command, "--help"});
    RequireSuccess(help);
    CHECK_THAT(help.stdout_bytes, Catch::Contains("--follow-symlinks"));
  }
  for (const std::string command : {"create", "bench"}) {
    INFO(command);
    ProcessResult help = Regionctl({command, "--help"});
    RequireSuccess(help);
    CHECK_THAT(help.stdout_bytes, !Catch::Contains("--follow-symlinks"));
  }
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
