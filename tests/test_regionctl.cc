// regionctl, driven as a separate process the way users and scripts run it:
// exit codes, exact output bytes, the JSON of inspect, and one line on stderr
// for every failure.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
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

#include "format.h"
#include "regionstore/regionstore.h"
#include "slot.h"
#include "store_rep.h"
#include "support/regionctl_checks.h"
#include "support/run_process.h"
#include "support/shared_memory.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH only when the tool is built.
#ifdef REGIONCTL_PATH

namespace regionstore {
namespace {

using testing::kKiB;
using testing::kMiB;
using testing::PatternBytes;
using testing::PreadFile;
using testing::ProcessResult;
using testing::RequireFailure;
using testing::RequireSuccess;
using testing::SharedMemory;
using testing::TempDir;
using testing::WriteWholeFile;

// regionctl's exit codes: a fixed contract other tools rely on.
constexpr int kExitSuccess = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInvalidStore = 3;
constexpr int kExitBusy = 4;
constexpr int kExitTornCommit = 6;

constexpr uint64_t kStoreDataSize = 16 * kMiB;

ProcessResult Regionctl(const std::vector<std::string>& args,
                        std::optional<std::span<const std::byte>> stdin_bytes = std::nullopt) {
  testing::RunOptions options;
  options.stdin_bytes = stdin_bytes;
  return testing::RunProcess(REGIONCTL_PATH, args, options);
}

// The whole file, through pread: much faster than ReadWholeFile's stream
// iterators on a 17 MiB store in a debug build.
std::vector<std::byte> FileBytes(const std::string& path) {
  return PreadFile(path, 0, std::filesystem::file_size(path));
}

std::string Describe(const std::vector<std::string>& args) {
  std::string text = "regionctl";
  for (const std::string& arg : args) text += " '" + arg + "'";
  return text;
}

std::string CreateStore(const TempDir& dir, const std::string& name,
                        const std::string& size_text = "16MiB") {
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

nlohmann::json InspectJson(const std::string& path) {
  const ProcessResult result = Regionctl({"inspect", path, "--json"});
  RequireSuccess(result);
  nlohmann::json document;
  INFO("stdout: " << result.stdout_bytes);
  REQUIRE_NOTHROW(document = nlohmann::json::parse(result.stdout_bytes));
  return document;
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

// Every way a command can be pointed at a file: each must refuse a bad one
// with `expected_exit_code` and leave it as it was.
void RequireAllCommandsRefuse(const TempDir& dir, const std::string& path, int expected_exit_code) {
  const bool is_file = std::filesystem::is_regular_file(path);
  const std::vector<std::byte> before = is_file ? FileBytes(path) : std::vector<std::byte>{};
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
    if (is_file) REQUIRE(FileBytes(path) == before);
  }
  CHECK_FALSE(std::filesystem::exists(dir.File("refused-output.bin")));
}

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
  CHECK(values["uuid"] == FormatUuid(info.uuid));
  CHECK(values["superblock_checksum"] == Hex64(info.superblock_checksum));
  CHECK(values["regions"] == "0");
  CHECK_THAT(values["page_size"], Catch::StartsWith(std::to_string(Io::Default()->PageSize())));
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

TEST_CASE("Bytes written by regionctl write read back identically in every durability mode",
          "[regionctl]") {
  const std::string mode = GENERATE(as<std::string>{}, "none", "async", "sync", "pwrite-fdatasync");
  INFO("--durability " << mode);
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const uint64_t data_offset = MustReadInfo(path).data_offset;

  // 1 MiB at 2 MiB from a file, as in the lab.
  const std::vector<std::byte> from_file = PatternBytes(kMiB, 1);
  const std::string input = dir.File("input.bin");
  WriteWholeFile(input, from_file);
  ProcessResult written =
      Regionctl({"write", path, "--offset", "2MiB", "--durability", mode, "--input", input});
  RequireSuccess(written);
  CHECK(written.stdout_bytes == "wrote 1048576 bytes at data offset 2097152 (file offset " +
                                    std::to_string(data_offset + 2 * kMiB) + "), durability " +
                                    mode + "\n");

  // An unaligned range crossing many pages, from standard input.
  const uint64_t stdin_offset = 4097;
  const std::vector<std::byte> from_stdin = PatternBytes(300000, 2);
  written = Regionctl(
      {"write", path, "--offset", std::to_string(stdin_offset), "--durability", mode}, from_stdin);
  RequireSuccess(written);
  CHECK(written.stdout_bytes == "wrote 300000 bytes at data offset 4097 (file offset " +
                                    std::to_string(data_offset + stdin_offset) + "), durability " +
                                    mode + "\n");

  // The bytes sit at exactly data_offset + offset in the file, and nowhere else.
  CHECK(PreadFile(path, data_offset + 2 * kMiB, kMiB) == from_file);
  CHECK(PreadFile(path, data_offset + stdin_offset, from_stdin.size()) == from_stdin);
  CHECK(PreadFile(path, data_offset + stdin_offset - 1, 1) == std::vector<std::byte>{std::byte{0}});
  CHECK(PreadFile(path, data_offset + stdin_offset + from_stdin.size(), 1) ==
        std::vector<std::byte>{std::byte{0}});

  // Read back through standard output, binary-safe with nothing added.
  const ProcessResult to_stdout = Regionctl({"read", path, "--offset", "2MiB", "--length", "1MiB"});
  RequireSuccess(to_stdout);
  CHECK(to_stdout.StdoutAsBytes() == from_file);

  // And through --output.
  const std::string output = dir.File("output.bin");
  const ProcessResult to_file =
      Regionctl({"read", path, "--offset", std::to_string(stdin_offset), "--length",
                 std::to_string(from_stdin.size()), "--output", output});
  RequireSuccess(to_file);
  CHECK(to_file.stdout_bytes.empty());
  CHECK(FileBytes(output) == from_stdin);
}

TEST_CASE("regionctl write uses sync durability by default", "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::vector<std::byte> bytes = PatternBytes(5000, 3);
  const ProcessResult result = Regionctl({"write", path, "--offset", "64KiB"}, bytes);
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes,
             Catch::StartsWith("wrote 5000 bytes at data offset 65536 (file offset ") &&
                 Catch::EndsWith("), durability sync\n"));
  CHECK(PreadFile(path, MustReadInfo(path).data_offset + 64 * kKiB, bytes.size()) == bytes);
}

TEST_CASE("regionctl create and write print one JSON object with --json", "[regionctl]") {
  TempDir dir;
  const std::string path = dir.File("store.rs");
  ProcessResult result =
      Regionctl({"create", path, "--size", "1MiB", "--checkpoint", "state:4KiB", "--json"});
  RequireSuccess(result);
  const StoreInfo info = MustReadInfo(path);
  nlohmann::json document = nlohmann::json::parse(result.stdout_bytes);
  CHECK(document == nlohmann::json{{"path", path},
                                   {"data_size", 1048576},
                                   {"file_size", info.file_size},
                                   {"regions",
                                    {{{"name", "state"},
                                      {"capacity", 4096},
                                      {"slot_count", 3},
                                      {"slot_stride", info.regions[0].slot_stride},
                                      {"layout", "compact"},
                                      {"slot_alignment", info.regions[0].slot_alignment}}}}});
  result = Regionctl({"write", path, "--offset", "100", "--durability", "none", "--json"},
                     PatternBytes(10, 1));
  RequireSuccess(result);
  document = nlohmann::json::parse(result.stdout_bytes);
  CHECK(document == nlohmann::json{{"path", path},
                                   {"offset", 100},
                                   {"file_offset", info.data_offset + 100},
                                   {"length", 10},
                                   {"durability", "none"}});
}

TEST_CASE("regionctl write and read handle empty ranges and the last byte of the data area",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::string end = std::to_string(kStoreDataSize);
  const std::string last = std::to_string(kStoreDataSize - 1);

  ProcessResult result = Regionctl({"write", path, "--offset", end}, std::vector<std::byte>{});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::StartsWith("wrote 0 bytes at data offset 16777216 "));

  const std::vector<std::byte> last_byte = {std::byte{0xa5}};
  RequireSuccess(Regionctl({"write", path, "--offset", last}, last_byte));
  CHECK(PreadFile(path, MustReadInfo(path).data_offset + kStoreDataSize - 1, 1) == last_byte);

  result = Regionctl({"read", path, "--offset", last, "--length", "1"});
  RequireSuccess(result);
  CHECK(result.StdoutAsBytes() == last_byte);

  result = Regionctl({"read", path, "--offset", end, "--length", "0"});
  RequireSuccess(result);
  CHECK(result.stdout_bytes.empty());
}

TEST_CASE("regionctl read --output replaces an existing file", "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::string output = dir.File("output.bin");
  WriteWholeFile(output, PatternBytes(10000, 4));  // longer than what is read
  RequireSuccess(Regionctl({"read", path, "--offset", "0", "--length", "100", "--output", output}));
  CHECK(FileBytes(output) == std::vector<std::byte>(100, std::byte{0}));
}

TEST_CASE("regionctl usage errors exit with 2, print one line on stderr and change nothing",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::vector<std::byte> before = FileBytes(path);
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
  CHECK(FileBytes(path) == before);
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
    CHECK_THAT(result.stdout_bytes, Catch::Contains("Usage: regionctl " + command) &&
                                        Catch::Contains("Example:\n  ") &&
                                        Catch::Contains("regionctl " + command + " ") &&
                                        Catch::Contains("Exit codes: 0 success, 1 failure, 2 "
                                                        "usage error, 3 not a valid store") &&
                                        Catch::Contains("4 busy (another writer holds the "
                                                        "store), 6 torn commit (a region's "
                                                        "newest commit\nheader is intact"));
  }
}

TEST_CASE("regionctl reports a missing store or input file with exit 1", "[regionctl]") {
  TempDir dir;
  const std::string missing = dir.File("missing.rs");
  RequireAllCommandsRefuse(dir, missing, kExitFailure);
  const ProcessResult result = Regionctl({"inspect", missing});
  CHECK_THAT(result.stderr_bytes, Catch::Contains(missing));

  const std::string path = CreateStore(dir, "store.rs");
  const std::vector<std::byte> before = FileBytes(path);
  const std::string missing_input = dir.File("missing-input.bin");
  const ProcessResult write_result =
      Regionctl({"write", path, "--offset", "0", "--input", missing_input});
  RequireFailure(write_result, kExitFailure);
  CHECK_THAT(write_result.stderr_bytes, Catch::Contains(missing_input));
  CHECK(FileBytes(path) == before);
}

TEST_CASE("regionctl reports a store it may not open with exit 1 and changes nothing",
          "[regionctl]") {
  TempDir dir;
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  const std::string path = CreateStore(dir, "store.rs", "64KiB");
  const std::string control = CreateStore(dir, "control.rs", "64KiB");
  REQUIRE(::chmod(path.c_str(), 0) == 0);
  REQUIRE(::chmod(control.c_str(), 0644) == 0);
  const std::vector<std::byte> before = FileBytes(path);

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
    WARN("skipped: cannot run regionctl without privileges here: " << reachable.stderr_bytes);
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
  CHECK(FileBytes(path) == before);
}

TEST_CASE("regionctl read reports an --output it cannot write with exit 1", "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::string output = dir.File("no-such-dir/output.bin");
  const ProcessResult result =
      Regionctl({"read", path, "--offset", "0", "--length", "10", "--output", output});
  RequireFailure(result, kExitFailure);
  CHECK_THAT(result.stderr_bytes, Catch::Contains(output));
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
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  std::vector<std::byte> bytes = FileBytes(path);
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
  RequireAllCommandsRefuse(dir, path, kExitInvalidStore);
}

TEST_CASE("regionctl write past the data area exits 2 and leaves the file unchanged",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::vector<std::byte> before = FileBytes(path);
  const std::string input = dir.File("input.bin");

  struct OutOfRange {
    std::string offset;
    uint64_t length;
  };
  const std::vector<OutOfRange> cases = {
      {std::to_string(kStoreDataSize), 1},
      {std::to_string(kStoreDataSize - 10), 11},
      {std::to_string(kStoreDataSize + 1), 0},
      {"16MiB", 4096},
      {"18446744073709551615", 1},  // offset + length overflows 64 bits
      {"0", kStoreDataSize + 1},
  };
  for (const OutOfRange& range : cases) {
    const std::vector<std::byte> data = PatternBytes(range.length, 9);
    WriteWholeFile(input, data);
    const std::vector<std::string> from_file = {"write",      path,      "--offset",
                                                range.offset, "--input", input};
    const std::vector<std::string> from_stdin = {"write", path, "--offset", range.offset};
    for (const auto& args : {from_file, from_stdin}) {
      INFO(Describe(args) << " with " << range.length << " bytes");
      RequireFailure(Regionctl(args, data), kExitUsage);
      REQUIRE(FileBytes(path) == before);
    }
  }
}

TEST_CASE("regionctl read past the data area exits 2", "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::string output = dir.File("output.bin");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::to_string(kStoreDataSize), "1"},
      {std::to_string(kStoreDataSize - 10), "11"},
      {"0", std::to_string(kStoreDataSize + 1)},
      {"18446744073709551615", "2"},
      {"1", "18446744073709551615"},
  };
  for (const auto& [offset, length] : cases) {
    INFO("--offset " << offset << " --length " << length);
    RequireFailure(Regionctl({"read", path, "--offset", offset, "--length", length}), kExitUsage);
    RequireFailure(
        Regionctl({"read", path, "--offset", offset, "--length", length, "--output", output}),
        kExitUsage);
    CHECK_FALSE(std::filesystem::exists(output));  // nothing written on failure
  }
}

TEST_CASE("regionctl create refuses an existing path without --force and replaces it with it",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::string old_uuid = InspectJson(path)["uuid"];
  const std::vector<std::byte> before = FileBytes(path);

  ProcessResult result = Regionctl({"create", path, "--size", "1MiB"});
  RequireFailure(result, kExitFailure);
  CHECK_THAT(result.stderr_bytes, Catch::Contains(path));
  CHECK(FileBytes(path) == before);

  const std::string other = dir.File("not-a-store.txt");
  WriteWholeFile(other, PatternBytes(1000, 10));
  const std::vector<std::byte> other_before = FileBytes(other);
  RequireFailure(Regionctl({"create", other, "--size", "1MiB"}), kExitFailure);
  CHECK(FileBytes(other) == other_before);

  result = Regionctl({"create", path, "--size", "1MiB", "--force"});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::StartsWith("created '" + path + "': data area 1.0 MiB"));
  const nlohmann::json replaced = InspectJson(path);
  CHECK(replaced["data_size"] == kMiB);
  CHECK(replaced["uuid"] != old_uuid);
  CHECK(dir.List() == std::vector<std::string>{"not-a-store.txt", "store.rs"});  // no temp left
}

TEST_CASE("regionctl on a store held by a writer: write and create --force exit 4, read works",
          "[regionctl][multiprocess]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::vector<std::byte> data = PatternBytes(4096, 11);
  {
    // This process holds the single-writer lock; regionctl runs in another.
    Store writer = testing::MustOpen(path, OpenMode::kReadWrite);
    const std::vector<std::byte> before = FileBytes(path);

    ProcessResult result = Regionctl({"write", path, "--offset", "0"}, data);
    RequireFailure(result, kExitBusy);
    CHECK_THAT(result.stderr_bytes, Catch::Contains(path));

    result = Regionctl({"create", path, "--size", "1MiB", "--force"});
    RequireFailure(result, kExitBusy);
    CHECK_THAT(result.stderr_bytes, Catch::Contains(path));
    CHECK(FileBytes(path) == before);

    // Readers take no lock.
    RequireSuccess(Regionctl({"inspect", path}));
    result = Regionctl({"read", path, "--offset", "0", "--length", "4096"});
    RequireSuccess(result);
    CHECK(result.StdoutAsBytes() == std::vector<std::byte>(4096, std::byte{0}));
  }
  // Released with the handle.
  RequireSuccess(Regionctl({"write", path, "--offset", "0"}, data));
  CHECK(PreadFile(path, MustReadInfo(path).data_offset, data.size()) == data);
}

// --- Checkpoint regions: create --checkpoint, commit, load, verify, inspect

constexpr uint64_t kStateCapacity = 64 * kKiB;

// A store with a 1 MiB data area and the checkpoint regions `checkpoints`
// ("NAME:CAPACITY"), made by regionctl.
std::string CreateCheckpointStore(const TempDir& dir, const std::string& name,
                                  const std::vector<std::string>& checkpoints = {
                                      "state:64KiB:aligned", "other:4KiB"}) {
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

// Commits `payload` through regionctl from standard input and checks the
// generation it reports.
void MustCommit(const std::string& path, const std::string& name,
                const std::vector<std::byte>& payload, uint64_t expected_generation,
                const std::string& durability = "sync") {
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

nlohmann::json ParseJson(const ProcessResult& result) {
  nlohmann::json document;
  INFO("stdout: " << result.stdout_bytes);
  REQUIRE_NOTHROW(document = nlohmann::json::parse(result.stdout_bytes));
  REQUIRE(document.is_object());
  return document;
}

// The JSON object of region `name` in inspect's or verify's "regions".
nlohmann::json RegionJsonNamed(const nlohmann::json& document, const std::string& name) {
  REQUIRE(document["regions"].is_array());
  for (const nlohmann::json& region : document["regions"]) {
    if (region["name"] == name) return region;
  }
  FAIL("no region named " << name << " in " << document.dump());
  return {};
}

// Writes `bytes` at `offset` of the file in place, without a sync.
void PwriteAt(const std::string& path, uint64_t offset, const std::vector<std::byte>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) ==
          static_cast<ssize_t>(bytes.size()));
  REQUIRE(::close(fd) == 0);
}

// XORs one byte of the file in place, as a bad sector or a stray write would.
void FlipByte(const std::string& path, uint64_t offset) {
  std::vector<std::byte> byte = PreadFile(path, offset, 1);
  byte[0] ^= std::byte{0x40};
  PwriteAt(path, offset, byte);
}

// Zeros payload bytes [from, to) of slot `index`: what a power cut leaves when
// the commit's header reached the disk and those payload pages did not (the
// slot held zeros before).
void TearPayload(const std::string& path, const RegionEntry& region, uint32_t index, uint64_t from,
                 uint64_t to) {
  PwriteAt(path, slot::PayloadFileOffset(region, index) + from,
           std::vector<std::byte>(to - from, std::byte{0}));
}

// The slot inspect names as region `name`'s newest header.
uint32_t ActiveSlot(const std::string& path, const std::string& name) {
  const nlohmann::json region = RegionJsonNamed(InspectJson(path), name);
  REQUIRE(region["active_slot"].is_number_unsigned());
  return region["active_slot"].get<uint32_t>();
}

// A store whose region 'state' holds generation 1 (`older_length` bytes) and
// generation 2 (`newer_length`), and the slots they are in.
struct TwoCommits {
  std::string path;
  std::vector<std::byte> older;  // generation 1
  uint32_t older_slot = 0;
  uint32_t newest = 0;  // generation 2
};
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

// The first line of `text` that starts with `prefix`, without its '\n'.
std::string LineStartingWith(const std::string& text, const std::string& prefix) {
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    if (text.compare(start, prefix.size(), prefix) == 0) return text.substr(start, end - start);
    start = end + 1;
  }
  FAIL("no line starts with '" << prefix << "' in:\n" << text);
  return {};
}

// A verify that judged a region torn or damaged: its report on stdout, then
// exactly one line on stderr saying why, and `expected_exit_code`.
void RequireVerdict(const ProcessResult& result, int expected_exit_code) {
  INFO("stdout: " << result.stdout_bytes << "\nstderr: " << result.stderr_bytes);
  REQUIRE(result.term_signal == 0);
  REQUIRE(result.exit_code == expected_exit_code);
  REQUIRE_FALSE(result.stdout_bytes.empty());
  REQUIRE(result.StderrLines().size() == 1);
  REQUIRE(result.stderr_bytes.rfind("regionctl: ", 0) == 0);
}

// What load, export and dump --region print on stderr when Load passed over
// a torn newer commit of region 'state'.
std::string TornWarning(uint64_t torn_generation, uint64_t returned_generation) {
  return "regionctl: warning: region 'state': its newest commit (generation " +
         std::to_string(torn_generation) +
         ") has an intact header but its payload does not match (a power loss interrupted it, or "
         "it was damaged after it returned); returned the older generation " +
         std::to_string(returned_generation) + " instead\n";
}

// The library's kTornCommit message, as load, export and dump --region print it.
std::string TornOnlyFailure(const std::string& path, uint64_t generation) {
  return "regionctl: torn commit: load '" + path + "': region 'state': its newest commit " +
         "(generation " + std::to_string(generation) +
         ") has an intact header but its payload does not match: a power loss interrupted that "
         "commit, or it was damaged after it returned; no older commit of the region is intact\n";
}

TEST_CASE(
    "regionctl create --checkpoint lays out regions that inspect lists with three empty slots",
    "[regionctl]") {
  TempDir dir;
  const std::string path = dir.File("store.rs");
  // A name may contain ':': the capacity follows the last one.
  const ProcessResult created =
      Regionctl({"create", path, "--size", "0", "--checkpoint", "state:64KiB:aligned", "--checkpoint",
                 "cfg:v2:100", "--checkpoint", "\xc3\xa9tat:1MiB"});
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
      CHECK(slot_json["state"] == "empty");
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

TEST_CASE("regionctl commit from --input and from standard input, then load returns the bytes",
          "[regionctl]") {
  const std::string mode = GENERATE(as<std::string>{}, "none", "async", "sync", "pwrite-fdatasync");
  INFO("--durability " << mode);
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const RegionEntry state = MustFindRegion(path, "state");
  const std::string input = dir.File("input.bin");

  // From a file.
  const std::vector<std::byte> first = PatternBytes(40000, 21);
  WriteWholeFile(input, first);
  ProcessResult result =
      Regionctl({"commit", path, "state", "--input", input, "--durability", mode});
  RequireSuccess(result);
  CHECK(result.stdout_bytes ==
        "committed generation 1 (39.1 KiB) to 'state', durability " + mode + "\n");
  CHECK(MustLoad(path, "state") == first);

  // From standard input, exactly the capacity.
  const std::vector<std::byte> second = PatternBytes(kStateCapacity, 22);
  result = Regionctl({"commit", path, "state", "--durability", mode}, second);
  RequireSuccess(result);
  CHECK(result.stdout_bytes ==
        "committed generation 2 (64.0 KiB) to 'state', durability " + mode + "\n");
  const std::string output = dir.File("output.bin");
  WriteWholeFile(output, PatternBytes(100000, 23));  // longer: load must truncate it
  result = Regionctl({"load", path, "state", "--output", output});
  RequireSuccess(result);
  CHECK(result.stdout_bytes.empty());
  CHECK(FileBytes(output) == second);

  // The bytes sit in the payload area of the slot inspect calls active.
  const nlohmann::json region = RegionJsonNamed(InspectJson(path), "state");
  CHECK(region["generation"] == 2);
  CHECK(region["length"] == kStateCapacity);
  REQUIRE(region["active_slot"].is_number_unsigned());
  const auto active = region["active_slot"].get<uint32_t>();
  CHECK(PreadFile(path, slot::PayloadFileOffset(state, active), second.size()) == second);

  // An empty payload is a commit too.
  result = Regionctl({"commit", path, "state", "--durability", mode}, std::vector<std::byte>{});
  RequireSuccess(result);
  CHECK(result.stdout_bytes ==
        "committed generation 3 (0 B) to 'state', durability " + mode + "\n");
  result = Regionctl({"load", path, "state"});
  RequireSuccess(result);
  CHECK(result.stdout_bytes.empty());

  // The other region and the data area are untouched.
  RequireFailure(Regionctl({"load", path, "other"}), kExitFailure);
  CHECK(PreadFile(path, MustReadInfo(path).data_offset, kMiB) ==
        std::vector<std::byte>(kMiB, std::byte{0}));
}

TEST_CASE("regionctl commit uses sync by default and prints JSON with --json", "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::vector<std::byte> payload = PatternBytes(4096, 24);
  ProcessResult result = Regionctl({"commit", path, "state"}, payload);
  RequireSuccess(result);
  CHECK(result.stdout_bytes == "committed generation 1 (4.0 KiB) to 'state', durability sync\n");

  result = Regionctl({"commit", path, "other", "--json", "--durability", "none"}, payload);
  RequireSuccess(result);
  const nlohmann::json document = ParseJson(result);
  CHECK(document["path"] == path);
  CHECK(document["region"] == "other");
  CHECK(document["generation"] == 1);
  CHECK(document["length"] == payload.size());
  CHECK(document["durability"] == "none");
  CHECK(MustLoad(path, "other") == payload);
}

TEST_CASE("regionctl load of a region with no commit exits 1 with 'no commit yet'", "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  MustCommit(path, "other", PatternBytes(10, 25), 1);  // another region's commit changes nothing
  const std::string output = dir.File("output.bin");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"load", path, "state"}, {"load", path, "state", "--output", output}}) {
    INFO(Describe(args));
    const ProcessResult result = Regionctl(args);
    RequireFailure(result, kExitFailure);
    CHECK_THAT(result.stderr_bytes, Catch::Contains("no commit yet") &&
                                        Catch::Contains("'state'") && Catch::Contains(path));
  }
  CHECK_FALSE(std::filesystem::exists(output));  // no output file on failure
}

TEST_CASE("regionctl commit of a payload over the capacity exits 2 and changes nothing",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::vector<std::byte> kept = PatternBytes(1000, 26);
  MustCommit(path, "state", kept, 1);
  const std::vector<std::byte> before = FileBytes(path);

  const std::string input = dir.File("input.bin");
  for (const uint64_t length : {kStateCapacity + 1, 3 * kStateCapacity}) {
    const std::vector<std::byte> too_long = PatternBytes(length, 27);
    WriteWholeFile(input, too_long);
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"commit", path, "state", "--input", input}, {"commit", path, "state"}}) {
      INFO(Describe(args) << " with " << length << " bytes");
      const ProcessResult result = Regionctl(args, too_long);
      RequireFailure(result, kExitUsage);
      CHECK_THAT(result.stderr_bytes, Catch::Contains("longer than the capacity") &&
                                          Catch::Contains("65536 bytes") &&
                                          Catch::Contains("nothing committed"));
      REQUIRE(FileBytes(path) == before);
    }
  }
  CHECK(MustLoad(path, "state") == kept);
}

TEST_CASE("regionctl verify on a clean store exits 0 and reports every region and slot",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  MustCommit(path, "state", PatternBytes(100, 28), 1);
  MustCommit(path, "state", PatternBytes(5000, 29), 2);

  ProcessResult result = Regionctl({"verify", path});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes,
             Catch::StartsWith("'" + path + "': superblock and region table valid (format 1), data area "
                                      "1.0 MiB readable (it has no checksums), 2 checkpoint regions\n"));
  CHECK_THAT(
      result.stdout_bytes,
      Catch::Contains("region 'state': capacity 65536 (64.0 KiB), 3 aligned slots of 128.0 KiB; "
                      "generation 2, length 5000 (4.9 KiB), active slot ") &&
          Catch::Contains("region 'other': capacity 4096 (4.0 KiB), 3 compact slots of "
                          "8.0 KiB; no commit yet\n") &&
          Catch::Contains(": valid, generation 1, length 100 (100 B), committed ") &&
          Catch::Contains(": valid, generation 2, length 5000 (4.9 KiB), committed ") &&
          Catch::Contains("  slot 2: empty\n"));
  CHECK_THAT(result.stdout_bytes, !Catch::Contains("note:") && !Catch::Contains("incomplete"));
  CHECK_THAT(result.stdout_bytes, Catch::EndsWith("\nok: every checksum verified\n"));

  result = Regionctl({"verify", path, "--json"});
  RequireSuccess(result);
  const nlohmann::json document = ParseJson(result);
  CHECK(document["ok"] == true);
  CHECK(document["incomplete_slots"] == 0);
  CHECK(document["damaged_regions"] == nlohmann::json::array());
  CHECK(document["notes"] == nlohmann::json::array());
  const nlohmann::json state = RegionJsonNamed(document, "state");
  CHECK(state["generation"] == 2);
  CHECK(state["length"] == 5000);
  REQUIRE(state["active_slot"].is_number_unsigned());
  CHECK(state["slots"][state["active_slot"].get<size_t>()]["state"] == "valid");
  CHECK(state["slots"][state["active_slot"].get<size_t>()]["generation"] == 2);
  CHECK(state["slots"][state["active_slot"].get<size_t>()]["commit_unix_ns"].get<uint64_t>() > 0);
  CHECK(RegionJsonNamed(document, "other")["active_slot"].is_null());

  // A store without regions verifies too.
  const std::string plain = CreateStore(dir, "plain.rs", "64KiB");
  result = Regionctl({"verify", plain});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::Contains("0 checkpoint regions\n") &&
                                      Catch::EndsWith("ok: every checksum verified\n"));
}

TEST_CASE(
    "regionctl verify exits 6 for a bit-flipped newest payload, load returns the commit before "
    "with a warning, and the next commit's generation is above the torn one",
    "[regionctl]") {
  TempDir dir;
  const auto [path, older, older_slot, newest] = CommitTwice(dir, 3000, 7000, 30);
  // No crash: one bit of a commit that returned goes bad.
  FlipByte(path, slot::PayloadFileOffset(MustFindRegion(path, "state"), newest) + 1234);
  const std::string newest_text = std::to_string(newest);
  const std::string older_text = std::to_string(older_slot);

  ProcessResult result = Regionctl({"verify", path});
  RequireVerdict(result, kExitTornCommit);
  CHECK_THAT(
      result.stdout_bytes,
      Catch::Contains("region 'state': capacity 65536 (64.0 KiB), 3 aligned slots of 128.0 KiB; "
                      "TORN: the newest commit (generation 2, slot " +
                      newest_text +
                      ") does not match its payload; load returns generation 1, length "
                      "3000 (2.9 KiB), active slot " +
                      older_text + ", committed "));
  CHECK_THAT(result.stdout_bytes,
             Catch::Contains("  slot " + newest_text +
                             ": torn: payload checksum mismatch in the newest header: a power "
                             "loss interrupted this commit, or it was damaged after it returned "
                             "(header: generation 2, length 7000)\n"));
  CHECK_THAT(result.stdout_bytes,
             Catch::EndsWith("\nnote: region 'state' is torn: its newest commit (generation 2, "
                             "slot " +
                             newest_text +
                             ") has an intact header but its payload does not match: a power "
                             "loss interrupted that commit, or it was damaged after it returned; "
                             "load returns the older generation 1 (slot " +
                             older_text + ") instead\n"));
  CHECK_THAT(result.stdout_bytes, !Catch::Contains("ok: ") && !Catch::Contains("expected after"));
  CHECK(result.stderr_bytes ==
        "regionctl: torn commit: verify '" + path +
            "': 1 region has a torn newest commit (intact header, payload does not match): "
            "'state' (generation 2, slot " +
            newest_text + "; load returns generation 1)\n");

  result = Regionctl({"verify", path, "--json"});
  RequireVerdict(result, kExitTornCommit);
  const nlohmann::json document = ParseJson(result);
  CHECK(document["ok"] == false);
  CHECK(document["torn_regions"] == nlohmann::json::array({"state"}));
  CHECK(document["damaged_regions"] == nlohmann::json::array());
  CHECK(document["incomplete_slots"] == 0);
  REQUIRE(document["notes"].size() == 1);
  CHECK_THAT(document["notes"][0].get<std::string>(),
             Catch::StartsWith("region 'state' is torn: its newest commit (generation 2, "));
  const nlohmann::json region = RegionJsonNamed(document, "state");
  CHECK(region["torn"] == true);
  CHECK(region["torn_generation"] == 2);
  CHECK(region["torn_slot"] == newest);
  CHECK(region["damaged"] == false);
  CHECK(region["payload_checked"] == true);
  CHECK(region["generation"] == 1);
  CHECK(region["length"] == older.size());
  CHECK(region["active_slot"] == older_slot);
  CHECK(region["slots"][newest]["state"] == "torn");
  CHECK(region["slots"][newest]["generation"] == 2);
  CHECK(region["slots"][older_slot]["state"] == "valid");
  const nlohmann::json other = RegionJsonNamed(document, "other");
  CHECK(other["torn"] == false);
  CHECK(other["torn_generation"].is_null());
  CHECK(other["torn_slot"].is_null());

  // Never the damaged bytes: the commit before, byte for byte, with a warning.
  result = Regionctl({"load", path, "state"});
  RequireSuccess(result);
  CHECK(result.StdoutAsBytes() == older);
  CHECK(result.stderr_bytes == TornWarning(2, 1));

  // Generation 2 has been seen: the next commit is 3, never 2 again.
  const std::vector<std::byte> next = PatternBytes(500, 32);
  MustCommit(path, "state", next, 3);
  result = Regionctl({"verify", path});
  RequireSuccess(result);
  CHECK(result.stderr_bytes.empty());
  CHECK_THAT(result.stdout_bytes,
             Catch::Contains("\nok: every checksum verified") && !Catch::Contains("TORN"));
  result = Regionctl({"load", path, "state"});
  RequireSuccess(result);
  CHECK(result.StdoutAsBytes() == next);
  CHECK(result.stderr_bytes.empty());
}

TEST_CASE(
    "regionctl verify exits 6 for a damaged header beside the newest valid commit, as it may have "
    "held a newer one",
    "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::vector<std::byte> older = PatternBytes(2000, 41);
  MustCommit(path, "state", older, 1);
  MustCommit(path, "state", PatternBytes(2000, 42), 2);
  const uint32_t newest = ActiveSlot(path, "state");
  // One byte of the newest commit's header: from the header alone nothing
  // says it was the newest, so no report may call the older commit "ok".
  FlipByte(path, slot::HeaderFileOffset(MustFindRegion(path, "state"), newest) +
                     slot::hdr::kGeneration);

  ProcessResult result = Regionctl({"verify", path});
  CHECK(result.exit_code == kExitTornCommit);
  CHECK_THAT(result.stdout_bytes, !Catch::Contains("ok: "));
  CHECK_THAT(result.stdout_bytes, Catch::Contains("its header fails its checks, which no kill "
                                                  "leaves"));
  CHECK_THAT(result.stderr_bytes, Catch::Contains("fails its checks beside the commit load "
                                                  "returns") &&
                                      Catch::Contains("'state'"));
  result = Regionctl({"verify", path, "--json"});
  CHECK(result.exit_code == kExitTornCommit);
  const nlohmann::json document = ParseJson(result);
  CHECK(document["ok"] == false);
  CHECK(document["bad_header_regions"] == nlohmann::json::array({"state"}));

  // load returns the valid commit, and says what it could not read.
  result = Regionctl({"load", path, "state"});
  RequireSuccess(result);
  CHECK(result.StdoutAsBytes() == older);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("warning") &&
                                      Catch::Contains("1 slot header fails its checks"));
}

TEST_CASE(
    "regionctl verify exits 0 beside an invalid slot older than the newest commit and says what "
    "it may be",
    "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  for (uint64_t generation = 1; generation <= 3; ++generation) {
    MustCommit(path, "state", PatternBytes(2000 + generation, 33 + generation), generation);
  }
  const uint32_t newest = ActiveSlot(path, "state");
  uint32_t oldest = newest;
  const nlohmann::json inspected = RegionJsonNamed(InspectJson(path), "state");
  for (const nlohmann::json& slot_json : inspected["slots"]) {
    if (slot_json["generation"] == 1) oldest = slot_json["index"].get<uint32_t>();
  }
  REQUIRE(oldest != newest);
  FlipByte(path, slot::PayloadFileOffset(MustFindRegion(path, "state"), oldest) + 10);

  ProcessResult result = Regionctl({"verify", path});
  RequireSuccess(result);
  CHECK(result.stderr_bytes.empty());
  CHECK_THAT(result.stdout_bytes,
             Catch::Contains("  slot " + std::to_string(oldest) +
                             ": incomplete: payload checksum mismatch (header: generation 1, "
                             "length 2001)\n"));
  CHECK_THAT(result.stdout_bytes,
             Catch::EndsWith(
                 "\nnote: region 'state' slot " + std::to_string(oldest) +
                 " is incomplete (payload checksum mismatch): an invalid slot older than the "
                 "newest commit: the trace of a commit interrupted by a power loss, or damage; "
                 "the newest commit (generation 3, slot " +
                 std::to_string(newest) +
                 ") is intact, and a later commit overwrites the slot\n"
                 "ok: every checksum verified; 1 incomplete slot (older than the newest commit: "
                 "see the note)\n"));
  CHECK_THAT(result.stdout_bytes, !Catch::Contains("expected after a crash"));

  result = Regionctl({"verify", path, "--json"});
  RequireSuccess(result);
  const nlohmann::json document = ParseJson(result);
  CHECK(document["ok"] == true);
  CHECK(document["incomplete_slots"] == 1);
  CHECK(document["torn_regions"] == nlohmann::json::array());
  CHECK(document["notes"].size() == 1);
  const nlohmann::json region = RegionJsonNamed(document, "state");
  CHECK(region["torn"] == false);
  CHECK(region["generation"] == 3);
  CHECK(region["slots"][oldest]["state"] == "incomplete");

  result = Regionctl({"load", path, "state"});
  RequireSuccess(result);
  CHECK(result.StdoutAsBytes() == PatternBytes(2003, 36));
  CHECK(result.stderr_bytes.empty());  // nothing newer was passed over
}

TEST_CASE(
    "regionctl on a newest commit torn as a power loss leaves it, verify exits 6, stat and "
    "inspect say its payload was not checked, load, export and dump return the commit before",
    "[regionctl]") {
  TempDir dir;
  const auto [path, older, older_slot, newest] = CommitTwice(dir, 5000, 20000, 50);
  const std::string newest_text = std::to_string(newest);
  // The header and the first two payload pages reached the disk, the rest
  // did not.
  TearPayload(path, MustFindRegion(path, "state"), newest, 2 * 4096, 20000);

  ProcessResult result = Regionctl({"verify", path});
  RequireVerdict(result, kExitTornCommit);
  CHECK_THAT(result.stdout_bytes,
             Catch::Contains("; TORN: the newest commit (generation 2, slot " + newest_text +
                             ") does not match its payload; load returns generation 1, length "
                             "5000 (4.9 KiB), active slot " +
                             std::to_string(older_slot) + ", committed "));
  CHECK_THAT(result.stderr_bytes, Catch::EndsWith("'state' (generation 2, slot " + newest_text +
                                                  "; load returns generation 1)\n"));

  // Headers only: generation 2 shows, never as the newest commit without
  // saying that its payload was not read.
  result = Regionctl({"inspect", path});
  RequireSuccess(result);
  const std::string commit_line = LineStartingWith(result.stdout_bytes, "region[0].commit ");
  CHECK_THAT(commit_line, Catch::Contains("  newest header: generation 2, length 20000 (19.5 "
                                          "KiB), slot " +
                                          newest_text + ", committed ") &&
                              Catch::EndsWith(" (payload not checked: run verify)"));
  CHECK_THAT(LineStartingWith(result.stdout_bytes, "region[0].slot[" + newest_text + "]"),
             Catch::Contains("  header valid (payload not checked: run verify), generation 2, "
                             "length 20000 (19.5 KiB), committed "));
  const nlohmann::json inspected = RegionJsonNamed(InspectJson(path), "state");
  CHECK(inspected["generation"] == 2);
  CHECK(inspected["active_slot"] == newest);
  CHECK(inspected["payload_checked"] == false);
  CHECK(inspected["torn"].is_null());  // unknown without the payload
  CHECK(inspected["slots"][newest]["state"] == "valid");
  CHECK(inspected["slots"][newest]["payload_checked"] == false);

  result = Regionctl({"stat", path});
  RequireSuccess(result);
  CHECK_THAT(
      LineStartingWith(result.stdout_bytes, "'state'"),
      Catch::Matches(
          "'state' +64\\.0 KiB +3 aligned slots of 128\\.0 KiB +19\\.5 KiB +2 +[0-9]+ s ago"));
  CHECK_THAT(LineStartingWith(result.stdout_bytes, "newest header "),
             Catch::EndsWith(" s ago (payload not checked: run verify)"));
  CHECK_THAT(result.stdout_bytes,
             Catch::EndsWith("\n(slot headers only; payloads not checked: run verify)\n"));
  result = Regionctl({"stat", path, "--json"});
  RequireSuccess(result);
  const nlohmann::json stat = ParseJson(result);
  CHECK(stat["payload_checked"] == false);
  CHECK(stat["regions"][0]["generation"] == 2);
  CHECK(stat["regions"][0]["payload_checked"] == false);

  // What Load returns: the commit before, byte for byte, and one warning.
  result = Regionctl({"load", path, "state"});
  RequireSuccess(result);
  CHECK(result.StdoutAsBytes() == older);
  CHECK(result.stderr_bytes == TornWarning(2, 1));
  const std::string exported = dir.File("exported.bin");
  result = Regionctl({"export", path, "state", "--output", exported, "--json"});
  RequireSuccess(result);
  CHECK(result.stderr_bytes == TornWarning(2, 1));
  const nlohmann::json export_json = ParseJson(result);
  CHECK(export_json["generation"] == 1);
  CHECK(export_json["skipped_torn_generation"] == 2);
  CHECK(FileBytes(exported) == older);
  result = Regionctl({"dump", path, "--region", "state"});
  RequireSuccess(result);
  CHECK(result.stderr_bytes == TornWarning(2, 1));
  CHECK(std::count(result.stdout_bytes.begin(), result.stdout_bytes.end(), '\n') ==
        static_cast<std::ptrdiff_t>((older.size() + 15) / 16));
}

TEST_CASE(
    "regionctl on a region whose only commit is torn: verify, load, export and dump --region "
    "exit 6, and export leaves its file as it was",
    "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::vector<std::byte> only = PatternBytes(12000, 60);
  MustCommit(path, "state", only, 1);
  const uint32_t torn = ActiveSlot(path, "state");
  const std::string torn_text = std::to_string(torn);
  TearPayload(path, MustFindRegion(path, "state"), torn, 4096, only.size());

  ProcessResult result = Regionctl({"verify", path});
  RequireVerdict(result, kExitTornCommit);
  CHECK_THAT(result.stdout_bytes,
             Catch::Contains("; TORN: the newest commit (generation 1, slot " + torn_text +
                             ") does not match its payload; no older commit is intact\n"));
  CHECK_THAT(result.stdout_bytes,
             Catch::EndsWith("\nnote: region 'state' is torn: its newest commit (generation 1, "
                             "slot " +
                             torn_text +
                             ") has an intact header but its payload does not match: a power "
                             "loss interrupted that commit, or it was damaged after it returned; "
                             "no older commit of the region is intact, so load fails (exit 6)\n"));
  CHECK_THAT(result.stdout_bytes, !Catch::Contains("every commit is lost"));
  CHECK(result.stderr_bytes ==
        "regionctl: torn commit: verify '" + path +
            "': 1 region has a torn newest commit (intact header, payload does not match): "
            "'state' (generation 1, slot " +
            torn_text + "; no older commit is intact: load fails)\n");
  result = Regionctl({"verify", path, "--json"});
  RequireVerdict(result, kExitTornCommit);
  nlohmann::json document = ParseJson(result);
  CHECK(document["torn_regions"] == nlohmann::json::array({"state"}));
  nlohmann::json region = RegionJsonNamed(document, "state");
  CHECK(region["torn"] == true);
  CHECK(region["torn_generation"] == 1);
  CHECK(region["torn_slot"] == torn);
  CHECK(region["damaged"] == false);
  CHECK(region["generation"] == 0);
  CHECK(region["active_slot"].is_null());

  // load and dump --region: exit 6 with the library's message, no output.
  const std::string output = dir.File("output.bin");
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"load", path, "state"},
                                             {"load", path, "state", "--output", output},
                                             {"dump", path, "--region", "state"}}) {
    INFO(Describe(args));
    result = Regionctl(args);
    RequireFailure(result, kExitTornCommit);
    CHECK(result.stderr_bytes == TornOnlyFailure(path, 1));
  }
  CHECK_FALSE(std::filesystem::exists(output));
  // export: the same, and FILE keeps its bytes (no temp left either).
  const std::string exported = dir.File("exported.bin");
  WriteWholeFile(exported, PatternBytes(10, 99));
  result = Regionctl({"export", path, "state", "--output", exported});
  RequireFailure(result, kExitTornCommit);
  CHECK(result.stderr_bytes == TornOnlyFailure(path, 1));
  CHECK(FileBytes(exported) == PatternBytes(10, 99));
  CHECK(dir.List() == std::vector<std::string>{"exported.bin", "store.rs"});

  // 3 outranks 6: a region whose only header is damaged, beside the torn one.
  MustCommit(path, "other", PatternBytes(100, 61), 1);
  FlipByte(path, slot::HeaderFileOffset(MustFindRegion(path, "other"), ActiveSlot(path, "other")) +
                     slot::hdr::kGeneration);
  result = Regionctl({"verify", path});
  RequireVerdict(result, kExitInvalidStore);
  CHECK_THAT(result.stderr_bytes, Catch::StartsWith("regionctl: corruption: verify '" + path +
                                                    "': 1 region is damaged"));
  CHECK_THAT(result.stdout_bytes, Catch::Contains("\nnote: region 'state' is torn: "));
  result = Regionctl({"verify", path, "--json"});
  RequireVerdict(result, kExitInvalidStore);
  document = ParseJson(result);
  CHECK(document["ok"] == false);
  CHECK(document["torn_regions"] == nlohmann::json::array({"state"}));
  CHECK(document["damaged_regions"] == nlohmann::json::array({"other"}));

  // Generation 1 has been seen: the next commit is 2.
  const std::vector<std::byte> next = PatternBytes(300, 62);
  MustCommit(path, "state", next, 2);
  CHECK(MustLoad(path, "state") == next);
}

// The child of the killed-first-commit test: opens the store read-write and
// commits `payload` to region `name` over and over, the library publishing
// each commit's phase in `phase_word`, until the parent kills it.
[[noreturn]] void CommitLargePayloadUntilKilled(const std::string& path, const std::string& name,
                                                const std::vector<std::byte>& payload,
                                                Durability durability,
                                                std::atomic<uint32_t>* phase_word) {
  ::alarm(60);  // a child the parent fails to kill must not outlive the run
  internal::SetCommitPhaseWord(phase_word);
  Result<Store> store = Store::Open(path, OpenMode::kReadWrite);
  if (!store.ok()) ::_exit(10);
  for (;;) {
    if (!store->Commit(name, payload, durability).ok()) ::_exit(11);
  }
}

TEST_CASE(
    "regionctl after a SIGKILL during a region's first commit, verify exits 0 with no commit "
    "yet and load exits 1, never 3 or 6",
    "[regionctl][crash][multiprocess]") {
  const Durability durability = GENERATE(Durability::kSync, Durability::kPwriteFdatasync);
  INFO("durability " << DurabilityName(durability));
  const std::vector<std::byte> payload = PatternBytes(32 * kMiB, 70);
  TempDir dir;
  SharedMemory<std::atomic<uint32_t>> phase;
  int killed_before_header = 0;
  for (int kill_index = 0; kill_index < 3; ++kill_index) {
    INFO("kill " << kill_index);
    const std::string path = dir.File("store.rs");
    RequireSuccess(Regionctl({"create", path, "--size", "0", "--checkpoint", "big:32MiB"}));
    phase->store(internal::kIdle);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) CommitLargePayloadUntilKilled(path, "big", payload, durability, &*phase);
    // Spin until the child is inside its first commit, or gone (it failed).
    int wait_status = 0;
    bool gone = false;
    while (!gone && phase->load() == internal::kIdle) {
      gone = ::waitpid(child, &wait_status, WNOHANG) == child;
    }
    if (!gone) {
      REQUIRE(::kill(child, SIGKILL) == 0);
      REQUIRE(::waitpid(child, &wait_status, 0) == child);
    }
    INFO("child wait status " << wait_status);
    REQUIRE(WIFSIGNALED(wait_status));
    REQUIRE(WTERMSIG(wait_status) == SIGKILL);

    // A kill leaves every slot valid or empty: never torn, damaged or
    // incomplete.
    const ProcessResult verified = Regionctl({"verify", path});
    RequireSuccess(verified);
    CHECK_THAT(verified.stdout_bytes, Catch::EndsWith("\nok: every checksum verified\n"));
    const ProcessResult loaded = Regionctl({"load", path, "big"});
    if (verified.stdout_bytes.find("; no commit yet\n") != std::string::npos) {
      ++killed_before_header;
      RequireFailure(loaded, kExitFailure);
      CHECK_THAT(loaded.stderr_bytes, Catch::Contains("region 'big': no commit yet"));
    } else {
      // The kill came after the first commit had stored its header.
      CHECK_THAT(
          LineStartingWith(verified.stdout_bytes, "region 'big': "),
          Catch::Contains("; generation ") && Catch::Contains(", length 33554432 (32.0 MiB)"));
      RequireSuccess(loaded);
      CHECK(loaded.stderr_bytes.empty());
      CHECK(loaded.StdoutAsBytes() == payload);
    }
    std::filesystem::remove(path);
  }
  if (killed_before_header == 0) WARN("every kill came after a first commit had completed");
}

TEST_CASE("regionctl verify exits 3 when every slot header of a region is damaged", "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::vector<std::byte> other_payload = PatternBytes(500, 32);
  MustCommit(path, "other", other_payload, 1);
  uint32_t commits = 0;
  SECTION("after three commits (every slot valid)") { commits = 3; }
  SECTION("after one commit (two slots empty)") { commits = 1; }
  for (uint32_t generation = 1; generation <= commits; ++generation) {
    MustCommit(path, "state", PatternBytes(2000, 33 + generation), generation);
  }
  const RegionEntry state = MustFindRegion(path, "state");
  for (uint32_t index = 0; index < state.slot_count; ++index) {
    FlipByte(path, slot::HeaderFileOffset(state, index) + slot::hdr::kGeneration);
  }

  ProcessResult result = Regionctl({"verify", path});
  INFO("stdout: " << result.stdout_bytes);
  CHECK(result.exit_code == kExitInvalidStore);
  // The report still says which slots and why; then one line on stderr.
  CHECK_THAT(
      result.stdout_bytes,
      Catch::Contains("region 'state': capacity 65536 (64.0 KiB), 3 aligned slots of 128.0 KiB; "
                      "DAMAGED: ") &&
          Catch::Contains("  slot 0: damaged: "));
  // A flipped byte in a header unit that held nothing leaves its magic zero:
  // that slot still holds no commit, and says what it holds.
  CHECK_THAT(result.stdout_bytes, Catch::Contains(commits == 3 ? "  slot 2: damaged: "
                                                               : "  slot 2: empty: unfinished header"));
  CHECK_THAT(result.stdout_bytes, !Catch::Contains("ok: "));
  REQUIRE(result.StderrLines().size() == 1);
  CHECK_THAT(result.stderr_bytes, Catch::StartsWith("regionctl: corruption: verify '" + path +
                                                    "': 1 region is damaged") &&
                                      Catch::EndsWith(": 'state'\n"));

  result = Regionctl({"verify", path, "--json"});
  CHECK(result.exit_code == kExitInvalidStore);
  CHECK(result.StderrLines().size() == 1);
  const nlohmann::json document = ParseJson(result);
  CHECK(document["ok"] == false);
  CHECK(document["damaged_regions"] == nlohmann::json::array({"state"}));
  const nlohmann::json region = RegionJsonNamed(document, "state");
  CHECK(region["damaged"] == true);
  CHECK(region["generation"] == 0);
  CHECK(region["active_slot"].is_null());
  for (const nlohmann::json& slot_json : region["slots"]) {
    const bool written = slot_json["index"].get<uint32_t>() < commits;
    CHECK(slot_json["state"] == (written ? "damaged" : "empty"));
    CHECK(slot_json["reason"].is_string());
  }
  CHECK(RegionJsonNamed(document, "other")["damaged"] == false);

  // load and export refuse the damaged region with exit 3; the other still loads.
  result = Regionctl({"load", path, "state"});
  RequireFailure(result, kExitInvalidStore);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("none is valid"));
  const std::string exported = dir.File("exported.bin");
  WriteWholeFile(exported, PatternBytes(10, 99));
  result = Regionctl({"export", path, "state", "--output", exported});
  RequireFailure(result, kExitInvalidStore);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("none is valid"));
  CHECK(testing::ReadWholeFile(exported) == PatternBytes(10, 99));
  CHECK(MustLoad(path, "other") == other_payload);
  // inspect shows it without judging.
  CHECK(RegionJsonNamed(InspectJson(path), "state")["damaged"] == true);
}

TEST_CASE("regionctl verify, load, commit and inspect exit 3 on a damaged region table",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  MustCommit(path, "state", PatternBytes(100, 40), 1);
  FlipByte(path, MustReadInfo(path).region_table_offset + 3);  // inside the first name
  const std::vector<std::byte> before = FileBytes(path);
  const std::vector<std::byte> payload = PatternBytes(10, 41);
  for (const auto& args : std::vector<std::vector<std::string>>{{"verify", path},
                                                                {"verify", path, "--json"},
                                                                {"inspect", path},
                                                                {"load", path, "state"},
                                                                {"commit", path, "state"}}) {
    INFO(Describe(args));
    const ProcessResult result = Regionctl(args, payload);
    RequireFailure(result, kExitInvalidStore);
    CHECK_THAT(result.stderr_bytes, Catch::Contains("region table checksum mismatch"));
    REQUIRE(FileBytes(path) == before);
  }
}

TEST_CASE("regionctl load works while another process holds the writer lock, commit exits 4",
          "[regionctl][multiprocess]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::vector<std::byte> durable = PatternBytes(20000, 42);
  const std::vector<std::byte> cached = PatternBytes(30000, 43);
  {
    // This process holds the single-writer lock; regionctl runs in another.
    Store writer = testing::MustOpen(path, OpenMode::kReadWrite);
    Result<uint64_t> generation = writer.Commit("state", durable, Durability::kSync);
    REQUIRE(generation.ok());
    REQUIRE(*generation == 1);
    CHECK(MustLoad(path, "state") == durable);

    // A kNone commit is only in the page cache, which the reader shares.
    generation = writer.Commit("state", cached, Durability::kNone);
    REQUIRE(generation.ok());
    CHECK(MustLoad(path, "state") == cached);

    const std::vector<std::byte> before = FileBytes(path);
    const std::string input = dir.File("input.bin");
    WriteWholeFile(input, PatternBytes(100, 44));
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"commit", path, "state"},
             {"commit", path, "other", "--input", input},
             {"import", path, "other", "--input", input}}) {
      INFO(Describe(args));
      const ProcessResult result = Regionctl(args, PatternBytes(100, 45));
      RequireFailure(result, kExitBusy);
      CHECK_THAT(result.stderr_bytes, Catch::Contains(path));
      REQUIRE(FileBytes(path) == before);
    }
    // verify, inspect and export take no lock either.
    RequireSuccess(Regionctl({"verify", path}));
    RequireSuccess(Regionctl({"export", path, "state", "--output", dir.File("exported.bin")}));
    CHECK(testing::ReadWholeFile(dir.File("exported.bin")) == cached);
    CHECK(RegionJsonNamed(InspectJson(path), "state")["generation"] == 2);
  }
  // Released with the handle: the next commit follows generation 2.
  MustCommit(path, "state", durable, 3);
  CHECK(MustLoad(path, "state") == durable);
}

TEST_CASE("regionctl verify draws a progress bar on a terminal for a big store, never when piped",
          "[regionctl][verify]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "big.rs", "65MiB");  // just over the 64 MiB bar
  const std::string small = CreateStore(dir, "small.rs", "16MiB");

  // Piped (this test's pipes): the report on stdout, nothing on stderr.
  ProcessResult result = Regionctl({"verify", path});
  RequireSuccess(result);
  CHECK(result.stderr_bytes.empty());
  CHECK_THAT(result.stdout_bytes, Catch::Contains("data area 65.0 MiB readable"));

  // Under a pseudo-terminal (script(1) from util-linux/bsdutils).
  const std::string script = "/usr/bin/script";
  if (::access(script.c_str(), X_OK) != 0) {
    WARN("skipped: no /usr/bin/script to run regionctl under a pseudo-terminal");
    return;
  }
  for (const auto& [store, wants_bar] : {std::pair{path, true}, std::pair{small, false}}) {
    INFO(store);
    const std::string command = std::string("'") + REGIONCTL_PATH + "' verify '" + store + "'";
    result = testing::RunProcess(script, {"-qefc", command, "/dev/null"}, {});
    INFO("pty transcript: " << result.stdout_bytes);
    REQUIRE(result.exit_code == 0);
    CHECK_THAT(result.stdout_bytes, Catch::Contains("ok: every checksum verified"));
    if (wants_bar) {
      CHECK_THAT(result.stdout_bytes,
                 Catch::Contains("\rverify: [") && Catch::Contains("] 100% (") &&
                     Catch::Contains("\r\033[K"));
    } else {
      CHECK_THAT(result.stdout_bytes, !Catch::Contains("verify: ["));
    }
  }
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

  RequireSuccess(Regionctl({"write", path, "--offset", "17"}, std::vector<std::byte>{
                                                                  std::byte{'a'}, std::byte{'b'},
                                                                  std::byte{'c'}}));
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
  result = testing::RunProcess(
      "/bin/bash",
      {"-c", "set -o pipefail; '" + std::string(REGIONCTL_PATH) + "' dump '" + big +
                 "' | head -c 100 >/dev/null"},
      {});
  CHECK(result.exit_code == 0);
  CHECK(result.stderr_bytes.empty());

  RequireFailure(Regionctl({"dump", path, "--offset", "1MiB", "--length", "1"}), kExitUsage);
  RequireFailure(Regionctl({"dump", path, "--region", "state", "--offset", "3"}), kExitUsage);
  RequireFailure(Regionctl({"dump", path, "--region", "nosuch"}), kExitUsage);
  RequireFailure(Regionctl({"dump", path, "--region", "other"}), kExitFailure);  // no commit
  RequireFailure(Regionctl({"dump", dir.File("none.rs")}), kExitFailure);
}

// Lists `dir`, to show export leaves no temp file behind.
std::vector<std::string> Entries(const TempDir& dir) { return dir.List(); }

TEST_CASE("regionctl export writes the newest commit atomically: import commits a file",
          "[regionctl][export]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::string output = dir.File("state.bin");
  const std::string input = dir.File("input.bin");

  // No commit yet: exit 1, and an existing FILE keeps its bytes.
  WriteWholeFile(output, PatternBytes(33, 1));
  ProcessResult result = Regionctl({"export", path, "state", "--output", output});
  RequireFailure(result, kExitFailure);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("no commit yet"));
  CHECK(testing::ReadWholeFile(output) == PatternBytes(33, 1));

  // import = commit of FILE; export replaces FILE with it.
  const std::vector<std::byte> first = PatternBytes(40000, 2);
  WriteWholeFile(input, first);
  result = Regionctl({"import", path, "state", "--input", input});
  RequireSuccess(result);
  CHECK(result.stdout_bytes ==
        "committed generation 1 (39.1 KiB) to 'state', durability sync\n");
  result = Regionctl({"export", path, "state", "--output", output});
  RequireSuccess(result);
  CHECK(result.stdout_bytes == "exported generation 1 (39.1 KiB) of 'state' to '" + output +
                                   "', fsynced with its directory\n");
  CHECK(testing::ReadWholeFile(output) == first);
  struct stat st {};
  REQUIRE(::stat(output.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  // JSON of both, --durability, --no-fsync.
  const std::vector<std::byte> second = PatternBytes(123, 3);
  WriteWholeFile(input, second);
  result = Regionctl({"import", path, "state", "--input", input, "--durability",
                      "pwrite-fdatasync", "--json"});
  RequireSuccess(result);
  nlohmann::json document = ParseJson(result);
  CHECK(document == nlohmann::json{{"path", path}, {"region", "state"}, {"generation", 2},
                                   {"length", 123}, {"durability", "pwrite-fdatasync"}});
  result = Regionctl({"export", path, "state", "--output", output, "--no-fsync", "--json"});
  RequireSuccess(result);
  document = ParseJson(result);
  CHECK(document == nlohmann::json{{"path", path},
                                   {"region", "state"},
                                   {"generation", 2},
                                   {"length", 123},
                                   {"output", output},
                                   {"durable", false},
                                   {"atomic", true},
                                   {"skipped_torn_generation", nullptr}});
  CHECK(testing::ReadWholeFile(output) == second);
  CHECK(Entries(dir) == std::vector<std::string>{"input.bin", "state.bin", "store.rs"});

  // An empty commit exports an empty file.
  WriteWholeFile(input, {});
  RequireSuccess(Regionctl({"import", path, "state", "--input", input}));
  RequireSuccess(Regionctl({"export", path, "state", "--output", output}));
  CHECK(std::filesystem::file_size(output) == 0);
}

TEST_CASE("regionctl export and import failures: exit codes, one line, nothing changed",
          "[regionctl][export]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  MustCommit(path, "state", PatternBytes(100, 1), 1);
  const std::vector<std::byte> before = FileBytes(path);
  const std::string input = dir.File("input.bin");
  WriteWholeFile(input, PatternBytes(4097, 2));  // over "other"'s 4 KiB capacity
  std::filesystem::create_directory(dir.File("sub"));
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{"export", path, "state", "--output", dir.File("missing/out.bin")}, kExitFailure,
            "missing/out.bin"},
           {{"export", path, "state", "--output", dir.File("sub")}, kExitFailure, "directory"},
           {{"export", dir.File("nope.rs"), "state", "--output", dir.File("o.bin")}, kExitFailure,
            "nope.rs"},
           {{"export", path, "nosuch", "--output", dir.File("o.bin")}, kExitUsage, "nosuch"},
           {{"export", path, "state"}, kExitUsage, "--output"},
           {{"export", path, "state", "--output", dir.File("o.bin"), "--bogus"}, kExitUsage,
            "--bogus"},
           {{"export", path, "state", "--output", path}, kExitUsage, "the store itself"},
           {{"import", path, "state"}, kExitUsage, "--input"},
           {{"import", path, "other", "--input", input}, kExitUsage, "capacity"},
           {{"import", path, "state", "--input", dir.File("none.bin")}, kExitFailure, "none.bin"},
           {{"import", path, "state", "--input", input, "--durability", "fast"}, kExitUsage,
            "fast"},
       }) {
    INFO(Describe(c.args));
    const ProcessResult result = Regionctl(c.args);
    RequireFailure(result, c.exit_code);
    CHECK_THAT(result.stderr_bytes, Catch::Contains(c.says));
    REQUIRE(FileBytes(path) == before);
  }
  CHECK(Entries(dir) == std::vector<std::string>{"input.bin", "store.rs", "sub"});
}

TEST_CASE("regionctl commit, load and verify usage errors exit 2 and change nothing",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::string plain = CreateStore(dir, "plain.rs", "64KiB");
  const std::vector<std::byte> before = FileBytes(path);
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
  CHECK(FileBytes(path) == before);
  CHECK(dir.List() == std::vector<std::string>{"input.bin", "plain.rs", "store.rs"});
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

// bench's shortening option: five 1 ms batches per arm, so the run costs a
// few updates per arm (mostly flushes) and no assertion depends on timing.
const std::vector<std::string> kQuickBench = {"bench", "--seconds", "0.005"};

std::vector<std::string> BenchArgs(const std::string& bench_dir,
                                   std::vector<std::string> extra = {}) {
  std::vector<std::string> args = kQuickBench;
  args.push_back("--dir");
  args.push_back(bench_dir);
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST_CASE("regionctl bench --json prints one object with the documented keys and removes its files",
          "[regionctl]") {
  TempDir dir;
  const ProcessResult result = Regionctl(BenchArgs(dir.path().string(), {"--json"}));
  RequireSuccess(result);
  const nlohmann::json document = ParseJson(result);

  std::vector<std::string> keys;
  for (const auto& item : document.items()) keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<std::string>{"filesystem", "kernel", "offset", "results", "store_size",
                                         "update_size"});
  REQUIRE(document["filesystem"].is_string());
  CHECK_FALSE(document["filesystem"].get<std::string>().empty());
  REQUIRE(document["kernel"].is_string());
  CHECK_FALSE(document["kernel"].get<std::string>().empty());
  CHECK(document["store_size"] == 16 * kMiB);
  CHECK(document["update_size"] == kMiB);
  CHECK(document["offset"] == 2 * kMiB);

  const std::vector<std::string> allowed_arms = {"pwrite",
                                                 "pwrite_fdatasync",
                                                 "msync_sync",
                                                 "msync_async",
                                                 "none",
                                                 "commit_none",
                                                 "commit_async",
                                                 "commit_sync",
                                                 "commit_pwrite_fdatasync"};
  const nlohmann::json& results = document["results"];
  REQUIRE(results.is_array());
  // arm/variant/size triples seen, to check that the lab and the commits ran.
  std::vector<std::string> seen;
  for (const nlohmann::json& entry : results) {
    INFO(entry.dump());
    REQUIRE(entry.is_object());
    CHECK(entry.size() == 5);
    REQUIRE(entry["arm"].is_string());
    REQUIRE(entry["variant"].is_string());
    REQUIRE(entry["size"].is_number_unsigned());
    REQUIRE(entry["mib_per_s"].is_number());
    REQUIRE(entry["ops_per_s"].is_number());
    const std::string arm = entry["arm"];
    const std::string variant = entry["variant"];
    CHECK(std::find(allowed_arms.begin(), allowed_arms.end(), arm) != allowed_arms.end());
    CHECK((variant == "oneshot" || variant == "longlived"));
    CHECK(entry["size"].get<uint64_t>() > 0);
    CHECK(entry["mib_per_s"].get<double>() > 0);
    CHECK(entry["ops_per_s"].get<double>() > 0);
    seen.push_back(arm + "/" + variant + "/" + std::to_string(entry["size"].get<uint64_t>()));
  }
  const std::string mib = std::to_string(kMiB);
  for (const std::string arm :
       {"pwrite", "pwrite_fdatasync", "msync_sync", "msync_async", "none"}) {
    for (const std::string variant : {"longlived", "oneshot"}) {
      const std::string key = arm + "/" + variant + "/" + mib;
      INFO(key);
      CHECK(std::count(seen.begin(), seen.end(), key) == 1);
    }
  }
  for (const std::string arm :
       {"commit_none", "commit_async", "commit_sync", "commit_pwrite_fdatasync"}) {
    for (const std::string& size : {std::string("4096"), mib}) {
      const std::string key = arm + "/longlived/" + size;
      INFO(key);
      CHECK(std::count(seen.begin(), seen.end(), key) == 1);
    }
  }
  CHECK(dir.List().empty());
}

TEST_CASE("regionctl bench prints a table and ends with its recommendations", "[regionctl]") {
  TempDir dir;
  const ProcessResult result = Regionctl(BenchArgs(dir.path().string()));
  RequireSuccess(result);
  const std::string& out = result.stdout_bytes;
  CHECK_THAT(out, Catch::Contains("arm ") && Catch::Contains("MiB/s") &&
                      Catch::Contains("msync_sync") && Catch::Contains("oneshot") &&
                      Catch::Contains("commit_pwrite_fdatasync"));
  REQUIRE_FALSE(out.empty());
  REQUIRE(out.back() == '\n');
  // The last three lines: durable small, durable large, undurable.
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end = out.find('\n'); end != std::string::npos; end = out.find('\n', start)) {
    lines.push_back(out.substr(start, end - start));
    start = end + 1;
  }
  REQUIRE(lines.size() > 3);
  const size_t count = lines.size();
  CHECK_THAT(lines[count - 3],
             Catch::StartsWith("recommendation: durable, small updates (4 KiB): "));
  CHECK_THAT(lines[count - 2],
             Catch::StartsWith("recommendation: durable, large updates (1 MiB): "));
  CHECK_THAT(lines[count - 1], Catch::StartsWith("recommendation: undurable "));
  CHECK(dir.List().empty());
}

TEST_CASE("regionctl bench refuses bad flags with exit 2 and a missing directory with exit 1",
          "[regionctl]") {
  TempDir dir;
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"bench", "--bogus"},
                                             {"bench", "--seconds", "0"},
                                             {"bench", "--seconds", "fast"},
                                             {"bench", "--dir"},
                                             {"bench", "stray-argument"}}) {
    INFO(Describe(args));
    RequireFailure(Regionctl(args), kExitUsage);
  }
  const std::string missing = dir.File("missing-dir");
  ProcessResult result = Regionctl(BenchArgs(missing));
  RequireFailure(result, kExitFailure);
  CHECK_THAT(result.stderr_bytes, Catch::Contains(missing));

  // A file where a directory belongs is refused before anything is created.
  const std::string file = dir.File("plain-file");
  WriteWholeFile(file, PatternBytes(10, 3));
  result = Regionctl(BenchArgs(file));
  RequireFailure(result, kExitFailure);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("not a directory"));
  CHECK(dir.List() == std::vector<std::string>{"plain-file"});
}

TEST_CASE("regionctl bench --help documents the quick option and the JSON keys", "[regionctl]") {
  const ProcessResult result = Regionctl({"bench", "--help"});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::Contains("Usage: regionctl bench") &&
                                      Catch::Contains("--seconds") && Catch::Contains("--dir") &&
                                      Catch::Contains("--json") && Catch::Contains("mib_per_s") &&
                                      Catch::Contains("Example:\n  "));
  const ProcessResult top = Regionctl({"--help"});
  RequireSuccess(top);
  CHECK_THAT(top.stdout_bytes, Catch::Contains("bench"));
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
  const std::vector<std::byte> before = FileBytes(path);
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
  CHECK(FileBytes(path) == before);

  // create --force onto the link would replace the link, not the store.
  ProcessResult forced = Regionctl({"create", link, "--size", "2MiB", "--force"});
  RequireFailure(forced, kExitUsage);
  CHECK_THAT(forced.stderr_bytes, Catch::Contains("is a symbolic link"));
  CHECK(std::filesystem::read_symlink(link) == "store.rs");
  CHECK(FileBytes(path) == before);

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
  CHECK(FileBytes(exported) == payload);
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
}  // namespace regionstore

#endif  // REGIONCTL_PATH
