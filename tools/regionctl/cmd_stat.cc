#include "cmd_stat.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common.h"
#include "region_report.h"
#include "regionstore/io.h"

namespace regionstore::regionctl {
namespace {

struct StatArgs : StoreArgs {
  bool json = false;
};

// "12 s", "3 min", "5 h", "2 d": how long ago, coarse; "in the future" for a
// clock that went back.
std::string Age(uint64_t then_ns, uint64_t now_ns) {
  if (then_ns > now_ns) return "in the future (clock changed?)";
  const uint64_t seconds = (now_ns - then_ns) / 1000000000;
  if (seconds < 120) return std::to_string(seconds) + " s ago";
  if (seconds < 2 * 3600) return std::to_string(seconds / 60) + " min ago";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + " h ago";
  return std::to_string(seconds / 86400) + " d ago";
}

// Seconds since `then_ns` for JSON, or null for the future.
nlohmann::ordered_json AgeSeconds(uint64_t then_ns, uint64_t now_ns) {
  if (then_ns > now_ns) return nullptr;
  return (now_ns - then_ns) / 1000000000;
}

// Columns padded to their widest cell; the first column left-aligned, the
// others right-aligned (numbers) unless `left` says otherwise.
void PrintColumns(const std::vector<std::vector<std::string>>& rows, bool left = false) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - DisplayWidth(row[i]), ' ');
      line += i == 0 || left ? row[i] + pad : pad + row[i];
      if (i + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::cout << line << '\n';
  }
}

Status RunStat(const StatArgs& args) {
  // Metadata only (as inspect): slot headers, not payloads, so every figure
  // is a header's and says so.
  VerifyOptions options;
  options.check_payloads = false;
  options.symlinks = args.symlinks;
  const uint64_t now = Io::Default()->NowUnixNanos();
  // The table's first rows need only the superblock and region table: they
  // are printed before the slot headers are read (with 10,000 regions, 30,000
  // preads), the rest once every region is. The key column is as wide as its
  // widest key, "newest header", either way.
  constexpr size_t kKeyWidth = std::string_view("newest header").size();
  const auto print_rows = [](const std::vector<std::pair<std::string, std::string>>& rows) {
    for (const auto& [key, value] : rows) {
      std::cout << key << std::string(kKeyWidth - key.size() + 2, ' ') << value << '\n';
    }
  };
  if (!args.json) {
    options.on_info = [&](const StoreInfo& info) {
      uint64_t capacity = 0;
      for (const RegionEntry& region : info.regions) capacity += region.capacity;
      print_rows({
          {"store", QuoteName(args.path)},
          {"file", HumanBytes(info.file_size)},
          {"data area", HumanBytes(info.data_size)},
          {"created", Age(info.created_unix_ns, now)},
          {"regions",
           std::to_string(info.regions.size()) + " (" + HumanBytes(capacity) + " of capacity)"},
      });
      std::cout.flush();
    };
  }
  Result<StoreRegions> store = ReadStoreRegions(args.path, options);
  if (!store.ok()) return store.status();
  uint64_t commits = 0;
  uint64_t bytes = 0;
  uint64_t capacity = 0;
  uint64_t newest = 0;
  for (const RegionView& region : store->regions) {
    capacity += region.entry.capacity;
    if (!region.report.has_commit) continue;
    commits += region.report.generation;
    bytes += region.report.length;
    newest = std::max(newest, region.report.commit_unix_ns);
  }
  const StoreInfo& info = store->info;
  const StrayTempReport stray = ReportStrayTemps(args.path);
  if (args.json) {
    // Without a tree per region (JsonObjectWriter): 10,000 regions print fast.
    const auto append_region = [&store, now](std::string& out, size_t index) {
      const RegionView& region = store->regions[index];
      const RegionReport& report = region.report;
      JsonObjectWriter json(out, 2);
      json.String("name", region.entry.name);
      json.Number("capacity", region.entry.capacity);
      json.Number("slot_count", region.entry.slot_count);
      json.Number("slot_stride", region.entry.slot_stride);
      json.String("layout", SlotLayoutName(region.entry.layout));
      json.Number("slot_alignment", region.entry.slot_alignment);
      // Headers only: length, generation and times are the newest header's,
      // whose payload may be torn.
      json.Number("length", report.has_commit ? report.length : 0);
      json.Number("generation", report.has_commit ? report.generation : 0);
      AppendCommitTimeJson(json, report);
      if (report.has_commit) {
        json.Json("age_seconds", AgeSeconds(report.commit_unix_ns, now));
      } else {
        json.Null("age_seconds");
      }
      json.Bool("damaged", report.damaged);
      json.Bool("payload_checked", report.payload_checked);
      json.End();
    };
    const nlohmann::ordered_json document = {
        {"schema_version", kJsonSchemaVersion},
        {"path", args.path},
        {"file_size", info.file_size},
        {"data_size", info.data_size},
        {"created_unix_ns", info.created_unix_ns},
        {"created_utc", Rfc3339Nanos(info.created_unix_ns)},
        {"age_seconds", AgeSeconds(info.created_unix_ns, now)},
        {"region_count", info.regions.size()},
        {"region_capacity", capacity},
        {"commits", commits},
        {"committed_bytes", bytes},
        {"newest_commit_unix_ns",
         newest != 0 ? nlohmann::ordered_json(newest) : nlohmann::ordered_json(nullptr)},
        {"newest_commit_utc", newest != 0 ? nlohmann::ordered_json(Rfc3339Nanos(newest))
                                          : nlohmann::ordered_json(nullptr)},
        {"payload_checked", false},
        {"stray_temps", stray.json},
        {"regions", nullptr},  // printed one region at a time
    };
    PrintJsonDocumentWithArray(document, "regions", store->regions.size(), append_region);
    return Status::Ok();
  }
  print_rows({
      {"commits", std::to_string(commits) + " (sum of the regions' generations)"},
      {"committed", HumanBytes(bytes) + " (newest header of each region)"},
      {"newest header",
       newest != 0 ? Age(newest, now) + " (payload not checked: run verify)" : "never"},
  });
  for (const std::string& line : stray.lines) std::cout << "note: " << line << '\n';
  if (store->regions.empty()) return Status::Ok();
  std::cout << '\n';
  std::vector<std::vector<std::string>> rows = {
      {"region", "capacity", "slots", "length", "generation", "newest header"}};
  for (const RegionView& region : store->regions) {
    const RegionReport& report = region.report;
    rows.push_back({QuoteName(region.entry.name), HumanBytes(region.entry.capacity),
                    SlotsSummary(region.entry), report.has_commit ? HumanBytes(report.length) : "-",
                    std::to_string(report.has_commit ? report.generation : 0),
                    report.damaged      ? "DAMAGED (run verify)"
                    : report.has_commit ? Age(report.commit_unix_ns, now)
                                        : "never"});
  }
  PrintColumns(rows);
  // A torn commit's header checks out: from headers alone it looks like the
  // newest commit.
  std::cout << "(slot headers only; payloads not checked: run verify)\n";
  return Status::Ok();
}

}  // namespace

void SetupStat(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<StatArgs>();
  CLI::App* command = AddCommand(
      app, "stat", "Summarize a store: its regions' sizes, generations and last commits",
      "Example:\n"
      "  regionctl stat state.rs --json\n"
      "Reads metadata only (superblock, region table, slot headers), with pread and no\n"
      "lock. commits is the sum of the regions' generations: every commit made over the\n"
      "store's life. A region's length, generation and age are its newest slot header's,\n"
      "whose payload is not checked (a torn commit looks valid here): run verify.");
  AddStoreArguments(command, *args);
  command->add_flag("--json", args->json, "Print one JSON object instead of a table");
  command->callback([args, &outcome] { outcome = RunStat(*args); });
}

}  // namespace regionstore::regionctl
