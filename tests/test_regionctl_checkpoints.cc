// regionctl commit, load, export and import, driven as a separate process:
// payloads from --input and standard input, the default durability and the
// JSON report, a region with no commit, payloads over capacity, a store
// held by another process's writer, and export's atomic replacement; a batch
// through the journal or streamed, sinks named twice, and copy's report of
// the regions a grow adds.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <csignal>
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

#include "journal.h"
#include "regionstore/regionstore.h"
#include "slot.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/regionctl_stores.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH only when the tool is built.
#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

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
  CHECK(ReadWholeFile(output) == second);

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

TEST_CASE("regionctl load --wait-newer-than prints the next commit, and exits 5 at its timeout",
          "[regionctl][wait]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  MustCommit(path, "state", PatternBytes(10, 1), 1);
  // One there already: at once.
  ProcessResult result = Regionctl({"load", path, "state", "--wait-newer-than", "0"});
  RequireSuccess(result);
  CHECK(result.StdoutAsBytes() == PatternBytes(10, 1));
  // None within the timeout: exit 5, nothing on standard output, no file.
  const std::string output = dir.File("next.bin");
  result = Regionctl(
      {"load", path, "state", "--wait-newer-than", "1", "--timeout", "0.2", "--output", output});
  RequireFailure(result, kExitTimedOut);
  CHECK_THAT(result.stderr_bytes,
             Catch::Contains("timed out") && Catch::Contains("no commit above generation 1"));
  CHECK_FALSE(std::filesystem::exists(output));
  // A writer in another process commits while (or before) regionctl waits.
  const pid_t writer = ::fork();
  REQUIRE(writer >= 0);
  if (writer == 0) {
    ::alarm(60);
    auto store = Store::Open(path, OpenMode::kReadWrite);
    if (!store.ok() || !store->Commit("state", PatternBytes(3000, 2), Durability::kNone).ok()) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  result = Regionctl({"load", path, "state", "--wait-newer-than", "1", "--timeout", "60"});
  int status = 0;
  REQUIRE(::waitpid(writer, &status, 0) == writer);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  RequireSuccess(result);
  CHECK(result.StdoutAsBytes() == PatternBytes(3000, 2));
  // Bad uses: --timeout alone, a wait beside --get, a timeout that is not
  // positive.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"load", path, "state", "--timeout", "1"},
           {"load", path, "--get", "state=-", "--wait-newer-than", "1"},
           {"load", path, "state", "--wait-newer-than", "1", "--timeout", "0"}}) {
    INFO(Describe(args));
    RequireFailure(Regionctl(args), kExitUsage);
  }
}

TEST_CASE("regionctl commit of a payload over the capacity exits 2 and changes nothing",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  const std::vector<std::byte> kept = PatternBytes(1000, 26);
  MustCommit(path, "state", kept, 1);
  const std::vector<std::byte> before = ReadStoreButIntent(path);

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
      REQUIRE(ReadStoreButIntent(path) == before);
    }
  }
  CHECK(MustLoad(path, "state") == kept);
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

    const std::vector<std::byte> before = ReadWholeFile(path);
    const std::string input = dir.File("input.bin");
    WriteWholeFile(input, PatternBytes(100, 44));
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"commit", path, "state"},
                                               {"commit", path, "other", "--input", input},
                                               {"import", path, "other", "--input", input}}) {
      INFO(Describe(args));
      const ProcessResult result = Regionctl(args, PatternBytes(100, 45));
      RequireFailure(result, kExitBusy);
      CHECK_THAT(result.stderr_bytes, Catch::Contains(path));
      REQUIRE(ReadWholeFile(path) == before);
    }
    // verify, inspect and export take no lock either.
    RequireSuccess(Regionctl({"verify", path}));
    RequireSuccess(Regionctl({"export", path, "state", "--output", dir.File("exported.bin")}));
    CHECK(ReadWholeFile(dir.File("exported.bin")) == cached);
    CHECK(RegionJsonNamed(InspectJson(path), "state")["generation"] == 2);
  }
  // Released with the handle: the next commit follows generation 2.
  MustCommit(path, "state", durable, 3);
  CHECK(MustLoad(path, "state") == durable);
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
  CHECK(ReadWholeFile(output) == PatternBytes(33, 1));

  // import = commit of FILE; export replaces FILE with it.
  const std::vector<std::byte> first = PatternBytes(40000, 2);
  WriteWholeFile(input, first);
  result = Regionctl({"import", path, "state", "--input", input});
  RequireSuccess(result);
  CHECK(result.stdout_bytes == "committed generation 1 (39.1 KiB) to 'state', durability sync\n");
  result = Regionctl({"export", path, "state", "--output", output});
  RequireSuccess(result);
  CHECK(result.stdout_bytes == "exported generation 1 (39.1 KiB) of 'state' to '" + output +
                                   "', fsynced with its directory\n");
  CHECK(ReadWholeFile(output) == first);
  struct stat st {};
  REQUIRE(::stat(output.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  // JSON of both, --durability, --no-fsync.
  const std::vector<std::byte> second = PatternBytes(123, 3);
  WriteWholeFile(input, second);
  result = Regionctl(
      {"import", path, "state", "--input", input, "--durability", "pwrite-fdatasync", "--json"});
  RequireSuccess(result);
  nlohmann::json document = ParseJson(result);
  CHECK(document == nlohmann::json{{"schema_version", 1},
                                   {"path", path},
                                   {"region", "state"},
                                   {"generation", 2},
                                   {"length", 123},
                                   {"durability", "pwrite-fdatasync"}});
  result = Regionctl({"export", path, "state", "--output", output, "--no-fsync", "--json"});
  RequireSuccess(result);
  document = ParseJson(result);
  CHECK(document == nlohmann::json{{"schema_version", 1},
                                   {"path", path},
                                   {"region", "state"},
                                   {"generation", 2},
                                   {"length", 123},
                                   {"output", output},
                                   {"durable", false},
                                   {"atomic", true},
                                   {"skipped_torn_generation", nullptr}});
  CHECK(ReadWholeFile(output) == second);
  CHECK(Entries(dir) ==
        std::vector<std::string>{"input.bin", "state.bin", "store.rs", "store.rs.shm"});

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
  const std::vector<std::byte> before = ReadStoreButIntent(path);
  const std::string input = dir.File("input.bin");
  WriteWholeFile(input, PatternBytes(4097, 2));  // over "other"'s 4 KiB capacity
  std::filesystem::create_directory(dir.File("sub"));
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{"export", path, "state", "--output", dir.File("missing/out.bin")},
            kExitFailure,
            "missing/out.bin"},
           {{"export", path, "state", "--output", dir.File("sub")}, kExitFailure, "directory"},
           {{"export", dir.File("nope.rs"), "state", "--output", dir.File("o.bin")},
            kExitFailure,
            "nope.rs"},
           {{"export", path, "nosuch", "--output", dir.File("o.bin")}, kExitUsage, "nosuch"},
           {{"export", path, "state"}, kExitUsage, "--output"},
           {{"export", path, "state", "--output", dir.File("o.bin"), "--bogus"},
            kExitUsage,
            "--bogus"},
           {{"export", path, "state", "--output", path}, kExitUsage, "the store itself"},
           {{"import", path, "state"}, kExitUsage, "--input"},
           {{"import", path, "other", "--input", input}, kExitUsage, "capacity"},
           {{"import", path, "state", "--input", dir.File("none.bin")}, kExitFailure, "none.bin"},
           {{"import", path, "state", "--input", input, "--durability", "fast"},
            kExitUsage,
            "fast"},
       }) {
    INFO(Describe(c.args));
    const ProcessResult result = Regionctl(c.args);
    RequireFailure(result, c.exit_code);
    CHECK_THAT(result.stderr_bytes, Catch::Contains(c.says));
    REQUIRE(ReadStoreButIntent(path) == before);
  }
  CHECK(Entries(dir) == std::vector<std::string>{"input.bin", "store.rs", "store.rs.shm", "sub"});
}

TEST_CASE("regionctl commit --set commits a batch, load returns it, and bad batches change nothing",
          "[regionctl][batch]") {
  TempDir dir;
  const std::string path = dir.File("batch.rs");
  RequireSuccess(Regionctl({"create", path, "--size", "64K", "--checkpoint", "a:100",
                            "--checkpoint", "b:5000", "--batch-log"}));
  const std::string a_file = dir.File("a.bin"), b_file = dir.File("b.bin");
  const std::vector<std::byte> a = PatternBytes(99, 1), b = PatternBytes(4097, 2);
  WriteWholeFile(a_file, a);
  WriteWholeFile(b_file, b);
  ProcessResult result = Regionctl({"commit", path, "--set", "a=" + a_file, "--set", "b=" + b_file,
                                    "--durability", "pwrite-fdatasync", "--json"});
  RequireSuccess(result);
  const nlohmann::json document = ParseJson(result);
  CHECK(document == nlohmann::json{{"schema_version", 1},
                                   {"path", path},
                                   {"regions",
                                    {{{"name", "a"}, {"generation", 1}, {"length", 99}},
                                     {{"name", "b"}, {"generation", 1}, {"length", 4097}}}},
                                   {"durability", "pwrite-fdatasync"},
                                   {"journaled", true},
                                   {"barriers", 1}});
  CHECK(MustLoad(path, "a") == a);
  CHECK(MustLoad(path, "b") == b);
  // Refused, each with exit 2, and nothing changes: a region twice, an
  // unknown one, one too long, NAME beside --set, a store without a log
  // (protocol 1: every protocol 2 store has one).
  const std::string plain = dir.File("plain.rs");
  RequireSuccess(
      Regionctl({"create", plain, "--size", "64K", "--protocol", "1", "--checkpoint", "a:100"}));
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"commit", path, "--set", "a=" + a_file, "--set", "a=" + a_file},
           {"commit", path, "--set", "a=" + a_file, "--set", "nope=" + a_file},
           {"commit", path, "--set", "a=" + b_file},
           {"commit", path, "a", "--set", "b=" + b_file},
           {"commit", plain, "--set", "a=" + a_file}}) {
    INFO(args[args.size() - 1]);
    result = Regionctl(args);
    CHECK(result.exit_code == 2);
    CHECK_FALSE(result.stderr_bytes.empty());
  }
  CHECK(MustLoad(path, "a") == a);
  CHECK(MustLoad(path, "b") == b);
  // verify names the batch of each member.
  result = Regionctl({"verify", path, "--json"});
  RequireSuccess(result);
  const std::string text = result.stdout_bytes;
  CHECK(text.find("\"batch\": 1") != std::string::npos);
  CHECK(text.find("\"batch_withdrawn\": false") != std::string::npos);
  result = Regionctl({"inspect", path, "--json"});
  RequireSuccess(result);
  CHECK(ParseJson(result)["incompat_features"] ==
        nlohmann::json::array({"compact_slots", "batch_log", "sidecar", "journal"}));
  // And so do the text forms of verify and inspect.
  for (const char* command : {"verify", "inspect"}) {
    result = Regionctl({command, path});
    RequireSuccess(result);
    INFO(result.stdout_bytes);
    CHECK(result.stdout_bytes.find("generation 1, length 99 (99 B), committed") !=
          std::string::npos);
    CHECK(result.stdout_bytes.find(", batch 1\n") != std::string::npos);
  }
}

TEST_CASE("regionctl load --get returns a batch byte-exact, and never mixes beside a commit loop",
          "[regionctl][batch][loadset]") {
  TempDir dir;
  const std::string path = dir.File("get.rs");
  RequireSuccess(Regionctl({"create", path, "--size", "64K", "--checkpoint", "a:100",
                            "--checkpoint", "b:5000", "--batch-log"}));
  const std::string a_file = dir.File("a.bin"), b_file = dir.File("b.bin");
  const std::vector<std::byte> a = PatternBytes(99, 1), b = PatternBytes(4097, 2);
  WriteWholeFile(a_file, a);
  WriteWholeFile(b_file, b);
  RequireSuccess(Regionctl({"commit", path, "--set", "a=" + a_file, "--set", "b=" + b_file}));
  const std::string a_out = dir.File("a.out"), b_out = dir.File("b.out");
  RequireSuccess(Regionctl({"load", path, "--get", "b=" + b_out, "--get", "a=" + a_out}));
  CHECK(ReadWholeFile(a_out) == a);
  CHECK(ReadWholeFile(b_out) == b);
  // Refused with exit 2, no file written: a region twice, an unknown one,
  // NAME beside --get, no NAME=.
  std::filesystem::remove(a_out);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"load", path, "--get", "a=" + a_out, "--get", "a=" + b_out},
           {"load", path, "--get", "a=" + a_out, "--get", "nope=" + b_out},
           {"load", path, "a", "--get", "a=" + a_out},
           {"load", path, "--get", "a"}}) {
    INFO(args.back());
    const ProcessResult result = Regionctl(args);
    CHECK(result.exit_code == 2);
    CHECK_FALSE(result.stderr_bytes.empty());
    CHECK_FALSE(std::filesystem::exists(a_out));
  }
  // Beside a writer committing batches (a: the batch number, b: the same
  // number then a fill), every --get gives one batch.
  const pid_t writer = ::fork();
  REQUIRE(writer >= 0);
  if (writer == 0) {
    auto store = Store::Open(path, OpenMode::kReadWrite);
    if (!store.ok()) ::_exit(10);
    for (uint64_t n = 2;; ++n) {
      std::vector<std::byte> pa(8), pb(4000, std::byte{static_cast<uint8_t>(n)});
      std::memcpy(pa.data(), &n, 8);
      std::memcpy(pb.data(), &n, 8);
      const std::span<const std::byte> sa(pa), sb(pb);
      const BatchMember members[] = {{"a", PayloadPieces(&sa, 1)}, {"b", PayloadPieces(&sb, 1)}};
      if (!store->CommitBatch(members, n % 8 == 0 ? Durability::kSync : Durability::kNone).ok()) {
        ::_exit(11);
      }
    }
  }
  int mixed = 0, loaded = 0;
  for (int i = 0; i < 40; ++i) {
    const ProcessResult result =
        Regionctl({"load", path, "--get", "a=" + a_out, "--get", "b=" + b_out});
    if (result.exit_code != 0) continue;  // the writer's first open, or kBusy
    ++loaded;
    const std::vector<std::byte> got_a = ReadWholeFile(a_out), got_b = ReadWholeFile(b_out);
    if (got_a.size() == 99 || got_b.size() == 4097) {  // the first batch, in both?
      mixed += got_a == a && got_b == b ? 0 : 1;
      continue;
    }
    uint64_t na = 0, nb = 0;
    REQUIRE(got_a.size() == 8);
    REQUIRE(got_b.size() == 4000);
    std::memcpy(&na, got_a.data(), 8);
    std::memcpy(&nb, got_b.data(), 8);
    mixed += na != nb || got_b.back() != std::byte{static_cast<uint8_t>(nb)} ? 1 : 0;
  }
  ::kill(writer, SIGKILL);
  int status = 0;
  ::waitpid(writer, &status, 0);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  // Most loads succeed; a load may give up with exit 4 (LoadSet's bounded
  // retries beside a writer that commits back to back, 36 of 40 loaded on
  // btrfs once), so the bound is half: enough for mixed == 0 to mean
  // something, and no measure of speed.
  CHECK(loaded >= 20);
  CHECK(mixed == 0);
}

// The record at the start of the store's batch journal, if one is there
// whole (docs/FORMAT.md, "Batch journal").
std::optional<journal::Record> FirstJournalRecord(const std::string& path) {
  const StoreInfo info = MustReadInfo(path);
  const std::optional<uint64_t> offset = journal::Offset(info);
  REQUIRE(offset.has_value());
  const std::vector<std::byte> file = ReadWholeFile(path);
  REQUIRE(file.size() >= *offset + info.journal_size);
  const std::span<const std::byte> journal_bytes =
      std::span(file).subspan(*offset, info.journal_size);
  const std::optional<uint64_t> length =
      journal::RecordLength(journal_bytes.first(journal::kUnit), info.journal_size);
  if (!length) return std::nullopt;
  return journal::DecodeRecord(journal_bytes.first(*length), info);
}

TEST_CASE("regionctl commit --set of small regular files is one journal record and one barrier",
          "[regionctl][batch][journal]") {
  TempDir dir;
  const std::string path = dir.File("journal.rs");
  RequireSuccess(Regionctl(
      {"create", path, "--size", "64K", "--checkpoint", "a:100", "--checkpoint", "b:5000"}));
  REQUIRE(MustReadInfo(path).journal_size > 0);
  REQUIRE_FALSE(FirstJournalRecord(path).has_value());
  const std::string a_file = dir.File("a.bin"), b_file = dir.File("b.bin");
  const std::vector<std::byte> a = PatternBytes(99, 3), b = PatternBytes(4097, 4);
  WriteWholeFile(a_file, a);
  WriteWholeFile(b_file, b);
  for (const char* mode : {"sync", "pwrite-fdatasync"}) {
    INFO("durability " << mode);
    // A fresh store each time: the record is then the journal's first.
    std::filesystem::remove(path);
    std::filesystem::remove(path + ".shm");
    RequireSuccess(Regionctl(
        {"create", path, "--size", "64K", "--checkpoint", "a:100", "--checkpoint", "b:5000"}));
    const ProcessResult result = Regionctl({"commit", path, "--set", "a=" + a_file, "--set",
                                            "b=" + b_file, "--durability", mode, "--json"});
    RequireSuccess(result);
    RequireMatchesSchema("commit", result);
    const nlohmann::json document = ParseJson(result);
    CHECK(document["journaled"] == true);
    // The record's RWF_DSYNC write is the batch's one barrier: no msync,
    // no fdatasync.
    CHECK(document["barriers"] == 1);
    // The record is in the journal: batch 1, both members, their lengths.
    const std::optional<journal::Record> record = FirstJournalRecord(path);
    REQUIRE(record.has_value());
    CHECK(record->id == 1);
    REQUIRE(record->members.size() == 2);
    // Table indexes: a is region 0, b region 1.
    CHECK(record->members[0].region == 0);
    CHECK(record->members[0].length == 99);
    CHECK(record->members[1].region == 1);
    CHECK(record->members[1].length == 4097);
    CHECK(MustLoad(path, "a") == a);
    CHECK(MustLoad(path, "b") == b);
  }
  // Not durable: the journal is for durable batches only, and the record
  // there is still batch 1's.
  const ProcessResult none =
      Regionctl({"commit", path, "--set", "a=" + a_file, "--durability", "none", "--json"});
  RequireSuccess(none);
  CHECK(ParseJson(none)["journaled"] == false);
  REQUIRE(FirstJournalRecord(path).has_value());
  CHECK(FirstJournalRecord(path)->id == 1);
  CHECK(MustLoad(path, "a") == a);
}

TEST_CASE("regionctl commit --set streams a set over half the journal, and piped inputs",
          "[regionctl][batch][journal]") {
  TempDir dir;
  const std::string path = dir.File("stream.rs");
  // A 256 KiB journal: 128 KiB for a record. 4 KiB of head, then 200 KiB
  // and 4 KiB of images do not fit.
  RequireSuccess(Regionctl({"create", path, "--size", "64K", "--journal-size", "256KiB",
                            "--checkpoint", "big:200KiB", "--checkpoint", "small:100"}));
  const std::string big_file = dir.File("big.bin"), small_file = dir.File("small.bin");
  const std::vector<std::byte> big = PatternBytes(200 * 1024, 5), small = PatternBytes(100, 6);
  WriteWholeFile(big_file, big);
  WriteWholeFile(small_file, small);
  ProcessResult result = Regionctl(
      {"commit", path, "--set", "big=" + big_file, "--set", "small=" + small_file, "--json"});
  RequireSuccess(result);
  RequireMatchesSchema("commit", result);
  CHECK(ParseJson(result)["journaled"] == false);
  CHECK(ParseJson(result)["barriers"] == 1);
  CHECK_FALSE(FirstJournalRecord(path).has_value());
  CHECK(MustLoad(path, "big") == big);
  CHECK(MustLoad(path, "small") == small);
  // Standard input from a pipe is not a regular file: streamed, however
  // small.
  const std::vector<std::byte> piped = PatternBytes(50, 7);
  result = Regionctl({"commit", path, "--set", "small=-", "--json"}, std::span(piped));
  RequireSuccess(result);
  CHECK(ParseJson(result)["journaled"] == false);
  CHECK_FALSE(FirstJournalRecord(path).has_value());
  CHECK(MustLoad(path, "small") == piped);
  // Both regular and small enough: the journal.
  result = Regionctl({"commit", path, "--set", "small=" + small_file, "--json"});
  RequireSuccess(result);
  CHECK(ParseJson(result)["journaled"] == true);
  REQUIRE(FirstJournalRecord(path).has_value());
  CHECK(MustLoad(path, "small") == small);
  CHECK(MustLoad(path, "big") == big);
  // The text form says which.
  result = Regionctl({"commit", path, "--set", "small=" + small_file});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes, Catch::Contains("one record in the batch journal"));
}

TEST_CASE("regionctl load --get may name /dev/null twice, but never one regular file twice",
          "[regionctl][batch][loadset]") {
  TempDir dir;
  const std::string path = dir.File("sink.rs");
  RequireSuccess(Regionctl(
      {"create", path, "--size", "64K", "--checkpoint", "a:100", "--checkpoint", "b:5000"}));
  const std::string a_file = dir.File("a.bin"), b_file = dir.File("b.bin");
  WriteWholeFile(a_file, PatternBytes(99, 8));
  WriteWholeFile(b_file, PatternBytes(4097, 9));
  RequireSuccess(Regionctl({"commit", path, "--set", "a=" + a_file, "--set", "b=" + b_file}));
  ProcessResult result = Regionctl({"load", path, "--get", "a=/dev/null", "--get", "b=/dev/null"});
  CHECK(result.exit_code == 0);
  CHECK(result.stderr_bytes.empty());
  // A set that does not load still fails with the sink named twice.
  std::filesystem::remove(path);
  RequireSuccess(Regionctl(
      {"create", path, "--size", "64K", "--checkpoint", "a:100", "--checkpoint", "b:5000"}));
  RequireFailure(Regionctl({"load", path, "--get", "a=/dev/null", "--get", "b=/dev/null"}),
                 kExitFailure);
  RequireSuccess(Regionctl({"commit", path, "--set", "a=" + a_file, "--set", "b=" + b_file}));
  // One regular file by two names (the same name, a hard link): refused
  // before anything is written, and a file this run made is removed.
  const std::string out = dir.File("out.bin"), link = dir.File("link.bin");
  result = Regionctl({"load", path, "--get", "a=" + out, "--get", "b=" + out});
  RequireFailure(result, kExitUsage);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("are the same file"));
  CHECK_FALSE(std::filesystem::exists(out));
  WriteWholeFile(out, PatternBytes(10, 10));
  std::filesystem::create_hard_link(out, link);
  result = Regionctl({"load", path, "--get", "a=" + out, "--get", "b=" + link});
  RequireFailure(result, kExitUsage);
  CHECK_THAT(result.stderr_bytes, Catch::Contains("are the same file"));
  CHECK(ReadWholeFile(out) == PatternBytes(10, 10));
  // A sink beside a regular file: the file gets its region.
  RequireSuccess(Regionctl({"load", path, "--get", "a=/dev/null", "--get", "b=" + out}));
  CHECK(ReadWholeFile(out) == PatternBytes(4097, 9));
}

TEST_CASE("regionctl copy --json and its sentence count DST's regions, those --checkpoint adds too",
          "[regionctl][copy]") {
  TempDir dir;
  const std::string source = dir.File("src.rs");
  RequireSuccess(Regionctl(
      {"create", source, "--size", "64K", "--checkpoint", "a:100", "--checkpoint", "b:5000"}));
  const std::string a_file = dir.File("a.bin");
  WriteWholeFile(a_file, PatternBytes(99, 11));
  RequireSuccess(Regionctl({"commit", source, "a", "--input", a_file}));
  // a grows, c and d are new: DST has four regions, the source two.
  const ProcessResult result =
      Regionctl({"copy", source, dir.File("grown.rs"), "--checkpoint", "a:8KiB", "--checkpoint",
                 "c:4KiB", "--checkpoint", "d:4KiB", "--json"});
  RequireSuccess(result);
  RequireMatchesSchema("copy", result);
  const nlohmann::json report = ParseJson(result);
  CHECK(report["destination_regions"] == 4);
  CHECK(report["regions"] == 2);
  CHECK(report["regions_committed"] == 1);
  CHECK(InspectJson(dir.File("grown.rs"))["regions"].size() == 4);
  const ProcessResult text =
      Regionctl({"copy", source, dir.File("grown2.rs"), "--checkpoint", "e:4KiB"});
  RequireSuccess(text);
  CHECK_THAT(text.stdout_bytes, Catch::Contains("1 of 3 regions with a commit"));
  // A plain copy: the same count both ways.
  const nlohmann::json plain = JsonOf({"copy", source, dir.File("plain.rs"), "--json"});
  CHECK(plain["regions"] == 2);
  CHECK(plain["destination_regions"] == 2);
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
