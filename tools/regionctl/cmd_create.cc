#include "cmd_create.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/checkpoint.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"

namespace regionstore::regionctl {
namespace {

struct CreateArgs {
  std::string path;
  uint64_t data_size = 0;
  bool force = false;
  bool json = false;
  std::vector<std::string> checkpoints;  // NAME:CAPACITY, as typed
};

Status RunCreate(const CreateArgs& args) {
  CreateOptions options;
  options.replace_existing = args.force;
  std::vector<std::string> warnings;
  options.warnings = &warnings;
  // Every checkpoint is checked before anything touches the disk, so a bad
  // one leaves no file behind.
  for (const std::string& text : args.checkpoints) {
    Result<CheckpointSpec> spec = ParseCheckpointSpec(args.path, text);
    if (!spec.ok()) return spec.status();
    for (const CheckpointSpec& earlier : options.checkpoints) {
      if (earlier.name == spec->name) {
        std::string full = "--checkpoint ";
        full += QuoteName(text);
        full += ": region name ";
        full += QuoteName(spec->name);
        full += " is given twice";
        return Status::Error(StatusCode::kInvalidArgument, "create", args.path, std::move(full));
      }
    }
    options.checkpoints.push_back(std::move(*spec));
  }
  Status created = Store::Create(args.path, args.data_size, options);
  if (!created.ok()) return created;
  for (const std::string& warning : warnings)
    std::cerr << "regionctl: warning: " << warning << '\n';
  // Report what is on disk rather than what was asked for: the file also
  // holds the metadata and the checkpoint slots.
  Result<StoreInfo> info = ReadStoreInfo(args.path);
  if (!info.ok()) return info.status();
  if (args.json) {
    nlohmann::ordered_json regions = nlohmann::ordered_json::array();
    for (const RegionEntry& region : info->regions) {
      regions.push_back({{"name", region.name},
                         {"capacity", region.capacity},
                         {"slot_count", region.slot_count},
                         {"slot_stride", region.slot_stride}});
    }
    PrintJsonDocument({{"path", args.path},
               {"data_size", info->data_size},
               {"file_size", info->file_size},
               {"regions", std::move(regions)}});
    return Status::Ok();
  }
  std::cout << "created " << args.path << ": data area " << HumanBytes(info->data_size) << ", file "
            << HumanBytes(info->file_size) << '\n';
  for (const RegionEntry& region : info->regions) {
    std::cout << "  checkpoint region " << QuoteName(region.name) << ": capacity "
              << HumanBytes(region.capacity) << ", " << region.slot_count << " slots of "
              << HumanBytes(region.slot_stride) << '\n';
  }
  return Status::Ok();
}

}  // namespace

void SetupCreate(CLI::App& app, Status& outcome) {
  // Shared with the callback, which runs after parse() has filled it.
  auto args = std::make_shared<CreateArgs>();
  CLI::App* command = app.add_subcommand(
      "create", "Create a store whose data area holds SIZE bytes (the file adds its metadata)");
  command->footer(
      "Example:\n"
      "  regionctl create state.rs --size 16MiB --checkpoint state:64KiB --checkpoint log:1MiB\n"
      "SIZE is a byte count with an optional binary unit: 4096, 64KiB, 16MiB, 1GiB\n"
      "(K, M, G, T also mean powers of 1024; KB, MB, ... are refused as ambiguous).\n"
      "--size 0 makes a store with checkpoint regions only. A region NAME is 1 to 64\n"
      "bytes of UTF-8 without control characters, unique in the store; it may contain\n"
      "':' (the CAPACITY follows the last one). Each region gets 3 slots of\n"
      "64 KiB + CAPACITY rounded up to 64 KiB.");
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
      ->type_name("NAME:CAPACITY")
      ->allow_extra_args(false);
  command->add_flag("--force", args->force,
                    "Replace an existing file at PATH (refused while a writer holds it, and "
                    "if PATH is a symbolic link: that would replace the link, not its target)");
  command->add_flag("--json", args->json, "Print one JSON object instead of sentences");
  command->callback([args, &outcome] { outcome = RunCreate(*args); });
}

}  // namespace regionstore::regionctl
