#include "support/skip.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace regionstore::testing {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

std::vector<SkipAllowance> ParseSkipAllowList(std::string_view text, std::string& error) {
  std::vector<SkipAllowance> entries;
  int number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = Trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    const size_t bar = line.find(" | ");
    const std::string_view what = bar == std::string_view::npos ? line : Trim(line.substr(0, bar));
    const std::string_view why = bar == std::string_view::npos ? "" : Trim(line.substr(bar + 3));
    if (what.empty() || why.empty()) {
      error = "line " + std::to_string(number) + ": not \"TEXT | WHY\" with both parts";
      return {};
    }
    entries.push_back({std::string(what), std::string(why)});
  }
  return entries;
}

std::string SkipRefusal(const std::string& reason) {
  if (!InCi()) return "";
  const char* const path = REGIONSTORE_SKIPS_ALLOWED;
  std::ifstream in(path);
  if (!in) return std::string("CI=true, and the skip allow-list ") + path + " cannot be read";
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::string error;
  const std::vector<SkipAllowance> entries = ParseSkipAllowList(text, error);
  if (!error.empty()) return std::string(path) + ": " + error;
  for (const SkipAllowance& entry : entries) {
    if (reason.find(entry.text) != std::string::npos) return "";
  }
  return "CI=true: this case would be skipped (" + reason +
         "), and tests/skips-allowed.txt does not allow that skip: fix the runner, or list "
         "the skip there with the reason CI may go without this check";
}

void ReportSkip(const std::string& reason) {
  const std::string refusal = SkipRefusal(reason);
  if (!refusal.empty()) FAIL(refusal);
  WARN("skipped: " << reason);
}

}  // namespace regionstore::testing
