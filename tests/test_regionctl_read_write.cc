// regionctl write and read, driven as a separate process: bytes written in
// every durability mode read back identically, empty ranges and the data
// area's last byte, --output files, ranges past the data area, and a store
// held by another writer.
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
  CHECK(ReadWholeFile(output) == from_stdin);
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
  CHECK(document == nlohmann::json{{"schema_version", 1},
                                   {"path", path},
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
  CHECK(document == nlohmann::json{{"schema_version", 1},
                                   {"path", path},
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
  CHECK(ReadWholeFile(output) == std::vector<std::byte>(100, std::byte{0}));
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

TEST_CASE("regionctl write past the data area exits 2 and leaves the file unchanged",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::vector<std::byte> before = ReadWholeFile(path);
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
      REQUIRE(ReadWholeFile(path) == before);
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

TEST_CASE("regionctl on a store held by a writer: write and create --force exit 4, read works",
          "[regionctl][multiprocess]") {
  TempDir dir;
  const std::string path = CreateStore(dir, "store.rs");
  const std::vector<std::byte> data = PatternBytes(4096, 11);
  {
    // This process holds the single-writer lock; regionctl runs in another.
    Store writer = testing::MustOpen(path, OpenMode::kReadWrite);
    const std::vector<std::byte> before = ReadWholeFile(path);

    ProcessResult result = Regionctl({"write", path, "--offset", "0"}, data);
    RequireFailure(result, kExitBusy);
    CHECK_THAT(result.stderr_bytes, Catch::Contains(path));

    result = Regionctl({"create", path, "--size", "1MiB", "--force"});
    RequireFailure(result, kExitBusy);
    CHECK_THAT(result.stderr_bytes, Catch::Contains(path));
    CHECK(ReadWholeFile(path) == before);

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
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
