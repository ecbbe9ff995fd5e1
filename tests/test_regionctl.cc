// regionctl, driven as a separate process the way users and scripts run it:
// exit codes, exact output bytes, the JSON of inspect, and one line on stderr
// for every failure.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
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
#include "support/run_process.h"
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
using testing::TempDir;
using testing::WriteWholeFile;

// regionctl's exit codes: a fixed contract other tools rely on.
constexpr int kExitSuccess = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInvalidStore = 3;
constexpr int kExitBusy = 4;

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

// A successful run: exit 0 and nothing on stderr but warnings (create warns
// when the build tree is on a copy-on-write filesystem).
void RequireSuccess(const ProcessResult& result) {
  INFO("stderr: " << result.stderr_bytes);
  REQUIRE(result.term_signal == 0);
  REQUIRE(result.exit_code == kExitSuccess);
  for (const std::string& line : result.StderrLines()) {
    REQUIRE(line.rfind("regionctl: warning: ", 0) == 0);
  }
}

// A failed run: the expected exit code, nothing on stdout and exactly one
// line on stderr, "regionctl: ...".
void RequireFailure(const ProcessResult& result, int expected_exit_code) {
  INFO("stderr: " << result.stderr_bytes);
  REQUIRE(result.term_signal == 0);
  REQUIRE(result.exit_code == expected_exit_code);
  REQUIRE(result.stdout_bytes.empty());
  REQUIRE(result.StderrLines().size() == 1);
  REQUIRE(result.stderr_bytes.back() == '\n');
  REQUIRE(result.stderr_bytes.rfind("regionctl: ", 0) == 0);
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
  };
  for (const auto& args : commands) {
    INFO(Describe(args));
    RequireFailure(Regionctl(args, stdin_bytes), expected_exit_code);
    if (is_file) REQUIRE(FileBytes(path) == before);
  }
}

TEST_CASE("regionctl create then inspect --json reports the new store's superblock",
          "[regionctl]") {
  TempDir dir;
  const std::string path = dir.File("store.rs");
  const ProcessResult created = Regionctl({"create", path, "--size", "16MiB"});
  RequireSuccess(created);
  CHECK_THAT(created.stdout_bytes,
             Catch::StartsWith("created " + path + ": data area 16.0 MiB, file ") &&
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
  // DESIGN.md: data offset 2 MiB must be a 1 MiB-aligned file offset.
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
  CHECK(result.stdout_bytes == "regionctl 0.1.0\n");

  result = Regionctl({"--help"});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::Contains("Example:") && Catch::Contains("create") &&
                                      Catch::Contains("inspect") && Catch::Contains("write") &&
                                      Catch::Contains("read"));

  for (const std::string command : {"create", "inspect", "write", "read"}) {
    INFO(command);
    result = Regionctl({command, "--help"});
    RequireSuccess(result);
    CHECK_THAT(result.stdout_bytes, Catch::Contains("Usage: regionctl " + command) &&
                                        Catch::Contains("Example:\n  ") &&
                                        Catch::Contains("regionctl " + command + " state.rs"));
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
  CHECK_THAT(result.stdout_bytes, Catch::StartsWith("created " + path + ": data area 1.0 MiB"));
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

}  // namespace
}  // namespace regionstore

#endif  // REGIONCTL_PATH
