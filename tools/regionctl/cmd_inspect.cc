#include "cmd_inspect.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "region_report.h"
#include "regionstore/io.h"
#include "regionstore/store_info.h"

namespace regionstore::regionctl {
namespace {

struct InspectArgs : StoreArgs {
  bool json = false;
};

std::string HexChecksum(uint64_t checksum) {
  std::array<char, 24> text{};
  std::snprintf(text.data(), text.size(), "0x%016llx", static_cast<unsigned long long>(checksum));
  return {text.data()};
}

// The features incompat_flags names (docs/FORMAT.md), bit 0 first: a
// release that lacks one refuses the store. A bit this tool does not know
// cannot get here (ReadStoreInfo refuses it) but would show as "bit N".
std::vector<std::string> IncompatFeatures(uint32_t flags) {
  constexpr std::array<const char*, 5> kNames = {"compact_slots", "large_region_table", "batch_log",
                                                 "sidecar", "journal"};
  std::vector<std::string> names;
  for (uint32_t bit = 0; bit < 32; ++bit) {
    if ((flags & (uint32_t{1} << bit)) == 0) continue;
    names.emplace_back(bit < kNames.size() ? kNames[bit] : "bit " + std::to_string(bit));
  }
  return names;
}

// "0x00000001 (compact_slots)", "0x00000000 (none)"
std::string FlagsWithNames(uint32_t flags) {
  std::array<char, 16> hex{};
  std::snprintf(hex.data(), hex.size(), "0x%08x", flags);
  std::string text = hex.data();
  text += " (";
  const std::vector<std::string> names = IncompatFeatures(flags);
  if (names.empty()) text += "none";
  for (size_t index = 0; index < names.size(); ++index) {
    if (index > 0) text += ", ";
    text += names[index];
  }
  text += ')';
  return text;
}

// "16777216 (16.0 MiB)"
std::string BytesWithHuman(uint64_t bytes) {
  return std::to_string(bytes) + " (" + ApproximateUnits(bytes) + ")";
}

// The filesystem holding the store, "ext2/3/4", or "btrfs (copy-on-write)";
// "unknown" if statfs fails (inspect still shows the superblock).
std::string FilesystemOf(const std::string& path) {
  Result<FsInfo> fs = Io::Default()->StatFs(path);
  if (!fs.ok()) return "unknown";
  return fs->type_name + (fs->copy_on_write ? " (copy-on-write)" : "");
}

// Copy-on-write state of the store file, asked through its own read-only
// descriptor: "nocow" (FS_NOCOW_FL) and "shared_bytes" (FIEMAP shared
// extents), each empty when this filesystem or kernel cannot tell.
struct CowState {
  std::optional<bool> nocow;
  std::optional<uint64_t> shared_bytes;
};

CowState CowStateOf(const std::string& path, SymlinkPolicy symlinks, uint64_t file_size) {
  CowState state;
  auto file = Io::Default()->Open(path, OpenMode::kReadOnly, symlinks);
  if (!file.ok()) return state;
  if (auto flags = (*file)->InodeFlags(); flags.ok()) state.nocow = (*flags & kInodeFlagNoCow) != 0;
  if (auto shared = (*file)->SharedRanges(0, file_size); shared.ok()) {
    uint64_t total = 0;
    for (const FileRange& range : *shared) total += range.length;
    state.shared_bytes = total;
  }
  return state;
}

std::string NocowText(const CowState& state) {
  if (!state.nocow.has_value()) return "unknown";
  return *state.nocow ? "yes (FS_NOCOW_FL)" : "no";
}

std::string SharedText(const CowState& state) {
  if (!state.shared_bytes.has_value()) return "unknown";
  if (*state.shared_bytes == 0) return "0 (no block shared)";
  return std::to_string(*state.shared_bytes) + " (" + HumanBytes(*state.shared_bytes) +
         " shared with a reflink copy or snapshot; regionctl unshare)";
}

// The table, printed as VerifyRegions reads it: the store's rows once the
// superblock and region table are validated, then each region's rows as
// soon as its slots are read (with 10,000 regions the first lines appear
// before 30,000 headers are read). The key column's width is known from the
// region table alone.
class StreamedTable {
 public:
  StreamedTable(const std::string& path, SymlinkPolicy symlinks)
      : path_(path), symlinks_(symlinks) {}

  void Start(const StoreInfo& info) {
    const CowState cow = CowStateOf(path_, symlinks_, info.file_size);
    const std::vector<std::pair<std::string, std::string>> rows = {
        {"path", QuoteName(path_)},
        {"format_version", std::to_string(info.format_version)},
        {"protocol", std::to_string(info.protocol())},
        {"incompat_flags", FlagsWithNames(info.incompat_flags)},
        {"journal_size", info.journal_size == 0 ? "none" : BytesWithHuman(info.journal_size)},
        {"uuid", FormatUuid(info.uuid)},
        {"file_size", BytesWithHuman(info.file_size)},
        {"page_size", BytesWithHuman(Io::Default()->PageSize())},
        {"created_page_size", BytesWithHuman(info.created_page_size)},
        {"created_unix_ns", UnixNanosWithUtc(info.created_unix_ns)},
        {"data_offset", BytesWithHuman(info.data_offset)},
        {"data_size", BytesWithHuman(info.data_size)},
        {"region_table_offset", BytesWithHuman(info.region_table_offset)},
        {"superblock_checksum", HexChecksum(info.superblock_checksum)},
        {"regions", std::to_string(info.regions.size())},
        {"filesystem", FilesystemOf(path_)},
        {"nocow", NocowText(cow)},
        {"shared_bytes", SharedText(cow)},
    };
    for (const auto& [key, value] : rows) key_width_ = std::max(key_width_, key.size());
    for (size_t index = 0; index < info.regions.size(); ++index) {
      const std::string key = RegionKey(index);
      key_width_ = std::max(key_width_, key.size() + std::string(".commit").size());
      const uint32_t slots = info.regions[index].slot_count;
      if (slots > 0) {
        key_width_ =
            std::max(key_width_, key.size() + (".slot[" + std::to_string(slots - 1) + "]").size());
      }
    }
    for (const auto& [key, value] : rows) Print(key, value);
    std::cout.flush();
  }

  void Region(size_t index, const RegionEntry& region, const RegionReport& report) {
    const std::string key = RegionKey(index);
    // The name comes from the file: quoted and escaped, never raw.
    std::string entry = "name=";
    entry += QuoteName(region.name);
    entry += " capacity=";
    entry += std::to_string(region.capacity);
    entry += " slot_count=";
    entry += std::to_string(region.slot_count);
    entry += " slots_offset=";
    entry += std::to_string(region.slots_offset);
    entry += " slot_stride=";
    entry += std::to_string(region.slot_stride);
    entry += " layout=";
    entry += SlotLayoutName(region.layout);
    entry += " slot_alignment=";
    entry += std::to_string(region.slot_alignment);
    Print(key, entry);
    Print(key + ".commit", CommitSummary(report));
    for (const SlotReport& slot : report.slots) {
      Print(key + ".slot[" + std::to_string(slot.index) + "]", SlotSummary(slot));
    }
  }

 private:
  static std::string RegionKey(size_t index) {
    std::string key = "region[";
    key += std::to_string(index);
    key += ']';
    return key;
  }
  void Print(const std::string& key, const std::string& value) const {
    std::cout << key << std::string(key_width_ - key.size() + 2, ' ') << value << '\n';
  }

  std::string path_;
  SymlinkPolicy symlinks_;
  size_t key_width_ = 0;
};

void PrintJson(const std::string& path, const StoreInfo& info,
               const std::vector<RegionView>& regions, uint64_t page_size, const CowState& cow) {
  // ordered_json keeps the fields in the order of the table, for people reading it.
  const nlohmann::ordered_json document = {
      {"schema_version", kJsonSchemaVersion},
      {"path", path},
      {"format_version", info.format_version},
      {"protocol", info.protocol()},
      {"incompat_flags", info.incompat_flags},
      {"incompat_features", IncompatFeatures(info.incompat_flags)},
      {"journal_size", info.journal_size},
      {"uuid", FormatUuid(info.uuid)},
      {"file_size", info.file_size},
      {"page_size", page_size},
      {"created_page_size", info.created_page_size},
      {"created_unix_ns", info.created_unix_ns},
      {"created_utc", Rfc3339Nanos(info.created_unix_ns)},
      {"data_offset", info.data_offset},
      {"data_size", info.data_size},
      {"region_table_offset", info.region_table_offset},
      {"superblock_checksum", HexChecksum(info.superblock_checksum)},
      {"regions", nullptr},  // printed one region at a time
      {"filesystem", FilesystemOf(path)},
      // null: this filesystem or kernel cannot tell.
      {"nocow", cow.nocow.has_value() ? nlohmann::ordered_json(*cow.nocow) : nullptr},
      {"shared_bytes",
       cow.shared_bytes.has_value() ? nlohmann::ordered_json(*cow.shared_bytes) : nullptr},
  };
  // A path or region name need not be UTF-8: replace bad bytes rather than
  // let dump() throw.
  PrintJsonDocumentWithArray(
      document, "regions", regions.size(),
      [&regions](std::string& out, size_t index) { AppendRegionJson(out, regions[index], 2); });
}

Status RunInspect(const InspectArgs& args) {
  // pread only: a damaged disk gives an error here, not a SIGBUS. Damaged
  // slots are shown, not refused: inspect is for looking; verify judges.
  // Metadata only: superblock, region table and one 64-byte header per
  // slot, however large the regions (with 10,000 regions: 30,000 preads).
  VerifyOptions options;
  options.check_payloads = false;
  options.symlinks = args.symlinks;
  if (!args.json) {
    // Streamed: a failure after the first lines ends the table where it got
    // to, and the exit code and message say why.
    StreamedTable table(args.path, args.symlinks);
    const StoreInfo* info = nullptr;
    options.on_info = [&](const StoreInfo& validated) {
      info = &validated;
      table.Start(validated);
    };
    options.on_region = [&](size_t index, const RegionReport& report) {
      table.Region(index, info->regions[index], report);
    };
    Result<VerifyReport> verified = VerifyRegions(args.path, options);
    return verified.ok() ? Status::Ok() : verified.status();
  }
  Result<StoreRegions> store = ReadStoreRegions(args.path, options);
  if (!store.ok()) return store.status();
  const uint64_t page_size = Io::Default()->PageSize();
  const CowState cow = CowStateOf(args.path, args.symlinks, store->info.file_size);
  PrintJson(args.path, store->info, store->regions, page_size, cow);
  return Status::Ok();
}

}  // namespace

void SetupInspect(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* command = AddCommand(
      app, "inspect", "Show the superblock, region table and checkpoint slots of a store",
      "Example:\n"
      "  regionctl inspect state.rs --json\n"
      "Reads with pread only (no mapping, no lock): safe on a store another process writes\n"
      "(a slot being committed meanwhile may show as incomplete). Slot headers only: a\n"
      "header that checks out is shown with \"payload not checked\" (a torn commit looks\n"
      "valid here); run verify to check the payloads.\n"
      "page_size is this machine's page size; created_page_size is the creating machine's.\n"
      "incompat_flags names the features a release must know to open the store:\n"
      "compact_slots (bit 0), large_region_table (bit 1, more than 8,160 regions),\n"
      "batch_log (bit 2, a store that takes batch commits), sidecar (bit 3, protocol 2)\n"
      "and journal (bit 4, protocol 2's batch journal; journal_size is its size).\n"
      "A region's layout is compact (slots on created_page_size: 4 KiB header unit,\n"
      "then the payload) or aligned (slots on 64 KiB: 64 KiB, then the payload rounded\n"
      "up to 64 KiB); slot_alignment is that unit in bytes.\n"
      "nocow: whether btrfs overwrites the file in place (FS_NOCOW_FL, set by create);\n"
      "shared_bytes: bytes whose blocks are shared with a reflink copy or a snapshot\n"
      "(FIEMAP; a writer's open refuses them outside btrfs: regionctl unshare PATH).\n"
      "Either is \"unknown\" (JSON null) where the filesystem cannot tell.");
  AddStoreArguments(command, *args);
  command->add_flag("--json", args->json, "Print one JSON object instead of a table");
  command->callback([args, &outcome] { outcome = RunInspect(*args); });
}

}  // namespace regionstore::regionctl
