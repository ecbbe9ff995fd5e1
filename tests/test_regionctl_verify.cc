// regionctl verify, and what load, export, stat and dump --region say of the
// same damage: a clean store, flipped payloads, damaged headers, commits
// torn by a power loss or a SIGKILL, a damaged region table, and the
// progress bar on a terminal.
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
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "regionstore/regionstore.h"
#include "slot.h"
#include "store_rep.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/regionctl_stores.h"
#include "support/shared_memory.h"
#include "support/skip.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH only when the tool is built.
#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

TEST_CASE("regionctl verify on a clean store exits 0 and reports every region and slot",
          "[regionctl]") {
  TempDir dir;
  const std::string path = CreateCheckpointStore(dir, "store.rs");
  MustCommit(path, "state", PatternBytes(100, 28), 1);
  MustCommit(path, "state", PatternBytes(5000, 29), 2);

  ProcessResult result = Regionctl({"verify", path});
  RequireSuccess(result);
  CHECK_THAT(result.stdout_bytes,
             Catch::StartsWith("'" + path +
                               "': superblock and region table valid (format 1), data area "
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
  FlipByte(path,
           slot::HeaderFileOffset(MustFindRegion(path, "state"), newest) + slot::hdr::kGeneration);

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
  CHECK_THAT(result.stderr_bytes,
             Catch::Contains("warning") && Catch::Contains("1 slot header fails its checks"));
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
  CHECK(ReadWholeFile(exported) == older);
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
  CHECK(ReadWholeFile(exported) == PatternBytes(10, 99));
  CHECK(dir.List() == std::vector<std::string>{"exported.bin", "store.rs", "store.rs.shm"});

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
    "[regionctl][crash][multiprocess][long]") {
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
  CHECK_THAT(
      result.stdout_bytes,
      Catch::Contains(commits == 3 ? "  slot 2: damaged: " : "  slot 2: empty: unfinished header"));
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
  CHECK(ReadWholeFile(exported) == PatternBytes(10, 99));
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
  const std::vector<std::byte> before = ReadWholeFile(path);
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
    REQUIRE(ReadWholeFile(path) == before);
  }
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
    SKIP_CASE("no /usr/bin/script to run regionctl under a pseudo-terminal");
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
      CHECK_THAT(result.stdout_bytes, Catch::Contains("\rverify: [") &&
                                          Catch::Contains("] 100% (") &&
                                          Catch::Contains("\r\033[K"));
    } else {
      CHECK_THAT(result.stdout_bytes, !Catch::Contains("verify: ["));
    }
  }
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
