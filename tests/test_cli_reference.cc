// The CLI reference in README.md says what regionctl does: the synopsis
// names every option each command's --help lists, and the JSON table lists
// exactly the top-level keys each command's --json prints.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/regionctl_runner.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

std::string ReadReadme() {
  std::ifstream in(std::string(REGIONSTORE_GOLDEN_DIR) + "/../../README.md");
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::set<std::string> Matches(const std::string& text, const std::regex& pattern, int group) {
  std::set<std::string> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
       it != std::sregex_iterator(); ++it) {
    found.insert((*it)[group].str());
  }
  return found;
}

// Per command: the options the README's synopsis block gives it.
std::map<std::string, std::set<std::string>> SynopsisOptions(const std::string& readme) {
  const size_t section = readme.find("## regionctl\n");
  REQUIRE(section != std::string::npos);
  const size_t begin = readme.find("```sh\n", section);
  const size_t end = readme.find("```\n", begin + 6);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::istringstream lines(readme.substr(begin + 6, end - begin - 6));
  std::map<std::string, std::set<std::string>> options;
  std::string line, verb;
  const std::regex option(R"((--[a-z][a-z-]*))");
  while (std::getline(lines, line)) {
    line = line.substr(0, line.find('#'));
    if (line.rfind("regionctl ", 0) == 0) {
      verb = line.substr(10, line.find(' ', 10) - 10);
      options[verb];
    }
    REQUIRE_FALSE(verb.empty());
    for (const std::string& name : Matches(line, option, 1)) options[verb].insert(name);
  }
  return options;
}

TEST_CASE("The README's regionctl synopsis gives every command the options its --help lists",
          "[regionctl][docs]") {
  const auto documented = SynopsisOptions(ReadReadme());
  CHECK(documented.size() >= 13);
  const std::regex help_option(R"((?:^|\n)\s+(?:-\w,\s*)?(--[a-z][a-z-]*))");
  for (const auto& [verb, options] : documented) {
    INFO("regionctl " << verb);
    const ProcessResult help = Regionctl({verb, "--help"});
    REQUIRE(help.exit_code == 0);
    std::set<std::string> listed = Matches(help.stdout_bytes, help_option, 1);
    // Said once for all in the README's prose.
    listed.erase("--help");
    listed.erase("--follow-symlinks");
    CHECK(options == listed);
  }
}

// Per command (as the table's first column names it): the top-level keys
// the table lists, without what it says in parentheses or brackets.
std::map<std::string, std::set<std::string>> JsonTable(const std::string& readme) {
  const size_t table = readme.find("| command | keys |");
  REQUIRE(table != std::string::npos);
  std::istringstream lines(readme.substr(table, readme.find("\n\n", table) - table));
  std::map<std::string, std::set<std::string>> keys;
  std::string line;
  const std::regex ticked("`([^`]+)`");
  const std::regex nested(R"(\([^()]*\)|\[[^\[\]]*\])");
  while (std::getline(lines, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    const size_t split = line.find(" | ", 2);
    const std::string commands = line.substr(2, split - 2);
    std::string listed = line.substr(split + 3);
    for (std::string before; before != listed;) {
      before = listed;
      listed = std::regex_replace(listed, nested, "");
    }
    for (const std::string& command : Matches(commands, ticked, 1)) {
      keys[command] = Matches(listed, ticked, 1);
    }
  }
  return keys;
}

std::set<std::string> PrintedKeys(const std::vector<std::string>& args) {
  const ProcessResult result = Regionctl(args);
  INFO(Describe(args) << ": " << result.stderr_bytes);
  REQUIRE(result.exit_code == 0);
  const nlohmann::json document = nlohmann::json::parse(result.stdout_bytes);
  std::set<std::string> keys;
  for (const auto& item : document.items()) keys.insert(item.key());
  return keys;
}

TEST_CASE("The README's JSON table lists exactly the keys each command prints", "[regionctl][docs]") {
  TempDir dir;
  const auto table = JsonTable(ReadReadme());
  const std::string store = dir.File("s.rs");
  const std::string input = dir.File("in");
  RequireSuccess(Regionctl({"create", store, "--size", "1MiB", "--checkpoint", "a:4KiB",
                            "--checkpoint", "b:4KiB", "--batch-log"}));
  {
    std::ofstream(input) << "payload";
  }
  const std::map<std::string, std::vector<std::string>> runs = {
      {"create", {"create", dir.File("t.rs"), "--size", "1MiB", "--json"}},
      {"write", {"write", store, "--offset", "0", "--input", input, "--json"}},
      {"commit", {"commit", store, "a", "--input", input, "--json"}},
      {"commit --set", {"commit", store, "--set", "a=" + input, "--set", "b=" + input, "--json"}},
      {"import", {"import", store, "b", "--input", input, "--json"}},
      {"export", {"export", store, "a", "--output", dir.File("out"), "--json"}},
      {"inspect", {"inspect", store, "--json"}},
      {"verify", {"verify", store, "--json"}},
      {"stat", {"stat", store, "--json"}},
      {"unshare", {"unshare", store, "--json"}},
  };
  for (const auto& [command, args] : runs) {
    INFO("regionctl " << command << " --json");
    REQUIRE(table.count(command) == 1);
    CHECK(table.at(command) == PrintedKeys(args));
  }
  // bench is documented too; its run is covered by the bench tests.
  CHECK(table.count("bench") == 1);
}

}  // namespace
}  // namespace regionstore::testing
