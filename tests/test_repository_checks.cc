// The repository's own checks, run by the suite: every relative link of the
// documentation resolves (scripts/check-links.py), the CMake files draw
// dependencies as they are (scripts/check-cmake.py), and docs/DESIGN.md's map
// names every file of lib/ (scripts/check-design-map.py), only the owners of
// the protocol's concepts test a protocol feature
// (scripts/check-protocol-owners.py), no function of the files cut to size
// is over 100 lines (scripts/check-function-size.sh, in the Release build),
// and every C and C++ file is formatted by the pinned clang-format
// (scripts/check-format.sh). Each is run on the tree, which must pass, and
// on a scratch tree with one offence of each kind, which must fail naming it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/files.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

const std::string kSource = REGIONSTORE_SOURCE_DIR;

ProcessResult RunScript(const std::string& script, const std::string& root) {
  return RunProcess("/usr/bin/python3", {kSource + "/scripts/" + script, root});
}

void WriteScratchText(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  const auto* first = reinterpret_cast<const std::byte*>(text.data());
  WriteWholeFile(path, std::vector<std::byte>(first, first + text.size()));
}

std::string ReadText(const std::string& path) {
  const std::vector<std::byte> bytes = ReadWholeFile(path);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

TEST_CASE("The README's C++ example is the code examples/cpp/readme.cc builds and runs",
          "[repository]") {
  const std::string readme = ReadText(kSource + "/README.md");
  const size_t section = readme.find("\n## Example\n");
  REQUIRE(section != std::string::npos);
  const size_t open = readme.find("```cpp\n", section);
  REQUIRE(open != std::string::npos);
  const size_t close = readme.find("```", open + 7);
  REQUIRE(close != std::string::npos);
  const std::string shown = readme.substr(open + 7, close - open - 7);
  const std::string program = ReadText(kSource + "/examples/cpp/readme.cc");
  const std::string from = "// --- the README's example, from here ---\n";
  const size_t begin = program.find(from);
  const size_t end = program.find("// --- to here ---");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  CHECK(program.substr(begin + from.size(), end - begin - from.size()) == shown);
}

TEST_CASE("Every relative link in README.md and docs/ resolves, and a broken one is named",
          "[repository]") {
  const ProcessResult tree = RunScript("check-links.py", kSource);
  INFO(tree.stdout_bytes << tree.stderr_bytes);
  CHECK(tree.exit_code == 0);
  CHECK(tree.stdout_bytes.find("check-links: ok") != std::string::npos);

  TempDir dir;
  const std::string root = dir.path();
  WriteScratchText(root + "/docs/GOOD.md", "# A heading, with `code`\n\ntext\n");
  WriteScratchText(root + "/README.md",
                   "[fine](docs/GOOD.md#a-heading-with-code) [site](https://example.org/x)\n"
                   "`[in code](nowhere.md)`\n"
                   "[gone](docs/MISSING.md)\n"
                   "[bad anchor](docs/GOOD.md#no-such-heading)\n"
                   "![picture](docs/missing.png)\n");
  const ProcessResult broken = RunScript("check-links.py", root);
  INFO(broken.stdout_bytes << broken.stderr_bytes);
  CHECK(broken.exit_code == 1);
  CHECK(broken.stdout_bytes.find("README.md:3: docs/MISSING.md: no such file") !=
        std::string::npos);
  CHECK(broken.stdout_bytes.find("README.md:4: docs/GOOD.md#no-such-heading: no heading") !=
        std::string::npos);
  CHECK(broken.stdout_bytes.find("README.md:5: docs/missing.png: no such file") !=
        std::string::npos);
  CHECK(broken.stdout_bytes.find("nowhere.md") == std::string::npos);
  CHECK(broken.stdout_bytes.find("example.org") == std::string::npos);
}

TEST_CASE("No target outside tests/ includes from tests/, and no tool adds a part of bench/",
          "[repository]") {
  const ProcessResult tree = RunScript("check-cmake.py", kSource);
  INFO(tree.stdout_bytes << tree.stderr_bytes);
  CHECK(tree.exit_code == 0);

  TempDir dir;
  const std::string root = dir.path();
  WriteScratchText(root + "/CMakeLists.txt",
                   "add_subdirectory(bench)\nadd_subdirectory(tools/x)\n");
  WriteScratchText(root + "/tests/CMakeLists.txt",
                   "target_include_directories(t PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)\n");
  WriteScratchText(
      root + "/tools/x/CMakeLists.txt",
      "# add_subdirectory(${PROJECT_SOURCE_DIR}/bench/common) in a comment is fine\n"
      "add_subdirectory(${PROJECT_SOURCE_DIR}/bench/common ${PROJECT_BINARY_DIR}/c)\n"
      "target_include_directories(x\n  PRIVATE\n  ${PROJECT_SOURCE_DIR}/tests/support)\n");
  const ProcessResult broken = RunScript("check-cmake.py", root);
  INFO(broken.stdout_bytes << broken.stderr_bytes);
  CHECK(broken.exit_code == 1);
  CHECK(broken.stdout_bytes.find("tools/x/CMakeLists.txt:2: adds a subdirectory of bench/") !=
        std::string::npos);
  CHECK(broken.stdout_bytes.find("tools/x/CMakeLists.txt:3: target_include_directories gives a "
                                 "target an include directory inside tests/") != std::string::npos);
  // The top level adding bench/ itself, and tests/ including its own: fine.
  CHECK(broken.stdout_bytes.find("CMakeLists.txt:1:") == std::string::npos);
  CHECK(broken.stdout_bytes.find("tests/CMakeLists.txt") == std::string::npos);
}

TEST_CASE("docs/DESIGN.md's map names every file of lib/ and every public header", "[repository]") {
  const ProcessResult tree = RunScript("check-design-map.py", kSource);
  INFO(tree.stdout_bytes << tree.stderr_bytes);
  CHECK(tree.exit_code == 0);
  CHECK(tree.stdout_bytes.find("check-design-map: ok") != std::string::npos);

  TempDir dir;
  const std::string root = dir.path();
  WriteScratchText(root + "/docs/DESIGN.md",
                   "# Map\n\n### lib/ files\n\n| file | what |\n|---|---|\n"
                   "| `store.cc` | the store [`store.h`] |\n| `journal.{h,cc}` | records |\n"
                   "| `gone.cc` | removed long ago |\n\n## Next\n");
  for (const char* file :
       {"lib/store.cc", "lib/journal.h", "lib/journal.cc", "lib/new.cc", "lib/io/posix_io.cc",
        "lib/CMakeLists.txt", "include/regionstore/store.h", "include/regionstore/c.h"}) {
    WriteScratchText(root + "/" + file, "\n");
  }
  const ProcessResult broken = RunScript("check-design-map.py", root);
  INFO(broken.stdout_bytes << broken.stderr_bytes);
  CHECK(broken.exit_code == 1);
  CHECK(broken.stdout_bytes.find("lib/new.cc: not in docs/DESIGN.md's \"lib/ files\" table") !=
        std::string::npos);
  CHECK(broken.stdout_bytes.find("lib/io/posix_io.cc: not in") != std::string::npos);
  CHECK(broken.stdout_bytes.find("names lib/gone.cc, which does not exist") != std::string::npos);
  CHECK(broken.stdout_bytes.find("include/regionstore/c.h: not named") != std::string::npos);
  // Listed ones, the brace form's both files and build plumbing: not named.
  CHECK(broken.stdout_bytes.find("lib/store.cc") == std::string::npos);
  CHECK(broken.stdout_bytes.find("lib/journal.") == std::string::npos);
  CHECK(broken.stdout_bytes.find("CMakeLists.txt") == std::string::npos);
  CHECK(broken.stdout_bytes.find("regionstore/store.h") == std::string::npos);
}

TEST_CASE("Only the protocol's owners in lib/ test a protocol feature, and a new test is named",
          "[repository]") {
  const ProcessResult tree = RunScript("check-protocol-owners.py", kSource);
  INFO(tree.stdout_bytes << tree.stderr_bytes);
  CHECK(tree.exit_code == 0);
  CHECK(tree.stdout_bytes.find("check-protocol-owners: ok") != std::string::npos);

  // A copy of today's lib/ and of the script, whose EXCEPTIONS then allow
  // lib/verify.cc one feature test it does not hold; then: a feature test
  // in lib/load.cc (no exception), a new file with one among three that do
  // not count, and one in an owner.
  TempDir dir;
  const std::string root = dir.path();
  std::filesystem::copy(kSource + "/lib", root + "/lib", std::filesystem::copy_options::recursive);
  std::string script = ReadText(kSource + "/scripts/check-protocol-owners.py");
  const std::string exceptions = "EXCEPTIONS = {\n";
  const size_t at = script.find(exceptions);
  REQUIRE(at != std::string::npos);
  script.insert(at + exceptions.size(), "    \"lib/verify.cc\": 1,\n");
  WriteScratchText(root + "/check-protocol-owners.py", script);
  const std::string load_text = ReadText(root + "/lib/load.cc");
  size_t load_lines = 0;
  for (const char c : load_text) load_lines += c == '\n' ? 1 : 0;
  WriteScratchText(
      root + "/lib/load.cc",
      load_text + "static bool Sneaky(const StoreInfo& info) { return info.protocol() == 2; }\n");
  WriteScratchText(root + "/lib/fresh.cc",
                   "// a comment about the sidecar and protocol() does not count\n"
                   "const char* kWhy = \"nor does the sidecar in a string\";\n"
                   "/* nor a block comment's journal_offset */ int kept = 0;\n"
                   "bool Asks(const Rep& r) { return r.journal_offset.has_value(); }\n");
  WriteScratchText(root + "/lib/shared_state.cc",
                   "bool Two(const StoreInfo& info) { return info.protocol() == 2; }\n");
  const ProcessResult broken =
      RunProcess("/usr/bin/python3", {root + "/check-protocol-owners.py", root});
  INFO(broken.stdout_bytes << broken.stderr_bytes);
  CHECK(broken.exit_code == 1);
  std::ostringstream sneaky;
  sneaky << "lib/load.cc:" << load_lines + 1 << ": static bool Sneaky(";
  CHECK(broken.stdout_bytes.find(sneaky.str()) != std::string::npos);
  CHECK(broken.stdout_bytes.find(
            "lib/load.cc: 1 protocol feature tests outside the owners, 0 allowed") !=
        std::string::npos);
  CHECK(broken.stdout_bytes.find("lib/fresh.cc:4: bool Asks(") != std::string::npos);
  CHECK(broken.stdout_bytes.find("lib/fresh.cc: 1 protocol feature tests") != std::string::npos);
  CHECK(broken.stdout_bytes.find("lib/fresh.cc:1:") == std::string::npos);
  CHECK(broken.stdout_bytes.find("lib/fresh.cc:2:") == std::string::npos);
  CHECK(broken.stdout_bytes.find("lib/fresh.cc:3:") == std::string::npos);
  CHECK(broken.stdout_bytes.find("lib/verify.cc: 0 protocol feature tests, 1 allowed: lower the "
                                 "exception to 0") != std::string::npos);
  // An owner, and the files that hold what they are allowed: not named.
  CHECK(broken.stdout_bytes.find("shared_state.cc") == std::string::npos);
  CHECK(broken.stdout_bytes.find("lib/recovery.cc") == std::string::npos);
}

#ifdef REGIONSTORE_FUNCTION_SIZE_BUILD_DIR
// Each run parses its files with clang-tidy (several seconds a file): [slow].
TEST_CASE("No function of the files cut to size is over 100 lines, and a long one is named",
          "[repository][slow]") {
  const std::string script = kSource + "/scripts/check-function-size.sh";
  const ProcessResult tree = RunProcess("/bin/bash", {script, REGIONSTORE_FUNCTION_SIZE_BUILD_DIR});
  INFO(tree.stdout_bytes << tree.stderr_bytes);
  CHECK(tree.exit_code == 0);
  CHECK(tree.stdout_bytes.find("check-function-size: ok") != std::string::npos);

  // A file with a function of 101 lines as clang-tidy counts them (from the
  // line of its opening brace to the line of its closing one), one of 100,
  // and a build of its own.
  TempDir dir;
  const std::string root = dir.path();
  std::string source = "int TooLong(int x) {\n";
  for (int i = 0; i < 99; ++i) source += "  x += " + std::to_string(i) + ";\n";
  source += "  return x;\n}\nint JustFits(int x) {\n";
  for (int i = 0; i < 98; ++i) source += "  x -= " + std::to_string(i) + ";\n";
  source += "  return x;\n}\n";
  WriteScratchText(root + "/src/long.cc", source);
  WriteScratchText(root + "/build/compile_commands.json",
                   "[{\"directory\": \"" + root + "/build\", \"command\": \"c++ -std=c++20 -c " +
                       root + "/src/long.cc\", \"file\": \"" + root + "/src/long.cc\"}]\n");
  const ProcessResult broken =
      RunProcess("/bin/bash", {script, root + "/build", root + "/src/long.cc"});
  INFO(broken.stdout_bytes << broken.stderr_bytes);
  CHECK(broken.exit_code == 1);
  // Named relative to the repository when inside it, as the scratch tree may be.
  CHECK(broken.stdout_bytes.find("src/long.cc:1: TooLong: 101 lines") != std::string::npos);
  CHECK(broken.stdout_bytes.find("JustFits") == std::string::npos);
  CHECK(broken.stdout_bytes.find("check-function-size: 1 functions over 100 lines") !=
        std::string::npos);
}
#endif

TEST_CASE("The format check passes the tree and names a file clang-format-14 would change",
          "[repository]") {
  const ProcessResult tree =
      RunProcess("/bin/bash", {kSource + "/scripts/check-format.sh", kSource});
  INFO(tree.stdout_bytes << tree.stderr_bytes);
  CHECK(tree.exit_code == 0);
  CHECK(tree.stdout_bytes.find("check-format: ok") != std::string::npos);

  TempDir dir;
  const std::string root = dir.path();
  WriteScratchText(root + "/.clang-format", ReadText(kSource + "/.clang-format"));
  WriteScratchText(root + "/lib/good.cc", "int Answer() { return 42; }\n");
  WriteScratchText(root + "/lib/bad.cc", "int  Answer( ) {return 42;}\n");
  WriteScratchText(root + "/build/release/generated.cc", "int  Ignored( ) {return 1;}\n");
  const ProcessResult broken =
      RunProcess("/bin/bash", {kSource + "/scripts/check-format.sh", root});
  INFO(broken.stdout_bytes << broken.stderr_bytes);
  CHECK(broken.exit_code == 1);
  CHECK(broken.stdout_bytes.find("lib/bad.cc: not formatted as .clang-format says") !=
        std::string::npos);
  CHECK(broken.stdout_bytes.find("check-format: 1 of 2 files differ") != std::string::npos);
  CHECK(broken.stdout_bytes.find("good.cc") == std::string::npos);
  CHECK(broken.stdout_bytes.find("generated.cc") == std::string::npos);
}

}  // namespace
}  // namespace regionstore::testing
