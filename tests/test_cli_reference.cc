// The CLI reference (docs/REGIONCTL.md) says what regionctl does: the
// synopsis names every option each command's --help lists, and the JSON
// table lists exactly the top-level keys each command's --json prints. The
// README's one-line-a-command table names every command.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/regionctl_runner.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

std::string ReadDocument(const std::string& relative) {
  std::ifstream in(std::string(REGIONSTORE_SOURCE_DIR) + "/" + relative);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// No <regex>: GCC 12 warns falsely inside it (-Wmaybe-uninitialized) under
// ASan+UBSan, and these few patterns read as plainly by hand.
bool IsOptionChar(char c) { return (c >= 'a' && c <= 'z') || c == '-'; }

// The long option ("--name") that starts at `at`, or "" if none does.
std::string OptionAt(const std::string& text, size_t at) {
  if (text.compare(at, 2, "--") != 0 || at + 2 >= text.size()) return "";
  if (text[at + 2] < 'a' || text[at + 2] > 'z') return "";
  size_t end = at + 2;
  while (end < text.size() && IsOptionChar(text[end])) ++end;
  return text.substr(at, end - at);
}

// Every long option anywhere in `text`.
std::set<std::string> Options(const std::string& text) {
  std::set<std::string> found;
  for (size_t at = text.find("--"); at != std::string::npos; at = text.find("--", at + 1)) {
    if (at > 0 && IsOptionChar(text[at - 1])) continue;
    if (std::string name = OptionAt(text, at); !name.empty()) found.insert(name);
  }
  return found;
}

// The options a --help text lists: each line that, after its indent and an
// optional short flag ("-o, "), starts with a long option.
std::set<std::string> HelpOptions(const std::string& help) {
  std::set<std::string> found;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find_first_not_of(" \t");
    if (at == std::string::npos || at == 0) continue;
    if (line.size() > at + 2 && line[at] == '-' && line[at + 1] != '-') {
      at = line.find_first_not_of(" \t", line.find(',', at) == at + 2 ? at + 3 : at);
      if (at == std::string::npos) continue;
    }
    if (std::string name = OptionAt(line, at); !name.empty()) found.insert(name);
  }
  return found;
}

// What stands between each pair of backticks.
std::set<std::string> Ticked(const std::string& text) {
  std::set<std::string> found;
  for (size_t open = text.find('`'); open != std::string::npos;) {
    const size_t close = text.find('`', open + 1);
    if (close == std::string::npos) break;
    found.insert(text.substr(open + 1, close - open - 1));
    open = text.find('`', close + 1);
  }
  return found;
}

// `text` without anything in parentheses or brackets, nested ones too.
std::string WithoutBracketed(const std::string& text) {
  std::string out;
  int depth = 0;
  for (char c : text) {
    if (c == '(' || c == '[') ++depth;
    if (depth == 0) out += c;
    if ((c == ')' || c == ']') && depth > 0) --depth;
  }
  return out;
}

// Per command: the options the reference's synopsis block gives it.
std::map<std::string, std::set<std::string>> SynopsisOptions(const std::string& readme) {
  const size_t section = readme.find("## Synopsis\n");
  REQUIRE(section != std::string::npos);
  const size_t begin = readme.find("```sh\n", section);
  const size_t end = readme.find("```\n", begin + 6);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::istringstream lines(readme.substr(begin + 6, end - begin - 6));
  std::map<std::string, std::set<std::string>> options;
  std::string line, verb;
  while (std::getline(lines, line)) {
    line = line.substr(0, line.find('#'));
    if (line.rfind("regionctl ", 0) == 0) {
      verb = line.substr(10, line.find(' ', 10) - 10);
      options[verb];
    }
    REQUIRE_FALSE(verb.empty());
    for (const std::string& name : Options(line)) options[verb].insert(name);
  }
  return options;
}

TEST_CASE("The CLI reference's synopsis gives every command the options its --help lists",
          "[regionctl][docs]") {
  const auto documented = SynopsisOptions(ReadDocument("docs/REGIONCTL.md"));
  CHECK(documented.size() >= 13);
  for (const auto& [verb, options] : documented) {
    INFO("regionctl " << verb);
    const ProcessResult help = Regionctl({verb, "--help"});
    REQUIRE(help.exit_code == 0);
    std::set<std::string> listed = HelpOptions(help.stdout_bytes);
    // Said once for all in the reference's prose.
    listed.erase("--help");
    listed.erase("--follow-symlinks");
    CHECK(options == listed);
  }
}

// Per command (as the table's first column names it): the top-level keys
// the table lists, without what it says in parentheses or brackets.
std::map<std::string, std::set<std::string>> JsonTable(const std::string& readme) {
  const size_t table = readme.find("| command | keys");
  REQUIRE(table != std::string::npos);
  std::istringstream lines(readme.substr(table, readme.find("\n\n", table) - table));
  std::map<std::string, std::set<std::string>> keys;
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    const size_t split = line.find(" | ", 2);
    const std::string commands = line.substr(2, split - 2);
    const std::string listed = WithoutBracketed(line.substr(split + 3));
    for (const std::string& command : Ticked(commands)) {
      keys[command] = Ticked(listed);
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
  // Every document has it; the table's heading says so once.
  CHECK(keys.erase("schema_version") == 1);
  return keys;
}

TEST_CASE("The CLI reference's JSON table lists exactly the keys each command prints",
          "[regionctl][docs]") {
  TempDir dir;
  const auto table = JsonTable(ReadDocument("docs/REGIONCTL.md"));
  const std::string store = dir.File("s.rs");
  const std::string input = dir.File("in");
  RequireSuccess(Regionctl({"create", store, "--size", "1MiB", "--checkpoint", "a:4KiB",
                            "--checkpoint", "b:4KiB", "--batch-log"}));
  { std::ofstream(input) << "payload"; }
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
      {"copy", {"copy", store, dir.File("copy.rs"), "--json"}},
  };
  for (const auto& [command, args] : runs) {
    INFO("regionctl " << command << " --json");
    REQUIRE(table.count(command) == 1);
    CHECK(table.at(command) == PrintedKeys(args));
  }
  // bench is documented too; its run is covered by the bench tests.
  CHECK(table.count("bench") == 1);
}

TEST_CASE("The README's command table and the CLI reference name every command --help lists",
          "[regionctl][docs]") {
  const std::string readme = ReadDocument("README.md");
  const std::map<std::string, std::set<std::string>> documented =
      SynopsisOptions(ReadDocument("docs/REGIONCTL.md"));
  const std::set<std::string> commands = RegionctlCommands();
  CHECK(commands.size() >= 14);
  for (const std::string& verb : commands) {
    INFO("regionctl " << verb);
    CHECK(documented.count(verb) == 1);
    CHECK(readme.find("| `regionctl " + verb) != std::string::npos);
  }
  for (const auto& [verb, options] : documented) {
    INFO("regionctl " << verb << " is in the synopsis");
    CHECK(commands.count(verb) == 1);
  }
}

}  // namespace
}  // namespace regionstore::testing
