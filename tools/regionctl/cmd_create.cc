#include "cmd_create.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common.h"
#include "progress_bar.h"
#include "region_report.h"
#include "regionstore/checkpoint.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"

namespace regionstore::regionctl {
namespace {

// Files over this size get a progress bar, when stderr is a terminal: the
// zero-fill writes every byte, about a second per GiB on a fast disk.
constexpr uint64_t kProgressBarAbove = uint64_t{1} << 30;

// The largest --checkpoints-from file read: 1,048,576 regions of a 64-byte
// name with capacity and layout fit with room to spare.
constexpr uint64_t kMaxCheckpointsFileBytes = uint64_t{256} << 20;

struct CreateArgs {
  std::string path;
  uint64_t data_size = 0;
  bool force = false;
  bool json = false;
  std::vector<std::string> checkpoints;  // NAME:CAPACITY[:LAYOUT], as typed
  std::string checkpoints_from;          // a file of those, "-" for stdin
  std::string slot_layout = "auto";      // the default LAYOUT
  uint32_t slots = 0;                    // --slots: 0 for the default, 3
  bool batch_log = false;
  uint32_t protocol = 2;
  uint64_t journal_size = 0;
};

// The specs of --checkpoint and --checkpoints-from, in that order, each name
// checked once against a hash of the names before it.
class SpecCollector {
 public:
  SpecCollector(const std::string& path, SlotLayout default_layout)
      : path_(path), default_layout_(default_layout) {}

  // `source` says where `text` came from, for messages ("--checkpoint",
  // "--checkpoints-from 'list.txt' line 3:"); `where` is how a later
  // duplicate refers to it ("--checkpoint 'a:1KiB'", "line 3").
  Status Add(const std::string& text, const std::string& source, std::string where) {
    Result<CheckpointSpec> spec = ParseCheckpointSpec(path_, text, default_layout_, source);
    if (!spec.ok()) return spec.status();
    const auto [earlier, inserted] = first_given_.try_emplace(spec->name, std::move(where));
    if (!inserted) {
      std::string message = source;
      message += ' ';
      message += QuoteName(text);
      message += ": region name ";
      message += QuoteName(spec->name);
      message += " is given twice (first at ";
      message += earlier->second;
      message += ')';
      return Status::Error(StatusCode::kInvalidArgument, "create", path_, std::move(message));
    }
    specs_.push_back(std::move(*spec));
    return Status::Ok();
  }

  std::vector<CheckpointSpec> Take() { return std::move(specs_); }

 private:
  const std::string& path_;
  SlotLayout default_layout_;
  std::vector<CheckpointSpec> specs_;
  std::unordered_map<std::string, std::string> first_given_;
};

// One NAME:CAPACITY[:LAYOUT] per line of `file` ("-": standard input).
// Lines that are empty or only spaces and tabs, and lines whose first byte
// is '#', are skipped; a '\r' before the '\n' is dropped (files written on
// Windows). Nothing else is trimmed: a name may hold spaces.
Status AddCheckpointsFromFile(const std::string& file, SpecCollector& collector) {
  const bool from_stdin = file == "-";
  Result<Input> input = ReadInput(from_stdin ? std::string() : file, kMaxCheckpointsFileBytes);
  if (!input.ok()) return input.status().WithOperation("create: read --checkpoints-from", file);
  const std::string shown = from_stdin ? std::string(kStdinName) : QuoteName(file);
  if (input->exceeds_limit) {
    return Status::Error(
        StatusCode::kInvalidArgument, "create", file,
        "--checkpoints-from " + shown + " is larger than " + HumanBytes(kMaxCheckpointsFileBytes));
  }
  const std::string_view text(reinterpret_cast<const char*>(input->bytes.data()),
                              input->bytes.size());
  uint64_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos || line.front() == '#') continue;
    const std::string where = "line " + std::to_string(line_number);
    if (Status s = collector.Add(std::string(line),
                                 "--checkpoints-from " + shown + " " + where + ":", where);
        !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

void PrintJson(const std::string& path, const StoreInfo& info) {
  nlohmann::ordered_json regions = nlohmann::ordered_json::array();
  for (const RegionEntry& region : info.regions) {
    regions.push_back({{"name", region.name},
                       {"capacity", region.capacity},
                       {"slot_count", region.slot_count},
                       {"slot_stride", region.slot_stride},
                       {"layout", std::string(SlotLayoutName(region.layout))},
                       {"slot_alignment", region.slot_alignment}});
  }
  PrintJsonDocument({{"schema_version", kJsonSchemaVersion},
                     {"path", path},
                     {"data_size", info.data_size},
                     {"file_size", info.file_size},
                     {"regions", std::move(regions)}});
}

Status RunCreate(const CreateArgs& args) {
  CreateOptions options;
  options.replace_existing = args.force;
  options.batch_log = args.batch_log;
  options.protocol = args.protocol;
  options.journal_size = args.journal_size;
  std::vector<std::string> warnings;
  options.warnings = &warnings;
  // The CLI11 check has accepted only these spellings.
  const SlotLayout default_layout = ParseSlotLayout(args.slot_layout).value_or(SlotLayout::kAuto);
  // Every checkpoint is checked before anything touches the disk, so a bad
  // one leaves no file behind.
  SpecCollector collector(args.path, default_layout);
  for (const std::string& text : args.checkpoints) {
    if (Status s = collector.Add(text, "--checkpoint", "--checkpoint " + QuoteName(text));
        !s.ok()) {
      return s;
    }
  }
  if (!args.checkpoints_from.empty()) {
    if (Status s = AddCheckpointsFromFile(args.checkpoints_from, collector); !s.ok()) return s;
  }
  options.checkpoints = collector.Take();
  for (CheckpointSpec& spec : options.checkpoints) spec.slots = args.slots;
  {
    // The bar follows the zero-fill, which writes the whole file: its size,
    // not the region count, is what takes time. Erased before the report.
    ProgressBar bar("create", StderrIsTerminal(), "fsync");
    options.progress = [&bar](uint64_t done, uint64_t total) {
      if (total > kProgressBarAbove) bar.Update(done, total);
    };
    if (Status created = Store::Create(args.path, args.data_size, options); !created.ok()) {
      return created;
    }
    SetStoreChanged();
  }
  for (const std::string& warning : warnings) {
    std::cerr << "regionctl: warning: " << warning << '\n';
  }
  // Report what is on disk rather than what was asked for: the file also
  // holds the metadata and the checkpoint slots.
  Result<StoreInfo> info = ReadStoreInfo(args.path);
  if (!info.ok()) return info.status();
  if (args.json) {
    PrintJson(args.path, *info);
    return Status::Ok();
  }
  std::cout << "created " << QuoteName(args.path) << ": data area " << HumanBytes(info->data_size)
            << ", file " << HumanBytes(info->file_size) << '\n';
  for (const RegionEntry& region : info->regions) {
    std::cout << "  checkpoint region " << QuoteName(region.name) << ": capacity "
              << HumanBytes(region.capacity) << ", " << SlotsSummary(region) << '\n';
  }
  return Status::Ok();
}

CLI::Validator SlotLayoutCheck() {
  return {[](std::string& text) -> std::string {
            if (ParseSlotLayout(text).has_value()) return {};
            return "unknown slot layout " + QuoteName(text) + ": use auto, compact or aligned";
          },
          "", "slot layout"};
}

}  // namespace

void SetupCreate(CLI::App& app, Status& outcome) {
  // Shared with the callback, which runs after parse() has filled it.
  auto args = std::make_shared<CreateArgs>();
  CLI::App* command = AddCommand(
      app, "create", "Create a store whose data area holds SIZE bytes (the file adds its metadata)",
      "Example:\n"
      "  regionctl create state.rs --size 16MiB --checkpoint state:64KiB --checkpoint log:1MiB\n"
      "  regionctl create many.rs --size 0 --checkpoints-from regions.txt --slot-layout compact\n"
      "SIZE is a byte count with an optional binary unit: 4096, 64KiB, 16MiB, 1GiB\n"
      "(K, M, G, T also mean powers of 1024; KB, MB, ... are refused as ambiguous).\n"
      "--size 0 makes a store with checkpoint regions only. A region NAME is 1 to 64\n"
      "bytes of UTF-8 without control characters, unique in the store; it may contain\n"
      "':'. Fields are read from the right: if the last ':' is followed by auto,\n"
      "compact or aligned, that is the LAYOUT and the CAPACITY follows the ':' before\n"
      "it; otherwise the CAPACITY follows the last ':'. The NAME is what precedes it.\n"
      "Each region gets 3 slots (--slots N: N of them, 3 to 64; with 3, a second commit to\n"
      "a region while a background fdatasync runs waits for it, a fourth slot lets it go\n"
      "on, for one more slot of disk). compact: 4 KiB + CAPACITY, rounded up to the page\n"
      "size (4 KiB on x86-64: a 100-byte region takes 3 x 8 KiB); aligned: 64 KiB +\n"
      "CAPACITY rounded up to 64 KiB (there 3 x 128 KiB), no two slots sharing a page of\n"
      "4, 16 or 64 KiB. auto, the default, is compact up to a capacity of 256 KiB and\n"
      "aligned above. A region without its own LAYOUT gets --slot-layout's. Stores\n"
      "with compact slots, or more than 8,160 regions, cannot be opened by releases\n"
      "before 0.5 (inspect shows incompat_flags).\n"
      "--checkpoints-from FILE reads one NAME:CAPACITY[:LAYOUT] per line ('-': standard\n"
      "input), after any --checkpoint; empty lines, lines of spaces and tabs, and lines\n"
      "starting with '#' are skipped, and nothing else is trimmed. An error names the\n"
      "line; nothing is created.\n"
      "A progress bar goes to stderr when it is a terminal and the file is larger\n"
      "than 1 GiB (every byte is written, as zeros).");
  command->add_option("PATH", args->path, "Path of the store file to create")
      ->required()
      ->type_name("");
  command->add_option("--size", args->data_size, "Size of the data area")
      ->required()
      ->type_name("SIZE")
      ->transform(SizeTransform());
  // One NAME:CAPACITY per occurrence: "--checkpoint a:1K b:2K" would
  // otherwise swallow the second as another value.
  command
      ->add_option("--checkpoint", args->checkpoints,
                   "Add a checkpoint region of CAPACITY bytes (repeatable)")
      ->type_name("NAME:CAPACITY[:LAYOUT]")
      ->allow_extra_args(false);
  command
      ->add_option("--checkpoints-from", args->checkpoints_from,
                   "Add the regions listed in FILE, one per line ('-': stdin)")
      ->type_name("FILE")
      ->check(CLI::Validator(
          [](const std::string& file) -> std::string {
            return file.empty() ? "an empty FILE name: use '-' for standard input" : "";
          },
          "", "file"));
  command
      ->add_option("--slot-layout", args->slot_layout,
                   "Layout of regions that name none: auto (default), compact, aligned")
      ->type_name("LAYOUT")
      ->check(SlotLayoutCheck());
  command
      ->add_option("--slots", args->slots,
                   "Slots of every region, 3 (default) to 64: a fourth is a spare")
      ->type_name("N")
      ->check(CLI::Range(kDefaultSlots, kMaxSlots));
  command->add_flag("--batch-log", args->batch_log,
                    "Reserve a batch log (128 KiB), so that `commit --set` can commit several "
                    "regions as one batch; releases before 0.8 refuse such a store");
  command
      ->add_option("--protocol", args->protocol,
                   "Commit protocol: 2 (default), which keeps the writer's marks and the "
                   "readers' words in a sidecar PATH.shm (a commit with nobody waiting makes no "
                   "system call) and always has a batch log and a batch journal, and which "
                   "releases before 0.13 refuse; or 1, the format every release reads")
      ->type_name("N")
      ->check(CLI::IsMember({1u, 2u}));
  command
      ->add_option("--journal-size", args->journal_size,
                   "With --protocol 2: the batch journal (default 4MiB; 256KiB to 1GiB, a "
                   "multiple of 64KiB). A durable batch whose record fits in half of it is "
                   "one write and one flush")
      ->type_name("SIZE")
      ->transform(SizeTransform());
  command->add_flag("--force", args->force,
                    "Replace an existing file at PATH (refused while a writer holds it, and "
                    "if PATH is a symbolic link: that would replace the link, not its target)");
  command->add_flag("--json", args->json, "Print one JSON object instead of sentences");
  command->callback([args, &outcome] { outcome = RunCreate(*args); });
}

}  // namespace regionstore::regionctl
