#include "cmd_commit.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/durability.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {

Status RunCommit(const CommitArgs& args) {
  const std::optional<Durability> durability = ParseDurability(args.durability_name);
  if (!durability.has_value()) {
    std::string message = "unknown durability '";
    message += args.durability_name;
    message += '\'';
    return Status::Error(StatusCode::kInvalidArgument, "commit", args.path, std::move(message));
  }
  // Open and find the region before reading the input, so a missing, damaged
  // or busy store, or a wrong name, fails without consuming standard input.
  // Warnings of the open: shared blocks on btrfs (a snapshot), which a full
  // disk can turn into SIGBUS on a mapped write.
  std::vector<std::string> warnings;
  Result<Store> store = Store::Open(
      args.path, OpenMode::kReadWrite,
      {.symlinks = args.symlinks, .warnings = &warnings});
  for (const std::string& warning : warnings) {
    std::cerr << "regionctl: warning: " << warning << '\n';
  }
  if (!store.ok()) return store.status();
  Result<RegionEntry> region = FindRegionEntry(store->info(), args.name, args.path, "commit");
  if (!region.ok()) return region.status();
  // Never buffer more than the region holds: the input stops one byte past
  // the capacity, and a longer one is refused before anything changes.
  Result<Input> input = ReadInput(args.input_path, region->capacity);
  if (!input.ok()) return input.status();
  if (input->exceeds_limit) {
    std::string message = "the payload is longer than the capacity of region ";
    message += QuoteName(region->name);
    message += " (";
    message += std::to_string(region->capacity);
    message += " bytes); nothing committed";
    return Status::Error(StatusCode::kInvalidArgument, "commit", args.path, std::move(message));
  }
  Result<uint64_t> generation = store->Commit(args.name, input->bytes, *durability);
  if (!generation.ok()) return generation.status();
  SetStoreChanged();
  if (args.json) {
    const nlohmann::ordered_json document = {
        {"path", args.path},
        {"region", region->name},
        {"generation", *generation},
        {"length", input->bytes.size()},
        {"durability", std::string(DurabilityName(*durability))},
    };
    // Paths need not be UTF-8: replace bad bytes rather than let dump() throw.
    PrintJsonDocument(document);
  } else {
    std::cout << "committed generation " << *generation << " (" << HumanBytes(input->bytes.size())
              << ") to " << QuoteName(region->name) << ", durability "
              << DurabilityName(*durability) << '\n';
  }
  return Status::Ok();
}

void SetupCommit(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<CommitArgs>();
  CLI::App* command = app.add_subcommand(
      "commit",
      "Replace the content of checkpoint region NAME with standard input (or --input FILE)");
  command->footer(
      "Example:\n"
      "  regionctl commit state.rs state --input snapshot.bin\n"
      "All or nothing: after a crash, load returns this commit or the one before,\n"
      "never a mix. Durability (what a returned commit survives): none and async survive\n"
      "kill -9; sync (pwritev2 RWF_DSYNC, the default) and pwrite-fdatasync also survive\n"
      "power loss. A payload longer than the region's capacity is refused (exit 2).\n"
      "Prints the new generation; a region no store has is a usage error (exit 2).");
  AddCommitOptions(command, args, /*input_required=*/false, outcome);
}

void AddCommitOptions(CLI::App* command, const std::shared_ptr<CommitArgs>& args,
                      bool input_required, Status& outcome) {
  command->add_option("PATH", args->path, "Path of the store file")->required()->type_name("");
  AddFollowSymlinksFlag(command, args->symlinks);
  command->add_option("NAME", args->name, "Name of the checkpoint region")
      ->required()
      ->type_name("");
  command
      ->add_option("--durability", args->durability_name,
                   "What the commit survives once it returns: none|async|sync|pwrite-fdatasync")
      ->type_name("MODE")
      ->capture_default_str()
      ->check(DurabilityCheck());
  command
      ->add_option("--input", args->input_path,
                   input_required ? "The file to commit"
                                  : "Read the payload from FILE, not standard input")
      ->type_name("FILE")
      ->required(input_required);
  command->add_flag("--json", args->json, "Print one JSON object instead of a sentence");
  command->callback([args, &outcome] { outcome = RunCommit(*args); });
}

}  // namespace regionstore::regionctl
