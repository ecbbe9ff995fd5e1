// Every --json document regionctl prints validates against its published
// schema (docs/schemas/regionctl-VERB.schema.json), checked by
// scripts/check-json-schema.py in its strict mode: a key printed but not in
// the schema fails, as does a missing key, a wrong type or value, and a
// document whose first key is not "schema_version". The documents come from
// stores in states that change their shape: no region, no commit yet (the
// null fields), commits, batches, a stray temp file, a torn commit, a bad
// header beside a valid commit and a region with no valid header. The states
// only a crash leaves are validated where their tests make them: a batch that
// did not complete and its withdrawal (test_batch.cc), a journaled batch and
// a damaged journal record before a newer one (test_journal.cc) and a torn
// batch record (test_bad_input_verbs.cc).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "slot.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/regionctl_stores.h"
#include "support/temp_dir.h"

#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

const std::string kSchemaDir = std::string(REGIONSTORE_SOURCE_DIR) + "/docs/schemas";

// The verbs with a schema file: regionctl-VERB.schema.json, less the shared
// definitions.
std::set<std::string> SchemaVerbs() {
  std::set<std::string> verbs;
  for (const auto& entry : std::filesystem::directory_iterator(kSchemaDir)) {
    const std::string name = entry.path().filename().string();
    const std::string prefix = "regionctl-";
    const std::string suffix = ".schema.json";
    if (name.rfind(prefix, 0) != 0 || name.size() <= prefix.size() + suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string verb =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (verb != "common") verbs.insert(verb);
  }
  return verbs;
}

// The documents of one test, each saved to a file of the temp dir.
class Documents {
 public:
  explicit Documents(const TempDir& dir) : dir_(dir) {}

  // Saves the stdout of `regionctl VERB ... --json`; `expected_exit_code`
  // is not 0 for verify's verdicts, which print their document too.
  void Add(const std::string& verb, const std::vector<std::string>& args,
           int expected_exit_code = kExitSuccess) {
    std::vector<std::string> full = {verb};
    full.insert(full.end(), args.begin(), args.end());
    full.push_back("--json");
    const ProcessResult result = Regionctl(full);
    INFO(Describe(full) << "\nstderr: " << result.stderr_bytes);
    REQUIRE(result.exit_code == expected_exit_code);
    REQUIRE_FALSE(result.stdout_bytes.empty());
    Save(verb, result.stdout_bytes);
  }

  void Save(const std::string& verb, const std::string& text) {
    const std::string path =
        dir_.File("doc-" + std::to_string(documents_.size()) + "-" + verb + ".json");
    std::ofstream(path, std::ios::binary) << text;
    documents_.emplace_back(verb, path);
  }

  const std::vector<std::pair<std::string, std::string>>& all() const { return documents_; }

  std::set<std::string> verbs() const {
    std::set<std::string> verbs;
    for (const auto& document : documents_) verbs.insert(document.first);
    return verbs;
  }

 private:
  const TempDir& dir_;
  std::vector<std::pair<std::string, std::string>> documents_;
};

void RequireValid(const Documents& documents) {
  const ProcessResult checked = ValidateJsonFiles(documents.all());
  INFO(checked.stdout_bytes << checked.stderr_bytes);
  REQUIRE(checked.exit_code == 0);
  CHECK(checked.stdout_bytes.empty());
}

TEST_CASE("regionctl: every command with --json has a published schema, and every schema a command",
          "[regionctl][json]") {
  std::set<std::string> with_json;
  for (const std::string& command : RegionctlCommands()) {
    const ProcessResult help = Regionctl({command, "--help"});
    RequireSuccess(help);
    if (help.stdout_bytes.find("--json") != std::string::npos) with_json.insert(command);
  }
  CHECK(with_json.size() >= 10);
  CHECK(with_json == SchemaVerbs());
}

TEST_CASE(
    "regionctl: every --json document validates against its schema, in every store state "
    "that changes its shape",
    "[regionctl][json][long]") {
  TempDir dir;
  Documents documents(dir);
  const std::string store = dir.File("s.rs");

  // No region at all: the empty arrays.
  const std::string bare = dir.File("bare.rs");
  documents.Add("create", {bare, "--size", "64KiB"});
  documents.Add("inspect", {bare});
  documents.Add("stat", {bare});
  documents.Add("verify", {bare});

  // Protocol 1 with a batch log: a fresh store's documents hold the nulls.
  documents.Add("create",
                {store, "--size", "64KiB", "--batch-log", "--checkpoint", "state:4KiB:aligned",
                 "--checkpoint", "small:100:compact", "--checkpoint", "état:1KiB"});
  documents.Add("inspect", {store});
  documents.Add("stat", {store});
  documents.Add("verify", {store});

  // Commits: one region, then a batch of two.
  const std::string input = dir.File("input.bin");
  WriteWholeFile(input, PatternBytes(3000, 1));
  const std::string small_input = dir.File("small.bin");
  WriteWholeFile(small_input, PatternBytes(90, 2));
  documents.Add("commit", {store, "state", "--input", input});
  documents.Add("commit", {store, "--set", "state=" + input, "--set", "small=" + small_input,
                           "--durability", "none"});
  documents.Add("import", {store, "état", "--input", small_input});
  documents.Add("commit", {store, "état", "--input", small_input});
  documents.Add("write", {store, "--offset", "100", "--input", small_input});
  documents.Add("export", {store, "state", "--output", dir.File("state.bin")});
  documents.Add("inspect", {store});
  documents.Add("stat", {store});
  documents.Add("verify", {store});
  documents.Add("copy", {store, dir.File("copy.rs")});
  documents.Add("copy", {store, dir.File("grown.rs"), "--size", "128KiB", "--checkpoint",
                         "state:8KiB", "--checkpoint", "new:1KiB"});
  documents.Add("unshare", {dir.File("copy.rs")});

  // A torn newest commit of 'state' (its older one stands): verify's
  // verdict and export's skipped generation are not null.
  const RegionEntry state = MustFindRegion(store, "state");
  TearPayload(store, state, ActiveSlot(store, "state"), 0, 3000);
  documents.Add("verify", {store}, kExitTornCommit);
  documents.Add("export", {store, "state", "--output", dir.File("older.bin")});
  // The older header of 'état' damaged beside its valid newer commit.
  const RegionEntry etat = MustFindRegion(store, "état");
  const uint32_t etat_newest = ActiveSlot(store, "état");
  for (uint32_t index = 0; index < etat.slot_count; ++index) {
    if (index == etat_newest) continue;
    if (RegionJsonNamed(InspectJson(store), "état")["slots"][index]["state"] != "valid") continue;
    PwriteFile(store, slot::HeaderFileOffset(etat, index) + 8,
               std::vector<std::byte>(8, std::byte{0x5a}));
  }
  // A damaged header of region 'small', whose only slot then fails its checks.
  const RegionEntry small = MustFindRegion(store, "small");
  PwriteFile(store, slot::HeaderFileOffset(small, ActiveSlot(store, "small")),
             std::vector<std::byte>(8, std::byte{0x5a}));
  // A temp file named as regionstore 0.10 named them, beside the store.
  WriteWholeFile(dir.File(".s.rs.tmp-0123456789abcdef"), PatternBytes(10, 3));
  documents.Add("inspect", {store});
  documents.Add("stat", {store});
  documents.Add("verify", {store}, kExitInvalidStore);
  {
    const nlohmann::json verified = ParseJson(Regionctl({"verify", store, "--json"}));
    CHECK(verified["damaged_regions"] == nlohmann::json::array({"small"}));
    CHECK(verified["torn_regions"] == nlohmann::json::array({"state"}));
    CHECK(verified["bad_header_regions"] == nlohmann::json::array({"état"}));
    CHECK(verified["stray_temps"].size() == 1);
  }

  // Protocol 2 and its batch journal.
  const std::string journaled = dir.File("p2.rs");
  documents.Add("create", {journaled, "--size", "0", "--protocol", "2", "--checkpoint", "a:1KiB",
                           "--checkpoint", "b:1KiB"});
  documents.Add("commit", {journaled, "--set", "a=" + small_input, "--set", "b=" + small_input});
  documents.Add("inspect", {journaled});
  documents.Add("verify", {journaled});

  documents.Add("bench", {"--seconds", "0.005", "--dir", dir.path().string()});

  RequireValid(documents);
  // Each schema was exercised.
  CHECK(documents.verbs() == SchemaVerbs());
}

TEST_CASE(
    "check-json-schema refuses an undocumented key, a missing key, a wrong type and a late "
    "schema_version, and without --strict accepts a key it does not know",
    "[regionctl][json][long]") {
  TempDir dir;
  const ProcessResult created =
      Regionctl({"create", dir.File("s.rs"), "--size", "0", "--checkpoint", "a:1KiB", "--json"});
  RequireSuccess(created);
  const nlohmann::ordered_json good = nlohmann::ordered_json::parse(created.stdout_bytes);
  REQUIRE(good.begin().key() == "schema_version");

  std::map<std::string, nlohmann::ordered_json> bad;
  bad["extra"] = good;
  bad["extra"]["regions"][0]["undocumented"] = 1;
  bad["missing"] = good;
  bad["missing"].erase("file_size");
  bad["type"] = good;
  bad["type"]["data_size"] = "0";
  bad["version"] = good;
  bad["version"]["schema_version"] = 2;
  bad["order"] = nlohmann::ordered_json::object();
  for (const auto& item : good.items()) {
    if (item.key() != "schema_version") bad["order"][item.key()] = item.value();
  }
  bad["order"]["schema_version"] = 1;

  const std::map<std::string, std::string> expected = {
      {"extra", "'undocumented' was unexpected"}, {"missing", "'file_size' is a required property"},
      {"type", "'0' is not of type 'integer'"},   {"version", "1 was expected"},
      {"order", "the first key is 'path'"},
  };
  for (const auto& [name, document] : bad) {
    Documents documents(dir);
    documents.Save("create", document.dump(2));
    const ProcessResult checked = ValidateJsonFiles(documents.all());
    INFO(name << ": " << checked.stdout_bytes << checked.stderr_bytes);
    CHECK(checked.exit_code == 1);
    CHECK(checked.stdout_bytes.find(expected.at(name)) != std::string::npos);
  }

  // The published (non-strict) schema lets a reader meet a newer key.
  Documents extra(dir);
  extra.Save("create", bad["extra"].dump(2));
  CHECK(ValidateJsonFiles(extra.all(), /*strict=*/false).exit_code == 0);
  Documents missing(dir);
  missing.Save("create", bad["missing"].dump(2));
  CHECK(ValidateJsonFiles(missing.all(), /*strict=*/false).exit_code == 1);
  // A document that is not JSON, and a verb with no schema.
  Documents broken(dir);
  broken.Save("create", "{\"schema_version\": 1,");
  broken.Save("load", good.dump(2));
  const ProcessResult refused = ValidateJsonFiles(broken.all());
  CHECK(refused.exit_code == 1);
  CHECK(refused.stdout_bytes.find("not a JSON document") != std::string::npos);
  CHECK(refused.stdout_bytes.find("no schema for 'load'") != std::string::npos);
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
