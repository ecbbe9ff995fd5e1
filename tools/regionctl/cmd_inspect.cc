#include "cmd_inspect.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "regionstore/io.h"
#include "regionstore/store_info.h"

namespace regionstore::regionctl {
namespace {

struct InspectArgs {
  std::string path;
  bool json = false;
};

std::string HexChecksum(uint64_t checksum) {
  std::array<char, 24> text{};
  std::snprintf(text.data(), text.size(), "0x%016llx", static_cast<unsigned long long>(checksum));
  return {text.data()};
}

// "16777216 (16.0 MiB)"
std::string BytesWithHuman(uint64_t bytes) {
  return std::to_string(bytes) + " (" + HumanBytes(bytes) + ")";
}

// "1701320280123456789 (2023-11-30T04:58:00Z)"
std::string UnixNanosWithUtc(uint64_t unix_ns) {
  std::string text = std::to_string(unix_ns);
  const auto seconds = static_cast<std::time_t>(unix_ns / 1000000000);
  std::tm utc{};
  std::array<char, 32> formatted{};
  if (::gmtime_r(&seconds, &utc) != nullptr &&
      std::strftime(formatted.data(), formatted.size(), "%Y-%m-%dT%H:%M:%SZ", &utc) > 0) {
    text += " (";
    text += formatted.data();
    text += ")";
  }
  return text;
}

// The filesystem holding the store, "ext2/3/4", or "btrfs (copy-on-write)";
// "unknown" if statfs fails (inspect still shows the superblock).
std::string FilesystemOf(const std::string& path) {
  Result<FsInfo> fs = Io::Default()->StatFs(path);
  if (!fs.ok()) return "unknown";
  return fs->type_name + (fs->copy_on_write ? " (copy-on-write)" : "");
}

void PrintTable(const std::string& path, const StoreInfo& info, uint64_t page_size) {
  std::vector<std::pair<std::string, std::string>> rows = {
      {"path", path},
      {"format_version", std::to_string(info.format_version)},
      {"uuid", FormatUuid(info.uuid)},
      {"file_size", BytesWithHuman(info.file_size)},
      {"page_size", BytesWithHuman(page_size)},
      {"created_page_size", BytesWithHuman(info.created_page_size)},
      {"created_unix_ns", UnixNanosWithUtc(info.created_unix_ns)},
      {"data_offset", BytesWithHuman(info.data_offset)},
      {"data_size", BytesWithHuman(info.data_size)},
      {"region_table_offset", BytesWithHuman(info.region_table_offset)},
      {"superblock_checksum", HexChecksum(info.superblock_checksum)},
      {"regions", std::to_string(info.regions.size())},
      {"filesystem", FilesystemOf(path)},
  };
  for (size_t index = 0; index < info.regions.size(); ++index) {
    const RegionEntry& region = info.regions[index];
    rows.emplace_back("region[" + std::to_string(index) + "]",
                      "name=" + region.name + " capacity=" + std::to_string(region.capacity) +
                          " slot_count=" + std::to_string(region.slot_count) +
                          " slots_offset=" + std::to_string(region.slots_offset) +
                          " slot_stride=" + std::to_string(region.slot_stride));
  }
  size_t key_width = 0;
  for (const auto& [key, value] : rows) key_width = std::max(key_width, key.size());
  for (const auto& [key, value] : rows) {
    std::cout << key << std::string(key_width - key.size() + 2, ' ') << value << '\n';
  }
}

void PrintJson(const std::string& path, const StoreInfo& info, uint64_t page_size) {
  // ordered_json keeps the fields in the order of the table, for people reading it.
  nlohmann::ordered_json regions = nlohmann::ordered_json::array();
  for (const RegionEntry& region : info.regions) {
    regions.push_back({
        {"name", region.name},
        {"capacity", region.capacity},
        {"slot_count", region.slot_count},
        {"slots_offset", region.slots_offset},
        {"slot_stride", region.slot_stride},
    });
  }
  const nlohmann::ordered_json document = {
      {"path", path},
      {"format_version", info.format_version},
      {"uuid", FormatUuid(info.uuid)},
      {"file_size", info.file_size},
      {"page_size", page_size},
      {"created_page_size", info.created_page_size},
      {"created_unix_ns", info.created_unix_ns},
      {"data_offset", info.data_offset},
      {"data_size", info.data_size},
      {"region_table_offset", info.region_table_offset},
      {"superblock_checksum", HexChecksum(info.superblock_checksum)},
      {"regions", std::move(regions)},
      {"filesystem", FilesystemOf(path)},
  };
  // A path or region name need not be UTF-8: replace bad bytes rather than
  // let dump() throw.
  std::cout << document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
            << '\n';
}

Status RunInspect(const InspectArgs& args) {
  // pread only: a damaged disk gives an error here, not a SIGBUS.
  Result<StoreInfo> info = ReadStoreInfo(args.path);
  if (!info.ok()) return info.status();
  const uint64_t page_size = Io::Default()->PageSize();
  if (args.json) {
    PrintJson(args.path, *info, page_size);
  } else {
    PrintTable(args.path, *info, page_size);
  }
  return Status::Ok();
}

}  // namespace

void SetupInspect(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* command =
      app.add_subcommand("inspect", "Show the superblock and region table of a store");
  command->footer(
      "Example:\n"
      "  regionctl inspect state.rs --json\n"
      "Reads with pread only (no mapping, no lock): safe on a store another process writes.\n"
      "page_size is this machine's page size; created_page_size is the creating machine's.");
  command->add_option("PATH", args->path, "Path of the store file")->required()->type_name("");
  command->add_flag("--json", args->json, "Print one JSON object instead of a table");
  command->callback([args, &outcome] { outcome = RunInspect(*args); });
}

}  // namespace regionstore::regionctl
